//! The AVX-512 engine: the kernels on [`U32x16`] and [`U64x8`], behind the [`Avx512`] token.

use crate::kernels::network;
use crate::kernels::partition;
use crate::kernels::sorter::{Network, PartitionPacked, SortPacked};
use crate::simd::avx512::{U32x16, U64x8};
use crate::simd::cpu::Avx512;

crate::dispatch::simd_engine::simd_engine! {
    token: Avx512,
    features: "avx512f,avx512bw,popcnt",
    lanes: U32x16, U64x8,
    sorter: Network<U64x8>,
}

impl SortPacked for U64x8 {
    fn sort_packed(entries: &mut [u64], k: usize) {
        // SAFETY: a U64x8 exists only where AVX-512F is present (module invariant).
        unsafe { sort_packed(entries, k) }
    }
}

impl PartitionPacked for U64x8 {
    fn select_packed(words: &mut [u64], k: usize) -> bool {
        // SAFETY: as above; POPCNT comes with it (the token checks it).
        unsafe { select_packed(words, k) }
    }
    fn quicksort_packed(words: &mut [u64], k: usize) {
        // SAFETY: as above: AVX-512F, and POPCNT with it.
        unsafe { quicksort_packed(words, k) }
    }
}

/// The vectorised quicksort on AVX-512F lanes, compiled once.
///
/// # Safety
/// The CPU has AVX-512F and POPCNT.
#[inline(never)]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn quicksort_packed(words: &mut [u64], k: usize) {
    partition::sort::<U64x8>(words, k);
}

/// The vectorised selection on AVX-512F lanes, compiled once.
///
/// # Safety
/// The CPU has AVX-512F and POPCNT.
#[inline(never)]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn select_packed(words: &mut [u64], k: usize) -> bool {
    partition::select::<U64x8>(words, k)
}

/// The sorting network on AVX-512F lanes, compiled once.
///
/// # Safety
/// The CPU has AVX-512F.
#[inline(never)]
#[target_feature(enable = "avx512f")]
unsafe fn sort_packed(entries: &mut [u64], k: usize) {
    network::sort::<U64x8>(entries, k);
}
