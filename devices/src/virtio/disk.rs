//! A raw disk image in a host file, as the backend of [`super::VirtioBlk`].
//!
//! Three modes:
//! - read-write: reads and writes go to the file (`pread` / `pwrite`), flush is `fdatasync`;
//! - read-only ([`DiskOptions::read_only`]): the file is opened read-only and writes fail;
//! - snapshot ([`DiskOptions::snapshot`]): the file is opened read-only and writes go to an
//!   in-memory copy-on-write overlay of 4 KiB chunks that later reads see; nothing ever reaches
//!   the file and flush does nothing. The overlay grows with the data written, like QEMU's
//!   `-snapshot` temporary file.
//!
//! The file is `flock`ed while open (exclusively when writable, shared otherwise), so two VMs
//! cannot write one image at the same time.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Size of a disk sector in bytes; the image size must be a multiple of it.
pub const SECTOR_SIZE: u64 = 512;
/// Size of a copy-on-write chunk of the snapshot overlay.
pub const OVERLAY_CHUNK_SIZE: u64 = 4096;

/// How to open a [`Disk`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskOptions {
    /// Refuse every write (the device offers `VIRTIO_BLK_F_RO`).
    pub read_only: bool,
    /// Keep writes in memory; the file is never written.
    pub snapshot: bool,
}

/// Why a disk image could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// The file could not be opened.
    #[error("cannot open disk image {}: {source}", path.display())]
    Open {
        /// The image path.
        path: PathBuf,
        /// The host error.
        source: io::Error,
    },
    /// The size of the file could not be determined.
    #[error("cannot determine the size of disk image {}: {source}", path.display())]
    Size {
        /// The image path.
        path: PathBuf,
        /// The host error.
        source: io::Error,
    },
    /// The file size is not a whole number of 512-byte sectors.
    #[error(
        "disk image {} is {size} bytes, not a multiple of {SECTOR_SIZE}-byte sectors",
        path.display()
    )]
    NotSectorMultiple {
        /// The image path.
        path: PathBuf,
        /// The file size in bytes.
        size: u64,
    },
    /// Another process (or another disk in this one) holds a conflicting lock on the file.
    #[error("disk image {} is in use by another VM (locked)", path.display())]
    Locked {
        /// The image path.
        path: PathBuf,
    },
}

/// A disk image: a host file of whole sectors, optionally read-only or behind an overlay.
pub struct Disk {
    file: File,
    path: PathBuf,
    size: u64,
    read_only: bool,
    /// Written chunks in snapshot mode, by chunk index; `None` when writes reach the file.
    overlay: Option<HashMap<u64, Box<[u8]>>>,
}

impl std::fmt::Debug for Disk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the overlay's contents: it can hold gigabytes.
        f.debug_struct("Disk")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("read_only", &self.read_only)
            .field(
                "overlay_chunks",
                &self.overlay.as_ref().map(|overlay| overlay.len()),
            )
            .finish_non_exhaustive()
    }
}

