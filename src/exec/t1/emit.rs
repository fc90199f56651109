//! The emit layer: the only code in the crate that knows x86-64 instruction encodings (the only
//! user of `dynasm!`). Templates describe what to do in terms of host registers, guest-state
//! memory operands and labels; this module picks the bytes.
//!
//! Every 32-bit operation writes a 32-bit host register, which zero-extends into the full
//! 64-bit register: templates rely on that when they use a 32-bit result as an address offset.

// `dynasm!` converts dynamic register numbers with `.into()` in its expansion.
#![allow(clippy::useless_conversion)]

use dynasmrt::x64::X64Relocation;
use dynasmrt::{dynasm, DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

/// A general-purpose host register (its hardware number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Reg {
    Rax = 0,
    Rcx = 1,
    Rdx = 2,
    Rbx = 3,
    Rsp = 4,
    Rbp = 5,
    Rsi = 6,
    Rdi = 7,
    R8 = 8,
    R9 = 9,
    R10 = 10,
    R11 = 11,
    R12 = 12,
    R13 = 13,
    R14 = 14,
    R15 = 15,
}

impl Reg {
    #[inline]
    fn n(self) -> u8 {
        self as u8
    }
}

/// The integer argument registers of the System V calling convention, in order.
pub const ARGS: [Reg; 6] = [Reg::Rdi, Reg::Rsi, Reg::Rdx, Reg::Rcx, Reg::R8, Reg::R9];

/// A memory operand `[base + disp]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mem {
    pub base: Reg,
    pub disp: i32,
}

impl Mem {
    /// `[base + disp]`.
    pub const fn at(base: Reg, disp: i32) -> Mem {
        Mem { base, disp }
    }
}

/// Two-operand ALU operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alu {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Cmp,
    Test,
}

/// Shifts and rotates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift {
    Shl,
    Shr,
    Sar,
    Rol,
    Ror,
}

/// Bit-test operations (`bt`, `btr`, `bts`, `btc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    Test,
    Reset,
    Set,
    Complement,
}

/// Unary operations on one register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Not,
    Neg,
    Bswap,
    /// Sign-extend the low byte.
    Sext8,
    /// Sign-extend the low half.
    Sext16,
    /// Zero-extend the low byte.
    Zext8,
    /// Zero-extend the low half.
    Zext16,
}

/// Condition codes after a compare (`a` compared with `b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Eq,
    Ne,
    /// Signed `a < b`.
    Lt,
    /// Signed `a >= b`.
    Ge,
    /// Signed `a > b`.
    Gt,
    /// Signed `a <= b`.
    Le,
    /// Unsigned `a < b` (carry set).
    Ltu,
    /// Unsigned `a >= b` (carry clear).
    Geu,
    /// Unsigned `a > b`.
    Gtu,
    /// Unsigned `a <= b`.
    Leu,
}

/// Width of a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    B8,
    B16,
    B32,
    B64,
}

/// A position in the code being emitted that can be jumped to.
pub type Label = DynamicLabel;

/// Byte length of the patchable jump emitted by [`Emitter::patchable_jmp`].
pub const PATCHABLE_JMP_LEN: usize = 5;

/// Assembles x86-64 code for a known final address.
pub struct Emitter {
    ops: VecAssembler<X64Relocation>,
}

impl Emitter {
    /// An emitter for code that will be copied to host address `base` (relative jumps to
    /// absolute addresses are resolved against it).
    pub fn new(base: usize) -> Emitter {
        Emitter {
            ops: VecAssembler::new(base),
        }
    }

    /// An emitter for about a block's code: its buffers start big enough for most blocks,
    /// instead of growing (and reallocating) from empty while the block is emitted.
    pub fn for_block(base: usize) -> Emitter {
        const CODE_BYTES: usize = 1024;
        const LABELS: usize = 16;
        Emitter {
            ops: VecAssembler::new_with_capacity(base, CODE_BYTES, 0, 0, LABELS, 0, LABELS),
        }
    }

    /// Bytes emitted so far.
    pub fn len(&self) -> usize {
        self.ops.offset().0
    }

    /// True if nothing was emitted yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Resolve labels and return the machine code.
    pub fn finish(self) -> Result<Vec<u8>, dynasmrt::DynasmError> {
        self.ops.finalize()
    }

    /// A new, unbound label.
    pub fn label(&mut self) -> Label {
        self.ops.new_dynamic_label()
    }

    /// Bind `l` to the current position.
    pub fn bind(&mut self, l: Label) {
        dynasm!(self.ops ; .arch x64 ; =>l);
    }

    // ----- moves -----

    /// `dst = imm` (32-bit, zero-extended).
    pub fn emit_load_imm(&mut self, dst: Reg, imm: u32) {
        if imm == 0 {
            dynasm!(self.ops ; .arch x64 ; xor Rd(dst.n()), Rd(dst.n()));
        } else {
            dynasm!(self.ops ; .arch x64 ; mov Rd(dst.n()), imm as i32);
        }
    }

    /// `dst = imm` (64-bit).
    pub fn emit_load_imm64(&mut self, dst: Reg, imm: u64) {
        if imm <= u32::MAX as u64 {
            self.emit_load_imm(dst, imm as u32);
        } else {
            dynasm!(self.ops ; .arch x64 ; mov Rq(dst.n()), QWORD imm as i64);
        }
    }

    /// `dst = src` (32-bit; zero-extends).
    pub fn emit_mov(&mut self, dst: Reg, src: Reg) {
        if dst != src {
            dynasm!(self.ops ; .arch x64 ; mov Rd(dst.n()), Rd(src.n()));
        }
    }

    /// `dst = src` (64-bit).
    pub fn emit_mov64(&mut self, dst: Reg, src: Reg) {
        if dst != src {
            dynasm!(self.ops ; .arch x64 ; mov Rq(dst.n()), Rq(src.n()));
        }
    }

