//! Process creation, replacement and reaping: fork-style `clone` forks the host process (the
//! whole VM, guest memory included, as qemu-user does); `execve` of a RISC-V program (or a
//! `#!` script whose interpreter is one) replaces the guest image in place, as the kernel does,
//! and `execve` of anything else (a host binary, a host script) is the host's execve;
//! `wait4`/`waitid` wait for the host children, whose exit statuses are the guest children's.
//! Threads (CLONE_VM|CLONE_THREAD) are green threads of this process ([`super::threads`]);
//! other uses of CLONE_VM without CLONE_VFORK are not supported.

use std::ffi::{CStr, CString, OsStr};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::cpu::Hart;

use super::syscall::{errno, host_result, io_errno, last_errno, rusage_bytes, SysError, SysResult};
use super::{load_program, name_of, Process, UserError};
use crate::hostfile::InputError;

/// Longest single argv/envp string (MAX_ARG_STRLEN).
const MAX_ARG_STRLEN: usize = 128 * 1024;
/// Most argv + envp entries we accept (the stack limit applies first in practice).
const MAX_ARG_STRINGS: usize = 1 << 17;
/// Bytes of a `#!` line the kernel looks at (BINPRM_BUF_SIZE).
const SHEBANG_MAX: usize = 256;

const CLONE_VM: u32 = 0x100;
const CLONE_FS: u32 = 0x200;
const CLONE_FILES: u32 = 0x400;
const CLONE_SIGHAND: u32 = 0x800;
const CLONE_VFORK: u32 = 0x4000;
const CLONE_THREAD: u32 = 0x1_0000;
const CLONE_SETTLS: u32 = 0x8_0000;
const CLONE_PARENT_SETTID: u32 = 0x10_0000;
const CLONE_CHILD_CLEARTID: u32 = 0x20_0000;
const CLONE_CHILD_SETTID: u32 = 0x100_0000;
const CLONE_NEWUSER: u32 = 0x1000_0000;
/// The low byte of the flags: the signal sent to the parent when the child exits.
const CSIGNAL: u32 = 0xff;
const SIGCHLD: u32 = 17;

/// The arguments of `clone(flags, stack, parent_tid*, tls, child_tid*)` (riscv order).
#[derive(Clone, Copy, Debug)]
pub(super) struct CloneArgs {
    pub flags: u32,
    pub stack: u32,
    pub parent_tid: u32,
    pub tls: u32,
    pub child_tid: u32,
}

impl Process {
    /// The host process a scheduling or priority call about guest process/thread `id` is
    /// about: 0 (this process) for the guest's own pid and thread ids, which the host does
    /// not know; any other id is a host process (guest children are host processes).
    fn sched_target(&self, id: u32) -> libc::pid_t {
        if id == self.pid || self.threads.has(id) {
            0
        } else {
            id as libc::pid_t
        }
    }

    /// The host pid a call that names process `id` means: rv32vm's own for the guest's pid
    /// and thread ids, any other id as it is (guest children are host processes).
    fn host_pid(&self, id: u32) -> libc::pid_t {
        match self.sched_target(id) {
            // SAFETY: getpid has no memory effects.
            0 => unsafe { libc::getpid() },
            pid => pid,
        }
    }

    /// `unshare(flags)`, done by the host for rv32vm's process, as qemu-user does: new
    /// namespaces, and the process's own file table, cwd and root (which rv32vm uses on the
    /// guest's behalf). Sharing the address space, signal handlers or thread group is
    /// already undone for a process of one thread (Linux refuses it with other threads, and
    /// so does rv32vm); the host is not asked, since it would refuse them for rv32vm's own
    /// threads. Green threads share one host thread, so a process with other threads
    /// cannot unshare files or fs for one of them: EINVAL. A new user namespace is refused
    /// (EINVAL), as the host refuses it to a process with threads, which rv32vm is whenever
    /// tier 2 runs (and qemu-user always): the same answer in every tier.
    pub(super) fn sys_unshare(&mut self, flags: u32) -> SysResult {
        let process_wide = CLONE_VM | CLONE_SIGHAND | CLONE_THREAD;
        let one_thread_only =
            self.threads.has_others() && flags & (process_wide | CLONE_FS | CLONE_FILES) != 0;
        if one_thread_only || flags & CLONE_NEWUSER != 0 {
            return Err(errno(libc::EINVAL));
        }
        let host_flags = flags & !(CLONE_VM | CLONE_SIGHAND | CLONE_THREAD);
        // SAFETY: no memory effects.
        host_result(unsafe { libc::unshare(host_flags as libc::c_int) } as i64)
    }

