//! Differential harness for user-mode guests: run the same static RV32 Linux program under
//! `qemu-riscv32` (the reference) and under `rv32vm run --tier T` for every tier in
//! [`crate::common::TIERS`], each in a fresh scratch directory with the same argv and
//! environment, and require identical stdout bytes and exit status.
//!
//! Missing tools (zig for building, qemu-riscv32 for the reference) fail the test with an
//! install hint: a comparison that cannot run must never look like a pass.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// How long one guest run may take before it is killed and the test fails. Generous because
/// tier 2 with `--t2-threshold 0` ([`crate::common::tier_args`]) compiles a region at every
/// block through LLVM before it runs, and a shell script forks
/// hundreds of processes that each compile their own new code (about 20x tier 1's time).
pub const RUN_TIME_LIMIT: Duration = Duration::from_secs(600);

/// Value of the one environment variable the `hello` guest prints.
pub const GUEST_TEST_VAR: &str = "value with spaces=and equals";

/// The root of the `rv32vm` package.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The rv32vm binary cargo built for this test run.
pub fn rv32vm_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rv32vm"))
}

/// What a child process did.
#[derive(Debug)]
pub struct Outcome {
    /// Exit status, or `None` if the time limit was hit and the child was killed.
    pub status: Option<ExitStatus>,
    /// Raw stdout bytes.
    pub stdout: Vec<u8>,
    /// Raw stderr bytes (shown in failure messages, never compared).
    pub stderr: Vec<u8>,
    /// Wall-clock time until exit or kill.
    pub elapsed: Duration,
}

impl Outcome {
    /// A one-line description of how the child ended, comparable between runners.
    pub fn end(&self) -> String {
        match self.status {
            None => format!("killed after the time limit ({:.0?})", self.elapsed),
            Some(status) => match status.code() {
                Some(code) => format!("exit status {code}"),
                None => {
                    use std::os::unix::process::ExitStatusExt;
                    format!("killed by signal {}", status.signal().unwrap_or(0))
                }
            },
        }
    }
}

/// Runs `command` with stdin from /dev/null and stdout/stderr captured as bytes, killing it
/// after `limit`.
pub fn run_captured(command: &mut Command, limit: Duration) -> std::io::Result<Outcome> {
    let raw = crate::common::run_capturing_bytes(command, limit)?;
    Ok(Outcome {
        status: raw.status,
        stdout: raw.stdout,
        stderr: raw.stderr,
        elapsed: raw.elapsed,
    })
}

/// Finds `program` in this process's `PATH` (the guests run with a different `PATH`).
fn find_in_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// The `qemu-riscv32` binary; fails the test with an install hint if it is missing.
pub fn require_qemu() -> PathBuf {
    let qemu = find_in_path("qemu-riscv32");
    let works = qemu.as_ref().is_some_and(|qemu| {
        Command::new(qemu)
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    });
    match qemu {
        Some(qemu) if works => qemu,
        _ => panic!(
            "qemu-riscv32 (the reference for these comparisons) is not installed: \
             apt-get install -y qemu-user"
        ),
    }
}

/// Fails the test unless zig can be run as `python3 -m ziglang`.
pub fn require_zig() {
    let found = Command::new("python3")
        .args(["-m", "ziglang", "version"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        found,
        "zig (the riscv32-linux-musl C compiler for the guest programs) is not installed: \
         pip install ziglang"
    );
}

/// Runs a build script from `scripts/` once per test binary; later callers get the cached
/// result. Panics (failing the test) with the script's output if it fails.
fn run_build_script(cache: &'static OnceLock<Result<(), String>>, script: &str) {
    let result = cache.get_or_init(|| {
        let path = repo_root().join("scripts").join(script);
        let output = Command::new("bash")
            .arg(&path)
            .current_dir(repo_root())
            .stdin(Stdio::null())
            .output()
            .map_err(|error| format!("cannot run {}: {error}", path.display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} failed ({}):\n{}\n{}",
                path.display(),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    });
    if let Err(message) = result {
        panic!("{message}");
    }
}

/// Builds every `tests/guest/*.c` (incrementally) and returns `target/guest`.
pub fn build_guests() -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    require_zig();
    run_build_script(&BUILT, "build-guest.sh");
    repo_root().join("target/guest")
}

/// Builds busybox (skipped when up to date) and returns the path of the binary.
pub fn build_busybox() -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    require_zig();
    run_build_script(&BUILT, "build-busybox.sh");
    repo_root().join("target/busybox/busybox")
}

