//! A virtio-mmio slot with no device behind it: device ID 0, which drivers take to mean "a
//! placeholder, nothing to probe". QEMU's virt machine backs all eight of its slots like this,
//! so a device tree that lists every slot (one dumped from QEMU, say) boots here too: Linux
//! reads the magic, version and device ID of each listed slot and moves on from empty ones.

use super::mmio::{DEVICE_ID, MAGIC, MAGIC_VALUE, TRANSPORT_VERSION, VENDOR, VENDOR_ID, VERSION};
use crate::bus::MmioDevice;

/// An empty virtio-mmio slot (see the module documentation).
#[derive(Debug, Default)]
pub struct EmptySlot;

impl MmioDevice for EmptySlot {
    fn read(&mut self, offset: u64, size: u8) -> u64 {
        if size != 4 {
            return 0;
        }
        match offset {
            MAGIC_VALUE => MAGIC as u64,
            VERSION => TRANSPORT_VERSION as u64,
            DEVICE_ID => 0,
            VENDOR_ID => VENDOR as u64,
            _ => 0,
        }
    }

    fn write(&mut self, _offset: u64, _size: u8, _value: u64) {}

    fn name(&self) -> &'static str {
        "virtio-mmio (empty slot)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_slot_is_a_virtio_transport_with_device_id_0() {
        let mut slot = EmptySlot;
        assert_eq!(slot.read(MAGIC_VALUE, 4), 0x7472_6976);
        assert_eq!(slot.read(VERSION, 4), 2);
        assert_eq!(slot.read(DEVICE_ID, 4), 0);
        slot.write(0x070, 4, 0xff); // STATUS: ignored
        assert_eq!(slot.read(0x070, 4), 0);
        assert_eq!(slot.read(MAGIC_VALUE, 1), 0);
    }
}
