//! Host faults on guest memory. Compiled code may load and store guest memory without checks
//! ([`crate::exec::platform::Platform::unchecked_memory`]): the host pages of the guest's
//! address space carry the guest's protections ([`super::mem`]), so a bad access faults on the
//! host. The platform allows that only while the guest has no handler for SIGSEGV or SIGBUS, so
//! such a fault can only kill the guest: a SIGSEGV or SIGBUS at a host address inside the
//! reservation ends this process with the same signal, as qemu-riscv32 ends, after the same
//! kind of message the checked path prints (without the pc, which compiled code does not
//! keep). Any other fault goes to the handler that was there before (Rust's stack-overflow
//! report, or the default action).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The host address range of the current guest reservation (start, end); empty until a
/// process is loaded.
static RESERVATION_START: AtomicUsize = AtomicUsize::new(0);
static RESERVATION_END: AtomicUsize = AtomicUsize::new(0);

/// The actions for SIGSEGV and SIGBUS that were installed before ours.
struct Previous([libc::sigaction; 2]);

// SAFETY: `sigaction` is plain data (a handler address, a signal set and flags); it is written
// once, before our handler is installed, and only read afterwards.
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

static PREVIOUS: OnceLock<Previous> = OnceLock::new();

const SIGNALS: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGBUS];

/// From now on, faults at host addresses in `range` are the guest's (the reservation of the
/// program now running: set when it starts and at each `execve` that succeeds). Installs the
/// handler the first time.
pub fn watch(range: std::ops::Range<usize>) {
    RESERVATION_START.store(range.start, Ordering::Relaxed);
    RESERVATION_END.store(range.end, Ordering::Relaxed);
    PREVIOUS.get_or_init(|| {
        // SAFETY: sigaction with a fully initialised struct; the old actions are read into
        // zeroed structs. The handler (`on_fault`) only uses async-signal-safe calls.
        unsafe {
            let mut previous: [libc::sigaction; 2] = std::mem::zeroed();
            for (signo, old) in SIGNALS.iter().zip(previous.iter_mut()) {
                libc::sigaction(*signo, std::ptr::null(), old);
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fault as extern "C" fn(_, _, _) as libc::sighandler_t;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            // Published before the handler can run, so it always finds the old actions.
            let stored = Previous(previous);
            for signo in SIGNALS {
                libc::sigaction(signo, &sa, std::ptr::null_mut());
            }
            stored
        }
    });
}

extern "C" fn on_fault(signo: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let start = RESERVATION_START.load(Ordering::Relaxed);
    let end = RESERVATION_END.load(Ordering::Relaxed);
    if (start..end).contains(&addr) {
        report(signo, (addr - start) as u64);
        // With the default action back and core dumps off, returning re-runs the faulting
        // access, which ends the process by `signo` (the signal is unblocked again when the
        // handler returns).
        super::signal::default_action_without_core(signo);
        return;
    }
    // Not ours: the previous action takes the repeated fault.
    let index = usize::from(signo == libc::SIGBUS);
    let previous = PREVIOUS.get().map(|p| p.0[index]);
    // SAFETY: sigaction with an initialised struct (the one saved at install, or zeroed:
    // SIG_DFL).
    unsafe {
        let action = previous.unwrap_or_else(|| std::mem::zeroed());
        libc::sigaction(signo, &action, std::ptr::null_mut());
    }
}

/// "rv32vm: guest killed by SIGSEGV (addr 0x...)" on stderr, formatted without allocating
/// (this runs in a signal handler).
fn report(signo: libc::c_int, guest_addr: u64) {
    let mut line = [0u8; 80];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        let n = bytes.len().min(line.len() - len);
        line[len..len + n].copy_from_slice(&bytes[..n]);
        len += n;
    };
    put(b"rv32vm: guest killed by ");
    put(if signo == libc::SIGBUS {
        b"SIGBUS"
    } else {
        b"SIGSEGV"
    });
    put(b" (addr 0x");
    let digits = if guest_addr > u32::MAX as u64 { 16 } else { 8 };
    for i in (0..digits).rev() {
        put(&[b"0123456789abcdef"[(guest_addr >> (4 * i)) as usize & 15]]);
    }
    put(b")\n");
    // SAFETY: write(2) of an initialised buffer is async-signal-safe.
    unsafe { libc::write(2, line.as_ptr().cast(), len) };
}
