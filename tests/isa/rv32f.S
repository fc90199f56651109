# rv32f.S - the F extension (single precision).
#
# Operands and results are raw bit patterns and every case checks the exact
# fflags (read-and-cleared with csrrw). The expected values come from an
# exact-rational IEEE 754 model (rounding with tininess detected after
# rounding, as RISC-V specifies) and are confirmed by QEMU. Covered:
# add/sub/mul/div/sqrt and the four fused multiply-adds under every static
# rounding mode on inputs where the modes differ, signed zeros, overflow and
# underflow (subnormal results with UF/NX), canonical NaN results, sNaN
# raising NV, fmin/fmax, fsgnj*, feq/flt/fle NaN rules, fclass (all ten
# classes), fcvt.w[u].s saturation, fcvt.s.w[u] rounding; then by hand:
# NaN-boxing of loads, moves and results, improperly boxed inputs read as
# the canonical NaN, fmv.x.w/fmv.w.x raw moves, the fcsr/frm/fflags views,
# flag accumulation, dynamic rounding through frm, and illegal rounding
# modes.
#include "test.h"

/* An improperly NaN-boxed single in f0 (loaded with fld from `pattern`),
 * 1.0 in f1; `code` computes a4 (integer result) or f3. */
#define UNBOXED_PROLOGUE(testnum, pattern)                               \
    .pushsection .data;                                                  \
    .balign 8;                                                           \
test_ ## testnum ## _data:                                               \
    .dword pattern;                                                      \
    .word 0x3f800000, 0;                                                 \
    .dword 0;                                                            \
    .popsection;                                                         \
test_ ## testnum:                                                        \
    li TESTNUM, testnum;                                                 \
    la a0, test_ ## testnum ## _data;                                    \
    fld f0, 0(a0);                                                       \
    flw f1, 8(a0);                                                       \
    fsflags x0

/* Integer result in a4. */
#define TEST_UNBOXED_INT(testnum, pattern, flags, result, code...)      \
    UNBOXED_PROLOGUE(testnum, pattern);                                  \
    code;                                                                \
    fsflags a1, x0;                                                      \
    FP_CHECK_FLAGS(flags);                                               \
    li a3, result;                                                       \
    bne a4, a3, fail

/* f3 result: compare all 64 bits (hi:lo). */
#define TEST_UNBOXED_F(testnum, pattern, flags, hi, lo, code...)        \
    UNBOXED_PROLOGUE(testnum, pattern);                                  \
    code;                                                                \
    fsflags a1, x0;                                                      \
    FP_CHECK_FLAGS(flags);                                               \
    fsd f3, 16(a0);                                                      \
    lw a4, 16(a0);                                                       \
    li a3, lo;                                                           \
    bne a4, a3, fail;                                                    \
    lw a4, 20(a0);                                                       \
    li a3, hi;                                                           \
    bne a4, a3, fail