    /// Load from memory into `dst`: 8/16-bit values zero- or sign-extended to 32 bits, 32-bit
    /// values as they are, 64-bit values into the full register.
    pub fn emit_load(&mut self, w: Width, signed: bool, dst: Reg, m: Mem) {
        let (d, b, o) = (dst.n(), m.base.n(), m.disp);
        match (w, signed) {
            (Width::B8, false) => dynasm!(self.ops ; .arch x64 ; movzx Rd(d), BYTE [Rq(b) + o]),
            (Width::B8, true) => dynasm!(self.ops ; .arch x64 ; movsx Rd(d), BYTE [Rq(b) + o]),
            (Width::B16, false) => dynasm!(self.ops ; .arch x64 ; movzx Rd(d), WORD [Rq(b) + o]),
            (Width::B16, true) => dynasm!(self.ops ; .arch x64 ; movsx Rd(d), WORD [Rq(b) + o]),
            (Width::B32, _) => dynasm!(self.ops ; .arch x64 ; mov Rd(d), DWORD [Rq(b) + o]),
            (Width::B64, _) => dynasm!(self.ops ; .arch x64 ; mov Rq(d), QWORD [Rq(b) + o]),
        }
    }

    /// Load from `[base + index + disp]` (a host address formed from two registers).
    pub fn emit_load_indexed(
        &mut self,
        w: Width,
        signed: bool,
        dst: Reg,
        base: Reg,
        index: Reg,
        disp: i32,
    ) {
        let (d, b, i, o) = (dst.n(), base.n(), index.n(), disp);
        match (w, signed) {
            (Width::B8, false) => {
                dynasm!(self.ops ; .arch x64 ; movzx Rd(d), BYTE [Rq(b) + Rq(i) + o])
            }
            (Width::B8, true) => {
                dynasm!(self.ops ; .arch x64 ; movsx Rd(d), BYTE [Rq(b) + Rq(i) + o])
            }
            (Width::B16, false) => {
                dynasm!(self.ops ; .arch x64 ; movzx Rd(d), WORD [Rq(b) + Rq(i) + o])
            }
            (Width::B16, true) => {
                dynasm!(self.ops ; .arch x64 ; movsx Rd(d), WORD [Rq(b) + Rq(i) + o])
            }
            (Width::B32, _) => dynasm!(self.ops ; .arch x64 ; mov Rd(d), DWORD [Rq(b) + Rq(i) + o]),
            (Width::B64, _) => dynasm!(self.ops ; .arch x64 ; mov Rq(d), QWORD [Rq(b) + Rq(i) + o]),
        }
    }

    /// Store the low `w` bytes of `src` to memory.
    pub fn emit_store(&mut self, w: Width, m: Mem, src: Reg) {
        let (s, b, o) = (src.n(), m.base.n(), m.disp);
        match w {
            Width::B8 => dynasm!(self.ops ; .arch x64 ; mov BYTE [Rq(b) + o], Rb(s)),
            Width::B16 => dynasm!(self.ops ; .arch x64 ; mov WORD [Rq(b) + o], Rw(s)),
            Width::B32 => dynasm!(self.ops ; .arch x64 ; mov DWORD [Rq(b) + o], Rd(s)),
            Width::B64 => dynasm!(self.ops ; .arch x64 ; mov QWORD [Rq(b) + o], Rq(s)),
        }
    }

    /// Store the low `w` bytes of `src` to `[base + index + disp]`.
    pub fn emit_store_indexed(&mut self, w: Width, base: Reg, index: Reg, disp: i32, src: Reg) {
        let (s, b, i, o) = (src.n(), base.n(), index.n(), disp);
        match w {
            Width::B8 => dynasm!(self.ops ; .arch x64 ; mov BYTE [Rq(b) + Rq(i) + o], Rb(s)),
            Width::B16 => dynasm!(self.ops ; .arch x64 ; mov WORD [Rq(b) + Rq(i) + o], Rw(s)),
            Width::B32 => dynasm!(self.ops ; .arch x64 ; mov DWORD [Rq(b) + Rq(i) + o], Rd(s)),
            Width::B64 => dynasm!(self.ops ; .arch x64 ; mov QWORD [Rq(b) + Rq(i) + o], Rq(s)),
        }
    }

    /// Store a 32-bit immediate to memory.
    pub fn emit_store_imm32(&mut self, m: Mem, imm: u32) {
        let (b, o) = (m.base.n(), m.disp);
        dynasm!(self.ops ; .arch x64 ; mov DWORD [Rq(b) + o], imm as i32);
    }

    /// `dst = &[base + index * scale]` (32-bit result; scale 1, 2, 4 or 8).
    pub fn emit_lea_scaled(&mut self, dst: Reg, base: Reg, index: Reg, scale: u8) {
        let (d, b, i) = (dst.n(), base.n(), index.n());
        match scale {
            2 => dynasm!(self.ops ; .arch x64 ; lea Rd(d), [Rq(b) + Rq(i) * 2]),
            4 => dynasm!(self.ops ; .arch x64 ; lea Rd(d), [Rq(b) + Rq(i) * 4]),
            8 => dynasm!(self.ops ; .arch x64 ; lea Rd(d), [Rq(b) + Rq(i) * 8]),
            _ => dynasm!(self.ops ; .arch x64 ; lea Rd(d), [Rq(b) + Rq(i)]),
        }
    }

    // ----- arithmetic -----

    /// `dst = dst OP src` (32-bit; `Cmp`/`Test` only set flags).
    pub fn emit_alu32(&mut self, op: Alu, dst: Reg, src: Reg) {
        let (d, s) = (dst.n(), src.n());
        match op {
            Alu::Add => dynasm!(self.ops ; .arch x64 ; add Rd(d), Rd(s)),
            Alu::Sub => dynasm!(self.ops ; .arch x64 ; sub Rd(d), Rd(s)),
            Alu::And => dynasm!(self.ops ; .arch x64 ; and Rd(d), Rd(s)),
            Alu::Or => dynasm!(self.ops ; .arch x64 ; or Rd(d), Rd(s)),
            Alu::Xor => dynasm!(self.ops ; .arch x64 ; xor Rd(d), Rd(s)),
            Alu::Cmp => dynasm!(self.ops ; .arch x64 ; cmp Rd(d), Rd(s)),
            Alu::Test => dynasm!(self.ops ; .arch x64 ; test Rd(d), Rd(s)),
        }
    }

