//! The compiled-code ABI: the functions every compiling tier's code calls (`extern "sysv64"`,
//! the C convention of x86-64 hosts, monomorphised per platform type): slow paths of loads and
//! stores, instructions whose semantics live in shared Rust code (A, F/D, system), a few rare
//! bit-manipulation operations, and the dispatcher that finds the next compiled block. Tiers
//! get their addresses from [`Helpers::for_platform`]. Every one of them reuses the shared semantics (`exec::semantics`, `exec::mem`).
//!
//! Status convention: 0 = go on, [`STATUS_TRAP`] = the instruction trapped (the trap is in
//! `RunState::trap`), [`STATUS_CODE_WRITTEN`] = a store hit a page holding code (leave the
//! block after this instruction). The reporting loads and stores that tier 2's fast regions
//! call for every access also clear `RunState::region_cap` where an inline path would have
//! missed.

use crate::cpu::{fpu, Access, Hart};
use crate::exec::contract::{between_blocks, jump_slot, Exit, JumpEntry, RunCtx, RunState};
use crate::exec::host_fp;
use crate::exec::mem::{load, load_fast, store, store_fast, MemValue};
use crate::exec::platform::Platform;
use crate::exec::semantics;
use crate::isa::Insn;

/// Helper status: the instruction trapped.
pub const STATUS_TRAP: u32 = 1;
/// Helper status: the instruction retired, and a store hit a page holding code.
pub const STATUS_CODE_WRITTEN: u32 = 2;

/// Addresses of the helpers for one platform type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Helpers {
    pub load_u8: usize,
    pub load_u16: usize,
    pub load_u32: usize,
    pub store_u8: usize,
    pub store_u16: usize,
    pub store_u32: usize,
    /// Whole loads (byte, halfword, word) for code without an inline TLB path: `(status <<
    /// 32) | value`; where the inline path would not have been taken, they also clear
    /// `RunState::region_cap` ([`load_reporting_helper`]).
    pub load_reporting: [usize; 3],
    /// Whole stores, likewise: the status of a store helper.
    pub store_reporting: [usize; 3],
    pub atomic: usize,
    pub fp_mem: usize,
    pub fp: usize,
    pub system: usize,
    pub dispatch: usize,
    /// `extern "sysv64" fn(hart, ctx) -> usize`: the region to go on in after a region left
    /// with a plain next pc ([`region_chain_helper`]).
    pub chain: usize,
    pub cpop: usize,
    pub orc_b: usize,
    pub clmul: usize,
    pub clmulh: usize,
    pub clmulr: usize,
    /// `extern "sysv64" fn(op, a, b, imm) -> u32`: any ALU operation (`semantics::alu`).
    pub alu: usize,
}

impl Helpers {
    /// The helpers for platform type `P`.
    pub fn for_platform<P: Platform>() -> Helpers {
        Self::build::<P, false>()
    }

    /// The helpers for platform type `P` that code with native FP operations calls: each
    /// takes MXCSR's flags into the hart first and drops any its own work raised after
    /// (`folding`). The chaining and dispatch helpers always do: compiled code goes on after
    /// them with the flags it left pending in MXCSR.
    pub fn folding_for_platform<P: Platform>() -> Helpers {
        Self::build::<P, true>()
    }

    /// Every helper with its field's name. Code loaded later (tier 2's objects, which the code
    /// cache keeps across processes) refers to helpers by these names: addresses change from
    /// process to process, names do not.
    pub fn named(&self) -> [(&'static str, usize); 24] {
        [
            ("load_u8", self.load_u8),
            ("load_u16", self.load_u16),
            ("load_u32", self.load_u32),
            ("store_u8", self.store_u8),
            ("store_u16", self.store_u16),
            ("store_u32", self.store_u32),
            ("load_reporting_u8", self.load_reporting[0]),
            ("load_reporting_u16", self.load_reporting[1]),
            ("load_reporting_u32", self.load_reporting[2]),
            ("store_reporting_u8", self.store_reporting[0]),
            ("store_reporting_u16", self.store_reporting[1]),
            ("store_reporting_u32", self.store_reporting[2]),
            ("atomic", self.atomic),
            ("fp_mem", self.fp_mem),
            ("fp", self.fp),
            ("system", self.system),
            ("dispatch", self.dispatch),
            ("chain", self.chain),
            ("cpop", self.cpop),
            ("orc_b", self.orc_b),
            ("clmul", self.clmul),
            ("clmulh", self.clmulh),
            ("clmulr", self.clmulr),
            ("alu", self.alu),
        ]
    }

    /// The name of the helper at `addr` ([`Helpers::named`]).
    pub fn name_of(&self, addr: usize) -> Option<&'static str> {
        self.named()
            .into_iter()
            .find(|&(_, a)| a == addr)
            .map(|(name, _)| name)
    }

