//! A snapshot disk keeps the guest's writes in a temporary file, not in host RAM: writing
//! 128 MiB through it grows neither the process's resident memory by anywhere near that much
//! nor the image; the data is in the overlay file. (Its own test binary, so no other test's
//! allocations disturb the RSS figures.)

use std::fs;

use rv32vm_devices::virtio::{Disk, DiskOptions};

/// The process's resident set size in bytes (VmRSS in /proc/self/status).
fn resident_bytes() -> u64 {
    let status = fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))
        .expect("VmRSS line");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|field| field.parse().ok())
        .expect("VmRSS value");
    kib * 1024
}

#[test]
fn snapshot_writes_live_in_the_overlay_file_not_in_ram() {
    const DISK_SIZE: u64 = 256 << 20;
    const WRITTEN: u64 = 128 << 20;
    const STEP: usize = 64 << 10;
    let image =
        std::env::temp_dir().join(format!("rv32vm-snapshot-rss-{}.img", std::process::id()));
    // Sparse: no host storage for the image itself.
    fs::File::create(&image)
        .and_then(|file| file.set_len(DISK_SIZE))
        .expect("create the image");
    let snapshot = DiskOptions {
        read_only: false,
        snapshot: true,
    };
    let mut disk = Disk::open(&image, snapshot).expect("open the snapshot disk");
    let mut block = vec![0u8; STEP];
    let before = resident_bytes();
    let mut offset = 0;
    while offset < WRITTEN {
        block.fill((offset / STEP as u64) as u8 | 1);
        // Every other step is misaligned by a sector, so copy-on-write of partial chunks runs
        // too.
        let at = if (offset / STEP as u64).is_multiple_of(2) {
            offset
        } else {
            offset + 512
        };
        disk.write_at(at, &block)
            .expect("write through the overlay");
        offset += STEP as u64;
    }
    let after = resident_bytes();
    let grown = after.saturating_sub(before);
    assert!(
        grown < 24 << 20,
        "writing {} MiB grew RSS by {} MiB",
        WRITTEN >> 20,
        grown >> 20
    );
    let in_file = disk.overlay_allocated_bytes().expect("snapshot overlay");
    assert!(
        in_file >= WRITTEN,
        "the overlay file holds the data: {in_file} bytes allocated"
    );
    // The data reads back from the overlay.
    let mut buf = vec![0u8; 4];
    disk.read_at(3 * STEP as u64 + 512, &mut buf).unwrap();
    assert_eq!(buf, [3 | 1; 4]);
    disk.read_at(2 * STEP as u64, &mut buf).unwrap();
    assert_eq!(buf, [2 | 1; 4]);
    drop(disk);
    let image_blocks = {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(&image).unwrap().blocks()
    };
    let _ = fs::remove_file(&image);
    assert_eq!(image_blocks, 0, "nothing reached the (sparse) image");
}
