//! What gdb sees of the hart: the register numbering and the target description (integer
//! registers and pc, the 64-bit FP registers with fflags/frm/fcsr, the CSRs, and the privilege
//! level as QEMU reports it), and the debugger's side-effect-free access to each register.

use std::num::NonZeroUsize;
use std::sync::OnceLock;

use gdbstub::arch::{Arch, RegId};
use gdbstub_arch::riscv::reg::RiscvCoreRegs;

use crate::cpu::csr;
use crate::cpu::{Hart, Priv};

/// gdb's register number of `f0` (x0..x31 are 0..31, pc is 32).
const FIRST_FPR: usize = 33;
/// gdb's register number of CSR 0 (CSR `n` is `FIRST_CSR + n`).
const FIRST_CSR: usize = 65;
/// gdb's register number of the privilege level (`RISCV_PRIV_REGNUM`).
const PRIV: usize = 4161;

/// The hart as gdb's RISC-V 32 architecture, with our target description.
pub enum Rv32 {}

impl Arch for Rv32 {
    type Usize = u32;
    /// The `g` packet: x0..x31 and pc; gdb reads every other register with `p`.
    type Registers = RiscvCoreRegs<u32>;
    type BreakpointKind = usize;
    type RegId = Register;

    fn target_description_xml() -> Option<&'static str> {
        static XML: OnceLock<String> = OnceLock::new();
        Some(XML.get_or_init(target_description).as_str())
    }
}

/// A register by gdb's RISC-V numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Register {
    /// x0..x31.
    X(u8),
    Pc,
    /// f0..f31 (64 bits: the D extension).
    F(u8),
    /// A CSR by its number (fflags, frm and fcsr included).
    Csr(u16),
    /// The privilege level (0 U, 1 S, 3 M).
    Priv,
}

impl RegId for Register {
    fn from_raw_id(id: usize) -> Option<(Self, Option<NonZeroUsize>)> {
        let (reg, size) = match id {
            0..=31 => (Register::X(id as u8), 4),
            32 => (Register::Pc, 4),
            FIRST_FPR..=64 => (Register::F((id - FIRST_FPR) as u8), 8),
            FIRST_CSR..=4160 => (Register::Csr((id - FIRST_CSR) as u16), 4),
            PRIV => (Register::Priv, 4),
            _ => return None,
        };
        Some((reg, NonZeroUsize::new(size)))
    }
}

/// CSRs gdb is told about (besides fflags, frm and fcsr, which belong to the FP feature).
const DESCRIBED_CSRS: &[(&str, u16)] = &[
    ("sstatus", csr::SSTATUS),
    ("sie", csr::SIE),
    ("stvec", csr::STVEC),
    ("scounteren", csr::SCOUNTEREN),
    ("senvcfg", csr::SENVCFG),
    ("sscratch", csr::SSCRATCH),
    ("sepc", csr::SEPC),
    ("scause", csr::SCAUSE),
    ("stval", csr::STVAL),
    ("sip", csr::SIP),
    ("stimecmp", csr::STIMECMP),
    ("stimecmph", csr::STIMECMPH),
    ("satp", csr::SATP),
    ("mstatus", csr::MSTATUS),
    ("misa", csr::MISA),
    ("medeleg", csr::MEDELEG),
    ("mideleg", csr::MIDELEG),
    ("mie", csr::MIE),
    ("mtvec", csr::MTVEC),
    ("mcounteren", csr::MCOUNTEREN),
    ("menvcfg", csr::MENVCFG),
    ("menvcfgh", csr::MENVCFGH),
    ("mscratch", csr::MSCRATCH),
    ("mepc", csr::MEPC),
    ("mcause", csr::MCAUSE),
    ("mtval", csr::MTVAL),
    ("mip", csr::MIP),
    ("mcycle", csr::MCYCLE),
    ("minstret", csr::MINSTRET),
    ("mcycleh", csr::MCYCLEH),
    ("minstreth", csr::MINSTRETH),
    ("cycle", csr::CYCLE),
    ("time", csr::TIME),
    ("instret", csr::INSTRET),
    ("cycleh", csr::CYCLEH),
    ("timeh", csr::TIMEH),
    ("instreth", csr::INSTRETH),
    ("mhartid", csr::MHARTID),
];

