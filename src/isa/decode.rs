//! Decoder: raw instruction bits -> [`Insn`].
//!
//! Covers RV32 I, M, A, F, D, C, Zicsr, Zifencei, Zba, Zbb, Zbc, Zbs, Zicond and the privileged
//! instructions (`mret`, `sret`, `wfi`, `sfence.vma`). Every encoding that is reserved on RV32 or
//! belongs to an extension we do not implement decodes to [`Op::Illegal`], so executing it raises
//! illegal-instruction. Compressed instructions decode to exactly the [`Insn`] of their 32-bit
//! expansion, apart from `raw` and `len`.
//!
//! Unused operand fields are always zero, so two encodings of the same operation (say `c.mv` and
//! `add rd,x0,rs2`) give equal [`Insn`]s apart from `raw` and `len`. FENCE keeps its
//! pred/succ/fm bits only in `raw` (they make no difference on one hart).

use super::{Insn, Op};

/// Decode one instruction. `bits` holds a 32-bit instruction, or a 16-bit compressed one in its
/// low half (when `bits & 3 != 3`; the upper half is then ignored).
#[inline]
pub fn decode(bits: u32) -> Insn {
    if bits & 3 == 3 {
        decode_32(bits)
    } else {
        decode_compressed(bits as u16)
    }
}

// ---------------------------------------------------------------------------------------------
// Field extraction for 32-bit encodings.

#[inline(always)]
fn rd(bits: u32) -> u8 {
    ((bits >> 7) & 31) as u8
}

#[inline(always)]
fn rs1(bits: u32) -> u8 {
    ((bits >> 15) & 31) as u8
}

#[inline(always)]
fn rs2(bits: u32) -> u8 {
    ((bits >> 20) & 31) as u8
}

#[inline(always)]
fn rs3(bits: u32) -> u8 {
    (bits >> 27) as u8
}

#[inline(always)]
fn funct3(bits: u32) -> u32 {
    (bits >> 12) & 7
}

#[inline(always)]
fn funct7(bits: u32) -> u32 {
    bits >> 25
}

#[inline(always)]
fn imm_i(bits: u32) -> i32 {
    (bits as i32) >> 20
}

#[inline(always)]
fn imm_s(bits: u32) -> i32 {
    (((bits as i32) >> 25) << 5) | ((bits >> 7) & 31) as i32
}

#[inline(always)]
fn imm_b(bits: u32) -> i32 {
    (((bits as i32) >> 31) << 12)
        | (((bits >> 7) & 1) << 11) as i32
        | (((bits >> 25) & 0x3f) << 5) as i32
        | (((bits >> 8) & 0xf) << 1) as i32
}

#[inline(always)]
fn imm_u(bits: u32) -> i32 {
    (bits & 0xffff_f000) as i32
}

#[inline(always)]
fn imm_j(bits: u32) -> i32 {
    (((bits as i32) >> 31) << 20)
        | (bits & 0x000f_f000) as i32
        | (((bits >> 20) & 1) << 11) as i32
        | (((bits >> 21) & 0x3ff) << 1) as i32
}

/// Builds an [`Insn`] with `rs3` and `rm` zero.
#[inline(always)]
const fn make(op: Op, rd: u8, rs1: u8, rs2: u8, imm: i32, raw: u32, len: u8) -> Insn {
    Insn {
        op,
        rd,
        rs1,
        rs2,
        rs3: 0,
        rm: 0,
        len,
        fusion: crate::isa::Fusion::None,
        imm,
        raw,
    }
}

/// A 32-bit instruction with registers `rd`, `rs1`, `rs2` taken from the standard fields.
#[inline(always)]
fn r_type(op: Op, bits: u32) -> Insn {
    make(op, rd(bits), rs1(bits), rs2(bits), 0, bits, 4)
}

/// A 32-bit instruction with `rd`, `rs1` and an immediate.
#[inline(always)]
fn i_type(op: Op, bits: u32, imm: i32) -> Insn {
    make(op, rd(bits), rs1(bits), 0, imm, bits, 4)
}

/// A 32-bit instruction with `rs1`, `rs2` and an immediate (stores, branches).
#[inline(always)]
fn s_type(op: Op, bits: u32, imm: i32) -> Insn {
    make(op, 0, rs1(bits), rs2(bits), imm, bits, 4)
}

/// A 32-bit instruction reading only `rs1` (unary bit-manipulation ops).
#[inline(always)]
fn unary(op: Op, bits: u32) -> Insn {
    make(op, rd(bits), rs1(bits), 0, 0, bits, 4)
}

#[inline(always)]
fn illegal32(bits: u32) -> Insn {
    Insn::illegal(bits, 4)
}

/// True for the rounding-mode values 5 and 6, which are reserved.
#[inline(always)]
fn rm_is_reserved(rm: u32) -> bool {
    rm == 5 || rm == 6
}

/// A floating-point instruction that rounds: illegal if its `rm` field is reserved.
#[inline(always)]
fn fp_rounding(op: Op, bits: u32, rd: u8, rs1: u8, rs2: u8) -> Insn {
    let rm = funct3(bits);
    if rm_is_reserved(rm) {
        return illegal32(bits);
    }
    let mut insn = make(op, rd, rs1, rs2, 0, bits, 4);
    insn.rm = rm as u8;
    insn
}

/// Decode a 32-bit instruction (`bits & 3 == 3`).
fn decode_32(bits: u32) -> Insn {
    match bits & 0x7f {
        0x37 => make(Op::Lui, rd(bits), 0, 0, imm_u(bits), bits, 4),
        0x17 => make(Op::Auipc, rd(bits), 0, 0, imm_u(bits), bits, 4),
        0x6f => make(Op::Jal, rd(bits), 0, 0, imm_j(bits), bits, 4),
        0x67 if funct3(bits) == 0 => i_type(Op::Jalr, bits, imm_i(bits)),
        0x63 => decode_branch(bits),
        0x03 => decode_load(bits),
        0x23 => decode_store(bits),
        0x13 => decode_op_imm(bits),
        0x33 => decode_op(bits),
        0x0f => decode_misc_mem(bits),
        0x73 => decode_system(bits),
        0x2f => decode_amo(bits),
        0x07 => match funct3(bits) {
            1 => i_type(Op::Flh, bits, imm_i(bits)),
            2 => i_type(Op::Flw, bits, imm_i(bits)),
            3 => i_type(Op::Fld, bits, imm_i(bits)),
            _ => illegal32(bits),
        },
        0x27 => match funct3(bits) {
            1 => s_type(Op::Fsh, bits, imm_s(bits)),
            2 => s_type(Op::Fsw, bits, imm_s(bits)),
            3 => s_type(Op::Fsd, bits, imm_s(bits)),
            _ => illegal32(bits),
        },
        0x43 | 0x47 | 0x4b | 0x4f => decode_fused_multiply_add(bits),
        0x53 => decode_op_fp(bits),
        _ => illegal32(bits),
    }
}

fn decode_branch(bits: u32) -> Insn {
    let op = match funct3(bits) {
        0 => Op::Beq,
        1 => Op::Bne,
        4 => Op::Blt,
        5 => Op::Bge,
        6 => Op::Bltu,
        7 => Op::Bgeu,
        _ => return illegal32(bits),
    };
    s_type(op, bits, imm_b(bits))
}

fn decode_load(bits: u32) -> Insn {
    let op = match funct3(bits) {
        0 => Op::Lb,
        1 => Op::Lh,
        2 => Op::Lw,
        4 => Op::Lbu,
        5 => Op::Lhu,
        _ => return illegal32(bits),
    };
    i_type(op, bits, imm_i(bits))
}

