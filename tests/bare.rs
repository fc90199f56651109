//! `rv32vm run --bare`: the privileged architecture on the bare-metal platform (Sv32 demand
//! paging under an S-mode kernel, MPRV, trigger CSRs, counter writes) in every tier, with QEMU
//! as the oracle where it implements the same behaviour; the signature dump; HTIF and input
//! errors.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// Time limit for one run of a test program (rv32vm or QEMU); they take milliseconds.
const RUN_LIMIT: Duration = Duration::from_secs(30);

fn out_dir() -> PathBuf {
    let dir = common::repo_root().join("target/bare-tests");
    std::fs::create_dir_all(&dir).expect("create target/bare-tests");
    dir
}

/// Build tests/bare/NAME.S; `tag` keeps the outputs of tests running in parallel apart.
fn build(name: &str, tag: &str) -> PathBuf {
    build_with(name, tag, &[])
}

/// Build tests/bare/NAME.S (or NAME.c, freestanding) with `extra` compiler arguments (e.g.
/// `-DQEMU_VIRT`), linked with tests/isa/link.ld.
fn build_with(name: &str, tag: &str, extra: &[&str]) -> PathBuf {
    build_linked(name, tag, extra, "tests/isa/link.ld")
}

/// [`build_with`] with the linker script `script` (relative to the repository).
fn build_linked(name: &str, tag: &str, extra: &[&str], script: &str) -> PathBuf {
    common::require_tool(
        "riscv64-linux-gnu-gcc",
        "--version",
        "gcc-riscv64-linux-gnu",
    );
    let root = common::repo_root();
    let elf = out_dir().join(format!("{name}-{tag}.elf"));
    let c_source = root.join(format!("tests/bare/{name}.c"));
    let source = if c_source.exists() {
        c_source
    } else {
        root.join(format!("tests/bare/{name}.S"))
    };
    let status = Command::new("riscv64-linux-gnu-gcc")
        .args([
            "-march=rv32gc_zicsr_zifencei",
            "-mabi=ilp32",
            "-nostdlib",
            "-nostartfiles",
            "-static",
            "-fno-pic",
            "-no-pie",
            "-Wl,--build-id=none",
            "-Wl,--no-warn-rwx-segments",
            // For the C programs: no C library, no calls to its functions.
            "-O2",
            "-ffreestanding",
            "-fno-builtin",
        ])
        .args(extra)
        .arg("-I")
        .arg(root.join("tests/bare/include"))
        .arg("-T")
        .arg(root.join(script))
        .arg(&source)
        .arg("-o")
        .arg(&elf)
        .status()
        .expect("run riscv64-linux-gnu-gcc");
    assert!(status.success(), "building {}", source.display());
    elf
}

/// Run `elf` (a self-checking program: exit 0 = pass, N = case N failed) under every tier.
fn assert_passes_on_every_tier(elf: &Path) {
    for tier in common::TIERS {
        let outcome = common::run_with_timeout(
            Command::new(env!("CARGO_BIN_EXE_rv32vm"))
                .args(["run", "--bare"])
                .arg(elf)
                .args(common::tier_args(tier)),
            RUN_LIMIT,
        )
        .expect("run rv32vm");
        assert!(
            outcome.succeeded(),
            "{} under --tier {tier}: {} (case N failed = status N; 100 + mcause = a trap to \
             M-mode that should not happen)\nstderr: {}",
            elf.display(),
            outcome.describe_end(),
            outcome.stderr
        );
    }
}

/// Build the QEMU variant of tests/bare/NAME.S (`-DQEMU_VIRT`: the result goes to the
/// sifive,test0 syscon) and check that it passes on `qemu-system-riscv32 -M virt`: the oracle
/// for the values the program expects.
fn assert_passes_under_qemu(name: &str) {
    common::require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let elf = build_with(name, "qemu", &["-DQEMU_VIRT"]);
    let outcome = common::run_with_timeout(
        Command::new("qemu-system-riscv32")
            .args(["-M", "virt", "-bios", "none", "-nographic", "-m", "128M"])
            .arg("-kernel")
            .arg(&elf),
        RUN_LIMIT,
    )
    .expect("run qemu-system-riscv32");
    assert!(
        outcome.succeeded(),
        "{name} under QEMU: {} (status N = case N failed)\nstdout: {}\nstderr: {}",
        outcome.describe_end(),
        outcome.stdout,
        outcome.stderr
    );
}

#[test]
fn sv32_demand_paging_under_an_s_mode_kernel_in_the_top_megapage() {
    assert_passes_under_qemu("vm_demand");
    assert_passes_on_every_tier(&build("vm_demand", "run"));
}

#[test]
fn mprv_loads_and_stores_translate_through_the_page_tables() {
    assert_passes_under_qemu("vm_mprv");
    assert_passes_on_every_tier(&build("vm_mprv", "run"));
}

