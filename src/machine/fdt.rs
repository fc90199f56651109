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
    /// The tree parsed but could not be written back with the new /chosen properties.
    #[error("cannot update /chosen in the device tree: {0}")]
    Rewrite(String),
}

/// Check a user-supplied DTB before handing it to the guest: it must parse and have /cpus and
/// a memory node. A missing /chosen is created when `--append` or `--initrd` need it
/// ([`patch_chosen`]).
pub fn validate(blob: &[u8]) -> Result<(), DtbError> {
    // The fdt crate panics (instead of returning an error) on some corrupt trees: contain the
    // panic, silently, and report the tree as malformed. Boot validates before any other
    // thread exists, so swapping the process-wide hook is harmless.
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(|| validate_structure(blob));
    std::panic::set_hook(previous_hook);
    let outcome = outcome
        .unwrap_or_else(|_| Err(DtbError::Malformed("the structure block is corrupt".into())));
    // Our own strict reader must accept the tree too: it is what `patch_chosen` uses.
    outcome.and_then(|()| Tree::parse(blob).map(|_| ()))
}

/// The checks themselves; may panic inside the fdt crate on corrupt input. Only lookups that
/// return `Option` are used (`Fdt::chosen`, `cpus` and `memory` panic when the node is absent).
fn validate_structure(blob: &[u8]) -> Result<(), DtbError> {
    let tree = fdt::Fdt::new(blob).map_err(|e| DtbError::Malformed(format!("{e:?}")))?;
    if tree.find_node("/cpus").is_none() {
        return Err(DtbError::Missing("/cpus"));
    }
    if !tree.all_nodes().any(|n| n.name.starts_with("memory")) {
        return Err(DtbError::Missing("/memory"));
    }
    Ok(())
}

/// What `--append` and `--initrd` change in a user-supplied tree's /chosen node, as QEMU does
/// with `-dtb`: `bootargs` is replaced only when `--append` was given, the initrd range is set
/// when there is an initrd; every other property and node is kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChosenPatch {
    pub bootargs: Option<String>,
    /// Physical start and end of the initrd.
    pub initrd: Option<(u64, u64)>,
}

impl ChosenPatch {
    /// Whether the patch changes nothing (the tree is then used byte for byte).
    pub fn is_empty(&self) -> bool {
        self.bootargs.is_none() && self.initrd.is_none()
    }
}

/// Rewrite `blob` with /chosen patched (and created if missing). Everything else is kept: the
/// memory reservations, `boot_cpuid_phys`, every node and property in order.
pub fn patch_chosen(blob: &[u8], patch: &ChosenPatch) -> Result<Vec<u8>, DtbError> {
    let mut tree = Tree::parse(blob)?;
    let chosen = match tree.root.children.iter().position(|n| n.name == "chosen") {
        Some(i) => &mut tree.root.children[i],
        None => {
            // Properties come before children; the new node goes first, as in our own trees.
            tree.root.children.insert(
                0,
                Node {
                    name: "chosen".into(),
                    ..Node::default()
                },
            );
            &mut tree.root.children[0]
        }
    };
    if let Some(args) = &patch.bootargs {
        let mut value = args.clone().into_bytes();
        value.push(0);
        chosen.set("bootargs", value);
    }
    if let Some((start, end)) = patch.initrd {
        chosen.set("linux,initrd-start", start.to_be_bytes().to_vec());
        chosen.set("linux,initrd-end", end.to_be_bytes().to_vec());
    }
    tree.write()
}

/// Structure-block tokens (devicetree specification, 5.4.1).
const FDT_MAGIC: u32 = 0xd00d_feed;
const FDT_BEGIN_NODE: u32 = 1;
const FDT_END_NODE: u32 = 2;
const FDT_PROP: u32 = 3;
const FDT_NOP: u32 = 4;
const FDT_END: u32 = 9;
/// Deepest nesting accepted (the recursion below is bounded by it; vm-fdt allows as much).
const MAX_DEPTH: usize = 64;

