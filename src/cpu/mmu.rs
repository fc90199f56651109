//! Sv32 address translation: the effective privilege of an access (MPRV), the two-level page
//! walk with 4 KiB pages and 4 MiB superpages, permission checks (U, SUM, MXR) and hardware
//! update of the A and D bits. The walker reads page tables through [`PageTableMemory`], so it
//! knows nothing of how RAM is stored.

use super::csr::{MSTATUS_MPP, MSTATUS_MPP_SHIFT, MSTATUS_MPRV, MSTATUS_MXR, MSTATUS_SUM};
use super::{Access, Exception, Hart, Priv, Trap};

/// PTE bits.
pub mod pte {
    pub const V: u32 = 1 << 0;
    pub const R: u32 = 1 << 1;
    pub const W: u32 = 1 << 2;
    pub const X: u32 = 1 << 3;
    pub const U: u32 = 1 << 4;
    pub const G: u32 = 1 << 5;
    pub const A: u32 = 1 << 6;
    pub const D: u32 = 1 << 7;
}

/// satp.MODE = Sv32.
const SATP_MODE_SV32: u32 = 1 << 31;
const SATP_PPN_MASK: u32 = 0x003f_ffff;

/// Physical memory as the page walker sees it. Addresses are 34-bit Sv32 physical addresses.
pub trait PageTableMemory {
    /// Read the PTE at `pa`, or `None` if `pa` is not RAM (an access fault).
    fn read_pte(&mut self, pa: u64) -> Option<u32>;
    /// Write back a PTE whose A/D bits were set; `false` if `pa` is not RAM.
    fn write_pte(&mut self, pa: u64, pte: u32) -> bool;
}

/// The outcome of a translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The physical address (34 bits in Sv32).
    pub pa: u64,
    /// Whether the result may be cached for the whole 4 KiB page: always true for Sv32 leaves
    /// and for bare translation; callers still decide per target (RAM vs MMIO).
    pub page_cacheable: bool,
}

fn page_fault(access: Access, va: u32) -> Trap {
    Trap::new(
        match access {
            Access::Read => Exception::LoadPageFault,
            Access::Write => Exception::StorePageFault,
            Access::Execute => Exception::InsnPageFault,
        },
        va,
    )
}

/// The access fault for `access` at `va`.
pub fn access_fault(access: Access, va: u32) -> Trap {
    Trap::new(
        match access {
            Access::Read => Exception::LoadAccessFault,
            Access::Write => Exception::StoreAccessFault,
            Access::Execute => Exception::InsnAccessFault,
        },
        va,
    )
}

impl Hart {
    /// The privilege level loads and stores (not fetches) run at: MPP when MPRV is set in M-mode.
    pub fn effective_priv(&self, access: Access) -> Priv {
        if access != Access::Execute
            && self.prv == Priv::Machine
            && self.csr.mstatus & MSTATUS_MPRV != 0
        {
            Priv::from_bits((self.csr.mstatus & MSTATUS_MPP) >> MSTATUS_MPP_SHIFT)
        } else {
            self.prv
        }
    }

