//! Memory-management syscalls: brk, mmap2, munmap, mprotect, mremap, msync, madvise.
//!
//! Every change of guest page permissions flushes the hart's TLB; a change that touches an
//! executable page also asks the engine to drop decoded code (`flush_code`).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::cpu::tlb::PAGE_SIZE;
use crate::cpu::Hart;

use super::fs::read_file_into;
use super::mem::{page_round_up, perm};
use super::syscall::{errno, last_errno, SysError, SysResult};
use super::{Process, MMAP_MIN, MMAP_TOP, TASK_SIZE};

const PROT_READ: u32 = 1;
const PROT_WRITE: u32 = 2;
const PROT_EXEC: u32 = 4;
const PROT_GROWS: u32 = 0x0100_0000 | 0x0200_0000;

const MAP_SHARED: u32 = 0x01;
const MAP_PRIVATE: u32 = 0x02;
const MAP_SHARED_VALIDATE: u32 = 0x03;
const MAP_TYPE: u32 = 0x0f;
const MAP_FIXED: u32 = 0x10;
const MAP_ANONYMOUS: u32 = 0x20;
const MAP_FIXED_NOREPLACE: u32 = 0x10_0000;

const MREMAP_MAYMOVE: u32 = 1;
const MREMAP_FIXED: u32 = 2;

const MADV_DONTNEED: u32 = 4;

/// Page permissions for `PROT_*` bits. RISC-V cannot express write-only pages: write implies
/// read, as on Linux.
pub fn prot_to_perm(prot: u32) -> u8 {
    let mut p = 0;
    if prot & (PROT_READ | PROT_WRITE) != 0 {
        p |= perm::R;
    }
    if prot & PROT_WRITE != 0 {
        p |= perm::W;
    }
    if prot & PROT_EXEC != 0 {
        p |= perm::X;
    }
    p
}

/// A writable MAP_SHARED file mapping: its contents go back to the file on msync, munmap and
/// exit (the mapping itself is a private copy).
#[derive(Debug)]
pub struct SharedFileMap {
    pub start: u32,
    pub end: u32,
    pub file: OwnedFd,
    pub file_offset: u64,
}

/// The program break.
#[derive(Debug, Clone, Copy)]
pub struct Brk {
    /// Lowest break (page-aligned end of the loaded image).
    pub start: u32,
    /// Current break as the guest set it (not necessarily page-aligned).
    pub current: u32,
}

impl Process {
    /// Drop stale translations after a permission change; note code changes.
    fn mapping_changed(&mut self, hart: &mut Hart, start: u32, len: u64, was_exec: bool) {
        hart.tlb.flush();
        if was_exec || self.mem.any_executable(start, len) {
            self.flush_code = true;
        }
    }

