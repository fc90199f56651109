//! The bare-metal ISA suite: every `tests/isa/*.S` program, under every
//! execution tier, on `rv32vm run --bare`.
//!
//! The programs check themselves and report through HTIF `tohost`: exit
//! status 0 is a pass, N is "case N failed" (a process exit status keeps
//! only the low 8 bits, so cases above 255 show modulo 256; the VM's stderr
//! has the full value), 1000 + mcause is an unexpected trap. The same
//! sources also build for QEMU's `virt` machine: `isa_tests_pass_under_qemu`
//! runs them there, so a wrong expected value in a test is caught by an
//! independent implementation rather than trusted.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use common::{
    files_with_extension, repo_root, require_tool, run_with_timeout, tail, tier_args, RunOutcome,
    TIERS,
};

/// Time limit for one program on one tier of our VM.
const VM_TIMEOUT: Duration = Duration::from_secs(60);
/// Time limit for one program under QEMU (they take milliseconds there).
const QEMU_TIMEOUT: Duration = Duration::from_secs(10);
/// Cases at or above this number are the trap handler's "unexpected trap".
const UNEXPECTED_TRAP_BASE: i32 = 1000;

/// Marker line in a `.S` file that QEMU cannot validate (it implements that
/// behaviour differently); the file says why next to the marker.
const QEMU_SKIP_MARKER: &str = "qemu-oracle: skip";

/// The QEMU CPU model: the base `rv32` CPU with our extensions and without
/// the hypervisor extension (which we do not implement). QEMU 7.2 has no
/// Zicond: zicond.S replaces it with an equivalent sequence in its QEMU build.
const QEMU_CPU: &str = "rv32,h=false,zba=true,zbb=true,zbc=true,zbs=true,Zfh=true";

/// Generates one `#[test]` per ISA source file, each running that file under
/// every tier, plus `LISTED_SOURCES` so a file missing here is noticed.
macro_rules! isa_tests {
    ($($name:ident),* $(,)?) => {
        /// Every `tests/isa/*.S` that has a `#[test]` below.
        const LISTED_SOURCES: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                run_on_every_tier(stringify!($name));
            }
        )*
    };
}

isa_tests!(
    rv32i,
    rv32m,
    rv32a,
    rv32c,
    rv32f,
    rv32d,
    zba,
    zbb,
    zbc,
    zbs,
    zicond,
    zicsr,
    machine,
    misaligned,
    misaligned_data,
    spec_only,
    zabha_zacas,
    zfh,
);

fn isa_dir() -> PathBuf {
    repo_root().join("tests").join("isa")
}

/// Builds all test ELFs once per test-binary run; returns the output dir.
fn built_elfs() -> &'static Path {
    static OUT_DIR: OnceLock<PathBuf> = OnceLock::new();
    OUT_DIR.get_or_init(|| {
        let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("isa");
        let build_script = isa_dir().join("build.sh");
        let outcome = run_with_timeout(
            Command::new("bash").arg(&build_script).env("OUT", &out_dir),
            Duration::from_secs(600),
        )
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", build_script.display()));
        assert!(
            outcome.succeeded(),
            "{} failed ({}):\n{}\n{}",
            build_script.display(),
            outcome.describe_end(),
            outcome.stdout,
            outcome.stderr
        );
        out_dir
    })
}

fn bare_elf(name: &str) -> PathBuf {
    built_elfs().join("bare").join(format!("{name}.elf"))
}

fn qemu_elf(name: &str) -> PathBuf {
    built_elfs().join("qemu").join(format!("{name}.elf"))
}

/// Explains a failing exit status in terms of the test's case numbers.
fn explain_exit(outcome: &RunOutcome) -> String {
    match outcome.status.and_then(|status| status.code()) {
        Some(code) if code > 0 => format!(
            "{}: test case {code} failed (exit statuses keep 8 bits, so it may be case \
             {code} + 256k; an unexpected trap is {UNEXPECTED_TRAP_BASE} + mcause and shows as \
             {} + mcause; stderr has the exact value)",
            outcome.describe_end(),
            UNEXPECTED_TRAP_BASE % 256
        ),
        _ => outcome.describe_end(),
    }
}

fn run_vm(elf: &Path, tier: &str, timeout: Duration) -> RunOutcome {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rv32vm"));
    command
        .arg("run")
        .arg("--bare")
        .arg(elf)
        .args(tier_args(tier));
    // Misaligned loads and stores are performed by default, as under QEMU; this file checks
    // the traps the spec also allows.
    if elf.file_stem().is_some_and(|stem| stem == "misaligned") {
        command.arg("--trap-misaligned");
    }
    run_with_timeout(&mut command, timeout)
        .unwrap_or_else(|error| panic!("cannot start rv32vm for {}: {error}", elf.display()))
}

