//! Signals: dispositions, mask, pending set, and delivery to guest handlers with a Linux-layout
//! signal frame (`siginfo` + riscv `ucontext`) and a `rt_sigreturn` trampoline.
//!
//! Sources of signals: the guest itself (kill/tkill/tgkill to its own pid, SIGPIPE on EPIPE),
//! synchronous faults (SIGSEGV, SIGBUS, SIGILL, SIGTRAP), and the host (SIGTERM, SIGINT,
//! SIGCHLD from forked children, SIGALRM from setitimer, ...). A signal is pending for the
//! process (any thread that does not block it takes it) or, sent with tkill/tgkill or
//! rt_tgsigqueueinfo, for one thread ([`ThreadSignals`]).
//!
//! Host signals (every signal but the synchronous faults, SIGKILL and SIGSTOP, as qemu-user
//! forwards them) reach the guest through its dispositions and mask: the host disposition of
//! each follows the guest's (ignored: ignored on the host too; a handler, or a default action
//! that kills: a host handler that only keeps the siginfo ([`HOST_INFO`]) and sets a bit in
//! [`HOST_PENDING`], which the run loop checks once per block; a default that ignores or
//! stops: the host default), and the host signal mask follows the guest's, so a blocked
//! signal stays pending in the host kernel (interrupting nothing) until the guest unblocks it.
//! A default action that kills makes rv32vm die of the same signal once the signal is
//! delivered.
//!
//! Delivery happens at syscall return, between blocks and on faults: one signal at a time, the
//! hart is redirected to the handler with a0 = signo, a1 = &siginfo, a2 = &ucontext and ra = the
//! trampoline (`li a7, 139; ecall`). A syscall interrupted by a handler with SA_RESTART is
//! re-executed after the handler returns.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::cpu::Hart;
use crate::exec::platform::Stop;

use super::mem::perm;
use super::syscall::{errno, host_result, nr, SysError, SysResult};
use super::{Process, SIGRETURN_TRAMPOLINE};

/// Signal numbers (asm-generic, the same on the host).
pub mod sig {
    pub const SIGILL: i32 = 4;
    pub const SIGTRAP: i32 = 5;
    pub const SIGBUS: i32 = 7;
    pub const SIGFPE: i32 = 8;
    pub const SIGKILL: i32 = 9;
    pub const SIGSEGV: i32 = 11;
    pub const SIGPIPE: i32 = 13;
    pub const SIGCHLD: i32 = 17;
    pub const SIGCONT: i32 = 18;
    pub const SIGSTOP: i32 = 19;
    pub const SIGTSTP: i32 = 20;
    pub const SIGTTIN: i32 = 21;
    pub const SIGTTOU: i32 = 22;
    pub const SIGURG: i32 = 23;
    pub const SIGWINCH: i32 = 28;
    /// Highest signal number.
    pub const NSIG: i32 = 64;
}

/// `si_code` values.
pub mod code {
    pub const SI_USER: i32 = 0;
    pub const SI_QUEUE: i32 = -1;
    pub const SI_TIMER: i32 = -2;
    pub const SI_MESGQ: i32 = -3;
    pub const SI_TKILL: i32 = -6;
    pub const SEGV_MAPERR: i32 = 1;
    pub const SEGV_ACCERR: i32 = 2;
    pub const BUS_ADRALN: i32 = 1;
    pub const ILL_ILLOPC: i32 = 1;
    pub const TRAP_BRKPT: i32 = 1;
}

const SIG_DFL: u32 = 0;
pub(super) const SIG_IGN: u32 = 1;

const SA_SIGINFO: u32 = 4;
const SA_ONSTACK: u32 = 0x0800_0000;
const SA_RESTART: u32 = 0x1000_0000;
const SA_NODEFER: u32 = 0x4000_0000;
const SA_RESETHAND: u32 = 0x8000_0000;

const SS_ONSTACK: u32 = 1;
const SS_DISABLE: u32 = 2;
const MINSIGSTKSZ: u32 = 2048;

/// Signals raised on the host for signals the guest handles; bit n-1 for signal n.
static HOST_PENDING: AtomicU64 = AtomicU64::new(0);

/// The siginfo of the last host signal of each number (index signo): si_code, then the three
/// words of the union that the guest's siginfo carries (si_pid, si_uid and si_status of a
/// SIGCHLD; si_pid, si_uid and si_value of a `sigqueue`; the timer id, overrun count and
/// si_value of a POSIX timer).
static HOST_INFO: [[AtomicU32; 4]; sig::NSIG as usize + 1] =
    [const { [const { AtomicU32::new(0) }; 4] }; sig::NSIG as usize + 1];

/// Byte offsets in the host's (x86-64) `siginfo_t`: si_code, and the union's first three
/// 32-bit words (the union starts 8-aligned, after three ints).
const HOST_SI_CODE: usize = 8;
const HOST_SI_WORDS: [usize; 3] = [16, 20, 24];

/// [`record_host_signal`] as a host `sa_sigaction` value.
fn record_host_handler() -> libc::sighandler_t {
    record_host_signal as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
        as libc::sighandler_t
}

extern "C" fn record_host_signal(
    signo: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    if !host_signal(signo) {
        return;
    }
    if !info.is_null() {
        let slot = &HOST_INFO[signo as usize];
        let word = |off: usize| {
            // SAFETY: the kernel passes a valid siginfo_t (128 bytes) to an SA_SIGINFO handler;
            // every offset read is inside it.
            unsafe { info.cast::<u8>().add(off).cast::<u32>().read_unaligned() }
        };
        slot[0].store(word(HOST_SI_CODE), Ordering::Relaxed);
        for (i, &off) in HOST_SI_WORDS.iter().enumerate() {
            slot[i + 1].store(word(off), Ordering::Relaxed);
        }
    }
    // SeqCst: whoever sees the bit sees the info stored before it.
    HOST_PENDING.fetch_or(1 << (signo - 1), Ordering::SeqCst);
}

/// The siginfo recorded for host signal `signo`.
fn host_info(signo: i32) -> SigInfo {
    let slot = &HOST_INFO[signo as usize];
    SigInfo {
        code: slot[0].load(Ordering::Relaxed) as i32,
        word0: slot[1].load(Ordering::Relaxed),
        word1: slot[2].load(Ordering::Relaxed),
        word2: slot[3].load(Ordering::Relaxed),
    }
}

/// True if a host signal is waiting to be looked at (one relaxed load: the per-block check).
#[inline(always)]
pub fn host_signal_waiting() -> bool {
    HOST_PENDING.load(Ordering::Relaxed) != 0
}

/// The mask bit of `signo`.
const fn bit(signo: i32) -> u64 {
    1 << (signo - 1)
}

/// The signal numbers in `set`, lowest first.
fn signals_in(set: u64) -> impl Iterator<Item = i32> {
    let mut rest = set;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let signo = rest.trailing_zeros() as i32 + 1;
            rest &= rest - 1;
            signo
        })
    })
}

/// Signals that can never be blocked, caught or ignored.
pub(super) const UNBLOCKABLE: u64 = bit(sig::SIGKILL) | bit(sig::SIGSTOP);

