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

    // ----- raw encodings -----
    //
    // `dynasm!` cannot know a dynamic register's number or a run-time displacement's size, so
    // it encodes `[Rq(b) + disp]` with a SIB byte, a 32-bit displacement and a REX prefix every
    // time (8 bytes for `mov r32, [rbx + 0x28]`, against 3). Blocks are mostly such accesses
    // to the hart, so the forms below are encoded here at their shortest.

    /// A REX prefix for `reg` (ModRM.reg), `index` (SIB.index) and `base` (ModRM.rm or
    /// SIB.base), with W for 64-bit operands; left out when it would be 0x40, unless a byte
    /// operand names spl, bpl, sil or dil (`byte_reg`), which need it.
    fn rex(&mut self, w: bool, reg: u8, index: u8, base: u8, byte_reg: bool) {
        let rex =
            0x40 | (w as u8) << 3 | (reg >> 3 & 1) << 2 | (index >> 3 & 1) << 1 | base >> 3 & 1;
        if rex != 0x40 || (byte_reg && (4..8).contains(&reg)) {
            self.ops.push(rex);
        }
    }

    /// ModRM (and SIB) and displacement for `[base + index + disp]` with `reg` in ModRM.reg:
    /// no displacement when it is 0 (except with base rbp or r13, which need one), else 8
    /// bits if it fits, else 32.
    fn mem_operand(&mut self, reg: u8, base: u8, index: Option<u8>, disp: i32) {
        let (r, b) = (reg & 7, base & 7);
        let md: u8 = if disp == 0 && b != 5 {
            0
        } else if disp as i8 as i32 == disp {
            1
        } else {
            2
        };
        match index {
            Some(i) => {
                debug_assert!(i != 4, "rsp cannot be an index");
                self.ops.push(md << 6 | r << 3 | 4);
                self.ops.push((i & 7) << 3 | b);
            }
            None if b == 4 => {
                self.ops.push(md << 6 | r << 3 | 4);
                self.ops.push(0x24);
            }
            None => self.ops.push(md << 6 | r << 3 | b),
        }
        match md {
            1 => self.ops.push(disp as i8 as u8),
            2 => self.ops.extend(disp.to_le_bytes()),
            _ => {}
        }
    }

    /// `[0x66] [REX] opcode ModRM ...` for an instruction with a memory operand
    /// `[base + index + disp]` and `reg` (a register or an opcode extension) in ModRM.reg.
    #[allow(clippy::too_many_arguments)]
    fn op_mem(
        &mut self,
        opsize16: bool,
        w: bool,
        byte_reg: bool,
        opcode: &[u8],
        reg: u8,
        base: Reg,
        index: Option<Reg>,
        disp: i32,
    ) {
        if opsize16 {
            self.ops.push(0x66);
        }
        let i = index.map(Reg::n);
        self.rex(w, reg, i.unwrap_or(0), base.n(), byte_reg);
        self.ops.extend(opcode.iter().copied());
        self.mem_operand(reg, base.n(), i, disp);
    }

    /// `[REX] opcode ModRM` for a register-register instruction: `reg` in ModRM.reg, `rm`
    /// in ModRM.rm.
    fn op_reg(&mut self, w: bool, opcode: &[u8], reg: u8, rm: u8) {
        self.rex(w, reg, 0, rm, false);
        self.ops.extend(opcode.iter().copied());
        self.ops.push(0xc0 | (reg & 7) << 3 | rm & 7);
    }

    /// An immediate of an ALU instruction whose short form takes a sign-extended byte.
    fn alu_imm(&mut self, short: bool, imm: i32) {
        if short {
            self.ops.push(imm as i8 as u8);
        } else {
            self.ops.extend(imm.to_le_bytes());
        }
    }

    // ----- moves -----

    /// `dst = imm` (32-bit, zero-extended).
    pub fn emit_load_imm(&mut self, dst: Reg, imm: u32) {
        let d = dst.n();
        if imm == 0 {
            self.op_reg(false, &[0x31], d, d); // xor r32, r32
        } else {
            self.rex(false, 0, 0, d, false);
            self.ops.push(0xb8 + (d & 7)); // mov r32, imm32
            self.ops.extend(imm.to_le_bytes());
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
            self.op_reg(false, &[0x89], src.n(), dst.n());
        }
    }

    /// `dst = src` (64-bit).
    pub fn emit_mov64(&mut self, dst: Reg, src: Reg) {
        if dst != src {
            self.op_reg(true, &[0x89], src.n(), dst.n());
        }
    }

    /// Load from memory into `dst`: 8/16-bit values zero- or sign-extended to 32 bits, 32-bit
    /// values as they are, 64-bit values into the full register.
    pub fn emit_load(&mut self, w: Width, signed: bool, dst: Reg, m: Mem) {
        self.load_from(w, signed, dst, m.base, None, m.disp);
    }

    /// A load from `[base + index + disp]` (see [`Emitter::emit_load`]).
    fn load_from(
        &mut self,
        w: Width,
        signed: bool,
        dst: Reg,
        base: Reg,
        index: Option<Reg>,
        disp: i32,
    ) {
        let (opcode, wide): (&[u8], bool) = match (w, signed) {
            (Width::B8, false) => (&[0x0f, 0xb6], false), // movzx r32, m8
            (Width::B8, true) => (&[0x0f, 0xbe], false),  // movsx r32, m8
            (Width::B16, false) => (&[0x0f, 0xb7], false), // movzx r32, m16
            (Width::B16, true) => (&[0x0f, 0xbf], false), // movsx r32, m16
            (Width::B32, _) => (&[0x8b], false),          // mov r32, m32
            (Width::B64, _) => (&[0x8b], true),           // mov r64, m64
        };
        self.op_mem(false, wide, false, opcode, dst.n(), base, index, disp);
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
        self.load_from(w, signed, dst, base, Some(index), disp);
    }

    /// Store the low `w` bytes of `src` to memory.
    pub fn emit_store(&mut self, w: Width, m: Mem, src: Reg) {
        self.store_to(w, m.base, None, m.disp, src);
    }

    /// Store the low `w` bytes of `src` to `[base + index + disp]`.
    pub fn emit_store_indexed(&mut self, w: Width, base: Reg, index: Reg, disp: i32, src: Reg) {
        self.store_to(w, base, Some(index), disp, src);
    }

    /// A store to `[base + index + disp]` (see [`Emitter::emit_store`]).
    fn store_to(&mut self, w: Width, base: Reg, index: Option<Reg>, disp: i32, src: Reg) {
        let s = src.n();
        match w {
            Width::B8 => self.op_mem(false, false, true, &[0x88], s, base, index, disp),
            Width::B16 => self.op_mem(true, false, false, &[0x89], s, base, index, disp),
            Width::B32 => self.op_mem(false, false, false, &[0x89], s, base, index, disp),
            Width::B64 => self.op_mem(false, true, false, &[0x89], s, base, index, disp),
        }
    }

    /// Store a 32-bit immediate to memory.
    pub fn emit_store_imm32(&mut self, m: Mem, imm: u32) {
        self.op_mem(false, false, false, &[0xc7], 0, m.base, None, m.disp);
        self.ops.extend(imm.to_le_bytes());
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
        // `op r/m32, r32`: dst in ModRM.rm.
        self.op_reg(false, &[alu_opcode(op).0], src.n(), dst.n());
    }

    /// 64-bit `dst = dst OR src`.
    pub fn emit_or64(&mut self, dst: Reg, src: Reg) {
        dynasm!(self.ops ; .arch x64 ; or Rq(dst.n()), Rq(src.n()));
    }

    /// `dst = dst OP imm` (32-bit immediate; `Cmp`/`Test` only set flags).
    pub fn emit_alu32_imm32(&mut self, op: Alu, dst: Reg, imm: u32) {
        let d = dst.n();
        let imm = imm as i32;
        if op == Alu::Test {
            self.op_reg(false, &[0xf7], 0, d);
            self.ops.extend(imm.to_le_bytes());
            return;
        }
        let short = imm as i8 as i32 == imm;
        let ext = alu_opcode(op).1;
        self.op_reg(false, &[if short { 0x83 } else { 0x81 }], ext, d);
        self.alu_imm(short, imm);
    }

    /// `dst = dst OP [m]` (32-bit memory operand; `Cmp`/`Test` only set flags).
    pub fn emit_alu32_mem(&mut self, op: Alu, dst: Reg, m: Mem) {
        // `op r32, r/m32` is `op r/m32, r32` + 2; `test` has only the one direction.
        let opcode = match op {
            Alu::Test => 0x85,
            _ => alu_opcode(op).0 + 2,
        };
        self.op_mem(
            false,
            false,
            false,
            &[opcode],
            dst.n(),
            m.base,
            None,
            m.disp,
        );
    }

    /// `a - [base + index + disp]` sets the flags (32-bit).
    pub fn emit_cmp32_indexed(&mut self, a: Reg, base: Reg, index: Reg, disp: i32) {
        self.op_mem(false, false, false, &[0x3b], a.n(), base, Some(index), disp);
    }

    /// `dst = base + disp` (32-bit `lea`: the sum wraps like guest arithmetic).
    pub fn emit_lea32(&mut self, dst: Reg, base: Reg, disp: i32) {
        self.op_mem(false, false, false, &[0x8d], dst.n(), base, None, disp);
    }

    /// `[m] = [m] OP imm` on a 64-bit memory operand (sign-extended 32-bit immediate).
    pub fn emit_alu64_mem_imm(&mut self, op: Alu, m: Mem, imm: i32) {
        self.alu_mem_imm(true, op, m, imm);
    }

    /// `[m] = [m] OP imm` on a 32-bit memory operand.
    pub fn emit_alu32_mem_imm(&mut self, op: Alu, m: Mem, imm: u32) {
        self.alu_mem_imm(false, op, m, imm as i32);
    }

    fn alu_mem_imm(&mut self, wide: bool, op: Alu, m: Mem, imm: i32) {
        if op == Alu::Test {
            self.op_mem(false, wide, false, &[0xf7], 0, m.base, None, m.disp);
            self.ops.extend(imm.to_le_bytes());
            return;
        }
        let short = imm as i8 as i32 == imm;
        let opcode = if short { 0x83 } else { 0x81 };
        self.op_mem(
            false,
            wide,
            false,
            &[opcode],
            alu_opcode(op).1,
            m.base,
            None,
            m.disp,
        );
        self.alu_imm(short, imm);
    }

    /// Compare a 64-bit register with a 64-bit memory operand (`reg - [m]` sets the flags).
    pub fn emit_cmp64_mem(&mut self, a: Reg, m: Mem) {
        self.op_mem(false, true, false, &[0x3b], a.n(), m.base, None, m.disp);
    }

    /// Compare a 64-bit register with a sign-extended 32-bit immediate.
    pub fn emit_cmp64_imm(&mut self, a: Reg, imm: i32) {
        if imm == 0 {
            self.op_reg(true, &[0x85], a.n(), a.n()); // test r64, r64: the same flags
        } else {
            dynasm!(self.ops ; .arch x64 ; cmp Rq(a.n()), imm);
        }
    }

    /// `a - b` sets the flags (32-bit compare).
    pub fn emit_cmp32(&mut self, a: Reg, b: Reg) {
        self.emit_alu32(Alu::Cmp, a, b);
    }

    /// `dst = dst + imm` on 64 bits (instret counts, stack and address adjustments).
    pub fn emit_add64_imm(&mut self, dst: Reg, imm: i32) {
        // The sign-extended byte form where the value fits (instret counts, small offsets):
        // 4 bytes instead of 7.
        if let Ok(byte) = i8::try_from(imm) {
            dynasm!(self.ops ; .arch x64 ; add Rq(dst.n()), BYTE byte);
        } else {
            dynasm!(self.ops ; .arch x64 ; add Rq(dst.n()), imm);
        }
    }

    /// 64-bit `dst = dst - src`.
    pub fn emit_sub64(&mut self, dst: Reg, src: Reg) {
        self.op_reg(true, &[0x29], src.n(), dst.n());
    }

    /// 64-bit `[m] = [m] + src`.
    pub fn emit_add64_to_mem(&mut self, m: Mem, src: Reg) {
        self.op_mem(false, true, false, &[0x01], src.n(), m.base, None, m.disp);
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

    /// `xmm{x} = xmm{x} OP xmm{y}` (for `Sqrt`: `sqrt(xmm{y})`), rounded by MXCSR.
    pub fn emit_fp_arith_reg(&mut self, op: FpArith, p: Prec, x: u8, y: u8) {
        match (op, p) {
            (FpArith::Add, Prec::Single) => dynasm!(self.ops ; .arch x64 ; addss Rx(x), Rx(y)),
            (FpArith::Add, Prec::Double) => dynasm!(self.ops ; .arch x64 ; addsd Rx(x), Rx(y)),
            (FpArith::Sub, Prec::Single) => dynasm!(self.ops ; .arch x64 ; subss Rx(x), Rx(y)),
            (FpArith::Sub, Prec::Double) => dynasm!(self.ops ; .arch x64 ; subsd Rx(x), Rx(y)),
            (FpArith::Mul, Prec::Single) => dynasm!(self.ops ; .arch x64 ; mulss Rx(x), Rx(y)),
            (FpArith::Mul, Prec::Double) => dynasm!(self.ops ; .arch x64 ; mulsd Rx(x), Rx(y)),
            (FpArith::Div, Prec::Single) => dynasm!(self.ops ; .arch x64 ; divss Rx(x), Rx(y)),
            (FpArith::Div, Prec::Double) => dynasm!(self.ops ; .arch x64 ; divsd Rx(x), Rx(y)),
            (FpArith::Sqrt, Prec::Single) => dynasm!(self.ops ; .arch x64 ; sqrtss Rx(x), Rx(y)),
            (FpArith::Sqrt, Prec::Double) => dynasm!(self.ops ; .arch x64 ; sqrtsd Rx(x), Rx(y)),
        }
    }

    /// `xmm{x} = xmm{y}` (the whole register).
    pub fn emit_fp_move(&mut self, x: u8, y: u8) {
        dynasm!(self.ops ; .arch x64 ; movaps Rx(x), Rx(y));
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
        self.op_mem(false, false, false, &[0x80], 7, m.base, None, m.disp);
        self.ops.push(imm as u8);
    }
}

