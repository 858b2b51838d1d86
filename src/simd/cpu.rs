//! Which SIMD engines this CPU (and this build) can run, and the tokens that prove it.
//!
//! - x86_64, with or without `std`: CPUID and XGETBV once (`core::arch`, no `std` needed), the answer
//!   cached as a level in an `AtomicU8` (a level, not function pointers: statics inside generic
//!   functions are shared by all their instantiations, so one cached pointer could not serve every
//!   element type). An engine counts only if the CPU has its instructions *and* the operating system
//!   saves their registers (XCR0): a kernel or hypervisor that leaves the YMM or ZMM state out gets the
//!   engines below it. What the build enables at compile time (`-C target-cpu=x86-64-v3` or `-v4`, or
//!   `-C target-feature=...`) counts as found, since such a build already assumes it everywhere. The
//!   engines themselves are compiled where SSE2 is enabled, which every hosted x86_64 target has and
//!   `x86_64-unknown-none` (a soft-float ABI) has not; detection runs there too, for the flags below.
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
#[allow(dead_code)] // set on x86_64 only
const AMD: u8 = 8;
/// Not an engine: an AMD CPU of family 0x1A or later ([`Facts::zen5`]).
#[allow(dead_code)] // set on x86_64 only
const ZEN5: u8 = 16;
/// Not an engine: an AMD CPU of family 0x19 with AVX-512 ([`Facts::zen4`]).
#[allow(dead_code)] // set on x86_64 only
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
/// per vendor and family (`dispatch::strategy` says which and why). All false but on x86_64, where
/// CPUID tells.
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
    /// The token, if the CPU has AVX2, F16C and POPCNT, and the OS saves the YMM registers.
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
    /// The token, if the CPU has AVX-512F, AVX-512BW and POPCNT, and the OS saves the ZMM registers.
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
#[cfg(all(any(target_arch = "x86_64", feature = "std"), not(miri)))]
static LEVEL: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// Marks [`LEVEL`] as detected.
#[cfg(all(any(target_arch = "x86_64", feature = "std"), not(miri)))]
const KNOWN: u8 = 0x80;

/// The level, detected once and cached where it is found at run time (x86_64's CPUID, and `std`'s
/// `TOPK_MAX_ISA`). Inlined, so that the cached case is one load: the strategy reads [`facts`] for
/// each run of rows.
#[cfg(all(any(target_arch = "x86_64", feature = "std"), not(miri)))]
#[inline(always)]
fn level() -> u8 {
    let cached = LEVEL.load(core::sync::atomic::Ordering::Relaxed);
    if cached & KNOWN != 0 {
        return cached & !KNOWN;
    }
    first_level()
}

/// Detects the level and caches it.
#[cfg(all(any(target_arch = "x86_64", feature = "std"), not(miri)))]
#[cold]
#[inline(never)]
fn first_level() -> u8 {
    #[cfg(feature = "std")]
    let level = capped(detected(), std::env::var("TOPK_MAX_ISA").ok().as_deref());
    #[cfg(not(feature = "std"))]
    let level = detected();
    // Racing threads store the same value.
    LEVEL.store(level | KNOWN, core::sync::atomic::Ordering::Relaxed);
    level
}

/// A constant elsewhere (aarch64 without `std`, 32-bit Arm, miri): nothing to cache, and a firmware
/// build keeps no load in its loops.
#[cfg(not(all(any(target_arch = "x86_64", feature = "std"), not(miri))))]
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

/// What CPUID and XGETBV report, plus what the build enables at compile time.
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn detected() -> u8 {
    use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
    let bit = |word: u32, n: u32| (word >> n) & 1 != 0;
    // SAFETY: every x86_64 CPU has CPUID, and leaves 0 and 1 exist on all of them. (Safe itself from
    // Rust 1.94; the crate's MSRV is older.)
    #[allow(unused_unsafe)]
    let (leaf_0, leaf_1) = unsafe { (__cpuid(0), __cpuid(1)) };
    // Leaf 7 (structured extended features) exists where leaf 0 says the CPU has that many.
    let leaf_7_ebx = if leaf_0.eax >= 7 {
        // SAFETY: as above; leaf 7 exists on this CPU.
        #[allow(unused_unsafe)]
        let leaf_7 = unsafe { __cpuid_count(7, 0) };
        leaf_7.ebx
    } else {
        0
    };
    // Registers the OS saves on a context switch (XCR0), readable where it set CR4.OSXSAVE (leaf 1,
    // ECX bit 27). Without that, AVX instructions fault or lose state whatever CPUID says.
    let xcr0 = if bit(leaf_1.ecx, 27) {
        // SAFETY: OSXSAVE says the OS enabled XSAVE, so XGETBV exists and reads XCR0 without faulting.
        unsafe { _xgetbv(0) }
    } else {
        0
    };
    // SSE and AVX state (bits 1, 2); then the opmask, and both halves of the ZMM registers (bits 5-7).
    let ymm = xcr0 & 0b110 == 0b110;
    let zmm = ymm && xcr0 & 0b1110_0000 == 0b1110_0000;
    // POPCNT comes with both (the prefix bound counts mask bits); every such CPU has it.
    let popcnt = bit(leaf_1.ecx, 23);
    let mut level = 0;
    // Every AVX2 CPU has F16C (leaf 1, ECX bit 29); the AVX2 engine converts f16 lanes with it.
    if popcnt && ymm && bit(leaf_1.ecx, 29) && bit(leaf_7_ebx, 5) {
        level |= AVX2;
    }
    // AVX-512F and AVX-512BW: leaf 7, EBX bits 16 and 30.
    if popcnt && zmm && bit(leaf_7_ebx, 16) && bit(leaf_7_ebx, 30) {
        level |= AVX512;
    }
    // A build for these features runs only where they are: an emulator whose CPUID leaves them out
    // still gets the engine the build was made for.
    if cfg!(all(
        target_feature = "popcnt",
        target_feature = "avx2",
        target_feature = "f16c"
    )) {
        level |= AVX2;
    }
    if cfg!(all(
        target_feature = "popcnt",
        target_feature = "avx512f",
        target_feature = "avx512bw"
    )) {
        level |= AVX512;
    }
    // Leaf 0's vendor string, "AuthenticAMD", in EBX, EDX, ECX.
    if [leaf_0.ebx, leaf_0.edx, leaf_0.ecx] == [0x6874_7541, 0x6974_6e65, 0x444d_4163] {
        level |= AMD;
        // Leaf 1's family: the base family (bits 8-11), plus the extended one (bits 20-27) where the base
        // is 0xF.
        let signature = leaf_1.eax;
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
        // The probe without `std` agrees with `std`'s (this machine's CPU and OS).
        #[cfg(all(target_arch = "x86_64", feature = "std", not(miri)))]
        assert_eq!(
            first.0,
            std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("f16c")
                && std::is_x86_feature_detected!("popcnt")
                && std::env::var("TOPK_MAX_ISA").as_deref() != Ok("portable")
        );
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
