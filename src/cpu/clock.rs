//! The machine clock: the one time base that the `time` CSR, Sstc's `stimecmp` and the CLINT's
//! `mtime` all read, in ticks of [`TIMEBASE_HZ`] (the device tree's `timebase-frequency`).
//!
//! The hart holds it, because `rdtime` reads it in the middle of a block without a call to the
//! platform; the machine copies its value into the CLINT between blocks and sets it when the
//! guest writes `mtime`. The clock is an anchor (a tick value at a host instant, or at a count
//! of retired instructions in a deterministic run) plus the time elapsed since: setting it
//! moves the anchor, so the guest's time goes on from the value set. A snapshot saves the
//! value, never the anchor (a host `Instant` means nothing in another process).

use std::time::Instant;

/// Frequency of the machine clock in Hz: `timebase-frequency` in the device tree, the rate of
/// the `time` CSR and of CLINT `mtime`.
pub const TIMEBASE_HZ: u64 = 10_000_000;

/// Retired instructions per tick in a deterministic run (a ~100 MIPS guest at 10 MHz).
pub const DETERMINISTIC_INSNS_PER_TICK: u64 = 10;

/// What the clock counts between anchors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// Host monotonic time since `Instant`.
    Host(Instant),
    /// Retired instructions since this `instret` value.
    Instructions(u64),
}

/// The machine clock. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct MachineClock {
    /// The tick value at the anchor.
    ticks_at_anchor: u64,
    source: Source,
}

impl Default for MachineClock {
    fn default() -> Self {
        Self::new()
    }
}

impl MachineClock {
    /// A clock following host time, reading 0 now.
    pub fn new() -> Self {
        Self {
            ticks_at_anchor: 0,
            source: Source::Host(Instant::now()),
        }
    }

    /// The current tick value; `instret` is the hart's retired-instruction count (used by a
    /// deterministic clock only).
    #[inline]
    pub fn now(&self, instret: u64) -> u64 {
        let elapsed = match self.source {
            Source::Host(anchor) => {
                let d = anchor.elapsed();
                d.as_secs() * TIMEBASE_HZ
                    + u64::from(d.subsec_nanos()) / (1_000_000_000 / TIMEBASE_HZ)
            }
            Source::Instructions(anchor) => {
                instret.wrapping_sub(anchor) / DETERMINISTIC_INSNS_PER_TICK
            }
        };
        self.ticks_at_anchor.wrapping_add(elapsed)
    }

    /// Sets the clock to `ticks` now; it goes on counting from there.
    pub fn set(&mut self, ticks: u64, instret: u64) {
        self.ticks_at_anchor = ticks;
        self.source = match self.source {
            Source::Host(_) => Source::Host(Instant::now()),
            Source::Instructions(_) => Source::Instructions(instret),
        };
    }

    /// Switches between host time and retired instructions, keeping the current value.
    pub fn set_deterministic(&mut self, deterministic: bool, instret: u64) {
        let now = self.now(instret);
        self.source = if deterministic {
            Source::Instructions(instret)
        } else {
            Source::Host(Instant::now())
        };
        self.ticks_at_anchor = now;
    }

    /// Whether the clock counts retired instructions rather than host time.
    pub fn is_deterministic(&self) -> bool {
        matches!(self.source, Source::Instructions(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_clock_goes_on_from_the_value_set() {
        let mut clock = MachineClock::new();
        clock.set_deterministic(true, 0);
        // Switching keeps the value the host clock had reached.
        let switched = clock.now(0);
        assert_eq!(clock.now(9), switched, "less than a tick of instructions");
        clock.set(0, 0);
        assert_eq!(clock.now(0), 0);
        assert_eq!(clock.now(95), 9);
        clock.set(1_000_000, 95);
        assert_eq!(clock.now(95), 1_000_000);
        assert_eq!(clock.now(115), 1_000_002);
        // Host time: monotonic from the value set, never behind it.
        let mut clock = MachineClock::new();
        clock.set(u64::from(u32::MAX) + 5, 0);
        let first = clock.now(0);
        assert!(first >= u64::from(u32::MAX) + 5);
        assert!(clock.now(0) >= first);
        assert!(!clock.is_deterministic());
    }
}
