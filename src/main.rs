//! The `rv32vm` command line: parse arguments, build a user-mode process or a bare-metal
//! machine, run it, and map the outcome to an exit status.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use rv32vm::exec::{EngineConfig, Tier};
use rv32vm::machine::console::Script;
use rv32vm_devices::virtio::{DiskOptions, HostForward, NetOptions, ShareOptions};

/// With no subcommand, the options are `boot`'s: `rv32vm --share .` boots the bundled images.
#[derive(Parser)]
#[command(
    name = "rv32vm",
    version,
    about = "A 32-bit RISC-V virtual machine",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    boot: BootArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run a static RV32 Linux program in user mode (like qemu-riscv32), or a bare-metal test
    /// program with --bare.
    Run(RunArgs),
    /// Boot a Linux kernel (system mode) on the virt-like machine.
    Boot(Box<BootArgs>),
    /// Resume a machine saved with `boot --save` (or Ctrl-A S) exactly where it was saved.
    Restore(RestoreArgs),
}

#[derive(Args)]
struct BootArgs {
    /// Kernel: a RISC-V Image or an ELF (default: the bundled images/Image).
    #[arg(long, value_name = "FILE")]
    kernel: Option<PathBuf>,
    /// Initial ramdisk, e.g. images/initramfs.cpio.gz.
    #[arg(long, value_name = "FILE")]
    initrd: Option<PathBuf>,
    /// A virtio-blk disk backed by FILE (raw image); `ro` makes it read-only, `snapshot` keeps
    /// the guest's writes in an unlinked temporary file so FILE never changes. Repeat for more disks (vda, vdb,
    /// ...). With neither --disk nor --initrd, the bundled kernel gets the bundled
    /// images/rootfs.ext2 as a snapshot disk.
    #[arg(long, value_name = "FILE[,ro][,snapshot]", value_parser = parse_disk)]
    disk: Vec<(PathBuf, DiskOptions)>,
    /// Share the host directory HOSTDIR with the guest over virtio-9p, under mount tag TAG
    /// (default `host`; the bundled images mount `host` on /mnt/host). `ro` refuses every
    /// change (EROFS). The guest cannot reach outside HOSTDIR; what it creates belongs to the
    /// user running rv32vm. Repeat for more shares.
    #[arg(long, value_name = "HOSTDIR[,tag=TAG][,ro]", value_parser = parse_share)]
    share: Vec<(PathBuf, ShareOptions)>,
    /// A virtio-net card on a user-mode network (libslirp, as QEMU's `-netdev user`): the guest
    /// gets 10.0.2.15 by DHCP, 10.0.2.2 is the host. `hostfwd=tcp:[HOSTADDR]:HOSTPORT-:GUESTPORT`
    /// forwards a host port (on 127.0.0.1 unless HOSTADDR says otherwise) into the guest;
    /// repeat it for more ports. Without --net the guest has no network card.
    #[arg(long, value_name = "user[,hostfwd=tcp:[HOSTADDR]:HOSTPORT-:GUESTPORT]...", value_parser = parse_net)]
    net: Option<NetOptions>,
    /// Serve the guest's semihosting calls (as QEMU's `-semihosting`): console and host file
    /// I/O, the time, the command line (the kernel's path and --append) and exit with a
    /// status, for bare-metal programs such as picolibc's `--oslib=semihost` ones (with
    /// `--bios none`).
    #[arg(long)]
    semihosting: bool,
    /// Kernel command line (default: `console=ttyS0`, plus `root=/dev/vda rw` when booting
    /// from a disk without an initrd).
    #[arg(long, value_name = "ARGS")]
    append: Option<String>,
    /// Guest RAM, e.g. 256M or 1G.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    memory: u32,
    /// Firmware: `builtin` (rv32vm's SBI), an M-mode firmware file such as OpenSBI
    /// fw_dynamic.bin, or `none` (as QEMU's `-bios none`: the kernel itself runs in M-mode, a
    /// bare-metal program for the machine).
    #[arg(long, value_name = "builtin|none|FILE", default_value = "builtin")]
    bios: String,
    /// Use this device tree instead of the generated one.
    #[arg(long, value_name = "FILE")]
    dtb: Option<PathBuf>,
    /// Write the device tree the guest gets to FILE.
    #[arg(long, value_name = "FILE")]
    dump_dtb: Option<PathBuf>,
    #[command(flatten)]
    session: SessionArgs,
}

