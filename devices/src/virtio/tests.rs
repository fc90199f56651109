//! Tests of the virtio devices, driven the way Linux's `virtio_mmio` and `virtio_blk` drivers
//! drive them: MMIO register accesses for the transport, descriptor rings written into guest
//! memory (a real anonymous mapping behind [`guest_memory_from_raw`]), then the used ring,
//! status bytes, data, host files and the interrupt line are checked.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use vm_memory::{Bytes, GuestAddress};

use super::blk::{
    VIRTIO_BLK_F_FLUSH, VIRTIO_BLK_F_RO, VIRTIO_BLK_F_SEG_MAX, VIRTIO_BLK_S_IOERR, VIRTIO_BLK_S_OK,
    VIRTIO_BLK_S_UNSUPP, VIRTIO_BLK_T_FLUSH, VIRTIO_BLK_T_GET_ID, VIRTIO_BLK_T_IN,
    VIRTIO_BLK_T_OUT,
};
use super::mmio::*;
use super::status::{ACKNOWLEDGE, DRIVER, DRIVER_OK, FEATURES_OK};
use super::*;
use crate::bus::{Bus, MmioDevice};
use crate::irq::{IrqLevels, IrqLine};

const RAM_BASE: u64 = 0x8000_0000;
const RAM_SIZE: usize = 1 << 20;
const RAM_END: u64 = RAM_BASE + RAM_SIZE as u64;
/// The queue size the test driver picks (below the devices' maximum, as QueueNum allows).
const QUEUE_LEN: u16 = 16;
const DESC_TABLE: u64 = RAM_BASE;
const AVAIL_RING: u64 = RAM_BASE + 0x1000;
const USED_RING: u64 = RAM_BASE + 0x2000;
/// Request headers, status bytes and small buffers.
const SCRATCH: u64 = RAM_BASE + 0x4000;
const HEADER: u64 = SCRATCH;
const STATUS_BYTE: u64 = SCRATCH + 0x100;
const INDIRECT_TABLE: u64 = SCRATCH + 0x200;
/// Data buffers.
const DATA: u64 = RAM_BASE + 0x1_0000;
/// PLIC source the test wires the device to.
const IRQ_SOURCE: u32 = 1;

const F_NEXT: u16 = 1;
const F_WRITE: u16 = 2;
const F_INDIRECT: u16 = 4;

/// Anonymous host memory standing in for the machine's RAM mapping.
struct TestRam {
    host: *mut u8,
}

impl TestRam {
    fn new() -> Self {
        // SAFETY: an anonymous private mapping with no address hint has no preconditions; the
        // result is checked below.
        let host = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                RAM_SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(host, libc::MAP_FAILED, "mmap of test RAM failed");
        Self { host: host.cast() }
    }

    fn memory(&self) -> GuestMemoryMmap {
        // SAFETY: the mapping lives until `TestRam` drops, and `Rig` drops every memory user
        // (its fields declared before `ram`) first.
        unsafe { guest_memory_from_raw(self.host, RAM_BASE, RAM_SIZE) }.expect("guest memory")
    }
}

impl Drop for TestRam {
    fn drop(&mut self) {
        // SAFETY: `host` is the RAM_SIZE mapping made in `new`, and nothing uses it any more.
        unsafe { libc::munmap(self.host.cast(), RAM_SIZE) };
    }
}

/// One descriptor the test driver places.
#[derive(Clone, Copy)]
struct Desc {
    addr: u64,
    len: u32,
    writable: bool,
}

fn readable(addr: u64, len: u32) -> Desc {
    Desc {
        addr,
        len,
        writable: false,
    }
}

fn writable(addr: u64, len: u32) -> Desc {
    Desc {
        addr,
        len,
        writable: true,
    }
}

/// A device behind the transport plus a minimal split-ring driver for queue 0.
struct Rig<D: VirtioDevice> {
    dev: VirtioMmio<D>,
    mem: GuestMemoryMmap,
    levels: IrqLevels,
    next_desc: u16,
    avail_idx: u16,
    seen_used: u16,
    /// Last: dropped after every user of the mapping.
    _ram: TestRam,
}

impl<D: VirtioDevice> Rig<D> {
    fn new(device: D) -> Self {
        let ram = TestRam::new();
        let mem = ram.memory();
        let mut levels = IrqLevels::new(8).unwrap();
        let line = levels.line(IRQ_SOURCE).unwrap();
        Self {
            dev: VirtioMmio::new(device, mem.clone(), line),
            mem,
            levels,
            next_desc: 0,
            avail_idx: 0,
            seen_used: 0,
            _ram: ram,
        }
    }

    fn read(&mut self, offset: u64) -> u32 {
        self.dev.read(offset, 4) as u32
    }

    fn write(&mut self, offset: u64, value: u32) {
        self.dev.write(offset, 4, u64::from(value));
    }

    fn irq(&self) -> bool {
        self.levels.is_high(IRQ_SOURCE)
    }

    fn device_features(&mut self) -> u64 {
        self.write(DEVICE_FEATURES_SEL, 1);
        let high = self.read(DEVICE_FEATURES);
        self.write(DEVICE_FEATURES_SEL, 0);
        (u64::from(high) << 32) | u64::from(self.read(DEVICE_FEATURES))
    }

    /// Reset, ACKNOWLEDGE, DRIVER, features, FEATURES_OK; returns whether FEATURES_OK stuck.
    fn negotiate(&mut self, features: u64) -> bool {
        self.write(STATUS, 0);
        assert_eq!(self.read(STATUS), 0, "reset must read back 0");
        assert_eq!(self.read(MAGIC_VALUE), MAGIC);
        assert_eq!(self.read(VERSION), 2);
        self.write(STATUS, ACKNOWLEDGE);
        self.write(STATUS, ACKNOWLEDGE | DRIVER);
        let offered = self.device_features();
        assert_eq!(features & !offered, 0, "test asks for features not offered");
        self.write(DRIVER_FEATURES_SEL, 1);
        self.write(DRIVER_FEATURES, (features >> 32) as u32);
        self.write(DRIVER_FEATURES_SEL, 0);
        self.write(DRIVER_FEATURES, features as u32);
        self.write(STATUS, ACKNOWLEDGE | DRIVER | FEATURES_OK);
        self.read(STATUS) & FEATURES_OK != 0
    }

    /// Sets queue 0 up at the test ring addresses, as `vm_setup_vq` does.
    fn setup_queue(&mut self) {
        self.write(QUEUE_SEL, 0);
        assert_eq!(self.read(QUEUE_READY), 0);
        assert!(self.read(QUEUE_NUM_MAX) >= u32::from(QUEUE_LEN));
        self.write(QUEUE_NUM, u32::from(QUEUE_LEN));
        for (low, addr) in [
            (QUEUE_DESC_LOW, DESC_TABLE),
            (QUEUE_DRIVER_LOW, AVAIL_RING),
            (QUEUE_DEVICE_LOW, USED_RING),
        ] {
            self.write(low, addr as u32);
            self.write(low + 4, (addr >> 32) as u32);
        }
        self.write(QUEUE_READY, 1);
        assert_eq!(self.read(QUEUE_READY), 1);
    }

    /// The whole Linux probe sequence with `features` (VERSION_1 added).
    fn start_with(&mut self, features: u64) {
        self.clear_rings();
        assert!(self.negotiate(features | VIRTIO_F_VERSION_1));
        self.setup_queue();
        self.write(STATUS, ACKNOWLEDGE | DRIVER | FEATURES_OK | DRIVER_OK);
        assert_eq!(
            self.read(STATUS),
            ACKNOWLEDGE | DRIVER | FEATURES_OK | DRIVER_OK
        );
    }

    fn start(&mut self) {
        self.start_with(VIRTIO_F_VERSION_1);
    }

    /// Zeroes the rings and forgets the driver-side ring state (a fresh driver).
    fn clear_rings(&mut self) {
        let zeros = vec![0u8; 0x3000];
        self.mem
            .write_slice(&zeros, GuestAddress(DESC_TABLE))
            .unwrap();
        self.next_desc = 0;
        self.avail_idx = 0;
        self.seen_used = 0;
    }

