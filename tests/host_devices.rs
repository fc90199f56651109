//! Host integration under every tier: the bundled rootfs with `--share` (virtio-9p) and `--net
//! user` (virtio-net on libslirp), driven on the serial console.
//!
//! - 9P: the guest checks a host file's sha256, writes a file and a directory tree the host
//!   then reads, cannot change a read-only share, and every escape attempt (`..`, symlinks
//!   pointing out, absolute or relative, a symlink swapped in while the guest walks) fails and
//!   leaves the directory next to the share untouched; files the guest creates belong to the
//!   user running the test; the README's `--share . --expect '# ' --send 'cd /mnt/host &&
//!   ./run-tests; vm-exit $?'` works as written.
//! - Network: the guest fetches a page from an HTTP server this test runs on 127.0.0.1
//!   (through the gateway 10.0.2.2), the host reaches busybox `httpd` in the guest through a
//!   forwarded port (which listens on 127.0.0.1 only), and a busy port is a clear error at
//!   start-up. No traffic leaves 127.0.0.1.

mod common;

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const STEP_TIMEOUT: Duration = Duration::from_secs(180);
/// Boots get longer: under `--tier t2` (every block compiled by LLVM before it first runs) a
/// boot to the shell is 80-95 s of CPU time, and a shared 2-core machine gives a test half of
/// a core or less.
const BOOT_TIMEOUT: Duration = Duration::from_secs(480);
const SECRET: &str = "host-secret-e3b0c442";

/// A running VM (bundled kernel and rootfs) whose console we read and type into.
struct Console {
    console: common::console::Console,
    commands: usize,
}

impl Console {
    fn boot(args: &[&str]) -> Console {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rv32vm"));
        command.args(["--timeout", "1200"]).args(args);
        let mut console = Console {
            console: common::console::Console::spawn(&mut command),
            commands: 0,
        };
        console.expect_within("root@rv32vm:~# ", BOOT_TIMEOUT);
        console
    }

    /// Waits until `pattern` appears after what was consumed; returns the text up to it.
    fn expect(&mut self, pattern: &str) -> String {
        self.expect_within(pattern, STEP_TIMEOUT)
    }

    /// [`Console::expect`] with a time limit of `limit`.
    fn expect_within(&mut self, pattern: &str, limit: Duration) -> String {
        self.console.expect_within(pattern, limit)
    }

    /// Runs a shell command; returns (its status, everything the console showed meanwhile,
    /// the echoed command included).
    fn run(&mut self, command: &str) -> (i32, String) {
        self.commands += 1;
        let n = self.commands;
        // The marker's number only exists once the shell has expanded it, so the echoed
        // command line never matches.
        self.send(&format!("{command}; echo \"@@{n}:$((1000+{n})):$?@@\""));
        let text = self.expect(&format!("@@{n}:{}:", 1000 + n));
        let status = self.expect("@@");
        let status = status.trim_end_matches("@@").trim().parse().unwrap_or(-1);
        (status, text.replace('\r', ""))
    }

    /// Runs a command that must succeed; returns its console text.
    fn ok(&mut self, command: &str) -> String {
        let (status, text) = self.run(command);
        assert_eq!(status, 0, "`{command}` failed:\n{text}");
        text
    }

    /// Runs a command that must fail; returns its console text.
    fn fails(&mut self, command: &str) -> String {
        let (status, text) = self.run(command);
        assert_ne!(status, 0, "`{command}` succeeded:\n{text}");
        text
    }

    fn send(&mut self, line: &str) {
        self.console.send(line);
    }

    /// `vm-exit status` and waits for rv32vm to exit with it.
    fn exit(mut self, status: i32) {
        self.send(&format!("vm-exit {status}"));
        let end = self.console.wait_exit_within(STEP_TIMEOUT);
        assert_eq!(end.code(), Some(status), "rv32vm exit status");
    }
}

