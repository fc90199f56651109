//! The compile thread: it owns the LLVM context and target machines for its whole life (none
//! of them may cross threads) and turns region plans into code addresses: LLVM emits a
//! relocatable object per region, which [`loader`] loads. Code of one epoch lives in one
//! [`CodeMemory`]. Code of old epochs stays alive, because
//! the engine side's region cache may hand their code out again in a later epoch, until the
//! run loop says it forgot everything older than some epoch ([`Worker::forget_before`]).

use std::collections::VecDeque;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use inkwell::context::{AsContextRef, Context};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine,
};

use super::code_cache;
use super::codegen::{build_region, CodegenEnv, REGION_SYMBOL};
use super::llvm_lib;
use super::loader;
use super::memory::CodeMemory;
use super::region::RegionPlan;
use crate::exec::code_dump::CodeDump;
use crate::exec::policy::T2Opt;

/// A region to compile.
pub struct CompileJob {
    /// Unique per request (names the function and matches the answer).
    pub id: u64,
    /// The engine's code epoch when the plan was made.
    pub epoch: u64,
    /// [`code_cache::fingerprint`] of the plan and settings.
    pub fingerprint: code_cache::Fingerprint,
    pub plan: RegionPlan,
    pub env: CodegenEnv,
}

/// Most jobs a compile thread keeps queued. It serves the newest first (what the guest
/// asked for last is what it runs now), so under a backlog (a Linux boot asks for about 170
/// regions in 0.3 s, a few times what one thread compiles meanwhile) the oldest jobs past
/// this many are answered [`CompileError::Expired`] instead of compiled: their blocks may be
/// hot no more, and are asked for again if they are. In FIFO order the in-guest benchmark's
/// regions waited behind the boot's until the guest powered off.
pub const MAX_QUEUED_JOBS: usize = 16;

/// Why a job has no code.
#[derive(Debug)]
pub enum CompileError {
    /// LLVM or the loader failed.
    Failed(String),
    /// Dropped unstarted from a full queue ([`MAX_QUEUED_JOBS`]).
    Expired,
}

/// A finished compile.
pub struct CompileDone {
    pub id: u64,
    pub epoch: u64,
    /// The function's address, or why there is none.
    pub result: Result<usize, CompileError>,
    /// CPU time the thread spent on this region (IR, optimisation, machine code).
    pub compile_time: Duration,
}

enum Message {
    Job(Box<CompileJob>),
    /// Nothing refers to code of epochs before this one any more: free it, and refuse jobs
    /// planned in them.
    ForgetBefore(u64),
    /// The engine that sent the jobs so far is gone: free all code, drop the queued jobs and
    /// accept any epoch again (the next engine counts epochs from 0).
    ForgetEverything,
    Shutdown,
}

/// Held by a compile thread while it compiles, and by `fork` (through `pthread_atfork`)
/// while it forks: a child process (user mode emulates `fork` with the host's) never starts
/// with LLVM's or the allocator's locks taken by a thread that does not exist in it. One
/// mutex per stripe: each compile thread holds only its own stripe, so the fast compiles the
/// guest waits for never wait for a full one on the other thread (one mutex for both had a
/// synchronous 3 ms compile wait out a 140 ms re-optimisation), and `fork` takes every stripe.
struct ForkGuard([std::cell::UnsafeCell<libc::pthread_mutex_t>; GUARD_STRIPES]);

/// Stripes of [`FORK_GUARD`]: more than the compile threads a process normally has (two per
/// engine), so they rarely share one.
const GUARD_STRIPES: usize = 8;

// SAFETY: the mutexes are only used through pthread calls, which synchronise themselves.
unsafe impl Sync for ForkGuard {}

static FORK_GUARD: ForkGuard = ForkGuard(
    [const { std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER) }; GUARD_STRIPES],
);

/// The next compile thread's stripe.
static NEXT_STRIPE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    /// This thread's stripe of [`FORK_GUARD`] (a thread that never took one uses stripe 0).
    static STRIPE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A stripe for a new compile thread: each has one of its own while there are enough.
