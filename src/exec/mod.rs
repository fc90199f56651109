//! The tiered execution engine: the block cache, the tiers, and the run loop that sits between
//! blocks (the only place where interrupts, exits and instruction limits are checked).
//!
//! Layout (docs/architecture.md, "The tier seam"): the run-loop contract every tier follows
//! ([`contract`]), the instruction semantics they share ([`semantics`], [`mem`]), blocks and
//! the block optimiser ([`block`], [`ir`]), the promotion policy ([`policy`]), and the tiers as
//! siblings: [`interp`] and, when built, `t1`. A tier depends on the contract and the shared
//! semantics, never on another tier; this module wires them together.

#[cfg(any(tier1, tier2))]
pub mod abi;
pub mod block;
#[cfg(any(tier1, tier2))]
pub mod code_dump;
pub mod contract;
#[cfg(any(tier1, tier2))]
pub mod host_fp;
pub mod interp;
pub mod ir;
#[cfg(test)]
mod lockstep_tests;
pub mod mem;
pub mod misaligned;
pub mod platform;
pub mod policy;
pub mod semantics;
#[cfg(tier1)]
pub mod t1;
#[cfg(tier2)]
pub mod t2;

use crate::addr_hash::AddrMap;
use std::any::TypeId;
use std::time::{Duration, Instant};

use crate::cpu::tlb::CodePages;
use crate::cpu::{Hart, Trap};
use block::Block;
use contract::jump_slot;
#[cfg(any(tier1, tier2))]
use contract::{block_exit, Exit};
use contract::{BlockExit, JumpEntry, RunCtx, RunState, JUMP_CACHE_SIZE};
pub use platform::{Platform, Resume, Stop, Target};
pub use policy::{
    EngineConfig, T2Opt, Tier, DEFAULT_T1_THRESHOLD, DEFAULT_T2_REOPTIMISE_THRESHOLD,
    DEFAULT_T2_THRESHOLD, DEFAULT_T2_THRESHOLD_SYNC,
};

/// Blocks dropped by stores into their pages that may pile up before everything is flushed
/// (their memory is held until then).
const MAX_DEAD_BLOCKS: usize = 8192;

/// Counters reported by `--stats`.
#[derive(Clone, Debug, Default)]
pub struct EngineStats {
    pub blocks_built: u64,
    /// Fused units in the blocks built, by [`crate::isa::Fusion`] kind (index = its value).
    pub fused_units: [u64; FUSION_KINDS],
    pub blocks_run: u64,
    pub code_flushes: u64,
    /// `fence.i`s that dropped only the code other writers changed (not all code).
    pub fence_i_precise: u64,
    /// Blocks dropped because a store changed their page.
    pub blocks_invalidated: u64,
    pub traps: u64,
    /// Traps by exception cause (`mcause` code, 0..=15).
    pub trap_causes: [u64; 16],
    /// Returns to the run loop by reason (chained transitions are not exits).
    pub exits: ExitCounts,
    pub run_time: Duration,
    /// Instructions retired in tier-1 code.
    pub t1_insns: u64,
    /// Entries into compiled code from the run loop.
    pub t1_entries: u64,
    /// Block-to-block transitions inside compiled code through patched jumps.
    pub t1_chained: u64,
    /// Block-to-block transitions inside compiled code through the dispatcher.
    pub t1_dispatched: u64,
    /// Tier-1 compiler counters.
    pub jit: T1Stats,
    /// Instructions retired in tier-2 regions.
    pub t2_insns: u64,
    /// Entries into tier-2 regions from the run loop.
    pub t2_entries: u64,
    /// Entries into tier-2 regions straight from another region's exit.
    pub t2_chained: u64,
    /// Tier-2 indirect jumps that went on inside their region / left it.
    pub t2_indirect_in_region: u64,
    pub t2_indirect_left_region: u64,
    /// Tier-2 compiler counters.
    pub t2: T2Stats,
}

/// Number of [`crate::isa::Fusion`] values (for per-kind statistics).
pub const FUSION_KINDS: usize = 8;
const _: () = assert!(crate::isa::Fusion::CmpBranch as usize + 1 == FUSION_KINDS);

/// Why blocks returned to the run loop (for `--stats`).
#[derive(Clone, Debug, Default)]
pub struct ExitCounts {
    /// A plain next pc the chaining could not follow (jump-cache miss, budget, interrupt check).
    pub next: u64,
    /// WFI.
    pub wfi: u64,
    /// fence.i or another request to drop all code.
    pub flush_code: u64,
    /// A store into a page holding code.
    pub code_written: u64,
    /// An exception (counted by cause in `EngineStats::trap_causes`).
    pub trap: u64,
}

/// Tier-1 compiler counters (all zero in a build without tier 1).
#[cfg(tier1)]
pub type T1Stats = t1::JitStats;
/// Tier-1 compiler counters (all zero in a build without tier 1).
#[cfg(not(tier1))]
#[derive(Clone, Debug, Default)]
pub struct T1Stats {
    pub blocks_compiled: u64,
    pub code_bytes: u64,
    pub compile_time: Duration,
    pub links_patched: u64,
    pub cross_page_sites: u64,
    pub fallthroughs: u64,
    pub compile_failures: u64,
}

/// Tier-2 compiler counters (all zero in a build without tier 2).
#[cfg(tier2)]
pub type T2Stats = t2::T2Stats;
/// Tier-2 compiler counters (all zero in a build without tier 2).
#[cfg(not(tier2))]
#[derive(Clone, Debug, Default)]
pub struct T2Stats {
    pub regions_compiled: u64,
    pub compile_failures: u64,
    pub dropped_stale: u64,
    pub expired: u64,
    pub compile_time: Duration,
    pub region_insns: u64,
    pub region_blocks: u64,
    pub predicted_jumps: u64,
    pub cache_hits: u64,
    pub disk_hits: u64,
    pub reoptimised: u64,
    pub retired_short: u64,
}

#[cfg(not(tier2))]
impl T2Stats {
    /// The median per-region compile time (none without tier 2).
    pub fn median_compile_time(&self) -> Duration {
        Duration::ZERO
    }
}

/// What the run loop found for a block entry: the interpreter's entry, and compiled code of
/// tier 1 and tier 2 for this pc (0 when there is none).
#[derive(Clone, Copy)]
struct Found {
    /// The block's index.
    block: u32,
    slots: *const (),
    code: usize,
    region: usize,
}

