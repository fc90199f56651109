/* sockets: AF_UNIX socketpairs (stream and datagram, scatter/gather sendmsg/recvmsg,
 * MSG_TRUNC), SCM_RIGHTS passing pipe fds (MSG_CMSG_CLOEXEC, MSG_CTRUNC), a TCP echo over
 * 127.0.0.1 with a forked client (accept4 with SOCK_CLOEXEC, getsockname/getpeername,
 * shutdown), UDP sendto/recvfrom with the source address, sendmmsg, socket options
 * (SO_REUSEADDR, SO_RCVBUF, SO_TYPE, SO_LINGER, TCP_NODELAY, SO_RCVTIMEO timing out a
 * receive), EPIPE and SIGPIPE after shutdown, epoll (level- and edge-triggered, timeouts 0
 * and 20 ms, a signal interrupting the wait, also one let in by the call's own mask),
 * eventfd (counter, semaphore), and the errors of a bad domain, a refused connection, bad
 * fds and bad pointers. Ports and addresses are only compared, never printed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "guest_util.h"

static const char *ename(int e) {
    static char other[32];
    switch (e) {
    case 0: return "0";
    case EAGAIN: return "EAGAIN";
    case EBADF: return "EBADF";
    case ENOTSOCK: return "ENOTSOCK";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EINVAL: return "EINVAL";
    case EPIPE: return "EPIPE";
    case EINTR: return "EINTR";
    case EEXIST: return "EEXIST";
    case ENOENT: return "ENOENT";
    case EFAULT: return "EFAULT";
    case ENOPROTOOPT: return "ENOPROTOOPT";
    case EPERM: return "EPERM";
    }
    snprintf(other, sizeof other, "errno %d", e);
    return other;
}

/* Print the result of a call expected to fail: "NAME: -1 ERRNO". */
#define FAILS(name, call)                                                      \
    do {                                                                       \
        errno = 0;                                                             \
        long r_ = (long)(call);                                                \
        printf("%s: %ld %s\n", name, r_, ename(r_ < 0 ? errno : 0));           \
    } while (0)

