//! Tier 2's native F/D arithmetic: `fadd`, `fsub`, `fmul`, `fdiv`, `fsqrt`, (on hosts with
//! FMA3) the four fused multiply-adds, single and double, and the narrowing `fcvt.s.d`, as one
//! SSE/FMA instruction each (LLVM
//! inline assembly), bit-exact with the SoftFloat interpreter under the rules tier 1's GEN_FP
//! follows (docs/codegen.md): only round-to-nearest-even runs natively, a badly boxed single
//! or a fused multiply-add's NaN result goes to the helper, which recomputes the instruction
//! (another operation's NaN result becomes the canonical NaN in place), and MXCSR's flags
//! become `fflags`: a region with native operations folds the flags tier-1 code left pending
//! and loads MXCSR clean at its entry, and folds MXCSR's flags into `fflags` at its exit; the
//! helpers it calls (`abi`'s folding ones) fold before their work and drop what their own
//! work raised after it (`host_fp::take_mxcsr_flags`), so host code never adds flags and a
//! guest never misses one. This is the only file of
//! tier 2 that names x86 instructions; inline assembly keeps LLVM from folding, reordering or
//! widening an operation, so it is exactly the instruction tier 1 runs.

use crate::isa::Op;

/// How tier 2 runs an F/D computation natively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NativeFp {
    /// The SSE instruction (AT&T syntax).
    pub mnemonic: &'static str,
    /// The result is a double (else a single, NaN-boxed in the f registers).
    pub double: bool,
    /// The sources are doubles: as the result, except for the narrowing `fcvt.s.d`.
    pub source_double: bool,
    /// Source operands: 1 (`fsqrt`, `fcvt.s.d`), 2, or 3 (fused multiply-adds).
    pub operands: u8,
}

impl NativeFp {
    /// Whether a NaN result may be written natively, as RISC-V's canonical NaN: x86 raises
    /// the very flags RISC-V does when these operations make a NaN (invalid for a signaling
    /// operand or an invalid operation, nothing else; denormal-operand is not an IEEE flag and
    /// never reaches `fflags`), and only the NaN itself differs (x86 propagates an operand's
    /// payload, or makes a negative default NaN). Not the fused multiply-adds: whether
    /// `0 * inf + qNaN` raises invalid is the implementation's choice, and RISC-V's is yes.
    pub fn canonicalises_nan(&self) -> bool {
        self.operands != 3
    }
}

/// The native form of `op`, if it has one on this host.
pub fn native(op: Op) -> Option<NativeFp> {
    use Op::*;
    let (mnemonic, double, operands) = match op {
        FaddS => ("addss", false, 2),
        FsubS => ("subss", false, 2),
        FmulS => ("mulss", false, 2),
        FdivS => ("divss", false, 2),
        FsqrtS => ("sqrtss", false, 1),
        FaddD => ("addsd", true, 2),
        FsubD => ("subsd", true, 2),
        FmulD => ("mulsd", true, 2),
        FdivD => ("divsd", true, 2),
        FsqrtD => ("sqrtsd", true, 1),
        // Narrowing rounds like the arithmetic (RNE by MXCSR), with the same flags: overflow,
        // underflow (tiny after rounding, as RISC-V) and inexact; an sNaN raises invalid.
        FcvtSD => ("cvtsd2ss", false, 1),
        // RISC-V fnmsub is -(a*b)+c, x86's vfnmadd; fnmadd is -(a*b)-c, x86's vfnmsub.
        FmaddS => ("vfmadd231ss", false, 3),
        FmsubS => ("vfmsub231ss", false, 3),
        FnmsubS => ("vfnmadd231ss", false, 3),
        FnmaddS => ("vfnmsub231ss", false, 3),
        FmaddD => ("vfmadd231sd", true, 3),
        FmsubD => ("vfmsub231sd", true, 3),
        FnmsubD => ("vfnmadd231sd", true, 3),
        FnmaddD => ("vfnmsub231sd", true, 3),
        _ => return None,
    };
    if operands == 3 && !std::is_x86_feature_detected!("fma") {
        return None;
    }
    Some(NativeFp {
        mnemonic,
        double,
        source_double: double || op == FcvtSD,
        operands,
    })
}

