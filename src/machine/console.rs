//! The host side of the serial console's output: guest bytes go to stdout and, with
//! `--console-log`, to a file; the last lines are kept for error reports; and an
//! `--expect`/`--send` script watches the output and types into the UART's input queue.
//!
//! # Matching `--expect` patterns
//!
//! The guest's output arrives a byte or a few at a time, so patterns are matched as a stream:
//! each pattern (a literal, or a `re:` regular expression) is compiled once into a lazy DFA
//! (regex-automata's hybrid DFA, unanchored), and every output byte costs one transition. No
//! output is kept or rescanned, so the cost is linear in the output whatever its length, and a
//! match split across any number of writes is found.
//!
//! Semantics, for a stream that has no end:
//! - A step fires as soon as the output since the previous step's match contains a match: at
//!   the earliest end of any match (`re:a+` fires after the first `a`).
//! - The output since the previous match is the haystack: `^` (and `\A`) match right after the
//!   previous step's match (or at the start of the output); `$` (and `\z`) match at the end of
//!   what the guest has written so far, i.e. "this is the last thing printed yet" (`re:\$ $`
//!   fires on a prompt the guest then waits at).
//! - `\b` and the other word boundaries are ASCII word boundaries (a streaming DFA cannot look
//!   at Unicode word characters); `\w`, classes and `.` are Unicode as usual.
//! - Patterns that match the empty string (`re:`, `re:x*`) or can never match are refused: the
//!   first would fire at once, the second never.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::{Capture, Hir, HirKind, Look, Repetition};
use rv32vm_devices::UartInput;

/// Lines of console output kept for the report when a boot times out.
const TAIL_LINES: usize = 20;

/// What an `--expect` waits for in the console output: the text as written, and the compiled
/// streaming matcher.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The command-line text (`re:` prefix included).
    source: String,
    /// A lazy DFA that finds the pattern anywhere in a stream (unanchored).
    dfa: DFA,
}

/// A bad `--expect` pattern or an unbalanced script.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The `re:` pattern is not a valid regular expression.
    #[error("--expect {pattern:?}: invalid regular expression: {source}")]
    Regex {
        /// The pattern as given.
        pattern: String,
        /// The parser's diagnostic.
        source: Box<regex_syntax::Error>,
    },
    /// The regular expression is valid but too large to compile.
    #[error("--expect {pattern:?}: cannot compile the regular expression: {source}")]
    Compile {
        /// The pattern as given.
        pattern: String,
        /// Why it could not be compiled (the NFA or DFA builder's error).
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The pattern is empty (`--expect ''` or `--expect 're:'`).
    #[error("--expect {pattern:?} is empty: give the text to wait for, or re:REGEX")]
    Empty {
        /// The pattern as given.
        pattern: String,
    },
    /// The regular expression matches the empty string, so it would fire at once.
    #[error(
        "--expect {pattern:?} matches the empty string, so it would fire at once: make it \
         match at least one character"
    )]
    MatchesEmpty {
        /// The pattern as given.
        pattern: String,
    },
    /// The regular expression can never match anything.
    #[error("--expect {pattern:?} can never match any output")]
    NeverMatches {
        /// The pattern as given.
        pattern: String,
    },
    /// `--save` without a final `--expect` to save at.
    #[error(
        "--save needs a last --expect without a --send: the machine is saved when that \
         pattern appears (got {expects} --expect and {sends} --send)"
    )]
    SaveWithoutExpect {
        /// How many `--expect` were given.
        expects: usize,
        /// How many `--send` were given.
        sends: usize,
    },
    /// The numbers of `--expect` and `--send` do not pair up.
    #[error(
        "--expect and --send go in pairs: got {expects} --expect and {sends} --send \
         (one more --expect than --send is allowed: rv32vm then also waits for the last \
         pattern, and fails if the guest stops before it appears)"
    )]
    Unpaired {
        /// How many `--expect` were given.
        expects: usize,
        /// How many `--send` were given.
        sends: usize,
    },
}

