/* priv.h - runtime and macros for rv32vm's privileged-architecture tests.
 *
 * Each tests/priv/NAME.S is a bare-metal M-mode program for QEMU's `virt`
 * memory map. It is loaded at 0x8000_0000 and entered in M-mode, either by
 * `rv32vm boot --bios NAME.bin` or by `qemu-system-riscv32 -M virt -bios
 * NAME.bin` (the oracle that proves the expected values right).
 *
 * Reporting: every case prints "ok N description" on the 16550 UART; the
 * first failed check prints "FAIL N description: got 0x.. expected 0x.." and
 * exits through the sifive,test0 syscon with (N << 16) | 0x3333; a program
 * that gets through all its cases prints "PASS" and exits with 0x5555.
 *
 * Register conventions:
 *   gp      = number of the running case (set by TEST).
 *   t3, t4  = clobbered by every CHECK_* macro.
 *   t5, t6  = clobbered by EXPECT_*_TRAP and IN_S/IN_U; the trap handlers
 *             preserve every register.
 *   ra, a0, a5, t0-t2 = clobbered by TEST_OK and the print routines.
 *   Keep values across checks in s-registers.
 *   Local labels 90..99 are used by the macros: do not use them in code
 *   passed to IN_S/IN_U, except 96 (reserved for the test's own use there).
 *
 * Traps: both handlers (M: mtvec = m_trap_entry, S: stvec = s_trap_entry)
 * record cause, epc, tval and status (as it was at trap entry) in
 * m_trap_area / s_trap_area and count the traps. A trap that was announced
 * with EXPECT_M_TRAP(label) / EXPECT_S_TRAP(label) resumes at `label`, in
 * M-mode (MIE = 0) or S-mode (SIE = 0) respectively; any other trap fails
 * the program with a description of the trap.
 *
 * Address spaces: pt_std_init builds a root table that identity-maps the
 * devices and the program's 4 MiB (non-U, RWX, A and D set) and maps the
 * program again at U_ALIAS (0x4000_0000) with U = 1, so U-mode code runs at
 * its alias address (IN_U does that).
 */
#ifndef RV32VM_PRIV_H
#define RV32VM_PRIV_H

/* ------------------------------------------------------- machine map -- */
#define RAM_BASE        0x80000000
#define UART_BASE       0x10000000
#define UART_IER        1
#define UART_IIR        2
#define UART_IER_THRI   0x02
#define SYSCON_BASE     0x00100000
#define SYSCON_PASS     0x5555
#define SYSCON_FAIL     0x3333
#define CLINT_BASE      0x02000000
#define CLINT_MSIP      0x0
#define CLINT_MTIMECMP  0x4000
#define CLINT_MTIME     0xbff8
#define PLIC_BASE       0x0c000000
#define PLIC_PRIORITY(src)   (PLIC_BASE + 4 * (src))
#define PLIC_PENDING    (PLIC_BASE + 0x1000)
#define PLIC_ENABLE(ctx)     (PLIC_BASE + 0x2000 + 0x80 * (ctx))
#define PLIC_THRESHOLD(ctx)  (PLIC_BASE + 0x200000 + 0x1000 * (ctx))
#define PLIC_CLAIM(ctx)      (PLIC_BASE + 0x200004 + 0x1000 * (ctx))
#define PLIC_CTX_M      0
#define PLIC_CTX_S      1
#define UART_IRQ        10

/* --------------------------------------------------------------- CSRs -- */
#define MSTATUS_SIE   0x00000002
#define MSTATUS_MIE   0x00000008
#define MSTATUS_SPIE  0x00000020
#define MSTATUS_MPIE  0x00000080
#define MSTATUS_SPP   0x00000100
#define MSTATUS_MPP   0x00001800
#define MSTATUS_MPP_S 0x00000800
#define MSTATUS_MPP_U 0x00000000
#define MSTATUS_MPRV  0x00020000
#define MSTATUS_SUM   0x00040000
#define MSTATUS_MXR   0x00080000

#define IRQ_SSI  1
#define IRQ_MSI  3
#define IRQ_STI  5
#define IRQ_MTI  7
#define IRQ_SEI  9
#define IRQ_MEI  11
#define MIP_SSIP (1 << IRQ_SSI)
#define MIP_MSIP (1 << IRQ_MSI)
#define MIP_STIP (1 << IRQ_STI)
#define MIP_MTIP (1 << IRQ_MTI)
#define MIP_SEIP (1 << IRQ_SEI)
#define MIP_MEIP (1 << IRQ_MEI)

