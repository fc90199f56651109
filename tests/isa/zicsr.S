# zicsr.S - Zicsr and the machine-mode CSRs.
#
# csrrw/csrrs/csrrc and their immediate forms (old value returned, rd == rs1,
# rd = x0, rs1 = x0 / uimm = 0 do not write), read-only CSRs (reading and
# csrrs/csrrc with x0 are legal, any write is illegal with mtval = the
# instruction bits), an unimplemented CSR (0x5c0) is illegal, mscratch round
# trip, misa (RV32 with I M A F D C), mhartid = 0, mstatus.FS tracking
# (FP op -> Dirty with SD set, FS = Off makes every FP instruction and FP CSR
# illegal), mtvec direct/vectored read-back, medeleg/mideleg/mie/mip
# writable bits, the counters (cycle/instret/time and their high halves,
# mcycle/minstret) readable and moving.
#include "test.h"

/* Runs `code` expecting no trap; fails if one happened. */
#define NO_TRAP(code...)                                                 \
    LOAD_TRAP(s10, TRAP_COUNT);                                          \
    code;                                                                \
    LOAD_TRAP(t0, TRAP_COUNT);                                           \
    bne t0, s10, fail

RVTEST_CODE_BEGIN
  csrr s11, mscratch          # the trap handler's pointer: restored below

  # ---------------------------------------------------- read/modify/write
  TEST_CASE(2, a4, 0x12345678, li a1, 0x12345678; csrw mscratch, a1; csrr a4, mscratch)
  TEST_CASE(3, a4, 0x12345678, li a1, 0xcafebabe; csrrw a4, mscratch, a1; csrr a5, mscratch; bne a5, a1, fail)
  TEST_CASE(4, a4, 0xcafebabe, li a1, 0x00000101; csrrs a4, mscratch, a1; csrr a5, mscratch; li a3, 0xcafebbbf; bne a5, a3, fail)
  TEST_CASE(5, a4, 0xcafebbbf, li a1, 0xcafe0000; csrrc a4, mscratch, a1; csrr a5, mscratch; li a3, 0x0000bbbf; bne a5, a3, fail)
  TEST_CASE(6, a4, 0x0000bbbf, csrrwi a4, mscratch, 31; csrr a5, mscratch; li a3, 31; bne a5, a3, fail)
  TEST_CASE(7, a4, 0x0000001f, csrrci a4, mscratch, 0x15; csrr a5, mscratch; li a3, 0x0a; bne a5, a3, fail)
  TEST_CASE(8, a4, 0x0000000a, csrrsi a4, mscratch, 0x11; csrr a5, mscratch; li a3, 0x1b; bne a5, a3, fail)
  TEST_CASE(9, a4, 0x0000001b, csrrwi a4, mscratch, 0; csrr a5, mscratch; bnez a5, fail)
  # rd == rs1: a swap
  TEST_CASE(10, a1, 0x00000000, li a1, 0x55aa55aa; csrrw a1, mscratch, a1; csrr a5, mscratch; li a3, 0x55aa55aa; bne a5, a3, fail)
  TEST_CASE(11, a1, 0x55aa55aa, li a1, 0x0000ffff; csrrs a1, mscratch, a1; csrr a5, mscratch; li a3, 0x55aaffff; bne a5, a3, fail)
  TEST_CASE(12, a1, 0x55aaffff, li a1, 0x55aa0000; csrrc a1, mscratch, a1; csrr a5, mscratch; li a3, 0x0000ffff; bne a5, a3, fail)
  # rs1 = x0 / uimm = 0 with csrrs/csrrc: read only, no write
  TEST_CASE(13, a4, 0x0000ffff, csrrs a4, mscratch, x0; csrrc a5, mscratch, x0; bne a4, a5, fail; csrrsi a5, mscratch, 0; bne a4, a5, fail; csrrci a5, mscratch, 0; csrr a5, mscratch; bne a4, a5, fail)
  # rd = x0: still writes
  TEST_CASE(14, a4, 0x87654321, li a1, 0x87654321; csrrw x0, mscratch, a1; csrr a4, mscratch)
  TEST_CASE(15, a4, 0x87654320, csrrci x0, mscratch, 1; csrr a4, mscratch)
  TEST_CASE(16, a4, 0xffffffff, li a1, -1; csrw mscratch, a1; csrr a4, mscratch)
  TEST_CASE(17, a4, 0x00000000, csrw mscratch, zero; csrr a4, mscratch)
  TEST_CASE(18, x0, 0, li a1, 5; csrw mscratch, a1; csrr x0, mscratch; addi a4, x0, 0; bnez a4, fail)
  csrw mscratch, s11

  # ----------------------------------------------------- identification
  TEST_CASE(20, a4, 0, csrr a4, mhartid)
  # misa: MXL = 1 (RV32) and I, M, A, F, D, C present
  TEST_CASE(21, a4, 1, csrr a1, misa; srli a4, a1, 30)
  TEST_CASE(22, a4, 0x112d, csrr a1, misa; li a2, 0x112d; and a4, a1, a2)
  # mvendorid/marchid/mimpid are readable
  TEST_CASE(23, a4, 0, csrr a1, mvendorid; csrr a2, marchid; csrr a3, mimpid; li a4, 0)

  # ------------------------------------------ read-only CSRs and bad CSRs
  # legal: reads, and csrrs/csrrc/csrrsi/csrrci that do not write
  TEST_CASE(30, a4, 0, NO_TRAP(csrrs a4, mhartid, x0; csrrc a5, mhartid, x0; csrrsi a5, mhartid, 0; csrrci a5, mhartid, 0; csrr a5, mvendorid; csrr a5, cycle))
  # illegal: any write; mtval = the instruction bits
  TEST_TRAP_TVAL(31, CAUSE_ILLEGAL_INSN, 0xf1459073, csrw mhartid, a1)
  TEST_TRAP_TVAL(32, CAUSE_ILLEGAL_INSN, 0xf1405773, csrrwi a4, mhartid, 0)
  TEST_TRAP_TVAL(33, CAUSE_ILLEGAL_INSN, 0xf140e773, csrrsi a4, mhartid, 1)
  li a1, 1
  TEST_TRAP_TVAL(35, CAUSE_ILLEGAL_INSN, 0xf145a773, csrrs a4, mhartid, a1)
  TEST_TRAP_TVAL(36, CAUSE_ILLEGAL_INSN, 0xc0059073, csrw cycle, a1)
  TEST_TRAP_TVAL(37, CAUSE_ILLEGAL_INSN, 0xf1159073, csrw mvendorid, a1)
  # rd is not written by a trapping CSR instruction
  li a4, 0x1234
  TEST_TRAP(39, CAUSE_ILLEGAL_INSN, csrrw a4, mhartid, a1)
  TEST_CASE(40, a4, 0x1234, nop)
  # an unimplemented CSR (0x5c0) is illegal to read and to write
  TEST_TRAP_TVAL(41, CAUSE_ILLEGAL_INSN, 0x5c002773, csrr a4, 0x5c0)
  TEST_TRAP_TVAL(42, CAUSE_ILLEGAL_INSN, 0x5c059073, csrw 0x5c0, a1)
  TEST_TRAP_TVAL(43, CAUSE_ILLEGAL_INSN, 0x5c002073, csrrs x0, 0x5c0, x0)

  # ------------------------------------------------- mstatus.FS tracking
  # FS = Initial, an FP op writes an f register: FS = Dirty and SD = 1
  TEST_CASE(50, a4, MSTATUS_FS_INITIAL, li a1, MSTATUS_FS; csrc mstatus, a1; li a1, MSTATUS_FS_INITIAL; csrs mstatus, a1; csrr a4, mstatus; li a1, MSTATUS_FS; and a4, a4, a1)
  TEST_CASE(51, a4, 0, csrr a4, mstatus; srli a4, a4, 31)
  TEST_CASE(52, a4, MSTATUS_FS_DIRTY, fmv.w.x f1, zero; csrr a4, mstatus; li a1, MSTATUS_FS; and a4, a4, a1)
  TEST_CASE(53, a4, 1, csrr a4, mstatus; srli a4, a4, 31)
  # FS = Clean, then an FP arithmetic op: Dirty again
  TEST_CASE(54, a4, MSTATUS_FS_DIRTY, li a1, MSTATUS_FS; csrc mstatus, a1; li a1, MSTATUS_FS_CLEAN; csrs mstatus, a1; fadd.s f2, f1, f1; csrr a4, mstatus; li a1, MSTATUS_FS; and a4, a4, a1)
  # FS = Off: FP instructions and FP CSRs are illegal (mtval = bits), and
  # the f registers keep their values
  TEST_CASE(55, a4, 0, li a1, 0x40400000; fmv.w.x f4, a1; li a1, MSTATUS_FS; csrc mstatus, a1; csrr a4, mstatus; li a1, MSTATUS_FS; and a4, a4, a1)
  TEST_TRAP_TVAL(56, CAUSE_ILLEGAL_INSN, 0x004181d3, fadd.s f3, f3, f4, rne)
  TEST_TRAP_TVAL(57, CAUSE_ILLEGAL_INSN, 0x00302773, csrr a4, fcsr)
  TEST_TRAP_TVAL(58, CAUSE_ILLEGAL_INSN, 0x00202773, csrr a4, frm)
  TEST_TRAP_TVAL(59, CAUSE_ILLEGAL_INSN, 0x00105073, csrwi fflags, 0)
  TEST_TRAP_TVAL(60, CAUSE_ILLEGAL_INSN, 0xf0058053, fmv.w.x f0, a1)
  TEST_TRAP_TVAL(61, CAUSE_ILLEGAL_INSN, 0xe0020753, fmv.x.w a4, f4)
  la a5, fs_data
  TEST_TRAP_TVAL(63, CAUSE_ILLEGAL_INSN, 0x0007a207, flw f4, 0(a5))
  TEST_TRAP_TVAL(64, CAUSE_ILLEGAL_INSN, 0x0047b027, fsd f4, 0(a5))
  # the compressed FP loads/stores are illegal too (c.fld fa0, 0(a5))
  .option push
  .option rvc
  TEST_TRAP_TVAL(65, CAUSE_ILLEGAL_INSN, 0x2388, c.fld fa0, 0(a5))
  .option pop
  TEST_CASE(66, a4, 0x40400000, li a1, MSTATUS_FS_INITIAL; csrs mstatus, a1; fmv.x.w a4, f4)

  # ---------------------------------------------------------------- mtvec
  # direct and vectored modes read back; mtvec is restored afterwards
  TEST_CASE(70, a4, 0, csrr s9, mtvec; la a1, vec_base; csrw mtvec, a1; csrr a4, mtvec; sub a4, a4, a1)
  TEST_CASE(71, a4, 1, la a1, vec_base + 1; csrw mtvec, a1; csrr a4, mtvec; la a1, vec_base; sub a4, a4, a1; csrw mtvec, s9)

  # ----------------------------------------- writable trap CSRs
  TEST_CASE(75, a4, 0x80000004, li a1, 0x80000004; csrw mepc, a1; csrr a4, mepc)
  TEST_CASE(76, a4, 0x0000000b, li a1, 0x0000000b; csrw mcause, a1; csrr a4, mcause)
  TEST_CASE(77, a4, 0x80000005, li a1, 0x80000005; csrw mcause, a1; csrr a4, mcause)
  TEST_CASE(78, a4, 0xdeadbeef, li a1, 0xdeadbeef; csrw mtval, a1; csrr a4, mtval)

  # ------------------------------------ delegation and interrupt enables
  # medeleg: the U-mode ecall (8), breakpoint (3) and page faults (12, 13,
  # 15) are delegable
  TEST_CASE(80, a4, 0xb108, li a1, -1; csrw medeleg, a1; csrr a1, medeleg; li a2, 0xb108; and a4, a1, a2)
  TEST_CASE(81, a4, 0, csrw medeleg, zero; csrr a4, medeleg)
  # mideleg: the supervisor interrupts (SSI 1, STI 5, SEI 9) are delegable
  TEST_CASE(82, a4, 0x222, li a1, -1; csrw mideleg, a1; csrr a1, mideleg; andi a4, a1, 0x222)
  TEST_CASE(83, a4, 0, csrw mideleg, zero; csrr a1, mideleg; andi a4, a1, 0x222)
  # mie: all six standard enables are writable
  TEST_CASE(84, a4, 0xaaa, li a1, -1; csrw mie, a1; csrr a1, mie; li a2, 0xaaa; and a4, a1, a2; csrw mie, zero)
  TEST_CASE(85, a4, 0, csrr a1, mie; li a2, 0xaaa; and a4, a1, a2)
  # mip.SSIP is writable from M-mode (nothing is enabled, so nothing fires)
  TEST_CASE(86, a4, MIP_SSIP, csrsi mip, MIP_SSIP; csrr a1, mip; andi a4, a1, MIP_SSIP)
  TEST_CASE(87, a4, 0, csrci mip, MIP_SSIP; csrr a1, mip; andi a4, a1, MIP_SSIP)
  # mip.MSIP is read-only in mip (it comes from the CLINT)
  TEST_CASE(88, a4, 0, NO_TRAP(csrsi mip, MIP_MSIP); csrr a1, mip; andi a4, a1, MIP_MSIP)

  # ------------------------------------------------------------- counters
  # every counter and its high half is readable
  TEST_CASE(90, a4, 0, NO_TRAP(csrr a1, cycle; csrr a1, cycleh; csrr a1, instret; csrr a1, instreth; csrr a1, time; csrr a1, timeh); li a4, 0)
  TEST_CASE(91, a4, 0, NO_TRAP(csrr a1, mcycle; csrr a1, mcycleh; csrr a1, minstret; csrr a1, minstreth; rdcycleh a1; rdinstreth a1; rdtimeh a1); li a4, 0)
  # instret and cycle move forward over a loop of 100 iterations
