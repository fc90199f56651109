//! System V semaphores and message queues as the host's (the ids are the host kernel's, so a
//! forked child or another process shares them by key): `semget`, `semop`/`semtimedop`,
//! `semctl` (all but IPC_INFO/SEM_INFO; IPC_STAT and IPC_SET with the 32-bit `semid64_ds`
//! translated), `msgget`, `msgsnd`, `msgrcv` (the 32-bit `long mtype` in front of the message
//! translated) and `msgctl` (IPC_RMID, IPC_STAT and IPC_SET with `msqid64_ds` translated). In a threaded process a `semop` or message call that would block gives way to
//! the other threads and runs again on this thread's next turn. Shared memory is in
//! [`super::sysv_shm`].

use super::syscall::{errno, host_result, read_timespec, SysError, SysResult};
use super::Process;

/// Longest message (the kernel's default MSGMAX is 8 KiB; its hard limit is INT_MAX).
const MSG_MAX: u32 = 1 << 20;
/// Most operations in one `semop` (the kernel's SEMOPM is 500).
const SEMOPS_MAX: u32 = 4096;

/// `semctl` commands this passes on.
pub(super) const IPC_RMID: i32 = 0;
pub(super) const IPC_SET: i32 = 1;
pub(super) const IPC_STAT: i32 = 2;
const GETPID: i32 = 11;
const GETVAL: i32 = 12;
const GETALL: i32 = 13;
const GETNCNT: i32 = 14;
const GETZCNT: i32 = 15;
const SETVAL: i32 = 16;
const SETALL: i32 = 17;
/// The flag musl adds to `semctl`/`msgctl` commands for the 64-bit structures.
pub(super) const IPC_64: i32 = 0x100;

/// A 32-bit generic kernel's `struct ipc64_perm`, as words: key, uid, gid, cuid, cgid, mode,
/// seq (u16, padded) and two unused words. It starts every `*id64_ds`.
pub(super) fn ipc64_perm_words(perm: &libc::ipc_perm) -> [u32; 9] {
    [
        perm.__key as u32,
        perm.uid,
        perm.gid,
        perm.cuid,
        perm.cgid,
        perm.mode as u32,
        perm.__seq as u32,
        0,
        0,
    ]
}

/// A time as the low and high words the 32-bit `*id64_ds` structures keep.
pub(super) fn time_words(t: libc::time_t) -> [u32; 2] {
    [t as u32, (t >> 32) as u32]
}

/// `words` as the little-endian bytes of a guest structure.
pub(super) fn word_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// What IPC_SET takes from a guest `ipc64_perm` (at the start of `raw`): uid, gid and mode.
pub(super) fn set_perm_from(raw: &[u8], perm: &mut libc::ipc_perm) {
    let word = |at: usize| u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]);
    perm.uid = word(4);
    perm.gid = word(8);
    perm.mode = word(20) as u16;
}

/// Size of a 32-bit `struct semid64_ds`: `ipc64_perm`, two split times, `sem_nsems`, two
/// unused words.
const SEMID64_DS_SIZE: usize = 64;
/// Size of a 32-bit `struct msqid64_ds`: `ipc64_perm`, three split times, `msg_cbytes`,
/// `msg_qnum`, `msg_qbytes`, the two pids, two unused words.
const MSQID64_DS_SIZE: usize = 88;

impl Process {
    /// Whether a call that would block should rather give way (another thread needs the
    /// hart): then it runs with IPC_NOWAIT and EAGAIN/ENOMSG means "not yet".
    fn ipc_gives_way(&self, flags: i32) -> bool {
        self.wait_limit.is_some() && flags & libc::IPC_NOWAIT == 0
    }

    /// `semget(key, nsems, flags)`.
    pub(super) fn sys_semget(&mut self, key: u32, nsems: u32, flags: u32) -> SysResult {
        // SAFETY: no memory effects.
        host_result(unsafe { libc::semget(key as i32, nsems as i32, flags as i32) } as i64)
    }

    /// `semtimedop(id, sops*, nsops, timeout*)` (`semop` when `timeout` is 0).
    pub(super) fn sys_semtimedop(&mut self, id: u32, sops: u32, n: u32, timeout: u32) -> SysResult {
        if n == 0 || n > SEMOPS_MAX {
            return Err(errno(if n == 0 { libc::EINVAL } else { libc::E2BIG }));
        }
        // struct sembuf {unsigned short num; short op; short flg}: the same on both sides.
        let mut raw = vec![0u8; n as usize * 6];
        self.mem.read(sops, &mut raw)?;
        let mut ops: Vec<libc::sembuf> = raw
            .chunks_exact(6)
            .map(|c| libc::sembuf {
                sem_num: u16::from_le_bytes([c[0], c[1]]),
                sem_op: i16::from_le_bytes([c[2], c[3]]),
                sem_flg: i16::from_le_bytes([c[4], c[5]]),
            })
            .collect();
        let t = if timeout != 0 {
            Some(read_timespec(&self.mem, timeout)?)
        } else {
            None
        };
        let give_way = t.is_none() && ops.iter().all(|o| self.ipc_gives_way(o.sem_flg as i32));
        if give_way {
            for o in &mut ops {
                o.sem_flg |= libc::IPC_NOWAIT as i16;
            }
        }
        let t_ptr = t
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `n` valid sembufs and a valid timespec or NULL.
        let r = unsafe {
            libc::syscall(
                libc::SYS_semtimedop,
                id as i32,
                ops.as_mut_ptr(),
                ops.len(),
                t_ptr,
            )
        };
        match host_result(r) {
            Err(SysError::Errno(libc::EAGAIN)) if give_way => Err(SysError::WouldBlock),
            other => other,
        }
    }

