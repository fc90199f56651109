//! ELF32 RISC-V parsing shared by the user-mode loader and the bare-metal runner.
//!
//! The parser never trusts the file: every offset and size is checked against the file length
//! with checked arithmetic before it is used, so a truncated or corrupted file yields an
//! [`ElfError`], never a panic. Only what the loaders need is kept: loadable segments (with their
//! file bytes copied out), the program-header location for the auxiliary vector, executable
//! ranges and the symbol table.

use std::ops::Range;

use thiserror::Error;

/// `e_machine` of RISC-V.
pub const EM_RISCV: u16 = 243;
/// `e_type` of a fixed-address executable.
pub const ET_EXEC: u16 = 2;
/// `e_type` of a position-independent object (shared library or static-pie executable).
pub const ET_DYN: u16 = 3;

const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_PHDR: u32 = 6;

const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

const SHT_SYMTAB: u32 = 2;
const SHT_NOBITS: u32 = 8;
const SHF_ALLOC: u32 = 0x2;
const SHF_EXECINSTR: u32 = 0x4;
const SHN_UNDEF: u16 = 0;

const EHDR_SIZE: usize = 52;
const PHDR_SIZE: usize = 32;
const SHDR_SIZE: usize = 40;
const SYM_SIZE: usize = 16;

/// Why a file could not be used as a RISC-V ELF32 program.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ElfError {
    /// The file does not start with the ELF magic bytes.
    #[error("not an ELF file (bad magic)")]
    NotElf,
    /// The ELF class is not ELFCLASS32.
    #[error("not a 32-bit ELF file (ELF class {0})")]
    Not32Bit(u8),
    /// The data encoding is not little-endian.
    #[error("not a little-endian ELF file (data encoding {0})")]
    NotLittleEndian(u8),
    /// `e_machine` is not RISC-V.
    #[error("not a RISC-V ELF file (e_machine {0}, expected 243)")]
    NotRiscV(u16),
    /// `e_type` is neither an executable nor a position-independent executable.
    #[error("not an executable ELF file (e_type {0})")]
    NotExecutable(u16),
    /// The program asks for a dynamic loader (PT_INTERP).
    #[error("dynamically linked programs are not supported; link with -static")]
    DynamicallyLinked,
    /// A header, segment or section lies (partly) beyond the end of the file.
    #[error("truncated ELF file: {what} at offset {offset:#x} size {size:#x} exceeds file length {file_len:#x}")]
    Truncated {
        what: &'static str,
        offset: u64,
        size: u64,
        file_len: u64,
    },
    /// A header field has an impossible value.
    #[error("malformed ELF file: {0}")]
    Malformed(&'static str),
    /// Two PT_LOAD segments cover the same addresses.
    #[error("overlapping PT_LOAD segments at {first:#010x} and {second:#010x}")]
    OverlappingSegments { first: u32, second: u32 },
    /// A PT_LOAD segment extends past the top of the 32-bit address space.
    #[error("PT_LOAD segment at {vaddr:#010x} with size {memsz:#x} wraps past 4 GiB")]
    SegmentWraps { vaddr: u32, memsz: u32 },
    /// A PT_LOAD segment has more file bytes than memory bytes.
    #[error("PT_LOAD segment at {vaddr:#010x} has file size {filesz:#x} > memory size {memsz:#x}")]
    FileSizeExceedsMemSize { vaddr: u32, filesz: u32, memsz: u32 },
    /// There is nothing to load.
    #[error("ELF file has no loadable (PT_LOAD) segments")]
    NoLoadableSegments,
}

/// One PT_LOAD segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Virtual load address.
    pub vaddr: u32,
    /// Physical load address (what a bare-metal loader uses).
    pub paddr: u32,
    /// Size in memory; bytes past `data.len()` are zero (bss).
    pub memsz: u32,
    /// The file bytes of the segment (`p_filesz` long).
    pub data: Vec<u8>,
    /// File offset of the segment (used to locate the program headers in memory).
    pub file_offset: u32,
    pub readable: bool,
    pub writable: bool,
    pub executable: bool,
}

impl Segment {
    /// The virtual address range the segment occupies (never wraps: checked by the parser).
    pub fn vaddr_range(&self) -> Range<u64> {
        self.vaddr as u64..self.vaddr as u64 + self.memsz as u64
    }
}