    /// 64-bit `dst = dst OR src`.
    pub fn emit_or64(&mut self, dst: Reg, src: Reg) {
        dynasm!(self.ops ; .arch x64 ; or Rq(dst.n()), Rq(src.n()));
    }

    /// `dst = dst OP imm` (32-bit immediate; `Cmp`/`Test` only set flags).
    pub fn emit_alu32_imm32(&mut self, op: Alu, dst: Reg, imm: u32) {
        let (d, i) = (dst.n(), imm as i32);
        match op {
            Alu::Add => dynasm!(self.ops ; .arch x64 ; add Rd(d), i),
            Alu::Sub => dynasm!(self.ops ; .arch x64 ; sub Rd(d), i),
            Alu::And => dynasm!(self.ops ; .arch x64 ; and Rd(d), i),
            Alu::Or => dynasm!(self.ops ; .arch x64 ; or Rd(d), i),
            Alu::Xor => dynasm!(self.ops ; .arch x64 ; xor Rd(d), i),
            Alu::Cmp => dynasm!(self.ops ; .arch x64 ; cmp Rd(d), i),
            Alu::Test => dynasm!(self.ops ; .arch x64 ; test Rd(d), i),
        }
    }

    /// `dst = dst OP [m]` (32-bit memory operand; `Cmp`/`Test` only set flags).
    pub fn emit_alu32_mem(&mut self, op: Alu, dst: Reg, m: Mem) {
        let (d, b, o) = (dst.n(), m.base.n(), m.disp);
        match op {
            Alu::Add => dynasm!(self.ops ; .arch x64 ; add Rd(d), DWORD [Rq(b) + o]),
            Alu::Sub => dynasm!(self.ops ; .arch x64 ; sub Rd(d), DWORD [Rq(b) + o]),
            Alu::And => dynasm!(self.ops ; .arch x64 ; and Rd(d), DWORD [Rq(b) + o]),
            Alu::Or => dynasm!(self.ops ; .arch x64 ; or Rd(d), DWORD [Rq(b) + o]),
            Alu::Xor => dynasm!(self.ops ; .arch x64 ; xor Rd(d), DWORD [Rq(b) + o]),
            Alu::Cmp => dynasm!(self.ops ; .arch x64 ; cmp Rd(d), DWORD [Rq(b) + o]),
            Alu::Test => dynasm!(self.ops ; .arch x64 ; test DWORD [Rq(b) + o], Rd(d)),
        }
    }

    /// `a - [base + index + disp]` sets the flags (32-bit).
    pub fn emit_cmp32_indexed(&mut self, a: Reg, base: Reg, index: Reg, disp: i32) {
        let (r, b, i, o) = (a.n(), base.n(), index.n(), disp);
        dynasm!(self.ops ; .arch x64 ; cmp Rd(r), DWORD [Rq(b) + Rq(i) + o]);
    }

    /// `dst = base + disp` (32-bit `lea`: the sum wraps like guest arithmetic).
    pub fn emit_lea32(&mut self, dst: Reg, base: Reg, disp: i32) {
        let (d, b) = (dst.n(), base.n());
        dynasm!(self.ops ; .arch x64 ; lea Rd(d), [Rq(b) + disp]);
    }

    /// `[m] = [m] OP imm` on a 64-bit memory operand (sign-extended 32-bit immediate).
    pub fn emit_alu64_mem_imm(&mut self, op: Alu, m: Mem, imm: i32) {
        let (b, o) = (m.base.n(), m.disp);
        match op {
            Alu::Add => dynasm!(self.ops ; .arch x64 ; add QWORD [Rq(b) + o], imm),
            Alu::Sub => dynasm!(self.ops ; .arch x64 ; sub QWORD [Rq(b) + o], imm),
            Alu::And => dynasm!(self.ops ; .arch x64 ; and QWORD [Rq(b) + o], imm),
            Alu::Or => dynasm!(self.ops ; .arch x64 ; or QWORD [Rq(b) + o], imm),
            Alu::Xor => dynasm!(self.ops ; .arch x64 ; xor QWORD [Rq(b) + o], imm),
            Alu::Cmp => dynasm!(self.ops ; .arch x64 ; cmp QWORD [Rq(b) + o], imm),
            Alu::Test => dynasm!(self.ops ; .arch x64 ; test QWORD [Rq(b) + o], imm),
        }
    }

    /// `[m] = [m] OP imm` on a 32-bit memory operand.
    pub fn emit_alu32_mem_imm(&mut self, op: Alu, m: Mem, imm: u32) {
        let (b, o, i) = (m.base.n(), m.disp, imm as i32);
        match op {
            Alu::Add => dynasm!(self.ops ; .arch x64 ; add DWORD [Rq(b) + o], i),
            Alu::Sub => dynasm!(self.ops ; .arch x64 ; sub DWORD [Rq(b) + o], i),
            Alu::And => dynasm!(self.ops ; .arch x64 ; and DWORD [Rq(b) + o], i),
            Alu::Or => dynasm!(self.ops ; .arch x64 ; or DWORD [Rq(b) + o], i),
            Alu::Xor => dynasm!(self.ops ; .arch x64 ; xor DWORD [Rq(b) + o], i),
            Alu::Cmp => dynasm!(self.ops ; .arch x64 ; cmp DWORD [Rq(b) + o], i),
            Alu::Test => dynasm!(self.ops ; .arch x64 ; test DWORD [Rq(b) + o], i),
        }
    }

