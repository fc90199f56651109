//! Syscalls the host runs nearly as the guest asked, as qemu-riscv32 passes them on: creating
//! a FIFO or node (`mknodat`, which `mkfifo` uses), extended attributes (`*xattr`), the
//! process's credentials (`setuid` and friends, `getgroups`/`setgroups`), capabilities,
//! `personality`, `syncfs`, `readahead`, `mlock2`, `preadv2`/`pwritev2`, `pidfd_open`,
//! `pidfd_send_signal` and `sched_rr_get_interval`. Paths are host paths in user mode;
//! buffers are checked guest memory; the layouts involved are the same on both sides (32-bit
//! ids and sizes), except siginfo, which is translated.

use std::ffi::CString;

use super::mem::perm;
use super::syscall::{errno, host_result, SysError, SysResult};
use super::Process;

/// Longest extended attribute value or name list (the kernel's XATTR_SIZE_MAX and
/// XATTR_LIST_MAX).
const XATTR_MAX: u32 = 65536;

/// Which object an extended-attribute call names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum XattrTarget {
    /// A path, following a final symlink (`getxattr`, ...).
    Path,
    /// A path, not following a final symlink (`lgetxattr`, ...).
    Link,
    /// A descriptor (`fgetxattr`, ...).
    Fd,
}

/// Which id-setting call (`setuid`, ...).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SetIds {
    Uid,
    Gid,
    ReUid,
    ReGid,
    ResUid,
    ResGid,
    FsUid,
    FsGid,
}

impl Process {
    /// `mknodat(dirfd, path, mode, dev)`: FIFOs and regular files for anyone, device nodes
    /// as the host allows.
    pub(super) fn sys_mknodat(&mut self, dirfd: u32, path: u32, mode: u32, dev: u32) -> SysResult {
        let path = self.guest_path(path)?;
        let dir = self.host_dirfd(dirfd, &path)?;
        // SAFETY: NUL-terminated path; the raw call takes the device as the kernel's 32-bit
        // encoding, the guest's.
        host_result(unsafe { libc::syscall(libc::SYS_mknodat, dir, path.as_ptr(), mode, dev) })
    }

    /// The host file an xattr call names: a path, or a host descriptor.
    fn xattr_object(
        &self,
        target: XattrTarget,
        object: u32,
    ) -> Result<(Option<CString>, i32), SysError> {
        Ok(match target {
            XattrTarget::Fd => (None, self.fds.host(object)?),
            XattrTarget::Path | XattrTarget::Link => (Some(self.guest_path(object)?), -1),
        })
    }

    /// `[l|f]getxattr(object, name, value*, size)`.
    pub(super) fn sys_getxattr(&mut self, target: XattrTarget, a: [u32; 6]) -> SysResult {
        let (path, fd) = self.xattr_object(target, a[0])?;
        let name = self.guest_path(a[1])?;
        let size = a[3].min(XATTR_MAX);
        let mut value = vec![0u8; size as usize];
        let buf = value.as_mut_ptr().cast();
        // SAFETY: NUL-terminated strings, a buffer of `size` bytes.
        let r = unsafe {
            match (target, &path) {
                (XattrTarget::Fd, _) => libc::fgetxattr(fd, name.as_ptr(), buf, size as usize),
                (XattrTarget::Link, Some(p)) => {
                    libc::lgetxattr(p.as_ptr(), name.as_ptr(), buf, size as usize)
                }
                (_, Some(p)) => libc::getxattr(p.as_ptr(), name.as_ptr(), buf, size as usize),
                (_, None) => return Err(errno(libc::EINVAL)),
            }
        };
        let n = host_result(r as i64)?;
        if size != 0 {
            self.mem.write(a[2], &value[..n as usize])?;
        }
        Ok(n)
    }

    /// `[l|f]setxattr(object, name, value*, size, flags)`.
    pub(super) fn sys_setxattr(&mut self, target: XattrTarget, a: [u32; 6]) -> SysResult {
        let (path, fd) = self.xattr_object(target, a[0])?;
        let name = self.guest_path(a[1])?;
        if a[3] > XATTR_MAX {
            return Err(errno(libc::E2BIG));
        }
        let mut value = vec![0u8; a[3] as usize];
        self.mem.read(a[2], &mut value)?;
        let (buf, len, flags) = (value.as_ptr().cast(), value.len(), a[4] as i32);
        // SAFETY: NUL-terminated strings, a buffer of `len` bytes.
        let r = unsafe {
            match (target, &path) {
                (XattrTarget::Fd, _) => libc::fsetxattr(fd, name.as_ptr(), buf, len, flags),
                (XattrTarget::Link, Some(p)) => {
                    libc::lsetxattr(p.as_ptr(), name.as_ptr(), buf, len, flags)
                }
                (_, Some(p)) => libc::setxattr(p.as_ptr(), name.as_ptr(), buf, len, flags),
                (_, None) => return Err(errno(libc::EINVAL)),
            }
        };
        host_result(r as i64)
    }

