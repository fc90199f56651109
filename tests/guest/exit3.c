/* exit3: buffered output must be flushed by exit(), and the status must be 3. */
#include <stdio.h>
#include <stdlib.h>

static void at_exit_handler(void) { printf("atexit handler ran\n"); }

int main(void) {
    atexit(at_exit_handler);
    printf("exiting with status 3 (no newline flush before exit)");
    printf("\n");
    exit(3);
}
