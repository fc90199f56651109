//! The LLVM IR builder: one function per region, `u64 region(Hart *hart, RunCtx *ctx)`, whose
//! return value is the run loop's exit code ([`Exit`]) with `hart.pc`/`hart.instret` set as the
//! interpreter would leave them, or, from a fast region that chains, the entry of the region
//! to go on in, which the caller calls next ([`abi::FIRST_REGION_ENTRY`]).
//!
//! - Guest registers the region touches live in `alloca`s (promoted to SSA values by LLVM's
//!   mem2reg under `T2Opt::Full`): loaded at entry, written back at every exit and trap;
//!   before a helper that runs an instruction, only the operands it reads are stored, and a
//!   helper that writes `x[rd]` is followed by a reload of that register. Fast regions, which
//!   no pass optimises, use the hart's registers in place.
//! - In fully optimised regions the f registers are promoted the same way (a loop's FP values
//!   then stay in host registers); fast regions, which no pass optimises, read and write them
//!   in the hart, which costs the same as a stack slot and keeps their IR (compile time) small.
//! - `instret` is a local too (a fast region's is `hart.instret` itself): it is advanced by
//!   each block's instruction count at the block's end (precisely what the interpreter
//!   counts), stored at exits and before helpers.
//! - Every exit branches to one shared exit block, which writes back the registers the region
//!   writes (their values arrive as phis), `instret` and the pc, and returns the exit code; so
//!   an exit costs a branch, not a copy of the write-back code. The branch leaves straight from
//!   the block that exits: O0 code generation pays for every basic block, and fast regions
//!   used to have about as many blocks that only jumped as blocks that did work.
//! - Loads and stores do the software-TLB lookup inline (tag compare that also tests the
//!   alignment, so a misaligned access takes the unlikely path) and call the shared slow path
//!   (`exec::abi`) otherwise; a slow path that reached a device (no TLB entry afterwards) makes
//!   the region leave at the end of the block, where the interpreter would call the platform.
//!   In fully optimised regions an access that is not its block's first leaves the region
//!   instead (a side exit at the access) and the block's rest runs in tier 1.
//! - Every transfer between the region's blocks makes the run loop's checks in one compare:
//!   `instret` against a cap that is the instruction limit, or the region's instruction budget
//!   if that comes first (so a loop returns to the run loop, where interrupts and timers are
//!   taken, in bounded time), or 0 once a slow path touched a device (the platform must run);
//!   so a region stops exactly where the interpreter would.
//! - Anything with shared Rust semantics (A, F/D, CSRs and system instructions, rare ALU
//!   operations) is a call to the same helper tier 1 uses.

use std::collections::HashMap;
use std::mem::{offset_of, size_of};

use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicMetadataTypeEnum, FunctionType, IntType};
use inkwell::values::{BasicMetadataValueEnum, BasicValue, FunctionValue, IntValue, PointerValue};
use inkwell::{AtomicOrdering, IntPredicate};

use super::native_fp::{self, NativeFp};
use super::region::{RegionBlock, RegionPlan};
use crate::cpu::csr::{Csrs, MSTATUS_FS, MSTATUS_SD};
use crate::cpu::tlb::{Tlb, TlbEntry, PAGE_MASK, TLB_ENTRIES};
use crate::cpu::Hart;
use crate::exec::abi::{self, Helpers, STATUS_CODE_WRITTEN, STATUS_TRAP};
use crate::exec::contract::{Exit, JumpEntry, RunState, JUMP_CACHE_SIZE};
use crate::exec::host_fp::{MXCSR_CLEAN, MXCSR_IEEE_FLAGS, MXCSR_TO_FFLAGS};
use crate::exec::policy::T2Opt;
use crate::isa::ops::OpClass;
use crate::isa::{Fusion, Insn, Op};

/// Instructions a region may retire (counted at transfers between its blocks) before it
/// returns to the run loop, so interrupts and timers are looked at in bounded time.
pub const REGION_INSN_BUDGET: u64 = 16 * 1024;

/// Everything the generated code needs to know about the host side, fixed per platform type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CodegenEnv {
    pub helpers: Helpers,
    /// The same helpers folding MXCSR's flags first and loading it clean after
    /// ([`Helpers::folding_for_platform`]): what a region with native FP operations calls.
    pub folding_helpers: Helpers,
    /// Guest `va` is at host `RunState::flat_base + va` for every cacheable RAM page.
    pub flat: bool,
    /// With `flat`: loads and stores go straight to `flat_base + va`, unchecked
    /// (`Platform::unchecked_memory`).
    pub unchecked: bool,
    /// How hard LLVM works on each region.
    pub opt: T2Opt,
    /// A fast region probes the TLB inline for its loads and stores, as a full one does,
    /// instead of calling the reporting helpers for every access. Regions only for hot blocks
    /// (tier 1 runs the rest) want it: in the guest, helper calls made `bench` under
    /// `--tier t2` take 1.00-1.05 s against tier 1's 0.68 s. Where every block gets a fast
    /// region (tier 1 off) compile time matters more: without the inline paths a region
    /// compiles several times faster.
    pub inline_tlb: bool,
}

/// [`Gen::translate`]'s memo when it holds no page: an access's masked address has none of
/// bits 3-11 set (the page offset's, past the alignment bits of an access of at most 8 bytes).
const NO_PAGE: u32 = 0xffc;

/// The stack pointer, x2.
const SP: u8 = 2;

/// The name of every region's function in its object.
pub const REGION_SYMBOL: &str = "rv32_region";

/// Symbol prefixes of the helpers in a region's object: the plain ones and the folding ones.
const PLAIN_HELPER: &str = "rv32.helper.";
const FOLDING_HELPER: &str = "rv32.folding_helper.";
/// Prefix of the `preserve_most` wrappers of slow-path helpers ([`Gen::call_cold`]).
const COLD_WRAPPER: &str = "rv32.cold.";
/// Prefix of their `preserve_all` versions, for regions with native F/D operations.
const COLD_ALL_WRAPPER: &str = "rv32.cold_all.";
/// LLVM's calling convention numbers for `preserve_mostcc` and `preserve_allcc`.
const PRESERVE_MOST_CC: u32 = 14;
const PRESERVE_ALL_CC: u32 = 15;
/// [`MXCSR_TO_FFLAGS`]'s copy in a region's module.
const MXCSR_TABLE: &str = "rv32.mxcsr_to_fflags";

impl CodegenEnv {
    /// The symbol by which region code calls the helper at `addr`.
    fn symbol_of(&self, addr: usize) -> Option<String> {
        if let Some(name) = self.helpers.name_of(addr) {
            Some(format!("{PLAIN_HELPER}{name}"))
        } else {
            let name = self.folding_helpers.name_of(addr)?;
            Some(format!("{FOLDING_HELPER}{name}"))
        }
    }

    /// The address of `symbol`, an undefined symbol of a region's object, in this process.
    pub fn resolve(&self, symbol: &str) -> Option<usize> {
        if let Some(name) = symbol.strip_prefix(PLAIN_HELPER) {
            self.helpers.address_of(name)
        } else {
            let name = symbol.strip_prefix(FOLDING_HELPER)?;
            self.folding_helpers.address_of(name)
        }
    }
}

/// The LLVM pass pipeline for `opt`, if any. `Fast` runs none, not even `mem2reg`: under
/// LLVM's O0 code generation (fast instruction selection, the fast register allocator) SSA
/// registers are spilled at every block boundary anyway, and the phis at the shared exit
/// become copies on every edge; registers left in their stack slots compile about twice as
/// fast and run faster (measured on tests/guest/bench: 1.8x less compile time, 1.6x faster).
pub fn passes(opt: T2Opt) -> Option<&'static str> {
    match opt {
        T2Opt::Full => Some("default<O2>"),
        T2Opt::Fast => None,
    }
}

/// The code generator's optimisation level for `opt`.
pub fn codegen_level(opt: T2Opt) -> inkwell::OptimizationLevel {
    match opt {
        T2Opt::Full => inkwell::OptimizationLevel::Aggressive,
        T2Opt::Fast => inkwell::OptimizationLevel::None,
    }
}

/// Offsets into [`Hart`] and the run context, from `offset_of!`.
struct Layout;

impl Layout {
    const X: u64 = offset_of!(Hart, x) as u64;
    const PC: u64 = offset_of!(Hart, pc) as u64;
    const INSTRET: u64 = offset_of!(Hart, instret) as u64;
    const TLB_READ: u64 = (offset_of!(Hart, tlb) + offset_of!(Tlb, read)) as u64;
    const TLB_WRITE: u64 = (offset_of!(Hart, tlb) + offset_of!(Tlb, write)) as u64;
    const ENTRY_SIZE: u64 = size_of::<TlbEntry>() as u64;
    const ENTRY_TAG: u64 = offset_of!(TlbEntry, tag) as u64;
    const ENTRY_ADDEND: u64 = offset_of!(TlbEntry, addend) as u64;
    /// `RunCtx` starts with its `RunState`.
    const STATE_LIMIT: u64 = offset_of!(RunState, limit) as u64;
    const STATE_FLAT_BASE: u64 = offset_of!(RunState, flat_base) as u64;
    const STATE_REGION_CAP: u64 = offset_of!(RunState, region_cap) as u64;
    const STATE_INDIRECT_IN: u64 = offset_of!(RunState, indirect_in_region) as u64;
    const STATE_INDIRECT_OUT: u64 = offset_of!(RunState, indirect_left_region) as u64;
    const STATE_T2_RETIRED: u64 = offset_of!(RunState, t2_retired) as u64;
    const STATE_JUMP_CACHE: u64 = offset_of!(RunState, jump_cache) as u64;
    const JUMP_ENTRY_SIZE: u64 = size_of::<JumpEntry>() as u64;
    const JUMP_ENTRY_PC: u64 = offset_of!(JumpEntry, pc) as u64;
    const JUMP_ENTRY_REGION: u64 = offset_of!(JumpEntry, region) as u64;
    const F: u64 = offset_of!(Hart, f) as u64;
    const FFLAGS: u64 = offset_of!(Hart, fflags) as u64;
    const FRM: u64 = offset_of!(Hart, frm) as u64;
    const MSTATUS: u64 = (offset_of!(Hart, csr) + offset_of!(Csrs, mstatus)) as u64;
}

/// Building the IR failed (a bug in this file or an LLVM refusal, never guest-controlled).
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// The IR builder refused an instruction.
    #[error("IR builder: {0}")]
    Builder(#[from] inkwell::builder::BuilderError),
    /// An intrinsic this generator uses is missing from the LLVM it runs on.
    #[error("LLVM intrinsic {0} is missing")]
    Intrinsic(&'static str),
    /// A call to an address that is no helper (code must name what it calls).
    #[error("no helper at {0:#x}")]
    UnknownHelper(usize),
    /// Inline assembly gave no value.
    #[error("inline assembly for {0} has no result")]
    InlineAsm(&'static str),
}

type Result<T> = std::result::Result<T, CodegenError>;

/// Build the function `name` for `plan` in `module`.
pub fn build_region<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
    plan: &RegionPlan,
    env: &CodegenEnv,
) -> Result<FunctionValue<'ctx>> {
    let i32t = context.i32_type();
    let ptrt = context.ptr_type(inkwell::AddressSpace::default());
    let fn_type = context
        .i64_type()
        .fn_type(&[ptrt.into(), ptrt.into()], false);
    let func = module.add_function(name, fn_type, None);
    // Nothing unwinds through a region (its helpers are `extern "C"`: a panic there aborts),
    // so LLVM emits no unwind tables for it.
    let nounwind = inkwell::attributes::Attribute::get_named_enum_kind_id("nounwind");
    func.add_attribute(
        inkwell::attributes::AttributeLoc::Function,
        context.create_enum_attribute(nounwind, 0),
    );
    let builder = context.create_builder();
    let entry = context.append_basic_block(func, "entry");
    builder.position_at_end(entry);
    let hart = func
        .get_nth_param(0)
        .map(|p| p.into_pointer_value())
        .unwrap_or_else(|| ptrt.const_null());
    let rctx = func
        .get_nth_param(1)
        .map(|p| p.into_pointer_value())
        .unwrap_or_else(|| ptrt.const_null());

    // Registers the region reads or writes, and those it writes (to write back at exits);
    // likewise the f registers, which only fully optimised regions keep in `alloca`s.
    let (mut used, mut written) = (0u32, 0u32);
    let (mut f_used, mut f_written) = (0u32, 0u32);
    for insn in plan.blocks.iter().flat_map(|b| &b.insns) {
        let info = insn.op.info();
        used |= 1 << (insn.rs1 & 31) | 1 << (insn.rs2 & 31) | 1 << (insn.rd & 31);
        used |= insn.int_sources() | insn.int_dests();
        written |= insn.int_dests();
        f_used |= fp_sources(insn);
        if info.fp_write {
            f_used |= 1 << (insn.rd & 31);
            f_written |= 1 << (insn.rd & 31);
        }
    }
    used &= !1;
    written &= !1;
    if env.opt != T2Opt::Full {
        (f_used, f_written) = (0, 0);
    }

    let mut g = Gen {
        context,
        module,
        b: builder,
        func,
        hart,
        rctx,
        i32t,
        i64t: context.i64_type(),
        regs: [None; 32],
        written,
        f_regs: [None; 32],
        f_written,
        fp_dirty: None,
        instret: ptrt.const_null(),
        cap: ptrt.const_null(),
        entry_instret: context.i64_type().const_zero(),
        mxcsr: ptrt.const_null(),
        native_fp: plan
            .blocks
            .iter()
            .flat_map(|b| &b.insns)
            .any(|i| i.op.class() == OpClass::Fp && native_fp::runs_natively(i)),
        flat_base: None,
        fp_entry: None,
        return_sites: plan.return_sites(),
        blocks: HashMap::new(),
        env,
        exit_bb: None,
        exits: std::cell::RefCell::new(Vec::new()),
        reg_cache: std::cell::RefCell::new([None; 32]),
        fp_known: std::cell::Cell::new(FpKnown::default()),
        page_memos: [None; 32],
        looping: plan
            .blocks
            .iter()
            .zip(plan.on_cycles())
            .filter_map(|(b, on_cycle)| on_cycle.then_some(b.pc))
            .collect(),
        in_loop: false,
    };
    let uses_fp = plan
        .blocks
        .iter()
        .flat_map(|b| &b.insns)
        .any(|i| matches!(i.op.class(), OpClass::Fp | OpClass::FpMem));
    g.prologue(used, f_used, uses_fp)?;
    if env.opt == T2Opt::Full && !env.flat {
        g.make_page_memos(plan)?;
    }
    g.exit_bb = Some(context.append_basic_block(func, "exit"));
    for block in &plan.blocks {
        let bb = context.append_basic_block(func, &format!("b_{:08x}", block.pc));
        g.blocks.insert(block.pc, bb);
    }
    let first = g.blocks[&plan.entry_pc];
    if plan.blocks.len() > 1 {
        // A region is entered at any of its blocks, the one `hart.pc` names: a block that an
        // earlier region traced needs no region of its own, and a hot loop nest is one region
        // however the guest enters it.
        let pc =
            g.b.build_load(i32t, g.hart_field(Layout::PC)?, "entry_pc")?
                .into_int_value();
        let cases: Vec<(IntValue<'ctx>, BasicBlock<'ctx>)> = plan
            .blocks
            .iter()
            .skip(1)
            .map(|b| (g.c32(b.pc), g.blocks[&b.pc]))
            .collect();
        g.switch(pc, first, &cases)?;
    } else {
        g.b.build_unconditional_branch(first)?;
    }
    for block in &plan.blocks {
        g.b.position_at_end(g.blocks[&block.pc]);
        g.block(block)?;
    }
    g.exit_block()?;
    Ok(func)
}

