//! Per-instruction templates: how each RISC-V operation becomes x86-64, written against the
//! emit layer ([`super::emit`]) and grouped in families like rv32emu's code generator
//! (`GEN_ALU_IMM`, `GEN_ALU_REG`, `GEN_BRANCH`, `GEN_LOAD`, `GEN_STORE`, ...).
//!
//! Conventions inside a block (see docs/codegen.md):
//! - `rbx` holds the `Hart`, `rbp` the run context (`RunCtx<P>`, whose first field is the
//!   `RunState`); guest registers live in `hart.x` and are read and written in memory, so the
//!   guest state is exact at every helper call and every exit;
//! - `rax`, `rcx`, `rdx`, `rsi`, `rdi`, `r8`..`r11` are scratch (helpers may clobber them);
//! - `r14` holds the instruction count at block entry ([`INSTRET`]) and `r15d` the chaining
//!   budget ([`BUDGET`]): all of tier 1's code keeps the two counters in those registers, and
//!   `hart.instret` and `RunState::budget` hold them only while a helper runs and after the
//!   code left through a stub. Exits add to the count; `hart.pc` is written only where the
//!   code leaves for a stub (no chained block reads it: traps write their pc, helpers take
//!   theirs as an argument).
//!
//! A template never decides anything from run-time guest state at compile time except the
//! instruction itself and its pc (blocks are compiled for one entry pc; see
//! [`super::Compiled::pc`]).

mod fp;

use std::mem::offset_of;

use super::emit::{Alu, BitOp, Cond, Emitter, Label, Mem, Reg, Shift, Unary, Width};
use super::Stubs;
use crate::cpu::tlb::{Tlb, TlbEntry, PAGE_MASK, TLB_ENTRIES};
use crate::cpu::{Csrs, Hart};
use crate::exec::abi::{self as helpers, Helpers, STATUS_CODE_WRITTEN, STATUS_TRAP};
use crate::exec::contract::{Exit, JumpEntry, RunState, JUMP_CACHE_SIZE};
use crate::isa::ops::OpClass;
use crate::isa::{Fusion, Insn, Op};

/// The hart pointer.
const HART: Reg = Reg::Rbx;
/// The run-context pointer (`RunCtx<P>`, `RunState` first).
const CTX: Reg = Reg::Rbp;

/// `hart.x[r]`.
fn xreg(r: u8) -> Mem {
    Mem::at(HART, (offset_of!(Hart, x) + 4 * (r as usize & 31)) as i32)
}

/// `hart.f[r]`.
fn freg(r: u8) -> Mem {
    Mem::at(HART, (offset_of!(Hart, f) + 8 * (r as usize & 31)) as i32)
}

fn mstatus() -> Mem {
    Mem::at(
        HART,
        (offset_of!(Hart, csr) + offset_of!(Csrs, mstatus)) as i32,
    )
}

pub(super) fn hart_pc() -> Mem {
    Mem::at(HART, offset_of!(Hart, pc) as i32)
}

pub(super) fn hart_instret() -> Mem {
    Mem::at(HART, offset_of!(Hart, instret) as i32)
}

pub(super) fn state_budget() -> Mem {
    Mem::at(CTX, offset_of!(RunState, budget) as i32)
}

/// `RunState::chain_limit`, the instret at which chained code leaves.
pub(super) fn state_chain_limit() -> Mem {
    Mem::at(CTX, offset_of!(RunState, chain_limit) as i32)
}

/// Offset in `Hart` of the read or write TLB array.
fn tlb_array(write: bool) -> i32 {
    let arr = if write {
        offset_of!(Tlb, write)
    } else {
        offset_of!(Tlb, read)
    };
    (offset_of!(Hart, tlb) + arr) as i32
}

/// The tag and addend of the execute-TLB entry that maps `va` (`hart.tlb.exec`).
fn exec_tlb_entry(va: u32) -> (Mem, Mem) {
    let entry = offset_of!(Hart, tlb)
        + offset_of!(Tlb, exec)
        + Tlb::index(va) * std::mem::size_of::<TlbEntry>();
    (
        Mem::at(HART, (entry + offset_of!(TlbEntry, tag)) as i32),
        Mem::at(HART, (entry + offset_of!(TlbEntry, addend)) as i32),
    )
}

/// Tier 1's instruction count (`hart.instret` at the running block's entry) and chaining
/// budget (`RunState::budget`), in callee-saved registers across all of tier 1's code: from
/// the entry stub through chained blocks to the exit stubs, which store them
/// ([`emit_counters_to_memory`]); code stores them before every helper call that sees the
/// hart and loads them after it ([`emit_counters_from_memory`]), so helpers and the run loop
/// see memory as the interpreter leaves it. Counted in memory, each chained transfer's
/// read-modify-write of both made a dependency from block to block through store forwarding
/// (a loop of two small blocks ran at that latency, not its own), and in a loop of stores
/// filled the store buffer.
pub(super) const INSTRET: Reg = Reg::R14;
/// See [`INSTRET`].
pub(super) const BUDGET: Reg = Reg::R15;

/// About how many instructions a self-loop runs per unit of the chaining budget. Counting
/// every iteration as a transfer brought the run loop around every 256 iterations of a short
/// loop (1 024 instructions of sieve's inner loop, a tenth of its time); now a loop comes
/// around after 256 units of about this many instructions, as chained blocks do.
const LOOP_INSNS_PER_BUDGET: u32 = 64;

/// The bits of instret a self-loop's back edge, retiring `n` instructions per iteration,
/// tests: the budget is taken from only when they are all zero. The mask is `2^j - 1` shifted
/// over `n`'s trailing zero bits, so adding `n` adds an odd number to the masked field, which
/// therefore runs through all `2^j` values, zero once, every `2^j` iterations, from any start
/// (`2^j` about [`LOOP_INSNS_PER_BUDGET`] / `n`). 0: every iteration.
fn loop_budget_mask(n: u32) -> u32 {
    let iterations = LOOP_INSNS_PER_BUDGET / n.max(1);
    if iterations < 2 {
        return 0;
    }
    let j = iterations.ilog2();
    ((1 << j) - 1) << n.trailing_zeros()
}

/// Store [`INSTRET`] and [`BUDGET`] to `hart.instret` and `RunState::budget`.
pub(super) fn emit_counters_to_memory(e: &mut Emitter) {
    e.emit_store(Width::B64, hart_instret(), INSTRET);
    e.emit_store(Width::B32, state_budget(), BUDGET);
}

/// Load [`INSTRET`] and [`BUDGET`] from `hart.instret` and `RunState::budget` (after a call
/// that may have changed them: a system instruction's helper counts it, a device access ends
/// the chain through the budget). Leaves the flags and the other registers alone.
pub(super) fn emit_counters_from_memory(e: &mut Emitter) {
    e.emit_load(Width::B64, false, INSTRET, hart_instret());
    e.emit_load(Width::B32, false, BUDGET, state_budget());
}

/// The run loop's checks before entering another block: the chaining budget (so the run loop,
/// and with it interrupt delivery, comes around regularly) and the instruction limit, leaving
/// for the `exit_next` stub. Uses no scratch register, so an indirect jump's target stays in
/// eax.
pub(super) fn emit_chain_checks(e: &mut Emitter, stubs: &Stubs) {
    emit_chain_checks_with(e, |e, cond| e.emit_jcc_abs(cond, stubs.exit_next));
}

/// [`emit_chain_checks`], leaving through `leave(e, cond)` (a jump taken on `cond`).
fn emit_chain_checks_with(e: &mut Emitter, leave: impl Fn(&mut Emitter, Cond)) {
    e.emit_alu32_imm32(Alu::Sub, BUDGET, 1);
    leave(e, Cond::Eq);
    e.emit_cmp64_mem(INSTRET, state_chain_limit());
    leave(e, Cond::Geu);
}

