//! Threshold filter, one element at a time: the `scalar` backend, and the SIMD engines on strided rows.
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
