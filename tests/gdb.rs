//! The GDB stub under every tier: `gdb-multiarch` in batch mode against a user-mode program
//! (tests/gdb/target.c) and against the bundled kernel (entry and `start_kernel`, found in the
//! guest's /proc/kallsyms), plus Ctrl-C over the raw protocol and exact `--max-insns`.
//!
//! gdb-multiarch must be installed (scripts/setup.sh does): without it these tests fail.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::{repo_root, run_with_timeout, tail, TIERS};

/// Longest a gdb batch session may take (tier 2 compiles every block it runs).
const GDB_TIME_LIMIT: Duration = Duration::from_secs(240);
/// Where the kernel starts when OpenSBI hands over.
const KERNEL_ENTRY: u32 = 0x8040_0000;
/// The kernel's virtual base (CONFIG_PAGE_OFFSET): virtual v is Image offset v - this.
const KERNEL_VIRTUAL_BASE: u32 = 0xc000_0000;

fn rv32vm() -> &'static str {
    env!("CARGO_BIN_EXE_rv32vm")
}

fn require_gdb() {
    common::require_tool("gdb-multiarch", "--version", "gdb-multiarch");
}

/// The user-mode program, built once with zig (debug information on, so gdb knows `bump`,
/// `counter`, `seen` and `spin`).
fn target_program() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out_dir = repo_root().join("target/gdb-guest");
            std::fs::create_dir_all(&out_dir).expect("create target/gdb-guest");
            let out = out_dir.join("target");
            let cache = repo_root().join("target/zig-cache");
            let status = Command::new("python3")
                .args(["-m", "ziglang", "cc", "-target", "riscv32-linux-musl"])
                .args(["-O1", "-g", "-static", "-o"])
                .arg(&out)
                .arg(repo_root().join("tests/gdb/target.c"))
                .env("ZIG_GLOBAL_CACHE_DIR", &cache)
                .env("ZIG_LOCAL_CACHE_DIR", &cache)
                .status()
                .expect("run zig (pip install ziglang)");
            assert!(status.success(), "building tests/gdb/target.c failed");
            out
        })
        .clone()
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("its address").port()
}

