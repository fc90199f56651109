//! The platforms a debugged hart runs on: the real one wrapped, so the engine's run loop stops
//! where the debugger needs it without the engine knowing about debuggers.
//!
//! - [`Pausable`]: full speed in every tier; between blocks it looks at one flag (a pause
//!   request: gdb attaching, Ctrl-C). Used while gdb has no breakpoint, watchpoint or step.
//! - [`Debugged`]: interpreter only ([`Platform::MAY_COMPILE`] is false), blocks end before
//!   every breakpoint so each one is a block entry, checked in `between_blocks`; pages with a
//!   watchpoint are never cached in the TLB, so every access to them reaches
//!   [`Platform::watch_access`]. Guest memory is never written.
//!
//! Both own the wrapped platform while the engine runs (the engine tells platform types apart by
//! `TypeId`, which needs a `'static` type; switching between them drops decoded code).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gdbstub::target::ext::breakpoints::WatchKind;

use crate::cpu::tlb::PAGE_MASK;
use crate::cpu::{Access, Hart, Trap};
use crate::exec::{Platform, Resume, Stop, Target};

/// The trap cause a watchpoint hit raises to leave the block at the accessing instruction: a
/// cause the privileged spec designates for custom use, which this CPU never raises, and which
/// [`Debugged::handle_trap`] takes before the wrapped platform could see it.
const WATCH_HIT_CAUSE: u32 = 24;

/// A watched range of virtual addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watchpoint {
    pub addr: u32,
    pub len: u32,
    pub kind: WatchKind,
}

impl Watchpoint {
    /// Whether an access of `size` bytes at `va` for `access` hits this watchpoint.
    fn hit_by(&self, va: u32, size: u32, access: Access) -> bool {
        let kind_matches = match self.kind {
            WatchKind::Write => access == Access::Write,
            WatchKind::Read => access == Access::Read,
            WatchKind::ReadWrite => true,
        };
        let (start, end) = (va as u64, va as u64 + size as u64);
        let (w_start, w_end) = (self.addr as u64, self.addr as u64 + self.len.max(1) as u64);
        kind_matches && start < w_end && w_start < end
    }

    /// Whether this watchpoint covers part of the page holding `va`.
    fn touches_page_of(&self, va: u32) -> bool {
        let page = (va & !PAGE_MASK) as u64;
        let (w_start, w_end) = (self.addr as u64, self.addr as u64 + self.len.max(1) as u64);
        w_start < page + 4096 && page < w_end
    }
}

/// Why a [`Debugged`] run stopped with [`Stop::Debug`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugEvent {
    /// A pause was requested (Ctrl-C, or maybe just data from gdb).
    Pause,
    /// The next instruction is at a breakpoint.
    Breakpoint,
    /// The step finished: one instruction retired, or a trap was taken.
    Stepped,
    /// The instruction at `hart.pc` is about to make an access that `watchpoint` watches; it
    /// has not run.
    Watch(Watchpoint),
}

/// Runs at full speed; stops between blocks when `pause` is set.
pub struct Pausable<P> {
    pub inner: P,
    pub pause: Arc<AtomicBool>,
}

/// The platform methods that both wrappers pass straight to the wrapped one.
macro_rules! forward_platform {
    () => {
        const PREDICTS_INDIRECT_JUMPS: bool = P::PREDICTS_INDIRECT_JUMPS;

        #[inline(always)]
        fn mmio_read(&mut self, hart: &mut Hart, paddr: u32, size: u32) -> Result<u64, Trap> {
            self.inner.mmio_read(hart, paddr, size)
        }

        #[inline(always)]
        fn mmio_write(
            &mut self,
            hart: &mut Hart,
            paddr: u32,
            size: u32,
            value: u64,
        ) -> Result<(), Trap> {
            self.inner.mmio_write(hart, paddr, size, value)
        }

        fn note_external_writes(&mut self, hart: &mut Hart) -> bool {
            self.inner.note_external_writes(hart)
        }

        #[inline(always)]
        fn allow_misaligned(&self) -> bool {
            self.inner.allow_misaligned()
        }

        fn flat_host_base(&self) -> Option<usize> {
            self.inner.flat_host_base()
        }

        fn debug_read(&mut self, hart: &Hart, va: u32, buf: &mut [u8]) -> usize {
            self.inner.debug_read(hart, va, buf)
        }

        fn debug_write(&mut self, hart: &Hart, va: u32, data: &[u8]) -> usize {
            self.inner.debug_write(hart, va, data)
        }
    };
}

impl<P: Platform> Platform for Pausable<P> {
    forward_platform!();

    #[inline(always)]
    fn translate(&mut self, hart: &mut Hart, va: u32, access: Access) -> Result<Target, Trap> {
        self.inner.translate(hart, va, access)
    }

    fn handle_trap(&mut self, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
        self.inner.handle_trap(hart, trap)
    }

    #[inline(always)]
    fn between_blocks(&mut self, hart: &mut Hart) -> Option<Stop> {
        if let Some(stop) = self.inner.between_blocks(hart) {
            return Some(stop);
        }
        if self.pause.load(Ordering::Relaxed) {
            return Some(Stop::Debug);
        }
        None
    }

    #[inline(always)]
    fn between_blocks_quiet(&mut self, hart: &mut Hart) -> bool {
        !self.pause.load(Ordering::Relaxed) && self.inner.between_blocks_quiet(hart)
    }

    fn wait_for_interrupt(&mut self, hart: &mut Hart) {
        if !self.pause.load(Ordering::Relaxed) {
            self.inner.wait_for_interrupt(hart);
        }
    }
}