/// The conventional name of a signal for messages.
pub fn signal_name(signo: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    match signo {
        1..=31 => NAMES[signo as usize - 1].to_string(),
        _ => format!("signal {signo}"),
    }
}

/// Whether the default action of `signo` ignores it (stop signals are treated alike: there is
/// no job control here).
fn default_ignored(signo: i32) -> bool {
    use sig::*;
    matches!(
        signo,
        SIGCHLD | SIGCONT | SIGURG | SIGWINCH | SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU
    )
}

/// Whether a host signal is forwarded to the guest (its host disposition and mask follow the
/// guest's). Synchronous fault signals stay with the host (they would be our own crashes);
/// SIGKILL and SIGSTOP cannot be caught or blocked.
const fn forwarded(signo: i32) -> bool {
    use sig::*;
    host_signal(signo)
        && !matches!(
            signo,
            SIGILL | SIGTRAP | SIGBUS | SIGFPE | SIGKILL | SIGSTOP | SIGSEGV
        )
}

/// Whether signal `signo` is one the host can deliver to rv32vm as itself: 1-31 and the
/// real-time signals from 34 (the host's C library keeps 32 and 33 for itself).
pub const fn host_signal(signo: i32) -> bool {
    (signo >= 1 && signo <= 31) || (signo >= 34 && signo <= sig::NSIG)
}

/// Whether host signal `signo` reaches the guest ([`forwarded`]).
pub fn is_forwarded(signo: i32) -> bool {
    forwarded(signo)
}

/// The mask bits of every forwarded signal.
const FORWARDED: u64 = {
    let mut set = 0u64;
    let mut signo = 1;
    while signo <= sig::NSIG {
        if forwarded(signo) {
            set |= bit(signo);
        }
        signo += 1;
    }
    set
};

/// A guest `struct sigaction` (riscv: handler, flags, 64-bit mask).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SigAction {
    pub handler: u32,
    pub flags: u32,
    pub mask: u64,
}

impl SigAction {
    fn from_bytes(b: &[u8; 16]) -> SigAction {
        let w = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        SigAction {
            handler: w(0),
            flags: w(4),
            mask: w(8) as u64 | (w(12) as u64) << 32,
        }
    }

    fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.handler.to_le_bytes());
        b[4..8].copy_from_slice(&self.flags.to_le_bytes());
        b[8..16].copy_from_slice(&self.mask.to_le_bytes());
        b
    }
}

/// Details of one signal for the handler's siginfo.
#[derive(Clone, Copy, Debug, Default)]
pub struct SigInfo {
    pub code: i32,
    /// si_pid (kill) or si_addr (faults).
    pub word0: u32,
    /// si_uid (kill).
    pub word1: u32,
    /// si_value (`sigqueue`).
    pub word2: u32,
}

/// Signals sent to one thread alone and not yet taken, with their siginfo.
#[derive(Clone, Debug, Default)]
pub struct ThreadPending {
    pub bits: u64,
    /// siginfo of each pending signal (index signo; empty while none was ever sent).
    info: Vec<SigInfo>,
}

impl ThreadPending {
    /// Mark `signo` (1..=NSIG, not ignored: the caller checks) pending.
    fn raise(&mut self, signo: i32, info: SigInfo) {
        if self.info.is_empty() {
            self.info = vec![SigInfo::default(); sig::NSIG as usize + 1];
        }
        self.bits |= bit(signo);
        self.info[signo as usize] = info;
    }

    /// Take `signo` if pending here, with its siginfo.
    fn take(&mut self, signo: i32) -> Option<SigInfo> {
        if self.bits & bit(signo) == 0 {
            return None;
        }
        self.bits &= !bit(signo);
        Some(self.info[signo as usize])
    }

    /// `signo` is ignored now: drop it.
    pub fn discard(&mut self, signo: i32) {
        self.bits &= !bit(signo);
    }
}

/// What a thread has of its own: its signal mask and the signals sent to it alone
/// (`tkill`/`tgkill`, `pthread_kill`), which no other thread may take. The running thread's
/// is in [`SignalState`]; a parked thread keeps its own ([`super::threads`]).
#[derive(Clone, Debug, Default)]
pub struct ThreadSignals {
    pub mask: u64,
    pub pending: ThreadPending,
}

impl ThreadSignals {
    /// A new thread's: the creator's mask, nothing pending.
    pub fn with_mask(mask: u64) -> ThreadSignals {
        ThreadSignals {
            mask,
            ..ThreadSignals::default()
        }
    }

    /// Mark `signo` (1..=NSIG, not ignored: the caller checks) pending for this thread.
    pub fn raise(&mut self, signo: i32, info: SigInfo) {
        self.pending.raise(signo, info);
    }

    /// Whether this thread's mask lets a signal of `set` through (it would take one, pending
    /// for it or for the process, if it ran).
    pub fn would_take(&self, set: u64) -> bool {
        set & !(self.mask & !UNBLOCKABLE) != 0
    }
}

/// Per-process signal state.
#[derive(Debug)]
pub struct SignalState {
    actions: Vec<SigAction>,
    /// Blocked signals (the running thread's mask).
    pub mask: u64,
    /// Raised for the process (any thread may take them) but not yet delivered.
    pub pending: u64,
    /// siginfo of each process-wide pending signal (index signo).
    info: Vec<SigInfo>,
    /// The running thread's own pending signals (its mask is `mask`).
    thread_pending: ThreadPending,
    /// The mask to restore after a handler, when a syscall (sigsuspend) changed it
    /// temporarily.
    saved_mask: Option<u64>,
    /// sigaltstack: (base, size), if enabled.
    alt_stack: Option<(u32, u32)>,
    /// The host's dispositions and signal mask follow the guest's (set when the process runs;
    /// unit tests leave the test process's signals alone).
    host_sync: bool,
}

impl Default for SignalState {
    fn default() -> Self {
        SignalState {
            actions: vec![SigAction::default(); sig::NSIG as usize + 1],
            mask: 0,
            pending: 0,
            info: vec![SigInfo::default(); sig::NSIG as usize + 1],
            thread_pending: ThreadPending::default(),
            saved_mask: None,
            alt_stack: None,
            host_sync: false,
        }
    }
}

