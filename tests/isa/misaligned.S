# misaligned.S - misaligned loads and stores trap in M-mode (run with
# `rv32vm run --bare --trap-misaligned`: by default they are performed, as
# misaligned_data.S checks).
#
# qemu-oracle: skip (QEMU 7.2 emulates misaligned loads and stores instead
# of trapping, and fails a misaligned sc.w without trapping when there is no
# reservation; both are allowed for ordinary accesses by the spec, but
# rv32vm traps, so this file runs on rv32vm only. The expected values are
# simple enough to check by hand.)
#
# Every misaligned halfword/word/double access (integer, FP and compressed)
# raises address-misaligned (cause 4 for loads, 6 for stores/AMOs) with
# mepc = the instruction, mtval = the effective address, rd and memory
# left unchanged. Aligned accesses at the same base still work afterwards.
#include "test.h"

#define MIS_FILL 0x11223344

/* `insn` (with base register a5 = mis_data) must trap with `cause`,
 * mtval = mis_data + offset, a4 unchanged and the data words unchanged. */
#define TEST_MISALIGNED(testnum, cause, offset, insn...)                 \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a5, mis_data;                                                     \
    li a1, MIS_FILL;                                                     \
    sw a1, 0(a5);                                                        \
    sw a1, 4(a5);                                                        \
    sw a1, 8(a5);                                                        \
    sw a1, 12(a5);                                                       \
    li a4, 0x7777;                                                       \
    li a2, 0x5a5a5a5a;                                                   \
    fmv.w.x f4, a2;                                                      \
    EXPECT_TRAP(91f);                                                    \
90: insn;                                                                \
    CANCEL_TRAP;                                                         \
    j fail;                                                              \
91: CHECK_TRAP(TRAP_CAUSE, cause);                                       \
    CHECK_TRAP_ADDR(TRAP_EPC, 90b);                                      \
    CHECK_TRAP_ADDR(TRAP_TVAL, mis_data + offset);                       \
    li t1, 0x7777;                                                       \
    bne a4, t1, fail;                                                    \
    la a5, mis_data;                                                     \
    li t1, MIS_FILL;                                                     \
    lw t0, 0(a5);                                                        \
    bne t0, t1, fail;                                                    \
    lw t0, 4(a5);                                                        \
    bne t0, t1, fail;                                                    \
    lw t0, 8(a5);                                                        \
    bne t0, t1, fail

RVTEST_CODE_BEGIN

  TEST_MISALIGNED(2, CAUSE_MISALIGNED_LOAD, 1, lh a4, 1(a5))
  TEST_MISALIGNED(3, CAUSE_MISALIGNED_LOAD, 3, lhu a4, 3(a5))
  TEST_MISALIGNED(4, CAUSE_MISALIGNED_LOAD, 1, lw a4, 1(a5))
  TEST_MISALIGNED(5, CAUSE_MISALIGNED_LOAD, 2, lw a4, 2(a5))
  TEST_MISALIGNED(6, CAUSE_MISALIGNED_LOAD, 7, lw a4, 7(a5))
  TEST_MISALIGNED(7, CAUSE_MISALIGNED_STORE, 1, sh a2, 1(a5))
  TEST_MISALIGNED(8, CAUSE_MISALIGNED_STORE, 3, sh a2, 3(a5))
  TEST_MISALIGNED(9, CAUSE_MISALIGNED_STORE, 1, sw a2, 1(a5))
  TEST_MISALIGNED(10, CAUSE_MISALIGNED_STORE, 2, sw a2, 2(a5))
  TEST_MISALIGNED(11, CAUSE_MISALIGNED_STORE, 6, sw a2, 6(a5))
  # FP loads and stores: flw/fsw need 4-byte, fld/fsd 8-byte alignment
  TEST_MISALIGNED(12, CAUSE_MISALIGNED_LOAD, 2, flw f3, 2(a5))
  TEST_MISALIGNED(13, CAUSE_MISALIGNED_STORE, 1, fsw f4, 1(a5))
  TEST_MISALIGNED(14, CAUSE_MISALIGNED_LOAD, 4, fld f3, 4(a5))
  TEST_MISALIGNED(15, CAUSE_MISALIGNED_STORE, 4, fsd f4, 4(a5))
  # compressed forms with a misaligned base register
  .option push
  .option rvc
  TEST_MISALIGNED(16, CAUSE_MISALIGNED_LOAD, 2, addi a5, a5, 2; 90: c.lw a4, 0(a5))
  .option pop
  # a misaligned sc.w traps even without a reservation
  TEST_MISALIGNED(17, CAUSE_MISALIGNED_STORE, 2, addi a5, a5, 2; 90: sc.w a4, a2, (a5))
  # a word that would straddle a 4 KiB page boundary
test_18:
  li TESTNUM, 18
  la a5, mis_page_end
  li a4, 0x7777
  EXPECT_TRAP(91f)
90: lw a4, -2(a5)
  CANCEL_TRAP
  j fail
91: CHECK_TRAP(TRAP_CAUSE, CAUSE_MISALIGNED_LOAD)
  CHECK_TRAP_ADDR(TRAP_TVAL, mis_page_end - 2)
  # aligned accesses of every width still work at the same base
  TEST_CASE(19, a4, 0x11223344, la a5, mis_data; lw a4, 0(a5))
  TEST_CASE(20, a4, 0x1122, la a5, mis_data; lhu a4, 2(a5))
  TEST_CASE(21, a4, 0x33, la a5, mis_data; lbu a4, 1(a5))

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
  .balign 16
mis_data:
  .word 0, 0, 0, 0
  .balign 4096
  .skip 4092
  .word 0
mis_page_end:
  .word 0
RVTEST_DATA_END
