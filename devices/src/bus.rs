//! The MMIO device trait and the bus that routes physical addresses to devices.
//!
//! The bus owns its devices (`Box<dyn MmioDevice>`), keeps their address ranges sorted and finds
//! the device for an address with a binary search. Ranges are checked when a device is inserted:
//! an empty range, a range that wraps past the end of the address space, or a range that overlaps
//! another device is refused with a [`BusError`]. An access to an address no device claims, or one
//! that runs past the end of a device's range, returns `None`; the CPU turns that into an access
//! fault.
//!
//! Inserting a device returns a typed [`DeviceId`], through which the machine reaches the concrete
//! device later (to poll UART input, set CLINT time, read PLIC outputs, ...).
//!
//! The bus is meant for single-threaded use from the CPU thread; devices must be `Send` so a
//! machine built on one thread can be moved to the thread that runs it.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;

/// A device reached through memory-mapped registers.
///
/// `offset` is relative to the start of the device's range on the bus; `size` is the access
/// width in bytes (1, 2, 4 or 8). Implementations must accept any offset and any size without
/// panicking: an unsupported access reads as 0 and a write to it is ignored.
pub trait MmioDevice: Any + Send {
    /// Reads `size` bytes at `offset`; the value is zero-extended to 64 bits.
    fn read(&mut self, offset: u64, size: u8) -> u64;

    /// Writes the low `size` bytes of `value` at `offset`.
    fn write(&mut self, offset: u64, size: u8, value: u64);

    /// A short name for diagnostics and error messages.
    fn name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}

/// What stays in a device's slot after [`Bus::take`] (its range is unmapped, so it is never
/// reached).
struct Removed;

impl MmioDevice for Removed {
    fn read(&mut self, _offset: u64, _size: u8) -> u64 {
        0
    }
    fn write(&mut self, _offset: u64, _size: u8, _value: u64) {}
    fn name(&self) -> &'static str {
        "removed"
    }
}

/// Why a device could not be placed on the bus.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BusError {
    /// The requested range has length zero.
    #[error("device range at {base:#x} is empty")]
    EmptyRange {
        /// Start of the refused range.
        base: u64,
    },
    /// The requested range runs past the end of the 64-bit address space.
    #[error("device range {base:#x}+{len:#x} runs past the end of the address space")]
    RangeOverflow {
        /// Start of the refused range.
        base: u64,
        /// Length of the refused range.
        len: u64,
    },
    /// The requested range overlaps the range of a device already on the bus.
    #[error(
        "device range {base:#x}..={last:#x} overlaps {existing} at {existing_base:#x}..={existing_last:#x}"
    )]
    Overlap {
        /// Start of the refused range.
        base: u64,
        /// Last address of the refused range.
        last: u64,
        /// Name of the device already there.
        existing: &'static str,
        /// Start of the existing device's range.
        existing_base: u64,
        /// Last address of the existing device's range.
        existing_last: u64,
    },
}

/// A typed handle to a device on a [`Bus`], returned by [`Bus::insert`].
///
/// It is only an index: it stays valid for the life of the bus (a device taken off with
/// [`Bus::take`] leaves an empty slot behind).
pub struct DeviceId<T> {
    index: usize,
    device_type: PhantomData<fn() -> T>,
}

impl<T> DeviceId<T> {
    /// The device's position in insertion order.
    pub fn index(self) -> usize {
        self.index
    }
}

impl<T> Clone for DeviceId<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DeviceId<T> {}

impl<T> PartialEq for DeviceId<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl<T> Eq for DeviceId<T> {}

impl<T> fmt::Debug for DeviceId<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceId({})", self.index)
    }
}

/// One mapped range, as reported by [`Bus::regions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusRegion {
    /// First address of the range.
    pub base: u64,
    /// Length of the range in bytes (never 0).
    pub len: u64,
    /// The device's [`MmioDevice::name`].
    pub name: &'static str,
}

/// A mapped address range: `base..=last` belongs to `devices[device]`.
#[derive(Debug, Clone, Copy)]
struct MappedRange {
    base: u64,
    last: u64,
    device: usize,
}

/// Routes physical addresses to the devices mapped on them.
#[derive(Default)]
pub struct Bus {
    /// Sorted by `base`; never overlapping.
    ranges: Vec<MappedRange>,
    /// In insertion order; indexed by [`DeviceId`].
    devices: Vec<Box<dyn MmioDevice>>,
}

impl fmt::Debug for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.regions()).finish()
    }
}

