//! Interrupt lines from devices to an interrupt controller.
//!
//! An interrupt controller owns an [`IrqLevels`]: one bit per source, holding the current level
//! of that source's wire. It hands out one [`IrqLine`] per source; the device that owns the line
//! drives it with [`IrqLine::set`]. Lines are level-triggered: the level stays until the device
//! lowers it, and the controller samples the levels whenever it needs them (the PLIC gateway
//! logic lives in [`crate::plic`]).
//!
//! The levels are an `Arc<AtomicU64>`, so a line may be driven from another thread (a future
//! I/O thread) without locks; the usual case is the CPU thread for both sides.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The highest source number an [`IrqLevels`] can hold (bit 0 is the reserved source 0).
pub const MAX_SOURCE: u32 = 63;

/// Why an interrupt line could not be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrqError {
    /// The source number is 0 (reserved: "no interrupt") or above the controller's last source.
    #[error("interrupt source {id} is out of range 1..={max}")]
    SourceOutOfRange {
        /// The refused source number.
        id: u32,
        /// The controller's last valid source.
        max: u32,
    },
    /// A line for this source was already handed out; a source has exactly one driver.
    #[error("interrupt source {id} already has a line")]
    AlreadyConnected {
        /// The refused source number.
        id: u32,
    },
    /// The controller was asked for more sources than a level word holds.
    #[error("an interrupt controller supports at most {MAX_SOURCE} sources, not {requested}")]
    TooManySources {
        /// The requested number of sources.
        requested: u32,
    },
}

/// The input levels of an interrupt controller: bit `n` is the level of source `n`.
#[derive(Debug)]
pub struct IrqLevels {
    bits: Arc<AtomicU64>,
    max_source: u32,
    /// Sources whose line was handed out.
    connected: u64,
}

impl IrqLevels {
    /// Levels for sources `1..=max_source`, all low.
    pub fn new(max_source: u32) -> Result<Self, IrqError> {
        if max_source > MAX_SOURCE {
            return Err(IrqError::TooManySources {
                requested: max_source,
            });
        }
        Ok(Self {
            bits: Arc::new(AtomicU64::new(0)),
            max_source,
            connected: 0,
        })
    }

    /// The last valid source number.
    pub fn max_source(&self) -> u32 {
        self.max_source
    }

    /// The line that drives `source`; each source can be connected once.
    pub fn line(&mut self, source: u32) -> Result<IrqLine, IrqError> {
        if source == 0 || source > self.max_source {
            return Err(IrqError::SourceOutOfRange {
                id: source,
                max: self.max_source,
            });
        }
        let mask = 1u64 << source;
        if self.connected & mask != 0 {
            return Err(IrqError::AlreadyConnected { id: source });
        }
        self.connected |= mask;
        Ok(IrqLine {
            bits: Arc::clone(&self.bits),
            mask,
            source,
        })
    }

    /// Every level at once: bit `n` set when source `n` is high.
    pub fn bits(&self) -> u64 {
        self.bits.load(Ordering::Acquire)
    }

    /// Whether `source` is high (false for sources out of range).
    pub fn is_high(&self, source: u32) -> bool {
        source <= MAX_SOURCE && self.bits() & (1u64 << source) != 0
    }
}

/// One interrupt wire from a device to its controller.
///
/// Not `Clone`: a source has exactly one driver, so the level is never the result of two
/// devices fighting over it.
#[derive(Debug)]
pub struct IrqLine {
    bits: Arc<AtomicU64>,
    mask: u64,
    source: u32,
}

impl IrqLine {
    /// A line wired to nothing, for a device whose interrupt is not connected (and for tests).
    pub fn disconnected() -> Self {
        Self {
            bits: Arc::new(AtomicU64::new(0)),
            mask: 1,
            source: 0,
        }
    }

    /// Drives the line high (`true`) or low (`false`).
    pub fn set(&self, level: bool) {
        // Devices call this after every register access; skip the locked read-modify-write
        // when nothing changes. Only this line writes its bit, so the check cannot go stale.
        if self.level() == level {
            return;
        }
        if level {
            self.bits.fetch_or(self.mask, Ordering::AcqRel);
        } else {
            self.bits.fetch_and(!self.mask, Ordering::AcqRel);
        }
    }

    /// Drives the line high.
    pub fn raise(&self) {
        self.set(true);
    }

    /// Drives the line low.
    pub fn lower(&self) {
        self.set(false);
    }

    /// The level the line is driven to.
    pub fn level(&self) -> bool {
        self.bits.load(Ordering::Acquire) & self.mask != 0
    }

    /// The source number this line drives (0 for a disconnected line).
    pub fn source(&self) -> u32 {
        self.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_drive_their_own_bit_only() {
        let mut levels = IrqLevels::new(31).unwrap();
        let uart = levels.line(10).unwrap();
        let rtc = levels.line(11).unwrap();
        assert_eq!(levels.bits(), 0);
        uart.raise();
        assert_eq!(levels.bits(), 1 << 10);
        rtc.set(true);
        assert_eq!(levels.bits(), (1 << 10) | (1 << 11));
        uart.set(false);
        assert_eq!(levels.bits(), 1 << 11);
        assert!(!levels.is_high(10));
        assert!(levels.is_high(11));
        assert!(rtc.level());
        rtc.lower();
        assert_eq!(levels.bits(), 0);
        assert_eq!(rtc.source(), 11);
        // Setting the same level twice is harmless.
        rtc.lower();
        uart.raise();
        uart.raise();
        assert_eq!(levels.bits(), 1 << 10);
    }

    #[test]
    fn refuses_bad_and_duplicate_sources() {
        let mut levels = IrqLevels::new(32).unwrap();
        assert_eq!(
            levels.line(0).unwrap_err(),
            IrqError::SourceOutOfRange { id: 0, max: 32 }
        );
        assert_eq!(
            levels.line(33).unwrap_err(),
            IrqError::SourceOutOfRange { id: 33, max: 32 }
        );
        assert!(levels.line(32).is_ok());
        assert_eq!(
            levels.line(32).unwrap_err(),
            IrqError::AlreadyConnected { id: 32 }
        );
        assert_eq!(
            IrqLevels::new(64).unwrap_err(),
            IrqError::TooManySources { requested: 64 }
        );
        assert!(!levels.is_high(1000));
    }

    #[test]
    fn disconnected_line_remembers_its_level() {
        let line = IrqLine::disconnected();
        assert!(!line.level());
        line.raise();
        assert!(line.level());
        assert_eq!(line.source(), 0);
    }

    #[test]
    fn lines_work_across_threads() {
        let mut levels = IrqLevels::new(8).unwrap();
        let line = levels.line(3).unwrap();
        std::thread::spawn(move || line.raise()).join().unwrap();
        assert!(levels.is_high(3));
    }
}
