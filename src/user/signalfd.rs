//! `signalfd`: a descriptor that reads the guest's pending signals of a set as
//! `signalfd_siginfo` records. Signals are the guest's (they pend in [`super::signal`]), so the
//! host file behind the descriptor is an eventfd that only carries readiness for `poll`,
//! `select` and `epoll`: it is made readable while a signal of the set is pending and drained
//! when none is, each time a poll-style call is about to wait. A poll-style wait also opens
//! the watched signals on the host, so one that arrives ends it (the guest blocks them: Linux
//! would not interrupt it, and neither does rv32vm; it polls again and finds the descriptor
//! ready). Reads take signals as `sigtimedwait` does: the running thread's own first, then the
//! process's, lowest number first.
//!
//! The readiness is kept per descriptor object (what `dup` and `fork` share), so after a
//! `fork` parent and child share it too, where Linux would give each its own; a read still
//! takes only the reader's signals.

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd, OwnedFd};

use super::fs::FdKind;
use super::signal::code::{SI_MESGQ, SI_QUEUE, SI_TIMER};
use super::signal::{SigInfo, UNBLOCKABLE};
use super::syscall::{errno, last_errno, SysError, SysResult};
use super::Process;

/// Size of `struct signalfd_siginfo`.
const SIGINFO_SIZE: u32 = 128;
const SFD_NONBLOCK: u32 = libc::O_NONBLOCK as u32;
const SFD_CLOEXEC: u32 = libc::O_CLOEXEC as u32;

/// One signalfd object: the set it reads and whether its eventfd is readable now.
#[derive(Clone, Debug)]
pub struct SignalFd {
    mask: u64,
    ready: bool,
}

/// The process's signalfd objects, by the id their descriptors carry ([`FdKind::Signal`]).
#[derive(Clone, Debug, Default)]
pub struct SignalFds {
    objects: BTreeMap<u32, SignalFd>,
    next_id: u32,
}

impl Process {
    /// `signalfd4(fd, mask*, sizemask, flags)`: a new signalfd for the set (`fd` = -1), or a
    /// new set for signalfd `fd`.
    pub(super) fn sys_signalfd4(&mut self, fd: u32, mask: u32, size: u32, flags: u32) -> SysResult {
        if size != 8 || flags & !(SFD_NONBLOCK | SFD_CLOEXEC) != 0 {
            return Err(errno(libc::EINVAL));
        }
        // SIGKILL and SIGSTOP are never read, as on Linux.
        let set = self.mem.read_u64(mask)? & !UNBLOCKABLE;
        if fd as i32 != -1 {
            let FdKind::Signal(id) = self.fds.entry(fd)?.kind else {
                return Err(errno(libc::EINVAL));
            };
            if let Some(object) = self.signalfds.objects.get_mut(&id) {
                object.mask = set;
            }
            self.sync_signalfds();
            return Ok(fd);
        }
        let mut event_flags = libc::EFD_CLOEXEC;
        if flags & SFD_NONBLOCK != 0 {
            event_flags |= libc::EFD_NONBLOCK;
        }
        // SAFETY: eventfd has no memory effects.
        let raw = unsafe { libc::eventfd(0, event_flags) };
        if raw < 0 {
            return Err(last_errno());
        }
        // SAFETY: `raw` was just created and belongs to nobody else.
        let host = unsafe { OwnedFd::from_raw_fd(raw) };
        let id = self.signalfds.next_id;
        let guest = self
            .fds
            .insert_kind(host, flags & SFD_CLOEXEC != 0, 0, FdKind::Signal(id))?;
        self.signalfds.next_id = id.wrapping_add(1);
        self.signalfds.objects.insert(
            id,
            SignalFd {
                mask: set,
                ready: false,
            },
        );
        self.sync_signalfds();
        Ok(guest)
    }

