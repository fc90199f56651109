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
    let s = &engine.stats;
    let secs = s.run_time.as_secs_f64();
    let mips = if secs > 0.0 {
        hart.instret as f64 / secs / 1e6
    } else {
        0.0
    };
    eprintln!("rv32vm stats:");
    eprintln!("  instructions retired  {}", hart.instret);
    eprintln!("  run time              {secs:.3} s ({mips:.1} MIPS)");
    eprintln!("  blocks decoded        {}", s.blocks_built);
    eprintln!("  blocks executed       {}", s.blocks_run);
    eprintln!(
        "  blocks invalidated    {} (stores into code pages)",
        s.blocks_invalidated
    );
    eprintln!("  code flushes          {}", s.code_flushes);
    eprintln!("  traps                 {}", s.traps);
}
