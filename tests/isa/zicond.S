# zicond.S - Zicond conditional zero: czero.eqz, czero.nez.
#
# czero.eqz rd, rs1, rs2: rd = (rs2 == 0) ? 0 : rs1
# czero.nez rd, rs1, rs2: rd = (rs2 != 0) ? 0 : rs1
# with rs2 = 0 / nonzero / top bit only, rd == rs1, rd == rs2,
# rd == rs1 == rs2, x0 operands and x0 destination.
#
# Binutils 2.40 (Debian bookworm) does not know Zicond, so the instructions
# are emitted with .insn (OP major opcode, funct7 = 0000111, funct3 = 101 /
# 111). QEMU 7.2 does not implement Zicond either: in the QEMU build each
# czero is replaced by an equivalent branch sequence, so the oracle still
# checks every expected value (but not the decoding, which only our VM
# runs).
#include "test.h"

#ifdef QEMU_VIRT
  .macro CZERO_EQZ rd, rs1, rs2
    beqz \rs2, .Lczero_zero\@
    mv \rd, \rs1
    j .Lczero_done\@
.Lczero_zero\@:
    li \rd, 0
.Lczero_done\@:
  .endm
  .macro CZERO_NEZ rd, rs1, rs2
    bnez \rs2, .Lczero_zero\@
    mv \rd, \rs1
    j .Lczero_done\@
.Lczero_zero\@:
    li \rd, 0
.Lczero_done\@:
  .endm
#else
  .macro CZERO_EQZ rd, rs1, rs2
    .insn r 0x33, 5, 7, \rd, \rs1, \rs2
  .endm
  .macro CZERO_NEZ rd, rs1, rs2
    .insn r 0x33, 7, 7, \rd, \rs1, \rs2
  .endm
#endif

RVTEST_CODE_BEGIN

  # czero.eqz
  TEST_RR_OP(2, CZERO_EQZ, 0x00000000, 0x12345678, 0x00000000)
  TEST_RR_OP(3, CZERO_EQZ, 0x12345678, 0x12345678, 0x00000001)
  TEST_RR_OP(4, CZERO_EQZ, 0x12345678, 0x12345678, 0x80000000)
  TEST_RR_OP(5, CZERO_EQZ, 0x12345678, 0x12345678, 0xffffffff)
  TEST_RR_OP(6, CZERO_EQZ, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(7, CZERO_EQZ, 0x00000000, 0x00000000, 0x00000005)
  TEST_RR_OP(8, CZERO_EQZ, 0x00000000, 0xffffffff, 0x00000000)
  TEST_RR_OP(9, CZERO_EQZ, 0xffffffff, 0xffffffff, 0x00000100)
  TEST_RR_SRC1_EQ_DEST(10, CZERO_EQZ, 0x00000000, 0xcafe0001, 0x00000000)
  TEST_RR_SRC2_EQ_DEST(11, CZERO_EQZ, 0x00000000, 0xcafe0001, 0x00000000)
  TEST_RR_ZEROSRC1(12, CZERO_EQZ, 0x00000000, 0x00000000)
  TEST_RR_SRC1_EQ_DEST(13, CZERO_EQZ, 0xcafe0001, 0xcafe0001, 0x00000007)
  TEST_RR_SRC2_EQ_DEST(14, CZERO_EQZ, 0xcafe0001, 0xcafe0001, 0x00000007)
  TEST_RR_ZEROSRC1(15, CZERO_EQZ, 0x00000000, 0x00000007)
  TEST_RR_SRC12_EQ_DEST(16, CZERO_EQZ, 0xcafe0001, 0xcafe0001)
  TEST_RR_SRC12_EQ_DEST(17, CZERO_EQZ, 0x00000000, 0x00000000)
  TEST_RR_ZEROSRC2(18, CZERO_EQZ, 0x00000000, 0xcafe0001)
  TEST_RR_ZERODEST(19, CZERO_EQZ, 0xcafe0001, 0x00000003)
  # czero.nez
  TEST_RR_OP(20, CZERO_NEZ, 0x12345678, 0x12345678, 0x00000000)
  TEST_RR_OP(21, CZERO_NEZ, 0x00000000, 0x12345678, 0x00000001)
  TEST_RR_OP(22, CZERO_NEZ, 0x00000000, 0x12345678, 0x80000000)
  TEST_RR_OP(23, CZERO_NEZ, 0x00000000, 0x12345678, 0xffffffff)
  TEST_RR_OP(24, CZERO_NEZ, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(25, CZERO_NEZ, 0x00000000, 0x00000000, 0x00000005)
  TEST_RR_OP(26, CZERO_NEZ, 0xffffffff, 0xffffffff, 0x00000000)
  TEST_RR_OP(27, CZERO_NEZ, 0x00000000, 0xffffffff, 0x00000100)
  TEST_RR_SRC1_EQ_DEST(28, CZERO_NEZ, 0xcafe0001, 0xcafe0001, 0x00000000)
  TEST_RR_SRC2_EQ_DEST(29, CZERO_NEZ, 0xcafe0001, 0xcafe0001, 0x00000000)
  TEST_RR_ZEROSRC1(30, CZERO_NEZ, 0x00000000, 0x00000000)
  TEST_RR_SRC1_EQ_DEST(31, CZERO_NEZ, 0x00000000, 0xcafe0001, 0x00000007)
  TEST_RR_SRC2_EQ_DEST(32, CZERO_NEZ, 0x00000000, 0xcafe0001, 0x00000007)
  TEST_RR_ZEROSRC1(33, CZERO_NEZ, 0x00000000, 0x00000007)
  TEST_RR_SRC12_EQ_DEST(34, CZERO_NEZ, 0x00000000, 0xcafe0001)
  TEST_RR_SRC12_EQ_DEST(35, CZERO_NEZ, 0x00000000, 0x00000000)
  TEST_RR_ZEROSRC2(36, CZERO_NEZ, 0xcafe0001, 0xcafe0001)
  TEST_RR_ZERODEST(37, CZERO_NEZ, 0xcafe0001, 0x00000003)

  # the idiom: rd = cond ? a : b  ==  czero.nez(b, cond) | czero.eqz(a, cond)
  TEST_CASE(100, a4, 0x11111111, li a1, 0x11111111; li a2, 0x22222222; li a3, 1; CZERO_EQZ a4, a1, a3; CZERO_NEZ a5, a2, a3; or a4, a4, a5)
  TEST_CASE(101, a4, 0x22222222, li a1, 0x11111111; li a2, 0x22222222; li a3, 0; CZERO_EQZ a4, a1, a3; CZERO_NEZ a5, a2, a3; or a4, a4, a5)

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
