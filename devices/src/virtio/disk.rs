//! A raw disk image in a host file, as the backend of [`super::VirtioBlk`].
//!
//! Three modes:
//! - read-write: reads and writes go to the file (`pread` / `pwrite`), flush is `fdatasync`;
//! - read-only ([`DiskOptions::read_only`]): the file is opened read-only and writes fail;
//! - snapshot ([`DiskOptions::snapshot`]): the file is opened read-only and writes go to a
//!   copy-on-write overlay that later reads see; nothing ever reaches the file and flush does
//!   nothing. The overlay is an unlinked temporary file (like QEMU's `-snapshot`), written at
//!   the disk's own offsets in 4 KiB chunks and left sparse elsewhere; a bitmap in memory (one
//!   bit per chunk, allocated per 128 MiB of disk touched) says which chunks it holds. Host RAM
//!   therefore stays small whatever the guest writes, and a failing overlay write (a full
//!   temporary file system) is an I/O error for that request, never a crash.
//!
//! Only regular files and block devices are disks: a FIFO, socket, character device (such as
//! `/dev/null`) or directory is refused when it is opened, without blocking (the file is opened
//! with `O_NONBLOCK` and checked with `fstat` before anything reads it).
//!
//! # Locking
//!
//! An image is locked while open, so two VMs never write one image at the same time:
//!
//! - `flock`: exclusive when writable, shared otherwise (between rv32vm processes);
//! - QEMU's scheme (`block/file-posix.c`, `raw_apply_lock_bytes` / `raw_check_lock_bytes`):
//!   open file description (OFD) read locks on single bytes. A user holding permission `p`
//!   locks byte `100 + p`; a user that does not share permission `p` with others locks byte
//!   `200 + p` (`p` = 0 consistent read, 1 write, 2 write unchanged, 3 resize). After taking
//!   its bytes, a user checks that nobody else holds `200 + p` for the permissions it wants
//!   and `100 + p` for those it refuses to share. rv32vm takes the same bytes as a QEMU
//!   `-drive` does (read-write: 100, 101 and 201; read-only or snapshot: 100 and 201), so a
//!   running QEMU refuses an image rv32vm writes ("Failed to get \"write\" lock") and rv32vm
//!   refuses one a QEMU writes, while read-only users of both kinds share an image.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Size of a disk sector in bytes; the image size must be a multiple of it.
pub const SECTOR_SIZE: u64 = 512;
/// Size of a copy-on-write chunk of the snapshot overlay.
pub const OVERLAY_CHUNK_SIZE: u64 = 4096;
/// Where the snapshot overlay lives when `TMPDIR` is not set: `/var/tmp`, as QEMU's
/// `-snapshot` does, because `/tmp` is often a tmpfs, which would keep the data in RAM again.
pub const DEFAULT_OVERLAY_DIR: &str = "/var/tmp";

/// First of QEMU's "permission held" lock bytes (`RAW_LOCK_PERM_BASE`).
const QEMU_LOCK_PERM_BASE: i64 = 100;
/// First of QEMU's "permission not shared" lock bytes (`RAW_LOCK_SHARED_BASE`).
const QEMU_LOCK_SHARED_BASE: i64 = 200;
/// QEMU's `BLK_PERM_CONSISTENT_READ` as a bit number.
const QEMU_PERM_CONSISTENT_READ: i64 = 0;
/// QEMU's `BLK_PERM_WRITE` as a bit number.
const QEMU_PERM_WRITE: i64 = 1;

