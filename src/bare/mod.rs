//! Bare-metal runner (`rv32vm run --bare`): an ELF runs in M-mode from its entry point on a
//! plain RAM region, with no devices. It ends when the program writes the HTIF `tohost` word
//! (riscv-tests convention: 1 = pass, `(n << 1) | 1` = failure of test n). `--signature` dumps
//! the words between `begin_signature` and `end_signature` as riscv-arch-test/RISCOF expect.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::cpu::tlb::PAGE_MASK;
use crate::cpu::{Access, Exception, Hart, Trap};
use crate::elf::{ElfError, ElfFile};
use crate::exec::{Engine, EngineConfig, Platform, Resume, Stop, Target};
use crate::machine::ram::GuestRam;

/// Guest physical base address of RAM (as on QEMU virt and in riscv-tests).
pub const RAM_BASE: u32 = 0x8000_0000;
/// Default RAM size for bare-metal programs.
pub const DEFAULT_RAM_SIZE: u32 = 128 << 20;

/// Consecutive traps without a retired instruction after which the program is considered stuck
/// (for instance a fault in the trap handler itself).
const TRAP_LOOP_LIMIT: u32 = 64;

/// Errors before the program runs.
#[derive(Debug, thiserror::Error)]
pub enum BareError {
    /// The ELF file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The ELF file is malformed or not a RISC-V 32-bit executable.
    #[error("{path}: {source}")]
    Elf { path: PathBuf, source: ElfError },
    /// A loadable segment lies outside RAM.
    #[error("{path}: segment at {vaddr:#010x}..{end:#010x} lies outside RAM ({base:#010x}..{limit:#010x})")]
    OutsideRam {
        path: PathBuf,
        vaddr: u32,
        end: u64,
        base: u32,
        limit: u64,
    },
    /// The program has no `tohost` symbol, so it could never report a result.
    #[error(
        "{0}: no `tohost` symbol: a bare-metal program must report its result through HTIF tohost"
    )]
    NoTohost(PathBuf),
    /// Host memory for guest RAM could not be allocated.
    #[error("cannot allocate {0} bytes of guest RAM")]
    NoMemory(u32),
    /// The signature could not be written.
    #[error("cannot write signature {path}: {source}")]
    Signature {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct BareOptions {
    pub program: PathBuf,
    pub signature: Option<PathBuf>,
    pub max_insns: Option<u64>,
    pub engine: EngineConfig,
    pub allow_misaligned: bool,
    pub stats: bool,
}

/// The bare-metal platform: RAM, HTIF, and M-mode trap delivery.
struct BareMachine {
    ram: GuestRam,
    tohost: u32,
    exit: Option<i32>,
    allow_misaligned: bool,
    traps_without_progress: u32,
    instret_at_last_trap: u64,
}

impl BareMachine {
    fn htif_page(&self, pa: u32) -> bool {
        pa & !PAGE_MASK == self.tohost & !PAGE_MASK
    }
}

impl Platform for BareMachine {
    fn translate(&mut self, _hart: &mut Hart, va: u32, access: Access) -> Result<Target, Trap> {
        // No address translation in M-mode: va is the physical address.
        if self.htif_page(va) && access != Access::Execute {
            return Ok(Target::Mmio { paddr: va });
        }
        match self.ram.host(va as u64, 1) {
            Some(host) => Ok(Target::Ram {
                host,
                cacheable: true,
            }),
            None => Err(Trap::new(
                match access {
                    Access::Read => Exception::LoadAccessFault,
                    Access::Write => Exception::StoreAccessFault,
                    Access::Execute => Exception::InsnAccessFault,
                },
                va,
            )),
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
        if !self.ram.write(paddr as u64, &bytes[..size as usize]) {
            return Err(Trap::new(Exception::StoreAccessFault, paddr));
        }
        if paddr == self.tohost && value != 0 {
            let v = value as u32;
            self.exit = Some(if v & 1 == 1 {
                (v >> 1) as i32
            } else {
                tracing::warn!(value = v, "unsupported HTIF command written to tohost");
                1
            });
        }
        Ok(())
    }

    fn handle_trap(&mut self, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
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
        if let Some(code) = self.exit.take() {
            return Some(Stop::Exit(code));
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
}

/// Load and run a bare-metal program; returns the process exit status.
pub fn run(opts: &BareOptions) -> Result<i32, BareError> {
    let path = &opts.program;
    let bytes = std::fs::read(path).map_err(|source| BareError::Read {
        path: path.clone(),
        source,
    })?;
    let elf = ElfFile::parse(&bytes).map_err(|source| BareError::Elf {
        path: path.clone(),
        source,
    })?;
    let tohost = elf
        .symbol("tohost")
        .ok_or_else(|| BareError::NoTohost(path.clone()))?;
    let mut ram = GuestRam::new(RAM_BASE, DEFAULT_RAM_SIZE)
        .map_err(|_| BareError::NoMemory(DEFAULT_RAM_SIZE))?;
    for seg in &elf.segments {
        let fits = ram.host(seg.vaddr as u64, seg.memsz as u64).is_some();
        if !fits || !ram.write(seg.vaddr as u64, &seg.data) {
            return Err(BareError::OutsideRam {
                path: path.clone(),
                vaddr: seg.vaddr,
                end: seg.vaddr as u64 + seg.memsz as u64,
                base: RAM_BASE,
                limit: RAM_BASE as u64 + DEFAULT_RAM_SIZE as u64,
            });
        }
    }
    let mut machine = BareMachine {
        ram,
        tohost,
        exit: None,
        allow_misaligned: opts.allow_misaligned,
        traps_without_progress: 0,
        instret_at_last_trap: u64::MAX,
    };
    let mut hart = Hart::new();
    hart.pc = elf.entry;
    let mut engine = Engine::new(opts.engine.clone());
    let stop = engine.run(&mut hart, &mut machine, opts.max_insns);
    if opts.stats {
        crate::report_stats(&engine, &hart);
    }
    if let Some(sig) = &opts.signature {
        write_signature(&machine, &elf, sig)?;
    }
    Ok(match stop {
        Stop::Exit(0) => 0,
        Stop::Exit(n) => {
            eprintln!("rv32vm: {}: test {n} failed", path.display());
            n
        }
        Stop::Reset => {
            eprintln!("rv32vm: {}: the program requested a reset", path.display());
            1
        }
        Stop::Stats => 1, // bare metal has no console escapes
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

/// Write the signature region, one 8-hex-digit little-endian word per line.
fn write_signature(machine: &BareMachine, elf: &ElfFile, out: &Path) -> Result<(), BareError> {
    let err = |source| BareError::Signature {
        path: out.to_path_buf(),
        source,
    };
    let (Some(begin), Some(end)) = (elf.symbol("begin_signature"), elf.symbol("end_signature"))
    else {
        return Err(err(std::io::Error::other(
            "the program has no begin_signature/end_signature symbols",
        )));
    };
    let len = end.saturating_sub(begin);
    let bytes = machine
        .ram
        .bytes(begin as u64, len as u64)
        .ok_or_else(|| err(std::io::Error::other("signature region lies outside RAM")))?;
    let mut text = String::new();
    for w in bytes.chunks(4) {
        let mut word = [0u8; 4];
        word[..w.len()].copy_from_slice(w);
        let _ = writeln!(text, "{:08x}", u32::from_le_bytes(word));
    }
    std::fs::write(out, text).map_err(err)
}