    /// `read(fd, buf, count)` of signalfd `id`: as many pending signals of its set as fit,
    /// waiting for one unless the descriptor is non-blocking (EAGAIN).
    pub(super) fn signalfd_read(
        &mut self,
        pc: u32,
        fd: u32,
        id: u32,
        buf: u32,
        count: u32,
    ) -> SysResult {
        if count < SIGINFO_SIZE {
            return Err(errno(libc::EINVAL));
        }
        let set = self.signalfds.objects.get(&id).map_or(0, |o| o.mask);
        let host = self.fds.host(fd)?;
        // SAFETY: F_GETFL only reads the descriptor's flags.
        let nonblocking = unsafe { libc::fcntl(host, libc::F_GETFL) } & libc::O_NONBLOCK != 0;
        let first = match self.take_pending_in(set) {
            Some(taken) => taken,
            None if nonblocking => return Err(errno(libc::EAGAIN)),
            None => self.wait_for_signal_in(pc, set, None)?,
        };
        let mut records = vec![first];
        while records.len() < (count / SIGINFO_SIZE) as usize {
            match self.take_pending_in(set) {
                Some(taken) => records.push(taken),
                None => break,
            }
        }
        let bytes: Vec<u8> = records
            .iter()
            .flat_map(|(signo, info)| signalfd_siginfo(*signo, info))
            .collect();
        let written = self.mem.write(buf, &bytes);
        self.sync_signalfds();
        written?;
        Ok(bytes.len() as u32)
    }

    /// Whether a poll-style wait that watched `watched` (under the guest mask `wait_mask`)
    /// ended only because a watched signal arrived: then the caller waits again, and finds
    /// the signalfd ready.
    pub(super) fn woken_for_signalfd(
        &mut self,
        watched: u64,
        wait_mask: u64,
        result: &SysResult,
    ) -> bool {
        watched != 0
            && matches!(result, Err(SysError::Errno(libc::EINTR)))
            && self.pending_signals() & watched != 0
            && !self.signal_deliverable_under(wait_mask)
    }

    /// The signals some signalfd of the process reads (what a poll-style wait watches).
    pub(super) fn signalfd_watch(&self) -> u64 {
        self.signalfds
            .objects
            .values()
            .fold(0, |set, o| set | o.mask)
    }

    /// Make each signalfd's eventfd readable exactly while a signal of its set is pending,
    /// and forget objects no descriptor refers to any more.
    pub(super) fn sync_signalfds(&mut self) {
        if self.signalfds.objects.is_empty() {
            return;
        }
        let pending = self.pending_signals();
        let open: Vec<(u32, i32)> = self
            .fds
            .entries()
            .filter_map(|entry| match entry.kind {
                FdKind::Signal(id) => Some((id, entry.raw())),
                _ => None,
            })
            .collect();
        self.signalfds
            .objects
            .retain(|id, _| open.iter().any(|(open_id, _)| open_id == id));
        for (id, host) in open {
            let Some(object) = self.signalfds.objects.get_mut(&id) else {
                continue;
            };
            let want = pending & object.mask != 0;
            if want == object.ready {
                continue;
            }
            let mut count = 1u64;
            // SAFETY: an 8-byte buffer for the eventfd counter, written or read whole. The
            // read happens only while the counter is not zero, so it never waits.
            let done = unsafe {
                if want {
                    libc::write(host, (&count as *const u64).cast(), 8)
                } else {
                    libc::read(host, (&mut count as *mut u64).cast(), 8)
                }
            } == 8;
            if done {
                object.ready = want;
            }
        }
    }
}

/// The `struct signalfd_siginfo` record for `signo` with `info`.
fn signalfd_siginfo(signo: i32, info: &SigInfo) -> [u8; SIGINFO_SIZE as usize] {
    let mut b = [0u8; SIGINFO_SIZE as usize];
    let mut put = |at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put(0, signo as u32); // ssi_signo
    put(8, info.code as u32); // ssi_code
    match info.code {
        // ssi_tid (the timer id), ssi_overrun, ssi_int and the low word of ssi_ptr.
        SI_TIMER => {
            put(24, info.word0);
            put(32, info.word1);
            put(44, info.word2);
            put(48, info.word2);
        }
        // ssi_pid, ssi_uid, ssi_int and the low word of ssi_ptr.
        SI_QUEUE | SI_MESGQ => {
            put(12, info.word0);
            put(16, info.word1);
            put(44, info.word2);
            put(48, info.word2);
        }
        // SIGCHLD: ssi_pid, ssi_uid, ssi_status.
        code if code > 0 && signo == libc::SIGCHLD => {
            put(12, info.word0);
            put(16, info.word1);
            put(40, info.word2);
        }
        // kill, tkill and the rest: ssi_pid and ssi_uid.
        _ => {
            put(12, info.word0);
            put(16, info.word1);
        }
    }
    b
}