/// Go on at `hart.pc`, also in eax, after an indirect jump (pc and instret written, the chain
/// checks made): the dispatcher's jump-cache probe, inline, so each jump site has an indirect
/// branch of its own for the host to predict. A hit jumps straight to the target's code;
/// anything else goes to the dispatcher stub, which makes the platform's checks and probes
/// again. Like a chained direct jump, a hit leaves the platform's between-blocks work to the
/// run loop, which the chaining budget brings around. Without `chaining` (`--no-chain`: the
/// probe is a jump between compiled blocks too) it goes to the dispatcher stub directly.
pub(super) fn emit_dispatch(e: &mut Emitter, stubs: &Stubs, chaining: bool) {
    let miss = stubs.dispatch;
    if !chaining {
        e.emit_jmp_abs(miss);
        return;
    }
    let pc = Reg::Rax;
    // rdx = &jump_cache[jump_slot(pc)], with jump_slot(pc) = (pc >> 1) & (size - 1).
    let entry_size = std::mem::size_of::<JumpEntry>() as u32;
    debug_assert!(entry_size.is_multiple_of(2));
    e.emit_mov(Reg::Rcx, pc);
    e.emit_alu32_imm32(Alu::And, Reg::Rcx, (JUMP_CACHE_SIZE as u32 - 1) << 1);
    e.emit_imul32_imm(Reg::Rcx, Reg::Rcx, entry_size / 2);
    e.emit_load(
        Width::B64,
        false,
        Reg::Rdx,
        Mem::at(CTX, offset_of!(RunState, jump_cache) as i32),
    );
    e.emit_add64(Reg::Rdx, Reg::Rcx);
    let field = |offset: usize| Mem::at(Reg::Rdx, offset as i32);
    e.emit_alu32_mem(Alu::Cmp, pc, field(offset_of!(JumpEntry, pc)));
    e.emit_jcc_abs(Cond::Ne, miss);
    e.emit_load(
        Width::B64,
        false,
        Reg::Rcx,
        field(offset_of!(JumpEntry, code)),
    );
    e.emit_cmp64_imm(Reg::Rcx, 0);
    e.emit_jcc_abs(Cond::Eq, miss);
    // The execute TLB must map pc to the host address the code was made for: the tag, then
    // pc + addend against the entry's host address.
    let tlb_size = std::mem::size_of::<TlbEntry>() as u32;
    debug_assert!(tlb_size.is_power_of_two());
    let exec = (offset_of!(Hart, tlb) + offset_of!(Tlb, exec)) as i32;
    e.emit_mov(Reg::Rsi, pc);
    e.emit_shift32_imm(Shift::Shr, Reg::Rsi, 12 - tlb_size.trailing_zeros() as u8);
    e.emit_alu32_imm32(Alu::And, Reg::Rsi, (TLB_ENTRIES as u32 - 1) * tlb_size);
    e.emit_mov(Reg::Rdi, pc);
    e.emit_alu32_imm32(Alu::And, Reg::Rdi, !PAGE_MASK);
    e.emit_cmp32_indexed(
        Reg::Rdi,
        HART,
        Reg::Rsi,
        exec + offset_of!(TlbEntry, tag) as i32,
    );
    e.emit_jcc_abs(Cond::Ne, miss);
    e.emit_load_indexed(
        Width::B64,
        false,
        Reg::Rdi,
        HART,
        Reg::Rsi,
        exec + offset_of!(TlbEntry, addend) as i32,
    );
    e.emit_add64(Reg::Rdi, pc);
    e.emit_cmp64_mem(Reg::Rdi, field(offset_of!(JumpEntry, host)));
    e.emit_jcc_abs(Cond::Ne, miss);
    e.emit_alu64_mem_imm(
        Alu::Add,
        Mem::at(CTX, offset_of!(RunState, jit_dispatched) as i32),
        1,
    );
    e.emit_jmp_reg(Reg::Rcx);
}

/// How a block's loads and stores reach guest memory.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryAccess {
    /// The platform maps all RAM flat at this host base (`Platform::flat_host_base`).
    pub flat_base: Option<usize>,
    /// With `flat_base`: no check at all (`Platform::unchecked_memory`).
    pub unchecked: bool,
}

/// A direct exit that may be chained to another block.
#[derive(Clone, Copy, Debug)]
pub struct ChainSite {
    /// Offset of the patchable jump in the block's code.
    pub offset: usize,
    /// The guest pc it leaves to.
    pub target: u32,
    /// For a target on another page: the host address it had when the block was compiled,
    /// which a guard before the jump checks in the execute TLB. `None`: the block's own page.
    pub target_host: Option<usize>,
}

/// Host registers that cache guest registers within a block, most used guest register first:
/// the callee-saved ones that [`INSTRET`] and [`BUDGET`] leave (helper calls preserve them),
/// then caller-saved ones (spilled before and reloaded after every call, which only slow paths
/// and rare instructions make). Only 32-bit operations write them, so their upper halves stay
/// zero and they index memory as they are ([`BlockCompiler::tlb_lookup`]).
const CACHE_REGS: [Reg; 6] = [Reg::R12, Reg::R13, Reg::R8, Reg::R9, Reg::R10, Reg::R11];

/// Whether a call clobbers host register `r` (System V).
fn caller_saved(r: Reg) -> bool {
    matches!(r, Reg::R8 | Reg::R9 | Reg::R10 | Reg::R11)
}

/// A guest register as an operand: x0, a host register caching it, or its slot in the hart.
#[derive(Clone, Copy)]
enum Operand {
    Zero,
    Reg(Reg),
    Mem(Mem),
}

/// The x86 operation of a two-operand RISC-V ALU operation, if it is one.
fn simple_alu(op: Op) -> Option<Alu> {
    Some(match op {
        Op::Add | Op::Addi => Alu::Add,
        Op::Sub => Alu::Sub,
        Op::And | Op::Andi => Alu::And,
        Op::Or | Op::Ori => Alu::Or,
        Op::Xor | Op::Xori => Alu::Xor,
        _ => return None,
    })
}

/// Code that runs only on a slow path, emitted after the block body.
enum OutOfLine {
    /// The taken exit of the first block's final branch, when the next block follows inline.
    Exit {
        entry: Label,
        /// The cached guest registers changed at the branch.
        dirty: u32,
        target: u32,
        retired: u32,
    },
    /// A load that missed the TLB (or was misaligned): call the helper, then go on.
    Load {
        /// Cached guest registers to write back before the call.
        dirty: u32,
        entry: Label,
        resume: Label,
        helper: usize,
        op: Op,
        trap: Label,
    },
    /// An FP load or store off the inline path (FP off, TLB miss, misaligned): the helper
    /// does all of it.
    FpMem {
        dirty: u32,
        entry: Label,
        resume: Label,
        insn: Insn,
        trap: Label,
        written: Label,
    },
    /// A native FP operation's slow path: the helper runs it.
    FpOp {
        dirty: u32,
        entry: Label,
        resume: Label,
        insn: Insn,
        trap: Label,
        /// The f registers the code after `resume` finds in xmm registers
        /// ([`BlockCompiler::fp_cache`]): reloaded from the hart after the helper.
        cache_after: fp::FpCache,
    },
    /// A store that missed the TLB (or was misaligned).
    Store {
        dirty: u32,
        entry: Label,
        resume: Label,
        helper: usize,
        rs2: u8,
        trap: Label,
        written: Label,
    },
}

/// Compiles one block.
pub struct BlockCompiler<'a> {
    e: Emitter,
    stubs: &'a Stubs,
    helpers: &'a Helpers,
    /// Guest pc of the block's first instruction.
    pc0: u32,
    chaining: bool,
    popcnt: bool,
    sites: Vec<ChainSite>,
    ool: Vec<OutOfLine>,
    /// The host register caching each guest register, if any (fixed for the whole block).
    cached: [Option<Reg>; 32],
    /// Cached guest registers (bit per register) whose host copy is newer than `hart.x`.
    dirty: u32,
    /// Per instruction index: the exit taken when it traps (pc and instret of the faulting
    /// instruction), emitted on first use.
    trap_exits: Vec<(u32, u32, Label)>,
    /// Per instruction index: the exit after a store that hit a code page.
    written_exits: Vec<(u32, u32, Label)>,
    /// With a branch back to the block's own start: the label after the register loads that
    /// the back edge jumps to, and the exit it takes when the budget or limit runs out.
    self_loop: Option<(Label, Label)>,
    /// The self-loop's back edge may take from the chaining budget once per several
    /// iterations ([`loop_budget_mask`]): it is the block's only branch to its start and no
    /// instruction of the block can set instret (a CSR write).
    loop_budget_by_instret: bool,
    /// mstatus.FS was checked (on) on every path from here.
    fp_enabled_checked: bool,
    /// mstatus.FS was marked dirty on every path from here.
    fp_dirty_marked: bool,
    /// The f registers whose values xmm registers hold on every path into the instruction
    /// being emitted (results of the native F/D operations just before it; see
    /// [`fp::FpCache`]).
    fp_cache: fp::FpCache,
    /// What [`Self::fp_cache`] becomes for the next instruction (set by a native F/D
    /// operation; after any other instruction it is empty).
    fp_cache_next: fp::FpCache,
    /// The host has FMA3.
    fma: bool,
    /// The platform maps all RAM flat at this host base (`Platform::flat_host_base`).
    flat_base: Option<usize>,
    /// The host address a guest pc translates to for execution right now, if the execute TLB
    /// has its page: where a direct exit to another page may be chained to.
    exec_host: &'a dyn Fn(u32) -> Option<usize>,
    /// Loads and stores go straight to `flat_base + va`, unchecked
    /// (`Platform::unchecked_memory`).
    unchecked: bool,
    /// The pc at which the instructions go on past the first block's final conditional
    /// branch, when the block it falls through to is compiled with it ([`Self::with_fallthrough`]);
    /// `None` once that branch is emitted.
    fallthrough: Option<u32>,
}

/// What [`BlockCompiler::compile`] produced.
pub struct BlockCode {
    pub code: Vec<u8>,
    pub sites: Vec<ChainSite>,
}

impl<'a> BlockCompiler<'a> {
    /// A compiler for the block at guest `pc0`, whose code will be placed at host `base`.
    pub fn new(
        base: usize,
        stubs: &'a Stubs,
        helpers: &'a Helpers,
        pc0: u32,
        chaining: bool,
        memory: MemoryAccess,
        exec_host: &'a dyn Fn(u32) -> Option<usize>,
    ) -> Self {
        let MemoryAccess {
            flat_base,
            unchecked,
        } = memory;
        BlockCompiler {
            e: Emitter::for_block(base),
            stubs,
            helpers,
            pc0,
            chaining,
            popcnt: super::emit::has_popcnt(),
            sites: Vec::new(),
            ool: Vec::new(),
            cached: [None; 32],
            dirty: 0,
            trap_exits: Vec::new(),
            self_loop: None,
            loop_budget_by_instret: false,
            flat_base,
            fp_enabled_checked: false,
            fp_dirty_marked: false,
            fp_cache: fp::FpCache::default(),
            fp_cache_next: fp::FpCache::default(),
            fma: super::emit::has_fma(),
            written_exits: Vec::new(),
            exec_host,
            unchecked: unchecked && flat_base.is_some(),
            fallthrough: None,
        }
    }

