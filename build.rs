//! Build-time configuration: which tiers this build has. Tier 1 emits x86-64 code, so it exists
//! only on x86-64 hosts with the `t1` feature; tier 2 needs the `t2` feature (LLVM).
//!
//! Tier 2 does not link libLLVM: loading it (relocating its 1 300 C functions and thousands of
//! C++ ones, running its static constructors) took 11 ms of every run's start, tier 2 or not.
//! The build lists the C API functions the library exports, and `exec::t2::llvm_lib` gives
//! each a trampoline that jumps through a slot; the compile thread opens the library and fills
//! the slots in the background.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tier1)");
    println!("cargo::rustc-check-cfg=cfg(tier2)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if std::env::var_os("CARGO_FEATURE_T1").is_some() && arch == "x86_64" {
        println!("cargo::rustc-cfg=tier1");
    }
    if std::env::var_os("CARGO_FEATURE_T2").is_some() && arch == "x86_64" {
        println!("cargo::rustc-cfg=tier2");
        llvm_trampolines();
    }
}

/// The LLVM version llvm-sys (through inkwell's `llvm22-1` feature) is built for.
const LLVM_MAJOR: &str = "22";
/// llvm-sys's variable naming an LLVM installation's prefix.
const LLVM_PREFIX_VAR: &str = "LLVM_SYS_221_PREFIX";

/// Write `llvm_trampolines.s` (a trampoline per exported `LLVM*` function and the table of
/// slots they jump through) and `llvm_symbols.rs` (the names, in slot order) into OUT_DIR, and
/// set `RV32VM_LLVM_LIB` to the library's path.
fn llvm_trampolines() {
    println!("cargo::rerun-if-env-changed={LLVM_PREFIX_VAR}");
    let config = llvm_config().unwrap_or_else(|| {
        panic!(
            "tier 2 needs LLVM {LLVM_MAJOR}: no llvm-config-{LLVM_MAJOR} found \
             (apt-get install llvm-{LLVM_MAJOR}-dev, or set {LLVM_PREFIX_VAR})"
        )
    });
    let libdir = PathBuf::from(run(&config, &["--libdir"]).expect("llvm-config --libdir"));
    let library = std::fs::canonicalize(libdir.join("libLLVM.so"))
        .unwrap_or_else(|e| panic!("tier 2 needs {}/libLLVM.so: {e}", libdir.display()));
    println!("cargo::rerun-if-changed={}", library.display());
    println!("cargo::rustc-env=RV32VM_LLVM_LIB={}", library.display());
    let names = exported_c_functions(&library);
    assert!(
        names.iter().any(|n| n == "LLVMContextCreate"),
        "{} exports no LLVM C API",
        library.display()
    );

    let mut asm = String::new();
    let mut table = String::new();
    writeln!(asm, "    .text").unwrap();
    for (i, name) in names.iter().enumerate() {
        // The slot's index in %r11 serves the first call, which finds the slot still
        // pointing at the loader (see exec/t2/llvm_lib.rs).
        writeln!(
            asm,
            "    .p2align 4\n    .globl {name}\n    .hidden {name}\n    .type {name},@function\n\
             {name}:\n    movl ${i}, %r11d\n    jmp *rv32vm_llvm_slots+{}(%rip)\n    .size {name}, .-{name}",
            i * 8
        )
        .unwrap();
        writeln!(table, "    c\"{name}\",").unwrap();
    }
    writeln!(
        asm,
        "    .data\n    .p2align 3\n    .globl rv32vm_llvm_slots\n    .hidden rv32vm_llvm_slots\n\
         rv32vm_llvm_slots:\n    .rept {}\n    .quad rv32vm_llvm_first_call\n    .endr\n    .text",
        names.len()
    )
    .unwrap();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("llvm_trampolines.s"), asm).expect("write llvm_trampolines.s");
    std::fs::write(
        out.join("llvm_symbols.rs"),
        format!(
            "/// The C API functions of libLLVM, in the order of their slots.\n\
             pub(super) static LLVM_FUNCTIONS: [&std::ffi::CStr; {}] = [\n{table}];\n",
            names.len()
        ),
    )
    .expect("write llvm_symbols.rs");
}

/// llvm-config for LLVM 22, as llvm-sys finds it: under `$LLVM_SYS_221_PREFIX`, else
/// `llvm-config-22` or `llvm-config` on the PATH, whichever reports version 22.
fn llvm_config() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os(LLVM_PREFIX_VAR) {
        Some(prefix) => vec![Path::new(&prefix).join("bin/llvm-config")],
        None => vec![
            format!("llvm-config-{LLVM_MAJOR}").into(),
            "llvm-config".into(),
        ],
    };
    candidates
        .into_iter()
        .find(|c| run(c, &["--version"]).is_some_and(|v| v.starts_with(&format!("{LLVM_MAJOR}."))))
}

/// `program args`'s standard output, trimmed, if it ran and succeeded.
fn run(program: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The functions `library` exports whose names start with `LLVM` (the C API; C++ names are
/// mangled), sorted. `nm` comes with the C toolchain llvm-sys already needs.
fn exported_c_functions(library: &Path) -> Vec<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(library)
        .output()
        .unwrap_or_else(|e| panic!("tier 2's build runs nm (binutils): {e}"));
    assert!(
        out.status.success(),
        "nm -D {}: {}",
        library.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (_address, kind, versioned) = (fields.next()?, fields.next()?, fields.next()?);
            // `LLVMFoo@@LLVM_22.1`: the default version, which `dlsym` finds by name.
            let name = versioned.split('@').next()?;
            let c_name = name.starts_with("LLVM")
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            (kind == "T" && c_name).then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}
