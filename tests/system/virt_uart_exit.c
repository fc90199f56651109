/* A bare-metal program for the virt machine, as run by
 * `qemu-system-riscv32 -M virt -bios none -kernel PROG` and by
 * `rv32vm boot --bios none --kernel PROG`: it starts in M-mode at its entry
 * with a0 = hart id and a1 = the device tree, prints through the 16550 UART,
 * checks the device tree's magic, makes misaligned loads and stores (QEMU
 * performs them: no trap), and ends through the sifive,test0 syscon with
 * EXIT_CODE (0: pass, else a failure with that code). Freestanding. */
#include <stdint.h>

#ifndef EXIT_CODE
#define EXIT_CODE 0
#endif

#define UART 0x10000000UL
#define SYSCON 0x00100000UL

#include "../bare/include/c_start.h"

static void put(char c)
{
    volatile uint8_t *uart = (volatile uint8_t *)UART;
    while (!(uart[5] & 0x20)) /* LSR: THR empty */
        ;
    uart[0] = c;
}

static void puts_(const char *s)
{
    while (*s)
        put(*s++);
}

static void put_hex(uint32_t v)
{
    for (int shift = 28; shift >= 0; shift -= 4)
        put("0123456789abcdef"[(v >> shift) & 15]);
}

/* A word and a halfword stored and loaded at odd addresses, through pointers
 * the compiler cannot prove aligned (no trap handler is installed: a trap
 * would hang the program). */
static void misaligned(void)
{
    static uint8_t bytes[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    volatile uint8_t *volatile base = bytes;
    uint32_t word;
    uint16_t half;
    __asm__ volatile("lw %0, 1(%1)" : "=r"(word) : "r"(base) : "memory");
    __asm__ volatile("lhu %0, 3(%1)" : "=r"(half) : "r"(base) : "memory");
    __asm__ volatile("sw %0, 5(%1)" : : "r"(0xa1b2c3d4u), "r"(base) : "memory");
    __asm__ volatile("sh %0, 9(%1)" : : "r"(0xe5f6u), "r"(base) : "memory");
    puts_("misaligned: ");
    put_hex(word);
    put(' ');
    put_hex(half);
    put(' ');
    for (int i = 0; i < 12; i++)
        put_hex(base[i]), put(i == 11 ? '\n' : ',');
}

static void end(uint32_t code)
{
    volatile uint32_t *syscon = (volatile uint32_t *)SYSCON;
    *syscon = code ? (code << 16) | 0x3333 : 0x5555;
    for (;;)
        ;
}

void main_c(uint32_t hartid, const uint8_t *fdt)
{
    puts_("hello from M-mode on the virt machine\n");
    uint32_t misa;
    __asm__ volatile("csrr %0, misa" : "=r"(misa));
    puts_((misa >> 30) == 1 ? "misa: RV32\n" : "misa: not RV32\n");
    puts_(hartid == 0 ? "hart 0\n" : "another hart\n");
    /* The device tree's magic, big-endian 0xd00dfeed. */
    int fdt_ok = fdt && fdt[0] == 0xd0 && fdt[1] == 0x0d && fdt[2] == 0xfe && fdt[3] == 0xed;
    puts_(fdt_ok ? "device tree in a1\n" : "no device tree in a1\n");
    misaligned();
    end(EXIT_CODE);
}
