//! Reading the host files a user names (kernel, initrd, firmware, device tree, ELF programs)
//! with bounds: only regular files, never more than the caller can use, and never a blocking
//! open (a FIFO given as `--kernel` must be an error, not a hang).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Why an input file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened, inspected or read.
    #[error("cannot read {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
    /// The path names a directory, FIFO, socket or device, not a regular file.
    #[error("{what} {path} is {kind}, not a regular file")]
    NotRegular {
        what: &'static str,
        path: String,
        kind: &'static str,
    },
    /// The file is larger than anything it could be used for.
    #[error("{what} {path} is {size} bytes, more than the {limit} bytes that can be used")]
    TooLarge {
        what: &'static str,
        path: String,
        size: u64,
        limit: u64,
    },
    /// The file is empty.
    #[error("{what} {path} is empty")]
    Empty { what: &'static str, path: String },
}

/// A file's device and inode: two paths name the same file exactly when these match.
pub type FileId = (u64, u64);

/// Device and inode of the file `path` names (through symlinks), if it exists.
pub fn file_identity(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A name for a file type, for messages.
pub fn file_kind(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "a regular file"
    }
}

/// Open `path` for reading without blocking (a FIFO open would wait for a writer) and check that
/// it is a regular file. `what` names the file in messages ("kernel", "initrd", ...).
pub fn open_regular(what: &'static str, path: &Path) -> Result<(File, u64), InputError> {
    let shown = || path.display().to_string();
    let io = |source| InputError::Io {
        what,
        path: shown(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotRegular {
            what,
            path: shown(),
            kind: file_kind(meta.file_type()),
        });
    }
    Ok((file, meta.len()))
}

/// Open the regular file at `path` and give its size, refusing it when it is larger than
/// `limit` bytes, or empty.
fn open_bounded(what: &'static str, path: &Path, limit: u64) -> Result<(File, u64), InputError> {
    let (file, size) = open_regular(what, path)?;
    if size > limit {
        return Err(InputError::TooLarge {
            what,
            path: path.display().to_string(),
            size,
            limit,
        });
    }
    if size == 0 {
        return Err(InputError::Empty {
            what,
            path: path.display().to_string(),
        });
    }
    Ok((file, size))
}

/// Read the whole regular file at `path`, refusing it without reading when it is larger than
/// `limit` bytes, or empty. At most `limit` bytes are ever read, even if the file grows.
pub fn read_bounded(what: &'static str, path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let (file, size) = open_bounded(what, path, limit)?;
    read_open(what, path, file, size, limit)
}

/// Read `file` (at `path`, `size` bytes when opened) to its end, at most `limit` bytes.
fn read_open(
    what: &'static str,
    path: &Path,
    file: File,
    size: u64,
    limit: u64,
) -> Result<Vec<u8>, InputError> {
    let too_large = |size| InputError::TooLarge {
        what,
        path: path.display().to_string(),
        size,
        limit,
    };
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            what,
            path: path.display().to_string(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// A regular file's bytes as a private read-only mapping (read instead where its file system
/// cannot map it, as sysfs cannot). Only the pages that are read cost anything, where reading
/// the file copies all of it: a statically linked program is mostly debug information, and
/// reading all 1.4 MB of `hello` (its loader looks at 40 KB) cost about 1.4 ms of each run.
///
/// A mapping sees the file as it is: one cut short while its bytes are read raises SIGBUS, as
/// it would for QEMU's loader, which maps programs too. So a mapping is read while a program
/// loads, and not after.
pub struct MappedFile(FileBytes);

enum FileBytes {
    /// A private read-only mapping of `len` bytes at `addr`.
    Mapped {
        addr: std::ptr::NonNull<u8>,
        len: usize,
    },
    /// The bytes read, where the file system cannot map the file.
    Read(Vec<u8>),
}

// SAFETY: a mapping is private and read-only; nothing writes through it, so shared references
// to its bytes are sound from any thread, and it may be unmapped from any thread.
unsafe impl Send for FileBytes {}
// SAFETY: as for `Send`: the bytes never change through this mapping.
unsafe impl Sync for FileBytes {}

impl std::ops::Deref for MappedFile {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            // SAFETY: `addr` is a live mapping of `len` readable bytes until `drop`.
            FileBytes::Mapped { addr, len } => unsafe {
                std::slice::from_raw_parts(addr.as_ptr(), *len)
            },
            FileBytes::Read(bytes) => bytes,
        }
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        if let FileBytes::Mapped { addr, len } = self.0 {
            // SAFETY: `addr..addr + len` is the mapping `map_bounded` made, unmapped only
            // here.
            unsafe { libc::munmap(addr.as_ptr().cast(), len) };
        }
    }
}