fn next_stripe() -> usize {
    NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % GUARD_STRIPES
}

fn lock_stripe(stripe: usize) {
    // SAFETY: a statically initialised mutex, locked and unlocked in pairs by this module.
    unsafe { libc::pthread_mutex_lock(FORK_GUARD.0[stripe].get()) };
}

fn unlock_stripe(stripe: usize) {
    // SAFETY: locked by `lock_stripe` in this thread (or, in a forked child, in the thread
    // the child process is a copy of).
    unsafe { libc::pthread_mutex_unlock(FORK_GUARD.0[stripe].get()) };
}

/// Every stripe, always in the same order (no two holders of all can deadlock).
fn lock_all_stripes() {
    (0..GUARD_STRIPES).for_each(lock_stripe);
}

fn unlock_all_stripes() {
    (0..GUARD_STRIPES).rev().for_each(unlock_stripe);
}

extern "C" fn fork_prepare() {
    lock_all_stripes();
}

extern "C" fn fork_release() {
    unlock_all_stripes();
}

/// Forks this process went through (counted in the child): a worker made before a fork
/// belongs to the parent. An atomic load per check, where `getpid` was a system call at every
/// run-loop entry while a compile was pending.
static FORKS: AtomicU64 = AtomicU64::new(0);

extern "C" fn fork_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
    fork_release();
}

/// [`FORK_GUARD`] held while LLVM is at work in this thread (setting up, compiling, freeing
/// code, tearing down), so a `fork` never copies LLVM's own locks held mid-change (a child
/// whose compile thread then waits for such a lock hangs forever). Released when dropped.
struct LlvmWork {
    /// The stripe held, or `None` for all of them.
    stripe: Option<usize>,
}

impl LlvmWork {
    /// This thread's stripe.
    fn begin() -> LlvmWork {
        let stripe = STRIPE.with(|s| s.get());
        lock_stripe(stripe);
        LlvmWork {
            stripe: Some(stripe),
        }
    }

    /// Every stripe: no compile thread works until it is dropped.
    #[cfg(test)]
    fn exclusive() -> LlvmWork {
        lock_all_stripes();
        LlvmWork { stripe: None }
    }
}

impl Drop for LlvmWork {
    fn drop(&mut self) {
        match self.stripe {
            Some(stripe) => unlock_stripe(stripe),
            None => unlock_all_stripes(),
        }
    }
}

/// Every compile thread in the process stops at its next LLVM work until this is dropped
/// (tests: a compile in the background that has not finished yet).
#[cfg(test)]
pub struct CompilesHeld(#[allow(dead_code)] LlvmWork);

/// Hold every compile thread (see [`CompilesHeld`]). Nothing may then wait for a compile.
#[cfg(test)]
pub fn hold_compiles() -> CompilesHeld {
    CompilesHeld(LlvmWork::exclusive())
}

/// Run `f`, which touches LLVM, as [`LlvmWork`].
fn with_fork_guard<T>(f: impl FnOnce() -> T) -> T {
    let _work = LlvmWork::begin();
    f()
}

/// Register the fork handlers once per process.
fn guard_forks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: the handlers only lock and unlock `FORK_GUARD`.
        let rc = unsafe {
            libc::pthread_atfork(Some(fork_prepare), Some(fork_release), Some(fork_child))
        };
        if rc != 0 {
            tracing::warn!("pthread_atfork failed ({rc}): a fork during a compile could hang");
        }
    });
}

