# zabha_zacas.S - Zabha (byte and halfword AMOs) and Zacas (compare-and-swap).
#
# Zabha: every AMO on bytes and halfwords, at every offset in a word (the
# other bytes stay as they were), with sign corners: rd gets the old value
# sign-extended, only the low byte/halfword of rs2 counts, and min/max
# compare the values at their width. rd = x0, rd == rs2, rd == rs1, aq/rl.
# A halfword AMO at an odd address traps (store/AMO misaligned or access
# fault) with mtval = the address, writing nothing.
# Zacas: amocas.b/h/w compare memory with rd and store rs2 only when equal;
# rd gets the old value either way (sign-extended); only the low bits of rd
# take part in a narrow compare. amocas.d works on even/odd register pairs
# (low word in the even register): the pair at x0 reads as zero and is never
# written (x1 keeps its value); an odd rd or rs2 is an illegal instruction;
# an address that is 4 but not 8 aligned traps.
#
# Binutils 2.40 (Debian bookworm) knows neither extension, so every
# instruction is emitted with .insn (AMO major opcode 0x2f, funct3 = width,
# funct7 = funct5 << 2 | aq << 1 | rl). QEMU 7.2 implements neither: in the
# QEMU build each AMO is an equivalent non-atomic sequence (one hart, so the
# same result), so the oracle still checks every expected value. What only
# the encoding decides (the odd-register and misaligned amocas.d traps) is
# checked in our build alone.
#include "test.h"

#define F5_ADD  0x00
#define F5_SWAP 0x01
#define F5_CAS  0x05
#define F5_XOR  0x04
#define F5_OR   0x08
#define F5_AND  0x0c
#define F5_MIN  0x10
#define F5_MAX  0x14
#define F5_MINU 0x18
#define F5_MAXU 0x1c

#define W_B 0
#define W_H 1
#define W_W 2
#define W_D 3

#ifdef QEMU_VIRT
/* rd = sext(mem); mem = op(mem, rs2) at the width; t3, t4, t6 are scratch. */
  .macro AMO funct5, width, order, rd, rs2, rs1
    .if \width == W_B
      lb t3, 0(\rs1)
      slli t4, \rs2, 24
      srai t4, t4, 24
    .else
      lh t3, 0(\rs1)
      slli t4, \rs2, 16
      srai t4, t4, 16
    .endif
    .if \funct5 == F5_ADD
      add t4, t3, t4
    .elseif \funct5 == F5_XOR
      xor t4, t3, t4
    .elseif \funct5 == F5_OR
      or t4, t3, t4
    .elseif \funct5 == F5_AND
      and t4, t3, t4
    .elseif \funct5 == F5_MIN
      min t4, t3, t4
    .elseif \funct5 == F5_MAX
      max t4, t3, t4
    .elseif \funct5 == F5_MINU
      minu t4, t3, t4
    .elseif \funct5 == F5_MAXU
      maxu t4, t3, t4
    .endif
    .if \width == W_B
      sb t4, 0(\rs1)
    .else
      sh t4, 0(\rs1)
    .endif
    mv \rd, t3
  .endm

/* if (mem == low bits of rd) mem = rs2; rd = sext(mem). */
  .macro CAS width, order, rd, rs2, rs1
    .if \width == W_B
      lb t3, 0(\rs1)
      slli t4, \rd, 24
      srai t4, t4, 24
      bne t3, t4, 1f
      sb \rs2, 0(\rs1)
    .elseif \width == W_H
      lh t3, 0(\rs1)
      slli t4, \rd, 16
      srai t4, t4, 16
      bne t3, t4, 1f
      sh \rs2, 0(\rs1)
    .else
      lw t3, 0(\rs1)
      bne t3, \rd, 1f
      sw \rs2, 0(\rs1)
    .endif
1:  mv \rd, t3
  .endm

