//! The run-loop contract every tier shares: how a block (interpreted or compiled) is entered
//! and left ([`Exit`], [`BlockExit`]), the state handlers and compiled code share with the run
//! loop while blocks run ([`RunState`], [`RunCtx`]), and the jump cache (guest pc -> block) that
//! both the interpreter's chaining and compiled code's dispatcher follow. Tiers depend on this
//! module, never on each other.

use super::platform::{Platform, Stop};
use crate::cpu::{Hart, Trap};

/// How a block ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockExit {
    /// Ran to its end (or took a branch): `hart.pc` is the next pc.
    Next,
    /// An instruction trapped: `hart.pc` is its address, it did not retire.
    Trap(Trap),
    /// `hart.pc` is the next pc, and decoded code may be stale (fence.i, sfence.vma, satp).
    FlushCode,
    /// WFI retired: `hart.pc` is the next pc; the run loop may idle until an interrupt.
    Wfi,
    /// While chaining into the next block, `between_blocks` asked to stop: the reason is in
    /// [`RunState::stop`].
    Stop,
    /// A store hit a page holding decoded code (`hart.code_pages` says which): `hart.pc` is
    /// the next pc; that code must be dropped before anything else runs.
    CodeWritten,
}

/// A jump-cache entry: the block for guest `pc` (its interpreter entry and compiled code),
/// valid while the execute TLB maps `pc` to `host` (the block's identity), which also
/// re-checks fetch permission.
#[derive(Clone, Copy, Debug)]
pub struct JumpEntry {
    pub pc: u32,
    /// Index of the block in the engine's block list.
    pub block: u32,
    pub host: usize,
    /// The interpreter's entry for the block (its first slot; opaque outside the interpreter).
    pub slots: *const (),
    /// Entry of the block's compiled code for this `pc` (tier 1's entry convention), or 0.
    pub code: usize,
    /// Entry of a tier-2 region starting at this `pc` (a C function of the hart and the run
    /// context), or 0. Compiled code never jumps to it: a block with a region has no `code`,
    /// so dispatch returns to the run loop, which enters the region.
    pub region: usize,
}

impl JumpEntry {
    /// An entry that matches no pc (pcs are 2-byte aligned).
    pub const EMPTY: JumpEntry = JumpEntry {
        pc: 1,
        block: 0,
        host: 0,
        slots: std::ptr::null(),
        code: 0,
        region: 0,
    };
}

/// How much a tier-2 region runs when tier 1 calls it: tier 1's stub for the region counts
/// its calls and the instructions retired in them (the run loop's own entries are not
/// counted), so the engine can take back regions that run too little per entry to pay for
/// entering and leaving them ([`crate::exec::policy::MIN_REGION_INSNS_PER_ENTRY`]).
#[derive(Debug, Default)]
#[repr(C)]
pub struct RegionUse {
    pub entries: u64,
    pub insns: u64,
}

/// Entries in the direct-mapped jump cache.
pub const JUMP_CACHE_SIZE: usize = 4096;

/// The jump-cache index of guest `pc`.
#[inline(always)]
pub fn jump_slot(pc: u32) -> usize {
    (pc as usize >> 1) & (JUMP_CACHE_SIZE - 1)
}

