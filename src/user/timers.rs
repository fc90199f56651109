//! Timers the guest creates: timer file descriptors (`timerfd_*`) and POSIX per-process
//! timers (`timer_*`). Both are host timers: a timerfd is a host descriptor read through the
//! usual paths, and a POSIX timer signals this host process, whose forwarded signal becomes
//! the guest's. A timer's signal is routed by its timer id ([`PosixTimer`]): to the thread
//! SIGEV_THREAD_ID names, and for the guest's signals 32 and 33 (musl's SIGEV_THREAD uses 32),
//! which the host's C library keeps, the host timer sends [`PROXY_SIGNAL`] instead. The
//! guest's `struct itimerspec` (time64) has the host's layout; its `struct sigevent` is the
//! 32-bit one.

use super::signal::SigInfo;
use super::syscall::{errno, host_result, read_timespec, write_timespec, SysError, SysResult};
use super::Process;

/// The host signal of a timer whose guest signal the host cannot send (32, 33): 34, which
/// musl keeps for itself (SIGSYNCCALL) and never expects from outside.
const PROXY_SIGNAL: i32 = 34;

/// One of the guest's POSIX timers: the host timer `id` sends `host_signo`, which the guest
/// sees as `guest_signo`, for thread `thread` (SIGEV_THREAD_ID) or the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PosixTimer {
    pub id: i32,
    pub host_signo: i32,
    pub guest_signo: i32,
    pub thread: Option<u32>,
}

const SIGEV_SIGNAL: i32 = 0;
const SIGEV_NONE: i32 = 1;
const SIGEV_THREAD_ID: i32 = 4;

impl Process {
    /// A guest `struct __kernel_itimerspec` (interval, then value) at `va`.
    fn read_itimerspec(&self, va: u32) -> Result<libc::itimerspec, SysError> {
        Ok(libc::itimerspec {
            it_interval: read_timespec(&self.mem, va)?,
            it_value: read_timespec(&self.mem, va.wrapping_add(16))?,
        })
    }

    /// Write `t` as a guest `struct __kernel_itimerspec` at `va` (if not 0).
    fn write_itimerspec(&mut self, va: u32, t: &libc::itimerspec) -> Result<(), SysError> {
        if va != 0 {
            write_timespec(&mut self.mem, va, &t.it_interval)?;
            write_timespec(&mut self.mem, va.wrapping_add(16), &t.it_value)?;
        }
        Ok(())
    }