    fn write_desc(&self, index: u16, addr: u64, len: u32, flags: u16, next: u16) {
        let at = DESC_TABLE + 16 * u64::from(index);
        self.mem.write_obj(addr.to_le(), GuestAddress(at)).unwrap();
        self.mem
            .write_obj(len.to_le(), GuestAddress(at + 8))
            .unwrap();
        self.mem
            .write_obj(flags.to_le(), GuestAddress(at + 12))
            .unwrap();
        self.mem
            .write_obj(next.to_le(), GuestAddress(at + 14))
            .unwrap();
    }

    /// Publishes descriptor `head` in the available ring.
    fn publish(&mut self, head: u16) {
        let slot = AVAIL_RING + 4 + 2 * u64::from(self.avail_idx % QUEUE_LEN);
        self.mem
            .write_obj(head.to_le(), GuestAddress(slot))
            .unwrap();
        self.avail_idx = self.avail_idx.wrapping_add(1);
        self.mem
            .write_obj(self.avail_idx.to_le(), GuestAddress(AVAIL_RING + 2))
            .unwrap();
    }

    /// Places `descs` as one chain in free table slots and publishes it; returns the head.
    fn push_chain(&mut self, descs: &[Desc]) -> u16 {
        let head = self.next_desc;
        for (i, desc) in descs.iter().enumerate() {
            let index = (self.next_desc + i as u16) % QUEUE_LEN;
            let last = i + 1 == descs.len();
            let flags = if desc.writable { F_WRITE } else { 0 } | if last { 0 } else { F_NEXT };
            self.write_desc(index, desc.addr, desc.len, flags, (index + 1) % QUEUE_LEN);
        }
        self.next_desc = (self.next_desc + descs.len() as u16) % QUEUE_LEN;
        self.publish(head);
        head
    }

    fn notify(&mut self) {
        self.write(QUEUE_NOTIFY, 0);
    }

    fn used_idx(&self) -> u16 {
        u16::from_le(self.mem.read_obj(GuestAddress(USED_RING + 2)).unwrap())
    }

    /// Used ring entries (id, len) not seen yet.
    fn take_used(&mut self) -> Vec<(u32, u32)> {
        let mut entries = Vec::new();
        while self.seen_used != self.used_idx() {
            let at = USED_RING + 4 + 8 * u64::from(self.seen_used % QUEUE_LEN);
            let id: u32 = self.mem.read_obj(GuestAddress(at)).unwrap();
            let len: u32 = self.mem.read_obj(GuestAddress(at + 4)).unwrap();
            entries.push((u32::from_le(id), u32::from_le(len)));
            self.seen_used = self.seen_used.wrapping_add(1);
        }
        entries
    }

    /// What Linux's interrupt handler does: read the causes, acknowledge them.
    fn ack_interrupt(&mut self) -> u32 {
        let causes = self.read(INTERRUPT_STATUS);
        self.write(INTERRUPT_ACK, causes);
        causes
    }

    fn bytes(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        self.mem.read_slice(&mut buf, GuestAddress(addr)).unwrap();
        buf
    }

    fn fill(&self, addr: u64, byte: u8, len: usize) {
        self.mem
            .write_slice(&vec![byte; len], GuestAddress(addr))
            .unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Disk images

/// A disk image in the temp directory, removed on drop.
struct TempImage {
    path: PathBuf,
}

impl TempImage {
    fn new(name: &str, contents: &[u8]) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "rv32vm-virtio-{}-{unique}-{name}",
            std::process::id()
        ));
        fs::write(&path, contents).unwrap();
        Self { path }
    }

    fn contents(&self) -> Vec<u8> {
        fs::read(&self.path).unwrap()
    }
}

impl Drop for TempImage {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Distinct bytes in every sector, so a read of the wrong sector shows.
fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add((i / 512) as u8))
        .collect()
}

const DISK_SECTORS: usize = 512; // 256 KiB

fn blk_rig(image: &TempImage, options: DiskOptions) -> Rig<VirtioBlk> {
    let disk = Disk::open(&image.path, options).expect("open disk");
    let mut rig = Rig::new(VirtioBlk::new(disk));
    rig.start_with(VIRTIO_BLK_F_FLUSH | VIRTIO_BLK_F_SEG_MAX);
    rig
}

fn write_header(rig: &Rig<VirtioBlk>, request_type: u32, sector: u64) {
    let mut header = [0u8; 16];
    header[..4].copy_from_slice(&request_type.to_le_bytes());
    header[8..].copy_from_slice(&sector.to_le_bytes());
    rig.mem.write_slice(&header, GuestAddress(HEADER)).unwrap();
    rig.fill(STATUS_BYTE, 0xff, 1);
}

fn status_byte(rig: &Rig<VirtioBlk>) -> u8 {
    rig.mem.read_obj(GuestAddress(STATUS_BYTE)).unwrap()
}

/// Submits the chain, notifies, and returns (status byte, used length) of the one completion.
fn submit(rig: &mut Rig<VirtioBlk>, descs: &[Desc]) -> (u8, u32) {
    let head = rig.push_chain(descs);
    rig.notify();
    let used = rig.take_used();
    assert_eq!(used.len(), 1, "exactly one completion: {used:?}");
    assert_eq!(used[0].0, u32::from(head));
    (status_byte(rig), used[0].1)
}

/// Reads `count` sectors at `sector` into DATA; returns (status, used length, data).
fn read_sectors(rig: &mut Rig<VirtioBlk>, sector: u64, count: usize) -> (u8, u32, Vec<u8>) {
    let len = count * 512;
    write_header(rig, VIRTIO_BLK_T_IN, sector);
    rig.fill(DATA, 0xee, len);
    let (status, used) = submit(
        rig,
        &[
            readable(HEADER, 16),
            writable(DATA, len as u32),
            writable(STATUS_BYTE, 1),
        ],
    );
    (status, used, rig.bytes(DATA, len))
}

fn write_sectors(rig: &mut Rig<VirtioBlk>, sector: u64, data: &[u8]) -> (u8, u32) {
    write_header(rig, VIRTIO_BLK_T_OUT, sector);
    rig.mem.write_slice(data, GuestAddress(DATA)).unwrap();
    submit(
        rig,
        &[
            readable(HEADER, 16),
            readable(DATA, data.len() as u32),
            writable(STATUS_BYTE, 1),
        ],
    )
}

fn flush_request(rig: &mut Rig<VirtioBlk>) -> u8 {
    write_header(rig, VIRTIO_BLK_T_FLUSH, 0);
    submit(rig, &[readable(HEADER, 16), writable(STATUS_BYTE, 1)]).0
}

// ---------------------------------------------------------------------------------------------
// Transport

#[test]
fn identifies_as_virtio_mmio_version_2() {
    let image = TempImage::new("ident.img", &pattern(DISK_SECTORS * 512));
    let disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    let mut rig = Rig::new(VirtioBlk::new(disk));
    assert_eq!(rig.read(MAGIC_VALUE), 0x7472_6976);
    assert_eq!(rig.read(VERSION), 2);
    assert_eq!(rig.read(DEVICE_ID), 2);
    assert_eq!(rig.read(VENDOR_ID), 0x554d_4551);
    assert_eq!(rig.read(QUEUE_NUM_MAX), 256);
    assert_eq!(rig.read(QUEUE_READY), 0);
    rig.write(QUEUE_SEL, 1);
    assert_eq!(rig.read(QUEUE_NUM_MAX), 0, "only one queue");
    // Only aligned 32-bit accesses reach control registers.
    assert_eq!(rig.dev.read(MAGIC_VALUE, 2), 0);
    assert_eq!(rig.dev.read(MAGIC_VALUE + 1, 4), 0);
    assert_eq!(rig.dev.read(MAGIC_VALUE, 8), 0);
    // No shared memory regions.
    assert_eq!(rig.read(SHM_LEN_LOW), u32::MAX);
    assert_eq!(rig.read(SHM_LEN_HIGH), u32::MAX);
    assert_eq!(rig.read(CONFIG_GENERATION), 0);
    assert_eq!(rig.dev.name(), "virtio-blk");

    let rng = Rig::new(VirtioRng::new()).read(DEVICE_ID);
    assert_eq!(rng, 4);
}

