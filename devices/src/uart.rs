//! A 16550A UART (`ns16550a`), as Linux's 8250 driver, OpenSBI and earlycon drive it.
//!
//! A plain state machine with no threads or I/O of its own: transmitted bytes go to an
//! [`std::io::Write`], received bytes come from a [`UartInput`] queue that a console reader thread
//! fills, and the interrupt output is an [`IrqLine`] (PLIC source 10 on the virt map).
//!
//! Registers are one byte apart (`reg-shift = 0`, `reg-io-width = 1`). An access of any width
//! at offsets 0..=7 acts on the register at that offset, taking the low byte of a write and
//! zero-extending a read; offsets 8.. of the window read 0 and ignore writes.
//!
//! Model choices (the same as QEMU's `serial.c`, which Linux's 8250 driver is tested against):
//! - Transmission is instantaneous: a byte written to THR is on the output before the write
//!   returns, so LSR.THRE and LSR.TEMT always read 1 and the THR-empty interrupt condition comes
//!   back right after each THR write.
//! - The THR-empty interrupt is raised when IER.ETBEI goes from 0 to 1 (THR is always empty),
//!   and after every THR write; it is cleared by a read of IIR that reports it, by a THR write,
//!   and by clearing IER.ETBEI. This is what the 8250 driver's THRE test at port startup checks.
//! - The receive FIFO holds 16 bytes (1 with FCR.FIFO off); its trigger level is treated as 1,
//!   so "received data available" is reported as soon as one byte is there (the character
//!   timeout indication is never needed). Host input waits in the [`UartInput`] queue while the
//!   FIFO is full, and the queue's writer waits while the queue is full, so input is never lost
//!   on the host side.
//! - Host input crosses the receive line in bursts, paced by the guest ([`RxPacing`]): a burst
//!   of up to [`RX_BURST`] bytes flows into the FIFO as fast as the guest reads RBR; then the
//!   line pauses for [`RX_PAUSE_FACTOR`] times as long as the guest took to read the burst. A
//!   line that refilled the FIFO on every RBR read without pause would keep the receive
//!   interrupt asserted for as long as input waits: the guest would never leave its interrupt
//!   handler to consume what it read (Linux then overruns its tty buffers and drops input).
//!   With the pause, reading takes about 1 / (1 + [`RX_PAUSE_FACTOR`]) of the guest's time,
//!   however fast or slow the guest runs, and the rest goes to whatever consumes the input.
//! - RTS flow control: once the guest has raised MCR.RTS (outside loopback), host input is held
//!   while RTS is low, as a host with hardware flow control would. Linux lowers RTS when its
//!   tty buffer fills only with `stty crtscts`, and on the last close of the port (HUPCL);
//!   with it, a guest that reads slower than the line loses nothing. A guest that never
//!   touches RTS (firmware, bare-metal programs) receives regardless.
//! - Loopback (MCR.LOOP): THR bytes go to the receive FIFO instead of the output (setting
//!   LSR.OE when it is full), host input is held back, and MSR reflects MCR (DTR→DSR, RTS→CTS,
//!   OUT1→RI, OUT2→DCD), as the 8250 probe expects. Unlike QEMU, changes of those inputs set the
//!   MSR delta bits (and so can raise the modem status interrupt), as on a real 16550A.
//!
//! `tests/uart_qemu.rs` replays a register script against QEMU's recorded answers.
//! - MCR.OUT2 does not gate the interrupt output (a PC board feature the virt machine lacks).

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::bus::MmioDevice;
use crate::irq::IrqLine;
use crate::regs::access_mask;
use crate::state::{StateError, StateReader, StateWriter};

/// Size of the UART's MMIO window on the virt memory map.
pub const MMIO_SIZE: u64 = 0x100;
/// Depth of the receive FIFO when FCR enables it.
pub const RX_FIFO_SIZE: usize = 16;
/// Bytes the host input queue holds before [`UartInput::push_blocking`] waits for the guest to
/// take some (back-pressure: the console reader stops reading stdin, nothing is dropped).
pub const INPUT_QUEUE_LIMIT: usize = 1 << 20;
/// Bytes of host input per burst: what Linux's 8250 driver reads in one interrupt at most.
pub const RX_BURST: usize = 256;
/// After the guest has read a burst of input, the next burst waits this many times as long as
/// reading it took (see [`RxPacing`]).
pub const RX_PAUSE_FACTOR: u32 = 3;
/// The longest pause between bursts (a guest that sat on a burst for long, with interrupts
/// off, is not made to wait for ages afterwards).
pub const RX_MAX_PAUSE: Duration = Duration::from_millis(10);
/// A reader waiting for room in a full queue resumes once the queue is down to this.
const INPUT_QUEUE_LOW_WATER: usize = INPUT_QUEUE_LIMIT / 2;

/// Receiver buffer register (read, DLAB = 0).
pub const RBR: u64 = 0;
/// Transmitter holding register (write, DLAB = 0).
pub const THR: u64 = 0;
/// Divisor latch, low byte (DLAB = 1).
pub const DLL: u64 = 0;
/// Interrupt enable register (DLAB = 0).
pub const IER: u64 = 1;
/// Divisor latch, high byte (DLAB = 1).
pub const DLM: u64 = 1;
/// Interrupt identification register (read).
pub const IIR: u64 = 2;
/// FIFO control register (write).
pub const FCR: u64 = 2;
/// Line control register.
pub const LCR: u64 = 3;
/// Modem control register.
pub const MCR: u64 = 4;
/// Line status register.
pub const LSR: u64 = 5;
/// Modem status register.
pub const MSR: u64 = 6;
/// Scratch register.
pub const SCR: u64 = 7;

/// IER: received data available interrupt enable (ERBFI).
pub const IER_RDI: u8 = 0x01;
/// IER: transmitter holding register empty interrupt enable (ETBEI).
pub const IER_THRI: u8 = 0x02;
/// IER: receiver line status interrupt enable (ELSI).
pub const IER_RLSI: u8 = 0x04;
/// IER: modem status interrupt enable (EDSSI).
pub const IER_MSI: u8 = 0x08;
/// IER bits a 16550A implements.
pub const IER_MASK: u8 = 0x0f;

/// IIR: no interrupt pending.
pub const IIR_NO_INT: u8 = 0x01;
/// IIR: modem status change (lowest priority).
pub const IIR_MSI: u8 = 0x00;
/// IIR: transmitter holding register empty.
pub const IIR_THRI: u8 = 0x02;
/// IIR: received data available.
pub const IIR_RDI: u8 = 0x04;
/// IIR: receiver line status (highest priority).
pub const IIR_RLSI: u8 = 0x06;
/// IIR: interrupt identification bits.
pub const IIR_ID_MASK: u8 = 0x0f;
/// IIR bits 7:6: both set while the FIFOs are enabled (how drivers recognise a 16550A).
pub const IIR_FIFO_ENABLED: u8 = 0xc0;