    /// Translate `va` for `access` under the current satp, privilege and mstatus.
    pub fn translate<M: PageTableMemory>(
        &self,
        mem: &mut M,
        va: u32,
        access: Access,
    ) -> Result<Translation, Trap> {
        let prv = self.effective_priv(access);
        let satp = self.csr.satp;
        if prv == Priv::Machine || satp & SATP_MODE_SV32 == 0 {
            return Ok(Translation {
                pa: va as u64,
                page_cacheable: true,
            });
        }
        let status = self.csr.mstatus;
        let mut table = ((satp & SATP_PPN_MASK) as u64) << 12;
        let vpn = [(va >> 12) & 0x3ff, va >> 22];
        let mut level = 1usize;
        loop {
            let pte_addr = table + (vpn[level] as u64) * 4;
            let pte = mem
                .read_pte(pte_addr)
                .ok_or_else(|| access_fault(access, va))?;
            if pte & pte::V == 0 || (pte & pte::R == 0 && pte & pte::W != 0) {
                return Err(page_fault(access, va));
            }
            if pte & (pte::R | pte::X) == 0 {
                // Pointer to the next level.
                if level == 0 {
                    return Err(page_fault(access, va));
                }
                level -= 1;
                table = ((pte >> 10) as u64) << 12;
                continue;
            }
            // Leaf: permissions.
            let user_page = pte & pte::U != 0;
            let allowed = match prv {
                Priv::User => user_page,
                // S-mode may touch user pages only for loads/stores with SUM, never execute them.
                _ => !user_page || (access != Access::Execute && status & MSTATUS_SUM != 0),
            } && match access {
                Access::Read => {
                    pte & pte::R != 0 || (status & MSTATUS_MXR != 0 && pte & pte::X != 0)
                }
                Access::Write => pte & pte::W != 0,
                Access::Execute => pte & pte::X != 0,
            };
            if !allowed {
                return Err(page_fault(access, va));
            }
            let ppn = pte >> 10;
            if level == 1 && ppn & 0x3ff != 0 {
                return Err(page_fault(access, va)); // misaligned superpage
            }
            // Hardware A/D update (as QEMU does): set A, and D on a store.
            let mut new_pte = pte | pte::A;
            if access == Access::Write {
                new_pte |= pte::D;
            }
            if new_pte != pte && !mem.write_pte(pte_addr, new_pte) {
                return Err(access_fault(access, va));
            }
            let pa = if level == 1 {
                ((ppn >> 10) as u64) << 22 | (va & 0x003f_ffff) as u64
            } else {
                (ppn as u64) << 12 | (va & 0xfff) as u64
            };
            return Ok(Translation {
                pa,
                page_cacheable: true,
            });
        }
    }
}

/// Page tables seen by a debugger: reads go through, A/D updates are dropped.
struct WithoutWriteBack<'a, M>(&'a mut M);

impl<M: PageTableMemory> PageTableMemory for WithoutWriteBack<'_, M> {
    fn read_pte(&mut self, pa: u64) -> Option<u32> {
        self.0.read_pte(pa)
    }
    fn write_pte(&mut self, _pa: u64, _pte: u32) -> bool {
        true
    }
}

