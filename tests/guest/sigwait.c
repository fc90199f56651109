/* sigwait: taking signals synchronously and queueing them with a value. sigwait on a blocked
 * pending signal, sigwaitinfo's siginfo (SI_USER from kill, SI_QUEUE and the value from
 * sigqueue), sigtimedwait timing out (EAGAIN) and with a zero timeout, a signal outside the
 * set whose handler runs during the wait (musl then waits on; the handler sends the signal
 * that ends the wait), sigqueue to an unblocked SA_SIGINFO
 * handler, a thread in sigwait woken by a signal another thread sends, a thread in
 * sigsuspend while the main thread sleeps, then signals it, and threads that sleep and wait
 * with the longest timeouts there are. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "guest_util.h"

static volatile sig_atomic_t handled_value = -1, alarm_seen;

static void on_usr2(int signo, siginfo_t *info, void *ctx) {
    (void)signo;
    (void)ctx;
    handled_value = info->si_code == SI_QUEUE ? info->si_value.sival_int : -2;
}

static void on_alarm(int signo) {
    alarm_seen = signo;
    kill(getpid(), SIGUSR1);
}

static volatile sig_atomic_t suspended_handled;

static void on_usr2_plain(int signo) {
    suspended_handled = signo;
}

static void *suspender(void *arg) {
    sigset_t *open_mask = arg;
    int r = sigsuspend(open_mask);
    return (void *)(long)(r == -1 && errno == EINTR ? suspended_handled : -1);
}

static void *sleeps_forever(void *arg) {
    struct timespec t = {INT64_MAX, 999999999};
    nanosleep(&t, NULL); /* ends with the process */
    return arg;
}

static void *waits_long(void *arg) {
    struct timespec t = {INT64_MAX, 999999999};
    return (void *)(long)sigtimedwait(arg, NULL, &t);
}

static void *waiter(void *arg) {
    sigset_t *set = arg;
    int signo = 0;
    int r = sigwait(set, &signo);
    return (void *)(long)(r == 0 ? signo : -r);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGRTMIN);
    sigprocmask(SIG_BLOCK, &set, &old);

    kill(getpid(), SIGUSR1);
    int signo = 0;
    int r = sigwait(&set, &signo);
    printf("sigwait: %d, signal %s\n", r, signo == SIGUSR1 ? "SIGUSR1" : "other");

    kill(getpid(), SIGUSR1);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    r = sigwaitinfo(&set, &info);
    printf("sigwaitinfo after kill: %s, code SI_USER %d, pid ours %d\n",
           r == SIGUSR1 ? "SIGUSR1" : "other", info.si_code == SI_USER, info.si_pid == getpid());

    union sigval v = {.sival_int = 1234};
    check(sigqueue(getpid(), SIGRTMIN, v) == 0, "sigqueue");
    memset(&info, 0, sizeof info);
    r = sigwaitinfo(&set, &info);
    printf("sigwaitinfo after sigqueue: %s, code SI_QUEUE %d, value %d\n",
           r == SIGRTMIN ? "SIGRTMIN" : "other", info.si_code == SI_QUEUE, info.si_value.sival_int);

    struct timespec t = {0, 30 * 1000 * 1000}, before, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    errno = 0;
    r = sigtimedwait(&set, NULL, &t);
    clock_gettime(CLOCK_MONOTONIC, &after);
    long ms = (after.tv_sec - before.tv_sec) * 1000 + (after.tv_nsec - before.tv_nsec) / 1000000;
    printf("sigtimedwait with nothing pending: %d %s, waited 30 ms or more %d\n", r,
           errno == EAGAIN ? "EAGAIN" : strerror(errno), ms >= 29);
    t = (struct timespec){0, 0};
    errno = 0;
    r = sigtimedwait(&set, NULL, &t);
    printf("sigtimedwait, zero timeout: %d %s\n", r, errno == EAGAIN ? "EAGAIN" : strerror(errno));

    /* A signal outside the set runs its handler during the wait (the kernel returns EINTR,
     * musl waits again); the handler sends the signal the wait is for. */
    signal(SIGALRM, on_alarm);
    struct itimerval it = {{0, 0}, {0, 20 * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    r = sigwaitinfo(&set, &info);
    printf("sigwaitinfo across a handler: %s, handler ran %d\n",
           r == SIGUSR1 ? "SIGUSR1" : "other", alarm_seen == SIGALRM);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr2;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, NULL);
    v.sival_int = 77;
    sigqueue(getpid(), SIGUSR2, v);
    printf("sigqueue to a handler: value %d\n", (int)handled_value);
    errno = 0;
    r = sigqueue(getpid(), 999, v);
    printf("sigqueue bad signal: %d %s\n", r, errno == EINVAL ? "EINVAL" : strerror(errno));

    /* A thread waits in sigwait; the main thread sends the signal later. */
    pthread_t th;
    pthread_create(&th, NULL, waiter, &set);
    usleep(20 * 1000);
    pthread_kill(th, SIGUSR1);
    void *got;
    pthread_join(th, &got);
    printf("thread in sigwait: got %s\n", (long)got == SIGUSR1 ? "SIGUSR1" : "other");

    /* SIGUSR2 blocked everywhere but in the thread's sigsuspend. */
    signal(SIGUSR2, on_usr2_plain);
    sigset_t usr2, suspend_mask;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    sigprocmask(SIG_BLOCK, &usr2, NULL);
    sigprocmask(SIG_BLOCK, NULL, &suspend_mask);
    sigdelset(&suspend_mask, SIGUSR2);
    pthread_create(&th, NULL, suspender, &suspend_mask);
    usleep(20 * 1000); /* the thread suspends first */
    kill(getpid(), SIGUSR2);
    pthread_join(th, &got);
    printf("thread in sigsuspend: handler ran %s\n", (long)got == SIGUSR2 ? "yes" : "no");

    pthread_t forever;
    pthread_create(&forever, NULL, sleeps_forever, NULL);
    pthread_create(&th, NULL, waits_long, &set);
    usleep(20 * 1000);
    pthread_kill(th, SIGUSR1);
    pthread_join(th, &got);
    printf("longest timeouts: the waiter got %s\n", (long)got == SIGUSR1 ? "SIGUSR1" : "other");

    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
