//! ELF32 RISC-V parsing shared by the user-mode loader and the bare-metal runner.
