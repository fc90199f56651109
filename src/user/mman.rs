//! Memory-management syscalls: brk, mmap2, munmap, mprotect, mremap, msync, madvise.
//!
//! Every change of guest page permissions flushes the hart's TLB; a change that touches an
//! executable page also asks the engine to drop decoded code (`flush_code`).
//!
//! MAP_SHARED mappings are host MAP_SHARED mappings of the same file placed at the guest pages
//! (shared anonymous memory is a memfd): stores through them reach the file at once, `pwrite`
//! shows in them, two mappings of one file see each other, and a forked child (a host fork)
//! shares them, as on Linux. Private file mappings are copies read at mmap time.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::rc::Rc;

use crate::cpu::tlb::PAGE_SIZE;
use crate::cpu::Hart;

use super::fs::read_file_into;
use super::mem::{page_round_up, perm, ProtectError};
use super::regions::{FileId, MapName, Mapping, SharedHost, SharedObject};
use super::syscall::{errno, io_errno, last_errno, SysError, SysResult};
use super::{fixed_mmap_min, Process, MMAP_MIN, MMAP_TOP, TASK_SIZE};

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
const MAP_HUGETLB: u32 = 0x4_0000;
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
    pub(super) fn mapping_changed(
        &mut self,
        hart: &mut Hart,
        start: u32,
        len: u64,
        was_exec: bool,
    ) {
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
            self.mem
                .map_as(old_end, grow, perm::R | perm::W, Mapping::special("[heap]"));
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
        let shared = map_type != MAP_PRIVATE;
        let len = page_round_up(len as u64).ok_or(errno(libc::ENOMEM))?;
        let file_offset = pgoff as u64 * PAGE_SIZE as u64;
        let perms = prot_to_perm(prot);

        if flags & (MAP_ANONYMOUS | MAP_HUGETLB) == MAP_ANONYMOUS | MAP_HUGETLB {
            host_has_huge_pages(len, flags)?;
        }

        // The file, if any, with whether it is open for writing.
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
            if acc == libc::O_WRONLY || (shared && prot & PROT_WRITE != 0 && acc != libc::O_RDWR) {
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
            if addr < fixed_mmap_min() {
                return Err(errno(libc::EPERM));
            }
            if flags & MAP_FIXED_NOREPLACE != 0 && !self.mem.is_free(addr, len) {
                return Err(errno(libc::EEXIST));
            }
            addr
        } else {
            self.choose_address(addr, len)?
        };

        // Everything that can fail without touching the address space comes first.
        let shared_mapping = match (shared, file) {
            (true, Some((host, writable))) => Some(Mapping {
                name: MapName::File(Rc::new(FileId::of_fd(host, host_fd_path(host)))),
                offset: file_offset,
                shared: Some(SharedObject {
                    host: SharedHost::File(Rc::new(dup_cloexec(host)?)),
                    writable,
                }),
            }),
            (true, None) => Some(shared_anonymous_memory(len)?),
            (false, _) => None,
        };

        let was_exec = self.mem.any_executable(start, len);
        let replaced = !self.mem.is_free(start, len);
        match (shared_mapping, file) {
            (Some(mapping), _) => {
                if let Err(e) = self.mem.map_shared(start, len, perms, mapping) {
                    tracing::debug!(start, len, error = %e, "host shared mmap failed");
                    self.mapping_changed(hart, start, len, was_exec);
                    return Err(errno(e.raw_os_error().unwrap_or(libc::ENOMEM)));
                }
            }
            (None, Some((host, _))) => {
                let mapping = Mapping {
                    name: MapName::File(Rc::new(FileId::of_fd(host, host_fd_path(host)))),
                    offset: file_offset,
                    shared: None,
                };
                self.mem.map_as(start, len, perms, mapping);
                if let Err(e) = read_file_into(&mut self.mem, host, file_offset, start, len as u32)
                {
                    self.mem.unmap(start, len);
                    self.mapping_changed(hart, start, len, was_exec);
                    return Err(e);
                }
            }
            (None, None) => self.mem.map(start, len, perms),
        }
        if replaced || perms & perm::X != 0 || was_exec {
            self.mapping_changed(hart, start, len, was_exec);
        }
        Ok(start)
    }

    /// A free range for a mapping without MAP_FIXED: the hint if it is free, else the highest
    /// free range below the mmap area top.
    pub(super) fn choose_address(&self, hint: u32, len: u64) -> Result<u32, SysError> {
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

    pub(super) fn sys_munmap(&mut self, hart: &mut Hart, addr: u32, len: u32) -> SysResult {
        if !addr.is_multiple_of(PAGE_SIZE) || len == 0 {
            return Err(errno(libc::EINVAL));
        }
        let len = page_round_up(len as u64).ok_or(errno(libc::EINVAL))?;
        if addr as u64 + len > TASK_SIZE as u64 {
            return Err(errno(libc::EINVAL));
        }
        let was_exec = self.mem.any_executable(addr, len);
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
        match self.mem.protect(addr, len, prot_to_perm(prot)) {
            Ok(()) => {}
            Err(ProtectError::NotMapped) => return Err(errno(libc::ENOMEM)),
            Err(ProtectError::ReadOnlyFile) => return Err(errno(libc::EACCES)),
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
        let was_exec = self.mem.any_executable(old, old_len);
        let last_page = old + (old_len as u32 - PAGE_SIZE);
        let tail = GrowthSource {
            perms: self.mem.page_perm(last_page) & perm::ACCESS,
            mapping: self.mem.regions().at(last_page).map(|(range, mapping)| {
                // The tail continues the mapping right after the old end.
                let mut m = mapping.clone();
                m.offset += old as u64 + old_len - range.start;
                m
            }),
        };

        if flags & MREMAP_FIXED != 0 {
            let new_end = new_addr as u64 + new_len;
            let overlaps = (new_addr as u64) < old as u64 + old_len && (old as u64) < new_end;
            if !new_addr.is_multiple_of(PAGE_SIZE)
                || overlaps
                || new_end > TASK_SIZE as u64
                || new_addr < fixed_mmap_min()
            {
                return Err(errno(libc::EINVAL));
            }
            let moved = self.move_mapping(old, old_len, new_addr, new_len, &tail);
            self.mapping_changed(hart, new_addr, new_len, was_exec);
            return moved.map(|()| new_addr);
        }
        if new_len <= old_len {
            let cut = old + new_len as u32;
            self.mem.unmap(cut, old_len - new_len);
            self.mapping_changed(hart, old, old_len, was_exec);
            return Ok(old);
        }
        let tail_start = old + old_len as u32;
        let grow = new_len - old_len;
        if tail_start as u64 + grow <= TASK_SIZE as u64 && self.mem.is_free(tail_start, grow) {
            self.extend_mapping(tail_start, grow, &tail)?;
            if tail.perms & perm::X != 0 {
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
        let moved = self.move_mapping(old, old_len, new_addr, new_len, &tail);
        self.mapping_changed(hart, new_addr, new_len, was_exec);
        moved.map(|()| new_addr)
    }

    /// Move `[old, old+old_len)` to `new` (disjoint ranges), resized to `new_len`; a grown
    /// tail continues the mapping as `tail` says. The move itself always happens; an error
    /// means the tail could not be mapped.
    fn move_mapping(
        &mut self,
        old: u32,
        old_len: u64,
        new: u32,
        new_len: u64,
        tail: &GrowthSource,
    ) -> Result<(), SysError> {
        let keep = old_len.min(new_len);
        self.mem.unmap(new, new_len);
        self.mem.move_range(old, new, keep);
        self.mem.unmap(old + keep as u32, old_len - keep);
        if new_len > keep {
            self.extend_mapping(new + keep as u32, new_len - keep, tail)?;
        }
        Ok(())
    }

    /// Map `[start, start+len)` as the continuation of a mapping that mremap grows: more of
    /// the same shared object, or private anonymous memory.
    fn extend_mapping(
        &mut self,
        start: u32,
        len: u64,
        tail: &GrowthSource,
    ) -> Result<(), SysError> {
        let Some(mapping) = tail.mapping.clone().filter(|m| m.shared.is_some()) else {
            self.mem.map(start, len, tail.perms);
            return Ok(());
        };
        // As on Linux, shared anonymous memory does not grow with its mapping: pages past the
        // object's end raise SIGBUS.
        self.mem
            .map_shared(start, len, tail.perms, mapping)
            .map_err(|e| errno(e.raw_os_error().unwrap_or(libc::ENOMEM)))
    }

    pub(super) fn sys_msync(&mut self, addr: u32, len: u32, flags: u32) -> SysResult {
        const MS_ASYNC: u32 = 1;
        const MS_INVALIDATE: u32 = 2;
        const MS_SYNC: u32 = 4;
        if !addr.is_multiple_of(PAGE_SIZE)
            || flags & !(MS_ASYNC | MS_INVALIDATE | MS_SYNC) != 0
            || flags & (MS_ASYNC | MS_SYNC) == MS_ASYNC | MS_SYNC
        {
            return Err(errno(libc::EINVAL));
        }
        let len = page_round_up(len as u64).ok_or(errno(libc::ENOMEM))?;
        if !self.mem.is_mapped(addr, len) {
            return Err(errno(libc::ENOMEM));
        }
        // The MS_* values are the same on the host (x86-64).
        self.mem.sync(addr, len, flags as i32).map_err(io_errno)?;
        Ok(0)
    }

    /// `mincore(addr, len, vec)`: one byte per page, bit 0 set when the host has the page in
    /// memory (untouched anonymous pages are not, as on Linux). ENOMEM if a page is unmapped.
    pub(super) fn sys_mincore(&mut self, addr: u32, len: u32, vec: u32) -> SysResult {
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(errno(libc::EINVAL));
        }
        let len = page_round_up(len as u64).ok_or(errno(libc::ENOMEM))?;
        if addr as u64 + len > TASK_SIZE as u64 {
            return Err(errno(libc::ENOMEM));
        }
        if len == 0 {
            return Ok(0);
        }
        if !self.mem.is_mapped(addr, len) {
            return Err(errno(libc::ENOMEM));
        }
        let mut resident = vec![0u8; (len / PAGE_SIZE as u64) as usize];
        // SAFETY: the range lies inside the guest reservation (checked mapped above) and
        // `resident` has one byte per page of it.
        let r = unsafe {
            libc::mincore(
                self.mem.host_ptr(addr).cast(),
                len as usize,
                resident.as_mut_ptr(),
            )
        };
        if r != 0 {
            return Err(last_errno());
        }
        for byte in &mut resident {
            *byte &= 1;
        }
        self.mem.write(vec, &resident)?;
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
            // Private memory reads back as zero afterwards, shared memory from its object.
            let was_exec = self.mem.any_executable(addr, len);
            self.mem.drop_contents(addr, len);
            self.mapping_changed(hart, addr, len, was_exec);
        }
        Ok(0)
    }
}

/// How mremap continues a mapping it grows: the last page's permissions and, for a shared
/// mapping, its object at the offset right after the old end.
struct GrowthSource {
    perms: u8,
    mapping: Option<Mapping>,
}

/// Make the memfd behind new shared anonymous memory `size` bytes long.
fn size_object(fd: RawFd, size: u64) -> Result<(), SysError> {
    // SAFETY: all-zero is a valid stat; valid out-pointer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(last_errno());
    }
    if (st.st_size as u64) < size {
        let size = libc::off_t::try_from(size).map_err(|_| errno(libc::ENOMEM))?;
        // SAFETY: ftruncate on our own memfd; no memory effects.
        if unsafe { libc::ftruncate(fd, size) } < 0 {
            return Err(last_errno());
        }
    }
    Ok(())
}