/// How to open a [`Disk`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskOptions {
    /// Refuse every write (the device offers `VIRTIO_BLK_F_RO`).
    pub read_only: bool,
    /// Keep writes in a temporary overlay; the file is never written.
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
    /// The path names something that cannot hold a disk (a directory, FIFO, socket or character
    /// device such as `/dev/null`).
    #[error(
        "disk image {} is {kind}, not a regular file or block device",
        path.display()
    )]
    NotADisk {
        /// The image path.
        path: PathBuf,
        /// What the path is ("a directory", "a FIFO", ...).
        kind: &'static str,
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
    #[error("disk image {} is in use by another VM: {holder}", path.display())]
    Locked {
        /// The image path.
        path: PathBuf,
        /// Which lock conflicts, in words.
        holder: String,
    },
    /// The snapshot overlay's temporary file could not be created.
    #[error(
        "cannot create the snapshot overlay for disk image {} in {} (set TMPDIR to another \
         directory): {source}",
        path.display(),
        dir.display()
    )]
    Overlay {
        /// The image path.
        path: PathBuf,
        /// The directory the overlay was to be created in.
        dir: PathBuf,
        /// The host error.
        source: io::Error,
    },
}

/// A disk image: a host file of whole sectors, optionally read-only or behind an overlay.
pub struct Disk {
    file: File,
    path: PathBuf,
    size: u64,
    read_only: bool,
    /// Where written chunks go in snapshot mode; `None` when writes reach the file.
    overlay: Option<Overlay>,
}

impl std::fmt::Debug for Disk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Disk")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("read_only", &self.read_only)
            .field(
                "overlay_chunks",
                &self.overlay.as_ref().map(|overlay| overlay.chunks.len()),
            )
            .finish_non_exhaustive()
    }
}

impl Disk {
    /// Opens the image at `path`.
    ///
    /// Fails when the file cannot be opened, is not a regular file or block device, its size is
    /// not a multiple of [`SECTOR_SIZE`], another open disk (of this process, another rv32vm or
    /// a QEMU) holds a conflicting lock on it, or a snapshot overlay cannot be created.
    pub fn open(path: &Path, options: DiskOptions) -> Result<Self, DiskError> {
        Self::open_with_overlay_dir(path, options, &overlay_dir())
    }

