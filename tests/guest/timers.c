/* timers: timer file descriptors (one-shot and periodic, read blocking and non-blocking,
 * gettime, an absolute deadline, poll) and POSIX timers (SIGEV_SIGNAL to a handler, a periodic
 * one counted, the value in a siginfo handler's si_value, SIGRTMIN, SIGEV_THREAD, gettime,
 * SIGEV_NONE, delete, bad ids and clocks). Prints counts and flags, not times. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "guest_util.h"

static volatile sig_atomic_t ticks;

static void on_tick(int signo) {
    (void)signo;
    ticks++;
}

static volatile sig_atomic_t timer_code, timer_value;

static void on_timer_info(int signo, siginfo_t *info, void *ctx) {
    (void)signo;
    (void)ctx;
    timer_code = info->si_code;
    timer_value = info->si_value.sival_int;
}

static atomic_int notified, notified_value_ok, notified_elsewhere;
static pthread_t main_thread;

static void on_expiry(union sigval v) {
    if (v.sival_int == 555)
        notified_value_ok = 1;
    if (!pthread_equal(pthread_self(), main_thread))
        notified_elsewhere = 1;
    notified++;
}

static struct timespec ms(long n) {
    return (struct timespec){n / 1000, (n % 1000) * 1000000};
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);

    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    check(tfd >= 0, "timerfd_create");
    struct itimerspec its = {.it_value = ms(20)};
    check(timerfd_settime(tfd, 0, &its, NULL) == 0, "timerfd_settime");
    struct itimerspec cur;
    timerfd_gettime(tfd, &cur);
    printf("timerfd armed: value left within 20 ms %d, no interval %d\n",
           cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 &&
               cur.it_value.tv_nsec <= 20000000,
           cur.it_interval.tv_sec == 0 && cur.it_interval.tv_nsec == 0);
    uint64_t expirations = 0;
    ssize_t n = read(tfd, &expirations, sizeof expirations);
    printf("timerfd one-shot read: %zd bytes, %llu expiration\n", n,
           (unsigned long long)expirations);

    its = (struct itimerspec){.it_interval = ms(5), .it_value = ms(5)};
    timerfd_settime(tfd, 0, &its, NULL);
    usleep(30 * 1000);
    read(tfd, &expirations, sizeof expirations);
    printf("timerfd periodic: several expirations %d\n", expirations >= 3);
    its = (struct itimerspec){0};
    struct itimerspec old;
    timerfd_settime(tfd, 0, &its, &old);
    printf("timerfd disarmed: old interval 5 ms %d\n",
           old.it_interval.tv_sec == 0 && old.it_interval.tv_nsec == 5000000);

    int nb = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    errno = 0;
    n = read(nb, &expirations, sizeof expirations);
    printf("non-blocking read of an unarmed timerfd: %zd %s\n", n,
           errno == EAGAIN ? "EAGAIN" : strerror(errno));
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    now.tv_nsec += 10 * 1000000;
    if (now.tv_nsec >= 1000000000) {
        now.tv_sec++;
        now.tv_nsec -= 1000000000;
    }
    its = (struct itimerspec){.it_value = now};
    timerfd_settime(nb, TFD_TIMER_ABSTIME, &its, NULL);
    struct pollfd p = {.fd = nb, .events = POLLIN};
    int r = poll(&p, 1, 2000);
    n = read(nb, &expirations, sizeof expirations);
    printf("absolute deadline: poll %d, read %zd, %llu expiration\n", r, n,
           (unsigned long long)expirations);
    errno = 0;
    r = timerfd_create(12345, 0);
    printf("timerfd bad clock: %d %s\n", r, errno == EINVAL ? "EINVAL" : strerror(errno));
    close(nb);
    close(tfd);

    /* POSIX timers. SIGUSR1 stays blocked except in sigsuspend, so no signal comes between
     * a check of `ticks` and the wait. */
    signal(SIGUSR1, on_tick);
    sigset_t block, open_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &open_mask);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGUSR1;
    timer_t t;
    check(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "timer_create");
    its = (struct itimerspec){.it_value = ms(10)};
    timer_settime(t, 0, &its, NULL);
    while (ticks == 0)
        sigsuspend(&open_mask);
    printf("one-shot POSIX timer: %d signal\n", (int)ticks);

    its = (struct itimerspec){.it_interval = ms(5), .it_value = ms(5)};
    timer_settime(t, 0, &its, NULL);
    while (ticks < 4)
        sigsuspend(&open_mask);
    timer_gettime(t, &cur);
    printf("periodic POSIX timer: 3 more signals %d, interval 5 ms %d\n", ticks >= 4,
           cur.it_interval.tv_nsec == 5000000);
    printf("timer_getoverrun: %s\n", timer_getoverrun(t) >= 0 ? "a count" : "error");
    check(timer_delete(t) == 0, "timer_delete");
    errno = 0;
    r = timer_settime(t, 0, &its, NULL);
    printf("deleted timer: %d %s\n", r, errno == EINVAL ? "EINVAL" : strerror(errno));

    /* A handler with siginfo sees SI_TIMER and the timer's value. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_timer_info;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    sev.sigev_value.sival_int = 4242;
    check(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "timer_create with a value");
    its = (struct itimerspec){.it_value = ms(5)};
    timer_settime(t, 0, &its, NULL);
    while (timer_code == 0)
        sigsuspend(&open_mask);
    printf("POSIX timer's siginfo: SI_TIMER %d, value %d\n", timer_code == SI_TIMER,
           (int)timer_value);
    timer_delete(t);

    /* The timer_create(2) example's signal: SIGRTMIN. */
    sigaction(SIGRTMIN, &sa, NULL);
    sigset_t rt;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN);
    sigprocmask(SIG_BLOCK, &rt, NULL);
    sev.sigev_signo = SIGRTMIN;
    sev.sigev_value.sival_int = 99;
    timer_code = 0;
    check(timer_create(CLOCK_REALTIME, &sev, &t) == 0, "timer_create with SIGRTMIN");
    timer_settime(t, 0, &its, NULL);
    while (timer_code == 0)
        sigsuspend(&open_mask);
    printf("SIGRTMIN timer: SI_TIMER %d, value %d\n", timer_code == SI_TIMER, (int)timer_value);
    timer_delete(t);

    /* SIGEV_THREAD: musl runs the function on a thread of its own, which a real-time signal
     * (32, sent to that thread with SIGEV_THREAD_ID) wakes. */
    main_thread = pthread_self();
    struct sigevent thread_sev;
    memset(&thread_sev, 0, sizeof thread_sev);
    thread_sev.sigev_notify = SIGEV_THREAD;
    thread_sev.sigev_notify_function = on_expiry;
    thread_sev.sigev_value.sival_int = 555;
    check(timer_create(CLOCK_MONOTONIC, &thread_sev, &t) == 0, "timer_create SIGEV_THREAD");
    its = (struct itimerspec){.it_interval = ms(5), .it_value = ms(5)};
    timer_settime(t, 0, &its, NULL);
    while (notified < 3)
        usleep(1000);
    check(timer_delete(t) == 0, "timer_delete SIGEV_THREAD");
    printf("SIGEV_THREAD timer: 3 calls %d, value %d, on another thread %d\n", notified >= 3,
           (int)notified_value_ok, (int)notified_elsewhere);
    usleep(20 * 1000);
    int calls = notified;
    usleep(20 * 1000);
    printf("SIGEV_THREAD timer deleted: no more calls %d\n", notified == calls);
    sev.sigev_signo = SIGUSR1;

    sev.sigev_notify = SIGEV_NONE;
    timer_t quiet;
    check(timer_create(CLOCK_REALTIME, &sev, &quiet) == 0, "timer_create SIGEV_NONE");
    its = (struct itimerspec){.it_value = ms(500)};
    timer_settime(quiet, 0, &its, NULL);
    timer_gettime(quiet, &cur);
    printf("SIGEV_NONE timer: running %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0);
    timer_delete(quiet);
    errno = 0;
    r = timer_create(12345, &sev, &quiet);
    printf("timer_create bad clock: %d %s\n", r, errno == EINVAL ? "EINVAL" : strerror(errno));
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
