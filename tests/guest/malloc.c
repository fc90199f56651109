/* malloc: brk/sbrk, and a malloc/realloc/free stress over many sizes with checksums. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "guest_util.h"

#define SLOTS 512

int main(void) {
    /* Raw brk syscall (musl's sbrk/brk wrappers refuse to move the break): grow, touch,
     * shrink, restore. Done before malloc so its own brk use starts from the restored break. */
    uintptr_t start = (uintptr_t)syscall(SYS_brk, 0);
    check(start != 0, "brk(0) returns the break");
    uintptr_t grown = (uintptr_t)syscall(SYS_brk, start + 100000);
    check(grown == start + 100000, "brk grows by 100000");
    memset((void *)start, 0x5a, 100000);
    uintptr_t shrunk = (uintptr_t)syscall(SYS_brk, start + 50000);
    check(shrunk == start + 50000, "brk shrinks");
    printf("byte in kept part: %02x\n", ((unsigned char *)start)[49999]);
    /* Growing again must give zeroed memory past the old (shrunk) break. */
    syscall(SYS_brk, start + 200000);
    printf("byte past shrink after regrow: %02x\n", ((unsigned char *)start)[60000]);
    uintptr_t back = (uintptr_t)syscall(SYS_brk, start);
    check(back == start, "brk back to start");
    uintptr_t below = (uintptr_t)syscall(SYS_brk, start - 4096 * 1024);
    check(below == start, "brk below the start is refused");
    check(sbrk(0) == (void *)start, "sbrk(0) agrees");

    uint32_t seed = 2463534242u;
    unsigned char *ptr[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    unsigned char tag[SLOTS] = {0};
    uint32_t h = FNV_INIT;
    long allocs = 0, reallocs = 0, frees = 0;
    for (int round = 0; round < 40000; round++) {
        uint32_t r = xorshift32(&seed);
        int slot = (int)(r % SLOTS);
        uint32_t kind = (r >> 9) % 10;
        if (ptr[slot] == NULL) {
            /* Sizes from 0 bytes to ~256 KiB, most of them small. */
            size_t sz = (r >> 12) % 16 == 0 ? (r >> 14) % (192 * 1024) : (r >> 14) % 512;
            ptr[slot] = malloc(sz);
            if (sz && !ptr[slot])
                die("malloc");
            size[slot] = sz;
            tag[slot] = (unsigned char)(r >> 24);
            memset(ptr[slot], tag[slot], sz);
            allocs++;
        } else if (kind < 3) {
            /* Verify, then realloc to a new size; the common prefix must survive. */
            size_t newsz = (r >> 13) % 4096;
            for (size_t i = 0; i < size[slot]; i++)
                if (ptr[slot][i] != tag[slot]) {
                    printf("corruption in slot %d at %zu\n", slot, i);
                    return 1;
                }
            unsigned char *np = realloc(ptr[slot], newsz);
            if (newsz && !np)
                die("realloc");
            if (newsz > size[slot])
                memset(np + size[slot], tag[slot], newsz - size[slot]);
            ptr[slot] = np;
            size[slot] = newsz;
            reallocs++;
            if (newsz == 0) {
                free(np);
                ptr[slot] = NULL;
            }
        } else {
            uint32_t sum = 0;
            for (size_t i = 0; i < size[slot]; i++)
                sum += ptr[slot][i];
            if (sum != (uint32_t)tag[slot] * size[slot]) {
                printf("bad sum in slot %d\n", slot);
                return 1;
            }
            h = fnv_word(h, sum);
            h = fnv_word(h, (uint32_t)size[slot]);
            free(ptr[slot]);
            ptr[slot] = NULL;
            frees++;
        }
    }
    for (int i = 0; i < SLOTS; i++)
        free(ptr[i]);
    printf("allocs=%ld reallocs=%ld frees=%ld hash=%08x\n", allocs, reallocs, frees, h);

    /* calloc is zeroed, even after reuse of dirty memory. */
    void *dirty = malloc(1000);
    memset(dirty, 0xff, 1000);
    free(dirty);
    unsigned char *z = calloc(250, 4);
    int zero = 1;
    for (int i = 0; i < 1000; i++)
        zero &= z[i] == 0;
    check(zero, "calloc zeroes");
    free(z);

    /* Alignment requests. */
    void *al = NULL;
    check(posix_memalign(&al, 4096, 12345) == 0 && ((uintptr_t)al & 4095) == 0, "posix_memalign 4096");
    free(al);
    void *al2 = aligned_alloc(64, 640);
    check(((uintptr_t)al2 & 63) == 0, "aligned_alloc 64");
    free(al2);
    check(((uintptr_t)malloc(3) & 7) == 0, "malloc alignment 8");

    /* Huge allocation fails cleanly. */
    /* volatile size and pointer: otherwise the compiler may elide the malloc/NULL check pair. */
    volatile size_t huge_size = (size_t)3 << 30;
    void *volatile huge = malloc(huge_size);
    check(huge == NULL, "3 GiB malloc fails");
    free(huge);

    /* Many 1 MiB blocks (mmap threshold), then freed. */
    void *blocks[40];
    for (int i = 0; i < 40; i++) {
        blocks[i] = malloc(1 << 20);
        check(blocks[i] != NULL || i > 30, "1 MiB block");
        if (blocks[i])
            ((char *)blocks[i])[(1 << 20) - 1] = (char)i;
    }
    int keep = 1;
    for (int i = 0; i < 40; i++)
        if (blocks[i])
            keep &= ((char *)blocks[i])[(1 << 20) - 1] == (char)i;
    check(keep, "1 MiB blocks keep data");
    for (int i = 0; i < 40; i++)
        free(blocks[i]);
    printf("failures=%d\n", guest_failures);
    return guest_failures ? 1 : 0;
}
