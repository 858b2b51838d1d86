//! The block threshold filter over one contiguous row, and the pools it pushes survivors into: the
//! sorted array of the best K on the stack for K <= 16 ([`SortedPool`]), the candidate buffer compacted by
//! selection otherwise.
//!
//! ```text
//! for each block of UNROLL vectors of the row:
//!     keys  = key(raw bits) ^ flip                      // CONTRACT.md §2 as lane-wise bit operations
//!     if no key < limit: next block                     // the hot loop: compares and one branch
//!     else push the passing lanes, in position order, into the pool (scalar)
//! limit = min(threshold of the pool, caps); 0 means nothing can enter: stop early
//! ```
//! Tricks:
//! - f32/f64 lanes are not keyed at all: the limit is turned into the float it stands for once, and
//!   the block test is one IEEE compare per vector (`lanes::float_limit`); 32- and 64-bit integers are
//!   compared raw, the key's xor moved into the limit likewise (signed or unsigned, below or above it by
//!   the direction). 8- and 16-bit elements are tested raw in lanes of their width where the ISA has
//!   them (AVX2, AVX-512BW and NEON): f16 and bf16, sign and magnitude, by one or two integer compares
//!   (`lanes::half_limit`), the integers with the key's flips in the limit. The portable lanes compute
//!   those types' keys exactly in 32-bit lanes and compare them unsigned. Passing lanes are re-keyed by
//!   the scalar code, so the lane test may only ever pass too much, never too little;
//! - elements without lanes of their width share 32-bit lanes through a widening load (f16 converted
//!   to f32, bf16 shifted up 16); 64-bit elements use 64-bit lanes;
//! - the hot loop (`LaneLimit::scan`) holds only the compares and a branch: the pool is looked at after
//!   survivors only, the float test is chosen outside it, and 32/64-bit rows (and f16 bits) test two
//!   blocks a branch;
//! - with K > 16 on 8- and 16-bit rows, whose scans are bound by their instructions, the hot loop tests
//!   chunks of 64 units with no branch, a bit each, and the marked units' lanes are pushed after: a
//!   chunk leaves the loop once however many of its units pass, where every exit costs a mispredicted
//!   branch and a restart of the loads;
//! - the row's end is one more full block ending at the last element, its already-seen lanes masked
//!   off (no scalar tail);
//! - K <= 16 keeps the best K sorted on the stack ([`SortedPool`]): a push is a branch-free insertion, and
//!   the threshold is exact from the K-th element on, instead of the shared buffer's compaction every K
//!   pushes;
//! - once the threshold is the smallest key (K NaNs found when selecting `Decreasing`, or K copies of
//!   the best value) no later element can enter, and the scan stops;
//! - adversarial rows (ascending data selected `Decreasing`: every element beats the last K) would push
//!   every element: when pushes outrun a budget the pass stops ([`Outcome::Bailed`]), and the row runs
//!   again under the K-th best of an even sample (`bound::sample_bound`), which lets about one element
//!   in 64 through.

use crate::kernels::candidates::{Candidates, Sorter};
use crate::kernels::entry::{Entry, report};
use crate::simd::vector::Vector;
use crate::types::element::{Element, Order};
use crate::types::output::Emit;

use super::lanes::{CHUNK, KeyMap, LaneLimit, Lanes, UNROLL, scan_unit};

/// The steps of `row::Method::Filter` a row takes (`kernels::row`'s module doc has each). Each is taken only where
/// the engine's vectors have it: the strategy asks for no other, and the kernels compile no other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Steps {
    /// Copy a row shorter than a block into one, padded.
    pub(crate) pad: bool,
    /// K = 1: two passes of group minima, no candidates.
    pub(crate) first_best: bool,
    /// Collect what is below the prefix bound (rows of at most `bound::PREFIX`).
    pub(crate) collect_short: bool,
    /// Collect what is below the bound of the whole row's pieces.
    pub(crate) collect_pieces: bool,
    /// Select the row whole from a buffer on the stack when no bound settled it.
    pub(crate) whole_row: bool,
    /// Guess a cap from the group minima of the row's start.
    pub(crate) guess: bool,
    /// A pass may stop filtering when its pushes outrun their budget, for one under a sampled bound.
    pub(crate) may_bail: bool,
    /// 8- and 16-bit rows are scanned in chunks of units marked without a branch.
    pub(crate) chunked: bool,
    /// Float rows' scans prefetch ahead of the hardware (integer rows' always do).
    pub(crate) prefetch_floats: bool,
}

