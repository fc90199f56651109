//! Edge cases of the F/D semantics, checked against values worked out from the spec.

use super::ops::*;
use super::{execute, nan_box, unbox, RoundingMode, RM_DYNAMIC};
use crate::cpu::csr::{MSTATUS_FS, MSTATUS_FS_INITIAL, MSTATUS_SD};
use crate::cpu::fflags::{DZ, NV, NX, OF, UF};
use crate::cpu::{Hart, Trap};
use crate::isa::{Insn, Op};

use RoundingMode::*;

const ALL_MODES: [RoundingMode; 5] = [NearestEven, TowardZero, Down, Up, NearestMaxMagnitude];

const S_ONE: u32 = 0x3f80_0000;
const S_TWO: u32 = 0x4000_0000;
const S_THREE: u32 = 0x4040_0000;
const S_INF: u32 = 0x7f80_0000;
const S_NEG_INF: u32 = 0xff80_0000;
const S_QNAN: u32 = 0x7fc0_0000;
const S_QNAN_PAYLOAD: u32 = 0x7fc1_2345;
const S_SNAN: u32 = 0x7f80_0001;
const S_NEG_ZERO: u32 = 0x8000_0000;
const S_MIN_SUBNORMAL: u32 = 0x0000_0001;
const S_MAX_SUBNORMAL: u32 = 0x007f_ffff;
const S_MIN_NORMAL: u32 = 0x0080_0000;
const S_MAX: u32 = 0x7f7f_ffff;

const D_ONE: u64 = 0x3ff0_0000_0000_0000;
const D_INF: u64 = 0x7ff0_0000_0000_0000;
const D_NEG_INF: u64 = 0xfff0_0000_0000_0000;
const D_QNAN_PAYLOAD: u64 = 0x7ff8_0000_0001_2345;
const D_SNAN: u64 = 0x7ff0_0000_0000_0001;
const D_NEG_ZERO: u64 = 0x8000_0000_0000_0000;
const D_MIN_SUBNORMAL: u64 = 0x0000_0000_0000_0001;

fn s(v: f32) -> u32 {
    v.to_bits()
}

fn d(v: f64) -> u64 {
    v.to_bits()
}

/// A hart with FP enabled but clean (FS = Initial), so dirtying is observable.
fn fp_hart() -> Hart {
    let mut hart = Hart::new();
    hart.csr.mstatus = (hart.csr.mstatus & !(MSTATUS_FS | MSTATUS_SD)) | MSTATUS_FS_INITIAL;
    hart
}

fn insn(op: Op, rd: u8, rs1: u8, rs2: u8, rs3: u8, rm: u8) -> Insn {
    Insn {
        op,
        rd,
        rs1,
        rs2,
        rs3,
        rm,
        len: 4,
        fusion: crate::isa::Fusion::None,
        imm: 0,
        raw: 0xdead_beef,
    }
}

fn fs_is_dirty(hart: &Hart) -> bool {
    hart.csr.mstatus & MSTATUS_FS == MSTATUS_FS && hart.csr.mstatus & MSTATUS_SD != 0
}

#[test]
fn rounding_mode_resolution() {
    for rm in 0..=4 {
        assert_eq!(RoundingMode::resolve(rm, 0).map(|m| m as u8), Some(rm));
        assert_eq!(
            RoundingMode::resolve(RM_DYNAMIC, rm).map(|m| m as u8),
            Some(rm)
        );
    }
    assert_eq!(RoundingMode::resolve(5, 0), None);
    assert_eq!(RoundingMode::resolve(6, 0), None);
    for frm in 5..=7 {
        assert_eq!(RoundingMode::resolve(RM_DYNAMIC, frm), None);
    }
}

