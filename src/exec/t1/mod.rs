//! Tier 1: a template JIT for x86-64. A block's decoded instructions become native code,
//! instruction by instruction, from templates ([`templates`]) written against a small emit
//! layer ([`emit`], the only code that knows x86 encodings). Loads and stores inline the
//! software-TLB lookup; everything with shared Rust semantics (A, F/D, CSRs, system
//! instructions, slow memory paths) is called through `extern "sysv64"` helpers ([`crate::exec::abi`]).
//!
//! How compiled code is entered and left, how traps stay precise, how blocks are chained and
//! how chains are undone when code is invalidated: docs/codegen.md.

pub mod arena;
pub mod emit;
pub mod templates;

use crate::addr_hash::AddrMap;
use std::any::TypeId;
use std::mem::offset_of;
use std::time::{Duration, Instant};

use crate::cpu::Hart;
use crate::exec::abi::Helpers;
use crate::exec::code_dump::CodeDump;
use crate::exec::contract::{RegionUse, RunCtx};
use crate::exec::platform::Platform;
use crate::isa::Insn;
use arena::{CodeArena, DEFAULT_ARENA_SIZE};
use emit::{Emitter, Reg, PATCHABLE_JMP_LEN};
use templates::BlockCompiler;

/// Blocks entered per entry into compiled code (chained or through the dispatcher) before it
/// returns to the run loop, so between-blocks work (interrupts, exit requests) comes around
/// regularly even in a loop that chains to itself.
pub const JIT_CHAIN_BUDGET: u32 = 256;

/// Why a block could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    /// The code arena has no room left: drop all code and start over.
    #[error("code arena full")]
    ArenaFull,
    /// Code memory could not be mapped.
    #[error("cannot map code memory: {0}")]
    Map(#[from] std::io::Error),
    /// The assembler refused the code (a bug in a template).
    #[error("assembler error: {0}")]
    Assemble(String),
}

/// Addresses of the shared stubs at the start of the arena.
#[derive(Clone, Debug)]
pub struct Stubs {
    /// `extern "sysv64" fn(hart, ctx, code) -> u32`: save callee-saved registers, set up the
    /// block registers and jump to `code`.
    pub entry: usize,
    /// Restore and return to the run loop with the exit code in eax.
    pub exit: usize,
    /// Return [`crate::exec::contract::Exit::NEXT`] (budget or instruction limit reached).
    pub exit_next: usize,
    /// Ask the dispatcher for the block at `hart.pc` and jump to it, or leave.
    pub dispatch: usize,
}

/// Native code of one block.
#[derive(Debug)]
pub struct Compiled {
    /// Host address of the code.
    pub entry: usize,
    /// The guest pc the code was compiled for: pcs are constants in it, so it runs only when
    /// the block is entered at this pc (the same bytes reached through another mapping run
    /// in the interpreter).
    pub pc: u32,
    /// Bytes of code.
    pub len: usize,
    /// Host addresses of the blocks its chain sites lead to.
    targets: Vec<usize>,
    /// For a stub ([`Jit::install_native`]): the function it calls; else 0.
    #[cfg_attr(not(test), allow(dead_code))]
    native: usize,
}

/// A direct exit of a compiled block, waiting for or chained to its target.
#[derive(Debug)]
struct Link {
    /// Address of the patchable jump.
    site: usize,
    /// The guest pc it leaves to.
    target_pc: u32,
    /// Host address (identity) of the block the site is in.
    from: usize,
    /// Whether the jump currently goes to the target's code.
    linked: bool,
}

