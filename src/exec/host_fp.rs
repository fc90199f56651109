//! The host's SSE floating point as the compiling tiers use it for native F/D work (tier 1's
//! GEN_FP templates, tier 2's native arithmetic): the MXCSR value native work starts from and
//! how MXCSR's exception flags map to RISC-V `fflags`.

use crate::cpu::fflags;

/// MXCSR with every exception masked, round to nearest even, no flush-to-zero or
/// denormals-are-zero, and no flags.
pub const MXCSR_CLEAN: u32 = 0x1f80;

/// MXCSR flag bits that have a RISC-V counterpart (all but DE, the denormal-operand flag).
pub const MXCSR_IEEE_FLAGS: u32 = 0x3d;

/// RISC-V `fflags` for each value of MXCSR's low six bits (IE DE ZE OE UE PE).
pub static MXCSR_TO_FFLAGS: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        let mut f = 0u8;
        if i & 0x01 != 0 {
            f |= fflags::NV;
        }
        if i & 0x04 != 0 {
            f |= fflags::DZ;
        }
        if i & 0x08 != 0 {
            f |= fflags::OF;
        }
        if i & 0x10 != 0 {
            f |= fflags::UF;
        }
        if i & 0x20 != 0 {
            f |= fflags::NX;
        }
        t[i] = f;
        i += 1;
    }
    t
};

/// Fold the IEEE flags MXCSR collected into `hart`'s `fflags`, and mark FS dirty if any was
/// raised, as the interpreter's commit does. With [`load_clean_mxcsr`] after the host work,
/// this is what compiled code with native FP operations does around a call out of it; the
/// helpers it calls do it themselves (`abi`'s folding helpers), so a call site is one call.
#[inline]
pub fn fold_mxcsr_flags(hart: &mut crate::cpu::Hart) {
    let mut mxcsr: u32 = 0;
    // SAFETY: `stmxcsr` writes the 4-byte MXCSR to the valid, aligned local it is given.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut mxcsr, options(nostack, preserves_flags))
    };
    let raised = MXCSR_TO_FFLAGS[(mxcsr & MXCSR_IEEE_FLAGS) as usize];
    if raised != 0 {
        hart.fflags |= raised;
        hart.csr.mstatus |= crate::cpu::csr::MSTATUS_FS | crate::cpu::csr::MSTATUS_SD;
    }
}

/// Load MXCSR clean ([`MXCSR_CLEAN`]): whatever host code ran since leaves no flag behind for
/// native guest FP operations to report.
#[inline]
pub fn load_clean_mxcsr() {
    let clean = MXCSR_CLEAN;
    // SAFETY: `ldmxcsr` reads 4 bytes from the valid local; the value masks every exception,
    // so no host FP operation can fault because of it.
    unsafe {
        std::arch::asm!("ldmxcsr [{}]", in(reg) &clean, options(nostack, preserves_flags, readonly))
    };
}
