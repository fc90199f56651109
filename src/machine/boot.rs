//! `rv32vm boot`: read the kernel, initrd, firmware and device tree, place them in RAM, set up
//! the hart as the boot protocol says, and run until the guest powers off.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::console::{ConsoleOut, Script};
use super::fdt::{self, FdtConfig};
use super::loader::{self, Kernel, LoadError};
use super::map;
use super::system::{FirmwareMode, System, SystemError};
use super::terminal::{self, HostRequests, RawTerminal};
use crate::cpu::csr::{IRQ_SEI, IRQ_SSI, IRQ_STI};
use crate::cpu::{Hart, Priv};
use crate::exec::{Engine, EngineConfig, Stop};
use rv32vm_devices::virtio::{Disk, DiskError, DiskOptions, VirtioBlk};

/// What to boot and how.
#[derive(Clone, Debug)]
pub struct BootOptions {
    pub kernel: PathBuf,
    pub initrd: Option<PathBuf>,
    pub append: String,
    pub memory: u32,
    /// `None` = built-in SBI; `Some(file)` = M-mode firmware loaded at RAM base.
    pub bios: Option<PathBuf>,
    pub dtb: Option<PathBuf>,
    pub dump_dtb: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub engine: EngineConfig,
    pub stats: bool,
    /// `--expect`/`--send` pairs to play against the console.
    pub script: Script,
    /// `--console-log`: a copy of everything the guest prints.
    pub console_log: Option<PathBuf>,
    /// `--disk`: virtio-blk disks in slot order (the first is /dev/vda).
    pub disks: Vec<(PathBuf, DiskOptions)>,
}

