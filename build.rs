//! Build-time configuration: which tiers this build has. Tier 1 emits x86-64 code, so it exists
//! only on x86-64 hosts with the `t1` feature; tier 2 needs the `t2` feature (LLVM).
//!
//! Tier 2 does not link libLLVM: loading it (relocating its 1 300 C functions and thousands of
//! C++ ones, running its static constructors) took 11 ms of every run's start, tier 2 or not.
//! The build lists the C API functions the library exports, and `exec::t2::llvm_lib` gives
//! each a trampoline that jumps through a slot; the compile thread opens the library and fills
//! the slots in the background. Which library it opens: one linked here from LLVM's static
//! libraries with only tier 2's components (`tier2_library`), if LLVM has them; else
//! libLLVM.so.

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
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    match tier2_library(&config, &names, &out) {
        Ok(path) => println!("cargo::rustc-env=RV32VM_LLVM_TIER2_LIB={}", path.display()),
        Err(e) => println!(
            "cargo::warning=tier 2 will load all of {} (slower to start): {e}",
            library.display()
        ),
    }

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

/// The LLVM components tier 2 uses: IR, the optimisation pipeline, x86-64 code generation to
/// object files and the assembly parser (regions hold inline assembly: exec/t2/codegen.rs);
/// llvm-config adds what they depend on.
const TIER2_COMPONENTS: &[&str] = &[
    "core",
    "passes",
    "x86codegen",
    "x86asmparser",
    "x86desc",
    "x86info",
    "target",
];

/// Link `librv32vm-llvm.so` into `out` from LLVM's static libraries: tier 2's components only,
/// exporting the C API functions among `exported` that they define and nothing else, so its
/// own references bind at link time. `dlopen` of libLLVM.so takes 14-19 ms (25 000 symbol
/// lookups for its C++ references, and fifteen libraries it needs, ICU and Z3 among them);
/// of this one 3-4 ms. An error (no static libraries, a link failure) leaves tier 2 on
/// libLLVM.so.
fn tier2_library(config: &Path, exported: &[String], out: &Path) -> Result<PathBuf, String> {
    let mut args = vec!["--link-static", "--libfiles"];
    args.extend(TIER2_COMPONENTS);
    let archives: Vec<PathBuf> = run(config, &args)
        .ok_or("llvm-config --link-static --libfiles failed (no static libraries?)")?
        .split_whitespace()
        .map(PathBuf::from)
        .collect();
    if let Some(missing) = archives.iter().find(|a| !a.exists()) {
        return Err(format!("no {}", missing.display()));
    }
    let defined = archive_functions(&archives)?;
    let kept: Vec<&String> = exported.iter().filter(|n| defined.contains(*n)).collect();
    let mut version_script = String::from("{\n  global:\n");
    let mut pull_in = String::new();
    for name in &kept {
        writeln!(version_script, "    {name};").unwrap();
        // -u makes the linker take the archive member that defines `name`.
        writeln!(pull_in, "-Wl,-u,{name}").unwrap();
    }
    version_script.push_str("  local: *;\n};\n");
    let script_path = out.join("librv32vm-llvm.map");
    let pull_in_path = out.join("librv32vm-llvm.args");
    std::fs::write(&script_path, version_script).map_err(|e| e.to_string())?;
    std::fs::write(&pull_in_path, pull_in).map_err(|e| e.to_string())?;

    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let system_libs = run(config, &["--link-static", "--system-libs"]).unwrap_or_default();
    let library = out.join("librv32vm-llvm.so");
    let output = Command::new(&compiler)
        .args(["-shared", "-s", "-o"])
        .arg(&library)
        // Every reference resolved here (a missing one fails the build, not a later dlopen);
        // unreferenced sections dropped.
        .args([
            "-Wl,-z,defs",
            "-Wl,--gc-sections",
            "-Wl,-O1",
            "-Wl,--as-needed",
        ])
        .arg(format!("-Wl,--version-script={}", script_path.display()))
        .arg(format!("@{}", pull_in_path.display()))
        .arg("-Wl,--start-group")
        .args(&archives)
        .arg("-Wl,--end-group")
        .args(
            system_libs
                .split_whitespace()
                .filter_map(|l| shared_library(&compiler, l)),
        )
        .args(["-lstdc++", "-lm"])
        .output()
        .map_err(|e| format!("cannot run {compiler}: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().find(|l| l.contains("error")).unwrap_or("");
        return Err(format!("linking {} failed: {first}", library.display()));
    }
    Ok(library)
}

/// The `LLVM*` functions the archives define.
fn archive_functions(archives: &[PathBuf]) -> Result<std::collections::HashSet<String>, String> {
    let out = Command::new("nm")
        .args(["--defined-only", "--format=posix"])
        .args(archives)
        .output()
        .map_err(|e| format!("cannot run nm: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (name, kind) = (fields.next()?, fields.next()?);
            (kind == "T" && name.starts_with("LLVM")).then(|| name.to_string())
        })
        .collect())
}

/// A linker argument for one of llvm-config's system libraries: a path as it is; `-lNAME` as
/// it is if the development link `libNAME.so` exists, else the runtime library
/// `libNAME.so.N` by its path (Debian ships libzstd.so only in libzstd-dev), else nothing
/// (`-z defs` reports a reference nothing resolves).
fn shared_library(compiler: &str, arg: &str) -> Option<String> {
    let Some(name) = arg.strip_prefix("-l") else {
        return Path::new(arg).exists().then(|| arg.to_string());
    };
    let found = |file: &str| {
        run(Path::new(compiler), &[&format!("-print-file-name={file}")])
            .filter(|p| Path::new(p).is_absolute())
    };
    if found(&format!("lib{name}.so")).is_some() {
        return Some(arg.to_string());
    }
    (0..10).find_map(|version| found(&format!("lib{name}.so.{version}")))
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
