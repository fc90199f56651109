//! The operation table: for every [`Op`], its class (which shared semantics implement it and
//! how a tier must treat it), the registers it reads and writes, and whether it ends a block.
//! The interpreter, the block optimiser and the JIT tiers dispatch on [`OpClass`] with
//! exhaustive matches, and their unit tests walk [`Op::ALL`] against this table, so an
//! operation a tier forgets is a compile error or an explicit helper call, never silently
//! wrong.

use super::{Insn, Op};

/// How an operation is executed, and by which shared semantics (`crate::exec::semantics` and
/// friends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpClass {
    /// `x[rd] = alu(op, x[rs1], x[rs2], imm)`: pure, never traps (`semantics::alu`). `lui` is
    /// one too (its value is `imm`).
    Alu,
    /// `x[rd] = pc + imm`.
    Auipc,
    /// Conditional branch on `x[rs1]`, `x[rs2]` (`semantics::branch_taken`), to `pc + imm`.
    Branch,
    /// `x[rd] = pc + len; pc = pc + imm`.
    Jal,
    /// `x[rd] = pc + len; pc = (x[rs1] + imm) & !1`.
    Jalr,
    /// Integer load of `width` bytes from `x[rs1] + imm` into `x[rd]` (`exec::mem::load`).
    Load { width: u8, signed: bool },
    /// Integer store of the low `width` bytes of `x[rs2]` to `x[rs1] + imm`.
    Store { width: u8 },
    /// LR/SC and AMOs (`semantics::exec_atomic`).
    Atomic,
    /// FP loads and stores (`semantics::exec_fp_mem`).
    FpMem,
    /// FP computation (`cpu::fpu::execute`).
    Fp,
    /// `fence` (any encoding): nothing to do on one hart; one that orders stores before loads
    /// is a host full barrier in every tier, for the device worker threads that share guest
    /// memory ([`crate::isa::Insn::fence_orders_stores_before_loads`]).
    Fence,
    /// System instructions, CSR accesses and illegal encodings (`semantics::exec_system`).
    System,
}

/// What the table says about one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub class: OpClass,
    /// Integer source registers read: [`RS1`] | [`RS2`] | [`RD`].
    pub int_reads: u8,
    /// FP source registers read: [`RS1`] | [`RS2`] | [`RS3`].
    pub fp_reads: u8,
    /// Writes `x[rd]` (nothing when `rd` is x0).
    pub int_write: bool,
    /// Writes `f[rd]`.
    pub fp_write: bool,
    /// May change the pc non-sequentially, traps by design, or changes state that decoding or
    /// compiled code depends on: it is the last instruction of its block.
    pub ends_block: bool,
    /// Its `rd` and `rs2` are even/odd register pairs (RV32 `amocas.d`): each brings the next
    /// register along, except that the pair at x0 reads as zero and is never written.
    /// [`Insn::int_sources`] and [`Insn::int_dests`] spell this out.
    pub pairs: bool,
}

/// Operand bit for `rs1` in [`OpInfo::int_reads`] / [`OpInfo::fp_reads`].
pub const RS1: u8 = 1;
/// Operand bit for `rs2`.
pub const RS2: u8 = 2;
/// Operand bit for `rs3`.
pub const RS3: u8 = 4;
/// Operand bit for `rd` read as a source (compare-and-swap's expected value).
pub const RD: u8 = 8;

const fn info(
    class: OpClass,
    int_reads: u8,
    fp_reads: u8,
    int_write: bool,
    fp_write: bool,
) -> OpInfo {
    let ends_block = matches!(
        class,
        OpClass::Branch | OpClass::Jal | OpClass::Jalr | OpClass::System
    );
    OpInfo {
        class,
        int_reads,
        fp_reads,
        int_write,
        fp_write,
        ends_block,
        pairs: false,
    }
}

/// Integer operation reading `reads`, writing `x[rd]`.
const fn alu(reads: u8) -> OpInfo {
    info(OpClass::Alu, reads, 0, true, false)
}

/// FP operation reading FP registers `fp`, integer registers `int`, writing `x[rd]` if
/// `to_int`, else `f[rd]`.
const fn fp(fp_reads: u8, int_reads: u8, to_int: bool) -> OpInfo {
    info(OpClass::Fp, int_reads, fp_reads, to_int, !to_int)
}

impl Op {
    /// The operation with the highest discriminant.
    pub const LAST: Op = Op::FmvHX;

    /// Every operation, in discriminant order (`Op::ALL[op as usize] == op`).
    pub const ALL: [Op; Op::LAST as usize + 1] = {
        let mut all = [Op::Illegal; Op::LAST as usize + 1];
        let mut i = 0;
        while i < all.len() {
            all[i] = match Op::from_index(i as u8) {
                Some(op) => op,
                None => Op::Illegal,
            };
            i += 1;
        }
        all
    };