/// A device tree node as read from a blob.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Node {
    name: String,
    properties: Vec<(String, Vec<u8>)>,
    children: Vec<Node>,
}

impl Node {
    /// Replace property `name` in place, or append it.
    fn set(&mut self, name: &str, value: Vec<u8>) {
        match self.properties.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => *v = value,
            None => self.properties.push((name.to_string(), value)),
        }
    }

    fn write(&self, out: &mut FdtWriter) -> Result<(), DtbError> {
        let rewrite = |e: vm_fdt::Error| DtbError::Rewrite(format!("node {:?}: {e}", self.name));
        let node = out.begin_node(&self.name).map_err(rewrite)?;
        for (name, value) in &self.properties {
            out.property(name, value).map_err(rewrite)?;
        }
        for child in &self.children {
            child.write(out)?;
        }
        out.end_node(node).map_err(rewrite)
    }
}

/// A whole device tree, read with bounds checks on every offset (never a panic).
#[derive(Debug)]
struct Tree {
    reservations: Vec<(u64, u64)>,
    boot_cpuid_phys: u32,
    root: Node,
}

/// A cursor over the blob with checked reads.
struct Reader<'a> {
    blob: &'a [u8],
    pos: usize,
    /// The structure block ends here.
    end: usize,
}

fn malformed(what: &str) -> DtbError {
    DtbError::Malformed(what.to_string())
}

fn be32(blob: &[u8], offset: usize) -> Option<u32> {
    let bytes = blob.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_be_bytes(bytes.try_into().ok()?))
}

fn be64(blob: &[u8], offset: usize) -> Option<u64> {
    let bytes = blob.get(offset..offset.checked_add(8)?)?;
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

/// The NUL-terminated UTF-8 string at `offset` within `block`.
fn c_string(block: &[u8], offset: usize) -> Option<&str> {
    let rest = block.get(offset..)?;
    let len = rest.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&rest[..len]).ok()
}

impl Reader<'_> {
    fn u32(&mut self) -> Result<u32, DtbError> {
        if self.pos.checked_add(4).is_none_or(|e| e > self.end) {
            return Err(malformed("the structure block ends early"));
        }
        let v = be32(self.blob, self.pos).ok_or_else(|| malformed("truncated"))?;
        self.pos += 4;
        Ok(v)
    }

    /// Skip `len` bytes and the padding to the next 4-byte boundary.
    fn skip_aligned(&mut self, len: usize) -> Result<(), DtbError> {
        let next = self
            .pos
            .checked_add(len)
            .and_then(|p| p.checked_next_multiple_of(4))
            .filter(|&p| p <= self.end)
            .ok_or_else(|| malformed("the structure block ends inside a token"))?;
        self.pos = next;
        Ok(())
    }

    /// The next token that is not a NOP.
    fn token(&mut self) -> Result<u32, DtbError> {
        loop {
            let t = self.u32()?;
            if t != FDT_NOP {
                return Ok(t);
            }
        }
    }
}