RVTEST_CODE_BEGIN

  # -------- fadd/fsub: ties and near-ties under every rounding mode
  # 1 + ulp/2 (a tie, even below), rne
  TEST_FP_OP2_S(2, fadd.s, rne, FFLAG_NX, 0x3f800000, 0x3f800000, 0x33800000)
  # (1+ulp) + ulp/2 (a tie, odd below), rne
  TEST_FP_OP2_S(3, fadd.s, rne, FFLAG_NX, 0x3f800002, 0x3f800001, 0x33800000)
  # 1 + 0.75 ulp, rne
  TEST_FP_OP2_S(4, fadd.s, rne, FFLAG_NX, 0x3f800001, 0x3f800000, 0x33c00000)
  # -1 - ulp/2, rne
  TEST_FP_OP2_S(5, fadd.s, rne, FFLAG_NX, 0xbf800000, 0xbf800000, 0xb3800000)
  # -1 - 0.75 ulp, rne
  TEST_FP_OP2_S(6, fadd.s, rne, FFLAG_NX, 0xbf800001, 0xbf800000, 0xb3c00000)
  # 1 + ulp/2 (a tie, even below), rtz
  TEST_FP_OP2_S(7, fadd.s, rtz, FFLAG_NX, 0x3f800000, 0x3f800000, 0x33800000)
  # (1+ulp) + ulp/2 (a tie, odd below), rtz
  TEST_FP_OP2_S(8, fadd.s, rtz, FFLAG_NX, 0x3f800001, 0x3f800001, 0x33800000)
  # 1 + 0.75 ulp, rtz
  TEST_FP_OP2_S(9, fadd.s, rtz, FFLAG_NX, 0x3f800000, 0x3f800000, 0x33c00000)
  # -1 - ulp/2, rtz
  TEST_FP_OP2_S(10, fadd.s, rtz, FFLAG_NX, 0xbf800000, 0xbf800000, 0xb3800000)
  # -1 - 0.75 ulp, rtz
  TEST_FP_OP2_S(11, fadd.s, rtz, FFLAG_NX, 0xbf800000, 0xbf800000, 0xb3c00000)
  # 1 + ulp/2 (a tie, even below), rdn
  TEST_FP_OP2_S(12, fadd.s, rdn, FFLAG_NX, 0x3f800000, 0x3f800000, 0x33800000)
  # (1+ulp) + ulp/2 (a tie, odd below), rdn
  TEST_FP_OP2_S(13, fadd.s, rdn, FFLAG_NX, 0x3f800001, 0x3f800001, 0x33800000)
  # 1 + 0.75 ulp, rdn
  TEST_FP_OP2_S(14, fadd.s, rdn, FFLAG_NX, 0x3f800000, 0x3f800000, 0x33c00000)
  # -1 - ulp/2, rdn
  TEST_FP_OP2_S(15, fadd.s, rdn, FFLAG_NX, 0xbf800001, 0xbf800000, 0xb3800000)
  # -1 - 0.75 ulp, rdn
  TEST_FP_OP2_S(16, fadd.s, rdn, FFLAG_NX, 0xbf800001, 0xbf800000, 0xb3c00000)
  # 1 + ulp/2 (a tie, even below), rup
  TEST_FP_OP2_S(17, fadd.s, rup, FFLAG_NX, 0x3f800001, 0x3f800000, 0x33800000)
  # (1+ulp) + ulp/2 (a tie, odd below), rup
  TEST_FP_OP2_S(18, fadd.s, rup, FFLAG_NX, 0x3f800002, 0x3f800001, 0x33800000)
  # 1 + 0.75 ulp, rup
  TEST_FP_OP2_S(19, fadd.s, rup, FFLAG_NX, 0x3f800001, 0x3f800000, 0x33c00000)
  # -1 - ulp/2, rup
  TEST_FP_OP2_S(20, fadd.s, rup, FFLAG_NX, 0xbf800000, 0xbf800000, 0xb3800000)
  # -1 - 0.75 ulp, rup
  TEST_FP_OP2_S(21, fadd.s, rup, FFLAG_NX, 0xbf800000, 0xbf800000, 0xb3c00000)
  # 1 + ulp/2 (a tie, even below), rmm
  TEST_FP_OP2_S(22, fadd.s, rmm, FFLAG_NX, 0x3f800001, 0x3f800000, 0x33800000)
  # (1+ulp) + ulp/2 (a tie, odd below), rmm
  TEST_FP_OP2_S(23, fadd.s, rmm, FFLAG_NX, 0x3f800002, 0x3f800001, 0x33800000)
  # 1 + 0.75 ulp, rmm
  TEST_FP_OP2_S(24, fadd.s, rmm, FFLAG_NX, 0x3f800001, 0x3f800000, 0x33c00000)
  # -1 - ulp/2, rmm
  TEST_FP_OP2_S(25, fadd.s, rmm, FFLAG_NX, 0xbf800001, 0xbf800000, 0xb3800000)
  # -1 - 0.75 ulp, rmm
  TEST_FP_OP2_S(26, fadd.s, rmm, FFLAG_NX, 0xbf800001, 0xbf800000, 0xb3c00000)
  # 1 - 0.75 ulp = a tie below 1.0, rne
  TEST_FP_OP2_S(27, fsub.s, rne, FFLAG_NX, 0x3f7ffffe, 0x3f800000, 0x33c00000)
  # 1 - 0.75 ulp = a tie below 1.0, rtz
  TEST_FP_OP2_S(28, fsub.s, rtz, FFLAG_NX, 0x3f7ffffe, 0x3f800000, 0x33c00000)
  # 1 - 0.75 ulp = a tie below 1.0, rdn
  TEST_FP_OP2_S(29, fsub.s, rdn, FFLAG_NX, 0x3f7ffffe, 0x3f800000, 0x33c00000)
  # 1 - 0.75 ulp = a tie below 1.0, rup
  TEST_FP_OP2_S(30, fsub.s, rup, FFLAG_NX, 0x3f7fffff, 0x3f800000, 0x33c00000)
  # 1 - 0.75 ulp = a tie below 1.0, rmm
  TEST_FP_OP2_S(31, fsub.s, rmm, FFLAG_NX, 0x3f7fffff, 0x3f800000, 0x33c00000)

  # -------- exact zeros: the sign of x - x depends on the rounding mode
  # 3 - 3, rne
  TEST_FP_OP2_S(32, fsub.s, rne, 0, 0x00000000, 0x40400000, 0x40400000)
  # 3 - 3, rtz
  TEST_FP_OP2_S(33, fsub.s, rtz, 0, 0x00000000, 0x40400000, 0x40400000)
  # 3 - 3, rdn
  TEST_FP_OP2_S(34, fsub.s, rdn, 0, 0x80000000, 0x40400000, 0x40400000)
  # 3 - 3, rup
  TEST_FP_OP2_S(35, fsub.s, rup, 0, 0x00000000, 0x40400000, 0x40400000)
  # 3 - 3, rmm
  TEST_FP_OP2_S(36, fsub.s, rmm, 0, 0x00000000, 0x40400000, 0x40400000)
  TEST_FP_OP2_S(37, fadd.s, rne, 0, 0x80000000, 0x80000000, 0x80000000)
  TEST_FP_OP2_S(38, fadd.s, rne, 0, 0x00000000, 0x00000000, 0x80000000)
  TEST_FP_OP2_S(39, fadd.s, rne, 0, 0x00000000, 0x80000000, 0x00000000)
  TEST_FP_OP2_S(40, fadd.s, rdn, 0, 0x80000000, 0x80000000, 0x00000000)

  # -------- overflow: inf or the largest finite, by rounding mode and sign
  TEST_FP_OP2_S(41, fadd.s, rne, FFLAG_OF|FFLAG_NX, 0x7f800000, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2_S(42, fadd.s, rne, FFLAG_OF|FFLAG_NX, 0xff800000, 0xff7fffff, 0xff7fffff)
  TEST_FP_OP2_S(43, fadd.s, rtz, FFLAG_OF|FFLAG_NX, 0x7f7fffff, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2_S(44, fadd.s, rtz, FFLAG_OF|FFLAG_NX, 0xff7fffff, 0xff7fffff, 0xff7fffff)
  TEST_FP_OP2_S(45, fadd.s, rdn, FFLAG_OF|FFLAG_NX, 0x7f7fffff, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2_S(46, fadd.s, rdn, FFLAG_OF|FFLAG_NX, 0xff800000, 0xff7fffff, 0xff7fffff)
  TEST_FP_OP2_S(47, fadd.s, rup, FFLAG_OF|FFLAG_NX, 0x7f800000, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2_S(48, fadd.s, rup, FFLAG_OF|FFLAG_NX, 0xff7fffff, 0xff7fffff, 0xff7fffff)
  TEST_FP_OP2_S(49, fadd.s, rmm, FFLAG_OF|FFLAG_NX, 0x7f800000, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2_S(50, fadd.s, rmm, FFLAG_OF|FFLAG_NX, 0xff800000, 0xff7fffff, 0xff7fffff)

  # -------- infinities and NaNs
  TEST_FP_OP2_S(51, fadd.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800000, 0xff800000)
  TEST_FP_OP2_S(52, fsub.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800000, 0x7f800000)
  TEST_FP_OP2_S(53, fadd.s, rne, 0, 0x7f800000, 0x7f800000, 0x3f800000)
  TEST_FP_OP2_S(54, fsub.s, rne, 0, 0xff800000, 0xff800000, 0x7f7fffff)
  TEST_FP_OP2_S(55, fadd.s, rne, 0, 0x7fc00000, 0x7fc00000, 0x3f800000)
  TEST_FP_OP2_S(56, fadd.s, rne, FFLAG_NV, 0x7fc00000, 0x3f800000, 0x7f800001)
  TEST_FP_OP2_S(57, fsub.s, rne, 0, 0x7fc00000, 0x7fc01234, 0x3f800000)
  TEST_FP_OP2_S(58, fadd.s, rne, FFLAG_NV, 0x7fc00000, 0xffc00000, 0x7f800001)
  TEST_FP_OP2_S(59, fsub.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800001, 0x7f800000)

  # -------- subnormal results
  # exact subnormal result: no UF
  TEST_FP_OP2_S(60, fadd.s, rne, 0, 0x007fffff, 0x00800000, 0x80000001)
  # exact subnormal result: no UF
  TEST_FP_OP2_S(61, fadd.s, rne, 0, 0x00000002, 0x00000001, 0x00000001)
  # exact subnormal result: no UF
  TEST_FP_OP2_S(62, fadd.s, rne, 0, 0x807ffffd, 0x80800000, 0x00000003)

  # -------- fmul
  TEST_FP_OP2_S(63, fmul.s, rne, FFLAG_NX, 0x3f800000, 0x3eaaaaab, 0x40400000)
  TEST_FP_OP2_S(64, fmul.s, rtz, FFLAG_NX, 0x3f800000, 0x3eaaaaab, 0x40400000)
  TEST_FP_OP2_S(65, fmul.s, rdn, FFLAG_NX, 0x3f800000, 0x3eaaaaab, 0x40400000)
  TEST_FP_OP2_S(66, fmul.s, rup, FFLAG_NX, 0x3f800001, 0x3eaaaaab, 0x40400000)
  TEST_FP_OP2_S(67, fmul.s, rmm, FFLAG_NX, 0x3f800000, 0x3eaaaaab, 0x40400000)
  TEST_FP_OP2_S(68, fmul.s, rne, FFLAG_NX, 0x3f800002, 0x3f800001, 0x3f800001)
  TEST_FP_OP2_S(69, fmul.s, rtz, FFLAG_NX, 0x3f800002, 0x3f800001, 0x3f800001)
  TEST_FP_OP2_S(70, fmul.s, rdn, FFLAG_NX, 0x3f800002, 0x3f800001, 0x3f800001)
  TEST_FP_OP2_S(71, fmul.s, rup, FFLAG_NX, 0x3f800003, 0x3f800001, 0x3f800001)
  TEST_FP_OP2_S(72, fmul.s, rmm, FFLAG_NX, 0x3f800002, 0x3f800001, 0x3f800001)
  TEST_FP_OP2_S(73, fmul.s, rne, FFLAG_NX, 0xbf800002, 0xbf800001, 0x3f800001)
  TEST_FP_OP2_S(74, fmul.s, rtz, FFLAG_NX, 0xbf800002, 0xbf800001, 0x3f800001)
  TEST_FP_OP2_S(75, fmul.s, rdn, FFLAG_NX, 0xbf800003, 0xbf800001, 0x3f800001)
  TEST_FP_OP2_S(76, fmul.s, rup, FFLAG_NX, 0xbf800002, 0xbf800001, 0x3f800001)
  TEST_FP_OP2_S(77, fmul.s, rmm, FFLAG_NX, 0xbf800002, 0xbf800001, 0x3f800001)
  TEST_FP_OP2_S(78, fmul.s, rne, 0, 0x00400000, 0x00800000, 0x3f000000)
  TEST_FP_OP2_S(79, fmul.s, rne, FFLAG_UF|FFLAG_NX, 0x00000000, 0x00000001, 0x3f000000)
  TEST_FP_OP2_S(80, fmul.s, rtz, FFLAG_UF|FFLAG_NX, 0x00000000, 0x00000001, 0x3f000000)
  TEST_FP_OP2_S(81, fmul.s, rdn, FFLAG_UF|FFLAG_NX, 0x00000000, 0x00000001, 0x3f000000)
  TEST_FP_OP2_S(82, fmul.s, rup, FFLAG_UF|FFLAG_NX, 0x00000001, 0x00000001, 0x3f000000)
  TEST_FP_OP2_S(83, fmul.s, rmm, FFLAG_UF|FFLAG_NX, 0x00000001, 0x00000001, 0x3f000000)
  TEST_FP_OP2_S(84, fmul.s, rne, FFLAG_UF|FFLAG_NX, 0x00000001, 0x00000001, 0x3f400000)
  TEST_FP_OP2_S(85, fmul.s, rne, FFLAG_UF|FFLAG_NX, 0x00000002, 0x00000003, 0x3f000000)
  TEST_FP_OP2_S(86, fmul.s, rtz, FFLAG_UF|FFLAG_NX, 0x00000001, 0x00000003, 0x3f000000)
  TEST_FP_OP2_S(87, fmul.s, rdn, FFLAG_UF|FFLAG_NX, 0x00000001, 0x00000003, 0x3f000000)
  TEST_FP_OP2_S(88, fmul.s, rup, FFLAG_UF|FFLAG_NX, 0x00000002, 0x00000003, 0x3f000000)
  TEST_FP_OP2_S(89, fmul.s, rmm, FFLAG_UF|FFLAG_NX, 0x00000002, 0x00000003, 0x3f000000)
  TEST_FP_OP2_S(90, fmul.s, rne, FFLAG_UF|FFLAG_NX, 0x00800000, 0x3f7fffff, 0x00800000)
  TEST_FP_OP2_S(91, fmul.s, rtz, FFLAG_UF|FFLAG_NX, 0x007fffff, 0x3f7fffff, 0x00800000)
  TEST_FP_OP2_S(92, fmul.s, rdn, FFLAG_UF|FFLAG_NX, 0x007fffff, 0x3f7fffff, 0x00800000)
  TEST_FP_OP2_S(93, fmul.s, rup, FFLAG_UF|FFLAG_NX, 0x00800000, 0x3f7fffff, 0x00800000)
  TEST_FP_OP2_S(94, fmul.s, rmm, FFLAG_UF|FFLAG_NX, 0x00800000, 0x3f7fffff, 0x00800000)
  TEST_FP_OP2_S(95, fmul.s, rne, FFLAG_OF|FFLAG_NX, 0x7f800000, 0x7f7fffff, 0x40000000)
  TEST_FP_OP2_S(96, fmul.s, rne, FFLAG_OF|FFLAG_NX, 0xff800000, 0xff7fffff, 0x3fc00000)
  TEST_FP_OP2_S(97, fmul.s, rtz, FFLAG_OF|FFLAG_NX, 0xff7fffff, 0xff7fffff, 0x3fc00000)
  TEST_FP_OP2_S(98, fmul.s, rdn, FFLAG_OF|FFLAG_NX, 0xff800000, 0xff7fffff, 0x3fc00000)
  TEST_FP_OP2_S(99, fmul.s, rup, FFLAG_OF|FFLAG_NX, 0xff7fffff, 0xff7fffff, 0x3fc00000)
  TEST_FP_OP2_S(100, fmul.s, rmm, FFLAG_OF|FFLAG_NX, 0xff800000, 0xff7fffff, 0x3fc00000)
  TEST_FP_OP2_S(101, fmul.s, rne, FFLAG_NX, 0x00800000, 0x3f800001, 0x007fffff)
  TEST_FP_OP2_S(102, fmul.s, rtz, FFLAG_UF|FFLAG_NX, 0x007fffff, 0x3f800001, 0x007fffff)
  TEST_FP_OP2_S(103, fmul.s, rdn, FFLAG_UF|FFLAG_NX, 0x007fffff, 0x3f800001, 0x007fffff)
  TEST_FP_OP2_S(104, fmul.s, rup, FFLAG_NX, 0x00800000, 0x3f800001, 0x007fffff)
  TEST_FP_OP2_S(105, fmul.s, rmm, FFLAG_NX, 0x00800000, 0x3f800001, 0x007fffff)
  TEST_FP_OP2_S(106, fmul.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800000, 0x00000000)
  TEST_FP_OP2_S(107, fmul.s, rne, FFLAG_NV, 0x7fc00000, 0x80000000, 0xff800000)
  TEST_FP_OP2_S(108, fmul.s, rne, 0, 0x7f800000, 0xff800000, 0xc0000000)
  TEST_FP_OP2_S(109, fmul.s, rne, 0, 0x80000000, 0x80000000, 0x40000000)
  TEST_FP_OP2_S(110, fmul.s, rne, 0, 0x80000000, 0x80000000, 0x00000000)
  TEST_FP_OP2_S(111, fmul.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800001, 0x00000000)
  TEST_FP_OP2_S(112, fmul.s, rne, 0, 0x7fc00000, 0x7fc00000, 0x7f800000)

  # -------- fdiv
  TEST_FP_OP2_S(113, fdiv.s, rne, FFLAG_NX, 0x3eaaaaab, 0x3f800000, 0x40400000)
  TEST_FP_OP2_S(114, fdiv.s, rne, FFLAG_NX, 0xbeaaaaab, 0xbf800000, 0x40400000)
  TEST_FP_OP2_S(115, fdiv.s, rne, FFLAG_NX, 0x3f2aaaab, 0x40000000, 0x40400000)
  TEST_FP_OP2_S(116, fdiv.s, rtz, FFLAG_NX, 0x3eaaaaaa, 0x3f800000, 0x40400000)
  TEST_FP_OP2_S(117, fdiv.s, rtz, FFLAG_NX, 0xbeaaaaaa, 0xbf800000, 0x40400000)
  TEST_FP_OP2_S(118, fdiv.s, rtz, FFLAG_NX, 0x3f2aaaaa, 0x40000000, 0x40400000)
  TEST_FP_OP2_S(119, fdiv.s, rdn, FFLAG_NX, 0x3eaaaaaa, 0x3f800000, 0x40400000)
  TEST_FP_OP2_S(120, fdiv.s, rdn, FFLAG_NX, 0xbeaaaaab, 0xbf800000, 0x40400000)
  TEST_FP_OP2_S(121, fdiv.s, rdn, FFLAG_NX, 0x3f2aaaaa, 0x40000000, 0x40400000)
  TEST_FP_OP2_S(122, fdiv.s, rup, FFLAG_NX, 0x3eaaaaab, 0x3f800000, 0x40400000)
  TEST_FP_OP2_S(123, fdiv.s, rup, FFLAG_NX, 0xbeaaaaaa, 0xbf800000, 0x40400000)
  TEST_FP_OP2_S(124, fdiv.s, rup, FFLAG_NX, 0x3f2aaaab, 0x40000000, 0x40400000)
  TEST_FP_OP2_S(125, fdiv.s, rmm, FFLAG_NX, 0x3eaaaaab, 0x3f800000, 0x40400000)
  TEST_FP_OP2_S(126, fdiv.s, rmm, FFLAG_NX, 0xbeaaaaab, 0xbf800000, 0x40400000)
  TEST_FP_OP2_S(127, fdiv.s, rmm, FFLAG_NX, 0x3f2aaaab, 0x40000000, 0x40400000)
  TEST_FP_OP2_S(128, fdiv.s, rne, FFLAG_DZ, 0x7f800000, 0x3f800000, 0x00000000)
  TEST_FP_OP2_S(129, fdiv.s, rne, FFLAG_DZ, 0xff800000, 0xbf800000, 0x00000000)
  TEST_FP_OP2_S(130, fdiv.s, rne, FFLAG_DZ, 0xff800000, 0x3f800000, 0x80000000)
  TEST_FP_OP2_S(131, fdiv.s, rne, FFLAG_NV, 0x7fc00000, 0x00000000, 0x00000000)
  TEST_FP_OP2_S(132, fdiv.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800000, 0x7f800000)
  TEST_FP_OP2_S(133, fdiv.s, rne, 0, 0xff800000, 0x7f800000, 0x80000000)
  TEST_FP_OP2_S(134, fdiv.s, rne, 0, 0x00000000, 0x3f800000, 0x7f800000)
  TEST_FP_OP2_S(135, fdiv.s, rne, 0, 0x80000000, 0xbf800000, 0x7f800000)
  TEST_FP_OP2_S(136, fdiv.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800001, 0x3f800000)
  TEST_FP_OP2_S(137, fdiv.s, rne, 0, 0x7fc00000, 0x7fc00000, 0x00000000)
  TEST_FP_OP2_S(138, fdiv.s, rne, 0, 0x00000008, 0x00800000, 0x49800000)
  TEST_FP_OP2_S(139, fdiv.s, rne, FFLAG_OF|FFLAG_NX, 0x7f800000, 0x7f7fffff, 0x3f000000)
  TEST_FP_OP2_S(140, fdiv.s, rne, 0, 0x40000000, 0x40c00000, 0x40400000)

  # -------- fsqrt
  TEST_FP_OP1_S(141, fsqrt.s, rne, FFLAG_NX, 0x3fb504f3, 0x40000000)
  TEST_FP_OP1_S(142, fsqrt.s, rne, FFLAG_NX, 0x3fddb3d7, 0x40400000)
  TEST_FP_OP1_S(143, fsqrt.s, rtz, FFLAG_NX, 0x3fb504f3, 0x40000000)
  TEST_FP_OP1_S(144, fsqrt.s, rtz, FFLAG_NX, 0x3fddb3d7, 0x40400000)
  TEST_FP_OP1_S(145, fsqrt.s, rdn, FFLAG_NX, 0x3fb504f3, 0x40000000)
  TEST_FP_OP1_S(146, fsqrt.s, rdn, FFLAG_NX, 0x3fddb3d7, 0x40400000)
  TEST_FP_OP1_S(147, fsqrt.s, rup, FFLAG_NX, 0x3fb504f4, 0x40000000)
  TEST_FP_OP1_S(148, fsqrt.s, rup, FFLAG_NX, 0x3fddb3d8, 0x40400000)
  TEST_FP_OP1_S(149, fsqrt.s, rmm, FFLAG_NX, 0x3fb504f3, 0x40000000)
  TEST_FP_OP1_S(150, fsqrt.s, rmm, FFLAG_NX, 0x3fddb3d7, 0x40400000)
  TEST_FP_OP1_S(151, fsqrt.s, rne, 0, 0x40000000, 0x40800000)
  TEST_FP_OP1_S(152, fsqrt.s, rne, 0, 0x3f000000, 0x3e800000)
  TEST_FP_OP1_S(153, fsqrt.s, rne, 0, 0x00000000, 0x00000000)
  TEST_FP_OP1_S(154, fsqrt.s, rne, 0, 0x80000000, 0x80000000)
  TEST_FP_OP1_S(155, fsqrt.s, rne, 0, 0x7f800000, 0x7f800000)
  TEST_FP_OP1_S(156, fsqrt.s, rne, FFLAG_NV, 0x7fc00000, 0xbf800000)
  TEST_FP_OP1_S(157, fsqrt.s, rne, FFLAG_NV, 0x7fc00000, 0xff800000)
  TEST_FP_OP1_S(158, fsqrt.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800001)
  TEST_FP_OP1_S(159, fsqrt.s, rne, 0, 0x7fc00000, 0x7fc00000)
  TEST_FP_OP1_S(160, fsqrt.s, rne, FFLAG_NX, 0x1a3504f3, 0x00000001)
  TEST_FP_OP1_S(161, fsqrt.s, rne, 0, 0x20000000, 0x00800000)
  TEST_FP_OP1_S(162, fsqrt.s, rne, FFLAG_NX, 0x5f7fffff, 0x7f7fffff)
  TEST_FP_OP1_S(163, fsqrt.s, rne, FFLAG_NV, 0x7fc00000, 0x80000001)

  # -------- fused multiply-add family (one rounding)
  TEST_FP_OP3_S(164, fmadd.s, rne, FFLAG_NX, 0x34800000, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(165, fmsub.s, rne, FFLAG_NX, 0x40000001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(166, fnmsub.s, rne, FFLAG_NX, 0xc0000001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(167, fnmadd.s, rne, FFLAG_NX, 0xb4800000, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(168, fmadd.s, rtz, FFLAG_NX, 0x34800000, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(169, fmsub.s, rtz, FFLAG_NX, 0x40000001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(170, fnmsub.s, rtz, FFLAG_NX, 0xc0000001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(171, fnmadd.s, rtz, FFLAG_NX, 0xb4800000, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(172, fmadd.s, rdn, FFLAG_NX, 0x34800000, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(173, fmsub.s, rdn, FFLAG_NX, 0x40000001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(174, fnmsub.s, rdn, FFLAG_NX, 0xc0000002, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(175, fnmadd.s, rdn, FFLAG_NX, 0xb4800001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(176, fmadd.s, rup, FFLAG_NX, 0x34800001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(177, fmsub.s, rup, FFLAG_NX, 0x40000002, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(178, fnmsub.s, rup, FFLAG_NX, 0xc0000001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(179, fnmadd.s, rup, FFLAG_NX, 0xb4800000, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(180, fmadd.s, rmm, FFLAG_NX, 0x34800001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(181, fmsub.s, rmm, FFLAG_NX, 0x40000001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(182, fnmsub.s, rmm, FFLAG_NX, 0xc0000001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(183, fnmadd.s, rmm, FFLAG_NX, 0xb4800001, 0x3f800001, 0x3f800001, 0xbf800000)
  TEST_FP_OP3_S(184, fmadd.s, rne, FFLAG_NX, 0x3f800000, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(185, fmsub.s, rne, 0, 0x3f7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(186, fnmsub.s, rne, 0, 0xbf7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(187, fnmadd.s, rne, FFLAG_NX, 0xbf800000, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(188, fmadd.s, rtz, FFLAG_NX, 0x3f800000, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(189, fmsub.s, rtz, 0, 0x3f7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(190, fnmsub.s, rtz, 0, 0xbf7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(191, fnmadd.s, rtz, FFLAG_NX, 0xbf800000, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(192, fmadd.s, rdn, FFLAG_NX, 0x3f800000, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(193, fmsub.s, rdn, 0, 0x3f7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(194, fnmsub.s, rdn, 0, 0xbf7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(195, fnmadd.s, rdn, FFLAG_NX, 0xbf800001, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(196, fmadd.s, rup, FFLAG_NX, 0x3f800001, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(197, fmsub.s, rup, 0, 0x3f7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(198, fnmsub.s, rup, 0, 0xbf7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(199, fnmadd.s, rup, FFLAG_NX, 0xbf800000, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(200, fmadd.s, rmm, FFLAG_NX, 0x3f800001, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(201, fmsub.s, rmm, 0, 0x3f7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(202, fnmsub.s, rmm, 0, 0xbf7fffff, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(203, fnmadd.s, rmm, FFLAG_NX, 0xbf800001, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3_S(204, fmadd.s, rne, 0, 0x33000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(205, fmsub.s, rne, FFLAG_NX, 0x40000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(206, fnmsub.s, rne, FFLAG_NX, 0xc0000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(207, fnmadd.s, rne, 0, 0xb3000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(208, fmadd.s, rtz, 0, 0x33000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(209, fmsub.s, rtz, FFLAG_NX, 0x40000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(210, fnmsub.s, rtz, FFLAG_NX, 0xc0000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(211, fnmadd.s, rtz, 0, 0xb3000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(212, fmadd.s, rdn, 0, 0x33000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(213, fmsub.s, rdn, FFLAG_NX, 0x40000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(214, fnmsub.s, rdn, FFLAG_NX, 0xc0000001, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(215, fnmadd.s, rdn, 0, 0xb3000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(216, fmadd.s, rup, 0, 0x33000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(217, fmsub.s, rup, FFLAG_NX, 0x40000001, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(218, fnmsub.s, rup, FFLAG_NX, 0xc0000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(219, fnmadd.s, rup, 0, 0xb3000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(220, fmadd.s, rmm, 0, 0x33000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(221, fmsub.s, rmm, FFLAG_NX, 0x40000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(222, fnmsub.s, rmm, FFLAG_NX, 0xc0000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(223, fnmadd.s, rmm, 0, 0xb3000000, 0x3eaaaaab, 0x40400000, 0xbf800000)
  TEST_FP_OP3_S(224, fmadd.s, rne, 0, 0x40e00000, 0x40000000, 0x40400000, 0x3f800000)
  TEST_FP_OP3_S(225, fmsub.s, rne, 0, 0x40a00000, 0x40000000, 0x40400000, 0x3f800000)
  TEST_FP_OP3_S(226, fnmsub.s, rne, 0, 0xc0a00000, 0x40000000, 0x40400000, 0x3f800000)
  TEST_FP_OP3_S(227, fnmadd.s, rne, 0, 0xc0e00000, 0x40000000, 0x40400000, 0x3f800000)
  TEST_FP_OP3_S(228, fmadd.s, rne, 0, 0x00000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(229, fmsub.s, rne, 0, 0x40000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(230, fnmsub.s, rne, 0, 0xc0000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(231, fnmadd.s, rne, 0, 0x00000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(232, fmadd.s, rtz, 0, 0x00000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(233, fmsub.s, rtz, 0, 0x40000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(234, fnmsub.s, rtz, 0, 0xc0000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(235, fnmadd.s, rtz, 0, 0x00000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(236, fmadd.s, rdn, 0, 0x80000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(237, fmsub.s, rdn, 0, 0x40000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(238, fnmsub.s, rdn, 0, 0xc0000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(239, fnmadd.s, rdn, 0, 0x80000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(240, fmadd.s, rup, 0, 0x00000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(241, fmsub.s, rup, 0, 0x40000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(242, fnmsub.s, rup, 0, 0xc0000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(243, fnmadd.s, rup, 0, 0x00000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(244, fmadd.s, rmm, 0, 0x00000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(245, fmsub.s, rmm, 0, 0x40000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(246, fnmsub.s, rmm, 0, 0xc0000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(247, fnmadd.s, rmm, 0, 0x00000000, 0x3f800000, 0x3f800000, 0xbf800000)
  TEST_FP_OP3_S(248, fmadd.s, rne, 0, 0x7f7fffff, 0x7f7fffff, 0x40000000, 0xff7fffff)
  TEST_FP_OP3_S(249, fmsub.s, rne, FFLAG_OF|FFLAG_NX, 0x7f800000, 0x7f7fffff, 0x40000000, 0xff7fffff)
  TEST_FP_OP3_S(250, fnmsub.s, rne, FFLAG_OF|FFLAG_NX, 0xff800000, 0x7f7fffff, 0x40000000, 0xff7fffff)
  TEST_FP_OP3_S(251, fnmadd.s, rne, 0, 0xff7fffff, 0x7f7fffff, 0x40000000, 0xff7fffff)
  TEST_FP_OP3_S(252, fmadd.s, rne, 0, 0x00400001, 0x00800000, 0x3f000000, 0x00000001)
  TEST_FP_OP3_S(253, fmsub.s, rne, 0, 0x003fffff, 0x00800000, 0x3f000000, 0x00000001)
  TEST_FP_OP3_S(254, fnmsub.s, rne, 0, 0x803fffff, 0x00800000, 0x3f000000, 0x00000001)
  TEST_FP_OP3_S(255, fnmadd.s, rne, 0, 0x80400001, 0x00800000, 0x3f000000, 0x00000001)
  TEST_FP_OP3_S(256, fmadd.s, rne, FFLAG_NX, 0xb4800000, 0x3f800001, 0xbf800001, 0x3f800000)
  TEST_FP_OP3_S(257, fmsub.s, rne, FFLAG_NX, 0xc0000001, 0x3f800001, 0xbf800001, 0x3f800000)
  TEST_FP_OP3_S(258, fnmsub.s, rne, FFLAG_NX, 0x40000001, 0x3f800001, 0xbf800001, 0x3f800000)
  TEST_FP_OP3_S(259, fnmadd.s, rne, FFLAG_NX, 0x34800000, 0x3f800001, 0xbf800001, 0x3f800000)
  TEST_FP_OP3_S(260, fmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800000, 0x00000000, 0x7fc00000)
  TEST_FP_OP3_S(261, fnmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800000, 0x00000000, 0x7fc00000)
  TEST_FP_OP3_S(262, fmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x00000000, 0xff800000, 0x3f800000)
  TEST_FP_OP3_S(263, fnmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x00000000, 0xff800000, 0x3f800000)
  TEST_FP_OP3_S(264, fmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800000, 0x3f800000, 0xff800000)
  TEST_FP_OP3_S(265, fnmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800000, 0x3f800000, 0xff800000)
  TEST_FP_OP3_S(266, fmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800001, 0x3f800000, 0x3f800000)
  TEST_FP_OP3_S(267, fnmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x7f800001, 0x3f800000, 0x3f800000)
  TEST_FP_OP3_S(268, fmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x3f800000, 0x3f800000, 0x7f800001)
  TEST_FP_OP3_S(269, fnmadd.s, rne, FFLAG_NV, 0x7fc00000, 0x3f800000, 0x3f800000, 0x7f800001)
  TEST_FP_OP3_S(270, fmadd.s, rne, 0, 0x7fc00000, 0x7fc00000, 0x3f800000, 0x3f800000)
  TEST_FP_OP3_S(271, fnmadd.s, rne, 0, 0x7fc00000, 0x7fc00000, 0x3f800000, 0x3f800000)
  TEST_FP_OP3_S(272, fmadd.s, rne, 0, 0x7f800000, 0x7f800000, 0x40000000, 0x7f800000)
  TEST_FP_OP3_S(273, fnmadd.s, rne, 0, 0xff800000, 0x7f800000, 0x40000000, 0x7f800000)

  # -------- fmin/fmax: signed zeros, one NaN (the number wins), both NaN (canonical), sNaN raises NV
  TEST_FP_OP2NR_S(274, fmin.s, 0, 0x3f800000, 0x3f800000, 0x40000000)
  TEST_FP_OP2NR_S(275, fmax.s, 0, 0x40000000, 0x3f800000, 0x40000000)
  TEST_FP_OP2NR_S(276, fmin.s, 0, 0x3f800000, 0x40000000, 0x3f800000)
  TEST_FP_OP2NR_S(277, fmax.s, 0, 0x40000000, 0x40000000, 0x3f800000)
  TEST_FP_OP2NR_S(278, fmin.s, 0, 0xbf800000, 0xbf800000, 0x3f800000)
  TEST_FP_OP2NR_S(279, fmax.s, 0, 0x3f800000, 0xbf800000, 0x3f800000)
  TEST_FP_OP2NR_S(280, fmin.s, 0, 0x80000000, 0x80000000, 0x00000000)
  TEST_FP_OP2NR_S(281, fmax.s, 0, 0x00000000, 0x80000000, 0x00000000)
  TEST_FP_OP2NR_S(282, fmin.s, 0, 0x80000000, 0x00000000, 0x80000000)
  TEST_FP_OP2NR_S(283, fmax.s, 0, 0x00000000, 0x00000000, 0x80000000)
  TEST_FP_OP2NR_S(284, fmin.s, 0, 0x80000000, 0x80000000, 0x80000000)
  TEST_FP_OP2NR_S(285, fmax.s, 0, 0x80000000, 0x80000000, 0x80000000)
  TEST_FP_OP2NR_S(286, fmin.s, 0, 0x3f800000, 0x7fc00000, 0x3f800000)
  TEST_FP_OP2NR_S(287, fmax.s, 0, 0x3f800000, 0x7fc00000, 0x3f800000)
  TEST_FP_OP2NR_S(288, fmin.s, 0, 0x3f800000, 0x3f800000, 0x7fc00000)
  TEST_FP_OP2NR_S(289, fmax.s, 0, 0x3f800000, 0x3f800000, 0x7fc00000)
  TEST_FP_OP2NR_S(290, fmin.s, FFLAG_NV, 0x3f800000, 0x7f800001, 0x3f800000)
  TEST_FP_OP2NR_S(291, fmax.s, FFLAG_NV, 0x3f800000, 0x7f800001, 0x3f800000)
  TEST_FP_OP2NR_S(292, fmin.s, FFLAG_NV, 0x3f800000, 0x3f800000, 0x7f800001)
  TEST_FP_OP2NR_S(293, fmax.s, FFLAG_NV, 0x3f800000, 0x3f800000, 0x7f800001)
  TEST_FP_OP2NR_S(294, fmin.s, 0, 0x7fc00000, 0x7fc00000, 0x7fc01234)
  TEST_FP_OP2NR_S(295, fmax.s, 0, 0x7fc00000, 0x7fc00000, 0x7fc01234)
  TEST_FP_OP2NR_S(296, fmin.s, FFLAG_NV, 0x7fc00000, 0x7f800001, 0x7fc00000)
  TEST_FP_OP2NR_S(297, fmax.s, FFLAG_NV, 0x7fc00000, 0x7f800001, 0x7fc00000)
  TEST_FP_OP2NR_S(298, fmin.s, 0, 0xff800000, 0xff800000, 0x7f7fffff)
  TEST_FP_OP2NR_S(299, fmax.s, 0, 0x7f7fffff, 0xff800000, 0x7f7fffff)
  TEST_FP_OP2NR_S(300, fmin.s, 0, 0xff7fffff, 0x7f800000, 0xff7fffff)
  TEST_FP_OP2NR_S(301, fmax.s, 0, 0x7f800000, 0x7f800000, 0xff7fffff)
  TEST_FP_OP2NR_S(302, fmin.s, 0, 0x80000001, 0x00000001, 0x80000001)
  TEST_FP_OP2NR_S(303, fmax.s, 0, 0x00000001, 0x00000001, 0x80000001)

  # -------- fsgnj/fsgnjn/fsgnjx (no flags, NaNs untouched)
  TEST_FP_OP2NR_S(304, fsgnj.s, 0, 0x3f800000, 0x3f800000, 0x40000000)
  TEST_FP_OP2NR_S(305, fsgnjn.s, 0, 0xbf800000, 0x3f800000, 0x40000000)
  TEST_FP_OP2NR_S(306, fsgnjx.s, 0, 0x3f800000, 0x3f800000, 0x40000000)
  TEST_FP_OP2NR_S(307, fsgnj.s, 0, 0xbf800000, 0x3f800000, 0xc0000000)
  TEST_FP_OP2NR_S(308, fsgnjn.s, 0, 0x3f800000, 0x3f800000, 0xc0000000)
  TEST_FP_OP2NR_S(309, fsgnjx.s, 0, 0xbf800000, 0x3f800000, 0xc0000000)
  TEST_FP_OP2NR_S(310, fsgnj.s, 0, 0x3f800000, 0xbf800000, 0x40000000)
  TEST_FP_OP2NR_S(311, fsgnjn.s, 0, 0xbf800000, 0xbf800000, 0x40000000)
  TEST_FP_OP2NR_S(312, fsgnjx.s, 0, 0xbf800000, 0xbf800000, 0x40000000)
  TEST_FP_OP2NR_S(313, fsgnj.s, 0, 0xbf800000, 0xbf800000, 0xc0000000)
  TEST_FP_OP2NR_S(314, fsgnjn.s, 0, 0x3f800000, 0xbf800000, 0xc0000000)
  TEST_FP_OP2NR_S(315, fsgnjx.s, 0, 0x3f800000, 0xbf800000, 0xc0000000)
  TEST_FP_OP2NR_S(316, fsgnj.s, 0, 0xff800001, 0x7f800001, 0xbf800000)
  TEST_FP_OP2NR_S(317, fsgnjn.s, 0, 0x7f800001, 0x7f800001, 0xbf800000)
  TEST_FP_OP2NR_S(318, fsgnjx.s, 0, 0xff800001, 0x7f800001, 0xbf800000)
  TEST_FP_OP2NR_S(319, fsgnj.s, 0, 0x7fc00000, 0xffc00000, 0x00000000)
  TEST_FP_OP2NR_S(320, fsgnjn.s, 0, 0xffc00000, 0xffc00000, 0x00000000)
  TEST_FP_OP2NR_S(321, fsgnjx.s, 0, 0xffc00000, 0xffc00000, 0x00000000)
  TEST_FP_OP2NR_S(322, fsgnj.s, 0, 0xff800000, 0xff800000, 0x80000000)
  TEST_FP_OP2NR_S(323, fsgnjn.s, 0, 0x7f800000, 0xff800000, 0x80000000)
  TEST_FP_OP2NR_S(324, fsgnjx.s, 0, 0x7f800000, 0xff800000, 0x80000000)

  # -------- feq (quiet: NV only for sNaN) / flt, fle (signalling: NV for any NaN)
  TEST_FP_CMP_S(325, feq.s, 0, 1, 0x3f800000, 0x3f800000)
  TEST_FP_CMP_S(326, flt.s, 0, 0, 0x3f800000, 0x3f800000)
  TEST_FP_CMP_S(327, fle.s, 0, 1, 0x3f800000, 0x3f800000)
  TEST_FP_CMP_S(328, feq.s, 0, 0, 0x3f800000, 0x40000000)
  TEST_FP_CMP_S(329, flt.s, 0, 1, 0x3f800000, 0x40000000)
  TEST_FP_CMP_S(330, fle.s, 0, 1, 0x3f800000, 0x40000000)
  TEST_FP_CMP_S(331, feq.s, 0, 0, 0x40000000, 0x3f800000)
  TEST_FP_CMP_S(332, flt.s, 0, 0, 0x40000000, 0x3f800000)
  TEST_FP_CMP_S(333, fle.s, 0, 0, 0x40000000, 0x3f800000)
  TEST_FP_CMP_S(334, feq.s, 0, 1, 0x80000000, 0x00000000)
  TEST_FP_CMP_S(335, flt.s, 0, 0, 0x80000000, 0x00000000)
  TEST_FP_CMP_S(336, fle.s, 0, 1, 0x80000000, 0x00000000)
  TEST_FP_CMP_S(337, feq.s, 0, 0, 0x7fc00000, 0x3f800000)
  TEST_FP_CMP_S(338, flt.s, FFLAG_NV, 0, 0x7fc00000, 0x3f800000)
  TEST_FP_CMP_S(339, fle.s, FFLAG_NV, 0, 0x7fc00000, 0x3f800000)
  TEST_FP_CMP_S(340, feq.s, 0, 0, 0x3f800000, 0x7fc00000)
  TEST_FP_CMP_S(341, flt.s, FFLAG_NV, 0, 0x3f800000, 0x7fc00000)
  TEST_FP_CMP_S(342, fle.s, FFLAG_NV, 0, 0x3f800000, 0x7fc00000)
  TEST_FP_CMP_S(343, feq.s, FFLAG_NV, 0, 0x7f800001, 0x3f800000)
  TEST_FP_CMP_S(344, flt.s, FFLAG_NV, 0, 0x7f800001, 0x3f800000)
  TEST_FP_CMP_S(345, fle.s, FFLAG_NV, 0, 0x7f800001, 0x3f800000)
  TEST_FP_CMP_S(346, feq.s, 0, 0, 0x7fc00000, 0x7fc00000)
  TEST_FP_CMP_S(347, flt.s, FFLAG_NV, 0, 0x7fc00000, 0x7fc00000)
  TEST_FP_CMP_S(348, fle.s, FFLAG_NV, 0, 0x7fc00000, 0x7fc00000)
  TEST_FP_CMP_S(349, feq.s, 0, 0, 0xff800000, 0x7f800000)
  TEST_FP_CMP_S(350, flt.s, 0, 1, 0xff800000, 0x7f800000)
  TEST_FP_CMP_S(351, fle.s, 0, 1, 0xff800000, 0x7f800000)
  TEST_FP_CMP_S(352, feq.s, 0, 1, 0x7f800000, 0x7f800000)
  TEST_FP_CMP_S(353, flt.s, 0, 0, 0x7f800000, 0x7f800000)
  TEST_FP_CMP_S(354, fle.s, 0, 1, 0x7f800000, 0x7f800000)
  TEST_FP_CMP_S(355, feq.s, 0, 0, 0x00000001, 0x00000000)
  TEST_FP_CMP_S(356, flt.s, 0, 0, 0x00000001, 0x00000000)
  TEST_FP_CMP_S(357, fle.s, 0, 0, 0x00000001, 0x00000000)
  TEST_FP_CMP_S(358, feq.s, 0, 0, 0xff7fffff, 0xff800000)
  TEST_FP_CMP_S(359, flt.s, 0, 0, 0xff7fffff, 0xff800000)
  TEST_FP_CMP_S(360, fle.s, 0, 0, 0xff7fffff, 0xff800000)

  # -------- fclass: all ten classes
  TEST_FCLASS_S(361, 0x001, 0xff800000)
  TEST_FCLASS_S(362, 0x002, 0xbf800000)
  TEST_FCLASS_S(363, 0x004, 0x80000001)
  TEST_FCLASS_S(364, 0x008, 0x80000000)
  TEST_FCLASS_S(365, 0x010, 0x00000000)
  TEST_FCLASS_S(366, 0x020, 0x00000001)
  TEST_FCLASS_S(367, 0x040, 0x3f800000)
  TEST_FCLASS_S(368, 0x080, 0x7f800000)
  TEST_FCLASS_S(369, 0x100, 0x7f800001)
  TEST_FCLASS_S(370, 0x200, 0x7fc00000)
  TEST_FCLASS_S(371, 0x002, 0xff7fffff)
  TEST_FCLASS_S(372, 0x040, 0x7f7fffff)
  TEST_FCLASS_S(373, 0x100, 0xff800001)
  TEST_FCLASS_S(374, 0x200, 0xffc00000)
  TEST_FCLASS_S(375, 0x020, 0x007fffff)

  # -------- fcvt.w/wu: rounding, saturation, NaN and infinities (NV, not NX), -0.5 to wu
  TEST_FP_INT_S(376, fcvt.w.s, rne, FFLAG_NX, 0x00000002, 0x3fc00000)
  TEST_FP_INT_S(377, fcvt.wu.s, rne, FFLAG_NX, 0x00000002, 0x3fc00000)
  TEST_FP_INT_S(378, fcvt.w.s, rne, FFLAG_NX, 0x00000002, 0x40200000)
  TEST_FP_INT_S(379, fcvt.wu.s, rne, FFLAG_NX, 0x00000002, 0x40200000)
  TEST_FP_INT_S(380, fcvt.w.s, rne, FFLAG_NX, 0xfffffffe, 0xbfc00000)
  TEST_FP_INT_S(381, fcvt.wu.s, rne, FFLAG_NV, 0x00000000, 0xbfc00000)
  TEST_FP_INT_S(382, fcvt.w.s, rne, FFLAG_NX, 0xfffffffe, 0xc0200000)
  TEST_FP_INT_S(383, fcvt.wu.s, rne, FFLAG_NV, 0x00000000, 0xc0200000)
  TEST_FP_INT_S(384, fcvt.w.s, rne, FFLAG_NX, 0x00000000, 0x3f000000)
  TEST_FP_INT_S(385, fcvt.wu.s, rne, FFLAG_NX, 0x00000000, 0x3f000000)
  TEST_FP_INT_S(386, fcvt.w.s, rne, FFLAG_NX, 0x00000000, 0xbf000000)
  TEST_FP_INT_S(387, fcvt.wu.s, rne, FFLAG_NX, 0x00000000, 0xbf000000)
  TEST_FP_INT_S(388, fcvt.w.s, rne, FFLAG_NX, 0xffffffff, 0xbf333333)
  TEST_FP_INT_S(389, fcvt.wu.s, rne, FFLAG_NV, 0x00000000, 0xbf333333)
  TEST_FP_INT_S(390, fcvt.w.s, rne, FFLAG_NX, 0x00000001, 0x3f333333)
  TEST_FP_INT_S(391, fcvt.wu.s, rne, FFLAG_NX, 0x00000001, 0x3f333333)
  TEST_FP_INT_S(392, fcvt.w.s, rtz, FFLAG_NX, 0x00000001, 0x3fc00000)
  TEST_FP_INT_S(393, fcvt.wu.s, rtz, FFLAG_NX, 0x00000001, 0x3fc00000)
  TEST_FP_INT_S(394, fcvt.w.s, rtz, FFLAG_NX, 0x00000002, 0x40200000)
  TEST_FP_INT_S(395, fcvt.wu.s, rtz, FFLAG_NX, 0x00000002, 0x40200000)
  TEST_FP_INT_S(396, fcvt.w.s, rtz, FFLAG_NX, 0xffffffff, 0xbfc00000)
  TEST_FP_INT_S(397, fcvt.wu.s, rtz, FFLAG_NV, 0x00000000, 0xbfc00000)
  TEST_FP_INT_S(398, fcvt.w.s, rtz, FFLAG_NX, 0xfffffffe, 0xc0200000)
  TEST_FP_INT_S(399, fcvt.wu.s, rtz, FFLAG_NV, 0x00000000, 0xc0200000)
  TEST_FP_INT_S(400, fcvt.w.s, rtz, FFLAG_NX, 0x00000000, 0x3f000000)
  TEST_FP_INT_S(401, fcvt.wu.s, rtz, FFLAG_NX, 0x00000000, 0x3f000000)
  TEST_FP_INT_S(402, fcvt.w.s, rtz, FFLAG_NX, 0x00000000, 0xbf000000)
  TEST_FP_INT_S(403, fcvt.wu.s, rtz, FFLAG_NX, 0x00000000, 0xbf000000)
  TEST_FP_INT_S(404, fcvt.w.s, rtz, FFLAG_NX, 0x00000000, 0xbf333333)
  TEST_FP_INT_S(405, fcvt.wu.s, rtz, FFLAG_NX, 0x00000000, 0xbf333333)
  TEST_FP_INT_S(406, fcvt.w.s, rtz, FFLAG_NX, 0x00000000, 0x3f333333)
  TEST_FP_INT_S(407, fcvt.wu.s, rtz, FFLAG_NX, 0x00000000, 0x3f333333)
  TEST_FP_INT_S(408, fcvt.w.s, rdn, FFLAG_NX, 0x00000001, 0x3fc00000)
  TEST_FP_INT_S(409, fcvt.wu.s, rdn, FFLAG_NX, 0x00000001, 0x3fc00000)
  TEST_FP_INT_S(410, fcvt.w.s, rdn, FFLAG_NX, 0x00000002, 0x40200000)
  TEST_FP_INT_S(411, fcvt.wu.s, rdn, FFLAG_NX, 0x00000002, 0x40200000)
  TEST_FP_INT_S(412, fcvt.w.s, rdn, FFLAG_NX, 0xfffffffe, 0xbfc00000)
  TEST_FP_INT_S(413, fcvt.wu.s, rdn, FFLAG_NV, 0x00000000, 0xbfc00000)
  TEST_FP_INT_S(414, fcvt.w.s, rdn, FFLAG_NX, 0xfffffffd, 0xc0200000)
  TEST_FP_INT_S(415, fcvt.wu.s, rdn, FFLAG_NV, 0x00000000, 0xc0200000)
  TEST_FP_INT_S(416, fcvt.w.s, rdn, FFLAG_NX, 0x00000000, 0x3f000000)
  TEST_FP_INT_S(417, fcvt.wu.s, rdn, FFLAG_NX, 0x00000000, 0x3f000000)
  TEST_FP_INT_S(418, fcvt.w.s, rdn, FFLAG_NX, 0xffffffff, 0xbf000000)
  TEST_FP_INT_S(419, fcvt.wu.s, rdn, FFLAG_NV, 0x00000000, 0xbf000000)
  TEST_FP_INT_S(420, fcvt.w.s, rdn, FFLAG_NX, 0xffffffff, 0xbf333333)
  TEST_FP_INT_S(421, fcvt.wu.s, rdn, FFLAG_NV, 0x00000000, 0xbf333333)
  TEST_FP_INT_S(422, fcvt.w.s, rdn, FFLAG_NX, 0x00000000, 0x3f333333)
  TEST_FP_INT_S(423, fcvt.wu.s, rdn, FFLAG_NX, 0x00000000, 0x3f333333)
  TEST_FP_INT_S(424, fcvt.w.s, rup, FFLAG_NX, 0x00000002, 0x3fc00000)
  TEST_FP_INT_S(425, fcvt.wu.s, rup, FFLAG_NX, 0x00000002, 0x3fc00000)
  TEST_FP_INT_S(426, fcvt.w.s, rup, FFLAG_NX, 0x00000003, 0x40200000)
  TEST_FP_INT_S(427, fcvt.wu.s, rup, FFLAG_NX, 0x00000003, 0x40200000)
  TEST_FP_INT_S(428, fcvt.w.s, rup, FFLAG_NX, 0xffffffff, 0xbfc00000)
  TEST_FP_INT_S(429, fcvt.wu.s, rup, FFLAG_NV, 0x00000000, 0xbfc00000)
  TEST_FP_INT_S(430, fcvt.w.s, rup, FFLAG_NX, 0xfffffffe, 0xc0200000)
  TEST_FP_INT_S(431, fcvt.wu.s, rup, FFLAG_NV, 0x00000000, 0xc0200000)
  TEST_FP_INT_S(432, fcvt.w.s, rup, FFLAG_NX, 0x00000001, 0x3f000000)
  TEST_FP_INT_S(433, fcvt.wu.s, rup, FFLAG_NX, 0x00000001, 0x3f000000)
  TEST_FP_INT_S(434, fcvt.w.s, rup, FFLAG_NX, 0x00000000, 0xbf000000)
  TEST_FP_INT_S(435, fcvt.wu.s, rup, FFLAG_NX, 0x00000000, 0xbf000000)
  TEST_FP_INT_S(436, fcvt.w.s, rup, FFLAG_NX, 0x00000000, 0xbf333333)
  TEST_FP_INT_S(437, fcvt.wu.s, rup, FFLAG_NX, 0x00000000, 0xbf333333)
  TEST_FP_INT_S(438, fcvt.w.s, rup, FFLAG_NX, 0x00000001, 0x3f333333)
  TEST_FP_INT_S(439, fcvt.wu.s, rup, FFLAG_NX, 0x00000001, 0x3f333333)
  TEST_FP_INT_S(440, fcvt.w.s, rmm, FFLAG_NX, 0x00000002, 0x3fc00000)
  TEST_FP_INT_S(441, fcvt.wu.s, rmm, FFLAG_NX, 0x00000002, 0x3fc00000)
  TEST_FP_INT_S(442, fcvt.w.s, rmm, FFLAG_NX, 0x00000003, 0x40200000)
  TEST_FP_INT_S(443, fcvt.wu.s, rmm, FFLAG_NX, 0x00000003, 0x40200000)
  TEST_FP_INT_S(444, fcvt.w.s, rmm, FFLAG_NX, 0xfffffffe, 0xbfc00000)
  TEST_FP_INT_S(445, fcvt.wu.s, rmm, FFLAG_NV, 0x00000000, 0xbfc00000)
  TEST_FP_INT_S(446, fcvt.w.s, rmm, FFLAG_NX, 0xfffffffd, 0xc0200000)
  TEST_FP_INT_S(447, fcvt.wu.s, rmm, FFLAG_NV, 0x00000000, 0xc0200000)
  TEST_FP_INT_S(448, fcvt.w.s, rmm, FFLAG_NX, 0x00000001, 0x3f000000)
  TEST_FP_INT_S(449, fcvt.wu.s, rmm, FFLAG_NX, 0x00000001, 0x3f000000)
  TEST_FP_INT_S(450, fcvt.w.s, rmm, FFLAG_NX, 0xffffffff, 0xbf000000)
  TEST_FP_INT_S(451, fcvt.wu.s, rmm, FFLAG_NV, 0x00000000, 0xbf000000)
  TEST_FP_INT_S(452, fcvt.w.s, rmm, FFLAG_NX, 0xffffffff, 0xbf333333)
  TEST_FP_INT_S(453, fcvt.wu.s, rmm, FFLAG_NV, 0x00000000, 0xbf333333)
  TEST_FP_INT_S(454, fcvt.w.s, rmm, FFLAG_NX, 0x00000001, 0x3f333333)
  TEST_FP_INT_S(455, fcvt.wu.s, rmm, FFLAG_NX, 0x00000001, 0x3f333333)
  TEST_FP_INT_S(456, fcvt.w.s, rtz, FFLAG_NV, 0x7fffffff, 0x4f000000)
  TEST_FP_INT_S(457, fcvt.wu.s, rtz, 0, 0x80000000, 0x4f000000)
  TEST_FP_INT_S(458, fcvt.w.s, rtz, 0, 0x80000000, 0xcf000000)
  TEST_FP_INT_S(459, fcvt.wu.s, rtz, FFLAG_NV, 0x00000000, 0xcf000000)
  TEST_FP_INT_S(460, fcvt.w.s, rtz, FFLAG_NV, 0x7fffffff, 0x4f800000)
  TEST_FP_INT_S(461, fcvt.wu.s, rtz, FFLAG_NV, 0xffffffff, 0x4f800000)
  TEST_FP_INT_S(462, fcvt.w.s, rtz, FFLAG_NV, 0x7fffffff, 0x4f7fffff)
  TEST_FP_INT_S(463, fcvt.wu.s, rtz, 0, 0xffffff00, 0x4f7fffff)
  TEST_FP_INT_S(464, fcvt.w.s, rtz, 0, 0x7fffff80, 0x4effffff)
  TEST_FP_INT_S(465, fcvt.wu.s, rtz, 0, 0x7fffff80, 0x4effffff)
  TEST_FP_INT_S(466, fcvt.w.s, rtz, 0, 0xffffffff, 0xbf800000)
  TEST_FP_INT_S(467, fcvt.wu.s, rtz, FFLAG_NV, 0x00000000, 0xbf800000)
  TEST_FP_INT_S(468, fcvt.w.s, rtz, FFLAG_NV, 0x7fffffff, 0x7f800000)
  TEST_FP_INT_S(469, fcvt.wu.s, rtz, FFLAG_NV, 0xffffffff, 0x7f800000)
  TEST_FP_INT_S(470, fcvt.w.s, rtz, FFLAG_NV, 0x80000000, 0xff800000)
  TEST_FP_INT_S(471, fcvt.wu.s, rtz, FFLAG_NV, 0x00000000, 0xff800000)
  TEST_FP_INT_S(472, fcvt.w.s, rtz, FFLAG_NV, 0x7fffffff, 0x7fc00000)
  TEST_FP_INT_S(473, fcvt.wu.s, rtz, FFLAG_NV, 0xffffffff, 0x7fc00000)
  TEST_FP_INT_S(474, fcvt.w.s, rtz, FFLAG_NV, 0x7fffffff, 0x7f800001)
  TEST_FP_INT_S(475, fcvt.wu.s, rtz, FFLAG_NV, 0xffffffff, 0x7f800001)
  TEST_FP_INT_S(476, fcvt.w.s, rtz, FFLAG_NV, 0x7fffffff, 0xffc00000)
  TEST_FP_INT_S(477, fcvt.wu.s, rtz, FFLAG_NV, 0xffffffff, 0xffc00000)
  TEST_FP_INT_S(478, fcvt.w.s, rtz, FFLAG_NV, 0x7fffffff, 0x7f7fffff)
  TEST_FP_INT_S(479, fcvt.wu.s, rtz, FFLAG_NV, 0xffffffff, 0x7f7fffff)
  TEST_FP_INT_S(480, fcvt.w.s, rtz, FFLAG_NV, 0x80000000, 0xff7fffff)
  TEST_FP_INT_S(481, fcvt.wu.s, rtz, FFLAG_NV, 0x00000000, 0xff7fffff)
  TEST_FP_INT_S(482, fcvt.w.s, rtz, 0, 0x00000000, 0x80000000)
  TEST_FP_INT_S(483, fcvt.wu.s, rtz, 0, 0x00000000, 0x80000000)
  TEST_FP_INT_S(484, fcvt.w.s, rtz, FFLAG_NX, 0x00000000, 0x00000001)
  TEST_FP_INT_S(485, fcvt.wu.s, rtz, FFLAG_NX, 0x00000000, 0x00000001)
  TEST_FP_INT_S(486, fcvt.w.s, rtz, FFLAG_NX, 0x00000000, 0x80000001)
  TEST_FP_INT_S(487, fcvt.wu.s, rtz, FFLAG_NX, 0x00000000, 0x80000001)

  # -------- fcvt from integers
  TEST_INT_FP_S(488, fcvt.s.w, rne, 0, 0x00000000, 0x00000000)
  TEST_INT_FP_S(489, fcvt.s.wu, rne, 0, 0x00000000, 0x00000000)
  TEST_INT_FP_S(490, fcvt.s.w, rne, 0, 0x3f800000, 0x00000001)
  TEST_INT_FP_S(491, fcvt.s.wu, rne, 0, 0x3f800000, 0x00000001)
  TEST_INT_FP_S(492, fcvt.s.w, rne, 0, 0xbf800000, 0xffffffff)
  TEST_INT_FP_S(493, fcvt.s.w, rtz, 0, 0xbf800000, 0xffffffff)
  TEST_INT_FP_S(494, fcvt.s.w, rdn, 0, 0xbf800000, 0xffffffff)
  TEST_INT_FP_S(495, fcvt.s.w, rup, 0, 0xbf800000, 0xffffffff)
  TEST_INT_FP_S(496, fcvt.s.w, rmm, 0, 0xbf800000, 0xffffffff)
  TEST_INT_FP_S(497, fcvt.s.wu, rne, FFLAG_NX, 0x4f800000, 0xffffffff)
  TEST_INT_FP_S(498, fcvt.s.wu, rtz, FFLAG_NX, 0x4f7fffff, 0xffffffff)
  TEST_INT_FP_S(499, fcvt.s.wu, rdn, FFLAG_NX, 0x4f7fffff, 0xffffffff)
  TEST_INT_FP_S(500, fcvt.s.wu, rup, FFLAG_NX, 0x4f800000, 0xffffffff)
  TEST_INT_FP_S(501, fcvt.s.wu, rmm, FFLAG_NX, 0x4f800000, 0xffffffff)
  TEST_INT_FP_S(502, fcvt.s.w, rne, FFLAG_NX, 0x4f000000, 0x7fffffff)
  TEST_INT_FP_S(503, fcvt.s.w, rtz, FFLAG_NX, 0x4effffff, 0x7fffffff)
  TEST_INT_FP_S(504, fcvt.s.w, rdn, FFLAG_NX, 0x4effffff, 0x7fffffff)
  TEST_INT_FP_S(505, fcvt.s.w, rup, FFLAG_NX, 0x4f000000, 0x7fffffff)
  TEST_INT_FP_S(506, fcvt.s.w, rmm, FFLAG_NX, 0x4f000000, 0x7fffffff)
  TEST_INT_FP_S(507, fcvt.s.wu, rne, FFLAG_NX, 0x4f000000, 0x7fffffff)
  TEST_INT_FP_S(508, fcvt.s.wu, rtz, FFLAG_NX, 0x4effffff, 0x7fffffff)
  TEST_INT_FP_S(509, fcvt.s.wu, rdn, FFLAG_NX, 0x4effffff, 0x7fffffff)
  TEST_INT_FP_S(510, fcvt.s.wu, rup, FFLAG_NX, 0x4f000000, 0x7fffffff)
  TEST_INT_FP_S(511, fcvt.s.wu, rmm, FFLAG_NX, 0x4f000000, 0x7fffffff)
  TEST_INT_FP_S(512, fcvt.s.w, rne, 0, 0xcf000000, 0x80000000)
  TEST_INT_FP_S(513, fcvt.s.wu, rne, 0, 0x4f000000, 0x80000000)
  TEST_INT_FP_S(514, fcvt.s.w, rne, FFLAG_NX, 0xcf000000, 0x80000001)
  TEST_INT_FP_S(515, fcvt.s.wu, rne, FFLAG_NX, 0x4f000000, 0x80000001)
  TEST_INT_FP_S(516, fcvt.s.w, rne, FFLAG_NX, 0x4b800000, 0x01000001)
  TEST_INT_FP_S(517, fcvt.s.w, rtz, FFLAG_NX, 0x4b800000, 0x01000001)
  TEST_INT_FP_S(518, fcvt.s.w, rdn, FFLAG_NX, 0x4b800000, 0x01000001)
  TEST_INT_FP_S(519, fcvt.s.w, rup, FFLAG_NX, 0x4b800001, 0x01000001)
  TEST_INT_FP_S(520, fcvt.s.w, rmm, FFLAG_NX, 0x4b800001, 0x01000001)
  TEST_INT_FP_S(521, fcvt.s.wu, rne, FFLAG_NX, 0x4b800000, 0x01000001)
  TEST_INT_FP_S(522, fcvt.s.wu, rtz, FFLAG_NX, 0x4b800000, 0x01000001)
  TEST_INT_FP_S(523, fcvt.s.wu, rdn, FFLAG_NX, 0x4b800000, 0x01000001)
  TEST_INT_FP_S(524, fcvt.s.wu, rup, FFLAG_NX, 0x4b800001, 0x01000001)
  TEST_INT_FP_S(525, fcvt.s.wu, rmm, FFLAG_NX, 0x4b800001, 0x01000001)
  TEST_INT_FP_S(526, fcvt.s.w, rne, 0, 0x4b7fffff, 0x00ffffff)
  TEST_INT_FP_S(527, fcvt.s.wu, rne, 0, 0x4b7fffff, 0x00ffffff)
  TEST_INT_FP_S(528, fcvt.s.w, rne, 0, 0xc0400000, 0xfffffffd)
  TEST_INT_FP_S(529, fcvt.s.wu, rne, FFLAG_NX, 0x4f800000, 0xfffffffd)

  # -------- NaN-boxing
  # flw, fmv.w.x and single results set the upper 32 bits to all ones
  TEST_CASE(600, a4, -1, la a0, box_data; fld f3, 0(a0); flw f3, 8(a0); fsd f3, 16(a0); lw a4, 20(a0); lw a3, 16(a0); li a2, 0x3f800000; bne a3, a2, fail)
  TEST_CASE(601, a4, -1, la a0, box_data; fld f3, 0(a0); li a1, 0x12345678; fmv.w.x f3, a1; fsd f3, 16(a0); lw a4, 20(a0); lw a3, 16(a0); bne a3, a1, fail)
  TEST_CASE(602, a4, -1, la a0, box_data; fld f3, 0(a0); flw f0, 8(a0); fadd.s f3, f0, f0; fsd f3, 16(a0); lw a4, 20(a0))
  # improperly boxed inputs (upper half not all ones) read as the canonical
  # quiet NaN: no NV, canonical results
  TEST_UNBOXED_F(603, 0x000000003f800000, 0, 0xffffffff, 0x7fc00000, fadd.s f3, f0, f1)
  TEST_UNBOXED_F(604, 0xfffffffe3f800000, 0, 0xffffffff, 0x7fc00000, fmul.s f3, f1, f0)
  TEST_UNBOXED_F(605, 0x000000003f800000, 0, 0xffffffff, 0x7fc00000, fsgnj.s f3, f0, f0)
  TEST_UNBOXED_F(606, 0x000000003f800000, 0, 0xffffffff, 0xffc00000, fsgnjn.s f3, f0, f1)
  TEST_UNBOXED_F(607, 0x00000000bf800000, 0, 0xffffffff, 0x3f800000, fsgnj.s f3, f1, f0)
  TEST_UNBOXED_F(608, 0x000000003f800000, 0, 0xffffffff, 0x3f800000, fmin.s f3, f0, f1)
  TEST_UNBOXED_F(609, 0x000000003f800000, 0, 0x7ff80000, 0x00000000, fcvt.d.s f3, f0)
  TEST_UNBOXED_F(610, 0x000000003f800000, 0, 0xffffffff, 0x7fc00000, fsqrt.s f3, f0)
  TEST_UNBOXED_F(611, 0x000000003f800000, 0, 0xffffffff, 0x7fc00000, fmadd.s f3, f1, f1, f0)
  TEST_UNBOXED_INT(612, 0x000000003f800000, 0, 0x200, fclass.s a4, f0)
  TEST_UNBOXED_INT(613, 0x000000003f800000, 0, 0, feq.s a4, f0, f0)
  TEST_UNBOXED_INT(614, 0x000000003f800000, FFLAG_NV, 0, flt.s a4, f0, f1)
  TEST_UNBOXED_INT(615, 0x000000003f800000, FFLAG_NV, 0x7fffffff, fcvt.w.s a4, f0, rtz)
  # ... but moves and stores take the low 32 bits as they are
  TEST_UNBOXED_INT(616, 0x000000003f800000, 0, 0x3f800000, fmv.x.w a4, f0)
  TEST_UNBOXED_INT(617, 0x12345678bf800000, 0, 0xbf800000, fsw f0, 16(a0); lw a4, 16(a0))
  # a properly boxed sNaN is an sNaN
  TEST_UNBOXED_F(618, 0xffffffff7f800001, FFLAG_NV, 0xffffffff, 0x7fc00000, fadd.s f3, f0, f1)
  TEST_UNBOXED_INT(619, 0xffffffff7f800001, 0, 0x100, fclass.s a4, f0)

  # -------- fmv.x.w / fmv.w.x move bits unchanged, NaN payloads included, no flags
  TEST_CASE(630, a4, 0x7f800001, fsflags x0; li a1, 0x7f800001; fmv.w.x f5, a1; fmv.x.w a4, f5; frflags a2; bnez a2, fail)
  TEST_CASE(631, a4, 0xffc12345, li a1, 0xffc12345; fmv.w.x f31, a1; fmv.x.w a4, f31)
  TEST_CASE(632, a4, 0x80000000, li a1, 0x80000000; fmv.w.x f0, a1; fmv.x.w a4, f0)
  TEST_CASE(633, x0, 0, li a1, 0x3f800000; fmv.w.x f0, a1; fmv.x.w x0, f0; addi a4, x0, 0; bnez a4, fail)
  # fsw/flw keep sNaN payloads (no canonicalisation on memory moves)
  TEST_CASE(634, a4, 0x7f800001, la a0, box_data; li a1, 0x7f800001; sw a1, 24(a0); flw f7, 24(a0); fsw f7, 28(a0); lw a4, 28(a0))

  # -------- fcsr = frm << 5 | fflags
  TEST_CASE(640, a4, 0xff, li a1, 0xff; csrw fcsr, a1; csrr a4, fcsr)
  TEST_CASE(641, a4, 7, li a1, 0xff; csrw fcsr, a1; csrr a4, frm)
  TEST_CASE(642, a4, 0x1f, li a1, 0xff; csrw fcsr, a1; csrr a4, fflags)
  TEST_CASE(643, a4, 0xff, li a1, -1; csrw fcsr, a1; csrr a4, fcsr)
  TEST_CASE(644, a4, 0x7b, csrwi fcsr, 0; fsrmi 3; csrwi fflags, 0x1b; csrr a4, fcsr)
  TEST_CASE(645, a4, 0x1f, li a1, -1; csrw fflags, a1; csrr a4, fflags)
  TEST_CASE(646, a4, 7, li a1, -1; csrw frm, a1; csrr a4, frm)
  TEST_CASE(647, a4, 0x75, li a1, 0x77; csrw fcsr, a1; csrrci a4, fflags, 2; csrr a4, fcsr)
  TEST_CASE(648, a4, 0x20, li a1, 0x20; csrw fcsr, a1; csrrsi a4, fflags, 0; csrr a4, fcsr)
  TEST_CASE(649, a4, 0x1f, csrwi fcsr, 0x1f; fsrmi a4, 2; csrr a4, fcsr; li a5, 0x5f; bne a4, a5, fail; fsrmi a4, 0; csrr a4, fflags)
  csrwi fcsr, 0

  # -------- flags accumulate, and are not cleared by ops that raise none
test_650:
  li TESTNUM, 650
  la a0, fp_consts
  flw f0, 0(a0)          # 1.0
  flw f1, 4(a0)          # 3.0
  flw f2, 8(a0)          # +0.0
  fsflags x0
  fdiv.s f3, f0, f1      # NX
  frflags a4
  li a5, FFLAG_NX
  bne a4, a5, fail
  fdiv.s f3, f0, f2      # DZ
  frflags a4
  li a5, FFLAG_NX | FFLAG_DZ
  bne a4, a5, fail
  fsgnj.s f3, f0, f1     # no flags: the sticky ones stay
  fadd.s f3, f0, f0      # exact
  fmv.x.w a4, f3
  frflags a4
  li a5, FFLAG_NX | FFLAG_DZ
  bne a4, a5, fail
  fsflags a4, x0         # read and clear
  li a5, FFLAG_NX | FFLAG_DZ
  bne a4, a5, fail
  frflags a4
  bnez a4, fail

  # -------- dynamic rounding: frm selects the mode when rm = dyn
  # 1.0 / 3.0 differs between modes: rne 0x3eaaaaab, rtz/rdn 0x3eaaaaaa,
  # rup 0x3eaaaaab, rmm 0x3eaaaaab; -1/3 for the sign-dependent modes
  TEST_FP_S(660, FFLAG_NX, 0x3eaaaaab, 0x3f800000, 0x40400000, 0, fsrmi FRM_RNE; fdiv.s f3, f0, f1, dyn)
  TEST_FP_S(661, FFLAG_NX, 0x3eaaaaaa, 0x3f800000, 0x40400000, 0, fsrmi FRM_RTZ; fdiv.s f3, f0, f1, dyn)
  TEST_FP_S(662, FFLAG_NX, 0x3eaaaaaa, 0x3f800000, 0x40400000, 0, fsrmi FRM_RDN; fdiv.s f3, f0, f1, dyn)
  TEST_FP_S(663, FFLAG_NX, 0x3eaaaaab, 0x3f800000, 0x40400000, 0, fsrmi FRM_RUP; fdiv.s f3, f0, f1, dyn)
  TEST_FP_S(664, FFLAG_NX, 0x3eaaaaab, 0x3f800000, 0x40400000, 0, fsrmi FRM_RMM; fdiv.s f3, f0, f1, dyn)
  TEST_FP_S(665, FFLAG_NX, 0xbeaaaaab, 0xbf800000, 0x40400000, 0, fsrmi FRM_RDN; fdiv.s f3, f0, f1, dyn)
  TEST_FP_S(666, FFLAG_NX, 0xbeaaaaaa, 0xbf800000, 0x40400000, 0, fsrmi FRM_RUP; fdiv.s f3, f0, f1, dyn)
  # the assembler's default for an arithmetic op without rm is dyn too
  TEST_FP_S(667, FFLAG_NX, 0x3eaaaaaa, 0x3f800000, 0x40400000, 0, fsrmi FRM_RTZ; fdiv.s f3, f0, f1)
  # dyn for conversions and fma
  TEST_FP_TO_INT_S(668, FFLAG_NX, 2, 0x40200000, 0, fsrmi FRM_RNE; fcvt.w.s a4, f0, dyn)
  TEST_FP_TO_INT_S(669, FFLAG_NX, 3, 0x40200000, 0, fsrmi FRM_RMM; fcvt.w.s a4, f0, dyn)
  TEST_FP_TO_INT_S(670, FFLAG_NX, 3, 0x40200000, 0, fsrmi FRM_RUP; fcvt.w.s a4, f0, dyn)
  TEST_FP_S(671, FFLAG_NX, 0x4b800001, 0, 0, 0, fsrmi FRM_RUP; li a1, 0x00ffffff; addi a1, a1, 2; fcvt.s.w f3, a1, dyn)
  TEST_FP_S(672, FFLAG_NX, 0x34800000, 0x3f800001, 0x3f800001, 0xbf800000, fsrmi FRM_RTZ; fmadd.s f3, f0, f1, f2, dyn)
  # a static rm overrides frm
  TEST_FP_S(673, FFLAG_NX, 0x3eaaaaab, 0x3f800000, 0x40400000, 0, fsrmi FRM_RTZ; fdiv.s f3, f0, f1, rup)
  fsrmi FRM_RNE

  # -------- invalid rounding modes are illegal instructions
  # frm = 5, 6, 7 with rm = dyn; mtval = the instruction bits
  fsrmi 5
  TEST_TRAP_TVAL(680, CAUSE_ILLEGAL_INSN, 0x001071d3, fadd.s f3, f0, f1, dyn)
  fsrmi 6
  TEST_TRAP_TVAL(681, CAUSE_ILLEGAL_INSN, 0x001071d3, fadd.s f3, f0, f1, dyn)
  li a1, 7
  fsrm a1
  TEST_TRAP_TVAL(682, CAUSE_ILLEGAL_INSN, 0xc0007753, fcvt.w.s a4, f0, dyn)
  # ... but instructions without a rounding mode still run
  TEST_CASE(683, a4, 0x3f800000, li a1, 0x3f800000; fmv.w.x f0, a1; fsgnj.s f3, f0, f0; fmin.s f3, f3, f0; fmv.x.w a4, f3; feq.s a5, f0, f3; beqz a5, fail; fclass.s a5, f3; li a3, 0x40; bne a5, a3, fail)
  # static rm = 5 and 6 are reserved: fadd.s f3, f0, f1 with rm = 5 / 6
  fsrmi FRM_RNE
  TEST_TRAP_TVAL(684, CAUSE_ILLEGAL_INSN, 0x001051d3, .word 0x001051d3)
  TEST_TRAP_TVAL(685, CAUSE_ILLEGAL_INSN, 0x001061d3, .word 0x001061d3)
  csrr a4, frm
  li TESTNUM, 686
  bnez a4, fail

  TEST_PASSFAIL

RVTEST_CODE_END

RVTEST_DATA_BEGIN
  .balign 8
box_data:
  .dword 0x0123456789abcdef
  .word 0x3f800000, 0
  .dword 0
  .word 0, 0
fp_consts:
  .word 0x3f800000, 0x40400000, 0x00000000, 0
RVTEST_DATA_END