    /// `timerfd_create(clockid, flags)`.
    pub(super) fn sys_timerfd_create(&mut self, clock: u32, flags: u32) -> SysResult {
        let flags = flags as i32;
        if flags & !(libc::TFD_CLOEXEC | libc::TFD_NONBLOCK) != 0 {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: no memory effects.
        let fd = unsafe { libc::timerfd_create(clock as i32, flags | libc::TFD_CLOEXEC) };
        self.install_new_fd(fd as i64, flags & libc::TFD_CLOEXEC != 0)
    }

    /// `timerfd_settime64(fd, flags, new*, old*)`.
    pub(super) fn sys_timerfd_settime(
        &mut self,
        fd: u32,
        flags: u32,
        new: u32,
        old: u32,
    ) -> SysResult {
        let host = self.fds.host(fd)?;
        let value = self.read_itimerspec(new)?;
        // SAFETY: all-zero is a valid itimerspec.
        let mut prev: libc::itimerspec = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointers to itimerspecs.
        let r = unsafe { libc::timerfd_settime(host, flags as i32, &value, &mut prev) };
        host_result(r as i64)?;
        self.write_itimerspec(old, &prev)?;
        Ok(0)
    }

    /// `timerfd_gettime64(fd, cur*)`.
    pub(super) fn sys_timerfd_gettime(&mut self, fd: u32, cur: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: all-zero is a valid itimerspec.
        let mut now: libc::itimerspec = unsafe { std::mem::zeroed() };
        // SAFETY: a valid out-pointer.
        host_result(unsafe { libc::timerfd_gettime(host, &mut now) } as i64)?;
        self.mem.check(cur, 32, super::mem::perm::W)?;
        self.write_itimerspec(cur, &now)?;
        Ok(0)
    }

    /// EINVAL unless `id` is one of the guest's timers.
    fn own_timer(&self, id: u32) -> Result<(), SysError> {
        if self.posix_timers.iter().any(|t| t.id == id as i32) {
            Ok(())
        } else {
            Err(errno(libc::EINVAL))
        }
    }

    /// `timer_create(clockid, sigevent*, timerid*)`: a host timer (the kernel's id is the
    /// guest's) that signals this process, or nobody (SIGEV_NONE).
    pub(super) fn sys_timer_create(&mut self, clock: u32, event: u32, id_out: u32) -> SysResult {
        // The default event (none given) is SIGALRM, as the kernel's.
        let (notify, signo, value, tid) = if event == 0 {
            (SIGEV_SIGNAL, libc::SIGALRM, 0, 0)
        } else {
            // {sigval value; int signo; int notify; int tid}
            let value = self.mem.read_u32(event)?;
            let signo = self.mem.read_u32(event.wrapping_add(4))? as i32;
            let notify = self.mem.read_u32(event.wrapping_add(8))? as i32;
            let tid = self.mem.read_u32(event.wrapping_add(12))?;
            (notify, signo, value, tid)
        };
        let mut thread = None;
        // SAFETY: all-zero is a valid sigevent.
        let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
        sev.sigev_value = libc::sigval {
            sival_ptr: value as usize as *mut libc::c_void,
        };
        match notify {
            SIGEV_NONE => sev.sigev_notify = libc::SIGEV_NONE,
            // The host signals the process; the signal is routed to the thread on arrival.
            SIGEV_SIGNAL | SIGEV_THREAD_ID if (1..=super::signal::sig::NSIG).contains(&signo) => {
                if notify == SIGEV_THREAD_ID {
                    if !self.threads.has(tid) {
                        return Err(errno(libc::EINVAL));
                    }
                    thread = Some(tid);
                }
                sev.sigev_notify = libc::SIGEV_SIGNAL;
                sev.sigev_signo = if super::signal::host_signal(signo) {
                    signo
                } else {
                    PROXY_SIGNAL
                };
                if !super::signal::is_forwarded(sev.sigev_signo) {
                    return Err(errno(libc::EINVAL));
                }
            }
            _ => return Err(errno(libc::EINVAL)),
        }
        self.mem.check(id_out, 4, super::mem::perm::W)?;
        let mut id: i32 = 0;
        // SAFETY: valid pointers to the sigevent and the id (the raw call writes a kernel
        // timer id, an int).
        let r = unsafe {
            libc::syscall(
                libc::SYS_timer_create,
                clock as libc::clockid_t,
                &mut sev as *mut libc::sigevent,
                &mut id as *mut i32,
            )
        };
        host_result(r)?;
        self.posix_timers.push(PosixTimer {
            id,
            host_signo: sev.sigev_signo,
            guest_signo: signo,
            thread,
        });
        self.mem.write_u32(id_out, id as u32)?;
        Ok(0)
    }

    /// `timer_settime64(id, flags, new*, old*)`.
    pub(super) fn sys_timer_settime(
        &mut self,
        id: u32,
        flags: u32,
        new: u32,
        old: u32,
    ) -> SysResult {
        self.own_timer(id)?;
        let value = self.read_itimerspec(new)?;
        // SAFETY: all-zero is a valid itimerspec.
        let mut prev: libc::itimerspec = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointers to itimerspecs.
        let r = unsafe {
            libc::syscall(
                libc::SYS_timer_settime,
                id as i32,
                flags as i32,
                &value as *const libc::itimerspec,
                &mut prev as *mut libc::itimerspec,
            )
        };
        host_result(r)?;
        self.write_itimerspec(old, &prev)?;
        Ok(0)
    }

    /// `timer_gettime64(id, cur*)`.
    pub(super) fn sys_timer_gettime(&mut self, id: u32, cur: u32) -> SysResult {
        self.own_timer(id)?;
        // SAFETY: all-zero is a valid itimerspec.
        let mut now: libc::itimerspec = unsafe { std::mem::zeroed() };
        // SAFETY: a valid out-pointer.
        let r = unsafe {
            libc::syscall(
                libc::SYS_timer_gettime,
                id as i32,
                &mut now as *mut libc::itimerspec,
            )
        };
        host_result(r)?;
        self.mem.check(cur, 32, super::mem::perm::W)?;
        self.write_itimerspec(cur, &now)?;
        Ok(0)
    }

    /// `timer_getoverrun(id)` and `timer_delete(id)`, of the guest's own timers only (the
    /// host process may have others).
    pub(super) fn sys_timer_id_call(&mut self, id: u32, delete: bool) -> SysResult {
        let id = id as i32;
        let Some(index) = self.posix_timers.iter().position(|t| t.id == id) else {
            return Err(errno(libc::EINVAL));
        };
        let call = if delete {
            self.posix_timers.swap_remove(index);
            libc::SYS_timer_delete
        } else {
            libc::SYS_timer_getoverrun
        };
        // SAFETY: no memory effects.
        host_result(unsafe { libc::syscall(call, id) })
    }

    /// Where host signal `host_signo` with siginfo `info` goes, if it is the signal of one of
    /// the guest's POSIX timers: the guest's signal number and the thread it is for, if one.
    pub(super) fn timer_route(
        &self,
        host_signo: i32,
        info: &SigInfo,
    ) -> Option<(i32, Option<u32>)> {
        if info.code != super::signal::code::SI_TIMER {
            return None;
        }
        let timer = self
            .posix_timers
            .iter()
            .find(|t| t.id == info.word0 as i32 && t.host_signo == host_signo)?;
        Some((timer.guest_signo, timer.thread))
    }

    /// `execve` ends the guest's POSIX timers (they belong to the old program), as Linux does.
    pub(super) fn delete_timers_for_exec(&mut self) {
        for timer in self.posix_timers.drain(..) {
            // SAFETY: no memory effects; the id is one of the guest's timers.
            unsafe { libc::syscall(libc::SYS_timer_delete, timer.id) };
        }
    }
}