/// F/D operations that never round, so tier 2 builds them from plain LLVM IR (bit operations,
/// compares of the bits, exact widening conversions, classification) when singles are NaN-boxed
/// and, for compares, `fmin`/`fmax` and `fcvt.d.s`, no operand is a NaN; anything else goes to
/// the helper. Sign injection, moves and `fclass` raise no flags at all; compares, `fmin`,
/// `fmax` and conversions of non-NaN operands raise none either.
pub fn is_exact(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        FsgnjS
            | FsgnjnS
            | FsgnjxS
            | FsgnjD
            | FsgnjnD
            | FsgnjxD
            | FmvXW
            | FmvWX
            | FeqS
            | FltS
            | FleS
            | FeqD
            | FltD
            | FleD
            | FminS
            | FmaxS
            | FminD
            | FmaxD
            | FclassS
            | FclassD
            | FcvtDS
            | FcvtDW
            | FcvtDWu
    )
}

/// How tier 2 converts to a 32-bit integer natively (`fcvt.w[u].s`, `fcvt.w[u].d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToInt {
    /// The source is a double (else a NaN-boxed single).
    pub double: bool,
    /// Round toward zero (`rm` = RTZ: C's casts), else to nearest even.
    pub truncate: bool,
    /// To an unsigned word (`fcvt.wu`): natively only for sources with the sign bit clear,
    /// below 2^31 like the signed ones, where both conversions give the same bits.
    pub unsigned: bool,
}

impl ToInt {
    /// Sources whose biased exponent is below this convert natively: their result is in
    /// range, so x86 raises only PE, which is RISC-V's NX. That is a magnitude below 2^31,
    /// except for doubles rounded to nearest, which round up to 2^31 from 2^31 - 0.5: below
    /// 2^30 for those (a single that large is an integer already). The rest (NaNs,
    /// infinities, large values, including some that would still fit) go to the helper.
    pub fn exponent_limit(&self) -> u64 {
        match (self.double, self.truncate) {
            (true, true) => 1023 + 31,
            (true, false) => 1023 + 30,
            (false, _) => 127 + 31,
        }
    }

    /// The conversion instruction (AT&T syntax, `$1` the SSE source, `$0` a 32-bit register).
    pub fn asm(&self) -> String {
        let op = match (self.truncate, self.double) {
            (true, true) => "cvttsd2si",
            (true, false) => "cvttss2si",
            (false, true) => "cvtsd2si",
            (false, false) => "cvtss2si",
        };
        format!("{op} $1, $0")
    }
}

/// The native form of `i` if it is a conversion to a word tier 2 does natively: rounding
/// toward zero, to nearest even, or dynamic (then `frm` = RNE is checked at run time, and the
/// conversion rounds by MXCSR, which is RNE).
pub fn to_int(i: &crate::isa::Insn) -> Option<ToInt> {
    let (double, unsigned) = match i.op {
        Op::FcvtWD => (true, false),
        Op::FcvtWS => (false, false),
        Op::FcvtWuD => (true, true),
        Op::FcvtWuS => (false, true),
        _ => return None,
    };
    let truncate = match i.rm {
        1 => true,
        0 | 7 => false,
        _ => return None,
    };
    Some(ToInt {
        double,
        truncate,
        unsigned,
    })
}

/// Whether tier 2 runs instruction `i` natively when it is an F/D instruction: FP loads and
/// stores of words and doublewords always (their fast path is inline; Zfh's go to the
/// helper, as all of Zfh does), computations with a native form when their
/// rounding mode is round-to-nearest-even or dynamic (checked for RNE at run time), the
/// exact operations ([`is_exact`]) and conversions to a word ([`to_int`]).
pub fn runs_natively(i: &crate::isa::Insn) -> bool {
    use crate::isa::ops::OpClass;
    match i.op.class() {
        OpClass::FpMem => !matches!(i.op, Op::Flh | Op::Fsh),
        OpClass::Fp => {
            (native(i.op).is_some() && matches!(i.rm, 0 | 7))
                || is_exact(i.op)
                || to_int(i).is_some()
        }
        _ => true,
    }
}