/// FCR: enable the FIFOs.
pub const FCR_ENABLE_FIFO: u8 = 0x01;
/// FCR: clear the receive FIFO (self-clearing).
pub const FCR_CLEAR_RCVR: u8 = 0x02;
/// FCR: clear the transmit FIFO (self-clearing).
pub const FCR_CLEAR_XMIT: u8 = 0x04;
/// FCR bits that are kept (enable, DMA mode, receive trigger level).
pub const FCR_KEPT_BITS: u8 = 0xc9;

/// LCR: divisor latch access bit.
pub const LCR_DLAB: u8 = 0x80;

/// MCR: data terminal ready.
pub const MCR_DTR: u8 = 0x01;
/// MCR: request to send.
pub const MCR_RTS: u8 = 0x02;
/// MCR: auxiliary output 1.
pub const MCR_OUT1: u8 = 0x04;
/// MCR: auxiliary output 2.
pub const MCR_OUT2: u8 = 0x08;
/// MCR: loopback mode.
pub const MCR_LOOP: u8 = 0x10;
/// MCR bits a 16550A implements.
pub const MCR_MASK: u8 = 0x1f;

/// LSR: data ready.
pub const LSR_DR: u8 = 0x01;
/// LSR: overrun error.
pub const LSR_OE: u8 = 0x02;
/// LSR: parity error.
pub const LSR_PE: u8 = 0x04;
/// LSR: framing error.
pub const LSR_FE: u8 = 0x08;
/// LSR: break interrupt.
pub const LSR_BI: u8 = 0x10;
/// LSR: transmitter holding register empty.
pub const LSR_THRE: u8 = 0x20;
/// LSR: transmitter empty (holding and shift registers).
pub const LSR_TEMT: u8 = 0x40;
/// LSR bits that raise a receiver line status interrupt.
pub const LSR_ERROR_BITS: u8 = LSR_OE | LSR_PE | LSR_FE | LSR_BI;

/// MSR: delta clear to send.
pub const MSR_DCTS: u8 = 0x01;
/// MSR: delta data set ready.
pub const MSR_DDSR: u8 = 0x02;
/// MSR: trailing edge ring indicator.
pub const MSR_TERI: u8 = 0x04;
/// MSR: delta data carrier detect.
pub const MSR_DDCD: u8 = 0x08;
/// MSR: clear to send.
pub const MSR_CTS: u8 = 0x10;
/// MSR: data set ready.
pub const MSR_DSR: u8 = 0x20;
/// MSR: ring indicator.
pub const MSR_RI: u8 = 0x40;
/// MSR: data carrier detect.
pub const MSR_DCD: u8 = 0x80;

/// Modem inputs of a UART wired to a terminal that is always there.
const MODEM_INPUTS_CONNECTED: u8 = MSR_DCD | MSR_DSR | MSR_CTS;
/// Divisor for 115200 baud from the usual 1.8432 MHz clock (QEMU's DTB says 3.6864 MHz; the
/// value only matters to guests that read it back).
const RESET_DIVISOR: u16 = 1;

#[derive(Debug, Default)]
struct InputQueue {
    bytes: Mutex<VecDeque<u8>>,
    /// Mirrors `!bytes.is_empty()`, so the CPU thread can poll without taking the lock.
    non_empty: AtomicBool,
    /// Signalled whenever the UART takes bytes out of the queue, for a reader waiting for room.
    room: Condvar,
}

/// The host side of the UART's receive line: a queue that a console reader thread fills and the
/// UART drains into its receive FIFO when the CPU thread calls [`Uart::poll_input`].
///
/// Cheap to clone; all clones feed the same UART. The queue holds about [`INPUT_QUEUE_LIMIT`]
/// bytes: a reader thread pushes with [`UartInput::push_blocking`], which waits while the queue
/// is full, so input is never lost and a fast producer (`yes | rv32vm ...`) is slowed down to
/// the guest's pace. The CPU thread itself only ever calls [`UartInput::push`], which never
/// waits, and takes the queue's lock only for a queue operation.
#[derive(Debug, Clone, Default)]
pub struct UartInput {
    queue: Arc<InputQueue>,
}

impl UartInput {
    /// A new, empty input queue.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<u8>> {
        // A panic elsewhere while holding the lock leaves a valid queue of bytes; keep using it.
        self.queue
            .bytes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues all of `bytes` for the guest at once, even beyond [`INPUT_QUEUE_LIMIT`]; never
    /// waits. For short input produced on the CPU thread (`--send` texts, tests).
    pub fn push(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut queue = self.lock();
        queue.extend(bytes);
        self.queue.non_empty.store(true, Ordering::Release);
    }

    /// Queues all of `bytes` for the guest, waiting while the queue holds
    /// [`INPUT_QUEUE_LIMIT`] bytes until the UART has taken some. For a console reader thread;
    /// never call it on the thread that runs the UART (it would wait for itself).
    pub fn push_blocking(&self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let mut queue = self.lock();
            if queue.len() >= INPUT_QUEUE_LIMIT {
                // Wait for half the queue to drain, not for each byte, so the reader wakes up
                // once per half queue rather than once per byte the guest reads.
                queue = self
                    .queue
                    .room
                    .wait_while(queue, |queue| queue.len() > INPUT_QUEUE_LOW_WATER)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            let accepted = rest.len().min(INPUT_QUEUE_LIMIT - queue.len());
            queue.extend(&rest[..accepted]);
            self.queue.non_empty.store(true, Ordering::Release);
            rest = &rest[accepted..];
        }
    }

    /// Bytes waiting in the queue (not yet in the UART's FIFO).
    pub fn queued(&self) -> usize {
        self.lock().len()
    }

    /// Whether bytes are waiting to enter the UART.
    pub fn has_pending(&self) -> bool {
        self.queue.non_empty.load(Ordering::Acquire)
    }

    /// The bytes waiting in the queue, in order, left in place (a snapshot saves them so a
    /// key typed just before the save reaches the restored guest).
    pub fn pending_bytes(&self) -> Vec<u8> {
        self.lock().iter().copied().collect()
    }

    /// Moves up to `room` bytes into `fifo`.
    fn drain_into(&self, fifo: &mut VecDeque<u8>, room: usize) {
        if room == 0 || !self.has_pending() {
            return;
        }
        let mut queue = self.lock();
        let before = queue.len();
        let count = room.min(before);
        fifo.extend(queue.drain(..count));
        self.queue
            .non_empty
            .store(!queue.is_empty(), Ordering::Release);
        let crossed_low_water =
            before > INPUT_QUEUE_LOW_WATER && queue.len() <= INPUT_QUEUE_LOW_WATER;
        drop(queue);
        if crossed_low_water {
            self.queue.room.notify_all();
        }
    }
}

