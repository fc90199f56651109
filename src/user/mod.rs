//! User-mode Linux process emulation (`rv32vm run prog.elf args...`, like `qemu-riscv32`): a
//! static RV32 Linux ELF runs in U-mode on the engine; its ecalls are Linux syscalls served by
//! the host, its misaligned accesses are emulated as the kernel would, signals reach its
//! handlers (or kill it as they would a real process), fork forks the host process and execve
//! loads the new program in place (or, for a host program, is the host's execve).
//!
//! Modules: `mem` (guest address space and page permissions), `regions` (what each mapping
//! is: names and shared host objects), `loader` + `stack` (ELF segments, initial stack and
//! auxv), `syscall` (dispatch and small calls), `fs` (fd table, file calls), `procfs` (the
//! guest's own /proc/self files), `mman` (brk/mmap family), `signal` (including host signals),
//! `proc` (clone/execve/wait), `misaligned` (load/store emulation).
//!
//! Address-space layout (all guest virtual):
//!
//! | range | what |
//! |---|---|
//! | image .. brk | program segments, then the heap grown by `brk` |
//! | .. [`MMAP_TOP`] | `mmap` area, allocated top-down |
//! | [`STACK_TOP`] - 8 MiB .. [`STACK_TOP`] | stack (argv, envp, auxv at the top) |
//! | [`TASK_SIZE`] .. 4 GiB | never mapped (the kernel's half on Linux) |

mod fd_transfer;
mod fs;
pub mod host_fault;
mod loader;
mod long_write;
mod mem;
mod misaligned;
mod mman;
mod mqueue;
mod net;
mod passthrough;
mod proc;
mod procfs;
mod regions;
mod signal;
mod signalfd;
mod stack;
mod syscall;
mod sysv_ipc;
mod sysv_shm;
mod threads;
mod timers;

use std::path::{Path, PathBuf};
use std::rc::Rc;

use thiserror::Error;

use crate::cpu::csr::{MSTATUS_FS, MSTATUS_FS_INITIAL};
use crate::cpu::{Access, Exception, Hart, Priv, Trap};
use crate::elf::{ElfError, ElfFile};
use crate::exec::platform::{Platform, Resume, Stop, Target};
use crate::exec::{Engine, EngineConfig};
use crate::hostfile::{self, InputError};

use fs::FdTable;
use mem::{perm, GuestMemory};
use mman::Brk;
use regions::{FileId, Mapping};
use signal::{code, sig, signal_name, SigInfo, SignalState};
use stack::{at, StackContents};

/// End of the user address space (Linux rv32 TASK_SIZE).
pub const TASK_SIZE: u32 = 0xc000_0000;
/// Top of the initial stack.
pub const STACK_TOP: u32 = TASK_SIZE;
/// Size of the stack mapping (the usual RLIMIT_STACK).
pub const STACK_SIZE: u32 = 8 << 20;
/// Highest address the mmap area allocates from (below the stack and a guard gap).
pub const MMAP_TOP: u32 = STACK_TOP - STACK_SIZE - (16 << 20);
/// Lowest address mmap hands out for a mapping whose address the guest leaves to it.
pub const MMAP_MIN: u32 = 0x1_0000;

/// Lowest address a mapping may be placed at by the guest (MAP_FIXED, mremap's new address,
/// shmat's): the host's `vm.mmap_min_addr`, as the guest's kernel would have it, but never
/// page 0. Read once; 64 KiB if the host does not say.
pub fn fixed_mmap_min() -> u32 {
    static MIN: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| {
        let host: Option<u64> = std::fs::read_to_string("/proc/sys/vm/mmap_min_addr")
            .ok()
            .and_then(|text| text.trim().parse().ok());
        let page = crate::cpu::tlb::PAGE_SIZE as u64;
        host.map_or(MMAP_MIN, |min| {
            min.max(page).next_multiple_of(page).min(MMAP_TOP as u64) as u32
        })
    })
}
/// The page holding the signal-return trampoline (`li a7, 139; ecall`) that handlers return
/// to (Linux uses the vDSO for this; we have none). It lies in the gap below the stack.
pub const SIGRETURN_TRAMPOLINE: u32 = MMAP_TOP;
/// Where a static-pie program is loaded.
pub const PIE_BASE: u32 = 0x0040_0000;

