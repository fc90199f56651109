/* signalfd: blocked signals read as signalfd_siginfo records. A non-blocking descriptor
 * (EAGAIN when empty), signals raised by the process itself (two at once, in number order;
 * a standard signal sent twice pends once), sigqueue's value, poll readiness (ready while a
 * signal pends, not after the read), a new set on the same descriptor for SIGCHLD from a
 * child (its pid and exit status, through poll while the parent waits), sigwaitinfo of
 * SIGCHLD (ignored by default, but blocked: it pends), a blocking read
 * woken by a child's kill, epoll, a blocking read in a second thread woken by the main
 * thread, and EINVAL for a short buffer, a write and a descriptor that is not a signalfd.
 * Prints results and errno names, never pids or times. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include "guest_util.h"

static const char *err_name(int e) {
    switch (e) {
    case EAGAIN: return "EAGAIN";
    case EINVAL: return "EINVAL";
    default: return strerror(e);
    }
}

static void describe(const char *what, const struct signalfd_siginfo *si, pid_t expected_pid) {
    printf("%s: signo %u code %d pid %s", what, si->ssi_signo, si->ssi_code,
           (pid_t)si->ssi_pid == expected_pid ? "ok" : "wrong");
    if (si->ssi_signo == SIGCHLD)
        printf(" status %d", si->ssi_status);
    if (si->ssi_code == SI_QUEUE)
        printf(" int %d", si->ssi_int);
    printf("\n");
}

static int readable(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, ms);
    return r == 1 && (p.revents & POLLIN);
}

/* A child that sleeps `ms` and sends `sig` to its parent. */
static pid_t send_later(int sig, int ms) {
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        usleep(ms * 1000);
        kill(parent, sig);
        _exit(0);
    }
    return child;
}

static int thread_fd;
static struct signalfd_siginfo thread_got;

static void *thread_reader(void *arg) {
    (void)arg;
    ssize_t n = read(thread_fd, &thread_got, sizeof thread_got);
    return (void *)(long)n;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    pid_t me = getpid();

    sigset_t users;
    sigemptyset(&users);
    sigaddset(&users, SIGUSR1);
    sigaddset(&users, SIGUSR2);
    int sfd = signalfd(-1, &users, SFD_NONBLOCK | SFD_CLOEXEC);
    check(sfd >= 0, "signalfd");
    struct signalfd_siginfo si[4];
    errno = 0;
    ssize_t n = read(sfd, si, sizeof si);
    printf("empty read: %zd %s\n", n, err_name(errno));
    printf("readable when empty: %d\n", readable(sfd, 0));

    raise(SIGUSR2);
    raise(SIGUSR1);
    kill(me, SIGUSR1);
    printf("readable with signals pending: %d\n", readable(sfd, 0));
    n = read(sfd, si, sizeof si);
    printf("read %zd bytes (%zd records)\n", n, n / (ssize_t)sizeof si[0]);
    for (int i = 0; i < n / (ssize_t)sizeof si[0]; i++)
        describe("  pending", &si[i], me);
    printf("readable after the read: %d\n", readable(sfd, 0));

    union sigval value = {.sival_int = 42};
    sigqueue(me, SIGUSR1, value);
    n = read(sfd, si, sizeof si[0]);
    if (n == sizeof si[0])
        describe("sigqueue", &si[0], me);

    /* A new set on the same descriptor: SIGCHLD, waited for with poll. */
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    printf("signalfd on the same fd: %d\n", signalfd(sfd, &chld, 0) == sfd);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        usleep(30 * 1000);
        _exit(7);
    }
    printf("SIGCHLD made it readable: %d\n", readable(sfd, 10000));
    n = read(sfd, si, sizeof si);
    if (n == sizeof si[0])
        describe("SIGCHLD", &si[0], child);
    waitpid(child, NULL, 0);

    /* sigwaitinfo takes a blocked SIGCHLD too (whose default action ignores it). */
    child = fork();
    if (child == 0) {
        usleep(30 * 1000);
        _exit(9);
    }
    siginfo_t info;
    int got_signo = sigwaitinfo(&chld, &info);
    printf("sigwaitinfo: signo %d code %d pid %s status %d\n", got_signo, info.si_code,
           info.si_pid == child ? "ok" : "wrong", info.si_status);
    waitpid(child, NULL, 0);

    /* A blocking descriptor: the read waits for a child's kill. */
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    int blocking = signalfd(-1, &usr2, 0);
    child = send_later(SIGUSR2, 50);
    n = read(blocking, si, sizeof si);
    if (n == sizeof si[0])
        describe("blocking read", &si[0], child);
    waitpid(child, NULL, 0);

    /* epoll. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    signalfd(sfd, &usr1, 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 77};
    check(epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev) == 0, "epoll_ctl");
    child = send_later(SIGUSR1, 50);
    struct epoll_event got;
    int ready = epoll_wait(ep, &got, 1, 10000);
    printf("epoll_wait: %d data %u\n", ready, ready == 1 ? got.data.u32 : 0);
    n = read(sfd, si, sizeof si);
    if (n == sizeof si[0])
        describe("epoll", &si[0], child);
    waitpid(child, NULL, 0);
    close(ep);

    /* A second thread blocks in read; the main thread sends the signal to the process. */
    thread_fd = blocking;
    pthread_t t;
    pthread_create(&t, NULL, thread_reader, NULL);
    usleep(30 * 1000);
    kill(me, SIGUSR2);
    void *result;
    pthread_join(t, &result);
    printf("thread read %ld bytes: signo %u\n", (long)result, thread_got.ssi_signo);

    /* Errors. */
    errno = 0;
    n = read(sfd, si, sizeof si[0] - 1);
    printf("short buffer: %zd %s\n", n, err_name(errno));
    errno = 0;
    n = write(sfd, si, sizeof si[0]);
    printf("write: %zd %s\n", n, err_name(errno));
    errno = 0;
    printf("signalfd on stdout: %d %s\n", signalfd(1, &usr1, 0), err_name(errno));
    close(blocking);
    close(sfd);

    printf("failures=%d\n", guest_failures);
    return guest_failures != 0;
}
