//! The reference: the semantics of SPEC.md §1-2 written as plainly as possible. Tests, fuzzing and
//! benchmarks compare every engine with it.
//!
//! The j-th output is the smallest (key, position) pair that is greater than the (j-1)-th: one full scan
//! per output, O(n·K) time, no memory at all (so it stays `no_std` without an allocator, and needs no
//! scratch). It shares the key mapping of `element.rs` ([`crate::Element::key`]), which is tested against an independent
//! comparison of the values themselves.

use crate::element::{Element, ordered_key};
use crate::entry::Emit;
use crate::topk::{Backend, Sequence, TopK};
use crate::{Direction, Error, Index, View, ViewMut};

/// The whole operation through the reference engine: same validation, same outputs as [`crate::topk()`].
pub fn topk<T: Element, I: Index, const D: usize>(
    input: View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    values: ViewMut<'_, T, D>,
    indices: ViewMut<'_, I, D>,
) -> Result<(), Error> {
    let mut plan = TopK::new(input, axis, k, direction, values, indices)?;
    let all = 0..plan.sequences();
    plan.run_sequences(all, Backend::Naive, &mut [])
}

/// Reports, through `emit` ([`Emit`]), the first `k` positions of `seq` in the order of `flip`.
pub(crate) fn select<T: Element>(seq: &Sequence<'_, T>, k: usize, flip: u64, emit: &mut Emit<'_>) {
    let mut previous: Option<(u64, usize)> = None;
    for rank in 0..k {
        let mut best: Option<(u64, usize)> = None;
        for position in 0..seq.len() {
            // SAFETY: position < seq.len().
            let candidate = (ordered_key(unsafe { seq.get(position) }, flip), position);
            let after_previous = previous.is_none_or(|p| candidate > p);
            if after_previous && best.is_none_or(|b| candidate < b) {
                best = Some(candidate);
            }
        }
        let Some(chosen) = best else { return }; // unreachable while k <= len
        emit(rank, &[chosen.1]);
        previous = Some(chosen);
    }
}