fn decode_store(bits: u32) -> Insn {
    let op = match funct3(bits) {
        0 => Op::Sb,
        1 => Op::Sh,
        2 => Op::Sw,
        _ => return illegal32(bits),
    };
    s_type(op, bits, imm_s(bits))
}

fn decode_op_imm(bits: u32) -> Insn {
    let shamt = rs2(bits) as i32;
    match funct3(bits) {
        0 => i_type(Op::Addi, bits, imm_i(bits)),
        2 => i_type(Op::Slti, bits, imm_i(bits)),
        3 => i_type(Op::Sltiu, bits, imm_i(bits)),
        4 => i_type(Op::Xori, bits, imm_i(bits)),
        6 => i_type(Op::Ori, bits, imm_i(bits)),
        7 => i_type(Op::Andi, bits, imm_i(bits)),
        // funct7 includes shamt[5], so a nonzero bit 25 (RV64-only shift amount) is illegal.
        1 => match funct7(bits) {
            0x00 => i_type(Op::Slli, bits, shamt),
            0x14 => i_type(Op::Bseti, bits, shamt),
            0x24 => i_type(Op::Bclri, bits, shamt),
            0x34 => i_type(Op::Binvi, bits, shamt),
            0x30 => match shamt {
                0 => unary(Op::Clz, bits),
                1 => unary(Op::Ctz, bits),
                2 => unary(Op::Cpop, bits),
                4 => unary(Op::SextB, bits),
                5 => unary(Op::SextH, bits),
                _ => illegal32(bits),
            },
            _ => illegal32(bits),
        },
        _ => match bits >> 20 {
            0x287 => unary(Op::OrcB, bits),
            0x698 => unary(Op::Rev8, bits),
            _ => match funct7(bits) {
                0x00 => i_type(Op::Srli, bits, shamt),
                0x20 => i_type(Op::Srai, bits, shamt),
                0x30 => i_type(Op::Rori, bits, shamt),
                0x24 => i_type(Op::Bexti, bits, shamt),
                _ => illegal32(bits),
            },
        },
    }
}

fn decode_op(bits: u32) -> Insn {
    let f3 = funct3(bits);
    let op = match funct7(bits) {
        0x00 => match f3 {
            0 => Op::Add,
            1 => Op::Sll,
            2 => Op::Slt,
            3 => Op::Sltu,
            4 => Op::Xor,
            5 => Op::Srl,
            6 => Op::Or,
            _ => Op::And,
        },
        0x20 => match f3 {
            0 => Op::Sub,
            4 => Op::Xnor,
            5 => Op::Sra,
            6 => Op::Orn,
            7 => Op::Andn,
            _ => return illegal32(bits),
        },
        0x01 => match f3 {
            0 => Op::Mul,
            1 => Op::Mulh,
            2 => Op::Mulhsu,
            3 => Op::Mulhu,
            4 => Op::Div,
            5 => Op::Divu,
            6 => Op::Rem,
            _ => Op::Remu,
        },
        0x10 => match f3 {
            2 => Op::Sh1add,
            4 => Op::Sh2add,
            6 => Op::Sh3add,
            _ => return illegal32(bits),
        },
        0x05 => match f3 {
            1 => Op::Clmul,
            2 => Op::Clmulr,
            3 => Op::Clmulh,
            4 => Op::Min,
            5 => Op::Minu,
            6 => Op::Max,
            7 => Op::Maxu,
            _ => return illegal32(bits),
        },
        // zext.h on RV32 is `pack rd, rs1, x0`; pack itself (Zbkb) is not implemented.
        0x04 if f3 == 4 && rs2(bits) == 0 => return unary(Op::ZextH, bits),
        0x30 => match f3 {
            1 => Op::Rol,
            5 => Op::Ror,
            _ => return illegal32(bits),
        },
        0x24 => match f3 {
            1 => Op::Bclr,
            5 => Op::Bext,
            _ => return illegal32(bits),
        },
        0x14 if f3 == 1 => Op::Bset,
        0x34 if f3 == 1 => Op::Binv,
        0x07 => match f3 {
            5 => Op::CzeroEqz,
            7 => Op::CzeroNez,
            _ => return illegal32(bits),
        },
        _ => return illegal32(bits),
    };
    r_type(op, bits)
}

fn decode_misc_mem(bits: u32) -> Insn {
    // The spec asks implementations to ignore the unused fields of FENCE (fm, rs1, rd) and
    // FENCE.I (imm, rs1, rd) for forward compatibility; both are no-ops for one hart anyway.
    match funct3(bits) {
        0 => make(Op::Fence, 0, 0, 0, 0, bits, 4),
        1 => make(Op::FenceI, 0, 0, 0, 0, bits, 4),
        _ => illegal32(bits),
    }
}

fn decode_system(bits: u32) -> Insn {
    let csr = (bits >> 20) as i32;
    let op = match funct3(bits) {
        0 => {
            return match bits {
                0x0000_0073 => make(Op::Ecall, 0, 0, 0, 0, bits, 4),
                0x0010_0073 => make(Op::Ebreak, 0, 0, 0, 0, bits, 4),
                0x3020_0073 => make(Op::Mret, 0, 0, 0, 0, bits, 4),
                0x1020_0073 => make(Op::Sret, 0, 0, 0, 0, bits, 4),
                0x1050_0073 => make(Op::Wfi, 0, 0, 0, 0, bits, 4),
                _ if funct7(bits) == 0x09 && rd(bits) == 0 => {
                    make(Op::SfenceVma, 0, rs1(bits), rs2(bits), 0, bits, 4)
                }
                _ => illegal32(bits),
            };
        }
        1 => Op::Csrrw,
        2 => Op::Csrrs,
        3 => Op::Csrrc,
        5 => Op::Csrrwi,
        6 => Op::Csrrsi,
        7 => Op::Csrrci,
        _ => return illegal32(bits),
    };
    // For the immediate forms the rs1 field is the 5-bit zero-extended uimm, as documented.
    i_type(op, bits, csr)
}

fn decode_amo(bits: u32) -> Insn {
    use Op::*;
    // bits 26:25 are aq/rl, accepted and ignored. funct3 is the width: Zabha's bytes and
    // halfwords, words, and Zacas' doubleword compare-and-swap on register pairs.
    let width = funct3(bits);
    let op = match (bits >> 27, width) {
        (0x02, 2) if rs2(bits) == 0 => return make(LrW, rd(bits), rs1(bits), 0, 0, bits, 4),
        (0x03, 2) => ScW,
        (0x01, 2) => AmoswapW,
        (0x00, 2) => AmoaddW,
        (0x04, 2) => AmoxorW,
        (0x0c, 2) => AmoandW,
        (0x08, 2) => AmoorW,
        (0x10, 2) => AmominW,
        (0x14, 2) => AmomaxW,
        (0x18, 2) => AmominuW,
        (0x1c, 2) => AmomaxuW,
        (0x05, 2) => AmocasW,
        // Register pairs start at an even register; odd ones are reserved.
        (0x05, 3) if rd(bits).is_multiple_of(2) && rs2(bits).is_multiple_of(2) => AmocasD,
        (0x01, 0) => AmoswapB,
        (0x00, 0) => AmoaddB,
        (0x04, 0) => AmoxorB,
        (0x0c, 0) => AmoandB,
        (0x08, 0) => AmoorB,
        (0x10, 0) => AmominB,
        (0x14, 0) => AmomaxB,
        (0x18, 0) => AmominuB,
        (0x1c, 0) => AmomaxuB,
        (0x05, 0) => AmocasB,
        (0x01, 1) => AmoswapH,
        (0x00, 1) => AmoaddH,
        (0x04, 1) => AmoxorH,
        (0x0c, 1) => AmoandH,
        (0x08, 1) => AmoorH,
        (0x10, 1) => AmominH,
        (0x14, 1) => AmomaxH,
        (0x18, 1) => AmominuH,
        (0x1c, 1) => AmomaxuH,
        (0x05, 1) => AmocasH,
        _ => return illegal32(bits),
    };
    r_type(op, bits)
}