static long ms_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static int cloexec(int fd) { return (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0; }

static struct sockaddr_in loopback(void) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void stream_pair(void) {
    int sv[2];
    char buf[256];
    check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair stream");
    printf("socketpair cloexec: %d %d\n", cloexec(sv[0]), cloexec(sv[1]));
    printf("send: %zd\n", send(sv[0], "hello stream", 12, 0));
    ssize_t r = recv(sv[1], buf, sizeof buf, 0);
    printf("recv: %zd \"%.*s\"\n", r, (int)r, buf);
    write(sv[1], "back", 4);
    r = read(sv[0], buf, sizeof buf);
    printf("read back: %zd \"%.*s\"\n", r, (int)r, buf);
    FAILS("empty recv MSG_DONTWAIT", recv(sv[0], buf, sizeof buf, MSG_DONTWAIT));
    send(sv[0], "peekaboo", 8, 0);
    r = recv(sv[1], buf, 4, MSG_PEEK);
    printf("peek: %zd \"%.*s\"\n", r, (int)r, buf);
    r = recv(sv[1], buf, sizeof buf, 0);
    printf("after peek: %zd \"%.*s\"\n", r, (int)r, buf);

    struct sockaddr_un un;
    socklen_t len = sizeof un;
    memset(&un, 0x55, sizeof un);
    check(getsockname(sv[0], (struct sockaddr *)&un, &len) == 0, "getsockname unnamed");
    printf("unnamed: len=%u family=%d\n", len, un.sun_family);

    /* Gather three pieces, scatter into two buffers. */
    struct iovec out[3] = {{"abc", 3}, {"", 0}, {"defgh", 5}};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = out;
    m.msg_iovlen = 3;
    printf("sendmsg gather: %zd\n", sendmsg(sv[0], &m, 0));
    char a[2], b[16];
    struct iovec in[2] = {{a, sizeof a}, {b, sizeof b}};
    memset(&m, 0, sizeof m);
    m.msg_iov = in;
    m.msg_iovlen = 2;
    r = recvmsg(sv[1], &m, 0);
    printf("recvmsg scatter: %zd \"%.2s\" \"%.*s\" flags=%x\n", r, a, (int)r - 2, b, m.msg_flags);
    close(sv[0]);
    r = recv(sv[1], buf, sizeof buf, 0);
    printf("recv after peer closed: %zd\n", r);
    close(sv[1]);
}

static void dgram_pair(void) {
    int dv[2];
    char buf[64];
    check(socketpair(AF_UNIX, SOCK_DGRAM, 0, dv) == 0, "socketpair dgram");
    send(dv[0], "one", 3, 0);
    send(dv[0], "second", 6, 0);
    ssize_t r = recv(dv[1], buf, sizeof buf, 0);
    printf("dgram 1: %zd \"%.*s\"\n", r, (int)r, buf);
    r = recv(dv[1], buf, sizeof buf, 0);
    printf("dgram 2: %zd \"%.*s\"\n", r, (int)r, buf);
    send(dv[0], "truncate me", 11, 0);
    r = recv(dv[1], buf, 4, MSG_TRUNC);
    printf("MSG_TRUNC recv: %zd \"%.4s\"\n", r, buf);
    send(dv[0], "cut short", 9, 0);
    struct iovec iov = {buf, 3};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    r = recvmsg(dv[1], &m, 0);
    printf("recvmsg short: %zd \"%.3s\" MSG_TRUNC=%d\n", r, buf, (m.msg_flags & MSG_TRUNC) != 0);
    close(dv[0]);
    close(dv[1]);
}

/* Send `n` fds with one byte over `s`. */
static ssize_t send_fds(int s, const int *fds, int n) {
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct iovec iov = {"F", 1};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = u.buf;
    m.msg_controllen = CMSG_SPACE(n * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(c), fds, n * sizeof(int));
    return sendmsg(s, &m, 0);
}

static void pass_fds(void) {
    int sv[2], p[2];
    char buf[64];
    check(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair for SCM_RIGHTS");
    check(pipe(p) == 0, "pipe to pass");
    printf("sendmsg 2 fds: %zd\n", send_fds(sv[0], p, 2));
    close(p[0]);
    close(p[1]);

    union {
        char buf[CMSG_SPACE(8 * sizeof(int))];
        struct cmsghdr align;
    } u;
    char byte;
    struct iovec iov = {&byte, 1};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = u.buf;
    m.msg_controllen = sizeof u.buf;
    ssize_t r = recvmsg(sv[1], &m, MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    printf("recvmsg: %zd byte=%c flags=%x controllen==CMSG_SPACE(8): %d\n", r, byte,
           m.msg_flags, m.msg_controllen == CMSG_SPACE(2 * sizeof(int)));
    int fds[2] = {-1, -1};
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(2 * sizeof(int))) {
        memcpy(fds, CMSG_DATA(c), sizeof fds);
        printf("SCM_RIGHTS with 2 fds, next cmsg: %d\n", CMSG_NXTHDR(&m, c) != NULL);
    } else {
        printf("FAIL no SCM_RIGHTS message\n");
    }
    printf("received fds new: %d, cloexec: %d %d\n", fds[0] > 2 && fds[1] > 2 && fds[0] != fds[1],
           cloexec(fds[0]), cloexec(fds[1]));
    printf("write through passed pipe: %zd\n", write(fds[1], "through a passed pipe", 21));
    r = read(fds[0], buf, sizeof buf);
    printf("read through passed pipe: %zd \"%.*s\"\n", r, (int)r, buf);

    /* Without MSG_CMSG_CLOEXEC the fd is inheritable. */
    send_fds(sv[0], &fds[1], 1);
    m.msg_controllen = sizeof u.buf;
    recvmsg(sv[1], &m, 0);
    c = CMSG_FIRSTHDR(&m);
    int fd3 = -1;
    if (c && c->cmsg_type == SCM_RIGHTS)
        memcpy(&fd3, CMSG_DATA(c), sizeof fd3);
    printf("second receive: fd new %d cloexec %d\n", fd3 > 2, fd3 >= 0 ? cloexec(fd3) : -1);
    write(fd3, "!", 1);
    r = read(fds[0], buf, sizeof buf);
    printf("read via third fd: %zd \"%.*s\"\n", r, (int)r, buf);

    /* No room for control messages: the fds are dropped and MSG_CTRUNC is set. */
    send_fds(sv[0], fds, 1);
    m.msg_control = NULL;
    m.msg_controllen = 0;
    r = recvmsg(sv[1], &m, 0);
    printf("no control buffer: %zd MSG_CTRUNC=%d controllen=%zu\n", r,
           (m.msg_flags & MSG_CTRUNC) != 0, (size_t)m.msg_controllen);

    /* A bad fd in SCM_RIGHTS. */
    int bad[1] = {987};
    FAILS("sendmsg SCM_RIGHTS bad fd", send_fds(sv[0], bad, 1));
    close(fds[0]);
    close(fds[1]);
    close(fd3);
    close(sv[0]);
    close(sv[1]);
}

static void tcp_echo(void) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    check(ls >= 0, "tcp socket");
    int one = 1;
    check(setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0, "SO_REUSEADDR");
    struct sockaddr_in a = loopback();
    check(bind(ls, (struct sockaddr *)&a, sizeof a) == 0, "bind 127.0.0.1:0");
    check(listen(ls, 4) == 0, "listen");
    socklen_t len = sizeof a;
    check(getsockname(ls, (struct sockaddr *)&a, &len) == 0, "getsockname");
    printf("listening: len=%u family=%d port nonzero=%d addr loopback=%d\n", len, a.sin_family,
           a.sin_port != 0, a.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* Child: connect and echo until EOF. */
        close(ls);
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr *)&a, sizeof a) != 0)
            _exit(2);
        char buf[64];
        ssize_t r;
        while ((r = read(c, buf, sizeof buf)) > 0)
            if (write(c, buf, (size_t)r) != r)
                _exit(3);
        _exit(r == 0 ? 0 : 4);
    }
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    int s = accept4(ls, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
    check(s >= 0, "accept4");
    printf("accepted: cloexec=%d len=%u peer loopback=%d port nonzero=%d\n", cloexec(s), plen,
           peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK), peer.sin_port != 0);
    struct sockaddr_in p2, self;
    socklen_t l2 = sizeof p2, l3 = sizeof self;
    getpeername(s, (struct sockaddr *)&p2, &l2);
    getsockname(s, (struct sockaddr *)&self, &l3);
    printf("getpeername matches accept: %d, getsockname port is the listener's: %d\n",
           l2 == plen && memcmp(&p2, &peer, sizeof peer) == 0, self.sin_port == a.sin_port);
    int v = 0;
    socklen_t vl = sizeof v;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &vl);
    printf("TCP_NODELAY: %d len %u\n", v != 0, vl);

    const char *msg = "ping over tcp";
    printf("send: %zd\n", send(s, msg, strlen(msg), 0));
    char buf[64];
    size_t got = 0;
    while (got < strlen(msg)) {
        ssize_t r = recv(s, buf + got, sizeof buf - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    printf("echo: %zu \"%.*s\"\n", got, (int)got, buf);
    check(shutdown(s, SHUT_WR) == 0, "shutdown SHUT_WR");
    printf("recv after shutdown: %zd\n", recv(s, buf, sizeof buf, 0));
    int status = -1;
    waitpid(pid, &status, 0);
    printf("child: exited=%d status=%d\n", WIFEXITED(status), WEXITSTATUS(status));
    close(s);
    close(ls);
}

static void udp(void) {
    int u1 = socket(AF_INET, SOCK_DGRAM, 0), u2 = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    check(u1 >= 0 && u2 >= 0, "udp sockets");
    struct sockaddr_in a1 = loopback(), a2 = loopback();
    socklen_t len = sizeof a1;
    bind(u1, (struct sockaddr *)&a1, sizeof a1);
    bind(u2, (struct sockaddr *)&a2, sizeof a2);
    getsockname(u1, (struct sockaddr *)&a1, &len);
    len = sizeof a2;
    getsockname(u2, (struct sockaddr *)&a2, &len);
    printf("sendto: %zd\n", sendto(u1, "datagram", 8, 0, (struct sockaddr *)&a2, sizeof a2));
    char buf[64];
    struct sockaddr_in from;
    socklen_t flen = sizeof from;
    ssize_t r = recvfrom(u2, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen);
    printf("recvfrom: %zd \"%.*s\" len=%u source is u1: %d\n", r, (int)r, buf, flen,
           from.sin_port == a1.sin_port && from.sin_addr.s_addr == a1.sin_addr.s_addr);

    /* A short address buffer: only its bytes are written, the length is the real one. */
    sendto(u1, "again", 5, 0, (struct sockaddr *)&a2, sizeof a2);
    unsigned char raw[sizeof from];
    memset(raw, 0xaa, sizeof raw);
    flen = 4;
    r = recvfrom(u2, buf, sizeof buf, 0, (struct sockaddr *)raw, &flen);
    int rest_untouched = 1;
    for (size_t i = 4; i < sizeof raw; i++)
        rest_untouched &= raw[i] == 0xaa;
    printf("short addrlen: %zd len=%u port matches=%d rest untouched=%d\n", r, flen,
           memcmp(raw + 2, &a1.sin_port, 2) == 0, rest_untouched);

    /* sendmmsg. */
    struct iovec iov[2] = {{"abc", 3}, {"defgh", 5}};
    struct mmsghdr out[2];
    memset(out, 0, sizeof out);
    for (int i = 0; i < 2; i++) {
        out[i].msg_hdr.msg_name = &a2;
        out[i].msg_hdr.msg_namelen = sizeof a2;
        out[i].msg_hdr.msg_iov = &iov[i];
        out[i].msg_hdr.msg_iovlen = 1;
    }
    int n = sendmmsg(u1, out, 2, 0);
    printf("sendmmsg: %d lens %u %u\n", n, out[0].msg_len, out[1].msg_len);
    /* recvmmsg_time64 is not in qemu-riscv32 7.2: two recvmsg calls take them. */
    for (int i = 0; i < 2; i++) {
        char b[16];
        struct iovec riov = {b, sizeof b};
        struct sockaddr_in name;
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_name = &name;
        m.msg_namelen = sizeof name;
        m.msg_iov = &riov;
        m.msg_iovlen = 1;
        r = recvmsg(u2, &m, 0);
        printf("recvmsg %d: %zd \"%.*s\" namelen=%u source is u1: %d\n", i, r, (int)r, b,
               m.msg_namelen, name.sin_port == a1.sin_port);
    }
    FAILS("recvfrom empty nonblocking", recvfrom(u2, buf, sizeof buf, 0, NULL, NULL));
    close(u1);
    close(u2);
}

static void options(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int v = -1;
    socklen_t vl = sizeof v;
    getsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, &vl);
    printf("SO_REUSEADDR initially: %d len %u\n", v, vl);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    vl = sizeof v;
    getsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, &vl);
    printf("SO_REUSEADDR after set: %d len %u\n", v != 0, vl);
    v = 0;
    vl = sizeof v;
    check(getsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &vl) == 0, "SO_RCVBUF");
    printf("SO_RCVBUF nonzero: %d len %u\n", v > 0, vl);
    vl = sizeof v;
    getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &vl);
    printf("SO_TYPE: %d\n", v);
    struct linger lg = {1, 5}, lg2 = {0, 0};
    check(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) == 0, "SO_LINGER set");
    vl = sizeof lg2;
    getsockopt(s, SOL_SOCKET, SO_LINGER, &lg2, &vl);
    printf("SO_LINGER: %d %d len %u\n", lg2.l_onoff, lg2.l_linger, vl);
    FAILS("setsockopt unknown level", setsockopt(s, 12345, 1, &one, sizeof one));
    FAILS("setsockopt optlen too short", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, 2));
    close(s);

    /* SO_RCVTIMEO: a blocking receive gives up with EAGAIN. */
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    struct timeval tv = {0, 50000}, tv2 = {9, 9};
    check(setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0, "SO_RCVTIMEO set");
    vl = sizeof tv2;
    check(getsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv2, &vl) == 0, "SO_RCVTIMEO get");
    /* (Not printed: qemu-riscv32 7.2 returns only the low word of the 64-bit seconds.) */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char buf[8];
    FAILS("recv with SO_RCVTIMEO", recv(sv[1], buf, sizeof buf, 0));
    printf("timed out after >= 40 ms: %d\n", ms_since(&t0) >= 40);
    close(sv[0]);
    close(sv[1]);
}

