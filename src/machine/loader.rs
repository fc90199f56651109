//! The boot loader: where the kernel (RISC-V Image or ELF), the initrd, the device tree and an
//! optional M-mode firmware go in RAM, and the register state the first instruction sees.
//! Everything is sized from the inputs; anything that does not fit is an error, never a crash.

use crate::elf::ElfFile;

/// Alignment an RV32 kernel needs (its early page tables map 4 MiB megapages).
pub const KERNEL_ALIGN: u64 = 4 << 20;
/// Where the DTB goes: this far below the end of RAM (QEMU places it likewise), 8-byte aligned.
const DTB_RESERVE: u64 = 2 << 20;
/// Largest DTB accepted.
pub const MAX_DTB_SIZE: u64 = DTB_RESERVE - 4096;

/// OpenSBI `struct fw_dynamic_info` magic ("OSBI") and version.
pub const FW_DYNAMIC_MAGIC: u32 = 0x4942_534f;
pub const FW_DYNAMIC_VERSION: u32 = 2;
/// next_mode value for S-mode.
pub const FW_DYNAMIC_NEXT_MODE_S: u32 = 1;

/// RISC-V Image header magic at offset 48 ("RISCV\0\0\0") and 56 ("RSC\x05").
const IMAGE_MAGIC: &[u8; 8] = b"RISCV\0\0\0";
const IMAGE_MAGIC2: &[u8; 4] = b"RSC\x05";
const IMAGE_HEADER_SIZE: usize = 64;

/// Why the images cannot be placed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The kernel file is neither an ELF nor a RISC-V Image.
    #[error("kernel is neither a RISC-V Image (no RSC\\x05 magic at offset 56) nor an ELF file ({len} bytes)")]
    UnknownKernelFormat { len: usize },
    /// The ELF kernel could not be parsed.
    #[error("kernel ELF: {0}")]
    Elf(#[from] crate::elf::ElfError),
    /// The Image header's size (which includes bss) is smaller than the file: corrupt header.
    #[error("kernel Image header is inconsistent: it claims {claimed} bytes in memory but the file has {actual}")]
    InconsistentImage { claimed: u64, actual: usize },
    /// An EFI-stub Image whose PE section table places data past the end of the file.
    #[error("kernel Image is truncated: its PE header (EFI stub) places section data up to byte {needed}, but the file has only {actual} bytes")]
    TruncatedImage { needed: u64, actual: usize },
    /// The Image header claims more memory than a 32-bit machine has: corrupt header.
    #[error("kernel Image header claims {claimed} bytes in memory, more than a 32-bit machine can address")]
    ImageTooLarge { claimed: u64 },
    /// Something does not fit in RAM.
    #[error("{what} ({size} bytes) does not fit in RAM of {ram} bytes (free space: {free} bytes); use a larger --memory")]
    DoesNotFit {
        what: &'static str,
        size: u64,
        ram: u64,
        free: u64,
    },
    /// The device tree is larger than the fixed space reserved for it (RAM size plays no part).
    #[error("the device tree is {size} bytes; at most {limit} bytes fit in the space reserved for it below the end of RAM (a larger --memory does not change this)")]
    DtbTooLarge { size: u64, limit: u64 },
    /// The firmware file is an ELF that could not be parsed.
    #[error("firmware ELF: {0}")]
    FirmwareElf(crate::elf::ElfError),
    /// An ELF firmware segment, or its entry point, lies outside RAM.
    #[error("firmware ELF {what} at physical {start:#x}..{end:#x} lies outside RAM ({ram_start:#x}..{ram_end:#x})")]
    FirmwareOutsideRam {
        what: &'static str,
        start: u64,
        end: u64,
        ram_start: u64,
        ram_end: u64,
    },
    /// The firmware overlaps the initrd or the device tree.
    #[error("firmware at physical {start:#x}..{end:#x} overlaps the {what}")]
    FirmwareOverlaps {
        what: &'static str,
        start: u64,
        end: u64,
    },
    /// An ELF kernel segment lies outside RAM.
    #[error("kernel ELF segment at physical {start:#x}..{end:#x} lies outside RAM")]
    SegmentOutsideRam { start: u64, end: u64 },
    /// The ELF kernel's entry point (after translation through its segments) is not in RAM.
    #[error("kernel ELF entry point {entry:#x} lies outside RAM ({ram_start:#x}..{ram_end:#x})")]
    EntryOutsideRam {
        entry: u64,
        ram_start: u64,
        ram_end: u64,
    },
}

