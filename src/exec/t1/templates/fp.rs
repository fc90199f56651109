//! GEN_FP: the common F/D operations on the host's SSE/FMA unit, bit-exact with the
//! SoftFloat-based interpreter (docs/codegen.md, "Floating point").
//!
//! - Only round-to-nearest-even runs natively: `rm` = RNE, or dynamic with `frm` = RNE checked
//!   at run time. Any other mode goes to the helper.
//! - Exception flags: native operations leave theirs in MXCSR, pending across chained blocks
//!   (reading MXCSR waits for every FP operation in flight, and `ldmxcsr` stalls the
//!   pipeline: once per block they took half of a small FP loop's time). Whatever takes over
//!   folds them into `fflags` first (`host_fp::take_mxcsr_flags`): every helper tier 1 calls
//!   (the folding set, the dispatcher included), the run loop when compiled code returns, and
//!   a region with native FP at its entry. x86 raises the same IEEE flags as RISC-V for these
//!   operations (tininess after rounding, like RISC-V), except that a NaN result is never
//!   produced natively: the helper recomputes it (canonical NaN, and the invalid flag that
//!   FMA on x86 may not raise).
//! - Singles must be NaN-boxed in their registers; an improperly boxed operand goes to the
//!   helper (it reads as the canonical NaN).
//! - Every slow case (FP off, another rounding mode, bad boxing, NaN result, an out-of-range
//!   conversion) calls the same helper the interpreter's code runs, so it behaves identically.

use std::mem::offset_of;

use super::{mstatus, BlockCompiler, OutOfLine, HART};
use crate::cpu::csr::{MSTATUS_FS, MSTATUS_SD};
use crate::cpu::Hart;
use crate::exec::t1::emit::{Alu, Cond, Fma, FpArith, Mem, Prec, Reg, Width};
use crate::isa::{Insn, Op};

/// `hart.f[r]`, or its upper half.
fn freg(r: u8, upper: bool) -> Mem {
    Mem::at(
        HART,
        (offset_of!(Hart, f) + 8 * (r as usize & 31) + if upper { 4 } else { 0 }) as i32,
    )
}

fn frm() -> Mem {
    Mem::at(HART, offset_of!(Hart, frm) as i32)
}

/// The first xmm register of [`FpCache`]'s slots; xmm0-2 are the operations' scratch.
const FP_CACHE_FIRST: u8 = 3;
/// Slots: xmm3 to xmm15.
const FP_CACHE_SLOTS: usize = 13;

/// Which f registers (at which precision) xmm3-xmm15 hold, within a run of native F/D
/// operations: each leaves its result in a slot as well as in the hart, and a later operation
/// of the run that reads it takes it from there instead of loading the hart's copy just
/// stored, which waits for store forwarding (4-5 cycles on every step of a dependency chain,
/// on top of the operation's own latency). The hart stays the authority: any other
/// instruction empties the cache, and an operation's slow path (a helper call, which may
/// clobber every vector register) reloads the slots from the hart before it goes back.
#[derive(Clone, Copy, Default)]
pub(super) struct FpCache {
    slots: [Option<(u8, Prec)>; FP_CACHE_SLOTS],
    /// The slot the next new register takes (round robin).
    victim: usize,
}

impl FpCache {
    /// The xmm register holding f`r` at precision `prec`, if any.
    fn find(&self, r: u8, prec: Prec) -> Option<u8> {
        self.slots
            .iter()
            .position(|&s| s == Some((r, prec)))
            .map(|i| FP_CACHE_FIRST + i as u8)
    }

    /// Record that f`r` (at `prec`) is now in a slot: the one it had, or the next victim.
    /// Returns the slot's xmm register.
    fn put(&mut self, r: u8, prec: Prec) -> u8 {
        let i = match self
            .slots
            .iter()
            .position(|s| s.is_some_and(|(x, _)| x == r))
        {
            Some(i) => i,
            None => {
                let i = self.victim;
                self.victim = (self.victim + 1) % FP_CACHE_SLOTS;
                i
            }
        };
        self.slots[i] = Some((r, prec));
        FP_CACHE_FIRST + i as u8
    }
}