    /// `[l|f]listxattr(object, list*, size)`.
    pub(super) fn sys_listxattr(&mut self, target: XattrTarget, a: [u32; 6]) -> SysResult {
        let (path, fd) = self.xattr_object(target, a[0])?;
        let size = a[2].min(XATTR_MAX);
        let mut list = vec![0u8; size as usize];
        let buf = list.as_mut_ptr().cast();
        // SAFETY: NUL-terminated path, a buffer of `size` bytes.
        let r = unsafe {
            match (target, &path) {
                (XattrTarget::Fd, _) => libc::flistxattr(fd, buf, size as usize),
                (XattrTarget::Link, Some(p)) => libc::llistxattr(p.as_ptr(), buf, size as usize),
                (_, Some(p)) => libc::listxattr(p.as_ptr(), buf, size as usize),
                (_, None) => return Err(errno(libc::EINVAL)),
            }
        };
        let n = host_result(r as i64)?;
        if size != 0 {
            self.mem.write(a[1], &list[..n as usize])?;
        }
        Ok(n)
    }

    /// `[l|f]removexattr(object, name)`.
    pub(super) fn sys_removexattr(&mut self, target: XattrTarget, a: [u32; 6]) -> SysResult {
        let (path, fd) = self.xattr_object(target, a[0])?;
        let name = self.guest_path(a[1])?;
        // SAFETY: NUL-terminated strings.
        let r = unsafe {
            match (target, &path) {
                (XattrTarget::Fd, _) => libc::fremovexattr(fd, name.as_ptr()),
                (XattrTarget::Link, Some(p)) => libc::lremovexattr(p.as_ptr(), name.as_ptr()),
                (_, Some(p)) => libc::removexattr(p.as_ptr(), name.as_ptr()),
                (_, None) => return Err(errno(libc::EINVAL)),
            }
        };
        host_result(r as i64)
    }

    /// `setuid(uid)`, `setreuid(r, e)`, `setresuid(r, e, s)` and the gid and fs forms, on the
    /// host process (its C library applies them to every host thread, as the kernel does for
    /// a guest process). `setfsuid`/`setfsgid` return the previous id, as the kernel does.
    pub(super) fn sys_set_ids(&mut self, which: SetIds, a: [u32; 6]) -> SysResult {
        // SAFETY: credential calls have no memory effects.
        let r = unsafe {
            match which {
                SetIds::Uid => libc::setuid(a[0]),
                SetIds::Gid => libc::setgid(a[0]),
                SetIds::ReUid => libc::setreuid(a[0], a[1]),
                SetIds::ReGid => libc::setregid(a[0], a[1]),
                SetIds::ResUid => libc::setresuid(a[0], a[1], a[2]),
                SetIds::ResGid => libc::setresgid(a[0], a[1], a[2]),
                SetIds::FsUid => return Ok(libc::setfsuid(a[0]) as u32),
                SetIds::FsGid => return Ok(libc::setfsgid(a[0]) as u32),
            }
        };
        host_result(r as i64)
    }

    /// `getgroups(size, list*)`: the host process's supplementary groups.
    pub(super) fn sys_getgroups(&mut self, size: u32, list: u32) -> SysResult {
        const NGROUPS_MAX: u32 = 65536;
        let size = size.min(NGROUPS_MAX);
        let mut groups = vec![0 as libc::gid_t; size as usize];
        // SAFETY: a buffer of `size` gids.
        let n = host_result(unsafe { libc::getgroups(size as i32, groups.as_mut_ptr()) } as i64)?;
        let bytes: Vec<u8> = groups[..n as usize]
            .iter()
            .flat_map(|g| g.to_le_bytes())
            .collect();
        if size != 0 {
            self.mem.write(list, &bytes)?;
        }
        Ok(n)
    }

    /// `setgroups(size, list*)`.
    pub(super) fn sys_setgroups(&mut self, size: u32, list: u32) -> SysResult {
        if size > 65536 {
            return Err(errno(libc::EINVAL));
        }
        let mut raw = vec![0u8; size as usize * 4];
        self.mem.read(list, &mut raw)?;
        let groups: Vec<libc::gid_t> = raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // SAFETY: a buffer of `size` gids.
        host_result(unsafe { libc::setgroups(groups.len(), groups.as_ptr()) } as i64)
    }