/// What to run and how.
pub struct UserOptions {
    /// The static RV32 Linux ELF executable.
    pub program: PathBuf,
    /// Its bytes, if the caller mapped them already ([`map_program`]; `rv32vm run` does, to
    /// tell a bare-metal program): the file is then not opened again.
    pub program_image: Option<hostfile::MappedFile>,
    /// Arguments after `argv[0]` (`argv[0]` is `program` as given).
    pub args: Vec<String>,
    /// Perform misaligned loads/stores directly instead of trapping and emulating them.
    pub allow_misaligned: bool,
    /// Engine configuration (tier, ...).
    pub engine: EngineConfig,
    /// Stop after this many instructions (exit status 124).
    pub max_insns: Option<u64>,
    /// Print engine statistics to stderr at exit.
    pub stats: bool,
    /// Serve gdb (`--gdb`).
    pub gdb: Option<crate::gdb::GdbOptions>,
    /// `--checked-memory`: compiled code checks every load and store even when the program
    /// would let it skip the checks.
    pub checked_memory: bool,
}

impl Default for UserOptions {
    fn default() -> Self {
        UserOptions {
            program: PathBuf::new(),
            program_image: None,
            args: Vec::new(),
            allow_misaligned: false,
            engine: EngineConfig::default(),
            max_insns: None,
            stats: false,
            gdb: None,
            checked_memory: false,
        }
    }
}

