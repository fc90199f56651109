//! Tier 2: an optimising JIT through LLVM (inkwell). Hot blocks become the entries of regions
//! ([`region`]): the blocks their exits reach within their page, compiled as one LLVM function
//! ([`codegen`]) with guest registers promoted to SSA values, by a background thread
//! ([`worker`]) that owns everything LLVM. The run loop never waits for it under `--tier auto`;
//! `--tier t2` compiles every region before it first runs.
//!
//! Regions are installed between blocks, only if the code epoch they were planned in is still
//! current and their entry block was not dropped meanwhile (a store into its page), so code
//! that finished compiling late can never run stale. docs/codegen.md, "Tier 2".

pub mod code_cache;
pub mod codegen;
pub mod llvm_lib;
pub mod loader;
pub mod memory;
pub mod native_fp;
pub mod region;
pub mod worker;

use crate::addr_hash::{AddrMap, AddrSet};
use std::collections::HashMap;
use std::time::Duration;

use crate::cpu::Hart;
use crate::exec::abi::Helpers;
use crate::exec::contract::RunCtx;
use crate::exec::platform::Platform;
use crate::exec::policy::T2Opt;
use code_cache::Fingerprint;
use codegen::CodegenEnv;
use memory::CodeMemory;
use region::RegionPlan;
use worker::{CompileDone, CompileError, CompileJob, Worker};

/// Tier-2 counters for `--stats`.
#[derive(Clone, Debug, Default)]
pub struct T2Stats {
    /// Regions installed (compiled, or found in the region cache).
    pub regions_compiled: u64,
    /// Regions that failed to compile (their blocks stay in the lower tiers).
    pub compile_failures: u64,
    /// Finished regions dropped because their code went stale while they compiled.
    pub dropped_stale: u64,
    /// Regions dropped unstarted from a full compile queue (`worker::MAX_QUEUED_JOBS`).
    pub expired: u64,
    /// Compile time on the thread, over all regions.
    pub compile_time: Duration,
    /// Per-region compile times (for the median).
    pub compile_times: Vec<Duration>,
    /// Guest instructions in the compiled regions.
    pub region_insns: u64,
    /// Blocks in the compiled regions.
    pub region_blocks: u64,
    /// Indirect jumps in the regions asked for whose profiled target is a block of their
    /// region (indirect-jump prediction).
    pub predicted_jumps: u64,
    /// Regions found in the region cache (compiled before, in this process or the one it was
    /// forked from): no LLVM work.
    pub cache_hits: u64,
    /// Regions loaded from the code cache on disk ([`code_cache`]): compiled by an earlier
    /// process.
    pub disk_hits: u64,
    /// Regions compiled fast (`--tier t2`) that stayed hot and were replaced by a region
    /// compiled with full optimisation.
    pub reoptimised: u64,
    /// Regions taken back because they ran too few instructions per entry
    /// ([`Tier2::retire_short`]).
    pub retired_short: u64,
}

impl T2Stats {
    /// The median per-region compile time.
    pub fn median_compile_time(&self) -> Duration {
        let mut t = self.compile_times.clone();
        t.sort();
        t.get(t.len() / 2).copied().unwrap_or_default()
    }
}

/// Regions one entry from the run loop may chain into (each through the run loop's checks)
/// before it returns there, so compilation results get installed and the run loop's own
/// bookkeeping runs in bounded time.
pub const REGION_CHAIN_BUDGET: u32 = 256;

/// Most guest instructions in the regions the region cache keeps (their code stays mapped
/// while it does) before it is emptied at the next code flush.
const REGION_CACHE_INSNS: usize = 1 << 21;

/// Most code epochs whose code the region cache keeps mapped before it is emptied at the next
/// code flush. Each epoch that compiled anything holds at least one chunk of code memory
/// (1 MiB of address space within reach of the executable, which has room for about a
/// thousand): a program that flushes often with little new code each time (a JIT calling
/// `__builtin___clear_cache` after every patch) ran out of it after ~1000 flushes, and from
/// then on no region could be loaded.
const REGION_CACHE_EPOCHS: u64 = 64;

/// What a region's code is a pure function of: its plan (pcs and decoded instructions) and the
/// code generator's settings, which the fingerprint covers, and the helpers it calls (the
/// platform type's). Equal keys give interchangeable code, in any code epoch.
#[derive(Clone, PartialEq, Eq, Hash)]
struct RegionKey {
    fingerprint: Fingerprint,
    helpers: Helpers,
    opt: T2Opt,
}

