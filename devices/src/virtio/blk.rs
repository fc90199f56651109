//! virtio-blk (device id 2): a block device on a [`Disk`].
//!
//! One request queue of [`QUEUE_SIZE`] entries. Requests: `IN` (read), `OUT` (write), `FLUSH`
//! and `GET_ID`; anything else is answered `VIRTIO_BLK_S_UNSUPP`. Offered features:
//! `VIRTIO_BLK_F_SEG_MAX` (so Linux sends multi-segment requests), `VIRTIO_BLK_F_BLK_SIZE`,
//! `VIRTIO_BLK_F_FLUSH` (Linux then treats the disk as a write-back cache and sends flushes),
//! and `VIRTIO_BLK_F_RO` for a read-only disk. Discard and write-zeroes are not offered.
//!
//! A request is a descriptor chain: a 16-byte driver-readable header (type, reserved, sector),
//! the data (driver-readable for `OUT`, device-writable for `IN` and `GET_ID`), and a final
//! device-writable status byte. A malformed chain (a buffer outside RAM, a short or
//! device-writable header, data in the wrong direction, a length that is not whole sectors, a
//! sector range beyond the disk) fails only that request with `VIRTIO_BLK_S_IOERR`, written to
//! the chain's last byte when that byte is device-writable; a chain without one gets no status
//! and no I/O at all.

use crate::state::{StateError, StateReader, StateWriter};
use std::io;

use vm_memory::Bytes;

use super::chain::{ChainBuffers, ChainFault};
use super::disk::{Disk, SECTOR_SIZE};
use super::{Chain, GuestMemoryMmap, VirtioDevice, VIRTIO_ID_BLOCK};

/// Feature: `seg_max` in the configuration space is valid.
pub const VIRTIO_BLK_F_SEG_MAX: u64 = 1 << 2;
/// Feature: the device is read-only.
pub const VIRTIO_BLK_F_RO: u64 = 1 << 5;
/// Feature: `blk_size` in the configuration space is valid.
pub const VIRTIO_BLK_F_BLK_SIZE: u64 = 1 << 6;
/// Feature: the device has a write-back cache and takes `FLUSH` requests.
pub const VIRTIO_BLK_F_FLUSH: u64 = 1 << 9;

/// Request type: read sectors.
pub const VIRTIO_BLK_T_IN: u32 = 0;
/// Request type: write sectors.
pub const VIRTIO_BLK_T_OUT: u32 = 1;
/// Request type: flush the write-back cache.
pub const VIRTIO_BLK_T_FLUSH: u32 = 4;
/// Request type: read the device id string.
pub const VIRTIO_BLK_T_GET_ID: u32 = 8;

/// Request status: success.
pub const VIRTIO_BLK_S_OK: u8 = 0;
/// Request status: the request failed.
pub const VIRTIO_BLK_S_IOERR: u8 = 1;
/// Request status: the request type is not supported.
pub const VIRTIO_BLK_S_UNSUPP: u8 = 2;

/// Length of the request header (`type: le32, reserved: le32, sector: le64`).
pub const REQUEST_HEADER_LEN: u64 = 16;
/// Length of the `GET_ID` answer (not NUL-terminated when the id fills it).
pub const ID_LEN: usize = 20;
/// Size of the request queue.
pub const QUEUE_SIZE: u16 = 256;
/// Segments per request the driver may use: the queue size minus header and status, as QEMU
/// offers.
pub const SEG_MAX: u32 = QUEUE_SIZE as u32 - 2;

/// Configuration space offset of `capacity` (le64, in 512-byte sectors).
pub const CONFIG_CAPACITY: usize = 0x00;
/// Configuration space offset of `size_max` (le32; not offered).
pub const CONFIG_SIZE_MAX: usize = 0x08;
/// Configuration space offset of `seg_max` (le32).
pub const CONFIG_SEG_MAX: usize = 0x0c;
/// Configuration space offset of `blk_size` (le32).
pub const CONFIG_BLK_SIZE: usize = 0x14;
/// Length of the configuration space up to and including the write-zeroes fields.
pub const CONFIG_LEN: usize = 0x3c;

/// Bytes moved between the disk and guest memory per step (bounds the bounce buffer).
const IO_CHUNK: usize = 64 * 1024;

