# spec_only.S - architectural details where QEMU 7.2 differs from the spec.
#
# qemu-oracle: skip (each case below is one QEMU 7.2 gets wrong or
# handles differently; the expected values follow the privileged and
# unprivileged specs and are simple enough to check by hand.)
#
#  - csrrs/csrrc with rs1 != x0 on a read-only CSR are illegal even when the
#    register holds 0 ("will still attempt to write"); QEMU lets them pass.
#  - mepc[0] is always zero (IALIGN = 16); QEMU keeps the bit.
#  - instret counts retired instructions exactly and a write to minstret
#    replaces that instruction's increment; QEMU's counter follows host
#    time without -icount.
#  - wfi with nothing enabled in mie: the spec lets it wait forever (QEMU
#    does), but WFI may also complete at once; rv32vm returns (possibly
#    after a short sleep), which is what this case expects.
#include "test.h"

RVTEST_CODE_BEGIN

  # csrrs/csrrc with a zero-valued rs1 other than x0 on a read-only CSR
  li a1, 0
  TEST_TRAP_TVAL(3, CAUSE_ILLEGAL_INSN, 0xf145a773, csrrs a4, mhartid, a1)
  TEST_TRAP_TVAL(4, CAUSE_ILLEGAL_INSN, 0xf145b773, csrrc a4, mhartid, a1)
  TEST_TRAP_TVAL(5, CAUSE_ILLEGAL_INSN, 0xc005a773, csrrs a4, cycle, a1)

  # mepc[0] reads as zero
  TEST_CASE(6, a4, 0x80000002, li a1, 0x80000003; csrw mepc, a1; csrr a4, mepc)
  TEST_CASE(7, a4, 0xfffffffe, li a1, 0xffffffff; csrw mepc, a1; csrr a4, mepc)

  # instret counts exactly: the first read, then ten nops, are retired
  # before the second read
  TEST_CASE(8, a4, 11, rdinstret s0; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; rdinstret s1; sub a4, s1, s0)
  # a write to minstret replaces that instruction's own increment
  TEST_CASE(9, a4, 0, csrw minstret, zero; csrr a4, minstret)
  TEST_CASE(10, a4, 102, li a1, 100; csrw minstret, a1; nop; nop; csrr a4, minstret)
  # the high half carries
  TEST_CASE(11, a4, 1, csrw minstreth, zero; li a1, -1; csrw minstret, a1; nop; csrr a4, minstreth)

  # wfi with mie = 0 and mstatus.MIE = 0 completes
  TEST_CASE(12, a4, 5, csrw mie, zero; csrci mstatus, MSTATUS_MIE; li a4, 5; wfi; wfi)

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
