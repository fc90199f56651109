//! Memory for the machine code of one MCJIT execution engine (one code epoch): sections are
//! carved from large host mappings, code from read-write-execute ones (regions of an epoch
//! run while later regions of the same epoch are still being loaded next to them, so code
//! pages can never be switched to read-write and back) and data from read-write ones. Every
//! code section is recorded, which gives each region's code size: `RV32VM_JIT_DUMP` writes it
//! to the perf map and the code dump.

use std::cell::RefCell;
use std::rc::Rc;

use inkwell::memory_manager::McjitMemoryManager;

/// Size of one host mapping (larger sections get a mapping of their own size).
const CHUNK_SIZE: usize = 1 << 20;

/// Code sections allocated so far: (host address, size), oldest first.
pub type CodeSections = Rc<RefCell<Vec<(usize, usize)>>>;

/// Bump allocation within the current mapping.
#[derive(Debug, Default)]
struct Chunk {
    next: usize,
    end: usize,
}

/// The memory manager handed to MCJIT.
#[derive(Debug)]
pub struct RegionMemory {
    mappings: Vec<(usize, usize)>,
    code: Chunk,
    data: Chunk,
    sections: CodeSections,
}

impl RegionMemory {
    /// A manager with no memory yet, and the record of the code sections it will allocate.
    pub fn new() -> (RegionMemory, CodeSections) {
        let sections = CodeSections::default();
        let memory = RegionMemory {
            mappings: Vec::new(),
            code: Chunk::default(),
            data: Chunk::default(),
            sections: Rc::clone(&sections),
        };
        (memory, sections)
    }

    /// `size` bytes aligned to `align` from the code or the data chunk, mapping a new chunk
    /// when the current one is full; null when the host refuses memory (LLVM reports it).
    fn allocate(&mut self, size: usize, align: usize, code: bool) -> *mut u8 {
        let align = align.max(16).next_power_of_two();
        let chunk = if code { &self.code } else { &self.data };
        let start = chunk.next.next_multiple_of(align);
        if chunk.end != 0 && start.checked_add(size).is_some_and(|end| end <= chunk.end) {
            let chunk = if code { &mut self.code } else { &mut self.data };
            chunk.next = start + size;
            return start as *mut u8;
        }
        let Some(len) = size
            .checked_add(align)
            .map(|n| n.max(CHUNK_SIZE).next_multiple_of(4096))
        else {
            return std::ptr::null_mut();
        };
        let prot = libc::PROT_READ | libc::PROT_WRITE | if code { libc::PROT_EXEC } else { 0 };
        // SAFETY: a fresh anonymous private mapping at a kernel-chosen address touches no
        // existing memory; MAP_FAILED is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            tracing::warn!("tier 2: no host memory for {size} bytes of region code");
            return std::ptr::null_mut();
        }
        let base = p as usize;
        self.mappings.push((base, len));
        let start = base.next_multiple_of(align);
        let chunk = if code { &mut self.code } else { &mut self.data };
        chunk.next = start + size;
        chunk.end = base + len;
        start as *mut u8
    }
}

impl McjitMemoryManager for RegionMemory {
    fn allocate_code_section(
        &mut self,
        size: libc::uintptr_t,
        alignment: libc::c_uint,
        _section_id: libc::c_uint,
        _section_name: &str,
    ) -> *mut u8 {
        let p = self.allocate(size, alignment as usize, true);
        if !p.is_null() {
            self.sections.borrow_mut().push((p as usize, size));
        }
        p
    }

    fn allocate_data_section(
        &mut self,
        size: libc::uintptr_t,
        alignment: libc::c_uint,
        _section_id: libc::c_uint,
        _section_name: &str,
        _is_read_only: bool,
    ) -> *mut u8 {
        self.allocate(size, alignment as usize, false)
    }

    fn finalize_memory(&mut self) -> Result<(), String> {
        // x86-64 keeps instruction fetch coherent with stores; the pages are already
        // executable.
        Ok(())
    }

    fn destroy(&mut self) {
        for (base, len) in self.mappings.drain(..) {
            // SAFETY: each mapping was made by `allocate` and is unmapped once; MCJIT calls
            // `destroy` only after it has dropped every object loaded into this memory, and
            // the engine frees an epoch's code only once no region of that epoch can run.
            unsafe { libc::munmap(base as *mut libc::c_void, len) };
        }
        self.sections.borrow_mut().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_aligned_disjoint_and_recorded() {
        let (mut m, sections) = RegionMemory::new();
        let a = m.allocate_code_section(100, 16, 0, ".text") as usize;
        let b = m.allocate_code_section(3 << 20, 4096, 1, ".text") as usize;
        let c = m.allocate_code_section(10, 64, 2, ".text") as usize;
        let d = m.allocate_data_section(8, 8, 3, ".rodata", true) as usize;
        assert!(a != 0 && b != 0 && c != 0 && d != 0);
        assert_eq!((a % 16, b % 4096, c % 64, d % 8), (0, 0, 0, 0));
        assert!(a + 100 <= c || c + 10 <= a);
        assert_eq!(*sections.borrow(), vec![(a, 100), (b, 3 << 20), (c, 10)]);
        // SAFETY: each pointer is to at least as many writable bytes as were asked for.
        unsafe {
            std::ptr::write_bytes(b as *mut u8, 0xc3, 3 << 20);
            std::ptr::write_bytes(d as *mut u8, 1, 8);
        }
        m.destroy();
        assert!(sections.borrow().is_empty());
    }
}