    pub(super) fn sys_brk(&mut self, hart: &mut Hart, addr: u32) -> SysResult {
        let Brk { start, current } = self.brk;
        if addr < start || addr > MMAP_TOP {
            return Ok(current);
        }
        let old_end = page_round_up(current as u64).unwrap_or(TASK_SIZE as u64) as u32;
        let Some(new_end) = page_round_up(addr as u64) else {
            return Ok(current);
        };
        let new_end = new_end as u32;
        if new_end > old_end {
            let grow = (new_end - old_end) as u64;
            if !self.mem.is_free(old_end, grow) {
                return Ok(current);
            }
            self.mem.map(old_end, grow, perm::R | perm::W);
        } else if new_end < old_end {
            self.mem.unmap(new_end, (old_end - new_end) as u64);
            self.mapping_changed(hart, new_end, (old_end - new_end) as u64, false);
        }
        self.brk.current = addr;
        Ok(addr)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn sys_mmap2(
        &mut self,
        hart: &mut Hart,
        addr: u32,
        len: u32,
        prot: u32,
        flags: u32,
        fd: u32,
        pgoff: u32,
    ) -> SysResult {
        if len == 0 || prot & !(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWS) != 0 {
            return Err(errno(libc::EINVAL));
        }
        let map_type = flags & MAP_TYPE;
        if !matches!(map_type, MAP_SHARED | MAP_PRIVATE | MAP_SHARED_VALIDATE) {
            return Err(errno(libc::EINVAL));
        }
        let len = page_round_up(len as u64).ok_or(errno(libc::ENOMEM))?;
        let file_offset = pgoff as u64 * PAGE_SIZE as u64;
        let perms = prot_to_perm(prot);

        // The file, if any: a host duplicate is not needed for a private mapping (read now).
        let file = if flags & MAP_ANONYMOUS != 0 {
            None
        } else {
            let host = self.fds.host(fd)?;
            // SAFETY: F_GETFL has no memory effects.
            let fl = unsafe { libc::fcntl(host, libc::F_GETFL) };
            if fl < 0 {
                return Err(last_errno());
            }
            let acc = fl & libc::O_ACCMODE;
            if acc == libc::O_WRONLY
                || (map_type != MAP_PRIVATE && prot & PROT_WRITE != 0 && acc != libc::O_RDWR)
            {
                return Err(errno(libc::EACCES));
            }
            // SAFETY: all-zero is a valid stat; valid out-pointer.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            if unsafe { libc::fstat(host, &mut st) } < 0 {
                return Err(last_errno());
            }
            match st.st_mode & libc::S_IFMT {
                libc::S_IFREG | libc::S_IFBLK => Some((host, acc == libc::O_RDWR)),
                // /dev/zero and friends map as anonymous memory.
                libc::S_IFCHR if st.st_rdev == libc::makedev(1, 5) => None,
                _ => return Err(errno(libc::ENODEV)),
            }
        };

        let start = if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 {
            if !addr.is_multiple_of(PAGE_SIZE) {
                return Err(errno(libc::EINVAL));
            }
            if addr as u64 + len > TASK_SIZE as u64 {
                return Err(errno(libc::ENOMEM));
            }
            if addr < MMAP_MIN {
                return Err(errno(libc::EPERM));
            }
            if flags & MAP_FIXED_NOREPLACE != 0 && !self.mem.is_free(addr, len) {
                return Err(errno(libc::EEXIST));
            }
            addr
        } else {
            self.choose_address(addr, len)?
        };

        let was_exec = self.mem.any_executable(start, len);
        let replaced = !self.mem.is_free(start, len);
        if replaced {
            self.write_back_shared(start, start as u64 + len, true);
        }
        self.mem.map(start, len, perms);
        if let Some((host, _)) = file {
            if let Err(e) = read_file_into(&mut self.mem, host, file_offset, start, len as u32) {
                self.mem.unmap(start, len);
                return Err(e);
            }
            if map_type != MAP_PRIVATE && flags & MAP_ANONYMOUS == 0 {
                self.remember_shared(host, start, len, file_offset, file.is_some_and(|f| f.1));
            }
        }
        if replaced || perms & perm::X != 0 || was_exec {
            self.mapping_changed(hart, start, len, was_exec);
        }
        Ok(start)
    }

    /// Record a shared file mapping that may be written, for write-back.
    fn remember_shared(
        &mut self,
        host: i32,
        start: u32,
        len: u64,
        offset: u64,
        writable_file: bool,
    ) {
        if !writable_file {
            return;
        }
        // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor; no memory effects.
        let dup = unsafe { libc::fcntl(host, libc::F_DUPFD_CLOEXEC, 3) };
        if dup < 0 {
            tracing::warn!("cannot keep the file of a shared mapping; writes will not reach it");
            return;
        }
        self.shared_maps.push(SharedFileMap {
            start,
            end: (start as u64 + len) as u32,
            // SAFETY: `dup` was just created and is owned by nobody else.
            file: unsafe { OwnedFd::from_raw_fd(dup) },
            file_offset: offset,
        });
    }

    /// A free range for a mapping without MAP_FIXED: the hint if it is free, else the highest
    /// free range below the mmap area top.
    fn choose_address(&self, hint: u32, len: u64) -> Result<u32, SysError> {
        let hint = hint & !(PAGE_SIZE - 1);
        if hint >= MMAP_MIN && hint as u64 + len <= TASK_SIZE as u64 && self.mem.is_free(hint, len)
        {
            return Ok(hint);
        }
        self.mem
            .find_free(len, MMAP_MIN, MMAP_TOP)
            .or_else(|| self.mem.find_free(len, MMAP_MIN, TASK_SIZE))
            .ok_or(errno(libc::ENOMEM))
    }

    /// Write shared file mappings overlapping `[start, end)` back to their files; with `drop`,
    /// also forget that part of them (it is being unmapped or replaced).
    pub(super) fn write_back_shared(&mut self, start: u32, end: u64, drop: bool) {
        let mut keep = Vec::new();
        for m in std::mem::take(&mut self.shared_maps) {
            let lo = m.start.max(start);
            let hi = (m.end as u64).min(end);
            if lo as u64 >= hi {
                keep.push(m);
                continue;
            }
            self.write_back_range(&m, lo, hi as u32);
            if !drop {
                keep.push(m);
                continue;
            }
            // Keep what lies outside the dropped range.
            if m.start < lo {
                if let Some(fd) = dup_owned(&m.file) {
                    keep.push(SharedFileMap {
                        start: m.start,
                        end: lo,
                        file: fd,
                        file_offset: m.file_offset,
                    });
                }
            }
            if (m.end as u64) > hi {
                keep.push(SharedFileMap {
                    start: hi as u32,
                    end: m.end,
                    file_offset: m.file_offset + (hi - m.start as u64),
                    file: m.file,
                });
            }
        }
        self.shared_maps = keep;
    }