#[test]
fn trigger_csrs_say_that_no_trigger_exists() {
    assert_passes_on_every_tier(&build("triggers", "run"));
}

#[test]
fn counter_writes_replace_the_writing_instructions_increment() {
    assert_passes_on_every_tier(&build("counters", "run"));
}

fn run_bare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rv32vm"))
        .args(["run", "--bare"])
        .args(args)
        .output()
        .expect("run rv32vm")
}

#[test]
fn signature_is_written_one_word_per_line() {
    let elf = build("signature", "sig");
    for tier in common::TIERS {
        let sig = out_dir().join(format!("signature-{tier}.txt"));
        let _ = std::fs::remove_file(&sig);
        let args = [elf.to_str().unwrap(), "--signature", sig.to_str().unwrap()];
        let out = run_bare(&[&args[..], &common::tier_args(tier)[..]].concat());
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = std::fs::read_to_string(&sig).expect("signature file");
        assert_eq!(
            text, "deadbeef\n01234567\n00000000\n44444444\n",
            "tier {tier}"
        );
    }
    // The program itself as the signature file (also through a hard link): refused, and the
    // program is unchanged.
    let before = std::fs::read(&elf).expect("read the program");
    let link = out_dir().join("signature-link.elf");
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(&elf, &link).expect("hard link");
    for target in [&elf, &link] {
        let out = run_bare(&[
            elf.to_str().unwrap(),
            "--signature",
            target.to_str().unwrap(),
        ]);
        assert_clean_error(&out, "is the program itself");
    }
    assert!(std::fs::read(&elf).expect("read the program") == before);
}

/// An ELF with a `tohost` symbol (riscv-tests, riscv-arch-test) is a bare-metal program:
/// `rv32vm run` runs it as `run --bare` does, where user mode would kill it at its first CSR
/// access. The bare-metal options need such a program.
#[test]
fn an_elf_with_tohost_runs_bare_without_the_flag() {
    let elf = build("signature", "sig");
    for tier in common::TIERS {
        let sig = out_dir().join(format!("signature-noflag-{tier}.txt"));
        let _ = std::fs::remove_file(&sig);
        let out = Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .args([
                "run",
                elf.to_str().unwrap(),
                "--signature",
                sig.to_str().unwrap(),
            ])
            .args(common::tier_args(tier))
            .output()
            .expect("run rv32vm");
        assert_eq!(out.status.code(), Some(0), "tier {tier}: {out:?}");
        let text = std::fs::read_to_string(&sig).expect("signature file");
        assert_eq!(
            text, "deadbeef\n01234567\n00000000\n44444444\n",
            "tier {tier}"
        );
    }
    let not_elf = out_dir().join("not-an-elf.bin");
    std::fs::write(&not_elf, b"not an ELF at all").expect("write");
    for option in ["--signature", "--trap-misaligned"] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rv32vm"));
        command.args(["run", not_elf.to_str().unwrap(), option]);
        if option == "--signature" {
            command.arg(out_dir().join("unused.sig"));
        }
        let out = command.output().expect("run rv32vm");
        assert_clean_error(&out, "are for bare-metal programs");
    }
}

/// One `rv32vm: error:` line, status 1, no panic.
fn assert_clean_error(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr}");
    assert!(stderr.starts_with("rv32vm: error:"), "{stderr}");
    assert!(stderr.contains(needle), "expected `{needle}` in: {stderr}");
}

#[test]
fn bad_programs_give_one_clear_error() {
    let dir = out_dir();
    let garbage = dir.join("garbage.elf");
    std::fs::write(&garbage, b"definitely not an ELF file").unwrap();
    assert_clean_error(&run_bare(&[garbage.to_str().unwrap()]), "not an ELF");

    let elf = build("signature", "bad");
    let bytes = std::fs::read(&elf).unwrap();
    let truncated = dir.join("truncated.elf");
    std::fs::write(&truncated, &bytes[..100]).unwrap();
    assert_clean_error(&run_bare(&[truncated.to_str().unwrap()]), "truncated");

    let missing = dir.join("missing.elf");
    assert_clean_error(&run_bare(&[missing.to_str().unwrap()]), "cannot read");

    // A user-mode program has no tohost symbol.
    let no_tohost = dir.join("no-tohost.elf");
    let status = Command::new("riscv64-linux-gnu-gcc")
        .args([
            "-march=rv32gc",
            "-mabi=ilp32",
            "-nostdlib",
            "-static",
            "-x",
            "assembler",
            "-",
        ])
        .arg("-o")
        .arg(&no_tohost)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(b".globl _start\n_start: j _start\n")?;
            c.wait()
        })
        .expect("assemble");
    assert!(status.success());
    assert_clean_error(&run_bare(&[no_tohost.to_str().unwrap()]), "tohost");
}

