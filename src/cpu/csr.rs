//! Control and status registers: storage, access rules (privilege, read-only, WARL masks) and
//! the side effects of writes. Unimplemented CSRs raise illegal-instruction.

use super::{Hart, Priv, Trap};

// CSR numbers.
pub const FFLAGS: u16 = 0x001;
pub const FRM: u16 = 0x002;
pub const FCSR: u16 = 0x003;
pub const SSTATUS: u16 = 0x100;
pub const SIE: u16 = 0x104;
pub const STVEC: u16 = 0x105;
pub const SCOUNTEREN: u16 = 0x106;
pub const SENVCFG: u16 = 0x10a;
pub const SSCRATCH: u16 = 0x140;
pub const SEPC: u16 = 0x141;
pub const SCAUSE: u16 = 0x142;
pub const STVAL: u16 = 0x143;
pub const SIP: u16 = 0x144;
pub const STIMECMP: u16 = 0x14d;
pub const STIMECMPH: u16 = 0x15d;
pub const SATP: u16 = 0x180;
pub const MSTATUS: u16 = 0x300;
pub const MISA: u16 = 0x301;
pub const MEDELEG: u16 = 0x302;
pub const MIDELEG: u16 = 0x303;
pub const MIE: u16 = 0x304;
pub const MTVEC: u16 = 0x305;
pub const MCOUNTEREN: u16 = 0x306;
pub const MENVCFG: u16 = 0x30a;
pub const MSTATUSH: u16 = 0x310;
pub const MENVCFGH: u16 = 0x31a;
pub const MCOUNTINHIBIT: u16 = 0x320;
pub const MSCRATCH: u16 = 0x340;
pub const MEPC: u16 = 0x341;
pub const MCAUSE: u16 = 0x342;
pub const MTVAL: u16 = 0x343;
pub const MIP: u16 = 0x344;
pub const PMPCFG0: u16 = 0x3a0;
pub const PMPADDR0: u16 = 0x3b0;
// Sdtrig trigger module (M-mode and Debug Mode only).
pub const TSELECT: u16 = 0x7a0;
pub const TDATA1: u16 = 0x7a1;
pub const TDATA2: u16 = 0x7a2;
pub const TDATA3: u16 = 0x7a3;
pub const TINFO: u16 = 0x7a4;
pub const TCONTROL: u16 = 0x7a5;
pub const MCYCLE: u16 = 0xb00;
pub const MINSTRET: u16 = 0xb02;
pub const MCYCLEH: u16 = 0xb80;
pub const MINSTRETH: u16 = 0xb82;
pub const CYCLE: u16 = 0xc00;
pub const TIME: u16 = 0xc01;
pub const INSTRET: u16 = 0xc02;
pub const CYCLEH: u16 = 0xc80;
pub const TIMEH: u16 = 0xc81;
pub const INSTRETH: u16 = 0xc82;
pub const MVENDORID: u16 = 0xf11;
pub const MARCHID: u16 = 0xf12;
pub const MIMPID: u16 = 0xf13;
pub const MHARTID: u16 = 0xf14;
pub const MCONFIGPTR: u16 = 0xf15;

// mstatus bits.
pub const MSTATUS_SIE: u32 = 1 << 1;
pub const MSTATUS_MIE: u32 = 1 << 3;
pub const MSTATUS_SPIE: u32 = 1 << 5;
pub const MSTATUS_MPIE: u32 = 1 << 7;
pub const MSTATUS_SPP: u32 = 1 << 8;
pub const MSTATUS_MPP: u32 = 3 << 11;
pub const MSTATUS_MPP_SHIFT: u32 = 11;
pub const MSTATUS_FS: u32 = 3 << 13;
pub const MSTATUS_FS_INITIAL: u32 = 1 << 13;
pub const MSTATUS_MPRV: u32 = 1 << 17;
pub const MSTATUS_SUM: u32 = 1 << 18;
pub const MSTATUS_MXR: u32 = 1 << 19;
pub const MSTATUS_TVM: u32 = 1 << 20;
pub const MSTATUS_TW: u32 = 1 << 21;
pub const MSTATUS_TSR: u32 = 1 << 22;
pub const MSTATUS_SD: u32 = 1 << 31;