/// What `boot` and `restore` share: how the session runs, is scripted, saved and stopped.
#[derive(Args)]
struct SessionArgs {
    /// Stop after this many seconds of wall-clock time (exit status 124).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    #[command(flatten)]
    engine: EngineArgs,
    /// Print engine statistics to stderr at exit.
    #[arg(long)]
    stats: bool,
    /// Wait until the console shows PATTERN (literal text, or `re:REGEX`), then type the
    /// matching --send. Given in pairs with --send, in order. After `restore`, the line the
    /// console showed when the machine was saved (its prompt) counts as output, so a script
    /// may start with the prompt it was saved at.
    #[arg(long, value_name = "PATTERN")]
    expect: Vec<String>,
    /// Text to type (followed by Enter) once the matching --expect pattern has appeared.
    /// Escapes: \n \r \t \\ \xHH.
    #[arg(long, value_name = "TEXT")]
    send: Vec<String>,
    /// Also write everything the guest prints on the console to FILE.
    #[arg(long, value_name = "FILE")]
    console_log: Option<PathBuf>,
    /// When the last --expect pattern (one without --send) appears, save the whole machine
    /// to FILE and exit with status 0. `rv32vm restore FILE` resumes it.
    #[arg(long, value_name = "FILE", requires = "expect")]
    save: Option<PathBuf>,
    /// Stop after exactly this many instructions (exit status 124); on `restore`, counted
    /// from the restore.
    #[arg(long, value_name = "N")]
    max_insns: Option<u64>,
    /// Exit (status 0) when the guest resets instead of booting it again, as QEMU's
    /// -no-reboot: for a kernel that reboots when it panics (`panic=-1`) or when its test ends.
    #[arg(long)]
    no_reboot: bool,
    /// Make the run depend only on its inputs, never on the host: guest time counts retired
    /// instructions (WFI jumps to the next timer), the RTC starts at 2026-01-01T00:00:00Z,
    /// the entropy device is seeded (--seed), and console input comes only from --send.
    /// Two runs with the same inputs print the same console output byte for byte.
    /// --share, --net, --semihosting and --gdb are refused. A snapshot saved from a deterministic run
    /// always goes on deterministically.
    #[arg(long)]
    deterministic: bool,
    /// With --deterministic: the entropy device's seed (default 0).
    #[arg(long, value_name = "N", requires = "deterministic")]
    seed: Option<u64>,
    #[command(flatten)]
    gdb: GdbArgs,
}

impl SessionArgs {
    fn script(&self) -> Result<Script, rv32vm::machine::console::ScriptError> {
        Script::new(&self.expect, &self.send)
    }

    fn timeout(&self) -> Option<std::time::Duration> {
        self.timeout.map(std::time::Duration::from_secs)
    }
}

/// The GDB stub's options, shared by every command that runs a guest.
#[derive(Args)]
struct GdbArgs {
    /// Serve gdb's remote protocol on TCP [HOST:]PORT (host 127.0.0.1 unless given); gdb
    /// attaches with `target remote HOST:PORT` at any time.
    #[arg(long, value_name = "[HOST:]PORT")]
    gdb: Option<String>,
    /// With --gdb: stop before the first instruction until gdb attaches and continues.
    #[arg(long, requires = "gdb")]
    gdb_wait: bool,
}

impl GdbArgs {
    fn options(&self) -> Option<rv32vm::gdb::GdbOptions> {
        self.gdb.as_ref().map(|address| rv32vm::gdb::GdbOptions {
            address: address.clone(),
            wait: self.gdb_wait,
        })
    }
}

#[derive(Args)]
struct RestoreArgs {
    /// The snapshot file (written by `boot --save` or Ctrl-A S).
    snapshot: PathBuf,
    /// Use FILE for the next disk slot (vda, then vdb, ...) instead of the image the snapshot
    /// recorded; it must have the same size. Its mode (ro, snapshot) is the saved disk's.
    #[arg(long, value_name = "FILE")]
    disk: Vec<PathBuf>,
    #[command(flatten)]
    session: SessionArgs,
}