static volatile sig_atomic_t sigpipes, alarms;
static void on_sigpipe(int sig) { (void)sig; sigpipes++; }
static void on_alarm(int sig) { (void)sig; alarms++; }

static void shutdown_and_sigpipe(void) {
    int sv[2];
    char buf[8];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    check(shutdown(sv[0], SHUT_WR) == 0, "shutdown SHUT_WR");
    printf("peer reads EOF: %zd\n", recv(sv[1], buf, sizeof buf, 0));
    FAILS("send after shutdown, MSG_NOSIGNAL", send(sv[0], "x", 1, MSG_NOSIGNAL));
    printf("SIGPIPE so far: %d\n", (int)sigpipes);
    signal(SIGPIPE, on_sigpipe);
    FAILS("send after shutdown", send(sv[0], "x", 1, 0));
    printf("SIGPIPE after plain send: %d\n", (int)sigpipes);
    signal(SIGPIPE, SIG_DFL);
    FAILS("shutdown bad how", shutdown(sv[0], 7));
    close(sv[0]);
    close(sv[1]);
}

static int by_data(const void *a, const void *b) {
    uint64_t x = ((const struct epoll_event *)a)->data.u64;
    uint64_t y = ((const struct epoll_event *)b)->data.u64;
    return x < y ? -1 : x > y;
}

