//! The portable engine: the kernels on the `wide` crate's vectors ([`U32x8`], [`U64x4`]), every target.

use crate::kernels;
use crate::kernels::candidates::CoreSort;
use crate::kernels::entry::{Buffer, Emit, Entry, SideOutputs};
use crate::simd::portable::{U32x8, U64x4};
use crate::types::element::Element;
use crate::types::sequence::{Sequence, Side};

/// Selects through the generic filter on portable lanes. Same contract as `arch::scalar::select`.
pub(crate) fn select<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    flip: u64,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    // Candidates ordered by `core`'s sort: the network does not beat it on these lanes (see
    // `sorter::Network`).
    kernels::select::<U32x8, U64x4, CoreSort, T, E>(seq, k, flip, buffer, emit);
}

/// Neighbouring sequences side by side on portable lanes. Same contract as `Engine::select_side`.
pub(crate) fn select_side<T: Element>(
    side: &Side<'_, T>,
    k: usize,
    flip: u64,
    buffer: Buffer<'_>,
    emit: &mut SideOutputs<'_, T>,
) -> usize {
    kernels::select_side::<U32x8, U64x4, CoreSort, T>(side, k, flip, buffer, emit)
}