#define CAUSE_ILLEGAL_INSN  2
#define CAUSE_ECALL_U       8
#define CAUSE_ECALL_S       9
#define CAUSE_ECALL_M       11
#define CAUSE_FETCH_PAGE    12
#define CAUSE_LOAD_PAGE     13
#define CAUSE_STORE_PAGE    15
#define CAUSE_INTERRUPT     0x80000000

#define MENVCFGH_STCE       0x80000000
#define MCOUNTEREN_TM       0x2

/* ------------------------------------------------------------- Sv32 ---- */
#define SATP_SV32    0x80000000
#define SATP_ASID_SHIFT 22
#define PTE_V 0x01
#define PTE_R 0x02
#define PTE_W 0x04
#define PTE_X 0x08
#define PTE_U 0x10
#define PTE_G 0x20
#define PTE_A 0x40
#define PTE_D 0x80
#define PTE_RWX_AD (PTE_V | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D)
#define PTE_RW_AD  (PTE_V | PTE_R | PTE_W | PTE_A | PTE_D)

/* U-mode alias of the program's 4 MiB superpage in pt_std_init tables. */
#define U_ALIAS        0x40000000
#define U_ALIAS_OFFSET (U_ALIAS - RAM_BASE)

/* Offsets in m_trap_area / s_trap_area. */
#define TR_SAVE_T5 0
#define TR_RESUME  4
#define TR_CAUSE   8
#define TR_EPC     12
#define TR_TVAL    16
#define TR_STATUS  20
#define TR_COUNT   24
#define TR_VECTOR  28   /* 1 + vector-table entry the trap came through */
#define TR_SIZE    32

/* ------------------------------------------------------------ cases ---- */

/* Starts case `n`; `desc` (a string literal) is printed with its result. */
#define TEST(n, desc)                                                    \
    li gp, n;                                                            \
    .pushsection .rodata, "a";                                           \
90: .asciz desc;                                                         \
    .popsection;                                                         \
    la t3, 90b;                                                          \
    la t4, current_desc;                                                 \
    sw t3, 0(t4)

/* Prints "ok N description". Must run in M-mode or S-mode. */
#define TEST_OK                                                          \
    call print_ok_line

/* All cases passed: print PASS and power off with status 0. */
#define PASS_ALL  j pass_all

/* ------------------------------------------------------------ checks --- */

#define CHECK_EQ(reg, expected)                                          \
    mv t3, reg;                                                          \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

#define CHECK_REGS(reg, expected_reg)                                    \
    mv t3, reg;                                                          \
    mv t4, expected_reg;                                                 \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

/* (reg & mask) == expected */
#define CHECK_MASKED(reg, mask, expected)                                \
    li t4, mask;                                                         \
    and t3, reg, t4;                                                     \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

#define CHECK_CSR(csr, expected)                                         \
    csrr t3, csr;                                                        \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

#define CHECK_CSR_MASKED(csr, mask, expected)                            \
    csrr t3, csr;                                                        \
    li t4, mask;                                                         \
    and t3, t3, t4;                                                      \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

/* The 32-bit word at address `addr` equals `expected`. */
#define CHECK_WORD(addr, expected)                                       \
    li t3, addr;                                                         \
    lw t3, 0(t3);                                                        \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

/* The 32-bit word at symbol `sym` + `off` equals `expected`. */
#define CHECK_SYM_WORD(sym, off, expected)                               \
    la t3, sym;                                                          \
    lw t3, off(t3);                                                      \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

/* Trap records: `area` is m_trap_area or s_trap_area. */
#define CHECK_TRAP(area, field, expected)                                \
    la t3, area;                                                         \
    lw t3, field(t3);                                                    \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

#define CHECK_TRAP_MASKED(area, field, mask, expected)                   \
    la t3, area;                                                         \
    lw t3, field(t3);                                                    \
    li t4, mask;                                                         \
    and t3, t3, t4;                                                      \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

