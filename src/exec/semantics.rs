//! Instruction semantics shared by every tier: the integer ALU ([`alu`]), branch conditions,
//! LR/SC and AMOs, FP loads and stores, and system instructions (CSRs, xRET, WFI, fences,
//! ecall/ebreak). The interpreter's handlers, tier 1's helpers and tier 2's helpers all call
//! these, so an operation has one definition; which class of [`crate::isa::ops`] an operation
//! is in says which function defines it.

use super::contract::Exit;
use super::mem::{amo, load, store};
use super::platform::Platform;
use crate::cpu::csr::{MSTATUS_TSR, MSTATUS_TVM, MSTATUS_TW};
use crate::cpu::{Exception, Hart, Priv, Trap};
use crate::isa::{Insn, Op};

/// Read integer register `r` (the mask lets the compiler drop the bounds check).
#[inline(always)]
pub fn x(hart: &Hart, r: u8) -> u32 {
    hart.x[r as usize & 31]
}

/// The value of a pure integer operation ([`crate::isa::ops::OpClass::Alu`]): `a` = x[rs1],
/// `b` = x[rs2] (unused operands are ignored), `imm` the immediate. `None` exactly for the
/// operations outside that class (a unit test checks this against the table).
#[inline(always)]
pub fn alu(op: Op, a: u32, b: u32, imm: i32) -> Option<u32> {
    use Op::*;
    let imm = imm as u32;
    Some(match op {
        Lui => imm,
        Addi => a.wrapping_add(imm),
        Slti => ((a as i32) < (imm as i32)) as u32,
        Sltiu => (a < imm) as u32,
        Xori => a ^ imm,
        Ori => a | imm,
        Andi => a & imm,
        Slli => a << (imm & 31),
        Srli => a >> (imm & 31),
        Srai => ((a as i32) >> (imm & 31)) as u32,
        Add => a.wrapping_add(b),
        Sub => a.wrapping_sub(b),
        Sll => a << (b & 31),
        Slt => ((a as i32) < (b as i32)) as u32,
        Sltu => (a < b) as u32,
        Xor => a ^ b,
        Srl => a >> (b & 31),
        Sra => ((a as i32) >> (b & 31)) as u32,
        Or => a | b,
        And => a & b,
        Mul => a.wrapping_mul(b),
        Mulh => ((a as i32 as i64 * b as i32 as i64) >> 32) as u32,
        Mulhsu => ((a as i32 as i64).wrapping_mul(b as u64 as i64) >> 32) as u32,
        Mulhu => ((a as u64 * b as u64) >> 32) as u32,
        Div => {
            if b == 0 {
                u32::MAX
            } else {
                (a as i32).wrapping_div(b as i32) as u32
            }
        }
        Divu => a.checked_div(b).unwrap_or(u32::MAX),
        Rem => {
            if b == 0 {
                a
            } else {
                (a as i32).wrapping_rem(b as i32) as u32
            }
        }
        Remu => {
            if b == 0 {
                a
            } else {
                a % b
            }
        }
        Sh1add => (a << 1).wrapping_add(b),
        Sh2add => (a << 2).wrapping_add(b),
        Sh3add => (a << 3).wrapping_add(b),
        Andn => a & !b,
        Orn => a | !b,
        Xnor => !(a ^ b),
        Clz => a.leading_zeros(),
        Ctz => a.trailing_zeros(),
        Cpop => a.count_ones(),
        Max => (a as i32).max(b as i32) as u32,
        Maxu => a.max(b),
        Min => (a as i32).min(b as i32) as u32,
        Minu => a.min(b),
        SextB => sext8(a as u8),
        SextH => sext16(a as u16),
        ZextH => a & 0xffff,
        Rol => a.rotate_left(b & 31),
        Ror => a.rotate_right(b & 31),
        Rori => a.rotate_right(imm & 31),
        OrcB => orc_b(a),
        Rev8 => a.swap_bytes(),
        Clmul => clmul64(a, b) as u32,
        Clmulh => (clmul64(a, b) >> 32) as u32,
        Clmulr => (clmul64(a, b) >> 31) as u32,
        Bclr => a & !(1 << (b & 31)),
        Bclri => a & !(1 << (imm & 31)),
        Bext => a >> (b & 31) & 1,
        Bexti => a >> (imm & 31) & 1,
        Binv => a ^ (1 << (b & 31)),
        Binvi => a ^ (1 << (imm & 31)),
        Bset => a | (1 << (b & 31)),
        Bseti => a | (1 << (imm & 31)),
        CzeroEqz => {
            if b == 0 {
                0
            } else {
                a
            }
        }
        CzeroNez => {
            if b != 0 {
                0
            } else {
                a
            }
        }
        _ => return None,
    })
}

