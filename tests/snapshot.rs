//! Snapshot and restore (`boot --expect ... --save FILE`, `rv32vm restore FILE`) with the
//! bundled image under every tier: the restored machine answers like one that never stopped,
//! a file restores twice, a snapshot-mode disk's writes travel in the file, a changed disk is
//! refused, and damaged files give one clear error.
//!
//! Boots are what costs here (tier 2 takes tens of seconds), so each tier boots once and the
//! saved file serves several checks.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const PROMPT: &str = "root@rv32vm:~# ";
// Generous: tier 2 compiles every block before it runs, and CI machines are shared.
const LIMIT: Duration = Duration::from_secs(900);

/// Written to the bundled root filesystem (a snapshot-mode disk) before the save, then read
/// back from the disk (page cache dropped) after the restore: it lives only in the overlay.
const NOTE_COMMAND: &str =
    "echo note-from-before-the-save > /root/note.txt; sync; echo 3 > /proc/sys/vm/drop_caches";

/// Commands whose output is the same in every run; `BE''GIN`/`E''ND` print markers that the
/// echo of the typed line does not contain.
const PROBE_COMMAND: &str = "echo BE''GIN; cat /root/note.txt; ls /; echo $((6*7)); \
     grep -c processor /proc/cpuinfo; head -c 64 /etc/passwd; echo; echo E''ND";

fn scratch_dir() -> PathBuf {
    let dir = common::repo_root().join("target/snapshot-tests");
    std::fs::create_dir_all(&dir).expect("create target/snapshot-tests");
    dir
}

fn rv32vm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rv32vm"))
}

fn code(out: &common::RunOutcome) -> Option<i32> {
    out.status.and_then(|s| s.code())
}

fn run(command: &mut Command) -> common::RunOutcome {
    common::run_with_timeout(command, LIMIT).expect("run rv32vm")
}

/// The output between the BEGIN and END markers, with line ends normalised.
fn probe_output(stdout: &str) -> String {
    let text = stdout.replace('\r', "");
    let start = text
        .find("\nBEGIN\n")
        .unwrap_or_else(|| panic!("no BEGIN marker in:\n{}", common::tail(&text, 30)));
    let rest = &text[start + "\nBEGIN\n".len()..];
    let end = rest
        .find("\nEND\n")
        .unwrap_or_else(|| panic!("no END marker in:\n{}", common::tail(&text, 30)));
    rest[..end].to_string()
}

/// Boot the bundled image under `tier`, write the note, and save at the next prompt.
fn boot_and_save(tier: &str, file: &Path) {
    let _ = std::fs::remove_file(file);
    let out = run(rv32vm()
        .args(["boot", "--tier", tier, "--timeout", "600"])
        .args(["--expect", PROMPT, "--send", NOTE_COMMAND])
        .args(["--expect", PROMPT, "--save"])
        .arg(file));
    assert_eq!(
        code(&out),
        Some(0),
        "{tier}: boot --save: {}\n{}",
        out.describe_end(),
        out.stderr
    );
    assert!(
        out.stderr.contains("machine saved to"),
        "{tier}: {}",
        out.stderr
    );
    let size = std::fs::metadata(file).expect("snapshot written").len();
    // The guest has 256 MiB of RAM; at the prompt most of it is zeros.
    assert!(
        size < 64 << 20,
        "{tier}: a {size}-byte snapshot is more than a quarter of guest RAM"
    );
}

/// Restore `file` under `tier`, run the probe at the saved prompt, power off.
fn restore_and_probe(tier: &str, file: &Path) -> common::RunOutcome {
    run(rv32vm()
        .arg("restore")
        .arg(file)
        .args(["--tier", tier, "--timeout", "600"])
        .args(["--expect", PROMPT, "--send", PROBE_COMMAND])
        .args(["--expect", "\nEND", "--send", "poweroff -f"]))
}

/// The probe's output in a machine that was never saved.
fn uninterrupted_probe() -> String {
    let out = run(rv32vm()
        .args(["boot", "--tier", "interp", "--timeout", "600"])
        .args(["--expect", PROMPT, "--send", NOTE_COMMAND])
        .args(["--expect", PROMPT, "--send", PROBE_COMMAND])
        .args(["--expect", "\nEND", "--send", "poweroff -f"]));
    assert_eq!(
        code(&out),
        Some(0),
        "uninterrupted boot: {}\n{}",
        out.describe_end(),
        out.stderr
    );
    probe_output(&out.stdout)
}

