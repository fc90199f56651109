/* thread_signals: signals sent to one thread, and what they do to a thread that waits.
 * pthread_kill to a running thread, to itself, to a thread in a condition wait, in nanosleep
 * (EINTR and the time left), in a read of an empty pipe (SA_RESTART restarts it, without it
 * EINTR), in a write into a full pipe (the count written), in sigsuspend; a signal for the
 * process that the sending thread blocks, taken by the thread that does not;
 * rt_tgsigqueueinfo's value; kill of a thread's id; tgkill with another process's id;
 * pthread_cancel of threads in nanosleep, pause, a condition wait, a pipe read and a
 * pthread_testcancel loop. Every result is printed by the main thread after the join, so the
 * output does not depend on how the threads interleave; where a signal must find a thread
 * blocked, it is sent again until the thread is done (qemu runs threads in parallel). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "guest_util.h"

static int gettid_(void) { return (int)syscall(SYS_gettid); }

/* The thread that ran the last handler, and how many handlers ran. */
static atomic_int handler_tid, handler_runs, handler_value;

static void on_signal(int signo) {
    (void)signo;
    handler_tid = gettid_();
    handler_runs++;
}

static void on_signal_info(int signo, siginfo_t *info, void *ctx) {
    (void)signo;
    (void)ctx;
    handler_value = info->si_value.sival_int;
    handler_tid = gettid_();
    handler_runs++;
}

static void set_handler(int signo, int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(signo, &sa, NULL);
}

/* Set by each thread once it is about to block (it then blocks within a few instructions;
 * the sender waits a little longer on top, so the signal finds it blocked on any host). */
static atomic_int ready_tid;

static void wait_until_ready(void) {
    while (!ready_tid)
        sched_yield();
    struct timespec t = {0, 30 * 1000 * 1000};
    nanosleep(&t, NULL);
}

/* Set by a thread's function as it returns. */
static atomic_int finished;

/* Send `signo` to `t` (or to the process, when `to_process`) until it finished: the first
 * one that finds it blocked ends its wait. */
static void signal_until_finished(pthread_t t, int signo, int to_process) {
    struct timespec t20 = {0, 20 * 1000 * 1000};
    while (!finished) {
        if (to_process)
            kill(getpid(), signo);
        else
            pthread_kill(t, signo);
        nanosleep(&t20, NULL);
    }
}

static atomic_int stop_spinning;

