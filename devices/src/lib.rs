//! Devices of the rv32vm machine model.
//!
//! Each device is a plain state machine reached through MMIO reads and writes
//! ([`MmioDevice`]); devices never call into the CPU. The machine maps them on a [`Bus`], wires
//! their interrupt outputs ([`IrqLine`]) to the [`Plic`], and between blocks feeds them time and
//! input and samples their outputs (see `docs/devices.md`):
//!
//! - [`uart`]: 16550A serial console (PLIC source 10),
//! - [`plic`]: SiFive PLIC, hart 0 M- and S-mode contexts (mip.MEIP / mip.SEIP),
//! - [`clint`]: CLINT `msip` / `mtimecmp` / `mtime` (mip.MSIP / mip.MTIP),
//! - [`syscon`]: `sifive,test0` power-off and reset,
//! - [`rtc`]: goldfish RTC (PLIC source 11),
//! - [`virtio`]: virtio-mmio transport with virtio-blk and virtio-rng (PLIC sources 1..=8).
//!
//! Every device accepts any offset and any access size without panicking: what it does not
//! implement reads as 0 and ignores writes.
//!
//! # Example
//!
//! ```
//! use rv32vm_devices::{clint, plic, uart, Bus, Clint, Plic, Uart};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut plic = Plic::new();
//! let uart_irq = plic.irq_line(10)?;
//! let mut bus = Bus::new();
//! let clint = bus.insert(0x0200_0000, clint::MMIO_SIZE, Clint::new())?;
//! let plic = bus.insert(0x0c00_0000, plic::MMIO_SIZE, plic)?;
//! let uart = bus.insert(0x1000_0000, uart::MMIO_SIZE, Uart::new(uart_irq, Vec::new()))?;
//!
//! // The guest enables source 10 for S-mode and the UART's receive interrupt.
//! bus.write(0x0c00_0000 + 4 * 10, 4, 1);
//! bus.write(0x0c00_2080, 4, 1 << 10);
//! bus.write(0x1000_0001, 1, u64::from(uart::IER_RDI));
//!
//! // A key press arrives; between blocks the machine polls and samples the outputs.
//! bus.device(uart).unwrap().input().push(b"a");
//! bus.device_mut(uart).unwrap().poll_input();
//! bus.device_mut(clint).unwrap().set_time(1234);
//! assert!(bus.device(plic).unwrap().s_external_pending());
//! assert!(!bus.device(clint).unwrap().mtip_pending());
//!
//! // The guest's handler claims, reads the byte, completes.
//! assert_eq!(bus.read(0x0c20_1004, 4), Some(10));
//! assert_eq!(bus.read(0x1000_0000, 1), Some(u64::from(b'a')));
//! bus.write(0x0c20_1004, 4, 10);
//! assert!(!bus.device(plic).unwrap().s_external_pending());
//! assert_eq!(bus.read(0x0800_0000, 4), None); // unmapped: access fault
//! # Ok(())
//! # }
//! ```

pub mod bus;
pub mod clint;
pub mod irq;
pub mod plic;
mod regs;
pub mod rtc;
pub mod state;
pub mod syscon;
pub mod uart;
pub mod virtio;

#[cfg(test)]
mod hammer_tests;

pub use bus::{Bus, BusError, BusRegion, DeviceId, MmioDevice};
pub use clint::Clint;
pub use irq::{IrqError, IrqLevels, IrqLine};
pub use plic::Plic;
pub use rtc::{GoldfishRtc, ManualClock, SystemClock, WallClock};
pub use state::{StateError, StateReader, StateWriter};
pub use syscon::{PowerEvent, Syscon};
pub use uart::{Uart, UartInput};
pub use virtio::{Disk, DiskError, DiskOptions, VirtioBlk, VirtioMmio, VirtioRng};