struct Gen<'ctx, 'a> {
    context: &'ctx Context,
    module: &'a Module<'ctx>,
    b: Builder<'ctx>,
    func: FunctionValue<'ctx>,
    hart: PointerValue<'ctx>,
    rctx: PointerValue<'ctx>,
    i32t: IntType<'ctx>,
    i64t: IntType<'ctx>,
    /// `alloca` of each register a fully optimised region uses (fast regions use the hart's:
    /// [`Gen::reg_slot`]).
    regs: [Option<PointerValue<'ctx>>; 32],
    /// Registers the region may write (written back at exits).
    written: u32,
    /// `alloca i64` of each f register a fully optimised region uses (`None`: in the hart).
    f_regs: [Option<PointerValue<'ctx>>; 32],
    /// f registers kept in `f_regs` that the region may write (written back at exits).
    f_written: u32,
    /// With `f_regs`: `alloca i32` of the `mstatus` bits (FS dirty, SD) that the region's
    /// f register writes set; the exit ORs them into the hart's `mstatus`. A store per write
    /// (the interpreter's) would stay in loops: LLVM cannot tell the hart from guest memory.
    fp_dirty: Option<PointerValue<'ctx>>,
    /// `alloca i64`: retired instructions up to the current block's start (a fast region
    /// counts in `hart.instret` itself: [`Gen::instret_ptr`]).
    instret: PointerValue<'ctx>,
    /// `alloca i64`: the region goes on to another of its blocks only while `instret` is
    /// below this: the run loop's instruction limit or the region's budget, whichever comes
    /// first; 0 once a slow path touched a device (leave at the end of the block). A fast
    /// region's is `RunState::region_cap` ([`Gen::cap_ptr`]).
    cap: PointerValue<'ctx>,
    /// `hart.instret` when the region was entered.
    entry_instret: IntValue<'ctx>,
    /// `alloca i32`: scratch for loading and storing MXCSR.
    mxcsr: PointerValue<'ctx>,
    /// The region has native F/D operations: MXCSR is loaded clean at entry, its flags are
    /// folded into `fflags` at the exit, and the region calls the folding helpers, which do
    /// both around their work.
    native_fp: bool,
    /// The flat guest-memory base, when the platform has one.
    flat_base: Option<IntValue<'ctx>>,
    /// With F/D instructions in the region: mstatus at entry, whether FP is on (FS not Off),
    /// and whether it is on with `frm` round-to-nearest-even. Read once: only CSR
    /// instructions and traps change them, and both end the region (a helper records a trap
    /// for the run loop). Helpers and native operations only set FS dirty.
    fp_entry: Option<FpEntry<'ctx>>,
    /// Return sites of the region's calls that are region blocks (indirect-jump candidates).
    return_sites: Vec<u32>,
    blocks: HashMap<u32, BasicBlock<'ctx>>,
    env: &'a CodegenEnv,
    /// The shared exit block, and what each exit brings to it.
    exit_bb: Option<BasicBlock<'ctx>>,
    exits: std::cell::RefCell<Vec<ExitEdge<'ctx>>>,
    /// A fast region (in place): each x register's value as last loaded or stored in the
    /// basic block named with it. Reading it again in that block uses the value: no pass
    /// forwards the store, and at O0 a value written and read back went through memory
    /// (a crc32 loop's fast region stored and reloaded its registers between every two
    /// instructions). Calls forget everything: helpers write registers in the hart.
    reg_cache: std::cell::RefCell<[Option<(BasicBlock<'ctx>, IntValue<'ctx>)>; 32]>,
    /// What the F/D instructions generated so far in the current guest block established
    /// about the FP state read at the region's entry ([`FpKnown`]).
    fp_known: std::cell::Cell<FpKnown>,
    /// The page memo of the loads based on each register in the region's loops, where it
    /// has one ([`Gen::translate`]).
    page_memos: [Option<PageMemo<'ctx>>; 32],
    /// The pcs of the region's blocks that are on a cycle of the region.
    looping: std::collections::HashSet<u32>,
    /// The current block is one of `looping`.
    in_loop: bool,
}

/// Where [`Gen::translate`] remembers a page: stack slots of the page (with no page,
/// [`NO_PAGE`]) and of its addend.
#[derive(Clone, Copy)]
struct PageMemo<'ctx> {
    page: PointerValue<'ctx>,
    addend: PointerValue<'ctx>,
}

/// An order [`Gen::compare_numbers`] tests.
#[derive(Clone, Copy)]
enum Ordering {
    Equal,
    Less,
    LessOrEqual,
}

/// Facts about the FP state read at a region's entry (which nothing in a region changes)
/// that hold at the current point of a guest block's code, because an earlier F/D
/// instruction of the block tested them and every path where they were false left the
/// region. A later instruction of the block skips the test, each an exit edge carrying every
/// live register: nbody's hot region (7 guest blocks) tested FP before each of its 66 FP loads
/// and stores, and now does 3 times.
#[derive(Clone, Copy, Default)]
struct FpKnown {
    /// FP is on: an F/D instruction completed (with FP off it traps, natively or in its
    /// helper).
    on: bool,
    /// FP is on and `frm` is RNE: a native operation with dynamic rounding went on past its
    /// side exit.
    on_rne: bool,
}

/// The FP state a region reads once at its entry ([`Gen::fp_entry`]).
#[derive(Clone, Copy)]
struct FpEntry<'ctx> {
    mstatus: IntValue<'ctx>,
    on: IntValue<'ctx>,
    on_rne: IntValue<'ctx>,
}

impl<'ctx> FpEntry<'ctx> {
    /// Whether an operation with rounding field `rm` (RNE, RTZ or dynamic: the native forms
    /// take no other) may run natively: FP on, and for dynamic, `frm` = RNE.
    fn runs_natively(&self, rm: u8) -> IntValue<'ctx> {
        if rm == 7 {
            self.on_rne
        } else {
            self.on
        }
    }
}

/// One edge into the shared exit block: the pc to leave with, the instructions of the current
/// block retired before leaving (added to `instret`), the exit code.
struct ExitEdge<'ctx> {
    from: BasicBlock<'ctx>,
    pc: IntValue<'ctx>,
    extra: IntValue<'ctx>,
    code: IntValue<'ctx>,
}