const MSTATUS_WRITABLE: u32 = MSTATUS_SIE
    | MSTATUS_MIE
    | MSTATUS_SPIE
    | MSTATUS_MPIE
    | MSTATUS_SPP
    | MSTATUS_MPP
    | MSTATUS_FS
    | MSTATUS_MPRV
    | MSTATUS_SUM
    | MSTATUS_MXR
    | MSTATUS_TVM
    | MSTATUS_TW
    | MSTATUS_TSR;
const SSTATUS_MASK: u32 =
    MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP | MSTATUS_FS | MSTATUS_SUM | MSTATUS_MXR | MSTATUS_SD;
/// mstatus bits whose change alters address translation or permission checks.
const MSTATUS_MMU_BITS: u32 = MSTATUS_MPRV | MSTATUS_SUM | MSTATUS_MXR | MSTATUS_MPP;

// Interrupt bits (mip/mie).
pub const IRQ_SSI: u32 = 1 << 1;
pub const IRQ_MSI: u32 = 1 << 3;
pub const IRQ_STI: u32 = 1 << 5;
pub const IRQ_MTI: u32 = 1 << 7;
pub const IRQ_SEI: u32 = 1 << 9;
pub const IRQ_MEI: u32 = 1 << 11;
const S_IRQS: u32 = IRQ_SSI | IRQ_STI | IRQ_SEI;
const ALL_IRQS: u32 = S_IRQS | IRQ_MSI | IRQ_MTI | IRQ_MEI;
/// mip bits software may write from M-mode (the others are driven by devices).
const MIP_WRITABLE: u32 = IRQ_SSI | IRQ_STI | IRQ_SEI;
/// mcounteren.TM: lower privilege levels may read `time` (and, with Sstc, access stimecmp).
const MCOUNTEREN_TM: u32 = 1 << 1;
/// Exceptions that may be delegated to S-mode (all but ecall-from-M).
const MEDELEG_WRITABLE: u32 = 0xb3ff;

/// misa: RV32 with I, M, A, F, D, C, B, S, U.
pub const MISA_VALUE: u32 = (1 << 30)
    | (1 << 0)  // A
    | (1 << 1)  // B
    | (1 << 2)  // C
    | (1 << 3)  // D
    | (1 << 5)  // F
    | (1 << 8)  // I
    | (1 << 12) // M
    | (1 << 18) // S
    | (1 << 20); // U

/// tinfo when the selected trigger does not exist (Sdtrig 1.0: "info contains 1"). The version
/// field stays 0: OpenSBI's enumeration (`sbi_dbtr_init`) stops only on a tinfo of exactly 1.
pub const TINFO_NO_TRIGGER: u32 = 1;

pub use super::clock::TIMEBASE_HZ;

/// CSR storage. Counters and fcsr live in [`Hart`] where the hot paths touch them. Plain
/// architectural state (no host resources), so a snapshot saves it as it is; the `time` CSR
/// reads the machine clock ([`super::clock::MachineClock`]), which is kept apart.
#[repr(C)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csrs {
    pub mstatus: u32,
    pub medeleg: u32,
    pub mideleg: u32,
    pub mie: u32,
    pub mip: u32,
    pub mtvec: u32,
    pub mscratch: u32,
    pub mepc: u32,
    pub mcause: u32,
    pub mtval: u32,
    pub mcounteren: u32,
    pub mcountinhibit: u32,
    pub menvcfg: u64,
    pub stvec: u32,
    pub sscratch: u32,
    pub sepc: u32,
    pub scause: u32,
    pub stval: u32,
    pub satp: u32,
    pub scounteren: u32,
    pub senvcfg: u32,
    pub stimecmp: u64,
    pub mhartid: u32,
    pub pmpcfg: [u32; 4],
    pub pmpaddr: [u32; 16],
    /// mcycle = instret + cycle_offset (so writes to mcycle stick).
    pub cycle_offset: u64,
    /// minstret = instret + instret_offset: writes to minstret/minstreth move the architectural
    /// counter, while `Hart::instret` keeps counting what the engine retired (instruction
    /// limits, statistics and deterministic time stay monotonic).
    pub instret_offset: u64,
}

