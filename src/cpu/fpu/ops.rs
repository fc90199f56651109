//! Pure F/D operations on raw IEEE-754 bit patterns.
//!
//! Every function takes its operands as bits (single-precision operands already unboxed) and,
//! where the result can round, a [`RoundingMode`]; it returns the result bits and the exception
//! flags that this one operation raised, in fflags encoding (`NV DZ OF UF NX`, bit 4 .. bit 0).
//! Nothing here touches a hart, so the interpreter and the JIT tiers' helpers share them.
//!
//! Rounding arithmetic and conversions go through Berkeley SoftFloat 3 built with its RISC-V
//! specialisation (canonical NaN results, RISC-V's saturating float-to-integer conversions,
//! tininess detected after rounding). Sign injection, min/max, comparisons and classification
//! are plain bit manipulation.
//!
//! SoftFloat keeps its rounding mode and exception flags in C `_Thread_local` variables
//! (softfloat-sys builds with `THREAD_LOCAL=_Thread_local` and exposes them through small C
//! accessors), so concurrent callers on different threads cannot interfere and no lock is
//! needed. `softfloat()` sets the mode and clears the flags before each operation and reads the
//! flags right after it, on the same thread, so nothing can run in between.

use super::RoundingMode;
use softfloat_sys as sf;

/// The canonical single-precision NaN RISC-V produces for every NaN result.
pub(crate) const F32_CANONICAL_NAN: u32 = 0x7fc0_0000;
/// The canonical double-precision NaN.
pub(crate) const F64_CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;

/// The five fflags bits; SoftFloat's flag bits use the same encoding.
const FLAGS_MASK: u8 = 0x1f;
/// fflags invalid-operation bit (same value as SoftFloat's `softfloat_flag_invalid`).
const NV: u8 = crate::cpu::fflags::NV;

/// The mode passed to SoftFloat for conversions that are always exact, where it cannot matter.
const EXACT: RoundingMode = RoundingMode::NearestEven;

const F32_SIGN: u32 = 1 << 31;
const F64_SIGN: u64 = 1 << 63;

/// Runs one SoftFloat operation under `rm` and returns its result with the flags it raised.
#[inline]
fn softfloat<T>(rm: RoundingMode, operation: impl FnOnce() -> T) -> (T, u8) {
    // SAFETY: the helpers only write SoftFloat's rounding mode and exception flags, which are
    // `_Thread_local` C variables (see the module docs): no other thread can observe them.
    unsafe {
        sf::softfloat_roundingMode_write_helper(rm as u8);
        sf::softfloat_exceptionFlags_write_helper(0);
    }
    let result = operation();
    // SAFETY: reads this thread's SoftFloat exception flags; see above.
    let flags = unsafe { sf::softfloat_exceptionFlags_read_helper() };
    (result, flags & FLAGS_MASK)
}

fn f32(bits: u32) -> sf::float32_t {
    sf::float32_t { v: bits }
}

fn f64(bits: u64) -> sf::float64_t {
    sf::float64_t { v: bits }
}

// The `unsafe` blocks below call SoftFloat functions: pure C functions on plain-data values that
// touch no memory other than this thread's SoftFloat state.

/// fadd.s
pub(crate) fn f32_add(a: u32, b: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values (see above).
    softfloat(rm, || unsafe { sf::f32_add(f32(a), f32(b)) }.v)
}

/// fsub.s
pub(crate) fn f32_sub(a: u32, b: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f32_sub(f32(a), f32(b)) }.v)
}

/// fmul.s
pub(crate) fn f32_mul(a: u32, b: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f32_mul(f32(a), f32(b)) }.v)
}

/// fdiv.s
pub(crate) fn f32_div(a: u32, b: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f32_div(f32(a), f32(b)) }.v)
}

/// fsqrt.s
pub(crate) fn f32_sqrt(a: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f32_sqrt(f32(a)) }.v)
}

/// fmadd.s: `a * b + c` with a single rounding. SoftFloat raises NV for `inf * 0 + c` even when
/// `c` is a quiet NaN, as the RISC-V spec requires.
pub(crate) fn f32_mul_add(a: u32, b: u32, c: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f32_mulAdd(f32(a), f32(b), f32(c)) }.v)
}

/// fmsub.s: `a * b - c`, fused.
pub(crate) fn f32_mul_sub(a: u32, b: u32, c: u32, rm: RoundingMode) -> (u32, u8) {
    f32_mul_add(a, b, c ^ F32_SIGN, rm)
}

