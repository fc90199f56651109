/* test.h - macros for rv32vm's self-checking bare-metal ISA tests.
 *
 * Written for this project in the style of riscv-tests (same conventions,
 * our own code). One source builds in two variants:
 *
 *   default      HTIF: the result is written to the 32-bit symbol `tohost`
 *                (1 = pass, (N << 1) | 1 = test case N failed). This is what
 *                `rv32vm run --bare` runs.
 *   -DQEMU_VIRT  the same code, but the result goes to QEMU virt's
 *                sifive,test0 device at 0x0010_0000 (0x5555 = pass,
 *                (N << 16) | 0x3333 = fail N) and a failure is also printed
 *                on the 16550 UART. QEMU is the oracle that proves the
 *                expected values in the tests are right.
 *
 * Register conventions used by the macros:
 *   gp (x3)   = TESTNUM, the number of the case being run (>= 2).
 *   a1, a2    = operands, a4 = result, t2 (x7) = expected value.
 *   t5, t6    = clobbered by EXPECT_TRAP and by the trap handler's resume
 *               path (the handler itself preserves every register).
 *   Local labels 90..99 are used inside macros: do not use them in code
 *   passed to a macro.
 *
 * Traps: the handler fails the test with code 1000 + mcause for any
 * synchronous trap that was not announced with EXPECT_TRAP (1500 + cause
 * for an interrupt). An announced trap records mcause, mepc, mtval and
 * mstatus in rvtest_trap_area, resumes in M-mode with mstatus.MIE = 0 at
 * the announced label, and (for interrupts) clears mie so the interrupt
 * cannot fire again.
 */
#ifndef RV32VM_ISA_TEST_H
#define RV32VM_ISA_TEST_H

#define TESTNUM gp

/* ---------------------------------------------------------------- CSRs -- */
#define MSTATUS_SIE  0x00000002
#define MSTATUS_MIE  0x00000008
#define MSTATUS_SPIE 0x00000020
#define MSTATUS_MPIE 0x00000080
#define MSTATUS_SPP  0x00000100
#define MSTATUS_MPP  0x00001800
#define MSTATUS_MPP_S 0x00000800
#define MSTATUS_FS   0x00006000
#define MSTATUS_FS_INITIAL 0x00002000
#define MSTATUS_FS_CLEAN   0x00004000
#define MSTATUS_FS_DIRTY   0x00006000
#define MSTATUS_MPRV 0x00020000
#define MSTATUS_SD   0x80000000

#define MIP_SSIP 0x00000002
#define MIP_MSIP 0x00000008

#define CAUSE_MISALIGNED_FETCH 0
#define CAUSE_FETCH_ACCESS     1
#define CAUSE_ILLEGAL_INSN     2
#define CAUSE_BREAKPOINT       3
#define CAUSE_MISALIGNED_LOAD  4
#define CAUSE_LOAD_ACCESS      5
#define CAUSE_MISALIGNED_STORE 6
#define CAUSE_STORE_ACCESS     7
#define CAUSE_ECALL_U          8
#define CAUSE_ECALL_S          9
#define CAUSE_ECALL_M          11
#define CAUSE_INTERRUPT        0x80000000

#define FFLAG_NX 0x01
#define FFLAG_UF 0x02
#define FFLAG_OF 0x04
#define FFLAG_DZ 0x08
#define FFLAG_NV 0x10

#define FRM_RNE 0
#define FRM_RTZ 1
#define FRM_RDN 2
#define FRM_RUP 3
#define FRM_RMM 4

/* Offsets in rvtest_trap_area. */
#define TRAP_SAVE_T5 0
#define TRAP_RESUME  4
#define TRAP_CAUSE   8
#define TRAP_EPC     12
#define TRAP_TVAL    16
#define TRAP_STATUS  20
#define TRAP_COUNT   24
#define TRAP_AREA_SIZE 32

/* Code reported for an unexpected trap: 1000 + mcause (1500 + cause for an
 * interrupt). */
#define UNEXPECTED_TRAP_BASE 1000
#define UNEXPECTED_INTERRUPT_BASE 1500
/* Reported if RVTEST_FAIL runs while TESTNUM is still 0. */
#define FAIL_WITHOUT_TESTNUM 999