    /// Compare a 64-bit register with a 64-bit memory operand (`reg - [m]` sets the flags).
    pub fn emit_cmp64_mem(&mut self, a: Reg, m: Mem) {
        let (r, b, o) = (a.n(), m.base.n(), m.disp);
        dynasm!(self.ops ; .arch x64 ; cmp Rq(r), QWORD [Rq(b) + o]);
    }

    /// Compare a 64-bit register with a sign-extended 32-bit immediate.
    pub fn emit_cmp64_imm(&mut self, a: Reg, imm: i32) {
        dynasm!(self.ops ; .arch x64 ; cmp Rq(a.n()), imm);
    }

    /// `a - b` sets the flags (32-bit compare).
    pub fn emit_cmp32(&mut self, a: Reg, b: Reg) {
        self.emit_alu32(Alu::Cmp, a, b);
    }

    /// `dst = dst + imm` on 64 bits (stack adjustments).
    pub fn emit_add64_imm(&mut self, dst: Reg, imm: i32) {
        dynasm!(self.ops ; .arch x64 ; add Rq(dst.n()), imm);
    }

    /// 64-bit `dst = dst + src` (host addresses).
    pub fn emit_add64(&mut self, dst: Reg, src: Reg) {
        dynasm!(self.ops ; .arch x64 ; add Rq(dst.n()), Rq(src.n()));
    }

    /// Shift or rotate `dst` (32-bit) by `cl`, masked to 5 bits by the hardware.
    pub fn emit_shift32_cl(&mut self, op: Shift, dst: Reg) {
        let d = dst.n();
        match op {
            Shift::Shl => dynasm!(self.ops ; .arch x64 ; shl Rd(d), cl),
            Shift::Shr => dynasm!(self.ops ; .arch x64 ; shr Rd(d), cl),
            Shift::Sar => dynasm!(self.ops ; .arch x64 ; sar Rd(d), cl),
            Shift::Rol => dynasm!(self.ops ; .arch x64 ; rol Rd(d), cl),
            Shift::Ror => dynasm!(self.ops ; .arch x64 ; ror Rd(d), cl),
        }
    }

    /// Shift or rotate `dst` (32-bit) by a constant (taken modulo 32).
    pub fn emit_shift32_imm(&mut self, op: Shift, dst: Reg, n: u8) {
        let (d, n) = (dst.n(), (n & 31) as i8);
        if n == 0 {
            return;
        }
        match op {
            Shift::Shl => dynasm!(self.ops ; .arch x64 ; shl Rd(d), n),
            Shift::Shr => dynasm!(self.ops ; .arch x64 ; shr Rd(d), n),
            Shift::Sar => dynasm!(self.ops ; .arch x64 ; sar Rd(d), n),
            Shift::Rol => dynasm!(self.ops ; .arch x64 ; rol Rd(d), n),
            Shift::Ror => dynasm!(self.ops ; .arch x64 ; ror Rd(d), n),
        }
    }

    /// Shift a 64-bit register right by a constant (arithmetic when `signed`).
    pub fn emit_shr64_imm(&mut self, dst: Reg, n: u8, signed: bool) {
        let (d, n) = (dst.n(), n as i8);
        if signed {
            dynasm!(self.ops ; .arch x64 ; sar Rq(d), n);
        } else {
            dynasm!(self.ops ; .arch x64 ; shr Rq(d), n);
        }
    }

    /// A one-register operation (32-bit).
    pub fn emit_unary32(&mut self, op: Unary, dst: Reg) {
        let d = dst.n();
        match op {
            Unary::Not => dynasm!(self.ops ; .arch x64 ; not Rd(d)),
            Unary::Neg => dynasm!(self.ops ; .arch x64 ; neg Rd(d)),
            Unary::Bswap => dynasm!(self.ops ; .arch x64 ; bswap Rd(d)),
            Unary::Sext8 => dynasm!(self.ops ; .arch x64 ; movsx Rd(d), Rb(d)),
            Unary::Sext16 => dynasm!(self.ops ; .arch x64 ; movsx Rd(d), Rw(d)),
            Unary::Zext8 => dynasm!(self.ops ; .arch x64 ; movzx Rd(d), Rb(d)),
            Unary::Zext16 => dynasm!(self.ops ; .arch x64 ; movzx Rd(d), Rw(d)),
        }
    }

    /// `dst = src` sign-extended from 32 to 64 bits.
    pub fn emit_sext64(&mut self, dst: Reg, src: Reg) {
        dynasm!(self.ops ; .arch x64 ; movsxd Rq(dst.n()), Rd(src.n()));
    }

    /// 32-bit `dst = dst * src` (low word).
    pub fn emit_imul32(&mut self, dst: Reg, src: Reg) {
        dynasm!(self.ops ; .arch x64 ; imul Rd(dst.n()), Rd(src.n()));
    }

    /// 32-bit `dst = src * imm` (low word).
    pub fn emit_imul32_imm(&mut self, dst: Reg, src: Reg, imm: u32) {
        dynasm!(self.ops ; .arch x64 ; imul Rd(dst.n()), Rd(src.n()), imm as i32);
    }

    /// 64-bit `dst = dst * src` (low 64 bits).
    pub fn emit_imul64(&mut self, dst: Reg, src: Reg) {
        dynasm!(self.ops ; .arch x64 ; imul Rq(dst.n()), Rq(src.n()));
    }

    /// `edx:eax / src`: quotient in eax, remainder in edx. Signed: `cdq; idiv`; unsigned:
    /// `xor edx, edx; div`. The caller rules out division by zero and signed overflow.
    pub fn emit_div32(&mut self, src: Reg, signed: bool) {
        let s = src.n();
        if signed {
            dynasm!(self.ops ; .arch x64 ; cdq ; idiv Rd(s));
        } else {
            dynasm!(self.ops ; .arch x64 ; xor edx, edx ; div Rd(s));
        }
    }

