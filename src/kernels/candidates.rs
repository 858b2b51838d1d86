//! The candidate buffer every filtering engine shares: at most `capacity` packed (key, position) entries,
//! compacted to the best K by selection whenever it fills.
//!
//! Once the buffer has been compacted, `threshold()` is the K-th best key so far, and an element can
//! still be among the first K only if its key is *strictly* below it: the element arrives after the K
//! entries kept (positions are fed in increasing order), so on a tie it would lose. Engines test keys
//! against the threshold in bulk and push only the survivors; before the first compaction they push
//! everything (the buffer is filling, and 64-bit keys have no "accept all" value to compare against).

use core::marker::PhantomData;

use crate::kernels::entry::Entry;
use crate::types::element::{Element, Order};

/// How a buffer puts its best entries first: `core`'s selection and sort ([`CoreSorter`]), or an engine's
/// sorting network and vectorised selection (`arch::generic::network`, `arch::generic::partition`).
pub(crate) trait Sorter {
    /// Whether this is a sorting network, whose sorts of a few dozen entries cost less than keeping a
    /// sorted pool: rows short enough are then collected whole and sorted once (`arch::generic`).
    const NETWORK: bool = false;
    /// Puts the `k` smallest entries first with the `k`-th smallest at `k - 1` (`1 <= k <= len`), and
    /// says whether those `k` are also in order.
    fn select<E: Entry>(entries: &mut [E], k: usize) -> bool;
    /// Puts the `k` smallest entries first, in order (`1 <= k <= len`).
    fn sort<E: Entry>(entries: &mut [E], k: usize);
    /// Puts the first `count` of `words` (distinct packed entries, `count <= FEW <= words.len()`) in
    /// order into `sorted[..count]`, where this sorter has a branch-free way for so few; false, having
    /// written nothing, otherwise.
    #[inline(always)]
    fn sort_few(_words: &[u64], _count: usize, _sorted: &mut [u64; FEW]) -> bool {
        false
    }
}

/// The most entries [`Sorter::sort_few`] sorts.
pub(crate) const FEW: usize = 32;

/// `core`'s introselect and pattern-defeating quicksort: O(n) selection, O(K log K) sort, any entry.
pub(crate) struct CoreSorter;

impl Sorter for CoreSorter {
    fn select<E: Entry>(entries: &mut [E], k: usize) -> bool {
        if let Some(rank) = k.checked_sub(1).filter(|&rank| rank < entries.len()) {
            entries.select_nth_unstable(rank);
        }
        false
    }

    fn sort<E: Entry>(entries: &mut [E], k: usize) {
        if entries.len() <= SORT_WHOLE {
            return sort_entries(entries);
        }
        CoreSorter::select(entries, k);
        if let Some(best) = entries.get_mut(..k) {
            sort_entries(best);
        }
    }
}

/// Sorts `entries`: by `core`'s pattern-defeating quicksort where SIMD engines are compiled; elsewhere
/// (firmware) by [`heapsort`], a few hundred bytes of flash where the quicksort and its small sorts take
/// about 5 KB.
#[inline(always)]
fn sort_entries<E: Entry>(entries: &mut [E]) {
    if cfg!(simd_arch) {
        entries.sort_unstable();
    } else {
        heapsort(entries);
    }
}

/// Sorts `entries` in place, O(n log n) without recursion: builds a max-heap, then moves its top to the
/// end of the heap, one entry at a time. Up to [`INSERTION_MAX`] entries, by insertion.
fn heapsort<E: Entry>(entries: &mut [E]) {
    let len = entries.len();
    if len <= INSERTION_MAX {
        for sorted in 1..len {
            let mut at = sorted;
            while at > 0 && entries[at - 1] > entries[at] {
                entries.swap(at - 1, at);
                at -= 1;
            }
        }
        return;
    }
    for node in (0..len / 2).rev() {
        sift_down(entries, node, len);
    }
    for end in (1..len).rev() {
        entries.swap(0, end);
        sift_down(entries, 0, end);
    }
}

/// Longest slices [`heapsort`] sorts by insertion, which does less work there than building a heap.
const INSERTION_MAX: usize = 16;

