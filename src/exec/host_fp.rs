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

/// MXCSR's six exception flag bits (IE DE ZE OE UE PE).
const MXCSR_FLAG_BITS: u32 = 0x3f;

/// MXCSR as it is now.
#[inline]
fn read_mxcsr() -> u32 {
    let mut mxcsr: u32 = 0;
    // SAFETY: `stmxcsr` writes the 4-byte MXCSR to the valid, aligned local it is given.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut mxcsr, options(nostack, preserves_flags))
    };
    mxcsr
}

/// Fold the IEEE flags MXCSR collected into `hart`'s `fflags` (FS dirty if any was raised, as
/// the interpreter's commit does) and load MXCSR clean if it held any flag.
///
/// Compiled code leaves the flags of its native FP operations in MXCSR: tier 1 across chained
/// blocks, a region until it leaves. Whatever takes over from compiled code calls this first:
/// the run loop when compiled code returns, and the folding helpers (`abi`) before their
/// work. MXCSR may also hold flags already folded (a region folds at its exit without loading
/// MXCSR clean); folding them again changes nothing, because nothing clears `fflags` or FS
/// without a helper or the run loop taking the flags first.
#[inline]
pub fn take_mxcsr_flags(hart: &mut crate::cpu::Hart) {
    let mxcsr = read_mxcsr();
    if mxcsr & MXCSR_FLAG_BITS != 0 {
        let raised = MXCSR_TO_FFLAGS[(mxcsr & MXCSR_IEEE_FLAGS) as usize];
        if raised != 0 {
            hart.fflags |= raised;
            hart.csr.mstatus |= crate::cpu::csr::MSTATUS_FS | crate::cpu::csr::MSTATUS_SD;
        }
        load_clean_mxcsr();
    }
}

/// Drop whatever flags host code raised in MXCSR (load it clean if it holds any), before
/// compiled code runs again: the flags it then finds in MXCSR are its own.
#[inline]
pub fn drop_mxcsr_flags() {
    if read_mxcsr() & MXCSR_FLAG_BITS != 0 {
        load_clean_mxcsr();
    }
}

/// Load MXCSR clean ([`MXCSR_CLEAN`]).
#[inline]
fn load_clean_mxcsr() {
    let clean = MXCSR_CLEAN;
    // SAFETY: `ldmxcsr` reads 4 bytes from the valid local; the value masks every exception,
    // so no host FP operation can fault because of it.
    unsafe {
        std::arch::asm!("ldmxcsr [{}]", in(reg) &clean, options(nostack, preserves_flags, readonly))
    };
}
