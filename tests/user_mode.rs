//! User-mode comparison tests: every program in `tests/guest/` (built by
//! `scripts/build-guest.sh` for riscv32-linux-musl) runs under `qemu-riscv32` and under
//! `rv32vm run --tier T` for each tier in `common::TIERS`; stdout bytes and exit status must be
//! identical. The programs print only deterministic facts, so qemu is the oracle.

mod common;
mod guest_harness;

use std::ffi::OsString;
use std::path::Path;

use guest_harness::{
    build_guests, compare_with_qemu, divergence, rv32vm_binary, tail, ExpectedEnd, GuestRun,
    Outcome, Runner, ScratchDir,
};

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
    sockets => [], ExpectedEnd::Exit(0);
    file_extras => [], ExpectedEnd::Exit(0);
    sigwait => [], ExpectedEnd::Exit(0);
    timers => [], ExpectedEnd::Exit(0);
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
    indirect => [], ExpectedEnd::Exit(0);
    strings => [], ExpectedEnd::Exit(0);
    strconv => [], ExpectedEnd::Exit(0);
    misaligned => [], ExpectedEnd::Exit(0);
    bitmanip => [], ExpectedEnd::Exit(0);
    intdiff => [], ExpectedEnd::Exit(0);
    atomics => [], ExpectedEnd::Exit(0);
    fp_vectors => [], ExpectedEnd::Exit(0);
    fp_unusual => [], ExpectedEnd::Exit(0);
    signals => [], ExpectedEnd::Exit(0);
    killed_by_signal => [], ExpectedEnd::Signal(15);
    segfault => [], ExpectedEnd::Signal(11);
    shared_mmap => ["scratch"], ExpectedEnd::Exit(0);
    procfs => ["scratch", "x", "y z", ""], ExpectedEnd::Exit(0);
    exec_host => ["scratch"], ExpectedEnd::Exit(5);
    threads => [], ExpectedEnd::Exit(0);
    thread_signals => [], ExpectedEnd::Exit(0);
    host_calls => ["scratch"], ExpectedEnd::Exit(0);
    sysv_shm => [], ExpectedEnd::Exit(0);
    signalfd => [], ExpectedEnd::Exit(0);
    code_patching => [], ExpectedEnd::Exit(0);
}

