//! Which SIMD engines this CPU (and this build) can run, and the tokens that prove it.
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
//!
//! With `std`, the environment variable `TOPK_MAX_ISA` caps what is found, read once with it: `avx2`
//! leaves AVX-512 out, `portable` every SIMD engine (other values change nothing). `Backend::Auto` and
//! each engine's availability follow: a runtime can pin one kernel across a fleet, and the test command
//! runs the suite with dispatch forced to each engine this CPU has.

/// AVX2, F16C and POPCNT (the `avx2` engine).
const AVX2: u8 = 1;
/// AVX-512F, AVX-512BW and POPCNT (the `avx512` engine).
const AVX512: u8 = 2;
/// NEON (the `neon` engine).
#[allow(dead_code)] // set on aarch64 only
const NEON: u8 = 4;
/// Not an engine: an AMD CPU ([`Facts::amd`]).
#[allow(dead_code)] // set on x86_64 with `std` only
const AMD: u8 = 8;
/// Not an engine: an AMD CPU of family 0x1A or later ([`Facts::zen5`]).
#[allow(dead_code)] // set on x86_64 with `std` only
const ZEN5: u8 = 16;
/// Not an engine: an AMD CPU of family 0x19 with AVX-512 ([`Facts::zen4`]).
#[allow(dead_code)] // set on x86_64 with `std` only
const ZEN4: u8 = 32;

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

/// The CPU facts a strategy's choice depends on, beside the engines it has: a few of its tunings are
/// per vendor and family (`dispatch::strategy` says which and why). Without `std` all are false (no
/// CPUID probing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Facts {
    /// An AMD CPU.
    pub(crate) amd: bool,
    /// AMD family 0x19 with AVX-512 (Zen 4), whose 512-bit operations run as two halves.
    pub(crate) zen4: bool,
    /// AMD family 0x1A or later (Zen 5).
    pub(crate) zen5: bool,
}

/// This CPU's [`Facts`]. Inlined: the cached case is one load.
#[inline(always)]
pub(crate) fn facts() -> Facts {
    let level = level();
    Facts {
        amd: level & AMD != 0,
        zen4: level & ZEN4 != 0,
        zen5: level & ZEN5 != 0,
    }
}

/// Proof that this CPU has AVX2, F16C and POPCNT: only [`Avx2::new`] makes one, and the AVX2 engine's
/// methods (`arch::x86_64::avx2`) call its `#[target_feature]` code on the strength of it.
#[cfg(simd_x86)]
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

#[cfg(simd_x86)]
impl Avx2 {
    /// The token, if the CPU (and the build, without `std`) has AVX2, F16C and POPCNT.
    pub(crate) fn new() -> Option<Self> {
        has_avx2().then_some(Avx2(()))
    }
}

/// Proof that this CPU has AVX-512F, AVX-512BW and POPCNT: only [`Avx512::new`] makes one (its engine
/// is `arch::x86_64::avx512`).
#[cfg(simd_x86)]
#[derive(Clone, Copy)]
pub(crate) struct Avx512(());

#[cfg(simd_x86)]
impl Avx512 {
    /// The token, if the CPU (and the build, without `std`) has AVX-512F, AVX-512BW and POPCNT.
    pub(crate) fn new() -> Option<Self> {
        has_avx512().then_some(Avx512(()))
    }
}

/// Proof that this target has NEON: only [`Neon::new`] makes one (its engine is `arch::aarch64::neon`).
#[cfg(simd_arm)]
#[derive(Clone, Copy)]
pub(crate) struct Neon(());

#[cfg(simd_arm)]
impl Neon {
    /// The token, if the target has NEON.
    pub(crate) fn new() -> Option<Self> {
        has_neon().then_some(Neon(()))
    }
}

/// The level with bit 7 set ([`KNOWN`]), or 0 before the first detection.
#[cfg(all(feature = "std", not(miri)))]
static LEVEL: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// Marks [`LEVEL`] as detected.
#[cfg(all(feature = "std", not(miri)))]
const KNOWN: u8 = 0x80;

/// The level, detected once and cached in std builds; known at compile time otherwise. Inlined, so
/// that the cached case is one load: the strategy reads [`facts`] for each run of rows.
#[cfg(all(feature = "std", not(miri)))]
#[inline(always)]
fn level() -> u8 {
    let cached = LEVEL.load(core::sync::atomic::Ordering::Relaxed);
    if cached & KNOWN != 0 {
        return cached & !KNOWN;
    }
    first_level()
}

/// Detects the level and caches it.
#[cfg(all(feature = "std", not(miri)))]
#[cold]
#[inline(never)]
fn first_level() -> u8 {
    let level = capped(detected(), std::env::var("TOPK_MAX_ISA").ok().as_deref());
    // Racing threads store the same value.
    LEVEL.store(level | KNOWN, core::sync::atomic::Ordering::Relaxed);
    level
}