#[test]
fn config_space_holds_capacity_seg_max_and_block_size() {
    let image = TempImage::new("config.img", &vec![0u8; 3 * 1024 * 1024]);
    let disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    let mut rig = Rig::new(VirtioBlk::new(disk));
    let capacity = 3 * 1024 * 1024 / 512;
    // Linux reads the le64 capacity as two 32-bit reads.
    assert_eq!(rig.dev.read(CONFIG, 4), capacity);
    assert_eq!(rig.dev.read(CONFIG + 4, 4), 0);
    assert_eq!(rig.dev.read(CONFIG, 8), capacity);
    assert_eq!(rig.dev.read(CONFIG + 1, 1), capacity >> 8);
    assert_eq!(rig.dev.read(CONFIG + 0x0c, 4), 254, "seg_max");
    assert_eq!(rig.dev.read(CONFIG + 0x14, 4), 512, "blk_size");
    assert_eq!(rig.dev.read(CONFIG + 0x14, 2), 512);
    // Past the end of the configuration space, and far away.
    assert_eq!(rig.dev.read(CONFIG + 0x3c, 4), 0);
    assert_eq!(rig.dev.read(CONFIG + 0xefc, 4), 0);
    assert_eq!(rig.dev.read(u64::MAX, 8), 0);
    // Config writes are ignored.
    rig.dev.write(CONFIG, 4, 0);
    assert_eq!(rig.dev.read(CONFIG, 8), capacity);
}

#[test]
fn feature_negotiation_requires_version_1() {
    let image = TempImage::new("features.img", &pattern(DISK_SECTORS * 512));
    let disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    let mut rig = Rig::new(VirtioBlk::new(disk));
    let offered = rig.device_features();
    for feature in [
        VIRTIO_F_VERSION_1,
        VIRTIO_F_RING_EVENT_IDX,
        VIRTIO_F_RING_INDIRECT_DESC,
        VIRTIO_BLK_F_FLUSH,
        VIRTIO_BLK_F_SEG_MAX,
    ] {
        assert_ne!(offered & feature, 0, "feature {feature:#x} offered");
    }
    assert_eq!(offered & VIRTIO_BLK_F_RO, 0, "writable disk is not RO");
    rig.write(DEVICE_FEATURES_SEL, 2);
    assert_eq!(rig.read(DEVICE_FEATURES), 0);

    // A legacy driver (no VERSION_1) is refused.
    assert!(!rig.negotiate(VIRTIO_BLK_F_FLUSH));
    assert_eq!(rig.dev.acked_features(), 0);
    // So is a driver accepting something that was not offered.
    rig.write(STATUS, 0);
    rig.write(STATUS, ACKNOWLEDGE | DRIVER);
    rig.write(DRIVER_FEATURES_SEL, 1);
    rig.write(DRIVER_FEATURES, 1 | (1 << 8));
    rig.write(STATUS, ACKNOWLEDGE | DRIVER | FEATURES_OK);
    assert_eq!(rig.read(STATUS) & FEATURES_OK, 0);

    // A modern driver is accepted, and its features are frozen from then on.
    assert!(rig.negotiate(VIRTIO_F_VERSION_1 | VIRTIO_BLK_F_FLUSH));
    assert_eq!(
        rig.dev.acked_features(),
        VIRTIO_F_VERSION_1 | VIRTIO_BLK_F_FLUSH
    );
    rig.write(DRIVER_FEATURES_SEL, 0);
    rig.write(DRIVER_FEATURES, 0);
    rig.write(STATUS, ACKNOWLEDGE | DRIVER | FEATURES_OK | DRIVER_OK);
    assert_eq!(
        rig.dev.acked_features(),
        VIRTIO_F_VERSION_1 | VIRTIO_BLK_F_FLUSH
    );
}

#[test]
fn queue_registers_are_frozen_while_ready_and_reset_clears_everything() {
    let image = TempImage::new("reset.img", &pattern(DISK_SECTORS * 512));
    let mut rig = blk_rig(&image, DiskOptions::default());
    rig.write(QUEUE_NUM, 8);
    assert_eq!(
        rig.read(QUEUE_NUM),
        u32::from(QUEUE_LEN),
        "ignored while ready"
    );

    let (status, _, _) = read_sectors(&mut rig, 0, 1);
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert!(rig.irq());
    assert_eq!(rig.read(INTERRUPT_STATUS), INT_USED_BUFFER);

    rig.write(STATUS, 0);
    assert_eq!(rig.read(STATUS), 0);
    assert_eq!(rig.read(INTERRUPT_STATUS), 0);
    assert!(!rig.irq(), "reset lowers the interrupt");
    assert_eq!(rig.read(QUEUE_READY), 0);
    assert_eq!(rig.read(QUEUE_NUM), 256, "queue size back to the maximum");
    assert_eq!(rig.dev.acked_features(), 0);
}

#[test]
fn interrupt_follows_status_and_ack() {
    let image = TempImage::new("irq.img", &pattern(DISK_SECTORS * 512));
    let mut rig = blk_rig(&image, DiskOptions::default());
    assert!(!rig.irq());
    read_sectors(&mut rig, 1, 1);
    assert!(rig.irq());
    // Acknowledging another cause leaves it pending.
    rig.write(INTERRUPT_ACK, INT_CONFIG_CHANGE);
    assert!(rig.irq());
    assert_eq!(rig.ack_interrupt(), INT_USED_BUFFER);
    assert!(!rig.irq());
    assert_eq!(rig.read(INTERRUPT_STATUS), 0);
    // A notify with nothing available raises nothing.
    rig.notify();
    assert!(!rig.irq());
}

#[test]
fn chain_that_never_reaches_the_used_ring_raises_no_interrupt() {
    let image = TempImage::new("noirq.img", &pattern(DISK_SECTORS * 512));
    let mut rig = blk_rig(&image, DiskOptions::default());
    // A head index beyond the queue is popped but cannot be put on the used ring.
    rig.publish(QUEUE_LEN + 3);
    rig.notify();
    assert_eq!(rig.take_used(), []);
    assert!(!rig.irq(), "used-buffer interrupt without a used buffer");
    assert_eq!(rig.read(INTERRUPT_STATUS), 0);
    // The next good request still interrupts.
    read_sectors(&mut rig, 1, 1);
    assert!(rig.irq());
}

#[test]
fn notify_before_driver_ok_is_ignored() {
    let image = TempImage::new("early.img", &pattern(DISK_SECTORS * 512));
    let disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    let mut rig = Rig::new(VirtioBlk::new(disk));
    rig.clear_rings();
    assert!(rig.negotiate(VIRTIO_F_VERSION_1));
    rig.setup_queue();
    write_header(&rig, VIRTIO_BLK_T_IN, 0);
    rig.push_chain(&[
        readable(HEADER, 16),
        writable(DATA, 512),
        writable(STATUS_BYTE, 1),
    ]);
    rig.notify();
    assert_eq!(rig.used_idx(), 0);
    assert!(!rig.irq());
    rig.write(STATUS, ACKNOWLEDGE | DRIVER | FEATURES_OK | DRIVER_OK);
    rig.notify();
    assert_eq!(rig.take_used().len(), 1);
    assert_eq!(status_byte(&rig), VIRTIO_BLK_S_OK);
    assert_eq!(rig.bytes(DATA, 512), pattern(512));
}