#[test]
fn every_rounding_mode_differs_where_it_should() {
    // 1 + 2^-24 is a tie between 1.0 and the next single up.
    let tie = s(2f32.powi(-24));
    let up = S_ONE + 1;
    let expect = [S_ONE, S_ONE, S_ONE, up, up];
    for (mode, want) in ALL_MODES.iter().zip(expect) {
        assert_eq!(f32_add(S_ONE, tie, *mode), (want, NX), "{mode:?}");
    }
    // The same tie, negative: RDN and RMM go away from zero.
    let neg_up = (S_ONE + 1) | 0x8000_0000;
    let neg_one = S_ONE | 0x8000_0000;
    let expect = [neg_one, neg_one, neg_up, neg_one, neg_up];
    for (mode, want) in ALL_MODES.iter().zip(expect) {
        assert_eq!(f32_sub(neg_one, tie, *mode), (want, NX), "{mode:?}");
    }
    // Not a tie: 1/3 lies above the midpoint, so only RTZ and RDN round it down.
    for mode in ALL_MODES {
        let want = if matches!(mode, TowardZero | Down) {
            0x3eaa_aaaa
        } else {
            0x3eaa_aaab
        };
        assert_eq!(f32_div(S_ONE, S_THREE, mode), (want, NX), "{mode:?}");
    }
    // Conversions: 2.5 and -2.5 under each mode.
    let expect_pos = [2, 2, 2, 3, 3];
    let expect_neg = [-2, -2, -3, -2, -3];
    for (i, mode) in ALL_MODES.iter().enumerate() {
        assert_eq!(f32_to_i32(s(2.5), *mode), (expect_pos[i] as u32, NX));
        assert_eq!(f32_to_i32(s(-2.5), *mode), (expect_neg[i] as u32, NX));
        assert_eq!(f64_to_i32(d(2.5), *mode), (expect_pos[i] as u32, NX));
        assert_eq!(f64_to_i32(d(-2.5), *mode), (expect_neg[i] as u32, NX));
    }
    // Double 1 + 2^-53 is a tie as well.
    let d_tie = d(2f64.powi(-53));
    assert_eq!(f64_add(D_ONE, d_tie, NearestEven), (D_ONE, NX));
    assert_eq!(f64_add(D_ONE, d_tie, NearestMaxMagnitude), (D_ONE + 1, NX));
    assert_eq!(f64_add(D_ONE, d_tie, Up), (D_ONE + 1, NX));
    assert_eq!(f64_add(D_ONE, d_tie, TowardZero), (D_ONE, NX));
}

#[test]
fn arithmetic_nan_results_are_canonical() {
    assert_eq!(f32_add(S_QNAN_PAYLOAD, S_ONE, NearestEven), (S_QNAN, 0));
    assert_eq!(f32_mul(S_SNAN, S_ONE, NearestEven), (S_QNAN, NV));
    assert_eq!(f32_sub(S_INF, S_INF, NearestEven), (S_QNAN, NV));
    assert_eq!(f32_div(0, 0, NearestEven), (S_QNAN, NV));
    assert_eq!(f32_sqrt(s(-1.0), NearestEven), (S_QNAN, NV));
    assert_eq!(f32_sqrt(S_NEG_ZERO, NearestEven), (S_NEG_ZERO, 0));
    assert_eq!(
        f64_add(D_QNAN_PAYLOAD, D_ONE, NearestEven),
        (F64_CANONICAL_NAN, 0)
    );
    assert_eq!(f64_div(D_SNAN, D_ONE, NearestEven), (F64_CANONICAL_NAN, NV));
    assert_eq!(f64_sqrt(d(-2.0), Up), (F64_CANONICAL_NAN, NV));
    assert_eq!(f64_to_f32(D_QNAN_PAYLOAD, NearestEven), (S_QNAN, 0));
    assert_eq!(f64_to_f32(D_SNAN, NearestEven), (S_QNAN, NV));
    assert_eq!(f32_to_f64(S_QNAN_PAYLOAD), (F64_CANONICAL_NAN, 0));
    assert_eq!(f32_to_f64(S_SNAN), (F64_CANONICAL_NAN, NV));
}

