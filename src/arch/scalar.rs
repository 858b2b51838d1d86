//! Threshold filter with a candidate buffer, one element at a time.
//!
//! ```text
//! buffer ← the first min(n, 2K) elements as (key, position)
//! if everything fit: select and sort it, done
//! compact: select the K smallest into buffer[..K]; threshold ← key of buffer[K-1]
//! for each later element x (in position order):
//!     if key(x) < threshold:            // strict: a tie with the K-th arrives later, so it loses
//!         append (key(x), position)
//!         if the buffer is full: compact again (threshold only falls)
//! select the K smallest of what is left, sort them by (key, position)
//! ```
//! Tricks: keys are unsigned integers ([`crate::element`]) and entries pack (key, position) into one
//! integer ([`crate::entry`]), so selection and sorting are plain integer ones and ties by position come
//! for free. A compaction frees K slots for O(2K) work, so any input is linear in n: ascending data
//! for `Decreasing`, the filter's worst case, costs about two extra passes over the buffer per K inputs.

use crate::element::{Element, ordered_key};
use crate::entry::Entry;
use crate::topk::Sequence;

/// Candidates the buffer holds for a sequence of `len` with `k` selected: `min(len, 2k)`.
pub(crate) fn candidates(len: usize, k: usize) -> usize {
    len.min(k.saturating_mul(2))
}

/// Reports, through `emit(rank, position)`, the first `k` positions of `seq` in the order of `flip`.
///
/// `buffer` holds exactly `candidates(seq.len(), k)` entries and `1 <= k <= seq.len()`.
pub(crate) fn select<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    flip: u64,
    buffer: &mut [E],
    emit: &mut dyn FnMut(usize, usize),
) {
    let n = seq.len();
    let capacity = buffer.len();
    debug_assert!(
        1 <= k && k <= n && capacity == candidates(n, k),
        "k {k} n {n} capacity {capacity}"
    );
    for (position, slot) in buffer.iter_mut().enumerate() {
        // SAFETY: position < capacity <= n.
        *slot = E::new(ordered_key(unsafe { seq.get(position) }, flip), position);
    }
    let mut len = capacity;
    if capacity < n {
        // capacity == 2k here, so compaction always frees k slots.
        let mut threshold = compact(buffer, k);
        len = k;
        for position in capacity..n {
            // SAFETY: position < n.
            let key = ordered_key(unsafe { seq.get(position) }, flip);
            if key < threshold {
                buffer[len] = E::new(key, position);
                len += 1;
                if len == capacity {
                    threshold = compact(buffer, k);
                    len = k;
                }
            }
        }
    }
    let kept = &mut buffer[..len];
    if len > k {
        kept.select_nth_unstable(k - 1);
    }
    let best = &mut kept[..k];
    best.sort_unstable();
    for (rank, entry) in best.iter().enumerate() {
        emit(rank, entry.position());
    }
}

/// Moves the `k` first entries to `buffer[..k]` and returns the K-th one's key.
#[inline(never)]
fn compact<E: Entry>(buffer: &mut [E], k: usize) -> u64 {
    let (_, kth, _) = buffer.select_nth_unstable(k - 1);
    kth.key()
}
