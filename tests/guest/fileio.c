/* fileio: file-system syscalls inside the scratch directory given as argv[1]. Prints only
 * deterministic facts (sizes, contents, modes, errno values), never inodes, times or paths. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "guest_util.h"

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_dir(const char *path) {
    DIR *d = opendir(path);
    if (!d)
        die("opendir");
    char *names[64];
    unsigned char types[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 64) {
        names[n] = strdup(e->d_name);
        types[n] = e->d_type;
        n++;
    }
    closedir(d);
    /* Sort names, carrying d_type along via a second lookup. */
    char *sorted[64];
    memcpy(sorted, names, sizeof(char *) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(char *), cmp_str);
    printf("listing %s (%d entries):\n", path, n);
    for (int i = 0; i < n; i++) {
        int t = 0;
        for (int j = 0; j < n; j++)
            if (names[j] == sorted[i])
                t = types[j];
        const char *kind = t == DT_DIR ? "dir" : t == DT_REG ? "file" : t == DT_LNK ? "link"
                                                               : t == DT_UNKNOWN ? "unknown" : "other";
        printf("  %s %s\n", sorted[i], kind);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
}

static void show_stat(const char *label, const struct stat *st) {
    printf("%s: size=%lld mode=%o reg=%d dir=%d lnk=%d nlink=%u\n", label, (long long)st->st_size,
           (unsigned)(st->st_mode & 07777), S_ISREG(st->st_mode), S_ISDIR(st->st_mode),
           S_ISLNK(st->st_mode), (unsigned)st->st_nlink);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fileio SCRATCH_DIR\n");
        return 2;
    }
    umask(022);
    char cwd[4096];
    char real[4096];
    check(realpath(argv[1], real) != NULL, "realpath(argv[1])");
    if (chdir(argv[1]) != 0)
        die("chdir");
    check(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    check(strcmp(cwd, real) == 0, "getcwd after chdir equals realpath(argv[1])");

    /* creat + write + close */
    int fd = creat("a.txt", 0644);
    check(fd >= 3, "creat returns fd >= 3");
    const char *msg = "Hello, file!\nSecond line.\n";
    ssize_t w = write(fd, msg, strlen(msg));
    printf("write returned %zd\n", w);
    check(fsync(fd) == 0, "fsync");
    check(fdatasync(fd) == 0, "fdatasync");
    check(close(fd) == 0, "close");
    check(close(fd) == -1 && errno == EBADF, "double close gives EBADF");

    /* open + read + lseek + pread */
    fd = open("a.txt", O_RDONLY);
    char buf[128];
    memset(buf, 0, sizeof buf);
    ssize_t r = read(fd, buf, 5);
    printf("read 5: %zd \"%.*s\"\n", r, (int)r, buf);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    printf("lseek CUR = %lld\n", (long long)pos);
    pos = lseek(fd, -6, SEEK_END);
    printf("lseek END-6 = %lld\n", (long long)pos);
    r = read(fd, buf, sizeof buf);
    printf("read rest: %zd \"%.*s\"\n", r, (int)r - 1, buf);
    r = read(fd, buf, sizeof buf);
    printf("read at EOF: %zd\n", r);
    r = pread(fd, buf, 4, 7);
    printf("pread(4 @7): %zd \"%.*s\"\n", r, (int)r, buf);
    printf("offset after pread unchanged: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    check(write(fd, "x", 1) == -1 && errno == EBADF, "write to O_RDONLY gives EBADF");
    int flags = fcntl(fd, F_GETFL);
    printf("F_GETFL accmode = %d\n", flags & O_ACCMODE);
    close(fd);

    /* stat / fstat / lstat */
    struct stat st;
    check(stat("a.txt", &st) == 0, "stat a.txt");
    show_stat("stat a.txt", &st);
    fd = open("a.txt", O_RDWR);
    check(fstat(fd, &st) == 0, "fstat");
    show_stat("fstat a.txt", &st);

    /* ftruncate shrink and grow (grown region reads as zeros) */
    check(ftruncate(fd, 5) == 0, "ftruncate 5");
    fstat(fd, &st);
    printf("size after ftruncate(5): %lld\n", (long long)st.st_size);
    check(ftruncate(fd, 12) == 0, "ftruncate 12");
    memset(buf, 0x55, sizeof buf);
    r = pread(fd, buf, sizeof buf, 0);
    printf("pread after grow: %zd bytes:", r);
    for (int i = 0; i < r; i++)
        printf(" %02x", (unsigned char)buf[i]);
    printf("\n");

    /* pwrite, lseek past end (hole), O_APPEND */
    r = pwrite(fd, "WORLD", 5, 20);
    printf("pwrite @20: %zd\n", r);
    fstat(fd, &st);
    printf("size after pwrite: %lld\n", (long long)st.st_size);
    close(fd);
    fd = open("a.txt", O_WRONLY | O_APPEND);
    write(fd, "++", 2);
    close(fd);
    stat("a.txt", &st);
    printf("size after append: %lld\n", (long long)st.st_size);

    /* readv / writev */
    fd = open("v.bin", O_CREAT | O_RDWR | O_TRUNC, 0600);
    struct iovec iov[3] = {{"abc", 3}, {"", 0}, {"defgh", 5}};
    printf("writev: %zd\n", writev(fd, iov, 3));
    lseek(fd, 0, SEEK_SET);
    char p1[2], p2[10];
    struct iovec riov[2] = {{p1, 2}, {p2, 10}};
    r = readv(fd, riov, 2);
    printf("readv: %zd \"%.2s\" \"%.*s\"\n", r, p1, (int)r - 2, p2);
    fstat(fd, &st);
    show_stat("v.bin", &st);
    close(fd);

    /* O_EXCL and ENOENT */
    fd = open("a.txt", O_CREAT | O_EXCL | O_WRONLY, 0644);
    printf("O_EXCL on existing: fd=%d errno=%d (EEXIST=%d)\n", fd, errno, EEXIST);
    fd = open("missing.txt", O_RDONLY);
    printf("open missing: fd=%d errno=%d (ENOENT=%d)\n", fd, errno, ENOENT);

    /* access */
    chmod("v.bin", 0400);
    printf("access a.txt F_OK=%d R_OK=%d\n", access("a.txt", F_OK), access("a.txt", R_OK));
    int acc = access("missing", F_OK);
    printf("access missing F_OK=%d errno=%d\n", acc, errno);
    stat("v.bin", &st);
    show_stat("v.bin after chmod 0400", &st);
    chmod("v.bin", 0755);
    printf("access v.bin X_OK after chmod 0755=%d\n", access("v.bin", X_OK));

    /* mkdir / nested files / rename / link / symlink / readlink */
    check(mkdir("sub", 0755) == 0, "mkdir sub");
    check(mkdir("sub", 0755) == -1 && errno == EEXIST, "mkdir existing gives EEXIST");
    check(mkdir("sub/deeper", 0700) == 0, "mkdir sub/deeper");
    fd = open("sub/inner.txt", O_CREAT | O_WRONLY, 0644);
    write(fd, "inner\n", 6);
    close(fd);
    check(rename("sub/inner.txt", "sub/renamed.txt") == 0, "rename");
    check(access("sub/inner.txt", F_OK) == -1, "old name gone");
    check(link("a.txt", "hard.txt") == 0, "link");
    stat("a.txt", &st);
    printf("nlink after link: %u\n", (unsigned)st.st_nlink);
    check(symlink("a.txt", "sym") == 0, "symlink");
    char target[64];
    ssize_t tl = readlink("sym", target, sizeof target - 1);
    if (tl >= 0)
        target[tl] = 0;
    printf("readlink sym: %zd \"%s\"\n", tl, tl >= 0 ? target : "");
    check(lstat("sym", &st) == 0 && S_ISLNK(st.st_mode), "lstat sees a link");
    check(stat("sym", &st) == 0 && S_ISREG(st.st_mode), "stat follows the link");
    tl = readlink("a.txt", target, 10);
    printf("readlink on regular file: %zd errno=%d (EINVAL=%d)\n", tl, errno, EINVAL);

    /* *at variants relative to a directory fd */
    int dfd = open("sub", O_RDONLY | O_DIRECTORY);
    check(dfd >= 0, "open directory");
    fd = openat(dfd, "at.txt", O_CREAT | O_WRONLY, 0600);
    write(fd, "via openat\n", 11);
    close(fd);
    check(fstatat(dfd, "at.txt", &st, 0) == 0, "fstatat");
    show_stat("sub/at.txt", &st);
    check(unlinkat(dfd, "at.txt", 0) == 0, "unlinkat");
    check(mkdirat(dfd, "made_at", 0755) == 0, "mkdirat");
    check(unlinkat(dfd, "made_at", AT_REMOVEDIR) == 0, "unlinkat AT_REMOVEDIR");
    close(dfd);

    list_dir(".");
    list_dir("sub");

    /* rmdir non-empty fails, then clean up */
    check(rmdir("sub") == -1 && errno == ENOTEMPTY, "rmdir non-empty gives ENOTEMPTY");
    check(unlink("sub/renamed.txt") == 0, "unlink sub/renamed.txt");
    check(rmdir("sub/deeper") == 0, "rmdir sub/deeper");
    check(rmdir("sub") == 0, "rmdir sub");
    check(unlink("sym") == 0, "unlink symlink");
    check(unlink("hard.txt") == 0, "unlink hard link");
    check(unlink("missing") == -1 && errno == ENOENT, "unlink missing gives ENOENT");

    /* truncate by path, then read the whole file through stdio (zeros shown as '.') */
    check(truncate("a.txt", 26) == 0, "truncate path");
    FILE *fp = fopen("a.txt", "r");
    char content[64];
    size_t got = fread(content, 1, sizeof content, fp);
    fclose(fp);
    printf("a.txt after truncate: %zu bytes \"", got);
    for (size_t i = 0; i < got; i++)
        putchar(content[i] ? content[i] : '.');
    printf("\"\n");

    /* a bigger file written in chunks, read back with a checksum */
    fd = open("big.bin", O_CREAT | O_RDWR | O_TRUNC, 0644);
    uint32_t seed = 12345, h_out = FNV_INIT;
    for (int chunk = 0; chunk < 64; chunk++) {
        uint32_t words[1024];
        for (int i = 0; i < 1024; i++)
            words[i] = xorshift32(&seed);
        h_out = fnv_bytes(h_out, words, sizeof words);
        write(fd, words, sizeof words);
    }
    lseek(fd, 0, SEEK_SET);
    uint32_t h_in = FNV_INIT;
    char rbuf[3000];
    size_t total = 0;
    while ((r = read(fd, rbuf, sizeof rbuf)) > 0) {
        h_in = fnv_bytes(h_in, rbuf, (size_t)r);
        total += (size_t)r;
    }
    printf("big.bin total=%zu hash_out=%08x match=%d\n", total, h_out, h_in == h_out);
    close(fd);
    unlink("big.bin");

    struct statvfs vfs;
    check(statvfs(".", &vfs) == 0, "statvfs");

    list_dir(".");
    unlink("a.txt");
    unlink("v.bin");
    list_dir(".");
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
