//! A running VM whose serial console (rv32vm's stdin and stdout) a test reads and types into.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running VM: its output is collected on a thread; `expect` consumes it in order.
pub struct Console {
    child: Child,
    stdin: ChildStdin,
    output: Arc<Mutex<String>>,
    /// How much of `output` earlier `expect` calls consumed.
    seen: usize,
}

impl Console {
    /// Start `command` (an rv32vm invocation) with piped stdin and stdout.
    pub fn spawn(command: &mut Command) -> Console {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rv32vm");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = child.stdout.take().expect("stdout");
        let output = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Console {
            child,
            stdin,
            output,
            seen: 0,
        }
    }

    /// Wait (at most `limit`) until `pattern` appears after what earlier calls consumed;
    /// return the text up to and including it. Panics with the console's tail otherwise.
    pub fn expect_within(&mut self, pattern: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            {
                let out = self.output.lock().unwrap();
                if let Some(pos) = out[self.seen..].find(pattern) {
                    let end = self.seen + pos + pattern.len();
                    let text = out[self.seen..end].to_string();
                    self.seen = end;
                    return text;
                }
            }
            let exited = self.child.try_wait().ok().flatten();
            if start.elapsed() > limit || exited.is_some() {
                // Let the reader drain, then look one last time.
                std::thread::sleep(Duration::from_millis(200));
                let out = self.output.lock().unwrap();
                if out[self.seen..].contains(pattern) {
                    continue;
                }
                let _ = self.child.kill();
                let tail: String = out[self.seen..].chars().rev().take(4000).collect();
                panic!(
                    "waiting for {pattern:?} ({}); console since the last step:\n{}",
                    match exited {
                        Some(status) => format!("rv32vm exited: {status}"),
                        None => "timed out".into(),
                    },
                    tail.chars().rev().collect::<String>()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Type `line` and Enter.
    pub fn send(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to the console");
        self.stdin.flush().expect("flush the console");
    }

    /// Wait (at most `limit`) for rv32vm to exit; panics (killing it) after that.
    pub fn wait_exit_within(mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for rv32vm") {
                return status;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                panic!("rv32vm did not exit within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