fn decode_fused_multiply_add(bits: u32) -> Insn {
    // fmt: 0 single, 1 double, 2 half (Zfh), 3 quad (not implemented).
    let op = match (bits & 0x7f, (bits >> 25) & 3) {
        (0x43, 0) => Op::FmaddS,
        (0x47, 0) => Op::FmsubS,
        (0x4b, 0) => Op::FnmsubS,
        (0x4f, 0) => Op::FnmaddS,
        (0x43, 1) => Op::FmaddD,
        (0x47, 1) => Op::FmsubD,
        (0x4b, 1) => Op::FnmsubD,
        (_, 1) => Op::FnmaddD,
        (0x43, 2) => Op::FmaddH,
        (0x47, 2) => Op::FmsubH,
        (0x4b, 2) => Op::FnmsubH,
        (_, 2) => Op::FnmaddH,
        _ => return illegal32(bits),
    };
    let mut insn = fp_rounding(op, bits, rd(bits), rs1(bits), rs2(bits));
    if insn.op != Op::Illegal {
        insn.rs3 = rs3(bits);
    }
    insn
}

fn decode_op_fp(bits: u32) -> Insn {
    let (rd, rs1, rs2, f3) = (rd(bits), rs1(bits), rs2(bits), funct3(bits));
    match funct7(bits) {
        0x00 => fp_rounding(Op::FaddS, bits, rd, rs1, rs2),
        0x04 => fp_rounding(Op::FsubS, bits, rd, rs1, rs2),
        0x08 => fp_rounding(Op::FmulS, bits, rd, rs1, rs2),
        0x0c => fp_rounding(Op::FdivS, bits, rd, rs1, rs2),
        0x01 => fp_rounding(Op::FaddD, bits, rd, rs1, rs2),
        0x05 => fp_rounding(Op::FsubD, bits, rd, rs1, rs2),
        0x09 => fp_rounding(Op::FmulD, bits, rd, rs1, rs2),
        0x0d => fp_rounding(Op::FdivD, bits, rd, rs1, rs2),
        0x02 => fp_rounding(Op::FaddH, bits, rd, rs1, rs2),
        0x06 => fp_rounding(Op::FsubH, bits, rd, rs1, rs2),
        0x0a => fp_rounding(Op::FmulH, bits, rd, rs1, rs2),
        0x0e => fp_rounding(Op::FdivH, bits, rd, rs1, rs2),
        0x2c if rs2 == 0 => fp_rounding(Op::FsqrtS, bits, rd, rs1, 0),
        0x2d if rs2 == 0 => fp_rounding(Op::FsqrtD, bits, rd, rs1, 0),
        0x2e if rs2 == 0 => fp_rounding(Op::FsqrtH, bits, rd, rs1, 0),
        0x10 | 0x11 | 0x12 | 0x14 | 0x15 | 0x16 | 0x50 | 0x51 | 0x52 => {
            // funct3 selects the operation here, so it is not a rounding mode.
            let op = match (funct7(bits), f3) {
                (0x10, 0) => Op::FsgnjS,
                (0x10, 1) => Op::FsgnjnS,
                (0x10, 2) => Op::FsgnjxS,
                (0x11, 0) => Op::FsgnjD,
                (0x11, 1) => Op::FsgnjnD,
                (0x11, 2) => Op::FsgnjxD,
                (0x14, 0) => Op::FminS,
                (0x14, 1) => Op::FmaxS,
                (0x15, 0) => Op::FminD,
                (0x15, 1) => Op::FmaxD,
                (0x50, 0) => Op::FleS,
                (0x50, 1) => Op::FltS,
                (0x50, 2) => Op::FeqS,
                (0x51, 0) => Op::FleD,
                (0x51, 1) => Op::FltD,
                (0x51, 2) => Op::FeqD,
                (0x12, 0) => Op::FsgnjH,
                (0x12, 1) => Op::FsgnjnH,
                (0x12, 2) => Op::FsgnjxH,
                (0x16, 0) => Op::FminH,
                (0x16, 1) => Op::FmaxH,
                (0x52, 0) => Op::FleH,
                (0x52, 1) => Op::FltH,
                (0x52, 2) => Op::FeqH,
                _ => return illegal32(bits),
            };
            make(op, rd, rs1, rs2, 0, bits, 4)
        }
        0x20 if rs2 == 1 => fp_rounding(Op::FcvtSD, bits, rd, rs1, 0),
        // fcvt.d.s and fcvt.d.w[u] are exact, but their rm field still exists and the spec
        // makes reserved values illegal for every instruction that has one.
        0x21 if rs2 == 0 => fp_rounding(Op::FcvtDS, bits, rd, rs1, 0),
        0x60 if rs2 == 0 => fp_rounding(Op::FcvtWS, bits, rd, rs1, 0),
        0x60 if rs2 == 1 => fp_rounding(Op::FcvtWuS, bits, rd, rs1, 0),
        0x61 if rs2 == 0 => fp_rounding(Op::FcvtWD, bits, rd, rs1, 0),
        0x61 if rs2 == 1 => fp_rounding(Op::FcvtWuD, bits, rd, rs1, 0),
        0x68 if rs2 == 0 => fp_rounding(Op::FcvtSW, bits, rd, rs1, 0),
        0x68 if rs2 == 1 => fp_rounding(Op::FcvtSWu, bits, rd, rs1, 0),
        0x69 if rs2 == 0 => fp_rounding(Op::FcvtDW, bits, rd, rs1, 0),
        0x69 if rs2 == 1 => fp_rounding(Op::FcvtDWu, bits, rd, rs1, 0),
        0x70 if rs2 == 0 && f3 == 0 => make(Op::FmvXW, rd, rs1, 0, 0, bits, 4),
        0x70 if rs2 == 0 && f3 == 1 => make(Op::FclassS, rd, rs1, 0, 0, bits, 4),
        0x71 if rs2 == 0 && f3 == 1 => make(Op::FclassD, rd, rs1, 0, 0, bits, 4),
        0x78 if rs2 == 0 && f3 == 0 => make(Op::FmvWX, rd, rs1, 0, 0, bits, 4),
        // Zfh. Widening conversions are exact but keep their rm field, as fcvt.d.s does.
        0x20 if rs2 == 2 => fp_rounding(Op::FcvtSH, bits, rd, rs1, 0),
        0x22 if rs2 == 0 => fp_rounding(Op::FcvtHS, bits, rd, rs1, 0),
        0x21 if rs2 == 2 => fp_rounding(Op::FcvtDH, bits, rd, rs1, 0),
        0x22 if rs2 == 1 => fp_rounding(Op::FcvtHD, bits, rd, rs1, 0),
        0x62 if rs2 == 0 => fp_rounding(Op::FcvtWH, bits, rd, rs1, 0),
        0x62 if rs2 == 1 => fp_rounding(Op::FcvtWuH, bits, rd, rs1, 0),
        0x6a if rs2 == 0 => fp_rounding(Op::FcvtHW, bits, rd, rs1, 0),
        0x6a if rs2 == 1 => fp_rounding(Op::FcvtHWu, bits, rd, rs1, 0),
        0x72 if rs2 == 0 && f3 == 0 => make(Op::FmvXH, rd, rs1, 0, 0, bits, 4),
        0x72 if rs2 == 0 && f3 == 1 => make(Op::FclassH, rd, rs1, 0, 0, bits, 4),
        0x7a if rs2 == 0 && f3 == 0 => make(Op::FmvHX, rd, rs1, 0, 0, bits, 4),
        _ => illegal32(bits),
    }
}

