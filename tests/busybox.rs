//! Busybox comparison tests: a static riscv32 busybox (built from Debian's source by
//! `scripts/build-busybox.sh`) runs `tests/busybox/applets.sh` and a few applets directly
//! under `qemu-riscv32` and under `rv32vm run --tier T` for each tier in `common::TIERS`;
//! stdout bytes and exit status must be identical.
//!
//! The shell script forks (pipelines, command substitution, subshells) but never execs:
//! the build runs every applet in a forked child (see scripts/build-busybox.sh), so both
//! emulators run the same guest code.

mod common;
mod guest_harness;

use std::ffi::OsString;
use std::path::Path;

use guest_harness::{build_busybox, compare_with_qemu, repo_root, ExpectedEnd, GuestRun};

/// Compares `busybox ARGS...` between qemu and every tier, after `setup` prepared each fresh
/// run directory.
fn compare_busybox(name: &str, args: &[&str], setup: &dyn Fn(&Path), expected_exit: i32) {
    let busybox = build_busybox();
    assert!(
        busybox.is_file(),
        "{} was not built by scripts/build-busybox.sh",
        busybox.display()
    );
    let guest = GuestRun {
        name,
        program: busybox,
        args: args.iter().map(OsString::from).collect(),
        setup,
        expected_end: ExpectedEnd::Exit(expected_exit),
        env: Vec::new(),
    };
    compare_with_qemu(&guest, common::TIERS, false);
}

fn write_file(path: &Path, contents: &[u8]) {
    std::fs::write(path, contents)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
}

/// The whole applet script: shell features plus ~50 applets.
#[test]
fn applets_script() {
    let script = repo_root().join("tests/busybox/applets.sh");
    let script = script.to_string_lossy().into_owned();
    compare_busybox("applets_sh", &["sh", &script, "work"], &|_| {}, 0);
}

#[test]
fn echo_hi() {
    compare_busybox("echo_hi", &["echo", "hi"], &|_| {}, 0);
}

/// `ls` of a directory the test created (one name per line when stdout is not a tty).
#[test]
fn ls_created_dir() {
    let setup = |dir: &Path| {
        let listed = dir.join("listed");
        std::fs::create_dir_all(listed.join("subdir"))
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", listed.display()));
        for name in ["zeta.txt", "alpha.txt", "Mixed Case", "123"] {
            write_file(&listed.join(name), name.as_bytes());
        }
    };
    compare_busybox("ls_dir", &["ls", "-a", "-p", "listed"], &setup, 0);
}

#[test]
fn md5sum_file() {
    let setup = |dir: &Path| {
        let data: Vec<u8> = (0..100_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        write_file(&dir.join("data.bin"), &data);
    };
    compare_busybox("md5sum", &["md5sum", "data.bin"], &setup, 0);
}

/// A failing applet: exit status and stdout (empty) must match too.
#[test]
fn failing_applet_status() {
    compare_busybox(
        "cat_missing",
        &["sh", "-c", "cat missing-file; echo status=$?; exit 5"],
        &|_| {},
        5,
    );
}