/// What a block's compile may know of the machine beyond the block.
#[derive(Clone, Copy)]
pub struct CompileEnv<'a> {
    /// The platform's flat RAM base (`Platform::flat_host_base`).
    pub flat_base: Option<usize>,
    /// The engine's block index by host address, so direct exits to compiled blocks are
    /// chained at once.
    pub by_host: &'a AddrMap<usize, u32>,
    /// Where the execute TLB maps a guest pc now: direct exits to other pages are chained
    /// to the code found there, under a guard that the mapping still holds.
    pub exec_host: &'a dyn Fn(u32) -> Option<usize>,
    /// Loads and stores need no check (`Platform::unchecked_memory`, with `flat_base`).
    pub unchecked: bool,
    /// The instructions are two blocks': past the first's final conditional branch, they go
    /// on at this pc, where that branch falls through to (on the same page).
    pub fallthrough: Option<u32>,
}

/// Tier-1 counters for `--stats`.
#[derive(Clone, Debug, Default)]
pub struct JitStats {
    pub blocks_compiled: u64,
    pub code_bytes: u64,
    pub compile_time: Duration,
    pub links_patched: u64,
    /// Direct exits to another page given a guarded chain site.
    pub cross_page_sites: u64,
    /// Blocks compiled together with the block they fall through to
    /// ([`CompileEnv::fallthrough`]).
    pub fallthroughs: u64,
    pub compile_failures: u64,
}

/// The tier-1 compiler and its code memory.
pub struct Jit {
    arena: Option<CodeArena>,
    /// Stubs and helpers for the platform type they were emitted for.
    runtime: Option<(TypeId, Stubs, Helpers)>,
    /// Bytes at the arena start that hold the stubs.
    stub_bytes: usize,
    /// Direct exits by the host address of the block they lead to.
    links: AddrMap<usize, Vec<Link>>,
    chaining: bool,
    /// Profiling output asked for with `RV32VM_JIT_DUMP` (see [`CodeDump`]).
    dump: Option<CodeDump>,
    /// Code per block, by the engine's block index.
    code: Vec<BlockCode>,
    pub stats: JitStats,
}

/// What tier 1 has for one block.
#[derive(Debug, Default)]
enum BlockCode {
    /// Not compiled (yet).
    #[default]
    None,
    /// Compilation failed: the block stays in the interpreter.
    Failed,
    /// A higher tier took the block over: its code was dropped and is not made again.
    Superseded,
    /// Compiled.
    Done(Compiled),
}

/// What tier 1 has for a block entered at some pc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Nothing yet: the block may be compiled.
    Uncompiled,
    /// Code for this pc (its entry), or 0: compiled for another pc, or failed; either way
    /// the block runs interpreted here and is not compiled again.
    Settled(usize),
}

impl Jit {
    /// A compiler; `chaining` enables patched jumps between blocks.
    pub fn new(chaining: bool) -> Jit {
        Jit {
            arena: None,
            runtime: None,
            stub_bytes: 0,
            links: AddrMap::default(),
            chaining,
            dump: CodeDump::from_env("code"),
            code: Vec::new(),
            stats: JitStats::default(),
        }
    }

    /// What tier 1 has for block `idx` entered at `pc`.
    #[inline(always)]
    pub fn lookup(&self, idx: u32, pc: u32) -> Lookup {
        match self.code.get(idx as usize) {
            None | Some(BlockCode::None) => Lookup::Uncompiled,
            Some(BlockCode::Failed | BlockCode::Superseded) => Lookup::Settled(0),
            Some(BlockCode::Done(c)) => Lookup::Settled(if c.pc == pc { c.entry } else { 0 }),
        }
    }

    /// Every stub ([`Jit::install_native`]): its block, the pc it was made for and the
    /// function it calls.
    #[cfg(test)]
    pub fn stubs(&self) -> Vec<(u32, u32, usize)> {
        let mut stubs = Vec::new();
        for (idx, code) in self.code.iter().enumerate() {
            if let BlockCode::Done(c) = code {
                if c.native != 0 {
                    stubs.push((idx as u32, c.pc, c.native));
                }
            }
        }
        stubs
    }

    /// Remember that block `idx` cannot be compiled.
    pub fn mark_failed(&mut self, idx: u32) {
        self.set_code(idx, BlockCode::Failed);
        self.stats.compile_failures += 1;
    }