/// ABI names of x0..x31, as gdb's own riscv description names them.
const X_NAMES: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

/// ABI names of f0..f31.
const F_NAMES: [&str; 32] = [
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2",
    "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
    "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
];

/// The target description gdb gets (`qXfer:features:read:target.xml`).
fn target_description() -> String {
    use std::fmt::Write as _;
    let mut x = String::from(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n<target>\n\
         <architecture>riscv:rv32</architecture>\n<feature name=\"org.gnu.gdb.riscv.cpu\">\n",
    );
    for (n, name) in X_NAMES.iter().enumerate() {
        let kind = match n {
            1 => "code_ptr",
            2 | 8 => "data_ptr",
            _ => "int",
        };
        let _ = writeln!(
            x,
            "<reg name=\"{name}\" bitsize=\"32\" type=\"{kind}\" regnum=\"{n}\"/>"
        );
    }
    x.push_str("<reg name=\"pc\" bitsize=\"32\" type=\"code_ptr\" regnum=\"32\"/>\n</feature>\n");
    x.push_str(
        "<feature name=\"org.gnu.gdb.riscv.fpu\">\n<union id=\"riscv_double\">\
         <field name=\"float\" type=\"ieee_single\"/><field name=\"double\" type=\"ieee_double\"/>\
         </union>\n",
    );
    for (n, name) in F_NAMES.iter().enumerate() {
        let _ = writeln!(
            x,
            "<reg name=\"{name}\" bitsize=\"64\" type=\"riscv_double\" regnum=\"{}\"/>",
            FIRST_FPR + n
        );
    }
    for (name, num) in [
        ("fflags", csr::FFLAGS),
        ("frm", csr::FRM),
        ("fcsr", csr::FCSR),
    ] {
        let _ = writeln!(
            x,
            "<reg name=\"{name}\" bitsize=\"32\" type=\"int\" regnum=\"{}\" group=\"float\"/>",
            FIRST_CSR + num as usize
        );
    }
    x.push_str("</feature>\n<feature name=\"org.gnu.gdb.riscv.csr\">\n");
    for (name, num) in DESCRIBED_CSRS {
        let _ = writeln!(
            x,
            "<reg name=\"{name}\" bitsize=\"32\" type=\"int\" regnum=\"{}\" group=\"csr\"/>",
            FIRST_CSR + *num as usize
        );
    }
    let _ = write!(
        x,
        "</feature>\n<feature name=\"org.gnu.gdb.riscv.virtual\">\n\
         <reg name=\"priv\" bitsize=\"32\" type=\"int\" regnum=\"{PRIV}\" group=\"general\"/>\n\
         </feature>\n</target>\n"
    );
    x
}

/// Read register `reg` as the debugger sees it (no side effect; CSRs as M-mode reads them).
/// `None` for a register that does not exist.
pub fn read(hart: &mut Hart, reg: Register) -> Option<Vec<u8>> {
    Some(match reg {
        Register::X(n) => hart.reg(n).to_le_bytes().to_vec(),
        Register::Pc => hart.pc.to_le_bytes().to_vec(),
        Register::F(n) => hart.f[n as usize & 31].to_le_bytes().to_vec(),
        Register::Csr(num) => read_csr(hart, num)?.to_le_bytes().to_vec(),
        Register::Priv => (hart.prv as u32).to_le_bytes().to_vec(),
    })
}

