//! Helpers for registers that a guest may reach with accesses narrower than the register.
//!
//! A 64-bit register such as CLINT `mtime` is read by an RV32 guest as two 32-bit halves; these
//! helpers extract or replace the accessed bytes. An access that is not naturally aligned, or
//! that does not fit inside the register, gets `None` (the device then reads 0 or ignores it).

/// Mask of the low `size` bytes, for the access sizes the bus issues (1, 2, 4, 8).
pub(crate) fn access_mask(size: u8) -> Option<u64> {
    match size {
        1 => Some(0xff),
        2 => Some(0xffff),
        4 => Some(0xffff_ffff),
        8 => Some(u64::MAX),
        _ => None,
    }
}

/// Bit shift and mask of an access of `size` bytes at `offset` inside a register of `width`
/// bytes that starts at `base`.
fn field(offset: u64, size: u8, base: u64, width: u64) -> Option<(u64, u64)> {
    let mask = access_mask(size)?;
    let relative = offset.checked_sub(base)?;
    let size = u64::from(size);
    let fits = relative < width && width - relative >= size;
    // Lazily: `relative * 8` overflows for offsets far outside the register.
    (fits && relative.is_multiple_of(size)).then(|| (relative * 8, mask))
}

/// The bytes of `register` (of `width` bytes at `base`) that an access of `size` at `offset`
/// reads.
pub(crate) fn read_field(
    register: u64,
    offset: u64,
    size: u8,
    base: u64,
    width: u64,
) -> Option<u64> {
    let (shift, mask) = field(offset, size, base, width)?;
    Some((register >> shift) & mask)
}

/// `register` with the bytes that an access of `size` at `offset` writes replaced by `value`.
pub(crate) fn write_field(
    register: u64,
    offset: u64,
    size: u8,
    base: u64,
    width: u64,
    value: u64,
) -> Option<u64> {
    let (shift, mask) = field(offset, size, base, width)?;
    Some((register & !(mask << shift)) | ((value & mask) << shift))
}

/// Whether an access is a naturally aligned 32-bit access (the only kind PLIC and RTC take).
pub(crate) fn is_word_access(offset: u64, size: u8) -> bool {
    size == 4 && offset.is_multiple_of(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REG: u64 = 0x1122_3344_5566_7788;

    #[test]
    fn reads_every_aligned_part() {
        assert_eq!(read_field(REG, 0x10, 8, 0x10, 8), Some(REG));
        assert_eq!(read_field(REG, 0x10, 4, 0x10, 8), Some(0x5566_7788));
        assert_eq!(read_field(REG, 0x14, 4, 0x10, 8), Some(0x1122_3344));
        assert_eq!(read_field(REG, 0x16, 2, 0x10, 8), Some(0x1122));
        assert_eq!(read_field(REG, 0x17, 1, 0x10, 8), Some(0x11));
        assert_eq!(read_field(REG, 0x11, 1, 0x10, 8), Some(0x77));
    }

    #[test]
    fn refuses_misaligned_outside_and_odd_sizes() {
        assert_eq!(read_field(REG, 0x12, 4, 0x10, 8), None);
        assert_eq!(read_field(REG, 0x18, 1, 0x10, 8), None);
        assert_eq!(read_field(REG, 0x0f, 1, 0x10, 8), None);
        assert_eq!(read_field(REG, 0x10, 3, 0x10, 8), None);
        assert_eq!(read_field(REG, 0x10, 8, 0x10, 4), None);
        assert_eq!(read_field(REG, u64::MAX, 8, 0x10, 8), None);
        assert_eq!(write_field(REG, 0x14, 8, 0x10, 8, 0), None);
    }

    #[test]
    fn writes_replace_only_the_accessed_bytes() {
        assert_eq!(
            write_field(REG, 0x14, 4, 0x10, 8, 0xdead_beef_aaaa_bbbb),
            Some(0xaaaa_bbbb_5566_7788)
        );
        assert_eq!(
            write_field(REG, 0x10, 4, 0x10, 8, 0),
            Some(0x1122_3344_0000_0000)
        );
        assert_eq!(
            write_field(REG, 0x11, 1, 0x10, 8, 0xff),
            Some(0x1122_3344_5566_ff88)
        );
        assert_eq!(write_field(REG, 0x10, 8, 0x10, 8, 7), Some(7));
    }

    #[test]
    fn word_access() {
        assert!(is_word_access(8, 4));
        assert!(!is_word_access(6, 4));
        assert!(!is_word_access(8, 8));
    }
}