impl Default for Csrs {
    fn default() -> Self {
        Self::new()
    }
}

impl Csrs {
    pub fn new() -> Self {
        Csrs {
            mstatus: 0,
            medeleg: 0,
            mideleg: 0,
            mie: 0,
            mip: 0,
            mtvec: 0,
            mscratch: 0,
            mepc: 0,
            mcause: 0,
            mtval: 0,
            mcounteren: 0,
            mcountinhibit: 0,
            menvcfg: 0,
            stvec: 0,
            sscratch: 0,
            sepc: 0,
            scause: 0,
            stval: 0,
            satp: 0,
            scounteren: 0,
            senvcfg: 0,
            stimecmp: u64::MAX,
            mhartid: 0,
            pmpcfg: [0; 4],
            pmpaddr: [0; 16],
            cycle_offset: 0,
            instret_offset: 0,
        }
    }
}

/// What a CSR write asks of the engine beyond the register change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CsrEffect {
    /// Address translation changed: TLB flushed; cached code keyed by translation is stale.
    pub translation_changed: bool,
}

impl Hart {
    /// The current value of the `time` CSR (ticks of [`TIMEBASE_HZ`]): the machine clock.
    #[inline]
    pub fn time(&self) -> u64 {
        self.clock.now(self.instret)
    }

    /// Set the machine clock (a guest write to CLINT `mtime`, or a restored snapshot): `time`
    /// goes on from `ticks`.
    pub fn set_time(&mut self, ticks: u64) {
        self.clock.set(ticks, self.instret);
    }

    fn counter_allowed(&self, index: u32) -> bool {
        match self.prv {
            Priv::Machine => true,
            Priv::Supervisor => self.csr.mcounteren >> index & 1 != 0,
            Priv::User => {
                self.csr.mcounteren >> index & 1 != 0 && self.csr.scounteren >> index & 1 != 0
            }
        }
    }

    /// mcycle: one cycle per retired instruction, moved by writes.
    pub fn cycle(&self) -> u64 {
        self.instret.wrapping_add(self.csr.cycle_offset)
    }

    /// minstret as software reads it (retired instructions, moved by writes).
    pub fn minstret(&self) -> u64 {
        self.instret.wrapping_add(self.csr.instret_offset)
    }

