//! User-mode Linux process emulation: ELF loading, stack and auxv, syscalls.