/// What the native path of an operation is.
enum Native {
    /// `rd = rs1 OP rs2` (or `sqrt(rs1)`).
    Arith(FpArith),
    /// `rd = ±(rs1 * rs2) ± rs3`.
    Fused(Fma),
    /// `x[rd] = rs1 CMP rs2`.
    Compare(Op),
    /// Sign injection on a double (`fsgnj.d`, `fsgnjn.d`, `fsgnjx.d`): bit operations.
    SignInject(Op),
    /// `rd = (double) x[rs1]`.
    FromInt,
    /// `x[rd] = (i32) rs1` (a double), truncated or rounded to nearest even.
    ToInt {
        truncate: bool,
    },
    /// `fmv.x.w` / `fmv.w.x`: bits between the register files.
    MoveToInt,
    MoveFromInt,
}

impl BlockCompiler<'_> {
    /// Emit `i` natively if it has a native path here; false sends it to the helper.
    pub(super) fn fp_native(&mut self, i: &Insn, pc: u32, index: u32) -> bool {
        use Op::*;
        let prec = match i.op {
            FaddS | FsubS | FmulS | FdivS | FsqrtS | FmaddS | FmsubS | FnmsubS | FnmaddS | FeqS
            | FltS | FleS | FmvXW | FmvWX => Prec::Single,
            _ => Prec::Double,
        };
        let native = match i.op {
            FaddS | FaddD => Native::Arith(FpArith::Add),
            FsubS | FsubD => Native::Arith(FpArith::Sub),
            FmulS | FmulD => Native::Arith(FpArith::Mul),
            FdivS | FdivD => Native::Arith(FpArith::Div),
            FsqrtS | FsqrtD => Native::Arith(FpArith::Sqrt),
            FmaddS | FmaddD if self.fma => Native::Fused(Fma::MulAdd),
            FmsubS | FmsubD if self.fma => Native::Fused(Fma::MulSub),
            FnmsubS | FnmsubD if self.fma => Native::Fused(Fma::NegMulAdd),
            FnmaddS | FnmaddD if self.fma => Native::Fused(Fma::NegMulSub),
            FeqS | FltS | FleS | FeqD | FltD | FleD => Native::Compare(i.op),
            FsgnjD | FsgnjnD | FsgnjxD => Native::SignInject(i.op),
            FcvtDW => Native::FromInt,
            FcvtWD if i.rm == 1 => Native::ToInt { truncate: true },
            FcvtWD => Native::ToInt { truncate: false },
            FmvXW => Native::MoveToInt,
            FmvWX => Native::MoveFromInt,
            _ => return false,
        };
        // Operations that round (or whose rm field must be legal) run natively only in RNE.
        let rounds = !matches!(
            native,
            Native::Compare(_) | Native::SignInject(_) | Native::MoveToInt | Native::MoveFromInt
        );
        let truncating = matches!(native, Native::ToInt { truncate: true });
        if rounds && !truncating && i.rm != 0 && i.rm != crate::cpu::fpu::RM_DYNAMIC {
            return false;
        }
        let (slow, resume) = (self.e.label(), self.e.label());
        // What the slow path writes back: the registers changed before this instruction.
        let dirty = self.dirty;
        self.test_fp_on(slow);
        if rounds && i.rm == crate::cpu::fpu::RM_DYNAMIC {
            self.e.emit_cmp_byte_mem_imm(frm(), 0);
            self.e.emit_jcc(Cond::Ne, slow);
        }
        if prec == Prec::Single && !matches!(native, Native::MoveToInt | Native::MoveFromInt) {
            let sources: &[u8] = match native {
                Native::Arith(FpArith::Sqrt) => &[i.rs1],
                Native::Fused(_) => &[i.rs1, i.rs2, i.rs3],
                _ => &[i.rs1, i.rs2],
            };
            for &r in sources {
                self.e.emit_alu32_mem_imm(Alu::Cmp, freg(r, true), u32::MAX);
                self.e.emit_jcc(Cond::Ne, slow);
            }
        }
        // Past every check that could make this instruction trap: writing an f register
        // dirties the FP state (raised flags do too, when folded). A slow path taken below
        // (NaN result) writes f[rd] too, so FS is dirty on every path from here.
        let writes_f = !matches!(
            native,
            Native::Compare(_) | Native::ToInt { .. } | Native::MoveToInt
        );
        if writes_f {
            self.mark_fp_dirty();
        }
        let mut cache = self.fp_cache;
        match native {
            Native::Arith(op) => {
                let (a, b) = (cache.find(i.rs1, prec), cache.find(i.rs2, prec));
                if op == FpArith::Sqrt {
                    match a {
                        Some(x) => self.e.emit_fp_arith_reg(op, prec, 0, x),
                        None => self.e.emit_fp_arith(op, prec, 0, freg(i.rs1, false)),
                    }
                } else {
                    match a {
                        Some(x) => self.e.emit_fp_move(0, x),
                        None => self.e.emit_fp_load(prec, 0, freg(i.rs1, false)),
                    }
                    match b {
                        Some(x) => self.e.emit_fp_arith_reg(op, prec, 0, x),
                        None => self.e.emit_fp_arith(op, prec, 0, freg(i.rs2, false)),
                    }
                }
                self.fp_result(prec, i.rd, slow);
            }
            Native::Fused(f) => {
                for (x, r) in [(0, i.rs1), (1, i.rs2), (2, i.rs3)] {
                    match cache.find(r, prec) {
                        Some(slot) => self.e.emit_fp_move(x, slot),
                        None => self.e.emit_fp_load(prec, x, freg(r, false)),
                    }
                }
                self.e.emit_fma(f, prec);
                self.fp_result(prec, i.rd, slow);
            }
            Native::Compare(op) => {
                // flt a, b is b > a and fle a, b is b >= a: "above" conditions are false when
                // unordered. feq needs equal and ordered.
                let (first, second) = match op {
                    FeqS | FeqD => (i.rs1, i.rs2),
                    _ => (i.rs2, i.rs1),
                };
                let quiet = matches!(op, FeqS | FeqD);
                self.e.emit_fp_load(prec, 0, freg(first, false));
                self.e.emit_fp_compare(prec, quiet, 0, freg(second, false));
                match op {
                    FltS | FltD => self.e.emit_setcc(Cond::Gtu, Reg::Rax),
                    FleS | FleD => self.e.emit_setcc(Cond::Geu, Reg::Rax),
                    _ => {
                        // (Clearing eax first would clobber the compare's flags.)
                        let (unordered, done) = (self.e.label(), self.e.label());
                        self.e.emit_jump_if_unordered(unordered);
                        self.e.emit_setcc(Cond::Eq, Reg::Rax);
                        self.e.emit_jmp(done);
                        self.e.bind(unordered);
                        self.e.emit_load_imm(Reg::Rax, 0);
                        self.e.bind(done);
                    }
                }
                self.set(i.rd, Reg::Rax);
            }
            Native::SignInject(op) => {
                // Only the sign bit (bit 31 of the upper word) changes.
                self.e
                    .emit_load(Width::B32, false, Reg::Rax, freg(i.rs1, true));
                self.e
                    .emit_load(Width::B32, false, Reg::Rcx, freg(i.rs2, true));
                match op {
                    FsgnjxD => {
                        self.e.emit_alu32_imm32(Alu::And, Reg::Rcx, 0x8000_0000);
                        self.e.emit_alu32(Alu::Xor, Reg::Rax, Reg::Rcx);
                    }
                    _ => {
                        if op == FsgnjnD {
                            self.e.emit_alu32_imm32(Alu::Xor, Reg::Rcx, u32::MAX);
                        }
                        self.e.emit_alu32_imm32(Alu::And, Reg::Rcx, 0x8000_0000);
                        self.e.emit_alu32_imm32(Alu::And, Reg::Rax, 0x7fff_ffff);
                        self.e.emit_alu32(Alu::Or, Reg::Rax, Reg::Rcx);
                    }
                }
                self.e
                    .emit_load(Width::B32, false, Reg::Rcx, freg(i.rs1, false));
                self.e.emit_store(Width::B32, freg(i.rd, false), Reg::Rcx);
                self.e.emit_store(Width::B32, freg(i.rd, true), Reg::Rax);
            }
            Native::FromInt => {
                self.get(Reg::Rax, i.rs1);
                self.e.emit_cvt_i32_to_f64(0, Reg::Rax);
                self.e.emit_fp_store(Prec::Double, freg(i.rd, false), 0);
            }
            Native::ToInt { truncate } => {
                // x86 gives 0x8000_0000 for NaN and out of range, where RISC-V saturates:
                // that value (also the exact result for -2^31) is left to the helper.
                self.e.emit_fp_load(Prec::Double, 0, freg(i.rs1, false));
                self.e.emit_cvt_f64_to_i32(Reg::Rax, 0, truncate);
                self.e.emit_alu32_imm32(Alu::Cmp, Reg::Rax, 0x8000_0000);
                self.e.emit_jcc(Cond::Eq, slow);
                self.set(i.rd, Reg::Rax);
            }
            Native::MoveToInt => {
                self.e
                    .emit_load(Width::B32, false, Reg::Rax, freg(i.rs1, false));
                self.set(i.rd, Reg::Rax);
            }
            Native::MoveFromInt => {
                self.get(Reg::Rax, i.rs1);
                self.e.emit_store(Width::B32, freg(i.rd, false), Reg::Rax);
                self.e.emit_store_imm32(freg(i.rd, true), u32::MAX);
            }
        }
        // Arithmetic leaves its result in xmm0 (`fp_result`): keep it in a slot as well.
        let cache_after = if matches!(native, Native::Arith(_) | Native::Fused(_)) {
            let slot = cache.put(i.rd, prec);
            self.e.emit_fp_move(slot, 0);
            cache
        } else {
            FpCache::default()
        };
        self.e.bind(resume);
        let trap = self.trap_exit(index, pc);
        self.ool.push(OutOfLine::FpOp {
            dirty,
            entry: slow,
            resume,
            insn: *i,
            trap,
            cache_after,
        });
        self.fp_cache_next = cache_after;
        true
    }

    /// Store the result in xmm0 to f[rd] (boxing singles), unless it is a NaN: then `slow`.
    fn fp_result(&mut self, prec: Prec, rd: u8, slow: crate::exec::t1::emit::Label) {
        self.e.emit_fp_test_nan(prec, 0);
        self.e.emit_jump_if_unordered(slow);
        self.e.emit_fp_store(prec, freg(rd, false), 0);
        if prec == Prec::Single {
            self.e.emit_store_imm32(freg(rd, true), u32::MAX);
        }
    }

    /// Jump to `slow` if mstatus.FS is off, once per block: nothing inside a block can turn it
    /// off, and a slow path that returns (its helper traps with FP off) leaves it on, so past
    /// the first test FS is on on every path.
    pub(super) fn test_fp_on(&mut self, slow: crate::exec::t1::emit::Label) {
        if !self.fp_enabled_checked {
            self.e.emit_alu32_mem_imm(Alu::Test, mstatus(), MSTATUS_FS);
            self.e.emit_jcc(Cond::Eq, slow);
            self.fp_enabled_checked = true;
        }
    }

    /// Mark mstatus.FS dirty, once per block: the caller's slow path writes an f register
    /// too, so FS is dirty on every path from here.
    pub(super) fn mark_fp_dirty(&mut self) {
        if !self.fp_dirty_marked {
            self.e
                .emit_alu32_mem_imm(Alu::Or, mstatus(), MSTATUS_FS | MSTATUS_SD);
            self.fp_dirty_marked = true;
        }
    }

    /// Load every slot of `cache` from the hart (after a helper call, which may have
    /// clobbered them).
    pub(super) fn reload_fp_cache(&mut self, cache: &FpCache) {
        for (i, slot) in cache.slots.iter().enumerate() {
            if let Some((r, prec)) = *slot {
                self.e
                    .emit_fp_load(prec, FP_CACHE_FIRST + i as u8, freg(r, false));
            }
        }
    }

    /// The slow path of a native FP operation: the helper runs it completely.
    pub(super) fn emit_fp_slow_path(&mut self, insn: &Insn, trap: crate::exec::t1::emit::Label) {
        self.helper_args();
        self.insn_arg(insn);
        self.e.emit_call(self.helpers.fp);
        self.counters_after_call();
        self.reload_caller_saved();
        if matches!(
            insn.op,
            Op::FeqS
                | Op::FltS
                | Op::FleS
                | Op::FeqD
                | Op::FltD
                | Op::FleD
                | Op::FcvtWD
                | Op::FmvXW
        ) {
            // The helper wrote x[rd].
            self.reload(insn.rd);
        }
        self.e.emit_alu32(Alu::Test, Reg::Rax, Reg::Rax);
        self.e.emit_jcc(Cond::Ne, trap);
    }
}
