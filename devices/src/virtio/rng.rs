//! virtio-rng (device id 4): an entropy source for the guest (Linux's `virtio-rng` hw_random).
//!
//! One queue; each descriptor chain's device-writable buffers are filled with bytes from the
//! host's `getrandom(2)` (or, in a deterministic run, from a generator seeded by the user:
//! [`VirtioRng::seeded`]), at most [`MAX_REQUEST_BYTES`] per chain. Driver-readable buffers
//! are skipped. A chain with a buffer outside RAM gets nothing (used length 0).

use std::io;

use super::chain::ChainBuffers;
use super::{Chain, GuestMemoryMmap, VirtioDevice, VIRTIO_ID_RNG};

/// Size of the request queue.
pub const QUEUE_SIZE: u16 = 64;
/// The most bytes one request receives.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// A virtio entropy device.
#[derive(Debug)]
pub struct VirtioRng {
    queue_sizes: [u16; 1],
    buffer: Vec<u8>,
    source: Source,
}

/// Where the bytes come from.
#[derive(Debug)]
enum Source {
    /// The host's `getrandom(2)`.
    Host,
    /// A seeded generator: the same seed gives the same bytes, request after request.
    Seeded(SeededRng),
}

/// xoshiro256** seeded through splitmix64: small, fast, and the same on every host. Not
/// cryptographic, and not meant to be: a deterministic run wants repeatable "entropy".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeededRng {
    state: [u64; 4],
}

impl SeededRng {
    /// The generator for `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            // splitmix64 (Steele, Lea, Flood), as xoshiro's authors recommend for seeding.
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Self {
            state: [next(), next(), next(), next()],
        }
    }

    /// The generator's state (for a snapshot).
    pub fn state(&self) -> [u64; 4] {
        self.state
    }

    /// A generator that goes on from `state` (from [`SeededRng::state`]).
    pub fn from_state(state: [u64; 4]) -> Self {
        Self { state }
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Fills `buf` with the next bytes (little-endian words; a partial last word's remaining
    /// bytes are dropped).
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let word = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

impl Default for VirtioRng {
    fn default() -> Self {
        Self::new()
    }
}

impl VirtioRng {
    /// An entropy device fed by the host's `getrandom`.
    pub fn new() -> Self {
        Self {
            queue_sizes: [QUEUE_SIZE],
            buffer: Vec::new(),
            source: Source::Host,
        }
    }

    /// An entropy device fed by a generator seeded with `seed` (a deterministic run): the
    /// guest gets the same bytes for the same seed and the same requests.
    pub fn seeded(seed: u64) -> Self {
        Self {
            source: Source::Seeded(SeededRng::new(seed)),
            ..Self::new()
        }
    }

    /// Whether the bytes come from a seeded generator.
    pub fn is_seeded(&self) -> bool {
        matches!(self.source, Source::Seeded(_))
    }

    /// The seeded generator's state (`None` on host entropy), for a snapshot.
    pub fn seeded_state(&self) -> Option<[u64; 4]> {
        match &self.source {
            Source::Seeded(rng) => Some(rng.state()),
            Source::Host => None,
        }
    }

    /// Draw from a seeded generator that goes on from `state` (a restored snapshot).
    pub fn set_seeded_state(&mut self, state: [u64; 4]) {
        self.source = Source::Seeded(SeededRng::from_state(state));
    }
}

/// Fills `buf` from the host's random source.
fn fill_random(buf: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a live, exclusively borrowed buffer of `rest.len()` bytes, which is
        // all getrandom writes.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if got < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        done += got as usize;
    }
    Ok(())
}

impl VirtioDevice for VirtioRng {
    fn device_type(&self) -> u32 {
        VIRTIO_ID_RNG
    }

    fn name(&self) -> &'static str {
        "virtio-rng"
    }

    fn features(&self) -> u64 {
        0
    }

    fn queue_max_sizes(&self) -> &[u16] {
        &self.queue_sizes
    }

    fn config(&self) -> &[u8] {
        &[]
    }

    fn process_chain(
        &mut self,
        _queue_index: u16,
        chain: Chain<'_>,
        memory: &GuestMemoryMmap,
    ) -> u32 {
        let buffers = ChainBuffers::parse(chain, memory);
        if let Some(fault) = buffers.fault() {
            tracing::warn!(%fault, "virtio-rng request refused");
            return 0;
        }
        let len = usize::try_from(buffers.writable_len())
            .unwrap_or(usize::MAX)
            .min(MAX_REQUEST_BYTES);
        self.buffer.resize(len, 0);
        let random = match &mut self.source {
            Source::Host => fill_random(&mut self.buffer),
            Source::Seeded(rng) => {
                rng.fill(&mut self.buffer);
                Ok(())
            }
        };
        let filled = random.map_err(|error| error.to_string()).and_then(|()| {
            buffers
                .write_at(memory, 0, &self.buffer)
                .map_err(|error| error.to_string())
        });
        match filled {
            // len <= MAX_REQUEST_BYTES fits in u32.
            Ok(()) => len as u32,
            Err(error) => {
                tracing::warn!(%error, "virtio-rng request failed");
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_bytes_and_another_seed_others() {
        let bytes = |seed: u64, len: usize| {
            let mut rng = SeededRng::new(seed);
            let mut buf = vec![0u8; len];
            rng.fill(&mut buf[..len / 2]);
            rng.fill(&mut buf[len / 2..]);
            buf
        };
        assert_eq!(bytes(42, 100), bytes(42, 100));
        assert_ne!(bytes(42, 100), bytes(43, 100));
        // Seed 0 is as good as any: not a stuck all-zero state.
        let zero = bytes(0, 64);
        assert!(zero.iter().filter(|&&b| b == 0).count() < 8, "{zero:?}");
        // A saved state goes on exactly where it was.
        let mut rng = SeededRng::new(9);
        rng.next_u64();
        let mut copy = SeededRng::from_state(rng.state());
        assert_eq!(copy.next_u64(), rng.next_u64());
        // Pinned: the generator is part of what a deterministic run repeats across versions.
        assert_eq!(SeededRng::new(0).next_u64(), 0x99ec_5f36_cb75_f2b4);
    }
}
