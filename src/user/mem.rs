//! Guest memory of a user-mode process: the whole 4 GiB guest address space reserved as one
//! host mapping (guest address `va` lives at host `base + va`), with per-page guest permissions
//! kept in a table. Only pages the guest mapped are accessible; every access from syscalls goes
//! through the checked helpers here, so a bad guest pointer becomes EFAULT, never a host crash.
//!
//! The host pages carry the guest's protections too (unmapped: none; readable or executable:
//! read; writable: read-write), and a guard past 4 GiB catches accesses that run off the end,
//! so compiled code may access guest memory without checking it: a bad access faults on the
//! host ([`super::host_fault`]). The emulator's own writes that ignore guest permissions (the
//! loader, `/proc/self/mem`, reading a file into a private mapping) open the host pages for
//! the write and close them again.

use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use crate::cpu::tlb::{PAGE_MASK, PAGE_SIZE};

use super::regions::{Mapping, RegionTable, SharedHost};

/// Size of the guest address space reserved on the host.
const SPACE_SIZE: usize = 1 << 32;
/// Inaccessible host memory after the guest space: an access at the top of the guest space
/// that runs past 4 GiB (an 8-byte load at 0xffff_fffc) faults there instead of touching
/// whatever the host has mapped next.
pub const GUARD_SIZE: usize = 64 << 10;
/// Number of 4 KiB guest pages.
const PAGE_COUNT: usize = 1 << 20;
/// Where the guest address space is reserved if it can be: 256 MiB, below 2^31, so compiled
/// code can add the base to a guest address as a sign-extended 32-bit displacement.
const LOW_BASE: usize = 0x1000_0000;

/// Page permission bits.
pub mod perm {
    /// Readable.
    pub const R: u8 = 1;
    /// Writable.
    pub const W: u8 = 2;
    /// Executable.
    pub const X: u8 = 4;
    /// Mapped (possibly with no access: PROT_NONE).
    pub const MAPPED: u8 = 8;
    /// The access bits a guest can ask for (mprotect).
    pub const ACCESS: u8 = R | W | X;
    /// The host page is a MAP_SHARED mapping of a file or shared memory (not part of the
    /// private reservation): unmapping it must put private anonymous memory back.
    pub const SHARED: u8 = 16;
    /// A shared mapping of a host file that is not open for writing: the host page is
    /// read-only, so the guest may never get write access to it.
    pub const NO_WRITE: u8 = 32;
}

/// Why an mprotect could not be applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtectError {
    /// Some page of the range is not mapped (ENOMEM).
    NotMapped,
    /// Write access was asked for a shared mapping of a file not open for writing (EACCES).
    ReadOnlyFile,
}

/// A guest access that hit a page without the needed permission; `addr` is the first bad byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub addr: u32,
}

/// Round `x` up to a page multiple; `None` past 4 GiB.
pub fn page_round_up(x: u64) -> Option<u64> {
    let r = x.checked_add(PAGE_MASK as u64)? & !(PAGE_MASK as u64);
    (r <= 1 << 32).then_some(r)
}

/// The guest address space.
pub struct GuestMemory {
    /// Host address of guest address 0; `SPACE_SIZE` bytes are mapped read-write on the host.
    base: NonNull<u8>,
    /// Permission bits per guest page.
    perms: Box<[u8]>,
    /// Set when a checked write touched an executable page: decoded code may be stale.
    code_written: bool,
    /// What each mapping is (names for /proc/self/maps, host objects of shared mappings).
    regions: RegionTable,
    /// See [`GuestMemory::has_execute_only_pages`].
    execute_only_seen: std::cell::Cell<bool>,
}