/* The pair forms: (rd, rd+1) and (rs2, rs2+1) given as four registers. */
  .macro CASD rd, rdh, rs2, rs2h, rs1
    lw t3, 0(\rs1)
    lw t4, 4(\rs1)
    bne t3, \rd, 1f
    bne t4, \rdh, 1f
    sw \rs2, 0(\rs1)
    sw \rs2h, 4(\rs1)
1:  mv \rd, t3
    mv \rdh, t4
  .endm
#else
  .macro AMO funct5, width, order, rd, rs2, rs1
    .insn r 0x2f, \width, (\funct5 << 2) | \order, \rd, \rs1, \rs2
  .endm
  .macro CAS width, order, rd, rs2, rs1
    .insn r 0x2f, \width, (F5_CAS << 2) | \order, \rd, \rs1, \rs2
  .endm
  .macro CASD rd, rdh, rs2, rs2h, rs1
    .insn r 0x2f, W_D, (F5_CAS << 2), \rd, \rs1, \rs2
  .endm
#endif

/* Memory word at amo_data = `word`; the AMO at byte `offset` with rs2 = `val`:
 * rd must be `old` and the word `newword` afterwards; rs2 unchanged. */
#define TEST_AMO_AT(testnum, f5, width, order, offset, word, val, old, newword) \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a5, amo_data;                                                     \
    li a1, word;                                                         \
    sw a1, 0(a5);                                                        \
    addi a5, a5, offset;                                                 \
    li a2, val;                                                          \
    AMO f5, width, order, a4, a2, a5;                                    \
    li a3, old;                                                          \
    bne a4, a3, fail;                                                    \
    li a3, val;                                                          \
    bne a2, a3, fail;                                                    \
    CHECK_WORD(newword)

#define CHECK_WORD(newword)                                              \
    la a5, amo_data;                                                     \
    lw a4, 0(a5);                                                        \
    li a3, newword;                                                      \
    bne a4, a3, fail

/* compare-and-swap at byte `offset`: rd = `expected` before, `old` after. */
#define TEST_CAS_AT(testnum, width, offset, word, expected, val, old, newword) \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a5, amo_data;                                                     \
    li a1, word;                                                         \
    sw a1, 0(a5);                                                        \
    addi a5, a5, offset;                                                 \
    li a4, expected;                                                     \
    li a2, val;                                                          \
    CAS width, 0, a4, a2, a5;                                            \
    li a3, old;                                                          \
    bne a4, a3, fail;                                                    \
    li a3, val;                                                          \
    bne a2, a3, fail;                                                    \
    CHECK_WORD(newword)

/* amocas.d with rd pair a2/a3, rs2 pair a6/a7 on the doubleword at
 * amo_data: memory lo/hi, expected lo/hi, new lo/hi, then memory after. */
#define TEST_CASD(testnum, mlo, mhi, elo, ehi, nlo, nhi, alo, ahi)       \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a5, amo_data;                                                     \
    li a1, mlo;                                                          \
    sw a1, 0(a5);                                                        \
    li a1, mhi;                                                          \
    sw a1, 4(a5);                                                        \
    li a2, elo;                                                          \
    li a3, ehi;                                                          \
    li a6, nlo;                                                          \
    li a7, nhi;                                                          \
    CASD a2, a3, a6, a7, a5;                                             \
    li a1, mlo;                                                          \
    bne a2, a1, fail;                                                    \
    li a1, mhi;                                                          \
    bne a3, a1, fail;                                                    \
    li a1, nlo;                                                          \
    bne a6, a1, fail;                                                    \
    li a1, nhi;                                                          \
    bne a7, a1, fail;                                                    \
    lw a4, 0(a5);                                                        \
    li a1, alo;                                                          \
    bne a4, a1, fail;                                                    \
    lw a4, 4(a5);                                                        \
    li a1, ahi;                                                          \
    bne a4, a1, fail

/* The single instruction `insn` must raise cause c1 or c2 with mepc = insn
 * and mtval = amo_data + `offset`; rd (a4) unwritten, memory untouched. */
