//! virtio devices on the virtio-mmio transport.
//!
//! A device is split in two, as in the virtio specification:
//!
//! - the transport, [`VirtioMmio`]: the virtio-mmio **version 2** (modern) register window that
//!   Linux's `virtio_mmio` driver probes: feature negotiation, device status, queue setup,
//!   notifications, the interrupt status and the device's configuration space;
//! - the device behind it, a [`VirtioDevice`]: [`VirtioBlk`] (device id 2) on a [`Disk`], or
//!   [`VirtioRng`] (device id 4).
//!
//! Queues are split virtqueues handled by the `virtio-queue` crate over `vm-memory` guest memory
//! ([`GuestMemoryMmap`], built over the machine's RAM mapping with [`guest_memory_from_raw`]).
//! Every guest address in a ring or descriptor goes through `vm-memory`'s checked accessors, so
//! an address outside RAM fails that request, never the VM.
//!
//! Requests are handled synchronously: a write to `QueueNotify` processes every available
//! descriptor chain of that queue before the write returns, and raises the interrupt line if the
//! driver asked to be interrupted. The CPU thread does this between guest instructions.
//!
//! # Example
//!
//! ```no_run
//! use rv32vm_devices::virtio::{self, Disk, DiskOptions, VirtioBlk, VirtioMmio};
//! use rv32vm_devices::{Bus, IrqLine};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let (ram_host_ptr, ram_size) = (std::ptr::null_mut::<u8>(), 0usize);
//! // SAFETY (of the example): the machine's RAM mapping outlives the bus and its devices.
//! let memory = unsafe { virtio::guest_memory_from_raw(ram_host_ptr, 0x8000_0000, ram_size)? };
//! let disk = Disk::open("rootfs.img".as_ref(), DiskOptions::default())?;
//! let mut bus = Bus::new();
//! let blk = bus.insert(
//!     0x1000_1000,
//!     virtio::mmio::MMIO_SIZE,
//!     VirtioMmio::new(VirtioBlk::new(disk), memory, IrqLine::disconnected()),
//! )?;
//! // ... run the guest; at exit:
//! bus.device_mut(blk).unwrap().device_mut().flush()?;
//! # Ok(())
//! # }
//! ```

pub mod blk;
mod chain;
pub mod disk;
pub mod empty;
pub mod fs9p;
pub mod mmio;
pub mod net;
pub mod rng;
pub mod worker;

#[cfg(test)]
mod test_driver;
#[cfg(test)]
mod tests;

use virtio_queue::DescriptorChain;
use vm_memory::bitmap::AtomicBitmap;
use vm_memory::mmap::{MmapRegionBuilder, MmapRegionError};
use vm_memory::{GuestAddress, GuestMemoryBackend, GuestRegionCollectionError, GuestRegionMmap};

pub use blk::VirtioBlk;
pub use disk::{Disk, DiskError, DiskOptions};
pub use fs9p::{ShareError, ShareOptions, Virtio9p};
pub use mmio::VirtioMmio;
pub use net::{HostForward, NetError, NetOptions, VirtioNet};
pub use rng::VirtioRng;
pub use worker::{ActiveQueues, Interrupt, Waker};
/// Guest memory as the virtio devices see it: the machine's RAM, one `vm-memory` region.
/// Guest RAM as the devices see it: one region over the machine's RAM mapping, with a bitmap of
/// the pages devices wrote (DMA), so that the machine can tell which pages of code a device
/// changed ([`take_dma_written_pages`]).
pub type GuestMemoryMmap = vm_memory::GuestMemoryMmap<AtomicBitmap>;

/// Guest page size the DMA bitmap tracks.
pub const DMA_PAGE_SIZE: usize = 4096;

/// The descriptor chains handed to [`VirtioDevice::process_chain`].
pub type Chain<'a> = DescriptorChain<&'a GuestMemoryMmap>;

/// virtio device type of a block device.
pub const VIRTIO_ID_BLOCK: u32 = 2;
/// virtio device type of an entropy source.
pub const VIRTIO_ID_RNG: u32 = 4;

/// Feature: descriptors may point to indirect descriptor tables.
pub const VIRTIO_F_RING_INDIRECT_DESC: u64 = 1 << 28;
/// Feature: `used_event` / `avail_event` notification suppression.
pub const VIRTIO_F_RING_EVENT_IDX: u64 = 1 << 29;
/// Feature: the device follows virtio 1.x (required by virtio-mmio version 2).
pub const VIRTIO_F_VERSION_1: u64 = 1 << 32;

/// Device status bits (virtio 1.2 §2.1), as written to and read from the `Status` register.
pub mod status {
    /// The guest found the device.
    pub const ACKNOWLEDGE: u32 = 1;
    /// The guest has a driver for the device.
    pub const DRIVER: u32 = 2;
    /// The driver is set up; the device may use its queues.
    pub const DRIVER_OK: u32 = 4;
    /// Feature negotiation is complete (cleared again by the device if it refuses the features).
    pub const FEATURES_OK: u32 = 8;
    /// The device hit an error it cannot recover from without a reset.
    pub const DEVICE_NEEDS_RESET: u32 = 0x40;
    /// The driver gave up on the device.
    pub const FAILED: u32 = 0x80;
}