/// rv32vm started with `--gdb PORT --gdb-wait`, its output collected.
struct Vm {
    child: Child,
    port: u16,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Vm {
    /// Start `rv32vm ARGS...` with the stub waiting; returns once it listens.
    fn start(args: &[&str], tail_args: &[&str]) -> Vm {
        let port = free_port();
        let mut child = Command::new(rv32vm())
            .args(args)
            .args(["--gdb", &format!("127.0.0.1:{port}"), "--gdb-wait"])
            .args(tail_args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start rv32vm");
        let stdout = collect(child.stdout.take().expect("stdout"));
        let stderr = collect(child.stderr.take().expect("stderr"));
        let vm = Vm {
            child,
            port,
            stdout,
            stderr,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !vm.stderr().contains("waiting for gdb") {
            assert!(
                Instant::now() < deadline,
                "rv32vm never said it waits for gdb; stderr:\n{}",
                vm.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        vm
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap()).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Run gdb-multiarch in batch mode with `commands` against this VM.
    fn gdb(&self, file: Option<&Path>, commands: &[&str]) -> String {
        let mut gdb = Command::new("gdb-multiarch");
        gdb.args(["-batch", "-nx", "-ex", "set architecture riscv:rv32"]);
        gdb.args(["-ex", "set pagination off", "-ex", "set confirm off"]);
        if let Some(file) = file {
            gdb.arg("-ex").arg(format!("file {}", file.display()));
        }
        gdb.args(["-ex", &format!("target remote 127.0.0.1:{}", self.port)]);
        for c in commands {
            gdb.args(["-ex", c]);
        }
        let outcome = run_with_timeout(&mut gdb, GDB_TIME_LIMIT).expect("run gdb-multiarch");
        assert!(
            !outcome.timed_out(),
            "gdb timed out; its output:\n{}\n{}\nrv32vm stderr:\n{}",
            outcome.stdout,
            outcome.stderr,
            tail(&self.stderr(), 20)
        );
        format!("{}{}", outcome.stdout, outcome.stderr)
    }

    /// Wait for rv32vm to exit; returns its exit code (None for a signal).
    fn wait(mut self) -> (Option<i32>, String, String) {
        let deadline = Instant::now() + GDB_TIME_LIMIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for rv32vm") {
                // Let the collectors drain the pipes.
                std::thread::sleep(Duration::from_millis(50));
                return (status.code(), self.stdout(), self.stderr());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("rv32vm did not exit; stderr:\n{}", tail(&self.stderr(), 20));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect(mut pipe: impl Read + Send + 'static) -> Arc<Mutex<Vec<u8>>> {
    let sink = Arc::new(Mutex::new(Vec::new()));
    let out = sink.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    sink
}

/// The number gdb printed after `marker` (`echo MARKER` then a `p/x` or `p`): `$N = VALUE`.
fn value_after(output: &str, marker: &str) -> u64 {
    let rest = output
        .split(marker)
        .nth(1)
        .unwrap_or_else(|| panic!("no {marker} in gdb's output:\n{output}"));
    let value = rest
        .split('=')
        .nth(1)
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or_else(|| panic!("no value after {marker} in gdb's output:\n{output}"));
    match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    }
    .unwrap_or_else(|_| panic!("bad value {value:?} after {marker} in:\n{output}"))
}

/// gdb commands that print `expr` after the marker `@name`.
fn show(name: &str, expr: &str) -> [String; 2] {
    [format!("echo @{name} "), format!("p/x {expr}")]
}

fn commands(parts: &[&[String]]) -> Vec<String> {
    parts.iter().flat_map(|p| p.iter().cloned()).collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Breakpoints, a step, registers (x, pc, f, CSRs, privilege) read and written, memory read and
/// written, write and read watchpoints, and the program's result shows gdb's writes.
fn user_program_session(tier: &str) {
    let program = target_program();
    let vm = Vm::start(&["run", "--tier", tier], &[program.to_str().unwrap()]);
    let s = |a: &str| vec![a.to_string()];
    let cmds = commands(&[
        &s("break bump"),
        &s("continue"),
        &show("bp", "$pc"),
        &show("a0", "$a0"),
        &show("instret0", "$instret"),
        &s("stepi"),
        &show("stepped", "$pc"),
        &show("instret1", "$instret"),
        &s("info registers priv"),
        &show("fcsr", "$fcsr"),
        &s("set var $ft0 = 1.5"),
        &s("p $ft0"),
        &s("set var $mscratch = 0x1234"),
        &show("mscratch", "$mscratch"),
        // The argument of the first call becomes 5; `seen` becomes 7.
        &s("set var $a0 = 5"),
        &s("set var seen = 7"),
        &show("seen", "seen"),
        &s("watch counter"),
        &s("continue"),
        &show("counter", "counter"),
        &s("delete"),
        &s("rwatch seen"),
        &s("continue"),
        &s("delete"),
        &s("continue"),
    ]);
    let out = vm.gdb(Some(&program), &strs(&cmds));
    assert!(out.contains("Breakpoint 1, bump"), "{tier}: {out}");
    assert_eq!(
        value_after(&out, "@a0"),
        1,
        "{tier}: bump's first argument\n{out}"
    );
    let (bp, stepped) = (value_after(&out, "@bp"), value_after(&out, "@stepped"));
    assert!(
        stepped == bp + 2 || stepped == bp + 4,
        "{tier}: stepi from {bp:#x} went to {stepped:#x}\n{out}"
    );
    assert_eq!(
        value_after(&out, "@instret1"),
        value_after(&out, "@instret0") + 1,
        "{tier}: a step retires exactly one instruction\n{out}"
    );
    assert!(out.contains("prv:0 [User/Application]"), "{tier}: {out}");
    assert!(
        out.contains("1.5"),
        "{tier}: f register written and read\n{out}"
    );
    assert_eq!(value_after(&out, "@mscratch"), 0x1234, "{tier}: {out}");
    assert_eq!(
        value_after(&out, "@seen"),
        7,
        "{tier}: memory written and read\n{out}"
    );
    assert!(
        out.contains("Hardware watchpoint 2: counter") && out.contains("New value = 5"),
        "{tier}: write watchpoint\n{out}"
    );
    assert_eq!(value_after(&out, "@counter"), 5, "{tier}: {out}");
    assert!(
        out.contains("Hardware read watchpoint 3: seen") && out.contains("Value = 7"),
        "{tier}: read watchpoint\n{out}"
    );
    assert!(out.contains("exited normally"), "{tier}: {out}");
    let (code, stdout, stderr) = vm.wait();
    assert_eq!(code, Some(0), "{tier}: {stderr}");
    // counter = 5 + 2 + 3; total = 5 + 7 + 10.
    assert!(
        stdout.contains("counter=10 total=22 seen=7"),
        "{tier}: the program did not see gdb's writes: {stdout}"
    );
}

/// A hardware breakpoint, then detach: the program runs on to its normal end.
fn user_program_detach(tier: &str) {
    let program = target_program();
    let vm = Vm::start(&["run", "--tier", tier], &[program.to_str().unwrap()]);
    let out = vm.gdb(
        Some(&program),
        &[
            "hbreak bump",
            "continue",
            "continue",
            "info registers a0",
            "detach",
        ],
    );
    assert!(
        out.contains("Breakpoint 1, bump (by=by@entry=2)"),
        "{tier}: {out}"
    );
    let (code, stdout, stderr) = vm.wait();
    assert_eq!(code, Some(0), "{tier}: {stderr}");
    assert!(
        stdout.contains("counter=6 total=10 seen=100"),
        "{tier}: {stdout}"
    );
}

/// kill from gdb ends rv32vm as SIGKILL would.
fn user_program_kill(tier: &str) {
    let program = target_program();
    let vm = Vm::start(&["run", "--tier", tier], &[program.to_str().unwrap()]);
    let out = vm.gdb(Some(&program), &["break bump", "continue", "kill"]);
    assert!(out.contains("Breakpoint 1, bump"), "{tier}: {out}");
    let (code, stdout, _) = vm.wait();
    assert_ne!(code, Some(0), "{tier}: a killed program must not succeed");
    assert!(!stdout.contains("counter="), "{tier}: it ran on: {stdout}");
}

/// Send one remote-protocol packet.
fn send_packet(stream: &mut TcpStream, body: &str) {
    let sum = body.bytes().fold(0u8, |a, b| a.wrapping_add(b));
    write!(stream, "${body}#{sum:02x}").expect("send a packet");
}

/// Read until a whole packet (`$...#xx`) arrived; returns its body.
fn read_packet(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        let n = stream.read(&mut byte).expect("read a reply");
        assert!(
            n == 1,
            "connection closed; got {:?}",
            String::from_utf8_lossy(&got)
        );
        got.push(byte[0]);
        let text = String::from_utf8_lossy(&got);
        if let Some(start) = text.find('$') {
            if let Some(end) = text[start..].find('#') {
                if text.len() >= start + end + 3 {
                    let _ = stream.write_all(b"+");
                    return text[start + 1..start + end].to_string();
                }
            }
        }
    }
}

/// Ctrl-C (0x03) stops a program that spins forever; the reply is SIGINT.
fn user_program_interrupt(tier: &str) {
    let program = target_program();
    let vm = Vm::start(
        &["run", "--tier", tier],
        &[program.to_str().unwrap(), "spin"],
    );
    let mut stream = TcpStream::connect(("127.0.0.1", vm.port)).expect("connect to the stub");
    stream
        .set_read_timeout(Some(GDB_TIME_LIMIT))
        .expect("set a read timeout");
    send_packet(&mut stream, "?");
    let reply = read_packet(&mut stream);
    assert!(reply.starts_with('T') || reply.starts_with('S'), "{reply}");
    send_packet(&mut stream, "c");
    std::thread::sleep(Duration::from_millis(500));
    stream.write_all(&[0x03]).expect("send Ctrl-C");
    let reply = read_packet(&mut stream);
    assert!(
        reply.starts_with("S02") || reply.starts_with("T02"),
        "{tier}: Ctrl-C gave {reply}"
    );
    send_packet(&mut stream, "k");
    drop(stream);
    let (code, _, _) = vm.wait();
    assert_ne!(code, Some(0), "{tier}");
}

#[test]
fn user_mode_under_gdb_in_every_tier() {
    require_gdb();
    for tier in TIERS {
        user_program_session(tier);
        user_program_detach(tier);
        user_program_kill(tier);
        user_program_interrupt(tier);
    }
}

/// tests/bare/vm_demand.S (M-mode sets up Sv32, an S-mode kernel demand-pages a U-mode
/// program), built once.
fn bare_program() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            common::require_tool(
                "riscv64-linux-gnu-gcc",
                "--version",
                "gcc-riscv64-linux-gnu",
            );
            let root = repo_root();
            let out = root.join("target/gdb-guest/vm_demand.elf");
            std::fs::create_dir_all(out.parent().unwrap()).expect("create target/gdb-guest");
            let status = Command::new("riscv64-linux-gnu-gcc")
                .args(["-march=rv32gc_zicsr_zifencei", "-mabi=ilp32", "-nostdlib"])
                .args(["-nostartfiles", "-static", "-fno-pic", "-no-pie"])
                .args(["-Wl,--build-id=none", "-Wl,--no-warn-rwx-segments", "-I"])
                .arg(root.join("tests/bare/include"))
                .arg("-T")
                .arg(root.join("tests/isa/link.ld"))
                .arg(root.join("tests/bare/vm_demand.S"))
                .arg("-o")
                .arg(&out)
                .status()
                .expect("run riscv64-linux-gnu-gcc");
            assert!(status.success(), "building vm_demand.S");
            out
        })
        .clone()
}

/// `run --bare` under gdb: a breakpoint on a U-mode page that is not mapped yet is met once the
/// guest kernel mapped it (the fetch comes first); memory through the guest's page tables.
#[test]
fn bare_metal_under_gdb_in_every_tier() {
    require_gdb();
    let program = bare_program();
    for tier in TIERS {
        let vm = Vm::start(
            &["run", "--bare", "--tier", tier],
            &[program.to_str().unwrap()],
        );
        let s = |a: &str| vec![a.to_string()];
        let cmds = commands(&[
            &show("start", "$pc"),
            &s("info registers priv"),
            &s("break *0x1000"),
            &s("continue"),
            &show("bp", "$pc"),
            &s("info registers priv"),
            &show("satp", "$satp"),
            &show("code", "*(unsigned int *)0x1000"),
            &s("stepi"),
            &show("stepped", "$pc"),
            &s("delete"),
            &s("continue"),
        ]);
        let out = vm.gdb(Some(&program), &strs(&cmds));
        assert_eq!(value_after(&out, "@start"), 0x8000_0000, "{tier}: {out}");
        assert!(out.contains("prv:3 [Machine]"), "{tier}: {out}");
        assert_eq!(value_after(&out, "@bp"), 0x1000, "{tier}: {out}");
        assert!(out.contains("prv:0 [User/Application]"), "{tier}: {out}");
        assert_ne!(value_after(&out, "@satp"), 0, "{tier}: {out}");
        assert_ne!(
            value_after(&out, "@code"),
            0,
            "{tier}: user code read through Sv32\n{out}"
        );
        let stepped = value_after(&out, "@stepped");
        assert!(stepped == 0x1002 || stepped == 0x1004, "{tier}: {out}");
        assert!(out.contains("exited normally"), "{tier}: {out}");
        let (code, _, stderr) = vm.wait();
        assert_eq!(code, Some(0), "{tier}: {stderr}");
    }
}

/// `start_kernel`'s address, from the bundled guest's /proc/kallsyms (the image ships no
/// vmlinux; kallsyms is the symbol table the kernel keeps).
fn start_kernel_address() -> u32 {
    static ADDRESS: OnceLock<u32> = OnceLock::new();
    *ADDRESS.get_or_init(|| {
        let mut boot = Command::new(rv32vm());
        boot.args(["boot", "--timeout", "240", "--expect", "~# ", "--send"])
            .arg("grep -w start_kernel /proc/kallsyms; poweroff -f");
        let outcome = run_with_timeout(&mut boot, Duration::from_secs(260)).expect("boot");
        assert!(outcome.succeeded(), "boot: {}", tail(&outcome.stderr, 20));
        let line = outcome
            .stdout
            .lines()
            .find(|l| l.trim_end().ends_with(" T start_kernel"))
            .unwrap_or_else(|| panic!("no start_kernel in:\n{}", tail(&outcome.stdout, 20)));
        u32::from_str_radix(line.split_whitespace().next().unwrap(), 16).expect("an address")
    })
}

/// The bytes of images/Image at `offset`.
fn image_word(offset: u32) -> u32 {
    let image = std::fs::read(repo_root().join("images/Image")).expect("read images/Image");
    let at = offset as usize;
    u32::from_le_bytes(image[at..at + 4].try_into().unwrap())
}

/// OpenSBI, then the kernel under gdb: break at the kernel's entry (S-mode, MMU off), step,
/// read memory; a hardware breakpoint at start_kernel (MMU on: memory through the page
/// tables), registers, an access watchpoint on its stack; kill.
fn kernel_session(tier: &str, start_kernel: u32) {
    let bios = repo_root().join("images/fw_dynamic.bin");
    let vm = Vm::start(
        &["boot", "--tier", tier, "--bios", bios.to_str().unwrap()],
        &["--timeout", "600"],
    );
    let s = |a: &str| vec![a.to_string()];
    let cmds = commands(&[
        &show("reset", "$pc"),
        &s("info registers priv"),
        &s(&format!("break *{KERNEL_ENTRY:#x}")),
        &s("continue"),
        &show("entry", "$pc"),
        &show("a0", "$a0"),
        &show("satp0", "$satp"),
        &s("info registers priv"),
        &show("instret0", "$minstret"),
        &s("stepi"),
        &show("instret1", "$minstret"),
        &show("word0", &format!("*(unsigned int *){KERNEL_ENTRY:#x}")),
        &s("delete"),
        &s(&format!("hbreak *{start_kernel:#x}")),
        &s("continue"),
        &show("sk", "$pc"),
        &show("satp1", "$satp"),
        &show("code", &format!("*(unsigned int *){start_kernel:#x}")),
        &s("info registers"),
        &s("delete"),
        &s("eval \"awatch *(int *)0x%x\", $sp - 8"),
        &s("continue"),
        &show("watched", "$pc"),
        &s("kill"),
    ]);
    let out = vm.gdb(None, &strs(&cmds));
    assert_eq!(value_after(&out, "@reset"), 0x8000_0000, "{tier}: {out}");
    assert!(out.contains("prv:3 [Machine]"), "{tier}: {out}");
    assert_eq!(
        value_after(&out, "@entry"),
        KERNEL_ENTRY as u64,
        "{tier}: {out}"
    );
    assert_eq!(value_after(&out, "@a0"), 0, "{tier}: hart id\n{out}");
    assert_eq!(value_after(&out, "@satp0"), 0, "{tier}: {out}");
    assert!(out.contains("prv:1 [Supervisor]"), "{tier}: {out}");
    assert_eq!(
        value_after(&out, "@instret1"),
        value_after(&out, "@instret0") + 1,
        "{tier}: a step retires one instruction\n{out}"
    );
    assert_eq!(
        value_after(&out, "@word0"),
        image_word(0) as u64,
        "{tier}: {out}"
    );
    assert_eq!(
        value_after(&out, "@sk"),
        start_kernel as u64,
        "{tier}: {out}"
    );
    assert_ne!(
        value_after(&out, "@satp1"),
        0,
        "{tier}: the MMU is on by now\n{out}"
    );
    assert_eq!(
        value_after(&out, "@code"),
        image_word(start_kernel - KERNEL_VIRTUAL_BASE) as u64,
        "{tier}: memory read through the page tables\n{out}"
    );
    for reg in ["ra ", "sp ", "a1 ", "pc "] {
        assert!(
            out.contains(reg),
            "{tier}: info registers lacks {reg}\n{out}"
        );
    }
    assert!(
        out.contains("Hardware access (read/write) watchpoint 3"),
        "{tier}: {out}"
    );
    let watched = value_after(&out, "@watched");
    assert!(
        (start_kernel as u64..start_kernel as u64 + 64).contains(&watched),
        "{tier}: the watchpoint stopped in start_kernel's prologue, not at {watched:#x}\n{out}"
    );
    let (code, _, stderr) = vm.wait();
    assert_eq!(code, Some(137), "{tier}: killed from gdb\n{stderr}");
}

#[test]
fn kernel_under_gdb_in_every_tier() {
    require_gdb();
    let start_kernel = start_kernel_address();
    for tier in TIERS {
        kernel_session(tier, start_kernel);
    }
}

/// The instructions-retired figure of `--stats`.
fn retired(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("instructions retired"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no instruction count in:\n{stderr}"))
}

#[test]
fn max_insns_is_exact_in_every_tier() {
    let program = target_program();
    for tier in TIERS {
        for n in [1u64, 127, 1_000_003] {
            let mut run = Command::new(rv32vm());
            run.args([
                "run",
                "--stats",
                "--tier",
                tier,
                "--max-insns",
                &n.to_string(),
            ])
            .arg(&program)
            .arg("spin");
            let outcome = run_with_timeout(&mut run, Duration::from_secs(120)).expect("run");
            assert_eq!(
                outcome.status.and_then(|s| s.code()),
                Some(124),
                "{tier} {n}"
            );
            assert_eq!(retired(&outcome.stderr), n, "{tier}: --max-insns {n}");
        }
        let n = 3_000_017u64;
        let mut boot = Command::new(rv32vm());
        boot.args([
            "boot",
            "--stats",
            "--tier",
            tier,
            "--max-insns",
            &n.to_string(),
        ]);
        let outcome = run_with_timeout(&mut boot, Duration::from_secs(300)).expect("boot");
        assert_eq!(
            outcome.status.and_then(|s| s.code()),
            Some(124),
            "{tier}: {}",
            tail(&outcome.stderr, 10)
        );
        assert_eq!(retired(&outcome.stderr), n, "{tier}: boot --max-insns {n}");
    }
}

#[test]
fn bad_gdb_addresses_are_clear_errors() {
    let program = target_program();
    let busy = TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let busy_port = busy.local_addr().unwrap().port().to_string();
    for (address, says) in [
        ("notaport", "expected PORT or HOST:PORT"),
        ("127.0.0.1:99999", "expected PORT or HOST:PORT"),
        (busy_port.as_str(), "cannot listen"),
    ] {
        let mut run = Command::new(rv32vm());
        run.args(["run", "--gdb", address]).arg(&program);
        let outcome = run_with_timeout(&mut run, Duration::from_secs(60)).expect("run");
        assert_eq!(outcome.status.and_then(|s| s.code()), Some(1), "{address}");
        assert!(
            outcome.stderr.contains(says) && !outcome.stderr.contains("panicked"),
            "--gdb {address}: {}",
            outcome.stderr
        );
    }
}

/// `--timeout`, a signal and the quit key stop rv32vm even while it waits for gdb or gdb holds
/// the guest stopped (they once waited for gdb forever). The guest never runs here, so one
/// tier, the one every build has, is enough.
#[test]
fn host_stops_end_a_wait_for_gdb_and_a_halted_session() {
    // Nobody attaches: --timeout ends the wait with the timeout status.
    let started = Instant::now();
    let vm = Vm::start(&["boot", "--tier", "interp"], &["--timeout", "2"]);
    let (code, _, stderr) = vm.wait();
    assert_eq!(code, Some(124), "{stderr}");
    assert!(stderr.contains("timeout"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));

    // Nobody attaches: one SIGTERM ends the wait.
    let vm = Vm::start(&["boot", "--tier", "interp"], &[]);
    let pid = vm.child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(killed.is_ok_and(|s| s.success()));
    let (code, _, stderr) = vm.wait();
    assert_eq!(code, Some(143), "{stderr}");

    // A client halts the guest and then says nothing: --timeout still stops the machine.
    let vm = Vm::start(&["boot", "--tier", "interp"], &["--timeout", "3"]);
    let mut client = TcpStream::connect(("127.0.0.1", vm.port)).expect("connect to the stub");
    send_packet(&mut client, "?");
    let reply = read_packet(&mut client);
    assert!(reply.starts_with('T') || reply.starts_with('S'), "{reply}");
    let (code, _, stderr) = vm.wait();
    assert_eq!(code, Some(124), "{stderr}");
    drop(client);
}