impl Disk {
    /// Opens the image at `path`.
    ///
    /// Fails when the file cannot be opened, its size is not a multiple of [`SECTOR_SIZE`], or
    /// another open disk holds a conflicting lock on it.
    pub fn open(path: &Path, options: DiskOptions) -> Result<Self, DiskError> {
        let writable = !options.read_only && !options.snapshot;
        let open_error = |source| DiskError::Open {
            path: path.to_owned(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(writable)
            .open(path)
            .map_err(open_error)?;
        lock(&file, writable, path)?;
        // Seeking to the end works for block devices too, whose metadata length is 0.
        let size = file
            .seek(SeekFrom::End(0))
            .map_err(|source| DiskError::Size {
                path: path.to_owned(),
                source,
            })?;
        if !size.is_multiple_of(SECTOR_SIZE) {
            return Err(DiskError::NotSectorMultiple {
                path: path.to_owned(),
                size,
            });
        }
        tracing::debug!(path = %path.display(), size, ?options, "disk opened");
        Ok(Self {
            file,
            path: path.to_owned(),
            size,
            read_only: options.read_only,
            overlay: (options.snapshot && !options.read_only).then(HashMap::new),
        })
    }

    /// The image path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The size in 512-byte sectors (the virtio-blk capacity).
    pub fn sectors(&self) -> u64 {
        self.size / SECTOR_SIZE
    }

    /// Whether writes are refused.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether writes go to an in-memory overlay instead of the file.
    pub fn is_snapshot(&self) -> bool {
        self.overlay.is_some()
    }

    /// Reads `buf.len()` bytes at byte `offset`; fails if that runs past the end of the disk.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.check_range(offset, buf.len())?;
        let Some(overlay) = &self.overlay else {
            return self.file.read_exact_at(buf, offset);
        };
        for_each_chunk(offset, buf.len(), |chunk, in_chunk, in_buf| {
            let piece = &mut buf[in_buf];
            match overlay.get(&chunk) {
                Some(data) => piece.copy_from_slice(&data[in_chunk]),
                None => self
                    .file
                    .read_exact_at(piece, offset_of(chunk, &in_chunk))?,
            }
            Ok(())
        })
    }

    /// Writes `buf` at byte `offset`; fails if that runs past the end of the disk or the disk
    /// is read-only.
    pub fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        if self.read_only {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "disk is read-only",
            ));
        }
        self.check_range(offset, buf.len())?;
        let Some(overlay) = &mut self.overlay else {
            return self.file.write_all_at(buf, offset);
        };
        let (file, size) = (&self.file, self.size);
        for_each_chunk(offset, buf.len(), |chunk, in_chunk, in_buf| {
            let data = match overlay.entry(chunk) {
                std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
                std::collections::hash_map::Entry::Vacant(entry) => {
                    entry.insert(read_chunk(file, size, chunk)?)
                }
            };
            data[in_chunk].copy_from_slice(&buf[in_buf]);
            Ok(())
        })
    }

    /// Makes written data durable: `fdatasync` on the file; nothing to do for read-only and
    /// snapshot disks.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.read_only || self.overlay.is_some() {
            return Ok(());
        }
        self.file.sync_data()
    }

    fn check_range(&self, offset: u64, len: usize) -> io::Result<()> {
        let end = offset.checked_add(len as u64);
        if end.is_some_and(|end| end <= self.size) {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "access {offset:#x}+{len:#x} beyond the end of the disk ({:#x} bytes)",
                    self.size
                ),
            ))
        }
    }
}

/// Takes an advisory lock on the image: exclusive for a writable disk, shared otherwise.
fn lock(file: &File, exclusive: bool, path: &Path) -> Result<(), DiskError> {
    let operation = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    // SAFETY: flock only takes a file descriptor we own (alive for this call) and flags.
    let result = unsafe { libc::flock(file.as_raw_fd(), operation | libc::LOCK_NB) };
    if result == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    if error.kind() == io::ErrorKind::WouldBlock {
        return Err(DiskError::Locked {
            path: path.to_owned(),
        });
    }
    // Some file systems do not support flock; the lock is a safety net, not a requirement.
    tracing::warn!(path = %path.display(), %error, "cannot lock disk image");
    Ok(())
}

/// The disk byte offset of `in_chunk` inside chunk `chunk`.
fn offset_of(chunk: u64, in_chunk: &std::ops::Range<usize>) -> u64 {
    chunk * OVERLAY_CHUNK_SIZE + in_chunk.start as u64
}

/// A fresh overlay chunk holding the file's data (zero past the end of the disk).
fn read_chunk(file: &File, disk_size: u64, chunk: u64) -> io::Result<Box<[u8]>> {
    let mut data = vec![0u8; OVERLAY_CHUNK_SIZE as usize].into_boxed_slice();
    let start = chunk * OVERLAY_CHUNK_SIZE;
    let valid = disk_size.saturating_sub(start).min(OVERLAY_CHUNK_SIZE) as usize;
    file.read_exact_at(&mut data[..valid], start)?;
    Ok(data)
}

/// Splits the byte range `offset..offset + len` at overlay chunk boundaries and calls
/// `visit(chunk index, range inside the chunk, range inside the caller's buffer)`.
fn for_each_chunk(
    offset: u64,
    len: usize,
    mut visit: impl FnMut(u64, std::ops::Range<usize>, std::ops::Range<usize>) -> io::Result<()>,
) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let position = offset + done as u64;
        let chunk = position / OVERLAY_CHUNK_SIZE;
        let start = (position % OVERLAY_CHUNK_SIZE) as usize;
        let piece = (OVERLAY_CHUNK_SIZE as usize - start).min(len - done);
        visit(chunk, start..start + piece, done..done + piece)?;
        done += piece;
    }
    Ok(())
}