#[cfg(not(all(feature = "std", not(miri))))]
fn level() -> u8 {
    detected()
}

/// `level` without the engines above `max_isa` (the `TOPK_MAX_ISA` environment variable): `avx2` takes
/// AVX-512 away, `portable` every SIMD engine; anything else changes nothing. What `Backend::Auto`
/// resolves to follows, and so does the availability of each engine: runtimes use it to pin a kernel
/// across machines, the tests to run the whole suite with dispatch forced to each engine.
#[cfg_attr(not(all(feature = "std", not(miri))), allow(dead_code))] // std builds and the tests
fn capped(level: u8, max_isa: Option<&str>) -> u8 {
    match max_isa {
        Some("avx2") => level & !AVX512,
        Some("portable") => level & (AMD | ZEN4 | ZEN5),
        _ => level,
    }
}

#[cfg(all(target_arch = "x86_64", feature = "std", not(miri)))]
fn detected() -> u8 {
    let mut level = 0;
    // POPCNT comes with both (the prefix bound counts mask bits); every such CPU has it.
    let popcnt = std::is_x86_feature_detected!("popcnt");
    // Every AVX2 CPU has F16C; the AVX2 engine converts f16 lanes with it.
    if popcnt && std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("f16c") {
        level |= AVX2;
    }
    if popcnt && std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw") {
        level |= AVX512;
    }
    // Leaf 0's vendor string, "AuthenticAMD", in EBX, EDX, ECX.
    // SAFETY: every x86_64 CPU has CPUID, and leaf 0 exists on all of them. (Safe itself from Rust
    // 1.94; the crate's MSRV is older.)
    #[allow(unused_unsafe)]
    let vendor = unsafe { std::arch::x86_64::__cpuid(0) };
    if [vendor.ebx, vendor.edx, vendor.ecx] == [0x6874_7541, 0x6974_6e65, 0x444d_4163] {
        level |= AMD;
        // Leaf 1's family: the base family (bits 8-11), plus the extended one (bits 20-27) where the base
        // is 0xF.
        // SAFETY: as above; leaf 1 exists on every x86_64 CPU.
        #[allow(unused_unsafe)]
        let signature = unsafe { std::arch::x86_64::__cpuid(1) }.eax;
        let base = (signature >> 8) & 0xF;
        let family = if base == 0xF {
            base + ((signature >> 20) & 0xFF)
        } else {
            base
        };
        if family >= 0x1A {
            level |= ZEN5;
        } else if family == 0x19 && level & AVX512 != 0 {
            level |= ZEN4;
        }
    }
    level
}

#[cfg(all(target_arch = "x86_64", not(feature = "std"), not(miri)))]
fn detected() -> u8 {
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

#[cfg(simd_arm)]
fn detected() -> u8 {
    NEON
}

#[cfg(not(any(all(target_arch = "x86_64", not(miri)), simd_arm)))]
fn detected() -> u8 {
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
                && !matches!(std::env::var("TOPK_MAX_ISA").as_deref(), Ok("avx2" | "portable"))
        );
        #[cfg(all(target_arch = "aarch64", feature = "std", not(miri)))]
        assert_eq!(first.2, std::env::var("TOPK_MAX_ISA").as_deref() != Ok("portable"));
        #[cfg(miri)]
        assert_eq!(first, (false, false, false));
        // The family is read only for AMD's vendor string.
        let facts = super::facts();
        assert!(!facts.zen5 || facts.amd);
        assert!(!facts.zen4 || facts.amd);
    }

    #[test]
    fn the_cap_takes_away_the_engines_above_it() {
        use super::{AMD, AVX2, AVX512, NEON, ZEN4, ZEN5, capped};
        let all = AVX2 | AVX512;
        assert_eq!(capped(all, None), all);
        assert_eq!(capped(all, Some("avx512")), all);
        assert_eq!(capped(all, Some("avx2")), AVX2);
        assert_eq!(capped(AVX2, Some("avx2")), AVX2);
        assert_eq!(capped(all, Some("portable")), 0);
        assert_eq!(capped(NEON, Some("portable")), 0);
        // The vendor and its family are not engines: no cap takes them away.
        assert_eq!(capped(all | AMD | ZEN5, Some("portable")), AMD | ZEN5);
        assert_eq!(capped(all | AMD | ZEN5, Some("avx2")), AVX2 | AMD | ZEN5);
        assert_eq!(capped(all | AMD | ZEN4, Some("portable")), AMD | ZEN4);
        assert_eq!(capped(NEON, Some("avx2")), NEON);
        assert_eq!(
            capped(all, Some("AVX2")),
            all,
            "names are the backends' names, lower case"
        );
    }
}
