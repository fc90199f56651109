/* vm_mprv.S - M-mode loads and stores with mstatus.MPRV under
 * `run --bare`: with MPP = S or U they translate through the Sv32 page
 * tables with that privilege's permissions (U, SUM, MXR), the hardware
 * sets A and D in the PTEs they use, and their page faults are taken in M
 * (even with page faults delegated to S), with mtval = the virtual address.
 * Instruction fetches stay physical throughout.
 *
 * Case 11 checks that a trap into M, which changes the effective privilege
 * of MPRV accesses (MPP becomes M), drops translations made for the old
 * one: the handler reads a physical address that MPRV mapped elsewhere a
 * moment before.
 *
 * An unexpected trap fails with 100 + mcause.
 */
#include "bare.h"

#define VA_S_RW   0x40000000    /* -> data_a, RW, A = D = 0 */
#define VA_U_RW   0x40001000    /* -> data_b, RW, U, A = D = 0 */
#define VA_S_RO   0x40002000    /* -> data_c, R, A */
#define VA_NONE   0x40003000    /* invalid */
#define VA_S_AMO  0x40004000    /* -> data_d, RW, A = D = 0 */
#define VA_S_XO   0x40005000    /* -> data_c, X only, A */
/* A megapage at VA RAM_BASE + 4 MiB -> PA RAM_BASE: VA data_a + 4 MiB
 * reaches data_a, while the same number as a physical address is other
 * RAM (holding MARKER). */
#define ALIAS_OFFSET 0x00400000
#define MARKER       0x77777777

/* m_rec fields. */
#define R_SAVE    0
#define R_RESUME  4
#define R_CAUSE   8
#define R_EPC     12
#define R_TVAL    16
#define R_STATUS  20
#define R_PROBE   24            /* address the handler loads (if != 0) */
#define R_PROBED  28            /* what it loaded */

/* Loads and stores from here on run as privilege `mpp` (clobbers t0). */
#define MPRV_AS(mpp)                                                     \
    li t0, MSTATUS_MPP;                                                  \
    csrc mstatus, t0;                                                    \
    li t0, mpp;                                                          \
    csrs mstatus, t0;                                                    \
    li t0, MSTATUS_MPRV;                                                 \
    csrs mstatus, t0

#define MPRV_OFF                                                         \
    li t0, MSTATUS_MPRV;                                                 \
    csrc mstatus, t0

/* The next trap resumes at `label`. Must run with MPRV off. */
#define M_EXPECT(label)                                                  \
    lla t5, label;                                                       \
    lla t6, m_rec;                                                       \
    sw t5, R_RESUME(t6)

#define CHECK_REC(field, expected)                                       \
    lla t3, m_rec;                                                       \
    lw t3, field(t3);                                                    \
    CHECK_EQ(t3, expected)

/* The PTE of 4 KiB page `va` in l0_a, masked with A | D, is `expected`. */
#define CHECK_AD(va, expected)                                           \
    lla t3, l0_a;                                                        \
    lw t3, 4 * (((va) >> 12) & 0x3ff)(t3);                               \
    CHECK_MASKED(t3, PTE_A | PTE_D, expected)

#define MAP4K(va, sym, flags)                                            \
    lla t1, sym;                                                         \
    MAKE_PTE(t0, t1, flags);                                             \
    sw t0, 4 * (((va) >> 12) & 0x3ff)(s1)

    .option norvc
    .option norelax
    .section .text.init, "ax", @progbits
    .globl _start