fn run_on_every_tier(name: &str) {
    let source = isa_dir().join(format!("{name}.S"));
    let elf = bare_elf(name);
    let mut failures = Vec::new();
    for tier in TIERS {
        let outcome = run_vm(&elf, tier, VM_TIMEOUT);
        if !outcome.succeeded() {
            failures.push(format!(
                "tier {tier}: {}\n  stdout: {}\n  stderr: {}",
                explain_exit(&outcome),
                tail(&outcome.stdout, 10),
                tail(&outcome.stderr, 20)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} ({}) failed:\n{}",
        source.display(),
        elf.display(),
        failures.join("\n")
    );
}

fn run_qemu(elf: &Path) -> RunOutcome {
    let mut command = Command::new("qemu-system-riscv32");
    command
        .args(["-M", "virt", "-cpu", QEMU_CPU, "-bios", "none"])
        .args(["-display", "none", "-serial", "stdio", "-monitor", "none"])
        .arg("-kernel")
        .arg(elf);
    run_with_timeout(&mut command, QEMU_TIMEOUT)
        .unwrap_or_else(|error| panic!("cannot start qemu-system-riscv32: {error}"))
}

fn all_sources() -> Vec<PathBuf> {
    files_with_extension(&isa_dir(), "S")
}

fn source_name(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
fn every_isa_source_has_a_test() {
    let on_disk: Vec<String> = all_sources().iter().map(|path| source_name(path)).collect();
    let unlisted: Vec<&String> = on_disk
        .iter()
        .filter(|name| !LISTED_SOURCES.contains(&name.as_str()))
        .collect();
    let missing: Vec<&&str> = LISTED_SOURCES
        .iter()
        .filter(|name| !on_disk.iter().any(|on_disk| on_disk == *name))
        .collect();
    assert!(
        unlisted.is_empty() && missing.is_empty(),
        "tests/isa.rs and tests/isa/*.S disagree: add {unlisted:?} to isa_tests!, \
         remove {missing:?} from it"
    );
}

/// The oracle: every test (except those marked with QEMU_SKIP_MARKER) must
/// pass on QEMU, which proves its expected values right.
#[test]
fn isa_tests_pass_under_qemu() {
    require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let mut failures = Vec::new();
    let mut validated = 0;
    for source in all_sources() {
        let text = std::fs::read_to_string(&source)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", source.display()));
        if text.contains(QEMU_SKIP_MARKER) {
            continue;
        }
        let outcome = run_qemu(&qemu_elf(&source_name(&source)));
        if outcome.succeeded() {
            validated += 1;
        } else {
            failures.push(format!(
                "{}: {} {}",
                source.display(),
                explain_exit(&outcome),
                tail(&outcome.stdout, 3)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "failed under QEMU:\n{}",
        failures.join("\n")
    );
    assert!(validated > 0, "no ISA test was run under QEMU");
}

/// The negative control fails case 5 under QEMU: the harness and the test
/// macros do catch a wrong expected value.
#[test]
fn qemu_catches_a_wrong_expected_value() {
    require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let outcome = run_qemu(&qemu_elf("selftest/fails_case_5"));
    assert_eq!(
        outcome.status.and_then(|status| status.code()),
        Some(5),
        "expected case 5 to fail under QEMU, got {}: {}",
        outcome.describe_end(),
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("FAIL 0x00000005"),
        "UART said: {}",
        outcome.stdout
    );
}

/// An unannounced trap fails the program with 1000 + mcause.
#[test]
fn qemu_reports_an_unexpected_trap() {
    require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let outcome = run_qemu(&qemu_elf("selftest/unexpected_trap"));
    assert!(
        !outcome.succeeded(),
        "an unexpected trap passed: {}",
        outcome.describe_end()
    );
    assert!(
        outcome.stdout.contains("FAIL 0x000003ea"),
        "expected 1000 + illegal instruction (2), UART said: {}",
        outcome.stdout
    );
}

/// Our VM must report the negative control's failure too, on every tier:
/// a runner that always exits 0 would otherwise pass the whole suite.
#[test]
fn vm_reports_a_failing_case() {
    for tier in TIERS {
        let outcome = run_vm(&bare_elf("selftest/fails_case_5"), tier, VM_TIMEOUT);
        assert_eq!(
            outcome.status.and_then(|status| status.code()),
            Some(5),
            "tier {tier}: expected exit status 5 (case 5 failed), got {}\nstderr: {}",
            outcome.describe_end(),
            tail(&outcome.stderr, 20)
        );
        let outcome = run_vm(&bare_elf("selftest/unexpected_trap"), tier, VM_TIMEOUT);
        assert!(
            !outcome.succeeded() && !outcome.timed_out(),
            "tier {tier}: an unexpected trap must fail the run, got {}",
            outcome.describe_end()
        );
    }
}
