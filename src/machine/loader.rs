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
    /// Something does not fit in RAM.
    #[error("{what} ({size} bytes) does not fit in RAM of {ram} bytes (free space: {free} bytes); use a larger --memory")]
    DoesNotFit {
        what: &'static str,
        size: u64,
        ram: u64,
        free: u64,
    },
    /// An ELF kernel segment lies outside RAM.
    #[error("kernel ELF segment at physical {start:#x}..{end:#x} lies outside RAM")]
    SegmentOutsideRam { start: u64, end: u64 },
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
        // image_size covers bss; the file must at least hold what precedes the bss.
        if image_size != 0 && (bytes.len() as u64) > image_size {
            return Err(LoadError::InconsistentImage {
                claimed: image_size,
                actual: bytes.len(),
            });
        }
        Ok(Kernel::Image {
            bytes: bytes.to_vec(),
            size: image_size.max(bytes.len() as u64),
        })
    }
}

/// Where everything goes (physical addresses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Kernel load address and entry point.
    pub kernel_start: u64,
    pub kernel_end: u64,
    pub kernel_entry: u64,
    /// External firmware at RAM base, if any.
    pub firmware: Option<(u64, u64)>,
    pub initrd: Option<(u64, u64)>,
    pub dtb: u64,
    /// fw_dynamic_info for an external firmware.
    pub fw_dynamic_info: Option<u64>,
}

/// Plan the layout of RAM `[ram_base, ram_base + ram_size)`.
pub fn plan(
    ram_base: u64,
    ram_size: u64,
    kernel: &Kernel,
    firmware_len: Option<u64>,
    initrd_len: Option<u64>,
    dtb_len: u64,
) -> Result<Layout, LoadError> {
    let ram_end = ram_base + ram_size;
    let does_not_fit = |what, size, free| LoadError::DoesNotFit {
        what,
        size,
        ram: ram_size,
        free,
    };
    let firmware = match firmware_len {
        Some(len) if len > ram_size => return Err(does_not_fit("firmware", len, ram_size)),
        Some(len) => Some((ram_base, ram_base + len)),
        None => None,
    };
    let (kernel_start, kernel_end, kernel_entry) = match kernel {
        Kernel::Image { size, .. } => {
            let after_fw = firmware.map_or(ram_base, |(_, end)| end);
            let start = after_fw.div_ceil(KERNEL_ALIGN) * KERNEL_ALIGN;
            (start, start + size, start)
        }
        Kernel::Elf(elf) => {
            let mut lo = u64::MAX;
            let mut hi = 0;
            for s in &elf.segments {
                let (start, end) = (s.paddr as u64, s.paddr as u64 + s.memsz as u64);
                if start < ram_base || end > ram_end {
                    return Err(LoadError::SegmentOutsideRam { start, end });
                }
                lo = lo.min(start);
                hi = hi.max(end);
            }
            // The entry is a virtual address; translate it through the segment containing it.
            let entry = elf
                .segments
                .iter()
                .find(|s| s.vaddr_range().contains(&(elf.entry as u64)))
                .map_or(elf.entry as u64, |s| {
                    elf.entry as u64 - s.vaddr as u64 + s.paddr as u64
                });
            (lo, hi, entry)
        }
    };
    if kernel_end > ram_end {
        return Err(does_not_fit(
            "kernel",
            kernel_end - kernel_start,
            ram_end.saturating_sub(kernel_start),
        ));
    }
    if dtb_len > MAX_DTB_SIZE {
        return Err(does_not_fit("device tree", dtb_len, MAX_DTB_SIZE));
    }
    let dtb = (ram_end - DTB_RESERVE) & !7;
    if dtb < kernel_end {
        return Err(does_not_fit("device tree", dtb_len, 0));
    }
    let fw_dynamic_info = firmware.map(|_| dtb + MAX_DTB_SIZE);
    let initrd = match initrd_len {
        None => None,
        Some(len) => {
            let free = dtb - kernel_end;
            let start = dtb.checked_sub(len).map(|s| s & !0xfff);
            match start {
                Some(start) if start >= kernel_end => Some((start, start + len)),
                _ => return Err(does_not_fit("initrd", len, free)),
            }
        }
    };
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
        let l = plan(BASE, 256 << 20, &k, Some(300_000), None, 4096).unwrap();
        assert_eq!(l.firmware, Some((BASE, BASE + 300_000)));
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

    #[test]
    fn fw_dynamic_info_layout() {
        let info = fw_dynamic_info(0x8040_0000);
        assert_eq!(&info[0..4], &FW_DYNAMIC_MAGIC.to_le_bytes());
        assert_eq!(&info[8..12], &0x8040_0000u32.to_le_bytes());
        assert_eq!(&info[12..16], &1u32.to_le_bytes());
    }
}
