//! virtio-blk disks as users touch them: the bundled kernel with a root filesystem on
//! /dev/vda; data written and synced in the guest is in the host file afterwards (read back
//! with debugfs), whether the VM powers off or gets SIGTERM; `ro` and `snapshot` leave the image
//! byte-identical; bad disk arguments give one clear error.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PROMPT: &str = "root@rv32vm:~# ";
const LIMIT: Duration = Duration::from_secs(700);

fn images() -> PathBuf {
    common::repo_root().join("images")
}

fn scratch_dir() -> PathBuf {
    let dir = common::repo_root().join("target/disk-tests");
    std::fs::create_dir_all(&dir).expect("create target/disk-tests");
    dir
}

/// A private copy of the bundled root filesystem.
fn rootfs_copy(name: &str) -> PathBuf {
    let path = scratch_dir().join(name);
    std::fs::copy(images().join("rootfs.ext2"), &path).expect("copy rootfs.ext2");
    path
}

fn rv32vm(tier: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rv32vm"));
    c.arg("boot")
        .arg("--kernel")
        .arg(images().join("Image"))
        .args(["--tier", tier, "--timeout", "600"]);
    c
}

fn disk_arg(path: &Path, options: &str) -> String {
    format!("{}{options}", path.display())
}

/// `debugfs -R 'cat PATH' IMAGE`: the file's bytes as e2fsprogs reads them from the image.
fn debugfs_cat(image: &Path, path: &str) -> String {
    common::require_tool("debugfs", "-V", "e2fsprogs");
    let out = Command::new("debugfs")
        .arg("-R")
        .arg(format!("cat {path}"))
        .arg(image)
        .output()
        .expect("run debugfs");
    assert!(out.status.success(), "debugfs failed: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn code(out: &common::RunOutcome) -> Option<i32> {
    out.status.and_then(|s| s.code())
}

#[test]
fn synced_data_reaches_the_host_file_after_poweroff() {
    for tier in common::TIERS {
        let image = rootfs_copy(&format!("poweroff-{tier}.img"));
        let out = common::run_with_timeout(
            rv32vm(tier)
                .arg("--disk")
                .arg(disk_arg(&image, ""))
                .args(["--expect", PROMPT])
                .args([
                    "--send",
                    "echo written-by-$((6*7)) > /root/note.txt; sync; poweroff -f",
                ]),
            LIMIT,
        )
        .expect("run rv32vm");
        assert_eq!(
            code(&out),
            Some(0),
            "tier {tier}: {}\n{}",
            out.describe_end(),
            out.stderr
        );
        assert_eq!(debugfs_cat(&image, "/root/note.txt"), "written-by-42\n");
    }
}

#[test]
fn synced_data_reaches_the_host_file_when_sigterm_ends_the_vm() {
    let image = rootfs_copy("sigterm.img");
    let mut child = rv32vm("interp")
        .arg("--disk")
        .arg(disk_arg(&image, ""))
        .args(["--expect", PROMPT])
        .args([
            "--send",
            "seq 1000 > /root/seq.txt; sync; echo synced-$((2+3))",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rv32vm");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&seen).contains("synced-5") {
                let _ = tx.send(());
            }
        }
    });
    let got = rx.recv_timeout(LIMIT);
    if got.is_err() {
        let _ = child.kill();
        panic!("the guest never reported synced-5");
    }
    // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
    let rc = unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(rc, 0, "send SIGTERM");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "rv32vm ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status}");
    let expected: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    assert_eq!(debugfs_cat(&image, "/root/seq.txt"), expected);
}

