//! System V shared memory as the host's: `shmget` creates or finds a host segment (so a forked
//! child or another process shares it by key or id), `shmat` attaches it at the guest pages
//! (host `shmat` with SHM_REMAP at `base + va`, so guest stores are the segment's at once),
//! `shmdt` detaches it, `shmctl` passes IPC_RMID, IPC_STAT and IPC_SET on, translating the
//! 32-bit `shmid64_ds`.

use std::rc::Rc;

use crate::cpu::tlb::PAGE_SIZE;
use crate::cpu::Hart;

use super::mem::{page_round_up, perm};
use super::regions::{FileId, MapName, Mapping, SharedHost, SharedObject};
use super::syscall::{errno, host_result, last_errno, SysResult};
use super::sysv_ipc::{
    ipc64_perm_words, set_perm_from, time_words, word_bytes, IPC_64, IPC_RMID, IPC_SET, IPC_STAT,
};
use super::{fixed_mmap_min, Process, TASK_SIZE};

const SHM_RDONLY: u32 = 0o10000;
const SHM_RND: u32 = 0o20000;
const SHM_REMAP: u32 = 0o40000;
const SHM_EXEC: u32 = 0o100000;
/// RISC-V's SHMLBA is the page size.
const SHMLBA: u32 = PAGE_SIZE;

/// `struct shmid64_ds` of a 32-bit generic kernel: `ipc64_perm` (36 bytes), `shm_segsz`,
/// three times split in low and high words, `shm_cpid`, `shm_lpid`, `shm_nattch`, two unused.
const SHMID64_DS_SIZE: usize = 84;

impl Process {
    /// `shmget(key, size, flags)`.
    pub(super) fn sys_shmget(&mut self, key: u32, size: u32, flags: u32) -> SysResult {
        // SAFETY: no memory effects.
        host_result(unsafe { libc::shmget(key as i32, size as usize, flags as i32) } as i64)
    }

    /// `shmat(id, addr, flags)`: the segment at `addr` (or at a free range when 0).
    pub(super) fn sys_shmat(
        &mut self,
        hart: &mut Hart,
        id: u32,
        addr: u32,
        flags: u32,
    ) -> SysResult {
        let id = id as i32;
        let stat = segment_stat(id)?;
        let len = page_round_up(stat.shm_segsz as u64).ok_or(errno(libc::EINVAL))?;
        if len == 0 || len > TASK_SIZE as u64 {
            return Err(errno(libc::EINVAL));
        }
        let start = if addr == 0 {
            self.choose_address(0, len)?
        } else {
            let start = if flags & SHM_RND != 0 {
                addr & !(SHMLBA - 1)
            } else {
                addr
            };
            if !start.is_multiple_of(SHMLBA)
                || start < fixed_mmap_min()
                || start as u64 + len > TASK_SIZE as u64
            {
                return Err(errno(libc::EINVAL));
            }
            // Without SHM_REMAP the range must be free (Linux: EINVAL).
            if flags & SHM_REMAP == 0 && !self.mem.is_free(start, len) {
                return Err(errno(libc::EINVAL));
            }
            start
        };
        let readonly = flags & SHM_RDONLY != 0;
        let mut perms = perm::R;
        if !readonly {
            perms |= perm::W;
        }
        if flags & SHM_EXEC != 0 {
            perms |= perm::X;
        }
        let mapping = Mapping {
            name: MapName::File(Rc::new(FileId {
                // As Linux names the segment's pages in /proc/self/maps.
                path: format!("/SYSV{:08x} (deleted)", stat.shm_perm.__key as u32).into_bytes(),
                dev: 0,
                inode: id as u64,
            })),
            offset: 0,
            shared: Some(SharedObject {
                host: SharedHost::SysvShm { id },
                writable: !readonly,
            }),
        };
        if !self.mem.is_free(start, len) {
            // Replacing pages (SHM_REMAP): make sure the host lets us attach before they go,
            // since a failed attach at their place would leave a hole. A trial attach
            // anywhere, at once detached, answers it.
            let trial_flags = if readonly { libc::SHM_RDONLY } else { 0 };
            // SAFETY: the host picks a free address for the trial; it is detached at once and
            // nothing refers to it.
            let trial = unsafe { libc::shmat(id, std::ptr::null(), trial_flags) };
            if trial as isize == -1 {
                return Err(last_errno());
            }
            // SAFETY: `trial` is the attachment just made.
            unsafe { libc::shmdt(trial) };
        }
        let was_exec = self.mem.any_executable(start, len);
        if let Err(e) = self.mem.map_shared(start, len, perms, mapping) {
            tracing::debug!(start, len, error = %e, "host shmat failed");
            self.mapping_changed(hart, start, len, was_exec);
            return Err(errno(e.raw_os_error().unwrap_or(libc::EINVAL)));
        }
        self.mapping_changed(hart, start, len, was_exec);
        Ok(start)
    }