/// Whether branch `op` ([`crate::isa::ops::OpClass::Branch`]) is taken for operands `a` (rs1)
/// and `b` (rs2).
#[inline(always)]
pub fn branch_taken(op: Op, a: u32, b: u32) -> bool {
    match op {
        Op::Beq => a == b,
        Op::Bne => a != b,
        Op::Blt => (a as i32) < (b as i32),
        Op::Bge => (a as i32) >= (b as i32),
        Op::Bltu => a < b,
        _ => a >= b, // Bgeu
    }
}

/// Sign-extend a byte.
#[inline(always)]
pub fn sext8(v: u8) -> u32 {
    v as i8 as i32 as u32
}

/// Sign-extend a halfword.
#[inline(always)]
pub fn sext16(v: u16) -> u32 {
    v as i16 as i32 as u32
}

/// Carry-less multiply: the low and high words of the 64-bit product.
#[inline]
pub fn clmul64(a: u32, b: u32) -> u64 {
    let mut r = 0u64;
    for i in 0..32 {
        if b >> i & 1 != 0 {
            r ^= (a as u64) << i;
        }
    }
    r
}

/// Zbb `orc.b`: each nonzero byte becomes 0xff.
pub fn orc_b(v: u32) -> u32 {
    let mut r = 0;
    for b in 0..4 {
        if v >> (8 * b) & 0xff != 0 {
            r |= 0xff << (8 * b);
        }
    }
    r
}

/// The value an AMO of the A extension or Zabha stores, from the old value `m` and `x[rs2]`,
/// both sign-extended to 32 bits (min and max compare whole words; the store truncates).
fn amo_value(op: Op, m: u32, rs2: u32) -> u32 {
    use Op::*;
    match op {
        AmoswapW | AmoswapH | AmoswapB => rs2,
        AmoaddW | AmoaddH | AmoaddB => m.wrapping_add(rs2),
        AmoxorW | AmoxorH | AmoxorB => m ^ rs2,
        AmoandW | AmoandH | AmoandB => m & rs2,
        AmoorW | AmoorH | AmoorB => m | rs2,
        AmominW | AmominH | AmominB => (m as i32).min(rs2 as i32) as u32,
        AmomaxW | AmomaxH | AmomaxB => (m as i32).max(rs2 as i32) as u32,
        AmominuW | AmominuH | AmominuB => m.min(rs2),
        AmomaxuW | AmomaxuH | AmomaxuB => m.max(rs2),
        _ => unreachable!("{op:?} is not a read-modify-write AMO"),
    }
}

/// The 64-bit value of the even/odd register pair at `r` (low word in `r`); the pair at x0
/// reads as zero.
fn register_pair(hart: &Hart, r: u8) -> u64 {
    if r == 0 {
        0
    } else {
        u64::from(x(hart, r)) | u64::from(x(hart, r | 1)) << 32
    }
}