#[test]
fn reset_mid_operation_drops_pending_requests() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("midreset.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    read_sectors(&mut rig, 2, 1); // leaves an interrupt pending
    assert!(rig.irq());
    // A write is made available but not notified; then the driver resets the device.
    write_header(&rig, VIRTIO_BLK_T_OUT, 0);
    rig.fill(DATA, 0x55, 512);
    rig.push_chain(&[
        readable(HEADER, 16),
        readable(DATA, 512),
        writable(STATUS_BYTE, 1),
    ]);
    rig.write(STATUS, 0);
    assert!(!rig.irq());
    rig.notify(); // after reset: ignored
    assert_eq!(rig.read(STATUS), 0);

    // The driver starts over with fresh rings; only new requests run.
    rig.start_with(VIRTIO_BLK_F_FLUSH);
    let (status, used, data) = read_sectors(&mut rig, 0, 1);
    assert_eq!((status, used), (VIRTIO_BLK_S_OK, 513));
    assert_eq!(data, original[..512]);
    assert_eq!(rig.used_idx(), 1, "the new ring saw exactly one completion");
    assert_eq!(image.contents(), original, "the dropped write never ran");
}

#[test]
fn event_idx_suppresses_interrupts_until_used_event() {
    let image = TempImage::new("eventidx.img", &pattern(DISK_SECTORS * 512));
    let disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    let mut rig = Rig::new(VirtioBlk::new(disk));
    rig.start_with(VIRTIO_F_RING_EVENT_IDX);
    let used_event = GuestAddress(AVAIL_RING + 4 + 2 * u64::from(QUEUE_LEN));
    let avail_event = GuestAddress(USED_RING + 4 + 8 * u64::from(QUEUE_LEN));
    // The driver wants an interrupt only once the used index passes 3.
    rig.mem.write_obj(3u16.to_le(), used_event).unwrap();
    for expected_avail_event in 1..=3u16 {
        let (status, _, _) = read_sectors(&mut rig, 0, 1);
        assert_eq!(status, VIRTIO_BLK_S_OK);
        assert!(!rig.irq(), "suppressed at used idx {expected_avail_event}");
        // The device tells the driver to notify on the next available entry.
        let published: u16 = rig.mem.read_obj(avail_event).unwrap();
        assert_eq!(u16::from_le(published), expected_avail_event);
    }
    read_sectors(&mut rig, 0, 1);
    assert!(rig.irq(), "used idx 4 passes used_event 3");
}

#[test]
fn without_event_idx_every_completion_interrupts_and_notifications_stay_on() {
    let image = TempImage::new("noevent.img", &pattern(DISK_SECTORS * 512));
    let mut rig = blk_rig(&image, DiskOptions::default());
    for _ in 0..3 {
        read_sectors(&mut rig, 0, 1);
        assert!(rig.irq());
        rig.ack_interrupt();
        let flags: u16 = rig.mem.read_obj(GuestAddress(USED_RING)).unwrap();
        assert_eq!(flags, 0, "VRING_USED_F_NO_NOTIFY cleared after draining");
    }
}

#[test]
fn devices_work_through_the_bus() {
    let image = TempImage::new("bus.img", &pattern(DISK_SECTORS * 512));
    let disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    let ram = TestRam::new();
    let mut bus = Bus::new();
    let base = 0x1000_1000;
    let blk = bus
        .insert(
            base,
            MMIO_SIZE,
            VirtioMmio::new(VirtioBlk::new(disk), ram.memory(), IrqLine::disconnected()),
        )
        .unwrap();
    assert_eq!(bus.read(base + MAGIC_VALUE, 4), Some(u64::from(MAGIC)));
    assert_eq!(bus.read(base + DEVICE_ID, 4), Some(2));
    assert_eq!(bus.read(base + CONFIG, 8), Some(DISK_SECTORS as u64));
    let device = bus.device_mut(blk).unwrap().device_mut();
    device.flush().unwrap();
    assert_eq!(device.disk().sectors(), DISK_SECTORS as u64);
    drop(bus);
}

// ---------------------------------------------------------------------------------------------
// virtio-blk requests

#[test]
fn blk_reads_sectors() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("read.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    let (status, used, data) = read_sectors(&mut rig, 3, 2);
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert_eq!(used, 1024 + 1, "data plus status byte");
    assert_eq!(data, original[3 * 512..5 * 512]);
    // The last sector of the disk.
    let last = DISK_SECTORS as u64 - 1;
    let (status, _, data) = read_sectors(&mut rig, last, 1);
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert_eq!(data, original[original.len() - 512..]);
}

#[test]
fn blk_reads_large_requests_across_segments() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("segments.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    // 160 KiB (more than one internal I/O chunk) in three uneven segments.
    let lens = [512u32, 96 * 1024 + 512, 63 * 1024];
    let total: usize = lens.iter().map(|&len| len as usize).sum();
    let addrs = [DATA, DATA + 0x4_0000, DATA + 0x8_0000];
    for (&addr, &len) in addrs.iter().zip(&lens) {
        rig.fill(addr, 0xee, len as usize);
    }
    write_header(&rig, VIRTIO_BLK_T_IN, 7);
    let (status, used) = submit(
        &mut rig,
        &[
            readable(HEADER, 16),
            writable(addrs[0], lens[0]),
            writable(addrs[1], lens[1]),
            writable(addrs[2], lens[2]),
            writable(STATUS_BYTE, 1),
        ],
    );
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert_eq!(used as usize, total + 1);
    let mut data = Vec::new();
    for (&addr, &len) in addrs.iter().zip(&lens) {
        data.extend(rig.bytes(addr, len as usize));
    }
    assert_eq!(data, original[7 * 512..7 * 512 + total]);
}

#[test]
fn blk_writes_reach_the_file_and_read_back() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("write.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    let new_data: Vec<u8> = (0..1536).map(|i| (i % 251) as u8 ^ 0xa5).collect();
    let (status, used) = write_sectors(&mut rig, 10, &new_data);
    assert_eq!((status, used), (VIRTIO_BLK_S_OK, 1));
    let (status, _, data) = read_sectors(&mut rig, 10, 3);
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert_eq!(data, new_data);
    assert_eq!(flush_request(&mut rig), VIRTIO_BLK_S_OK);
    let mut expected = original;
    expected[10 * 512..13 * 512].copy_from_slice(&new_data);
    assert_eq!(image.contents(), expected);
    rig.dev.device_mut().flush().unwrap();
}

#[test]
fn blk_get_id_returns_the_file_name() {
    let image = TempImage::new("serial-number-test.img", &pattern(DISK_SECTORS * 512));
    let mut rig = blk_rig(&image, DiskOptions::default());
    write_header(&rig, VIRTIO_BLK_T_GET_ID, 0);
    rig.fill(DATA, 0xee, 32);
    let (status, used) = submit(
        &mut rig,
        &[
            readable(HEADER, 16),
            writable(DATA, 20),
            writable(STATUS_BYTE, 1),
        ],
    );
    assert_eq!((status, used), (VIRTIO_BLK_S_OK, 21));
    let name = image.path.file_name().unwrap().as_encoded_bytes();
    assert!(name.len() >= 20, "the temp name is long enough to be cut");
    assert_eq!(rig.bytes(DATA, 20), name[..20]);
    assert_eq!(
        rig.bytes(DATA + 20, 1),
        [0xee],
        "nothing written past 20 bytes"
    );
}

#[test]
fn blk_read_only_refuses_writes_and_keeps_the_file() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("ro.img", &original);
    let mut rig = blk_rig(
        &image,
        DiskOptions {
            read_only: true,
            snapshot: false,
        },
    );
    assert_ne!(rig.device_features() & VIRTIO_BLK_F_RO, 0);
    let (status, used) = write_sectors(&mut rig, 0, &[0x11; 512]);
    assert_eq!((status, used), (VIRTIO_BLK_S_IOERR, 1));
    let (status, _, data) = read_sectors(&mut rig, 0, 1);
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert_eq!(data, original[..512]);
    assert_eq!(flush_request(&mut rig), VIRTIO_BLK_S_OK);
    assert_eq!(image.contents(), original);
    assert!(rig.dev.device().disk().is_read_only());
}