#define SYSCON_BASE 0x00100000
#define SYSCON_PASS 0x5555
#define SYSCON_FAIL 0x3333
#define UART_BASE   0x10000000

/* Sign-extend a 12-bit immediate written as a raw 12-bit field. */
#define SEXT_IMM(x) ((x) | (-(((x) >> 11) & 1) << 11))

/* ------------------------------------------------------ code/data frame -- */

/* Starts the test program: entry point, trap handler, pass/fail reporting,
 * then switches to .text where the test body follows. */
#define RVTEST_CODE_BEGIN                                                    \
    .section .text.init, "ax", @progbits;                                \
    .option norvc;                                                       \
    .balign 4;                                                           \
    .globl _start;                                                       \
_start:                                                                  \
    RVTEST_ZERO_GPRS;                                                    \
    la t0, rvtest_trap_vector;                                           \
    csrw mtvec, t0;                                                      \
    la t0, rvtest_trap_area;                                             \
    csrw mscratch, t0;                                                   \
    csrw mie, zero;                                                      \
    csrw mideleg, zero;                                                  \
    csrw medeleg, zero;                                                  \
    /* FS = Initial first, so the FP registers can be zeroed. */         \
    li t0, MSTATUS_FS_INITIAL;                                           \
    csrw mstatus, t0;                                                    \
    RVTEST_ZERO_FPRS;                                                    \
    csrwi fcsr, 0;                                                       \
    /* Back to FS = Initial (zeroing them made FS Dirty). */             \
    li t0, MSTATUS_FS_INITIAL;                                           \
    csrw mstatus, t0;                                                    \
    la sp, rvtest_stack_top;                                             \
    li t0, 0;                                                            \
    j rvtest_body;                                                       \
                                                                         \
    .balign 4;                                                           \
rvtest_trap_vector:                                                      \
    csrrw t6, mscratch, t6;     /* t6 = trap area, mscratch = t6 */      \
    sw t5, TRAP_SAVE_T5(t6);                                             \
    csrr t5, mcause;                                                     \
    sw t5, TRAP_CAUSE(t6);                                               \
    csrr t5, mepc;                                                       \
    sw t5, TRAP_EPC(t6);                                                 \
    csrr t5, mtval;                                                      \
    sw t5, TRAP_TVAL(t6);                                                \
    csrr t5, mstatus;                                                    \
    sw t5, TRAP_STATUS(t6);                                              \
    lw t5, TRAP_COUNT(t6);                                               \
    addi t5, t5, 1;                                                      \
    sw t5, TRAP_COUNT(t6);                                               \
    lw t5, TRAP_RESUME(t6);                                              \
    beqz t5, rvtest_unexpected_trap;                                     \
    sw zero, TRAP_RESUME(t6);                                            \
    csrw mepc, t5;                                                       \
    /* Always resume in M-mode, with interrupts globally off. */        \
    li t5, MSTATUS_MPP;                                                  \
    csrs mstatus, t5;                                                    \
    li t5, MSTATUS_MPIE;                                                 \
    csrc mstatus, t5;                                                    \
    csrr t5, mcause;                                                     \
    bgez t5, 1f;                                                         \
    csrw mie, zero;             /* an interrupt: silence it */           \
1:  lw t5, TRAP_SAVE_T5(t6);                                             \
    csrrw t6, mscratch, t6;     /* restore t6 and mscratch */            \
    mret;                                                                \
                                                                         \
rvtest_unexpected_trap:                                                  \
    csrr t5, mcause;                                                     \
    bltz t5, 2f;                                                         \
    addi TESTNUM, t5, UNEXPECTED_TRAP_BASE;                              \
    j rvtest_fail;                                                       \
2:  slli t5, t5, 1;                                                      \
    srli t5, t5, 1;                                                      \
    addi TESTNUM, t5, UNEXPECTED_INTERRUPT_BASE;                         \
    j rvtest_fail;                                                       \
                                                                         \
rvtest_pass:                                                             \
    fence;                                                               \
    RVTEST_REPORT_PASS;                                                  \
rvtest_fail:                                                             \
    fence;                                                               \
    bnez TESTNUM, 3f;                                                    \
    li TESTNUM, FAIL_WITHOUT_TESTNUM;                                    \
3:  RVTEST_REPORT_FAIL;                                                  \
    .text;                                                               \
    .balign 4;                                                           \