/// A clock for [`RxPacing`]: the time elapsed since some fixed start.
pub type RxClock = Arc<dyn Fn() -> Duration + Send + Sync>;

/// How host input crosses the receive line: in bursts of up to [`RX_BURST`] bytes, which flow
/// into the FIFO as fast as the guest reads it; after each, a pause of [`RX_PAUSE_FACTOR`]
/// times the time from the burst's first RBR read to its last (at most [`RX_MAX_PAUSE`]). The
/// line thus adapts to the guest's speed: reading input never takes more than a fixed share of
/// the guest's time, whatever the tier or the host's load.
#[derive(Clone)]
pub struct RxPacing {
    clock: RxClock,
    /// Bytes the current burst may still bring; `None` between bursts.
    burst_left: Option<usize>,
    /// When the guest first read from the current burst.
    first_read: Option<Duration>,
    /// The next burst starts at this time or later.
    next_burst_at: Duration,
}

impl std::fmt::Debug for RxPacing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxPacing")
            .field("burst_left", &self.burst_left)
            .field("next_burst_at", &self.next_burst_at)
            .finish_non_exhaustive()
    }
}

impl RxPacing {
    /// Pacing on the host's monotonic clock.
    pub fn host() -> Self {
        let start = Instant::now();
        Self::with_clock(Arc::new(move || start.elapsed()))
    }

    /// Pacing on `clock` (tests drive a manual one).
    pub fn with_clock(clock: RxClock) -> Self {
        Self {
            clock,
            burst_left: None,
            first_read: None,
            next_burst_at: Duration::ZERO,
        }
    }

    /// How many of `room` free FIFO places the line may fill now (`fifo_empty`: the FIFO holds
    /// nothing, so a new burst may start).
    fn allowance(&mut self, room: usize, fifo_empty: bool) -> usize {
        if self.burst_left.is_none() {
            if !fifo_empty || (self.clock)() < self.next_burst_at {
                return 0;
            }
            self.burst_left = Some(RX_BURST);
            self.first_read = None;
        }
        self.burst_left.unwrap_or(0).min(room)
    }

    /// `count` bytes entered the FIFO.
    fn entered(&mut self, count: usize) {
        if let Some(left) = &mut self.burst_left {
            *left = left.saturating_sub(count);
        }
    }

    /// The guest read RBR; `drained`: the FIFO is now empty and the burst has nothing more to
    /// bring (it is complete, or the host has no more input for now).
    fn read(&mut self, drained: bool) {
        if self.burst_left.is_none() {
            return;
        }
        let now = (self.clock)();
        let first_read = *self.first_read.get_or_insert(now);
        if drained {
            let reading = now.saturating_sub(first_read);
            self.next_burst_at = now + (reading * RX_PAUSE_FACTOR).min(RX_MAX_PAUSE);
            self.burst_left = None;
        }
    }

    /// The guest cleared the FIFO: the burst is over, without pause.
    fn dropped(&mut self) {
        self.burst_left = None;
    }
}

/// The 16550A UART. See the [module documentation](self) for the model.
pub struct Uart<W: Write> {
    interrupt_enable: u8,
    line_control: u8,
    modem_control: u8,
    fifo_control: u8,
    scratch: u8,
    divisor: u16,
    /// Latched LSR error bits (only OE happens: a loopback byte with a full FIFO).
    line_errors: u8,
    /// MSR delta bits (3:0) since the last MSR read.
    modem_deltas: u8,
    /// The THR-empty interrupt condition (QEMU's `thr_ipending`).
    thr_empty_pending: bool,
    rx_fifo: VecDeque<u8>,
    input: UartInput,
    /// How host input crosses the receive line; `None`: it fills the FIFO as soon as there is
    /// room.
    rx_pacing: Option<RxPacing>,
    /// The guest has raised RTS outside loopback since reset, so it does RTS flow control.
    rts_flow_control: bool,
    irq: IrqLine,
    out: W,
    /// Set once output failed, so a closed terminal does not flood the log.
    output_failed: bool,
}

impl<W: Write> std::fmt::Debug for Uart<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uart")
            .field("ier", &self.interrupt_enable)
            .field("lcr", &self.line_control)
            .field("mcr", &self.modem_control)
            .field("fcr", &self.fifo_control)
            .field("rx_fifo", &self.rx_fifo.len())
            .field("irq", &self.irq.level())
            .finish_non_exhaustive()
    }
}

impl<W: Write> Uart<W> {
    /// A UART in its reset state that writes transmitted bytes to `out` and drives `irq`.
    pub fn new(irq: IrqLine, out: W) -> Self {
        Self::with_input(irq, out, UartInput::new())
    }

    /// Like [`Uart::new`], receiving from an existing input queue (for example one whose
    /// reader thread was started before the machine was built).
    pub fn with_input(irq: IrqLine, out: W, input: UartInput) -> Self {
        let uart = Self {
            interrupt_enable: 0,
            line_control: 0,
            // QEMU (and vm-superio) reset with OUT2 set, the PC convention for "interrupts on".
            modem_control: MCR_OUT2,
            fifo_control: 0,
            scratch: 0,
            divisor: RESET_DIVISOR,
            line_errors: 0,
            modem_deltas: 0,
            thr_empty_pending: false,
            rx_fifo: VecDeque::with_capacity(RX_FIFO_SIZE),
            input,
            rx_pacing: Some(RxPacing::host()),
            rts_flow_control: false,
            irq,
            out,
            output_failed: false,
        };
        uart.update_irq();
        uart
    }

    /// Sets how host input crosses the receive line; `None` moves it into the FIFO as soon as
    /// the FIFO has room (what register-level tests want).
    pub fn set_rx_pacing(&mut self, pacing: Option<RxPacing>) {
        self.rx_pacing = pacing;
    }

    /// A handle for a console reader thread to feed input through.
    pub fn input(&self) -> UartInput {
        self.input.clone()
    }

    /// Queues host input for the guest and moves what fits into the receive FIFO.
    pub fn enqueue_input(&mut self, bytes: &[u8]) {
        self.input.push(bytes);
        self.poll_input();
    }

    /// Moves queued host input into the receive FIFO as far as it has room, and updates the
    /// interrupt line. The machine calls this between blocks; it never blocks.
    pub fn poll_input(&mut self) {
        self.refill_rx_fifo();
        self.update_irq();
    }

    /// Whether host input is waiting that the FIFO could not take yet, or bytes sit in the FIFO
    /// (the machine should not sleep in WFI for long while this is true and interrupts are on).
    pub fn has_pending_input(&self) -> bool {
        !self.rx_fifo.is_empty() || self.input.has_pending()
    }

