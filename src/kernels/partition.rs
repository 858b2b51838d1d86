//! Selection and sorting by vectorised partitioning (quickselect, quicksort) on packed (key, position)
//! words in 64-bit lanes, written once for every ISA: the compactions of the candidate buffer, the step
//! that halves what the sorting network sorts, and the sort of more than 512 entries, on the engine where
//! they beat `core`'s (AVX-512: see `sorter::NetworkSorter`; the other engines' tests run them too).
//!
//! ```text
//! select(words, k):                         // the k smallest first, the k-th at k - 1
//!     part = words
//!     while part is longer than SMALL:
//!         past WORK_RATIO · n words partitioned: stop
//!         pivot = median of 16 evenly spaced words (8 on 2 lanes), sorted in registers
//!         split = partition(part, pivot)     // part[..split] < pivot <= part[split..]
//!         split == 0: no progress (equal words), stop
//!         part = the side holding rank k - 1
//!     core's select_nth_unstable on what is left
//! sort(words, k):                           // the k smallest first, in order
//!     part = words; stack = []               // at most 64 pending parts
//!     loop:
//!         part starts at or after k: drop it
//!         part fits one network block (BLOCK · LANES words): network::sort(part) in registers
//!         past SORT_WORK_RATIO · n · (log2 n + 1) words partitioned: core's select and sort on part
//!         else:
//!             split = partition(part, pivot as in select)
//!             split == 0: no progress (equal words), core's select and sort on part
//!             right side starts at or after k: part = left side; continue
//!             part = the smaller side, push the larger; continue
//!         part = pop the stack, or stop when it is empty
//! partition(part, pivot):                   // in place, in the style of Bramas / x86-simd-sort
//!     keep the first and the last UNROLL vectors in registers: UNROLL vectors of free room each side
//!     while at least UNROLL vectors are unread:
//!         load UNROLL vectors from the side with less free room
//!         each: lanes < pivot first (partition_lanes), stored whole at the left write cursor and
//!               again whole ending at the right one; the cursors move by the lanes that went there
//!     the remaining words (fewer than UNROLL vectors) one at a time, then the vectors kept aside
//! ```
//! Tricks:
//! - a vector is stored twice, whole, instead of its two parts masked: after the loads there are at
//!   least UNROLL vectors of already-read room on either side, so a full store never reaches an unread
//!   word, and what it writes past the lanes that stay is overwritten later;
//! - [`Vector::partition_lanes`] is one permutation with indices from a table: `vpermd` on AVX2 (16
//!   masks), `vpermq` on AVX-512 (256 masks, eight 3-bit indices a word);
//! - eight vectors a step: which side the next loads come from depends on this step's counts (load,
//!   compare, mask, popcount: a chain of about 15 cycles), which two vectors a step could not hide;
//! - no recursion and no allocation: a selection keeps one side and drops the other; a sort goes on
//!   with the smaller side and keeps the larger in a fixed array, each kept part at least twice what
//!   follows it, so 64 entries hold any slice (were it full, `core` would sort the larger side at once);
//! - O(n) whatever the data: past a budget of `WORK_RATIO · n` words partitioned, or after a round that
//!   moved nothing, `core`'s introselect (itself O(n)) finishes what is left; a sort is O(n log n) the
//!   same way, with a budget of `SORT_WORK_RATIO · n · (log2 n + 1)` words (random words take about
//!   `n · log2(n / 128)`) and `core`'s select and sort (O(n log n)) on the parts left past it;
//! - a sort's leaves are the network's in registers (up to 128 words on AVX-512): a leaf of two blocks
//!   (the network merging them in memory) is slower from 2048 words on.

use crate::kernels::network;
use crate::simd::vector::{MAX_LANES, Vector};

/// Slices at most this long are finished by `core`'s selection.
pub(crate) const SMALL: usize = 128;

/// Words partitioned before `core`'s selection takes over, in lengths of the input. With the pivot the
/// median of 16, a selection partitions about 2-3 lengths on random words.
pub(crate) const WORK_RATIO: usize = 6;

/// Vectors per step of the partition loop.
const UNROLL: usize = 8;