impl Tree {
    fn parse(blob: &[u8]) -> Result<Tree, DtbError> {
        let header = |i: usize| be32(blob, i * 4).ok_or_else(|| malformed("truncated header"));
        if header(0)? != FDT_MAGIC {
            return Err(malformed("bad magic"));
        }
        let total = header(1)? as usize;
        if total > blob.len() {
            return Err(malformed("the header's total size exceeds the file"));
        }
        let blob = &blob[..total];
        let (off_struct, off_strings, off_rsvmap) = (
            header(2)? as usize,
            header(3)? as usize,
            header(4)? as usize,
        );
        let boot_cpuid_phys = header(7)?;
        let (size_strings, size_struct) = (header(8)? as usize, header(9)? as usize);
        let strings = off_strings
            .checked_add(size_strings)
            .and_then(|end| blob.get(off_strings..end))
            .ok_or_else(|| malformed("the strings block lies outside the file"))?;
        let struct_end = off_struct
            .checked_add(size_struct)
            .filter(|&end| end <= blob.len())
            .ok_or_else(|| malformed("the structure block lies outside the file"))?;

        let mut reservations = Vec::new();
        let mut at = off_rsvmap;
        loop {
            let entry = be64(blob, at).zip(at.checked_add(8).and_then(|a| be64(blob, a)));
            let (address, size) =
                entry.ok_or_else(|| malformed("the memory reservation map is not terminated"))?;
            if address == 0 && size == 0 {
                break;
            }
            reservations.push((address, size));
            at += 16;
        }

        let mut reader = Reader {
            blob,
            pos: off_struct,
            end: struct_end,
        };
        if reader.token()? != FDT_BEGIN_NODE {
            return Err(malformed(
                "the structure block does not start with the root node",
            ));
        }
        let root = Self::node(&mut reader, strings, 0)?;
        if reader.token()? != FDT_END {
            return Err(malformed("data after the root node"));
        }
        Ok(Tree {
            reservations,
            boot_cpuid_phys,
            root,
        })
    }

    /// The node whose FDT_BEGIN_NODE token was just read.
    fn node(reader: &mut Reader<'_>, strings: &[u8], depth: usize) -> Result<Node, DtbError> {
        if depth >= MAX_DEPTH {
            return Err(malformed("nodes nested too deeply"));
        }
        let name = c_string(&reader.blob[..reader.end], reader.pos)
            .ok_or_else(|| malformed("a node name is not a terminated UTF-8 string"))?
            .to_string();
        reader.skip_aligned(name.len() + 1)?;
        let mut node = Node {
            name,
            ..Node::default()
        };
        loop {
            match reader.token()? {
                FDT_PROP => {
                    if !node.children.is_empty() {
                        return Err(malformed("a property follows a child node"));
                    }
                    let len = reader.u32()? as usize;
                    let name_offset = reader.u32()? as usize;
                    let name = c_string(strings, name_offset).ok_or_else(|| {
                        malformed("a property name lies outside the strings block")
                    })?;
                    let value = reader
                        .pos
                        .checked_add(len)
                        .filter(|&end| end <= reader.end)
                        .and_then(|end| reader.blob.get(reader.pos..end))
                        .ok_or_else(|| malformed("a property value runs past the structure block"))?
                        .to_vec();
                    reader.skip_aligned(len)?;
                    node.properties.push((name.to_string(), value));
                }
                FDT_BEGIN_NODE => node.children.push(Self::node(reader, strings, depth + 1)?),
                FDT_END_NODE => return Ok(node),
                other => return Err(DtbError::Malformed(format!("unexpected token {other:#x}"))),
            }
        }
    }

