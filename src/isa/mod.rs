//! Instruction decoding: 32-bit and compressed RISC-V instructions become one decoded form,
//! [`Insn`], which every execution tier consumes. Decoding happens once per block, never per
//! execution.

pub mod decode;
pub mod disasm;

pub use decode::decode;

/// Every operation the CPU implements. Compressed instructions decode to the same operations as
/// their 32-bit expansions (with [`Insn::len`] = 2).
///
/// Operand conventions (fields of [`Insn`]):
/// - register operands in `rd`, `rs1`, `rs2`, `rs3` (FP registers use the same fields);
/// - `imm` holds the sign-extended immediate: I/S/B/U/J immediates (U already shifted left by
///   12), shift amounts for shift-immediates and `rori`/`bclri`/..., the CSR number for Zicsr;
/// - for `Csrrwi`/`Csrrsi`/`Csrrci` the 5-bit zero-extended immediate is in `rs1`;
/// - `rm` is the FP rounding-mode field (0..=7, 7 = dynamic) for FP ops that round;
/// - for AMOs `imm` is 0; aq/rl bits are accepted and ignored (one hart, sequentially consistent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    /// Not a valid instruction: executing it raises illegal-instruction with `raw` as mtval.
    Illegal,
    // RV32I
    Lui,
    Auipc,
    Jal,
    Jalr,
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    Lb,
    Lh,
    Lw,
    Lbu,
    Lhu,
    Sb,
    Sh,
    Sw,
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    /// Any FENCE encoding (including `pause` and unusual pred/succ bits): a no-op here.
    Fence,
    FenceI,
    Ecall,
    Ebreak,
    // Privileged
    Mret,
    Sret,
    Wfi,
    SfenceVma,
    // Zicsr
    Csrrw,
    Csrrs,
    Csrrc,
    Csrrwi,
    Csrrsi,
    Csrrci,
    // M
    Mul,
    Mulh,
    Mulhsu,
    Mulhu,
    Div,
    Divu,
    Rem,
    Remu,
    // A
    LrW,
    ScW,
    AmoswapW,
    AmoaddW,
    AmoxorW,
    AmoandW,
    AmoorW,
    AmominW,
    AmomaxW,
    AmominuW,
    AmomaxuW,
    // F
    Flw,
    Fsw,
    FmaddS,
    FmsubS,
    FnmsubS,
    FnmaddS,
    FaddS,
    FsubS,
    FmulS,
    FdivS,
    FsqrtS,
    FsgnjS,
    FsgnjnS,
    FsgnjxS,
    FminS,
    FmaxS,
    FcvtWS,
    FcvtWuS,
    FmvXW,
    FeqS,
    FltS,
    FleS,
    FclassS,
    FcvtSW,
    FcvtSWu,
    FmvWX,
    // D
    Fld,
    Fsd,
    FmaddD,
    FmsubD,
    FnmsubD,
    FnmaddD,
    FaddD,
    FsubD,
    FmulD,
    FdivD,
    FsqrtD,
    FsgnjD,
    FsgnjnD,
    FsgnjxD,
    FminD,
    FmaxD,
    FcvtSD,
    FcvtDS,
    FeqD,
    FltD,
    FleD,
    FclassD,
    FcvtWD,
    FcvtWuD,
    FcvtDW,
    FcvtDWu,
    // Zba
    Sh1add,
    Sh2add,
    Sh3add,
    // Zbb
    Andn,
    Orn,
    Xnor,
    Clz,
    Ctz,
    Cpop,
    Max,
    Maxu,
    Min,
    Minu,
    SextB,
    SextH,
    ZextH,
    Rol,
    Ror,
    Rori,
    OrcB,
    Rev8,
    // Zbc
    Clmul,
    Clmulh,
    Clmulr,
    // Zbs
    Bclr,
    Bclri,
    Bext,
    Bexti,
    Binv,
    Binvi,
    Bset,
    Bseti,
    // Zicond
    CzeroEqz,
    CzeroNez,
}

/// One decoded instruction. 16 bytes, `Copy`, laid out for fast interpretation and for JIT
/// templates that read its fields at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    pub op: Op,
    pub rd: u8,
    pub rs1: u8,
    pub rs2: u8,
    pub rs3: u8,
    /// FP rounding mode field (funct3 of FP ops); 7 means "use frm".
    pub rm: u8,
    /// Encoded length in bytes: 2 (compressed) or 4.
    pub len: u8,
    pub _pad: u8,
    pub imm: i32,
    /// The raw instruction bits (16-bit forms zero-extended), reported as mtval on illegal
    /// instruction.
    pub raw: u32,
}

impl Insn {
    /// An illegal instruction of `len` bytes whose bits are `raw`.
    pub const fn illegal(raw: u32, len: u8) -> Self {
        Insn {
            op: Op::Illegal,
            rd: 0,
            rs1: 0,
            rs2: 0,
            rs3: 0,
            rm: 0,
            len,
            _pad: 0,
            imm: 0,
            raw,
        }
    }

    /// True if this instruction ends a basic block: it may change the pc non-sequentially, trap
    /// by design, or change state that decoding depends on (CSR writes, fences, privileged ops).
    pub fn ends_block(&self) -> bool {
        use Op::*;
        matches!(
            self.op,
            Illegal
                | Jal
                | Jalr
                | Beq
                | Bne
                | Blt
                | Bge
                | Bltu
                | Bgeu
                | FenceI
                | Ecall
                | Ebreak
                | Mret
                | Sret
                | Wfi
                | SfenceVma
                | Csrrw
                | Csrrs
                | Csrrc
                | Csrrwi
                | Csrrsi
                | Csrrci
        )
    }
}

/// Length in bytes of the instruction whose first 16-bit parcel is `lo`.
#[inline]
pub fn insn_len(lo: u16) -> u8 {
    if lo & 3 == 3 {
        4
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insn_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Insn>(), 16);
        assert_eq!(std::mem::size_of::<Op>(), 1);
    }
}
