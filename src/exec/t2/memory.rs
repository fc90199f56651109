//! Memory for the machine code of one code epoch: each region's loaded object (its code and
//! constants side by side) is carved from large read-write-execute host mappings. Regions of
//! an epoch run while later regions of the same epoch are still being loaded next to them, so
//! code pages can never be switched to read-write and back. Everything is unmapped at once
//! when the epoch's code is dropped.

/// Size of one host mapping (larger objects get a mapping of their own size).
const CHUNK_SIZE: usize = 1 << 20;

/// The code memory of one epoch: bump allocation within the newest mapping.
#[derive(Debug, Default)]
pub struct CodeMemory {
    mappings: Vec<(usize, usize)>,
    next: usize,
    end: usize,
}

impl CodeMemory {
    pub fn new() -> CodeMemory {
        CodeMemory::default()
    }

    /// `size` bytes aligned to `align` (at least 16), mapping a new chunk when the current one
    /// is full; `None` when the host refuses memory.
    pub fn allocate(&mut self, size: usize, align: usize) -> Option<*mut u8> {
        let align = align.max(16).checked_next_power_of_two()?;
        let start = self.next.checked_next_multiple_of(align)?;
        if self.end != 0 && start.checked_add(size).is_some_and(|end| end <= self.end) {
            self.next = start + size;
            return Some(start as *mut u8);
        }
        let len = size
            .checked_add(align)?
            .max(CHUNK_SIZE)
            .checked_next_multiple_of(4096)?;
        // SAFETY: a fresh anonymous private mapping at a kernel-chosen address touches no
        // existing memory; MAP_FAILED is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            tracing::warn!("tier 2: no host memory for {size} bytes of region code");
            return None;
        }
        let base = p as usize;
        self.mappings.push((base, len));
        let start = base.next_multiple_of(align);
        self.next = start + size;
        self.end = base + len;
        Some(start as *mut u8)
    }
}

impl Drop for CodeMemory {
    fn drop(&mut self) {
        for (base, len) in self.mappings.drain(..) {
            // SAFETY: each mapping was made by `allocate` and is unmapped once; the worker
            // drops an epoch's code only once the run loop said no region of that epoch can
            // run any more.
            unsafe { libc::munmap(base as *mut libc::c_void, len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_and_disjoint() {
        let mut m = CodeMemory::new();
        let a = m.allocate(100, 16).expect("memory") as usize;
        let b = m.allocate(3 << 20, 4096).expect("memory") as usize;
        let c = m.allocate(10, 64).expect("memory") as usize;
        assert_eq!((a % 16, b % 4096, c % 64), (0, 0, 0));
        for (x, xl, y, yl) in [(a, 100, b, 3 << 20), (a, 100, c, 10), (b, 3 << 20, c, 10)] {
            assert!(
                x + xl <= y || y + yl <= x,
                "{x:#x}+{xl} overlaps {y:#x}+{yl}"
            );
        }
        // SAFETY: each pointer is to at least as many writable bytes as were asked for.
        unsafe {
            std::ptr::write_bytes(b as *mut u8, 0xc3, 3 << 20);
            std::ptr::write_bytes(c as *mut u8, 1, 10);
        }
        assert!(m.allocate(usize::MAX - 8, 16).is_none());
    }
}