impl SignalState {
    /// The state a program starts with: signals the host ignores stay ignored and the host's
    /// signal mask is kept, as both survive execve on Linux.
    pub fn inherited_from_host() -> SignalState {
        let mut state = SignalState::default();
        for signo in 1..=sig::NSIG {
            // Rust's runtime ignores SIGPIPE in every program, so the host disposition says
            // nothing about what our parent chose: SIGPIPE starts with its default.
            if !forwarded(signo) || signo == sig::SIGPIPE {
                continue;
            }
            // SAFETY: querying a disposition (NULL new action) changes nothing; the out
            // struct is plain data.
            let ignored = unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(signo, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
            };
            if ignored {
                state.actions[signo as usize].handler = SIG_IGN;
            }
        }
        // SAFETY: querying the mask (NULL new set) changes nothing.
        let host_mask = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set);
            (1..=sig::NSIG).fold(0u64, |m, s| {
                if libc::sigismember(&set, s) == 1 {
                    m | bit(s)
                } else {
                    m
                }
            })
        };
        state.mask = host_mask & !UNBLOCKABLE;
        state
    }

    /// From now on the host's dispositions and mask follow the guest's: install them.
    pub fn take_over_host_signals(&mut self) {
        self.host_sync = true;
        for signo in 1..=sig::NSIG {
            let handler = self.action(signo).handler;
            self.mirror_on_host(signo, handler);
        }
        self.apply_host_mask();
    }

    /// Set the guest's signal mask (and the host's, for forwarded signals).
    pub fn set_mask(&mut self, mask: u64) {
        self.mask = mask & !UNBLOCKABLE;
        self.apply_host_mask();
    }

    /// The running thread stops running: its mask and own pending signals, to keep while it
    /// is parked.
    pub fn park_thread(&mut self) -> ThreadSignals {
        ThreadSignals {
            mask: self.mask,
            pending: std::mem::take(&mut self.thread_pending),
        }
    }

    /// A parked thread runs: its mask and own pending signals become the running thread's.
    pub fn run_thread(&mut self, thread: ThreadSignals) {
        self.thread_pending = thread.pending;
        self.set_mask(thread.mask);
    }

    /// Mark `signo` pending for the running thread alone (`tkill` of itself).
    pub fn raise_for_running_thread(&mut self, signo: i32, info: SigInfo) {
        if !(1..=sig::NSIG).contains(&signo) || self.discards(signo) {
            return;
        }
        self.thread_pending.raise(signo, info);
    }

    /// Signals pending for the running thread: its own and the process's.
    fn pending_here(&self) -> u64 {
        self.pending | self.thread_pending.bits
    }

    /// Take pending `signo` (the running thread's own first, as Linux does) and its siginfo.
    fn take(&mut self, signo: i32) -> SigInfo {
        self.thread_pending.take(signo).unwrap_or_else(|| {
            self.pending &= !bit(signo);
            self.info[signo as usize]
        })
    }

    /// Process-wide pending signals the running thread blocks (another thread may take them).
    pub fn blocked_here(&self) -> u64 {
        self.pending & self.mask & !UNBLOCKABLE
    }

    /// Make the host signal mask block exactly the forwarded signals the guest blocks.
    fn apply_host_mask(&self) {
        if !self.host_sync {
            return;
        }
        let set = host_sigset(self.mask & FORWARDED);
        // SAFETY: `set` is an initialised sigset; only this thread's mask changes.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) };
    }

    /// Make the host's disposition of `signo` follow the guest's handler value.
    fn mirror_on_host(&self, signo: i32, handler: u32) {
        if !self.host_sync || !forwarded(signo) {
            return;
        }
        let host_handler = match handler {
            SIG_IGN => libc::SIG_IGN,
            // Default ignore, or stop: the host's default (a stop signal stops rv32vm, as it
            // stops qemu-user).
            SIG_DFL if default_ignored(signo) => libc::SIG_DFL,
            // A handler, or a default action that kills: record it for delivery between
            // blocks, so the guest's mask applies and rv32vm dies in good order.
            _ => record_host_handler(),
        };
        self.install_on_host(signo, host_handler);
    }

    /// Set the host's disposition of `signo` to `host_handler`.
    fn install_on_host(&self, signo: i32, host_handler: libc::sighandler_t) {
        // SAFETY: the handler only performs atomic loads and stores (async-signal-safe); the
        // sigaction struct is fully initialised. No SA_RESTART: interrupted host syscalls
        // return EINTR so the guest's own SA_RESTART choice decides.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = host_handler;
            if host_handler != libc::SIG_IGN && host_handler != libc::SIG_DFL {
                sa.sa_flags = libc::SA_SIGINFO;
            }
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(signo, &sa, std::ptr::null_mut());
        }
    }

    /// Catch on the host, for the length of one wait, the signals of `set` that the host
    /// would throw away (the guest leaves them at a default that ignores them); returns them
    /// for [`SignalState::mirror_all_on_host`]. Host signals are blocked meanwhile, so none
    /// is lost between the two.
    fn catch_on_host(&self, set: u64) -> u64 {
        if !self.host_sync {
            return 0;
        }
        let mut caught = 0;
        for signo in signals_in(set & FORWARDED) {
            if self.action(signo).handler == SIG_DFL && default_ignored(signo) {
                self.install_on_host(signo, record_host_handler());
                caught |= bit(signo);
            }
        }
        caught
    }

    /// Put the host's dispositions of `set` (what [`SignalState::catch_on_host`] caught) back
    /// to what the guest's say. Host signals are blocked: one of `set` that arrived since the
    /// wait ended is pending on the host, and going back to a default that ignores it would
    /// throw it away, so it is recorded first, as the catching handler would have.
    fn mirror_all_on_host(&self, set: u64) {
        if set == 0 {
            return;
        }
        let pending = host_sigset(set);
        let now = super::syscall::timespec_of(std::time::Duration::ZERO);
        loop {
            // SAFETY: all-zero is a valid siginfo_t; sigtimedwait only fills it, and with a
            // zero timeout only takes a signal already pending.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: valid set, out-pointer and timeout.
            let signo = unsafe { libc::sigtimedwait(&pending, &mut info, &now) };
            if signo <= 0 {
                break;
            }
            record_host_signal(signo, &mut info, std::ptr::null_mut());
        }
        for signo in signals_in(set) {
            self.mirror_on_host(signo, self.action(signo).handler);
        }
    }

    /// Forwarded signals pending in the host kernel (blocked there because the guest blocks
    /// them).
    fn host_pending(&self) -> u64 {
        if !self.host_sync {
            return 0;
        }
        // SAFETY: sigpending only fills the plain-data set.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigpending(&mut set);
            set
        };
        (1..=sig::NSIG)
            .filter(|&s| forwarded(s))
            // SAFETY: `set` is initialised; sigismember only reads it.
            .filter(|&s| unsafe { libc::sigismember(&set, s) } == 1)
            .fold(0, |m, s| m | bit(s))
    }

    /// Set the host's dispositions and mask for a host program exec'd by the guest: what the
    /// guest ignores stays ignored, everything else gets its default (handlers do not survive
    /// execve), and the guest's whole mask is blocked. [`HostExecSignals::restore`] undoes it
    /// if the exec fails.
    pub fn prepare_host_exec(&self) -> HostExecSignals {
        let mut saved = Vec::new();
        for signo in 1..=31 {
            if signo == sig::SIGKILL || signo == sig::SIGSTOP {
                continue;
            }
            let host_handler = if self.action(signo).handler == SIG_IGN {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            };
            // SAFETY: plain sigaction calls with initialised structs; the old action is kept
            // to be reinstalled on failure.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                let mut old: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = host_handler;
                libc::sigemptyset(&mut sa.sa_mask);
                if libc::sigaction(signo, &sa, &mut old) == 0 {
                    saved.push((signo, old));
                }
            }
        }
        let set = host_sigset(self.mask);
        // SAFETY: initialised sigsets; only this thread's mask changes.
        let old_mask = unsafe {
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_SETMASK, &set, &mut old);
            old
        };
        HostExecSignals { saved, old_mask }
    }

    /// The action of `signo`.
    /// Whether the guest has a handler for SIGSEGV or SIGBUS (a bad memory access would run it
    /// rather than kill the process).
    pub fn handles_faults(&self) -> bool {
        [sig::SIGSEGV, sig::SIGBUS]
            .iter()
            .any(|&signo| !matches!(self.action(signo).handler, SIG_DFL | SIG_IGN))
    }

    pub fn action(&self, signo: i32) -> SigAction {
        self.actions
            .get(signo as usize)
            .copied()
            .unwrap_or_default()
    }

    /// True if raising `signo` now would have no effect at all.
    fn is_ignored(&self, signo: i32) -> bool {
        let h = self.action(signo).handler;
        signo != sig::SIGKILL && (h == SIG_IGN || (h == SIG_DFL && default_ignored(signo)))
    }

    /// True if raising `signo` now is dropped: it is ignored and the running thread does not
    /// block it. A blocked signal pends even when ignored, as on Linux (its action may change
    /// before it is unblocked, and `sigwait` or a signalfd may take it: SIGCHLD, say).
    fn discards(&self, signo: i32) -> bool {
        self.is_ignored(signo) && self.mask & bit(signo) == 0
    }

    /// Mark `signo` pending (ignored signals are discarded when raised, as on Linux).
    pub fn raise(&mut self, signo: i32, info: SigInfo) {
        if !(1..=sig::NSIG).contains(&signo) || self.discards(signo) {
            return;
        }
        self.pending |= bit(signo);
        self.info[signo as usize] = info;
    }

    /// The lowest signal pending for the running thread that `mask` does not block.
    fn next_deliverable(&self, mask: u64) -> Option<i32> {
        let ready = self.pending_here() & !(mask & !UNBLOCKABLE);
        (ready != 0).then(|| ready.trailing_zeros() as i32 + 1)
    }
}