/// A fresh, empty directory under `target/guest-runs/`, removed when dropped.
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Creates `target/guest-runs/LABEL-PID-N`.
    pub fn new(label: &str) -> ScratchDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = repo_root()
            .join("target/guest-runs")
            .join(format!("{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", path.display()));
        ScratchDir { path }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: a guest may have left a read-only file; the directory lives in target/.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Which emulator runs the guest.
#[derive(Clone, Debug)]
pub enum Runner {
    /// `qemu-riscv32 PROGRAM ARGS...`
    Qemu,
    /// `rv32vm run --tier TIER [-m] -- PROGRAM ARGS...` (`--t2-threshold 0` with `t2`: see
    /// [`crate::common::tier_args`])
    Rv32vm {
        /// Tier name from `TIERS`.
        tier: String,
        /// Pass `-m` (misaligned accesses go to the host directly).
        allow_misaligned: bool,
    },
}

impl Runner {
    /// Human-readable name for messages.
    pub fn label(&self) -> String {
        match self {
            Runner::Qemu => "qemu-riscv32".to_string(),
            Runner::Rv32vm {
                tier,
                allow_misaligned,
            } => format!(
                "rv32vm run --tier {tier}{}",
                if *allow_misaligned { " -m" } else { "" }
            ),
        }
    }

    /// The command that runs `program` with `args` under this runner (environment not set).
    pub fn command(&self, program: &Path, args: &[OsString]) -> Command {
        let mut command = match self {
            Runner::Qemu => Command::new(require_qemu()),
            Runner::Rv32vm {
                tier,
                allow_misaligned,
            } => {
                let mut command = Command::new(rv32vm_binary());
                command.arg("run").args(crate::common::tier_args(tier));
                if *allow_misaligned {
                    command.arg("-m");
                }
                command.arg("--");
                command
            }
        };
        command.arg(program).args(args);
        command
    }
}

/// How a guest is expected to end under the reference emulator.
#[derive(Clone, Copy, Debug)]
pub enum ExpectedEnd {
    /// `exit(code)`.
    Exit(i32),
    /// Terminated by this signal's default action.
    Signal(i32),
}

impl ExpectedEnd {
    /// The same wording as [`Outcome::end`].
    pub fn describe(self) -> String {
        match self {
            ExpectedEnd::Exit(code) => format!("exit status {code}"),
            ExpectedEnd::Signal(signal) => format!("killed by signal {signal}"),
        }
    }
}

/// One guest invocation to compare.
pub struct GuestRun<'a> {
    /// Name used for scratch directories and messages.
    pub name: &'a str,
    /// The RV32 ELF (absolute path, identical for every runner).
    pub program: PathBuf,
    /// Arguments after the program; relative paths refer to the scratch directory, which is
    /// the working directory, so argv is byte-identical between runners.
    pub args: Vec<OsString>,
    /// Called with the fresh scratch directory before each run (fixtures).
    pub setup: &'a dyn Fn(&Path),
    /// How the reference run must end (checks the oracle itself is sane).
    pub expected_end: ExpectedEnd,
    /// Extra environment variables (on top of a small fixed environment).
    pub env: Vec<(String, String)>,
}

impl GuestRun<'_> {
    /// Runs under `runner` in a fresh scratch directory.
    pub fn run(&self, runner: &Runner) -> Outcome {
        let label = match runner {
            Runner::Qemu => "qemu".to_string(),
            Runner::Rv32vm { tier, .. } => tier.clone(),
        };
        let scratch = ScratchDir::new(&format!("{}-{label}", self.name));
        (self.setup)(scratch.path());
        let mut command = runner.command(&self.program, &self.args);
        command.current_dir(scratch.path());
        set_guest_environment(&mut command);
        for (key, value) in &self.env {
            command.env(key, value);
        }
        match run_captured(&mut command, RUN_TIME_LIMIT) {
            Ok(outcome) => outcome,
            Err(error) => panic!("{}: cannot start {}: {error}", self.name, runner.label()),
        }
    }
}