test_92:
  li TESTNUM, 92
  rdinstret s0
  li a1, 100
10: addi a1, a1, -1
  bnez a1, 10b
  rdinstret s1
  sub a4, s1, s0
  li a5, 200
  bltu a4, a5, fail
test_93:
  li TESTNUM, 93
  csrr s0, mcycle
  li a1, 100
10: addi a1, a1, -1
  bnez a1, 10b
  csrr s1, mcycle
  beq s0, s1, fail
test_94:
  li TESTNUM, 94
  csrr s0, minstret
  nop
  csrr s1, minstret
  beq s0, s1, fail
  # time never goes backwards
test_95:
  li TESTNUM, 95
  rdtime s0
  li a1, 1000
10: addi a1, a1, -1
  bnez a1, 10b
  rdtime s1
  bltu s1, s0, fail
  # a consistent 64-bit read of instret (high, low, high again)
test_96:
  li TESTNUM, 96
10: rdinstreth s0
  rdinstret s1
  rdinstreth s2
  bne s0, s2, 10b
  rdinstreth s3
  bltu s3, s0, fail
  # the user-level name reads the machine counter (QEMU's instret follows
  # host time, so only the order is checked here; spec_only.S checks that
  # instret counts exactly)
test_97:
  li TESTNUM, 97
  csrr s0, minstret
  rdinstret s1
  csrr s2, minstret
  bltu s1, s0, fail
  bltu s2, s1, fail

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
  .balign 8
fs_data:
  .dword 0
  .balign 256
vec_base:
  .word 0
RVTEST_DATA_END
