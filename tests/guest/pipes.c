/* pipes: pipe/pipe2, dup/dup2/dup3, fcntl, non-blocking reads, poll, select, within one
 * process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>
#include "guest_util.h"

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int p[2];
    check(pipe(p) == 0, "pipe");
    check(p[0] >= 3 && p[1] >= 3 && p[0] != p[1], "pipe returns two new fds");
    const char *msg = "through the pipe";
    printf("write: %zd\n", write(p[1], msg, strlen(msg)));
    char buf[256];
    ssize_t r = read(p[0], buf, sizeof buf);
    printf("read: %zd \"%.*s\"\n", r, (int)r, buf);

    /* dup2 the write end onto stdout, print through stdio, restore stdout. */
    int saved = dup(1);
    check(saved >= 3, "dup(1)");
    check(dup2(p[1], 1) == 1, "dup2 pipe over stdout");
    printf("captured via stdout %d\n", 123);
    check(dup2(saved, 1) == 1, "restore stdout");
    close(saved);
    r = read(p[0], buf, sizeof buf);
    printf("captured %zd bytes: %.*s", r, (int)r, buf);

    /* Non-blocking read on an empty pipe gives EAGAIN. */
    int fl = fcntl(p[0], F_GETFL);
    check(fcntl(p[0], F_SETFL, fl | O_NONBLOCK) == 0, "F_SETFL O_NONBLOCK");
    r = read(p[0], buf, sizeof buf);
    printf("empty non-blocking read: %zd errno=%d (EAGAIN=%d)\n", r, errno, EAGAIN);

    /* poll: readable only after a write. */
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    printf("poll empty: %d revents=%x\n", poll(&pf, 1, 0), pf.revents);
    write(p[1], "x", 1);
    pf.revents = 0;
    printf("poll after write: %d revents=%x\n", poll(&pf, 1, 0), pf.revents);
    read(p[0], buf, 1);

    /* Fill a pipe in non-blocking mode: capacity is at least 4096 bytes. */
    fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
    size_t filled = 0;
    char block[512];
    memset(block, 'q', sizeof block);
    for (;;) {
        ssize_t w = write(p[1], block, sizeof block);
        if (w < 0)
            break;
        filled += (size_t)w;
        if (filled > (1u << 22))
            break;
    }
    printf("pipe full: errno=%d capacity>=4096: %d\n", errno, filled >= 4096);
    size_t drained = 0;
    while ((r = read(p[0], buf, sizeof buf)) > 0)
        drained += (size_t)r;
    printf("drained == filled: %d\n", drained == filled);

    /* EOF after closing the write end; EPIPE-free check via closed read end is skipped
     * (SIGPIPE would kill us). */
    close(p[1]);
    fcntl(p[0], F_SETFL, fl);
    r = read(p[0], buf, sizeof buf);
    printf("read after writer closed: %zd\n", r);
    close(p[0]);

    /* pipe2 with O_CLOEXEC, dup3, F_GETFD/F_DUPFD. */
    int q[2];
    check(pipe2(q, O_CLOEXEC) == 0, "pipe2");
    printf("FD_CLOEXEC set: %d\n", (fcntl(q[0], F_GETFD) & FD_CLOEXEC) != 0);
    int d = fcntl(q[0], F_DUPFD, 20);
    printf("F_DUPFD >= 20: %d, cloexec=%d\n", d >= 20, fcntl(d, F_GETFD) & FD_CLOEXEC);
    int d3 = dup3(q[1], 30, O_CLOEXEC);
    printf("dup3 -> %d cloexec=%d\n", d3, fcntl(d3, F_GETFD) & FD_CLOEXEC);
    write(d3, "via dup3", 8);
    r = read(d, buf, sizeof buf);
    printf("read via F_DUPFD fd: %.*s\n", (int)r, buf);
    close(d);
    close(d3);
    close(q[0]);
    close(q[1]);
    check(fcntl(q[0], F_GETFD) == -1 && errno == EBADF, "closed fd gives EBADF");

    /* Many pipes; a closed descriptor is reused (lowest free number first). Emulators may hold
     * descriptors of their own, so only relative facts are printed. */
    int fds[40];
    for (int i = 0; i < 20; i++)
        check(pipe(fds + 2 * i) == 0, "pipe in a batch of 20");
    int distinct = 1;
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < i; j++)
            distinct &= fds[i] != fds[j];
    printf("40 pipe fds distinct: %d\n", distinct);
    int lowest = fds[0];
    for (int i = 0; i < 40; i++)
        if (fds[i] < lowest)
            lowest = fds[i];
    for (int i = 0; i < 40; i++)
        close(fds[i]);
    int again[2];
    pipe(again);
    printf("fd reuse: %d\n", again[0] == lowest);

    /* select: an empty pipe times out (and the timeout is used up), a pipe with data is
     * readable, a write end writable, a closed descriptor in a set is EBADF. */
    fd_set rd, wr;
    FD_ZERO(&rd);
    FD_SET(again[0], &rd);
    struct timeval tv = {0, 20 * 1000};
    int n = select(again[0] + 1, &rd, NULL, NULL, &tv);
    printf("select on an empty pipe: %d, fd still set %d, timeout left %ld us\n", n,
           FD_ISSET(again[0], &rd), (long)tv.tv_usec);
    write(again[1], "x", 1);
    FD_ZERO(&rd);
    FD_ZERO(&wr);
    FD_SET(again[0], &rd);
    FD_SET(again[1], &rd);
    FD_SET(again[0], &wr);
    FD_SET(again[1], &wr);
    int top = again[0] > again[1] ? again[0] : again[1];
    n = select(top + 1, &rd, &wr, NULL, NULL);
    printf("select with data: %d, read end readable %d, write end readable %d, "
           "write end writable %d, read end writable %d\n",
           n, FD_ISSET(again[0], &rd), FD_ISSET(again[1], &rd), FD_ISSET(again[1], &wr),
           FD_ISSET(again[0], &wr));
    close(again[1]);
    read(again[0], buf, 1);
    FD_ZERO(&rd);
    FD_SET(again[0], &rd);
    n = select(again[0] + 1, &rd, NULL, NULL, NULL);
    printf("select after the writer closed: %d (end of file is readable)\n", n);
    FD_ZERO(&rd);
    FD_SET(again[1], &rd);
    tv = (struct timeval){1, 0};
    errno = 0;
    n = select(again[1] + 1, &rd, NULL, NULL, &tv);
    printf("select on a closed fd: %d, %s\n", n, errno == EBADF ? "EBADF" : strerror(errno));
    n = select(0, NULL, NULL, NULL, &(struct timeval){0, 1000});
    printf("select as a sleep: %d\n", n);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