#[test]
fn flags_per_operation() {
    assert_eq!(f32_div(S_ONE, 0, NearestEven), (S_INF, DZ));
    assert_eq!(f32_div(s(-1.0), 0, NearestEven), (S_NEG_INF, DZ));
    assert_eq!(f64_div(D_ONE, D_NEG_ZERO, NearestEven), (D_NEG_INF, DZ));
    assert_eq!(f32_mul(S_MAX, S_TWO, NearestEven), (S_INF, OF | NX));
    // Overflow under RTZ saturates at the largest finite value.
    assert_eq!(f32_mul(S_MAX, S_TWO, TowardZero), (S_MAX, OF | NX));
    assert_eq!(f32_add(S_ONE, S_TWO, NearestEven), (S_THREE, 0));
    assert_eq!(f32_mul(S_MIN_SUBNORMAL, s(0.5), NearestEven), (0, UF | NX));
    assert_eq!(
        f32_mul(S_MIN_SUBNORMAL, s(0.5), Up),
        (S_MIN_SUBNORMAL, UF | NX)
    );
    // Exact subnormal results raise nothing.
    assert_eq!(f32_mul(S_MIN_NORMAL, s(0.5), NearestEven), (0x0040_0000, 0));
    assert_eq!(
        f64_mul(D_MIN_SUBNORMAL, D_ONE, NearestEven),
        (D_MIN_SUBNORMAL, 0)
    );
    // Inf arithmetic is exact.
    assert_eq!(f32_add(S_INF, S_ONE, NearestEven), (S_INF, 0));
    assert_eq!(f64_mul(D_INF, d(-3.0), NearestEven), (D_NEG_INF, 0));
}

#[test]
fn tininess_is_detected_after_rounding() {
    // (1 - 2^-23) * (1 + 2^-23) * 2^-126 = (1 - 2^-46) * 2^-126: below the smallest normal, but
    // rounding to 24 bits with an unbounded exponent gives 2^-126, so RISC-V raises no UF.
    let a = 0x3f7f_fffe;
    let b = 0x0080_0001;
    assert_eq!(f32_mul(a, b, NearestEven), (S_MIN_NORMAL, NX));
    assert_eq!(f32_mul(a, b, TowardZero), (S_MAX_SUBNORMAL, UF | NX));
}

#[test]
fn subnormals_are_handled_exactly() {
    assert_eq!(
        f32_add(S_MIN_SUBNORMAL, S_MIN_SUBNORMAL, NearestEven),
        (2, 0)
    );
    assert_eq!(
        f32_add(S_MAX_SUBNORMAL, S_MIN_SUBNORMAL, NearestEven),
        (S_MIN_NORMAL, 0)
    );
    assert_eq!(f32_to_f64(S_MIN_SUBNORMAL), (d(2f64.powi(-149)), 0));
    // Three quarters of the smallest single subnormal rounds up to it.
    assert_eq!(
        f64_to_f32(d(2f64.powi(-150) * 1.5), NearestEven),
        (S_MIN_SUBNORMAL, UF | NX)
    );
    assert_eq!(f32_classify(S_MAX_SUBNORMAL), 1 << 5);
    assert_eq!(f64_classify(D_MIN_SUBNORMAL | D_NEG_ZERO), 1 << 2);
}

#[test]
fn min_max_signed_zero_and_nans() {
    assert_eq!(f32_min(0, S_NEG_ZERO), (S_NEG_ZERO, 0));
    assert_eq!(f32_min(S_NEG_ZERO, 0), (S_NEG_ZERO, 0));
    assert_eq!(f32_max(0, S_NEG_ZERO), (0, 0));
    assert_eq!(f32_max(S_NEG_ZERO, 0), (0, 0));
    assert_eq!(f32_min(S_QNAN_PAYLOAD, S_ONE), (S_ONE, 0));
    assert_eq!(f32_max(S_ONE, S_QNAN_PAYLOAD), (S_ONE, 0));
    assert_eq!(f32_min(S_SNAN, S_ONE), (S_ONE, NV));
    assert_eq!(f32_max(S_NEG_INF, S_SNAN), (S_NEG_INF, NV));
    assert_eq!(f32_min(S_QNAN_PAYLOAD, S_SNAN), (S_QNAN, NV));
    assert_eq!(f32_max(S_QNAN_PAYLOAD, S_QNAN_PAYLOAD), (S_QNAN, 0));
    assert_eq!(f32_min(s(-2.0), s(1.0)), (s(-2.0), 0));
    assert_eq!(f32_max(s(-2.0), s(-3.0)), (s(-2.0), 0));
    assert_eq!(f64_min(0, D_NEG_ZERO), (D_NEG_ZERO, 0));
    assert_eq!(f64_max(D_NEG_ZERO, 0), (0, 0));
    assert_eq!(f64_min(D_SNAN, D_INF), (D_INF, NV));
    assert_eq!(f64_max(D_SNAN, D_QNAN_PAYLOAD), (F64_CANONICAL_NAN, NV));
    assert_eq!(f64_max(d(1e300), d(-1e300)), (d(1e300), 0));
}

