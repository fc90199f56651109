//! Firmware for rv32vm: the built-in SBI that an S-mode kernel calls ([`sbi`]). The hand-off to
//! an external M-mode firmware (OpenSBI fw_dynamic) lives with the machine's boot loader.

pub mod sbi;