rvtest_body:

#define RVTEST_ZERO_GPRS                                                 \
    li x1, 0; li x2, 0; li x3, 0; li x4, 0; li x5, 0; li x6, 0;          \
    li x7, 0; li x8, 0; li x9, 0; li x10, 0; li x11, 0; li x12, 0;       \
    li x13, 0; li x14, 0; li x15, 0; li x16, 0; li x17, 0; li x18, 0;    \
    li x19, 0; li x20, 0; li x21, 0; li x22, 0; li x23, 0; li x24, 0;    \
    li x25, 0; li x26, 0; li x27, 0; li x28, 0; li x29, 0; li x30, 0;    \
    li x31, 0

#define RVTEST_ZERO_FPRS                                                 \
    fcvt.d.w f0, x0; fcvt.d.w f1, x0; fcvt.d.w f2, x0; fcvt.d.w f3, x0;  \
    fcvt.d.w f4, x0; fcvt.d.w f5, x0; fcvt.d.w f6, x0; fcvt.d.w f7, x0;  \
    fcvt.d.w f8, x0; fcvt.d.w f9, x0; fcvt.d.w f10, x0; fcvt.d.w f11, x0; \
    fcvt.d.w f12, x0; fcvt.d.w f13, x0; fcvt.d.w f14, x0; fcvt.d.w f15, x0; \
    fcvt.d.w f16, x0; fcvt.d.w f17, x0; fcvt.d.w f18, x0; fcvt.d.w f19, x0; \
    fcvt.d.w f20, x0; fcvt.d.w f21, x0; fcvt.d.w f22, x0; fcvt.d.w f23, x0; \
    fcvt.d.w f24, x0; fcvt.d.w f25, x0; fcvt.d.w f26, x0; fcvt.d.w f27, x0; \
    fcvt.d.w f28, x0; fcvt.d.w f29, x0; fcvt.d.w f30, x0; fcvt.d.w f31, x0

#ifdef QEMU_VIRT
/* sifive,test0: 0x5555 powers off with status 0. */
#define RVTEST_REPORT_PASS                                               \
    li t0, SYSCON_BASE;                                                  \
    li t1, SYSCON_PASS;                                                  \
    sw t1, 0(t0);                                                        \
4:  j 4b

/* Prints "FAIL 0x<testnum hex>\n" on the UART (exit statuses are only 8
 * bits wide), then exits with (N << 16) | 0x3333. */
#define RVTEST_REPORT_FAIL                                               \
    li t0, UART_BASE;                                                    \
    li t1, 0x46; sb t1, 0(t0);                                            \
    li t1, 0x41; sb t1, 0(t0);                                            \
    li t1, 0x49; sb t1, 0(t0);                                            \
    li t1, 0x4c; sb t1, 0(t0);                                            \
    li t1, 0x20; sb t1, 0(t0);                                            \
    li t1, 0x30; sb t1, 0(t0);                                            \
    li t1, 0x78; sb t1, 0(t0);                                            \
    li t2, 28;                                                           \
5:  srl t1, TESTNUM, t2;                                                 \
    andi t1, t1, 15;                                                     \
    addi t1, t1, 0x30;                                                    \
    li t3, 0x39;                                                          \
    ble t1, t3, 6f;                                                      \
    addi t1, t1, 0x61 - 0x30 - 10;                                         \
6:  sb t1, 0(t0);                                                        \
    addi t2, t2, -4;                                                     \
    bgez t2, 5b;                                                         \
    li t1, 10; sb t1, 0(t0);                                           \
    li t0, SYSCON_BASE;                                                  \
    slli t1, TESTNUM, 16;                                                \
    li t2, SYSCON_FAIL;                                                  \
    or t1, t1, t2;                                                       \
    sw t1, 0(t0);                                                        \
7:  j 7b
#else
/* HTIF: write 1 (pass) or (N << 1) | 1 (fail N) to tohost, then spin. */
#define RVTEST_REPORT_PASS                                               \
    li t1, 1;                                                            \
    la t0, tohost;                                                       \
    sw t1, 0(t0);                                                        \
4:  j 4b

#define RVTEST_REPORT_FAIL                                               \
    slli t1, TESTNUM, 1;                                                 \
    ori t1, t1, 1;                                                       \
    la t0, tohost;                                                       \
    sw t1, 0(t0);                                                        \
