//! The virtio-mmio transport, version 2 (virtio 1.2 §4.2), as Linux's `virtio_mmio` driver
//! drives it.
//!
//! Control registers (below [`CONFIG`]) take only aligned 32-bit accesses, as the
//! specification requires of drivers; other accesses read 0 and are ignored. The device
//! configuration space at [`CONFIG`] takes 1, 2, 4 and 8-byte reads; it is read-only (writes
//! are ignored, no device here has a writable field).
//!
//! Model choices:
//! - Feature negotiation: the transport offers [`VIRTIO_F_VERSION_1`],
//!   [`VIRTIO_F_RING_EVENT_IDX`] and [`VIRTIO_F_RING_INDIRECT_DESC`] on top of the device's
//!   features. Setting `FEATURES_OK` is refused (the bit reads back clear) when the driver did
//!   not accept `VERSION_1` (a legacy driver) or accepted a feature that was not offered. Driver
//!   features cannot change once `FEATURES_OK` is set.
//! - Queue registers of a queue that is ready ignore writes, as do those of a queue index the
//!   device does not have (its `QueueNumMax` reads 0, which Linux takes as "no such queue").
//! - A `QueueNotify` write before `DRIVER_OK` is ignored. After it, the notified queue is
//!   drained synchronously (with notifications re-enabled and re-checked, the `EVENT_IDX`
//!   protocol), then the used-buffer interrupt is raised if the driver wants one. A device with
//!   a worker thread ([`VirtioDevice::has_worker`]) instead gets the queues when `DRIVER_OK` is
//!   set ([`VirtioDevice::activate`]) and a wake-up per notification ([`VirtioDevice::kick`]);
//!   see [`super::worker`].
//! - The interrupt line is high exactly while `InterruptStatus` is not 0.
//! - Writing 0 to `Status` resets the transport, every queue and the device.
//! - There are no shared memory regions: `SHMLen` reads as all ones ("no such region").

use virtio_queue::{Queue, QueueState, QueueT};

use super::status::{DEVICE_NEEDS_RESET, DRIVER_OK, FEATURES_OK};
use super::worker::{self, ActiveQueues, Interrupt, Waker};
use super::{
    Chain, GuestMemoryMmap, VirtioDevice, VIRTIO_F_RING_EVENT_IDX, VIRTIO_F_RING_INDIRECT_DESC,
    VIRTIO_F_VERSION_1,
};
use crate::bus::MmioDevice;
use crate::irq::IrqLine;
use crate::state::{StateError, StateReader, StateWriter};

/// Size of a virtio-mmio window on the virt memory map.
pub const MMIO_SIZE: u64 = 0x1000;

/// `MagicValue` reads "virt" in little endian.
pub const MAGIC: u32 = 0x7472_6976;
/// The transport version: 2 is the modern (virtio 1.x) interface.
pub const TRANSPORT_VERSION: u32 = 2;
/// `VendorID`: QEMU's, which drivers treat as a generic virtio implementation.
pub const VENDOR: u32 = 0x554d_4551;

