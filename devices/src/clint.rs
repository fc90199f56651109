//! The CLINT (core-local interruptor) of hart 0, laid out as SiFive's CLINT / the ACLINT on
//! QEMU `virt`: `msip` at 0x0, `mtimecmp` at 0x4000, `mtime` at 0xbff8.
//!
//! The CLINT does not keep time itself: the machine has one clock, which the `time` CSR reads
//! too, and supplies it with [`Clint::set_time`] before it samples the outputs between blocks.
//! A guest write to `mtime` therefore cannot be kept here (the `time` CSR would not see it): the
//! CLINT shows the written value at once and hands it to the machine through
//! [`Clint::take_mtime_write`], which sets the machine clock to it.
//!
//! The 64-bit registers accept naturally aligned accesses of 1, 2, 4 or 8 bytes (an RV32 guest
//! uses the two 32-bit halves); `msip` keeps only bit 0. Anything else reads 0 and ignores
//! writes.
//!
//! Outputs: [`Clint::msip_pending`] (mip.MSIP), [`Clint::mtip_pending`] (mip.MTIP) and
//! [`Clint::next_deadline`] (how long a WFI may sleep). The CPU's `time` CSR reads
//! [`Clint::mtime`].

use crate::bus::MmioDevice;
use crate::regs::{read_field, write_field};
use crate::state::{StateError, StateReader, StateWriter};

/// Size of the CLINT's MMIO window on the virt memory map.
pub const MMIO_SIZE: u64 = 0x1_0000;
/// Machine software interrupt pending register of hart 0 (32 bits, bit 0 used).
pub const MSIP_OFFSET: u64 = 0x0;
/// Timer compare register of hart 0 (64 bits).
pub const MTIMECMP_OFFSET: u64 = 0x4000;
/// Timer register (64 bits).
pub const MTIME_OFFSET: u64 = 0xbff8;

const MSIP_WIDTH: u64 = 4;
const TIMER_WIDTH: u64 = 8;

/// The CLINT. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Clint {
    msip: bool,
    mtimecmp: u64,
    /// The machine clock, as last given to `set_time` (or as the guest last wrote it).
    ticks: u64,
    /// A guest write to `mtime` the machine has not applied to its clock yet.
    mtime_written: Option<u64>,
}

impl Default for Clint {
    fn default() -> Self {
        Self::new()
    }
}

impl Clint {
    /// A CLINT at time 0 with no interrupt pending: `mtimecmp` resets to `u64::MAX` so the
    /// timer does not fire before software programs it.
    pub fn new() -> Self {
        Self {
            msip: false,
            mtimecmp: u64::MAX,
            ticks: 0,
            mtime_written: None,
        }
    }

    /// Sets `mtime` to the machine clock's current value (ticks of the device tree's
    /// `timebase-frequency`).
    pub fn set_time(&mut self, ticks: u64) {
        self.ticks = ticks;
    }

    /// The value the guest last wrote to `mtime`, if the machine has not taken it yet: the
    /// machine sets its clock (which the `time` CSR reads too) to it.
    pub fn take_mtime_write(&mut self) -> Option<u64> {
        self.mtime_written.take()
    }

    /// The current value of `mtime` (what the `time` CSR reads).
    pub fn mtime(&self) -> u64 {
        self.ticks
    }

    /// Writes the guest-visible registers that are not the machine clock (`msip`,
    /// `mtimecmp`) for a snapshot; `mtime` is the machine clock, saved with the machine.
    pub fn save_state(&self, out: &mut StateWriter) {
        out.bool(self.msip);
        out.u64(self.mtimecmp);
    }

    /// Restores what [`Clint::save_state`] wrote.
    pub fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        self.msip = input.bool("clint msip")?;
        self.mtimecmp = input.u64("clint mtimecmp")?;
        self.mtime_written = None;
        Ok(())
    }

    /// The current value of hart 0's `mtimecmp`.
    pub fn mtimecmp(&self) -> u64 {
        self.mtimecmp
    }

    /// Whether hart 0's software interrupt is pending (mip.MSIP).
    pub fn msip_pending(&self) -> bool {
        self.msip
    }

    /// Whether hart 0's timer interrupt is pending (mip.MTIP): `mtime >= mtimecmp`.
    pub fn mtip_pending(&self) -> bool {
        self.mtime() >= self.mtimecmp
    }

    /// The clock value at which the timer interrupt becomes pending: now if it already is, `None` if that moment is beyond the range of the
    /// time base (no timer armed, in practice).
    pub fn next_deadline(&self) -> Option<u64> {
        let now = self.mtime();
        if now >= self.mtimecmp {
            return Some(self.ticks);
        }
        self.ticks.checked_add(self.mtimecmp - now)
    }
}

impl MmioDevice for Clint {
    fn read(&mut self, offset: u64, size: u8) -> u64 {
        read_field(u64::from(self.msip), offset, size, MSIP_OFFSET, MSIP_WIDTH)
            .or_else(|| read_field(self.mtimecmp, offset, size, MTIMECMP_OFFSET, TIMER_WIDTH))
            .or_else(|| read_field(self.mtime(), offset, size, MTIME_OFFSET, TIMER_WIDTH))
            .unwrap_or(0)
    }

    fn write(&mut self, offset: u64, size: u8, value: u64) {
        if let Some(msip) = write_field(
            u64::from(self.msip),
            offset,
            size,
            MSIP_OFFSET,
            MSIP_WIDTH,
            value,
        ) {
            self.msip = msip & 1 != 0;
        } else if let Some(mtimecmp) = write_field(
            self.mtimecmp,
            offset,
            size,
            MTIMECMP_OFFSET,
            TIMER_WIDTH,
            value,
        ) {
            self.mtimecmp = mtimecmp;
        } else if let Some(mtime) =
            write_field(self.mtime(), offset, size, MTIME_OFFSET, TIMER_WIDTH, value)
        {
            self.ticks = mtime;
            self.mtime_written = Some(mtime);
        }
    }

