//! Firmware for rv32vm: the built-in SBI that an S-mode kernel calls, and the hand-off to an
//! external M-mode firmware (OpenSBI fw_dynamic). Filled in by the system-mode work.