/// The platform-independent part of what handlers share while blocks run: the engine's jump
/// cache (to go from one block straight into the next) and the run loop's checks.
#[derive(Debug)]
pub struct RunState {
    /// The engine's jump cache (`JUMP_CACHE_SIZE` entries); every entry is empty or names a
    /// live block compiled for the platform type of the enclosing [`RunCtx`].
    pub jump_cache: *const JumpEntry,
    /// Stop chaining when `hart.instret` reaches this.
    pub limit: u64,
    /// Where tier 1's code stops chaining: `limit` as it enters compiled code, 0 once an access
    /// reached a device (`abi::end_chain_after_device`). The budget cannot say so for every
    /// transfer: a self-loop's back edge takes from it only once per several iterations.
    pub chain_limit: u64,
    /// Blocks left to chain in this `run_block` call (or this entry into compiled code).
    pub budget: u32,
    /// Compiled code ended its chain early because an access reached a device
    /// (`abi::end_chain_after_device`): the run did not end for using up its budget, so it is
    /// no sign of a hot loop where it ended (`Engine::end_sampled_run`).
    pub device_ended_chain: bool,
    /// Blocks one interpreter entry may chain (the interpreter's `CHAIN_BUDGET`; 0 when a compiled tier is on, so
    /// every block entry passes through the run loop, which counts runs for compilation).
    pub chain_budget: u32,
    /// Blocks compiled code entered through the dispatcher (for statistics).
    pub jit_dispatched: u64,
    /// `between_blocks` already ran (and said go on) for the current `hart.pc`.
    pub checked: bool,
    /// Blocks entered by chaining, over all `run_block` calls (for statistics).
    pub chained: u64,
    /// The trap of a block that ended in one.
    pub trap: Trap,
    /// Why `between_blocks` stopped the hart while chaining.
    pub stop: Option<Stop>,
    /// The platform's flat guest-memory base (`Platform::flat_host_base`, 0 for none), kept
    /// current by the run loop: tier-2 code reads it instead of embedding it, so the same code
    /// serves a user program after `execve` moved its address space.
    pub flat_base: usize,
    /// Tier-2 indirect jumps whose target was a block of their own region (they went on
    /// inside it), and those that left the region (for statistics).
    pub indirect_in_region: u64,
    pub indirect_left_region: u64,
    /// Instructions retired inside tier-2 regions, however they were entered (the run loop
    /// or a tier-1 stub); each region adds its own count when it leaves.
    pub t2_retired: u64,
    /// Tier-2 regions entered straight from another region's exit (for statistics).
    pub t2_chained: u64,
    /// The running fast tier-2 region's cap: it goes on to another of its blocks only while
    /// `hart.instret` is below this. Set at the region's entry; a reporting access
    /// (`abi::load_reporting_helper`, `store_reporting_helper`) that retired without the
    /// inline path's TLB hit sets it to 0, so the region leaves at the end of the block.
    pub region_cap: u64,
}

/// What handlers share while blocks run: a [`RunState`] (first, so platform-independent
/// handlers reach it through the same pointer) and the platform.
#[repr(C)]
pub struct RunCtx<P> {
    pub state: RunState,
    pub plat: *mut P,
}

/// How a handler left its block, as handlers return it: one integer, so every handler's
/// return paths can end in a jump to the next handler (a larger value would be returned
/// through memory or merged from parts, and the compiler would then keep real calls). A trap's
/// details go to [`RunState::trap`].
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Exit(pub u32);

impl Exit {
    pub const NEXT: Exit = Exit(0);
    pub const TRAP: Exit = Exit(1);
    pub const FLUSH_CODE: Exit = Exit(2);
    pub const WFI: Exit = Exit(3);
    /// The platform's `between_blocks` said stop while chaining; the reason is in the context.
    pub const STOP: Exit = Exit(4);
    pub const CODE_WRITTEN: Exit = Exit(5);

    /// Leave with `t`.
    ///
    /// # Safety
    ///
    /// `ctx` points to a live [`RunCtx`] (whose first field is the [`RunState`]).
    #[inline(always)]
    pub(crate) unsafe fn trap(ctx: *mut (), t: Trap) -> Exit {
        (*(ctx as *mut RunState)).trap = t;
        Exit::TRAP
    }
}

/// The [`BlockExit`] for exit code `exit` (as handlers and compiled code return it).
pub(crate) fn block_exit(state: &RunState, exit: Exit) -> BlockExit {
    match exit {
        Exit::NEXT => BlockExit::Next,
        Exit::TRAP => BlockExit::Trap(state.trap),
        Exit::FLUSH_CODE => BlockExit::FlushCode,
        Exit::WFI => BlockExit::Wfi,
        Exit::CODE_WRITTEN => BlockExit::CodeWritten,
        _ => BlockExit::Stop,
    }
}

/// The platform's `between_blocks`; false (with the reason in `c.stop`) if it says stop. Out
/// of line: its `Option<Stop>` lives in memory, and a local whose address is taken in
/// [`chain`] would keep the call to the next block from becoming a jump.
#[inline(never)]
pub(crate) fn between_blocks<P: Platform>(hart: &mut Hart, c: &mut RunCtx<P>) -> bool {
    // SAFETY: `c.plat` points to the live platform and nothing else borrows it while blocks
    // run (see `run_block`).
    match unsafe { &mut *c.plat }.between_blocks(hart) {
        Some(stop) => {
            c.state.stop = Some(stop);
            false
        }
        None => true,
    }
}
