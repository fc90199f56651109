//! Hash maps and sets keyed by addresses and indices (guest pcs, host addresses, block
//! indices), on the engine's hot paths: a multiply-rotate hash instead of the standard
//! library's SipHash, which is built to resist chosen keys and showed as 2-5% of a Linux boot.
//! The keys come from the guest, but a guest that makes its own blocks collide only slows
//! itself.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hash map keyed by an address or index.
pub type AddrMap<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;
/// A hash set of addresses or indices.
pub type AddrSet<K> = HashSet<K, BuildHasherDefault<AddrHasher>>;

/// FxHash's step (multiply by a constant with well-spread bits) over each integer written.
/// `finish` folds the product's well-mixed high bits into the low ones: hashbrown picks buckets
/// with the low bits, and page-aligned keys would otherwise all land in one.
#[derive(Clone, Copy, Default)]
pub struct AddrHasher(u64);

const SEED: u64 = 0xf135_7aea_2e62_a9c5;

impl Hasher for AddrHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ self.0 >> 32 ^ self.0 >> 45
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(SEED);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Distinct buckets of 256 that 256 keys of the form `base + i * step` fall in (random
    /// hashes use about 162).
    fn buckets_used(base: usize, step: usize) -> usize {
        let build = BuildHasherDefault::<AddrHasher>::default();
        let buckets: HashSet<u64> = (0..256usize)
            .map(|i| build.hash_one(base + i * step) & 255)
            .collect();
        buckets.len()
    }

    #[test]
    fn pages_pcs_and_indices_spread_over_the_low_bits() {
        for (base, step) in [
            (0x7f00_0000_0000, 4096),
            (0x1_0000, 4),
            (0xc000_0000, 2),
            (0, 1),
        ] {
            let used = buckets_used(base, step);
            assert!(
                used > 150,
                "base {base:#x} step {step}: {used} of 256 buckets used"
            );
        }
    }
}