    /// Like [`Disk::open`], with a snapshot overlay (if any) in `overlay_dir` instead of
    /// `$TMPDIR` or [`DEFAULT_OVERLAY_DIR`].
    pub fn open_with_overlay_dir(
        path: &Path,
        options: DiskOptions,
        overlay_dir: &Path,
    ) -> Result<Self, DiskError> {
        let writable = !options.read_only && !options.snapshot;
        let mut file = open_disk_file(path, writable)?;
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
        let overlay = if options.snapshot && !options.read_only {
            let file = create_overlay_file(overlay_dir).map_err(|source| DiskError::Overlay {
                path: path.to_owned(),
                dir: overlay_dir.to_owned(),
                source,
            })?;
            Some(Overlay::new(file))
        } else {
            None
        };
        tracing::debug!(path = %path.display(), size, ?options, "disk opened");
        Ok(Self {
            file,
            path: path.to_owned(),
            size,
            read_only: options.read_only,
            overlay,
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

    /// Whether writes go to an overlay instead of the file.
    pub fn is_snapshot(&self) -> bool {
        self.overlay.is_some()
    }

    /// Host storage the snapshot overlay occupies, in bytes (its temporary file's allocated
    /// blocks); `None` for a disk without overlay or when the file cannot be examined.
    pub fn overlay_allocated_bytes(&self) -> Option<u64> {
        let overlay = self.overlay.as_ref()?;
        overlay
            .file
            .metadata()
            .ok()
            .map(|metadata| metadata.blocks() * 512)
    }

    /// The image file's last modification time as the host reports it (for a snapshot to
    /// notice a disk changed behind its back).
    pub fn modified(&self) -> io::Result<std::time::SystemTime> {
        self.file.metadata()?.modified()
    }

    /// Calls `f` with the byte offset and contents of every chunk the guest wrote to the
    /// snapshot overlay, in disk order (the writes a machine snapshot must carry, since the
    /// image file never sees them). Nothing for a disk without overlay.
    pub fn for_each_overlay_chunk(
        &self,
        mut f: impl FnMut(u64, &[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let Some(overlay) = &self.overlay else {
            return Ok(());
        };
        let mut data = vec![0u8; OVERLAY_CHUNK_SIZE as usize];
        for chunk in overlay.chunks.iter() {
            let offset = chunk * OVERLAY_CHUNK_SIZE;
            let len = OVERLAY_CHUNK_SIZE.min(self.size - offset) as usize;
            overlay.file.read_exact_at(&mut data[..len], offset)?;
            f(offset, &data[..len])?;
        }
        Ok(())
    }

    /// Puts back a chunk [`Disk::for_each_overlay_chunk`] reported, into this disk's overlay;
    /// fails for a disk without overlay or a chunk that does not fit the disk.
    pub fn restore_overlay_chunk(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        if self.overlay.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the disk has no snapshot overlay to put saved writes in",
            ));
        }
        if !offset.is_multiple_of(OVERLAY_CHUNK_SIZE) || data.len() as u64 > OVERLAY_CHUNK_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("overlay chunk at {offset} of {} bytes", data.len()),
            ));
        }
        self.write_at(offset, data)
    }

    /// Reads `buf.len()` bytes at byte `offset`; fails if that runs past the end of the disk.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.check_range(offset, buf.len())?;
        let Some(overlay) = &self.overlay else {
            return self.file.read_exact_at(buf, offset);
        };
        let end = offset + buf.len() as u64;
        let mut position = offset;
        while position < end {
            // One read per run of chunks that all come from the same file.
            let in_overlay = overlay.chunks.contains(position / OVERLAY_CHUNK_SIZE);
            let mut run_end = chunk_end(position).min(end);
            while run_end < end
                && overlay.chunks.contains(run_end / OVERLAY_CHUNK_SIZE) == in_overlay
            {
                run_end = chunk_end(run_end).min(end);
            }
            let source = if in_overlay {
                &overlay.file
            } else {
                &self.file
            };
            let piece = &mut buf[(position - offset) as usize..(run_end - offset) as usize];
            source.read_exact_at(piece, position)?;
            position = run_end;
        }
        Ok(())
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
        let end = offset + buf.len() as u64;
        let mut position = offset;
        while position < end {
            let chunk = position / OVERLAY_CHUNK_SIZE;
            let chunk_start = chunk * OVERLAY_CHUNK_SIZE;
            // The disk's last chunk may be shorter (the size is whole sectors, not chunks).
            let chunk_limit = chunk_end(position).min(self.size);
            let piece_end = chunk_limit.min(end);
            let from_buf =
                |start: u64, stop: u64| &buf[(start - offset) as usize..(stop - offset) as usize];
            if position == chunk_start && piece_end == chunk_limit {
                // Whole chunks: no old data to keep, one write for all of them.
                let run_end = if end == self.size {
                    end
                } else {
                    end - end % OVERLAY_CHUNK_SIZE
                };
                overlay
                    .file
                    .write_all_at(from_buf(position, run_end), position)?;
                overlay
                    .chunks
                    .insert_range(chunk, run_end.div_ceil(OVERLAY_CHUNK_SIZE));
                position = run_end;
            } else if overlay.chunks.contains(chunk) {
                overlay
                    .file
                    .write_all_at(from_buf(position, piece_end), position)?;
                position = piece_end;
            } else {
                // Copy on write: the rest of the chunk comes from the image.
                let mut data = [0u8; OVERLAY_CHUNK_SIZE as usize];
                let valid = &mut data[..(chunk_limit - chunk_start) as usize];
                self.file.read_exact_at(valid, chunk_start)?;
                valid[(position - chunk_start) as usize..(piece_end - chunk_start) as usize]
                    .copy_from_slice(from_buf(position, piece_end));
                overlay.file.write_all_at(valid, chunk_start)?;
                overlay.chunks.insert_range(chunk, chunk + 1);
                position = piece_end;
            }
        }
        Ok(())
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

/// The end of the overlay chunk holding byte `position`.
fn chunk_end(position: u64) -> u64 {
    (position / OVERLAY_CHUNK_SIZE + 1) * OVERLAY_CHUNK_SIZE
}