/// How a pass of [`filter`] ended.
pub(crate) enum Outcome {
    /// The first K were reported.
    Done,
    /// Stopped filtering (too many pushes), nothing reported.
    Bailed,
    /// Fewer than K elements were below a guessed cap, nothing reported.
    TooFewBelowCap,
}

/// How one pass of [`filter`] runs.
#[derive(Clone, Copy)]
pub(crate) struct Pass {
    /// Keys at or above this are not wanted (the caller's, the prefix bound's, a guess or a sample).
    cap: Option<u64>,
    /// The pass may stop filtering when its pushes outrun their budget ([`Outcome::Bailed`]).
    may_bail: bool,
    /// The cap is a guess: fewer than K below it is [`Outcome::TooFewBelowCap`], not an answer.
    guessed: bool,
    /// Scan 8- and 16-bit rows in chunks ([`Steps::chunked`]).
    chunked: bool,
    /// Float rows' scans prefetch ([`Steps::prefetch_floats`]).
    prefetch_floats: bool,
}

impl Pass {
    /// A pass under `cap` with the row's scan steps.
    #[inline(always)]
    pub(crate) fn new(steps: &Steps, cap: Option<u64>, may_bail: bool, guessed: bool) -> Self {
        Pass {
            cap,
            may_bail,
            guessed,
            chunked: steps.chunked,
            prefetch_floats: steps.prefetch_floats,
        }
    }
}

/// One pass of [`filter`] with the pool that suits K: the sorted array for small K, the candidate buffer
/// otherwise.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one private body, inlined into each engine's entry
pub(crate) fn pass<V: Vector, S: Sorter, T: Element, E: Entry, const FORM: u8>(
    row: &[T],
    k: usize,
    order: Order,
    map: &KeyMap,
    this: &Pass,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) -> Outcome {
    if k <= SMALL_K {
        filter::<V, T, SortedPool<E>, FORM>(row, k, order, map, this, SortedPool::new(k), emit)
    } else {
        let candidates = Candidates::<E, S>::sorted_by(buffer, k);
        filter::<V, T, Candidates<'_, E, S>, FORM>(row, k, order, map, this, candidates, emit)
    }
}

/// Pushes `key` if it can still be among the first K.
#[inline(always)]
pub(crate) fn offer(candidates: &mut impl Pool, key: u64, position: usize, cap: Option<u64>) -> bool {
    let passes = limit(candidates, cap).is_none_or(|limit| key < limit);
    if passes {
        candidates.push(key, position);
    }
    passes
}

