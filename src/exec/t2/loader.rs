//! Loads the relocatable x86-64 ELF object LLVM emits for one region (large code model,
//! static relocations) into code memory: its allocated sections side by side, relocations
//! applied, undefined symbols (the helpers) resolved by name. The bytes come from a compile
//! or from the code cache (`cache`), which is why the code names what it calls instead of
//! holding this process's addresses.
//!
//! Only what such an object holds is accepted (a bad one is an error, never a crash): the
//! relocations `R_X86_64_64`, `PC32`, `PLT32`, `32` and `32S`, against defined symbols,
//! sections and resolvable undefined symbols. `.eh_frame` is not loaded: regions are
//! `nounwind` and nothing unwinds through them.

use object::elf;
use object::{
    Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget, SectionFlags,
    SectionIndex, SectionKind,
};

use super::memory::CodeMemory;

/// Where a loaded function is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// Host address of the function's first instruction.
    pub entry: usize,
    /// Its size in bytes (the symbol's).
    pub len: usize,
}

/// Load `bytes`, resolving undefined symbols through `resolve`, and return where function
/// `entry` is.
pub fn load(
    bytes: &[u8],
    entry: &str,
    resolve: &dyn Fn(&str) -> Option<usize>,
    memory: &mut CodeMemory,
) -> Result<Loaded, String> {
    let file = object::File::parse(bytes).map_err(|e| format!("not an object file: {e}"))?;
    if file.format() != object::BinaryFormat::Elf
        || file.architecture() != object::Architecture::X86_64
        || file.kind() != object::ObjectKind::Relocatable
    {
        return Err("not a relocatable x86-64 ELF object".into());
    }

    // Lay the allocated sections out one after the other.
    let mut placed: Vec<(SectionIndex, usize, usize)> = Vec::new(); // (section, offset, size)
    let (mut total, mut max_align) = (0usize, 16usize);
    for section in file.sections() {
        let SectionFlags::Elf { sh_flags } = section.flags() else {
            continue;
        };
        if sh_flags & u64::from(elf::SHF_ALLOC) == 0 || section.name() == Ok(".eh_frame") {
            continue;
        }
        let align = usize::try_from(section.align().max(1)).map_err(|_| "section alignment")?;
        if !align.is_power_of_two() || align > 4096 {
            return Err(format!("section alignment {align}"));
        }
        let size = usize::try_from(section.size()).map_err(|_| "section size")?;
        let offset = total.next_multiple_of(align);
        total = offset.checked_add(size).ok_or("sections too large")?;
        max_align = max_align.max(align);
        placed.push((section.index(), offset, size));
    }
    if total > 64 << 20 {
        return Err(format!("{total} bytes of sections"));
    }
    let base = memory
        .allocate(total.max(1), max_align)
        .ok_or("no host memory for region code")? as usize;
    let place = |index: SectionIndex| {
        placed
            .iter()
            .find(|&&(i, _, _)| i == index)
            .map(|&(_, offset, _)| base + offset)
    };

    for &(index, offset, size) in &placed {
        let section = file.section_by_index(index).map_err(|e| e.to_string())?;
        // SAFETY: `base + offset .. + size` lies inside the allocation just made for these
        // sections, which nothing else uses yet.
        let dest = unsafe { std::slice::from_raw_parts_mut((base + offset) as *mut u8, size) };
        if section.kind() == SectionKind::UninitializedData {
            dest.fill(0);
        } else {
            let data = section.data().map_err(|e| e.to_string())?;
            if data.len() != size {
                return Err("section data shorter than the section".into());
            }
            dest.copy_from_slice(data);
        }
    }

    for &(index, offset, size) in &placed {
        let section = file.section_by_index(index).map_err(|e| e.to_string())?;
        for (at, reloc) in section.relocations() {
            let RelocationFlags::Elf { r_type } = reloc.flags() else {
                return Err("not an ELF relocation".into());
            };
            if reloc.has_implicit_addend() {
                return Err("relocation without an explicit addend".into());
            }
            let target = match reloc.target() {
                RelocationTarget::Symbol(si) => {
                    let symbol = file.symbol_by_index(si).map_err(|e| e.to_string())?;
                    let name = symbol.name().map_err(|e| e.to_string())?;
                    if symbol.is_undefined() {
                        resolve(name).ok_or_else(|| format!("unknown symbol `{name}`"))?
                    } else {
                        let section = symbol
                            .section_index()
                            .and_then(place)
                            .ok_or_else(|| format!("symbol `{name}` outside the code"))?;
                        section + symbol.address() as usize
                    }
                }
                RelocationTarget::Section(si) => {
                    place(si).ok_or("relocation against a section not loaded")?
                }
                _ => return Err("relocation without a target".into()),
            };
            let value = (target as i64).wrapping_add(reloc.addend());
            let at = usize::try_from(at).map_err(|_| "relocation offset")?;
            let width = if r_type == elf::R_X86_64_64 { 8 } else { 4 };
            if at.checked_add(width).is_none_or(|end| end > size) {
                return Err("relocation outside its section".into());
            }
            let p = base + offset + at;
            let bytes: Vec<u8> = match r_type {
                elf::R_X86_64_64 => value.to_le_bytes().to_vec(),
                elf::R_X86_64_PC32 | elf::R_X86_64_PLT32 => {
                    let rel = i32::try_from(value.wrapping_sub(p as i64))
                        .map_err(|_| "PC-relative relocation out of range")?;
                    rel.to_le_bytes().to_vec()
                }
                elf::R_X86_64_32 => u32::try_from(value)
                    .map_err(|_| "32-bit relocation out of range")?
                    .to_le_bytes()
                    .to_vec(),
                elf::R_X86_64_32S => i32::try_from(value)
                    .map_err(|_| "32-bit relocation out of range")?
                    .to_le_bytes()
                    .to_vec(),
                other => return Err(format!("relocation type {other}")),
            };
            // SAFETY: `p .. p + width` lies inside the section's bytes (checked above),
            // which were copied into memory only this loader writes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p as *mut u8, width) };
        }
    }

    let symbol = file
        .symbols()
        .find(|s| s.name() == Ok(entry) && !s.is_undefined())
        .ok_or_else(|| format!("no function `{entry}` in the object"))?;
    let section = symbol
        .section_index()
        .and_then(place)
        .ok_or("entry outside the code")?;
    Ok(Loaded {
        entry: section + symbol.address() as usize,
        len: symbol.size() as usize,
    })
}
