//! Tests of the process as the engine sees it: syscalls and traps through `handle_trap`.
