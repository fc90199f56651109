//! The device tree, generated from the machine description so it can never disagree with the
//! devices that exist, and the checks applied to a user-supplied DTB (`--dtb`).

use vm_fdt::{FdtWriter, FdtWriterResult};

use super::map;
use crate::cpu::csr::TIMEBASE_HZ;
use crate::cpu::ISA_EXTENSIONS;

/// What the device tree describes beyond the fixed memory map.
#[derive(Clone, Debug, Default)]
pub struct FdtConfig {
    pub ram_size: u64,
    pub bootargs: String,
    /// Physical start and end of the initrd, if any.
    pub initrd: Option<(u64, u64)>,
    /// Number of populated virtio-mmio slots (slots 0..n).
    pub virtio_slots: u32,
}

const PHANDLE_CPU0_INTC: u32 = 1;
const PHANDLE_PLIC: u32 = 2;
const PHANDLE_SYSCON: u32 = 3;

/// Interrupt causes as wired into the CPU-local interrupt controller.
const IRQ_M_SOFT: u32 = 3;
const IRQ_M_TIMER: u32 = 7;
const IRQ_S_EXT: u32 = 9;
const IRQ_M_EXT: u32 = 11;

/// The legacy `riscv,isa` string: base, single letters, then multi-letter extensions.
pub fn isa_string() -> String {
    let mut s = String::from("rv32");
    let mut multi = Vec::new();
    for ext in ISA_EXTENSIONS {
        if ext.len() == 1 {
            s.push_str(ext);
        } else {
            multi.push(*ext);
        }
    }
    for ext in multi {
        s.push('_');
        s.push_str(ext);
    }
    s
}

fn reg(base: u32, size: u64) -> Vec<u64> {
    vec![base as u64, size]
}

