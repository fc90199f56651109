/* vm_demand.S - Sv32 under `run --bare`, in the layout of the riscv-tests
 * `-v` environment: M-mode builds the page tables and enters an S-mode
 * kernel that runs in the top megapage (VA 0xffc00000 -> RAM), which runs
 * a U-mode program at low virtual addresses with demand paging.
 *
 *  - The U program starts on an unmapped page: its first fetch takes an
 *    instruction page fault (not an access fault), which the kernel
 *    answers by mapping the page; its data pages are mapped the same way
 *    on first touch (load and store page faults), then it continues.
 *  - It calls a function on another page through a direct `jal`, several
 *    times, then asks the kernel (ecall) to remap that page to other code
 *    with only sfence.vma (no fence.i): the same calls must now run the
 *    new code (decoded and compiled blocks must not outlive the mapping).
 *    Then the kernel switches between two address spaces (ASIDs 1 and 0)
 *    that map the page to different code, by satp writes alone.
 *  - The kernel checks the faults it saw (cause, stval, in order) and that
 *    the hardware set A and D in the PTEs (read back), in its own megapage
 *    PTE too; then SUM and MXR from S-mode, and that satp writes alone
 *    (no privilege change, no sfence.vma) switch both data and code
 *    translations between the two address spaces. It reports through `tohost` at
 *    its kernel virtual address: the HTIF watch is on the physical address.
 *
 * Anything that traps to M fails with 100 + mcause (e.g. 101: the fetch
 * at the kernel's virtual address raised an access fault).
 */
#include "bare.h"

/* U-mode virtual addresses. */
#define U_CODE_VA   0x00001000  /* user_main's page */
#define U_FN_VA     0x00002000  /* the page after it: user_fn_one, later user_fn_two */
#define U_DATA_A    0x00010000  /* load, then store: A and D */
#define U_DATA_B    0x00020000  /* load only: A, not D */
#define U_DATA_C    0x00030000  /* store first: A and D */
/* S-mode test mappings (MXR). */
#define S_XONLY_VA  0x00040000  /* supervisor page, X only -> user_fn_one */
#define U_XONLY_VA  0x00041000  /* user page, X only -> user_fn_one */
#define S_FN_VA     0x00050000  /* supervisor code: user_fn_one / user_fn_two */

/* U -> kernel requests (a7 at ecall). */
#define REQ_REMAP   1
#define REQ_DONE    2
#define REQ_FAIL    3           /* a0 = case number */
#define REQ_SWITCH  4           /* toggle satp between root_b and root_pt */

#define POOL_PAGES  8
#define LOG_MAX     16
#define LOG_ENTRIES 11          /* traps the kernel expects: expected_log */

/* Expect the next S-mode access to trap to S; resume at `label`. */
#define S_EXPECT(label)                                                  \
    lla t5, label;                                                       \
    lla t6, s_resume;                                                    \
    sw t5, 0(t6)

/* Fail unless the last expected S trap had `cause` and stval = `tval`. */
#define CHECK_S_TRAP(cause, tval)                                        \
    lla t3, s_record;                                                    \
    lw t3, 0(t3);                                                        \
    CHECK_EQ(t3, cause);                                                 \
    lla t3, s_record;                                                    \
    lw t3, 4(t3);                                                        \
    CHECK_EQ(t3, tval)

    .option norvc
    .option norelax
    .section .text.init, "ax", @progbits
    .globl _start
_start:
    li TESTNUM, 0
    lla t0, m_trap
    csrw mtvec, t0
    OPEN_PMP
    lla s0, root_pt
    /* Kernel megapage, RWX with A = D = 0: the hardware must set them. */
    li t0, (RAM_BASE >> 12) << 10 | PTE_V | PTE_R | PTE_W | PTE_X
    li t1, 4 * (KVA_BASE >> 22)
    add t1, s0, t1
    sw t0, 0(t1)
#ifdef QEMU_VIRT
    li t0, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D
    li t1, 4 * (DEV_KVA_BASE >> 22)
    add t1, s0, t1
    sw t0, 0(t1)
