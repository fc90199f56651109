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
use super::contract::{between_blocks, block_exit, jump_slot, BlockExit, Exit, RunCtx};
use super::mem::{load, load_fast, store, store_fast};
use super::platform::Platform;
use super::semantics::{self, exec_atomic, exec_fp_mem, exec_system, sext16, sext8, x};
use crate::cpu::tlb::PAGE_MASK;
use crate::cpu::{fpu, Access, Hart, Trap};
use crate::isa::ops::OpClass;
use crate::isa::{Insn, Op};

/// Blocks entered per [`run_block`] call by chaining. Chaining nests calls; release builds
/// turn them into jumps, and this bound keeps the nesting shallow when they are not (debug).
pub const CHAIN_BUDGET: u32 = if cfg!(debug_assertions) { 2 } else { 64 };

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
fn compile<P: Platform>(insns: &[Insn]) -> Box<[Slot]> {
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

/// The interpreter's code: one slot array per block, by the engine's block index. Slot arrays
/// are boxed, so they stay put while more are added, until [`Code::reset`].
#[derive(Default)]
pub struct Code {
    blocks: Vec<Box<[Slot]>>,
}

impl Code {
    /// Make the slots for block `idx` (the next index: blocks are added in order) from its
    /// instructions, for platform type `P`; returns the block's entry for [`run_block`].
    pub fn add<P: Platform>(&mut self, idx: u32, insns: &[Insn]) -> *const () {
        debug_assert_eq!(idx as usize, self.blocks.len());
        self.blocks.push(compile::<P>(insns));
        self.entry(idx)
    }

    /// The entry of block `idx` for [`run_block`].
    #[inline(always)]
    pub fn entry(&self, idx: u32) -> *const () {
        self.blocks[idx as usize].as_ptr() as *const ()
    }

    /// Drop every block's slots (the engine dropped the blocks and every pointer to them).
    pub fn reset(&mut self) {
        self.blocks.clear();
    }
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
    first: *const (),
) -> BlockExit {
    let first = first as *const Slot;
    ctx.state.budget = ctx.state.chain_budget;
    ctx.state.checked = false;
    // SAFETY: per this function's contract; every slot array ends with an end slot, so handlers
    // only ever read slots of the array they were entered in.
    let exit = unsafe { ((*first).handler)(hart, ctx as *mut RunCtx<P> as *mut (), first) };
    ctx.state.chained += (ctx.state.chain_budget - ctx.state.budget) as u64;
    block_exit(&ctx.state, exit)
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
    let first = entry.slots as *const Slot;
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

/// A `fence` that orders stores before loads: a host full barrier (see
/// [`crate::isa::Insn::fence_orders_stores_before_loads`]).
unsafe fn op_fence_store_load(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    next(hart, ctx, slot)
}

/// A pure integer operation ([`OpClass::Alu`]) with `rd != x0` (the builder gives `rd = x0`
/// the `nop` handler): `x[rd] = alu(OP, x[rs1], x[rs2], imm)`. One instance per operation, so
/// the shared semantics fold to that operation's few host instructions.
unsafe fn op_alu<const OP: u8>(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    let op = match Op::from_index(OP) {
        Some(op) => op,
        None => Op::Illegal,
    };
    let value = semantics::alu(op, x(hart, s.insn.rs1), x(hart, s.insn.rs2), s.insn.imm)
        .unwrap_or_else(|| not_alu());
    hart.x[s.insn.rd as usize & 31] = value;
    next(hart, ctx, slot)
}

/// `x[rd] = imm` (`lui`, `addi rd, x0, imm`, folded constants), rd != x0.
unsafe fn op_li(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    hart.x[s.insn.rd as usize & 31] = s.insn.imm as u32;
    next(hart, ctx, slot)
}

/// `x[rd] = pc + imm`, rd != x0.
unsafe fn op_auipc(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    hart.x[s.insn.rd as usize & 31] = pc_of(hart, s).wrapping_add(s.insn.imm as u32);
    next(hart, ctx, slot)
}

/// An ALU handler was built for an operation outside the ALU class: a bug in `handler_for`,
/// never something a guest can cause.
#[cold]
fn not_alu() -> ! {
    unreachable!("ALU handler for an operation outside OpClass::Alu")
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
    match exec_system(hart, &s.insn, pc_of(hart, s), s.index) {
        Ok(exit) => exit,
        // `exec_system` left pc and instret at the instruction.
        Err(t) => Exit::trap(ctx, t),
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
    let value = semantics::alu(
        s.insn.op,
        x(hart, s.insn.rs1),
        x(hart, s.insn.rs2),
        s.insn.imm,
    )
    .unwrap_or_else(|| unknown_fusion());
    hart.x[s.insn.rd as usize & 31] = value;
    let pc = pc_of(hart, b);
    let target = if semantics::branch_taken(b.insn.op, x(hart, b.insn.rs1), x(hart, b.insn.rs2)) {
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

/// A pure integer operation the specialised table below lacks: the same semantics, with the
/// operation read from the slot.
unsafe fn op_alu_any(hart: &mut Hart, ctx: *mut (), slot: *const Slot) -> Exit {
    let s = &*slot;
    let value = semantics::alu(
        s.insn.op,
        x(hart, s.insn.rs1),
        x(hart, s.insn.rs2),
        s.insn.imm,
    )
    .unwrap_or_else(|| not_alu());
    hart.x[s.insn.rd as usize & 31] = value;
    next(hart, ctx, slot)
}

/// The specialised handler for ALU operation `op` (rd != x0).
fn alu_handler(op: Op) -> Handler {
    macro_rules! specialised {
        ($($name:ident)*) => {
            match op {
                $(Op::$name => op_alu::<{ Op::$name as u8 }>,)*
                // Every ALU operation is listed above (a unit test checks); anything else
                // still gets the right semantics.
                _ => op_alu_any,
            }
        };
    }
    specialised!(
        Addi Slti Sltiu Xori Ori Andi Slli Srli Srai Add Sub Sll Slt Sltu Xor Srl Sra Or And
        Mul Mulh Mulhsu Mulhu Div Divu Rem Remu Sh1add Sh2add Sh3add Andn Orn Xnor Clz Ctz
        Cpop Max Maxu Min Minu SextB SextH ZextH Rol Ror Rori OrcB Rev8 Clmul Clmulh Clmulr
        Bclr Bclri Bext Bexti Binv Binvi Bset Bseti CzeroEqz CzeroNez
    )
}

/// Choose the handler for `i`, by its class in the operation table.
fn handler_for<P: Platform>(i: &Insn) -> Handler {
    use Op::*;
    match i.op.class() {
        // A pure operation writing x0 has no effect at all.
        OpClass::Alu | OpClass::Auipc if i.rd == 0 => nop,
        OpClass::Alu if i.op == Lui || (i.op == Addi && i.rs1 == 0) => op_li,
        OpClass::Alu => alu_handler(i.op),
        OpClass::Auipc => op_auipc,
        OpClass::Fence if i.fence_orders_stores_before_loads() => op_fence_store_load,
        OpClass::Fence => nop,
        OpClass::Branch => match i.op {
            Beq => op_beq::<P>,
            Bne => op_bne::<P>,
            Blt => op_blt::<P>,
            Bge => op_bge::<P>,
            Bltu => op_bltu::<P>,
            _ => op_bgeu::<P>,
        },
        OpClass::Jal => op_jal::<P>,
        OpClass::Jalr => op_jalr::<P>,
        OpClass::Load { width, signed } => match (width, signed) {
            (1, true) => op_lb::<P>,
            (1, false) => op_lbu::<P>,
            (2, true) => op_lh::<P>,
            (2, false) => op_lhu::<P>,
            _ => op_lw::<P>,
        },
        OpClass::Store { width } => match width {
            1 => op_sb::<P>,
            2 => op_sh::<P>,
            _ => op_sw::<P>,
        },
        OpClass::Atomic => op_atomic::<P>,
        OpClass::FpMem => match i.op {
            Flw => op_flw::<P>,
            Fld => op_fld::<P>,
            Fsw => op_fsw::<P>,
            Fsd => op_fsd::<P>,
            _ => op_fp_mem::<P>,
        },
        OpClass::Fp => op_fp,
        OpClass::System => op_system,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alu_operation_has_a_specialised_handler() {
        for op in Op::ALL {
            if op.class() == OpClass::Alu && op != Op::Lui {
                assert!(
                    alu_handler(op) as usize != op_alu_any as Handler as usize,
                    "{op:?} falls back to the generic ALU handler"
                );
            }
        }
    }
}
