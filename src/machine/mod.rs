//! The full-system machine (QEMU virt's memory map): RAM, the device bus, the generated device
//! tree and the boot loader. System mode is being built up here; today it holds the memory map
//! and the device tree generator, the loader, the system platform and `boot`.

pub mod boot;
pub mod console;
pub mod determinism;
pub mod fdt;
pub mod loader;
pub mod power;
pub mod ram;
pub mod restore;
pub mod semihosting;
pub mod session;
pub mod snapshot;
pub mod system;
pub mod terminal;

/// The physical memory map (QEMU `virt` layout, DESIGN.md §3).
pub mod map {
    pub const SYSCON_BASE: u32 = 0x0010_0000;
    pub const SYSCON_SIZE: u64 = rv32vm_devices::syscon::MMIO_SIZE;
    /// sifive,test0 value that powers off.
    pub const SYSCON_POWEROFF: u32 = 0x5555;
    /// sifive,test0 value that reboots.
    pub const SYSCON_REBOOT: u32 = 0x7777;
    pub const RTC_BASE: u32 = 0x0010_1000;
    pub const RTC_SIZE: u64 = rv32vm_devices::rtc::MMIO_SIZE;
    pub const RTC_IRQ: u32 = 11;
    pub const CLINT_BASE: u32 = 0x0200_0000;
    pub const CLINT_SIZE: u64 = rv32vm_devices::clint::MMIO_SIZE;
    pub const PLIC_BASE: u32 = 0x0c00_0000;
    pub const PLIC_SIZE: u64 = rv32vm_devices::plic::MMIO_SIZE;
    /// Interrupt sources the PLIC implements (1..=PLIC_SOURCES).
    pub const PLIC_SOURCES: u32 = rv32vm_devices::plic::NUM_SOURCES;
    pub const UART_BASE: u32 = 0x1000_0000;
    pub const UART_SIZE: u64 = rv32vm_devices::uart::MMIO_SIZE;
    pub const UART_IRQ: u32 = 10;
    /// The UART's input clock as the 8250 driver is told (divisor arithmetic only).
    pub const UART_CLOCK_HZ: u32 = 3_686_400;
    pub const VIRTIO_BASE: u32 = 0x1000_1000;
    pub const VIRTIO_STRIDE: u32 = 0x1000;
    pub const VIRTIO_SLOTS: u32 = 8;
    /// virtio-mmio slot n raises PLIC source VIRTIO_IRQ_BASE + n.
    pub const VIRTIO_IRQ_BASE: u32 = 1;
    pub const RAM_BASE: u32 = 0x8000_0000;
}