    /// Compile, after the block's instructions, those of the block its final conditional
    /// branch falls through to, which start at `pc` (same page): its not-taken path goes on
    /// inline, and a branch of the second block back to the first's start is a loop
    /// ([`Self::branches_to_start`]), whose registers stay in host registers.
    pub fn with_fallthrough(mut self, pc: Option<u32>) -> Self {
        self.fallthrough = pc;
        self
    }

    /// Compile `insns` (a whole block as the block builder made it).
    pub fn compile(mut self, insns: &[Insn]) -> Result<BlockCode, dynasmrt::DynasmError> {
        let back_edges = self.branches_to_start(insns);
        let self_loop = self.chaining && back_edges > 0;
        self.allocate_registers(insns, self_loop);
        if self_loop {
            // The back edge keeps guest registers in host registers, so from here on every
            // cached register may be newer than `hart.x`.
            let (head, exit) = (self.e.label(), self.e.label());
            self.e.bind(head);
            self.self_loop = Some((head, exit));
            self.dirty = self.cached_mask();
            self.loop_budget_by_instret =
                back_edges == 1 && insns.iter().all(|i| i.op.class() != OpClass::System);
        }
        let mut off = 0u32;
        let mut ended = false;
        let mut index = 0;
        while index < insns.len() {
            let insn = &insns[index];
            let pc = self.pc0.wrapping_add(off);
            let covers = insn.covers().min(insns.len() - 1 - index);
            self.fp_cache = std::mem::take(&mut self.fp_cache_next);
            ended = if covers > 0 {
                self.fused(&insns[index..=index + covers], pc, index as u32)
            } else {
                self.insn(insn, pc, index as u32)
            };
            for i in &insns[index..=index + covers] {
                off += i.len as u32;
            }
            index += 1 + covers;
            if ended {
                break;
            }
        }
        if !ended {
            // Ran off the end (instruction limit or page end): continue at the next pc.
            let n = insns.len() as u32;
            self.exit_to(self.pc0.wrapping_add(off), n);
        }
        self.emit_out_of_line();
        let sites = std::mem::take(&mut self.sites);
        Ok(BlockCode {
            code: self.e.finish()?,
            sites,
        })
    }

    // ----- guest registers -----

    /// Register allocation: the guest registers used most in the block (at least twice) live
    /// in [`CACHE_REGS`] for the whole block, loaded at entry (unless the block's first mention
    /// of one writes it, and no back edge can reach the entry with it live) and written back
    /// (when changed) before every helper call that can see guest state and at every exit.
    fn allocate_registers(&mut self, insns: &[Insn], self_loop: bool) {
        let mut uses = [0u32; 32];
        // Guest registers whose first mention (in any operand field) is as the destination of
        // an operation that writes an integer rd without reading it.
        let mut written_first = 0u32;
        let mut mentioned = 0u32;
        for i in insns {
            let fields = [i.rd, i.rs1, i.rs2, i.rs3];
            for r in [i.rd, i.rs1, i.rs2] {
                uses[r as usize & 31] += 1;
            }
            let rd = 1u32 << (i.rd & 31);
            let reads = fields[1..].iter().fold(0u32, |m, &r| m | 1 << (r & 31));
            if writes_int_rd_only(i) && mentioned & rd == 0 && reads & rd == 0 {
                written_first |= rd;
            }
            for r in fields {
                mentioned |= 1 << (r & 31);
            }
        }
        uses[0] = 0;
        // In a loop every mention counts once per iteration.
        let min_uses = if self_loop { 1 } else { 2 };
        let mut order: Vec<usize> = (1..32).filter(|&r| uses[r] >= min_uses).collect();
        // Most used first; ties by register number so the choice is deterministic.
        order.sort_by_key(|&r| (std::cmp::Reverse(uses[r]), r));
        for (&r, &host) in order.iter().zip(CACHE_REGS.iter()) {
            self.cached[r] = Some(host);
            if self_loop || written_first & (1 << r) == 0 {
                self.e.emit_load(Width::B32, false, host, xreg(r as u8));
            }
        }
    }

    /// Before a call that does not see guest state (pure helpers): write back the changed
    /// guest registers cached in caller-saved host registers.
    fn spill_caller_saved(&mut self) {
        let mask = self.caller_saved_mask();
        self.write_back(self.dirty & mask);
        self.dirty &= !mask;
    }

    /// After any call: reload the guest registers cached in caller-saved host registers (the
    /// call clobbered them; `hart.x` holds their values). Leaves rax and the flags alone.
    fn reload_caller_saved(&mut self) {
        for r in 1..32 {
            if let Some(host) = self.cached[r] {
                if caller_saved(host) {
                    self.e.emit_load(Width::B32, false, host, xreg(r as u8));
                }
            }
        }
    }

    /// The guest registers cached in caller-saved host registers, as a mask.
    fn caller_saved_mask(&self) -> u32 {
        (0..32)
            .filter(|&r| self.cached[r].is_some_and(caller_saved))
            .fold(0, |m, r| m | 1 << r)
    }

    /// How many direct branches and jumps of the block lead back to its first instruction.
    fn branches_to_start(&self, insns: &[Insn]) -> usize {
        let mut pc = self.pc0;
        insns
            .iter()
            .filter(|i| {
                let target = pc.wrapping_add(i.imm as u32);
                pc = pc.wrapping_add(i.len as u32);
                matches!(i.op.class(), OpClass::Branch | OpClass::Jal) && target == self.pc0
            })
            .count()
    }

    /// The guest registers cached in host registers, as a mask.
    fn cached_mask(&self) -> u32 {
        (0..32)
            .filter(|&r| self.cached[r].is_some())
            .fold(0, |m, r| m | 1 << r)
    }

    /// Emit stores of the cached registers in `mask` to `hart.x`.
    fn write_back(&mut self, mask: u32) {
        for r in 1..32 {
            if mask & (1 << r) != 0 {
                if let Some(host) = self.cached[r] {
                    self.e.emit_store(Width::B32, xreg(r as u8), host);
                }
            }
        }
    }

    /// Before a helper that sees guest state: `hart.x` becomes exact, and memory gets the
    /// counters ([`INSTRET`]); the code after the call takes them back
    /// ([`Self::counters_after_call`]).
    fn sync_before_call(&mut self) {
        emit_counters_to_memory(&mut self.e);
        self.write_back(self.dirty);
        self.dirty = 0;
    }

    /// After a helper that saw guest state: the counters from memory, where the helper may
    /// have changed them (a device access ends the chain after this block by lowering the
    /// budget: `abi::end_chain_after_device`).
    fn counters_after_call(&mut self) {
        emit_counters_from_memory(&mut self.e);
    }

    /// After a helper that may have written `x[rd]`: refresh its cached copy.
    fn reload(&mut self, rd: u8) {
        if let Some(host) = self.cached[rd as usize & 31] {
            self.e.emit_load(Width::B32, false, host, xreg(rd));
        }
    }

    /// `dst = x[r]`.
    fn get(&mut self, dst: Reg, r: u8) {
        if r == 0 {
            self.e.emit_load_imm(dst, 0);
        } else if let Some(host) = self.cached[r as usize & 31] {
            self.e.emit_mov(dst, host);
        } else {
            self.e.emit_load(Width::B32, false, dst, xreg(r));
        }
    }

    /// Where guest register `r` can be read as an ALU operand.
    fn operand(&self, r: u8) -> Operand {
        if r == 0 {
            Operand::Zero
        } else if let Some(host) = self.cached[r as usize & 31] {
            Operand::Reg(host)
        } else {
            Operand::Mem(xreg(r))
        }
    }

    /// `dst = dst OP src`.
    fn alu_with(&mut self, op: Alu, dst: Reg, src: Operand) {
        match src {
            // `test` sets the flags a compare with 0 sets (carry and overflow clear), shorter.
            Operand::Zero if op == Alu::Cmp => self.e.emit_alu32(Alu::Test, dst, dst),
            Operand::Zero => self.e.emit_alu32_imm32(op, dst, 0),
            Operand::Reg(r) => self.e.emit_alu32(op, dst, r),
            Operand::Mem(m) => self.e.emit_alu32_mem(op, dst, m),
        }
    }

    /// `x[r] = src` (dropped for x0).
    fn set(&mut self, r: u8, src: Reg) {
        if r == 0 {
            return;
        }
        if let Some(host) = self.cached[r as usize & 31] {
            self.e.emit_mov(host, src);
            self.dirty |= 1 << (r & 31);
        } else {
            self.e.emit_store(Width::B32, xreg(r), src);
        }
    }

    /// `x[r] = imm` (dropped for x0).
    fn set_imm(&mut self, r: u8, imm: u32) {
        if r == 0 {
            return;
        }
        if let Some(host) = self.cached[r as usize & 31] {
            self.e.emit_load_imm(host, imm);
            self.dirty |= 1 << (r & 31);
        } else {
            self.e.emit_store_imm32(xreg(r), imm);
        }
    }

    // ----- exits -----