/// fnmsub.s: `-(a * b) + c`, fused (the sign flips the input, so directed rounding stays right).
pub(crate) fn f32_neg_mul_sub(a: u32, b: u32, c: u32, rm: RoundingMode) -> (u32, u8) {
    f32_mul_add(a ^ F32_SIGN, b, c, rm)
}

/// fnmadd.s: `-(a * b) - c`, fused.
pub(crate) fn f32_neg_mul_add(a: u32, b: u32, c: u32, rm: RoundingMode) -> (u32, u8) {
    f32_mul_add(a ^ F32_SIGN, b, c ^ F32_SIGN, rm)
}

/// fcvt.w.s: saturates out-of-range and NaN inputs with NV; NX when in range but inexact.
pub(crate) fn f32_to_i32(a: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    let (value, flags) = softfloat(rm, || unsafe { sf::f32_to_i32(f32(a), rm as u8, true) });
    // SoftFloat returns an int_fast32_t already saturated to the i32 range.
    (value as i32 as u32, flags)
}

/// fcvt.wu.s: like [`f32_to_i32`] with the unsigned range (negative results saturate to 0).
pub(crate) fn f32_to_u32(a: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    let (value, flags) = softfloat(rm, || unsafe { sf::f32_to_ui32(f32(a), rm as u8, true) });
    (value as u32, flags)
}

/// fcvt.s.w
pub(crate) fn i32_to_f32(a: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::i32_to_f32(a as i32) }.v)
}

/// fcvt.s.wu
pub(crate) fn u32_to_f32(a: u32, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::ui32_to_f32(a) }.v)
}

/// fadd.d
pub(crate) fn f64_add(a: u64, b: u64, rm: RoundingMode) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f64_add(f64(a), f64(b)) }.v)
}

/// fsub.d
pub(crate) fn f64_sub(a: u64, b: u64, rm: RoundingMode) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f64_sub(f64(a), f64(b)) }.v)
}

/// fmul.d
pub(crate) fn f64_mul(a: u64, b: u64, rm: RoundingMode) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f64_mul(f64(a), f64(b)) }.v)
}

/// fdiv.d
pub(crate) fn f64_div(a: u64, b: u64, rm: RoundingMode) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f64_div(f64(a), f64(b)) }.v)
}

/// fsqrt.d
pub(crate) fn f64_sqrt(a: u64, rm: RoundingMode) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f64_sqrt(f64(a)) }.v)
}

/// fmadd.d: `a * b + c` with a single rounding (NV for `inf * 0 + qNaN` as well).
pub(crate) fn f64_mul_add(a: u64, b: u64, c: u64, rm: RoundingMode) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f64_mulAdd(f64(a), f64(b), f64(c)) }.v)
}

/// fmsub.d: `a * b - c`, fused.
pub(crate) fn f64_mul_sub(a: u64, b: u64, c: u64, rm: RoundingMode) -> (u64, u8) {
    f64_mul_add(a, b, c ^ F64_SIGN, rm)
}

/// fnmsub.d: `-(a * b) + c`, fused.
pub(crate) fn f64_neg_mul_sub(a: u64, b: u64, c: u64, rm: RoundingMode) -> (u64, u8) {
    f64_mul_add(a ^ F64_SIGN, b, c, rm)
}

/// fnmadd.d: `-(a * b) - c`, fused.
pub(crate) fn f64_neg_mul_add(a: u64, b: u64, c: u64, rm: RoundingMode) -> (u64, u8) {
    f64_mul_add(a ^ F64_SIGN, b, c ^ F64_SIGN, rm)
}

/// fcvt.w.d: saturating, NV when out of range or NaN, NX when inexact.
pub(crate) fn f64_to_i32(a: u64, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    let (value, flags) = softfloat(rm, || unsafe { sf::f64_to_i32(f64(a), rm as u8, true) });
    (value as i32 as u32, flags)
}

/// fcvt.wu.d
pub(crate) fn f64_to_u32(a: u64, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    let (value, flags) = softfloat(rm, || unsafe { sf::f64_to_ui32(f64(a), rm as u8, true) });
    (value as u32, flags)
}

/// fcvt.d.w (always exact).
pub(crate) fn i32_to_f64(a: u32) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(EXACT, || unsafe { sf::i32_to_f64(a as i32) }.v)
}

/// fcvt.d.wu (always exact).
pub(crate) fn u32_to_f64(a: u32) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(EXACT, || unsafe { sf::ui32_to_f64(a) }.v)
}