impl Pattern {
    /// Parse a command-line pattern: `re:REGEX` or literal text.
    pub fn parse(text: &str) -> Result<Pattern, ScriptError> {
        let pattern = || text.to_string();
        let hir = match text.strip_prefix("re:") {
            Some("") => return Err(ScriptError::Empty { pattern: pattern() }),
            Some(regex) => {
                let hir = regex_syntax::ParserBuilder::new()
                    // Output is bytes, not necessarily UTF-8: `(?-u:\xff)` may match a byte.
                    .utf8(false)
                    .build()
                    .parse(regex)
                    .map_err(|source| ScriptError::Regex {
                        pattern: pattern(),
                        source: Box::new(source),
                    })?;
                ascii_word_boundaries(hir)
            }
            None if text.is_empty() => return Err(ScriptError::Empty { pattern: pattern() }),
            None => Hir::literal(text.as_bytes()),
        };
        match hir.properties().minimum_len() {
            None => return Err(ScriptError::NeverMatches { pattern: pattern() }),
            Some(0) => return Err(ScriptError::MatchesEmpty { pattern: pattern() }),
            Some(_) => {}
        }
        let compile_error =
            |source: Box<dyn std::error::Error + Send + Sync>| ScriptError::Compile {
                pattern: pattern(),
                source,
            };
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().utf8(false))
            .build_from_hir(&hir)
            .map_err(|e| compile_error(Box::new(e)))?;
        let dfa = DFA::builder()
            // Every match end is reported, so the earliest one is found.
            .configure(DFA::config().match_kind(MatchKind::All))
            .build_from_nfa(nfa)
            .map_err(|e| compile_error(Box::new(e)))?;
        Ok(Pattern {
            source: text.to_string(),
            dfa,
        })
    }
}

/// `hir` with every Unicode word boundary assertion replaced by its ASCII form (see the module
/// documentation). The parser bounds the nesting depth, so the recursion is bounded too.
fn ascii_word_boundaries(hir: Hir) -> Hir {
    match hir.into_kind() {
        HirKind::Look(look) => Hir::look(match look {
            Look::WordUnicode => Look::WordAscii,
            Look::WordUnicodeNegate => Look::WordAsciiNegate,
            Look::WordStartUnicode => Look::WordStartAscii,
            Look::WordEndUnicode => Look::WordEndAscii,
            Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
            Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
            other => other,
        }),
        HirKind::Repetition(repetition) => Hir::repetition(Repetition {
            sub: Box::new(ascii_word_boundaries(*repetition.sub)),
            ..repetition
        }),
        HirKind::Capture(capture) => Hir::capture(Capture {
            sub: Box::new(ascii_word_boundaries(*capture.sub)),
            ..capture
        }),
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(ascii_word_boundaries).collect()),
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.into_iter().map(ascii_word_boundaries).collect())
        }
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(literal) => Hir::literal(literal.0),
        HirKind::Class(class) => Hir::class(class),
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.source.strip_prefix("re:") {
            Some(regex) => write!(f, "re:{regex:?}"),
            None => write!(f, "{:?}", self.source),
        }
    }
}

/// A pattern being searched for in the output stream: the DFA's cache and current state.
#[derive(Clone, Debug)]
struct StreamSearch {
    cache: Cache,
    /// The DFA state after the bytes seen so far; `None` before the first byte.
    state: Option<LazyStateID>,
}

impl StreamSearch {
    fn new(pattern: &Pattern) -> Self {
        Self {
            cache: pattern.dfa.create_cache(),
            state: None,
        }
    }

    /// Feeds `bytes`; returns how many of them precede the end of the first match in the
    /// stream, or `None` (all consumed) when no match ends in them.
    fn feed(&mut self, dfa: &DFA, bytes: &[u8]) -> Option<usize> {
        if bytes.is_empty() {
            return None;
        }
        let mut state = match self.state {
            Some(state) => state,
            None => self.start(dfa)?,
        };
        for (index, &byte) in bytes.iter().enumerate() {
            state = match dfa.next_state(&mut self.cache, state, byte) {
                Ok(next) => next,
                // Only with a cache-clearing limit, which is not configured: start over.
                Err(_) => self.start(dfa)?,
            };
            // Matches show one byte late: this state says a match ended before `byte`.
            if state.is_match() {
                self.state = None;
                return Some(index);
            }
        }
        self.state = Some(state);
        // The output so far ends here: does a match end at the end of it (`$`, or a match
        // whose last byte this was)?
        let at_end = dfa.next_eoi_state(&mut self.cache, state);
        if at_end.is_ok_and(|end| end.is_match()) {
            self.state = None;
            return Some(bytes.len());
        }
        None
    }

