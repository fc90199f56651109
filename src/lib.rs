//! rv32vm: a full-system 32-bit RISC-V virtual machine.
//!
//! Data flows one way: CLI -> machine or user process -> engine (tiers) -> CPU state / MMU ->
//! RAM or device bus. See docs/architecture.md.

pub mod bare;
pub mod cpu;
pub mod elf;
pub mod exec;
pub mod isa;
pub mod machine;
pub mod user;

/// Print engine statistics (`--stats`) to stderr.
pub fn report_stats(engine: &exec::Engine, hart: &cpu::Hart) {
    eprint!("{}", format_stats(engine, hart));
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
    let _ = writeln!(out, "  code flushes          {}", s.code_flushes);
    let _ = writeln!(out, "  traps                 {}", s.traps);
    if s.jit.blocks_compiled > 0 || s.t1_entries > 0 {
        let share = if hart.instret > 0 {
            100.0 * s.t1_insns as f64 / hart.instret as f64
        } else {
            0.0
        };
        let j = &s.jit;
        let _ = writeln!(out, "  tier 1:");
        let _ = writeln!(out, "    blocks compiled     {}", j.blocks_compiled);
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
        let _ = writeln!(out, "    links patched       {}", j.links_patched);
    }
    out
}
