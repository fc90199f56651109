//! `rv32vm boot`: read the kernel, initrd, firmware and device tree, place them in RAM, set up
//! the hart as the boot protocol says, and run until the guest powers off.
//!
//! Order matters here: the `--timeout` deadline is armed first; every input is read (bounded:
//! only regular files, never more than can fit) and every disk is opened and locked before
//! any output file (`--dump-dtb`, `--console-log`) is opened, and an output may never be one
//! of the VM's own inputs or disks.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::console::{Script, ScriptError};
use super::determinism::Deterministic;
use super::fdt::{self, ChosenPatch, FdtConfig};
use super::loader::{self, Firmware, Kernel, LoadError};
use super::map;
use super::power::PowerOn;
use super::semihosting::{HeapInfo, Semihosting};
use super::session::Connections;
use super::system::{FirmwareMode, HostDevices, System, SystemError};
use crate::cpu::csr::{IRQ_SEI, IRQ_SSI, IRQ_STI};
use crate::cpu::{Hart, Priv};
use crate::exec::{Engine, EngineConfig, Stop};
use crate::hostfile::{self, file_identity, FileId, InputError};
use rv32vm_devices::virtio::{
    Disk, DiskError, DiskOptions, NetError, NetOptions, ShareError, ShareOptions, Virtio9p,
    VirtioBlk, VirtioNet,
};

/// The longest kernel command line a RISC-V Linux kernel keeps: its COMMAND_LINE_SIZE is 1024
/// bytes including the terminating NUL; a longer `bootargs` is silently cut.
pub const MAX_COMMAND_LINE: usize = 1023;

/// The largest ELF kernel file read: unlike an Image, an ELF file carries symbols and debug
/// information beyond what is loaded, so it may be larger than RAM.
pub const MAX_ELF_KERNEL_FILE: u64 = 1 << 30;

/// The M-mode software the hart starts in (`--bios`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bios {
    /// rv32vm's built-in SBI, which starts the kernel in S-mode.
    Builtin,
    /// An M-mode firmware file (OpenSBI's `fw_*.bin` or `.elf`): an ELF goes to its physical
    /// addresses, anything else to the RAM base; the kernel follows it.
    File(PathBuf),
    /// No firmware, as QEMU's `-bios none`: the kernel itself runs in M-mode from its entry,
    /// loaded as a firmware file would be (a bare-metal program for the virt machine).
    None,
}

/// What to boot and how.
#[derive(Clone, Debug)]
pub struct BootOptions {
    pub kernel: PathBuf,
    pub initrd: Option<PathBuf>,
    /// `--append` as given. `None`: the default command line in a generated device tree; a
    /// `--dtb` tree keeps its own `bootargs`.
    pub append: Option<String>,
    pub memory: u32,
    pub bios: Bios,
    /// `--semihosting`: serve the guest's semihosting calls, as QEMU's `-semihosting`.
    pub semihosting: bool,
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
    /// `--share`: host directories shared over virtio-9p, in slot order after the disks.
    pub shares: Vec<(PathBuf, ShareOptions)>,
    /// `--net user,...`: a virtio-net card on a user-mode network (libslirp).
    pub net: Option<NetOptions>,
    /// `--save`: write the machine to this file when the script's last `--expect` appears,
    /// then exit.
    pub save: Option<PathBuf>,
    /// `--max-insns`: stop after exactly this many instructions (status 124), reboots included.
    pub max_insns: Option<u64>,
    /// `--no-reboot`: a guest reset ends the run (status 0) instead of booting again.
    pub no_reboot: bool,
    /// `--gdb`: serve gdb.
    pub gdb: Option<crate::gdb::GdbOptions>,
    /// `--deterministic [--seed N]`: the seed, in a run that depends only on its inputs
    /// (see [`super::determinism`]).
    pub deterministic: Option<u64>,
}