impl Hart {
    /// The physical address a debugger sees at `va`: the current translation as a load (or,
    /// for an execute-only page, a fetch) would make it, without updating A/D bits or the TLB
    /// and without raising anything. `None` when no such access could succeed.
    pub fn translate_for_debugger<M: PageTableMemory>(&self, mem: &mut M, va: u32) -> Option<u64> {
        let mut mem = WithoutWriteBack(mem);
        self.translate(&mut mem, va, Access::Read)
            .or_else(|_| self.translate(&mut mem, va, Access::Execute))
            .ok()
            .map(|t| t.pa)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::csr::MSTATUS_SUM;
    use std::collections::HashMap;

    struct FakeMem(HashMap<u64, u32>);

    impl PageTableMemory for FakeMem {
        fn read_pte(&mut self, pa: u64) -> Option<u32> {
            if pa >= 0x1_0000_0000 {
                return None;
            }
            Some(*self.0.get(&pa).unwrap_or(&0))
        }
        fn write_pte(&mut self, pa: u64, pte: u32) -> bool {
            self.0.insert(pa, pte);
            true
        }
    }

    const ROOT: u64 = 0x8000_0000;
    const L0: u64 = 0x8000_1000;

    fn setup(leaf_flags: u32) -> (Hart, FakeMem) {
        let mut h = Hart::new();
        h.prv = Priv::Supervisor;
        h.csr.satp = SATP_MODE_SV32 | (ROOT >> 12) as u32;
        let mut m = FakeMem(HashMap::new());
        // va 0x0040_0000.. -> L0 table; page 0x0040_1000 -> pa 0x8020_0000
        m.0.insert(ROOT + 4, ((L0 >> 12) as u32) << 10 | pte::V);
        m.0.insert(L0 + 4, (0x80200u32 << 10) | leaf_flags | pte::V);
        // 4 MiB superpage at va 0xc000_0000 -> pa 0x8000_0000
        m.0.insert(
            ROOT + 4 * 0x300,
            (0x80000u32 << 10) | pte::R | pte::W | pte::X | pte::V,
        );
        (h, m)
    }

    #[test]
    fn walks_4k_page_and_sets_accessed_dirty() {
        let (h, mut m) = setup(pte::R | pte::W);
        let t = h.translate(&mut m, 0x0040_1234, Access::Write).unwrap();
        assert_eq!(t.pa, 0x8020_0234);
        let pte_now = m.0[&(L0 + 4)];
        assert_ne!(pte_now & pte::A, 0);
        assert_ne!(pte_now & pte::D, 0);
    }

    #[test]
    fn superpage_maps_low_bits_from_va() {
        let (h, mut m) = setup(pte::R);
        let t = h.translate(&mut m, 0xc012_3456, Access::Read).unwrap();
        assert_eq!(t.pa, 0x8012_3456);
    }

    #[test]
    fn misaligned_superpage_faults() {
        let (h, mut m) = setup(pte::R);
        m.0.insert(ROOT + 4 * 0x300, (0x80001u32 << 10) | pte::R | pte::V);
        let e = h.translate(&mut m, 0xc000_0000, Access::Read).unwrap_err();
        assert_eq!(e, Trap::new(Exception::LoadPageFault, 0xc000_0000));
    }

    #[test]
    fn write_to_read_only_page_faults_with_va() {
        let (h, mut m) = setup(pte::R);
        let e = h.translate(&mut m, 0x0040_1008, Access::Write).unwrap_err();
        assert_eq!(e, Trap::new(Exception::StorePageFault, 0x0040_1008));
    }

    #[test]
    fn user_page_needs_sum_in_supervisor_and_never_executes() {
        let (mut h, mut m) = setup(pte::R | pte::X | pte::U);
        assert!(h.translate(&mut m, 0x0040_1000, Access::Read).is_err());
        h.csr.mstatus |= MSTATUS_SUM;
        assert!(h.translate(&mut m, 0x0040_1000, Access::Read).is_ok());
        assert!(h.translate(&mut m, 0x0040_1000, Access::Execute).is_err());
        h.prv = Priv::User;
        assert!(h.translate(&mut m, 0x0040_1000, Access::Execute).is_ok());
    }

    #[test]
    fn mxr_makes_executable_pages_readable() {
        let (mut h, mut m) = setup(pte::X);
        assert!(h.translate(&mut m, 0x0040_1000, Access::Read).is_err());
        h.csr.mstatus |= MSTATUS_MXR;
        assert!(h.translate(&mut m, 0x0040_1000, Access::Read).is_ok());
    }

    #[test]
    fn mprv_translates_machine_loads_as_mpp() {
        let (mut h, mut m) = setup(pte::R);
        h.prv = Priv::Machine;
        assert_eq!(
            h.translate(&mut m, 0x0040_1000, Access::Read).unwrap().pa,
            0x0040_1000
        );
        h.csr.mstatus |= MSTATUS_MPRV | (1 << MSTATUS_MPP_SHIFT);
        assert_eq!(
            h.translate(&mut m, 0x0040_1000, Access::Read).unwrap().pa,
            0x8020_0000
        );
        // Fetches ignore MPRV.
        assert_eq!(
            h.translate(&mut m, 0x0040_1000, Access::Execute)
                .unwrap()
                .pa,
            0x0040_1000
        );
    }

    #[test]
    fn invalid_and_reserved_ptes_fault() {
        let (h, mut m) = setup(pte::W); // W without R is reserved
        assert!(h.translate(&mut m, 0x0040_1000, Access::Read).is_err());
        assert_eq!(
            h.translate(&mut m, 0x0080_0000, Access::Read).unwrap_err(),
            Trap::new(Exception::LoadPageFault, 0x0080_0000)
        );
    }

    #[test]
    fn page_table_outside_ram_is_an_access_fault() {
        let mut h = Hart::new();
        h.prv = Priv::Supervisor;
        h.csr.satp = SATP_MODE_SV32 | 0x3f_ffff; // root at 0x3_ffff_f000, beyond 4 GiB
        let mut m = FakeMem(HashMap::new());
        assert_eq!(
            h.translate(&mut m, 0x1000, Access::Execute).unwrap_err(),
            Trap::new(Exception::InsnAccessFault, 0x1000)
        );
    }
}
