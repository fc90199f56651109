//! Block optimisation passes shared by every tier: they rewrite a block's decoded instructions
//! once, when the block is built, and the interpreter and tier 1 both run the result.
//!
//! - **Macro-op fusion** ([`fuse`]) marks common sequences as units ([`Fusion`]) that a tier
//!   runs with one handler or one template.
//! - **Constant folding** ([`fold_constants`]) tracks registers with values known within the
//!   block and rewrites what they feed: an operation whose inputs are all known becomes a
//!   load-immediate, a known operand becomes an immediate, a load, store or `jalr` through a
//!   known base gets an absolute address, and a branch on known values becomes a jump.
//!
//! Neither pass removes an instruction's effect: every register write still happens, in order,
//! so the guest state at any trap or exit is the unoptimised block's. `--no-constopt` and
//! `--no-fuse` turn the passes off; the lockstep tests compare both ways.

use super::semantics::{alu, branch_taken};
use crate::isa::ops::{OpClass, RS2};
use crate::isa::{Fusion, Insn, Op};

/// Which passes run (the CLI's `--no-constopt` / `--no-fuse` clear them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrOptions {
    pub constopt: bool,
    pub fuse: bool,
}

impl Default for IrOptions {
    fn default() -> Self {
        IrOptions {
            constopt: true,
            fuse: true,
        }
    }
}

/// Most instructions one load or store run covers (the head included).
pub const MAX_RUN: usize = 8;

/// Run the enabled passes over a block.
pub fn optimize(insns: &mut [Insn], opts: IrOptions) {
    if opts.fuse {
        fuse(insns);
    }
    if opts.constopt {
        fold_constants(insns);
    }
}

fn is_branch(op: Op) -> bool {
    op.class() == OpClass::Branch
}

/// ALU operations that may head a compare-and-branch unit.
fn is_cmp_head(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        Addi | Andi | Ori | Xori | Slti | Sltiu | Add | Sub | And | Or | Xor | Slt | Sltu
    )
}

/// Mark fusible sequences (see [`Fusion`]); instructions already in a unit are never part of
/// another.
pub fn fuse(insns: &mut [Insn]) {
    let mut i = 0;
    while i < insns.len() {
        let covered = fuse_at(insns, i);
        i += 1 + covered;
    }
}

/// Try to make a unit headed by `insns[i]`; returns how many instructions it covers.
fn fuse_at(insns: &mut [Insn], i: usize) -> usize {
    use Op::*;
    let Some(&next) = insns.get(i + 1) else {
        return 0;
    };
    let head = &mut insns[i];
    let r = head.rd;
    match (head.op, next.op) {
        (Lui, Addi) if r != 0 && next.rd == r && next.rs1 == r => {
            head.imm = head.imm.wrapping_add(next.imm);
            head.fusion = Fusion::LuiAddi;
            1
        }
        (Auipc, Addi) if r != 0 && next.rd == r && next.rs1 == r => {
            head.imm = head.imm.wrapping_add(next.imm);
            head.fusion = Fusion::AuipcAddi;
            1
        }
        (Auipc, Jalr) if r != 0 && next.rs1 == r => {
            head.fusion = Fusion::AuipcJalr;
            1
        }
        (Slli, Srli) if r != 0 && next.rd == r && next.rs1 == r && next.imm == head.imm => {
            head.op = Andi;
            head.imm = (u32::MAX >> (head.imm & 31)) as i32;
            head.fusion = Fusion::ShiftMask;
            1
        }
        (Lw, Lw) | (Sw, Sw) => {
            let (base, load) = (head.rs1, head.op == Lw);
            // A load into the base ends the run (later ones would use the new base).
            if load && head.rd == base {
                return 0;
            }
            let mut n = 1;
            while n < MAX_RUN {
                let Some(k) = insns.get(i + n) else { break };
                if k.op != insns[i].op || k.rs1 != base {
                    break;
                }
                n += 1;
                if load && k.rd == base {
                    break;
                }
            }
            let head = &mut insns[i];
            head.rs3 = (n - 1) as u8;
            head.fusion = if load { Fusion::LwRun } else { Fusion::SwRun };
            n - 1
        }
        (h, b) if r != 0 && is_cmp_head(h) && is_branch(b) && (next.rs1 == r || next.rs2 == r) => {
            head.fusion = Fusion::CmpBranch;
            1
        }
        _ => 0,
    }
}

/// Integer registers that operation `i` may write, as a bit mask over x0..x31.
fn writes(i: &Insn) -> u32 {
    i.int_dests()
}

