/* segfault: bad loads and stores with no SIGSEGV handler kill the process with SIGSEGV. Each
 * case runs in a forked child: a hot loop over good memory (so that rv32vm compiles it, and
 * may compile it without memory checks) makes one bad access late; the parent reports how the
 * child ended. Then the program itself dies by a store through a null pointer. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ITERATIONS 200000
#define BAD_AT 150000

static int buffer[64];
static const int table[64] = {1, 2, 3};

/* Sum buffer[] in a loop; at iteration BAD_AT read from `bad` instead. */
static int __attribute__((noinline)) load_loop(volatile int *bad) {
    int sum = 0;
    for (int i = 0; i < ITERATIONS; i++) {
        volatile int *p = i == BAD_AT ? bad : (volatile int *)&buffer[i & 63];
        sum += *p;
    }
    return sum;
}

/* As load_loop, but the bad load's value is never used. */
static void __attribute__((noinline)) dead_load_loop(volatile int *bad) {
    for (int i = 0; i < ITERATIONS; i++) {
        (void)buffer[i & 63];
        if (i == BAD_AT)
            (void)*bad;
    }
}

/* Store into buffer[] in a loop; at iteration BAD_AT store to `bad` instead. */
static void __attribute__((noinline)) store_loop(volatile int *bad) {
    for (int i = 0; i < ITERATIONS; i++) {
        volatile int *p = i == BAD_AT ? bad : (volatile int *)&buffer[i & 63];
        *p = i;
    }
}

/* Word loads at 4-byte steps; at iteration BAD_AT at `bad` (maybe misaligned). */
static int __attribute__((noinline)) word_loop(const char *bad) {
    int sum = 0;
    for (int i = 0; i < ITERATIONS; i++) {
        const char *p = i == BAD_AT ? bad : (const char *)&buffer[i & 63];
        uint32_t w;
        __builtin_memcpy(&w, (const void *)p, 4);
        sum += (int)w;
    }
    return sum;
}

static void report(const char *name, void (*body)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        body();
        printf("%s: survived\n", name);
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        printf("%s: killed by signal %d\n", name, WTERMSIG(status));
    else
        printf("%s: exited %d\n", name, WEXITSTATUS(status));
}

static char *two_pages_then_hole(void) {
    char *p = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(p + 2 * 4096, 4096);
    return p;
}

static void null_load(void) { load_loop((volatile int *)0x10); }
static void dead_load(void) { dead_load_loop((volatile int *)0x20); }
static void rodata_store(void) { store_loop((volatile int *)&table[5]); }
static void top_load(void) { load_loop((volatile int *)0xfffffffc); }

static void unmapped_load(void) {
    char *p = two_pages_then_hole();
    load_loop((volatile int *)(p + 2 * 4096 + 8));
}

static void read_only_store(void) {
    char *p = two_pages_then_hole();
    mprotect(p + 4096, 4096, PROT_READ);
    store_loop((volatile int *)(p + 4096 + 64));
}

static void straddling_load(void) {
    char *p = two_pages_then_hole();
    word_loop(p + 2 * 4096 - 2);
}

static void good_misaligned_load(void) {
    char *p = two_pages_then_hole();
    p[4094] = 1;
    p[4097] = 2;
    printf("misaligned load across mapped pages: %d\n", word_loop(p + 4094) != 0);
}

int main(void) {
    printf("segfault cases\n");
    report("load from page 0", null_load);
    report("unused load from page 0", dead_load);
    report("store to const data", rodata_store);
    report("load at 0xfffffffc", top_load);
    report("load from an unmapped page", unmapped_load);
    report("store to a read-only page", read_only_store);
    report("word load straddling into an unmapped page", straddling_load);
    report("word load straddling two mapped pages", good_misaligned_load);
    printf("now a store through a null pointer\n");
    fflush(stdout);
    store_loop((volatile int *)0);
    printf("still alive\n");
    return 0;
}