_start:
    li TESTNUM, 0
    lla t0, m_trap
    csrw mtvec, t0
    lla t0, m_rec
    csrw mscratch, t0
    OPEN_PMP
    /* Page faults are delegated: MPRV faults from M must stay in M. */
    li t0, (1 << CAUSE_FETCH_PAGE) | (1 << CAUSE_LOAD_PAGE) | (1 << CAUSE_STORE_PAGE)
    csrw medeleg, t0
    lla s0, root_pt
    lla s1, l0_a
    MAKE_PTE(t0, s1, PTE_V)
    sw t0, 4 * (VA_S_RW >> 22)(s0)
    li t0, (RAM_BASE >> 12) << 10 | PTE_V | PTE_R | PTE_W | PTE_A | PTE_D
    li t1, 4 * ((RAM_BASE + ALIAS_OFFSET) >> 22)
    add t1, s0, t1
    sw t0, 0(t1)
    MAP4K(VA_S_RW, data_a, PTE_V | PTE_R | PTE_W)
    MAP4K(VA_U_RW, data_b, PTE_V | PTE_R | PTE_W | PTE_U)
    MAP4K(VA_S_RO, data_c, PTE_V | PTE_R | PTE_A)
    MAP4K(VA_S_AMO, data_d, PTE_V | PTE_R | PTE_W)
    MAP4K(VA_S_XO, data_c, PTE_V | PTE_X | PTE_A)
    srli t0, s0, 12
    li t1, SATP_SV32
    or t0, t0, t1
    csrw satp, t0
    sfence.vma
    /* The RAM an alias address names physically. */
    lla t0, data_a
    li t1, ALIAS_OFFSET
    add s2, t0, t1              /* s2 = data_a + 4 MiB: VA and PA */
    li t0, MARKER
    sw t0, 0(s2)

    li TESTNUM, 1               /* 1: MPP = S load translates, sets A only */
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_S_RW
    lw s3, 0(a0)
    MPRV_OFF
    CHECK_EQ(s3, 0xa0a0a0a0)
    CHECK_AD(VA_S_RW, PTE_A)

    li TESTNUM, 2               /* 2: MPP = S store translates, sets D */
    li s3, 0x5a5a5a5a
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_S_RW
    sw s3, 4(a0)
    MPRV_OFF
    lla t0, data_a
    lw t0, 4(t0)
    CHECK_REGS(t0, s3)
    CHECK_AD(VA_S_RW, PTE_A | PTE_D)

    li TESTNUM, 3               /* 3: MPP = U: a supervisor page faults, in M */
    M_EXPECT(1f)
    MPRV_AS(MSTATUS_MPP_U)
    li a0, VA_S_RW
3:  lw s3, 8(a0)
    j fail