/* The recorded field equals the address of `label` (+ `offset`). */
#define CHECK_TRAP_ADDR(area, field, label, offset)                      \
    la t4, label;                                                        \
    li t3, offset;                                                       \
    add t4, t4, t3;                                                      \
    la t3, area;                                                         \
    lw t3, field(t3);                                                    \
    beq t3, t4, 99f;                                                     \
    j fail_check;                                                        \
99:

#define CHECK_M(field, expected)  CHECK_TRAP(m_trap_area, field, expected)
#define CHECK_S(field, expected)  CHECK_TRAP(s_trap_area, field, expected)
/* The last trap to M came back from lower-privilege code through ecall. */
#define CHECK_BACK_FROM_S  CHECK_M(TR_CAUSE, CAUSE_ECALL_S)
#define CHECK_BACK_FROM_U  CHECK_M(TR_CAUSE, CAUSE_ECALL_U)

/* Zero both trap records (counts included). Clobbers t3. */
#define RESET_TRAPS                                                      \
    la t3, m_trap_area;                                                  \
    sw zero, TR_CAUSE(t3); sw zero, TR_EPC(t3); sw zero, TR_TVAL(t3);    \
    sw zero, TR_STATUS(t3); sw zero, TR_COUNT(t3); sw zero, TR_VECTOR(t3); \
    la t3, s_trap_area;                                                  \
    sw zero, TR_CAUSE(t3); sw zero, TR_EPC(t3); sw zero, TR_TVAL(t3);    \
    sw zero, TR_STATUS(t3); sw zero, TR_COUNT(t3); sw zero, TR_VECTOR(t3)

/* ------------------------------------------------------------- traps --- */

/* The next trap to M resumes at `label` in M-mode. Clobbers t5, t6. */
#define EXPECT_M_TRAP(label)                                             \
    la t5, label;                                                        \
    la t6, m_trap_area;                                                  \
    sw t5, TR_RESUME(t6)

/* The next trap to S resumes at `label` in S-mode. Clobbers t5, t6. */
#define EXPECT_S_TRAP(label)                                             \
    la t5, label;                                                        \
    la t6, s_trap_area;                                                  \
    sw t5, TR_RESUME(t6)

/* Set mstatus.MIE: an interrupt must be taken right away, at label 94
 * (the instruction after the csrs), and resumes after the macro with
 * MIE = 0 again. Fails the case if none is taken. Clobbers t0, t5, t6. */
#define TAKE_M_INTERRUPT                                                 \
    EXPECT_M_TRAP(95f);                                                  \
    li t0, MSTATUS_MIE;                                                  \
    csrs mstatus, t0;                                                    \
94: nop; nop; nop; nop;                                                  \
    csrc mstatus, t0;                                                    \
    CANCEL_M_TRAP;                                                       \
    j fail_no_trap;                                                      \
95:

#define CANCEL_M_TRAP  la t6, m_trap_area; sw zero, TR_RESUME(t6)
#define CANCEL_S_TRAP  la t6, s_trap_area; sw zero, TR_RESUME(t6)

/* Run `code` in S-mode (entered by mret), then come back to M through
 * ecall. If `code` traps to M instead, M resumes right after the macro as
 * well: check m_trap_area's TR_CAUSE to tell which happened. */
#define IN_S(code...)                                                    \
    EXPECT_M_TRAP(98f);                                                  \
    la t5, 97f;                                                          \
    csrw mepc, t5;                                                       \
    li t5, MSTATUS_MPP;                                                  \
    csrc mstatus, t5;                                                    \
    li t5, MSTATUS_MPP_S;                                                \
    csrs mstatus, t5;                                                    \
    mret;                                                                \
97: code;                                                                \
    ecall;                                                               \
98:

/* As IN_S, for U-mode: `code` runs at its U_ALIAS address, so paging must
 * be on with a pt_std_init table. */
#define IN_U(code...)                                                    \
    EXPECT_M_TRAP(98f);                                                  \
    la t5, 97f;                                                          \
    li t6, U_ALIAS_OFFSET;                                               \
    add t5, t5, t6;                                                      \
    csrw mepc, t5;                                                       \
    li t5, MSTATUS_MPP;                                                  \
    csrc mstatus, t5;                                                    \
    mret;                                                                \
97: code;                                                                \
    ecall;                                                               \
98:

