//! The tiered execution engine: block cache, interpreter, and the run loop that sits between
//! blocks (the only place where interrupts, exits and instruction limits are checked).

pub mod block;
pub mod interp;
pub mod mem;
pub mod platform;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::cpu::Hart;
use block::Block;
use interp::BlockExit;
pub use platform::{Platform, Resume, Stop, Target};

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
    pub traps: u64,
    pub run_time: Duration,
}

/// Size of the direct-mapped pc -> block cache in front of the hash map.
const JUMP_CACHE_SIZE: usize = 4096;

/// The engine: owns decoded code and runs a hart on a platform.
pub struct Engine {
    config: EngineConfig,
    blocks: Vec<Block>,
    /// Block index by the host address of its first instruction.
    by_host: HashMap<usize, u32>,
    /// Recently used blocks by guest pc: (pc, block index); validated against the host address.
    jump_cache: Box<[(u32, u32); JUMP_CACHE_SIZE]>,
    pub stats: EngineStats,
}

/// A jump-cache slot that matches no pc (pcs are 2-byte aligned).
const EMPTY_SLOT: (u32, u32) = (1, 0);

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        Engine {
            config,
            blocks: Vec::new(),
            by_host: HashMap::new(),
            jump_cache: Box::new([EMPTY_SLOT; JUMP_CACHE_SIZE]),
            stats: EngineStats::default(),
        }
    }

    /// The configuration the engine runs with.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Drop every decoded block (code may have changed).
    pub fn flush_code(&mut self) {
        self.blocks.clear();
        self.by_host.clear();
        self.jump_cache.fill(EMPTY_SLOT);
        self.stats.code_flushes += 1;
    }

    /// Find or build the block at `hart.pc`.
    #[inline(always)]
    fn block_at<P: Platform>(
        &mut self,
        hart: &mut Hart,
        plat: &mut P,
    ) -> Result<u32, crate::cpu::Trap> {
        let pc = hart.pc;
        let host = block::fetch_host(hart, plat, pc)?;
        let slot = (pc as usize >> 1) & (JUMP_CACHE_SIZE - 1);
        let (cached_pc, idx) = self.jump_cache[slot];
        if cached_pc == pc {
            if let Some(b) = self.blocks.get(idx as usize) {
                if b.host == host {
                    return Ok(idx);
                }
            }
        }
        let idx = match self.by_host.get(&host) {
            Some(&idx) => idx,
            None => {
                let b = block::build(hart, plat, pc, host)?;
                let idx = self.blocks.len() as u32;
                self.blocks.push(b);
                self.by_host.insert(host, idx);
                self.stats.blocks_built += 1;
                idx
            }
        };
        self.jump_cache[slot] = (pc, idx);
        Ok(idx)
    }

    /// Run `hart` on `plat` until the platform stops it or `max_insns` more instructions retire.
    pub fn run<P: Platform>(&mut self, hart: &mut Hart, plat: &mut P, max_insns: Option<u64>) -> Stop {
        let started = Instant::now();
        let limit = max_insns.map_or(u64::MAX, |n| hart.instret.saturating_add(n));
        let stop = loop {
            if let Some(stop) = plat.between_blocks(hart) {
                break stop;
            }
            if hart.instret >= limit {
                break Stop::InsnLimit;
            }
            let exit = match self.block_at(hart, plat) {
                Ok(idx) => {
                    let b = &mut self.blocks[idx as usize];
                    b.exec_count += 1;
                    interp::run_block(hart, plat, &b.insns)
                }
                Err(trap) => BlockExit::Trap(trap),
            };
            self.stats.blocks_run += 1;
            match exit {
                BlockExit::Next | BlockExit::Wfi => {}
                BlockExit::FlushCode => self.flush_code(),
                BlockExit::Trap(trap) => {
                    self.stats.traps += 1;
                    match plat.handle_trap(hart, trap) {
                        Ok(Resume::Continue) => {}
                        Ok(Resume::FlushCode) => self.flush_code(),
                        Err(stop) => break stop,
                    }
                }
            }
        };
        self.stats.run_time += started.elapsed();
        stop
    }
}