    fn name(&self) -> &'static str {
        "clint"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msip_keeps_bit_zero() {
        let mut clint = Clint::new();
        assert!(!clint.msip_pending());
        clint.write(MSIP_OFFSET, 4, 0xffff_ffff);
        assert!(clint.msip_pending());
        assert_eq!(clint.read(MSIP_OFFSET, 4), 1);
        clint.write(MSIP_OFFSET, 4, 2);
        assert!(!clint.msip_pending());
        // Other harts' msip words do not exist.
        clint.write(MSIP_OFFSET + 4, 4, 1);
        assert_eq!(clint.read(MSIP_OFFSET + 4, 4), 0);
        assert!(!clint.msip_pending());
    }

    #[test]
    fn timer_fires_when_mtime_reaches_mtimecmp() {
        let mut clint = Clint::new();
        assert!(!clint.mtip_pending(), "reset mtimecmp is far in the future");
        // OpenSBI on RV32: high word to all ones first, then low, then high.
        clint.write(MTIMECMP_OFFSET + 4, 4, 0xffff_ffff);
        clint.write(MTIMECMP_OFFSET, 4, 1000);
        clint.write(MTIMECMP_OFFSET + 4, 4, 0);
        assert_eq!(clint.mtimecmp(), 1000);
        clint.set_time(999);
        assert!(!clint.mtip_pending());
        assert_eq!(clint.next_deadline(), Some(1000));
        clint.set_time(1000);
        assert!(clint.mtip_pending());
        assert_eq!(clint.next_deadline(), Some(1000));
        clint.set_time(5000);
        assert_eq!(clint.next_deadline(), Some(5000));
        clint.write(MTIMECMP_OFFSET, 8, 6000);
        assert!(!clint.mtip_pending(), "a later compare value clears MTIP");
    }

    #[test]
    fn mtime_reads_in_halves_and_whole() {
        let mut clint = Clint::new();
        clint.set_time(0x1234_5678_9abc_def0);
        assert_eq!(clint.read(MTIME_OFFSET, 4), 0x9abc_def0);
        assert_eq!(clint.read(MTIME_OFFSET + 4, 4), 0x1234_5678);
        assert_eq!(clint.read(MTIME_OFFSET, 8), 0x1234_5678_9abc_def0);
        assert_eq!(clint.read(MTIME_OFFSET + 7, 1), 0x12);
        assert_eq!(clint.read(MTIME_OFFSET + 2, 4), 0, "misaligned");
        assert_eq!(clint.read(MTIME_OFFSET + 8, 4), 0, "past the end");
    }

    #[test]
    fn guest_writes_to_mtime_show_at_once_and_go_to_the_machine_clock() {
        let mut clint = Clint::new();
        clint.set_time(100);
        assert_eq!(clint.take_mtime_write(), None);
        clint.write(MTIME_OFFSET, 8, 1_000_000);
        assert_eq!(clint.mtime(), 1_000_000);
        assert_eq!(clint.take_mtime_write(), Some(1_000_000));
        assert_eq!(clint.take_mtime_write(), None, "taken once");
        // The machine clock goes on from the written value.
        clint.set_time(1_000_050);
        clint.write(MTIMECMP_OFFSET, 8, 1_000_100);
        assert_eq!(clint.next_deadline(), Some(1_000_100));
        // Writing only the high half keeps the low half.
        clint.write(MTIME_OFFSET + 4, 4, 1);
        assert_eq!(clint.take_mtime_write(), Some((1 << 32) | 1_000_050));
    }

    #[test]
    fn state_round_trips() {
        let mut clint = Clint::new();
        clint.write(MSIP_OFFSET, 4, 1);
        clint.write(MTIMECMP_OFFSET, 8, 12345);
        let mut out = StateWriter::new();
        clint.save_state(&mut out);
        let bytes = out.into_bytes();
        let mut restored = Clint::new();
        let mut input = StateReader::new(&bytes);
        restored.restore_state(&mut input).unwrap();
        input.finish("clint").unwrap();
        assert!(restored.msip_pending());
        assert_eq!(restored.mtimecmp(), 12345);
        assert!(Clint::new()
            .restore_state(&mut StateReader::new(&bytes[..3]))
            .is_err());
    }

    #[test]
    fn deadline_follows_the_written_clock() {
        let mut clint = Clint::new();
        clint.set_time(10);
        clint.write(MTIME_OFFSET, 8, 0);
        clint.write(MTIMECMP_OFFSET, 8, 5);
        assert_eq!(clint.next_deadline(), Some(5), "mtime now reads 0");
        clint.set_time(7);
        assert_eq!(clint.next_deadline(), Some(7), "pending: now");
    }

    #[test]
    fn unknown_offsets_and_sizes_are_inert() {
        let mut clint = Clint::new();
        for offset in [0x8, 0x3ffc, 0x4008, 0xbff0, 0xc000, 0xffff, u64::MAX] {
            clint.write(offset, 4, u64::MAX);
            assert_eq!(clint.read(offset, 4), 0, "{offset:#x}");
        }
        clint.write(MTIMECMP_OFFSET, 3, 0);
        assert_eq!(clint.mtimecmp(), u64::MAX);
        assert!(!clint.msip_pending());
        assert_eq!(clint.mtime(), 0);
    }
}
