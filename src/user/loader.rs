//! Placing an ELF program's PT_LOAD segments into guest memory.

use std::rc::Rc;

use crate::cpu::tlb::{PAGE_MASK, PAGE_SIZE};
use crate::elf::ElfFile;

use super::mem::{page_round_up, perm, GuestMemory};
use super::regions::{FileId, MapName, Mapping};

/// Where the loaded image ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadedImage {
    /// Entry point (load bias applied).
    pub entry: u32,
    /// Address of the program headers in memory (AT_PHDR), 0 if they are not loaded.
    pub phdr: u32,
    /// Lowest address the image occupies.
    pub start: u32,
    /// Page-aligned end of the image: the initial program break.
    pub end: u32,
    /// Added to every address of a position-independent (static-pie) program.
    pub bias: u32,
}

/// Whether every executable segment of `elf` holds user-level code only: no xRET, WFI or
/// SFENCE.VMA, and CSR instructions only for the FP and counter CSRs. Such a program cannot
/// tell whether its loads and stores are checked one by one or by the host's page protection
/// (see [`crate::exec::platform::Platform::unchecked_memory`]). A linear sweep: bytes that are
/// data may decode as anything, which can only make the answer no.
pub fn user_level_only(elf: &ElfFile) -> bool {
    use crate::isa::{decode, Op};
    let user_csr = |csr: u32| matches!(csr, 0x001..=0x003 | 0xc00..=0xc1f | 0xc80..=0xc9f);
    elf.segments.iter().filter(|s| s.executable).all(|seg| {
        let code = &seg.data;
        let mut at = 0;
        while at + 2 <= code.len() {
            let mut word = [0u8; 4];
            let n = (code.len() - at).min(4);
            word[..n].copy_from_slice(&code[at..at + n]);
            let insn = decode(u32::from_le_bytes(word));
            match insn.op {
                Op::Mret | Op::Sret | Op::Wfi | Op::SfenceVma => return false,
                Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci
                    if !user_csr(insn.imm as u32 & 0xfff) =>
                {
                    return false
                }
                _ => {}
            }
            at += if word[0] & 3 == 3 { 4 } else { 2 };
        }
        true
    })
}

/// The image does not fit below `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutError {
    pub vaddr: u32,
}