    /// `setns(fd, nstype)`: the host joins the namespace open as the guest's `fd`.
    pub(super) fn sys_setns(&mut self, fd: u32, nstype: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        // SAFETY: no memory effects.
        host_result(unsafe { libc::setns(host, nstype as libc::c_int) } as i64)
    }

    /// `kcmp(pid1, pid2, type, idx1, idx2)`: whether two processes share a kernel resource,
    /// asked of the host. For `KCMP_FILE` the fds are translated through this process's
    /// table, which is right for this process and for the fds a forked relative shares with
    /// it from before the fork (the usual case), not for fds another process opened on its
    /// own. `KCMP_EPOLL_TFD` is refused (EINVAL), as under qemu-user: the epoll's target
    /// numbers are host fds the guest never saw.
    pub(super) fn sys_kcmp(
        &mut self,
        pid1: u32,
        pid2: u32,
        kind: u32,
        idx1: u32,
        idx2: u32,
    ) -> SysResult {
        const KCMP_FILE: u32 = 0;
        const KCMP_EPOLL_TFD: u32 = 7;
        let (mut idx1, mut idx2) = (idx1 as libc::c_long, idx2 as libc::c_long);
        match kind {
            KCMP_FILE => {
                idx1 = self.fds.host(idx1 as u32)? as libc::c_long;
                idx2 = self.fds.host(idx2 as u32)? as libc::c_long;
            }
            KCMP_EPOLL_TFD => return Err(errno(libc::EINVAL)),
            _ => {}
        }
        let (pid1, pid2) = (self.host_pid(pid1), self.host_pid(pid2));
        // SAFETY: with KCMP_EPOLL_TFD refused, no argument is a pointer.
        host_result(unsafe { libc::syscall(libc::SYS_kcmp, pid1, pid2, kind, idx1, idx2) } as i64)
    }

    /// `getpriority(which, who)` (the kernel's value, 40 - nice, which libc converts),
    /// `setpriority(which, who, prio)`.
    pub(super) fn sys_priority(&mut self, which: u32, who: u32, set: Option<u32>) -> SysResult {
        let who = if which == libc::PRIO_PROCESS {
            self.sched_target(who) as u32
        } else {
            who
        };
        // SAFETY: the raw calls have no memory effects.
        let r = unsafe {
            match set {
                None => libc::syscall(libc::SYS_getpriority, which, who),
                Some(prio) => libc::syscall(libc::SYS_setpriority, which, who, prio as i32),
            }
        };
        host_result(r)
    }

    /// `sched_getscheduler(pid)`, `sched_getparam(pid, param*)`, `sched_setscheduler(pid,
    /// policy, param*)`, `sched_setparam(pid, param*)` (`struct sched_param` is one int).
    pub(super) fn sys_sched(
        &mut self,
        pid: u32,
        policy: Option<u32>,
        param: u32,
        get: bool,
    ) -> SysResult {
        let pid = self.sched_target(pid);
        if pid < 0 {
            return Err(errno(libc::EINVAL));
        }
        if get && param == 0 {
            // SAFETY: no memory effects.
            return host_result(unsafe { libc::sched_getscheduler(pid) } as i64);
        }
        if get {
            let mut p = libc::sched_param { sched_priority: 0 };
            // SAFETY: a valid out-pointer.
            host_result(unsafe { libc::sched_getparam(pid, &mut p) } as i64)?;
            self.mem.write_u32(param, p.sched_priority as u32)?;
            return Ok(0);
        }
        let p = libc::sched_param {
            sched_priority: self.mem.read_u32(param)? as i32,
        };
        // SAFETY: a valid pointer to a sched_param.
        let r = unsafe {
            match policy {
                Some(policy) => libc::sched_setscheduler(pid, policy as i32, &p),
                None => libc::sched_setparam(pid, &p),
            }
        };
        host_result(r as i64)
    }

    /// `getresuid(r*, e*, s*)` / `getresgid` (`gid`): the host's ids.
    pub(super) fn sys_getres_ids(&mut self, out: [u32; 3], gid: bool) -> SysResult {
        let mut ids = [0u32; 3];
        let [r, e, s] = &mut ids;
        // SAFETY: three valid out-pointers.
        let rc = unsafe {
            if gid {
                libc::getresgid(r, e, s)
            } else {
                libc::getresuid(r, e, s)
            }
        };
        host_result(rc as i64)?;
        for (va, id) in out.into_iter().zip(ids) {
            self.mem.write_u32(va, id)?;
        }
        Ok(0)
    }

