//! The guest's own `/proc/self/...` (and `/proc/<its pid>/...`) files, which on the host would
//! describe rv32vm rather than the guest, as qemu-user fakes them:
//!
//! | file | what the guest sees |
//! |---|---|
//! | `maps` | its own mappings in the Linux rv32 format (names: program file, `[heap]`, `[stack]`, mapped files) |
//! | `cmdline` | its argv, each string NUL-terminated |
//! | `exe` | its program file (open, readlink, stat) |
//! | `mem` | its memory at guest addresses (read, write, pread, pwrite, lseek) |
//! | `stat` | the host's line with the guest's name, threads, sizes, addresses, signal sets |
//! | `auxv` | the auxiliary vector it started with |
//! | `fd` (and `/dev/fd`) | a directory of its own fds (`getdents64`) |
//!
//! Paths through the guest's fds (`/proc/self/fd/N`, `/proc/self/fdinfo/N`, `/dev/fd/N`,
//! `/dev/stdin`, ...) are rewritten to the host fd behind guest fd N ([`fd_path`]): guest fd
//! numbers are not the host's.
//!
//! `cmdline`, `stat` and `auxv` are snapshots taken at open, in a memfd; `maps` too, made
//! again by each read from its start (as Linux makes it at each read). `mem` is a memfd with no
//! contents that only carries the file position and the open mode: reads and writes on it are
//! served from guest memory here, so the guest can never reach rv32vm's own memory.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::fs::FdKind;
use super::mem::perm;
use super::regions::{MapName, Mapping};
use super::signal::SIG_IGN;
use super::syscall::{errno, io_errno, last_errno, SysError, SysResult};
use super::Process;

/// One of the faked per-process files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcSelfFile {
    Maps,
    Cmdline,
    Exe,
    Mem,
    /// The `fd` directory.
    FdDirectory,
    Stat,
    Auxv,
}

/// Largest transfer through `/proc/self/mem` in one call (the rest is a short count).
const MEM_CHUNK: usize = 1 << 20;

/// The entry of `/proc/self/NAME` or `/proc/PID/NAME` named by `path`, when it is one we fake.
pub fn proc_self_file(path: &[u8], pid: u32) -> Option<ProcSelfFile> {
    if matches!(path, b"/dev/fd" | b"/dev/fd/") {
        return Some(ProcSelfFile::FdDirectory);
    }
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
        b"fd" | b"fd/" => Some(ProcSelfFile::FdDirectory),
        b"stat" => Some(ProcSelfFile::Stat),
        b"auxv" => Some(ProcSelfFile::Auxv),
        _ => None,
    }
}