/// Map and fill the segments of `elf`. A static-pie (ET_DYN) program is placed at `pie_base`.
/// Pages shared by two segments get the union of their permissions. The pages holding file
/// bytes are described as mappings of `file` (for /proc/self/maps), the rest as anonymous
/// memory.
pub fn load(
    mem: &mut GuestMemory,
    elf: &ElfFile,
    file: &Rc<FileId>,
    pie_base: u32,
    limit: u32,
) -> Result<LoadedImage, LayoutError> {
    let first = elf.segments.first().map_or(0, |s| s.vaddr) & !PAGE_MASK;
    let bias = if elf.is_position_independent() {
        pie_base.wrapping_sub(first)
    } else {
        0
    };
    let mut end = 0u64;
    for seg in &elf.segments {
        let start = seg.vaddr.wrapping_add(bias);
        let seg_end = start as u64 + seg.memsz as u64;
        if start < PAGE_SIZE || seg_end > limit as u64 {
            return Err(LayoutError { vaddr: start });
        }
        end = end.max(seg_end);
    }
    for seg in &elf.segments {
        let mut p = 0;
        if seg.readable {
            p |= perm::R;
        }
        if seg.writable {
            p |= perm::R | perm::W;
        }
        if seg.executable {
            p |= perm::X;
        }
        let start = seg.vaddr.wrapping_add(bias);
        let first_page = start & !PAGE_MASK;
        let last = page_round_up(start as u64 + seg.memsz as u64).unwrap_or(limit as u64);
        let mut page = first_page as u64;
        while page < last {
            let existing = mem.page_perm(page as u32);
            if existing & perm::MAPPED == 0 {
                // The run of pages no earlier segment mapped, in one call (a call per page
                // cost two system calls per page of the program).
                let mut run_end = page + PAGE_SIZE as u64;
                while run_end < last && mem.page_perm(run_end as u32) & perm::MAPPED == 0 {
                    run_end += PAGE_SIZE as u64;
                }
                mem.map(page as u32, run_end - page, p);
                page = run_end;
                continue;
            }
            // Cannot fail: the page was just mapped as private memory.
            let _ = mem.protect(page as u32, PAGE_SIZE as u64, (existing & perm::ACCESS) | p);
            page += PAGE_SIZE as u64;
        }
        // As the kernel maps it: the pages with file bytes are the file from the segment's
        // page-aligned offset on, the rest of the segment (bss) anonymous memory.
        let file_end = page_round_up(start as u64 + seg.data.len() as u64).unwrap_or(last);
        let file_part = Mapping {
            name: MapName::File(Rc::clone(file)),
            offset: (seg.file_offset & !PAGE_MASK) as u64,
            shared: None,
        };
        if !seg.data.is_empty() {
            mem.describe(first_page as u64..file_end, file_part);
        }
        if file_end < last {
            mem.describe(file_end..last, Mapping::anonymous());
        }
    }
    // Fill only after every page is mapped: mapping zeroes, and segments may share a page.
    // Bytes past each segment's file size are zero already (fresh pages).
    for seg in &elf.segments {
        mem.write_initial(seg.vaddr.wrapping_add(bias), &seg.data);
    }
    let end = page_round_up(end).unwrap_or(limit as u64) as u32;
    Ok(LoadedImage {
        entry: elf.entry.wrapping_add(bias),
        phdr: elf.phdr_vaddr.map_or(0, |p| p.wrapping_add(bias)),
        start: first.wrapping_add(bias),
        end,
        bias,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::tests::TestElf;

    fn test_file() -> Rc<FileId> {
        Rc::new(FileId {
            path: b"/prog".to_vec(),
            dev: 0,
            inode: 0,
        })
    }

    #[test]
    fn only_user_level_code_lets_memory_go_unchecked() {
        let program = |words: &[u32]| {
            let text = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let elf = ElfFile::parse(
                &TestElf {
                    text,
                    ..TestElf::default()
                }
                .build(),
            );
            user_level_only(&elf.expect("valid"))
        };
        let (addi, ecall, c_nop_pair) = (0x0000_0013, 0x0000_0073, 0x0001_0001);
        let frcsr = 0x0030_2573; // csrr a0, fcsr
        let rdcycle = 0xc000_2573; // csrr a0, cycle
        let rdtimeh = 0xc810_2573; // csrr a0, timeh
        assert!(program(&[addi, frcsr, rdcycle, rdtimeh, c_nop_pair, ecall]));
        for privileged in [
            0x3020_0073u32, // mret
            0x1020_0073,    // sret
            0x1050_0073,    // wfi
            0x1200_0073,    // sfence.vma
            0x3000_2573,    // csrr a0, mstatus
            0x1800_1073,    // csrw satp, x0
            0x7b00_2573,    // csrr a0, dcsr
        ] {
            assert!(!program(&[addi, privileged, ecall]), "{privileged:#010x}");
        }
        // After a compressed instruction the sweep stays in step: 0x0001 then the mret.
        let mut text = vec![0x01, 0x00];
        text.extend(0x3020_0073u32.to_le_bytes());
        let elf = ElfFile::parse(
            &TestElf {
                text,
                ..TestElf::default()
            }
            .build(),
        )
        .expect("valid");
        assert!(!user_level_only(&elf));
    }

    #[test]
    fn segments_are_placed_with_permissions() {
        let elf = ElfFile::parse(&TestElf::default().build()).expect("valid");
        let mut mem = GuestMemory::new().expect("reserve");
        let img = load(&mut mem, &elf, &test_file(), 0, 0xb000_0000).expect("fits");
        assert_eq!(img.entry, 0x11000);
        assert_eq!(img.phdr, 0x10034);
        assert_eq!(img.end, 0x15000, "data at 0x12000 + 11 bytes + 0x2000 bss");
        assert_eq!(mem.page_perm(0x11000) & 7, perm::R | perm::X);
        assert_eq!(mem.page_perm(0x12000) & 7, perm::R | perm::W);
        assert_eq!(mem.slice(0x12000, 11).expect("readable"), b"hello, data");
        assert_eq!(mem.slice(0x1200b, 4).expect("bss"), &[0, 0, 0, 0]);
        assert_eq!(mem.read_u32(0x11004), Ok(0x73));
        // The ELF header itself is loaded (first segment maps file offset 0).
        assert_eq!(mem.slice(0x10000, 4).expect("header"), b"\x7fELF");
        assert_eq!(mem.page_perm(0x15000), 0, "nothing past the image");
        // The text page is the file; the bss page after the data is anonymous.
        let (range, text) = mem.regions().at(0x11000).expect("text described");
        assert!(matches!(&text.name, MapName::File(f) if f.path == b"/prog"));
        assert_eq!(
            text.offset + (0x11000 - range.start),
            0x1000,
            "file offset at 0x11000"
        );
        let (_, bss) = mem.regions().at(0x14000).expect("bss described");
        assert_eq!(bss.name, MapName::Anonymous);
    }

    #[test]
    fn image_must_fit_below_limit() {
        let elf = ElfFile::parse(&TestElf::default().build()).expect("valid");
        let mut mem = GuestMemory::new().expect("reserve");
        assert_eq!(
            load(&mut mem, &elf, &test_file(), 0, 0x13000),
            Err(LayoutError { vaddr: 0x12000 })
        );
    }
}