/// A scratch directory: `share/` is shared, `outside/` sits next to it and must stay as it is.
struct Scratch {
    base: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("host_devices")
            .join(name);
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("share")).unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("outside/secret"), format!("{SECRET}\n")).unwrap();
        Scratch { base }
    }

    fn share(&self) -> PathBuf {
        self.base.join("share")
    }

    fn outside(&self) -> PathBuf {
        self.base.join("outside")
    }

    /// Names and contents of everything in `outside/`.
    fn outside_state(&self) -> Vec<(String, Vec<u8>)> {
        let mut state: Vec<_> = fs::read_dir(self.outside())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let data = fs::read(e.path()).unwrap_or_default();
                (e.file_name().to_string_lossy().into_owned(), data)
            })
            .collect();
        state.sort();
        state
    }
}

fn sha256_on_host(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum (coreutils) on the host");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)[..64].to_string()
}

/// Deterministic bytes that are not trivially compressible.
fn pattern(len: usize) -> Vec<u8> {
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

fn share_arg(dir: &Path, options: &str) -> String {
    format!("{}{options}", dir.display())
}

// ---------------------------------------------------------------------------------------------
// 9P

#[test]
fn shared_folder_reads_writes_and_creates_trees() {
    for tier in common::TIERS {
        let scratch = Scratch::new(&format!("rw-{tier}"));
        let data = pattern(300_000);
        fs::write(scratch.share().join("data.bin"), &data).unwrap();
        let host_sha = sha256_on_host(&scratch.share().join("data.bin"));
        let share = share_arg(&scratch.share(), "");
        let mut vm = Console::boot(&["--tier", tier, "--share", &share]);
        let mounts = vm.ok("grep /mnt/host /proc/mounts");
        assert!(mounts.contains("host /mnt/host 9p"), "{mounts}");
        // A host file read in the guest.
        let text = vm.ok("sha256sum /mnt/host/data.bin");
        assert!(
            text.contains(&host_sha),
            "tier {tier}: guest sha256:\n{text}"
        );
        // A guest file read on the host.
        let text = vm.ok(
            "dd if=/dev/urandom of=/mnt/host/from-guest.bin bs=1k count=200 2>/dev/null && \
             sha256sum /mnt/host/from-guest.bin",
        );
        // A directory tree made in the guest.
        vm.ok(
            "mkdir -p /mnt/host/tree/a/b && echo leaf > /mnt/host/tree/a/b/leaf.txt && \
             mkdir /mnt/host/tree/c && mv /mnt/host/tree/a/b/leaf.txt /mnt/host/tree/c/moved && \
             echo kept > /mnt/host/tree/a/kept && rm /mnt/host/tree/a/kept",
        );
        vm.exit(0);
        let written = scratch.share().join("from-guest.bin");
        let sha = sha256_on_host(&written);
        assert!(
            text.contains(&sha),
            "tier {tier}: host sha256 {sha}, guest said:\n{text}"
        );
        assert_eq!(fs::metadata(&written).unwrap().len(), 200 * 1024);
        let tree = scratch.share().join("tree");
        assert!(tree.join("a/b").is_dir());
        assert_eq!(fs::read(tree.join("c/moved")).unwrap(), b"leaf\n");
        assert!(!tree.join("a/b/leaf.txt").exists() && !tree.join("a/kept").exists());
        // Files the guest (root) made belong to the user running rv32vm.
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        assert_eq!(fs::metadata(&written).unwrap().uid(), uid);
        assert_eq!(fs::metadata(tree.join("c")).unwrap().uid(), uid);
    }
}

#[test]
fn read_only_share_refuses_changes() {
    for tier in common::TIERS {
        let scratch = Scratch::new(&format!("ro-{tier}"));
        fs::write(scratch.share().join("file"), b"original\n").unwrap();
        fs::create_dir(scratch.share().join("dir")).unwrap();
        let share = share_arg(&scratch.share(), ",ro");
        let mut vm = Console::boot(&["--tier", tier, "--share", &share]);
        assert!(vm.ok("cat /mnt/host/file").contains("original"));
        for change in [
            "echo new > /mnt/host/new",
            "echo more >> /mnt/host/file",
            "echo over > /mnt/host/file",
            "mkdir /mnt/host/newdir",
            "rm /mnt/host/file",
            "rmdir /mnt/host/dir",
            "mv /mnt/host/file /mnt/host/moved",
            "touch /mnt/host/file",
            "chmod 777 /mnt/host/file",
            "ln /mnt/host/file /mnt/host/hard",
        ] {
            let text = vm.fails(change);
            assert!(
                text.contains("Read-only file system"),
                "tier {tier}: `{change}` did not fail with EROFS:\n{text}"
            );
        }
        vm.exit(0);
        assert_eq!(
            fs::read(scratch.share().join("file")).unwrap(),
            b"original\n"
        );
        let mut names: Vec<_> = fs::read_dir(scratch.share())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["dir", "file"]);
    }
}