#define TEST_AMO_TRAP(testnum, c1, c2, offset, insn...)                  \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a5, amo_data;                                                     \
    li a1, 0x11223344;                                                   \
    sw a1, 0(a5);                                                        \
    sw a1, 4(a5);                                                        \
    addi a5, a5, offset;                                                 \
    li a2, 0x5555;                                                       \
    li a4, 0x7777;                                                       \
    EXPECT_TRAP(91f);                                                    \
90: insn;                                                                \
    CANCEL_TRAP;                                                         \
    j fail;                                                              \
91: CHECK_AMO_TRAP(c1, c2, 90b, amo_data + offset);                      \
    li t1, 0x7777;                                                       \
    bne a4, t1, fail;                                                    \
    CHECK_WORD(0x11223344);      /* also sets a5 = amo_data */           \
    lw a4, 4(a5);                                                        \
    li a3, 0x11223344;                                                   \
    bne a4, a3, fail

#ifdef QEMU_VIRT
/* A halfword AMO at an odd address: QEMU has none, a word AMO at the same
 * address traps the same way. */
#define MISALIGNED_HALF_AMO(f5) amoadd.w a4, a2, (a5)
#else
#define MISALIGNED_HALF_AMO(f5) AMO f5, W_H, 0, a4, a2, a5
#endif

