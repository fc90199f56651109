/* procfs: /proc/self/maps, cmdline and exe (and /proc/<pid>/...) describe the guest program,
 * not the emulator. Addresses differ between emulators, so the program prints what must hold:
 * the line holding main() is r-xp and names the program file, the stack line is [stack], a
 * shared file mapping shows 's', its offset and path, mprotect splits a mapping, munmap removes
 * it. argv[1] is a scratch directory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "guest_util.h"

struct maps_line {
    unsigned long start, end, offset;
    char perms[5];
    char path[PATH_MAX];
    int found;
};

static char maps_path[64];

/* Finds the /proc/self/maps line holding `addr`. */
static struct maps_line find_line(const void *addr) {
    struct maps_line line;
    memset(&line, 0, sizeof line);
    FILE *f = fopen(maps_path, "r");
    if (!f)
        die("fopen maps");
    char buf[PATH_MAX + 128];
    while (fgets(buf, sizeof buf, f)) {
        unsigned long start, end, offset, inode;
        unsigned major, minor;
        char perms[5];
        int name_at = 0;
        if (sscanf(buf, "%lx-%lx %4s %lx %x:%x %lu %n", &start, &end, perms, &offset, &major,
                   &minor, &inode, &name_at) < 7) {
            printf("malformed maps line: %s", buf);
            continue;
        }
        if ((uintptr_t)addr >= start && (uintptr_t)addr < end) {
            line.start = start;
            line.end = end;
            line.offset = offset;
            memcpy(line.perms, perms, 5);
            char *name = buf + name_at;
            name[strcspn(name, "\n")] = 0;
            snprintf(line.path, sizeof line.path, "%s", name);
            line.found = 1;
        }
    }
    fclose(f);
    return line;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int initialized_data = 42;

/* /proc/self/fd and /dev/fd go through the guest's own fd numbers: links name what the guest
 * opened, opening one reaches the same file, the directory lists open fds (its own too), and
 * a closed fd or a non-canonical number ("03") is not there. */
static void check_fd_paths(const char *scratch) {
    char file[PATH_MAX], real[PATH_MAX], link[PATH_MAX], path[64];
    snprintf(file, sizeof file, "%s/fd-target", scratch);
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    check(fd >= 0 && realpath(file, real), "open the fd target");
    const char *dirs[] = {"/proc/self/fd", "/dev/fd"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%d", dirs[i], fd);
        ssize_t n = readlink(path, link, sizeof link - 1);
        link[n > 0 ? n : 0] = 0;
        printf("readlink %s/N is the file: %d\n", dirs[i], n > 0 && strcmp(link, real) == 0);
    }
    int p[2];
    check(pipe(p) == 0, "pipe");
    snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
    int w = open(path, O_WRONLY);
    char got[3] = {0};
    check(w >= 0 && write(w, "hi", 2) == 2 && read(p[0], got, 2) == 2, "write through /proc/self/fd");
    printf("pipe through /proc/self/fd: %s\n", got);
    DIR *d = opendir("/proc/self/fd");
    int saw_fd = 0, saw_dir = 0, listed_closed = 0, dots = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.') {
            dots += de->d_type == DT_DIR;
            continue;
        }
        int n = atoi(de->d_name);
        saw_fd |= n == fd;
        saw_dir |= n == dirfd(d);
        listed_closed += de->d_type != DT_LNK || fcntl(n, F_GETFD) < 0;
    }
    printf("listing: . and .. %d, the file %d, its own fd %d, closed fds listed %d\n", dots, saw_fd,
           saw_dir, listed_closed);
    if (d)
        closedir(d);
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/fd/0%d", fd);
    errno = 0;
    printf("leading zero: %d errno %d\n", lstat(path, &st), errno);
    close(w);
    snprintf(path, sizeof path, "/proc/self/fd/%d", w);
    errno = 0;
    printf("closed fd: %d errno %d\n", lstat(path, &st), errno);
    close(p[0]);
    close(p[1]);
    close(fd);
}

/* /proc/self/stat's startstack (field 28) is the initial sp, where argc is, and
 * /proc/self/auxv holds the vector getauxval reads (rv32 words), not rv32vm's. */