    /// The start state: the beginning of a haystack (no byte before it).
    fn start(&mut self, dfa: &DFA) -> Option<LazyStateID> {
        let config = start::Config::new().anchored(Anchored::No);
        match dfa.start_state(&mut self.cache, &config) {
            Ok(state) => Some(state),
            Err(error) => {
                // Not reachable with our configuration (no quit bytes, no cache limit).
                tracing::warn!(%error, "--expect matcher cannot start");
                None
            }
        }
    }
}

/// One step of a script: wait for `expect`, then type `send` (if any) followed by Enter.
#[derive(Clone, Debug)]
pub struct Step {
    /// What to wait for.
    pub expect: Pattern,
    /// The bytes to type (escapes resolved), without the Enter; `None` for a final `--expect`
    /// that only waits.
    pub send: Option<Vec<u8>>,
}

/// The `--expect`/`--send` pairs, in order.
#[derive(Clone, Debug, Default)]
pub struct Script {
    steps: Vec<Step>,
    /// When the last step's pattern appears, ask for a snapshot (`--save`).
    save_at_end: bool,
    next: usize,
    /// The search for `steps[next]`.
    search: Option<StreamSearch>,
}

impl Script {
    /// Pair the command line's `--expect` and `--send` values in order. One more `--expect`
    /// than `--send` is allowed: the last pattern is only waited for.
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
        let search = steps.first().map(|step| StreamSearch::new(&step.expect));
        Ok(Script {
            steps,
            save_at_end: false,
            next: 0,
            search,
        })
    }

    /// Ask for a snapshot when the last pattern appears (`--save`): the last `--expect` must
    /// have no `--send`.
    pub fn save_at_end(mut self) -> Result<Script, ScriptError> {
        match self.steps.last() {
            Some(step) if step.send.is_none() => {
                self.save_at_end = true;
                Ok(self)
            }
            _ => {
                let expects = self.steps.len();
                let sends = self.steps.iter().filter(|s| s.send.is_some()).count();
                Err(ScriptError::SaveWithoutExpect { expects, sends })
            }
        }
    }

    /// Whether the script has no steps at all.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The step still waiting for its pattern, with its 1-based number.
    pub fn pending(&self) -> Option<(usize, &Step)> {
        self.steps.get(self.next).map(|s| (self.next + 1, s))
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Feed guest output; returns the texts to type (Enter included), in order.
    fn feed(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut typed = Vec::new();
        let mut rest = bytes;
        while let (Some(step), Some(search)) = (self.steps.get(self.next), &mut self.search) {
            let Some(end) = search.feed(&step.expect.dfa, rest) else {
                break;
            };
            tracing::debug!(step = self.next + 1, pattern = %step.expect, "console pattern seen");
            if let Some(text) = &step.send {
                let mut line = text.clone();
                line.push(b'\n');
                typed.push(line);
            }
            self.next += 1;
            self.search = self
                .steps
                .get(self.next)
                .map(|step| StreamSearch::new(&step.expect));
            rest = &rest[end..];
        }
        typed
    }
}

