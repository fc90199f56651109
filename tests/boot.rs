//! Boot the bundled Linux (images/Image + images/initramfs.cpio.gz) headless under every tier,
//! with the built-in SBI and with OpenSBI (`--bios images/fw_dynamic.bin`), drive the shell on
//! stdin/stdout, and check the guest's exit status.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

const PROMPT: &str = "root@rv32vm:~# ";
// Generous: under `--tier t2` every region goes through LLVM before it runs (a boot without
// the code cache costs about 15 s of CPU, more on a loaded machine).
const STEP_TIMEOUT: Duration = Duration::from_secs(300);

fn images() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("images")
}

/// The bundled kernel and initramfs, booted with `extra` arguments, on a console.
struct Console(common::console::Console);

impl Console {
    fn boot(extra: &[&str]) -> Console {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rv32vm"));
        command
            .arg("boot")
            .arg("--kernel")
            .arg(images().join("Image"))
            .arg("--initrd")
            .arg(images().join("initramfs.cpio.gz"))
            .args(["--timeout", "900"])
            .args(extra);
        Console(common::console::Console::spawn(&mut command))
    }

    /// Wait until `pattern` appears after what was already consumed; return the text up to and
    /// including it.
    fn expect(&mut self, pattern: &str) -> String {
        self.0.expect_within(pattern, STEP_TIMEOUT)
    }

    fn send(&mut self, line: &str) {
        self.0.send(line);
    }

    /// Run a shell command and return what it printed (without the echoed command line).
    fn run(&mut self, command: &str) -> String {
        self.send(command);
        let text = self.expect(PROMPT);
        let body = text.trim_end_matches(PROMPT);
        body.split_once('\n')
            .map_or("", |(_, rest)| rest)
            .replace('\r', "")
    }

    fn wait_exit(self) -> i32 {
        let status = self.0.wait_exit_within(STEP_TIMEOUT);
        status.code().expect("rv32vm exited by a signal")
    }
}

fn boot_and_check(extra: &[&str]) {
    let mut vm = Console::boot(extra);
    vm.expect(PROMPT);
    let uname = vm.run("uname -a");
    assert!(uname.contains("riscv32 GNU/Linux"), "uname: {uname}");
    let cksum = vm.run("/bin/cksum-test");
    assert!(
        cksum.contains("crc32=0616b8a4") && cksum.contains("self-check ok"),
        "cksum-test: {cksum}"
    );
    let md5 = vm.run("echo hello > /tmp/f && md5sum /tmp/f");
    assert!(
        md5.starts_with("b1946ac92492d2347c6235b4d2611184  /tmp/f"),
        "md5sum: {md5}"
    );
    vm.send("poweroff -f");
    assert_eq!(vm.wait_exit(), 0, "poweroff must exit 0");
}

#[test]
fn linux_boots_to_a_shell_with_the_builtin_sbi() {
    for tier in common::TIERS {
        boot_and_check(&["--tier", tier]);
    }
}

#[test]
fn linux_boots_to_a_shell_with_opensbi() {
    let bios = images().join("fw_dynamic.bin");
    for tier in common::TIERS {
        boot_and_check(&["--tier", tier, "--bios", bios.to_str().unwrap()]);
    }
}

#[test]
fn guest_exit_status_reaches_the_host() {
    let mut vm = Console::boot(&[]);
    vm.expect(PROMPT);
    vm.send("vm-exit 3");
    assert_eq!(vm.wait_exit(), 3);
}

#[test]
fn guest_reboot_restarts_the_machine() {
    let mut vm = Console::boot(&[]);
    vm.expect(PROMPT);
    vm.send("reboot -f");
    vm.expect("Run /init as init process");
    vm.expect(PROMPT);
    vm.send("vm-exit 5");
    assert_eq!(vm.wait_exit(), 5);
}

/// `--no-reboot` (QEMU's `-no-reboot`): a guest reset ends the run with status 0 instead of
/// booting the guest again, as a test kernel that reboots when it is done (`panic=-1`) needs.
#[test]
fn no_reboot_exits_when_the_guest_resets() {
    let output = Command::new(env!("CARGO_BIN_EXE_rv32vm"))
        .arg("boot")
        .arg("--kernel")
        .arg(images().join("Image"))
        .arg("--initrd")
        .arg(images().join("initramfs.cpio.gz"))
        .args(["--no-reboot", "--timeout", "300"])
        .args(["--expect", PROMPT, "--send", "echo resetting; reboot -f"])
        .stdin(Stdio::null())
        .output()
        .expect("run rv32vm");
    let console = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "status; console tail:\n{}",
        common::tail(&console, 20)
    );
    assert!(
        console.contains("\nresetting"),
        "{}",
        common::tail(&console, 20)
    );
    assert_eq!(
        console.matches("Linux version").count(),
        1,
        "booted again:\n{}",
        common::tail(&console, 20)
    );
}

