//! rv32vm: a full-system 32-bit RISC-V virtual machine.
//!
//! Data flows one way: CLI -> machine or user process -> engine (tiers) -> CPU state / MMU ->
//! RAM or device bus. See docs/architecture.md.

pub mod addr_hash;
pub mod bare;
pub mod cpu;
pub mod elf;
pub mod exec;
pub mod gdb;
pub mod hostfile;
pub mod isa;
pub mod machine;
pub mod user;

/// Print engine statistics (`--stats`) to stderr.
pub fn report_stats(engine: &exec::Engine, hart: &cpu::Hart) {
    eprint!("{}", format_stats(engine, hart));
}

/// A short name for exception cause `cause`.
fn trap_cause_name(cause: usize) -> &'static str {
    const NAMES: [&str; 16] = [
        "insn-misaligned",
        "insn-access",
        "illegal",
        "breakpoint",
        "load-misaligned",
        "load-access",
        "store-misaligned",
        "store-access",
        "ecall-U",
        "ecall-S",
        "cause-10",
        "ecall-M",
        "insn-page",
        "load-page",
        "cause-14",
        "store-page",
    ];
    NAMES.get(cause).copied().unwrap_or("other")
}

/// The `--stats` report, one line per figure.
pub fn format_stats(engine: &exec::Engine, hart: &cpu::Hart) -> String {
    use std::fmt::Write as _;
    let s = &engine.stats;
    let secs = s.run_time.as_secs_f64();
    let mips = if secs > 0.0 {
        hart.instret as f64 / secs / 1e6
    } else {
        0.0
    };
    let mut out = String::new();
    let _ = writeln!(out, "rv32vm stats:");
    let _ = writeln!(out, "  instructions retired  {}", hart.instret);
    let _ = writeln!(out, "  run time              {secs:.3} s ({mips:.1} MIPS)");
    let _ = writeln!(out, "  blocks decoded        {}", s.blocks_built);
    let _ = writeln!(out, "  blocks executed       {}", s.blocks_run);
    let _ = writeln!(
        out,
        "  blocks invalidated    {} (stores into code pages)",
        s.blocks_invalidated
    );
    let _ = writeln!(
        out,
        "  code flushes          {} (fence.i dropping only changed code: {})",
        s.code_flushes, s.fence_i_precise
    );
    use isa::Fusion;
    let kinds = [
        (Fusion::LuiAddi, "lui+addi"),
        (Fusion::AuipcAddi, "auipc+addi"),
        (Fusion::AuipcJalr, "auipc+jalr"),
        (Fusion::ShiftMask, "slli+srli"),
        (Fusion::LwRun, "lw runs"),
        (Fusion::SwRun, "sw runs"),
        (Fusion::CmpBranch, "alu+branch"),
    ];
    let fused: Vec<String> = kinds
        .iter()
        .map(|&(k, name)| format!("{name} {}", s.fused_units[k as usize]))
        .collect();
    let _ = writeln!(out, "  fused units built     {}", fused.join(", "));
    let _ = writeln!(out, "  traps                 {}", s.traps);
    let causes: Vec<String> = s
        .trap_causes
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(cause, n)| format!("{} {n}", trap_cause_name(cause)))
        .collect();
    if !causes.is_empty() {
        let _ = writeln!(out, "    by cause            {}", causes.join(", "));
    }
    let e = &s.exits;
    let _ = writeln!(
        out,
        "  exits to run loop     next {}, trap {}, wfi {}, fence.i/flush {}, code written {}",
        e.next, e.trap, e.wfi, e.flush_code, e.code_written
    );
    if s.jit.blocks_compiled > 0 || s.t1_entries > 0 {
        let share = if hart.instret > 0 {
            100.0 * s.t1_insns as f64 / hart.instret as f64
        } else {
            0.0
        };
        let j = &s.jit;
        let _ = writeln!(out, "  tier 1:");
        let _ = writeln!(
            out,
            "    blocks compiled     {} ({} with the block they fall through to)",
            j.blocks_compiled, j.fallthroughs
        );
        let _ = writeln!(out, "    code bytes          {}", j.code_bytes);
        let _ = writeln!(
            out,
            "    compile time        {:.3} s",
            j.compile_time.as_secs_f64()
        );
        let _ = writeln!(out, "    compile failures    {}", j.compile_failures);
        let _ = writeln!(
            out,
            "    instructions        {} ({share:.1}% of retired; the rest interpreted)",
            s.t1_insns
        );
        let _ = writeln!(out, "    entries from loop   {}", s.t1_entries);
        let _ = writeln!(out, "    chained (patched)   {}", s.t1_chained);
        let _ = writeln!(out, "    dispatched          {}", s.t1_dispatched);
        let _ = writeln!(
            out,
            "    links patched       {} ({} exits guarded across pages)",
            j.links_patched, j.cross_page_sites
        );
    }
    let t2 = &s.t2;
    if t2.regions_compiled > 0 || t2.compile_failures > 0 || s.t2_entries > 0 {
        let share = if hart.instret > 0 {
            100.0 * s.t2_insns as f64 / hart.instret as f64
        } else {
            0.0
        };
        let _ = writeln!(out, "  tier 2:");
        let _ = writeln!(
            out,
            "    regions installed   {} ({} blocks, {} instructions; {} from the region cache, {} from the code cache)",
            t2.regions_compiled, t2.region_blocks, t2.region_insns, t2.cache_hits, t2.disk_hits
        );
        let _ = writeln!(
            out,
            "    compile time        {:.3} s on the compile thread (median {:.2} ms per region)",
            t2.compile_time.as_secs_f64(),
            t2.median_compile_time().as_secs_f64() * 1e3
        );
        let _ = writeln!(
            out,
            "    compile failures    {}, dropped stale {}, expired in the queue {}",
            t2.compile_failures, t2.dropped_stale, t2.expired
        );
        if t2.reoptimised > 0 {
            let _ = writeln!(
                out,
                "    re-optimised        {} (fast regions that stayed hot, compiled again with full optimisation)",
                t2.reoptimised
            );
        }
        if t2.retired_short > 0 {
            let _ = writeln!(
                out,
                "    taken back          {} (ran too few instructions per entry; tier 1 runs them)",
                t2.retired_short
            );
        }
        let _ = writeln!(
            out,
            "    instructions        {} ({share:.1}% of retired)",
            s.t2_insns
        );
        let _ = writeln!(out, "    entries from loop   {}", s.t2_entries);
        let _ = writeln!(out, "    chained to region   {}", s.t2_chained);
        let _ = writeln!(
            out,
            "    indirect jumps      {} with a profiled target; predictions: {} hits (went on in the region), {} misses (left it)",
            t2.predicted_jumps, s.t2_indirect_in_region, s.t2_indirect_left_region
        );
    }
    out
}