#[test]
fn comparisons_signal_per_spec() {
    assert_eq!(f32_eq(0, S_NEG_ZERO), (1, 0));
    assert_eq!(f32_lt(S_NEG_ZERO, 0), (0, 0));
    assert_eq!(f32_le(0, S_NEG_ZERO), (1, 0));
    assert_eq!(f32_eq(S_QNAN, S_QNAN), (0, 0));
    assert_eq!(f32_eq(S_SNAN, S_ONE), (0, NV));
    assert_eq!(f32_lt(S_QNAN, S_ONE), (0, NV));
    assert_eq!(f32_le(S_ONE, S_QNAN), (0, NV));
    assert_eq!(f32_lt(s(-1.0), s(-0.5)), (1, 0));
    assert_eq!(f32_lt(S_NEG_INF, S_INF), (1, 0));
    assert_eq!(f64_eq(D_ONE, D_ONE), (1, 0));
    assert_eq!(f64_eq(D_QNAN_PAYLOAD, D_ONE), (0, 0));
    assert_eq!(f64_le(D_QNAN_PAYLOAD, D_ONE), (0, NV));
    assert_eq!(f64_lt(d(-1e-300), D_NEG_ZERO), (1, 0));
}

#[test]
fn classify_every_class() {
    let singles = [
        (S_NEG_INF, 0),
        (s(-1.0), 1),
        (S_MIN_SUBNORMAL | 0x8000_0000, 2),
        (S_NEG_ZERO, 3),
        (0, 4),
        (S_MIN_SUBNORMAL, 5),
        (S_ONE, 6),
        (S_INF, 7),
        (S_SNAN, 8),
        (S_QNAN_PAYLOAD | 0x8000_0000, 9),
    ];
    for (value, bit) in singles {
        assert_eq!(f32_classify(value), 1 << bit, "{value:#x}");
    }
    let doubles = [
        (D_NEG_INF, 0),
        (d(-1.0), 1),
        (D_MIN_SUBNORMAL | D_NEG_ZERO, 2),
        (D_NEG_ZERO, 3),
        (0, 4),
        (D_MIN_SUBNORMAL, 5),
        (D_ONE, 6),
        (D_INF, 7),
        (D_SNAN, 8),
        (F64_CANONICAL_NAN, 9),
    ];
    for (value, bit) in doubles {
        assert_eq!(f64_classify(value), 1 << bit, "{value:#x}");
    }
}

