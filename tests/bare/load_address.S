/* A program whose initialised data lives at a load address (LMA) other than
 * its run address (VMA), linked with tests/bare/lma.ld: start-up copies
 * __data_lma.. to __data_start..__data_end, then checks the words. Loaded at
 * the virtual addresses instead of the physical ones, the copy would bring
 * zeros. Case 1: the first word, case 2: the last. */
#include "bare.h"

    .section .text.init, "ax", @progbits
    .globl _start
_start:
    la t0, __data_lma
    la t1, __data_start
    la t2, __data_end
1:  bgeu t1, t2, 2f
    lw t3, 0(t0)
    sw t3, 0(t1)
    addi t0, t0, 4
    addi t1, t1, 4
    j 1b
2:  li TESTNUM, 1
    la t0, first
    lw t1, 0(t0)
    li t2, 0x12345678
    bne t1, t2, fail
    li TESTNUM, 2
    la t0, last
    lw t1, 0(t0)
    li t2, 0x0badcafe
    bne t1, t2, fail
    li a0, 0
    j report

BARE_REPORT_CODE

    .data
first: .word 0x12345678
    .space 64
last: .word 0x0badcafe