impl BootOptions {
    /// The kernel command line for a generated device tree: `--append`, or `console=ttyS0`
    /// plus `root=/dev/vda rw` when booting from a disk without an initrd.
    pub fn bootargs(&self) -> String {
        match &self.append {
            Some(args) => args.clone(),
            None if self.initrd.is_none() && !self.disks.is_empty() => {
                "console=ttyS0 root=/dev/vda rw".into()
            }
            None => "console=ttyS0".into(),
        }
    }
}

/// Why the machine could not boot.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    /// An input file (kernel, initrd, firmware, device tree) is missing, not a regular file,
    /// empty, or larger than can fit.
    #[error("{0}")]
    Input(#[from] InputError),
    /// The images do not fit in RAM, or a header is corrupt.
    #[error("{0}")]
    Load(#[from] LoadError),
    /// The `--dtb` tree is malformed or cannot take the `--append`/`--initrd` changes.
    #[error("{path}: {source}")]
    Dtb {
        path: PathBuf,
        source: fdt::DtbError,
    },
    /// The generated device tree could not be built (an internal error).
    #[error("cannot generate the device tree: {0}")]
    FdtBuild(String),
    /// An output file (`--dump-dtb`, `--console-log`) cannot be opened or written.
    #[error("cannot write {what} {path}: {source}")]
    Output {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// An output file is one of the VM's own input files or disks (writing it would destroy it).
    #[error(
        "{option} {path} is the same file as the {input} {input_path}; refusing to overwrite it"
    )]
    OutputIsInput {
        option: &'static str,
        path: PathBuf,
        input: &'static str,
        input_path: PathBuf,
    },
    /// Two output options name the same file.
    #[error("{first} and {second} name the same file {path}")]
    SameOutput {
        first: &'static str,
        second: &'static str,
        path: PathBuf,
    },
    /// The machine could not be built.
    #[error("{0}")]
    System(#[from] SystemError),
    /// `--memory` is outside the supported range.
    #[error("--memory must be between 16 MiB and 2 GiB, got {0} bytes")]
    MemorySize(u64),
    /// A disk image could not be opened or locked.
    #[error("{0}")]
    Disk(#[from] DiskError),
    /// A `--share` directory cannot be shared (missing, not a directory, bad tag).
    #[error("{0}")]
    Share(#[from] ShareError),
    /// Two shares with one mount tag: the guest could mount only one of them.
    #[error("two --share directories have the mount tag `{0}`: give each its own tag=TAG")]
    DuplicateShareTag(String),
    /// The network could not start (a forwarded host port cannot be bound).
    #[error("--net: {0}")]
    Net(#[from] NetError),
    /// `--save` without a final `--expect` to save at.
    #[error("{0}")]
    Script(#[from] ScriptError),
    /// `--save` cannot be honoured with this machine (host devices attached).
    #[error("--save: {0}")]
    Snapshot(super::snapshot::SnapshotError),
    /// `--append` is longer than a RISC-V Linux kernel keeps.
    #[error("--append is {len} bytes; a RISC-V Linux kernel keeps at most {max} (COMMAND_LINE_SIZE 1024 including the terminating NUL) and would silently cut the rest")]
    CommandLineTooLong { len: usize, max: usize },
    /// The GDB stub cannot start (`--gdb`).
    #[error(transparent)]
    Gdb(#[from] crate::gdb::GdbError),
    /// An option that would make a `--deterministic` run depend on the host.
    #[error("{option} cannot be used with --deterministic: {why}")]
    NotDeterministic {
        /// The refused option.
        option: &'static str,
        /// What it would make depend on the host.
        why: &'static str,
    },
}

/// Refuse what a deterministic run cannot repeat: devices served by host threads at host
/// speed, and a debugger (which pauses and single-steps the machine from another process).
pub(crate) fn check_deterministic(
    shares: bool,
    net: bool,
    semihosting: bool,
    gdb: bool,
) -> Result<(), BootError> {
    let refused = |option, why| Err(BootError::NotDeterministic { option, why });
    if shares {
        return refused(
            "--share",
            "9P requests are served by a host thread, at host speed and host file timestamps",
        );
    }
    if net {
        return refused(
            "--net",
            "the network is served by a host thread and sees the outside world",
        );
    }
    if semihosting {
        return refused(
            "--semihosting",
            "the program reads host files, the host's clock and the host's console",
        );
    }
    if gdb {
        return refused(
            "--gdb",
            "a debugger changes block boundaries and so when interrupts are taken",
        );
    }
    Ok(())
}

/// `--semihosting`'s host side: the command line is the kernel's path and `--append`, as
/// QEMU's; the heap runs from the end of what was loaded to the end of RAM.
fn semihosting_for(opts: &BootOptions, layout: &loader::Layout) -> Semihosting {
    let mut cmdline = opts.kernel.to_string_lossy().into_owned();
    if let Some(append) = &opts.append {
        cmdline.push(' ');
        cmdline.push_str(append);
    }
    let image_end = [
        Some(layout.kernel_end),
        layout.firmware.map(|f| f.end),
        layout.initrd.map(|(_, end)| end),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(map::RAM_BASE as u64);
    let ram_end = map::RAM_BASE as u64 + opts.memory as u64;
    let heap = HeapInfo {
        heap_base: image_end as u32,
        // RAM may end at the 4 GiB boundary, one past the last address.
        heap_limit: ram_end.min(u32::MAX as u64) as u32,
    };
    Semihosting::new(cmdline, heap)
}

/// Read the kernel: an Image must fit in RAM; an ELF file may be larger (symbols, debug
/// information) up to [`MAX_ELF_KERNEL_FILE`]. Nothing beyond the limit is ever read.
fn read_kernel(path: &Path, ram_size: u64) -> Result<Vec<u8>, BootError> {
    let (mut file, _) = hostfile::open_regular("kernel", path)?;
    let mut magic = [0u8; 4];
    let is_elf = file.read_exact(&mut magic).is_ok() && &magic == b"\x7fELF";
    drop(file);
    let limit = if is_elf {
        MAX_ELF_KERNEL_FILE.max(ram_size)
    } else {
        ram_size
    };
    Ok(hostfile::read_bounded("kernel", path, limit)?)
}

/// The `--timeout` deadline, from now. A limit too large to represent is no limit at all.
pub(crate) fn arm_deadline(timeout: Option<Duration>) -> Option<(Instant, Duration)> {
    let limit = timeout?;
    match Instant::now().checked_add(limit) {
        Some(deadline) => Some((deadline, limit)),
        None => {
            tracing::info!(
                seconds = limit.as_secs(),
                "--timeout is beyond any representable time: no limit"
            );
            None
        }
    }
}

/// exceptions the built-in SBI delegates to S-mode: everything but misaligned loads/stores
/// (emulated in M-mode, as OpenSBI does) and ecalls from S/M.
const BUILTIN_MEDELEG: u32 = 0xb3ff & !(1 << 4 | 1 << 6 | 1 << 9 | 1 << 11);

/// Boot and run; returns the process exit status.
pub fn run(opts: &BootOptions) -> Result<i32, BootError> {
    // Armed before anything that could take time, so the limit covers the whole run.
    let deadline = arm_deadline(opts.timeout);
    if !(16 << 20..=2 << 30).contains(&(opts.memory as u64)) {
        return Err(BootError::MemorySize(opts.memory as u64));
    }
    if let Some(args) = &opts.append {
        if args.len() > MAX_COMMAND_LINE {
            return Err(BootError::CommandLineTooLong {
                len: args.len(),
                max: MAX_COMMAND_LINE,
            });
        }
    }
    if opts.deterministic.is_some() {
        check_deterministic(
            !opts.shares.is_empty(),
            opts.net.is_some(),
            opts.semihosting,
            opts.gdb.is_some(),
        )?;
    }
    for (i, (_, share)) in opts.shares.iter().enumerate() {
        if opts.shares[..i].iter().any(|(_, s)| s.tag == share.tag) {
            return Err(BootError::DuplicateShareTag(share.tag.clone()));
        }
    }
    if opts.save.is_some() && (!opts.shares.is_empty() || opts.net.is_some() || opts.semihosting) {
        return Err(BootError::Snapshot(
            super::snapshot::SnapshotError::HostDevices,
        ));
    }
    if let Some(path) = &opts.save {
        // The snapshot replaces its file when written: never one of the VM's own files.
        check_output("--save", path, file_identity(path), &own_files(opts))?;
    }
    let images = load_images(opts)?;
    let mut disks = opts
        .disks
        .iter()
        .map(|(path, options)| Disk::open(path, *options).map(VirtioBlk::new))
        .collect::<Result<Vec<_>, _>>()?;
    // Shared directories are resolved and forwarded ports bound now: a busy port is an error
    // before the guest starts.
    let mut host_devices = HostDevices {
        shares: opts
            .shares
            .iter()
            .map(|(dir, options)| Virtio9p::new(dir, options.clone()))
            .collect::<Result<Vec<_>, _>>()?,
        net: opts.net.clone().map(VirtioNet::new).transpose()?,
        semihosting: opts
            .semihosting
            .then(|| semihosting_for(opts, &images.layout)),
    };
    let mut gdb = opts
        .gdb
        .as_ref()
        .map(crate::gdb::GdbServer::listen)
        .transpose()?;
    // Every input is read and every disk locked: only now may output files be touched.
    let outputs = open_outputs(opts)?;
    if let Some((mut file, path)) = outputs.dump_dtb {
        file.write_all(&images.dtb)
            .map_err(|source| BootError::Output {
                what: "the device tree to",
                path,
                source,
            })?;
    }
    // What every power-on (the first and each guest reset) puts in RAM.
    let image = Arc::new(power_on_image(&images));
    drop(images);
    let script = match &opts.save {
        Some(_) => opts.script.clone().save_at_end()?,
        None => opts.script.clone(),
    };
    let mut connections = Connections::open(
        outputs.console_log,
        script,
        opts.save.clone(),
        opts.deterministic.is_none(),
    );
    // One engine for every machine the guest reboots into, so `--stats` covers the whole run.
    let mut engine = Engine::new(EngineConfig {
        deterministic: opts.deterministic.is_some(),
        ..opts.engine.clone()
    });
    let mut deterministic = opts.deterministic.map(Deterministic::new);
    // Instructions retired by the machines before the last guest reset.
    let mut retired_before_reset: u64 = 0;
    let mut resets: u64 = 0;
    let (status, mut hart) = loop {
        let (mut system, mut hart) = power_on(
            &image,
            opts,
            &connections,
            disks,
            host_devices,
            deterministic,
        )?;
        system.deadline = deadline;
        if resets > 0 {
            // Blocks are keyed by host addresses of the previous machine's RAM, which is gone.
            engine.flush_code(&mut hart);
        }
        let max_insns = opts.max_insns;
        let (back, stop) = connections.run(
            &mut engine,
            &mut hart,
            system,
            retired_before_reset,
            |engine, hart, system| {
                let retired = retired_before_reset.wrapping_add(hart.instret);
                let remaining = max_insns.map(|n| n.saturating_sub(retired));
                crate::gdb::run(gdb.as_mut(), engine, hart, system, remaining)
            },
        );
        let mut system = back;
        system.flush_console();
        // Whatever ended the run (poweroff, Ctrl-A x, a signal, a timeout), data the guest
        // wrote reaches the disk files first.
        disks = system.take_disks();
        host_devices = system.take_host_devices();
        // A reset never hides what the host asked for: a signal, Ctrl-A x or the deadline
        // (the guest may reset before the machine's first poll).
        let stop = match stop {
            Stop::Reset => system.take_host_stop().unwrap_or(Stop::Reset),
            stop => stop,
        };
        match stop {
            Stop::Reset if opts.no_reboot => {
                tracing::info!("guest requested a reset: stopping (--no-reboot)");
                break (connections.console.exit_status(0), hart);
            }
            Stop::Reset => {
                resets += 1;
                retired_before_reset = retired_before_reset.wrapping_add(hart.instret);
                deterministic = deterministic.map(|d| d.after_reset(hart.time()));
                tracing::info!(resets, "guest requested a reset: rebooting");
                continue;
            }
            Stop::Exit(code) => break (connections.console.exit_status(code), hart),
            Stop::InsnLimit | Stop::Stats | Stop::Pause | Stop::Debug => break (Ok(124), hart),
            Stop::Fatal { status, message } => break (Err((status, message)), hart),
        }
    };
    // Messages go to a terminal in its normal mode.
    connections.restore_terminal();
    if opts.stats {
        hart.instret = hart.instret.wrapping_add(retired_before_reset);
        if resets > 0 {
            eprintln!("rv32vm: the guest reset {resets} times; statistics cover every boot");
        }
        crate::report_stats(&engine, &hart);
    }
    Ok(match status {
        Ok(code) => code,
        Err((status, message)) => {
            eprintln!("rv32vm: {message}");
            status
        }
    })
}

/// Read every input (bounded), check it, plan the RAM layout and produce the device tree the
/// guest gets.
fn load_images(opts: &BootOptions) -> Result<Images, BootError> {
    let ram_base = map::RAM_BASE as u64;
    let ram_size = opts.memory as u64;
    let kernel_bytes = read_kernel(&opts.kernel, ram_size)?;
    let (kernel, bios) = match &opts.bios {
        Bios::Builtin => (Kernel::parse(&kernel_bytes)?, None),
        Bios::File(path) => {
            let firmware = hostfile::read_bounded("firmware", path, ram_size)?;
            (
                Kernel::parse(&kernel_bytes)?,
                Some(Firmware::parse(firmware)?),
            )
        }
        // The kernel is the firmware; an empty Image takes the kernel's place after it.
        Bios::None => {
            let nothing = Kernel::Image {
                bytes: Vec::new(),
                size: 0,
            };
            // Its parse errors are the kernel file's.
            let firmware = Firmware::parse(kernel_bytes).map_err(|e| match e {
                LoadError::FirmwareElf(e) => LoadError::Elf(e),
                e => e,
            })?;
            (nothing, Some(firmware))
        }
    };
    let bios_extent = bios.as_ref().map(Firmware::extent);
    let initrd = match &opts.initrd {
        Some(path) => {
            let room = loader::initrd_room(ram_base, ram_size, &kernel, bios_extent)?;
            Some(hostfile::read_bounded("initrd", path, room)?)
        }
        None => None,
    };
    let user_dtb = match &opts.dtb {
        Some(p) => {
            let blob = hostfile::read_bounded("device tree", p, loader::MAX_DTB_SIZE)?;
            fdt::validate(&blob).map_err(|source| BootError::Dtb {
                path: p.clone(),
                source,
            })?;
            Some(blob)
        }
        None => None,
    };
    let layout = loader::plan(
        ram_base,
        ram_size,
        &kernel,
        bios_extent,
        initrd.as_ref().map(|b| b.len() as u64),
        user_dtb.as_ref().map_or(0, |b| b.len() as u64),
    )?;
    let dtb = match (user_dtb, &opts.dtb) {
        (Some(blob), Some(path)) => {
            // As QEMU does with -dtb: --append replaces bootargs, --initrd sets the range.
            let patch = ChosenPatch {
                bootargs: opts.append.clone(),
                initrd: layout.initrd,
            };
            if patch.is_empty() {
                blob
            } else {
                fdt::patch_chosen(&blob, &patch).map_err(|source| BootError::Dtb {
                    path: path.clone(),
                    source,
                })?
            }
        }
        _ => fdt::build(&FdtConfig {
            ram_size,
            bootargs: opts.bootargs(),
            initrd: layout.initrd,
            virtio_slots: System::virtio_slots(
                opts.disks.len(),
                opts.shares.len() + usize::from(opts.net.is_some()),
            ),
        })
        .map_err(|e| BootError::FdtBuild(format!("{e:?}")))?,
    };
    if dtb.len() as u64 > loader::MAX_DTB_SIZE {
        return Err(LoadError::DtbTooLarge {
            size: dtb.len() as u64,
            limit: loader::MAX_DTB_SIZE,
        }
        .into());
    }
    tracing::info!(?layout, "boot layout");
    Ok(Images {
        kernel,
        initrd,
        bios,
        dtb,
        layout,
    })
}

/// The output files, opened (created if missing, not yet truncated) only after every check.
struct Outputs {
    dump_dtb: Option<(File, PathBuf)>,
    console_log: Option<File>,
}

/// One of the VM's own files (input or disk), which no output may overwrite.
struct OwnFile<'a> {
    what: &'static str,
    path: &'a Path,
    id: Option<FileId>,
}

/// The VM's inputs and disks.
fn own_files(opts: &BootOptions) -> Vec<OwnFile<'_>> {
    let mut files = vec![("kernel", opts.kernel.as_path())];
    files.extend(opts.initrd.as_deref().map(|p| ("initrd", p)));
    if let Bios::File(path) = &opts.bios {
        files.push(("firmware", path.as_path()));
    }
    files.extend(opts.dtb.as_deref().map(|p| ("device tree", p)));
    files.extend(opts.disks.iter().map(|(p, _)| ("disk", p.as_path())));
    files
        .into_iter()
        .map(|(what, path)| OwnFile {
            what,
            path,
            id: file_identity(path),
        })
        .collect()
}

/// Refuse an output that is one of the VM's own files.
fn check_output(
    option: &'static str,
    path: &Path,
    id: Option<FileId>,
    own: &[OwnFile<'_>],
) -> Result<(), BootError> {
    let Some(id) = id else {
        return Ok(());
    };
    match own.iter().find(|f| f.id == Some(id)) {
        Some(f) => Err(BootError::OutputIsInput {
            option,
            path: path.to_path_buf(),
            input: f.what,
            input_path: f.path.to_path_buf(),
        }),
        None => Ok(()),
    }
}

/// Open `--dump-dtb` and `--console-log`: never one of the VM's inputs or disks (compared by
/// device and inode, so symlinks and hard links are seen through), never each other, never a
/// blocking open (a FIFO without a reader is an error), and truncated only after all checks.
fn open_outputs(opts: &BootOptions) -> Result<Outputs, BootError> {
    let own = own_files(opts);
    let wanted = [
        ("--dump-dtb", "the device tree to", opts.dump_dtb.as_deref()),
        (
            "--console-log",
            "the console log",
            opts.console_log.as_deref(),
        ),
    ];
    // First by path, before anything is created.
    for (option, _, path) in wanted {
        if let Some(path) = path {
            check_output(option, path, file_identity(path), &own)?;
        }
    }
    // Every pair of outputs, the snapshot `--save` writes at the end included.
    let outputs = [
        ("--dump-dtb", opts.dump_dtb.as_deref()),
        ("--console-log", opts.console_log.as_deref()),
        ("--save", opts.save.as_deref()),
    ];
    for (i, &(first, a)) in outputs.iter().enumerate() {
        for &(second, b) in &outputs[i + 1..] {
            let (Some(a), Some(b)) = (a, b) else {
                continue;
            };
            if a == b || file_identity(a).is_some_and(|id| file_identity(b) == Some(id)) {
                return Err(BootError::SameOutput {
                    first,
                    second,
                    path: a.to_path_buf(),
                });
            }
        }
    }
    // Then the files as opened (a path can change between the two looks).
    let mut opened = Vec::new();
    for (option, what, path) in wanted {
        let Some(path) = path else {
            opened.push(None);
            continue;
        };
        let io = |source| BootError::Output {
            what,
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        check_output(option, path, Some((meta.dev(), meta.ino())), &own)?;
        opened.push(Some((file, path.to_path_buf(), meta)));
    }
    if let [Some((_, path, a)), Some((_, _, b))] = &opened[..] {
        if (a.dev(), a.ino()) == (b.dev(), b.ino()) {
            return Err(BootError::SameOutput {
                first: "--dump-dtb",
                second: "--console-log",
                path: path.clone(),
            });
        }
    }
    let mut finished = Vec::new();
    for (file, path, meta) in opened.into_iter().flatten() {
        let io = |source| BootError::Output {
            what: "output file",
            path: path.clone(),
            source,
        };
        if meta.file_type().is_file() {
            file.set_len(0).map_err(io)?;
        }
        set_blocking(&file).map_err(io)?;
        finished.push((file, path));
    }
    let mut finished = finished.into_iter();
    let dump_dtb = opts.dump_dtb.as_ref().and_then(|_| finished.next());
    let console_log = opts
        .console_log
        .as_ref()
        .and_then(|_| finished.next())
        .map(|(file, _)| file);
    Ok(Outputs {
        dump_dtb,
        console_log,
    })
}

/// Clear O_NONBLOCK (set only so that opening a FIFO cannot block): writes must wait for a
/// slow reader rather than fail.
fn set_blocking(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file` for the duration of both calls;
    // F_GETFL/F_SETFL only read and change its status flags.
    let ok = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if ok {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Everything loaded from disk, and where it goes.
struct Images {
    kernel: Kernel,
    initrd: Option<Vec<u8>>,
    bios: Option<Firmware>,
    dtb: Vec<u8>,
    layout: loader::Layout,
}

/// The machine at power-on for `images`: what the loader puts in RAM and where the hart
/// starts.
fn power_on_image(images: &Images) -> PowerOn {
    let Images {
        kernel,
        initrd,
        bios,
        dtb,
        layout,
    } = images;
    let mut writes = Vec::new();
    match kernel {
        Kernel::Image { bytes, .. } => writes.push((layout.kernel_start, bytes.clone())),
        Kernel::Elf(elf) => {
            for seg in &elf.segments {
                writes.push((seg.paddr as u64, seg.data.clone()));
            }
        }
    }
    if let (Some(bytes), Some((start, _))) = (initrd, layout.initrd) {
        writes.push((start, bytes.clone()));
    }
    writes.push((layout.dtb, dtb.clone()));

    let mut hart = Hart::new();
    hart.x[10] = 0; // a0: hart id
    hart.x[11] = layout.dtb as u32; // a1: device tree
    match (bios, layout.firmware, layout.fw_dynamic_info) {
        (Some(fw), Some(place), Some(info)) => {
            writes.extend(fw.writes(place));
            let info_bytes = loader::fw_dynamic_info(layout.kernel_entry as u32);
            writes.push((info, info_bytes.to_vec()));
            hart.x[12] = info as u32; // a2: fw_dynamic_info
            hart.pc = place.entry as u32;
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
    PowerOn {
        writes,
        hart: hart.state(),
    }
}

/// A fresh machine with the power-on image in RAM and the hart at its first instruction (at
/// boot and on every guest reset).
fn power_on(
    image: &Arc<PowerOn>,
    opts: &BootOptions,
    connections: &Connections,
    disks: Vec<VirtioBlk>,
    host_devices: HostDevices,
    deterministic: Option<Deterministic>,
) -> Result<(System, Hart), BootError> {
    let firmware = match opts.bios {
        Bios::Builtin => FirmwareMode::Builtin,
        Bios::File(_) => FirmwareMode::External,
        Bios::None => FirmwareMode::None,
    };
    let mut system = System::new(
        opts.memory,
        firmware,
        connections.console.clone(),
        connections.console_input.clone(),
        connections.requests.clone(),
        disks,
        host_devices,
        deterministic,
    )?;
    let mut hart = system
        .power_on(Arc::clone(image))
        .map_err(|e| LoadError::DoesNotFit {
            what: "a boot image",
            size: e.size as u64,
            ram: opts.memory as u64,
            free: 0,
        })?;
    if deterministic.is_some() {
        // Time is retired instructions, from 0 at power-on.
        hart.clock.set_deterministic(true, 0);
        hart.set_time(0);
    }
    Ok((system, hart))
}