/// The compile thread, as the run loop sees it.
pub struct Worker {
    /// Dropped only in the process that started the thread (see `Drop`).
    jobs: ManuallyDrop<Sender<Message>>,
    done: ManuallyDrop<Receiver<CompileDone>>,
    /// The thread's stripe of [`FORK_GUARD`] (tests hold another).
    #[cfg_attr(not(test), allow(dead_code))]
    stripe: usize,
    /// [`FORKS`] when the thread was started: after a `fork` the child has the object but not
    /// the thread.
    forks: u64,
    /// Set when the run loop goes away: queued jobs are dropped, not compiled.
    quit: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Compile threads started in this process (tests).
#[cfg(test)]
pub static THREADS_STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Worker {
    /// Start the thread.
    pub fn spawn() -> std::io::Result<Worker> {
        Worker::start(false)
    }

    /// Start the thread as one of those [`super::start_compile_threads`] starts ahead of the
    /// engine's requests: it opens LLVM once [`hold_llvm_until_started`]'s guard is dropped.
    /// (Others never wait for that guard: a child forked while a thread held it would have
    /// it locked for good.)
    pub fn spawn_ahead() -> std::io::Result<Worker> {
        Worker::start(true)
    }

    fn start(ahead: bool) -> std::io::Result<Worker> {
        #[cfg(test)]
        THREADS_STARTED.fetch_add(1, Ordering::Relaxed);
        guard_forks();
        let (jobs, job_rx) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let quit = Arc::new(AtomicBool::new(false));
        let thread_quit = quit.clone();
        let stripe = next_stripe();
        let thread = spawn_without_signals("rv32vm-t2", move || {
            if ahead {
                drop(hold_llvm_until_started());
            }
            compile_loop(job_rx, done_tx, &thread_quit, stripe)
        })?;
        Ok(Worker {
            jobs: ManuallyDrop::new(jobs),
            done: ManuallyDrop::new(done),
            stripe,
            forks: FORKS.load(Ordering::Relaxed),
            quit,
            thread: Some(thread),
        })
    }

    /// Whether the thread runs in this process (false in a child after `fork`).
    pub fn is_ours(&self) -> bool {
        self.forks == FORKS.load(Ordering::Relaxed)
    }

    /// Queue a job; false if the thread is gone.
    pub fn submit(&self, job: CompileJob) -> bool {
        self.jobs.send(Message::Job(Box::new(job))).is_ok()
    }

    /// Free the code of epochs before `epoch` (the run loop keeps no address into it) and
    /// refuse jobs planned in them.
    pub fn forget_before(&self, epoch: u64) {
        let _ = self.jobs.send(Message::ForgetBefore(epoch));
    }

    /// The engine is gone (see [`Message::ForgetEverything`]); answers to its jobs may still
    /// come, under ids no other engine uses.
    pub fn forget_everything(&self) {
        let _ = self.jobs.send(Message::ForgetEverything);
    }

    /// A finished job, if one is waiting.
    pub fn try_done(&self) -> Option<CompileDone> {
        self.done.try_recv().ok()
    }

    /// Wait for the next finished job (`None` if the thread is gone).
    pub fn wait_done(&self) -> Option<CompileDone> {
        self.done.recv().ok()
    }
}

/// Start thread `name` running `f` with every signal blocked (a thread inherits its creator's
/// mask): host signals meant for the guest must reach the CPU thread, whose blocking system
/// calls they interrupt, never a helper thread of tier 2.
pub(super) fn spawn_without_signals(
    name: &str,
    f: impl FnOnce() + Send + 'static,
) -> std::io::Result<JoinHandle<()>> {
    // SAFETY: sigset_t is plain data that sigfillset initialises; pthread_sigmask only
    // changes this thread's mask, restored right after the spawn.
    let old_mask = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    };
    let spawned = std::thread::Builder::new().name(name.into()).spawn(f);
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut()) };
    spawned
}

/// Set by a program that ends its process with `_exit` (the `rv32vm` binary): a dropped
/// worker's thread is then left to finish (or be ended by `_exit`) instead of waited for, so
/// a guest's exit never waits for a region still compiling. Others (tests, library users)
/// join, so the thread never runs on into the C++ destructors of LLVM's globals at `exit`.
static DETACH_ON_DROP: AtomicBool = AtomicBool::new(false);