/// fcvt.s.d: rounds per `rm`; a NaN becomes the canonical single NaN (NV if signaling).
pub(crate) fn f64_to_f32(a: u64, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f64_to_f32(f64(a)) }.v)
}

/// fcvt.d.s: exact; a NaN becomes the canonical double NaN (NV if signaling).
pub(crate) fn f32_to_f64(a: u32) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(EXACT, || unsafe { sf::f32_to_f64(f32(a)) }.v)
}

/// The bit layout of one binary format, for the operations done without SoftFloat. Values are
/// held in a `u64` (singles zero-extended).
struct Format {
    sign: u64,
    exponent: u64,
    quiet: u64,
    canonical_nan: u64,
}

const SINGLE: Format = Format {
    sign: F32_SIGN as u64,
    exponent: 0x7f80_0000,
    quiet: 0x0040_0000,
    canonical_nan: F32_CANONICAL_NAN as u64,
};

const DOUBLE: Format = Format {
    sign: F64_SIGN,
    exponent: 0x7ff0_0000_0000_0000,
    quiet: 0x0008_0000_0000_0000,
    canonical_nan: F64_CANONICAL_NAN,
};

impl Format {
    fn fraction(&self) -> u64 {
        (self.quiet << 1) - 1
    }

    fn magnitude(&self) -> u64 {
        self.sign - 1
    }

    fn is_nan(&self, x: u64) -> bool {
        x & self.magnitude() > self.exponent
    }

    fn is_signaling_nan(&self, x: u64) -> bool {
        self.is_nan(x) && x & self.quiet == 0
    }

    fn is_zero(&self, x: u64) -> bool {
        x & self.magnitude() == 0
    }

    /// A key whose unsigned order is the numeric order of non-NaN values, with -0 < +0.
    fn order_key(&self, x: u64) -> u64 {
        if x & self.sign != 0 {
            !x & (self.sign | self.magnitude())
        } else {
            x | self.sign
        }
    }

    /// fmin/fmax (IEEE 754-2019 minimumNumber/maximumNumber): a NaN operand yields the other
    /// operand, two NaNs the canonical NaN; NV only for a signaling NaN.
    fn min_max(&self, a: u64, b: u64, want_max: bool) -> (u64, u8) {
        let flags = if self.is_signaling_nan(a) || self.is_signaling_nan(b) {
            NV
        } else {
            0
        };
        let result = match (self.is_nan(a), self.is_nan(b)) {
            (true, true) => self.canonical_nan,
            (true, false) => b,
            (false, true) => a,
            (false, false) => {
                let a_first = if want_max {
                    self.order_key(a) >= self.order_key(b)
                } else {
                    self.order_key(a) <= self.order_key(b)
                };
                if a_first {
                    a
                } else {
                    b
                }
            }
        };
        (result, flags)
    }

    /// feq: quiet comparison (NV only for a signaling NaN).
    fn equal(&self, a: u64, b: u64) -> (u32, u8) {
        if self.is_nan(a) || self.is_nan(b) {
            let flags = if self.is_signaling_nan(a) || self.is_signaling_nan(b) {
                NV
            } else {
                0
            };
            return (0, flags);
        }
        let equal = a == b || (self.is_zero(a) && self.is_zero(b));
        (equal as u32, 0)
    }

    /// flt (`or_equal` false) and fle: signaling comparisons (NV for any NaN).
    fn less(&self, a: u64, b: u64, or_equal: bool) -> (u32, u8) {
        if self.is_nan(a) || self.is_nan(b) {
            return (0, NV);
        }
        let both_zero = self.is_zero(a) && self.is_zero(b);
        let (ka, kb) = (self.order_key(a), self.order_key(b));
        let result = if or_equal {
            ka <= kb || both_zero
        } else {
            ka < kb && !both_zero
        };
        (result as u32, 0)
    }

    /// fclass: one of ten bits (-inf, -normal, -subnormal, -0, +0, +subnormal, +normal, +inf,
    /// signaling NaN, quiet NaN).
    fn classify(&self, x: u64) -> u32 {
        let negative = x & self.sign != 0;
        let exponent = x & self.exponent;
        let fraction = x & self.fraction();
        let bit = if exponent == self.exponent {
            match (fraction, negative) {
                (0, true) => 0,
                (0, false) => 7,
                _ if fraction & self.quiet != 0 => 9,
                _ => 8,
            }
        } else if exponent == 0 {
            match (fraction, negative) {
                (0, true) => 3,
                (0, false) => 4,
                (_, true) => 2,
                (_, false) => 5,
            }
        } else if negative {
            1
        } else {
            6
        };
        1 << bit
    }
}