/// Gives `command` the small fixed environment every guest runs with (identical for every
/// runner, so guests that print their environment compare equal).
pub fn set_guest_environment(command: &mut Command) {
    command
        .env_clear()
        .env("PATH", "/nonexistent-guest-path")
        .env("HOME", "/nonexistent-guest-home")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .env("GUEST_TEST_VAR", GUEST_TEST_VAR);
}

/// Runs `guest` under qemu and under rv32vm for every tier in `tiers` and fails the test on
/// the first runner whose stdout bytes or exit status differ from qemu's.
pub fn compare_with_qemu(guest: &GuestRun<'_>, tiers: &[&str], allow_misaligned: bool) {
    require_qemu();
    let reference = guest.run(&Runner::Qemu);
    assert_eq!(
        reference.end(),
        guest.expected_end.describe(),
        "{}: the reference run under qemu-riscv32 did not end as expected ({}); \
         the guest program or the host setup is broken.\nstdout tail:\n{}\nstderr tail:\n{}",
        guest.name,
        reference.end(),
        tail(&reference.stdout, 20),
        tail(&reference.stderr, 20)
    );
    assert!(
        !reference.stdout.is_empty(),
        "{}: qemu-riscv32 printed nothing",
        guest.name
    );

    let mut failures = Vec::new();
    for tier in tiers {
        let runner = Runner::Rv32vm {
            tier: (*tier).to_string(),
            allow_misaligned,
        };
        let actual = guest.run(&runner);
        if let Some(report) = divergence(&reference, &actual) {
            failures.push(format!(
                "{} under `{}` diverges from qemu-riscv32:\n{report}\nrv32vm stderr tail:\n{}",
                guest.name,
                runner.label(),
                tail(&actual.stderr, 15)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Describes how `actual` differs from `expected` (stdout bytes, then exit), or `None`.
pub fn divergence(expected: &Outcome, actual: &Outcome) -> Option<String> {
    let mut report = String::new();
    if expected.stdout != actual.stdout {
        report.push_str(&first_difference(&expected.stdout, &actual.stdout));
    }
    if expected.end() != actual.end() {
        report.push_str(&format!(
            "end: expected {}, got {}\n",
            expected.end(),
            actual.end()
        ));
    }
    (!report.is_empty()).then_some(report)
}

/// The first differing line of two outputs, with a little context.
pub fn first_difference(expected: &[u8], actual: &[u8]) -> String {
    let expected_lines: Vec<&[u8]> = expected.split_inclusive(|&b| b == b'\n').collect();
    let actual_lines: Vec<&[u8]> = actual.split_inclusive(|&b| b == b'\n').collect();
    let index = expected_lines
        .iter()
        .zip(&actual_lines)
        .position(|(e, a)| e != a)
        .unwrap_or(expected_lines.len().min(actual_lines.len()));
    let show = |lines: &[&[u8]], i: usize| -> String {
        lines
            .get(i)
            .map(|line| format!("{:?}", String::from_utf8_lossy(line)))
            .unwrap_or_else(|| "<end of output>".to_string())
    };
    let mut text = format!(
        "stdout differs at line {} (expected {} lines / {} bytes, got {} lines / {} bytes)\n",
        index + 1,
        expected_lines.len(),
        expected.len(),
        actual_lines.len(),
        actual.len()
    );
    if index > 0 {
        text.push_str(&format!(
            "  previous: {}\n",
            show(&expected_lines, index - 1)
        ));
    }
    text.push_str(&format!("  expected: {}\n", show(&expected_lines, index)));
    text.push_str(&format!("  actual:   {}\n", show(&actual_lines, index)));
    text
}

/// The last `max_lines` lines of `bytes`, lossily decoded, for failure messages.
pub fn tail(bytes: &[u8], max_lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(max_lines)..].join("\n")
}
