/* delegation.S - medeleg/mideleg routing of exceptions and interrupts, the
 * status-register stacks on trap entry, mret and sret, and vectored
 * mtvec/stvec.
 *
 * Paging is on (a pt_std_init table) so that U-mode code can run. A
 * delegated trap lands in the S handler, which records scause/sepc/stval/
 * sstatus and resumes in S at s_back_to_m; that ecall (never delegated here)
 * brings the program back to M, so "M was not involved" shows as exactly one
 * M trap, the ecall from S.
 */
#include "priv.h"

#define VA_NONE 0x20000000        /* not mapped by the standard table */
#define INSN_CSRR_T0_MSTATUS 0x300022f3

main:
    la a0, root
    call pt_std_init
    SET_SATP(root, 0)

    TEST(1, "ecall from U delegated: scause/sepc/stval, M not involved")
    RESET_TRAPS
    li t0, 1 << CAUSE_ECALL_U
    csrw medeleg, t0
    EXPECT_S_TRAP(s_back_to_m)
    IN_U(96: ecall)
    CHECK_S(TR_CAUSE, CAUSE_ECALL_U)
    CHECK_TRAP_ADDR(s_trap_area, TR_EPC, 96b, U_ALIAS_OFFSET)
    CHECK_S(TR_TVAL, 0)
    CHECK_S(TR_COUNT, 1)
    CHECK_M(TR_COUNT, 1)
    CHECK_BACK_FROM_S
    /* From U with SIE = 0: SPP = U, SPIE = 0, SIE = 0. */
    CHECK_TRAP_MASKED(s_trap_area, TR_STATUS, MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE, 0)
    TEST_OK

    TEST(2, "trap to S from U with SIE=1: SPIE=1, SIE=0, SPP=U")
    RESET_TRAPS
    li t0, MSTATUS_SIE
    csrs mstatus, t0
    EXPECT_S_TRAP(s_back_to_m)
    IN_U(ecall)
    CHECK_S(TR_CAUSE, CAUSE_ECALL_U)
    CHECK_TRAP_MASKED(s_trap_area, TR_STATUS, MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE, MSTATUS_SPIE)
    /* The handler's sret (SPIE cleared) left SIE = 0. */
    CHECK_TRAP_MASKED(m_trap_area, TR_STATUS, MSTATUS_SIE, 0)
    TEST_OK

    TEST(3, "illegal instruction from S delegated: SPP=S, stval")
    RESET_TRAPS
    li t0, 1 << CAUSE_ILLEGAL_INSN
    csrw medeleg, t0
    EXPECT_S_TRAP(s_back_to_m)
    IN_S(96: csrr t0, mstatus)
    CHECK_S(TR_CAUSE, CAUSE_ILLEGAL_INSN)
    CHECK_TRAP_ADDR(s_trap_area, TR_EPC, 96b, 0)
    CHECK_S(TR_TVAL, INSN_CSRR_T0_MSTATUS)
    CHECK_TRAP_MASKED(s_trap_area, TR_STATUS, MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE, MSTATUS_SPP)
    CHECK_M(TR_COUNT, 1)
    CHECK_BACK_FROM_S
    TEST_OK

    TEST(4, "illegal instruction from U delegated")
    RESET_TRAPS
    EXPECT_S_TRAP(s_back_to_m)
    IN_U(96: csrr t0, mstatus)
    CHECK_S(TR_CAUSE, CAUSE_ILLEGAL_INSN)
    CHECK_TRAP_ADDR(s_trap_area, TR_EPC, 96b, U_ALIAS_OFFSET)
    CHECK_S(TR_TVAL, INSN_CSRR_T0_MSTATUS)
    CHECK_M(TR_COUNT, 1)
    CHECK_BACK_FROM_S
    TEST_OK

    TEST(5, "page faults delegated: load from U, store and fetch from S")
    li t0, (1 << CAUSE_FETCH_PAGE) | (1 << CAUSE_LOAD_PAGE) | (1 << CAUSE_STORE_PAGE)
    csrw medeleg, t0
    li s0, VA_NONE
    RESET_TRAPS
    EXPECT_S_TRAP(s_back_to_m)
    IN_U(96: lw t0, 8(s0))
    CHECK_S(TR_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_S(TR_TVAL, VA_NONE + 8)
    CHECK_TRAP_ADDR(s_trap_area, TR_EPC, 96b, U_ALIAS_OFFSET)
    CHECK_M(TR_COUNT, 1)
    CHECK_BACK_FROM_S
    EXPECT_S_TRAP(s_back_to_m)
    IN_S(96: sw zero, 4(s0))
    CHECK_S(TR_CAUSE, CAUSE_STORE_PAGE)
    CHECK_S(TR_TVAL, VA_NONE + 4)
    CHECK_TRAP_ADDR(s_trap_area, TR_EPC, 96b, 0)
    CHECK_M(TR_COUNT, 2)
    EXPECT_S_TRAP(s_back_to_m)
    IN_S(jalr s0)
    CHECK_S(TR_CAUSE, CAUSE_FETCH_PAGE)
    CHECK_S(TR_TVAL, VA_NONE)
    CHECK_S(TR_EPC, VA_NONE)
    CHECK_M(TR_COUNT, 3)
    CHECK_S(TR_COUNT, 3)
    TEST_OK

    TEST(6, "exceptions not delegated go to M")
    RESET_TRAPS
    li t0, 1 << CAUSE_ECALL_U
    csrw medeleg, t0
    IN_U(96: csrr t0, mstatus)
    CHECK_M(TR_CAUSE, CAUSE_ILLEGAL_INSN)
    CHECK_TRAP_ADDR(m_trap_area, TR_EPC, 96b, U_ALIAS_OFFSET)
    CHECK_M(TR_TVAL, INSN_CSRR_T0_MSTATUS)
    CHECK_TRAP_MASKED(m_trap_area, TR_STATUS, MSTATUS_MPP, MSTATUS_MPP_U)
    CHECK_S(TR_COUNT, 0)
    TEST_OK

    TEST(7, "a delegated exception raised in M stays in M")
    RESET_TRAPS
    li t0, -1
    csrw medeleg, t0
    EXPECT_M_TRAP(1f)
96: csrr t0, 0x7ff          /* no such CSR */
    CANCEL_M_TRAP
1:  CHECK_M(TR_CAUSE, CAUSE_ILLEGAL_INSN)
    CHECK_TRAP_ADDR(m_trap_area, TR_EPC, 96b, 0)
    CHECK_S(TR_COUNT, 0)
    csrw medeleg, zero
    TEST_OK

    TEST(8, "mret: MIE=MPIE, MPIE=1, MPP=U")
    li t0, MSTATUS_MPP | MSTATUS_MPIE
    csrs mstatus, t0
    li t0, MSTATUS_MIE
    csrc mstatus, t0
    la t0, 1f
    csrw mepc, t0
    mret
1:  csrr s1, mstatus
    li t0, MSTATUS_MIE
    csrc mstatus, t0
    CHECK_MASKED(s1, MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP, MSTATUS_MIE | MSTATUS_MPIE)
    li t0, MSTATUS_MPP
    csrs mstatus, t0
    li t0, MSTATUS_MPIE
    csrc mstatus, t0
    la t0, 1f
    csrw mepc, t0
    mret
1:  csrr s1, mstatus
    CHECK_MASKED(s1, MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP, MSTATUS_MPIE)
    /* Back to MPP = M: with MPRV set, MPP = U would translate M's accesses. */
    li t0, MSTATUS_MPP
    csrs mstatus, t0
    TEST_OK

    TEST(9, "trap to M from S: MPP=S, MPIE=old MIE, MIE=0; mret to S clears MPRV")
    RESET_TRAPS
#ifdef QEMU_ORACLE
    /* QEMU 7.2 predates the priv-1.12 rule "an xRET to a mode below M
     * clears MPRV" (it keeps MPRV, and the mret back to M would then run
     * M-mode with MPRV=1, MPP=U): the MPRV part is checked by rv32vm only. */
    li t0, MSTATUS_MPIE
#else
    li t0, MSTATUS_MPIE | MSTATUS_MPRV
#endif
    csrs mstatus, t0
    IN_S(nop)
    CHECK_BACK_FROM_S
    CHECK_TRAP_MASKED(m_trap_area, TR_STATUS, MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP | MSTATUS_MPRV, MSTATUS_MPIE | MSTATUS_MPP_S)
    TEST_OK

    TEST(10, "sret to U: SIE=SPIE, SPIE=1, SPP=U")
    RESET_TRAPS
    la s0, u_ecall
    li t0, U_ALIAS_OFFSET
    add s0, s0, t0
    li t0, MSTATUS_SIE
    csrc mstatus, t0
    IN_S(csrw sepc, s0;
         li t0, MSTATUS_SPP; csrc sstatus, t0;
         li t0, MSTATUS_SPIE; csrs sstatus, t0;
         sret)
    CHECK_BACK_FROM_U
    CHECK_TRAP_MASKED(m_trap_area, TR_STATUS, MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP, MSTATUS_SIE | MSTATUS_SPIE)
    li t0, MSTATUS_SIE
    csrc mstatus, t0
    TEST_OK

    TEST(11, "sret to S with SPIE=0: SIE=0, SPIE=1, SPP=U")
    IN_S(la t0, 1f; csrw sepc, t0;
         li t0, MSTATUS_SPP | MSTATUS_SIE; csrs sstatus, t0;
         li t0, MSTATUS_SPIE; csrc sstatus, t0;
         sret;
         1: csrr s1, sstatus)
    CHECK_BACK_FROM_S
    CHECK_MASKED(s1, MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP, MSTATUS_SPIE)
    TEST_OK

    TEST(12, "SSIP delegated: not taken in M, taken in S with SIE=1")
    RESET_TRAPS
    li t0, MIP_SSIP
    csrw mideleg, t0
    csrw mie, t0
    csrs mip, t0
    /* In M, a delegated interrupt is masked even with MIE = 1. */
    li t0, MSTATUS_MIE
    csrs mstatus, t0
    nop
    nop
    csrc mstatus, t0
    CHECK_M(TR_COUNT, 0)
    li t0, MSTATUS_SIE
    csrs mstatus, t0
    EXPECT_S_TRAP(s_back_to_m)
    IN_S(96: nop)
    CHECK_S(TR_CAUSE, CAUSE_INTERRUPT | IRQ_SSI)
    CHECK_TRAP_ADDR(s_trap_area, TR_EPC, 96b, 0)
    CHECK_S(TR_TVAL, 0)
    CHECK_TRAP_MASKED(s_trap_area, TR_STATUS, MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE, MSTATUS_SPP | MSTATUS_SPIE)
    CHECK_M(TR_COUNT, 1)
    CHECK_BACK_FROM_S
    /* sip shows it, from S with SIE = 0 (nothing taken). */
    li t0, MSTATUS_SIE
    csrc mstatus, t0
    IN_S(csrr s1, sip; csrr s2, sie)
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, MIP_SSIP)
    CHECK_EQ(s2, MIP_SSIP)
    li t0, MIP_SSIP
    csrc mip, t0
    csrw mie, zero
    TEST_OK

    TEST(13, "delegated S interrupt is taken in U even with SIE=0")
    RESET_TRAPS
    li t0, MIP_SSIP
    csrw mie, t0
    csrs mip, t0
    li t0, MSTATUS_SIE
    csrc mstatus, t0
    EXPECT_S_TRAP(s_back_to_m)
    IN_U(96: nop)
    CHECK_S(TR_CAUSE, CAUSE_INTERRUPT | IRQ_SSI)
    CHECK_TRAP_ADDR(s_trap_area, TR_EPC, 96b, U_ALIAS_OFFSET)
    CHECK_TRAP_MASKED(s_trap_area, TR_STATUS, MSTATUS_SPP, 0)
    li t0, MIP_SSIP
    csrc mip, t0
    csrw mie, zero
    TEST_OK

    TEST(14, "STIP (mip write, Sstc off) delegated to S")
    RESET_TRAPS
    li t0, MIP_STIP
    csrw mideleg, t0
    csrw mie, t0
    csrs mip, t0
    CHECK_CSR_MASKED(mip, MIP_STIP, MIP_STIP)
    li t0, MSTATUS_SIE
    csrs mstatus, t0
    EXPECT_S_TRAP(s_back_to_m)
    IN_S(96: nop)
    CHECK_S(TR_CAUSE, CAUSE_INTERRUPT | IRQ_STI)
    CHECK_TRAP_ADDR(s_trap_area, TR_EPC, 96b, 0)
    CHECK_M(TR_COUNT, 1)
    li t0, MIP_STIP
    csrc mip, t0
    CHECK_CSR_MASKED(mip, MIP_STIP, 0)
    csrw mie, zero
    li t0, MSTATUS_SIE
    csrc mstatus, t0
    TEST_OK

    TEST(15, "interrupt not delegated goes to M from S even with MIE=0")
    RESET_TRAPS
    csrw mideleg, zero
    li t0, MIP_SSIP
    csrw mie, t0
    csrs mip, t0
    li t0, MSTATUS_MIE
    csrc mstatus, t0
    IN_S(96: nop)
    CHECK_M(TR_CAUSE, CAUSE_INTERRUPT | IRQ_SSI)
    CHECK_TRAP_ADDR(m_trap_area, TR_EPC, 96b, 0)
    CHECK_TRAP_MASKED(m_trap_area, TR_STATUS, MSTATUS_MPP, MSTATUS_MPP_S)
    CHECK_S(TR_COUNT, 0)
    li t0, MIP_SSIP
    csrc mip, t0
    csrw mie, zero
    TEST_OK

    TEST(16, "vectored stvec: interrupts at base + 4*cause, exceptions at base")
    RESET_TRAPS
    la t0, s_vector_table
    ori t0, t0, 1
    csrw stvec, t0
    li t0, MIP_SSIP | MIP_STIP
    csrw mideleg, t0
    li t0, 1 << CAUSE_ECALL_U
    csrw medeleg, t0
    li t0, MIP_SSIP
    csrw mie, t0
    csrs mip, t0
    li t0, MSTATUS_SIE
    csrs mstatus, t0
    EXPECT_S_TRAP(s_back_to_m)
    IN_S(nop)
    CHECK_S(TR_CAUSE, CAUSE_INTERRUPT | IRQ_SSI)
    CHECK_S(TR_VECTOR, 1 + IRQ_SSI)
    li t0, MIP_SSIP
    csrc mip, t0
    li t0, MIP_STIP
    csrw mie, t0
    csrs mip, t0
    li t0, MSTATUS_SIE          /* the S handler's sret left SIE = 0 */
    csrs mstatus, t0
    EXPECT_S_TRAP(s_back_to_m)
    IN_S(nop)
    CHECK_S(TR_CAUSE, CAUSE_INTERRUPT | IRQ_STI)
    CHECK_S(TR_VECTOR, 1 + IRQ_STI)
    li t0, MIP_STIP
    csrc mip, t0
    csrw mie, zero
    EXPECT_S_TRAP(s_back_to_m)
    IN_U(ecall)
    CHECK_S(TR_CAUSE, CAUSE_ECALL_U)
    CHECK_S(TR_VECTOR, 1)
    la t0, s_trap_entry
    csrw stvec, t0
    li t0, MSTATUS_SIE
    csrc mstatus, t0
    csrw medeleg, zero
    csrw mideleg, zero
    TEST_OK

    TEST(17, "vectored mtvec: interrupts at base + 4*cause, exceptions at base")
    RESET_TRAPS
    la t0, m_vector_table
    ori t0, t0, 1
    csrw mtvec, t0
    li t0, MIP_SSIP
    csrw mie, t0
    EXPECT_M_TRAP(1f)
    csrs mip, t0
    li t0, MSTATUS_MIE
    csrs mstatus, t0
    nop
    CANCEL_M_TRAP
1:  CHECK_M(TR_CAUSE, CAUSE_INTERRUPT | IRQ_SSI)
    CHECK_M(TR_VECTOR, 1 + IRQ_SSI)
    li t0, MIP_SSIP
    csrc mip, t0
    csrw mie, zero
    IN_S(nop)
    CHECK_BACK_FROM_S
    CHECK_M(TR_VECTOR, 1)
    la t0, m_trap_entry
    csrw mtvec, t0
    TEST_OK

    csrw satp, zero
    PASS_ALL

/* S-mode: the way back to M after a delegated trap was handled. */
s_back_to_m:
    ecall

/* Entered in U-mode (at its U_ALIAS address) by sret. */
u_ecall:
    ecall

    .bss
    .balign 4096
root: .skip 4096
