//! The host side of the serial console's output: guest bytes go to stdout and, with
//! `--console-log`, to a file; the last lines are kept for error reports; and an
//! `--expect`/`--send` script watches the output and types into the UART's input queue.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};

use rv32vm_devices::UartInput;

/// Lines of console output kept for the report when a boot times out.
const TAIL_LINES: usize = 20;
/// Output kept for matching the current `--expect` pattern (older bytes are dropped).
const MATCH_WINDOW: usize = 64 << 10;

/// What an `--expect` waits for in the console output.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// The exact text.
    Literal(String),
    /// A regular expression (`re:` prefix on the command line).
    Regex(regex::bytes::Regex),
}

/// A bad `--expect` pattern or an unbalanced script.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("--expect {pattern:?}: invalid regular expression: {source}")]
    Regex {
        pattern: String,
        source: regex::Error,
    },
    #[error("--expect pattern is empty")]
    Empty,
    #[error(
        "--expect and --send go in pairs: got {expects} --expect and {sends} --send \
         (one more --expect than --send is allowed, to wait for a last pattern)"
    )]
    Unpaired { expects: usize, sends: usize },
}

impl Pattern {
    /// Parse a command-line pattern: `re:REGEX` or literal text.
    pub fn parse(text: &str) -> Result<Pattern, ScriptError> {
        if let Some(re) = text.strip_prefix("re:") {
            let regex = regex::bytes::Regex::new(re).map_err(|source| ScriptError::Regex {
                pattern: text.to_string(),
                source,
            })?;
            return Ok(Pattern::Regex(regex));
        }
        if text.is_empty() {
            return Err(ScriptError::Empty);
        }
        Ok(Pattern::Literal(text.to_string()))
    }

    /// The end offset of the first match in `hay`.
    fn find_end(&self, hay: &[u8]) -> Option<usize> {
        match self {
            Pattern::Literal(t) => {
                let needle = t.as_bytes();
                hay.windows(needle.len())
                    .position(|w| w == needle)
                    .map(|p| p + needle.len())
            }
            Pattern::Regex(re) => re.find(hay).map(|m| m.end()),
        }
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pattern::Literal(t) => write!(f, "{t:?}"),
            Pattern::Regex(re) => write!(f, "re:{:?}", re.as_str()),
        }
    }
}

/// One step of a script: wait for `expect`, then type `send` (if any) followed by Enter.
#[derive(Clone, Debug)]
pub struct Step {
    pub expect: Pattern,
    pub send: Option<String>,
}

/// The `--expect`/`--send` pairs, in order.
#[derive(Clone, Debug, Default)]
pub struct Script {
    steps: Vec<Step>,
    next: usize,
    window: Vec<u8>,
}

impl Script {
    /// Pair the command line's `--expect` and `--send` values in order.
    pub fn new(expects: &[String], sends: &[String]) -> Result<Script, ScriptError> {
        if !(expects.len() == sends.len() || expects.len() == sends.len() + 1) {
            return Err(ScriptError::Unpaired {
                expects: expects.len(),
                sends: sends.len(),
            });
        }
        let steps = expects
            .iter()
            .enumerate()
            .map(|(i, e)| {
                Ok(Step {
                    expect: Pattern::parse(e)?,
                    send: sends.get(i).map(|s| unescape(s)),
                })
            })
            .collect::<Result<Vec<_>, ScriptError>>()?;
        Ok(Script {
            steps,
            next: 0,
            window: Vec::new(),
        })
    }

    /// Whether the script has no steps at all.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The step still waiting for its pattern, with its 1-based number.
    pub fn pending(&self) -> Option<(usize, &Step)> {
        self.steps.get(self.next).map(|s| (self.next + 1, s))
    }

    /// Feed guest output; returns the texts to type, in order.
    fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut typed = Vec::new();
        if self.next >= self.steps.len() {
            return typed;
        }
        self.window.extend_from_slice(bytes);
        while let Some(step) = self.steps.get(self.next) {
            let Some(end) = step.expect.find_end(&self.window) else {
                break;
            };
            tracing::debug!(step = self.next + 1, pattern = %step.expect, "console pattern seen");
            self.window.drain(..end);
            if let Some(text) = &step.send {
                typed.push(format!("{text}\n"));
            }
            self.next += 1;
        }
        if self.window.len() > MATCH_WINDOW {
            let excess = self.window.len() - MATCH_WINDOW;
            self.window.drain(..excess);
        }
        typed
    }
}

/// Interpret the escapes `\n`, `\r`, `\t`, `\\` and `\xHH` in a `--send` text (so control
/// keys such as Ctrl-C, `\x03`, can be typed); anything else stays as written.
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('x') => {
                let hex: String = chars.clone().skip(1).take(2).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(b) if hex.len() == 2 => {
                        out.push(char::from(b));
                        chars.next();
                        chars.next();
                    }
                    _ => {
                        out.push('\\');
                        continue;
                    }
                }
            }
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    out
}

