//! Devices of the rv32vm machine model.
//!
//! Each device is a plain state machine reached through MMIO reads and writes; devices never call
//! into the CPU. The system-mode machine (UART, PLIC, CLINT, virtio) lands here.
