/* killed_by_signal: output flushed, then SIGTERM with the default action ends the process;
 * the parent must see "killed by signal 15", not an exit status. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    printf("about to be terminated by SIGTERM\n");
    fflush(stdout);
    kill(getpid(), SIGTERM);
    /* Not reached: pause in case delivery is late, then report the failure. */
    sleep(5);
    printf("still alive after SIGTERM\n");
    return 1;
}