fn restore(args: RestoreArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let session = args.session;
    let opts = rv32vm::machine::restore::RestoreOptions {
        snapshot: args.snapshot,
        timeout: session.timeout(),
        engine: session.engine.config(),
        stats: session.stats,
        script: session.script()?,
        console_log: session.console_log,
        disks: args.disk,
        save: session.save,
        max_insns: session.max_insns,
        no_reboot: session.no_reboot,
        gdb: session.gdb.options(),
        deterministic: session.deterministic,
        seed: session.seed,
    };
    Ok(rv32vm::machine::restore::run(&opts)?)
}

/// Parse a memory size: bytes, or a number with K, M or G.
fn parse_size(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size (examples: 256M, 1G)"))?;
    n.checked_mul(mult)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("`{text}` is too large (at most 2G... of 32-bit guest RAM)"))
}

/// Where the bundled images live: $RV32VM_IMAGES, next to the repository the binary was built
/// in, or ./images.
fn images_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RV32VM_IMAGES") {
        return PathBuf::from(dir);
    }
    let built_in = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("images");
    if built_in.join("Image").exists() {
        return built_in;
    }
    PathBuf::from("images")
}

/// Parse `--disk FILE[,ro][,snapshot]`.
fn parse_disk(text: &str) -> Result<(PathBuf, DiskOptions), String> {
    let mut parts = text.split(',');
    let path = parts
        .next()
        .filter(|p| !p.is_empty())
        .ok_or("--disk needs a file name")?;
    let mut options = DiskOptions::default();
    for flag in parts {
        match flag {
            "ro" => options.read_only = true,
            "snapshot" => options.snapshot = true,
            other => {
                return Err(format!(
                    "unknown disk option `{other}` (known: ro, snapshot)"
                ))
            }
        }
    }
    Ok((PathBuf::from(path), options))
}

/// Parse `--share HOSTDIR[,tag=TAG][,ro]`.
fn parse_share(text: &str) -> Result<(PathBuf, ShareOptions), String> {
    let mut parts = text.split(',');
    let dir = parts
        .next()
        .filter(|p| !p.is_empty())
        .ok_or("--share needs a directory")?;
    let mut options = ShareOptions::default();
    let mut tagged = false;
    for flag in parts {
        match flag.split_once('=') {
            Some(("tag", _)) if tagged => {
                return Err(format!("--share {text}: give one tag=TAG per share"))
            }
            Some(("tag", tag)) => {
                tagged = true;
                if !rv32vm_devices::virtio::fs9p::is_valid_tag(tag) {
                    return Err(format!(
                        "bad mount tag `{tag}`: use 1 to {} letters, digits, `_`, `-` or `.`",
                        rv32vm_devices::virtio::fs9p::MAX_TAG_LEN
                    ));
                }
                options.tag = tag.to_string();
            }
            None if flag == "ro" => options.read_only = true,
            _ => {
                return Err(format!(
                    "unknown share option `{flag}` (known: tag=TAG, ro)"
                ))
            }
        }
    }
    Ok((PathBuf::from(dir), options))
}

/// Parse `--net user[,hostfwd=...]...`.
fn parse_net(text: &str) -> Result<NetOptions, String> {
    let mut parts = text.split(',');
    match parts.next() {
        Some("user") => {}
        other => {
            return Err(format!(
                "unknown network mode `{}` (known: user)",
                other.unwrap_or_default()
            ))
        }
    }
    let mut options = NetOptions::default();
    for part in parts {
        match part.split_once('=') {
            Some(("hostfwd", spec)) => {
                let forward: HostForward = spec.parse().map_err(|e| format!("hostfwd: {e}"))?;
                options.forwards.push(forward);
            }
            _ => {
                return Err(format!(
                    "unknown --net option `{part}` (known: hostfwd=...)"
                ))
            }
        }
    }
    Ok(options)
}

