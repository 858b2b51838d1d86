//! Threshold filter, one element at a time: the `scalar` backend, the SIMD engines on strided rows, and
//! every engine where no SIMD engine is compiled (firmware).
//! And K = 1 as a running best ([`first_best`]).
//!
//! ```text
//! push the first min(n, 2K) elements as (key, position)       // fills, then compacts once
//! for each later element x (in position order):
//!     if key(x) < threshold: push (key(x), position)         // strict: a later tie loses
//! sort the best K by (key, position)
//! ```
//! Tricks: keys are unsigned integers ([`crate::types::element`]) and entries pack (key, position) into one
//! integer ([`crate::kernels::entry`]), so selection and sorting are plain integer ones and ties by position come
//! for free; the buffer logic lives in [`crate::kernels::candidates`].

use crate::kernels::candidates::{Candidates, capacity};
use crate::kernels::entry::{Entry, report};
use crate::types::element::{Element, Order};
use crate::types::output::Emit;
use crate::types::sequence::Sequence;

/// Reports, through `emit` ([`Emit`]), the first `k` positions of `seq` in the order of `flip`.
///
/// `buffer` holds `candidates::capacity(seq.len(), k)` entries and `1 <= k <= seq.len()`.
pub(crate) fn select<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    let n = seq.len();
    let mut candidates = Candidates::new(buffer, k);
    let head = capacity(n, k);
    for position in 0..head {
        // SAFETY: position < head <= n.
        candidates.push(order.key(unsafe { seq.get(position) }), position);
    }
    for position in head..n {
        // SAFETY: position < n.
        let key = order.key(unsafe { seq.get(position) });
        if key < candidates.threshold() {
            candidates.push(key, position);
        }
    }
    report(candidates.finish(), emit);
}

/// K = 1: the position of the first best key of `seq` (0 if empty), one element at a time with a
/// running best (`key < best`, strict, so the first of equal keys stays). No candidates, no sort, and
/// no threshold to fall behind on rows in order.
///
/// ```text
/// best, at = key(x[0]), 0
/// for p in 1..n: if key(x[p]) < best: best, at = key(x[p]), p
/// ```
#[inline(always)]
pub(crate) fn first_best<T: Element>(seq: &Sequence<'_, T>, order: Order) -> usize {
    if seq.len() == 0 {
        return 0;
    }
    let key = |x: T| order.narrow_key(x);
    // SAFETY: 0 < len.
    let (mut best, mut at) = (key(unsafe { seq.get(0) }), 0);
    for position in 1..seq.len() {
        // SAFETY: position < len.
        let key = key(unsafe { seq.get(position) });
        // Selects rather than a branch: on short rows of random data it is a coin toss.
        at = if key < best { position } else { at };
        best = best.min(key);
    }
    at
}