/* satp = Sv32 with root table `root` and `asid`; flushes the TLB. */
#define SET_SATP(root, asid)                                             \
    la t0, root;                                                         \
    srli t0, t0, 12;                                                     \
    li t1, SATP_SV32 | ((asid) << SATP_ASID_SHIFT);                      \
    or t0, t0, t1;                                                       \
    csrw satp, t0;                                                       \
    sfence.vma

/* Print a string literal. Clobbers ra, a0, t0-t2. */
#define PRINT(str)                                                       \
    .pushsection .rodata, "a";                                           \
90: .asciz str;                                                          \
    .popsection;                                                         \
    la a0, 90b;                                                          \
    call print_str

/* ----------------------------------------------------------- runtime --- */

    .option norvc
    .option norelax
    .section .text.init, "ax", @progbits
    .balign 4
    .globl _start
_start:
    la sp, stack_top
    la t0, m_trap_entry
    csrw mtvec, t0
    la t0, m_trap_area
    csrw mscratch, t0
    la t0, s_trap_entry
    csrw stvec, t0
    la t0, s_trap_area
    csrw sscratch, t0
    csrw mie, zero
    csrw mideleg, zero
    csrw medeleg, zero
    csrw satp, zero
    /* QEMU checks S/U accesses against PMP: open everything (NAPOT,
     * RWX). rv32vm does not enforce PMP. */
    li t0, -1
    csrw pmpaddr0, t0
    li t0, 0x1f
    csrw pmpcfg0, t0
    li gp, 0
    j main

/* --- M-mode trap handler -------------------------------------------- */
    .balign 64
m_trap_entry:
    csrrw t6, mscratch, t6
    sw t5, TR_SAVE_T5(t6)
m_trap_record:
    csrr t5, mcause
    sw t5, TR_CAUSE(t6)
    csrr t5, mepc
    sw t5, TR_EPC(t6)
    csrr t5, mtval
    sw t5, TR_TVAL(t6)
    csrr t5, mstatus
    sw t5, TR_STATUS(t6)
    lw t5, TR_COUNT(t6)
    addi t5, t5, 1
    sw t5, TR_COUNT(t6)
    lw t5, TR_RESUME(t6)
    beqz t5, m_unexpected_trap
    sw zero, TR_RESUME(t6)
    csrw mepc, t5
    /* Resume in M-mode with interrupts off. */
    li t5, MSTATUS_MPP
    csrs mstatus, t5
    li t5, MSTATUS_MPIE
    csrc mstatus, t5
    lw t5, TR_SAVE_T5(t6)
    csrrw t6, mscratch, t6
    mret

m_unexpected_trap:
    /* Paging off so the report can reach the UART from any state. */
    csrw satp, zero
    li t5, MSTATUS_MPRV
    csrc mstatus, t5
    call print_fail_prefix
    PRINT(": unexpected trap to M: mcause=")
    csrr a0, mcause
    call print_hex
    PRINT(" mepc=")
    csrr a0, mepc
    call print_hex
    PRINT(" mtval=")
    csrr a0, mtval
    call print_hex
    li a0, '\n'
    call print_char
    j fail_exit

/* --- S-mode trap handler -------------------------------------------- */
    .balign 64
s_trap_entry:
    csrrw t6, sscratch, t6
    sw t5, TR_SAVE_T5(t6)
s_trap_record:
    csrr t5, scause
    sw t5, TR_CAUSE(t6)
    csrr t5, sepc
    sw t5, TR_EPC(t6)
    csrr t5, stval
    sw t5, TR_TVAL(t6)
    csrr t5, sstatus
    sw t5, TR_STATUS(t6)
    lw t5, TR_COUNT(t6)
    addi t5, t5, 1
    sw t5, TR_COUNT(t6)
    lw t5, TR_RESUME(t6)
    beqz t5, s_unexpected_trap
    sw zero, TR_RESUME(t6)
    csrw sepc, t5
    /* Resume in S-mode with interrupts off. */
    li t5, MSTATUS_SPP
    csrs sstatus, t5
    li t5, MSTATUS_SPIE
    csrc sstatus, t5
    lw t5, TR_SAVE_T5(t6)
    csrrw t6, sscratch, t6
    sret

s_unexpected_trap:
    /* The UART and syscon are identity-mapped in every table the tests
     * use, so S-mode can report by itself. */
    call print_fail_prefix
    PRINT(": unexpected trap to S: scause=")
    csrr a0, scause
    call print_hex
    PRINT(" sepc=")
    csrr a0, sepc
    call print_hex
    PRINT(" stval=")
    csrr a0, stval
    call print_hex
    li a0, '\n'
    call print_char
    j fail_exit

