//! Memory for the machine code of one code epoch: each region's loaded object (its code and
//! constants side by side) is carved from large read-write-execute host mappings, placed
//! within reach of this executable's code: region code is compiled for the small code model
//! and calls the helpers with 32-bit displacements ([`near_mapping`]). Regions of
//! an epoch run while later regions of the same epoch are still being loaded next to them, so
//! code pages can never be switched to read-write and back. Everything is unmapped at once
//! when the epoch's code is dropped.

use std::sync::atomic::{AtomicUsize, Ordering};

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
        let Some(base) = near_mapping(len) else {
            tracing::warn!("tier 2: no host memory near the executable for {size} bytes of code");
            return None;
        };
        self.mappings.push((base, len));
        let start = base.next_multiple_of(align);
        self.next = start + size;
        self.end = base + len;
        Some(start as *mut u8)
    }
}

/// How far from this executable's code a mapping may lie: region code reaches every helper
/// (and the executable is far smaller than the rest of the +-2 GiB a displacement spans).
const REACH: usize = 1 << 30;
/// Where the search for free address space starts: below the executable, clear of its
/// own mappings, then further down in steps of the mapping's size.
const FIRST_GAP: usize = 64 << 20;

/// The address of some code of this executable: every helper lies within its size of it.
/// Never inlined: a small function may get a local copy in each codegen unit that uses it,
/// and two copies 1 MiB apart made the reach test fail when a mapping lay at the very end
/// of the range measured from the other copy.
#[inline(never)]
fn anchor() -> usize {
    anchor as fn() -> usize as usize
}

/// A fresh read-write-execute mapping of `len` bytes (a multiple of the page size) within
/// [`REACH`] of [`anchor`], or `None` if there is no room.
fn near_mapping(len: usize) -> Option<usize> {
    // Where the last search ended: most searches then succeed at the first try. Once the
    // search reaches the end of the range it starts again from the top, where code of
    // dropped epochs has been unmapped.
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let anchor = anchor() & !0xfff;
    let lowest = anchor.saturating_sub(REACH);
    let top = anchor.saturating_sub(FIRST_GAP + len);
    let resume = NEXT.load(Ordering::Relaxed);
    let starts = if resume == 0 || resume >= top {
        [top, 0]
    } else {
        [resume, top]
    };
    for start in starts.into_iter().filter(|&s| s != 0) {
        let mut hint = start;
        while hint >= lowest {
            if let Some(p) = map_at(hint, len) {
                NEXT.store(p.saturating_sub(len), Ordering::Relaxed);
                return Some(p);
            }
            let Some(lower) = hint.checked_sub(len) else {
                break;
            };
            hint = lower;
        }
    }
    // Nothing below (an executable loaded low, as a non-PIE one is): above it, past where
    // its heap starts.
    let mut hint = anchor.checked_add(4 * FIRST_GAP)?;
    while hint.checked_add(len)? <= anchor + REACH {
        if let Some(p) = map_at(hint, len) {
            return Some(p);
        }
        hint += len;
    }
    None
}

/// A read-write-execute mapping of `len` bytes at exactly `addr`, unless something is
/// mapped there.
fn map_at(addr: usize, len: usize) -> Option<usize> {
    // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping (the call fails
    // instead), so this touches no memory in use; MAP_FAILED is checked before use.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    if p as usize != addr {
        // A kernel older than MAP_FIXED_NOREPLACE took the address as a hint and mapped
        // elsewhere.
        // SAFETY: the mapping was just made by this call and nothing refers to it.
        unsafe { libc::munmap(p, len) };
        return None;
    }
    Some(addr)
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
        // `near_mapping` measures from the anchor's page and may use its lowest address
        // (`REACH` below it) once earlier searches walked the whole range down.
        for p in [a, b, c] {
            assert!(
                p.abs_diff(anchor() & !0xfff) <= REACH,
                "{p:#x} out of reach of the executable at {:#x} (a {a:#x}, b {b:#x}, c {c:#x})",
                anchor()
            );
        }
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