RVTEST_CODE_BEGIN

  # ------------------------------------------------------------ Zabha: bytes
  # amoadd.b at each offset: carries stay in the byte, rd sign-extended
  TEST_AMO_AT(2, F5_ADD, W_B, 0, 0, 0x11223344, 0x000000ff, 0x00000044, 0x11223343)
  TEST_AMO_AT(3, F5_ADD, W_B, 0, 1, 0x11223344, 0x12345690, 0x00000033, 0x1122c344)
  TEST_AMO_AT(4, F5_ADD, W_B, 0, 2, 0x11803344, 0x00000080, 0xffffff80, 0x11003344)
  TEST_AMO_AT(5, F5_ADD, W_B, 0, 3, 0xff223344, 0x00000001, 0xffffffff, 0x00223344)
  # amoswap.b
  TEST_AMO_AT(6, F5_SWAP, W_B, 0, 0, 0x11223380, 0xabcdef7f, 0xffffff80, 0x1122337f)
  TEST_AMO_AT(7, F5_SWAP, W_B, 0, 3, 0x7f223344, 0x000000ee, 0x0000007f, 0xee223344)
  # amoxor.b / amoand.b / amoor.b
  TEST_AMO_AT(8, F5_XOR, W_B, 0, 1, 0x1122f044, 0xffffff0f, 0xfffffff0, 0x1122ff44)
  TEST_AMO_AT(9, F5_AND, W_B, 0, 2, 0x11f03344, 0x0000000f, 0xfffffff0, 0x11003344)
  TEST_AMO_AT(10, F5_OR, W_B, 0, 3, 0x01223344, 0x00000080, 0x00000001, 0x81223344)
  # min/max compare signed bytes: 0x80 (-128) against 0x7f (127); rs2's upper bits ignored
  TEST_AMO_AT(11, F5_MIN, W_B, 0, 0, 0x11223380, 0x1234567f, 0xffffff80, 0x11223380)
  TEST_AMO_AT(12, F5_MAX, W_B, 0, 0, 0x11223380, 0x1234567f, 0xffffff80, 0x1122337f)
  TEST_AMO_AT(13, F5_MIN, W_B, 0, 1, 0x11227f44, 0x00000080, 0x0000007f, 0x11228044)
  TEST_AMO_AT(14, F5_MAX, W_B, 0, 2, 0x11ff3344, 0xffffff01, 0xffffffff, 0x11013344)
  # minu/maxu compare unsigned bytes: 0x80 (128) against 0x7f
  TEST_AMO_AT(15, F5_MINU, W_B, 0, 0, 0x11223380, 0x0000007f, 0xffffff80, 0x1122337f)
  TEST_AMO_AT(16, F5_MAXU, W_B, 0, 0, 0x11223380, 0x0000007f, 0xffffff80, 0x11223380)
  TEST_AMO_AT(17, F5_MINU, W_B, 0, 3, 0xff223344, 0xabcdef01, 0xffffffff, 0x01223344)
  TEST_AMO_AT(18, F5_MAXU, W_B, 0, 3, 0x01223344, 0x000000fe, 0x00000001, 0xfe223344)
  # aq, rl, aqrl
  TEST_AMO_AT(19, F5_ADD, W_B, 2, 1, 0x11223344, 0x00000001, 0x00000033, 0x11223444)
  TEST_AMO_AT(20, F5_ADD, W_B, 1, 1, 0x11223344, 0x00000001, 0x00000033, 0x11223444)
  TEST_AMO_AT(21, F5_ADD, W_B, 3, 1, 0x11223344, 0x00000001, 0x00000033, 0x11223444)

  # ------------------------------------------------------------ Zabha: halfwords
  TEST_AMO_AT(30, F5_ADD, W_H, 0, 0, 0x11223344, 0x0000ffff, 0x00003344, 0x11223343)
  TEST_AMO_AT(31, F5_ADD, W_H, 0, 2, 0x80003344, 0x12348000, 0xffff8000, 0x00003344)
  TEST_AMO_AT(32, F5_SWAP, W_H, 0, 0, 0x11228000, 0xabcd7fff, 0xffff8000, 0x11227fff)
  TEST_AMO_AT(33, F5_SWAP, W_H, 0, 2, 0x7fff3344, 0x0000eeee, 0x00007fff, 0xeeee3344)
  TEST_AMO_AT(34, F5_XOR, W_H, 0, 2, 0xf0f03344, 0xffff0ff0, 0xfffff0f0, 0xff003344)
  TEST_AMO_AT(35, F5_AND, W_H, 0, 0, 0x1122f0f0, 0x00000ff0, 0xfffff0f0, 0x112200f0)
  TEST_AMO_AT(36, F5_OR, W_H, 0, 2, 0x00013344, 0x00008000, 0x00000001, 0x80013344)
  TEST_AMO_AT(37, F5_MIN, W_H, 0, 0, 0x11228000, 0x12347fff, 0xffff8000, 0x11228000)
  TEST_AMO_AT(38, F5_MAX, W_H, 0, 0, 0x11228000, 0x12347fff, 0xffff8000, 0x11227fff)
  TEST_AMO_AT(39, F5_MIN, W_H, 0, 2, 0xffff3344, 0x00000001, 0xffffffff, 0xffff3344)
  TEST_AMO_AT(40, F5_MAX, W_H, 0, 2, 0xffff3344, 0x00000001, 0xffffffff, 0x00013344)
  TEST_AMO_AT(41, F5_MINU, W_H, 0, 0, 0x11228000, 0x00007fff, 0xffff8000, 0x11227fff)
  TEST_AMO_AT(42, F5_MAXU, W_H, 0, 0, 0x11228000, 0x00007fff, 0xffff8000, 0x11228000)
  TEST_AMO_AT(43, F5_MINU, W_H, 0, 2, 0xffff3344, 0xabcd0001, 0xffffffff, 0x00013344)
  TEST_AMO_AT(44, F5_MAXU, W_H, 0, 2, 0x00013344, 0x0000fffe, 0x00000001, 0xfffe3344)
  TEST_AMO_AT(45, F5_ADD, W_H, 3, 2, 0x11223344, 0x00000001, 0x00001122, 0x11233344)

  # rd = x0: memory changes, x0 stays 0
test_50:
  li TESTNUM, 50
  la a5, amo_data
  li a1, 0x11223344
  sw a1, 0(a5)
  li a2, 0x10
  AMO F5_ADD, W_B, 0, x0, a2, a5
  bnez x0, fail
  AMO F5_ADD, W_H, 0, x0, a2, a5
  CHECK_WORD(0x11223364)

  # rd == rs2: the old rs2 is the operand, then rd = old memory
