//! Replays `tests/guest/fp_vectors.expected` (results and fflags that qemu-riscv32 computed for
//! `tests/guest/fp_vectors.c`; regenerate with `scripts/gen-fp-vectors.sh`) through the pure
//! functions in [`super::ops`] and through [`super::execute`] on a hart, and requires every
//! result bit and flag to match.

use super::ops::*;
use super::{execute, nan_box, RoundingMode, RM_DYNAMIC};
use crate::cpu::csr::{MSTATUS_FS, MSTATUS_FS_INITIAL, MSTATUS_SD};
use crate::cpu::Hart;
use crate::isa::{Insn, Op};
use std::collections::HashMap;

/// How a vector's operand or result lives in the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A single in an f register (NaN-boxed).
    S,
    /// A double in an f register.
    D,
    /// A raw 64-bit f register value (the `.box` vectors).
    Raw,
    /// An integer register.
    X,
}

/// A pure function under test, on operands and results widened to `u64`.
type PureFn = fn(&[u64], RoundingMode) -> (u64, u8);

struct VectorOp {
    name: &'static str,
    op: Op,
    sources: &'static [Kind],
    result: Kind,
    /// `None` for the `.box` vectors, which only make sense through `execute`.
    pure: Option<PureFn>,
}

fn wide<T: Into<u64>>((value, flags): (T, u8)) -> (u64, u8) {
    (value.into(), flags)
}

fn exact<T: Into<u64>>(value: T) -> (u64, u8) {
    (value.into(), 0)
}

// Operands narrowed back from the widened vector values.
fn s(v: u64) -> u32 {
    v as u32
}

use Kind::{Raw, D, S, X};

const SS: &[Kind] = &[S, S];
const SSS: &[Kind] = &[S, S, S];
const DD: &[Kind] = &[D, D];
const DDD: &[Kind] = &[D, D, D];

