//! The tiered execution engine: block cache, interpreter, and the run loop that sits between
//! blocks (the only place where interrupts, exits and instruction limits are checked).

pub mod block;
pub mod interp;
pub mod ir;
pub mod jit;
pub mod mem;
pub mod misaligned;
pub mod platform;

use std::any::TypeId;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::cpu::tlb::CodePages;
use crate::cpu::{Hart, Trap};
use block::Block;
use interp::{jump_slot, BlockExit, JumpEntry, RunCtx, RunState, Slot, JUMP_CACHE_SIZE};
pub use platform::{Platform, Resume, Stop, Target};

/// Blocks dropped by stores into their pages that may pile up before everything is flushed
/// (their memory is held until then).
const MAX_DEAD_BLOCKS: usize = 8192;

/// An execution tier, or the policy that mixes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tier {
    /// The interpreter over decoded blocks, only.
    Interp,
    /// Tier 1 for every block: each block is compiled before it first runs.
    T1,
    /// The default policy: the interpreter, and tier 1 for blocks that ran `t1_threshold`
    /// times.
    #[default]
    Auto,
}

impl Tier {
    /// Every tier this build has, by CLI name.
    pub const ALL: &'static [(&'static str, Tier)] = &[
        ("interp", Tier::Interp),
        ("t1", Tier::T1),
        ("auto", Tier::Auto),
    ];

    /// Parse a `--tier` value.
    pub fn from_name(name: &str) -> Option<Tier> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
    }
}

/// Runs after which `Tier::Auto` compiles a block with tier 1 (measured: see docs/codegen.md).
pub const DEFAULT_T1_THRESHOLD: u32 = 128;

/// Engine settings chosen by the user.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The tier (or tier policy) blocks run in.
    pub tier: Tier,
    /// With `Tier::Auto`: compile a block once it ran this many times.
    pub t1_threshold: u32,
    /// Chain compiled blocks with patched direct jumps (`--no-chain` turns it off).
    pub chain: bool,
    /// Block optimisation passes (`--no-constopt`, `--no-fuse`).
    pub ir: ir::IrOptions,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            tier: Tier::default(),
            t1_threshold: DEFAULT_T1_THRESHOLD,
            chain: true,
            ir: ir::IrOptions::default(),
        }
    }
}

impl EngineConfig {
    /// The run count after which a block is compiled, or `None` if tier 1 is off.
    pub fn t1_threshold(&self) -> Option<u32> {
        match self.tier {
            Tier::Interp => None,
            Tier::T1 => Some(0),
            Tier::Auto => Some(self.t1_threshold),
        }
    }
}

/// Counters reported by `--stats`.
#[derive(Clone, Debug, Default)]
pub struct EngineStats {
    pub blocks_built: u64,
    /// Fused units in the blocks built, by [`crate::isa::Fusion`] kind (index = its value).
    pub fused_units: [u64; FUSION_KINDS],
    pub blocks_run: u64,
    pub code_flushes: u64,
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
    pub jit: jit::JitStats,
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

/// The engine: owns decoded code and runs a hart on a platform.
pub struct Engine {
    config: EngineConfig,
    blocks: Vec<Block>,
    /// Block index by the host address of its first instruction.
    by_host: HashMap<usize, u32>,
    /// Blocks by the host pages their instructions lie in (for invalidation on stores).
    by_page: HashMap<usize, Vec<u32>>,
    /// Blocks dropped by page invalidation whose memory is still held (freed on flush).
    dead_blocks: usize,
    /// Recently used blocks by guest pc, validated against the host address; the interpreter
    /// follows it from block to block too.
    jump_cache: Box<[JumpEntry; JUMP_CACHE_SIZE]>,
    pub stats: EngineStats,
    /// The platform type the decoded blocks were compiled for.
    built_for: Option<TypeId>,
    /// The tier-1 compiler and its code.
    jit: jit::Jit,
    /// Runs after which a block is compiled; `None` when tier 1 is off.
    t1_threshold: Option<u32>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        Engine {
            jit: jit::Jit::new(config.chain),
            t1_threshold: config.t1_threshold(),
            config,
            blocks: Vec::new(),
            by_host: HashMap::new(),
            by_page: HashMap::new(),
            dead_blocks: 0,
            jump_cache: Box::new([JumpEntry::EMPTY; JUMP_CACHE_SIZE]),
            stats: EngineStats::default(),
            built_for: None,
        }
    }

