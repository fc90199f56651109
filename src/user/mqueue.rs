//! POSIX message queues (`mq_open`, `mq_send`, `mq_receive`, ...) as the host's: a queue
//! descriptor is a host descriptor (so `poll`, `select` and `epoll` see it, and a forked child
//! or another process shares the queue by name). The guest's `struct mq_attr` has 32-bit
//! fields where the host's has 64-bit ones; timeouts are `struct timespec` (time64) on both
//! sides. `mq_notify` takes SIGEV_SIGNAL and SIGEV_NONE; musl's SIGEV_THREAD (a netlink
//! socket) is EINVAL.

use super::syscall::{errno, host_result, read_timespec, SysResult};
use super::Process;

/// The guest's `struct mq_attr`: four 32-bit `long`s and four reserved ones.
const GUEST_ATTR_SIZE: usize = 32;

impl Process {
    /// The host `mq_attr` of the guest's at `va` (flags, maxmsg, msgsize, curmsgs).
    fn read_mq_attr(&self, va: u32) -> Result<libc::mq_attr, super::syscall::SysError> {
        let mut b = [0u8; GUEST_ATTR_SIZE];
        self.mem.read(va, &mut b)?;
        let field =
            |i: usize| i32::from_le_bytes([b[i * 4], b[i * 4 + 1], b[i * 4 + 2], b[i * 4 + 3]]);
        // SAFETY: all-zero is a valid mq_attr.
        let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
        attr.mq_flags = field(0) as libc::c_long;
        attr.mq_maxmsg = field(1) as libc::c_long;
        attr.mq_msgsize = field(2) as libc::c_long;
        attr.mq_curmsgs = field(3) as libc::c_long;
        Ok(attr)
    }

    /// Write host `attr` as the guest's `struct mq_attr` at `va`.
    fn write_mq_attr(
        &mut self,
        va: u32,
        attr: &libc::mq_attr,
    ) -> Result<(), super::syscall::SysError> {
        let mut b = [0u8; GUEST_ATTR_SIZE];
        for (i, v) in [
            attr.mq_flags,
            attr.mq_maxmsg,
            attr.mq_msgsize,
            attr.mq_curmsgs,
        ]
        .into_iter()
        .enumerate()
        {
            b[i * 4..i * 4 + 4].copy_from_slice(&(v as i32).to_le_bytes());
        }
        self.mem.write(va, &b)?;
        Ok(())
    }

    /// `mq_open(name, oflag, mode, attr*)` (musl passes the name without its leading '/').
    pub(super) fn sys_mq_open(&mut self, name: u32, oflag: u32, mode: u32, attr: u32) -> SysResult {
        let name = self.guest_path(name)?;
        let attr = if attr != 0 && oflag as i32 & libc::O_CREAT != 0 {
            Some(self.read_mq_attr(attr)?)
        } else {
            None
        };
        let attr_ptr = attr
            .as_ref()
            .map_or(std::ptr::null(), |a| a as *const libc::mq_attr);
        // SAFETY: a NUL-terminated name and a valid mq_attr or NULL; the raw call takes the
        // name as the guest gave it.
        let r = unsafe {
            libc::syscall(
                libc::SYS_mq_open,
                name.as_ptr(),
                oflag as i32,
                mode,
                attr_ptr,
            )
        };
        self.install_new_fd(r, oflag as i32 & libc::O_CLOEXEC != 0)
    }

    /// `mq_unlink(name)`.
    pub(super) fn sys_mq_unlink(&mut self, name: u32) -> SysResult {
        let name = self.guest_path(name)?;
        // SAFETY: a NUL-terminated name.
        host_result(unsafe { libc::syscall(libc::SYS_mq_unlink, name.as_ptr()) })
    }

    /// The host form of an optional guest timeout at `va` (an absolute CLOCK_REALTIME time).
    fn mq_timeout(&self, va: u32) -> Result<Option<libc::timespec>, super::syscall::SysError> {
        if va == 0 {
            return Ok(None);
        }
        read_timespec(&self.mem, va).map(Some)
    }

    /// Whether the guest's absolute CLOCK_REALTIME timeout at `va` has passed (an unreadable
    /// or invalid one counts as passed: the host call then reports it).
    pub(super) fn mq_timeout_passed(&self, va: u32) -> bool {
        let Ok(Some(t)) = self.mq_timeout(va) else {
            return true;
        };
        super::threads::futex_deadline(&t, false, true) <= std::time::Instant::now()
    }

