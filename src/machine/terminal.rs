//! The host terminal: console input from a reader thread (the CPU never blocks on stdin), raw
//! mode with QEMU-style `Ctrl-A` escapes when stdin is a terminal, and the guarantee that the
//! terminal is never left in raw mode behind the user's back:
//!
//! - exit, panic, SIGTERM/SIGHUP/SIGINT: these signals only set a flag here; the machine
//!   notices it between blocks, flushes its disks and stops, and the terminal is restored on
//!   the way out. A second signal while the first is being handled restores the terminal and
//!   exits at once, in case the machine cannot stop.
//! - SIGTSTP (`kill -TSTP`, a suspending parent): the terminal is restored, then the process
//!   stops with the default action; on SIGCONT (`fg`) raw mode comes back.
//! - fatal signals (SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, ...): the terminal is
//!   restored, then the process dies of the same signal (a fault goes on to Rust's own
//!   handler first, which reports a stack overflow).
//!
//! The handlers only call async-signal-safe functions (`tcsetattr`, `sigaction`,
//! `pthread_sigmask`, `raise`, `_exit`) on settings saved before they were installed: no
//! allocation, no locks.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

use rv32vm_devices::UartInput;

/// The escape key: Ctrl-A, as in QEMU's `-nographic`.
const ESCAPE: u8 = 0x01;

/// Help printed for `Ctrl-A h`.
const HELP: &str = "\r\n\
C-a h    print this help\r\n\
C-a x    exit rv32vm (disks are flushed)\r\n\
C-a s    print statistics\r\n\
C-a S    save the machine to a snapshot file (named on the console)\r\n\
C-a C-a  send C-a to the guest\r\n";

/// What the user asked of the VM itself (rather than of the guest).
#[derive(Debug, Default)]
pub struct HostRequests {
    quit: AtomicBool,
    stats: AtomicBool,
    save: AtomicBool,
}

impl HostRequests {
    /// Take a pending quit request.
    pub fn take_quit(&self) -> bool {
        self.quit.swap(false, Ordering::AcqRel)
    }

    /// Whether a quit request is pending (left for whoever takes it).
    pub fn quit_pending(&self) -> bool {
        self.quit.load(Ordering::Acquire)
    }

    /// Take a pending statistics request.
    pub fn take_stats(&self) -> bool {
        self.stats.swap(false, Ordering::AcqRel)
    }

    /// Take a pending snapshot request (`Ctrl-A S`).
    pub fn take_save(&self) -> bool {
        self.save.swap(false, Ordering::AcqRel)
    }
}

/// The last termination signal received (0 = none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Terminal settings before raw mode. Set once, before raw mode is first turned on, and read
/// without locking, so the signal handlers can use it too.
static SAVED_TERMIOS: OnceLock<libc::termios> = OnceLock::new();
/// Terminal settings in raw mode, to go back to after a stop (SIGCONT). Set once, when raw
/// mode is first on.
static RAW_TERMIOS: OnceLock<libc::termios> = OnceLock::new();
/// Raw mode is on (so there is something to restore).
static RAW_MODE: AtomicBool = AtomicBool::new(false);
/// The SIGSEGV and SIGBUS actions that were there before ours (Rust's stack overflow
/// reporter), for a fault to go on to. Set before our handlers are installed.
static PREVIOUS_SEGV: OnceLock<libc::sigaction> = OnceLock::new();
static PREVIOUS_BUS: OnceLock<libc::sigaction> = OnceLock::new();

/// Signals whose default action kills the process, and that we catch only to restore the
/// terminal first. (SIGTERM, SIGHUP and SIGINT stop the machine cleanly instead; SIGPIPE and
/// SIGXFSZ are ignored; SIGKILL cannot be caught.)
const FATAL_SIGNALS: [libc::c_int; 15] = [
    libc::SIGQUIT,
    libc::SIGABRT,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
    libc::SIGSYS,
    libc::SIGXCPU,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGSTKFLT,
];

/// Whether a termination signal is pending (left for [`take_signal`]).
pub fn signal_pending() -> bool {
    SIGNAL.load(Ordering::Acquire) != 0
}