    /// `capget(header*, data*)` and `capset(header*, data*)`: the header (version, pid) and
    /// up to two data triples have the same layout on both sides.
    pub(super) fn sys_capability(&mut self, header: u32, data: u32, set: bool) -> SysResult {
        let mut head = [0u8; 8];
        self.mem.read(header, &mut head)?;
        // Version 1 has one triple, versions 2 and 3 two; a wrong version makes the kernel
        // write the one it prefers into the header and fail (EINVAL).
        let triples = if head[..4] == 0x1998_0330u32.to_le_bytes() {
            1
        } else {
            2
        };
        let mut body = vec![0u8; 12 * triples];
        if set || data != 0 {
            if set {
                self.mem.read(data, &mut body)?;
            } else {
                self.mem.check(data, body.len() as u64, perm::W)?;
            }
        }
        let data_ptr = if data == 0 {
            std::ptr::null_mut()
        } else {
            body.as_mut_ptr()
        };
        let number = if set {
            libc::SYS_capset
        } else {
            libc::SYS_capget
        };
        // SAFETY: an 8-byte header and a buffer of the triples its version has (or NULL).
        let r = unsafe { libc::syscall(number, head.as_mut_ptr(), data_ptr) };
        self.mem.write(header, &head)?;
        let n = host_result(r)?;
        if !set && data != 0 {
            self.mem.write(data, &body)?;
        }
        Ok(n)
    }

    /// `preadv2`/`pwritev2(fd, iov, count, pos_lo, pos_hi, flags)`: position -1 is the
    /// descriptor's own; the RWF_* flags go to the host.
    pub(super) fn sys_rwv2(&mut self, a: [u32; 6], write: bool) -> SysResult {
        let offset = ((a[4] as u64) << 32 | a[3] as u64) as i64;
        let flags = a[5] as i32;
        if flags == 0 {
            let offset = (offset != -1).then_some(offset);
            return self.sys_rwv(a[0], a[1], a[2], write, offset);
        }
        let host = self.fds.host(a[0])?;
        if !matches!(
            self.fds.entry(a[0])?.kind,
            super::fs::FdKind::Plain | super::fs::FdKind::ProcMaps
        ) {
            return Err(errno(libc::EOPNOTSUPP));
        }
        let need = if write { perm::R } else { perm::W };
        let iovs = self.host_iovecs(a[1], a[2], need)?;
        let n = iovs.len() as i32;
        // SAFETY: every iovec covers checked guest memory inside our reservation.
        let r = unsafe {
            if write {
                libc::pwritev2(host, iovs.as_ptr(), n, offset, flags)
            } else {
                libc::preadv2(host, iovs.as_ptr(), n, offset, flags)
            }
        };
        host_result(r as i64)
    }

    /// `pidfd_open(pid, flags)`: a host pidfd (the guest's children are host processes).
    pub(super) fn sys_pidfd_open(&mut self, pid: u32, flags: u32) -> SysResult {
        // Our own threads' ids are not host ids: they name this process.
        let pid = if self.threads.has(pid) { self.pid } else { pid };
        // SAFETY: no memory effects.
        let r = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as i32, flags) };
        self.install_new_fd(r, true)
    }

    /// `pidfd_send_signal(pidfd, sig, info*, flags)`: without siginfo, or with the guest's
    /// si_code and si_value (as `rt_sigqueueinfo` sends them).
    pub(super) fn sys_pidfd_send_signal(&mut self, a: [u32; 6]) -> SysResult {
        let host = self.fds.host(a[0])?;
        let signo = a[1] as i32;
        let mut info_buf = [0u8; 128];
        let info_ptr = if a[2] == 0 {
            std::ptr::null_mut()
        } else {
            let mut guest = [0u8; 24];
            self.mem.read(a[2], &mut guest)?;
            // signo, errno, code, then (pid, uid, value) at 12 in the guest's, 16 in the host's.
            info_buf[..12].copy_from_slice(&guest[..12]);
            info_buf[16..28].copy_from_slice(&guest[12..24]);
            info_buf.as_mut_ptr()
        };
        // SAFETY: a 128-byte siginfo or NULL.
        host_result(unsafe {
            libc::syscall(libc::SYS_pidfd_send_signal, host, signo, info_ptr, a[3])
        })
    }

    /// `sched_rr_get_interval_time64(pid, timespec*)`.
    pub(super) fn sys_sched_rr_get_interval(&mut self, pid: u32, out: u32) -> SysResult {
        let pid = if self.threads.has(pid) { 0 } else { pid as i32 };
        // SAFETY: all-zero is a valid timespec; the call only writes it.
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: a valid out-pointer.
        host_result(unsafe { libc::sched_rr_get_interval(pid, &mut ts) } as i64)?;
        super::syscall::write_timespec(&mut self.mem, out, &ts)?;
        Ok(0)
    }
}
