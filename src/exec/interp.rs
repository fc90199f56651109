//! The interpreter: executes a decoded block with one `match` per instruction, no re-decoding
//! and no per-instruction interrupt checks. It is the reference every other tier must equal.

use super::mem::{amo, load, store};
use super::platform::Platform;
use crate::cpu::{fpu, Exception, Hart, Priv, Trap};
use crate::cpu::csr::{MSTATUS_TSR, MSTATUS_TVM, MSTATUS_TW};
use crate::isa::{Insn, Op};

/// How a block ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockExit {
    /// Ran to its end (or took a branch): `hart.pc` is the next pc.
    Next,
    /// An instruction trapped: `hart.pc` is its address, it did not retire.
    Trap(Trap),
    /// `hart.pc` is the next pc, and decoded code may be stale (fence.i, sfence.vma, satp).
    FlushCode,
    /// WFI retired: `hart.pc` is the next pc; the run loop may idle until an interrupt.
    Wfi,
}

#[inline(always)]
fn sext8(v: u8) -> u32 {
    v as i8 as i32 as u32
}

#[inline(always)]
fn sext16(v: u16) -> u32 {
    v as i16 as i32 as u32
}

/// Carry-less multiply: the low and high words of the 64-bit product.
#[inline]
fn clmul64(a: u32, b: u32) -> u64 {
    let mut r = 0u64;
    for i in 0..32 {
        if b >> i & 1 != 0 {
            r ^= (a as u64) << i;
        }
    }
    r
}