fn boot(args: BootArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let images = images_dir();
    let bundled = args.kernel.is_none();
    let kernel = args.kernel.unwrap_or_else(|| images.join("Image"));
    let mut disks = args.disk;
    if bundled && disks.is_empty() && args.initrd.is_none() {
        // The bundled root filesystem is never modified: its writes stay in memory.
        let snapshot = DiskOptions {
            read_only: false,
            snapshot: true,
        };
        disks.push((images.join("rootfs.ext2"), snapshot));
    }
    let initrd = args.initrd;
    let bios = match args.bios.as_str() {
        "builtin" => rv32vm::machine::boot::Bios::Builtin,
        "none" => rv32vm::machine::boot::Bios::None,
        file => rv32vm::machine::boot::Bios::File(PathBuf::from(file)),
    };
    let session = args.session;
    let opts = rv32vm::machine::boot::BootOptions {
        kernel,
        initrd,
        append: args.append,
        memory: args.memory,
        bios,
        semihosting: args.semihosting,
        dtb: args.dtb,
        dump_dtb: args.dump_dtb,
        timeout: session.timeout(),
        engine: session.engine.config(),
        stats: session.stats,
        script: session.script()?,
        console_log: session.console_log,
        disks,
        shares: args.share,
        net: args.net,
        save: session.save,
        max_insns: session.max_insns,
        no_reboot: session.no_reboot,
        gdb: session.gdb.options(),
        deterministic: session.deterministic.then(|| {
            session
                .seed
                .unwrap_or(rv32vm::machine::determinism::DEFAULT_SEED)
        }),
    };
    Ok(rv32vm::machine::boot::run(&opts)?)
}

