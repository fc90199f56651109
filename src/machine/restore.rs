//! `rv32vm restore`: rebuild the machine a snapshot describes, put its state back, and run on
//! from where it was saved.
//!
//! Order: the snapshot is read and checked in full, then every disk is opened, locked and
//! compared with what the snapshot recorded (same size; unchanged since the save unless
//! `--disk` points the slot elsewhere), then the console log is opened, and only then is the
//! machine built and filled. Compiled code is a cache: the engine starts empty.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use rv32vm_devices::virtio::{Disk, DiskError, VirtioBlk};
use rv32vm_devices::{StateError, StateReader};

use super::boot::arm_deadline;
use super::console::{Script, ScriptError};
use super::determinism::Deterministic;
use super::session::Connections;
use super::snapshot::{self, SnapshotError};
use super::system::{HostDevices, System, SystemError};
use crate::cpu::Hart;
use crate::exec::{Engine, EngineConfig, Stop};

/// What to restore and how to run it.
#[derive(Clone, Debug)]
pub struct RestoreOptions {
    /// The snapshot file.
    pub snapshot: PathBuf,
    pub timeout: Option<Duration>,
    pub engine: EngineConfig,
    pub stats: bool,
    /// `--expect`/`--send` pairs; the first pattern may match the line the console showed at
    /// save time (the prompt).
    pub script: Script,
    pub console_log: Option<PathBuf>,
    /// `--disk`: another image for disk slot n (vda, vdb, ...), of the same size.
    pub disks: Vec<PathBuf>,
    /// `--save`: save again when the script's last `--expect` appears, then exit.
    pub save: Option<PathBuf>,
    /// `--max-insns`: stop after exactly this many instructions from the restore (status 124).
    pub max_insns: Option<u64>,
    /// `--no-reboot`: a guest reset ends the run (status 0) instead of booting again.
    pub no_reboot: bool,
    /// `--gdb`: serve gdb.
    pub gdb: Option<crate::gdb::GdbOptions>,
    /// `--deterministic`: go on deterministically from a snapshot of a normal run.
    pub deterministic: bool,
    /// `--seed`: the entropy device's seed when a normal run's snapshot goes on
    /// deterministically.
    pub seed: Option<u64>,
}

