# fails_case_5.S - negative control for the harness (not an ISA test).
#
# Case 5 expects a wrong value on purpose, so a correct machine must report
# "case 5 failed" (tohost = (5 << 1) | 1; QEMU exit status 5). tests/isa.rs
# checks that this failure is seen, proving a wrong expectation cannot slip
# through the harness, the test macros or the machine's exit-code mapping.
#include "test.h"

RVTEST_CODE_BEGIN
  TEST_RR_OP(2, add, 3, 1, 2)
  TEST_RR_OP(3, sub, 1, 3, 2)
  TEST_IMM_OP(4, addi, 10, 3, 7)
  TEST_RR_OP(5, add, 4, 1, 2)           # wrong on purpose: 1 + 2 = 3
  TEST_RR_OP(6, add, 5, 2, 3)
  TEST_PASSFAIL
RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
