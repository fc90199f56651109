/* host_signals: signals sent by another host process reach the guest through its mask and
 * dispositions. The test harness reads stdout and, at each "READY n" line, sends signals to the
 * emulator process (see tests/user_mode.rs, host_signals):
 *   READY 1: SIGHUP (ignored) and SIGTERM (blocked: must stay pending, not kill)
 *   READY 2: SIGUSR1 (handler, while waiting in sigsuspend)
 *   READY 3: SIGUSR2 (handler, while spinning in a loop without system calls)
 *   READY 4: SIGINT (blocked, while sleeping: the sleep is not interrupted)
 *   READY 5: SIGWINCH (handler, while waiting in ppoll with a signal mask; its default would
 *            ignore it)
 * Waits block the awaited signal until the call that unblocks it atomically (a loop around
 * pause() would race: a signal handled between the flag test and pause() is never seen again,
 * which a JIT compiling that code makes likely).
 * Then the guest unblocks SIGINT (its handler runs at once) and SIGTERM, whose default action
 * kills the process: the emulator must die of SIGTERM. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1_count, usr2_seen, int_seen, winch_seen;
static volatile unsigned sink;

static void on_usr1(int sig) {
    (void)sig;
    usr1_count++;
}

static void on_usr2(int sig) {
    (void)sig;
    usr2_seen = 1;
}

static void on_int(int sig) {
    (void)sig;
    int_seen = 1;
}

static void on_winch(int sig) {
    (void)sig;
    winch_seen = 1;
}

static void ready(int n) {
    printf("READY %d\n", n);
    fflush(stdout);
}

/* Waits (up to a minute) until `signo` is pending; returns whether it is. */
static int wait_pending(int signo) {
    for (int i = 0; i < 60000; i++) {
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, signo))
            return 1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

static void handle(int signo, void (*handler)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(signo, &sa, NULL);
}

int main(void) {
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, NULL);
    signal(SIGHUP, SIG_IGN);
    handle(SIGUSR1, on_usr1);
    handle(SIGUSR2, on_usr2);
    handle(SIGWINCH, on_winch);

    ready(1);
    printf("SIGTERM pending while blocked: %d\n", wait_pending(SIGTERM));
    printf("alive after an ignored SIGHUP and a blocked SIGTERM\n");

    sigset_t usr1, before_usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, &before_usr1);
    ready(2);
    while (usr1_count == 0)
        sigsuspend(&before_usr1);
    sigprocmask(SIG_SETMASK, &before_usr1, NULL);
    printf("SIGUSR1 handler ran: count=%d\n", (int)usr1_count);

    ready(3);
    unsigned x = 1;
    while (!usr2_seen)
        x = x * 1103515245u + 12345u;
    sink = x;
    printf("SIGUSR2 handled in a loop without system calls: %d\n", (int)usr2_seen);

    ready(4);
    struct timespec sleep_time = {0, 300000000};
    errno = 0;
    int slept = nanosleep(&sleep_time, NULL);
    printf("sleep with a blocked SIGINT arriving: returned %d errno=%d\n", slept, errno);
    printf("SIGINT pending while blocked: %d\n", wait_pending(SIGINT));

    sigset_t winch, before_winch;
    sigemptyset(&winch);
    sigaddset(&winch, SIGWINCH);
    sigprocmask(SIG_BLOCK, &winch, &before_winch);
    ready(5);
    while (!winch_seen)
        ppoll(NULL, 0, NULL, &before_winch);
    sigprocmask(SIG_SETMASK, &before_winch, NULL);
    printf("SIGWINCH handler ran: %d\n", (int)winch_seen);

    handle(SIGINT, on_int);
    sigset_t just_int;
    sigemptyset(&just_int);
    sigaddset(&just_int, SIGINT);
    sigprocmask(SIG_UNBLOCK, &just_int, NULL);
    printf("SIGINT handler ran when unblocked: %d\n", (int)int_seen);

    printf("unblocking SIGTERM\n");
    fflush(stdout);
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    /* Not reached: the pending SIGTERM's default action ends the process. */
    printf("still alive after unblocking SIGTERM\n");
    return 1;
}