    /// `clone(flags, stack, parent_tid*, tls, child_tid*)`.
    ///
    /// A CLONE_VM|CLONE_VFORK child (posix_spawn, vfork) gets a copy of memory instead of
    /// sharing it; that is indistinguishable as long as it only execs or exits, which is all
    /// vfork allows.
    pub(super) fn sys_clone(&mut self, hart: &mut Hart, args: CloneArgs) -> SysResult {
        let CloneArgs {
            flags,
            stack,
            parent_tid,
            tls,
            child_tid,
        } = args;
        let exit_signal = flags & CSIGNAL;
        if flags & CLONE_THREAD != 0 && flags & CLONE_VM != 0 {
            return self.clone_thread(hart, args);
        }
        if flags & CLONE_THREAD != 0
            || (flags & CLONE_VM != 0 && flags & CLONE_VFORK == 0)
            || (exit_signal != 0 && exit_signal != SIGCHLD)
        {
            tracing::warn!(
                flags,
                "clone: sharing memory without a thread is not supported"
            );
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
            self.forked = true;
            // Only the thread that forked goes on in the child, without the POSIX timers.
            self.threads.keep_only_running(self.pid);
            self.posix_timers.clear();
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

    /// A new thread of this process ([`super::threads`]): it shares everything and starts
    /// where `clone` returns, with 0, on `stack`.
    fn clone_thread(&mut self, hart: &mut Hart, args: CloneArgs) -> SysResult {
        let tls = (args.flags & CLONE_SETTLS != 0).then_some(args.tls);
        let clear = if args.flags & CLONE_CHILD_CLEARTID != 0 {
            args.child_tid
        } else {
            0
        };
        let tid = self
            .threads
            .spawn(hart, args.stack, tls, clear, self.signals.mask);
        if args.flags & CLONE_CHILD_SETTID != 0 {
            self.mem.write_u32(args.child_tid, tid)?;
        }
        if args.flags & CLONE_PARENT_SETTID != 0 {
            self.mem.write_u32(args.parent_tid, tid)?;
        }
        Ok(tid)
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

    /// Read a NULL-terminated guest array of string pointers (argv, envp); NULL means empty.
    fn read_string_array(&self, va: u32) -> Result<Vec<Vec<u8>>, SysError> {
        let mut out = Vec::new();
        if va == 0 {
            return Ok(out);
        }
        loop {
            let ptr = self.mem.read_u32(va.wrapping_add(4 * out.len() as u32))?;
            if ptr == 0 {
                return Ok(out);
            }
            if out.len() >= MAX_ARG_STRINGS {
                return Err(errno(libc::E2BIG));
            }
            let s = self
                .mem
                .read_cstr(ptr, MAX_ARG_STRLEN)?
                .ok_or(errno(libc::E2BIG))?;
            out.push(s);
        }
    }

    /// `execve(path, argv, envp)`. An RV32 program (or a `#!` script whose interpreter is
    /// one) replaces the guest image in place: the hart starts the new program (and decoded
    /// code must be flushed). Anything else (a host binary, a script for a host interpreter)
    /// is handed to the host's execve, as qemu-user does: rv32vm is replaced by it, with the
    /// guest's fds, ignored signals and signal mask. On failure nothing changed.
    pub(super) fn sys_execve(
        &mut self,
        hart: &mut Hart,
        path: u32,
        argv: u32,
        envp: u32,
    ) -> Result<(), SysError> {
        let given = self.exec_name(path)?;
        let host_path = self.guest_path(path)?;
        self.execve_host_path(hart, host_path, given, argv, envp)
    }

    /// `execveat(dirfd, path, argv, envp, flags)`: `execve` of `path` relative to `dirfd`, or
    /// of the file open as `dirfd` itself with AT_EMPTY_PATH and an empty path (`fexecve`).
    /// The file is reached through the host's `/proc/self/fd`, as the new program's name
    /// (`/dev/fd/N`, Linux's) says.
    pub(super) fn sys_execveat(&mut self, hart: &mut Hart, a: [u32; 6]) -> Result<(), SysError> {
        const AT_SYMLINK_NOFOLLOW: u32 = 0x100;
        const AT_EMPTY_PATH: u32 = 0x1000;
        let [dirfd, path, argv, envp, flags, _] = a;
        if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
            return Err(errno(libc::EINVAL));
        }
        let name = self.exec_name(path)?;
        let relative = name.first() != Some(&b'/') && dirfd as i32 != libc::AT_FDCWD;
        let (host_path, given) = if name.is_empty() {
            if flags & AT_EMPTY_PATH == 0 {
                return Err(errno(libc::ENOENT));
            }
            let host = self.fds.host(dirfd)?;
            (
                format!("/proc/self/fd/{host}").into_bytes(),
                format!("/dev/fd/{dirfd}").into_bytes(),
            )
        } else if relative {
            let host = self.fds.host(dirfd)?;
            let mut host_path = format!("/proc/self/fd/{host}/").into_bytes();
            host_path.extend_from_slice(&name);
            let mut given = format!("/dev/fd/{dirfd}/").into_bytes();
            given.extend_from_slice(&name);
            (host_path, given)
        } else {
            (self.guest_path(path)?.into_bytes(), name.clone())
        };
        let host_path = CString::new(host_path).map_err(|_| errno(libc::EINVAL))?;
        if flags & AT_SYMLINK_NOFOLLOW != 0 && !name.is_empty() {
            // SAFETY: all-zero is a valid stat; lstat only writes it.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: a NUL-terminated path and a valid out-pointer.
            let linked = unsafe { libc::lstat(host_path.as_ptr(), &mut st) } == 0
                && st.st_mode & libc::S_IFMT == libc::S_IFLNK;
            if linked {
                return Err(errno(libc::ELOOP));
            }
        }
        self.execve_host_path(hart, host_path, given, argv, envp)
    }

    /// The path an `execve` or `execveat` names, as the guest gave it.
    fn exec_name(&self, path: u32) -> Result<Vec<u8>, SysError> {
        self.mem
            .read_cstr(path, 4095)?
            .ok_or(errno(libc::ENAMETOOLONG))
    }

    /// `execve` of the host file `host_path`, which the guest named `given`.
    fn execve_host_path(
        &mut self,
        hart: &mut Hart,
        host_path: CString,
        given: Vec<u8>,
        argv: u32,
        envp: u32,
    ) -> Result<(), SysError> {
        let args = self.read_string_array(argv)?;
        let env = self.read_string_array(envp)?;
        let file = PathBuf::from(OsStr::from_bytes(host_path.as_bytes()));
        let head = read_executable_head(&file)?;
        if is_rv32_elf(&head) {
            return self.exec_in_place(hart, file, args, env, given);
        }
        if head.starts_with(b"#!") {
            let (interp, arg) = parse_shebang(&head).ok_or(errno(libc::ENOEXEC))?;
            let interpreter = PathBuf::from(OsStr::from_bytes(&interp));
            let interp_head = read_executable_head(&interpreter)?;
            if is_rv32_elf(&interp_head) {
                let mut script_args = vec![interp];
                script_args.extend(arg);
                script_args.push(given.clone());
                script_args.extend(args.into_iter().skip(1));
                return self.exec_in_place(hart, interpreter, script_args, env, given);
            }
        }
        Err(self.exec_on_host(&host_path, &args, &env))
    }

    /// Load the RV32 program `program` in place of the current image.
    fn exec_in_place(
        &mut self,
        hart: &mut Hart,
        program: PathBuf,
        args: Vec<Vec<u8>>,
        env: Vec<Vec<u8>>,
        given: Vec<u8>,
    ) -> Result<(), SysError> {
        let bytes = super::map_program(&program).map_err(|e| {
            tracing::warn!("execve: {e}");
            match e {
                InputError::Io { source, .. } => errno(source.raw_os_error().unwrap_or(libc::EIO)),
                InputError::NotRegular { .. } => errno(libc::EACCES),
                InputError::TooLarge { .. } => errno(libc::ENOMEM),
                InputError::Empty { .. } => errno(libc::ENOEXEC),
            }
        })?;
        let image = load_program(&program, &bytes, &args, &env, &given).map_err(|e| {
            tracing::warn!("execve: {e}");
            match e {
                UserError::ArgumentsTooLong => errno(libc::E2BIG),
                UserError::Reserve(_) => errno(libc::ENOMEM),
                UserError::Read(_) | UserError::Gdb(_) => errno(libc::EIO),
                UserError::Elf { .. } | UserError::Layout { .. } => errno(libc::ENOEXEC),
            }
        })?;

        // The point of no return: the old image goes away.
        image.start(hart);
        self.start_stack = image.sp;
        self.saved_auxv = image.auxv;
        self.brk = super::mman::Brk {
            start: image.brk,
            current: image.brk,
        };
        self.mem = image.mem;
        super::host_fault::watch(self.mem.host_range());
        self.user_level_code = image.user_level_code;
        self.fds.close_on_exec();
        self.delete_timers_for_exec();
        self.reset_signals_for_exec();
        self.exe_path = std::fs::canonicalize(&program).unwrap_or(program);
        self.args = args;
        self.thread_name = name_of(Path::new(OsStr::from_bytes(&given)));
        // The other threads end; the one that called execve becomes the process's first.
        self.threads.keep_only_running(self.pid);
        self.flush_code = true;
        Ok(())
    }

    /// Replace rv32vm by the host program `path` (a host binary or script): the guest's open
    /// fds are placed at their guest numbers (the others closed), the signals it ignores stay
    /// ignored and its mask stays blocked, as across a real execve. Returns only on failure,
    /// with everything as it was.
    fn exec_on_host(&mut self, path: &CStr, args: &[Vec<u8>], env: &[Vec<u8>]) -> SysError {
        let to_cstrings = |list: &[Vec<u8>]| -> Option<Vec<CString>> {
            list.iter().map(|s| CString::new(s.clone()).ok()).collect()
        };
        // read_cstr stops at the first NUL, so the strings have none inside.
        let (Some(args), Some(env)) = (to_cstrings(args), to_cstrings(env)) else {
            return errno(libc::EINVAL);
        };
        let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut envp: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
        envp.push(std::ptr::null());

        tracing::debug!(path = ?path, "execve of a host program");
        let fds = match self.fds.place_for_host_exec() {
            Ok(layout) => layout,
            Err(e) => return e,
        };
        let signals = self.signals.prepare_host_exec();
        // SAFETY: `path` and every argv/envp string are NUL-terminated and outlive the call;
        // both arrays end with NULL. On success this process image is replaced; on failure
        // execve changes nothing.
        unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        let error = last_errno();
        signals.restore();
        fds.restore();
        error
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

/// The first bytes (enough for an ELF header and a `#!` line) of a file the guest wants to
/// execute, with the kernel's checks: it must be a regular file the caller may execute.
fn read_executable_head(path: &Path) -> Result<Vec<u8>, SysError> {
    let meta = std::fs::metadata(path).map_err(io_errno)?;
    if !meta.is_file() {
        return Err(errno(libc::EACCES));
    }
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| errno(libc::ENOENT))?;
    // SAFETY: NUL-terminated path; access has no memory effects.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err(last_errno());
    }
    let mut head = Vec::with_capacity(SHEBANG_MAX);
    std::fs::File::open(path)
        .and_then(|f| f.take(SHEBANG_MAX as u64).read_to_end(&mut head))
        .map_err(io_errno)?;
    Ok(head)
}

/// Whether `head` starts an ELF file for 32-bit little-endian RISC-V (what runs in place).
fn is_rv32_elf(head: &[u8]) -> bool {
    const EM_RISCV: u16 = 243;
    head.len() >= 20
        && head[..4] == *b"\x7fELF"
        && head[4] == 1 // ELFCLASS32
        && head[5] == 1 // little-endian
        && u16::from_le_bytes([head[18], head[19]]) == EM_RISCV
}

/// The interpreter and optional single argument of a `#!` line (None if malformed).
fn parse_shebang(bytes: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let head = &bytes[2..bytes.len().min(SHEBANG_MAX)];
    let line = match head.iter().position(|&b| b == b'\n') {
        Some(end) => &head[..end],
        None if bytes.len() <= SHEBANG_MAX => head,
        None => return None,
    };
    let is_space = |b: &u8| *b == b' ' || *b == b'\t' || *b == b'\r';
    let start = line.iter().position(|b| !is_space(b))?;
    let line = &line[start..];
    let end = line.iter().position(is_space).unwrap_or(line.len());
    let interp = line[..end].to_vec();
    let rest = &line[end..];
    let arg = rest.iter().position(|b| !is_space(b)).map(|s| {
        let r = &rest[s..];
        let e = r.iter().rposition(|b| !is_space(b)).map_or(0, |e| e + 1);
        r[..e].to_vec()
    });
    Some((interp, arg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebang_lines() {
        assert_eq!(
            parse_shebang(b"#!/bin/sh\necho"),
            Some((b"/bin/sh".to_vec(), None))
        );
        assert_eq!(
            parse_shebang(b"#! /usr/bin/env  python3 -u \r\n"),
            Some((b"/usr/bin/env".to_vec(), Some(b"python3 -u".to_vec())))
        );
        assert_eq!(parse_shebang(b"#!\n"), None);
        let long = [b"#!/".as_slice(), &[b'x'; 300]].concat();
        assert_eq!(parse_shebang(&long), None);
    }
}
