//! The console as users touch it: scripted headless boots (`--expect`/`--send`, `--timeout`,
//! `--console-log`, the guest's exit code) and the interactive terminal in a real pty (tmux):
//! typing, Ctrl-C reaching the guest, `Ctrl-A x`, and the terminal restored afterwards.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const PROMPT: &str = "root@rv32vm:~# ";

fn images() -> PathBuf {
    common::repo_root().join("images")
}

fn rv32vm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rv32vm"));
    c.arg("boot")
        .arg("--kernel")
        .arg(images().join("Image"))
        .arg("--initrd")
        .arg(images().join("initramfs.cpio.gz"));
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = common::repo_root().join("target/console-tests");
    std::fs::create_dir_all(&dir).expect("create target/console-tests");
    dir.join(name)
}

#[test]
fn guest_command_status_becomes_the_exit_status() {
    for tier in common::TIERS {
        let log = scratch(&format!("status-{tier}.log"));
        let out = common::run_with_timeout(
            rv32vm()
                .args(["--tier", tier, "--timeout", "400"])
                .args(["--expect", PROMPT, "--send", "echo marker-$((6*7))"])
                .args(["--expect", "re:marker-42\\r?\\n"])
                .args(["--send", "sh -c 'exit 7'; vm-exit $?"])
                .arg("--console-log")
                .arg(&log),
            Duration::from_secs(480),
        )
        .expect("run rv32vm");
        assert_eq!(
            out.status.and_then(|s| s.code()),
            Some(7),
            "tier {tier}: {}\nstdout tail: {}\nstderr: {}",
            out.describe_end(),
            tail(&out.stdout),
            out.stderr
        );
        let logged = std::fs::read_to_string(&log).expect("console log written");
        assert!(
            logged.contains("marker-42") && logged.contains("Linux version"),
            "console log lacks the session: {}",
            tail(&logged)
        );
        assert_eq!(
            logged, out.stdout,
            "the console log equals what stdout showed"
        );
    }
}

#[test]
fn successful_script_exits_zero() {
    let out = common::run_with_timeout(
        rv32vm().args(["--timeout", "120"]).args([
            "--expect",
            PROMPT,
            "--send",
            "test -x /bin/sh; vm-exit $?",
        ]),
        Duration::from_secs(180),
    )
    .expect("run rv32vm");
    assert!(out.succeeded(), "{}: {}", out.describe_end(), out.stderr);
}

#[test]
fn hung_boot_returns_124_within_the_timeout() {
    let started = Instant::now();
    let out = common::run_with_timeout(
        rv32vm()
            .args(["--timeout", "8"])
            .args(["--expect", "this text never appears"]),
        Duration::from_secs(60),
    )
    .expect("run rv32vm");
    let elapsed = started.elapsed();
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(124),
        "{}",
        out.describe_end()
    );
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    assert!(
        out.stderr.contains("this text never appears") && out.stderr.contains("Run /init"),
        "the timeout report names the pattern and shows the last console lines: {}",
        out.stderr
    );
}

#[test]
fn unpaired_script_is_a_clear_error() {
    let out = common::run_with_timeout(
        rv32vm().args(["--send", "ls", "--send", "ls", "--expect", "x"]),
        Duration::from_secs(30),
    )
    .expect("run rv32vm");
    assert_eq!(out.status.and_then(|s| s.code()), Some(1));
    assert!(out.stderr.contains("go in pairs"), "{}", out.stderr);
}

#[test]
fn bad_expect_patterns_are_clear_errors() {
    let cases = [
        ("re:", "is empty"),
        ("", "is empty"),
        ("re:(", "invalid regular expression"),
        ("re:x*", "matches the empty string"),
    ];
    for (pattern, message) in cases {
        let out = common::run_with_timeout(
            rv32vm().args(["--expect", pattern, "--send", "ls"]),
            Duration::from_secs(30),
        )
        .expect("run rv32vm");
        assert_eq!(
            out.status.and_then(|s| s.code()),
            Some(1),
            "--expect {pattern:?}: {}",
            out.describe_end()
        );
        let first = out.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("rv32vm: error: --expect")
                && first.contains(&format!("{pattern:?}"))
                && out.stderr.contains(message),
            "--expect {pattern:?}: {}",
            out.stderr
        );
    }
}