#[test]
fn a_program_that_never_reports_stops_at_the_instruction_limit() {
    let elf = build("spin", "limit");
    for tier in common::TIERS {
        let args = [elf.to_str().unwrap(), "--max-insns", "100000"];
        let out = run_bare(&[&args[..], &common::tier_args(tier)[..]].concat());
        assert_eq!(out.status.code(), Some(124), "tier {tier}: {out:?}");
    }
}

#[test]
fn htif_commands_other_than_exit_are_named_in_the_error() {
    // A console command other than read and write, low word first: never exit code 32.
    let elf = build_with(
        "htif_command",
        "console",
        &["-DTOHOST_LO=0x41", "-DTOHOST_HI=0x01020000"],
    );
    for tier in common::TIERS {
        let out = run_bare(&[elf.to_str().unwrap(), "--tier", tier]);
        assert_clean_error(&out, "tohost = 0x0102000000000041");
        assert_clean_error(&out, "HTIF device 1 (console), command 2");
    }
    // An unknown device.
    let elf = build_with(
        "htif_command",
        "device2",
        &["-DTOHOST_LO=0x41", "-DTOHOST_HI=0x02010000"],
    );
    for tier in common::TIERS {
        let out = run_bare(&[elf.to_str().unwrap(), "--tier", tier]);
        assert_clean_error(&out, "HTIF device 2 (unknown), command 1");
    }
    // Exit requests whose test number does not fit 32 bits (they once wrapped to a pass, or
    // to a negative number and status 0): the whole number, and a failing status.
    for (hi, number) in [("2", "4294967296"), ("1", "2147483648")] {
        let elf = build_with(
            "htif_command",
            &format!("exit{hi}"),
            &["-DTOHOST_LO=1", &format!("-DTOHOST_HI={hi}")],
        );
        for tier in common::TIERS {
            let out = run_bare(&[elf.to_str().unwrap(), "--tier", tier]);
            assert_eq!(out.status.code(), Some(255), "{tier}: {out:?}");
            assert!(
                String::from_utf8_lossy(&out.stderr).contains(&format!("test {number} failed")),
                "{tier}: {out:?}"
            );
        }
    }
}

#[test]
fn reversed_signature_symbols_are_an_error() {
    let elf = build("signature_reversed", "rev");
    let sig = out_dir().join("signature-reversed.txt");
    let _ = std::fs::remove_file(&sig);
    let out = run_bare(&[elf.to_str().unwrap(), "--signature", sig.to_str().unwrap()]);
    assert_clean_error(&out, "end_signature");
    assert_clean_error(&out, "before begin_signature");
    assert!(!sig.exists(), "no signature file may be written");
}

#[test]
fn devices_fifos_and_huge_files_are_refused_before_reading() {
    // Each would block or read without end if it were read.
    let out = common::run_with_timeout(
        Command::new(env!("CARGO_BIN_EXE_rv32vm")).args(["run", "--bare", "/dev/zero"]),
        RUN_LIMIT,
    )
    .expect("run rv32vm");
    assert_eq!(out.status.and_then(|s| s.code()), Some(1), "{out:?}");
    assert!(
        out.stderr.starts_with("rv32vm: error:") && out.stderr.contains("a character device"),
        "{}",
        out.stderr
    );

    let dir = out_dir();
    let fifo = dir.join("program.fifo");
    let _ = std::fs::remove_file(&fifo);
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
    let out = common::run_with_timeout(
        Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .args(["run", "--bare"])
            .arg(&fifo),
        RUN_LIMIT,
    )
    .expect("run rv32vm");
    assert_eq!(out.status.and_then(|s| s.code()), Some(1), "{out:?}");
    assert!(out.stderr.contains("a FIFO"), "{}", out.stderr);

    let huge = dir.join("huge-sparse.elf");
    let file = std::fs::File::create(&huge).expect("create sparse file");
    file.set_len(8 << 30).expect("make it 8 GiB (sparse)");
    drop(file);
    let out = run_bare(&[huge.to_str().unwrap()]);
    let _ = std::fs::remove_file(&huge);
    assert_clean_error(&out, "8589934592 bytes");
}

