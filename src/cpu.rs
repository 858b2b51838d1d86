//! Which SIMD engines this CPU (and this build) can run.
//!
//! - x86_64 with `std`: `is_x86_feature_detected!` once, the answer cached as a level in an `AtomicU8`
//!   (a level, not function pointers: statics inside generic functions are shared by all their
//!   instantiations, so one cached pointer could not serve every element type).
//! - x86_64 without `std`: what the build enables at compile time (`-C target-feature=+avx2,+f16c,+popcnt`
//!   or `+avx512f,+avx512bw,+popcnt`, or a `target-cpu` such as `x86-64-v3`); no CPUID probing.
//!
//! Both x86 engines also use POPCNT, and the AVX2 one F16C (f16 lanes converted to f32): every AVX2 CPU
//! has both, but `+avx2` alone enables neither.
//! - aarch64: NEON is part of the baseline of every aarch64 target Rust ships with `neon` enabled, so
//!   the compile-time `cfg(target_feature = "neon")` decides.
//! - under miri, or on any other architecture: no SIMD at all.

/// AVX2, F16C and POPCNT (the `avx2` engine).
const AVX2: u8 = 1;
/// AVX-512F, AVX-512BW and POPCNT (the `avx512` engine).
const AVX512: u8 = 2;
/// NEON (the `neon` engine).
#[allow(dead_code)] // set on aarch64 only
const NEON: u8 = 4;

/// Whether the AVX2 engine can run here.
#[allow(dead_code)] // used where its engine is compiled, and by the tests
pub(crate) fn has_avx2() -> bool {
    level() & AVX2 != 0
}

/// Whether the AVX-512 engine can run here.
#[allow(dead_code)] // used where its engine is compiled, and by the tests
pub(crate) fn has_avx512() -> bool {
    level() & AVX512 != 0
}

/// Whether the NEON engine can run here.
#[allow(dead_code)] // used where its engine is compiled, and by the tests
pub(crate) fn has_neon() -> bool {
    level() & NEON != 0
}

#[cfg(all(target_arch = "x86_64", feature = "std", not(miri)))]
fn level() -> u8 {
    use core::sync::atomic::{AtomicU8, Ordering};
    /// The detected level with bit 7 set, or 0 before the first detection.
    static LEVEL: AtomicU8 = AtomicU8::new(0);
    const KNOWN: u8 = 0x80;
    let cached = LEVEL.load(Ordering::Relaxed);
    if cached & KNOWN != 0 {
        return cached;
    }
    let mut level = KNOWN;
    // POPCNT comes with both (the prefix bound counts mask bits); every such CPU has it.
    let popcnt = std::is_x86_feature_detected!("popcnt");
    // Every AVX2 CPU has F16C; the AVX2 engine converts f16 lanes with it.
    if popcnt && std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("f16c") {
        level |= AVX2;
    }
    if popcnt && std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw") {
        level |= AVX512;
    }
    // Racing threads store the same value.
    LEVEL.store(level, Ordering::Relaxed);
    level
}

#[cfg(all(target_arch = "x86_64", not(feature = "std"), not(miri)))]
fn level() -> u8 {
    let mut level = 0;
    let popcnt = cfg!(target_feature = "popcnt");
    if popcnt && cfg!(target_feature = "avx2") && cfg!(target_feature = "f16c") {
        level |= AVX2;
    }
    if popcnt && cfg!(target_feature = "avx512f") && cfg!(target_feature = "avx512bw") {
        level |= AVX512;
    }
    level
}

#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri)))]
fn level() -> u8 {
    NEON
}

#[cfg(not(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_feature = "neon", not(miri))
)))]
fn level() -> u8 {
    0
}

#[cfg(test)]
mod tests {
    #[test]
    fn detection_is_stable_and_consistent() {
        let first = (super::has_avx2(), super::has_avx512(), super::has_neon());
        assert_eq!(first, (super::has_avx2(), super::has_avx512(), super::has_neon()));
        #[cfg(all(target_arch = "x86_64", feature = "std", not(miri)))]
        assert_eq!(
            first.1,
            std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("popcnt")
        );
        #[cfg(all(target_arch = "aarch64", not(miri)))]
        assert!(first.2, "every aarch64 target Rust ships has NEON");
        #[cfg(miri)]
        assert_eq!(first, (false, false, false));
    }
}