/// The kernel as parsed.
#[derive(Clone, Debug)]
pub enum Kernel {
    /// A flat Image: bytes copied to a 4 MiB-aligned address; `size` includes bss.
    Image { bytes: Vec<u8>, size: u64 },
    /// An ELF whose segments go to their physical addresses.
    Elf(ElfFile),
}

impl Kernel {
    /// Recognise a kernel file.
    pub fn parse(bytes: &[u8]) -> Result<Kernel, LoadError> {
        if bytes.starts_with(b"\x7fELF") {
            return Ok(Kernel::Elf(ElfFile::parse(bytes)?));
        }
        if bytes.len() < IMAGE_HEADER_SIZE
            || &bytes[48..56] != IMAGE_MAGIC && &bytes[56..60] != IMAGE_MAGIC2
        {
            return Err(LoadError::UnknownKernelFormat { len: bytes.len() });
        }
        let field = |off: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[off..off + 8]);
            u64::from_le_bytes(b)
        };
        let image_size = field(16);
        if image_size > 1 << 32 {
            return Err(LoadError::ImageTooLarge {
                claimed: image_size,
            });
        }
        // image_size covers bss; the file must at least hold what precedes the bss.
        if image_size != 0 && (bytes.len() as u64) > image_size {
            return Err(LoadError::InconsistentImage {
                claimed: image_size,
                actual: bytes.len(),
            });
        }
        match efi_stub_file_end(bytes) {
            Some(needed) if needed > bytes.len() as u64 => {
                return Err(LoadError::TruncatedImage {
                    needed,
                    actual: bytes.len(),
                });
            }
            Some(_) => {}
            None if plain_image_looks_truncated(bytes.len(), image_size) => tracing::warn!(
                "kernel Image is {} bytes, but its header says {image_size} bytes in memory \
                 (bss included): the file looks truncated",
                bytes.len()
            ),
            None => {}
        }
        Ok(Kernel::Image {
            bytes: bytes.to_vec(),
            size: image_size.max(bytes.len() as u64),
        })
    }
}

/// Whether a plain Image (no EFI stub) of `file_len` bytes whose header says `image_size`
/// looks cut short. Its header does not say how long the file is, but a kernel's bss is never
/// most of `image_size` (4% of the bundled kernel's, 1% of an rv32_defconfig one's): a file
/// under half of it is a warning, since such a guest tends to hang without a word.
fn plain_image_looks_truncated(file_len: usize, image_size: u64) -> bool {
    (file_len as u64) < image_size / 2
}

/// Where the file data of an EFI-stub Image ends, by its PE section table (the kernel's
/// `efi-header.S`: "MZ" at 0, the PE header's offset at 0x3c): the end of the section whose
/// raw data ends last. `None` for an Image without a (readable) PE header: a plain Image
/// says nothing of its file size (its `image_size` includes bss).
fn efi_stub_file_end(bytes: &[u8]) -> Option<u64> {
    let u16_at = |off: usize| {
        Some(u16::from_le_bytes(
            bytes.get(off..off + 2)?.try_into().ok()?,
        ))
    };
    let u32_at = |off: usize| {
        Some(u32::from_le_bytes(
            bytes.get(off..off + 4)?.try_into().ok()?,
        ))
    };
    if !bytes.starts_with(b"MZ") {
        return None;
    }
    let pe = u32_at(0x3c)? as usize;
    if bytes.get(pe..pe + 4)? != b"PE\0\0" {
        return None;
    }
    let sections = u16_at(pe + 6)? as usize;
    let optional_header = u16_at(pe + 20)? as usize;
    let table = pe + 24 + optional_header;
    // A section table cut off by the file's end is itself past the end.
    let table_end = (table + 40 * sections) as u64;
    let data_end = (0..sections)
        .map(|i| {
            let entry = table + 40 * i;
            let raw_size = u32_at(entry + 16).unwrap_or(0);
            let raw_start = u32_at(entry + 20).unwrap_or(0);
            u64::from(raw_start) + u64::from(raw_size)
        })
        .max()
        .unwrap_or(0);
    Some(table_end.max(data_end))
}