/// fsgnj.s: magnitude of `a`, sign of `b`.
pub(crate) fn f32_sign_inject(a: u32, b: u32) -> u32 {
    (a & !F32_SIGN) | (b & F32_SIGN)
}

/// fsgnjn.s: magnitude of `a`, opposite sign of `b`.
pub(crate) fn f32_sign_inject_negated(a: u32, b: u32) -> u32 {
    (a & !F32_SIGN) | (!b & F32_SIGN)
}

/// fsgnjx.s: `a` with its sign xor the sign of `b`.
pub(crate) fn f32_sign_inject_xor(a: u32, b: u32) -> u32 {
    a ^ (b & F32_SIGN)
}

/// fmin.s
pub(crate) fn f32_min(a: u32, b: u32) -> (u32, u8) {
    let (result, flags) = SINGLE.min_max(a.into(), b.into(), false);
    (result as u32, flags)
}

/// fmax.s
pub(crate) fn f32_max(a: u32, b: u32) -> (u32, u8) {
    let (result, flags) = SINGLE.min_max(a.into(), b.into(), true);
    (result as u32, flags)
}

/// feq.s
pub(crate) fn f32_eq(a: u32, b: u32) -> (u32, u8) {
    SINGLE.equal(a.into(), b.into())
}

/// flt.s
pub(crate) fn f32_lt(a: u32, b: u32) -> (u32, u8) {
    SINGLE.less(a.into(), b.into(), false)
}

/// fle.s
pub(crate) fn f32_le(a: u32, b: u32) -> (u32, u8) {
    SINGLE.less(a.into(), b.into(), true)
}

/// fclass.s
pub(crate) fn f32_classify(a: u32) -> u32 {
    SINGLE.classify(a.into())
}

/// fsgnj.d
pub(crate) fn f64_sign_inject(a: u64, b: u64) -> u64 {
    (a & !F64_SIGN) | (b & F64_SIGN)
}

/// fsgnjn.d
pub(crate) fn f64_sign_inject_negated(a: u64, b: u64) -> u64 {
    (a & !F64_SIGN) | (!b & F64_SIGN)
}

/// fsgnjx.d
pub(crate) fn f64_sign_inject_xor(a: u64, b: u64) -> u64 {
    a ^ (b & F64_SIGN)
}

/// fmin.d
pub(crate) fn f64_min(a: u64, b: u64) -> (u64, u8) {
    DOUBLE.min_max(a, b, false)
}

/// fmax.d
pub(crate) fn f64_max(a: u64, b: u64) -> (u64, u8) {
    DOUBLE.min_max(a, b, true)
}

/// feq.d
pub(crate) fn f64_eq(a: u64, b: u64) -> (u32, u8) {
    DOUBLE.equal(a, b)
}

/// flt.d
pub(crate) fn f64_lt(a: u64, b: u64) -> (u32, u8) {
    DOUBLE.less(a, b, false)
}

/// fle.d
pub(crate) fn f64_le(a: u64, b: u64) -> (u32, u8) {
    DOUBLE.less(a, b, true)
}

/// fclass.d
pub(crate) fn f64_classify(a: u64) -> u32 {
    DOUBLE.classify(a)
}

// Zfh: half precision. Values are `u16`; the arithmetic is SoftFloat's, the bit operations
// share `Format` with single and double.

/// The canonical half-precision NaN.
pub(crate) const F16_CANONICAL_NAN: u16 = 0x7e00;
const F16_SIGN: u16 = 1 << 15;

const HALF: Format = Format {
    sign: F16_SIGN as u64,
    exponent: 0x7c00,
    quiet: 0x0200,
    canonical_nan: F16_CANONICAL_NAN as u64,
};

fn f16(bits: u16) -> sf::float16_t {
    sf::float16_t { v: bits }
}

/// fadd.h
pub(crate) fn f16_add(a: u16, b: u16, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f16_add(f16(a), f16(b)) }.v)
}

/// fsub.h
pub(crate) fn f16_sub(a: u16, b: u16, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f16_sub(f16(a), f16(b)) }.v)
}

/// fmul.h
pub(crate) fn f16_mul(a: u16, b: u16, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f16_mul(f16(a), f16(b)) }.v)
}

/// fdiv.h
pub(crate) fn f16_div(a: u16, b: u16, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f16_div(f16(a), f16(b)) }.v)
}

/// fsqrt.h
pub(crate) fn f16_sqrt(a: u16, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f16_sqrt(f16(a)) }.v)
}