#[test]
fn blk_snapshot_keeps_writes_in_the_overlay() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("snapshot.img", &original);
    let mut rig = blk_rig(
        &image,
        DiskOptions {
            read_only: false,
            snapshot: true,
        },
    );
    assert_eq!(
        rig.device_features() & VIRTIO_BLK_F_RO,
        0,
        "writable to the guest"
    );
    // One sector inside a 4 KiB chunk, and three sectors straddling chunks 0 and 1.
    let one = vec![0x11u8; 512];
    let three: Vec<u8> = (0..1536).map(|i| (i % 13) as u8).collect();
    assert_eq!(write_sectors(&mut rig, 1, &one).0, VIRTIO_BLK_S_OK);
    assert_eq!(write_sectors(&mut rig, 7, &three).0, VIRTIO_BLK_S_OK);
    assert_eq!(flush_request(&mut rig), VIRTIO_BLK_S_OK);
    rig.dev.device_mut().flush().unwrap();

    let mut expected = original.clone();
    expected[512..1024].copy_from_slice(&one);
    expected[7 * 512..10 * 512].copy_from_slice(&three);
    let (status, _, data) = read_sectors(&mut rig, 0, 16);
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert_eq!(data, expected[..16 * 512]);
    // Overwriting an overlay chunk again.
    assert_eq!(write_sectors(&mut rig, 1, &[0x22; 512]).0, VIRTIO_BLK_S_OK);
    assert_eq!(read_sectors(&mut rig, 1, 1).2, vec![0x22; 512]);
    assert_eq!(image.contents(), original, "file byte-identical");
    assert!(rig.dev.device().disk().is_snapshot());
}

#[test]
fn blk_rejects_out_of_range_and_partial_sectors() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("range.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    for (sector, count) in [
        (DISK_SECTORS as u64, 1),
        (DISK_SECTORS as u64 - 1, 2),
        (u64::MAX, 1),
        (u64::MAX / 512 + 1, 1),
    ] {
        let (status, used, data) = read_sectors(&mut rig, sector, count);
        assert_eq!(
            (status, used),
            (VIRTIO_BLK_S_IOERR, 1),
            "sector {sector:#x}"
        );
        assert!(data.iter().all(|&b| b == 0xee), "nothing read");
    }
    assert_eq!(
        write_sectors(&mut rig, DISK_SECTORS as u64 - 1, &[0; 1024]).0,
        VIRTIO_BLK_S_IOERR
    );
    // Not a whole number of sectors.
    write_header(&rig, VIRTIO_BLK_T_IN, 0);
    let (status, _) = submit(
        &mut rig,
        &[
            readable(HEADER, 16),
            writable(DATA, 100),
            writable(STATUS_BYTE, 1),
        ],
    );
    assert_eq!(status, VIRTIO_BLK_S_IOERR);
    assert_eq!(write_sectors(&mut rig, 0, &[1; 700]).0, VIRTIO_BLK_S_IOERR);
    assert_eq!(image.contents(), original);
}

#[test]
fn blk_unknown_request_is_unsupported() {
    let image = TempImage::new("unsupp.img", &pattern(DISK_SECTORS * 512));
    let mut rig = blk_rig(&image, DiskOptions::default());
    for request_type in [2, 11, 13, 99, u32::MAX] {
        write_header(&rig, request_type, 0);
        let (status, used) = submit(&mut rig, &[readable(HEADER, 16), writable(STATUS_BYTE, 1)]);
        assert_eq!(
            (status, used),
            (VIRTIO_BLK_S_UNSUPP, 1),
            "type {request_type}"
        );
    }
}

#[test]
fn blk_serves_indirect_descriptors() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("indirect.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    write_header(&rig, VIRTIO_BLK_T_IN, 4);
    let table = [
        (HEADER, 16u32, F_NEXT, 1u16),
        (DATA, 1024, F_WRITE | F_NEXT, 2),
        (STATUS_BYTE, 1, F_WRITE, 0),
    ];
    for (i, (addr, len, flags, next)) in table.into_iter().enumerate() {
        let at = INDIRECT_TABLE + 16 * i as u64;
        rig.mem.write_obj(addr, GuestAddress(at)).unwrap();
        rig.mem.write_obj(len, GuestAddress(at + 8)).unwrap();
        rig.mem.write_obj(flags, GuestAddress(at + 12)).unwrap();
        rig.mem.write_obj(next, GuestAddress(at + 14)).unwrap();
    }
    rig.write_desc(5, INDIRECT_TABLE, 48, F_INDIRECT, 0);
    rig.publish(5);
    rig.notify();
    assert_eq!(rig.take_used(), [(5, 1025)]);
    assert_eq!(status_byte(&rig), VIRTIO_BLK_S_OK);
    assert_eq!(rig.bytes(DATA, 1024), original[4 * 512..6 * 512]);
}

// ---------------------------------------------------------------------------------------------
// Malformed chains: each fails alone, and the next request still works.

/// Submits a malformed chain, checks its completion, then checks a good read still works.
fn assert_fails_alone(
    rig: &mut Rig<VirtioBlk>,
    descs: &[Desc],
    expected_status: u8,
    expected_used: u32,
) {
    let (status, used) = submit(rig, descs);
    assert_eq!(status, expected_status, "status byte");
    assert_eq!(used, expected_used, "used length");
    let (status, _, data) = read_sectors(rig, 2, 1);
    assert_eq!(status, VIRTIO_BLK_S_OK, "the next request works");
    assert_eq!(data, pattern(DISK_SECTORS * 512)[1024..1536]);
}

#[test]
fn blk_malformed_chains_fail_with_ioerr() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("garbage.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    let status = writable(STATUS_BYTE, 1);

    // Data buffer beyond the end of RAM, straddling it, below RAM, and of a huge length.
    for data in [
        writable(RAM_END, 512),
        writable(RAM_END - 256, 512),
        writable(0x1000, 512),
        writable(u64::MAX - 100, 512),
        writable(DATA, 0xffff_fe00),
    ] {
        write_header(&rig, VIRTIO_BLK_T_IN, 0);
        assert_fails_alone(
            &mut rig,
            &[readable(HEADER, 16), data, status],
            VIRTIO_BLK_S_IOERR,
            1,
        );
    }
    // Header outside RAM.
    assert_fails_alone(
        &mut rig,
        &[readable(RAM_END + 0x1000, 16), writable(DATA, 512), status],
        VIRTIO_BLK_S_IOERR,
        1,
    );
    // Zero-length and short headers.
    for header_len in [0, 8, 15] {
        write_header(&rig, VIRTIO_BLK_T_IN, 0);
        assert_fails_alone(
            &mut rig,
            &[readable(HEADER, header_len), writable(DATA, 512), status],
            VIRTIO_BLK_S_IOERR,
            1,
        );
    }
    // A device-writable header.
    write_header(&rig, VIRTIO_BLK_T_IN, 0);
    assert_fails_alone(
        &mut rig,
        &[writable(HEADER, 16), writable(DATA, 512), status],
        VIRTIO_BLK_S_IOERR,
        1,
    );
    // Read with driver-readable data; write with device-writable data.
    write_header(&rig, VIRTIO_BLK_T_IN, 0);
    assert_fails_alone(
        &mut rig,
        &[readable(HEADER, 16), readable(DATA, 512), status],
        VIRTIO_BLK_S_IOERR,
        1,
    );
    write_header(&rig, VIRTIO_BLK_T_OUT, 0);
    assert_fails_alone(
        &mut rig,
        &[readable(HEADER, 16), writable(DATA, 512), status],
        VIRTIO_BLK_S_IOERR,
        1,
    );
    // A readable descriptor after a writable one.
    write_header(&rig, VIRTIO_BLK_T_OUT, 0);
    assert_fails_alone(
        &mut rig,
        &[
            readable(HEADER, 16),
            writable(DATA, 512),
            readable(DATA + 0x1000, 512),
            status,
        ],
        VIRTIO_BLK_S_IOERR,
        1,
    );
    assert_eq!(
        image.contents(),
        original,
        "no failed write touched the file"
    );
}