/// The M-mode firmware of `--bios FILE`, as parsed. Like QEMU's `-bios`, it takes an ELF
/// (OpenSBI's `fw_*.elf`: segments to their physical addresses, started at the ELF entry) or
/// anything else as a flat binary at the RAM base, started at its first byte.
#[derive(Clone, Debug)]
pub enum Firmware {
    Raw(Vec<u8>),
    Elf(ElfFile),
}

/// Where the firmware lies in RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirmwareExtent {
    /// A flat binary of `len` bytes at the RAM base, entered at its start.
    AtRamBase { len: u64 },
    /// ELF segments spanning `[start, end)`, entered at `entry`.
    Fixed { start: u64, end: u64, entry: u64 },
}

/// Where the firmware was placed (physical addresses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirmwarePlace {
    pub start: u64,
    pub end: u64,
    pub entry: u64,
}

impl Firmware {
    /// Recognise a firmware file: an ELF by its magic, anything else a flat binary.
    pub fn parse(bytes: Vec<u8>) -> Result<Firmware, LoadError> {
        if bytes.starts_with(b"\x7fELF") {
            return Ok(Firmware::Elf(
                ElfFile::parse(&bytes).map_err(LoadError::FirmwareElf)?,
            ));
        }
        Ok(Firmware::Raw(bytes))
    }

    /// Where the firmware goes in RAM.
    pub fn extent(&self) -> FirmwareExtent {
        match self {
            Firmware::Raw(bytes) => FirmwareExtent::AtRamBase {
                len: bytes.len() as u64,
            },
            Firmware::Elf(elf) => {
                let start = elf.segments.iter().map(|s| s.paddr as u64).min();
                // Cannot overflow: both terms are below 2^32.
                let end = elf
                    .segments
                    .iter()
                    .map(|s| s.paddr as u64 + s.memsz as u64)
                    .max();
                FirmwareExtent::Fixed {
                    start: start.unwrap_or(0),
                    end: end.unwrap_or(0),
                    entry: elf.entry as u64,
                }
            }
        }
    }

    /// What the loader writes to RAM for the firmware placed at `place`.
    pub fn writes(&self, place: FirmwarePlace) -> Vec<(u64, Vec<u8>)> {
        match self {
            Firmware::Raw(bytes) => vec![(place.start, bytes.clone())],
            Firmware::Elf(elf) => elf
                .segments
                .iter()
                .map(|s| (s.paddr as u64, s.data.clone()))
                .collect(),
        }
    }
}

/// Place a firmware of `extent` in RAM `[ram_base, ram_end)`.
fn place_firmware(
    extent: FirmwareExtent,
    ram_base: u64,
    ram_end: u64,
) -> Result<FirmwarePlace, LoadError> {
    let ram_size = ram_end - ram_base;
    match extent {
        FirmwareExtent::AtRamBase { len } if len > ram_size => Err(LoadError::DoesNotFit {
            what: "firmware",
            size: len,
            ram: ram_size,
            free: ram_size,
        }),
        // Cannot overflow: len <= ram_size and ram_base + ram_size did not.
        FirmwareExtent::AtRamBase { len } => Ok(FirmwarePlace {
            start: ram_base,
            end: ram_base + len,
            entry: ram_base,
        }),
        FirmwareExtent::Fixed { start, end, entry } => {
            let outside = |what, start, end| LoadError::FirmwareOutsideRam {
                what,
                start,
                end,
                ram_start: ram_base,
                ram_end,
            };
            if start >= end {
                return Err(LoadError::FirmwareElf(
                    crate::elf::ElfError::NoLoadableSegments,
                ));
            }
            if start < ram_base || end > ram_end {
                return Err(outside("segments", start, end));
            }
            if !(ram_base..ram_end).contains(&entry) {
                return Err(outside("entry point", entry, entry + 1));
            }
            Ok(FirmwarePlace { start, end, entry })
        }
    }
}

