/* triggers.S - the Sdtrig trigger CSRs of a hart with no triggers.
 *
 * rv32vm implements tselect, tdata1-3, tinfo and tcontrol so that software
 * probing them does not take illegal-instruction traps, and they say that
 * no trigger exists: tselect holds only 0, tdata1 reads type 0 ("no
 * trigger at this tselect"), tinfo reads 1 ("the selected trigger doesn't
 * exist"), and writes change nothing. Case 1 is OpenSBI's enumeration
 * (sbi_dbtr_init), each access guarded as csr_read_allowed does: it must
 * find zero triggers without a trap. They are M-mode CSRs: S and U take
 * illegal-instruction traps, and so does M for CSRs no implemented trigger
 * uses (mcontext) and for the Debug-Mode-only dcsr/dpc.
 *
 * QEMU 7.2 implements two real triggers, so there is no QEMU build.
 */
#include "bare.h"

#define CSR_TSELECT  0x7a0
#define CSR_TDATA1   0x7a1
#define CSR_TDATA2   0x7a2
#define CSR_TDATA3   0x7a3
#define CSR_TINFO    0x7a4
#define CSR_TCONTROL 0x7a5
#define CSR_MCONTEXT 0x7a8
#define CSR_DCSR     0x7b0
#define CSR_DPC      0x7b1
#define MAX_TRIGGERS 32

/* m_rec fields. */
#define R_SAVE    0
#define R_RESUME  4             /* where an ecall from S/U returns to, in M */
#define R_COUNT   8             /* traps other than those ecalls */
#define R_CAUSE   12            /* cause of the last of them */

/* Zero the trap count (clobbers t0). */
#define RESET_TRAPS                                                      \
    lla t0, m_rec;                                                       \
    sw zero, R_COUNT(t0);                                                \
    sw zero, R_CAUSE(t0)

/* Fail unless `n` traps were taken since RESET_TRAPS, the last with
 * `cause` (ignored when n = 0). */
#define CHECK_TRAPS(n, cause)                                            \
    lla t3, m_rec;                                                       \
    lw t3, R_COUNT(t3);                                                  \
    CHECK_EQ(t3, n);                                                     \
    lla t3, m_rec;                                                       \
    lw t3, R_CAUSE(t3);                                                  \
    CHECK_EQ(t3, cause)

/* Run `code` in privilege `mpp` at physical addresses (satp = Bare),
 * then come back to M through ecall. */
#define IN_MODE(mpp, code...)                                            \
    lla t0, 98f;                                                         \
    lla t1, m_rec;                                                       \
    sw t0, R_RESUME(t1);                                                 \
    lla t0, 97f;                                                         \
    csrw mepc, t0;                                                       \
    li t0, MSTATUS_MPP;                                                  \
    csrc mstatus, t0;                                                    \
    li t0, mpp;                                                          \
    csrs mstatus, t0;                                                    \
    mret;                                                                \
97: code;                                                                \
    ecall;                                                               \
98:

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
    csrw satp, zero

    li TESTNUM, 1               /* 1: OpenSBI's enumeration finds no trigger */
    RESET_TRAPS
    li s0, 0                    /* i */
    li s1, 0                    /* triggers found */
    li s2, MAX_TRIGGERS
enumerate:
    lla t0, m_rec
    lw s3, R_COUNT(t0)          /* traps so far */
    csrw CSR_TSELECT, s0
    lw t1, R_COUNT(t0)
    bne t1, s3, enumerated
    csrr a0, CSR_TSELECT
    lw t1, R_COUNT(t0)
    bne t1, s3, enumerated
    bne a0, s0, enumerated
    csrr a0, CSR_TINFO
    lw t1, R_COUNT(t0)
    beq t1, s3, 1f
    /* tinfo trapped: the type is in tdata1. */
    mv s3, t1
    csrr a0, CSR_TDATA1
    lw t1, R_COUNT(t0)
    bne t1, s3, enumerated
    srli a0, a0, 28
    beqz a0, enumerated
    j 2f
1:  li t1, 1
    beq a0, t1, enumerated
2:  addi s1, s1, 1
    addi s0, s0, 1
    blt s0, s2, enumerate
