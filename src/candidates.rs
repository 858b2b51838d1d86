//! The candidate buffer every filtering engine shares: at most `capacity` packed (key, position) entries,
//! compacted to the best K by selection whenever it fills.
//!
//! Once the buffer has been compacted, `threshold()` is the K-th best key so far, and an element can
//! still be among the first K only if its key is *strictly* below it: the element arrives after the K
//! entries kept (positions are fed in increasing order), so on a tie it would lose. Engines test keys
//! against the threshold in bulk and push only the survivors; before the first compaction they push
//! everything (the buffer is filling, and 64-bit keys have no "accept all" value to compare against).

use crate::entry::Entry;

/// Candidates the buffer needs for a sequence of `len` with `k` selected: `min(len, 2k)`.
///
/// Twice K means one compaction (linear in the buffer) frees room for K more survivors, so even input
/// where every element survives (ascending data selected `Decreasing`) stays linear in n.
pub(crate) fn capacity(len: usize, k: usize) -> usize {
    len.min(k.saturating_mul(2))
}

pub(crate) struct Candidates<'s, E> {
    buffer: &'s mut [E],
    len: usize,
    k: usize,
    threshold: u64,
    filtering: bool,
}

impl<'s, E: Entry> Candidates<'s, E> {
    /// An empty buffer selecting `k >= 1`; `buffer` has `capacity(n, k)` entries for the sequence fed.
    #[inline]
    pub(crate) fn new(buffer: &'s mut [E], k: usize) -> Self {
        debug_assert!(k >= 1 && buffer.len() >= k, "k {k} capacity {}", buffer.len());
        Candidates { buffer, len: 0, k, threshold: u64::MAX, filtering: false }
    }

    /// Whether the buffer has been compacted once, so that `threshold()` means something.
    #[allow(dead_code)] // for engines that feed chunks (the accumulator)
    #[inline(always)]
    pub(crate) fn filtering(&self) -> bool {
        self.filtering
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
        }
        if self.len == self.buffer.len() && self.len > self.k {
            self.compact();
        }
    }

    /// Keeps the best K entries and lowers the threshold to the K-th one's key.
    #[inline(never)]
    fn compact(&mut self) {
        let (_, kth, _) = self.buffer[..self.len].select_nth_unstable(self.k - 1);
        self.threshold = kth.key();
        self.filtering = true;
        self.len = self.k;
    }

    /// The best min(K, pushed) entries, sorted: first is best.
    pub(crate) fn finish(self) -> &'s [E] {
        let kept = &mut self.buffer[..self.len];
        let k = self.k.min(kept.len());
        if kept.len() > k {
            kept.select_nth_unstable(k - 1);
        }
        let best = &mut kept[..k];
        best.sort_unstable();
        best
    }
}