/// The engine: owns decoded code and runs a hart on a platform.
pub struct Engine {
    config: EngineConfig,
    /// When blocks move up a tier.
    policy: policy::Policy,
    blocks: Vec<Block>,
    /// Block index by the host address of its first instruction.
    by_host: AddrMap<usize, u32>,
    /// Blocks by the host pages their instructions lie in (for invalidation on stores).
    by_page: AddrMap<usize, Vec<u32>>,
    /// Blocks dropped by page invalidation whose memory is still held (freed on flush).
    dead_blocks: usize,
    /// Recently used blocks by guest pc, validated against the host address; the interpreter
    /// follows it from block to block too.
    jump_cache: Box<[JumpEntry; JUMP_CACHE_SIZE]>,
    pub stats: EngineStats,
    /// The platform type the decoded blocks were compiled for.
    built_for: Option<TypeId>,
    /// Bumped by every flush of all code: code compiled for an older epoch (by a compiler
    /// that finished late) is never installed.
    epoch: u64,
    /// The interpreter's code for every block.
    interp: interp::Code,
    /// The tier-1 compiler and its code.
    #[cfg(tier1)]
    t1: t1::Jit,
    /// The tier-2 compiler and its regions.
    #[cfg(tier2)]
    t2: t2::Tier2,
    /// Tests: every return of a region to the run loop is a sample (see
    /// [`Engine::sample_region_return`]).
    #[cfg(all(test, tier2))]
    t2_sample_every_exit: bool,
    /// Blocks are built one instruction long (see [`Engine::set_one_insn_blocks`]).
    one_insn_blocks: bool,
    /// How much each installed region (by entry) runs per call from tier 1's stubs, which
    /// count into these; boxed so the addresses stay put. Kept, with those of regions taken
    /// back, until the code is flushed: a stub's code outlives its use.
    #[cfg(all(tier1, tier2))]
    region_use: AddrMap<usize, Box<contract::RegionUse>>,
    // Boxed: moving a box into the vector keeps the counters where the stubs point.
    #[allow(clippy::vec_box)]
    #[cfg(all(tier1, tier2))]
    retired_region_use: Vec<Box<contract::RegionUse>>,
    /// Turns of the run loop left until the next look at [`Engine::region_use`], which comes
    /// every `region_review_turns` ([`REGION_REVIEW_TURNS`]; tests look more often).
    #[cfg(all(tier1, tier2))]
    turns_to_region_review: u32,
    #[cfg(all(tier1, tier2))]
    region_review_turns: u32,
}

/// The run loop looks at how much the regions run per entry every this many turns.
#[cfg(all(tier1, tier2))]
const REGION_REVIEW_TURNS: u32 = 4096;

