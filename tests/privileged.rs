//! Privileged architecture on the full machine: the bare-metal M-mode programs in `tests/priv/`
//! (Sv32, trap delegation, interrupt sources, self-modifying code) run as `--bios` firmware under
//! `rv32vm boot` in every tier, and under `qemu-system-riscv32 -M virt -bios` as the oracle that
//! proves their expected values right.
//!
//! Each program checks itself: it prints `ok N description` per case on the UART, `PASS` at the
//! end and powers off through the syscon with status 0; the first failed check prints
//! `FAIL N ...` and exits with status N. This test asserts status 0 everywhere, one `ok` line
//! per `TEST(` in the source, and rv32vm's console output identical to QEMU's.
//!
//! A program is built twice: plainly for rv32vm, and with `-DQEMU_ORACLE` for QEMU. The QEMU
//! build leaves out only the few checks where QEMU 7.2 differs from the privileged spec or from a
//! promise rv32vm makes beyond it; each such place says why in its comment.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The programs in `tests/priv/`, each with a test below.
const PROGRAMS: &[&str] = &["delegation", "interrupts", "smc", "sv32"];

/// Programs in `tests/priv/` tested elsewhere, without the QEMU oracle: `virtio_blk` feeds the
/// disk garbage descriptors, which QEMU answers by marking the device broken
/// (`tests/virtio_guest.rs`).
const TESTED_ELSEWHERE: &[&str] = &["virtio_blk"];

/// Guest time limit passed to `rv32vm boot --timeout` (seconds).
const GUEST_TIMEOUT_SECS: &str = "30";
/// Host-side limit for one run of rv32vm or QEMU.
const RUN_LIMIT: Duration = Duration::from_secs(60);
/// RAM for both machines (QEMU's `-m`, rv32vm's `--memory`).
const MEMORY: &str = "128M";

/// One program built in both variants.
struct Built {
    /// ELF of the rv32vm build (passed as `--kernel`, which must name a valid kernel; the
    /// program ignores it, and it is the same code as the `--bios` image).
    elf: PathBuf,
    /// Raw image of the rv32vm build, for `--bios`.
    bin: PathBuf,
    /// Raw image of the QEMU build (`-DQEMU_ORACLE`).
    qemu_bin: PathBuf,
    /// Number of `TEST(` cases in the source: the number of `ok` lines expected.
    cases: usize,
}

fn priv_dir() -> PathBuf {
    common::repo_root().join("tests/priv")
}

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("priv");
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", dir.display()));
    dir
}

fn build(name: &str) -> Built {
    let src = priv_dir().join(format!("{name}.S"));
    let source = std::fs::read_to_string(&src)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", src.display()));
    let out = out_dir();
    let elf = out.join(format!("{name}.elf"));
    let bin = out.join(format!("{name}.bin"));
    common::build_priv_program(&src, &elf, &bin, &[]);
    let qemu_elf = out.join(format!("{name}.qemu.elf"));
    let qemu_bin = out.join(format!("{name}.qemu.bin"));
    common::build_priv_program(&src, &qemu_elf, &qemu_bin, &["-DQEMU_ORACLE"]);
    Built {
        elf,
        bin,
        qemu_bin,
        cases: source.matches("TEST(").count(),
    }
}

/// Fails unless the run powered off with status 0 after printing one `ok` line per case and
/// `PASS`, and nothing else. Returns the console output.
fn assert_passed(who: &str, outcome: &common::RunOutcome, cases: usize) -> String {
    let report = format!(
        "{who}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        outcome.describe_end(),
        common::tail(&outcome.stdout, 40),
        common::tail(&outcome.stderr, 20)
    );
    assert!(outcome.succeeded(), "{report}");
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert_eq!(lines.last(), Some(&"PASS"), "{report}");
    let oks = lines.iter().filter(|line| line.starts_with("ok ")).count();
    assert_eq!(oks, cases, "one `ok` line per case expected\n{report}");
    assert_eq!(lines.len(), cases + 1, "stray output\n{report}");
    outcome.stdout.clone()
}

fn run_qemu(built: &Built, name: &str) -> String {
    common::require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let outcome = common::run_with_timeout(
        Command::new("qemu-system-riscv32")
            .args(["-M", "virt", "-nographic", "-m", MEMORY, "-bios"])
            .arg(&built.qemu_bin),
        RUN_LIMIT,
    )
    .expect("start qemu-system-riscv32");
    assert_passed(&format!("{name} under QEMU"), &outcome, built.cases)
}

fn run_rv32vm(built: &Built, name: &str, tier: &str) -> String {
    let outcome = common::run_with_timeout(
        Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .arg("boot")
            .arg("--bios")
            .arg(&built.bin)
            .arg("--kernel")
            .arg(&built.elf)
            .args(["--memory", MEMORY, "--timeout", GUEST_TIMEOUT_SECS])
            .args(common::tier_args(tier)),
        RUN_LIMIT,
    )
    .expect("start rv32vm");
    assert_passed(
        &format!("{name} under rv32vm --tier {tier}"),
        &outcome,
        built.cases,
    )
}

/// Build `name`, check it under QEMU, then under rv32vm in every tier with the same output.
fn check_program(name: &str) {
    let built = build(name);
    let oracle = run_qemu(&built, name);
    for tier in common::TIERS {
        let ours = run_rv32vm(&built, name, tier);
        assert_eq!(
            ours, oracle,
            "{name}: rv32vm --tier {tier} printed something else than QEMU"
        );
    }
}

#[test]
fn sv32_translation_faults_and_permissions() {
    check_program("sv32");
}

#[test]
fn delegation_of_exceptions_and_interrupts() {
    check_program("delegation");
}

#[test]
fn interrupt_sources_and_priorities() {
    check_program("interrupts");
}

#[test]
fn self_modifying_code() {
    check_program("smc");
}

/// A program added to `tests/priv/` must get a test above.
#[test]
fn every_program_has_a_test() {
    let mut found: Vec<String> = common::files_with_extension(&priv_dir(), "S")
        .iter()
        .filter_map(|path| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|name| !TESTED_ELSEWHERE.contains(&name.as_str()))
        .collect();
    found.sort();
    assert_eq!(found, PROGRAMS, "tests/priv/*.S and PROGRAMS differ");
}