/// Under `--tier t2`: a return to the run loop after at least this many instructions in
/// compiled code since the run loop entered it is a sample of where the guest spends its time
/// (as is one with the chaining budget used up). In system mode runs end at interrupts, so
/// this, not the budget, finds a guest's hot loops there.
pub const LONG_RUN_INSNS: u64 = 1 << 18;

/// Most re-optimisations in flight at once. They have a compile thread of their own, which
/// serves the newest first; each one's fast region is out of service meanwhile (tier 1 runs
/// its blocks, see [`Tier2::suspend_fast`]), so a hot loop that comes while another one
/// compiles leaves its slow fast region at once instead of when the other is done
/// (`tests/guest/bench 1`, one process for seven hot loops: 0.52 -> 0.46 s against 1).
const MAX_REOPTIMISING: usize = 4;

/// Why a region is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionAsk {
    /// The block has no region yet.
    First,
    /// The block's region was compiled fast (`--tier t2`) and the block stayed hot: compile
    /// it again with full optimisation, in the background, and replace it.
    Reoptimise,
}

/// A block of a region, other than its entry, that the region may be entered at: the block's
/// index, host address and pc.
pub type Member = (u32, usize, u32);

/// A region waiting for the compile thread.
struct Pending {
    key: RegionKey,
    ask: RegionAsk,
    members: Vec<Member>,
    /// Entry block (the engine's index) and its host address (identity).
    block: u32,
    host: usize,
    pc: u32,
    insns: u64,
    blocks: u64,
    /// The code epoch it was asked for in (its block indices mean nothing in later ones).
    epoch: u64,
}

impl Pending {
    /// The blocks the region will be the code of: its entry and its members.
    fn blocks(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(self.block).chain(self.members.iter().map(|&(idx, _, _)| idx))
    }
}

/// A compiled region ready to install.
pub struct Finished {
    /// Other blocks it may be entered at (multi-entry regions).
    pub members: Vec<Member>,
    pub block: u32,
    pub host: usize,
    pub pc: u32,
    pub epoch: u64,
    pub entry: usize,
    pub opt: T2Opt,
}

/// Regions taken out of service: fast ones a fully optimised one replaced
/// ([`Tier2::install`]), suspended ([`Tier2::suspend_fast`]) or taken back
/// ([`Tier2::retire_short`]).
#[derive(Default)]
pub struct Retired {
    /// Their entries.
    pub entries: Vec<usize>,
    /// The blocks they ran (entry blocks and members).
    pub blocks: Vec<u32>,
}

/// An installed region: its entry pc and function, and how it was optimised.
#[derive(Clone, Copy, Debug)]
struct Installed {
    pc: u32,
    entry: usize,
    opt: T2Opt,
}

/// Ids of compile jobs, unique in the process.
static NEXT_JOB_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

thread_local! {
    /// The compile threads of the engines this thread dropped, emptied for the next ones:
    /// starting a thread with its own LLVM context and target machine costs milliseconds,
    /// which programs that make engine after engine (the lockstep tests) would pay each time.
    static SPARE_WORKERS: std::cell::RefCell<Vec<Worker>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Start tier 2's compile threads (`threads` of them, one per optimisation level the tier
/// asks for) before the guest needs them, once per process, when the first engine that may
/// use tier 2 is made: each opens libLLVM (the first one to get there; 15-35 ms),
/// makes its LLVM context and target machine and waits as a spare of this thread
/// ([`SPARE_WORKERS`]), which the engine's first region requests take.
///
/// All of it happens before the library starts loading, because `dlopen` holds the dynamic
/// loader's locks for as long as it runs, and starting a thread (`pthread_create` sets up its
/// thread-locals under one of them) or first using a thread-local with a destructor
/// (registered under another) waits for them: started at the first region request, in the
/// middle of the load, the compile thread stopped the guest for 10-25 ms.
pub fn start_compile_threads(threads: usize) {
    SPARE_WORKERS.with(|_| ());
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let starting = worker::hold_llvm_until_started();
        for _ in 0..threads {
            match Worker::spawn_ahead() {
                Ok(w) => SPARE_WORKERS.with(|spare| spare.borrow_mut().push(w)),
                Err(e) => {
                    // The first region request tries again (and reports it).
                    tracing::debug!("tier 2: no compile thread yet: {e}");
                    break;
                }
            }
        }
        drop(starting);
    });
}

