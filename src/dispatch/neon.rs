//! The NEON engine: the kernels on [`U32x4`] and [`U64x2`], behind the [`Neon`] token.

use crate::kernels::candidates::CoreSort;
use crate::simd::cpu::Neon;
use crate::simd::neon::{U32x4, U64x2};

// Candidates are ordered by `core`'s sort: the network does not beat it on two 64-bit lanes without an
// unsigned 64-bit minimum (see `sorter::Network`).
crate::dispatch::simd_engine::simd_engine! {
    token: Neon,
    features: "neon",
    lanes: U32x4, U64x2,
    sorter: CoreSort,
}