/// An anonymous `MAP_HUGETLB` mapping gets ordinary pages, but only if the host could give
/// huge pages of the size asked for (the host's default size, or the one in the flags'
/// `MAP_HUGE_*` bits): otherwise it fails as the host fails it (ENOMEM with none reserved,
/// EINVAL for a size the host lacks), as under qemu-user and Linux.
fn host_has_huge_pages(len: u64, flags: u32) -> Result<(), SysError> {
    const MAP_HUGE_BITS: u32 = 0x3f << 26;
    let host_flags = libc::MAP_PRIVATE
        | libc::MAP_ANONYMOUS
        | libc::MAP_HUGETLB
        | (flags & MAP_HUGE_BITS) as i32;
    // SAFETY: a new anonymous mapping at an address the host picks; unmapped at once.
    let probe = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_NONE,
            host_flags,
            -1,
            0,
        )
    };
    if probe == libc::MAP_FAILED {
        return Err(last_errno());
    }
    // SAFETY: the mapping made above, of that length.
    unsafe { libc::munmap(probe, len as usize) };
    Ok(())
}

/// Shared anonymous memory of `len` bytes: a memfd (so a forked child shares it and mremap can
/// move it), shown in /proc/self/maps as Linux shows shmem, `/dev/zero (deleted)`.
fn shared_anonymous_memory(len: u64) -> Result<Mapping, SysError> {
    // SAFETY: the name is a NUL-terminated literal; memfd_create has no other memory effects.
    let fd = unsafe { libc::memfd_create(c"rv32vm-shared-anon".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    size_object(fd.as_raw_fd(), len)?;
    Ok(Mapping {
        name: MapName::File(Rc::new(FileId::of_fd(
            fd.as_raw_fd(),
            b"/dev/zero (deleted)".to_vec(),
        ))),
        offset: 0,
        shared: Some(SharedObject {
            host: SharedHost::File(Rc::new(fd)),
            writable: true,
        }),
    })
}

/// A close-on-exec duplicate of host fd `fd`, kept by a shared mapping.
fn dup_cloexec(fd: RawFd) -> Result<OwnedFd, SysError> {
    // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor; no memory effects.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(last_errno());
    }
    // SAFETY: `dup` was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(dup) })
}

/// The path of the file open as host fd `fd` (what /proc/self/maps shows for its mappings).
fn host_fd_path(fd: RawFd) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .unwrap_or_default()
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
