//! The boundary between the engine and what surrounds the hart: a user-mode Linux process, a
//! bare-metal test harness, or the full machine. The engine is generic over [`Platform`] so
//! every call is static and inlinable.

use crate::cpu::{Access, Hart, Trap};

/// Where a translated access lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Guest RAM: `host` points at the accessed byte. When `cacheable` the engine may install a
    /// TLB entry for the whole 4 KiB page, so later accesses skip the platform entirely.
    Ram { host: *mut u8, cacheable: bool },
    /// Not RAM: the access goes to [`Platform::mmio_read`] / [`Platform::mmio_write`] with this
    /// physical address.
    Mmio { paddr: u32 },
}

/// Why the engine stopped running the hart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The guest asked to exit with this status (exit syscall, HTIF tohost, syscon).
    Exit(i32),
    /// The guest asked for a system reset (reboot): the machine starts over.
    Reset,
    /// The instruction budget given to the engine ran out.
    InsnLimit,
    /// The user asked for statistics (console `Ctrl-A s`): report them; the run may resume.
    Stats,
    /// The host asked the machine to pause (to save a snapshot, say). The engine stops only
    /// between blocks, so the hart's state is complete and consistent (no instruction half
    /// done, compiled code's registers written back); the run may resume.
    Pause,
    /// The guest died (fatal signal in user mode, unhandled trap, ...). The message says why;
    /// the status is what the process should exit with.
    Fatal { status: i32, message: String },
    /// A debugger wants the hart (breakpoint, watchpoint, finished step, pause request): only
    /// platforms that wrap another for a debugger (`crate::gdb`) produce it, and they consume it.
    Debug,
}

/// How to go on after the platform handled a trap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Continue at `hart.pc`.
    Continue,
    /// Continue at `hart.pc`, but every decoded or compiled block may be stale (code memory was
    /// remapped or unmapped): drop them first.
    FlushCode,
    /// Continue at `hart.pc` after the equivalent of a `fence.i` (an SBI remote fence.i): drop
    /// code that changed by other means than the hart's own stores.
    FenceI,
}

/// See [`Platform::host_stop_probe`].
pub type HostStopProbe = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// Services the engine needs from its surroundings.
pub trait Platform {
    /// Translate virtual address `va` for `access` at the hart's current privilege and address
    /// translation mode. Errors are the trap the access raises (page fault, access fault).
    fn translate(&mut self, hart: &mut Hart, va: u32, access: Access) -> Result<Target, Trap>;

    /// A load of `size` (1, 2, 4 or 8) bytes from a non-RAM physical address.
    fn mmio_read(&mut self, hart: &mut Hart, paddr: u32, size: u32) -> Result<u64, Trap>;

    /// A store of `size` (1, 2, 4 or 8) bytes to a non-RAM physical address.
    fn mmio_write(
        &mut self,
        hart: &mut Hart,
        paddr: u32,
        size: u32,
        value: u64,
    ) -> Result<(), Trap>;