/// The termination signal received since the last call, if any.
pub fn take_signal() -> Option<i32> {
    match SIGNAL.swap(0, Ordering::AcqRel) {
        0 => None,
        s => Some(s),
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNAL.swap(sig, Ordering::AcqRel) != 0 {
        // A second signal: the machine did not stop in time. Restore and leave now.
        restore_from_signal();
        // SAFETY: `_exit` is async-signal-safe and ends the process without unwinding.
        unsafe { libc::_exit(128 + sig) };
    }
}

/// SIGTSTP: give the terminal back in its normal mode, stop, and take raw mode again when
/// continued.
extern "C" fn on_terminal_stop(sig: libc::c_int) {
    let errno = ErrnoGuard::save();
    restore_from_signal();
    // SAFETY: only async-signal-safe calls. The default action of SIGTSTP stops the whole
    // process; it is delivered as soon as the signal is unblocked (it is blocked while its
    // handler runs). When the process is continued, execution resumes here and the handler
    // is put back for the next stop.
    unsafe {
        set_action(sig, libc::SIG_DFL, 0);
        libc::raise(sig);
        unblock(sig);
        set_action(
            sig,
            on_terminal_stop as *const () as usize,
            libc::SA_RESTART,
        );
    }
    enter_raw_from_signal();
    drop(errno);
}

/// SIGCONT: back in raw mode if it was on (after our own stop, or a SIGSTOP).
extern "C" fn on_continue(_sig: libc::c_int) {
    let errno = ErrnoGuard::save();
    enter_raw_from_signal();
    drop(errno);
}

/// A fatal signal: restore the terminal, then die of the same signal.
extern "C" fn on_fatal_signal(
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    restore_from_signal();
    // SAFETY: `info` is the siginfo the kernel passed to this SA_SIGINFO handler (null-checked).
    let from_kernel = !info.is_null() && unsafe { (*info).si_code } > 0;
    let previous = match sig {
        libc::SIGSEGV => PREVIOUS_SEGV.get(),
        libc::SIGBUS => PREVIOUS_BUS.get(),
        _ => None,
    };
    if let (true, Some(previous)) = (from_kernel, previous) {
        // A real fault: put the previous handler back and return; the faulting instruction
        // runs again and faults into it (Rust reports a stack overflow, or dies of it).
        // SAFETY: `previous` is a sigaction read by sigaction(2) for this very signal.
        unsafe { libc::sigaction(sig, previous, std::ptr::null_mut()) };
        return;
    }
    // SAFETY: only async-signal-safe calls; with the default action back and the signal
    // unblocked, `raise` kills the process with `sig` (core dump included where it applies).
    unsafe {
        set_action(sig, libc::SIG_DFL, 0);
        libc::raise(sig);
        unblock(sig);
        libc::_exit(128 + sig);
    }
}

/// Sets `handler` (a function address, `SIG_DFL` or `SIG_IGN`) for `sig` with an empty mask.
///
/// # Safety
///
/// `handler` must be `SIG_DFL`, `SIG_IGN` or an `extern "C"` function of the form `flags`
/// implies (with `SA_SIGINFO`: three arguments) that is safe to run as a signal handler.
unsafe fn set_action(sig: libc::c_int, handler: usize, flags: libc::c_int) -> bool {
    // SAFETY: a zeroed sigaction is a valid value; we fill in the handler, flags and an
    // empty mask, and sigaction(2) only reads it. The caller vouches for the handler.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        action.sa_flags = flags;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(sig, &action, std::ptr::null_mut()) == 0
    }
}