/* --- vector tables (mtvec/stvec = table | 1) -------------------------- */
/* Entry N records N + 1 in TR_VECTOR, then continues in the handler. */
#define VECTOR_ENTRY(area_scratch, n, handler)                           \
    .balign 4;                                                           \
    j 91f;                                                               \
    .pushsection .text.vectors, "ax", @progbits;                         \
91: csrrw t6, area_scratch, t6;                                          \
    sw t5, TR_SAVE_T5(t6);                                               \
    li t5, (n) + 1;                                                      \
    sw t5, TR_VECTOR(t6);                                                \
    j handler;                                                           \
    .popsection

    .balign 64
    .globl m_vector_table
m_vector_table:
    VECTOR_ENTRY(mscratch, 0, m_trap_record)
    VECTOR_ENTRY(mscratch, 1, m_trap_record)
    VECTOR_ENTRY(mscratch, 2, m_trap_record)
    VECTOR_ENTRY(mscratch, 3, m_trap_record)
    VECTOR_ENTRY(mscratch, 4, m_trap_record)
    VECTOR_ENTRY(mscratch, 5, m_trap_record)
    VECTOR_ENTRY(mscratch, 6, m_trap_record)
    VECTOR_ENTRY(mscratch, 7, m_trap_record)
    VECTOR_ENTRY(mscratch, 8, m_trap_record)
    VECTOR_ENTRY(mscratch, 9, m_trap_record)
    VECTOR_ENTRY(mscratch, 10, m_trap_record)
    VECTOR_ENTRY(mscratch, 11, m_trap_record)

    .balign 64
    .globl s_vector_table
s_vector_table:
    VECTOR_ENTRY(sscratch, 0, s_trap_record)
    VECTOR_ENTRY(sscratch, 1, s_trap_record)
    VECTOR_ENTRY(sscratch, 2, s_trap_record)
    VECTOR_ENTRY(sscratch, 3, s_trap_record)
    VECTOR_ENTRY(sscratch, 4, s_trap_record)
    VECTOR_ENTRY(sscratch, 5, s_trap_record)
    VECTOR_ENTRY(sscratch, 6, s_trap_record)
    VECTOR_ENTRY(sscratch, 7, s_trap_record)
    VECTOR_ENTRY(sscratch, 8, s_trap_record)
    VECTOR_ENTRY(sscratch, 9, s_trap_record)
    VECTOR_ENTRY(sscratch, 10, s_trap_record)
    VECTOR_ENTRY(sscratch, 11, s_trap_record)

/* --- reporting -------------------------------------------------------- */

/* "ok N description\n" */
print_ok_line:
    mv a5, ra
    PRINT("ok ")
    mv a0, gp
    call print_dec
    li a0, ' '
    call print_char
    la a0, current_desc
    lw a0, 0(a0)
    call print_str
    li a0, '\n'
    call print_char
    mv ra, a5
    ret

/* "FAIL N description" (no newline). Clobbers a0, a5, t0-t2. */
print_fail_prefix:
    mv a5, ra
    PRINT("FAIL ")
    mv a0, gp
    call print_dec
    li a0, ' '
    call print_char
    la a0, current_desc
    lw a0, 0(a0)
    call print_str
    mv ra, a5
    ret

/* A trap the case waited for (TAKE_M_INTERRUPT) did not come. */
fail_no_trap:
    call print_fail_prefix
    PRINT(": the expected trap was not taken\n")
    j fail_exit

/* A CHECK_* failed: t3 = value seen, t4 = value expected. */
fail_check:
    mv s10, t3
    mv s11, t4
    call print_fail_prefix
    PRINT(": got ")
    mv a0, s10
    call print_hex
    PRINT(" expected ")
    mv a0, s11
    call print_hex
    li a0, '\n'
    call print_char
fail_exit:
    li t0, SYSCON_BASE
    slli t1, gp, 16
    bnez t1, 1f
    li t1, 255 << 16
1:  li t2, SYSCON_FAIL
    or t1, t1, t2
    sw t1, 0(t0)
2:  j 2b

