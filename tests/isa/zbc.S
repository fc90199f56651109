# zbc.S - Zbc carry-less multiply: clmul, clmulh, clmulr.
#
# Known vectors including all-ones, single top bits and alternating
# patterns; operand aliasing and x0.
#include "test.h"

RVTEST_CODE_BEGIN

  # clmul
  TEST_RR_OP(2, clmul, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(3, clmul, 0x00000001, 0x00000001, 0x00000001)
  TEST_RR_OP(4, clmul, 0x55555555, 0xffffffff, 0xffffffff)
  TEST_RR_OP(5, clmul, 0x00000000, 0x80000000, 0x80000000)
  TEST_RR_OP(6, clmul, 0x80000000, 0x80000000, 0x00000001)
  TEST_RR_OP(7, clmul, 0x5cd25a80, 0x12345678, 0x9abcdef0)
  TEST_RR_OP(8, clmul, 0xfffffffe, 0xffffffff, 0x00000002)
  TEST_RR_OP(9, clmul, 0x00000005, 0x00000003, 0x00000003)
  TEST_RR_OP(10, clmul, 0x22222222, 0xaaaaaaaa, 0x55555555)
  TEST_RR_OP(11, clmul, 0x03da4198, 0x87654321, 0xfedcba98)
  TEST_RR_OP(12, clmul, 0x00000001, 0x00010001, 0x00010001)
  TEST_RR_OP(13, clmul, 0xe5c3e22b, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC1_EQ_DEST(14, clmul, 0xe5c3e22b, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC2_EQ_DEST(15, clmul, 0xe5c3e22b, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC12_EQ_DEST(16, clmul, 0x45545455, 0xdeadbeef)
  TEST_RR_ZEROSRC1(17, clmul, 0x00000000, 0xcafef00d)
  TEST_RR_ZEROSRC2(18, clmul, 0x00000000, 0xdeadbeef)
  TEST_RR_ZERODEST(19, clmul, 0xdeadbeef, 0xcafef00d)
  # clmulh
  TEST_RR_OP(20, clmulh, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(21, clmulh, 0x00000000, 0x00000001, 0x00000001)
  TEST_RR_OP(22, clmulh, 0x55555555, 0xffffffff, 0xffffffff)
  TEST_RR_OP(23, clmulh, 0x40000000, 0x80000000, 0x80000000)
  TEST_RR_OP(24, clmulh, 0x00000000, 0x80000000, 0x00000001)
  TEST_RR_OP(25, clmulh, 0x08860e94, 0x12345678, 0x9abcdef0)
  TEST_RR_OP(26, clmulh, 0x00000001, 0xffffffff, 0x00000002)
  TEST_RR_OP(27, clmulh, 0x00000000, 0x00000003, 0x00000003)
  TEST_RR_OP(28, clmulh, 0x22222222, 0xaaaaaaaa, 0x55555555)
  TEST_RR_OP(29, clmulh, 0x7db51dd5, 0x87654321, 0xfedcba98)
  TEST_RR_OP(30, clmulh, 0x00000001, 0x00010001, 0x00010001)
  TEST_RR_OP(31, clmulh, 0x5fff38dd, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC1_EQ_DEST(32, clmulh, 0x5fff38dd, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC2_EQ_DEST(33, clmulh, 0x5fff38dd, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC12_EQ_DEST(34, clmulh, 0x51544451, 0xdeadbeef)
  TEST_RR_ZEROSRC1(35, clmulh, 0x00000000, 0xcafef00d)
  TEST_RR_ZEROSRC2(36, clmulh, 0x00000000, 0xdeadbeef)
  TEST_RR_ZERODEST(37, clmulh, 0xdeadbeef, 0xcafef00d)
  # clmulr
  TEST_RR_OP(38, clmulr, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(39, clmulr, 0x00000000, 0x00000001, 0x00000001)
  TEST_RR_OP(40, clmulr, 0xaaaaaaaa, 0xffffffff, 0xffffffff)
  TEST_RR_OP(41, clmulr, 0x80000000, 0x80000000, 0x80000000)
  TEST_RR_OP(42, clmulr, 0x00000001, 0x80000000, 0x00000001)
  TEST_RR_OP(43, clmulr, 0x110c1d28, 0x12345678, 0x9abcdef0)
  TEST_RR_OP(44, clmulr, 0x00000003, 0xffffffff, 0x00000002)
  TEST_RR_OP(45, clmulr, 0x00000000, 0x00000003, 0x00000003)
  TEST_RR_OP(46, clmulr, 0x44444444, 0xaaaaaaaa, 0x55555555)
  TEST_RR_OP(47, clmulr, 0xfb6a3baa, 0x87654321, 0xfedcba98)
  TEST_RR_OP(48, clmulr, 0x00000002, 0x00010001, 0x00010001)
  TEST_RR_OP(49, clmulr, 0xbffe71bb, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC1_EQ_DEST(50, clmulr, 0xbffe71bb, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC2_EQ_DEST(51, clmulr, 0xbffe71bb, 0xdeadbeef, 0xcafef00d)
  TEST_RR_SRC12_EQ_DEST(52, clmulr, 0xa2a888a2, 0xdeadbeef)
  TEST_RR_ZEROSRC1(53, clmulr, 0x00000000, 0xcafef00d)
  TEST_RR_ZEROSRC2(54, clmulr, 0x00000000, 0xdeadbeef)
  TEST_RR_ZERODEST(55, clmulr, 0xdeadbeef, 0xcafef00d)

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
