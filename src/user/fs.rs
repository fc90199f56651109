//! Files: the guest file-descriptor table (guest fd -> host fd) and the file-system syscalls.
//!
//! Guest fds are a table of their own, so the guest can only reach host fds it opened (plus
//! host 0/1/2 as guest 0/1/2): closing guest fd 2 never closes our stderr. Paths are host paths
//! resolved against the host working directory (`AT_FDCWD` passes through). Every guest
//! pointer is checked against the guest page table before the host touches it.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use super::mem::{perm, GuestMemory};
use super::procfs::{fd_path, proc_self_file, ProcSelfFile};
use super::syscall::{
    errno, host_result, last_errno, read_timespec, timespec_of, write_timespec, SysError, SysResult,
};
use super::Process;

/// Highest number of guest fds (the usual RLIMIT_NOFILE soft limit).
pub const MAX_FDS: u32 = 1024;
/// `AT_FDCWD` as the guest passes it.
pub const AT_FDCWD: i32 = -100;
/// Longest path accepted (PATH_MAX, NUL included).
const PATH_MAX: usize = 4096;
/// Largest byte count one read or write moves (the kernel's MAX_RW_COUNT).
const MAX_RW_COUNT: u32 = 0x7fff_f000;
/// Most iovec entries in one readv/writev (UIO_MAXIOV).
const UIO_MAXIOV: u32 = 1024;

const O_CLOEXEC: u32 = 0o2_000_000;
const AT_EMPTY_PATH: u32 = 0x1000;

/// The host side of a guest fd.
#[derive(Debug)]
enum HostFd {
    /// One of the host's standard streams: shared, never closed by the guest.
    Std(RawFd),
    /// A host fd the guest opened; closed when the guest closes it.
    Owned(OwnedFd),
}

/// What a guest fd's host file is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdKind {
    /// Reads and writes go to the host file.
    Plain,
    /// The guest's `/proc/self/mem`: reads and writes are served from guest memory (the host
    /// file only keeps the position and access mode).
    GuestMem,
    /// A signalfd ([`super::signalfd`], the object with this id): reads take the guest's
    /// pending signals; the host file is an eventfd that only carries readiness.
    Signal(u32),
    /// The guest's `/proc/self/fd` directory: the host file is a memfd holding its
    /// `linux_dirent64` records, which `getdents64` serves from the file position.
    FdDirectory,
    /// The guest's `/proc/self/maps`: a memfd with the text, made again by a read from
    /// offset 0 (as Linux makes it at each read), so a reader that rewinds sees changes.
    ProcMaps,
}

/// One open guest file descriptor.
#[derive(Debug)]
pub struct FdEntry {
    host: HostFd,
    /// FD_CLOEXEC as the guest set it.
    pub cloexec: bool,
    /// How reads and writes on it are served.
    pub kind: FdKind,
}

impl FdEntry {
    /// The host fd.
    pub fn raw(&self) -> RawFd {
        match &self.host {
            HostFd::Std(fd) => *fd,
            HostFd::Owned(fd) => fd.as_raw_fd(),
        }
    }
}

/// Guest fd number -> host fd.
#[derive(Debug, Default)]
pub struct FdTable {
    slots: Vec<Option<FdEntry>>,
}

impl FdTable {
    /// A table with guest 0, 1, 2 bound to the host's 0, 1, 2 (those that are open).
    pub fn with_std_streams() -> FdTable {
        let mut t = FdTable::default();
        for fd in 0..3 {
            // SAFETY: F_GETFD only queries the descriptor flags; it has no memory effects.
            let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0;
            t.slots.push(open.then_some(FdEntry {
                host: HostFd::Std(fd),
                cloexec: false,
                kind: FdKind::Plain,
            }));
        }
        t
    }

    /// The host fd behind guest fd `fd`.
    pub fn host(&self, fd: u32) -> Result<RawFd, SysError> {
        self.entry(fd).map(FdEntry::raw)
    }