    /// Bit scan: `dst = index of the highest (reverse) or lowest set bit of src`; ZF set if
    /// `src` is zero (then `dst` is unspecified).
    pub fn emit_bitscan(&mut self, dst: Reg, src: Reg, reverse: bool) {
        let (d, s) = (dst.n(), src.n());
        if reverse {
            dynasm!(self.ops ; .arch x64 ; bsr Rd(d), Rd(s));
        } else {
            dynasm!(self.ops ; .arch x64 ; bsf Rd(d), Rd(s));
        }
    }

    /// `dst = popcount(src)` (needs the POPCNT feature; see [`has_popcnt`]).
    pub fn emit_popcnt(&mut self, dst: Reg, src: Reg) {
        dynasm!(self.ops ; .arch x64 ; popcnt Rd(dst.n()), Rd(src.n()));
    }

    /// Bit operation on bit `bit mod 32` of `dst` (`Test` sets the carry flag only).
    pub fn emit_bitop(&mut self, op: BitOp, dst: Reg, bit: Reg) {
        let (d, b) = (dst.n(), bit.n());
        match op {
            BitOp::Test => dynasm!(self.ops ; .arch x64 ; bt Rd(d), Rd(b)),
            BitOp::Reset => dynasm!(self.ops ; .arch x64 ; btr Rd(d), Rd(b)),
            BitOp::Set => dynasm!(self.ops ; .arch x64 ; bts Rd(d), Rd(b)),
            BitOp::Complement => dynasm!(self.ops ; .arch x64 ; btc Rd(d), Rd(b)),
        }
    }

    /// `dst = cond ? 1 : 0` from the flags (32-bit result).
    pub fn emit_setcc(&mut self, cond: Cond, dst: Reg) {
        let d = dst.n();
        match cond {
            Cond::Eq => dynasm!(self.ops ; .arch x64 ; sete Rb(d)),
            Cond::Ne => dynasm!(self.ops ; .arch x64 ; setne Rb(d)),
            Cond::Lt => dynasm!(self.ops ; .arch x64 ; setl Rb(d)),
            Cond::Ge => dynasm!(self.ops ; .arch x64 ; setge Rb(d)),
            Cond::Gt => dynasm!(self.ops ; .arch x64 ; setg Rb(d)),
            Cond::Le => dynasm!(self.ops ; .arch x64 ; setle Rb(d)),
            Cond::Ltu => dynasm!(self.ops ; .arch x64 ; setb Rb(d)),
            Cond::Geu => dynasm!(self.ops ; .arch x64 ; setae Rb(d)),
            Cond::Gtu => dynasm!(self.ops ; .arch x64 ; seta Rb(d)),
            Cond::Leu => dynasm!(self.ops ; .arch x64 ; setbe Rb(d)),
        }
        dynasm!(self.ops ; .arch x64 ; movzx Rd(d), Rb(d));
    }

    /// `if cond { dst = src }` (32-bit).
    pub fn emit_cmov(&mut self, cond: Cond, dst: Reg, src: Reg) {
        let (d, s) = (dst.n(), src.n());
        match cond {
            Cond::Eq => dynasm!(self.ops ; .arch x64 ; cmove Rd(d), Rd(s)),
            Cond::Ne => dynasm!(self.ops ; .arch x64 ; cmovne Rd(d), Rd(s)),
            Cond::Lt => dynasm!(self.ops ; .arch x64 ; cmovl Rd(d), Rd(s)),
            Cond::Ge => dynasm!(self.ops ; .arch x64 ; cmovge Rd(d), Rd(s)),
            Cond::Gt => dynasm!(self.ops ; .arch x64 ; cmovg Rd(d), Rd(s)),
            Cond::Le => dynasm!(self.ops ; .arch x64 ; cmovle Rd(d), Rd(s)),
            Cond::Ltu => dynasm!(self.ops ; .arch x64 ; cmovb Rd(d), Rd(s)),
            Cond::Geu => dynasm!(self.ops ; .arch x64 ; cmovae Rd(d), Rd(s)),
            Cond::Gtu => dynasm!(self.ops ; .arch x64 ; cmova Rd(d), Rd(s)),
            Cond::Leu => dynasm!(self.ops ; .arch x64 ; cmovbe Rd(d), Rd(s)),
        }
    }

    // ----- control flow -----

    /// Jump to `l` if `cond`.
    pub fn emit_jcc(&mut self, cond: Cond, l: Label) {
        match cond {
            Cond::Eq => dynasm!(self.ops ; .arch x64 ; je =>l),
            Cond::Ne => dynasm!(self.ops ; .arch x64 ; jne =>l),
            Cond::Lt => dynasm!(self.ops ; .arch x64 ; jl =>l),
            Cond::Ge => dynasm!(self.ops ; .arch x64 ; jge =>l),
            Cond::Gt => dynasm!(self.ops ; .arch x64 ; jg =>l),
            Cond::Le => dynasm!(self.ops ; .arch x64 ; jle =>l),
            Cond::Ltu => dynasm!(self.ops ; .arch x64 ; jb =>l),
            Cond::Geu => dynasm!(self.ops ; .arch x64 ; jae =>l),
            Cond::Gtu => dynasm!(self.ops ; .arch x64 ; ja =>l),
            Cond::Leu => dynasm!(self.ops ; .arch x64 ; jbe =>l),
        }
    }

    /// Jump to host address `target` if `cond` (must be within ±2 GiB of the code).
    pub fn emit_jcc_abs(&mut self, cond: Cond, target: usize) {
        match cond {
            Cond::Eq => dynasm!(self.ops ; .arch x64 ; je extern target),
            Cond::Ne => dynasm!(self.ops ; .arch x64 ; jne extern target),
            Cond::Lt => dynasm!(self.ops ; .arch x64 ; jl extern target),
            Cond::Ge => dynasm!(self.ops ; .arch x64 ; jge extern target),
            Cond::Gt => dynasm!(self.ops ; .arch x64 ; jg extern target),
            Cond::Le => dynasm!(self.ops ; .arch x64 ; jle extern target),
            Cond::Ltu => dynasm!(self.ops ; .arch x64 ; jb extern target),
            Cond::Geu => dynasm!(self.ops ; .arch x64 ; jae extern target),
            Cond::Gtu => dynasm!(self.ops ; .arch x64 ; ja extern target),
            Cond::Leu => dynasm!(self.ops ; .arch x64 ; jbe extern target),
        }
    }

