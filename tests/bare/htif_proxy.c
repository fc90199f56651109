/* HTIF as riscv-tests' benchmarks and Spike use it: the syscall proxy (an
 * argument block of 64-bit words whose address goes to `tohost`, the reply in
 * `fromhost`, polled in a loop as their syscalls.c does) and the console
 * device's write. Prints to stdout and stderr, checks each reply, and ends
 * through the proxy's exit with EXIT_CODE (default 0). A failed check exits
 * through `tohost` with test number 100 + its number. Built freestanding. */
#include <stdint.h>

#ifndef EXIT_CODE
#define EXIT_CODE 0
#endif

volatile uint64_t tohost __attribute__((section(".tohost"), aligned(64)));
volatile uint64_t fromhost __attribute__((section(".tohost"), aligned(64)));

#include "include/c_start.h"

static long syscall(long which, uint64_t arg0, uint64_t arg1, uint64_t arg2)
{
    volatile uint64_t magic_mem[8] __attribute__((aligned(64)));
    magic_mem[0] = which;
    magic_mem[1] = arg0;
    magic_mem[2] = arg1;
    magic_mem[3] = arg2;
    __sync_synchronize();
    tohost = (uintptr_t)magic_mem;
    while (fromhost == 0)
        ;
    fromhost = 0;
    __sync_synchronize();
    return (long)magic_mem[0];
}

static void fail(int number)
{
    tohost = ((uint64_t)(100 + number) << 1) | 1;
    for (;;)
        ;
}

static void check(int ok, int number)
{
    if (!ok)
        fail(number);
}

static unsigned long len(const char *s)
{
    unsigned long n = 0;
    while (s[n])
        n++;
    return n;
}

static long print(long fd, const char *s)
{
    return syscall(64, fd, (uintptr_t)s, len(s));
}

/* A console write (device 1, command 1): the reply is 0x100 | the byte. */
static void console_putchar(char c)
{
    uint64_t request = (1ULL << 56) | (1ULL << 48) | (unsigned char)c;
    tohost = request;
    while (fromhost == 0)
        ;
    uint64_t reply = fromhost;
    fromhost = 0;
    check(reply == ((request & ~0xffULL) | 0x100 | (unsigned char)c), 1);
    check(tohost == 0, 2);
}

void main_c(void)
{
    check(print(1, "hello through the syscall proxy\n") == 32, 3);
    check(tohost == 0, 4);
    check(print(2, "and its stderr\n") == 15, 5);
    check(print(7, "x") == -9, 6);         /* EBADF */
    check(syscall(1234, 0, 0, 0) == -38, 7); /* ENOSYS */
    const char *text = "console device\n";
    for (const char *p = text; *p; p++)
        console_putchar(*p);
    /* Many small writes, as printf through putchar makes them. */
    char digit[2] = {0, 0};
    for (int i = 0; i < 200; i++) {
        digit[0] = '0' + i % 10;
        check(print(1, digit) == 1, 8);
    }
    print(1, "\n");
    syscall(93, EXIT_CODE, 0, 0);
    fail(9);
}
