//! Selection and sorting by vectorised partitioning (quickselect, quicksort) on packed (key, position)
//! words in 64-bit lanes, written once for every ISA: the compactions of the candidate buffer, the step
//! that halves what the sorting network sorts, and the sort of more than 512 entries, on the engine where
//! they beat `core`'s (AVX-512: see `sorter::Network`; the other engines' tests run them too).
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
const WORK_RATIO: usize = 6;

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
const SORT_WORK_RATIO: usize = 2;

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

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;
    use crate::dispatch::backend::{Backend, Engine};
    use crate::kernels::testing::{engines, ns_per_call, xorshift};

    /// The long inputs' length: 100k when optimised (the qemu run), 20k in the unoptimised host build,
    /// whose reference sorts of 100k words are slow.
    const LONG: usize = if cfg!(debug_assertions) { 20_000 } else { 100_000 };

    /// Selects `k` of `words` with `engine` and checks the result against `core`'s selection: the same
    /// `k - 1`-th word, the same set before it (sorted), and still a permutation.
    fn check(backend: Backend, engine: Engine, words: &[u64], k: usize, name: &str) {
        let mut got = words.to_vec();
        if engine.partition_select(&mut got, k).is_none() {
            return;
        }
        let mut want = words.to_vec();
        let what = || std::format!("{} {name} len {} k {k}", backend.name(), words.len());
        if let Some(rank) = k.checked_sub(1).filter(|&r| r < words.len()) {
            want.select_nth_unstable(rank);
            assert_eq!(got[rank], want[rank], "{}: k-th", what());
            let (mut a, mut b) = (got[..rank].to_vec(), want[..rank].to_vec());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{}: the first k", what());
        } else {
            assert_eq!(got, want, "{}: k out of range changes nothing", what());
        }
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "{}: not a permutation", what());
    }

    #[test]
    fn partition_lanes_puts_the_set_lanes_first() {
        for (backend, engine) in engines() {
            for lanes in [2usize, 4, 8] {
                for bits in 0..1u64 << lanes {
                    let words: Vec<u64> = (0..lanes as u64).map(|i| 100 + i).collect();
                    let Some(got) = engine.partition_lanes(&words, bits) else {
                        continue;
                    };
                    let got = &got[..lanes];
                    let want: Vec<u64> = (0..lanes)
                        .filter(|i| bits >> i & 1 == 1)
                        .chain((0..lanes).filter(|i| bits >> i & 1 == 0))
                        .map(|i| words[i])
                        .collect();
                    assert_eq!(got, want, "{} lanes {lanes} bits {bits:#b}", backend.name());
                }
            }
        }
    }

    /// The default on 32-bit lanes too (none of the partition's vectors, but the method is any vector's).
    #[test]
    fn partition_lanes_default_on_32_bit_lanes() {
        type Lanes = crate::simd::portable::U32x8;
        let words: [u32; 8] = core::array::from_fn(|i| 100 + i as u32);
        // Miri: every 17th mask, 0 and all ones among them (all 256 are slow there); the method's one load of
        // 32-bit lanes is the same for each.
        for bits in (0..1u64 << 8).step_by(if cfg!(miri) { 17 } else { 1 }) {
            // SAFETY: `words` holds 8 u32s, the lanes and their width.
            let v: Lanes = unsafe { Lanes::load(words.as_ptr()) };
            let got = v.partition_lanes(bits).lanes();
            let want: Vec<u64> = (0..8)
                .filter(|i| bits >> i & 1 == 1)
                .chain((0..8).filter(|i| bits >> i & 1 == 0))
                .map(|i| u64::from(words[i]))
                .collect();
            assert_eq!(got[..8], want[..], "bits {bits:#b}");
        }
    }

    /// Random words of every length to 600 (fewer under miri): every k to 64 words, then the ends, the
    /// quarters and a few random ranks (every k of every length is too slow for the unoptimised CI build).
    #[test]
    fn selects_every_k_of_random_words() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let lengths: Vec<usize> = if cfg!(miri) {
            // 129 (SMALL + 1) is the shortest the selection partitions: one round of two steps and a
            // rest, then `core` (200 does the same, at a much larger cost under miri).
            [0, 1, 7, 64, 129].into()
        } else {
            (0..=600).collect()
        };
        for (backend, engine) in engines() {
            for &len in &lengths {
                let words: Vec<u64> = (0..len).map(|_| next()).collect();
                // Packed words of few distinct keys (high bits), positions distinct.
                let packed: Vec<u64> = (0..len as u64).map(|i| (next() % 3) << 32 | i).collect();
                let ks: Vec<usize> = if cfg!(miri) {
                    [0, 1, len / 2, len, len + 1].into()
                } else if len <= 64 {
                    (0..=len + 1).collect()
                } else {
                    let ends = [
                        0,
                        1,
                        2,
                        len / 4,
                        len / 2,
                        len / 2 + 1,
                        3 * len / 4,
                        len - 1,
                        len,
                        len + 1,
                    ];
                    ends.into_iter().chain((0..4).map(|_| next() as usize % len)).collect()
                };
                for &k in &ks {
                    check(backend, engine, &words, k, "random");
                    check(backend, engine, &packed, k, "packed");
                }
            }
        }
    }

    /// Long inputs, random and patterned, at a few ranks.
    #[test]
    fn selects_long_and_patterned_inputs() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let lengths: &[usize] = if cfg!(miri) { &[300] } else { &[1000, 4097, 5000, LONG] };
        for &len in lengths {
            let inputs = patterns(len, &mut next);
            for (backend, engine) in engines() {
                for (name, words) in &inputs {
                    // Miri: half only (two ranks are slow there): two rounds or more on 300 words, each going
                    // left or right, and `core` at once where the words are all equal.
                    let ks: Vec<usize> = if cfg!(miri) {
                        [len / 2].into()
                    } else {
                        [1, 2, len / 100 + 1, len / 3, len / 2, len / 2 + 1, len - 1, len].into()
                    };
                    for k in ks {
                        check(backend, engine, words, k, name);
                    }
                }
            }
        }
    }

    /// Random words take a few rounds; equal words stop at once; a budget too small falls back, and
    /// the result is still right.
    #[test]
    fn worst_cases_fall_back() {
        type Lanes = crate::simd::portable::U64x4;
        // Miri: 300 words, still long enough for two rounds and for the budget below to run out past
        // `SMALL`, and one rank a pattern (600 words at four ranks are slow there).
        let len = if cfg!(miri) { 300 } else { LONG };
        let ks: &[usize] = if cfg!(miri) {
            &[len / 3]
        } else {
            &[1, len / 3, len / 2, len]
        };
        let mut next = xorshift(7);
        let random: Vec<u64> = (0..len).map(|_| next()).collect();
        let mut words = random.clone();
        let rounds = quickselect::<Lanes>(&mut words, len / 2, WORK_RATIO);
        assert!(
            !rounds.fell_back && rounds.rounds <= 2 * len.ilog2() as usize,
            "{rounds:?}"
        );
        let n = len as u64;
        let patterns: [Vec<u64>; 4] = [
            (0..n).collect(),
            (0..n).rev().collect(),
            (0..n).map(|i| i.min(n - 1 - i) << 32 | i).collect(),
            (0..n).map(|i| (i % 97) << 32 | i).collect(),
        ];
        for (i, pattern) in patterns.iter().enumerate() {
            for &k in ks {
                let mut words = pattern.clone();
                let rounds = quickselect::<Lanes>(&mut words, k, WORK_RATIO);
                assert!(
                    !rounds.fell_back && rounds.rounds <= 2 * len.ilog2() as usize,
                    "{i} {k} {rounds:?}"
                );
            }
        }
        let mut words = std::vec![5u64; len];
        assert_eq!(
            quickselect::<Lanes>(&mut words, len / 2, WORK_RATIO),
            Rounds {
                rounds: 1,
                fell_back: true
            }
        );
        // A budget of one length: one round, then `core`.
        let mut words = random.clone();
        let rounds = quickselect::<Lanes>(&mut words, len / 3, 1);
        assert_eq!(
            rounds,
            Rounds {
                rounds: 1,
                fell_back: true
            }
        );
        let mut want = random.clone();
        want.select_nth_unstable(len / 3 - 1);
        assert_eq!(words[len / 3 - 1], want[len / 3 - 1]);
        let (mut a, mut b) = (words[..len / 3].to_vec(), want[..len / 3].to_vec());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }

    /// Sorts `k` of `words` with `engine`'s quicksort and checks the first `k` against `core`'s sort of
    /// the whole, and that the whole is still a permutation.
    fn check_sort(backend: Backend, engine: Engine, words: &[u64], k: usize, name: &str) {
        let mut got = words.to_vec();
        if engine.partition_sort(&mut got, k).is_none() {
            return;
        }
        let mut want = words.to_vec();
        want.sort_unstable();
        let k = k.min(words.len());
        let what = || std::format!("{} {name} len {} k {k}", backend.name(), words.len());
        assert_eq!(got[..k], want[..k], "{}: the first k", what());
        got.sort_unstable();
        assert_eq!(got, want, "{}: not a permutation", what());
    }

    /// The patterned inputs of the selection tests, `len` words each.
    fn patterns(len: usize, next: &mut impl FnMut() -> u64) -> Vec<(&'static str, Vec<u64>)> {
        let n = len as u64;
        // Musser's median-of-3 killer, for a pivot rule this module does not use: cheap to keep.
        let mut killer: Vec<u64> = (0..n).collect();
        let half = len / 2;
        for i in 1..=half {
            if i % 2 == 1 {
                killer[i - 1] = i as u64;
                killer[i] = (half + i) as u64;
            }
            killer[half + i - 1] = 2 * i as u64;
        }
        std::vec![
            ("median-of-3 killer", killer),
            ("sawtooth", (0..n).map(|i| (i % 97) << 32 | i).collect()),
            ("random", (0..len).map(|_| next()).collect()),
            ("ascending", (0..n).collect()),
            ("descending", (0..n).rev().collect()),
            ("organ pipe", (0..n).map(|i| i.min(n - 1 - i) << 32 | i).collect()),
            ("equal keys", (0..n).map(|i| 7 << 32 | i).collect()),
            ("equal words", std::vec![42; len]),
            ("two words", (0..len).map(|_| next() & 1).collect()),
            ("all ones", std::vec![u64::MAX; len]),
        ]
    }

    /// Random words of every length to 600 and a few long ones (fewer under miri), at k 1, half, all.
    #[test]
    fn sorts_random_words() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        // Miri: nothing to sort, leaves of one and two vectors, one partition (65, a leaf past), several
        // (129: steps of the loop, parts kept for later), at half (parts past k dropped) and all of it
        // (every leaf), the packed words at half only; lengths to 200 at k 1 too are slow there, most of
        // it the leaves' networks.
        let lengths: Vec<usize> = if cfg!(miri) {
            [0, 1, 7, 65, 129].into()
        } else {
            (0..=600).chain([1000, 5000, LONG]).collect()
        };
        let ks = |len: usize| -> Vec<usize> {
            if cfg!(miri) {
                [len / 2, len].into()
            } else {
                [0, 1, len / 2, len, len + 1].into()
            }
        };
        for (backend, engine) in engines() {
            for &len in &lengths {
                let words: Vec<u64> = (0..len).map(|_| next()).collect();
                let packed: Vec<u64> = (0..len as u64).map(|i| (next() % 3) << 32 | i).collect();
                for k in ks(len) {
                    check_sort(backend, engine, &words, k, "random");
                    if !cfg!(miri) || k < len {
                        check_sort(backend, engine, &packed, k, "packed");
                    }
                }
            }
        }
    }

    /// Patterned inputs, long and short, at a few k.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "quicksort_worst_cases_fall_back runs every pattern through the same quicksort under miri"
    )]
    fn sorts_patterned_inputs() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let lengths: &[usize] = &[129, 257, 1000, 4097, 5000, LONG];
        for &len in lengths {
            for (backend, engine) in engines() {
                for (name, words) in &patterns(len, &mut next) {
                    for k in [1, 2, len / 100 + 1, len / 3, len / 2, len / 2 + 1, len - 1, len] {
                        check_sort(backend, engine, words, k, name);
                    }
                }
            }
        }
    }

    /// Random and patterned words take at most about `log2(n)` partitions a level and never fall back;
    /// equal words and a budget too small fall back to `core`'s sort, and the result is still right.
    #[test]
    fn quicksort_worst_cases_fall_back() {
        type Lanes = crate::simd::portable::U64x4;
        // Miri: 192 words at a quarter, one or two partitions a pattern (the first with no rest), parts
        // kept for later and parts past k dropped, the repeated patterns falling back; 256 at half is
        // slow there, most of it the leaves' networks.
        let len = if cfg!(miri) { 192 } else { LONG };
        let ks: &[usize] = if cfg!(miri) { &[len / 4] } else { &[1, len / 2, len] };
        let mut next = xorshift(11);
        for (name, words) in patterns(len, &mut next) {
            for &k in ks {
                let mut got = words.clone();
                let rounds = quicksort::<Lanes>(&mut got, k, SORT_WORK_RATIO);
                let mut want = words.clone();
                want.sort_unstable();
                assert_eq!(got[..k], want[..k], "{name} {k}");
                let repeated = matches!(name, "equal words" | "two words" | "all ones");
                assert_eq!(rounds.fell_back, repeated, "{name} {k} {rounds:?}");
                // Every partition of a part longer than a leaf splits it: fewer partitions than leaves.
                assert!(rounds.rounds <= 2 * len / 32, "{name} {k} {rounds:?}");
            }
        }
        // A budget of zero: `core` sorts it all.
        let random: Vec<u64> = (0..len).map(|_| next()).collect();
        let mut words = random.clone();
        let rounds = quicksort::<Lanes>(&mut words, len / 3, 0);
        assert_eq!(
            rounds,
            Rounds {
                rounds: 0,
                fell_back: true
            }
        );
        let mut want = random;
        want.sort_unstable();
        assert_eq!(words[..len / 3], want[..len / 3]);
    }

    /// The measurement behind `sorter::Network`'s use of [`select`], with the results checked, on the
    /// SIMD engines: `cargo test --release --lib select_against_core -- --ignored --nocapture`. Random
    /// words, and what a compaction sees when every element enters (ascending data selected `Decreasing`):
    /// the K kept, then K new ones, each below all before it.
    #[test]
    #[ignore]
    fn select_against_core() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for len in [64usize, 128, 192, 256, 384, 512, 1024, 2048, 4096, 10_000, 100_000] {
            let copies = ((1 << 22) / len / 8).clamp(4, 64);
            let random: Vec<Vec<u64>> = (0..copies).map(|_| (0..len).map(|_| next()).collect()).collect();
            let descending: Vec<Vec<u64>> = (0..copies)
                .map(|c| {
                    let n = len as u64;
                    let mut words: Vec<u64> = (0..n).map(|i| (n - i + c as u64) << 32 | i).collect();
                    words[..len / 2].reverse();
                    words
                })
                .collect();
            let reps = (20_000_000 / len).clamp(50, 200_000);
            for (name, data) in [("random", &random), ("entering", &descending)] {
                let time = |f: &mut dyn FnMut(&mut [u64])| ns_per_call(data, reps, f);
                let copy = time(&mut |_| {});
                for k in [len / 2, len / 8] {
                    let core = time(&mut |w| {
                        w.select_nth_unstable(k - 1);
                    });
                    let mut line = std::format!("{name:8} len {len:6} k {k:5}: copy {copy:7.0} core {core:7.0}");
                    for (backend, engine) in
                        engines().filter(|(b, _)| !matches!(b, Backend::Scalar | Backend::Portable))
                    {
                        for words in data {
                            check(backend, engine, words, k, "timed");
                        }
                        let simd = time(&mut |w| {
                            engine.partition_select(w, k);
                        });
                        let ratio = (core - copy) / (simd - copy);
                        line += &std::format!(" {} {simd:7.0} ({ratio:.2}x)", backend.name());
                    }
                    std::println!("{line} ns (copy included)");
                }
            }
        }
    }

    /// The measurement behind `sorter::Network`'s use of [`sort`], with the results checked, on the SIMD
    /// engines: `cargo test --release --lib sort_against_network -- --ignored --nocapture`. Random words,
    /// all of them sorted and the best half; against `core`'s sort (of the best half: select, then sort)
    /// and the network alone (after [`select`] beyond 64 words when k < n).
    #[test]
    #[ignore]
    fn sort_against_network() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for len in [
            96usize, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096, 10_000, 30_000, 100_000,
        ] {
            let copies = ((1 << 22) / len / 8).clamp(4, 64);
            let data: Vec<Vec<u64>> = (0..copies).map(|_| (0..len).map(|_| next()).collect()).collect();
            let reps = (20_000_000 / len).clamp(20, 100_000);
            let time = |f: &mut dyn FnMut(&mut [u64])| ns_per_call(&data, reps, f);
            let copy = time(&mut |_| {});
            for k in [len, len / 2] {
                let core = time(&mut |w| {
                    if k < w.len() {
                        w.select_nth_unstable(k - 1);
                    }
                    w[..k].sort_unstable();
                });
                let mut line = std::format!("len {len:6} k {k:6}: copy {copy:8.0} core {core:8.0}");
                for (backend, engine) in engines().filter(|(b, _)| !matches!(b, Backend::Scalar | Backend::Portable)) {
                    for words in &data {
                        check_sort(backend, engine, words, k, "timed");
                    }
                    let network = time(&mut |w| {
                        if w.len() > 64 && k < w.len() {
                            if w.len() > SMALL {
                                engine.partition_select(w, k);
                            } else {
                                w.select_nth_unstable(k - 1);
                            }
                            engine.network_sort(&mut w[..k], k);
                        } else {
                            engine.network_sort(w, k);
                        }
                    });
                    let quick = time(&mut |w| {
                        engine.partition_sort(w, k);
                    });
                    line += &std::format!(
                        " | {} network {network:8.0} quicksort {quick:8.0} ({:.2}x network, {:.2}x core)",
                        backend.name(),
                        (network - copy) / (quick - copy),
                        (core - copy) / (quick - copy)
                    );
                }
                std::println!("{line} ns");
            }
        }
    }
}