#[test]
fn read_only_disk_is_left_byte_identical() {
    let image = rootfs_copy("ro.img");
    let before = std::fs::read(&image).expect("read image");
    let out = common::run_with_timeout(
        rv32vm("interp")
            .arg("--disk")
            .arg(disk_arg(&image, ",ro"))
            .args(["--append", "console=ttyS0 root=/dev/vda ro"])
            .args(["--expect", PROMPT])
            .args([
                "--send",
                "cat /etc/hostname; grep -c . /etc/inittab; touch /x 2>/dev/null; vm-exit $((10 + $?))",
            ]),
        LIMIT,
    )
    .expect("run rv32vm");
    assert_eq!(
        code(&out),
        Some(11),
        "{}: {}",
        out.describe_end(),
        out.stderr
    );
    assert!(out.stdout.contains("\nrv32vm\r\n") || out.stdout.contains("\nrv32vm\n"));
    assert!(
        std::fs::read(&image).expect("read image") == before,
        "ro image changed"
    );
}

#[test]
fn snapshot_disk_sees_its_writes_but_the_file_never_changes() {
    let image = rootfs_copy("snapshot.img");
    let before = std::fs::read(&image).expect("read image");
    let out = common::run_with_timeout(
        rv32vm("interp")
            .arg("--disk")
            .arg(disk_arg(&image, ",snapshot"))
            .args(["--expect", PROMPT])
            .args([
                "--send",
                "seq 5000 > /root/big.txt; sync; echo 3 > /proc/sys/vm/drop_caches; \
                 tail -n1 /root/big.txt; rm /etc/hostname; sync; poweroff -f",
            ]),
        LIMIT,
    )
    .expect("run rv32vm");
    assert_eq!(
        code(&out),
        Some(0),
        "{}: {}",
        out.describe_end(),
        out.stderr
    );
    // Read back from the disk itself (page cache dropped): the overlay serves it.
    assert!(out.stdout.contains("\n5000"), "{}", out.stdout);
    assert!(
        std::fs::read(&image).expect("read image") == before,
        "snapshot image changed"
    );
}