    fn write(&self) -> Result<Vec<u8>, DtbError> {
        let rewrite = |e: vm_fdt::Error| DtbError::Rewrite(e.to_string());
        let reservations = self
            .reservations
            .iter()
            .map(|&(address, size)| vm_fdt::FdtReserveEntry::new(address, size))
            .collect::<Result<Vec<_>, _>>()
            .map_err(rewrite)?;
        let mut out = FdtWriter::new_with_mem_reserv(&reservations).map_err(rewrite)?;
        out.set_boot_cpuid_phys(self.boot_cpuid_phys);
        self.root.write(&mut out)?;
        out.finish().map_err(rewrite)
    }
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
            let _ = patch_chosen(
                &b,
                &ChosenPatch {
                    bootargs: Some("x".into()),
                    initrd: None,
                },
            );
        }
    }

    /// A small tree without /chosen, with a memory reservation and a non-zero boot cpu.
    fn tree_without_chosen() -> Vec<u8> {
        let rsv = vm_fdt::FdtReserveEntry::new(0x8000_0000, 0x1000).unwrap();
        let mut w = FdtWriter::new_with_mem_reserv(&[rsv]).unwrap();
        w.set_boot_cpuid_phys(0);
        let root = w.begin_node("").unwrap();
        w.property_u32("#address-cells", 2).unwrap();
        let memory = w.begin_node("memory@80000000").unwrap();
        w.property_string("device_type", "memory").unwrap();
        w.end_node(memory).unwrap();
        let cpus = w.begin_node("cpus").unwrap();
        w.property_u32("timebase-frequency", 10_000_000).unwrap();
        w.end_node(cpus).unwrap();
        w.end_node(root).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn patch_replaces_bootargs_and_sets_the_initrd_keeping_everything_else() {
        let blob = sample();
        let patch = ChosenPatch {
            bootargs: Some("console=ttyS0 marker=42".into()),
            initrd: Some((0x8900_0000, 0x8920_0000)),
        };
        let patched = patch_chosen(&blob, &patch).unwrap();
        validate(&patched).unwrap();
        let tree = fdt::Fdt::new(&patched).unwrap();
        assert_eq!(tree.chosen().bootargs(), Some("console=ttyS0 marker=42"));
        let chosen = tree.find_node("/chosen").unwrap();
        let prop = |name| chosen.property(name).unwrap().value.to_vec();
        assert_eq!(prop("linux,initrd-start"), 0x8900_0000u64.to_be_bytes());
        assert_eq!(prop("linux,initrd-end"), 0x8920_0000u64.to_be_bytes());
        // stdout-path survives; every other node is identical.
        assert!(chosen.property("stdout-path").is_some());
        let (before, after) = (Tree::parse(&blob).unwrap(), Tree::parse(&patched).unwrap());
        let others = |t: &Tree| {
            t.root
                .children
                .iter()
                .filter(|n| n.name != "chosen")
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(others(&before), others(&after));
        assert_eq!(before.root.properties, after.root.properties);
    }

    #[test]
    fn patch_keeps_bootargs_without_append_and_an_empty_patch_changes_nothing() {
        let blob = sample();
        let initrd_only = ChosenPatch {
            bootargs: None,
            initrd: Some((0x8900_0000, 0x8920_0000)),
        };
        let patched = patch_chosen(&blob, &initrd_only).unwrap();
        let tree = fdt::Fdt::new(&patched).unwrap();
        assert_eq!(tree.chosen().bootargs(), Some("console=ttyS0"));
        let same = patch_chosen(&blob, &ChosenPatch::default()).unwrap();
        assert_eq!(
            format!("{:?}", Tree::parse(&same).unwrap()),
            format!("{:?}", Tree::parse(&blob).unwrap())
        );
    }

    #[test]
    fn patch_creates_a_missing_chosen_and_keeps_reservations() {
        let blob = tree_without_chosen();
        validate(&blob).unwrap();
        let patch = ChosenPatch {
            bootargs: Some("quiet".into()),
            initrd: None,
        };
        let patched = patch_chosen(&blob, &patch).unwrap();
        let tree = fdt::Fdt::new(&patched).unwrap();
        assert_eq!(tree.chosen().bootargs(), Some("quiet"));
        let rsv: Vec<(usize, Option<usize>)> = tree
            .memory_reservations()
            .map(|r| (r.address() as usize, Some(r.size())))
            .collect();
        assert_eq!(rsv, vec![(0x8000_0000, Some(0x1000))]);
        assert!(tree.find_node("/cpus").is_some());
    }

    #[test]
    fn trees_missing_cpus_or_memory_are_refused_without_panicking() {
        let mut w = FdtWriter::new().unwrap();
        let root = w.begin_node("").unwrap();
        let chosen = w.begin_node("chosen").unwrap();
        w.end_node(chosen).unwrap();
        w.end_node(root).unwrap();
        let blob = w.finish().unwrap();
        assert!(matches!(validate(&blob), Err(DtbError::Missing("/cpus"))));
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