/// The compile thread for jobs of optimisation level `opt`: fast compiles, which the guest
/// waits for, never queue behind a re-optimisation at O2 (tens of milliseconds).
fn worker_slot(opt: T2Opt) -> usize {
    match opt {
        T2Opt::Fast => 0,
        T2Opt::Full => 1,
    }
}

/// Tier 2 as the engine drives it.
#[derive(Default)]
pub struct Tier2 {
    /// The compile threads, by [`worker_slot`], each started when first needed.
    workers: [Option<Worker>; 2],
    /// The thread could not be started or died: tier 2 is off.
    broken: bool,
    /// Installed regions by entry block index.
    regions: AddrMap<u32, Installed>,
    /// Blocks with a region asked for (pending, installed or failed): never asked again in
    /// this epoch.
    requested: AddrSet<u32>,
    pending: AddrMap<u64, Pending>,
    /// The blocks of this epoch's pending first regions (entries and members), with how many
    /// pending regions have each: a block of a loop nest whose region is being compiled gets
    /// that region when it is installed, so it asks for none of its own meanwhile (under
    /// `auto`, quicksort's nest was compiled once per entry block: 15 times, 0.34 s of CPU).
    pending_blocks: AddrMap<u32, u32>,
    /// The current code epoch (see [`Tier2::reset`]).
    epoch: u64,
    /// Entry blocks (of this epoch) whose jobs expired unstarted since the engine last looked
    /// ([`Tier2::take_expired`]).
    expired: Vec<u32>,
    /// Blocks whose fast region was asked to be compiled again with full optimisation, in
    /// this epoch.
    reoptimise_asked: AddrSet<u32>,
    /// The blocks each installed fast region (by entry address) runs inside itself: its entry
    /// block and its members, in this epoch.
    fast_contents: AddrMap<usize, Vec<u32>>,
    /// Fast regions out of service while their re-optimisation compiles in the background
    /// ([`Tier2::suspend_fast`]), by the re-optimised entry block: the blocks they served,
    /// which tier 1 runs meanwhile.
    suspended: AddrMap<u32, Vec<u32>>,
    /// Blocks whose region was taken back for running too little per entry, in this epoch:
    /// no region serves them again (one compiling for them is not installed).
    retired_short: AddrSet<u32>,
    /// Regions that finished while the run loop waited for another (`--tier t2`), to be
    /// installed at the next poll.
    ready: Vec<Finished>,
    /// Code already compiled, by what it was compiled from. It survives code flushes (a user
    /// program's `execve` of the same binary, `mmap` of code) and `fork` (the child's copy of
    /// memory holds the same code), so the same region is never compiled twice.
    cache: HashMap<RegionKey, usize>,
    cache_insns: usize,
    /// Where regions loaded from the code cache on disk live; emptied with the region cache.
    disk_code: CodeMemory,
    /// Whether the code cache is read (not with `RV32VM_JIT_DUMP`, which wants every region's
    /// IR and code from a compile).
    read_code_cache: bool,
    /// Results of epochs before this one are not cached: their code may have been freed.
    oldest_cached_epoch: u64,
    /// Regions one entry from the run loop may chain into: [`REGION_CHAIN_BUDGET`], or less
    /// in tests (so short runs come back to the run loop as a long one does).
    chain_budget: u32,
    pub stats: T2Stats,
}

impl Drop for Tier2 {
    fn drop(&mut self) {
        for worker in self.workers.iter_mut().filter_map(Option::take) {
            if !worker.is_ours() {
                // A forked child: the thread stayed with the parent (see `Tier2::worker`).
                std::mem::forget(worker);
                continue;
            }
            // Nothing runs this engine's code any more: the thread frees it and drops the
            // jobs still queued before it serves another engine.
            worker.forget_everything();
            // A thread being torn down drops the worker instead (and with it the thread).
            let _ = SPARE_WORKERS.try_with(|spare| spare.borrow_mut().push(worker));
        }
    }
}

