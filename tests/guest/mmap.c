/* mmap: anonymous mappings, munmap, mprotect, mremap, MAP_FIXED, and a file-backed private
 * mapping in the scratch directory argv[1]. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "guest_util.h"

static uint32_t sum_pages(const unsigned char *p, size_t len) {
    uint32_t h = FNV_INIT;
    for (size_t i = 0; i < len; i += 97)
        h = fnv_word(h, p[i]);
    return h;
}

int main(int argc, char **argv) {
    long page = sysconf(_SC_PAGESIZE);
    printf("page size %ld\n", page);

    /* Anonymous memory is zero-filled and writable. */
    size_t len = 64 * 1024;
    unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(a != MAP_FAILED, "mmap anon 64K");
    check(((uintptr_t)a & (uintptr_t)(page - 1)) == 0, "mapping is page aligned");
    int zero = 1;
    for (size_t i = 0; i < len; i++)
        zero &= a[i] == 0;
    check(zero, "anonymous memory is zero");
    for (size_t i = 0; i < len; i++)
        a[i] = (unsigned char)(i * 7 + 3);
    printf("anon checksum %08x\n", sum_pages(a, len));

    /* mprotect read-only then back to read-write. */
    check(mprotect(a, (size_t)page, PROT_READ) == 0, "mprotect read-only");
    printf("read after mprotect RO: %u\n", a[10]);
    check(mprotect(a, (size_t)page, PROT_READ | PROT_WRITE) == 0, "mprotect read-write");
    a[10] = 99;
    printf("write after mprotect RW: %u\n", a[10]);

    /* mremap grow (may move), contents preserved, new tail zero. */
    unsigned char *b = mremap(a, len, 4 * len, MREMAP_MAYMOVE);
    check(b != MAP_FAILED, "mremap grow");
    printf("after grow checksum of old part %08x\n", sum_pages(b, len));
    zero = 1;
    for (size_t i = len; i < 4 * len; i++)
        zero &= b[i] == 0;
    check(zero, "grown tail is zero");
    /* mremap shrink in place. */
    unsigned char *c = mremap(b, 4 * len, len / 2, 0);
    check(c == b, "mremap shrink stays in place");
    printf("after shrink checksum %08x\n", sum_pages(c, len / 2));
    check(munmap(c, len / 2) == 0, "munmap");

    /* munmap part of a mapping, then MAP_FIXED over the hole. */
    unsigned char *m = mmap(NULL, 4 * (size_t)page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 0xAB, 4 * (size_t)page);
    check(munmap(m + page, (size_t)page) == 0, "munmap middle page");
    unsigned char *f = mmap(m + page, (size_t)page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    check(f == m + page, "MAP_FIXED lands at the hole");
    printf("bytes around hole: %02x %02x %02x\n", m[page - 1], m[page], m[2 * page]);
    /* MAP_FIXED over existing data replaces it with zeros. */
    f = mmap(m + 2 * page, (size_t)page, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("MAP_FIXED replaced data: %02x, neighbour %02x\n", m[2 * page], m[3 * page]);
    munmap(m, 4 * (size_t)page);

    /* Bad arguments. */
    void *bad = mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap len 0: failed=%d errno=%d (EINVAL=%d)\n", bad == MAP_FAILED, errno, EINVAL);
    int um = munmap((void *)((uintptr_t)m + 1), (size_t)page);
    printf("munmap misaligned: %d errno=%d\n", um, errno);

    /* Many small mappings, each tagged, then verified and freed. */
    unsigned char *maps[100];
    for (int i = 0; i < 100; i++) {
        maps[i] = mmap(NULL, (size_t)(i % 5 + 1) * (size_t)page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        memset(maps[i], i, (size_t)(i % 5 + 1) * (size_t)page);
    }
    int good = 1;
    for (int i = 0; i < 100; i++) {
        size_t l = (size_t)(i % 5 + 1) * (size_t)page;
        good &= maps[i][0] == i && maps[i][l - 1] == i;
        munmap(maps[i], l);
    }
    check(good, "100 mappings keep their contents");

    /* A large mapping (64 MiB) touched sparsely. */
    size_t big_len = 64u << 20;
    unsigned char *big = mmap(NULL, big_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                              -1, 0);
    check(big != MAP_FAILED, "mmap 64 MiB");
    uint32_t h = FNV_INIT;
    for (size_t off = 0; off < big_len; off += 1u << 20) {
        big[off] = (unsigned char)(off >> 20);
        h = fnv_word(h, big[off] + big[off + 4095]);
    }
    printf("big sparse hash %08x\n", h);
    munmap(big, big_len);

    /* File-backed private mapping: changes are not written back. */
    if (argc >= 2) {
        char path[4096];
        snprintf(path, sizeof path, "%s/mapped.bin", argv[1]);
        int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
        check(fd >= 0, "create mapped.bin");
        char content[10000];
        for (size_t i = 0; i < sizeof content; i++)
            content[i] = (char)('a' + i % 26);
        write(fd, content, sizeof content);
        unsigned char *fm = mmap(NULL, sizeof content, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        check(fm != MAP_FAILED, "mmap file private");
        printf("file map bytes: %c%c%c ... %c\n", fm[0], fm[1], fm[2], fm[sizeof content - 1]);
        /* Bytes past EOF within the last page are zero. */
        printf("past EOF in last page: %u\n", fm[sizeof content + 5]);
        fm[0] = 'Z';
        char first;
        pread(fd, &first, 1, 0);
        printf("file unchanged by private write: %c, mapping sees %c\n", first, fm[0]);
        munmap(fm, sizeof content);
        /* Offset mapping: second page of the file. */
        unsigned char *fo = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fd, page);
        check(fo != MAP_FAILED, "mmap file at offset");
        printf("offset map first byte: %c (expected %c)\n", fo[0], (char)('a' + page % 26));
        munmap(fo, (size_t)page);
        /* Shared mapping: writes reach the file. */
        unsigned char *fs = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (fs != MAP_FAILED) {
            fs[1] = 'Y';
            msync(fs, (size_t)page, MS_SYNC);
            munmap(fs, (size_t)page);
            char second;
            pread(fd, &second, 1, 1);
            printf("shared write reached file: %c\n", second);
        } else {
            printf("shared mapping failed errno=%d\n", errno);
        }
        close(fd);
        unlink(path);
    }
    /* MAP_FIXED reaches down to vm.mmap_min_addr (the host's), not to a limit of rv32vm's. */
    unsigned long min_addr = 0;
    FILE *min_file = fopen("/proc/sys/vm/mmap_min_addr", "r");
    if (min_file) {
        if (fscanf(min_file, "%lu", &min_addr) != 1)
            min_addr = 0;
        fclose(min_file);
    }
    if (min_addr < 4096)
        min_addr = 4096;
    /* (With a host limit of 64 KiB or more there is nothing below the program to try.) */
    printf("vm.mmap_min_addr below 64 KiB: %d\n", min_addr < 0x10000);
    if (min_addr < 0x10000) {
        void *low = mmap((void *)min_addr, 4096, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        check(low == (void *)min_addr, "MAP_FIXED_NOREPLACE at vm.mmap_min_addr");
        if (low != MAP_FAILED)
            munmap(low, 4096);
    }
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