#endif
    /* VA 0..4 MiB: the user's level-0 table, filled on demand. */
    lla t1, user_l0
    MAKE_PTE(t0, t1, PTE_V)
    sw t0, 0(s0)
    srli t0, s0, 12
    li t1, SATP_SV32
    or t0, t0, t1
    csrw satp, t0
    sfence.vma
    li t0, (1 << CAUSE_ECALL_U) | (1 << CAUSE_FETCH_PAGE) | (1 << CAUSE_LOAD_PAGE) | (1 << CAUSE_STORE_PAGE)
    csrw medeleg, t0
    csrw mideleg, zero
    csrw mie, zero
    lla t0, kernel_entry
    li t1, KOFF
    add t0, t0, t1
    csrw mepc, t0
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    li t0, MSTATUS_MPP_S
    csrs mstatus, t0
    mret

/* Nothing may trap to M: fail with 100 + mcause. */
    .balign 4
m_trap:
    csrr a0, mcause
    addi a0, a0, 100
    j report

BARE_REPORT_CODE

/* ------------------------------------------------------------------ *
 * The S-mode kernel: everything below runs at KVA_BASE + offset.      *
 * ------------------------------------------------------------------ */
    .text
    .balign 4
kernel_entry:
    li TESTNUM, 1               /* 1: reaching the kernel at its VA */
    auipc t0, 0
    li t1, KVA_BASE
    bgeu t0, t1, 1f
    j fail
1:  lla t0, u_trap
    csrw stvec, t0
    lla t0, u_save
    csrw sscratch, t0
    /* Enter U at an unmapped page. */
    li t0, U_CODE_VA
    csrw sepc, t0
    li t0, MSTATUS_SPP
    csrc sstatus, t0
    li TESTNUM, 2               /* 2: the U program and its page faults */
    sret

/* Traps from U: page faults map pages, ecalls are requests. Saves and
 * restores every register it uses on the kernel's save area. */
    .balign 4
u_trap:
    csrrw sp, sscratch, sp
    sw ra, 0(sp)
    sw t0, 4(sp)
    sw t1, 8(sp)
    sw t2, 12(sp)
    sw a0, 16(sp)
    sw a1, 20(sp)
    sw a2, 24(sp)
    sw t3, 28(sp)
    sw t4, 32(sp)
    csrr t0, scause
    csrr t1, stval
    /* Log (cause, stval). */
    lla t2, fault_count
    lw t3, 0(t2)
    li t4, LOG_MAX
    bgeu t3, t4, fail
    addi t4, t3, 1
    sw t4, 0(t2)
    slli t3, t3, 3
    lla t2, fault_log
    add t2, t2, t3
    sw t0, 0(t2)
    sw t1, 4(t2)
    li t2, CAUSE_ECALL_U
    beq t0, t2, u_ecall
    li t2, CAUSE_FETCH_PAGE
    beq t0, t2, u_fetch_fault
    li t2, CAUSE_LOAD_PAGE
    beq t0, t2, u_data_fault
    li t2, CAUSE_STORE_PAGE
    beq t0, t2, u_data_fault
    addi TESTNUM, t0, 50        /* 50 + scause: an unexpected trap from U */
    j fail

u_fetch_fault:
    srli a0, t1, 12
    slli a0, a0, 12
    li t2, U_CODE_VA
    lla a1, user_main
    beq a0, t2, 1f
    li t2, U_FN_VA
    lla a1, user_fn_one
    beq a0, t2, 1f
    li TESTNUM, 60              /* 60: a fetch fault at an unexpected address */
    j fail
1:  li t2, KOFF
    sub a1, a1, t2              /* kernel VA -> PA */
    li a2, PTE_V | PTE_R | PTE_X | PTE_U
    call map_user_page
    j u_return

u_data_fault:
    srli a0, t1, 12
    slli a0, a0, 12
    li t2, U_DATA_A
    bltu a0, t2, 2f
    li t2, U_DATA_C
    bgtu a0, t2, 2f
    /* A fresh zeroed page from the pool. */
    lla t2, pool_next
    lw t3, 0(t2)
    li t4, POOL_PAGES
    bgeu t3, t4, 2f
    addi t4, t3, 1
    sw t4, 0(t2)
    slli t3, t3, 12
    lla a1, page_pool
    add a1, a1, t3              /* kernel VA of the page */
    li t2, 1024