    /// Read CSR `num` as the instruction at the current privilege level would.
    pub fn csr_read(&self, num: u16, raw: u32) -> Result<u32, Trap> {
        let illegal = Err(Trap::illegal(raw));
        if (num >> 8 & 3) as u8 > self.prv as u8 {
            return illegal;
        }
        let c = &self.csr;
        let fs_check = || {
            if self.fp_enabled() {
                Ok(())
            } else {
                Err(Trap::illegal(raw))
            }
        };
        Ok(match num {
            FFLAGS => {
                fs_check()?;
                self.fflags as u32
            }
            FRM => {
                fs_check()?;
                self.frm as u32
            }
            FCSR => {
                fs_check()?;
                self.fcsr()
            }
            CYCLE..=0xc1f | CYCLEH..=0xc9f => {
                let index = (num & 0x1f) as u32;
                if !self.counter_allowed(index) {
                    return illegal;
                }
                let v = match index {
                    0 => self.cycle(),
                    1 => self.time(),
                    2 => self.minstret(),
                    _ => 0,
                };
                if num >= CYCLEH {
                    (v >> 32) as u32
                } else {
                    v as u32
                }
            }
            SSTATUS => c.mstatus & SSTATUS_MASK,
            SIE => c.mie & c.mideleg & S_IRQS,
            STVEC => c.stvec,
            SCOUNTEREN => c.scounteren,
            SENVCFG => c.senvcfg,
            SSCRATCH => c.sscratch,
            SEPC => c.sepc,
            SCAUSE => c.scause,
            STVAL => c.stval,
            SIP => c.mip & c.mideleg & S_IRQS,
            STIMECMP | STIMECMPH => {
                // Sstc: below M, both menvcfg.STCE and mcounteren.TM must be set.
                if self.prv < Priv::Machine
                    && (c.menvcfg >> 63 == 0 || c.mcounteren & MCOUNTEREN_TM == 0)
                {
                    return illegal;
                }
                if num == STIMECMP {
                    c.stimecmp as u32
                } else {
                    (c.stimecmp >> 32) as u32
                }
            }
            SATP => {
                if self.prv == Priv::Supervisor && c.mstatus & MSTATUS_TVM != 0 {
                    return illegal;
                }
                c.satp
            }
            MSTATUS => c.mstatus,
            MISA => MISA_VALUE,
            MEDELEG => c.medeleg,
            MIDELEG => c.mideleg,
            MIE => c.mie,
            MTVEC => c.mtvec,
            MCOUNTEREN => c.mcounteren,
            MENVCFG => c.menvcfg as u32,
            MENVCFGH => (c.menvcfg >> 32) as u32,
            MSTATUSH => 0,
            MCOUNTINHIBIT => c.mcountinhibit,
            0x323..=0x33f => 0, // mhpmevent3..31: no events implemented
            MSCRATCH => c.mscratch,
            MEPC => c.mepc,
            MCAUSE => c.mcause,
            MTVAL => c.mtval,
            MIP => c.mip,
            0x3a0..=0x3a3 => c.pmpcfg[(num - PMPCFG0) as usize],
            0x3b0..=0x3bf => c.pmpaddr[(num - PMPADDR0) as usize],
            MCYCLE => self.cycle() as u32,
            MINSTRET => self.minstret() as u32,
            MCYCLEH => (self.cycle() >> 32) as u32,
            MINSTRETH => (self.minstret() >> 32) as u32,
            0xb03..=0xb1f | 0xb83..=0xb9f => 0, // mhpmcounter3..31 hardwired to zero
            MVENDORID | MARCHID | MIMPID | MCONFIGPTR => 0,
            // Sdtrig with no trigger: tselect holds only 0, where tdata1 says type 0 ("no
            // trigger at this tselect") and tinfo says the trigger does not exist.
            TSELECT | TDATA1 | TDATA2 | TDATA3 | TCONTROL => 0,
            TINFO => TINFO_NO_TRIGGER,
            MHARTID => c.mhartid,
            _ => return illegal,
        })
    }