    /// Leave the block for guest pc `target` after `retired` instructions of it retired:
    /// update pc and instret, then chain (budget and instruction limit permitting) straight to
    /// the target's code, or ask the dispatcher.
    fn exit_to(&mut self, target: u32, retired: u32) {
        if let (Some((head, exit)), true) = (self.self_loop, target == self.pc0) {
            // Back to the start of this block: guest registers stay in host registers (the
            // loop's exit writes them back, and pc). The limit is tested every iteration (a
            // run stops exactly at it); the budget is taken from when instret's bits under
            // the mask are zero, which happens once every so many iterations.
            self.e.emit_add64_imm(INSTRET, retired as i32);
            self.e.emit_cmp64_mem(INSTRET, state_chain_limit());
            self.e.emit_jcc(Cond::Geu, exit);
            let mask = if self.loop_budget_by_instret {
                loop_budget_mask(retired)
            } else {
                0
            };
            if mask != 0 {
                self.e.emit_alu32_imm32(Alu::Test, INSTRET, mask);
                self.e.emit_jcc(Cond::Ne, head);
            }
            self.e.emit_alu32_imm32(Alu::Sub, BUDGET, 1);
            self.e.emit_jcc(Cond::Ne, head);
            self.e.emit_jmp(exit);
            return;
        }
        // Not `sync_before_call`: the other path of a branch still has them dirty.
        self.write_back(self.dirty);
        self.e.emit_add64_imm(INSTRET, retired as i32);
        // The chain checks leave through `to_run_loop`: `hart.pc` is written only on the ways
        // out of compiled code, as a chained block never reads it (trap and other exits write
        // their own pc, helpers take theirs as an argument).
        let (to_run_loop, to_dispatcher) = (self.e.label(), self.e.label());
        emit_chain_checks_with(&mut self.e, |e, cond| e.emit_jcc(cond, to_run_loop));
        let same_page = target & !PAGE_MASK == self.pc0 & !PAGE_MASK;
        if self.chaining && same_page {
            // The translation of the block's own page was checked when the block was entered.
            let offset = self.e.patchable_jmp();
            self.sites.push(ChainSite {
                offset,
                target,
                target_host: None,
            });
        } else if let Some(host) = self.chaining.then(|| (self.exec_host)(target)).flatten() {
            // Another page may be mapped elsewhere by the time this runs: the chained jump
            // is guarded by the dispatcher's own test, the execute TLB mapping `target` to
            // the host address the target's code was made for (tag, then addend).
            let (tag, addend) = exec_tlb_entry(target);
            self.e
                .emit_alu32_mem_imm(Alu::Cmp, tag, target & !PAGE_MASK);
            self.e.emit_jcc(Cond::Ne, to_dispatcher);
            self.e
                .emit_load_imm64(Reg::Rax, host.wrapping_sub(target as usize) as u64);
            self.e.emit_cmp64_mem(Reg::Rax, addend);
            self.e.emit_jcc(Cond::Ne, to_dispatcher);
            let offset = self.e.patchable_jmp();
            self.sites.push(ChainSite {
                offset,
                target,
                target_host: Some(host),
            });
        }
        self.e.bind(to_dispatcher);
        self.e.emit_store_imm32(hart_pc(), target);
        self.e.emit_jmp_abs(self.stubs.dispatch);
        self.e.bind(to_run_loop);
        self.e.emit_store_imm32(hart_pc(), target);
        self.e.emit_jmp_abs(self.stubs.exit_next);
    }

    /// A jump to the constant `target` that writes `link` to `rd`, after `retired`
    /// instructions of the block.
    fn jump(&mut self, rd: u8, link: u32, target: u32, retired: u32) {
        self.set_imm(rd, link);
        self.exit_to(target, retired);
    }

    /// See [`emit_chain_checks`].
    fn chain_checks(&mut self) {
        emit_chain_checks(&mut self.e, self.stubs);
    }

    /// The label of the exit for a trap at instruction `index` (pc `pc`).
    fn trap_exit(&mut self, index: u32, pc: u32) -> Label {
        if let Some(&(_, _, l)) = self.trap_exits.iter().find(|t| t.0 == index) {
            return l;
        }
        let l = self.e.label();
        self.trap_exits.push((index, pc, l));
        l
    }

    /// The label of the exit after a store at `index` (pc `pc`, `len` bytes) hit code.
    fn written_exit(&mut self, index: u32, next_pc: u32) -> Label {
        if let Some(&(_, _, l)) = self.written_exits.iter().find(|t| t.0 == index) {
            return l;
        }
        let l = self.e.label();
        self.written_exits.push((index, next_pc, l));
        l
    }

    /// Branch on a helper's status in eax: 0 goes on, [`STATUS_TRAP`] leaves with the trap,
    /// [`STATUS_CODE_WRITTEN`] leaves after the instruction.
    fn check_status(&mut self, index: u32, pc: u32, next_pc: u32, may_write_code: bool) {
        let done = self.e.label();
        let trap = self.trap_exit(index, pc);
        self.e.emit_alu32(Alu::Test, Reg::Rax, Reg::Rax);
        self.e.emit_jcc(Cond::Eq, done);
        if may_write_code {
            let written = self.written_exit(index, next_pc);
            self.e
                .emit_alu32_imm32(Alu::Cmp, Reg::Rax, STATUS_CODE_WRITTEN);
            self.e.emit_jcc(Cond::Eq, written);
        }
        self.e.emit_jmp(trap);
        self.e.bind(done);
    }

    /// Load a helper's first two arguments: the hart and the run context.
    fn helper_args(&mut self) {
        self.e.emit_mov64(Reg::Rdi, HART);
        self.e.emit_mov64(Reg::Rsi, CTX);
    }

    /// Put `insn` (by value, two eightbytes) in rdx:rcx, the third argument of a helper.
    fn insn_arg(&mut self, insn: &Insn) {
        let [lo, hi] = helpers::insn_words(insn);
        self.e.emit_load_imm64(Reg::Rdx, lo);
        self.e.emit_load_imm64(Reg::Rcx, hi);
    }

    // ----- instructions -----

    /// Emit one instruction; true if it ended the block.
    fn insn(&mut self, i: &Insn, pc: u32, index: u32) -> bool {
        use Op::*;
        let next_pc = pc.wrapping_add(i.len as u32);
        match i.op {
            // GEN_ALU_IMM and friends: results written to x0 vanish, so skip the work.
            Lui => self.set_imm(i.rd, i.imm as u32),
            Fence if i.fence_orders_stores_before_loads() => self.e.emit_mfence(),
            Auipc => self.set_imm(i.rd, pc.wrapping_add(i.imm as u32)),
            Addi | Slti | Sltiu | Xori | Ori | Andi | Slli | Srli | Srai | Rori | Bclri | Bseti
            | Binvi | Bexti
                if i.rd != 0 =>
            {
                self.alu_imm(i)
            }
            Add | Sub | Sll | Slt | Sltu | Xor | Srl | Sra | Or | And | Mul | Mulh | Mulhsu
            | Mulhu | Div | Divu | Rem | Remu | Sh1add | Sh2add | Sh3add | Andn | Orn | Xnor
            | Max | Maxu | Min | Minu | Rol | Ror | Bclr | Bext | Binv | Bset | CzeroEqz
            | CzeroNez | Clmul | Clmulh | Clmulr
                if i.rd != 0 =>
            {
                self.alu_reg(i)
            }
            Clz | Ctz | Cpop | SextB | SextH | ZextH | OrcB | Rev8 if i.rd != 0 => {
                self.alu_unary(i)
            }
            Addi | Slti | Sltiu | Xori | Ori | Andi | Slli | Srli | Srai | Rori | Bclri | Bseti
            | Binvi | Bexti | Add | Sub | Sll | Slt | Sltu | Xor | Srl | Sra | Or | And | Mul
            | Mulh | Mulhsu | Mulhu | Div | Divu | Rem | Remu | Sh1add | Sh2add | Sh3add | Andn
            | Orn | Xnor | Max | Maxu | Min | Minu | Rol | Ror | Bclr | Bext | Binv | Bset
            | CzeroEqz | CzeroNez | Clmul | Clmulh | Clmulr | Clz | Ctz | Cpop | SextB | SextH
            | ZextH | OrcB | Rev8 | Fence => {}
            Beq | Bne | Blt | Bge | Bltu | Bgeu => return self.branch(i, pc, index),
            Jal => {
                self.jump(i.rd, next_pc, pc.wrapping_add(i.imm as u32), index + 1);
                return true;
            }
            Jalr if i.rs1 == 0 => {
                // An absolute target (constant folding made the base x0): chainable.
                self.jump(i.rd, next_pc, i.imm as u32 & !1, index + 1);
                return true;
            }
            Jalr => {
                self.get(Reg::Rax, i.rs1);
                if i.imm != 0 {
                    self.e.emit_alu32_imm32(Alu::Add, Reg::Rax, i.imm as u32);
                }
                self.e.emit_alu32_imm32(Alu::And, Reg::Rax, !1);
                // The link is written after the target is read: rd may equal rs1.
                self.set_imm(i.rd, next_pc);
                self.write_back(self.dirty);
                self.e.emit_store(Width::B32, hart_pc(), Reg::Rax);
                self.e.emit_add64_imm(INSTRET, index as i32 + 1);
                self.chain_checks();
                emit_dispatch(&mut self.e, self.stubs, self.chaining);
                return true;
            }
            Lb | Lh | Lw | Lbu | Lhu => self.load(i, pc, index),
            Sb | Sh | Sw => self.store(i, pc, index),
            LrW | ScW | AmoswapW | AmoaddW | AmoxorW | AmoandW | AmoorW | AmominW | AmomaxW
            | AmominuW | AmomaxuW | AmoswapB | AmoaddB | AmoxorB | AmoandB | AmoorB | AmominB
            | AmomaxB | AmominuB | AmomaxuB | AmoswapH | AmoaddH | AmoxorH | AmoandH | AmoorH
            | AmominH | AmomaxH | AmominuH | AmomaxuH | AmocasB | AmocasH | AmocasW | AmocasD => {
                self.call_insn_helper(i, pc, index, self.helpers.atomic, true)
            }
            Flw | Fld | Fsw | Fsd => self.fp_load_store(i, pc, index),
            // Zfh: rare, so the helpers run them whole (the interpreter's paths).
            Flh | Fsh => self.call_insn_helper(i, pc, index, self.helpers.fp_mem, true),
            FmaddH | FmsubH | FnmsubH | FnmaddH | FaddH | FsubH | FmulH | FdivH | FsqrtH
            | FsgnjH | FsgnjnH | FsgnjxH | FminH | FmaxH | FcvtSH | FcvtHS | FcvtDH | FcvtHD
            | FeqH | FltH | FleH | FclassH | FcvtWH | FcvtWuH | FcvtHW | FcvtHWu | FmvXH
            | FmvHX => self.call_insn_helper(i, pc, index, self.helpers.fp, false),
            FmaddS | FmsubS | FnmsubS | FnmaddS | FaddS | FsubS | FmulS | FdivS | FsqrtS
            | FsgnjS | FsgnjnS | FsgnjxS | FminS | FmaxS | FcvtWS | FcvtWuS | FmvXW | FeqS
            | FltS | FleS | FclassS | FcvtSW | FcvtSWu | FmvWX | FmaddD | FmsubD | FnmsubD
            | FnmaddD | FaddD | FsubD | FmulD | FdivD | FsqrtD | FsgnjD | FsgnjnD | FsgnjxD
            | FminD | FmaxD | FcvtSD | FcvtDS | FeqD | FltD | FleD | FclassD | FcvtWD | FcvtWuD
            | FcvtDW | FcvtDWu => {
                if !self.fp_native(i, pc, index) {
                    self.call_insn_helper(i, pc, index, self.helpers.fp, false)
                }
            }
            Illegal | FenceI | Ecall | Ebreak | Mret | Sret | Wfi | SfenceVma | Csrrw | Csrrs
            | Csrrc | Csrrwi | Csrrsi | Csrrci => {
                // The helper does everything the interpreter does, pc and instret included,
                // and says how to leave; system instructions always end the block.
                self.sync_before_call();
                self.helper_args();
                self.insn_arg(i);
                self.e.emit_load_imm(Reg::R8, pc);
                self.e.emit_load_imm(Reg::R9, index);
                self.e.emit_call(self.helpers.system);
                self.counters_after_call();
                self.e.emit_jmp_abs(self.stubs.exit);
                return true;
            }
        }
        false
    }

