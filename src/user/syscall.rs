//! Linux system calls of an RV32 process: the asm-generic table with the time64 variants (rv32
//! has no 32-bit time syscalls). Number in a7, arguments in a0..a5, result (or -errno) in a0.
//! 64-bit arguments arrive as register pairs, low word first, with no alignment padding.
//!
//! Unknown calls return -ENOSYS with a warning; nothing a guest passes can panic the host.

use std::time::{Duration, Instant};

use crate::cpu::Hart;
use crate::exec::platform::Stop;

use super::mem::{perm, Fault};
use super::passthrough::{SetIds, XattrTarget};
use super::signal;
use super::threads;
use super::Process;

/// Syscall numbers (asm-generic, as used by riscv32).
pub mod nr {
    pub const SETXATTR: u32 = 5;
    pub const LSETXATTR: u32 = 6;
    pub const FSETXATTR: u32 = 7;
    pub const GETXATTR: u32 = 8;
    pub const LGETXATTR: u32 = 9;
    pub const FGETXATTR: u32 = 10;
    pub const LISTXATTR: u32 = 11;
    pub const LLISTXATTR: u32 = 12;
    pub const FLISTXATTR: u32 = 13;
    pub const REMOVEXATTR: u32 = 14;
    pub const LREMOVEXATTR: u32 = 15;
    pub const FREMOVEXATTR: u32 = 16;
    pub const GETCWD: u32 = 17;
    pub const EVENTFD2: u32 = 19;
    pub const EPOLL_CREATE1: u32 = 20;
    pub const EPOLL_CTL: u32 = 21;
    pub const EPOLL_PWAIT: u32 = 22;
    pub const DUP: u32 = 23;
    pub const DUP3: u32 = 24;
    pub const FCNTL64: u32 = 25;
    pub const INOTIFY_INIT1: u32 = 26;
    pub const INOTIFY_ADD_WATCH: u32 = 27;
    pub const INOTIFY_RM_WATCH: u32 = 28;
    pub const IOCTL: u32 = 29;
    pub const FLOCK: u32 = 32;
    pub const MKNODAT: u32 = 33;
    pub const MKDIRAT: u32 = 34;
    pub const UNLINKAT: u32 = 35;
    pub const SYMLINKAT: u32 = 36;
    pub const LINKAT: u32 = 37;
    pub const UMOUNT2: u32 = 39;
    pub const MOUNT: u32 = 40;
    pub const STATFS64: u32 = 43;
    pub const FSTATFS64: u32 = 44;
    pub const TRUNCATE64: u32 = 45;
    pub const FTRUNCATE64: u32 = 46;
    pub const FALLOCATE: u32 = 47;
    pub const FACCESSAT: u32 = 48;
    pub const CHDIR: u32 = 49;
    pub const FCHDIR: u32 = 50;
    pub const CHROOT: u32 = 51;
    pub const FCHMOD: u32 = 52;
    pub const FCHMODAT: u32 = 53;
    pub const FCHOWNAT: u32 = 54;
    pub const FCHOWN: u32 = 55;
    pub const OPENAT: u32 = 56;
    pub const CLOSE: u32 = 57;
    pub const PIPE2: u32 = 59;
    pub const GETDENTS64: u32 = 61;
    pub const LLSEEK: u32 = 62;
    pub const READ: u32 = 63;
    pub const WRITE: u32 = 64;
    pub const READV: u32 = 65;
    pub const WRITEV: u32 = 66;
    pub const PREAD64: u32 = 67;
    pub const PWRITE64: u32 = 68;
    pub const PREADV: u32 = 69;
    pub const PWRITEV: u32 = 70;
    pub const SENDFILE64: u32 = 71;
    pub const SIGNALFD4: u32 = 74;
    pub const SPLICE: u32 = 76;
    pub const TEE: u32 = 77;
    pub const READLINKAT: u32 = 78;
    pub const FSTATAT64: u32 = 79;
    pub const FSTAT64: u32 = 80;
    pub const SYNC: u32 = 81;
    pub const FSYNC: u32 = 82;
    pub const FDATASYNC: u32 = 83;
    pub const SYNC_FILE_RANGE: u32 = 84;
    pub const TIMERFD_CREATE: u32 = 85;
    pub const CAPGET: u32 = 90;
    pub const CAPSET: u32 = 91;
    pub const PERSONALITY: u32 = 92;
    pub const EXIT: u32 = 93;
    pub const EXIT_GROUP: u32 = 94;
    pub const WAITID: u32 = 95;
    pub const SET_TID_ADDRESS: u32 = 96;
    pub const UNSHARE: u32 = 97;
    pub const SET_ROBUST_LIST: u32 = 99;
    pub const GETITIMER: u32 = 102;
    pub const SETITIMER: u32 = 103;
    pub const TIMER_CREATE: u32 = 107;
    pub const TIMER_GETOVERRUN: u32 = 109;
    pub const TIMER_DELETE: u32 = 111;
    pub const SCHED_SETPARAM: u32 = 118;
    pub const SCHED_SETSCHEDULER: u32 = 119;
    pub const SCHED_GETSCHEDULER: u32 = 120;
    pub const SCHED_GETPARAM: u32 = 121;
    pub const SCHED_SETAFFINITY: u32 = 122;
    pub const SCHED_GETAFFINITY: u32 = 123;
    pub const SCHED_YIELD: u32 = 124;
    pub const SCHED_GET_PRIORITY_MAX: u32 = 125;
    pub const SCHED_GET_PRIORITY_MIN: u32 = 126;
    pub const KILL: u32 = 129;
    pub const TKILL: u32 = 130;
    pub const TGKILL: u32 = 131;
    pub const SIGALTSTACK: u32 = 132;
    pub const RT_SIGSUSPEND: u32 = 133;
    pub const RT_SIGACTION: u32 = 134;
    pub const RT_SIGPROCMASK: u32 = 135;
    pub const RT_SIGPENDING: u32 = 136;
    pub const RT_SIGQUEUEINFO: u32 = 138;
    pub const RT_SIGRETURN: u32 = 139;
    pub const SETPRIORITY: u32 = 140;
    pub const GETPRIORITY: u32 = 141;
    pub const SETREGID: u32 = 143;
    pub const SETGID: u32 = 144;
    pub const SETREUID: u32 = 145;
    pub const SETUID: u32 = 146;
    pub const SETRESUID: u32 = 147;
    pub const GETRESUID: u32 = 148;
    pub const SETRESGID: u32 = 149;
    pub const GETRESGID: u32 = 150;
    pub const SETFSUID: u32 = 151;
    pub const SETFSGID: u32 = 152;
    pub const TIMES: u32 = 153;
    pub const SETPGID: u32 = 154;
    pub const GETPGID: u32 = 155;
    pub const GETSID: u32 = 156;
    pub const SETSID: u32 = 157;
    pub const GETGROUPS: u32 = 158;
    pub const SETGROUPS: u32 = 159;
    pub const UNAME: u32 = 160;
    pub const GETRLIMIT: u32 = 163;
    pub const SETRLIMIT: u32 = 164;
    pub const GETRUSAGE: u32 = 165;
    pub const UMASK: u32 = 166;
    pub const PRCTL: u32 = 167;
    pub const GETCPU: u32 = 168;
    pub const GETPID: u32 = 172;
    pub const GETPPID: u32 = 173;
    pub const GETUID: u32 = 174;
    pub const GETEUID: u32 = 175;
    pub const GETGID: u32 = 176;
    pub const GETEGID: u32 = 177;
    pub const GETTID: u32 = 178;
    pub const SYSINFO: u32 = 179;
    pub const MQ_OPEN: u32 = 180;
    pub const MQ_UNLINK: u32 = 181;
    pub const MQ_NOTIFY: u32 = 184;
    pub const MQ_GETSETATTR: u32 = 185;
    pub const MSGGET: u32 = 186;
    pub const MSGCTL: u32 = 187;
    pub const MSGRCV: u32 = 188;
    pub const MSGSND: u32 = 189;
    pub const SEMGET: u32 = 190;
    pub const SEMCTL: u32 = 191;
    pub const SEMOP: u32 = 193;
    pub const SHMGET: u32 = 194;
    pub const SHMCTL: u32 = 195;
    pub const SHMAT: u32 = 196;
    pub const SHMDT: u32 = 197;
    pub const SOCKET: u32 = 198;
    pub const SOCKETPAIR: u32 = 199;
    pub const BIND: u32 = 200;
    pub const LISTEN: u32 = 201;
    pub const ACCEPT: u32 = 202;
    pub const CONNECT: u32 = 203;
    pub const GETSOCKNAME: u32 = 204;
    pub const GETPEERNAME: u32 = 205;
    pub const SENDTO: u32 = 206;
    pub const RECVFROM: u32 = 207;
    pub const SETSOCKOPT: u32 = 208;
    pub const GETSOCKOPT: u32 = 209;
    pub const SHUTDOWN: u32 = 210;
    pub const SENDMSG: u32 = 211;
    pub const RECVMSG: u32 = 212;
    pub const READAHEAD: u32 = 213;
    pub const BRK: u32 = 214;
    pub const MUNMAP: u32 = 215;
    pub const MREMAP: u32 = 216;
    pub const CLONE: u32 = 220;
    pub const EXECVE: u32 = 221;
    pub const EXECVEAT: u32 = 281;
    pub const MMAP2: u32 = 222;
    pub const FADVISE64_64: u32 = 223;
    pub const MPROTECT: u32 = 226;
    pub const MSYNC: u32 = 227;
    pub const MLOCK: u32 = 228;
    pub const MUNLOCK: u32 = 229;
    pub const MLOCKALL: u32 = 230;
    pub const MUNLOCKALL: u32 = 231;
    pub const MINCORE: u32 = 232;
    pub const MADVISE: u32 = 233;
    pub const RT_TGSIGQUEUEINFO: u32 = 240;
    pub const ACCEPT4: u32 = 242;
    pub const RISCV_HWPROBE: u32 = 258;
    pub const RISCV_FLUSH_ICACHE: u32 = 259;
    pub const WAIT4: u32 = 260;
    pub const PRLIMIT64: u32 = 261;
    pub const SYNCFS: u32 = 267;
    pub const SETNS: u32 = 268;
    pub const SENDMMSG: u32 = 269;
    pub const KCMP: u32 = 272;
    pub const RENAMEAT2: u32 = 276;
    pub const GETRANDOM: u32 = 278;
    pub const MEMFD_CREATE: u32 = 279;
    pub const MEMBARRIER: u32 = 283;
    pub const MLOCK2: u32 = 284;
    pub const COPY_FILE_RANGE: u32 = 285;
    pub const PREADV2: u32 = 286;
    pub const PWRITEV2: u32 = 287;
    pub const STATX: u32 = 291;
    pub const RSEQ: u32 = 293;
    pub const CLOCK_GETTIME64: u32 = 403;
    pub const CLOCK_GETRES_TIME64: u32 = 406;
    pub const CLOCK_NANOSLEEP_TIME64: u32 = 407;
    pub const TIMER_GETTIME64: u32 = 408;
    pub const TIMER_SETTIME64: u32 = 409;
    pub const TIMERFD_GETTIME64: u32 = 410;
    pub const TIMERFD_SETTIME64: u32 = 411;
    pub const UTIMENSAT_TIME64: u32 = 412;
    pub const PSELECT6_TIME64: u32 = 413;
    pub const PPOLL_TIME64: u32 = 414;
    pub const RECVMMSG_TIME64: u32 = 417;
    pub const MQ_TIMEDSEND_TIME64: u32 = 418;
    pub const MQ_TIMEDRECEIVE_TIME64: u32 = 419;
    pub const SEMTIMEDOP_TIME64: u32 = 420;
    pub const RT_SIGTIMEDWAIT_TIME64: u32 = 421;
    pub const FUTEX_TIME64: u32 = 422;
    pub const SCHED_RR_GET_INTERVAL_TIME64: u32 = 423;
    pub const PIDFD_SEND_SIGNAL: u32 = 424;
    pub const PIDFD_OPEN: u32 = 434;
    pub const CLONE3: u32 = 435;
    pub const CLOSE_RANGE: u32 = 436;
    pub const FACCESSAT2: u32 = 439;
    pub const EPOLL_PWAIT2: u32 = 441;
}

