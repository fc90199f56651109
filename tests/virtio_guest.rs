//! virtio-blk against a guest driver that posts garbage: `tests/priv/virtio_blk.S` drives the
//! disk in virtio-mmio slot 0 as bare-metal M-mode firmware (`rv32vm boot --bios`), with valid
//! requests and malformed descriptor chains (buffers outside RAM, short or device-writable
//! headers, wrong directions, sectors past the end, loops, dangling `next` indices, rings outside
//! RAM). The guest checks every status byte and used element itself; this test checks the host
//! side: the process exits cleanly without a panic, and the image changed only where the one
//! valid write went (nowhere for a read-only disk).
//!
//! No QEMU oracle (unlike `tests/privileged.rs`): QEMU marks the device broken at the first
//! malformed chain, so from there on it legitimately behaves differently.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// The program's name in `tests/priv/`.
const PROGRAM: &str = "virtio_blk";
/// Guest time limit passed to `rv32vm boot --timeout` (seconds).
const GUEST_TIMEOUT_SECS: &str = "30";
/// Host-side limit for one run.
const RUN_LIMIT: Duration = Duration::from_secs(60);
const MEMORY: &str = "128M";

/// The image: 1 MiB, as the program expects (it checks the capacity).
const SECTOR: usize = 512;
const IMAGE_SECTORS: usize = 2048;
/// The image's file name: the program checks it as the `GET_ID` answer.
const IMAGE_NAME: &str = "vblk.img";
/// The first 16 bytes of sector 0 (`disk_magic` in the program).
const DISK_MAGIC: &[u8; 16] = b"rv32vm virtio #0";
/// `PATTERN_XOR` in the program.
const PATTERN_XOR: u8 = 0x5a;
/// The only sector the program writes, and the seed of the data it writes there
/// (`WRITTEN_SEED`).
const WRITTEN_SECTOR: usize = 1;
const WRITTEN_SEED: usize = 0x80;
/// The case whose description tells whether the program saw a read-only disk.
const WRITE_CASE: usize = 5;

/// The program built for rv32vm.
struct Program {
    /// Passed as `--kernel`, which must name a valid kernel; the firmware never enters it.
    elf: PathBuf,
    /// The `--bios` image.
    bin: PathBuf,
    /// Number of cases (the highest `TEST(n, ...)`): the `ok` lines expected.
    cases: usize,
}

/// Byte `i` of a sector made with `seed` (the sector number for the host's image):
/// `fill_pattern` / `check_pattern` in the program.
fn pattern_byte(seed: usize, i: usize) -> u8 {
    ((seed + i) & 0xff) as u8 ^ PATTERN_XOR
}

fn sector_with_seed(seed: usize) -> Vec<u8> {
    (0..SECTOR).map(|i| pattern_byte(seed, i)).collect()
}

/// The image as the host makes it: sector n holds the pattern with seed n, and sector 0 starts
/// with [`DISK_MAGIC`].
fn original_image() -> Vec<u8> {
    let mut image: Vec<u8> = (0..IMAGE_SECTORS).flat_map(sector_with_seed).collect();
    image[..DISK_MAGIC.len()].copy_from_slice(DISK_MAGIC);
    image
}

fn priv_dir() -> PathBuf {
    common::repo_root().join("tests/priv")
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("virtio_guest")
        .join(name);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", dir.display()));
    dir
}

/// The highest case number in the source.
fn case_count(source: &str) -> usize {
    source
        .split("TEST(")
        .skip(1)
        .filter_map(|rest| rest.split(',').next()?.trim().parse::<usize>().ok())
        .max()
        .expect("the program has TEST(n, ...) cases")
}

/// Builds the program once per test binary (the tests run in parallel).
fn program() -> &'static Program {
    static PROGRAM_BUILT: OnceLock<Program> = OnceLock::new();
    PROGRAM_BUILT.get_or_init(build)
}