#[test]
fn float_to_int_saturation_table() {
    const I32_MAX: u32 = i32::MAX as u32;
    const I32_MIN: u32 = i32::MIN as u32;
    let rne = NearestEven;
    // (input, fcvt.w result, fcvt.w flags, fcvt.wu result, fcvt.wu flags)
    let singles = [
        (S_QNAN, I32_MAX, NV, u32::MAX, NV),
        (S_SNAN | 0x8000_0000, I32_MAX, NV, u32::MAX, NV),
        (S_INF, I32_MAX, NV, u32::MAX, NV),
        (S_NEG_INF, I32_MIN, NV, 0, NV),
        (s(2147483648.0), I32_MAX, NV, 0x8000_0000, 0),
        (s(-2147483648.0), I32_MIN, 0, 0, NV),
        (s(-2147483904.0), I32_MIN, NV, 0, NV),
        (s(4294967296.0), I32_MAX, NV, u32::MAX, NV),
        (s(4294967040.0), I32_MAX, NV, 0xffff_ff00, 0),
        (s(-1.0), u32::MAX, 0, 0, NV),
        // Rounds to -0: in range for wu, so only inexact.
        (s(-0.25), 0, NX, 0, NX),
        (s(1.5), 2, NX, 2, NX),
    ];
    for (input, w, w_flags, wu, wu_flags) in singles {
        assert_eq!(f32_to_i32(input, rne), (w, w_flags), "w.s {input:#x}");
        assert_eq!(f32_to_u32(input, rne), (wu, wu_flags), "wu.s {input:#x}");
    }
    let doubles = [
        (F64_CANONICAL_NAN, I32_MAX, NV, u32::MAX, NV),
        (D_SNAN, I32_MAX, NV, u32::MAX, NV),
        (D_INF, I32_MAX, NV, u32::MAX, NV),
        (D_NEG_INF, I32_MIN, NV, 0, NV),
        // 2^31 - 0.5 rounds (to even) up to 2^31: out of range for w.
        (d(2147483647.5), I32_MAX, NV, 0x8000_0000, NX),
        (d(2147483647.4), I32_MAX, NX, I32_MAX, NX),
        (d(-2147483648.5), I32_MIN, NX, 0, NV),
        (d(-2147483649.0), I32_MIN, NV, 0, NV),
        (d(4294967295.5), I32_MAX, NV, u32::MAX, NV),
        (d(4294967295.4), I32_MAX, NV, u32::MAX, NX),
        (d(-0.5), 0, NX, 0, NX),
        (d(-1e300), I32_MIN, NV, 0, NV),
    ];
    for (input, w, w_flags, wu, wu_flags) in doubles {
        assert_eq!(f64_to_i32(input, rne), (w, w_flags), "w.d {input:#x}");
        assert_eq!(f64_to_u32(input, rne), (wu, wu_flags), "wu.d {input:#x}");
    }
    // Directed rounding decides whether 2^31 - 0.5 fits.
    assert_eq!(f64_to_i32(d(2147483647.5), TowardZero), (I32_MAX, NX));
    assert_eq!(f64_to_i32(d(2147483647.5), Up), (I32_MAX, NV));
    assert_eq!(f64_to_u32(d(4294967295.5), Down), (u32::MAX, NX));
}

#[test]
fn int_to_float_conversions() {
    assert_eq!(i32_to_f32(u32::MAX, NearestEven), (s(-1.0), 0));
    assert_eq!(u32_to_f32(u32::MAX, NearestEven), (s(4294967296.0), NX));
    assert_eq!(u32_to_f32(u32::MAX, TowardZero), (s(4294967040.0), NX));
    assert_eq!(i32_to_f32(16_777_217, NearestEven), (s(16_777_216.0), NX));
    assert_eq!(i32_to_f32(16_777_217, Up), (s(16_777_218.0), NX));
    assert_eq!(i32_to_f64(0x8000_0000), (d(-2147483648.0), 0));
    assert_eq!(u32_to_f64(0x8000_0000), (d(2147483648.0), 0));
    assert_eq!(f64_to_f32(d(1.0 + 2f64.powi(-30)), Up), (S_ONE + 1, NX));
    assert_eq!(f64_to_f32(d(1e300), NearestEven), (S_INF, OF | NX));
    assert_eq!(f64_to_f32(d(1e300), Down), (S_MAX, OF | NX));
}