1:  sw zero, 0(a1)
    addi a1, a1, 4
    addi t2, t2, -1
    bnez t2, 1b
    addi a1, a1, -2048
    addi a1, a1, -2048
    li t2, KOFF
    sub a1, a1, t2
    li a2, PTE_V | PTE_R | PTE_W | PTE_U
    call map_user_page
    j u_return
2:  li TESTNUM, 61              /* 61: a data fault outside the data pages */
    j fail

u_ecall:
    csrr t0, sepc
    addi t0, t0, 4
    csrw sepc, t0
    /* The user's a7 (not saved: never clobbered here) is the request. */
    li t2, REQ_REMAP
    beq a7, t2, 1f
    li t2, REQ_DONE
    beq a7, t2, kernel_checks
    li t2, REQ_SWITCH
    beq a7, t2, u_switch
    li t2, REQ_FAIL
    lw a0, 16(sp)
    beq a7, t2, report
    li TESTNUM, 62              /* 62: an unknown request */
    j fail
1:  /* Remap U_FN_VA to user_fn_two: only sfence.vma, no fence.i. */
    li a0, U_FN_VA
    lla a1, user_fn_two
    li t2, KOFF
    sub a1, a1, t2
    li a2, PTE_V | PTE_R | PTE_X | PTE_U
    call map_user_page
    j u_return

/* The first switch builds root_b: root_pt's copy whose user table maps
 * U_FN_VA to user_fn_one (root_pt maps it to user_fn_two by now), then
 * fences once. Every switch after that is a satp write alone. */
u_switch:
    lla t2, switch_count
    lw t3, 0(t2)
    addi t4, t3, 1
    sw t4, 0(t2)
    bnez t3, 3f
    lla a0, root_pt
    lla a1, root_b
    call copy_page
    lla a0, user_l0
    lla a1, user_l0_b
    call copy_page
    li t2, KOFF
    lla a1, user_l0_b
    sub a1, a1, t2
    MAKE_PTE(t4, a1, PTE_V)
    lla a0, root_b
    sw t4, 0(a0)
    lla a1, user_fn_one
    sub a1, a1, t2
    MAKE_PTE(t4, a1, PTE_V | PTE_R | PTE_X | PTE_U)
    lla a0, user_l0_b
    sw t4, 4 * (U_FN_VA >> 12)(a0)
    sfence.vma
3:  andi t3, t3, 1
    lla a0, root_b
    li a1, SATP_SV32 | (1 << 22)    /* ASID 1 */
    beqz t3, 4f
    lla a0, root_pt
    li a1, SATP_SV32                /* ASID 0 */
4:  li t2, KOFF
    sub a0, a0, t2
    srli a0, a0, 12
    or a0, a0, a1
    csrw satp, a0
    j u_return

/* Copy the 4 KiB page at a0 to a1. Clobbers a0-a2, t4. */
copy_page:
    li a2, 1024
1:  lw t4, 0(a0)
    sw t4, 0(a1)
    addi a0, a0, 4
    addi a1, a1, 4
    addi a2, a2, -1
    bnez a2, 1b
    ret

u_return:
    lw ra, 0(sp)
    lw t0, 4(sp)
    lw t1, 8(sp)
    lw t2, 12(sp)
    lw a0, 16(sp)
    lw a1, 20(sp)
    lw a2, 24(sp)
    lw t3, 28(sp)
    lw t4, 32(sp)
    csrrw sp, sscratch, sp
    sret

/* Map the user page at VA a0 (< 4 MiB) to PA a1 with flags a2 in
 * user_l0, then sfence.vma. Clobbers a1, t2, t3. */
map_user_page:
    srli t3, a1, 12
    slli t3, t3, 10
    or t3, t3, a2
    srli t2, a0, 12
    andi t2, t2, 0x3ff
    slli t2, t2, 2              /* VPN[0] * 4 */
    lla a1, user_l0
    add t2, t2, a1
    sw t3, 0(t2)
    sfence.vma a0, zero
    ret