/// A virtio device type behind a [`VirtioMmio`] transport.
///
/// The transport owns the queues, the negotiated features and the interrupt; the device only
/// describes itself and serves descriptor chains.
pub trait VirtioDevice: Send + 'static {
    /// The virtio device type ([`VIRTIO_ID_BLOCK`], [`VIRTIO_ID_RNG`], ...).
    fn device_type(&self) -> u32;

    /// A short name for diagnostics (also the bus name of the transport).
    fn name(&self) -> &'static str;

    /// Device-specific feature bits offered to the driver. The transport adds the ring and
    /// version features it implements itself ([`VIRTIO_F_VERSION_1`], [`VIRTIO_F_RING_EVENT_IDX`],
    /// [`VIRTIO_F_RING_INDIRECT_DESC`]).
    fn features(&self) -> u64;

    /// The maximum size of each queue (a power of two); the slice's length is the queue count.
    fn queue_max_sizes(&self) -> &[u16];

    /// The device configuration space, little-endian, as the driver reads it from offset 0x100.
    fn config(&self) -> &[u8];

    /// Serves one descriptor chain popped from queue `queue_index` (its buffers live in
    /// `memory`) and returns the number of bytes written into the chain's device-writable
    /// buffers (the used ring's `len`).
    ///
    /// A malformed chain fails only this request; the transport puts it on the used ring
    /// whatever happens. Not called for a device with a worker ([`Self::has_worker`]).
    fn process_chain(
        &mut self,
        queue_index: u16,
        chain: Chain<'_>,
        memory: &GuestMemoryMmap,
    ) -> u32 {
        let _ = (queue_index, chain, memory);
        tracing::error!(
            device = self.name(),
            "process_chain on a device with a worker"
        );
        0
    }

    /// The driver reset the device (status 0). Persistent state such as disk contents stays.
    /// A device with a worker takes its queues back before returning.
    fn reset(&mut self) {}

    /// Whether the device serves its queues on a worker thread ([`worker`]) instead of chain by
    /// chain on the CPU thread ([`Self::process_chain`]).
    fn has_worker(&self) -> bool {
        false
    }

    /// A device with a worker: the driver set `DRIVER_OK`; serve `queues` from now on.
    fn activate(&mut self, queues: ActiveQueues) {
        let _ = queues;
    }

    /// A device with a worker: the driver notified queue `queue_index`.
    fn kick(&mut self, queue_index: u16) {
        let _ = queue_index;
    }

    /// Writes the device's own state (beyond the transport's) for a snapshot. Backing data
    /// (a disk's contents) is the machine's to save; the default is a device with no state.
    fn save_state(&self, _out: &mut crate::state::StateWriter) {}

    /// Restores what [`VirtioDevice::save_state`] wrote, refusing state this device cannot
    /// take (for example a disk of another size).
    fn restore_state(
        &mut self,
        _input: &mut crate::state::StateReader<'_>,
    ) -> Result<(), crate::state::StateError> {
        Ok(())
    }
}

/// Why the machine's RAM could not be described as [`GuestMemoryMmap`].
#[derive(Debug, thiserror::Error)]
pub enum GuestMemoryMapError {
    /// The RAM is empty or `base + size` runs past the end of the address space.
    #[error("guest RAM {base:#x}+{size:#x} is empty or wraps around the address space")]
    BadRange {
        /// Guest physical base address.
        base: u64,
        /// Size in bytes.
        size: usize,
    },
    /// `vm-memory` refused the host mapping (it must be page-aligned).
    #[error("guest RAM host mapping refused: {0}")]
    Region(#[from] MmapRegionError),
    /// `vm-memory` refused the region list.
    #[error("guest RAM region refused: {0}")]
    Collection(#[from] GuestRegionCollectionError),
}

/// Call `f` with the offset into RAM of every page a device wrote since the last call (the
/// first page of the region is offset 0), and forget them.
pub fn take_dma_written_pages(memory: &GuestMemoryMmap, mut f: impl FnMut(usize)) {
    for region in memory.iter() {
        let words = region.bitmap().get_and_reset();
        for (w, word) in words.into_iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                f((w * 64 + bit) * DMA_PAGE_SIZE);
            }
        }
    }
}

/// Describes the machine's RAM, `size` bytes mapped at `host` and seen by the guest at physical
/// address `base`, as guest memory for the virtio devices.
///
/// The result (and every clone of it, which is cheap: the region is shared) does not own the
/// mapping; dropping it leaves the mapping alone.
///
/// # Safety
///
/// `host..host + size` must be one readable and writable host mapping (page-aligned, as `mmap`
/// returns it) that stays mapped for as long as the returned object or any clone of it, or any
/// device holding one, is alive. The guest CPU may write the same bytes concurrently only in
/// the way a device and a guest share DMA memory: devices use volatile accesses.
pub unsafe fn guest_memory_from_raw(
    host: *mut u8,
    base: u64,
    size: usize,
) -> Result<GuestMemoryMmap, GuestMemoryMapError> {
    let bad_range = GuestMemoryMapError::BadRange { base, size };
    if size == 0 || host.is_null() {
        return Err(bad_range);
    }
    const PAGE: std::num::NonZeroUsize = match std::num::NonZeroUsize::new(DMA_PAGE_SIZE) {
        Some(p) => p,
        None => panic!("DMA_PAGE_SIZE is not zero"),
    };
    let bitmap = AtomicBitmap::new(size, PAGE);
    // SAFETY: the caller guarantees that `host..host + size` is one live mapping that outlives
    // every user of the region built here.
    let builder =
        unsafe { MmapRegionBuilder::new_with_bitmap(size, bitmap).with_raw_mmap_pointer(host) };
    let region = builder
        .with_mmap_prot(libc::PROT_READ | libc::PROT_WRITE)
        .with_mmap_flags(libc::MAP_ANONYMOUS | libc::MAP_PRIVATE)
        .build()?;
    let region = GuestRegionMmap::new(region, GuestAddress(base)).ok_or(bad_range)?;
    Ok(GuestMemoryMmap::from_regions(vec![region])?)
}
