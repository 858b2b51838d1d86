//! The AVX2 engine: the kernels on [`U32x8`] and [`U64x4`], behind the [`Avx2`] token.

use crate::kernels;
use crate::kernels::sorter::{Ranked, SortPacked};
use crate::simd::avx2::{U32x8, U64x4};
use crate::simd::cpu::Avx2;

// Candidates are selected by `core`'s select, and K above 64 ordered by its sort: the network and the
// partition do not beat them on four 64-bit lanes without an unsigned 64-bit minimum (see
// `sorter::Network`). K up to 64 is ordered by the network, and the few a short row collects by their
// ranks (see `sorter::Ranked`).
crate::dispatch::simd_engine::simd_engine! {
    token: Avx2,
    features: "avx2,f16c,popcnt",
    lanes: U32x8, U64x4,
    sorter: Ranked<U64x4>,
}

impl SortPacked for U64x4 {
    fn sort_packed(entries: &mut [u64], k: usize) {
        // SAFETY: a U64x4 exists only where AVX2 is present (the vectors' module invariant).
        unsafe { sort_packed(entries, k) }
    }
}

/// The sorting network on AVX2 lanes, compiled once (see `SortPacked`).
///
/// # Safety
/// The CPU has AVX2.
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn sort_packed(entries: &mut [u64], k: usize) {
    kernels::network::sort::<U64x4>(entries, k);
}
