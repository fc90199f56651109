//! Misaligned loads and stores in user mode, handled as the Linux kernel does on hardware that
//! traps them: the shared emulation (`exec::misaligned`) performs the access bytewise with the
//! normal permission checks and we step over the instruction. A fault while emulating is a
//! SIGSEGV; misaligned atomics cannot be emulated atomically and are a SIGBUS, as on Linux.

use crate::cpu::{Exception, Hart, Trap};
use crate::exec::misaligned::{emulate as emulate_bytewise, fetch_insn};
use crate::exec::platform::{Resume, Stop};
use crate::isa::{decode, Op};

use super::mem::perm;
use super::signal::sig;
use super::{fatal_signal, Process};

/// Emulate the misaligned access that raised `trap` at `hart.pc`.
pub(super) fn emulate(p: &mut Process, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
    let pc = hart.pc;
    let bits = fetch_insn(hart, p, pc).map_err(|_| fatal_signal(sig::SIGSEGV, pc, Some(pc)))?;
    let insn = decode(bits);
    let is_store = matches!(insn.op, Op::Sh | Op::Sw | Op::Fsw | Op::Fsd);
    let is_plain = is_store || matches!(insn.op, Op::Lh | Op::Lhu | Op::Lw | Op::Flw | Op::Fld);
    if !is_plain {
        return Err(fatal_signal(sig::SIGBUS, pc, Some(trap.tval)));
    }
    if let Err(fault) = emulate_bytewise(hart, p, &insn) {
        let signal = match fault.exception() {
            Some(Exception::LoadMisaligned | Exception::StoreMisaligned) => sig::SIGBUS,
            _ => sig::SIGSEGV,
        };
        return Err(fatal_signal(signal, pc, Some(fault.tval)));
    }
    hart.pc = pc.wrapping_add(insn.len as u32);
    // A store into code must not leave stale decoded blocks behind.
    let wrote_code = is_store
        && [trap.tval, trap.tval.wrapping_add(7)]
            .iter()
            .any(|&va| p.mem.page_perm(va) & perm::X != 0);
    Ok(if wrote_code {
        Resume::FlushCode
    } else {
        Resume::Continue
    })
}