/// Unblocks `sig` for the calling thread (a pending one is delivered at once).
/// Async-signal-safe.
fn unblock(sig: libc::c_int) {
    // SAFETY: the set lives on our stack for the calls; pthread_sigmask reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Keeps the interrupted code's `errno` across a signal handler's calls.
struct ErrnoGuard(libc::c_int);

impl ErrnoGuard {
    fn save() -> Self {
        // SAFETY: __errno_location returns the calling thread's errno slot, always valid.
        Self(unsafe { *libc::__errno_location() })
    }
}

impl Drop for ErrnoGuard {
    fn drop(&mut self) {
        // SAFETY: as in `save`.
        unsafe { *libc::__errno_location() = self.0 };
    }
}

/// Restore the terminal from a signal handler: only async-signal-safe calls.
fn restore_from_signal() {
    if RAW_MODE.load(Ordering::Acquire) {
        if let Some(t) = SAVED_TERMIOS.get() {
            // SAFETY: `t` is a termios read by tcgetattr from this terminal; tcsetattr is
            // async-signal-safe.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t) };
        }
    }
}

/// Put the terminal back in raw mode from a signal handler, if raw mode is on.
fn enter_raw_from_signal() {
    if RAW_MODE.load(Ordering::Acquire) {
        if let Some(t) = RAW_TERMIOS.get() {
            // SAFETY: `t` is the raw-mode termios read by tcgetattr from this terminal;
            // tcsetattr is async-signal-safe.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t) };
        }
    }
}

/// Catch SIGTERM, SIGHUP and SIGINT so the machine can flush and stop cleanly; SIGTSTP and
/// SIGCONT to leave and re-enter raw mode around a stop; the fatal signals to restore the
/// terminal before dying of them; and ignore SIGXFSZ: a disk write past the host's file-size
/// limit then fails with EFBIG, which the guest sees as an I/O error, instead of killing the
/// VM.
pub fn install_signal_handlers() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    for (sig, previous) in [
        (libc::SIGSEGV, &PREVIOUS_SEGV),
        (libc::SIGBUS, &PREVIOUS_BUS),
    ] {
        // SAFETY: sigaction with a null new action only writes the current one into ours.
        let current = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            (libc::sigaction(sig, std::ptr::null(), &mut action) == 0).then_some(action)
        };
        if let Some(action) = current {
            let _ = previous.set(action);
        }
    }
    let handlers: Vec<(libc::c_int, usize, libc::c_int)> =
        [libc::SIGTERM, libc::SIGHUP, libc::SIGINT]
            .into_iter()
            .map(|sig| (sig, on_signal as *const () as usize, libc::SA_RESTART))
            .chain([
                (
                    libc::SIGTSTP,
                    on_terminal_stop as *const () as usize,
                    libc::SA_RESTART,
                ),
                (
                    libc::SIGCONT,
                    on_continue as *const () as usize,
                    libc::SA_RESTART,
                ),
            ])
            // On the alternate signal stack Rust sets up per thread, so a stack overflow's SIGSEGV
            // can still be handled.
            .chain(FATAL_SIGNALS.into_iter().map(|sig| {
                (
                    sig,
                    on_fatal_signal as *const () as usize,
                    libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK,
                )
            }))
            .collect();
    for (sig, handler, flags) in handlers {
        // SAFETY: every handler here only touches atomics, saved settings and
        // async-signal-safe calls, and has the form its flags say.
        if !unsafe { set_action(sig, handler, flags) } {
            tracing::warn!("cannot catch signal {sig}");
        }
    }
}

/// Raw mode for the life of this guard; dropping it (or a panic) restores the terminal.
pub struct RawTerminal(());

impl RawTerminal {
    /// Put the terminal on stdin into raw mode, so every key (Ctrl-C, arrows) reaches the guest.
    pub fn enable() -> std::io::Result<RawTerminal> {
        // SAFETY: tcgetattr writes a termios we own; a zeroed termios is a valid initial value.
        let saved = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            (libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0).then_some(t)
        };
        if let Some(t) = saved {
            // The first settings seen are the user's own; later calls find them kept.
            let _ = SAVED_TERMIOS.set(t);
        }
        crossterm::terminal::enable_raw_mode()?;
        // SAFETY: as above.
        let raw = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            (libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0).then_some(t)
        };
        if let Some(t) = raw {
            let _ = RAW_TERMIOS.set(t);
        }
        RAW_MODE.store(true, Ordering::Release);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        Ok(RawTerminal(()))
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        restore();
    }
}

