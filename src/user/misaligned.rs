//! Emulation of misaligned loads and stores, as the Linux kernel does for user programs on
//! hardware that traps them. The engine raises LoadMisaligned/StoreMisaligned with the address
//! in tval; we re-decode the instruction at pc, perform the access bytewise with the normal
//! permission checks, and step over it. Misaligned atomics are fatal (SIGBUS), as on Linux.

use crate::cpu::{Hart, Trap};
use crate::exec::platform::{Resume, Stop};
use crate::isa::{decode, insn_len, Op};

use super::mem::perm;
use super::signal::sig;
use super::{fatal_signal, Process};

/// What the trapping instruction does.
enum Access {
    Load { width: u32, signed: bool },
    Store { width: u32 },
    FpLoad { width: u32 },
    FpStore { width: u32 },
}

/// Fetch the instruction bits at `pc` (2 or 4 bytes) through the guest's execute permission.
fn fetch(p: &Process, pc: u32) -> Option<u32> {
    let half = |va: u32| -> Option<u16> {
        if p.mem.page_perm(va) & perm::X == 0 || p.mem.page_perm(va.wrapping_add(1)) & perm::X == 0
        {
            return None;
        }
        // SAFETY: both bytes are on guest-executable (hence mapped) pages inside the
        // reservation; an unaligned read is fine for read_unaligned.
        let v = unsafe { std::ptr::read_unaligned(p.mem.host_ptr(va).cast::<u16>()) };
        Some(u16::from_le(v))
    };
    let lo = half(pc)?;
    if insn_len(lo) == 2 {
        return Some(lo as u32);
    }
    let hi = half(pc.wrapping_add(2))?;
    Some(lo as u32 | (hi as u32) << 16)
}

/// Emulate the misaligned access that raised `trap` at `hart.pc`.
pub(super) fn emulate(p: &mut Process, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
    let pc = hart.pc;
    let addr = trap.tval;
    let Some(bits) = fetch(p, pc) else {
        return Err(fatal_signal(sig::SIGSEGV, pc, Some(pc)));
    };
    let insn = decode(bits);
    let access = match insn.op {
        Op::Lh => Access::Load {
            width: 2,
            signed: true,
        },
        Op::Lhu => Access::Load {
            width: 2,
            signed: false,
        },
        Op::Lw => Access::Load {
            width: 4,
            signed: true,
        },
        Op::Sh => Access::Store { width: 2 },
        Op::Sw => Access::Store { width: 4 },
        Op::Flw => Access::FpLoad { width: 4 },
        Op::Fld => Access::FpLoad { width: 8 },
        Op::Fsw => Access::FpStore { width: 4 },
        Op::Fsd => Access::FpStore { width: 8 },
        // Misaligned LR/SC/AMO (and anything unexpected) cannot be emulated atomically.
        _ => return Err(fatal_signal(sig::SIGBUS, pc, Some(addr))),
    };
    let segv = |f: super::mem::Fault| fatal_signal(sig::SIGSEGV, pc, Some(f.addr));
    match access {
        Access::Load { width, signed } => {
            let mut b = [0u8; 8];
            p.mem.read(addr, &mut b[..width as usize]).map_err(segv)?;
            let raw = u64::from_le_bytes(b) as u32;
            let value = match (width, signed) {
                (2, true) => raw as u16 as i16 as i32 as u32,
                (2, false) => raw & 0xffff,
                _ => raw,
            };
            hart.set_reg(insn.rd, value);
        }
        Access::FpLoad { width } => {
            let mut b = [0u8; 8];
            p.mem.read(addr, &mut b[..width as usize]).map_err(segv)?;
            let raw = u64::from_le_bytes(b);
            hart.f[insn.rd as usize & 31] = if width == 4 {
                0xffff_ffff_0000_0000 | raw
            } else {
                raw
            };
            hart.mark_fp_dirty();
        }
        Access::Store { width } => {
            let value = hart.reg(insn.rs2).to_le_bytes();
            p.mem.write(addr, &value[..width as usize]).map_err(segv)?;
        }
        Access::FpStore { width } => {
            let value = hart.f[insn.rs2 as usize & 31].to_le_bytes();
            p.mem.write(addr, &value[..width as usize]).map_err(segv)?;
        }
    }
    hart.pc = pc.wrapping_add(insn.len as u32);
    Ok(if p.mem.take_code_written() {
        Resume::FlushCode
    } else {
        Resume::Continue
    })
}