    /// The address of the helper named `name` ([`Helpers::named`]).
    pub fn address_of(&self, name: &str) -> Option<usize> {
        self.named()
            .into_iter()
            .find(|&(n, _)| n == name)
            .map(|(_, a)| a)
    }

    fn build<P: Platform, const FOLD: bool>() -> Helpers {
        type LoadFn<P> = unsafe extern "sysv64" fn(*mut Hart, *mut RunCtx<P>, u32) -> u64;
        type StoreFn<P> = unsafe extern "sysv64" fn(*mut Hart, *mut RunCtx<P>, u32, u32) -> u32;
        type InsnFn<P> = unsafe extern "sysv64" fn(*mut Hart, *mut RunCtx<P>, Insn) -> u32;
        type SystemFn<P> =
            unsafe extern "sysv64" fn(*mut Hart, *mut RunCtx<P>, Insn, u32, u32) -> u32;
        type DispatchFn<P> = unsafe extern "sysv64" fn(*mut Hart, *mut RunCtx<P>) -> usize;
        type PureFn = extern "sysv64" fn(u32, u32) -> u32;
        type AluFn = extern "sysv64" fn(u32, u32, u32, i32) -> u32;
        Helpers {
            load_u8: load_helper::<u8, P, FOLD> as LoadFn<P> as usize,
            load_u16: load_helper::<u16, P, FOLD> as LoadFn<P> as usize,
            load_u32: load_helper::<u32, P, FOLD> as LoadFn<P> as usize,
            store_u8: store_helper::<u8, P, FOLD> as StoreFn<P> as usize,
            store_u16: store_helper::<u16, P, FOLD> as StoreFn<P> as usize,
            store_u32: store_helper::<u32, P, FOLD> as StoreFn<P> as usize,
            load_reporting: [
                load_reporting_helper::<u8, P, FOLD> as LoadFn<P> as usize,
                load_reporting_helper::<u16, P, FOLD> as LoadFn<P> as usize,
                load_reporting_helper::<u32, P, FOLD> as LoadFn<P> as usize,
            ],
            store_reporting: [
                store_reporting_helper::<u8, P, FOLD> as StoreFn<P> as usize,
                store_reporting_helper::<u16, P, FOLD> as StoreFn<P> as usize,
                store_reporting_helper::<u32, P, FOLD> as StoreFn<P> as usize,
            ],
            atomic: atomic_helper::<P, FOLD> as InsnFn<P> as usize,
            fp_mem: fp_mem_helper::<P, FOLD> as InsnFn<P> as usize,
            fp: fp_helper::<P, FOLD> as InsnFn<P> as usize,
            system: system_helper::<P, FOLD> as SystemFn<P> as usize,
            dispatch: dispatch_helper::<P> as DispatchFn<P> as usize,
            chain: region_chain_helper::<P> as DispatchFn<P> as usize,
            cpop: cpop as PureFn as usize,
            orc_b: orc_b as PureFn as usize,
            clmul: clmul as PureFn as usize,
            clmulh: clmulh as PureFn as usize,
            clmulr: clmulr as PureFn as usize,
            alu: alu_helper as AluFn as usize,
        }
    }
}

/// The two eightbytes an [`Insn`] is passed in (by value, System V: rdx then rcx as the third
/// argument).
pub fn insn_words(insn: &Insn) -> [u64; 2] {
    const _: () = assert!(std::mem::size_of::<Insn>() == 16);
    // SAFETY: `Insn` is `#[repr(C)]`, 16 bytes, made of integer and `#[repr(u8)]` enum fields
    // with no padding, so every byte is initialised and any `[u64; 2]` reading of them is
    // valid (the helper turns the words back into the same valid `Insn`).
    unsafe { std::mem::transmute::<Insn, [u64; 2]>(*insn) }
}