    /// `shmdt(addr)`: detach the segment attached at `addr` (all the pages still mapped from
    /// that attachment, as Linux does).
    pub(super) fn sys_shmdt(&mut self, hart: &mut Hart, addr: u32) -> SysResult {
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(errno(libc::EINVAL));
        }
        let attached = self.mem.regions().at(addr).and_then(|(range, mapping)| {
            let id = match mapping.shared.as_ref().map(|s| &s.host) {
                Some(SharedHost::SysvShm { id }) => *id,
                _ => return None,
            };
            (range.start == addr as u64 && mapping.offset == 0).then_some((id, range.end))
        });
        let Some((id, mut end)) = attached else {
            return Err(errno(libc::EINVAL));
        };
        // Pages split off by mprotect show as separate regions of the same segment.
        while end < TASK_SIZE as u64 {
            let Some((range, mapping)) = self.mem.regions().at(end as u32) else {
                break;
            };
            let same = matches!(mapping.shared.as_ref().map(|s| &s.host),
                Some(SharedHost::SysvShm { id: next }) if *next == id);
            if !same || range.start != end {
                break;
            }
            end = range.end;
        }
        let len = end - addr as u64;
        let was_exec = self.mem.any_executable(addr, len);
        self.mem.unmap(addr, len);
        self.mapping_changed(hart, addr, len, was_exec);
        Ok(0)
    }

    /// `shmctl(id, cmd, buf)`: IPC_RMID, IPC_STAT and IPC_SET.
    pub(super) fn sys_shmctl(&mut self, id: u32, cmd: u32, buf: u32) -> SysResult {
        let id = id as i32;
        match cmd as i32 & !IPC_64 {
            IPC_RMID => {
                // SAFETY: IPC_RMID ignores the buffer.
                host_result(
                    unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) } as i64,
                )
            }
            IPC_STAT => {
                let stat = segment_stat(id)?;
                self.mem.write(buf, &shmid64_ds(&stat))?;
                Ok(0)
            }
            IPC_SET => {
                let mut raw = [0u8; SHMID64_DS_SIZE];
                self.mem.read(buf, &mut raw)?;
                let mut stat = segment_stat(id)?;
                set_perm_from(&raw, &mut stat.shm_perm);
                // SAFETY: a valid, initialised shmid_ds the host only reads.
                host_result(unsafe { libc::shmctl(id, libc::IPC_SET, &mut stat) } as i64)
            }
            _ => Err(errno(libc::EINVAL)),
        }
    }
}

/// The host's `shmid_ds` of segment `id`.
fn segment_stat(id: i32) -> Result<libc::shmid_ds, super::syscall::SysError> {
    // SAFETY: all-zero is a valid shmid_ds; shmctl only writes it.
    let mut stat: libc::shmid_ds = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    if unsafe { libc::shmctl(id, libc::IPC_STAT, &mut stat) } < 0 {
        return Err(last_errno());
    }
    Ok(stat)
}

/// The guest's `struct shmid64_ds` for `stat`.
fn shmid64_ds(stat: &libc::shmid_ds) -> Vec<u8> {
    let mut words = ipc64_perm_words(&stat.shm_perm).to_vec();
    words.push(stat.shm_segsz as u32);
    words.extend(time_words(stat.shm_atime));
    words.extend(time_words(stat.shm_dtime));
    words.extend(time_words(stat.shm_ctime));
    words.extend([
        stat.shm_cpid as u32,
        stat.shm_lpid as u32,
        stat.shm_nattch as u32,
        0,
        0,
    ]);
    debug_assert_eq!(words.len() * 4, SHMID64_DS_SIZE);
    word_bytes(&words)
}
