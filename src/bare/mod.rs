//! Bare-metal runner (`rv32vm run --bare`): an ELF is loaded at its physical addresses and runs
//! in M-mode from its entry point on a plain RAM region, with no devices. It talks to the host
//! in one of two ways:
//! - HTIF, through its `tohost` word (and `fromhost` for replies), as under Spike: exit
//!   (riscv-tests convention: 1 = pass, `(n << 1) | 1` = failure of test n), the syscall proxy's
//!   `write`, `read` and `exit` (what riscv-tests' benchmarks print with), and console output.
//! - Semihosting ([`crate::machine::semihosting`]), as under `qemu-system-riscv32 -semihosting`.
//!
//! `--signature` dumps the words between `begin_signature` and `end_signature` as
//! riscv-arch-test/RISCOF expect.
//!
//! The privileged architecture is the machine's (`rv32vm boot`): the same hart, CSRs, traps and
//! Sv32 translation (`Hart::translate` over guest RAM: A/D updates, SUM, MXR, MPRV), so a
//! program may turn paging on and run S- and U-mode code (the riscv-tests `-v` layout). The two
//! platforms differ only in their devices: here there are none, and the HTIF mailbox page is
//! watched at its physical address, whatever virtual address a store uses.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::cpu::mmu::access_fault;
use crate::cpu::tlb::PAGE_SIZE;
use crate::cpu::{Access, Exception, Hart, Trap};
use crate::elf::{ElfError, ElfFile};
use crate::exec::{Engine, EngineConfig, Platform, Resume, Stop, Target};
use crate::hostfile::InputError;
use crate::machine::ram::GuestRam;
use crate::machine::semihosting::{self, Console as _, HostConsole, Stream};

/// Guest physical base address of RAM (as on QEMU virt and in riscv-tests).
pub const RAM_BASE: u32 = 0x8000_0000;
/// Default RAM size for bare-metal programs.
pub const DEFAULT_RAM_SIZE: u32 = 128 << 20;
/// Largest ELF file read: its loadable part must fit in RAM, and this leaves room for symbols
/// and debug information while refusing huge (or endless) inputs before reading them.
pub const MAX_ELF_SIZE: u64 = 256 << 20;
/// Size of the HTIF `tohost` word (64 bits, also on RV32).
const TOHOST_SIZE: u64 = 8;

/// Consecutive traps without a retired instruction after which the program is considered stuck
/// (for instance a fault in the trap handler itself).
const TRAP_LOOP_LIMIT: u32 = 64;