// ---------------------------------------------------------------------------------------------
// Compressed (RVC) instructions, RV32 with F and D.

/// Register x2, the stack pointer, implied by the SP-relative compressed forms.
const SP: u8 = 2;
/// Register x1, the link register written by `c.jal`/`c.jalr`.
const RA: u8 = 1;

/// Bit `from` of `half`, moved to bit `to`.
#[inline(always)]
fn bit(half: u32, from: u32, to: u32) -> u32 {
    ((half >> from) & 1) << to
}

/// Sign-extends the low `width` bits of `value`.
#[inline(always)]
fn sign_extend(value: u32, width: u32) -> i32 {
    let shift = 32 - width;
    ((value << shift) as i32) >> shift
}

/// The 6-bit signed immediate of CI-format instructions: imm[5] = bit 12, imm[4:0] = bits 6:2.
#[inline(always)]
fn c_imm6(half: u32) -> i32 {
    sign_extend(bit(half, 12, 5) | ((half >> 2) & 31), 6)
}

/// The offset of `c.j`/`c.jal`.
#[inline(always)]
fn c_jump_offset(half: u32) -> i32 {
    let offset = bit(half, 12, 11)
        | bit(half, 11, 4)
        | (((half >> 9) & 3) << 8)
        | bit(half, 8, 10)
        | bit(half, 7, 6)
        | bit(half, 6, 7)
        | (((half >> 3) & 7) << 1)
        | bit(half, 2, 5);
    sign_extend(offset, 12)
}

/// The offset of `c.beqz`/`c.bnez`.
#[inline(always)]
fn c_branch_offset(half: u32) -> i32 {
    let offset = bit(half, 12, 8)
        | (((half >> 10) & 3) << 3)
        | (((half >> 5) & 3) << 6)
        | (((half >> 3) & 3) << 1)
        | bit(half, 2, 5);
    sign_extend(offset, 9)
}

/// Offset of the word-sized CL/CS forms (`c.lw`, `c.sw`, `c.flw`, `c.fsw`).
#[inline(always)]
fn c_word_offset(half: u32) -> i32 {
    ((((half >> 10) & 7) << 3) | bit(half, 6, 2) | bit(half, 5, 6)) as i32
}

/// Offset of the doubleword CL/CS forms (`c.fld`, `c.fsd`).
#[inline(always)]
fn c_double_offset(half: u32) -> i32 {
    ((((half >> 10) & 7) << 3) | (((half >> 5) & 3) << 6)) as i32
}

/// Offset of `c.lwsp`/`c.flwsp`.
#[inline(always)]
fn c_word_sp_offset(half: u32) -> i32 {
    (bit(half, 12, 5) | (((half >> 4) & 7) << 2) | (((half >> 2) & 3) << 6)) as i32
}

