/* file_extras: less common file and process calls a program may make: fallocate, flock,
 * posix_fadvise, sync_file_range, memfd_create (written, mapped shared, read back),
 * close_range (closing and marking close-on-exec), sendfile, copy_file_range, splice and tee
 * through pipes (with and without offsets), getpriority/setpriority, the sched_* queries,
 * getresuid/getresgid, sched_getcpu and inotify (a watched directory reports a created and a
 * deleted file). Prints only facts that do not depend on the host. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "guest_util.h"

#ifndef SYS_close_range
#define SYS_close_range 436 /* asm-generic; older libc headers lack it */
#endif

static long file_size(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 ? (long)st.st_size : -1;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char path[] = "/tmp/rv32vm-file-extras-XXXXXX";
    int fd = mkstemp(path);
    check(fd >= 0, "mkstemp");
    unlink(path);

    int r = fallocate(fd, 0, 0, 8192);
    printf("fallocate: %d, size %ld\n", r, file_size(fd));
    r = fallocate(fd, FALLOC_FL_KEEP_SIZE, 8192, 4096);
    printf("fallocate keep size: %d, size %ld\n", r, file_size(fd));
    printf("flock exclusive: %d, unlock: %d\n", flock(fd, LOCK_EX), flock(fd, LOCK_UN));
    printf("posix_fadvise sequential: %d, bad advice: %d\n",
           posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL), posix_fadvise(fd, 0, 0, 99));
    printf("sync_file_range: %d\n", sync_file_range(fd, 0, 4096, SYNC_FILE_RANGE_WRITE));

    const char *text = "0123456789abcdefghijklmnopqrstuvwxyz";
    size_t len = strlen(text);
    pwrite(fd, text, len, 0);

    /* sendfile from the file to a pipe, with an offset the call advances. */
    int p[2];
    check(pipe(p) == 0, "pipe");
    off_t off = 10;
    ssize_t n = sendfile(p[1], fd, &off, 6);
    char buf[64] = {0};
    read(p[0], buf, sizeof buf - 1);
    printf("sendfile: %zd \"%s\", offset now %ld\n", n, buf, (long)off);

    /* copy_file_range between two files, offsets by pointer. */
    int fd2 = memfd_create("extras", MFD_CLOEXEC);
    check(fd2 >= 0, "memfd_create");
    printf("memfd cloexec: %d\n", (fcntl(fd2, F_GETFD) & FD_CLOEXEC) != 0);
    char path3[] = "/tmp/rv32vm-file-extras-XXXXXX";
    int fd3 = mkstemp(path3);
    check(fd3 >= 0, "mkstemp");
    unlink(path3);
    loff_t in_off = 26, out_off = 0;
    n = copy_file_range(fd, &in_off, fd3, &out_off, 10, 0);
    memset(buf, 0, sizeof buf);
    pread(fd3, buf, sizeof buf - 1, 0);
    printf("copy_file_range: %zd \"%s\", offsets %ld %ld\n", n, buf, (long)in_off,
           (long)out_off);

    /* The memfd mapped shared: a store shows in a read. */
    ftruncate(fd2, 4096);
    char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0);
    check(m != MAP_FAILED, "mmap memfd");
    memcpy(m + 100, "shared", 6);
    memset(buf, 0, sizeof buf);
    pread(fd2, buf, 6, 100);
    printf("memfd mapped shared: \"%s\"\n", buf);
    munmap(m, 4096);

    /* splice file -> pipe, tee pipe -> pipe, splice pipe -> file. */
    loff_t soff = 0;
    n = splice(fd, &soff, p[1], NULL, 5, 0);
    int q[2];
    check(pipe(q) == 0, "pipe");
    ssize_t t = tee(p[0], q[1], 5, 0);
    loff_t doff = 200;
    ssize_t back = splice(p[0], NULL, fd2, &doff, 5, 0);
    memset(buf, 0, sizeof buf);
    pread(fd2, buf, 5, 200);
    char copy[8] = {0};
    read(q[0], copy, 5);
    printf("splice %zd, tee %zd, splice back %zd: \"%s\" and the tee copy \"%s\", offsets %ld %ld\n",
           n, t, back, buf, copy, (long)soff, (long)doff);
    errno = 0;
    n = splice(fd, NULL, fd2, NULL, 5, 0);
    printf("splice without a pipe: %zd %s\n", n, errno == EINVAL ? "EINVAL" : strerror(errno));

    /* close_range: mark, then close. */
    int a = dup(fd), b = dup(fd);
    int lo = a < b ? a : b, hi = a < b ? b : a;
    r = syscall(SYS_close_range, lo, hi, 4 /* CLOSE_RANGE_CLOEXEC */);
    printf("close_range cloexec: %d, marked %d %d\n", r, (fcntl(a, F_GETFD) & FD_CLOEXEC) != 0,
           (fcntl(b, F_GETFD) & FD_CLOEXEC) != 0);
    r = syscall(SYS_close_range, lo, hi, 0);
    printf("close_range: %d, closed %d %d, others open %d\n", r,
           fcntl(a, F_GETFD) == -1 && errno == EBADF, fcntl(b, F_GETFD) == -1,
           fcntl(fd, F_GETFD) != -1);
    errno = 0;
    r = syscall(SYS_close_range, 5, 4, 0);
    printf("close_range first > last: %d %s\n", r, errno == EINVAL ? "EINVAL" : strerror(errno));

    /* Priorities: the process's nice value, raised by one (lowering needs privileges). */
    errno = 0;
    int nice0 = getpriority(PRIO_PROCESS, 0);
    int ok = errno == 0;
    r = setpriority(PRIO_PROCESS, 0, nice0 + 1);
    printf("getpriority ok %d, setpriority +1: %d, now +1 %d, own pid same %d\n", ok, r,
           getpriority(PRIO_PROCESS, 0) == nice0 + 1,
           getpriority(PRIO_PROCESS, getpid()) == nice0 + 1);

    /* musl's sched_getscheduler and sched_getparam return ENOSYS by design: the syscalls. */
    struct sched_param sp = {.sched_priority = 99};
    printf("sched_getscheduler: %s, sched_getparam: %ld priority %d\n",
           syscall(SYS_sched_getscheduler, 0) == SCHED_OTHER ? "SCHED_OTHER" : "other",
           syscall(SYS_sched_getparam, 0, &sp), sp.sched_priority);
    printf("SCHED_FIFO priorities %d..%d, SCHED_OTHER %d..%d\n",
           sched_get_priority_min(SCHED_FIFO), sched_get_priority_max(SCHED_FIFO),
           sched_get_priority_min(SCHED_OTHER), sched_get_priority_max(SCHED_OTHER));
    errno = 0;
    r = sched_get_priority_max(1234);
    printf("bad policy: %d %s\n", r, errno == EINVAL ? "EINVAL" : strerror(errno));

    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    printf("getresuid: %d, as getuid/geteuid %d\n", getresuid(&ru, &eu, &su),
           ru == getuid() && eu == geteuid() && su == eu);
    printf("getresgid: %d, as getgid/getegid %d\n", getresgid(&rg, &eg, &sg),
           rg == getgid() && eg == getegid() && sg == eg);
    printf("sched_getcpu: %s\n", sched_getcpu() >= 0 ? "a cpu" : "error");

    char dir[] = "/tmp/rv32vm-inotify-XXXXXX";
    check(mkdtemp(dir) != NULL, "mkdtemp");
    int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    check(in >= 0, "inotify_init1");
    int wd = inotify_add_watch(in, dir, IN_CREATE | IN_DELETE);
    check(wd >= 0, "inotify_add_watch");
    char file[64];
    snprintf(file, sizeof file, "%s/made", dir);
    close(open(file, O_CREAT | O_WRONLY, 0600));
    unlink(file);
    char events[512] __attribute__((aligned(8)));
    n = read(in, events, sizeof events);
    int created = 0, deleted = 0;
    for (char *p = events; n > 0 && p < events + n;) {
        struct inotify_event *e = (struct inotify_event *)p;
        if (e->wd == wd && e->len && strcmp(e->name, "made") == 0) {
            created += (e->mask & IN_CREATE) != 0;
            deleted += (e->mask & IN_DELETE) != 0;
        }
        p += sizeof *e + e->len;
    }
    printf("inotify: created %d, deleted %d\n", created, deleted);
    errno = 0;
    n = read(in, events, sizeof events);
    printf("inotify with nothing new: %zd %s\n", n, errno == EAGAIN ? "EAGAIN" : strerror(errno));
    printf("inotify_rm_watch: %d, again: %d\n", inotify_rm_watch(in, wd), inotify_rm_watch(in, wd));
    close(in);
    rmdir(dir);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
