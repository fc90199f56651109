//! Devices that serve their queues on a host thread of their own (virtio-9p, virtio-net), so
//! that host I/O never runs on the CPU thread.
//!
//! The transport ([`super::VirtioMmio`]) keeps the register window on the CPU thread. When the
//! driver sets `DRIVER_OK`, it hands the device a copy of the configured queues, a view of guest
//! memory and the shared [`Interrupt`] ([`ActiveQueues`]); the device passes them to its worker
//! thread. A `QueueNotify` write then only wakes the worker ([`Worker::kick`], one `eventfd`
//! write). The worker serves the rings, adds used buffers and raises the interrupt
//! ([`Interrupt::raise`]), which also wakes an idle CPU thread ([`Waker`]).
//!
//! A device reset (status 0), and dropping the device, take the queues back synchronously
//! ([`Worker::deactivate`]): once it returns, the worker no longer touches guest memory, so the
//! guest may reuse the rings and the machine may unmap its RAM.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use virtio_queue::{Queue, QueueT};

use super::mmio::INT_USED_BUFFER;
use super::{Chain, GuestMemoryMmap};
use crate::irq::IrqLine;

/// Wakes the thread that runs the guest CPU when an interrupt is raised from another thread (so
/// a guest waiting in WFI notices at once). The machine supplies it; devices only call it.
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// A virtio device's interrupt: the `InterruptStatus` register and the line it drives, shared
/// by the transport (CPU thread: reads, acknowledgements, reset) and a worker thread (raises).
///
/// The line is high exactly while the status is not 0; both change under one lock, so an
/// acknowledgement racing a raise never leaves the line low with a cause pending.
#[derive(Clone)]
pub struct Interrupt {
    shared: Arc<InterruptShared>,
}

struct InterruptShared {
    state: Mutex<InterruptState>,
    waker: Mutex<Option<Waker>>,
}

struct InterruptState {
    status: u32,
    line: IrqLine,
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupt")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Interrupt {
    /// An interrupt with no cause pending, driving `line`.
    pub fn new(line: IrqLine) -> Self {
        line.lower();
        Self {
            shared: Arc::new(InterruptShared {
                state: Mutex::new(InterruptState { status: 0, line }),
                waker: Mutex::new(None),
            }),
        }
    }

    /// Calls `waker` after every raise (replacing any earlier one).
    pub fn set_waker(&self, waker: Waker) {
        *self
            .shared
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(waker);
    }

    /// The `InterruptStatus` register.
    pub fn status(&self) -> u32 {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .status
    }

    /// Sets the causes in `bits`, drives the line high and wakes the CPU thread.
    pub fn raise(&self, bits: u32) {
        {
            let mut state = self
                .shared
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            state.status |= bits;
            let high = state.status != 0;
            state.line.set(high);
        }
        let waker = self
            .shared
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(wake) = waker {
            wake();
        }
    }

    /// Clears the causes in `bits` (`InterruptACK`); the line follows.
    pub fn acknowledge(&self, bits: u32) {
        let mut state = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.status &= !bits;
        let high = state.status != 0;
        state.line.set(high);
    }

    /// Sets `InterruptStatus` to exactly `bits` and the line to match (snapshot restore).
    pub fn set_status(&self, bits: u32) {
        let mut state = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.status = bits;
        let high = state.status != 0;
        state.line.set(high);
    }

    /// Clears every cause (device reset).
    pub fn clear(&self) {
        self.acknowledge(u32::MAX);
    }
}

/// What a worker serves while the driver has the device running: the queues as the driver set
/// them up, guest memory, and the interrupt.
pub struct ActiveQueues {
    /// Guest RAM, where the rings and buffers live.
    pub memory: GuestMemoryMmap,
    /// The device's queues, in index order (a queue the driver left unused is not ready).
    pub queues: Vec<Queue>,
    /// The transport's interrupt.
    pub interrupt: Interrupt,
}