    /// The operation with discriminant `i`, if there is one.
    pub const fn from_index(i: u8) -> Option<Op> {
        if i > Op::LAST as u8 {
            return None;
        }
        // SAFETY: `Op` is `#[repr(u8)]` with contiguous discriminants from 0 (`Illegal`, the
        // first variant, has no explicit value and none has) to `Op::LAST`, the last variant;
        // `i` is within that range.
        Some(unsafe { std::mem::transmute::<u8, Op>(i) })
    }

    /// This operation's row of the table.
    pub const fn info(self) -> OpInfo {
        use Op::*;
        const R1: u8 = RS1;
        const R12: u8 = RS1 | RS2;
        const R123: u8 = RS1 | RS2 | RS3;
        match self {
            Lui => alu(0),
            Auipc => info(OpClass::Auipc, 0, 0, true, false),
            Jal => info(OpClass::Jal, 0, 0, true, false),
            Jalr => info(OpClass::Jalr, R1, 0, true, false),
            Beq | Bne | Blt | Bge | Bltu | Bgeu => info(OpClass::Branch, R12, 0, false, false),
            Lb => info(
                OpClass::Load {
                    width: 1,
                    signed: true,
                },
                R1,
                0,
                true,
                false,
            ),
            Lh => info(
                OpClass::Load {
                    width: 2,
                    signed: true,
                },
                R1,
                0,
                true,
                false,
            ),
            Lw => info(
                OpClass::Load {
                    width: 4,
                    signed: true,
                },
                R1,
                0,
                true,
                false,
            ),
            Lbu => info(
                OpClass::Load {
                    width: 1,
                    signed: false,
                },
                R1,
                0,
                true,
                false,
            ),
            Lhu => info(
                OpClass::Load {
                    width: 2,
                    signed: false,
                },
                R1,
                0,
                true,
                false,
            ),
            Sb => info(OpClass::Store { width: 1 }, R12, 0, false, false),
            Sh => info(OpClass::Store { width: 2 }, R12, 0, false, false),
            Sw => info(OpClass::Store { width: 4 }, R12, 0, false, false),
            Addi | Slti | Sltiu | Xori | Ori | Andi | Slli | Srli | Srai => alu(R1),
            Add | Sub | Sll | Slt | Sltu | Xor | Srl | Sra | Or | And => alu(R12),
            Fence => info(OpClass::Fence, 0, 0, false, false),
            // System instructions: CSR reads write rd; csrr*i take their source from the
            // rs1 field as an immediate.
            Csrrw | Csrrs | Csrrc => info(OpClass::System, R1, 0, true, false),
            Csrrwi | Csrrsi | Csrrci => info(OpClass::System, 0, 0, true, false),
            SfenceVma => info(OpClass::System, R12, 0, false, false),
            Illegal | FenceI | Ecall | Ebreak | Mret | Sret | Wfi => {
                info(OpClass::System, 0, 0, false, false)
            }
            Mul | Mulh | Mulhsu | Mulhu | Div | Divu | Rem | Remu => alu(R12),
            LrW => info(OpClass::Atomic, R1, 0, true, false),
            ScW | AmoswapW | AmoaddW | AmoxorW | AmoandW | AmoorW | AmominW | AmomaxW
            | AmominuW | AmomaxuW => info(OpClass::Atomic, R12, 0, true, false),
            AmoswapB | AmoaddB | AmoxorB | AmoandB | AmoorB | AmominB | AmomaxB | AmominuB
            | AmomaxuB | AmoswapH | AmoaddH | AmoxorH | AmoandH | AmoorH | AmominH | AmomaxH
            | AmominuH | AmomaxuH => info(OpClass::Atomic, R12, 0, true, false),
            AmocasB | AmocasH | AmocasW => info(OpClass::Atomic, R12 | RD, 0, true, false),
            AmocasD => OpInfo {
                pairs: true,
                ..info(OpClass::Atomic, R12 | RD, 0, true, false)
            },
            Flw | Fld | Flh => info(OpClass::FpMem, R1, 0, false, true),
            Fsw | Fsd | Fsh => info(OpClass::FpMem, R1, RS2, false, false),
            FmaddH | FmsubH | FnmsubH | FnmaddH => fp(R123, 0, false),
            FaddH | FsubH | FmulH | FdivH | FsgnjH | FsgnjnH | FsgnjxH | FminH | FmaxH => {
                fp(R12, 0, false)
            }
            FsqrtH | FcvtSH | FcvtHS | FcvtDH | FcvtHD => fp(R1, 0, false),
            FeqH | FltH | FleH => fp(R12, 0, true),
            FcvtWH | FcvtWuH | FmvXH | FclassH => fp(R1, 0, true),
            FcvtHW | FcvtHWu | FmvHX => fp(0, R1, false),
            FmaddS | FmsubS | FnmsubS | FnmaddS | FmaddD | FmsubD | FnmsubD | FnmaddD => {
                fp(R123, 0, false)
            }
            FaddS | FsubS | FmulS | FdivS | FsgnjS | FsgnjnS | FsgnjxS | FminS | FmaxS | FaddD
            | FsubD | FmulD | FdivD | FsgnjD | FsgnjnD | FsgnjxD | FminD | FmaxD => {
                fp(R12, 0, false)
            }
            FsqrtS | FsqrtD | FcvtSD | FcvtDS => fp(R1, 0, false),
            FeqS | FltS | FleS | FeqD | FltD | FleD => fp(R12, 0, true),
            FcvtWS | FcvtWuS | FmvXW | FclassS | FclassD | FcvtWD | FcvtWuD => fp(R1, 0, true),
            FcvtSW | FcvtSWu | FmvWX | FcvtDW | FcvtDWu => fp(0, R1, false),
            Sh1add | Sh2add | Sh3add => alu(R12),
            Andn | Orn | Xnor | Max | Maxu | Min | Minu | Rol | Ror => alu(R12),
            Clz | Ctz | Cpop | SextB | SextH | ZextH | Rori | OrcB | Rev8 => alu(R1),
            Clmul | Clmulh | Clmulr => alu(R12),
            Bclr | Bext | Binv | Bset => alu(R12),
            Bclri | Bexti | Binvi | Bseti => alu(R1),
            CzeroEqz | CzeroNez => alu(R12),
        }
    }