#[test]
fn escapes_from_the_share_fail_and_touch_nothing_outside() {
    for tier in common::TIERS {
        let scratch = Scratch::new(&format!("escape-{tier}"));
        let share = scratch.share();
        std::os::unix::fs::symlink(scratch.outside(), share.join("abs")).unwrap();
        std::os::unix::fs::symlink("../outside", share.join("rel")).unwrap();
        std::os::unix::fs::symlink(scratch.outside().join("secret"), share.join("secret-link"))
            .unwrap();
        fs::create_dir(share.join("swap")).unwrap();
        fs::write(share.join("swap/secret"), b"inside\n").unwrap();
        let before = scratch.outside_state();
        let share_option = share_arg(&share, "");
        let mut vm = Console::boot(&["--tier", tier, "--share", &share_option]);
        let mut seen = String::new();
        for attempt in [
            "cat /mnt/host/../outside/secret",
            "cat /mnt/host/abs/secret",
            "cat /mnt/host/rel/secret",
            "cat /mnt/host/secret-link",
            "cd /mnt/host/rel && cat secret",
            "cd /mnt/host && cat ../../outside/secret",
            "echo planted > /mnt/host/abs/planted",
            "echo planted > /mnt/host/rel/planted",
            "echo planted > /mnt/host/secret-link",
        ] {
            seen += &vm.fails(attempt);
        }
        // Hard links and renames stay inside too: the link is made, the target is the share's.
        vm.ok("echo mine > /mnt/host/own && ln /mnt/host/own /mnt/host/own-link");
        seen += &vm.run("mv /mnt/host/own /mnt/host/abs/").1;
        seen += &vm.run("mv /mnt/host/own /mnt/host/rel/moved").1;
        // A host thread swaps share/swap between the directory and a symlink to outside/
        // while the guest walks through it, reading and creating files.
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (stop, dir) = (stop.clone(), share.join("swap"));
            let (parked, outside) = (share.join("parked"), scratch.outside());
            std::thread::spawn(move || {
                let mut swaps = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    fs::rename(&dir, &parked).unwrap();
                    std::os::unix::fs::symlink(&outside, &dir).unwrap();
                    std::thread::sleep(Duration::from_micros(300));
                    fs::remove_file(&dir).unwrap();
                    fs::rename(&parked, &dir).unwrap();
                    std::thread::sleep(Duration::from_micros(300));
                    swaps += 1;
                }
                swaps
            })
        };
        let (_, text) = vm.run(
            "i=0; while [ $i -lt 300 ]; do cat /mnt/host/swap/secret; \
             echo planted > /mnt/host/swap/raced$i; i=$((i+1)); done 2>/dev/null; echo walked",
        );
        stop.store(true, Ordering::Relaxed);
        assert!(swapper.join().unwrap() > 0);
        assert!(text.contains("walked"));
        seen += &text;
        vm.exit(0);
        assert!(
            !seen.contains(SECRET),
            "tier {tier}: the guest read a file outside the share:\n{seen}"
        );
        assert_eq!(
            scratch.outside_state(),
            before,
            "tier {tier}: the guest changed something outside the share"
        );
        assert_eq!(fs::read(share.join("own-link")).unwrap(), b"mine\n");
    }
}