/* U finished: check what happened, then SUM and MXR from S-mode. */
kernel_checks:
    lla t0, s_trap
    csrw stvec, t0

    li TESTNUM, 3               /* 3: the faults, in order */
    lla s0, fault_log
    lla t0, fault_count
    lw t0, 0(t0)
    CHECK_EQ(t0, LOG_ENTRIES)
    lla s1, expected_log
    li s2, 2 * LOG_ENTRIES
1:  lw t0, 0(s0)
    lw t1, 0(s1)
    CHECK_REGS(t0, t1)
    addi s0, s0, 4
    addi s1, s1, 4
    addi s2, s2, -1
    bnez s2, 1b

    li TESTNUM, 4               /* 4: the U program's own checks passed */
    li t1, MSTATUS_SUM
    csrs sstatus, t1
    li t0, U_DATA_C
    lw t0, 0(t0)                /* its result word */
    csrc sstatus, t1
    CHECK_EQ(t0, 0x600d)

    li TESTNUM, 5               /* 5: A and D set by hardware, read back */
    lla s0, user_l0
    lw t0, 4 * (U_CODE_VA >> 12)(s0)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A)
    lw t0, 4 * (U_FN_VA >> 12)(s0)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A)
    li t1, 4 * (U_DATA_A >> 12)
    add t1, s0, t1
    lw t0, 0(t1)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A | PTE_D)
    li t1, 4 * (U_DATA_B >> 12)
    add t1, s0, t1
    lw t0, 0(t1)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A)
    li t1, 4 * (U_DATA_C >> 12)
    add t1, s0, t1
    lw t0, 0(t1)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A | PTE_D)
    lla t0, root_pt
    li t1, 4 * (KVA_BASE >> 22)
    add t0, t0, t1
    lw t0, 0(t0)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A | PTE_D)

    li TESTNUM, 6               /* 6: S load of a U page without SUM faults */
    li s0, U_DATA_A
    S_EXPECT(1f)
    lw t0, 4(s0)
    j fail
1:  CHECK_S_TRAP(CAUSE_LOAD_PAGE, U_DATA_A + 4)

    li TESTNUM, 7               /* 7: ... and a store too */
    S_EXPECT(1f)
    sw zero, 8(s0)
    j fail
1:  CHECK_S_TRAP(CAUSE_STORE_PAGE, U_DATA_A + 8)

    li TESTNUM, 8               /* 8: with SUM, S loads and stores U pages */
    li t0, MSTATUS_SUM
    csrs sstatus, t0
    lw t0, 4(s0)
    CHECK_EQ(t0, 0x1234abcd)
    li t1, 0x5151
    sw t1, 12(s0)
    lw t0, 12(s0)
    CHECK_EQ(t0, 0x5151)

    li TESTNUM, 9               /* 9: ... but never executes them */
    li t0, U_CODE_VA
    S_EXPECT(1f)
    jalr t0
    j fail
1:  CHECK_S_TRAP(CAUSE_FETCH_PAGE, U_CODE_VA)
    li t0, MSTATUS_SUM
    csrc sstatus, t0

    /* Execute-only pages for MXR. */
    li a0, S_XONLY_VA
    lla a1, user_fn_one
    li t2, KOFF
    sub a1, a1, t2
    li a2, PTE_V | PTE_X
    call map_user_page
    li a0, U_XONLY_VA
    lla a1, user_fn_one
    li t2, KOFF
    sub a1, a1, t2
    li a2, PTE_V | PTE_X | PTE_U
    call map_user_page
    lla t0, user_fn_one
    lw s3, 0(t0)                /* the word MXR must let S read */

    li TESTNUM, 10              /* 10: X-only page: load faults without MXR */
    li s0, S_XONLY_VA
    S_EXPECT(1f)
    lw t0, 0(s0)
    j fail
1:  CHECK_S_TRAP(CAUSE_LOAD_PAGE, S_XONLY_VA)

    li TESTNUM, 11              /* 11: with MXR it reads */
    li t0, MSTATUS_MXR
    csrs sstatus, t0
    lw t0, 0(s0)
    CHECK_REGS(t0, s3)

    li TESTNUM, 12              /* 12: MXR never makes a page writable */
    S_EXPECT(1f)
    sw zero, 0(s0)
    j fail