#[rustfmt::skip]
fn vector_ops() -> Vec<VectorOp> {
    fn op(name: &'static str, op: Op, sources: &'static [Kind], result: Kind, pure: PureFn) -> VectorOp {
        VectorOp { name, op, sources, result, pure: Some(pure) }
    }
    fn boxed(name: &'static str, op: Op, sources: &'static [Kind], result: Kind) -> VectorOp {
        VectorOp { name, op, sources, result, pure: None }
    }
    vec![
        op("fadd.s", Op::FaddS, SS, S, |v, rm| wide(f32_add(s(v[0]), s(v[1]), rm))),
        op("fsub.s", Op::FsubS, SS, S, |v, rm| wide(f32_sub(s(v[0]), s(v[1]), rm))),
        op("fmul.s", Op::FmulS, SS, S, |v, rm| wide(f32_mul(s(v[0]), s(v[1]), rm))),
        op("fdiv.s", Op::FdivS, SS, S, |v, rm| wide(f32_div(s(v[0]), s(v[1]), rm))),
        op("fsqrt.s", Op::FsqrtS, &[S], S, |v, rm| wide(f32_sqrt(s(v[0]), rm))),
        op("fmadd.s", Op::FmaddS, SSS, S, |v, rm| wide(f32_mul_add(s(v[0]), s(v[1]), s(v[2]), rm))),
        op("fmsub.s", Op::FmsubS, SSS, S, |v, rm| wide(f32_mul_sub(s(v[0]), s(v[1]), s(v[2]), rm))),
        op("fnmsub.s", Op::FnmsubS, SSS, S, |v, rm| wide(f32_neg_mul_sub(s(v[0]), s(v[1]), s(v[2]), rm))),
        op("fnmadd.s", Op::FnmaddS, SSS, S, |v, rm| wide(f32_neg_mul_add(s(v[0]), s(v[1]), s(v[2]), rm))),
        op("fmin.s", Op::FminS, SS, S, |v, _| wide(f32_min(s(v[0]), s(v[1])))),
        op("fmax.s", Op::FmaxS, SS, S, |v, _| wide(f32_max(s(v[0]), s(v[1])))),
        op("fsgnj.s", Op::FsgnjS, SS, S, |v, _| exact(f32_sign_inject(s(v[0]), s(v[1])))),
        op("fsgnjn.s", Op::FsgnjnS, SS, S, |v, _| exact(f32_sign_inject_negated(s(v[0]), s(v[1])))),
        op("fsgnjx.s", Op::FsgnjxS, SS, S, |v, _| exact(f32_sign_inject_xor(s(v[0]), s(v[1])))),
        op("feq.s", Op::FeqS, SS, X, |v, _| wide(f32_eq(s(v[0]), s(v[1])))),
        op("flt.s", Op::FltS, SS, X, |v, _| wide(f32_lt(s(v[0]), s(v[1])))),
        op("fle.s", Op::FleS, SS, X, |v, _| wide(f32_le(s(v[0]), s(v[1])))),
        op("fclass.s", Op::FclassS, &[S], X, |v, _| exact(f32_classify(s(v[0])))),
        op("fcvt.w.s", Op::FcvtWS, &[S], X, |v, rm| wide(f32_to_i32(s(v[0]), rm))),
        op("fcvt.wu.s", Op::FcvtWuS, &[S], X, |v, rm| wide(f32_to_u32(s(v[0]), rm))),
        op("fcvt.s.w", Op::FcvtSW, &[X], S, |v, rm| wide(i32_to_f32(s(v[0]), rm))),
        op("fcvt.s.wu", Op::FcvtSWu, &[X], S, |v, rm| wide(u32_to_f32(s(v[0]), rm))),

        op("fadd.d", Op::FaddD, DD, D, |v, rm| f64_add(v[0], v[1], rm)),
        op("fsub.d", Op::FsubD, DD, D, |v, rm| f64_sub(v[0], v[1], rm)),
        op("fmul.d", Op::FmulD, DD, D, |v, rm| f64_mul(v[0], v[1], rm)),
        op("fdiv.d", Op::FdivD, DD, D, |v, rm| f64_div(v[0], v[1], rm)),
        op("fsqrt.d", Op::FsqrtD, &[D], D, |v, rm| f64_sqrt(v[0], rm)),
        op("fmadd.d", Op::FmaddD, DDD, D, |v, rm| f64_mul_add(v[0], v[1], v[2], rm)),
        op("fmsub.d", Op::FmsubD, DDD, D, |v, rm| f64_mul_sub(v[0], v[1], v[2], rm)),
        op("fnmsub.d", Op::FnmsubD, DDD, D, |v, rm| f64_neg_mul_sub(v[0], v[1], v[2], rm)),
        op("fnmadd.d", Op::FnmaddD, DDD, D, |v, rm| f64_neg_mul_add(v[0], v[1], v[2], rm)),
        op("fmin.d", Op::FminD, DD, D, |v, _| f64_min(v[0], v[1])),
        op("fmax.d", Op::FmaxD, DD, D, |v, _| f64_max(v[0], v[1])),
        op("fsgnj.d", Op::FsgnjD, DD, D, |v, _| exact(f64_sign_inject(v[0], v[1]))),
        op("fsgnjn.d", Op::FsgnjnD, DD, D, |v, _| exact(f64_sign_inject_negated(v[0], v[1]))),
        op("fsgnjx.d", Op::FsgnjxD, DD, D, |v, _| exact(f64_sign_inject_xor(v[0], v[1]))),
        op("feq.d", Op::FeqD, DD, X, |v, _| wide(f64_eq(v[0], v[1]))),
        op("flt.d", Op::FltD, DD, X, |v, _| wide(f64_lt(v[0], v[1]))),
        op("fle.d", Op::FleD, DD, X, |v, _| wide(f64_le(v[0], v[1]))),
        op("fclass.d", Op::FclassD, &[D], X, |v, _| exact(f64_classify(v[0]))),
        op("fcvt.w.d", Op::FcvtWD, &[D], X, |v, rm| wide(f64_to_i32(v[0], rm))),
        op("fcvt.wu.d", Op::FcvtWuD, &[D], X, |v, rm| wide(f64_to_u32(v[0], rm))),
        op("fcvt.d.w", Op::FcvtDW, &[X], D, |v, _| i32_to_f64(s(v[0]))),
        op("fcvt.d.wu", Op::FcvtDWu, &[X], D, |v, _| u32_to_f64(s(v[0]))),
        op("fcvt.s.d", Op::FcvtSD, &[D], S, |v, rm| wide(f64_to_f32(v[0], rm))),
        op("fcvt.d.s", Op::FcvtDS, &[S], D, |v, _| f32_to_f64(s(v[0]))),

        boxed("fadd.s.box", Op::FaddS, &[Raw, Raw], Raw),
        boxed("fmin.s.box", Op::FminS, &[Raw, Raw], Raw),
        boxed("fsgnj.s.box", Op::FsgnjS, &[Raw, Raw], Raw),
        boxed("fsgnjn.s.box", Op::FsgnjnS, &[Raw, Raw], Raw),
        boxed("fsgnjx.s.box", Op::FsgnjxS, &[Raw, Raw], Raw),
        boxed("feq.s.box", Op::FeqS, &[Raw, Raw], X),
        boxed("fsqrt.s.box", Op::FsqrtS, &[Raw], Raw),
        boxed("fcvt.d.s.box", Op::FcvtDS, &[Raw], Raw),
        boxed("fcvt.s.d.box", Op::FcvtSD, &[Raw], Raw),
        boxed("fclass.s.box", Op::FclassS, &[Raw], X),
        boxed("fmv.x.w.box", Op::FmvXW, &[Raw], X),
        boxed("fcvt.w.s.box", Op::FcvtWS, &[Raw], X),
        boxed("fmv.w.x.box", Op::FmvWX, &[X], Raw),
    ]
}

