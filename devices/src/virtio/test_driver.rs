//! A minimal virtio-mmio driver for tests of devices with several queues and worker threads:
//! real anonymous memory as guest RAM, the Linux probe sequence, split rings per queue, and
//! waits (with a time limit) for used buffers that a worker thread adds asynchronously.

use std::time::{Duration, Instant};

use vm_memory::{Bytes, GuestAddress};

use super::mmio::*;
use super::status::{ACKNOWLEDGE, DRIVER, DRIVER_OK, FEATURES_OK};
use super::*;
use crate::bus::MmioDevice;
use crate::irq::IrqLevels;

pub(crate) const RAM_BASE: u64 = 0x8000_0000;
pub(crate) const RAM_SIZE: usize = 16 << 20;
/// Ring size the driver picks for every queue.
pub(crate) const QUEUE_LEN: u16 = 64;
/// Each queue's rings live in a 16 KiB area from here.
const RINGS: u64 = RAM_BASE;
const RING_AREA: u64 = 0x4000;
/// Buffers are handed out from here up.
pub(crate) const BUFFERS: u64 = RAM_BASE + 0x10_0000;
const IRQ_SOURCE: u32 = 1;
const F_NEXT: u16 = 1;
const F_WRITE: u16 = 2;
/// How long a test waits for a worker thread.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// Anonymous host memory standing in for the machine's RAM mapping.
pub(crate) struct TestRam {
    host: *mut u8,
}

