//! The guest's own `/proc/self/...` (and `/proc/<its pid>/...`) files, which on the host would
//! describe rv32vm rather than the guest, as qemu-user fakes them:
//!
//! | file | what the guest sees |
//! |---|---|
//! | `maps` | its own mappings in the Linux rv32 format (names: program file, `[heap]`, `[stack]`, mapped files) |
//! | `cmdline` | its argv, each string NUL-terminated |
//! | `exe` | its program file (open, readlink, stat) |
//! | `mem` | its memory at guest addresses (read, write, pread, pwrite, lseek) |
//!
//! `maps` and `cmdline` are snapshots taken at open, in a memfd. `mem` is a memfd with no
//! contents that only carries the file position and the open mode: reads and writes on it are
//! served from guest memory here, so the guest can never reach rv32vm's own memory.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::fs::FdKind;
use super::mem::perm;
use super::regions::{MapName, Mapping};
use super::syscall::{errno, last_errno, SysError, SysResult};
use super::Process;

/// One of the faked per-process files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcSelfFile {
    Maps,
    Cmdline,
    Exe,
    Mem,
}

/// Largest transfer through `/proc/self/mem` in one call (the rest is a short count).
const MEM_CHUNK: usize = 1 << 20;

/// The entry of `/proc/self/NAME` or `/proc/PID/NAME` named by `path`, when it is one we fake.
pub fn proc_self_file(path: &[u8], pid: u32) -> Option<ProcSelfFile> {
    let rest = path.strip_prefix(b"/proc/")?;
    let slash = rest.iter().position(|&b| b == b'/')?;
    let (who, name) = (&rest[..slash], &rest[slash + 1..]);
    if who != b"self" && who != pid.to_string().as_bytes() {
        return None;
    }
    match name {
        b"maps" => Some(ProcSelfFile::Maps),
        b"cmdline" => Some(ProcSelfFile::Cmdline),
        b"exe" => Some(ProcSelfFile::Exe),
        b"mem" => Some(ProcSelfFile::Mem),
        _ => None,
    }
}

/// One line of /proc/self/maps being assembled.
struct MapsLine {
    start: u64,
    end: u64,
    access: u8,
    mapping: Mapping,
}

impl MapsLine {
    /// The line in the Linux format, padded as a 32-bit kernel pads it (the name starts after
    /// column 48).
    fn render(&self, out: &mut Vec<u8>) {
        let flag = |bit: u8, c: char| if self.access & bit != 0 { c } else { '-' };
        let (offset, dev, inode, name): (u64, u64, u64, &[u8]) = match &self.mapping.name {
            MapName::Anonymous => (0, 0, 0, b""),
            MapName::Special(name) => (0, 0, 0, name.as_bytes()),
            MapName::File(file) => (self.mapping.offset, file.dev, file.inode, &file.path),
        };
        let mut line = format!(
            "{:08x}-{:08x} {}{}{}{} {:08x} {:02x}:{:02x} {} ",
            self.start,
            self.end,
            flag(perm::R, 'r'),
            flag(perm::W, 'w'),
            flag(perm::X, 'x'),
            if self.mapping.shared.is_some() {
                's'
            } else {
                'p'
            },
            offset,
            libc::major(dev),
            libc::minor(dev),
            inode
        )
        .into_bytes();
        if !name.is_empty() {
            const NAME_COLUMN: usize = 48;
            while line.len() < NAME_COLUMN {
                line.push(b' ');
            }
            line.push(b' ');
            line.extend_from_slice(name);
        }
        line.push(b'\n');
        out.extend_from_slice(&line);
    }
}