/// A defined symbol from `.symtab`; its name is in [`ElfFile`]'s copy of the string table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Symbol {
    /// The name's bytes: `strings[name.0..name.1]`.
    name: (u32, u32),
    value: u32,
    size: u32,
    /// `STT_*` type (low nibble of `st_info`): 1 = object, 2 = function.
    kind: u8,
}

/// A parsed ELF32 RISC-V executable.
#[derive(Clone, Debug)]
pub struct ElfFile {
    /// Entry point (`e_entry`).
    pub entry: u32,
    /// `e_type`: [`ET_EXEC`] or [`ET_DYN`] (static-pie, to be loaded at a chosen base).
    pub elf_type: u16,
    /// `e_flags` (RISC-V: float ABI, RVC, ...).
    pub flags: u32,
    /// PT_LOAD segments with a non-zero memory size, sorted by virtual address.
    pub segments: Vec<Segment>,
    /// Virtual address of the program headers in the loaded image, if they are loaded
    /// (PT_PHDR, or the PT_LOAD segment that covers them in the file).
    pub phdr_vaddr: Option<u32>,
    /// Size of one program header (`e_phentsize`).
    pub phentsize: u16,
    /// Number of program headers (`e_phnum`).
    pub phnum: u16,
    /// Allocated executable sections (`SHF_ALLOC | SHF_EXECINSTR`) as address ranges.
    exec_sections: Vec<Range<u32>>,
    /// Defined symbols, in symbol-table order. Looked up by a scan (a few lookups per
    /// program: `tohost`, the signature bounds): a statically linked C program with debug
    /// information has about 10 000 of them, and a name string and a hash-map entry each
    /// cost about a millisecond of every run's start.
    symbols: Vec<Symbol>,
    /// The symbol table's string table.
    strings: Vec<u8>,
}