/// `path` rewritten to the host's entry for the guest fd it goes through, when it names one:
/// `/proc/self/fd/N[/...]` (also `/proc/PID/`, `/proc/thread-self/`, and `fdinfo/N`),
/// `/dev/fd/N[/...]` and `/dev/stdin`, `/dev/stdout`, `/dev/stderr`. An N the guest has not
/// open becomes a name the host does not have (ENOENT, as for a closed fd).
pub fn fd_path(path: &[u8], pid: u32, host_fd: impl Fn(u32) -> Option<RawFd>) -> Option<Vec<u8>> {
    let (dir, rest): (&[u8], &[u8]) = match path {
        b"/dev/stdin" => (b"fd", b"0"),
        b"/dev/stdout" => (b"fd", b"1"),
        b"/dev/stderr" => (b"fd", b"2"),
        _ => match path.strip_prefix(b"/dev/fd/") {
            Some(rest) => (b"fd", rest),
            None => {
                let rest = path.strip_prefix(b"/proc/")?;
                let slash = rest.iter().position(|&b| b == b'/')?;
                let who = &rest[..slash];
                if who != b"self" && who != b"thread-self" && who != pid.to_string().as_bytes() {
                    return None;
                }
                let rest = &rest[slash + 1..];
                if let Some(n) = rest.strip_prefix(b"fd/") {
                    (b"fd", n)
                } else {
                    (b"fdinfo", rest.strip_prefix(b"fdinfo/")?)
                }
            }
        },
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let after = &rest[digits..];
    if digits == 0 || !(after.is_empty() || after[0] == b'/') {
        return None;
    }
    // Linux has no "03" (nor a number past the fd range).
    let canonical = digits == 1 || rest[0] != b'0';
    let guest: Option<u32> = std::str::from_utf8(&rest[..digits])
        .ok()?
        .parse()
        .ok()
        .filter(|_| canonical);
    let mut out = b"/proc/self/".to_vec();
    out.extend_from_slice(dir);
    match guest.and_then(host_fd) {
        Some(host) => out.extend_from_slice(format!("/{host}").as_bytes()),
        None => out.extend_from_slice(b"/rv32vm-closed-guest-fd"),
    }
    out.extend_from_slice(after);
    Some(out)
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

    /// The guest's /proc/self/stat: the host's line for rv32vm (ids, state, times, faults,
    /// which are the guest's too), with what differs for the guest put in (numbering as in
    /// proc(5)): its name (2), thread count (20), mapped size (23), rsslim as a 32-bit value
    /// (25), code range (26, 27), initial stack (28), signal sets (31-34) and heap start (47);
    /// the host addresses no guest has (29, 30, 45, 46, 48-51) are 0.
    pub(super) fn stat_text(&mut self) -> Vec<u8> {
        let pending = self.pending_signals();
        let host = std::fs::read("/proc/self/stat").unwrap_or_default();
        let after_name = host
            .iter()
            .rposition(|&b| b == b')')
            .map_or(&[][..], |i| &host[(i + 1).min(host.len())..]);
        let mut fields: Vec<String> = String::from_utf8_lossy(after_name)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let exe = self.exe_path.as_os_str().as_bytes();
        let (mut mapped, mut code_start, mut code_end) = (0u64, u64::MAX, 0u64);
        for (range, mapping) in self.mem.regions().iter() {
            mapped += range.end - range.start;
            let is_program = matches!(&mapping.name, MapName::File(file) if file.path == exe);
            if is_program && self.mem.page_perm(range.start as u32) & perm::X != 0 {
                code_start = code_start.min(range.start);
                code_end = code_end.max(range.end);
            }
        }
        if code_start > code_end {
            (code_start, code_end) = (0, 0);
        }
        let caught_or_ignored = |ignored: bool| {
            (1..=64).fold(0u64, |set, signo| {
                let handler = self.signals.action(signo).handler;
                let this = if ignored {
                    handler == SIG_IGN
                } else {
                    handler > SIG_IGN
                };
                set | (this as u64) << (signo - 1)
            })
        };
        // rsslim is a 32-bit kernel's unsigned long.
        let rsslim = fields
            .get(22)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0);
        let mut set = |field: usize, value: u64| {
            // fields[0] is field 3 (state).
            if let Some(slot) = fields.get_mut(field - 3) {
                *slot = value.to_string();
            }
        };
        set(25, rsslim.min(u64::from(u32::MAX)));
        set(20, self.threads.count() as u64);
        set(23, mapped);
        set(26, code_start);
        set(27, code_end);
        set(28, u64::from(self.start_stack));
        set(29, 0);
        set(30, 0);
        set(31, pending);
        set(32, self.signals.mask);
        set(33, caught_or_ignored(true));
        set(34, caught_or_ignored(false));
        for field in [45, 46, 48, 49, 50, 51] {
            set(field, 0);
        }
        set(47, u64::from(self.brk.start));
        let name_len = self.thread_name.iter().position(|&b| b == 0).unwrap_or(16);
        let mut out = format!("{} (", self.pid).into_bytes();
        out.extend_from_slice(&self.thread_name[..name_len]);
        out.extend_from_slice(b") ");
        out.extend_from_slice(fields.join(" ").as_bytes());
        out.push(b'\n');
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
            ProcSelfFile::Maps => (self.maps_text(), FdKind::ProcMaps),
            ProcSelfFile::Cmdline => (self.cmdline_text(), FdKind::Plain),
            ProcSelfFile::Stat => (self.stat_text(), FdKind::Plain),
            ProcSelfFile::Auxv => (self.saved_auxv.clone(), FdKind::Plain),
            ProcSelfFile::Mem => (Vec::new(), FdKind::GuestMem),
            ProcSelfFile::FdDirectory => {
                if access != libc::O_RDONLY {
                    return Err(errno(libc::EISDIR));
                }
                // Listed once open, so it shows its own fd, as Linux's does.
                (Vec::new(), FdKind::FdDirectory)
            }
        };
        if matches!(kind, FdKind::Plain | FdKind::ProcMaps) && access != libc::O_RDONLY {
            return Err(errno(libc::EACCES));
        }
        let memfd = memfd_with(&contents)?;
        // A fresh open of the memfd gives a description with the guest's access mode (reads
        // of a write-only fd fail as they should) and its own file position.
        let reopened = reopen(memfd.as_raw_fd(), access)?;
        let fd = self.fds.insert_kind(reopened, cloexec, 0, kind)?;
        if kind == FdKind::FdDirectory {
            replace_contents(memfd, &self.fd_directory_records())?;
        }
        Ok(Some(fd))
    }

    /// Before a read of a `/proc/self/maps` fd at `offset` (None: its file position): a read
    /// from the start gets the mappings as they are now, as Linux makes the text again.
    pub(super) fn refresh_maps_at(
        &mut self,
        host: RawFd,
        offset: Option<i64>,
    ) -> Result<(), SysError> {
        // SAFETY: lseek has no memory effects.
        let at = offset.unwrap_or_else(|| unsafe { libc::lseek(host, 0, libc::SEEK_CUR) });
        if at != 0 {
            return Ok(());
        }
        // The guest's fd is read-only: write through a writable open of the same memfd.
        replace_contents(reopen(host, libc::O_WRONLY)?, &self.maps_text())?;
        Ok(())
    }

    /// The `linux_dirent64` records of the guest's `/proc/self/fd` (`.`, `..`, then one
    /// symlink per open fd, as Linux lists it), each `d_off` the offset of the next.
    fn fd_directory_records(&self) -> Vec<u8> {
        const DT_DIR: u8 = 4;
        const DT_LNK: u8 = 10;
        let mut entries: Vec<(u64, u8, Vec<u8>)> =
            vec![(1, DT_DIR, b".".to_vec()), (2, DT_DIR, b"..".to_vec())];
        for fd in self.fds.numbers() {
            entries.push((u64::from(fd) + 3, DT_LNK, fd.to_string().into_bytes()));
        }
        let mut out = Vec::new();
        for (ino, kind, name) in entries {
            // ino, off, reclen, type, name, NUL, padded to 8 bytes.
            let reclen = (8 + 8 + 2 + 1 + name.len() + 1).next_multiple_of(8);
            let next = (out.len() + reclen) as i64;
            out.extend_from_slice(&ino.to_le_bytes());
            out.extend_from_slice(&next.to_le_bytes());
            out.extend_from_slice(&(reclen as u16).to_le_bytes());
            out.push(kind);
            out.extend_from_slice(&name);
            out.resize(out.len() + reclen - (19 + name.len()), 0);
        }
        out
    }

    /// `getdents64` on a `/proc/self/fd` fd: the whole records that fit in `count` bytes,
    /// from the file position, which moves past them.
    pub(super) fn fd_directory_entries(&mut self, host: RawFd, buf: u32, count: u32) -> SysResult {
        // SAFETY: lseek has no memory effects.
        let pos = unsafe { libc::lseek(host, 0, libc::SEEK_CUR) };
        if pos < 0 {
            return Err(last_errno());
        }
        // Records are small: a buffer of `count` (at most 64 KiB) holds what may be taken.
        let mut records = vec![0u8; (count as usize).min(1 << 16)];
        // SAFETY: `records` is writable for its length.
        let n = unsafe { libc::pread(host, records.as_mut_ptr().cast(), records.len(), pos) };
        if n < 0 {
            return Err(last_errno());
        }
        records.truncate(n as usize);
        let mut taken = 0;
        while taken + 19 <= records.len() {
            let reclen = u16::from_le_bytes([records[taken + 16], records[taken + 17]]) as usize;
            if reclen == 0 || taken + reclen > records.len() {
                break;
            }
            taken += reclen;
        }
        if taken == 0 && !records.is_empty() {
            // The next record does not fit in the buffer.
            return Err(errno(libc::EINVAL));
        }
        self.mem.write(buf, &records[..taken])?;
        // SAFETY: lseek has no memory effects.
        if unsafe { libc::lseek(host, pos + taken as i64, libc::SEEK_SET) } < 0 {
            return Err(last_errno());
        }
        Ok(taken as u32)
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
    replace_contents(unsafe { OwnedFd::from_raw_fd(fd) }, contents)
}