/// The last lines of output, for reports.
#[derive(Debug, Default)]
struct Tail {
    lines: VecDeque<Vec<u8>>,
    current: Vec<u8>,
}

impl Tail {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                let line = std::mem::take(&mut self.current);
                if self.lines.len() == TAIL_LINES {
                    self.lines.pop_front();
                }
                self.lines.push_back(line);
            } else if b != b'\r' && self.current.len() < 4096 {
                self.current.push(b);
            }
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for line in self.lines.iter().chain(std::iter::once(&self.current)) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out
    }
}

/// The UART's output sink. Clones share one state, so the machine keeps a handle for reports
/// and the script goes on across guest reboots.
#[derive(Clone)]
pub struct ConsoleOut(Arc<Mutex<ConsoleState>>);

struct ConsoleState {
    buf: Vec<u8>,
    log: Option<File>,
    tail: Tail,
    script: Script,
    input: UartInput,
}

impl ConsoleOut {
    /// Output to stdout (and `log`), typing the script's texts into `input`.
    pub fn new(log: Option<File>, script: Script, input: UartInput) -> ConsoleOut {
        ConsoleOut(Arc::new(Mutex::new(ConsoleState {
            buf: Vec::new(),
            log,
            tail: Tail::default(),
            script,
            input,
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ConsoleState> {
        // Only the VM thread writes; a poisoned lock still holds usable bytes.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The last lines the guest printed.
    pub fn tail(&self) -> String {
        self.state().tail.text()
    }

    /// What the script still waits for: step number and pattern.
    pub fn pending_step(&self) -> Option<(usize, String)> {
        self.state()
            .script
            .pending()
            .map(|(n, step)| (n, step.expect.to_string()))
    }
}

impl Write for ConsoleOut {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let mut st = self.state();
        st.buf.extend_from_slice(data);
        st.tail.feed(data);
        if let Some(log) = &mut st.log {
            if let Err(e) = log.write_all(data) {
                tracing::warn!("console log: {e}; logging stops");
                st.log = None;
            }
        }
        for text in st.script.feed(data) {
            st.input.push(text.as_bytes());
        }
        if st.buf.len() >= 4096 || data.contains(&b'\n') {
            st.flush_stdout();
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.state().flush_stdout();
        Ok(())
    }
}

impl ConsoleState {
    fn flush_stdout(&mut self) {
        if !self.buf.is_empty() {
            let mut out = std::io::stdout().lock();
            // A closed stdout must not stop the guest: drop the bytes.
            let _ = out.write_all(&self.buf);
            let _ = out.flush();
            self.buf.clear();
        }
        if let Some(log) = &mut self.log {
            let _ = log.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(expects: &[&str], sends: &[&str]) -> Script {
        let e: Vec<String> = expects.iter().map(|s| s.to_string()).collect();
        let s: Vec<String> = sends.iter().map(|s| s.to_string()).collect();
        Script::new(&e, &s).expect("valid script")
    }

    #[test]
    fn steps_fire_in_order_across_split_output() {
        let mut s = script(&["login: ", "re:\\$ $"], &["root", "ls"]);
        assert!(s.feed(b"Welcome\nlog").is_empty());
        assert_eq!(s.feed(b"in: "), vec!["root\n".to_string()]);
        // The second pattern must match output after the first match only.
        assert!(s.feed(b"root\n").is_empty());
        assert_eq!(s.feed(b"~ $ "), vec!["ls\n".to_string()]);
        assert!(s.pending().is_none());
        assert!(s.feed(b"~ $ ").is_empty());
    }

    #[test]
    fn one_chunk_can_satisfy_several_steps() {
        let mut s = script(&["a", "b", "c"], &["1", "2"]);
        assert_eq!(s.feed(b"xaxbx"), vec!["1\n".to_string(), "2\n".to_string()]);
        assert_eq!(s.pending().map(|(n, _)| n), Some(3));
    }

    #[test]
    fn unbalanced_and_bad_scripts_are_errors() {
        let e = vec!["a".to_string()];
        let two = vec!["x".to_string(), "y".to_string()];
        assert!(matches!(
            Script::new(&e, &two),
            Err(ScriptError::Unpaired { .. })
        ));
        assert!(Script::new(&["re:(".to_string()], &[]).is_err());
        assert!(Script::new(&[String::new()], &[]).is_err());
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r"a\nb\x03\\\q\x4"), "a\nb\u{3}\\\\q\\x4");
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let mut t = Tail::default();
        for i in 0..30 {
            t.feed(format!("line {i}\r\n").as_bytes());
        }
        t.feed(b"partial");
        let text = t.text();
        assert!(text.starts_with("line 10\n"), "{text}");
        assert!(text.ends_with("line 29\npartial\n"), "{text}");
    }
}
