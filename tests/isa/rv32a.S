# rv32a.S - RV32A atomics.
#
# lr.w/sc.w: success (rd = 0, the store happens), sc.w without a reservation
# fails (rd = 1, no store), sc.w to an address outside the reserved one
# fails, a successful sc.w consumes the reservation, aq/rl variants. Every
# AMO over sign corners, with rd = x0, rd == rs2 and rd == rs1, and with
# .aq/.rl/.aqrl. Misaligned LR/SC/AMO must trap (address-misaligned or
# access fault, as the spec allows either) with mtval = the address.
#include "test.h"

#define AMO_INIT(mem, val)                                               \
    la a5, amo_data;                                                     \
    li a1, mem;                                                          \
    sw a1, 0(a5);                                                        \
    li a2, val

#define AMO_CHECK_MEM(newmem)                                            \
    la a5, amo_data;                                                     \
    lw a4, 0(a5);                                                        \
    li a3, newmem;                                                       \
    bne a4, a3, fail

/* rd = old memory, memory = op(old, rs2), rs2 unchanged. */
#define TEST_AMO(testnum, op, mem, val, newmem)                          \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    AMO_INIT(mem, val);                                                  \
    op a4, a2, (a5);                                                     \
    li a3, mem;                                                          \
    bne a4, a3, fail;                                                    \
    li a3, val;                                                          \
    bne a2, a3, fail;                                                    \
    AMO_CHECK_MEM(newmem)

#define TEST_AMO_ZERODEST(testnum, op, mem, val, newmem)                 \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    AMO_INIT(mem, val);                                                  \
    op x0, a2, (a5);                                                     \
    addi a4, x0, 0;                                                      \
    bnez a4, fail;                                                       \
    AMO_CHECK_MEM(newmem)

#define TEST_AMO_RD_EQ_RS2(testnum, op, mem, val, newmem)                \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    AMO_INIT(mem, val);                                                  \
    op a2, a2, (a5);                                                     \
    li a3, mem;                                                          \
    bne a2, a3, fail;                                                    \
    AMO_CHECK_MEM(newmem)

#define TEST_AMO_RD_EQ_RS1(testnum, op, mem, val, newmem)                \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    AMO_INIT(mem, val);                                                  \
    op a5, a2, (a5);                                                     \
    li a3, mem;                                                          \
    bne a5, a3, fail;                                                    \
    AMO_CHECK_MEM(newmem)

/* The single instruction `insn` must raise a misaligned or access-fault
 * trap (cause `c1` or `c2`) with mepc = insn and mtval = misaligned_addr. */
#define TEST_AMO_MISALIGNED(testnum, c1, c2, insn...)                    \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a5, amo_data + 2;                                                 \
    li a2, 0x5555;                                                       \
    li a4, 0x7777;                                                       \
    EXPECT_TRAP(91f);                                                    \
90: insn;                                                                \
    CANCEL_TRAP;                                                         \
    j fail;                                                              \
91: CHECK_AMO_TRAP(c1, c2, 90b, amo_data + 2);                           \
    li t1, 0x7777;              /* rd not written */                     \
    bne a4, t1, fail;                                                    \
    AMO_CHECK_MEM(0x11223344)   /* memory untouched */


RVTEST_CODE_BEGIN

  # ------------------------------------------------------------ lr / sc
  # sc.w with no reservation at all (none was ever made): fails, no store
test_2:
  li TESTNUM, 2
  la a5, amo_data
  li a1, 0x11111111
  sw a1, 0(a5)
  li a2, 0x22222222
  li a4, 0x5a5a5a5a
  sc.w a4, a2, (a5)
  li a3, 1
  bne a4, a3, fail
  lw a4, 0(a5)
  bne a4, a1, fail

  # lr.w returns the value, sc.w succeeds (rd = 0) and stores
test_3:
  li TESTNUM, 3
  la a5, amo_data
  li a1, 0x33333333
  sw a1, 0(a5)
  li a2, 0x44444444
  lr.w a4, (a5)
  bne a4, a1, fail
  sc.w a3, a2, (a5)
  bnez a3, fail
  lw a4, 0(a5)
  bne a4, a2, fail

  # the reservation is consumed by the successful sc.w: a second one fails
test_4:
  li TESTNUM, 4
  li a2, 0x55555555
  sc.w a3, a2, (a5)
  li a4, 1
  bne a3, a4, fail
  lw a4, 0(a5)
  li a3, 0x44444444
  bne a4, a3, fail

  # sc.w to another address (a different 128-byte block) than the lr.w fails
