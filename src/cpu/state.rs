//! The architectural state of a hart, apart from its host caches: what a snapshot saves, a
//! debugger reads and writes, and a lockstep check compares.
//!
//! [`Hart::state`] copies it out; [`Hart::restore`] puts it back and drops every cache that
//! could disagree with it (TLB, code pages). The machine clock's value is part of the state;
//! its host anchor is not.

use rv32vm_devices::state::{StateError, StateReader, StateWriter};

use super::{Csrs, Hart, Priv};

/// A hart's architectural state. See the [module documentation](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HartState {
    pub x: [u32; 32],
    pub pc: u32,
    pub fflags: u8,
    pub frm: u8,
    pub prv: Priv,
    pub f: [u64; 32],
    pub reservation: Option<u32>,
    pub csr: Csrs,
    pub instret: u64,
    /// The machine clock (`time` CSR, CLINT `mtime`) in ticks.
    pub time: u64,
}

impl Hart {
    /// The architectural state now.
    pub fn state(&self) -> HartState {
        HartState {
            x: self.x,
            pc: self.pc,
            fflags: self.fflags,
            frm: self.frm,
            prv: self.prv,
            f: self.f,
            reservation: self.reservation,
            csr: self.csr.clone(),
            instret: self.instret,
            time: self.time(),
        }
    }

    /// Take on `state`: registers, CSRs and counters as given, the clock going on from the
    /// saved time, and every host cache dropped (the engine's compiled code is a cache too:
    /// flush it with `Engine::flush_code`).
    pub fn restore(&mut self, state: &HartState) {
        self.x = state.x;
        self.x[0] = 0;
        self.pc = state.pc;
        self.fflags = state.fflags;
        self.frm = state.frm;
        self.prv = state.prv;
        self.f = state.f;
        self.reservation = state.reservation;
        self.csr = state.csr.clone();
        self.instret = state.instret;
        self.tlb.flush();
        self.code_pages.clear();
        self.set_time(state.time);
    }
}

impl HartState {
    /// Encode for a snapshot (fixed layout, little endian).
    pub fn save(&self, out: &mut StateWriter) {
        self.x.iter().for_each(|&v| out.u32(v));
        out.u32(self.pc);
        out.u8(self.fflags);
        out.u8(self.frm);
        out.u8(self.prv as u8);
        self.f.iter().for_each(|&v| out.u64(v));
        out.bool(self.reservation.is_some());
        out.u32(self.reservation.unwrap_or(0));
        let c = &self.csr;
        for v in [
            c.mstatus,
            c.medeleg,
            c.mideleg,
            c.mie,
            c.mip,
            c.mtvec,
            c.mscratch,
            c.mepc,
            c.mcause,
            c.mtval,
            c.mcounteren,
            c.mcountinhibit,
        ] {
            out.u32(v);
        }
        out.u64(c.menvcfg);
        for v in [
            c.stvec,
            c.sscratch,
            c.sepc,
            c.scause,
            c.stval,
            c.satp,
            c.scounteren,
            c.senvcfg,
        ] {
            out.u32(v);
        }
        out.u64(c.stimecmp);
        out.u32(c.mhartid);
        c.pmpcfg.iter().for_each(|&v| out.u32(v));
        c.pmpaddr.iter().for_each(|&v| out.u32(v));
        out.u64(c.cycle_offset);
        out.u64(c.instret_offset);
        out.u64(self.instret);
        out.u64(self.time);
    }

    /// Decode what [`HartState::save`] wrote.
    pub fn load(input: &mut StateReader<'_>) -> Result<HartState, StateError> {
        let mut x = [0u32; 32];
        for v in x.iter_mut() {
            *v = input.u32("x register")?;
        }
        let pc = input.u32("pc")?;
        let fflags = input.u8("fflags")?;
        let frm = input.u8("frm")?;
        let prv = match input.u8("privilege level")? {
            0 => Priv::User,
            1 => Priv::Supervisor,
            3 => Priv::Machine,
            other => return Err(StateError::invalid(format!("privilege level {other}"))),
        };
        let mut f = [0u64; 32];
        for v in f.iter_mut() {
            *v = input.u64("f register")?;
        }
        let has_reservation = input.bool("reservation")?;
        let reserved = input.u32("reservation address")?;
        let reservation = has_reservation.then_some(reserved);
        let mut w = || input.u32("csr");
        let mut csr = Csrs::new();
        csr.mstatus = w()?;
        csr.medeleg = w()?;
        csr.mideleg = w()?;
        csr.mie = w()?;
        csr.mip = w()?;
        csr.mtvec = w()?;
        csr.mscratch = w()?;
        csr.mepc = w()?;
        csr.mcause = w()?;
        csr.mtval = w()?;
        csr.mcounteren = w()?;
        csr.mcountinhibit = w()?;
        csr.menvcfg = input.u64("menvcfg")?;
        let mut w = || input.u32("csr");
        csr.stvec = w()?;
        csr.sscratch = w()?;
        csr.sepc = w()?;
        csr.scause = w()?;
        csr.stval = w()?;
        csr.satp = w()?;
        csr.scounteren = w()?;
        csr.senvcfg = w()?;
        csr.stimecmp = input.u64("stimecmp")?;
        csr.mhartid = input.u32("mhartid")?;
        for v in csr.pmpcfg.iter_mut() {
            *v = input.u32("pmpcfg")?;
        }
        for v in csr.pmpaddr.iter_mut() {
            *v = input.u32("pmpaddr")?;
        }
        csr.cycle_offset = input.u64("cycle offset")?;
        csr.instret_offset = input.u64("instret offset")?;
        let instret = input.u64("instret")?;
        let time = input.u64("time")?;
        Ok(HartState {
            x,
            pc,
            fflags,
            frm,
            prv,
            f,
            reservation,
            csr,
            instret,
            time,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy_hart() -> Hart {
        let mut hart = Hart::new();
        for (i, x) in hart.x.iter_mut().enumerate().skip(1) {
            *x = i as u32 * 0x0101_0101;
        }
        hart.pc = 0x8040_1234;
        hart.prv = Priv::Supervisor;
        hart.fflags = 0x1f;
        hart.frm = 3;
        hart.f[7] = 0xffff_ffff_3f80_0000;
        hart.reservation = Some(0x8000_1000);
        hart.csr.satp = 0x8008_0123;
        hart.csr.stimecmp = 0x1_0000_0000;
        hart.csr.pmpaddr[15] = 0xdead;
        hart.instret = 987_654_321;
        hart.clock.set_deterministic(true, hart.instret);
        hart.set_time(55_555);
        hart
    }

    #[test]
    fn state_encodes_decodes_and_restores_exactly() {
        let hart = busy_hart();
        let state = hart.state();
        let mut out = StateWriter::new();
        state.save(&mut out);
        let bytes = out.into_bytes();
        let mut input = StateReader::new(&bytes);
        let decoded = HartState::load(&mut input).unwrap();
        input.finish("hart").unwrap();
        assert_eq!(decoded, state);
        let mut restored = Hart::new();
        restored.clock.set_deterministic(true, 0);
        restored
            .tlb
            .insert(0x1000, crate::cpu::Access::Read, 0x5000 as *mut u8);
        restored.restore(&decoded);
        assert_eq!(restored.state(), state);
        assert_eq!(restored.tlb.lookup(0x1000, crate::cpu::Access::Read), None);
        // Every shorter input is an error, not a panic.
        for cut in 0..bytes.len() {
            assert!(HartState::load(&mut StateReader::new(&bytes[..cut])).is_err());
        }
    }
}