    /// `semctl(id, num, cmd, arg)` for the commands whose argument is a value or an array of
    /// `unsigned short`.
    pub(super) fn sys_semctl(&mut self, id: u32, num: u32, cmd: u32, arg: u32) -> SysResult {
        let cmd = cmd as i32 & !IPC_64;
        let (id, num) = (id as i32, num as i32);
        match cmd {
            IPC_RMID | GETPID | GETVAL | GETNCNT | GETZCNT => {
                // SAFETY: these commands take no argument.
                host_result(unsafe { libc::semctl(id, num, cmd) } as i64)
            }
            SETVAL => {
                // SAFETY: SETVAL takes an int.
                host_result(unsafe { libc::semctl(id, num, cmd, arg as i32) } as i64)
            }
            GETALL | SETALL => {
                let count = self.semaphore_count(id)?;
                let mut values = vec![0u16; count];
                if cmd == SETALL {
                    let mut raw = vec![0u8; count * 2];
                    self.mem.read(arg, &mut raw)?;
                    for (v, c) in values.iter_mut().zip(raw.chunks_exact(2)) {
                        *v = u16::from_le_bytes([c[0], c[1]]);
                    }
                }
                // SAFETY: GETALL/SETALL take an array of the set's size.
                host_result(unsafe { libc::semctl(id, 0, cmd, values.as_mut_ptr()) } as i64)?;
                if cmd == GETALL {
                    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                    self.mem.write(arg, &raw)?;
                }
                Ok(0)
            }
            IPC_STAT => {
                let ds = semaphore_stat(id)?;
                let mut words = ipc64_perm_words(&ds.sem_perm).to_vec();
                words.extend(time_words(ds.sem_otime));
                words.extend(time_words(ds.sem_ctime));
                words.extend([ds.sem_nsems as u32, 0, 0]);
                debug_assert_eq!(words.len() * 4, SEMID64_DS_SIZE);
                self.mem.write(arg, &word_bytes(&words))?;
                Ok(0)
            }
            IPC_SET => {
                let mut raw = [0u8; SEMID64_DS_SIZE];
                self.mem.read(arg, &mut raw)?;
                let mut ds = semaphore_stat(id)?;
                set_perm_from(&raw, &mut ds.sem_perm);
                // SAFETY: IPC_SET reads the semid_ds.
                host_result(unsafe { libc::semctl(id, 0, libc::IPC_SET, &mut ds) } as i64)
            }
            _ => {
                tracing::warn!(cmd, "unsupported semctl command");
                Err(errno(libc::EINVAL))
            }
        }
    }

    /// How many semaphores set `id` has (IPC_STAT on the host).
    fn semaphore_count(&self, id: i32) -> Result<usize, SysError> {
        Ok(semaphore_stat(id)?.sem_nsems as usize)
    }

    /// `msgget(key, flags)`.
    pub(super) fn sys_msgget(&mut self, key: u32, flags: u32) -> SysResult {
        // SAFETY: no memory effects.
        host_result(unsafe { libc::msgget(key as i32, flags as i32) } as i64)
    }

    /// `msgsnd(id, msgp*, size, flags)`: the guest's 4-byte `mtype`, then `size` bytes.
    pub(super) fn sys_msgsnd(&mut self, id: u32, msgp: u32, size: u32, flags: u32) -> SysResult {
        if size > MSG_MAX {
            return Err(errno(libc::EINVAL));
        }
        let mut guest = vec![0u8; 4 + size as usize];
        self.mem.read(msgp, &mut guest)?;
        let mtype = i32::from_le_bytes([guest[0], guest[1], guest[2], guest[3]]) as libc::c_long;
        let mut host = Vec::with_capacity(8 + size as usize);
        host.extend_from_slice(&mtype.to_ne_bytes());
        host.extend_from_slice(&guest[4..]);
        let mut flags = flags as i32;
        let give_way = self.ipc_gives_way(flags);
        if give_way {
            flags |= libc::IPC_NOWAIT;
        }
        // SAFETY: a host msgbuf of `size` bytes after its mtype.
        let r = unsafe { libc::msgsnd(id as i32, host.as_ptr().cast(), size as usize, flags) };
        match host_result(r as i64) {
            Err(SysError::Errno(libc::EAGAIN)) if give_way => Err(SysError::WouldBlock),
            other => other,
        }
    }