/// Constant folding and propagation within the block (see the module docs). Fused units are
/// left as they are, except that the values they produce are tracked.
pub fn fold_constants(insns: &mut [Insn]) {
    use Op::*;
    // known[r]: the value of x[r] at this point of the block, if known.
    let mut known: [Option<u32>; 32] = [None; 32];
    known[0] = Some(0);
    let mut i = 0;
    while i < insns.len() {
        let covers = insns[i].covers();
        if covers > 0 {
            let head = insns[i];
            for k in &insns[i..=i + covers] {
                forget(&mut known, writes(k));
            }
            if head.fusion == Fusion::LuiAddi {
                known[head.rd as usize & 31] = Some(head.imm as u32);
            }
            i += 1 + covers;
            continue;
        }
        let insn = &mut insns[i];
        let (a, b) = (known[insn.rs1 as usize & 31], known[insn.rs2 as usize & 31]);
        let mut result = None;
        match insn.op {
            _ if insn.rd == 0 && insn.op.class() == OpClass::Alu => {}
            Lui => result = Some(insn.imm as u32),
            op if op.class() == OpClass::Alu => {
                let uses_rs2 = op.info().int_reads & RS2 != 0;
                match (a, b) {
                    (Some(a), Some(b)) => result = alu(op, a, b, insn.imm),
                    (Some(a), None) if !uses_rs2 => result = alu(op, a, 0, insn.imm),
                    (None, Some(c)) if uses_rs2 => immediate_form(insn, c, false),
                    (Some(c), None) if uses_rs2 => immediate_form(insn, c, true),
                    _ => {}
                }
                if let Some(v) = result {
                    *insn = load_immediate(insn, v);
                }
            }
            // Loads, stores and FP memory accesses through a known base: an absolute address.
            Lb | Lh | Lw | Lbu | Lhu | Sb | Sh | Sw | Flw | Fld | Fsw | Fsd | Jalr
                if insn.rs1 != 0 =>
            {
                if let Some(base) = a {
                    insn.imm = base.wrapping_add(insn.imm as u32) as i32;
                    insn.rs1 = 0;
                }
            }
            Beq | Bne | Blt | Bge | Bltu | Bgeu => {
                if let (Some(a), Some(b)) = (a, b) {
                    let offset = if branch_taken(insn.op, a, b) {
                        insn.imm
                    } else {
                        insn.len as i32
                    };
                    *insn = Insn {
                        op: Jal,
                        rd: 0,
                        rs1: 0,
                        rs2: 0,
                        imm: offset,
                        ..*insn
                    };
                }
            }
            _ => {}
        }
        forget(&mut known, writes(insn));
        if let Some(v) = result {
            known[insn.rd as usize & 31] = Some(v);
        }
        i += 1;
    }
}

/// Registers in `mask` no longer hold known values (x0 always does).
fn forget(known: &mut [Option<u32>; 32], mask: u32) {
    for (r, k) in known.iter_mut().enumerate().skip(1) {
        if mask & (1 << r) != 0 {
            *k = None;
        }
    }
}

/// `insn` (a register-register operation) as its immediate form with `c` as the immediate,
/// when it has one: `c` is the value of rs2, or with `swapped` (commutative operations only)
/// of rs1.
fn immediate_form(insn: &mut Insn, c: u32, swapped: bool) {
    use Op::*;
    if swapped && !matches!(insn.op, Add | And | Or | Xor) {
        return;
    }
    let (op, imm) = match insn.op {
        Add => (Addi, c),
        Sub => (Addi, c.wrapping_neg()),
        And => (Andi, c),
        Or => (Ori, c),
        Xor => (Xori, c),
        Sll => (Slli, c & 31),
        Srl => (Srli, c & 31),
        Sra => (Srai, c & 31),
        Slt => (Slti, c),
        Sltu => (Sltiu, c),
        _ => return,
    };
    if swapped {
        insn.rs1 = insn.rs2;
    }
    insn.op = op;
    insn.imm = imm as i32;
    insn.rs2 = 0;
}

/// `rd = v`, in place of `insn` (same pc length).
fn load_immediate(insn: &Insn, v: u32) -> Insn {
    Insn {
        op: Op::Lui,
        rs1: 0,
        rs2: 0,
        imm: v as i32,
        ..*insn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::decode;

    fn block(words: &[u32]) -> Vec<Insn> {
        words.iter().map(|&w| decode(w)).collect()
    }

    #[test]
    fn lui_addi_becomes_one_load_immediate() {
        // lui a0, 0x12345; addi a0, a0, -1
        let mut b = block(&[0x1234_5537, 0xfff5_0513]);
        fuse(&mut b);
        assert_eq!(b[0].fusion, Fusion::LuiAddi);
        assert_eq!(b[0].imm as u32, 0x1234_4fff);
        assert_eq!(b[0].covers(), 1);
    }

    #[test]
    fn folding_propagates_through_alu_and_addresses() {
        // addi a0, x0, 8; slli a1, a0, 2; lw a2, 4(a1); add a3, a2, a0
        let mut b = block(&[0x0080_0513, 0x0025_1593, 0x0045_a603, 0x00a6_06b3]);
        fold_constants(&mut b);
        assert_eq!((b[1].op, b[1].imm), (Op::Lui, 32));
        assert_eq!((b[2].op, b[2].rs1, b[2].imm), (Op::Lw, 0, 36));
        assert_eq!((b[3].op, b[3].rs1, b[3].imm), (Op::Addi, 12, 8));
    }

    #[test]
    fn known_branch_becomes_a_jump() {
        // addi a0, x0, 1; bne a0, x0, +16
        let mut b = block(&[0x0010_0513, 0x0005_1863]);
        fold_constants(&mut b);
        assert_eq!((b[1].op, b[1].rd, b[1].imm), (Op::Jal, 0, 16));
    }

    #[test]
    fn load_run_stops_at_a_load_into_its_base() {
        // lw a1, 0(a0); lw a0, 4(a0); lw a2, 8(a0)
        let mut b = block(&[0x0005_2583, 0x0045_2503, 0x0085_2603]);
        fuse(&mut b);
        assert_eq!((b[0].fusion, b[0].covers()), (Fusion::LwRun, 1));
        assert_eq!(b[2].fusion, Fusion::None);
    }
}