static void show(const char *what, int n, struct epoll_event *ev) {
    printf("%s: %d", what, n);
    if (n > 0) {
        qsort(ev, (size_t)n, sizeof *ev, by_data);
        for (int i = 0; i < n; i++)
            printf(" [%llx events=%x]", (unsigned long long)ev[i].data.u64, ev[i].events);
    }
    printf("\n");
}

static void epoll(void) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    check(ep >= 0, "epoll_create1");
    printf("epoll cloexec: %d\n", cloexec(ep));
    int sv[2], p[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    pipe(p);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x1122334455667788ull};
    check(epoll_ctl(ep, EPOLL_CTL_ADD, sv[1], &ev) == 0, "epoll_ctl add socket");
    ev.data.u64 = 2;
    check(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0, "epoll_ctl add pipe");
    FAILS("epoll_ctl add twice", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
    struct epoll_event out[8];
    show("nothing ready", epoll_wait(ep, out, 8, 0), out);
    write(sv[0], "abc", 3);
    show("socket readable", epoll_wait(ep, out, 8, 0), out);
    show("level-triggered again", epoll_wait(ep, out, 8, 0), out);
    write(p[1], "z", 1);
    show("both readable", epoll_wait(ep, out, 8, 0), out);
    show("maxevents 1", epoll_wait(ep, out, 1, 0), out);
    char buf[16];
    read(sv[1], buf, sizeof buf);
    read(p[0], buf, sizeof buf);
    show("drained", epoll_wait(ep, out, 8, 0), out);

    ev.events = EPOLLIN | EPOLLET;
    ev.data.u64 = 3;
    check(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev) == 0, "epoll_ctl mod EPOLLET");
    write(p[1], "1", 1);
    show("edge: first write", epoll_wait(ep, out, 8, 0), out);
    show("edge: not again", epoll_wait(ep, out, 8, 0), out);
    write(p[1], "2", 1);
    show("edge: second write", epoll_wait(ep, out, 8, 0), out);
    read(p[0], buf, sizeof buf);

    ev.events = EPOLLOUT;
    ev.data.u64 = 4;
    epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev);
    show("socket writable", epoll_wait(ep, out, 8, 0), out);
    check(epoll_ctl(ep, EPOLL_CTL_DEL, sv[0], NULL) == 0, "epoll_ctl del");
    FAILS("epoll_ctl del again", epoll_ctl(ep, EPOLL_CTL_DEL, sv[0], NULL));
    FAILS("epoll_ctl bad fd", epoll_ctl(ep, EPOLL_CTL_ADD, 999, &ev));
    FAILS("epoll_ctl on a pipe", epoll_ctl(p[0], EPOLL_CTL_ADD, sv[0], &ev));
    FAILS("epoll_wait maxevents 0", epoll_wait(ep, out, 0, 0));
    FAILS("epoll_wait on a pipe", epoll_wait(p[0], out, 8, 0));
    FAILS("epoll_create1 bad flags", epoll_create1(1));

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    show("timeout 20 ms", epoll_wait(ep, out, 8, 20), out);
    printf("waited >= 15 ms: %d\n", ms_since(&t0) >= 15);

    /* A signal ends the wait (no SA_RESTART: EINTR). */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    /* 200 ms: the signal must come after the wait began (tier 2 compiles the code on the way
     * first). */
    struct itimerval it = {{0, 0}, {0, 200000}};
    setitimer(ITIMER_REAL, &it, NULL);
    FAILS("epoll_wait interrupted", epoll_wait(ep, out, 8, 5000));
    it.it_value.tv_usec = 20000; /* race-free below: blocked until the wait's own mask */
    printf("alarms: %d\n", (int)alarms);

    /* With SIGALRM blocked, a wait whose own mask lets it in is interrupted. */
    sigset_t block, none;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &block, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
    FAILS("epoll_pwait unblocking SIGALRM", epoll_pwait(ep, out, 8, 5000, &none));
    printf("alarms: %d\n", (int)alarms);
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    signal(SIGALRM, SIG_DFL);

    /* An eventfd in the set. */
    int efd = eventfd(0, EFD_NONBLOCK);
    ev.events = EPOLLIN;
    ev.data.u64 = 5;
    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
    show("eventfd idle", epoll_wait(ep, out, 8, 0), out);
    uint64_t one = 1;
    write(efd, &one, sizeof one);
    show("eventfd signalled", epoll_wait(ep, out, 8, 0), out);
    close(efd);
    close(sv[0]);
    close(sv[1]);
    close(p[0]);
    close(p[1]);
    close(ep);
}