7:  j 7b
#endif

/* Ends the code: a test body falls into RVTEST_PASS when all cases held. */
#define RVTEST_CODE_END

#define RVTEST_PASS j rvtest_pass
#define RVTEST_FAIL j rvtest_fail
/* Fails with the code held in `reg`. */
#define RVTEST_FAIL_WITH(reg) mv TESTNUM, reg; j rvtest_fail

/* The usual ending of a test body: every `bne ..., fail` lands here. */
#define TEST_PASSFAIL                                                    \
    RVTEST_PASS;                                                         \
fail:                                                                    \
    RVTEST_FAIL

/* Data: HTIF mailbox, signature region, trap record, stack. */
#define RVTEST_DATA_BEGIN                                                \
    .pushsection .tohost, "aw", @progbits;                               \
    .balign 8;                                                           \
    .globl tohost;                                                       \
tohost: .word 0, 0;                                                      \
    .balign 8;                                                           \
    .globl fromhost;                                                     \
fromhost: .word 0, 0;                                                    \
    .popsection;                                                         \
    .pushsection .bss, "aw", @nobits;                                    \
    .balign 16;                                                          \
    .globl rvtest_trap_area;                                             \
rvtest_trap_area: .skip TRAP_AREA_SIZE;                                  \
    .balign 16;                                                          \
rvtest_stack: .skip 4096;                                                \
rvtest_stack_top:                                                        \
    .popsection;                                                         \
    .data;                                                               \
    .balign 16

/* The signature region (riscv-arch-test convention) is left empty: these
 * tests check themselves. */
#define RVTEST_DATA_END                                                  \
    .balign 16;                                                          \
    .globl begin_signature;                                              \
begin_signature:;                                                        \
    .globl end_signature;                                                \
end_signature:

/* ---------------------------------------------------------- traps ------ */

/* Announces that the next trap is expected: the handler records it and
 * resumes at `label`. Clobbers t5, t6. */
#define EXPECT_TRAP(label)                                               \
    la t5, label;                                                        \
    la t6, rvtest_trap_area;                                             \
    sw t5, TRAP_RESUME(t6)

/* Withdraws an EXPECT_TRAP that did not fire. Clobbers t6. */
#define CANCEL_TRAP                                                      \
    la t6, rvtest_trap_area;                                             \
    sw zero, TRAP_RESUME(t6)

/* reg = the recorded field (TRAP_CAUSE, TRAP_EPC, ...) of the last trap. */
#define LOAD_TRAP(reg, field)                                            \
    la reg, rvtest_trap_area;                                            \
    lw reg, field(reg)

/* Fails unless the recorded `field` of the last trap equals `value`.
 * Clobbers t0, t1. */
#define CHECK_TRAP(field, value)                                         \
    LOAD_TRAP(t0, field);                                                \
    li t1, value;                                                        \
    bne t0, t1, fail

/* Fails unless the recorded `field` equals the address of `label`. */
#define CHECK_TRAP_ADDR(field, label)                                    \
    LOAD_TRAP(t0, field);                                                \
    la t1, label;                                                        \
    bne t0, t1, fail

/* Fails unless the last trap was a misaligned or faulting LR/SC/AMO: cause
 * `c1` or `c2` (the spec allows address-misaligned or access fault), mepc =
 * `label`, mtval = `addr`. QEMU 7.2 reports a misaligned AMO as a *load*
 * address-misaligned trap (cause 4) where the spec says store/AMO (6) or
 * access fault (7): the QEMU build accepts that too, so the oracle still
 * checks mepc, mtval and what the case checks after. Clobbers t0, t1. */
#ifdef QEMU_VIRT
#define QEMU_AMO_CAUSE_QUIRK                                             \
    li t1, CAUSE_MISALIGNED_LOAD;                                        \
    beq t0, t1, 92f
#else
#define QEMU_AMO_CAUSE_QUIRK
#endif
#define CHECK_AMO_TRAP(c1, c2, label, addr)                              \
    LOAD_TRAP(t0, TRAP_CAUSE);                                           \
    li t1, c1;                                                           \
    beq t0, t1, 92f;                                                     \
    QEMU_AMO_CAUSE_QUIRK;                                                \
    li t1, c2;                                                           \
    bne t0, t1, fail;                                                    \