/// Why a syscall did not return a value.
#[derive(Debug)]
pub enum SysError {
    /// Return `-errno` to the guest.
    Errno(i32),
    /// Stop the process (exit, fatal signal).
    Stop(Stop),
    /// The call would keep the host thread waiting while another guest thread could run:
    /// that one goes first, and this one runs the ecall again on its next turn.
    WouldBlock,
}

impl From<Fault> for SysError {
    fn from(_: Fault) -> Self {
        SysError::Errno(libc::EFAULT)
    }
}

/// A syscall result: the value for a0, or why there is none.
pub type SysResult = Result<u32, SysError>;

/// `-errno` for the guest.
pub fn errno(code: i32) -> SysError {
    SysError::Errno(code)
}

/// The errno of a failed host I/O call made through `std` (EIO if it has none).
pub fn io_errno(e: std::io::Error) -> SysError {
    errno(e.raw_os_error().unwrap_or(libc::EIO))
}

/// The host's errno after a failed call.
pub fn last_errno() -> SysError {
    errno(
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO),
    )
}

/// A host return value: negative means failure with errno set.
pub fn host_result(r: i64) -> SysResult {
    if r < 0 {
        Err(last_errno())
    } else {
        Ok(r as u32)
    }
}

/// The timeout of socket `host` for waiting for `events` (SO_RCVTIMEO for POLLIN, SO_SNDTIMEO
/// for POLLOUT), if it is a socket with one set.
fn socket_timeout(host: i32, events: i16) -> Option<Duration> {
    let option = if events == libc::POLLIN {
        libc::SO_RCVTIMEO
    } else {
        libc::SO_SNDTIMEO
    };
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: a valid timeval out-buffer and its length; not a socket is ENOTSOCK.
    let r = unsafe {
        libc::getsockopt(
            host,
            libc::SOL_SOCKET,
            option,
            (&mut tv as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    let t = Duration::new(
        tv.tv_sec.max(0) as u64,
        (tv.tv_usec.clamp(0, 999_999) * 1000) as u32,
    );
    (r == 0 && !t.is_zero()).then_some(t)
}

/// Combine a register pair (low word first) into a 64-bit value.
fn pair(lo: u32, hi: u32) -> i64 {
    ((hi as u64) << 32 | lo as u64) as i64
}

/// The guest `struct utsname`: six 65-byte fields. As under qemu-user, the host's fields but
/// the machine, so the release agrees with `/proc/sys/kernel/osrelease`, which is the host's.
fn encode_utsname() -> Vec<u8> {
    // SAFETY: all-zero is a valid utsname; uname fills it.
    let mut host: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::uname(&mut host) };
    let machine = b"riscv32".map(|b| b as libc::c_char);
    let fields: [&[libc::c_char]; 6] = [
        &host.sysname,
        &host.nodename,
        &host.release,
        &host.version,
        &machine,
        &host.domainname,
    ];
    let mut out = vec![0u8; 6 * 65];
    for (i, field) in fields.iter().enumerate() {
        let text = field.iter().take(64).take_while(|&&c| c != 0);
        for (slot, &c) in out[i * 65..].iter_mut().zip(text) {
            *slot = c as u8;
        }
    }
    out
}

/// A 32-bit `long` field value, saturated.
fn long32(v: i64) -> [u8; 4] {
    (v.clamp(i32::MIN as i64, i32::MAX as i64) as i32).to_le_bytes()
}

impl Process {
    /// Run the syscall the hart asked for (pc at the ecall). On return a0 holds the result and
    /// pc points after the ecall, unless a signal handler was entered (then the hart is at the
    /// handler, and an interrupted SA_RESTART syscall will run again when it returns).
    pub(super) fn syscall(&mut self, hart: &mut Hart) -> Result<(), Stop> {
        let number = hart.x[17];
        if number == nr::RT_SIGRETURN {
            return self.sigreturn(hart);
        }
        let a = [
            hart.x[10], hart.x[11], hart.x[12], hart.x[13], hart.x[14], hart.x[15],
        ];
        // A call that gave way and runs again may find a signal that came meanwhile: then it
        // must not block on the host even if no other thread needs the hart.
        let resumed_with_signal =
            self.threads.resumes_syscall_at(hart.pc) && self.signal_deliverable();
        self.threads.syscall_started();
        self.wait_limit = self.threads.others_need_hart_at();
        let may_wait = self.wait_limit.is_some() || resumed_with_signal;
        let in_turns = match number {
            nr::WRITE | nr::WRITEV => self.write_in_turns(hart.pc, number, a),
            _ => None,
        };
        let result = if let Some(result) = in_turns {
            result
        } else if may_wait && !self.ready_by_wait_limit(hart.pc, number, a) {
            // A blocking call a signal interrupts (its handler runs, then it fails with EINTR
            // or restarts), or one whose socket timeout ran out (EAGAIN, as on Linux).
            if self.signal_deliverable() {
                Err(errno(libc::EINTR))
            } else if self.threads.retry_passed(hart.pc) {
                Err(errno(libc::EAGAIN))
            } else {
                Err(SysError::WouldBlock)
            }
        } else if number == nr::EXECVE || number == nr::EXECVEAT {
            let executed = if number == nr::EXECVE {
                self.sys_execve(hart, a[0], a[1], a[2])
            } else {
                self.sys_execveat(hart, a)
            };
            match executed {
                Ok(()) => return self.deliver_pending(hart),
                Err(e) => Err(e),
            }
        } else {
            self.dispatch(hart, number, a)
        };
        tracing::trace!(number, ?a, ?result, "syscall");
        if !matches!(result, Err(SysError::WouldBlock)) {
            self.threads.end_retry();
        }
        match result {
            Err(SysError::Errno(libc::EINTR))
                if signal::restartable(number) && self.restart_interrupted() =>
            {
                // Leave pc at the ecall and a0 untouched: it runs again after the handler.
            }
            Ok(v) => {
                hart.set_reg(10, v);
                hart.pc = hart.pc.wrapping_add(4);
            }
            Err(SysError::Errno(e)) => {
                hart.set_reg(10, (-e) as u32);
                hart.pc = hart.pc.wrapping_add(4);
            }
            Err(SysError::Stop(stop)) => return Err(stop),
            Err(SysError::WouldBlock) => {
                // Another thread goes first (it may be the writer, or the child's waker);
                // pc stays at the ecall.
                self.threads.give_way(threads::GiveWay::Retry);
            }
        }
        // A futex wait, a yield or a thread's exit: another thread goes on, this one's
        // result already in its registers.
        if let Some(how) = self.threads.take_give_way() {
            self.threads
                .switch_after_syscall(hart, how, &mut self.signals);
        }
        self.deliver_pending(hart)
    }

    fn dispatch(&mut self, hart: &mut Hart, number: u32, a: [u32; 6]) -> SysResult {
        use nr::*;
        match number {
            READ => self.sys_read(hart.pc, a[0], a[1], a[2]),
            SIGNALFD4 => self.sys_signalfd4(a[0], a[1], a[2], a[3]),
            WRITE => {
                let r = self.sys_write(a[0], a[1], a[2]);
                self.check_pipe(r)
            }
            READV => self.sys_rwv(a[0], a[1], a[2], false, None),
            WRITEV => {
                let r = self.sys_rwv(a[0], a[1], a[2], true, None);
                self.check_pipe(r)
            }
            PREAD64 => self.sys_pread64(a[0], a[1], a[2], pair(a[3], a[4])),
            PWRITE64 => {
                let r = self.sys_pwrite64(a[0], a[1], a[2], pair(a[3], a[4]));
                self.check_pipe(r)
            }
            PREADV => self.sys_rwv(a[0], a[1], a[2], false, Some(pair(a[3], a[4]))),
            PREADV2 => self.sys_rwv2(a, false),
            PWRITEV2 => {
                let r = self.sys_rwv2(a, true);
                self.check_pipe(r)
            }
            MKNODAT => self.sys_mknodat(a[0], a[1], a[2], a[3]),
            SEMGET => self.sys_semget(a[0], a[1], a[2]),
            SEMOP => self.sys_semtimedop(a[0], a[1], a[2], 0),
            SEMTIMEDOP_TIME64 => self.sys_semtimedop(a[0], a[1], a[2], a[3]),
            SEMCTL => self.sys_semctl(a[0], a[1], a[2], a[3]),
            MSGGET => self.sys_msgget(a[0], a[1]),
            SHMGET => self.sys_shmget(a[0], a[1], a[2]),
            SHMAT => self.sys_shmat(hart, a[0], a[1], a[2]),
            SHMDT => self.sys_shmdt(hart, a[0]),
            SHMCTL => self.sys_shmctl(a[0], a[1], a[2]),
            MSGSND => self.sys_msgsnd(a[0], a[1], a[2], a[3]),
            MSGRCV => self.sys_msgrcv(a),
            MSGCTL => self.sys_msgctl(a[0], a[1], a[2]),
            MQ_OPEN => self.sys_mq_open(a[0], a[1], a[2], a[3]),
            MQ_UNLINK => self.sys_mq_unlink(a[0]),
            MQ_TIMEDSEND_TIME64 => self.sys_mq_timedsend(a),
            MQ_TIMEDRECEIVE_TIME64 => self.sys_mq_timedreceive(a),
            MQ_GETSETATTR => self.sys_mq_getsetattr(a[0], a[1], a[2]),
            MQ_NOTIFY => self.sys_mq_notify(a[0], a[1]),
            SETXATTR => self.sys_setxattr(XattrTarget::Path, a),
            LSETXATTR => self.sys_setxattr(XattrTarget::Link, a),
            FSETXATTR => self.sys_setxattr(XattrTarget::Fd, a),
            GETXATTR => self.sys_getxattr(XattrTarget::Path, a),
            LGETXATTR => self.sys_getxattr(XattrTarget::Link, a),
            FGETXATTR => self.sys_getxattr(XattrTarget::Fd, a),
            LISTXATTR => self.sys_listxattr(XattrTarget::Path, a),
            LLISTXATTR => self.sys_listxattr(XattrTarget::Link, a),
            FLISTXATTR => self.sys_listxattr(XattrTarget::Fd, a),
            REMOVEXATTR => self.sys_removexattr(XattrTarget::Path, a),
            LREMOVEXATTR => self.sys_removexattr(XattrTarget::Link, a),
            FREMOVEXATTR => self.sys_removexattr(XattrTarget::Fd, a),
            SYNCFS => {
                let host = self.fds.host(a[0])?;
                // SAFETY: no memory effects.
                host_result(unsafe { libc::syncfs(host) } as i64)
            }
            READAHEAD => {
                let host = self.fds.host(a[0])?;
                // SAFETY: no memory effects.
                host_result(
                    unsafe { libc::readahead(host, pair(a[1], a[2]), a[3] as usize) } as i64,
                )
            }
            PWRITEV => {
                let r = self.sys_rwv(a[0], a[1], a[2], true, Some(pair(a[3], a[4])));
                self.check_pipe(r)
            }
            OPENAT => self.sys_openat(a[0], a[1], a[2], a[3]),
            CLOSE => self.sys_close(a[0]),
            LLSEEK => self.sys_llseek(a[0], a[1], a[2], a[3], a[4]),
            STATX => self.sys_statx(a[0], a[1], a[2], a[3], a[4]),
            FSTATAT64 => self.sys_fstatat64(a[0], Some(a[1]), a[2], a[3]),
            FSTAT64 => self.sys_fstatat64(a[0], None, a[1], 0),
            STATFS64 => self.sys_statfs64(Ok(a[0]), a[1], a[2]),
            FSTATFS64 => self.sys_statfs64(Err(a[0]), a[1], a[2]),
            GETDENTS64 => self.sys_getdents64(a[0], a[1], a[2]),
            READLINKAT => self.sys_readlinkat(a[0], a[1], a[2], a[3]),
            FACCESSAT => self.sys_faccessat(a[0], a[1], a[2], 0),
            FACCESSAT2 => self.sys_faccessat(a[0], a[1], a[2], a[3]),
            UNLINKAT => self.sys_unlinkat(a[0], a[1], a[2]),
            MKDIRAT => self.sys_mkdirat(a[0], a[1], a[2]),
            RENAMEAT2 => self.sys_renameat2(a[0], a[1], a[2], a[3], a[4]),
            SYMLINKAT => self.sys_symlinkat(a[0], a[1], a[2]),
            LINKAT => self.sys_linkat(a[0], a[1], a[2], a[3], a[4]),
            FCHMOD => self.sys_fchmod(a[0], a[1]),
            FCHMODAT => self.sys_fchmodat(a[0], a[1], a[2]),
            FCHOWN => self.sys_fchown(a[0], a[1], a[2]),
            FCHOWNAT => self.sys_fchownat(a[0], a[1], a[2], a[3], a[4]),
            TRUNCATE64 => self.sys_truncate64(a[0], pair(a[1], a[2])),
            FTRUNCATE64 => self.sys_ftruncate64(a[0], pair(a[1], a[2])),
            SYNC => {
                // SAFETY: sync has no memory effects.
                unsafe { libc::sync() };
                Ok(0)
            }
            FSYNC => self.sys_fsync(a[0], false),
            FDATASYNC => self.sys_fsync(a[0], true),
            UTIMENSAT_TIME64 => self.sys_utimensat(a[0], a[1], a[2], a[3]),
            PIPE2 => self.sys_pipe2(a[0], a[1]),
            DUP => self.sys_dup(a[0]),
            DUP3 => self.sys_dup3(a[0], a[1], a[2]),
            FCNTL64 => self.sys_fcntl64(a[0], a[1], a[2]),
            IOCTL => self.sys_ioctl(a[0], a[1], a[2]),
            GETCWD => self.sys_getcwd(a[0], a[1]),
            CHDIR => self.sys_chdir(a[0]),
            FCHDIR => self.sys_fchdir(a[0]),
            CHROOT => self.sys_chroot(a[0]),
            MOUNT => self.sys_mount(a[0], a[1], a[2], a[3], a[4]),
            UMOUNT2 => self.sys_umount2(a[0], a[1]),
            PPOLL_TIME64 => self.sys_ppoll(hart.pc, a[0], a[1], a[2], a[3], a[4]),
            FALLOCATE => self.sys_fallocate(a[0], a[1], pair(a[2], a[3]), pair(a[4], a[5])),
            FLOCK => self.sys_flock(a[0], a[1]),
            FADVISE64_64 => self.sys_fadvise(a[0], pair(a[1], a[2]), pair(a[3], a[4]), a[5]),
            SYNC_FILE_RANGE => {
                self.sys_sync_file_range(a[0], pair(a[1], a[2]), pair(a[3], a[4]), a[5])
            }
            MEMFD_CREATE => self.sys_memfd_create(a[0], a[1]),
            INOTIFY_INIT1 => self.sys_inotify_init1(a[0]),
            INOTIFY_ADD_WATCH => self.sys_inotify_watch(a[0], a[1], Some(a[2])),
            INOTIFY_RM_WATCH => self.sys_inotify_watch(a[0], a[1], None),
            CLOSE_RANGE => self.sys_close_range(a[0], a[1], a[2]),
            SENDFILE64 => self.sys_sendfile64(a[0], a[1], a[2], a[3]),
            COPY_FILE_RANGE => self.sys_copy_range(a, false),
            SPLICE => self.sys_copy_range(a, true),
            TEE => self.sys_tee(a[0], a[1], a[2], a[3]),
            PSELECT6_TIME64 => self.sys_pselect6(hart.pc, a[0], [a[1], a[2], a[3]], a[4], a[5]),
            UMASK => {
                // SAFETY: umask has no memory effects.
                Ok(unsafe { libc::umask((a[0] & 0o777) as libc::mode_t) })
            }

            BRK => self.sys_brk(hart, a[0]),
            MMAP2 => self.sys_mmap2(hart, a[0], a[1], a[2], a[3], a[4], a[5]),
            MUNMAP => self.sys_munmap(hart, a[0], a[1]),
            MPROTECT => self.sys_mprotect(hart, a[0], a[1], a[2]),
            MREMAP => self.sys_mremap(hart, a[0], a[1], a[2], a[3], a[4]),
            MSYNC => self.sys_msync(a[0], a[1], a[2]),
            MADVISE => self.sys_madvise(hart, a[0], a[1], a[2]),
            MINCORE => self.sys_mincore(a[0], a[1], a[2]),
            MLOCK | MUNLOCK | MLOCKALL | MUNLOCKALL | MLOCK2 => Ok(0),
            RISCV_FLUSH_ICACHE => {
                self.flush_code = true;
                Ok(0)
            }

            EXIT if self.threads.has_others() => self.sys_exit_thread(),
            EXIT | EXIT_GROUP => Err(SysError::Stop(Stop::Exit((a[0] & 0xff) as i32))),
            SET_TID_ADDRESS => {
                self.threads.set_clear_child_tid(a[0]);
                Ok(self.threads.tid())
            }
            SET_ROBUST_LIST => Ok(0),
            GETPID => Ok(self.pid),
            GETTID => Ok(self.threads.tid()),
            GETPPID => Ok(host_id(libc::getppid) as u32),
            GETUID => Ok(host_id(libc::getuid)),
            GETEUID => Ok(host_id(libc::geteuid)),
            GETGID => Ok(host_id(libc::getgid)),
            GETEGID => Ok(host_id(libc::getegid)),
            GETPGID => self.sys_getpgid_sid(a[0], false),
            GETSID => self.sys_getpgid_sid(a[0], true),
            SETPGID | SETSID => Err(errno(libc::EPERM)),
            GETGROUPS => self.sys_getgroups(a[0], a[1]),
            SETGROUPS => self.sys_setgroups(a[0], a[1]),
            SETUID => self.sys_set_ids(SetIds::Uid, a),
            SETGID => self.sys_set_ids(SetIds::Gid, a),
            SETREUID => self.sys_set_ids(SetIds::ReUid, a),
            SETREGID => self.sys_set_ids(SetIds::ReGid, a),
            SETRESUID => self.sys_set_ids(SetIds::ResUid, a),
            SETRESGID => self.sys_set_ids(SetIds::ResGid, a),
            SETFSUID => self.sys_set_ids(SetIds::FsUid, a),
            SETFSGID => self.sys_set_ids(SetIds::FsGid, a),
            CAPGET => self.sys_capability(a[0], a[1], false),
            CAPSET => self.sys_capability(a[0], a[1], true),
            UNSHARE => self.sys_unshare(a[0]),
            SETNS => self.sys_setns(a[0], a[1]),
            KCMP => self.sys_kcmp(a[0], a[1], a[2], a[3], a[4]),
            // SAFETY: personality has no memory effects.
            PERSONALITY => host_result(unsafe { libc::personality(a[0] as libc::c_ulong) } as i64),
            SCHED_RR_GET_INTERVAL_TIME64 => self.sys_sched_rr_get_interval(a[0], a[1]),
            PIDFD_OPEN => self.sys_pidfd_open(a[0], a[1]),
            PIDFD_SEND_SIGNAL => self.sys_pidfd_send_signal(a),
            GETPRIORITY => self.sys_priority(a[0], a[1], None),
            SETPRIORITY => self.sys_priority(a[0], a[1], Some(a[2])),
            SCHED_GETSCHEDULER => self.sys_sched(a[0], None, 0, true),
            SCHED_GETPARAM => self.sys_sched(a[0], None, a[1], true),
            SCHED_SETSCHEDULER => self.sys_sched(a[0], Some(a[1]), a[2], false),
            SCHED_SETPARAM => self.sys_sched(a[0], None, a[1], false),
            SCHED_GET_PRIORITY_MAX | SCHED_GET_PRIORITY_MIN => {
                // SAFETY: no memory effects.
                let r = unsafe {
                    if number == SCHED_GET_PRIORITY_MAX {
                        libc::sched_get_priority_max(a[0] as i32)
                    } else {
                        libc::sched_get_priority_min(a[0] as i32)
                    }
                };
                host_result(r as i64)
            }
            GETRESUID => self.sys_getres_ids([a[0], a[1], a[2]], false),
            GETRESGID => self.sys_getres_ids([a[0], a[1], a[2]], true),
            GETCPU => {
                // One hart: CPU 0, node 0.
                for va in [a[0], a[1]] {
                    if va != 0 {
                        self.mem.write_u32(va, 0)?;
                    }
                }
                Ok(0)
            }
            WAIT4 => self.sys_wait4(a[0], a[1], a[2], a[3]),
            CLONE => self.sys_clone(
                hart,
                super::proc::CloneArgs {
                    flags: a[0],
                    stack: a[1],
                    parent_tid: a[2],
                    tls: a[3],
                    child_tid: a[4],
                },
            ),
            KILL => self.sys_kill(a[0] as i32, a[1] as i32),
            TKILL => self.sys_tkill(a[0] as i32, a[1] as i32),
            TGKILL if a[0] == self.pid => self.sys_tkill(a[1] as i32, a[2] as i32),
            TGKILL => Err(errno(libc::ESRCH)),
            RT_SIGACTION => self.sys_rt_sigaction(a[0] as i32, a[1], a[2], a[3]),
            RT_SIGPROCMASK => self.sys_rt_sigprocmask(a[0], a[1], a[2], a[3]),
            SIGALTSTACK => self.sys_sigaltstack(hart, a[0], a[1]),
            RT_SIGSUSPEND => self.sys_rt_sigsuspend(a[0], a[1]),
            RT_SIGTIMEDWAIT_TIME64 => self.sys_rt_sigtimedwait(hart.pc, a[0], a[1], a[2], a[3]),
            RT_SIGQUEUEINFO => self.sys_rt_sigqueueinfo(a[0], None, a[1], a[2]),
            RT_TGSIGQUEUEINFO if a[0] == self.pid => {
                self.sys_rt_sigqueueinfo(a[0], Some(a[1]), a[2], a[3])
            }
            RT_TGSIGQUEUEINFO => Err(errno(libc::ESRCH)),
            RT_SIGPENDING => self.sys_rt_sigpending(a[0], a[1]),
            GETITIMER => self.sys_itimer(a[0], 0, a[1]),
            SETITIMER => self.sys_itimer(a[0], a[1], a[2]),
            TIMERFD_CREATE => self.sys_timerfd_create(a[0], a[1]),
            TIMERFD_SETTIME64 => self.sys_timerfd_settime(a[0], a[1], a[2], a[3]),
            TIMERFD_GETTIME64 => self.sys_timerfd_gettime(a[0], a[1]),
            TIMER_CREATE => self.sys_timer_create(a[0], a[1], a[2]),
            TIMER_SETTIME64 => self.sys_timer_settime(a[0], a[1], a[2], a[3]),
            TIMER_GETTIME64 => self.sys_timer_gettime(a[0], a[1]),
            TIMER_GETOVERRUN => self.sys_timer_id_call(a[0], false),
            TIMER_DELETE => self.sys_timer_id_call(a[0], true),
            UNAME => {
                self.mem.write(a[0], &encode_utsname())?;
                Ok(0)
            }
            SYSINFO => self.sys_sysinfo(a[0]),
            PRLIMIT64 => self.sys_prlimit64(a[0], a[1], a[2], a[3]),
            GETRLIMIT => self.sys_getrlimit(a[0], a[1]),
            SETRLIMIT => self.sys_setrlimit(a[0], a[1]),
            GETRUSAGE => self.sys_getrusage(a[0] as i32, a[1]),
            TIMES => self.sys_times(a[0]),
            PRCTL => self.sys_prctl(a[0], [a[1], a[2], a[3], a[4]]),
            SCHED_GETAFFINITY => self.sys_sched_getaffinity(a[1], a[2]),
            SCHED_SETAFFINITY => Ok(0),
            SCHED_YIELD => {
                if self.threads.has_others() {
                    self.threads.give_way(threads::GiveWay::Yield);
                }
                Ok(0)
            }
            GETRANDOM => self.sys_getrandom(a[0], a[1], a[2]),
            CLOCK_GETTIME64 => self.sys_clock_gettime(a[0], a[1], false),
            CLOCK_GETRES_TIME64 => self.sys_clock_gettime(a[0], a[1], true),
            CLOCK_NANOSLEEP_TIME64 => self.sys_clock_nanosleep(a[0], a[1], a[2], a[3]),
            FUTEX_TIME64 => self.sys_futex(a[0], a[1], a[2], a[3], a[4], a[5]),
            MEMBARRIER | RSEQ | RISCV_HWPROBE => Err(errno(libc::ENOSYS)),
            WAITID => self.sys_waitid(a[0], a[1], a[2], a[3], a[4]),
            CLONE3 => {
                tracing::warn!(number, "not supported in user mode");
                Err(errno(libc::ENOSYS))
            }
            n if super::net::is_net(n) => self.sys_net(n, a),
            _ => {
                tracing::warn!(number, pc = hart.pc, "unimplemented syscall");
                Err(errno(libc::ENOSYS))
            }
        }
    }

    fn sys_getpgid_sid(&mut self, pid: u32, sid: bool) -> SysResult {
        if pid != 0 && pid != self.pid {
            return Err(errno(libc::ESRCH));
        }
        // SAFETY: these calls only return a value.
        let r = unsafe {
            if sid {
                libc::getsid(0)
            } else {
                libc::getpgid(0)
            }
        };
        host_result(r as i64)
    }

    /// getitimer (`new` = 0) / setitimer with the rv32 `struct itimerval` (two 32-bit timevals).
    fn sys_itimer(&mut self, which: u32, new: u32, old: u32) -> SysResult {
        if which > 2 {
            return Err(errno(libc::EINVAL));
        }
        let to_host = |w: [u32; 4]| libc::itimerval {
            it_interval: libc::timeval {
                tv_sec: w[0] as i32 as i64,
                tv_usec: w[1] as i32 as i64,
            },
            it_value: libc::timeval {
                tv_sec: w[2] as i32 as i64,
                tv_usec: w[3] as i32 as i64,
            },
        };
        // SAFETY: all-zero is a valid itimerval.
        let mut prev: libc::itimerval = unsafe { std::mem::zeroed() };
        let r = if new != 0 {
            let mut w = [0u32; 4];
            for (i, v) in w.iter_mut().enumerate() {
                *v = self.mem.read_u32(new.wrapping_add(4 * i as u32))?;
            }
            let value = to_host(w);
            // SAFETY: valid pointers to initialised itimervals.
            unsafe { libc::setitimer(which as _, &value, &mut prev) }
        } else {
            // SAFETY: valid out-pointer.
            unsafe { libc::getitimer(which as _, &mut prev) }
        };
        host_result(r as i64)?;
        if old != 0 {
            let mut b = [0u8; 16];
            let t = [
                prev.it_interval.tv_sec,
                prev.it_interval.tv_usec,
                prev.it_value.tv_sec,
                prev.it_value.tv_usec,
            ];
            for (i, v) in t.iter().enumerate() {
                b[4 * i..4 * i + 4].copy_from_slice(&long32(*v));
            }
            self.mem.write(old, &b)?;
        }
        Ok(0)
    }

    fn sys_sysinfo(&mut self, buf: u32) -> SysResult {
        // SAFETY: all-zero is a valid sysinfo.
        let mut s: libc::sysinfo = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer.
        host_result(unsafe { libc::sysinfo(&mut s) } as i64)?;
        // Scale memory figures so they fit 32-bit fields (mem_unit grows instead).
        let unit = s.mem_unit.max(1) as u64;
        let biggest = [s.totalram, s.totalswap]
            .iter()
            .map(|&v| v * unit)
            .max()
            .unwrap_or(0);
        let mut guest_unit = 1u64;
        while biggest / guest_unit > u32::MAX as u64 {
            guest_unit <<= 1;
        }
        let scale = |v: u64| ((v * unit) / guest_unit) as u32;
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&long32(s.uptime));
        for i in 0..3 {
            b[4 + i * 4..8 + i * 4].copy_from_slice(&(s.loads[i] as u32).to_le_bytes());
        }
        let mem = [
            s.totalram,
            s.freeram,
            s.sharedram,
            s.bufferram,
            s.totalswap,
            s.freeswap,
        ];
        for (i, v) in mem.iter().enumerate() {
            b[16 + i * 4..20 + i * 4].copy_from_slice(&scale(*v).to_le_bytes());
        }
        b[40..42].copy_from_slice(&s.procs.to_le_bytes());
        b[44..48].copy_from_slice(&scale(s.totalhigh).to_le_bytes());
        b[48..52].copy_from_slice(&scale(s.freehigh).to_le_bytes());
        b[52..56].copy_from_slice(&(guest_unit as u32).to_le_bytes());
        self.mem.write(buf, &b)?;
        Ok(0)
    }

    /// The current (soft, hard) limit of `resource`: the guest's own setting or the host's.
    fn rlimit(&self, resource: u32) -> Result<(u64, u64), SysError> {
        if let Some(Some(v)) = self.rlimits.get(resource as usize) {
            return Ok(*v);
        }
        if resource >= 16 {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: all-zero is a valid rlimit.
        let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer; resource is checked to be in range.
        host_result(unsafe { libc::getrlimit(resource as _, &mut r) } as i64)?;
        Ok((r.rlim_cur, r.rlim_max))
    }

    /// Record a new limit for the guest only: applying it to the host could starve the VM.
    fn set_rlimit(&mut self, resource: u32, soft: u64, hard: u64) -> SysResult {
        if resource >= 16 || soft > hard {
            return Err(errno(libc::EINVAL));
        }
        let (_, cur_hard) = self.rlimit(resource)?;
        if hard > cur_hard {
            return Err(errno(libc::EPERM));
        }
        self.rlimits[resource as usize] = Some((soft, hard));
        Ok(0)
    }

    fn sys_prlimit64(&mut self, pid: u32, resource: u32, new: u32, old: u32) -> SysResult {
        if pid != 0 && pid != self.pid {
            return Err(errno(libc::EPERM));
        }
        let new = if new != 0 {
            Some((
                self.mem.read_u64(new)?,
                self.mem.read_u64(new.wrapping_add(8))?,
            ))
        } else {
            None
        };
        if old != 0 {
            let (soft, hard) = self.rlimit(resource)?;
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&soft.to_le_bytes());
            b[8..].copy_from_slice(&hard.to_le_bytes());
            self.mem.write(old, &b)?;
        }
        if let Some((soft, hard)) = new {
            self.set_rlimit(resource, soft, hard)?;
        }
        Ok(0)
    }

    fn sys_getrlimit(&mut self, resource: u32, buf: u32) -> SysResult {
        let (soft, hard) = self.rlimit(resource)?;
        let clamp = |v: u64| v.min(u32::MAX as u64) as u32;
        self.mem.write_u32(buf, clamp(soft))?;
        self.mem.write_u32(buf.wrapping_add(4), clamp(hard))?;
        Ok(0)
    }

    fn sys_setrlimit(&mut self, resource: u32, buf: u32) -> SysResult {
        let widen = |v: u32| if v == u32::MAX { u64::MAX } else { v as u64 };
        let soft = widen(self.mem.read_u32(buf)?);
        let hard = widen(self.mem.read_u32(buf.wrapping_add(4))?);
        self.set_rlimit(resource, soft, hard)
    }

    fn sys_getrusage(&mut self, who: i32, buf: u32) -> SysResult {
        // SAFETY: all-zero is a valid rusage.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        let host_who = if who == 1 { libc::RUSAGE_THREAD } else { who };
        // SAFETY: valid out-pointer.
        host_result(unsafe { libc::getrusage(host_who, &mut r) } as i64)?;
        self.mem.write(buf, &rusage_bytes(&r))?;
        Ok(0)
    }

    fn sys_times(&mut self, buf: u32) -> SysResult {
        // SAFETY: all-zero is a valid tms.
        let mut t: libc::tms = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer.
        let ticks = unsafe { libc::times(&mut t) };
        if buf != 0 {
            let mut b = [0u8; 16];
            for (i, v) in [t.tms_utime, t.tms_stime, t.tms_cutime, t.tms_cstime]
                .iter()
                .enumerate()
            {
                b[i * 4..i * 4 + 4].copy_from_slice(&(*v as u32).to_le_bytes());
            }
            self.mem.write(buf, &b)?;
        }
        Ok(ticks as u32)
    }

    /// `prctl(option, arg, ...)`: the thread name, and the process attributes the host keeps.
    fn sys_prctl(&mut self, option: u32, args: [u32; 4]) -> SysResult {
        let arg = args[0];
        const PR_SET_NAME: u32 = 15;
        const PR_GET_NAME: u32 = 16;
        match option {
            PR_SET_NAME => {
                let mut name = [0u8; 16];
                let len = self.mem.accessible_len(arg, 16, perm::R) as usize;
                self.mem.read(arg, &mut name[..len])?;
                if len == 0 {
                    return Err(errno(libc::EFAULT));
                }
                let end = name.iter().position(|&b| b == 0).unwrap_or(15).min(15);
                self.thread_name = name;
                self.thread_name[end..].fill(0);
                // The host thread that runs the guest takes the name too, as under
                // qemu-user, so /proc/self/comm (and task/TID/comm) show it.
                // SAFETY: a NUL-terminated 16-byte buffer.
                unsafe { libc::prctl(libc::PR_SET_NAME, self.thread_name.as_ptr()) };
                Ok(0)
            }
            PR_GET_NAME => {
                self.mem.write(arg, &self.thread_name.clone())?;
                Ok(0)
            }
            // Process attributes the host keeps for rv32vm as for any process (qemu-riscv32
            // passes them on too): death signal, dumpable, keep-caps, seccomp mode, capability
            // bounding set, timer slack, child subreaper, no-new-privs.
            1 | 3 | 4 | 7 | 8 | 21 | 23 | 29 | 30 | 36 | 38 | 39 => {
                // SAFETY: these options take plain values, no pointers.
                let r = unsafe {
                    libc::prctl(
                        option as i32,
                        args[0] as libc::c_ulong,
                        args[1] as libc::c_ulong,
                        args[2] as libc::c_ulong,
                        args[3] as libc::c_ulong,
                    )
                };
                host_result(r as i64)
            }
            // PR_GET_PDEATHSIG and PR_GET_CHILD_SUBREAPER write an int.
            2 | 37 => {
                let mut value: libc::c_int = 0;
                // SAFETY: a valid out-pointer to an int.
                let r = unsafe { libc::prctl(option as i32, &mut value as *mut libc::c_int) };
                host_result(r as i64)?;
                self.mem.write_u32(arg, value as u32)?;
                Ok(0)
            }
            _ => {
                tracing::warn!(option, "unsupported prctl option");
                Err(errno(libc::EINVAL))
            }
        }
    }

    /// One hart, so one CPU: a 4-byte mask with bit 0 set.
    fn sys_sched_getaffinity(&mut self, size: u32, mask: u32) -> SysResult {
        if size < 4 || !size.is_multiple_of(4) {
            return Err(errno(libc::EINVAL));
        }
        self.mem.write_u32(mask, 1)?;
        Ok(4)
    }

    fn sys_getrandom(&mut self, buf: u32, len: u32, flags: u32) -> SysResult {
        const GRND_NONBLOCK: u32 = 1;
        const GRND_RANDOM: u32 = 2;
        const GRND_INSECURE: u32 = 4;
        if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0
            || flags & (GRND_RANDOM | GRND_INSECURE) == GRND_RANDOM | GRND_INSECURE
        {
            return Err(errno(libc::EINVAL));
        }
        let len = len.min(32 << 20);
        let out = self.mem.slice_mut(buf, len)?;
        fill_random(out).map_err(io_errno)?;
        Ok(len)
    }

    fn sys_clock_gettime(&mut self, clock: u32, ts: u32, resolution: bool) -> SysResult {
        if clock as i32 > 11 {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: all-zero is a valid timespec.
        let mut t: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer; unknown clocks fail with EINVAL.
        let r = unsafe {
            if resolution {
                libc::clock_getres(clock as libc::clockid_t, &mut t)
            } else {
                libc::clock_gettime(clock as libc::clockid_t, &mut t)
            }
        };
        host_result(r as i64)?;
        if ts != 0 || !resolution {
            write_timespec(&mut self.mem, ts, &t)?;
        }
        Ok(0)
    }

    /// A sleep is a ppoll with no descriptors, so a signal for the guest interrupts it (and
    /// one caught just before it starts is not missed); on EINTR a relative sleep reports
    /// the time left.
    fn sys_clock_nanosleep(&mut self, clock: u32, flags: u32, req: u32, rem: u32) -> SysResult {
        const TIMER_ABSTIME: u32 = 1;
        let t = read_timespec(&self.mem, req)?;
        let clock = clock as libc::clockid_t;
        let now = |clock| {
            // SAFETY: all-zero is a valid timespec; clock_gettime only writes it.
            let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
            // SAFETY: valid pointer.
            let r = unsafe { libc::clock_gettime(clock, &mut ts) };
            (r == 0).then(|| std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
        };
        // An unknown clock is EINVAL, as clock_nanosleep says.
        let start = now(clock).ok_or(errno(libc::EINVAL))?;
        if !matches!(
            clock,
            libc::CLOCK_REALTIME | libc::CLOCK_MONOTONIC | libc::CLOCK_BOOTTIME | libc::CLOCK_TAI
        ) {
            // Clocks that can be read but not slept on (MONOTONIC_RAW, the COARSE ones, a
            // thread's CPU time) fail as the host fails them, EOPNOTSUPP or EINVAL: asked
            // with an absolute time long past, which returns at once when it works.
            let past = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: valid timespec; no remainder is written for an absolute sleep.
            let r = unsafe {
                libc::clock_nanosleep(clock, TIMER_ABSTIME as i32, &past, std::ptr::null_mut())
            };
            if r != 0 {
                return Err(errno(r));
            }
        }
        let requested = std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32);
        let duration = if flags & TIMER_ABSTIME != 0 {
            requested.saturating_sub(start)
        } else {
            requested
        };
        let deadline = start + duration;
        if self.threads.has_others() {
            // The other threads run meanwhile; a signal for this thread cuts the sleep short.
            let wake_at = threads::deadline_after(duration);
            let rem = if flags & TIMER_ABSTIME == 0 { rem } else { 0 };
            self.threads
                .give_way(threads::GiveWay::Wait(threads::FutexWait::sleep(
                    wake_at, rem,
                )));
            return Ok(0);
        }
        let wait = timespec_of(duration);
        let mask = self.signals.mask;
        let result = self.wait_for_signals(mask, |mask| {
            // SAFETY: no descriptors; `wait` is a valid timespec.
            unsafe { libc::ppoll(std::ptr::null_mut(), 0, &wait, mask) }
        });
        match result {
            Ok(_) => Ok(0),
            Err(SysError::Errno(libc::EINTR)) if rem != 0 && flags & TIMER_ABSTIME == 0 => {
                let left = deadline.saturating_sub(now(clock).unwrap_or(deadline));
                let left = libc::timespec {
                    tv_sec: left.as_secs() as i64,
                    tv_nsec: left.subsec_nanos() as i64,
                };
                write_timespec(&mut self.mem, rem, &left)?;
                Err(errno(libc::EINTR))
            }
            Err(e) => Err(e),
        }
    }

    /// `futex(uaddr, op, val, timeout, uaddr2, val3)` between the process's threads
    /// ([`threads`]). A wait that nothing could end (the only thread, no timeout) returns
    /// EINTR, a spurious wakeup the caller handles.
    fn sys_futex(
        &mut self,
        uaddr: u32,
        op: u32,
        val: u32,
        timeout: u32,
        uaddr2: u32,
        val3: u32,
    ) -> SysResult {
        const FUTEX_WAIT: u32 = 0;
        const FUTEX_WAKE: u32 = 1;
        const FUTEX_REQUEUE: u32 = 3;
        const FUTEX_CMP_REQUEUE: u32 = 4;
        const FUTEX_WAIT_BITSET: u32 = 9;
        const FUTEX_WAKE_BITSET: u32 = 10;
        const FUTEX_CLOCK_REALTIME: u32 = 256;
        const FUTEX_CMD_MASK: u32 = 0x7f;
        let cmd = op & FUTEX_CMD_MASK;
        let bitset = match cmd {
            FUTEX_WAIT_BITSET | FUTEX_WAKE_BITSET if val3 == 0 => return Err(errno(libc::EINVAL)),
            FUTEX_WAIT_BITSET | FUTEX_WAKE_BITSET => val3,
            _ => u32::MAX,
        };
        match cmd {
            FUTEX_WAKE | FUTEX_WAKE_BITSET => Ok(self.threads.wake(uaddr, bitset, val)),
            FUTEX_REQUEUE | FUTEX_CMP_REQUEUE => {
                if cmd == FUTEX_CMP_REQUEUE && self.mem.read_u32(uaddr)? != val3 {
                    return Err(errno(libc::EAGAIN));
                }
                // The fourth argument is a count here, not a timeout.
                let (woken, moved) = self.threads.requeue(uaddr, val, uaddr2, timeout);
                Ok(if cmd == FUTEX_CMP_REQUEUE {
                    woken + moved
                } else {
                    woken
                })
            }
            FUTEX_WAIT | FUTEX_WAIT_BITSET => {
                if self.mem.read_u32(uaddr)? != val {
                    return Err(errno(libc::EAGAIN));
                }
                let deadline = if timeout != 0 {
                    let t = read_timespec(&self.mem, timeout)?;
                    let realtime = op & FUTEX_CLOCK_REALTIME != 0;
                    Some(threads::futex_deadline(&t, cmd == FUTEX_WAIT, realtime))
                } else {
                    None
                };
                if self.threads.has_others() {
                    self.threads
                        .give_way(threads::GiveWay::Wait(threads::FutexWait::futex(
                            uaddr, bitset, deadline,
                        )));
                    return Ok(0);
                }
                match deadline {
                    Some(deadline) => {
                        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                        Err(errno(libc::ETIMEDOUT))
                    }
                    None => {
                        tracing::warn!(uaddr, "futex wait with no other thread to wake it");
                        Err(errno(libc::EINTR))
                    }
                }
            }
            cmd => {
                tracing::warn!(cmd, "unsupported futex operation");
                Err(errno(libc::ENOSYS))
            }
        }
    }

    /// Whether syscall `number` can run now without keeping the host thread waiting past
    /// `wait_limit` (when another thread needs the hart): a read (`read`, `readv`, a socket's
    /// receive or accept) or write (`write`, `writev`, a socket's send) of a descriptor in
    /// blocking mode that becomes ready by then, or a
    /// `wait4`/`waitid` that has a child to report (or an error) by then. `ppoll` and
    /// `pselect6` shorten their own host wait ([`Self::host_poll_timeout`]); other calls run.
    /// A socket's own timeout (SO_RCVTIMEO, SO_SNDTIMEO) for the call at `pc` becomes its
    /// retry deadline ([`threads::Threads::retry_until`]), which ends the wait too.
    fn ready_by_wait_limit(&mut self, pc: u32, number: u32, a: [u32; 6]) -> bool {
        let events = match number {
            nr::READ | nr::READV => libc::POLLIN,
            nr::WRITE | nr::WRITEV => libc::POLLOUT,
            // A message queue call whose own (absolute) timeout has passed runs, and times
            // out on the host at once.
            nr::MQ_TIMEDRECEIVE_TIME64 | nr::MQ_TIMEDSEND_TIME64
                if a[4] != 0 && self.mq_timeout_passed(a[4]) =>
            {
                return true
            }
            nr::MQ_TIMEDRECEIVE_TIME64 => libc::POLLIN,
            nr::MQ_TIMEDSEND_TIME64 => libc::POLLOUT,
            nr::WAIT4 | nr::WAITID => return self.child_to_report_by_wait_limit(number, a),
            n => match super::net::blocking_events(n, a) {
                Some(events) => events,
                None => return true,
            },
        };
        let Ok(entry) = self.fds.entry(a[0]) else {
            return true;
        };
        if matches!(entry.kind, super::fs::FdKind::Signal(_)) {
            // A signalfd read waits, and gives way, as sigtimedwait does.
            return true;
        }
        let host = entry.raw();
        // SAFETY: fcntl(F_GETFL) only reads the descriptor's flags.
        let flags = unsafe { libc::fcntl(host, libc::F_GETFL) };
        if flags < 0 || flags & libc::O_NONBLOCK != 0 {
            return true;
        }
        let mut poll = libc::pollfd {
            fd: host,
            events,
            revents: 0,
        };
        let mut wait = self.wait_left();
        if let Some(own) = socket_timeout(host, events) {
            let deadline = self.threads.retry_deadline(pc, own);
            self.threads.retry_until(pc, deadline);
            wait = wait.min(deadline.saturating_duration_since(Instant::now()));
        }
        let timeout = timespec_of(wait);
        // SAFETY: one valid pollfd and a valid timespec; a signal ends the wait early (EINTR:
        // not ready, and the signal is delivered once the next thread runs).
        unsafe { libc::ppoll(&mut poll, 1, &timeout, std::ptr::null()) > 0 }
    }

    /// How long a call that may wait `guest_left` (`None`: no limit) waits on the host now:
    /// its own time, or, when another thread needs the hart sooner, only until then (`true`:
    /// with nothing ready by then, the call gives way, [`SysError::WouldBlock`]).
    pub(super) fn host_wait(&self, guest_left: Option<Duration>) -> (Option<Duration>, bool) {
        match self.wait_limit {
            Some(_) if guest_left.is_none_or(|g| g > self.wait_left()) => {
                (Some(self.wait_left()), true)
            }
            _ => (guest_left, false),
        }
    }

    /// The host time left until `wait_limit` (zero when it has passed or there is none).
    pub(super) fn wait_left(&self) -> Duration {
        self.wait_limit.map_or(Duration::ZERO, |t| {
            t.saturating_duration_since(Instant::now())
        })
    }

    /// For `wait4(pid, _, options)` or `waitid(idtype, id, _, options)` (`number`, `a`):
    /// whether a child has a state to report (or the call fails at once) before
    /// `wait_limit`. Looks without reaping (`WNOHANG | WNOWAIT`), every millisecond.
    fn child_to_report_by_wait_limit(&self, number: u32, a: [u32; 6]) -> bool {
        let (idtype, id, options) = if number == nr::WAIT4 {
            let options = a[2] as i32;
            if options & libc::WNOHANG != 0 {
                return true;
            }
            let (idtype, id) = match a[0] as i32 {
                -1 => (libc::P_ALL, 0),
                // SAFETY: getpgrp has no memory effects.
                0 => (libc::P_PGID, unsafe { libc::getpgrp() } as libc::id_t),
                pid if pid < 0 => (libc::P_PGID, pid.unsigned_abs()),
                pid => (libc::P_PID, pid as libc::id_t),
            };
            // wait4's WUNTRACED is waitid's WSTOPPED; exits are always reported.
            let options = libc::WEXITED
                | options & (libc::WUNTRACED | libc::WCONTINUED | libc::__WALL | libc::__WCLONE);
            (idtype, id, options)
        } else {
            let options = a[3] as i32;
            if options & libc::WNOHANG != 0 {
                return true;
            }
            (a[0] as libc::idtype_t, a[1] as libc::id_t, options)
        };
        loop {
            // SAFETY: all-zero is a valid siginfo_t; waitid only writes it.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: a valid out-pointer; WNOWAIT leaves the child to the real call.
            let r = unsafe {
                libc::waitid(
                    idtype,
                    id,
                    &mut info,
                    options | libc::WNOHANG | libc::WNOWAIT,
                )
            };
            // SAFETY: waitid filled `info` (si_pid stays 0 when no child had a state).
            if r != 0 || unsafe { info.si_pid() } != 0 {
                return true;
            }
            let left = self.wait_left();
            if left.is_zero() {
                return false;
            }
            std::thread::sleep(left.min(Duration::from_millis(1)));
        }
    }

    /// `exit` of one thread while others go on: its `clear_child_tid` word becomes 0 and one
    /// futex waiter there wakes (`pthread_join`), then the next thread runs.
    fn sys_exit_thread(&mut self) -> SysResult {
        let clear = self.threads.clear_child_tid();
        if clear != 0 && self.mem.write_u32(clear, 0).is_ok() {
            self.threads.wake(clear, u32::MAX, 1);
        }
        self.threads.give_way(threads::GiveWay::Exit);
        Ok(0)
    }
}

/// The rv32 kernel `struct rusage`: two {long sec; long usec} then 14 longs (72 bytes).
pub fn rusage_bytes(r: &libc::rusage) -> Vec<u8> {
    let fields = [
        r.ru_utime.tv_sec,
        r.ru_utime.tv_usec,
        r.ru_stime.tv_sec,
        r.ru_stime.tv_usec,
        r.ru_maxrss,
        r.ru_ixrss,
        r.ru_idrss,
        r.ru_isrss,
        r.ru_minflt,
        r.ru_majflt,
        r.ru_nswap,
        r.ru_inblock,
        r.ru_oublock,
        r.ru_msgsnd,
        r.ru_msgrcv,
        r.ru_nsignals,
        r.ru_nvcsw,
        r.ru_nivcsw,
    ];
    fields.iter().flat_map(|&f| long32(f)).collect()
}

/// Call one of the host's id getters (getuid, getppid, ...).
fn host_id<T>(getter: unsafe extern "C" fn() -> T) -> T {
    // SAFETY: the id getters take no arguments, cannot fail and have no memory effects.
    unsafe { getter() }
}

/// The host's (uid, euid, gid, egid), for the auxiliary vector.
pub fn host_ids() -> [u32; 4] {
    [
        host_id(libc::getuid),
        host_id(libc::geteuid),
        host_id(libc::getgid),
        host_id(libc::getegid),
    ]
}

/// Read a guest `struct __kernel_timespec` {i64 sec; i64 nsec}.
pub(super) fn read_timespec(
    mem: &super::mem::GuestMemory,
    va: u32,
) -> Result<libc::timespec, SysError> {
    let sec = mem.read_u64(va)? as i64;
    // The kernel ignores the upper half of tv_nsec for 32-bit tasks.
    let nsec = mem.read_u32(va.wrapping_add(8))? as i32 as i64;
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(errno(libc::EINVAL));
    }
    Ok(libc::timespec {
        tv_sec: sec,
        tv_nsec: nsec,
    })
}

/// A host timespec of `d` (saturating).
pub(super) fn timespec_of(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: d.subsec_nanos() as i64,
    }
}

