//! Which algorithm a request gets.

use crate::kernels::candidates;
use crate::kernels::entry::packs_in_one_word;
use crate::simd::vector::MAX_LANES;
use crate::types::element::{Element, Key};
use crate::types::view::Layout;

/// The largest K the engines read side by side with each lane's best K sorted in vector slots.
pub(crate) const SIDE_MAX_K: usize = crate::kernels::SMALL_K;

/// Whether this target has SIMD engines. The paths that pay only with them (tiny rows read from a
/// tile, side by side above [`SIDE_MAX_K`] with a candidate buffer per lane) are taken only here:
/// elsewhere (firmware) the portable lanes keep their code out of the flash budget.
pub(crate) const SIMD_ENGINES: bool = cfg!(simd_arch);

/// Scratch words any request with rows of `len` takes: `min(len, 2k)` candidates of one word (two for
/// 64-bit keys or rows over 2^32 elements).
pub(crate) fn scratch_words<T: Element>(len: usize, k: usize) -> usize {
    let words = if packs_in_one_word(<T::Key as Key>::BITS, len) {
        1
    } else {
        2
    };
    // Saturating: huge `len` and `k` (possible with an empty tensor) must not overflow.
    candidates::capacity(len, k).saturating_mul(words)
}

/// Scratch words for the fastest path of a request along `axis` of `input`: [`scratch_words`], or
/// [`MAX_LANES`] times that where sequences are read side by side with a candidate buffer each
/// ([`side_pools`]); 0 with nothing to select.
pub(crate) fn fastest_scratch_words<T: Element, const D: usize>(input: &Layout<D>, axis: usize, k: usize) -> usize {
    let Some(&len) = input.sizes().get(axis) else {
        return 0;
    };
    if k == 0 || input.elements() == 0 {
        return 0;
    }
    let least = scratch_words::<T>(len, k);
    if side_pools(input, axis, k) {
        least.saturating_mul(MAX_LANES)
    } else {
        least
    }
}

/// The innermost dimension of `input`, if sequences along `axis` can be read side by side there: it is
/// not the axis, and has stride 1 and more than one sequence.
pub(crate) fn side_dimension<const D: usize>(input: &Layout<D>, axis: usize) -> Option<usize> {
    let inner = D.checked_sub(1)?;
    let adjacent = axis != inner && input.strides()[inner] == 1 && input.sizes()[inner] > 1;
    adjacent.then_some(inner)
}

/// Whether sequences along `axis` of `input` are read side by side with a candidate buffer each (K
/// above the lanes' sorted slots).
pub(crate) fn side_pools<const D: usize>(input: &Layout<D>, axis: usize, k: usize) -> bool {
    SIMD_ENGINES && k > SIDE_MAX_K && side_dimension(input, axis).is_some()
}