test_51:
  li TESTNUM, 51
  la a5, amo_data
  li a1, 0x11223344
  sw a1, 0(a5)
  li a2, 0x01
  AMO F5_ADD, W_B, 0, a2, a2, a5
  li a3, 0x44
  bne a2, a3, fail
  li a2, 0x0100
  AMO F5_ADD, W_H, 0, a2, a2, a5
  li a3, 0x3345
  bne a2, a3, fail
  CHECK_WORD(0x11223445)

  # rd == rs1: the address is used before rd is written
test_52:
  li TESTNUM, 52
  la a5, amo_data
  li a1, 0x11223344
  sw a1, 0(a5)
  addi a5, a5, 3
  li a2, 0x01
  AMO F5_ADD, W_B, 0, a5, a2, a5
  li a3, 0x11
  bne a5, a3, fail
  la a5, amo_data
  addi a5, a5, 2
  AMO F5_SWAP, W_H, 0, a5, a2, a5
  li a3, 0x1222
  bne a5, a3, fail
  CHECK_WORD(0x00013344)

  # ------------------------------------------------------------ Zacas: narrow and word
  # amocas.w: equal -> store; different -> no store; rd = old either way
  TEST_CAS_AT(60, W_W, 0, 0x11223344, 0x11223344, 0x55667788, 0x11223344, 0x55667788)
  TEST_CAS_AT(61, W_W, 0, 0x11223344, 0x11223345, 0x55667788, 0x11223344, 0x11223344)
  TEST_CAS_AT(62, W_W, 0, 0x80000000, 0x80000000, 0x00000000, 0x80000000, 0x00000000)
  # amocas.h: only rd's low halfword is compared; rd sign-extended
  TEST_CAS_AT(63, W_H, 0, 0x11228000, 0x12348000, 0x00007fff, 0xffff8000, 0x11227fff)
  TEST_CAS_AT(64, W_H, 2, 0x80003344, 0x00008001, 0x00007fff, 0xffff8000, 0x80003344)
  TEST_CAS_AT(65, W_H, 2, 0x7fff3344, 0xffff7fff, 0xabcd0001, 0x00007fff, 0x00013344)
  # amocas.b
  TEST_CAS_AT(66, W_B, 1, 0x11228044, 0xabcdef80, 0x00000001, 0xffffff80, 0x11220144)
  TEST_CAS_AT(67, W_B, 3, 0x11223344, 0x00000012, 0x000000ff, 0x00000011, 0x11223344)
  TEST_CAS_AT(68, W_B, 3, 0x11223344, 0x00000011, 0x000000ff, 0x00000011, 0xff223344)

  # amocas.w with rd == rs2: compares and stores the same register
test_69:
  li TESTNUM, 69
  la a5, amo_data
  li a1, 0x5a5a5a5a
  sw a1, 0(a5)
  li a2, 0x5a5a5a5a
  CAS W_W, 0, a2, a2, a5
  bne a2, a1, fail
  li a2, 0x12345678
  CAS W_W, 0, a2, a2, a5
  bne a2, a1, fail
  CHECK_WORD(0x5a5a5a5a)

  # amocas.w.aqrl
test_70:
  li TESTNUM, 70
  la a5, amo_data
  li a1, 0x0badf00d
  sw a1, 0(a5)
  li a4, 0x0badf00d
  li a2, 0x600dcafe
  CAS W_W, 3, a4, a2, a5
  bne a4, a1, fail
  CHECK_WORD(0x600dcafe)

  # ------------------------------------------------------------ Zacas: doublewords
  TEST_CASD(80, 0x11223344, 0x55667788, 0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff00, 0x99aabbcc, 0xddeeff00)
  # the high words differ: no store
  TEST_CASD(81, 0x11223344, 0x55667788, 0x11223344, 0x55667789, 0x99aabbcc, 0xddeeff00, 0x11223344, 0x55667788)
  # the low words differ: no store
  TEST_CASD(82, 0x11223344, 0x55667788, 0x01223344, 0x55667788, 0x99aabbcc, 0xddeeff00, 0x11223344, 0x55667788)
  TEST_CASD(83, 0x00000000, 0x80000000, 0x00000000, 0x80000000, 0xffffffff, 0x7fffffff, 0xffffffff, 0x7fffffff)

