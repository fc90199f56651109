//! The interpreter: executes a decoded block as threaded code. When a block is built, every
//! instruction gets a [`Slot`] holding a pointer to a handler specialised for its operation (and
//! for common operand patterns: `rd = x0` makes a pure operation a no-op, `addi rd, x0, imm` and
//! `lui` become a load-immediate). Each handler does its work and then calls the next slot's
//! handler itself, so every handler ends in its own indirect jump (which the host's branch
//! predictor learns per guest instruction) instead of all sharing the one jump of a central
//! `match`. No re-decoding and no per-instruction interrupt checks.
//!
//! The pc and the retired-instruction count are never updated per instruction: `hart.pc` stays
//! at the block's entry pc while the block runs, and each slot knows its byte offset from the
//! block start and how many instructions precede it. A handler that leaves the block (branch,
//! jump, trap, block end) computes both from its slot.
//!
//! A handler that ends a block with a plain next pc (branch, jump, end slot) goes on into the
//! next block itself when the run loop would do exactly that: it makes the run loop's checks
//! (instruction limit, the platform's `between_blocks`) and finds the next block in the
//! engine's jump cache, validated through the execute TLB as on every block entry. Anything
//! else (a jump-cache miss, a trap, fence.i, a CSR access, ...) returns to the run loop.
//!
//! Handlers call the next handler in tail position, and return one integer (`Exit`) so the
//! compiler can turn every such call into a jump (release builds do; see `objdump`).
//! Correctness does not depend on it: a block holds at most [`MAX_BLOCK_INSNS`] instructions
//! plus an end slot and one `run_block` call chains at most `CHAIN_BUDGET` blocks, so without
//! the optimisation (debug builds, where the budget is smaller) the calls nest to a bounded
//! depth.
//!
//! This tier is the reference every other tier must equal.

use super::block::MAX_BLOCK_INSNS;
use super::mem::{amo, load, load_fast, store, store_fast};
use super::platform::{Platform, Stop};
use crate::cpu::csr::{MSTATUS_TSR, MSTATUS_TVM, MSTATUS_TW};
use crate::cpu::tlb::PAGE_MASK;
use crate::cpu::{fpu, Access, Exception, Hart, Priv, Trap};
use crate::isa::{Insn, Op};

/// How a block ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockExit {
    /// Ran to its end (or took a branch): `hart.pc` is the next pc.
    Next,
    /// An instruction trapped: `hart.pc` is its address, it did not retire.
    Trap(Trap),
    /// `hart.pc` is the next pc, and decoded code may be stale (fence.i, sfence.vma, satp).
    FlushCode,
    /// WFI retired: `hart.pc` is the next pc; the run loop may idle until an interrupt.
    Wfi,
    /// While chaining into the next block, `between_blocks` asked to stop: the reason is in
    /// [`RunState::stop`].
    Stop,
    /// A store hit a page holding decoded code (`hart.code_pages` says which): `hart.pc` is
    /// the next pc; that code must be dropped before anything else runs.
    CodeWritten,
}

/// A jump-cache entry: the block (its first slot) for guest `pc`, valid while the execute TLB
/// maps `pc` to `host` (the block's identity), which also re-checks fetch permission.
#[derive(Clone, Copy, Debug)]
pub struct JumpEntry {
    pub pc: u32,
    /// Index of the block in the engine's block list.
    pub block: u32,
    pub host: usize,
    pub slots: *const Slot,
    /// Entry of the block's tier-1 code compiled for this `pc`, or 0.
    pub code: usize,
}

impl JumpEntry {
    /// An entry that matches no pc (pcs are 2-byte aligned).
    pub const EMPTY: JumpEntry = JumpEntry {
        pc: 1,
        block: 0,
        host: 0,
        slots: std::ptr::null(),
        code: 0,
    };
}

/// Entries in the direct-mapped jump cache.
pub const JUMP_CACHE_SIZE: usize = 4096;

/// The jump-cache index of guest `pc`.
#[inline(always)]
pub fn jump_slot(pc: u32) -> usize {
    (pc as usize >> 1) & (JUMP_CACHE_SIZE - 1)
}

/// Blocks entered per [`run_block`] call by chaining. Chaining nests calls; release builds
/// turn them into jumps, and this bound keeps the nesting shallow when they are not (debug).
pub const CHAIN_BUDGET: u32 = if cfg!(debug_assertions) { 2 } else { 64 };

/// The platform-independent part of what handlers share while blocks run: the engine's jump
/// cache (to go from one block straight into the next) and the run loop's checks.
#[derive(Debug)]
pub struct RunState {
    /// The engine's jump cache (`JUMP_CACHE_SIZE` entries); every entry is empty or names a
    /// live block compiled for the platform type of the enclosing [`RunCtx`].
    pub jump_cache: *const JumpEntry,
    /// Stop chaining when `hart.instret` reaches this.
    pub limit: u64,
    /// Blocks left to chain in this `run_block` call (or this entry into compiled code).
    pub budget: u32,
    /// Blocks one `run_block` call may chain ([`CHAIN_BUDGET`]; 0 when tier 1 is on, so
    /// every block entry passes through the run loop, which counts runs for compilation).
    pub chain_budget: u32,
    /// Blocks compiled code entered through the dispatcher (for statistics).
    pub jit_dispatched: u64,
    /// `between_blocks` already ran (and said go on) for the current `hart.pc`.
    pub checked: bool,
    /// Blocks entered by chaining, over all `run_block` calls (for statistics).
    pub chained: u64,
    /// The trap of a block that ended in one.
    pub trap: Trap,
    /// Why `between_blocks` stopped the hart while chaining.
    pub stop: Option<Stop>,
}

/// What handlers share while blocks run: a [`RunState`] (first, so platform-independent
/// handlers reach it through the same pointer) and the platform.
#[repr(C)]
pub struct RunCtx<P> {
    pub state: RunState,
    pub plat: *mut P,
}

