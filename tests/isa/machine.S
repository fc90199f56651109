# machine.S - machine-mode traps, privilege changes and interrupts.
#
# ecall from M (cause 11, mepc = the ecall), ebreak (cause 3), illegal
# instructions (mtval = the bits; 0x0000 -> mtval 0), access faults for
# loads, stores and fetches outside RAM (mtval = the address), the mstatus
# stack on trap entry (MPP, MPIE, MIE) and on mret (MIE = MPIE, MPIE = 1,
# MPP = U), mret into U- and S-mode (ecall causes 8 and 9, M-mode CSRs and
# mret illegal there, counter access governed by mcounteren/scounteren),
# mtvec vectored mode (synchronous exceptions at the base, interrupt N at
# base + 4N), the supervisor software/timer interrupts raised through mip
# with their priority, interrupts taken regardless of MIE below M-mode,
# and wfi completing when an enabled interrupt is pending while MIE = 0.
#include "test.h"

/* Where no PMP entry is set up, S/U accesses fail on QEMU: open the whole
 * address space with one NAPOT entry. PMP is optional, so a trap here is
 * tolerated. Clobbers t0, t5, t6. */
#define PMP_OPEN_ALL                                                     \
    EXPECT_TRAP(98f);                                                    \
    li t0, -1;                                                           \
    csrw pmpaddr0, t0;                                                   \
    li t0, 0x1f;                /* NAPOT, R W X */                       \
    csrw pmpcfg0, t0;                                                    \
    CANCEL_TRAP;                                                         \
98:

/* mret into privilege `mpp` (MSTATUS_MPP field value) at `label`.
 * Clobbers t0. */
#define MRET_TO(mpp, label)                                              \
    li t0, MSTATUS_MPP;                                                  \
    csrc mstatus, t0;                                                    \
    li t0, mpp;                                                          \
    csrs mstatus, t0;                                                    \
    la t0, label;                                                        \
    csrw mepc, t0;                                                       \
    mret

#define MPP_U 0
#define MPP_S 0x800

/* Fails unless (recorded mstatus & mask) == value. Clobbers t0, t1. */
#define CHECK_TRAP_STATUS(mask, value)                                   \
    LOAD_TRAP(t0, TRAP_STATUS);                                          \
    li t1, mask;                                                         \
    and t0, t0, t1;                                                      \
    li t1, value;                                                        \
    bne t0, t1, fail

RVTEST_CODE_BEGIN
  PMP_OPEN_ALL

  # ------------------------------------------------ synchronous exceptions
  TEST_TRAP_TVAL(2, CAUSE_ECALL_M, 0, ecall)
  TEST_TRAP(3, CAUSE_BREAKPOINT, ebreak)
  TEST_TRAP_TVAL(4, CAUSE_ILLEGAL_INSN, 0xfe000033, .word 0xfe000033)
  TEST_TRAP_TVAL(5, CAUSE_ILLEGAL_INSN, 0, .hword 0x0000)
  TEST_TRAP_TVAL(6, CAUSE_ILLEGAL_INSN, 0, .word 0x00000000)
  # an unknown major opcode (OP-IMM-32 does not exist on RV32)
  TEST_TRAP_TVAL(7, CAUSE_ILLEGAL_INSN, 0x0005859b, .word 0x0005859b)
  # sfence.vma and fence.i are legal in M-mode
  TEST_CASE(8, a4, 3, li a4, 3; sfence.vma; sfence.vma a4, zero; fence.i)
  # registers are left alone by an exception (rd of a faulting load)
  li a4, 0x77
  li a5, 0
  TEST_TRAP_TVAL(10, CAUSE_LOAD_ACCESS, 0, lw a4, 0(a5))
  TEST_CASE(11, a4, 0x77, nop)
  # access faults outside RAM: load, store, fetch; mtval = the address
  li a5, 0x00200000
  TEST_TRAP_TVAL(13, CAUSE_LOAD_ACCESS, 0x00200004, lw a4, 4(a5))
  TEST_TRAP_TVAL(14, CAUSE_STORE_ACCESS, 0x00200008, sw a4, 8(a5))
  TEST_TRAP_TVAL(15, CAUSE_LOAD_ACCESS, 0x00200001, lbu a4, 1(a5))
test_16:
  li TESTNUM, 16
  EXPECT_TRAP(10f)
  jalr x0, 0(a5)              # fetch from 0x0020_0000
  CANCEL_TRAP
  j fail