#[test]
fn fused_multiply_add_rules() {
    let rne = NearestEven;
    // inf * 0 + qNaN: NV even though the addend is a quiet NaN.
    assert_eq!(f32_mul_add(S_INF, 0, S_QNAN, rne), (S_QNAN, NV));
    assert_eq!(f32_mul_add(0, S_NEG_INF, S_QNAN_PAYLOAD, rne), (S_QNAN, NV));
    assert_eq!(
        f64_mul_add(D_INF, 0, F64_CANONICAL_NAN, rne),
        (F64_CANONICAL_NAN, NV)
    );
    // A quiet NaN operand alone raises nothing; a signaling one raises NV.
    assert_eq!(f32_mul_add(S_QNAN, S_ONE, S_ONE, rne), (S_QNAN, 0));
    assert_eq!(f32_mul_add(S_ONE, S_ONE, S_SNAN, rne), (S_QNAN, NV));
    assert_eq!(f32_mul_add(S_INF, S_ONE, S_NEG_INF, rne), (S_QNAN, NV));
    // Single rounding: (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly; rounding the product first
    // would lose the 2^-24 (a tie, to even) and give 2^-11.
    let a = S_ONE + (1 << 11);
    assert_eq!(
        f32_mul_add(a, a, s(-1.0), rne),
        (s(2f32.powi(-11) + 2f32.powi(-24)), 0)
    );
    // Sign variants: 2*3 with addend 1.
    assert_eq!(f32_mul_sub(S_TWO, S_THREE, S_ONE, rne), (s(5.0), 0));
    assert_eq!(f32_neg_mul_sub(S_TWO, S_THREE, S_ONE, rne), (s(-5.0), 0));
    assert_eq!(f32_neg_mul_add(S_TWO, S_THREE, S_ONE, rne), (s(-7.0), 0));
    assert_eq!(f64_mul_sub(d(2.0), d(3.0), D_ONE, rne), (d(5.0), 0));
    assert_eq!(f64_neg_mul_sub(d(2.0), d(3.0), D_ONE, rne), (d(-5.0), 0));
    assert_eq!(f64_neg_mul_add(d(2.0), d(3.0), D_ONE, rne), (d(-7.0), 0));
    // An exact zero sum is -0 under RDN and +0 otherwise; negating a rounded result instead of
    // the inputs would get fnmadd/fnmsub wrong here.
    assert_eq!(
        f32_neg_mul_add(S_ONE, S_ONE, s(-1.0), Down),
        (S_NEG_ZERO, 0)
    );
    assert_eq!(f32_neg_mul_add(S_ONE, S_ONE, s(-1.0), NearestEven), (0, 0));
    assert_eq!(f32_neg_mul_sub(S_ONE, S_ONE, S_ONE, Down), (S_NEG_ZERO, 0));
    assert_eq!(f32_neg_mul_sub(S_ONE, S_ONE, S_ONE, Up), (0, 0));
    assert_eq!(
        f64_neg_mul_add(D_ONE, D_ONE, d(-1.0), Down),
        (D_NEG_ZERO, 0)
    );
    // Directed rounding applies to the negated value: -(1 + 2^-22 + 2^-46) under RUP rounds
    // to -(1 + 2^-22); negating a rounded-up product would give -(1 + 2^-22 + 2^-23).
    let a = S_ONE + 1;
    assert_eq!(f32_neg_mul_add(a, a, 0, Up), (0xbf80_0002, NX));
    assert_eq!(f32_neg_mul_sub(a, a, 0, Down), (0xbf80_0003, NX));
}

#[test]
fn sign_injection_is_bitwise() {
    assert_eq!(
        f32_sign_inject(S_QNAN_PAYLOAD, S_NEG_ZERO),
        S_QNAN_PAYLOAD | 0x8000_0000
    );
    assert_eq!(f32_sign_inject_negated(S_ONE, S_ONE), S_ONE | 0x8000_0000);
    assert_eq!(f32_sign_inject_xor(S_ONE | 0x8000_0000, S_NEG_INF), S_ONE);
    assert_eq!(f64_sign_inject(D_SNAN, D_NEG_ZERO), D_SNAN | D_NEG_ZERO);
    assert_eq!(f64_sign_inject_negated(D_ONE, D_NEG_ZERO), D_ONE);
    assert_eq!(f64_sign_inject_xor(D_ONE, D_NEG_INF), D_ONE | D_NEG_ZERO);
}