impl TestRam {
    pub(crate) fn new() -> Self {
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

    pub(crate) fn memory(&self) -> GuestMemoryMmap {
        // SAFETY: the mapping lives until `TestRam` drops, and `Driver` drops every memory user
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

/// One buffer of a chain.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Buffer {
    pub(crate) addr: u64,
    pub(crate) len: u32,
    pub(crate) writable: bool,
}

/// Driver-side state of one split ring.
#[derive(Default)]
struct Ring {
    next_desc: u16,
    avail_idx: u16,
    seen_used: u16,
}

/// A device behind the transport, driven like Linux drives it.
pub(crate) struct Driver<D: VirtioDevice> {
    pub(crate) dev: VirtioMmio<D>,
    pub(crate) mem: GuestMemoryMmap,
    levels: IrqLevels,
    rings: Vec<Ring>,
    next_buffer: u64,
    /// Last: dropped after every user of the mapping.
    _ram: TestRam,
}

impl<D: VirtioDevice> Driver<D> {
    /// Probes `device` and sets up `queues` queues with `features` (VERSION_1 added).
    pub(crate) fn start(device: D, features: u64, queues: u16) -> Self {
        let ram = TestRam::new();
        let mem = ram.memory();
        let mut levels = IrqLevels::new(8).unwrap();
        let line = levels.line(IRQ_SOURCE).unwrap();
        let mut driver = Self {
            dev: VirtioMmio::new(device, mem.clone(), line),
            mem,
            levels,
            rings: (0..queues).map(|_| Ring::default()).collect(),
            next_buffer: BUFFERS,
            _ram: ram,
        };
        driver.write(STATUS, 0);
        driver.write(STATUS, ACKNOWLEDGE);
        driver.write(STATUS, ACKNOWLEDGE | DRIVER);
        let features = features | VIRTIO_F_VERSION_1;
        driver.write(DRIVER_FEATURES_SEL, 1);
        driver.write(DRIVER_FEATURES, (features >> 32) as u32);
        driver.write(DRIVER_FEATURES_SEL, 0);
        driver.write(DRIVER_FEATURES, features as u32);
        driver.write(STATUS, ACKNOWLEDGE | DRIVER | FEATURES_OK);
        assert_ne!(driver.read(STATUS) & FEATURES_OK, 0, "features refused");
        for queue in 0..queues {
            driver.write(QUEUE_SEL, u32::from(queue));
            assert!(driver.read(QUEUE_NUM_MAX) >= u32::from(QUEUE_LEN));
            driver.write(QUEUE_NUM, u32::from(QUEUE_LEN));
            let base = RINGS + RING_AREA * u64::from(queue);
            for (low, addr) in [
                (QUEUE_DESC_LOW, base),
                (QUEUE_DRIVER_LOW, base + 0x1000),
                (QUEUE_DEVICE_LOW, base + 0x2000),
            ] {
                driver.write(low, addr as u32);
                driver.write(low + 4, (addr >> 32) as u32);
            }
            driver.write(QUEUE_READY, 1);
        }
        driver.write(STATUS, ACKNOWLEDGE | DRIVER | FEATURES_OK | DRIVER_OK);
        driver
    }

    pub(crate) fn read(&mut self, offset: u64) -> u32 {
        self.dev.read(offset, 4) as u32
    }

    pub(crate) fn write(&mut self, offset: u64, value: u32) {
        self.dev.write(offset, 4, u64::from(value));
    }

    pub(crate) fn irq(&self) -> bool {
        self.levels.is_high(IRQ_SOURCE)
    }

    /// Waits until the interrupt line is high (a worker raises it just after adding used
    /// buffers); returns whether it went high within [`WAIT`].
    pub(crate) fn wait_irq(&self) -> bool {
        let deadline = Instant::now() + WAIT;
        while !self.irq() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// Lets later buffers reuse the whole buffer area (every earlier chain has completed).
    pub(crate) fn free_buffers(&mut self) {
        self.next_buffer = BUFFERS;
    }

    /// A fresh buffer area of `len` bytes (reused only after [`Self::free_buffers`]).
    pub(crate) fn alloc(&mut self, len: usize) -> u64 {
        let addr = self.next_buffer;
        self.next_buffer += (len as u64).div_ceil(64) * 64 + 64;
        assert!(
            self.next_buffer < RAM_BASE + RAM_SIZE as u64,
            "test RAM full"
        );
        addr
    }

    /// A driver-readable buffer holding `bytes`.
    pub(crate) fn readable(&mut self, bytes: &[u8]) -> Buffer {
        let addr = self.alloc(bytes.len());
        self.mem.write_slice(bytes, GuestAddress(addr)).unwrap();
        Buffer {
            addr,
            len: bytes.len() as u32,
            writable: false,
        }
    }

    /// A device-writable buffer of `len` bytes.
    pub(crate) fn writable(&mut self, len: u32) -> Buffer {
        let addr = self.alloc(len as usize);
        Buffer {
            addr,
            len,
            writable: true,
        }
    }

    fn ring_base(queue: u16) -> u64 {
        RINGS + RING_AREA * u64::from(queue)
    }

    /// Places `buffers` as one chain on `queue` and publishes it (no notification); returns
    /// the head index.
    pub(crate) fn push(&mut self, queue: u16, buffers: &[Buffer]) -> u16 {
        let base = Self::ring_base(queue);
        let ring = &mut self.rings[usize::from(queue)];
        let head = ring.next_desc;
        for (i, buffer) in buffers.iter().enumerate() {
            let index = (ring.next_desc + i as u16) % QUEUE_LEN;
            let last = i + 1 == buffers.len();
            let flags = if buffer.writable { F_WRITE } else { 0 } | if last { 0 } else { F_NEXT };
            let at = base + 16 * u64::from(index);
            let next = (index + 1) % QUEUE_LEN;
            self.mem
                .write_obj(buffer.addr.to_le(), GuestAddress(at))
                .unwrap();
            self.mem
                .write_obj(buffer.len.to_le(), GuestAddress(at + 8))
                .unwrap();
            self.mem
                .write_obj(flags.to_le(), GuestAddress(at + 12))
                .unwrap();
            self.mem
                .write_obj(next.to_le(), GuestAddress(at + 14))
                .unwrap();
        }
        ring.next_desc = (ring.next_desc + buffers.len() as u16) % QUEUE_LEN;
        let slot = base + 0x1000 + 4 + 2 * u64::from(ring.avail_idx % QUEUE_LEN);
        self.mem
            .write_obj(head.to_le(), GuestAddress(slot))
            .unwrap();
        ring.avail_idx = ring.avail_idx.wrapping_add(1);
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        self.mem
            .write_obj(ring.avail_idx.to_le(), GuestAddress(base + 0x1000 + 2))
            .unwrap();
        head
    }

    /// The buffer address of descriptor `index` of `queue`.
    pub(crate) fn descriptor_addr(&self, queue: u16, index: u16) -> u64 {
        let at = Self::ring_base(queue) + 16 * u64::from(index % QUEUE_LEN);
        u64::from_le(self.mem.read_obj(GuestAddress(at)).unwrap())
    }

    pub(crate) fn notify(&mut self, queue: u16) {
        self.write(QUEUE_NOTIFY, u32::from(queue));
    }

    fn used_idx(&self, queue: u16) -> u16 {
        let at = Self::ring_base(queue) + 0x2000 + 2;
        u16::from_le(self.mem.read_obj(GuestAddress(at)).unwrap())
    }

    /// Used entries (head, len) of `queue` not seen yet.
    pub(crate) fn take_used(&mut self, queue: u16) -> Vec<(u32, u32)> {
        let base = Self::ring_base(queue) + 0x2000;
        let used_idx = self.used_idx(queue);
        let ring = &mut self.rings[usize::from(queue)];
        let mut entries = Vec::new();
        while ring.seen_used != used_idx {
            let at = base + 4 + 8 * u64::from(ring.seen_used % QUEUE_LEN);
            let id: u32 = self.mem.read_obj(GuestAddress(at)).unwrap();
            let len: u32 = self.mem.read_obj(GuestAddress(at + 4)).unwrap();
            entries.push((u32::from_le(id), u32::from_le(len)));
            ring.seen_used = ring.seen_used.wrapping_add(1);
        }
        entries
    }

    /// Waits for the next used entry of `queue`; panics after [`WAIT`].
    pub(crate) fn wait_used(&mut self, queue: u16) -> (u32, u32) {
        let deadline = Instant::now() + WAIT;
        loop {
            if self.used_idx(queue) != self.rings[usize::from(queue)].seen_used {
                let mut entries = self.take_used(queue);
                assert_eq!(entries.len(), 1, "one completion at a time: {entries:?}");
                return entries.remove(0);
            }
            assert!(Instant::now() < deadline, "no used buffer on queue {queue}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Pushes one chain on `queue`, notifies, waits for its completion; returns the used
    /// length.
    pub(crate) fn round_trip(&mut self, queue: u16, buffers: &[Buffer]) -> u32 {
        let head = self.push(queue, buffers);
        self.notify(queue);
        let (id, len) = self.wait_used(queue);
        assert_eq!(id, u32::from(head));
        len
    }

    pub(crate) fn bytes(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        self.mem.read_slice(&mut buf, GuestAddress(addr)).unwrap();
        buf
    }

    /// What Linux's interrupt handler does: read the causes, acknowledge them.
    pub(crate) fn ack_interrupt(&mut self) -> u32 {
        let causes = self.read(INTERRUPT_STATUS);
        self.write(INTERRUPT_ACK, causes);
        causes
    }
}