    /// A fused unit (`unit[0]` heads it, see [`crate::isa::Fusion`]) at `pc`, its head at
    /// `index`; true if it ended the block.
    fn fused(&mut self, unit: &[Insn], pc: u32, index: u32) -> bool {
        let head = &unit[0];
        match head.fusion {
            // The head's imm already holds the final value (hi + lo).
            Fusion::LuiAddi => self.set_imm(head.rd, head.imm as u32),
            Fusion::AuipcAddi => self.set_imm(head.rd, pc.wrapping_add(head.imm as u32)),
            // The head is `andi rd, rs, mask`.
            Fusion::ShiftMask => self.alu_imm(head),
            Fusion::AuipcJalr => {
                // A pc-relative call: the target is a constant, so the exit can be chained.
                let jalr = &unit[1];
                let t = pc.wrapping_add(head.imm as u32);
                self.set_imm(head.rd, t);
                let link = pc.wrapping_add((head.len + jalr.len) as u32);
                self.jump(
                    jalr.rd,
                    link,
                    t.wrapping_add(jalr.imm as u32) & !1,
                    index + 2,
                );
                return true;
            }
            Fusion::CmpBranch => {
                self.insn(head, pc, index);
                let branch_pc = pc.wrapping_add(head.len as u32);
                return self.branch(&unit[1], branch_pc, index + 1);
            }
            Fusion::LwRun | Fusion::SwRun => self.mem_run(unit, pc, index),
            Fusion::None => unreachable_op(),
        }
        false
    }

    /// A run of `lw` or `sw` off one base (`unit`, at `pc`, the first at `index`): when every
    /// access is aligned and in one page, one TLB lookup serves them all; otherwise the
    /// instructions run one by one through their own templates (precise traps, helpers).
    fn mem_run(&mut self, unit: &[Insn], pc: u32, index: u32) {
        let store = unit[0].op == Op::Sw;
        let min = unit.iter().map(|i| i.imm).min().unwrap_or(0);
        let max = unit.iter().map(|i| i.imm).max().unwrap_or(0);
        // Offsets that differ by a non-multiple of 4 can never all be aligned.
        let same_alignment = unit.iter().all(|i| (i.imm - min) % 4 == 0);
        let span = (max - min) as u32 + 4;
        let (slow, resume) = (self.e.label(), self.e.label());
        let dirty_at_entry = self.dirty;
        if same_alignment {
            // Checks first, so the slow path starts from the unit's entry state.
            self.address(unit[0].rs1, min);
            // Unchecked, a run that crosses into an inaccessible page faults on the host.
            if span > 4 && !self.unchecked {
                self.e.emit_mov(Reg::Rax, Reg::Rsi);
                self.e.emit_alu32_imm32(Alu::And, Reg::Rax, PAGE_MASK);
                self.e.emit_alu32_imm32(Alu::Cmp, Reg::Rax, 0x1000 - span);
                self.e.emit_jcc(Cond::Gtu, slow);
            }
            self.tlb_check(4, store, slow);
            for i in unit {
                let d = i.imm - min;
                if store {
                    self.get(Reg::Rcx, i.rs2);
                    self.emit_guest_store(Width::B32, Reg::Rsi, d, Reg::Rcx);
                } else {
                    self.emit_guest_load(Width::B32, false, Reg::Rax, Reg::Rsi, d);
                    self.set(i.rd, Reg::Rax);
                }
            }
            self.e.emit_jmp(resume);
        }
        // One by one: the same register writes in the same order, so both paths leave the
        // same cached registers dirty.
        let dirty_after_fast = self.dirty;
        self.dirty = dirty_at_entry;
        self.e.bind(slow);
        let mut at = pc;
        for (k, i) in unit.iter().enumerate() {
            if store {
                self.store(i, at, index + k as u32);
            } else {
                self.load(i, at, index + k as u32);
            }
            at = at.wrapping_add(i.len as u32);
        }
        debug_assert!(!same_alignment || self.dirty == dirty_after_fast);
        self.e.bind(resume);
    }

    /// A helper `(hart, ctx, insn) -> status` for instructions whose semantics live in shared
    /// Rust code (A, F/D).
    fn call_insn_helper(&mut self, i: &Insn, pc: u32, index: u32, f: usize, may_store: bool) {
        self.sync_before_call();
        self.helper_args();
        self.insn_arg(i);
        self.e.emit_call(f);
        self.counters_after_call();
        self.reload_caller_saved();
        // Integer results (AMOs, fmv.x.w, compares, conversions) land in hart.x.
        let dests = i.int_dests();
        for r in (1..32u8).filter(|&r| dests & 1 << r != 0) {
            self.reload(r);
        }
        self.check_status(index, pc, pc.wrapping_add(i.len as u32), may_store);
    }

    /// GEN_ALU_IMM: `rd = rs1 OP imm` (rd != x0).
    fn alu_imm(&mut self, i: &Insn) {
        use Op::*;
        let imm = i.imm as u32;
        let a = Reg::Rax;
        if imm == 0 && matches!(i.op, Addi | Ori | Xori) {
            // A move (`mv` is `addi rd, rs, 0`).
            if i.rs1 != i.rd {
                let via = self.cached[i.rd as usize & 31].unwrap_or(a);
                self.get(via, i.rs1);
                self.set(i.rd, via);
            }
            return;
        }
        if let Some(d) = self.cached[i.rd as usize & 31] {
            // Straight into the host register caching rd.
            let op = match i.op {
                Bclri => Some((Alu::And, !(1u32 << (imm & 31)))),
                Bseti => Some((Alu::Or, 1u32 << (imm & 31))),
                Binvi => Some((Alu::Xor, 1u32 << (imm & 31))),
                op => simple_alu(op).map(|alu| (alu, imm)),
            };
            let shift = match i.op {
                Slli => Some(Shift::Shl),
                Srli => Some(Shift::Shr),
                Srai => Some(Shift::Sar),
                Rori => Some(Shift::Ror),
                _ => None,
            };
            if op.is_some() || shift.is_some() {
                match (i.op, self.operand(i.rs1)) {
                    (Addi, Operand::Reg(src)) if i.rs1 != i.rd => self.e.emit_lea32(d, src, i.imm),
                    _ => {
                        if i.rs1 != i.rd {
                            self.get(d, i.rs1);
                        }
                        if let Some((alu, v)) = op {
                            self.e.emit_alu32_imm32(alu, d, v);
                        } else if let Some(sh) = shift {
                            self.e.emit_shift32_imm(sh, d, imm as u8);
                        }
                    }
                }
                self.dirty |= 1 << (i.rd & 31);
                return;
            }
        } else if i.op == Addi && i.rs1 == i.rd {
            self.e.emit_alu32_mem_imm(Alu::Add, xreg(i.rd), imm);
            return;
        }
        self.get(a, i.rs1);
        match i.op {
            Addi => self.e.emit_alu32_imm32(Alu::Add, a, imm),
            Xori => self.e.emit_alu32_imm32(Alu::Xor, a, imm),
            Ori => self.e.emit_alu32_imm32(Alu::Or, a, imm),
            Andi => self.e.emit_alu32_imm32(Alu::And, a, imm),
            Slti | Sltiu => {
                self.e.emit_alu32_imm32(Alu::Cmp, a, imm);
                let c = if i.op == Slti { Cond::Lt } else { Cond::Ltu };
                self.e.emit_setcc(c, a);
            }
            Slli => self.e.emit_shift32_imm(Shift::Shl, a, imm as u8),
            Srli => self.e.emit_shift32_imm(Shift::Shr, a, imm as u8),
            Srai => self.e.emit_shift32_imm(Shift::Sar, a, imm as u8),
            Rori => self.e.emit_shift32_imm(Shift::Ror, a, imm as u8),
            Bclri => self.e.emit_alu32_imm32(Alu::And, a, !(1u32 << (imm & 31))),
            Bseti => self.e.emit_alu32_imm32(Alu::Or, a, 1u32 << (imm & 31)),
            Binvi => self.e.emit_alu32_imm32(Alu::Xor, a, 1u32 << (imm & 31)),
            Bexti => {
                self.e.emit_shift32_imm(Shift::Shr, a, imm as u8);
                self.e.emit_alu32_imm32(Alu::And, a, 1);
            }
            _ => unreachable_op(),
        }
        self.set(i.rd, a);
    }

