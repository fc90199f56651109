//! Synchronous exceptions and the trap record that every tier hands back to the run loop.

/// Synchronous exception causes (mcause values with the interrupt bit clear).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Exception {
    InsnMisaligned = 0,
    InsnAccessFault = 1,
    IllegalInsn = 2,
    Breakpoint = 3,
    LoadMisaligned = 4,
    LoadAccessFault = 5,
    StoreMisaligned = 6,
    StoreAccessFault = 7,
    EcallFromU = 8,
    EcallFromS = 9,
    EcallFromM = 11,
    InsnPageFault = 12,
    LoadPageFault = 13,
    StorePageFault = 15,
}

/// The interrupt bit of mcause/scause.
pub const INTERRUPT_BIT: u32 = 1 << 31;

/// A trap raised at `Hart::pc`: the cause (mcause encoding, interrupt bit included) and the
/// trap value (mtval).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trap {
    pub cause: u32,
    pub tval: u32,
}

impl Trap {
    /// A synchronous exception with trap value `tval`.
    #[inline]
    pub const fn new(e: Exception, tval: u32) -> Trap {
        Trap {
            cause: e as u32,
            tval,
        }
    }

    /// Illegal instruction with the instruction bits as trap value.
    #[inline]
    pub const fn illegal(raw: u32) -> Trap {
        Trap::new(Exception::IllegalInsn, raw)
    }

    /// True for an asynchronous (interrupt) trap.
    pub const fn is_interrupt(&self) -> bool {
        self.cause & INTERRUPT_BIT != 0
    }

    /// The exception, if this trap is a synchronous one with a known cause.
    pub fn exception(&self) -> Option<Exception> {
        use Exception::*;
        Some(match self.cause {
            0 => InsnMisaligned,
            1 => InsnAccessFault,
            2 => IllegalInsn,
            3 => Breakpoint,
            4 => LoadMisaligned,
            5 => LoadAccessFault,
            6 => StoreMisaligned,
            7 => StoreAccessFault,
            8 => EcallFromU,
            9 => EcallFromS,
            11 => EcallFromM,
            12 => InsnPageFault,
            13 => LoadPageFault,
            15 => StorePageFault,
            _ => return None,
        })
    }
}

impl super::Hart {
    /// Deliver `trap` (raised at `self.pc`) to M-mode or, when delegated, to S-mode: the
    /// privileged spec's trap entry (xepc, xcause, xtval, status stack, vectored mtvec/stvec).
    pub fn take_trap(&mut self, trap: Trap) {
        use super::csr::*;
        use super::Priv;
        let is_irq = trap.is_interrupt();
        let code = trap.cause & !INTERRUPT_BIT;
        let deleg = if is_irq {
            self.csr.mideleg
        } else {
            self.csr.medeleg
        };
        let to_s = self.prv <= Priv::Supervisor && code < 32 && deleg >> code & 1 != 0;
        let old_prv = self.prv;
        let old_data_priv = self.effective_priv(super::Access::Read);
        let c = &mut self.csr;
        if to_s {
            c.sepc = self.pc;
            c.scause = trap.cause;
            c.stval = trap.tval;
            let sie = c.mstatus & MSTATUS_SIE != 0;
            c.mstatus &= !(MSTATUS_SPIE | MSTATUS_SPP | MSTATUS_SIE);
            if sie {
                c.mstatus |= MSTATUS_SPIE;
            }
            if old_prv == Priv::Supervisor {
                c.mstatus |= MSTATUS_SPP;
            }
            self.prv = Priv::Supervisor;
            self.pc = trap_vector(c.stvec, is_irq, code);
        } else {
            c.mepc = self.pc;
            c.mcause = trap.cause;
            c.mtval = trap.tval;
            let mie = c.mstatus & MSTATUS_MIE != 0;
            c.mstatus &= !(MSTATUS_MPIE | MSTATUS_MPP | MSTATUS_MIE);
            if mie {
                c.mstatus |= MSTATUS_MPIE;
            }
            c.mstatus |= (old_prv as u32) << MSTATUS_MPP_SHIFT;
            self.prv = Priv::Machine;
            self.pc = trap_vector(c.mtvec, is_irq, code);
        }
        // TLB entries carry the translation and permissions of the privilege level that
        // filled them. A trap from M to M changes no privilege, but with MPRV set it changes
        // the one loads and stores run at (MPP becomes M).
        if self.prv != old_prv || self.effective_priv(super::Access::Read) != old_data_priv {
            self.tlb.flush();
        }
    }

