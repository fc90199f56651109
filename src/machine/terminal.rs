//! The host terminal: console input from a reader thread (the CPU never blocks on stdin), raw
//! mode with QEMU-style `Ctrl-A` escapes when stdin is a terminal, and the guarantee that the
//! terminal is restored on exit, on panic and on SIGTERM/SIGHUP/SIGINT.
//!
//! Signals only set a flag here; the machine notices it between blocks, flushes its disks and
//! stops. A second signal while the first is being handled restores the terminal and exits at
//! once, in case the machine cannot stop.

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
C-a C-a  send C-a to the guest\r\n";

/// What the user asked of the VM itself (rather than of the guest).
#[derive(Debug, Default)]
pub struct HostRequests {
    quit: AtomicBool,
    stats: AtomicBool,
}

impl HostRequests {
    /// Take a pending quit request.
    pub fn take_quit(&self) -> bool {
        self.quit.swap(false, Ordering::AcqRel)
    }

    /// Take a pending statistics request.
    pub fn take_stats(&self) -> bool {
        self.stats.swap(false, Ordering::AcqRel)
    }
}

/// The last termination signal received (0 = none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Terminal settings before raw mode. Set once, before raw mode is first turned on, and read
/// without locking, so the signal handler can use it too.
static SAVED_TERMIOS: OnceLock<libc::termios> = OnceLock::new();
/// Raw mode is on (so there is something to restore).
static RAW_MODE: AtomicBool = AtomicBool::new(false);

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

/// Catch SIGTERM, SIGHUP and SIGINT so the machine can flush and stop cleanly, and ignore
/// SIGXFSZ: a disk write past the host's file-size limit then fails with EFBIG, which the
/// guest sees as an I/O error, instead of killing the VM.
pub fn install_signal_handlers() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        // SAFETY: `on_signal` only touches atomics and async-signal-safe calls; the sigaction
        // struct is fully initialised (zeroed, then the handler and an empty mask).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
                tracing::warn!("cannot catch signal {sig}");
            }
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
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
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
            b's' | b'S' => Key::Stats,
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
    }
}
