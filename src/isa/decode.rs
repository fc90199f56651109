//! Decoder: raw instruction bits -> [`Insn`].
//!
//! Covers RV32 I, M, A, F, D, C, Zicsr, Zifencei, Zba, Zbb, Zbc, Zbs, Zicond and the privileged
//! instructions (`mret`, `sret`, `wfi`, `sfence.vma`). Every encoding that is reserved on RV32 or
//! belongs to an extension we do not implement decodes to [`Op::Illegal`], so executing it raises
//! illegal-instruction. Compressed instructions decode to exactly the [`Insn`] of their 32-bit
//! expansion, apart from `raw` and `len`.
//!
//! Unused operand fields are always zero, so two decodings of the same operation compare equal.

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
        _pad: 0,
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
            2 => i_type(Op::Flw, bits, imm_i(bits)),
            3 => i_type(Op::Fld, bits, imm_i(bits)),
            _ => illegal32(bits),
        },
        0x27 => match funct3(bits) {
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
    if funct3(bits) != 2 {
        return illegal32(bits);
    }
    // bits 26:25 are aq/rl, accepted and ignored.
    let op = match bits >> 27 {
        0x02 if rs2(bits) == 0 => return make(Op::LrW, rd(bits), rs1(bits), 0, 0, bits, 4),
        0x03 => Op::ScW,
        0x01 => Op::AmoswapW,
        0x00 => Op::AmoaddW,
        0x04 => Op::AmoxorW,
        0x0c => Op::AmoandW,
        0x08 => Op::AmoorW,
        0x10 => Op::AmominW,
        0x14 => Op::AmomaxW,
        0x18 => Op::AmominuW,
        0x1c => Op::AmomaxuW,
        _ => return illegal32(bits),
    };
    r_type(op, bits)
}

fn decode_fused_multiply_add(bits: u32) -> Insn {
    let double = match (bits >> 25) & 3 {
        0 => false,
        1 => true,
        _ => return illegal32(bits),
    };
    let op = match (bits & 0x7f, double) {
        (0x43, false) => Op::FmaddS,
        (0x47, false) => Op::FmsubS,
        (0x4b, false) => Op::FnmsubS,
        (0x4f, false) => Op::FnmaddS,
        (0x43, true) => Op::FmaddD,
        (0x47, true) => Op::FmsubD,
        (0x4b, true) => Op::FnmsubD,
        _ => Op::FnmaddD,
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
        0x2c if rs2 == 0 => fp_rounding(Op::FsqrtS, bits, rd, rs1, 0),
        0x2d if rs2 == 0 => fp_rounding(Op::FsqrtD, bits, rd, rs1, 0),
        0x10 | 0x11 | 0x14 | 0x15 | 0x50 | 0x51 => {
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
            let nzuimm = (((h >> 11) & 3) << 4)
                | (((h >> 7) & 15) << 6)
                | bit(h, 6, 2)
                | bit(h, 5, 3);
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
            let nzimm = bit(h, 12, 9)
                | bit(h, 6, 4)
                | bit(h, 5, 6)
                | (((h >> 3) & 3) << 7)
                | bit(h, 2, 5);
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
