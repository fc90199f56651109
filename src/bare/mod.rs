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
    #[error("{0}: no `tohost` symbol: a bare-metal program must report its result through HTIF tohost")]
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

/// Guest RAM: one anonymous host mapping.
struct Ram {
    ptr: *mut u8,
    size: u32,
}

impl Ram {
    fn new(size: u32) -> Result<Ram, BareError> {
        // SAFETY: an anonymous private mapping with no address hint has no preconditions; the
        // result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(BareError::NoMemory(size));
        }
        Ok(Ram {
            ptr: ptr.cast(),
            size,
        })
    }

    /// Host pointer of guest physical address `pa`, if it is in RAM with `len` bytes after it.
    fn host(&self, pa: u32, len: u32) -> Option<*mut u8> {
        let off = pa.checked_sub(RAM_BASE)?;
        if (off as u64) + (len as u64) <= self.size as u64 {
            // SAFETY: `off + len` is within the mapping, so the offset pointer stays inside it.
            Some(unsafe { self.ptr.add(off as usize) })
        } else {
            None
        }
    }

    fn bytes(&self, pa: u32, len: u32) -> Option<&[u8]> {
        let p = self.host(pa, len)?;
        // SAFETY: `host` checked that `len` bytes from `p` are inside the live mapping.
        Some(unsafe { std::slice::from_raw_parts(p, len as usize) })
    }
}

impl Drop for Ram {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`size` describe a mapping created in `Ram::new` and unmapped only here.
        unsafe { libc::munmap(self.ptr.cast(), self.size as usize) };
    }
}

/// The bare-metal platform: RAM, HTIF, and M-mode trap delivery.
struct BareMachine {
    ram: Ram,
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
        match self.ram.host(va, 1) {
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
            .bytes(paddr, size)
            .ok_or(Trap::new(Exception::LoadAccessFault, paddr))?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| acc << 8 | b as u64))
    }

    fn mmio_write(
        &mut self,
        _hart: &mut Hart,
        paddr: u32,
        size: u32,
        value: u64,
    ) -> Result<(), Trap> {
        let host = self
            .ram
            .host(paddr, size)
            .ok_or(Trap::new(Exception::StoreAccessFault, paddr))?;
        for i in 0..size {
            // SAFETY: `host` checked that `size` bytes from `host` are inside guest RAM.
            unsafe { host.add(i as usize).write((value >> (8 * i)) as u8) };
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
    let ram = Ram::new(DEFAULT_RAM_SIZE)?;
    for seg in &elf.segments {
        let dest = ram.host(seg.vaddr, seg.memsz).ok_or(BareError::OutsideRam {
            path: path.clone(),
            vaddr: seg.vaddr,
            end: seg.vaddr as u64 + seg.memsz as u64,
            base: RAM_BASE,
            limit: RAM_BASE as u64 + DEFAULT_RAM_SIZE as u64,
        })?;
        // SAFETY: `ram.host` checked that `memsz >= data.len()` bytes fit at `dest`.
        unsafe { std::ptr::copy_nonoverlapping(seg.data.as_ptr(), dest, seg.data.len()) };
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
        .bytes(begin, len)
        .ok_or_else(|| err(std::io::Error::other("signature region lies outside RAM")))?;
    let mut text = String::new();
    for w in bytes.chunks(4) {
        let mut word = [0u8; 4];
        word[..w.len()].copy_from_slice(w);
        let _ = writeln!(text, "{:08x}", u32::from_le_bytes(word));
    }
    std::fs::write(out, text).map_err(err)
}