    /// The open guest fd numbers, in order.
    pub fn numbers(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.is_some())
            .map(|(fd, _)| fd as u32)
    }

    /// The open entries, in fd order.
    pub fn entries(&self) -> impl Iterator<Item = &FdEntry> {
        self.slots.iter().flatten()
    }

    /// The entry of guest fd `fd`.
    pub fn entry(&self, fd: u32) -> Result<&FdEntry, SysError> {
        self.slots
            .get(fd as usize)
            .and_then(Option::as_ref)
            .ok_or(errno(libc::EBADF))
    }

    /// The entry of guest fd `fd`, mutably.
    pub fn entry_mut(&mut self, fd: u32) -> Result<&mut FdEntry, SysError> {
        self.slots
            .get_mut(fd as usize)
            .and_then(Option::as_mut)
            .ok_or(errno(libc::EBADF))
    }

    /// Install `host` at the lowest free guest fd >= `min`.
    pub fn insert(&mut self, host: OwnedFd, cloexec: bool, min: u32) -> Result<u32, SysError> {
        self.insert_kind(host, cloexec, min, FdKind::Plain)
    }

    /// Install `host`, used as `kind`, at the lowest free guest fd >= `min`.
    pub fn insert_kind(
        &mut self,
        host: OwnedFd,
        cloexec: bool,
        min: u32,
        kind: FdKind,
    ) -> Result<u32, SysError> {
        let mut fd = min as usize;
        while fd < self.slots.len() && self.slots[fd].is_some() {
            fd += 1;
        }
        if fd >= MAX_FDS as usize {
            return Err(errno(libc::EMFILE));
        }
        self.put(fd, host, cloexec, kind);
        Ok(fd as u32)
    }

    /// Install `host`, used as `kind`, at guest fd `fd`, closing what was there.
    pub fn insert_at(
        &mut self,
        fd: u32,
        host: OwnedFd,
        cloexec: bool,
        kind: FdKind,
    ) -> Result<(), SysError> {
        if fd >= MAX_FDS {
            return Err(errno(libc::EBADF));
        }
        self.put(fd as usize, host, cloexec, kind);
        Ok(())
    }

    fn put(&mut self, fd: usize, host: OwnedFd, cloexec: bool, kind: FdKind) {
        if self.slots.len() <= fd {
            self.slots.resize_with(fd + 1, || None);
        }
        self.slots[fd] = Some(FdEntry {
            host: HostFd::Owned(host),
            cloexec,
            kind,
        });
    }

    /// The open guest fds in order: (guest fd, entry).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &FdEntry)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(fd, e)| e.as_ref().map(|e| (fd as u32, e)))
    }

    /// Make the host fd table what a host program exec'd by the guest must inherit: each guest
    /// fd without close-on-exec at its own number, every other low host fd close-on-exec.
    /// [`HostFdLayout::restore`] undoes it if the exec fails.
    pub fn place_for_host_exec(&self) -> Result<HostFdLayout, SysError> {
        let targets: Vec<(RawFd, RawFd)> = self
            .iter()
            .filter(|(_, e)| !e.cloexec)
            .map(|(g, e)| (g as RawFd, e.raw()))
            .collect();
        // Everything we move out of the way or keep for later goes above every target.
        let top = targets
            .iter()
            .map(|&(g, _)| g + 1)
            .max()
            .unwrap_or(0)
            .max(3);
        let mut layout = HostFdLayout {
            saved: Vec::new(),
            sources: Vec::new(),
        };
        // Remember what the low host fds are now, to put them back on failure.
        for fd in 0..top {
            // SAFETY: F_GETFD only queries the descriptor flags.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            let copy = if flags >= 0 {
                Some(dup_above(fd, top)?)
            } else {
                None
            };
            layout.saved.push((fd, copy, flags));
        }
        // Copy every source first: a target number may be another target's source.
        for &(guest, host) in &targets {
            layout.sources.push((guest, dup_above(host, top)?));
        }
        for (fd, _, flags) in &layout.saved {
            if *flags >= 0 && !targets.iter().any(|&(g, _)| g == *fd) {
                // SAFETY: sets the close-on-exec flag of an open descriptor; no memory effects.
                unsafe { libc::fcntl(*fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
        }
        for (guest, source) in &layout.sources {
            // SAFETY: dup2 onto a number below `top`; what was there is saved in
            // `layout.saved` (and owned elsewhere, if at all, under the same number, which
            // restore() makes refer to the same open file again). The new fd is inheritable.
            if unsafe { libc::dup2(source.as_raw_fd(), *guest) } < 0 {
                let error = last_errno();
                layout.restore();
                return Err(error);
            }
        }
        Ok(layout)
    }

    /// Close every fd marked close-on-exec (execve).
    pub fn close_on_exec(&mut self) {
        for slot in &mut self.slots {
            if slot.as_ref().is_some_and(|e| e.cloexec) {
                *slot = None;
            }
        }
    }

    /// `close_range(first, last, flags)` on the guest's table: close (or with
    /// CLOSE_RANGE_CLOEXEC mark close-on-exec) every open fd from `first` to `last`.
    pub fn close_range(&mut self, first: u32, last: u32, cloexec: bool) {
        let end = (last as usize).saturating_add(1).min(self.slots.len());
        for slot in self.slots.get_mut(first as usize..end).unwrap_or_default() {
            if cloexec {
                if let Some(entry) = slot {
                    entry.cloexec = true;
                }
            } else {
                *slot = None;
            }
        }
    }

    /// Close guest fd `fd`.
    pub fn close(&mut self, fd: u32) -> Result<(), SysError> {
        match self.slots.get_mut(fd as usize).and_then(Option::take) {
            Some(_) => Ok(()),
            None => Err(errno(libc::EBADF)),
        }
    }
}

/// The host fds as they were before [`FdTable::place_for_host_exec`].
pub struct HostFdLayout {
    /// (fd, a copy of what it was, its F_GETFD flags or -1 if it was closed).
    saved: Vec<(RawFd, Option<OwnedFd>, i32)>,
    /// (guest fd, a copy of its host file) placed at the guest numbers.
    sources: Vec<(RawFd, OwnedFd)>,
}

impl HostFdLayout {
    /// Put every low host fd back as it was (the exec failed).
    pub fn restore(self) {
        for (fd, copy, flags) in &self.saved {
            match copy {
                // SAFETY: dup2 makes `fd` refer to the open file it referred to before (the
                // copy holds it) and fcntl restores its flags; no memory effects.
                Some(copy) => unsafe {
                    libc::dup2(copy.as_raw_fd(), *fd);
                    libc::fcntl(*fd, libc::F_SETFD, *flags);
                },
                // SAFETY: the number was closed before; close what we put there.
                None => unsafe {
                    libc::close(*fd);
                },
            }
        }
    }
}

/// A close-on-exec duplicate of `fd` numbered `min` or higher.
fn dup_above(fd: RawFd, min: RawFd) -> Result<OwnedFd, SysError> {
    // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor and has no memory effects.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, min) };
    if new < 0 {
        return Err(last_errno());
    }
    // SAFETY: `new` is a freshly created descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// A host fd duplicate of `raw` (close-on-exec on the host: our own children never inherit it).
fn dup_host(raw: RawFd) -> Result<OwnedFd, SysError> {
    // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor and has no memory effects.
    let new = unsafe { libc::fcntl(raw, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(last_errno());
    }
    // SAFETY: `new` is a freshly created descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// Guest `struct stat64` (asm-generic, 32-bit): 104 bytes.
fn encode_stat64(st: &libc::stat) -> [u8; 104] {
    let mut b = [0u8; 104];
    let mut put = |off: usize, bytes: &[u8]| b[off..off + bytes.len()].copy_from_slice(bytes);
    put(0, &st.st_dev.to_le_bytes());
    put(8, &st.st_ino.to_le_bytes());
    put(16, &st.st_mode.to_le_bytes());
    put(20, &(st.st_nlink as u32).to_le_bytes());
    put(24, &st.st_uid.to_le_bytes());
    put(28, &st.st_gid.to_le_bytes());
    put(32, &st.st_rdev.to_le_bytes());
    put(48, &st.st_size.to_le_bytes());
    put(56, &(st.st_blksize as i32).to_le_bytes());
    put(64, &st.st_blocks.to_le_bytes());
    put(72, &(st.st_atime as i32).to_le_bytes());
    put(76, &(st.st_atime_nsec as u32).to_le_bytes());
    put(80, &(st.st_mtime as i32).to_le_bytes());
    put(84, &(st.st_mtime_nsec as u32).to_le_bytes());
    put(88, &(st.st_ctime as i32).to_le_bytes());
    put(92, &(st.st_ctime_nsec as u32).to_le_bytes());
    b
}

/// Guest `struct statfs64` (asm-generic, 32-bit words, 64-bit counts): 88 bytes.
const STATFS64_SIZE: u32 = 88;

/// Encode the host kernel's x86-64 `struct statfs` (long f_type, f_bsize, f_blocks, f_bfree,
/// f_bavail, f_files, f_ffree; int f_fsid[2]; long f_namelen, f_frsize, f_flags, f_spare[4])
/// as the guest's `struct statfs64`.
fn encode_statfs64(host: &[u64; 15]) -> [u8; STATFS64_SIZE as usize] {
    let mut b = [0u8; STATFS64_SIZE as usize];
    let mut put = |off: usize, bytes: &[u8]| b[off..off + bytes.len()].copy_from_slice(bytes);
    put(0, &(host[0] as u32).to_le_bytes());
    put(4, &(host[1] as u32).to_le_bytes());
    for i in 0..5 {
        put(8 + i * 8, &host[2 + i].to_le_bytes());
    }
    put(48, &host[7].to_le_bytes()); // f_fsid: two ints, copied as they are
    put(56, &(host[8] as u32).to_le_bytes());
    put(60, &(host[9] as u32).to_le_bytes());
    put(64, &(host[10] as u32).to_le_bytes());
    b
}

impl Process {
    /// Read a guest path argument. `/proc/self/exe` (or `/proc/PID/exe`) names the emulated
    /// program, not us.
    pub(super) fn guest_path(&self, va: u32) -> Result<CString, SysError> {
        let bytes = self
            .mem
            .read_cstr(va, PATH_MAX - 1)?
            .ok_or(errno(libc::ENAMETOOLONG))?;
        if proc_self_file(&bytes, self.pid) == Some(ProcSelfFile::Exe) {
            return CString::new(self.exe_path.as_os_str().as_bytes())
                .map_err(|_| errno(libc::ENOENT));
        }
        let bytes = self.host_fd_path(&bytes).unwrap_or(bytes);
        // read_cstr stops at the first NUL, so there is none inside.
        CString::new(bytes).map_err(|_| errno(libc::EINVAL))
    }

    /// A path through one of the guest's fds (`/proc/self/fd/N`, `/dev/fd/N`, `/dev/stdout`,
    /// ...) as the host names it ([`super::procfs::fd_path`]).
    pub(super) fn host_fd_path(&self, path: &[u8]) -> Option<Vec<u8>> {
        fd_path(path, self.pid, |fd| self.fds.host(fd).ok())
    }

    /// The host dirfd for a guest dirfd used with `path` (absolute paths ignore the dirfd).
    pub(super) fn host_dirfd(&self, dirfd: u32, path: &CString) -> Result<RawFd, SysError> {
        if dirfd as i32 == AT_FDCWD || path.as_bytes().first() == Some(&b'/') {
            Ok(libc::AT_FDCWD)
        } else {
            self.fds.host(dirfd)
        }
    }

    pub(super) fn sys_openat(&mut self, dirfd: u32, path: u32, flags: u32, mode: u32) -> SysResult {
        let path = self.guest_path(path)?;
        if let Some(file) = proc_self_file(path.as_bytes(), self.pid) {
            if let Some(fd) = self.open_proc_self(file, flags)? {
                return Ok(fd);
            }
        }
        let host_dir = self.host_dirfd(dirfd, &path)?;
        // Open flags are the asm-generic values on both sides; add O_CLOEXEC on the host only.
        // SAFETY: `path` is a valid NUL-terminated string; openat has no other memory effects.
        let fd = unsafe {
            libc::openat(
                host_dir,
                path.as_ptr(),
                (flags | O_CLOEXEC) as i32,
                mode as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(last_errno());
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        self.fds.insert(owned, flags & O_CLOEXEC != 0, 0)
    }

    pub(super) fn sys_close(&mut self, fd: u32) -> SysResult {
        self.fds.close(fd).map(|()| 0)
    }

    /// A host pointer and length for a guest buffer the host will write: clamped to the
    /// accessible prefix (like the kernel stopping at the first fault); EFAULT if none is.
    pub(super) fn out_buffer(&mut self, va: u32, len: u32) -> Result<(*mut u8, usize), SysError> {
        let len = len.min(MAX_RW_COUNT);
        let ok = self.mem.accessible_len(va, len as u64, perm::W) as u32;
        if ok == 0 && len != 0 {
            return Err(errno(libc::EFAULT));
        }
        let slice = self.mem.slice_mut(va, ok)?;
        Ok((slice.as_mut_ptr(), ok as usize))
    }

    /// A host pointer and length for a guest buffer the host will read, clamped likewise.
    pub(super) fn in_buffer(&self, va: u32, len: u32) -> Result<(*const u8, usize), SysError> {
        let len = len.min(MAX_RW_COUNT);
        let ok = self.mem.accessible_len(va, len as u64, perm::R) as u32;
        if ok == 0 && len != 0 {
            return Err(errno(libc::EFAULT));
        }
        let slice = self.mem.slice(va, ok)?;
        Ok((slice.as_ptr(), ok as usize))
    }

    pub(super) fn sys_read(&mut self, pc: u32, fd: u32, buf: u32, count: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        match self.fds.entry(fd)?.kind {
            FdKind::GuestMem => return self.guest_mem_io(host, buf, count, None, false),
            FdKind::Signal(id) => return self.signalfd_read(pc, fd, id, buf, count),
            FdKind::FdDirectory => return Err(errno(libc::EISDIR)),
            FdKind::ProcMaps => self.refresh_maps_at(host, None)?,
            FdKind::Plain => {}
        }
        let (ptr, len) = self.out_buffer(buf, count)?;
        // SAFETY: `ptr..ptr+len` is guest-writable memory inside our reservation.
        host_result(unsafe { libc::read(host, ptr.cast(), len) } as i64)
    }

    pub(super) fn sys_write(&mut self, fd: u32, buf: u32, count: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        match self.fds.entry(fd)?.kind {
            FdKind::GuestMem => return self.guest_mem_io(host, buf, count, None, true),
            // A signalfd is not written to (its eventfd is rv32vm's).
            FdKind::Signal(_) => return Err(errno(libc::EINVAL)),
            // Open read-only, as a directory is: the host refuses the write (EBADF).
            FdKind::FdDirectory | FdKind::ProcMaps | FdKind::Plain => {}
        }
        let (ptr, len) = self.in_buffer(buf, count)?;
        // SAFETY: `ptr..ptr+len` is guest-readable memory inside our reservation.
        host_result(unsafe { libc::write(host, ptr.cast(), len) } as i64)
    }

    pub(super) fn sys_pread64(&mut self, fd: u32, buf: u32, count: u32, off: i64) -> SysResult {
        let host = self.fds.host(fd)?;
        match self.fds.entry(fd)?.kind {
            FdKind::GuestMem => return self.guest_mem_io(host, buf, count, Some(off), false),
            FdKind::FdDirectory => return Err(errno(libc::EISDIR)),
            FdKind::ProcMaps => self.refresh_maps_at(host, Some(off))?,
            FdKind::Plain | FdKind::Signal(_) => {}
        }
        let (ptr, len) = self.out_buffer(buf, count)?;
        // SAFETY: as in sys_read.
        host_result(unsafe { libc::pread(host, ptr.cast(), len, off) } as i64)
    }

    pub(super) fn sys_pwrite64(&mut self, fd: u32, buf: u32, count: u32, off: i64) -> SysResult {
        let host = self.fds.host(fd)?;
        if self.fds.entry(fd)?.kind == FdKind::GuestMem {
            return self.guest_mem_io(host, buf, count, Some(off), true);
        }
        let (ptr, len) = self.in_buffer(buf, count)?;
        // SAFETY: as in sys_write.
        host_result(unsafe { libc::pwrite(host, ptr.cast(), len, off) } as i64)
    }

    /// Translate a guest iovec array into host iovecs over checked guest memory.
    pub(super) fn host_iovecs(
        &mut self,
        iov: u32,
        count: u32,
        need: u8,
    ) -> Result<Vec<libc::iovec>, SysError> {
        if count > UIO_MAXIOV {
            return Err(errno(libc::EINVAL));
        }
        let mut raw = vec![0u8; count as usize * 8];
        self.mem.read(iov, &mut raw)?;
        let mut out = Vec::with_capacity(count as usize);
        let mut total: u64 = 0;
        for pair in raw.chunks_exact(8) {
            let base = u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]);
            let len = u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]);
            if len as i32 <= 0 {
                if len != 0 {
                    return Err(errno(libc::EINVAL));
                }
                continue;
            }
            total += len as u64;
            if total > MAX_RW_COUNT as u64 {
                return Err(errno(libc::EINVAL));
            }
            self.mem.check(base, len as u64, need)?;
            let ptr = if need & perm::W != 0 {
                self.mem.slice_mut(base, len)?.as_mut_ptr()
            } else {
                self.mem.slice(base, len)?.as_ptr().cast_mut()
            };
            out.push(libc::iovec {
                iov_base: ptr.cast(),
                iov_len: len as usize,
            });
        }
        Ok(out)
    }

    /// readv/writev/preadv/pwritev (`offset` None for the plain forms).
    pub(super) fn sys_rwv(
        &mut self,
        fd: u32,
        iov: u32,
        count: u32,
        write: bool,
        offset: Option<i64>,
    ) -> SysResult {
        let host = self.fds.host(fd)?;
        match self.fds.entry(fd)?.kind {
            FdKind::GuestMem => return self.guest_mem_iov(host, iov, count, write, offset),
            // Records are read with `read` (the eventfd behind it is rv32vm's).
            FdKind::Signal(_) => return Err(errno(libc::EINVAL)),
            FdKind::FdDirectory if !write => return Err(errno(libc::EISDIR)),
            FdKind::ProcMaps if !write => self.refresh_maps_at(host, offset)?,
            FdKind::FdDirectory | FdKind::ProcMaps | FdKind::Plain => {}
        }
        let need = if write { perm::R } else { perm::W };
        let iovs = self.host_iovecs(iov, count, need)?;
        let n = iovs.len() as i32;
        // SAFETY: every iovec covers guest memory checked for the needed access above, inside
        // our reservation; the host only reads (writev) or writes (readv) those bytes.
        let r = unsafe {
            match (write, offset) {
                (false, None) => libc::readv(host, iovs.as_ptr(), n),
                (true, None) => libc::writev(host, iovs.as_ptr(), n),
                (false, Some(off)) => libc::preadv(host, iovs.as_ptr(), n, off),
                (true, Some(off)) => libc::pwritev(host, iovs.as_ptr(), n, off),
            }
        };
        host_result(r as i64)
    }

    /// `_llseek(fd, offset_high, offset_low, result*, whence)`.
    pub(super) fn sys_llseek(
        &mut self,
        fd: u32,
        hi: u32,
        lo: u32,
        result: u32,
        whence: u32,
    ) -> SysResult {
        let host = self.fds.host(fd)?;
        let offset = ((hi as u64) << 32 | lo as u64) as i64;
        self.mem.check(result, 8, perm::W)?;
        if self.fds.entry(fd)?.kind == FdKind::GuestMem {
            let pos = self.guest_mem_seek(host, offset, whence)?;
            self.mem.write_u64(result, pos)?;
            return Ok(0);
        }
        // SAFETY: lseek has no memory effects.
        let pos = unsafe { libc::lseek(host, offset, whence as i32) };
        if pos < 0 {
            return Err(last_errno());
        }
        self.mem.write_u64(result, pos as u64)?;
        Ok(0)
    }

    pub(super) fn sys_statx(
        &mut self,
        dirfd: u32,
        path: u32,
        flags: u32,
        mask: u32,
        buf: u32,
    ) -> SysResult {
        let path = self.guest_path(path)?;
        let host_dir = self.host_dirfd(dirfd, &path)?;
        self.mem.check(buf, 256, perm::W)?;
        let mut out = [0u8; 256];
        // SAFETY: `path` is NUL-terminated and `out` is 256 bytes, the size of struct statx.
        let r = unsafe {
            libc::syscall(
                libc::SYS_statx,
                host_dir,
                path.as_ptr(),
                flags as i32,
                mask,
                out.as_mut_ptr(),
            )
        };
        host_result(r)?;
        // struct statx has the same layout for every architecture.
        self.mem.write(buf, &out)?;
        Ok(0)
    }

    /// fstatat64 (79) with the asm-generic `struct stat64`; fstat64 (80) is the AT_EMPTY_PATH case.
    pub(super) fn sys_fstatat64(
        &mut self,
        dirfd: u32,
        path: Option<u32>,
        buf: u32,
        flags: u32,
    ) -> SysResult {
        let (host_dir, path) = match path {
            Some(p) => {
                let path = self.guest_path(p)?;
                let dir = self.host_dirfd(dirfd, &path)?;
                (dir, path)
            }
            None => (self.fds.host(dirfd)?, CString::default()),
        };
        let flags = if path.as_bytes().is_empty() {
            flags | AT_EMPTY_PATH
        } else {
            flags
        };
        self.mem.check(buf, 104, perm::W)?;
        // SAFETY: an all-zero stat is a valid value of this plain C struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `path` is NUL-terminated and `st` is a valid out-pointer.
        let r = unsafe { libc::fstatat(host_dir, path.as_ptr(), &mut st, flags as i32) };
        host_result(r as i64)?;
        self.mem.write(buf, &encode_stat64(&st))?;
        Ok(0)
    }

    pub(super) fn sys_statfs64(
        &mut self,
        target: Result<u32, u32>,
        size: u32,
        buf: u32,
    ) -> SysResult {
        if size != STATFS64_SIZE {
            return Err(errno(libc::EINVAL));
        }
        self.mem.check(buf, STATFS64_SIZE as u64, perm::W)?;
        let mut host = [0u64; 15];
        let r = match target {
            Ok(path) => {
                let path = self.guest_path(path)?;
                // SAFETY: NUL-terminated path; `host` is 120 bytes, the x86-64 struct statfs.
                unsafe { libc::syscall(libc::SYS_statfs, path.as_ptr(), host.as_mut_ptr()) }
            }
            Err(fd) => {
                let fd = self.fds.host(fd)?;
                // SAFETY: as above.
                unsafe { libc::syscall(libc::SYS_fstatfs, fd, host.as_mut_ptr()) }
            }
        };
        host_result(r)?;
        self.mem.write(buf, &encode_statfs64(&host))?;
        Ok(0)
    }

    pub(super) fn sys_getdents64(&mut self, fd: u32, buf: u32, count: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        if self.fds.entry(fd)?.kind == FdKind::FdDirectory {
            return self.fd_directory_entries(host, buf, count);
        }
        let (ptr, len) = self.out_buffer(buf, count)?;
        // SAFETY: the buffer is guest-writable memory in our reservation; linux_dirent64 has
        // the same layout on every architecture.
        host_result(unsafe { libc::syscall(libc::SYS_getdents64, host, ptr, len) })
    }

    pub(super) fn sys_readlinkat(
        &mut self,
        dirfd: u32,
        path: u32,
        buf: u32,
        size: u32,
    ) -> SysResult {
        if size as i32 <= 0 {
            return Err(errno(libc::EINVAL));
        }
        let raw = self
            .mem
            .read_cstr(path, PATH_MAX - 1)?
            .ok_or(errno(libc::ENAMETOOLONG))?;
        let target: Vec<u8> = if proc_self_file(&raw, self.pid) == Some(ProcSelfFile::Exe) {
            self.exe_path.as_os_str().as_bytes().to_vec()
        } else {
            let raw = self.host_fd_path(&raw).unwrap_or(raw);
            let path = CString::new(raw).map_err(|_| errno(libc::EINVAL))?;
            let host_dir = self.host_dirfd(dirfd, &path)?;
            let mut out = vec![0u8; PATH_MAX];
            // SAFETY: NUL-terminated path; `out` is PATH_MAX bytes long.
            let n = unsafe {
                libc::readlinkat(host_dir, path.as_ptr(), out.as_mut_ptr().cast(), out.len())
            };
            out.truncate(host_result(n as i64)? as usize);
            out
        };
        let n = target.len().min(size as usize);
        self.mem.write(buf, &target[..n])?;
        Ok(n as u32)
    }

    pub(super) fn sys_faccessat(
        &mut self,
        dirfd: u32,
        path: u32,
        mode: u32,
        flags: u32,
    ) -> SysResult {
        let path = self.guest_path(path)?;
        let host_dir = self.host_dirfd(dirfd, &path)?;
        // SAFETY: NUL-terminated path; no other memory effects.
        let r =
            unsafe { libc::syscall(libc::SYS_faccessat2, host_dir, path.as_ptr(), mode, flags) };
        if r < 0 && last_errno_is(libc::ENOSYS) {
            // Old host kernel: glibc's faccessat emulates the flags.
            // SAFETY: as above.
            let r = unsafe { libc::faccessat(host_dir, path.as_ptr(), mode as i32, flags as i32) };
            return host_result(r as i64);
        }
        host_result(r)
    }

    pub(super) fn sys_unlinkat(&mut self, dirfd: u32, path: u32, flags: u32) -> SysResult {
        let path = self.guest_path(path)?;
        let host_dir = self.host_dirfd(dirfd, &path)?;
        // SAFETY: NUL-terminated path.
        host_result(unsafe { libc::unlinkat(host_dir, path.as_ptr(), flags as i32) } as i64)
    }

    pub(super) fn sys_mkdirat(&mut self, dirfd: u32, path: u32, mode: u32) -> SysResult {
        let path = self.guest_path(path)?;
        let host_dir = self.host_dirfd(dirfd, &path)?;
        // SAFETY: NUL-terminated path.
        host_result(unsafe { libc::mkdirat(host_dir, path.as_ptr(), mode as libc::mode_t) } as i64)
    }

    pub(super) fn sys_renameat2(
        &mut self,
        olddir: u32,
        old: u32,
        newdir: u32,
        new: u32,
        flags: u32,
    ) -> SysResult {
        let old = self.guest_path(old)?;
        let new = self.guest_path(new)?;
        let old_dir = self.host_dirfd(olddir, &old)?;
        let new_dir = self.host_dirfd(newdir, &new)?;
        // SAFETY: NUL-terminated paths.
        host_result(unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                old_dir,
                old.as_ptr(),
                new_dir,
                new.as_ptr(),
                flags,
            )
        })
    }

    pub(super) fn sys_symlinkat(&mut self, target: u32, newdir: u32, link: u32) -> SysResult {
        let target = self
            .mem
            .read_cstr(target, PATH_MAX - 1)?
            .ok_or(errno(libc::ENAMETOOLONG))?;
        let target = CString::new(target).map_err(|_| errno(libc::EINVAL))?;
        let link = self.guest_path(link)?;
        let dir = self.host_dirfd(newdir, &link)?;
        // SAFETY: NUL-terminated strings.
        host_result(unsafe { libc::symlinkat(target.as_ptr(), dir, link.as_ptr()) } as i64)
    }

    pub(super) fn sys_linkat(
        &mut self,
        olddir: u32,
        old: u32,
        newdir: u32,
        new: u32,
        flags: u32,
    ) -> SysResult {
        let old = self.guest_path(old)?;
        let new = self.guest_path(new)?;
        let od = self.host_dirfd(olddir, &old)?;
        let nd = self.host_dirfd(newdir, &new)?;
        // SAFETY: NUL-terminated paths.
        host_result(
            unsafe { libc::linkat(od, old.as_ptr(), nd, new.as_ptr(), flags as i32) } as i64,
        )
    }

    pub(super) fn sys_fchmodat(&mut self, dirfd: u32, path: u32, mode: u32) -> SysResult {
        let path = self.guest_path(path)?;
        let dir = self.host_dirfd(dirfd, &path)?;
        // SAFETY: NUL-terminated path.
        host_result(unsafe { libc::syscall(libc::SYS_fchmodat, dir, path.as_ptr(), mode) })
    }

    pub(super) fn sys_fchownat(
        &mut self,
        dirfd: u32,
        path: u32,
        uid: u32,
        gid: u32,
        flags: u32,
    ) -> SysResult {
        let path = self.guest_path(path)?;
        let dir = self.host_dirfd(dirfd, &path)?;
        // SAFETY: NUL-terminated path.
        host_result(unsafe { libc::fchownat(dir, path.as_ptr(), uid, gid, flags as i32) } as i64)
    }

    pub(super) fn sys_fchmod(&mut self, fd: u32, mode: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        host_result(unsafe { libc::fchmod(host, mode as libc::mode_t) } as i64)
    }

    pub(super) fn sys_fchown(&mut self, fd: u32, uid: u32, gid: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        host_result(unsafe { libc::fchown(host, uid, gid) } as i64)
    }

    pub(super) fn sys_ftruncate64(&mut self, fd: u32, len: i64) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        host_result(unsafe { libc::ftruncate(host, len) } as i64)
    }

    pub(super) fn sys_truncate64(&mut self, path: u32, len: i64) -> SysResult {
        let path = self.guest_path(path)?;
        // SAFETY: NUL-terminated path.
        host_result(unsafe { libc::truncate(path.as_ptr(), len) } as i64)
    }

    pub(super) fn sys_fsync(&mut self, fd: u32, data_only: bool) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        let r = unsafe {
            if data_only {
                libc::fdatasync(host)
            } else {
                libc::fsync(host)
            }
        };
        host_result(r as i64)
    }

    /// `fallocate(fd, mode, offset, len)`, `flock(fd, op)`, `fadvise64_64(fd, offset, len,
    /// advice)` and `sync_file_range(fd, offset, nbytes, flags)`: host calls on the host file.
    pub(super) fn sys_fallocate(&mut self, fd: u32, mode: u32, offset: i64, len: i64) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        host_result(unsafe { libc::fallocate(host, mode as i32, offset, len) } as i64)
    }

    pub(super) fn sys_flock(&mut self, fd: u32, op: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        host_result(unsafe { libc::flock(host, op as i32) } as i64)
    }

    pub(super) fn sys_fadvise(&mut self, fd: u32, offset: i64, len: i64, advice: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects. posix_fadvise returns the error number itself.
        match unsafe { libc::posix_fadvise(host, offset, len, advice as i32) } {
            0 => Ok(0),
            e => Err(errno(e)),
        }
    }

    pub(super) fn sys_sync_file_range(
        &mut self,
        fd: u32,
        offset: i64,
        nbytes: i64,
        flags: u32,
    ) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        host_result(unsafe { libc::sync_file_range(host, offset, nbytes, flags) } as i64)
    }

    /// `memfd_create(name, flags)`: an anonymous host file (MFD_CLOEXEC, MFD_ALLOW_SEALING).
    pub(super) fn sys_memfd_create(&mut self, name: u32, flags: u32) -> SysResult {
        // The kernel's limit: 249 bytes plus the NUL.
        let name = self.mem.read_cstr(name, 249)?.ok_or(errno(libc::EINVAL))?;
        let name = CString::new(name).map_err(|_| errno(libc::EINVAL))?;
        if flags & !(libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) != 0 {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: a NUL-terminated name.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), flags | libc::MFD_CLOEXEC) };
        self.install_new_fd(fd as i64, flags & libc::MFD_CLOEXEC != 0)
    }

    /// Give the fd a host call just created (`r`, or its error) the lowest free guest number,
    /// close-on-exec for the guest if `cloexec` (on the host it is always close-on-exec).
    pub(super) fn install_new_fd(&mut self, r: i64, cloexec: bool) -> SysResult {
        let fd = host_result(r)? as RawFd;
        // SAFETY: the host call just created `fd`, and nothing else owns it.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        self.fds.insert(owned, cloexec, 0)
    }

    /// `inotify_init1(flags)`: a host inotify descriptor; its events (`struct inotify_event`:
    /// three 32-bit fields, a length and the name) read the same on the guest.
    pub(super) fn sys_inotify_init1(&mut self, flags: u32) -> SysResult {
        let flags = flags as i32;
        if flags & !(libc::IN_CLOEXEC | libc::IN_NONBLOCK) != 0 {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: no memory effects.
        let fd = unsafe { libc::inotify_init1(flags | libc::IN_CLOEXEC) };
        self.install_new_fd(fd as i64, flags & libc::IN_CLOEXEC != 0)
    }

    /// `inotify_add_watch(fd, path, mask)` / `inotify_rm_watch(fd, wd)`.
    pub(super) fn sys_inotify_watch(
        &mut self,
        fd: u32,
        path_or_wd: u32,
        mask: Option<u32>,
    ) -> SysResult {
        let host = self.fds.host(fd)?;
        let r = match mask {
            Some(mask) => {
                let path = self.guest_path(path_or_wd)?;
                // SAFETY: a NUL-terminated path.
                unsafe { libc::inotify_add_watch(host, path.as_ptr(), mask) }
            }
            // SAFETY: no memory effects.
            None => unsafe { libc::inotify_rm_watch(host, path_or_wd as i32) },
        };
        host_result(r as i64)
    }

    pub(super) fn sys_close_range(&mut self, first: u32, last: u32, flags: u32) -> SysResult {
        const CLOSE_RANGE_UNSHARE: u32 = 2;
        const CLOSE_RANGE_CLOEXEC: u32 = 4;
        if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 || first > last {
            return Err(errno(libc::EINVAL));
        }
        self.fds
            .close_range(first, last, flags & CLOSE_RANGE_CLOEXEC != 0);
        Ok(0)
    }

    pub(super) fn sys_utimensat(
        &mut self,
        dirfd: u32,
        path: u32,
        times: u32,
        flags: u32,
    ) -> SysResult {
        let mut ts = [0u8; 32];
        let times_ptr = if times == 0 {
            std::ptr::null()
        } else {
            // Two __kernel_timespec {i64 sec; i64 nsec}: the host's struct timespec layout.
            self.mem.read(times, &mut ts)?;
            ts.as_ptr()
        };
        let (dir, path) = if path == 0 {
            (self.fds.host(dirfd)?, None)
        } else {
            let p = self.guest_path(path)?;
            (self.host_dirfd(dirfd, &p)?, Some(p))
        };
        let path_ptr = path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
        // SAFETY: the path is NUL-terminated or NULL (Linux: the fd itself); `ts` holds two
        // timespecs or the pointer is NULL.
        host_result(unsafe { libc::syscall(libc::SYS_utimensat, dir, path_ptr, times_ptr, flags) })
    }

    pub(super) fn sys_pipe2(&mut self, fds_out: u32, flags: u32) -> SysResult {
        self.mem.check(fds_out, 8, perm::W)?;
        let mut host = [0i32; 2];
        // SAFETY: `host` has room for two fds.
        let r = unsafe { libc::pipe2(host.as_mut_ptr(), (flags | O_CLOEXEC) as i32) };
        host_result(r as i64)?;
        self.install_fd_pair(host, flags & O_CLOEXEC != 0, fds_out)
    }

    /// Give the two host fds a host call (`pipe2`, `socketpair`) just created guest numbers
    /// (close-on-exec if `cloexec`) and write those to the guest's `int[2]` at `out_va`.
    pub(super) fn install_fd_pair(
        &mut self,
        host: [i32; 2],
        cloexec: bool,
        out_va: u32,
    ) -> SysResult {
        // SAFETY: both fds were just created and are owned by nobody else.
        let (a, b) = unsafe { (OwnedFd::from_raw_fd(host[0]), OwnedFd::from_raw_fd(host[1])) };
        let g0 = self.fds.insert(a, cloexec, 0)?;
        let g1 = match self.fds.insert(b, cloexec, 0) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = self.fds.close(g0);
                return Err(e);
            }
        };
        let mut out = [0u8; 8];
        out[..4].copy_from_slice(&g0.to_le_bytes());
        out[4..].copy_from_slice(&g1.to_le_bytes());
        self.mem.write(out_va, &out)?;
        Ok(0)
    }

    pub(super) fn sys_dup(&mut self, fd: u32) -> SysResult {
        let kind = self.fds.entry(fd)?.kind;
        let new = dup_host(self.fds.host(fd)?)?;
        self.fds.insert_kind(new, false, 0, kind)
    }

    pub(super) fn sys_dup3(&mut self, old: u32, new: u32, flags: u32) -> SysResult {
        if old == new || flags & !O_CLOEXEC != 0 {
            return Err(errno(libc::EINVAL));
        }
        if new >= MAX_FDS {
            return Err(errno(libc::EBADF));
        }
        let kind = self.fds.entry(old)?.kind;
        let dup = dup_host(self.fds.host(old)?)?;
        self.fds.insert_at(new, dup, flags & O_CLOEXEC != 0, kind)?;
        Ok(new)
    }

    pub(super) fn sys_fcntl64(&mut self, fd: u32, cmd: u32, arg: u32) -> SysResult {
        const F_DUPFD: u32 = 0;
        const F_GETFD: u32 = 1;
        const F_SETFD: u32 = 2;
        const F_GETFL: u32 = 3;
        const F_SETFL: u32 = 4;
        const F_GETLK: u32 = 5;
        const F_SETLK: u32 = 6;
        const F_SETLKW: u32 = 7;
        const F_GETLK64: u32 = 12;
        const F_SETLK64: u32 = 13;
        const F_SETLKW64: u32 = 14;
        const F_OFD_GETLK: u32 = 36;
        const F_OFD_SETLK: u32 = 37;
        const F_OFD_SETLKW: u32 = 38;
        const F_DUPFD_CLOEXEC: u32 = 1030;
        const F_SETPIPE_SZ: u32 = 1031;
        const F_GETPIPE_SZ: u32 = 1032;
        let host = self.fds.host(fd)?;
        match cmd {
            F_DUPFD | F_DUPFD_CLOEXEC => {
                if arg >= MAX_FDS {
                    return Err(errno(libc::EINVAL));
                }
                let kind = self.fds.entry(fd)?.kind;
                let dup = dup_host(host)?;
                self.fds.insert_kind(dup, cmd == F_DUPFD_CLOEXEC, arg, kind)
            }
            F_GETFD => Ok(self.fds.entry(fd)?.cloexec as u32),
            F_SETFD => {
                self.fds.entry_mut(fd)?.cloexec = arg & 1 != 0;
                Ok(0)
            }
            F_GETFL | F_SETFL | F_SETPIPE_SZ | F_GETPIPE_SZ => {
                let host_cmd = match cmd {
                    F_GETFL => libc::F_GETFL,
                    F_SETFL => libc::F_SETFL,
                    F_SETPIPE_SZ => libc::F_SETPIPE_SZ,
                    _ => libc::F_GETPIPE_SZ,
                };
                // SAFETY: these commands take an integer argument and have no memory effects.
                host_result(unsafe { libc::fcntl(host, host_cmd, arg as i32) } as i64)
            }
            F_GETLK64 | F_SETLK64 | F_SETLKW64 | F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW => {
                // Guest struct flock64 and the host's struct flock have the same 32-byte layout.
                let mut lock = [0u8; 32];
                self.mem.read(arg, &mut lock)?;
                let host_cmd = match cmd {
                    F_GETLK64 => libc::F_GETLK,
                    F_SETLK64 => libc::F_SETLK,
                    F_SETLKW64 => libc::F_SETLKW,
                    F_OFD_GETLK => libc::F_OFD_GETLK,
                    F_OFD_SETLK => libc::F_OFD_SETLK,
                    _ => libc::F_OFD_SETLKW,
                };
                // SAFETY: `lock` is a 32-byte buffer laid out as struct flock.
                let r = unsafe { libc::fcntl(host, host_cmd, lock.as_mut_ptr()) };
                host_result(r as i64)?;
                if matches!(cmd, F_GETLK64 | F_OFD_GETLK) {
                    self.mem.write(arg, &lock)?;
                }
                Ok(0)
            }
            F_GETLK | F_SETLK | F_SETLKW => {
                // 32-bit struct flock: {short type, short whence, i32 start, i32 len, i32 pid}.
                let mut g = [0u8; 16];
                self.mem.read(arg, &mut g)?;
                let mut lock = [0u8; 32];
                lock[..4].copy_from_slice(&g[..4]);
                let start = i32::from_le_bytes([g[4], g[5], g[6], g[7]]) as i64;
                let len = i32::from_le_bytes([g[8], g[9], g[10], g[11]]) as i64;
                lock[8..16].copy_from_slice(&start.to_le_bytes());
                lock[16..24].copy_from_slice(&len.to_le_bytes());
                lock[24..28].copy_from_slice(&g[12..16]);
                let host_cmd = match cmd {
                    F_GETLK => libc::F_GETLK,
                    F_SETLK => libc::F_SETLK,
                    _ => libc::F_SETLKW,
                };
                // SAFETY: `lock` is a 32-byte buffer laid out as struct flock.
                let r = unsafe { libc::fcntl(host, host_cmd, lock.as_mut_ptr()) };
                host_result(r as i64)?;
                if cmd == F_GETLK {
                    g[..4].copy_from_slice(&lock[..4]);
                    let start = i64::from_le_bytes(lock[8..16].try_into().unwrap_or_default());
                    let len = i64::from_le_bytes(lock[16..24].try_into().unwrap_or_default());
                    if i32::try_from(start).is_err() || i32::try_from(len).is_err() {
                        return Err(errno(libc::EOVERFLOW));
                    }
                    g[4..8].copy_from_slice(&(start as i32).to_le_bytes());
                    g[8..12].copy_from_slice(&(len as i32).to_le_bytes());
                    g[12..16].copy_from_slice(&lock[24..28]);
                    self.mem.write(arg, &g)?;
                }
                Ok(0)
            }
            _ => {
                tracing::warn!(cmd, "unsupported fcntl64 command");
                Err(errno(libc::EINVAL))
            }
        }
    }

    pub(super) fn sys_ioctl(&mut self, fd: u32, request: u32, arg: u32) -> SysResult {
        const TCGETS: u32 = 0x5401;
        const TCSETS: u32 = 0x5402;
        const TCSETSW: u32 = 0x5403;
        const TCSETSF: u32 = 0x5404;
        const TIOCGPGRP: u32 = 0x540f;
        const TIOCSPGRP: u32 = 0x5410;
        const TIOCGWINSZ: u32 = 0x5413;
        const TIOCSWINSZ: u32 = 0x5414;
        const FIONREAD: u32 = 0x541b;
        const FIONBIO: u32 = 0x5421;
        const FIONCLEX: u32 = 0x5450;
        const FIOCLEX: u32 = 0x5451;
        const TERMIOS_SIZE: usize = 36;
        let host = self.fds.host(fd)?;
        // (host request, bytes, direction: true = the host writes the buffer)
        let (size, out) = match request {
            FIOCLEX | FIONCLEX => {
                self.fds.entry_mut(fd)?.cloexec = request == FIOCLEX;
                return Ok(0);
            }
            TCGETS => (TERMIOS_SIZE, true),
            TCSETS | TCSETSW | TCSETSF => (TERMIOS_SIZE, false),
            TIOCGWINSZ => (8, true),
            TIOCSWINSZ => (8, false),
            TIOCGPGRP | FIONREAD => (4, true),
            TIOCSPGRP | FIONBIO => (4, false),
            _ => {
                tracing::debug!(request, "unsupported ioctl");
                return Err(errno(libc::ENOTTY));
            }
        };
        // termios and winsize have the same kernel layout on riscv32 and x86-64; the buffer is
        // larger than any of them so a host kernel writing more cannot overrun it.
        let mut buf = [0u8; 64];
        if !out {
            self.mem.read(arg, &mut buf[..size])?;
        } else {
            self.mem.check(arg, size as u64, perm::W)?;
        }
        // SAFETY: `buf` is 64 bytes, more than the argument of each request listed above.
        let r = unsafe { libc::ioctl(host, request as libc::c_ulong, buf.as_mut_ptr()) };
        host_result(r as i64)?;
        if out {
            self.mem.write(arg, &buf[..size])?;
        }
        Ok(r as u32)
    }

    pub(super) fn sys_getcwd(&mut self, buf: u32, size: u32) -> SysResult {
        let cwd =
            std::env::current_dir().map_err(|e| errno(e.raw_os_error().unwrap_or(libc::ENOENT)))?;
        let mut bytes = cwd.as_os_str().as_bytes().to_vec();
        bytes.push(0);
        if bytes.len() > size as usize {
            return Err(errno(libc::ERANGE));
        }
        self.mem.write(buf, &bytes)?;
        Ok(bytes.len() as u32)
    }

    pub(super) fn sys_chdir(&mut self, path: u32) -> SysResult {
        let path = self.guest_path(path)?;
        // SAFETY: NUL-terminated path.
        host_result(unsafe { libc::chdir(path.as_ptr()) } as i64)
    }

    pub(super) fn sys_fchdir(&mut self, fd: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        host_result(unsafe { libc::fchdir(host) } as i64)
    }

    /// chroot(path): the host process's root changes, as under qemu-user (rv32vm then opens
    /// every path the guest names, and any program it execs, inside the new root).
    pub(super) fn sys_chroot(&mut self, path: u32) -> SysResult {
        let path = self.guest_path(path)?;
        // SAFETY: NUL-terminated path.
        host_result(unsafe { libc::chroot(path.as_ptr()) } as i64)
    }

    /// mount(source, target, fstype, flags, data), done by the host as under qemu-user (it
    /// needs the privilege it needs there). `data`, when given, is the file system's option
    /// string (what every file system but a few legacy ones takes), at most a page as Linux
    /// copies it.
    pub(super) fn sys_mount(
        &mut self,
        source: u32,
        target: u32,
        fstype: u32,
        flags: u32,
        data: u32,
    ) -> SysResult {
        let optional = |va: u32| -> Result<Option<CString>, SysError> {
            if va == 0 {
                return Ok(None);
            }
            let bytes = self
                .mem
                .read_cstr(va, crate::cpu::tlb::PAGE_SIZE as usize - 1)?
                .ok_or(errno(libc::EINVAL))?;
            CString::new(bytes)
                .map(Some)
                .map_err(|_| errno(libc::EINVAL))
        };
        let source = optional(source)?;
        let fstype = optional(fstype)?;
        let data = optional(data)?;
        let target = self.guest_path(target)?;
        let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
        // SAFETY: NUL-terminated strings or null pointers, alive across the call.
        host_result(unsafe {
            libc::mount(
                ptr(&source),
                target.as_ptr(),
                ptr(&fstype),
                flags as libc::c_ulong,
                ptr(&data).cast(),
            )
        } as i64)
    }

    /// umount2(target, flags), done by the host.
    pub(super) fn sys_umount2(&mut self, target: u32, flags: u32) -> SysResult {
        let target = self.guest_path(target)?;
        // SAFETY: NUL-terminated path.
        host_result(unsafe { libc::umount2(target.as_ptr(), flags as libc::c_int) } as i64)
    }

    /// ppoll_time64(fds, nfds, timeout, sigmask, sigsetsize): waits with `sigmask` (if given)
    /// as the guest's mask; a signal for the guest interrupts it with EINTR.
    pub(super) fn sys_ppoll(
        &mut self,
        pc: u32,
        fds: u32,
        nfds: u32,
        timeout: u32,
        sigmask: u32,
        sigsetsize: u32,
    ) -> SysResult {
        if nfds > MAX_FDS {
            return Err(errno(libc::EINVAL));
        }
        let wait_mask = self.wait_mask(sigmask, sigsetsize)?;
        let mut raw = vec![0u8; nfds as usize * 8];
        self.mem.read(fds, &mut raw)?;
        self.mem.check(fds, raw.len() as u64, perm::W)?;
        let mut host: Vec<libc::pollfd> = Vec::with_capacity(nfds as usize);
        let mut invalid = vec![false; nfds as usize];
        for (i, p) in raw.chunks_exact(8).enumerate() {
            let fd = i32::from_le_bytes([p[0], p[1], p[2], p[3]]);
            let events = i16::from_le_bytes([p[4], p[5]]);
            let host_fd = if fd < 0 {
                -1
            } else {
                match self.fds.host(fd as u32) {
                    Ok(h) => h,
                    Err(_) => {
                        invalid[i] = true;
                        -1
                    }
                }
            };
            host.push(libc::pollfd {
                fd: host_fd,
                events,
                revents: 0,
            });
        }
        let guest_timeout = if timeout == 0 {
            None
        } else {
            Some(read_timespec(&self.mem, timeout)?)
        };
        let invalid_count = invalid.iter().filter(|&&b| b).count();
        let result = if invalid_count > 0 {
            // An invalid fd is an immediate event: do not wait.
            self.host_poll(
                &mut host,
                Some(timespec_of(Duration::ZERO)),
                wait_mask,
                sigmask,
            )
        } else {
            self.host_poll_or_give_way(pc, &mut host, timeout, guest_timeout, wait_mask, sigmask)
        };
        let n = result?;
        for (i, p) in raw.chunks_exact_mut(8).enumerate() {
            let revents = if invalid[i] {
                libc::POLLNVAL
            } else {
                host[i].revents
            };
            p[6..8].copy_from_slice(&revents.to_le_bytes());
        }
        self.mem.write(fds, &raw)?;
        Ok(n + invalid_count as u32)
    }

    /// `pselect6_time64(nfds, readfds*, writefds*, exceptfds*, timeout*, {sigmask*, size}*)`:
    /// glibc's `select` and `pselect`. The three fd sets become one host `ppoll` with the
    /// events Linux's select uses; the sets are rewritten with the ready descriptors and the
    /// timeout with the time left, as Linux does.
    pub(super) fn sys_pselect6(
        &mut self,
        pc: u32,
        nfds: u32,
        sets: [u32; 3],
        timeout: u32,
        sigdata: u32,
    ) -> SysResult {
        // Linux's select masks for readable, writable and exceptional (`POLL*_SET`).
        const READY: [i16; 3] = [
            libc::POLLIN | libc::POLLRDNORM | libc::POLLRDBAND | libc::POLLHUP | libc::POLLERR,
            libc::POLLOUT | libc::POLLWRNORM | libc::POLLWRBAND | libc::POLLERR,
            libc::POLLPRI,
        ];
        const ASKED: [i16; 3] = [libc::POLLIN, libc::POLLOUT, libc::POLLPRI];
        if (nfds as i32) < 0 {
            return Err(errno(libc::EINVAL));
        }
        let nfds = nfds.min(MAX_FDS) as usize;
        // A set is an array of 32-bit longs, bit n of word n / 32 for fd n.
        let bytes = nfds.div_ceil(32) * 4;
        let mut bits = [vec![0u8; bytes], vec![0u8; bytes], vec![0u8; bytes]];
        for (set, &va) in bits.iter_mut().zip(&sets) {
            if va != 0 {
                self.mem.read(va, set)?;
                self.mem.check(va, bytes as u64, perm::W)?;
            }
        }
        let (sigmask, sigsetsize) = if sigdata == 0 {
            (0, 0)
        } else {
            (
                self.mem.read_u32(sigdata)?,
                self.mem.read_u32(sigdata.wrapping_add(4))?,
            )
        };
        let wait_mask = self.wait_mask(sigmask, sigsetsize)?;
        let guest_timeout = if timeout == 0 {
            None
        } else {
            Some(read_timespec(&self.mem, timeout)?)
        };
        let is_set = |set: &[u8], fd: usize| set[fd / 8] & (1 << (fd % 8)) != 0;
        let mut host: Vec<libc::pollfd> = Vec::new();
        let mut guest_fds: Vec<usize> = Vec::new();
        for fd in 0..nfds {
            let events = (0..3)
                .filter(|&k| is_set(&bits[k], fd))
                .fold(0, |e, k| e | ASKED[k]);
            if events != 0 {
                host.push(libc::pollfd {
                    fd: self.fds.host(fd as u32)?,
                    events,
                    revents: 0,
                });
                guest_fds.push(fd);
            }
        }
        self.host_poll_or_give_way(pc, &mut host, timeout, guest_timeout, wait_mask, sigmask)?;
        let mut ready = 0;
        for set in &mut bits {
            set.fill(0);
        }
        for (p, &fd) in host.iter().zip(&guest_fds) {
            if p.revents & libc::POLLNVAL != 0 {
                return Err(errno(libc::EBADF));
            }
            for k in 0..3 {
                if p.events & ASKED[k] != 0 && p.revents & READY[k] != 0 {
                    bits[k][fd / 8] |= 1 << (fd % 8);
                    ready += 1;
                }
            }
        }
        for (set, &va) in bits.iter().zip(&sets) {
            if va != 0 {
                self.mem.write(va, set)?;
            }
        }
        Ok(ready)
    }

    /// A poll-style wait of the guest's (`ppoll`, `pselect6`, the ecall at `pc`) on the
    /// host: until one of `host` is ready or the guest's timeout (`guest_timeout`, from
    /// guest address `timeout_va`; `None`: no limit) ends, but no longer than another guest
    /// thread can wait for the hart (`wait_limit`). With nothing ready by then the call gives
    /// way ([`SysError::WouldBlock`]) and runs again on the thread's next turn, with the same
    /// deadline. The guest's timeout becomes the time left, as Linux leaves it.
    fn host_poll_or_give_way(
        &mut self,
        pc: u32,
        host: &mut [libc::pollfd],
        timeout_va: u32,
        guest_timeout: Option<libc::timespec>,
        wait_mask: u64,
        sigmask: u32,
    ) -> SysResult {
        let deadline = guest_timeout.map(|t| self.threads.retry_deadline(pc, duration_of(&t)));
        let guest_left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let (wait, give_way) = self.host_wait(guest_left);
        let result = match self.host_poll(host, wait.map(timespec_of), wait_mask, sigmask) {
            Ok(0) if give_way => {
                if let Some(d) = deadline {
                    self.threads.retry_until(pc, d);
                }
                Err(SysError::WouldBlock)
            }
            other => other,
        };
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            write_timespec(&mut self.mem, timeout_va, &timespec_of(left))?;
        }
        result
    }

    /// Host `ppoll` of `host` for `timeout` (`None`: no limit) under the guest's signal mask
    /// `wait_mask` (the call's own when `sigmask` is not 0, kept for a handler it lets run).
    fn host_poll(
        &mut self,
        host: &mut [libc::pollfd],
        timeout: Option<libc::timespec>,
        wait_mask: u64,
        sigmask: u32,
    ) -> SysResult {
        // A wait that a watched signal ends runs again for the time left.
        let deadline = timeout.map(|t| Instant::now() + duration_of(&t));
        let result = loop {
            let left = deadline.map(|d| timespec_of(d.saturating_duration_since(Instant::now())));
            let ts_ptr = left
                .as_ref()
                .map_or(std::ptr::null(), |t| t as *const libc::timespec);
            let watched = self.signalfd_watch();
            let result = self.wait_for_signals_watching(wait_mask, watched, |mask| {
                // SAFETY: `host` holds its length of pollfds; the timeout is a valid timespec
                // or NULL.
                unsafe { libc::ppoll(host.as_mut_ptr(), host.len() as libc::nfds_t, ts_ptr, mask) }
            });
            if !self.woken_for_signalfd(watched, wait_mask, &result) {
                break result;
            }
        };
        if sigmask != 0 {
            self.keep_wait_mask_for_handler(wait_mask);
        }
        result
    }
}