static void *spinner(void *arg) {
    (void)arg;
    ready_tid = gettid_();
    while (!stop_spinning) {
    }
    return NULL;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static atomic_int cond_done;

static void *cond_waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    ready_tid = gettid_();
    while (!cond_done)
        pthread_cond_wait(&never, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

struct sleep_result {
    int r, err;
    long left_ms;
};

static void *sleeper(void *arg) {
    struct sleep_result *res = arg;
    struct timespec t = {5, 0}, left = {0, 0};
    ready_tid = gettid_();
    res->r = nanosleep(&t, &left);
    res->err = errno;
    res->left_ms = left.tv_sec * 1000 + left.tv_nsec / 1000000;
    finished = 1;
    return NULL;
}

static int pipe_fds[2];

struct read_result {
    long r;
    int err;
    char byte;
};

static void *reader(void *arg) {
    struct read_result *res = arg;
    ready_tid = gettid_();
    res->r = read(pipe_fds[0], &res->byte, 1);
    res->err = errno;
    finished = 1;
    return NULL;
}

static int full_fds[2];

/* Writes 1 MiB into a pipe nobody reads: it blocks once the pipe is full. */
static void *pipe_filler(void *arg) {
    struct read_result *res = arg;
    static char big[1 << 20];
    ready_tid = gettid_();
    res->r = write(full_fds[1], big, sizeof big);
    res->err = errno;
    finished = 1;
    return NULL;
}

static void *suspender(void *arg) {
    (void)arg;
    sigset_t none, usr1;
    sigemptyset(&none);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    /* Held until sigsuspend opens the mask, so the signal cannot come before it. */
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    ready_tid = gettid_();
    int r = sigsuspend(&none);
    return (void *)(long)(r == -1 && errno == EINTR);
}

static void *unblocked_sleeper(void *arg) {
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    ready_tid = gettid_();
    struct timespec t = {5, 0};
    int r = nanosleep(&t, NULL);
    finished = 1;
    return (void *)(long)(r == -1 && errno == EINTR);
}

static void *pauser(void *arg) {
    (void)arg;
    ready_tid = gettid_();
    for (;;)
        pause();
    return NULL;
}

static void *cancel_sleeper(void *arg) {
    (void)arg;
    ready_tid = gettid_();
    struct timespec t = {5, 0};
    nanosleep(&t, NULL);
    return (void *)1L;
}

static void *testcancel_loop(void *arg) {
    (void)arg;
    ready_tid = gettid_();
    for (;;)
        pthread_testcancel();
    return NULL;
}

/* Start `fn`, wait until it is about to block, and return it; `tid` gets its thread id. */
static pthread_t main_thread;

/* Signals the main thread, then exits at once: the main thread is left alone, with the
 * signal for its blocked call. */
static void *kick_main_and_exit(void *arg) {
    (void)arg;
    usleep(100000);
    pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

static pthread_t start(void *(*fn)(void *), void *arg, int *tid) {
    pthread_t t;
    ready_tid = 0;
    finished = 0;
    if (pthread_create(&t, NULL, fn, arg) != 0)
        die("pthread_create");
    wait_until_ready();
    *tid = ready_tid;
    return t;
}

static void cancel_and_check(void *(*fn)(void *), const char *name) {
    int tid;
    pthread_t t = start(fn, NULL, &tid);
    int r = pthread_cancel(t);
    void *ret = NULL;
    pthread_join(t, &ret);
    char what[80];
    snprintf(what, sizeof what, "pthread_cancel of a thread in %s", name);
    check(r == 0 && ret == PTHREAD_CANCELED, what);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    set_handler(SIGUSR1, 0);
    int tid;

    /* To a running thread: its handler runs on it, not on the sender. */
    pthread_t t = start(spinner, NULL, &tid);
    handler_runs = 0;
    pthread_kill(t, SIGUSR1);
    while (!handler_runs)
        sched_yield();
    check(handler_tid == tid, "pthread_kill to a running thread runs the handler on it");
    stop_spinning = 1;
    pthread_join(t, NULL);

    handler_runs = 0;
    pthread_kill(pthread_self(), SIGUSR1);
    check(handler_runs == 1 && handler_tid == gettid_(), "pthread_kill to itself");

    /* To a thread in a condition wait: the handler runs there and the wait goes on. */
    t = start(cond_waiter, NULL, &tid);
    handler_runs = 0;
    pthread_kill(t, SIGUSR1);
    while (!handler_runs)
        sched_yield();
    check(handler_tid == tid, "pthread_kill to a thread in a condition wait");
    pthread_mutex_lock(&lock);
    cond_done = 1;
    pthread_cond_signal(&never);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);

    /* nanosleep ends early with EINTR and the time left. */
    struct sleep_result sr = {0, 0, 0};
    t = start(sleeper, &sr, &tid);
    handler_runs = 0;
    signal_until_finished(t, SIGUSR1, 0);
    pthread_join(t, NULL);
    check(sr.r == -1 && sr.err == EINTR, "nanosleep interrupted: EINTR");
    check(sr.left_ms > 1000 && sr.left_ms <= 5000, "nanosleep interrupted: time left written");
    check(handler_tid == tid, "nanosleep interrupted: handler on the sleeper");

    /* A read of an empty pipe: SA_RESTART restarts it after the handler, without it EINTR. */
    if (pipe(pipe_fds) != 0)
        die("pipe");
    set_handler(SIGUSR1, SA_RESTART);
    struct read_result rr = {0, 0, 0};
    t = start(reader, &rr, &tid);
    handler_runs = 0;
    pthread_kill(t, SIGUSR1);
    while (!handler_runs)
        sched_yield();
    check(handler_tid == tid, "read interrupted (SA_RESTART): handler on the reader");
    if (write(pipe_fds[1], "x", 1) != 1)
        die("write");
    pthread_join(t, NULL);
    check(rr.r == 1 && rr.byte == 'x', "read interrupted (SA_RESTART): restarted, got the byte");
    set_handler(SIGUSR1, 0);
    t = start(reader, &rr, &tid);
    signal_until_finished(t, SIGUSR1, 0);
    pthread_join(t, NULL);
    check(rr.r == -1 && rr.err == EINTR, "read interrupted (no SA_RESTART): EINTR");

    /* A write blocked on a full pipe returns the bytes it wrote when a signal comes. */
    if (pipe(full_fds) != 0)
        die("pipe");
    t = start(pipe_filler, &rr, &tid);
    signal_until_finished(t, SIGUSR1, 0);
    pthread_join(t, NULL);
    check(rr.r > 0 && rr.r < (1 << 20), "write into a full pipe interrupted: the count written");

    /* sigsuspend returns EINTR once the handler ran. */
    t = start(suspender, NULL, &tid);
    handler_runs = 0;
    pthread_kill(t, SIGUSR1);
    void *ret = NULL;
    pthread_join(t, &ret);
    check(ret == (void *)1L && handler_tid == tid, "sigsuspend in a thread ends after the handler");

    /* A signal for the process that this thread blocks goes to the thread that does not. */
    set_handler(SIGUSR2, 0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    t = start(unblocked_sleeper, NULL, &tid);
    handler_runs = 0;
    signal_until_finished(t, SIGUSR2, 1);
    pthread_join(t, &ret);
    check(ret == (void *)1L && handler_runs >= 1 && handler_tid == tid,
          "kill of the process: the thread that does not block the signal takes it");
    pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);

    /* rt_tgsigqueueinfo: the value reaches the handler on the thread it was sent to. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal_info;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    stop_spinning = 0;
    t = start(spinner, NULL, &tid);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = SIGUSR1;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_value.sival_int = 4321;
    handler_runs = 0;
    long r = syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGUSR1, &info);
    while (!handler_runs)
        sched_yield();
    check(r == 0 && handler_value == 4321 && handler_tid == tid,
          "rt_tgsigqueueinfo: value and thread");
    check(kill(tid, 0) == 0, "kill of a thread's id reaches this process");
    stop_spinning = 1;
    pthread_join(t, NULL);

    errno = 0;
    r = syscall(SYS_tgkill, getpid() + 1000000, gettid_(), SIGUSR1);
    check(r == -1 && errno == ESRCH, "tgkill with another process's id: ESRCH");
    errno = 0;
    r = syscall(SYS_tgkill, getpid(), 0x7ffffff0, SIGUSR1);
    check(r == -1 && errno == ESRCH, "tgkill of no such thread: ESRCH");

    /* pthread_cancel (musl: SIGCANCEL, a real-time signal, to the thread). */
    cancel_and_check(cancel_sleeper, "nanosleep");
    cancel_and_check(pauser, "pause");
    cond_done = 0;
    cancel_and_check(cond_waiter, "a condition wait");
    pthread_mutex_unlock(&lock); /* the cancelled waiter's cleanup leaves it locked */
    t = start(reader, &rr, &tid);
    pthread_cancel(t);
    pthread_join(t, &ret);
    check(ret == PTHREAD_CANCELED, "pthread_cancel of a thread in a pipe read");
    cancel_and_check(testcancel_loop, "a pthread_testcancel loop");

    /* A poll the main thread blocks in is interrupted (EINTR, even with SA_RESTART) by a
     * signal from a thread that exits right after sending it. */
    set_handler(SIGUSR1, SA_RESTART);
    main_thread = pthread_self();
    int quiet[2];
    if (pipe(quiet) != 0)
        die("pipe");
    pthread_t kicker;
    pthread_create(&kicker, NULL, kick_main_and_exit, NULL);
    struct pollfd pfd = {quiet[0], POLLIN, 0};
    handler_runs = 0;
    errno = 0;
    int polled = poll(&pfd, 1, 10000);
    check(polled == -1 && errno == EINTR && handler_runs == 1,
          "poll interrupted by a signal from a thread that then exited");
    pthread_join(kicker, NULL);
    close(quiet[0]);
    close(quiet[1]);

    printf("%s\n", guest_failures ? "FAILED" : "all ok");
    return guest_failures != 0;
}