pass_all:
    PRINT("PASS\n")
    li t0, SYSCON_BASE
    li t1, SYSCON_PASS
    sw t1, 0(t0)
1:  j 1b

/* Leaf print routines: clobber a0, t0-t2 only. */
print_char:
    li t0, UART_BASE
    sb a0, 0(t0)
    ret

print_str:
    li t0, UART_BASE
1:  lbu t1, 0(a0)
    beqz t1, 2f
    sb t1, 0(t0)
    addi a0, a0, 1
    j 1b
2:  ret

/* "0x" and eight hex digits. */
print_hex:
    li t0, UART_BASE
    li t1, '0'
    sb t1, 0(t0)
    li t1, 'x'
    sb t1, 0(t0)
    li t2, 28
1:  srl t1, a0, t2
    andi t1, t1, 15
    addi t1, t1, '0'
    sltiu t0, t1, '9' + 1
    bnez t0, 2f
    addi t1, t1, 'a' - '0' - 10
2:  li t0, UART_BASE
    sb t1, 0(t0)
    addi t2, t2, -4
    bgez t2, 1b
    ret

/* Unsigned decimal. */
print_dec:
    la t0, dec_buf_end
1:  li t1, 10
    remu t2, a0, t1
    divu a0, a0, t1
    addi t2, t2, '0'
    addi t0, t0, -1
    sb t2, 0(t0)
    bnez a0, 1b
    li t1, UART_BASE
2:  lbu t2, 0(t0)
    beqz t2, 3f
    sb t2, 0(t1)
    addi t0, t0, 1
    j 2b
3:  ret

/* --- page tables ------------------------------------------------------ */

/* root[va >> 22] = leaf for the 4 MiB superpage at pa. a0 = root, a1 = va,
 * a2 = pa, a3 = flags. Clobbers t0, t1. */
pt_map_super:
    srli t0, a1, 22
    slli t0, t0, 2
    add t0, t0, a0
    srli t1, a2, 12
    slli t1, t1, 10
    or t1, t1, a3
    sw t1, 0(t0)
    ret

/* Maps the 4 KiB page va -> pa through the second-level table a4: root
 * entry -> a4, a4 entry = leaf. a0 = root, a1 = va, a2 = pa, a3 = flags.
 * Returns the leaf PTE's address in a0. Clobbers t0, t1. */
pt_map_4k:
    srli t0, a1, 22
    slli t0, t0, 2
    add t0, t0, a0
    srli t1, a4, 12
    slli t1, t1, 10
    ori t1, t1, PTE_V
    sw t1, 0(t0)
    srli t0, a1, 12
    andi t0, t0, 0x3ff
    slli t0, t0, 2
    add a0, a4, t0
    srli t1, a2, 12
    slli t1, t1, 10
    or t1, t1, a3
    sw t1, 0(a0)
    ret

/* Standard mappings in root table a0: devices and the program identity
 * mapped (not U), the program again at U_ALIAS with U. Clobbers a1-a3,
 * a6, t0, t1. */
pt_std_init:
    mv a6, ra
    li a3, PTE_RW_AD
    li a1, 0x00000000       /* syscon, RTC */
    mv a2, a1
    call pt_map_super
    li a1, CLINT_BASE
    mv a2, a1
    call pt_map_super
    li a1, PLIC_BASE
    mv a2, a1
    call pt_map_super
    li a1, PLIC_BASE + 0x400000
    mv a2, a1
    call pt_map_super
    li a1, UART_BASE
    mv a2, a1
    call pt_map_super
    li a3, PTE_RWX_AD
    li a1, RAM_BASE
    mv a2, a1
    call pt_map_super
    li a3, PTE_RWX_AD | PTE_U
    li a1, U_ALIAS
    li a2, RAM_BASE
    call pt_map_super
    mv ra, a6
    ret

/* --- data ------------------------------------------------------------- */
    .data
    .balign 4
current_desc: .word no_desc
    .section .rodata, "a"
no_desc: .asciz "(before the first case)"
    .bss
    .balign 64
    .globl m_trap_area, s_trap_area
m_trap_area: .skip TR_SIZE
s_trap_area: .skip TR_SIZE
dec_buf: .skip 15
dec_buf_end: .skip 1     /* stays 0: the string's terminator */
    .balign 16
    .skip 4096
stack_top:

    .text
    .balign 4
#endif