/// LR/SC or an AMO (`i`): the value for `rd` (for `amocas.d` its low word; the high word is
/// written here). Shared by every tier.
pub fn exec_atomic<P: Platform>(hart: &mut Hart, p: &mut P, i: &Insn) -> Result<u32, Trap> {
    use Op::*;
    let (rs1, rs2) = (x(hart, i.rs1), x(hart, i.rs2));
    match i.op {
        Op::LrW => {
            if rs1 & 3 != 0 {
                Err(Trap::new(Exception::LoadMisaligned, rs1))
            } else {
                load::<u32, P>(hart, p, rs1).inspect(|_| hart.reservation = Some(rs1))
            }
        }
        Op::ScW => {
            if rs1 & 3 != 0 {
                Err(Trap::new(Exception::StoreMisaligned, rs1))
            } else if hart.reservation.take() == Some(rs1) {
                store(hart, p, rs1, rs2).map(|()| 0)
            } else {
                Ok(1)
            }
        }
        AmoswapW | AmoaddW | AmoxorW | AmoandW | AmoorW | AmominW | AmomaxW | AmominuW
        | AmomaxuW => amo::<u32, P>(hart, p, rs1, |m| Some(amo_value(i.op, m, rs2))),
        AmoswapH | AmoaddH | AmoxorH | AmoandH | AmoorH | AmominH | AmomaxH | AmominuH
        | AmomaxuH => amo::<u16, P>(hart, p, rs1, |m| {
            Some(amo_value(i.op, m as i16 as u32, rs2 as i16 as u32) as u16)
        })
        .map(|m| m as i16 as u32),
        AmoswapB | AmoaddB | AmoxorB | AmoandB | AmoorB | AmominB | AmomaxB | AmominuB
        | AmomaxuB => amo::<u8, P>(hart, p, rs1, |m| {
            Some(amo_value(i.op, m as i8 as u32, rs2 as i8 as u32) as u8)
        })
        .map(|m| m as i8 as u32),
        AmocasW => {
            let expected = x(hart, i.rd);
            amo::<u32, P>(hart, p, rs1, |m| (m == expected).then_some(rs2))
        }
        AmocasH => {
            let expected = x(hart, i.rd) as u16;
            amo::<u16, P>(hart, p, rs1, |m| (m == expected).then_some(rs2 as u16))
                .map(|m| m as i16 as u32)
        }
        AmocasB => {
            let expected = x(hart, i.rd) as u8;
            amo::<u8, P>(hart, p, rs1, |m| (m == expected).then_some(rs2 as u8))
                .map(|m| m as i8 as u32)
        }
        AmocasD => {
            let (expected, new) = (register_pair(hart, i.rd), register_pair(hart, i.rs2));
            let old = amo::<u64, P>(hart, p, rs1, |m| (m == expected).then_some(new))?;
            // The caller writes the low word to rd; the high word goes to the pair's odd
            // register here (the pair at x0 is never written).
            if i.rd != 0 {
                hart.set_reg(i.rd + 1, (old >> 32) as u32);
            }
            Ok(old as u32)
        }
        _ => Err(Trap::illegal(i.raw)), // not reachable: only atomics are routed here
    }
}

/// An FP load or store (`i`), all paths. Shared by every tier.
pub fn exec_fp_mem<P: Platform>(hart: &mut Hart, p: &mut P, i: &Insn) -> Result<(), Trap> {
    if !hart.fp_enabled() {
        return Err(Trap::illegal(i.raw));
    }
    let va = x(hart, i.rs1).wrapping_add(i.imm as u32);
    match i.op {
        Op::Flw => load::<u32, P>(hart, p, va).map(|v| {
            hart.f[i.rd as usize & 31] = 0xffff_ffff_0000_0000 | v as u64;
            hart.mark_fp_dirty();
        }),
        Op::Fld => load::<u64, P>(hart, p, va).map(|v| {
            hart.f[i.rd as usize & 31] = v;
            hart.mark_fp_dirty();
        }),
        Op::Flh => load::<u16, P>(hart, p, va).map(|v| {
            hart.f[i.rd as usize & 31] = crate::cpu::fpu::nan_box_half(v);
            hart.mark_fp_dirty();
        }),
        Op::Fsh => {
            let v = hart.f[i.rs2 as usize & 31] as u16;
            store(hart, p, va, v)
        }
        Op::Fsw => {
            let v = hart.f[i.rs2 as usize & 31] as u32;
            store(hart, p, va, v)
        }
        Op::Fsd => {
            let v = hart.f[i.rs2 as usize & 31];
            store(hart, p, va, v)
        }
        _ => Err(Trap::illegal(i.raw)), // not reachable: only FP loads/stores are routed here
    }
}