/// Magic value register (read).
pub const MAGIC_VALUE: u64 = 0x000;
/// Version register (read).
pub const VERSION: u64 = 0x004;
/// Device type register (read).
pub const DEVICE_ID: u64 = 0x008;
/// Vendor id register (read).
pub const VENDOR_ID: u64 = 0x00c;
/// Device features, 32 bits selected by `DeviceFeaturesSel` (read).
pub const DEVICE_FEATURES: u64 = 0x010;
/// Selects the 32-bit word of `DeviceFeatures` (write).
pub const DEVICE_FEATURES_SEL: u64 = 0x014;
/// Driver features, 32 bits selected by `DriverFeaturesSel` (write).
pub const DRIVER_FEATURES: u64 = 0x020;
/// Selects the 32-bit word of `DriverFeatures` (write).
pub const DRIVER_FEATURES_SEL: u64 = 0x024;
/// Selects the queue the queue registers act on (write).
pub const QUEUE_SEL: u64 = 0x030;
/// Maximum size of the selected queue, 0 if it does not exist (read).
pub const QUEUE_NUM_MAX: u64 = 0x034;
/// Size of the selected queue (write).
pub const QUEUE_NUM: u64 = 0x038;
/// Whether the selected queue is ready (read/write).
pub const QUEUE_READY: u64 = 0x044;
/// Queue notifier: the value is the queue index (write).
pub const QUEUE_NOTIFY: u64 = 0x050;
/// Pending interrupt causes (read).
pub const INTERRUPT_STATUS: u64 = 0x060;
/// Acknowledges the interrupt causes written (write).
pub const INTERRUPT_ACK: u64 = 0x064;
/// Device status (read/write; 0 resets).
pub const STATUS: u64 = 0x070;
/// Descriptor table address of the selected queue, low 32 bits (write).
pub const QUEUE_DESC_LOW: u64 = 0x080;
/// Descriptor table address, high 32 bits (write).
pub const QUEUE_DESC_HIGH: u64 = 0x084;
/// Available ring ("driver area") address, low 32 bits (write).
pub const QUEUE_DRIVER_LOW: u64 = 0x090;
/// Available ring address, high 32 bits (write).
pub const QUEUE_DRIVER_HIGH: u64 = 0x094;
/// Used ring ("device area") address, low 32 bits (write).
pub const QUEUE_DEVICE_LOW: u64 = 0x0a0;
/// Used ring address, high 32 bits (write).
pub const QUEUE_DEVICE_HIGH: u64 = 0x0a4;
/// Selects a shared memory region (write).
pub const SHM_SEL: u64 = 0x0ac;
/// Length of the selected shared memory region, low 32 bits (read).
pub const SHM_LEN_LOW: u64 = 0x0b0;
/// Length of the selected shared memory region, high 32 bits (read).
pub const SHM_LEN_HIGH: u64 = 0x0b4;
/// Configuration atomicity value (read).
pub const CONFIG_GENERATION: u64 = 0x0fc;
/// Start of the device configuration space.
pub const CONFIG: u64 = 0x100;

/// `InterruptStatus`: the device used a buffer.
pub const INT_USED_BUFFER: u32 = 1 << 0;
/// `InterruptStatus`: the configuration space changed.
pub const INT_CONFIG_CHANGE: u32 = 1 << 1;

/// Status bits a driver can write (the device owns `DEVICE_NEEDS_RESET`).
const DRIVER_STATUS_BITS: u32 = 0xff & !DEVICE_NEEDS_RESET;

/// A virtio device behind a virtio-mmio version 2 register window.
pub struct VirtioMmio<D: VirtioDevice> {
    device: D,
    memory: GuestMemoryMmap,
    /// `InterruptStatus` and the line, shared with a worker thread.
    interrupt: Interrupt,
    queues: Vec<Queue>,
    status: u32,
    device_features_select: u32,
    driver_features_select: u32,
    /// Features as the driver wrote them.
    driver_features: u64,
    /// Features in force: set when `FEATURES_OK` is accepted.
    acked_features: u64,
    queue_select: u32,
}

impl<D: VirtioDevice> std::fmt::Debug for VirtioMmio<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtioMmio")
            .field("device", &self.device.name())
            .field("status", &self.status)
            .field("interrupt_status", &self.interrupt.status())
            .field("acked_features", &self.acked_features)
            .finish_non_exhaustive()
    }
}

impl<D: VirtioDevice> VirtioMmio<D> {
    /// `device` behind a register window; its buffers live in `memory` and its interrupt
    /// output is `irq` (PLIC source 1 + slot on the virt map).
    pub fn new(device: D, memory: GuestMemoryMmap, irq: IrqLine) -> Self {
        let queues = device
            .queue_max_sizes()
            .iter()
            .map(|&max_size| {
                Queue::new(max_size).unwrap_or_else(|error| {
                    // A device bug, not a guest one: the queue reads as absent (QueueNumMax 0).
                    tracing::error!(device = device.name(), max_size, %error, "bad queue size");
                    Queue::default()
                })
            })
            .collect();
        Self {
            device,
            memory,
            interrupt: Interrupt::new(irq),
            queues,
            status: 0,
            device_features_select: 0,
            driver_features_select: 0,
            driver_features: 0,
            acked_features: 0,
            queue_select: 0,
        }
    }

