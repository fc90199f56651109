# rv32c.S - the C extension (RV32 forms, incl. RV32FC/DC loads and stores).
#
# Every compressed instruction written with its explicit c. mnemonic, at
# the ends of its immediate range: c.addi4spn, c.lw/c.sw, c.flw/c.fsw,
# c.fld/c.fsd, c.nop, c.addi, c.jal, c.li, c.addi16sp, c.lui, c.srli,
# c.srai, c.andi, c.sub, c.xor, c.or, c.and, c.j, c.beqz, c.bnez, c.slli,
# c.lwsp, c.flwsp, c.fldsp, c.jr, c.mv, c.ebreak, c.jalr, c.add, c.swsp,
# c.fswsp, c.fsdsp. Link values are pc + 2. Also: 32-bit instructions at
# 2-byte aligned addresses, one that straddles a 4 KiB page boundary, jumps
# to 2-byte aligned targets, and reserved encodings that must be illegal.
#include "test.h"

#define CDATA_WORD(off) (0xc0de0000 + (off))

RVTEST_CODE_BEGIN
  .option rvc

  # ---------------------------------------------- stack-pointer based
  la sp, cdata
  TEST_CASE(2, a4, 4, c.addi4spn a0, sp, 4; sub a4, a0, sp)
  TEST_CASE(3, a4, 1020, c.addi4spn a0, sp, 1020; sub a4, a0, sp)
  TEST_CASE(4, a4, 512, c.addi4spn s0, sp, 512; sub a4, s0, sp)
  TEST_CASE(5, a4, CDATA_WORD(0), c.lwsp a4, 0(sp))
  TEST_CASE(6, a4, CDATA_WORD(252), c.lwsp a4, 252(sp))
  TEST_CASE(7, t6, CDATA_WORD(128), c.lwsp t6, 128(sp))
  TEST_CASE(8, a4, CDATA_WORD(4), c.flwsp fa0, 4(sp); fmv.x.w a4, fa0)
  TEST_CASE(9, a4, CDATA_WORD(252), c.flwsp ft11, 252(sp); fmv.x.w a4, ft11)
  # c.fldsp: 0 and 504
  TEST_CASE(10, a4, CDATA_WORD(0), c.fldsp fa0, 0(sp); la a5, scratch; fsd fa0, 0(a5); lw a4, 0(a5); lw a3, 4(a5); li a2, CDATA_WORD(4); bne a3, a2, fail)
  TEST_CASE(11, a4, CDATA_WORD(504), c.fldsp ft11, 504(sp); la a5, scratch; fsd ft11, 0(a5); lw a4, 0(a5); lw a3, 4(a5); li a2, CDATA_WORD(508); bne a3, a2, fail)
  # c.swsp / c.fswsp / c.fsdsp into the store buffer
  la sp, cstore
  TEST_CASE(12, a4, 0x11111111, li a1, 0x11111111; c.swsp a1, 0(sp); lw a4, 0(sp))
  TEST_CASE(13, a4, 0x22222222, li t6, 0x22222222; c.swsp t6, 252(sp); lw a4, 252(sp))
  TEST_CASE(14, a4, 0x33333333, li a1, 0x33333333; fmv.w.x ft0, a1; c.fswsp ft0, 124(sp); lw a4, 124(sp))
  TEST_CASE(15, a4, 0x44444444, li a1, 0x44444444; fmv.w.x fs11, a1; c.fswsp fs11, 252(sp); lw a4, 252(sp))
  TEST_CASE(16, a4, CDATA_WORD(248), la a5, cdata; fld ft1, 248(a5); c.fsdsp ft1, 504(sp); lw a4, 504(sp); lw a3, 508(sp); li a2, CDATA_WORD(252); bne a3, a2, fail)
  TEST_CASE(17, a4, CDATA_WORD(8), la a5, cdata; fld ft1, 8(a5); c.fsdsp ft1, 0(sp); lw a4, 0(sp); lw a3, 4(sp); li a2, CDATA_WORD(12); bne a3, a2, fail)

  # c.addi16sp: -512 and 496 (multiples of 16)
  TEST_CASE(18, a4, 496, la sp, cdata; mv a5, sp; c.addi16sp sp, 496; sub a4, sp, a5)
  TEST_CASE(19, a4, -512, la sp, cdata; mv a5, sp; c.addi16sp sp, -512; sub a4, sp, a5)
  TEST_CASE(20, a4, -16, la sp, cdata; mv a5, sp; c.addi16sp sp, -16; sub a4, sp, a5)

  # ------------------------------------------------- register based loads/stores
  TEST_CASE(30, a4, CDATA_WORD(0), la a5, cdata; c.lw a4, 0(a5))
  TEST_CASE(31, a4, CDATA_WORD(124), la a5, cdata; c.lw a4, 124(a5))
  TEST_CASE(32, s0, CDATA_WORD(64), la s1, cdata; c.lw s0, 64(s1))
  TEST_CASE(33, a5, CDATA_WORD(8), la a5, cdata; c.lw a5, 8(a5))
  TEST_CASE(34, a4, 0x5a5a5a5a, la a5, cstore; li a4, 0x5a5a5a5a; c.sw a4, 124(a5); lw a4, 124(a5))
  TEST_CASE(35, a4, 0x6b6b6b6b, la s1, cstore; li s0, 0x6b6b6b6b; c.sw s0, 0(s1); lw a4, 0(s1))
  TEST_CASE(36, a4, CDATA_WORD(124), la a5, cdata; c.flw fa0, 124(a5); fmv.x.w a4, fa0)
  TEST_CASE(37, a4, CDATA_WORD(0), la s0, cdata; c.flw fs0, 0(s0); fmv.x.w a4, fs0)
  TEST_CASE(38, a4, 0x7c7c7c7c, la a5, cstore; li a1, 0x7c7c7c7c; fmv.w.x fa5, a1; c.fsw fa5, 124(a5); lw a4, 124(a5))
  TEST_CASE(39, a4, CDATA_WORD(248), la a5, cdata; c.fld fa1, 248(a5); la a3, scratch; fsd fa1, 0(a3); lw a4, 0(a3); lw a2, 4(a3); li a1, CDATA_WORD(252); bne a2, a1, fail)
  TEST_CASE(40, a4, CDATA_WORD(16), la a5, cdata; fld fs1, 16(a5); la a5, cstore; c.fsd fs1, 248(a5); lw a4, 248(a5); lw a2, 252(a5); li a1, CDATA_WORD(20); bne a2, a1, fail)
  TEST_CASE(41, a4, CDATA_WORD(0), la a5, cdata; c.fld fs1, 0(a5); la a5, cstore; c.fsd fs1, 0(a5); lw a4, 0(a5); lw a2, 4(a5); li a1, CDATA_WORD(4); bne a2, a1, fail)

  # --------------------------------------------------------- constants
  TEST_CASE(50, a4, -32, c.li a4, -32)
  TEST_CASE(51, a4, 31, c.li a4, 31)
  TEST_CASE(52, a4, 0, li a4, 7; c.li a4, 0)
  TEST_CASE(53, t6, -1, c.li t6, -1)
  TEST_CASE(54, a4, 0x00001000, c.lui a4, 1)
  TEST_CASE(55, a4, 0x0001f000, c.lui a4, 0x1f)
  TEST_CASE(56, a4, 0xfffe0000, c.lui a4, 0xfffe0)
  TEST_CASE(57, a4, 0xfffff000, c.lui a4, 0xfffff)
  TEST_CASE(58, ra, 0x00005000, c.lui ra, 5)

  # ---------------------------------------------------- arithmetic
  TEST_CASE(60, a4, 0x00000020, li a4, 1; c.addi a4, 31)
  TEST_CASE(61, a4, 0xffffffe1, li a4, 1; c.addi a4, -32)
  TEST_CASE(62, a4, 0x00000000, li a4, 1; c.addi a4, -1)
  TEST_CASE(63, a4, 0x80000000, li a4, 0x7fffffff; c.addi a4, 1)
  TEST_CASE(64, t6, 0x00000010, li t6, 0x11; c.addi t6, -1)
  TEST_CASE(65, a4, 0x00000055, li a4, 0x55; c.nop; c.nop)
  TEST_CASE(66, a4, 0x7fffffff, li a4, 0xffffffff; c.srli a4, 1)
  TEST_CASE(67, a4, 0x00000001, li a4, 0x80000000; c.srli a4, 31)
  TEST_CASE(68, a4, 0xc0000000, li a4, 0x80000000; c.srai a4, 1)
  TEST_CASE(69, a4, 0xffffffff, li a4, 0x80000000; c.srai a4, 31)
  TEST_CASE(70, a4, 0x00000000, li a4, 0x7fffffff; c.srai a4, 31)
  TEST_CASE(71, a4, 0x80000000, li a4, 0x00000001; c.slli a4, 31)
  TEST_CASE(72, a4, 0x2468acf0, li a4, 0x12345678; c.slli a4, 1)
  TEST_CASE(73, t6, 0x80000000, li t6, 0x00000003; c.slli t6, 31)
  TEST_CASE(74, a4, 0x12345660, li a4, 0x12345678; c.andi a4, -32)
  TEST_CASE(75, a4, 0x00000018, li a4, 0x12345678; c.andi a4, 31)
  TEST_CASE(76, a4, 0x00000000, li a4, 0x12345678; c.andi a4, 0)
  TEST_CASE(77, a4, 0x12345678, li a4, 0x12345678; c.andi a4, -1)
  TEST_CASE(78, a4, 0xfffffffe, li a4, 1; li a5, 3; c.sub a4, a5)
  TEST_CASE(79, a4, 0x00000000, li a4, 0x12345678; c.sub a4, a4)
  TEST_CASE(80, a4, 0x80000000, li a4, 0x7fffffff; li a5, 0xffffffff; c.sub a4, a5)
  TEST_CASE(81, a4, 0xff00ff00, li a4, 0xf0f0f0f0; li a5, 0x0ff00ff0; c.xor a4, a5)
  TEST_CASE(82, a4, 0x00000000, li a4, 0xf0f0f0f0; c.xor a4, a4)
  TEST_CASE(83, a4, 0xfff0fff0, li a4, 0xf0f0f0f0; li a5, 0x0ff00ff0; c.or a4, a5)
  TEST_CASE(84, a4, 0x00f000f0, li a4, 0xf0f0f0f0; li a5, 0x0ff00ff0; c.and a4, a5)
  TEST_CASE(85, s0, 0x00f000f0, li s0, 0xf0f0f0f0; li s1, 0x0ff00ff0; c.and s0, s1)
  TEST_CASE(86, a4, 0x12345678, li a5, 0x12345678; li a4, 0; c.mv a4, a5)
  TEST_CASE(87, t6, 0x87654321, li ra, 0x87654321; c.mv t6, ra)
  TEST_CASE(88, a4, 0x00000000, li a4, 0x7fffffff; li a5, 0x80000001; c.add a4, a5)
  TEST_CASE(89, a4, 0x2468acf0, li a4, 0x12345678; c.add a4, a4)
  TEST_CASE(90, t6, 0x00000003, li t6, 1; li ra, 2; c.add t6, ra)

  # ------------------------------------------------------------- jumps
  # c.j / c.jal at the ends of their +-2 KiB range (unexecuted filler is
  # c.ebreak, so running into it fails the test with an unexpected trap)