impl std::fmt::Debug for ActiveQueues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActiveQueues")
            .field("queues", &self.queues.len())
            .finish_non_exhaustive()
    }
}

impl ActiveQueues {
    /// Serves every available chain of queue `index` with `serve` (which gets the chain and
    /// guest memory and returns the used length), then raises the used-buffer interrupt if the
    /// driver wants one.
    pub fn drain(
        &mut self,
        index: usize,
        name: &str,
        mut serve: impl FnMut(Chain<'_>, &GuestMemoryMmap) -> u32,
    ) {
        let Some(queue) = self.queues.get_mut(index) else {
            return;
        };
        let memory = &self.memory;
        if queue.ready() && drain_queue(queue, memory, name, |chain| serve(chain, memory)) {
            self.interrupt.raise(INT_USED_BUFFER);
        }
    }
}

/// Serves every available chain of `queue` with `serve` (which returns the used length), with
/// notifications suppressed meanwhile and re-checked after (the `EVENT_IDX` protocol). Returns
/// whether the driver wants a used-buffer interrupt for what was served.
pub(crate) fn drain_queue(
    queue: &mut Queue,
    memory: &GuestMemoryMmap,
    name: &str,
    mut serve: impl FnMut(Chain<'_>) -> u32,
) -> bool {
    let mut used = 0usize;
    loop {
        if let Err(error) = queue.disable_notification(memory) {
            tracing::warn!(device = name, %error, "cannot disable notifications");
        }
        let mut popped = 0usize;
        while let Some(chain) = queue.pop_descriptor_chain(memory) {
            let head = chain.head_index();
            let len = serve(chain);
            // Only buffers that reached the used ring count towards the interrupt: a chain
            // that cannot be reported (head out of range, used ring outside RAM) must not
            // raise a used-buffer interrupt with nothing to find (Linux counts those as
            // spurious and eventually disables the line).
            match queue.add_used(memory, head, len) {
                Ok(()) => used += 1,
                Err(error) => {
                    tracing::warn!(device = name, head, %error, "cannot add to used ring");
                }
            }
            popped += 1;
        }
        // Re-enabling publishes avail_event (EVENT_IDX); a chain that arrived meanwhile is
        // served now. An avail ring the iterator refuses yields nothing: stop there.
        match queue.enable_notification(memory) {
            Ok(true) if popped > 0 => continue,
            Ok(_) => break,
            Err(error) => {
                tracing::warn!(device = name, %error, "cannot enable notifications");
                break;
            }
        }
    }
    used > 0 && needs_interrupt(queue, memory, name)
}

/// Whether the driver wants an interrupt for the used buffers added since the last one.
pub(crate) fn needs_interrupt(queue: &mut Queue, memory: &GuestMemoryMmap, name: &str) -> bool {
    queue.needs_notification(memory).unwrap_or_else(|error| {
        tracing::warn!(device = name, %error, "cannot read used_event");
        true
    })
}

/// A Linux `eventfd`: a counter one thread signals and another waits on with `poll`.
#[derive(Debug)]
pub struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    /// A non-blocking eventfd with its counter at 0.
    pub fn new() -> io::Result<Self> {
        // SAFETY: eventfd has no memory arguments; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by eventfd and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd })
    }

    /// Adds 1 to the counter, waking a poller.
    pub fn signal(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live local buffer to our own fd.
        let written = unsafe { libc::write(self.fd.as_raw_fd(), one.as_ptr().cast(), one.len()) };
        if written < 0 {
            // EAGAIN: the counter is saturated, the poller will wake anyway.
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::WouldBlock {
                tracing::warn!(%error, "eventfd write failed");
            }
        }
    }

    /// Resets the counter to 0; returns whether it was signalled.
    pub fn consume(&self) -> bool {
        let mut value = [0u8; 8];
        // SAFETY: reads at most 8 bytes into a live local buffer from our own fd.
        let got = unsafe { libc::read(self.fd.as_raw_fd(), value.as_mut_ptr().cast(), 8) };
        got == 8
    }

    /// Waits until the counter is signalled or `timeout` passes (`None`: no limit).
    pub fn wait(&self, timeout: Option<Duration>) {
        let mut pollfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let timeout_ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
        // SAFETY: one live pollfd; the result only matters as "woke up".
        unsafe { libc::poll(&mut pollfd, 1, timeout_ms) };
    }
}

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Messages from a device to its worker thread.
pub(crate) enum Control {
    /// The driver set `DRIVER_OK`: serve these queues.
    Activate(ActiveQueues),
    /// The device was reset: drop the queues and acknowledge.
    Deactivate,
    /// The device is going away: drop everything, acknowledge and end the thread.
    Shutdown,
}

/// The worker thread's end: the wake-up eventfd, the control messages and the current queues.
pub(crate) struct WorkerInbox {
    /// Signalled by kicks and by every control message.
    pub(crate) wake: Arc<EventFd>,
    control: Receiver<Control>,
    acks: Sender<()>,
    /// The queues while the driver has the device running.
    pub(crate) active: Option<ActiveQueues>,
}

/// What the worker loop does after [`WorkerInbox::take_messages`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Keep serving.
    Continue,
    /// The device is gone: leave the loop.
    Stop,
}