/// Let dropped workers' threads run on (see [`DETACH_ON_DROP`]); the caller promises to end
/// the process with `_exit`.
pub fn detach_on_drop() {
    DETACH_ON_DROP.store(true, Ordering::Relaxed);
}

impl Drop for Worker {
    fn drop(&mut self) {
        if !self.is_ours() {
            // A forked child: the thread is the parent's; joining would wait for a thread
            // that does not exist here. Leak the handle and the channels instead: the
            // parent's thread may have held a channel's lock at the fork (waiting in `recv`),
            // which stays locked here for good, and dropping a channel takes it (a guest's
            // child hung so when its first region was asked for).
            if let Some(t) = self.thread.take() {
                std::mem::forget(t);
            }
            return;
        }
        self.quit.store(true, Ordering::Relaxed);
        let _ = self.jobs.send(Message::Shutdown);
        // SAFETY: each is dropped once, here, and the worker is never used again.
        unsafe {
            ManuallyDrop::drop(&mut self.jobs);
            ManuallyDrop::drop(&mut self.done);
        }
        if let Some(t) = self.thread.take() {
            if !DETACH_ON_DROP.load(Ordering::Relaxed) {
                let _ = t.join();
            }
        }
    }
}

/// CPU time this thread has used (what a compile costs, whatever else the host is doing).
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    if ok {
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    } else {
        Duration::ZERO
    }
}

/// `RV32VM_JIT_DUMP=DIR`: each region's IR before and after optimisation
/// (`region_ID_PC.{raw,opt}.ll`), and its code ([`CodeDump`], files `region-code-N-PID.*`,
/// one set per compile thread `N`: each keeps its own file offsets).
type Dump = CodeDump;

/// Numbers compile threads for their dump files.
static NEXT_DUMP_THREAD: AtomicU64 = AtomicU64::new(0);

/// A target machine for this host at `opt`'s code generation level. Position-independent
/// code, small code model: region code is loaded within 2 GiB of this executable's code
/// ([`CodeMemory`]), so it calls helpers directly (`call rel32`) and reaches its own constants
/// relative to the instruction pointer. (The large code model costs more than bigger
/// instructions: fast instruction selection gives up on any global's address there, and the
/// rest of the block goes through SelectionDAG.)
pub(super) fn host_machine(opt: T2Opt) -> Result<TargetMachine, String> {
    // No disassembler: nothing here reads machine code (the library build.rs links has none).
    Target::initialize_native(&InitializationConfig {
        disassembler: false,
        ..InitializationConfig::default()
    })?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| e.to_string())?;
    let cpu = TargetMachine::get_host_cpu_name();
    let features = TargetMachine::get_host_cpu_features();
    target
        .create_target_machine(
            &triple,
            cpu.to_str().unwrap_or("generic"),
            features.to_str().unwrap_or(""),
            super::codegen::codegen_level(opt),
            RelocMode::PIC,
            CodeModel::Small,
        )
        .ok_or_else(|| "LLVM cannot make a target machine for this host".to_string())
}

/// The target machines, by optimisation level (a machine's code generation level is fixed).
struct Machines {
    fast: Result<TargetMachine, String>,
    full: Result<TargetMachine, String>,
}

impl Machines {
    fn new() -> Machines {
        Machines {
            fast: host_machine(T2Opt::Fast),
            full: host_machine(T2Opt::Full),
        }
    }

    fn get(&self, opt: T2Opt) -> Result<&TargetMachine, String> {
        match opt {
            T2Opt::Fast => self.fast.as_ref(),
            T2Opt::Full => self.full.as_ref(),
        }
        .map_err(Clone::clone)
    }
}

/// The code of one epoch: the memory its regions were loaded into.
struct EpochCode {
    epoch: u64,
    memory: CodeMemory,
}

