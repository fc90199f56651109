//! A descriptor chain as two byte streams: the driver-readable buffers followed by the
//! device-writable ones (virtio 1.2 §2.7.4: "readable descriptors before writable ones").
//!
//! The chain is walked once, every descriptor's range is checked against guest memory, and
//! faults are recorded instead of acted on, so a device can still report an error status in the
//! chain's last byte when the rest of the chain is garbage.

use std::fmt;
use std::ops::Range;

use vm_memory::{Bytes, GuestAddress, GuestMemory, GuestMemoryError, Permissions};

use super::{Chain, GuestMemoryMmap};

/// One descriptor's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    addr: GuestAddress,
    len: u32,
}

/// Why a chain cannot be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChainFault {
    /// The chain yielded no descriptor (bad head index or descriptor table outside RAM).
    Empty,
    /// The walk stopped on a descriptor that still has `NEXT` set: the next index is out of
    /// range, the chain loops, or a descriptor (table) lies outside RAM.
    Truncated,
    /// A driver-readable descriptor follows a device-writable one.
    ReadableAfterWritable,
    /// A descriptor's buffer is not entirely inside guest RAM.
    OutsideRam {
        /// Guest address of the buffer.
        addr: u64,
        /// Length of the buffer.
        len: u32,
    },
}

impl fmt::Display for ChainFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "descriptor chain is empty"),
            Self::Truncated => write!(f, "descriptor chain is truncated or loops"),
            Self::ReadableAfterWritable => {
                write!(f, "driver-readable descriptor after a device-writable one")
            }
            Self::OutsideRam { addr, len } => {
                write!(f, "buffer {addr:#x}+{len:#x} is outside guest RAM")
            }
        }
    }
}

/// The buffers of one descriptor chain, split by direction.
#[derive(Debug)]
pub(crate) struct ChainBuffers {
    readable: Vec<Segment>,
    writable: Vec<Segment>,
    readable_len: u64,
    writable_len: u64,
    /// The first fault found while walking the chain.
    fault: Option<ChainFault>,
    /// The last byte of the chain when the chain ends properly on a device-writable buffer
    /// inside RAM: where a device reports its status.
    last_writable_byte: Option<GuestAddress>,
}

impl ChainBuffers {
    /// Walks `chain`, recording its buffers and the first fault.
    pub(crate) fn parse(chain: Chain<'_>, memory: &GuestMemoryMmap) -> Self {
        let mut buffers = Self {
            readable: Vec::new(),
            writable: Vec::new(),
            readable_len: 0,
            writable_len: 0,
            fault: None,
            last_writable_byte: None,
        };
        let mut last = None;
        for descriptor in chain {
            let segment = Segment {
                addr: descriptor.addr(),
                len: descriptor.len(),
            };
            if !memory.check_range(segment.addr, segment.len as usize, Permissions::ReadWrite) {
                buffers.note_fault(ChainFault::OutsideRam {
                    addr: segment.addr.0,
                    len: segment.len,
                });
            }
            if descriptor.is_write_only() {
                buffers.writable.push(segment);
                buffers.writable_len += u64::from(segment.len);
            } else {
                if !buffers.writable.is_empty() {
                    buffers.note_fault(ChainFault::ReadableAfterWritable);
                }
                buffers.readable.push(segment);
                buffers.readable_len += u64::from(segment.len);
            }
            last = Some(descriptor);
        }
        match last {
            None => buffers.note_fault(ChainFault::Empty),
            Some(last) if last.has_next() => buffers.note_fault(ChainFault::Truncated),
            Some(last) if last.is_write_only() && last.len() > 0 => {
                let byte = last.addr().0.checked_add(u64::from(last.len()) - 1);
                buffers.last_writable_byte = byte
                    .map(GuestAddress)
                    .filter(|&addr| memory.check_range(addr, 1, Permissions::Write));
            }
            Some(_) => {}
        }
        buffers
    }

    fn note_fault(&mut self, fault: ChainFault) {
        self.fault.get_or_insert(fault);
    }

    /// The first fault found in the chain, if any.
    pub(crate) fn fault(&self) -> Option<ChainFault> {
        self.fault
    }

    /// Total length of the driver-readable buffers.
    pub(crate) fn readable_len(&self) -> u64 {
        self.readable_len
    }

    /// Total length of the device-writable buffers.
    pub(crate) fn writable_len(&self) -> u64 {
        self.writable_len
    }

    /// The chain's last byte, if the chain ends properly on a device-writable buffer in RAM.
    pub(crate) fn last_writable_byte(&self) -> Option<GuestAddress> {
        self.last_writable_byte
    }

    /// Copies `buf.len()` bytes at `offset` of the readable stream into `buf`.
    pub(crate) fn read_at(
        &self,
        memory: &GuestMemoryMmap,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<(), GuestMemoryError> {
        for_each_piece(&self.readable, offset, buf.len(), |addr, range| {
            memory.read_slice(&mut buf[range], addr)
        })
    }

    /// Copies `buf` to `offset` of the writable stream.
    pub(crate) fn write_at(
        &self,
        memory: &GuestMemoryMmap,
        offset: u64,
        buf: &[u8],
    ) -> Result<(), GuestMemoryError> {
        for_each_piece(&self.writable, offset, buf.len(), |addr, range| {
            memory.write_slice(&buf[range], addr)
        })
    }
}

/// Calls `access(guest address, range of the caller's buffer)` for each piece of the stream
/// `segments[offset..offset + len]`. Fails if the stream is shorter than that.
fn for_each_piece(
    segments: &[Segment],
    offset: u64,
    len: usize,
    mut access: impl FnMut(GuestAddress, Range<usize>) -> Result<(), GuestMemoryError>,
) -> Result<(), GuestMemoryError> {
    let mut skip = offset;
    let mut done = 0usize;
    for segment in segments {
        if done == len {
            break;
        }
        let segment_len = u64::from(segment.len);
        if skip >= segment_len {
            skip -= segment_len;
            continue;
        }
        // Both operands fit in usize: `segment_len - skip` is at most u32::MAX.
        let piece = ((segment_len - skip) as usize).min(len - done);
        let addr = segment
            .addr
            .0
            .checked_add(skip)
            .ok_or(GuestMemoryError::InvalidGuestAddress(segment.addr))?;
        access(GuestAddress(addr), done..done + piece)?;
        done += piece;
        skip = 0;
    }
    if done == len {
        Ok(())
    } else {
        // The stream ended early; report where the missing bytes would have been.
        Err(GuestMemoryError::PartialBuffer {
            expected: len,
            completed: done,
        })
    }
}