    /// The device behind the transport.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The device behind the transport, mutably (e.g. to flush a disk at exit).
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }

    /// Takes the device back out of the transport, e.g. to put it behind a new transport over
    /// new guest memory when the machine restarts (a snapshot disk keeps its overlay).
    pub fn into_device(self) -> D {
        self.device
    }

    /// Calls `waker` whenever the device raises its interrupt from a worker thread, so that a
    /// CPU thread sleeping in WFI wakes up at once.
    pub fn set_waker(&self, waker: Waker) {
        self.interrupt.set_waker(waker);
    }

    /// Every feature offered to the driver.
    pub fn offered_features(&self) -> u64 {
        self.device.features()
            | VIRTIO_F_VERSION_1
            | VIRTIO_F_RING_EVENT_IDX
            | VIRTIO_F_RING_INDIRECT_DESC
    }

    /// The features in force (0 until the driver's `FEATURES_OK` is accepted).
    pub fn acked_features(&self) -> u64 {
        self.acked_features
    }

    /// The device status register.
    pub fn status(&self) -> u32 {
        self.status
    }

    /// The `InterruptStatus` register.
    pub fn interrupt_status(&self) -> u32 {
        self.interrupt.status()
    }

    /// Writes the transport (status, features, selectors, interrupt status), every queue
    /// (size, ring addresses, ready, ring indices) and the device's own state for a snapshot.
    pub fn save_state(&self, out: &mut StateWriter) {
        out.u32(self.device.device_type());
        out.u32(self.status);
        out.u32(self.interrupt_status());
        out.u32(self.device_features_select);
        out.u32(self.driver_features_select);
        out.u64(self.driver_features);
        out.u64(self.acked_features);
        out.u32(self.queue_select);
        out.u32(self.queues.len() as u32);
        for queue in &self.queues {
            let state = queue.state();
            out.u16(state.max_size);
            out.u16(state.next_avail);
            out.u16(state.next_used);
            out.bool(state.event_idx_enabled);
            out.u16(state.size);
            out.bool(state.ready);
            out.u64(state.desc_table);
            out.u64(state.avail_ring);
            out.u64(state.used_ring);
        }
        self.device.save_state(out);
    }

    /// Restores what [`VirtioMmio::save_state`] wrote (for the same kind of device, with the
    /// same queues) and drives the interrupt line to match.
    pub fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        let device_type = input.u32("virtio device type")?;
        if device_type != self.device.device_type() {
            return Err(StateError::invalid(format!(
                "virtio slot holds device type {device_type}, the machine has a {} there",
                self.device.name()
            )));
        }
        self.status = input.u32("virtio status")?;
        let interrupt_status = input.u32("virtio interrupt status")?;
        self.device_features_select = input.u32("virtio device features select")?;
        self.driver_features_select = input.u32("virtio driver features select")?;
        self.driver_features = input.u64("virtio driver features")?;
        self.acked_features = input.u64("virtio acked features")?;
        self.queue_select = input.u32("virtio queue select")?;
        let count = input.u32("virtio queue count")?;
        if count as usize != self.queues.len() {
            return Err(StateError::invalid(format!(
                "{} has {} queues, the saved state {count}",
                self.device.name(),
                self.queues.len()
            )));
        }
        for (index, queue) in self.queues.iter_mut().enumerate() {
            let state = QueueState {
                max_size: input.u16("virtio queue max size")?,
                next_avail: input.u16("virtio queue next avail")?,
                next_used: input.u16("virtio queue next used")?,
                event_idx_enabled: input.bool("virtio queue event idx")?,
                size: input.u16("virtio queue size")?,
                ready: input.bool("virtio queue ready")?,
                desc_table: input.u64("virtio queue descriptor table")?,
                avail_ring: input.u64("virtio queue available ring")?,
                used_ring: input.u64("virtio queue used ring")?,
            };
            if state.max_size != queue.max_size() {
                return Err(StateError::invalid(format!(
                    "{} queue {index} holds {} entries at most, the saved state {}",
                    self.device.name(),
                    queue.max_size(),
                    state.max_size
                )));
            }
            *queue = Queue::try_from(state).map_err(|error| {
                StateError::invalid(format!("{} queue {index}: {error}", self.device.name()))
            })?;
        }
        self.device.restore_state(input)?;
        self.interrupt.set_status(interrupt_status);
        Ok(())
    }

    fn selected_queue(&self) -> Option<&Queue> {
        self.queues.get(self.queue_select as usize)
    }

    /// The selected queue if the driver may still configure it.
    fn configurable_queue(&mut self) -> Option<&mut Queue> {
        self.queues
            .get_mut(self.queue_select as usize)
            .filter(|queue| !queue.ready())
    }

    fn reset(&mut self) {
        tracing::debug!(device = self.device.name(), "virtio reset");
        self.status = 0;
        self.device_features_select = 0;
        self.driver_features_select = 0;
        self.driver_features = 0;
        self.acked_features = 0;
        self.queue_select = 0;
        self.queues.iter_mut().for_each(QueueT::reset);
        // A device with a worker takes its queues back before this returns.
        self.device.reset();
        self.interrupt.clear();
    }

    fn write_status(&mut self, value: u32) {
        if value == 0 {
            self.reset();
            return;
        }
        let mut status = value & DRIVER_STATUS_BITS;
        if status & FEATURES_OK != 0 && self.status & FEATURES_OK == 0 {
            let offered = self.offered_features();
            let unknown = self.driver_features & !offered;
            if self.driver_features & VIRTIO_F_VERSION_1 == 0 || unknown != 0 {
                tracing::warn!(
                    device = self.device.name(),
                    driver_features = self.driver_features,
                    offered,
                    "features refused (a legacy driver, or features that were not offered)"
                );
                status &= !FEATURES_OK;
            } else {
                self.acked_features = self.driver_features;
            }
        }
        let starting = status & DRIVER_OK != 0 && self.status & DRIVER_OK == 0;
        self.status = status | (self.status & DEVICE_NEEDS_RESET);
        if starting && self.device.has_worker() {
            let event_idx = self.acked_features & VIRTIO_F_RING_EVENT_IDX != 0;
            let queues = self
                .queues
                .iter()
                .map(|queue| {
                    // The state of a queue the transport accepted is valid; a queue that is
                    // not ready stays unused either way.
                    let mut copy = Queue::try_from(queue.state()).unwrap_or_default();
                    if copy.ready() {
                        copy.set_event_idx(event_idx);
                    }
                    copy
                })
                .collect();
            self.device.activate(ActiveQueues {
                memory: self.memory.clone(),
                queues,
                interrupt: self.interrupt.clone(),
            });
        }
    }

    fn write_driver_features(&mut self, value: u32) {
        if self.status & FEATURES_OK != 0 {
            return;
        }
        let shift = match self.driver_features_select {
            0 => 0,
            1 => 32,
            _ => return,
        };
        self.driver_features =
            (self.driver_features & !(0xffff_ffff << shift)) | (u64::from(value) << shift);
    }

    fn write_queue_ready(&mut self, value: u32) {
        let event_idx = self.acked_features & VIRTIO_F_RING_EVENT_IDX != 0;
        let memory = &self.memory;
        let Some(queue) = self.queues.get_mut(self.queue_select as usize) else {
            return;
        };
        match value {
            0 => queue.set_ready(false),
            1 if !queue.ready() => {
                queue.set_event_idx(event_idx);
                queue.set_ready(true);
                if !queue.is_valid(memory) {
                    // Served anyway: every ring access is checked and fails cleanly.
                    tracing::warn!(
                        device = self.device.name(),
                        queue = self.queue_select,
                        desc = queue.desc_table(),
                        avail = queue.avail_ring(),
                        used = queue.used_ring(),
                        "queue rings are not inside guest RAM"
                    );
                }
            }
            _ => {}
        }
    }

    /// Drains queue `index` and raises the interrupt if the driver wants one.
    fn notify(&mut self, index: u32) {
        if self.status & DRIVER_OK == 0 {
            tracing::debug!(
                device = self.device.name(),
                index,
                "notify before DRIVER_OK"
            );
            return;
        }
        let Ok(queue_index) = u16::try_from(index) else {
            return;
        };
        let Some(queue) = self.queues.get_mut(usize::from(queue_index)) else {
            return;
        };
        if !queue.ready() {
            return;
        }
        if self.device.has_worker() {
            self.device.kick(queue_index);
            return;
        }
        let memory = &self.memory;
        let device = &mut self.device;
        let name = device.name();
        let serve = |chain: Chain<'_>| device.process_chain(queue_index, chain, memory);
        if worker::drain_queue(queue, memory, name, serve) {
            self.interrupt.raise(INT_USED_BUFFER);
        }
    }

    fn read_register(&self, offset: u64) -> u32 {
        let queue = self.selected_queue();
        match offset {
            MAGIC_VALUE => MAGIC,
            VERSION => TRANSPORT_VERSION,
            DEVICE_ID => self.device.device_type(),
            VENDOR_ID => VENDOR,
            DEVICE_FEATURES => match self.device_features_select {
                0 => self.offered_features() as u32,
                1 => (self.offered_features() >> 32) as u32,
                _ => 0,
            },
            QUEUE_NUM_MAX => queue.map_or(0, |queue| u32::from(queue.max_size())),
            QUEUE_NUM => queue.map_or(0, |queue| u32::from(queue.size())),
            QUEUE_READY => queue.map_or(0, |queue| u32::from(queue.ready())),
            INTERRUPT_STATUS => self.interrupt.status(),
            STATUS => self.status,
            SHM_LEN_LOW | SHM_LEN_HIGH => u32::MAX,
            CONFIG_GENERATION => 0,
            _ => 0,
        }
    }

    fn write_register(&mut self, offset: u64, value: u32) {
        match offset {
            DEVICE_FEATURES_SEL => self.device_features_select = value,
            DRIVER_FEATURES => self.write_driver_features(value),
            DRIVER_FEATURES_SEL => self.driver_features_select = value,
            QUEUE_SEL => self.queue_select = value,
            QUEUE_NUM => {
                if let (Some(queue), Ok(size)) = (self.configurable_queue(), u16::try_from(value)) {
                    // An invalid size (0, not a power of two, above the maximum) is ignored.
                    queue.set_size(size);
                }
            }
            QUEUE_READY => self.write_queue_ready(value),
            QUEUE_NOTIFY => self.notify(value),
            INTERRUPT_ACK => self.interrupt.acknowledge(value),
            STATUS => self.write_status(value),
            QUEUE_DESC_LOW | QUEUE_DESC_HIGH | QUEUE_DRIVER_LOW | QUEUE_DRIVER_HIGH
            | QUEUE_DEVICE_LOW | QUEUE_DEVICE_HIGH => {
                let Some(queue) = self.configurable_queue() else {
                    return;
                };
                // A misaligned ring address is ignored by the queue (and logged).
                let (low, high) = if offset.is_multiple_of(8) {
                    (Some(value), None)
                } else {
                    (None, Some(value))
                };
                match offset & !7 {
                    QUEUE_DESC_LOW => queue.set_desc_table_address(low, high),
                    QUEUE_DRIVER_LOW => queue.set_avail_ring_address(low, high),
                    _ => queue.set_used_ring_address(low, high),
                }
            }
            _ => {}
        }
    }

    fn read_config(&self, offset: u64, size: u8) -> u64 {
        let config = self.device.config();
        let Ok(start) = usize::try_from(offset) else {
            return 0;
        };
        let mut bytes = [0u8; 8];
        for (i, byte) in bytes.iter_mut().take(usize::from(size.min(8))).enumerate() {
            *byte = start
                .checked_add(i)
                .and_then(|at| config.get(at))
                .copied()
                .unwrap_or(0);
        }
        u64::from_le_bytes(bytes)
    }
}

impl<D: VirtioDevice> MmioDevice for VirtioMmio<D> {
    fn read(&mut self, offset: u64, size: u8) -> u64 {
        if offset >= CONFIG {
            return self.read_config(offset - CONFIG, size);
        }
        if size != 4 || !offset.is_multiple_of(4) {
            return 0;
        }
        u64::from(self.read_register(offset))
    }

    fn write(&mut self, offset: u64, size: u8, value: u64) {
        if offset >= CONFIG || size != 4 || !offset.is_multiple_of(4) {
            return;
        }
        self.write_register(offset, value as u32);
    }

    fn name(&self) -> &'static str {
        self.device.name()
    }
}
