//! Guest RAM: one anonymous host mapping at a guest physical base. CPU loads and stores reach it
//! through host pointers handed to the TLB; loaders and firmware use the checked accessors.

use crate::cpu::Hart;

/// Guest RAM at physical `[base, base + size)`.
pub struct GuestRam {
    ptr: *mut u8,
    base: u32,
    size: u32,
}

/// The host refused to map guest RAM.
#[derive(Debug, thiserror::Error)]
#[error("cannot allocate {0} bytes of guest RAM")]
pub struct RamError(pub u32);

impl GuestRam {
    /// Map `size` bytes of zeroed RAM at guest physical address `base`.
    pub fn new(base: u32, size: u32) -> Result<GuestRam, RamError> {
        if size == 0 || base as u64 + size as u64 > 1 << 32 {
            return Err(RamError(size));
        }
        // SAFETY: an anonymous private mapping with no address hint has no preconditions; the
        // result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(RamError(size));
        }
        Ok(GuestRam {
            ptr: ptr.cast(),
            base,
            size,
        })
    }

    pub fn base(&self) -> u32 {
        self.base
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    /// Host pointer of physical address `pa` if `len` bytes from it are RAM.
    #[inline]
    pub fn host(&self, pa: u64, len: u64) -> Option<*mut u8> {
        let off = pa.checked_sub(self.base as u64)?;
        if off.checked_add(len)? <= self.size as u64 {
            // SAFETY: `off + len <= size`, so the offset pointer stays inside the mapping.
            Some(unsafe { self.ptr.add(off as usize) })
        } else {
            None
        }
    }

    /// The bytes at `[pa, pa + len)`, if all are RAM.
    pub fn bytes(&self, pa: u64, len: u64) -> Option<&[u8]> {
        let p = self.host(pa, len)?;
        // SAFETY: `host` checked the range lies inside the live mapping; the shared borrow of
        // `self` keeps the mapping alive.
        Some(unsafe { std::slice::from_raw_parts(p, len as usize) })
    }

    /// Copy `data` to `pa`; `false` (and nothing written) if the range is not all RAM.
    pub fn write(&mut self, pa: u64, data: &[u8]) -> bool {
        match self.host(pa, data.len() as u64) {
            Some(p) => {
                // SAFETY: `host` checked the destination range lies inside the mapping, and
                // `data` cannot overlap guest RAM borrowed mutably here.
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
                true
            }
            None => false,
        }
    }

    /// Read a little-endian word at `pa`.
    pub fn read_u32(&self, pa: u64) -> Option<u32> {
        let b = self.bytes(pa, 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

impl GuestRam {
    /// A debugger's read at virtual address `va` through `hart`'s current translation (no
    /// A/D update, no device access): copies into `buf` up to the first byte that is not
    /// RAM; returns the bytes copied.
    pub fn debug_read(&mut self, hart: &Hart, va: u32, buf: &mut [u8]) -> usize {
        self.debug_copy(hart, va, buf.len(), |host, at, n| {
            // SAFETY: `host` points at `n` bytes of this mapping (checked by `host`), and
            // `buf[at..at + n]` is in bounds (`debug_copy` splits `buf.len()`).
            unsafe { std::ptr::copy_nonoverlapping(host, buf[at..].as_mut_ptr(), n) }
        })
    }

    /// A debugger's write at virtual address `va`, like [`GuestRam::debug_read`].
    pub fn debug_write(&mut self, hart: &Hart, va: u32, data: &[u8]) -> usize {
        self.debug_copy(hart, va, data.len(), |host, at, n| {
            // SAFETY: as in `debug_read`, in the other direction.
            unsafe { std::ptr::copy_nonoverlapping(data[at..].as_ptr(), host, n) }
        })
    }

    /// A write by the platform on the hart's behalf (a semihosting call's results) at virtual
    /// address `va`, translated like [`GuestRam::debug_write`]. Code in the pages it changes
    /// is dropped as after the hart's own stores. Returns how many bytes were written.
    pub fn write_for_hart(&mut self, hart: &mut Hart, va: u32, data: &[u8]) -> usize {
        let mut pages = Vec::new();
        let done = self.debug_copy(hart, va, data.len(), |host, at, n| {
            // SAFETY: as in `debug_write`.
            unsafe { std::ptr::copy_nonoverlapping(data[at..].as_ptr(), host, n) };
            pages.push(host as usize);
        });
        for host in pages {
            hart.code_pages.note_store(host);
        }
        done
    }

    /// Walk `[va, va + len)` page by page through the debugger's translation, calling `copy`
    /// with the host address, the offset into the range and the length of each piece.
    fn debug_copy(
        &mut self,
        hart: &Hart,
        va: u32,
        len: usize,
        mut copy: impl FnMut(*mut u8, usize, usize),
    ) -> usize {
        let mut done = 0;
        while done < len {
            let addr = va.wrapping_add(done as u32);
            let in_page = (4096 - (addr & 0xfff) as usize).min(len - done);
            let Some(pa) = hart.translate_for_debugger(self, addr) else {
                break;
            };
            let Some(host) = self.host(pa, in_page as u64) else {
                break;
            };
            copy(host, done, in_page);
            done += in_page;
        }
        done
    }
}

/// Page tables live in guest RAM: the one Sv32 walker (`cpu::mmu`) reads and updates PTEs here
/// for the machine and the bare-metal platform alike. A PTE address outside RAM is an access
/// fault.
impl crate::cpu::mmu::PageTableMemory for GuestRam {
    fn read_pte(&mut self, pa: u64) -> Option<u32> {
        self.read_u32(pa)
    }

    fn write_pte(&mut self, pa: u64, pte: u32) -> bool {
        self.write(pa, &pte.to_le_bytes())
    }
}

impl Drop for GuestRam {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`size` describe the mapping created in `new`, unmapped only here.
        unsafe { libc::munmap(self.ptr.cast(), self.size as usize) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_check_bounds() {
        let mut ram = GuestRam::new(0x8000_0000, 0x2000).unwrap();
        assert!(ram.host(0x7fff_ffff, 1).is_none());
        assert!(ram.host(0x8000_1fff, 1).is_some());
        assert!(ram.host(0x8000_1fff, 2).is_none());
        assert!(ram.write(0x8000_0010, &[1, 2, 3, 4]));
        assert_eq!(ram.read_u32(0x8000_0010), Some(0x0403_0201));
        assert!(!ram.write(0x8000_1ffe, &[1, 2, 3, 4]));
        assert!(ram.bytes(u64::MAX, 2).is_none());
    }
}