#[derive(Args)]
struct RunArgs {
    /// Run a bare-metal ELF in M-mode; it talks to the host through the HTIF `tohost` word
    /// (exit, syscall proxy, console) or semihosting, and ARGS are its semihosting command line.
    /// An ELF with a `tohost` symbol runs this way without it.
    #[arg(long)]
    bare: bool,
    /// Bare metal: write the words between begin_signature and end_signature to FILE.
    #[arg(long, value_name = "FILE")]
    signature: Option<PathBuf>,
    /// Stop after exactly this many instructions (exit status 124).
    #[arg(long, value_name = "N")]
    max_insns: Option<u64>,
    /// Let misaligned loads and stores go to the host directly instead of trapping (the
    /// default with --bare).
    #[arg(short = 'm', long)]
    allow_misaligned: bool,
    /// Bare metal: misaligned loads and stores raise address-misaligned exceptions for the
    /// program's handler, instead of being performed as under QEMU (and Spike --misaligned).
    #[arg(long, conflicts_with = "allow_misaligned")]
    trap_misaligned: bool,
    /// Compiled code checks every load and store. Without it, a program whose code is all
    /// user-level and that handles neither SIGSEGV nor SIGBUS runs with loads and stores that
    /// go straight to guest memory, the host's page protection catching bad ones (fatal, as
    /// the signal would be); stores into code are then seen at the next fence.i.
    #[arg(long)]
    checked_memory: bool,
    #[command(flatten)]
    engine: EngineArgs,
    /// Print engine statistics to stderr at exit.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    gdb: GdbArgs,
    /// The ELF program.
    program: PathBuf,
    /// Arguments passed to the program.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Engine options shared by `run` and `boot`.
#[derive(Args)]
struct EngineArgs {
    /// Execution tier: `auto` (interpreter, then tier 1 for blocks that ran --t1-threshold
    /// times, then tier 2 regions compiled in the background for blocks that stay hot),
    /// `interp` (interpreter only), `t1` (compile every block with tier 1 before it first
    /// runs) or `t2` (tier 1 for every block, and a tier-2 region compiled before a block
    /// runs again once it proves hot, or in the background while tier 1 runs it if the block
    /// is already where the guest spends its time; see --t2-threshold).
    #[arg(long, default_value = "auto", value_parser = parse_tier)]
    tier: Tier,
    /// With --tier auto: compile a block after it ran this many times.
    #[arg(long, value_name = "N", default_value_t = rv32vm::exec::DEFAULT_T1_THRESHOLD)]
    t1_threshold: u32,
    /// With --tier auto: ask tier 2 for a region at a block after this many more entries
    /// from the run loop (default 256; supervisor code, a kernel's, after 16 times as
    /// many). With --tier t2: compile a region at a block, before
    /// it runs again (in the background if long runs already keep ending at it), after this
    /// many entries from the run loop (default 4096; 0: a region at every block before it
    /// first runs, tier 1 off). Under both, a block of user code where long runs of tier-1
    /// code keep ending (a loop tier 1 chains into itself) asks in the background sooner.
    #[arg(long, value_name = "N")]
    t2_threshold: Option<u32>,
    /// How hard tier 2's LLVM optimises regions: `full` (O2; the default under auto) or
    /// `fast` (no IR passes, O0 code generation; the default under --tier t2).
    #[arg(long, value_name = "full|fast", value_parser = parse_t2_opt)]
    t2_opt: Option<rv32vm::exec::T2Opt>,
    /// Do not chain compiled blocks with patched jumps.
    #[arg(long)]
    no_chain: bool,
    /// Do not fold constants within blocks (all tiers).
    #[arg(long)]
    no_constopt: bool,
    /// Do not fuse instruction sequences into macro-ops (all tiers).
    #[arg(long)]
    no_fuse: bool,
    /// Keep tier-2 regions in DIR across runs and load them from there instead of compiling
    /// them again (default: $RV32VM_CODE_CACHE, else $XDG_CACHE_HOME/rv32vm/code, else
    /// ~/.cache/rv32vm/code if the home directory exists; RV32VM_CODE_CACHE=off turns it off).
    #[arg(long, value_name = "DIR")]
    code_cache: Option<PathBuf>,
    /// Compile every tier-2 region; neither read nor write the code cache.
    #[arg(long, conflicts_with = "code_cache")]
    no_code_cache: bool,
}

impl EngineArgs {
    /// The engine configuration; opens the process's code cache (tier 2) as a side effect.
    fn config(&self) -> EngineConfig {
        self.open_code_cache();
        EngineConfig {
            tier: self.tier,
            t1_threshold: self.t1_threshold,
            t2_threshold: self.t2_threshold.unwrap_or(match self.tier {
                Tier::T2 => rv32vm::exec::DEFAULT_T2_THRESHOLD_SYNC,
                _ => rv32vm::exec::DEFAULT_T2_THRESHOLD,
            }),
            t2_reoptimise_threshold: rv32vm::exec::DEFAULT_T2_REOPTIMISE_THRESHOLD,
            t2_opt: self.t2_opt,
            chain: !self.no_chain,
            ir: rv32vm::exec::ir::IrOptions {
                constopt: !self.no_constopt,
                fuse: !self.no_fuse,
            },
            deterministic: false,
        }
    }

    /// The code cache directory the options and the environment ask for, if any, and whether
    /// it was named (by `--code-cache` or `RV32VM_CODE_CACHE`) rather than the default.
    #[cfg_attr(not(tier2), allow(dead_code))]
    fn code_cache_dir(&self) -> Option<(PathBuf, bool)> {
        if self.no_code_cache || self.tier == Tier::Interp || self.tier == Tier::T1 {
            return None;
        }
        if let Some(dir) = &self.code_cache {
            return Some((dir.clone(), true));
        }
        match std::env::var_os("RV32VM_CODE_CACHE") {
            Some(v) if v == "off" => None,
            Some(v) if !v.is_empty() => Some((PathBuf::from(v), true)),
            _ => {
                // Only under a home (or cache) directory that exists: never make one.
                let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
                    Some(cache) => PathBuf::from(cache),
                    None => {
                        let home = PathBuf::from(std::env::var_os("HOME")?);
                        home.is_dir().then(|| home.join(".cache"))?
                    }
                };
                base.is_absolute()
                    .then(|| (base.join("rv32vm").join("code"), false))
                    .filter(|_| base.is_dir() || base.parent().is_some_and(Path::is_dir))
            }
        }
    }

