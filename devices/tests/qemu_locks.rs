//! rv32vm and a real QEMU (`qemu-system-riscv32`, Debian's qemu-system-misc) never both write
//! one image: QEMU's OFD lock bytes are honoured in both directions, and readers share.

use std::fs;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rv32vm_devices::virtio::{Disk, DiskError, DiskOptions};

const QEMU: &str = "qemu-system-riscv32";

/// Held by each test for its whole run. A `flock` belongs to the open file description, and a
/// child that another test thread forks (to exec QEMU) holds a copy of every descriptor until
/// its exec: a disk this test just closed can stay locked for that moment. One test at a time
/// keeps forks away from the images under test.
static ONE_TEST_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serialize() -> std::sync::MutexGuard<'static, ()> {
    ONE_TEST_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn image(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("rv32vm-qemu-lock-{}-{name}", std::process::id()));
    fs::write(&path, vec![0u8; 1 << 20]).expect("write the image");
    path
}

/// QEMU's `virt` machine with the image as a virtio-blk drive and nothing else to do (no
/// firmware, no display): it opens and locks the drive, then idles.
fn qemu(image: &Path, read_only: bool) -> Command {
    let found = Command::new(QEMU)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        found,
        "{QEMU} is not installed; install the Debian package qemu-system-misc"
    );
    let mut drive = format!("file={},format=raw,if=none,id=d", image.display());
    if read_only {
        drive.push_str(",readonly=on");
    }
    let mut command = Command::new(QEMU);
    command
        .args(["-M", "virt", "-display", "none", "-serial", "none"])
        .args(["-monitor", "none", "-bios", "none", "-drive"])
        .arg(drive)
        .args(["-device", "virtio-blk-device,drive=d"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// A QEMU that stays up; killed when dropped.
struct RunningQemu(Child);

impl Drop for RunningQemu {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether any open file description holds a lock on `byte` of `path`.
fn lock_byte_held(path: &Path, byte: i64) -> bool {
    let file = fs::File::open(path).unwrap();
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

/// Starts QEMU on the image and waits until it holds its locks (byte 201: "write" not shared,
/// which every QEMU drive takes).
fn start_qemu(image: &Path, read_only: bool) -> RunningQemu {
    let child = qemu(image, read_only).spawn().expect("start qemu");
    let mut qemu = RunningQemu(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !lock_byte_held(image, 201) {
        if let Some(status) = qemu.0.try_wait().unwrap() {
            let mut stderr = String::new();
            let _ = qemu.0.stderr.take().unwrap().read_to_string(&mut stderr);
            panic!("qemu exited ({status}) before locking the image: {stderr}");
        }
        assert!(Instant::now() < deadline, "qemu never locked the image");
        std::thread::sleep(Duration::from_millis(20));
    }
    qemu
}

/// Runs QEMU on the image and expects it to refuse to start; returns its stderr.
fn qemu_refuses(image: &Path, read_only: bool) -> String {
    let mut child = qemu(image, read_only).spawn().expect("start qemu");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("qemu started on an image rv32vm holds");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = reader.join().unwrap();
    assert!(!status.success(), "qemu must fail: {text}");
    text
}

const READ_ONLY: DiskOptions = DiskOptions {
    read_only: true,
    snapshot: false,
};
const SNAPSHOT: DiskOptions = DiskOptions {
    read_only: false,
    snapshot: true,
};

#[test]
fn rv32vm_refuses_an_image_a_running_qemu_writes() {
    let _serial = serialize();
    let path = image("qemu-writes.img");
    let qemu = start_qemu(&path, false);
    for options in [DiskOptions::default(), READ_ONLY, SNAPSHOT] {
        let error = Disk::open(&path, options).expect_err("image in use by QEMU");
        assert!(matches!(error, DiskError::Locked { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.contains("QEMU") && message.contains(&path.display().to_string()),
            "{message}"
        );
    }
    drop(qemu);
    // Once QEMU is gone, the image is free again.
    Disk::open(&path, DiskOptions::default()).expect("free after QEMU exits");
    let _ = fs::remove_file(&path);
}

#[test]
fn qemu_refuses_an_image_rv32vm_uses() {
    let _serial = serialize();
    let path = image("rv32vm-writes.img");
    let disk = Disk::open(&path, DiskOptions::default()).unwrap();
    let stderr = qemu_refuses(&path, false);
    assert!(stderr.contains("Failed to get \"write\" lock"), "{stderr}");
    let stderr = qemu_refuses(&path, true);
    assert!(
        stderr.contains("Failed to get shared \"write\" lock"),
        "{stderr}"
    );
    drop(disk);
    // A snapshot (read-only) user still does not let QEMU write under it.
    let disk = Disk::open(&path, SNAPSHOT).unwrap();
    let stderr = qemu_refuses(&path, false);
    assert!(stderr.contains("Failed to get \"write\" lock"), "{stderr}");
    drop(disk);
    let _ = fs::remove_file(&path);
}

#[test]
fn read_only_users_of_both_share_an_image() {
    let _serial = serialize();
    let path = image("shared.img");
    let qemu = start_qemu(&path, true);
    let reader = Disk::open(&path, READ_ONLY).expect("readers share");
    let snapshot = Disk::open(&path, SNAPSHOT).expect("snapshot readers share");
    drop((reader, snapshot));
    let error = Disk::open(&path, DiskOptions::default()).expect_err("QEMU reads: no writer");
    assert!(error.to_string().contains("\"write\""), "{error}");
    drop(qemu);
    let _ = fs::remove_file(&path);
}