/// Run `body`, a helper's work; with `FOLD` (the helper serves code with native FP
/// operations), take the flags MXCSR holds into the hart's `fflags` first and drop any that
/// host work raised after, so the code's flags are the hart's before the helper looks, and
/// host work leaves none (`host_fp::take_mxcsr_flags`).
///
/// # Safety
///
/// `hart` is the live hart compiled code was entered with, not otherwise borrowed while
/// `body` is not running.
#[inline(always)]
unsafe fn folding<const FOLD: bool, R>(hart: *mut Hart, body: impl FnOnce() -> R) -> R {
    if FOLD {
        // SAFETY: per this function's contract.
        host_fp::take_mxcsr_flags(unsafe { &mut *hart });
    }
    let r = body();
    if FOLD {
        host_fp::drop_mxcsr_flags();
    }
    r
}

/// Status after an instruction that may have stored.
#[inline]
fn after_store(hart: &Hart) -> u32 {
    if hart.code_pages.any_written() {
        STATUS_CODE_WRITTEN
    } else {
        0
    }
}

/// Record `trap` for the run loop and report it.
#[inline]
fn trapped<P>(ctx: &mut RunCtx<P>, trap: crate::cpu::Trap) -> u32 {
    ctx.state.trap = trap;
    STATUS_TRAP
}

/// A load that missed the inline path: `(status << 32) | value` (value zero-extended).
///
/// # Safety
///
/// `hart` and `ctx` are the live hart and run context compiled code was entered with.
unsafe extern "sysv64" fn load_helper<T: MemValue, P: Platform, const FOLD: bool>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    va: u32,
) -> u64 {
    let work = || {
        // SAFETY: per this function's contract; compiled code holds no other reference to them
        // while the helper runs.
        let (hart, ctx) = unsafe { (&mut *hart, &mut *ctx) };
        // SAFETY: `ctx.plat` points to the live platform for the whole run (see `run_block`).
        let plat = unsafe { &mut *ctx.plat };
        match load::<T, P>(hart, plat, va) {
            Ok(v) => {
                end_chain_after_device(hart, ctx, va, Access::Read);
                v.to_u64() & 0xffff_ffff
            }
            Err(t) => (trapped(ctx, t) as u64) << 32,
        }
    };
    // SAFETY: this function's contract is `folding`'s.
    unsafe { folding::<FOLD, _>(hart, work) }
}

/// After an access at `va` that retired: if its page has no TLB entry for `access` (a device,
/// which never gets one), the chain ends after this block, so the run loop gets to the
/// platform (HTIF replies, interrupts a device raised) right there, as it does after every
/// block the interpreter runs. Compiled code decrements the budget at each chained transfer,
/// tier 1 in a register, which it reloads after a slow path; tier 1's self-loops take from it
/// only every so many iterations, but compare instret with `chain_limit` at each.
#[inline(always)]
fn end_chain_after_device<P: Platform>(hart: &Hart, ctx: &mut RunCtx<P>, va: u32, access: Access) {
    if hart.tlb.lookup(va, access).is_none() {
        ctx.state.budget = 1;
        ctx.state.chain_limit = 0;
        ctx.state.device_ended_chain = true;
    }
}

/// A whole load for code without an inline path: [`load_helper`]'s result. If the access
/// retired but the inline path's TLB test fails for it (a device, a misaligned access, a page
/// the TLB does not hold), `RunState::region_cap` becomes 0: the region leaves at the end of
/// the block, as code with an inline path does after a miss, so a device's interrupt is taken
/// promptly.
///
/// # Safety
///
/// As [`load_helper`].
unsafe extern "sysv64" fn load_reporting_helper<T: MemValue, P: Platform, const FOLD: bool>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    va: u32,
) -> u64 {
    // First what an inline path does (an aligned access to a page the TLB maps), without
    // the MXCSR folding around a helper's work: nothing here touches FP state.
    // SAFETY: per this function's contract; no other reference to the hart is live.
    if let Some(v) = load_fast::<T>(unsafe { &*hart }, va) {
        return v.to_u64() & 0xffff_ffff;
    }
    // SAFETY: this function's contract is `load_helper`'s.
    let r = unsafe { load_helper::<T, P, FOLD>(hart, ctx, va) };
    // SAFETY: as in `load_helper`; the helper above holds no reference any more.
    let (hart, ctx) = unsafe { (&*hart, &mut *ctx) };
    if r >> 32 == 0 && !hart.tlb.hits(va, T::SIZE, Access::Read) {
        ctx.state.region_cap = 0;
    }
    r
}