/// LLVM's process-wide options, set once before the first compile.
fn llvm_options() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| {
        // The SLP vectorizer runs in `default<O2>` although `PassBuilderOptions` turn it off
        // (`compile_object`); its own switch stops it. It was half of a full region's compile
        // time, for nothing: a region's code is scalar.
        let args = [c"rv32vm".as_ptr(), c"-vectorize-slp=false".as_ptr()];
        // SAFETY: two NUL-terminated strings that outlive the call; no compile runs yet in
        // this process (`Once`, before the thread's first compile).
        unsafe {
            inkwell::llvm_sys::support::LLVMParseCommandLineOptions(
                args.len() as i32,
                args.as_ptr(),
                std::ptr::null(),
            )
        };
    });
}

/// Held while [`super::start_compile_threads`] starts the compile threads: they open LLVM only
/// once all of them are started (`dlopen` would hold up the next `pthread_create`). Only
/// threads started there wait for it (see [`Worker::spawn_ahead`]).
static STARTING_THREADS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Keep the compile threads started meanwhile from opening LLVM until the guard is dropped.
pub(super) fn hold_llvm_until_started() -> std::sync::MutexGuard<'static, ()> {
    STARTING_THREADS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn compile_loop(
    jobs: Receiver<Message>,
    done: Sender<CompileDone>,
    quit: &AtomicBool,
    stripe: usize,
) {
    STRIPE.with(|s| s.set(stripe));
    if with_fork_guard(llvm_lib::load).is_err() {
        // `load` said why. Dropping the channels tells the engine the thread is gone: it
        // stops asking.
        return;
    }
    // LLVM's options and target registry take global locks: under the fork guard like every
    // compile.
    let (machines, context) = with_fork_guard(|| {
        llvm_options();
        (Machines::new(), Context::create())
    });
    let mut engines: Vec<EpochCode> = Vec::new();
    // Jobs planned before this epoch are stale: their code could be freed any time.
    let mut oldest_live_epoch = 0;
    let thread = NEXT_DUMP_THREAD.fetch_add(1, Ordering::Relaxed);
    let mut dump = Dump::from_env(&format!("region-code-{thread}"));
    if dump.is_none() {
        // Names only serve the IR dump; making each one unique costs LLVM time per value.
        // SAFETY: the context is alive and owned by this thread.
        unsafe {
            inkwell::llvm_sys::core::LLVMContextSetDiscardValueNames((&context).as_ctx_ref(), 1)
        };
    }
    // Jobs received but not compiled yet, oldest first; the newest is compiled next. An
    // engine gives each thread jobs of one optimisation level (`Tier2::worker`), so a fast
    // compile never waits behind an O2 one.
    let mut queue: VecDeque<Box<CompileJob>> = VecDeque::new();
    'serve: loop {
        let mut next = if queue.is_empty() {
            match jobs.recv() {
                Ok(message) => Some(message),
                Err(_) => break,
            }
        } else {
            jobs.try_recv().ok()
        };
        while let Some(message) = next.take() {
            match message {
                Message::Job(job) => queue.push_back(job),
                Message::ForgetBefore(epoch) => {
                    oldest_live_epoch = oldest_live_epoch.max(epoch);
                    with_fork_guard(|| engines.retain(|e| e.epoch >= oldest_live_epoch));
                }
                Message::ForgetEverything => {
                    queue.clear();
                    oldest_live_epoch = 0;
                    with_fork_guard(|| engines.clear());
                }
                Message::Shutdown => break 'serve,
            }
            next = jobs.try_recv().ok();
        }
        let excess = queue.len().saturating_sub(MAX_QUEUED_JOBS);
        for old in queue.drain(..excess) {
            let answer = CompileDone {
                id: old.id,
                epoch: old.epoch,
                result: Err(CompileError::Expired),
                compile_time: Duration::ZERO,
            };
            if done.send(answer).is_err() {
                break 'serve;
            }
        }
        let Some(job) = queue.pop_back() else {
            continue;
        };
        if quit.load(Ordering::Relaxed) {
            break;
        }
        let started = thread_cpu_time();
        let result = with_fork_guard(|| {
            if job.epoch < oldest_live_epoch {
                return Err("planned in a forgotten epoch".into());
            }
            compile_one(&context, &machines, &mut engines, &job, dump.as_mut())
        })
        .map_err(CompileError::Failed);
        let compile_time = thread_cpu_time().saturating_sub(started);
        tracing::debug!(
            pc = format_args!("{:#x}", job.plan.entry_pc),
            opt = ?job.env.opt,
            blocks = job.plan.blocks.len(),
            insns = job.plan.insn_count(),
            us = compile_time.as_micros() as u64,
            "tier 2: region compiled"
        );
        let answer = CompileDone {
            id: job.id,
            epoch: job.epoch,
            result,
            compile_time,
        };
        if done.send(answer).is_err() {
            break;
        }
    }
    // Freeing the code and LLVM's state is LLVM work too.
    let work = LlvmWork::begin();
    drop(engines);
    drop(context);
    drop(machines);
    drop(work);
}