92: CHECK_TRAP_ADDR(TRAP_EPC, label);                                    \
    CHECK_TRAP_ADDR(TRAP_TVAL, addr)

/* Case `testnum`: the single instruction `insn` must trap with `cause`,
 * mepc = its address. Falls through to the next case after checking. */
#define TEST_TRAP(testnum, cause, insn...)                               \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    EXPECT_TRAP(91f);                                                    \
90: insn;                                                                \
    CANCEL_TRAP;                                                         \
    j fail;                                                              \
91: CHECK_TRAP(TRAP_CAUSE, cause);                                       \
    CHECK_TRAP_ADDR(TRAP_EPC, 90b)

/* As TEST_TRAP, and mtval must equal `tval`. */
#define TEST_TRAP_TVAL(testnum, cause, tval, insn...)                    \
    TEST_TRAP(testnum, cause, insn);                                     \
    CHECK_TRAP(TRAP_TVAL, tval)

/* ------------------------------------------------------- integer cases -- */

/* Runs `code`, then fails unless `testreg` == `correctval`. */
#define TEST_CASE(testnum, testreg, correctval, code...)                 \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    code;                                                                \
    li x7, correctval;                                                   \
    bne testreg, x7, fail

/* rd = inst(rs1 = val1, imm) */
#define TEST_IMM_OP(testnum, inst, result, val1, imm)                    \
    TEST_CASE(testnum, a4, result,                                       \
        li a1, val1;                                                     \
        inst a4, a1, imm)

/* rd == rs1 */
#define TEST_IMM_SRC1_EQ_DEST(testnum, inst, result, val1, imm)          \
    TEST_CASE(testnum, a1, result,                                       \
        li a1, val1;                                                     \
        inst a1, a1, imm)

/* rs1 = x0 */
#define TEST_IMM_ZEROSRC1(testnum, inst, result, imm)                    \
    TEST_CASE(testnum, a4, result,                                       \
        li a4, 0x5a5a5a5a;                                               \
        inst a4, x0, imm)

/* rd = x0: the write must be dropped (x0 reads 0 afterwards). */
#define TEST_IMM_ZERODEST(testnum, inst, val1, imm)                      \
    TEST_CASE(testnum, x0, 0,                                            \
        li a1, val1;                                                     \
        inst x0, a1, imm;                                                \
        addi a4, x0, 0;                                                  \
        bnez a4, fail)

/* rd = inst(rs1 = val1, rs2 = val2) */
#define TEST_RR_OP(testnum, inst, result, val1, val2)                    \
    TEST_CASE(testnum, a4, result,                                       \
        li a1, val1;                                                     \
        li a2, val2;                                                     \
        inst a4, a1, a2)

#define TEST_RR_SRC1_EQ_DEST(testnum, inst, result, val1, val2)          \
    TEST_CASE(testnum, a1, result,                                       \
        li a1, val1;                                                     \
        li a2, val2;                                                     \
        inst a1, a1, a2)

#define TEST_RR_SRC2_EQ_DEST(testnum, inst, result, val1, val2)          \
    TEST_CASE(testnum, a2, result,                                       \
        li a1, val1;                                                     \
        li a2, val2;                                                     \
        inst a2, a1, a2)

/* rd == rs1 == rs2 */
#define TEST_RR_SRC12_EQ_DEST(testnum, inst, result, val1)               \
    TEST_CASE(testnum, a1, result,                                       \
        li a1, val1;                                                     \
        inst a1, a1, a1)

/* rs1 == rs2, different rd */
#define TEST_RR_SRC12_EQ(testnum, inst, result, val1)                    \
    TEST_CASE(testnum, a4, result,                                       \
        li a1, val1;                                                     \
        inst a4, a1, a1)

#define TEST_RR_ZEROSRC1(testnum, inst, result, val2)                    \
    TEST_CASE(testnum, a4, result,                                       \
        li a2, val2;                                                     \
        inst a4, x0, a2)

#define TEST_RR_ZEROSRC2(testnum, inst, result, val1)                    \
    TEST_CASE(testnum, a4, result,                                       \
        li a1, val1;                                                     \
        inst a4, a1, x0)