/// How a handler left its block, as handlers return it: one integer, so every handler's
/// return paths can end in a jump to the next handler (a larger value would be returned
/// through memory or merged from parts, and the compiler would then keep real calls). A trap's
/// details go to [`RunState::trap`].
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Exit(pub(crate) u32);

impl Exit {
    pub(crate) const NEXT: Exit = Exit(0);
    pub(crate) const TRAP: Exit = Exit(1);
    pub(crate) const FLUSH_CODE: Exit = Exit(2);
    pub(crate) const WFI: Exit = Exit(3);
    /// The platform's `between_blocks` said stop while chaining; the reason is in the context.
    pub(crate) const STOP: Exit = Exit(4);
    pub(crate) const CODE_WRITTEN: Exit = Exit(5);

    /// Leave with `t`.
    #[inline(always)]
    unsafe fn trap(ctx: *mut (), t: Trap) -> Exit {
        (*(ctx as *mut RunState)).trap = t;
        Exit::TRAP
    }
}

/// Executes the instruction in its slot and (unless it leaves the block) the rest of the block.
///
/// # Safety
///
/// `slot` points into the slot array of a live block built by [`compile`] for platform type
/// `P`, `ctx` points to a live [`RunCtx<P>`] (see [`run_block`]), and `hart.pc` is the pc the
/// block was entered at.
type Handler = unsafe fn(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit;

/// One instruction of a block, ready to run.
#[repr(C)]
pub struct Slot {
    handler: Handler,
    /// Byte offset of this instruction from the block's first instruction.
    offset: u32,
    /// Instructions before this one in the block: what has retired if this one traps.
    index: u32,
    /// The decoded instruction.
    pub insn: Insn,
}

// A slot is two cache-line quarters; keep it that way.
const _: () = assert!(std::mem::size_of::<Slot>() == 32);

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("offset", &self.offset)
            .field("index", &self.index)
            .field("insn", &self.insn)
            .finish()
    }
}

/// Turn a block's instructions into slots for platform type `P`. The result always ends with an
/// end slot, so running off the last instruction leaves the block cleanly.
pub fn compile<P: Platform>(insns: &[Insn]) -> Box<[Slot]> {
    debug_assert!(insns.len() <= MAX_BLOCK_INSNS);
    let mut slots = Vec::with_capacity(insns.len() + 1);
    let mut offset = 0u32;
    for (index, insn) in insns.iter().enumerate() {
        slots.push(Slot {
            handler: fused_handler_for::<P>(insn).unwrap_or_else(|| handler_for::<P>(insn)),
            offset,
            index: index as u32,
            insn: *insn,
        });
        offset += insn.len as u32;
    }
    slots.push(Slot {
        handler: end::<P>,
        offset,
        index: insns.len() as u32,
        insn: Insn::illegal(0, 0),
    });
    slots.into_boxed_slice()
}

/// Execute the block whose first slot is `first` (entered at `hart.pc`), and then, as long as
/// the jump cache knows the way and the checks pass, the blocks that follow it.
///
/// # Safety
///
/// `first` is the first slot of a live block compiled for `P`; `ctx.plat` points to a live
/// `P`; `ctx.jump_cache` to the engine's jump cache, whose entries are empty or name live
/// blocks compiled for `P`. Nothing else may access the platform or the blocks meanwhile.
#[inline(always)]
pub unsafe fn run_block<P: Platform>(
    hart: &mut Hart,
    ctx: &mut RunCtx<P>,
    first: *const Slot,
) -> BlockExit {
    ctx.state.budget = ctx.state.chain_budget;
    ctx.state.checked = false;
    // SAFETY: per this function's contract; every slot array ends with an end slot, so handlers
    // only ever read slots of the array they were entered in.
    let exit = unsafe { ((*first).handler)(hart, ctx as *mut RunCtx<P> as *mut (), first) };
    ctx.state.chained += (ctx.state.chain_budget - ctx.state.budget) as u64;
    block_exit(&ctx.state, exit)
}

/// The [`BlockExit`] for exit code `exit` (as handlers and compiled code return it).
pub(crate) fn block_exit(state: &RunState, exit: Exit) -> BlockExit {
    match exit {
        Exit::NEXT => BlockExit::Next,
        Exit::TRAP => BlockExit::Trap(state.trap),
        Exit::FLUSH_CODE => BlockExit::FlushCode,
        Exit::WFI => BlockExit::Wfi,
        Exit::CODE_WRITTEN => BlockExit::CodeWritten,
        _ => BlockExit::Stop,
    }
}

/// Run the slot after `slot` (tail call).
#[inline(always)]
unsafe fn next(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let n = slot.add(1);
    ((*n).handler)(hart, ctx, n)
}

/// The platform of the run context `ctx` points to.
#[inline(always)]
unsafe fn platform<'a, P: Platform>(ctx: *mut ()) -> &'a mut P {
    &mut *(*(ctx as *mut RunCtx<P>)).plat
}

/// The platform's `between_blocks`; false (with the reason in `c.stop`) if it says stop. Out
/// of line: its `Option<Stop>` lives in memory, and a local whose address is taken in
/// [`chain`] would keep the call to the next block from becoming a jump.
#[inline(never)]
pub(crate) fn between_blocks<P: Platform>(hart: &mut Hart, c: &mut RunCtx<P>) -> bool {
    // SAFETY: `c.plat` points to the live platform and nothing else borrows it while blocks
    // run (see `run_block`).
    match unsafe { &mut *c.plat }.between_blocks(hart) {
        Some(stop) => {
            c.state.stop = Some(stop);
            false
        }
        None => true,
    }
}

