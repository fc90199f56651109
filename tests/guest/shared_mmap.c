/* shared_mmap: MAP_SHARED mappings share memory with their file and with each other: stores
 * through a mapping are seen by pread (without msync), pwrite shows in the mapping, two mappings
 * of one file see each other, a forked child shares MAP_SHARED (file and anonymous) memory but
 * not private memory, munmap/MAP_FIXED put private memory back, mprotect of a read-only file's
 * mapping to writable fails, msync and mremap work. argv[1] is a scratch directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "guest_util.h"

static long page;

/* Runs `child` in a forked process and returns its exit status (or -1). */
static int in_child(void (*child)(void *), void *arg) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        child(arg);
        _exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void child_writes(void *arg) {
    char *p = arg;
    memcpy(p, "from child", 10);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        printf("usage: shared_mmap SCRATCH\n");
        return 2;
    }
    page = sysconf(_SC_PAGESIZE);
    char path[4096];
    snprintf(path, sizeof path, "%s/shared.bin", argv[1]);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0)
        die("open");
    char content[3 * 4096];
    for (size_t i = 0; i < sizeof content; i++)
        content[i] = (char)('a' + i % 26);
    if (write(fd, content, sizeof content) != (ssize_t)sizeof content)
        die("write");

    /* Stores through the mapping reach the file at once. */
    char *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    check(m != MAP_FAILED, "mmap shared");
    m[10] = 'X';
    char c = 0;
    pread(fd, &c, 1, 10);
    printf("pread after store through mapping: %c\n", c);

    /* pwrite shows in the mapping. */
    pwrite(fd, "hello", 5, 100);
    printf("mapping after pwrite: %.5s\n", m + 100);

    /* A second mapping of the same file (at an offset) sees the first one's stores. */
    char *second = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, page);
    check(second != MAP_FAILED, "second mapping at offset");
    m[page + 7] = 'Q';
    printf("second mapping sees store: %c, first byte %c\n", second[7], second[0]);

    /* msync is accepted; bad flags are not. */
    check(msync(m, (size_t)page, MS_SYNC) == 0, "msync MS_SYNC");
    errno = 0;
    int bad = msync(m, (size_t)page, MS_SYNC | MS_ASYNC);
    printf("msync MS_SYNC|MS_ASYNC: %d errno=%d (EINVAL=%d)\n", bad, errno, EINVAL);

    /* mprotect read-only then back: still the same memory. */
    check(mprotect(m, (size_t)page, PROT_READ) == 0, "mprotect read-only");
    pwrite(fd, "W", 1, 11);
    printf("read-only mapping after pwrite: %c\n", m[11]);
    check(mprotect(m, (size_t)page, PROT_READ | PROT_WRITE) == 0, "mprotect read-write");
    m[12] = 'Y';
    pread(fd, &c, 1, 12);
    printf("store after mprotect back reaches file: %c\n", c);

    /* A forked child's stores to a shared file mapping reach the parent. */
    int st = in_child(child_writes, m + 200);
    printf("child status %d, parent mapping: %.10s\n", st, m + 200);
    char buf[16] = {0};
    pread(fd, buf, 10, 200);
    printf("file after child store: %.10s\n", buf);

    /* MAP_FIXED private anonymous memory over a shared page: the file no longer changes. */
    char *over = mmap(m + page, (size_t)page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    check(over == m + page, "MAP_FIXED anonymous over shared page");
    printf("replaced page is zero: %d\n", over[7] == 0);
    over[8] = 'Z';
    pread(fd, &c, 1, page + 8);
    printf("file byte under replaced page: %c\n", c);
    printf("other mapping of that page unchanged: %c\n", second[8]);

    /* munmap: the file keeps what was stored; new anonymous memory there is private. */
    check(munmap(m, (size_t)page) == 0, "munmap shared page");
    pread(fd, buf, 1, 10);
    printf("file after munmap: %c\n", buf[0]);
    char *again = mmap(m, (size_t)page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    check(again == m, "anonymous mapping at the old address");
    again[10] = 'N';
    pread(fd, &c, 1, 10);
    printf("file unchanged by private memory at old address: %c\n", c);
    munmap(again, 2 * (size_t)page);

    /* mremap grows a shared mapping with more of the file. */
    char *g = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *g2 = mremap(g, (size_t)page, 3 * (size_t)page, MREMAP_MAYMOVE);
    check(g2 != MAP_FAILED, "mremap grow shared");
    printf("grown mapping: %c %c %c\n", g2[10], g2[2 * page], g2[page + 7]);
    g2[2 * page + 1] = 'G';
    pread(fd, &c, 1, 2 * page + 1);
    printf("store in grown part reaches file: %c\n", c);
    munmap(g2, 3 * (size_t)page);
    munmap(second, (size_t)page);

    /* A file opened read-only: shared read-only mapping, no way to make it writable. */
    int ro = open(path, O_RDONLY);
    char *r = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, ro, 0);
    check(r != MAP_FAILED, "shared mapping of read-only fd");
    errno = 0;
    int pr = mprotect(r, (size_t)page, PROT_READ | PROT_WRITE);
    printf("mprotect writable on read-only file: %d errno=%d (EACCES=%d)\n", pr, errno, EACCES);
    errno = 0;
    void *w = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
    printf("writable shared mmap of read-only fd fails: %d errno=%d\n", w == MAP_FAILED, errno);
    pwrite(fd, "R", 1, 0);
    printf("read-only mapping sees pwrite: %c\n", r[0]);
    munmap(r, (size_t)page);
    close(ro);

    /* Shared anonymous memory is shared with a forked child; private memory is not. */
    char *sa = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                    -1, 0);
    char *pa = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                    0);
    check(sa != MAP_FAILED && pa != MAP_FAILED, "anonymous mappings");
    in_child(child_writes, sa + page);
    in_child(child_writes, pa);
    printf("shared anonymous after child: %.10s\n", sa + page);
    printf("private anonymous after child: zero=%d\n", pa[0] == 0);
    munmap(sa, 2 * (size_t)page);
    munmap(pa, (size_t)page);

    /* /dev/zero MAP_SHARED is shared anonymous memory too. */
    int z = open("/dev/zero", O_RDWR);
    char *zm = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, z, 0);
    check(zm != MAP_FAILED, "mmap /dev/zero shared");
    in_child(child_writes, zm);
    printf("/dev/zero shared after child: %.10s\n", zm);
    munmap(zm, (size_t)page);
    close(z);

    close(fd);
    unlink(path);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