/// A last --expect without --send is waited for; a guest that powers off before it appeared
/// fails the run and says which pattern was missing.
#[test]
fn guest_stopping_before_the_last_expect_fails() {
    let out = common::run_with_timeout(
        rv32vm()
            .args(["--timeout", "120"])
            .args(["--expect", PROMPT, "--send", "echo one-$((1+1)); vm-exit 0"])
            .args(["--expect", "re:one-2\\r?\\n"])
            .args(["--expect", "this never appears"]),
        Duration::from_secs(180),
    );
    // Three --expect and one --send do not pair: refused before booting.
    let out = out.expect("run rv32vm");
    assert_eq!(out.status.and_then(|s| s.code()), Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("go in pairs"), "{}", out.stderr);

    let out = common::run_with_timeout(
        rv32vm()
            .args(["--timeout", "120"])
            .args(["--expect", PROMPT, "--send", "echo one-$((1+1)); vm-exit 0"])
            .args(["--expect", "this never appears"]),
        Duration::from_secs(180),
    )
    .expect("run rv32vm");
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(1),
        "{}: {}",
        out.describe_end(),
        out.stderr
    );
    assert!(
        out.stderr
            .contains("before --expect \"this never appears\" appeared (step 2 of 2)")
            && out.stderr.contains("one-2"),
        "{}",
        out.stderr
    );
    // The same script whose last pattern does appear: the guest's status.
    let out = common::run_with_timeout(
        rv32vm()
            .args(["--timeout", "120"])
            .args(["--expect", PROMPT, "--send", "echo one-$((1+1)); vm-exit 6"])
            .args(["--expect", "re:one-2\\r?\\n"]),
        Duration::from_secs(180),
    )
    .expect("run rv32vm");
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(6),
        "{}: {}",
        out.describe_end(),
        out.stderr
    );
}

/// `--expect` matching is linear in the output: 30 000 lines while a pattern that never
/// appears is pending cost about what they cost with no pattern pending (the old matcher
/// rescanned 64 KiB per output byte: 45 s instead of 2.5 s here).
#[test]
fn expect_matching_keeps_up_with_lots_of_output() {
    let run = |extra: &[&str]| {
        let started = Instant::now();
        let out = common::run_with_timeout(
            rv32vm()
                .args(["--timeout", "300"])
                .args(["--expect", PROMPT, "--send", "seq 30000; vm-exit 3"])
                .args(extra),
            Duration::from_secs(400),
        )
        .expect("run rv32vm");
        assert_eq!(
            out.status.and_then(|s| s.code()),
            Some(3),
            "{}: {}",
            out.describe_end(),
            out.stderr
        );
        assert!(out.stdout.contains("\n30000"), "{}", tail(&out.stdout));
        started.elapsed()
    };
    let baseline = run(&[]);
    // The last pattern appears only at the very end, after all 30 000 lines.
    let pending = run(&["--expect", "re:\\n30000\\r?\\n"]);
    assert!(
        pending < baseline * 3 + Duration::from_secs(5),
        "with a pattern pending: {pending:?}, without: {baseline:?}"
    );
}

/// Deterministic bytes of every value, for piping into the guest.
fn pseudo_random_bytes(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Several MiB piped into rv32vm reach the guest intact (more than the UART's 1 MiB input
/// queue, so the reader has to wait for the guest), and nothing floods stderr.
#[test]
fn piped_input_of_several_mib_reaches_the_guest_intact() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    const LEN: usize = 2 << 20;
    let data = pseudo_random_bytes(LEN);
    let file = scratch("piped-input.bin");
    std::fs::write(&file, &data).expect("write the input");
    let md5 = Command::new("md5sum")
        .arg(&file)
        .output()
        .expect("run md5sum");
    let expected = String::from_utf8_lossy(&md5.stdout)
        .split_whitespace()
        .next()
        .expect("md5sum output")
        .to_string();
    for tier in common::TIERS {
        let mut child = rv32vm()
            .args(["--tier", tier, "--timeout", "400"])
            .args(["--expect", PROMPT])
            .arg("--send")
            .arg(format!(
                "stty raw -echo; echo READY-$((40+2)); head -c {LEN} | md5sum; vm-exit 0"
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start rv32vm");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let stderr_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        // Watch the console; once the guest is ready, pipe the data in.
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let stdout_reader = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            let mut told = false;
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                if !told && String::from_utf8_lossy(&seen).contains("READY-42") {
                    told = true;
                    let _ = ready_tx.send(());
                }
            }
            String::from_utf8_lossy(&seen).into_owned()
        });
        let started = Instant::now();
        if ready_rx.recv_timeout(Duration::from_secs(120)).is_ok() {
            // Blocks while rv32vm holds back (its queue is full); that is the point.
            stdin.write_all(&data).expect("pipe the data into rv32vm");
        }
        drop(stdin);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break Some(status);
            }
            if started.elapsed() > Duration::from_secs(450) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let stdout = stdout_reader.join().expect("stdout reader");
        let stderr = stderr_reader.join().expect("stderr reader");
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "tier {tier}: {status:?}\n{}\n{stderr}",
            tail(&stdout)
        );
        assert!(
            stdout.contains(&format!("{expected}  -")),
            "tier {tier}: the guest's md5sum differs from {expected}: {}",
            tail(&stdout)
        );
        assert!(
            stderr.len() < 1000 && !stderr.contains("WARN"),
            "tier {tier}: stderr: {stderr}"
        );
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// A tmux session running one shell script, driven with send-keys and read with capture-pane.
struct Tmux {
    name: String,
}