#[test]
fn blk_chain_without_status_byte_gets_no_io() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("nostatus.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    // A write whose last descriptor is driver-readable: nowhere to report, so nothing is done.
    write_header(&rig, VIRTIO_BLK_T_OUT, 0);
    rig.fill(DATA, 0x99, 512);
    assert_fails_alone(
        &mut rig,
        &[
            readable(HEADER, 16),
            readable(DATA, 512),
            readable(STATUS_BYTE, 1),
        ],
        0xff,
        0,
    );
    // A status byte outside RAM.
    write_header(&rig, VIRTIO_BLK_T_OUT, 0);
    assert_fails_alone(
        &mut rig,
        &[
            readable(HEADER, 16),
            readable(DATA, 512),
            writable(RAM_END, 1),
        ],
        0xff,
        0,
    );
    // A zero-length last descriptor.
    write_header(&rig, VIRTIO_BLK_T_OUT, 0);
    assert_fails_alone(
        &mut rig,
        &[
            readable(HEADER, 16),
            readable(DATA, 512),
            writable(STATUS_BYTE, 0),
        ],
        0xff,
        0,
    );
    assert_eq!(image.contents(), original);
}

#[test]
fn blk_looping_and_dangling_chains_are_skipped() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("loop.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    write_header(&rig, VIRTIO_BLK_T_OUT, 0);
    // 0 -> 1 -> 0 -> ...: the walk stops after QUEUE_LEN descriptors.
    rig.write_desc(0, HEADER, 16, F_NEXT, 1);
    rig.write_desc(1, STATUS_BYTE, 1, F_WRITE | F_NEXT, 0);
    rig.publish(0);
    rig.notify();
    assert_eq!(rig.take_used(), [(0, 0)]);
    assert_eq!(
        status_byte(&rig),
        0xff,
        "no status for a chain without an end"
    );
    // A next index beyond the queue.
    rig.write_desc(2, HEADER, 16, F_NEXT, 1000);
    rig.publish(2);
    rig.notify();
    assert_eq!(rig.take_used(), [(2, 0)]);
    // A head index beyond the queue: nothing can be put on the used ring for it.
    rig.publish(QUEUE_LEN + 3);
    rig.notify();
    assert_eq!(rig.take_used(), []);
    // An indirect table outside RAM, and one of a length that is not whole descriptors.
    rig.write_desc(3, RAM_END, 48, F_INDIRECT, 0);
    rig.publish(3);
    rig.write_desc(4, INDIRECT_TABLE, 17, F_INDIRECT, 0);
    rig.publish(4);
    rig.notify();
    assert_eq!(rig.take_used(), [(3, 0), (4, 0)]);

    rig.next_desc = 5;
    let (status, _, data) = read_sectors(&mut rig, 0, 1);
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert_eq!(data, original[..512]);
    assert_eq!(image.contents(), original);
}

#[test]
fn rings_outside_ram_and_bogus_avail_index_do_not_hang_or_panic() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("rings.img", &original);
    let mut rig = blk_rig(&image, DiskOptions::default());
    // The avail index jumps by more than the queue size: the queue refuses to iterate.
    rig.mem
        .write_obj(1000u16.to_le(), GuestAddress(AVAIL_RING + 2))
        .unwrap();
    rig.notify();
    assert_eq!(rig.used_idx(), 0);
    assert!(!rig.irq());

    // A queue whose rings are beyond RAM.
    let disk = Disk::open(&image.path, DiskOptions::default());
    assert!(
        matches!(disk, Err(DiskError::Locked { .. })),
        "image in use"
    );
    drop(rig);
    let disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    let mut rig = Rig::new(VirtioBlk::new(disk));
    assert!(rig.negotiate(VIRTIO_F_VERSION_1));
    rig.write(QUEUE_SEL, 0);
    rig.write(QUEUE_NUM, u32::from(QUEUE_LEN));
    for low in [QUEUE_DESC_LOW, QUEUE_DRIVER_LOW, QUEUE_DEVICE_LOW] {
        rig.write(low, 0xfff0_0000);
        rig.write(low + 4, 0x1);
    }
    rig.write(QUEUE_READY, 1);
    rig.write(STATUS, ACKNOWLEDGE | DRIVER | FEATURES_OK | DRIVER_OK);
    rig.notify();
    rig.write(QUEUE_NOTIFY, 7); // a queue that does not exist
    rig.write(QUEUE_NOTIFY, u32::MAX);
    assert!(!rig.irq());
    assert_eq!(image.contents(), original);
}

#[test]
fn guest_memory_covers_exactly_the_ram_mapping() {
    let ram = TestRam::new();
    let memory = ram.memory();
    memory
        .write_obj(0x1234_5678u32, GuestAddress(RAM_END - 4))
        .unwrap();
    // SAFETY: the host pointer of the last word of the live test mapping.
    let host_word = unsafe { ram.host.add(RAM_SIZE - 4).cast::<u32>().read_unaligned() };
    assert_eq!(
        host_word, 0x1234_5678,
        "guest RAM_END - 4 is the mapping's last word"
    );
    assert!(memory.read_obj::<u32>(GuestAddress(RAM_END - 2)).is_err());
    assert!(memory.read_obj::<u8>(GuestAddress(RAM_BASE - 1)).is_err());
    // SAFETY: both calls describe (part of) the live test mapping, and fail anyway.
    let (empty, misaligned) = unsafe {
        (
            guest_memory_from_raw(ram.host, RAM_BASE, 0),
            guest_memory_from_raw(ram.host.add(1), RAM_BASE, RAM_SIZE - 1),
        )
    };
    assert!(matches!(empty, Err(GuestMemoryMapError::BadRange { .. })));
    assert!(matches!(misaligned, Err(GuestMemoryMapError::Region(_))));
    // SAFETY: as above; the range wraps past 2^64, which is refused before any access.
    let wrapping = unsafe { guest_memory_from_raw(ram.host, u64::MAX - 0xfff, RAM_SIZE) };
    assert!(matches!(
        wrapping,
        Err(GuestMemoryMapError::BadRange { .. })
    ));
}

#[test]
fn device_moves_to_a_new_transport_with_its_snapshot() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("move.img", &original);
    let snapshot = DiskOptions {
        read_only: false,
        snapshot: true,
    };
    let mut rig = blk_rig(&image, snapshot);
    assert_eq!(write_sectors(&mut rig, 5, &[0x5a; 512]).0, VIRTIO_BLK_S_OK);
    let Rig { dev, .. } = rig;
    let mut rig = Rig::new(dev.into_device());
    rig.start();
    assert_eq!(read_sectors(&mut rig, 5, 1).2, vec![0x5a; 512]);
    assert_eq!(image.contents(), original);
}

// ---------------------------------------------------------------------------------------------
// Disk

