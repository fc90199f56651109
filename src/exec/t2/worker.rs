//! The compile thread: it owns the LLVM context, target machine and execution engines for its
//! whole life (none of them may cross threads) and turns region plans into code addresses.
//! Code of one epoch lives in one execution engine. Engines of old epochs stay alive, because
//! the engine side's region cache may hand their code out again in a later epoch, until the
//! run loop says it forgot everything older than some epoch ([`Worker::forget_before`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use inkwell::context::{AsContextRef, Context};
use inkwell::execution_engine::ExecutionEngine;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::OptimizationLevel;

use super::codegen::{build_region, CodegenEnv};
use super::memory::{CodeSections, RegionMemory};
use super::region::RegionPlan;
use crate::exec::code_dump::CodeDump;
use crate::exec::policy::T2Opt;

/// A region to compile.
pub struct CompileJob {
    /// Unique per request (names the function and matches the answer).
    pub id: u64,
    /// The engine's code epoch when the plan was made.
    pub epoch: u64,
    pub plan: RegionPlan,
    pub env: CodegenEnv,
}

/// A finished compile.
pub struct CompileDone {
    pub id: u64,
    pub epoch: u64,
    /// The function's address, or why there is none.
    pub result: Result<usize, String>,
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

/// Held by the compile thread while it compiles, and by `fork` (through `pthread_atfork`)
/// while it forks: a child process (user mode emulates `fork` with the host's) never starts
/// with LLVM's or the allocator's locks taken by a thread that does not exist in it.
struct ForkGuard(std::cell::UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: the mutex is only used through pthread calls, which synchronise themselves.
unsafe impl Sync for ForkGuard {}

static FORK_GUARD: ForkGuard =
    ForkGuard(std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));

extern "C" fn fork_prepare() {
    // SAFETY: a statically initialised mutex, locked and unlocked in pairs by this module.
    unsafe { libc::pthread_mutex_lock(FORK_GUARD.0.get()) };
}

extern "C" fn fork_release() {
    // SAFETY: `fork_prepare` locked it in this thread (parent), or in the thread the child
    // process consists of (child).
    unsafe { libc::pthread_mutex_unlock(FORK_GUARD.0.get()) };
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
struct LlvmWork(());

impl LlvmWork {
    fn begin() -> LlvmWork {
        // SAFETY: a statically initialised mutex, unlocked by `drop` in this thread.
        unsafe { libc::pthread_mutex_lock(FORK_GUARD.0.get()) };
        LlvmWork(())
    }
}

impl Drop for LlvmWork {
    fn drop(&mut self) {
        // SAFETY: locked by `begin` in this thread.
        unsafe { libc::pthread_mutex_unlock(FORK_GUARD.0.get()) };
    }
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
    jobs: Sender<Message>,
    done: Receiver<CompileDone>,
    /// [`FORKS`] when the thread was started: after a `fork` the child has the object but not
    /// the thread.
    forks: u64,
    /// Set when the run loop goes away: queued jobs are dropped, not compiled.
    quit: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Start the thread.
    pub fn spawn() -> std::io::Result<Worker> {
        guard_forks();
        let (jobs, job_rx) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let quit = Arc::new(AtomicBool::new(false));
        let thread_quit = quit.clone();
        // The thread starts with every signal blocked (it inherits this thread's mask): host
        // signals meant for the guest must reach the CPU thread, whose blocking system calls
        // they interrupt, never the compile thread.
        // SAFETY: sigset_t is plain data that sigfillset initialises; pthread_sigmask only
        // changes this thread's mask, restored right after the spawn.
        let old_mask = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
            old
        };
        let spawned = std::thread::Builder::new()
            .name("rv32vm-t2".into())
            .spawn(move || compile_loop(job_rx, done_tx, &thread_quit));
        // SAFETY: restores the mask saved above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut()) };
        let thread = spawned?;
        Ok(Worker {
            jobs,
            done,
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
            // that does not exist here. Leak the handle and the channels instead.
            if let Some(t) = self.thread.take() {
                std::mem::forget(t);
            }
            return;
        }
        self.quit.store(true, Ordering::Relaxed);
        let _ = self.jobs.send(Message::Shutdown);
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
/// (`region_ID_PC.{raw,opt}.ll`), and its code ([`CodeDump`], files `region-code-PID.*`).
type Dump = CodeDump;

fn host_machine() -> Result<TargetMachine, String> {
    Target::initialize_native(&InitializationConfig::default())?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| e.to_string())?;
    let cpu = TargetMachine::get_host_cpu_name();
    let features = TargetMachine::get_host_cpu_features();
    target
        .create_target_machine(
            &triple,
            cpu.to_str().unwrap_or("generic"),
            features.to_str().unwrap_or(""),
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| "LLVM cannot make a target machine for this host".to_string())
}

/// Code of one epoch and optimisation level: its execution engine, the code sections of its memory, and the modules
/// it could not give back.
struct EpochCode<'ctx> {
    epoch: u64,
    /// Its code generator's level: fixed when MCJIT's engine is made.
    opt: T2Opt,
    engine: ExecutionEngine<'ctx>,
    sections: CodeSections,
    modules: Vec<Module<'ctx>>,
}

fn compile_loop(jobs: Receiver<Message>, done: Sender<CompileDone>, quit: &AtomicBool) {
    // LLVM's target registry takes a global lock: under the fork guard like every compile.
    let (machine, context) = with_fork_guard(|| (host_machine(), Context::create()));
    let mut engines: Vec<EpochCode<'_>> = Vec::new();
    // Jobs planned before this epoch are stale: their code could be freed any time.
    let mut oldest_live_epoch = 0;
    let mut dump = Dump::from_env("region-code");
    if dump.is_none() {
        // Names only serve the IR dump; making each one unique costs LLVM time per value.
        // SAFETY: the context is alive and owned by this thread.
        unsafe {
            inkwell::llvm_sys::core::LLVMContextSetDiscardValueNames((&context).as_ctx_ref(), 1)
        };
    }
    // Jobs received but not compiled yet, in order. An engine gives each thread jobs of one
    // optimisation level (`Tier2::worker`), so a fast compile never waits behind an O2 one.
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
        let Some(job) = queue.pop_front() else {
            continue;
        };
        if quit.load(Ordering::Relaxed) {
            break;
        }
        let started = thread_cpu_time();
        let result = with_fork_guard(|| match &machine {
            _ if job.epoch < oldest_live_epoch => Err("planned in a forgotten epoch".into()),
            Ok(machine) => compile_one(&context, machine, &mut engines, &job, dump.as_mut()),
            Err(e) => Err(e.clone()),
        });
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
    drop(machine);
    drop(work);
}

fn compile_one<'ctx>(
    context: &'ctx Context,
    machine: &TargetMachine,
    engines: &mut Vec<EpochCode<'ctx>>,
    job: &CompileJob,
    dump: Option<&mut Dump>,
) -> Result<usize, String> {
    let name = format!("region_{}_{:08x}", job.id, job.plan.entry_pc);
    let module = context.create_module(&name);
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    build_region(context, &module, &name, &job.plan, &job.env).map_err(|e| e.to_string())?;
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
        // region never uses. Guest code is scalar; regions lose nothing measurable.
        let options = PassBuilderOptions::create();
        options.set_loop_vectorization(false);
        options.set_loop_slp_vectorization(false);
        module
            .run_passes(passes, machine, options)
            .map_err(|e| e.to_string())?;
    }
    write_ir("opt");
    let code = match engines
        .iter()
        .position(|e| e.epoch == job.epoch && e.opt == job.env.opt)
    {
        Some(i) => {
            let code = &mut engines[i];
            code.engine
                .add_module(&module)
                .map_err(|()| "cannot add a module to the execution engine".to_string())?;
            code
        }
        None => {
            let (memory, sections) = RegionMemory::new();
            let engine = module
                .create_mcjit_execution_engine_with_memory_manager(
                    memory,
                    super::codegen::codegen_level(job.env.opt),
                    CodeModel::JITDefault,
                    false,
                    job.env.opt == T2Opt::Fast,
                )
                .map_err(|e| e.to_string())?;
            engines.push(EpochCode {
                epoch: job.epoch,
                opt: job.env.opt,
                engine,
                sections,
                modules: Vec::new(),
            });
            engines.last_mut().expect("just pushed")
        }
    };
    let addr = code
        .engine
        .get_function_address(&name)
        .map_err(|e| e.to_string())?;
    if let Some(d) = dump {
        // The region's code runs from its entry to the end of the code section holding it.
        let len = code
            .sections
            .borrow()
            .iter()
            .rev()
            .find(|&&(start, len)| (start..start + len).contains(&addr))
            .map(|&(start, len)| start + len - addr);
        if let Some(len) = len {
            let pc = job.plan.entry_pc;
            // SAFETY: `addr..addr + len` lies in a code section the memory manager handed to
            // MCJIT for this region, mapped and fully written (the function was finalised).
            let code = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
            d.record(addr, pc, &format!("rv32_region_{pc:08x}"), code);
        }
    }
    // The machine code stays with the engine (MCJIT keeps loaded objects until it is dropped);
    // the IR is no longer needed: free it, or every region would keep ~100 KiB of it.
    if code.engine.remove_module(&module).is_err() {
        code.modules.push(module);
    }
    Ok(addr)
}