impl WorkerInbox {
    /// Consumes the wake-up and applies every pending control message.
    pub(crate) fn take_messages(&mut self) -> Flow {
        self.wake.consume();
        loop {
            match self.control.try_recv() {
                Ok(Control::Activate(queues)) => self.active = Some(queues),
                Ok(Control::Deactivate) => {
                    self.active = None;
                    let _ = self.acks.send(());
                }
                Ok(Control::Shutdown) | Err(mpsc::TryRecvError::Disconnected) => {
                    self.active = None;
                    let _ = self.acks.send(());
                    return Flow::Stop;
                }
                Err(mpsc::TryRecvError::Empty) => return Flow::Continue,
            }
        }
    }
}

/// The device's end of a worker thread.
pub(crate) struct Worker {
    wake: Arc<EventFd>,
    control: Sender<Control>,
    acks: Receiver<()>,
    thread: Option<JoinHandle<()>>,
    name: &'static str,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// Starts thread `name` running `body` with the inbox.
    pub(crate) fn spawn(
        name: &'static str,
        body: impl FnOnce(WorkerInbox) + Send + 'static,
    ) -> io::Result<Self> {
        let wake = Arc::new(EventFd::new()?);
        let (control, control_rx) = mpsc::channel();
        let (acks_tx, acks) = mpsc::channel();
        let inbox = WorkerInbox {
            wake: wake.clone(),
            control: control_rx,
            acks: acks_tx,
            active: None,
        };
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || body(inbox))?;
        Ok(Self {
            wake,
            control,
            acks,
            thread: Some(thread),
            name,
        })
    }

    /// Hands the queues to the worker.
    pub(crate) fn activate(&self, queues: ActiveQueues) {
        if self.control.send(Control::Activate(queues)).is_err() {
            tracing::error!(device = self.name, "the device's worker thread is gone");
        }
        self.wake.signal();
    }

    /// Wakes the worker to look at its queues.
    pub(crate) fn kick(&self) {
        self.wake.signal();
    }

    /// Takes the queues back; returns once the worker has dropped them.
    pub(crate) fn deactivate(&self) {
        self.request(Control::Deactivate);
    }

    fn request(&self, message: Control) {
        // Stale acknowledgements (from a worker that stopped on its own) do not count.
        while self.acks.try_recv().is_ok() {}
        if self.control.send(message).is_err() {
            return;
        }
        self.wake.signal();
        // Err: the worker ended (it dropped its queues with it).
        let _ = self.acks.recv();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.request(Control::Shutdown);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!(device = self.name, "the device's worker thread panicked");
            }
        }
    }
}