/// The length of a (valid, non-negative) timespec.
fn duration_of(t: &libc::timespec) -> Duration {
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Whether the last host error was `code`.
fn last_errno_is(code: i32) -> bool {
    std::io::Error::last_os_error().raw_os_error() == Some(code)
}

/// Read a whole host file region into guest memory (private file mappings), up to EOF.
pub(super) fn read_file_into(
    mem: &mut GuestMemory,
    host: RawFd,
    offset: u64,
    va: u32,
    len: u32,
) -> Result<(), SysError> {
    // The guest may have mapped the file without write access: open the host pages.
    mem.fill_initial(va, len as u64, |mem| {
        read_file_into_open(mem, host, offset, va, len)
    })
}

/// [`read_file_into`] once the host pages are writable.
fn read_file_into_open(
    mem: &mut GuestMemory,
    host: RawFd,
    offset: u64,
    va: u32,
    len: u32,
) -> Result<(), SysError> {
    let mut done = 0u32;
    while done < len {
        let dst = mem.host_ptr(va.wrapping_add(done));
        // SAFETY: `[va, va+len)` was just mapped by the caller, lies inside the reservation
        // and its host pages are writable (`fill_initial`).
        let n = unsafe {
            libc::pread(
                host,
                dst.cast(),
                (len - done) as usize,
                (offset + done as u64) as i64,
            )
        };
        if n < 0 {
            if last_errno_is(libc::EINTR) {
                continue;
            }
            return Err(last_errno());
        }
        if n == 0 {
            break;
        }
        done += n as u32;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devnull() -> OwnedFd {
        let f = std::fs::File::open("/dev/null").expect("open /dev/null");
        OwnedFd::from(f)
    }

    #[test]
    fn lowest_free_fd_is_used() {
        let mut t = FdTable::default();
        assert_eq!(t.insert(devnull(), false, 0).ok(), Some(0));
        assert_eq!(t.insert(devnull(), false, 0).ok(), Some(1));
        assert_eq!(t.insert(devnull(), true, 0).ok(), Some(2));
        assert!(t.close(1).is_ok());
        assert!(t.close(1).is_err(), "double close is EBADF");
        assert_eq!(t.insert(devnull(), false, 0).ok(), Some(1));
        assert_eq!(t.insert(devnull(), false, 10).ok(), Some(10));
        assert_eq!(t.insert(devnull(), false, 10).ok(), Some(11));
        assert!(t.entry(2).map(|e| e.cloexec).unwrap_or(false));
        assert!(t.host(5).is_err());
        assert!(t.host(10_000).is_err());
    }

    #[test]
    fn table_is_bounded() {
        let mut t = FdTable::default();
        assert!(matches!(
            t.insert(devnull(), false, MAX_FDS),
            Err(SysError::Errno(libc::EMFILE))
        ));
        assert!(matches!(
            t.insert_at(MAX_FDS, devnull(), false, FdKind::Plain),
            Err(SysError::Errno(libc::EBADF))
        ));
        assert!(t
            .insert_at(MAX_FDS - 1, devnull(), false, FdKind::Plain)
            .is_ok());
    }

    #[test]
    fn closing_std_streams_keeps_host_fds_open() {
        let mut t = FdTable::with_std_streams();
        if t.host(2).is_ok() {
            assert!(t.close(2).is_ok());
            // SAFETY: F_GETFD only queries flags.
            assert!(unsafe { libc::fcntl(2, libc::F_GETFD) } >= 0);
        }
    }

    #[test]
    fn stat64_layout() {
        // SAFETY: all-zero is a valid stat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        st.st_ino = 0x1122_3344_5566_7788;
        st.st_mode = 0o100644;
        st.st_size = 0x1_0000_0002;
        st.st_mtime = 1234;
        let b = encode_stat64(&st);
        assert_eq!(&b[8..16], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(&b[16..20], &0o100644u32.to_le_bytes());
        assert_eq!(&b[48..56], &0x1_0000_0002u64.to_le_bytes());
        assert_eq!(&b[80..84], &1234u32.to_le_bytes());
    }
}