impl GuestMemory {
    /// Reserve the guest address space (and the guard after it), all of it inaccessible until
    /// mapped. Host pages are only backed when touched (MAP_NORESERVE), so the reservation
    /// costs address space, not memory.
    pub fn new() -> io::Result<GuestMemory> {
        let reserve = |at: usize, flags: i32| {
            // SAFETY: an anonymous private mapping that may not replace anything (no
            // MAP_FIXED; MAP_FIXED_NOREPLACE fails instead) touches no existing memory; the
            // result is checked for MAP_FAILED before use.
            unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    SPACE_SIZE + GUARD_SIZE,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | flags,
                    -1,
                    0,
                )
            }
        };
        // Low in the host's address space if that is free (it is in a position-independent
        // executable, which the kernel maps high), so compiled code adds the base as a 32-bit
        // displacement instead of loading it into a register for each access; else where the
        // kernel likes.
        let mut p = reserve(LOW_BASE, libc::MAP_FIXED_NOREPLACE);
        if p == libc::MAP_FAILED {
            p = reserve(0, 0);
        }
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave NULL"))?;
        Ok(GuestMemory {
            base,
            perms: vec![0u8; PAGE_COUNT].into_boxed_slice(),
            code_written: false,
            regions: RegionTable::default(),
            execute_only_seen: std::cell::Cell::new(false),
        })
    }

    /// The host address range of the reservation, guard included: where a host fault is a
    /// guest access.
    pub fn host_range(&self) -> std::ops::Range<usize> {
        let base = self.base.as_ptr() as usize;
        base..base + SPACE_SIZE + GUARD_SIZE
    }

    /// Give the host pages of a page-aligned range the guest's protections (see the module
    /// docs), or `open` them read-write for the emulator's own writes.
    fn set_host_protection(&self, start: u32, len: u64, open: bool) {
        let Some(r) = self.page_indices(start, len) else {
            return;
        };
        let prot_of = |bits: u8| {
            if open && bits & perm::NO_WRITE != 0 {
                return libc::PROT_READ;
            }
            if open {
                return libc::PROT_READ | libc::PROT_WRITE;
            }
            let mut prot = libc::PROT_NONE;
            if bits & perm::MAPPED != 0 && bits & (perm::R | perm::X) != 0 {
                prot |= libc::PROT_READ;
            }
            if bits & perm::MAPPED != 0 && bits & perm::W != 0 && bits & perm::NO_WRITE == 0 {
                prot |= libc::PROT_READ | libc::PROT_WRITE;
            }
            prot
        };
        let execute_only =
            |&bits: &u8| bits & (perm::MAPPED | perm::R | perm::X) == perm::MAPPED | perm::X;
        if !open && self.perms[r.clone()].iter().any(execute_only) {
            self.execute_only_seen.set(true);
        }
        let mut page = r.start;
        while page < r.end {
            let prot = prot_of(self.perms[page]);
            let run = self.perms[page..r.end]
                .iter()
                .take_while(|&&bits| prot_of(bits) == prot)
                .count();
            // SAFETY: the pages lie inside our own reservation (`page_indices` checked the
            // range); changing their protection touches no Rust object, and no Rust reference
            // into guest memory is alive across a permission change (callers hold &mut self
            // or are about to write through a raw pointer themselves).
            let rc = unsafe {
                libc::mprotect(
                    self.host_ptr((page as u32) << 12).cast(),
                    run * PAGE_SIZE as usize,
                    prot,
                )
            };
            if rc != 0 {
                // Only possible for a shared mapping of a file not open for writing, which
                // `prot_of` never opens for guest writes.
                tracing::warn!(
                    page = page << 12,
                    error = %io::Error::last_os_error(),
                    "cannot set host page protection"
                );
            }
            page += run;
        }
    }

    /// The host pages of `[va, va+len)` made writable for `write`, then given the guest's
    /// protections back. The range must be below 4 GiB.
    fn with_open_host_pages<T>(
        &mut self,
        va: u32,
        len: u64,
        write: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let start = va & !PAGE_MASK;
        let span = va as u64 - start as u64 + len;
        self.set_host_protection(start, span, true);
        let result = write(self);
        self.set_host_protection(start, span, false);
        result
    }

    /// Host address of guest address `va`. Always inside the reservation (any u32 is).
    #[inline(always)]
    pub fn host_ptr(&self, va: u32) -> *mut u8 {
        // SAFETY: the reservation is 4 GiB long, so every u32 offset stays inside it.
        unsafe { self.base.as_ptr().add(va as usize) }
    }

    /// Permission bits of the page holding `va`.
    #[inline(always)]
    pub fn page_perm(&self, va: u32) -> u8 {
        self.perms[(va >> 12) as usize]
    }

    /// True if every page of `[start, start+len)` is unmapped.
    pub fn is_free(&self, start: u32, len: u64) -> bool {
        self.page_indices(start, len)
            .is_some_and(|r| self.perms[r].iter().all(|&p| p & perm::MAPPED == 0))
    }

    /// True if every page of `[start, start+len)` is mapped.
    pub fn is_mapped(&self, start: u32, len: u64) -> bool {
        self.page_indices(start, len)
            .is_some_and(|r| self.perms[r].iter().all(|&p| p & perm::MAPPED != 0))
    }

    /// True if a page was ever mapped executable but not readable (the host page must stay
    /// readable for instruction fetch, so the host cannot catch a guest load from it). Never
    /// forgotten: such programs are rare, and a scan of the page table per question is not.
    pub fn has_execute_only_pages(&self) -> bool {
        self.execute_only_seen.get()
    }

    /// True if some page of `[start, start+len)` is mapped executable.
    pub fn any_executable(&self, start: u32, len: u64) -> bool {
        self.page_indices(start, len)
            .is_some_and(|r| self.perms[r].iter().any(|&p| p & perm::X != 0))
    }

    /// Page-table indices of a page-aligned range; `None` if it passes 4 GiB.
    fn page_indices(&self, start: u32, len: u64) -> Option<std::ops::Range<usize>> {
        let end = (start as u64).checked_add(len)?;
        if end > 1 << 32 {
            return None;
        }
        let first = (start >> 12) as usize;
        let last = end.div_ceil(PAGE_SIZE as u64) as usize;
        Some(first..last.max(first))
    }

    /// Release the host memory behind a page-aligned range, as MADV_DONTNEED does: private
    /// pages read back as zero, shared pages read back from their file or shared memory.
    pub fn drop_contents(&mut self, start: u32, len: u64) {
        if len == 0 || self.page_indices(start, len).is_none() {
            return;
        }
        // SAFETY: the range lies inside our own reservation (checked just above); MADV_DONTNEED
        // only drops page contents (private: zero-fill, shared: re-read from the object), and
        // no Rust reference into guest memory is alive across this call (we hold &mut self).
        let rc = unsafe {
            libc::madvise(
                self.host_ptr(start).cast(),
                len as usize,
                libc::MADV_DONTNEED,
            )
        };
        if rc != 0 && !self.any_shared(start, len) {
            // Cannot really fail on our own anonymous mapping; zero by hand if it does.
            tracing::warn!(start, len, "madvise(MADV_DONTNEED) failed; zeroing");
            // SAFETY: same range as above, inside the reservation and opened for writing on
            // the host (no page of it is a shared mapping, so all of it is the private
            // reservation).
            self.with_open_host_pages(start, len, |m| unsafe {
                std::ptr::write_bytes(m.host_ptr(start), 0, len as usize)
            });
        }
    }

    /// True if some page of `[start, start+len)` is a host shared mapping.
    fn any_shared(&self, start: u32, len: u64) -> bool {
        self.page_indices(start, len)
            .is_some_and(|r| self.perms[r].iter().any(|&p| p & perm::SHARED != 0))
    }

    /// Put fresh private anonymous host memory (the reservation's kind) over a page-aligned
    /// range, replacing shared mappings there. Returns false if the host refused.
    fn restore_private(&mut self, start: u32, len: u64) -> bool {
        // SAFETY: the range lies inside our reservation (callers checked it with
        // page_indices); MAP_FIXED replaces only our own pages there, and no Rust reference
        // into guest memory is alive (we hold &mut self).
        let p = unsafe {
            libc::mmap(
                self.host_ptr(start).cast(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            tracing::error!(
                start,
                len,
                error = %io::Error::last_os_error(),
                "cannot put private memory back over a shared mapping"
            );
            return false;
        }
        true
    }

    /// Make a page-aligned range private zero-filled host memory again.
    fn release(&mut self, start: u32, len: u64) {
        if len == 0 {
            return;
        }
        if self.any_shared(start, len) {
            self.restore_private(start, len);
        } else {
            self.drop_contents(start, len);
        }
    }

    /// Map a page-aligned range of private anonymous memory with `perms` (plus MAPPED),
    /// zero-filled.
    pub fn map(&mut self, start: u32, len: u64, perms: u8) {
        self.map_as(start, len, perms, Mapping::anonymous());
    }

    /// Map a page-aligned range of private memory, zero-filled, described as `mapping` (a
    /// named area, or the file a private file mapping was read from).
    pub fn map_as(&mut self, start: u32, len: u64, perms: u8, mapping: Mapping) {
        let Some(r) = self.page_indices(start, len) else {
            return;
        };
        self.release(start, len);
        self.perms[r].fill((perms & perm::ACCESS) | perm::MAPPED);
        self.set_host_protection(start, len, false);
        self.regions
            .insert(start as u64..start as u64 + len, mapping);
    }

    /// Map `mapping`'s shared host object (`mapping.shared`, which must be set) at a
    /// page-aligned range: a file MAP_SHARED from offset `mapping.offset`, or a System V
    /// segment attached there (from its start). Guest stores reach the object directly and
    /// other mappings of it (in this process, in forked ones, in other host processes) see
    /// them at once.
    pub fn map_shared(
        &mut self,
        start: u32,
        len: u64,
        perms: u8,
        mapping: Mapping,
    ) -> io::Result<()> {
        let (Some(r), Some(object)) = (self.page_indices(start, len), mapping.shared.as_ref())
        else {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        };
        let offset = libc::off_t::try_from(mapping.offset)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let host_prot = if object.writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        let mapped = match &object.host {
            // SAFETY: the range lies inside our reservation (page_indices checked it);
            // MAP_FIXED replaces only our own pages there. The fd is a live host file kept
            // open by `mapping`. No Rust reference into guest memory is alive (&mut self).
            SharedHost::File(fd) => unsafe {
                libc::mmap(
                    self.host_ptr(start).cast(),
                    len as usize,
                    host_prot,
                    libc::MAP_SHARED | libc::MAP_FIXED,
                    fd.as_raw_fd(),
                    offset,
                ) != libc::MAP_FAILED
            },
            // A segment is attached from its start only.
            SharedHost::SysvShm { .. } if offset != 0 => {
                return Err(io::Error::from_raw_os_error(libc::EINVAL))
            }
            SharedHost::SysvShm { id } => {
                let flags = libc::SHM_REMAP | if object.writable { 0 } else { libc::SHM_RDONLY };
                // SAFETY: as for the file: SHM_REMAP replaces only our own pages in the
                // reservation (the address is page-aligned, SHMLBA on x86-64); a bad id only
                // makes shmat fail.
                unsafe { libc::shmat(*id, self.host_ptr(start).cast(), flags) as isize != -1 }
            }
        };
        if !mapped {
            let error = io::Error::last_os_error();
            // A failed MAP_FIXED may have unmapped the range already: put memory back.
            self.restore_private(start, len);
            self.perms[r].fill(0);
            self.set_host_protection(start, len, false);
            self.regions.remove(start as u64..start as u64 + len);
            return Err(error);
        }
        let mut bits = (perms & perm::ACCESS) | perm::MAPPED | perm::SHARED;
        if !object.writable {
            bits |= perm::NO_WRITE;
        }
        self.perms[r].fill(bits);
        self.set_host_protection(start, len, false);
        self.regions
            .insert(start as u64..start as u64 + len, mapping);
        Ok(())
    }

    /// Unmap a page-aligned range: forbid access and release its host memory.
    pub fn unmap(&mut self, start: u32, len: u64) {
        let Some(r) = self.page_indices(start, len) else {
            return;
        };
        self.release(start, len);
        self.perms[r].fill(0);
        self.set_host_protection(start, len, false);
        self.regions.remove(start as u64..start as u64 + len);
    }

    /// Change the guest access bits of a page-aligned, fully mapped range; on error nothing
    /// changes.
    pub fn protect(&mut self, start: u32, len: u64, perms: u8) -> Result<(), ProtectError> {
        if !self.is_mapped(start, len) {
            return Err(ProtectError::NotMapped);
        }
        let Some(r) = self.page_indices(start, len) else {
            return Err(ProtectError::NotMapped);
        };
        if perms & perm::W != 0
            && self.perms[r.clone()]
                .iter()
                .any(|&p| p & perm::NO_WRITE != 0)
        {
            return Err(ProtectError::ReadOnlyFile);
        }
        for p in &mut self.perms[r] {
            *p = (*p & !perm::ACCESS) | (perms & perm::ACCESS);
        }
        self.set_host_protection(start, len, false);
        Ok(())
    }

    /// Describe an already mapped private range as `mapping` (the loader naming the pages of
    /// the program file).
    pub fn describe(&mut self, range: std::ops::Range<u64>, mapping: Mapping) {
        self.regions.insert(range, mapping);
    }

    /// What the mappings are (for /proc/self/maps and mremap).
    pub fn regions(&self) -> &RegionTable {
        &self.regions
    }

    /// `msync` the host pages of a page-aligned range (shared mappings reach their files).
    pub fn sync(&self, start: u32, len: u64, flags: i32) -> io::Result<()> {
        if len == 0 || self.page_indices(start, len).is_none() {
            return Ok(());
        }
        // SAFETY: the range lies inside our reservation; msync has no effect on memory
        // contents.
        let rc = unsafe { libc::msync(self.host_ptr(start).cast(), len as usize, flags) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Find a free page-aligned range of `len` bytes, as high as possible, lying within
    /// `[bottom, top)`.
    pub fn find_free(&self, len: u64, bottom: u32, top: u32) -> Option<u32> {
        let pages = len.div_ceil(PAGE_SIZE as u64) as usize;
        let lo = bottom.div_ceil(PAGE_SIZE) as usize;
        let hi = (top >> 12) as usize;
        if pages == 0 || hi < lo || hi - lo < pages {
            return None;
        }
        // Walk down from the top counting free pages in a row.
        let mut run = 0usize;
        let mut i = hi;
        while i > lo {
            i -= 1;
            if self.perms[i] & perm::MAPPED == 0 {
                run += 1;
                if run == pages {
                    return Some((i as u32) << 12);
                }
            } else {
                run = 0;
            }
        }
        None
    }

    /// Check that `[va, va+len)` is accessible with all of `need`; the error names the first
    /// byte that is not.
    pub fn check(&self, va: u32, len: u64, need: u8) -> Result<(), Fault> {
        let accessible = self.accessible_len(va, len, need);
        if accessible == len {
            Ok(())
        } else {
            Err(Fault {
                addr: va.wrapping_add(accessible as u32),
            })
        }
    }

    /// How many bytes from `va` on (at most `len`) are accessible with all of `need`.
    pub fn accessible_len(&self, va: u32, len: u64, need: u8) -> u64 {
        let mut done = 0u64;
        while done < len {
            let addr = va as u64 + done;
            if addr >= 1 << 32 || self.page_perm(addr as u32) & need != need {
                return done;
            }
            let page_left = PAGE_SIZE as u64 - (addr & PAGE_MASK as u64);
            done += page_left;
        }
        len
    }

    /// Note that guest memory `[va, va+len)` was just written through a checked path.
    fn note_write(&mut self, va: u32, len: u64) {
        if !self.code_written && len != 0 {
            let start = va & !PAGE_MASK;
            let span = va as u64 - start as u64 + len;
            if self.any_executable(start, span) {
                self.code_written = true;
            }
        }
    }

    /// Whether a checked write touched an executable page since the last call (and reset).
    pub fn take_code_written(&mut self) -> bool {
        std::mem::take(&mut self.code_written)
    }

    /// Guest bytes `[va, va+len)`, which must be readable.
    pub fn slice(&self, va: u32, len: u32) -> Result<&[u8], Fault> {
        self.check(va, len as u64, perm::R)?;
        // SAFETY: the range is inside the reservation (check() rejects ranges past 4 GiB) and
        // host-readable. The shared borrow of `self` keeps every mutation path (they all take
        // &mut self) away while the slice lives; the engine does not run during syscalls.
        Ok(unsafe { std::slice::from_raw_parts(self.host_ptr(va), len as usize) })
    }

    /// Guest bytes `[va, va+len)` for writing, which must be writable.
    pub fn slice_mut(&mut self, va: u32, len: u32) -> Result<&mut [u8], Fault> {
        self.check(va, len as u64, perm::W)?;
        self.note_write(va, len as u64);
        // SAFETY: as in `slice`; the exclusive borrow of `self` makes this the only live
        // reference into guest memory.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host_ptr(va), len as usize) })
    }

    /// Copy guest memory into `buf`.
    pub fn read(&self, va: u32, buf: &mut [u8]) -> Result<(), Fault> {
        buf.copy_from_slice(self.slice(va, buf.len() as u32)?);
        Ok(())
    }

    /// Copy `data` into guest memory (which must be writable).
    pub fn write(&mut self, va: u32, data: &[u8]) -> Result<(), Fault> {
        self.slice_mut(va, data.len() as u32)?.copy_from_slice(data);
        Ok(())
    }

    /// Copy `data` into guest memory ignoring guest permissions (the loader filling read-only
    /// segments). The range must not pass 4 GiB.
    pub fn write_initial(&mut self, va: u32, data: &[u8]) {
        if va as u64 + data.len() as u64 > 1 << 32 {
            return;
        }
        // SAFETY: the range is inside the reservation, opened for writing on the host; no
        // reference into guest memory is alive (we hold &mut self).
        self.with_open_host_pages(va, data.len() as u64, |m| unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), m.host_ptr(va), data.len())
        });
    }

    /// How many bytes from `va` on (at most `len`) lie in pages that pass `ok`.
    fn run_of_pages(&self, va: u32, len: usize, ok: impl Fn(u8) -> bool) -> usize {
        let mut done = 0usize;
        while done < len {
            let addr = va as u64 + done as u64;
            if addr >= 1 << 32 || !ok(self.page_perm(addr as u32)) {
                break;
            }
            done += PAGE_SIZE as usize - (addr as usize & PAGE_MASK as usize);
        }
        done.min(len)
    }

    /// Read guest memory as `/proc/self/mem` does (the kernel's FOLL_FORCE): every mapped page
    /// is readable whatever its protection. Stops at the first unmapped page; returns the
    /// number of bytes copied into `buf`.
    pub fn read_forced(&self, va: u32, buf: &mut [u8]) -> usize {
        let n = self.run_of_pages(va, buf.len(), |p| p & perm::MAPPED != 0);
        // Pages the guest may not read have no host access either: open them for the copy.
        let start = va & !PAGE_MASK;
        let span = va as u64 - start as u64 + n as u64;
        self.set_host_protection(start, span, true);
        // SAFETY: `[va, va+n)` lies in mapped pages below 4 GiB, inside the reservation; each
        // is host-readable now (private reservation memory, or a shared mapping, which is
        // always mapped with at least host PROT_READ).
        unsafe { std::ptr::copy_nonoverlapping(self.host_ptr(va), buf.as_mut_ptr(), n) };
        self.set_host_protection(start, span, false);
        n
    }

    /// Write guest memory as `/proc/self/mem` does: private pages whatever their protection
    /// (the kernel breaks copy-on-write), shared pages only if the guest may write them.
    /// Stops at the first page that cannot be written; returns the number of bytes written.
    pub fn write_forced(&mut self, va: u32, data: &[u8]) -> usize {
        let n = self.run_of_pages(va, data.len(), |p| {
            p & perm::MAPPED != 0 && (p & perm::SHARED == 0 || p & perm::W != 0)
        });
        if n > 0 {
            let start = va & !PAGE_MASK;
            if self.any_executable(start, va as u64 - start as u64 + n as u64) {
                self.code_written = true;
            }
        }
        // SAFETY: `[va, va+n)` lies in mapped pages below 4 GiB, inside the reservation; each
        // is opened for writing on the host: private pages are reservation memory, and a
        // shared page the guest may write was mapped with host PROT_WRITE (NO_WRITE pages
        // never get the guest W bit).
        self.with_open_host_pages(va, n as u64, |m| unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), m.host_ptr(va), n)
        });
        n
    }

    /// Fill `[va, va+len)` (mapped, below 4 GiB) with `fill`, whatever the guest's
    /// permissions (a private file mapping read from its file).
    pub fn fill_initial<T>(&mut self, va: u32, len: u64, fill: impl FnOnce(&mut Self) -> T) -> T {
        self.with_open_host_pages(va, len, fill)
    }

    /// Read a little-endian u32.
    pub fn read_u32(&self, va: u32) -> Result<u32, Fault> {
        let mut b = [0u8; 4];
        self.read(va, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Write a little-endian u32.
    pub fn write_u32(&mut self, va: u32, v: u32) -> Result<(), Fault> {
        self.write(va, &v.to_le_bytes())
    }

    /// Read a little-endian u64.
    pub fn read_u64(&self, va: u32) -> Result<u64, Fault> {
        let mut b = [0u8; 8];
        self.read(va, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Write a little-endian u64.
    pub fn write_u64(&mut self, va: u32, v: u64) -> Result<(), Fault> {
        self.write(va, &v.to_le_bytes())
    }

    /// Read a NUL-terminated string of at most `max` bytes (without the NUL). `Ok(None)` if no
    /// NUL appears within `max` bytes.
    pub fn read_cstr(&self, va: u32, max: usize) -> Result<Option<Vec<u8>>, Fault> {
        let mut out = Vec::new();
        let mut addr = va;
        loop {
            if self.page_perm(addr) & perm::R == 0 {
                return Err(Fault { addr });
            }
            let page_left = (PAGE_SIZE - (addr & PAGE_MASK)) as usize;
            // SAFETY: the page holding `addr` is guest-readable and inside the reservation;
            // we read at most to its end.
            let chunk = unsafe { std::slice::from_raw_parts(self.host_ptr(addr), page_left) };
            if let Some(nul) = chunk.iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..nul]);
                return Ok((out.len() <= max).then_some(out));
            }
            out.extend_from_slice(chunk);
            if out.len() > max {
                return Ok(None);
            }
            addr = match addr.checked_add(page_left as u32) {
                Some(a) => a,
                None => return Err(Fault { addr: 0 }),
            };
        }
    }

    /// Move the mapping `[old, old+len)` (page-aligned) to `new`, disjoint from it: host pages
    /// (private contents, or the shared mapping itself), permissions and description.
    /// Whatever was mapped at `new` is replaced; `old` is unmapped afterwards.
    pub fn move_range(&mut self, old: u32, new: u32, len: u64) {
        let (Some(src), Some(dst)) = (self.page_indices(old, len), self.page_indices(new, len))
        else {
            return;
        };
        if len == 0 {
            return;
        }
        self.unmap(new, len);
        // SAFETY: both ranges lie inside our reservation (page_indices checked them) and do
        // not overlap (callers guarantee it). mremap with MREMAP_FIXED atomically replaces the
        // destination with the source pages (private or shared alike); the source hole is
        // refilled below. No Rust reference into guest memory is alive (we hold &mut self).
        let moved = unsafe {
            libc::mremap(
                self.host_ptr(old).cast(),
                len as usize,
                len as usize,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                self.host_ptr(new).cast::<libc::c_void>(),
            ) != libc::MAP_FAILED
        };
        let mut perms = self.perms[src.clone()].to_vec();
        let mut described = self.regions.within(old as u64..old as u64 + len);
        if moved {
            // The reservation must stay contiguous: private memory goes back into the hole.
            self.restore_private(old, len);
        } else {
            tracing::warn!(
                old,
                new,
                len,
                "host mremap failed; copying (a shared mapping becomes a private copy)"
            );
            self.with_open_host_pages(old, len, |m| {
                m.with_open_host_pages(new, len, |m| {
                    // SAFETY: both ranges are inside the reservation and disjoint, and opened
                    // for reading and writing on the host; the destination was just made
                    // private memory by unmap().
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            m.host_ptr(old),
                            m.host_ptr(new),
                            len as usize,
                        )
                    }
                })
            });
            self.release(old, len);
            for p in &mut perms {
                *p &= !(perm::SHARED | perm::NO_WRITE);
            }
            for (_, mapping) in &mut described {
                mapping.shared = None;
            }
        }
        self.perms[src].fill(0);
        self.perms[dst].copy_from_slice(&perms);
        self.set_host_protection(old, len, false);
        self.set_host_protection(new, len, false);
        self.regions.remove(old as u64..old as u64 + len);
        for (range, mapping) in described {
            let at = range.start - old as u64 + new as u64;
            self.regions
                .insert(at..at + (range.end - range.start), mapping);
        }
    }
}

