/* counters.S - writes to minstret/minstreth and mcycle/mcycleh.
 *
 * A CSR instruction that writes a counter replaces that instruction's own
 * increment of the counter (priv spec, "Machine Counter/Timers"): the
 * next instruction reads exactly the value written, whichever half was
 * written, and the other half keeps its value from before the writing
 * instruction (no carry from the suppressed increment). The 64-bit
 * counter wraps from all ones to zero. Every counter instruction ends its
 * block in every tier, so the instructions around them also check that
 * bulk retirement per block stays exact.
 *
 * rv32vm's mcycle advances once per retired instruction (it is not a
 * clock), which cases 13-14 rely on; QEMU's counters follow the host
 * clock, so there is no QEMU build of this program.
 */
#include "bare.h"

    .option norvc
    .option norelax
    .section .text.init, "ax", @progbits
    .globl _start
_start:
    li TESTNUM, 0
    lla t0, m_trap
    csrw mtvec, t0

    li TESTNUM, 1               /* 1: minstret reads what was written */
    li t0, 100
    csrw minstret, t0
    csrr a0, minstret
    CHECK_EQ(a0, 100)

    li TESTNUM, 2               /* 2: ... plus the instructions after it */
    li t0, 200
    addi a1, zero, 1
    addi a1, a1, 1
    csrw minstret, t0
    addi a1, a1, 1
    addi a1, a1, 1
    addi a1, a1, 1
    csrr a0, minstret
    CHECK_EQ(a0, 203)

    li TESTNUM, 3               /* 3: a minstreth write suppresses the increment */
    li t0, -1
    li t1, 3
    csrw minstret, t0           /* counter = H:ffffffff */
    csrw minstreth, t1          /* 3:ffffffff, no carry into the low half */
    csrr a0, minstret           /* reads ffffffff, then 4:00000000 */
    csrr a1, minstreth
    CHECK_EQ(a0, -1)
    CHECK_EQ(a1, 4)

    li TESTNUM, 4               /* 4: a minstret write keeps the old high half */
    li t0, -1
    li t1, 7
    li t2, 5
    csrw minstreth, t1          /* 7:L */
    csrw minstret, t0           /* 7:ffffffff */
    csrw minstret, t2           /* 7:00000005, not 8:00000005 */
    csrr a1, minstreth
    csrr a0, minstret
    CHECK_EQ(a1, 7)
    CHECK_EQ(a0, 6)

    li TESTNUM, 5               /* 5: the 64-bit counter wraps to zero */
    li t0, -1
    csrw minstreth, t0
    csrw minstret, t0           /* ffffffff:ffffffff */
    csrr a0, minstret           /* reads ffffffff, then 0:0 */
    csrr a1, minstreth          /* reads 0, then 0:1 */
    csrr a2, minstret
    CHECK_EQ(a0, -1)
    CHECK_EQ(a1, 0)
    CHECK_EQ(a2, 1)

    li TESTNUM, 6               /* 6: mcycle reads what was written */
    li t0, 300
    csrw mcycle, t0
    addi a1, zero, 1
    csrr a0, mcycle
    CHECK_EQ(a0, 301)

    li TESTNUM, 7               /* 7: an mcycleh write suppresses the increment */
    li t0, -1
    li t1, 9
    csrw mcycle, t0
    csrw mcycleh, t1
    csrr a0, mcycle
    csrr a1, mcycleh
    CHECK_EQ(a0, -1)
    CHECK_EQ(a1, 10)

    li TESTNUM, 8               /* 8: an mcycle write keeps the old high half */
    li t0, -1
    li t1, 7
    li t2, 5
    csrw mcycleh, t1
    csrw mcycle, t0
    csrw mcycle, t2
    csrr a1, mcycleh
    csrr a0, mcycle
    CHECK_EQ(a1, 7)
    CHECK_EQ(a0, 6)

    li TESTNUM, 9               /* 9: mcycle wraps to zero */
    li t0, -1
    csrw mcycleh, t0
    csrw mcycle, t0
    csrr a0, mcycle
    csrr a1, mcycleh
    csrr a2, mcycle
    CHECK_EQ(a0, -1)
    CHECK_EQ(a1, 0)
    CHECK_EQ(a2, 1)

    li TESTNUM, 10              /* 10: instret/instreth shadow minstret */
    li t0, 50
    li t1, 2
    csrw minstret, t0
    csrw minstreth, t1
    rdinstret a0
    rdinstreth a1
    CHECK_EQ(a0, 50)
    CHECK_EQ(a1, 2)

    li TESTNUM, 11              /* 11: csrrw returns the old value */
    li t0, 10
    li t1, 20
    csrw minstret, t0
    csrrw a0, minstret, t1
    csrr a1, minstret
    CHECK_EQ(a0, 10)
    CHECK_EQ(a1, 20)

    li TESTNUM, 12              /* 12: csrrsi writes old | 1; csrrs x0 does not write */
    li t0, 0x10
    csrw minstret, t0
    csrrsi a0, minstret, 1
    csrrs a1, minstret, zero
    csrr a2, minstret
    CHECK_EQ(a0, 0x10)
    CHECK_EQ(a1, 0x11)
    CHECK_EQ(a2, 0x12)

    li TESTNUM, 13              /* 13: minstret and mcycle are written apart */
    csrw minstret, zero
    li t0, 1000
    csrw mcycle, t0
    csrr a0, minstret
    csrr a1, mcycle
    CHECK_EQ(a0, 2)
    CHECK_EQ(a1, 1001)

    li TESTNUM, 14              /* 14: counting goes on across a trap */
    csrw minstret, zero
    csrw mcycle, zero
    ecall                       /* does not retire; the handler retires 7 */
    csrr a0, minstret
    csrr a1, mcycle
    CHECK_EQ(a0, 8)
    CHECK_EQ(a1, 8)

    li a0, 0
    j report

/* An ecall from M: skip it (seven instructions retire). Anything else
 * fails with 100 + mcause. */
    .balign 4
m_trap:
    csrr t5, mcause
    li t6, CAUSE_ECALL_M
    bne t5, t6, 1f
    csrr t5, mepc
    addi t5, t5, 4
    csrw mepc, t5
    mret
1:  addi a0, t5, 100
    j report

BARE_REPORT_CODE