/// System instruction `i` at guest `pc`, preceded by `index` retired instructions of its block
/// (not yet counted in `hart.instret`). Shared by every tier. Either way `hart.pc` and
/// `hart.instret` end up as the interpreter leaves them: after the instruction with the exit
/// code to leave the block with, or at the instruction (not retired) with the trap it raised.
pub fn exec_system(hart: &mut Hart, i: &Insn, pc: u32, index: u32) -> Result<Exit, Trap> {
    let next_pc = pc.wrapping_add(i.len as u32);
    hart.pc = pc;
    hart.instret += index as u64;
    // From here on `hart.pc`/`instret` describe this instruction: a trap just returns.
    macro_rules! illegal_if {
        ($cond:expr) => {
            if $cond {
                return Err(Trap::illegal(i.raw));
            }
        };
    }
    match i.op {
        Op::FenceI => {
            hart.pc = next_pc;
            hart.instret += 1;
            Ok(Exit::FLUSH_CODE)
        }
        Op::Ecall => {
            let cause = match hart.prv {
                Priv::User => Exception::EcallFromU,
                Priv::Supervisor => Exception::EcallFromS,
                Priv::Machine => Exception::EcallFromM,
            };
            Err(Trap::new(cause, 0))
        }
        Op::Ebreak => Err(Trap::new(Exception::Breakpoint, pc)),
        Op::Mret => {
            illegal_if!(hart.prv != Priv::Machine);
            hart.instret += 1;
            hart.mret();
            Ok(Exit::NEXT)
        }
        Op::Sret => {
            let tsr = hart.csr.mstatus & MSTATUS_TSR != 0;
            illegal_if!(hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tsr));
            hart.instret += 1;
            hart.sret();
            Ok(Exit::NEXT)
        }
        Op::Wfi => {
            let tw = hart.csr.mstatus & MSTATUS_TW != 0;
            illegal_if!(hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tw));
            hart.pc = next_pc;
            hart.instret += 1;
            Ok(Exit::WFI)
        }
        Op::SfenceVma => {
            let tvm = hart.csr.mstatus & MSTATUS_TVM != 0;
            illegal_if!(hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tvm));
            // Blocks are keyed by host address and every entry re-checks the execute TLB, so
            // a translation change needs a TLB flush, never a code flush.
            hart.tlb.flush();
            hart.pc = next_pc;
            hart.instret += 1;
            Ok(Exit::NEXT)
        }
        Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
            let csr = i.imm as u16;
            let operand = match i.op {
                Op::Csrrw | Op::Csrrs | Op::Csrrc => x(hart, i.rs1),
                _ => i.rs1 as u32,
            };
            let is_rw = matches!(i.op, Op::Csrrw | Op::Csrrwi);
            // csrrw with rd = x0 does not read; csrrs/c with a zero source do not write.
            let old = if is_rw && i.rd == 0 {
                0
            } else {
                hart.csr_read(csr, i.raw)?
            };
            // The instruction's own increment comes before its write, so a write to
            // minstret/mcycle replaces it (the value written is what the next instruction
            // reads).
            hart.instret += 1;
            if is_rw || i.rs1 != 0 {
                let new = match i.op {
                    Op::Csrrw | Op::Csrrwi => operand,
                    Op::Csrrs | Op::Csrrsi => old | operand,
                    _ => old & !operand,
                };
                // A translation change (satp, MPRV/SUM/MXR) flushes the TLB inside csr_write;
                // decoded blocks stay valid: they are keyed by host address and every block
                // entry re-checks the execute TLB.
                if let Err(t) = hart.csr_write(csr, new, i.raw) {
                    // A refused write changes nothing: the instruction did not retire.
                    hart.instret -= 1;
                    return Err(t);
                }
            }
            hart.set_reg(i.rd, old);
            hart.pc = next_pc;
            Ok(Exit::NEXT)
        }
        // Op::Illegal, and anything handler_for did not route elsewhere.
        _ => Err(Trap::illegal(i.raw)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::ops::OpClass;

    #[test]
    fn alu_covers_exactly_the_alu_class() {
        for op in Op::ALL {
            assert_eq!(
                alu(op, 5, 3, 1).is_some(),
                op.class() == OpClass::Alu,
                "{op:?}"
            );
        }
    }

    #[test]
    fn alu_edge_cases() {
        assert_eq!(alu(Op::Div, 0x8000_0000, u32::MAX, 0), Some(0x8000_0000));
        assert_eq!(alu(Op::Rem, 0x8000_0000, u32::MAX, 0), Some(0));
        assert_eq!(alu(Op::Divu, 7, 0, 0), Some(u32::MAX));
        assert_eq!(alu(Op::Remu, 7, 0, 0), Some(7));
        assert_eq!(alu(Op::Mulhsu, u32::MAX, u32::MAX, 0), Some(u32::MAX));
        assert_eq!(
            alu(Op::Clmulr, 0x8000_0000, 0x8000_0000, 0),
            Some(0x8000_0000)
        );
        assert_eq!(alu(Op::OrcB, 0x0100_2000, 0, 0), Some(0xff00_ff00));
    }
}