    /// Write CSR `num`. The caller has already checked that the CSR exists and is readable at
    /// this privilege level (by reading it first).
    ///
    /// The engine counts the writing instruction as retired (in `instret`) before it calls this:
    /// a write to a counter replaces that increment, as the privileged spec requires. The next
    /// instruction reads exactly the value written, and the other half of the 64-bit counter
    /// keeps its value from before the writing instruction.
    pub fn csr_write(&mut self, num: u16, value: u32, raw: u32) -> Result<CsrEffect, Trap> {
        if num >> 10 == 3 {
            return Err(Trap::illegal(raw)); // read-only CSR
        }
        // Re-run the read-side checks (privilege, existence, FS, TVM, STCE).
        self.csr_read(num, raw)?;
        let mut effect = CsrEffect::default();
        let mut stimer_changed = false;
        let c = &mut self.csr;
        match num {
            FFLAGS => {
                self.fflags = (value & 0x1f) as u8;
                self.mark_fp_dirty();
            }
            FRM => {
                self.frm = (value & 7) as u8;
                self.mark_fp_dirty();
            }
            FCSR => {
                self.fflags = (value & 0x1f) as u8;
                self.frm = (value >> 5 & 7) as u8;
                self.mark_fp_dirty();
            }
            SSTATUS => {
                let mask = SSTATUS_MASK & MSTATUS_WRITABLE;
                let old = c.mstatus;
                c.mstatus = fix_mstatus(old & !mask | value & mask);
                effect.translation_changed = (old ^ c.mstatus) & MSTATUS_MMU_BITS != 0;
            }
            SIE => {
                let mask = c.mideleg & S_IRQS;
                c.mie = c.mie & !mask | value & mask;
            }
            STVEC => c.stvec = value & !2,
            SCOUNTEREN => c.scounteren = value & 7,
            SENVCFG => c.senvcfg = value & 1, // FIOM only
            SSCRATCH => c.sscratch = value,
            SEPC => c.sepc = value & !1,
            SCAUSE => c.scause = value,
            STVAL => c.stval = value,
            SIP => {
                // Only SSIP is writable through sip.
                let mask = c.mideleg & IRQ_SSI;
                c.mip = c.mip & !mask | value & mask;
            }
            STIMECMP => {
                c.stimecmp = c.stimecmp & !0xffff_ffff | value as u64;
                stimer_changed = true;
            }
            STIMECMPH => {
                c.stimecmp = c.stimecmp & 0xffff_ffff | (value as u64) << 32;
                stimer_changed = true;
            }
            SATP => {
                // MODE (Bare or Sv32), 9-bit ASID and 22-bit PPN are all writable.
                c.satp = value;
                effect.translation_changed = true;
            }
            MSTATUS => {
                let old = c.mstatus;
                c.mstatus = fix_mstatus(old & !MSTATUS_WRITABLE | value & MSTATUS_WRITABLE);
                effect.translation_changed = (old ^ c.mstatus) & MSTATUS_MMU_BITS != 0;
            }
            MISA | MSTATUSH => {}
            MEDELEG => c.medeleg = value & MEDELEG_WRITABLE,
            MIDELEG => c.mideleg = value & S_IRQS,
            MIE => c.mie = value & ALL_IRQS,
            MTVEC => c.mtvec = value & !2,
            MCOUNTEREN => c.mcounteren = value,
            MENVCFG => c.menvcfg = c.menvcfg & !0xffff_ffff | (value & 1) as u64,
            MENVCFGH => {
                // STCE (bit 63) only.
                c.menvcfg = c.menvcfg & 0xffff_ffff | ((value as u64 & (1 << 31)) << 32);
                stimer_changed = true;
            }
            MCOUNTINHIBIT => c.mcountinhibit = value & 0xffff_fffd,
            0x323..=0x33f => {}
            MSCRATCH => c.mscratch = value,
            MEPC => c.mepc = value & !1,
            MCAUSE => c.mcause = value,
            MTVAL => c.mtval = value,
            MIP => {
                // With Sstc on, STIP reflects stimecmp and is read-only.
                let writable = if c.menvcfg >> 63 != 0 {
                    MIP_WRITABLE & !IRQ_STI
                } else {
                    MIP_WRITABLE
                };
                c.mip = c.mip & !writable | value & writable;
            }
            0x3a0..=0x3a3 => {
                // Locked entries (L bit) ignore writes.
                let i = (num - PMPCFG0) as usize;
                let old = c.pmpcfg[i];
                let mut new = 0;
                for byte in 0..4 {
                    let o = old >> (8 * byte) & 0xff;
                    let n = value >> (8 * byte) & 0xff;
                    // W without R is reserved: keep the old value.
                    let b = if o & 0x80 != 0 || (n & 3) == 2 {
                        o
                    } else {
                        n & 0x9f
                    };
                    new |= b << (8 * byte);
                }
                c.pmpcfg[i] = new;
            }
            0x3b0..=0x3bf => {
                let i = (num - PMPADDR0) as usize;
                if c.pmpcfg[i / 4] >> (8 * (i % 4)) & 0x80 == 0 {
                    c.pmpaddr[i] = value;
                }
            }
            MCYCLE | MCYCLEH => {
                let before = self.cycle().wrapping_sub(1);
                let cycle = with_half(before, value, num == MCYCLEH);
                self.csr.cycle_offset = cycle.wrapping_sub(self.instret);
            }
            MINSTRET | MINSTRETH => {
                let before = self.minstret().wrapping_sub(1);
                let minstret = with_half(before, value, num == MINSTRETH);
                self.csr.instret_offset = minstret.wrapping_sub(self.instret);
            }
            0xb03..=0xb1f | 0xb83..=0xb9f => {}
            // No trigger exists, so nothing is writable (all fields are WARL).
            TSELECT | TDATA1 | TDATA2 | TDATA3 | TINFO | TCONTROL => {}
            _ => return Err(Trap::illegal(raw)),
        }
        if stimer_changed {
            self.update_sstc_stip();
        }
        if effect.translation_changed {
            self.tlb.flush();
        }
        Ok(effect)
    }