    /// MRET: return from an M-mode trap. The caller checked the privilege.
    pub fn mret(&mut self) {
        use super::csr::*;
        use super::Priv;
        let c = &mut self.csr;
        let mpp = Priv::from_bits(c.mstatus >> MSTATUS_MPP_SHIFT);
        let mpie = c.mstatus & MSTATUS_MPIE != 0;
        c.mstatus &= !(MSTATUS_MIE | MSTATUS_MPP);
        c.mstatus |= MSTATUS_MPIE;
        if mpie {
            c.mstatus |= MSTATUS_MIE;
        }
        if mpp != Priv::Machine {
            c.mstatus &= !MSTATUS_MPRV;
        }
        self.pc = c.mepc;
        self.set_priv(mpp);
    }

    /// SRET: return from an S-mode trap. The caller checked the privilege and TSR.
    pub fn sret(&mut self) {
        use super::csr::*;
        use super::Priv;
        let c = &mut self.csr;
        let spp = if c.mstatus & MSTATUS_SPP != 0 {
            Priv::Supervisor
        } else {
            Priv::User
        };
        let spie = c.mstatus & MSTATUS_SPIE != 0;
        c.mstatus &= !(MSTATUS_SIE | MSTATUS_SPP | MSTATUS_MPRV);
        c.mstatus |= MSTATUS_SPIE;
        if spie {
            c.mstatus |= MSTATUS_SIE;
        }
        self.pc = c.sepc;
        self.set_priv(spp);
    }

    /// Change privilege level. The TLB is flushed because its entries encode the permissions
    /// of the privilege level (and MPRV setting) that filled them.
    pub fn set_priv(&mut self, prv: super::Priv) {
        self.prv = prv;
        self.tlb.flush();
    }
}

/// The handler address for a trap: vectored mode (xtvec[1:0] = 1) sends interrupts to
/// base + 4 * cause; exceptions always go to base.
fn trap_vector(tvec: u32, is_irq: bool, code: u32) -> u32 {
    let base = tvec & !3;
    if tvec & 3 == 1 && is_irq {
        base.wrapping_add(4 * code)
    } else {
        base
    }
}

/// Interrupt causes in the order they are taken when several are pending (priv spec 3.1.9).
const IRQ_PRIORITY: [u32; 6] = [11, 3, 7, 9, 1, 5];

impl super::Hart {
    /// The interrupt to take now, if any: pending (`mip`), enabled (`mie`), and allowed by the
    /// global enables of the privilege level it targets (M-level interrupts are always taken
    /// below M; S-level ones below S, or in S with SIE). Returned as a trap cause.
    pub fn pending_interrupt(&self) -> Option<Trap> {
        use super::csr::{MSTATUS_MIE, MSTATUS_SIE};
        use super::Priv;
        let pending = self.csr.mip & self.csr.mie;
        if pending == 0 {
            return None;
        }
        let status = self.csr.mstatus;
        let m_enabled = self.prv < Priv::Machine || status & MSTATUS_MIE != 0;
        let s_enabled = self.prv < Priv::Supervisor
            || (self.prv == Priv::Supervisor && status & MSTATUS_SIE != 0);
        let mut takeable = 0;
        if m_enabled {
            takeable |= pending & !self.csr.mideleg;
        }
        if s_enabled {
            takeable |= pending & self.csr.mideleg;
        }
        IRQ_PRIORITY
            .iter()
            .find(|&&code| takeable >> code & 1 != 0)
            .map(|&code| Trap {
                cause: INTERRUPT_BIT | code,
                tval: 0,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::csr::{MSTATUS_MPP_SHIFT, MSTATUS_MPRV};
    use crate::cpu::{Access, Hart, Priv};

    #[test]
    fn trap_into_m_with_mprv_drops_translations_of_the_old_mpp() {
        let mut h = Hart::new();
        h.csr.mstatus |= MSTATUS_MPRV | (Priv::Supervisor as u32) << MSTATUS_MPP_SHIFT;
        let page = [0u8; 4096];
        h.tlb
            .insert(0x8040_0000, Access::Read, page.as_ptr() as *mut u8);
        assert!(h.tlb.lookup(0x8040_0000, Access::Read).is_some());
        h.take_trap(Trap::new(Exception::LoadPageFault, 0x4000_3000));
        assert_eq!(h.prv, Priv::Machine);
        assert_eq!(h.effective_priv(Access::Read), Priv::Machine, "MPP = M now");
        assert!(
            h.tlb.lookup(0x8040_0000, Access::Read).is_none(),
            "an S-mode translation must not serve M-mode loads"
        );
    }

    #[test]
    fn trap_from_m_to_m_without_mprv_keeps_the_tlb() {
        let mut h = Hart::new();
        let page = [0u8; 4096];
        h.tlb
            .insert(0x8000_0000, Access::Read, page.as_ptr() as *mut u8);
        h.take_trap(Trap::new(Exception::EcallFromM, 0));
        assert!(h.tlb.lookup(0x8000_0000, Access::Read).is_some());
    }
}
