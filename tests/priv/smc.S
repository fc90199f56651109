/* smc.S - self-modifying code.
 *
 * Case 1 is architectural: a store over code that already ran, then
 * fence.i, then the new instruction must run.
 *
 * Cases 2-4 leave fence.i out. The ISA allows the hart to keep running the
 * old instruction then; rv32vm PROMISES MORE (a store into a page that holds
 * decoded code invalidates that code, even within the running block), and
 * QEMU behaves the same way, so these cases expect the NEW instruction.
 * They check rv32vm's promise, not the RISC-V spec.
 *
 * Every case repeats its patch-and-run ROUNDS times with a different value
 * each time, so that code which has become hot (and compiled, in the JIT
 * tiers) is patched as well.
 */
#include "priv.h"

#define ROUNDS 40
/* addi a0, zero, n */
#define INSN_LI_A0(n) (0x00000513 | ((n) << 20))

main:
    TEST(1, "store over code that ran + fence.i: the new instruction runs")
    call smc_patched_by_text
    CHECK_EQ(a0, 1)
    li s0, 1
1:  addi s0, s0, 1
    slli t2, s0, 20
    li t1, INSN_LI_A0(0)
    or t1, t1, t2
    la t0, smc_patched_by_text
    sw t1, 0(t0)
    fence.i
    call smc_patched_by_text
    CHECK_REGS(a0, s0)
    li t0, ROUNDS
    blt s0, t0, 1b
    TEST_OK

    /* rv32vm promise (not the ISA): the store is in .text, the patched code
     * in another 4 KiB page (.smc), no fence.i. */
    TEST(2, "no fence.i, code in another page: the new instruction runs")
    la t0, smc_other_page
    li t1, INSN_LI_A0(100)
    sw t1, 0(t0)
    fence.i
    call smc_other_page
    CHECK_EQ(a0, 100)
    li s0, 100
1:  addi s0, s0, 1
    slli t2, s0, 20
    li t1, INSN_LI_A0(0)
    or t1, t1, t2
    la t0, smc_other_page
    sw t1, 0(t0)
    call smc_other_page
    CHECK_REGS(a0, s0)
    li t0, 100 + ROUNDS
    blt s0, t0, 1b
    TEST_OK

    /* rv32vm promise (not the ISA): the store patches the very next
     * instruction of the block it runs in. QEMU goes further than the ISA
     * only across translation blocks: without precise SMC (an x86/s390x
     * feature in QEMU) it runs the rest of the current block as translated,
     * so it returns the old value here; the QEMU build runs the case without
     * checking the values. */
#ifdef QEMU_ORACLE
#define CHECK_SMC_SAME_BLOCK(reg, expected)
#define CHECK_SMC_SAME_BLOCK_REGS(reg, expected_reg)
#else
#define CHECK_SMC_SAME_BLOCK(reg, expected) CHECK_EQ(reg, expected)
#define CHECK_SMC_SAME_BLOCK_REGS(reg, expected_reg) CHECK_REGS(reg, expected_reg)
#endif
    TEST(3, "no fence.i, same block: a store patches the next instruction")
    li a1, INSN_LI_A0(200)
    call smc_patch_next
    CHECK_SMC_SAME_BLOCK(a0, 200)
    li s0, 200
1:  addi s0, s0, 1
    slli t2, s0, 20
    li a1, INSN_LI_A0(0)
    or a1, a1, t2
    call smc_patch_next
    CHECK_SMC_SAME_BLOCK_REGS(a0, s0)
    li t0, 200 + ROUNDS
    blt s0, t0, 1b
    TEST_OK

    /* rv32vm promise (not the ISA): store and patched code share a page but
     * not a block. */
    TEST(4, "no fence.i, same page, another block: the new instruction runs")
    li a1, INSN_LI_A0(300)
    call smc_patch_neighbour
    CHECK_EQ(a0, 300)
    li s0, 300
1:  addi s0, s0, 1
    slli t2, s0, 20
    li a1, INSN_LI_A0(0)
    or a1, a1, t2
    call smc_patch_neighbour
    CHECK_REGS(a0, s0)
    li t0, 300 + ROUNDS
    blt s0, t0, 1b
    TEST_OK

    PASS_ALL

/* The patchable code, in the writable+executable .smc section: its first
 * page holds smc_patched_by_text and smc_other_page, its second page the
 * same-page cases. */
    .section .smc, "awx", @progbits
    .balign 4096
smc_patched_by_text:
    li a0, 1
    ret

smc_other_page:
    li a0, 0
    ret

    .balign 4096
/* Writes a1 over the instruction after the store, then runs it. */
smc_patch_next:
    la t0, 1f
    sw a1, 0(t0)
1:  li a0, 0
    ret

/* Writes a1 over smc_neighbour (same page, another block), then runs it. */
smc_patch_neighbour:
    la t0, smc_neighbour
    sw a1, 0(t0)
    j smc_neighbour
    .balign 64
smc_neighbour:
    li a0, 0
    ret
    .balign 4096