/// Write a guest `struct __kernel_timespec`.
pub(super) fn write_timespec(
    mem: &mut super::mem::GuestMemory,
    va: u32,
    t: &libc::timespec,
) -> Result<(), SysError> {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&t.tv_sec.to_le_bytes());
    b[8..].copy_from_slice(&t.tv_nsec.to_le_bytes());
    mem.write(va, &b)?;
    Ok(())
}

/// Fill `buf` from the host's randomness source.
pub fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: writes at most `buf.len() - done` bytes into `buf[done..]`.
        let n = unsafe { libc::getrandom(buf[done..].as_mut_ptr().cast(), buf.len() - done, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        done += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_pairs_are_low_word_first() {
        assert_eq!(pair(5, 1), 0x1_0000_0005);
        assert_eq!(pair(0xffff_ffff, 0xffff_ffff), -1);
    }

    #[test]
    fn utsname_fields() {
        let u = encode_utsname();
        assert_eq!(u.len(), 390);
        assert_eq!(&u[..6], b"Linux\0");
        assert_eq!(&u[4 * 65..4 * 65 + 8], b"riscv32\0");
        // The release is the host's, as /proc/sys/kernel/osrelease (passed through) says.
        let release = std::fs::read("/proc/sys/kernel/osrelease").unwrap();
        let release = release.strip_suffix(b"\n").unwrap_or(&release);
        assert_eq!(
            &u[2 * 65..2 * 65 + release.len() + 1],
            [release, b"\0"].concat()
        );
    }
}