/// Guest programs with a test of their own below (not a plain comparison).
const PROGRAMS_WITH_OWN_TESTS: &[&str] = &["host_signals", "proc_self_mem"];

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
            if stem != "bench"
                && !TESTED_PROGRAMS.contains(&stem.as_str())
                && !PROGRAMS_WITH_OWN_TESTS.contains(&stem.as_str())
            {
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

/// `program` (a guest that exits 0) under `rv32vm run ARGS -- program`, with its output checked
/// against qemu-riscv32's (`reference`, from [`qemu_reference`]); `what` names the run in a
/// failure. Returns rv32vm's stderr (its `--stats`).
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
fn run_like_qemu(
    reference: &Outcome,
    args: &[&std::ffi::OsStr],
    program: &Path,
    guest_args: &[&str],
    what: &str,
) -> String {
    let mut command = std::process::Command::new(rv32vm_binary());
    command
        .arg("run")
        .args(args)
        .arg("--")
        .arg(program)
        .args(guest_args);
    guest_harness::set_guest_environment(&mut command);
    let actual = guest_harness::run_captured(&mut command, std::time::Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("cannot run rv32vm: {e}"));
    if let Some(report) = divergence(reference, &actual) {
        panic!(
            "{what} diverges from qemu-riscv32:\n{report}\n{}",
            tail(&actual.stderr, 15)
        );
    }
    String::from_utf8_lossy(&actual.stderr).into_owned()
}

/// qemu-riscv32's run of guest `name` (at `program`) with `guest_args`, which exits 0.
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
fn qemu_reference(name: &str, program: &Path, guest_args: &[&str]) -> Outcome {
    GuestRun {
        name,
        program: program.to_path_buf(),
        args: guest_args.iter().map(OsString::from).collect(),
        setup: &no_setup,
        expected_end: ExpectedEnd::Exit(0),
        env: Vec::new(),
    }
    .run(&Runner::Qemu)
}

/// The first number after `label` on a `--stats` line that starts with it (0 if none).
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
fn stat(stats: &str, label: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// `rv32vm run` options for tier 2 on every instruction ([`common::tier_args`]) and then
/// `extra`.
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
fn t2_everywhere(extra: &[&'static str]) -> Vec<&'static std::ffi::OsStr> {
    common::tier_args("t2")
        .into_iter()
        .chain(extra.iter().copied())
        .map(std::ffi::OsStr::new)
        .collect()
}

/// Plain `--tier t2` (no `--t2-threshold`): tier 1 compiles every block before it first
/// runs, and the blocks the guest keeps coming back to get tier-2 regions: the output is
/// qemu's, and both tiers ran. A loop already sampled hot when it earns its region gets it
/// compiled in the background while tier 1 runs it, so the program runs long enough (scale
/// 50, about a second: many compiles' time even on a busy machine) for such a region to
/// land. (Re-optimisation happens in the background too; whether it lands is not asserted.)
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
#[test]
fn plain_tier_2_runs_cold_code_in_tier_1_and_hot_code_in_regions() {
    let name = "indirect";
    let program = build_guests().join(name);
    let scale = ["50"];
    let reference = qemu_reference(name, &program, &scale);
    let args = ["--tier", "t2", "--no-code-cache", "--stats"].map(std::ffi::OsStr::new);
    let stats = run_like_qemu(
        &reference,
        &args,
        &program,
        &scale,
        "indirect under --tier t2",
    );
    assert!(
        stat(&stats, "blocks compiled") > 0,
        "tier 1 compiled nothing:\n{stats}"
    );
    assert!(
        stat(&stats, "regions installed") > 0,
        "no tier-2 region for the hot loop:\n{stats}"
    );
}

/// LLVM (the build's `librv32vm-llvm.so`, or libLLVM) is opened only by a run that may use tier
/// 2, after the run started (it took 11 ms of every run's start when linked): glibc's
/// `LD_DEBUG=files` lists each library the loader opens, and whether at start-up or by
/// `dlopen`.
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
#[test]
fn only_tier_2_opens_llvm_and_after_the_start() {
    let program = build_guests().join("indirect");
    let loaded_libraries = |tier: &str| {
        let out = std::process::Command::new(rv32vm_binary())
            .args(["run", "--no-code-cache", "--tier", tier])
            .arg(&program)
            .arg("20")
            .env("LD_DEBUG", "files")
            .output()
            .expect("run rv32vm");
        assert!(
            out.status.success(),
            "indirect under --tier {tier}: {out:?}"
        );
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        log.lines()
            .filter(|l| {
                let file = l.split("file=").nth(1).and_then(|f| f.split(' ').next());
                let llvm =
                    file.is_some_and(|f| f.contains("libLLVM") || f.contains("librv32vm-llvm"));
                llvm && l.contains(" by ")
            })
            .map(str::to_string)
            .collect::<Vec<String>>()
    };
    for tier in ["interp", "t1"] {
        let loads = loaded_libraries(tier);
        assert!(loads.is_empty(), "--tier {tier} opened LLVM: {loads:?}");
    }
    for tier in ["t2", "auto"] {
        let loads = loaded_libraries(tier);
        assert!(
            !loads.is_empty() && loads.iter().all(|l| l.contains("dynamically loaded by")),
            "--tier {tier} should open LLVM with dlopen: {loads:?}"
        );
    }
}

/// Under `--tier t2` a region compiled fast whose code keeps the guest busy is compiled again
/// with full optimisation in the background and replaces the fast one (and the fast regions
/// that ran its block inside themselves): the output must stay qemu's, and it must happen.
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
#[test]
fn reoptimised_regions_keep_qemus_output() {
    let guests = build_guests();
    for name in ["indirect", "qsort"] {
        let program = guests.join(name);
        let reference = qemu_reference(name, &program, &[]);
        let args = t2_everywhere(&["--stats"]);
        let stats = run_like_qemu(
            &reference,
            &args,
            &program,
            &[],
            &format!("{name} under --tier t2 with re-optimisation"),
        );
        let reoptimised = stat(&stats, "re-optimised");
        assert!(
            reoptimised > 0,
            "{name}: no region was re-optimised under --tier t2:\n{stats}"
        );
    }
}

/// A program that patches its code and flushes 1800 times (`code_patching`): under
/// `--tier t2` every region must still be compiled and loaded. Each flush begins a code epoch
/// whose code memory stays mapped while the region cache keeps it; once the epochs filled the
/// address space within reach of the executable, no region could be loaded any more (the
/// output stayed right, through the interpreter, with a warning per region).
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
#[test]
fn many_code_flushes_leave_tier_2_room_to_compile() {
    let name = "code_patching";
    let program = build_guests().join(name);
    let reference = qemu_reference(name, &program, &[]);
    let args = t2_everywhere(&["--no-code-cache", "--stats"]);
    let stats = run_like_qemu(
        &reference,
        &args,
        &program,
        &[],
        "code_patching under --tier t2",
    );
    assert!(
        !stats.contains("no host memory"),
        "tier 2 ran out of code memory:\n{}",
        tail(stats.as_bytes(), 10)
    );
    let failures = stats
        .lines()
        .find_map(|l| l.trim().strip_prefix("compile failures"))
        .and_then(|rest| rest.split(',').next()?.trim().parse::<u64>().ok());
    assert_eq!(
        failures,
        Some(0),
        "compile failures under --tier t2:\n{stats}"
    );
}

/// The code cache (`--code-cache DIR`): a second `--tier t2` run of a program loads all its
/// regions instead of compiling them, and damaged cache files (truncated, a flipped byte) are
/// compiled again, never run: every run's output must be qemu's.
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
#[test]
fn code_cache_serves_a_second_run_and_survives_damaged_files() {
    let guests = build_guests();
    let cache = ScratchDir::new("code-cache");
    let from_code_cache = |stderr: &str| -> u64 {
        stderr
            .lines()
            .find(|l| l.trim().starts_with("regions installed"))
            .and_then(|l| l.split("; ").nth(1))
            .and_then(|rest| {
                rest.split(", ")
                    .nth(1)?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no code cache count in --stats:\n{stderr}"))
    };
    // Files are kept in subdirectories named by their key's first byte.
    let cache_files = || -> Vec<std::path::PathBuf> {
        let subdirs = std::fs::read_dir(cache.path()).expect("list the code cache");
        subdirs
            .flatten()
            .filter(|d| d.path().is_dir())
            .flat_map(|d| common::files_with_extension(&d.path(), "o"))
            .collect()
    };
    for name in ["qsort", "indirect"] {
        let program = guests.join(name);
        let reference = qemu_reference(name, &program, &[]);
        // Fast regions only: re-optimisation in the background would make the regions
        // planned depend on timing.
        let mut args = t2_everywhere(&["--t2-opt", "fast", "--stats", "--code-cache"]);
        args.push(cache.path().as_os_str());
        let run = |label: &str| {
            let what = format!("{name}, {label} run with a code cache,");
            from_code_cache(&run_like_qemu(&reference, &args, &program, &[], &what))
        };
        let before = cache_files().len();
        run("first");
        let stored = cache_files().len() - before;
        assert!(stored > 0, "{name}: the first run stored no region");
        let loaded = run("second") as usize;
        assert_eq!(
            loaded, stored,
            "{name}: the second run loaded {loaded} regions of the {stored} stored"
        );
        for (i, file) in cache_files().iter().enumerate() {
            let mut bytes = std::fs::read(file).expect("read a cache file");
            if i % 2 == 0 {
                bytes.truncate(bytes.len() / 2);
            } else {
                let middle = bytes.len() / 2;
                bytes[middle] ^= 0x40;
            }
            std::fs::write(file, bytes).expect("damage a cache file");
        }
        let damaged = run("third, damaged cache,");
        assert_eq!(damaged, 0, "{name}: regions loaded from damaged files");
    }
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

/// The signals `host_signals` asks for: at its line "READY n", the harness sends these.
const HOST_SIGNAL_PLAN: &[(&str, &[i32])] = &[
    ("READY 1", &[libc::SIGHUP, libc::SIGTERM]),
    ("READY 2", &[libc::SIGUSR1]),
    ("READY 3", &[libc::SIGUSR2]),
    ("READY 4", &[libc::SIGINT]),
    ("READY 5", &[libc::SIGWINCH]),
];

/// Runs `program` under `runner`, sending signals to the emulator process as
/// [`HOST_SIGNAL_PLAN`] says when the guest prints its READY lines.
fn run_sending_signals(runner: &Runner, program: &Path) -> Outcome {
    use std::io::BufRead;
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Instant;

    let scratch = ScratchDir::new("host_signals");
    let mut command = runner.command(program, &[]);
    command.current_dir(scratch.path());
    guest_harness::set_guest_environment(&mut command);
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", runner.label()));
    let pid = child.id() as i32;
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            bytes
        })
    });
    let (lines_tx, lines) = mpsc::channel::<Vec<u8>>();
    let stdout = child.stdout.take().expect("stdout is piped");
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if lines_tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let deadline = started + guest_harness::RUN_TIME_LIMIT;
    let mut output = Vec::new();
    let mut timed_out = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                let text = String::from_utf8_lossy(&line);
                for (marker, signals) in HOST_SIGNAL_PLAN {
                    if text.trim_end() == *marker {
                        for &signal in *signals {
                            // SAFETY: kill has no memory effects; `pid` is our own child, which
                            // has not been reaped yet (we wait for it below).
                            unsafe { libc::kill(pid, signal) };
                        }
                    }
                }
                output.extend_from_slice(&line);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                let _ = child.kill();
                break;
            }
        }
    }
    let status = child.wait().expect("wait for the emulator");
    Outcome {
        status: (!timed_out).then_some(status),
        stdout: output,
        stderr: stderr
            .and_then(|handle| handle.join().ok())
            .unwrap_or_default(),
        elapsed: started.elapsed(),
    }
}