    /// With Sstc on (menvcfg.STCE), STIP is the level `time >= stimecmp`. Set it as soon as
    /// stimecmp or STCE changes, so that reading mip right after the write sees the new level
    /// (the platform also re-samples it between blocks, as time passes).
    fn update_sstc_stip(&mut self) {
        if self.csr.menvcfg >> 63 == 0 {
            return;
        }
        if self.time() >= self.csr.stimecmp {
            self.csr.mip |= IRQ_STI;
        } else {
            self.csr.mip &= !IRQ_STI;
        }
    }
}

/// `counter` with its low (or, if `high`, its high) 32 bits replaced by `value`.
fn with_half(counter: u64, value: u32, high: bool) -> u64 {
    if high {
        counter & 0xffff_ffff | (value as u64) << 32
    } else {
        counter & !0xffff_ffff | value as u64
    }
}

/// Apply WARL rules to a new mstatus value: MPP may not hold the reserved value 2, and SD
/// summarises FS.
fn fix_mstatus(mut v: u32) -> u32 {
    if (v & MSTATUS_MPP) >> MSTATUS_MPP_SHIFT == 2 {
        v &= !MSTATUS_MPP;
    }
    if v & MSTATUS_FS == MSTATUS_FS {
        v |= MSTATUS_SD;
    } else {
        v &= !MSTATUS_SD;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_csr_is_illegal() {
        let h = Hart::new();
        assert!(h.csr_read(0x7ff, 0x1234).is_err());
        assert_eq!(h.csr_read(MISA, 0).unwrap(), MISA_VALUE);
    }

    #[test]
    fn user_mode_cannot_read_machine_csrs() {
        let mut h = Hart::new();
        h.prv = Priv::User;
        assert!(h.csr_read(MSTATUS, 0).is_err());
    }

    #[test]
    fn read_only_csr_write_is_illegal() {
        let mut h = Hart::new();
        assert!(h.csr_write(MHARTID, 1, 0).is_err());
    }

    #[test]
    fn sstc_stip_follows_stimecmp_and_is_read_only_in_mip() {
        let mut h = Hart::new();
        h.csr_write(MENVCFGH, 1 << 31, 0).unwrap();
        assert_eq!(h.csr.mip & IRQ_STI, 0, "stimecmp starts at the maximum");
        h.csr_write(STIMECMPH, 0, 0).unwrap();
        h.csr_write(STIMECMP, 0, 0).unwrap();
        assert_ne!(h.csr.mip & IRQ_STI, 0, "time >= 0 at once");
        h.csr_write(MIP, 0, 0).unwrap();
        assert_ne!(h.csr.mip & IRQ_STI, 0, "mip.STIP is read-only with STCE");
        h.csr_write(STIMECMPH, u32::MAX, 0).unwrap();
        assert_eq!(h.csr.mip & IRQ_STI, 0);
        // Without STCE, M-mode software owns STIP.
        h.csr_write(MENVCFGH, 0, 0).unwrap();
        h.csr_write(MIP, IRQ_STI, 0).unwrap();
        assert_ne!(h.csr.mip & IRQ_STI, 0);
    }

    #[test]
    fn supervisor_stimecmp_needs_stce_and_mcounteren_tm() {
        let mut h = Hart::new();
        h.prv = Priv::Supervisor;
        h.csr.menvcfg = 1 << 63;
        assert!(h.csr_read(STIMECMP, 0).is_err(), "TM clear");
        h.csr.mcounteren = MCOUNTEREN_TM;
        assert!(h.csr_read(STIMECMP, 0).is_ok());
        h.csr.menvcfg = 0;
        assert!(h.csr_read(STIMECMPH, 0).is_err(), "STCE clear");
        h.prv = Priv::Machine;
        assert!(h.csr_read(STIMECMP, 0).is_ok(), "M-mode always may");
    }

    #[test]
    fn mpp_reserved_value_is_not_kept() {
        let mut h = Hart::new();
        h.csr_write(MSTATUS, 2 << MSTATUS_MPP_SHIFT, 0).unwrap();
        assert_eq!(h.csr.mstatus & MSTATUS_MPP, 0);
    }

    /// What the engine does for a CSR write instruction: count it as retired, then write.
    fn retire_and_write(h: &mut Hart, num: u16, value: u32) {
        h.instret += 1;
        h.csr_write(num, value, 0).unwrap();
    }

    /// What the engine does for any other instruction.
    fn retire(h: &mut Hart) {
        h.instret += 1;
    }

    #[test]
    fn counter_write_replaces_the_writing_instructions_increment() {
        for (low, high, read) in [
            (MINSTRET, MINSTRETH, Hart::minstret as fn(&Hart) -> u64),
            (MCYCLE, MCYCLEH, Hart::cycle),
        ] {
            let mut h = Hart::new();
            h.instret = 12345;
            retire_and_write(&mut h, low, 100);
            assert_eq!(
                read(&h),
                100,
                "csr {low:#x}: the next instruction reads the value"
            );
            retire(&mut h);
            assert_eq!(read(&h), 101);
            // The low half at all ones: writing the high half must not carry.
            retire_and_write(&mut h, low, u32::MAX);
            retire_and_write(&mut h, high, 3);
            assert_eq!(read(&h), 0x3_ffff_ffff, "csr {high:#x}");
            // Writing the low half keeps the high half from before the instruction.
            retire_and_write(&mut h, low, 5);
            assert_eq!(read(&h), 0x3_0000_0005, "csr {low:#x}");
            // All ones wraps to zero.
            retire_and_write(&mut h, high, u32::MAX);
            retire_and_write(&mut h, low, u32::MAX);
            assert_eq!(read(&h), u64::MAX);
            retire(&mut h);
            assert_eq!(read(&h), 0);
            assert_eq!(h.csr_read(high, 0).unwrap(), 0);
        }
    }

    #[test]
    fn minstret_and_mcycle_are_written_apart_and_instret_keeps_counting() {
        let mut h = Hart::new();
        retire_and_write(&mut h, MINSTRET, 7);
        retire_and_write(&mut h, MCYCLE, 1000);
        retire(&mut h);
        assert_eq!(h.minstret(), 9);
        assert_eq!(h.cycle(), 1001);
        assert_eq!(
            h.csr_read(INSTRET, 0).unwrap(),
            9,
            "instret shadows minstret"
        );
        assert_eq!(h.instret, 3, "the engine's count is not moved by writes");
    }

    #[test]
    fn trigger_csrs_say_that_no_trigger_exists() {
        let mut h = Hart::new();
        for num in [TSELECT, TDATA1, TDATA2, TDATA3, TCONTROL] {
            assert_eq!(h.csr_read(num, 0).unwrap(), 0, "csr {num:#x}");
            h.csr_write(num, u32::MAX, 0).unwrap();
            assert_eq!(h.csr_read(num, 0).unwrap(), 0, "csr {num:#x} is WARL 0");
        }
        assert_eq!(h.csr_read(TINFO, 0).unwrap(), TINFO_NO_TRIGGER);
        h.csr_write(TINFO, 0x4, 0).unwrap();
        assert_eq!(
            h.csr_read(TINFO, 0).unwrap(),
            1,
            "writing tinfo has no effect"
        );
        // mcontext (no trigger uses it) and the Debug-Mode-only registers do not exist.
        for num in [0x7a8, 0x7aa, 0x7b0, 0x7b1, 0x7b2] {
            assert_eq!(
                h.csr_read(num, 0x73),
                Err(Trap::illegal(0x73)),
                "csr {num:#x}"
            );
        }
        for prv in [Priv::Supervisor, Priv::User] {
            h.prv = prv;
            for num in [TSELECT, TDATA1, TDATA2, TDATA3, TINFO, TCONTROL] {
                assert!(h.csr_read(num, 0).is_err(), "{prv:?} reads csr {num:#x}");
                assert!(
                    h.csr_write(num, 0, 0).is_err(),
                    "{prv:?} writes csr {num:#x}"
                );
            }
        }
    }
}