#[test]
fn disk_size_must_be_whole_sectors() {
    let image = TempImage::new("odd-size.img", &[0u8; 1000]);
    let error = Disk::open(&image.path, DiskOptions::default()).unwrap_err();
    assert!(
        matches!(error, DiskError::NotSectorMultiple { size: 1000, .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&image.path.display().to_string()),
        "{message}"
    );
    assert!(message.contains("1000"), "{message}");

    let missing = Path::new("/nonexistent/rv32vm/disk.img");
    let error = Disk::open(missing, DiskOptions::default()).unwrap_err();
    assert!(matches!(error, DiskError::Open { .. }));
    assert!(error.to_string().contains("/nonexistent/rv32vm/disk.img"));
}

#[test]
fn disk_locks_writable_images() {
    let image = TempImage::new("lock.img", &[0u8; 4096]);
    let first = Disk::open(&image.path, DiskOptions::default()).unwrap();
    let second = Disk::open(&image.path, DiskOptions::default());
    assert!(
        matches!(second, Err(DiskError::Locked { .. })),
        "{second:?}"
    );
    let snapshot = DiskOptions {
        read_only: false,
        snapshot: true,
    };
    assert!(
        Disk::open(&image.path, snapshot).is_err(),
        "shared vs exclusive"
    );
    drop(first);
    // Readers share.
    let _a = Disk::open(&image.path, snapshot).unwrap();
    let _b = Disk::open(&image.path, snapshot).unwrap();
}

#[test]
fn snapshot_overlay_matches_a_model_for_any_alignment() {
    // 9 chunks and a half: the last chunk is shorter than OVERLAY_CHUNK_SIZE.
    let size = 9 * 4096 + 2048;
    let original = pattern(size);
    let image = TempImage::new("overlay-model.img", &original);
    let snapshot = DiskOptions {
        read_only: false,
        snapshot: true,
    };
    let mut disk = Disk::open(&image.path, snapshot).unwrap();
    assert_eq!(disk.overlay_allocated_bytes(), Some(0), "empty overlay");
    let mut model = original.clone();
    let mut rng = XorShift(0x1234_5678_9abc_def1);
    for round in 0..400u32 {
        let offset = (rng.next() % size as u64) as usize & !511;
        let len = ((rng.next() % 24 + 1) as usize * 512).min(size - offset);
        let fill: Vec<u8> = (0..len).map(|i| (i as u32 ^ round) as u8).collect();
        disk.write_at(offset as u64, &fill).unwrap();
        model[offset..offset + len].copy_from_slice(&fill);
        let read_offset = (rng.next() % size as u64) as usize;
        let read_len = (rng.next() % 20_000) as usize % (size - read_offset + 1);
        let mut buf = vec![0u8; read_len];
        disk.read_at(read_offset as u64, &mut buf).unwrap();
        assert_eq!(
            buf,
            model[read_offset..read_offset + read_len],
            "round {round}"
        );
    }
    // The tail chunk as a whole write.
    let tail = vec![0xeeu8; size - 9 * 4096];
    disk.write_at(9 * 4096, &tail).unwrap();
    model[9 * 4096..].copy_from_slice(&tail);
    let mut all = vec![0u8; size];
    disk.read_at(0, &mut all).unwrap();
    assert_eq!(all, model);
    assert!(
        disk.overlay_allocated_bytes().unwrap() >= 4096,
        "the data is in the temporary file"
    );
    assert_eq!(image.contents(), original, "the image never changes");
}

#[test]
fn snapshot_overlay_write_errors_fail_the_request() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("overlay-error.img", &original);
    let snapshot = DiskOptions {
        read_only: false,
        snapshot: true,
    };
    let mut disk = Disk::open(&image.path, snapshot).unwrap();
    // An overlay file that refuses writes, as a full file system would.
    disk.replace_overlay_file_for_tests(fs::File::open(&image.path).unwrap());
    assert!(disk.write_at(4096, &[1; 4096]).is_err(), "whole chunk");
    assert!(disk.write_at(512, &[1; 512]).is_err(), "copy on write");
    let mut rig = Rig::new(VirtioBlk::new(disk));
    rig.start_with(VIRTIO_BLK_F_FLUSH);
    assert_eq!(
        write_sectors(&mut rig, 3, &[0x33; 1024]),
        (VIRTIO_BLK_S_IOERR, 1)
    );
    // Nothing was recorded as written: reads still see the image.
    let (status, _, data) = read_sectors(&mut rig, 0, 16);
    assert_eq!(status, VIRTIO_BLK_S_OK);
    assert_eq!(data, original[..16 * 512]);
}