/// Build the DTB.
pub fn build(cfg: &FdtConfig) -> FdtWriterResult<Vec<u8>> {
    let mut fdt = FdtWriter::new()?;
    let root = fdt.begin_node("")?;
    fdt.property_u32("#address-cells", 2)?;
    fdt.property_u32("#size-cells", 2)?;
    fdt.property_string("compatible", "riscv-virtio")?;
    fdt.property_string("model", "rv32vm,virt")?;

    let chosen = fdt.begin_node("chosen")?;
    fdt.property_string("bootargs", &cfg.bootargs)?;
    fdt.property_string("stdout-path", &format!("/soc/serial@{:x}", map::UART_BASE))?;
    if let Some((start, end)) = cfg.initrd {
        fdt.property_u64("linux,initrd-start", start)?;
        fdt.property_u64("linux,initrd-end", end)?;
    }
    fdt.end_node(chosen)?;

    let memory = fdt.begin_node(&format!("memory@{:x}", map::RAM_BASE))?;
    fdt.property_string("device_type", "memory")?;
    fdt.property_array_u64("reg", &reg(map::RAM_BASE, cfg.ram_size))?;
    fdt.end_node(memory)?;

    let cpus = fdt.begin_node("cpus")?;
    fdt.property_u32("#address-cells", 1)?;
    fdt.property_u32("#size-cells", 0)?;
    fdt.property_u32("timebase-frequency", TIMEBASE_HZ as u32)?;
    let cpu = fdt.begin_node("cpu@0")?;
    fdt.property_string("device_type", "cpu")?;
    fdt.property_u32("reg", 0)?;
    fdt.property_string("status", "okay")?;
    fdt.property_string("compatible", "riscv")?;
    fdt.property_string("riscv,isa", &isa_string())?;
    fdt.property_string("riscv,isa-base", "rv32i")?;
    fdt.property_string_list(
        "riscv,isa-extensions",
        ISA_EXTENSIONS.iter().map(|s| s.to_string()).collect(),
    )?;
    fdt.property_string("mmu-type", "riscv,sv32")?;
    let intc = fdt.begin_node("interrupt-controller")?;
    fdt.property_u32("#interrupt-cells", 1)?;
    fdt.property_null("interrupt-controller")?;
    fdt.property_string("compatible", "riscv,cpu-intc")?;
    fdt.property_phandle(PHANDLE_CPU0_INTC)?;
    fdt.end_node(intc)?;
    fdt.end_node(cpu)?;
    fdt.end_node(cpus)?;

    let soc = fdt.begin_node("soc")?;
    fdt.property_u32("#address-cells", 2)?;
    fdt.property_u32("#size-cells", 2)?;
    fdt.property_string("compatible", "simple-bus")?;
    fdt.property_null("ranges")?;

    let test = fdt.begin_node(&format!("test@{:x}", map::SYSCON_BASE))?;
    fdt.property_string_list(
        "compatible",
        vec![
            "sifive,test1".into(),
            "sifive,test0".into(),
            "syscon".into(),
        ],
    )?;
    fdt.property_array_u64("reg", &reg(map::SYSCON_BASE, map::SYSCON_SIZE))?;
    fdt.property_phandle(PHANDLE_SYSCON)?;
    fdt.end_node(test)?;

    let poweroff = fdt.begin_node("poweroff")?;
    fdt.property_string("compatible", "syscon-poweroff")?;
    fdt.property_u32("regmap", PHANDLE_SYSCON)?;
    fdt.property_u32("offset", 0)?;
    fdt.property_u32("value", map::SYSCON_POWEROFF)?;
    fdt.end_node(poweroff)?;

    let reboot = fdt.begin_node("reboot")?;
    fdt.property_string("compatible", "syscon-reboot")?;
    fdt.property_u32("regmap", PHANDLE_SYSCON)?;
    fdt.property_u32("offset", 0)?;
    fdt.property_u32("value", map::SYSCON_REBOOT)?;
    fdt.end_node(reboot)?;

    let rtc = fdt.begin_node(&format!("rtc@{:x}", map::RTC_BASE))?;
    fdt.property_string("compatible", "google,goldfish-rtc")?;
    fdt.property_array_u64("reg", &reg(map::RTC_BASE, map::RTC_SIZE))?;
    fdt.property_u32("interrupts", map::RTC_IRQ)?;
    fdt.property_u32("interrupt-parent", PHANDLE_PLIC)?;
    fdt.end_node(rtc)?;

    let uart = fdt.begin_node(&format!("serial@{:x}", map::UART_BASE))?;
    fdt.property_string("compatible", "ns16550a")?;
    fdt.property_array_u64("reg", &reg(map::UART_BASE, map::UART_SIZE))?;
    fdt.property_u32("clock-frequency", map::UART_CLOCK_HZ)?;
    fdt.property_u32("interrupts", map::UART_IRQ)?;
    fdt.property_u32("interrupt-parent", PHANDLE_PLIC)?;
    fdt.end_node(uart)?;

    for slot in 0..cfg.virtio_slots.min(map::VIRTIO_SLOTS) {
        let base = map::VIRTIO_BASE + slot * map::VIRTIO_STRIDE;
        let node = fdt.begin_node(&format!("virtio_mmio@{base:x}"))?;
        fdt.property_string("compatible", "virtio,mmio")?;
        fdt.property_array_u64("reg", &reg(base, map::VIRTIO_STRIDE as u64))?;
        fdt.property_u32("interrupts", map::VIRTIO_IRQ_BASE + slot)?;
        fdt.property_u32("interrupt-parent", PHANDLE_PLIC)?;
        fdt.end_node(node)?;
    }

    let plic = fdt.begin_node(&format!("plic@{:x}", map::PLIC_BASE))?;
    fdt.property_string_list(
        "compatible",
        vec!["sifive,plic-1.0.0".into(), "riscv,plic0".into()],
    )?;
    fdt.property_array_u64("reg", &reg(map::PLIC_BASE, map::PLIC_SIZE))?;
    fdt.property_u32("#address-cells", 0)?;
    fdt.property_u32("#interrupt-cells", 1)?;
    fdt.property_null("interrupt-controller")?;
    fdt.property_u32("riscv,ndev", map::PLIC_SOURCES)?;
    fdt.property_array_u32(
        "interrupts-extended",
        &[PHANDLE_CPU0_INTC, IRQ_M_EXT, PHANDLE_CPU0_INTC, IRQ_S_EXT],
    )?;
    fdt.property_phandle(PHANDLE_PLIC)?;
    fdt.end_node(plic)?;

    let clint = fdt.begin_node(&format!("clint@{:x}", map::CLINT_BASE))?;
    fdt.property_string_list(
        "compatible",
        vec!["sifive,clint0".into(), "riscv,clint0".into()],
    )?;
    fdt.property_array_u64("reg", &reg(map::CLINT_BASE, map::CLINT_SIZE))?;
    fdt.property_array_u32(
        "interrupts-extended",
        &[
            PHANDLE_CPU0_INTC,
            IRQ_M_SOFT,
            PHANDLE_CPU0_INTC,
            IRQ_M_TIMER,
        ],
    )?;
    fdt.end_node(clint)?;

    fdt.end_node(soc)?;
    fdt.end_node(root)?;
    fdt.finish()
}