enumerated:
    CHECK_EQ(s1, 0)
    CHECK_EQ(s0, 0)
    CHECK_TRAPS(0, 0)

    li TESTNUM, 2               /* 2: tselect holds only 0 (WARL) */
    li t0, 5
    csrw CSR_TSELECT, t0
    csrr a0, CSR_TSELECT
    CHECK_EQ(a0, 0)
    li t0, -1
    csrrw a0, CSR_TSELECT, t0
    CHECK_EQ(a0, 0)
    csrr a0, CSR_TSELECT
    CHECK_EQ(a0, 0)

    li TESTNUM, 3               /* 3: tdata1 = 0: type 0, dmode 0, data 0 */
    csrr a0, CSR_TDATA1
    CHECK_EQ(a0, 0)
    li t0, (2 << 28) | 0x44     /* an mcontrol execute trigger in M */
    csrw CSR_TDATA1, t0
    csrr a0, CSR_TDATA1
    CHECK_EQ(a0, 0)
    li t0, -1
    csrw CSR_TDATA1, t0
    csrr a0, CSR_TDATA1
    CHECK_EQ(a0, 0)
    csrw CSR_TDATA1, zero       /* "writing 0 disables": always allowed */

    li TESTNUM, 4               /* 4: tdata2 and tdata3 hold nothing */
    li t0, 0x80001234
    csrw CSR_TDATA2, t0
    csrr a0, CSR_TDATA2
    CHECK_EQ(a0, 0)
    csrw CSR_TDATA3, t0
    csrr a0, CSR_TDATA3
    CHECK_EQ(a0, 0)

    li TESTNUM, 5               /* 5: tinfo = 1; writing it has no effect */
    csrr a0, CSR_TINFO
    CHECK_EQ(a0, 1)
    li t0, 0x4
    csrw CSR_TINFO, t0
    csrr a0, CSR_TINFO
    CHECK_EQ(a0, 1)

    li TESTNUM, 6               /* 6: tcontrol: mte/mpte stay 0 */
    csrr a0, CSR_TCONTROL
    CHECK_EQ(a0, 0)
    li t0, 0x88
    csrw CSR_TCONTROL, t0
    csrr a0, CSR_TCONTROL
    CHECK_EQ(a0, 0)

    li TESTNUM, 7               /* 7: none of that trapped */
    CHECK_TRAPS(0, 0)

    li TESTNUM, 8               /* 8: mcontext (no trigger uses it): illegal */
    csrr a0, CSR_MCONTEXT
    CHECK_TRAPS(1, CAUSE_ILLEGAL_INSN)

    li TESTNUM, 9               /* 9: dcsr and dpc are Debug Mode only */
    RESET_TRAPS
    csrr a0, CSR_DCSR
    csrr a0, CSR_DPC
    CHECK_TRAPS(2, CAUSE_ILLEGAL_INSN)

    li TESTNUM, 10              /* 10: S-mode cannot touch them */
    RESET_TRAPS
    IN_MODE(MSTATUS_MPP_S,
        csrr a0, CSR_TSELECT;
        csrw CSR_TDATA1, zero;
        csrr a0, CSR_TINFO;
        csrr a0, CSR_TCONTROL)
    CHECK_TRAPS(4, CAUSE_ILLEGAL_INSN)

    li TESTNUM, 11              /* 11: nor can U-mode */
    RESET_TRAPS
    IN_MODE(MSTATUS_MPP_U,
        csrr a0, CSR_TSELECT;
        csrr a0, CSR_TDATA2)
    CHECK_TRAPS(2, CAUSE_ILLEGAL_INSN)

    li a0, 0
    j report

/* Ecalls from S/U return to M at R_RESUME; any other trap is counted,
 * recorded and skipped (as OpenSBI's csr_read_allowed does). */
    .balign 4
m_trap:
    csrrw t6, mscratch, t6
    sw t5, R_SAVE(t6)
    csrr t5, mcause
    addi t5, t5, -CAUSE_ECALL_U
    beqz t5, 1f
    addi t5, t5, CAUSE_ECALL_U - CAUSE_ECALL_S
    beqz t5, 1f
    csrr t5, mcause
    sw t5, R_CAUSE(t6)
    lw t5, R_COUNT(t6)
    addi t5, t5, 1
    sw t5, R_COUNT(t6)
    csrr t5, mepc
    addi t5, t5, 4
    csrw mepc, t5
    j 2f
1:  lw t5, R_RESUME(t6)
    csrw mepc, t5
    li t5, MSTATUS_MPP
    csrs mstatus, t5
2:  lw t5, R_SAVE(t6)
    csrrw t6, mscratch, t6
    mret

BARE_REPORT_CODE

    .data
    .balign 64
m_rec: .skip 32