/// Why a request failed (logged; the guest sees a status byte).
#[derive(Debug, thiserror::Error)]
enum RequestError {
    #[error("malformed descriptor chain: {0}")]
    Chain(ChainFault),
    #[error("no device-writable status byte at the end of the chain")]
    NoStatus,
    #[error("header is {0} bytes, not {REQUEST_HEADER_LEN}")]
    ShortHeader(u64),
    #[error("request type {request_type}: {what}")]
    Layout {
        request_type: u32,
        what: &'static str,
    },
    #[error("data length {0:#x} is not a whole number of sectors")]
    PartialSector(u64),
    #[error(
        "sectors {sector:#x}+{len:#x} bytes beyond the end of the disk ({capacity:#x} sectors)"
    )]
    OutOfRange {
        sector: u64,
        len: u64,
        capacity: u64,
    },
    #[error("unsupported request type {0}")]
    Unsupported(u32),
    #[error("disk I/O: {0}")]
    Io(#[from] io::Error),
    #[error("guest memory: {0}")]
    Memory(#[from] vm_memory::GuestMemoryError),
}

impl RequestError {
    fn status(&self) -> u8 {
        match self {
            Self::Unsupported(_) => VIRTIO_BLK_S_UNSUPP,
            _ => VIRTIO_BLK_S_IOERR,
        }
    }
}

/// A virtio block device on a [`Disk`].
#[derive(Debug)]
pub struct VirtioBlk {
    disk: Disk,
    config: [u8; CONFIG_LEN],
    id: [u8; ID_LEN],
    queue_sizes: [u16; 1],
    bounce: Vec<u8>,
}

impl VirtioBlk {
    /// A block device serving `disk`. Its `GET_ID` string is the image's file name (truncated
    /// to [`ID_LEN`] bytes).
    pub fn new(disk: Disk) -> Self {
        let mut config = [0u8; CONFIG_LEN];
        config[CONFIG_CAPACITY..CONFIG_CAPACITY + 8].copy_from_slice(&disk.sectors().to_le_bytes());
        config[CONFIG_SEG_MAX..CONFIG_SEG_MAX + 4].copy_from_slice(&SEG_MAX.to_le_bytes());
        config[CONFIG_BLK_SIZE..CONFIG_BLK_SIZE + 4]
            .copy_from_slice(&(SECTOR_SIZE as u32).to_le_bytes());
        let mut id = [0u8; ID_LEN];
        if let Some(name) = disk.path().file_name() {
            let name = name.as_encoded_bytes();
            let len = name.len().min(ID_LEN);
            id[..len].copy_from_slice(&name[..len]);
        }
        Self {
            disk,
            config,
            id,
            queue_sizes: [QUEUE_SIZE],
            bounce: Vec::new(),
        }
    }

    /// The disk behind the device.
    pub fn disk(&self) -> &Disk {
        &self.disk
    }

    /// The `GET_ID` string.
    pub fn id(&self) -> &[u8; ID_LEN] {
        &self.id
    }

    /// Makes everything the guest wrote durable (call it when the machine stops).
    pub fn flush(&mut self) -> io::Result<()> {
        self.disk.flush()
    }

    /// Serves one request; returns the bytes written into the data buffers.
    fn serve(
        &mut self,
        buffers: &ChainBuffers,
        memory: &GuestMemoryMmap,
    ) -> Result<u32, RequestError> {
        if let Some(fault) = buffers.fault() {
            return Err(RequestError::Chain(fault));
        }
        if buffers.last_writable_byte().is_none() {
            return Err(RequestError::NoStatus);
        }
        if buffers.readable_len() < REQUEST_HEADER_LEN {
            return Err(RequestError::ShortHeader(buffers.readable_len()));
        }
        let mut header = [0u8; REQUEST_HEADER_LEN as usize];
        buffers.read_at(memory, 0, &mut header)?;
        let [t0, t1, t2, t3, _, _, _, _, s0, s1, s2, s3, s4, s5, s6, s7] = header;
        let request_type = u32::from_le_bytes([t0, t1, t2, t3]);
        let sector = u64::from_le_bytes([s0, s1, s2, s3, s4, s5, s6, s7]);
        // Everything after the header is data going to the device; everything writable but
        // the status byte is data coming from it.
        let data_out = buffers.readable_len() - REQUEST_HEADER_LEN;
        let data_in = buffers.writable_len() - 1;
        let layout = |what| RequestError::Layout { request_type, what };
        match request_type {
            VIRTIO_BLK_T_IN => {
                if data_out != 0 {
                    return Err(layout("read request with driver-readable data"));
                }
                let offset = self.disk_offset(sector, data_in)?;
                self.read_to_guest(buffers, memory, offset, data_in)?;
                // data_in <= capacity in bytes checked above, and a chain holds < 4 GiB.
                Ok(u32::try_from(data_in).unwrap_or(u32::MAX))
            }
            VIRTIO_BLK_T_OUT => {
                if data_in != 0 {
                    return Err(layout("write request with device-writable data"));
                }
                let offset = self.disk_offset(sector, data_out)?;
                self.write_from_guest(buffers, memory, offset, data_out)?;
                Ok(0)
            }
            VIRTIO_BLK_T_FLUSH => {
                self.disk.flush()?;
                Ok(0)
            }
            VIRTIO_BLK_T_GET_ID => {
                if data_out != 0 {
                    return Err(layout("get-id request with driver-readable data"));
                }
                let len = ID_LEN.min(usize::try_from(data_in).unwrap_or(usize::MAX));
                buffers.write_at(memory, 0, &self.id[..len])?;
                Ok(len as u32)
            }
            other => Err(RequestError::Unsupported(other)),
        }
    }

    /// The byte offset of `sector`, after checking that `len` bytes from it are whole sectors
    /// inside the disk.
    fn disk_offset(&self, sector: u64, len: u64) -> Result<u64, RequestError> {
        if !len.is_multiple_of(SECTOR_SIZE) {
            return Err(RequestError::PartialSector(len));
        }
        let capacity = self.disk.sectors();
        let end = sector.checked_add(len / SECTOR_SIZE);
        if end.is_none_or(|end| end > capacity) {
            return Err(RequestError::OutOfRange {
                sector,
                len,
                capacity,
            });
        }
        Ok(sector * SECTOR_SIZE)
    }

    fn read_to_guest(
        &mut self,
        buffers: &ChainBuffers,
        memory: &GuestMemoryMmap,
        offset: u64,
        len: u64,
    ) -> Result<(), RequestError> {
        let mut done = 0u64;
        while done < len {
            let step = chunk_len(len - done);
            self.bounce.resize(step, 0);
            self.disk.read_at(offset + done, &mut self.bounce)?;
            buffers.write_at(memory, done, &self.bounce)?;
            done += step as u64;
        }
        Ok(())
    }

    fn write_from_guest(
        &mut self,
        buffers: &ChainBuffers,
        memory: &GuestMemoryMmap,
        offset: u64,
        len: u64,
    ) -> Result<(), RequestError> {
        let mut done = 0u64;
        while done < len {
            let step = chunk_len(len - done);
            self.bounce.resize(step, 0);
            buffers.read_at(memory, REQUEST_HEADER_LEN + done, &mut self.bounce)?;
            self.disk.write_at(offset + done, &self.bounce)?;
            done += step as u64;
        }
        Ok(())
    }
}

/// The length of the next I/O step when `remaining` bytes are left.
fn chunk_len(remaining: u64) -> usize {
    usize::try_from(remaining).map_or(IO_CHUNK, |remaining| remaining.min(IO_CHUNK))
}

impl VirtioDevice for VirtioBlk {
    fn device_type(&self) -> u32 {
        VIRTIO_ID_BLOCK
    }

    fn name(&self) -> &'static str {
        "virtio-blk"
    }

    fn features(&self) -> u64 {
        let mut features = VIRTIO_BLK_F_SEG_MAX | VIRTIO_BLK_F_BLK_SIZE | VIRTIO_BLK_F_FLUSH;
        if self.disk.is_read_only() {
            features |= VIRTIO_BLK_F_RO;
        }
        features
    }

    fn queue_max_sizes(&self) -> &[u16] {
        &self.queue_sizes
    }

    fn config(&self) -> &[u8] {
        &self.config
    }

    /// The guest-visible identity of the disk: its size, whether it is read-only, and the
    /// `GET_ID` string (kept even when the restored machine's disk has another file name).
    fn save_state(&self, out: &mut StateWriter) {
        out.u64(self.disk.size());
        out.bool(self.disk.is_read_only());
        out.bytes(&self.id);
    }

    fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        let size = input.u64("virtio-blk size")?;
        let read_only = input.bool("virtio-blk read-only")?;
        let id = input.bytes(ID_LEN, "virtio-blk id")?;
        if size != self.disk.size() || read_only != self.disk.is_read_only() {
            return Err(StateError::invalid(format!(
                "disk {} is {} bytes{}, the saved one {size} bytes{}",
                self.disk.path().display(),
                self.disk.size(),
                if self.disk.is_read_only() {
                    " read-only"
                } else {
                    ""
                },
                if read_only { " read-only" } else { "" },
            )));
        }
        self.id = [0; ID_LEN];
        self.id[..id.len()].copy_from_slice(id);
        Ok(())
    }

    fn process_chain(
        &mut self,
        _queue_index: u16,
        chain: Chain<'_>,
        memory: &GuestMemoryMmap,
    ) -> u32 {
        let head = chain.head_index();
        let buffers = ChainBuffers::parse(chain, memory);
        let (status, written) = match self.serve(&buffers, memory) {
            Ok(written) => (VIRTIO_BLK_S_OK, written),
            Err(error) => {
                tracing::warn!(
                    disk = %self.disk.path().display(),
                    head,
                    %error,
                    "virtio-blk request failed"
                );
                (error.status(), 0)
            }
        };
        let Some(status_byte) = buffers.last_writable_byte() else {
            return 0;
        };
        match memory.write_obj(status, status_byte) {
            Ok(()) => written.saturating_add(1),
            Err(error) => {
                tracing::warn!(%error, "virtio-blk cannot write the request status");
                0
            }
        }
    }
}