10: CHECK_TRAP(TRAP_CAUSE, CAUSE_FETCH_ACCESS)
  CHECK_TRAP(TRAP_EPC, 0x00200000)
  CHECK_TRAP(TRAP_TVAL, 0x00200000)

  # ------------------------------------------- the mstatus trap stack (M)
  # a trap from M with MIE = 0: MPP = M, MPIE = 0
  TEST_TRAP(20, CAUSE_ECALL_M, ecall)
  CHECK_TRAP_STATUS(MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE, MSTATUS_MPP)
  # with MIE = 1 (no interrupt enabled in mie): MPIE = 1, MIE = 0
  csrsi mstatus, MSTATUS_MIE
  TEST_TRAP(21, CAUSE_ECALL_M, ecall)
  CHECK_TRAP_STATUS(MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE, MSTATUS_MPP | MSTATUS_MPIE)
  csrci mstatus, MSTATUS_MIE

  # mret M -> M: MIE = MPIE (1), MPIE = 1, MPP = U (the least privileged mode)
test_22:
  li TESTNUM, 22
  li t0, MSTATUS_MPIE
  csrs mstatus, t0
  MRET_TO(MSTATUS_MPP, 10f)
  j fail
10: csrr a4, mstatus
  li a5, MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE
  and a4, a4, a5
  li a5, MSTATUS_MPIE | MSTATUS_MIE
  bne a4, a5, fail
  csrci mstatus, MSTATUS_MIE
  # mret with MPIE = 0: MIE = 0, MPIE = 1
test_23:
  li TESTNUM, 23
  li t0, MSTATUS_MPIE
  csrc mstatus, t0
  csrsi mstatus, MSTATUS_MIE
  MRET_TO(MSTATUS_MPP, 10f)
  j fail
10: csrr a4, mstatus
  li a5, MSTATUS_MPIE | MSTATUS_MIE
  and a4, a4, a5
  li a5, MSTATUS_MPIE
  bne a4, a5, fail

  # --------------------------------------------------------------- U-mode
  # ecall from U: cause 8, MPP = U in the trap stack, mepc = the ecall
test_30:
  li TESTNUM, 30
  EXPECT_TRAP(11f)
  MRET_TO(MPP_U, 10f)
10: ecall
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_ECALL_U)
  CHECK_TRAP_ADDR(TRAP_EPC, 10b)
  CHECK_TRAP_STATUS(MSTATUS_MPP, 0)
  # ... and the handler brought us back to M: M CSRs work again
  csrr a4, mscratch
  # an M-mode CSR from U is illegal
test_31:
  li TESTNUM, 31
  EXPECT_TRAP(11f)
  MRET_TO(MPP_U, 10f)
10: csrr a4, mstatus
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_ILLEGAL_INSN)
  CHECK_TRAP_ADDR(TRAP_EPC, 10b)
  CHECK_TRAP(TRAP_TVAL, 0x30002773)
  # mret from U is illegal
test_32:
  li TESTNUM, 32
  EXPECT_TRAP(11f)
  MRET_TO(MPP_U, 10f)
10: mret
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_ILLEGAL_INSN)
  CHECK_TRAP_ADDR(TRAP_EPC, 10b)
  # cycle from U with mcounteren.CY = 0 is illegal ...
test_33:
  li TESTNUM, 33
  csrw mcounteren, zero
  EXPECT_TRAP(11f)
  MRET_TO(MPP_U, 10f)
10: rdcycle a4
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_ILLEGAL_INSN)
  CHECK_TRAP_ADDR(TRAP_EPC, 10b)
  # ... and legal with mcounteren and scounteren CY/TM/IR set (then ecall back)
test_34:
  li TESTNUM, 34
  csrwi mcounteren, 7
  csrwi scounteren, 7
  EXPECT_TRAP(11f)
  MRET_TO(MPP_U, 10f)
10: rdcycle a4
  rdinstret a4
  rdtime a4
  rdinstreth a4
  ecall
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_ECALL_U)
  csrw mcounteren, zero
  csrw scounteren, zero
  # FP works in U-mode while mstatus.FS != Off
test_35:
  li TESTNUM, 35
  EXPECT_TRAP(11f)
  MRET_TO(MPP_U, 10f)
10: li a1, 0x3f800000
  fmv.w.x f1, a1
  fadd.s f2, f1, f1
  fmv.x.w a4, f2
  ecall
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_ECALL_U)
  li a5, 0x40000000
  bne a4, a5, fail

  # --------------------------------------------------------------- S-mode
test_40:
  li TESTNUM, 40
  EXPECT_TRAP(11f)
  MRET_TO(MPP_S, 10f)
10: csrr a4, sstatus          # legal in S
  csrr a4, sscratch
  ecall
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_ECALL_S)
  CHECK_TRAP_STATUS(MSTATUS_MPP, MSTATUS_MPP_S)
test_41:
  li TESTNUM, 41
  EXPECT_TRAP(11f)
  MRET_TO(MPP_S, 10f)
10: csrr a4, mscratch         # M-mode CSR from S: illegal
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_ILLEGAL_INSN)
  CHECK_TRAP_ADDR(TRAP_EPC, 10b)
  CHECK_TRAP(TRAP_TVAL, 0x34002773)

  # ------------------------------------------------------------ interrupts
  # supervisor software interrupt raised by M through mip.SSIP, not
  # delegated, so taken in M: cause = interrupt | 1
