# unexpected_trap.S - negative control for the harness (not an ISA test).
#
# Executes an illegal instruction that no case announced, so the trap
# handler must fail the run with code 1000 + mcause = 1002.
#include "test.h"

RVTEST_CODE_BEGIN
  TEST_RR_OP(2, add, 3, 1, 2)
  li TESTNUM, 3
  .word 0xfe000033                      # illegal: not expected by anyone
  TEST_PASSFAIL
RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