test_100:
  li TESTNUM, 100
  c.j 10f
  .rept 1022
  c.ebreak
  .endr
10: nop                   # exactly +2046 bytes after the c.j
test_101:
  li TESTNUM, 101
  c.j 11f
10: c.j 12f
  .rept 1023
  c.ebreak
  .endr
11: c.j 10b               # exactly -2048 bytes
  c.ebreak
12: nop
test_102:
  li TESTNUM, 102
13: c.jal 10f
  .rept 1022
  c.ebreak
  .endr
10: la a5, 13b + 2        # link = address of the c.jal + 2
  bne ra, a5, fail
test_103:
  li TESTNUM, 103
  c.j 11f
10: c.j 12f
  .rept 1023
  c.ebreak
  .endr
11: c.jal 10b
14: c.ebreak
12: la a5, 14b
  bne ra, a5, fail

  # c.beqz / c.bnez: taken at +254 and -256, and not taken
test_110:
  li TESTNUM, 110
  li a0, 0
  c.beqz a0, 10f
  .rept 126
  c.ebreak
  .endr
10: c.bnez a0, fail2
  li a0, 5
  c.beqz a0, fail2
  c.bnez a0, 11f
  .rept 126
  c.ebreak
  .endr
11: nop
test_111:
  li TESTNUM, 111
  li s1, 0
  c.j 11f
