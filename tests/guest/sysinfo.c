/* sysinfo: uname (sysname and machine only), process ids, limits, misc identity calls. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "guest_util.h"

int main(int argc, char **argv) {
    (void)argc;
    struct utsname u;
    check(uname(&u) == 0, "uname");
    printf("sysname=%s machine=%s\n", u.sysname, u.machine);
    check(strlen(u.release) > 0, "release nonempty");
    /* The release is the one /proc reports, as under Linux and qemu-user. */
    char osrelease[sizeof u.release] = {0};
    FILE *rel = fopen("/proc/sys/kernel/osrelease", "r");
    check(rel && fgets(osrelease, sizeof osrelease, rel), "read /proc/sys/kernel/osrelease");
    if (rel)
        fclose(rel);
    osrelease[strcspn(osrelease, "\n")] = 0;
    check(strcmp(osrelease, u.release) == 0, "uname release == /proc/sys/kernel/osrelease");

    pid_t pid = getpid();
    check(pid > 0, "getpid > 0");
    check(getppid() >= 0, "getppid >= 0");
    check(gettid() == pid, "gettid == getpid (single thread)");
    check(getuid() == geteuid(), "uid == euid");
    check(getgid() == getegid(), "gid == egid");
    check(getpgrp() > 0, "getpgrp > 0");
    /* A container may start us in session 0 (leader outside its pid namespace). */
    check(getsid(0) >= 0, "getsid >= 0");

    struct rlimit rl;
    check(getrlimit(RLIMIT_STACK, &rl) == 0, "getrlimit STACK");
    check(rl.rlim_cur >= 1024 * 1024 || rl.rlim_cur == RLIM_INFINITY, "stack limit >= 1 MiB");
    check(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= 64, "NOFILE >= 64");

    long page = sysconf(_SC_PAGESIZE);
    printf("pagesize=%ld\n", page);
    printf("AT_PAGESZ=%lu\n", getauxval(AT_PAGESZ));
    check(getauxval(AT_PHDR) != 0, "AT_PHDR present");
    check(getauxval(AT_ENTRY) != 0, "AT_ENTRY present");
    check(getauxval(AT_RANDOM) != 0, "AT_RANDOM present");
    unsigned long hw = getauxval(AT_HWCAP);
    /* Bits are 1 << (letter - 'A'): I, M, A, F, D, C are all needed by these programs. */
    printf("hwcap has IMAFDC: %d\n",
           (hw & 0x112d) == 0x112d);
    check(sysconf(_SC_NPROCESSORS_ONLN) >= 1, "nprocs >= 1");

    cpu_set_t set;
    CPU_ZERO(&set);
    check(sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 1, "sched_getaffinity");
    check(sched_yield() == 0, "sched_yield");

    struct rusage ru;
    check(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage");

    char host[256];
    check(gethostname(host, sizeof host) == 0, "gethostname");

    /* /proc/self/exe names this program (emulators must show the guest, not themselves). */
    char exe[4096], self[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n >= 0)
        exe[n] = 0;
    check(n > 0 && realpath(argv[0], self) && strcmp(exe, self) == 0,
          "readlink(/proc/self/exe) is the program");

    /* chroot is the host's: its path errors come first; "/" needs privilege (then it
     * changes nothing). */
    errno = 0;
    check(chroot("/nonexistent-rv32vm-dir") == -1 && errno == ENOENT, "chroot(missing) ENOENT");
    errno = 0;
    check(chroot(argv[0]) == -1 && errno == ENOTDIR, "chroot(file) ENOTDIR");
    errno = 0;
    check(chroot("/") == 0 || errno == EPERM, "chroot(/) works or EPERM");

    /* unshare is the host's: a private fd table and cwd work without privilege. */
    check(unshare(CLONE_FILES | CLONE_FS) == 0, "unshare(CLONE_FILES|CLONE_FS)");

    /* kcmp compares what the fds name (the guest's numbers, not the host's). Containers may
     * forbid it: then it fails alike everywhere. */
    int one = open(argv[0], O_RDONLY), same = dup(one), other = open(argv[0], O_RDONLY);
    long eq = syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, one, same);
    long ne = syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, one, other);
    if (eq < 0 && (errno == ENOSYS || errno == EPERM))
        printf("kcmp unavailable\n");
    else
        printf("kcmp: dup is the same file %d, another open is not %d\n", eq == 0, ne > 0);
    close(one);
    close(same);
    close(other);

    /* An unknown syscall returns ENOSYS rather than killing the process. */
    long r = syscall(4000);
    printf("syscall 4000: %ld errno=%d (ENOSYS=%d)\n", r, errno, ENOSYS);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