static void check_stat_and_auxv(char **argv) {
    char line[2048] = {0};
    FILE *f = fopen("/proc/self/stat", "r");
    check(f && fgets(line, sizeof line, f), "read /proc/self/stat");
    if (f)
        fclose(f);
    char *p = strrchr(line, ')');
    unsigned long long field[64] = {0};
    int n = 3;
    for (char *tok = p ? strtok(p + 1, " \n") : NULL; tok && n < 64; tok = strtok(NULL, " \n"))
        field[n++] = strtoull(tok, NULL, 10);
    printf("stat startstack is &argc: %d\n", field[28] == (uintptr_t)&argv[-1]);
    f = fopen("/proc/self/auxv", "r");
    uint32_t pair[2];
    int pagesz = 0, entry = 0, terminated = 0;
    while (f && fread(pair, sizeof pair, 1, f) == 1) {
        pagesz |= pair[0] == AT_PAGESZ && pair[1] == getauxval(AT_PAGESZ);
        entry |= pair[0] == AT_ENTRY && pair[1] == getauxval(AT_ENTRY);
        if (pair[0] == AT_NULL) {
            terminated = 1;
            break;
        }
    }
    if (f)
        fclose(f);
    printf("auxv: AT_PAGESZ %d, AT_ENTRY %d, AT_NULL %d\n", pagesz, entry, terminated);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        printf("usage: procfs SCRATCH [ARGS...]\n");
        return 2;
    }
    long page = sysconf(_SC_PAGESIZE);
    char exe[PATH_MAX];
    if (!realpath(argv[0], exe))
        die("realpath");

    for (int round = 0; round < 2; round++) {
        /* The same answers through /proc/self and /proc/<pid>. */
        if (round == 0)
            snprintf(maps_path, sizeof maps_path, "/proc/self/maps");
        else
            snprintf(maps_path, sizeof maps_path, "/proc/%d/maps", (int)getpid());
        printf("-- %s\n", round == 0 ? "/proc/self" : "/proc/<pid>");

        struct maps_line text = find_line((const void *)(uintptr_t)main);
        printf("main: found=%d perms=%s names program=%d\n", text.found, text.perms,
               strcmp(text.path, exe) == 0);
        struct maps_line data = find_line(&initialized_data);
        printf("data: found=%d perms=%s names program=%d\n", data.found, data.perms,
               strcmp(data.path, exe) == 0);
        int on_stack = 0;
        struct maps_line stack = find_line(&on_stack);
        printf("stack: found=%d perms=%s name=%s\n", stack.found, stack.perms, stack.path);
    }

    /* mprotect splits a mapping; munmap removes it. */
    char *a = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    check(mprotect(a + page, (size_t)page, PROT_READ) == 0, "mprotect middle page");
    struct maps_line mid = find_line(a + page);
    printf("middle page: perms=%s exactly one page=%d anonymous=%d\n", mid.perms,
           mid.start == (uintptr_t)(a + page) && mid.end == (uintptr_t)(a + 2 * page),
           mid.path[0] == 0);
    struct maps_line first = find_line(a);
    printf("first page: perms=%s ends at middle=%d\n", first.perms,
           first.end == (uintptr_t)(a + page));
    check(mprotect(a + page, (size_t)page, PROT_NONE) == 0, "mprotect none");
    printf("PROT_NONE page: perms=%s\n", find_line(a + page).perms);
    munmap(a, 3 * (size_t)page);
    printf("after munmap: found=%d\n", find_line(a + page).found);

    /* A shared mapping of a file at an offset, and shared anonymous memory. */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/mapped.bin", argv[1]);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    ftruncate(fd, 4 * page);
    char *s = mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, fd, 2 * page);
    struct maps_line sl = find_line(s + page);
    printf("shared file: perms=%s offset=%lx names file=%d\n", sl.perms,
           sl.offset + ((uintptr_t)s - sl.start), ends_with(sl.path, "/mapped.bin"));
    char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, page);
    struct maps_line pl = find_line(p);
    printf("private file: perms=%s offset=%lx names file=%d\n", pl.perms,
           pl.offset + ((uintptr_t)p - pl.start), ends_with(pl.path, "/mapped.bin"));
    char *z = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    printf("shared anonymous: perms=%s\n", find_line(z).perms);
    munmap(s, 2 * (size_t)page);
    munmap(p, (size_t)page);
    munmap(z, (size_t)page);
    close(fd);
    unlink(path);

    /* cmdline: the guest's argv, NUL-separated. */
    char want[4096];
    size_t want_len = 0;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]) + 1;
        memcpy(want + want_len, argv[i], l);
        want_len += l;
    }
    char paths[2][64];
    snprintf(paths[0], sizeof paths[0], "/proc/self/cmdline");
    snprintf(paths[1], sizeof paths[1], "/proc/%d/cmdline", (int)getpid());
    for (int i = 0; i < 2; i++) {
        char got[4096];
        int cfd = open(paths[i], O_RDONLY);
        ssize_t n = cfd >= 0 ? read(cfd, got, sizeof got) : -1;
        close(cfd);
        printf("%s: matches argv=%d (%zd bytes)\n", i ? "/proc/<pid>/cmdline" : "/proc/self/cmdline",
               n == (ssize_t)want_len && memcmp(got, want, want_len) == 0, n);
    }

    /* exe: readlink gives the program; open reaches the program file. (stat of it does too here,
     * but qemu-riscv32 shows its own binary there, so it is not compared.) */
    char exepath[2][64];
    snprintf(exepath[0], sizeof exepath[0], "/proc/self/exe");
    snprintf(exepath[1], sizeof exepath[1], "/proc/%d/exe", (int)getpid());
    for (int i = 0; i < 2; i++) {
        char link[PATH_MAX];
        ssize_t n = readlink(exepath[i], link, sizeof link - 1);
        link[n > 0 ? n : 0] = 0;
        int efd = open(exepath[i], O_RDONLY);
        char magic[4] = {0};
        read(efd, magic, 4);
        close(efd);
        printf("%s: readlink is program=%d ELF magic=%d\n",
               i ? "/proc/<pid>/exe" : "/proc/self/exe", strcmp(link, exe) == 0,
               memcmp(magic, "\177ELF", 4) == 0);
    }
    check_fd_paths(argv[1]);
    check_stat_and_auxv(argv);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