/// Words sampled for the pivot (on at most four vectors: 8 on two lanes).
const SAMPLES: usize = 16;

/// How a selection went (the tests look at it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rounds {
    /// Partitions done.
    pub(crate) rounds: usize,
    /// Whether `core`'s selection took over a part longer than [`SMALL`] (work budget spent, or no
    /// progress).
    pub(crate) fell_back: bool,
}

/// Puts the `k` smallest words first with the `k`-th smallest at `k - 1` (nothing when `k` is 0 or past
/// the end); says whether those `k` are in order (never: the contract of `Sorter::select`).
#[inline(always)]
pub(crate) fn select<V: Vector>(words: &mut [u64], k: usize) -> bool {
    quickselect::<V>(words, k, WORK_RATIO);
    false
}

/// [`select`] with a work budget of `work_ratio` lengths; says how it went.
#[inline(always)]
pub(crate) fn quickselect<V: Vector>(words: &mut [u64], k: usize, work_ratio: usize) -> Rounds {
    debug_assert_eq!(size_of::<u64>() * V::LANES, size_of::<V>());
    let mut rounds = Rounds::default();
    let Some(rank) = k.checked_sub(1).filter(|&rank| rank < words.len()) else {
        return rounds;
    };
    let mut budget = words.len().saturating_mul(work_ratio);
    // The words in `lo..hi` are all that can still be at `rank`: the ones before are below them, the
    // ones after above.
    let (mut lo, mut hi) = (0, words.len());
    let small = SMALL.max(2 * UNROLL * V::LANES);
    while hi - lo > small {
        let Some(part) = words.get_mut(lo..hi) else { break };
        if part.len() > budget {
            rounds.fell_back = true;
            break;
        }
        budget -= part.len();
        rounds.rounds += 1;
        let pivot = pivot::<V>(part);
        let split = partition::<V>(part, pivot);
        if split == 0 {
            // Every word is at least the pivot, which is one of them: equal words (never packed ones).
            rounds.fell_back = true;
            break;
        }
        if rank - lo < split {
            hi = lo + split;
        } else {
            lo += split;
        }
    }
    if let Some(part) = words.get_mut(lo..hi)
        && let Some(at) = rank.checked_sub(lo).filter(|&at| at < part.len())
    {
        part.select_nth_unstable(at);
    }
    rounds
}

/// Pending ranges a [`quicksort`] can hold: it continues with the smaller side of every split and keeps
/// the larger, so each range kept is at least twice what follows it, and 64 cover any slice.
const STACK: usize = 64;

/// Words partitioned before a [`quicksort`] hands what is left to `core`'s sort, in lengths of the input
/// times `log2` of it plus one. With the pivot the median of 16, random words take about `log2(n / 128)`
/// lengths.
pub(crate) const SORT_WORK_RATIO: usize = 2;

/// Puts the `k` smallest words first in ascending order (`k` past the end: all of them); the others end
/// in some order.
#[inline(always)]
pub(crate) fn sort<V: Vector>(words: &mut [u64], k: usize) {
    quicksort::<V>(words, k, SORT_WORK_RATIO);
}

