//! `rv32vm run --bare`: the signature dump and bad inputs.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

fn out_dir() -> PathBuf {
    let dir = common::repo_root().join("target/bare-tests");
    std::fs::create_dir_all(&dir).expect("create target/bare-tests");
    dir
}

/// Build tests/bare/NAME.S; `tag` keeps the outputs of tests running in parallel apart.
fn build(name: &str, tag: &str) -> PathBuf {
    common::require_tool(
        "riscv64-linux-gnu-gcc",
        "--version",
        "gcc-riscv64-linux-gnu",
    );
    let elf = out_dir().join(format!("{name}-{tag}.elf"));
    let status = Command::new("riscv64-linux-gnu-gcc")
        .args([
            "-march=rv32gc",
            "-mabi=ilp32",
            "-nostdlib",
            "-nostartfiles",
            "-static",
        ])
        .arg("-T")
        .arg(common::repo_root().join("tests/isa/link.ld"))
        .arg(common::repo_root().join(format!("tests/bare/{name}.S")))
        .arg("-o")
        .arg(&elf)
        .status()
        .expect("run riscv64-linux-gnu-gcc");
    assert!(status.success(), "building {name}.S");
    elf
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
        let out = run_bare(&[
            elf.to_str().unwrap(),
            "--tier",
            tier,
            "--signature",
            sig.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = std::fs::read_to_string(&sig).expect("signature file");
        assert_eq!(
            text, "deadbeef\n01234567\n00000000\n44444444\n",
            "tier {tier}"
        );
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
        let out = run_bare(&[
            elf.to_str().unwrap(),
            "--tier",
            tier,
            "--max-insns",
            "100000",
        ]);
        assert_eq!(out.status.code(), Some(124), "tier {tier}: {out:?}");
    }
}
