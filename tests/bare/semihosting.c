/* Semihosting calls (the RISC-V sequence `slli x0,x0,0x1f; ebreak;
 * srai x0,x0,7`), each checked; the output and exit status are compared with
 * `qemu-system-riscv32 -semihosting` by tests/bare.rs. The first argument on
 * the command line (SYS_GET_CMDLINE) names a host file to create, read back
 * and remove; the second is the exit status to end with. A failed check
 * exits with 100 + its number. Built freestanding: no C library. */
#include <stdint.h>

enum {
    SYS_OPEN = 0x01, SYS_CLOSE = 0x02, SYS_WRITEC = 0x03, SYS_WRITE0 = 0x04,
    SYS_WRITE = 0x05, SYS_READ = 0x06, SYS_ISERROR = 0x08, SYS_ISTTY = 0x09,
    SYS_SEEK = 0x0a, SYS_FLEN = 0x0c, SYS_REMOVE = 0x0e, SYS_CLOCK = 0x10,
    SYS_TIME = 0x11, SYS_ERRNO = 0x13, SYS_GET_CMDLINE = 0x15,
    SYS_HEAPINFO = 0x16, SYS_EXIT = 0x18, SYS_EXIT_EXTENDED = 0x20,
    SYS_ELAPSED = 0x30, SYS_TICKFREQ = 0x31,
};
#define APPLICATION_EXIT 0x20026

#include "include/c_start.h"

/* Aligned to 16 bytes so the three instructions never straddle a page in a
 * way that matters, and never compressed. */
__attribute__((noinline, aligned(16))) static long semihost(long op, void *arg)
{
    register long a0 __asm__("a0") = op;
    register void *a1 __asm__("a1") = arg;
    __asm__ volatile(".option push\n.option norvc\n"
                     "slli x0, x0, 0x1f\n"
                     "ebreak\n"
                     "srai x0, x0, 7\n"
                     ".option pop\n"
                     : "+r"(a0)
                     : "r"(a1)
                     : "memory");
    return a0;
}

static unsigned long len(const char *s)
{
    unsigned long n = 0;
    while (s[n])
        n++;
    return n;
}

static void exit_with(long code)
{
    long block[2] = {APPLICATION_EXIT, code};
    semihost(SYS_EXIT_EXTENDED, block);
}

static void check(int ok, int number)
{
    if (!ok)
        exit_with(100 + number);
}

static long write_to(long fd, const char *s)
{
    long block[3] = {fd, (long)s, (long)len(s)};
    return semihost(SYS_WRITE, block);
}

static long open_file(const char *name, long mode)
{
    long block[3] = {(long)name, mode, (long)len(name)};
    return semihost(SYS_OPEN, block);
}

static char cmdline[256];

void main_c(void)
{
    semihost(SYS_WRITE0, "write0 to the console\n");
    char c = 'C';
    semihost(SYS_WRITEC, &c);
    c = '\n';
    semihost(SYS_WRITEC, &c);

    long out = open_file(":tt", 4), err = open_file(":tt", 8);
    check(out > 0 && err > 0 && out != err, 1);
    check(write_to(out, "stdout through :tt\n") == 0, 2);
    check(write_to(err, "stderr through :tt\n") == 0, 3);

    /* The features file: "SHFB" and a feature byte. */
    long features = open_file(":semihosting-features", 0);
    check(features > 0, 4);
    unsigned char fb[8] = {0};
    long rblock[3] = {features, (long)fb, 8};
    check(semihost(SYS_READ, rblock) == 3, 5);
    check(fb[0] == 'S' && fb[1] == 'H' && fb[2] == 'F' && fb[3] == 'B', 6);
    check((fb[4] & 3) == 3, 7);
    long fblock[1] = {features};
    check(semihost(SYS_CLOSE, fblock) == 0, 8);
    check(semihost(SYS_CLOSE, fblock) == -1, 9);

    /* The command line: program, host file, exit status. */
    long cblock[2] = {(long)cmdline, sizeof cmdline};
    check(semihost(SYS_GET_CMDLINE, cblock) == 0, 10);
    check(cblock[1] == (long)len(cmdline), 11);
    const char *p = cmdline;
    while (*p && *p != ' ')
        p++;
    check(*p == ' ', 12);
    char *path = (char *)p + 1;
    char *q = path;
    while (*q && *q != ' ')
        q++;
    check(*q == ' ', 13);
    *q = 0;
    long status = 0;
    for (q++; *q >= '0' && *q <= '9'; q++)
        status = status * 10 + (*q - '0');
    write_to(out, "file: ");
    write_to(out, len(path) > 0 ? "named\n" : "missing\n");

    /* A host file: create, write, length, seek, read back, remove. */
    long fd = open_file(path, 6); /* "w+" */
    check(fd > 0, 14);
    check(write_to(fd, "0123456789") == 0, 15);
    long lblock[1] = {fd};
    check(semihost(SYS_FLEN, lblock) == 10, 16);
    check(semihost(SYS_ISTTY, lblock) == 0, 17);
    long sblock[2] = {fd, 4};
    check(semihost(SYS_SEEK, sblock) == 0, 18);
    char back[16] = {0};
    long bblock[3] = {fd, (long)back, 16};
    check(semihost(SYS_READ, bblock) == 10, 19); /* 6 read, 10 left */
    check(back[0] == '4' && back[5] == '9', 20);
    check(semihost(SYS_CLOSE, lblock) == 0, 21);
    long rm[2] = {(long)path, (long)len(path)};
    check(semihost(SYS_REMOVE, rm) == 0, 22);
    check(semihost(SYS_REMOVE, rm) != 0, 23);
    check(open_file(path, 0) == -1, 24);
    check(semihost(SYS_ERRNO, 0) == 2, 25); /* ENOENT */
    check(open_file(path, 12) == -1, 26);

    /* Errors, time and the heap. */
    long bad[1] = {-5};
    check(semihost(SYS_ISERROR, bad) == 1, 27);
    long nothing[3] = {99, (long)back, 4};
    check(semihost(SYS_WRITE, nothing) == 4, 28);
    check(semihost(SYS_TICKFREQ, 0) > 0, 29);
    uint32_t ticks[2] = {0, 0};
    check(semihost(SYS_ELAPSED, ticks) == 0, 30);
    check(semihost(SYS_TIME, 0) > 1600000000, 31);
    check(semihost(SYS_CLOCK, 0) >= 0, 32);
    uint32_t heap[4] = {0};
    void *hp = heap;
    check(semihost(SYS_HEAPINFO, &hp) == 0, 33);
    check(heap[0] != 0 && heap[0] < heap[1], 34);
    check(heap[0] >= (uint32_t)(uintptr_t)stack, 35);

    write_to(out, "done\n");
    if (status == 0) {
        semihost(SYS_EXIT, (void *)APPLICATION_EXIT);
        exit_with(99);
    }
    exit_with(status);
}