    /// Jump to `l`.
    pub fn emit_jmp(&mut self, l: Label) {
        dynasm!(self.ops ; .arch x64 ; jmp =>l);
    }

    /// Jump to host address `target` (within ±2 GiB of the code).
    pub fn emit_jmp_abs(&mut self, target: usize) {
        dynasm!(self.ops ; .arch x64 ; jmp extern target);
    }

    /// Jump to the address in `r`.
    pub fn emit_jmp_reg(&mut self, r: Reg) {
        dynasm!(self.ops ; .arch x64 ; jmp Rq(r.n()));
    }

    /// A full memory barrier (`mfence`).
    pub fn emit_mfence(&mut self) {
        dynasm!(self.ops ; .arch x64 ; mfence);
    }

    /// Call the function at host address `f` (anywhere in the address space; clobbers rax).
    pub fn emit_call(&mut self, f: usize) {
        dynasm!(self.ops ; .arch x64 ; mov rax, QWORD f as i64 ; call rax);
    }

    /// Call the function whose address is in `r`.
    pub fn emit_call_reg(&mut self, r: Reg) {
        dynasm!(self.ops ; .arch x64 ; call Rq(r.n()));
    }

    /// A 5-byte `jmp rel32` to the instruction right after it, at a returned offset; it can
    /// later be redirected with [`patch_jmp`] (block chaining).
    pub fn patchable_jmp(&mut self) -> usize {
        let at = self.len();
        dynasm!(self.ops ; .arch x64 ; .bytes [0xe9u8, 0, 0, 0, 0]);
        at
    }

    /// Save the callee-saved registers (function prologue of the entry stub).
    pub fn emit_push_callee_saved(&mut self) {
        dynasm!(self.ops ; .arch x64
            ; push rbx ; push rbp ; push r12 ; push r13 ; push r14 ; push r15
        );
    }

    /// Restore what [`Emitter::emit_push_callee_saved`] saved and return.
    pub fn emit_pop_callee_saved_ret(&mut self) {
        dynasm!(self.ops ; .arch x64
            ; pop r15 ; pop r14 ; pop r13 ; pop r12 ; pop rbp ; pop rbx ; ret
        );
    }
}

/// Floating-point precision of an SSE operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prec {
    Single,
    Double,
}

/// Two-operand SSE arithmetic (`xmm = xmm OP [m]`; `Sqrt` ignores the old xmm value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FpArith {
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
}

/// Fused multiply-add forms: `xmm0 = ±(xmm0 * xmm1) ± xmm2`, rounded once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fma {
    /// a*b + c
    MulAdd,
    /// a*b - c
    MulSub,
    /// -(a*b) + c
    NegMulAdd,
    /// -(a*b) - c
    NegMulSub,
}

impl Emitter {
    /// `xmm{x} = [m]` (the low single or double; 64-bit moves for doubles).
    pub fn emit_fp_load(&mut self, p: Prec, x: u8, m: Mem) {
        let (b, o) = (m.base.n(), m.disp);
        match p {
            Prec::Single => dynasm!(self.ops ; .arch x64 ; movss Rx(x), DWORD [Rq(b) + o]),
            Prec::Double => dynasm!(self.ops ; .arch x64 ; movsd Rx(x), QWORD [Rq(b) + o]),
        }
    }

    /// `[m] = xmm{x}` (its low single or double).
    pub fn emit_fp_store(&mut self, p: Prec, m: Mem, x: u8) {
        let (b, o) = (m.base.n(), m.disp);
        match p {
            Prec::Single => dynasm!(self.ops ; .arch x64 ; movss DWORD [Rq(b) + o], Rx(x)),
            Prec::Double => dynasm!(self.ops ; .arch x64 ; movsd QWORD [Rq(b) + o], Rx(x)),
        }
    }

