# misaligned_data.S - misaligned loads and stores are performed, as under
# QEMU (and Spike --misaligned, which riscv-tests' ma_data needs): the
# default of `rv32vm run --bare`.
#
# Halfword and word loads (signed and unsigned) at every offset, across a
# word, a doubleword and a 4 KiB page boundary; halfword and word stores at
# every offset, leaving the bytes around them as they were; compressed
# c.lw/c.sw through a misaligned base; FP flw/fsw/fld/fsd at odd offsets.
# No trap may happen (an unexpected one fails the test).
#include "test.h"

/* rd = insn at mis_data + offset must be `expected`. */
#define TEST_LOAD_AT(testnum, insn, offset, expected)                   \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a5, mis_data;                                                     \
    insn a4, offset(a5);                                                 \
    li a3, expected;                                                     \
    bne a4, a3, fail

/* Store `val` with `insn` at byte `offset` of the zeroed words at mis_store,
 * then the two words there must be `w0` and `w1`. */
#define TEST_STORE_AT(testnum, insn, offset, val, w0, w1)               \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a5, mis_store;                                                    \
    li a1, 0x11223344;                                                   \
    sw a1, 0(a5);                                                        \
    sw a1, 4(a5);                                                        \
    li a2, val;                                                          \
    insn a2, offset(a5);                                                 \
    lw a4, 0(a5);                                                        \
    li a3, w0;                                                           \
    bne a4, a3, fail;                                                    \
    lw a4, 4(a5);                                                        \
    li a3, w1;                                                           \
    bne a4, a3, fail

RVTEST_CODE_BEGIN

  # ------------------------------------------------------------ loads
  # mis_data holds the bytes 0x80 0x81 ... 0x8f, then 0x00 0x01 ... 0x0f.
  TEST_LOAD_AT(2, lh, 1, 0xffff8281)
  TEST_LOAD_AT(3, lhu, 1, 0x00008281)
  TEST_LOAD_AT(4, lh, 3, 0xffff8483)
  TEST_LOAD_AT(5, lhu, 7, 0x00008887)
  TEST_LOAD_AT(6, lw, 1, 0x84838281)
  TEST_LOAD_AT(7, lw, 2, 0x85848382)
  TEST_LOAD_AT(8, lw, 3, 0x86858483)
  TEST_LOAD_AT(9, lw, 5, 0x88878685)
  # across the 16-byte boundary into the positive bytes
  TEST_LOAD_AT(10, lh, 15, 0x0000008f)
  TEST_LOAD_AT(11, lw, 13, 0x008f8e8d)
  TEST_LOAD_AT(12, lw, 14, 0x01008f8e)

  # across a 4 KiB page boundary: the word at page_end - 2
test_13:
  li TESTNUM, 13
  la a5, page_cross
  li a1, 0xa1b2c3d4
  sh a1, -2(a5)
  srli a1, a1, 16
  sh a1, 0(a5)
  lw a4, -2(a5)
  li a3, 0xa1b2c3d4
  bne a4, a3, fail
  lh a4, -1(a5)
  li a3, 0xffffb2c3
  bne a4, a3, fail

  # ------------------------------------------------------------ stores
  TEST_STORE_AT(20, sh, 1, 0xaaaabbcc, 0x11bbcc44, 0x11223344)
  TEST_STORE_AT(21, sh, 3, 0xaaaabbcc, 0xcc223344, 0x112233bb)
  TEST_STORE_AT(22, sw, 1, 0xa1b2c3d4, 0xb2c3d444, 0x112233a1)
  TEST_STORE_AT(23, sw, 2, 0xa1b2c3d4, 0xc3d43344, 0x1122a1b2)
  TEST_STORE_AT(24, sw, 3, 0xa1b2c3d4, 0xd4223344, 0x11a1b2c3)

  # a store across the page boundary, read back with aligned loads
test_25:
  li TESTNUM, 25
  la a5, page_cross
  sw zero, -4(a5)
  sw zero, 0(a5)
  li a1, 0x55667788
  sw a1, -1(a5)
  lw a4, -4(a5)
  li a3, 0x88000000
  bne a4, a3, fail
  lw a4, 0(a5)
  li a3, 0x00556677
  bne a4, a3, fail

  # ------------------------------------------------------------ compressed
test_30:
  li TESTNUM, 30
  .option push
  .option rvc
  la s0, mis_data
  addi s0, s0, 1
  c.lw a4, 4(s0)
  li a3, 0x88878685
  bne a4, a3, fail
  la s0, mis_store
  sw zero, 0(s0)
  sw zero, 4(s0)
  addi s0, s0, 3
  li a2, 0xcafef00d
  c.sw a2, 0(s0)
  .option pop
  la a5, mis_store
  lw a4, 0(a5)
  li a3, 0x0d000000
  bne a4, a3, fail
  lw a4, 4(a5)
  li a3, 0x00cafef0
  bne a4, a3, fail

  # ------------------------------------------------------------ floating point
test_40:
  li TESTNUM, 40
  la a5, mis_data
  flw f1, 3(a5)
  fmv.x.w a4, f1
  li a3, 0x86858483
  bne a4, a3, fail
  la a5, mis_store
  sw zero, 0(a5)
  sw zero, 4(a5)
  fsw f1, 1(a5)
  lw a4, 0(a5)
  li a3, 0x85848300
  bne a4, a3, fail
  lw a4, 4(a5)
  li a3, 0x00000086
  bne a4, a3, fail

test_41:
  li TESTNUM, 41
  la a5, mis_data
  fld f2, 5(a5)
  la a5, mis_store
  sw zero, 0(a5)
  sw zero, 4(a5)
  sw zero, 8(a5)
  fsd f2, 2(a5)
  lw a4, 0(a5)
  li a3, 0x86850000
  bne a4, a3, fail
  lw a4, 4(a5)
  li a3, 0x8a898887
  bne a4, a3, fail
  lw a4, 8(a5)
  li a3, 0x00008c8b
  bne a4, a3, fail

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
  .balign 16
mis_data:
  .byte 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87
  .byte 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f
  .byte 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07
  .byte 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f
  .balign 16
mis_store:
  .word 0, 0, 0, 0
  .balign 4096
  .skip 4096
page_cross:
  .word 0, 0
RVTEST_DATA_END