/// Why a program could not be started.
#[derive(Debug, Error)]
pub enum UserError {
    /// The program file could not be read (missing, not a regular file, too large, ...).
    #[error(transparent)]
    Read(#[from] InputError),
    /// The program is not a loadable RV32 ELF executable.
    #[error("{}: {source}", path.display())]
    Elf { path: PathBuf, source: ElfError },
    /// A segment lies outside the user address space.
    #[error("{}: segment at {vaddr:#010x} does not fit in the user address space", path.display())]
    Layout { path: PathBuf, vaddr: u32 },
    /// argv and the environment do not fit on the stack.
    #[error("argument list and environment too long for the initial stack")]
    ArgumentsTooLong,
    /// The host refused to reserve the guest address space.
    #[error("cannot reserve the 4 GiB guest address space: {0}")]
    Reserve(std::io::Error),
    /// The GDB stub cannot start (`--gdb`).
    #[error(transparent)]
    Gdb(#[from] crate::gdb::GdbError),
}

/// Run a user-mode program to completion; returns its exit status (128 + signal number when a
/// signal killed it, 124 when `max_insns` ran out). A fatal signal's message goes to stderr.
pub fn run(opts: UserOptions) -> Result<i32, UserError> {
    let (mut process, mut hart) = Process::new(&opts)?;
    process.signals.take_over_host_signals();
    let mut gdb = opts
        .gdb
        .as_ref()
        .map(crate::gdb::GdbServer::listen)
        .transpose()?;
    let mut engine = Engine::new(opts.engine);
    let (_process, stop) = crate::gdb::run(
        gdb.as_mut(),
        &mut engine,
        &mut hart,
        process,
        opts.max_insns,
    );
    if opts.stats {
        crate::report_stats(&engine, &hart);
    }
    Ok(match stop {
        Stop::Exit(status) => status,
        // None is produced in user mode (no reset syscall, no console escapes; the debugger
        // consumes its own stops).
        Stop::Reset | Stop::Stats | Stop::Pause | Stop::Debug => 1,
        Stop::InsnLimit => {
            eprintln!("rv32vm: instruction limit reached at pc {:#010x}", hart.pc);
            124
        }
        Stop::Fatal { status, message } => {
            if !message.is_empty() {
                eprintln!("{message}");
            }
            // Die of the signal itself, as qemu-riscv32 does, so whoever waits for us (a shell,
            // a guest parent after fork) sees "killed by signal", as on Linux. Returns only
            // for statuses that are not signal deaths.
            signal::die_of_signal(status - 128);
            status
        }
    })
}

/// The Stop for a guest killed by signal `signo` at `pc` (with the faulting address, if any).
pub(crate) fn fatal_signal(signo: i32, pc: u32, addr: Option<u32>) -> Stop {
    let addr = addr.map_or(String::new(), |a| format!(" (addr {a:#010x})"));
    Stop::Fatal {
        status: 128 + signo,
        message: format!(
            "rv32vm: guest killed by {} at pc {pc:#010x}{addr}",
            signal_name(signo)
        ),
    }
}

/// A user-mode process: guest memory, open files and the rest of the kernel-side state. It is
/// the [`Platform`] the engine runs the hart on.
pub struct Process {
    mem: GuestMemory,
    fds: FdTable,
    brk: Brk,
    signals: SignalState,
    /// The program's argv (what /proc/self/cmdline shows).
    args: Vec<Vec<u8>>,
    /// Absolute path of the program (what /proc/self/exe shows).
    exe_path: PathBuf,
    /// The initial stack pointer (`startstack` in /proc/self/stat).
    start_stack: u32,
    /// The auxiliary vector the program started with (/proc/self/auxv).
    saved_auxv: Vec<u8>,
    allow_misaligned: bool,
    /// The process id the guest sees (the host's).
    pid: u32,
    /// Resource limits the guest set (soft, hard); None = the host's.
    rlimits: [Option<(u64, u64)>; 16],
    /// prctl(PR_SET_NAME) name.
    thread_name: [u8; 16],
    /// Code memory changed during the current trap: tell the engine to drop decoded blocks.
    flush_code: bool,
    /// This host process was forked by the guest (its parent is a guest process).
    forked: bool,
    /// The program holds user-level code only ([`loader::user_level_only`]).
    user_level_code: bool,
    /// `--checked-memory`: never let compiled code skip memory checks.
    checked_memory: bool,
    /// What [`Platform::unchecked_memory`] answered last: compiled code depends on it, so
    /// a change flushes it.
    unchecked: bool,
    /// The guest's threads: the running one's registers are in the hart.
    threads: threads::Threads,
    /// While a syscall runs: until when it may keep the host thread waiting before another
    /// guest thread needs the hart (`None`: no other thread could run meanwhile).
    wait_limit: Option<std::time::Instant>,
    /// The guest's POSIX timers (`timer_create`), deleted at `execve`.
    posix_timers: Vec<timers::PosixTimer>,
    /// The guest's signalfd objects.
    signalfds: signalfd::SignalFds,
}

impl Process {
    /// Load `opts.program` and build the initial stack; returns the process and a hart ready to
    /// run it in U-mode.
    pub fn new(opts: &UserOptions) -> Result<(Process, Hart), UserError> {
        let path = &opts.program;
        let read;
        let bytes = match &opts.program_image {
            Some(image) => image,
            None => {
                read = map_program(path)?;
                &read
            }
        };
        let program = path.as_os_str().as_encoded_bytes().to_vec();
        let mut args = vec![program.clone()];
        args.extend(opts.args.iter().map(|a| a.as_bytes().to_vec()));
        let image = load_program(path, bytes, &args, &guest_environment(), &program)?;

        let mut hart = Hart::new();
        image.start(&mut hart);
        let exe_path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let mut process = Process {
            mem: image.mem,
            fds: FdTable::with_std_streams(),
            brk: Brk {
                start: image.brk,
                current: image.brk,
            },
            signals: SignalState::inherited_from_host(),
            args,
            exe_path,
            start_stack: image.sp,
            saved_auxv: image.auxv,
            allow_misaligned: opts.allow_misaligned,
            pid: std::process::id(),
            rlimits: [None; 16],
            thread_name: name_of(path),
            flush_code: false,
            forked: false,
            user_level_code: image.user_level_code,
            checked_memory: opts.checked_memory,
            unchecked: false,
            threads: threads::Threads::new(std::process::id()),
            wait_limit: None,
            posix_timers: Vec::new(),
            signalfds: signalfd::SignalFds::default(),
        };
        host_fault::watch(process.mem.host_range());
        process.unchecked = process.may_skip_memory_checks();
        Ok((process, hart))
    }

    /// The current program break.
    pub fn brk(&self) -> u32 {
        self.brk.current
    }

    /// Whether compiled code may skip memory checks now (see
    /// [`Platform::unchecked_memory`]): a program of user-level code that has no handler for
    /// the signals a bad access raises (so such an access can only kill it, see
    /// [`host_fault`]) and no execute-only page (readable on the host, where the guest may
    /// not read it).
    fn may_skip_memory_checks(&self) -> bool {
        self.user_level_code
            && !self.checked_memory
            && !self.signals.handles_faults()
            && !self.mem.has_execute_only_pages()
    }
}

/// The most bytes a program file may have: more cannot be an RV32 program that fits in the
/// 3 GiB user address space with room to run, and reading it would only exhaust host memory.
pub const PROGRAM_SIZE_LIMIT: u64 = 1 << 30;

/// Map a program file: a regular file of at most [`PROGRAM_SIZE_LIMIT`] bytes (a device,
/// FIFO or huge file is refused before anything is read). Its loader reads the headers and
/// what it loads, never the debug information that is most of a static program's file.
pub fn map_program(path: &Path) -> Result<hostfile::MappedFile, InputError> {
    hostfile::map_bounded("program", path, PROGRAM_SIZE_LIMIT)
}

/// A freshly loaded program: its address space and where to start.
pub(crate) struct LoadedProgram {
    mem: GuestMemory,
    entry: u32,
    sp: u32,
    /// The auxiliary vector as built on the stack (what `/proc/self/auxv` shows).
    auxv: Vec<u8>,
    brk: u32,
    /// [`loader::user_level_only`] of the program.
    user_level_code: bool,
}

impl LoadedProgram {
    /// Reset `hart` to the program's initial state: U-mode at the entry point, every register
    /// zero but sp, FP enabled (FS = Initial), counters readable.
    fn start(&self, hart: &mut Hart) {
        hart.x = [0; 32];
        hart.f = [0; 32];
        hart.fflags = 0;
        hart.frm = 0;
        hart.reservation = None;
        hart.prv = Priv::User;
        hart.pc = self.entry;
        hart.x[2] = self.sp;
        hart.csr.mstatus = (hart.csr.mstatus & !MSTATUS_FS) | MSTATUS_FS_INITIAL;
        // Let U-mode read cycle, time and instret, as qemu-user does.
        hart.csr.mcounteren = 7;
        hart.csr.scounteren = 7;
        hart.tlb.flush();
    }
}

/// Load the ELF program `bytes` (read from `path`) into a new address space with the signal
/// trampoline, a stack holding `args`, `env` and the auxiliary vector.
pub(crate) fn load_program(
    path: &Path,
    bytes: &[u8],
    args: &[Vec<u8>],
    env: &[Vec<u8>],
    execfn: &[u8],
) -> Result<LoadedProgram, UserError> {
    let elf = ElfFile::parse_without_symbols(bytes).map_err(|source| UserError::Elf {
        path: path.to_path_buf(),
        source,
    })?;
    let mut mem = GuestMemory::new().map_err(UserError::Reserve)?;
    let user_level_code = loader::user_level_only(&elf);
    let file = Rc::new(program_file_id(path));
    let image =
        loader::load(&mut mem, &elf, &file, PIE_BASE, MMAP_TOP).map_err(|e| UserError::Layout {
            path: path.to_path_buf(),
            vaddr: e.vaddr,
        })?;

    mem.map(SIGRETURN_TRAMPOLINE, 4096, perm::R | perm::X);
    // li a7, 139 (rt_sigreturn); ecall
    let trampoline = [0x08b0_0893u32, 0x0000_0073];
    let code: Vec<u8> = trampoline.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.write_initial(SIGRETURN_TRAMPOLINE, &code);

    let stack_bottom = STACK_TOP - STACK_SIZE;
    mem.map_as(
        stack_bottom,
        STACK_SIZE as u64,
        perm::R | perm::W,
        Mapping::special("[stack]"),
    );
    let mut random = [0u8; 16];
    if syscall::fill_random(&mut random).is_err() {
        tracing::warn!("no host randomness for AT_RANDOM; using zeros");
    }
    let ids = syscall::host_ids();
    let auxv = [
        (at::PHDR, image.phdr),
        (at::PHENT, elf.phentsize as u32),
        (at::PHNUM, elf.phnum as u32),
        (at::PAGESZ, 4096),
        (at::BASE, 0),
        (at::FLAGS, 0),
        (at::ENTRY, image.entry),
        (at::UID, ids[0]),
        (at::EUID, ids[1]),
        (at::GID, ids[2]),
        (at::EGID, ids[3]),
        (at::SECURE, 0),
        (at::HWCAP, stack::HWCAP_IMAFDC),
        (at::CLKTCK, 100),
    ];
    let contents = StackContents {
        args,
        env,
        execfn,
        auxv: &auxv,
        random,
    };
    // Like Linux, argv and envp may use at most a quarter of the stack.
    let sp = stack::build(&mut mem, STACK_TOP, STACK_TOP - STACK_SIZE / 4, &contents)
        .map_err(|_| UserError::ArgumentsTooLong)?;
    let auxv = stack::read_auxv(&mem, sp).unwrap_or_default();
    Ok(LoadedProgram {
        mem,
        entry: image.entry,
        sp,
        auxv,
        brk: image.end,
        user_level_code,
    })
}

/// How /proc/self/maps names the program file: its absolute path, device and inode.
fn program_file_id(path: &Path) -> FileId {
    use std::os::unix::fs::MetadataExt;
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let (dev, inode) = std::fs::metadata(path).map_or((0, 0), |m| (m.dev(), m.ino()));
    FileId {
        path: absolute.as_os_str().as_encoded_bytes().to_vec(),
        dev,
        inode,
    }
}

/// The first 15 bytes of the program's file name (the initial comm / PR_GET_NAME).
fn name_of(path: &Path) -> [u8; 16] {
    let mut name = [0u8; 16];
    if let Some(f) = path.file_name() {
        let b = f.as_encoded_bytes();
        let n = b.len().min(15);
        name[..n].copy_from_slice(&b[..n]);
    }
    name
}

/// The guest's environment: the host's, as qemu-user passes it.
fn guest_environment() -> Vec<Vec<u8>> {
    std::env::vars_os()
        .map(|(k, v)| {
            let mut e = k.as_encoded_bytes().to_vec();
            e.push(b'=');
            e.extend_from_slice(v.as_encoded_bytes());
            e
        })
        .collect()
}

impl Platform for Process {
    const PREDICTS_INDIRECT_JUMPS: bool = true;

    #[inline]
    fn translate(&mut self, _hart: &mut Hart, va: u32, access: Access) -> Result<Target, Trap> {
        let (need, cause) = match access {
            Access::Read => (perm::R, Exception::LoadPageFault),
            Access::Write => (perm::W, Exception::StorePageFault),
            Access::Execute => (perm::X, Exception::InsnPageFault),
        };
        if self.mem.page_perm(va) & need != 0 {
            Ok(Target::Ram {
                host: self.mem.host_ptr(va),
                cacheable: true,
            })
        } else {
            Err(Trap::new(cause, va))
        }
    }

    fn mmio_read(&mut self, _hart: &mut Hart, paddr: u32, _size: u32) -> Result<u64, Trap> {
        // translate() never returns Mmio in user mode.
        Err(Trap::new(Exception::LoadAccessFault, paddr))
    }

    fn mmio_write(
        &mut self,
        _hart: &mut Hart,
        paddr: u32,
        _size: u32,
        _value: u64,
    ) -> Result<(), Trap> {
        Err(Trap::new(Exception::StoreAccessFault, paddr))
    }

    fn handle_trap(&mut self, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
        use Exception::*;
        let pc = hart.pc;
        match trap.exception() {
            Some(EcallFromU) => {
                self.flush_code = false;
                self.syscall(hart)?;
                // A new program, a fault handler, an execute-only mapping: compiled code
                // made under the other answer must go.
                let unchecked = self.may_skip_memory_checks();
                if unchecked != self.unchecked {
                    self.unchecked = unchecked;
                    self.flush_code = true;
                }
                let flush = std::mem::take(&mut self.flush_code) | self.mem.take_code_written();
                Ok(if flush {
                    Resume::FlushCode
                } else {
                    Resume::Continue
                })
            }
            Some(LoadMisaligned | StoreMisaligned) => misaligned::emulate(self, hart, trap),
            Some(
                LoadPageFault | StorePageFault | InsnPageFault | LoadAccessFault | StoreAccessFault
                | InsnAccessFault,
            ) => {
                let info = SigInfo {
                    code: signal::segv_code(self.mem.page_perm(trap.tval)),
                    word0: trap.tval,
                    word1: 0,
                    word2: 0,
                };
                let fatal = fatal_signal(sig::SIGSEGV, pc, Some(trap.tval));
                self.fault_signal(hart, sig::SIGSEGV, info, fatal)
                    .map(|()| Resume::Continue)
            }
            Some(InsnMisaligned) => {
                let info = SigInfo {
                    code: code::BUS_ADRALN,
                    word0: trap.tval,
                    word1: 0,
                    word2: 0,
                };
                let fatal = fatal_signal(sig::SIGBUS, pc, Some(trap.tval));
                self.fault_signal(hart, sig::SIGBUS, info, fatal)
                    .map(|()| Resume::Continue)
            }
            Some(Breakpoint) => {
                let info = SigInfo {
                    code: code::TRAP_BRKPT,
                    word0: pc,
                    word1: 0,
                    word2: 0,
                };
                let fatal = fatal_signal(sig::SIGTRAP, pc, None);
                self.fault_signal(hart, sig::SIGTRAP, info, fatal)
                    .map(|()| Resume::Continue)
            }
            Some(IllegalInsn) => {
                let mut fatal = fatal_signal(sig::SIGILL, pc, None);
                if let Stop::Fatal { message, .. } = &mut fatal {
                    message.push_str(&format!(" (insn {:#010x})", trap.tval));
                }
                let info = SigInfo {
                    code: code::ILL_ILLOPC,
                    word0: pc,
                    word1: 0,
                    word2: 0,
                };
                self.fault_signal(hart, sig::SIGILL, info, fatal)
                    .map(|()| Resume::Continue)
            }
            _ => {
                tracing::warn!(
                    cause = trap.cause,
                    tval = trap.tval,
                    "unexpected trap in user mode"
                );
                Err(fatal_signal(sig::SIGILL, pc, None))
            }
        }
    }

    /// Another guest thread gets the hart when the running one has used its time slice
    /// (one compare while there is one thread); host signals for guest handlers are delivered
    /// here (one relaxed load when none).
    #[inline(always)]
    fn between_blocks(&mut self, hart: &mut Hart) -> Option<Stop> {
        if self.between_blocks_quiet(hart) {
            return None;
        }
        if hart.instret >= self.threads.slice_end && self.threads.preempt(hart, &mut self.signals) {
            // The thread that runs now may have signals waiting for it.
            return self.deliver_pending(hart).err();
        }
        if !signal::host_signal_waiting() {
            return None;
        }
        self.deliver_pending(hart).err()
    }

    /// Nothing to do: the thread's time slice goes on and no host signal waits.
    #[inline(always)]
    fn between_blocks_quiet(&mut self, hart: &mut Hart) -> bool {
        hart.instret < self.threads.slice_end && !signal::host_signal_waiting()
    }

    fn allow_misaligned(&self) -> bool {
        self.allow_misaligned
    }

    fn debug_read(&mut self, _hart: &Hart, va: u32, buf: &mut [u8]) -> usize {
        self.mem.read_forced(va, buf)
    }

    fn debug_write(&mut self, _hart: &Hart, va: u32, data: &[u8]) -> usize {
        self.mem.write_forced(va, data)
    }

    fn flat_host_base(&self) -> Option<usize> {
        // `translate` maps every page through `host_ptr`, which is `base + va`.
        Some(self.mem.host_ptr(0) as usize)
    }

    fn unchecked_memory(&self) -> bool {
        self.unchecked
    }
}

#[cfg(test)]
mod tests;
