//! Memory for compiled code: one anonymous mapping, readable, writable and executable, filled
//! front to back and emptied only as a whole (when every block is dropped). All code of one
//! engine lives in it, so relative jumps between blocks and to the shared stubs always reach
//! (the mapping is far smaller than ±2 GiB), and code of a dropped block stays mapped until the
//! next reset, so a block that invalidates itself can still run to its exit.
//!
//! The mapping is writable and executable at the same time so that chaining can patch jumps
//! without changing protections on every link; only this module and [`super::emit::patch_jmp`]
//! write to it, and only while no compiled code runs.

use std::io;

/// Default size of the code arena.
pub const DEFAULT_ARENA_SIZE: usize = 64 << 20;

/// A region of executable memory that code is appended to.
pub struct CodeArena {
    base: *mut u8,
    size: usize,
    used: usize,
}

// SAFETY: the arena owns its mapping exclusively; moving it to another thread moves that
// ownership (the engine and its code run on one thread at a time).
unsafe impl Send for CodeArena {}

impl CodeArena {
    /// Map `size` bytes (rounded up to pages) of code memory.
    pub fn new(size: usize) -> io::Result<CodeArena> {
        let size = size.max(4096).next_multiple_of(4096);
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches
        // no existing memory; the result is checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(CodeArena {
            base: p as *mut u8,
            size,
            used: 0,
        })
    }

    /// Host address where the next code will be placed.
    pub fn next_addr(&self) -> usize {
        self.base as usize + self.used
    }

    /// Bytes in use.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Whether `addr` lies inside the arena.
    pub fn contains(&self, addr: usize) -> bool {
        addr >= self.base as usize && addr < self.base as usize + self.size
    }

    /// Copy `code` (assembled for address [`CodeArena::next_addr`]) into the arena; returns
    /// its address, or `None` if the arena is full.
    pub fn push(&mut self, code: &[u8]) -> Option<usize> {
        // Keep entry points 16-byte aligned (cheaper instruction fetch).
        let len = code.len().next_multiple_of(16);
        if len > self.size - self.used {
            return None;
        }
        let at = self.next_addr();
        // SAFETY: `at .. at + code.len()` lies within the mapping (checked above), which is
        // writable; no code runs while the engine compiles.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), at as *mut u8, code.len()) };
        self.used += len;
        Some(at)
    }

    /// Forget all code (the caller guarantees none of it runs again) except the first `keep`
    /// bytes (the shared stubs).
    pub fn truncate(&mut self, keep: usize) {
        self.used = keep.min(self.used);
    }
}

impl Drop for CodeArena {
    fn drop(&mut self) {
        // SAFETY: `base`/`size` describe the mapping made in `new`, and no code in it can run
        // any more: the engine that owns the arena is being dropped.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.size) };
    }
}