10: c.j 12f
  .rept 127
  c.ebreak
  .endr
11: c.beqz s1, 10b        # exactly -256 bytes
  c.ebreak
12: li s1, -1
  c.j 14f
13: c.j 15f
  .rept 127
  c.ebreak
  .endr
14: c.bnez s1, 13b
  c.ebreak
15: nop
test_112:
  li TESTNUM, 112
  li a4, 0
  li a0, 10
10: addi a4, a4, 3        # a compressed loop
  c.addi a0, -1
  c.bnez a0, 10b
  li a5, 30
  bne a4, a5, fail

  # c.jr / c.jalr (link = pc + 2), with rs1 == ra for c.jalr
test_120:
  li TESTNUM, 120
  la a0, 10f
  c.jr a0
  c.ebreak
10: la a0, 11f
13: c.jalr a0
14: c.ebreak
11: la a5, 14b
  bne ra, a5, fail
test_121:
  li TESTNUM, 121
  la ra, 10f
15: c.jalr ra             # jumps to the old ra, then ra = pc + 2
16: c.ebreak
10: la a5, 16b
  bne ra, a5, fail
test_122:
  li TESTNUM, 122
  li a4, 0
  call 10f                # a compressed return (c.jr ra)
  li a5, 9
  bne a4, a5, fail
  j 11f