/// Moves `entries[node]` down the max-heap `entries[..end]` until neither child is larger.
fn sift_down<E: Entry>(entries: &mut [E], mut node: usize, end: usize) {
    let Some(heap) = entries.get_mut(..end) else {
        return;
    };
    loop {
        // `node < end`, and `end` entries of at least 8 bytes are far below `usize::MAX / 2`.
        let left = 2 * node + 1;
        let Some(&left_entry) = heap.get(left) else {
            return;
        };
        let (child, larger) = match heap.get(left + 1) {
            Some(&right) if right > left_entry => (left + 1, right),
            _ => (left, left_entry),
        };
        if heap[node] >= larger {
            return;
        }
        heap.swap(node, child);
        node = child;
    }
}

/// Up to this many entries, [`CoreSorter::sort`] sorts them all rather than selecting the first K first:
/// `core`'s small sort beats the selection's partition there.
const SORT_WHOLE: usize = 32;

/// Candidates the buffer needs for a sequence of `len` with `k` selected: `min(len, 2k)`.
///
/// Twice K means one compaction (linear in the buffer) frees room for K more survivors, so even input
/// where every element survives (ascending data selected `Decreasing`) stays linear in n.
pub(crate) fn capacity(len: usize, k: usize) -> usize {
    len.min(k.saturating_mul(2))
}

pub(crate) struct Candidates<'s, E, S = CoreSorter> {
    buffer: &'s mut [E],
    len: usize,
    k: usize,
    threshold: u64,
    filtering: bool,
    /// Whether `buffer[..len]` is in order (after a compaction by a sorting `S`, until the next push).
    sorted: bool,
    sorter: PhantomData<S>,
}

impl<'s, E: Entry> Candidates<'s, E> {
    /// An empty buffer selecting `k >= 1` with `core`'s sort; `buffer` has `capacity(n, k)` entries for
    /// the sequence fed.
    #[inline]
    pub(crate) fn new(buffer: &'s mut [E], k: usize) -> Self {
        Candidates::sorted_by(buffer, k)
    }
}

impl<'s, E: Entry, S: Sorter> Candidates<'s, E, S> {
    /// An empty buffer selecting `k >= 1` that orders its entries with `S`.
    #[inline]
    pub(crate) fn sorted_by(buffer: &'s mut [E], k: usize) -> Self {
        debug_assert!(k >= 1 && buffer.len() >= k, "k {k} capacity {}", buffer.len());
        Candidates {
            buffer,
            len: 0,
            k,
            threshold: u64::MAX,
            filtering: false,
            sorted: false,
            sorter: PhantomData,
        }
    }

    /// Whether the buffer has been compacted once, so that `threshold()` means something.
    #[allow(dead_code)] // for engines that feed chunks (the accumulator)
    #[inline(always)]
    pub(crate) fn filtering(&self) -> bool {
        self.filtering
    }

    /// Whether K entries were pushed.
    #[inline(always)]
    pub(crate) fn holds_k(&self) -> bool {
        self.filtering || self.len >= self.k
    }

    /// The K-th best key so far: only keys strictly below it can still enter (once `filtering()`).
    #[inline(always)]
    pub(crate) fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Appends a candidate (positions must come in increasing order); compacts when the buffer fills.
    #[inline(always)]
    pub(crate) fn push(&mut self, key: u64, position: usize) {
        // len < capacity holds between calls: the buffer is compacted as soon as it is full.
        if let Some(slot) = self.buffer.get_mut(self.len) {
            *slot = E::new(key, position);
            self.len += 1;
            self.sorted = false;
        }
        if self.len == self.buffer.len() && self.len > self.k {
            self.compact();
        }
    }

    /// Pushes a whole row, from position 0, into an empty buffer that holds it: the bulk form of
    /// [`push`](Self::push) for rows where every element is a candidate, one store per element
    /// (vectorised where the key is).
    #[inline(always)]
    pub(crate) fn fill<T: Element>(&mut self, row: &[T], order: Order) {
        debug_assert!(self.len == 0 && row.len() <= self.buffer.len());
        for ((slot, &value), position) in self.buffer.iter_mut().zip(row).zip(0..) {
            *slot = E::new(order.key(value), position);
        }
        self.len = row.len().min(self.buffer.len());
        if self.len == self.buffer.len() && self.len > self.k {
            self.compact();
        }
    }

    /// Keeps the best K entries and lowers the threshold to the K-th one's key.
    #[inline(never)]
    fn compact(&mut self) {
        let kept = &mut self.buffer[..self.len];
        self.sorted = S::select(kept, self.k);
        self.threshold = kept[self.k - 1].key();
        self.filtering = true;
        self.len = self.k;
    }