    /// Write `[lo, hi)` of mapping `m` to its file, never past the file's current end.
    fn write_back_range(&self, m: &SharedFileMap, lo: u32, hi: u32) {
        // SAFETY: all-zero is a valid stat; valid out-pointer.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(m.file.as_raw_fd(), &mut st) } < 0 {
            return;
        }
        let file_pos = m.file_offset + (lo - m.start) as u64;
        let file_len = st.st_size.max(0) as u64;
        if file_pos >= file_len {
            return;
        }
        let len = ((hi - lo) as u64).min(file_len - file_pos) as u32;
        let Ok(bytes) = self.mem.slice(lo, len) else {
            // Made unreadable by mprotect: write what the host holds anyway.
            let ptr = self.mem.host_ptr(lo);
            // SAFETY: the range lies inside the reservation (a mapping below TASK_SIZE).
            let bytes = unsafe { std::slice::from_raw_parts(ptr, len as usize) };
            write_all_at(&m.file, bytes, file_pos);
            return;
        };
        write_all_at(&m.file, bytes, file_pos);
    }

    /// Write every shared file mapping back (at exit).
    pub(super) fn write_back_all(&mut self) {
        self.write_back_shared(0, 1 << 32, true);
    }

    pub(super) fn sys_munmap(&mut self, hart: &mut Hart, addr: u32, len: u32) -> SysResult {
        if !addr.is_multiple_of(PAGE_SIZE) || len == 0 {
            return Err(errno(libc::EINVAL));
        }
        let len = page_round_up(len as u64).ok_or(errno(libc::EINVAL))?;
        if addr as u64 + len > TASK_SIZE as u64 {
            return Err(errno(libc::EINVAL));
        }
        let was_exec = self.mem.any_executable(addr, len);
        self.write_back_shared(addr, addr as u64 + len, true);
        self.mem.unmap(addr, len);
        self.mapping_changed(hart, addr, len, was_exec);
        Ok(0)
    }

    pub(super) fn sys_mprotect(
        &mut self,
        hart: &mut Hart,
        addr: u32,
        len: u32,
        prot: u32,
    ) -> SysResult {
        if !addr.is_multiple_of(PAGE_SIZE)
            || prot & !(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWS) != 0
        {
            return Err(errno(libc::EINVAL));
        }
        let len = page_round_up(len as u64).ok_or(errno(libc::ENOMEM))?;
        if len == 0 {
            return Ok(0);
        }
        let was_exec = self.mem.any_executable(addr, len);
        if !self.mem.protect(addr, len, prot_to_perm(prot)) {
            return Err(errno(libc::ENOMEM));
        }
        self.mapping_changed(hart, addr, len, was_exec);
        Ok(0)
    }

    pub(super) fn sys_mremap(
        &mut self,
        hart: &mut Hart,
        old: u32,
        old_len: u32,
        new_len: u32,
        flags: u32,
        new_addr: u32,
    ) -> SysResult {
        if !old.is_multiple_of(PAGE_SIZE)
            || flags & !(MREMAP_MAYMOVE | MREMAP_FIXED) != 0
            || (flags & MREMAP_FIXED != 0 && flags & MREMAP_MAYMOVE == 0)
        {
            return Err(errno(libc::EINVAL));
        }
        let old_len = page_round_up(old_len as u64).ok_or(errno(libc::EINVAL))?;
        let new_len = page_round_up(new_len as u64).ok_or(errno(libc::EINVAL))?;
        if new_len == 0 || old_len == 0 {
            return Err(errno(libc::EINVAL));
        }
        if !self.mem.is_mapped(old, old_len) {
            return Err(errno(libc::EFAULT));
        }
        // Shared file mappings become private copies when remapped.
        self.write_back_shared(old, old as u64 + old_len, true);
        let was_exec = self.mem.any_executable(old, old_len);
        let tail_perm = self.mem.page_perm(old + (old_len as u32 - PAGE_SIZE)) & !perm::MAPPED;

        if flags & MREMAP_FIXED != 0 {
            let new_end = new_addr as u64 + new_len;
            let overlaps = (new_addr as u64) < old as u64 + old_len && (old as u64) < new_end;
            if !new_addr.is_multiple_of(PAGE_SIZE)
                || overlaps
                || new_end > TASK_SIZE as u64
                || new_addr < MMAP_MIN
            {
                return Err(errno(libc::EINVAL));
            }
            self.write_back_shared(new_addr, new_end, true);
            self.move_mapping(old, old_len, new_addr, new_len, tail_perm);
            self.mapping_changed(hart, new_addr, new_len, was_exec);
            return Ok(new_addr);
        }
        if new_len <= old_len {
            let cut = old + new_len as u32;
            self.mem.unmap(cut, old_len - new_len);
            self.mapping_changed(hart, old, old_len, was_exec);
            return Ok(old);
        }
        let tail = old + old_len as u32;
        let grow = new_len - old_len;
        if tail as u64 + grow <= TASK_SIZE as u64 && self.mem.is_free(tail, grow) {
            self.mem.map(tail, grow, tail_perm);
            if tail_perm & perm::X != 0 {
                self.flush_code = true;
            }
            return Ok(old);
        }
        if flags & MREMAP_MAYMOVE == 0 {
            return Err(errno(libc::ENOMEM));
        }
        let new_addr = self
            .mem
            .find_free(new_len, MMAP_MIN, MMAP_TOP)
            .or_else(|| self.mem.find_free(new_len, MMAP_MIN, TASK_SIZE))
            .ok_or(errno(libc::ENOMEM))?;
        self.move_mapping(old, old_len, new_addr, new_len, tail_perm);
        self.mapping_changed(hart, new_addr, new_len, was_exec);
        Ok(new_addr)
    }

    /// Move `[old, old+old_len)` to `new` (disjoint ranges), resized to `new_len`; a grown tail
    /// gets `tail_perm`.
    fn move_mapping(&mut self, old: u32, old_len: u64, new: u32, new_len: u64, tail_perm: u8) {
        let keep = old_len.min(new_len);
        let perms = self.mem.page_perms(old, keep);
        self.mem.unmap(new, new_len);
        self.mem.move_pages(old, new, keep);
        self.mem.unmap(old, old_len);
        self.mem.set_page_perms(new, &perms);
        if new_len > keep {
            self.mem.map(new + keep as u32, new_len - keep, tail_perm);
        }
    }

    pub(super) fn sys_msync(&mut self, addr: u32, len: u32) -> SysResult {
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(errno(libc::EINVAL));
        }
        let len = page_round_up(len as u64).ok_or(errno(libc::ENOMEM))?;
        if !self.mem.is_mapped(addr, len) {
            return Err(errno(libc::ENOMEM));
        }
        self.write_back_shared(addr, addr as u64 + len, false);
        Ok(0)
    }

    pub(super) fn sys_madvise(
        &mut self,
        hart: &mut Hart,
        addr: u32,
        len: u32,
        advice: u32,
    ) -> SysResult {
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(errno(libc::EINVAL));
        }
        let len = page_round_up(len as u64).ok_or(errno(libc::EINVAL))?;
        if advice == MADV_DONTNEED && len != 0 {
            if !self.mem.is_mapped(addr, len) {
                return Err(errno(libc::ENOMEM));
            }
            // Private memory reads back as zero afterwards: keep the permissions, drop the data.
            let perms = self.mem.page_perms(addr, len);
            let was_exec = self.mem.any_executable(addr, len);
            self.mem.unmap(addr, len);
            self.mem.set_page_perms(addr, &perms);
            self.mapping_changed(hart, addr, len, was_exec);
        }
        Ok(0)
    }
}

fn dup_owned(fd: &OwnedFd) -> Option<OwnedFd> {
    fd.try_clone().ok()
}

fn write_all_at(file: &OwnedFd, mut bytes: &[u8], mut pos: u64) {
    while !bytes.is_empty() {
        // SAFETY: writes from a valid slice; no other memory effects.
        let n = unsafe {
            libc::pwrite(
                file.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                pos as i64,
            )
        };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            tracing::warn!("write-back of a shared file mapping failed");
            return;
        }
        bytes = &bytes[n as usize..];
        pos += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prot_mapping() {
        assert_eq!(prot_to_perm(0), 0);
        assert_eq!(prot_to_perm(PROT_WRITE), perm::R | perm::W);
        assert_eq!(prot_to_perm(PROT_EXEC), perm::X);
        assert_eq!(
            prot_to_perm(PROT_READ | PROT_WRITE | PROT_EXEC),
            perm::R | perm::W | perm::X
        );
    }
}