/// Opens `path` without blocking (a FIFO would block a plain read-only open until a writer
/// comes) and checks that it is a regular file or a block device.
fn open_disk_file(path: &Path, writable: bool) -> Result<File, DiskError> {
    let not_a_disk = |kind| DiskError::NotADisk {
        path: path.to_owned(),
        kind,
    };
    let file = OpenOptions::new()
        .read(true)
        .write(writable)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| match source.raw_os_error() {
            // Only a writable open of a directory fails; say what it is.
            Some(libc::EISDIR) => not_a_disk("a directory"),
            _ => DiskError::Open {
                path: path.to_owned(),
                source,
            },
        })?;
    let file_type = file
        .metadata()
        .map_err(|source| DiskError::Open {
            path: path.to_owned(),
            source,
        })?
        .file_type();
    if file_type.is_dir() {
        return Err(not_a_disk("a directory"));
    }
    if file_type.is_fifo() {
        return Err(not_a_disk("a FIFO (named pipe)"));
    }
    if file_type.is_socket() {
        return Err(not_a_disk("a socket"));
    }
    if file_type.is_char_device() {
        return Err(not_a_disk("a character device"));
    }
    if !file_type.is_file() && !file_type.is_block_device() {
        return Err(not_a_disk("a file of an unknown kind"));
    }
    // Disk I/O is meant to block until done: drop O_NONBLOCK again.
    // SAFETY: fcntl F_GETFL/F_SETFL on a descriptor we own, with integer arguments only.
    let cleared = unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        flags >= 0 && libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if !cleared {
        // O_NONBLOCK has no effect on regular files and block devices in Linux anyway.
        tracing::debug!(path = %path.display(), error = %io::Error::last_os_error(), "cannot clear O_NONBLOCK");
    }
    Ok(file)
}

/// Locks the image for this process: `flock` (exclusive for a writable disk, shared otherwise),
/// then QEMU's byte-range locks (see the module documentation).
fn lock(file: &File, writable: bool, path: &Path) -> Result<(), DiskError> {
    let locked = |holder: &str| DiskError::Locked {
        path: path.to_owned(),
        holder: holder.to_owned(),
    };
    let operation = if writable {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    // SAFETY: flock only takes a file descriptor we own (alive for this call) and flags.
    let result = unsafe { libc::flock(file.as_raw_fd(), operation | libc::LOCK_NB) };
    if result != 0 {
        let error = io::Error::last_os_error();
        if error.kind() == io::ErrorKind::WouldBlock {
            let holder = if writable {
                "another rv32vm has it open (flock)"
            } else {
                "another rv32vm has it open for writing (flock)"
            };
            return Err(locked(holder));
        }
        // Some file systems do not support flock; the lock is a safety net, not a requirement.
        tracing::warn!(path = %path.display(), %error, "cannot lock disk image (flock)");
    }
    lock_qemu_bytes(file, writable, path)
}

/// Takes and checks QEMU's lock bytes, as a QEMU `-drive` with the same access would.
fn lock_qemu_bytes(file: &File, writable: bool, path: &Path) -> Result<(), DiskError> {
    let mut held = vec![QEMU_PERM_CONSISTENT_READ];
    if writable {
        held.push(QEMU_PERM_WRITE);
    }
    // A read-only QEMU does not share "write" either: nobody may change the image under us.
    let unshared = [QEMU_PERM_WRITE];
    let bytes = held
        .iter()
        .map(|perm| QEMU_LOCK_PERM_BASE + perm)
        .chain(unshared.iter().map(|perm| QEMU_LOCK_SHARED_BASE + perm));
    for byte in bytes {
        match ofd_lock(file, byte, OfdLock::SetRead) {
            Ok(true) => {}
            Ok(false) => {
                return Err(DiskError::Locked {
                    path: path.to_owned(),
                    holder: format!("another process holds a write lock on byte {byte}"),
                })
            }
            Err(error) => {
                // A file system without OFD locks (some network file systems): like flock,
                // the lock is a safety net.
                tracing::warn!(path = %path.display(), %error, "cannot lock disk image (QEMU lock bytes)");
                return Ok(());
            }
        }
    }
    // Whoever refuses to share what we hold, and whoever holds what we refuse to share.
    let conflicts = held
        .iter()
        .map(|&perm| (QEMU_LOCK_SHARED_BASE + perm, perm, false))
        .chain(
            unshared
                .iter()
                .map(|&perm| (QEMU_LOCK_PERM_BASE + perm, perm, true)),
        );
    for (byte, perm, shared) in conflicts {
        match ofd_lock(file, byte, OfdLock::TestWrite) {
            Ok(true) => {}
            Ok(false) => {
                let name = qemu_perm_name(perm);
                let holder = if shared {
                    format!(
                        "a QEMU (or another program using QEMU's image locks) holds its \
                         \"{name}\" permission (lock byte {byte})"
                    )
                } else {
                    format!(
                        "a QEMU (or another program using QEMU's image locks) does not share \
                         its \"{name}\" permission (lock byte {byte})"
                    )
                };
                return Err(DiskError::Locked {
                    path: path.to_owned(),
                    holder,
                });
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot test QEMU lock bytes");
                return Ok(());
            }
        }
    }
    Ok(())
}

/// QEMU's name for a permission bit (`bdrv_perm_names`).
fn qemu_perm_name(perm: i64) -> &'static str {
    match perm {
        QEMU_PERM_CONSISTENT_READ => "consistent read",
        QEMU_PERM_WRITE => "write",
        2 => "write unchanged",
        _ => "resize",
    }
}