    /// The configuration the engine runs with.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Drop every decoded block (code may have changed).
    pub fn flush_code(&mut self, hart: &mut Hart) {
        hart.code_pages.clear();
        self.blocks.clear();
        self.by_host.clear();
        self.by_page.clear();
        self.dead_blocks = 0;
        self.jump_cache.fill(JumpEntry::EMPTY);
        self.jit.reset();
        self.stats.code_flushes += 1;
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
                    if let Some(compiled) = &self.blocks[idx as usize].jit {
                        self.jit.unlink_block(host, compiled);
                    }
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

    /// Find or build the block at `hart.pc`; returns its first slot and the entry of its
    /// compiled code for this pc (0 if it has none). With tier 1 on, counts the run and
    /// compiles the block when it reaches the threshold (`may_compile`).
    #[inline(always)]
    fn block_at<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        may_compile: bool,
    ) -> Result<(*const Slot, usize), crate::cpu::Trap> {
        let pc = hart.pc;
        let host = block::fetch_host(hart, plat, pc)?;
        let slot = jump_slot(pc);
        let entry = self.jump_cache[slot];
        let idx = if entry.pc == pc && entry.host == host {
            if entry.code != 0 || self.t1_threshold.is_none() || !may_compile {
                return Ok((entry.slots, entry.code));
            }
            entry.block
        } else {
            match self.by_host.get(&host) {
                Some(&idx) => idx,
                None => {
                    let b = block::build(hart, plat, pc, host, self.config.ir)?;
                    for slot in b.slots.iter() {
                        self.stats.fused_units[slot.insn.fusion as usize % FUSION_KINDS] += 1;
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
                    self.blocks.push(b);
                    self.by_host.insert(host, idx);
                    self.stats.blocks_built += 1;
                    idx
                }
            }
        };
        let mut code = 0;
        if let (Some(threshold), true) = (self.t1_threshold, may_compile) {
            match self.tier_up::<P>(idx, pc, threshold, plat.flat_host_base()) {
                Ok(c) => code = c,
                Err(jit::JitError::ArenaFull) => {
                    // Start over with empty code memory; this block runs interpreted once.
                    self.flush_code(hart);
                    return self.block_at(hart, plat, false);
                }
                Err(jit::JitError::Map(e)) => {
                    // No code memory at all (e.g. a host that refuses executable mappings):
                    // go on with the interpreter alone.
                    tracing::warn!("tier 1 disabled: cannot map code memory: {e}");
                    self.t1_threshold = None;
                }
                Err(e) => {
                    tracing::warn!(
                        pc = format_args!("{pc:#x}"),
                        "tier 1 cannot compile block: {e}"
                    );
                    self.blocks[idx as usize].jit_failed = true;
                    self.jit.stats.compile_failures += 1;
                }
            }
        }
        // Slot arrays are boxed: they stay put while `blocks` grows, until `flush_code`, which
        // empties this cache first.
        let slots = self.blocks[idx as usize].slots.as_ptr();
        self.jump_cache[slot] = JumpEntry {
            pc,
            block: idx,
            host,
            slots,
            code,
        };
        Ok((slots, code))
    }

    /// Count a run of block `idx` entered at `pc` and compile it once it ran `threshold` times;
    /// returns its code's entry for `pc`, or 0.
    fn tier_up<P: Platform + 'static>(
        &mut self,
        idx: u32,
        pc: u32,
        threshold: u32,
        flat_base: Option<usize>,
    ) -> Result<usize, jit::JitError> {
        let b = &mut self.blocks[idx as usize];
        if let Some(c) = &b.jit {
            return Ok(if c.pc == pc { c.entry } else { 0 });
        }
        if b.jit_failed {
            return Ok(0);
        }
        b.runs = b.runs.saturating_add(1);
        if b.runs <= threshold {
            return Ok(0);
        }
        let insns: Vec<crate::isa::Insn> = b.slots[..b.slots.len() - 1]
            .iter()
            .map(|s| s.insn)
            .collect();
        let host = b.host;
        let (blocks, by_host) = (&self.blocks, &self.by_host);
        let compiled_at = |h: usize| {
            let i = *by_host.get(&h)?;
            let c = blocks[i as usize].jit.as_ref()?;
            Some((c.pc, c.entry))
        };
        let compiled = self
            .jit
            .compile::<P>(&insns, pc, host, flat_base, compiled_at)?;
        let entry = compiled.entry;
        self.blocks[idx as usize].jit = Some(compiled);
        Ok(entry)
    }