/// Byte offsets in the signal frame: siginfo (128 bytes) then the riscv `struct ucontext`.
mod frame {
    pub const SIGINFO: u32 = 0;
    pub const UCONTEXT: u32 = 128;
    pub const UC_STACK: u32 = UCONTEXT + 8;
    pub const UC_SIGMASK: u32 = UCONTEXT + 20;
    /// uc_mcontext: 16-byte aligned after 128 bytes reserved for the sigset.
    pub const MC_GREGS: u32 = UCONTEXT + 160;
    pub const MC_FREGS: u32 = MC_GREGS + 128;
    pub const MC_FCSR: u32 = MC_FREGS + 256;
    /// Whole frame: siginfo + ucontext (the FP area is sized for the Q extension, 528 bytes).
    pub const SIZE: u32 = UCONTEXT + 160 + 128 + 528;
}

impl Process {
    /// Raise a signal sent by the guest to itself.
    pub(super) fn signal_self(&mut self, signo: i32, info: SigInfo) -> SysResult {
        if signal_to_raise(signo)? {
            self.signals.raise(signo, info);
        }
        Ok(0)
    }

    /// siginfo for a signal the guest sends itself.
    fn self_info(&self, code: i32) -> SigInfo {
        SigInfo {
            code,
            word0: self.pid,
            word1: super::syscall::host_ids()[0],
            word2: 0,
        }
    }

    pub(super) fn sys_kill(&mut self, pid: i32, signo: i32) -> SysResult {
        // A thread's id names its process (and is no host process's).
        if pid == 0 || pid == self.pid as i32 || (pid > 0 && self.threads.has(pid as u32)) {
            let info = self.self_info(code::SI_USER);
            return self.signal_self(signo, info);
        }
        if pid > 0 {
            // Another host process (a forked guest child, or anything a real process could
            // signal).
            // SAFETY: kill has no memory effects.
            return super::syscall::host_result(unsafe { libc::kill(pid, signo) } as i64);
        }
        tracing::warn!(pid, signo, "kill of a process group refused");
        Err(errno(libc::EPERM))
    }

    /// `tkill`/`tgkill`: a signal for one of our threads, which waits for that thread.
    pub(super) fn sys_tkill(&mut self, tid: i32, signo: i32) -> SysResult {
        let info = self.self_info(code::SI_TKILL);
        self.signal_thread(tid as u32, signo, info)
    }

    /// Raise a signal sent by the guest to its thread `tid` (ESRCH if there is none): only
    /// that thread takes it ([`super::threads`]).
    pub(super) fn signal_thread(&mut self, tid: u32, signo: i32, info: SigInfo) -> SysResult {
        if tid as i32 <= 0 || !self.threads.has(tid) {
            return Err(errno(libc::ESRCH));
        }
        if signal_to_raise(signo)? {
            self.raise_for_thread(tid, signo, info);
        }
        Ok(0)
    }

    /// Mark `signo` (1..=NSIG) pending for thread `tid` of this process, unless ignored.
    fn raise_for_thread(&mut self, tid: u32, signo: i32, info: SigInfo) {
        if tid == self.threads.tid() {
            self.signals.raise_for_running_thread(signo, info);
        } else if self.signals.is_ignored(signo) {
            // (A parked thread's mask is not consulted: ignored signals to it are dropped.)
        } else if let Ok(Some(cut_short)) = self.threads.raise_for(tid, signo, info) {
            self.write_sleep_left(cut_short);
        }
    }

    /// Move the signals the host caught into the pending sets: a POSIX timer's signal as its
    /// timer says ([`Process::timer_route`]: the guest's number, maybe for one thread).
    fn collect_host(&mut self) {
        for signo in signals_in(HOST_PENDING.swap(0, Ordering::SeqCst)) {
            let info = host_info(signo);
            match self.timer_route(signo, &info) {
                Some((guest, Some(tid))) if self.threads.has(tid) => {
                    self.raise_for_thread(tid, guest, info)
                }
                Some((guest, _)) => self.signals.raise(guest, info),
                None => self.signals.raise(signo, info),
            }
        }
    }

    /// A parked thread's sleep was cut short by a signal: its `rem` gets the time left (a bad
    /// address there is that thread's EFAULT, which its EINTR already stands for).
    fn write_sleep_left(&mut self, cut_short: super::threads::SleepLeft) {
        let left = super::syscall::timespec_of(cut_short.left);
        let _ = super::syscall::write_timespec(&mut self.mem, cut_short.rem, &left);
    }

    /// A write that failed with EPIPE raises SIGPIPE (the host ignores its own SIGPIPE).
    pub(super) fn check_pipe(&mut self, r: SysResult) -> SysResult {
        if matches!(r, Err(SysError::Errno(libc::EPIPE))) {
            let info = self.self_info(code::SI_USER);
            self.signals.raise(sig::SIGPIPE, info);
        }
        r
    }

    pub(super) fn sys_rt_sigaction(
        &mut self,
        signo: i32,
        act: u32,
        old: u32,
        size: u32,
    ) -> SysResult {
        if size != 8 || !(1..=sig::NSIG).contains(&signo) {
            return Err(errno(libc::EINVAL));
        }
        let new = if act != 0 {
            if signo == sig::SIGKILL || signo == sig::SIGSTOP {
                return Err(errno(libc::EINVAL));
            }
            let mut b = [0u8; 16];
            self.mem.read(act, &mut b)?;
            Some(SigAction::from_bytes(&b))
        } else {
            None
        };
        if old != 0 {
            let prev = self.signals.action(signo).to_bytes();
            self.mem.write(old, &prev)?;
        }
        if let Some(action) = new {
            self.signals.actions[signo as usize] = action;
            if self.signals.is_ignored(signo) {
                self.signals.pending &= !bit(signo);
                self.signals.thread_pending.discard(signo);
                self.threads.discard_signal(signo);
            }
            self.signals.mirror_on_host(signo, action.handler);
        }
        Ok(0)
    }