/// After a block retired and set `hart.pc`: go straight on into the next block when that is
/// exactly what the run loop would do (same checks, same order), else return to the run loop.
#[inline(always)]
unsafe fn chain<P: Platform>(hart: &mut Hart, ctx: *mut ()) -> Exit {
    let c = &mut *(ctx as *mut RunCtx<P>);
    if c.state.budget == 0 || hart.instret >= c.state.limit {
        return Exit::NEXT;
    }
    if !between_blocks::<P>(hart, c) {
        return Exit::STOP;
    }
    let pc = hart.pc;
    let entry = &*c.state.jump_cache.add(jump_slot(pc));
    if entry.pc != pc || hart.tlb.lookup(pc, Access::Execute) != Some(entry.host) {
        c.state.checked = true;
        return Exit::NEXT;
    }
    c.state.budget -= 1;
    let first = entry.slots;
    ((*first).handler)(hart, ctx, first)
}

/// The guest pc of the instruction in `slot`.
#[inline(always)]
fn pc_of(hart: &Hart, slot: &Slot) -> u32 {
    hart.pc.wrapping_add(slot.offset)
}

/// Leave the block at `slot`'s instruction with a trap: it did not retire.
#[cold]
#[inline(never)]
unsafe fn trap_at(hart: &mut Hart, ctx: *mut (), slot: &Slot, trap: Trap) -> Exit {
    hart.pc = pc_of(hart, slot);
    hart.instret += slot.index as u64;
    Exit::trap(ctx, trap)
}

/// Leave the block after `slot`'s instruction retired, continuing at `target`.
#[inline(always)]
unsafe fn leave<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: &Slot, target: u32) -> Exit {
    hart.pc = target;
    hart.instret += slot.index as u64 + 1;
    chain::<P>(hart, ctx)
}

/// After a store retired in `slot`: go on with the block, unless the store hit a page holding
/// code, which may be this very block; then leave it with the pc after the store.
#[inline(always)]
unsafe fn after_store(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    if hart.code_pages.any_written() {
        let s = &*slot;
        hart.pc = pc_of(hart, s).wrapping_add(s.insn.len as u32);
        hart.instret += s.index as u64 + 1;
        return Exit::CODE_WRITTEN;
    }
    next(hart, ctx, slot)
}

/// The end slot: the block ran to its last instruction without a control transfer.
unsafe fn end<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    hart.pc = pc_of(hart, s);
    hart.instret += s.index as u64;
    chain::<P>(hart, ctx)
}

/// A pure operation whose result is discarded (`rd = x0`), and `fence`.
unsafe fn nop(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    next(hart, ctx, slot)
}

#[inline(always)]
fn sext8(v: u8) -> u32 {
    v as i8 as i32 as u32
}

#[inline(always)]
fn sext16(v: u16) -> u32 {
    v as i16 as i32 as u32
}

/// Carry-less multiply: the low and high words of the 64-bit product.
#[inline]
pub(crate) fn clmul64(a: u32, b: u32) -> u64 {
    let mut r = 0u64;
    for i in 0..32 {
        if b >> i & 1 != 0 {
            r ^= (a as u64) << i;
        }
    }
    r
}

/// Zbb `orc.b`: each nonzero byte becomes 0xff.
pub(crate) fn orc_b(v: u32) -> u32 {
    let mut r = 0;
    for b in 0..4 {
        if v >> (8 * b) & 0xff != 0 {
            r |= 0xff << (8 * b);
        }
    }
    r
}

/// Read integer register `r` (the mask lets the compiler drop the bounds check).
#[inline(always)]
fn x(hart: &Hart, r: u8) -> u32 {
    hart.x[r as usize & 31]
}

/// Handlers for pure integer operations with `rd != x0` (the builder gives `rd = x0` the `nop`
/// handler): the result is written unconditionally. `$a` is rs1, `$b` is rs2, `$imm` the
/// immediate and `$pc` the instruction's pc.
macro_rules! pure_ops {
    ($($name:ident = |$h:ident, $s:ident| $e:expr;)*) => {$(
        unsafe fn $name(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
            let value = {
                let $h: &Hart = hart;
                let $s: &Slot = &*slot;
                $e
            };
            hart.x[(*slot).insn.rd as usize & 31] = value;
            next(hart, ctx, slot)
        }
    )*};
}

/// rs1, rs2 and the immediate of `s`.
macro_rules! a {
    ($h:ident, $s:ident) => {
        x($h, $s.insn.rs1)
    };
}
macro_rules! b {
    ($h:ident, $s:ident) => {
        x($h, $s.insn.rs2)
    };
}
macro_rules! imm {
    ($s:ident) => {
        ($s.insn.imm as u32)
    };
}