impl Tier2 {
    pub fn new() -> Tier2 {
        let mut tier2 = Tier2::default();
        tier2.chain_budget = REGION_CHAIN_BUDGET;
        tier2.read_code_cache = std::env::var_os("RV32VM_JIT_DUMP").is_none();
        tier2
    }

    /// Let a region chain into at most `n` (at least 2) others before it returns to the run
    /// loop (tests: a short run then samples where it spends its time as a long one does).
    #[cfg(test)]
    pub fn set_chain_budget(&mut self, n: u32) {
        self.chain_budget = n.max(2);
    }

    /// The region entry for block `idx` entered at `pc`, or 0.
    #[inline(always)]
    pub fn region_for(&self, idx: u32, pc: u32) -> usize {
        match self.regions.get(&idx) {
            Some(r) if r.pc == pc => r.entry,
            _ => 0,
        }
    }

    /// Whether a region may still be asked for with block `idx` as its entry: not asked for
    /// yet, and not a block of a region being compiled.
    #[inline(always)]
    pub fn wants(&self, idx: u32) -> bool {
        !self.broken && !self.requested.contains(&idx) && !self.pending_blocks.contains_key(&idx)
    }

    /// Note a region asked for (`add`) or no longer pending. Only first asks count: under
    /// `--tier t2` those are compiled before the block runs, and a block that a
    /// re-optimisation in the background will cover still gets its region before it first
    /// runs (with `--t2-threshold 0` every instruction runs in tier 2).
    fn track_pending(&mut self, p: &Pending, add: bool) {
        if p.epoch != self.epoch || p.ask != RegionAsk::First {
            return;
        }
        for idx in p.blocks() {
            if add {
                *self.pending_blocks.entry(idx).or_insert(0) += 1;
            } else if let Some(n) = self.pending_blocks.get_mut(&idx) {
                *n -= 1;
                if *n == 0 {
                    self.pending_blocks.remove(&idx);
                }
            }
        }
    }

    /// Block `idx` gets no region in this epoch (the policy declined it): never ask again.
    pub fn decline(&mut self, idx: u32) {
        self.requested.insert(idx);
    }

    /// Whether block `idx` has a region compiled fast that may now be compiled again with full
    /// optimisation (asked once per epoch, one at a time).
    #[inline(always)]
    pub fn may_reoptimise(&self, idx: u32) -> bool {
        self.regions.get(&idx).is_some_and(|r| r.opt == T2Opt::Fast)
            && !self.reoptimise_asked.contains(&idx)
            && self
                .pending
                .values()
                .filter(|p| p.ask == RegionAsk::Reoptimise)
                .count()
                < MAX_REOPTIMISING
    }

    /// Whether regions are being compiled in the background, or wait to be installed (or
    /// expired ones to be taken).
    pub fn busy(&self) -> bool {
        !self.pending.is_empty() || !self.ready.is_empty() || !self.expired.is_empty()
    }

    /// After a `fork`, in the child: the threads stayed with the parent. Their objects must
    /// not be dropped (that would wait for the threads); what they were compiling never comes
    /// back here, so those blocks may be asked for again. Installed regions stay valid: their
    /// code is in this process's copy of memory.
    fn leave_parents_workers(&mut self) {
        if !self.workers.iter().flatten().any(|w| !w.is_ours()) {
            return;
        }
        for w in self.workers.iter_mut().filter_map(Option::take) {
            std::mem::forget(w);
        }
        let pending = std::mem::take(&mut self.pending);
        for p in pending.values() {
            match p.ask {
                RegionAsk::First => self.requested.remove(&p.block),
                RegionAsk::Reoptimise => {
                    self.release_suspended(p.block);
                    self.reoptimise_asked.remove(&p.block)
                }
            };
        }
        self.pending_blocks.clear();
    }

    /// The compile thread for `opt`'s jobs, started (or taken from the spares) if need be.
    fn worker(&mut self, opt: T2Opt) -> Option<&Worker> {
        self.leave_parents_workers();
        let slot = &mut self.workers[worker_slot(opt)];
        if slot.is_none() && !self.broken {
            let spare = SPARE_WORKERS.with(|spare| {
                let mut spare = spare.borrow_mut();
                // In a forked child they are the parent's threads (dropped, never joined).
                spare.retain(Worker::is_ours);
                spare.pop()
            });
            if let Some(w) = spare {
                *slot = Some(w);
            } else {
                match Worker::spawn() {
                    Ok(w) => *slot = Some(w),
                    Err(e) => {
                        tracing::warn!("tier 2 disabled: cannot start its compile thread: {e}");
                        self.broken = true;
                    }
                }
            }
        }
        self.workers[worker_slot(opt)].as_ref()
    }

