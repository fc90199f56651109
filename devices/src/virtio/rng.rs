//! virtio-rng (device id 4): an entropy source for the guest (Linux's `virtio-rng` hw_random).
//!
//! One queue; each descriptor chain's device-writable buffers are filled with bytes from the
//! host's `getrandom(2)`, at most [`MAX_REQUEST_BYTES`] per chain. Driver-readable buffers are
//! skipped. A chain with a buffer outside RAM gets nothing (used length 0).

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
        }
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
        let filled = fill_random(&mut self.buffer)
            .map_err(|error| error.to_string())
            .and_then(|()| {
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