/// A whole store for code without an inline path: [`store_helper`]'s status. If the store
/// retired but the inline path's TLB test fails for it, `RunState::region_cap` becomes 0
/// (as in [`load_reporting_helper`]).
///
/// # Safety
///
/// As [`load_helper`].
unsafe extern "sysv64" fn store_reporting_helper<T: MemValue, P: Platform, const FOLD: bool>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    va: u32,
    value: u32,
) -> u32 {
    // First what an inline path does, as in `load_reporting_helper`.
    {
        // SAFETY: per this function's contract; no other reference to the hart is live.
        let hart = unsafe { &mut *hart };
        if store_fast(hart, va, T::from_u64(value as u64)) {
            return after_store(hart);
        }
    }
    // SAFETY: this function's contract is `store_helper`'s.
    let status = unsafe { store_helper::<T, P, FOLD>(hart, ctx, va, value) };
    // SAFETY: as in `load_helper`; the helper above holds no reference any more.
    let (hart, ctx) = unsafe { (&*hart, &mut *ctx) };
    if status != STATUS_TRAP && !hart.tlb.hits(va, T::SIZE, Access::Write) {
        ctx.state.region_cap = 0;
    }
    status
}

/// Run `op`, an instruction that may store, on the hart and platform behind a helper's
/// pointers; returns the helper status (trapped, code written, or 0).
///
/// # Safety
///
/// As [`load_helper`].
#[inline(always)]
unsafe fn storing<P: Platform>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    op: impl FnOnce(&mut Hart, &mut P) -> Result<(), crate::cpu::Trap>,
) -> u32 {
    // SAFETY: as in `load_helper`.
    let (hart, ctx) = unsafe { (&mut *hart, &mut *ctx) };
    // SAFETY: as in `load_helper`.
    let plat = unsafe { &mut *ctx.plat };
    match op(hart, plat) {
        Ok(()) => after_store(hart),
        Err(t) => trapped(ctx, t),
    }
}

/// A store that missed the inline path.
///
/// # Safety
///
/// As [`load_helper`].
unsafe extern "sysv64" fn store_helper<T: MemValue, P: Platform, const FOLD: bool>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    va: u32,
    value: u32,
) -> u32 {
    let work = || {
        let value = T::from_u64(value as u64);
        // SAFETY: this function's contract is `storing`'s.
        let status =
            unsafe { storing(hart, ctx, |hart, plat| store::<T, P>(hart, plat, va, value)) };
        if status != STATUS_TRAP {
            // SAFETY: as in `load_helper`; `storing` holds no reference any more.
            let (hart, ctx) = unsafe { (&*hart, &mut *ctx) };
            end_chain_after_device(hart, ctx, va, Access::Write);
        }
        status
    };
    // SAFETY: this function's contract is `folding`'s.
    unsafe { folding::<FOLD, _>(hart, work) }
}

/// LR/SC and AMOs.
///
/// # Safety
///
/// As [`load_helper`].
unsafe extern "sysv64" fn atomic_helper<P: Platform, const FOLD: bool>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    insn: Insn,
) -> u32 {
    let work = || {
        // SAFETY: this function's contract is `storing`'s.
        unsafe {
            storing(hart, ctx, |hart, plat| {
                let v = semantics::exec_atomic(hart, plat, &insn)?;
                hart.set_reg(insn.rd, v);
                Ok(())
            })
        }
    };
    // SAFETY: this function's contract is `folding`'s.
    unsafe { folding::<FOLD, _>(hart, work) }
}

/// FP loads and stores.
///
/// # Safety
///
/// As [`load_helper`].
unsafe extern "sysv64" fn fp_mem_helper<P: Platform, const FOLD: bool>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    insn: Insn,
) -> u32 {
    let work = || {
        // SAFETY: this function's contract is `storing`'s.
        unsafe {
            storing(hart, ctx, |hart, plat| {
                semantics::exec_fp_mem(hart, plat, &insn)
            })
        }
    };
    // SAFETY: this function's contract is `folding`'s.
    unsafe { folding::<FOLD, _>(hart, work) }
}