impl<'ctx> Gen<'ctx, '_> {
    fn c32(&self, v: u32) -> IntValue<'ctx> {
        self.i32t.const_int(v as u64, false)
    }

    fn c64(&self, v: u64) -> IntValue<'ctx> {
        self.i64t.const_int(v, false)
    }

    /// A pointer `offset` bytes into the hart.
    fn hart_field(&self, offset: u64) -> Result<PointerValue<'ctx>> {
        // SAFETY: the offset comes from `offset_of!` on `Hart`, so the address stays inside
        // the hart the generated code is given.
        Ok(unsafe {
            self.b.build_gep(
                self.context.i8_type(),
                self.hart,
                &[self.c64(offset)],
                "field",
            )?
        })
    }

    /// A pointer `offset` bytes into the run state (`RunCtx` begins with its `RunState`).
    fn state_field(&self, offset: u64) -> Result<PointerValue<'ctx>> {
        // SAFETY: the offset comes from `offset_of!` on `RunState`, which the run context
        // the generated code is given begins with.
        Ok(unsafe {
            self.b.build_gep(
                self.context.i8_type(),
                self.rctx,
                &[self.c64(offset)],
                "state",
            )?
        })
    }

    fn prologue(&mut self, used: u32, f_used: u32, uses_fp: bool) -> Result<()> {
        if uses_fp {
            let mstatus = self
                .b
                .build_load(self.i32t, self.hart_field(Layout::MSTATUS)?, "mstatus")?
                .into_int_value();
            let fs = self.b.build_and(mstatus, self.c32(MSTATUS_FS), "")?;
            let on = self
                .b
                .build_int_compare(IntPredicate::NE, fs, self.c32(0), "fs_on")?;
            let i8t = self.context.i8_type();
            let frm = self
                .b
                .build_load(i8t, self.hart_field(Layout::FRM)?, "frm")?
                .into_int_value();
            let rne = self
                .b
                .build_int_compare(IntPredicate::EQ, frm, i8t.const_zero(), "rne")?;
            let on_rne = self.b.build_and(on, rne, "fp_rne")?;
            self.fp_entry = Some(FpEntry {
                mstatus,
                on,
                on_rne,
            });
        }
        // A fast region works on the hart's registers in place: no pass would promote a
        // stack copy, and copying in at the entry, out at the exit and around helpers was IR
        // (compile time) and memory traffic for nothing.
        let in_place = self.in_place();
        if in_place {
            self.written = 0;
        }
        for r in 1..32u8 {
            if used & (1 << r) != 0 && !in_place {
                let field = self.hart_field(Layout::X + 4 * r as u64)?;
                let slot = self.b.build_alloca(self.i32t, &format!("x{r}"))?;
                let v = self.b.build_load(self.i32t, field, "")?;
                self.b.build_store(slot, v)?;
                self.regs[r as usize] = Some(slot);
            }
        }
        for r in 0..32u8 {
            if f_used & (1 << r) != 0 {
                let slot = self.b.build_alloca(self.i64t, &format!("f{r}"))?;
                let v = self.b.build_load(self.i64t, self.f_reg_in_hart(r)?, "")?;
                self.b.build_store(slot, v)?;
                self.f_regs[r as usize] = Some(slot);
            }
        }
        if f_used != 0 {
            let slot = self.b.build_alloca(self.i32t, "fp_dirty")?;
            self.b.build_store(slot, self.c32(0))?;
            self.fp_dirty = Some(slot);
        }
        let v = self
            .b
            .build_load(self.i64t, self.hart_field(Layout::INSTRET)?, "")?;
        if !in_place {
            self.instret = self.b.build_alloca(self.i64t, "instret")?;
            self.b.build_store(self.instret, v)?;
        }
        self.entry_instret = v.into_int_value();
        let limit_ptr = self.state_field(Layout::STATE_LIMIT)?;
        let limit = self
            .b
            .build_load(self.i64t, limit_ptr, "limit")?
            .into_int_value();
        let budget_end =
            self.b
                .build_int_add(self.entry_instret, self.c64(REGION_INSN_BUDGET), "")?;
        let sooner = self
            .b
            .build_int_compare(IntPredicate::ULT, budget_end, limit, "")?;
        let cap = self.b.build_select(sooner, budget_end, limit, "cap")?;
        if !in_place {
            self.cap = self.b.build_alloca(self.i64t, "cap")?;
        }
        self.b.build_store(self.cap_ptr()?, cap)?;
        self.mxcsr = self.b.build_alloca(self.i32t, "mxcsr")?;
        if self.native_fp {
            // Tier-1 code that chained here may have left flags pending in MXCSR.
            self.fold_mxcsr()?;
            self.clean_mxcsr()?;
        }
        if self.env.flat {
            let base_ptr = self.state_field(Layout::STATE_FLAT_BASE)?;
            self.flat_base = Some(
                self.b
                    .build_load(self.i64t, base_ptr, "flat_base")?
                    .into_int_value(),
            );
        }
        Ok(())
    }

    /// Where `x[r]` is kept, `None` for x0. A fast region addresses the hart's register
    /// afresh wherever it is used, and `hart.instret` ([`Gen::instret_ptr`]) and its cap
    /// ([`Gen::cap_ptr`]) likewise: O0 code generation folds an address built in the same
    /// basic block into the access, but spills one built in the entry block and reloads it
    /// in every block that uses it.
    fn reg_slot(&self, r: u8) -> Result<Option<PointerValue<'ctx>>> {
        let r = r & 31;
        if r == 0 {
            Ok(None)
        } else if self.in_place() {
            Ok(Some(self.hart_field(Layout::X + 4 * r as u64)?))
        } else {
            Ok(self.regs[r as usize])
        }
    }

    /// Where the region counts retired instructions: see [`Gen::instret`].
    fn instret_ptr(&self) -> Result<PointerValue<'ctx>> {
        if self.in_place() {
            self.hart_field(Layout::INSTRET)
        } else {
            Ok(self.instret)
        }
    }

    /// Where the region's cap is: see [`Gen::cap`].
    fn cap_ptr(&self) -> Result<PointerValue<'ctx>> {
        if !self.in_place() {
            return Ok(self.cap);
        }
        // The reporting helpers clear it (`RunState::region_cap`).
        self.state_field(Layout::STATE_REGION_CAP)
    }

    fn reg(&self, r: u8) -> Result<IntValue<'ctx>> {
        if let Some(v) = self.cached_reg(r) {
            return Ok(v);
        }
        match self.reg_slot(r)? {
            Some(slot) => {
                let v = self.b.build_load(self.i32t, slot, "")?.into_int_value();
                self.cache_reg(r, v);
                Ok(v)
            }
            None => Ok(self.c32(0)),
        }
    }

    fn set_reg(&self, r: u8, v: IntValue<'ctx>) -> Result<()> {
        if let Some(slot) = self.reg_slot(r)? {
            self.b.build_store(slot, v)?;
            self.cache_reg(r, v);
        }
        Ok(())
    }

    /// `x[r]`'s value in the current basic block of a fast region, if it was loaded or stored
    /// there since the last call ([`Gen::reg_cache`]).
    fn cached_reg(&self, r: u8) -> Option<IntValue<'ctx>> {
        let bb = self.b.get_insert_block()?;
        match self.reg_cache.borrow()[usize::from(r & 31)] {
            Some((at, v)) if self.in_place() && at == bb => Some(v),
            _ => None,
        }
    }

    fn cache_reg(&self, r: u8, v: IntValue<'ctx>) {
        if let Some(bb) = self.b.get_insert_block().filter(|_| self.in_place()) {
            self.reg_cache.borrow_mut()[usize::from(r & 31)] = Some((bb, v));
        }
    }

    /// A call may write any register in the hart: forget the cached values.
    fn forget_cached_regs(&self) {
        *self.reg_cache.borrow_mut() = [None; 32];
    }

    /// Store the registers the region writes, and `instret`, to the hart.
    fn write_back(&self) -> Result<()> {
        self.write_back_registers()?;
        self.store_instret()
    }

    /// Store the f registers the region keeps in `alloca`s and may have written, and OR the
    /// `mstatus` bits their writes set ([`Gen::fp_dirty`]) into the hart's.
    fn write_back_fp(&self) -> Result<()> {
        for r in 0..32u8 {
            self.write_back_f(r)?;
        }
        if let Some(slot) = self.fp_dirty {
            let dirty = self.b.build_load(self.i32t, slot, "")?.into_int_value();
            let ptr = self.hart_field(Layout::MSTATUS)?;
            let mstatus = self.b.build_load(self.i32t, ptr, "")?.into_int_value();
            let mstatus = self.b.build_or(mstatus, dirty, "")?;
            self.b.build_store(ptr, mstatus)?;
        }
        Ok(())
    }

    /// Before a helper that runs instruction `i` from the hart: store the integer registers
    /// `i` reads (if the region writes them) and `instret`. Nothing else: a helper records a
    /// trap for the run loop instead of taking it, and a region leaves through the exit
    /// block, which writes back every register, so other registers may stay in SSA values
    /// (a full write-back per helper call was about a third of a region's IR).
    fn write_back_operands(&self, i: &Insn) -> Result<()> {
        let stale = i.int_sources() & self.written & !1;
        for r in (1..32u8).filter(|&r| stale & 1 << r != 0) {
            let v = self.reg(r)?;
            self.b
                .build_store(self.hart_field(Layout::X + 4 * u64::from(r))?, v)?;
        }
        self.store_instret()
    }

    /// Store the instructions retired up to the current block's start to `hart.instret`
    /// (where a fast region keeps them anyway).
    fn store_instret(&self) -> Result<()> {
        if self.in_place() {
            return Ok(());
        }
        let v = self.b.build_load(self.i64t, self.instret, "")?;
        self.b.build_store(self.hart_field(Layout::INSTRET)?, v)?;
        Ok(())
    }

    /// A fast region, which no pass optimises: it works on the hart's x registers in place
    /// (copies would gain nothing), and its cap lives in the run state, where the reporting
    /// helpers it calls for every access clear it.
    fn in_place(&self) -> bool {
        self.env.opt == T2Opt::Fast
    }

    /// Reload `x[r]` from the hart (a helper wrote it), unless the region works in place.
    fn reload(&self, r: u8) -> Result<()> {
        if self.in_place() {
            return Ok(());
        }
        if let Some(slot) = self.regs[r as usize & 31].filter(|_| r != 0) {
            let v = self
                .b
                .build_load(self.i32t, self.hart_field(Layout::X + 4 * r as u64)?, "")?;
            self.b.build_store(slot, v)?;
        }
        Ok(())
    }

    /// Leave the region: registers and `instret + extra` to the hart, `hart.pc = pc`, return
    /// `exit`. Ends the current basic block.
    fn leave_region(&self, pc: IntValue<'ctx>, extra: u64, exit: Exit) -> Result<()> {
        self.leave_with(pc, self.c64(extra), self.c32(exit.0))
    }

    /// [`Gen::leave_region`] with values computed at run time.
    fn leave_with(
        &self,
        pc: IntValue<'ctx>,
        extra: IntValue<'ctx>,
        code: IntValue<'ctx>,
    ) -> Result<()> {
        let exit_bb = self.exit_edge(pc, extra, code)?;
        self.b.build_unconditional_branch(exit_bb)?;
        Ok(())
    }

    /// Leave the region as [`Gen::leave_region`] does if `cond` (rarely true), else go on at
    /// `cont`. Ends the current basic block.
    fn leave_if(
        &self,
        cond: IntValue<'ctx>,
        pc: IntValue<'ctx>,
        extra: u64,
        exit: Exit,
        cont: BasicBlock<'ctx>,
    ) -> Result<()> {
        let exit_bb = self.exit_edge(pc, self.c64(extra), self.c32(exit.0))?;
        self.branch_unlikely(cond, exit_bb, cont)
    }

    /// The shared exit block, as the target of the branch that ends the current basic block
    /// (the caller builds it): the exit's values arrive from this block. Branching there
    /// directly, instead of through a block that only jumps, saves a basic block per exit,
    /// which fast regions' O0 code generation pays for in time and in jumps.
    fn exit_edge(
        &self,
        pc: IntValue<'ctx>,
        extra: IntValue<'ctx>,
        code: IntValue<'ctx>,
    ) -> Result<BasicBlock<'ctx>> {
        let (Some(from), Some(exit_bb)) = (self.b.get_insert_block(), self.exit_bb) else {
            return Err(CodegenError::Builder(
                inkwell::builder::BuilderError::UnsetPosition,
            ));
        };
        self.exits.borrow_mut().push(ExitEdge {
            from,
            pc,
            extra,
            code,
        });
        Ok(exit_bb)
    }

    /// Store the x and f registers the region keeps in `alloca`s and may have written.
    fn write_back_registers(&self) -> Result<()> {
        for r in 1..32u8 {
            if self.written & (1 << r) != 0 {
                let v = self.reg(r)?;
                self.b
                    .build_store(self.hart_field(Layout::X + 4 * r as u64)?, v)?;
            }
        }
        self.write_back_fp()
    }

    /// The shared exit block: write back, set pc and instret, return the exit code.
    fn exit_block(&self) -> Result<()> {
        let Some(exit_bb) = self.exit_bb else {
            return Ok(());
        };
        self.b.position_at_end(exit_bb);
        let exits = self.exits.borrow();
        if exits.is_empty() {
            self.b.build_unreachable()?;
            return Ok(());
        }
        let pc = self.b.build_phi(self.i32t, "exit_pc")?;
        let extra = self.b.build_phi(self.i64t, "exit_extra")?;
        let code = self.b.build_phi(self.i32t, "exit_code")?;
        for e in exits.iter() {
            pc.add_incoming(&[(&e.pc, e.from)]);
            extra.add_incoming(&[(&e.extra, e.from)]);
            code.add_incoming(&[(&e.code, e.from)]);
        }
        if self.native_fp {
            self.fold_mxcsr()?;
        }
        self.write_back_registers()?;
        let base = self
            .b
            .build_load(self.i64t, self.instret_ptr()?, "")?
            .into_int_value();
        let instret = self
            .b
            .build_int_add(base, extra.as_basic_value().into_int_value(), "")?;
        self.b
            .build_store(self.hart_field(Layout::INSTRET)?, instret)?;
        self.b.build_store(
            self.hart_field(Layout::PC)?,
            pc.as_basic_value().into_int_value(),
        )?;
        self.count_retired(instret)?;
        self.chain_or_return(
            pc.as_basic_value().into_int_value(),
            code.as_basic_value().into_int_value(),
        )
    }

    /// The end of the exit block, with the hart written back: leaving with a plain next pc,
    /// go on in the region the jump cache has for it if the run loop's checks pass
    /// ([`abi`]'s `region_chain_helper`); otherwise return `code` (or the exit code the checks
    /// gave) to whoever entered. A fully optimised region goes on with a guaranteed tail
    /// call, so chains of any length use no stack. A fast region returns the next region's
    /// entry instead, and whoever entered it calls that ([`abi::FIRST_REGION_ENTRY`]): LLVM's fast
    /// instruction selection cannot make tail calls, and one in the exit block sent every
    /// fast region's exit block through SelectionDAG (a boot's fast compiles take about 8%
    /// less CPU without it).
    fn chain_or_return(&self, pc: IntValue<'ctx>, code: IntValue<'ctx>) -> Result<()> {
        let next =
            self.b
                .build_int_compare(IntPredicate::EQ, code, self.c32(Exit::NEXT.0), "next")?;
        let probe = self.new_bb("probe");
        let chain = self.new_bb("chain");
        let ret = self.new_bb("ret");
        self.b.build_conditional_branch(next, probe, ret)?;
        self.b.position_at_end(ret);
        let code = self.b.build_int_z_extend(code, self.i64t, "")?;
        self.b.build_return(Some(&code))?;

        // Only a jump-cache entry for `pc` with a region can chain: without one (the next
        // block runs in tier 1, or nothing has it yet) the region returns at once instead of
        // calling the helper, and whoever entered it goes on (tier 1's stub probes for the
        // block's code inline).
        self.b.position_at_end(probe);
        let slot = self.b.build_and(
            self.b.build_right_shift(pc, self.c32(1), false, "")?,
            self.c32(JUMP_CACHE_SIZE as u32 - 1),
            "slot",
        )?;
        let slot = self.b.build_int_z_extend(slot, self.i64t, "")?;
        let offset = self
            .b
            .build_int_mul(slot, self.c64(Layout::JUMP_ENTRY_SIZE), "")?;
        let cache_ptr = self.state_field(Layout::STATE_JUMP_CACHE)?;
        let ptrt = self.hart.get_type();
        let cache = self.b.build_load(ptrt, cache_ptr, "jump_cache")?;
        let entry_field = |field: u64| {
            let at = self.b.build_int_add(offset, self.c64(field), "")?;
            // SAFETY: the jump cache has `JUMP_CACHE_SIZE` entries and the slot is below
            // that; the field offset is from `offset_of!`.
            Ok::<_, CodegenError>(unsafe {
                self.b.build_gep(
                    self.context.i8_type(),
                    cache.into_pointer_value(),
                    &[at],
                    "",
                )?
            })
        };
        let entry_pc = self
            .b
            .build_load(self.i32t, entry_field(Layout::JUMP_ENTRY_PC)?, "")?
            .into_int_value();
        let region = self
            .b
            .build_load(self.i64t, entry_field(Layout::JUMP_ENTRY_REGION)?, "")?
            .into_int_value();
        let same_pc = self
            .b
            .build_int_compare(IntPredicate::EQ, entry_pc, pc, "")?;
        let has_region = self
            .b
            .build_int_compare(IntPredicate::NE, region, self.c64(0), "")?;
        let may_chain = self.b.build_and(same_pc, has_region, "may_chain")?;
        self.b.build_conditional_branch(may_chain, chain, ret)?;

        self.b.position_at_end(chain);
        let found = self.call(
            self.env.helpers.chain,
            self.i64t.fn_type(&[ptrt.into(), ptrt.into()], false),
            &[],
        )?;
        if self.env.opt == T2Opt::Fast {
            // An exit code, or the next region's entry: the caller tells them apart.
            self.b.build_return(Some(&found))?;
            return Ok(());
        }
        let is_region = self.b.build_int_compare(
            IntPredicate::UGE,
            found,
            self.c64(abi::FIRST_REGION_ENTRY),
            "is_region",
        )?;
        let tail = self.new_bb("tail");
        let leave = self.new_bb("leave");
        self.b.build_conditional_branch(is_region, tail, leave)?;
        self.b.position_at_end(leave);
        self.b.build_return(Some(&found))?;

        self.b.position_at_end(tail);
        let target = self.b.build_int_to_ptr(found, ptrt, "region")?;
        let call = self.b.build_indirect_call(
            self.func.get_type(),
            target,
            &[self.hart.into(), self.rctx.into()],
            "",
        )?;
        call.set_tail_call_kind(inkwell::values::LLVMTailCallKind::LLVMTailCallKindMustTail);
        let result = call
            .try_as_basic_value()
            .basic()
            .map(|v| v.into_int_value())
            .unwrap_or_else(|| self.c64(0));
        self.b.build_return(Some(&result))?;
        Ok(())
    }

    /// Add the instructions retired since the region was entered (`instret` is the count
    /// now) to the run state's tier-2 total (for `--stats`).
    fn count_retired(&self, instret: IntValue<'ctx>) -> Result<()> {
        let retired = self.b.build_int_sub(instret, self.entry_instret, "")?;
        let ptr = self.state_field(Layout::STATE_T2_RETIRED)?;
        let total = self.b.build_load(self.i64t, ptr, "")?.into_int_value();
        let total = self.b.build_int_add(total, retired, "")?;
        self.b.build_store(ptr, total)?;
        Ok(())
    }

    /// Branch to the block of the case `value` equals, else to `default`. Fully optimised, a
    /// `switch` in a basic block of its own: LLVM's fast instruction selection cannot select
    /// one and hands the rest of its basic block to the slower SelectionDAG selector. In a
    /// fast region, a chain of compares that fast selection takes: a region's entry switch
    /// was about a tenth of its O0 compile time (a boot's regions through `llc -O0`), and
    /// entering at its k-th block costs k compares.
    fn switch(
        &self,
        value: IntValue<'ctx>,
        default: BasicBlock<'ctx>,
        cases: &[(IntValue<'ctx>, BasicBlock<'ctx>)],
    ) -> Result<()> {
        if self.env.opt == T2Opt::Full {
            let dispatch = self.new_bb("dispatch");
            self.b.build_unconditional_branch(dispatch)?;
            self.b.position_at_end(dispatch);
            self.b.build_switch(value, default, cases)?;
            return Ok(());
        }
        if cases.is_empty() {
            self.b.build_unconditional_branch(default)?;
        }
        for (k, &(case, target)) in cases.iter().enumerate() {
            let next = if k + 1 == cases.len() {
                default
            } else {
                self.new_bb("dispatch")
            };
            let hit = self
                .b
                .build_int_compare(IntPredicate::EQ, value, case, "")?;
            self.b.build_conditional_branch(hit, target, next)?;
            self.b.position_at_end(next);
        }
        Ok(())
    }

    /// The helpers this region calls: folding ones if it has native FP operations.
    fn helpers(&self) -> &Helpers {
        if self.native_fp {
            &self.env.folding_helpers
        } else {
            &self.env.helpers
        }
    }

    fn new_bb(&self, name: &str) -> BasicBlock<'ctx> {
        self.context.append_basic_block(self.func, name)
    }

    /// A conditional branch that `cond` rarely takes (to `unlikely`).
    fn branch_unlikely(
        &self,
        cond: IntValue<'ctx>,
        unlikely: BasicBlock<'ctx>,
        likely: BasicBlock<'ctx>,
    ) -> Result<()> {
        // A test settled at compile time (an FP state an earlier instruction tested,
        // `FpKnown`) leaves `unlikely` without a predecessor, and it is not generated.
        if let Some(c) = cond.get_zero_extended_constant() {
            self.b
                .build_unconditional_branch(if c != 0 { unlikely } else { likely })?;
            return Ok(());
        }
        let br = self.b.build_conditional_branch(cond, unlikely, likely)?;
        let weights = self.context.metadata_node(&[
            self.context.metadata_string("branch_weights").into(),
            self.c32(1).into(),
            self.c32(2000).into(),
        ]);
        let _ = br.set_metadata(weights, self.context.get_kind_id("prof"));
        Ok(())
    }

    /// After the block's instructions retired (already added to `instret`): go on to the block
    /// at `target`, in the region when it is one of its blocks and the run loop's checks pass,
    /// else leave for the run loop.
    fn goto(&self, target: u32) -> Result<()> {
        let target_v = self.c32(target);
        let Some(&bb) = self.blocks.get(&target) else {
            return self.leave_region(target_v, 0, Exit::NEXT);
        };
        let stop = self.must_stop()?;
        self.leave_if(stop, target_v, 0, Exit::NEXT, bb)
    }

    /// The run loop's checks between blocks, in one compare (see `cap`): the instruction
    /// limit, the region's budget, a device touched (the platform must run).
    fn must_stop(&self) -> Result<IntValue<'ctx>> {
        let instret = self
            .b
            .build_load(self.i64t, self.instret_ptr()?, "")?
            .into_int_value();
        let cap = self
            .b
            .build_load(self.i64t, self.cap_ptr()?, "")?
            .into_int_value();
        Ok(self
            .b
            .build_int_compare(IntPredicate::UGE, instret, cap, "")?)
    }

    /// A conditional branch to `taken` if `cond`, else to `not_taken`, after the block's
    /// instructions retired: each side goes on in the region or leaves, as [`Gen::goto`].
    /// Built with as few basic blocks as the sides allow: when both stay in the region, the
    /// run loop's checks come first, for both.
    fn branch_to(&self, cond: IntValue<'ctx>, taken: u32, not_taken: u32) -> Result<()> {
        if taken == not_taken {
            return self.goto(taken);
        }
        let pcs = (self.c32(taken), self.c32(not_taken));
        match (self.blocks.get(&taken), self.blocks.get(&not_taken)) {
            (Some(&yes), Some(&no)) => {
                let stop = self.must_stop()?;
                let pick = self.new_bb("pick");
                let select_pc = |g: &Self| -> Result<IntValue<'ctx>> {
                    Ok(g.b.build_select(cond, pcs.0, pcs.1, "")?.into_int_value())
                };
                if self.in_place() {
                    // A fast region: one basic block fewer to generate at O0.
                    let pc = select_pc(self)?;
                    self.leave_if(stop, pc, 0, Exit::NEXT, pick)?;
                } else {
                    // The pc to leave with is chosen on the way out only: computed before
                    // the check (the exit's value arrives from this block), it cost every
                    // branch of a hot loop two constant moves and a `cmov`.
                    let stopping = self.new_bb("stop");
                    self.branch_unlikely(stop, stopping, pick)?;
                    self.b.position_at_end(stopping);
                    let pc = select_pc(self)?;
                    self.leave_region(pc, 0, Exit::NEXT)?;
                }
                self.b.position_at_end(pick);
                self.b.build_conditional_branch(cond, yes, no)?;
                Ok(())
            }
            (None, None) => {
                let pc = self
                    .b
                    .build_select(cond, pcs.0, pcs.1, "")?
                    .into_int_value();
                self.leave_region(pc, 0, Exit::NEXT)
            }
            (Some(_), None) => {
                let out = self.exit_edge(pcs.1, self.c64(0), self.c32(Exit::NEXT.0))?;
                let yes = self.new_bb("taken");
                self.b.build_conditional_branch(cond, yes, out)?;
                self.b.position_at_end(yes);
                self.goto(taken)
            }
            (None, Some(_)) => {
                let out = self.exit_edge(pcs.0, self.c64(0), self.c32(Exit::NEXT.0))?;
                let no = self.new_bb("not_taken");
                self.b.build_conditional_branch(cond, out, no)?;
                self.b.position_at_end(no);
                self.goto(not_taken)
            }
        }
    }

    /// An indirect jump to `target`: if the target is the return site of a call in the region
    /// (so a loop that calls a function of the same page and comes back stays one loop) or
    /// the jump's `predicted` target (its profile), and a block of the region, go on there
    /// with the checks of any in-region transfer; otherwise leave. Sound in every mode: the
    /// region's blocks all lie in the page whose translation the run loop validated at entry.
    fn indirect_jump(&self, target: IntValue<'ctx>, predicted: Option<u32>) -> Result<()> {
        let mut pcs = self.return_sites.clone();
        pcs.extend(predicted.filter(|pc| self.blocks.contains_key(pc)));
        pcs.sort_unstable();
        pcs.dedup();
        if pcs.is_empty() {
            return self.leave_region(target, 0, Exit::NEXT);
        }
        let miss = self.new_bb("indirect_miss");
        let cases: Vec<(IntValue<'ctx>, BasicBlock<'ctx>)> = pcs
            .iter()
            .map(|&pc| (self.c32(pc), self.new_bb(&format!("indirect_{pc:08x}"))))
            .collect();
        self.switch(target, miss, &cases)?;
        for (&pc, &(_, bb)) in pcs.iter().zip(&cases) {
            self.b.position_at_end(bb);
            self.count(Layout::STATE_INDIRECT_IN)?;
            self.goto(pc)?;
        }
        self.b.position_at_end(miss);
        self.count(Layout::STATE_INDIRECT_OUT)?;
        self.leave_region(target, 0, Exit::NEXT)
    }

    /// Add one to the `u64` counter `offset` bytes into the run state.
    fn count(&self, offset: u64) -> Result<()> {
        let ptr = self.state_field(offset)?;
        let v = self.b.build_load(self.i64t, ptr, "")?.into_int_value();
        let v = self.b.build_int_add(v, self.c64(1), "")?;
        self.b.build_store(ptr, v)?;
        Ok(())
    }

    /// Count the block's `n` instructions as retired.
    fn retire(&self, n: u64) -> Result<()> {
        let v = self
            .b
            .build_load(self.i64t, self.instret_ptr()?, "")?
            .into_int_value();
        let v = self.b.build_int_add(v, self.c64(n), "")?;
        self.b.build_store(self.instret_ptr()?, v)?;
        Ok(())
    }

    fn block(&mut self, block: &RegionBlock) -> Result<()> {
        // Entered from other blocks too: nothing is known of the FP state yet.
        self.fp_known.set(FpKnown::default());
        self.in_loop = self.looping.contains(&block.pc);
        let n = block.insns.len();
        let mut pc = block.pc;
        let mut index = 0;
        while index < n {
            let i = &block.insns[index];
            let next_pc = pc.wrapping_add(i.len as u32);
            if index + 1 == n && i.ends_block() {
                let target = match block.pc_relative_jump_target() {
                    Some(t) => JumpTarget::Known(t),
                    None => JumpTarget::Computed(block.predicted),
                };
                return self.block_end(i, pc, index as u64, n as u64, target);
            }
            match self.insn(i, pc, index as u64)? {
                Flow::Next => {}
                Flow::Skip => {
                    // The fused unit covers the next instruction, whose effect is included.
                    pc = next_pc.wrapping_add(block.insns[index + 1].len as u32);
                    index += 2;
                    continue;
                }
            }
            pc = next_pc;
            index += 1;
        }
        // Fell off the end (size limit or page end).
        self.retire(n as u64)?;
        self.goto(pc)
    }

    /// The block-ending instruction `i` at `pc` (the `index`-th of `n`); where a `jalr`
    /// goes, if it ends the block.
    fn block_end(
        &mut self,
        i: &Insn,
        pc: u32,
        index: u64,
        n: u64,
        jalr_target: JumpTarget,
    ) -> Result<()> {
        let next_pc = pc.wrapping_add(i.len as u32);
        match i.op.class() {
            OpClass::Branch => {
                let (a, b) = (self.reg(i.rs1)?, self.reg(i.rs2)?);
                let pred = match i.op {
                    Op::Beq => IntPredicate::EQ,
                    Op::Bne => IntPredicate::NE,
                    Op::Blt => IntPredicate::SLT,
                    Op::Bge => IntPredicate::SGE,
                    Op::Bltu => IntPredicate::ULT,
                    _ => IntPredicate::UGE,
                };
                let taken = self.b.build_int_compare(pred, a, b, "")?;
                self.retire(n)?;
                self.branch_to(taken, pc.wrapping_add(i.imm as u32), next_pc)
            }
            OpClass::Jal => {
                self.set_reg(i.rd, self.c32(next_pc))?;
                self.retire(n)?;
                self.goto(pc.wrapping_add(i.imm as u32))
            }
            OpClass::Jalr if i.rs1 == 0 => {
                self.set_reg(i.rd, self.c32(next_pc))?;
                self.retire(n)?;
                self.goto(i.imm as u32 & !1)
            }
            OpClass::Jalr => {
                let predicted = match jalr_target {
                    JumpTarget::Known(target) => {
                        // A pc-relative call: its base (the fused `auipc`) is written.
                        self.set_reg(i.rd, self.c32(next_pc))?;
                        self.retire(n)?;
                        return self.goto(target);
                    }
                    JumpTarget::Computed(predicted) => predicted,
                };
                // The target is read before the link is written: rd may equal rs1.
                let base = self.reg(i.rs1)?;
                let t = self.b.build_int_add(base, self.c32(i.imm as u32), "")?;
                let t = self.b.build_and(t, self.c32(!1), "")?;
                self.set_reg(i.rd, self.c32(next_pc))?;
                self.retire(n)?;
                self.indirect_jump(t, predicted)
            }
            _ => {
                // System instructions: the helper does what the interpreter does (pc and
                // instret included, from the block start and this instruction's index) and
                // says how to leave.
                self.write_back()?;
                let [lo, hi] = abi::insn_words(i);
                let ty = self.i32t.fn_type(
                    &[
                        self.hart.get_type().into(),
                        self.hart.get_type().into(),
                        self.i64t.into(),
                        self.i64t.into(),
                        self.i32t.into(),
                        self.i32t.into(),
                    ],
                    false,
                );
                // Always the folding helper: MXCSR may hold flags tier-1 code left pending,
                // which must reach `fflags` before a CSR instruction reads or clears it.
                let status = self.call(
                    self.env.folding_helpers.system,
                    ty,
                    &[
                        self.c64(lo).into(),
                        self.c64(hi).into(),
                        self.c32(pc).into(),
                        self.c32(index as u32).into(),
                    ],
                )?;
                // The helper set `hart.instret` as the interpreter would.
                let instret = self
                    .b
                    .build_load(self.i64t, self.hart_field(Layout::INSTRET)?, "")?
                    .into_int_value();
                self.count_retired(instret)?;
                let status = self.b.build_int_z_extend(status, self.i64t, "")?;
                self.b.build_return(Some(&status))?;
                Ok(())
            }
        }
    }

    /// Call helper at `addr` of type `ty` with (hart, ctx, args...); returns its result. A
    /// region with native FP operations calls folding helpers ([`Gen::helpers`]), which
    /// fold MXCSR's flags before their work and load it clean after, so a call site has no
    /// MXCSR code of its own.
    fn call(
        &self,
        addr: usize,
        ty: FunctionType<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<IntValue<'ctx>> {
        let f = self.helper_pointer(addr, ty)?;
        let call = self
            .b
            .build_indirect_call(ty, f, &self.helper_args(args), "")?;
        Ok(self.helper_result(call))
    }

    /// A helper's arguments: (hart, ctx, `args`...).
    fn helper_args(
        &self,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Vec<BasicMetadataValueEnum<'ctx>> {
        let mut all: Vec<BasicMetadataValueEnum<'ctx>> = vec![self.hart.into(), self.rctx.into()];
        all.extend_from_slice(args);
        all
    }

    /// What a helper call returns (0 if nothing); the helper may have written any register
    /// in the hart.
    fn helper_result(&self, call: inkwell::values::CallSiteValue<'ctx>) -> IntValue<'ctx> {
        self.forget_cached_regs();
        call.try_as_basic_value()
            .basic()
            .map(|v| v.into_int_value())
            .unwrap_or_else(|| self.c32(0))
    }

    /// [`Gen::call`] for a slow path the hot code rarely takes (TLB misses, devices,
    /// misaligned accesses). In fully optimised regions the call goes through a small wrapper
    /// with LLVM's `preserve_most` convention, which keeps every general-purpose register but
    /// r11 across the call: without it the guest registers a loop keeps in host registers
    /// that C calls clobber spill to the stack, and a loop-carried value (a checksum) went
    /// through memory on every iteration, slow path taken or not. Regions with native F/D
    /// operations keep f registers in vector registers too, which only `preserve_all` keeps
    /// (its wrapper saves them all, on the slow path): in nbody's loop in system mode (an
    /// FP load's TLB miss called its helper plainly) that halved the spill and reload
    /// instructions (3 148 -> 1 764) and cut code generation by a fifth to a half; an integer
    /// region compiled slower with it than with `preserve_most`.
    fn call_cold(
        &self,
        addr: usize,
        ty: FunctionType<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<IntValue<'ctx>> {
        if self.env.opt != T2Opt::Full {
            // Fast regions keep guest registers in memory: nothing to keep.
            return self.call(addr, ty, args);
        }
        let symbol = self
            .env
            .symbol_of(addr)
            .ok_or(CodegenError::UnknownHelper(addr))?;
        let (prefix, cc) = if self.native_fp {
            (COLD_ALL_WRAPPER, PRESERVE_ALL_CC)
        } else {
            (COLD_WRAPPER, PRESERVE_MOST_CC)
        };
        let name = format!("{prefix}{symbol}");
        let wrapper = match self.module.get_function(&name) {
            Some(f) => f,
            None => self.cold_wrapper(&name, cc, addr, ty)?,
        };
        let call = self.b.build_call(wrapper, &self.helper_args(args), "")?;
        call.set_call_convention(cc);
        Ok(self.helper_result(call))
    }

    /// The wrapper `name` with calling convention `cc` of the helper at `addr` (see
    /// [`Gen::call_cold`]): it passes its arguments on and returns the helper's result; LLVM
    /// saves what the C call may clobber.
    fn cold_wrapper(
        &self,
        name: &str,
        cc: u32,
        addr: usize,
        ty: FunctionType<'ctx>,
    ) -> Result<FunctionValue<'ctx>> {
        use inkwell::attributes::{Attribute, AttributeLoc};
        let f = self.module.add_function(name, ty, Some(Linkage::Internal));
        f.set_call_conventions(cc);
        for attr in ["noinline", "nounwind", "cold"] {
            let kind = Attribute::get_named_enum_kind_id(attr);
            f.add_attribute(
                AttributeLoc::Function,
                self.context.create_enum_attribute(kind, 0),
            );
        }
        let resume = self.b.get_insert_block();
        self.b
            .position_at_end(self.context.append_basic_block(f, "entry"));
        let args: Vec<BasicMetadataValueEnum<'ctx>> = f.get_param_iter().map(Into::into).collect();
        let target = self.helper_pointer(addr, ty)?;
        let call = self.b.build_indirect_call(ty, target, &args, "")?;
        match call.try_as_basic_value().basic() {
            Some(v) => self.b.build_return(Some(&v))?,
            None => self.b.build_return(None)?,
        };
        if let Some(bb) = resume {
            self.b.position_at_end(bb);
        }
        Ok(f)
    }

    /// The helper at `addr`, declared by name ([`CodegenEnv::symbol_of`]): the object holds
    /// a relocation the loader resolves, never this process's address.
    fn helper_pointer(&self, addr: usize, ty: FunctionType<'ctx>) -> Result<PointerValue<'ctx>> {
        let name = self
            .env
            .symbol_of(addr)
            .ok_or(CodegenError::UnknownHelper(addr))?;
        // A call to it is `call rel32` (`R_X86_64_PLT32`), which the loader points at the
        // helper itself: region code is loaded within reach of this executable's code.
        let f = self
            .module
            .get_function(&name)
            .unwrap_or_else(|| self.module.add_function(&name, ty, Some(Linkage::External)));
        Ok(f.as_global_value().as_pointer_value())
    }

    /// Leave with the trap the helper recorded, at the instruction at `pc` (the `index`-th of
    /// its block, not retired), if `status` says it trapped.
    fn trap_if(&self, status: IntValue<'ctx>, pc: u32, index: u64) -> Result<()> {
        let trapped =
            self.b
                .build_int_compare(IntPredicate::EQ, status, self.c32(STATUS_TRAP), "")?;
        let ok = self.new_bb("ok");
        self.leave_if(trapped, self.c32(pc), index, Exit::TRAP, ok)?;
        self.b.position_at_end(ok);
        Ok(())
    }

    /// After a store-capable helper: leave right after the instruction if it wrote a page that
    /// holds code (the region itself may have changed).
    fn code_written_if(&self, status: IntValue<'ctx>, next_pc: u32, index: u64) -> Result<()> {
        let hit = self.b.build_int_compare(
            IntPredicate::EQ,
            status,
            self.c32(STATUS_CODE_WRITTEN),
            "",
        )?;
        let ok = self.new_bb("ok");
        self.leave_if(hit, self.c32(next_pc), index + 1, Exit::CODE_WRITTEN, ok)?;
        self.b.position_at_end(ok);
        Ok(())
    }

    /// Emit instruction `i` (not block-ending) at `pc`, the `index`-th of its block.
    fn insn(&mut self, i: &Insn, pc: u32, index: u64) -> Result<Flow> {
        match i.fusion {
            Fusion::LuiAddi => {
                self.set_reg(i.rd, self.c32(i.imm as u32))?;
                return Ok(Flow::Skip);
            }
            Fusion::AuipcAddi => {
                self.set_reg(i.rd, self.c32(pc.wrapping_add(i.imm as u32)))?;
                return Ok(Flow::Skip);
            }
            Fusion::ShiftMask => {
                let v = self
                    .b
                    .build_and(self.reg(i.rs1)?, self.c32(i.imm as u32), "")?;
                self.set_reg(i.rd, v)?;
                return Ok(Flow::Skip);
            }
            // The other units keep their head unchanged: their instructions run one by one.
            _ => {}
        }
        match i.op.class() {
            OpClass::Alu if i.rd == 0 => {}
            OpClass::Alu => {
                let v = self.alu(i)?;
                self.set_reg(i.rd, v)?;
            }
            OpClass::Auipc => self.set_reg(i.rd, self.c32(pc.wrapping_add(i.imm as u32)))?,
            OpClass::Fence => self.fence(i)?,
            OpClass::Load { width, signed } => self.load(i, width, signed, pc, index)?,
            OpClass::Store { width } => self.store(i, width, pc, index)?,
            OpClass::Fp if native_fp::runs_natively(i) => self.native_fp(i, pc, index)?,
            OpClass::FpMem if native_fp::runs_natively(i) => self.fp_mem(i, pc, index)?,
            OpClass::Atomic | OpClass::Fp | OpClass::FpMem => {
                self.helper_insn(i, pc, index, false)?
            }
            // Block-ending classes are handled by `block_end`.
            OpClass::Branch | OpClass::Jal | OpClass::Jalr | OpClass::System => {}
        }
        Ok(Flow::Next)
    }

    /// An atomic, FP memory or FP instruction `i` at `pc` (the `index`-th of its block) run by
    /// its helper, which reads its operands from the hart and writes its result there.
    fn helper_insn(&mut self, i: &Insn, pc: u32, index: u64, cold: bool) -> Result<()> {
        let next_pc = pc.wrapping_add(i.len as u32);
        let helper = match i.op.class() {
            OpClass::Atomic => self.helpers().atomic,
            OpClass::FpMem => self.helpers().fp_mem,
            _ => self.helpers().fp,
        };
        self.write_back_operands(i)?;
        let f_sources = fp_sources(i);
        for r in 0..32u8 {
            if f_sources & (1 << r) != 0 {
                self.write_back_f(r)?;
            }
        }
        let [lo, hi] = abi::insn_words(i);
        let ty = self.i32t.fn_type(
            &[
                self.hart.get_type().into(),
                self.hart.get_type().into(),
                self.i64t.into(),
                self.i64t.into(),
            ],
            false,
        );
        let args = [self.c64(lo).into(), self.c64(hi).into()];
        let status = if cold {
            self.call_cold(helper, ty, &args)?
        } else {
            self.call(helper, ty, &args)?
        };
        self.forget_page_memos()?;
        self.trap_if(status, pc, index)?;
        let dests = i.int_dests();
        for r in (1..32u8).filter(|&r| dests & 1 << r != 0) {
            self.reload(r)?;
        }
        if i.op.info().fp_write {
            self.reload_f(i.rd)?;
        }
        if i.op.class() != OpClass::Fp {
            self.code_written_if(status, next_pc, index)?;
        }
        Ok(())
    }

    /// Run the MXCSR instruction `code` ([`native_fp::LOAD_MXCSR`] or `STORE_MXCSR`) on the
    /// scratch slot.
    fn mxcsr_asm(&self, code: &str) -> Result<()> {
        let ptrt = self.context.ptr_type(inkwell::AddressSpace::default());
        let ty = self.context.void_type().fn_type(&[ptrt.into()], false);
        self.host_instruction(
            ty,
            code.to_owned(),
            native_fp::MXCSR_CONSTRAINTS,
            &[self.mxcsr.into()],
        )?;
        Ok(())
    }

    /// Load MXCSR clean: every exception masked, RNE, no FTZ/DAZ, no flags.
    fn clean_mxcsr(&self) -> Result<()> {
        self.b.build_store(self.mxcsr, self.c32(MXCSR_CLEAN))?;
        self.mxcsr_asm(native_fp::LOAD_MXCSR)
    }

    /// `fflags |=` the IEEE flags MXCSR collected (mapped bit by bit), and FS dirty if any
    /// was raised, as the interpreter's commit does.
    fn fold_mxcsr(&self) -> Result<()> {
        self.mxcsr_asm(native_fp::STORE_MXCSR)?;
        let m = self
            .b
            .build_load(self.i32t, self.mxcsr, "")?
            .into_int_value();
        let m = self.b.build_and(m, self.c32(MXCSR_IEEE_FLAGS), "")?;
        let m = self.b.build_int_z_extend(m, self.i64t, "")?;
        let i8t = self.context.i8_type();
        // The table is part of the region's object (64 bytes of constants).
        let table = self
            .module
            .get_global(MXCSR_TABLE)
            .unwrap_or_else(|| {
                let values: Vec<_> = MXCSR_TO_FFLAGS
                    .iter()
                    .map(|&f| i8t.const_int(u64::from(f), false))
                    .collect();
                let init = i8t.const_array(&values);
                let table = self.module.add_global(init.get_type(), None, MXCSR_TABLE);
                table.set_linkage(Linkage::Private);
                table.set_constant(true);
                table.set_initializer(&init);
                table
            })
            .as_pointer_value();
        // SAFETY: `m` is at most 0x3f, within the 64-entry static table.
        let flag_ptr = unsafe { self.b.build_gep(i8t, table, &[m], "")? };
        let raised = self.b.build_load(i8t, flag_ptr, "")?.into_int_value();
        let fflags_ptr = self.hart_field(Layout::FFLAGS)?;
        let old = self.b.build_load(i8t, fflags_ptr, "")?.into_int_value();
        let new = self.b.build_or(old, raised, "")?;
        self.b.build_store(fflags_ptr, new)?;
        let any = self
            .b
            .build_int_compare(IntPredicate::NE, raised, i8t.const_zero(), "")?;
        let dirty = self
            .b
            .build_select(any, self.c32(MSTATUS_FS | MSTATUS_SD), self.c32(0), "")?
            .into_int_value();
        let mstatus_ptr = self.hart_field(Layout::MSTATUS)?;
        let mstatus = self
            .b
            .build_load(self.i32t, mstatus_ptr, "")?
            .into_int_value();
        let mstatus = self.b.build_or(mstatus, dirty, "")?;
        self.b.build_store(mstatus_ptr, mstatus)?;
        Ok(())
    }

    /// Whether an F/D operation with rounding field `rm` may run natively:
    /// [`FpEntry::runs_natively`], or true where an earlier one of this guest block
    /// established it ([`FpKnown`]).
    fn fp_runs_natively(&self, fp: &FpEntry<'ctx>, rm: u8) -> IntValue<'ctx> {
        let known = self.fp_known.get();
        if known.on_rne || (rm != 7 && known.on) {
            self.context.bool_type().const_all_ones()
        } else {
            fp.runs_natively(rm)
        }
    }

    /// Whether FP is on: [`FpEntry::on`], or true where an earlier F/D instruction of this
    /// guest block established it.
    fn fp_on(&self, fp: &FpEntry<'ctx>) -> IntValue<'ctx> {
        if self.fp_known.get().on {
            self.context.bool_type().const_all_ones()
        } else {
            fp.on
        }
    }

    /// An F/D instruction (rounding field `rm`, for a native computation; the `index`-th of
    /// its block) is generated: past it FP is on, and past a native computation with dynamic
    /// rounding that side-exits ([`Self::side_exits`]) when it cannot run, `frm` is RNE.
    fn fp_done(&self, rm: Option<u8>, index: u64) {
        let mut known = self.fp_known.get();
        known.on = true;
        known.on_rne |= rm == Some(7) && self.side_exits(index);
        self.fp_known.set(known);
    }

    /// Whether the unusual case of the `index`-th instruction of a block leaves the region
    /// (a side exit, [`Self::unusual_then`]) instead of calling the helper.
    fn side_exits(&self, index: u64) -> bool {
        index != 0 && self.env.opt != T2Opt::Fast
    }

    /// Whether `bb` has no predecessor (a branch to it was settled at compile time): then it
    /// is deleted, not generated.
    fn unreached(bb: BasicBlock<'ctx>) -> bool {
        if bb.get_first_use().is_some() {
            return false;
        }
        // SAFETY: nothing refers to the block (no use), and it has no instructions yet.
        unsafe { bb.delete() }.is_ok()
    }

    /// The FP state read at the region's entry ([`Gen::fp_entry`]).
    fn fp_state(&self) -> Result<FpEntry<'ctx>> {
        self.fp_entry.ok_or(CodegenError::Builder(
            inkwell::builder::BuilderError::UnsetPosition,
        ))
    }

    /// `mstatus |= FS | SD` (`mstatus` as loaded before): an f register was written, as the
    /// interpreter marks it. With promoted f registers, the bits wait in `fp_dirty` for the
    /// exit.
    fn mark_fp_dirty(&self, mstatus: IntValue<'ctx>) -> Result<()> {
        if let Some(slot) = self.fp_dirty {
            self.b
                .build_store(slot, self.c32(MSTATUS_FS | MSTATUS_SD))?;
            return Ok(());
        }
        let dirty = self
            .b
            .build_or(mstatus, self.c32(MSTATUS_FS | MSTATUS_SD), "")?;
        self.b
            .build_store(self.hart_field(Layout::MSTATUS)?, dirty)?;
        Ok(())
    }

    /// `flw`, `fld`, `fsw` or `fsd` `i` at `pc`, the `index`-th of its block: with FP on and
    /// an aligned access to a RAM page the TLB maps, inline like an integer access (a single
    /// loaded is NaN-boxed, an f register loaded marks FS dirty); everything else (FP off,
    /// misses, misaligned accesses, devices, faults, stores into code) through the helper.
    fn fp_mem(&mut self, i: &Insn, pc: u32, index: u64) -> Result<()> {
        let (size, write) = match i.op {
            Op::Flw => (4, false),
            Op::Fld => (8, false),
            Op::Fsw => (4, true),
            Op::Fsd => (8, true),
            // `runs_natively` sends the others (Zfh's flh, fsh) to the helper.
            _ => return self.helper_insn(i, pc, index, false),
        };
        let fp = self.fp_state()?;
        let (fs_on, mstatus) = (self.fp_on(&fp), fp.mstatus);
        let va = self.guest_va(i)?;
        let unchecked = self.unchecked_address(va)?;
        let (fast, slow, done) = (
            self.new_bb("fpm_fast"),
            self.new_bb("fpm_slow"),
            self.new_bb("fpm_done"),
        );
        let (host, align) = match unchecked {
            Some(host) => {
                self.branch_unlikely(self.b.build_not(fs_on, "")?, slow, fast)?;
                self.b.position_at_end(fast);
                (host, 1)
            }
            None => (
                self.translate(i.rs1, va, size, write, Some(fs_on), (fast, slow))?,
                size,
            ),
        };
        let ty = ty_of(self.context, size);
        if write {
            let v = self
                .b
                .build_load(self.i64t, self.f_reg(i.rs2)?, "")?
                .into_int_value();
            let v = self.b.build_int_truncate_or_bit_cast(v, ty, "")?;
            // Pages holding code have no write entries, so this never changes code.
            self.store_aligned(host, v, align)?;
        } else {
            let raw = self.load_aligned(ty, host, align)?;
            if unchecked.is_some() {
                // As for integer loads: it must fault even if its value dies.
                if let Some(inst) = raw.as_instruction_value() {
                    let _ = inst.set_volatile(true);
                }
            }
            self.write_f(i.rd, raw, mstatus)?;
        }
        self.b.build_unconditional_branch(done)?;
        // FP off, and checked: misses, devices, misaligned accesses, faults (as for integer
        // accesses, `load`).
        self.unusual_then(i, pc, index, slow, done)?;
        self.fp_done(None, index);
        Ok(())
    }

    /// Write `f[rd]` with `bits` (an `i64`, or an `i32` single that gets NaN-boxed) and mark
    /// FS dirty (and SD) from `mstatus` as loaded, as the interpreter's commit does.
    fn write_f(&self, rd: u8, bits: IntValue<'ctx>, mstatus: IntValue<'ctx>) -> Result<()> {
        let bits = if bits.get_type().get_bit_width() == 64 {
            bits
        } else {
            let wide = self.b.build_int_z_extend(bits, self.i64t, "")?;
            self.b
                .build_or(wide, self.c64(0xffff_ffff_0000_0000), "boxed")?
        };
        self.b.build_store(self.f_reg(rd)?, bits)?;
        self.mark_fp_dirty(mstatus)
    }

    /// At `slow`: run `i` (at `pc`, the `index`-th of its block) through its helper, then go
    /// on at `done`, where the builder is left.
    fn helper_then(
        &mut self,
        i: &Insn,
        pc: u32,
        index: u64,
        slow: BasicBlock<'ctx>,
        done: BasicBlock<'ctx>,
    ) -> Result<()> {
        if Self::unreached(slow) {
            self.b.position_at_end(done);
            return Ok(());
        }
        self.b.position_at_end(slow);
        self.helper_insn(i, pc, index, true)?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// At `slow`, the unusual case of F/D computation or FP access `i` (at `pc`, the
    /// `index`-th of its block): FP off, a rounding mode other than RNE, a badly boxed single,
    /// a NaN result of a fused multiply-add, an access the inline TLB path cannot do. In a
    /// fully optimised region, past a block's first instruction, it is a side exit: the
    /// region leaves at `i` (the instructions before it retired), and the block the run loop
    /// then builds at `pc` has `i` first, where it takes the helper ([`Self::helper_then`]).
    /// A side exit is one branch to the exit block, where a helper call is a call, a trap
    /// test and a join: about half of a native operation's IR and basic blocks, and LLVM's O2
    /// pipeline spends its time on those joins (nbody's hot region: 0.55 s -> 0.12 s of
    /// `opt` and `llc`). Fast regions call the helper: under `--tier t2` the block at a side
    /// exit would need a region of its own before it runs, and code full of NaNs (or under
    /// another rounding mode) would keep leaving through them. Integer loads and stores take
    /// side exits by the same rule (`load`, `store`).
    /// The builder is left at `done`.
    fn unusual_then(
        &mut self,
        i: &Insn,
        pc: u32,
        index: u64,
        slow: BasicBlock<'ctx>,
        done: BasicBlock<'ctx>,
    ) -> Result<()> {
        if Self::unreached(slow) {
            self.b.position_at_end(done);
            return Ok(());
        }
        if !self.side_exits(index) {
            return self.helper_then(i, pc, index, slow, done);
        }
        self.side_exit(slow, pc, index)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// At `slow`: leave the region at the instruction at `pc`, the `index`-th of its block,
    /// which does not retire (a side exit, [`Self::unusual_then`]).
    fn side_exit(&self, slow: BasicBlock<'ctx>, pc: u32, index: u64) -> Result<()> {
        self.b.position_at_end(slow);
        self.leave_region(self.c32(pc), index, Exit::NEXT)
    }

    /// The guest address of load or store `i`: `x[rs1] + imm`.
    fn guest_va(&self, i: &Insn) -> Result<IntValue<'ctx>> {
        Ok(self
            .b
            .build_int_add(self.reg(i.rs1)?, self.c32(i.imm as u32), "va")?)
    }

    /// A load of `ty` from `host`, aligned to `align` bytes (the access's size where the fast
    /// path checked the alignment, 1 where it did not).
    fn load_aligned(
        &self,
        ty: IntType<'ctx>,
        host: PointerValue<'ctx>,
        align: u32,
    ) -> Result<IntValue<'ctx>> {
        let raw = self.b.build_load(ty, host, "")?;
        if let Some(inst) = raw.as_instruction_value() {
            let _ = inst.set_alignment(align);
        }
        Ok(raw.into_int_value())
    }

    /// A store of `v` to `host`, aligned to `align` bytes (as in [`Self::load_aligned`]).
    fn store_aligned(&self, host: PointerValue<'ctx>, v: IntValue<'ctx>, align: u32) -> Result<()> {
        let st = self.b.build_store(host, v)?;
        let _ = st.set_alignment(align);
        Ok(())
    }

    /// The host address of `va` when accesses need no check (`CodegenEnv::unchecked`): the
    /// host's page protection catches a bad one, and x86 performs a misaligned one as user
    /// mode's emulation would.
    fn unchecked_address(&self, va: IntValue<'ctx>) -> Result<Option<PointerValue<'ctx>>> {
        let Some(base) = self.flat_base.filter(|_| self.env.unchecked) else {
            return Ok(None);
        };
        let va64 = self.b.build_int_z_extend(va, self.i64t, "")?;
        let host = self.b.build_int_add(va64, base, "")?;
        Ok(Some(self.b.build_int_to_ptr(
            host,
            self.hart.get_type(),
            "host",
        )?))
    }

    /// Where `f[r]` lives in the region: its `alloca`, or the hart's field.
    fn f_reg(&self, r: u8) -> Result<PointerValue<'ctx>> {
        match self.f_regs[usize::from(r & 31)] {
            Some(slot) => Ok(slot),
            None => self.f_reg_in_hart(r),
        }
    }

    /// The hart's `f[r]`.
    fn f_reg_in_hart(&self, r: u8) -> Result<PointerValue<'ctx>> {
        self.hart_field(Layout::F + 8 * u64::from(r & 31))
    }

    /// Store `f[r]` to the hart if the region keeps it in an `alloca` and may have changed it.
    fn write_back_f(&self, r: u8) -> Result<()> {
        if let Some(slot) = self.f_regs[usize::from(r & 31)] {
            if self.f_written & (1 << (r & 31)) != 0 {
                let v = self.b.build_load(self.i64t, slot, "")?;
                self.b.build_store(self.f_reg_in_hart(r)?, v)?;
            }
        }
        Ok(())
    }

    /// Reload `f[r]` from the hart into its `alloca` (a helper wrote it).
    fn reload_f(&self, r: u8) -> Result<()> {
        if let Some(slot) = self.f_regs[usize::from(r & 31)] {
            let v = self.b.build_load(self.i64t, self.f_reg_in_hart(r)?, "")?;
            self.b.build_store(slot, v)?;
        }
        Ok(())
    }

    /// The F/D computation `i` (with a native form, rounding RNE or dynamic) at `pc`, the
    /// `index`-th of its block: natively when FP is on, the rounding mode is RNE, singles are
    /// NaN-boxed and a fused multiply-add's result is not a NaN (another operation's NaN result
    /// becomes the canonical NaN); otherwise (unlikely) through the helper.
    fn native_fp(&mut self, i: &Insn, pc: u32, index: u64) -> Result<()> {
        if native_fp::is_exact(i.op) {
            return self.exact_fp(i, pc, index);
        }
        if let Some(conversion) = native_fp::to_int(i) {
            return self.fp_to_int(i, conversion, pc, index);
        }
        let Some(n) = native_fp::native(i.op) else {
            return self.helper_insn(i, pc, index, false);
        };
        let NativeFp {
            double,
            source_double,
            operands,
            ..
        } = n;
        let sources = [i.rs1, i.rs2, i.rs3];
        let sources = &sources[..usize::from(operands)];
        let (slow, native, commit, done) = (
            self.new_bb("fp_slow"),
            self.new_bb("fp_native"),
            self.new_bb("fp_commit"),
            self.new_bb("fp_done"),
        );
        let fp = self.fp_state()?;
        let mstatus = fp.mstatus;
        let mut ok = self.fp_runs_natively(&fp, i.rm);
        let mut values = Vec::with_capacity(sources.len());
        for &r in sources {
            let v = if source_double {
                self.b
                    .build_load(self.i64t, self.f_reg(r)?, "")?
                    .into_int_value()
            } else {
                // A single must be NaN-boxed.
                let (v, boxed) = self.single(r)?;
                ok = self.b.build_and(ok, boxed, "")?;
                v
            };
            values.push(v);
        }
        self.branch_unlikely(self.b.build_not(ok, "")?, slow, native)?;

        self.b.position_at_end(native);
        let (fty, ity) = if double {
            (self.context.f64_type(), self.i64t)
        } else {
            (self.context.f32_type(), self.i32t)
        };
        let source_fty = if source_double {
            self.context.f64_type()
        } else {
            self.context.f32_type()
        };
        let (code, constraints) = n.asm();
        let mut params: Vec<BasicMetadataTypeEnum<'ctx>> = Vec::new();
        let mut args: Vec<BasicMetadataValueEnum<'ctx>> = Vec::new();
        for &v in &values {
            params.push(source_fty.into());
            args.push(self.b.build_bit_cast(v, source_fty, "")?.into());
        }
        let r = self
            .host_instruction(fty.fn_type(&params, false), code, &constraints, &args)?
            .ok_or(CodegenError::InlineAsm(n.mnemonic))?
            .into_float_value();
        let nan = self
            .b
            .build_float_compare(inkwell::FloatPredicate::UNO, r, r, "nan")?;
        let mut bits = self.b.build_bit_cast(r, ity, "")?.into_int_value();
        if n.canonicalises_nan() {
            // One select instead of a slow path: each slow path is an exit edge carrying every
            // live register, which the register allocator pays for (nbody's hot region
            // compiled 5-10% faster without them).
            let canonical = if double {
                self.c64(crate::cpu::fpu::ops::F64_CANONICAL_NAN)
            } else {
                self.c32(crate::cpu::fpu::ops::F32_CANONICAL_NAN)
            };
            bits = self
                .b
                .build_select(nan, canonical, bits, "canonical")?
                .into_int_value();
            self.b.build_unconditional_branch(commit)?;
        } else {
            self.branch_unlikely(nan, slow, commit)?;
        }

        self.b.position_at_end(commit);
        self.write_f(i.rd, bits, mstatus)?;
        self.b.build_unconditional_branch(done)?;
        self.unusual_then(i, pc, index, slow, done)?;
        self.fp_done(Some(i.rm), index);
        Ok(())
    }

    /// Host instruction `code` (AT&T inline assembly with `constraints`) of type `ty` on
    /// `args`; its result, if it has one. Marked as having side effects: it reads or changes
    /// MXCSR, and LLVM neither drops it nor moves it ahead of the tests that guard it.
    fn host_instruction(
        &self,
        ty: FunctionType<'ctx>,
        code: String,
        constraints: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<Option<inkwell::values::BasicValueEnum<'ctx>>> {
        let asm = self.context.create_inline_asm(
            ty,
            code,
            constraints.to_owned(),
            true,
            false,
            None,
            false,
        );
        Ok(self
            .b
            .build_indirect_call(ty, asm, args, "")?
            .try_as_basic_value()
            .basic())
    }

    /// `fcvt.w.s` / `fcvt.w.d` `i` natively ([`native_fp::to_int`]) when FP is on, a dynamic
    /// rounding mode is RNE, a single is NaN-boxed and the source's magnitude is below 2^31
    /// (tested on the bits: no host FP instruction sees a NaN); otherwise through the helper
    /// (or a side exit, [`Self::unusual_then`]). One SSE conversion, whose inexact flag
    /// (MXCSR PE) is RISC-V's NX.
    fn fp_to_int(
        &mut self,
        i: &Insn,
        conversion: native_fp::ToInt,
        pc: u32,
        index: u64,
    ) -> Result<()> {
        let (slow, fast, done) = (
            self.new_bb("cvt_slow"),
            self.new_bb("cvt_fast"),
            self.new_bb("cvt_done"),
        );
        let fp = self.fp_state()?;
        let mut ok = self.fp_runs_natively(&fp, i.rm);
        // The biased exponent; to an unsigned word with the sign bit above it, so a negative
        // source is never below the limit.
        let (bits, exponent, fty) = if conversion.double {
            let v = self
                .b
                .build_load(self.i64t, self.f_reg(i.rs1)?, "")?
                .into_int_value();
            let e = self.b.build_right_shift(v, self.c64(52), false, "")?;
            let e = if conversion.unsigned {
                e
            } else {
                self.b.build_and(e, self.c64(0x7ff), "")?
            };
            (v, e, self.context.f64_type())
        } else {
            let (v, boxed) = self.single(i.rs1)?;
            ok = self.b.build_and(ok, boxed, "")?;
            let e = self.b.build_right_shift(v, self.c32(23), false, "")?;
            let e = if conversion.unsigned {
                e
            } else {
                self.b.build_and(e, self.c32(0xff), "")?
            };
            let e = self.b.build_int_z_extend(e, self.i64t, "")?;
            (v, e, self.context.f32_type())
        };
        let small = self.b.build_int_compare(
            IntPredicate::ULT,
            exponent,
            self.c64(conversion.exponent_limit()),
            "small",
        )?;
        ok = self.b.build_and(ok, small, "")?;
        self.branch_unlikely(self.b.build_not(ok, "")?, slow, fast)?;

        self.b.position_at_end(fast);
        let source = self.b.build_bit_cast(bits, fty, "")?;
        let ty = self.i32t.fn_type(&[fty.into()], false);
        let r = self
            .host_instruction(ty, conversion.asm(), "=r,x", &[source.into()])?
            .ok_or(CodegenError::InlineAsm("cvt"))?
            .into_int_value();
        self.set_reg(i.rd, r)?;
        self.b.build_unconditional_branch(done)?;
        self.unusual_then(i, pc, index, slow, done)?;
        self.fp_done(Some(i.rm), index);
        Ok(())
    }

    /// `f[r]` as a single: its low half, and whether it is NaN-boxed.
    fn single(&self, r: u8) -> Result<(IntValue<'ctx>, IntValue<'ctx>)> {
        let v = self
            .b
            .build_load(self.i64t, self.f_reg(r)?, "")?
            .into_int_value();
        let upper = self.b.build_right_shift(v, self.c64(32), false, "")?;
        let boxed =
            self.b
                .build_int_compare(IntPredicate::EQ, upper, self.c64(0xffff_ffff), "boxed")?;
        Ok((self.b.build_int_truncate(v, self.i32t, "")?, boxed))
    }

    /// Whether the single (`i32`) or double (`i64`) `bits` is a NaN, tested on the bits (no
    /// host FP instruction, so no host flag).
    fn is_nan(&self, bits: IntValue<'ctx>) -> Result<IntValue<'ctx>> {
        let ty = bits.get_type();
        let (magnitude, infinity) = if ty.get_bit_width() == 64 {
            (0x7fff_ffff_ffff_ffff, 0x7ff0_0000_0000_0000)
        } else {
            (0x7fff_ffff, 0x7f80_0000)
        };
        let m = self.b.build_and(bits, ty.const_int(magnitude, false), "")?;
        Ok(self
            .b
            .build_int_compare(IntPredicate::UGT, m, ty.const_int(infinity, false), "nan")?)
    }

    /// The exact F/D operation `i` ([`native_fp::is_exact`]) at `pc`, the `index`-th of its
    /// block: in plain IR when FP is on, singles are NaN-boxed, no operand is a NaN (compares,
    /// `fcvt.d.s`) and a dynamic rounding mode is valid (conversions); otherwise (unlikely)
    /// through the helper, which traps or raises flags as the interpreter does.
    fn exact_fp(&mut self, i: &Insn, pc: u32, index: u64) -> Result<()> {
        use Op::*;
        let (slow, fast, done) = (
            self.new_bb("xfp_slow"),
            self.new_bb("xfp_fast"),
            self.new_bb("xfp_done"),
        );
        let fp = self.fp_state()?;
        let mstatus = fp.mstatus;
        let mut ok = self.fp_on(&fp);
        let double = matches!(
            i.op,
            FsgnjD | FsgnjnD | FsgnjxD | FeqD | FltD | FleD | FminD | FmaxD | FclassD
        );
        // The f operands: singles' low halves (boxed) or doubles.
        let mut operands = Vec::with_capacity(2);
        let f_sources: &[u8] = match i.op {
            FmvWX | FcvtDW | FcvtDWu => &[],
            FmvXW | FcvtDS | FclassS | FclassD => &[i.rs1],
            _ => &[i.rs1, i.rs2],
        };
        for &r in f_sources {
            if double {
                let v = self
                    .b
                    .build_load(self.i64t, self.f_reg(r)?, "")?
                    .into_int_value();
                operands.push(v);
            } else if i.op == FmvXW {
                // The raw low half, boxed or not.
                operands.push(self.single(r)?.0);
            } else {
                let (v, boxed) = self.single(r)?;
                ok = self.b.build_and(ok, boxed, "")?;
                operands.push(v);
            }
        }
        if matches!(
            i.op,
            FeqS | FltS | FleS | FeqD | FltD | FleD | FminS | FmaxS | FminD | FmaxD | FcvtDS
        ) {
            for &v in &operands {
                let nan = self.is_nan(v)?;
                let not_nan = self.b.build_not(nan, "")?;
                ok = self.b.build_and(ok, not_nan, "")?;
            }
        }
        if matches!(i.op, FcvtDS | FcvtDW | FcvtDWu) && i.rm == 7 {
            // Exact, but a reserved dynamic rounding mode is still illegal.
            let i8t = self.context.i8_type();
            let frm = self
                .b
                .build_load(i8t, self.hart_field(Layout::FRM)?, "frm")?
                .into_int_value();
            let valid =
                self.b
                    .build_int_compare(IntPredicate::ULE, frm, i8t.const_int(4, false), "")?;
            ok = self.b.build_and(ok, valid, "")?;
        }
        self.branch_unlikely(self.b.build_not(ok, "")?, slow, fast)?;

        self.b.position_at_end(fast);
        let f64t = self.context.f64_type();
        let f32t = self.context.f32_type();
        match i.op {
            FsgnjS | FsgnjnS | FsgnjxS | FsgnjD | FsgnjnD | FsgnjxD => {
                let (a, b) = (operands[0], operands[1]);
                let ty = a.get_type();
                let sign_bit = if double { 1u64 << 63 } else { 1 << 31 };
                let sign = ty.const_int(sign_bit, false);
                let b_sign = match i.op {
                    FsgnjS | FsgnjD => b,
                    FsgnjnS | FsgnjnD => self.b.build_not(b, "")?,
                    _ => self.b.build_xor(a, b, "")?,
                };
                let b_sign = self.b.build_and(b_sign, sign, "")?;
                let magnitude = self.b.build_and(a, ty.const_int(sign_bit - 1, false), "")?;
                let r = self.b.build_or(magnitude, b_sign, "")?;
                self.write_f(i.rd, r, mstatus)?;
            }
            FmvXW => self.set_reg(i.rd, operands[0])?,
            FmvWX => {
                let x = self.reg(i.rs1)?;
                self.write_f(i.rd, x, mstatus)?;
            }
            FeqS | FltS | FleS | FeqD | FltD | FleD => {
                let order = match i.op {
                    FeqS | FeqD => Ordering::Equal,
                    FltS | FltD => Ordering::Less,
                    _ => Ordering::LessOrEqual,
                };
                let r = self.compare_numbers(operands[0], operands[1], order)?;
                let r = self.b.build_int_z_extend(r, self.i32t, "")?;
                self.set_reg(i.rd, r)?;
            }
            FminS | FmaxS | FminD | FmaxD => {
                let r = self.min_max(operands[0], operands[1], matches!(i.op, FminS | FminD))?;
                self.write_f(i.rd, r, mstatus)?;
            }
            FclassS | FclassD => {
                let r = self.classify(operands[0])?;
                self.set_reg(i.rd, r)?;
            }
            FcvtDS => {
                // Inline assembly with side effects, which LLVM keeps behind the NaN test: an
                // `fpext` it may move ahead of it, and of a signalling NaN that raises
                // MXCSR's invalid flag ([`Gen::compare_numbers`]).
                let a = self.b.build_bit_cast(operands[0], f32t, "")?;
                let ty = f64t.fn_type(&[f32t.into()], false);
                let r = self
                    .host_instruction(ty, "cvtss2sd $1, $0".to_owned(), "=x,x", &[a.into()])?
                    .ok_or(CodegenError::InlineAsm("cvtss2sd"))?;
                let r = self.b.build_bit_cast(r, self.i64t, "")?.into_int_value();
                self.write_f(i.rd, r, mstatus)?;
            }
            _ => {
                // fcvt.d.w, fcvt.d.wu: every 32-bit integer is a double exactly.
                let x = self.reg(i.rs1)?;
                let r = if i.op == FcvtDW {
                    self.b.build_signed_int_to_float(x, f64t, "")?
                } else {
                    self.b.build_unsigned_int_to_float(x, f64t, "")?
                };
                let r = self.b.build_bit_cast(r, self.i64t, "")?.into_int_value();
                self.write_f(i.rd, r, mstatus)?;
            }
        }
        self.b.build_unconditional_branch(done)?;
        self.unusual_then(i, pc, index, slow, done)?;
        self.fp_done(None, index);
        Ok(())
    }

    /// `fmin` (`min`) or `fmax` of the single (`i32`) or double (`i64`) bits `a` and `b`,
    /// neither a NaN: the smaller (larger) by [`Gen::compare_numbers`]; for equal values the
    /// bits' OR (AND), which differ only for zeros, where -0 is the smaller.
    fn min_max(&self, a: IntValue<'ctx>, b: IntValue<'ctx>, min: bool) -> Result<IntValue<'ctx>> {
        let (first, second, equal) = if min {
            (a, b, self.b.build_or(a, b, "")?)
        } else {
            (b, a, self.b.build_and(a, b, "")?)
        };
        // min: `a < b` picks a, `a > b` picks b; max: `b < a` picks a, `b > a` picks b.
        let picks_a = self.compare_numbers(first, second, Ordering::Less)?;
        let picks_b = self.compare_numbers(second, first, Ordering::Less)?;
        let r = self.b.build_select(picks_b, b, equal, "")?.into_int_value();
        Ok(self.b.build_select(picks_a, a, r, "")?.into_int_value())
    }

    /// Whether the single (`i32`) or double (`i64`) bits `a` and `b`, neither a NaN, are in
    /// `order`, compared on the bits. An LLVM `fcmp` has no side effects for LLVM, which may
    /// move it ahead of the branch that keeps NaNs (and everything after a trapping access)
    /// from it; a compare of a signalling NaN raises MXCSR's invalid flag, which the region's
    /// exit folds into `fflags`. Integer compares raise nothing. Mapping each value to
    /// `bits ^ (sign ? all ones : sign bit)` orders them as unsigned integers, except that -0
    /// comes just below +0, which IEEE compares equal.
    fn compare_numbers(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
        order: Ordering,
    ) -> Result<IntValue<'ctx>> {
        let ty = a.get_type();
        let width = u64::from(ty.get_bit_width());
        let sign = ty.const_int(1 << (width - 1), false);
        let key = |v: IntValue<'ctx>| -> Result<IntValue<'ctx>> {
            let spread = self
                .b
                .build_right_shift(v, ty.const_int(width - 1, false), true, "")?;
            let flip = self.b.build_or(spread, sign, "")?;
            Ok(self.b.build_xor(v, flip, "")?)
        };
        let either = self.b.build_or(a, b, "")?;
        let magnitudes = self
            .b
            .build_left_shift(either, ty.const_int(1, false), "")?;
        let both_zero =
            self.b
                .build_int_compare(IntPredicate::EQ, magnitudes, ty.const_zero(), "")?;
        Ok(match order {
            Ordering::Equal => {
                let same = self.b.build_int_compare(IntPredicate::EQ, a, b, "")?;
                self.b.build_or(same, both_zero, "")?
            }
            Ordering::Less => {
                let below = self
                    .b
                    .build_int_compare(IntPredicate::ULT, key(a)?, key(b)?, "")?;
                let not_zeros = self.b.build_not(both_zero, "")?;
                self.b.build_and(below, not_zeros, "")?
            }
            Ordering::LessOrEqual => {
                let at_most = self
                    .b
                    .build_int_compare(IntPredicate::ULE, key(a)?, key(b)?, "")?;
                self.b.build_or(at_most, both_zero, "")?
            }
        })
    }

    /// `fclass` of the single (`i32`) or double (`i64`) bits `v`: the one-hot class mask.
    fn classify(&self, v: IntValue<'ctx>) -> Result<IntValue<'ctx>> {
        let ty = v.get_type();
        let (width, mantissa) = if ty.get_bit_width() == 64 {
            (64u64, 52u64)
        } else {
            (32, 23)
        };
        let c = |x: u64| ty.const_int(x, false);
        let exp_max = (1u64 << (width - 1 - mantissa)) - 1;
        let negative = self.b.build_right_shift(v, c(width - 1), false, "")?;
        let negative = self
            .b
            .build_int_compare(IntPredicate::NE, negative, c(0), "")?;
        let exponent = self.b.build_right_shift(v, c(mantissa), false, "")?;
        let exponent = self.b.build_and(exponent, c(exp_max), "")?;
        let fraction = self.b.build_and(v, c((1u64 << mantissa) - 1), "")?;
        let eq =
            |x: IntValue<'ctx>, k: u64| self.b.build_int_compare(IntPredicate::EQ, x, c(k), "");
        let zero_fraction = eq(fraction, 0)?;
        let quiet = self.b.build_right_shift(v, c(mantissa - 1), false, "")?;
        let quiet = self.b.build_and(quiet, c(1), "")?;
        let quiet = eq(quiet, 1)?;
        // The mask itself, not `1 << class`: no shift for LLVM to vectorize (see the worker's
        // pass options).
        let bit = |n: u32| self.c32(1 << n);
        let sign_pick = |neg: u32, pos: u32| self.b.build_select(negative, bit(neg), bit(pos), "");
        // Classes (bits of the mask): 0 -inf, 1 -normal, 2 -subnormal, 3 -0,
        // 4 +0, 5 +subnormal, 6 +normal, 7 +inf, 8 signalling NaN, 9 quiet NaN.
        let infinity = sign_pick(0, 7)?.into_int_value();
        let nan = self
            .b
            .build_select(quiet, bit(9), bit(8), "")?
            .into_int_value();
        let special = self
            .b
            .build_select(zero_fraction, infinity, nan, "")?
            .into_int_value();
        let zero = sign_pick(3, 4)?.into_int_value();
        let subnormal = sign_pick(2, 5)?.into_int_value();
        let tiny = self
            .b
            .build_select(zero_fraction, zero, subnormal, "")?
            .into_int_value();
        let normal = sign_pick(1, 6)?.into_int_value();
        let is_special = eq(exponent, exp_max)?;
        let is_tiny = eq(exponent, 0)?;
        let class = self
            .b
            .build_select(is_tiny, tiny, normal, "")?
            .into_int_value();
        let class = self
            .b
            .build_select(is_special, special, class, "")?
            .into_int_value();
        Ok(class)
    }

    /// The TLB entry for `va` in the read or write array, and whether its tag matches `va`
    /// for an aligned access of `size` bytes.
    fn tlb_probe(
        &self,
        va: IntValue<'ctx>,
        size: u32,
        write: bool,
    ) -> Result<(PointerValue<'ctx>, IntValue<'ctx>)> {
        let index = self.b.build_right_shift(va, self.c32(12), false, "")?;
        let index = self
            .b
            .build_and(index, self.c32(TLB_ENTRIES as u32 - 1), "")?;
        let index = self.b.build_int_z_extend(index, self.i64t, "")?;
        let offset = self
            .b
            .build_int_mul(index, self.c64(Layout::ENTRY_SIZE), "")?;
        let base = if write {
            Layout::TLB_WRITE
        } else {
            Layout::TLB_READ
        };
        let offset = self.b.build_int_add(offset, self.c64(base), "")?;
        // SAFETY: `index` is masked to the TLB's size; the array offsets come from
        // `offset_of!`, so the entry lies inside the hart.
        let entry = unsafe {
            self.b
                .build_gep(self.context.i8_type(), self.hart, &[offset], "entry")?
        };
        // SAFETY: the tag is a field of the entry (`offset_of!`).
        let tag_ptr = unsafe {
            self.b.build_gep(
                self.context.i8_type(),
                entry,
                &[self.c64(Layout::ENTRY_TAG)],
                "",
            )?
        };
        let tag = self
            .b
            .build_load(self.i32t, tag_ptr, "tag")?
            .into_int_value();
        let masked = self
            .b
            .build_and(va, self.c32(!PAGE_MASK | (size - 1)), "")?;
        let hit = self
            .b
            .build_int_compare(IntPredicate::EQ, masked, tag, "hit")?;
        Ok((entry, hit))
    }

    /// The host address of `va` on a TLB hit (`entry` is its entry).
    fn host_address(
        &self,
        entry: PointerValue<'ctx>,
        va: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>> {
        let base = match self.flat_base {
            Some(base) => base,
            None => self.entry_addend(entry)?,
        };
        self.offset_by(va, base)
    }

    /// The host address of `va` in a page whose host address is `va + addend`.
    fn offset_by(&self, va: IntValue<'ctx>, addend: IntValue<'ctx>) -> Result<PointerValue<'ctx>> {
        let va64 = self.b.build_int_z_extend(va, self.i64t, "")?;
        let host = self.b.build_int_add(va64, addend, "")?;
        Ok(self
            .b
            .build_int_to_ptr(host, self.hart.get_type(), "host")?)
    }

    /// The addend (host address minus guest address) of TLB entry `entry`.
    fn entry_addend(&self, entry: PointerValue<'ctx>) -> Result<IntValue<'ctx>> {
        // SAFETY: the addend is a field of the entry (`offset_of!`).
        let addend_ptr = unsafe {
            self.b.build_gep(
                self.context.i8_type(),
                entry,
                &[self.c64(Layout::ENTRY_ADDEND)],
                "",
            )?
        };
        Ok(self
            .b
            .build_load(self.i64t, addend_ptr, "addend")?
            .into_int_value())
    }

    /// Translate `va` for an aligned `size`-byte access inline: go on in `fast`, where the
    /// builder is left and the returned host address is valid, if `also` (when given, a
    /// condition the access needs as well, expected true) holds and the TLB maps the page for
    /// the access; else branch to `slow`.
    ///
    /// In a fully optimised region in system mode, the loads in the region's loops that are
    /// based on the same register (but `sp`) share a page memo: stack slots of the page one
    /// of them last translated through the TLB and of that page's addend. A load from that
    /// page again (a loop's usual case) compares its page with the memo and adds the memo's
    /// addend: no TLB load, whose address depends on the guest address, stands between a
    /// computed address and its access (a crc32 loop's table lookup ran 1.7 times faster).
    /// Loads based on `sp`, stores and straight code gain nothing: their addresses are known
    /// early, and the processor overlaps the TLB load with other work (memos for stores as
    /// well measured the same in the guest's sieve and quicksort).
    ///
    /// The memo is as good as the TLB entry it copied while the region runs: what changes
    /// translations (`sfence.vma`, `satp`, `mstatus`, privilege changes) is a system
    /// instruction, which ends the region, or a trap, which leaves it; a page becomes code
    /// (losing its write entries) only when the run loop builds a block. A helper may reach a
    /// device, which may change mappings, so every helper call the region goes on after
    /// forgets the memos ([`Gen::forget_page_memos`]); so does each entry into the region. User mode has none: every page's addend is the flat base,
    /// and threads change each other's mappings.
    fn translate(
        &self,
        base: u8,
        va: IntValue<'ctx>,
        size: u32,
        write: bool,
        also: Option<IntValue<'ctx>>,
        (fast, slow): (BasicBlock<'ctx>, BasicBlock<'ctx>),
    ) -> Result<PointerValue<'ctx>> {
        let memo = if write || !self.in_loop {
            None
        } else {
            self.page_memos[usize::from(base & 31)]
        };
        let Some(memo) = memo else {
            let (entry, hit) = self.tlb_probe(va, size, write)?;
            match also {
                Some(also) => {
                    let ok = self.b.build_and(also, hit, "")?;
                    self.branch_unlikely(self.b.build_not(ok, "")?, slow, fast)?;
                }
                None => {
                    self.b.build_conditional_branch(hit, fast, slow)?;
                }
            }
            self.b.position_at_end(fast);
            return self.host_address(entry, va);
        };
        if let Some(also) = also {
            let next = self.new_bb("translate");
            self.branch_unlikely(self.b.build_not(also, "")?, slow, next)?;
            self.b.position_at_end(next);
        }
        let (reuse, probe, fill) = (
            self.new_bb("same_page"),
            self.new_bb("tlb_probe"),
            self.new_bb("tlb_hit"),
        );
        // The page, with the alignment bits: a misaligned access never matches a page.
        let masked = self
            .b
            .build_and(va, self.c32(!PAGE_MASK | (size - 1)), "")?;
        let last = self.memo_load(self.i32t, memo.page)?;
        let same = self
            .b
            .build_int_compare(IntPredicate::EQ, masked, last, "")?;
        self.branch_unlikely(self.b.build_not(same, "")?, probe, reuse)?;
        self.b.position_at_end(reuse);
        let remembered = self.memo_load(self.i64t, memo.addend)?;
        self.b.build_unconditional_branch(fast)?;
        self.b.position_at_end(probe);
        let (entry, hit) = self.tlb_probe(va, size, write)?;
        self.b.build_conditional_branch(hit, fill, slow)?;
        self.b.position_at_end(fill);
        let addend = self.entry_addend(entry)?;
        self.memo_store(memo.page, masked)?;
        self.memo_store(memo.addend, addend)?;
        self.b.build_unconditional_branch(fast)?;
        self.b.position_at_end(fast);
        let phi = self.b.build_phi(self.i64t, "addend")?;
        phi.add_incoming(&[(&remembered, reuse), (&addend, fill)]);
        self.offset_by(va, phi.as_basic_value().into_int_value())
    }

    /// A load from a page memo's stack slot (volatile: [`Gen::make_page_memos`]).
    fn memo_load(&self, ty: IntType<'ctx>, slot: PointerValue<'ctx>) -> Result<IntValue<'ctx>> {
        let v = self.b.build_load(ty, slot, "")?;
        if let Some(inst) = v.as_instruction_value() {
            let _ = inst.set_volatile(true);
        }
        Ok(v.into_int_value())
    }

    /// A store to a page memo's stack slot (volatile, as [`Gen::memo_load`]).
    fn memo_store(&self, slot: PointerValue<'ctx>, v: IntValue<'ctx>) -> Result<()> {
        let _ = self.b.build_store(slot, v)?.set_volatile(true);
        Ok(())
    }

    /// Make the page memos of the loads in `plan`'s loops, in the entry block: with no page.
    /// Memos are stack slots; as SSA values they became phis at every join of the region's
    /// blocks, which cost the register allocator more than the loads cost the region (a
    /// kernel region: 72 -> 99 ms). Their loads and stores are volatile, so they stay.
    fn make_page_memos(&mut self, plan: &RegionPlan) -> Result<()> {
        let mut bases = 0u32;
        for block in plan.blocks.iter().filter(|b| self.looping.contains(&b.pc)) {
            for i in &block.insns {
                let load = matches!(i.op.class(), OpClass::Load { .. })
                    || matches!(i.op, Op::Flw | Op::Fld);
                if load && i.rs1 != SP {
                    bases |= 1 << (i.rs1 & 31);
                }
            }
        }
        for r in 0..32u8 {
            if bases & (1 << r) != 0 {
                let page = self.b.build_alloca(self.i32t, &format!("page_memo{r}"))?;
                let addend = self.b.build_alloca(self.i64t, &format!("addend_memo{r}"))?;
                self.memo_store(page, self.c32(NO_PAGE))?;
                self.page_memos[usize::from(r)] = Some(PageMemo { page, addend });
            }
        }
        Ok(())
    }

    /// Forget every page memo: after a helper call past which the region goes on (an
    /// instruction's helper or an access's slow path; see [`Gen::translate`]). The chain
    /// and system helpers need none: the region leaves after them.
    fn forget_page_memos(&self) -> Result<()> {
        for memo in self.page_memos.iter().flatten() {
            self.memo_store(memo.page, self.c32(NO_PAGE))?;
        }
        Ok(())
    }

    /// After a slow path succeeded: whether the page is still not in the TLB, that is, the
    /// access went to a device (or uncacheable memory), so the platform must run next.
    fn device_access(&self, va: IntValue<'ctx>, size: u32, write: bool) -> Result<IntValue<'ctx>> {
        let (_, hit) = self.tlb_probe(va, size, write)?;
        Ok(self.b.build_not(hit, "device")?)
    }

    /// Leave at the end of the block if `device` (a device was accessed): the cap drops to 0.
    fn leave_at_block_end_if(&self, device: IntValue<'ctx>) -> Result<()> {
        let cap = self.cap_ptr()?;
        let old = self.b.build_load(self.i64t, cap, "")?.into_int_value();
        let v = self.b.build_select(device, self.c64(0), old, "")?;
        self.b.build_store(cap, v)?;
        Ok(())
    }

    /// A guest `fence`. One that orders stores before loads is a sequentially consistent LLVM
    /// fence (a host `mfence`, as in the interpreter and tier 1: device worker threads share
    /// guest memory, see [`Insn::fence_orders_stores_before_loads`]). Any other fence that
    /// orders something (not `pause`) is an acquire-release fence: no host instruction on
    /// x86-64, but LLVM may not move the region's guest loads and stores across it, which the
    /// other tiers never do either.
    fn fence(&self, i: &Insn) -> Result<()> {
        let predecessor = i.raw >> 24 & 0xf;
        let successor = i.raw >> 20 & 0xf;
        let ordering = if i.fence_orders_stores_before_loads() {
            AtomicOrdering::SequentiallyConsistent
        } else if predecessor != 0 && successor != 0 {
            AtomicOrdering::AcquireRelease
        } else {
            return Ok(());
        };
        self.b.build_fence(ordering, false, "")?;
        Ok(())
    }

    /// Load `i` at `pc`, the `index`-th of its block. A checked access the inline TLB path
    /// cannot do (a miss, a device, a misaligned access, a fault) calls the shared slow path
    /// and goes on, or, in a fully optimised region past a block's first instruction, is a
    /// side exit ([`Self::unusual_then`]): the region leaves at the access, and tier 1 (or the
    /// interpreter) runs the rest of the block. No value then lives across a call, and the
    /// access costs a compare and a branch to the exit block: nbody's loop in system mode
    /// compiles in 165 ms instead of 340 (332 -> 140 LLVM blocks, 2 256 -> 1 114 spills and
    /// reloads); the in-guest benchmark under auto 370 -> 361 ms (medians of 13), an OpenSBI
    /// boot unchanged. A device access leaves the region at the end of its block either way.
    fn load(&mut self, i: &Insn, width: u8, signed: bool, pc: u32, index: u64) -> Result<()> {
        let size = width as u32;
        let va = self.guest_va(i)?;
        if let Some(host) = self.unchecked_address(va)? {
            let raw = self.load_aligned(ty_of(self.context, size), host, 1)?;
            // Volatile: a load whose value is never used (rd = x0, or overwritten) must still
            // fault where the guest's would, so LLVM may not drop it.
            if let Some(inst) = raw.as_instruction_value() {
                let _ = inst.set_volatile(true);
            }
            let v = self.widen(raw, signed)?;
            return self.set_reg(i.rd, v);
        }
        if self.env.opt == T2Opt::Fast && !self.env.inline_tlb {
            // Through the reporting helper alone, without the inline TLB path: fast regions
            // compile several times faster without it (about 40 IR instructions and five
            // basic blocks less per access), and what is hot is compiled again with it. The
            // helper clears the cap (`RunState::region_cap`) where an inline path would miss.
            let helper = self.helpers().load_reporting;
            return self.load_by_helper(helper, i, size, signed, va, pc, index);
        }
        let (fast, slow, done) = (
            self.new_bb("ld_fast"),
            self.new_bb("ld_slow"),
            self.new_bb("ld_done"),
        );
        // Fast path: aligned, in a RAM page the TLB maps.
        let host = self.translate(i.rs1, va, size, false, None, (fast, slow))?;
        let ty = ty_of(self.context, size);
        let raw = self.load_aligned(ty, host, size)?;
        let fast_v = self.widen(raw, signed)?;
        let fast_end = self.b.get_insert_block().unwrap_or(fast);
        if self.side_exits(index) {
            self.side_exit(slow, pc, index)?;
        } else {
            // Slow path: the shared one (misses, devices, misaligned accesses, faults).
            self.b.position_at_end(slow);
            let helpers = self.helpers();
            let helper = [helpers.load_u8, helpers.load_u16, helpers.load_u32];
            self.load_by_helper(helper, i, size, signed, va, pc, index)?;
            let device = self.device_access(va, size, false)?;
            self.leave_at_block_end_if(device)?;
            self.b.build_unconditional_branch(done)?;
        }
        self.b.position_at_end(fast_end);
        self.set_reg(i.rd, fast_v)?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// Load through one of the `helper`s (byte, halfword, word; they return `(status << 32) |
    /// value`): leave with the trap if it trapped, else write the value to `rd`.
    #[allow(clippy::too_many_arguments)]
    fn load_by_helper(
        &mut self,
        helper: [usize; 3],
        i: &Insn,
        size: u32,
        signed: bool,
        va: IntValue<'ctx>,
        pc: u32,
        index: u64,
    ) -> Result<()> {
        let r = self.slow_access(helper, size, self.i64t, &[va.into()])?;
        // A load's status is 0 or `STATUS_TRAP` (1): it trapped if `r` is 2^32 or more.
        let trapped = self.b.build_int_compare(
            IntPredicate::UGE,
            r,
            self.c64(u64::from(STATUS_TRAP) << 32),
            "",
        )?;
        let ok = self.new_bb("ok");
        self.leave_if(trapped, self.c32(pc), index, Exit::TRAP, ok)?;
        self.b.position_at_end(ok);
        let raw = self
            .b
            .build_int_truncate(r, ty_of(self.context, size), "")?;
        let v = self.widen(raw, signed)?;
        self.set_reg(i.rd, v)
    }

    /// A loaded value of 1, 2 or 4 bytes as a register value.
    fn widen(&self, raw: IntValue<'ctx>, signed: bool) -> Result<IntValue<'ctx>> {
        Ok(if raw.get_type().get_bit_width() == 32 {
            raw
        } else if signed {
            self.b.build_int_s_extend(raw, self.i32t, "")?
        } else {
            self.b.build_int_z_extend(raw, self.i32t, "")?
        })
    }

    /// Call the shared slow path of a `size`-byte access (misses, devices, misaligned
    /// accesses, faults): `helper` holds the byte, halfword and word helpers, which take
    /// (hart, ctx, `args`) and return `ret`. The instret a trap would report is stored first.
    fn slow_access(
        &self,
        helper: [usize; 3],
        size: u32,
        ret: IntType<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<IntValue<'ctx>> {
        self.store_instret()?;
        let helper = match size {
            1 => helper[0],
            2 => helper[1],
            _ => helper[2],
        };
        let mut params: Vec<BasicMetadataTypeEnum<'ctx>> =
            vec![self.hart.get_type().into(), self.hart.get_type().into()];
        params.extend(std::iter::repeat_n(
            BasicMetadataTypeEnum::from(self.i32t),
            args.len(),
        ));
        let r = self.call_cold(helper, ret.fn_type(&params, false), args)?;
        self.forget_page_memos()?;
        Ok(r)
    }

    fn store(&mut self, i: &Insn, width: u8, pc: u32, index: u64) -> Result<()> {
        let size = width as u32;
        let va = self.guest_va(i)?;
        let value = self.reg(i.rs2)?;
        if let Some(host) = self.unchecked_address(va)? {
            let narrow =
                self.b
                    .build_int_truncate_or_bit_cast(value, ty_of(self.context, size), "")?;
            return self.store_aligned(host, narrow, 1);
        }
        let status = if self.env.opt == T2Opt::Fast && !self.env.inline_tlb {
            // Through the reporting helper alone, as fast loads (`load`).
            let helper = self.helpers().store_reporting;
            self.slow_access(helper, size, self.i32t, &[va.into(), value.into()])?
        } else {
            let (fast, slow, done) = (
                self.new_bb("st_fast"),
                self.new_bb("st_slow"),
                self.new_bb("st_done"),
            );
            // Fast path: pages holding code have no write entries, so this never changes code.
            let host = self.translate(i.rs1, va, size, true, None, (fast, slow))?;
            let narrow =
                self.b
                    .build_int_truncate_or_bit_cast(value, ty_of(self.context, size), "")?;
            self.store_aligned(host, narrow, size)?;
            self.b.build_unconditional_branch(done)?;
            if self.side_exits(index) {
                // As for loads.
                self.side_exit(slow, pc, index)?;
            } else {
                self.b.position_at_end(slow);
                let helpers = self.helpers();
                let helper = [helpers.store_u8, helpers.store_u16, helpers.store_u32];
                let status =
                    self.slow_access(helper, size, self.i32t, &[va.into(), value.into()])?;
                // A device store leaves at the end of the block.
                let device = self.device_access(va, size, true)?;
                self.leave_at_block_end_if(device)?;
                self.trap_if(status, pc, index)?;
                self.code_written_if(status, pc.wrapping_add(i.len as u32), index)?;
                self.b.build_unconditional_branch(done)?;
            }
            self.b.position_at_end(done);
            return Ok(());
        };
        // A trap (leave at the store) or a store into code (leave after it).
        self.trap_if(status, pc, index)?;
        self.code_written_if(status, pc.wrapping_add(i.len as u32), index)
    }

    fn intrinsic(&self, name: &'static str) -> Result<FunctionValue<'ctx>> {
        Intrinsic::find(name)
            .and_then(|f| f.get_declaration(self.module, &[self.i32t.into()]))
            .ok_or(CodegenError::Intrinsic(name))
    }

    fn call_intrinsic(
        &self,
        name: &'static str,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<IntValue<'ctx>> {
        let f = self.intrinsic(name)?;
        let call = self.b.build_call(f, args, "")?;
        Ok(call
            .try_as_basic_value()
            .basic()
            .map(|v| v.into_int_value())
            .unwrap_or_else(|| self.c32(0)))
    }

    /// `x[rd]` for ALU operation `i` (rd != x0).
    fn alu(&mut self, i: &Insn) -> Result<IntValue<'ctx>> {
        use Op::*;
        let b = &self.b;
        let imm = self.c32(i.imm as u32);
        let shamt_imm = self.c32(i.imm as u32 & 31);
        if i.op == Lui {
            return Ok(imm);
        }
        let a = self.reg(i.rs1)?;
        let rb = self.reg(i.rs2)?;
        let bool32 = |v: IntValue<'ctx>| b.build_int_z_extend(v, self.i32t, "");
        let sh = |v: IntValue<'ctx>| b.build_and(v, self.c32(31), "");
        let one = self.c32(1);
        Ok(match i.op {
            Addi => b.build_int_add(a, imm, "")?,
            Slti => bool32(b.build_int_compare(IntPredicate::SLT, a, imm, "")?)?,
            Sltiu => bool32(b.build_int_compare(IntPredicate::ULT, a, imm, "")?)?,
            Xori => b.build_xor(a, imm, "")?,
            Ori => b.build_or(a, imm, "")?,
            Andi => b.build_and(a, imm, "")?,
            Slli => b.build_left_shift(a, shamt_imm, "")?,
            Srli => b.build_right_shift(a, shamt_imm, false, "")?,
            Srai => b.build_right_shift(a, shamt_imm, true, "")?,
            Add => b.build_int_add(a, rb, "")?,
            Sub => b.build_int_sub(a, rb, "")?,
            Sll => b.build_left_shift(a, sh(rb)?, "")?,
            Slt => bool32(b.build_int_compare(IntPredicate::SLT, a, rb, "")?)?,
            Sltu => bool32(b.build_int_compare(IntPredicate::ULT, a, rb, "")?)?,
            Xor => b.build_xor(a, rb, "")?,
            Srl => b.build_right_shift(a, sh(rb)?, false, "")?,
            Sra => b.build_right_shift(a, sh(rb)?, true, "")?,
            Or => b.build_or(a, rb, "")?,
            And => b.build_and(a, rb, "")?,
            Mul => b.build_int_mul(a, rb, "")?,
            Mulh | Mulhsu | Mulhu => {
                let wide = |v: IntValue<'ctx>, signed: bool| {
                    if signed {
                        b.build_int_s_extend(v, self.i64t, "")
                    } else {
                        b.build_int_z_extend(v, self.i64t, "")
                    }
                };
                let a64 = wide(a, i.op != Mulhu)?;
                let b64 = wide(rb, i.op == Mulh)?;
                let p = b.build_int_mul(a64, b64, "")?;
                let hi = b.build_right_shift(p, self.c64(32), false, "")?;
                b.build_int_truncate(hi, self.i32t, "")?
            }
            Div | Rem => {
                // RISC-V: x / 0 = -1, x % 0 = x; MIN / -1 = MIN, MIN % -1 = 0 (no trap).
                let zero = b.build_int_compare(IntPredicate::EQ, rb, self.c32(0), "")?;
                let min = b.build_int_compare(IntPredicate::EQ, a, self.c32(0x8000_0000), "")?;
                let neg1 = b.build_int_compare(IntPredicate::EQ, rb, self.c32(u32::MAX), "")?;
                let overflow = b.build_and(min, neg1, "")?;
                let bad = b.build_or(zero, overflow, "")?;
                let safe = b.build_select(bad, one, rb, "")?.into_int_value();
                if i.op == Div {
                    let q = b.build_int_signed_div(a, safe, "")?;
                    let q = b.build_select(overflow, self.c32(0x8000_0000), q, "")?;
                    b.build_select(zero, self.c32(u32::MAX), q.into_int_value(), "")?
                        .into_int_value()
                } else {
                    let r = b.build_int_signed_rem(a, safe, "")?;
                    let r = b.build_select(overflow, self.c32(0), r, "")?;
                    b.build_select(zero, a, r.into_int_value(), "")?
                        .into_int_value()
                }
            }
            Divu | Remu => {
                let zero = b.build_int_compare(IntPredicate::EQ, rb, self.c32(0), "")?;
                let safe = b.build_select(zero, one, rb, "")?.into_int_value();
                if i.op == Divu {
                    let q = b.build_int_unsigned_div(a, safe, "")?;
                    b.build_select(zero, self.c32(u32::MAX), q, "")?
                        .into_int_value()
                } else {
                    let r = b.build_int_unsigned_rem(a, safe, "")?;
                    b.build_select(zero, a, r, "")?.into_int_value()
                }
            }
            Sh1add | Sh2add | Sh3add => {
                let k = match i.op {
                    Sh1add => 1,
                    Sh2add => 2,
                    _ => 3,
                };
                let s = b.build_left_shift(a, self.c32(k), "")?;
                b.build_int_add(s, rb, "")?
            }
            Andn => b.build_and(a, b.build_not(rb, "")?, "")?,
            Orn => b.build_or(a, b.build_not(rb, "")?, "")?,
            Xnor => b.build_not(b.build_xor(a, rb, "")?, "")?,
            Clz | Ctz => {
                let name = if i.op == Clz {
                    "llvm.ctlz"
                } else {
                    "llvm.cttz"
                };
                let no_poison = self.context.bool_type().const_zero();
                self.call_intrinsic(name, &[a.into(), no_poison.into()])?
            }
            Cpop => self.call_intrinsic("llvm.ctpop", &[a.into()])?,
            Rev8 => self.call_intrinsic("llvm.bswap", &[a.into()])?,
            Max => self.call_intrinsic("llvm.smax", &[a.into(), rb.into()])?,
            Maxu => self.call_intrinsic("llvm.umax", &[a.into(), rb.into()])?,
            Min => self.call_intrinsic("llvm.smin", &[a.into(), rb.into()])?,
            Minu => self.call_intrinsic("llvm.umin", &[a.into(), rb.into()])?,
            // Funnel shifts take the amount modulo 32, as RISC-V rotates do.
            Rol => self.call_intrinsic("llvm.fshl", &[a.into(), a.into(), rb.into()])?,
            Ror => self.call_intrinsic("llvm.fshr", &[a.into(), a.into(), rb.into()])?,
            Rori => self.call_intrinsic("llvm.fshr", &[a.into(), a.into(), shamt_imm.into()])?,
            SextB | SextH => {
                let ty = ty_of(self.context, if i.op == SextB { 1 } else { 2 });
                let t = b.build_int_truncate(a, ty, "")?;
                b.build_int_s_extend(t, self.i32t, "")?
            }
            ZextH => b.build_and(a, self.c32(0xffff), "")?,
            Bclr | Bset | Binv | Bext => {
                let bit = b.build_left_shift(one, sh(rb)?, "")?;
                match i.op {
                    Bclr => b.build_and(a, b.build_not(bit, "")?, "")?,
                    Bset => b.build_or(a, bit, "")?,
                    Binv => b.build_xor(a, bit, "")?,
                    _ => {
                        let s = b.build_right_shift(a, sh(rb)?, false, "")?;
                        b.build_and(s, one, "")?
                    }
                }
            }
            Bclri | Bseti | Binvi | Bexti => {
                let bit = self.c32(1 << (i.imm as u32 & 31));
                match i.op {
                    Bclri => b.build_and(a, self.c32(!(1 << (i.imm as u32 & 31))), "")?,
                    Bseti => b.build_or(a, bit, "")?,
                    Binvi => b.build_xor(a, bit, "")?,
                    _ => {
                        let s = b.build_right_shift(a, shamt_imm, false, "")?;
                        b.build_and(s, one, "")?
                    }
                }
            }
            CzeroEqz | CzeroNez => {
                let pred = if i.op == CzeroEqz {
                    IntPredicate::EQ
                } else {
                    IntPredicate::NE
                };
                let c = b.build_int_compare(pred, rb, self.c32(0), "")?;
                b.build_select(c, self.c32(0), a, "")?.into_int_value()
            }
            // Rare operations (carry-less multiply, orc.b, anything new): the shared
            // semantics through the ABI's ALU helper.
            _ => {
                let ty = self.i32t.fn_type(
                    &[
                        self.i32t.into(),
                        self.i32t.into(),
                        self.i32t.into(),
                        self.i32t.into(),
                    ],
                    false,
                );
                let f = self.helper_pointer(self.env.helpers.alu, ty)?;
                let call = b.build_indirect_call(
                    ty,
                    f,
                    &[
                        self.c32(i.op as u32).into(),
                        a.into(),
                        rb.into(),
                        imm.into(),
                    ],
                    "",
                )?;
                call.try_as_basic_value()
                    .basic()
                    .map(|v| v.into_int_value())
                    .unwrap_or_else(|| self.c32(0))
            }
        })
    }
}

/// Where a block's ending `jalr` goes.
#[derive(Clone, Copy)]
enum JumpTarget {
    /// A constant (`RegionBlock::pc_relative_jump_target`).
    Known(u32),
    /// Its base register plus its offset; maybe profiled to this target.
    Computed(Option<u32>),
}

/// How emission goes on after an instruction.
enum Flow {
    /// With the next instruction.
    Next,
    /// The instruction headed a fused unit that includes the next one: skip it.
    Skip,
}

/// The f registers instruction `i` reads, as a mask of register numbers.
fn fp_sources(i: &Insn) -> u32 {
    let reads = i.op.info().fp_reads;
    [
        (crate::isa::ops::RS1, i.rs1),
        (crate::isa::ops::RS2, i.rs2),
        (crate::isa::ops::RS3, i.rs3),
    ]
    .iter()
    .filter(|&&(bit, _)| reads & bit != 0)
    .fold(0, |mask, &(_, r)| mask | 1 << (r & 31))
}

/// The integer type of `size` bytes.
fn ty_of(context: &Context, size: u32) -> IntType<'_> {
    match size {
        1 => context.i8_type(),
        2 => context.i16_type(),
        8 => context.i64_type(),
        _ => context.i32_type(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::decode;

    /// The IR of a one-block region made of `words`, after a `jal` out of the page.
    fn region_ir(words: &[u32]) -> String {
        region_ir_at(words, T2Opt::Fast)
    }

    /// [`region_ir`] for a system-mode region optimised as `opt` (before LLVM's passes).
    fn region_ir_at(words: &[u32], opt: T2Opt) -> String {
        let mut insns: Vec<Insn> = words.iter().map(|&w| decode(w)).collect();
        insns.push(decode(0x0000_106f)); // jal x0, +0x1000
        let plan = RegionPlan {
            entry_pc: 0x1000,
            blocks: vec![RegionBlock {
                pc: 0x1000,
                insns,
                predicted: None,
            }],
        };
        let env = CodegenEnv {
            helpers: Helpers::for_platform::<crate::machine::system::System>(),
            folding_helpers: Helpers::folding_for_platform::<crate::machine::system::System>(),
            flat: false,
            unchecked: false,
            opt,
            inline_tlb: opt == T2Opt::Full,
        };
        let context = Context::create();
        let module = context.create_module("test");
        build_region(&context, &module, "region", &plan, &env).expect("codegen");
        module.verify().expect("valid IR");
        module.print_to_string().to_string()
    }

    #[test]
    fn fences_become_llvm_fences_by_what_they_order() {
        let count = |ir: &str, what: &str| ir.matches(what).count();
        // fence rw,rw (Linux mb, virtio_mb): a host full barrier.
        let ir = region_ir(&[0x0330_000f]);
        assert_eq!(count(&ir, "fence seq_cst"), 1, "{ir}");
        // fence r,rw and fence.tso: ordering x86-64 gives, only LLVM must keep it.
        let ir = region_ir(&[0x0230_000f, 0x8330_000f]);
        assert_eq!(count(&ir, "fence seq_cst"), 0, "{ir}");
        assert_eq!(count(&ir, "fence acq_rel"), 2, "{ir}");
        // pause orders nothing.
        let ir = region_ir(&[0x0100_000f]);
        assert_eq!(count(&ir, "fence"), 0, "{ir}");
    }

    #[test]
    fn accesses_past_a_blocks_first_instruction_leave_a_full_region_instead_of_calling() {
        // lw a0,0(a1); lw a2,4(a1); sw a0,8(a1)
        let words = [0x0005_a503, 0x0045_a603, 0x00a5_a423];
        let calls = |ir: &str, helper: &str| {
            let callee = format!("{helper}(");
            ir.lines()
                .filter(|l| l.contains(" call ") && l.contains(&callee))
                .count()
        };
        let full = region_ir_at(&words, T2Opt::Full);
        // The block's first load calls its slow path; the others are side exits.
        assert_eq!(calls(&full, "@rv32.cold.rv32.helper.load_u32"), 1, "{full}");
        assert_eq!(
            calls(&full, "@rv32.cold.rv32.helper.store_u32"),
            0,
            "{full}"
        );
        // A fast region calls the reporting helper for each access.
        let fast = region_ir_at(&words, T2Opt::Fast);
        assert_eq!(calls(&fast, "@rv32.helper.load_reporting_u32"), 2, "{fast}");
        assert_eq!(
            calls(&fast, "@rv32.helper.store_reporting_u32"),
            1,
            "{fast}"
        );
    }
}
