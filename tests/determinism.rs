//! `--deterministic`: two boots of the bundled Linux with the same script print the same
//! console log, byte for byte (kernel timestamps included), under every tier; the options
//! that would make a run depend on the host are refused.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const PROMPT: &str = "root@rv32vm:~# ";
/// What the guest runs: the RTC's date, uptime (virtual time), bytes of the seeded entropy
/// device, then a clean exit.
const COMMANDS: &str = "date; cat /proc/uptime; head -c 16 /dev/hwrng | od -x | head -1; vm-exit 0";
// Generous, as in tests/boot.rs: under `--tier t2` every region goes through LLVM before it
// runs (a boot costs about a minute of CPU).
const BOOT_TIMEOUT: Duration = Duration::from_secs(600);

fn images() -> PathBuf {
    common::repo_root().join("images")
}

fn out_dir() -> PathBuf {
    let dir = common::repo_root().join("target/determinism-tests");
    std::fs::create_dir_all(&dir).expect("create target/determinism-tests");
    dir
}

fn rv32vm() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rv32vm"));
    command
        .arg("boot")
        .arg("--kernel")
        .arg(images().join("Image"))
        .arg("--initrd")
        .arg(images().join("initramfs.cpio.gz"));
    command
}

/// Boot deterministically under `tier` with `extra` options, run [`COMMANDS`] and return the
/// console log.
fn deterministic_boot(tier: &str, run: &str, extra: &[&str]) -> Vec<u8> {
    let log = out_dir().join(format!("{tier}-{run}.log"));
    let _ = std::fs::remove_file(&log);
    let outcome = common::run_capturing_bytes(
        rv32vm()
            .args(["--tier", tier, "--deterministic", "--timeout", "550"])
            .args(extra)
            .args(["--expect", PROMPT, "--send", COMMANDS])
            .arg("--console-log")
            .arg(&log),
        BOOT_TIMEOUT,
    )
    .expect("run rv32vm");
    assert!(
        outcome.status.is_some_and(|s| s.success()),
        "--tier {tier} run {run}: {:?}\nstderr: {}\nstdout tail: {}",
        outcome.status,
        String::from_utf8_lossy(&outcome.stderr),
        tail(&outcome.stdout)
    );
    std::fs::read(&log).expect("console log")
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// The first line where two logs differ, for the failure message.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    for (n, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  first:  {x}\n  second: {y}", n + 1);
        }
    }
    format!(
        "one log is a prefix of the other ({} and {} lines)",
        a.lines().count(),
        b.lines().count()
    )
}

/// The console shows what the script ran: a kernel timestamp line, the prompt, the fixed
/// date and the entropy device's bytes.
fn check_content(tier: &str, log: &[u8]) {
    let text = String::from_utf8_lossy(log);
    assert!(
        text.contains("[    0.000000] Linux version"),
        "--tier {tier}: no kernel timestamp line:\n{}",
        tail(log)
    );
    assert!(text.contains(PROMPT), "--tier {tier}: no prompt");
    assert!(
        text.contains("Thu Jan  1 00:00:0") && text.contains("UTC 2026"),
        "--tier {tier}: the RTC does not start at 2026-01-01:\n{}",
        tail(log)
    );
    assert!(
        text.lines().any(|l| l.starts_with("0000000 ")),
        "--tier {tier}: no bytes from /dev/hwrng:\n{}",
        tail(log)
    );
}