/// One parsed line: `op rm inputs... -> result flags`.
struct Vector<'a> {
    op_name: &'a str,
    rm: RoundingMode,
    inputs: Vec<u64>,
    result: u64,
    flags: u8,
}

fn parse_line(line: &str) -> Result<Vector<'_>, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let arrow = words.iter().position(|w| *w == "->").ok_or("no `->`")?;
    if arrow < 3 || words.len() != arrow + 3 {
        return Err("wrong number of fields".into());
    }
    let hex = |w: &str| u64::from_str_radix(w, 16).map_err(|e| format!("bad hex {w:?}: {e}"));
    let rm_bits: u8 = words[1].parse().map_err(|e| format!("bad rm: {e}"))?;
    Ok(Vector {
        op_name: words[0],
        rm: RoundingMode::from_bits(rm_bits).ok_or("reserved rm in a vector")?,
        inputs: words[2..arrow]
            .iter()
            .map(|w| hex(w))
            .collect::<Result<_, _>>()?,
        result: hex(words[arrow + 1])?,
        flags: u8::try_from(hex(words[arrow + 2])?).map_err(|e| e.to_string())?,
    })
}

const FIRST_SOURCE_F: u8 = 1;
const SOURCE_X: u8 = 5;
const DEST: u8 = 10;
const SENTINEL: u64 = 0x5a5a_5a5a_5a5a_5a5a;