#[test]
fn nan_boxing_of_operands_and_results() {
    assert_eq!(unbox(nan_box(S_ONE)), S_ONE);
    assert_eq!(unbox(0x0000_0000_3f80_0000), S_QNAN);
    assert_eq!(unbox(0xffff_fffe_3f80_0000), S_QNAN);

    let mut hart = fp_hart();
    hart.f[1] = 0x0000_0000_3f80_0000; // 1.0, improperly boxed
    hart.f[2] = nan_box(S_ONE);
    execute(&mut hart, &insn(Op::FaddS, 3, 1, 2, 0, 0)).unwrap();
    assert_eq!(hart.f[3], nan_box(S_QNAN));
    assert_eq!(hart.fflags, 0);

    // fsgnj.s sees the improper box as the canonical NaN, then injects the sign.
    hart.f[2] = nan_box(S_NEG_ZERO);
    execute(&mut hart, &insn(Op::FsgnjS, 4, 1, 2, 0, 0)).unwrap();
    assert_eq!(hart.f[4], nan_box(S_QNAN | 0x8000_0000));
    // A double in f1 read as a single is a canonical NaN too; fclass says quiet NaN.
    hart.f[1] = D_ONE;
    execute(&mut hart, &insn(Op::FclassS, 5, 1, 0, 0, 0)).unwrap();
    assert_eq!(hart.x[5], 1 << 9);

    // fmv.x.w returns the low half unchecked; fmv.w.x boxes.
    hart.f[1] = 0x1234_5678_7f80_0001;
    execute(&mut hart, &insn(Op::FmvXW, 6, 1, 0, 0, 0)).unwrap();
    assert_eq!(hart.x[6], 0x7f80_0001);
    hart.x[7] = 0x7f80_0001;
    execute(&mut hart, &insn(Op::FmvWX, 8, 7, 0, 0, 0)).unwrap();
    assert_eq!(hart.f[8], 0xffff_ffff_7f80_0001);

    // Single results are always boxed, including conversions.
    hart.f[9] = d(1.5);
    execute(&mut hart, &insn(Op::FcvtSD, 10, 9, 0, 0, 0)).unwrap();
    assert_eq!(hart.f[10], nan_box(s(1.5)));
    // fcvt.d.s of an improper box is the canonical double NaN (no NV: it reads as quiet).
    hart.fflags = 0;
    execute(&mut hart, &insn(Op::FcvtDS, 11, 9, 0, 0, 0)).unwrap();
    assert_eq!((hart.f[11], hart.fflags), (F64_CANONICAL_NAN, 0));
}

#[test]
fn integer_destinations_and_x0() {
    let mut hart = fp_hart();
    hart.f[1] = nan_box(s(-7.5));
    execute(&mut hart, &insn(Op::FcvtWS, 3, 1, 0, 0, TowardZero as u8)).unwrap();
    assert_eq!(hart.x[3], (-7i32) as u32);
    assert_eq!(hart.fflags, NX);
    // x0 stays zero, but the flags still accrue.
    hart.fflags = 0;
    hart.f[2] = nan_box(S_QNAN);
    execute(&mut hart, &insn(Op::FltS, 0, 1, 2, 0, 0)).unwrap();
    assert_eq!(hart.x[0], 0);
    assert_eq!(hart.fflags, NV);
    // Integer sources.
    hart.x[4] = (-3i32) as u32;
    execute(&mut hart, &insn(Op::FcvtDW, 5, 4, 0, 0, 0)).unwrap();
    assert_eq!(hart.f[5], d(-3.0));
    execute(&mut hart, &insn(Op::FcvtSWu, 6, 4, 0, 0, TowardZero as u8)).unwrap();
    assert_eq!(hart.f[6], nan_box(s(4294967040.0)));
}

#[test]
fn flags_accrue_and_dirty_fs() {
    let mut hart = fp_hart();
    hart.f[1] = nan_box(S_ONE);
    hart.f[2] = nan_box(0);
    // A compare that raises nothing and writes only x: FS stays clean.
    execute(&mut hart, &insn(Op::FeqS, 3, 1, 1, 0, 0)).unwrap();
    assert_eq!(hart.x[3], 1);
    assert!(!fs_is_dirty(&hart));
    execute(&mut hart, &insn(Op::FmvXW, 3, 1, 0, 0, 0)).unwrap();
    assert!(!fs_is_dirty(&hart));
    // A compare that raises NV dirties FS.
    hart.f[4] = nan_box(S_SNAN);
    execute(&mut hart, &insn(Op::FeqS, 3, 4, 1, 0, 0)).unwrap();
    assert_eq!(hart.fflags, NV);
    assert!(fs_is_dirty(&hart));
    // Flags accrue (OR) across instructions.
    execute(&mut hart, &insn(Op::FdivS, 5, 1, 2, 0, 0)).unwrap();
    assert_eq!(hart.fflags, NV | DZ);
    // Writing an f register dirties FS even without flags.
    let mut hart = fp_hart();
    hart.f[1] = nan_box(S_ONE);
    execute(&mut hart, &insn(Op::FsgnjS, 2, 1, 1, 0, 0)).unwrap();
    assert!(fs_is_dirty(&hart));
    assert_eq!(hart.fflags, 0);
}

