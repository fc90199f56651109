//! The `sifive,test0` finisher ("syscon"): the guest writes a status word to power off or reset
//! the machine, as QEMU `virt` provides it and Linux's syscon-poweroff / syscon-reboot drivers
//! (and riscv-tests-style bare-metal programs) use it.
//!
//! A 32-bit (or 16-bit) write at offset 0: the low 16 bits select the action, the high 16 bits
//! carry an exit code. The device only records a [`PowerEvent`]; the machine polls
//! [`Syscon::take_event`] between blocks and stops or resets. Reads return 0; other offsets,
//! sizes and status values are ignored.

use crate::bus::MmioDevice;

/// Size of the syscon's MMIO window on the virt memory map.
pub const MMIO_SIZE: u64 = 0x1000;
/// The finisher register.
pub const FINISHER_OFFSET: u64 = 0x0;
/// Status: the guest failed; the exit code is in bits 31:16.
pub const FINISHER_FAIL: u16 = 0x3333;
/// Status: the guest finished successfully / powers off (Linux writes 0x5555).
pub const FINISHER_PASS: u16 = 0x5555;
/// Status: reset the machine (Linux writes 0x7777).
pub const FINISHER_RESET: u16 = 0x7777;

/// What the guest asked the machine to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerEvent {
    /// Power off normally (`FINISHER_PASS`); `exit_code` is bits 31:16, 0 for a plain poweroff.
    PowerOff {
        /// Exit status the guest asked for.
        exit_code: u16,
    },
    /// Power off reporting failure (`FINISHER_FAIL`), with the guest's code from bits 31:16.
    Failure {
        /// Exit status the guest asked for.
        exit_code: u16,
    },
    /// Reset the machine (`FINISHER_RESET`).
    Reset,
}

impl PowerEvent {
    /// Decodes a finisher status word; `None` for values the device ignores.
    pub fn from_status(value: u32) -> Option<Self> {
        let exit_code = (value >> 16) as u16;
        match value as u16 {
            FINISHER_PASS => Some(Self::PowerOff { exit_code }),
            FINISHER_FAIL => Some(Self::Failure { exit_code }),
            FINISHER_RESET => Some(Self::Reset),
            _ => None,
        }
    }

    /// The guest's exit code for a power-off event (`None` for a reset).
    pub fn exit_code(&self) -> Option<u16> {
        match self {
            Self::PowerOff { exit_code } | Self::Failure { exit_code } => Some(*exit_code),
            Self::Reset => None,
        }
    }
}

/// The finisher device. See the [module documentation](self).
#[derive(Debug, Clone, Default)]
pub struct Syscon {
    event: Option<PowerEvent>,
}

impl Syscon {
    /// A finisher with no event recorded.
    pub fn new() -> Self {
        Self::default()
    }

    /// The recorded event, if any, without clearing it.
    pub fn pending_event(&self) -> Option<PowerEvent> {
        self.event
    }

    /// Writes the recorded event (if the guest wrote one the machine has not taken yet).
    pub fn save_state(&self, out: &mut crate::state::StateWriter) {
        match self.event {
            None => out.u8(0),
            Some(PowerEvent::PowerOff { exit_code }) => {
                out.u8(1);
                out.u16(exit_code);
            }
            Some(PowerEvent::Failure { exit_code }) => {
                out.u8(2);
                out.u16(exit_code);
            }
            Some(PowerEvent::Reset) => out.u8(3),
        }
    }

    /// Restores what [`Syscon::save_state`] wrote.
    pub fn restore_state(
        &mut self,
        input: &mut crate::state::StateReader<'_>,
    ) -> Result<(), crate::state::StateError> {
        self.event = match input.u8("syscon event")? {
            0 => None,
            1 => Some(PowerEvent::PowerOff {
                exit_code: input.u16("syscon exit code")?,
            }),
            2 => Some(PowerEvent::Failure {
                exit_code: input.u16("syscon exit code")?,
            }),
            3 => Some(PowerEvent::Reset),
            other => {
                return Err(crate::state::StateError::invalid(format!(
                    "syscon event kind {other}"
                )))
            }
        };
        Ok(())
    }

    /// The recorded event, if any; clears it.
    pub fn take_event(&mut self) -> Option<PowerEvent> {
        self.event.take()
    }
}

impl MmioDevice for Syscon {
    fn read(&mut self, _offset: u64, _size: u8) -> u64 {
        0
    }

    fn write(&mut self, offset: u64, size: u8, value: u64) {
        if offset != FINISHER_OFFSET || !matches!(size, 2 | 4) {
            return;
        }
        let status = if size == 2 {
            value & 0xffff
        } else {
            value & 0xffff_ffff
        };
        match PowerEvent::from_status(status as u32) {
            Some(event) => {
                tracing::debug!(?event, "guest power event");
                // The first request wins until the machine takes it.
                self.event.get_or_insert(event);
            }
            None => tracing::debug!(status, "ignored finisher write"),
        }
    }

    fn name(&self) -> &'static str {
        "syscon"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_poweroff_and_reboot_values() {
        let mut syscon = Syscon::new();
        syscon.write(0, 4, 0x5555);
        assert_eq!(
            syscon.take_event(),
            Some(PowerEvent::PowerOff { exit_code: 0 })
        );
        assert_eq!(syscon.take_event(), None);
        syscon.write(0, 4, 0x7777);
        assert_eq!(syscon.pending_event(), Some(PowerEvent::Reset));
        assert_eq!(syscon.take_event(), Some(PowerEvent::Reset));
    }

    #[test]
    fn failure_carries_the_exit_code() {
        let mut syscon = Syscon::new();
        syscon.write(0, 4, (42 << 16) | 0x3333);
        let event = syscon.take_event().unwrap();
        assert_eq!(event, PowerEvent::Failure { exit_code: 42 });
        assert_eq!(event.exit_code(), Some(42));
        assert_eq!(PowerEvent::Reset.exit_code(), None);
        assert_eq!(
            PowerEvent::from_status(0x0003_5555),
            Some(PowerEvent::PowerOff { exit_code: 3 })
        );
    }

    #[test]
    fn first_event_wins_until_taken() {
        let mut syscon = Syscon::new();
        syscon.write(0, 4, 0x7777);
        syscon.write(0, 4, 0x5555);
        assert_eq!(syscon.take_event(), Some(PowerEvent::Reset));
    }

    #[test]
    fn other_values_offsets_and_sizes_are_ignored() {
        let mut syscon = Syscon::new();
        syscon.write(0, 4, 0x1234);
        syscon.write(4, 4, 0x5555);
        syscon.write(0, 1, 0x55);
        syscon.write(0, 8, 0x5555);
        syscon.write(0, 2, 0x0001_3333); // only 16 bits: 0x3333 with code 0
        assert_eq!(
            syscon.take_event(),
            Some(PowerEvent::Failure { exit_code: 0 })
        );
        syscon.write(0, 4, 0x1_0000_5555); // bits above 31 are not part of the word
        assert_eq!(
            syscon.take_event(),
            Some(PowerEvent::PowerOff { exit_code: 0 })
        );
        assert_eq!(syscon.read(0, 4), 0);
        assert_eq!(syscon.take_event(), None);
    }
}