/// Run `vector` through `execute` on `hart`; `dynamic` selects rm = dynamic with frm = the
/// vector's mode instead of a static rm. Returns a description of the first difference.
fn check_execute(
    hart: &mut Hart,
    op: &VectorOp,
    vector: &Vector,
    dynamic: bool,
) -> Result<(), String> {
    hart.f = [SENTINEL; 32];
    hart.x = [SENTINEL as u32; 32];
    hart.x[0] = 0;
    hart.fflags = 0;
    hart.csr.mstatus = (hart.csr.mstatus & !(MSTATUS_FS | MSTATUS_SD)) | MSTATUS_FS_INITIAL;
    let mut insn = Insn {
        op: op.op,
        rd: DEST,
        rs1: FIRST_SOURCE_F,
        rs2: FIRST_SOURCE_F + 1,
        rs3: FIRST_SOURCE_F + 2,
        rm: vector.rm as u8,
        len: 4,
        fusion: crate::isa::Fusion::None,
        imm: 0,
        raw: 0,
    };
    if dynamic {
        insn.rm = RM_DYNAMIC;
        hart.frm = vector.rm as u8;
    } else {
        // A valid frm that differs from the static mode, so using the wrong one shows.
        hart.frm = (vector.rm as u8 + 1) % 5;
    }
    for (i, (kind, value)) in op.sources.iter().zip(&vector.inputs).enumerate() {
        let reg = usize::from(FIRST_SOURCE_F) + i;
        match kind {
            S => hart.f[reg] = nan_box(*value as u32),
            D | Raw => hart.f[reg] = *value,
            X => {
                hart.x[usize::from(SOURCE_X)] = *value as u32;
                insn.rs1 = SOURCE_X;
            }
        }
    }
    execute(hart, &insn).map_err(|trap| format!("trapped: {trap:?}"))?;

    let dest = usize::from(DEST);
    let (got, want) = match op.result {
        S => (hart.f[dest], nan_box(vector.result as u32)),
        D | Raw => (hart.f[dest], vector.result),
        X => (u64::from(hart.x[dest]), vector.result),
    };
    if got != want || hart.fflags != vector.flags {
        return Err(format!(
            "execute gave {got:#x} flags {:02x}, want {want:#x} flags {:02x}",
            hart.fflags, vector.flags
        ));
    }
    let writes_f = op.result != X;
    let dirty = hart.csr.mstatus & MSTATUS_FS == MSTATUS_FS;
    if dirty != (writes_f || vector.flags != 0) {
        return Err(format!("mstatus.FS dirty = {dirty}"));
    }
    Ok(())
}

#[test]
fn qemu_vectors_match() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/guest/fp_vectors.expected"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let ops = vector_ops();
    let by_name: HashMap<&str, &VectorOp> = ops.iter().map(|op| (op.name, op)).collect();
    let mut per_op: HashMap<&str, usize> = HashMap::new();
    let mut failures = Vec::new();
    let mut hart = Hart::new();
    let mut checked = 0usize;

    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let vector = match parse_line(line) {
            Ok(vector) => vector,
            Err(e) => {
                failures.push(format!("line {line_no}: {e}: {line}"));
                continue;
            }
        };
        let Some(op) = by_name.get(vector.op_name) else {
            failures.push(format!("line {line_no}: unknown op: {line}"));
            continue;
        };
        if vector.inputs.len() != op.sources.len() {
            failures.push(format!("line {line_no}: operand count: {line}"));
            continue;
        }
        *per_op.entry(op.name).or_default() += 1;
        checked += 1;
        if let Some(pure) = op.pure {
            let (result, flags) = pure(&vector.inputs, vector.rm);
            if (result, flags) != (vector.result, vector.flags) {
                failures.push(format!(
                    "line {line_no}: {line}: pure function gave {result:x} {flags:02x}"
                ));
            }
        }
        if let Err(e) = check_execute(&mut hart, op, &vector, index % 2 == 1) {
            failures.push(format!("line {line_no}: {line}: {e}"));
        }
    }

    let missing: Vec<&str> = ops
        .iter()
        .map(|op| op.name)
        .filter(|name| !per_op.contains_key(name))
        .collect();
    assert!(missing.is_empty(), "no vectors for {missing:?}");
    assert!(checked >= 30_000, "only {checked} vectors: truncated file?");
    assert!(
        failures.is_empty(),
        "{} of {checked} vectors failed; first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(25)].join("\n")
    );
}
