/* c_start.h - the start-up of the freestanding C test programs in
 * tests/bare/ (included once, by the program's own file): a 16 KiB stack and
 * `_start`, first in `.text.init`, which calls `main_c(a0, a1)` with the
 * registers the loader left (hart id and device tree on the virt machine) and
 * spins if it returns. */
#ifndef RV32VM_C_START_H
#define RV32VM_C_START_H

static char stack[16384] __attribute__((used, aligned(16)));

__asm__(".section .text.init, \"ax\", @progbits\n"
        ".globl _start\n"
        "_start:\n"
        "  lla sp, stack + 16384\n"
        "  call main_c\n"
        "1: j 1b\n"
        ".text\n");

#endif
