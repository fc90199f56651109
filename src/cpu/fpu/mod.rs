//! F and D extension arithmetic, bit-exact with the RISC-V unprivileged spec.
//!
//! [`execute`] runs every F/D instruction except the loads and stores (which the engine does):
//! it checks that FP is enabled and the rounding mode is valid, reads operands (unboxing
//! singles), calls one of the pure functions in `ops` and commits the result, the accrued
//! flags and mstatus.FS = Dirty. A trap leaves all state untouched.
//!
//! JIT tiers can call the pure functions in `ops` directly (bits in, bits and flags out) and
//! resolve the rounding mode with [`RoundingMode::resolve`].

pub(crate) mod ops;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod vector_tests;

use super::{Hart, Trap};
use crate::isa::{Insn, Op};

/// IEEE-754 rounding modes in their RISC-V `rm`/`frm` encoding (also SoftFloat's numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RoundingMode {
    /// RNE: round to nearest, ties to even.
    NearestEven = 0,
    /// RTZ: round towards zero.
    TowardZero = 1,
    /// RDN: round down (towards negative infinity).
    Down = 2,
    /// RUP: round up (towards positive infinity).
    Up = 3,
    /// RMM: round to nearest, ties to max magnitude.
    NearestMaxMagnitude = 4,
}

/// The `rm` field value that selects the dynamic rounding mode (`frm`).
pub const RM_DYNAMIC: u8 = 7;

impl RoundingMode {
    /// Decode a static rounding mode (0..=4); other values are reserved.
    pub fn from_bits(bits: u8) -> Option<RoundingMode> {
        Some(match bits {
            0 => RoundingMode::NearestEven,
            1 => RoundingMode::TowardZero,
            2 => RoundingMode::Down,
            3 => RoundingMode::Up,
            4 => RoundingMode::NearestMaxMagnitude,
            _ => return None,
        })
    }

    /// The rounding mode an instruction uses: its `rm` field, or `frm` when `rm` is dynamic.
    /// `None` (reserved rm 5/6, or dynamic with frm >= 5) means illegal instruction.
    #[inline]
    pub fn resolve(rm: u8, frm: u8) -> Option<RoundingMode> {
        if rm == RM_DYNAMIC {
            RoundingMode::from_bits(frm)
        } else {
            RoundingMode::from_bits(rm)
        }
    }
}

/// Upper half of a NaN-boxed single in a 64-bit f register.
const NAN_BOX: u64 = 0xffff_ffff_0000_0000;

/// Box a single-precision value for an f register.
#[inline]
pub fn nan_box(bits: u32) -> u64 {
    NAN_BOX | u64::from(bits)
}

/// Read a single-precision operand from an f register value: a value that is not properly
/// NaN-boxed reads as the canonical NaN.
#[inline]
pub fn unbox(reg: u64) -> u32 {
    if reg & NAN_BOX == NAN_BOX {
        reg as u32
    } else {
        ops::F32_CANONICAL_NAN
    }
}

/// Upper 48 bits of a NaN-boxed half in a 64-bit f register.
const NAN_BOX_HALF: u64 = 0xffff_ffff_ffff_0000;

/// Box a half-precision value for an f register.
#[inline]
pub fn nan_box_half(bits: u16) -> u64 {
    NAN_BOX_HALF | u64::from(bits)
}

/// Read a half-precision operand from an f register value: a value that is not properly
/// NaN-boxed reads as the canonical NaN.
#[inline]
pub fn unbox_half(reg: u64) -> u16 {
    if reg & NAN_BOX_HALF == NAN_BOX_HALF {
        reg as u16
    } else {
        ops::F16_CANONICAL_NAN
    }
}

/// What an instruction produces, before it is committed to the hart.
enum Outcome {
    /// A half-precision value for f[rd] (boxed on commit), with the flags raised.
    Half(u16, u8),
    /// A single-precision value for f[rd] (boxed on commit), with the flags raised.
    Single(u32, u8),
    /// A double-precision value for f[rd], with the flags raised.
    Double(u64, u8),
    /// A value for x[rd], with the flags raised.
    Integer(u32, u8),
}

impl Outcome {
    fn half((bits, flags): (u16, u8)) -> Outcome {
        Outcome::Half(bits, flags)
    }

    fn single((bits, flags): (u32, u8)) -> Outcome {
        Outcome::Single(bits, flags)
    }

    fn double((bits, flags): (u64, u8)) -> Outcome {
        Outcome::Double(bits, flags)
    }

    fn integer((value, flags): (u32, u8)) -> Outcome {
        Outcome::Integer(value, flags)
    }
}