    pub(super) fn sys_rt_sigprocmask(
        &mut self,
        how: u32,
        set: u32,
        old: u32,
        size: u32,
    ) -> SysResult {
        const SIG_BLOCK: u32 = 0;
        const SIG_UNBLOCK: u32 = 1;
        const SIG_SETMASK: u32 = 2;
        if size != 8 {
            return Err(errno(libc::EINVAL));
        }
        let new = if set != 0 {
            Some(self.mem.read_u64(set)?)
        } else {
            None
        };
        if old != 0 {
            self.mem.write_u64(old, self.signals.mask)?;
        }
        if let Some(s) = new {
            let mask = match how {
                SIG_BLOCK => self.signals.mask | s,
                SIG_UNBLOCK => self.signals.mask & !s,
                SIG_SETMASK => s,
                _ => return Err(errno(libc::EINVAL)),
            };
            // Unblocking on the host delivers signals it held pending to the recording
            // handler at once; they are delivered to the guest on return from this call.
            self.signals.set_mask(mask);
        }
        Ok(0)
    }

    pub(super) fn sys_rt_sigpending(&mut self, set: u32, size: u32) -> SysResult {
        if size != 8 {
            return Err(errno(libc::EINVAL));
        }
        self.collect_host();
        let pending =
            (self.signals.pending_here() & self.signals.mask) | self.signals.host_pending();
        self.mem.write_u64(set, pending)?;
        Ok(0)
    }

    /// Wait with a temporary mask until a signal that is not ignored arrives; always -EINTR,
    /// and the handler's frame restores the original mask.
    pub(super) fn sys_rt_sigsuspend(&mut self, set: u32, size: u32) -> SysResult {
        if size != 8 {
            return Err(errno(libc::EINVAL));
        }
        let temp = self.mem.read_u64(set)? & !UNBLOCKABLE;
        while self.signals.next_deliverable(temp).is_none() {
            // Another thread may need the hart: wait only until then, and give way.
            let (wait, give_way) = self.host_wait(None);
            let limit = wait.map(super::syscall::timespec_of);
            let ts_ptr = limit
                .as_ref()
                .map_or(std::ptr::null(), |t| t as *const libc::timespec);
            // SAFETY: no descriptors and a valid timeout or none: ppoll only waits for a
            // signal, with the mask `wait_for_signals` hands over.
            let waited = self.wait_for_signals(temp, |mask| unsafe {
                libc::ppoll(std::ptr::null_mut(), 0, ts_ptr, mask)
            });
            if give_way && matches!(waited, Ok(0)) {
                return Err(SysError::WouldBlock);
            }
        }
        self.signals.saved_mask = Some(self.signals.mask);
        self.signals.set_mask(temp);
        Err(errno(libc::EINTR))
    }