/// FP computation.
///
/// # Safety
///
/// As [`load_helper`].
unsafe extern "sysv64" fn fp_helper<P: Platform, const FOLD: bool>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    insn: Insn,
) -> u32 {
    let work = || {
        // SAFETY: as in `load_helper`.
        let (hart, ctx) = unsafe { (&mut *hart, &mut *ctx) };
        match fpu::execute(hart, &insn) {
            Ok(()) => 0,
            Err(t) => trapped(ctx, t),
        }
    };
    // SAFETY: this function's contract is `folding`'s.
    unsafe { folding::<FOLD, _>(hart, work) }
}

/// System instructions, CSR accesses and illegal instructions at guest `pc`, the `index`-th of
/// its block: does what the interpreter does (pc and instret included) and returns the exit
/// code the block leaves with.
///
/// # Safety
///
/// As [`load_helper`].
unsafe extern "sysv64" fn system_helper<P: Platform, const FOLD: bool>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
    insn: Insn,
    pc: u32,
    index: u32,
) -> u32 {
    let work = || {
        // SAFETY: as in `load_helper`.
        let (hart, ctx) = unsafe { (&mut *hart, &mut *ctx) };
        match semantics::exec_system(hart, &insn, pc, index) {
            Ok(exit) => exit.0,
            // `exec_system` left pc and instret at the instruction; the trap is the block's exit.
            Err(t) => {
                ctx.state.trap = t;
                Exit::TRAP.0
            }
        }
    };
    // SAFETY: this function's contract is `folding`'s.
    unsafe { folding::<FOLD, _>(hart, work) }
}

/// The jump-cache entry for `hart.pc`, if it is one: its pc matches and the execute TLB maps
/// that pc to the entry's host address (the translation its code was made under).
#[inline(always)]
fn valid_jump_entry(hart: &Hart, state: &RunState) -> Option<JumpEntry> {
    let pc = hart.pc;
    // SAFETY: the jump cache has `JUMP_CACHE_SIZE` entries and `jump_slot` indexes within it.
    let entry = unsafe { *state.jump_cache.add(jump_slot(pc)) };
    (entry.pc == pc && hart.tlb.lookup(pc, Access::Execute) == Some(entry.host)).then_some(entry)
}

/// Find compiled code for `hart.pc` after a block left through an indirect jump or an
/// unchained direct one: run the platform's between-blocks check as the interpreter does when
/// it chains, then look in the jump cache. Returns a code address to jump to, or an exit code
/// (below 16) to leave with.
///
/// # Safety
///
/// As [`load_helper`]; `ctx.state.jump_cache` points to the engine's jump cache.
unsafe extern "sysv64" fn dispatch_helper<P: Platform>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
) -> usize {
    // Mostly the platform has nothing to do: then no FP state is looked at, and the flags
    // stay pending in MXCSR (`Platform::between_blocks_quiet`).
    {
        // SAFETY: as in `load_helper`; the references end with this block.
        let (h, c) = unsafe { (&mut *hart, &mut *ctx) };
        // SAFETY: `c.plat` points to the live platform for the whole run (see `run_block`).
        if unsafe { &mut *c.plat }.between_blocks_quiet(h) {
            return jump_cache_code(h, c);
        }
    }
    // SAFETY: as in `load_helper`; `folding` holds no reference while the work runs.
    unsafe { folding::<true, _>(hart, || dispatch(&mut *hart, &mut *ctx)) }
}

/// [`dispatch_helper`]'s work when the platform has something to do between blocks.
fn dispatch<P: Platform>(hart: &mut Hart, ctx: &mut RunCtx<P>) -> usize {
    if !between_blocks(hart, ctx) {
        ctx.state.budget += 1; // no block was entered
        return Exit::STOP.0 as usize;
    }
    jump_cache_code(hart, ctx)
}

