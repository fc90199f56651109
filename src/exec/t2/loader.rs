//! Loads the relocatable x86-64 ELF object LLVM emits for one region (small code model,
//! position-independent: `worker::host_machine`) into code memory: its allocated sections
//! side by side, relocations applied, undefined symbols (the helpers) resolved by name. The
//! bytes come from a compile or from the code cache (`cache`), which is why the code names
//! what it calls instead of holding this process's addresses.
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
        if section.kind() != SectionKind::UninitializedData {
            let data = section.data().map_err(|e| e.to_string())?;
            if data.len() != size {
                return Err("section data shorter than the section".into());
            }
        }
        let offset = total.next_multiple_of(align);
        total = offset.checked_add(size).ok_or("sections too large")?;
        max_align = max_align.max(align);
        placed.push((section.index(), offset, size));
    }
    // A region's object is a few KiB; anything near this is damaged.
    if total > 16 << 20 {
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
            // Its length was checked against `size` above.
            dest.copy_from_slice(section.data().map_err(|e| e.to_string())?);
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
                        section.wrapping_add(symbol.address() as usize)
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
    let entry = section.wrapping_add(symbol.address() as usize);
    let len = symbol.size() as usize;
    if entry < base || entry.checked_add(len).is_none_or(|end| end > base + total) {
        return Err("entry outside the code".into());
    }
    Ok(Loaded { entry, len })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::policy::T2Opt;
    use inkwell::context::Context;
    use inkwell::module::Linkage;
    use inkwell::targets::FileType;

    extern "sysv64" fn add_seven(x: u32) -> u32 {
        x.wrapping_add(7)
    }

    fn resolve(name: &str) -> Option<usize> {
        (name == "rv32.helper.add_seven")
            .then_some(add_seven as extern "sysv64" fn(u32) -> u32 as usize)
    }

    /// An object shaped like a region's: a function that reads a private constant table and
    /// calls an external helper, emitted as tier 2 emits regions.
    fn sample_object(opt: T2Opt) -> Vec<u8> {
        let context = Context::create();
        let module = context.create_module("sample");
        let machine = super::super::worker::host_machine(opt).expect("a target machine");
        module.set_triple(&machine.get_triple());
        module.set_data_layout(&machine.get_target_data().get_data_layout());
        let (i8t, i32t, i64t) = (context.i8_type(), context.i32_type(), context.i64_type());
        let fn_type = i32t.fn_type(&[i32t.into()], false);
        let helper = module.add_function("rv32.helper.add_seven", fn_type, Some(Linkage::External));
        let f = module.add_function("entry", fn_type, None);
        let values: Vec<_> = (0..16u64).map(|v| i8t.const_int(v * 3, false)).collect();
        let init = i8t.const_array(&values);
        let table = module.add_global(init.get_type(), None, "table");
        table.set_linkage(Linkage::Private);
        table.set_constant(true);
        table.set_initializer(&init);
        let b = context.create_builder();
        b.position_at_end(context.append_basic_block(f, "entry"));
        let x = f.get_nth_param(0).expect("a parameter").into_int_value();
        let index = b.build_and(x, i32t.const_int(15, false), "").expect("and");
        let index = b.build_int_z_extend(index, i64t, "").expect("zext");
        // SAFETY: the index is at most 15, inside the 16-byte table.
        let p = unsafe { b.build_gep(i8t, table.as_pointer_value(), &[index], "") }.expect("gep");
        let t = b.build_load(i8t, p, "").expect("load").into_int_value();
        let t = b.build_int_z_extend(t, i32t, "").expect("zext");
        let r = b.build_call(helper, &[t.into()], "").expect("call");
        let r = r.try_as_basic_value().basic().expect("a value");
        b.build_return(Some(&r)).expect("ret");
        let object = machine
            .write_to_memory_buffer(&module, FileType::Object)
            .expect("an object");
        object.as_slice().to_vec()
    }

    #[test]
    fn loads_and_runs_an_object_and_refuses_damaged_ones_without_panicking() {
        for opt in [T2Opt::Fast, T2Opt::Full] {
            let object = sample_object(opt);
            let mut memory = CodeMemory::new();
            let loaded = load(&object, "entry", &resolve, &mut memory).expect("it loads");
            // SAFETY: `entry` is the function just loaded, of this type (`sample_object`).
            let f = unsafe {
                std::mem::transmute::<usize, extern "sysv64" fn(u32) -> u32>(loaded.entry)
            };
            assert_eq!((f(5), f(18)), (5 * 3 + 7, 2 * 3 + 7), "{opt:?}");
            assert!(load(&object, "entry", &|_| None, &mut memory).is_err());
            assert!(load(&object, "elsewhere", &resolve, &mut memory).is_err());
            assert!(load(b"not an object", "entry", &resolve, &mut memory).is_err());
            // Damaged copies (never run): an error or a load, never a panic or a stray write.
            for len in (0..object.len()).step_by(5) {
                let _ = load(&object[..len], "entry", &resolve, &mut CodeMemory::new());
            }
            let mut seed = 0x9e37_79b9u32;
            for _ in 0..3000 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let mut bad = object.clone();
                let at = seed as usize % bad.len();
                bad[at] ^= 1 << (seed >> 29);
                let _ = load(&bad, "entry", &resolve, &mut CodeMemory::new());
            }
        }
    }
}