    /// `rt_sigtimedwait_time64(set*, info*, timeout*, size)` (sigwait, sigwaitinfo,
    /// sigtimedwait) at `pc`: take a pending signal of `set` without running its handler and
    /// return its number (its siginfo at `info`), waiting up to `timeout` (none: forever) for
    /// one; EAGAIN when the time is up, EINTR when a signal outside the set is delivered
    /// meanwhile. Another thread runs while this one waits ([`SysError::WouldBlock`]).
    pub(super) fn sys_rt_sigtimedwait(
        &mut self,
        pc: u32,
        set: u32,
        info: u32,
        timeout: u32,
        size: u32,
    ) -> SysResult {
        if size != 8 {
            return Err(errno(libc::EINVAL));
        }
        let set = self.mem.read_u64(set)? & !UNBLOCKABLE;
        let deadline = match timeout {
            0 => None,
            va => {
                let t = super::syscall::read_timespec(&self.mem, va)?;
                let t = std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32);
                Some(self.threads.retry_deadline(pc, t))
            }
        };
        let (signo, i) = self.wait_for_signal_in(pc, set, deadline)?;
        if info != 0 {
            let mut b = [0u8; 128];
            b[0..4].copy_from_slice(&signo.to_le_bytes());
            b[8..12].copy_from_slice(&i.code.to_le_bytes());
            b[12..16].copy_from_slice(&i.word0.to_le_bytes());
            b[16..20].copy_from_slice(&i.word1.to_le_bytes());
            b[20..24].copy_from_slice(&i.word2.to_le_bytes());
            self.mem.write(info, &b)?;
        }
        Ok(signo as u32)
    }

    /// Take a pending signal of `set` (blocked or not; [`Process::take_pending_in`]'s order)
    /// and its siginfo, waiting until `deadline` (`None`: forever) for one: the heart of
    /// `sigtimedwait` and of a blocking `signalfd` read. EAGAIN when the time is up, EINTR when a signal outside the
    /// set is delivered meanwhile; another thread runs while this one waits
    /// ([`SysError::WouldBlock`], the call at `pc` runs again).
    pub(super) fn wait_for_signal_in(
        &mut self,
        pc: u32,
        set: u64,
        deadline: Option<std::time::Instant>,
    ) -> Result<(i32, SigInfo), SysError> {
        loop {
            if let Some(taken) = self.take_pending_in(set) {
                return Ok(taken);
            }
            if self.signals.next_deliverable(self.signals.mask).is_some() {
                return Err(errno(libc::EINTR));
            }
            let now = std::time::Instant::now();
            let left = deadline.map(|d| d.saturating_duration_since(now));
            if left.is_some_and(|l| l.is_zero()) {
                return Err(errno(libc::EAGAIN));
            }
            // Wait on the host until the deadline, or until another thread needs the hart.
            let (wait, give_way) = self.host_wait(left);
            let ts = wait.map(super::syscall::timespec_of);
            let ts_ptr = ts
                .as_ref()
                .map_or(std::ptr::null(), |t| t as *const libc::timespec);
            // The set's signals are open on the host while it waits (the mask `set` leaves),
            // and caught there even when the guest's action would ignore them.
            let open = self.signals.mask & !set;
            // SAFETY: no descriptors; the timeout is a valid timespec or NULL.
            let waited = self.wait_for_signals_watching(open, set, |mask| unsafe {
                libc::ppoll(std::ptr::null_mut(), 0, ts_ptr, mask)
            });
            if give_way && matches!(waited, Ok(0)) {
                if let Some(d) = deadline {
                    self.threads.retry_until(pc, d);
                }
                return Err(SysError::WouldBlock);
            }
        }
    }

    /// Take a signal of `set` pending for the running thread (its own or the process's), with
    /// its siginfo, if there is one; never waits.
    pub(super) fn take_pending_in(&mut self, set: u64) -> Option<(i32, SigInfo)> {
        self.collect_host();
        // The thread's own signals first, then the process's, lowest number first in each:
        // Linux's order.
        let own = self.signals.thread_pending.bits & set;
        let waiting = if own != 0 {
            own
        } else {
            self.signals.pending & set
        };
        if waiting == 0 {
            return None;
        }
        let signo = waiting.trailing_zeros() as i32 + 1;
        Some((signo, self.signals.take(signo)))
    }

    /// Whether a pending signal would be delivered (its handler run, or its default action
    /// taken) under the guest mask `mask`.
    pub(super) fn signal_deliverable_under(&self, mask: u64) -> bool {
        self.signals.next_deliverable(mask).is_some()
    }

    /// The signals pending for the running thread (its own and the process's).
    pub(super) fn pending_signals(&mut self) -> u64 {
        self.collect_host();
        self.signals.pending_here()
    }

    /// `rt_sigqueueinfo(pid, sig, info*)` and `rt_tgsigqueueinfo(tgid, tid, sig, info*)`
    /// (`sigqueue`): to this process, the signal pends with the guest's si_code and si_value;
    /// to another process, the host queues it with the value.
    /// `tid` is `Some` for `rt_tgsigqueueinfo` to one of this process's threads.
    pub(super) fn sys_rt_sigqueueinfo(
        &mut self,
        pid: u32,
        tid: Option<u32>,
        signo: u32,
        info: u32,
    ) -> SysResult {
        let mut b = [0u8; 24];
        self.mem.read(info, &mut b)?;
        let word = |off: usize| u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]]);
        let code = word(8) as i32;
        let signo = signo as i32;
        let info = SigInfo {
            code,
            word0: word(12),
            word1: word(16),
            word2: word(20),
        };
        if let Some(tid) = tid {
            return self.signal_thread(tid, signo, info);
        }
        // Another thread's id names the process too, as on Linux.
        if pid == self.pid || self.threads.has(pid) {
            return self.signal_self(signo, info);
        }
        // To another process, only the kernel may claim to be the kernel or `tkill` (as
        // Linux checks).
        if code >= 0 || code == code::SI_TKILL {
            return Err(errno(libc::EPERM));
        }
        if !(1..=sig::NSIG).contains(&signo) {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: sigqueue only reads its arguments.
        let r = unsafe {
            libc::sigqueue(
                pid as i32,
                signo,
                libc::sigval {
                    sival_ptr: word(20) as usize as *mut libc::c_void,
                },
            )
        };
        host_result(r as i64)
    }

    /// Run a host call that may block, such that a signal for the guest cannot be missed:
    /// every host signal is blocked while the pending set is checked, and `wait` (ppoll or
    /// the like) unblocks atomically, with the host mask it is given, exactly the forwarded
    /// signals `mask` leaves open. A signal that is already deliverable under `mask` returns
    /// EINTR without waiting. (Without this a host signal caught between the run loop's
    /// last check and a plain blocking call would leave the guest waiting forever.)
    pub(super) fn wait_for_signals(
        &mut self,
        mask: u64,
        wait: impl FnOnce(&libc::sigset_t) -> libc::c_int,
    ) -> SysResult {
        self.wait_for_signals_watching(mask, 0, wait)
    }

    /// [`Process::wait_for_signals`] for a wait that a signal of `watched` should end even
    /// though the guest blocks it: `sigtimedwait`'s set, or a poll whose signalfds watch it.
    /// Those signals are open on the host during the wait, and caught even where the guest's
    /// action ignores them, so their arrival ends it (EINTR: `sigtimedwait` takes the signal;
    /// a poll polls again, and the signalfds, brought up to date first, are ready).
    pub(super) fn wait_for_signals_watching(
        &mut self,
        mask: u64,
        watched: u64,
        wait: impl FnOnce(&libc::sigset_t) -> libc::c_int,
    ) -> SysResult {
        // SAFETY: sigset_t values are plain data initialised by sigfillset/pthread_sigmask/
        // host_sigset; the calls only change this thread's signal mask, and the old mask is
        // put back before returning.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut host_old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut host_old);
            self.collect_host();
            if watched != 0 {
                // What arrived before the host signals were blocked shows in the signalfds.
                self.sync_signalfds();
            }
            let result = if self.signals.next_deliverable(mask).is_some() {
                Err(errno(libc::EINTR))
            } else {
                let waiting = if self.signals.host_sync {
                    host_sigset(mask & !watched & FORWARDED)
                } else {
                    host_old
                };
                // A watched signal whose default is to be ignored (SIGCHLD) would vanish on
                // the host: catch it for the wait.
                let caught = self.signals.catch_on_host(watched);
                // The result (and its errno) first: putting the dispositions back makes calls.
                let waited = host_result(wait(&waiting) as i64);
                self.signals.mirror_all_on_host(caught);
                waited
            };
            libc::pthread_sigmask(libc::SIG_SETMASK, &host_old, std::ptr::null_mut());
            result
        }
    }

    /// The mask a ppoll-style call waits with: its own (`sigmask`, if given) or the guest's.
    pub(super) fn wait_mask(&self, sigmask: u32, size: u32) -> Result<u64, SysError> {
        if sigmask == 0 {
            return Ok(self.signals.mask);
        }
        if size != 8 {
            return Err(errno(libc::EINVAL));
        }
        Ok(self.mem.read_u64(sigmask)? & !UNBLOCKABLE)
    }

    /// After a ppoll-style call that waited with a mask of its own returned: if a signal is
    /// about to be delivered under that mask, its handler runs with it and the frame restores
    /// the guest's mask (as the kernel does); otherwise nothing changes.
    pub(super) fn keep_wait_mask_for_handler(&mut self, mask: u64) {
        if mask == self.signals.mask {
            return;
        }
        self.collect_host();
        if self.signals.next_deliverable(mask).is_some() {
            self.signals.saved_mask = Some(self.signals.mask);
            self.signals.set_mask(mask);
        }
    }

    pub(super) fn sys_sigaltstack(&mut self, hart: &Hart, new: u32, old: u32) -> SysResult {
        let on_stack = self
            .signals
            .alt_stack
            .is_some_and(|(base, size)| hart.x[2].wrapping_sub(base) < size);
        if old != 0 {
            // stack_t {void *ss_sp; int ss_flags; size_t ss_size}
            let (base, size, flags) = match self.signals.alt_stack {
                Some((b, s)) => (b, s, if on_stack { SS_ONSTACK } else { 0 }),
                None => (0, 0, SS_DISABLE),
            };
            let mut b = [0u8; 12];
            b[0..4].copy_from_slice(&base.to_le_bytes());
            b[4..8].copy_from_slice(&flags.to_le_bytes());
            b[8..12].copy_from_slice(&size.to_le_bytes());
            self.mem.write(old, &b)?;
        }
        if new != 0 {
            let mut b = [0u8; 12];
            self.mem.read(new, &mut b)?;
            let w = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            let (base, flags, size) = (w(0), w(4), w(8));
            if on_stack {
                return Err(errno(libc::EPERM));
            }
            if flags & SS_DISABLE != 0 {
                self.signals.alt_stack = None;
            } else if flags & !SS_ONSTACK != 0 {
                return Err(errno(libc::EINVAL));
            } else if size < MINSIGSTKSZ {
                return Err(errno(libc::ENOMEM));
            } else {
                self.signals.alt_stack = Some((base, size));
            }
        }
        Ok(0)
    }

    /// execve: caught signals revert to their default action; ignored ones stay ignored; the
    /// mask and pending signals are kept; the alternate stack is gone.
    pub(super) fn reset_signals_for_exec(&mut self) {
        for signo in 1..=sig::NSIG {
            let a = &mut self.signals.actions[signo as usize];
            if a.handler > SIG_IGN {
                *a = SigAction::default();
                self.signals.mirror_on_host(signo, SIG_DFL);
            }
        }
        self.signals.alt_stack = None;
        self.signals.saved_mask = None;
    }

    /// `rt_sigreturn`: restore the context saved in the frame at sp.
    pub(super) fn sigreturn(&mut self, hart: &mut Hart) -> Result<(), Stop> {
        let frame = hart.x[2];
        let pc = hart.pc;
        let mut gregs = [0u8; 128];
        let mut fregs = [0u8; 256];
        let restored = self
            .mem
            .read(frame.wrapping_add(frame::MC_GREGS), &mut gregs)
            .and_then(|()| {
                self.mem
                    .read(frame.wrapping_add(frame::MC_FREGS), &mut fregs)
            })
            .and_then(|()| {
                Ok((
                    self.mem.read_u32(frame.wrapping_add(frame::MC_FCSR))?,
                    self.mem.read_u64(frame.wrapping_add(frame::UC_SIGMASK))?,
                ))
            });
        let Ok((fcsr, mask)) = restored else {
            return Err(super::fatal_signal(sig::SIGSEGV, pc, Some(frame)));
        };
        let word = |i: usize| {
            u32::from_le_bytes([
                gregs[i * 4],
                gregs[i * 4 + 1],
                gregs[i * 4 + 2],
                gregs[i * 4 + 3],
            ])
        };
        hart.pc = word(0);
        for r in 1..32 {
            hart.x[r] = word(r);
        }
        for (r, chunk) in fregs.chunks_exact(8).enumerate() {
            hart.f[r] = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        }
        hart.fflags = (fcsr & 0x1f) as u8;
        hart.frm = (fcsr >> 5 & 7) as u8;
        hart.reservation = None;
        self.signals.set_mask(mask);
        self.deliver_pending(hart)
    }

    /// Deliver the next deliverable signal, if any: a fatal default action stops the process,
    /// a handler gets a frame and the hart jumps to it.
    pub(super) fn deliver_pending(&mut self, hart: &mut Hart) -> Result<(), Stop> {
        self.collect_host();
        if self.threads.has_others() {
            let blocked = self.signals.blocked_here();
            if blocked != 0 {
                if let Some(cut_short) = self.threads.wake_to_take(blocked) {
                    self.write_sleep_left(cut_short);
                }
            }
        }
        if self.threads.resumes_syscall_at(hart.pc) {
            // The ecall that gave way runs first: it sees the signal and fails with EINTR or
            // restarts, and the handler runs after it. (Also when the thread that sent the
            // signal has just exited, leaving this one alone.)
            return Ok(());
        }
        loop {
            let mask = self.signals.mask;
            let Some(signo) = self.signals.next_deliverable(mask) else {
                return Ok(());
            };
            let info = self.signals.take(signo);
            let action = self.signals.action(signo);
            match action.handler {
                SIG_IGN => continue,
                SIG_DFL if default_ignored(signo) => continue,
                SIG_DFL => return Err(killed_by(signo)),
                _ => {
                    return self.run_handler(hart, signo, action, info);
                }
            }
        }
    }

    /// Whether a signal would be delivered to the running thread now.
    pub(super) fn signal_deliverable(&mut self) -> bool {
        self.collect_host();
        self.signals.next_deliverable(self.signals.mask).is_some()
    }

    /// True if a signal that will run a SA_RESTART handler is about to be delivered (so an
    /// interrupted syscall should be restarted rather than fail with EINTR).
    pub(super) fn restart_interrupted(&mut self) -> bool {
        self.collect_host();
        self.signals
            .next_deliverable(self.signals.mask)
            .is_some_and(|s| {
                let a = self.signals.action(s);
                a.handler > SIG_IGN && a.flags & SA_RESTART != 0
            })
    }

    /// A synchronous fault: run the guest's handler if it has one and the signal is not
    /// blocked; otherwise the process dies (`fatal` is the Stop to die with).
    pub(super) fn fault_signal(
        &mut self,
        hart: &mut Hart,
        signo: i32,
        info: SigInfo,
        fatal: Stop,
    ) -> Result<(), Stop> {
        let action = self.signals.action(signo);
        if action.handler <= SIG_IGN || self.signals.mask & bit(signo) != 0 {
            return Err(fatal);
        }
        self.run_handler(hart, signo, action, info)
            .map_err(|_| fatal)
    }

    /// Build the signal frame on the guest stack and enter the handler.
    fn run_handler(
        &mut self,
        hart: &mut Hart,
        signo: i32,
        action: SigAction,
        info: SigInfo,
    ) -> Result<(), Stop> {
        let pc = hart.pc;
        let sp = hart.x[2];
        let stack_top = match self.signals.alt_stack {
            Some((base, size))
                if action.flags & SA_ONSTACK != 0 && sp.wrapping_sub(base) >= size =>
            {
                base.wrapping_add(size)
            }
            _ => sp,
        };
        let frame = stack_top.wrapping_sub(frame::SIZE) & !15;
        let old_mask = self.signals.saved_mask.take().unwrap_or(self.signals.mask);

        let mut f = vec![0u8; frame::SIZE as usize];
        let mut put = |off: u32, bytes: &[u8]| {
            f[off as usize..off as usize + bytes.len()].copy_from_slice(bytes);
        };
        put(frame::SIGINFO, &signo.to_le_bytes());
        put(frame::SIGINFO + 8, &info.code.to_le_bytes());
        put(frame::SIGINFO + 12, &info.word0.to_le_bytes());
        put(frame::SIGINFO + 16, &info.word1.to_le_bytes());
        put(frame::SIGINFO + 20, &info.word2.to_le_bytes());
        if let Some((base, size)) = self.signals.alt_stack {
            put(frame::UC_STACK, &base.to_le_bytes());
            put(frame::UC_STACK + 8, &size.to_le_bytes());
        } else {
            put(frame::UC_STACK + 4, &SS_DISABLE.to_le_bytes());
        }
        put(frame::UC_SIGMASK, &old_mask.to_le_bytes());
        put(frame::MC_GREGS, &pc.to_le_bytes());
        for r in 1..32u32 {
            put(frame::MC_GREGS + 4 * r, &hart.x[r as usize].to_le_bytes());
        }
        for r in 0..32u32 {
            put(frame::MC_FREGS + 8 * r, &hart.f[r as usize].to_le_bytes());
        }
        put(frame::MC_FCSR, &hart.fcsr().to_le_bytes());
        if self.mem.check(frame, frame::SIZE as u64, perm::W).is_err() {
            // No room for the frame: the kernel kills with SIGSEGV.
            return Err(super::fatal_signal(sig::SIGSEGV, pc, Some(frame)));
        }
        if self.mem.write(frame, &f).is_err() {
            return Err(super::fatal_signal(sig::SIGSEGV, pc, Some(frame)));
        }

        let mut mask = old_mask | action.mask;
        if action.flags & SA_NODEFER == 0 {
            mask |= bit(signo);
        }
        self.signals.set_mask(mask);
        if action.flags & SA_RESETHAND != 0 {
            self.signals.actions[signo as usize].handler = SIG_DFL;
            self.signals.mirror_on_host(signo, SIG_DFL);
        }
        hart.x[10] = signo as u32;
        // The frame was checked to lie below 4 GiB, so these offsets cannot wrap.
        let siginfo = action.flags & SA_SIGINFO != 0;
        hart.x[11] = if siginfo { frame + frame::SIGINFO } else { 0 };
        hart.x[12] = if siginfo { frame + frame::UCONTEXT } else { 0 };
        hart.x[1] = SIGRETURN_TRAMPOLINE;
        hart.x[2] = frame;
        hart.pc = action.handler & !1;
        hart.reservation = None;
        Ok(())
    }
}