    /// `xmm{x} = xmm{x} OP [m]` (for `Sqrt`: `sqrt([m])`), rounded by MXCSR.
    pub fn emit_fp_arith(&mut self, op: FpArith, p: Prec, x: u8, m: Mem) {
        let (b, o) = (m.base.n(), m.disp);
        match (op, p) {
            (FpArith::Add, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; addss Rx(x), DWORD [Rq(b) + o])
            }
            (FpArith::Add, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; addsd Rx(x), QWORD [Rq(b) + o])
            }
            (FpArith::Sub, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; subss Rx(x), DWORD [Rq(b) + o])
            }
            (FpArith::Sub, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; subsd Rx(x), QWORD [Rq(b) + o])
            }
            (FpArith::Mul, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; mulss Rx(x), DWORD [Rq(b) + o])
            }
            (FpArith::Mul, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; mulsd Rx(x), QWORD [Rq(b) + o])
            }
            (FpArith::Div, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; divss Rx(x), DWORD [Rq(b) + o])
            }
            (FpArith::Div, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; divsd Rx(x), QWORD [Rq(b) + o])
            }
            (FpArith::Sqrt, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; sqrtss Rx(x), DWORD [Rq(b) + o])
            }
            (FpArith::Sqrt, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; sqrtsd Rx(x), QWORD [Rq(b) + o])
            }
        }
    }

    /// `xmm0 = ±(xmm0 * xmm1) ± xmm2` (FMA3, one rounding).
    pub fn emit_fma(&mut self, f: Fma, p: Prec) {
        match (f, p) {
            (Fma::MulAdd, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; vfmadd213ss xmm0, xmm1, xmm2)
            }
            (Fma::MulAdd, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; vfmadd213sd xmm0, xmm1, xmm2)
            }
            (Fma::MulSub, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; vfmsub213ss xmm0, xmm1, xmm2)
            }
            (Fma::MulSub, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; vfmsub213sd xmm0, xmm1, xmm2)
            }
            (Fma::NegMulAdd, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; vfnmadd213ss xmm0, xmm1, xmm2)
            }
            (Fma::NegMulAdd, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; vfnmadd213sd xmm0, xmm1, xmm2)
            }
            (Fma::NegMulSub, Prec::Single) => {
                dynasm!(self.ops ; .arch x64 ; vfnmsub213ss xmm0, xmm1, xmm2)
            }
            (Fma::NegMulSub, Prec::Double) => {
                dynasm!(self.ops ; .arch x64 ; vfnmsub213sd xmm0, xmm1, xmm2)
            }
        }
    }

    /// Compare xmm{a} with `[m]`, setting ZF/PF/CF like an unsigned compare (PF = unordered):
    /// `quiet` (ucomis) signals invalid only for signalling NaNs, otherwise (comis) for any NaN.
    pub fn emit_fp_compare(&mut self, p: Prec, quiet: bool, a: u8, m: Mem) {
        let (b, o) = (m.base.n(), m.disp);
        match (p, quiet) {
            (Prec::Single, true) => {
                dynasm!(self.ops ; .arch x64 ; ucomiss Rx(a), DWORD [Rq(b) + o])
            }
            (Prec::Double, true) => {
                dynasm!(self.ops ; .arch x64 ; ucomisd Rx(a), QWORD [Rq(b) + o])
            }
            (Prec::Single, false) => {
                dynasm!(self.ops ; .arch x64 ; comiss Rx(a), DWORD [Rq(b) + o])
            }
            (Prec::Double, false) => {
                dynasm!(self.ops ; .arch x64 ; comisd Rx(a), QWORD [Rq(b) + o])
            }
        }
    }

    /// Jump to `l` if the last compare was unordered (a NaN: parity set).
    pub fn emit_jump_if_unordered(&mut self, l: Label) {
        dynasm!(self.ops ; .arch x64 ; jp =>l);
    }

    /// Whether xmm{x} holds a NaN, into the flags (PF), without signalling anything for the
    /// quiet NaNs arithmetic produces.
    pub fn emit_fp_test_nan(&mut self, p: Prec, x: u8) {
        match p {
            Prec::Single => dynasm!(self.ops ; .arch x64 ; ucomiss Rx(x), Rx(x)),
            Prec::Double => dynasm!(self.ops ; .arch x64 ; ucomisd Rx(x), Rx(x)),
        }
    }

    /// `xmm{x} = (double) dst32` (signed 32-bit integer in `src`; exact).
    pub fn emit_cvt_i32_to_f64(&mut self, x: u8, src: Reg) {
        dynasm!(self.ops ; .arch x64 ; cvtsi2sd Rx(x), Rd(src.n()));
    }

    /// `dst = (i32) xmm{x}` as a double, truncating (`truncate`) or rounded by MXCSR; out of
    /// range and NaN give 0x8000_0000.
    pub fn emit_cvt_f64_to_i32(&mut self, dst: Reg, x: u8, truncate: bool) {
        if truncate {
            dynasm!(self.ops ; .arch x64 ; cvttsd2si Rd(dst.n()), Rx(x));
        } else {
            dynasm!(self.ops ; .arch x64 ; cvtsd2si Rd(dst.n()), Rx(x));
        }
    }

    /// `cmp byte [m], imm`.
    pub fn emit_cmp_byte_mem_imm(&mut self, m: Mem, imm: i8) {
        let (b, o) = (m.base.n(), m.disp);
        dynasm!(self.ops ; .arch x64 ; cmp BYTE [Rq(b) + o], imm);
    }
}

/// Whether the host has FMA3 (fused multiply-add on SSE registers).
pub fn has_fma() -> bool {
    std::is_x86_feature_detected!("fma")
}

/// Redirect the patchable jump at host address `site` (made by [`Emitter::patchable_jmp`]) to
/// host address `target`. `None` if the distance does not fit a rel32.
pub fn jmp_rel32(site: usize, target: usize) -> Option<[u8; PATCHABLE_JMP_LEN]> {
    let rel = (target as i64).wrapping_sub(site as i64 + PATCHABLE_JMP_LEN as i64);
    let rel = i32::try_from(rel).ok()?;
    let b = rel.to_le_bytes();
    Some([0xe9, b[0], b[1], b[2], b[3]])
}

/// Write a `jmp rel32` at `site` so it goes to `target`.
///
/// # Safety
///
/// `site` is the address of a patchable jump (5 writable bytes of code) that no thread is
/// executing concurrently, and `target` is the start of valid code.
pub unsafe fn patch_jmp(site: usize, target: usize) -> bool {
    match jmp_rel32(site, target) {
        Some(bytes) => {
            // SAFETY: per this function's contract, the 5 bytes at `site` are writable code.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), site as *mut u8, bytes.len()) };
            true
        }
        None => false,
    }
}