    /// `msgrcv(id, msgp*, size, type, flags)`.
    pub(super) fn sys_msgrcv(&mut self, a: [u32; 6]) -> SysResult {
        let (id, msgp, size, mtype) = (a[0] as i32, a[1], a[2].min(MSG_MAX), a[3] as i32);
        self.mem.check(msgp, 4 + size as u64, super::mem::perm::W)?;
        let mut flags = a[4] as i32;
        let give_way = self.ipc_gives_way(flags);
        if give_way {
            flags |= libc::IPC_NOWAIT;
        }
        let mut host = vec![0u8; 8 + size as usize];
        // SAFETY: a host msgbuf with room for `size` bytes after its mtype.
        let r = unsafe {
            libc::msgrcv(
                id,
                host.as_mut_ptr().cast(),
                size as usize,
                mtype as libc::c_long,
                flags,
            )
        };
        let n = match host_result(r as i64) {
            Err(SysError::Errno(libc::ENOMSG)) if give_way => return Err(SysError::WouldBlock),
            other => other?,
        };
        let got_type = libc::c_long::from_ne_bytes(host[..8].try_into().unwrap_or([0; 8]));
        let mut guest = Vec::with_capacity(4 + n as usize);
        guest.extend_from_slice(&(got_type as i32).to_le_bytes());
        guest.extend_from_slice(&host[8..8 + n as usize]);
        self.mem.write(msgp, &guest)?;
        Ok(n)
    }

    /// `msgctl(id, cmd, buf*)`: IPC_RMID, IPC_STAT and IPC_SET (not IPC_INFO or MSG_INFO).
    pub(super) fn sys_msgctl(&mut self, id: u32, cmd: u32, buf: u32) -> SysResult {
        let id = id as i32;
        match cmd as i32 & !IPC_64 {
            IPC_RMID => {
                // SAFETY: IPC_RMID takes no buffer.
                host_result(
                    unsafe { libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) } as i64,
                )
            }
            IPC_STAT => {
                let ds = queue_stat(id)?;
                let mut words = ipc64_perm_words(&ds.msg_perm).to_vec();
                words.extend(time_words(ds.msg_stime));
                words.extend(time_words(ds.msg_rtime));
                words.extend(time_words(ds.msg_ctime));
                words.extend([
                    ds.__msg_cbytes as u32,
                    ds.msg_qnum as u32,
                    ds.msg_qbytes as u32,
                    ds.msg_lspid as u32,
                    ds.msg_lrpid as u32,
                    0,
                    0,
                ]);
                debug_assert_eq!(words.len() * 4, MSQID64_DS_SIZE);
                self.mem.write(buf, &word_bytes(&words))?;
                Ok(0)
            }
            IPC_SET => {
                let mut raw = [0u8; MSQID64_DS_SIZE];
                self.mem.read(buf, &mut raw)?;
                let mut ds = queue_stat(id)?;
                set_perm_from(&raw, &mut ds.msg_perm);
                // msg_qbytes, after the permissions and the three split times.
                let at = 36 + 24 + 8;
                ds.msg_qbytes = u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]])
                    as libc::msglen_t;
                // SAFETY: IPC_SET reads the msqid_ds.
                host_result(unsafe { libc::msgctl(id, libc::IPC_SET, &mut ds) } as i64)
            }
            cmd => {
                tracing::warn!(cmd, "unsupported msgctl command");
                Err(errno(libc::EINVAL))
            }
        }
    }
}

/// The host's `semid_ds` of set `id`.
fn semaphore_stat(id: i32) -> Result<libc::semid_ds, SysError> {
    // SAFETY: all-zero is a valid semid_ds; IPC_STAT fills it.
    let mut ds: libc::semid_ds = unsafe { std::mem::zeroed() };
    // SAFETY: IPC_STAT takes a semid_ds pointer.
    host_result(unsafe { libc::semctl(id, 0, libc::IPC_STAT, &mut ds) } as i64)?;
    Ok(ds)
}

/// The host's `msqid_ds` of queue `id`.
fn queue_stat(id: i32) -> Result<libc::msqid_ds, SysError> {
    // SAFETY: all-zero is a valid msqid_ds; IPC_STAT fills it.
    let mut ds: libc::msqid_ds = unsafe { std::mem::zeroed() };
    // SAFETY: IPC_STAT takes a msqid_ds pointer.
    host_result(unsafe { libc::msgctl(id, libc::IPC_STAT, &mut ds) } as i64)?;
    Ok(ds)
}
