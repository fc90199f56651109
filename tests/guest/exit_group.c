/* exit_group: _exit skips stdio buffers; status 42 via the raw syscall. */
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(void) {
    printf("this line is flushed explicitly\n");
    fflush(stdout);
    printf("this buffered line must NOT appear");
    syscall(SYS_exit_group, 42);
    return 0;
}