/// Whether the host has the POPCNT instruction.
pub fn has_popcnt() -> bool {
    std::is_x86_feature_detected!("popcnt")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::t1::arena::CodeArena;

    type BinFn = unsafe extern "sysv64" fn(u32, u32) -> u32;

    /// Assemble `body` (arguments in edi, esi; result in eax) into a function and call it.
    fn run(body: impl Fn(&mut Emitter), a: u32, b: u32) -> u32 {
        let mut arena = CodeArena::new(4096).expect("map code memory");
        let mut e = Emitter::new(arena.next_addr());
        body(&mut e);
        dynasm!(e.ops ; .arch x64 ; ret);
        let code = e.finish().expect("assemble");
        let at = arena.push(&code).expect("room");
        // SAFETY: `at` holds the function just assembled, with the `BinFn` signature; the
        // arena outlives the call.
        unsafe { std::mem::transmute::<usize, BinFn>(at)(a, b) }
    }

    #[test]
    fn alu_ops_compute_32_bit_results() {
        let alu = |op: Alu, a: u32, b: u32| {
            run(
                |e| {
                    e.emit_mov(Reg::Rax, Reg::Rdi);
                    e.emit_alu32(op, Reg::Rax, Reg::Rsi);
                },
                a,
                b,
            )
        };
        assert_eq!(alu(Alu::Add, 0xffff_ffff, 2), 1);
        assert_eq!(alu(Alu::Sub, 1, 2), 0xffff_ffff);
        assert_eq!(alu(Alu::And, 0xf0f0, 0xff00), 0xf000);
        assert_eq!(alu(Alu::Or, 0xf0f0, 0x0f00), 0xfff0);
        assert_eq!(alu(Alu::Xor, 0xffff, 0x0ff0), 0xf00f);
    }

    #[test]
    fn immediates_and_high_registers_encode() {
        // r8..r15 need REX prefixes: run a value through each of them.
        for r in [Reg::R8, Reg::R9, Reg::R10, Reg::R11] {
            let v = run(
                |e| {
                    e.emit_load_imm(r, 0x8000_0001);
                    e.emit_alu32_imm32(Alu::Add, r, 0xffff_ffff);
                    e.emit_mov(Reg::Rax, r);
                },
                0,
                0,
            );
            assert_eq!(v, 0x8000_0000, "{r:?}");
        }
    }

    #[test]
    fn shifts_mask_the_count_like_risc_v() {
        let shift = |op: Shift, a: u32, n: u32| {
            run(
                |e| {
                    e.emit_mov(Reg::Rax, Reg::Rdi);
                    e.emit_mov(Reg::Rcx, Reg::Rsi);
                    e.emit_shift32_cl(op, Reg::Rax);
                },
                a,
                n,
            )
        };
        assert_eq!(shift(Shift::Shl, 1, 33), 2);
        assert_eq!(shift(Shift::Shr, 0x8000_0000, 31), 1);
        assert_eq!(shift(Shift::Sar, 0x8000_0000, 31), 0xffff_ffff);
        assert_eq!(shift(Shift::Ror, 1, 1), 0x8000_0000);
        assert_eq!(shift(Shift::Rol, 0x8000_0000, 1), 1);
    }

    #[test]
    fn setcc_and_cmov_follow_the_compare() {
        let set = |c: Cond, a: u32, b: u32| {
            run(
                |e| {
                    e.emit_cmp32(Reg::Rdi, Reg::Rsi);
                    e.emit_setcc(c, Reg::Rax);
                },
                a,
                b,
            )
        };
        assert_eq!(set(Cond::Lt, 0xffff_ffff, 0), 1);
        assert_eq!(set(Cond::Ltu, 0xffff_ffff, 0), 0);
        assert_eq!(set(Cond::Geu, 0xffff_ffff, 0), 1);
        assert_eq!(set(Cond::Eq, 5, 5), 1);
        let max = run(
            |e| {
                e.emit_mov(Reg::Rax, Reg::Rdi);
                e.emit_cmp32(Reg::Rax, Reg::Rsi);
                e.emit_cmov(Cond::Lt, Reg::Rax, Reg::Rsi);
            },
            (-5i32) as u32,
            3,
        );
        assert_eq!(max, 3);
    }

    #[test]
    fn labels_and_conditional_jumps() {
        // eax = (a == b) ? 7 : 9
        let pick = |a, b| {
            run(
                |e| {
                    let equal = e.label();
                    let done = e.label();
                    e.emit_cmp32(Reg::Rdi, Reg::Rsi);
                    e.emit_jcc(Cond::Eq, equal);
                    e.emit_load_imm(Reg::Rax, 9);
                    e.emit_jmp(done);
                    e.bind(equal);
                    e.emit_load_imm(Reg::Rax, 7);
                    e.bind(done);
                },
                a,
                b,
            )
        };
        assert_eq!(pick(1, 1), 7);
        assert_eq!(pick(1, 2), 9);
    }

    #[test]
    fn patched_jump_goes_to_its_new_target() {
        let mut arena = CodeArena::new(4096).expect("map code memory");
        let base = arena.next_addr();
        let mut e = Emitter::new(base);
        // site: jmp +0 (falls through to "return 1"); "return 2" at `other`.
        e.emit_load_imm(Reg::Rax, 1);
        let site = e.patchable_jmp();
        dynasm!(e.ops ; .arch x64 ; ret);
        let other = e.len();
        e.emit_load_imm(Reg::Rax, 2);
        dynasm!(e.ops ; .arch x64 ; ret);
        let code = e.finish().expect("assemble");
        let at = arena.push(&code).expect("room");
        type Nullary = unsafe extern "sysv64" fn() -> u32;
        // SAFETY: `at` holds the function just assembled; the arena outlives the calls.
        let f = unsafe { std::mem::transmute::<usize, Nullary>(at) };
        // SAFETY: as above.
        assert_eq!(unsafe { f() }, 1);
        // SAFETY: `site` is the patchable jump in that code; nothing runs it meanwhile.
        assert!(unsafe { patch_jmp(at + site, at + other) });
        // SAFETY: as above.
        assert_eq!(unsafe { f() }, 2);
        // SAFETY: as above: back to the fall-through.
        assert!(unsafe { patch_jmp(at + site, at + site + PATCHABLE_JMP_LEN) });
        // SAFETY: as above.
        assert_eq!(unsafe { f() }, 1);
    }

    #[test]
    fn rel32_refuses_distances_beyond_2_gib() {
        assert!(jmp_rel32(0x1000, 0x1000 + (3usize << 30)).is_none());
        assert_eq!(jmp_rel32(0x1000, 0x1005), Some([0xe9, 0, 0, 0, 0]));
    }
}