/// Compile `job`'s region to a relocatable object.
fn compile_object(
    context: &Context,
    machine: &TargetMachine,
    job: &CompileJob,
    dump: Option<&Dump>,
) -> Result<Vec<u8>, String> {
    let name = format!("region_{}_{:08x}", job.id, job.plan.entry_pc);
    let module = context.create_module(&name);
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    build_region(context, &module, REGION_SYMBOL, &job.plan, &job.env)
        .map_err(|e| e.to_string())?;
    let write_ir = |suffix: &str| {
        if let Some(d) = &dump {
            let path = d.dir.join(format!("{name}.{suffix}.ll"));
            if let Err(e) = module.print_to_file(&path) {
                tracing::warn!("RV32VM_JIT_DUMP: cannot write {}: {e}", path.display());
            }
        }
    };
    write_ir("raw");
    module
        .verify()
        .map_err(|e| format!("invalid IR for region {:#x}: {e}", job.plan.entry_pc))?;
    if let Some(passes) = super::codegen::passes(job.env.opt) {
        // No vectorizers: a region's MXCSR flags are the guest's `fflags` (native FP), and
        // LLVM lowers some vector integer operations through SSE float conversions (a
        // variable shift became `pslld $23` + `cvttps2dq`), which raise inexact on lanes the
        // region never uses. Guest code is scalar; regions lose nothing measurable. (The SLP
        // vectorizer needs its process-wide switch as well: `llvm_options`.)
        let options = PassBuilderOptions::create();
        options.set_loop_vectorization(false);
        options.set_loop_slp_vectorization(false);
        module
            .run_passes(passes, machine, options)
            .map_err(|e| e.to_string())?;
    }
    write_ir("opt");
    let object = machine
        .write_to_memory_buffer(&module, FileType::Object)
        .map_err(|e| e.to_string())?;
    Ok(object.as_slice().to_vec())
}