/// Execute `insns` (a block starting at `hart.pc`).
#[inline(never)]
pub fn run_block<P: Platform>(hart: &mut Hart, plat: &mut P, insns: &[Insn]) -> BlockExit {
    let mut pc = hart.pc;
    let mut retired: u64 = 0;

    macro_rules! trap {
        ($t:expr) => {{
            hart.pc = pc;
            hart.instret += retired;
            return BlockExit::Trap($t);
        }};
    }
    macro_rules! tri {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(t) => trap!(t),
            }
        };
    }
    macro_rules! jump {
        ($target:expr) => {{
            hart.pc = $target;
            hart.instret += retired + 1;
            return BlockExit::Next;
        }};
    }
    macro_rules! fp_check {
        ($i:expr) => {
            if !hart.fp_enabled() {
                trap!(Trap::illegal($i.raw));
            }
        };
    }

    for i in insns {
        let rs1 = hart.reg(i.rs1);
        let rs2 = hart.reg(i.rs2);
        let imm = i.imm as u32;
        let next = pc.wrapping_add(i.len as u32);
        let value: u32 = match i.op {
            Op::Illegal => trap!(Trap::illegal(i.raw)),
            Op::Lui => imm,
            Op::Auipc => pc.wrapping_add(imm),
            Op::Jal => {
                hart.set_reg(i.rd, next);
                jump!(pc.wrapping_add(imm));
            }
            Op::Jalr => {
                let target = rs1.wrapping_add(imm) & !1;
                hart.set_reg(i.rd, next);
                jump!(target);
            }
            Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
                let taken = match i.op {
                    Op::Beq => rs1 == rs2,
                    Op::Bne => rs1 != rs2,
                    Op::Blt => (rs1 as i32) < (rs2 as i32),
                    Op::Bge => (rs1 as i32) >= (rs2 as i32),
                    Op::Bltu => rs1 < rs2,
                    _ => rs1 >= rs2,
                };
                jump!(if taken { pc.wrapping_add(imm) } else { next });
            }
            Op::Lb => sext8(tri!(load::<u8, P>(hart, plat, rs1.wrapping_add(imm)))),
            Op::Lh => sext16(tri!(load::<u16, P>(hart, plat, rs1.wrapping_add(imm)))),
            Op::Lw => tri!(load::<u32, P>(hart, plat, rs1.wrapping_add(imm))),
            Op::Lbu => tri!(load::<u8, P>(hart, plat, rs1.wrapping_add(imm))) as u32,
            Op::Lhu => tri!(load::<u16, P>(hart, plat, rs1.wrapping_add(imm))) as u32,
            Op::Sb => {
                tri!(store(hart, plat, rs1.wrapping_add(imm), rs2 as u8));
                retired += 1;
                pc = next;
                continue;
            }
            Op::Sh => {
                tri!(store(hart, plat, rs1.wrapping_add(imm), rs2 as u16));
                retired += 1;
                pc = next;
                continue;
            }
            Op::Sw => {
                tri!(store(hart, plat, rs1.wrapping_add(imm), rs2));
                retired += 1;
                pc = next;
                continue;
            }
            Op::Addi => rs1.wrapping_add(imm),
            Op::Slti => ((rs1 as i32) < (imm as i32)) as u32,
            Op::Sltiu => (rs1 < imm) as u32,
            Op::Xori => rs1 ^ imm,
            Op::Ori => rs1 | imm,
            Op::Andi => rs1 & imm,
            Op::Slli => rs1 << (imm & 31),
            Op::Srli => rs1 >> (imm & 31),
            Op::Srai => ((rs1 as i32) >> (imm & 31)) as u32,
            Op::Add => rs1.wrapping_add(rs2),
            Op::Sub => rs1.wrapping_sub(rs2),
            Op::Sll => rs1 << (rs2 & 31),
            Op::Slt => ((rs1 as i32) < (rs2 as i32)) as u32,
            Op::Sltu => (rs1 < rs2) as u32,
            Op::Xor => rs1 ^ rs2,
            Op::Srl => rs1 >> (rs2 & 31),
            Op::Sra => ((rs1 as i32) >> (rs2 & 31)) as u32,
            Op::Or => rs1 | rs2,
            Op::And => rs1 & rs2,
            Op::Fence => {
                retired += 1;
                pc = next;
                continue;
            }
            Op::FenceI => {
                hart.pc = next;
                hart.instret += retired + 1;
                return BlockExit::FlushCode;
            }
            Op::Ecall => trap!(Trap::new(
                match hart.prv {
                    Priv::User => Exception::EcallFromU,
                    Priv::Supervisor => Exception::EcallFromS,
                    Priv::Machine => Exception::EcallFromM,
                },
                0
            )),
            Op::Ebreak => trap!(Trap::new(Exception::Breakpoint, pc)),
            Op::Mret => {
                if hart.prv != Priv::Machine {
                    trap!(Trap::illegal(i.raw));
                }
                hart.instret += retired + 1;
                hart.mret();
                return BlockExit::FlushCode;
            }
            Op::Sret => {
                let tsr = hart.csr.mstatus & MSTATUS_TSR != 0;
                if hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tsr) {
                    trap!(Trap::illegal(i.raw));
                }
                hart.instret += retired + 1;
                hart.sret();
                return BlockExit::FlushCode;
            }
            Op::Wfi => {
                let tw = hart.csr.mstatus & MSTATUS_TW != 0;
                if hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tw) {
                    trap!(Trap::illegal(i.raw));
                }
                hart.pc = next;
                hart.instret += retired + 1;
                return BlockExit::Wfi;
            }
            Op::SfenceVma => {
                let tvm = hart.csr.mstatus & MSTATUS_TVM != 0;
                if hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tvm) {
                    trap!(Trap::illegal(i.raw));
                }
                hart.tlb.flush();
                hart.pc = next;
                hart.instret += retired + 1;
                return BlockExit::FlushCode;
            }
            Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
                let csr = i.imm as u16;
                let operand = match i.op {
                    Op::Csrrw | Op::Csrrs | Op::Csrrc => rs1,
                    _ => i.rs1 as u32,
                };
                let is_rw = matches!(i.op, Op::Csrrw | Op::Csrrwi);
                // csrrw with rd = x0 does not read; csrrs/c with a zero source do not write.
                let old = if is_rw && i.rd == 0 {
                    0
                } else {
                    tri!(hart.csr_read(csr, i.raw))
                };
                let effect = if is_rw || i.rs1 != 0 {
                    let new = match i.op {
                        Op::Csrrw | Op::Csrrwi => operand,
                        Op::Csrrs | Op::Csrrsi => old | operand,
                        _ => old & !operand,
                    };
                    Some(tri!(hart.csr_write(csr, new, i.raw)))
                } else {
                    None
                };
                hart.set_reg(i.rd, old);
                hart.pc = next;
                hart.instret += retired + 1;
                if effect.is_some_and(|e| e.translation_changed) {
                    return BlockExit::FlushCode;
                }
                return BlockExit::Next;
            }
            Op::Mul => rs1.wrapping_mul(rs2),
            Op::Mulh => ((rs1 as i32 as i64 * rs2 as i32 as i64) >> 32) as u32,
            Op::Mulhsu => ((rs1 as i32 as i64).wrapping_mul(rs2 as u64 as i64) >> 32) as u32,
            Op::Mulhu => ((rs1 as u64 * rs2 as u64) >> 32) as u32,
            Op::Div => {
                if rs2 == 0 {
                    u32::MAX
                } else {
                    (rs1 as i32).wrapping_div(rs2 as i32) as u32
                }
            }
            Op::Divu => rs1.checked_div(rs2).unwrap_or(u32::MAX),
            Op::Rem => {
                if rs2 == 0 {
                    rs1
                } else {
                    (rs1 as i32).wrapping_rem(rs2 as i32) as u32
                }
            }
            Op::Remu => {
                if rs2 == 0 {
                    rs1
                } else {
                    rs1 % rs2
                }
            }
            Op::LrW => {
                if rs1 & 3 != 0 {
                    trap!(Trap::new(Exception::LoadMisaligned, rs1));
                }
                let v = tri!(load::<u32, P>(hart, plat, rs1));
                hart.reservation = Some(rs1);
                v
            }
            Op::ScW => {
                if rs1 & 3 != 0 {
                    trap!(Trap::new(Exception::StoreMisaligned, rs1));
                }
                if hart.reservation.take() == Some(rs1) {
                    tri!(store(hart, plat, rs1, rs2));
                    0
                } else {
                    1
                }
            }
            Op::AmoswapW => tri!(amo(hart, plat, rs1, |_| rs2)),
            Op::AmoaddW => tri!(amo(hart, plat, rs1, |m| m.wrapping_add(rs2))),
            Op::AmoxorW => tri!(amo(hart, plat, rs1, |m| m ^ rs2)),
            Op::AmoandW => tri!(amo(hart, plat, rs1, |m| m & rs2)),
            Op::AmoorW => tri!(amo(hart, plat, rs1, |m| m | rs2)),
            Op::AmominW => tri!(amo(hart, plat, rs1, |m| (m as i32).min(rs2 as i32) as u32)),
            Op::AmomaxW => tri!(amo(hart, plat, rs1, |m| (m as i32).max(rs2 as i32) as u32)),
            Op::AmominuW => tri!(amo(hart, plat, rs1, |m| m.min(rs2))),
            Op::AmomaxuW => tri!(amo(hart, plat, rs1, |m| m.max(rs2))),
            Op::Flw => {
                fp_check!(i);
                let v = tri!(load::<u32, P>(hart, plat, rs1.wrapping_add(imm)));
                hart.f[i.rd as usize] = 0xffff_ffff_0000_0000 | v as u64;
                hart.mark_fp_dirty();
                retired += 1;
                pc = next;
                continue;
            }
            Op::Fld => {
                fp_check!(i);
                let v = tri!(load::<u64, P>(hart, plat, rs1.wrapping_add(imm)));
                hart.f[i.rd as usize] = v;
                hart.mark_fp_dirty();
                retired += 1;
                pc = next;
                continue;
            }
            Op::Fsw => {
                fp_check!(i);
                let v = hart.f[i.rs2 as usize] as u32;
                tri!(store(hart, plat, rs1.wrapping_add(imm), v));
                retired += 1;
                pc = next;
                continue;
            }
            Op::Fsd => {
                fp_check!(i);
                let v = hart.f[i.rs2 as usize];
                tri!(store(hart, plat, rs1.wrapping_add(imm), v));
                retired += 1;
                pc = next;
                continue;
            }
            Op::FmaddS
            | Op::FmsubS
            | Op::FnmsubS
            | Op::FnmaddS
            | Op::FaddS
            | Op::FsubS
            | Op::FmulS
            | Op::FdivS
            | Op::FsqrtS
            | Op::FsgnjS
            | Op::FsgnjnS
            | Op::FsgnjxS
            | Op::FminS
            | Op::FmaxS
            | Op::FcvtWS
            | Op::FcvtWuS
            | Op::FmvXW
            | Op::FeqS
            | Op::FltS
            | Op::FleS
            | Op::FclassS
            | Op::FcvtSW
            | Op::FcvtSWu
            | Op::FmvWX
            | Op::FmaddD
            | Op::FmsubD
            | Op::FnmsubD
            | Op::FnmaddD
            | Op::FaddD
            | Op::FsubD
            | Op::FmulD
            | Op::FdivD
            | Op::FsqrtD
            | Op::FsgnjD
            | Op::FsgnjnD
            | Op::FsgnjxD
            | Op::FminD
            | Op::FmaxD
            | Op::FcvtSD
            | Op::FcvtDS
            | Op::FeqD
            | Op::FltD
            | Op::FleD
            | Op::FclassD
            | Op::FcvtWD
            | Op::FcvtWuD
            | Op::FcvtDW
            | Op::FcvtDWu => {
                tri!(fpu::execute(hart, i));
                retired += 1;
                pc = next;
                continue;
            }
            Op::Sh1add => (rs1 << 1).wrapping_add(rs2),
            Op::Sh2add => (rs1 << 2).wrapping_add(rs2),
            Op::Sh3add => (rs1 << 3).wrapping_add(rs2),
            Op::Andn => rs1 & !rs2,
            Op::Orn => rs1 | !rs2,
            Op::Xnor => !(rs1 ^ rs2),
            Op::Clz => rs1.leading_zeros(),
            Op::Ctz => rs1.trailing_zeros(),
            Op::Cpop => rs1.count_ones(),
            Op::Max => (rs1 as i32).max(rs2 as i32) as u32,
            Op::Maxu => rs1.max(rs2),
            Op::Min => (rs1 as i32).min(rs2 as i32) as u32,
            Op::Minu => rs1.min(rs2),
            Op::SextB => sext8(rs1 as u8),
            Op::SextH => sext16(rs1 as u16),
            Op::ZextH => rs1 & 0xffff,
            Op::Rol => rs1.rotate_left(rs2 & 31),
            Op::Ror => rs1.rotate_right(rs2 & 31),
            Op::Rori => rs1.rotate_right(imm & 31),
            Op::OrcB => {
                let mut r = 0;
                for b in 0..4 {
                    if rs1 >> (8 * b) & 0xff != 0 {
                        r |= 0xff << (8 * b);
                    }
                }
                r
            }
            Op::Rev8 => rs1.swap_bytes(),
            Op::Clmul => clmul64(rs1, rs2) as u32,
            Op::Clmulh => (clmul64(rs1, rs2) >> 32) as u32,
            Op::Clmulr => (clmul64(rs1, rs2) >> 31) as u32,
            Op::Bclr => rs1 & !(1 << (rs2 & 31)),
            Op::Bclri => rs1 & !(1 << (imm & 31)),
            Op::Bext => rs1 >> (rs2 & 31) & 1,
            Op::Bexti => rs1 >> (imm & 31) & 1,
            Op::Binv => rs1 ^ (1 << (rs2 & 31)),
            Op::Binvi => rs1 ^ (1 << (imm & 31)),
            Op::Bset => rs1 | (1 << (rs2 & 31)),
            Op::Bseti => rs1 | (1 << (imm & 31)),
            Op::CzeroEqz => {
                if rs2 == 0 {
                    0
                } else {
                    rs1
                }
            }
            Op::CzeroNez => {
                if rs2 != 0 {
                    0
                } else {
                    rs1
                }
            }
        };
        hart.set_reg(i.rd, value);
        retired += 1;
        pc = next;
    }
    hart.pc = pc;
    hart.instret += retired;
    BlockExit::Next
}
