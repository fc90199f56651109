//! The goldfish RTC (`google,goldfish-rtc`), as Linux's rtc-goldfish driver uses it on QEMU
//! `virt` (PLIC source 11).
//!
//! Time is nanoseconds since the Unix epoch, read from a [`WallClock`] (the host's clock, or a
//! manual one in tests and deterministic runs); a guest that sets the time moves an offset, not
//! the host clock. Reading `TIME_LOW` latches the high half, which `TIME_HIGH` then returns, so a
//! low-then-high read pair is consistent.
//!
//! One alarm: writing `ALARM_LOW` arms it at `ALARM_HIGH:ALARM_LOW` (an alarm in the past fires
//! at once). When it fires, the interrupt becomes pending; the line is high while the interrupt
//! is pending and `IRQ_ENABLED` is 1, until the guest writes `CLEAR_INTERRUPT`. The machine
//! calls [`GoldfishRtc::poll`] between blocks so an armed alarm fires on time, and may use
//! [`GoldfishRtc::next_alarm_in_ns`] to bound a WFI sleep.
//!
//! Registers are 32 bits wide and take only aligned 32-bit accesses; anything else reads 0 and
//! ignores writes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::bus::MmioDevice;
use crate::irq::IrqLine;
use crate::regs::is_word_access;
use crate::state::{StateError, StateReader, StateWriter};

/// Size of the RTC's MMIO window on the virt memory map.
pub const MMIO_SIZE: u64 = 0x1000;
/// Low 32 bits of the time in ns; reading it latches the high half.
pub const TIME_LOW: u64 = 0x00;
/// High 32 bits of the time, as latched by the last `TIME_LOW` read.
pub const TIME_HIGH: u64 = 0x04;
/// Low 32 bits of the alarm time; writing it arms the alarm.
pub const ALARM_LOW: u64 = 0x08;
/// High 32 bits of the alarm time (write it before `ALARM_LOW`).
pub const ALARM_HIGH: u64 = 0x0c;
/// 1 when the alarm interrupt may reach the interrupt line.
pub const IRQ_ENABLED: u64 = 0x10;
/// Write: disarm the alarm.
pub const CLEAR_ALARM: u64 = 0x14;
/// Read: 1 while an alarm is armed and has not fired.
pub const ALARM_STATUS: u64 = 0x18;
/// Write: acknowledge the alarm interrupt.
pub const CLEAR_INTERRUPT: u64 = 0x1c;

/// A source of wall-clock time.
pub trait WallClock: Send {
    /// Nanoseconds since the Unix epoch.
    fn now_ns(&self) -> u64;
}

/// The host's real-time clock (`SystemTime`); before 1970 it reads 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl WallClock for SystemClock {
    fn now_ns(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
            })
    }
}

/// A clock that only moves when told to; clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now_ns: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock reading `now_ns`.
    pub fn new(now_ns: u64) -> Self {
        Self {
            now_ns: Arc::new(AtomicU64::new(now_ns)),
        }
    }

    /// Sets the time.
    pub fn set(&self, now_ns: u64) {
        self.now_ns.store(now_ns, Ordering::Release);
    }

    /// Moves the time forward by `ns`.
    pub fn advance(&self, ns: u64) {
        self.now_ns.fetch_add(ns, Ordering::AcqRel);
    }
}

impl WallClock for ManualClock {
    fn now_ns(&self) -> u64 {
        self.now_ns.load(Ordering::Acquire)
    }
}

/// The goldfish RTC. See the [module documentation](self).
pub struct GoldfishRtc {
    clock: Box<dyn WallClock>,
    /// Guest time minus clock time (wrapping): moved by guest writes to the time registers.
    time_offset: u64,
    time_high_latch: u32,
    alarm_at: u64,
    alarm_armed: bool,
    irq_enabled: bool,
    irq_pending: bool,
    irq: IrqLine,
}

impl std::fmt::Debug for GoldfishRtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoldfishRtc")
            .field("time_offset", &self.time_offset)
            .field("alarm_at", &self.alarm_at)
            .field("alarm_armed", &self.alarm_armed)
            .field("irq_enabled", &self.irq_enabled)
            .field("irq_pending", &self.irq_pending)
            .finish_non_exhaustive()
    }
}

impl GoldfishRtc {
    /// An RTC that reads `clock` and drives `irq`; no alarm armed, interrupt disabled.
    pub fn new(irq: IrqLine, clock: Box<dyn WallClock>) -> Self {
        Self {
            clock,
            time_offset: 0,
            time_high_latch: 0,
            alarm_at: 0,
            alarm_armed: false,
            irq_enabled: false,
            irq_pending: false,
            irq,
        }
    }

    /// An RTC on the host's real-time clock.
    pub fn with_system_clock(irq: IrqLine) -> Self {
        Self::new(irq, Box::new(SystemClock))
    }