test_50:
  li TESTNUM, 50
  csrw mideleg, zero
  csrsi mie, MIP_SSIP
  csrsi mstatus, MSTATUS_MIE
  EXPECT_TRAP(11f)
  csrsi mip, MIP_SSIP
  li a1, 1000                 # it must arrive within this bounded loop
10: addi a1, a1, -1
  bnez a1, 10b
  CANCEL_TRAP
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_INTERRUPT | 1)
  CHECK_TRAP_STATUS(MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE, MSTATUS_MPP | MSTATUS_MPIE)
  csrci mip, MIP_SSIP
  csrci mstatus, MSTATUS_MIE
  # a pending and enabled interrupt is not taken in M while MIE = 0
test_51:
  li TESTNUM, 51
  LOAD_TRAP(s0, TRAP_COUNT)
  csrsi mie, MIP_SSIP
  csrsi mip, MIP_SSIP
  li a1, 100
10: addi a1, a1, -1
  bnez a1, 10b
  LOAD_TRAP(s1, TRAP_COUNT)
  bne s0, s1, fail
  # ... wfi completes (the interrupt is pending and enabled in mie) ...
  wfi
  LOAD_TRAP(s1, TRAP_COUNT)
  bne s0, s1, fail
  # ... and in U-mode the same M-level interrupt is taken at once, even
  # with MIE = 0
test_52:
  li TESTNUM, 52
  EXPECT_TRAP(11f)
  MRET_TO(MPP_U, 10f)
10: nop
  li a1, 1000
12: addi a1, a1, -1
  bnez a1, 12b
  ecall
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_INTERRUPT | 1)
  CHECK_TRAP_STATUS(MSTATUS_MPP, 0)
  csrci mip, MIP_SSIP
  csrw mie, zero
  # priority: with SSI and STI both pending, SSI is taken first
test_53:
  li TESTNUM, 53
  li t0, 0x22
  csrs mip, t0
  csrs mie, t0
  EXPECT_TRAP(11f)
  csrsi mstatus, MSTATUS_MIE
  li a1, 1000
10: addi a1, a1, -1
  bnez a1, 10b
  CANCEL_TRAP
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_INTERRUPT | 1)
  li t0, 0x22
  csrc mip, t0
  csrci mstatus, MSTATUS_MIE

  # --------------------------------------------------- vectored mtvec
  # synchronous exceptions go to the base, interrupt N to base + 4 * N;
  # each entry records its number in sscratch and joins the common handler
test_60:
  li TESTNUM, 60
  csrr s9, mtvec
  la t0, vector_table + 1
  csrw mtvec, t0
  csrw sscratch, zero
  TEST_TRAP(61, CAUSE_ECALL_M, ecall)
  TEST_CASE(62, a4, 16, csrr a4, sscratch)
  TEST_TRAP(63, CAUSE_ILLEGAL_INSN, .word 0xfe000033)
  TEST_CASE(64, a4, 16, csrr a4, sscratch)
test_65:
  li TESTNUM, 65
  csrw sscratch, zero
  csrsi mie, MIP_SSIP
  csrsi mstatus, MSTATUS_MIE
  EXPECT_TRAP(11f)
  csrsi mip, MIP_SSIP
  li a1, 1000
10: addi a1, a1, -1
  bnez a1, 10b
  CANCEL_TRAP
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_INTERRUPT | 1)
  csrci mip, MIP_SSIP
  csrr a4, sscratch
  li a5, 1
  bne a4, a5, fail
test_66:
  li TESTNUM, 66
  csrw sscratch, zero
  li t0, 0x20
  csrs mie, t0
  csrsi mstatus, MSTATUS_MIE
  EXPECT_TRAP(11f)
  csrs mip, t0                # STIP (writable by M without Sstc)
  li a1, 1000
10: addi a1, a1, -1
  bnez a1, 10b
  CANCEL_TRAP
  j fail
11: CHECK_TRAP(TRAP_CAUSE, CAUSE_INTERRUPT | 5)
  li t0, 0x20
  csrc mip, t0
  csrr a4, sscratch
  li a5, 5
  bne a4, a5, fail
  csrci mstatus, MSTATUS_MIE
  csrw mtvec, s9

  TEST_PASSFAIL

  # the vector table: one 4-byte jump per cause
  .balign 256
vector_table:
  j vector_sync
  j vector_1
  j vector_other
  j vector_other
  j vector_other
  j vector_5
  j vector_other
  j vector_other
  j vector_other
  j vector_other
  j vector_other
  j vector_other
vector_sync:
  csrwi sscratch, 16
  j rvtest_trap_vector
vector_1:
  csrwi sscratch, 1
  j rvtest_trap_vector
vector_5:
  csrwi sscratch, 5
  j rvtest_trap_vector
vector_other:
  csrwi sscratch, 31
  j rvtest_trap_vector

RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