/// Why a user-supplied DTB was refused.
#[derive(Debug, thiserror::Error)]
pub enum DtbError {
    /// The blob does not parse as a flattened device tree.
    #[error("malformed device tree: {0}")]
    Malformed(String),
    /// A node Linux needs is missing.
    #[error("device tree has no {0} node")]
    Missing(&'static str),
}

/// Check a user-supplied DTB before handing it to the guest: it must parse and have /cpus,
/// /chosen and a memory node.
pub fn validate(blob: &[u8]) -> Result<(), DtbError> {
    // The fdt crate panics (instead of returning an error) on some corrupt trees: contain the
    // panic, silently, and report the tree as malformed. Boot validates before any other
    // thread exists, so swapping the process-wide hook is harmless.
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(|| validate_structure(blob));
    std::panic::set_hook(previous_hook);
    outcome.unwrap_or_else(|_| Err(DtbError::Malformed("the structure block is corrupt".into())))
}

/// The checks themselves; may panic inside the fdt crate on corrupt input.
fn validate_structure(blob: &[u8]) -> Result<(), DtbError> {
    let tree = fdt::Fdt::new(blob).map_err(|e| DtbError::Malformed(format!("{e:?}")))?;
    for (path, what) in [("/cpus", "/cpus"), ("/chosen", "/chosen")] {
        if tree.find_node(path).is_none() {
            return Err(DtbError::Missing(what));
        }
    }
    if !tree.all_nodes().any(|n| n.name.starts_with("memory")) {
        return Err(DtbError::Missing("/memory"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        build(&FdtConfig {
            ram_size: 256 << 20,
            bootargs: "console=ttyS0".into(),
            initrd: Some((0x8800_0000, 0x8810_0000)),
            virtio_slots: 2,
        })
        .unwrap()
    }

    #[test]
    fn generated_tree_parses_and_describes_the_machine() {
        let blob = sample();
        validate(&blob).unwrap();
        let tree = fdt::Fdt::new(&blob).unwrap();
        assert_eq!(tree.chosen().bootargs(), Some("console=ttyS0"));
        let mem = tree.memory().regions().next().unwrap();
        assert_eq!(mem.starting_address as usize, map::RAM_BASE as usize);
        assert_eq!(mem.size, Some(256 << 20));
        let cpu = tree.cpus().next().unwrap();
        assert_eq!(cpu.timebase_frequency(), TIMEBASE_HZ as usize);
        assert!(tree.find_compatible(&["ns16550a"]).is_some());
        assert_eq!(tree.find_all_nodes("/soc/virtio_mmio").count(), 2);
    }

    #[test]
    fn isa_string_lists_letters_then_extensions() {
        let s = isa_string();
        assert!(s.starts_with("rv32imafdc"), "{s}");
        assert!(s.contains("_zicsr"), "{s}");
    }

    #[test]
    fn mutated_blobs_never_panic() {
        let blob = sample();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..3000 {
            let mut b = blob.clone();
            for _ in 0..4 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let i = (seed % b.len() as u64) as usize;
                b[i] = (seed >> 32) as u8;
            }
            let _ = validate(&b);
        }
    }

    #[test]
    fn garbage_and_truncated_blobs_are_refused() {
        assert!(validate(b"not a device tree").is_err());
        let blob = sample();
        for len in [0, 8, 40, blob.len() / 2] {
            assert!(validate(&blob[..len]).is_err(), "prefix {len}");
        }
    }
}