/// Write register `reg` from gdb's little-endian bytes; false if it does not exist or the value
/// does not fit it.
pub fn write(hart: &mut Hart, reg: Register, bytes: &[u8]) -> bool {
    let word = |b: &[u8]| {
        b.get(..4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    match reg {
        Register::X(n) => match word(bytes) {
            Some(v) => hart.set_reg(n, v),
            None => return false,
        },
        Register::Pc => match word(bytes) {
            Some(v) => hart.pc = v & !1,
            None => return false,
        },
        Register::F(n) => {
            let mut v = [0xffu8; 8];
            if bytes.is_empty() || bytes.len() > 8 {
                return false;
            }
            // A 4-byte write is a single value: NaN-box it.
            v[..bytes.len()].copy_from_slice(bytes);
            hart.f[n as usize & 31] = u64::from_le_bytes(v);
            hart.mark_fp_dirty();
        }
        Register::Csr(num) => match word(bytes) {
            Some(v) => return write_csr(hart, num, v),
            None => return false,
        },
        Register::Priv => match word(bytes) {
            Some(v @ (0 | 1 | 3)) => {
                hart.prv = Priv::from_bits(v);
                // Translation depends on the privilege level.
                hart.tlb.flush();
            }
            _ => return false,
        },
    }
    true
}

/// CSR `num` as M-mode software would read it, without side effects.
fn read_csr(hart: &mut Hart, num: u16) -> Option<u32> {
    match num {
        csr::FFLAGS => return Some(hart.fflags as u32),
        csr::FRM => return Some(hart.frm as u32),
        csr::FCSR => return Some(hart.fcsr()),
        _ => {}
    }
    let privilege = hart.prv;
    hart.prv = Priv::Machine;
    let value = hart.csr_read(num, 0).ok();
    hart.prv = privilege;
    value
}

/// Write CSR `num` as M-mode software would (read-only CSRs refuse).
fn write_csr(hart: &mut Hart, num: u16, value: u32) -> bool {
    match num {
        csr::FFLAGS => hart.fflags = (value & 0x1f) as u8,
        csr::FRM => hart.frm = (value & 7) as u8,
        csr::FCSR => {
            hart.fflags = (value & 0x1f) as u8;
            hart.frm = (value >> 5 & 7) as u8;
        }
        _ => {
            let privilege = hart.prv;
            hart.prv = Priv::Machine;
            let written = hart.csr_write(num, value, 0).is_ok();
            hart.prv = privilege;
            return written;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_numbers_follow_gdbs_riscv_numbering() {
        let id = |n| Register::from_raw_id(n).map(|(r, size)| (r, size.map_or(0, |s| s.get())));
        assert_eq!(id(0), Some((Register::X(0), 4)));
        assert_eq!(id(32), Some((Register::Pc, 4)));
        assert_eq!(id(33), Some((Register::F(0), 8)));
        assert_eq!(id(66), Some((Register::Csr(csr::FFLAGS), 4)));
        assert_eq!(id(65 + 0x300), Some((Register::Csr(csr::MSTATUS), 4)));
        assert_eq!(id(4161), Some((Register::Priv, 4)));
        assert_eq!(id(4162), None);
    }

    #[test]
    fn registers_read_back_what_was_written() {
        let mut hart = Hart::new();
        assert!(write(&mut hart, Register::X(10), &7u32.to_le_bytes()));
        assert_eq!(hart.x[10], 7);
        assert!(write(&mut hart, Register::X(0), &7u32.to_le_bytes()));
        assert_eq!(hart.x[0], 0, "x0 stays zero");
        assert!(write(&mut hart, Register::F(3), &1.5f64.to_le_bytes()));
        assert_eq!(
            read(&mut hart, Register::F(3)),
            Some(1.5f64.to_le_bytes().to_vec())
        );
        assert!(write(
            &mut hart,
            Register::Csr(csr::MSCRATCH),
            &0x1234u32.to_le_bytes()
        ));
        hart.prv = Priv::User;
        assert_eq!(
            read(&mut hart, Register::Csr(csr::MSCRATCH)),
            Some(0x1234u32.to_le_bytes().to_vec()),
            "CSRs read as M-mode whatever the hart's privilege"
        );
        assert_eq!(hart.prv, Priv::User);
        assert!(write(&mut hart, Register::Priv, &1u32.to_le_bytes()));
        assert_eq!(hart.prv, Priv::Supervisor);
        assert!(!write(&mut hart, Register::Priv, &2u32.to_le_bytes()));
        assert!(!write(
            &mut hart,
            Register::Csr(csr::MHARTID),
            &1u32.to_le_bytes()
        ));
        assert_eq!(read(&mut hart, Register::Csr(0x7ff)), None);
    }

    #[test]
    fn the_description_names_every_register_once() {
        let xml = target_description();
        assert!(xml.contains("<architecture>riscv:rv32</architecture>"));
        for name in ["\"pc\"", "\"ft0\"", "\"fcsr\"", "\"satp\"", "\"priv\""] {
            assert_eq!(xml.matches(name).count(), 1, "{name}");
        }
    }
}
