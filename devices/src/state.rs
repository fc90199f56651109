//! Device state for snapshots: a small, explicit binary encoding.
//!
//! Each device writes the registers and internal state a guest could observe with
//! [`StateWriter`] (`save_state`) and reads them back with [`StateReader`] (`restore_state`),
//! the way vm-superio's `SerialState` and firecracker's `persist` modules split state from the
//! device. Host resources (files, threads, interrupt wiring, the guest-memory view) are not
//! state: the machine builds them anew and the device's restore only fills in the values.
//!
//! The encoding is little endian with no self-description: the snapshot file's sections carry
//! the version and checksums, and each device reads exactly what it wrote. Every read is
//! bounds-checked and a value out of its range is a [`StateError`], never a panic, so a corrupt
//! file that slipped past the checksums still fails cleanly.

/// Why saved state could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The data ended before `what` was complete.
    #[error("saved state ends early (reading {what})")]
    Truncated {
        /// The field being read.
        what: &'static str,
    },
    /// A field holds a value its device cannot have.
    #[error("saved state is invalid: {what}")]
    Invalid {
        /// What is wrong, in words.
        what: String,
    },
}

impl StateError {
    /// An invalid-value error with a description.
    pub fn invalid(what: impl Into<String>) -> Self {
        Self::Invalid { what: what.into() }
    }
}

/// Appends state fields to a byte buffer.
#[derive(Debug, Default, Clone)]
pub struct StateWriter {
    bytes: Vec<u8>,
}

impl StateWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The encoded bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// One byte.
    pub fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    /// A flag as one byte (0 or 1).
    pub fn bool(&mut self, value: bool) {
        self.u8(u8::from(value));
    }

    /// 16 bits, little endian.
    pub fn u16(&mut self, value: u16) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// 32 bits, little endian.
    pub fn u32(&mut self, value: u32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// 64 bits, little endian.
    pub fn u64(&mut self, value: u64) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// A length-prefixed byte string (64-bit length).
    pub fn bytes(&mut self, value: &[u8]) {
        self.u64(value.len() as u64);
        self.bytes.extend_from_slice(value);
    }
}

/// Reads state fields back, in the order they were written.
#[derive(Debug, Clone)]
pub struct StateReader<'a> {
    rest: &'a [u8],
}

impl<'a> StateReader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Fails unless every byte was read (trailing data means a format mismatch).
    pub fn finish(&self, what: &'static str) -> Result<(), StateError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(StateError::invalid(format!(
                "{} unexpected bytes after {what}",
                self.rest.len()
            )))
        }
    }

    fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], StateError> {
        if self.rest.len() < len {
            return Err(StateError::Truncated { what });
        }
        let (head, tail) = self.rest.split_at(len);
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], StateError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    /// One byte.
    pub fn u8(&mut self, what: &'static str) -> Result<u8, StateError> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A flag written by [`StateWriter::bool`]; anything but 0 or 1 is invalid.
    pub fn bool(&mut self, what: &'static str) -> Result<bool, StateError> {
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(StateError::invalid(format!("{what} flag is {other}"))),
        }
    }

    /// 16 bits.
    pub fn u16(&mut self, what: &'static str) -> Result<u16, StateError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    /// 32 bits.
    pub fn u32(&mut self, what: &'static str) -> Result<u32, StateError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// 64 bits.
    pub fn u64(&mut self, what: &'static str) -> Result<u64, StateError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A length-prefixed byte string of at most `limit` bytes.
    pub fn bytes(&mut self, limit: usize, what: &'static str) -> Result<&'a [u8], StateError> {
        let len = self.u64(what)?;
        match usize::try_from(len) {
            Ok(len) if len <= limit => self.take(len, what),
            _ => Err(StateError::invalid(format!(
                "{what} is {len} bytes, more than the {limit} it can be"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_short_data_is_an_error() {
        let mut w = StateWriter::new();
        w.u8(7);
        w.bool(true);
        w.u16(0x1234);
        w.u32(0xdead_beef);
        w.u64(u64::MAX - 1);
        w.bytes(b"abc");
        let bytes = w.into_bytes();
        let mut r = StateReader::new(&bytes);
        assert_eq!(r.u8("a"), Ok(7));
        assert_eq!(r.bool("b"), Ok(true));
        assert_eq!(r.u16("c"), Ok(0x1234));
        assert_eq!(r.u32("d"), Ok(0xdead_beef));
        assert_eq!(r.u64("e"), Ok(u64::MAX - 1));
        assert_eq!(r.bytes(3, "f"), Ok(&b"abc"[..]));
        assert_eq!(r.finish("all"), Ok(()));
        for cut in 0..bytes.len() {
            let mut r = StateReader::new(&bytes[..cut]);
            let all = (|| {
                r.u8("a")?;
                r.bool("b")?;
                r.u16("c")?;
                r.u32("d")?;
                r.u64("e")?;
                r.bytes(3, "f").map(|_| ())
            })();
            assert!(
                matches!(all, Err(StateError::Truncated { .. })),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn out_of_range_values_are_invalid() {
        assert!(matches!(
            StateReader::new(&[2]).bool("flag"),
            Err(StateError::Invalid { .. })
        ));
        let mut w = StateWriter::new();
        w.bytes(&[0; 10]);
        let bytes = w.into_bytes();
        assert!(matches!(
            StateReader::new(&bytes).bytes(9, "fifo"),
            Err(StateError::Invalid { .. })
        ));
        assert!(StateReader::new(&[1]).finish("x").is_err());
    }
}
