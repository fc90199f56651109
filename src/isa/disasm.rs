//! Disassembly of decoded instructions, for tracing and divergence reports.
//!
//! The text follows GNU objdump's `-M no-aliases,numeric` style (`add x1,x2,x3`, `lw x5,-4(x2)`,
//! `fadd.s f1,f2,f3,rtz`), except that branch and jump targets are printed as absolute `0x...`
//! addresses, CSRs by number (`csrrs x5,0x300,x0`), an all-zero FENCE set as `0`, and compressed
//! instructions as their 32-bit expansion (`c.mv x8,x9` prints `add x8,x0,x9`).

use std::fmt::{self, Write as _};

use super::{Insn, Op};

impl Op {
    /// The lowercase assembler mnemonic (compressed forms use their expansion's mnemonic).
    pub const fn mnemonic(self) -> &'static str {
        use Op::*;
        match self {
            Illegal => "illegal",
            Lui => "lui",
            Auipc => "auipc",
            Jal => "jal",
            Jalr => "jalr",
            Beq => "beq",
            Bne => "bne",
            Blt => "blt",
            Bge => "bge",
            Bltu => "bltu",
            Bgeu => "bgeu",
            Lb => "lb",
            Lh => "lh",
            Lw => "lw",
            Lbu => "lbu",
            Lhu => "lhu",
            Sb => "sb",
            Sh => "sh",
            Sw => "sw",
            Addi => "addi",
            Slti => "slti",
            Sltiu => "sltiu",
            Xori => "xori",
            Ori => "ori",
            Andi => "andi",
            Slli => "slli",
            Srli => "srli",
            Srai => "srai",
            Add => "add",
            Sub => "sub",
            Sll => "sll",
            Slt => "slt",
            Sltu => "sltu",
            Xor => "xor",
            Srl => "srl",
            Sra => "sra",
            Or => "or",
            And => "and",
            Fence => "fence",
            FenceI => "fence.i",
            Ecall => "ecall",
            Ebreak => "ebreak",
            Mret => "mret",
            Sret => "sret",
            Wfi => "wfi",
            SfenceVma => "sfence.vma",
            Csrrw => "csrrw",
            Csrrs => "csrrs",
            Csrrc => "csrrc",
            Csrrwi => "csrrwi",
            Csrrsi => "csrrsi",
            Csrrci => "csrrci",
            Mul => "mul",
            Mulh => "mulh",
            Mulhsu => "mulhsu",
            Mulhu => "mulhu",
            Div => "div",
            Divu => "divu",
            Rem => "rem",
            Remu => "remu",
            LrW => "lr.w",
            ScW => "sc.w",
            AmoswapW => "amoswap.w",
            AmoaddW => "amoadd.w",
            AmoxorW => "amoxor.w",
            AmoandW => "amoand.w",
            AmoorW => "amoor.w",
            AmominW => "amomin.w",
            AmomaxW => "amomax.w",
            AmominuW => "amominu.w",
            AmomaxuW => "amomaxu.w",
            AmoswapB => "amoswap.b",
            AmoaddB => "amoadd.b",
            AmoxorB => "amoxor.b",
            AmoandB => "amoand.b",
            AmoorB => "amoor.b",
            AmominB => "amomin.b",
            AmomaxB => "amomax.b",
            AmominuB => "amominu.b",
            AmomaxuB => "amomaxu.b",
            AmoswapH => "amoswap.h",
            AmoaddH => "amoadd.h",
            AmoxorH => "amoxor.h",
            AmoandH => "amoand.h",
            AmoorH => "amoor.h",
            AmominH => "amomin.h",
            AmomaxH => "amomax.h",
            AmominuH => "amominu.h",
            AmomaxuH => "amomaxu.h",
            AmocasB => "amocas.b",
            AmocasH => "amocas.h",
            AmocasW => "amocas.w",
            AmocasD => "amocas.d",
            Flh => "flh",
            Fsh => "fsh",
            FmaddH => "fmadd.h",
            FmsubH => "fmsub.h",
            FnmsubH => "fnmsub.h",
            FnmaddH => "fnmadd.h",
            FaddH => "fadd.h",
            FsubH => "fsub.h",
            FmulH => "fmul.h",
            FdivH => "fdiv.h",
            FsqrtH => "fsqrt.h",
            FsgnjH => "fsgnj.h",
            FsgnjnH => "fsgnjn.h",
            FsgnjxH => "fsgnjx.h",
            FminH => "fmin.h",
            FmaxH => "fmax.h",
            FcvtSH => "fcvt.s.h",
            FcvtHS => "fcvt.h.s",
            FcvtDH => "fcvt.d.h",
            FcvtHD => "fcvt.h.d",
            FeqH => "feq.h",
            FltH => "flt.h",
            FleH => "fle.h",
            FclassH => "fclass.h",
            FcvtWH => "fcvt.w.h",
            FcvtWuH => "fcvt.wu.h",
            FcvtHW => "fcvt.h.w",
            FcvtHWu => "fcvt.h.wu",
            FmvXH => "fmv.x.h",
            FmvHX => "fmv.h.x",
            Flw => "flw",
            Fsw => "fsw",
            FmaddS => "fmadd.s",
            FmsubS => "fmsub.s",
            FnmsubS => "fnmsub.s",
            FnmaddS => "fnmadd.s",
            FaddS => "fadd.s",
            FsubS => "fsub.s",
            FmulS => "fmul.s",
            FdivS => "fdiv.s",
            FsqrtS => "fsqrt.s",
            FsgnjS => "fsgnj.s",
            FsgnjnS => "fsgnjn.s",
            FsgnjxS => "fsgnjx.s",
            FminS => "fmin.s",
            FmaxS => "fmax.s",
            FcvtWS => "fcvt.w.s",
            FcvtWuS => "fcvt.wu.s",
            FmvXW => "fmv.x.w",
            FeqS => "feq.s",
            FltS => "flt.s",
            FleS => "fle.s",
            FclassS => "fclass.s",
            FcvtSW => "fcvt.s.w",
            FcvtSWu => "fcvt.s.wu",
            FmvWX => "fmv.w.x",
            Fld => "fld",
            Fsd => "fsd",
            FmaddD => "fmadd.d",
            FmsubD => "fmsub.d",
            FnmsubD => "fnmsub.d",
            FnmaddD => "fnmadd.d",
            FaddD => "fadd.d",
            FsubD => "fsub.d",
            FmulD => "fmul.d",
            FdivD => "fdiv.d",
            FsqrtD => "fsqrt.d",
            FsgnjD => "fsgnj.d",
            FsgnjnD => "fsgnjn.d",
            FsgnjxD => "fsgnjx.d",
            FminD => "fmin.d",
            FmaxD => "fmax.d",
            FcvtSD => "fcvt.s.d",
            FcvtDS => "fcvt.d.s",
            FeqD => "feq.d",
            FltD => "flt.d",
            FleD => "fle.d",
            FclassD => "fclass.d",
            FcvtWD => "fcvt.w.d",
            FcvtWuD => "fcvt.wu.d",
            FcvtDW => "fcvt.d.w",
            FcvtDWu => "fcvt.d.wu",
            Sh1add => "sh1add",
            Sh2add => "sh2add",
            Sh3add => "sh3add",
            Andn => "andn",
            Orn => "orn",
            Xnor => "xnor",
            Clz => "clz",
            Ctz => "ctz",
            Cpop => "cpop",
            Max => "max",
            Maxu => "maxu",
            Min => "min",
            Minu => "minu",
            SextB => "sext.b",
            SextH => "sext.h",
            ZextH => "zext.h",
            Rol => "rol",
            Ror => "ror",
            Rori => "rori",
            OrcB => "orc.b",
            Rev8 => "rev8",
            Clmul => "clmul",
            Clmulh => "clmulh",
            Clmulr => "clmulr",
            Bclr => "bclr",
            Bclri => "bclri",
            Bext => "bext",
            Bexti => "bexti",
            Binv => "binv",
            Binvi => "binvi",
            Bset => "bset",
            Bseti => "bseti",
            CzeroEqz => "czero.eqz",
            CzeroNez => "czero.nez",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

/// How an operation's operands are printed.
enum Operands {
    /// No operands (`ecall`, `fence.i`).
    None,
    /// `x1,0x12345` (the U immediate shifted back down).
    UpperImm,
    /// `x1,0x1000` (absolute target of `jal`).
    Jump,
    /// `x1,x2,0x1000` (absolute target of a branch).
    Branch,
    /// `x1,-4(x2)` (also `jalr`); `fp` when rd is an FP register.
    Load { fp: bool },
    /// `x5,-4(x2)`: rs2 first, then offset(rs1); `fp` when rs2 is an FP register.
    Store { fp: bool },
    /// `x1,x2,-5` (decimal immediate).
    AluImm,
    /// `x1,x2,0x1f` (hexadecimal shift amount / bit index).
    ShiftImm,
    /// `x1,x2,x3`.
    IntR,
    /// `x1,x2`.
    IntUnary,
    /// `fence` with its predecessor/successor sets, from the raw bits.
    Fence,
    /// `x1,x2` (`sfence.vma rs1,rs2`).
    SfenceVma,
    /// `x1,0x300,x2`.
    CsrReg,
    /// `x1,0x300,5`.
    CsrImm,
    /// `x1,(x2)`.
    LoadReserved,
    /// `x1,x2,(x3)`.
    Amo,
    /// `f1,f2,f3[,rm]`.
    FpR { rounds: bool },
    /// `f1,f2,f3,f4[,rm]`.
    FpR4,
    /// `f1,f2[,rm]` (both FP registers).
    FpUnary { rounds: bool },
    /// `x1,f2[,rm]` (integer destination).
    FpToInt { rounds: bool },
    /// `f1,x2[,rm]` (FP destination).
    IntToFp { rounds: bool },
    /// `x1,f2,f3` (FP compares).
    FpCompare,
}

fn operands_of(op: Op) -> Operands {
    use Op::*;
    use Operands as O;
    match op {
        Illegal | FenceI | Ecall | Ebreak | Mret | Sret | Wfi => O::None,
        Lui | Auipc => O::UpperImm,
        Jal => O::Jump,
        Beq | Bne | Blt | Bge | Bltu | Bgeu => O::Branch,
        Jalr | Lb | Lh | Lw | Lbu | Lhu => O::Load { fp: false },
        Flw | Fld | Flh => O::Load { fp: true },
        Sb | Sh | Sw => O::Store { fp: false },
        Fsw | Fsd | Fsh => O::Store { fp: true },
        Addi | Slti | Sltiu | Xori | Ori | Andi => O::AluImm,
        Slli | Srli | Srai | Rori | Bclri | Bexti | Binvi | Bseti => O::ShiftImm,
        Add | Sub | Sll | Slt | Sltu | Xor | Srl | Sra | Or | And | Mul | Mulh | Mulhsu | Mulhu
        | Div | Divu | Rem | Remu | Sh1add | Sh2add | Sh3add | Andn | Orn | Xnor | Max | Maxu
        | Min | Minu | Rol | Ror | Clmul | Clmulh | Clmulr | Bclr | Bext | Binv | Bset
        | CzeroEqz | CzeroNez => O::IntR,
        Clz | Ctz | Cpop | SextB | SextH | ZextH | OrcB | Rev8 => O::IntUnary,
        Fence => O::Fence,
        SfenceVma => O::SfenceVma,
        Csrrw | Csrrs | Csrrc => O::CsrReg,
        Csrrwi | Csrrsi | Csrrci => O::CsrImm,
        LrW => O::LoadReserved,
        ScW | AmoswapW | AmoaddW | AmoxorW | AmoandW | AmoorW | AmominW | AmomaxW | AmominuW
        | AmomaxuW | AmoswapB | AmoaddB | AmoxorB | AmoandB | AmoorB | AmominB | AmomaxB
        | AmominuB | AmomaxuB | AmoswapH | AmoaddH | AmoxorH | AmoandH | AmoorH | AmominH
        | AmomaxH | AmominuH | AmomaxuH | AmocasB | AmocasH | AmocasW | AmocasD => O::Amo,
        FaddS | FsubS | FmulS | FdivS | FaddD | FsubD | FmulD | FdivD => O::FpR { rounds: true },
        FsgnjS | FsgnjnS | FsgnjxS | FminS | FmaxS | FsgnjD | FsgnjnD | FsgnjxD | FminD | FmaxD => {
            O::FpR { rounds: false }
        }
        FmaddS | FmsubS | FnmsubS | FnmaddS | FmaddD | FmsubD | FnmsubD | FnmaddD => O::FpR4,
        FsqrtS | FsqrtD | FcvtSD => O::FpUnary { rounds: true },
        // Widening to double is exact: like objdump, do not print its rm field.
        FcvtDS => O::FpUnary { rounds: false },
        FcvtWS | FcvtWuS | FcvtWD | FcvtWuD => O::FpToInt { rounds: true },
        FmvXW | FclassS | FclassD => O::FpToInt { rounds: false },
        FcvtSW | FcvtSWu => O::IntToFp { rounds: true },
        FcvtDW | FcvtDWu | FmvWX => O::IntToFp { rounds: false },
        FeqS | FltS | FleS | FeqD | FltD | FleD => O::FpCompare,
        FaddH | FsubH | FmulH | FdivH => O::FpR { rounds: true },
        FsgnjH | FsgnjnH | FsgnjxH | FminH | FmaxH => O::FpR { rounds: false },
        FmaddH | FmsubH | FnmsubH | FnmaddH => O::FpR4,
        FsqrtH | FcvtHS | FcvtHD => O::FpUnary { rounds: true },
        FcvtSH | FcvtDH => O::FpUnary { rounds: false },
        FcvtWH | FcvtWuH => O::FpToInt { rounds: true },
        FmvXH | FclassH => O::FpToInt { rounds: false },
        FcvtHW | FcvtHWu => O::IntToFp { rounds: true },
        FmvHX => O::IntToFp { rounds: false },
        FeqH | FltH | FleH => O::FpCompare,
    }
}

/// Assembler name of a rounding mode; `None` for dynamic (7), which is not printed.
fn rounding_mode_suffix(rm: u8) -> Option<&'static str> {
    match rm {
        0 => Some("rne"),
        1 => Some("rtz"),
        2 => Some("rdn"),
        3 => Some("rup"),
        4 => Some("rmm"),
        // 5 and 6 never decode (illegal); 7 is the default and left implicit.
        _ => None,
    }
}

/// The `iorw` set of a FENCE predecessor/successor field (`0` when empty).
fn fence_set(out: &mut String, set: u32) {
    if set == 0 {
        out.push('0');
        return;
    }
    for (bit, name) in [(8, 'i'), (4, 'o'), (2, 'r'), (1, 'w')] {
        if set & bit != 0 {
            out.push(name);
        }
    }
}

/// Disassemble `insn`, located at guest address `pc` (used for branch and jump targets).
///
/// An illegal instruction prints as `.4byte 0x...` / `.2byte 0x...`, as objdump does.
pub fn disasm(insn: &Insn, pc: u32) -> String {
    let mut out = String::with_capacity(32);
    // Writing to a String cannot fail.
    let _ = write_disasm(&mut out, insn, pc);
    out
}

fn write_disasm(out: &mut String, insn: &Insn, pc: u32) -> fmt::Result {
    use Operands as O;
    let Insn {
        op,
        rd,
        rs1,
        rs2,
        rs3,
        rm,
        imm,
        raw,
        ..
    } = *insn;
    if op == Op::Illegal {
        let width = if insn.len == 2 { 2 } else { 4 };
        return write!(out, ".{width}byte 0x{raw:x}");
    }
    if op == Op::Fence && raw == 0x8330_000f {
        out.push_str("fence.tso");
        return Ok(());
    }
    out.push_str(op.mnemonic());
    let operands = operands_of(op);
    // aq/rl are ignored by execution but shown, so a trace matches the program text.
    if matches!(operands, O::LoadReserved | O::Amo) {
        match (raw >> 25) & 3 {
            1 => out.push_str(".rl"),
            2 => out.push_str(".aq"),
            3 => out.push_str(".aqrl"),
            _ => {}
        }
    }
    if !matches!(operands, O::None) {
        out.push(' ');
    }
    let target = pc.wrapping_add(imm as u32);
    let rounding = |out: &mut String, rounds: bool| {
        if let (true, Some(name)) = (rounds, rounding_mode_suffix(rm)) {
            out.push(',');
            out.push_str(name);
        }
    };
    match operands {
        O::None => {}
        O::UpperImm => write!(out, "x{rd},0x{:x}", (imm as u32) >> 12)?,
        O::Jump => write!(out, "x{rd},0x{target:x}")?,
        O::Branch => write!(out, "x{rs1},x{rs2},0x{target:x}")?,
        O::Load { fp } => {
            let file = if fp { 'f' } else { 'x' };
            write!(out, "{file}{rd},{imm}(x{rs1})")?
        }
        O::Store { fp } => {
            let file = if fp { 'f' } else { 'x' };
            write!(out, "{file}{rs2},{imm}(x{rs1})")?
        }
        O::AluImm => write!(out, "x{rd},x{rs1},{imm}")?,
        O::ShiftImm => write!(out, "x{rd},x{rs1},0x{imm:x}")?,
        O::IntR => write!(out, "x{rd},x{rs1},x{rs2}")?,
        O::IntUnary => write!(out, "x{rd},x{rs1}")?,
        O::Fence => {
            fence_set(out, (raw >> 24) & 15);
            out.push(',');
            fence_set(out, (raw >> 20) & 15);
        }
        O::SfenceVma => write!(out, "x{rs1},x{rs2}")?,
        O::CsrReg => write!(out, "x{rd},0x{imm:x},x{rs1}")?,
        O::CsrImm => write!(out, "x{rd},0x{imm:x},{rs1}")?,
        O::LoadReserved => write!(out, "x{rd},(x{rs1})")?,
        O::Amo => write!(out, "x{rd},x{rs2},(x{rs1})")?,
        O::FpR { rounds } => {
            write!(out, "f{rd},f{rs1},f{rs2}")?;
            rounding(out, rounds);
        }
        O::FpR4 => {
            write!(out, "f{rd},f{rs1},f{rs2},f{rs3}")?;
            rounding(out, true);
        }
        O::FpUnary { rounds } => {
            write!(out, "f{rd},f{rs1}")?;
            rounding(out, rounds);
        }
        O::FpToInt { rounds } => {
            write!(out, "x{rd},f{rs1}")?;
            rounding(out, rounds);
        }
        O::IntToFp { rounds } => {
            write!(out, "f{rd},x{rs1}")?;
            rounding(out, rounds);
        }
        O::FpCompare => write!(out, "x{rd},f{rs1},f{rs2}")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::decode;

    #[test]
    fn op_display_is_the_lowercase_mnemonic() {
        assert_eq!(Op::FcvtWS.to_string(), "fcvt.w.s");
        assert_eq!(Op::AmoswapW.to_string(), "amoswap.w");
        assert_eq!(Op::SfenceVma.to_string(), "sfence.vma");
        assert_eq!(format!("{}", Op::CzeroNez), "czero.nez");
    }

    #[test]
    fn targets_are_absolute_and_wrap() {
        // jal x1,.-4 (assembled: 0xffdff0ef) at address 0 wraps to the top of the space.
        assert_eq!(disasm(&decode(0xffdff0ef), 0), "jal x1,0xfffffffc");
        assert_eq!(
            disasm(&decode(0xffdff0ef), 0x8000_0000),
            "jal x1,0x7ffffffc"
        );
        // c.beqz x8,.-256 (0xd001)
        assert_eq!(disasm(&decode(0xd001), 0x1000), "beq x8,x0,0xf00");
    }

    #[test]
    fn illegal_and_special_forms() {
        assert_eq!(disasm(&decode(0x0000_0000), 0), ".2byte 0x0");
        assert_eq!(disasm(&decode(0xffff_ffff), 0), ".4byte 0xffffffff");
        assert_eq!(disasm(&decode(0x0100_000f), 0), "fence w,0"); // pause
        assert_eq!(disasm(&decode(0x8330_000f), 0), "fence.tso");
        assert_eq!(disasm(&decode(0x9002), 0), "ebreak"); // c.ebreak
    }
}