1:  MPRV_OFF
    CHECK_REC(R_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_REC(R_TVAL, VA_S_RW + 8)
    lla t3, m_rec
    lw t3, R_EPC(t3)
    lla t4, 3b
    CHECK_REGS(t3, t4)
    /* A trap from M: MPP = M, MPRV unchanged. */
    lla t3, m_rec
    lw t3, R_STATUS(t3)
    CHECK_MASKED(t3, MSTATUS_MPP | MSTATUS_MPRV, MSTATUS_MPP | MSTATUS_MPRV)

    li TESTNUM, 4               /* 4: MPP = U: a user page loads and stores */
    MPRV_AS(MSTATUS_MPP_U)
    li a0, VA_U_RW
    lw s3, 0(a0)
    li t1, 0x0b0b
    sw t1, 4(a0)
    MPRV_OFF
    CHECK_EQ(s3, 0xb0b0b0b0)
    lla t0, data_b
    lw t0, 4(t0)
    CHECK_EQ(t0, 0x0b0b)
    CHECK_AD(VA_U_RW, PTE_A | PTE_D)

    li TESTNUM, 5               /* 5: MPP = S, no SUM: a user page faults */
    M_EXPECT(1f)
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_U_RW
    lw s3, 0(a0)
    j fail
1:  MPRV_OFF
    CHECK_REC(R_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_REC(R_TVAL, VA_U_RW)

    li TESTNUM, 6               /* 6: MPP = S with SUM: it loads */
    li t0, MSTATUS_SUM
    csrs mstatus, t0
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_U_RW
    lw s3, 0(a0)
    MPRV_OFF
    li t0, MSTATUS_SUM
    csrc mstatus, t0
    CHECK_EQ(s3, 0xb0b0b0b0)

    li TESTNUM, 7               /* 7: store to a read-only page: cause 15 */
    M_EXPECT(1f)
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_S_RO
    li t1, 0xbad
    sw t1, 12(a0)
    j fail
1:  MPRV_OFF
    CHECK_REC(R_CAUSE, CAUSE_STORE_PAGE)
    CHECK_REC(R_TVAL, VA_S_RO + 12)
    lla t0, data_c
    lw t0, 12(t0)
    CHECK_EQ(t0, 0xc3c3c3c3)
    CHECK_AD(VA_S_RO, PTE_A)

    li TESTNUM, 8               /* 8: invalid PTE: load page fault */
    M_EXPECT(1f)
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_NONE
    lw s3, 16(a0)
    j fail
1:  MPRV_OFF
    CHECK_REC(R_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_REC(R_TVAL, VA_NONE + 16)

    li TESTNUM, 9               /* 9: an AMO translates and sets A and D */
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_S_AMO
    li t1, 5
    amoadd.w s3, t1, (a0)
    MPRV_OFF
    CHECK_EQ(s3, 0xd0d0d0d0)
    lla t0, data_d
    lw t0, 0(t0)
    CHECK_EQ(t0, 0xd0d0d0d5)
    CHECK_AD(VA_S_AMO, PTE_A | PTE_D)

    li TESTNUM, 10              /* 10: AMO on a read-only page: cause 15 */
    M_EXPECT(1f)
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_S_RO
    amoswap.w s3, zero, (a0)
    j fail
1:  MPRV_OFF
    CHECK_REC(R_CAUSE, CAUSE_STORE_PAGE)
    CHECK_REC(R_TVAL, VA_S_RO)

    li TESTNUM, 11              /* 11: a trap into M drops MPP = S translations */
    MPRV_AS(MSTATUS_MPP_S)
    lw s3, 0(s2)                /* VA s2 -> data_a */
    MPRV_OFF
    CHECK_EQ(s3, 0xa0a0a0a0)
    lla t0, m_rec
    sw s2, R_PROBE(t0)          /* the handler loads PA s2 */
    M_EXPECT(1f)
    MPRV_AS(MSTATUS_MPP_S)
    lw s3, 0(s2)                /* cached translation, no trap */
    li a0, VA_NONE
    lw s3, 0(a0)                /* traps: MPP = M from now on */
    j fail
1:  MPRV_OFF
    CHECK_REC(R_CAUSE, CAUSE_LOAD_PAGE)
#ifndef QEMU_VIRT
    /* QEMU 7.2 keeps using the MPP = S translation here (it flushes its
     * TLB when software writes MPP, not when a trap does) and loads
     * data_a's 0xa0a0a0a0; the spec makes this access physical. */
    CHECK_REC(R_PROBED, MARKER)
#endif

    li TESTNUM, 12              /* 12: MXR through MPRV */
    M_EXPECT(1f)
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_S_XO
    lw s3, 0(a0)
    j fail
1:  MPRV_OFF
    CHECK_REC(R_CAUSE, CAUSE_LOAD_PAGE)
    li t0, MSTATUS_MXR
    csrs mstatus, t0
    MPRV_AS(MSTATUS_MPP_S)
    li a0, VA_S_XO
    lw s3, 0(a0)
    MPRV_OFF
    li t0, MSTATUS_MXR
    csrc mstatus, t0
    CHECK_EQ(s3, 0xc0c0c0c0)

    li TESTNUM, 13              /* 13: MPP = M: physical */
    MPRV_AS(MSTATUS_MPP)
    lw s3, 0(s2)
    MPRV_OFF
    CHECK_EQ(s3, MARKER)

    li TESTNUM, 14              /* 14: satp = Bare: physical for MPP = S too */
    csrr s4, satp
    csrw satp, zero
    MPRV_AS(MSTATUS_MPP_S)
    lw s3, 0(s2)
    MPRV_OFF
    csrw satp, s4
    CHECK_EQ(s3, MARKER)

    li TESTNUM, 15              /* 15: and back through the tables */
    MPRV_AS(MSTATUS_MPP_S)
    lw s3, 0(s2)
    MPRV_OFF
    CHECK_EQ(s3, 0xa0a0a0a0)

    li a0, 0
    j report

/* Expected traps: record them, optionally load R_PROBE, resume in M. */
    .balign 4
m_trap:
    csrrw t6, mscratch, t6
    sw t5, R_SAVE(t6)
    csrr t5, mcause
    sw t5, R_CAUSE(t6)
    csrr t5, mepc
    sw t5, R_EPC(t6)
    csrr t5, mtval
    sw t5, R_TVAL(t6)
    csrr t5, mstatus
    sw t5, R_STATUS(t6)
    lw t5, R_PROBE(t6)
    beqz t5, 1f
    sw zero, R_PROBE(t6)
    lw t5, 0(t5)
    sw t5, R_PROBED(t6)
1:  lw t5, R_RESUME(t6)
    beqz t5, 2f
    sw zero, R_RESUME(t6)
    csrw mepc, t5
    li t5, MSTATUS_MPP
    csrs mstatus, t5
    lw t5, R_SAVE(t6)
    csrrw t6, mscratch, t6
    mret
2:  csrr a0, mcause
    addi a0, a0, 100
    j report

BARE_REPORT_CODE

    .data
    .balign 4096
data_a: .word 0xa0a0a0a0, 0xa1a1a1a1, 0xa2a2a2a2, 0xa3a3a3a3
    .balign 4096
data_b: .word 0xb0b0b0b0, 0xb1b1b1b1, 0xb2b2b2b2, 0xb3b3b3b3
    .balign 4096
data_c: .word 0xc0c0c0c0, 0xc1c1c1c1, 0xc2c2c2c2, 0xc3c3c3c3
    .balign 4096
data_d: .word 0xd0d0d0d0, 0xd1d1d1d1, 0xd2d2d2d2, 0xd3d3d3d3
    .balign 64
m_rec: .skip 32

    .bss
    .balign 4096
root_pt: .skip 4096
l0_a:    .skip 4096