#define TEST_RR_ZEROSRC12(testnum, inst, result)                         \
    TEST_CASE(testnum, a4, result,                                       \
        li a4, 0x5a5a5a5a;                                               \
        inst a4, x0, x0)

#define TEST_RR_ZERODEST(testnum, inst, val1, val2)                      \
    TEST_CASE(testnum, x0, 0,                                            \
        li a1, val1;                                                     \
        li a2, val2;                                                     \
        inst x0, a1, a2;                                                 \
        addi a4, x0, 0;                                                  \
        bnez a4, fail)

/* Unary: rd = inst(rs1 = val1) */
#define TEST_R_OP(testnum, inst, result, val1)                           \
    TEST_CASE(testnum, a4, result,                                       \
        li a1, val1;                                                     \
        inst a4, a1)

#define TEST_R_SRC1_EQ_DEST(testnum, inst, result, val1)                 \
    TEST_CASE(testnum, a1, result,                                       \
        li a1, val1;                                                     \
        inst a1, a1)

/* rd = load(base + offset) */
#define TEST_LD_OP(testnum, inst, result, offset, base)                  \
    TEST_CASE(testnum, a4, result,                                       \
        la a5, base;                                                     \
        inst a4, offset(a5))

/* rd == base register */
#define TEST_LD_DEST_EQ_BASE(testnum, inst, result, offset, base)        \
    TEST_CASE(testnum, a5, result,                                       \
        la a5, base;                                                     \
        inst a5, offset(a5))

/* store `value` at base + offset, read it back with `load_inst`. */
#define TEST_ST_OP(testnum, load_inst, store_inst, result, value, offset, base) \
    TEST_CASE(testnum, a4, result,                                       \
        la a5, base;                                                     \
        li a1, value;                                                    \
        store_inst a1, offset(a5);                                       \
        load_inst a4, offset(a5))

/* The whole aligned word around a narrow store: fill the word at `base`
 * with `fill`, store `value` with `store_inst` at base + offset, and the
 * word must read `word`. Shows exactly which bytes a store touched. */
#define TEST_ST_WORD(testnum, store_inst, word, fill, value, offset, base) \
    TEST_CASE(testnum, a4, word,                                         \
        la a5, base;                                                     \
        li a1, fill;                                                     \
        sw a1, 0(a5);                                                    \
        li a1, value;                                                    \
        store_inst a1, offset(a5);                                       \
        lw a4, 0(a5))

/* The branch must be taken, forwards and backwards. */
#define TEST_BR2_OP_TAKEN(testnum, inst, val1, val2)                     \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    li a1, val1;                                                         \
    li a2, val2;                                                         \
    inst a1, a2, 92f;                                                    \
    j fail;                                                              \
91: j 93f;                                                               \
92: inst a1, a2, 91b;                                                    \
    j fail;                                                              \
93:

/* The branch must fall through, forwards and backwards. */
#define TEST_BR2_OP_NOTTAKEN(testnum, inst, val1, val2)                  \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    li a1, val1;                                                         \
    li a2, val2;                                                         \
    inst a1, a2, 91f;                                                    \
    j 92f;                                                               \
91: j fail;                                                              \
92: inst a1, a2, 91b

/* ------------------------------------------------------------ FP cases -- */
/* Operands and expected results are raw IEEE bit patterns (.word for single,
 * .dword for double), so every case is exact. Each case clears fflags,
 * runs the instruction, then reads-and-clears fflags with csrrw and
 * compares both the result and the exact flags. Single results are also
 * checked to be NaN-boxed (upper 32 bits of the f register all ones). */

#define FP_DATA_S(testnum, v1, v2, v3, result)                           \
    .pushsection .data;                                                  \
    .balign 8;                                                           \
test_ ## testnum ## _data:                                               \
    .word v1, v2, v3, result;                                            \
    .word 0, 0;               /* 16: the result f register, via fsd */   \
    .popsection

#define FP_DATA_D(testnum, v1, v2, v3, result)                           \
    .pushsection .data;                                                  \
    .balign 8;                                                           \
test_ ## testnum ## _data:                                               \
    .dword v1, v2, v3, result;                                           \
    .dword 0;                 /* 32: the result, via fsd */              \
    .popsection

/* Checks flags in a1 against `flags`; clobbers a2. */
#define FP_CHECK_FLAGS(flags)                                            \
    li a2, flags;                                                        \
    bne a1, a2, fail