#[test]
fn bad_disk_arguments_are_clear_errors() {
    let odd = scratch_dir().join("odd-size.img");
    std::fs::write(&odd, vec![0u8; 1000]).expect("write odd image");
    let missing = scratch_dir().join("does-not-exist.img");
    let fifo = scratch_dir().join("fifo.img");
    let _ = std::fs::remove_file(&fifo);
    let status = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo");
    let dir = scratch_dir();
    let null = Path::new("/dev/null");
    // A FIFO must not block the open (the run's time limit would catch it), a directory is
    // not "9223372036854775807 bytes", /dev/null is not an empty disk.
    let cases: [(String, &str); 9] = [
        (disk_arg(&missing, ""), "does-not-exist.img"),
        (disk_arg(&odd, ""), "512"),
        (disk_arg(&odd, ",bogus"), "unknown disk option"),
        (disk_arg(&fifo, ""), "is a FIFO"),
        (disk_arg(&fifo, ",ro"), "is a FIFO"),
        (disk_arg(&dir, ",ro"), "is a directory"),
        (disk_arg(&dir, ",snapshot"), "is a directory"),
        (disk_arg(&dir, ""), "is a directory"),
        (disk_arg(null, ""), "is a character device"),
    ];
    for (arg, needle) in cases {
        let out = common::run_with_timeout(
            rv32vm("interp").arg("--disk").arg(&arg),
            Duration::from_secs(30),
        )
        .expect("run rv32vm");
        assert_ne!(code(&out), Some(0), "--disk {arg} must fail");
        assert!(
            out.stderr.contains(needle) && out.stderr.lines().count() <= 3,
            "--disk {arg}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

/// Boot with `image` (disk options `options`) under a file-size limit (RLIMIT_FSIZE, 2 MiB)
/// below what the guest then writes from `source` (6 MiB, then `vm-exit 9`), and check that
/// the host's EFBIG is logged, the guest sees I/O errors and the VM stays up to exit 9.
fn fill_disk_past_file_size_limit(image: &Path, options: &str, source: &str) {
    use std::os::unix::process::CommandExt;
    let mut cmd = rv32vm("interp");
    cmd.arg("--disk")
        .arg(disk_arg(image, options))
        .args(["--expect", PROMPT])
        .args([
            "--send",
            &format!(
                "dd if={source} of=/root/fill bs=4096 count=1500 2>/dev/null; sync; vm-exit 9"
            ),
        ]);
    // SAFETY: the closure runs in the child between fork and exec and only calls setrlimit,
    // which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 2 << 20,
                rlim_max: 2 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let out = common::run_with_timeout(&mut cmd, LIMIT).expect("run rv32vm");
    assert_eq!(
        code(&out),
        Some(9),
        "{}: {}",
        out.describe_end(),
        out.stderr
    );
    assert!(
        out.stderr.contains("virtio-blk request failed") && out.stderr.contains("too large"),
        "the host error is logged: {}",
        out.stderr
    );
    assert!(
        out.stdout.contains("I/O error"),
        "the guest sees I/O errors: {}",
        out.stdout
    );
}

/// Host write errors reach the guest as I/O errors and are logged; the VM stays up. The error
/// is made with a file-size limit (RLIMIT_FSIZE) below the image's size: writes past it fail
/// with EFBIG.
#[test]
fn host_write_errors_become_guest_io_errors() {
    let image = rootfs_copy("write-error.img");
    fill_disk_past_file_size_limit(&image, "", "/dev/urandom");
}

/// Whether any open file description holds a lock on `byte` of `path`.
fn ofd_lock_byte_held(path: &Path, byte: i64) -> bool {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).expect("open image");
    // SAFETY: an all-zero flock is valid; fcntl reads and writes it during the call.
    unsafe {
        let mut request: libc::flock = std::mem::zeroed();
        request.l_type = libc::F_WRLCK as libc::c_short;
        request.l_whence = libc::SEEK_SET as libc::c_short;
        request.l_start = byte;
        request.l_len = 1;
        assert_eq!(
            libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &mut request),
            0
        );
        request.l_type != libc::F_UNLCK as libc::c_short
    }
}

/// A running QEMU writing an image keeps rv32vm off it (QEMU's OFD lock bytes), with one clear
/// error line.
#[test]
fn image_a_running_qemu_writes_is_refused() {
    common::require_tool("qemu-system-riscv32", "--version", "qemu-system-misc");
    let image = rootfs_copy("held-by-qemu.img");
    let mut qemu = Command::new("qemu-system-riscv32")
        .args(["-M", "virt", "-display", "none", "-serial", "none"])
        .args(["-monitor", "none", "-bios", "none", "-drive"])
        .arg(format!("file={},format=raw,if=none,id=d", image.display()))
        .args(["-device", "virtio-blk-device,drive=d"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start qemu");
    // QEMU has locked the image once its "write not shared" byte (201) is held.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if ofd_lock_byte_held(&image, 201) {
            break;
        }
        if Instant::now() > deadline {
            let _ = qemu.kill();
            panic!("qemu never locked the image");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let outcomes: Vec<(String, common::RunOutcome)> = ["", ",ro", ",snapshot"]
        .iter()
        .map(|options| {
            let out = common::run_with_timeout(
                rv32vm("interp")
                    .arg("--disk")
                    .arg(disk_arg(&image, options)),
                Duration::from_secs(30),
            )
            .expect("run rv32vm");
            (options.to_string(), out)
        })
        .collect();
    let _ = qemu.kill();
    let _ = qemu.wait();
    for (options, out) in outcomes {
        assert_eq!(
            code(&out),
            Some(1),
            "--disk IMG{options}: {}",
            out.describe_end()
        );
        assert!(
            out.stderr.contains("in use by another VM")
                && out.stderr.contains("QEMU")
                && out.stderr.lines().count() == 1,
            "--disk IMG{options}: {}",
            out.stderr
        );
    }
}

/// The snapshot overlay is a file too: when it cannot grow (here a file-size limit below what
/// the guest writes), the guest gets I/O errors, rv32vm stays up, and the image is untouched.
#[test]
fn snapshot_overlay_write_errors_become_guest_io_errors() {
    let image = rootfs_copy("snapshot-write-error.img");
    let before = std::fs::read(&image).expect("read image");
    fill_disk_past_file_size_limit(&image, ",snapshot", "/dev/zero");
    assert!(
        std::fs::read(&image).expect("read image") == before,
        "snapshot image changed"
    );
}
