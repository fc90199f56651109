/* sv32.S - Sv32 address translation as S-mode and U-mode see it.
 *
 * Page tables are built in RAM by M-mode; each case runs a short snippet in
 * S-mode or U-mode (IN_S / IN_U) and checks the result, or the page fault
 * the snippet took, back in M-mode (no exception is delegated here, so every
 * fault lands in M with mcause/mtval/mepc).
 */
#include "priv.h"

/* Virtual addresses of the 4 KiB test pages (all behind l0_a in root_a). */
#define VA_RW      0x20000000   /* -> page_a, RW, A and D set */
#define VA_RO      0x20001000   /* -> page_b, read-only */
#define VA_NONE    0x20002000   /* PTE = 0 */
#define VA_USER    0x20003000   /* -> page_a, RW, U */
#define VA_XONLY   0x20004000   /* -> code_page, execute-only */
#define VA_NOX     0x20005000   /* -> code_page, read-only (no X) */
#define VA_AD      0x20006000   /* -> page_c, RW with A = D = 0 */
#define VA_SFENCE  0x20007000   /* -> page_a, remapped by the sfence cases */
#define VA_WONLY   0x20008000   /* W without R: a reserved encoding */
#define VA_L0PTR   0x20009000   /* a pointer PTE at the last level */
/* Superpages (root_a). */
#define VA_SUPER   0xc0000000   /* -> RAM_BASE, R+X */
#define VA_MISSUP  0xc0400000   /* leaf with PPN[0] != 0: misaligned */
#define SUPER_OFFSET (VA_SUPER - RAM_BASE)

/* Map the 4 KiB page `va` -> symbol `pa_sym` in root_a; leaves the PTE's
 * address in a0. */
#define MAP4K_A(va, pa_sym, flags)                                       \
    la a0, root_a; li a1, va; la a2, pa_sym; li a3, flags; la a4, l0_a;  \
    call pt_map_4k

/* reg = a 4 KiB leaf PTE pointing at symbol `sym` with `flags`. */
#define PTE_FOR(reg, sym, flags)                                         \
    la reg, sym; srli reg, reg, 12; slli reg, reg, 10; ori reg, reg, flags