pure_ops! {
    op_li = |_h, s| imm!(s);
    op_auipc = |h, s| pc_of(h, s).wrapping_add(imm!(s));
    op_addi = |h, s| a!(h, s).wrapping_add(imm!(s));
    op_slti = |h, s| ((a!(h, s) as i32) < (imm!(s) as i32)) as u32;
    op_sltiu = |h, s| (a!(h, s) < imm!(s)) as u32;
    op_xori = |h, s| a!(h, s) ^ imm!(s);
    op_ori = |h, s| a!(h, s) | imm!(s);
    op_andi = |h, s| a!(h, s) & imm!(s);
    op_slli = |h, s| a!(h, s) << (imm!(s) & 31);
    op_srli = |h, s| a!(h, s) >> (imm!(s) & 31);
    op_srai = |h, s| ((a!(h, s) as i32) >> (imm!(s) & 31)) as u32;
    op_add = |h, s| a!(h, s).wrapping_add(b!(h, s));
    op_sub = |h, s| a!(h, s).wrapping_sub(b!(h, s));
    op_sll = |h, s| a!(h, s) << (b!(h, s) & 31);
    op_slt = |h, s| ((a!(h, s) as i32) < (b!(h, s) as i32)) as u32;
    op_sltu = |h, s| (a!(h, s) < b!(h, s)) as u32;
    op_xor = |h, s| a!(h, s) ^ b!(h, s);
    op_srl = |h, s| a!(h, s) >> (b!(h, s) & 31);
    op_sra = |h, s| ((a!(h, s) as i32) >> (b!(h, s) & 31)) as u32;
    op_or = |h, s| a!(h, s) | b!(h, s);
    op_and = |h, s| a!(h, s) & b!(h, s);
    op_mul = |h, s| a!(h, s).wrapping_mul(b!(h, s));
    op_mulh = |h, s| ((a!(h, s) as i32 as i64 * b!(h, s) as i32 as i64) >> 32) as u32;
    op_mulhsu = |h, s| ((a!(h, s) as i32 as i64).wrapping_mul(b!(h, s) as u64 as i64) >> 32) as u32;
    op_mulhu = |h, s| ((a!(h, s) as u64 * b!(h, s) as u64) >> 32) as u32;
    op_div = |h, s| {
        let (a, b) = (a!(h, s), b!(h, s));
        if b == 0 { u32::MAX } else { (a as i32).wrapping_div(b as i32) as u32 }
    };
    op_divu = |h, s| a!(h, s).checked_div(b!(h, s)).unwrap_or(u32::MAX);
    op_rem = |h, s| {
        let (a, b) = (a!(h, s), b!(h, s));
        if b == 0 { a } else { (a as i32).wrapping_rem(b as i32) as u32 }
    };
    op_remu = |h, s| {
        let (a, b) = (a!(h, s), b!(h, s));
        if b == 0 { a } else { a % b }
    };
    op_sh1add = |h, s| (a!(h, s) << 1).wrapping_add(b!(h, s));
    op_sh2add = |h, s| (a!(h, s) << 2).wrapping_add(b!(h, s));
    op_sh3add = |h, s| (a!(h, s) << 3).wrapping_add(b!(h, s));
    op_andn = |h, s| a!(h, s) & !b!(h, s);
    op_orn = |h, s| a!(h, s) | !b!(h, s);
    op_xnor = |h, s| !(a!(h, s) ^ b!(h, s));
    op_clz = |h, s| a!(h, s).leading_zeros();
    op_ctz = |h, s| a!(h, s).trailing_zeros();
    op_cpop = |h, s| a!(h, s).count_ones();
    op_max = |h, s| (a!(h, s) as i32).max(b!(h, s) as i32) as u32;
    op_maxu = |h, s| a!(h, s).max(b!(h, s));
    op_min = |h, s| (a!(h, s) as i32).min(b!(h, s) as i32) as u32;
    op_minu = |h, s| a!(h, s).min(b!(h, s));
    op_sext_b = |h, s| sext8(a!(h, s) as u8);
    op_sext_h = |h, s| sext16(a!(h, s) as u16);
    op_zext_h = |h, s| a!(h, s) & 0xffff;
    op_rol = |h, s| a!(h, s).rotate_left(b!(h, s) & 31);
    op_ror = |h, s| a!(h, s).rotate_right(b!(h, s) & 31);
    op_rori = |h, s| a!(h, s).rotate_right(imm!(s) & 31);
    op_orc_b = |h, s| orc_b(a!(h, s));
    op_rev8 = |h, s| a!(h, s).swap_bytes();
    op_clmul = |h, s| clmul64(a!(h, s), b!(h, s)) as u32;
    op_clmulh = |h, s| (clmul64(a!(h, s), b!(h, s)) >> 32) as u32;
    op_clmulr = |h, s| (clmul64(a!(h, s), b!(h, s)) >> 31) as u32;
    op_bclr = |h, s| a!(h, s) & !(1 << (b!(h, s) & 31));
    op_bclri = |h, s| a!(h, s) & !(1 << (imm!(s) & 31));
    op_bext = |h, s| a!(h, s) >> (b!(h, s) & 31) & 1;
    op_bexti = |h, s| a!(h, s) >> (imm!(s) & 31) & 1;
    op_binv = |h, s| a!(h, s) ^ (1 << (b!(h, s) & 31));
    op_binvi = |h, s| a!(h, s) ^ (1 << (imm!(s) & 31));
    op_bset = |h, s| a!(h, s) | (1 << (b!(h, s) & 31));
    op_bseti = |h, s| a!(h, s) | (1 << (imm!(s) & 31));
    op_czero_eqz = |h, s| if b!(h, s) == 0 { 0 } else { a!(h, s) };
    op_czero_nez = |h, s| if b!(h, s) != 0 { 0 } else { a!(h, s) };
}

/// Conditional branches: they end their block.
macro_rules! branches {
    ($($name:ident = |$a:ident, $b:ident| $cond:expr;)*) => {$(
        unsafe fn $name<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
            let s = &*slot;
            let ($a, $b) = (x(hart, s.insn.rs1), x(hart, s.insn.rs2));
            let pc = pc_of(hart, s);
            let target = if $cond {
                pc.wrapping_add(s.insn.imm as u32)
            } else {
                pc.wrapping_add(s.insn.len as u32)
            };
            leave::<P>(hart, ctx, s, target)
        }
    )*};
}

branches! {
    op_beq = |a, b| a == b;
    op_bne = |a, b| a != b;
    op_blt = |a, b| (a as i32) < (b as i32);
    op_bge = |a, b| (a as i32) >= (b as i32);
    op_bltu = |a, b| a < b;
    op_bgeu = |a, b| a >= b;
}

unsafe fn op_jal<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    let pc = pc_of(hart, s);
    hart.set_reg(s.insn.rd, pc.wrapping_add(s.insn.len as u32));
    leave::<P>(hart, ctx, s, pc.wrapping_add(s.insn.imm as u32))
}

unsafe fn op_jalr<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    let target = x(hart, s.insn.rs1).wrapping_add(s.insn.imm as u32) & !1;
    let pc = pc_of(hart, s);
    hart.set_reg(s.insn.rd, pc.wrapping_add(s.insn.len as u32));
    leave::<P>(hart, ctx, s, target)
}