/// Whether the bus issues accesses of this many bytes.
fn is_access_size(size: u8) -> bool {
    matches!(size, 1 | 2 | 4 | 8)
}

impl Bus {
    /// An empty bus: every address is unmapped.
    pub fn new() -> Self {
        Self::default()
    }

    /// Maps `device` on `base..base + len`.
    ///
    /// Fails when the range is empty, wraps past the end of the address space or overlaps a
    /// device already on the bus.
    pub fn insert<T: MmioDevice>(
        &mut self,
        base: u64,
        len: u64,
        device: T,
    ) -> Result<DeviceId<T>, BusError> {
        if len == 0 {
            return Err(BusError::EmptyRange { base });
        }
        let last = base
            .checked_add(len - 1)
            .ok_or(BusError::RangeOverflow { base, len })?;
        // Ranges are sorted and disjoint, so only the neighbours of the insertion point can
        // overlap the new range.
        let position = self.ranges.partition_point(|range| range.base < base);
        let before = position.checked_sub(1).and_then(|i| self.ranges.get(i));
        let after = self.ranges.get(position);
        for existing in [before, after].into_iter().flatten() {
            if existing.base <= last && base <= existing.last {
                return Err(BusError::Overlap {
                    base,
                    last,
                    existing: self.device_name(existing.device),
                    existing_base: existing.base,
                    existing_last: existing.last,
                });
            }
        }
        let index = self.devices.len();
        tracing::debug!(base, last, name = device.name(), "device mapped");
        self.devices.push(Box::new(device));
        self.ranges.insert(
            position,
            MappedRange {
                base,
                last,
                device: index,
            },
        );
        Ok(DeviceId {
            index,
            device_type: PhantomData,
        })
    }