    /// The firmware's console read (SBI `console_getchar` and DBCN read, what OpenSBI does
    /// with LSR.DR and RBR): the next received byte, `None` when none has arrived. It leaves
    /// the UART as a guest's RBR read would, so a guest reading through the SBI (`hvc0`) gets
    /// the same input, at the same pace, as one reading `ttyS0`.
    pub fn read_for_firmware(&mut self) -> Option<u8> {
        self.refill_rx_fifo();
        // Like OpenSBI, read RBR only when LSR says data is ready.
        let byte = if self.rx_fifo.is_empty() {
            None
        } else {
            self.take_received()
        };
        self.update_irq();
        byte
    }

    /// Takes the oldest byte from the receive FIFO, as a read of RBR does.
    fn take_received(&mut self) -> Option<u8> {
        let byte = self.rx_fifo.pop_front();
        self.refill_rx_fifo();
        if let Some(pacing) = &mut self.rx_pacing {
            pacing.read(self.rx_fifo.is_empty());
        }
        byte
    }

    /// The level of the interrupt output.
    pub fn irq_level(&self) -> bool {
        self.interrupt_id() != IIR_NO_INT
    }

    /// Writes the registers, the receive FIFO and the interrupt conditions for a snapshot.
    /// The host input queue is the machine's to save ([`UartInput::pending_bytes`]); the
    /// receive line's pacing is host timing and starts afresh.
    pub fn save_state(&self, out: &mut StateWriter) {
        out.u8(self.interrupt_enable);
        out.u8(self.line_control);
        out.u8(self.modem_control);
        out.u8(self.fifo_control);
        out.u8(self.scratch);
        out.u16(self.divisor);
        out.u8(self.line_errors);
        out.u8(self.modem_deltas);
        out.bool(self.thr_empty_pending);
        out.bool(self.rts_flow_control);
        let fifo: Vec<u8> = self.rx_fifo.iter().copied().collect();
        out.bytes(&fifo);
    }

    /// Restores what [`Uart::save_state`] wrote and drives the interrupt line to match.
    pub fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        self.interrupt_enable = input.u8("uart ier")?;
        self.line_control = input.u8("uart lcr")?;
        self.modem_control = input.u8("uart mcr")?;
        self.fifo_control = input.u8("uart fcr")?;
        self.scratch = input.u8("uart scr")?;
        self.divisor = input.u16("uart divisor")?;
        self.line_errors = input.u8("uart lsr errors")?;
        self.modem_deltas = input.u8("uart msr deltas")?;
        self.thr_empty_pending = input.bool("uart thr empty")?;
        self.rts_flow_control = input.bool("uart rts flow control")?;
        let fifo = input.bytes(RX_FIFO_SIZE, "uart receive fifo")?;
        self.rx_fifo.clear();
        self.rx_fifo.extend(fifo);
        if let Some(pacing) = &mut self.rx_pacing {
            pacing.dropped();
        }
        self.update_irq();
        Ok(())
    }

    /// The output sink.
    pub fn output(&self) -> &W {
        &self.out
    }

    /// The output sink, mutably (for example to flush or drain a buffer).
    pub fn output_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Bytes in the receive FIFO (for invariant checks in tests).
    #[cfg(test)]
    pub(crate) fn rx_fifo_len_for_tests(&self) -> usize {
        self.rx_fifo.len()
    }

    fn fifo_enabled(&self) -> bool {
        self.fifo_control & FCR_ENABLE_FIFO != 0
    }

    fn dlab(&self) -> bool {
        self.line_control & LCR_DLAB != 0
    }

    fn loopback(&self) -> bool {
        self.modem_control & MCR_LOOP != 0
    }

    fn rx_capacity(&self) -> usize {
        if self.fifo_enabled() {
            RX_FIFO_SIZE
        } else {
            1
        }
    }

    fn refill_rx_fifo(&mut self) {
        // In loopback the receiver is disconnected from the line.
        if self.loopback() || !self.input.has_pending() {
            return;
        }
        // RTS flow control: the host holds its input while the guest says "not ready".
        if self.rts_flow_control && self.modem_control & MCR_RTS == 0 {
            return;
        }
        let mut room = self.rx_capacity().saturating_sub(self.rx_fifo.len());
        if let Some(pacing) = &mut self.rx_pacing {
            room = pacing.allowance(room, self.rx_fifo.is_empty());
        }
        let before = self.rx_fifo.len();
        self.input.drain_into(&mut self.rx_fifo, room);
        if let Some(pacing) = &mut self.rx_pacing {
            pacing.entered(self.rx_fifo.len() - before);
        }
    }

    /// The modem status inputs (MSR bits 7:4).
    fn modem_inputs(&self) -> u8 {
        if self.loopback() {
            let mcr = self.modem_control;
            ((mcr & (MCR_OUT1 | MCR_OUT2)) << 4) | ((mcr & MCR_RTS) << 3) | ((mcr & MCR_DTR) << 5)
        } else {
            MODEM_INPUTS_CONNECTED
        }
    }

    fn line_status(&self) -> u8 {
        let data_ready = if self.rx_fifo.is_empty() { 0 } else { LSR_DR };
        data_ready | self.line_errors | LSR_THRE | LSR_TEMT
    }

    /// The highest-priority pending interrupt, as IIR bits 3:0.
    fn interrupt_id(&self) -> u8 {
        let enabled = self.interrupt_enable;
        if enabled & IER_RLSI != 0 && self.line_errors & LSR_ERROR_BITS != 0 {
            IIR_RLSI
        } else if enabled & IER_RDI != 0 && !self.rx_fifo.is_empty() {
            IIR_RDI
        } else if enabled & IER_THRI != 0 && self.thr_empty_pending {
            IIR_THRI
        } else if enabled & IER_MSI != 0 && self.modem_deltas != 0 {
            IIR_MSI
        } else {
            IIR_NO_INT
        }
    }

    fn update_irq(&self) {
        self.irq.set(self.irq_level());
    }

    fn read_register(&mut self, register: u64) -> u8 {
        match register {
            RBR if self.dlab() => self.divisor.to_le_bytes()[0],
            RBR => self.take_received().unwrap_or(0),
            IER if self.dlab() => self.divisor.to_le_bytes()[1],
            IER => self.interrupt_enable,
            IIR => {
                let id = self.interrupt_id();
                // Reading IIR while it reports THR empty acknowledges that interrupt.
                if id == IIR_THRI {
                    self.thr_empty_pending = false;
                }
                let fifo_bits = if self.fifo_enabled() {
                    IIR_FIFO_ENABLED
                } else {
                    0
                };
                id | fifo_bits
            }
            LCR => self.line_control,
            MCR => self.modem_control,
            LSR => {
                let status = self.line_status();
                self.line_errors = 0;
                status
            }
            MSR => {
                let status = self.modem_inputs() | self.modem_deltas;
                self.modem_deltas = 0;
                status
            }
            SCR => self.scratch,
            _ => 0,
        }
    }

    fn write_register(&mut self, register: u64, value: u8) {
        match register {
            THR if self.dlab() => {
                self.divisor = u16::from_le_bytes([value, self.divisor.to_le_bytes()[1]])
            }
            THR => self.transmit(value),
            IER if self.dlab() => {
                self.divisor = u16::from_le_bytes([self.divisor.to_le_bytes()[0], value])
            }
            IER => {
                let enabled = value & IER_MASK;
                let changed = self.interrupt_enable ^ enabled;
                self.interrupt_enable = enabled;
                // THR is always empty, so enabling ETBEI raises the THR-empty interrupt at once
                // (the 8250 driver's THRE test relies on it); disabling it drops the condition.
                if changed & IER_THRI != 0 {
                    self.thr_empty_pending = enabled & IER_THRI != 0;
                }
            }
            FCR => self.write_fifo_control(value),
            LCR => self.line_control = value,
            MCR => {
                let inputs_before = self.modem_inputs();
                let was_loopback = self.loopback();
                let rts_before = self.modem_control & MCR_RTS != 0;
                self.modem_control = value & MCR_MASK;
                self.note_modem_changes(inputs_before, self.modem_inputs());
                if !self.loopback() && self.modem_control & MCR_RTS != 0 {
                    self.rts_flow_control = true;
                }
                let rts_raised = !rts_before && self.modem_control & MCR_RTS != 0;
                if (was_loopback && !self.loopback()) || rts_raised {
                    self.refill_rx_fifo();
                }
            }
            SCR => self.scratch = value,
            // LSR and MSR are read-only (their writes are a factory test feature).
            _ => {}
        }
    }

    fn write_fifo_control(&mut self, value: u8) {
        let mut value = value;
        // Switching the FIFOs on or off clears them.
        if (value ^ self.fifo_control) & FCR_ENABLE_FIFO != 0 {
            value |= FCR_CLEAR_RCVR | FCR_CLEAR_XMIT;
        }
        if value & FCR_CLEAR_RCVR != 0 {
            self.rx_fifo.clear();
            if let Some(pacing) = &mut self.rx_pacing {
                pacing.dropped();
            }
            self.line_errors &= !LSR_BI;
        }
        if value & FCR_CLEAR_XMIT != 0 {
            self.thr_empty_pending = true;
        }
        self.fifo_control = value & FCR_KEPT_BITS;
        self.refill_rx_fifo();
    }

    fn note_modem_changes(&mut self, before: u8, after: u8) {
        let changed = before ^ after;
        if changed & MSR_CTS != 0 {
            self.modem_deltas |= MSR_DCTS;
        }
        if changed & MSR_DSR != 0 {
            self.modem_deltas |= MSR_DDSR;
        }
        if before & MSR_RI != 0 && after & MSR_RI == 0 {
            self.modem_deltas |= MSR_TERI;
        }
        if changed & MSR_DCD != 0 {
            self.modem_deltas |= MSR_DDCD;
        }
    }

    fn transmit(&mut self, byte: u8) {
        if self.loopback() {
            if self.rx_fifo.len() < self.rx_capacity() {
                self.rx_fifo.push_back(byte);
            } else {
                // Overrun: a full FIFO drops the new byte, the single RBR is overwritten by it.
                self.line_errors |= LSR_OE;
                if !self.fifo_enabled() {
                    self.rx_fifo.clear();
                    self.rx_fifo.push_back(byte);
                }
            }
        } else {
            let result = self.out.write_all(&[byte]).and_then(|()| self.out.flush());
            if let Err(error) = result {
                if !self.output_failed {
                    tracing::warn!(%error, "UART output failed; further output is dropped silently");
                    self.output_failed = true;
                }
            }
        }
        // The byte is gone at once: THR is empty again, which is a new THR-empty event.
        self.thr_empty_pending = true;
    }
}