/// Integer loads: the load happens (and may trap) even when `rd = x0`. The TLB-hit path calls
/// nothing but the next handler, so that call stays a jump; misses go to an out-of-line path.
macro_rules! loads {
    ($($name:ident = $t:ty, |$v:ident| $conv:expr;)*) => {$(
        unsafe fn $name<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
            #[cold]
            #[inline(never)]
            unsafe fn slow<P: Platform>(
                hart: &mut Hart,
                ctx: *mut (),
                slot: *const Slot,
                va: u32,
            ) -> Exit {
                let s = &*slot;
                match load::<$t, P>(hart, platform::<P>(ctx), va) {
                    Ok($v) => {
                        hart.set_reg(s.insn.rd, $conv);
                        next(hart, ctx, slot)
                    }
                    Err(t) => trap_at(hart, ctx, s, t),
                }
            }
            let s = &*slot;
            let va = x(hart, s.insn.rs1).wrapping_add(s.insn.imm as u32);
            match load_fast::<$t>(hart, va) {
                Some($v) => {
                    hart.set_reg(s.insn.rd, $conv);
                    next(hart, ctx, slot)
                }
                None => slow::<P>(hart, ctx, slot, va),
            }
        }
    )*};
}

loads! {
    op_lb = u8, |v| sext8(v);
    op_lh = u16, |v| sext16(v);
    op_lw = u32, |v| v;
    op_lbu = u8, |v| v as u32;
    op_lhu = u16, |v| v as u32;
}

/// Integer stores, split into a fast and an out-of-line path like the loads.
macro_rules! stores {
    ($($name:ident = $t:ty;)*) => {$(
        unsafe fn $name<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
            #[cold]
            #[inline(never)]
            unsafe fn slow<P: Platform>(
                hart: &mut Hart,
                ctx: *mut (),
                slot: *const Slot,
                va: u32,
                value: $t,
            ) -> Exit {
                match store::<$t, P>(hart, platform::<P>(ctx), va, value) {
                    Ok(()) => after_store(hart, ctx, slot),
                    Err(t) => trap_at(hart, ctx, &*slot, t),
                }
            }
            let s = &*slot;
            let va = x(hart, s.insn.rs1).wrapping_add(s.insn.imm as u32);
            let value = x(hart, s.insn.rs2) as $t;
            if store_fast::<$t>(hart, va, value) {
                next(hart, ctx, slot)
            } else {
                slow::<P>(hart, ctx, slot, va, value)
            }
        }
    )*};
}

stores! {
    op_sb = u8;
    op_sh = u16;
    op_sw = u32;
}

/// Operations that write `rd` (through `set_reg`, so `rd = x0` discards), may trap and are
/// rare enough to share one handler: LR/SC and AMOs.
unsafe fn op_atomic<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    match exec_atomic(hart, platform::<P>(ctx), &s.insn) {
        Ok(v) => {
            hart.set_reg(s.insn.rd, v);
            after_store(hart, ctx, slot)
        }
        Err(t) => trap_at(hart, ctx, s, t),
    }
}

/// LR/SC or an AMO (`i`): the value for `rd`. Shared by every tier.
pub(crate) fn exec_atomic<P: Platform>(hart: &mut Hart, p: &mut P, i: &Insn) -> Result<u32, Trap> {
    let (rs1, rs2) = (x(hart, i.rs1), x(hart, i.rs2));
    match i.op {
        Op::LrW => {
            if rs1 & 3 != 0 {
                Err(Trap::new(Exception::LoadMisaligned, rs1))
            } else {
                load::<u32, P>(hart, p, rs1).inspect(|_| hart.reservation = Some(rs1))
            }
        }
        Op::ScW => {
            if rs1 & 3 != 0 {
                Err(Trap::new(Exception::StoreMisaligned, rs1))
            } else if hart.reservation.take() == Some(rs1) {
                store(hart, p, rs1, rs2).map(|()| 0)
            } else {
                Ok(1)
            }
        }
        Op::AmoswapW => amo(hart, p, rs1, |_| rs2),
        Op::AmoaddW => amo(hart, p, rs1, |m| m.wrapping_add(rs2)),
        Op::AmoxorW => amo(hart, p, rs1, |m| m ^ rs2),
        Op::AmoandW => amo(hart, p, rs1, |m| m & rs2),
        Op::AmoorW => amo(hart, p, rs1, |m| m | rs2),
        Op::AmominW => amo(hart, p, rs1, |m| (m as i32).min(rs2 as i32) as u32),
        Op::AmomaxW => amo(hart, p, rs1, |m| (m as i32).max(rs2 as i32) as u32),
        Op::AmominuW => amo(hart, p, rs1, |m| m.min(rs2)),
        Op::AmomaxuW => amo(hart, p, rs1, |m| m.max(rs2)),
        _ => Err(Trap::illegal(i.raw)), // not reachable: only atomics are routed here
    }
}

/// FP loads and stores, full path: FP-disabled trap, TLB misses, MMIO, faults.
#[cold]
#[inline(never)]
unsafe fn op_fp_mem<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    match exec_fp_mem(hart, platform::<P>(ctx), &s.insn) {
        Ok(()) => after_store(hart, ctx, slot),
        Err(t) => trap_at(hart, ctx, s, t),
    }
}

/// An FP load or store (`i`), all paths. Shared by every tier.
pub(crate) fn exec_fp_mem<P: Platform>(hart: &mut Hart, p: &mut P, i: &Insn) -> Result<(), Trap> {
    if !hart.fp_enabled() {
        return Err(Trap::illegal(i.raw));
    }
    let va = x(hart, i.rs1).wrapping_add(i.imm as u32);
    match i.op {
        Op::Flw => load::<u32, P>(hart, p, va).map(|v| {
            hart.f[i.rd as usize & 31] = 0xffff_ffff_0000_0000 | v as u64;
            hart.mark_fp_dirty();
        }),
        Op::Fld => load::<u64, P>(hart, p, va).map(|v| {
            hart.f[i.rd as usize & 31] = v;
            hart.mark_fp_dirty();
        }),
        Op::Fsw => {
            let v = hart.f[i.rs2 as usize & 31] as u32;
            store(hart, p, va, v)
        }
        Op::Fsd => {
            let v = hart.f[i.rs2 as usize & 31];
            store(hart, p, va, v)
        }
        _ => Err(Trap::illegal(i.raw)), // not reachable: only FP loads/stores are routed here
    }
}