/// Why the machine could not boot.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    #[error("cannot read {what} {path}: {source}")]
    Read {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Load(#[from] LoadError),
    #[error("{path}: {source}")]
    Dtb {
        path: PathBuf,
        source: fdt::DtbError,
    },
    #[error("cannot generate the device tree: {0}")]
    FdtBuild(String),
    #[error("cannot write the device tree to {path}: {source}")]
    DumpDtb {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    System(#[from] SystemError),
    #[error("--memory must be between 16 MiB and 2 GiB, got {0} bytes")]
    MemorySize(u64),
    #[error("{0}")]
    Disk(#[from] DiskError),
    #[error("cannot create the console log {path}: {source}")]
    ConsoleLog {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, BootError> {
    std::fs::read(path).map_err(|source| BootError::Read {
        what,
        path: path.to_path_buf(),
        source,
    })
}

/// exceptions the built-in SBI delegates to S-mode: everything but misaligned loads/stores
/// (emulated in M-mode, as OpenSBI does) and ecalls from S/M.
const BUILTIN_MEDELEG: u32 = 0xb3ff & !(1 << 4 | 1 << 6 | 1 << 9 | 1 << 11);

/// Boot and run; returns the process exit status.
pub fn run(opts: &BootOptions) -> Result<i32, BootError> {
    if !(16 << 20..=2 << 30).contains(&(opts.memory as u64)) {
        return Err(BootError::MemorySize(opts.memory as u64));
    }
    let kernel_bytes = read("kernel", &opts.kernel)?;
    let kernel = Kernel::parse(&kernel_bytes)?;
    let initrd = opts
        .initrd
        .as_deref()
        .map(|p| read("initrd", p))
        .transpose()?;
    let bios = opts
        .bios
        .as_deref()
        .map(|p| read("firmware", p))
        .transpose()?;
    let user_dtb = match &opts.dtb {
        Some(p) => {
            let blob = read("device tree", p)?;
            fdt::validate(&blob).map_err(|source| BootError::Dtb {
                path: p.clone(),
                source,
            })?;
            Some(blob)
        }
        None => None,
    };
    let ram_base = map::RAM_BASE as u64;
    // Plan with the largest DTB we accept, so the generated tree (which depends on the initrd
    // position) fits wherever it lands.
    let layout = loader::plan(
        ram_base,
        opts.memory as u64,
        &kernel,
        bios.as_ref().map(|b| b.len() as u64),
        initrd.as_ref().map(|b| b.len() as u64),
        user_dtb.as_ref().map_or(0, |b| b.len() as u64),
    )?;
    let dtb = match user_dtb {
        Some(blob) => blob,
        None => fdt::build(&FdtConfig {
            ram_size: opts.memory as u64,
            bootargs: opts.append.clone(),
            initrd: layout.initrd,
            virtio_slots: System::virtio_slots(opts.disks.len()),
        })
        .map_err(|e| BootError::FdtBuild(format!("{e:?}")))?,
    };
    if dtb.len() as u64 > loader::MAX_DTB_SIZE {
        return Err(LoadError::DoesNotFit {
            what: "device tree",
            size: dtb.len() as u64,
            ram: opts.memory as u64,
            free: loader::MAX_DTB_SIZE,
        }
        .into());
    }
    if let Some(path) = &opts.dump_dtb {
        std::fs::write(path, &dtb).map_err(|source| BootError::DumpDtb {
            path: path.clone(),
            source,
        })?;
    }

    tracing::info!(?layout, "boot layout");
    let images = Images {
        kernel,
        initrd,
        bios,
        dtb,
        layout,
    };
    let mut disks = opts
        .disks
        .iter()
        .map(|(path, options)| Disk::open(path, *options).map(VirtioBlk::new))
        .collect::<Result<Vec<_>, _>>()?;
    let log = match &opts.console_log {
        Some(path) => {
            Some(
                std::fs::File::create(path).map_err(|source| BootError::ConsoleLog {
                    path: path.clone(),
                    source,
                })?,
            )
        }
        None => None,
    };
    let console_input = rv32vm_devices::UartInput::new();
    let console = ConsoleOut::new(log, opts.script.clone(), console_input.clone());
    let requests = Arc::new(HostRequests::default());
    let interactive = terminal::stdin_is_terminal();
    terminal::install_signal_handlers();
    let mut raw_terminal = if interactive {
        match RawTerminal::enable() {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!("cannot put the terminal in raw mode: {e}");
                None
            }
        }
    } else {
        None
    };
    terminal::spawn_reader(
        console_input.clone(),
        raw_terminal.is_some(),
        requests.clone(),
    );
    let deadline = opts.timeout.map(|t| (Instant::now() + t, t));
    let connections = Connections {
        console,
        console_input,
        requests,
    };
    let newline = if raw_terminal.is_some() { "\r\n" } else { "\n" };
    let status = loop {
        let (mut system, mut hart) = power_on(&images, opts, &connections, disks)?;
        system.deadline = deadline;
        let mut engine = Engine::new(opts.engine.clone());
        let stop = loop {
            match engine.run(&mut hart, &mut system, None) {
                Stop::Stats => {
                    system.flush_console();
                    let report = crate::format_stats(&engine, &hart).replace('\n', newline);
                    eprint!("{newline}{report}");
                }
                stop => break stop,
            }
        };
        system.flush_console();
        // Whatever ended the run (poweroff, Ctrl-A x, a signal, a timeout), data the guest
        // wrote reaches the disk files first.
        disks = system.take_disks();
        if opts.stats {
            crate::report_stats(&engine, &hart);
        }
        match stop {
            Stop::Reset => {
                tracing::info!("guest requested a reset: rebooting");
                continue;
            }
            Stop::Exit(code) => break connections.console.exit_status(code),
            Stop::InsnLimit | Stop::Stats => break Ok(124),
            Stop::Fatal { status, message } => break Err((status, message)),
        }
    };
    // Messages go to a terminal in its normal mode.
    drop(raw_terminal.take());
    Ok(match status {
        Ok(code) => code,
        Err((status, message)) => {
            eprintln!("rv32vm: {message}");
            status
        }
    })
}

/// The host ends of the machine's devices, kept across guest reboots.
struct Connections {
    console: ConsoleOut,
    console_input: rv32vm_devices::UartInput,
    requests: Arc<HostRequests>,
}

/// Everything loaded from disk, and where it goes.
struct Images {
    kernel: Kernel,
    initrd: Option<Vec<u8>>,
    bios: Option<Vec<u8>>,
    dtb: Vec<u8>,
    layout: loader::Layout,
}

/// A fresh machine with the images in RAM and the hart at its first instruction (at boot and
/// on every guest reset).
fn power_on(
    images: &Images,
    opts: &BootOptions,
    connections: &Connections,
    disks: Vec<VirtioBlk>,
) -> Result<(System, Hart), BootError> {
    let Images {
        kernel,
        initrd,
        bios,
        dtb,
        layout,
    } = images;
    let firmware = if bios.is_some() {
        FirmwareMode::External
    } else {
        FirmwareMode::Builtin
    };
    let mut system = System::new(
        opts.memory,
        firmware,
        connections.console.clone(),
        connections.console_input.clone(),
        connections.requests.clone(),
        disks,
    )?;
    let placed = |ok: bool, what: &'static str, size: usize| {
        if ok {
            Ok(())
        } else {
            Err(LoadError::DoesNotFit {
                what,
                size: size as u64,
                ram: opts.memory as u64,
                free: 0,
            })
        }
    };
    match kernel {
        Kernel::Image { bytes, .. } => placed(
            system.ram.write(layout.kernel_start, bytes),
            "kernel",
            bytes.len(),
        )?,
        Kernel::Elf(elf) => {
            for seg in &elf.segments {
                placed(
                    system.ram.write(seg.paddr as u64, &seg.data),
                    "kernel segment",
                    seg.data.len(),
                )?;
            }
        }
    }
    if let (Some(bytes), Some((start, _))) = (initrd, layout.initrd) {
        placed(system.ram.write(start, bytes), "initrd", bytes.len())?;
    }
    placed(system.ram.write(layout.dtb, dtb), "device tree", dtb.len())?;

    let mut hart = Hart::new();
    hart.x[10] = 0; // a0: hart id
    hart.x[11] = layout.dtb as u32; // a1: device tree
    match (bios, layout.firmware, layout.fw_dynamic_info) {
        (Some(fw), Some((fw_start, _)), Some(info)) => {
            placed(system.ram.write(fw_start, fw), "firmware", fw.len())?;
            let info_bytes = loader::fw_dynamic_info(layout.kernel_entry as u32);
            placed(system.ram.write(info, &info_bytes), "fw_dynamic_info", 24)?;
            hart.x[12] = info as u32; // a2: fw_dynamic_info
            hart.pc = fw_start as u32;
            hart.prv = Priv::Machine;
        }
        _ => {
            // The built-in SBI plays M-mode: delegate what OpenSBI delegates, expose the
            // counters and Sstc, and start the kernel in S-mode.
            hart.csr.medeleg = BUILTIN_MEDELEG;
            hart.csr.mideleg = IRQ_SSI | IRQ_STI | IRQ_SEI;
            hart.csr.mcounteren = 0b111;
            hart.csr.menvcfg |= 1 << 63; // STCE
            hart.pc = layout.kernel_entry as u32;
            hart.prv = Priv::Supervisor;
        }
    }
    Ok((system, hart))
}