1:  CHECK_S_TRAP(CAUSE_STORE_PAGE, S_XONLY_VA)

    li TESTNUM, 13              /* 13: X-only U page: MXR without SUM faults */
    li s0, U_XONLY_VA
    S_EXPECT(1f)
    lw t0, 0(s0)
    j fail
1:  CHECK_S_TRAP(CAUSE_LOAD_PAGE, U_XONLY_VA)

    li TESTNUM, 14              /* 14: MXR and SUM: readable */
    li t0, MSTATUS_SUM
    csrs sstatus, t0
    lw t0, 0(s0)
    CHECK_REGS(t0, s3)

    li TESTNUM, 15              /* 15: SUM without MXR: faults again */
    li t0, MSTATUS_MXR
    csrc sstatus, t0
    S_EXPECT(1f)
    lw t0, 0(s0)
    j fail
1:  CHECK_S_TRAP(CAUSE_LOAD_PAGE, U_XONLY_VA)

    li TESTNUM, 16              /* 16: A set on the MXR page by the reads */
    lla s0, user_l0
    lw t0, 4 * (S_XONLY_VA >> 12)(s0)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A)

    /* root_b (built at the U program's first switch) now maps U_DATA_B
     * to U_DATA_A's page, and S_FN_VA to user_fn_two where root_pt maps
     * it to user_fn_one (supervisor pages). One fence for the new PTEs,
     * then satp writes alone. */
    lla s0, user_l0
    lla s1, user_l0_b
    li t1, 4 * (U_DATA_A >> 12)
    add t1, s0, t1
    lw t0, 0(t1)
    li t1, 4 * (U_DATA_B >> 12)
    add t1, s1, t1
    sw t0, 0(t1)
    li t2, KOFF
    lla a1, user_fn_one
    sub a1, a1, t2
    MAKE_PTE(t0, a1, PTE_V | PTE_R | PTE_X)
    sw t0, 4 * (S_FN_VA >> 12)(s0)
    lla a1, user_fn_two
    sub a1, a1, t2
    MAKE_PTE(t0, a1, PTE_V | PTE_R | PTE_X)
    sw t0, 4 * (S_FN_VA >> 12)(s1)
    sfence.vma
    lla s4, root_pt
    sub s4, s4, t2
    srli s4, s4, 12
    li t0, SATP_SV32            /* ASID 0 */
    or s4, s4, t0
    lla s5, root_b
    sub s5, s5, t2
    srli s5, s5, 12
    li t0, SATP_SV32 | (1 << 22) /* ASID 1 */
    or s5, s5, t0

    li TESTNUM, 17              /* 17: satp writes alone switch data translations */
    li s0, U_DATA_B             /* SUM is still set */
    lw t0, 4(s0)
    CHECK_EQ(t0, 0)
    csrw satp, s5
    lw t0, 4(s0)
    CHECK_EQ(t0, 0x1234abcd)
    csrw satp, s4
    lw t0, 4(s0)
    CHECK_EQ(t0, 0)

    li TESTNUM, 18              /* 18: ... and code translations */
    li s0, S_FN_VA
    jalr s0
    CHECK_EQ(a0, 1)
    csrw satp, s5
    jalr s0
    CHECK_EQ(a0, 2)
    csrw satp, s4
    jalr s0
    CHECK_EQ(a0, 1)

    li TESTNUM, 19              /* 19: sfence.vma alone makes a remap visible */
    lla s1, user_l0
    lla t1, user_l0_b
    lw t0, 4 * (S_FN_VA >> 12)(t1)
    sw t0, 4 * (S_FN_VA >> 12)(s1)      /* S_FN_VA -> user_fn_two */
    li t1, 4 * (U_DATA_A >> 12)
    add t1, s1, t1
    lw t0, 0(t1)
    li t1, 4 * (U_DATA_B >> 12)
    add t1, s1, t1
    sw t0, 0(t1)                        /* U_DATA_B -> U_DATA_A's page */
    sfence.vma
    jalr s0
    CHECK_EQ(a0, 2)
    li s0, U_DATA_B
    lw t0, 4(s0)
    CHECK_EQ(t0, 0x1234abcd)

    li a0, 0
    j report

/* Expected traps from S-mode: record (scause, stval), resume. */
    .balign 4