/// FP loads and stores with the TLB-hit path inline (the rest goes to [`op_fp_mem`]).
macro_rules! fp_mem_fast {
    ($($name:ident = $kind:ident $t:ty;)*) => {$(
        unsafe fn $name<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
            let s = &*slot;
            if hart.fp_enabled() {
                let va = x(hart, s.insn.rs1).wrapping_add(s.insn.imm as u32);
                if fp_mem_fast!(@$kind $t, hart, s, va) {
                    return next(hart, ctx, slot);
                }
            }
            op_fp_mem::<P>(hart, ctx, slot)
        }
    )*};
    (@load $t:ty, $hart:ident, $s:ident, $va:ident) => {
        match load_fast::<$t>($hart, $va) {
            Some(v) => {
                // NaN-box single values.
                $hart.f[$s.insn.rd as usize & 31] = nan_box(v);
                $hart.mark_fp_dirty();
                true
            }
            None => false,
        }
    };
    (@store $t:ty, $hart:ident, $s:ident, $va:ident) => {{
        let v = $hart.f[$s.insn.rs2 as usize & 31] as $t;
        store_fast::<$t>($hart, $va, v)
    }};
}

/// An FP register value from a loaded word (NaN-boxed) or doubleword.
trait NanBox {
    fn nan_box(self) -> u64;
}
impl NanBox for u32 {
    #[inline(always)]
    fn nan_box(self) -> u64 {
        0xffff_ffff_0000_0000 | self as u64
    }
}
impl NanBox for u64 {
    #[inline(always)]
    fn nan_box(self) -> u64 {
        self
    }
}
#[inline(always)]
fn nan_box<T: NanBox>(v: T) -> u64 {
    v.nan_box()
}

fp_mem_fast! {
    op_flw = load u32;
    op_fld = load u64;
    op_fsw = store u32;
    op_fsd = store u64;
}

/// FP computation (everything in the F/D unit except loads and stores).
unsafe fn op_fp(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    match fpu::execute(hart, &s.insn) {
        Ok(()) => next(hart, ctx, slot),
        Err(t) => trap_at(hart, ctx, s, t),
    }
}

/// System instructions, CSR accesses and illegal instructions. All of them end their block, so
/// the instructions before them are counted as retired first: a CSR read of `instret`/`cycle`
/// (or `time` derived from it) sees an exact count.
unsafe fn op_system(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    exec_system(hart, ctx, &s.insn, pc_of(hart, s), s.index)
}

/// System instruction `i` at guest `pc`, preceded by `index` retired instructions of its block
/// (not yet counted in `hart.instret`). Shared by every tier.
///
/// # Safety
///
/// `ctx` points to a live [`RunCtx`] (its [`RunState`] receives a trap).
pub(crate) unsafe fn exec_system(
    hart: &mut Hart,
    ctx: *mut (),
    i: &Insn,
    pc: u32,
    index: u32,
) -> Exit {
    let next_pc = pc.wrapping_add(i.len as u32);
    hart.pc = pc;
    hart.instret += index as u64;
    // From here on `hart.pc`/`instret` describe this instruction: a trap just returns.
    macro_rules! illegal_if {
        ($cond:expr) => {
            if $cond {
                return Exit::trap(ctx, Trap::illegal(i.raw));
            }
        };
    }
    macro_rules! tri {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(t) => return Exit::trap(ctx, t),
            }
        };
    }
    match i.op {
        Op::FenceI => {
            hart.pc = next_pc;
            hart.instret += 1;
            Exit::FLUSH_CODE
        }
        Op::Ecall => {
            let cause = match hart.prv {
                Priv::User => Exception::EcallFromU,
                Priv::Supervisor => Exception::EcallFromS,
                Priv::Machine => Exception::EcallFromM,
            };
            Exit::trap(ctx, Trap::new(cause, 0))
        }
        Op::Ebreak => Exit::trap(ctx, Trap::new(Exception::Breakpoint, pc)),
        Op::Mret => {
            illegal_if!(hart.prv != Priv::Machine);
            hart.instret += 1;
            hart.mret();
            Exit::NEXT
        }
        Op::Sret => {
            let tsr = hart.csr.mstatus & MSTATUS_TSR != 0;
            illegal_if!(hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tsr));
            hart.instret += 1;
            hart.sret();
            Exit::NEXT
        }
        Op::Wfi => {
            let tw = hart.csr.mstatus & MSTATUS_TW != 0;
            illegal_if!(hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tw));
            hart.pc = next_pc;
            hart.instret += 1;
            Exit::WFI
        }
        Op::SfenceVma => {
            let tvm = hart.csr.mstatus & MSTATUS_TVM != 0;
            illegal_if!(hart.prv == Priv::User || (hart.prv == Priv::Supervisor && tvm));
            // Blocks are keyed by host address and every entry re-checks the execute TLB, so
            // a translation change needs a TLB flush, never a code flush.
            hart.tlb.flush();
            hart.pc = next_pc;
            hart.instret += 1;
            Exit::NEXT
        }
        Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
            let csr = i.imm as u16;
            let operand = match i.op {
                Op::Csrrw | Op::Csrrs | Op::Csrrc => x(hart, i.rs1),
                _ => i.rs1 as u32,
            };
            let is_rw = matches!(i.op, Op::Csrrw | Op::Csrrwi);
            // csrrw with rd = x0 does not read; csrrs/c with a zero source do not write.
            let old = if is_rw && i.rd == 0 {
                0
            } else {
                tri!(hart.csr_read(csr, i.raw))
            };
            // The instruction's own increment comes before its write, so a write to
            // minstret/mcycle replaces it (the value written is what the next instruction
            // reads).
            hart.instret += 1;
            if is_rw || i.rs1 != 0 {
                let new = match i.op {
                    Op::Csrrw | Op::Csrrwi => operand,
                    Op::Csrrs | Op::Csrrsi => old | operand,
                    _ => old & !operand,
                };
                // A translation change (satp, MPRV/SUM/MXR) flushes the TLB inside csr_write;
                // decoded blocks stay valid: they are keyed by host address and every block
                // entry re-checks the execute TLB.
                if let Err(t) = hart.csr_write(csr, new, i.raw) {
                    // A refused write changes nothing: the instruction did not retire.
                    hart.instret -= 1;
                    return Exit::trap(ctx, t);
                }
            }
            hart.set_reg(i.rd, old);
            hart.pc = next_pc;
            Exit::NEXT
        }
        // Op::Illegal, and anything handler_for did not route elsewhere.
        _ => Exit::trap(ctx, Trap::illegal(i.raw)),
    }
}