    /// Ask for a region entered at block `idx` (host address `host`) planned as `plan`, in
    /// code epoch `epoch`. With `wait`, block until it is compiled and return it.
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &mut self,
        ask: RegionAsk,
        idx: u32,
        host: usize,
        epoch: u64,
        plan: RegionPlan,
        env: CodegenEnv,
        members: Vec<Member>,
        wait: bool,
    ) -> Option<Finished> {
        match ask {
            RegionAsk::First => self.requested.insert(idx),
            RegionAsk::Reoptimise => self.reoptimise_asked.insert(idx),
        };
        self.stats.predicted_jumps += plan.predicted_jumps() as u64;
        // One hash of the plan serves the region cache and the code cache on disk.
        let fingerprint = code_cache::fingerprint(&plan, &env);
        let key = RegionKey {
            fingerprint,
            helpers: env.helpers.clone(),
            opt: env.opt,
        };
        let cached = self.cache.get(&key).copied();
        if cached.is_some() {
            self.stats.cache_hits += 1;
        }
        let entry = cached.or_else(|| {
            let entry = self.load_from_disk(&fingerprint, &env)?;
            self.stats.disk_hits += 1;
            self.cache_insns += plan.insn_count();
            self.cache.insert(key.clone(), entry);
            Some(entry)
        });
        if let Some(entry) = entry {
            let opt = key.opt;
            self.stats.region_insns += plan.insn_count() as u64;
            self.stats.region_blocks += plan.blocks.len() as u64;
            return Some(Finished {
                members,
                block: idx,
                host,
                pc: plan.entry_pc,
                epoch,
                entry,
                opt,
            });
        }
        // Unique in the process: a worker handed on to another engine may still answer jobs of
        // the one before, which must never match this engine's pending ones.
        let id = NEXT_JOB_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pending = Pending {
            key,
            ask,
            members,
            block: idx,
            host,
            pc: plan.entry_pc,
            insns: plan.insn_count() as u64,
            blocks: plan.blocks.len() as u64,
            epoch,
        };
        let opt = env.opt;
        let job = CompileJob {
            id,
            epoch,
            fingerprint,
            plan,
            env,
        };
        if !self.worker(opt)?.submit(job) {
            self.broken = true;
            return None;
        }
        self.track_pending(&pending, true);
        self.pending.insert(id, pending);
        if !wait {
            return None;
        }
        loop {
            let done = self.workers[worker_slot(opt)].as_ref()?.wait_done();
            let Some(done) = done else {
                self.broken = true;
                return None;
            };
            let mine = done.id == id;
            let finished = self.finish(done);
            if mine {
                return finished;
            }
            self.ready.extend(finished);
        }
    }

    /// The region with `fingerprint` from the code cache on disk, loaded here (no round trip
    /// to a compile thread, which may be busy with a full compile), if there is one.
    fn load_from_disk(&mut self, fingerprint: &Fingerprint, env: &CodegenEnv) -> Option<usize> {
        let cache = code_cache::code_cache().filter(|_| self.read_code_cache)?;
        let key = cache.key(fingerprint);
        let object = cache.get(&key)?;
        let resolve = |name: &str| env.resolve(name);
        match loader::load(
            &object,
            codegen::REGION_SYMBOL,
            &resolve,
            &mut self.disk_code,
        ) {
            Ok(loaded) => Some(loaded.entry),
            Err(e) => {
                // Intact but not loadable: whatever wrote it, compile the region again.
                tracing::debug!("code cache: dropping an object that does not load: {e}");
                cache.remove(&key);
                None
            }
        }
    }

    /// Regions the compile thread has finished since the last call.
    pub fn poll(&mut self) -> Vec<Finished> {
        let mut out = std::mem::take(&mut self.ready);
        self.leave_parents_workers();
        while let Some(done) = self.workers.iter().flatten().find_map(Worker::try_done) {
            if let Some(f) = self.finish(done) {
                out.push(f);
            }
        }
        out
    }

    fn finish(&mut self, done: CompileDone) -> Option<Finished> {
        let p = self.pending.remove(&done.id)?;
        self.track_pending(&p, false);
        if !matches!(done.result, Err(CompileError::Expired)) {
            self.stats.compile_time += done.compile_time;
            self.stats.compile_times.push(done.compile_time);
        }
        match done.result {
            Ok(_) if done.epoch < self.oldest_cached_epoch => {
                // Compiled before the cache was emptied: the thread frees that code.
                self.stats.dropped_stale += 1;
                None
            }
            Ok(entry) => {
                self.stats.region_insns += p.insns;
                self.stats.region_blocks += p.blocks;
                self.cache_insns += p.insns as usize;
                let opt = p.key.opt;
                self.cache.insert(p.key, entry);
                Some(Finished {
                    opt,
                    members: p.members,
                    block: p.block,
                    host: p.host,
                    pc: p.pc,
                    epoch: done.epoch,
                    entry,
                })
            }
            Err(CompileError::Expired) => {
                // Asked for again if its block stays hot (the engine makes it earn that).
                self.stats.expired += 1;
                if p.epoch == self.epoch {
                    match p.ask {
                        RegionAsk::First => {
                            self.requested.remove(&p.block);
                            self.expired.push(p.block);
                        }
                        // Samples, not runs, ask again for a re-optimisation.
                        RegionAsk::Reoptimise => {
                            self.reoptimise_asked.remove(&p.block);
                            self.release_suspended(p.block);
                        }
                    }
                }
                None
            }
            Err(CompileError::Failed(e)) => {
                tracing::warn!(
                    pc = format_args!("{:#x}", p.pc),
                    "tier 2 cannot compile region: {e}"
                );
                self.stats.compile_failures += 1;
                if p.epoch == self.epoch && p.ask == RegionAsk::Reoptimise {
                    self.release_suspended(p.block);
                }
                None
            }
        }
    }

    /// Make a finished region the code for its entry block and for `members` (blocks it may
    /// also be entered at; the engine checked that all are current). A re-optimised region
    /// retires the fast regions that run its entry block inside themselves (they would keep
    /// running the hot code slowly, never entering the new region); returns them: their
    /// blocks have no region now and will be asked for again.
    pub fn install(&mut self, f: &Finished, members: &[Member]) -> Retired {
        let (entry, opt) = (f.entry, f.opt);
        let replaced = self.regions.insert(
            f.block,
            Installed {
                pc: f.pc,
                entry,
                opt,
            },
        );
        if replaced.is_some_and(|r| r.opt != opt) {
            self.stats.reoptimised += 1;
        }
        let resumed = if opt == T2Opt::Full {
            self.suspended.remove(&f.block)
        } else {
            None
        };
        if resumed.is_some() {
            self.stats.reoptimised += 1;
        }
        for &(idx, _, pc) in members {
            let member = Installed { pc, entry, opt };
            if opt == T2Opt::Full {
                // The hot nest's other blocks: entering it anywhere runs optimised code.
                self.regions.insert(idx, member);
            } else {
                self.regions.entry(idx).or_insert(member);
            }
        }
        self.stats.regions_compiled += 1;
        // The suspended fast region's blocks that the new region does not serve may earn
        // regions of their own again.
        for idx in resumed.into_iter().flatten() {
            if !self.regions.contains_key(&idx) {
                self.requested.remove(&idx);
            }
        }
        let mut contents: Vec<u32> = members.iter().map(|&(idx, _, _)| idx).collect();
        contents.push(f.block);
        let mut retired = Retired::default();
        if opt == T2Opt::Fast {
            self.fast_contents.insert(entry, contents);
            return retired;
        }
        retired.entries = self
            .fast_contents
            .iter()
            .filter(|(_, blocks)| blocks.iter().any(|b| contents.contains(b)))
            .map(|(&fast, _)| fast)
            .collect();
        for fast in &retired.entries {
            if let Some(blocks) = self.fast_contents.remove(fast) {
                retired.blocks.extend(blocks);
            }
        }
        let requested = &mut self.requested;
        self.regions.retain(|idx, r| {
            let keep = !retired.entries.contains(&r.entry);
            if !keep {
                requested.remove(idx);
            }
            keep
        });
        retired
    }

    /// Take the fast region that runs block `idx` out of service while `idx`'s region is
    /// compiled again with full optimisation in the background: tier 1's code for a block is
    /// faster than a fast region's (LLVM's O0 code generation keeps every value on the
    /// stack), and the compile takes 10-150 ms, as long as a short hot loop runs. Its blocks
    /// ask for no region of their own meanwhile; when the new region is installed, or its
    /// compile fails or expires, they may again. Returns what the engine must unhook (tier
    /// 1's stubs, jump-cache entries); nothing if the block has no fast region.
    pub fn suspend_fast(&mut self, idx: u32) -> Retired {
        let Some(entry) = self
            .regions
            .get(&idx)
            .filter(|r| r.opt == T2Opt::Fast)
            .map(|r| r.entry)
        else {
            return Retired::default();
        };
        let blocks = self.unserve(entry);
        self.suspended.insert(idx, blocks.clone());
        Retired {
            entries: vec![entry],
            blocks,
        }
    }

    /// Take the region whose entry is `entry` out of service for the rest of the epoch: it ran
    /// too few instructions per entry to pay for entering and leaving it
    /// ([`crate::exec::policy::MIN_REGION_INSNS_PER_ENTRY`]). Its blocks ask for no region
    /// again, and none compiling for them is installed. Returns what the engine must unhook.
    pub fn retire_short(&mut self, entry: usize) -> Retired {
        let blocks = self.unserve(entry);
        if blocks.is_empty() {
            return Retired::default();
        }
        self.retired_short.extend(blocks.iter().copied());
        self.stats.retired_short += 1;
        Retired {
            entries: vec![entry],
            blocks,
        }
    }

    /// Forget the region whose entry is `entry` for every block it serves, and let none of
    /// them ask for a region; returns those blocks.
    fn unserve(&mut self, entry: usize) -> Vec<u32> {
        self.fast_contents.remove(&entry);
        let mut blocks = Vec::new();
        self.regions.retain(|&b, r| {
            let served = r.entry == entry;
            if served {
                blocks.push(b);
            }
            !served
        });
        self.requested.extend(blocks.iter().copied());
        blocks
    }

    /// Whether block `idx`'s region was taken back for running too little per entry
    /// ([`Tier2::retire_short`]), in this epoch.
    pub fn retired_short(&self, idx: u32) -> bool {
        self.retired_short.contains(&idx)
    }

    /// The re-optimisation of block `idx` will not be installed: the blocks of the fast
    /// region suspended for it may earn regions again.
    pub fn release_suspended(&mut self, idx: u32) {
        for b in self.suspended.remove(&idx).into_iter().flatten() {
            self.requested.remove(&b);
        }
    }

    /// Entry blocks whose regions expired unstarted in the compile queue since the last call:
    /// they may be asked for again, once they prove hot again.
    pub fn take_expired(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.expired)
    }

    /// Whether block `idx` has a region compiled with full optimisation: a fast region traced
    /// later stops there (exits to it) instead of running the block itself.
    pub fn has_full_region(&self, idx: u32) -> bool {
        self.regions.get(&idx).is_some_and(|r| r.opt == T2Opt::Full)
    }

    /// A finished region was stale: count it.
    pub fn drop_stale(&mut self) {
        self.stats.dropped_stale += 1;
    }

    /// Block `idx` was dropped (a store into its page): its region, if any, goes too.
    pub fn invalidate(&mut self, idx: u32) {
        self.regions.remove(&idx);
    }

    /// Every block was dropped (`new_epoch` begins): forget all installed regions. Compiles
    /// in flight come back for the old epoch and are dropped then. The region cache keeps its
    /// code unless it grew past its bounds (instructions, epochs); then it is emptied and the
    /// compile thread frees all older code.
    pub fn reset(&mut self, new_epoch: u64) {
        self.epoch = new_epoch;
        self.pending_blocks.clear();
        self.expired.clear();
        self.regions.clear();
        self.requested.clear();
        self.reoptimise_asked.clear();
        self.fast_contents.clear();
        self.suspended.clear();
        self.retired_short.clear();
        if self.cache_insns > REGION_CACHE_INSNS
            || new_epoch.saturating_sub(self.oldest_cached_epoch) > REGION_CACHE_EPOCHS
        {
            self.cache.clear();
            self.cache_insns = 0;
            // Nothing installed runs any more (the run loop resets between blocks).
            self.disk_code = CodeMemory::new();
            self.oldest_cached_epoch = new_epoch;
            for w in self.workers.iter().flatten().filter(|w| w.is_ours()) {
                w.forget_before(new_epoch);
            }
        }
    }

    /// Run the region function at `entry` (entered at `hart.pc`) until it leaves; returns the
    /// exit code, with `hart.pc`/`hart.instret` set as the interpreter would.
    ///
    /// # Safety
    ///
    /// `entry` is an installed region of the current epoch made for platform type `P` with
    /// `hart.pc` as its entry pc; `ctx` is the run loop's context.
    pub unsafe fn enter<P: Platform>(
        &self,
        hart: &mut Hart,
        ctx: &mut RunCtx<P>,
        entry: usize,
    ) -> u32 {
        type RegionFn<P> = unsafe extern "C" fn(*mut Hart, *mut RunCtx<P>) -> u64;
        ctx.state.budget = self.chain_budget;
        let mut next = entry as u64;
        // A fast region that chains returns the next region's entry for us to call.
        while next >= crate::exec::abi::FIRST_REGION_ENTRY {
            // SAFETY: per this function's contract, `entry` is a function LLVM compiled with
            // exactly this signature (codegen::build_region), and so is every entry a region
            // returns (the chain helper found it in the jump cache, for `hart.pc`).
            let f = unsafe { std::mem::transmute::<usize, RegionFn<P>>(next as usize) };
            // SAFETY: the region reads and writes only the hart, the run context and guest
            // RAM through TLB entries, and calls the ABI helpers for everything else.
            next = unsafe { f(hart, ctx) };
        }
        next as u32
    }
}

