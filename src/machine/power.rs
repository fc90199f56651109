//! The machine at power-on: the bytes the loader puts in RAM (kernel, initrd, device tree,
//! firmware) and the hart's first state. Built once by `boot`, applied at start-up and on
//! every guest reset, and saved in snapshots, so a restored guest can reboot as well.

use rv32vm_devices::{StateError, StateReader, StateWriter};

use super::ram::GuestRam;
use crate::cpu::{Hart, HartState};

/// The most bytes one power-on image may hold in a snapshot (RAM is at most 2 GiB).
const MAX_IMAGE_BYTES: usize = 2 << 30;

/// What power-on puts in RAM and where the hart starts.
#[derive(Clone, Debug)]
pub struct PowerOn {
    /// (guest physical address, bytes), written in order.
    pub writes: Vec<(u64, Vec<u8>)>,
    /// The hart at its first instruction.
    pub hart: HartState,
}

/// A power-on write that does not fit in RAM: (what, its size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoesNotFit {
    pub address: u64,
    pub size: usize,
}

impl PowerOn {
    /// Put the images in `ram` (fresh, all zeros) and return the hart at its first
    /// instruction.
    pub fn apply(&self, ram: &mut GuestRam) -> Result<Hart, DoesNotFit> {
        for (address, bytes) in &self.writes {
            if !ram.write(*address, bytes) {
                return Err(DoesNotFit {
                    address: *address,
                    size: bytes.len(),
                });
            }
        }
        let mut hart = Hart::new();
        hart.restore(&self.hart);
        // The machine clock starts at 0 at every power-on.
        hart.set_time(0);
        Ok(hart)
    }

    /// The image for a snapshot: the writes LZ4-compressed (kernels compress well), then the
    /// hart.
    pub fn save(&self, out: &mut StateWriter) {
        let mut writes = StateWriter::new();
        writes.u32(self.writes.len() as u32);
        for (address, bytes) in &self.writes {
            writes.u64(*address);
            writes.bytes(bytes);
        }
        let plain = writes.into_bytes();
        out.u64(plain.len() as u64);
        out.bytes(&lz4_flex::block::compress(&plain));
        self.hart.save(out);
    }

    /// Read what [`PowerOn::save`] wrote, checking every length.
    pub fn load(input: &mut StateReader) -> Result<PowerOn, StateError> {
        let plain_len = input.u64("power-on image size")?;
        if plain_len > MAX_IMAGE_BYTES as u64 {
            return Err(StateError::invalid(format!(
                "power-on image of {plain_len} bytes"
            )));
        }
        let compressed = input.bytes(MAX_IMAGE_BYTES, "power-on image")?;
        let mut plain = vec![0u8; plain_len as usize];
        match lz4_flex::block::decompress_into(compressed, &mut plain) {
            Ok(n) if n == plain.len() => {}
            _ => return Err(StateError::invalid("power-on image does not decompress")),
        }
        let mut reader = StateReader::new(&plain);
        let count = reader.u32("power-on writes")?;
        let mut writes = Vec::new();
        for _ in 0..count {
            let address = reader.u64("power-on write address")?;
            let bytes = reader.bytes(MAX_IMAGE_BYTES, "power-on write")?;
            writes.push((address, bytes.to_vec()));
        }
        reader.finish("the power-on image")?;
        let hart = HartState::load(input)?;
        Ok(PowerOn { writes, hart })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PowerOn {
        let mut hart = Hart::new();
        hart.pc = 0x8020_0000;
        hart.x[11] = 0x8700_0000;
        PowerOn {
            writes: vec![
                (0x8020_0000, vec![0x13; 5000]),
                (0x8700_0000, b"\xd0\x0d\xfe\xed".to_vec()),
            ],
            hart: hart.state(),
        }
    }

    #[test]
    fn round_trips_and_applies() {
        let image = sample();
        let mut out = StateWriter::new();
        image.save(&mut out);
        let bytes = out.into_bytes();
        let mut input = StateReader::new(&bytes);
        let back = PowerOn::load(&mut input).expect("load");
        input.finish("test").expect("all read");
        assert_eq!(back.writes, image.writes);
        assert_eq!(back.hart, image.hart);
        let mut ram = GuestRam::new(0x8000_0000, 128 << 20).expect("ram");
        let hart = back.apply(&mut ram).expect("fits");
        assert_eq!(hart.pc, 0x8020_0000);
        assert_eq!(hart.x[11], 0x8700_0000);
    }

    #[test]
    fn truncated_or_corrupt_images_are_errors() {
        let mut out = StateWriter::new();
        sample().save(&mut out);
        let bytes = out.into_bytes();
        for len in 0..bytes.len() {
            let mut input = StateReader::new(&bytes[..len]);
            assert!(PowerOn::load(&mut input)
                .and_then(|_| input.finish("t"))
                .is_err());
        }
        let mut flipped = bytes.clone();
        flipped[0] ^= 0x01; // the uncompressed size no longer matches
        let mut input = StateReader::new(&flipped);
        assert!(PowerOn::load(&mut input)
            .and_then(|_| input.finish("t"))
            .is_err());
    }

    #[test]
    fn writes_outside_ram_are_refused() {
        let mut image = sample();
        image.writes.push((0x9000_0000, vec![1; 16]));
        let mut ram = GuestRam::new(0x8000_0000, 128 << 20).expect("ram");
        assert_eq!(
            image.apply(&mut ram).err(),
            Some(DoesNotFit {
                address: 0x9000_0000,
                size: 16
            })
        );
    }
}