test_5:
  li TESTNUM, 5
  la a5, amo_data
  la a0, amo_far
  li a1, 0x66666666
  sw a1, 0(a0)
  lr.w a4, (a5)
  li a2, 0x77777777
  sc.w a3, a2, (a0)
  li a4, 1
  bne a3, a4, fail
  lw a4, 0(a0)
  bne a4, a1, fail
  # ... and that failed sc.w did not leave a usable reservation behind
  sc.w a3, a2, (a5)
  li a4, 1
  bne a3, a4, fail

  # a failed sc.w does not make the next lr/sc pair fail
test_6:
  li TESTNUM, 6
  la a5, amo_data
  lr.w a4, (a5)
  li a2, 0x12121212
  sc.w a3, a2, (a5)
  bnez a3, fail
  lw a4, 0(a5)
  bne a4, a2, fail

  # rd == rs2 for sc.w: the old rs2 is stored, then rd = 0
test_7:
  li TESTNUM, 7
  la a5, amo_data
  lr.w a4, (a5)
  li a2, 0x13131313
  sc.w a2, a2, (a5)
  bnez a2, fail
  lw a4, 0(a5)
  li a3, 0x13131313
  bne a4, a3, fail

  # rd == rs1 for lr.w and for sc.w
test_8:
  li TESTNUM, 8
  la a5, amo_data
  lr.w a5, (a5)
  li a3, 0x13131313
  bne a5, a3, fail
  la a5, amo_data
  li a2, 0x14141414
  sc.w a5, a2, (a5)
  bnez a5, fail
  la a5, amo_data
  lw a4, 0(a5)
  bne a4, a2, fail

  # sc.w with rd = x0: the store happens, x0 stays 0
test_9:
  li TESTNUM, 9
  la a5, amo_data
  lr.w a4, (a5)
  li a2, 0x15151515
  sc.w x0, a2, (a5)
  bnez x0, fail
  lw a4, 0(a5)
  bne a4, a2, fail

  # aq/rl variants behave the same
test_10:
  li TESTNUM, 10
  la a5, amo_data
  lr.w.aq a4, (a5)
  li a2, 0x16161616
  sc.w.rl a3, a2, (a5)
  bnez a3, fail
  lr.w.aqrl a4, (a5)
  bne a4, a2, fail
  li a2, 0x17171717
  sc.w.aqrl a3, a2, (a5)
  bnez a3, fail
  lr.w.rl a4, (a5)
  bne a4, a2, fail
  li a2, 0x18181818
  sc.w.aq a3, a2, (a5)
  bnez a3, fail
  lw a4, 0(a5)
  bne a4, a2, fail

  # the canonical atomic-increment loop
test_11:
  li TESTNUM, 11
  la a5, amo_data
  sw zero, 0(a5)
  li a1, 100
10: lr.w a4, (a5)
  addi a4, a4, 3
  sc.w a3, a4, (a5)
  bnez a3, 10b
  addi a1, a1, -1
  bnez a1, 10b
  lw a4, 0(a5)
  li a3, 300
  bne a4, a3, fail

  # an lr.w to a second address replaces the reservation: sc.w to the first fails