/// Map the regular file at `path` read-only, refusing it without mapping when it is larger
/// than `limit` bytes, or empty (as [`read_bounded`] does). The mapping covers the file's size
/// when it was opened, even if the file grows.
pub fn map_bounded(what: &'static str, path: &Path, limit: u64) -> Result<MappedFile, InputError> {
    let (file, size) = open_bounded(what, path, limit)?;
    let len = size as usize;
    // SAFETY: a fresh private read-only mapping of an open regular file, placed by the
    // kernel; the result is checked before use.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE,
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
        )
    };
    let mapped = (addr != libc::MAP_FAILED)
        .then(|| std::ptr::NonNull::new(addr.cast::<u8>()))
        .flatten();
    if let Some(addr) = mapped {
        return Ok(MappedFile(FileBytes::Mapped { addr, len }));
    }
    // A file system that cannot map files (sysfs, some FUSE ones): read it.
    tracing::debug!(
        "{what} {}: not mapped ({}), read instead",
        path.display(),
        std::io::Error::last_os_error()
    );
    let bytes = read_open(what, path, file, size, limit)?;
    Ok(MappedFile(FileBytes::Read(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory for one test, removed with its contents when dropped (the tests
    /// leave a 3 GB sparse file and a FIFO behind otherwise).
    struct TempDir(std::path::PathBuf);

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp_dir() -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "rv32vm-hostfile-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Both ways to take in a file, `read_bounded` and `map_bounded`, which must agree.
    fn both(path: &Path, limit: u64) -> [Result<Vec<u8>, InputError>; 2] {
        [
            read_bounded("kernel", path, limit),
            map_bounded("kernel", path, limit).map(|m| m.to_vec()),
        ]
    }

    #[test]
    fn regular_file_within_limit_is_read() {
        let dir = temp_dir();
        let path = dir.0.join("ok");
        std::fs::write(&path, b"hello").unwrap();
        for got in both(&path, 5) {
            assert_eq!(got.unwrap(), b"hello");
        }
        // sysfs files are regular but cannot be mapped: they are read.
        let sysfs = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
        if let Ok(expected) = std::fs::read(sysfs) {
            let [read, mapped] = both(sysfs, 1 << 20);
            assert_eq!(read.unwrap(), expected);
            assert_eq!(mapped.unwrap(), expected);
        }
        // A mapping keeps the size the file had: what is appended later is not in it.
        let mapped = map_bounded("kernel", &path, 5).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b" world"))
            .unwrap();
        assert_eq!(&mapped[..], b"hello");
    }

    #[test]
    fn oversized_file_is_refused_before_reading() {
        let dir = temp_dir();
        let path = dir.0.join("big");
        let f = File::create(&path).unwrap();
        // Sparse: 3 GB that would take a long time to read.
        f.set_len(3 << 30).unwrap();
        for got in both(&path, 1 << 20) {
            let err = got.unwrap_err();
            assert!(matches!(err, InputError::TooLarge { size, .. } if size == 3 << 30));
        }
    }

    #[test]
    fn devices_directories_fifos_and_empty_files_are_refused() {
        let scratch = temp_dir();
        let dir = &scratch.0;
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let empty = dir.join("empty");
        std::fs::write(&empty, b"").unwrap();
        for got in both(Path::new("/dev/zero"), 1 << 20) {
            assert!(matches!(
                got,
                Err(InputError::NotRegular {
                    kind: "a character device",
                    ..
                })
            ));
        }
        for got in both(dir, 1 << 20) {
            assert!(matches!(
                got,
                Err(InputError::NotRegular {
                    kind: "a directory",
                    ..
                })
            ));
        }
        for got in both(&fifo, 1 << 20) {
            assert!(matches!(
                got,
                Err(InputError::NotRegular { kind: "a FIFO", .. })
            ));
        }
        for got in both(&empty, 1 << 20) {
            assert!(matches!(got, Err(InputError::Empty { .. })));
        }
    }
}