/// Compiles the program like every `tests/priv/` program.
fn build() -> Program {
    let dir = priv_dir();
    let src = dir.join(format!("{PROGRAM}.S"));
    let source = std::fs::read_to_string(&src)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", src.display()));
    let out = scratch_dir("build");
    let elf = out.join(format!("{PROGRAM}.elf"));
    let bin = out.join(format!("{PROGRAM}.bin"));
    common::build_priv_program(&src, &elf, &bin, &[]);
    Program {
        elf,
        bin,
        cases: case_count(&source),
    }
}

/// A fresh copy of the original image in its own directory; returns its path.
fn fresh_image(run_name: &str) -> PathBuf {
    let path = scratch_dir(run_name).join(IMAGE_NAME);
    std::fs::write(&path, original_image())
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
    path
}

/// Runs the program with `--disk IMAGE{options}` and checks that it passed every case, without
/// a panic on the host. Returns the description of case [`WRITE_CASE`].
fn run_and_check(image: &Path, options: &str, tier: &str) -> String {
    let program = program();
    let outcome = common::run_with_timeout(
        Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .arg("boot")
            .arg("--bios")
            .arg(&program.bin)
            .arg("--kernel")
            .arg(&program.elf)
            .arg("--disk")
            .arg(format!("{}{options}", image.display()))
            .args(["--memory", MEMORY, "--timeout", GUEST_TIMEOUT_SECS])
            .args(["--tier", tier]),
        RUN_LIMIT,
    )
    .expect("start rv32vm");
    let report = format!(
        "{PROGRAM} --disk IMAGE{options} under --tier {tier}: {}\n\
         --- stdout ---\n{}\n--- stderr ---\n{}",
        outcome.describe_end(),
        common::tail(&outcome.stdout, 40),
        common::tail(&outcome.stderr, 20)
    );
    assert!(outcome.succeeded(), "{report}");
    assert!(!outcome.stderr.contains("panicked"), "{report}");
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert_eq!(lines.len(), program.cases + 1, "{report}");
    for (number, line) in (1..=program.cases).zip(&lines) {
        assert!(
            line.starts_with(&format!("ok {number} ")),
            "line {number}: {line:?}\n{report}"
        );
    }
    assert_eq!(lines.last(), Some(&"PASS"), "{report}");
    lines[WRITE_CASE - 1].to_owned()
}

/// Every sector index where `after` differs from `before`.
fn changed_sectors(before: &[u8], after: &[u8]) -> Vec<usize> {
    before
        .chunks(SECTOR)
        .zip(after.chunks(SECTOR))
        .enumerate()
        .filter(|(_, (old, new))| old != new)
        .map(|(sector, _)| sector)
        .collect()
}

#[test]
fn garbage_descriptors_fail_alone_and_only_the_valid_write_reaches_the_image() {
    let original = original_image();
    for tier in common::TIERS {
        let image = fresh_image(&format!("rw-{tier}"));
        let write_case = run_and_check(&image, "", tier);
        assert!(
            !write_case.contains("read-only"),
            "the guest saw a read-only disk: {write_case}"
        );
        let after = std::fs::read(&image).expect("read the image back");
        assert_eq!(after.len(), original.len(), "--tier {tier}: image size");
        assert_eq!(
            changed_sectors(&original, &after),
            [WRITTEN_SECTOR],
            "--tier {tier}: only the valid write may change the image"
        );
        let written = &after[WRITTEN_SECTOR * SECTOR..(WRITTEN_SECTOR + 1) * SECTOR];
        assert!(
            written == sector_with_seed(WRITTEN_SEED).as_slice(),
            "--tier {tier}: sector {WRITTEN_SECTOR} does not hold the guest's data"
        );
    }
}

#[test]
fn read_only_disk_refuses_the_write_and_stays_byte_identical() {
    let tier = common::TIERS[0];
    let image = fresh_image("ro");
    let write_case = run_and_check(&image, ",ro", tier);
    assert!(
        write_case.contains("read-only"),
        "the guest did not see VIRTIO_BLK_F_RO: {write_case}"
    );
    let after = std::fs::read(&image).expect("read the image back");
    assert!(after == original_image(), "the read-only image changed");
}