    /// The guest's current time in ns since the epoch.
    pub fn now_ns(&self) -> u64 {
        self.clock.now_ns().wrapping_add(self.time_offset)
    }

    /// Writes the guest's current time, the latch, the alarm and the interrupt state for a
    /// snapshot.
    pub fn save_state(&self, out: &mut StateWriter) {
        out.u64(self.now_ns());
        out.u32(self.time_high_latch);
        out.u64(self.alarm_at);
        out.bool(self.alarm_armed);
        out.bool(self.irq_enabled);
        out.bool(self.irq_pending);
    }

    /// Restores what [`GoldfishRtc::save_state`] wrote. The guest's time goes on from the
    /// saved value (no jump by the time the snapshot spent on disk), as its other clocks do.
    pub fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        let now = input.u64("rtc time")?;
        self.time_high_latch = input.u32("rtc time latch")?;
        self.alarm_at = input.u64("rtc alarm")?;
        self.alarm_armed = input.bool("rtc alarm armed")?;
        self.irq_enabled = input.bool("rtc interrupt enabled")?;
        self.irq_pending = input.bool("rtc interrupt pending")?;
        self.set_now(now);
        self.update_irq();
        Ok(())
    }

    /// Fires the alarm if its time has come. The machine calls this between blocks.
    pub fn poll(&mut self) {
        if self.alarm_armed && self.now_ns() >= self.alarm_at {
            self.alarm_armed = false;
            self.irq_pending = true;
        }
        self.update_irq();
    }

    /// Nanoseconds until the armed alarm fires (0 if due), or `None` with no alarm armed.
    pub fn next_alarm_in_ns(&self) -> Option<u64> {
        self.alarm_armed
            .then(|| self.alarm_at.saturating_sub(self.now_ns()))
    }

    /// The level of the interrupt output.
    pub fn irq_level(&self) -> bool {
        self.irq_pending && self.irq_enabled
    }

    fn update_irq(&self) {
        self.irq.set(self.irq_level());
    }

    /// Sets the guest's time to `time` (ns) from now on.
    fn set_now(&mut self, time: u64) {
        self.time_offset = time.wrapping_sub(self.clock.now_ns());
    }

    fn read_register(&mut self, offset: u64) -> u32 {
        match offset {
            TIME_LOW => {
                let now = self.now_ns();
                self.time_high_latch = (now >> 32) as u32;
                now as u32
            }
            TIME_HIGH => self.time_high_latch,
            ALARM_LOW => self.alarm_at as u32,
            ALARM_HIGH => (self.alarm_at >> 32) as u32,
            IRQ_ENABLED => u32::from(self.irq_enabled),
            ALARM_STATUS => u32::from(self.alarm_armed),
            _ => 0,
        }
    }

    fn write_register(&mut self, offset: u64, value: u32) {
        let value64 = u64::from(value);
        match offset {
            TIME_LOW => {
                let now = self.now_ns();
                self.set_now((now & !0xffff_ffff) | value64);
            }
            TIME_HIGH => {
                let now = self.now_ns();
                self.set_now((now & 0xffff_ffff) | (value64 << 32));
            }
            ALARM_LOW => {
                self.alarm_at = (self.alarm_at & !0xffff_ffff) | value64;
                // Arming; poll() fires it at once if the time is already past.
                self.alarm_armed = true;
            }
            ALARM_HIGH => self.alarm_at = (self.alarm_at & 0xffff_ffff) | (value64 << 32),
            IRQ_ENABLED => self.irq_enabled = value & 1 != 0,
            CLEAR_ALARM => self.alarm_armed = false,
            CLEAR_INTERRUPT => self.irq_pending = false,
            _ => {}
        }
    }
}

impl MmioDevice for GoldfishRtc {
    fn read(&mut self, offset: u64, size: u8) -> u64 {
        if !is_word_access(offset, size) {
            return 0;
        }
        self.poll();
        let value = self.read_register(offset);
        self.update_irq();
        u64::from(value)
    }

    fn write(&mut self, offset: u64, size: u8, value: u64) {
        if !is_word_access(offset, size) {
            return;
        }
        self.poll();
        self.write_register(offset, value as u32);
        // An alarm armed in the past, or time moved past an armed alarm, fires now.
        self.poll();
    }

    fn name(&self) -> &'static str {
        "goldfish-rtc"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::irq::IrqLevels;

    const IRQ: u32 = 11;
    const START: u64 = 1_700_000_000_123_456_789;

    fn fixture() -> (GoldfishRtc, ManualClock, IrqLevels) {
        let clock = ManualClock::new(START);
        let mut levels = IrqLevels::new(31).unwrap();
        let rtc = GoldfishRtc::new(levels.line(IRQ).unwrap(), Box::new(clock.clone()));
        (rtc, clock, levels)
    }

    fn read_time(rtc: &mut GoldfishRtc) -> u64 {
        let low = rtc.read(TIME_LOW, 4);
        let high = rtc.read(TIME_HIGH, 4);
        (high << 32) | low
    }

