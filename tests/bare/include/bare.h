/* bare.h - constants and the result report for the privileged bare-metal
 * tests in tests/bare/ (run by `rv32vm run --bare`, see tests/bare.rs).
 *
 * One source builds in two variants:
 *   default      HTIF: the result goes to the 64-bit `tohost` word
 *                (1 = pass, (N << 1) | 1 = case N failed).
 *   -DQEMU_VIRT  the same code for `qemu-system-riscv32 -M virt -bios none
 *                -kernel prog.elf`: the result goes to the sifive,test0
 *                syscon (0x5555 = pass, (N << 16) | 0x3333 = case N failed),
 *                the oracle that proves the expected values right.
 *
 * `report` works from M-mode at physical addresses and from an S-mode
 * kernel running in the top megapage (KVA_BASE, mapped to RAM_BASE):
 * it only uses pc-relative addresses (`lla`) and tells the two apart by
 * its own pc. The QEMU variant expects the kernel's page table to map the
 * syscon's megapage at DEV_KVA_BASE.
 *
 * Register convention: gp (x3) = number of the running case.
 */
#ifndef RV32VM_BARE_H
#define RV32VM_BARE_H

#define TESTNUM gp

#define RAM_BASE      0x80000000
/* The S-mode kernel's megapage: VA KVA_BASE.. -> PA RAM_BASE.. */
#define KVA_BASE      0xffc00000
#define KOFF          (KVA_BASE - RAM_BASE)
/* QEMU only: the device megapage (PA 0..4 MiB) at this kernel VA. */
#define DEV_KVA_BASE  0xff800000

#define SYSCON_BASE   0x00100000
#define SYSCON_PASS   0x5555
#define SYSCON_FAIL   0x3333

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

#define CAUSE_FETCH_ACCESS   1
#define CAUSE_ILLEGAL_INSN   2
#define CAUSE_LOAD_ACCESS    5
#define CAUSE_STORE_ACCESS   7
#define CAUSE_ECALL_U        8
#define CAUSE_ECALL_S        9
#define CAUSE_ECALL_M        11
#define CAUSE_FETCH_PAGE     12
#define CAUSE_LOAD_PAGE      13
#define CAUSE_STORE_PAGE     15

#define SATP_SV32 0x80000000
#define PTE_V 0x01
#define PTE_R 0x02
#define PTE_W 0x04
#define PTE_X 0x08
#define PTE_U 0x10
#define PTE_G 0x20
#define PTE_A 0x40
#define PTE_D 0x80

/* reg = the PTE for physical address `pa_reg` with `flags` (clobbers
 * pa_reg's copy only). */
#define MAKE_PTE(reg, pa_reg, flags)                                     \
    srli reg, pa_reg, 12;                                                \
    slli reg, reg, 10;                                                   \
    ori reg, reg, flags

/* Fail case TESTNUM unless reg == expected (clobbers t3, t4). */
#define CHECK_EQ(reg, expected)                                          \
    li t4, expected;                                                     \
    beq reg, t4, 99f;                                                    \
    j fail;                                                              \
99:

#define CHECK_REGS(reg, expected_reg)                                    \
    beq reg, expected_reg, 99f;                                          \
    j fail;                                                              \
99:

/* Fail unless (reg & mask) == expected (clobbers t3, t4). */
#define CHECK_MASKED(reg, mask, expected)                                \
    li t4, mask;                                                         \
    and t3, reg, t4;                                                     \
    li t4, expected;                                                     \
    beq t3, t4, 99f;                                                     \
    j fail;                                                              \
99:

/* Open PMP for S and U (QEMU checks it; rv32vm does not enforce PMP). */
#define OPEN_PMP                                                         \
    li t0, -1;                                                           \
    csrw pmpaddr0, t0;                                                   \
    li t0, 0x1f;                                                         \
    csrw pmpcfg0, t0

/* The report routine and the HTIF mailbox. `report`: a0 = 0 for a pass,
 * else the failing case number. `fail`: reports TESTNUM. Never return. */
#define BARE_REPORT_CODE                                                 \
    .balign 4;                                                           \
fail:                                                                    \
    mv a0, TESTNUM;                                                      \
    bnez a0, report;                                                     \
    li a0, 999;                                                          \
report:                                                                  \
    auipc t0, 0;                                                         \
    li t1, KVA_BASE;                                                     \
    bgeu t0, t1, 1f;                                                     \
    /* M-mode: data accesses must be physical for the report. */         \
    li t2, MSTATUS_MPRV;                                                 \
    csrc mstatus, t2;                                                    \
1:  BARE_REPORT_WRITE;                                                   \
2:  j 2b;                                                                \
    .pushsection .tohost, "aw", @progbits;                               \
    .balign 64;                                                          \
    .globl tohost;                                                       \
tohost: .dword 0;                                                        \
    .balign 64;                                                          \
    .globl fromhost;                                                     \
fromhost: .dword 0;                                                      \
    .popsection

#ifdef QEMU_VIRT
/* t0 = own pc, t1 = KVA_BASE, a0 = code. */
#define BARE_REPORT_WRITE                                                \
    li t2, SYSCON_BASE;                                                  \
    bltu t0, t1, 3f;                                                     \
    li t2, DEV_KVA_BASE + SYSCON_BASE;                                   \
3:  li t1, SYSCON_PASS;                                                  \
    beqz a0, 4f;                                                         \
    slli t1, a0, 16;                                                     \
    li t0, SYSCON_FAIL;                                                  \
    or t1, t1, t0;                                                       \
4:  sw t1, 0(t2)
#else
#define BARE_REPORT_WRITE                                                \
    slli t1, a0, 1;                                                      \
    ori t1, t1, 1;                                                       \
    lla t2, tohost;                                                      \
    sw t1, 0(t2);                                                        \
    sw zero, 4(t2)
#endif

#endif /* RV32VM_BARE_H */