#[test]
fn dynamic_rounding_uses_frm() {
    let mut hart = fp_hart();
    hart.f[1] = nan_box(S_ONE);
    hart.f[2] = nan_box(S_THREE);
    hart.frm = Up as u8;
    execute(&mut hart, &insn(Op::FdivS, 3, 1, 2, 0, RM_DYNAMIC)).unwrap();
    assert_eq!(hart.f[3], nan_box(0x3eaa_aaab));
    // A static rm overrides frm.
    execute(&mut hart, &insn(Op::FdivS, 3, 1, 2, 0, TowardZero as u8)).unwrap();
    assert_eq!(hart.f[3], nan_box(0x3eaa_aaaa));
}

/// A snapshot of everything `execute` may change.
fn fp_state(hart: &Hart) -> ([u64; 32], [u32; 32], u8, u8, u32) {
    (hart.f, hart.x, hart.fflags, hart.frm, hart.csr.mstatus)
}

#[test]
fn reserved_rounding_modes_are_illegal_without_state_change() {
    let rounding_ops = [
        Op::FaddS,
        Op::FmaddD,
        Op::FsqrtS,
        Op::FcvtWS,
        Op::FcvtSW,
        Op::FcvtSD,
        Op::FcvtDS,
        Op::FcvtDW,
        Op::FcvtDWu,
        Op::FcvtWuD,
    ];
    for op in rounding_ops {
        for (rm, frm) in [
            (5, 0),
            (6, 0),
            (RM_DYNAMIC, 5),
            (RM_DYNAMIC, 6),
            (RM_DYNAMIC, 7),
        ] {
            let mut hart = fp_hart();
            hart.f[1] = nan_box(S_SNAN);
            hart.f[2] = nan_box(S_ONE);
            hart.x[1] = 5;
            hart.frm = frm;
            let before = fp_state(&hart);
            let bad = insn(op, 1, 1, 2, 2, rm);
            assert_eq!(
                execute(&mut hart, &bad),
                Err(Trap::illegal(0xdead_beef)),
                "{op:?}"
            );
            assert_eq!(fp_state(&hart), before, "{op:?} rm {rm} frm {frm}");
        }
    }
    // Ops without a rounding mode ignore the field (funct3 selects the operation there).
    let mut hart = fp_hart();
    hart.frm = 7;
    hart.f[1] = nan_box(S_ONE);
    assert_eq!(
        execute(&mut hart, &insn(Op::FminS, 2, 1, 1, 0, RM_DYNAMIC)),
        Ok(())
    );
}

#[test]
fn fp_disabled_is_illegal_without_state_change() {
    let mut hart = fp_hart();
    hart.csr.mstatus &= !(MSTATUS_FS | MSTATUS_SD);
    hart.f[1] = nan_box(S_SNAN);
    hart.x[2] = 9;
    let before = fp_state(&hart);
    for op in [Op::FaddS, Op::FmvXW, Op::FmvWX, Op::FclassD, Op::FeqS] {
        assert_eq!(
            execute(&mut hart, &insn(op, 3, 1, 1, 1, 0)),
            Err(Trap::illegal(0xdead_beef))
        );
        assert_eq!(fp_state(&hart), before, "{op:?}");
    }
}

#[test]
fn non_fp_ops_are_rejected() {
    let mut hart = fp_hart();
    for op in [Op::Add, Op::Flw, Op::Fsd] {
        assert!(execute(&mut hart, &insn(op, 1, 1, 1, 1, 0)).is_err());
    }
}
