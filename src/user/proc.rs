//! Process creation and reaping: fork-style `clone` forks the host process (the whole VM, guest
//! memory included, as qemu-user does), and `wait4` waits for those host children, whose exit
//! statuses are the guest children's. Threads (CLONE_VM without CLONE_VFORK, CLONE_THREAD) are
//! not supported.

use crate::cpu::Hart;

use super::syscall::{errno, host_result, last_errno, rusage_bytes, SysResult};
use super::Process;

const CLONE_VM: u32 = 0x100;
const CLONE_VFORK: u32 = 0x4000;
const CLONE_THREAD: u32 = 0x1_0000;
const CLONE_SETTLS: u32 = 0x8_0000;
const CLONE_PARENT_SETTID: u32 = 0x10_0000;
const CLONE_CHILD_SETTID: u32 = 0x100_0000;
/// The low byte of the flags: the signal sent to the parent when the child exits.
const CSIGNAL: u32 = 0xff;
const SIGCHLD: u32 = 17;

impl Process {
    /// `clone(flags, stack, parent_tid*, tls, child_tid*)` (riscv argument order).
    ///
    /// A CLONE_VM|CLONE_VFORK child (posix_spawn, vfork) gets a copy of memory instead of
    /// sharing it; that is indistinguishable as long as it only execs or exits, which is all
    /// vfork allows.
    pub(super) fn sys_clone(
        &mut self,
        hart: &mut Hart,
        flags: u32,
        stack: u32,
        parent_tid: u32,
        tls: u32,
        child_tid: u32,
    ) -> SysResult {
        let exit_signal = flags & CSIGNAL;
        if flags & CLONE_THREAD != 0
            || (flags & CLONE_VM != 0 && flags & CLONE_VFORK == 0)
            || (exit_signal != 0 && exit_signal != SIGCHLD)
        {
            tracing::warn!(flags, "threads are not supported in user mode");
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: the VM runs on this one thread; the child continues with a private copy of
        // all our state (guest memory included), exactly what fork() semantics ask for.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(last_errno());
        }
        if pid == 0 {
            self.pid = std::process::id();
            if stack != 0 {
                hart.x[2] = stack;
            }
            if flags & CLONE_SETTLS != 0 {
                hart.x[4] = tls;
            }
            if flags & CLONE_CHILD_SETTID != 0 {
                self.mem.write_u32(child_tid, self.pid)?;
            }
            if flags & CLONE_PARENT_SETTID != 0 {
                self.mem.write_u32(parent_tid, self.pid)?;
            }
            return Ok(0);
        }
        if flags & CLONE_PARENT_SETTID != 0 {
            self.mem.write_u32(parent_tid, pid as u32)?;
        }
        Ok(pid as u32)
    }

    /// `wait4(pid, wstatus*, options, rusage*)`: children are host processes.
    pub(super) fn sys_wait4(
        &mut self,
        pid: u32,
        wstatus: u32,
        options: u32,
        rusage: u32,
    ) -> SysResult {
        if wstatus != 0 {
            self.mem.check(wstatus, 4, super::mem::perm::W)?;
        }
        let mut status = 0i32;
        // SAFETY: all-zero is a valid rusage.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointers; wait4 has no other memory effects.
        let r = unsafe { libc::wait4(pid as i32, &mut status, options as i32, &mut usage) };
        let child = host_result(r as i64)?;
        if child != 0 {
            if wstatus != 0 {
                // The wait status encoding is the same on every Linux architecture.
                self.mem.write_u32(wstatus, status as u32)?;
            }
            if rusage != 0 {
                self.mem.write(rusage, &rusage_bytes(&usage))?;
            }
        }
        Ok(child)
    }

    /// `waitid(idtype, id, siginfo*, options, rusage*)`.
    pub(super) fn sys_waitid(
        &mut self,
        idtype: u32,
        id: u32,
        info: u32,
        options: u32,
        rusage: u32,
    ) -> SysResult {
        // SAFETY: all-zero is a valid siginfo_t and rusage.
        let mut host_info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointers; the raw syscall (not glibc's wrapper) also fills rusage.
        let r = unsafe {
            libc::syscall(
                libc::SYS_waitid,
                idtype as i32,
                id as i32,
                &mut host_info as *mut libc::siginfo_t,
                options as i32,
                &mut usage as *mut libc::rusage,
            )
        };
        host_result(r)?;
        if info != 0 {
            self.mem.write(info, &siginfo_child_bytes(&host_info))?;
        }
        if rusage != 0 {
            self.mem.write(rusage, &rusage_bytes(&usage))?;
        }
        Ok(0)
    }
}

/// A SIGCHLD `siginfo_t` in the rv32 layout (128 bytes): signo, errno, code, then pid, uid,
/// status, utime, stime as 32-bit fields from offset 12. (On x86-64 the union starts at 16.)
fn siginfo_child_bytes(host: &libc::siginfo_t) -> [u8; 128] {
    // SAFETY: siginfo_t is 128 plain bytes; reading it as bytes is always valid.
    let raw: [u8; 128] = unsafe { std::mem::transmute_copy(host) };
    let word = |off: usize| [raw[off], raw[off + 1], raw[off + 2], raw[off + 3]];
    let long = |off: usize| {
        let v = i64::from_le_bytes(raw[off..off + 8].try_into().unwrap_or([0; 8]));
        (v as i32).to_le_bytes()
    };
    let mut out = [0u8; 128];
    let fields = [
        (0, word(0)),
        (4, word(4)),
        (8, word(8)),
        (12, word(16)),
        (16, word(20)),
        (20, word(24)),
        (24, long(32)),
        (28, long(40)),
    ];
    for (off, bytes) in fields {
        out[off..off + 4].copy_from_slice(&bytes);
    }
    out
}