#[test]
fn restored_machines_answer_like_one_that_never_stopped_in_every_tier() {
    let reference = uninterrupted_probe();
    assert!(
        reference.contains("note-from-before-the-save") && reference.contains("\n42\n"),
        "{reference}"
    );
    for &tier in common::TIERS {
        let file = scratch_dir().join(format!("prompt-{tier}.snap"));
        boot_and_save(tier, &file);
        // Twice from the same file (restoring never changes it); the second time under the
        // interpreter only, since that is a property of the file, not of the tier, and tier 2
        // restores compile every block again.
        let attempts = if tier == "interp" { 2 } else { 1 };
        for attempt in 1..=attempts {
            let out = restore_and_probe(tier, &file);
            assert_eq!(
                code(&out),
                Some(0),
                "{tier}: restore {attempt}: {}\n{}\n{}",
                out.describe_end(),
                out.stderr,
                common::tail(&out.stdout, 20)
            );
            assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
            // The note was only ever in the snapshot disk's overlay: it came with the file.
            assert_eq!(
                probe_output(&out.stdout),
                reference,
                "{tier}: restore {attempt} differs from the uninterrupted run"
            );
        }
    }
}

/// A restored guest that reboots boots again from the power-on image saved with the machine
/// (kernel, initrd, device tree) back to a shell, as the machine that was saved would have.
#[test]
fn a_restored_guest_reboots_into_the_saved_kernel() {
    let file = scratch_dir().join("reboot.snap");
    boot_and_save("interp", &file);
    let out = run(rv32vm()
        .arg("restore")
        .arg(&file)
        .args(["--tier", "interp", "--timeout", "600"])
        .args([
            "--expect",
            PROMPT,
            "--send",
            "echo before-reboot; reboot -f",
        ])
        .args([
            "--expect",
            PROMPT,
            "--send",
            "echo after-$((40+2)); vm-exit 7",
        ]));
    assert_eq!(
        code(&out),
        Some(7),
        "{}\n{}\n{}",
        out.describe_end(),
        out.stderr,
        common::tail(&out.stdout, 20)
    );
    let text = out.stdout.replace('\r', "");
    let rebooting = text
        .find("\nbefore-reboot\n")
        .unwrap_or_else(|| panic!("no reboot:\n{}", common::tail(&text, 30)));
    let booted = text[rebooting..].find("Linux version").unwrap_or_else(|| {
        panic!(
            "the kernel did not boot again:\n{}",
            common::tail(&text, 30)
        )
    });
    assert!(
        text[rebooting + booted..].contains("\nafter-42\n"),
        "no shell after the reboot:\n{}",
        common::tail(&text, 30)
    );
}

/// A private copy of the bundled root filesystem.
fn rootfs_copy(name: &str) -> PathBuf {
    let path = scratch_dir().join(name);
    std::fs::copy(common::repo_root().join("images/rootfs.ext2"), &path).expect("copy rootfs");
    path
}

