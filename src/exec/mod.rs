//! The tiered execution engine: block cache, interpreter, and the run loop that sits between
//! blocks (the only place where interrupts, exits and instruction limits are checked).

pub mod block;
pub mod interp;
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

/// An execution tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tier {
    /// The interpreter over decoded blocks.
    #[default]
    Interp,
}

impl Tier {
    /// Every tier this build has, by CLI name.
    pub const ALL: &'static [(&'static str, Tier)] = &[("interp", Tier::Interp)];

    /// Parse a `--tier` value.
    pub fn from_name(name: &str) -> Option<Tier> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
    }
}

/// Engine settings chosen by the user.
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    /// The tier every block runs in (the interpreter is the only one today).
    pub tier: Tier,
}

/// Counters reported by `--stats`.
#[derive(Clone, Debug, Default)]
pub struct EngineStats {
    pub blocks_built: u64,
    pub blocks_run: u64,
    pub code_flushes: u64,
    /// Blocks dropped because a store changed their page.
    pub blocks_invalidated: u64,
    pub traps: u64,
    pub run_time: Duration,
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
}

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        Engine {
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

    /// Find or build the block at `hart.pc`; returns its first slot.
    #[inline(always)]
    fn block_at<P: Platform>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
    ) -> Result<*const Slot, crate::cpu::Trap> {
        let pc = hart.pc;
        let host = block::fetch_host(hart, plat, pc)?;
        let slot = jump_slot(pc);
        let entry = self.jump_cache[slot];
        if entry.pc == pc && entry.host == host {
            return Ok(entry.slots);
        }
        let idx = match self.by_host.get(&host) {
            Some(&idx) => idx,
            None => {
                let b = block::build(hart, plat, pc, host)?;
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
        };
        // Slot arrays are boxed: they stay put while `blocks` grows, until `flush_code`, which
        // empties this cache first.
        let slots = self.blocks[idx as usize].slots.as_ptr();
        self.jump_cache[slot] = JumpEntry { pc, host, slots };
        Ok(slots)
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
            let exit = match self.block_at(hart, plat) {
                Ok(first) => {
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
                BlockExit::Next => {}
                BlockExit::Wfi => plat.wait_for_interrupt(hart),
                BlockExit::Stop => {
                    if let Some(stop) = ctx.state.stop.take() {
                        break stop;
                    }
                }
                BlockExit::FlushCode => self.flush_code(hart),
                BlockExit::CodeWritten => {}
                BlockExit::Trap(trap) => {
                    self.stats.traps += 1;
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
        self.stats.run_time += started.elapsed();
        stop
    }
}