/// Tests that need a process of their own (nothing loaded LLVM or started compile threads
/// yet): in the test process, run `test` again in a copy of the test binary, check that it
/// passed and return false; in that copy return true (go on with the test).
#[cfg(test)]
pub(crate) fn in_fresh_process(test: &str) -> bool {
    const FRESH_PROCESS: &str = "RV32VM_TEST_FRESH_PROCESS";
    if std::env::var_os(FRESH_PROCESS).is_some() {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1"])
        .env(FRESH_PROCESS, "1")
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{EngineConfig, Tier};
    use std::sync::atomic::Ordering;

    /// A run that may use tier 2 starts its compile thread with the run (which opens LLVM
    /// meanwhile), and the first region request takes it instead of starting one in the
    /// middle of the load.
    #[test]
    fn a_run_starts_its_compile_thread_and_its_first_request_takes_it() {
        if !in_fresh_process(
            "exec::t2::tests::a_run_starts_its_compile_thread_and_its_first_request_takes_it",
        ) {
            return;
        }
        let started = || worker::THREADS_STARTED.load(Ordering::Relaxed);
        let spares = || SPARE_WORKERS.with(|spare| spare.borrow().len());
        let auto = EngineConfig {
            tier: Tier::Auto,
            ..EngineConfig::default()
        };
        assert_eq!((started(), spares()), (0, 0));
        crate::exec::prepare_tiers(&auto);
        assert_eq!((started(), spares()), (1, 1), "started with the run");
        let mut tier2 = Tier2::new();
        assert!(tier2.worker(T2Opt::Full).is_some());
        assert_eq!((started(), spares()), (1, 0), "the request took it");
        // Later engines in the process start none of their own in advance.
        crate::exec::prepare_tiers(&auto);
        assert_eq!(started(), 1);
        assert_eq!(llvm_lib::load(), Ok(()));
    }

    /// A guest that forks before its first region request (the process forks with it) does
    /// not take the compile thread started with the run: the child does not have it.
    #[test]
    fn a_forked_child_starts_a_compile_thread_of_its_own() {
        if !in_fresh_process("exec::t2::tests::a_forked_child_starts_a_compile_thread_of_its_own") {
            return;
        }
        crate::exec::prepare_tiers(&EngineConfig {
            tier: Tier::Auto,
            ..EngineConfig::default()
        });
        // SAFETY: the child only starts a compile thread and ends with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let mut tier2 = Tier2::new();
            let ours = tier2.worker(T2Opt::Full).is_some_and(Worker::is_ours);
            // SAFETY: ends the child at once, without running the parent's destructors.
            unsafe { libc::_exit(if ours { 0 } else { 1 }) };
        }
        assert!(pid > 0, "fork failed");
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the child took its parent's compile thread (status {status:#x})"
        );
    }
}