#ifndef QEMU_VIRT
  # rd pair x0: compares with zero, x1 is not written; rs2 pair x0 stores zero
test_84:
  li TESTNUM, 84
  la a5, amo_data
  sw zero, 0(a5)
  sw zero, 4(a5)
  li x1, 0x1234
  li a6, 0xaaaa5555
  li a7, 0x5555aaaa
  .insn r 0x2f, W_D, (F5_CAS << 2), x0, a5, a6
  li a1, 0x1234
  bne x1, a1, fail
  lw a4, 0(a5)
  li a1, 0xaaaa5555
  bne a4, a1, fail
  lw a4, 4(a5)
  li a1, 0x5555aaaa
  bne a4, a1, fail
  li a2, 0xaaaa5555
  li a3, 0x5555aaaa
  .insn r 0x2f, W_D, (F5_CAS << 2), a2, a5, x0
  bne a2, a6, fail
  bne a3, a7, fail
  lw a4, 0(a5)
  bnez a4, fail
  lw a4, 4(a5)
  bnez a4, fail

  # an odd rd or rs2 in amocas.d is reserved: illegal instruction, mtval = the bits
test_85:
  li TESTNUM, 85
  la a5, amo_data
  EXPECT_TRAP(1f)
85: .insn r 0x2f, W_D, (F5_CAS << 2), a3, a5, a6
  CANCEL_TRAP
  j fail
1:CHECK_TRAP(TRAP_CAUSE, CAUSE_ILLEGAL_INSN)
  CHECK_TRAP_ADDR(TRAP_EPC, 85b)
  la t0, 85b
  lw t1, 0(t0)
  LOAD_TRAP(t0, TRAP_TVAL)
  bne t0, t1, fail
test_86:
  li TESTNUM, 86
  la a5, amo_data
  EXPECT_TRAP(1f)
86: .insn r 0x2f, W_D, (F5_CAS << 2), a2, a5, a7
  CANCEL_TRAP
  j fail
1:CHECK_TRAP(TRAP_CAUSE, CAUSE_ILLEGAL_INSN)
  CHECK_TRAP_ADDR(TRAP_EPC, 86b)

  # amocas.d needs 8-byte alignment; amocas.w and amocas.h their own widths
  TEST_AMO_TRAP(87, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, 4, .insn r 0x2f, W_D, (F5_CAS << 2), a4, a5, a2)
  TEST_AMO_TRAP(88, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, 2, CAS W_W, 0, a4, a2, a5)
  TEST_AMO_TRAP(89, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, 3, CAS W_H, 0, a4, a2, a5)
  # LR/SC have no byte or halfword forms: illegal
test_90:
  li TESTNUM, 90
  la a5, amo_data
  EXPECT_TRAP(1f)
  .insn r 0x2f, W_H, (0x02 << 2), a4, a5, x0
  CANCEL_TRAP
  j fail
1:CHECK_TRAP(TRAP_CAUSE, CAUSE_ILLEGAL_INSN)
#endif

  # ------------------------------------------------------------ misaligned halfwords
  TEST_AMO_TRAP(100, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, 1, MISALIGNED_HALF_AMO(F5_ADD))
  TEST_AMO_TRAP(101, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, 3, MISALIGNED_HALF_AMO(F5_SWAP))
  TEST_AMO_TRAP(102, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, 1, MISALIGNED_HALF_AMO(F5_MAXU))

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
  .balign 128
amo_data:
  .word 0, 0, 0, 0
RVTEST_DATA_END