impl Process {
    /// The text of the guest's /proc/self/maps: one line per run of pages with the same
    /// mapping and permissions, neighbours that continue each other merged as the kernel
    /// merges its VMAs.
    pub(super) fn maps_text(&self) -> Vec<u8> {
        const PAGE: u64 = 4096;
        let mut lines: Vec<MapsLine> = Vec::new();
        for (range, mapping) in self.mem.regions().iter() {
            let mut page = range.start;
            while page < range.end {
                let bits = self.mem.page_perm(page as u32);
                let access = bits & perm::ACCESS;
                if bits & perm::MAPPED == 0 {
                    page += PAGE;
                    continue;
                }
                let mut at = mapping.clone();
                if matches!(at.name, MapName::File(_)) {
                    at.offset += page - range.start;
                }
                match lines.last_mut() {
                    Some(last)
                        if last.end == page
                            && last.access == access
                            && last.mapping.continues_into(last.end - last.start, &at) =>
                    {
                        last.end = page + PAGE;
                    }
                    _ => lines.push(MapsLine {
                        start: page,
                        end: page + PAGE,
                        access,
                        mapping: at,
                    }),
                }
                page += PAGE;
            }
        }
        let mut out = Vec::new();
        for line in &lines {
            line.render(&mut out);
        }
        out
    }