#[test]
fn snapshot_overlay_directory_errors_are_clear() {
    // The overlay directory comes from TMPDIR; one that does not exist is a clear error.
    let image = TempImage::new("overlay-dir.img", &[0u8; 4096]);
    let error = Disk::open_with_overlay_dir(
        &image.path,
        DiskOptions {
            read_only: false,
            snapshot: true,
        },
        Path::new("/nonexistent/rv32vm-tmp"),
    )
    .unwrap_err();
    assert!(matches!(error, DiskError::Overlay { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("/nonexistent/rv32vm-tmp") && message.contains("TMPDIR"),
        "{message}"
    );
}

#[test]
fn non_regular_files_are_refused_without_blocking() {
    let dir = std::env::temp_dir().join(format!("rv32vm-virtio-{}-kinds", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let _ = fs::remove_file(&fifo);
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads a NUL-terminated path that lives for the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let all_modes = [
        DiskOptions::default(),
        DiskOptions {
            read_only: true,
            snapshot: false,
        },
        DiskOptions {
            read_only: false,
            snapshot: true,
        },
    ];
    let cases: [(&Path, &str); 3] = [
        (&fifo, "a FIFO"),
        (&dir, "a directory"),
        (Path::new("/dev/null"), "a character device"),
    ];
    for (path, kind) in cases {
        for options in all_modes {
            // A read-only open of a FIFO would block until a writer comes: run it on a thread
            // and give up after a while instead of hanging the test.
            let (tx, rx) = std::sync::mpsc::channel();
            let owned = path.to_owned();
            std::thread::spawn(move || {
                let _ = tx.send(Disk::open(&owned, options).map(|_| ()));
            });
            let result = rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("opening {} {options:?} blocked", path.display()));
            let error = result.expect_err("not a disk");
            assert!(matches!(error, DiskError::NotADisk { .. }), "{error:?}");
            let message = error.to_string();
            assert!(
                message.contains(kind) && message.contains(&path.display().to_string()),
                "{options:?}: {message}"
            );
        }
    }
    let _ = fs::remove_file(&fifo);
    let _ = fs::remove_dir(&dir);
}

/// Holds QEMU's lock bytes on an image the way a running QEMU does, through an open file
/// description of its own.
fn hold_qemu_lock_bytes(path: &Path, bytes: &[i64]) -> fs::File {
    let file = fs::File::open(path).unwrap();
    for &byte in bytes {
        // SAFETY: an all-zero flock is valid; fcntl reads it during the call.
        let result = unsafe {
            let mut request: libc::flock = std::mem::zeroed();
            request.l_type = libc::F_RDLCK as libc::c_short;
            request.l_whence = libc::SEEK_SET as libc::c_short;
            request.l_start = byte;
            request.l_len = 1;
            libc::fcntl(
                std::os::fd::AsRawFd::as_raw_fd(&file),
                libc::F_OFD_SETLK,
                &request,
            )
        };
        assert_eq!(result, 0, "lock byte {byte}");
    }
    file
}

/// Whether some open file description holds a lock on `byte` of `path`.
fn qemu_lock_byte_held(path: &Path, byte: i64) -> bool {
    let file = fs::File::open(path).unwrap();
    // SAFETY: an all-zero flock is valid; fcntl reads and writes it during the call.
    unsafe {
        let mut request: libc::flock = std::mem::zeroed();
        request.l_type = libc::F_WRLCK as libc::c_short;
        request.l_whence = libc::SEEK_SET as libc::c_short;
        request.l_start = byte;
        request.l_len = 1;
        assert_eq!(
            libc::fcntl(
                std::os::fd::AsRawFd::as_raw_fd(&file),
                libc::F_OFD_GETLK,
                &mut request
            ),
            0
        );
        request.l_type != libc::F_UNLCK as libc::c_short
    }
}

#[test]
fn disk_takes_and_honours_qemu_lock_bytes() {
    let image = TempImage::new("qemu-lock.img", &[0u8; 4096]);
    let read_only = DiskOptions {
        read_only: true,
        snapshot: false,
    };
    let snapshot = DiskOptions {
        read_only: false,
        snapshot: true,
    };
    // What we hold: as a read-write QEMU (consistent read, write; write not shared).
    let disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    for byte in [100, 101, 201] {
        assert!(qemu_lock_byte_held(&image.path, byte), "byte {byte}");
    }
    assert!(!qemu_lock_byte_held(&image.path, 200));
    drop(disk);
    for byte in [100, 101, 201] {
        assert!(!qemu_lock_byte_held(&image.path, byte), "released {byte}");
    }
    // As a read-only QEMU: consistent read; write not shared.
    let disk = Disk::open(&image.path, snapshot).unwrap();
    assert!(qemu_lock_byte_held(&image.path, 100));
    assert!(!qemu_lock_byte_held(&image.path, 101));
    assert!(qemu_lock_byte_held(&image.path, 201));
    drop(disk);

    // A read-write QEMU (bytes 100, 101, 201): every mode is refused.
    let qemu_rw = hold_qemu_lock_bytes(&image.path, &[100, 101, 201]);
    for options in [DiskOptions::default(), read_only, snapshot] {
        let error = Disk::open(&image.path, options).unwrap_err();
        assert!(
            matches!(error, DiskError::Locked { .. }),
            "{options:?}: {error:?}"
        );
        assert!(error.to_string().contains("QEMU"), "{error}");
    }
    drop(qemu_rw);
    // A read-only QEMU (100, 201): readers share, a writer is refused.
    let qemu_ro = hold_qemu_lock_bytes(&image.path, &[100, 201]);
    let error = Disk::open(&image.path, DiskOptions::default()).unwrap_err();
    assert!(error.to_string().contains("\"write\""), "{error}");
    let _reader = Disk::open(&image.path, read_only).unwrap();
    let _snapshot = Disk::open(&image.path, snapshot).unwrap();
    drop(qemu_ro);
}

#[test]
fn disk_accesses_past_the_end_fail() {
    let image = TempImage::new("eof.img", &pattern(8192));
    let mut disk = Disk::open(&image.path, DiskOptions::default()).unwrap();
    assert_eq!(disk.sectors(), 16);
    let mut buf = [0u8; 512];
    assert!(disk.read_at(8192 - 256, &mut buf).is_err());
    assert!(disk.read_at(u64::MAX - 10, &mut buf).is_err());
    assert!(disk.write_at(8192, &buf).is_err());
    disk.read_at(8192 - 512, &mut buf).unwrap();
    assert_eq!(buf[..], pattern(8192)[8192 - 512..]);
    // The file shrinks under us: the read fails instead of returning garbage.
    fs::OpenOptions::new()
        .write(true)
        .open(&image.path)
        .unwrap()
        .set_len(4096)
        .unwrap();
    assert!(disk.read_at(4096, &mut buf).is_err());
}

// ---------------------------------------------------------------------------------------------
// virtio-rng

#[test]
fn rng_fills_writable_buffers() {
    let mut rig = Rig::new(VirtioRng::new());
    rig.start();
    assert_eq!(rig.read(DEVICE_ID), 4);
    rig.fill(DATA, 0, 512);
    let head = rig.push_chain(&[writable(DATA, 256), writable(DATA + 0x1000, 256)]);
    rig.notify();
    assert_eq!(rig.take_used(), [(u32::from(head), 512)]);
    assert!(rig.irq());
    let first = rig.bytes(DATA, 256);
    let second = rig.bytes(DATA + 0x1000, 256);
    assert!(first.iter().any(|&b| b != 0), "random bytes written");
    assert_ne!(first, second);
    assert_eq!(
        rig.bytes(DATA + 256, 16),
        [0; 16],
        "only the buffer is written"
    );
}

#[test]
fn rng_bounds_each_request() {
    let mut rig = Rig::new(VirtioRng::new());
    rig.start();
    let len = 128 * 1024;
    rig.fill(DATA, 0xaa, len);
    rig.push_chain(&[writable(DATA, len as u32)]);
    rig.notify();
    assert_eq!(rig.take_used(), [(0, 64 * 1024)]);
    assert!(rig
        .bytes(DATA + 64 * 1024, len - 64 * 1024)
        .iter()
        .all(|&b| b == 0xaa));
    // Buffers outside RAM and read-only chains get nothing.
    rig.push_chain(&[writable(RAM_END - 16, 64)]);
    rig.push_chain(&[readable(DATA, 64)]);
    rig.notify();
    assert_eq!(rig.take_used(), [(1, 0), (2, 0)]);
}

// ---------------------------------------------------------------------------------------------
// Random register and ring garbage

/// xorshift64*: deterministic, so a failure can be replayed from its seed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn random_registers_and_ring_garbage_never_break_the_device() {
    let original = pattern(DISK_SECTORS * 512);
    let image = TempImage::new("hammer.img", &original);
    let snapshot = DiskOptions {
        read_only: false,
        snapshot: true,
    };
    let disk = Disk::open(&image.path, snapshot).unwrap();
    let mut rig = Rig::new(VirtioBlk::new(disk));
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let registers = [
        STATUS,
        QUEUE_SEL,
        QUEUE_NUM,
        QUEUE_READY,
        QUEUE_NOTIFY,
        QUEUE_NOTIFY,
        INTERRUPT_ACK,
        DRIVER_FEATURES,
        DRIVER_FEATURES_SEL,
        QUEUE_DESC_LOW,
        QUEUE_DRIVER_LOW,
        QUEUE_DEVICE_LOW,
        QUEUE_DESC_HIGH,
    ];
    for round in 0..20_000 {
        // Garbage in the rings and buffers the queue may point at.
        let at = RAM_BASE + rng.next() % 0x2_0000;
        rig.mem
            .write_obj(rng.next(), GuestAddress(at & !7))
            .unwrap();
        let register = registers[(rng.next() % registers.len() as u64) as usize];
        let value = match rng.next() % 4 {
            0 => rng.next() % 16,
            1 => (RAM_BASE + rng.next() % 0x4000) & !0xf,
            2 => u64::from(ACKNOWLEDGE | DRIVER | FEATURES_OK | DRIVER_OK),
            _ => rng.next(),
        };
        rig.dev.write(register, 4, value);
        if round % 7 == 0 {
            let offset = rng.next() % 0x200;
            rig.dev
                .read(offset, [1, 2, 4, 8][(rng.next() % 4) as usize]);
        }
        assert_eq!(rig.irq(), rig.read(INTERRUPT_STATUS) != 0, "round {round}");
    }
    // A proper driver still gets correct data.
    rig.start_with(VIRTIO_BLK_F_FLUSH);
    let disk_now = {
        let (status, _, data) = read_sectors(&mut rig, 200, 1);
        assert_eq!(status, VIRTIO_BLK_S_OK);
        data
    };
    assert_eq!(disk_now.len(), 512);
    assert_eq!(
        image.contents(),
        original,
        "snapshot: the file is untouched"
    );
}

#[test]
fn transport_state_restores_into_a_new_transport_that_goes_on_serving() {
    let mut rig = Rig::new(VirtioRng::new());
    rig.start();
    rig.push_chain(&[writable(DATA, 16)]);
    rig.notify();
    assert_eq!(rig.take_used().len(), 1);
    assert!(rig.irq());
    let mut out = crate::state::StateWriter::new();
    rig.dev.save_state(&mut out);
    let bytes = out.into_bytes();
    // A new transport, as a restored machine builds it, wired to a fresh line.
    let mut levels = IrqLevels::new(8).unwrap();
    let line = levels.line(IRQ_SOURCE).unwrap();
    let mut fresh = VirtioMmio::new(VirtioRng::new(), rig.mem.clone(), line);
    let mut input = crate::state::StateReader::new(&bytes);
    fresh.restore_state(&mut input).unwrap();
    input.finish("transport").unwrap();
    assert!(
        levels.is_high(IRQ_SOURCE),
        "the interrupt line is driven again"
    );
    assert_eq!(fresh.status(), rig.dev.status());
    assert_eq!(fresh.acked_features(), rig.dev.acked_features());
    rig.dev = fresh;
    rig.levels = levels;
    rig.ack_interrupt();
    assert!(!rig.irq());
    // The queue goes on from its saved indices.
    let head = rig.push_chain(&[writable(DATA + 0x100, 16)]);
    rig.notify();
    assert_eq!(rig.take_used(), [(u32::from(head), 16)]);
    // Short state is an error, never a panic.
    let mut other = VirtioMmio::new(VirtioRng::new(), rig.mem.clone(), IrqLine::disconnected());
    for cut in 0..bytes.len() {
        let mut input = crate::state::StateReader::new(&bytes[..cut]);
        assert!(other.restore_state(&mut input).is_err(), "cut {cut}");
    }
}
