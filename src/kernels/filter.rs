//! The block threshold filter over one contiguous row (see the [module above](super)), and the pools it
//! pushes survivors into: the sorted array of the best K on the stack for K <= 16 ([`Sorted`]), the
//! candidate buffer compacted by selection otherwise.

use crate::kernels::candidates::{Candidates, Sorter};
use crate::kernels::entry::{Entry, report};
use crate::simd::vector::Vector;
use crate::types::element::{Element, ordered_key};
use crate::types::output::Emit;

use super::lanes::{CHUNK, KeyMap, Lanes, Prepared, UNROLL, scan_unit};

/// How a pass of [`filter`] ended.
pub(super) enum Outcome {
    /// The first K were reported.
    Done,
    /// Stopped filtering (too many pushes), nothing reported.
    Bailed,
    /// Fewer than K elements were below the cap, nothing reported.
    Short,
}

/// One pass of [`filter`] with the pool that suits K: the sorted array for small K, the candidate buffer
/// otherwise.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one private body, inlined into each ISA wrapper
pub(super) fn pass<V: Vector, S: Sorter, T: Element, E: Entry, const KIND: u8>(
    row: &[T],
    k: usize,
    flip: u64,
    map: &KeyMap,
    cap: Option<u64>,
    may_bail: bool,
    whole: bool,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) -> Outcome {
    if k <= SMALL_K {
        filter::<V, T, Sorted<E>, KIND>(row, k, flip, map, cap, may_bail, whole, Sorted::new(k), emit)
    } else {
        let candidates = Candidates::<E, S>::sorted_by(buffer, k);
        filter::<V, T, Candidates<'_, E, S>, KIND>(row, k, flip, map, cap, may_bail, whole, candidates, emit)
    }
}

