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
                .args(["--tier", tier, "--timeout", "120"])
                .args(["--expect", PROMPT, "--send", "echo marker-$((6*7))"])
                .args(["--expect", "re:marker-42\\r?\\n"])
                .args(["--send", "sh -c 'exit 7'; vm-exit $?"])
                .arg("--console-log")
                .arg(&log),
            Duration::from_secs(180),
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