#[test]
fn a_writable_disk_changed_since_the_save_is_refused() {
    let disk = rootfs_copy("writable.img");
    let file = scratch_dir().join("writable.snap");
    let _ = std::fs::remove_file(&file);
    let out = run(rv32vm()
        .args(["boot", "--tier", "interp", "--timeout", "600", "--disk"])
        .arg(&disk)
        .args(["--expect", PROMPT, "--save"])
        .arg(&file));
    assert_eq!(
        code(&out),
        Some(0),
        "{}\n{}",
        out.describe_end(),
        out.stderr
    );

    // The guest's files are on the disk as saved: the restore goes ahead. (Powering off
    // changes the disk, so check the refusal after.)
    let unchanged = run(rv32vm().arg("restore").arg(&file).args([
        "--timeout",
        "60",
        "--expect",
        PROMPT,
        "--send",
        "poweroff -f",
    ]));
    assert_eq!(
        code(&unchanged),
        Some(0),
        "{}\n{}",
        unchanged.describe_end(),
        unchanged.stderr
    );

    std::fs::File::options()
        .write(true)
        .open(&disk)
        .and_then(|f| f.set_modified(std::time::SystemTime::now() + Duration::from_secs(5)))
        .expect("touch the disk");
    let changed = run(rv32vm().arg("restore").arg(&file).args(["--timeout", "60"]));
    assert_eq!(code(&changed), Some(1), "{}", changed.stderr);
    assert!(
        changed
            .stderr
            .contains("changed since the snapshot was saved"),
        "{}",
        changed.stderr
    );
    assert!(!changed.stderr.contains("panicked"), "{}", changed.stderr);

    // `--disk` may point the slot at another image of the same size, not of another size.
    let other = rootfs_copy("writable-other.img");
    let moved = run(rv32vm()
        .arg("restore")
        .arg(&file)
        .arg("--disk")
        .arg(&other)
        .args([
            "--timeout",
            "60",
            "--expect",
            PROMPT,
            "--send",
            "poweroff -f",
        ]));
    assert_eq!(
        code(&moved),
        Some(0),
        "{}\n{}",
        moved.describe_end(),
        moved.stderr
    );
    let small = scratch_dir().join("small.img");
    std::fs::write(&small, vec![0u8; 1 << 20]).expect("write small disk");
    let wrong_size = run(rv32vm().arg("restore").arg(&file).arg("--disk").arg(&small));
    assert_eq!(code(&wrong_size), Some(1), "{}", wrong_size.stderr);
    assert!(
        wrong_size
            .stderr
            .contains("refusing to restore onto another disk"),
        "{}",
        wrong_size.stderr
    );

    damaged_files_give_one_clear_error(&file);
}

/// Truncated, bit-flipped, foreign and newer files: one line naming the problem, status 1.
fn damaged_files_give_one_clear_error(good: &Path) {
    let bytes = std::fs::read(good).expect("read snapshot");
    let damaged = scratch_dir().join("damaged.snap");
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x10;
    let mut newer = bytes.clone();
    newer[8] = 99;
    let cases: [(&str, Vec<u8>, &str); 5] = [
        (
            "truncated",
            bytes[..bytes.len() / 3].to_vec(),
            "is truncated",
        ),
        (
            "cut before the end",
            bytes[..bytes.len() - 3].to_vec(),
            "is truncated",
        ),
        ("bit-flipped", flipped, "is corrupt"),
        ("newer", newer, "format version 99"),
        (
            "foreign",
            b"#!/bin/sh\necho not a snapshot\n".to_vec(),
            "not an rv32vm snapshot",
        ),
    ];
    for (what, content, message) in cases {
        std::fs::write(&damaged, content).expect("write damaged file");
        let out = run(rv32vm()
            .arg("restore")
            .arg(&damaged)
            .args(["--timeout", "30"]));
        assert_eq!(code(&out), Some(1), "{what}: {}", out.stderr);
        assert!(out.stderr.contains(message), "{what}: {}", out.stderr);
        assert_eq!(
            out.stderr.trim().lines().count(),
            1,
            "{what}: one line: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{what}: the guest must not run");
    }
    let missing = run(rv32vm()
        .arg("restore")
        .arg(scratch_dir().join("no-such.snap")));
    assert_eq!(code(&missing), Some(1), "{}", missing.stderr);
    assert!(
        missing.stderr.contains("cannot read snapshot"),
        "{}",
        missing.stderr
    );
    // Not a regular file: refused without reading it (a FIFO or /dev/zero would never end).
    let device = run(rv32vm().args(["restore", "/dev/zero"]));
    assert_eq!(code(&device), Some(1), "{}", device.stderr);
    assert!(
        device.stderr.contains("not a regular file"),
        "{}",
        device.stderr
    );
}

/// A machine with host devices (`--share`, `--net`) cannot be saved: their state lives on the
/// host. `--save` with either is refused before the guest starts, with a message that says
/// why, and no file appears.
#[test]
fn saving_with_host_devices_is_refused_up_front() {
    let dir = scratch_dir();
    let file = dir.join("with-host-devices.snap");
    let _ = std::fs::remove_file(&file);
    for devices in [
        &["--share", "."][..],
        &["--net", "user"][..],
        &["--semihosting"][..],
    ] {
        let out = run(rv32vm()
            .args(["boot", "--timeout", "60"])
            .args(devices)
            .args(["--expect", PROMPT, "--save"])
            .arg(&file));
        assert_eq!(code(&out), Some(1), "{devices:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("cannot save a machine with --share, --net or --semihosting"),
            "{devices:?}: {}",
            out.stderr
        );
        assert!(!file.exists(), "{devices:?}: a snapshot file was written");
    }
}
