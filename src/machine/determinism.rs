//! Deterministic mode (`--deterministic [--seed N]`): everything the guest can observe depends
//! only on the inputs, never on the host's speed or clock, so two runs with the same inputs
//! print byte-identical console output (kernel timestamps included).
//!
//! What the machine does differently (the rest of the machine does not know):
//! - The machine clock (`time`, CLINT `mtime`, Sstc) counts retired instructions at a fixed
//!   virtual frequency (`cpu::clock`, [`crate::cpu::clock::DETERMINISTIC_INSNS_PER_TICK`]
//!   instructions per tick of 10 MHz).
//! - WFI never sleeps: virtual time jumps to the next timer deadline ([`VirtualTime`] is what
//!   devices read of it), as QEMU's `-icount shift=N,sleep=off` does.
//! - The goldfish RTC starts at [`RTC_EPOCH_SECS`] (2026-01-01T00:00:00Z) and advances with
//!   virtual time; the UART's input pacing runs on virtual time too.
//! - virtio-rng draws from a generator seeded with `--seed` ([`DEFAULT_SEED`] without it).
//! - Console input comes only from the `--expect`/`--send` script, typed when the guest prints
//!   the expected text (on the CPU thread, at that UART write); the terminal is not read.
//! - Tier 2 compiles each region before it runs (as `--tier t2` always does), so regions are
//!   installed at the same instruction in every run.
//!
//! Host devices served by worker threads (`--share`, `--net`) and the GDB stub are refused.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rv32vm_devices::uart::RxPacing;
use rv32vm_devices::WallClock;

/// The RTC's date when a deterministic machine first powers on: 2026-01-01T00:00:00Z, in
/// seconds since the Unix epoch.
pub const RTC_EPOCH_SECS: u64 = 1_767_225_600;

/// The entropy device's seed without `--seed`.
pub const DEFAULT_SEED: u64 = 0;

/// Nanoseconds per tick of the machine clock.
const NS_PER_TICK: u64 = 1_000_000_000 / crate::cpu::clock::TIMEBASE_HZ;

/// A deterministic machine's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deterministic {
    /// The entropy device's seed (`--seed`).
    pub seed: u64,
    /// The RTC's time, in ns since the Unix epoch, when this machine powers on (the fixed
    /// date at boot; later after guest resets, so the date never goes back).
    pub rtc_start_ns: u64,
    /// How many times the guest was reset before this machine powered on: each boot draws
    /// other bytes from the entropy device.
    pub boot: u64,
}

impl Deterministic {
    /// The settings of a first power-on with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            rtc_start_ns: RTC_EPOCH_SECS * 1_000_000_000,
            boot: 0,
        }
    }

    /// The entropy device's seed for this boot.
    pub fn rng_seed(&self) -> u64 {
        self.seed
            .wrapping_add(self.boot.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// The settings for the machine the guest reboots into after running `ticks` of machine
    /// time.
    pub fn after_reset(&self, ticks: u64) -> Self {
        Self {
            seed: self.seed,
            rtc_start_ns: self
                .rtc_start_ns
                .wrapping_add(ticks.wrapping_mul(NS_PER_TICK)),
            boot: self.boot + 1,
        }
    }
}

/// The machine's virtual time as devices see it: ns since power-on, set by the machine from
/// the machine clock before any device can read it (between blocks and before every MMIO
/// access). Clones share one value.
#[derive(Clone, Debug, Default)]
pub struct VirtualTime {
    ns: Arc<AtomicU64>,
}

impl VirtualTime {
    /// Virtual time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set from the machine clock's `ticks`.
    #[inline]
    pub fn set_ticks(&self, ticks: u64) {
        self.ns
            .store(ticks.wrapping_mul(NS_PER_TICK), Ordering::Relaxed);
    }

    /// Nanoseconds since power-on.
    pub fn ns(&self) -> u64 {
        self.ns.load(Ordering::Relaxed)
    }

    /// The RTC's clock: `start_ns` (since the Unix epoch) plus virtual time.
    pub fn wall_clock(&self, start_ns: u64) -> Box<dyn WallClock> {
        Box::new(VirtualWallClock {
            time: self.clone(),
            start_ns,
        })
    }

    /// The UART's input pacing on virtual time.
    pub fn rx_pacing(&self) -> RxPacing {
        let time = self.clone();
        RxPacing::with_clock(Arc::new(move || Duration::from_nanos(time.ns())))
    }
}

/// A wall clock that reads virtual time from a fixed start.
struct VirtualWallClock {
    time: VirtualTime,
    start_ns: u64,
}

impl WallClock for VirtualWallClock {
    fn now_ns(&self) -> u64 {
        self.start_ns.wrapping_add(self.time.ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rtc_starts_at_the_fixed_date_and_follows_virtual_time() {
        let det = Deterministic::new(DEFAULT_SEED);
        let time = VirtualTime::new();
        let rtc = time.wall_clock(det.rtc_start_ns);
        assert_eq!(rtc.now_ns(), RTC_EPOCH_SECS * 1_000_000_000);
        time.set_ticks(crate::cpu::clock::TIMEBASE_HZ * 3);
        assert_eq!(rtc.now_ns(), (RTC_EPOCH_SECS + 3) * 1_000_000_000);
        // After a reset the date goes on from where the last boot left it, with other entropy.
        let next = det.after_reset(crate::cpu::clock::TIMEBASE_HZ * 3);
        assert_eq!(next.rtc_start_ns, (RTC_EPOCH_SECS + 3) * 1_000_000_000);
        assert_ne!(next.rng_seed(), det.rng_seed());
        assert_eq!(det.rng_seed(), DEFAULT_SEED);
    }
}