/// Bounds-checked little-endian reads from the file.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// The bytes `offset..offset+size`, or a `Truncated` error naming `what`.
    fn slice(&self, what: &'static str, offset: u64, size: u64) -> Result<&'a [u8], ElfError> {
        let file_len = self.bytes.len() as u64;
        let truncated = ElfError::Truncated {
            what,
            offset,
            size,
            file_len,
        };
        let end = offset.checked_add(size).ok_or(truncated.clone())?;
        if end > file_len {
            return Err(truncated);
        }
        // Both fit in the file length, which fits in usize.
        Ok(&self.bytes[offset as usize..end as usize])
    }
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

struct ProgramHeader {
    p_type: u32,
    offset: u32,
    vaddr: u32,
    paddr: u32,
    filesz: u32,
    memsz: u32,
    flags: u32,
}

struct SectionHeader {
    sh_type: u32,
    flags: u32,
    addr: u32,
    offset: u32,
    size: u32,
    link: u32,
    entsize: u32,
}

impl ElfFile {
    /// Parse and validate an ELF32 little-endian RISC-V executable.
    pub fn parse(bytes: &[u8]) -> Result<ElfFile, ElfError> {
        Self::parse_with(bytes, true)
    }

    /// [`ElfFile::parse`] without the symbol table, which a Linux program's loader never
    /// looks at (as Linux's own does not): a static program with debug information has about
    /// 10 000 symbols, and their table is pages the run would read for nothing.
    pub fn parse_without_symbols(bytes: &[u8]) -> Result<ElfFile, ElfError> {
        Self::parse_with(bytes, false)
    }

    fn parse_with(bytes: &[u8], symbols: bool) -> Result<ElfFile, ElfError> {
        let r = Reader { bytes };
        if bytes.len() < 4 || bytes[0..4] != [0x7f, b'E', b'L', b'F'] {
            return Err(ElfError::NotElf);
        }
        if bytes.len() < 6 {
            return Err(ElfError::Truncated {
                what: "ELF identification",
                offset: 0,
                size: 16,
                file_len: bytes.len() as u64,
            });
        }
        if bytes[4] != 1 {
            return Err(ElfError::Not32Bit(bytes[4]));
        }
        if bytes[5] != 1 {
            return Err(ElfError::NotLittleEndian(bytes[5]));
        }
        let eh = r.slice("ELF header", 0, EHDR_SIZE as u64)?;
        let elf_type = u16_at(eh, 16);
        let machine = u16_at(eh, 18);
        if machine != EM_RISCV {
            return Err(ElfError::NotRiscV(machine));
        }
        if elf_type != ET_EXEC && elf_type != ET_DYN {
            return Err(ElfError::NotExecutable(elf_type));
        }
        let entry = u32_at(eh, 24);
        let phoff = u32_at(eh, 28);
        let shoff = u32_at(eh, 32);
        let flags = u32_at(eh, 36);
        let phentsize = u16_at(eh, 42);
        let phnum = u16_at(eh, 44);
        let shentsize = u16_at(eh, 46);
        let shnum = u16_at(eh, 48);

        if phnum == 0 {
            return Err(ElfError::NoLoadableSegments);
        }
        if (phentsize as usize) < PHDR_SIZE {
            return Err(ElfError::Malformed("program header entry size too small"));
        }
        if phnum == 0xffff {
            return Err(ElfError::Malformed(
                "extended program header count is not supported",
            ));
        }
        let ph_table = r.slice(
            "program header table",
            phoff as u64,
            phentsize as u64 * phnum as u64,
        )?;
        let headers: Vec<ProgramHeader> = ph_table
            .chunks_exact(phentsize as usize)
            .map(|p| ProgramHeader {
                p_type: u32_at(p, 0),
                offset: u32_at(p, 4),
                vaddr: u32_at(p, 8),
                paddr: u32_at(p, 12),
                filesz: u32_at(p, 16),
                memsz: u32_at(p, 20),
                flags: u32_at(p, 24),
            })
            .collect();

        if headers.iter().any(|h| h.p_type == PT_INTERP) {
            return Err(ElfError::DynamicallyLinked);
        }

        let mut segments = Vec::new();
        for h in headers.iter().filter(|h| h.p_type == PT_LOAD) {
            if h.filesz > h.memsz {
                return Err(ElfError::FileSizeExceedsMemSize {
                    vaddr: h.vaddr,
                    filesz: h.filesz,
                    memsz: h.memsz,
                });
            }
            if h.vaddr as u64 + h.memsz as u64 > 1 << 32 {
                return Err(ElfError::SegmentWraps {
                    vaddr: h.vaddr,
                    memsz: h.memsz,
                });
            }
            let data = r.slice("PT_LOAD segment", h.offset as u64, h.filesz as u64)?;
            if h.memsz == 0 {
                continue;
            }
            segments.push(Segment {
                vaddr: h.vaddr,
                paddr: h.paddr,
                memsz: h.memsz,
                data: data.to_vec(),
                file_offset: h.offset,
                readable: h.flags & PF_R != 0,
                writable: h.flags & PF_W != 0,
                executable: h.flags & PF_X != 0,
            });
        }
        if segments.is_empty() {
            return Err(ElfError::NoLoadableSegments);
        }
        segments.sort_by_key(|s| s.vaddr);
        for pair in segments.windows(2) {
            if pair[0].vaddr_range().end > pair[1].vaddr as u64 {
                return Err(ElfError::OverlappingSegments {
                    first: pair[0].vaddr,
                    second: pair[1].vaddr,
                });
            }
        }

        let phdr_vaddr = headers
            .iter()
            .find(|h| h.p_type == PT_PHDR)
            .map(|h| h.vaddr)
            .or_else(|| {
                // Without PT_PHDR, the headers are in memory if a PT_LOAD covers their file bytes.
                let table_len = phentsize as u64 * phnum as u64;
                segments.iter().find_map(|s| {
                    let start = s.file_offset as u64;
                    let end = start + s.data.len() as u64;
                    let ph = phoff as u64;
                    (ph >= start && ph + table_len <= end)
                        .then(|| s.vaddr.wrapping_add((ph - start) as u32))
                })
            });

        let mut elf = ElfFile {
            entry,
            elf_type,
            flags,
            segments,
            phdr_vaddr,
            phentsize,
            phnum,
            exec_sections: Vec::new(),
            symbols: Vec::new(),
            strings: Vec::new(),
        };
        if shoff != 0 && shnum != 0 {
            elf.parse_sections(&r, shoff, shentsize, shnum, symbols)?;
        }
        Ok(elf)
    }

    fn parse_sections(
        &mut self,
        r: &Reader<'_>,
        shoff: u32,
        shentsize: u16,
        shnum: u16,
        symbols: bool,
    ) -> Result<(), ElfError> {
        if (shentsize as usize) < SHDR_SIZE {
            return Err(ElfError::Malformed("section header entry size too small"));
        }
        let table = r.slice(
            "section header table",
            shoff as u64,
            shentsize as u64 * shnum as u64,
        )?;
        let sections: Vec<SectionHeader> = table
            .chunks_exact(shentsize as usize)
            .map(|s| SectionHeader {
                sh_type: u32_at(s, 4),
                flags: u32_at(s, 8),
                addr: u32_at(s, 12),
                offset: u32_at(s, 16),
                size: u32_at(s, 20),
                link: u32_at(s, 24),
                entsize: u32_at(s, 36),
            })
            .collect();
        for s in &sections {
            if s.sh_type != SHT_NOBITS {
                r.slice("section", s.offset as u64, s.size as u64)?;
            }
            if s.flags & (SHF_ALLOC | SHF_EXECINSTR) == SHF_ALLOC | SHF_EXECINSTR && s.size != 0 {
                let end = s
                    .addr
                    .checked_add(s.size)
                    .ok_or(ElfError::Malformed("executable section wraps past 4 GiB"))?;
                self.exec_sections.push(s.addr..end);
            }
        }
        self.exec_sections.sort_by_key(|r| r.start);
        if !symbols {
            return Ok(());
        }

        let Some(symtab) = sections.iter().find(|s| s.sh_type == SHT_SYMTAB) else {
            return Ok(());
        };
        let strtab = sections
            .get(symtab.link as usize)
            .ok_or(ElfError::Malformed(
                "symbol table links to a missing string table",
            ))?;
        let strings = r.slice("string table", strtab.offset as u64, strtab.size as u64)?;
        let entsize = if symtab.entsize == 0 {
            SYM_SIZE
        } else {
            symtab.entsize as usize
        };
        if entsize < SYM_SIZE {
            return Err(ElfError::Malformed("symbol entry size too small"));
        }
        let syms = r.slice("symbol table", symtab.offset as u64, symtab.size as u64)?;
        for s in syms.chunks_exact(entsize) {
            let name_off = u32_at(s, 0) as usize;
            let shndx = u16_at(s, 14);
            if shndx == SHN_UNDEF || name_off == 0 {
                continue;
            }
            let Some(tail) = strings.get(name_off..) else {
                continue;
            };
            let len = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
            if len == 0 {
                continue;
            }
            // Both fit in u32: the string table's size is a u32.
            self.symbols.push(Symbol {
                name: (name_off as u32, (name_off + len) as u32),
                value: u32_at(s, 4),
                size: u32_at(s, 8),
                kind: s[12] & 0xf,
            });
        }
        self.strings = strings.to_vec();
        Ok(())
    }

    /// True for a position-independent (static-pie) executable that must be loaded at a base.
    pub fn is_position_independent(&self) -> bool {
        self.elf_type == ET_DYN
    }

    /// The bytes of `sym`'s name.
    fn name_of(&self, sym: &Symbol) -> &[u8] {
        &self.strings[sym.name.0 as usize..sym.name.1 as usize]
    }

    /// The value (address) of the first defined symbol `name` in `.symtab`.
    pub fn symbol(&self, name: &str) -> Option<u32> {
        self.symbols
            .iter()
            .find(|s| self.name_of(s) == name.as_bytes())
            .map(|s| s.value)
    }

    /// The function or object symbol containing `addr` (its name, lossily UTF-8), with the
    /// offset into it.
    pub fn symbolize(&self, addr: u32) -> Option<(std::borrow::Cow<'_, str>, u32)> {
        self.symbols
            .iter()
            .filter(|s| s.kind == 1 || s.kind == 2)
            .find(|s| addr >= s.value && (addr - s.value) < s.size.max(1))
            .map(|s| (String::from_utf8_lossy(self.name_of(s)), addr - s.value))
    }

    /// Address ranges holding code: allocated executable sections, or the executable PT_LOAD
    /// segments when the file has no section headers.
    pub fn executable_ranges(&self) -> Vec<Range<u32>> {
        if !self.exec_sections.is_empty() {
            return self.exec_sections.clone();
        }
        self.segments
            .iter()
            .filter(|s| s.executable)
            .map(|s| s.vaddr..s.vaddr.saturating_add(s.memsz))
            .collect()
    }

    /// Lowest and highest (exclusive) virtual address of the loaded image.
    pub fn vaddr_bounds(&self) -> Range<u64> {
        let start = self.segments.first().map_or(0, |s| s.vaddr as u64);
        let end = self.segments.iter().map(|s| s.vaddr_range().end).max();
        start..end.unwrap_or(start)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds small but complete ELF32 RISC-V executables for tests: two PT_LOAD segments
    /// (text and data+bss), a PT_PHDR, and .text/.data/.bss/.symtab/.strtab/.shstrtab sections.
    pub(crate) struct TestElf {
        pub text_vaddr: u32,
        pub text: Vec<u8>,
        pub data_vaddr: u32,
        pub data: Vec<u8>,
        pub bss_len: u32,
        pub entry: u32,
        pub symbols: Vec<(&'static str, u32)>,
        pub interp: bool,
    }

    impl Default for TestElf {
        fn default() -> Self {
            TestElf {
                text_vaddr: 0x10000,
                text: vec![0x13, 0, 0, 0, 0x73, 0, 0, 0],
                data_vaddr: 0x12000,
                data: b"hello, data".to_vec(),
                bss_len: 0x2000,
                entry: 0x10000 + 0x1000,
                symbols: vec![("_start", 0x11000), ("tohost", 0x12000)],
                interp: false,
            }
        }
    }

    fn put16(v: &mut Vec<u8>, x: u16) {
        v.extend_from_slice(&x.to_le_bytes());
    }
    fn put32(v: &mut Vec<u8>, x: u32) {
        v.extend_from_slice(&x.to_le_bytes());
    }

    impl TestElf {
        /// Layout: [ehdr][phdrs] padding to 0x1000, text at file 0x1000 (vaddr text_vaddr +
        /// 0x1000, the first segment maps file offset 0 so the headers are loaded), data at
        /// the next page, then symtab/strtab/shstrtab and the section table.
        pub(crate) fn build(&self) -> Vec<u8> {
            let phnum: u16 = if self.interp { 4 } else { 3 };
            let mut f = vec![0u8; 0x1000];
            f.extend_from_slice(&self.text);
            while !f.len().is_multiple_of(0x1000) {
                f.push(0);
            }
            let data_off = f.len() as u32;
            f.extend_from_slice(&self.data);
            let interp_off = f.len() as u32;
            f.extend_from_slice(b"/lib/ld.so\0");
            // .strtab
            let strtab_off = f.len() as u32;
            let mut name_offs = Vec::new();
            f.push(0);
            for (name, _) in &self.symbols {
                name_offs.push(f.len() as u32 - strtab_off);
                f.extend_from_slice(name.as_bytes());
                f.push(0);
            }
            let strtab_len = f.len() as u32 - strtab_off;
            while !f.len().is_multiple_of(4) {
                f.push(0);
            }
            // .symtab: null symbol + ours (section index 1 = .text, defined).
            let symtab_off = f.len() as u32;
            f.extend_from_slice(&[0u8; 16]);
            for (i, (_, value)) in self.symbols.iter().enumerate() {
                put32(&mut f, name_offs[i]);
                put32(&mut f, *value);
                put32(&mut f, 4);
                f.push(0x12); // global function
                f.push(0);
                put16(&mut f, 1);
            }
            let symtab_len = f.len() as u32 - symtab_off;
            // .shstrtab
            let shstr_off = f.len() as u32;
            let shstr = b"\0.text\0.data\0.bss\0.symtab\0.strtab\0.shstrtab\0";
            f.extend_from_slice(shstr);
            while !f.len().is_multiple_of(4) {
                f.push(0);
            }
            let shoff = f.len() as u32;
            let text_len = self.text.len() as u32;
            let data_len = self.data.len() as u32;
            // (name, type, flags, addr, offset, size, link, entsize)
            type Shdr = (u32, u32, u32, u32, u32, u32, u32, u32);
            let sections: [Shdr; 7] = [
                (0, 0, 0, 0, 0, 0, 0, 0),
                (1, 1, 6, self.text_vaddr + 0x1000, 0x1000, text_len, 0, 0),
                (7, 1, 3, self.data_vaddr, data_off, data_len, 0, 0),
                (13, 8, 3, self.data_vaddr + data_len, 0, self.bss_len, 0, 0),
                (18, 2, 0, 0, symtab_off, symtab_len, 5, 16),
                (26, 3, 0, 0, strtab_off, strtab_len, 0, 0),
                (34, 3, 0, 0, shstr_off, shstr.len() as u32, 0, 0),
            ];
            for (name, ty, flags, addr, off, size, link, entsize) in sections {
                for x in [name, ty, flags, addr, off, size, link, 0, 4, entsize] {
                    put32(&mut f, x);
                }
            }
            // ELF header.
            let mut h = Vec::new();
            h.extend_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0]);
            h.extend_from_slice(&[0; 8]);
            put16(&mut h, ET_EXEC);
            put16(&mut h, EM_RISCV);
            put32(&mut h, 1);
            put32(&mut h, self.entry);
            put32(&mut h, EHDR_SIZE as u32);
            put32(&mut h, shoff);
            put32(&mut h, 0x5);
            put16(&mut h, EHDR_SIZE as u16);
            put16(&mut h, PHDR_SIZE as u16);
            put16(&mut h, phnum);
            put16(&mut h, SHDR_SIZE as u16);
            put16(&mut h, 7);
            put16(&mut h, 6);
            // Program headers: (type, offset, vaddr, filesz, memsz, flags)
            let mut phdrs = vec![
                (
                    PT_PHDR,
                    EHDR_SIZE as u32,
                    self.text_vaddr + EHDR_SIZE as u32,
                    PHDR_SIZE as u32 * phnum as u32,
                    PHDR_SIZE as u32 * phnum as u32,
                    PF_R,
                ),
                (
                    PT_LOAD,
                    0,
                    self.text_vaddr,
                    0x1000 + text_len,
                    0x1000 + text_len,
                    PF_R | PF_X,
                ),
                (
                    PT_LOAD,
                    data_off,
                    self.data_vaddr,
                    data_len,
                    data_len + self.bss_len,
                    PF_R | PF_W,
                ),
            ];
            if self.interp {
                phdrs.push((PT_INTERP, interp_off, 0, 11, 11, PF_R));
            }
            for (ty, off, vaddr, filesz, memsz, flags) in phdrs {
                for x in [ty, off, vaddr, vaddr, filesz, memsz, flags, 0x1000] {
                    put32(&mut h, x);
                }
            }
            f[..h.len()].copy_from_slice(&h);
            f
        }
    }

    #[test]
    fn parses_test_executable() {
        let t = TestElf::default();
        let elf = ElfFile::parse(&t.build()).expect("valid ELF");
        assert_eq!(elf.entry, 0x11000);
        assert_eq!(elf.segments.len(), 2);
        assert_eq!(elf.segments[0].vaddr, 0x10000);
        assert!(elf.segments[0].executable && !elf.segments[0].writable);
        assert_eq!(elf.segments[1].data, b"hello, data");
        assert_eq!(elf.segments[1].memsz, 11 + 0x2000);
        assert!(elf.segments[1].writable && !elf.segments[1].executable);
        assert_eq!(elf.phdr_vaddr, Some(0x10000 + 52));
        assert_eq!(elf.phnum, 3);
        assert_eq!(elf.phentsize, 32);
        assert_eq!(elf.symbol("tohost"), Some(0x12000));
        assert_eq!(elf.symbol("_start"), Some(0x11000));
        assert_eq!(elf.symbol("missing"), None);
        assert_eq!(elf.symbolize(0x11002), Some(("_start".into(), 2)));
        assert_eq!(elf.executable_ranges(), vec![0x11000..0x11008]);
        assert!(!elf.is_position_independent());
        // A Linux program's loader: the same segments and sections, no symbols.
        let program = ElfFile::parse_without_symbols(&t.build()).expect("valid ELF");
        assert_eq!(program.segments, elf.segments);
        assert_eq!(program.executable_ranges(), elf.executable_ranges());
        assert_eq!(program.symbol("tohost"), None);
    }

    #[test]
    fn rejects_bad_identification() {
        let good = TestElf::default().build();
        assert_eq!(ElfFile::parse(b"").unwrap_err(), ElfError::NotElf);
        assert_eq!(
            ElfFile::parse(b"#!/bin/sh\n").unwrap_err(),
            ElfError::NotElf
        );
        let mut f = good.clone();
        f[4] = 2;
        assert_eq!(ElfFile::parse(&f).unwrap_err(), ElfError::Not32Bit(2));
        let mut f = good.clone();
        f[5] = 2;
        assert_eq!(
            ElfFile::parse(&f).unwrap_err(),
            ElfError::NotLittleEndian(2)
        );
        let mut f = good.clone();
        f[18] = 62; // x86-64
        assert_eq!(ElfFile::parse(&f).unwrap_err(), ElfError::NotRiscV(62));
        let mut f = good.clone();
        f[16] = 1; // ET_REL
        assert_eq!(ElfFile::parse(&f).unwrap_err(), ElfError::NotExecutable(1));
        let msg = ElfError::NotElf.to_string();
        assert!(msg.contains("not an ELF file"), "{msg}");
    }

    #[test]
    fn refuses_dynamically_linked() {
        let t = TestElf {
            interp: true,
            ..TestElf::default()
        };
        let err = ElfFile::parse(&t.build()).unwrap_err();
        assert_eq!(err, ElfError::DynamicallyLinked);
        assert!(err.to_string().contains("link with -static"));
    }

    #[test]
    fn rejects_overlapping_segments() {
        let t = TestElf {
            data_vaddr: 0x10800,
            ..TestElf::default()
        };
        assert!(matches!(
            ElfFile::parse(&t.build()).unwrap_err(),
            ElfError::OverlappingSegments { .. }
        ));
    }

    #[test]
    fn rejects_wrapping_and_oversized_segments() {
        let t = TestElf {
            data_vaddr: 0xffff_f000,
            ..TestElf::default()
        };
        assert!(matches!(
            ElfFile::parse(&t.build()).unwrap_err(),
            ElfError::SegmentWraps { .. }
        ));
        // filesz > memsz: patch the data segment's memsz (third phdr, offset 52 + 64 + 20).
        let mut f = TestElf::default().build();
        let memsz_off = EHDR_SIZE + 2 * PHDR_SIZE + 20;
        f[memsz_off..memsz_off + 4].copy_from_slice(&1u32.to_le_bytes());
        assert!(matches!(
            ElfFile::parse(&f).unwrap_err(),
            ElfError::FileSizeExceedsMemSize { .. }
        ));
    }

    #[test]
    fn rejects_segment_beyond_file_end() {
        let mut f = TestElf::default().build();
        // The data segment's file offset (third phdr, offset field).
        let off = EHDR_SIZE + 2 * PHDR_SIZE + 4;
        f[off..off + 4].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        let err = ElfFile::parse(&f).unwrap_err();
        assert!(matches!(err, ElfError::Truncated { .. }), "{err}");
        assert!(err.to_string().contains("truncated"));
    }

    #[test]
    fn truncated_prefixes_are_errors_not_panics() {
        let f = TestElf::default().build();
        for len in 0..f.len() {
            assert!(
                ElfFile::parse(&f[..len]).is_err(),
                "prefix of {len} bytes parsed"
            );
        }
        assert!(ElfFile::parse(&f).is_ok());
    }

    /// xorshift64*: deterministic randomness without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    #[test]
    fn random_mutations_never_panic() {
        let good = TestElf::default().build();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut parsed_ok = 0;
        for _ in 0..4000 {
            let mut f = good.clone();
            let edits = 1 + rng.next() % 8;
            for _ in 0..edits {
                // Bias edits towards the headers, where the interesting fields are.
                let limit = if rng.next().is_multiple_of(4) {
                    f.len()
                } else {
                    0x100
                };
                let pos = (rng.next() as usize) % limit;
                match rng.next() % 3 {
                    0 => f[pos] = rng.next() as u8,
                    1 => f[pos] ^= 1 << (rng.next() % 8),
                    _ => {
                        let word = rng.next() as u32;
                        let end = (pos + 4).min(f.len());
                        f[pos..end].copy_from_slice(&word.to_le_bytes()[..end - pos]);
                    }
                }
            }
            if rng.next().is_multiple_of(5) {
                let cut = (rng.next() as usize) % f.len();
                f.truncate(cut);
            }
            if ElfFile::parse(&f).is_ok() {
                parsed_ok += 1;
            }
        }
        // Some mutations only touch padding: the generator really exercised both outcomes.
        assert!(parsed_ok > 0 && parsed_ok < 4000, "{parsed_ok}");
    }
}