/// Make the file open as `fd` (writable) hold exactly `contents`; returns `fd`.
fn replace_contents(fd: OwnedFd, contents: &[u8]) -> Result<OwnedFd, SysError> {
    let mut file = std::fs::File::from(fd);
    file.set_len(0).map_err(io_errno)?;
    file.write_all(contents).map_err(io_errno)?;
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
    fn fd_paths_name_the_host_fd() {
        // Guest fd 3 is host fd 17; nothing else is open.
        let host = |fd: u32| (fd == 3).then_some(17);
        let rewrite = |path: &[u8]| fd_path(path, 42, host).map(|p| String::from_utf8(p).unwrap());
        assert_eq!(
            rewrite(b"/proc/self/fd/3").as_deref(),
            Some("/proc/self/fd/17")
        );
        assert_eq!(
            rewrite(b"/proc/42/fd/3/x").as_deref(),
            Some("/proc/self/fd/17/x")
        );
        assert_eq!(
            rewrite(b"/proc/thread-self/fdinfo/3").as_deref(),
            Some("/proc/self/fdinfo/17")
        );
        assert_eq!(rewrite(b"/dev/fd/3").as_deref(), Some("/proc/self/fd/17"));
        let closed = Some("/proc/self/fd/rv32vm-closed-guest-fd");
        assert_eq!(rewrite(b"/dev/stdin").as_deref(), closed);
        assert_eq!(
            rewrite(b"/proc/self/fd/03").as_deref(),
            closed,
            "not canonical"
        );
        assert_eq!(rewrite(b"/proc/self/fd/4294967299").as_deref(), closed);
        assert_eq!(
            rewrite(b"/proc/self/fd/3x"),
            None,
            "trailing junk: the host's ENOENT"
        );
        assert_eq!(rewrite(b"/proc/self/fd"), None);
        assert_eq!(rewrite(b"/proc/43/fd/3"), None, "another process");
        assert_eq!(rewrite(b"/proc/self/maps"), None);
    }

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