/// Runs interpreted with breakpoints, watchpoints and single steps.
pub struct Debugged<P> {
    pub inner: P,
    pub pause: Arc<AtomicBool>,
    pub breakpoints: BTreeSet<u32>,
    pub watchpoints: Vec<Watchpoint>,
    /// Stop as soon as one instruction retired or a trap was taken (the engine builds
    /// one-instruction blocks meanwhile).
    pub stepping: bool,
    /// Let accesses through without looking at the watchpoints (to run an instruction a
    /// watchpoint stopped).
    pub watch_suspended: bool,
    /// Where the run started (pc, instret).
    pub resumed_at: (u32, u64),
    /// A breakpoint here (pc, instret) does not stop the run: where gdb resumed from.
    pub ignore_breakpoint_at: Option<(u32, u64)>,
    /// A trap was handled since the run started (ends a step).
    pub trapped: bool,
    /// Why the run stopped with [`Stop::Debug`].
    pub event: Option<DebugEvent>,
}

impl<P> Debugged<P> {
    /// A debugged platform around `inner`, for a run starting at the hart's current state.
    pub fn new(inner: P, pause: Arc<AtomicBool>, hart: &Hart) -> Debugged<P> {
        Debugged {
            inner,
            pause,
            breakpoints: BTreeSet::new(),
            watchpoints: Vec::new(),
            stepping: false,
            watch_suspended: false,
            resumed_at: (hart.pc, hart.instret),
            ignore_breakpoint_at: Some((hart.pc, hart.instret)),
            trapped: false,
            event: None,
        }
    }

    /// Whether the instruction at `hart.pc` can be fetched: a breakpoint stops the hart only
    /// then (as on hardware, where the fetch comes first). Otherwise the fetch faults, the
    /// guest's handler runs (maps the page, say) and the breakpoint is met on the way back.
    fn can_fetch(&mut self, hart: &mut Hart) -> bool
    where
        P: Platform,
    {
        matches!(
            self.inner.translate(hart, hart.pc, Access::Execute),
            Ok(Target::Ram { .. })
        )
    }

    fn stop_for(&mut self, event: DebugEvent) -> Option<Stop> {
        self.event = Some(event);
        Some(Stop::Debug)
    }
}

impl<P: Platform> Platform for Debugged<P> {
    forward_platform!();

    const MAY_COMPILE: bool = false;

    fn ends_block_before(&self, pc: u32) -> bool {
        self.breakpoints.contains(&pc)
    }

    fn translate(&mut self, hart: &mut Hart, va: u32, access: Access) -> Result<Target, Trap> {
        let target = self.inner.translate(hart, va, access)?;
        if access != Access::Execute && self.watchpoints.iter().any(|w| w.touches_page_of(va)) {
            // Never cached: every access to this page comes back here and to `watch_access`.
            if let Target::Ram { host, .. } = target {
                return Ok(Target::Ram {
                    host,
                    cacheable: false,
                });
            }
        }
        Ok(target)
    }

    fn watch_access(
        &mut self,
        hart: &Hart,
        va: u32,
        size: u32,
        access: Access,
    ) -> Result<(), Trap> {
        self.inner.watch_access(hart, va, size, access)?;
        if self.watch_suspended {
            return Ok(());
        }
        if let Some(w) = self.watchpoints.iter().find(|w| w.hit_by(va, size, access)) {
            self.event = Some(DebugEvent::Watch(*w));
            return Err(Trap {
                cause: WATCH_HIT_CAUSE,
                tval: va,
            });
        }
        Ok(())
    }

    fn handle_trap(&mut self, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
        if trap.cause == WATCH_HIT_CAUSE && matches!(self.event, Some(DebugEvent::Watch(_))) {
            return Err(Stop::Debug);
        }
        let resume = self.inner.handle_trap(hart, trap);
        self.trapped = true;
        if !self.watchpoints.is_empty() {
            // The wrapped platform may have cached watched pages (misaligned emulation).
            hart.tlb.flush();
        }
        resume
    }

    fn between_blocks(&mut self, hart: &mut Hart) -> Option<Stop> {
        if self.stepping {
            // No interrupt is taken during a step (as QEMU's gdb stub does by default).
            if hart.instret != self.resumed_at.1 || self.trapped {
                return self.stop_for(DebugEvent::Stepped);
            }
            return None;
        }
        if let Some(stop) = self.inner.between_blocks(hart) {
            return Some(stop);
        }
        if self.pause.load(Ordering::Relaxed) {
            return self.stop_for(DebugEvent::Pause);
        }
        if self.breakpoints.contains(&hart.pc)
            && Some((hart.pc, hart.instret)) != self.ignore_breakpoint_at
            && self.can_fetch(hart)
        {
            return self.stop_for(DebugEvent::Breakpoint);
        }
        None
    }

    fn wait_for_interrupt(&mut self, hart: &mut Hart) {
        if !self.stepping && !self.pause.load(Ordering::Relaxed) {
            self.inner.wait_for_interrupt(hart);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watchpoints_match_overlapping_accesses_of_their_kind() {
        let w = Watchpoint {
            addr: 0x1002,
            len: 2,
            kind: WatchKind::Write,
        };
        assert!(w.hit_by(0x1000, 4, Access::Write));
        assert!(w.hit_by(0x1003, 1, Access::Write));
        assert!(!w.hit_by(0x1004, 4, Access::Write));
        assert!(!w.hit_by(0x0ffe, 2, Access::Write));
        assert!(!w.hit_by(0x1000, 4, Access::Read));
        let r = Watchpoint {
            kind: WatchKind::ReadWrite,
            ..w
        };
        assert!(r.hit_by(0x1000, 8, Access::Read));
        assert!(r.touches_page_of(0x1fff));
        assert!(!r.touches_page_of(0x2000));
    }
}