/// [`sort`] with a work budget of `work_ratio · (log2(n) + 1)` lengths; says how it went (`fell_back`:
/// `core`'s sort took over a part longer than a leaf).
#[inline(always)]
pub(crate) fn quicksort<V: Vector>(words: &mut [u64], k: usize, work_ratio: usize) -> Rounds {
    debug_assert_eq!(size_of::<u64>() * V::LANES, size_of::<V>());
    let mut rounds = Rounds::default();
    let len = words.len();
    let k = k.min(len);
    // Parts up to a block go to the network in registers; longer ones are long enough to partition.
    let leaf = (network::BLOCK * V::LANES).max(2 * UNROLL * V::LANES);
    let log = len.checked_ilog2().unwrap_or(0) as usize + 1;
    let mut budget = len.saturating_mul(log).saturating_mul(work_ratio);
    let mut stack = [(0usize, 0usize); STACK];
    let mut pending = 0;
    // The part `lo..hi` holds the words of ranks `lo..hi`, in some order.
    let (mut lo, mut hi) = (0, len);
    loop {
        // Parts that start at or after `k` hold no word that must be final.
        if lo < k
            && let Some(part) = words.get_mut(lo..hi)
        {
            let needed = k - lo;
            if part.len() <= leaf {
                network::sort::<V>(part, needed.min(part.len()));
            } else if part.len() > budget {
                rounds.fell_back = true;
                finish(part, needed);
            } else {
                budget -= part.len();
                rounds.rounds += 1;
                let pivot = pivot::<V>(part);
                let split = partition::<V>(part, pivot);
                if split == 0 || split >= part.len() {
                    // Every word is at least the pivot: equal words (never packed ones).
                    rounds.fell_back = true;
                    finish(part, needed);
                } else {
                    let mid = lo + split;
                    if mid >= k {
                        // The right side holds ranks from `k` on: only the left one matters.
                        hi = mid;
                        continue;
                    }
                    // Both sides matter: go on with the smaller, keep the larger for later.
                    let (now, later) = if split <= hi - mid {
                        ((lo, mid), (mid, hi))
                    } else {
                        ((mid, hi), (lo, mid))
                    };
                    match stack.get_mut(pending) {
                        Some(slot) => {
                            *slot = later;
                            pending += 1;
                        }
                        // Never for a slice that fits in memory (see `STACK`); sound all the same.
                        None => {
                            if let Some(rest) = words.get_mut(later.0..later.1) {
                                finish(rest, k.saturating_sub(later.0));
                            }
                        }
                    }
                    (lo, hi) = now;
                    continue;
                }
            }
        }
        let Some(next) = pending.checked_sub(1) else { break };
        pending = next;
        (lo, hi) = stack.get(next).copied().unwrap_or((0, 0));
    }
    rounds
}

/// `core`'s sort of what a [`quicksort`] could not split: the first `needed` words of `part` final.
#[inline(always)]
fn finish(part: &mut [u64], needed: usize) {
    if needed < part.len() {
        if let Some(rank) = needed.checked_sub(1) {
            part.select_nth_unstable(rank);
        }
        if let Some(best) = part.get_mut(..needed) {
            best.sort_unstable();
        }
    } else {
        part.sort_unstable();
    }
}

/// The median of [`SAMPLES`] evenly spaced words of `part` (fewer on vectors of two lanes).
#[inline(always)]
fn pivot<V: Vector>(part: &[u64]) -> u64 {
    let vectors = match SAMPLES / V::LANES {
        0 | 1 => 1,
        2 | 3 => 2,
        _ => 4,
    };
    let count = vectors * V::LANES;
    let step = part.len() / count;
    let mut sample = [u64::MAX; 4 * MAX_LANES];
    for (i, word) in sample.iter_mut().take(count).enumerate() {
        *word = part.get(i * step + step / 2).copied().unwrap_or(u64::MAX);
    }
    let mut v = [V::splat(u64::MAX); 4];
    for (i, x) in v.iter_mut().take(vectors).enumerate() {
        if let Some(lanes) = sample.get(i * V::LANES..(i + 1) * V::LANES) {
            // SAFETY: the slice holds LANES u64s, the lane width of 64-bit vectors.
            *x = unsafe { V::load(lanes.as_ptr()) };
        }
    }
    network::kth_smallest(&v, vectors, count / 2)
}

