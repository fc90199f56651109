//! The host side of a running machine, shared by `boot` and `restore`: the console (stdout,
//! `--console-log`, the `--expect` script), the terminal in raw mode with its reader thread,
//! and the run loop that pauses the machine between blocks for statistics and snapshots.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::console::{ConsoleOut, Script};
use super::snapshot;
use super::system::{SaveRequest, System};
use super::terminal::{self, HostRequests, RawTerminal};
use crate::cpu::Hart;
use crate::exec::{Engine, Stop};

/// The host ends of the machine's devices, kept across guest reboots.
pub struct Connections {
    pub console: ConsoleOut,
    pub console_input: rv32vm_devices::UartInput,
    pub requests: Arc<HostRequests>,
    /// Raw mode on the terminal, restored when dropped.
    raw_terminal: Option<RawTerminal>,
    /// Where `--save` writes the machine when the script's last pattern appears.
    save_path: Option<PathBuf>,
}

impl Connections {
    /// Set up the console: output to stdout and `console_log`, the script typing into the
    /// UART, and with `read_stdin` a reader thread for standard input and (on a terminal) raw
    /// mode with `Ctrl-A` escapes. Without `read_stdin` (a deterministic run) the guest's only
    /// input is the script; signals still stop the machine.
    pub fn open(
        console_log: Option<File>,
        script: Script,
        save_path: Option<PathBuf>,
        read_stdin: bool,
    ) -> Self {
        let console_input = rv32vm_devices::UartInput::new();
        let console = ConsoleOut::new(console_log, script, console_input.clone());
        let requests = Arc::new(HostRequests::default());
        terminal::install_signal_handlers();
        if !read_stdin {
            return Connections {
                console,
                console_input,
                requests,
                raw_terminal: None,
                save_path,
            };
        }
        let interactive = terminal::stdin_is_terminal();
        let raw_terminal = if interactive {
            match RawTerminal::enable() {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!("cannot put the terminal in raw mode: {e}");
                    None
                }
            }
        } else {
            None
        };
        terminal::spawn_reader(
            console_input.clone(),
            raw_terminal.is_some(),
            requests.clone(),
        );
        Connections {
            console,
            console_input,
            requests,
            raw_terminal,
            save_path,
        }
    }

    /// The line ending for messages on the console (raw mode needs `\r\n`).
    pub fn newline(&self) -> &'static str {
        if self.raw_terminal.is_some() {
            "\r\n"
        } else {
            "\n"
        }
    }

    /// Give the terminal back in its normal mode (before final messages).
    pub fn restore_terminal(&mut self) {
        drop(self.raw_terminal.take());
    }

    /// Run the machine until something ends the run: statistics requests are reported and
    /// the run goes on; a snapshot request saves the machine between blocks, then goes on
    /// (`Ctrl-A S`) or ends the run with status 0 (`--save`). `retired_before_reset` counts
    /// the instructions of earlier machines, for statistics. `run_once` runs the machine
    /// until the engine stops (`Engine::run`, or a wrapper such as a debugger's, which owns
    /// the machine while it runs); the machine comes back with the reason.
    pub fn run(
        &self,
        engine: &mut Engine,
        hart: &mut Hart,
        mut system: System,
        retired_before_reset: u64,
        mut run_once: impl FnMut(&mut Engine, &mut Hart, System) -> (System, Stop),
    ) -> (System, Stop) {
        let newline = self.newline();
        loop {
            let (back, stop) = run_once(engine, hart, system);
            system = back;
            match stop {
                Stop::Stats => {
                    system.flush_console();
                    hart.instret = hart.instret.wrapping_add(retired_before_reset);
                    let report = crate::format_stats(engine, hart).replace('\n', newline);
                    hart.instret = hart.instret.wrapping_sub(retired_before_reset);
                    eprint!("{newline}{report}");
                }
                Stop::Pause => match system.take_save_request() {
                    Some(SaveRequest::Script) => {
                        let Some(path) = self.save_path.as_deref() else {
                            tracing::error!("a --save point without a --save file");
                            continue;
                        };
                        system.flush_console();
                        let stop = match snapshot::save(path, hart, &system) {
                            Ok(summary) => {
                                report_saved(path, &summary, newline);
                                Stop::Exit(0)
                            }
                            Err(error) => Stop::Fatal {
                                status: 1,
                                message: error.to_string(),
                            },
                        };
                        return (system, stop);
                    }
                    Some(SaveRequest::Console) => {
                        system.flush_console();
                        let path = snapshot::console_snapshot_path();
                        match snapshot::save(&path, hart, &system) {
                            Ok(summary) => report_saved(&path, &summary, newline),
                            Err(error) => eprint!("{newline}rv32vm: {error}{newline}"),
                        }
                    }
                    None => {}
                },
                Stop::Exit(status)
                    if self.save_path.is_some() && system.script_save_point_missed() =>
                {
                    return (
                        system,
                        Stop::Fatal {
                            status: 1,
                            message: format!(
                                "the guest powered off (status {status}) as the script reached \
                                 its --save point: no snapshot was written"
                            ),
                        },
                    );
                }
                stop => return (system, stop),
            }
        }
    }
}

/// Say on the console where the machine went.
fn report_saved(path: &Path, summary: &snapshot::SaveSummary, newline: &str) {
    eprint!(
        "{newline}rv32vm: machine saved to {} ({:.1} MiB; {} of {} RAM pages in use; {:.0?}){newline}",
        path.display(),
        summary.file_bytes as f64 / (1 << 20) as f64,
        summary.ram_pages_saved,
        summary.ram_pages,
        summary.elapsed,
    );
}
