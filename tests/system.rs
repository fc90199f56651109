//! System mode: `rv32vm boot` with a minimal S-mode kernel (built-in SBI console, UART, syscon
//! exit codes) and bad inputs that must give one clear error line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Build tests/system/hello_smode.S into an ELF kernel linked at RAM base (once per run: the
/// tests run in parallel threads).
fn hello_kernel() -> PathBuf {
    static KERNEL: OnceLock<PathBuf> = OnceLock::new();
    KERNEL
        .get_or_init(|| build_guest("hello_smode.S", "hello_smode", &[]))
        .clone()
}

/// The guest that resets at once, as an S-mode kernel (reset through the syscon, or through
/// SBI SRST with `via_sbi`).
fn reset_kernel(via_sbi: bool) -> PathBuf {
    static SYSCON: OnceLock<PathBuf> = OnceLock::new();
    static SBI: OnceLock<PathBuf> = OnceLock::new();
    if via_sbi {
        SBI.get_or_init(|| build_guest("reset.S", "reset_sbi", &["-DVIA_SBI"]))
            .clone()
    } else {
        SYSCON
            .get_or_init(|| build_guest("reset.S", "reset_syscon", &[]))
            .clone()
    }
}

/// The guest that resets at once, as a raw M-mode firmware image for `--bios`.
fn reset_firmware() -> PathBuf {
    static FIRMWARE: OnceLock<PathBuf> = OnceLock::new();
    FIRMWARE
        .get_or_init(|| {
            let elf = reset_kernel(false);
            let bin = elf.with_extension("bin");
            let status = Command::new("riscv64-linux-gnu-objcopy")
                .args(["-O", "binary"])
                .arg(&elf)
                .arg(&bin)
                .status()
                .expect("run riscv64-linux-gnu-objcopy");
            assert!(status.success(), "objcopy {}", elf.display());
            bin
        })
        .clone()
}

/// Build tests/system/`src` (with `defines`) into target/system-tests/`name`.elf, linked at
/// RAM base.
fn build_guest(src: &str, name: &str, defines: &[&str]) -> PathBuf {
    build_guest_linked(src, name, defines, "link.ld")
}

/// [`build_guest`] with the linker script tests/system/`script`.
fn build_guest_linked(src: &str, name: &str, defines: &[&str], script: &str) -> PathBuf {
    common::require_tool(
        "riscv64-linux-gnu-gcc",
        "--version",
        "gcc-riscv64-linux-gnu",
    );
    let out_dir = scratch_dir();
    let elf = out_dir.join(format!("{name}.elf"));
    let src = repo().join("tests/system").join(src);
    let status = Command::new("riscv64-linux-gnu-gcc")
        .args(["-march=rv32gc", "-mabi=ilp32", "-nostdlib", "-static"])
        .args(defines)
        // No build-id note: it would land at RAM base, before _start, in a raw image.
        .arg("-Wl,--build-id=none")
        .arg("-T")
        .arg(repo().join("tests/system").join(script))
        .arg("-Wl,--no-warn-rwx-segments")
        .arg(&src)
        .arg("-o")
        .arg(&elf)
        .status()
        .expect("run riscv64-linux-gnu-gcc");
    assert!(status.success(), "building {}", src.display());
    elf
}

/// target/system-tests, created.
fn scratch_dir() -> PathBuf {
    let dir = repo().join("target/system-tests");
    std::fs::create_dir_all(&dir).expect("create target/system-tests");
    dir
}

/// A fresh scratch directory for one test (removed first if a previous run left it).
fn test_dir(name: &str) -> PathBuf {
    let dir = scratch_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a test directory");
    dir
}

fn boot(args: &[&str], kernel: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rv32vm"))
        .arg("boot")
        .arg("--kernel")
        .arg(kernel)
        .args(args)
        .output()
        .expect("run rv32vm")
}

#[test]
fn smode_kernel_prints_and_powers_off_with_its_code() {
    let kernel = hello_kernel();
    for tier in common::TIERS {
        let out = boot(&["--timeout", "30", "--tier", tier], &kernel);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "hello from S-mode\nU\n",
            "tier {tier}: stderr {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(3), "tier {tier}");
    }
}

