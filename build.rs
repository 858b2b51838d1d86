//! Names the target conditions the kernel crate's `cfg`s test, once:
//! - `simd_x86`: the AVX2 and AVX-512 engines are compiled (x86_64, not under miri);
//! - `simd_arm`: the NEON engine is compiled (aarch64 with NEON, not under miri);
//! - `simd`: either of them;
//! - `simd_arch`: the target is one of those architectures, miri or not: the paths that pay only next
//!   to SIMD engines (tiles of short rows, a candidate buffer per lane) are compiled there alone, and
//!   stay out of a microcontroller's flash.

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(simd_x86, simd_arm, simd, simd_arch)");
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let features = env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let has = |feature: &str| features.split(',').any(|f| f == feature);
    let miri = env::var_os("CARGO_CFG_MIRI").is_some();
    let x86 = arch == "x86_64" && has("sse2") && !miri;
    let arm = arch == "aarch64" && has("neon") && !miri;
    for (name, on) in [
        ("simd_x86", x86),
        ("simd_arm", arm),
        ("simd", x86 || arm),
        ("simd_arch", arch == "x86_64" || arch == "aarch64"),
    ] {
        if on {
            println!("cargo::rustc-cfg={name}");
        }
    }
}