impl Drop for GuestMemory {
    fn drop(&mut self) {
        // SAFETY: `base` came from our mmap of SPACE_SIZE + GUARD_SIZE bytes and is unmapped exactly once,
        // here; nothing can use it afterwards (the hart TLB of a finished run is not used again:
        // the process owns both and drops them together).
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), SPACE_SIZE + GUARD_SIZE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::regions::{SharedHost, SharedObject};
    use super::*;
    use std::os::fd::OwnedFd;

    /// The host protection of the host page at `addr`, as /proc/self/maps shows it ("rw-").
    fn host_protection_at(addr: usize) -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
        maps.lines()
            .find_map(|line| {
                let (range, rest) = line.split_once(' ')?;
                let (lo, hi) = range.split_once('-')?;
                let (lo, hi) = (
                    usize::from_str_radix(lo, 16).ok()?,
                    usize::from_str_radix(hi, 16).ok()?,
                );
                (lo..hi).contains(&addr).then(|| rest[..3].to_string())
            })
            .expect("address mapped")
    }

    #[test]
    fn host_pages_carry_the_guest_protections() {
        let mut m = GuestMemory::new().expect("reserve");
        let at = |m: &GuestMemory, va: u32| host_protection_at(m.host_ptr(va) as usize);
        assert_eq!(at(&m, 0x1000), "---", "unmapped");
        m.map(0x1000, 0x3000, perm::R | perm::W);
        assert_eq!(m.protect(0x2000, 0x1000, perm::R), Ok(()));
        assert_eq!(m.protect(0x3000, 0x1000, perm::X), Ok(()));
        assert_eq!(at(&m, 0x1000), "rw-");
        assert_eq!(at(&m, 0x2000), "r--");
        assert_eq!(at(&m, 0x3000), "r--", "executable: readable for fetch");
        assert!(m.has_execute_only_pages());
        // The emulator's own writes open the pages and close them again.
        m.write_initial(0x2ffe, b"abcd");
        assert_eq!(m.write_forced(0x2000, b"x"), 1);
        assert_eq!(at(&m, 0x2000), "r--");
        assert_eq!(at(&m, 0x3000), "r--");
        assert_eq!(m.slice(0x2ffe, 2).expect("readable"), b"ab");
        let mut buf = [0u8; 2];
        assert_eq!(m.read_forced(0x3000, &mut buf), 2);
        assert_eq!(&buf, b"cd");
        m.unmap(0x1000, 0x3000);
        assert_eq!(at(&m, 0x2000), "---");
        // Past 4 GiB: the guard.
        assert_eq!(
            host_protection_at(m.host_ptr(0xffff_fffc) as usize + 8),
            "---"
        );
    }

    #[test]
    fn permissions_are_enforced() {
        let mut m = GuestMemory::new().expect("reserve");
        assert_eq!(m.check(0x1000, 4, perm::R), Err(Fault { addr: 0x1000 }));
        m.map(0x1000, 0x2000, perm::R | perm::W);
        assert!(m.check(0x1000, 0x2000, perm::R | perm::W).is_ok());
        assert_eq!(m.check(0x2ffe, 4, perm::R), Err(Fault { addr: 0x3000 }));
        m.write_u32(0x1ffe, 0xdead_beef)
            .expect("write across pages");
        assert_eq!(m.read_u32(0x1ffe), Ok(0xdead_beef));
        assert_eq!(m.protect(0x2000, 0x1000, perm::R), Ok(()));
        assert_eq!(m.write_u32(0x1ffe, 0), Err(Fault { addr: 0x2000 }));
        assert!(m.read_u32(0x1ffe).is_ok());
        assert_eq!(
            m.protect(0x2000, 0x2000, perm::R),
            Err(ProtectError::NotMapped),
            "partly unmapped"
        );
        m.unmap(0x1000, 0x1000);
        assert_eq!(m.read_u32(0x1000), Err(Fault { addr: 0x1000 }));
        // Wrapping past 4 GiB is a fault, not an overflow.
        assert!(m.check(0xffff_fffe, 4, perm::R).is_err());
    }

    #[test]
    fn unmap_zeroes_and_map_gives_zero() {
        let mut m = GuestMemory::new().expect("reserve");
        m.map(0x40_0000, 0x1000, perm::R | perm::W);
        m.write(0x40_0010, b"abc").expect("write");
        m.unmap(0x40_0000, 0x1000);
        m.map(0x40_0000, 0x1000, perm::R | perm::W);
        assert_eq!(m.slice(0x40_0010, 3).expect("read"), &[0, 0, 0]);
    }

    #[test]
    fn find_free_is_top_down_and_respects_bounds() {
        let mut m = GuestMemory::new().expect("reserve");
        assert_eq!(m.find_free(0x2000, 0x10000, 0x20000), Some(0x1e000));
        m.map(0x1e000, 0x1000, perm::R);
        assert_eq!(m.find_free(0x2000, 0x10000, 0x20000), Some(0x1c000));
        assert_eq!(m.find_free(0x1000, 0x10000, 0x20000), Some(0x1f000));
        assert_eq!(m.find_free(0x20000, 0x10000, 0x20000), None);
        assert!(m.is_free(0x1f000, 0x1000));
        assert!(!m.is_free(0x1d000, 0x2000));
    }

    #[test]
    fn cstr_and_code_write_tracking() {
        let mut m = GuestMemory::new().expect("reserve");
        m.map(0x5000, 0x1000, perm::R | perm::W);
        m.write(0x5ffc, b"abc\0").expect("write");
        assert_eq!(m.read_cstr(0x5ffc, 10), Ok(Some(b"abc".to_vec())));
        assert_eq!(m.read_cstr(0x5ffc, 2), Ok(None));
        m.write(0x5ffc, b"abcd").expect("write");
        assert_eq!(m.read_cstr(0x5ffc, 10), Err(Fault { addr: 0x6000 }));
        assert!(!m.take_code_written());
        m.map(0x7000, 0x1000, perm::R | perm::W | perm::X);
        m.write(0x7004, b"x").expect("write");
        assert!(m.take_code_written());
        assert!(!m.take_code_written());
    }

    /// A temporary host file of `len` bytes of `fill`, open read-write (or read-only).
    fn temp_file(tag: &str, len: usize, fill: u8, writable: bool) -> (std::path::PathBuf, OwnedFd) {
        let path = std::env::temp_dir().join(format!(
            "rv32vm-mem-{}-{tag}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&path, vec![fill; len]).expect("write temp file");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(writable)
            .open(&path)
            .expect("open temp file");
        (path, OwnedFd::from(file))
    }

    fn shared(fd: OwnedFd, writable: bool, offset: u64) -> Mapping {
        Mapping {
            name: super::super::regions::MapName::Anonymous,
            offset,
            shared: Some(SharedObject {
                host: SharedHost::File(std::rc::Rc::new(fd)),
                writable,
            }),
        }
    }

    fn pread_byte(fd: &OwnedFd, at: u64) -> u8 {
        let mut b = [0u8; 1];
        std::os::unix::fs::FileExt::read_exact_at(
            &std::fs::File::from(fd.try_clone().expect("dup")),
            &mut b,
            at,
        )
        .expect("pread");
        b[0]
    }

    #[test]
    fn shared_mappings_are_the_file() {
        let (path, fd) = temp_file("shared", 0x3000, b'a', true);
        let check_fd = fd.try_clone().expect("dup");
        let mut m = GuestMemory::new().expect("reserve");
        m.map_shared(
            0x40_0000,
            0x2000,
            perm::R | perm::W,
            shared(fd, true, 0x1000),
        )
        .expect("map shared");
        m.write(0x40_0010, b"X").expect("write");
        assert_eq!(
            pread_byte(&check_fd, 0x1010),
            b'X',
            "store reaches the file"
        );
        // Moving keeps the sharing.
        m.move_range(0x40_0000, 0x50_0000, 0x2000);
        m.write(0x50_1000, b"Y").expect("write moved");
        assert_eq!(
            pread_byte(&check_fd, 0x2000),
            b'Y',
            "moved mapping is still the file"
        );
        assert!(m.is_free(0x40_0000, 0x2000));
        // Unmapping puts private memory back: the file no longer changes.
        m.unmap(0x50_0000, 0x2000);
        m.map(0x50_0000, 0x2000, perm::R | perm::W);
        assert_eq!(
            m.slice(0x50_1000, 1).expect("read"),
            &[0],
            "fresh private memory"
        );
        m.write(0x50_1000, b"Z").expect("write private");
        assert_eq!(
            pread_byte(&check_fd, 0x2000),
            b'Y',
            "private store stays private"
        );
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn read_only_shared_mappings_never_become_writable() {
        let (path, fd) = temp_file("readonly", 0x1000, b'r', false);
        let mut m = GuestMemory::new().expect("reserve");
        m.map_shared(0x40_0000, 0x1000, perm::R, shared(fd, false, 0))
            .expect("map shared read-only");
        assert_eq!(
            m.protect(0x40_0000, 0x1000, perm::R | perm::W),
            Err(ProtectError::ReadOnlyFile)
        );
        assert_eq!(m.protect(0x40_0000, 0x1000, 0), Ok(()), "PROT_NONE is fine");
        // /proc/self/mem may read it (forced), but never write it.
        let mut b = [0u8; 2];
        assert_eq!(m.read_forced(0x40_0000, &mut b), 2);
        assert_eq!(&b, b"rr");
        assert_eq!(m.write_forced(0x40_0000, b"w"), 0);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn forced_access_ignores_protection_and_stops_at_holes() {
        let mut m = GuestMemory::new().expect("reserve");
        m.map(0x1000, 0x1000, 0);
        assert_eq!(
            m.write_forced(0x1ffe, b"abcd"),
            2,
            "stops at the unmapped page"
        );
        let mut b = [0u8; 4];
        assert_eq!(m.read_forced(0x1ffe, &mut b), 2);
        assert_eq!(&b[..2], b"ab");
        assert_eq!(m.read_forced(0x5000, &mut b), 0);
        assert!(!m.take_code_written());
        m.map(0x7000, 0x1000, perm::R | perm::X);
        assert_eq!(m.write_forced(0x7000, b"x"), 1);
        assert!(m.take_code_written(), "forced writes into code are noticed");
    }

    #[test]
    fn move_pages_keeps_contents() {
        let mut m = GuestMemory::new().expect("reserve");
        m.map(0x10000, 0x2000, perm::R | perm::W);
        m.write(0x10ff0, b"moved data").expect("write");
        m.map(0x30000, 0x2000, perm::R | perm::W);
        m.move_range(0x10000, 0x30000, 0x2000);
        assert_eq!(m.slice(0x30ff0, 10).expect("read"), b"moved data");
        assert!(m.is_free(0x10000, 0x2000), "the old range is unmapped");
        m.map(0x10000, 0x2000, perm::R);
        assert_eq!(m.slice(0x10ff0, 10).expect("mapped again"), &[0u8; 10]);
    }
}
