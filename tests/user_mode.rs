//! User-mode comparison tests: every program in `tests/guest/` (built by
//! `scripts/build-guest.sh` for riscv32-linux-musl) runs under `qemu-riscv32` and under
//! `rv32vm run --tier T` for each tier in `common::TIERS`; stdout bytes and exit status must be
//! identical. The programs print only deterministic facts, so qemu is the oracle.

mod common;
mod guest_harness;

use std::ffi::OsString;
use std::path::Path;

use guest_harness::{build_guests, compare_with_qemu, ExpectedEnd, GuestRun};

/// Setup for programs that take a scratch directory: `scratch/` inside the run directory.
fn make_scratch(dir: &Path) {
    std::fs::create_dir(dir.join("scratch"))
        .unwrap_or_else(|error| panic!("cannot create scratch dir in {}: {error}", dir.display()));
}

fn no_setup(_: &Path) {}

/// Compares one guest program; `args` are passed verbatim (relative to the run directory).
fn compare(name: &str, args: &[&str], expected_end: ExpectedEnd, allow_misaligned: bool) {
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
        expected_end,
        env: Vec::new(),
    };
    compare_with_qemu(&guest, common::TIERS, allow_misaligned);
}

/// One `#[test]` per guest program: `name => [args], how the reference run ends`.
macro_rules! guest_tests {
    ($($name:ident => [$($arg:expr),*], $end:expr;)*) => {
        /// Every program this file tests, to check none in tests/guest/ is forgotten.
        const TESTED_PROGRAMS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                compare(stringify!($name), &[$($arg),*], $end, false);
            }
        )*
    };
}

guest_tests! {
    hello => ["first arg", "", "-x", "--flag=value", "ünïcödé"], ExpectedEnd::Exit(0);
    exit3 => [], ExpectedEnd::Exit(3);
    exit_group => [], ExpectedEnd::Exit(42);
    stdio => [], ExpectedEnd::Exit(0);
    fileio => ["scratch"], ExpectedEnd::Exit(0);
    pipes => [], ExpectedEnd::Exit(0);
    mmap => ["scratch"], ExpectedEnd::Exit(0);
    malloc => [], ExpectedEnd::Exit(0);
    time => [], ExpectedEnd::Exit(0);
    getrandom => [], ExpectedEnd::Exit(0);
    sysinfo => [], ExpectedEnd::Exit(0);
    intmath => [], ExpectedEnd::Exit(0);
    int64 => [], ExpectedEnd::Exit(0);
    fpprint => [], ExpectedEnd::Exit(0);
    mathlib => [], ExpectedEnd::Exit(0);
    setjmp => [], ExpectedEnd::Exit(0);
    qsort => [], ExpectedEnd::Exit(0);
    strings => [], ExpectedEnd::Exit(0);
    strconv => [], ExpectedEnd::Exit(0);
    misaligned => [], ExpectedEnd::Exit(0);
    bitmanip => [], ExpectedEnd::Exit(0);
    intdiff => [], ExpectedEnd::Exit(0);
    atomics => [], ExpectedEnd::Exit(0);
    fp_vectors => [], ExpectedEnd::Exit(0);
    signals => [], ExpectedEnd::Exit(0);
    killed_by_signal => [], ExpectedEnd::Signal(15);
}

/// The misaligned-access program must print the same with `-m` (host does the misaligned
/// access directly) as without (trap and emulate, as Linux does).
#[test]
fn misaligned_with_allow_misaligned_flag() {
    compare("misaligned", &[], ExpectedEnd::Exit(0), true);
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

/// The comparison itself must be able to fail: differing bytes, a missing trailing newline,
/// another exit status or a timeout are all reported.
#[test]
fn harness_reports_divergences() {
    use guest_harness::{divergence, Outcome};
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;
    use std::time::Duration;

    let exited = |stdout: &[u8], code: i32| Outcome {
        status: Some(ExitStatus::from_raw(code << 8)),
        stdout: stdout.to_vec(),
        stderr: Vec::new(),
        elapsed: Duration::ZERO,
    };
    assert!(divergence(&exited(b"a\nb\n", 0), &exited(b"a\nb\n", 0)).is_none());

    let report = divergence(&exited(b"a\nb\nc\n", 0), &exited(b"a\nX\nc\n", 0))
        .expect("differing line must be reported");
    assert!(report.contains("line 2"), "{report}");
    assert!(
        report.contains(r#""b\n""#) && report.contains(r#""X\n""#),
        "{report}"
    );

    assert!(divergence(&exited(b"a\n", 0), &exited(b"a", 0)).is_some());
    assert!(divergence(&exited(b"a\n", 0), &exited(b"a\n\n", 0)).is_some());

    let report = divergence(&exited(b"same\n", 0), &exited(b"same\n", 3))
        .expect("exit status must be compared");
    assert!(report.contains("exit status 3"), "{report}");

    let killed = Outcome {
        status: None,
        ..exited(b"same\n", 0)
    };
    let report = divergence(&exited(b"same\n", 0), &killed).expect("timeout must be reported");
    assert!(report.contains("time limit"), "{report}");
}