    /// `mq_timedsend_time64(mqd, msg*, len, prio, abs_timeout*)`.
    pub(super) fn sys_mq_timedsend(&mut self, a: [u32; 6]) -> SysResult {
        let host = self.fds.host(a[0])?;
        let (ptr, len) = self.in_buffer(a[1], a[2])?;
        if len < a[2] as usize {
            return Err(errno(libc::EFAULT));
        }
        let timeout = self.mq_timeout(a[4])?;
        let t = timeout
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `ptr..ptr+len` is readable guest memory; a valid timespec or NULL.
        host_result(unsafe { libc::syscall(libc::SYS_mq_timedsend, host, ptr, len, a[3], t) })
    }

    /// `mq_timedreceive_time64(mqd, msg*, len, prio*, abs_timeout*)`.
    pub(super) fn sys_mq_timedreceive(&mut self, a: [u32; 6]) -> SysResult {
        let host = self.fds.host(a[0])?;
        let timeout = self.mq_timeout(a[4])?;
        let t = timeout
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        if a[3] != 0 {
            self.mem.check(a[3], 4, super::mem::perm::W)?;
        }
        let (ptr, len) = self.out_buffer(a[1], a[2])?;
        let mut prio: libc::c_uint = 0;
        // SAFETY: `ptr..ptr+len` is writable guest memory; valid out-pointers.
        let n = host_result(unsafe {
            libc::syscall(libc::SYS_mq_timedreceive, host, ptr, len, &mut prio, t)
        })?;
        if a[3] != 0 {
            self.mem.write_u32(a[3], prio)?;
        }
        Ok(n)
    }

    /// `mq_getsetattr(mqd, new*, old*)`: only O_NONBLOCK of `new` changes anything.
    pub(super) fn sys_mq_getsetattr(&mut self, mqd: u32, new: u32, old: u32) -> SysResult {
        let host = self.fds.host(mqd)?;
        let new = if new != 0 {
            Some(self.read_mq_attr(new)?)
        } else {
            None
        };
        let new_ptr = new
            .as_ref()
            .map_or(std::ptr::null(), |a| a as *const libc::mq_attr);
        // SAFETY: all-zero is a valid mq_attr.
        let mut prev: libc::mq_attr = unsafe { std::mem::zeroed() };
        // SAFETY: valid mq_attr pointers (or NULL for `new`).
        host_result(unsafe {
            libc::syscall(
                libc::SYS_mq_getsetattr,
                host,
                new_ptr,
                &mut prev as *mut libc::mq_attr,
            )
        })?;
        if old != 0 {
            self.write_mq_attr(old, &prev)?;
        }
        Ok(0)
    }

    /// `mq_notify(mqd, sigevent*)`: SIGEV_SIGNAL (a forwarded signal, with its value) or
    /// SIGEV_NONE; NULL removes the registration.
    pub(super) fn sys_mq_notify(&mut self, mqd: u32, event: u32) -> SysResult {
        const SIGEV_SIGNAL: i32 = 0;
        const SIGEV_NONE: i32 = 1;
        let host = self.fds.host(mqd)?;
        if event == 0 {
            // SAFETY: NULL unregisters.
            return host_result(unsafe {
                libc::syscall(
                    libc::SYS_mq_notify,
                    host,
                    std::ptr::null::<libc::sigevent>(),
                )
            });
        }
        // {sigval value; int signo; int notify; ...}
        let value = self.mem.read_u32(event)?;
        let signo = self.mem.read_u32(event.wrapping_add(4))? as i32;
        let notify = self.mem.read_u32(event.wrapping_add(8))? as i32;
        // SAFETY: all-zero is a valid sigevent.
        let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
        sev.sigev_value = libc::sigval {
            sival_ptr: value as usize as *mut libc::c_void,
        };
        match notify {
            SIGEV_NONE => sev.sigev_notify = libc::SIGEV_NONE,
            SIGEV_SIGNAL if super::signal::is_forwarded(signo) => {
                sev.sigev_notify = libc::SIGEV_SIGNAL;
                sev.sigev_signo = signo;
            }
            _ => return Err(errno(libc::EINVAL)),
        }
        // SAFETY: a valid sigevent.
        host_result(unsafe {
            libc::syscall(libc::SYS_mq_notify, host, &sev as *const libc::sigevent)
        })
    }
}
