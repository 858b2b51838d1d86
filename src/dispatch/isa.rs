//! How a kernel runs on an instruction set: the [`Kernel`] trait, each instruction set's [`Isa`] (the
//! vectors and the sorter the kernels run on), the `#[target_feature]` function its token runs a
//! kernel in, and the sorts each such engine compiles once for every caller.

use crate::kernels::Isa;
use crate::kernels::candidates::CoreSorter;
use crate::simd::portable::{U32x8, U64x4};

/// An algorithm run on one engine's vectors: [`Engine::run`](super::engine::Engine::run) calls `run` with the engine's [`Isa`] from
/// inside a function compiled with the engine's instruction set (`#[target_feature]`), so that the
/// vectors' intrinsics, inlined into the algorithm, are compiled for it. Plain loops the compiler
/// vectorises by itself get the engine's width the same way.
pub(crate) trait Kernel {
    /// What the algorithm returns.
    type Output;
    /// The algorithm on `I`'s vectors. Implementations are `#[inline(always)]`: only what is inlined
    /// into the engine's function gets its instruction set.
    fn run<I: Isa>(self) -> Self::Output;
}

/// The portable engine's vectors (the `wide` crate's), every target; candidates ordered by `core`'s
/// sort, which the network does not beat on these lanes.
pub(crate) struct Portable;

impl Isa for Portable {
    type V32 = U32x8;
    type V64 = U64x4;
    type Sorter = CoreSorter;
}

/// Runs `kernel` on the portable vectors, out of line like the SIMD engines' entries: inlined, every
/// kernel's portable copy would sit in its caller's loop.
#[inline(never)]
pub(crate) fn enter_portable<K: Kernel>(kernel: K) -> K::Output {
    kernel.run::<Portable>()
}

/// An [`Isa`] behind a capability token: the token's `run` and the `#[target_feature]` function it
/// enters.
macro_rules! simd_isa {
    (
        $(#[$attr:meta])*
        $isa:ident: token $token:ty, features $features:literal, lanes $v32:ty, $v64:ty, sorter $sorter:ty,
        entered by $entry:ident
    ) => {
        $(#[$attr])*
        pub(crate) struct $isa;

        $(#[$attr])*
        impl Isa for $isa {
            type V32 = $v32;
            type V64 = $v64;
            type Sorter = $sorter;
        }

        $(#[$attr])*
        impl $token {
            /// Runs `kernel` on this instruction set's vectors.
            #[inline(always)]
            pub(crate) fn run<K: Kernel>(self, kernel: K) -> K::Output {
                // SAFETY: the token exists, so the CPU has the features the entry is compiled with (the
                // token's constructor checks them).
                unsafe { $entry(kernel) }
            }
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        $(#[$attr])*
        #[target_feature(enable = $features)]
        unsafe fn $entry<K: Kernel>(kernel: K) -> K::Output {
            kernel.run::<$isa>()
        }
    };
}

simd_isa! {
    /// AVX2: candidates selected by `core`'s selection (the partition does not beat it on four 64-bit
    /// lanes without an unsigned 64-bit minimum), up to a block ordered by the network, and the few a
    /// short row collects by their ranks ([`RankSort`](crate::kernels::sorter::RankSorter)).
    #[cfg(simd_x86)]
    Avx2: token crate::simd::cpu::Avx2, features "avx2,f16c,popcnt",
        lanes crate::simd::avx2::U32x8, crate::simd::avx2::U64x4,
        sorter crate::kernels::sorter::RankSorter<crate::simd::avx2::U64x4>,
        entered by enter_avx2
}

simd_isa! {
    /// AVX-512: candidates ordered by the network and selected by the vectorised partition.
    #[cfg(simd_x86)]
    Avx512: token crate::simd::cpu::Avx512, features "avx512f,avx512bw,popcnt",
        lanes crate::simd::avx512::U32x16, crate::simd::avx512::U64x8,
        sorter crate::kernels::sorter::NetworkSorter<crate::simd::avx512::U64x8>,
        entered by enter_avx512
}

simd_isa! {
    /// NEON: candidates ordered by `core`'s sort, which the network does not beat on two 64-bit lanes
    /// without an unsigned 64-bit minimum.
    #[cfg(simd_arm)]
    Neon: token crate::simd::cpu::Neon, features "neon",
        lanes crate::simd::neon::U32x4, crate::simd::neon::U64x2,
        sorter CoreSorter,
        entered by enter_neon
}

/// The sorts the AVX2 and AVX-512 sorters call, each compiled once in a `#[target_feature]` function of
/// its own that every caller shares, rather than inlined into each of the filter's instantiations
/// (which slows the filter's hot loops: `llm32x128k_k50`).
#[cfg(simd_x86)]
mod compiled_once {
    use crate::kernels::sorter::{PackedNetwork, PackedPartition};
    use crate::kernels::{network, partition};
    use crate::simd::avx2::U64x4;
    use crate::simd::avx512::U64x8;

    impl PackedNetwork for U64x4 {
        fn network_sort_packed(entries: &mut [u64], k: usize) {
            // SAFETY: a U64x4 exists only where AVX2 is present (its module's invariant).
            unsafe { network_avx2(entries, k) }
        }
    }

    impl PackedNetwork for U64x8 {
        fn network_sort_packed(entries: &mut [u64], k: usize) {
            // SAFETY: a U64x8 exists only where AVX-512F is present (its module's invariant).
            unsafe { network_avx512(entries, k) }
        }
    }

    impl PackedPartition for U64x8 {
        fn partition_select_packed(words: &mut [u64], k: usize) -> bool {
            // SAFETY: as above; POPCNT comes with it (the token checks it).
            unsafe { select_avx512(words, k) }
        }
        fn partition_sort_packed(words: &mut [u64], k: usize) {
            // SAFETY: as above: AVX-512F, and POPCNT with it.
            unsafe { quicksort_avx512(words, k) }
        }
    }

    /// # Safety
    /// The CPU has AVX2.
    #[inline(never)]
    #[target_feature(enable = "avx2")]
    unsafe fn network_avx2(entries: &mut [u64], k: usize) {
        network::sort::<U64x4>(entries, k);
    }

    /// # Safety
    /// The CPU has AVX-512F.
    #[inline(never)]
    #[target_feature(enable = "avx512f")]
    unsafe fn network_avx512(entries: &mut [u64], k: usize) {
        network::sort::<U64x8>(entries, k);
    }

    /// # Safety
    /// The CPU has AVX-512F and POPCNT.
    #[inline(never)]
    #[target_feature(enable = "avx512f,popcnt")]
    unsafe fn select_avx512(words: &mut [u64], k: usize) -> bool {
        partition::select::<U64x8>(words, k)
    }

    /// # Safety
    /// The CPU has AVX-512F and POPCNT.
    #[inline(never)]
    #[target_feature(enable = "avx512f,popcnt")]
    unsafe fn quicksort_avx512(words: &mut [u64], k: usize) {
        partition::sort::<U64x8>(words, k);
    }
}