/// Spike's HTIF console reads stdin a byte per request (the reply is `0x100 | byte`, as
/// Spike's); tests/bare/htif_console.S echoes a line. At the end of the input a read can never
/// be answered: the run ends with an error instead of waiting forever.
#[test]
fn htif_console_reads_come_from_stdin() {
    use std::io::Write as _;
    let elf = build("htif_console", "console");
    let run_with_input = |tier: &str, input: &[u8]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .args(["run", "--bare", elf.to_str().unwrap()])
            .args(common::tier_args(tier))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run rv32vm");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write stdin");
        child.wait_with_output().expect("wait for rv32vm")
    };
    for tier in common::TIERS {
        let out = run_with_input(tier, b"hello, spike\nnot read");
        assert_eq!(out.status.code(), Some(0), "tier {tier}: {out:?}");
        assert_eq!(out.stdout, b"hello, spike\n", "tier {tier}");
        let out = run_with_input(tier, b"no newline");
        assert_clean_error(&out, "reads the HTIF console after the end of its input");
        assert_eq!(out.stdout, b"no newline", "tier {tier}");
    }
}

/// Every program in tests/bare/ is named (so built and run) by a test in this file.
#[test]
fn every_program_has_a_test() {
    let this_file = std::fs::read_to_string(common::repo_root().join("tests/bare.rs"))
        .expect("read tests/bare.rs");
    let dir = common::repo_root().join("tests/bare");
    for extension in ["S", "c"] {
        for source in common::files_with_extension(&dir, extension) {
            let name = source.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(
                this_file.contains(&format!("\"{name}\"")),
                "tests/bare/{name}.{extension} is not run by any test in tests/bare.rs"
            );
        }
    }
}

/// The output riscv-tests' benchmarks get from Spike for tests/bare/htif_proxy.c.
const PROXY_STDOUT: &str = "hello through the syscall proxy\nconsole device\n";

#[test]
fn the_htif_syscall_proxy_and_console_print_as_under_spike() {
    let digits: String = (0..200).map(|i| char::from(b'0' + i % 10)).collect();
    let expected = format!("{PROXY_STDOUT}{digits}\n");
    for (code, tag) in [(0, "exit0"), (5, "exit5")] {
        let elf = build_with("htif_proxy", tag, &[&format!("-DEXIT_CODE={code}")]);
        for tier in common::TIERS {
            let out = common::run_with_timeout(
                Command::new(env!("CARGO_BIN_EXE_rv32vm"))
                    .args(["run", "--bare"])
                    .args(common::tier_args(tier))
                    .arg(&elf)
                    .stdin(std::process::Stdio::null()),
                RUN_LIMIT,
            )
            .expect("run rv32vm");
            let status = out.status.and_then(|s| s.code());
            assert_eq!(status, Some(code), "{tier}: {}", out.stderr);
            assert_eq!(out.stdout, expected, "{tier}");
            assert!(
                out.stderr.starts_with("and its stderr\n"),
                "{tier}: {}",
                out.stderr
            );
        }
    }
}

/// Run tests/bare/semihosting.c with `status` as its exit status under QEMU (the oracle) and
/// every tier: the same stdout, stderr and status. Each run gets its own scratch file.
#[test]
fn semihosting_calls_behave_as_under_qemu() {
    common::require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let elf = build("semihosting", "run");
    let scratch = |who: &str| out_dir().join(format!("semihosting-{who}.txt"));
    for status in ["0", "7"] {
        let qemu_file = scratch("qemu");
        let qemu = common::run_with_timeout(
            Command::new("qemu-system-riscv32")
                .args(["-M", "virt", "-bios", "none", "-nographic", "-m", "128M"])
                .args(["-semihosting", "-serial", "none", "-monitor", "none"])
                .arg("-kernel")
                .arg(&elf)
                .arg("-append")
                .arg(format!("{} {status}", qemu_file.display()))
                .stdin(std::process::Stdio::null()),
            RUN_LIMIT,
        )
        .expect("run qemu-system-riscv32");
        let code = |o: &common::RunOutcome| o.status.and_then(|s| s.code());
        assert_eq!(code(&qemu).map(|c| c.to_string()), Some(status.to_string()));
        assert!(qemu.stdout.ends_with("done\n"), "QEMU: {}", qemu.stdout);
        assert!(!qemu_file.exists(), "the program removes its file");
        for tier in common::TIERS {
            let file = scratch(tier);
            let out = common::run_with_timeout(
                Command::new(env!("CARGO_BIN_EXE_rv32vm"))
                    .args(["run", "--bare"])
                    .args(common::tier_args(tier))
                    .arg(&elf)
                    .arg(&file)
                    .arg(status)
                    .stdin(std::process::Stdio::null()),
                RUN_LIMIT,
            )
            .expect("run rv32vm");
            assert_eq!(code(&out), code(&qemu), "{tier}: {}", out.stderr);
            assert_eq!(out.stdout, qemu.stdout, "{tier}");
            assert_eq!(out.stderr, qemu.stderr, "{tier}");
            assert!(!file.exists(), "{tier}: the program removes its file");
        }
    }
}

#[test]
fn segments_load_at_their_physical_addresses() {
    let elf = build_linked("load_address", "run", &[], "tests/bare/lma.ld");
    assert_passes_on_every_tier(&elf);
}