main:
    la a0, root_a
    call pt_std_init
    la a0, root_b
    call pt_std_init

    MAP4K_A(VA_RW, page_a, PTE_RW_AD)
    MAP4K_A(VA_RO, page_b, PTE_V | PTE_R | PTE_A)
    MAP4K_A(VA_USER, page_a, PTE_RW_AD | PTE_U)
    MAP4K_A(VA_XONLY, code_page, PTE_V | PTE_X | PTE_A)
    MAP4K_A(VA_NOX, code_page, PTE_V | PTE_R | PTE_A)
    MAP4K_A(VA_AD, page_c, PTE_V | PTE_R | PTE_W)
    mv s9, a0                   /* s9 = address of VA_AD's PTE */
    MAP4K_A(VA_SFENCE, page_a, PTE_RW_AD)
    mv s8, a0                   /* s8 = address of VA_SFENCE's PTE */
    MAP4K_A(VA_WONLY, page_a, PTE_V | PTE_W | PTE_A | PTE_D)
    /* VA_L0PTR: a non-leaf PTE (V only) where a leaf must be. */
    MAP4K_A(VA_L0PTR, page_a, PTE_V)
    la a0, root_a
    li a1, VA_SUPER
    li a2, RAM_BASE
    li a3, PTE_V | PTE_R | PTE_X | PTE_A
    call pt_map_super
    la a0, root_a
    li a1, VA_MISSUP
    li a2, RAM_BASE + 0x1000    /* PPN[0] = 1 */
    li a3, PTE_V | PTE_R | PTE_A
    call pt_map_super
    /* root_b: VA_RW -> page_b instead. */
    la a0, root_b
    li a1, VA_RW
    la a2, page_b
    li a3, PTE_RW_AD
    la a4, l0_b
    call pt_map_4k

    SET_SATP(root_a, 1)

    TEST(1, "satp keeps MODE, ASID and PPN")
    la t0, root_a
    srli t0, t0, 12
    li t1, SATP_SV32 | (1 << SATP_ASID_SHIFT)
    or s1, t0, t1
    csrr s2, satp
    CHECK_REGS(s2, s1)
    TEST_OK

    TEST(2, "4 KiB page: S-mode load and store translate")
    li s0, VA_RW
    li s2, 0x5a5a5a5a
    IN_S(lw s1, 0(s0); sw s2, 4(s0))
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, 0x11111111)
    CHECK_SYM_WORD(page_a, 4, 0x5a5a5a5a)
    TEST_OK

    TEST(3, "4 MiB superpage: load and fetch translate")
    la s0, page_b
    li t0, SUPER_OFFSET
    add s0, s0, t0
    la s4, superpage_fn
    add s4, s4, t0              /* superpage_fn's address in the superpage */
    li s1, 0
    li s3, 0
    IN_S(lw s1, 4(s0); jalr s4)
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, 0x22222223)
    CHECK_REGS(s3, s4)          /* it ran at the superpage address */
    TEST_OK

    TEST(4, "load page fault: invalid PTE, cause 13, mtval = VA")
    li s0, VA_NONE
    IN_S(96: lw s1, 8(s0))
    CHECK_M(TR_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_M(TR_TVAL, VA_NONE + 8)
    CHECK_TRAP_ADDR(m_trap_area, TR_EPC, 96b, 0)
    TEST_OK

    TEST(5, "store page fault: read-only page, cause 15, no write")
    li s0, VA_RO
    li s2, 0x0bad0bad
    IN_S(96: sw s2, 12(s0))
    CHECK_M(TR_CAUSE, CAUSE_STORE_PAGE)
    CHECK_M(TR_TVAL, VA_RO + 12)
    CHECK_TRAP_ADDR(m_trap_area, TR_EPC, 96b, 0)
    CHECK_SYM_WORD(page_b, 12, 0x22222225)
    li s0, VA_NONE
    IN_S(sh s2, 2(s0))
    CHECK_M(TR_CAUSE, CAUSE_STORE_PAGE)
    CHECK_M(TR_TVAL, VA_NONE + 2)
    TEST_OK

    TEST(6, "instruction page fault: no X, cause 12, mtval = mepc = VA")
    li s0, VA_NOX
    IN_S(jalr s0)
    CHECK_M(TR_CAUSE, CAUSE_FETCH_PAGE)
    CHECK_M(TR_TVAL, VA_NOX)
    CHECK_M(TR_EPC, VA_NOX)
    li s0, VA_NONE + 0x10
    IN_S(jalr s0)
    CHECK_M(TR_CAUSE, CAUSE_FETCH_PAGE)
    CHECK_M(TR_TVAL, VA_NONE + 0x10)
    CHECK_M(TR_EPC, VA_NONE + 0x10)
    TEST_OK

    TEST(7, "execute-only page runs")
    li s0, VA_XONLY
    li s1, 0
    IN_S(jalr s0)
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, 0x7e)
    TEST_OK

    TEST(8, "misaligned superpage (PPN[0] != 0) faults")
    li s0, VA_MISSUP + 0x10
    IN_S(96: lw s1, 0(s0))
    CHECK_M(TR_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_M(TR_TVAL, VA_MISSUP + 0x10)
    TEST_OK

    TEST(9, "reserved W-without-R leaf and a pointer at level 0 fault")
    li s0, VA_WONLY
    IN_S(lw s1, 0(s0))
    CHECK_M(TR_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_M(TR_TVAL, VA_WONLY)
    li s0, VA_L0PTR + 4
    IN_S(sw zero, 0(s0))
    CHECK_M(TR_CAUSE, CAUSE_STORE_PAGE)
    CHECK_M(TR_TVAL, VA_L0PTR + 4)
    TEST_OK

    /* Hardware A/D update, as QEMU 7.2 does (no Svade exceptions). */
    TEST(10, "A set by a load (D untouched), D set by a store")
    li s0, VA_AD
    lw t0, 0(s9)
    CHECK_MASKED(t0, PTE_A | PTE_D, 0)
    IN_S(lw s1, 0(s0))
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, 0x33333333)
    lw t0, 0(s9)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A)
    li s2, 0x44444444
    IN_S(sw s2, 0(s0))
    CHECK_BACK_FROM_S
    lw t0, 0(s9)
    CHECK_MASKED(t0, PTE_A | PTE_D, PTE_A | PTE_D)
    CHECK_SYM_WORD(page_c, 0, 0x44444444)
    TEST_OK

    TEST(11, "U page from S: faults with SUM=0, works with SUM=1")
    li s0, VA_USER
    li t0, MSTATUS_SUM
    csrc mstatus, t0
    IN_S(96: lw s1, 0(s0))
    CHECK_M(TR_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_M(TR_TVAL, VA_USER)
    IN_S(sw zero, 8(s0))
    CHECK_M(TR_CAUSE, CAUSE_STORE_PAGE)
    li t0, MSTATUS_SUM
    csrs mstatus, t0
    li s1, 0
    li s2, 0x66666666
    IN_S(lw s1, 0(s0); sw s2, 8(s0))
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, 0x11111111)
    CHECK_SYM_WORD(page_a, 8, 0x66666666)
    TEST_OK

    TEST(12, "S never executes a U page, even with SUM=1")
    la s0, superpage_fn
    li t0, U_ALIAS_OFFSET
    add s0, s0, t0
    IN_S(jalr s0)
    CHECK_M(TR_CAUSE, CAUSE_FETCH_PAGE)
    CHECK_TRAP_ADDR(m_trap_area, TR_TVAL, superpage_fn, U_ALIAS_OFFSET)
    li t0, MSTATUS_SUM
    csrc mstatus, t0
    TEST_OK

    TEST(13, "U-mode: U page works, non-U page faults")
    li s0, VA_USER
    li s1, 0
    IN_U(lw s1, 0(s0))
    CHECK_BACK_FROM_U
    CHECK_EQ(s1, 0x11111111)
    li s0, VA_RW
    IN_U(96: lw s1, 0(s0))
    CHECK_M(TR_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_M(TR_TVAL, VA_RW)
    CHECK_TRAP_ADDR(m_trap_area, TR_EPC, 96b, U_ALIAS_OFFSET)
    TEST_OK

    TEST(14, "sret with SPP=U enters U-mode")
    la s0, u_entry
    li t0, U_ALIAS_OFFSET
    add s0, s0, t0
    li s1, 0
    IN_S(csrw sepc, s0; li t0, MSTATUS_SPP; csrc sstatus, t0; sret)
    CHECK_BACK_FROM_U
    CHECK_EQ(s1, 0x55)
    CHECK_TRAP_ADDR(m_trap_area, TR_EPC, u_entry_ecall, U_ALIAS_OFFSET)
    TEST_OK

    TEST(15, "execute-only page: load faults unless MXR=1")
    li s0, VA_XONLY
    IN_S(lw s1, 0(s0))
    CHECK_M(TR_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_M(TR_TVAL, VA_XONLY)
    li t0, MSTATUS_MXR
    csrs mstatus, t0
    li s1, 0
    IN_S(lw s1, 0(s0))
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, 0x07e00493)    /* li s1, 0x7e */
    li t0, MSTATUS_MXR
    csrc mstatus, t0
    TEST_OK

    TEST(16, "MPRV with MPP=S translates M-mode loads and stores")
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    li t0, MSTATUS_MPP_S | MSTATUS_MPRV
    csrs mstatus, t0
    li s0, VA_RW
    lw s1, 0(s0)
    li s2, 0x77777777
    sw s2, 12(s0)
    li t0, MSTATUS_MPRV
    csrc mstatus, t0
    CHECK_EQ(s1, 0x11111111)
    CHECK_SYM_WORD(page_a, 12, 0x77777777)
    /* A fault under MPRV is a page fault taken in M, with the VA. */
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    li t0, MSTATUS_MPP_S | MSTATUS_MPRV
    csrs mstatus, t0
    li s0, VA_NONE + 0x20
    EXPECT_M_TRAP(1f)
96: lw s1, 0(s0)
    CANCEL_M_TRAP
1:  li t0, MSTATUS_MPRV
    csrc mstatus, t0
    CHECK_M(TR_CAUSE, CAUSE_LOAD_PAGE)
    CHECK_M(TR_TVAL, VA_NONE + 0x20)
    CHECK_TRAP_ADDR(m_trap_area, TR_EPC, 96b, 0)
    TEST_OK

    /* sfence.vma, from S-mode, after S-mode itself rewrote the PTE. Without
     * the fence the old mapping may be used: that is not checked. */
    TEST(17, "sfence.vma (all, by address, by ASID, both) picks up a new PTE")
    li s0, VA_SFENCE
    PTE_FOR(s5, page_b, PTE_RW_AD)
    PTE_FOR(s6, page_a, PTE_RW_AD)
    li s1, 0
    li s2, 0
    li s3, 0
    li s4, 0
    li s7, 0
    li s10, 1                   /* the ASID in satp */
    IN_S(lw s1, 0(s0);
         sw s5, 0(s8); sfence.vma; lw s2, 0(s0);
         sw s6, 0(s8); sfence.vma s0, zero; lw s3, 0(s0);
         sw s5, 0(s8); sfence.vma zero, s10; lw s4, 0(s0);
         sw s6, 0(s8); sfence.vma s0, s10; lw s7, 0(s0))
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, 0x11111111)
    CHECK_EQ(s2, 0x22222222)
    CHECK_EQ(s3, 0x11111111)
    CHECK_EQ(s4, 0x22222222)
    CHECK_EQ(s7, 0x11111111)
    TEST_OK

    TEST(18, "satp write switches address spaces")
    li s0, VA_RW
    la t0, root_b
    srli t0, t0, 12
    li t1, SATP_SV32 | (2 << SATP_ASID_SHIFT)
    or s5, t0, t1
    csrr s6, satp
    IN_S(lw s1, 0(s0); csrw satp, s5; lw s2, 0(s0); csrw satp, s6; lw s3, 0(s0))
    CHECK_BACK_FROM_S
    CHECK_EQ(s1, 0x11111111)
    CHECK_EQ(s2, 0x22222222)
    CHECK_EQ(s3, 0x11111111)
    csrr t0, satp
    CHECK_REGS(t0, s6)
    TEST_OK

    csrw satp, zero
    PASS_ALL

/* Runs in S-mode through the superpage alias: s3 = where it ran. */
superpage_fn:
    auipc s3, 0
    ret

/* Entered in U-mode (at its U_ALIAS address) by sret. */
u_entry:
    li s1, 0x55
u_entry_ecall:
    ecall

/* The page behind VA_XONLY and VA_NOX. */
    .balign 4096
code_page:
    li s1, 0x7e
    ret
    .balign 4096

    .data
    .balign 4096
page_a: .word 0x11111111, 0x11111112, 0x11111113, 0x11111114
    .balign 4096
page_b: .word 0x22222222, 0x22222223, 0x22222224, 0x22222225
    .balign 4096
page_c: .word 0x33333333
    .balign 4096

    .bss
    .balign 4096
root_a: .skip 4096
root_b: .skip 4096
l0_a:   .skip 4096
l0_b:   .skip 4096