impl NativeFp {
    /// The inline assembly and its constraints. Operands: `$0` the result (an SSE register),
    /// then the sources in RISC-V order (a, b, c). Two-source forms compute into a (`op b, a`
    /// in AT&T order: a = a op b); fused multiply-adds into c (`vfmadd231 b, a, c`:
    /// c = a*b + c). The caller marks it as having side effects: it changes MXCSR's flags.
    pub fn asm(&self) -> (String, String) {
        let (operation, constraints) = match self.operands {
            1 => ("$1, $0", "=x,x"),
            2 => ("$2, $0", "=x,0,x"),
            _ => ("$2, $1, $0", "=x,x,x,0"),
        };
        (
            format!("{} {operation}", self.mnemonic),
            constraints.to_owned(),
        )
    }
}

/// Inline assembly that loads MXCSR from the 32-bit slot `$0` points to.
pub const LOAD_MXCSR: &str = "ldmxcsr ($0)";
/// Inline assembly that stores MXCSR to the 32-bit slot `$0` points to.
pub const STORE_MXCSR: &str = "stmxcsr ($0)";
/// The constraints of [`LOAD_MXCSR`] and [`STORE_MXCSR`].
pub const MXCSR_CONSTRAINTS: &str = "r,~{memory}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arithmetic_and_fused_multiply_adds_are_native() {
        let natives: Vec<Op> = [
            Op::FaddS,
            Op::FsubD,
            Op::FsqrtS,
            Op::FsqrtD,
            Op::FmaddD,
            Op::FminS,
            Op::FcvtWD,
        ]
        .into_iter()
        .filter(|&op| native(op).is_some())
        .collect();
        let mut expected = vec![Op::FaddS, Op::FsubD, Op::FsqrtS, Op::FsqrtD];
        if std::is_x86_feature_detected!("fma") {
            expected.push(Op::FmaddD);
        }
        assert_eq!(natives, expected);
        // Exact operations are plain IR; rounding ones without a native form are helpers.
        for op in [
            Op::FsgnjxD,
            Op::FmvXW,
            Op::FleS,
            Op::FminS,
            Op::FclassD,
            Op::FcvtDS,
            Op::FcvtDWu,
        ] {
            assert!(is_exact(op) && native(op).is_none(), "{op:?}");
        }
        for op in [Op::FcvtSD, Op::FcvtWD, Op::FcvtWuS, Op::FaddS] {
            assert!(!is_exact(op), "{op:?}");
        }
        // Conversions to a signed word: RTZ, RNE and dynamic; not RDN, RUP, RMM or unsigned.
        let mut cvt = crate::isa::decode(0xc2051553); // fcvt.w.d a0, a0, rtz
        assert_eq!(cvt.op, Op::FcvtWD);
        assert_eq!(cvt.rm, 1);
        let rtz = to_int(&cvt).unwrap();
        assert!(rtz.double && rtz.truncate);
        assert_eq!(rtz.asm(), "cvttsd2si $1, $0");
        assert_eq!(rtz.exponent_limit(), 1054);
        cvt.rm = 7;
        assert_eq!(
            to_int(&cvt).unwrap().exponent_limit(),
            1053,
            "2^31 - 0.5 rounds up"
        );
        for rm in [2, 3, 4] {
            cvt.rm = rm;
            assert_eq!(to_int(&cvt), None, "rm {rm}");
        }
        cvt.op = Op::FcvtWuD;
        cvt.rm = 1;
        assert!(to_int(&cvt).unwrap().unsigned);
        cvt.op = Op::FcvtSD;
        assert_eq!(to_int(&cvt), None);
        let narrow = native(Op::FcvtSD).unwrap();
        assert!(narrow.source_double && !narrow.double && narrow.operands == 1);
        assert!(native(Op::FaddD).unwrap().source_double);
        let (code, constraints) = native(Op::FdivD).unwrap().asm();
        assert_eq!(code, "divsd $2, $0");
        assert_eq!(constraints, "=x,0,x");
    }
}