/// Execute one F/D instruction that is not a load or store.
///
/// Raises illegal-instruction (with no state change) when mstatus.FS is Off, when the rounding
/// mode is reserved (rm 5/6, or dynamic with frm >= 5), or when `insn` is not an F/D arithmetic,
/// conversion, compare or move op.
pub fn execute(hart: &mut Hart, insn: &Insn) -> Result<(), Trap> {
    if !hart.fp_enabled() {
        return Err(Trap::illegal(insn.raw));
    }
    let outcome = compute(hart, insn)?;
    commit(hart, insn.rd, outcome);
    Ok(())
}

/// Compute the result of `insn` from the hart's registers without changing anything.
fn compute(hart: &Hart, insn: &Insn) -> Result<Outcome, Trap> {
    use ops::*;
    use Op::*;

    let illegal = Trap::illegal(insn.raw);
    let rm = || RoundingMode::resolve(insn.rm, hart.frm).ok_or(illegal);
    // Operands are read lazily so each arm loads only what it uses.
    let freg = |r: u8| hart.f[usize::from(r & 31)];
    let s1 = || unbox(freg(insn.rs1));
    let s2 = || unbox(freg(insn.rs2));
    let s3 = || unbox(freg(insn.rs3));
    let d1 = || freg(insn.rs1);
    let d2 = || freg(insn.rs2);
    let d3 = || freg(insn.rs3);
    let x1 = || hart.reg(insn.rs1);
    let h1 = || unbox_half(freg(insn.rs1));
    let h2 = || unbox_half(freg(insn.rs2));
    let h3 = || unbox_half(freg(insn.rs3));

    Ok(match insn.op {
        FmaddS => Outcome::single(f32_mul_add(s1(), s2(), s3(), rm()?)),
        FmsubS => Outcome::single(f32_mul_sub(s1(), s2(), s3(), rm()?)),
        FnmsubS => Outcome::single(f32_neg_mul_sub(s1(), s2(), s3(), rm()?)),
        FnmaddS => Outcome::single(f32_neg_mul_add(s1(), s2(), s3(), rm()?)),
        FaddS => Outcome::single(f32_add(s1(), s2(), rm()?)),
        FsubS => Outcome::single(f32_sub(s1(), s2(), rm()?)),
        FmulS => Outcome::single(f32_mul(s1(), s2(), rm()?)),
        FdivS => Outcome::single(f32_div(s1(), s2(), rm()?)),
        FsqrtS => Outcome::single(f32_sqrt(s1(), rm()?)),
        FsgnjS => Outcome::Single(f32_sign_inject(s1(), s2()), 0),
        FsgnjnS => Outcome::Single(f32_sign_inject_negated(s1(), s2()), 0),
        FsgnjxS => Outcome::Single(f32_sign_inject_xor(s1(), s2()), 0),
        FminS => Outcome::single(f32_min(s1(), s2())),
        FmaxS => Outcome::single(f32_max(s1(), s2())),
        FcvtWS => Outcome::integer(f32_to_i32(s1(), rm()?)),
        FcvtWuS => Outcome::integer(f32_to_u32(s1(), rm()?)),
        // The raw low half, boxed or not.
        FmvXW => Outcome::Integer(d1() as u32, 0),
        FeqS => Outcome::integer(f32_eq(s1(), s2())),
        FltS => Outcome::integer(f32_lt(s1(), s2())),
        FleS => Outcome::integer(f32_le(s1(), s2())),
        FclassS => Outcome::Integer(f32_classify(s1()), 0),
        FcvtSW => Outcome::single(i32_to_f32(x1(), rm()?)),
        FcvtSWu => Outcome::single(u32_to_f32(x1(), rm()?)),
        FmvWX => Outcome::Single(x1(), 0),

        FmaddD => Outcome::double(f64_mul_add(d1(), d2(), d3(), rm()?)),
        FmsubD => Outcome::double(f64_mul_sub(d1(), d2(), d3(), rm()?)),
        FnmsubD => Outcome::double(f64_neg_mul_sub(d1(), d2(), d3(), rm()?)),
        FnmaddD => Outcome::double(f64_neg_mul_add(d1(), d2(), d3(), rm()?)),
        FaddD => Outcome::double(f64_add(d1(), d2(), rm()?)),
        FsubD => Outcome::double(f64_sub(d1(), d2(), rm()?)),
        FmulD => Outcome::double(f64_mul(d1(), d2(), rm()?)),
        FdivD => Outcome::double(f64_div(d1(), d2(), rm()?)),
        FsqrtD => Outcome::double(f64_sqrt(d1(), rm()?)),
        FsgnjD => Outcome::Double(f64_sign_inject(d1(), d2()), 0),
        FsgnjnD => Outcome::Double(f64_sign_inject_negated(d1(), d2()), 0),
        FsgnjxD => Outcome::Double(f64_sign_inject_xor(d1(), d2()), 0),
        FminD => Outcome::double(f64_min(d1(), d2())),
        FmaxD => Outcome::double(f64_max(d1(), d2())),
        FcvtSD => Outcome::single(f64_to_f32(d1(), rm()?)),
        // Exact conversions still carry an rm field, and a reserved one is illegal (as in
        // Spike and QEMU).
        FcvtDS => {
            rm()?;
            Outcome::double(f32_to_f64(s1()))
        }
        FeqD => Outcome::integer(f64_eq(d1(), d2())),
        FltD => Outcome::integer(f64_lt(d1(), d2())),
        FleD => Outcome::integer(f64_le(d1(), d2())),
        FclassD => Outcome::Integer(f64_classify(d1()), 0),
        FcvtWD => Outcome::integer(f64_to_i32(d1(), rm()?)),
        FcvtWuD => Outcome::integer(f64_to_u32(d1(), rm()?)),
        FcvtDW => {
            rm()?;
            Outcome::double(i32_to_f64(x1()))
        }
        FcvtDWu => {
            rm()?;
            Outcome::double(u32_to_f64(x1()))
        }

        FmaddH => Outcome::half(f16_mul_add(h1(), h2(), h3(), rm()?)),
        FmsubH => Outcome::half(f16_mul_sub(h1(), h2(), h3(), rm()?)),
        FnmsubH => Outcome::half(f16_neg_mul_sub(h1(), h2(), h3(), rm()?)),
        FnmaddH => Outcome::half(f16_neg_mul_add(h1(), h2(), h3(), rm()?)),
        FaddH => Outcome::half(f16_add(h1(), h2(), rm()?)),
        FsubH => Outcome::half(f16_sub(h1(), h2(), rm()?)),
        FmulH => Outcome::half(f16_mul(h1(), h2(), rm()?)),
        FdivH => Outcome::half(f16_div(h1(), h2(), rm()?)),
        FsqrtH => Outcome::half(f16_sqrt(h1(), rm()?)),
        FsgnjH => Outcome::Half(f16_sign_inject(h1(), h2()), 0),
        FsgnjnH => Outcome::Half(f16_sign_inject_negated(h1(), h2()), 0),
        FsgnjxH => Outcome::Half(f16_sign_inject_xor(h1(), h2()), 0),
        FminH => Outcome::half(f16_min(h1(), h2())),
        FmaxH => Outcome::half(f16_max(h1(), h2())),
        FcvtSH => {
            rm()?;
            Outcome::single(f16_to_f32(h1()))
        }
        FcvtHS => Outcome::half(f32_to_f16(s1(), rm()?)),
        FcvtDH => {
            rm()?;
            Outcome::double(f16_to_f64(h1()))
        }
        FcvtHD => Outcome::half(f64_to_f16(d1(), rm()?)),
        FeqH => Outcome::integer(f16_eq(h1(), h2())),
        FltH => Outcome::integer(f16_lt(h1(), h2())),
        FleH => Outcome::integer(f16_le(h1(), h2())),
        FclassH => Outcome::Integer(f16_classify(h1()), 0),
        FcvtWH => Outcome::integer(f16_to_i32(h1(), rm()?)),
        FcvtWuH => Outcome::integer(f16_to_u32(h1(), rm()?)),
        FcvtHW => Outcome::half(i32_to_f16(x1(), rm()?)),
        FcvtHWu => Outcome::half(u32_to_f16(x1(), rm()?)),
        // The raw low 16 bits, boxed or not, sign-extended.
        FmvXH => Outcome::Integer(d1() as u16 as i16 as i32 as u32, 0),
        FmvHX => Outcome::Half(x1() as u16, 0),
        other => {
            // An engine bug, not a guest error: the guest sees an illegal instruction.
            tracing::error!(
                ?other,
                raw = insn.raw,
                "fpu::execute called with a non-F/D op"
            );
            return Err(illegal);
        }
    })
}

/// Write the outcome to rd, accrue its flags and mark the FP state dirty when it changed.
fn commit(hart: &mut Hart, rd: u8, outcome: Outcome) {
    let rd_index = usize::from(rd & 31);
    let flags = match outcome {
        Outcome::Half(bits, flags) => {
            hart.f[rd_index] = nan_box_half(bits);
            hart.mark_fp_dirty();
            flags
        }
        Outcome::Single(bits, flags) => {
            hart.f[rd_index] = nan_box(bits);
            hart.mark_fp_dirty();
            flags
        }
        Outcome::Double(bits, flags) => {
            hart.f[rd_index] = bits;
            hart.mark_fp_dirty();
            flags
        }
        Outcome::Integer(value, flags) => {
            hart.set_reg(rd, value);
            flags
        }
    };
    // fflags is FP state too: raising a flag dirties it, as in Spike.
    if flags != 0 {
        hart.fflags |= flags;
        hart.mark_fp_dirty();
    }
}
