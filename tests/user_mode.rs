//! User-mode comparison tests: every program in `tests/guest/` (built by
//! `scripts/build-guest.sh` for riscv32-linux-musl) runs under `qemu-riscv32` and under
//! `rv32vm run --tier T` for each tier in `common::TIERS`; stdout bytes and exit status must be
//! identical. The programs print only deterministic facts, so qemu is the oracle.

mod common;
mod guest_harness;

use std::ffi::OsString;
use std::path::Path;

use guest_harness::{build_guests, compare_with_qemu, GuestRun};

/// Setup for programs that take a scratch directory: `scratch/` inside the run directory.
fn make_scratch(dir: &Path) {
    std::fs::create_dir(dir.join("scratch"))
        .unwrap_or_else(|error| panic!("cannot create scratch dir in {}: {error}", dir.display()));
}

fn no_setup(_: &Path) {}

/// Compares one guest program; `args` are passed verbatim (relative to the run directory).
fn compare(name: &str, args: &[&str], expected_exit: i32, allow_misaligned: bool) {
    let guests = build_guests();
    let program = guests.join(name);
    assert!(
        program.is_file(),
        "{} was not built by scripts/build-guest.sh",
        program.display()
    );
    let takes_scratch = args.first() == Some(&"scratch");
    let setup: &dyn Fn(&Path) = if takes_scratch {
        &make_scratch
    } else {
        &no_setup
    };
    let guest = GuestRun {
        name,
        program,
        args: args.iter().map(OsString::from).collect(),
        setup,
        expected_exit,
        env: Vec::new(),
    };
    compare_with_qemu(&guest, common::TIERS, allow_misaligned);
}

/// One `#[test]` per guest program: `name => [args], expected exit status`.
macro_rules! guest_tests {
    ($($name:ident => [$($arg:expr),*], $exit:expr;)*) => {
        /// Every program this file tests, to check none in tests/guest/ is forgotten.
        const TESTED_PROGRAMS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                compare(stringify!($name), &[$($arg),*], $exit, false);
            }
        )*
    };
}

guest_tests! {
    hello => ["first arg", "", "-x", "--flag=value", "ünïcödé"], 0;
    exit3 => [], 3;
    exit_group => [], 42;
    stdio => [], 0;
    fileio => ["scratch"], 0;
    pipes => [], 0;
    mmap => ["scratch"], 0;
    malloc => [], 0;
    time => [], 0;
    getrandom => [], 0;
    sysinfo => [], 0;
    intmath => [], 0;
    int64 => [], 0;
    fpprint => [], 0;
    mathlib => [], 0;
    setjmp => [], 0;
    qsort => [], 0;
    strings => [], 0;
    strconv => [], 0;
    misaligned => [], 0;
    bitmanip => [], 0;
    intdiff => [], 0;
    atomics => [], 0;
    fp_vectors => [], 0;
}

/// The misaligned-access program must print the same with `-m` (host does the misaligned
/// access directly) as without (trap and emulate, as Linux does).
#[test]
fn misaligned_with_allow_misaligned_flag() {
    compare("misaligned", &[], 0, true);
}

/// Each `tests/guest/*.c` program (except the benchmark) must have a comparison test above.
#[test]
fn every_guest_program_is_tested() {
    let dir = guest_harness::repo_root().join("tests/guest");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()));
    let mut untested = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|ext| ext == "c") {
            let stem = path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default();
            // The benchmark is not a test (scripts/bench-user.sh runs it).
            if stem != "bench" && !TESTED_PROGRAMS.contains(&stem.as_str()) {
                untested.push(stem);
            }
        }
    }
    untested.sort();
    assert!(
        untested.is_empty(),
        "guest programs without a comparison test in tests/user_mode.rs: {untested:?}"
    );
}