// ----- fused units (see `crate::isa::Fusion` and `super::ir`) -----

/// Run the slot `n` slots after `slot` (tail call): the instruction after a fused unit of `n`.
#[inline(always)]
unsafe fn next_after(hart: &mut Hart, ctx: *mut (), slot: *const Slot, n: usize) -> Exit {
    let s = slot.add(n);
    ((*s).handler)(hart, ctx, s)
}

/// `lui rd, hi; addi rd, rd, lo` (the head's imm is the value; rd != x0).
unsafe fn fused_li(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    hart.x[s.insn.rd as usize & 31] = s.insn.imm as u32;
    next_after(hart, ctx, slot, 2)
}

/// `auipc rd, hi; addi rd, rd, lo` (the head's imm is hi + lo; rd != x0).
unsafe fn fused_auipc_addi(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    hart.x[s.insn.rd as usize & 31] = pc_of(hart, s).wrapping_add(s.insn.imm as u32);
    next_after(hart, ctx, slot, 2)
}

/// `slli rd, rs, k; srli rd, rd, k` as `andi rd, rs, mask` (rd != x0).
unsafe fn fused_shift_mask(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    hart.x[s.insn.rd as usize & 31] = x(hart, s.insn.rs1) & s.insn.imm as u32;
    next_after(hart, ctx, slot, 2)
}

/// `auipc rt, hi; jalr rd, lo(rt)` (rt != x0): both writes, then leave for the target.
unsafe fn fused_auipc_jalr<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let (s, j) = (&*slot, &*slot.add(1));
    let t = pc_of(hart, s).wrapping_add(s.insn.imm as u32);
    hart.x[s.insn.rd as usize & 31] = t;
    let target = t.wrapping_add(j.insn.imm as u32) & !1;
    hart.set_reg(j.insn.rd, pc_of(hart, j).wrapping_add(j.insn.len as u32));
    leave::<P>(hart, ctx, j, target)
}

/// For a `lw`/`sw` run headed by `slot`: its length, base value and the host address of the
/// page all its accesses fall in, when every access is aligned in one page that the TLB maps
/// for `access`; `None` when the run must go one by one.
#[inline(always)]
unsafe fn run_page(hart: &Hart, slot: *const Slot, access: Access) -> Option<(usize, u32, usize)> {
    let n = (*slot).insn.rs3 as usize + 1;
    let base = x(hart, (*slot).insn.rs1);
    let va0 = base.wrapping_add((*slot).insn.imm as u32);
    let mut fits = true;
    for k in 0..n {
        let va = base.wrapping_add((*slot.add(k)).insn.imm as u32);
        fits &= va & 3 == 0 && (va ^ va0) & !PAGE_MASK == 0;
    }
    if !fits {
        return None;
    }
    let host0 = hart.tlb.lookup(va0, access)?;
    Some((n, base, host0 - (va0 & PAGE_MASK) as usize))
}

/// A run of `lw` off one base: one translation when all are aligned in one page; otherwise
/// (or on a TLB miss) they run one by one, with precise traps.
unsafe fn fused_lw_run<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let Some((n, base, page)) = run_page(hart, slot, Access::Read) else {
        return op_lw::<P>(hart, ctx, slot);
    };
    for k in 0..n {
        let i = &(*slot.add(k)).insn;
        let host = page + (base.wrapping_add(i.imm as u32) & PAGE_MASK) as usize;
        // SAFETY: a TLB read entry maps the whole guest RAM page to valid host memory, and
        // every access of the run is aligned inside that page (`run_page`).
        hart.set_reg(i.rd, std::ptr::read_unaligned(host as *const u32));
    }
    next_after(hart, ctx, slot, n)
}

/// A run of `sw` off one base, like [`fused_lw_run`] (pages holding code have no write TLB
/// entries, so a run that hits code always goes one by one).
unsafe fn fused_sw_run<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let Some((n, base, page)) = run_page(hart, slot, Access::Write) else {
        return op_sw::<P>(hart, ctx, slot);
    };
    for k in 0..n {
        let i = &(*slot.add(k)).insn;
        let host = page + (base.wrapping_add(i.imm as u32) & PAGE_MASK) as usize;
        // SAFETY: as in `fused_lw_run`; write entries exist only for writable RAM.
        std::ptr::write_unaligned(host as *mut u32, x(hart, i.rs2));
    }
    next_after(hart, ctx, slot, n)
}

/// An ALU operation and the branch that ends the block on its result.
unsafe fn fused_cmp_branch<P: Platform>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let (s, b) = (&*slot, &*slot.add(1));
    let value = super::ir::alu_value(
        s.insn.op,
        x(hart, s.insn.rs1),
        x(hart, s.insn.rs2),
        s.insn.imm,
    )
    .unwrap_or_else(|| unknown_fusion());
    hart.x[s.insn.rd as usize & 31] = value;
    let pc = pc_of(hart, b);
    let target = if super::ir::branch_taken(b.insn.op, x(hart, b.insn.rs1), x(hart, b.insn.rs2)) {
        pc.wrapping_add(b.insn.imm as u32)
    } else {
        pc.wrapping_add(b.insn.len as u32)
    };
    leave::<P>(hart, ctx, b, target)
}