/// Pushes `key` if it can still be among the first K.
#[inline(always)]
pub(super) fn offer(candidates: &mut impl Pool, key: u64, position: usize, cap: Option<u64>) -> bool {
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

/// One pass of the block filter over `row`, keys below `cap` only (when given). Reports the first K
/// through `emit`, or nothing if `may_bail` and the filter stopped filtering, or if `whole` and fewer
/// than K elements were below `cap`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one private body, inlined into each ISA wrapper
fn filter<V: Vector, T: Element, P: Pool, const KIND: u8>(
    row: &[T],
    k: usize,
    flip: u64,
    map: &KeyMap,
    cap: Option<u64>,
    may_bail: bool,
    whole: bool,
    mut candidates: P,
    emit: &mut Emit<'_, T>,
) -> Outcome {
    let n = row.len();
    let lanes = Lanes::<V>::new(map, flip);
    let block = V::LANES * UNROLL;
    let mut position = 0;
    let mut pushed = 0usize;
    let mut prepared = Prepared::<V>::none();
    // Chunks where they can pay: 8- and 16-bit elements on SIMD engines (a constant: the chunked scan is
    // compiled only there), with K large enough to push elements in bursts, and on CPUs whose exits are
    // cheap only where the survivors are dense.
    let chunked = k >= CHUNKED_MIN_K && (n < SPARSE_RATIO.saturating_mul(k) || !crate::simd::cpu::exits_are_cheap());
    while position < n {
        let key = match limit(&candidates, cap) {
            // Filling the buffer: one element at a time, so that the vectors take over (at any alignment)
            // as soon as the first compaction sets a threshold.
            None if n - position >= block => {
                candidates.push(ordered_key(row[position], flip), position);
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
            prepared = Prepared::new::<T, KIND>(key, flip, map);
        }
        // Chunks: CHUNK units tested without a branch, a bit each, then the lanes of the units with a
        // bit pushed, and on to the next chunk. Every way out of the hot loop below is a mispredicted
        // branch and a restart of the loads in flight: rows of 128k f16 with K = 50 push about 145
        // elements each, and those exits are a large part of their time. A chunk leaves its loop once,
        // however many of its units pass.
        let unit = scan_unit::<V, T, KIND>();
        if const { V::SPECIALIZE && size_of::<T>() < 4 } && chunked && position + CHUNK * unit <= n {
            let (chunk, mut tested) = prepared.scan::<T, KIND, true>(row, position, &lanes);
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
                        (first, unsafe { prepared.unit_bits::<T, KIND>(row, first, &lanes) })
                    } else {
                        prepared.block_at::<T, KIND>(row, first + part * block, &lanes)
                    };
                    let (entered, stale) =
                        push_passing(&mut candidates, row, start, bits, flip, cap, Some(prepared.key));
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
        let (mut start, mut bits) = prepared.scan::<T, KIND, false>(row, position, &lanes);
        if bits == 0 {
            if start >= n {
                position = n;
                break;
            }
            // The row's end: its last full block, rather than a scalar tail.
            (start, bits) = prepared.block_at::<T, KIND>(row, start, &lanes);
        }
        // A block's stale bits cost at most its lanes: offered, not tested again.
        pushed += push_passing(&mut candidates, row, start, bits, flip, cap, None).0;
        if may_bail && pushed > bail_budget(k, start) {
            return Outcome::Bailed;
        }
        position = start + block;
    }
    for (p, &value) in row.iter().enumerate().skip(position) {
        offer(&mut candidates, ordered_key(value, flip), p, cap);
    }
    if whole && !candidates.holds_k() {
        return Outcome::Short;
    }
    candidates.report(emit);
    Outcome::Done
}

/// K from which the filter scans 8- and 16-bit elements in chunks: their scans are bound by their
/// instructions (widening or converting loads, AVX-512's 16-bit compares), not by memory, and a restart
/// wastes the most there. Smaller K keeps a sorted pool whose threshold is exact from the K-th push on,
/// and pushes too few for chunks to pay. 32- and 64-bit elements, read at the memory's speed, gain
/// nothing from chunks and are scanned in blocks. Set by rows of 128k f16 and f32 with K = 8 and 50
/// (`llm32x128k_k50_f16`, `llm32x128k_k50`); see BENCHMARKS.md, decisions.
const CHUNKED_MIN_K: usize = SMALL_K + 1;

/// Rows at least this many times K long have survivors too sparse for chunks on CPUs whose exits are
/// cheap ([`crate::simd::cpu::exits_are_cheap`]): the guessed cap lets about 3 K through, one every 500
/// elements or more, four units of 128 16-bit lanes. The crossover in n / K is measured on 16-bit rows
/// with AVX-512 (`llm32x128k_k50_f16` and longer rows); see BENCHMARKS.md, decisions.
const SPARSE_RATIO: usize = 1536;

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
    flip: u64,
    cap: Option<u64>,
    tested_under: Option<u64>,
) -> (usize, Option<usize>) {
    let mut pushed = 0;
    while bits != 0 {
        let p = start + bits.trailing_zeros() as usize;
        bits &= bits - 1;
        // `get` only keeps the indexing panic-free: the bits are of lanes inside `row`.
        if let Some(&value) = row.get(p) {
            let entered = offer(candidates, ordered_key(value, flip), p, cap);
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
pub(super) trait Pool {
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
pub(super) const HALF_K: usize = SMALL_K / 2;

/// The best K so far, sorted: a push is an insertion instead of the buffer's compaction every K
/// pushes, and the threshold is exact from the K-th element on. Short rows with small K (MoE routing:
/// n = 256, K = 8) spend most of their time in those compactions otherwise.
///
/// The slots start as [`Entry::LAST`], so every push is the same branch-free pass over them (an
/// insertion loop's exit is a mispredicted branch per push, which cost more than the moves). K <= 8
/// passes over the lower 8 slots only: the one branch is the same for every push of a call (set by
/// `moe4096x256_k8`). One pool type, not two sized 8 and 16: two would double the filter's code.
pub(super) struct Sorted<E> {
    best: [E; SMALL_K],
    /// Entries pushed, up to K: the slots from here on are still `LAST`.
    filled: usize,
    k: usize,
}

impl<E: Entry> Sorted<E> {
    #[inline(always)]
    pub(super) fn new(k: usize) -> Self {
        debug_assert!((1..=SMALL_K).contains(&k), "k {k}");
        Sorted {
            best: [E::LAST; SMALL_K],
            filled: 0,
            k: k.clamp(1, SMALL_K),
        }
    }
}

impl<E: Entry> Pool for Sorted<E> {
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