    /// What rtc-goldfish's set_alarm does for an enabled alarm.
    fn set_alarm(rtc: &mut GoldfishRtc, at: u64) {
        rtc.write(ALARM_HIGH, 4, at >> 32);
        rtc.write(ALARM_LOW, 4, at & 0xffff_ffff);
        rtc.write(IRQ_ENABLED, 4, 1);
    }

    #[test]
    fn reads_the_clock_with_a_latched_high_half() {
        let (mut rtc, clock, _) = fixture();
        assert_eq!(read_time(&mut rtc), START);
        let low = rtc.read(TIME_LOW, 4);
        // The low half wraps between the two reads; the latched high half is still consistent.
        clock.advance(1 << 33);
        assert_eq!((rtc.read(TIME_HIGH, 4) << 32) | low, START);
        assert_eq!(read_time(&mut rtc), START + (1 << 33));
    }

    #[test]
    fn guest_set_time_moves_an_offset() {
        let (mut rtc, clock, _) = fixture();
        let wanted: u64 = 1_000_000_000 * 86_400 * 365;
        // rtc-goldfish set_time: high then low.
        rtc.write(TIME_HIGH, 4, wanted >> 32);
        rtc.write(TIME_LOW, 4, wanted & 0xffff_ffff);
        assert_eq!(read_time(&mut rtc), wanted);
        clock.advance(5);
        assert_eq!(read_time(&mut rtc), wanted + 5);
        assert_eq!(clock.now_ns(), START + 5, "the host clock is untouched");
    }

    #[test]
    fn alarm_fires_at_its_time_and_interrupt_is_level() {
        let (mut rtc, clock, levels) = fixture();
        set_alarm(&mut rtc, START + 1000);
        assert_eq!(rtc.read(ALARM_STATUS, 4), 1);
        assert_eq!(rtc.next_alarm_in_ns(), Some(1000));
        assert_eq!(
            (rtc.read(ALARM_HIGH, 4) << 32) | rtc.read(ALARM_LOW, 4),
            START + 1000
        );
        clock.advance(999);
        rtc.poll();
        assert!(!levels.is_high(IRQ));
        clock.advance(1);
        rtc.poll();
        assert!(levels.is_high(IRQ));
        assert_eq!(
            rtc.read(ALARM_STATUS, 4),
            0,
            "fired alarms are no longer armed"
        );
        assert_eq!(rtc.next_alarm_in_ns(), None);
        rtc.poll();
        assert!(levels.is_high(IRQ), "stays high until acknowledged");
        rtc.write(CLEAR_INTERRUPT, 4, 1);
        assert!(!levels.is_high(IRQ));
    }

    #[test]
    fn alarm_in_the_past_fires_at_once() {
        let (mut rtc, _, levels) = fixture();
        set_alarm(&mut rtc, START - 1);
        assert!(levels.is_high(IRQ));
        assert_eq!(rtc.read(ALARM_STATUS, 4), 0);
    }

    #[test]
    fn irq_enable_gates_the_line_not_the_event() {
        let (mut rtc, clock, levels) = fixture();
        rtc.write(ALARM_HIGH, 4, (START + 10) >> 32);
        rtc.write(ALARM_LOW, 4, (START + 10) & 0xffff_ffff);
        clock.advance(10);
        rtc.poll();
        assert!(!levels.is_high(IRQ));
        assert_eq!(rtc.read(IRQ_ENABLED, 4), 0);
        rtc.write(IRQ_ENABLED, 4, 0xff);
        assert_eq!(rtc.read(IRQ_ENABLED, 4), 1);
        assert!(levels.is_high(IRQ));
        rtc.write(IRQ_ENABLED, 4, 0);
        assert!(!levels.is_high(IRQ));
    }

    #[test]
    fn clear_alarm_disarms() {
        let (mut rtc, clock, levels) = fixture();
        set_alarm(&mut rtc, START + 10);
        rtc.write(CLEAR_ALARM, 4, 1);
        assert_eq!(rtc.read(ALARM_STATUS, 4), 0);
        clock.advance(100);
        rtc.poll();
        assert!(!levels.is_high(IRQ));
    }

    #[test]
    fn odd_accesses_are_inert() {
        let (mut rtc, _, levels) = fixture();
        assert_eq!(rtc.read(TIME_LOW, 8), 0);
        assert_eq!(rtc.read(TIME_LOW + 1, 4), 0);
        assert_eq!(rtc.read(0x20, 4), 0);
        assert_eq!(rtc.read(u64::MAX - 3, 4), 0);
        rtc.write(ALARM_LOW, 2, 0);
        rtc.write(IRQ_ENABLED, 1, 1);
        assert_eq!(rtc.read(ALARM_STATUS, 4), 0);
        assert_eq!(rtc.read(IRQ_ENABLED, 4), 0);
        assert!(!levels.is_high(IRQ));
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ns() > 1_577_836_800 * 1_000_000_000);
    }
}