/// `console=hvc0`: the shell's console is the SBI's (Linux's `hvc_riscv_sbi` reads through
/// DBCN or the legacy `console_getchar`). The built-in SBI reads the UART as OpenSBI does, so
/// typed commands reach the guest with either firmware; before, the built-in SBI gave no input.
#[test]
fn the_sbi_console_takes_input_with_either_firmware() {
    let opensbi = images().join("fw_dynamic.bin");
    for bios in ["builtin", opensbi.to_str().unwrap()] {
        let mut vm = Console::boot(&["--bios", bios, "--append", "console=hvc0"]);
        vm.expect(PROMPT);
        let tty = vm.run("tty; echo typed $((6 * 7))");
        assert!(
            tty.contains("/dev/console") || tty.contains("hvc0"),
            "{bios}: {tty}"
        );
        assert!(tty.contains("typed 42"), "{bios}: {tty}");
        vm.send("vm-exit 4");
        assert_eq!(vm.wait_exit(), 4, "{bios}");
    }
}

/// `--dtb` with `--append` and `--initrd`: the tree the user gives (here one rv32vm dumped for
/// a machine without an initrd) gets the command line and the initrd range in /chosen, as
/// QEMU does, so Linux finds its initramfs and sees the marker in /proc/cmdline.
#[test]
fn user_dtb_gets_the_command_line_and_initrd() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/boot-tests");
    std::fs::create_dir_all(&dir).expect("create target/boot-tests");
    let dtb = dir.join("no-initrd.dtb");
    // A run that stops at once: only the dumped tree matters.
    let out = Command::new(env!("CARGO_BIN_EXE_rv32vm"))
        .arg("boot")
        .arg("--kernel")
        .arg(images().join("Image"))
        .arg("--dump-dtb")
        .arg(&dtb)
        .args(["--timeout", "0"])
        .stdin(Stdio::null())
        .output()
        .expect("run rv32vm");
    assert_eq!(out.status.code(), Some(124), "{out:?}");
    let blob = std::fs::read(&dtb).expect("dumped tree");
    let tree = fdt::Fdt::new(&blob).expect("a valid tree");
    let chosen = tree.find_node("/chosen").expect("/chosen");
    assert!(chosen.property("linux,initrd-start").is_none());
    for tier in common::TIERS {
        let marker = format!("rv32vm.marker=dtb-{tier}");
        let append = format!("console=ttyS0 {marker}");
        let mut vm = Console::boot(&[
            "--tier",
            tier,
            "--dtb",
            dtb.to_str().unwrap(),
            "--append",
            &append,
        ]);
        vm.expect(PROMPT);
        let cmdline = vm.run("cat /proc/cmdline");
        assert!(
            cmdline.contains(&marker),
            "tier {tier}: /proc/cmdline: {cmdline}"
        );
        vm.send("poweroff -f");
        assert_eq!(vm.wait_exit(), 0, "tier {tier}");
    }
}

/// The code cache across boots: a second `--tier t2` boot (a region at every block:
/// `--t2-threshold 0`) with the same cache directory loads
/// most of its regions (where interrupts land differs from boot to boot, so some plans are
/// new) and runs the shell as the first did.
#[cfg(all(feature = "t2", target_arch = "x86_64"))]
#[test]
fn a_second_t2_boot_loads_its_regions_from_the_code_cache() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/boot-tests")
        .join(format!("code-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let boot = || {
        let out = Command::new(env!("CARGO_BIN_EXE_rv32vm"))
            .arg("boot")
            .arg("--kernel")
            .arg(images().join("Image"))
            .arg("--initrd")
            .arg(images().join("initramfs.cpio.gz"))
            .args(common::tier_args("t2"))
            .args(["--stats", "--timeout", "900", "--code-cache"])
            .arg(&dir)
            .args(["--expect", PROMPT, "--send", "/bin/cksum-test; poweroff -f"])
            .stdin(Stdio::null())
            .output()
            .expect("run rv32vm");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
        assert!(
            stdout.contains("crc32=0616b8a4") && stdout.contains("self-check ok"),
            "cksum-test: {stdout}"
        );
        // "regions installed   N (B blocks, I instructions; R from the region cache, D from
        // the code cache)"
        let line = stderr
            .lines()
            .find(|l| l.trim().starts_with("regions installed"))
            .unwrap_or_else(|| panic!("no tier-2 stats:\n{stderr}"))
            .to_string();
        let number = |s: &str| -> u64 {
            s.split_whitespace()
                .find_map(|w| w.trim_start_matches('(').parse().ok())
                .unwrap_or_else(|| panic!("no number in `{s}`"))
        };
        let installed = number(&line);
        let from_disk = number(line.rsplit(", ").next().expect("code cache count"));
        (installed, from_disk)
    };
    let (first, first_loaded) = boot();
    assert_eq!(first_loaded, 0, "an empty cache served regions");
    assert!(first > 1000, "a boot installed only {first} regions");
    let (second, loaded) = boot();
    assert!(
        loaded * 10 >= second * 8,
        "the second boot loaded only {loaded} of its {second} regions"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