/// fmadd.h: `a * b + c` with a single rounding (NV for `inf * 0 + qNaN` as well).
pub(crate) fn f16_mul_add(a: u16, b: u16, c: u16, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f16_mulAdd(f16(a), f16(b), f16(c)) }.v)
}

/// fmsub.h: `a * b - c`, fused.
pub(crate) fn f16_mul_sub(a: u16, b: u16, c: u16, rm: RoundingMode) -> (u16, u8) {
    f16_mul_add(a, b, c ^ F16_SIGN, rm)
}

/// fnmsub.h: `-(a * b) + c`, fused.
pub(crate) fn f16_neg_mul_sub(a: u16, b: u16, c: u16, rm: RoundingMode) -> (u16, u8) {
    f16_mul_add(a ^ F16_SIGN, b, c, rm)
}

/// fnmadd.h: `-(a * b) - c`, fused.
pub(crate) fn f16_neg_mul_add(a: u16, b: u16, c: u16, rm: RoundingMode) -> (u16, u8) {
    f16_mul_add(a ^ F16_SIGN, b, c ^ F16_SIGN, rm)
}

/// fcvt.w.h: saturating, NV when out of range or NaN, NX when inexact.
pub(crate) fn f16_to_i32(a: u16, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    let (value, flags) = softfloat(rm, || unsafe { sf::f16_to_i32(f16(a), rm as u8, true) });
    (value as i32 as u32, flags)
}

/// fcvt.wu.h
pub(crate) fn f16_to_u32(a: u16, rm: RoundingMode) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    let (value, flags) = softfloat(rm, || unsafe { sf::f16_to_ui32(f16(a), rm as u8, true) });
    (value as u32, flags)
}

/// fcvt.h.w
pub(crate) fn i32_to_f16(a: u32, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::i32_to_f16(a as i32) }.v)
}

/// fcvt.h.wu
pub(crate) fn u32_to_f16(a: u32, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::ui32_to_f16(a) }.v)
}

/// fcvt.s.h: exact; a NaN becomes the canonical single NaN (NV if signaling).
pub(crate) fn f16_to_f32(a: u16) -> (u32, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(EXACT, || unsafe { sf::f16_to_f32(f16(a)) }.v)
}

/// fcvt.d.h: exact.
pub(crate) fn f16_to_f64(a: u16) -> (u64, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(EXACT, || unsafe { sf::f16_to_f64(f16(a)) }.v)
}

/// fcvt.h.s: rounds per `rm`.
pub(crate) fn f32_to_f16(a: u32, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f32_to_f16(f32(a)) }.v)
}

/// fcvt.h.d: rounds per `rm`.
pub(crate) fn f64_to_f16(a: u64, rm: RoundingMode) -> (u16, u8) {
    // SAFETY: pure SoftFloat call on values.
    softfloat(rm, || unsafe { sf::f64_to_f16(f64(a)) }.v)
}

/// fsgnj.h
pub(crate) fn f16_sign_inject(a: u16, b: u16) -> u16 {
    (a & !F16_SIGN) | (b & F16_SIGN)
}

/// fsgnjn.h
pub(crate) fn f16_sign_inject_negated(a: u16, b: u16) -> u16 {
    (a & !F16_SIGN) | (!b & F16_SIGN)
}

/// fsgnjx.h
pub(crate) fn f16_sign_inject_xor(a: u16, b: u16) -> u16 {
    a ^ (b & F16_SIGN)
}

/// fmin.h
pub(crate) fn f16_min(a: u16, b: u16) -> (u16, u8) {
    let (result, flags) = HALF.min_max(a.into(), b.into(), false);
    (result as u16, flags)
}

/// fmax.h
pub(crate) fn f16_max(a: u16, b: u16) -> (u16, u8) {
    let (result, flags) = HALF.min_max(a.into(), b.into(), true);
    (result as u16, flags)
}

/// feq.h
pub(crate) fn f16_eq(a: u16, b: u16) -> (u32, u8) {
    HALF.equal(a.into(), b.into())
}

/// flt.h
pub(crate) fn f16_lt(a: u16, b: u16) -> (u32, u8) {
    HALF.less(a.into(), b.into(), false)
}

/// fle.h
pub(crate) fn f16_le(a: u16, b: u16) -> (u32, u8) {
    HALF.less(a.into(), b.into(), true)
}

/// fclass.h
pub(crate) fn f16_classify(a: u16) -> u32 {
    HALF.classify(a.into())
}
