//! Build-time configuration: which tiers this build has. Tier 1 emits x86-64 code, so it exists
//! only on x86-64 hosts with the `t1` feature; tier 2 needs the `t2` feature (LLVM).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tier1)");
    println!("cargo::rustc-check-cfg=cfg(tier2)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if std::env::var_os("CARGO_FEATURE_T1").is_some() && arch == "x86_64" {
        println!("cargo::rustc-cfg=tier1");
    }
    if std::env::var_os("CARGO_FEATURE_T2").is_some() && arch == "x86_64" {
        println!("cargo::rustc-cfg=tier2");
    }
}