    /// GEN_ALU_REG: `rd = rs1 OP rs2` (rd != x0). rs1 is in eax, rs2 in ecx.
    fn alu_reg(&mut self, i: &Insn) {
        use Op::*;
        if let (Some(d), Some(op)) = (self.cached[i.rd as usize & 31], simple_alu(i.op)) {
            // Straight into the host register caching rd.
            if i.rd == i.rs1 {
                self.alu_with(op, d, self.operand(i.rs2));
            } else if i.rd == i.rs2 {
                if op == Alu::Sub {
                    // rd = rs1 - rd
                    self.e.emit_unary32(Unary::Neg, d);
                    self.alu_with(Alu::Add, d, self.operand(i.rs1));
                } else {
                    self.alu_with(op, d, self.operand(i.rs1));
                }
            } else {
                self.get(d, i.rs1);
                self.alu_with(op, d, self.operand(i.rs2));
            }
            self.dirty |= 1 << (i.rd & 31);
            return;
        }
        let (a, b) = (Reg::Rax, Reg::Rcx);
        self.get(a, i.rs1);
        self.get(b, i.rs2);
        match i.op {
            Add => self.e.emit_alu32(Alu::Add, a, b),
            Sub => self.e.emit_alu32(Alu::Sub, a, b),
            And => self.e.emit_alu32(Alu::And, a, b),
            Or => self.e.emit_alu32(Alu::Or, a, b),
            Xor => self.e.emit_alu32(Alu::Xor, a, b),
            Sll => self.e.emit_shift32_cl(Shift::Shl, a),
            Srl => self.e.emit_shift32_cl(Shift::Shr, a),
            Sra => self.e.emit_shift32_cl(Shift::Sar, a),
            Rol => self.e.emit_shift32_cl(Shift::Rol, a),
            Ror => self.e.emit_shift32_cl(Shift::Ror, a),
            Slt | Sltu => {
                self.e.emit_cmp32(a, b);
                let c = if i.op == Slt { Cond::Lt } else { Cond::Ltu };
                self.e.emit_setcc(c, a);
            }
            Mul => self.e.emit_imul32(a, b),
            Mulh | Mulhsu | Mulhu => {
                // The 64-bit product of the (sign- or zero-extended) operands is exact.
                if i.op != Mulhu {
                    self.e.emit_sext64(a, a);
                }
                if i.op == Mulh {
                    self.e.emit_sext64(b, b);
                }
                self.e.emit_imul64(a, b);
                self.e.emit_shr64_imm(a, 32, i.op != Mulhu);
            }
            Div | Rem => self.divide(true, i.op == Rem),
            Divu | Remu => self.divide(false, i.op == Remu),
            Sh1add => self.e.emit_lea_scaled(a, b, a, 2),
            Sh2add => self.e.emit_lea_scaled(a, b, a, 4),
            Sh3add => self.e.emit_lea_scaled(a, b, a, 8),
            Andn | Orn => {
                self.e.emit_unary32(Unary::Not, b);
                let op = if i.op == Andn { Alu::And } else { Alu::Or };
                self.e.emit_alu32(op, a, b);
            }
            Xnor => {
                self.e.emit_alu32(Alu::Xor, a, b);
                self.e.emit_unary32(Unary::Not, a);
            }
            Max | Maxu => {
                // a = (a < b) ? b : a
                self.e.emit_cmp32(a, b);
                let c = if i.op == Max { Cond::Lt } else { Cond::Ltu };
                self.e.emit_cmov(c, a, b);
            }
            Min | Minu => {
                // a = (b < a) ? b : a
                self.e.emit_cmp32(b, a);
                let c = if i.op == Min { Cond::Lt } else { Cond::Ltu };
                self.e.emit_cmov(c, a, b);
            }
            Bclr => self.e.emit_bitop(BitOp::Reset, a, b),
            Bset => self.e.emit_bitop(BitOp::Set, a, b),
            Binv => self.e.emit_bitop(BitOp::Complement, a, b),
            Bext => {
                self.e.emit_bitop(BitOp::Test, a, b);
                self.e.emit_setcc(Cond::Ltu, a); // carry = the tested bit
            }
            CzeroEqz | CzeroNez => {
                self.e.emit_load_imm(Reg::Rdx, 0);
                self.e.emit_alu32(Alu::Test, b, b);
                let c = if i.op == CzeroEqz { Cond::Eq } else { Cond::Ne };
                self.e.emit_cmov(c, a, Reg::Rdx);
            }
            Clmul | Clmulh | Clmulr => {
                let f = match i.op {
                    Clmul => self.helpers.clmul,
                    Clmulh => self.helpers.clmulh,
                    _ => self.helpers.clmulr,
                };
                self.e.emit_mov(Reg::Rdi, a);
                self.e.emit_mov(Reg::Rsi, b);
                self.spill_caller_saved();
                self.e.emit_call(f);
                self.reload_caller_saved();
            }
            _ => unreachable_op(),
        }
        self.set(i.rd, a);
    }

    /// Division or remainder of eax by ecx into eax, with RISC-V's results where x86 would
    /// fault: a zero divisor gives quotient all ones and remainder the dividend; signed
    /// overflow (`MIN / -1`) gives quotient `MIN` and remainder 0.
    fn divide(&mut self, signed: bool, rem: bool) {
        let (a, b) = (Reg::Rax, Reg::Rcx);
        let (zero, divide, done) = (self.e.label(), self.e.label(), self.e.label());
        self.e.emit_alu32(Alu::Test, b, b);
        self.e.emit_jcc(Cond::Eq, zero);
        let overflow = signed.then(|| {
            let overflow = self.e.label();
            self.e.emit_alu32_imm32(Alu::Cmp, b, u32::MAX);
            self.e.emit_jcc(Cond::Ne, divide);
            self.e.emit_alu32_imm32(Alu::Cmp, a, 0x8000_0000);
            self.e.emit_jcc(Cond::Eq, overflow);
            overflow
        });
        self.e.bind(divide);
        self.e.emit_div32(b, signed);
        if rem {
            self.e.emit_mov(a, Reg::Rdx);
        }
        self.e.emit_jmp(done);
        self.e.bind(zero);
        if !rem {
            self.e.emit_load_imm(a, u32::MAX);
        }
        if let Some(overflow) = overflow {
            self.e.emit_jmp(done);
            self.e.bind(overflow);
            if rem {
                self.e.emit_load_imm(a, 0);
            }
        }
        self.e.bind(done);
    }

    /// One-operand Zbb operations (rd != x0).
    fn alu_unary(&mut self, i: &Insn) {
        use Op::*;
        let a = Reg::Rax;
        self.get(a, i.rs1);
        match i.op {
            Clz => {
                // bsr gives 31 - clz for a nonzero value; zero takes the cmov: 63 ^ 31 = 32.
                self.e.emit_load_imm(Reg::Rdx, 63);
                self.e.emit_bitscan(a, a, true);
                self.e.emit_cmov(Cond::Eq, a, Reg::Rdx);
                self.e.emit_alu32_imm32(Alu::Xor, a, 31);
            }
            Ctz => {
                self.e.emit_load_imm(Reg::Rdx, 32);
                self.e.emit_bitscan(a, a, false);
                self.e.emit_cmov(Cond::Eq, a, Reg::Rdx);
            }
            Cpop if self.popcnt => self.e.emit_popcnt(a, a),
            Cpop | OrcB => {
                let f = if i.op == Cpop {
                    self.helpers.cpop
                } else {
                    self.helpers.orc_b
                };
                self.e.emit_mov(Reg::Rdi, a);
                self.spill_caller_saved();
                self.e.emit_call(f);
                self.reload_caller_saved();
            }
            SextB => self.e.emit_unary32(Unary::Sext8, a),
            SextH => self.e.emit_unary32(Unary::Sext16, a),
            ZextH => self.e.emit_unary32(Unary::Zext16, a),
            Rev8 => self.e.emit_unary32(Unary::Bswap, a),
            _ => unreachable_op(),
        }
        self.set(i.rd, a);
    }