/// Where everything goes (physical addresses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Kernel load address and entry point.
    pub kernel_start: u64,
    pub kernel_end: u64,
    pub kernel_entry: u64,
    /// External firmware, if any.
    pub firmware: Option<FirmwarePlace>,
    pub initrd: Option<(u64, u64)>,
    pub dtb: u64,
    /// fw_dynamic_info for an external firmware.
    pub fw_dynamic_info: Option<u64>,
}

/// Plan the layout of RAM `[ram_base, ram_base + ram_size)`. Every address is computed with
/// checked arithmetic: sizes come from file headers (an Image's `image_size`, ELF segment
/// sizes) and may be anything.
pub fn plan(
    ram_base: u64,
    ram_size: u64,
    kernel: &Kernel,
    firmware: Option<FirmwareExtent>,
    initrd_len: Option<u64>,
    dtb_len: u64,
) -> Result<Layout, LoadError> {
    let does_not_fit = |what, size, free| LoadError::DoesNotFit {
        what,
        size,
        ram: ram_size,
        free,
    };
    let ram_end = ram_base
        .checked_add(ram_size)
        .ok_or(does_not_fit("RAM", ram_size, 0))?;
    let firmware = firmware
        .map(|extent| place_firmware(extent, ram_base, ram_end))
        .transpose()?;
    let (kernel_start, kernel_end, kernel_entry) = match kernel {
        Kernel::Image { size, .. } => {
            // After the firmware, as QEMU places it (an ELF firmware ends where its last
            // segment does).
            let after_fw = firmware.map_or(ram_base, |f| f.end);
            let start = after_fw
                .div_ceil(KERNEL_ALIGN)
                .checked_mul(KERNEL_ALIGN)
                .filter(|&start| start <= ram_end)
                .ok_or(does_not_fit("kernel", *size, 0))?;
            let free = ram_end - start;
            let end = start
                .checked_add(*size)
                .filter(|&end| end <= ram_end)
                .ok_or(does_not_fit("kernel", *size, free))?;
            (start, end, start)
        }
        Kernel::Elf(elf) => {
            let mut lo = u64::MAX;
            let mut hi = 0;
            for s in &elf.segments {
                let start = s.paddr as u64;
                // Cannot overflow: both terms are below 2^32.
                let end = start + s.memsz as u64;
                if start < ram_base || end > ram_end {
                    return Err(LoadError::SegmentOutsideRam { start, end });
                }
                lo = lo.min(start);
                hi = hi.max(end);
            }
            if elf.segments.is_empty() {
                return Err(crate::elf::ElfError::NoLoadableSegments.into());
            }
            // The entry is a virtual address; translate it through the segment containing it
            // (entry >= vaddr there, and paddr + offset stays below 2^33: no overflow).
            let entry = elf
                .segments
                .iter()
                .find(|s| s.vaddr_range().contains(&(elf.entry as u64)))
                .map_or(elf.entry as u64, |s| {
                    elf.entry as u64 - s.vaddr as u64 + s.paddr as u64
                });
            if !(ram_base..ram_end).contains(&entry) {
                return Err(LoadError::EntryOutsideRam {
                    entry,
                    ram_start: ram_base,
                    ram_end,
                });
            }
            (lo, hi, entry)
        }
    };
    if dtb_len > MAX_DTB_SIZE {
        return Err(LoadError::DtbTooLarge {
            size: dtb_len,
            limit: MAX_DTB_SIZE,
        });
    }
    // The DTB sits DTB_RESERVE below the end of RAM; the kernel must end below it.
    let dtb = ram_end
        .checked_sub(DTB_RESERVE)
        .map(|d| d & !7)
        .filter(|&d| d >= kernel_end)
        .ok_or(does_not_fit(
            "kernel",
            kernel_end - kernel_start,
            (ram_end.saturating_sub(DTB_RESERVE)).saturating_sub(kernel_start),
        ))?;
    // Cannot overflow: dtb + MAX_DTB_SIZE < ram_end.
    let fw_dynamic_info = firmware.map(|_| dtb + MAX_DTB_SIZE);
    let initrd = match initrd_len {
        None => None,
        Some(len) => {
            let free = dtb - kernel_end;
            let start = dtb
                .checked_sub(len)
                .map(|s| s & !0xfff)
                .filter(|&s| s >= kernel_end)
                .ok_or(does_not_fit("initrd", len, free))?;
            // Cannot overflow: start + len <= dtb.
            Some((start, start + len))
        }
    };
    if let Some(fw) = firmware {
        // An ELF firmware chooses its own addresses: refuse to let it overwrite the initrd or
        // the device tree. Over an ELF kernel it is allowed (the firmware is written last):
        // an M-mode test program passed as both `--bios` and `--kernel` runs as before.
        let overlaps = |start: u64, end: u64| fw.start < end && start < fw.end;
        if overlaps(kernel_start, kernel_end) {
            tracing::warn!(
                "the firmware ({:#x}..{:#x}) overlaps the kernel ({kernel_start:#x}..{kernel_end:#x}); the firmware's bytes win",
                fw.start,
                fw.end
            );
        }
        let clash = if initrd.is_some_and(|(start, end)| overlaps(start, end)) {
            Some("initrd")
        } else if overlaps(dtb, ram_end) {
            Some("device tree")
        } else {
            None
        };
        if let Some(what) = clash {
            return Err(LoadError::FirmwareOverlaps {
                what,
                start: fw.start,
                end: fw.end,
            });
        }
    }
    Ok(Layout {
        kernel_start,
        kernel_end,
        kernel_entry,
        firmware,
        initrd,
        dtb,
        fw_dynamic_info,
    })
}

