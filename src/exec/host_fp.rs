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
