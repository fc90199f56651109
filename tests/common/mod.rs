//! Helpers shared by the integration tests in `tests/`.
//!
//! Each integration test binary compiles this module separately and uses a
//! different subset of it, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod console;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Execution tiers that every ISA test runs under (`rv32vm ... --tier NAME`).
///
/// Every tier this build has (tier 1 and tier 2 exist on x86-64 with the `t1` and `t2`
/// features), and the default policy that mixes them (which is the interpreter alone, and not
/// run twice, in a build without compiling tiers).
pub const TIERS: &[&str] = &[
    "interp",
    #[cfg(all(feature = "t1", target_arch = "x86_64"))]
    "t1",
    #[cfg(all(feature = "t2", target_arch = "x86_64"))]
    "t2",
    #[cfg(all(any(feature = "t1", feature = "t2"), target_arch = "x86_64"))]
    "auto",
];

/// The `rv32vm` options that run a program in `tier` for a test of code generation. Plain
/// `--tier t2` runs cold code in tier 1 and gives regions only to hot blocks, so under `t2`
/// this adds `--t2-threshold 0` (a region at every block before it first runs): every
/// instruction of the program runs in tier 2.
pub fn tier_args(tier: &str) -> Vec<&str> {
    let mut args = vec!["--tier", tier];
    if tier == "t2" {
        args.extend(["--t2-threshold", "0"]);
    }
    args
}

/// How often a running child is polled for exit.
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// The root of the `rv32vm` package (where `Cargo.toml` and `tests/` live).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What a child process did when run with [`run_with_timeout`].
#[derive(Debug)]
pub struct RunOutcome {
    /// The exit status, or `None` if the time limit was hit and the child
    /// was killed.
    pub status: Option<ExitStatus>,
    /// Everything the child wrote to stdout (lossily decoded).
    pub stdout: String,
    /// Everything the child wrote to stderr (lossily decoded).
    pub stderr: String,
    /// Wall-clock time until exit or kill.
    pub elapsed: Duration,
}

impl RunOutcome {
    /// True if the child was killed for running past its time limit.
    pub fn timed_out(&self) -> bool {
        self.status.is_none()
    }

    /// True if the child exited on its own with status 0.
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|status| status.success())
    }

    /// A one-line description of how the child ended.
    pub fn describe_end(&self) -> String {
        match self.status {
            None => format!("killed after the time limit ({:.1?})", self.elapsed),
            Some(status) => match status.code() {
                Some(code) => format!("exit status {code}"),
                None => format!("ended by a signal ({status})"),
            },
        }
    }
}

/// Runs `command` with stdin closed and stdout/stderr captured, killing it
/// if it has not exited after `limit`.
pub fn run_with_timeout(command: &mut Command, limit: Duration) -> std::io::Result<RunOutcome> {
    let raw = run_capturing_bytes(command, limit)?;
    Ok(RunOutcome {
        status: raw.status,
        stdout: String::from_utf8_lossy(&raw.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&raw.stderr).into_owned(),
        elapsed: raw.elapsed,
    })
}

/// What [`run_capturing_bytes`] saw: the exit status (`None` if killed at the
/// time limit), the raw output bytes and the elapsed time.
pub struct RawOutcome {
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

/// Runs `command` with stdin closed and stdout/stderr captured as bytes,
/// killing it if it has not exited after `limit`.
pub fn run_capturing_bytes(command: &mut Command, limit: Duration) -> std::io::Result<RawOutcome> {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    // A process group of its own, so the time limit kills whatever the child forked too
    // (a forked guest process that holds stdout open would keep the capture waiting).
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    // Drain both pipes on their own threads so a chatty child cannot block
    // on a full pipe while we wait for it.
    let stdout_reader = drain(child.stdout.take());
    let stderr_reader = drain(child.stderr.take());
    let status = wait_until(&mut child, started + limit)?;
    Ok(RawOutcome {
        status,
        stdout: join_output(stdout_reader),
        stderr: join_output(stderr_reader),
        elapsed: started.elapsed(),
    })
}

/// Waits for `child` until `deadline`; kills it and returns `None` after.
fn wait_until(child: &mut Child, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            // The child may exit between try_wait and kill; either way it
            // is reaped by the wait below. Its whole group goes (see `run_capturing_bytes`).
            // SAFETY: kill has no memory effects; the group is the child's own.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.kill();
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Option<JoinHandle<Vec<u8>>> {
    pipe.map(|mut pipe| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            // A read error just ends the capture early; the exit status is
            // what the tests judge.
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    })
}

fn join_output(reader: Option<JoinHandle<Vec<u8>>>) -> Vec<u8> {
    reader
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default()
}

/// Fails the test with an install hint unless `program` can be started.
pub fn require_tool(program: &str, version_arg: &str, apt_package: &str) {
    let found = Command::new(program)
        .arg(version_arg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        found,
        "`{program}` is not installed; install the Debian package {apt_package} \
         (apt-get install -y {apt_package})"
    );
}

/// The last `max_lines` lines of `text`, for failure messages.
pub fn tail(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(max_lines);
    lines[start..].join("\n")
}

/// Files directly in `dir` whose name ends with `.{extension}`, sorted.
pub fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == extension))
        .collect();
    files.sort();
    files
}

/// Build the M-mode test program `tests/priv/<src>` (with `tests/priv/include` and
/// `tests/priv/link.ld`) into `elf` and its raw image `bin` for `--bios`, with `extra` compiler
/// arguments (e.g. `-DQEMU_ORACLE`).
pub fn build_priv_program(src: &Path, elf: &Path, bin: &Path, extra: &[&str]) {
    require_tool(
        "riscv64-linux-gnu-gcc",
        "--version",
        "gcc-riscv64-linux-gnu",
    );
    let dir = repo_root().join("tests/priv");
    let status = Command::new("riscv64-linux-gnu-gcc")
        .args([
            "-march=rv32gc_zicsr_zifencei",
            "-mabi=ilp32",
            "-mno-relax",
            "-nostdlib",
            "-nostartfiles",
            "-static",
            "-fno-pic",
            "-no-pie",
            "-Wl,--build-id=none",
            "-Wl,--no-warn-rwx-segments",
        ])
        .args(extra)
        .arg("-I")
        .arg(dir.join("include"))
        .arg("-T")
        .arg(dir.join("link.ld"))
        .arg("-o")
        .arg(elf)
        .arg(src)
        .status()
        .expect("run riscv64-linux-gnu-gcc");
    assert!(status.success(), "building {}", src.display());
    let status = Command::new("riscv64-linux-gnu-objcopy")
        .args(["-O", "binary"])
        .arg(elf)
        .arg(bin)
        .status()
        .expect("run riscv64-linux-gnu-objcopy");
    assert!(status.success(), "objcopy {}", elf.display());
}