    /// GEN_BRANCH: compare, then leave for the target or the next instruction; true if it
    /// ended the block (false: the next block follows inline, see [`Self::fallthrough`]).
    fn branch(&mut self, i: &Insn, pc: u32, index: u32) -> bool {
        use Op::*;
        let a = match self.operand(i.rs1) {
            Operand::Reg(r) => r,
            _ => {
                self.get(Reg::Rax, i.rs1);
                Reg::Rax
            }
        };
        self.alu_with(Alu::Cmp, a, self.operand(i.rs2));
        let (cond, not_cond) = match i.op {
            Beq => (Cond::Eq, Cond::Ne),
            Bne => (Cond::Ne, Cond::Eq),
            Blt => (Cond::Lt, Cond::Ge),
            Bge => (Cond::Ge, Cond::Lt),
            Bltu => (Cond::Ltu, Cond::Geu),
            _ => (Cond::Geu, Cond::Ltu),
        };
        let (next_pc, target) = (pc.wrapping_add(i.len as u32), pc.wrapping_add(i.imm as u32));
        let other = self.e.label();
        let self_loop = self.self_loop.is_some() && target == self.pc0;
        if self.fallthrough == Some(next_pc) {
            // The first block's final branch: the next block's code follows. The back edge of
            // a loop stays inline (as below); any other taken exit goes out of line.
            self.fallthrough = None;
            if self_loop {
                self.e.emit_jcc(not_cond, other);
                self.exit_to(target, index + 1);
                self.e.bind(other);
            } else {
                self.e.emit_jcc(cond, other);
                self.ool.push(OutOfLine::Exit {
                    entry: other,
                    dirty: self.dirty,
                    target,
                    retired: index + 1,
                });
            }
            return false;
        }
        if self_loop {
            // The loop's back edge falls through from the compare, so an iteration takes one
            // host branch (the back edge's own), not a jump to it and one back.
            self.e.emit_jcc(not_cond, other);
            self.exit_to(target, index + 1);
            self.e.bind(other);
            self.exit_to(next_pc, index + 1);
        } else {
            self.e.emit_jcc(cond, other);
            self.exit_to(next_pc, index + 1);
            self.e.bind(other);
            self.exit_to(target, index + 1);
        }
        true
    }

    /// The guest address `rs1 + imm` into esi, and the TLB lookup: on a hit (and an aligned
    /// address) rdx holds the addend, so the host address is `rdx + rsi`; otherwise jump to
    /// `slow`. Misaligned addresses always take the slow path, whose helper behaves exactly as
    /// the interpreter (trap, or bytewise access when allowed).
    /// Returns the register that holds the guest address: esi, or without checks
    /// ([`Self::unchecked`]) the host register caching rs1 when the offset is 0 (32-bit
    /// operations keep a cached register's upper half zero, so it indexes as the address).
    fn tlb_lookup(&mut self, i: &Insn, size: u32, write: bool, slow: Label) -> Reg {
        if let (true, Some(_), 0, Operand::Reg(r)) =
            (self.unchecked, self.flat_base, i.imm, self.operand(i.rs1))
        {
            self.tlb_check(size, write, slow);
            return r;
        }
        self.address(i.rs1, i.imm);
        self.tlb_check(size, write, slow);
        Reg::Rsi
    }

    /// esi = x[rs1] + imm (a constant when folding made rs1 x0).
    fn address(&mut self, rs1: u8, imm: i32) {
        let va = Reg::Rsi;
        if rs1 == 0 {
            self.e.emit_load_imm(va, imm as u32);
            return;
        }
        match self.operand(rs1) {
            Operand::Reg(r) if imm != 0 => self.e.emit_lea32(va, r, imm),
            _ => {
                self.get(va, rs1);
                if imm != 0 {
                    self.e.emit_alu32_imm32(Alu::Add, va, imm as u32);
                }
            }
        }
    }

    /// The TLB lookup for a `size`-byte access at esi: on a hit of an aligned address, rdx
    /// holds the addend; otherwise jump to `slow`. The alignment test is part of the tag
    /// compare (the address keeps its low bits, which no tag has), so it costs nothing.
    fn tlb_check(&mut self, size: u32, write: bool, slow: Label) {
        if let (true, Some(base)) = (self.unchecked, self.flat_base) {
            // No check at all: the host's page protection catches a bad access, and x86
            // performs a misaligned one as user mode's emulation would. `slow` stays
            // unreachable. A base low enough is the access's displacement instead.
            if self.low_flat_base().is_none() {
                self.e.emit_load_imm64(Reg::Rdx, base as u64);
            }
            return;
        }
        let va = Reg::Rsi;
        // rax = index * sizeof(TlbEntry): the entry is at hart + rax + the array's offset.
        let entry_size = std::mem::size_of::<TlbEntry>() as u32;
        debug_assert!(entry_size.is_power_of_two());
        self.e.emit_mov(Reg::Rax, va);
        self.e
            .emit_shift32_imm(Shift::Shr, Reg::Rax, 12 - entry_size.trailing_zeros() as u8);
        self.e
            .emit_alu32_imm32(Alu::And, Reg::Rax, (TLB_ENTRIES as u32 - 1) * entry_size);
        let arr = tlb_array(write);
        self.e.emit_mov(Reg::Rcx, va);
        self.e
            .emit_alu32_imm32(Alu::And, Reg::Rcx, !PAGE_MASK | (size - 1));
        self.e.emit_cmp32_indexed(
            Reg::Rcx,
            HART,
            Reg::Rax,
            arr + offset_of!(TlbEntry, tag) as i32,
        );
        self.e.emit_jcc(Cond::Ne, slow);
        match self.flat_base {
            // The host address does not wait for the entry's addend: the access's address
            // depends on the guest address only, and the tag check is off that path.
            Some(base) => self.e.emit_load_imm64(Reg::Rdx, base as u64),
            None => self.e.emit_load_indexed(
                Width::B64,
                false,
                Reg::Rdx,
                HART,
                Reg::Rax,
                arr + offset_of!(TlbEntry, addend) as i32,
            ),
        }
    }

    /// Without checks, the flat memory's base if a sign-extended 32-bit displacement reaches
    /// it (and a page's offsets past it): accesses then address `[va + base]`, with no
    /// register loaded with the base (`GuestMemory` reserves it low when it can).
    fn low_flat_base(&self) -> Option<i32> {
        let base = self.flat_base.filter(|_| self.unchecked)?;
        i32::try_from(base + 0x1000).ok().map(|_| base as i32)
    }

    /// Load from guest address `va` + `disp` once [`Self::tlb_check`] let it through: `[rdx +
    /// va + disp]`, or without checks and with a low base `[va + base + disp]`.
    fn emit_guest_load(&mut self, w: Width, signed: bool, dst: Reg, va: Reg, disp: i32) {
        match self.low_flat_base() {
            Some(base) => self.e.emit_load(w, signed, dst, Mem::at(va, base + disp)),
            None => self.e.emit_load_indexed(w, signed, dst, Reg::Rdx, va, disp),
        }
    }

    /// Store to guest address `va` + `disp`, as [`Self::emit_guest_load`] loads.
    fn emit_guest_store(&mut self, w: Width, va: Reg, disp: i32, src: Reg) {
        match self.low_flat_base() {
            Some(base) => self.e.emit_store(w, Mem::at(va, base + disp), src),
            None => self.e.emit_store_indexed(w, Reg::Rdx, va, disp, src),
        }
    }

    /// GEN_LOAD: inline TLB hit path, helper on a miss.
    fn load(&mut self, i: &Insn, pc: u32, index: u32) {
        let (w, signed, size, helper) = match i.op {
            Op::Lb => (Width::B8, true, 1, self.helpers.load_u8),
            Op::Lbu => (Width::B8, false, 1, self.helpers.load_u8),
            Op::Lh => (Width::B16, true, 2, self.helpers.load_u16),
            Op::Lhu => (Width::B16, false, 2, self.helpers.load_u16),
            _ => (Width::B32, false, 4, self.helpers.load_u32),
        };
        let (slow, resume) = (self.e.label(), self.e.label());
        // What the slow path writes back: the registers changed before this load (rd's host
        // register may not even hold its old value yet).
        let dirty = self.dirty;
        let va = self.tlb_lookup(i, size, false, slow);
        if self.unchecked {
            // No slow path to join: straight into rd's host register, if it has one.
            match self.cached[i.rd as usize & 31] {
                Some(d) if i.rd != 0 => {
                    self.emit_guest_load(w, signed, d, va, 0);
                    self.dirty |= 1 << (i.rd & 31);
                }
                _ => {
                    self.emit_guest_load(w, signed, Reg::Rax, va, 0);
                    self.set(i.rd, Reg::Rax);
                }
            }
            return;
        }
        self.emit_guest_load(w, signed, Reg::Rax, va, 0);
        self.e.bind(resume);
        // eax holds the value on both paths.
        self.set(i.rd, Reg::Rax);
        let trap = self.trap_exit(index, pc);
        self.ool.push(OutOfLine::Load {
            dirty,
            entry: slow,
            resume,
            helper,
            op: i.op,
            trap,
        });
    }

    /// GEN_STORE: inline TLB hit path (pages holding code have no write entries), helper on a
    /// miss, which also notices stores into code.
    fn store(&mut self, i: &Insn, pc: u32, index: u32) {
        let (w, size, helper) = match i.op {
            Op::Sb => (Width::B8, 1, self.helpers.store_u8),
            Op::Sh => (Width::B16, 2, self.helpers.store_u16),
            _ => (Width::B32, 4, self.helpers.store_u32),
        };
        let (slow, resume) = (self.e.label(), self.e.label());
        let va = self.tlb_lookup(i, size, true, slow);
        // A cached rs2 is stored from its host register.
        let value = match self.operand(i.rs2) {
            Operand::Reg(r) => r,
            _ => {
                self.get(Reg::Rcx, i.rs2);
                Reg::Rcx
            }
        };
        self.emit_guest_store(w, va, 0, value);
        self.e.bind(resume);
        let trap = self.trap_exit(index, pc);
        let written = self.written_exit(index, pc.wrapping_add(i.len as u32));
        // The slow path re-reads rs2 from the hart (the fast path clobbered rcx).
        self.ool.push(OutOfLine::Store {
            dirty: self.dirty,
            entry: slow,
            resume,
            helper,
            rs2: i.rs2,
            trap,
            written,
        });
    }