/// Leave raw mode if it is on (idempotent).
fn restore() {
    if RAW_MODE.swap(false, Ordering::AcqRel) {
        if let Err(e) = crossterm::terminal::disable_raw_mode() {
            tracing::warn!("cannot restore the terminal: {e}");
        }
        // crossterm restores what it saved; make sure of the exact original settings too.
        if let Some(t) = SAVED_TERMIOS.get() {
            // SAFETY: `t` is a termios read by tcgetattr from this terminal.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t) };
        }
    }
}

/// Whether stdin is a terminal (interactive console).
pub fn stdin_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal()
}

/// Feed stdin to the UART from a thread of its own. With `escapes`, `Ctrl-A` sequences are
/// handled here and set `requests` instead of reaching the guest.
pub fn spawn_reader(input: UartInput, escapes: bool, requests: Arc<HostRequests>) {
    let spawned = std::thread::Builder::new()
        .name("console-input".into())
        .spawn(move || {
            let mut stdin = std::io::stdin();
            // Large enough for piped input to flow in big steps; a terminal returns what was
            // typed, however short.
            let mut buf = vec![0u8; 16 << 10];
            let mut keys = EscapeState::default();
            loop {
                let n = match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    // A stop and continue (SIGTSTP, SIGCONT) may interrupt the read.
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                if !escapes {
                    // Waits while the UART's queue is full: stdin is not read meanwhile, so a
                    // producer faster than the guest is held back and nothing is dropped.
                    input.push_blocking(&buf[..n]);
                    continue;
                }
                let mut guest = Vec::with_capacity(n);
                for &b in &buf[..n] {
                    match keys.key(b) {
                        Key::Guest(b) => guest.push(b),
                        Key::Held => {}
                        Key::Quit => {
                            requests.quit.store(true, Ordering::Release);
                        }
                        Key::Stats => requests.stats.store(true, Ordering::Release),
                        Key::Save => requests.save.store(true, Ordering::Release),
                        Key::Help => {
                            let mut err = std::io::stderr().lock();
                            let _ = err.write_all(HELP.as_bytes());
                            let _ = err.flush();
                        }
                    }
                }
                input.push_blocking(&guest);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("no console input: cannot start the reader thread: {e}");
    }
}

/// What one input byte means.
#[derive(Debug, PartialEq, Eq)]
enum Key {
    Guest(u8),
    Held,
    Quit,
    Stats,
    Save,
    Help,
}

/// Ctrl-A escape decoding.
#[derive(Debug, Default)]
struct EscapeState {
    after_escape: bool,
}

impl EscapeState {
    fn key(&mut self, b: u8) -> Key {
        if !self.after_escape {
            if b == ESCAPE {
                self.after_escape = true;
                return Key::Held;
            }
            return Key::Guest(b);
        }
        self.after_escape = false;
        match b {
            ESCAPE => Key::Guest(ESCAPE),
            b'x' | b'X' => Key::Quit,
            b's' => Key::Stats,
            b'S' => Key::Save,
            b'h' | b'H' | b'?' => Key::Help,
            // Unknown escapes are dropped, as QEMU does.
            _ => Key::Held,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences() {
        let mut k = EscapeState::default();
        let keys: Vec<Key> = [
            b'a', 3, ESCAPE, ESCAPE, ESCAPE, b'x', ESCAPE, b'h', ESCAPE, b'q',
        ]
        .iter()
        .map(|&b| k.key(b))
        .collect();
        assert_eq!(
            keys,
            vec![
                Key::Guest(b'a'),
                Key::Guest(3),
                Key::Held,
                Key::Guest(ESCAPE),
                Key::Held,
                Key::Quit,
                Key::Held,
                Key::Help,
                Key::Held,
                Key::Held,
            ]
        );
        assert_eq!(k.key(b'z'), Key::Guest(b'z'));
        // Lower case s reports statistics, upper case S saves a snapshot.
        assert_eq!(k.key(ESCAPE), Key::Held);
        assert_eq!(k.key(b's'), Key::Stats);
        assert_eq!(k.key(ESCAPE), Key::Held);
        assert_eq!(k.key(b'S'), Key::Save);
    }
}