/// Why a bare-metal program could not run or report a result.
#[derive(Debug, thiserror::Error)]
pub enum BareError {
    /// The ELF file could not be read, or is not a regular file of a sensible size.
    #[error(transparent)]
    Read(#[from] InputError),
    /// The ELF file is malformed or not a RISC-V 32-bit executable.
    #[error("{path}: {source}")]
    Elf { path: PathBuf, source: ElfError },
    /// A loadable segment lies outside RAM.
    #[error("{path}: segment at {paddr:#010x}..{end:#010x} lies outside RAM ({base:#010x}..{limit:#010x})")]
    OutsideRam {
        path: PathBuf,
        paddr: u32,
        end: u64,
        base: u32,
        limit: u64,
    },
    /// The program has no `tohost` symbol and makes no semihosting call, so it could never
    /// report a result.
    #[error(
        "{0}: no `tohost` symbol and no semihosting call: a bare-metal program must report its \
         result through HTIF tohost or semihosting"
    )]
    NoTohost(PathBuf),
    /// The program asked for HTIF console input after the end of stdin: no reply could ever
    /// come (Spike would wait forever).
    #[error("{0}: the program reads the HTIF console after the end of its input")]
    ConsoleInputEnded(PathBuf),
    /// Host memory for guest RAM could not be allocated.
    #[error("cannot allocate {0} bytes of guest RAM")]
    NoMemory(u32),
    /// The program wrote an HTIF command other than "exit" to `tohost` (a syscall-proxy
    /// request, a console write, ...), which the bare-metal harness does not implement.
    #[error(
        "{path}: the program wrote tohost = {value:#018x}, an HTIF request this harness does not \
         implement: HTIF device {device} ({device_name}), command {command}, payload \
         {payload:#x}; `run --bare` implements exit (tohost = (code << 1) | 1), the syscall \
         proxy and the console (device 1, commands 0 and 1)"
    )]
    HtifCommand {
        path: PathBuf,
        value: u64,
        device: u8,
        device_name: &'static str,
        command: u8,
        payload: u64,
    },
    /// `--signature` was given, but the program lacks `begin_signature` or `end_signature`.
    #[error("{0}: no begin_signature/end_signature symbols for --signature")]
    NoSignatureSymbols(PathBuf),
    /// The signature symbols are the wrong way round.
    #[error(
        "{path}: reversed signature symbols: end_signature ({end:#010x}) lies before \
         begin_signature ({begin:#010x})"
    )]
    ReversedSignature { path: PathBuf, begin: u32, end: u32 },
    /// The signature region is not all RAM.
    #[error(
        "{path}: the signature region {begin:#010x}..{end:#010x} lies outside RAM \
         ({base:#010x}..{limit:#010x})"
    )]
    SignatureOutsideRam {
        path: PathBuf,
        begin: u32,
        end: u32,
        base: u32,
        limit: u64,
    },
    /// The GDB stub cannot start (`--gdb`).
    #[error(transparent)]
    Gdb(#[from] crate::gdb::GdbError),
    /// `--signature` names the program itself.
    #[error("--signature {0} is the program itself: it would be overwritten")]
    SignatureIsProgram(PathBuf),
    /// The signature file could not be written.
    #[error("cannot write signature {path}: {source}")]
    Signature {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What the program asked for through `tohost`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HtifRequest {
    /// Device 0, command 0, an odd payload: exit with `payload >> 1` (0: passed; else the
    /// number of the failed test, up to 47 bits).
    Exit(u64),
    /// Device 0, command 0, an even payload: the physical address of a syscall-proxy block
    /// (eight 64-bit words: the Linux syscall number, then its arguments; the result replaces
    /// the number).
    Syscall(u64),
    /// Device 1 (console), command 0: read a byte.
    ConsoleRead,
    /// Device 1 (console), command 1: write the byte.
    ConsoleWrite(u8),
    /// Anything else (other devices and commands): the whole 64-bit value.
    Unsupported(u64),
}

impl HtifRequest {
    /// Decode a nonzero 64-bit `tohost` value: device in bits 63:56, command in 55:48, payload
    /// in 47:0.
    fn decode(value: u64) -> HtifRequest {
        let payload = value & ((1 << 48) - 1);
        match value >> 48 {
            0 if payload & 1 == 1 => HtifRequest::Exit(payload >> 1),
            0 => HtifRequest::Syscall(payload),
            0x0100 => HtifRequest::ConsoleRead,
            0x0101 => HtifRequest::ConsoleWrite(payload as u8),
            _ => HtifRequest::Unsupported(value),
        }
    }
}

/// The syscall proxy's calls (Linux numbers, as riscv-pk and Spike's front end use them).
mod proxy {
    pub const READ: u64 = 63;
    pub const WRITE: u64 = 64;
    pub const EXIT: u64 = 93;
    pub const EXIT_GROUP: u64 = 94;
}

/// The error for an unsupported HTIF request `value` written by the program at `path`.
fn htif_command_error(path: &Path, value: u64) -> BareError {
    let device = (value >> 56) as u8;
    BareError::HtifCommand {
        path: path.to_path_buf(),
        value,
        device,
        device_name: match device {
            0 => "syscall proxy",
            1 => "console",
            _ => "unknown",
        },
        command: (value >> 48) as u8,
        payload: value & ((1 << 48) - 1),
    }
}

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct BareOptions {
    pub program: PathBuf,
    /// Arguments after the program: with the program's name, the command line a semihosting
    /// program reads (`SYS_GET_CMDLINE`).
    pub args: Vec<String>,
    pub signature: Option<PathBuf>,
    pub max_insns: Option<u64>,
    pub engine: EngineConfig,
    pub allow_misaligned: bool,
    pub stats: bool,
    /// Serve gdb (`--gdb`).
    pub gdb: Option<crate::gdb::GdbOptions>,
}

/// The bare-metal platform: RAM, HTIF, semihosting, and trap delivery to the program's
/// handlers.
struct BareMachine {
    ram: GuestRam,
    /// Physical address of the 64-bit `tohost` word, if the program has one.
    tohost: Option<u32>,
    /// Physical address of the 64-bit `fromhost` word, where HTIF replies go.
    fromhost: Option<u32>,
    semihosting: semihosting::Semihosting,
    /// The exit status a semihosting call asked for.
    semihosting_exit: Option<i32>,
    /// A store reached `tohost`: decode it between blocks, once both halves of a 64-bit value
    /// written with two word stores (low word first, as RV32 code does) are in place.
    tohost_written: bool,
    /// The request that ends the run.
    request: Option<HtifRequest>,
    allow_misaligned: bool,
    traps_without_progress: u32,
    instret_at_last_trap: u64,
}

impl BareMachine {
    /// Whether physical address `pa` lies in the page holding `tohost` (whose stores are
    /// watched, so the page is never given to the TLB for loads and stores).
    fn htif_page(&self, pa: u64) -> bool {
        self.tohost
            .is_some_and(|t| pa / PAGE_SIZE as u64 == t as u64 / PAGE_SIZE as u64)
    }

    /// Whether a store of `size` bytes at `paddr` overlaps the `tohost` word.
    fn touches_tohost(&self, paddr: u32, size: u32) -> bool {
        let Some(tohost) = self.tohost else {
            return false;
        };
        let (start, end) = (paddr as u64, paddr as u64 + size as u64);
        let tohost = tohost as u64;
        start < tohost + TOHOST_SIZE && tohost < end
    }

    /// The 64-bit little-endian value at physical `pa` (0 outside RAM).
    fn read_u64(&self, pa: u64) -> u64 {
        self.ram.bytes(pa, 8).map_or(0, |b| {
            b.iter().rev().fold(0u64, |acc, &x| acc << 8 | x as u64)
        })
    }

    /// Write `data` at physical `pa` on the host's behalf; code in the pages it changes is
    /// dropped. False if it is not all RAM.
    fn write_phys(&mut self, hart: &mut Hart, pa: u64, data: &[u8]) -> bool {
        if !self.ram.write(pa, data) {
            return false;
        }
        let end = pa + data.len() as u64;
        let mut page = pa;
        while page < end {
            if let Some(host) = self.ram.host(page, 1) {
                hart.code_pages.note_store(host as usize);
            }
            page = (page / PAGE_SIZE as u64 + 1) * PAGE_SIZE as u64;
        }
        true
    }

    fn write_u64(&mut self, hart: &mut Hart, pa: u64, value: u64) {
        self.write_phys(hart, pa, &value.to_le_bytes());
    }

    /// Finish an HTIF request that the host answers: `fromhost` gets `reply` (device and
    /// command of the request, then the payload), and `tohost` is cleared for the next one.
    fn htif_reply(&mut self, hart: &mut Hart, request: u64, payload: u64) {
        if let Some(fromhost) = self.fromhost {
            self.write_u64(hart, fromhost as u64, (request >> 48 << 48) | payload);
        }
        if let Some(tohost) = self.tohost {
            self.write_u64(hart, tohost as u64, 0);
        }
    }

    /// Run the syscall-proxy call whose block is at physical `block`; `Some(status)` if it
    /// was an exit.
    fn proxy_syscall(&mut self, hart: &mut Hart, block: u64) -> Option<i32> {
        let arg = |i: u64| self.read_u64(block + 8 * i);
        let (number, fd, buf, len) = (arg(0), arg(1), arg(2), arg(3));
        let result: i64 = match number {
            proxy::EXIT | proxy::EXIT_GROUP => return Some(fd as i32),
            proxy::WRITE => match (fd, self.ram.bytes(buf, len)) {
                (1 | 2, None) => -(libc::EFAULT as i64),
                (1, Some(data)) => {
                    let _ = HostConsole.write(Stream::Stdout, data);
                    len as i64
                }
                (2, Some(data)) => {
                    let _ = HostConsole.write(Stream::Stderr, data);
                    len as i64
                }
                _ => -(libc::EBADF as i64),
            },
            proxy::READ if fd == 0 => {
                let mut data = vec![0u8; len.min(1 << 20) as usize];
                match HostConsole.read(&mut data) {
                    Ok(n) if self.write_phys(hart, buf, &data[..n]) => n as i64,
                    Ok(_) => -(libc::EFAULT as i64),
                    Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                }
            }
            proxy::READ => -(libc::EBADF as i64),
            _ => -(libc::ENOSYS as i64),
        };
        self.write_u64(hart, block, result as u64);
        None
    }
}

impl Platform for BareMachine {
    fn translate(&mut self, hart: &mut Hart, va: u32, access: Access) -> Result<Target, Trap> {
        // The machine's translation (satp, MPRV, A/D, SUM, MXR) over this platform's RAM.
        let t = hart.translate(&mut self.ram, va, access)?;
        if access != Access::Execute && self.htif_page(t.pa) {
            return Ok(Target::Mmio { paddr: t.pa as u32 });
        }
        match self.ram.host(t.pa, 1) {
            Some(host) => Ok(Target::Ram {
                host,
                cacheable: t.page_cacheable,
            }),
            None => Err(access_fault(access, va)),
        }
    }

    fn mmio_read(&mut self, _hart: &mut Hart, paddr: u32, size: u32) -> Result<u64, Trap> {
        // The HTIF page is ordinary RAM whose writes we watch.
        let bytes = self
            .ram
            .bytes(paddr as u64, size as u64)
            .ok_or(Trap::new(Exception::LoadAccessFault, paddr))?;
        Ok(bytes.iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64))
    }

    fn mmio_write(
        &mut self,
        _hart: &mut Hart,
        paddr: u32,
        size: u32,
        value: u64,
    ) -> Result<(), Trap> {
        let bytes = value.to_le_bytes();
        let len = (size as usize).min(bytes.len());
        if !self.ram.write(paddr as u64, &bytes[..len]) {
            return Err(Trap::new(Exception::StoreAccessFault, paddr));
        }
        if self.touches_tohost(paddr, size) {
            self.tohost_written = true;
        }
        Ok(())
    }

    fn handle_trap(&mut self, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
        if semihosting::is_call(&mut self.ram, hart, trap) {
            return match semihosting::serve(&mut self.semihosting, &mut self.ram, hart) {
                semihosting::Outcome::Return(_) => Ok(Resume::Continue),
                semihosting::Outcome::Exit(status) => {
                    self.semihosting_exit = Some(status);
                    Err(Stop::Exit(status))
                }
            };
        }
        if hart.instret == self.instret_at_last_trap {
            self.traps_without_progress += 1;
            if self.traps_without_progress >= TRAP_LOOP_LIMIT {
                return Err(Stop::Fatal {
                    status: 1,
                    message: format!(
                        "stuck in a trap loop: cause {} at pc {:#010x} (tval {:#010x}) with no instruction retiring",
                        trap.cause, hart.pc, trap.tval
                    ),
                });
            }
        } else {
            self.traps_without_progress = 0;
            self.instret_at_last_trap = hart.instret;
        }
        hart.take_trap(trap);
        Ok(Resume::Continue)
    }

    #[inline(always)]
    fn between_blocks(&mut self, hart: &mut Hart) -> Option<Stop> {
        if self.tohost_written {
            self.tohost_written = false;
            let value = self.tohost.map_or(0, |t| self.read_u64(t as u64));
            if value != 0 {
                let request = match HtifRequest::decode(value) {
                    HtifRequest::Syscall(block) => match self.proxy_syscall(hart, block) {
                        Some(status) => HtifRequest::Exit(status as u32 as u64),
                        None => {
                            self.htif_reply(hart, value, 1);
                            return None;
                        }
                    },
                    HtifRequest::ConsoleWrite(byte) => {
                        let _ = HostConsole.write(Stream::Stdout, &[byte]);
                        self.htif_reply(hart, value, 0x100 | byte as u64);
                        return None;
                    }
                    // As Spike's console: the reply is 0x100 | the byte, once there is one.
                    // Spike waits for input forever; at the end of ours the program could
                    // never go on, so the run ends instead.
                    HtifRequest::ConsoleRead => {
                        let mut byte = [0u8];
                        if let Ok(1) = HostConsole.read(&mut byte) {
                            self.htif_reply(hart, value, 0x100 | byte[0] as u64);
                            return None;
                        }
                        HtifRequest::ConsoleRead
                    }
                    request => request,
                };
                self.request = Some(request);
                return Some(match request {
                    // Nonzero stays nonzero: a failed test never reads as a pass.
                    HtifRequest::Exit(n) => Stop::Exit(n.min(i32::MAX as u64) as i32),
                    // `run` turns this into BareError::ConsoleInputEnded.
                    HtifRequest::ConsoleRead => Stop::Fatal {
                        status: 1,
                        message: "HTIF console input ended".into(),
                    },
                    // `run` turns this into BareError::HtifCommand.
                    _ => Stop::Fatal {
                        status: 1,
                        message: format!("unsupported HTIF request {value:#018x}"),
                    },
                });
            }
        }
        // No devices drive mip here, but software may set SSIP/STIP/SEIP from M-mode.
        if hart.csr.mip & hart.csr.mie != 0 {
            if let Some(irq) = hart.pending_interrupt() {
                hart.take_trap(irq);
            }
        }
        None
    }

    fn allow_misaligned(&self) -> bool {
        self.allow_misaligned
    }

    fn debug_read(&mut self, hart: &Hart, va: u32, buf: &mut [u8]) -> usize {
        self.ram.debug_read(hart, va, buf)
    }

    fn debug_write(&mut self, hart: &Hart, va: u32, data: &[u8]) -> usize {
        self.ram.debug_write(hart, va, data)
    }

    /// Nothing but the hart writes RAM here (the HTIF page holds no code).
    fn note_external_writes(&mut self, _hart: &mut Hart) -> bool {
        true
    }
}

/// Whether a program file's bytes are a bare-metal program that talks HTIF rather than a Linux
/// program: a statically linked ELF with a `tohost` symbol (riscv-tests, riscv-arch-test,
/// Spike's conventions). As a Linux program it would die at its first machine-mode CSR access,
/// so `rv32vm run` runs it as `run --bare` does. Anything not such an ELF is not one (the
/// user-mode loader then reports it).
pub fn is_htif_image(bytes: &[u8]) -> bool {
    ElfFile::parse(bytes).is_ok_and(|elf| elf.symbol("tohost").is_some())
}

/// Load and run a bare-metal program; returns the process exit status.
pub fn run(opts: &BareOptions) -> Result<i32, BareError> {
    let path = &opts.program;
    let bytes = crate::hostfile::read_bounded("program", path, MAX_ELF_SIZE)?;
    let elf = ElfFile::parse(&bytes).map_err(|source| BareError::Elf {
        path: path.clone(),
        source,
    })?;
    let tohost = elf.symbol("tohost");
    let semihosts = elf
        .segments
        .iter()
        .any(|seg| seg.executable && semihosting::contains_call(&seg.data));
    if tohost.is_none() && !semihosts {
        return Err(BareError::NoTohost(path.clone()));
    }
    // Refuse bad signature symbols before running, not after.
    let signature = match &opts.signature {
        Some(out) => {
            let identity = crate::hostfile::file_identity;
            if out == path || identity(out).is_some_and(|id| identity(path) == Some(id)) {
                return Err(BareError::SignatureIsProgram(out.clone()));
            }
            Some((signature_range(&elf, path)?, out))
        }
        None => None,
    };
    let mut ram = GuestRam::new(RAM_BASE, DEFAULT_RAM_SIZE)
        .map_err(|_| BareError::NoMemory(DEFAULT_RAM_SIZE))?;
    // Segments go to their physical addresses, as Spike and QEMU load them: a program whose
    // initialised data is linked to run in RAM but stored after its code copies it over.
    let mut image_end = RAM_BASE;
    for seg in &elf.segments {
        let fits = ram.host(seg.paddr as u64, seg.memsz as u64).is_some();
        if !fits || !ram.write(seg.paddr as u64, &seg.data) {
            return Err(BareError::OutsideRam {
                path: path.clone(),
                paddr: seg.paddr,
                end: seg.paddr as u64 + seg.memsz as u64,
                base: RAM_BASE,
                limit: RAM_BASE as u64 + DEFAULT_RAM_SIZE as u64,
            });
        }
        image_end = image_end.max(seg.paddr + seg.memsz);
    }
    let cmdline = std::iter::once(path.to_string_lossy().into_owned())
        .chain(opts.args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let heap = semihosting::HeapInfo {
        heap_base: image_end,
        heap_limit: RAM_BASE + DEFAULT_RAM_SIZE,
    };
    let machine = BareMachine {
        ram,
        tohost,
        fromhost: elf.symbol("fromhost"),
        semihosting: semihosting::Semihosting::new(cmdline, heap),
        semihosting_exit: None,
        tohost_written: false,
        request: None,
        allow_misaligned: opts.allow_misaligned,
        traps_without_progress: 0,
        instret_at_last_trap: u64::MAX,
    };
    let mut hart = Hart::new();
    hart.pc = elf.entry;
    let mut gdb = opts
        .gdb
        .as_ref()
        .map(crate::gdb::GdbServer::listen)
        .transpose()?;
    let mut engine = Engine::new(opts.engine.clone());
    let (machine, stop) = crate::gdb::run(
        gdb.as_mut(),
        &mut engine,
        &mut hart,
        machine,
        opts.max_insns,
    );
    if opts.stats {
        crate::report_stats(&engine, &hart);
    }
    let written = signature.map(|(range, out)| write_signature(&machine, range, out));
    match machine.request {
        Some(HtifRequest::Unsupported(value)) => return Err(htif_command_error(path, value)),
        Some(HtifRequest::ConsoleRead) => return Err(BareError::ConsoleInputEnded(path.clone())),
        _ => {}
    }
    if let Some(written) = written {
        written?;
    }
    if let Some(status) = machine.semihosting_exit {
        // As the host process's exit status, like QEMU's.
        return Ok(status & 0xff);
    }
    Ok(match stop {
        Stop::Exit(0) => 0,
        Stop::Exit(code) => {
            let n = match machine.request {
                Some(HtifRequest::Exit(n)) => n,
                _ => code as u64,
            };
            eprintln!("rv32vm: {}: test {n} failed", path.display());
            // The process status of a failure is never 0 (statuses stop at 255).
            n.clamp(1, 255) as i32
        }
        Stop::Reset => {
            eprintln!("rv32vm: {}: the program requested a reset", path.display());
            1
        }
        // Bare metal has no console escapes; the debugger consumes its own stops.
        Stop::Stats | Stop::Pause | Stop::Debug => 1,
        Stop::InsnLimit => {
            eprintln!(
                "rv32vm: {}: instruction limit reached at pc {:#010x} without a result",
                path.display(),
                hart.pc
            );
            124
        }
        Stop::Fatal { status, message } => {
            eprintln!("rv32vm: {}: {message}", path.display());
            status
        }
    })
}

/// The signature region `[begin, end)` of `program`, checked: both symbols exist, in order, in
/// RAM.
fn signature_range(elf: &ElfFile, program: &Path) -> Result<(u32, u32), BareError> {
    let (Some(begin), Some(end)) = (elf.symbol("begin_signature"), elf.symbol("end_signature"))
    else {
        return Err(BareError::NoSignatureSymbols(program.to_path_buf()));
    };
    if end < begin {
        return Err(BareError::ReversedSignature {
            path: program.to_path_buf(),
            begin,
            end,
        });
    }
    let in_ram = begin >= RAM_BASE && end as u64 <= RAM_BASE as u64 + DEFAULT_RAM_SIZE as u64;
    if !in_ram {
        return Err(BareError::SignatureOutsideRam {
            path: program.to_path_buf(),
            begin,
            end,
            base: RAM_BASE,
            limit: RAM_BASE as u64 + DEFAULT_RAM_SIZE as u64,
        });
    }
    Ok((begin, end))
}

/// Write the signature region `[begin, end)` (see [`signature_range`]), one 8-hex-digit
/// little-endian word per line.
fn write_signature(
    machine: &BareMachine,
    (begin, end): (u32, u32),
    out: &Path,
) -> Result<(), BareError> {
    // `signature_range` checked that the region is RAM.
    let bytes = machine
        .ram
        .bytes(begin as u64, (end - begin) as u64)
        .unwrap_or_default();
    let mut text = String::new();
    for w in bytes.chunks(4) {
        let mut word = [0u8; 4];
        word[..w.len()].copy_from_slice(w);
        let _ = writeln!(text, "{:08x}", u32::from_le_bytes(word));
    }
    std::fs::write(out, text).map_err(|source| BareError::Signature {
        path: out.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn htif_exit_and_other_requests_decode() {
        assert_eq!(HtifRequest::decode(1), HtifRequest::Exit(0));
        assert_eq!(HtifRequest::decode(0x7 << 1 | 1), HtifRequest::Exit(7));
        // Test numbers past 32 bits are kept whole (they once wrapped to 0, a pass).
        assert_eq!(
            HtifRequest::decode(0x0000_0002_0000_0001),
            HtifRequest::Exit(1 << 32)
        );
        // A syscall-proxy pointer (even payload) and a console write are not exits.
        assert_eq!(
            HtifRequest::decode(0x8000_2000),
            HtifRequest::Syscall(0x8000_2000)
        );
        assert_eq!(
            HtifRequest::decode(0x0101_0000_0000_0041),
            HtifRequest::ConsoleWrite(b'A')
        );
        assert_eq!(
            HtifRequest::decode(0x0100_0000_0000_0000),
            HtifRequest::ConsoleRead
        );
        // Other console commands and other devices are not implemented.
        let other = 0x0102_0000_0000_0000;
        assert_eq!(HtifRequest::decode(other), HtifRequest::Unsupported(other));
        assert_eq!(
            HtifRequest::decode(0x0201_0000_0000_0001),
            HtifRequest::Unsupported(0x0201_0000_0000_0001)
        );
        let err = htif_command_error(Path::new("p.elf"), other).to_string();
        assert!(err.contains("tohost = 0x0102000000000000"), "{err}");
        assert!(err.contains("device 1 (console), command 2"), "{err}");
    }

    #[test]
    fn stores_overlapping_tohost_are_watched() {
        let machine = BareMachine {
            ram: GuestRam::new(RAM_BASE, 0x4000).unwrap(),
            tohost: Some(RAM_BASE + 0x1000),
            fromhost: None,
            semihosting: semihosting::Semihosting::new(
                String::new(),
                semihosting::HeapInfo {
                    heap_base: RAM_BASE,
                    heap_limit: RAM_BASE,
                },
            ),
            semihosting_exit: None,
            tohost_written: false,
            request: None,
            allow_misaligned: false,
            traps_without_progress: 0,
            instret_at_last_trap: 0,
        };
        let t = RAM_BASE + 0x1000;
        assert!(machine.touches_tohost(t, 4));
        assert!(machine.touches_tohost(t + 4, 4), "the high word");
        assert!(
            machine.touches_tohost(t - 4, 8),
            "an 8-byte store over the low word"
        );
        assert!(!machine.touches_tohost(t + 8, 4), "fromhost is not tohost");
        assert!(!machine.touches_tohost(t - 4, 4));
        assert!(machine.htif_page(t as u64 + 0xfff));
        assert!(!machine.htif_page(t as u64 + 0x1000));
    }
}