static void eventfds(void) {
    int efd = eventfd(3, EFD_CLOEXEC | EFD_NONBLOCK);
    check(efd >= 0, "eventfd");
    printf("eventfd cloexec: %d\n", cloexec(efd));
    uint64_t v = 4;
    printf("write 4: %zd\n", write(efd, &v, sizeof v));
    v = 0;
    ssize_t r = read(efd, &v, sizeof v);
    printf("read: %zd value %llu\n", r, (unsigned long long)v);
    FAILS("read when zero", read(efd, &v, sizeof v));
    FAILS("write 4 bytes", write(efd, &v, 4));
    close(efd);

    int sem = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);
    for (int i = 0; i < 3; i++) {
        v = 0;
        errno = 0;
        r = read(sem, &v, sizeof v);
        printf("semaphore read %d: %zd value %llu %s\n", i, r, (unsigned long long)v,
               ename(r < 0 ? errno : 0));
    }
    close(sem);
    FAILS("eventfd bad flags", eventfd(0, 0x10));
}

static void errors(void) {
    FAILS("socket bad domain", socket(12345, SOCK_STREAM, 0));
    FAILS("socket AF_APPLETALK", socket(AF_APPLETALK, SOCK_DGRAM, 0));

    /* A port that was just free and nobody listens on. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback();
    socklen_t len = sizeof a;
    bind(s, (struct sockaddr *)&a, sizeof a);
    getsockname(s, (struct sockaddr *)&a, &len);
    close(s);
    s = socket(AF_INET, SOCK_STREAM, 0);
    FAILS("connect to closed port", connect(s, (struct sockaddr *)&a, sizeof a));
    FAILS("bind addrlen 200", bind(s, (struct sockaddr *)&a, 200));
    FAILS("accept4 bad flags", accept4(s, NULL, NULL, 0x1));
    FAILS("getsockname bad addrlen pointer", getsockname(s, (struct sockaddr *)&a, (socklen_t *)8));
    close(s);

    int p[2];
    pipe(p);
    char buf[8];
    int v;
    socklen_t vl = sizeof v;
    FAILS("send bad fd", send(999, "x", 1, 0));
    FAILS("recv bad fd", recv(999, buf, sizeof buf, 0));
    FAILS("send on a pipe", send(p[1], "x", 1, 0));
    FAILS("getsockopt on a pipe", getsockopt(p[0], SOL_SOCKET, SO_TYPE, &v, &vl));
    FAILS("accept on a pipe", accept(p[0], NULL, NULL));
    FAILS("listen bad fd", listen(999, 1));
    close(p[0]);
    close(p[1]);

    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    send(sv[0], "data", 4, 0);
    FAILS("recv into a bad buffer", recv(sv[1], (void *)8, 4, 0));
    FAILS("send from a bad buffer", send(sv[0], (void *)8, 4, 0));
    close(sv[0]);
    close(sv[1]);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    stream_pair();
    dgram_pair();
    pass_fds();
    tcp_echo();
    udp();
    options();
    shutdown_and_sigpipe();
    epoll();
    eventfds();
    errors();
    printf("failures: %d\n", guest_failures);
    return guest_failures != 0;
}
