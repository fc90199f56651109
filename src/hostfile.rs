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

/// Read the whole regular file at `path`, refusing it without reading when it is larger than
/// `limit` bytes, or empty. At most `limit` bytes are ever read, even if the file grows.
pub fn read_bounded(what: &'static str, path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let (file, size) = open_regular(what, path)?;
    let too_large = |size| InputError::TooLarge {
        what,
        path: path.display().to_string(),
        size,
        limit,
    };
    if size > limit {
        return Err(too_large(size));
    }
    if size == 0 {
        return Err(InputError::Empty {
            what,
            path: path.display().to_string(),
        });
    }
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

    #[test]
    fn regular_file_within_limit_is_read() {
        let dir = temp_dir();
        let path = dir.0.join("ok");
        std::fs::write(&path, b"hello").unwrap();
        assert_eq!(read_bounded("kernel", &path, 5).unwrap(), b"hello");
    }

    #[test]
    fn oversized_file_is_refused_before_reading() {
        let dir = temp_dir();
        let path = dir.0.join("big");
        let f = File::create(&path).unwrap();
        // Sparse: 3 GB that would take a long time to read.
        f.set_len(3 << 30).unwrap();
        let err = read_bounded("kernel", &path, 1 << 20).unwrap_err();
        assert!(matches!(err, InputError::TooLarge { size, .. } if size == 3 << 30));
    }

    #[test]
    fn devices_directories_fifos_and_empty_files_are_refused() {
        let scratch = temp_dir();
        let dir = &scratch.0;
        assert!(matches!(
            read_bounded("kernel", Path::new("/dev/zero"), 1 << 20),
            Err(InputError::NotRegular {
                kind: "a character device",
                ..
            })
        ));
        assert!(matches!(
            read_bounded("kernel", dir, 1 << 20),
            Err(InputError::NotRegular {
                kind: "a directory",
                ..
            })
        ));
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_bounded("kernel", &fifo, 1 << 20),
            Err(InputError::NotRegular { kind: "a FIFO", .. })
        ));
        let empty = dir.join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert!(matches!(
            read_bounded("kernel", &empty, 1 << 20),
            Err(InputError::Empty { .. })
        ));
    }
}
