//! The `rv32vm` command line: parse arguments, build a user-mode process or a bare-metal
//! machine, run it, and map the outcome to an exit status.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use rv32vm::exec::{EngineConfig, Tier};

#[derive(Parser)]
#[command(name = "rv32vm", version, about = "A 32-bit RISC-V virtual machine")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a static RV32 Linux program in user mode (like qemu-riscv32), or a bare-metal test
    /// program with --bare.
    Run(RunArgs),
}

#[derive(Args)]
struct RunArgs {
    /// Run a bare-metal ELF in M-mode; it reports its result through the HTIF `tohost` word.
    #[arg(long)]
    bare: bool,
    /// With --bare: write the words between begin_signature and end_signature to FILE.
    #[arg(long, value_name = "FILE", requires = "bare")]
    signature: Option<PathBuf>,
    /// Stop after this many instructions (exit status 124).
    #[arg(long, value_name = "N")]
    max_insns: Option<u64>,
    /// Let misaligned loads and stores go to the host directly instead of trapping.
    #[arg(short = 'm', long)]
    allow_misaligned: bool,
    /// Execution tier for every block.
    #[arg(long, default_value = "interp", value_parser = parse_tier)]
    tier: Tier,
    /// Print engine statistics to stderr at exit.
    #[arg(long)]
    stats: bool,
    /// The ELF program.
    program: PathBuf,
    /// Arguments passed to the program.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

fn parse_tier(name: &str) -> Result<Tier, String> {
    Tier::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Tier::ALL.iter().map(|(n, _)| *n).collect();
        format!("unknown tier `{name}` (available: {})", names.join(", "))
    })
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RV32VM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

fn exit_status(code: i32) -> ExitCode {
    ExitCode::from(code.clamp(0, 255) as u8)
}

fn run(args: RunArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let engine = EngineConfig { tier: args.tier };
    if args.bare {
        if !args.args.is_empty() {
            return Err("--bare programs take no arguments".into());
        }
        let opts = rv32vm::bare::BareOptions {
            program: args.program,
            signature: args.signature,
            max_insns: args.max_insns,
            engine,
            allow_misaligned: args.allow_misaligned,
            stats: args.stats,
        };
        return Ok(rv32vm::bare::run(&opts)?);
    }
    let opts = rv32vm::user::UserOptions {
        program: args.program,
        args: args.args,
        allow_misaligned: args.allow_misaligned,
        engine,
        max_insns: args.max_insns,
        stats: args.stats,
    };
    Ok(rv32vm::user::run(opts)?)
}

fn main() -> ExitCode {
    init_tracing();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Run(args)) => match run(args) {
            Ok(code) => exit_status(code),
            Err(e) => {
                eprintln!("rv32vm: error: {e}");
                ExitCode::from(1)
            }
        },
        None => {
            eprintln!(
                "rv32vm: booting Linux (system mode) is not available in this build yet; \
                 try `rv32vm run PROGRAM` or `rv32vm --help`"
            );
            ExitCode::from(2)
        }
    }
}