/// `--bios` takes an ELF as QEMU's `-bios` does: its segments go to their physical addresses
/// and the hart starts at its entry point, in M-mode.
#[test]
fn elf_firmware_runs_from_its_entry_point() {
    let firmware = build_guest_linked(
        "mmode_elf_fw.S",
        "mmode_elf_fw",
        &[],
        "link_two_segments.ld",
    );
    let kernel = repo().join("images/Image");
    for tier in common::TIERS {
        let out = boot(
            &[
                "--timeout",
                "30",
                "--tier",
                tier,
                "--bios",
                path_str(&firmware),
            ],
            &kernel,
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "hello from an ELF firmware\n",
            "tier {tier}: stderr {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(6), "tier {tier}");
    }
}

/// `--bios none` runs the kernel itself in M-mode, as QEMU's `-bios none -kernel PROG` does:
/// a bare-metal program for the virt machine prints through the UART, makes misaligned
/// accesses (performed, no trap: no firmware is there to emulate them) and ends through the
/// syscon with the same output and status as under QEMU, in every tier.
#[test]
fn bios_none_runs_a_bare_metal_program_as_qemu_does() {
    common::require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    for code in [0, 3] {
        let program = build_guest_linked(
            "virt_uart_exit.c",
            &format!("virt_uart_exit{code}"),
            &["-O2", "-ffreestanding", &format!("-DEXIT_CODE={code}")],
            "../isa/link.ld",
        );
        let qemu = common::run_with_timeout(
            Command::new("qemu-system-riscv32")
                .args(["-M", "virt", "-bios", "none", "-nographic", "-kernel"])
                .arg(&program)
                .stdin(std::process::Stdio::null()),
            Duration::from_secs(30),
        )
        .expect("run qemu-system-riscv32");
        let status = |o: &common::RunOutcome| o.status.and_then(|s| s.code());
        assert_eq!(status(&qemu), Some(code), "QEMU: {}", qemu.stderr);
        assert!(
            qemu.stdout.starts_with("hello from M-mode"),
            "{}",
            qemu.stdout
        );
        assert!(
            qemu.stdout.contains("device tree in a1\n"),
            "{}",
            qemu.stdout
        );
        // QEMU performs misaligned accesses without a firmware: so must we.
        assert!(
            qemu.stdout.ends_with(
                "misaligned: 05040302 00000504 00000001,00000002,00000003,00000004,\
                 00000005,000000d4,000000c3,000000b2,000000a1,000000f6,000000e5,0000000c\n"
            ),
            "{}",
            qemu.stdout
        );
        for tier in common::TIERS {
            let args = ["--timeout", "30", "--bios", "none", "--kernel"];
            let out = boot_within(
                &[
                    &common::tier_args(tier)[..],
                    &args[..],
                    &[path_str(&program)],
                ]
                .concat(),
                PROMPT_LIMIT,
            );
            assert_eq!(out.stdout, qemu.stdout, "tier {tier}: {}", out.stderr);
            assert_eq!(status(&out), Some(code), "tier {tier}: {}", out.stderr);
        }
    }
    // A truncated program is the kernel file's error, as without --bios none.
    let dir = test_dir("bios_none");
    let whole = std::fs::read(scratch_dir().join("virt_uart_exit0.elf")).expect("read");
    let truncated = dir.join("truncated.elf");
    std::fs::write(&truncated, &whole[..200]).expect("write");
    let args = ["--bios", "none", "--kernel", path_str(&truncated)];
    let out = boot_within(&args, PROMPT_LIMIT);
    assert_one_error(&out, "kernel ELF: truncated", "a truncated program");
}

/// `--semihosting` with `--bios none`, as QEMU's `-semihosting -bios none`: the program of
/// tests/bare/semihosting.c (console, `:tt` streams, a host file, the command line from the
/// kernel's path and `--append`, exit with a status) prints and ends as under QEMU, in every
/// tier. A deterministic run or a snapshot cannot have it.
#[test]
fn semihosting_on_the_machine_behaves_as_under_qemu() {
    common::require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let program = build_guest_linked(
        "../bare/semihosting.c",
        "semihosting",
        &["-O2", "-ffreestanding", "-fno-builtin", "-nostartfiles"],
        "../isa/link.ld",
    );
    let dir = test_dir("semihosting");
    let status = |o: &common::RunOutcome| o.status.and_then(|s| s.code());
    let qemu_file = dir.join("qemu.txt");
    let qemu = common::run_with_timeout(
        Command::new("qemu-system-riscv32")
            .args(["-M", "virt", "-bios", "none", "-nographic", "-semihosting"])
            .args(["-serial", "none", "-monitor", "none", "-kernel"])
            .arg(&program)
            .arg("-append")
            .arg(format!("{} 7", qemu_file.display()))
            .stdin(std::process::Stdio::null()),
        Duration::from_secs(30),
    )
    .expect("run qemu-system-riscv32");
    assert_eq!(status(&qemu), Some(7), "QEMU: {}", qemu.stderr);
    assert!(qemu.stdout.ends_with("done\n"), "QEMU: {}", qemu.stdout);
    for tier in common::TIERS {
        let file = dir.join(format!("{tier}.txt"));
        let append = format!("{} 7", file.display());
        let args = ["--bios", "none", "--semihosting", "--append", &append];
        let out = boot_within(
            &[
                &common::tier_args(tier)[..],
                &args[..],
                &["--timeout", "30", "--kernel", path_str(&program)],
            ]
            .concat(),
            PROMPT_LIMIT,
        );
        assert_eq!(status(&out), Some(7), "tier {tier}: {}", out.stderr);
        assert_eq!(out.stdout, qemu.stdout, "tier {tier}");
        assert_eq!(out.stderr, qemu.stderr, "tier {tier}");
        assert!(!file.exists(), "tier {tier}: the program removes its file");
    }
    let base = [
        "--bios",
        "none",
        "--semihosting",
        "--kernel",
        path_str(&program),
    ];
    let out = boot_within(&[&base[..], &["--deterministic"]].concat(), PROMPT_LIMIT);
    assert_one_error(&out, "--semihosting", "a deterministic run");
    let snapshot = dir.join("saved.snap");
    let save = ["--save", path_str(&snapshot), "--expect", "done"];
    let out = boot_within(&[&base[..], &save[..]].concat(), PROMPT_LIMIT);
    assert_one_error(&out, "--semihosting", "a snapshot");
}

#[test]
fn generated_dtb_can_be_dumped_and_fed_back() {
    let kernel = hello_kernel();
    let dtb = repo().join("target/system-tests/dumped.dtb");
    let out = boot(
        &["--dump-dtb", dtb.to_str().unwrap(), "--timeout", "30"],
        &kernel,
    );
    assert_eq!(out.status.code(), Some(3));
    let blob = std::fs::read(&dtb).expect("dumped dtb");
    assert_eq!(&blob[..4], &[0xd0, 0x0d, 0xfe, 0xed], "FDT magic");
    let out = boot(
        &["--dtb", dtb.to_str().unwrap(), "--timeout", "30"],
        &kernel,
    );
    assert_eq!(out.status.code(), Some(3));
}

/// One clear `rv32vm: error:` line, a non-zero status, no panic.
fn assert_clean_error(out: &std::process::Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {stderr}");
    assert!(lines[0].starts_with("rv32vm: error:"), "{stderr}");
    assert!(stderr.contains(needle), "expected `{needle}` in: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_inputs_give_one_clear_error() {
    let dir = repo().join("target/system-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let garbage = dir.join("garbage.bin");
    std::fs::write(&garbage, b"this is not a kernel").unwrap();
    assert_clean_error(&boot(&[], &garbage), "neither a RISC-V Image");

    let kernel = hello_kernel();
    let bytes = std::fs::read(&kernel).unwrap();
    let truncated = dir.join("truncated.elf");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    assert_clean_error(&boot(&[], &truncated), "kernel ELF");

    let big = dir.join("big-initrd.img");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(64 << 20).unwrap();
    assert_clean_error(
        &boot(
            &["--memory", "32M", "--initrd", big.to_str().unwrap()],
            &kernel,
        ),
        "initrd",
    );

    let bad_dtb = dir.join("bad.dtb");
    std::fs::write(&bad_dtb, b"\xd0\x0d\xfe\xed garbage").unwrap();
    assert_clean_error(
        &boot(&["--dtb", bad_dtb.to_str().unwrap()], &kernel),
        "device tree",
    );

    assert_clean_error(
        &boot(&[], &dir.join("does-not-exist")),
        "cannot read kernel",
    );

    // A truncated ELF firmware.
    let image = repo().join("images/Image");
    assert_clean_error(
        &boot(&["--bios", truncated.to_str().unwrap()], &image),
        "firmware ELF",
    );
}

/// A plain Image (no EFI stub) cut short cannot be told from a whole one by its header, which
/// counts the bss in the kernel's size: booting it warns that it looks truncated, and the
/// timeout that follows says the console stayed silent instead of showing no lines.
#[test]
fn a_truncated_plain_image_is_named_when_the_guest_hangs() {
    let dir = test_dir("truncated-image");
    let image = std::fs::read(repo().join("images/Image")).expect("read images/Image");
    assert!(
        !image.starts_with(b"MZ"),
        "the bundled kernel has no EFI stub"
    );
    let truncated = dir.join("truncated-Image");
    std::fs::write(&truncated, &image[..image.len() / 4]).unwrap();
    let out = boot_within(
        &["--timeout", "2", "--kernel", path_str(&truncated)],
        PROMPT_LIMIT,
    );
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(124),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("the file looks truncated")
            && out.stderr.contains("the console stayed silent"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

/// `rv32vm boot ARGS` with stdin closed, killed (and reported as such) after `limit`.
fn boot_within(args: &[&str], limit: Duration) -> common::RunOutcome {
    common::run_with_timeout(
        Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .arg("boot")
            .args(args),
        limit,
    )
    .expect("run rv32vm")
}

/// Generous for a loaded 2-core CI machine; every case below ends in well under a second
/// when it works, and runs until this limit (or forever) when it does not.
const PROMPT_LIMIT: Duration = Duration::from_secs(60);

/// Exactly one `rv32vm: error:` line containing `needle`, status 1, no panic, no hang.
fn assert_one_error(out: &common::RunOutcome, needle: &str, case: &str) {
    assert!(
        !out.timed_out(),
        "{case}: rv32vm did not stop ({}); stderr: {}",
        out.describe_end(),
        common::tail(&out.stderr, 5)
    );
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(1),
        "{case}: stderr: {}",
        out.stderr
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{case}: expected one line, got: {}",
        out.stderr
    );
    assert!(
        lines[0].starts_with("rv32vm: error:"),
        "{case}: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains(needle),
        "{case}: expected `{needle}` in: {}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{case}: {}", out.stderr);
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 test path")
}

/// The three ways the guest resets at once: S-mode kernel through the syscon, S-mode kernel
/// through SBI SRST, M-mode firmware through the syscon.
fn reset_guests() -> Vec<(&'static str, Vec<String>)> {
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    vec![
        (
            "S-mode syscon reset",
            vec!["--kernel".into(), s(reset_kernel(false))],
        ),
        (
            "S-mode SBI reset",
            vec!["--kernel".into(), s(reset_kernel(true))],
        ),
        (
            "M-mode syscon reset",
            vec![
                "--kernel".into(),
                s(hello_kernel()),
                "--bios".into(),
                s(reset_firmware()),
            ],
        ),
    ]
}

#[test]
fn guest_that_resets_at_once_stops_at_the_timeout_with_one_stats_report() {
    for tier in common::TIERS {
        for (case, guest) in reset_guests() {
            let mut args: Vec<&str> = guest.iter().map(String::as_str).collect();
            args.extend(["--tier", tier, "--timeout", "2", "--stats"]);
            let out = boot_within(&args, PROMPT_LIMIT);
            let case = format!("{case}, tier {tier}");
            assert!(
                !out.timed_out(),
                "{case}: --timeout 2 was ignored ({}); stderr tail: {}",
                out.describe_end(),
                common::tail(&out.stderr, 5)
            );
            assert_eq!(
                out.status.and_then(|s| s.code()),
                Some(124),
                "{case}: {}",
                common::tail(&out.stderr, 5)
            );
            assert!(
                out.elapsed < Duration::from_secs(30),
                "{case}: took {:?}",
                out.elapsed
            );
            assert!(
                out.stderr.len() < 16 << 10,
                "{case}: {} bytes on stderr",
                out.stderr.len()
            );
            assert_eq!(
                out.stderr.matches("rv32vm stats:").count(),
                1,
                "{case}: one report at the end: {}",
                out.stderr
            );
            assert!(
                out.stderr.contains("the guest reset"),
                "{case}: {}",
                out.stderr
            );
            assert!(out.stderr.contains("timeout"), "{case}: {}", out.stderr);
        }
    }
}

/// Wait up to `limit` for `child` to exit.
fn wait_for_exit(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().expect("wait for rv32vm") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn guest_that_resets_forever_stops_on_sigterm() {
    for tier in common::TIERS {
        for (case, guest) in reset_guests() {
            let case = format!("{case}, tier {tier}");
            let mut child = Command::new(env!("CARGO_BIN_EXE_rv32vm"))
                .arg("boot")
                .args(&guest)
                .args(["--tier", tier])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start rv32vm");
            // Let it reboot many times first.
            std::thread::sleep(Duration::from_millis(1500));
            let status = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .expect("run kill");
            assert!(status.success(), "{case}: kill");
            let exited = wait_for_exit(&mut child, Duration::from_secs(20));
            if exited.is_none() {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{case}: SIGTERM was ignored by a guest that resets forever");
            }
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr)
                .expect("read stderr");
            assert_eq!(exited.unwrap().code(), Some(143), "{case}: {stderr}");
            assert!(
                stderr.contains("terminated by signal 15"),
                "{case}: {stderr}"
            );
        }
    }
}

/// A tmux session for one test; dropping it kills what runs in it (with SIGKILL first, so even
/// an rv32vm that ignores signals cannot outlive the test) and the session.
struct TmuxSession {
    name: String,
}

impl TmuxSession {
    fn start(name: &str, script: &str) -> TmuxSession {
        common::require_tool("tmux", "-V", "tmux");
        let session = TmuxSession {
            name: name.to_string(),
        };
        let _ = session.run(&["kill-session", "-t", name]);
        let started = session.run(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "120",
            "-y",
            "40",
            &format!("bash -c '{script}'"),
        ]);
        assert!(started.status.success(), "tmux new-session: {started:?}");
        session
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        // A server of its own (socket named after the session): on the shared default server,
        // killing one tier's session can stop the server just as the next tier's
        // new-session connects ("server exited unexpectedly").
        Command::new("tmux")
            .args(["-L", &self.name])
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-t", &self.name]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for TmuxSession {
    fn drop(&mut self) {
        let panes = self.run(&["list-panes", "-t", &self.name, "-F", "#{pane_pid}"]);
        for shell in String::from_utf8_lossy(&panes.stdout).split_whitespace() {
            // The shell's children: the rv32vm under test (or the final sleep), by pid.
            let children = Command::new("ps")
                .args(["-o", "pid=", "--ppid", shell])
                .output();
            let children = children.map(|o| o.stdout).unwrap_or_default();
            for pid in String::from_utf8_lossy(&children).split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
        let _ = self.run(&["kill-session", "-t", &self.name]);
    }
}

/// A guest that resets forever in a real terminal (tmux): `Ctrl-A x` ends it with status 0.
#[test]
fn guest_that_resets_forever_stops_on_ctrl_a_x() {
    for tier in common::TIERS {
        let kernel = reset_kernel(false);
        let script = format!(
            "{bin} boot --kernel {kernel} --tier {tier}; echo RV32VM-EXIT=$?; sleep 600",
            bin = env!("CARGO_BIN_EXE_rv32vm"),
            kernel = kernel.display(),
        );
        let tmux = TmuxSession::start(&format!("rv32vm-reset-quit-{tier}"), &script);
        std::thread::sleep(Duration::from_millis(1500));
        assert!(
            !tmux.screen().contains("RV32VM-EXIT"),
            "tier {tier}: rv32vm stopped by itself: {}",
            tmux.screen()
        );
        let sent = tmux.run(&["send-keys", "-t", &tmux.name, "C-a", "x"]);
        assert!(sent.status.success(), "tmux send-keys");
        let start = std::time::Instant::now();
        let mut last = tmux.screen();
        while !last.contains("RV32VM-EXIT=") && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(100));
            last = tmux.screen();
        }
        assert!(
            last.contains("RV32VM-EXIT=0"),
            "tier {tier}: Ctrl-A x must end a guest that resets forever with status 0:\n{last}"
        );
        assert!(last.contains("quit (Ctrl-A x)"), "tier {tier}:\n{last}");
    }
}

#[test]
fn a_timeout_too_large_to_represent_means_no_limit() {
    let kernel = hello_kernel();
    for tier in common::TIERS {
        let out = boot_within(
            &[
                "--kernel",
                path_str(&kernel),
                "--tier",
                tier,
                "--timeout",
                "18446744073709551615",
            ],
            PROMPT_LIMIT,
        );
        assert_eq!(
            out.status.and_then(|s| s.code()),
            Some(3),
            "tier {tier}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

/// A RISC-V Image header followed by `body` (as long in memory as the file: a much larger
/// size would get a warning that the file looks truncated).
fn image_with_body(body: &[u8]) -> Vec<u8> {
    let mut image = vec![0u8; 64];
    let size = (image.len() + body.len()) as u64;
    image[16..24].copy_from_slice(&size.to_le_bytes());
    image[48..56].copy_from_slice(b"RISCV\0\0\0");
    image[56..60].copy_from_slice(b"RSC\x05");
    image.extend_from_slice(body);
    image
}

#[test]
fn trap_loops_end_with_one_clear_error() {
    let dir = test_dir("trap-loops");
    let garbage_image = dir.join("garbage-image.bin");
    std::fs::write(&garbage_image, image_with_body(&[0xff; 4096])).unwrap();
    let zero_image = dir.join("zero-image.bin");
    std::fs::write(&zero_image, image_with_body(&[0; 4096])).unwrap();
    let garbage_bios = dir.join("garbage-bios.bin");
    std::fs::write(&garbage_bios, [0xffu8; 4096]).unwrap();
    let linux = repo().join("images/Image");
    let cases: [(&str, Vec<&str>); 3] = [
        (
            "garbage Image, built-in SBI",
            vec!["--kernel", path_str(&garbage_image)],
        ),
        (
            "Image of zeros, built-in SBI",
            vec!["--kernel", path_str(&zero_image)],
        ),
        (
            "garbage M-mode firmware",
            vec![
                "--kernel",
                path_str(&linux),
                "--bios",
                path_str(&garbage_bios),
            ],
        ),
    ];
    for tier in common::TIERS {
        for (case, args) in &cases {
            let mut args = args.clone();
            args.extend(["--tier", tier, "--timeout", "120"]);
            let out = boot_within(&args, Duration::from_secs(180));
            let case = format!("{case}, tier {tier}");
            assert_one_error(&out, "trap loop", &case);
            assert!(out.stderr.contains("at pc 0x"), "{case}: {}", out.stderr);
            assert!(
                out.elapsed < Duration::from_secs(60),
                "{case}: detected only after {:?}",
                out.elapsed
            );
        }
    }
}

/// Make a FIFO at `path`.
fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn non_regular_inputs_are_refused_without_blocking() {
    let dir = test_dir("non-regular");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let kernel = hello_kernel();
    let (kernel, fifo) = (path_str(&kernel), path_str(&fifo));
    for bad in [fifo, "/dev/zero"] {
        for (option, what) in [
            ("--kernel", "kernel"),
            ("--initrd", "initrd"),
            ("--dtb", "device tree"),
            ("--bios", "firmware"),
        ] {
            let mut args = vec!["--timeout", "30"];
            if option != "--kernel" {
                args.extend(["--kernel", kernel]);
            }
            args.extend([option, bad]);
            let out = boot_within(&args, PROMPT_LIMIT);
            let case = format!("{option} {bad}");
            assert_one_error(&out, &format!("{what} {bad} is a"), &case);
            assert!(
                out.stderr.contains("not a regular file"),
                "{case}: {}",
                out.stderr
            );
            assert!(
                out.elapsed < Duration::from_secs(20),
                "{case}: {:?}",
                out.elapsed
            );
        }
    }
}

#[test]
fn oversized_inputs_are_refused_before_reading() {
    let dir = test_dir("oversized");
    let sparse = |name: &str, len: u64| {
        let path = dir.join(name);
        std::fs::File::create(&path)
            .and_then(|f| f.set_len(len))
            .expect("create a sparse file");
        path
    };
    // 3 GB: reading it whole would take seconds and gigabytes of memory.
    let huge = sparse("huge.bin", 3 << 30);
    let big_dtb = sparse("big.dtb", 3 << 20);
    let kernel = hello_kernel();
    let cases = [
        ("--kernel", "kernel", &huge),
        ("--initrd", "initrd", &huge),
        ("--bios", "firmware", &huge),
        ("--dtb", "device tree", &big_dtb),
    ];
    for (option, what, file) in cases {
        let mut args = vec!["--timeout", "30", "--memory", "64M"];
        if option != "--kernel" {
            args.extend(["--kernel", path_str(&kernel)]);
        }
        args.extend([option, path_str(file)]);
        let out = boot_within(&args, PROMPT_LIMIT);
        let case = format!("{option} {}", file.display());
        assert_one_error(&out, what, &case);
        assert!(
            out.stderr.contains("more than the"),
            "{case}: {}",
            out.stderr
        );
        assert!(
            out.elapsed < Duration::from_secs(10),
            "{case}: {:?}",
            out.elapsed
        );
    }
    // The device tree limit is named, and is not blamed on --memory.
    let out = boot_within(
        &["--kernel", path_str(&kernel), "--dtb", path_str(&big_dtb)],
        PROMPT_LIMIT,
    );
    assert_one_error(&out, "2093056 bytes", "oversized --dtb");
    assert!(!out.stderr.contains("--memory"), "{}", out.stderr);
}

#[test]
fn empty_firmware_and_overlong_command_lines_are_clear_errors() {
    let dir = test_dir("empty-bios");
    let empty = dir.join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let kernel = hello_kernel();
    let out = boot_within(
        &[
            "--kernel",
            path_str(&kernel),
            "--bios",
            path_str(&empty),
            "--timeout",
            "30",
        ],
        PROMPT_LIMIT,
    );
    assert_one_error(&out, "is empty", "empty --bios");
    assert!(out.stderr.contains("firmware"), "{}", out.stderr);

    // 1023 bytes are kept by the kernel (COMMAND_LINE_SIZE 1024 with the NUL); 1024 are not.
    let longest = "x".repeat(1023);
    let out = boot_within(
        &[
            "--kernel",
            path_str(&kernel),
            "--append",
            &longest,
            "--timeout",
            "30",
        ],
        PROMPT_LIMIT,
    );
    assert_eq!(out.status.and_then(|s| s.code()), Some(3), "{}", out.stderr);
    let too_long = "x".repeat(1024);
    let out = boot_within(
        &["--kernel", path_str(&kernel), "--append", &too_long],
        PROMPT_LIMIT,
    );
    assert_one_error(&out, "--append is 1024 bytes", "long --append");
    assert!(out.stderr.contains("1023"), "{}", out.stderr);
}

/// A device tree just under the size limit that `--append` pushes over it.
#[test]
fn a_patched_tree_over_the_limit_names_the_limit() {
    let dir = test_dir("dtb-limit");
    let kernel = hello_kernel();
    let generated = dir.join("generated.dtb");
    let out = boot_within(
        &[
            "--kernel",
            path_str(&kernel),
            "--dump-dtb",
            path_str(&generated),
        ],
        PROMPT_LIMIT,
    );
    assert_eq!(out.status.and_then(|s| s.code()), Some(3), "{}", out.stderr);
    // Rebuild the tree with a padding property that brings it to the limit.
    let blob = std::fs::read(&generated).unwrap();
    let limit = 2093056usize;
    let padded = {
        let mut w = vm_fdt::FdtWriter::new().unwrap();
        let root = w.begin_node("").unwrap();
        w.property("padding", &vec![0u8; limit - blob.len() - 64])
            .unwrap();
        let tree = fdt::Fdt::new(&blob).unwrap();
        copy_children(&tree.find_node("/").unwrap(), &mut w);
        w.end_node(root).unwrap();
        w.finish().unwrap()
    };
    assert!(padded.len() <= limit && padded.len() > limit - 200);
    let big = dir.join("big.dtb");
    std::fs::write(&big, &padded).unwrap();
    let out = boot_within(
        &["--kernel", path_str(&kernel), "--dtb", path_str(&big)],
        PROMPT_LIMIT,
    );
    assert_eq!(out.status.and_then(|s| s.code()), Some(3), "{}", out.stderr);
    let out = boot_within(
        &[
            "--kernel",
            path_str(&kernel),
            "--dtb",
            path_str(&big),
            "--append",
            &"y".repeat(400),
        ],
        PROMPT_LIMIT,
    );
    assert_one_error(&out, "at most 2093056 bytes", "patched tree over the limit");
    assert!(
        !out.stderr.contains("use a larger --memory"),
        "{}",
        out.stderr
    );
}

/// Copy every child node of `node` (with its properties) into `w`.
fn copy_children(node: &fdt::node::FdtNode<'_, '_>, w: &mut vm_fdt::FdtWriter) {
    for child in node.children() {
        let n = w.begin_node(child.name).unwrap();
        for prop in child.properties() {
            w.property(prop.name, prop.value).unwrap();
        }
        copy_children(&child, w);
        w.end_node(n).unwrap();
    }
}

#[test]
fn user_dtb_gets_append_and_initrd_in_chosen() {
    let dir = test_dir("dtb-patch");
    let kernel = hello_kernel();
    let generated = dir.join("generated.dtb");
    let out = boot_within(
        &[
            "--kernel",
            path_str(&kernel),
            "--dump-dtb",
            path_str(&generated),
        ],
        PROMPT_LIMIT,
    );
    assert_eq!(out.status.and_then(|s| s.code()), Some(3), "{}", out.stderr);
    let initrd = dir.join("initrd.img");
    std::fs::write(&initrd, vec![0x5a; 10_000]).unwrap();
    let patched = dir.join("patched.dtb");
    let out = boot_within(
        &[
            "--kernel",
            path_str(&kernel),
            "--dtb",
            path_str(&generated),
            "--append",
            "console=ttyS0 marker=dtb-patch",
            "--initrd",
            path_str(&initrd),
            "--dump-dtb",
            path_str(&patched),
        ],
        PROMPT_LIMIT,
    );
    assert_eq!(out.status.and_then(|s| s.code()), Some(3), "{}", out.stderr);
    let blob = std::fs::read(&patched).unwrap();
    let tree = fdt::Fdt::new(&blob).unwrap();
    assert_eq!(
        tree.chosen().bootargs(),
        Some("console=ttyS0 marker=dtb-patch")
    );
    let chosen = tree.find_node("/chosen").unwrap();
    let range = |name| {
        let v = chosen.property(name).expect(name).value;
        u64::from_be_bytes(v.try_into().expect("64-bit value"))
    };
    let (start, end) = (range("linux,initrd-start"), range("linux,initrd-end"));
    assert_eq!(end - start, 10_000);
    // Without --append the tree's own bootargs stay.
    let out = boot_within(
        &[
            "--kernel",
            path_str(&kernel),
            "--dtb",
            path_str(&patched),
            "--dump-dtb",
            path_str(&generated),
        ],
        PROMPT_LIMIT,
    );
    assert_eq!(out.status.and_then(|s| s.code()), Some(3), "{}", out.stderr);
    let blob = std::fs::read(&generated).unwrap();
    let tree = fdt::Fdt::new(&blob).unwrap();
    assert_eq!(
        tree.chosen().bootargs(),
        Some("console=ttyS0 marker=dtb-patch")
    );
}

/// The sha256-free way to say "unchanged": the whole content.
fn snapshot(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("read a test file")
}

#[test]
fn output_files_never_overwrite_the_vms_own_files() {
    let dir = test_dir("outputs");
    let kernel = hello_kernel();
    let kernel_copy = dir.join("kernel.elf");
    std::fs::copy(&kernel, &kernel_copy).unwrap();
    let disk = dir.join("disk.img");
    std::fs::write(&disk, vec![0xa5u8; 64 << 10]).unwrap();
    let link = dir.join("disk-symlink.img");
    std::os::unix::fs::symlink(&disk, &link).unwrap();
    let hard = dir.join("disk-hardlink.img");
    std::fs::hard_link(&disk, &hard).unwrap();
    let disk_bytes = snapshot(&disk);
    let kernel_bytes = snapshot(&kernel_copy);
    let k = path_str(&kernel_copy);
    let d = path_str(&disk);
    for option in ["--dump-dtb", "--console-log"] {
        for target in [&disk, &link, &hard] {
            let out = boot_within(
                &["--kernel", k, "--disk", d, option, path_str(target)],
                PROMPT_LIMIT,
            );
            let case = format!("{option} {}", target.display());
            assert_one_error(&out, "is the same file as the disk", &case);
            assert_eq!(snapshot(&disk), disk_bytes, "{case}: the disk changed");
        }
        let out = boot_within(&["--kernel", k, option, k], PROMPT_LIMIT);
        assert_one_error(&out, "is the same file as the kernel", option);
        assert_eq!(snapshot(&kernel_copy), kernel_bytes);
    }
    let same = dir.join("out.txt");
    let out = boot_within(
        &[
            "--kernel",
            k,
            "--dump-dtb",
            path_str(&same),
            "--console-log",
            path_str(&same),
        ],
        PROMPT_LIMIT,
    );
    assert_one_error(&out, "name the same file", "same output twice");
    // The snapshot --save writes at the end is an output too.
    let out = boot_within(
        &[
            "--kernel",
            k,
            "--console-log",
            path_str(&same),
            "--expect",
            "never printed",
            "--send",
            "x",
            "--save",
            path_str(&same),
        ],
        PROMPT_LIMIT,
    );
    assert_one_error(
        &out,
        "--console-log and --save name the same file",
        "log and snapshot",
    );
}

#[test]
fn outputs_are_not_touched_when_a_disk_is_locked_by_another_vm() {
    let dir = test_dir("locked");
    let disk = dir.join("shared.img");
    std::fs::write(&disk, vec![0x3cu8; 64 << 10]).unwrap();
    let disk_bytes = snapshot(&disk);
    let reset = reset_kernel(false);
    // The first VM holds the disk (writable) while its guest reboots forever.
    let mut holder = Command::new(env!("CARGO_BIN_EXE_rv32vm"))
        .arg("boot")
        .args(["--kernel", path_str(&reset), "--disk", path_str(&disk)])
        .args(["--timeout", "120"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the first rv32vm");
    std::thread::sleep(Duration::from_millis(1000));
    let kernel = hello_kernel();
    let mut failures = Vec::new();
    for option in ["--dump-dtb", "--console-log"] {
        let out = boot_within(
            &[
                "--kernel",
                path_str(&kernel),
                "--disk",
                path_str(&disk),
                option,
                path_str(&disk),
            ],
            PROMPT_LIMIT,
        );
        if out.status.and_then(|s| s.code()) != Some(1) || snapshot(&disk) != disk_bytes {
            failures.push(format!(
                "{option}: {}; disk unchanged: {}; stderr: {}",
                out.describe_end(),
                snapshot(&disk) == disk_bytes,
                out.stderr
            ));
        }
    }
    let _ = Command::new("kill")
        .args(["-TERM", &holder.id().to_string()])
        .status();
    if wait_for_exit(&mut holder, Duration::from_secs(20)).is_none() {
        let _ = holder.kill();
        let _ = holder.wait();
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn corrupt_kernel_headers_are_refused() {
    let dir = test_dir("corrupt-headers");
    // An Image header whose image_size is u64::MAX: `start + size` once wrapped and the
    // kernel was accepted.
    let mut huge = image_with_body(&[0x13, 0, 0, 0]);
    huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    let huge_path = dir.join("huge-image-size.bin");
    std::fs::write(&huge_path, &huge).unwrap();
    let out = boot_within(
        &["--kernel", path_str(&huge_path), "--timeout", "60"],
        PROMPT_LIMIT,
    );
    assert_one_error(&out, "more than a 32-bit machine can address", "image_size");
    // An ELF kernel whose entry point lies outside RAM.
    let mut elf = std::fs::read(hello_kernel()).unwrap();
    elf[24..28].copy_from_slice(&0x1000u32.to_le_bytes());
    let elf_path = dir.join("entry-outside-ram.elf");
    std::fs::write(&elf_path, &elf).unwrap();
    let out = boot_within(
        &["--kernel", path_str(&elf_path), "--timeout", "60"],
        PROMPT_LIMIT,
    );
    assert_one_error(&out, "entry point 0x1000 lies outside RAM", "ELF entry");
}

/// A guest that powers off in the same step its `--save` point appears cannot be saved: that
/// is an error, not a silent success with no snapshot.
#[test]
fn a_save_point_the_guest_powers_off_at_is_an_error() {
    let kernel = hello_kernel();
    let snapshot = test_dir("missed-save").join("missed.snap");
    let _ = std::fs::remove_file(&snapshot);
    for tier in common::TIERS {
        let out = boot_within(
            &[
                "--tier",
                tier,
                "--kernel",
                path_str(&kernel),
                "--expect",
                "hello",
                "--save",
                path_str(&snapshot),
            ],
            PROMPT_LIMIT,
        );
        assert_eq!(
            out.status.and_then(|s| s.code()),
            Some(1),
            "{tier}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("no snapshot was written") && !out.stderr.contains("panicked"),
            "{tier}: {}",
            out.stderr
        );
        assert!(!snapshot.exists(), "{tier}");
    }
}

/// The device tree QEMU's virt machine dumps lists all eight virtio-mmio slots; rv32vm backs
/// the ones it has no device for with empty transports (device ID 0), as QEMU does, so Linux
/// boots with that tree and finds the disk. (Device behaviour, the same in every tier: run
/// under the interpreter, which every build has.)
#[test]
fn qemus_virt_device_tree_boots_with_every_virtio_slot_probed() {
    common::require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let dir = test_dir("qemu-dtb");
    let dtb = dir.join("virt.dtb");
    let _ = std::fs::remove_file(&dtb);
    let bios = repo().join("images/fw_dynamic.bin");
    let dumped = common::run_with_timeout(
        Command::new("qemu-system-riscv32")
            .args(["-M", &format!("virt,dumpdtb={}", path_str(&dtb))])
            .args(["-m", "256M", "-nographic", "-bios", path_str(&bios)]),
        PROMPT_LIMIT,
    )
    .expect("run qemu-system-riscv32");
    assert!(dtb.is_file(), "qemu dumped no tree: {}", dumped.stderr);
    let tier = "interp";
    let out = boot_within(
        &[
            "--tier",
            tier,
            "--dtb",
            path_str(&dtb),
            "--append",
            "console=ttyS0 root=/dev/vda rw",
            "--expect",
            "# ",
            "--send",
            "ls /sys/bus/virtio/devices | wc -l; vm-exit 0",
        ],
        PROMPT_LIMIT,
    );
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(0),
        "{tier}: {}",
        common::tail(&out.stdout, 10)
    );
    // The disk and the entropy device; the empty slots are no devices.
    assert!(
        out.stdout.contains("\n2\r\n") || out.stdout.contains("\n2\n"),
        "{tier}: {}",
        common::tail(&out.stdout, 10)
    );
}