/// The README's CI recipe, as written: `rv32vm --share DIR --expect '# ' --send 'cd /mnt/host
/// && ./run-tests; vm-exit $?'` runs a script from the host folder and returns its status.
#[test]
fn readme_recipe_runs_host_tests_and_returns_their_status() {
    for tier in common::TIERS {
        let scratch = Scratch::new(&format!("readme-{tier}"));
        let script = scratch.share().join("run-tests");
        fs::write(
            &script,
            "#!/bin/sh\necho \"running in $(pwd)\"\necho result > results.txt\nexit 3\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        let outcome = common::run_with_timeout(
            Command::new(env!("CARGO_BIN_EXE_rv32vm"))
                .current_dir(scratch.share())
                .args(["--tier", tier, "--timeout", "1200", "--share", "."])
                .args(["--expect", "# "])
                .args(["--send", "cd /mnt/host && ./run-tests; vm-exit $?"]),
            BOOT_TIMEOUT,
        )
        .expect("run rv32vm");
        assert_eq!(
            outcome.status.and_then(|s| s.code()),
            Some(3),
            "tier {tier}: {}\n{}",
            outcome.describe_end(),
            common::tail(&outcome.stdout, 20)
        );
        assert!(outcome.stdout.contains("running in /mnt/host"));
        assert_eq!(
            fs::read(scratch.share().join("results.txt")).unwrap(),
            b"result\n"
        );
    }
}

#[test]
fn share_errors_are_clear() {
    let scratch = Scratch::new("errors");
    let missing = scratch.base.join("missing");
    for (args, wanted) in [
        (
            vec!["--share".to_string(), missing.display().to_string()],
            "cannot share",
        ),
        (
            vec![
                "--share".into(),
                format!("{},tag=a b", scratch.share().display()),
            ],
            "bad mount tag",
        ),
        (
            vec![
                "--share".into(),
                format!("{},rw", scratch.share().display()),
            ],
            "unknown share option",
        ),
        (
            vec![
                "--share".into(),
                format!("{},tag=a,tag=b", scratch.share().display()),
            ],
            "one tag=TAG per share",
        ),
        (
            // Both default to the tag `host`: the guest could mount only one of them.
            vec![
                "--share".into(),
                scratch.share().display().to_string(),
                "--share".into(),
                scratch.base.display().to_string(),
            ],
            "have the mount tag `host`",
        ),
    ] {
        let outcome = common::run_with_timeout(
            Command::new(env!("CARGO_BIN_EXE_rv32vm")).args(&args),
            Duration::from_secs(30),
        )
        .expect("run rv32vm");
        assert_ne!(outcome.status.and_then(|s| s.code()), Some(0));
        assert!(
            outcome.stderr.contains(wanted),
            "{args:?}: {}",
            outcome.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Network

/// A one-page HTTP server on 127.0.0.1 (port chosen by the kernel), answering every request
/// with `body`, until the test ends.
fn serve_http(body: Vec<u8>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 2048];
            let _ = stream.read(&mut request);
            let header = format!(
                "HTTP/1.0 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(header.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    port
}

/// A TCP port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether the host has a TCP socket listening on exactly 127.0.0.1:`port` (/proc/net/tcp).
fn listens_on_loopback_only(port: u16) -> bool {
    let table = fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let listening: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address, state 0A = LISTEN
            (fields.get(3) == Some(&"0A")).then(|| fields[1])
        })
        .filter(|local| local.ends_with(&format!(":{port:04X}")))
        .collect();
    listening == ["0100007F:".to_string() + &format!("{port:04X}")]
}

#[test]
fn guest_reaches_the_host_and_the_host_reaches_the_guest() {
    for tier in common::TIERS {
        let page = pattern(100_000);
        let http_port = serve_http(page.clone());
        let forwarded = free_port();
        let net = format!("user,hostfwd=tcp::{forwarded}-:8080");
        let mut vm = Console::boot(&["--tier", tier, "--net", &net]);
        let text = vm.ok("ifconfig eth0 && route -n");
        assert!(text.contains("inet addr:10.0.2.15"), "tier {tier}: {text}");
        assert!(
            text.contains("10.0.2.2"),
            "tier {tier}: no default route: {text}"
        );
        // Guest -> host through the gateway.
        let text = vm.ok(&format!(
            "wget -q -O /tmp/page http://10.0.2.2:{http_port}/page && sha256sum /tmp/page"
        ));
        let expected = {
            let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("page-{tier}"));
            fs::write(&path, &page).unwrap();
            sha256_on_host(&path)
        };
        assert!(
            text.contains(&expected),
            "tier {tier}: fetched page differs:\n{text}"
        );
        // Host -> guest through the forwarded port: busybox httpd in the guest.
        vm.ok(
            "mkdir -p /tmp/www && echo served-by-the-guest > /tmp/www/index.html && \
             httpd -p 8080 -h /tmp/www",
        );
        assert!(
            listens_on_loopback_only(forwarded),
            "tier {tier}: not on 127.0.0.1 only"
        );
        let mut stream = TcpStream::connect(("127.0.0.1", forwarded)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream
            .write_all(b"GET /index.html HTTP/1.0\r\n\r\n")
            .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).expect("read the reply");
        assert!(
            reply.starts_with("HTTP/1.") && reply.contains("served-by-the-guest"),
            "tier {tier}: {reply}"
        );
        vm.exit(0);
    }
}

