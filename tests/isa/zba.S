# zba.S - Zba address generation: sh1add, sh2add, sh3add.
#
# rd = rs2 + (rs1 << n), wrapping; carries out of bit 31 are lost;
# operand aliasing, x0 operands and x0 destination.
#include "test.h"

RVTEST_CODE_BEGIN

  # sh1add
  TEST_RR_OP(2, sh1add, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(3, sh1add, 0x00000004, 0x00000001, 0x00000002)
  TEST_RR_OP(4, sh1add, 0xffffffff, 0xffffffff, 0x00000001)
  TEST_RR_OP(5, sh1add, 0xfffffffe, 0x7fffffff, 0x00000000)
  TEST_RR_OP(6, sh1add, 0x00000005, 0x80000000, 0x00000005)
  TEST_RR_OP(7, sh1add, 0x00000000, 0x40000000, 0x80000000)
  TEST_RR_OP(8, sh1add, 0xbf258be0, 0x12345678, 0x9abcdef0)
  TEST_RR_OP(9, sh1add, 0xfffffffd, 0xffffffff, 0xffffffff)
  TEST_RR_OP(10, sh1add, 0x7fffffff, 0x3fffffff, 0x00000001)
  TEST_RR_SRC1_EQ_DEST(11, sh1add, 0x7fffffff, 0x3fffffff, 0x00000001)
  TEST_RR_SRC2_EQ_DEST(12, sh1add, 0x7fffffff, 0x3fffffff, 0x00000001)
  TEST_RR_SRC12_EQ_DEST(13, sh1add, 0xbffffffd, 0x3fffffff)
  TEST_RR_ZEROSRC1(14, sh1add, 0x00000001, 0x00000001)
  TEST_RR_ZEROSRC2(15, sh1add, 0x7ffffffe, 0x3fffffff)
  TEST_RR_ZERODEST(16, sh1add, 0x3fffffff, 0x00000001)
  # sh2add
  TEST_RR_OP(17, sh2add, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(18, sh2add, 0x00000006, 0x00000001, 0x00000002)
  TEST_RR_OP(19, sh2add, 0xfffffffd, 0xffffffff, 0x00000001)
  TEST_RR_OP(20, sh2add, 0xfffffffc, 0x7fffffff, 0x00000000)
  TEST_RR_OP(21, sh2add, 0x00000005, 0x80000000, 0x00000005)
  TEST_RR_OP(22, sh2add, 0x80000000, 0x40000000, 0x80000000)
  TEST_RR_OP(23, sh2add, 0xe38e38d0, 0x12345678, 0x9abcdef0)
  TEST_RR_OP(24, sh2add, 0xfffffffb, 0xffffffff, 0xffffffff)
  TEST_RR_OP(25, sh2add, 0xfffffffd, 0x3fffffff, 0x00000001)
  TEST_RR_SRC1_EQ_DEST(26, sh2add, 0xfffffffd, 0x3fffffff, 0x00000001)
  TEST_RR_SRC2_EQ_DEST(27, sh2add, 0xfffffffd, 0x3fffffff, 0x00000001)
  TEST_RR_SRC12_EQ_DEST(28, sh2add, 0x3ffffffb, 0x3fffffff)
  TEST_RR_ZEROSRC1(29, sh2add, 0x00000001, 0x00000001)
  TEST_RR_ZEROSRC2(30, sh2add, 0xfffffffc, 0x3fffffff)
  TEST_RR_ZERODEST(31, sh2add, 0x3fffffff, 0x00000001)
  # sh3add
  TEST_RR_OP(32, sh3add, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(33, sh3add, 0x0000000a, 0x00000001, 0x00000002)
  TEST_RR_OP(34, sh3add, 0xfffffff9, 0xffffffff, 0x00000001)
  TEST_RR_OP(35, sh3add, 0xfffffff8, 0x7fffffff, 0x00000000)
  TEST_RR_OP(36, sh3add, 0x00000005, 0x80000000, 0x00000005)
  TEST_RR_OP(37, sh3add, 0x80000000, 0x40000000, 0x80000000)
  TEST_RR_OP(38, sh3add, 0x2c5f92b0, 0x12345678, 0x9abcdef0)
  TEST_RR_OP(39, sh3add, 0xfffffff7, 0xffffffff, 0xffffffff)
  TEST_RR_OP(40, sh3add, 0xfffffff9, 0x3fffffff, 0x00000001)
  TEST_RR_SRC1_EQ_DEST(41, sh3add, 0xfffffff9, 0x3fffffff, 0x00000001)
  TEST_RR_SRC2_EQ_DEST(42, sh3add, 0xfffffff9, 0x3fffffff, 0x00000001)
  TEST_RR_SRC12_EQ_DEST(43, sh3add, 0x3ffffff7, 0x3fffffff)
  TEST_RR_ZEROSRC1(44, sh3add, 0x00000001, 0x00000001)
  TEST_RR_ZEROSRC2(45, sh3add, 0xfffffff8, 0x3fffffff)
  TEST_RR_ZERODEST(46, sh3add, 0x3fffffff, 0x00000001)

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