    /// The best min(K, pushed) entries, sorted: first is best.
    pub(crate) fn finish(self) -> &'s [E] {
        let kept = &mut self.buffer[..self.len];
        let k = self.k.min(kept.len());
        if !self.sorted {
            S::sort(kept, k);
        }
        &kept[..k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heapsort_sorts_like_core() {
        // Every length through the insertion sort's limit and past it, with runs of ties.
        let mut state = 7u64;
        for len in 0..200 {
            let mut entries: Vec<u64> = (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    state >> 58
                })
                .collect();
            let mut expected = entries.clone();
            expected.sort_unstable();
            heapsort(&mut entries);
            assert_eq!(entries, expected, "len {len}");
            let mut pairs: Vec<[u64; 2]> = expected.iter().rev().map(|&key| [key, !key]).collect();
            let mut expected = pairs.clone();
            expected.sort_unstable();
            heapsort(&mut pairs);
            assert_eq!(pairs, expected, "len {len}");
        }
    }

    #[test]
    fn capacity_is_twice_k_within_the_sequence() {
        assert_eq!(capacity(10, 3), 6);
        assert_eq!(capacity(5, 3), 5);
        assert_eq!(capacity(4, 4), 4);
        assert_eq!(capacity(0, 0), 0);
        assert_eq!(capacity(7, usize::MAX), 7);
    }

    fn pushed<E: Entry>(buffer: &mut [E], k: usize, keys: &[u64]) -> (Vec<(u64, usize)>, u64, bool) {
        let mut candidates = Candidates::new(buffer, k);
        for (position, &key) in keys.iter().enumerate() {
            candidates.push(key, position);
        }
        let (threshold, filtering) = (candidates.threshold(), candidates.filtering());
        let best = candidates.finish().iter().map(|e| (e.key(), e.position())).collect();
        (best, threshold, filtering)
    }

    #[test]
    fn fills_then_compacts_to_the_kth_key() {
        let mut buffer = [0u64; 4];
        // Not full yet: no threshold.
        assert_eq!(
            pushed(&mut buffer, 2, &[10, 20, 5]),
            (vec![(5, 2), (10, 0)], u64::MAX, false)
        );
        // The fourth push fills the buffer: the best two stay, the threshold is the second's key.
        assert_eq!(pushed(&mut buffer, 2, &[10, 20, 5, 7]), (vec![(5, 2), (7, 3)], 7, true));
        // Ties keep the lower positions; the threshold is the tied key until the next compaction.
        assert_eq!(
            pushed(&mut buffer, 2, &[3, 3, 3, 3, 1]),
            (vec![(1, 4), (3, 0)], 3, true)
        );
        assert_eq!(
            pushed(&mut buffer, 2, &[3, 3, 3, 3, 1, 2]),
            (vec![(1, 4), (2, 5)], 2, true)
        );
        // Compacting repeatedly (every 2 pushes once full): descending keys all enter.
        let keys: Vec<u64> = (0..20).rev().collect();
        assert_eq!(pushed(&mut buffer, 2, &keys), (vec![(0, 19), (1, 18)], 1, true));
    }

    #[test]
    fn k_equal_to_the_buffer_never_compacts() {
        let mut buffer = [0u64; 3];
        assert_eq!(
            pushed(&mut buffer, 3, &[9, 1, 9]),
            (vec![(1, 1), (9, 0), (9, 2)], u64::MAX, false)
        );
    }

    #[test]
    fn wide_entries_hold_64_bit_keys_and_long_positions() {
        let mut words = [0u64; 8];
        let buffer = <[u64; 2]>::from_words(&mut words);
        assert_eq!(buffer.len(), 4);
        let keys = [u64::MAX, 0, u64::MAX - 1, 1 << 40, 0];
        assert_eq!(pushed(buffer, 2, &keys), (vec![(0, 1), (0, 4)], 1 << 40, true));
        let mut candidates = Candidates::new(buffer, 1);
        candidates.push(u64::MAX, usize::MAX);
        assert_eq!(
            candidates
                .finish()
                .iter()
                .map(|e| (e.key(), e.position()))
                .collect::<Vec<_>>(),
            [(u64::MAX, usize::MAX)]
        );
    }
}