#[test]
fn a_busy_forwarded_port_is_an_error_at_start_up() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    for tier in common::TIERS {
        let outcome = common::run_with_timeout(
            Command::new(env!("CARGO_BIN_EXE_rv32vm")).args([
                "--tier",
                tier,
                "--net",
                &format!("user,hostfwd=tcp::{port}-:80"),
            ]),
            Duration::from_secs(60),
        )
        .expect("run rv32vm");
        assert_eq!(outcome.status.and_then(|s| s.code()), Some(1));
        assert!(
            outcome
                .stderr
                .contains(&format!("cannot forward host port tcp:127.0.0.1:{port}"))
                && outcome.stderr.contains("Address already in use"),
            "tier {tier}: {}",
            outcome.stderr
        );
        assert!(
            !outcome.stdout.contains("Linux version"),
            "the guest must not start"
        );
    }
}

#[test]
fn without_net_there_is_no_network_card() {
    let mut vm = Console::boot(&[]);
    let text = vm.ok("ls /sys/class/net");
    assert!(!text.contains("eth0"), "{text}");
    vm.exit(0);
}

#[test]
fn shares_and_forwarded_ports_survive_a_guest_reboot() {
    let scratch = Scratch::new("reboot");
    fs::write(scratch.share().join("greeting"), b"hello from the host\n").unwrap();
    let forwarded = free_port();
    let share = share_arg(&scratch.share(), "");
    let net = format!("user,hostfwd=tcp::{forwarded}-:8080");
    let mut vm = Console::boot(&["--share", &share, "--net", &net]);
    assert!(vm
        .ok("cat /mnt/host/greeting")
        .contains("hello from the host"));
    vm.send("reboot -f");
    vm.expect_within("Run /sbin/init", BOOT_TIMEOUT);
    vm.expect_within("root@rv32vm:~# ", BOOT_TIMEOUT);
    assert!(vm
        .ok("cat /mnt/host/greeting")
        .contains("hello from the host"));
    vm.ok("echo after-reboot > /mnt/host/written");
    vm.ok(
        "mkdir -p /tmp/www && echo still-forwarded > /tmp/www/index.html && \
         httpd -p 8080 -h /tmp/www",
    );
    let mut stream = TcpStream::connect(("127.0.0.1", forwarded)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read the reply");
    assert!(reply.contains("still-forwarded"), "{reply}");
    vm.exit(0);
    assert_eq!(
        fs::read(scratch.share().join("written")).unwrap(),
        b"after-reboot\n"
    );
}