    /// The guest's argv as /proc/self/cmdline shows it.
    fn cmdline_text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for arg in &self.args {
            out.extend_from_slice(arg);
            out.push(0);
        }
        out
    }

    /// Open a faked /proc/self file with the guest's open `flags`. `Ok(None)`: not faked here
    /// (the caller opens the host path, which for `exe` it has already redirected).
    pub(super) fn open_proc_self(
        &mut self,
        file: ProcSelfFile,
        flags: u32,
    ) -> Result<Option<u32>, SysError> {
        const O_ACCMODE: u32 = 3;
        const O_CLOEXEC: u32 = 0o2_000_000;
        let cloexec = flags & O_CLOEXEC != 0;
        let access = (flags & O_ACCMODE) as i32;
        let (contents, kind) = match file {
            ProcSelfFile::Exe => return Ok(None),
            ProcSelfFile::Maps => (self.maps_text(), FdKind::Plain),
            ProcSelfFile::Cmdline => (self.cmdline_text(), FdKind::Plain),
            ProcSelfFile::Mem => (Vec::new(), FdKind::GuestMem),
        };
        if kind == FdKind::Plain && access != libc::O_RDONLY {
            return Err(errno(libc::EACCES));
        }
        let memfd = memfd_with(&contents)?;
        // A fresh open of the memfd gives a description with the guest's access mode (reads
        // of a write-only fd fail as they should) and its own file position.
        let reopened = reopen(memfd.as_raw_fd(), access)?;
        self.fds.insert_kind(reopened, cloexec, 0, kind).map(Some)
    }

    /// read/write/pread/pwrite on a `/proc/self/mem` fd: guest memory at the file position
    /// (or `offset`), with the kernel's forced access (protection ignored, unmapped pages
    /// fail with EIO).
    pub(super) fn guest_mem_io(
        &mut self,
        host: RawFd,
        buf: u32,
        count: u32,
        offset: Option<i64>,
        write: bool,
    ) -> SysResult {
        // SAFETY: F_GETFL has no memory effects.
        let fl = unsafe { libc::fcntl(host, libc::F_GETFL) };
        if fl < 0 {
            return Err(last_errno());
        }
        let allowed = match fl & libc::O_ACCMODE {
            libc::O_RDWR => true,
            libc::O_WRONLY => write,
            _ => !write,
        };
        if !allowed {
            return Err(errno(libc::EBADF));
        }
        let pos = match offset {
            Some(off) => off,
            // SAFETY: lseek has no memory effects.
            None => unsafe { libc::lseek(host, 0, libc::SEEK_CUR) },
        };
        if pos < 0 {
            return Err(errno(libc::EINVAL));
        }
        let count = (count as usize).min(MEM_CHUNK);
        if count == 0 {
            return Ok(0);
        }
        // Guest addresses end at 4 GiB: nothing is mapped past it.
        let Ok(addr) = u32::try_from(pos) else {
            return Err(errno(libc::EIO));
        };
        let count = count.min((1u64 << 32).saturating_sub(pos as u64) as usize);
        let done = if write {
            let data = self.mem.slice(buf, count as u32)?.to_vec();
            // A write into code is noted by write_forced: decoded blocks are dropped.
            self.mem.write_forced(addr, &data)
        } else {
            self.mem.check(buf, count as u64, perm::W)?;
            let mut data = vec![0u8; count];
            let n = self.mem.read_forced(addr, &mut data);
            self.mem.write(buf, &data[..n])?;
            n
        };
        if done == 0 {
            return Err(errno(libc::EIO));
        }
        if offset.is_none() {
            // SAFETY: lseek has no memory effects.
            unsafe { libc::lseek(host, pos + done as i64, libc::SEEK_SET) };
        }
        Ok(done as u32)
    }

    /// readv/writev/preadv/pwritev on a `/proc/self/mem` fd: one transfer per iovec, stopping
    /// at the first short one.
    pub(super) fn guest_mem_iov(
        &mut self,
        host: RawFd,
        iov: u32,
        count: u32,
        write: bool,
        offset: Option<i64>,
    ) -> SysResult {
        const UIO_MAXIOV: u32 = 1024;
        if count > UIO_MAXIOV {
            return Err(errno(libc::EINVAL));
        }
        let mut total = 0u32;
        for i in 0..count {
            let entry = iov.wrapping_add(8 * i);
            let base = self.mem.read_u32(entry)?;
            let len = self.mem.read_u32(entry.wrapping_add(4))?;
            if len == 0 {
                continue;
            }
            let at = offset.map(|o| o + total as i64);
            match self.guest_mem_io(host, base, len, at, write) {
                Ok(n) => {
                    total += n;
                    if n < len {
                        break;
                    }
                }
                Err(e) if total == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(total)
    }

    /// lseek on a `/proc/self/mem` fd: SEEK_SET and SEEK_CUR move the position anywhere, as
    /// the kernel's mem_lseek; SEEK_END has no meaning.
    pub(super) fn guest_mem_seek(
        &mut self,
        host: RawFd,
        offset: i64,
        whence: u32,
    ) -> Result<u64, SysError> {
        const SEEK_SET: u32 = 0;
        const SEEK_CUR: u32 = 1;
        let target = match whence {
            SEEK_SET => offset,
            SEEK_CUR => {
                // SAFETY: lseek has no memory effects.
                let cur = unsafe { libc::lseek(host, 0, libc::SEEK_CUR) };
                cur.checked_add(offset).ok_or(errno(libc::EINVAL))?
            }
            _ => return Err(errno(libc::EINVAL)),
        };
        // SAFETY: lseek has no memory effects.
        let r = unsafe { libc::lseek(host, target, libc::SEEK_SET) };
        if r < 0 {
            return Err(last_errno());
        }
        Ok(r as u64)
    }
}

/// A memfd holding `contents`.
fn memfd_with(contents: &[u8]) -> Result<OwnedFd, SysError> {
    // SAFETY: the name is a NUL-terminated literal; memfd_create has no other memory effects.
    let fd = unsafe { libc::memfd_create(c"rv32vm-proc-self".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(owned);
    file.write_all(contents)
        .map_err(|e| errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
    Ok(OwnedFd::from(file))
}

/// A new open file description of the file behind host fd `fd`, with access mode `access`.
fn reopen(fd: RawFd, access: i32) -> Result<OwnedFd, SysError> {
    let path = CString::new(format!("/proc/self/fd/{fd}")).map_err(|_| errno(libc::EINVAL))?;
    // SAFETY: NUL-terminated path; open has no other memory effects.
    let new = unsafe { libc::open(path.as_ptr(), access | libc::O_CLOEXEC) };
    if new < 0 {
        return Err(last_errno());
    }
    // SAFETY: `new` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_self_paths() {
        assert_eq!(
            proc_self_file(b"/proc/self/maps", 42),
            Some(ProcSelfFile::Maps)
        );
        assert_eq!(proc_self_file(b"/proc/42/exe", 42), Some(ProcSelfFile::Exe));
        assert_eq!(proc_self_file(b"/proc/43/exe", 42), None, "another process");
        assert_eq!(proc_self_file(b"/proc/self/status", 42), None);
        assert_eq!(proc_self_file(b"/proc/self", 42), None);
        assert_eq!(proc_self_file(b"/proc/self/mem/x", 42), None);
    }
}