/* f3 holds a single result: compare with the expected word at 12(a0) and
 * check the NaN-box. */
#define FP_CHECK_RESULT_S                                                \
    fsd f3, 16(a0);                                                      \
    lw a4, 16(a0);                                                       \
    lw a3, 12(a0);                                                       \
    bne a4, a3, fail;                                                    \
    lw a4, 20(a0);                                                       \
    li a3, -1;                                                           \
    bne a4, a3, fail

/* f3 holds a double result: compare with the expected dword at 24(a0). */
#define FP_CHECK_RESULT_D                                                \
    fsd f3, 32(a0);                                                      \
    lw a4, 32(a0);                                                       \
    lw a3, 24(a0);                                                       \
    bne a4, a3, fail;                                                    \
    lw a4, 36(a0);                                                       \
    lw a3, 28(a0);                                                       \
    bne a4, a3, fail

#define FP_PROLOGUE_S(testnum)                                           \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a0, test_ ## testnum ## _data;                                    \
    flw f0, 0(a0);                                                       \
    flw f1, 4(a0);                                                       \
    flw f2, 8(a0);                                                       \
    fsflags x0

#define FP_PROLOGUE_D(testnum)                                           \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a0, test_ ## testnum ## _data;                                    \
    fld f0, 0(a0);                                                       \
    fld f1, 8(a0);                                                       \
    fld f2, 16(a0);                                                      \
    fsflags x0

/* Generic single-precision case: `code` computes f3 from f0, f1, f2. */
#define TEST_FP_S(testnum, flags, result, v1, v2, v3, code...)           \
    FP_DATA_S(testnum, v1, v2, v3, result);                              \
    FP_PROLOGUE_S(testnum);                                              \
    code;                                                                \
    fsflags a1, x0;                                                      \
    FP_CHECK_FLAGS(flags);                                               \
    FP_CHECK_RESULT_S

#define TEST_FP_D(testnum, flags, result, v1, v2, v3, code...)           \
    FP_DATA_D(testnum, v1, v2, v3, result);                              \
    FP_PROLOGUE_D(testnum);                                              \
    code;                                                                \
    fsflags a1, x0;                                                      \
    FP_CHECK_FLAGS(flags);                                               \
    FP_CHECK_RESULT_D

/* f3 = inst(f0) with rounding mode `rm` (rne, rtz, rdn, rup, rmm, dyn). */
#define TEST_FP_OP1_S(testnum, inst, rm, flags, result, v1)              \
    TEST_FP_S(testnum, flags, result, v1, 0, 0, inst f3, f0, rm)
#define TEST_FP_OP1_D(testnum, inst, rm, flags, result, v1)              \
    TEST_FP_D(testnum, flags, result, v1, 0, 0, inst f3, f0, rm)

/* f3 = inst(f0, f1) with rounding mode `rm`. */
#define TEST_FP_OP2_S(testnum, inst, rm, flags, result, v1, v2)          \
    TEST_FP_S(testnum, flags, result, v1, v2, 0, inst f3, f0, f1, rm)
#define TEST_FP_OP2_D(testnum, inst, rm, flags, result, v1, v2)          \
    TEST_FP_D(testnum, flags, result, v1, v2, 0, inst f3, f0, f1, rm)

/* f3 = inst(f0, f1) for instructions without a rounding mode (fmin, fmax,
 * fsgnj*). */
#define TEST_FP_OP2NR_S(testnum, inst, flags, result, v1, v2)            \
    TEST_FP_S(testnum, flags, result, v1, v2, 0, inst f3, f0, f1)
#define TEST_FP_OP2NR_D(testnum, inst, flags, result, v1, v2)            \
    TEST_FP_D(testnum, flags, result, v1, v2, 0, inst f3, f0, f1)

/* f3 = inst(f0, f1, f2) (fmadd, fmsub, fnmsub, fnmadd). */
#define TEST_FP_OP3_S(testnum, inst, rm, flags, result, v1, v2, v3)      \
    TEST_FP_S(testnum, flags, result, v1, v2, v3, inst f3, f0, f1, f2, rm)
#define TEST_FP_OP3_D(testnum, inst, rm, flags, result, v1, v2, v3)      \
    TEST_FP_D(testnum, flags, result, v1, v2, v3, inst f3, f0, f1, f2, rm)