/// Signals from another host process reach the guest through its mask and dispositions, as
/// under qemu-riscv32: an ignored one is ignored, a blocked one stays pending (SIGTERM must not
/// kill a guest that blocks it, a blocked SIGINT does not cut a sleep short), handlers run
/// (also in a loop without system calls), and a pending SIGTERM kills once unblocked.
#[test]
fn host_signals() {
    let program = build_guests().join("host_signals");
    guest_harness::require_qemu();
    let reference = run_sending_signals(&Runner::Qemu, &program);
    assert_eq!(
        reference.end(),
        ExpectedEnd::Signal(libc::SIGTERM).describe(),
        "qemu-riscv32 did not end as expected; stdout:\n{}\nstderr:\n{}",
        tail(&reference.stdout, 20),
        tail(&reference.stderr, 20)
    );
    let mut failures = Vec::new();
    for tier in common::TIERS {
        let runner = Runner::Rv32vm {
            tier: (*tier).to_string(),
            allow_misaligned: false,
        };
        let actual = run_sending_signals(&runner, &program);
        if let Some(report) = divergence(&reference, &actual) {
            failures.push(format!(
                "under `{}`:\n{report}\nstdout tail:\n{}\nstderr tail:\n{}",
                runner.label(),
                tail(&actual.stdout, 20),
                tail(&actual.stderr, 15)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// /proc/self/mem reads and writes guest memory at guest addresses. qemu-riscv32 passes these
/// calls to the host (reading its own memory), so the program checks itself: every check
/// must print "ok".
#[test]
fn proc_self_mem() {
    const CHECKS: usize = 23;
    let program = build_guests().join("proc_self_mem");
    for tier in common::TIERS {
        let runner = Runner::Rv32vm {
            tier: (*tier).to_string(),
            allow_misaligned: false,
        };
        let guest = GuestRun {
            name: "proc_self_mem",
            program: program.clone(),
            args: Vec::new(),
            setup: &no_setup,
            expected_end: ExpectedEnd::Exit(0),
            env: Vec::new(),
        };
        let outcome = guest.run(&runner);
        let stdout = String::from_utf8_lossy(&outcome.stdout);
        let oks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
        assert!(
            outcome.end() == ExpectedEnd::Exit(0).describe()
                && oks == CHECKS
                && stdout
                    .lines()
                    .all(|l| l.starts_with("ok ") || l == "failures=0"),
            "proc_self_mem under `{}` ({}, {oks} of {CHECKS} checks ok):\n{stdout}\nstderr:\n{}",
            runner.label(),
            outcome.end(),
            tail(&outcome.stderr, 15)
        );
    }
}

/// `rv32vm run` refuses a program that is not a regular file, or is larger than any program
/// can be, before reading it: a FIFO must not block, /dev/zero must not be read forever.
#[test]
fn programs_that_are_not_regular_files_are_refused_without_reading() {
    use std::process::Command;
    use std::time::Duration;

    let scratch = ScratchDir::new("bad_programs");
    let fifo = scratch.path().join("fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().expect("utf-8 path")).expect("no NUL");
    // SAFETY: `c_path` is a valid NUL-terminated path for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let huge = scratch.path().join("huge");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(3 << 30))
        .expect("create a sparse 3 GiB file");
    let cases: [(&Path, &str); 4] = [
        (&fifo, "is a FIFO, not a regular file"),
        (
            Path::new("/dev/zero"),
            "is a character device, not a regular file",
        ),
        (scratch.path(), "is a directory, not a regular file"),
        (&huge, "more than the 1073741824 bytes that can be used"),
    ];
    for (program, message) in cases {
        let outcome = common::run_capturing_bytes(
            Command::new(rv32vm_binary()).arg("run").arg(program),
            Duration::from_secs(30),
        )
        .expect("start rv32vm");
        let stderr = String::from_utf8_lossy(&outcome.stderr);
        assert!(
            outcome.status.and_then(|s| s.code()) == Some(1) && stderr.contains(message),
            "rv32vm run {}: expected status 1 and {message:?}, got {:?} after {:.1?}, stderr: {stderr}",
            program.display(),
            outcome.status,
            outcome.elapsed
        );
    }
}