    /// Run `hart` on `plat` until the platform stops it or `max_insns` more instructions retire.
    pub fn run<P: Platform + 'static>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
        max_insns: Option<u64>,
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
        let limit = max_insns.map_or(u64::MAX, |n| hart.instret.saturating_add(n));
        let mut blocks_run: u64 = 0;
        let mut ctx = RunCtx {
            state: RunState {
                jump_cache: self.jump_cache.as_ptr(),
                limit,
                budget: 0,
                chain_budget: if self.t1_threshold.is_some() {
                    0
                } else {
                    interp::CHAIN_BUDGET
                },
                jit_dispatched: 0,
                checked: false,
                chained: 0,
                trap: Trap::new(crate::cpu::Exception::IllegalInsn, 0),
                stop: None,
            },
            plat: plat as *mut P,
        };
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
            // SAFETY: as above.
            let plat = unsafe { &mut *ctx.plat };
            let exit = match self.block_at(hart, plat, true) {
                Ok((_, code)) if code != 0 => {
                    ctx.state.jump_cache = self.jump_cache.as_ptr();
                    let before = hart.instret;
                    // SAFETY: `code` is compiled code of a live block, made for `P` and for
                    // `hart.pc` (blocks and code are dropped when the platform type changes);
                    // the jump cache names only live blocks and code; nothing touches the
                    // blocks or the platform while it runs.
                    let e = unsafe { self.jit.enter(hart, &mut ctx, code) };
                    let transitions = jit::JIT_CHAIN_BUDGET.saturating_sub(ctx.state.budget);
                    ctx.state.chained += transitions as u64;
                    self.stats.t1_chained += transitions as u64;
                    self.stats.t1_entries += 1;
                    self.stats.t1_insns += hart.instret.saturating_sub(before);
                    interp::block_exit(&ctx.state, interp::Exit(e))
                }
                Ok((first, _)) => {
                    ctx.state.jump_cache = self.jump_cache.as_ptr();
                    // SAFETY: `first` is the first slot of a block compiled for `P` (blocks
                    // are dropped when the platform type changes); the jump cache holds only
                    // such blocks; nothing touches the blocks or the platform while it runs.
                    unsafe { interp::run_block(hart, &mut ctx, first) }
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
                    self.flush_code(hart);
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
                        Ok(Resume::FlushCode) => self.flush_code(hart),
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
        self.stats.blocks_run += blocks_run;
        // Transitions through the dispatcher were counted with the chained ones.
        self.stats.t1_chained -= ctx.state.jit_dispatched.min(self.stats.t1_chained);
        self.stats.t1_dispatched += ctx.state.jit_dispatched;
        self.stats.jit = self.jit.stats.clone();
        self.stats.run_time += started.elapsed();
        stop
    }
}