    /// This operation's class.
    #[inline(always)]
    pub const fn class(self) -> OpClass {
        self.info().class
    }
}

impl Insn {
    /// The integer registers this instruction reads, as a mask over x0..x31 (x0 included when
    /// named: it reads as zero).
    pub fn int_sources(&self) -> u32 {
        let info = self.op.info();
        // rs1 is an address: never a pair.
        [
            (RS1, self.rs1, false),
            (RS2, self.rs2, info.pairs),
            (RD, self.rd, info.pairs),
        ]
        .iter()
        .filter(|&&(bit, _, _)| info.int_reads & bit != 0)
        .fold(0, |mask, &(_, r, pairs)| mask | register_operand(r, pairs))
    }

    /// The integer registers this instruction may write, as a mask over x1..x31.
    pub fn int_dests(&self) -> u32 {
        let info = self.op.info();
        if !info.int_write {
            return 0;
        }
        register_operand(self.rd, info.pairs) & !1
    }
}

/// The registers operand `r` names: itself, or with `pairs` its even/odd pair (the pair at x0
/// is x0 alone: it reads as zero and is never written).
fn register_operand(r: u8, pairs: bool) -> u32 {
    let r = r & 31;
    match (pairs, r) {
        (true, 1..) => 3 << (r & !1),
        _ => 1 << r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_pairs_cover_the_odd_register_except_at_x0() {
        let cas = crate::isa::decode(0x28c5_362f); // amocas.d a2,a2,(a0)
        assert_eq!(cas.op, Op::AmocasD);
        assert_eq!(cas.int_sources(), 1 << 10 | 3 << 12);
        assert_eq!(cas.int_dests(), 3 << 12);
        let at_zero = crate::isa::decode(0x2805_302f); // amocas.d x0,x0,(a0)
        assert_eq!(at_zero.op, Op::AmocasD);
        assert_eq!(at_zero.int_sources(), 1 | 1 << 10);
        assert_eq!(at_zero.int_dests(), 0);
        let add = crate::isa::decode(0x00b5_0533); // add a0,a0,a1
        assert_eq!(add.int_sources(), 1 << 10 | 1 << 11);
        assert_eq!(add.int_dests(), 1 << 10);
    }

    #[test]
    fn all_lists_every_operation_in_order() {
        for (i, op) in Op::ALL.iter().enumerate() {
            assert_eq!(*op as usize, i);
        }
        assert_eq!(Op::from_index(Op::ALL.len() as u8), None);
    }

    #[test]
    fn block_enders_are_control_transfers_and_system_instructions() {
        for op in Op::ALL {
            let i = op.info();
            let control = matches!(
                i.class,
                OpClass::Branch | OpClass::Jal | OpClass::Jalr | OpClass::System
            );
            assert_eq!(i.ends_block, control, "{op:?}");
            // Nothing writes both register files.
            assert!(!(i.int_write && i.fp_write), "{op:?}");
        }
    }
}