/// Decode a 16-bit compressed instruction (`half & 3 != 3`).
fn decode_compressed(half: u16) -> Insn {
    let raw = half as u32;
    let h = raw;
    // Full 5-bit register fields (CR/CI/CSS) and the 3-bit x8..x15 fields (CIW/CL/CS/CA/CB).
    let rd_full = ((h >> 7) & 31) as u8;
    let rs2_full = ((h >> 2) & 31) as u8;
    let rd_prime = 8 + ((h >> 2) & 7) as u8;
    let rs1_prime = 8 + ((h >> 7) & 7) as u8;
    let c = |op: Op, rd: u8, rs1: u8, rs2: u8, imm: i32| make(op, rd, rs1, rs2, imm, raw, 2);
    let illegal = Insn::illegal(raw, 2);

    match (h & 3, (h >> 13) & 7) {
        // Quadrant 0.
        (0, 0) => {
            let nzuimm =
                (((h >> 11) & 3) << 4) | (((h >> 7) & 15) << 6) | bit(h, 6, 2) | bit(h, 5, 3);
            // nzuimm = 0 is reserved; it covers the all-zero (always illegal) halfword.
            if nzuimm == 0 {
                illegal
            } else {
                c(Op::Addi, rd_prime, SP, 0, nzuimm as i32)
            }
        }
        (0, 1) => c(Op::Fld, rd_prime, rs1_prime, 0, c_double_offset(h)),
        (0, 2) => c(Op::Lw, rd_prime, rs1_prime, 0, c_word_offset(h)),
        (0, 3) => c(Op::Flw, rd_prime, rs1_prime, 0, c_word_offset(h)),
        (0, 5) => c(Op::Fsd, 0, rs1_prime, rd_prime, c_double_offset(h)),
        (0, 6) => c(Op::Sw, 0, rs1_prime, rd_prime, c_word_offset(h)),
        (0, 7) => c(Op::Fsw, 0, rs1_prime, rd_prime, c_word_offset(h)),
        // Quadrant 1. rd = x0 forms of c.addi/c.li/c.lui are HINTs and execute as no-ops.
        (1, 0) => c(Op::Addi, rd_full, rd_full, 0, c_imm6(h)),
        // c.jal on RV32 (the same code point is c.addiw on RV64).
        (1, 1) => c(Op::Jal, RA, 0, 0, c_jump_offset(h)),
        (1, 2) => c(Op::Addi, rd_full, 0, 0, c_imm6(h)),
        (1, 3) if rd_full == SP => {
            let nzimm =
                bit(h, 12, 9) | bit(h, 6, 4) | bit(h, 5, 6) | (((h >> 3) & 3) << 7) | bit(h, 2, 5);
            if nzimm == 0 {
                illegal
            } else {
                c(Op::Addi, SP, SP, 0, sign_extend(nzimm, 10))
            }
        }
        (1, 3) => match c_imm6(h) {
            0 => illegal,
            imm => c(Op::Lui, rd_full, 0, 0, imm << 12),
        },
        (1, 4) => {
            let shamt = bit(h, 12, 5) | ((h >> 2) & 31);
            match (h >> 10) & 3 {
                // shamt[5] = 1 is reserved on RV32; shamt = 0 is a HINT.
                0 if shamt < 32 => c(Op::Srli, rs1_prime, rs1_prime, 0, shamt as i32),
                1 if shamt < 32 => c(Op::Srai, rs1_prime, rs1_prime, 0, shamt as i32),
                2 => c(Op::Andi, rs1_prime, rs1_prime, 0, c_imm6(h)),
                3 if h & (1 << 12) == 0 => {
                    let op = match (h >> 5) & 3 {
                        0 => Op::Sub,
                        1 => Op::Xor,
                        2 => Op::Or,
                        _ => Op::And,
                    };
                    c(op, rs1_prime, rs1_prime, rd_prime, 0)
                }
                // c.subw/c.addw (RV64) and the Zcb code points.
                _ => illegal,
            }
        }
        (1, 5) => c(Op::Jal, 0, 0, 0, c_jump_offset(h)),
        (1, 6) => c(Op::Beq, 0, rs1_prime, 0, c_branch_offset(h)),
        (1, 7) => c(Op::Bne, 0, rs1_prime, 0, c_branch_offset(h)),
        // Quadrant 2.
        (2, 0) => {
            if h & (1 << 12) != 0 {
                illegal
            } else {
                c(Op::Slli, rd_full, rd_full, 0, rs2_full as i32)
            }
        }
        (2, 1) => {
            let offset = bit(h, 12, 5) | (((h >> 5) & 3) << 3) | (((h >> 2) & 7) << 6);
            c(Op::Fld, rd_full, SP, 0, offset as i32)
        }
        (2, 2) if rd_full == 0 => illegal,
        (2, 2) => c(Op::Lw, rd_full, SP, 0, c_word_sp_offset(h)),
        (2, 3) => c(Op::Flw, rd_full, SP, 0, c_word_sp_offset(h)),
        (2, 4) => match (h & (1 << 12) != 0, rd_full, rs2_full) {
            (false, 0, 0) => illegal,
            (false, rs1, 0) => c(Op::Jalr, 0, rs1, 0, 0),
            (false, rd, rs2) => c(Op::Add, rd, 0, rs2, 0),
            (true, 0, 0) => c(Op::Ebreak, 0, 0, 0, 0),
            (true, rs1, 0) => c(Op::Jalr, RA, rs1, 0, 0),
            (true, rd, rs2) => c(Op::Add, rd, rd, rs2, 0),
        },
        (2, 5) => {
            let offset = (((h >> 10) & 7) << 3) | (((h >> 7) & 7) << 6);
            c(Op::Fsd, 0, SP, rs2_full, offset as i32)
        }
        (2, 6) | (2, 7) => {
            let offset = (((h >> 9) & 15) << 2) | (((h >> 7) & 3) << 6);
            let op = if (h >> 13) & 7 == 6 { Op::Sw } else { Op::Fsw };
            c(op, 0, SP, rs2_full, offset as i32)
        }
        // (0, 4) is reserved (Zcb); quadrant 3 never reaches here.
        _ => illegal,
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod decode_tests;

#[cfg(test)]
mod tests {
    use super::decode_tests::{OBJDUMP_16, OBJDUMP_32, ZICOND};
    use super::*;
    use crate::isa::disasm::disasm;
    use std::collections::{BTreeMap, HashSet};
    use std::fmt::Write as _;
    use std::path::PathBuf;
    use std::process::Command;

    /// Turns a line of `objdump -M no-aliases,numeric` text into what our disassembler prints:
    /// compressed mnemonics become their 32-bit expansion, CSR names become numbers (taken from
    /// the instruction bits, so objdump's naming table does not matter), branch targets become
    /// `0x` addresses and trailing `# ...` comments go away.
    fn normalize_objdump(text: &str, bits: u32) -> String {
        let text = text.split(" #").next().unwrap_or(text).trim();
        let (mnemonic, operands) = text.split_once(' ').unwrap_or((text, ""));
        let operands: String = {
            // Drop ` <symbol+offset>` after targets.
            let mut out = String::new();
            let mut rest = operands;
            while let Some(start) = rest.find(" <") {
                out.push_str(&rest[..start]);
                rest = rest[start..].split_once('>').map_or("", |(_, tail)| tail);
            }
            out.push_str(rest);
            out
        };
        let ops: Vec<&str> = operands.split(',').collect();
        let op = |i: usize| ops.get(i).copied().unwrap_or("?");
        let target = |i: usize| format!("0x{}", op(i));
        match mnemonic {
            "jal" => format!("jal {},{}", op(0), target(1)),
            "beq" | "bne" | "blt" | "bge" | "bltu" | "bgeu" => {
                format!("{mnemonic} {},{},{}", op(0), op(1), target(2))
            }
            m if m.starts_with("csrr") => {
                format!("{mnemonic} {},0x{:x},{}", op(0), bits >> 20, op(2))
            }
            "fence" => format!("fence {}", operands.replace("unknown", "0")),
            "c.unimp" => ".2byte 0x0".to_string(),
            // `unimp` is csrrw x0,cycle,x0 (a write to a read-only CSR, which traps when the
            // CSR is accessed, not at decode); objdump prints the alias even with no-aliases.
            "unimp" => "csrrw x0,0xc00,x0".to_string(),
            "c.nop" => "addi x0,x0,0".to_string(),
            "c.ebreak" => "ebreak".to_string(),
            "c.addi4spn" => format!("addi {operands}"),
            "c.addi" | "c.andi" | "c.slli" | "c.srli" | "c.srai" | "c.sub" | "c.xor" | "c.or"
            | "c.and" | "c.add" => {
                format!("{} {},{},{}", &mnemonic[2..], op(0), op(0), op(1))
            }
            "c.slli64" | "c.srli64" | "c.srai64" => {
                format!("{} {},{},0x0", &mnemonic[2..6], op(0), op(0))
            }
            "c.addi16sp" => format!("addi x2,x2,{}", op(1)),
            "c.li" => format!("addi {},x0,{}", op(0), op(1)),
            "c.lui" => format!("lui {operands}"),
            "c.mv" => format!("add {},x0,{}", op(0), op(1)),
            "c.j" => format!("jal x0,{}", target(0)),
            "c.jal" => format!("jal x1,{}", target(0)),
            "c.jr" => format!("jalr x0,0({})", op(0)),
            "c.jalr" => format!("jalr x1,0({})", op(0)),
            "c.beqz" => format!("beq {},x0,{}", op(0), target(1)),
            "c.bnez" => format!("bne {},x0,{}", op(0), target(1)),
            m if m.starts_with("c.") => {
                // Loads and stores: c.lw, c.fsdsp, ... keep their operands.
                format!("{} {operands}", m[2..].trim_end_matches("sp"))
            }
            _ if operands.is_empty() => mnemonic.to_string(),
            _ => format!("{mnemonic} {operands}"),
        }
    }

    /// Compares decode+disasm with objdump's text for a table of instructions.
    fn check_table(table: &[(u32, u32, &str)], len: u8) {
        let mut failures = String::new();
        for &(pc, bits, objdump_text) in table {
            let insn = decode(bits);
            let ours = disasm(&insn, pc);
            let expected = normalize_objdump(objdump_text, bits);
            if ours != expected || insn.len != len || insn.raw != bits {
                let _ = writeln!(
                    failures,
                    "{bits:#010x} at {pc:#x}: objdump `{objdump_text}` -> `{expected}`, ours \
                     `{ours}` (len {}, raw {:#x})",
                    insn.len, insn.raw
                );
            }
        }
        assert!(
            failures.is_empty(),
            "disagreements with objdump:\n{failures}"
        );
    }

    #[test]
    fn assembled_32bit_instructions_match_objdump() {
        assert!(OBJDUMP_32.len() > 800);
        check_table(OBJDUMP_32, 4);
    }

    #[test]
    fn assembled_compressed_instructions_match_objdump() {
        assert!(OBJDUMP_16.len() > 250);
        check_table(OBJDUMP_16, 2);
    }

    /// Zabha and Zacas (unknown to binutils 2.40): words from the spec's encoding tables.
    #[test]
    fn zabha_and_zacas_decode() {
        const WORDS: &[(u32, &str)] = &[
            (0x003100af, "amoadd.b x1,x3,(x2)"),
            (0x0fff1eaf, "amoswap.h.aqrl x29,x31,(x30)"),
            (0xe05303af, "amomaxu.b x7,x5,(x6)"),
            (0x843110af, "amomin.h.aq x1,x3,(x2)"),
            (0x28b5262f, "amocas.w x12,x11,(x10)"),
            (0x2ab5062f, "amocas.b.rl x12,x11,(x10)"),
            (0x28b5162f, "amocas.h x12,x11,(x10)"),
            (0x28e5362f, "amocas.d x12,x14,(x10)"),
            (0x2805302f, "amocas.d x0,x0,(x10)"),
        ];
        for &(bits, text) in WORDS {
            assert_eq!(disasm(&decode(bits), 0), text, "{bits:#010x}");
        }
    }

    #[test]
    fn zicond_decodes() {
        for &(bits, text) in ZICOND {
            assert_eq!(disasm(&decode(bits), 0), text, "{bits:#010x}");
        }
    }

    #[test]
    fn operand_fields_follow_the_insn_conventions() {
        // Encodings below are taken from the generated (assembled) tables.
        let lui = decode(0xfffff0b7); // lui x1,0xfffff
        assert_eq!(
            (lui.op, lui.rd, lui.imm),
            (Op::Lui, 1, 0xffff_f000_u32 as i32)
        );
        let csr = decode(0xfff120f3); // csrrs x1,0xfff,x2: CSR number is not sign-extended
        assert_eq!((csr.op, csr.rd, csr.rs1, csr.imm), (Op::Csrrs, 1, 2, 0xfff));
        let csri = decode(0xffffe2f3); // csrrsi x5,0xfff,31: uimm in rs1
        assert_eq!(
            (csri.op, csri.rd, csri.rs1, csri.imm),
            (Op::Csrrsi, 5, 31, 0xfff)
        );
        let fma = decode(0x203170c3); // fmadd.s f1,f2,f3,f4 (dyn)
        assert_eq!(
            (fma.op, fma.rd, fma.rs1, fma.rs2, fma.rs3, fma.rm),
            (Op::FmaddS, 1, 2, 3, 4, 7)
        );
        let amo = decode(0x0e21a0af); // amoswap.w.aqrl x1,x2,(x3)
        assert_eq!(
            (amo.op, amo.rd, amo.rs1, amo.rs2, amo.imm),
            (Op::AmoswapW, 1, 3, 2, 0)
        );
        let branch = decode(0x8020c063); // blt x1,x2,.-4096
        assert_eq!(
            (branch.op, branch.rs1, branch.rs2, branch.imm),
            (Op::Blt, 1, 2, -4096)
        );
        let store = decode(0x80532023); // sw x5,-2048(x6)
        assert_eq!(
            (store.op, store.rs1, store.rs2, store.imm),
            (Op::Sw, 6, 5, -2048)
        );
        let shift = decode(0x41f15093); // srai x1,x2,31
        assert_eq!((shift.op, shift.imm), (Op::Srai, 31));
        // c.lui x1,0xfffff: nzimm << 12, sign-extended; the upper half of `bits` is ignored.
        let c_lui = decode(0xdead_70fd);
        assert_eq!(
            (c_lui.op, c_lui.rd, c_lui.imm, c_lui.len, c_lui.raw),
            (Op::Lui, 1, -4096, 2, 0x70fd)
        );
        // c.addi16sp x2,-512
        let c_sp = decode(0x7101);
        assert_eq!(
            (c_sp.op, c_sp.rd, c_sp.rs1, c_sp.imm),
            (Op::Addi, 2, 2, -512)
        );
    }

    /// Reserved or unimplemented encodings, each derived from an assembled legal word.
    const ILLEGAL_32: &[(u32, &str)] = &[
        (0x043100b3, "add with funct7 = 0000010"),
        (0x403110b3, "funct7 = 0100000 with funct3 = 001"),
        (0x03f11093, "slli with shamt[5] = 1 (RV64 only)"),
        (0x02115093, "srli with shamt[5] = 1"),
        (0x43f15093, "srai with shamt[5] = 1"),
        (0x63f15093, "rori with shamt[5] = 1"),
        (0x4bf11093, "bclri with shamt[5] = 1"),
        (0x4a515093, "bexti with shamt[5] = 1"),
        (0x2bf11093, "bseti with shamt[5] = 1"),
        (0x6bf11093, "binvi with shamt[5] = 1"),
        (0x60311093, "clz group, rs2 = 3"),
        (0x60611093, "clz group, rs2 = 6"),
        (0x6b815093, "rev8 RV64 encoding"),
        (0x28615093, "orc.b with imm12 0x286"),
        (0x0800403b, "zext.h RV64 encoding (OP-32)"),
        (0x083140b3, "pack (Zbkb) with rs2 != 0"),
        (0x0e3140b3, "czero funct7 with funct3 = 100"),
        (0x000110e7, "jalr with funct3 = 001"),
        (0x0020a063, "branch funct3 = 010"),
        (0x0020b063, "branch funct3 = 011"),
        (0x00013083, "ld (RV64)"),
        (0x00016083, "lwu (RV64)"),
        (0x00017083, "load funct3 = 111"),
        (0x00113023, "sd (RV64)"),
        (0x00114023, "store funct3 = 100"),
        (0x003100bb, "addw (OP-32, RV64)"),
        (0x0011009b, "addiw (OP-IMM-32, RV64)"),
        (0x0000200f, "MISC-MEM funct3 = 010"),
        (0x000000f3, "ecall with rd != 0"),
        (0x00108073, "ebreak with rs1 != 0"),
        (0x302000f3, "mret with rd != 0"),
        (0x10508073, "wfi with rs1 != 0"),
        (0x00200073, "uret (removed)"),
        (0x7b200073, "dret (debug mode, not implemented)"),
        (0x120000f3, "sfence.vma with rd != 0"),
        (0x22000073, "hfence.vvma (H extension)"),
        (0x16000073, "sinval.vma (Svinval)"),
        (0x00014073, "SYSTEM funct3 = 100 (hlv, H extension)"),
        (0x103120af, "lr.w with rs2 != 0"),
        (0x0031b0af, "amoadd.d (RV64)"),
        (
            0x2821b0af,
            "amocas.d with an odd rd (register pairs start at even registers)",
        ),
        (0x2831b12f, "amocas.d with an odd rs2"),
        (0x100100af, "lr.b (Zabha has no LR/SC)"),
        (0x180110af, "sc.h (Zabha has no LR/SC)"),
        (0x303100af, "AMO funct5 = 00110 (byte)"),
        (0x0031c0af, "AMO funct3 = 100"),
        (0x003150d3, "fadd.s rm = 5"),
        (0x003160d3, "fadd.s rm = 6"),
        (0x203150c3, "fmadd.s rm = 5"),
        (0x580160d3, "fsqrt.s rm = 6"),
        (0xc00150d3, "fcvt.w.s rm = 5"),
        (0x420150d3, "fcvt.d.s rm = 5"),
        (0xd20160d3, "fcvt.d.w rm = 6"),
        (0x263170c3, "fmadd with fmt = Q"),
        (0x063170d3, "fadd.q"),
        (0x581170d3, "fsqrt.s with rs2 != 0"),
        (0x203130d3, "fsgnj.s funct3 = 011"),
        (0x283120d3, "fmin.s funct3 = 010"),
        (0x400170d3, "fcvt.s.s (rs2 = 0 with fmt S)"),
        (0x421170d3, "fcvt.d.s with rs2 = 1"),
        (0xc02170d3, "fcvt.l.s (RV64)"),
        (0xd02170d3, "fcvt.s.l (RV64)"),
        (0xe01100d3, "fmv.x.w with rs2 != 0"),
        (0xe20100d3, "fmv.x.d (RV64)"),
        (0xf00110d3, "fmv.w.x with funct3 = 001"),
        (0xf20100d3, "fmv.d.x (RV64)"),
        (0xe00120d3, "fclass.s funct3 = 010"),
        (0xa03130d3, "feq.s funct3 = 011"),
        (0x00014087, "flq"),
        (0x00000007, "vector load (funct3 = 000)"),
        (0x00000057, "OP-V"),
        (0xffffffff, "all ones"),
    ];

    const ILLEGAL_16: &[(u16, &str)] = &[
        (0x0000, "all-zero halfword"),
        (0x0004, "c.addi4spn with nzuimm = 0, rd' = x9"),
        (0x4002, "c.lwsp with rd = x0"),
        (0x8002, "c.jr with rs1 = x0"),
        (0x6101, "c.addi16sp with nzimm = 0"),
        (0x6081, "c.lui x1 with nzimm = 0"),
        (0x6001, "c.lui x0 with nzimm = 0"),
        (0x9001, "c.srli with shamt[5] = 1"),
        (0x9401, "c.srai with shamt[5] = 1"),
        (0x1082, "c.slli with shamt[5] = 1"),
        (0x9c01, "c.subw (RV64)"),
        (0x9c21, "c.addw (RV64)"),
        (0x9c41, "Zcb c.mul code point"),
        (0x9c61, "Zcb code point"),
        (0x8000, "quadrant 0 funct3 = 100 (Zcb c.lbu)"),
    ];

    #[test]
    fn reserved_encodings_are_illegal() {
        for &(bits, why) in ILLEGAL_32 {
            let insn = decode(bits);
            assert_eq!(insn, Insn::illegal(bits, 4), "{bits:#010x}: {why}");
        }
        for &(half, why) in ILLEGAL_16 {
            let insn = decode(0xffff_0000 | u32::from(half));
            assert_eq!(
                insn,
                Insn::illegal(u32::from(half), 2),
                "{half:#06x}: {why}"
            );
        }
    }

    /// A 32-bit encoding of the operations compressed instructions expand to.
    fn encode_expansion(insn: &Insn) -> u32 {
        let (rd, rs1, rs2) = (u32::from(insn.rd), u32::from(insn.rs1), u32::from(insn.rs2));
        let imm = insn.imm as u32;
        let i_type = |opcode: u32, f3: u32| opcode | rd << 7 | f3 << 12 | rs1 << 15 | imm << 20;
        let s_type = |opcode: u32, f3: u32| {
            opcode | (imm & 31) << 7 | f3 << 12 | rs1 << 15 | rs2 << 20 | (imm >> 5) << 25
        };
        let b_type = |f3: u32| {
            0x63 | ((imm >> 11) & 1) << 7
                | ((imm >> 1) & 15) << 8
                | f3 << 12
                | rs1 << 15
                | rs2 << 20
                | ((imm >> 5) & 63) << 25
                | ((imm >> 12) & 1) << 31
        };
        let r_type =
            |f7: u32, f3: u32| 0x33 | rd << 7 | f3 << 12 | rs1 << 15 | rs2 << 20 | f7 << 25;
        match insn.op {
            Op::Addi => i_type(0x13, 0),
            Op::Andi => i_type(0x13, 7),
            Op::Slli => i_type(0x13, 1),
            Op::Srli => i_type(0x13, 5),
            Op::Srai => i_type(0x13, 5) | 0x4000_0000,
            Op::Lw => i_type(0x03, 2),
            Op::Flw => i_type(0x07, 2),
            Op::Fld => i_type(0x07, 3),
            Op::Jalr => i_type(0x67, 0),
            Op::Sw => s_type(0x23, 2),
            Op::Fsw => s_type(0x27, 2),
            Op::Fsd => s_type(0x27, 3),
            Op::Beq => b_type(0),
            Op::Bne => b_type(1),
            Op::Lui => 0x37 | rd << 7 | (imm & 0xffff_f000),
            Op::Jal => {
                0x6f | rd << 7
                    | (imm & 0xff000)
                    | ((imm >> 11) & 1) << 20
                    | ((imm >> 1) & 0x3ff) << 21
                    | ((imm >> 20) & 1) << 31
            }
            Op::Add => r_type(0, 0),
            Op::Sub => r_type(0x20, 0),
            Op::Xor => r_type(0, 4),
            Op::Or => r_type(0, 6),
            Op::And => r_type(0, 7),
            Op::Ebreak => 0x0010_0073,
            other => panic!("{other} is not a compressed expansion"),
        }
    }

    #[test]
    fn every_compressed_value_decodes_like_its_expansion() {
        let mut legal = 0;
        for half in 0..=u16::MAX {
            if half & 3 == 3 {
                continue;
            }
            let insn = decode(0x5a5a_0000 | u32::from(half));
            assert_eq!((insn.len, insn.raw), (2, u32::from(half)), "{half:#06x}");
            assert_eq!(
                insn,
                decode(u32::from(half)),
                "{half:#06x}: upper half must not matter"
            );
            if insn.op == Op::Illegal {
                continue;
            }
            legal += 1;
            assert_eq!(
                (insn.rs3, insn.rm, insn.fusion),
                (0, 0, crate::isa::Fusion::None),
                "{half:#06x}"
            );
            let wide = decode(encode_expansion(&insn));
            let normalized = Insn {
                len: 2,
                raw: u32::from(half),
                ..wide
            };
            assert_eq!(
                insn, normalized,
                "{half:#06x} vs its expansion {:#010x}",
                wide.raw
            );
        }
        // 49152 compressed code points minus the reserved ones.
        assert!(legal > 45_000, "only {legal} legal compressed encodings");
    }

    // ---- Cross-check against GNU objdump, when the cross binutils are installed. -------------

    const AS: &str = "riscv64-linux-gnu-as";
    const OBJDUMP: &str = "riscv64-linux-gnu-objdump";

    /// Disassembles `blob` (placed at address 0) with objdump and returns address -> text.
    /// Fails when the cross binutils are missing: a skipped cross-check must never pass.
    fn objdump_blob(tag: &str, blob: &[u8]) -> Option<BTreeMap<u32, String>> {
        assert!(
            Command::new(OBJDUMP).arg("--version").output().is_ok(),
            "{OBJDUMP} is required: apt-get install gcc-riscv64-linux-gnu (or run scripts/setup.sh)"
        );
        let dir: PathBuf =
            std::env::temp_dir().join(format!("rv32vm-decode-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        let blob_path = dir.join("blob.bin");
        let source_path = dir.join("blob.s");
        let object_path = dir.join("blob.o");
        std::fs::write(&blob_path, blob).expect("write blob");
        // The `$x` label is a RISC-V mapping symbol: it makes objdump treat the blob as code.
        let source = format!(
            ".attribute arch, \"rv32gc_zba_zbb_zbc_zbs_zfh\"\n.text\n\"$x\":\n.incbin \"{}\"\n",
            blob_path.display()
        );
        std::fs::write(&source_path, source).expect("write source");
        let status = Command::new(AS)
            .args(["-march=rv32gc_zba_zbb_zbc_zbs_zfh", "-mabi=ilp32", "-o"])
            .arg(&object_path)
            .arg(&source_path)
            .status()
            .expect("run as");
        assert!(status.success(), "{AS} failed");
        let output = Command::new(OBJDUMP)
            .args(["-d", "-z", "-M", "no-aliases,numeric"])
            .arg(&object_path)
            .output()
            .expect("run objdump");
        assert!(output.status.success(), "{OBJDUMP} failed");
        let _ = std::fs::remove_dir_all(&dir);
        let mut by_address = BTreeMap::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            // "   1c:\t69815093          \trev8\tx1,x2"
            let mut fields = line.split('\t');
            let (Some(address), Some(_bytes), Some(text)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let Some(address) = address.trim().strip_suffix(':') else {
                continue;
            };
            let Ok(address) = u32::from_str_radix(address, 16) else {
                continue;
            };
            let text =
                text.to_string() + fields.map(|f| format!(" {f}")).collect::<String>().as_str();
            by_address.insert(
                address,
                text.split_whitespace().collect::<Vec<_>>().join(" "),
            );
        }
        Some(by_address)
    }

    /// Why a disagreement with objdump is expected, or `None` if it is a bug.
    fn accepted_disagreement(bits: u32, ours: &Insn, objdump: &str) -> Option<&'static str> {
        let objdump_illegal = objdump.starts_with(".4byte") || objdump.starts_with(".2byte");
        if bits & 3 != 3 {
            let half = bits & 0xffff;
            return match (ours.op, objdump.split(' ').next()) {
                (Op::Illegal, Some("c.addi16sp")) if objdump.ends_with(",0") => {
                    Some("c.addi16sp with nzimm = 0 is reserved; objdump prints it")
                }
                (Op::Illegal, Some("c.slli" | "c.srli" | "c.srai")) if half & 0x1000 != 0 => {
                    Some("RV32C shift with shamt[5] = 1 is reserved; objdump prints it")
                }
                _ => None,
            };
        }
        match (ours.op, bits & 0x7f) {
            (Op::Illegal, 0x43 | 0x47 | 0x4b | 0x4f | 0x53)
                if objdump.ends_with(",unknown") && matches!((bits >> 12) & 7, 5 | 6) =>
            {
                Some("FP rm = 5/6 is reserved; objdump prints rm `unknown`")
            }
            (Op::FcvtDS | Op::FcvtDW | Op::FcvtDWu | Op::FcvtSH | Op::FcvtDH, _)
                if objdump_illegal =>
            {
                Some("exact widening fcvt with rm != 0: valid per spec, binutils 2.40 wants rm = 0")
            }
            (Op::Illegal, 0x13)
                if bits & (1 << 25) != 0
                    && matches!((bits >> 12) & 7, 1 | 5)
                    && !objdump_illegal =>
            {
                Some("RV32 shift-immediate with shamt[5] = 1 is reserved; objdump prints it")
            }
            (Op::Illegal, 0x73)
                if matches!(objdump, "uret" | "hret" | "dret")
                    || objdump.starts_with("sfence.vm ")
                    || objdump == "sfence.vm" =>
            {
                Some("removed (priv 1.9) or debug-mode instruction that we do not implement")
            }
            (Op::Fence, _) if objdump_illegal => {
                Some("FENCE with nonzero fm/rs1/rd: spec says ignore, objdump rejects")
            }
            (Op::FenceI, _) if objdump_illegal => {
                Some("FENCE.I with nonzero imm/rs1/rd: spec says ignore, objdump rejects")
            }
            (Op::CzeroEqz | Op::CzeroNez, _) if objdump_illegal => {
                Some("Zicond is unknown to binutils 2.40")
            }
            // binutils 2.40 knows the A extension's atomics, so only these print as `.4byte`.
            (op, 0x2f) if objdump_illegal && op.class() == crate::isa::ops::OpClass::Atomic => {
                Some("Zabha and Zacas are unknown to binutils 2.40")
            }
            _ => None,
        }
    }

    /// Decodes every word of `words` (compressed ones in the low half) at its offset and
    /// compares with objdump; returns the operations (including `Illegal`) on which both agreed
    /// at least once, or `None` when objdump is not available.
    fn cross_check(tag: &str, words: &[(u32, u8)]) -> Option<HashSet<Op>> {
        let mut blob = Vec::new();
        let mut addresses = Vec::with_capacity(words.len());
        for &(bits, len) in words {
            addresses.push(blob.len() as u32);
            blob.extend_from_slice(&bits.to_le_bytes()[..usize::from(len)]);
        }
        let dump = objdump_blob(tag, &blob)?;
        let mut failures = String::new();
        let mut failure_count = 0;
        let mut accepted: BTreeMap<&str, usize> = BTreeMap::new();
        let mut agreed_ops = HashSet::new();
        let mut agreed_illegal = 0;
        for (&(bits, len), &pc) in words.iter().zip(&addresses) {
            let Some(text) = dump.get(&pc) else {
                panic!("objdump listed nothing at {pc:#x} ({bits:#x})");
            };
            let insn = decode(bits);
            assert_eq!(insn.len, len);
            let ours = disasm(&insn, pc);
            let expected = normalize_objdump(text, bits);
            if ours == expected {
                agreed_ops.insert(insn.op);
                agreed_illegal += usize::from(insn.op == Op::Illegal);
                continue;
            }
            if let Some(reason) = accepted_disagreement(bits, &insn, text) {
                *accepted.entry(reason).or_default() += 1;
                continue;
            }
            failure_count += 1;
            if failure_count <= 50 {
                let _ = writeln!(failures, "{bits:#010x}: objdump `{text}` ours `{ours}`");
            }
        }
        eprintln!(
            "{tag}: {} words cross-checked against objdump: {} agreed illegal, {} distinct \
             operations agreed, {} accepted disagreements",
            words.len(),
            agreed_illegal,
            agreed_ops.len() - usize::from(agreed_ops.contains(&Op::Illegal)),
            accepted.values().sum::<usize>()
        );
        for (reason, count) in &accepted {
            eprintln!("  accepted x{count}: {reason}");
        }
        assert!(
            failure_count == 0,
            "{failure_count} disagreements:\n{failures}"
        );
        Some(agreed_ops)
    }

    #[test]
    fn all_compressed_values_match_objdump() {
        let words: Vec<(u32, u8)> = (0..=u16::MAX)
            .filter(|half| half & 3 != 3)
            .map(|half| (u32::from(half), 2))
            .collect();
        assert_eq!(words.len(), 49_152);
        if let Some(agreed_ops) = cross_check("rvc", &words) {
            // The 22 operations compressed instructions expand to, plus Illegal.
            assert_eq!(agreed_ops.len(), 23, "{agreed_ops:?}");
        }
    }

    /// splitmix64: a small deterministic generator, so failures reproduce.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> u32 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u32
        }
    }

    #[test]
    fn random_32bit_words_match_objdump() {
        const MAJOR_OPCODES: [u32; 16] = [
            0x37, 0x17, 0x6f, 0x67, 0x63, 0x03, 0x23, 0x13, 0x33, 0x0f, 0x73, 0x2f, 0x07, 0x27,
            0x53, 0x43,
        ];
        const FUNCT7: [u32; 24] = [
            0x00, 0x01, 0x20, 0x05, 0x04, 0x10, 0x14, 0x24, 0x30, 0x34, 0x07, 0x09, 0x18, 0x08,
            0x2c, 0x2d, 0x50, 0x51, 0x60, 0x61, 0x68, 0x69, 0x70, 0x78,
        ];
        let mut rng = SplitMix(0x5eed_0fde_c0de);
        let mut words = Vec::with_capacity(400_000);
        for i in 0..400_000u32 {
            let random = rng.next();
            let word = match i % 5 {
                // Anything with a 32-bit length prefix.
                0 => random | 3,
                // A major opcode we implement, random fields.
                1 => (random & !0x7f) | MAJOR_OPCODES[(rng.next() % 16) as usize],
                // ... with a funct7 that selects something.
                2 => {
                    let f7 = FUNCT7[(rng.next() % 24) as usize];
                    let opcode = [0x33, 0x13, 0x53, 0x73][(rng.next() % 4) as usize];
                    (random & 0x01ff_ff80) | f7 << 25 | opcode
                }
                // An assembled instruction with one or two bits flipped: exact encodings
                // (ecall, wfi, ...) and their illegal neighbours.
                3 => {
                    let (_, base, _) = OBJDUMP_32[(random as usize) % OBJDUMP_32.len()];
                    base ^ (1 << (rng.next() % 32)) ^ (u32::from(i % 2 == 0) << (rng.next() % 32))
                }
                // Sparse fields (mostly zero registers) to reach exact encodings.
                _ => {
                    let sparse = random & rng.next() & rng.next();
                    (sparse & !0x7f) | MAJOR_OPCODES[(rng.next() % 16) as usize]
                }
            };
            // Low bits 11111 announce a 48-bit or longer instruction, which objdump would
            // measure differently; we have none of those (they decode as illegal).
            let word = word | 3;
            let word = if word & 0x1f == 0x1f {
                word & !0x10
            } else {
                word
            };
            words.push((word, 4));
        }
        if let Some(agreed_ops) = cross_check("rv32", &words) {
            // The sample must reach every operation objdump knows for the check to mean much.
            let missed: HashSet<Op> = OBJDUMP_32
                .iter()
                .map(|&(_, bits, _)| decode(bits).op)
                .filter(|op| !agreed_ops.contains(op))
                .collect();
            assert!(missed.is_empty(), "random words never reached {missed:?}");
        }
    }
}