impl<W: Write + Send + 'static> MmioDevice for Uart<W> {
    fn read(&mut self, offset: u64, size: u8) -> u64 {
        if access_mask(size).is_none() || offset > SCR {
            return 0;
        }
        let value = self.read_register(offset);
        self.update_irq();
        u64::from(value)
    }

    fn write(&mut self, offset: u64, size: u8, value: u64) {
        if access_mask(size).is_none() || offset > SCR {
            return;
        }
        self.write_register(offset, value.to_le_bytes()[0]);
        self.update_irq();
    }

    fn name(&self) -> &'static str {
        "uart16550a"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::irq::IrqLevels;

    const IRQ: u32 = 10;

    struct Fixture {
        uart: Uart<Vec<u8>>,
        levels: IrqLevels,
    }

    impl Fixture {
        fn new() -> Self {
            let mut levels = IrqLevels::new(31).unwrap();
            let mut uart = Uart::new(levels.line(IRQ).unwrap(), Vec::new());
            // Register-level tests: the line is infinitely fast.
            uart.set_rx_pacing(None);
            Self { uart, levels }
        }

        fn rd(&mut self, register: u64) -> u8 {
            let value = self.uart.read(register, 1);
            assert!(value <= 0xff, "register {register} read {value:#x}");
            value as u8
        }

        fn wr(&mut self, register: u64, value: u8) {
            self.uart.write(register, 1, u64::from(value));
        }

        fn irq(&self) -> bool {
            let level = self.levels.is_high(IRQ);
            assert_eq!(level, self.uart.irq_level());
            level
        }
    }

    #[test]
    fn reset_state() {
        let mut f = Fixture::new();
        assert_eq!(f.rd(IER), 0);
        assert_eq!(f.rd(IIR), IIR_NO_INT);
        assert_eq!(f.rd(LCR), 0);
        assert_eq!(f.rd(MCR), MCR_OUT2);
        assert_eq!(f.rd(LSR), LSR_THRE | LSR_TEMT);
        assert_eq!(f.rd(MSR), MSR_DCD | MSR_DSR | MSR_CTS);
        assert_eq!(f.rd(SCR), 0);
        assert!(!f.irq());
    }

    #[test]
    fn firmware_reads_received_bytes_and_the_interrupt_follows() {
        let mut f = Fixture::new();
        assert_eq!(f.uart.read_for_firmware(), None);
        f.wr(IER, IER_RDI);
        f.uart.enqueue_input(b"ab");
        assert!(f.irq());
        assert_eq!(f.uart.read_for_firmware(), Some(b'a'));
        assert!(f.irq());
        assert_eq!(f.uart.read_for_firmware(), Some(b'b'));
        assert!(!f.irq(), "the FIFO is empty: no receive interrupt");
        assert_eq!(f.uart.read_for_firmware(), None);
        assert_eq!(f.rd(LSR) & LSR_DR, 0);
        // Input queued but not yet in the FIFO is read too.
        f.uart.input().push(b"c");
        assert_eq!(f.uart.read_for_firmware(), Some(b'c'));
    }

    #[test]
    fn transmit_goes_to_output() {
        let mut f = Fixture::new();
        for &byte in b"hi\n" {
            f.wr(THR, byte);
        }
        assert_eq!(f.uart.output(), b"hi\n");
        assert_eq!(f.rd(LSR) & (LSR_THRE | LSR_TEMT), LSR_THRE | LSR_TEMT);
    }

    #[test]
    fn wide_accesses_hit_the_addressed_register() {
        let mut f = Fixture::new();
        f.uart.write(SCR, 4, 0x1234_56ab);
        assert_eq!(f.uart.read(SCR, 4), 0xab);
        assert_eq!(f.uart.read(SCR, 8), 0xab);
        f.uart.write(THR, 8, u64::from(b'x') | 0xffff_ff00);
        assert_eq!(f.uart.output(), b"x");
        // Outside the eight registers, and odd sizes: nothing.
        f.uart.write(8, 1, u64::from(b'y'));
        f.uart.write(THR, 3, u64::from(b'z'));
        assert_eq!(f.uart.output(), b"x");
        assert_eq!(f.uart.read(0xff, 1), 0);
        assert_eq!(f.uart.read(u64::MAX, 4), 0);
        assert_eq!(f.uart.read(SCR, 0), 0);
    }

    #[test]
    fn divisor_latch_is_behind_dlab() {
        let mut f = Fixture::new();
        f.wr(IER, IER_RDI);
        f.wr(LCR, LCR_DLAB | 0x03);
        f.wr(DLL, 0x0c);
        f.wr(DLM, 0x01);
        assert_eq!(f.rd(DLL), 0x0c);
        assert_eq!(f.rd(DLM), 0x01);
        assert_eq!(f.uart.output(), b"", "DLL write must not transmit");
        f.wr(LCR, 0x03);
        assert_eq!(f.rd(IER), IER_RDI, "IER kept while DLAB was set");
        assert_eq!(f.rd(LCR), 0x03);
        f.wr(LCR, LCR_DLAB);
        assert_eq!(u16::from(f.rd(DLL)) | u16::from(f.rd(DLM)) << 8, 0x010c);
    }

    #[test]
    fn ier_keeps_only_the_four_16550_bits() {
        // The 8250 autoconfig writes 0 and 0x0f and expects them back exactly.
        let mut f = Fixture::new();
        f.wr(IER, 0);
        assert_eq!(f.rd(IER), 0);
        f.wr(IER, 0xff);
        assert_eq!(f.rd(IER), 0x0f);
    }

    #[test]
    fn fifo_enable_shows_in_iir_bits_7_6() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        assert_eq!(f.rd(IIR) >> 6, 3, "8250 probes 16550A by IIR bits 7:6");
        f.wr(FCR, 0);
        assert_eq!(f.rd(IIR) >> 6, 0);
    }

    #[test]
    fn thre_interrupt_follows_8250_startup_test() {
        // serial8250_do_startup: IER=THRI, read IIR, IER=0, IER=THRI, read IIR: the second
        // read must report THRE again, otherwise Linux marks the port UART_BUG_THRE.
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        f.wr(IER, IER_THRI);
        assert!(f.irq());
        let iir1 = f.rd(IIR);
        assert_eq!(iir1 & IIR_ID_MASK, IIR_THRI);
        assert!(!f.irq(), "reading IIR that reports THRE clears it");
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_NO_INT);
        f.wr(IER, 0);
        f.wr(IER, IER_THRI);
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_THRI);
        f.wr(IER, 0);
        assert!(!f.irq());
    }

    #[test]
    fn rewriting_the_same_ier_does_not_rearm_thre() {
        let mut f = Fixture::new();
        f.wr(IER, IER_THRI);
        f.rd(IIR);
        assert!(!f.irq());
        f.wr(IER, IER_THRI);
        assert!(!f.irq());
        f.wr(IER, IER_THRI | IER_RDI);
        assert!(!f.irq(), "only a 0->1 edge of ETBEI re-raises THRE");
    }

    #[test]
    fn thr_write_clears_then_rearms_thre() {
        // The driver's tx path: interrupt, read IIR (acks THRE), write bytes to THR; the
        // transmitter empties at once, so a new THRE interrupt is pending for the next batch.
        let mut f = Fixture::new();
        f.wr(IER, IER_THRI);
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_THRI);
        assert!(!f.irq());
        f.wr(THR, b'a');
        assert!(f.irq());
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_THRI);
        // With nothing more to send, the driver clears ETBEI and the line drops.
        f.wr(THR, b'b');
        f.wr(IER, 0);
        assert!(!f.irq());
        assert_eq!(f.uart.output(), b"ab");
    }

    #[test]
    fn thre_without_etbei_never_interrupts() {
        let mut f = Fixture::new();
        f.wr(THR, b'a');
        f.wr(FCR, FCR_ENABLE_FIFO | FCR_CLEAR_XMIT);
        assert!(!f.irq());
        assert_eq!(f.rd(IIR), IIR_NO_INT | IIR_FIFO_ENABLED);
    }

    #[test]
    fn receive_with_interrupts() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        f.wr(IER, IER_RDI | IER_RLSI);
        assert!(!f.irq());
        f.uart.enqueue_input(b"ok");
        assert!(f.irq());
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_RDI);
        assert!(f.irq(), "reading IIR does not clear RDI");
        assert_eq!(f.rd(LSR) & LSR_DR, LSR_DR);
        assert_eq!(f.rd(RBR), b'o');
        assert!(f.irq());
        assert_eq!(f.rd(RBR), b'k');
        assert!(!f.irq());
        assert_eq!(f.rd(LSR) & LSR_DR, 0);
        assert_eq!(f.rd(RBR), 0, "empty FIFO reads 0");
    }

    #[test]
    fn rdi_outranks_thre() {
        let mut f = Fixture::new();
        f.wr(IER, IER_RDI | IER_THRI);
        f.uart.enqueue_input(b"x");
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_RDI);
        assert_eq!(f.rd(RBR), b'x');
        // THRE was not acknowledged by the RDI read of IIR: it is still there.
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_THRI);
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_NO_INT);
    }

    #[test]
    fn line_status_outranks_everything() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        f.wr(MCR, MCR_LOOP);
        f.wr(IER, IER_RDI | IER_THRI | IER_RLSI | IER_MSI);
        for byte in 0..=RX_FIFO_SIZE as u8 {
            f.wr(THR, byte);
        }
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_RLSI);
        assert_eq!(f.rd(LSR) & (LSR_OE | LSR_DR), LSR_OE | LSR_DR);
        assert_eq!(f.rd(LSR) & LSR_OE, 0, "reading LSR clears OE");
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_RDI);
        let received: Vec<u8> = (0..RX_FIFO_SIZE).map(|_| f.rd(RBR)).collect();
        assert_eq!(received, (0..RX_FIFO_SIZE as u8).collect::<Vec<_>>());
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_THRI);
    }

    #[test]
    fn modem_status_interrupt_is_lowest_and_cleared_by_msr_read() {
        let mut f = Fixture::new();
        f.wr(MCR, MCR_LOOP);
        f.rd(MSR);
        f.wr(IER, IER_MSI);
        assert!(!f.irq());
        f.wr(MCR, MCR_LOOP | MCR_RTS);
        assert!(f.irq());
        assert_eq!(f.rd(IIR) & IIR_ID_MASK, IIR_MSI);
        assert_eq!(f.rd(MSR), MSR_CTS | MSR_DCTS);
        assert!(!f.irq());
        f.wr(MCR, MCR_LOOP | MCR_OUT1);
        assert_eq!(f.rd(MSR), MSR_RI | MSR_DCTS);
        f.wr(MCR, MCR_LOOP);
        assert_eq!(f.rd(MSR), MSR_TERI);
    }

    #[test]
    fn loopback_probe_as_8250_autoconfig_does_it() {
        let mut f = Fixture::new();
        let saved_mcr = f.rd(MCR);
        f.wr(MCR, MCR_LOOP | MCR_OUT2 | MCR_RTS);
        assert_eq!(f.rd(MSR) & 0xf0, MSR_DCD | MSR_CTS);
        f.wr(MCR, MCR_LOOP | MCR_DTR | MCR_OUT1);
        assert_eq!(f.rd(MSR) & 0xf0, MSR_DSR | MSR_RI);
        f.wr(MCR, saved_mcr);
        assert_eq!(f.rd(MSR) & 0xf0, MSR_DCD | MSR_DSR | MSR_CTS);
    }

    #[test]
    fn loopback_echoes_and_holds_back_host_input() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        f.wr(MCR, MCR_LOOP);
        f.uart.enqueue_input(b"host");
        assert_eq!(f.rd(LSR) & LSR_DR, 0, "host input waits during loopback");
        f.wr(THR, 0x5a);
        assert_eq!(
            f.uart.output(),
            b"",
            "loopback bytes never reach the output"
        );
        assert_eq!(f.rd(RBR), 0x5a);
        f.wr(MCR, 0);
        assert_eq!(f.rd(RBR), b'h');
    }

    #[test]
    fn input_beyond_the_fifo_waits_in_the_queue() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        let text: Vec<u8> = (0..100u8).collect();
        f.uart.enqueue_input(&text);
        assert!(f.uart.has_pending_input());
        let mut received = Vec::new();
        while f.rd(LSR) & LSR_DR != 0 {
            received.push(f.rd(RBR));
        }
        assert_eq!(received, text);
        assert!(!f.uart.has_pending_input());
    }

    #[test]
    fn without_fifo_the_receiver_holds_one_byte() {
        let mut f = Fixture::new();
        f.uart.enqueue_input(b"ab");
        assert_eq!(f.uart.rx_fifo.len(), 1);
        assert_eq!(f.rd(RBR), b'a');
        assert_eq!(f.rd(RBR), b'b');
        assert_eq!(f.rd(LSR) & LSR_DR, 0);
    }

    #[test]
    fn fcr_clear_receiver_drops_fifo_contents() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        f.uart.enqueue_input(b"abc");
        f.wr(FCR, FCR_ENABLE_FIFO | FCR_CLEAR_RCVR);
        assert_eq!(f.rd(LSR) & LSR_DR, 0);
        // Disabling the FIFO clears it too.
        f.uart.enqueue_input(b"d");
        f.wr(FCR, 0);
        assert_eq!(f.rd(LSR) & LSR_DR, 0);
    }

    #[test]
    fn reader_thread_hands_over_input_through_the_handle() {
        let mut f = Fixture::new();
        f.wr(IER, IER_RDI);
        let input = f.uart.input();
        std::thread::spawn(move || input.push_blocking(b"abc"))
            .join()
            .unwrap();
        assert!(!f.irq(), "nothing moves until the CPU thread polls");
        f.uart.poll_input();
        assert!(f.irq());
        assert_eq!(f.rd(RBR), b'a');
    }

    #[test]
    fn a_full_queue_makes_the_reader_wait_and_loses_nothing() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        let input = f.uart.input();
        // Three times the queue's capacity, as a reader thread would push it.
        let total = 3 * INPUT_QUEUE_LIMIT + 12_345;
        let text: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
        let expected = text.clone();
        let reader = std::thread::spawn(move || input.push_blocking(&text));
        // The reader fills the queue, then waits for the guest.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while f.uart.input().queued() < INPUT_QUEUE_LIMIT {
            assert!(
                std::time::Instant::now() < deadline,
                "the reader never filled the queue"
            );
            std::thread::yield_now();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !reader.is_finished(),
            "the reader waits while the queue is full"
        );
        assert!(f.uart.input().queued() <= INPUT_QUEUE_LIMIT);
        // The guest reads everything; every byte arrives, in order.
        let mut received = Vec::with_capacity(total);
        while received.len() < total {
            assert!(
                std::time::Instant::now() < deadline,
                "input stalled at {}",
                received.len()
            );
            f.uart.poll_input();
            while f.rd(LSR) & LSR_DR != 0 {
                received.push(f.rd(RBR));
            }
        }
        reader.join().unwrap();
        assert!(received == expected, "input lost or reordered");
        assert!(!f.uart.has_pending_input());
    }

    #[test]
    fn push_from_the_cpu_thread_never_waits_even_when_full() {
        let input = UartInput::new();
        input.push_blocking(&vec![0u8; INPUT_QUEUE_LIMIT]);
        input.push(b"xyz");
        assert_eq!(input.queued(), INPUT_QUEUE_LIMIT + 3);
        assert!(input.has_pending());
    }

    /// A manual clock for [`RxPacing`], in microseconds.
    fn manual_clock() -> (Arc<std::sync::atomic::AtomicU64>, RxClock) {
        let micros = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let reader = micros.clone();
        let clock: RxClock = Arc::new(move || Duration::from_micros(reader.load(Ordering::SeqCst)));
        (micros, clock)
    }

    #[test]
    fn paced_input_comes_in_bursts_with_pauses_in_proportion() {
        let mut f = Fixture::new();
        let (micros, clock) = manual_clock();
        f.uart.set_rx_pacing(Some(RxPacing::with_clock(clock)));
        f.wr(FCR, FCR_ENABLE_FIFO);
        f.wr(IER, IER_RDI);
        let text: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        f.uart.enqueue_input(&text);
        assert!(f.irq(), "the first burst starts at once");
        // The burst flows as fast as the guest reads: RX_BURST bytes, 1 us per byte.
        let mut received = Vec::new();
        while f.rd(LSR) & LSR_DR != 0 {
            received.push(f.rd(RBR));
            micros.fetch_add(1, Ordering::SeqCst);
        }
        assert_eq!(received.len(), RX_BURST);
        assert!(!f.irq(), "the line pauses: the interrupt drops");
        // Reading took RX_BURST - 1 us (first to last read): the pause is RX_PAUSE_FACTOR times that.
        let pause = (RX_BURST as u64 - 1) * u64::from(RX_PAUSE_FACTOR);
        micros.fetch_add(pause - 2, Ordering::SeqCst);
        f.uart.poll_input();
        assert!(!f.irq(), "still pausing");
        micros.fetch_add(1, Ordering::SeqCst);
        f.uart.poll_input();
        assert!(f.irq(), "the next burst");
        while received.len() < text.len() {
            f.uart.poll_input();
            while f.rd(LSR) & LSR_DR != 0 {
                received.push(f.rd(RBR));
            }
            micros.fetch_add(10_000, Ordering::SeqCst);
        }
        assert_eq!(received, text, "nothing lost or reordered");
        // A single key after a long idle time comes at once.
        micros.fetch_add(1_000_000, Ordering::SeqCst);
        f.uart.enqueue_input(b"k");
        assert_eq!(f.rd(RBR), b'k');
    }

    #[test]
    fn a_slow_reader_gets_long_pauses_up_to_the_limit() {
        let mut f = Fixture::new();
        let (micros, clock) = manual_clock();
        f.uart.set_rx_pacing(Some(RxPacing::with_clock(clock)));
        f.wr(FCR, FCR_ENABLE_FIFO);
        f.uart.enqueue_input(&[b'x'; 600]);
        f.rd(RBR);
        // The guest sits on the burst for a second (interrupts off, say).
        micros.fetch_add(1_000_000, Ordering::SeqCst);
        for _ in 1..RX_BURST {
            assert_eq!(f.rd(RBR), b'x');
        }
        assert_eq!(f.rd(LSR) & LSR_DR, 0);
        micros.fetch_add(RX_MAX_PAUSE.as_micros() as u64 - 1, Ordering::SeqCst);
        f.uart.poll_input();
        assert_eq!(f.rd(LSR) & LSR_DR, 0, "pausing");
        micros.fetch_add(1, Ordering::SeqCst);
        f.uart.poll_input();
        assert_eq!(
            f.rd(LSR) & LSR_DR,
            LSR_DR,
            "the pause is capped at RX_MAX_PAUSE"
        );
    }

    #[test]
    fn rts_flow_control_holds_input_while_rts_is_low() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        // A guest that never touched RTS receives regardless (firmware, bare metal).
        f.uart.enqueue_input(b"a");
        assert_eq!(f.rd(RBR), b'a');
        // RTS raised in loopback (the 8250 probe) does not count.
        f.wr(MCR, MCR_LOOP | MCR_RTS);
        f.wr(MCR, MCR_OUT2);
        f.uart.enqueue_input(b"b");
        assert_eq!(f.rd(RBR), b'b');
        // The driver opens the port: DTR | RTS. From now on RTS low means "hold".
        f.wr(MCR, MCR_OUT2 | MCR_DTR | MCR_RTS);
        f.wr(MCR, MCR_OUT2 | MCR_DTR);
        f.uart.enqueue_input(b"cd");
        assert_eq!(f.rd(LSR) & LSR_DR, 0, "held while RTS is low");
        assert!(f.uart.has_pending_input());
        f.wr(MCR, MCR_OUT2 | MCR_DTR | MCR_RTS);
        assert_eq!(f.rd(RBR), b'c', "raising RTS lets it through");
        assert_eq!(f.rd(RBR), b'd');
    }

    #[test]
    fn scratch_and_lcr_round_trip() {
        let mut f = Fixture::new();
        for value in [0x00, 0x55, 0xaa, 0xff] {
            f.wr(SCR, value);
            assert_eq!(f.rd(SCR), value);
        }
        f.wr(LCR, 0x1b);
        assert_eq!(f.rd(LCR), 0x1b);
        f.wr(MCR, 0xff);
        assert_eq!(f.rd(MCR), MCR_MASK);
    }

    struct FailingWriter;

    impl Write for FailingWriter {
        fn write(&mut self, _buf: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn output_errors_do_not_stop_the_uart() {
        let mut uart = Uart::new(IrqLine::disconnected(), FailingWriter);
        uart.write(IER, 1, u64::from(IER_THRI));
        uart.write(THR, 1, u64::from(b'a'));
        uart.write(THR, 1, u64::from(b'b'));
        assert_eq!(uart.read(LSR, 1) & u64::from(LSR_THRE), u64::from(LSR_THRE));
        assert!(uart.irq_level());
    }

    #[test]
    fn state_round_trips_with_fifo_bytes_and_the_interrupt() {
        let mut f = Fixture::new();
        f.wr(FCR, FCR_ENABLE_FIFO);
        f.wr(IER, IER_RDI);
        f.wr(SCR, 0x5a);
        f.uart.enqueue_input(b"hi");
        assert!(f.levels.is_high(IRQ));
        let mut out = StateWriter::new();
        f.uart.save_state(&mut out);
        let bytes = out.into_bytes();

        let mut g = Fixture::new();
        assert!(!g.levels.is_high(IRQ));
        let mut input = StateReader::new(&bytes);
        g.uart.restore_state(&mut input).unwrap();
        input.finish("uart").unwrap();
        assert!(
            g.levels.is_high(IRQ),
            "the receive interrupt is driven again"
        );
        assert_eq!(g.rd(SCR), 0x5a);
        assert_eq!(g.rd(RBR), b'h', "a byte in the FIFO is not lost");
        assert_eq!(g.rd(RBR), b'i');
        assert!(!g.levels.is_high(IRQ));
        for cut in 0..bytes.len() {
            assert!(Fixture::new()
                .uart
                .restore_state(&mut StateReader::new(&bytes[..cut]))
                .is_err());
        }
        // A FIFO longer than the hardware's is refused.
        let mut long = bytes[..bytes.len() - 2 - 8].to_vec();
        long.extend_from_slice(&(RX_FIFO_SIZE as u64 + 1).to_le_bytes());
        long.extend(std::iter::repeat_n(b'x', RX_FIFO_SIZE + 1));
        assert!(Fixture::new()
            .uart
            .restore_state(&mut StateReader::new(&long))
            .is_err());
    }
}