/// The compiled code for `hart.pc` from the jump cache, or the exit to the run loop that
/// looks it up (the platform's check between blocks is done: `checked`).
#[inline(always)]
fn jump_cache_code<P>(hart: &Hart, ctx: &mut RunCtx<P>) -> usize {
    if let Some(entry) = valid_jump_entry(hart, &ctx.state).filter(|e| e.code != 0) {
        ctx.state.jit_dispatched += 1;
        return entry.code;
    }
    ctx.state.budget += 1; // no block was entered
    ctx.state.checked = true;
    Exit::NEXT.0 as usize
}

/// What a region returns (`u64`) is an exit code ([`Exit`]) below this, or, from a fast
/// region that chains, the entry of the region to go on in, which whoever called the region
/// calls next with the same arguments (`Tier2::enter`, tier 1's stub for a region).
pub const FIRST_REGION_ENTRY: u64 = 16;

/// Find the tier-2 region to go on in after a region left with a plain next pc, so regions
/// chain without a return to the run loop: the run loop's checks (the chaining budget, the
/// instruction limit, stores into code pages, the platform's `between_blocks`), then the jump
/// cache, whose entry counts only if the execute TLB maps `hart.pc` to the same host address
/// (the translation the region was installed under). Returns the region's entry, or an exit
/// code (below [`FIRST_REGION_ENTRY`]) for the region to leave with.
///
/// The budget never goes below 1 here: a tier-1 stub that called the region takes one more
/// and tests for exactly zero.
///
/// # Safety
///
/// As [`dispatch_helper`].
unsafe extern "sysv64" fn region_chain_helper<P: Platform>(
    hart: *mut Hart,
    ctx: *mut RunCtx<P>,
) -> usize {
    {
        // SAFETY: as in `load_helper`; the references end with this block.
        let (h, c) = unsafe { (&mut *hart, &mut *ctx) };
        if c.state.budget <= 1 || h.instret >= c.state.limit || h.code_pages.any_written() {
            return Exit::NEXT.0 as usize;
        }
        // As in `dispatch_helper`: the FP flags stay pending when the platform is quiet.
        // SAFETY: `c.plat` points to the live platform for the whole run (see `run_block`).
        if unsafe { &mut *c.plat }.between_blocks_quiet(h) {
            return next_region(h, c);
        }
    }
    // SAFETY: as in `load_helper`; `folding` holds no reference while the work runs.
    unsafe { folding::<true, _>(hart, || region_chain(&mut *hart, &mut *ctx)) }
}

/// [`region_chain_helper`]'s work when the platform has something to do between blocks.
fn region_chain<P: Platform>(hart: &mut Hart, ctx: &mut RunCtx<P>) -> usize {
    if !between_blocks(hart, ctx) {
        return Exit::STOP.0 as usize;
    }
    next_region(hart, ctx)
}

/// The region for `hart.pc` from the jump cache, or the exit to the run loop.
#[inline(always)]
fn next_region<P>(hart: &Hart, ctx: &mut RunCtx<P>) -> usize {
    if let Some(entry) = valid_jump_entry(hart, &ctx.state).filter(|e| e.region != 0) {
        ctx.state.budget -= 1;
        ctx.state.t2_chained += 1;
        return entry.region;
    }
    Exit::NEXT.0 as usize
}

extern "sysv64" fn cpop(a: u32, _b: u32) -> u32 {
    a.count_ones()
}

extern "sysv64" fn orc_b(a: u32, _b: u32) -> u32 {
    semantics::orc_b(a)
}

extern "sysv64" fn clmul(a: u32, b: u32) -> u32 {
    semantics::clmul64(a, b) as u32
}

extern "sysv64" fn clmulh(a: u32, b: u32) -> u32 {
    (semantics::clmul64(a, b) >> 32) as u32
}

extern "sysv64" fn clmulr(a: u32, b: u32) -> u32 {
    (semantics::clmul64(a, b) >> 31) as u32
}

/// Any ALU-class operation, by its index in [`crate::isa::Op::ALL`] (anything else gives 0; a
/// tier calls this only for ALU operations).
extern "sysv64" fn alu_helper(op: u32, a: u32, b: u32, imm: i32) -> u32 {
    u8::try_from(op)
        .ok()
        .and_then(crate::isa::Op::from_index)
        .and_then(|op| semantics::alu(op, a, b, imm))
        .unwrap_or(0)
}