/// Keys must be strictly below this to enter; `None` while everything enters.
#[inline(always)]
fn limit(candidates: &impl Pool, cap: Option<u64>) -> Option<u64> {
    let threshold = candidates.threshold();
    match (threshold, cap) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// One pass of the block filter over `row`, keys below `this.cap` only (when given). Reports the first
/// K through `emit`, or nothing if the pass may bail and stopped filtering, or if its cap is a guess and
/// fewer than K elements were below it.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one private body, inlined into each ISA wrapper
fn filter<V: Vector, T: Element, P: Pool, const FORM: u8>(
    row: &[T],
    k: usize,
    order: Order,
    map: &KeyMap,
    this: &Pass,
    mut candidates: P,
    emit: &mut Emit<'_, T>,
) -> Outcome {
    let Pass {
        cap,
        may_bail,
        guessed,
        chunked,
        prefetch_floats,
    } = *this;
    let n = row.len();
    let lanes = Lanes::<V>::new(map, order);
    let block = V::LANES * UNROLL;
    let mut position = 0;
    let mut pushed = 0usize;
    let mut prepared = LaneLimit::<V>::none();
    while position < n {
        let key = match limit(&candidates, cap) {
            // Filling the buffer: one element at a time, so that the vectors take over (at any alignment)
            // as soon as the first compaction sets a threshold.
            None if n - position >= block => {
                candidates.push(order.key(row[position]), position);
                position += 1;
                continue;
            }
            // Less than a block left: the scalar tail below.
            None => break,
            // Nothing is below the smallest key: the K kept are final.
            Some(0) => {
                position = n;
                break;
            }
            Some(key) => key,
        };
        if n < block {
            break;
        }
        // The limit in the lanes' terms changes only with the threshold: prepared once per change, not
        // once per block.
        if prepared.key != key {
            prepared = LaneLimit::new::<T, FORM>(key, order, map);
        }
        // Chunks: CHUNK units tested without a branch, a bit each, then the lanes of the units with a
        // bit pushed, and on to the next chunk. Every way out of the hot loop below is a mispredicted
        // branch and a restart of the loads in flight: rows of 128k f16 with K = 50 push about 145
        // elements each, and those exits are a large part of their time. A chunk leaves its loop once,
        // however many of its units pass.
        let unit = scan_unit::<V, T, FORM>();
        // Chunks only on SIMD engines' 8- and 16-bit rows (a constant: the chunked scan is compiled only
        // there), where the strategy asked for them.
        if const { V::SPECIALIZE && size_of::<T>() < 4 } && chunked && position + CHUNK * unit <= n {
            let (chunk, mut tested) = prepared.scan::<T, FORM, true>(row, position, &lanes, prefetch_floats);
            if tested == 0 {
                // Less than a chunk left: the blocks below take the rest.
                position = chunk;
                continue;
            }
            let mut next = chunk + CHUNK * unit;
            'units: while tested != 0 {
                let first = chunk + tested.trailing_zeros() as usize * unit;
                tested &= tested - 1;
                // Units of up to 64 lanes as one mask and one loop over it, where a loop per block has
                // two exits a unit to mispredict; AVX-512's f16 as its two blocks of 64 lanes.
                let parts = if unit <= 64 { 1 } else { unit / block };
                for part in 0..parts {
                    let (start, bits) = if unit <= 64 {
                        // SAFETY: the chunk lies inside the row (checked above), and so does its unit.
                        (first, unsafe { prepared.unit_bits::<T, FORM>(row, first, &lanes) })
                    } else {
                        prepared.block_at::<T, FORM>(row, first + part * block, &lanes)
                    };
                    let (entered, stale) =
                        push_passing(&mut candidates, row, start, bits, order, cap, Some(prepared.key));
                    pushed += entered;
                    if let Some(resume) = stale {
                        next = resume;
                        break 'units;
                    }
                }
            }
            position = next;
            if may_bail && pushed > bail_budget(k, position) {
                return Outcome::Bailed;
            }
            continue;
        }
        // The hot loop: whole blocks against an unchanged limit until one has a lane below it. The pool
        // is looked at only after survivors, not once per block.
        let (mut start, mut bits) = prepared.scan::<T, FORM, false>(row, position, &lanes, prefetch_floats);
        if bits == 0 {
            if start >= n {
                position = n;
                break;
            }
            // The row's end: its last full block, rather than a scalar tail.
            (start, bits) = prepared.block_at::<T, FORM>(row, start, &lanes);
        }
        // A block's stale bits cost at most its lanes: offered, not tested again.
        pushed += push_passing(&mut candidates, row, start, bits, order, cap, None).0;
        if may_bail && pushed > bail_budget(k, start) {
            return Outcome::Bailed;
        }
        position = start + block;
    }
    for (p, &value) in row.iter().enumerate().skip(position) {
        offer(&mut candidates, order.key(value), p, cap);
    }
    if guessed && !candidates.holds_k() {
        return Outcome::TooFewBelowCap;
    }
    candidates.report(emit);
    Outcome::Done
}

/// Offers the elements of `row` from `start` whose bits are set in `bits` (lane `i` is bit `i`), in
/// position order; returns how many entered, and, where the bits were tested under the limit
/// `tested_under`, where to test again if the limit fell below it (a compaction among these pushes)
/// and turned an element away. The rest of the bits, and a chunk's later marks, are then stale, and
/// offered one at a time they cost a rejection each: without testing again, a row of one value would
/// offer every lane of its first chunk.
#[inline(always)]
fn push_passing<T: Element>(
    candidates: &mut impl Pool,
    row: &[T],
    start: usize,
    mut bits: u64,
    order: Order,
    cap: Option<u64>,
    tested_under: Option<u64>,
) -> (usize, Option<usize>) {
    let mut pushed = 0;
    while bits != 0 {
        let p = start + bits.trailing_zeros() as usize;
        bits &= bits - 1;
        // `get` only keeps the indexing panic-free: the bits are of lanes inside `row`.
        if let Some(&value) = row.get(p) {
            let entered = offer(candidates, order.key(value), p, cap);
            pushed += usize::from(entered);
            if !entered && tested_under.is_some() && limit(candidates, cap) != tested_under {
                return (pushed, Some(p + 1));
            }
        }
    }
    (pushed, None)
}