    /// Use the code cache [`Self::code_cache_dir`] names; a directory that cannot be made
    /// leaves it off, with a warning if the option or `RV32VM_CODE_CACHE` named it (the
    /// default is silent).
    fn open_code_cache(&self) {
        #[cfg(tier2)]
        if let Some((dir, named)) = self.code_cache_dir() {
            use rv32vm::exec::t2::code_cache;
            if let Err(e) = code_cache::set_code_cache(&dir, code_cache::DEFAULT_MAX_BYTES) {
                if named {
                    tracing::warn!("code cache {} off: {e}", dir.display());
                } else {
                    tracing::debug!("code cache {} off: {e}", dir.display());
                }
            }
        }
    }
}

fn parse_t2_opt(name: &str) -> Result<rv32vm::exec::T2Opt, String> {
    rv32vm::exec::T2Opt::from_name(name).ok_or_else(|| {
        format!("unknown tier-2 optimisation level `{name}` (available: full, fast)")
    })
}

fn parse_tier(name: &str) -> Result<Tier, String> {
    Tier::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Tier::ALL.iter().map(|(n, _)| *n).collect();
        format!("unknown tier `{name}` (available: {})", names.join(", "))
    })
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RV32VM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

fn exit_status(code: i32) -> u8 {
    code.clamp(0, 255) as u8
}

fn run(args: RunArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let engine = args.engine.config();
    // Read once: a bare-metal program is told by its symbols, and a Linux one is loaded
    // from the same bytes (a file unreadable here is reported by the loader).
    let image = (!args.bare)
        .then(|| rv32vm::user::map_program(&args.program).ok())
        .flatten();
    let bare = args.bare || image.as_deref().is_some_and(rv32vm::bare::is_htif_image);
    if bare && !args.bare {
        tracing::info!(
            "{}: has a `tohost` symbol: running it bare",
            args.program.display()
        );
    }
    if !bare && (args.signature.is_some() || args.trap_misaligned) {
        return Err(format!(
            "{}: --signature and --trap-misaligned are for bare-metal programs (--bare, or an \
             ELF with a `tohost` symbol)",
            args.program.display()
        )
        .into());
    }
    if bare {
        let opts = rv32vm::bare::BareOptions {
            program: args.program,
            args: args.args,
            signature: args.signature,
            max_insns: args.max_insns,
            engine,
            allow_misaligned: !args.trap_misaligned,
            stats: args.stats,
            gdb: args.gdb.options(),
        };
        return Ok(rv32vm::bare::run(&opts)?);
    }
    let opts = rv32vm::user::UserOptions {
        program: args.program,
        program_image: image,
        args: args.args,
        allow_misaligned: args.allow_misaligned,
        engine,
        max_insns: args.max_insns,
        stats: args.stats,
        gdb: args.gdb.options(),
        checked_memory: args.checked_memory,
    };
    Ok(rv32vm::user::run(opts)?)
}

/// Map a command's outcome to the process exit status, printing errors as one line.
fn report(outcome: Result<i32, Box<dyn std::error::Error>>) -> u8 {
    match outcome {
        Ok(code) => exit_status(code),
        Err(e) => {
            eprintln!("rv32vm: error: {e}");
            1
        }
    }
}

fn main() {
    init_tracing();
    // This process ends with `_exit` below: a guest's exit need not wait for a tier-2 region
    // still compiling.
    #[cfg(tier2)]
    rv32vm::exec::t2::worker::detach_on_drop();
    let cli = Cli::parse();
    let status = match cli.command {
        Some(Command::Run(args)) => report(run(args)),
        Some(Command::Boot(args)) => report(boot(*args)),
        // No subcommand: boot (the bundled images unless the options say otherwise).
        None => report(boot(cli.boot)),
        Some(Command::Restore(args)) => report(restore(args)),
    };
    // Every machine, disk, file and terminal guard has been dropped by now (disks flushed,
    // the terminal restored). End without the C++ destructors of LLVM's globals, which must
    // not run under a compile thread that may still be busy.
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` ends the process at once; what it skips (atexit handlers, static
    // destructors) holds nothing of ours that needs writing out.
    unsafe { libc::_exit(i32::from(status)) }
}