/// `ir::fuse` made a unit no handler knows: a bug there, never something a guest can cause.
#[cold]
fn unknown_fusion() -> ! {
    unreachable!("fused unit outside the patterns the interpreter knows")
}

/// The handler for a fused unit headed by `i`, if it heads one.
fn fused_handler_for<P: Platform>(i: &Insn) -> Option<Handler> {
    use crate::isa::Fusion;
    Some(match i.fusion {
        Fusion::None => return None,
        Fusion::LuiAddi => fused_li,
        Fusion::AuipcAddi => fused_auipc_addi,
        Fusion::ShiftMask => fused_shift_mask,
        Fusion::AuipcJalr => fused_auipc_jalr::<P>,
        Fusion::LwRun => fused_lw_run::<P>,
        Fusion::SwRun => fused_sw_run::<P>,
        Fusion::CmpBranch => fused_cmp_branch::<P>,
    })
}

/// Choose the handler for `i`.
fn handler_for<P: Platform>(i: &Insn) -> Handler {
    use Op::*;
    // A pure operation writing x0 has no effect at all.
    let pure = |h: Handler| if i.rd == 0 { nop as Handler } else { h };
    match i.op {
        Lui => pure(op_li),
        Auipc => pure(op_auipc),
        Addi if i.rs1 == 0 => pure(op_li),
        Addi => pure(op_addi),
        Slti => pure(op_slti),
        Sltiu => pure(op_sltiu),
        Xori => pure(op_xori),
        Ori => pure(op_ori),
        Andi => pure(op_andi),
        Slli => pure(op_slli),
        Srli => pure(op_srli),
        Srai => pure(op_srai),
        Add => pure(op_add),
        Sub => pure(op_sub),
        Sll => pure(op_sll),
        Slt => pure(op_slt),
        Sltu => pure(op_sltu),
        Xor => pure(op_xor),
        Srl => pure(op_srl),
        Sra => pure(op_sra),
        Or => pure(op_or),
        And => pure(op_and),
        Mul => pure(op_mul),
        Mulh => pure(op_mulh),
        Mulhsu => pure(op_mulhsu),
        Mulhu => pure(op_mulhu),
        Div => pure(op_div),
        Divu => pure(op_divu),
        Rem => pure(op_rem),
        Remu => pure(op_remu),
        Sh1add => pure(op_sh1add),
        Sh2add => pure(op_sh2add),
        Sh3add => pure(op_sh3add),
        Andn => pure(op_andn),
        Orn => pure(op_orn),
        Xnor => pure(op_xnor),
        Clz => pure(op_clz),
        Ctz => pure(op_ctz),
        Cpop => pure(op_cpop),
        Max => pure(op_max),
        Maxu => pure(op_maxu),
        Min => pure(op_min),
        Minu => pure(op_minu),
        SextB => pure(op_sext_b),
        SextH => pure(op_sext_h),
        ZextH => pure(op_zext_h),
        Rol => pure(op_rol),
        Ror => pure(op_ror),
        Rori => pure(op_rori),
        OrcB => pure(op_orc_b),
        Rev8 => pure(op_rev8),
        Clmul => pure(op_clmul),
        Clmulh => pure(op_clmulh),
        Clmulr => pure(op_clmulr),
        Bclr => pure(op_bclr),
        Bclri => pure(op_bclri),
        Bext => pure(op_bext),
        Bexti => pure(op_bexti),
        Binv => pure(op_binv),
        Binvi => pure(op_binvi),
        Bset => pure(op_bset),
        Bseti => pure(op_bseti),
        CzeroEqz => pure(op_czero_eqz),
        CzeroNez => pure(op_czero_nez),
        Fence => nop,
        Beq => op_beq::<P>,
        Bne => op_bne::<P>,
        Blt => op_blt::<P>,
        Bge => op_bge::<P>,
        Bltu => op_bltu::<P>,
        Bgeu => op_bgeu::<P>,
        Jal => op_jal::<P>,
        Jalr => op_jalr::<P>,
        Lb => op_lb::<P>,
        Lh => op_lh::<P>,
        Lw => op_lw::<P>,
        Lbu => op_lbu::<P>,
        Lhu => op_lhu::<P>,
        Sb => op_sb::<P>,
        Sh => op_sh::<P>,
        Sw => op_sw::<P>,
        LrW | ScW | AmoswapW | AmoaddW | AmoxorW | AmoandW | AmoorW | AmominW | AmomaxW
        | AmominuW | AmomaxuW => op_atomic::<P>,
        Flw => op_flw::<P>,
        Fld => op_fld::<P>,
        Fsw => op_fsw::<P>,
        Fsd => op_fsd::<P>,
        FmaddS | FmsubS | FnmsubS | FnmaddS | FaddS | FsubS | FmulS | FdivS | FsqrtS | FsgnjS
        | FsgnjnS | FsgnjxS | FminS | FmaxS | FcvtWS | FcvtWuS | FmvXW | FeqS | FltS | FleS
        | FclassS | FcvtSW | FcvtSWu | FmvWX | FmaddD | FmsubD | FnmsubD | FnmaddD | FaddD
        | FsubD | FmulD | FdivD | FsqrtD | FsgnjD | FsgnjnD | FsgnjxD | FminD | FmaxD | FcvtSD
        | FcvtDS | FeqD | FltD | FleD | FclassD | FcvtWD | FcvtWuD | FcvtDW | FcvtDWu => op_fp,
        Illegal | FenceI | Ecall | Ebreak | Mret | Sret | Wfi | SfenceVma | Csrrw | Csrrs
        | Csrrc | Csrrwi | Csrrsi | Csrrci => op_system,
    }
}