/// Pushes allowed before `position` before the filter counts as failing: random data pushes about
/// `K · ln(position / K)`, ascending data every element.
#[inline(always)]
fn bail_budget(k: usize, position: usize) -> usize {
    8 * k + position / 64
}

/// Where the filter keeps its candidates: the shared buffer, or for small K a sorted array.
pub(crate) trait Pool {
    /// Appends a candidate (positions in increasing order).
    fn push(&mut self, key: u64, position: usize);
    /// The K-th best key so far, once there is one: only keys strictly below it can still enter.
    fn threshold(&self) -> Option<u64>;
    /// Whether K entries were pushed.
    fn holds_k(&self) -> bool;
    /// Reports the best K, in order.
    fn report<T: Copy>(self, emit: &mut Emit<'_, T>);
}

impl<E: Entry, S: Sorter> Pool for Candidates<'_, E, S> {
    #[inline(always)]
    fn push(&mut self, key: u64, position: usize) {
        Candidates::push(self, key, position);
    }
    #[inline(always)]
    fn threshold(&self) -> Option<u64> {
        self.filtering().then(|| Candidates::threshold(self))
    }
    fn holds_k(&self) -> bool {
        Candidates::holds_k(self)
    }

    fn report<T: Copy>(self, emit: &mut Emit<'_, T>) {
        report(self.finish(), emit);
    }
}

/// K at most this keeps its candidates sorted on the stack (`SMALL_K` entries of 16 bytes at most).
pub(crate) const SMALL_K: usize = 16;

/// K at most this needs only the lower half of the sorted pool's slots.
pub(crate) const HALF_K: usize = SMALL_K / 2;

/// The best K so far, sorted: a push is an insertion instead of the buffer's compaction every K
/// pushes, and the threshold is exact from the K-th element on. Short rows with small K (MoE routing:
/// n = 256, K = 8) spend most of their time in those compactions otherwise.
///
/// The slots start as [`Entry::LAST`], so every push is the same branch-free pass over them (an
/// insertion loop's exit is a mispredicted branch per push, which cost more than the moves). K <= 8
/// passes over the lower 8 slots only: the one branch is the same for every push of a call (set by
/// `moe4096x256_k8`). One pool type, not two sized 8 and 16: two would double the filter's code.
pub(crate) struct SortedPool<E> {
    best: [E; SMALL_K],
    /// Entries pushed, up to K: the slots from here on are still `LAST`.
    filled: usize,
    k: usize,
}

impl<E: Entry> SortedPool<E> {
    #[inline(always)]
    pub(crate) fn new(k: usize) -> Self {
        debug_assert!((1..=SMALL_K).contains(&k), "k {k}");
        SortedPool {
            best: [E::LAST; SMALL_K],
            filled: 0,
            k: k.clamp(1, SMALL_K),
        }
    }
}

impl<E: Entry> Pool for SortedPool<E> {
    #[inline(always)]
    fn push(&mut self, key: u64, position: usize) {
        let entry = E::new(key, position);
        // Slot i becomes max(slot i - 1, min(slot i, entry)): its lower neighbour if that is above
        // `entry`, else `entry` if slot i was above it, else itself. The entries above `entry` move up
        // one and the K-th falls out; positions differ, so an equal key stays behind the earlier one.
        // A fixed trip count (8 or 16 slots, whatever K), unrolled into min/max without branches (the
        // slots from K on fill with what falls out, and nothing reads them); from the top down, so that
        // slot i - 1 still holds its old entry when slot i reads it, with no copy of the array.
        let best = &mut self.best;
        if self.k > HALF_K {
            for i in (HALF_K..SMALL_K).rev() {
                best[i] = best[i - 1].greater(best[i].lesser(entry));
            }
        }
        for i in (1..HALF_K).rev() {
            best[i] = best[i - 1].greater(best[i].lesser(entry));
        }
        best[0] = best[0].lesser(entry);
        self.filled = (self.filled + 1).min(self.k);
    }
    #[inline(always)]
    fn threshold(&self) -> Option<u64> {
        (self.filled == self.k).then(|| self.best[self.k - 1].key())
    }
    fn holds_k(&self) -> bool {
        self.filled == self.k
    }
    fn report<T: Copy>(self, emit: &mut Emit<'_, T>) {
        report(self.best.get(..self.filled).unwrap_or_default(), emit);
    }
}