/// What [`ofd_lock`] does with one byte.
#[derive(Clone, Copy)]
enum OfdLock {
    /// Take a shared (read) lock.
    SetRead,
    /// Ask whether an exclusive lock could be taken, i.e. whether any other open file
    /// description holds a lock there (QEMU's `qemu_lock_fd_test`).
    TestWrite,
}

/// One byte-range OFD lock operation on byte `byte`. `Ok(true)`: taken / free; `Ok(false)`:
/// another open file description conflicts; `Err`: locking is not available.
fn ofd_lock(file: &File, byte: i64, operation: OfdLock) -> io::Result<bool> {
    // SAFETY: an all-zero flock is a valid value (l_pid must be 0 for OFD locks).
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_whence = libc::SEEK_SET as libc::c_short;
    request.l_start = byte;
    request.l_len = 1;
    let command = match operation {
        OfdLock::SetRead => {
            request.l_type = libc::F_RDLCK as libc::c_short;
            libc::F_OFD_SETLK
        }
        OfdLock::TestWrite => {
            request.l_type = libc::F_WRLCK as libc::c_short;
            libc::F_OFD_GETLK
        }
    };
    // SAFETY: fcntl with an OFD lock command reads (and for GETLK writes) the flock struct we
    // own, which lives for the call; the descriptor is ours.
    let result = unsafe { libc::fcntl(file.as_raw_fd(), command, &mut request) };
    if result != 0 {
        let error = io::Error::last_os_error();
        return match error.raw_os_error() {
            Some(libc::EAGAIN | libc::EACCES) => Ok(false),
            _ => Err(error),
        };
    }
    Ok(match operation {
        OfdLock::SetRead => true,
        OfdLock::TestWrite => request.l_type == libc::F_UNLCK as libc::c_short,
    })
}

/// The directory for snapshot overlays: `$TMPDIR`, else [`DEFAULT_OVERLAY_DIR`].
fn overlay_dir() -> PathBuf {
    std::env::var_os("TMPDIR")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_OVERLAY_DIR), PathBuf::from)
}