/* Integer-result case: `code` computes a4 from f0, f1. */
#define TEST_FP_TO_INT_S(testnum, flags, result, v1, v2, code...)        \
    FP_DATA_S(testnum, v1, v2, 0, 0);                                    \
    FP_PROLOGUE_S(testnum);                                              \
    code;                                                                \
    fsflags a1, x0;                                                      \
    FP_CHECK_FLAGS(flags);                                               \
    li a3, result;                                                       \
    bne a4, a3, fail

#define TEST_FP_TO_INT_D(testnum, flags, result, v1, v2, code...)        \
    FP_DATA_D(testnum, v1, v2, 0, 0);                                    \
    FP_PROLOGUE_D(testnum);                                              \
    code;                                                                \
    fsflags a1, x0;                                                      \
    FP_CHECK_FLAGS(flags);                                               \
    li a3, result;                                                       \
    bne a4, a3, fail

/* a4 = inst(f0, f1): feq, flt, fle. */
#define TEST_FP_CMP_S(testnum, inst, flags, result, v1, v2)              \
    TEST_FP_TO_INT_S(testnum, flags, result, v1, v2, inst a4, f0, f1)
#define TEST_FP_CMP_D(testnum, inst, flags, result, v1, v2)              \
    TEST_FP_TO_INT_D(testnum, flags, result, v1, v2, inst a4, f0, f1)

/* a4 = inst(f0) with rounding mode `rm`: fcvt.w[u].s/d. */
#define TEST_FP_INT_S(testnum, inst, rm, flags, result, v1)              \
    TEST_FP_TO_INT_S(testnum, flags, result, v1, 0, inst a4, f0, rm)
#define TEST_FP_INT_D(testnum, inst, rm, flags, result, v1)              \
    TEST_FP_TO_INT_D(testnum, flags, result, v1, 0, inst a4, f0, rm)

/* a4 = fclass(f0), never any flag. */
#define TEST_FCLASS_S(testnum, result, v1)                               \
    TEST_FP_TO_INT_S(testnum, 0, result, v1, 0, fclass.s a4, f0)
#define TEST_FCLASS_D(testnum, result, v1)                               \
    TEST_FP_TO_INT_D(testnum, 0, result, v1, 0, fclass.d a4, f0)

/* f3 = inst(a1 = ival) with rounding mode `rm`: fcvt.s/d.w[u]. */
#define TEST_INT_FP_S(testnum, inst, rm, flags, result, ival)            \
    TEST_FP_S(testnum, flags, result, 0, 0, 0,                           \
        li a1, ival;                                                     \
        inst f3, a1, rm)
/* fcvt.d.w[u] is always exact, so it takes no rounding mode. */
#define TEST_INT_FP_D(testnum, inst, flags, result, ival)                \
    TEST_FP_D(testnum, flags, result, 0, 0, 0,                           \
        li a1, ival;                                                     \
        inst f3, a1)

/* fcvt.s.d: single result from a double operand. */
#define TEST_FCVT_S_D(testnum, rm, flags, result, v1)                    \
    FP_DATA_D(testnum, v1, 0, 0, result);                                \
    FP_PROLOGUE_D(testnum);                                              \
    fcvt.s.d f3, f0, rm;                                                 \
    fsflags a1, x0;                                                      \
    FP_CHECK_FLAGS(flags);                                               \
    fsd f3, 32(a0);                                                      \
    lw a4, 32(a0);                                                       \
    lw a3, 24(a0);                                                       \
    bne a4, a3, fail;                                                    \
    lw a4, 36(a0);                                                       \
    li a3, -1;                                                           \
    bne a4, a3, fail

/* fcvt.d.s: double result from a single operand (exact, but NaNs
 * canonicalise and sNaN raises NV). */
#define TEST_FCVT_D_S(testnum, flags, result, v1)                        \
    FP_DATA_D(testnum, v1, 0, 0, result);                                \
    FP_PROLOGUE_D(testnum);                                              \
    flw f0, 0(a0);                                                       \
    fcvt.d.s f3, f0;                                                     \
    fsflags a1, x0;                                                      \
    FP_CHECK_FLAGS(flags);                                               \
    FP_CHECK_RESULT_D

#endif /* RV32VM_ISA_TEST_H */
