//! Emulation of a misaligned load or store by whoever handles the misaligned trap (the built-in
//! SBI in system mode, as OpenSBI does): re-fetch and decode the instruction, then perform the
//! access one byte at a time through the normal translation and permission checks.

use super::block::fetch_host;
use super::mem::{load, store};
use super::platform::Platform;
use crate::cpu::{Exception, Hart, Trap};
use crate::isa::{insn_len, Insn, Op};

/// Read the 16-bit parcel at `pc` through the execute permission.
fn parcel<P: Platform>(hart: &mut Hart, plat: &mut P, pc: u32) -> Result<u16, Trap> {
    let host = fetch_host(hart, plat, pc)?;
    // SAFETY: `fetch_host` returned the host address of guest RAM at `pc`; the parcel is
    // 2-byte aligned (pcs are), so both bytes are on the same page.
    Ok(unsafe { std::ptr::read_unaligned(host as *const u16) })
}

/// The raw bits of the instruction at `pc` (16-bit forms zero-extended).
pub fn fetch_insn<P: Platform>(hart: &mut Hart, plat: &mut P, pc: u32) -> Result<u32, Trap> {
    debug_assert_eq!(pc & 1, 0);
    let lo = parcel(hart, plat, pc)?;
    if insn_len(lo) == 2 {
        return Ok(lo as u32);
    }
    // The upper half may live on the next page: it is fetched through its own translation.
    let hi = parcel(hart, plat, pc.wrapping_add(2))?;
    Ok(lo as u32 | (hi as u32) << 16)
}

/// Perform `insn` (a load or store whose address is misaligned) bytewise. Does not advance the
/// pc. Instructions that are not plain loads/stores (AMOs, LR/SC) get the misaligned trap back.
pub fn emulate<P: Platform>(hart: &mut Hart, plat: &mut P, insn: &Insn) -> Result<(), Trap> {
    let base = hart.reg(insn.rs1);
    let addr = base.wrapping_add(insn.imm as u32);
    let load_bytes = |hart: &mut Hart, plat: &mut P, n: u32| -> Result<u64, Trap> {
        let mut v = 0u64;
        for i in 0..n {
            let b: u8 = load(hart, plat, addr.wrapping_add(i))?;
            v |= (b as u64) << (8 * i);
        }
        Ok(v)
    };
    let store_bytes = |hart: &mut Hart, plat: &mut P, n: u32, v: u64| -> Result<(), Trap> {
        for i in 0..n {
            store(hart, plat, addr.wrapping_add(i), (v >> (8 * i)) as u8)?;
        }
        Ok(())
    };
    match insn.op {
        Op::Lh => {
            let v = load_bytes(hart, plat, 2)? as u16 as i16 as i32 as u32;
            hart.set_reg(insn.rd, v);
        }
        Op::Lhu => {
            let v = load_bytes(hart, plat, 2)? as u32;
            hart.set_reg(insn.rd, v);
        }
        Op::Lw => {
            let v = load_bytes(hart, plat, 4)? as u32;
            hart.set_reg(insn.rd, v);
        }
        Op::Flw => {
            let v = load_bytes(hart, plat, 4)?;
            hart.f[insn.rd as usize] = 0xffff_ffff_0000_0000 | v;
            hart.mark_fp_dirty();
        }
        Op::Fld => {
            hart.f[insn.rd as usize] = load_bytes(hart, plat, 8)?;
            hart.mark_fp_dirty();
        }
        Op::Sh => store_bytes(hart, plat, 2, hart.reg(insn.rs2) as u64)?,
        Op::Sw => store_bytes(hart, plat, 4, hart.reg(insn.rs2) as u64)?,
        Op::Fsw => store_bytes(hart, plat, 4, hart.f[insn.rs2 as usize] & 0xffff_ffff)?,
        Op::Fsd => store_bytes(hart, plat, 8, hart.f[insn.rs2 as usize])?,
        Op::LrW => return Err(Trap::new(Exception::LoadMisaligned, addr)),
        _ => return Err(Trap::new(Exception::StoreMisaligned, base)),
    }
    Ok(())
}