/// A new, empty, nameless file in `dir`: `O_TMPFILE` where the file system has it, otherwise a
/// file created exclusively and unlinked at once. Either way it disappears with the process.
fn create_overlay_file(dir: &Path) -> io::Result<File> {
    let tmpfile = OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match tmpfile {
        Ok(file) => return Ok(file),
        // Kernels or file systems without O_TMPFILE.
        Err(error)
            if matches!(
                error.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ) => {}
        Err(error) => return Err(error),
    }
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    loop {
        let unique = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("rv32vm-snapshot-{}-{unique}", std::process::id()));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(file) => {
                std::fs::remove_file(&path)?;
                return Ok(file);
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
}

/// The snapshot overlay: written chunks in a temporary file, at their disk offsets.
struct Overlay {
    file: File,
    chunks: ChunkSet,
}

impl Overlay {
    fn new(file: File) -> Self {
        Self {
            file,
            chunks: ChunkSet::default(),
        }
    }
}

/// Chunks per bitmap leaf: a leaf of 512 words covers 128 MiB of disk in 4 KiB of memory.
const LEAF_CHUNKS: u64 = 512 * 64;

/// A set of chunk indices: a bitmap whose 4 KiB leaves exist only where chunks were written,
/// so its memory follows the written area, not the disk size.
#[derive(Default)]
struct ChunkSet {
    leaves: BTreeMap<u64, Box<[u64; 512]>>,
    len: u64,
}

impl ChunkSet {
    fn contains(&self, chunk: u64) -> bool {
        let offset = chunk % LEAF_CHUNKS;
        self.leaves
            .get(&(chunk / LEAF_CHUNKS))
            .is_some_and(|leaf| leaf[(offset / 64) as usize] & (1 << (offset % 64)) != 0)
    }

    /// Adds the chunks `first..end`.
    fn insert_range(&mut self, first: u64, end: u64) {
        for chunk in first..end {
            let offset = chunk % LEAF_CHUNKS;
            let leaf = self
                .leaves
                .entry(chunk / LEAF_CHUNKS)
                .or_insert_with(|| Box::new([0; 512]));
            let word = &mut leaf[(offset / 64) as usize];
            let bit = 1 << (offset % 64);
            if *word & bit == 0 {
                *word |= bit;
                self.len += 1;
            }
        }
    }

    /// The chunks in the set, in increasing order.
    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.leaves.iter().flat_map(|(&leaf, words)| {
            words.iter().enumerate().flat_map(move |(w, &word)| {
                (0..64u64)
                    .filter(move |bit| word & (1 << bit) != 0)
                    .map(move |bit| leaf * LEAF_CHUNKS + w as u64 * 64 + bit)
            })
        })
    }

    /// The number of chunks in the set.
    fn len(&self) -> u64 {
        self.len
    }
}

#[cfg(test)]
impl Disk {
    /// Swaps the snapshot overlay's file (tests use a read-only one to make writes fail).
    pub(crate) fn replace_overlay_file_for_tests(&mut self, file: File) {
        if let Some(overlay) = &mut self.overlay {
            overlay.file = file;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_set_tracks_ranges_across_leaves() {
        let mut set = ChunkSet::default();
        assert!(!set.contains(0));
        set.insert_range(LEAF_CHUNKS - 2, LEAF_CHUNKS + 3);
        set.insert_range(LEAF_CHUNKS, LEAF_CHUNKS + 1);
        assert_eq!(set.len(), 5);
        assert!(!set.contains(LEAF_CHUNKS - 3));
        for chunk in LEAF_CHUNKS - 2..LEAF_CHUNKS + 3 {
            assert!(set.contains(chunk), "{chunk}");
        }
        assert!(!set.contains(LEAF_CHUNKS + 3));
        // A chunk far away costs one leaf, not a bitmap of the whole range.
        set.insert_range(
            u64::MAX / OVERLAY_CHUNK_SIZE,
            u64::MAX / OVERLAY_CHUNK_SIZE + 1,
        );
        assert!(set.contains(u64::MAX / OVERLAY_CHUNK_SIZE));
        assert_eq!(set.leaves.len(), 3);
    }
}