/// Whether a signal `signo` the guest sends itself (or one of its threads) is to be raised:
/// `false` for 0 (only an existence check), EINVAL past NSIG; SIGKILL ends the process at
/// once.
fn signal_to_raise(signo: i32) -> Result<bool, SysError> {
    if !(0..=sig::NSIG).contains(&signo) {
        return Err(errno(libc::EINVAL));
    }
    if signo == sig::SIGKILL {
        return Err(SysError::Stop(killed_by(signo)));
    }
    Ok(signo != 0)
}

/// The Stop of a process killed by `signo`'s default action. As qemu-riscv32, only a signal
/// whose default action dumps core (SIGSEGV, SIGABRT, SIGQUIT, ...) gets a line on stderr;
/// one that just terminates (SIGTERM, SIGINT, SIGPIPE, ...) dies quietly, and the shell that
/// waits for us reports it.
pub fn killed_by(signo: i32) -> Stop {
    // SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS.
    let dumps_core = matches!(signo, 3..=8 | 11 | 24 | 25 | 31);
    Stop::Fatal {
        status: 128 + signo,
        message: if dumps_core {
            format!("rv32vm: guest killed by {}", signal_name(signo))
        } else {
            String::new()
        },
    }
}

/// Give host signal `signo` its default action and turn core dumps off, so that the signal
/// ends this process as it would end a guest, without a core file. Async-signal-safe.
pub fn default_action_without_core(signo: i32) {
    // SAFETY: setrlimit and signal on initialised values (both async-signal-safe).
    unsafe {
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signo, libc::SIG_DFL);
    }
}