/// Moves the words below `pivot` to the front of `words`, the others after them; returns how many are
/// below. Slices shorter than `2 · UNROLL` vectors are left alone, with 0 returned.
#[inline(always)]
fn partition<V: Vector>(words: &mut [u64], pivot: u64) -> usize {
    let lanes = V::LANES;
    let len = words.len();
    let aside = UNROLL * lanes;
    if len < 2 * aside {
        return 0;
    }
    let limit = V::splat(pivot);
    // Only `base` touches the words from here on (no reference to them is used while it is live).
    let base = words.as_mut_ptr();
    let mut first = [V::splat(0); UNROLL];
    let mut last = [V::splat(0); UNROLL];
    for (i, (a, b)) in first.iter_mut().zip(last.iter_mut()).enumerate() {
        // SAFETY: `len >= 2 · UNROLL · LANES`, so words `i · LANES ..` and `len - (UNROLL - i) · LANES ..`
        // (LANES each, i < UNROLL) are in bounds.
        unsafe {
            *a = V::load(base.add(i * lanes));
            *b = V::load(base.add(len - aside + i * lanes));
        }
    }
    // Unread: `read..unread_end`; the left part is `..left`, the right part `right..`; the slots
    // `left..read` and `unread_end..right` are free, `2 · UNROLL · LANES` of them at the top of each step.
    let (mut left, mut read) = (0, aside);
    let (mut unread_end, mut right) = (len - aside, len);
    while unread_end - read >= aside {
        // From the side with less room: it has at most UNROLL vectors of it, and UNROLL more after the
        // loads, while the other side keeps at least UNROLL.
        let from_left = read - left <= right - unread_end;
        let at = if from_left { read } else { unread_end - aside };
        let mut v = [V::splat(0); UNROLL];
        for (i, x) in v.iter_mut().enumerate() {
            debug_assert!(at + (i + 1) * lanes <= len);
            // SAFETY: `read <= at` and `at + UNROLL · LANES <= unread_end <= len`.
            *x = unsafe { V::load(base.add(at + i * lanes)) };
        }
        if from_left {
            read += aside;
        } else {
            unread_end -= aside;
        }
        for x in v {
            let below = V::bits(x.lt(limit));
            let moved = x.partition_lanes(below);
            debug_assert!(left + lanes <= read && unread_end + lanes <= right && right <= len);
            // SAFETY: both sides have at least a vector of free room (see the loads), so the stores land
            // in `left..read` and `unread_end..right`, inside the slice and on no unread word.
            unsafe {
                moved.store(base.add(left));
                moved.store(base.add(right - lanes));
            }
            let below = below.count_ones() as usize;
            left += below;
            right -= lanes - below;
        }
    }
    // The rest, fewer than UNROLL vectors, is copied out; then `left..right` is all free.
    let mut rest = [0u64; UNROLL * MAX_LANES];
    let rest_len = unread_end - read;
    for (i, word) in rest.iter_mut().take(rest_len).enumerate() {
        // SAFETY: `read + i < unread_end <= len`.
        *word = unsafe { base.add(read + i).read() };
    }
    for &word in rest.iter().take(rest_len) {
        debug_assert!(left < right && right <= len);
        // SAFETY: `left..right` is free and holds at least `2 · UNROLL · LANES` more slots than words
        // still to place, so `left < right <= len`.
        unsafe {
            base.add(left).write(word);
            base.add(right - 1).write(word);
        }
        let below = usize::from(word < pivot);
        left += below;
        right -= 1 - below;
    }
    // Now `right - left == 2 · UNROLL · LANES`, the vectors kept aside: each one's two stores land in the
    // free room (the last one's twice at the same place: `right - LANES == left` by then).
    for x in first.into_iter().chain(last) {
        let below = V::bits(x.lt(limit));
        let moved = x.partition_lanes(below);
        debug_assert!(left + lanes <= right && right <= len);
        // SAFETY: `left + LANES <= right <= len`: the free room is whole vectors, one per vector left.
        unsafe {
            moved.store(base.add(left));
            moved.store(base.add(right - lanes));
        }
        let below = below.count_ones() as usize;
        left += below;
        right -= lanes - below;
    }
    debug_assert_eq!(left, right);
    left
}

/// `words` (one vector's worth) through [`Vector::partition_lanes`] with `bits`, for the tests.
#[cfg(test)]
#[inline(always)]
pub(crate) fn partition_lanes<V: Vector>(words: &[u64], bits: u64) -> Option<[u64; MAX_LANES]> {
    let lanes = words.get(..V::LANES).filter(|_| words.len() == V::LANES)?;
    // SAFETY: the slice holds LANES u64s, the lane width of 64-bit vectors.
    let v: V = unsafe { V::load(lanes.as_ptr()) };
    Some(v.partition_lanes(bits).lanes())
}