impl Tmux {
    fn start(name: &str, script: &str) -> Tmux {
        common::require_tool("tmux", "-V", "tmux");
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", name])
            .output();
        let status = Command::new("tmux")
            .args(["new-session", "-d", "-s", name, "-x", "150", "-y", "50"])
            .arg(format!("bash -c '{script}'"))
            .status()
            .expect("start tmux");
        assert!(status.success(), "tmux new-session failed");
        Tmux {
            name: name.to_string(),
        }
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-J", "-S", "-200", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until `pred` holds for the screen.
    fn wait_for(&self, what: &str, limit: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < limit,
                "waited {limit:?} for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["send-keys", "-t", &self.name])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    fn literal(&self, text: &str) {
        let status = Command::new("tmux")
            .args(["send-keys", "-l", "-t", &self.name, text])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .output();
    }
}

/// `rv32vm` with no arguments in a terminal: the bundled kernel with its root filesystem on
/// /dev/vda, an interactive shell.
#[test]
fn interactive_console_in_a_terminal() {
    let before = scratch("stty-before.txt");
    let after = scratch("stty-after.txt");
    let after_term = scratch("stty-after-sigterm.txt");
    let _ = std::fs::remove_file(&after);
    let _ = std::fs::remove_file(&after_term);
    // Then a second VM, ended by SIGTERM (from `timeout`) while it sits at the prompt. The
    // settings files appear whole (renamed into place), so the test never reads a partial one.
    let script = format!(
        "stty -a > {before}; {bin}; echo RV32VM-EXIT=$?; stty -a > {after}.tmp; mv {after}.tmp {after}; \
         timeout --foreground -s TERM 10 {bin}; echo RV32VM-TERM=$?; stty -a > {after_term}.tmp; mv {after_term}.tmp {after_term}; \
         sleep 600",
        before = before.display(),
        after = after.display(),
        after_term = after_term.display(),
        bin = env!("CARGO_BIN_EXE_rv32vm"),
    );
    let tmux = Tmux::start("rv32vm-console-test", &script);
    let boot_limit = Duration::from_secs(120);
    tmux.wait_for("the shell prompt", boot_limit, |s| s.contains(PROMPT));
    tmux.literal("grep -c ' / ext4' /proc/mounts; cat /sys/block/vda/size");
    tmux.keys(&["Enter"]);
    tmux.wait_for("root on /dev/vda", boot_limit, |s| {
        s.lines().any(|l| l.trim_end() == "16384")
    });

    // Typing reaches the guest shell and its output comes back.
    tmux.literal("echo typed-$((40+2))");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the command's output", boot_limit, |s| {
        s.lines().any(|l| l.trim_end() == "typed-42")
    });

    // Ctrl-C goes to the guest: it interrupts a guest sleep (the shell abandons the rest of
    // the line), and rv32vm keeps running.
    tmux.literal("sleep 1000; echo not-interrupted");
    tmux.keys(&["Enter"]);
    std::thread::sleep(Duration::from_secs(1));
    tmux.keys(&["C-c"]);
    tmux.literal("echo after-$((1+1))");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the interrupted sleep", Duration::from_secs(30), |s| {
        s.lines().any(|l| l.trim_end() == "after-2")
    });
    assert!(
        !screen.contains("RV32VM-EXIT"),
        "Ctrl-C must not stop rv32vm:\n{screen}"
    );
    assert!(!screen.contains("\nnot-interrupted"), "{screen}");

    // Ctrl-A h prints help; Ctrl-A x quits.
    tmux.keys(&["C-a", "h"]);
    tmux.wait_for("the escape help", Duration::from_secs(10), |s| {
        s.contains("C-a x")
    });
    tmux.keys(&["C-a", "x"]);
    let screen = tmux.wait_for("rv32vm to exit", Duration::from_secs(30), |s| {
        s.contains("RV32VM-EXIT=")
    });
    assert!(
        screen.contains("RV32VM-EXIT=0"),
        "Ctrl-A x exits 0:\n{screen}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !after.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let before = std::fs::read_to_string(&before).expect("stty before");
    let after = std::fs::read_to_string(&after).expect("stty after");
    assert_eq!(before, after, "the terminal settings are restored");

    // The second VM boots, then SIGTERM ends it (timeout reports 124) and the terminal is
    // restored again.
    let screen = tmux.wait_for("the SIGTERM exit", Duration::from_secs(90), |s| {
        s.contains("RV32VM-TERM=")
    });
    assert!(screen.contains("RV32VM-TERM=124"), "{screen}");
    assert!(
        screen.contains("terminated by signal 15"),
        "rv32vm says why it stopped:\n{screen}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !after_term.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let after_term = std::fs::read_to_string(&after_term).expect("stty after SIGTERM");
    assert_eq!(
        before, after_term,
        "the terminal settings are restored after SIGTERM"
    );
}

/// `stty -g` of the terminal device `tty`, read from outside the process using it.
fn terminal_settings(tty: &str) -> String {
    let out = Command::new("stty")
        .args(["-g", "-F", tty])
        .output()
        .expect("run stty");
    assert!(out.status.success(), "stty -F {tty}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Waits until `tty`'s settings satisfy `pred`; returns them.
fn wait_for_settings(tty: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let settings = terminal_settings(tty);
        if pred(&settings) {
            return settings;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: settings stay {settings}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn send_signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is rv32vm's, read from the
    // file its shell wrote just before exec.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill({pid}, {sig})");
}

/// SIGTSTP gives the terminal back in its normal mode before the process stops, SIGCONT (here
/// from `fg`) takes raw mode again, and a fatal signal (SIGQUIT) restores it before rv32vm
/// dies of it.
#[test]
fn stop_continue_and_fatal_signals_restore_the_terminal() {
    let pid_file = scratch("signals.pid");
    let before = scratch("signals-stty-before.txt");
    let fifo = scratch("signals.fifo");
    let _ = std::fs::remove_file(&pid_file);
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    // A shell with job control (`set -m`, but not interactive, so it never touches the
    // terminal's settings itself) runs rv32vm as a foreground job in a process group of its
    // own, as a user's shell does: a stop then really stops it (the kernel ignores SIGTSTP in
    // an orphaned process group). rv32vm's shell writes its pid and execs it. After the stop,
    // the script waits on a FIFO until the test has looked, then `fg` continues rv32vm.
    let script = format!(
        "set -m; stty -g > {before}; \
         bash -c \"echo \\$\\$ > {pid}.tmp; mv {pid}.tmp {pid}; exec {bin} boot --kernel {kernel} \
         --initrd {initrd}\"; echo RV32VM-STOPPED=$?; read -r go < {fifo}; \
         fg; echo RV32VM-STATUS=$?; sleep 600",
        pid = pid_file.display(),
        before = before.display(),
        fifo = fifo.display(),
        bin = env!("CARGO_BIN_EXE_rv32vm"),
        kernel = images().join("Image").display(),
        initrd = images().join("initramfs.cpio.gz").display(),
    );
    let tmux = Tmux::start("rv32vm-signals-test", &script);
    let tty_out = Command::new("tmux")
        .args(["display-message", "-p", "-t", &tmux.name, "#{pane_tty}"])
        .output()
        .expect("tmux display-message");
    let tty = String::from_utf8_lossy(&tty_out.stdout).trim().to_string();
    assert!(tty.starts_with("/dev/"), "pane tty: {tty:?}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "rv32vm never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let process_state = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_default()
            .to_string()
    };
    // The pane's settings before rv32vm (written before the pid file).
    let cooked = std::fs::read_to_string(&before)
        .expect("stty before")
        .trim()
        .to_string();
    let raw = wait_for_settings(&tty, "raw mode", |s| s != cooked);

    send_signal(pid, libc::SIGTSTP);
    tmux.wait_for("the stop", Duration::from_secs(30), |s| {
        s.contains("RV32VM-STOPPED=")
    });
    assert_eq!(process_state(), "T", "rv32vm is stopped");
    assert_eq!(
        terminal_settings(&tty),
        cooked,
        "SIGTSTP restores the settings from before rv32vm"
    );

    std::fs::write(&fifo, "go\n").expect("let the script go on to fg");
    let continued = wait_for_settings(&tty, "raw after fg (SIGCONT)", |s| s == raw);
    assert_eq!(continued, raw);
    assert_ne!(process_state(), "T", "rv32vm runs again");

    send_signal(pid, libc::SIGQUIT);
    let screen = tmux.wait_for("rv32vm to die", Duration::from_secs(30), |s| {
        s.contains("RV32VM-STATUS=")
    });
    assert!(
        screen.contains(&format!("RV32VM-STATUS={}", 128 + libc::SIGQUIT)),
        "rv32vm dies of SIGQUIT:\n{screen}"
    );
    assert_eq!(
        terminal_settings(&tty),
        cooked,
        "SIGQUIT restores the terminal before rv32vm dies"
    );
}