/// The opcode of `op r/m32, r32` and the ModRM.reg extension of `op r/m32, imm` (group 1).
/// `test` has its own opcodes (0x85, and 0xf7 /0 with an immediate).
fn alu_opcode(op: Alu) -> (u8, u8) {
    match op {
        Alu::Add => (0x01, 0),
        Alu::Or => (0x09, 1),
        Alu::And => (0x21, 4),
        Alu::Sub => (0x29, 5),
        Alu::Xor => (0x31, 6),
        Alu::Cmp => (0x39, 7),
        Alu::Test => (0x85, 0),
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

    /// Every general register but rsp (which the test functions use as their stack).
    const TESTED: [Reg; 15] = [
        Reg::Rax,
        Reg::Rcx,
        Reg::Rdx,
        Reg::Rbx,
        Reg::Rbp,
        Reg::Rsi,
        Reg::Rdi,
        Reg::R8,
        Reg::R9,
        Reg::R10,
        Reg::R11,
        Reg::R12,
        Reg::R13,
        Reg::R14,
        Reg::R15,
    ];

    /// Displacements of each encoded size (none, 8 bits, 32 bits), both signs.
    const DISPS: [i32; 9] = [0, 8, -8, 127, -128, 128, -129, 0x1234, -0x1234];

    /// Assemble `body` into a function of one pointer argument (in rdi) that may use every
    /// register but rsp, returning rax, and call it on `arg`.
    fn run_on(arena: &mut CodeArena, body: impl Fn(&mut Emitter), arg: u64) -> u64 {
        type PtrFn = unsafe extern "sysv64" fn(u64) -> u64;
        let mut e = Emitter::new(arena.next_addr());
        e.emit_push_callee_saved();
        body(&mut e);
        e.emit_pop_callee_saved_ret();
        let code = e.finish().expect("assemble");
        let at = arena.push(&code).expect("room");
        // SAFETY: `at` holds the function just assembled, with the `PtrFn` signature; it
        // saves every callee-saved register it uses; the arena outlives the call.
        unsafe { std::mem::transmute::<usize, PtrFn>(at)(arg) }
    }

    /// A buffer of distinct bytes, and the address of its middle.
    fn pattern() -> (Vec<u8>, u64) {
        let buf: Vec<u8> = (0..0x4000u32).map(|i| (i * 7 + 0x81) as u8).collect();
        let mid = buf.as_ptr() as u64 + 0x2000;
        (buf, mid)
    }

    #[test]
    fn loads_read_through_every_base_register_and_displacement_size() {
        let (buf, mid) = pattern();
        let at = |off: usize| u64::from_le_bytes(buf[0x2000 + off..][..8].try_into().unwrap());
        let word = at(0);
        let cases = [
            (Width::B8, false, word as u8 as u64),
            (Width::B8, true, word as u8 as i8 as i32 as u32 as u64),
            (Width::B16, false, word as u16 as u64),
            (Width::B16, true, word as u16 as i16 as i32 as u32 as u64),
            (Width::B32, false, word as u32 as u64),
            (Width::B64, false, word),
        ];
        for base in TESTED {
            let mut arena = CodeArena::new(1 << 20).expect("map code memory");
            for dst in TESTED {
                for disp in DISPS {
                    for (w, signed, want) in cases {
                        let got = run_on(
                            &mut arena,
                            |e| {
                                e.emit_mov64(base, Reg::Rdi);
                                e.emit_add64_imm(base, -disp);
                                if dst != base {
                                    e.emit_load_imm64(dst, u64::MAX); // the load replaces it
                                }
                                e.emit_load(w, signed, dst, Mem::at(base, disp));
                                e.emit_mov64(Reg::Rax, dst);
                            },
                            mid,
                        );
                        assert_eq!(
                            got, want,
                            "{w:?} signed {signed} [{base:?} + {disp}] -> {dst:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn indexed_loads_stores_and_compares_encode_every_register_pair() {
        let (mut buf, mid) = pattern();
        let word = u32::from_le_bytes(buf[0x2000..0x2004].try_into().unwrap());
        let mut arena = CodeArena::new(4 << 20).expect("map code memory");
        for base in TESTED {
            for index in TESTED.into_iter().filter(|&i| i != base) {
                for disp in [0, 8, -200] {
                    // base + index + disp = mid; index holds 0x100.
                    let setup = |e: &mut Emitter| {
                        e.emit_mov64(base, Reg::Rdi);
                        e.emit_add64_imm(base, -disp - 0x100);
                        e.emit_load_imm(index, 0x100);
                    };
                    let what = format!("[{base:?} + {index:?} + {disp}]");
                    let free = |r: &Reg| ![base, index].contains(r);
                    let mut spare = [Reg::R13, Reg::Rcx, Reg::Rsi, Reg::Rdx]
                        .into_iter()
                        .filter(free);
                    let (dst, src) = (spare.next().unwrap(), spare.next().unwrap());
                    let got = run_on(
                        &mut arena,
                        |e| {
                            setup(e);
                            e.emit_load_indexed(Width::B32, false, dst, base, index, disp);
                            e.emit_mov64(Reg::Rax, dst);
                        },
                        mid,
                    );
                    assert_eq!(got, word as u64, "load {what}");
                    let equal = run_on(
                        &mut arena,
                        |e| {
                            setup(e);
                            e.emit_load_imm(dst, word);
                            e.emit_cmp32_indexed(dst, base, index, disp);
                            e.emit_setcc(Cond::Eq, Reg::Rax);
                        },
                        mid,
                    );
                    assert_eq!(equal, 1, "cmp {what}");
                    run_on(
                        &mut arena,
                        |e| {
                            setup(e);
                            e.emit_load_imm(src, 0xa1b2);
                            e.emit_store_indexed(Width::B16, base, index, disp, src);
                        },
                        mid,
                    );
                    assert_eq!(buf[0x2000..0x2002], [0xb2, 0xa1], "store {what}");
                    buf[0x2000..0x2002].copy_from_slice(&word.to_le_bytes()[..2]);
                }
            }
        }
    }

    #[test]
    fn stores_and_memory_alu_ops_write_through_every_base_register() {
        let (mut buf, mid) = pattern();
        let fresh = buf.clone();
        let mut arena = CodeArena::new(4 << 20).expect("map code memory");
        let value: u64 = 0x8877_6655_4433_2211;
        for base in TESTED {
            for disp in DISPS {
                let setup = |e: &mut Emitter| {
                    e.emit_mov64(base, Reg::Rdi);
                    e.emit_add64_imm(base, -disp);
                };
                let m = Mem::at(base, disp);
                let what = format!("[{base:?} + {disp}]");
                for src in TESTED.into_iter().filter(|&r| r != base) {
                    for (w, len) in [
                        (Width::B8, 1),
                        (Width::B16, 2),
                        (Width::B32, 4),
                        (Width::B64, 8),
                    ] {
                        buf.copy_from_slice(&fresh);
                        run_on(
                            &mut arena,
                            |e| {
                                setup(e);
                                e.emit_load_imm64(src, value);
                                e.emit_store(w, m, src);
                            },
                            mid,
                        );
                        let mut want = fresh[0x2000..0x2008].to_vec();
                        want[..len].copy_from_slice(&value.to_le_bytes()[..len]);
                        assert_eq!(
                            buf[0x2000..0x2008],
                            want[..],
                            "{w:?} store {src:?} to {what}"
                        );
                    }
                }
                // Memory ALU forms, with short and long immediates.
                let old32 = u32::from_le_bytes(fresh[0x2000..0x2004].try_into().unwrap());
                let old64 = u64::from_le_bytes(fresh[0x2000..0x2008].try_into().unwrap());
                for imm in [5i32, -3, 0x1234_5678, -0x1000] {
                    buf.copy_from_slice(&fresh);
                    run_on(
                        &mut arena,
                        |e| {
                            setup(e);
                            e.emit_store_imm32(m, imm as u32)
                        },
                        mid,
                    );
                    assert_eq!(buf[0x2000..0x2004], imm.to_le_bytes(), "mov {what}, {imm}");
                    for (op, want32) in alu_results(old32, imm as u32) {
                        buf.copy_from_slice(&fresh);
                        run_on(
                            &mut arena,
                            |e| {
                                setup(e);
                                e.emit_alu32_mem_imm(op, m, imm as u32)
                            },
                            mid,
                        );
                        let got = u32::from_le_bytes(buf[0x2000..0x2004].try_into().unwrap());
                        assert_eq!(got, want32, "{op:?} dword {what}, {imm}");
                        buf.copy_from_slice(&fresh);
                        run_on(
                            &mut arena,
                            |e| {
                                setup(e);
                                e.emit_alu64_mem_imm(op, m, imm)
                            },
                            mid,
                        );
                        let got = u64::from_le_bytes(buf[0x2000..0x2008].try_into().unwrap());
                        let want = match op {
                            Alu::Add => old64.wrapping_add(imm as i64 as u64),
                            Alu::Sub => old64.wrapping_sub(imm as i64 as u64),
                            Alu::And => old64 & imm as i64 as u64,
                            Alu::Or => old64 | imm as i64 as u64,
                            _ => old64 ^ imm as i64 as u64,
                        };
                        assert_eq!(got, want, "{op:?} qword {what}, {imm}");
                    }
                    buf.copy_from_slice(&fresh);
                    // Compares of [m] with the value it holds, and with another.
                    let a = if base == Reg::Rcx { Reg::Rdx } else { Reg::Rcx };
                    // `a = a OP [m]`.
                    for (op, want) in alu_results(imm as u32, old32) {
                        let got = run_on(
                            &mut arena,
                            |e| {
                                setup(e);
                                e.emit_load_imm(a, imm as u32);
                                e.emit_alu32_mem(op, a, m);
                                e.emit_mov64(Reg::Rax, a);
                            },
                            mid,
                        );
                        assert_eq!(got, want as u64, "{op:?} {a:?}, {what}");
                    }
                    for (w64, value) in [(false, old32 as u64), (true, old64)] {
                        for (with, want) in [(value, 1), (value ^ 0x100, 0)] {
                            let equal = run_on(
                                &mut arena,
                                |e| {
                                    setup(e);
                                    e.emit_load_imm64(a, with);
                                    if w64 {
                                        e.emit_cmp64_mem(a, m);
                                    } else {
                                        e.emit_alu32_mem(Alu::Cmp, a, m);
                                    }
                                    e.emit_setcc(Cond::Eq, Reg::Rax);
                                },
                                mid,
                            );
                            assert_eq!(
                                equal,
                                want,
                                "cmp{} {what} with {with:#x}",
                                if w64 { 64 } else { 32 }
                            );
                        }
                    }
                    let low = fresh[0x2000];
                    for (with, want) in [(low, 1), (low ^ 1, 0)] {
                        let equal = run_on(
                            &mut arena,
                            |e| {
                                setup(e);
                                e.emit_cmp_byte_mem_imm(m, with as i8);
                                e.emit_setcc(Cond::Eq, Reg::Rax);
                            },
                            mid,
                        );
                        assert_eq!(equal, want, "cmp byte {what}, {with:#x}");
                    }
                    let sum = run_on(
                        &mut arena,
                        |e| {
                            setup(e);
                            let d = if base == Reg::Rax { Reg::Rdx } else { Reg::Rax };
                            e.emit_lea32(d, base, disp + imm);
                            e.emit_mov64(Reg::Rax, d);
                        },
                        mid,
                    );
                    assert_eq!(
                        sum,
                        (mid as u32).wrapping_add(imm as u32) as u64,
                        "lea {what} + {imm}"
                    );
                }
            }
        }
    }

    /// `a OP b` for each two-operand ALU operation that writes its result.
    fn alu_results(a: u32, b: u32) -> [(Alu, u32); 5] {
        [
            (Alu::Add, a.wrapping_add(b)),
            (Alu::Sub, a.wrapping_sub(b)),
            (Alu::And, a & b),
            (Alu::Or, a | b),
            (Alu::Xor, a ^ b),
        ]
    }

    #[test]
    fn register_forms_encode_every_register_pair() {
        let mut arena = CodeArena::new(4 << 20).expect("map code memory");
        let (a, b) = (0x8765_4321u32, 0x0f0f_1234u32);
        for dst in TESTED {
            for src in TESTED.into_iter().filter(|&r| r != dst) {
                let got = run_on(
                    &mut arena,
                    |e| {
                        e.emit_load_imm64(dst, u64::MAX);
                        e.emit_load_imm(src, a);
                        e.emit_mov(dst, src);
                        e.emit_mov64(Reg::Rax, dst);
                    },
                    0,
                );
                assert_eq!(got, a as u64, "mov {dst:?}, {src:?} (zero-extends)");
                for (op, want) in alu_results(a, b) {
                    let got = run_on(
                        &mut arena,
                        |e| {
                            e.emit_load_imm(dst, a);
                            e.emit_load_imm(src, b);
                            e.emit_alu32(op, dst, src);
                            e.emit_mov64(Reg::Rax, dst);
                        },
                        0,
                    );
                    assert_eq!(got, want as u64, "{op:?} {dst:?}, {src:?}");
                }
                let got = run_on(
                    &mut arena,
                    |e| {
                        e.emit_load_imm64(dst, 1 << 40);
                        e.emit_load_imm64(src, 5);
                        e.emit_mov64(dst, src);
                        e.emit_mov64(Reg::Rax, dst);
                    },
                    0,
                );
                assert_eq!(got, 5, "mov64 {dst:?}, {src:?}");
            }
            for imm in [0u32, 3, 0xffff_fff0, 0x1234_5678] {
                for (op, want) in alu_results(a, imm) {
                    let got = run_on(
                        &mut arena,
                        |e| {
                            e.emit_load_imm(dst, a);
                            e.emit_alu32_imm32(op, dst, imm);
                            e.emit_mov64(Reg::Rax, dst);
                        },
                        0,
                    );
                    assert_eq!(got, want as u64, "{op:?} {dst:?}, {imm:#x}");
                }
                let flags = run_on(
                    &mut arena,
                    |e| {
                        e.emit_load_imm(dst, imm);
                        e.emit_alu32_imm32(Alu::Cmp, dst, imm);
                        e.emit_setcc(Cond::Eq, Reg::Rax);
                    },
                    0,
                );
                assert_eq!(flags & 1, 1, "cmp {dst:?}, {imm:#x}");
                let zero = run_on(
                    &mut arena,
                    |e| {
                        e.emit_load_imm(dst, !imm);
                        e.emit_alu32_imm32(Alu::Test, dst, imm);
                        e.emit_setcc(Cond::Eq, Reg::Rax);
                    },
                    0,
                );
                assert_eq!(zero & 1, 1, "test {dst:?}, {imm:#x}");
            }
        }
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
    fn a_64_bit_add_of_an_immediate_carries_in_both_encodings() {
        // Byte-sized immediates take the short form, the others the 32-bit one; both are
        // sign-extended and carry into the upper half.
        for r in [Reg::Rax, Reg::Rcx, Reg::R11] {
            for imm in [1, 127, -128, 128, -129, 0x1234_5678, -1] {
                let sum = |high: bool| {
                    run(
                        |e| {
                            e.emit_mov(r, Reg::Rdi);
                            e.emit_add64_imm(r, imm);
                            dynasm!(e.ops ; .arch x64 ; mov rax, Rq(r.n()));
                            if high {
                                dynasm!(e.ops ; .arch x64 ; shr rax, 32);
                            }
                        },
                        0xffff_fff0,
                        0,
                    )
                };
                let want = 0xffff_fff0_u64.wrapping_add(imm as i64 as u64);
                assert_eq!(sum(false), want as u32, "{r:?} {imm}");
                assert_eq!(sum(true), (want >> 32) as u32, "{r:?} {imm}");
            }
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