s_trap:
    lla t6, s_resume
    lw t5, 0(t6)
    beqz t5, 1f
    sw zero, 0(t6)
    csrw sepc, t5
    lla t6, s_record
    csrr t5, scause
    sw t5, 0(t6)
    csrr t5, stval
    sw t5, 4(t6)
    sret
1:  csrr a0, scause
    addi a0, a0, 70             /* 70 + scause: an unexpected trap in S */
    j report

/* ------------------------------------------------------------------ *
 * The U program: user_main at U_CODE_VA, the function page after it.  *
 * ------------------------------------------------------------------ */
    .section .text.user, "ax", @progbits
    .balign 4096
user_main:
    li s0, U_DATA_A
    lw a0, 0(s0)                /* load page fault, then 0 */
    li a6, 20
    bnez a0, u_fail
    li a1, 0x1234abcd
    sw a1, 4(s0)                /* mapped RW: no fault, sets D */
    lw a2, 4(s0)
    li a6, 21
    bne a2, a1, u_fail
    li s1, U_DATA_B
    lw a3, 8(s1)                /* load page fault, read only */
    li a6, 22
    bnez a3, u_fail
    li s2, U_DATA_C
    li a4, 0x55
    sw a4, 16(s2)               /* store page fault, then the store */
    lw a5, 16(s2)
    li a6, 23
    bne a5, a4, u_fail
    /* A direct call to the next page, three times (compiled, chained). */
    li s3, 3
1:  jal user_fn_one             /* the first one faults */
    li a6, 24
    li t0, 1
    bne a0, t0, u_fail
    addi s3, s3, -1
    bnez s3, 1b
    li a7, REQ_REMAP
    ecall
    li s3, 3
2:  jal user_fn_one             /* now maps to user_fn_two */
    li a6, 25
    li t0, 2
    bne a0, t0, u_fail
    addi s3, s3, -1
    bnez s3, 2b
    /* Two address spaces, switched by satp writes alone. */
    li a7, REQ_SWITCH           /* root_b, ASID 1: user_fn_one */
    ecall
    jal user_fn_one
    li a6, 26
    li t0, 1
    bne a0, t0, u_fail
    li a7, REQ_SWITCH           /* root_pt, ASID 0: user_fn_two */
    ecall
    jal user_fn_one
    li a6, 27
    li t0, 2
    bne a0, t0, u_fail
    li a7, REQ_SWITCH           /* root_b again */
    ecall
    jal user_fn_one
    li a6, 28
    li t0, 1
    bne a0, t0, u_fail
    li a7, REQ_SWITCH           /* and back */
    ecall
    li t0, 0x600d
    sw t0, 0(s2)                /* the result word the kernel reads */
    li a7, REQ_DONE
    ecall
u_fail:
    mv a0, a6
    li a7, REQ_FAIL
    ecall
1:  j 1b

    .balign 4096
user_fn_one:
    li a0, 1
    ret

    .balign 4096
user_fn_two:
    li a0, 2
    ret
    .balign 4096

    .data
    .balign 4
expected_log:
    .word CAUSE_FETCH_PAGE, U_CODE_VA
    .word CAUSE_LOAD_PAGE, U_DATA_A
    .word CAUSE_LOAD_PAGE, U_DATA_B + 8
    .word CAUSE_STORE_PAGE, U_DATA_C + 16
    .word CAUSE_FETCH_PAGE, U_FN_VA
    .word CAUSE_ECALL_U, 0      /* remap */
    .word CAUSE_ECALL_U, 0      /* four switches */
    .word CAUSE_ECALL_U, 0
    .word CAUSE_ECALL_U, 0
    .word CAUSE_ECALL_U, 0
    .word CAUSE_ECALL_U, 0      /* done */
fault_count: .word 0
switch_count: .word 0
pool_next:   .word 0
s_resume:    .word 0
s_record:    .word 0, 0

    .bss
    .balign 4096
root_pt:    .skip 4096
user_l0:    .skip 4096
root_b:     .skip 4096
user_l0_b:  .skip 4096
page_pool:  .skip 4096 * POOL_PAGES
fault_log:  .skip 8 * LOG_MAX
u_save:     .skip 64