    /// Handle a synchronous trap raised by the instruction at `hart.pc` (ecall, misaligned
    /// access, page fault, illegal instruction, ...): emulate it (user-mode syscalls), deliver it
    /// to the guest's trap handler, or stop.
    fn handle_trap(&mut self, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop>;

    /// Called by the run loop between blocks: take pending interrupts, notice exit requests.
    /// Must be cheap; it runs once per block.
    #[inline(always)]
    fn between_blocks(&mut self, _hart: &mut Hart) -> Option<Stop> {
        None
    }

    /// The part of [`Platform::between_blocks`] that is due whatever happens (counting a
    /// block), done here if nothing else is due this time; true if so: then `between_blocks`
    /// need not run for this block, and nothing looked at or changed the hart's FP state nor
    /// ran host FP code. The dispatcher of compiled code (indirect jumps, returns) asks this
    /// first: only when it says false does it fold the FP flags that compiled code keeps
    /// pending in MXCSR into the hart (two MXCSR accesses, each waiting for the FP work in
    /// flight: more than half of a Lua interpreter's time under tier 1) and call
    /// `between_blocks`. The default, false, is always correct.
    #[inline(always)]
    fn between_blocks_quiet(&mut self, _hart: &mut Hart) -> bool {
        false
    }

    /// A probe, callable from any thread, that says whether the host asked the machine to stop
    /// (a termination signal, the quit key, the `--timeout` deadline), so a wait that holds the
    /// hart (a debugger's) can give up and let the run loop take the stop. `None`: the
    /// platform has no such requests.
    fn host_stop_probe(&self) -> Option<HostStopProbe> {
        None
    }

    /// A `fence.i` retired: the hart's own stores into code were noticed as they happened, but
    /// other writers (device DMA, firmware) were not. Record every page of RAM those wrote since
    /// the last call with `hart.code_pages.note_store` and return true, so the engine drops just
    /// that code; or return false if the platform cannot tell, and all code is dropped.
    fn note_external_writes(&mut self, _hart: &mut Hart) -> bool {
        false
    }

    /// WFI retired: idle until an interrupt may be pending (the machine sleeps the host thread
    /// until the next timer deadline or console input). Returning early is always correct.
    fn wait_for_interrupt(&mut self, _hart: &mut Hart) {}

    /// Whether misaligned loads and stores may be performed directly (`--allow-misaligned`)
    /// instead of raising a misaligned trap.
    fn allow_misaligned(&self) -> bool {
        false
    }

    /// `Some(base)` if every cacheable RAM translation this platform makes maps guest `va` to
    /// host `base + va` (a flat address space, as in user mode): compiled code then forms host
    /// addresses without reading the TLB entry's addend. The TLB tag check stays.
    fn flat_host_base(&self) -> Option<usize> {
        None
    }

    /// Whether compiled code may load and store guest memory at `flat_host_base() + va` with no
    /// check at all (neither the TLB tag nor alignment): the host pages carry the guest's
    /// protections and the platform turns a host fault there into the guest's (fatal) fault.
    /// Such stores also skip the check for pages holding code, so a store into code is seen
    /// at the next `fence.i` (or flush), as the ISA allows, not at once. Compiled code depends
    /// on the answer: a platform whose answer changes must have the engine's code flushed.
    fn unchecked_memory(&self) -> bool {
        false
    }

    /// Whether blocks may run as compiled code (tier 1, tier 2). A platform that must see every
    /// block entry and every memory access (a debugger's) says no: the engine then interprets.
    const MAY_COMPILE: bool = true;

    /// Whether the engine profiles the targets of interpreted indirect jumps and tier 2 follows
    /// a dominant target inside a region (indirect-jump prediction). On in user mode, with one
    /// program in one address space; off in system mode, where one block's code serves every
    /// process that maps it and the kernel's indirect jumps rarely have one target.
    const PREDICTS_INDIRECT_JUMPS: bool = false;

    /// Whether the block builder must end a block before the instruction at `pc`, so that `pc`
    /// is a block entry, where [`Platform::between_blocks`] runs (a debugger's breakpoint, or
    /// every pc for single-instruction blocks). Decoded blocks are cached: a platform whose
    /// answer changes must have the engine's code flushed.
    #[inline(always)]
    fn ends_block_before(&self, _pc: u32) -> bool {
        false
    }

    /// A load (`Access::Read`) or store (`Access::Write`; both for an AMO) of `size` bytes at
    /// virtual address `va` that the slow path of the memory access is about to make (a TLB
    /// hit never gets here). An error stops the instruction before it has any effect, as a
    /// trap would (a debugger's watchpoint).
    #[inline(always)]
    fn watch_access(
        &mut self,
        _hart: &Hart,
        _va: u32,
        _size: u32,
        _access: Access,
    ) -> Result<(), Trap> {
        Ok(())
    }

    /// A debugger reads guest memory at virtual address `va` through the hart's current
    /// translation: copy what is there into `buf` with no side effect on the guest (no A/D
    /// update, no device access, no trap) and return how many bytes were copied (the copy
    /// stops at the first byte that is not readable RAM).
    fn debug_read(&mut self, _hart: &Hart, _va: u32, _buf: &mut [u8]) -> usize {
        0
    }

    /// A debugger writes guest memory at virtual address `va`, like [`Platform::debug_read`];
    /// returns how many bytes were written. The caller drops decoded code afterwards.
    fn debug_write(&mut self, _hart: &Hart, _va: u32, _data: &[u8]) -> usize {
        0
    }
}