/// Interpret the escapes `\n`, `\r`, `\t`, `\\` and `\xHH` in a `--send` text (so control
/// keys such as Ctrl-C, `\x03`, can be typed); anything else stays as written. `\xHH` is the
/// raw byte HH (`\xff` is one byte 0xff, not the UTF-8 encoding of U+00FF).
pub fn unescape(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = if bytes[i] == b'\\' {
            match bytes.get(i + 1) {
                Some(b'n') => Some((b'\n', 2)),
                Some(b'r') => Some((b'\r', 2)),
                Some(b't') => Some((b'\t', 2)),
                Some(b'\\') => Some((b'\\', 2)),
                Some(b'x') => bytes
                    .get(i + 2..i + 4)
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                    .map(|byte| (byte, 4)),
                _ => None,
            }
        } else {
            None
        };
        match escape {
            Some((byte, len)) => {
                out.push(byte);
                i += len;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
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

    /// [`Console::tail_report`].
    fn report(&self) -> String {
        match self.text().trim_end_matches('\n') {
            "" => "; the console stayed silent".to_string(),
            lines => format!("; last console lines:\n{lines}"),
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
    /// The script finished with `--save`: a snapshot is due (taken once).
    save_due: bool,
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
            save_due: false,
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

    /// The last lines the guest printed, for a report that ends with them: `; last console
    /// lines:` and the lines, or `; the console stayed silent`.
    pub fn tail_report(&self) -> String {
        self.state().tail.report()
    }

    /// The process exit status for a guest that stopped with `guest_code`: that code when the
    /// `--expect` script is done (or empty); otherwise an error naming the pattern the script
    /// still waited for, with the guest's code, or 1 when that was 0 (a script that did not
    /// finish is a failure, never silently ignored).
    pub fn exit_status(&self, guest_code: i32) -> Result<i32, (i32, String)> {
        let state = self.state();
        let Some((number, step)) = state.script.pending() else {
            return Ok(guest_code);
        };
        let status = if guest_code == 0 { 1 } else { guest_code };
        Err((
            status,
            format!(
                "the guest stopped (exit code {guest_code}) before --expect {} appeared \
                 (step {number} of {}){}",
                step.expect,
                state.script.len(),
                state.tail.report()
            ),
        ))
    }

    /// Whether the script's `--save` point was reached since the last call.
    pub fn take_save_request(&self) -> bool {
        std::mem::take(&mut self.state().save_due)
    }

    /// The line the guest is printing now (after the last newline): typically the prompt the
    /// guest waits at. A snapshot keeps it, so a restored machine's script can match it.
    pub fn current_line(&self) -> Vec<u8> {
        self.state().tail.current.clone()
    }

    /// Feed `bytes` to the script (and the tail), as if the guest printed them, without
    /// printing or logging them: a restored machine's script sees the prompt that was on the
    /// console when the machine was saved.
    pub fn replay(&self, bytes: &[u8]) {
        let mut st = self.state();
        st.tail.feed(bytes);
        let typed = st.script.feed(bytes);
        for text in typed {
            st.input.push(&text);
        }
        st.note_save_point();
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
            st.input.push(&text);
        }
        st.note_save_point();
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
    /// Once a `--save` script is done, a snapshot is due.
    fn note_save_point(&mut self) {
        if self.script.save_at_end && self.script.pending().is_none() {
            self.script.save_at_end = false;
            self.save_due = true;
        }
    }

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

    fn texts(typed: Vec<Vec<u8>>) -> Vec<String> {
        typed
            .into_iter()
            .map(|t| String::from_utf8(t).unwrap())
            .collect()
    }

    /// Feeds `output` one byte at a time, as the UART writes it; returns what was typed.
    fn feed_bytewise(s: &mut Script, output: &[u8]) -> Vec<String> {
        output
            .iter()
            .flat_map(|&byte| texts(s.feed(&[byte])))
            .collect()
    }

    #[test]
    fn steps_fire_in_order_across_split_output() {
        let mut s = script(&["login: ", "re:\\$ $"], &["root", "ls"]);
        assert!(s.feed(b"Welcome\nlog").is_empty());
        assert_eq!(texts(s.feed(b"in: ")), vec!["root\n"]);
        // The second pattern must match output after the first match only.
        assert!(s.feed(b"root\n").is_empty());
        assert_eq!(texts(s.feed(b"~ $ ")), vec!["ls\n"]);
        assert!(s.pending().is_none());
        assert!(s.feed(b"~ $ ").is_empty());
    }

    #[test]
    fn one_chunk_can_satisfy_several_steps() {
        let mut s = script(&["a", "b", "c"], &["1", "2"]);
        assert_eq!(texts(s.feed(b"xaxbx")), vec!["1\n", "2\n"]);
        assert_eq!(s.pending().map(|(n, _)| n), Some(3));
    }

    #[test]
    fn matches_are_found_at_every_split_of_the_output() {
        // Every way of cutting the output into two writes, and byte by byte.
        let output = b"boot...\nlogin: root\r\nPassword: \r\n~ # ready-42\r\n~ # ";
        let expects = [
            "login: ",
            "re:Pass\\w+: ",
            "re:ready-\\d\\d\\r?\\n",
            "re:# $",
        ];
        let sends = ["root", "pw", "go"];
        for cut in 0..=output.len() {
            let mut s = script(&expects, &sends);
            let mut typed = texts(s.feed(&output[..cut]));
            typed.extend(texts(s.feed(&output[cut..])));
            assert_eq!(typed, vec!["root\n", "pw\n", "go\n"], "cut at {cut}");
            assert!(s.pending().is_none(), "cut at {cut}");
        }
        let mut s = script(&expects, &sends);
        assert_eq!(
            feed_bytewise(&mut s, output),
            vec!["root\n", "pw\n", "go\n"]
        );
        assert!(s.pending().is_none());
    }

    #[test]
    fn a_literal_with_a_repeated_prefix_is_found() {
        // The naive restart-after-mismatch bug: "aab" in "aaab".
        for pattern in ["aab", "re:aab", "abcabd"] {
            let mut s = script(&[pattern], &["x"]);
            let output: &[u8] = if pattern == "abcabd" {
                b"abcabcabd"
            } else {
                b"aaab"
            };
            assert_eq!(feed_bytewise(&mut s, output), vec!["x\n"], "{pattern}");
        }
    }

    #[test]
    fn anchors_and_word_boundaries_in_a_stream() {
        // `^` is the start of the output after the previous match.
        let mut s = script(&["one", "re:^two"], &["1", "2"]);
        assert_eq!(feed_bytewise(&mut s, b"one two"), vec!["1\n"]);
        let mut s = script(&["one", "re:^two"], &["1", "2"]);
        assert_eq!(feed_bytewise(&mut s, b"onetwo"), vec!["1\n", "2\n"]);
        // `$` is the end of the output so far.
        let mut s = script(&["re:ok$"], &["y"]);
        assert!(s.feed(b"ok then ").is_empty());
        assert_eq!(texts(s.feed(b"all ok")), vec!["y\n"]);
        // `\b` is an ASCII word boundary, next to non-ASCII output too.
        let mut s = script(&["re:\\bdone\\b"], &["z"]);
        assert!(s.feed(b"undone ").is_empty());
        assert_eq!(texts(s.feed("é done.".as_bytes())), vec!["z\n"]);
        // Unicode classes work on the UTF-8 output.
        let mut s = script(&["re:\\p{Greek}+ ok"], &["g"]);
        assert_eq!(feed_bytewise(&mut s, "αβγ ok".as_bytes()), vec!["g\n"]);
    }

    #[test]
    fn matching_cost_is_linear_in_the_output() {
        // 30 000 lines after the first step, with a second pattern that never appears: the
        // old matcher rescanned a 64 KiB window per byte (seconds here); a streaming one
        // takes a few milliseconds. Byte-by-byte feeding, as the UART writes.
        let mut s = script(&["# ", "this never appears"], &["seq 30000"]);
        assert_eq!(feed_bytewise(&mut s, b"~ # "), vec!["seq 30000\n"]);
        let lines: Vec<u8> = (1..=30_000)
            .flat_map(|i| format!("{i}\r\n").into_bytes())
            .collect();
        let started = std::time::Instant::now();
        for &byte in &lines {
            assert!(s.feed(&[byte]).is_empty());
        }
        let elapsed = started.elapsed();
        assert_eq!(s.pending().map(|(n, _)| n), Some(2));
        // ~170 KB of output; even a slow debug build stays far below this.
        assert!(
            elapsed < std::time::Duration::from_secs(2),
            "{} bytes took {elapsed:?}",
            lines.len()
        );
        // Still matches afterwards.
        assert!(s.feed(b"... this never ").is_empty());
        assert!(s.feed(b"appears").is_empty());
        assert!(s.pending().is_none());
    }

    #[test]
    fn unbalanced_and_bad_scripts_are_errors() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let error = Script::new(&strings(&["a"]), &strings(&["x", "y"])).unwrap_err();
        assert!(matches!(error, ScriptError::Unpaired { .. }), "{error}");
        let error = Script::new(&strings(&["a", "b", "c"]), &strings(&["x"])).unwrap_err();
        assert!(error.to_string().contains("go in pairs"), "{error}");
        // A trailing --expect only waits.
        let s = Script::new(&strings(&["a", "b"]), &strings(&["x"])).unwrap();
        assert!(s.steps[1].send.is_none());
        let cases: [(&str, &str); 6] = [
            ("re:(", "invalid regular expression"),
            ("re:", "is empty"),
            ("", "is empty"),
            ("re:x*", "matches the empty string"),
            ("re:$", "matches the empty string"),
            ("re:[a&&b]", "can never match"),
        ];
        for (pattern, message) in cases {
            let error = Script::new(&strings(&[pattern]), &[]).unwrap_err();
            let text = error.to_string();
            assert!(
                text.contains(message) && text.contains(&format!("{pattern:?}")),
                "--expect {pattern:?}: {text}"
            );
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r"a\nb\x03\\\q\x4"), b"a\nb\x03\\\\q\\x4");
        // \xHH is the raw byte, not a UTF-8 encoded character.
        assert_eq!(unescape(r"\xff\x80"), [0xff, 0x80]);
        assert_eq!(unescape(r"\xC3\xA9"), "é".as_bytes());
        // Non-ASCII text is typed as its UTF-8 bytes; broken escapes stay as written.
        assert_eq!(unescape(r"é\x\xg1\t"), "é\\x\\xg1\t".as_bytes());
    }

    #[test]
    fn an_unfinished_script_makes_the_exit_a_failure() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let script = Script::new(&strings(&["login:", "ALL PASSED"]), &strings(&["root"]));
        let mut console = ConsoleOut::new(None, script.unwrap(), UartInput::new());
        console.write_all(b"login: ").unwrap();
        let (status, message) = console.exit_status(0).unwrap_err();
        assert_eq!(status, 1);
        assert!(
            message.contains("\"ALL PASSED\"") && message.contains("step 2 of 2"),
            "{message}"
        );
        assert_eq!(console.exit_status(5).unwrap_err().0, 5);
        console.write_all(b"root\nALL PASSED\n").unwrap();
        assert_eq!(console.exit_status(0), Ok(0));
        let empty = ConsoleOut::new(None, Script::default(), UartInput::new());
        assert_eq!(empty.exit_status(3), Ok(3));
    }

    #[test]
    fn typed_texts_reach_the_uart_input() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let input = UartInput::new();
        let script = Script::new(&strings(&["$ "]), &strings(&[r"\xff\x80"])).unwrap();
        let mut console = ConsoleOut::new(None, script, input.clone());
        console.write_all(b"$ ").unwrap();
        assert_eq!(input.queued(), 3, "0xff 0x80 and Enter");
    }

    #[test]
    fn save_fires_once_at_the_last_pattern_and_replay_matches_the_prompt() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let error = Script::new(&strings(&["# "]), &strings(&["ls"]))
            .unwrap()
            .save_at_end()
            .unwrap_err();
        assert!(error.to_string().contains("--save needs"), "{error}");
        let script = Script::new(&strings(&["login: ", "# "]), &strings(&["root"]))
            .unwrap()
            .save_at_end()
            .unwrap();
        let input = UartInput::new();
        let mut console = ConsoleOut::new(None, script, input.clone());
        console.write_all(b"login: ").unwrap();
        assert!(!console.take_save_request());
        console.write_all(b"root\r\n~ # ").unwrap();
        assert!(console.take_save_request());
        assert!(!console.take_save_request(), "once");
        assert_eq!(console.current_line(), b"~ # ");
        // A restored machine's script sees the saved prompt.
        let input = UartInput::new();
        let script = Script::new(&strings(&["# "]), &strings(&["uname"])).unwrap();
        let console = ConsoleOut::new(None, script, input.clone());
        console.replay(b"~ # ");
        assert_eq!(input.pending_bytes(), b"uname\n");
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
