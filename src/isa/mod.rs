//! Instruction decoding: 32-bit and compressed RISC-V instructions become one decoded form,
//! [`Insn`], which every execution tier consumes. Decoding happens once per block, never per
//! execution.

pub mod decode;
pub mod disasm;
pub mod ops;

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
    // Zabha: byte and halfword AMOs
    AmoswapB,
    AmoaddB,
    AmoxorB,
    AmoandB,
    AmoorB,
    AmominB,
    AmomaxB,
    AmominuB,
    AmomaxuB,
    AmoswapH,
    AmoaddH,
    AmoxorH,
    AmoandH,
    AmoorH,
    AmominH,
    AmomaxH,
    AmominuH,
    AmomaxuH,
    // Zacas (with Zabha for the byte and halfword forms); `amocas.d` works on register pairs
    AmocasB,
    AmocasH,
    AmocasW,
    AmocasD,
    // Zfh: half precision (NaN-boxed in the f registers as singles are)
    Flh,
    Fsh,
    FmaddH,
    FmsubH,
    FnmsubH,
    FnmaddH,
    FaddH,
    FsubH,
    FmulH,
    FdivH,
    FsqrtH,
    FsgnjH,
    FsgnjnH,
    FsgnjxH,
    FminH,
    FmaxH,
    FcvtSH,
    FcvtHS,
    FcvtDH,
    FcvtHD,
    FeqH,
    FltH,
    FleH,
    FclassH,
    FcvtWH,
    FcvtWuH,
    FcvtHW,
    FcvtHWu,
    FmvXH,
    FmvHX,
    // The last variant is `Op::LAST`: update it when adding one after it.
}

/// Macro-op fusion: a head instruction and the ones it covers run as one unit in every tier.
/// The covered instructions stay in the block unchanged (so each keeps its pc offset and
/// retired count, and a unit can fall back to running them one by one); the head's own fields
/// may be rewritten as listed. Patterns and rules: docs/codegen.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Fusion {
    /// Not fused.
    #[default]
    None,
    /// `lui rd, hi; addi rd, rd, lo`: the head is `lui rd` with `imm` = the final value.
    LuiAddi,
    /// `auipc rd, hi; addi rd, rd, lo`: the head is `auipc rd` with `imm` = hi + lo.
    AuipcAddi,
    /// `auipc rt, hi; jalr rd, lo(rt)` (rt != x0): a call or tail call to a pc-relative
    /// target. The head is the unchanged `auipc`; the covered `jalr` gives rd and lo.
    AuipcJalr,
    /// `slli rd, rs, k; srli rd, rd, k`: zero-extension of the low 32-k bits. The head is
    /// `andi rd, rs, mask` with the 32-bit mask in `imm`.
    ShiftMask,
    /// `lw` off one base register, `rs3` + 1 of them in a row (the base is not written before
    /// the last): one translation for all when they share an aligned page.
    LwRun,
    /// `sw` off one base register, `rs3` + 1 of them in a row.
    SwRun,
    /// An ALU operation writing rd, then the block-ending branch that compares rd: the head is
    /// the unchanged ALU operation.
    CmpBranch,
}

/// One decoded instruction. 16 bytes, `Copy`, laid out for fast interpretation and for JIT
/// templates that read its fields at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// Set by the block optimiser ([`crate::exec::ir`]), never by decoding: this instruction
    /// heads a fused unit that also covers the next [`Insn::covers`] instructions.
    pub fusion: Fusion,
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
            fusion: Fusion::None,
            imm: 0,
            raw,
        }
    }

    /// For a `fence`: whether it orders earlier stores (or device outputs) before later loads
    /// (or device inputs), the one ordering an x86-64 host does not give for free. Such fences
    /// become a host `mfence` in every tier, because device worker threads (virtio) read and
    /// write guest memory concurrently with the CPU: a driver publishing a ring index, then
    /// reading the device's event index, relies on it. `fence.tso` (fm = 1000) never needs it.
    #[inline]
    pub fn fence_orders_stores_before_loads(&self) -> bool {
        let fm = self.raw >> 28;
        let predecessor = self.raw >> 24 & 0xf;
        let successor = self.raw >> 20 & 0xf;
        // pred/succ bits: I O R W (3..0).
        fm != 0b1000 && predecessor & 0b0101 != 0 && successor & 0b1010 != 0
    }

    /// How many instructions after this one its fused unit covers (0 when it is not fused).
    #[inline(always)]
    pub fn covers(&self) -> usize {
        match self.fusion {
            Fusion::None => 0,
            Fusion::LwRun | Fusion::SwRun => self.rs3 as usize,
            Fusion::LuiAddi
            | Fusion::AuipcAddi
            | Fusion::AuipcJalr
            | Fusion::ShiftMask
            | Fusion::CmpBranch => 1,
        }
    }

    /// True if this instruction ends a basic block: it may change the pc non-sequentially, trap
    /// by design, or change state that decoding depends on (CSR writes, fences, privileged ops).
    #[inline(always)]
    pub fn ends_block(&self) -> bool {
        self.op.info().ends_block
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
    fn only_store_to_load_fences_need_a_host_barrier() {
        let fence = |raw: u32| decode(raw).fence_orders_stores_before_loads();
        assert!(fence(0x0330_000f), "fence rw,rw (Linux mb, virtio_mb)");
        assert!(fence(0x0ff0_000f), "fence iorw,iorw");
        assert!(fence(0x0480_000f), "fence o,i");
        assert!(fence(0x0120_000f), "fence w,r");
        assert!(!fence(0x8330_000f), "fence.tso");
        assert!(!fence(0x0100_000f), "pause");
        assert!(!fence(0x0110_000f), "fence w,w");
        assert!(!fence(0x0220_000f), "fence r,r");
        assert!(!fence(0x0230_000f), "fence r,rw");
    }

    #[test]
    fn insn_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Insn>(), 16);
        assert_eq!(std::mem::size_of::<Op>(), 1);
    }
}
