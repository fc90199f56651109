//! The hart: architectural state (`#[repr(C)]` so JIT code can address fields through
//! `offset_of!`), control and status registers, traps and the software TLB.

pub mod clock;
pub mod csr;
pub mod fpu;
pub mod mmu;
pub mod state;
pub mod tlb;
pub mod trap;

pub use clock::MachineClock;
pub use csr::Csrs;
pub use state::HartState;
pub use tlb::{Access, Tlb};
pub use trap::{Exception, Trap};

/// Privilege levels as encoded in mstatus.MPP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Priv {
    User = 0,
    Supervisor = 1,
    Machine = 3,
}

impl Priv {
    /// Decode a 2-bit privilege field; the reserved value 2 maps to User.
    pub fn from_bits(bits: u32) -> Priv {
        match bits & 3 {
            3 => Priv::Machine,
            1 => Priv::Supervisor,
            _ => Priv::User,
        }
    }
}

/// The ISA extensions this CPU implements, in canonical order (single letters first). The
/// device tree's `riscv,isa` and `riscv,isa-extensions` are generated from this list.
pub const ISA_EXTENSIONS: &[&str] = &[
    "i", "m", "a", "f", "d", "c", "zicntr", "zicsr", "zifencei", "zabha", "zacas", "zfh", "zfhmin",
    "zba", "zbb", "zbc", "zbs", "zicond", "sstc",
];

/// Floating-point exception flags (fflags bits).
pub mod fflags {
    pub const NX: u8 = 1 << 0;
    pub const UF: u8 = 1 << 1;
    pub const OF: u8 = 1 << 2;
    pub const DZ: u8 = 1 << 3;
    pub const NV: u8 = 1 << 4;
}

/// One hart: its architectural state (everything up to and including `instret`, plus the
/// machine clock's value) and host caches that are rebuilt, never saved: the TLB (host
/// addresses), the code-page set (host addresses of decoded code) and the clock's host anchor.
/// [`Hart::state`] and [`Hart::restore`] move the architectural part in and out
/// (see [`state`]). `#[repr(C)]`: compiled code addresses fields through `offset_of!`.
#[repr(C)]
pub struct Hart {
    /// Integer registers; `x[0]` is kept at zero (writes to it are discarded by every tier).
    pub x: [u32; 32],
    pub pc: u32,
    /// Accrued FP exception flags (`fcsr[4:0]`).
    pub fflags: u8,
    /// Dynamic rounding mode (`fcsr[7:5]`).
    pub frm: u8,
    /// Current privilege level.
    pub prv: Priv,
    pub _pad0: u8,
    /// FP registers; single values are NaN-boxed (upper 32 bits all ones).
    pub f: [u64; 32],
    /// Address reserved by LR.W, if any.
    pub reservation: Option<u32>,
    pub csr: Csrs,
    /// Retired instructions (minstret); mcycle reads the same count.
    pub instret: u64,
    // Host caches from here on.
    /// Virtual page -> host pointer (a cache of page-table walks).
    pub tlb: Tlb,
    /// RAM pages holding decoded code (stores to them invalidate it).
    pub code_pages: tlb::CodePages,
    /// The machine clock (`time`, CLINT `mtime`): its value is state, its anchor a host
    /// instant.
    pub clock: MachineClock,
}

impl Default for Hart {
    fn default() -> Self {
        Self::new()
    }
}

impl Hart {
    /// A hart in M-mode at pc 0 with every register zero.
    pub fn new() -> Self {
        Hart {
            x: [0; 32],
            pc: 0,
            fflags: 0,
            frm: 0,
            prv: Priv::Machine,
            _pad0: 0,
            f: [0; 32],
            reservation: None,
            csr: Csrs::new(),
            instret: 0,
            tlb: Tlb::new(),
            code_pages: tlb::CodePages::default(),
            clock: MachineClock::new(),
        }
    }

    /// Read an integer register.
    #[inline(always)]
    pub fn reg(&self, r: u8) -> u32 {
        self.x[r as usize & 31]
    }

    /// Write an integer register; writes to x0 are discarded.
    #[inline(always)]
    pub fn set_reg(&mut self, r: u8, v: u32) {
        if r != 0 {
            self.x[r as usize & 31] = v;
        }
    }

    /// The fcsr as software reads it.
    pub fn fcsr(&self) -> u32 {
        (self.fflags as u32 & 0x1f) | ((self.frm as u32 & 7) << 5)
    }

    /// Whether FP instructions are enabled (mstatus.FS != Off).
    #[inline(always)]
    pub fn fp_enabled(&self) -> bool {
        self.csr.mstatus & csr::MSTATUS_FS != 0
    }

    /// Record that FP state changed: mstatus.FS = Dirty (and SD).
    #[inline(always)]
    pub fn mark_fp_dirty(&mut self) {
        self.csr.mstatus |= csr::MSTATUS_FS | csr::MSTATUS_SD;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_is_at_offset_zero() {
        assert_eq!(std::mem::offset_of!(Hart, x), 0);
        assert_eq!(std::mem::offset_of!(Hart, pc), 128);
    }
}