10: li a4, 9
  c.jr ra
11: nop

  # ---------------------------------------------- mixed 16/32-bit streams
  # a 32-bit instruction at an address that is 2 mod 4, and jumps to such
  # addresses
test_130:
  li TESTNUM, 130
  .balign 4
  c.li a4, 1
  addi a4, a4, 0x100      # at 2 mod 4
  c.addi a4, 2
  li a5, 0x103
  bne a4, a5, fail
test_131:
  li TESTNUM, 131
  .balign 4
  la a0, 10f
  andi a1, a0, 2
  beqz a1, fail           # 10f must be 2 mod 4
  jalr a3, 0(a0)
  c.ebreak
  .balign 4
  c.nop
10: li a4, 77             # 32-bit li at 2 mod 4
  li a5, 77
  bne a4, a5, fail
  .balign 4
  c.nop
  jal a3, 11f             # a 32-bit jal from 2 mod 4 to 2 mod 4
12: c.ebreak
  .balign 4
  c.nop
11: la a5, 12b
  bne a3, a5, fail

  # a 32-bit instruction straddling a 4 KiB page boundary
test_132:
  li TESTNUM, 132
  j 10f
  .balign 4096
  .skip 4092
10: c.li a4, 5            # page offset 0xffc
  c.nop                   # page offset 0xffe: ends the page
  c.li a5, 1              # next page starts
  j 11f
  .balign 4096
  .skip 4094
11: addi a4, a4, 7        # offset 0xffe, spans into the next page
  add a4, a4, a5
  li a5, 13
  bne a4, a5, fail

  # ------------------------------------------------- traps
  TEST_TRAP(140, CAUSE_BREAKPOINT, c.ebreak)
  # reserved encodings are illegal: c.addi4spn with imm 0 (0x0000),
  # c.addi16sp with imm 0, c.lui with imm 0, c.jr with rs1 = x0,
  # c.lwsp with rd = x0
  TEST_TRAP_TVAL(141, CAUSE_ILLEGAL_INSN, 0x0000, .hword 0x0000)
  TEST_TRAP_TVAL(142, CAUSE_ILLEGAL_INSN, 0x6101, .hword 0x6101)
  TEST_TRAP_TVAL(143, CAUSE_ILLEGAL_INSN, 0x6501, .hword 0x6501)
  TEST_TRAP_TVAL(144, CAUSE_ILLEGAL_INSN, 0x8002, .hword 0x8002)
  TEST_TRAP_TVAL(145, CAUSE_ILLEGAL_INSN, 0x4002, .hword 0x4002)

  TEST_PASSFAIL
fail2:
  j fail

RVTEST_CODE_END

RVTEST_DATA_BEGIN
  .balign 16
cdata:
  .set cdata_offset, 0
  .rept 160
  .word CDATA_WORD(cdata_offset)
  .set cdata_offset, cdata_offset + 4
  .endr
  .balign 16
cstore:
  .skip 640
scratch:
  .skip 16
RVTEST_DATA_END