/// The largest initrd that fits with this kernel and firmware: the space between the end of
/// the kernel and the device tree (what `plan` can place; used to bound reading the file).
pub fn initrd_room(
    ram_base: u64,
    ram_size: u64,
    kernel: &Kernel,
    firmware: Option<FirmwareExtent>,
) -> Result<u64, LoadError> {
    let layout = plan(ram_base, ram_size, kernel, firmware, None, 0)?;
    Ok(layout.dtb - layout.kernel_end)
}

/// The fw_dynamic_info words (RV32: unsigned long = 4 bytes) handing the kernel to OpenSBI.
pub fn fw_dynamic_info(next_addr: u32) -> [u8; 24] {
    let words = [
        FW_DYNAMIC_MAGIC,
        FW_DYNAMIC_VERSION,
        next_addr,
        FW_DYNAMIC_NEXT_MODE_S,
        0, // options
        0, // boot_hart
    ];
    let mut out = [0u8; 24];
    for (chunk, w) in out.chunks_mut(4).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: u64 = 0x8000_0000;

    fn image(len: usize, size: u64) -> Vec<u8> {
        let mut v = vec![0u8; len.max(64)];
        v[16..24].copy_from_slice(&size.to_le_bytes());
        v[48..56].copy_from_slice(IMAGE_MAGIC);
        v[56..60].copy_from_slice(IMAGE_MAGIC2);
        v
    }

    fn raw_fw(len: u64) -> FirmwareExtent {
        FirmwareExtent::AtRamBase { len }
    }

    #[test]
    fn elf_firmware_goes_to_its_segments_and_starts_at_its_entry() {
        let fw = Firmware::parse(elf(0x8000_0000, 0x1000, 0x8000_0100)).unwrap();
        assert!(matches!(fw, Firmware::Elf(_)));
        let k = Kernel::parse(&image(4096, 8 << 20)).unwrap();
        let l = plan(BASE, 256 << 20, &k, Some(fw.extent()), None, 4096).unwrap();
        let place = l.firmware.unwrap();
        assert_eq!(
            (place.start, place.end, place.entry),
            (BASE, BASE + 0x1000, BASE + 0x100)
        );
        assert_eq!(l.kernel_start, BASE + KERNEL_ALIGN);
        assert_eq!(fw.writes(place)[0].0, BASE);
        // Anything that is not an ELF is a flat binary, entered at the RAM base.
        let raw = Firmware::parse(vec![0x13, 0, 0, 0]).unwrap();
        assert_eq!(raw.extent(), raw_fw(4));
        // A broken ELF is an error, not a flat binary.
        let mut broken = elf(0x8000_0000, 0x1000, 0x8000_0000);
        broken.truncate(40);
        assert!(matches!(
            Firmware::parse(broken),
            Err(LoadError::FirmwareElf(_))
        ));
    }

    #[test]
    fn elf_firmware_outside_ram_or_over_the_device_tree_is_refused() {
        let k = Kernel::parse(&image(4096, 8 << 20)).unwrap();
        let low = Firmware::parse(elf(0x1000, 0x1000, 0x1000)).unwrap();
        assert!(matches!(
            plan(BASE, 256 << 20, &k, Some(low.extent()), None, 4096),
            Err(LoadError::FirmwareOutsideRam { .. })
        ));
        let entry_outside = Firmware::parse(elf(0x8000_0000, 0x1000, 0x1000)).unwrap();
        assert!(matches!(
            plan(
                BASE,
                256 << 20,
                &k,
                Some(entry_outside.extent()),
                None,
                4096
            ),
            Err(LoadError::FirmwareOutsideRam { .. })
        ));
        // An ELF kernel at the RAM base under a firmware that is there too: allowed (an
        // M-mode program passed as both), the firmware is written last.
        let elf_kernel = Kernel::parse(&elf(0x8000_0000, 0x1000, 0x8000_0000)).unwrap();
        let fw = Firmware::parse(elf(0x8000_0000, 0x1000, 0x8000_0000)).unwrap();
        assert!(plan(BASE, 256 << 20, &elf_kernel, Some(fw.extent()), None, 4096).is_ok());
        // A firmware over the device tree (an Image kernel would not fit after it).
        let high = Firmware::parse(elf(0x8ff0_0000, 0x1000, 0x8ff0_0000)).unwrap();
        assert!(matches!(
            plan(BASE, 256 << 20, &k, Some(high.extent()), None, 4096),
            Err(LoadError::DoesNotFit { what: "kernel", .. })
        ));
        assert!(matches!(
            plan(
                BASE,
                256 << 20,
                &elf_kernel,
                Some(high.extent()),
                None,
                4096
            ),
            Err(LoadError::FirmwareOverlaps {
                what: "device tree",
                ..
            })
        ));
    }

    #[test]
    fn image_goes_to_ram_base_and_initrd_below_dtb() {
        let k = Kernel::parse(&image(4096, 8 << 20)).unwrap();
        let l = plan(BASE, 256 << 20, &k, None, Some(3 << 20), 4096).unwrap();
        assert_eq!(l.kernel_start, BASE);
        assert_eq!(l.kernel_end, BASE + (8 << 20));
        assert_eq!(l.dtb, BASE + (256 << 20) - (2 << 20));
        let (s, e) = l.initrd.unwrap();
        assert!(s >= l.kernel_end && e <= l.dtb && s % 4096 == 0);
    }

    #[test]
    fn firmware_pushes_kernel_to_next_4mib_boundary() {
        let k = Kernel::parse(&image(4096, 8 << 20)).unwrap();
        let l = plan(BASE, 256 << 20, &k, Some(raw_fw(300_000)), None, 4096).unwrap();
        assert_eq!(
            l.firmware,
            Some(FirmwarePlace {
                start: BASE,
                end: BASE + 300_000,
                entry: BASE
            })
        );
        assert_eq!(l.kernel_start, BASE + KERNEL_ALIGN);
        assert!(l.fw_dynamic_info.is_some());
    }

    #[test]
    fn oversized_initrd_and_kernel_are_errors() {
        let k = Kernel::parse(&image(4096, 8 << 20)).unwrap();
        assert!(matches!(
            plan(BASE, 16 << 20, &k, None, Some(64 << 20), 4096),
            Err(LoadError::DoesNotFit { what: "initrd", .. })
        ));
        let big = Kernel::parse(&image(4096, 64 << 20)).unwrap();
        assert!(plan(BASE, 16 << 20, &big, None, None, 4096).is_err());
    }

    #[test]
    fn garbage_and_inconsistent_kernels_are_errors() {
        assert!(matches!(
            Kernel::parse(b"garbage"),
            Err(LoadError::UnknownKernelFormat { .. })
        ));
        assert!(matches!(
            Kernel::parse(&image(8192, 4096)),
            Err(LoadError::InconsistentImage { .. })
        ));
        assert!(Kernel::parse(b"\x7fELF\x01\x01").is_err());
    }

    /// A minimal ELF32 RISC-V executable: one PT_LOAD segment of `data` at `paddr`
    /// (vaddr = paddr) with `memsz` bytes in memory, entry `entry`.
    fn elf(paddr: u32, memsz: u32, entry: u32) -> Vec<u8> {
        let data = [0x13u8, 0, 0, 0]; // nop
        let mut f = vec![0u8; 52 + 32];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 1; // ELFCLASS32
        f[5] = 1; // little-endian
        f[6] = 1; // EV_CURRENT
        f[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        f[18..20].copy_from_slice(&243u16.to_le_bytes()); // EM_RISCV
        f[20..24].copy_from_slice(&1u32.to_le_bytes());
        f[24..28].copy_from_slice(&entry.to_le_bytes());
        f[28..32].copy_from_slice(&52u32.to_le_bytes()); // e_phoff
        f[40..42].copy_from_slice(&52u16.to_le_bytes()); // e_ehsize
        f[42..44].copy_from_slice(&32u16.to_le_bytes()); // e_phentsize
        f[44..46].copy_from_slice(&1u16.to_le_bytes()); // e_phnum
        let ph = &mut f[52..84];
        ph[0..4].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        ph[4..8].copy_from_slice(&84u32.to_le_bytes()); // p_offset
        ph[8..12].copy_from_slice(&paddr.to_le_bytes()); // p_vaddr
        ph[12..16].copy_from_slice(&paddr.to_le_bytes()); // p_paddr
        ph[16..20].copy_from_slice(&(data.len() as u32).to_le_bytes()); // p_filesz
        ph[20..24].copy_from_slice(&memsz.to_le_bytes()); // p_memsz
        ph[24..28].copy_from_slice(&5u32.to_le_bytes()); // R+X
        ph[28..32].copy_from_slice(&4u32.to_le_bytes()); // p_align
        f.extend_from_slice(&data);
        f
    }

    /// An EFI-stub Image of `len` bytes whose PE section table has a section of raw data
    /// at `raw_start..raw_end` (the layout of the kernel's `efi-header.S`).
    fn efi_image(len: usize, raw_start: u32, raw_end: u32) -> Vec<u8> {
        let mut f = image(len, 8 << 20);
        f[..2].copy_from_slice(b"MZ");
        let pe = 64usize;
        f[0x3c..0x40].copy_from_slice(&(pe as u32).to_le_bytes());
        f[pe..pe + 4].copy_from_slice(b"PE\0\0");
        f[pe + 6..pe + 8].copy_from_slice(&1u16.to_le_bytes()); // NumberOfSections
        let optional_header = 112u16;
        f[pe + 20..pe + 22].copy_from_slice(&optional_header.to_le_bytes());
        let section = pe + 24 + optional_header as usize;
        f[section..section + 8].copy_from_slice(b".text\0\0\0");
        f[section + 16..section + 20].copy_from_slice(&(raw_end - raw_start).to_le_bytes());
        f[section + 20..section + 24].copy_from_slice(&raw_start.to_le_bytes());
        f
    }

    #[test]
    fn a_truncated_efi_stub_image_is_an_error() {
        assert!(Kernel::parse(&efi_image(8192, 4096, 8192)).is_ok());
        assert!(matches!(
            Kernel::parse(&efi_image(8192, 4096, 8192)[..6000]),
            Err(LoadError::TruncatedImage {
                needed: 8192,
                actual: 6000
            })
        ));
        // Cut inside the section table itself.
        assert!(matches!(
            Kernel::parse(&efi_image(8192, 4096, 8192)[..220]),
            Err(LoadError::TruncatedImage { .. })
        ));
        // "MZ" without a PE header: a plain Image as far as the loader can tell.
        let mut plain = image(8192, 8 << 20);
        plain[..2].copy_from_slice(b"MZ");
        assert!(Kernel::parse(&plain).is_ok());
    }

    #[test]
    fn a_plain_image_under_half_its_size_in_memory_looks_truncated() {
        assert!(plain_image_looks_truncated(3000, 4_380_944));
        assert!(plain_image_looks_truncated(2_190_471, 4_380_944));
        // The bundled kernel's and an rv32_defconfig one's file and memory sizes.
        assert!(!plain_image_looks_truncated(4_177_856, 4_380_944));
        assert!(!plain_image_looks_truncated(30_200_832, 30_552_064));
        // No size in the header (old Images): nothing to compare with.
        assert!(!plain_image_looks_truncated(3000, 0));
    }

    #[test]
    fn huge_image_size_is_refused_not_wrapped() {
        // image_size = u64::MAX once wrapped `start + size` and was accepted.
        assert!(matches!(
            Kernel::parse(&image(4096, u64::MAX)),
            Err(LoadError::ImageTooLarge { .. })
        ));
        assert!(matches!(
            Kernel::parse(&image(4096, (1 << 32) + 1)),
            Err(LoadError::ImageTooLarge { .. })
        ));
        // Even a Kernel built around the parser's check never wraps in the planner.
        for size in [u64::MAX, u64::MAX - BASE, 1 << 40] {
            let k = Kernel::Image {
                bytes: vec![0; 64],
                size,
            };
            assert!(
                matches!(
                    plan(BASE, 256 << 20, &k, None, None, 4096),
                    Err(LoadError::DoesNotFit { what: "kernel", .. })
                ),
                "size {size:#x}"
            );
            assert!(plan(BASE, 256 << 20, &k, Some(raw_fw(300_000)), Some(4096), 4096).is_err());
        }
    }

    #[test]
    fn extreme_ram_and_input_sizes_never_overflow() {
        let k = Kernel::parse(&image(4096, 8 << 20)).unwrap();
        // RAM that would end past 2^64.
        assert!(plan(u64::MAX - 4096, 256 << 20, &k, None, None, 0).is_err());
        // RAM smaller than the DTB reserve.
        assert!(plan(BASE, 1 << 20, &k, None, None, 0).is_err());
        // Firmware, initrd and DTB sizes at the edges.
        assert!(plan(BASE, 256 << 20, &k, Some(raw_fw(u64::MAX)), None, 0).is_err());
        assert!(plan(BASE, 256 << 20, &k, None, Some(u64::MAX), 0).is_err());
        assert!(matches!(
            plan(BASE, 256 << 20, &k, None, None, u64::MAX),
            Err(LoadError::DtbTooLarge { .. })
        ));
        // Firmware that leaves no room for a 4 MiB-aligned kernel.
        assert!(plan(BASE, 16 << 20, &k, Some(raw_fw((16 << 20) - 1)), None, 0).is_err());
    }

    #[test]
    fn initrd_room_is_what_plan_can_place() {
        let k = Kernel::parse(&image(4096, 8 << 20)).unwrap();
        let room = initrd_room(BASE, 64 << 20, &k, None).unwrap();
        assert_eq!(room, (64 << 20) - (2 << 20) - (8 << 20));
        assert!(plan(BASE, 64 << 20, &k, None, Some(room), 0).is_ok());
        assert!(plan(BASE, 64 << 20, &k, None, Some(room + 1), 0).is_err());
    }

    #[test]
    fn elf_kernel_segments_and_entry_must_lie_in_ram() {
        let ok = Kernel::parse(&elf(0x8000_0000, 0x1000, 0x8000_0000)).unwrap();
        let l = plan(BASE, 16 << 20, &ok, None, None, 4096).unwrap();
        assert_eq!(l.kernel_entry, BASE);
        let outside = Kernel::parse(&elf(0x8000_0000, 0x1000, 0x1000)).unwrap();
        assert!(matches!(
            plan(BASE, 16 << 20, &outside, None, None, 4096),
            Err(LoadError::EntryOutsideRam { entry: 0x1000, .. })
        ));
        // A segment reaching past the end of RAM (and of the 32-bit space).
        let high = Kernel::parse(&elf(0xffff_f000, 0x1000, 0xffff_f000)).unwrap();
        assert!(matches!(
            plan(BASE, 16 << 20, &high, None, None, 4096),
            Err(LoadError::SegmentOutsideRam { .. })
        ));
    }

    #[test]
    fn fw_dynamic_info_layout() {
        let info = fw_dynamic_info(0x8040_0000);
        assert_eq!(&info[0..4], &FW_DYNAMIC_MAGIC.to_le_bytes());
        assert_eq!(&info[8..12], &0x8040_0000u32.to_le_bytes());
        assert_eq!(&info[12..16], &1u32.to_le_bytes());
    }
}