    fn device_name(&self, index: usize) -> &'static str {
        self.devices.get(index).map_or("?", |device| device.name())
    }

    /// The range that contains `addr`, if any.
    fn range_of(&self, addr: u64) -> Option<MappedRange> {
        let after = self.ranges.partition_point(|range| range.base <= addr);
        let range = *self.ranges.get(after.checked_sub(1)?)?;
        (addr <= range.last).then_some(range)
    }

    /// The device index and offset for an access of `size` bytes at `addr`, if one device maps
    /// every byte of it.
    fn route(&self, addr: u64, size: u8) -> Option<(usize, u64)> {
        if !is_access_size(size) {
            return None;
        }
        let range = self.range_of(addr)?;
        let end = addr.checked_add(u64::from(size) - 1)?;
        (end <= range.last).then_some((range.device, addr - range.base))
    }

    /// The device mapped at `addr` and the offset of `addr` inside its range.
    pub fn find(&mut self, addr: u64) -> Option<(&mut dyn MmioDevice, u64)> {
        let range = self.range_of(addr)?;
        let device = self.devices.get_mut(range.device)?;
        Some((device.as_mut(), addr - range.base))
    }

    /// Reads `size` bytes at `addr`.
    ///
    /// `None` when the access is not a 1, 2, 4 or 8 byte access entirely inside one device's
    /// range: the CPU raises a load access fault.
    pub fn read(&mut self, addr: u64, size: u8) -> Option<u64> {
        let (index, offset) = self.route(addr, size)?;
        let device = self.devices.get_mut(index)?;
        Some(device.read(offset, size))
    }

    /// Writes the low `size` bytes of `value` at `addr`.
    ///
    /// `None` when the access is not a 1, 2, 4 or 8 byte access entirely inside one device's
    /// range: the CPU raises a store access fault.
    pub fn write(&mut self, addr: u64, size: u8, value: u64) -> Option<()> {
        let (index, offset) = self.route(addr, size)?;
        let device = self.devices.get_mut(index)?;
        device.write(offset, size, value);
        Some(())
    }

    /// Whether any device maps `addr`.
    pub fn is_mapped(&self, addr: u64) -> bool {
        self.range_of(addr).is_some()
    }

    /// The device behind `id`.
    ///
    /// `None` only for an id that came from another bus.
    pub fn device<T: MmioDevice>(&self, id: DeviceId<T>) -> Option<&T> {
        let device: &dyn Any = self.devices.get(id.index)?.as_ref();
        device.downcast_ref::<T>()
    }

    /// The device behind `id`, mutably.
    ///
    /// `None` only for an id that came from another bus.
    pub fn device_mut<T: MmioDevice>(&mut self, id: DeviceId<T>) -> Option<&mut T> {
        let device: &mut dyn Any = self.devices.get_mut(id.index)?.as_mut();
        device.downcast_mut::<T>()
    }

    /// Take `id`'s device off the bus and return it; its range becomes unmapped. Used to carry
    /// a device's host-side state (a disk and its snapshot overlay) across a guest reboot.
    pub fn take<T: MmioDevice>(&mut self, id: DeviceId<T>) -> Option<T> {
        let slot = self.devices.get_mut(id.index)?;
        if !(slot.as_ref() as &dyn Any).is::<T>() {
            return None;
        }
        let taken = std::mem::replace(slot, Box::new(Removed));
        self.ranges.retain(|range| range.device != id.index);
        let taken: Box<dyn Any> = taken;
        taken.downcast::<T>().ok().map(|device| *device)
    }

    /// The mapped ranges in address order (for the device tree and diagnostics).
    pub fn regions(&self) -> impl Iterator<Item = BusRegion> + '_ {
        self.ranges.iter().map(|range| BusRegion {
            base: range.base,
            len: range.last - range.base + 1,
            name: self.device_name(range.device),
        })
    }

    /// Number of devices on the bus.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Whether the bus has no devices.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Remembers the last access; reads return `offset + size` so routing is visible.
    #[derive(Default)]
    struct Probe {
        last_write: Option<(u64, u8, u64)>,
    }

    impl MmioDevice for Probe {
        fn read(&mut self, offset: u64, size: u8) -> u64 {
            offset * 16 + u64::from(size)
        }

        fn write(&mut self, offset: u64, size: u8, value: u64) {
            self.last_write = Some((offset, size, value));
        }

        fn name(&self) -> &'static str {
            "probe"
        }
    }

    struct Other;

    impl MmioDevice for Other {
        fn read(&mut self, _offset: u64, _size: u8) -> u64 {
            0xaa
        }

        fn write(&mut self, _offset: u64, _size: u8, _value: u64) {}
    }

    #[test]
    fn refuses_empty_and_wrapping_ranges() {
        let mut bus = Bus::new();
        assert_eq!(
            bus.insert(0x10, 0, Probe::default()),
            Err(BusError::EmptyRange { base: 0x10 })
        );
        assert_eq!(
            bus.insert(u64::MAX, 2, Probe::default()),
            Err(BusError::RangeOverflow {
                base: u64::MAX,
                len: 2
            })
        );
        // The very last byte of the address space is a valid range.
        assert!(bus.insert(u64::MAX, 1, Probe::default()).is_ok());
        assert_eq!(bus.read(u64::MAX, 1), Some(1));
        assert_eq!(bus.read(u64::MAX, 2), None);
    }

    #[test]
    fn refuses_every_kind_of_overlap() {
        let mut bus = Bus::new();
        bus.insert(0x100, 0x100, Probe::default()).unwrap();
        for (base, len) in [
            (0x100, 0x100),  // same
            (0x0ff, 0x2),    // straddles the start
            (0x1ff, 0x10),   // straddles the end
            (0x180, 0x1),    // inside
            (0x000, 0x1000), // covers
        ] {
            let err = bus.insert(base, len, Probe::default()).unwrap_err();
            assert!(
                matches!(
                    err,
                    BusError::Overlap {
                        existing: "probe",
                        existing_base: 0x100,
                        existing_last: 0x1ff,
                        ..
                    }
                ),
                "{base:#x}+{len:#x}: {err:?}"
            );
        }
        // Touching neighbours are fine on both sides.
        bus.insert(0x200, 0x10, Probe::default()).unwrap();
        bus.insert(0x0f0, 0x10, Probe::default()).unwrap();
        // Something between two devices that touches neither is fine.
        bus.insert(0x300, 0x10, Probe::default()).unwrap();
        assert!(bus.insert(0x20f, 0xf2, Probe::default()).is_err());
        bus.insert(0x210, 0xf0, Probe::default()).unwrap();
        assert_eq!(bus.len(), 5);
        let regions: Vec<_> = bus.regions().map(|r| (r.base, r.len)).collect();
        assert_eq!(
            regions,
            [
                (0xf0, 0x10),
                (0x100, 0x100),
                (0x200, 0x10),
                (0x210, 0xf0),
                (0x300, 0x10)
            ]
        );
    }

    #[test]
    fn overlap_error_message_names_both_ranges() {
        let mut bus = Bus::new();
        bus.insert(0x1000, 0x100, Probe::default()).unwrap();
        let message = bus.insert(0x1080, 0x100, Other).unwrap_err().to_string();
        assert_eq!(
            message,
            "device range 0x1080..=0x117f overlaps probe at 0x1000..=0x10ff"
        );
    }

    #[test]
    fn routes_to_the_right_device_and_offset() {
        let mut bus = Bus::new();
        let probe = bus.insert(0x1000, 0x100, Probe::default()).unwrap();
        let other = bus.insert(0x2000, 0x100, Other).unwrap();
        assert_eq!(bus.read(0x1000, 4), Some(4));
        assert_eq!(bus.read(0x1010, 1), Some(0x101));
        assert_eq!(bus.read(0x10fc, 4), Some(0xfc4));
        assert_eq!(bus.read(0x2004, 4), Some(0xaa));
        assert_eq!(bus.write(0x1008, 2, 0xbeef), Some(()));
        assert_eq!(bus.device(probe).unwrap().last_write, Some((8, 2, 0xbeef)));
        assert!(bus.device_mut(other).is_some());
        let (device, offset) = bus.find(0x2010).unwrap();
        assert_eq!(offset, 0x10);
        assert_eq!(device.read(offset, 1), 0xaa);
    }

    #[test]
    fn unmapped_and_straddling_accesses_are_refused() {
        let mut bus = Bus::new();
        let probe = bus.insert(0x1000, 0x100, Probe::default()).unwrap();
        bus.insert(0x1100, 0x100, Other).unwrap();
        assert_eq!(bus.read(0xfff, 1), None);
        assert_eq!(bus.read(0x1200, 1), None);
        assert_eq!(bus.read(0, 8), None);
        assert_eq!(bus.read(u64::MAX, 8), None);
        // Crosses from one device into the next: no device owns every byte.
        assert_eq!(bus.read(0x10fe, 4), None);
        assert_eq!(bus.write(0x10fe, 4, 1), None);
        assert_eq!(bus.device(probe).unwrap().last_write, None);
        // Sizes the CPU never issues.
        for size in [0, 3, 5, 16, 255] {
            assert_eq!(bus.read(0x1000, size), None);
            assert_eq!(bus.write(0x1000, size, 0), None);
        }
        assert!(!bus.is_mapped(0x1200));
        assert!(bus.is_mapped(0x11ff));
        assert!(bus.find(0x0).is_none());
    }

    #[test]
    fn device_id_from_another_bus_does_not_alias_a_wrong_type() {
        let mut first = Bus::new();
        let probe = first.insert(0, 0x10, Probe::default()).unwrap();
        let mut second = Bus::new();
        second.insert(0, 0x10, Other).unwrap();
        // Index 0 holds an `Other` here: the typed lookup refuses it.
        assert!(second.device(probe).is_none());
        assert!(second.device_mut(probe).is_none());
        let empty = Bus::new();
        assert!(empty.device(probe).is_none());
        assert!(empty.is_empty());
    }

    #[test]
    fn many_devices_lookup_matches_linear_scan() {
        let mut bus = Bus::new();
        // Interleave insertion order to exercise the sorted insert.
        for i in [5u64, 1, 7, 3, 0, 6, 2, 4] {
            bus.insert(0x1000 * i + 0x100, 0x800, Probe::default())
                .unwrap();
        }
        for addr in (0..0x9000).step_by(0x40) {
            let expected = (0..8u64)
                .find(|i| (0x1000 * i + 0x100..0x1000 * i + 0x900).contains(&addr))
                .map(|i| addr - (0x1000 * i + 0x100));
            assert_eq!(
                bus.find(addr).map(|(_, offset)| offset),
                expected,
                "{addr:#x}"
            );
        }
    }

    #[test]
    fn take_returns_the_device_and_unmaps_it() {
        let mut bus = Bus::new();
        let a = bus.insert(0x1000, 0x100, Probe::default()).expect("insert");
        let b = bus.insert(0x2000, 0x100, Other).expect("insert");
        bus.write(0x1004, 4, 0x1234_5678);
        let taken = bus.take(a).expect("device taken");
        assert_eq!(taken.last_write, Some((4, 4, 0x1234_5678)));
        assert!(!bus.is_mapped(0x1004));
        assert_eq!(bus.read(0x1004, 4), None);
        assert_eq!(bus.read(0x2004, 4), Some(0xaa));
        assert!(bus.take(a).is_none(), "taken twice");
        assert!(bus.device(b).is_some());
        // The range is free again.
        bus.insert(0x1000, 0x100, Probe::default())
            .expect("reinsert");
    }
}