test_12:
  li TESTNUM, 12
  la a5, amo_data
  la a0, amo_far
  lr.w a4, (a5)
  lr.w a4, (a0)
  li a2, 0x19191919
  sc.w a3, a2, (a5)
  li a4, 1
  bne a3, a4, fail
  # ... while an sc.w to the second address succeeds
  lr.w a4, (a5)
  lr.w a4, (a0)
  sc.w a3, a2, (a0)
  bnez a3, fail
  lw a4, 0(a0)
  bne a4, a2, fail

  # ---------------------------------------------------------------- AMOs
  # amoswap.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(100, amoswap.w, 0xffffffff, 0x00000001, 0x00000001)
  TEST_AMO(101, amoswap.w, 0x80000000, 0x7fffffff, 0x7fffffff)
  TEST_AMO(102, amoswap.w, 0x7fffffff, 0x80000000, 0x80000000)
  TEST_AMO(103, amoswap.w, 0x12345678, 0xf0f0f0f0, 0xf0f0f0f0)
  TEST_AMO(104, amoswap.w, 0x00000000, 0xffffffff, 0xffffffff)
  TEST_AMO(105, amoswap.w, 0x80000000, 0x80000000, 0x80000000)
  TEST_AMO_ZERODEST(106, amoswap.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO_RD_EQ_RS2(107, amoswap.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO_RD_EQ_RS1(108, amoswap.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(109, amoswap.w.aq, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(110, amoswap.w.rl, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(111, amoswap.w.aqrl, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  # amoadd.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(112, amoadd.w, 0xffffffff, 0x00000001, 0x00000000)
  TEST_AMO(113, amoadd.w, 0x80000000, 0x7fffffff, 0xffffffff)
  TEST_AMO(114, amoadd.w, 0x7fffffff, 0x80000000, 0xffffffff)
  TEST_AMO(115, amoadd.w, 0x12345678, 0xf0f0f0f0, 0x03254768)
  TEST_AMO(116, amoadd.w, 0x00000000, 0xffffffff, 0xffffffff)
  TEST_AMO(117, amoadd.w, 0x80000000, 0x80000000, 0x00000000)
  TEST_AMO_ZERODEST(118, amoadd.w, 0x0000fff0, 0xfffffff8, 0x0000ffe8)
  TEST_AMO_RD_EQ_RS2(119, amoadd.w, 0x0000fff0, 0xfffffff8, 0x0000ffe8)
  TEST_AMO_RD_EQ_RS1(120, amoadd.w, 0x0000fff0, 0xfffffff8, 0x0000ffe8)
  TEST_AMO(121, amoadd.w.aq, 0x0000fff0, 0xfffffff8, 0x0000ffe8)
  TEST_AMO(122, amoadd.w.rl, 0x0000fff0, 0xfffffff8, 0x0000ffe8)
  TEST_AMO(123, amoadd.w.aqrl, 0x0000fff0, 0xfffffff8, 0x0000ffe8)
  # amoxor.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(124, amoxor.w, 0xffffffff, 0x00000001, 0xfffffffe)
  TEST_AMO(125, amoxor.w, 0x80000000, 0x7fffffff, 0xffffffff)
  TEST_AMO(126, amoxor.w, 0x7fffffff, 0x80000000, 0xffffffff)
  TEST_AMO(127, amoxor.w, 0x12345678, 0xf0f0f0f0, 0xe2c4a688)
  TEST_AMO(128, amoxor.w, 0x00000000, 0xffffffff, 0xffffffff)
  TEST_AMO(129, amoxor.w, 0x80000000, 0x80000000, 0x00000000)
  TEST_AMO_ZERODEST(130, amoxor.w, 0x0000fff0, 0xfffffff8, 0xffff0008)
  TEST_AMO_RD_EQ_RS2(131, amoxor.w, 0x0000fff0, 0xfffffff8, 0xffff0008)
  TEST_AMO_RD_EQ_RS1(132, amoxor.w, 0x0000fff0, 0xfffffff8, 0xffff0008)
  TEST_AMO(133, amoxor.w.aq, 0x0000fff0, 0xfffffff8, 0xffff0008)
  TEST_AMO(134, amoxor.w.rl, 0x0000fff0, 0xfffffff8, 0xffff0008)
  TEST_AMO(135, amoxor.w.aqrl, 0x0000fff0, 0xfffffff8, 0xffff0008)
  # amoand.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(136, amoand.w, 0xffffffff, 0x00000001, 0x00000001)
  TEST_AMO(137, amoand.w, 0x80000000, 0x7fffffff, 0x00000000)
  TEST_AMO(138, amoand.w, 0x7fffffff, 0x80000000, 0x00000000)
  TEST_AMO(139, amoand.w, 0x12345678, 0xf0f0f0f0, 0x10305070)
  TEST_AMO(140, amoand.w, 0x00000000, 0xffffffff, 0x00000000)
  TEST_AMO(141, amoand.w, 0x80000000, 0x80000000, 0x80000000)
  TEST_AMO_ZERODEST(142, amoand.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO_RD_EQ_RS2(143, amoand.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO_RD_EQ_RS1(144, amoand.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(145, amoand.w.aq, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(146, amoand.w.rl, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(147, amoand.w.aqrl, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  # amoor.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(148, amoor.w, 0xffffffff, 0x00000001, 0xffffffff)
  TEST_AMO(149, amoor.w, 0x80000000, 0x7fffffff, 0xffffffff)
  TEST_AMO(150, amoor.w, 0x7fffffff, 0x80000000, 0xffffffff)
  TEST_AMO(151, amoor.w, 0x12345678, 0xf0f0f0f0, 0xf2f4f6f8)
  TEST_AMO(152, amoor.w, 0x00000000, 0xffffffff, 0xffffffff)
  TEST_AMO(153, amoor.w, 0x80000000, 0x80000000, 0x80000000)
  TEST_AMO_ZERODEST(154, amoor.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO_RD_EQ_RS2(155, amoor.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO_RD_EQ_RS1(156, amoor.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(157, amoor.w.aq, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(158, amoor.w.rl, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(159, amoor.w.aqrl, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  # amomin.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(160, amomin.w, 0xffffffff, 0x00000001, 0xffffffff)
  TEST_AMO(161, amomin.w, 0x80000000, 0x7fffffff, 0x80000000)
  TEST_AMO(162, amomin.w, 0x7fffffff, 0x80000000, 0x80000000)
  TEST_AMO(163, amomin.w, 0x12345678, 0xf0f0f0f0, 0xf0f0f0f0)
  TEST_AMO(164, amomin.w, 0x00000000, 0xffffffff, 0xffffffff)
  TEST_AMO(165, amomin.w, 0x80000000, 0x80000000, 0x80000000)
  TEST_AMO_ZERODEST(166, amomin.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO_RD_EQ_RS2(167, amomin.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO_RD_EQ_RS1(168, amomin.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(169, amomin.w.aq, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(170, amomin.w.rl, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(171, amomin.w.aqrl, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  # amomax.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(172, amomax.w, 0xffffffff, 0x00000001, 0x00000001)
  TEST_AMO(173, amomax.w, 0x80000000, 0x7fffffff, 0x7fffffff)
  TEST_AMO(174, amomax.w, 0x7fffffff, 0x80000000, 0x7fffffff)
  TEST_AMO(175, amomax.w, 0x12345678, 0xf0f0f0f0, 0x12345678)
  TEST_AMO(176, amomax.w, 0x00000000, 0xffffffff, 0x00000000)
  TEST_AMO(177, amomax.w, 0x80000000, 0x80000000, 0x80000000)
  TEST_AMO_ZERODEST(178, amomax.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO_RD_EQ_RS2(179, amomax.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO_RD_EQ_RS1(180, amomax.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(181, amomax.w.aq, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(182, amomax.w.rl, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(183, amomax.w.aqrl, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  # amominu.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(184, amominu.w, 0xffffffff, 0x00000001, 0x00000001)
  TEST_AMO(185, amominu.w, 0x80000000, 0x7fffffff, 0x7fffffff)
  TEST_AMO(186, amominu.w, 0x7fffffff, 0x80000000, 0x7fffffff)
  TEST_AMO(187, amominu.w, 0x12345678, 0xf0f0f0f0, 0x12345678)
  TEST_AMO(188, amominu.w, 0x00000000, 0xffffffff, 0x00000000)
  TEST_AMO(189, amominu.w, 0x80000000, 0x80000000, 0x80000000)
  TEST_AMO_ZERODEST(190, amominu.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO_RD_EQ_RS2(191, amominu.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO_RD_EQ_RS1(192, amominu.w, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(193, amominu.w.aq, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(194, amominu.w.rl, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  TEST_AMO(195, amominu.w.aqrl, 0x0000fff0, 0xfffffff8, 0x0000fff0)
  # amomaxu.w: rd = old memory, memory = op(old, rs2)
  TEST_AMO(196, amomaxu.w, 0xffffffff, 0x00000001, 0xffffffff)
  TEST_AMO(197, amomaxu.w, 0x80000000, 0x7fffffff, 0x80000000)
  TEST_AMO(198, amomaxu.w, 0x7fffffff, 0x80000000, 0x80000000)
  TEST_AMO(199, amomaxu.w, 0x12345678, 0xf0f0f0f0, 0xf0f0f0f0)
  TEST_AMO(200, amomaxu.w, 0x00000000, 0xffffffff, 0xffffffff)
  TEST_AMO(201, amomaxu.w, 0x80000000, 0x80000000, 0x80000000)
  TEST_AMO_ZERODEST(202, amomaxu.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO_RD_EQ_RS2(203, amomaxu.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO_RD_EQ_RS1(204, amomaxu.w, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(205, amomaxu.w.aq, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(206, amomaxu.w.rl, 0x0000fff0, 0xfffffff8, 0xfffffff8)
  TEST_AMO(207, amomaxu.w.aqrl, 0x0000fff0, 0xfffffff8, 0xfffffff8)

  # ------------------------------------------------------- misaligned
  la a5, amo_data
  li a1, 0x11223344
  sw a1, 0(a5)
  TEST_AMO_MISALIGNED(300, CAUSE_MISALIGNED_LOAD, CAUSE_LOAD_ACCESS, lr.w a4, (a5))
  # (a misaligned sc.w is in misaligned.S: QEMU 7.2 fails it without trapping)
  TEST_AMO_MISALIGNED(302, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, amoswap.w a4, a2, (a5))
  TEST_AMO_MISALIGNED(303, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, amoadd.w a4, a2, (a5))
  TEST_AMO_MISALIGNED(304, CAUSE_MISALIGNED_STORE, CAUSE_STORE_ACCESS, amomaxu.w a4, a2, (a5))

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
  .balign 128
amo_data:
  .word 0, 0
  .balign 128
amo_far:
  .word 0, 0
RVTEST_DATA_END