    fn set_code(&mut self, idx: u32, code: BlockCode) {
        let i = idx as usize;
        if self.code.len() <= i {
            self.code.resize_with(i + 1, BlockCode::default);
        }
        self.code[i] = code;
    }

    /// Compile block `idx` (`insns` at guest `pc`, host address `host`) and keep its code;
    /// returns the code's entry.
    pub fn compile_block<P: Platform + 'static>(
        &mut self,
        idx: u32,
        insns: &[Insn],
        pc: u32,
        host: usize,
        env: &CompileEnv<'_>,
    ) -> Result<usize, JitError> {
        let by_host = env.by_host;
        // The code table is read while chaining the new block's exits; `compile` does not
        // touch it, so lend it out for the call.
        let code = std::mem::take(&mut self.code);
        let compiled_at = |h: usize| {
            let i = *by_host.get(&h)?;
            match code.get(i as usize)? {
                BlockCode::Done(c) => Some((c.pc, c.entry)),
                _ => None,
            }
        };
        let result = self.compile::<P>(insns, pc, host, env, compiled_at);
        self.code = code;
        let compiled = result?;
        self.stats.fallthroughs += env.fallthrough.is_some() as u64;
        let entry = compiled.entry;
        self.set_code(idx, BlockCode::Done(compiled));
        Ok(entry)
    }

    /// A higher tier runs block `idx` (at host address `host`) from now on: drop its code and
    /// chains into it (they go back to the dispatcher), and never compile it again.
    pub fn supersede(&mut self, idx: u32, host: usize) {
        self.invalidate(idx, host);
        self.set_code(idx, BlockCode::Superseded);
    }

    /// A higher tier no longer runs block `idx` (at host address `host`): drop the stub or
    /// mark that sent it there, so the block is compiled again at its next entry.
    pub fn revert(&mut self, idx: u32, host: usize) {
        self.invalidate(idx, host);
        if let Some(code @ BlockCode::Superseded) = self.code.get_mut(idx as usize) {
            *code = BlockCode::None;
        }
    }

    /// A higher tier runs block `idx` (guest `pc`, host address `host`) through `native`, a
    /// C function `u32 f(Hart *, RunCtx *)` that returns the run loop's exit code with
    /// `hart.pc` set (a tier-2 region). Its tier-1 entry becomes a stub that calls `native` and
    /// then goes on as a block ending in an indirect jump would (or leaves with its exit code),
    /// and chained jumps into the block now reach the stub, so compiled code never returns to
    /// the run loop just to change tiers. The stub counts its calls and the instructions they
    /// retire in `*usage`, which must stay valid as long as the stub may run (until the next
    /// [`Jit::reset`]). Returns the stub's entry.
    pub fn install_native<P: Platform + 'static>(
        &mut self,
        idx: u32,
        pc: u32,
        host: usize,
        native: usize,
        usage: *mut RegionUse,
    ) -> Result<usize, JitError> {
        self.prepare::<P>()?;
        self.invalidate(idx, host);
        let (Some(arena), Some((_, stubs, _))) = (&mut self.arena, &self.runtime) else {
            return Err(JitError::ArenaFull); // not reachable: `prepare` made both
        };
        let base = arena.next_addr();
        let mut e = Emitter::new(base);
        // The block registers hold the hart and the context; every guest register is in the
        // hart (compiled code writes back before any transfer), as `native` expects. A chained
        // jump leaves `hart.pc` stale, and a region entered at several blocks reads it.
        e.emit_store_imm32(templates::hart_pc(), pc);
        // Count the call and, in r12 (callee-saved, free between blocks), instret before it.
        let entries = emit::Mem::at(Reg::Rax, offset_of!(RegionUse, entries) as i32);
        e.emit_load_imm64(Reg::Rax, usage as u64);
        e.emit_alu64_mem_imm(emit::Alu::Add, entries, 1);
        e.emit_mov64(Reg::R12, templates::INSTRET);
        // The region counts in memory.
        templates::emit_counters_to_memory(&mut e);
        // A fast region that chains returns the next region's entry: call that in turn.
        e.emit_load_imm64(Reg::Rax, native as u64);
        let call = e.label();
        e.bind(call);
        e.emit_mov64(Reg::Rdi, Reg::Rbx);
        e.emit_mov64(Reg::Rsi, Reg::Rbp);
        e.emit_call_reg(Reg::Rax);
        e.emit_cmp64_imm(Reg::Rax, crate::exec::abi::FIRST_REGION_ENTRY as i32);
        e.emit_jcc(emit::Cond::Geu, call);
        templates::emit_counters_from_memory(&mut e);
        // The instructions the call retired (rax holds the exit code).
        e.emit_mov64(Reg::Rcx, templates::INSTRET);
        e.emit_sub64(Reg::Rcx, Reg::R12);
        e.emit_load_imm64(Reg::Rdx, usage as u64);
        e.emit_add64_to_mem(
            emit::Mem::at(Reg::Rdx, offset_of!(RegionUse, insns) as i32),
            Reg::Rcx,
        );
        e.emit_alu32(emit::Alu::Test, Reg::Rax, Reg::Rax);
        e.emit_jcc_abs(emit::Cond::Ne, stubs.exit);
        // It left with a plain next pc: the checks of a chained transfer, then the dispatcher.
        templates::emit_chain_checks(&mut e, stubs);
        e.emit_load(emit::Width::B32, false, Reg::Rax, templates::hart_pc());
        templates::emit_dispatch(&mut e, stubs, self.chaining);
        let code = e
            .finish()
            .map_err(|err| JitError::Assemble(err.to_string()))?;
        let entry = arena.push(&code).ok_or(JitError::ArenaFull)?;
        self.stats.code_bytes += code.len() as u64;
        // Exits that were waiting for this block.
        if let Some(waiting) = self.links.get_mut(&host) {
            for link in waiting
                .iter_mut()
                .filter(|l| !l.linked && l.target_pc == pc)
            {
                // SAFETY: `link.site` is a patchable jump in live arena code; no compiled code
                // runs while the engine installs code.
                link.linked = unsafe { emit::patch_jmp(link.site, entry) };
                self.stats.links_patched += link.linked as u64;
            }
        }
        self.set_code(
            idx,
            BlockCode::Done(Compiled {
                entry,
                pc,
                len: code.len(),
                targets: Vec::new(),
                native,
            }),
        );
        Ok(entry)
    }

    /// Block `idx` at host address `host` was dropped: jumps chained into its code go back to
    /// the dispatcher, and the code is forgotten (its bytes stay in the arena, unreachable,
    /// until [`Jit::reset`]).
    pub fn invalidate(&mut self, idx: u32, host: usize) {
        if let Some(BlockCode::Done(c)) = self.code.get_mut(idx as usize).map(std::mem::take) {
            self.unlink_block(host, &c);
        }
    }

    /// Make sure the arena exists and holds stubs for platform `P` (dropping all code made for
    /// another platform type: the caller has dropped those blocks).
    fn prepare<P: Platform + 'static>(&mut self) -> Result<(), JitError> {
        let platform = TypeId::of::<P>();
        if matches!(&self.runtime, Some((t, _, _)) if *t == platform) {
            return Ok(());
        }
        let arena = match &mut self.arena {
            Some(a) => a,
            None => self.arena.insert(CodeArena::new(DEFAULT_ARENA_SIZE)?),
        };
        arena.truncate(0);
        self.links.clear();
        // Native FP flags stay pending in MXCSR across chained blocks: every helper takes them
        // into `fflags` before its work (`host_fp::take_mxcsr_flags`).
        let helpers = Helpers::folding_for_platform::<P>();
        let base = arena.next_addr();
        let mut e = Emitter::new(base);
        let entry = base + e.len();
        e.emit_push_callee_saved();
        // Six pushes after the return address: rsp is 8 mod 16; helpers need 0 at calls.
        e.emit_add64_imm(Reg::Rsp, -8);
        e.emit_mov64(Reg::Rbx, Reg::Rdi);
        e.emit_mov64(Reg::Rbp, Reg::Rsi);
        // Compiled code counts in registers (`templates::INSTRET`) until it leaves.
        templates::emit_counters_from_memory(&mut e);
        e.emit_jmp_reg(Reg::Rdx);
        let exit = base + e.len();
        templates::emit_counters_to_memory(&mut e);
        e.emit_add64_imm(Reg::Rsp, 8);
        e.emit_pop_callee_saved_ret();
        let exit_next = base + e.len();
        // The transition that led here was counted against the budget but did not happen.
        e.emit_alu32_imm32(emit::Alu::Add, templates::BUDGET, 1);
        e.emit_load_imm(Reg::Rax, crate::exec::contract::Exit::NEXT.0);
        e.emit_jmp_abs(exit);
        let dispatch = base + e.len();
        templates::emit_counters_to_memory(&mut e);
        e.emit_mov64(Reg::Rdi, Reg::Rbx);
        e.emit_mov64(Reg::Rsi, Reg::Rbp);
        e.emit_call(helpers.dispatch);
        templates::emit_counters_from_memory(&mut e);
        e.emit_cmp64_imm(Reg::Rax, 16);
        e.emit_jcc_abs(emit::Cond::Ltu, exit);
        e.emit_jmp_reg(Reg::Rax);
        let code = e
            .finish()
            .map_err(|err| JitError::Assemble(err.to_string()))?;
        arena.push(&code).ok_or(JitError::ArenaFull)?;
        self.stub_bytes = arena.used();
        self.runtime = Some((
            platform,
            Stubs {
                entry,
                exit,
                exit_next,
                dispatch,
            },
            helpers,
        ));
        Ok(())
    }

    /// Compile the block of `insns` at guest `pc`, host address `host`, in the machine `env`
    /// describes (see [`CompileEnv`]). `compiled_at(host)` tells where compiled code for the
    /// block at a host address is (its pc and entry), so direct exits to it are chained at
    /// once; exits waiting for this block are chained to it.
    fn compile<P: Platform + 'static>(
        &mut self,
        insns: &[Insn],
        pc: u32,
        host: usize,
        env: &CompileEnv<'_>,
        compiled_at: impl Fn(usize) -> Option<(u32, usize)>,
    ) -> Result<Compiled, JitError> {
        let started = Instant::now();
        self.prepare::<P>()?;
        let (Some(arena), Some((_, stubs, helpers))) = (&mut self.arena, &self.runtime) else {
            return Err(JitError::ArenaFull); // not reachable: `prepare` made both
        };
        let base = arena.next_addr();
        let memory = templates::MemoryAccess {
            flat_base: env.flat_base,
            unchecked: env.unchecked,
        };
        let code = BlockCompiler::new(
            base,
            stubs,
            helpers,
            pc,
            self.chaining,
            memory,
            env.exec_host,
        )
        .with_fallthrough(env.fallthrough)
        .compile(insns)
        .map_err(|err| JitError::Assemble(err.to_string()))?;
        let entry = arena.push(&code.code).ok_or(JitError::ArenaFull)?;
        debug_assert_eq!(entry, base);
        let mut targets = Vec::with_capacity(code.sites.len());
        for site in &code.sites {
            // A site on the block's own page (same translation): the target's host address
            // follows from the offset.
            let target_host = site.target_host.unwrap_or_else(|| {
                host.wrapping_add(site.target.wrapping_sub(pc) as i32 as isize as usize)
            });
            self.stats.cross_page_sites += site.target_host.is_some() as u64;
            let mut link = Link {
                site: entry + site.offset,
                target_pc: site.target,
                from: host,
                linked: false,
            };
            if let Some((target_pc, target_entry)) = compiled_at(target_host) {
                if target_pc == site.target {
                    link.linked = self.patch(link.site, target_entry);
                }
            }
            self.links.entry(target_host).or_default().push(link);
            targets.push(target_host);
        }
        // Exits that were waiting for this block (including its own loops).
        if let Some(waiting) = self.links.get_mut(&host) {
            for link in waiting
                .iter_mut()
                .filter(|l| !l.linked && l.target_pc == pc)
            {
                // SAFETY: `link.site` is a patchable jump in live arena code; no compiled code
                // runs while the engine compiles.
                link.linked = unsafe { emit::patch_jmp(link.site, entry) };
                self.stats.links_patched += link.linked as u64;
            }
        }
        if let Some(dump) = &mut self.dump {
            dump.record(entry, pc, &format!("rv32_{pc:08x}"), &code.code);
        }
        self.stats.blocks_compiled += 1;
        self.stats.code_bytes += code.code.len() as u64;
        self.stats.compile_time += started.elapsed();
        Ok(Compiled {
            entry,
            pc,
            len: code.code.len(),
            targets,
            native: 0,
        })
    }

    /// Point the patchable jump at `site` to `target`.
    fn patch(&mut self, site: usize, target: usize) -> bool {
        // SAFETY: `site` is a patchable jump in arena code made by `compile`; no compiled code
        // runs while the engine compiles or invalidates.
        let ok = unsafe { emit::patch_jmp(site, target) };
        self.stats.links_patched += ok as u64;
        ok
    }

    /// The block at host address `host` (compiled as `compiled`) was dropped: jumps chained
    /// into it go back to the dispatcher, and its own exits are forgotten. Its code stays in
    /// the arena (unreachable) until [`Jit::reset`].
    fn unlink_block(&mut self, host: usize, compiled: &Compiled) {
        if let Some(incoming) = self.links.get_mut(&host) {
            for link in incoming.iter_mut().filter(|l| l.linked) {
                // SAFETY: as in `compile`; the jump goes back to the instruction after it,
                // the path to the dispatcher.
                unsafe { emit::patch_jmp(link.site, link.site + PATCHABLE_JMP_LEN) };
                link.linked = false;
            }
        }
        for target in &compiled.targets {
            if let Some(v) = self.links.get_mut(target) {
                v.retain(|l| l.from != host);
            }
        }
    }

    /// Every block was dropped: forget all code (the stubs stay).
    pub fn reset(&mut self) {
        self.code.clear();
        self.links.clear();
        if let Some(a) = &mut self.arena {
            a.truncate(self.stub_bytes);
        }
    }

    /// Run compiled code starting at `code` until it leaves; returns the interpreter's exit
    /// code for how it left (`hart.pc` and `hart.instret` are set as the interpreter would).
    ///
    /// # Safety
    ///
    /// `code` is the entry of live compiled code made by this `Jit` for platform type `P`
    /// and for guest pc `hart.pc`; `ctx` is set up as for [`crate::exec::interp::run_block`]
    /// (its jump cache names only live blocks, whose `code` fields are live compiled code for
    /// `P`).
    pub unsafe fn enter<P: Platform>(
        &self,
        hart: &mut Hart,
        ctx: &mut RunCtx<P>,
        code: usize,
    ) -> u32 {
        let Some((_, stubs, _)) = &self.runtime else {
            return crate::exec::contract::Exit::NEXT.0;
        };
        type EntryFn<P> = unsafe extern "sysv64" fn(*mut Hart, *mut RunCtx<P>, usize) -> u32;
        // SAFETY: `stubs.entry` is the entry stub emitted by `prepare`, with this signature.
        let f: EntryFn<P> = unsafe { std::mem::transmute::<usize, EntryFn<P>>(stubs.entry) };
        ctx.state.budget = JIT_CHAIN_BUDGET;
        ctx.state.chain_limit = ctx.state.limit;
        ctx.state.checked = false;
        // SAFETY: per this function's contract, the code and everything it reaches is live.
        // `ctx.state.budget` now tells how many blocks were entered on the way.
        unsafe { f(hart, ctx, code) }
    }
}
