//! System mode: `rv32vm boot` with a minimal S-mode kernel (built-in SBI console, UART, syscon
//! exit codes) and bad inputs that must give one clear error line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Build tests/system/hello_smode.S into an ELF kernel linked at RAM base (once per run: the
/// tests run in parallel threads).
fn hello_kernel() -> PathBuf {
    static KERNEL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    KERNEL.get_or_init(build_hello_kernel).clone()
}

fn build_hello_kernel() -> PathBuf {
    common::require_tool(
        "riscv64-linux-gnu-gcc",
        "--version",
        "gcc-riscv64-linux-gnu",
    );
    let out_dir = repo().join("target/system-tests");
    std::fs::create_dir_all(&out_dir).expect("create target/system-tests");
    let elf = out_dir.join("hello_smode.elf");
    let src = repo().join("tests/system/hello_smode.S");
    let status = Command::new("riscv64-linux-gnu-gcc")
        .args(["-march=rv32gc", "-mabi=ilp32", "-nostdlib", "-static"])
        .arg("-T")
        .arg(repo().join("tests/system/link.ld"))
        .arg("-Wl,--no-warn-rwx-segments")
        .arg(&src)
        .arg("-o")
        .arg(&elf)
        .status()
        .expect("run riscv64-linux-gnu-gcc");
    assert!(status.success(), "building {}", src.display());
    elf
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
}