/// Why a snapshot could not be restored.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The file is unreadable, truncated, corrupt, foreign or of another version.
    #[error("{0}")]
    Snapshot(#[from] SnapshotError),
    /// The saved power-on image does not fit the machine (a guest reboot after the restore).
    #[error(
        "{}: the saved power-on image has {size} bytes at {address:#x}, outside guest RAM: \
         cannot reboot the restored guest",
        path.display()
    )]
    PowerOn {
        path: PathBuf,
        address: u64,
        size: usize,
    },
    /// The GDB stub could not listen.
    #[error("{0}")]
    Gdb(#[from] crate::gdb::GdbError),
    /// More `--disk` than the snapshot has disks.
    #[error("--disk given {given} times, but the snapshot has {saved} disks")]
    TooManyDisks { given: usize, saved: usize },
    /// A disk image cannot be opened or locked.
    #[error("{0}")]
    Disk(#[from] DiskError),
    /// A disk is not the size it was.
    #[error(
        "disk {} is {size} bytes; the snapshot's disk {slot} was {saved} bytes: refusing to \
         restore onto another disk",
        path.display()
    )]
    DiskSize {
        slot: usize,
        path: PathBuf,
        size: u64,
        saved: u64,
    },
    /// A disk changed since the snapshot was saved.
    #[error(
        "disk {} changed since the snapshot was saved (modified {}, the snapshot recorded {}): \
         the restored guest would see data it never wrote. Restore onto the disk as it was \
         saved, or point the slot at another image with --disk",
        path.display(),
        format_time(*now),
        format_time(*saved)
    )]
    DiskChanged {
        path: PathBuf,
        now: Duration,
        saved: Duration,
    },
    /// A snapshot-mode disk's saved writes cannot be put back.
    #[error("disk {}: cannot restore the writes saved with the machine: {source}", path.display())]
    Overlay {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The devices' saved state does not fit the machine.
    #[error("snapshot {}: the saved device state does not fit: {source}", path.display())]
    Devices { path: PathBuf, source: StateError },
    /// The machine could not be built.
    #[error("{0}")]
    System(#[from] SystemError),
    /// A bad `--expect`/`--save` combination.
    #[error("{0}")]
    Script(#[from] ScriptError),
    /// `--save` names a disk of the machine.
    #[error("--save {} is the disk {}; refusing to overwrite it", path.display(), disk.display())]
    SaveOverDisk { path: PathBuf, disk: PathBuf },
    /// An option a deterministic run refuses (`--gdb`).
    #[error("{0}")]
    NotDeterministic(#[from] super::boot::BootError),
    /// `--seed` for a snapshot of a deterministic run, whose entropy generator is restored.
    #[error(
        "snapshot {}: saved from a deterministic run, whose entropy device goes on from its \
         saved state; --seed does not apply",
        path.display()
    )]
    SeedForDeterministicSnapshot { path: PathBuf },
    /// `--console-log` cannot be written, or names the snapshot or a disk.
    #[error("--console-log {}: {reason}", path.display())]
    ConsoleLog { path: PathBuf, reason: String },
}

/// Seconds.nanoseconds since the epoch, for messages.
fn format_time(t: Duration) -> String {
    format!(
        "{}.{:09} s after the Unix epoch",
        t.as_secs(),
        t.subsec_nanos()
    )
}

/// Open the snapshot's disks: saved paths, or `--disk` replacements.
fn open_disks(
    snapshot: &snapshot::Snapshot,
    replacements: &[PathBuf],
) -> Result<Vec<VirtioBlk>, RestoreError> {
    if replacements.len() > snapshot.disks.len() {
        return Err(RestoreError::TooManyDisks {
            given: replacements.len(),
            saved: snapshot.disks.len(),
        });
    }
    let mut disks = Vec::new();
    for (slot, record) in snapshot.disks.iter().enumerate() {
        let replaced = replacements.get(slot);
        let path = replaced.unwrap_or(&record.path).clone();
        let mut disk = Disk::open(&path, record.options)?;
        if disk.size() != record.size {
            return Err(RestoreError::DiskSize {
                slot,
                path,
                size: disk.size(),
                saved: record.size,
            });
        }
        if replaced.is_none() {
            let now = disk
                .modified()
                .map(|t| t.duration_since(UNIX_EPOCH).unwrap_or_default())
                .map_err(|source| RestoreError::Overlay {
                    path: path.clone(),
                    source,
                })?;
            if now != record.modified {
                return Err(RestoreError::DiskChanged {
                    path,
                    now,
                    saved: record.modified,
                });
            }
        }
        for (offset, data) in &record.overlay {
            disk.restore_overlay_chunk(*offset, data)
                .map_err(|source| RestoreError::Overlay {
                    path: path.clone(),
                    source,
                })?;
        }
        disks.push(VirtioBlk::new(disk));
    }
    Ok(disks)
}

/// Open `--console-log`, refusing the snapshot itself and the disks.
fn open_console_log(
    opts: &RestoreOptions,
    disks: &[VirtioBlk],
) -> Result<Option<File>, RestoreError> {
    let Some(path) = &opts.console_log else {
        return Ok(None);
    };
    let identity = crate::hostfile::file_identity;
    let refuse = |reason: String| RestoreError::ConsoleLog {
        path: path.clone(),
        reason,
    };
    if let Some(id) = identity(path) {
        if identity(&opts.snapshot) == Some(id) {
            return Err(refuse("is the snapshot being restored".into()));
        }
        if let Some(blk) = disks.iter().find(|d| identity(d.disk().path()) == Some(id)) {
            return Err(refuse(format!(
                "is the disk {}",
                blk.disk().path().display()
            )));
        }
    }
    File::create(path)
        .map(Some)
        .map_err(|e| refuse(e.to_string()))
}

/// Restore and run; returns the process exit status.
pub fn run(opts: &RestoreOptions) -> Result<i32, RestoreError> {
    let deadline = arm_deadline(opts.timeout);
    let started = Instant::now();
    let mut snapshot = snapshot::read(&opts.snapshot)?;
    let (memory, firmware) = (snapshot.memory, snapshot.firmware);
    let power_on = snapshot.power_on.take().map(Arc::new);
    // A deterministic run's snapshot goes on deterministically; a normal one may be asked to.
    let deterministic = (snapshot.deterministic.is_some() || opts.deterministic)
        .then(|| Deterministic::new(opts.seed.unwrap_or(super::determinism::DEFAULT_SEED)));
    if deterministic.is_some() {
        super::boot::check_deterministic(false, false, false, opts.gdb.is_some())?;
        if snapshot.deterministic.is_some() && opts.seed.is_some() {
            return Err(RestoreError::SeedForDeterministicSnapshot {
                path: opts.snapshot.clone(),
            });
        }
    }
    let disks = open_disks(&snapshot, &opts.disks)?;
    let console_log = open_console_log(opts, &disks)?;
    if let Some(path) = &opts.save {
        let identity = crate::hostfile::file_identity;
        if let Some(id) = identity(path) {
            if let Some(blk) = disks.iter().find(|d| identity(d.disk().path()) == Some(id)) {
                return Err(RestoreError::SaveOverDisk {
                    path: path.clone(),
                    disk: blk.disk().path().to_path_buf(),
                });
            }
        }
    }
    let script = match &opts.save {
        Some(_) => opts.script.clone().save_at_end()?,
        None => opts.script.clone(),
    };
    let mut connections = Connections::open(
        console_log,
        script,
        opts.save.clone(),
        deterministic.is_none(),
    );
    // The machine as saved (its devices, not their state): for the restore and each reboot.
    let new_machine = |disks, deterministic| -> Result<System, SystemError> {
        let mut system = System::new(
            memory,
            firmware,
            connections.console.clone(),
            connections.console_input.clone(),
            connections.requests.clone(),
            disks,
            HostDevices::default(),
            deterministic,
        )?;
        system.deadline = deadline;
        Ok(system)
    };
    let mut system = new_machine(disks, deterministic)?;
    snapshot.load_ram(&mut system.ram)?;
    let mut hart = Hart::new();
    if deterministic.is_some() {
        // The clock counts retired instructions from the saved value on.
        hart.clock.set_deterministic(true, 0);
    }
    hart.restore(&snapshot.hart);
    // The RTC keeps its saved time as an offset from its clock: the virtual one must read
    // the restored machine's time first.
    system.note_virtual_time(&hart);
    let mut devices = StateReader::new(&snapshot.devices);
    system
        .restore_devices(&mut devices)
        .and_then(|()| devices.finish("the devices"))
        .map_err(|source| RestoreError::Devices {
            path: opts.snapshot.clone(),
            source,
        })?;
    if let Some(entropy) = snapshot.deterministic.as_ref().and_then(|d| d.entropy) {
        system.set_entropy_state(entropy);
    }
    system.sample_devices(&mut hart);
    system.set_power_on_image(power_on.clone());
    // The prompt the guest printed before the save is on the console still: let the script
    // see it.
    connections.console.replay(&snapshot.console_line);
    tracing::info!(elapsed = ?started.elapsed(), path = %opts.snapshot.display(), "machine restored");
    drop(snapshot);

    let mut engine = Engine::new(EngineConfig {
        deterministic: deterministic.is_some(),
        ..opts.engine.clone()
    });
    let mut gdb = opts
        .gdb
        .as_ref()
        .map(crate::gdb::GdbServer::listen)
        .transpose()?;
    // Instructions retired by the machines before the last guest reset (the restored one's
    // count included), for statistics.
    let mut retired_before_reset: u64 = 0;
    let mut resets: u64 = 0;
    // `--max-insns` counts from the restore, not from the saved machine's first instruction.
    let restored_at = hart.instret;
    let mut deterministic = deterministic;
    let status = loop {
        let (back, stop) = connections.run(
            &mut engine,
            &mut hart,
            system,
            retired_before_reset,
            |engine, hart, system| {
                let retired = retired_before_reset
                    .wrapping_add(hart.instret)
                    .wrapping_sub(restored_at);
                let remaining = opts.max_insns.map(|n| n.saturating_sub(retired));
                crate::gdb::run(gdb.as_mut(), engine, hart, system, remaining)
            },
        );
        system = back;
        system.flush_console();
        // Data the guest wrote reaches the disk files, whatever ended the run.
        let disks = system.take_disks();
        // A reset never hides what the host asked for (as in `boot`).
        let stop = match stop {
            Stop::Reset => system.take_host_stop().unwrap_or(Stop::Reset),
            stop => stop,
        };
        match stop {
            Stop::Reset if opts.no_reboot => {
                tracing::info!("guest requested a reset: stopping (--no-reboot)");
                break connections.console.exit_status(0);
            }
            Stop::Reset => {
                let Some(image) = power_on.as_ref() else {
                    // A snapshot without a power-on image (none is written today): there is
                    // nothing to boot again.
                    tracing::warn!("the restored guest asked for a reboot: stopping instead");
                    break connections.console.exit_status(0);
                };
                resets += 1;
                retired_before_reset = retired_before_reset.wrapping_add(hart.instret);
                deterministic = deterministic.map(|d| d.after_reset(hart.time()));
                tracing::info!(resets, "guest requested a reset: rebooting");
                let mut next = new_machine(disks, deterministic)?;
                hart = next
                    .power_on(Arc::clone(image))
                    .map_err(|e| RestoreError::PowerOn {
                        path: opts.snapshot.clone(),
                        address: e.address,
                        size: e.size,
                    })?;
                if deterministic.is_some() {
                    // Time is retired instructions, from 0 at power-on (as in `boot`).
                    hart.clock.set_deterministic(true, 0);
                    hart.set_time(0);
                }
                // Blocks are keyed by host addresses of the previous machine's RAM.
                engine.flush_code(&mut hart);
                system = next;
            }
            Stop::Exit(code) => break connections.console.exit_status(code),
            Stop::InsnLimit | Stop::Stats | Stop::Pause | Stop::Debug => break Ok(124),
            Stop::Fatal { status, message } => break Err((status, message)),
        }
    };
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