/// Start what the tiers of `config` need before their first compile ([`Engine::new`], once the
/// guest is loaded): tier 2's compile threads open LLVM in the background, 15-35 ms, while the
/// guest starts. Not earlier: opened while the guest loaded, the library slowed loading it by
/// 3-4 ms, which a short program never got back (`hello` under `auto`: 16 ms; 11 ms started
/// from the engine, as under `t1`).
fn prepare_tiers(config: &EngineConfig) {
    #[cfg(tier2)]
    match config.tier {
        // Fast regions the guest waits for, and full ones in the background.
        Tier::T2 => t2::start_compile_threads(2),
        Tier::Auto => t2::start_compile_threads(1),
        Tier::Interp | Tier::T1 => {}
    }
    #[cfg(not(tier2))]
    let _ = config;
}

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        prepare_tiers(&config);
        Engine {
            #[cfg(tier1)]
            t1: t1::Jit::new(config.chain),
            #[cfg(tier2)]
            t2: t2::Tier2::new(),
            #[cfg(all(test, tier2))]
            t2_sample_every_exit: false,
            policy: policy::Policy::new(&config),
            config,
            blocks: Vec::new(),
            by_host: AddrMap::default(),
            by_page: AddrMap::default(),
            dead_blocks: 0,
            jump_cache: Box::new([JumpEntry::EMPTY; JUMP_CACHE_SIZE]),
            stats: EngineStats::default(),
            built_for: None,
            epoch: 0,
            interp: interp::Code::default(),
            one_insn_blocks: false,
            #[cfg(all(tier1, tier2))]
            region_use: AddrMap::default(),
            #[cfg(all(tier1, tier2))]
            retired_region_use: Vec::new(),
            #[cfg(all(tier1, tier2))]
            turns_to_region_review: REGION_REVIEW_TURNS,
            #[cfg(all(tier1, tier2))]
            region_review_turns: REGION_REVIEW_TURNS,
        }
    }

    /// The configuration the engine runs with.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Tests: every return from a tier-2 region to the run loop is a sample of where the
    /// guest spends its time (not only those after a long run), so short runs re-optimise
    /// regions as long ones do.
    #[cfg(all(test, tier2))]
    pub fn sample_every_region_exit(&mut self) {
        self.t2.set_chain_budget(2);
        self.t2_sample_every_exit = true;
    }

    /// Tests: look at how much regions run per entry at every turn of the run loop.
    #[cfg(all(test, tier1, tier2))]
    pub fn review_regions_every_turn(&mut self) {
        self.region_review_turns = 1;
        self.turns_to_region_review = 1;
    }

    /// Ask for a region at the block at `pc` (decoded, its page mapped) as the policy would.
    #[cfg(all(test, tier2))]
    pub fn request_region_at<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        pc: u32,
        ask: t2::RegionAsk,
    ) -> usize {
        let host = block::fetch_host(hart, plat, pc).expect("the block's page is mapped");
        let idx = *self.by_host.get(&host).expect("the block was decoded");
        self.request_region(hart, plat, idx, pc, ask)
    }

    /// Tier-1 stubs that call something other than their block's installed region (a
    /// retired one): `(pc, called, installed)` for each.
    #[cfg(all(test, tier1, tier2))]
    pub fn stale_stubs(&self) -> Vec<(u32, usize, usize)> {
        self.t1
            .stubs()
            .into_iter()
            .map(|(idx, pc, native)| (pc, native, self.t2.region_for(idx, pc)))
            .filter(|&(_, native, installed)| native != installed)
            .collect()
    }

    /// The current code epoch (see [`Engine::flush_code`]).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Build every block from now on one instruction long (`on`), or as long as blocks go:
    /// the run loop's checks (instruction limit, `between_blocks`) then come after every
    /// instruction, in every tier. Decoded code built the other way is dropped.
    pub fn set_one_insn_blocks(&mut self, hart: &mut Hart, on: bool) {
        if self.one_insn_blocks != on {
            self.one_insn_blocks = on;
            self.flush_code(hart);
        }
    }

    /// Drop every decoded block and all compiled code (code may have changed), and start a
    /// new code epoch.
    pub fn flush_code(&mut self, hart: &mut Hart) {
        hart.code_pages.clear();
        self.jump_cache.fill(JumpEntry::EMPTY);
        self.blocks.clear();
        self.by_host.clear();
        self.by_page.clear();
        self.dead_blocks = 0;
        self.interp.reset();
        #[cfg(tier1)]
        self.t1.reset();
        // No stub counts into these any more.
        #[cfg(all(tier1, tier2))]
        {
            self.region_use.clear();
            self.retired_region_use.clear();
        }
        self.epoch += 1;
        #[cfg(tier2)]
        self.t2.reset(self.epoch);
        self.stats.code_flushes += 1;
    }

    /// `fence.i`: code the hart's own stores changed is gone already (see
    /// [`Engine::invalidate_written_pages`]); drop what other writers changed, as the platform
    /// reports it, or everything if it cannot.
    fn fence_i<P: Platform>(&mut self, hart: &mut Hart, plat: &mut P) {
        if plat.note_external_writes(hart) {
            self.stats.fence_i_precise += 1;
            if hart.code_pages.any_written() {
                self.invalidate_written_pages(hart);
            }
        } else {
            self.flush_code(hart);
        }
    }

    /// A store changed code pages (`hart.code_pages` lists them): drop the blocks in them.
    /// Their slot arrays stay allocated (a block may be dropped by a store of its own, and is
    /// still running then) until enough pile up to flush everything.
    fn invalidate_written_pages(&mut self, hart: &mut Hart) {
        let mut dropped = Vec::new();
        for page in hart.code_pages.take_written() {
            let Some(indices) = self.by_page.remove(&page) else {
                continue;
            };
            for idx in indices {
                let host = self.blocks[idx as usize].host;
                if self.by_host.get(&host) == Some(&idx) {
                    self.by_host.remove(&host);
                    dropped.push(host);
                    // Chained jumps into its compiled code go back to the dispatcher.
                    #[cfg(tier1)]
                    self.t1.invalidate(idx, host);
                    #[cfg(tier2)]
                    self.t2.invalidate(idx);
                }
            }
        }
        if dropped.is_empty() {
            return;
        }
        self.dead_blocks += dropped.len();
        self.stats.blocks_invalidated += dropped.len() as u64;
        for entry in self.jump_cache.iter_mut() {
            if dropped.contains(&entry.host) {
                *entry = JumpEntry::EMPTY;
            }
        }
        if self.dead_blocks > MAX_DEAD_BLOCKS {
            self.flush_code(hart);
        }
    }

    /// Decode the block at `pc` (host address `host`) and add it, with its interpreter code.
    fn add_block<P: Platform>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        pc: u32,
        host: usize,
    ) -> Result<u32, Trap> {
        let max_insns = if self.one_insn_blocks {
            1
        } else {
            block::MAX_BLOCK_INSNS
        };
        let b = block::build(hart, plat, pc, host, self.config.ir, max_insns)?;
        for insn in b.insns.iter() {
            self.stats.fused_units[insn.fusion as usize % FUSION_KINDS] += 1;
        }
        let idx = self.blocks.len() as u32;
        // Its pages now hold code: stores to them must take the slow path.
        for h in std::iter::once(host).chain(b.straddle) {
            if hart.code_pages.insert(h) {
                hart.tlb.flush_writes_to(CodePages::page_of(h));
            }
            self.by_page
                .entry(CodePages::page_of(h))
                .or_default()
                .push(idx);
        }
        self.interp.add::<P>(idx, &b.insns);
        self.blocks.push(b);
        self.by_host.insert(host, idx);
        self.stats.blocks_built += 1;
        Ok(idx)
    }

    /// Find or build the block at `hart.pc`; returns its interpreter entry and its compiled
    /// code for this pc. With a compiling tier on, counts the run and promotes the block when
    /// the policy says so (`may_compile`).
    #[inline(always)]
    fn block_at<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        may_compile: bool,
    ) -> Result<Found, Trap> {
        let pc = hart.pc;
        let host = block::fetch_host(hart, plat, pc)?;
        let slot = jump_slot(pc);
        let entry = self.jump_cache[slot];
        let idx = if entry.pc == pc && entry.host == host {
            let settled = entry.region != 0
                || !may_compile
                || !self.policy.compiling()
                || (entry.code != 0 && !self.policy.t2_enabled());
            if settled {
                return Ok(Found {
                    block: entry.block,
                    slots: entry.slots,
                    code: entry.code,
                    region: entry.region,
                });
            }
            entry.block
        } else {
            match self.by_host.get(&host) {
                Some(&idx) => idx,
                None => self.add_block(hart, plat, pc, host)?,
            }
        };
        let (code, region) = if may_compile {
            self.promote::<P>(hart, plat, idx, pc)?
        } else {
            (0, 0)
        };
        // Promotion may have flushed everything (tier 1's code memory was full) and rebuilt
        // this block under another index.
        let idx = *self.by_host.get(&host).unwrap_or(&idx);
        let slots = self.interp.entry(idx);
        self.jump_cache[slot] = JumpEntry {
            pc,
            block: idx,
            host,
            slots,
            code,
            region,
        };
        Ok(Found {
            block: idx,
            slots,
            code,
            region,
        })
    }

    /// Count a run of block `idx` entered at `pc` and promote it when the policy says so;
    /// returns its tier-1 code and tier-2 region for `pc` (0 for none).
    fn promote<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        idx: u32,
        pc: u32,
    ) -> Result<(usize, usize), Trap> {
        if !self.policy.compiling() {
            return Ok((0, 0));
        }
        let b = &mut self.blocks[idx as usize];
        b.profile.runs = b.profile.runs.saturating_add(1);
        let runs = b.profile.runs;
        #[cfg(tier2)]
        {
            let mut region = self.t2.region_for(idx, pc);
            if region == 0 && self.policy.t2_due(runs, hart.prv) && self.t2.wants(idx) {
                region = self.ask_for_first_region(hart, plat, idx, pc);
            }
            if region != 0 {
                // Tier 1's entry for the block, if any, is a stub that calls the region.
                #[cfg(tier1)]
                if let t1::Lookup::Settled(stub) = self.t1.lookup(idx, pc) {
                    return Ok((stub, region));
                }
                return Ok((0, region));
            }
        }
        let code = self.promote_t1(hart, plat, idx, pc, runs)?;
        Ok((code, 0))
    }

    /// Tier 1's part of [`Engine::promote`]: its code for block `idx` at `pc`, compiled now if
    /// the block has run `runs` times and the policy says so.
    #[cfg(tier1)]
    fn promote_t1<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        idx: u32,
        pc: u32,
        runs: u32,
    ) -> Result<usize, Trap> {
        if !self.policy.t1_enabled() {
            return Ok(0);
        }
        if let t1::Lookup::Settled(code) = self.t1.lookup(idx, pc) {
            return Ok(code);
        }
        if !self.policy.t1_due(runs) {
            return Ok(0);
        }
        // A block that falls through to another is compiled with it (see `t1_fallthrough`).
        let next = self.t1_fallthrough(hart, plat, idx, pc);
        let b = &self.blocks[idx as usize];
        let host = b.host;
        let (insns, fallthrough) = match next {
            Some(next) => {
                let next = &self.blocks[next as usize];
                (
                    std::borrow::Cow::Owned([&b.insns[..], &next.insns[..]].concat()),
                    Some(next.pc),
                )
            }
            None => (std::borrow::Cow::Borrowed(&b.insns[..]), None),
        };
        match self.t1.compile_block::<P>(
            idx,
            &insns,
            pc,
            host,
            &t1::CompileEnv {
                flat_base: plat.flat_host_base(),
                by_host: &self.by_host,
                exec_host: &|target| hart.tlb.lookup(target, crate::cpu::Access::Execute),
                unchecked: plat.unchecked_memory(),
                fallthrough,
            },
        ) {
            Ok(code) => Ok(code),
            Err(t1::JitError::ArenaFull) => {
                // Start over with empty code memory; this block runs interpreted once.
                self.flush_code(hart);
                let host = block::fetch_host(hart, plat, pc)?;
                self.add_block(hart, plat, pc, host)?;
                Ok(0)
            }
            Err(t1::JitError::Map(e)) => {
                // No code memory at all (e.g. a host that refuses executable mappings): go
                // on with the interpreter alone.
                tracing::warn!("tier 1 disabled: cannot map code memory: {e}");
                self.policy.disable_t1();
                Ok(0)
            }
            Err(e) => {
                tracing::warn!(
                    pc = format_args!("{pc:#x}"),
                    "tier 1 cannot compile block: {e}"
                );
                self.t1.mark_failed(idx);
                Ok(0)
            }
        }
    }

    /// The block tier 1 compiles together with block `idx` (entered at `pc`), if any: the one
    /// its final conditional branch falls through to, on the same page and built for the pc
    /// it follows at (its folded constants hold there). With flat memory it is built now if
    /// need be (a loop's first block is compiled before its second has run under `--tier
    /// t1`); elsewhere building a block whose last instruction straddles the page end would
    /// walk the next page's translation (setting its A bit) for code that may never run. A loop of two
    /// blocks (a test and a branch back, as in `for (...) if (...) continue;`) then runs as
    /// one block that loops on itself, its guest registers in host registers across
    /// iterations instead of written back and loaded again at each block. Both are dropped
    /// together when the page changes.
    #[cfg(tier1)]
    fn t1_fallthrough<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        idx: u32,
        pc: u32,
    ) -> Option<u32> {
        use crate::cpu::tlb::PAGE_MASK;
        let first = &self.blocks[idx as usize];
        let ends_in_branch = first
            .insns
            .last()
            .is_some_and(|i| i.op.class() == crate::isa::ops::OpClass::Branch);
        if self.one_insn_blocks || !ends_in_branch || first.straddle.is_some() {
            return None;
        }
        let len: u32 = first.insns.iter().map(|i| i.len as u32).sum();
        let next_pc = pc.wrapping_add(len);
        if next_pc & !PAGE_MASK != pc & !PAGE_MASK {
            return None;
        }
        let next_host = first.host.wrapping_add(len as usize);
        let next = match self.by_host.get(&next_host) {
            Some(&next) => next,
            None if plat.flat_host_base().is_some() => {
                self.add_block(hart, plat, next_pc, next_host).ok()?
            }
            None => return None,
        };
        let b = &self.blocks[next as usize];
        (next != idx && b.pc == next_pc && b.straddle.is_none()).then_some(next)
    }

    /// Without tier 1 no block is compiled by it.
    #[cfg(not(tier1))]
    #[inline(always)]
    fn promote_t1<P: Platform + 'static>(
        &mut self,
        _hart: &mut Hart,
        _plat: &mut P,
        _idx: u32,
        _pc: u32,
        _runs: u32,
    ) -> Result<usize, Trap> {
        Ok(0)
    }

    /// Note that block `idx`, just interpreted, left for `target`: if it ends in an indirect
    /// jump, that is one more sample of where the jump goes.
    #[inline(always)]
    fn record_indirect_jump(&mut self, idx: u32, target: u32) {
        let Some(b) = self.blocks.get_mut(idx as usize) else {
            return;
        };
        if b.insns
            .last()
            .is_some_and(|last| last.op.class() == crate::isa::ops::OpClass::Jalr && last.rs1 != 0)
        {
            b.profile.indirect.record(target);
        }
    }

    /// Plan a region entered at block `idx` (at `pc`) and ask tier 2 for it; returns the
    /// region's entry when it is ready now (`--tier t2` waits for it), else 0.
    #[cfg(tier2)]
    fn request_region<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        idx: u32,
        pc: u32,
        ask: t2::RegionAsk,
    ) -> usize {
        let first = ask == t2::RegionAsk::First;
        let in_background = first
            && self
                .policy
                .t2_first_region_in_background(self.blocks[idx as usize].profile.hot_samples);
        let opt = if first && !in_background {
            self.config.t2_opt()
        } else {
            T2Opt::Full
        };
        let host = self.blocks[idx as usize].host;
        let predict = P::PREDICTS_INDIRECT_JUMPS;
        let entry = t2::region::RegionBlock::new(pc, &self.blocks[idx as usize], predict);
        // Blocks of the entry page are reached through the translation validated at the
        // region's entry: a pc in it is at the same offset from the entry's host address.
        // Return sites too: with tracing stopping at blocks that have a region, fewer and
        // larger fast regions cost less to compile (a boot: 5 200 regions instead of 12 900,
        // compile CPU 16.8 -> 14.2 s), and a return goes on in the region.
        let follow_calls = true;
        let mut members = Vec::new();
        let plan = t2::region::RegionPlan::trace(entry, follow_calls, |target| {
            let target_host = host.wrapping_add(target.wrapping_sub(pc) as i32 as isize as usize);
            let i = match self.by_host.get(&target_host) {
                Some(&i) => i,
                None => self.add_block(hart, plat, target, target_host).ok()?,
            };
            let b = &self.blocks[i as usize];
            if b.straddle.is_some() || !self.policy.t2_takes(&b.insns) {
                return None;
            }
            // A fast region stops at a block that already has a region (it is entered at
            // any of its blocks) and exits to it: compiling the block again would cost as
            // much as its first compile. A block re-optimised on its own is left to its
            // region too (a fast one would retire, see `Tier2::install`).
            if opt == T2Opt::Fast
                && (self.t2.has_full_region(i) || self.t2.region_for(i, target) != 0)
            {
                return None;
            }
            members.push((i, target_host, target));
            Some(t2::region::RegionBlock::new(target, b, predict))
        });
        // Hot code: the loop nest it runs in, not everything the page reaches.
        let plan = if self.policy.t2_loop_nest_only(opt) {
            plan.entry_loop(follow_calls)
        } else {
            plan
        };
        // An OpenSBI boot under `--tier t2` compiled 20 short straight regions (to the prompt:
        // 0.315-0.322 s -> 0.295-0.310 s without them; without OpenSBI 0.29 -> 0.27 s).
        if first
            && !self
                .policy
                .t2_worth_compiling(plan.insn_count(), || plan.loops(follow_calls))
        {
            self.t2.decline(idx);
            return 0;
        }
        let env = t2::codegen::CodegenEnv {
            helpers: abi::Helpers::for_platform::<P>(),
            folding_helpers: abi::Helpers::folding_for_platform::<P>(),
            flat: plat.flat_host_base().is_some(),
            unchecked: plat.flat_host_base().is_some() && plat.unchecked_memory(),
            opt,
            // Full regions always; fast ones where they are only for hot blocks (tier 1 runs
            // the rest).
            inline_tlb: opt == T2Opt::Full || self.policy.t1_enabled(),
        };
        // The region serves every block it has (it is entered at `hart.pc`): under
        // `--tier t2` a block that an earlier region traced needs no region of its own, and a
        // hot loop nest entered at another block (an outer loop's `continue`, a budget exit)
        // still runs in the optimised region instead of asking for one more per entry.
        members.retain(|&(_, _, member_pc)| {
            member_pc != pc && plan.blocks.iter().any(|b| b.pc == member_pc)
        });
        let wait = if in_background {
            false
        } else if first {
            self.policy.t2_waits()
        } else {
            self.policy.t2_reoptimise_waits()
        };
        match self
            .t2
            .request(ask, idx, host, self.epoch, plan, env, members, wait)
        {
            Some(f) => self.install_region::<P>(f),
            None => 0,
        }
    }

    /// Install a finished region if it is still current; returns its entry (0 if stale).
    #[cfg(tier2)]
    fn install_region<P: Platform + 'static>(&mut self, f: t2::Finished) -> usize {
        if f.epoch == self.epoch && self.t2.retired_short(f.block) {
            return 0; // tier 1 runs it better (`Tier2::retire_short`)
        }
        if f.epoch != self.epoch || self.by_host.get(&f.host) != Some(&f.block) {
            self.t2.drop_stale();
            if f.epoch == self.epoch {
                self.t2.release_suspended(f.block);
            }
            return 0;
        }
        // Blocks of the entry's page: dropped together with it, but check each anyway.
        let members: Vec<t2::Member> = f
            .members
            .iter()
            .copied()
            .filter(|&(idx, host, _)| self.by_host.get(&host) == Some(&idx))
            .collect();
        let retired = self.t2.install(&f, &members);
        // Every block the region is now the code of: its entry, then its members.
        let blocks: Vec<t2::Member> = std::iter::once((f.block, f.host, f.pc))
            .chain(members)
            .collect();
        // The retired fast regions' other blocks go back to tier 1: their stubs would keep
        // calling the old region, which runs the hot code inside itself (a quicksort's
        // recursion re-entered its fast region there, never the optimised one).
        #[cfg(tier1)]
        for &idx in &retired.blocks {
            if !blocks.iter().any(|&(b, _, _)| b == idx) {
                self.t1.revert(idx, self.blocks[idx as usize].host);
            }
        }
        // Tier 1's code for the region's blocks would bypass the region: it becomes a stub that
        // calls the region, so compiled code reaches the region without the run loop. Without
        // tier 1 (or if the stub cannot be made) the run loop enters the region itself.
        #[cfg(tier1)]
        if self.policy.t1_enabled() {
            let usage: *mut contract::RegionUse =
                &mut **self.region_use.entry(f.entry).or_default();
            for &(idx, host, pc) in &blocks {
                if let Err(e) = self.t1.install_native::<P>(idx, pc, host, f.entry, usage) {
                    tracing::debug!("tier 1 cannot call a region: {e}");
                    self.t1.supersede(idx, host);
                }
            }
        }
        // Jump-cache entries of the region's blocks (each in its pc's slot) and of retired
        // fast regions go: without a region such an entry is not settled while tier 2 is on,
        // so the run loop looks the block's code up again at its next entry.
        for (idx, host, pc) in blocks {
            let e = &mut self.jump_cache[contract::jump_slot(pc)];
            if e.block == idx && e.host == host {
                *e = JumpEntry::EMPTY;
            }
        }
        if !retired.entries.is_empty() {
            for e in self.jump_cache.iter_mut() {
                if retired.entries.contains(&e.region) {
                    *e = JumpEntry::EMPTY;
                }
            }
        }
        f.entry
    }

    /// Run compiled code at `code` (entered at `hart.pc`) until it leaves.
    ///
    /// # Safety
    ///
    /// `code` is live compiled code for block entry `hart.pc` made for platform type `P`;
    /// `ctx` is set up by [`Engine::run`] with this engine's jump cache.
    #[cfg(tier1)]
    unsafe fn enter_compiled<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        ctx: &mut RunCtx<P>,
        code: usize,
    ) -> BlockExit {
        // Under `--tier t2` tier 1's code leads into regions (a block's entry is a stub that
        // calls its region): its long runs are samples too.
        #[cfg(tier2)]
        let (before, limit) = self.begin_sampled_run(hart, ctx);
        #[cfg(not(tier2))]
        let before = hart.instret;
        host_fp::drop_mxcsr_flags();
        // SAFETY: per this function's contract.
        let e = unsafe { self.t1.enter(hart, ctx, code) };
        // Compiled code leaves its native FP flags in MXCSR (`host_fp::take_mxcsr_flags`).
        host_fp::take_mxcsr_flags(hart);
        let transitions = t1::JIT_CHAIN_BUDGET.saturating_sub(ctx.state.budget);
        ctx.state.chained += transitions as u64;
        self.stats.t1_chained += transitions as u64;
        self.stats.t1_entries += 1;
        self.stats.t1_insns += hart.instret.saturating_sub(before);
        #[cfg(tier2)]
        self.end_sampled_run(hart, ctx, before, limit);
        block_exit(&ctx.state, Exit(e))
    }

    /// Without tier 1 no code is ever compiled, so this is never called.
    #[cfg(not(tier1))]
    unsafe fn enter_compiled<P: Platform + 'static>(
        &mut self,
        _hart: &mut Hart,
        _ctx: &mut RunCtx<P>,
        _code: usize,
    ) -> BlockExit {
        BlockExit::Next
    }

    /// Run the tier-2 region at `region` (entered at `hart.pc`) until it leaves.
    ///
    /// # Safety
    ///
    /// `region` is an installed region of the current epoch for `hart.pc`, made for platform
    /// type `P`; `ctx` is set up by [`Engine::run`].
    #[cfg(tier2)]
    unsafe fn enter_region<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        ctx: &mut RunCtx<P>,
        region: usize,
    ) -> BlockExit {
        let (before, limit) = self.begin_sampled_run(hart, ctx);
        host_fp::drop_mxcsr_flags();
        // SAFETY: per this function's contract.
        let e = unsafe { self.t2.enter(hart, ctx, region) };
        host_fp::take_mxcsr_flags(hart);
        self.stats.t2_entries += 1;
        self.end_sampled_run(hart, ctx, before, limit);
        block_exit(&ctx.state, Exit(e))
    }

    /// Start a run of compiled code (tier 1 or a region) from the run loop; returns what
    /// [`Engine::end_sampled_run`] needs (instret before it, the run's instruction limit).
    /// Where fast regions are re-optimised, the run comes back to the run loop after a long
    /// run's worth of instructions at most (regions and the chain helper stop at the limit), so
    /// a loop that chains into itself is sampled every `LONG_RUN_INSNS`, not once per chaining
    /// budget (256 regions of up to 16 384 instructions: tens of milliseconds of fast-region
    /// code).
    #[cfg(tier2)]
    #[inline(always)]
    fn begin_sampled_run<P: Platform>(&self, hart: &Hart, ctx: &mut RunCtx<P>) -> (u64, u64) {
        let before = hart.instret;
        let limit = ctx.state.limit;
        if self.policy.t2_reoptimises() {
            ctx.state.limit = limit.min(before.saturating_add(t2::LONG_RUN_INSNS));
            ctx.state.device_ended_chain = false;
        }
        (before, limit)
    }

    /// End a run begun by [`Engine::begin_sampled_run`]: restore the limit and, if it was a
    /// long run (the chaining budget used up, or many instructions before an interrupt or a
    /// trap), count a sample where it ended: where the guest spends its time.
    #[cfg(tier2)]
    #[inline(always)]
    fn end_sampled_run<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        ctx: &mut RunCtx<P>,
        before: u64,
        limit: u64,
    ) {
        ctx.state.limit = limit;
        if !self.policy.t2_samples() {
            return;
        }
        // A chain a device access ended (a console driver's loop writing the UART) is no long
        // run: its budget was cut, not used up.
        let budget_used_up = ctx.state.budget <= 1 && !ctx.state.device_ended_chain;
        #[allow(unused_mut)]
        let mut sample =
            budget_used_up || hart.instret.saturating_sub(before) >= t2::LONG_RUN_INSNS;
        #[cfg(test)]
        {
            sample |= self.t2_sample_every_exit;
        }
        if sample {
            // SAFETY: `ctx.plat` is the run loop's platform, not otherwise borrowed while the
            // run loop is between blocks.
            let plat = unsafe { &mut *ctx.plat };
            self.sample_region_return(hart, plat);
        }
    }

    /// Block `idx` at `pc` has no region, has earned one (by entries or by samples) and has
    /// not asked yet (`Tier2::wants`): ask for it if tier 2 takes its instructions, else
    /// decline it for the epoch (decided once, not at every entry or sample). Returns the
    /// region if it is ready now.
    #[cfg(tier2)]
    fn ask_for_first_region<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        idx: u32,
        pc: u32,
    ) -> usize {
        if self.policy.t2_takes(&self.blocks[idx as usize].insns) {
            self.request_region(hart, plat, idx, pc, t2::RegionAsk::First)
        } else {
            self.t2.decline(idx);
            0
        }
    }

    /// Count a sample at the block at `hart.pc`: a block of user code with no region asks for
    /// one once it has enough samples (`Policy::t2_sampled_due`); under `--tier t2` a block
    /// whose fast region has more than `t2_reoptimise_threshold` samples asks for it again
    /// with full optimisation.
    #[cfg(tier2)]
    fn sample_region_return<P: Platform + 'static>(&mut self, hart: &mut Hart, plat: &mut P) {
        // User code only asks for first regions: the kernel's hot spots come in bursts
        // (clearing pages, a boot's probes) that end before a region would land. So kernel
        // samples only count where fast regions are re-optimised.
        let user = hart.prv == crate::cpu::Priv::User;
        if !user && !self.policy.t2_reoptimises() {
            return;
        }
        let pc = hart.pc;
        let Some(host) = hart.tlb.lookup(pc, crate::cpu::tlb::Access::Execute) else {
            return;
        };
        let Some(&idx) = self.by_host.get(&host) else {
            return;
        };
        let p = &mut self.blocks[idx as usize].profile;
        p.hot_samples = p.hot_samples.saturating_add(1);
        let samples = p.hot_samples;
        if self.t2.region_for(idx, pc) == 0 {
            if user && self.policy.t2_sampled_due(samples) && self.t2.wants(idx) {
                tracing::debug!(
                    pc = format_args!("{pc:#x}"),
                    samples,
                    "tier 2: a block of user code sampled hot"
                );
                self.ask_for_first_region(hart, plat, idx, pc);
            }
            return;
        }
        if !self.policy.t2_reoptimise_due(samples) || !self.t2.may_reoptimise(idx) {
            return;
        }
        tracing::debug!(
            pc = format_args!("{pc:#x}"),
            samples,
            "tier 2: re-optimising a hot region"
        );
        let installed = self.request_region(hart, plat, idx, pc, t2::RegionAsk::Reoptimise);
        if installed == 0 && self.policy.t2_suspends_fast_regions() {
            self.suspend_fast_region(idx);
        }
    }

    /// Take back the regions that tier 1 entered often and that ran too few instructions per
    /// entry to pay for it ([`policy::MIN_REGION_INSNS_PER_ENTRY`]): tier 1 runs their blocks
    /// from now on (`Tier2::retire_short`).
    #[cfg(all(tier1, tier2))]
    fn retire_short_regions(&mut self) {
        let short: Vec<usize> = self
            .region_use
            .iter()
            .filter(|(_, u)| self.policy.t2_region_too_short(u.entries, u.insns))
            .map(|(&entry, _)| entry)
            .collect();
        for entry in short {
            if let Some(usage) = self.region_use.remove(&entry) {
                self.retired_region_use.push(usage);
            }
            let retired = self.t2.retire_short(entry);
            self.unhook_regions(&retired);
        }
    }

    /// While block `idx`'s region is compiled again with full optimisation in the background,
    /// tier 1 runs the blocks of the fast region that served it (`Tier2::suspend_fast`): their
    /// stubs and jump-cache entries go, and tier 1 compiles them again at their next entry.
    #[cfg(tier2)]
    fn suspend_fast_region(&mut self, idx: u32) {
        let suspended = self.t2.suspend_fast(idx);
        self.unhook_regions(&suspended);
    }

    /// Regions taken out of service (`Tier2::suspend_fast`, `Tier2::retire_short`): tier 1's
    /// stubs for their blocks and the jump-cache entries of both go, and tier 1 compiles the
    /// blocks again at their next entry.
    #[cfg(tier2)]
    fn unhook_regions(&mut self, retired: &t2::Retired) {
        if retired.entries.is_empty() {
            return;
        }
        #[cfg(tier1)]
        for &b in &retired.blocks {
            self.t1.revert(b, self.blocks[b as usize].host);
        }
        for e in self.jump_cache.iter_mut() {
            if retired.entries.contains(&e.region) || retired.blocks.contains(&e.block) {
                *e = JumpEntry::EMPTY;
            }
        }
    }

    /// Without tier 2 there are no regions, so this is never called.
    #[cfg(not(tier2))]
    unsafe fn enter_region<P: Platform + 'static>(
        &mut self,
        _hart: &mut Hart,
        _ctx: &mut RunCtx<P>,
        _region: usize,
    ) -> BlockExit {
        BlockExit::Next
    }

    /// Install the regions the compile thread finished.
    #[inline(always)]
    fn install_finished<P: Platform + 'static>(&mut self) {
        #[cfg(tier2)]
        if self.t2.busy() {
            for f in self.t2.poll() {
                self.install_region::<P>(f);
            }
            // Blocks whose regions expired in the compile queue start earning tier 2 again,
            // by entries or by samples.
            let cooled = self.policy.t2_cooled_runs();
            for idx in self.t2.take_expired() {
                if let Some(b) = self.blocks.get_mut(idx as usize) {
                    b.profile.runs = b.profile.runs.min(cooled);
                    b.profile.hot_samples = 0;
                }
            }
        }
    }

    /// Run `hart` on `plat` until the platform stops it or exactly `max_insns` more
    /// instructions retired ([`Stop::InsnLimit`]), in every tier.
    ///
    /// Blocks and compiled code check the limit only when they enter a block, so a run with
    /// blocks may retire up to a block past it: the run goes with blocks until at most
    /// [`block::MAX_BLOCK_INSNS`] instructions are left, then with one-instruction blocks.
    pub fn run<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        max_insns: Option<u64>,
    ) -> Stop {
        let Some(n) = max_insns else {
            return self.run_blocks(hart, plat, u64::MAX);
        };
        let limit = hart.instret.saturating_add(n);
        let bulk = limit.saturating_sub(block::MAX_BLOCK_INSNS as u64);
        if hart.instret < bulk {
            let single = self.one_insn_blocks;
            self.set_one_insn_blocks(hart, false);
            let stop = self.run_blocks(hart, plat, bulk);
            self.set_one_insn_blocks(hart, single);
            if stop != Stop::InsnLimit {
                return stop;
            }
        }
        if hart.instret >= limit {
            return Stop::InsnLimit;
        }
        let single = self.one_insn_blocks;
        self.set_one_insn_blocks(hart, true);
        let stop = self.run_blocks(hart, plat, limit);
        self.set_one_insn_blocks(hart, single);
        stop
    }

    /// Run `hart` on `plat` until the platform stops it or, at a block entry, `hart.instret`
    /// has reached `limit`.
    fn run_blocks<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        limit: u64,
    ) -> Stop {
        // Interpreter slots hold handlers instantiated for one platform type: never run them
        // with another.
        let platform = TypeId::of::<P>();
        if self.built_for != Some(platform) {
            if !self.blocks.is_empty() {
                self.flush_code(hart);
            }
            self.built_for = Some(platform);
        }
        let started = Instant::now();
        let mut blocks_run: u64 = 0;
        let mut ctx = RunCtx {
            state: RunState {
                jump_cache: self.jump_cache.as_ptr(),
                limit,
                chain_limit: limit,
                budget: 0,
                chain_budget: if self.policy.compiling() && P::MAY_COMPILE {
                    0
                } else {
                    interp::CHAIN_BUDGET
                },
                jit_dispatched: 0,
                checked: false,
                chained: 0,
                trap: Trap::new(crate::cpu::Exception::IllegalInsn, 0),
                stop: None,
                flat_base: plat.flat_host_base().unwrap_or(0),
                indirect_in_region: 0,
                indirect_left_region: 0,
                t2_retired: 0,
                t2_chained: 0,
                region_cap: 0,
                device_ended_chain: false,
            },
            plat: plat as *mut P,
        };
        // Interpreted blocks run one at a time while a compiling tier is on (chain budget 0),
        // so the run loop sees where each indirect jump went.
        let profile_jumps =
            P::PREDICTS_INDIRECT_JUMPS && self.policy.t2_enabled() && ctx.state.chain_budget == 0;
        let stop = loop {
            // A chained run that ended on a jump-cache miss already made these checks.
            if !ctx.state.checked {
                // SAFETY: `ctx.plat` is the `plat` borrowed for this whole call; no other
                // reference to it is live here.
                if let Some(stop) = unsafe { &mut *ctx.plat }.between_blocks(hart) {
                    break stop;
                }
                if hart.instret >= limit {
                    break Stop::InsnLimit;
                }
            }
            ctx.state.checked = false;
            self.install_finished::<P>();
            #[cfg(all(tier1, tier2))]
            {
                self.turns_to_region_review -= 1;
                if self.turns_to_region_review == 0 {
                    self.turns_to_region_review = self.region_review_turns;
                    self.retire_short_regions();
                }
            }
            // SAFETY: as above.
            let plat = unsafe { &mut *ctx.plat };
            let exit = match self.block_at(hart, plat, P::MAY_COMPILE) {
                Ok(found) if found.region != 0 && found.code == 0 => {
                    ctx.state.jump_cache = self.jump_cache.as_ptr();
                    // SAFETY: the region is installed for `hart.pc` in the current epoch and
                    // made for `P` (all code is dropped when the platform type changes).
                    unsafe { self.enter_region(hart, &mut ctx, found.region) }
                }
                Ok(Found { code, .. }) if code != 0 => {
                    ctx.state.jump_cache = self.jump_cache.as_ptr();
                    // SAFETY: `code` is compiled code of a live block, made for `P` and for
                    // `hart.pc` (blocks and code are dropped when the platform type changes);
                    // the jump cache names only live blocks and code; nothing touches the
                    // blocks or the platform while it runs.
                    unsafe { self.enter_compiled(hart, &mut ctx, code) }
                }
                Ok(Found {
                    slots: first,
                    block,
                    ..
                }) => {
                    ctx.state.jump_cache = self.jump_cache.as_ptr();
                    // SAFETY: `first` is the interpreter entry of a live block compiled for
                    // `P` (blocks are dropped when the platform type changes); the jump cache
                    // holds only such blocks; nothing touches the blocks or the platform while
                    // it runs.
                    let exit = unsafe { interp::run_block(hart, &mut ctx, first) };
                    if profile_jumps && matches!(exit, BlockExit::Next) {
                        self.record_indirect_jump(block, hart.pc);
                    }
                    exit
                }
                Err(trap) => BlockExit::Trap(trap),
            };
            blocks_run += 1;
            match exit {
                BlockExit::Next => self.stats.exits.next += 1,
                BlockExit::Wfi => {
                    self.stats.exits.wfi += 1;
                    plat.wait_for_interrupt(hart);
                }
                BlockExit::Stop => {
                    if let Some(stop) = ctx.state.stop.take() {
                        break stop;
                    }
                }
                BlockExit::FlushCode => {
                    self.stats.exits.flush_code += 1;
                    self.fence_i(hart, plat);
                }
                BlockExit::CodeWritten => self.stats.exits.code_written += 1,
                BlockExit::Trap(trap) => {
                    self.stats.traps += 1;
                    self.stats.exits.trap += 1;
                    if let Some(n) = self.stats.trap_causes.get_mut(trap.cause as usize) {
                        *n += 1;
                    }
                    // SAFETY: as above.
                    match unsafe { &mut *ctx.plat }.handle_trap(hart, trap) {
                        Ok(Resume::Continue) => {}
                        Ok(Resume::FlushCode) => {
                            self.flush_code(hart);
                            // A new address space (execve) may have moved the flat base.
                            // SAFETY: as above.
                            ctx.state.flat_base =
                                unsafe { &*ctx.plat }.flat_host_base().unwrap_or(0);
                        }
                        // SAFETY: as above.
                        Ok(Resume::FenceI) => self.fence_i(hart, unsafe { &mut *ctx.plat }),
                        Err(stop) => break stop,
                    }
                }
            }
            // Stores into code pages (by a block or by trap handling such as misaligned
            // emulation) drop that code before anything else runs.
            if hart.code_pages.any_written() {
                self.invalidate_written_pages(hart);
            }
        };
        blocks_run += ctx.state.chained;
        self.stats.t2_indirect_in_region += ctx.state.indirect_in_region;
        self.stats.t2_indirect_left_region += ctx.state.indirect_left_region;
        self.stats.t2_insns += ctx.state.t2_retired;
        self.stats.t2_chained += ctx.state.t2_chained;
        self.stats.blocks_run += blocks_run;
        // Transitions through the dispatcher were counted with the chained ones.
        self.stats.t1_chained -= ctx.state.jit_dispatched.min(self.stats.t1_chained);
        self.stats.t1_dispatched += ctx.state.jit_dispatched;
        #[cfg(tier1)]
        {
            self.stats.jit = self.t1.stats.clone();
        }
        #[cfg(tier2)]
        {
            self.stats.t2 = self.t2.stats.clone();
        }
        self.stats.run_time += started.elapsed();
        stop
    }
}