fn hwrng_line(log: &[u8]) -> String {
    String::from_utf8_lossy(log)
        .lines()
        .find(|l| l.starts_with("0000000 "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn deterministic_boots_repeat_byte_for_byte_in_every_tier() {
    let mut logs = Vec::new();
    for &tier in common::TIERS {
        let first = deterministic_boot(tier, "a", &[]);
        let second = deterministic_boot(tier, "b", &[]);
        check_content(tier, &first);
        assert!(
            first == second,
            "--tier {tier}: two deterministic boots differ at {}",
            first_difference(&first, &second)
        );
        logs.push((tier, first));
    }
    // Another seed gives the guest other entropy (and nothing else changes before it is read).
    let seeded = deterministic_boot("interp", "seed", &["--seed", "12345"]);
    check_content("interp --seed", &seeded);
    let default = &logs[0].1;
    assert_ne!(
        hwrng_line(&seeded),
        hwrng_line(default),
        "--seed changed nothing"
    );
}

/// Restore `snapshot` deterministically under `--tier interp`, run [`COMMANDS`], return the
/// console log.
fn deterministic_restore(snapshot: &std::path::Path, run: &str) -> Vec<u8> {
    let log = out_dir().join(format!("restore-{run}.log"));
    let _ = std::fs::remove_file(&log);
    let outcome = common::run_capturing_bytes(
        Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .arg("restore")
            .arg(snapshot)
            .args(["--tier", "interp", "--timeout", "250"])
            .args(["--expect", PROMPT, "--send", COMMANDS])
            .arg("--console-log")
            .arg(&log),
        Duration::from_secs(300),
    )
    .expect("run rv32vm restore");
    assert!(
        outcome.status.is_some_and(|s| s.success()),
        "restore {run}: {:?}\nstderr: {}",
        outcome.status,
        String::from_utf8_lossy(&outcome.stderr)
    );
    std::fs::read(&log).expect("console log")
}

#[test]
fn a_deterministic_snapshot_restores_deterministically() {
    let snapshot = out_dir().join("deterministic.snap");
    let _ = std::fs::remove_file(&snapshot);
    let outcome = common::run_with_timeout(
        rv32vm()
            .args(["--tier", "interp", "--deterministic", "--timeout", "250"])
            .args(["--expect", PROMPT, "--save"])
            .arg(&snapshot),
        Duration::from_secs(300),
    )
    .expect("run rv32vm");
    assert!(outcome.succeeded(), "{outcome:?}");
    let first = deterministic_restore(&snapshot, "a");
    let second = deterministic_restore(&snapshot, "b");
    let text = String::from_utf8_lossy(&first);
    // Still on the fixed date, and the seeded entropy device goes on.
    assert!(text.contains("UTC 2026"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("0000000 ")), "{text}");
    assert!(
        first == second,
        "two restores differ at {}",
        first_difference(&first, &second)
    );
    // --max-insns counts from the restore: two limits retire exactly their difference more.
    let retired = |limit: u64| -> u64 {
        let outcome = common::run_with_timeout(
            Command::new(env!("CARGO_BIN_EXE_rv32vm"))
                .arg("restore")
                .arg(&snapshot)
                .args(["--tier", "interp", "--stats", "--max-insns"])
                .arg(limit.to_string()),
            Duration::from_secs(60),
        )
        .expect("run rv32vm restore");
        assert_eq!(
            outcome.status.and_then(|s| s.code()),
            Some(124),
            "{outcome:?}"
        );
        outcome
            .stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix("instructions retired"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no instruction count in {}", outcome.stderr))
    };
    assert_eq!(retired(2_000_003) - retired(1_000_000), 1_000_003);
    // --seed cannot replace the saved generator.
    let outcome = common::run_with_timeout(
        Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .arg("restore")
            .arg(&snapshot)
            .args(["--deterministic", "--seed", "3"]),
        Duration::from_secs(60),
    )
    .expect("run rv32vm restore");
    assert_eq!(
        outcome.status.and_then(|s| s.code()),
        Some(1),
        "{outcome:?}"
    );
    assert!(
        outcome.stderr.contains("--seed does not apply"),
        "{}",
        outcome.stderr
    );
}

fn refused(extra: &[&str], option: &str) {
    let outcome = common::run_with_timeout(
        rv32vm().arg("--deterministic").args(extra),
        Duration::from_secs(60),
    )
    .expect("run rv32vm");
    assert_eq!(
        outcome.status.and_then(|s| s.code()),
        Some(1),
        "{outcome:?}"
    );
    assert!(
        outcome
            .stderr
            .contains(&format!("{option} cannot be used with --deterministic")),
        "{}",
        outcome.stderr
    );
}

#[test]
fn host_dependent_options_are_refused() {
    let share = out_dir();
    let share = share.to_str().expect("UTF-8 path");
    refused(&["--share", share], "--share");
    refused(&["--net", "user"], "--net");
    refused(&["--semihosting"], "--semihosting");
    refused(&["--gdb", "127.0.0.1:0"], "--gdb");
    // --seed means nothing without --deterministic.
    let outcome = common::run_with_timeout(rv32vm().args(["--seed", "1"]), Duration::from_secs(60))
        .expect("run rv32vm");
    assert_eq!(
        outcome.status.and_then(|s| s.code()),
        Some(2),
        "{outcome:?}"
    );
    assert!(
        outcome.stderr.contains("--deterministic"),
        "{}",
        outcome.stderr
    );
}
