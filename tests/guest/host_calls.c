/* host_calls: syscalls the host runs as asked, in the scratch directory given as argv[1]:
 * mkfifo (mknodat) with a writer child, mknod of a regular file, extended attributes (set,
 * get, list, remove, with the errors the host file system gives), credentials (setuid and
 * friends to the ids the process has, getgroups against itself), capget, personality, syncfs,
 * readahead, preadv2/pwritev2, pidfd_open and pidfd_send_signal on a child, prctl (the
 * thread name and process attributes), POSIX message queues, System V semaphores and message
 * queues (each with a child; IPC_STAT and IPC_SET) and sched_rr_get_interval. Prints results and errno names, never ids or times. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/personality.h>
#include <sys/sem.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include "guest_util.h"

static const char *err_name(int e) {
    switch (e) {
    case 0: return "ok";
    case ENOTSUP: return "ENOTSUP";
    case ENODATA: return "ENODATA";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ERANGE: return "ERANGE";
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    default: return "other";
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2 || chdir(argv[1]) != 0)
        die("chdir");

    /* A FIFO: the child writes, the parent reads. */
    check(mkfifo("fifo", 0600) == 0, "mkfifo");
    struct stat st;
    check(stat("fifo", &st) == 0 && S_ISFIFO(st.st_mode), "stat of the FIFO says FIFO");
    errno = 0;
    printf("mkfifo again: %s\n", err_name(mkfifo("fifo", 0600) == 0 ? 0 : errno));
    pid_t child = fork();
    if (child == 0) {
        int w = open("fifo", O_WRONLY);
        write(w, "through the fifo", 16);
        _exit(0);
    }
    int r = open("fifo", O_RDONLY);
    char buf[64] = {0};
    ssize_t n = read(r, buf, sizeof buf - 1);
    close(r);
    waitpid(child, NULL, 0);
    printf("fifo read %zd: %s\n", n, buf);
    check(mknod("plain", S_IFREG | 0644, 0) == 0, "mknod of a regular file");
    check(stat("plain", &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0,
          "the node is an empty regular file");

    /* Extended attributes: whatever the host file system allows, the same as under qemu. */
    int fd = open("attrs", O_CREAT | O_RDWR, 0644);
    errno = 0;
    int sr = setxattr("attrs", "user.colour", "blue", 4, 0);
    int set_err = sr == 0 ? 0 : errno;
    printf("setxattr: %s\n", err_name(set_err));
    if (set_err == 0) {
        char value[16] = {0};
        printf("getxattr: %zd %s\n", getxattr("attrs", "user.colour", value, sizeof value),
               value);
        printf("getxattr size query: %zd\n", getxattr("attrs", "user.colour", NULL, 0));
        errno = 0;
        printf("getxattr too small: %zd %s\n", getxattr("attrs", "user.colour", value, 2),
               err_name(errno));
        check(fsetxattr(fd, "user.shape", "round", 5, XATTR_CREATE) == 0, "fsetxattr");
        errno = 0;
        printf("fsetxattr XATTR_CREATE again: %s\n",
               err_name(fsetxattr(fd, "user.shape", "x", 1, XATTR_CREATE) == 0 ? 0 : errno));
        char list[128];
        ssize_t len = listxattr("attrs", list, sizeof list);
        int user_names = 0;
        for (ssize_t i = 0; i < len; i += strlen(list + i) + 1)
            user_names += strncmp(list + i, "user.", 5) == 0;
        printf("listxattr: %d user names\n", user_names);
        printf("flistxattr size query equals listxattr: %d\n", flistxattr(fd, NULL, 0) == len);
        check(removexattr("attrs", "user.colour") == 0, "removexattr");
        errno = 0;
        printf("lgetxattr after remove: %zd %s\n", lgetxattr("attrs", "user.colour", value, 16),
               err_name(errno));
        check(fremovexattr(fd, "user.shape") == 0, "fremovexattr");
    }
    errno = 0;
    printf("getxattr of a missing file: %s\n",
           err_name(getxattr("missing", "user.x", NULL, 0) < 0 ? errno : 0));

    /* Credentials: setting the ids the process already has always works. */
    uid_t uid = getuid();
    gid_t gid = getgid();
    check(setgid(gid) == 0, "setgid to the current gid");
    check(setregid(-1, getegid()) == 0, "setregid keeping the ids");
    check(setresgid(-1, -1, -1) == 0, "setresgid changing nothing");
    check(setuid(uid) == 0, "setuid to the current uid");
    check(setreuid(-1, geteuid()) == 0, "setreuid keeping the ids");
    check(setresuid(-1, -1, -1) == 0, "setresuid changing nothing");
    check(setfsuid(uid) == (int)uid, "setfsuid returns the previous fs uid");
    check(setfsgid(gid) == (int)gid, "setfsgid returns the previous fs gid");
    int ngroups = getgroups(0, NULL);
    gid_t groups[256];
    check(ngroups >= 0 && getgroups(256, groups) == ngroups, "getgroups count and list agree");
    errno = 0;
    r = setgroups(ngroups, groups);
    printf("setgroups to the same groups: %s\n", err_name(r == 0 ? 0 : errno));

    struct {
        unsigned version;
        int pid;
    } head = {0, 0};
    r = (int)syscall(SYS_capget, &head, NULL);
    printf("capget version probe: %d, version 3 %d\n", r, head.version == 0x20080522);
    unsigned data[6];
    r = (int)syscall(SYS_capget, &head, data);
    printf("capget of this process: %d\n", r);

    int persona = personality(0xffffffff);
    printf("personality query: %s\n", persona >= 0 ? "a value" : "error");
    check(personality(persona) >= 0, "personality set to itself");

    check(syncfs(fd) == 0, "syncfs");
    check(pwrite(fd, "0123456789", 10, 0) == 10, "pwrite");
    check(readahead(fd, 0, 4096) == 0, "readahead");
    char a[4] = {0}, b[4] = {0};
    struct iovec iov[2] = {{a, 3}, {b, 3}};
    printf("preadv2 at 2: %zd %.3s %.3s\n", preadv2(fd, iov, 2, 2, 0), a, b);
    lseek(fd, 5, SEEK_SET);
    printf("preadv2 at the file position: %zd %.3s\n", preadv2(fd, iov, 1, -1, 0), a);
    struct iovec out = {"XY", 2};
    printf("pwritev2 at 10: %zd\n", pwritev2(fd, &out, 1, 10, 0));
    printf("file size after it: %ld\n", (long)lseek(fd, 0, SEEK_END));
    close(fd);

    /* pidfd: poll says readable once the child exits; a signal through it. */
    child = fork();
    if (child == 0) {
        pause();
        _exit(1);
    }
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    check(pidfd >= 0, "pidfd_open of a child");
    struct pollfd pfd = {pidfd, POLLIN, 0};
    printf("pidfd before the child ends: %d ready\n", poll(&pfd, 1, 0));
    check(syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0) == 0, "pidfd_send_signal");
    printf("pidfd after SIGTERM: %d ready\n", poll(&pfd, 1, 5000));
    int status = 0;
    waitpid(child, &status, 0);
    printf("child killed by SIGTERM: %d\n", WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    close(pidfd);

    /* prctl: the thread name is rv32vm's own, the process attributes the host's. */
    char name[16] = {0};
    check(prctl(PR_SET_NAME, "renamed-thread") == 0, "PR_SET_NAME");
    prctl(PR_GET_NAME, name);
    printf("PR_GET_NAME: %s\n", name);
    printf("PR_GET_DUMPABLE: %d\n", prctl(PR_GET_DUMPABLE));
    check(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "PR_SET_NO_NEW_PRIVS");
    printf("PR_GET_NO_NEW_PRIVS: %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    int value = -1;
    check(prctl(PR_SET_PDEATHSIG, SIGUSR2) == 0, "PR_SET_PDEATHSIG");
    prctl(PR_GET_PDEATHSIG, &value);
    printf("PR_GET_PDEATHSIG is SIGUSR2: %d\n", value == SIGUSR2);
    prctl(PR_SET_PDEATHSIG, 0);
    printf("PR_GET_TIMERSLACK positive: %d\n", prctl(PR_GET_TIMERSLACK) > 0);

    /* POSIX message queues: attributes, priorities, a full and an empty queue timing out, a
     * child that receives what the parent sends, O_NONBLOCK through mq_setattr. */
    char qname[64];
    snprintf(qname, sizeof qname, "/rv32vm-host-calls-%d", (int)getpid());
    struct mq_attr qattr = {.mq_maxmsg = 4, .mq_msgsize = 32};
    mqd_t q = mq_open(qname, O_CREAT | O_EXCL | O_RDWR, 0600, &qattr);
    check(q != (mqd_t)-1, "mq_open");
    if (q != (mqd_t)-1) {
        struct mq_attr got;
        mq_getattr(q, &got);
        printf("mq_getattr: maxmsg %ld msgsize %ld curmsgs %ld\n", got.mq_maxmsg, got.mq_msgsize,
               got.mq_curmsgs);
        mq_send(q, "low", 3, 1);
        mq_send(q, "high", 4, 9);
        mq_send(q, "mid", 3, 5);
        char msg[32];
        unsigned prio = 0;
        for (int i = 0; i < 3; i++) {
            ssize_t len = mq_receive(q, msg, sizeof msg, &prio);
            printf("mq_receive: %.*s prio %u\n", (int)len, msg, prio);
        }
        struct timespec soon;
        clock_gettime(CLOCK_REALTIME, &soon);
        soon.tv_nsec += 20 * 1000 * 1000;
        if (soon.tv_nsec >= 1000000000) {
            soon.tv_sec++;
            soon.tv_nsec -= 1000000000;
        }
        errno = 0;
        r = (int)mq_timedreceive(q, msg, sizeof msg, NULL, &soon);
        printf("mq_timedreceive of an empty queue: %d %s\n", r,
               errno == ETIMEDOUT ? "ETIMEDOUT" : strerror(errno));
        for (int i = 0; i < 4; i++)
            mq_send(q, "x", 1, 0);
        errno = 0;
        r = mq_timedsend(q, "y", 1, 0, &soon);
        printf("mq_timedsend to a full queue: %d %s\n", r,
               errno == ETIMEDOUT ? "ETIMEDOUT" : strerror(errno));
        struct mq_attr nonblock = {.mq_flags = O_NONBLOCK}, old;
        mq_setattr(q, &nonblock, &old);
        errno = 0;
        r = mq_send(q, "z", 1, 0);
        printf("mq_send with O_NONBLOCK to a full queue: %d %s, old flags %ld\n", r,
               errno == EAGAIN ? "EAGAIN" : strerror(errno), old.mq_flags);
        for (int i = 0; i < 4; i++)
            mq_receive(q, msg, sizeof msg, NULL);
        child = fork();
        if (child == 0) {
            mqd_t cq = mq_open(qname, O_RDONLY);
            ssize_t len = mq_receive(cq, msg, sizeof msg, &prio);
            _exit(len == 5 && memcmp(msg, "hello", 5) == 0 && prio == 3 ? 0 : 1);
        }
        usleep(20 * 1000);
        mq_send(q, "hello", 5, 3);
        waitpid(child, &status, 0);
        printf("a child receives what the parent sends: %d\n",
               WIFEXITED(status) && WEXITSTATUS(status) == 0);
        mq_close(q);
        check(mq_unlink(qname) == 0, "mq_unlink");
    }

    /* System V semaphores and message queues, shared with a child. */
    int sem = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600);
    check(sem >= 0, "semget");
    if (sem >= 0) {
        unsigned short init[2] = {1, 0}, now[2] = {9, 9};
        check(semctl(sem, 0, SETALL, init) == 0, "semctl SETALL");
        semctl(sem, 0, GETALL, now);
        printf("semctl GETALL: %u %u\n", now[0], now[1]);
        struct sembuf take = {0, -1, 0};
        check(semop(sem, &take, 1) == 0, "semop takes the first");
        struct sembuf try_again = {0, -1, IPC_NOWAIT};
        errno = 0;
        r = semop(sem, &try_again, 1);
        printf("semop IPC_NOWAIT on zero: %d %s\n", r, errno == EAGAIN ? "EAGAIN" : strerror(errno));
        child = fork();
        if (child == 0) {
            struct sembuf wait_second = {1, -1, 0};
            _exit(semop(sem, &wait_second, 1) == 0 ? 0 : 1);
        }
        usleep(20 * 1000);
        check(semctl(sem, 1, SETVAL, 1) == 0, "semctl SETVAL wakes the child");
        waitpid(child, &status, 0);
        printf("child's semop returned: %d, GETVAL now %d\n",
               WIFEXITED(status) && WEXITSTATUS(status) == 0, semctl(sem, 1, GETVAL));
        struct semid_ds sds;
        r = semctl(sem, 0, IPC_STAT, &sds);
        printf("semctl IPC_STAT: %d nsems %lu mode %o otime set %d\n", r,
               (unsigned long)sds.sem_nsems, sds.sem_perm.mode & 0777, sds.sem_otime > 0);
        sds.sem_perm.mode = 0640;
        check(semctl(sem, 0, IPC_SET, &sds) == 0, "semctl IPC_SET");
        memset(&sds, 0, sizeof sds);
        semctl(sem, 0, IPC_STAT, &sds);
        printf("semctl mode after IPC_SET: %o\n", sds.sem_perm.mode & 0777);
        check(semctl(sem, 0, IPC_RMID) == 0, "semctl IPC_RMID");
    }
    int msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    check(msq >= 0, "msgget");
    if (msq >= 0) {
        struct {
            long mtype;
            char text[16];
        } out = {2, "second"}, in;
        msgsnd(msq, &out, 7, 0);
        out.mtype = 1;
        strcpy(out.text, "first");
        msgsnd(msq, &out, 6, 0);
        struct msqid_ds mds;
        r = msgctl(msq, IPC_STAT, &mds);
        printf("msgctl IPC_STAT: %d qnum %lu cbytes %lu mode %o stime set %d\n", r,
               (unsigned long)mds.msg_qnum, (unsigned long)mds.__msg_cbytes,
               mds.msg_perm.mode & 0777, mds.msg_stime > 0);
        unsigned long qbytes = mds.msg_qbytes;
        mds.msg_qbytes = qbytes / 2;
        mds.msg_perm.mode = 0620;
        check(msgctl(msq, IPC_SET, &mds) == 0, "msgctl IPC_SET");
        memset(&mds, 0, sizeof mds);
        msgctl(msq, IPC_STAT, &mds);
        printf("msgctl after IPC_SET: qbytes halved %d mode %o\n",
               (unsigned long)mds.msg_qbytes == qbytes / 2, mds.msg_perm.mode & 0777);
        ssize_t len = msgrcv(msq, &in, sizeof in.text, 1, 0);
        printf("msgrcv type 1: %zd %ld %s\n", len, in.mtype, in.text);
        len = msgrcv(msq, &in, sizeof in.text, 0, 0);
        printf("msgrcv any: %zd %ld %s\n", len, in.mtype, in.text);
        errno = 0;
        len = msgrcv(msq, &in, sizeof in.text, 0, IPC_NOWAIT);
        printf("msgrcv IPC_NOWAIT of nothing: %zd %s\n", len,
               errno == ENOMSG ? "ENOMSG" : strerror(errno));
        child = fork();
        if (child == 0) {
            len = msgrcv(msq, &in, sizeof in.text, 5, 0);
            _exit(len == 6 && in.mtype == 5 && strcmp(in.text, "child") == 0 ? 0 : 1);
        }
        usleep(20 * 1000);
        out.mtype = 5;
        strcpy(out.text, "child");
        msgsnd(msq, &out, 6, 0);
        waitpid(child, &status, 0);
        printf("a child receives a message: %d\n", WIFEXITED(status) && WEXITSTATUS(status) == 0);
        check(msgctl(msq, IPC_RMID, NULL) == 0, "msgctl IPC_RMID");
    }

    struct timespec quantum;
    r = sched_rr_get_interval(0, &quantum);
    printf("sched_rr_get_interval: %d\n", r);

    printf("failures=%d\n", guest_failures);
    return guest_failures != 0;
}