/// End this host process by signal `signo` (default action), without a core dump. Returns
/// only if the signal does not kill (not a signal number, or one whose default is to ignore).
pub fn die_of_signal(signo: i32) {
    if !host_signal(signo) || default_ignored(signo) {
        return;
    }
    default_action_without_core(signo);
    // SAFETY: plain libc calls on initialised values; after raise() the process is gone (the
    // signal is unblocked and has its default, terminating action).
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signo);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signo);
    }
}

/// The host's signal state before [`SignalState::prepare_host_exec`].
pub struct HostExecSignals {
    saved: Vec<(i32, libc::sigaction)>,
    old_mask: libc::sigset_t,
}

impl HostExecSignals {
    /// Reinstall the host's dispositions and mask (the exec failed).
    pub fn restore(self) {
        // SAFETY: reinstalls actions and a mask the host had a moment ago.
        unsafe {
            for (signo, action) in &self.saved {
                libc::sigaction(*signo, action, std::ptr::null_mut());
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut());
        }
    }
}

/// A host signal set holding the signals of `mask` (bit n-1 for signal n).
fn host_sigset(mask: u64) -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the plain-data set; sigaddset only sets bits in it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signo in 1..=sig::NSIG {
            if mask & bit(signo) != 0 {
                libc::sigaddset(&mut set, signo);
            }
        }
        set
    }
}

/// Whether an interrupted syscall `number` may be restarted (see signal(7): sleeps, waits for
/// signals and poll-style calls always fail with EINTR).
pub fn restartable(number: u32) -> bool {
    !matches!(
        number,
        nr::RT_SIGSUSPEND
            | nr::RT_SIGTIMEDWAIT_TIME64
            | nr::EPOLL_PWAIT
            | nr::EPOLL_PWAIT2
            | nr::PPOLL_TIME64
            | nr::PSELECT6_TIME64
            | nr::CLOCK_NANOSLEEP_TIME64
    )
}

/// The SIGSEGV si_code for a fault on `perm_bits` page permissions.
pub fn segv_code(perm_bits: u8) -> i32 {
    if perm_bits & perm::MAPPED == 0 {
        code::SEGV_MAPERR
    } else {
        code::SEGV_ACCERR
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigaction_round_trip() {
        let a = SigAction {
            handler: 0x1234,
            flags: SA_SIGINFO | SA_RESTART,
            mask: 0x8000_0000_0000_0001,
        };
        assert_eq!(SigAction::from_bytes(&a.to_bytes()), a);
    }

    #[test]
    fn frame_layout_matches_riscv_ucontext() {
        // uc_mcontext is 16-byte aligned within the frame; the frame keeps sp 16-byte aligned.
        assert_eq!(frame::MC_GREGS % 16, 0);
        assert_eq!(frame::MC_FREGS % 16, 0);
        assert_eq!(frame::SIZE % 16, 0);
    }

    #[test]
    fn raise_discards_ignored_signals() {
        const SIGINT: i32 = 2;
        let mut s = SignalState::default();
        s.raise(sig::SIGCHLD, SigInfo::default());
        assert_eq!(s.pending, 0, "SIGCHLD is ignored by default");
        s.raise(SIGINT, SigInfo::default());
        assert_eq!(s.pending, bit(SIGINT));
        s.mask = bit(SIGINT);
        assert_eq!(s.next_deliverable(s.mask), None);
        assert_eq!(s.next_deliverable(0), Some(SIGINT));
    }

    #[test]
    fn forwarded_signals_are_the_asynchronous_ones() {
        const SIGHUP: i32 = 1;
        const SIGTERM: i32 = 15;
        for signo in [SIGHUP, SIGTERM, sig::SIGPIPE, sig::SIGCHLD, sig::SIGWINCH] {
            assert!(FORWARDED & bit(signo) != 0, "{}", signal_name(signo));
        }
        for signo in [
            sig::SIGSEGV,
            sig::SIGBUS,
            sig::SIGILL,
            sig::SIGKILL,
            sig::SIGSTOP,
        ] {
            assert!(FORWARDED & bit(signo) == 0, "{}", signal_name(signo));
        }
        // The host C library's own real-time signals stay the host's; the rest are forwarded.
        assert_eq!(FORWARDED & (bit(32) | bit(33)), 0);
        assert_eq!(FORWARDED >> 33, u64::MAX >> 33, "real-time signals 34-64");
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(signal_name(6), "SIGABRT");
        assert_eq!(signal_name(40), "signal 40");
    }
}