    /// FP loads and stores: with the FP unit on, the same inline TLB path as integer accesses
    /// (single values NaN-boxed on load, mstatus.FS marked dirty); the rest in the helper,
    /// which runs the interpreter's full path (`semantics::exec_fp_mem`).
    fn fp_load_store(&mut self, i: &Insn, pc: u32, index: u32) {
        let (w, size, store) = match i.op {
            Op::Flw => (Width::B32, 4, false),
            Op::Fld => (Width::B64, 8, false),
            Op::Fsw => (Width::B32, 4, true),
            _ => (Width::B64, 8, true),
        };
        let (slow, resume) = (self.e.label(), self.e.label());
        self.test_fp_on(slow);
        let va = self.tlb_lookup(i, size, store, slow);
        if store {
            self.e.emit_load(w, false, Reg::Rcx, freg(i.rs2));
            self.emit_guest_store(w, va, 0, Reg::Rcx);
        } else {
            self.emit_guest_load(w, false, Reg::Rax, va, 0);
            if size == 4 {
                self.e.emit_load_imm64(Reg::Rcx, 0xffff_ffff_0000_0000);
                self.e.emit_or64(Reg::Rax, Reg::Rcx);
            }
            self.e.emit_store(Width::B64, freg(i.rd), Reg::Rax);
            self.mark_fp_dirty();
        }
        self.e.bind(resume);
        let trap = self.trap_exit(index, pc);
        let written = self.written_exit(index, pc.wrapping_add(i.len as u32));
        self.ool.push(OutOfLine::FpMem {
            dirty: self.dirty,
            entry: slow,
            resume,
            insn: *i,
            trap,
            written,
        });
    }

    /// After a helper returned a status in eax: go back to `resume` if it is 0; otherwise fall
    /// through.
    fn resume_if_ok(&mut self, resume: Label) {
        self.e.emit_alu32(Alu::Test, Reg::Rax, Reg::Rax);
        if self.caller_saved_mask() != 0 {
            let failed = self.e.label();
            self.e.emit_jcc(Cond::Ne, failed);
            self.reload_caller_saved();
            self.e.emit_jmp(resume);
            self.e.bind(failed);
        } else {
            self.e.emit_jcc(Cond::Eq, resume);
        }
    }

    /// Emit the slow paths and the exits collected while compiling the body.
    fn emit_out_of_line(&mut self) {
        for item in std::mem::take(&mut self.ool) {
            match item {
                OutOfLine::Exit {
                    entry,
                    dirty,
                    target,
                    retired,
                } => {
                    self.e.bind(entry);
                    let inline_dirty = std::mem::replace(&mut self.dirty, dirty);
                    self.exit_to(target, retired);
                    self.dirty = inline_dirty;
                }
                OutOfLine::Load {
                    dirty,
                    entry,
                    resume,
                    helper,
                    op,
                    trap,
                } => {
                    self.e.bind(entry);
                    emit_counters_to_memory(&mut self.e);
                    self.write_back(dirty);
                    // helper(hart, ctx, va) -> (status << 32) | value
                    self.e.emit_mov(Reg::Rdx, Reg::Rsi);
                    self.helper_args();
                    self.e.emit_call(helper);
                    self.counters_after_call();
                    self.e.emit_mov64(Reg::Rcx, Reg::Rax);
                    self.e.emit_shr64_imm(Reg::Rcx, 32, false);
                    self.e.emit_jcc(Cond::Ne, trap);
                    self.reload_caller_saved();
                    match op {
                        Op::Lb => self.e.emit_unary32(Unary::Sext8, Reg::Rax),
                        Op::Lh => self.e.emit_unary32(Unary::Sext16, Reg::Rax),
                        _ => {}
                    }
                    self.e.emit_jmp(resume);
                }
                OutOfLine::FpOp {
                    dirty,
                    entry,
                    resume,
                    insn,
                    trap,
                    cache_after,
                } => {
                    self.e.bind(entry);
                    emit_counters_to_memory(&mut self.e);
                    self.write_back(dirty);
                    self.emit_fp_slow_path(&insn, trap);
                    self.reload_fp_cache(&cache_after);
                    self.e.emit_jmp(resume);
                }
                OutOfLine::FpMem {
                    dirty,
                    entry,
                    resume,
                    insn,
                    trap,
                    written,
                } => {
                    self.e.bind(entry);
                    emit_counters_to_memory(&mut self.e);
                    self.write_back(dirty);
                    // helper(hart, ctx, insn) -> status
                    self.helper_args();
                    self.insn_arg(&insn);
                    self.e.emit_call(self.helpers.fp_mem);
                    self.counters_after_call();
                    self.resume_if_ok(resume);
                    self.e.emit_alu32_imm32(Alu::Cmp, Reg::Rax, STATUS_TRAP);
                    self.e.emit_jcc(Cond::Eq, trap);
                    self.e.emit_jmp(written);
                }
                OutOfLine::Store {
                    dirty,
                    entry,
                    resume,
                    helper,
                    rs2,
                    trap,
                    written,
                } => {
                    self.e.bind(entry);
                    emit_counters_to_memory(&mut self.e);
                    self.write_back(dirty);
                    // helper(hart, ctx, va, value) -> status
                    self.e.emit_mov(Reg::Rdx, Reg::Rsi);
                    self.get(Reg::Rcx, rs2);
                    self.helper_args();
                    self.e.emit_call(helper);
                    self.counters_after_call();
                    self.resume_if_ok(resume);
                    self.e.emit_alu32_imm32(Alu::Cmp, Reg::Rax, STATUS_TRAP);
                    self.e.emit_jcc(Cond::Eq, trap);
                    self.e.emit_jmp(written);
                }
            }
        }
        if let Some((_, exit)) = self.self_loop {
            // The loop's back edge ran out of budget (or hit the instruction limit).
            self.e.bind(exit);
            self.write_back(self.cached_mask());
            self.e.emit_store_imm32(hart_pc(), self.pc0);
            self.e.emit_jmp_abs(self.stubs.exit_next);
        }
        for (index, pc, l) in std::mem::take(&mut self.trap_exits) {
            // The faulting instruction did not retire: pc and instret name it. The helper
            // stored the trap in the run state.
            self.e.bind(l);
            self.e.emit_store_imm32(hart_pc(), pc);
            if index > 0 {
                self.e.emit_add64_imm(INSTRET, index as i32);
            }
            self.e.emit_load_imm(Reg::Rax, Exit::TRAP.0);
            self.e.emit_jmp_abs(self.stubs.exit);
        }
        for (index, next_pc, l) in std::mem::take(&mut self.written_exits) {
            // The store retired, but it may have changed this very block: leave after it.
            self.e.bind(l);
            self.e.emit_store_imm32(hart_pc(), next_pc);
            self.e.emit_add64_imm(INSTRET, index as i32 + 1);
            self.e.emit_load_imm(Reg::Rax, Exit::CODE_WRITTEN.0);
            self.e.emit_jmp_abs(self.stubs.exit);
        }
    }
}

/// Whether `i` writes an integer rd and reads no register through the fields it shares with
/// rd: loads, `lui`, `auipc` and integer operations (their sources are rs1/rs2 only).
fn writes_int_rd_only(i: &Insn) -> bool {
    use Op::*;
    i.fusion == crate::isa::Fusion::None
        && (matches!(i.op, Lui | Auipc | Lb | Lh | Lw | Lbu | Lhu)
            || i.op.class() == crate::isa::ops::OpClass::Alu)
}

/// Each template family is called only from the `match` in [`BlockCompiler::insn`] for its own
/// operations, so this is a bug in this file, never something a guest can cause; emitting
/// nothing instead would silently miscompile.
#[cold]
fn unreachable_op() -> ! {
    unreachable!("template family called for an operation outside it")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From any instret, a back edge retiring `n` finds the masked bits zero exactly once per
    /// period of a power of two iterations, which runs at most about
    /// [`LOOP_INSNS_PER_BUDGET`] instructions.
    #[test]
    fn a_loops_budget_mask_is_zero_once_per_period_from_any_start() {
        for n in 1..=80u32 {
            let mask = loop_budget_mask(n);
            let period = if mask == 0 {
                1
            } else {
                (mask >> n.trailing_zeros()) + 1
            };
            assert!(period.is_power_of_two(), "n {n}: mask {mask:#x}");
            assert!(
                period * n <= LOOP_INSNS_PER_BUDGET.max(n),
                "n {n}: period {period}"
            );
            for start in [0u64, 1, 3, 7, 12, 1 << 33 | 5, u64::from(u32::MAX) - 2] {
                let hits: Vec<u32> = (1..=4 * period)
                    .filter(|&k| (start + u64::from(k * n)) as u32 & mask == 0)
                    .collect();
                assert_eq!(hits.len(), 4, "n {n}, start {start}: {hits:?}");
                assert!(
                    hits.windows(2).all(|w| w[1] - w[0] == period),
                    "n {n}, start {start}: {hits:?}"
                );
            }
        }
    }
}