fn compile_one(
    context: &Context,
    machines: &Machines,
    engines: &mut Vec<EpochCode>,
    job: &CompileJob,
    dump: Option<&mut Dump>,
) -> Result<usize, String> {
    let machine = machines.get(job.env.opt)?;
    let object = compile_object(context, machine, job, dump.as_deref())?;
    // The engine looked in the code cache before it asked for the compile.
    if let Some(cache) = code_cache::code_cache() {
        cache.put(&cache.key(&job.fingerprint), &object);
    }
    let code = match engines.iter().position(|e| e.epoch == job.epoch) {
        Some(i) => &mut engines[i],
        None => {
            engines.push(EpochCode {
                epoch: job.epoch,
                memory: CodeMemory::new(),
            });
            engines.last_mut().expect("just pushed")
        }
    };
    let loaded = loader::load(
        &object,
        REGION_SYMBOL,
        &|name| job.env.resolve(name),
        &mut code.memory,
    )
    .map_err(|e| format!("cannot load region {:#x}: {e}", job.plan.entry_pc))?;
    if let Some(d) = dump {
        let pc = job.plan.entry_pc;
        // SAFETY: the loader just wrote the function's `len` bytes at `entry`, in memory that
        // stays mapped as long as its epoch's code.
        let bytes = unsafe { std::slice::from_raw_parts(loaded.entry as *const u8, loaded.len) };
        d.record(loaded.entry, pc, &format!("rv32_region_{pc:08x}"), bytes);
    }
    Ok(loaded.entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::abi::Helpers;
    use crate::exec::t2::region::RegionBlock;
    use crate::isa::decode;
    use crate::machine::system::System;

    /// A one-block region (`addi a0, a0, 1`, then a `jal` out of the page) as job `id`.
    fn job(id: u64) -> Box<CompileJob> {
        let plan = RegionPlan {
            entry_pc: 0x1000,
            blocks: vec![RegionBlock {
                pc: 0x1000,
                insns: vec![decode(0x0015_0513), decode(0x0000_106f)],
                predicted: None,
            }],
        };
        let env = CodegenEnv {
            helpers: Helpers::for_platform::<System>(),
            folding_helpers: Helpers::folding_for_platform::<System>(),
            flat: false,
            unchecked: false,
            opt: T2Opt::Fast,
            inline_tlb: false,
        };
        let fingerprint = code_cache::fingerprint(&plan, &env);
        Box::new(CompileJob {
            id,
            epoch: 0,
            fingerprint,
            plan,
            env,
        })
    }

    #[test]
    fn a_compile_thread_does_not_wait_for_another_ones_llvm_work() {
        // Another compile thread at work holds its own stripe of the fork guard: this one
        // compiles meanwhile (a fast compile the guest waits for once waited out a full one).
        let worker = Worker::spawn().expect("a compile thread");
        let other = (worker.stripe + 1) % GUARD_STRIPES;
        lock_stripe(other);
        assert!(worker.submit(*job(1)));
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let done = loop {
            if let Some(done) = worker.try_done() {
                break Some(done);
            }
            if std::time::Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        unlock_stripe(other);
        let done = done.expect("the compile finished while the other stripe was held");
        assert!(done.id == 1 && done.result.is_ok());
    }

    #[test]
    fn a_backlog_is_compiled_newest_first_and_its_oldest_jobs_expire() {
        let worker = Worker::spawn().expect("a compile thread");
        let n = MAX_QUEUED_JOBS as u64 + 8;
        // The thread stops at its next LLVM work (its start, or the first job it took) until
        // every job is queued: then it finds a backlog of n or n - 1 jobs.
        let hold = LlvmWork::exclusive();
        for id in 0..n {
            assert!(worker.jobs.send(Message::Job(job(id))).is_ok());
        }
        drop(hold);
        let answers: Vec<CompileDone> = (0..n)
            .map(|_| worker.wait_done().expect("an answer for every job"))
            .collect();
        let mut ids: Vec<u64> = answers.iter().map(|d| d.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..n).collect::<Vec<_>>(), "one answer per job");
        let expired: Vec<u64> = answers
            .iter()
            .filter(|d| matches!(d.result, Err(CompileError::Expired)))
            .map(|d| d.id)
            .collect();
        let compiled: Vec<u64> = answers
            .iter()
            .filter(|d| d.result.is_ok())
            .map(|d| d.id)
            .collect();
        assert_eq!(expired.len() + compiled.len(), n as usize, "no failures");
        let backlog = n as usize - MAX_QUEUED_JOBS;
        assert!(
            expired.len() == backlog || expired.len() == backlog - 1,
            "expired {expired:?}"
        );
        // Past the job it may have taken before the rest came: newest first, and the ones
        // that expired are older than every one compiled from the backlog.
        let from_backlog = &compiled[1..];
        assert!(
            from_backlog.windows(2).all(|w| w[0] > w[1]),
            "compiled in the order {compiled:?}"
        );
        assert!(compiled.contains(&(n - 1)), "the newest job compiled");
        let oldest_compiled = *from_backlog.iter().min().expect("jobs compiled");
        assert!(
            expired.iter().all(|&id| id < oldest_compiled),
            "expired {expired:?}, compiled {compiled:?}"
        );
    }
}
