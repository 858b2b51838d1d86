//! A non-last axis: neighbouring sequences read side by side, one per lane, so that memory is read in
//! order and never transposed. K <= 16 keeps each lane's best K in sorted vector slots ([`column_groups`]),
//! several groups of lanes at once, so that a row of the tensor is read whole:
//!
//! ```text
//! for each group g of LANES sequences (up to 16 groups, the rest another call):
//!     best[g][0..S], at[g][0..S] = its lanes' best keys so far, sorted, and their positions
//!     limit[g] = best[g][S - 1], as a float value for f32 and f64    // float_limits
//! for each position j (a row: element j of every sequence, adjacent in memory):
//!     for each group g: x = row j's vector of g
//!         if j < K or any lane of x passes limit[g]: insert keys(x) at j into every lane of g    // branch-free
//! ```
//! The lanes' best K sit in the last K of `S` slots (2, 4, 8 or 16), the slots before them hold key 0 and
//! never move, so the threshold is always the last slot. A non-last axis costs one vector compare per
//! `LANES` elements, reading memory in order, and one `S`-step vector insertion when some lane's
//! threshold falls, instead of one strided (cache-missing) walk per sequence, or a scalar insertion per
//! passing lane. Stack: `2 · S` vectors a group, 8 KiB at most ([`STATE_BYTES`]).
//!
//! Larger K gives each lane a candidate buffer of its own in the scratch ([`columns_in_buffers`]), the same
//! [`Candidates`] a row's filter uses, and compares each row with the lanes' limits at once:
//!
//! ```text
//! cap[lane] = the K-th smallest of the lane's minima over 2K groups of rows    // minima_caps
//! for each row j: x = keys(row j)
//!     for each lane where x <= cap: push (x, j) into the lane's buffer;
//!         once it compacts, cap = its threshold - 1 (only keys below that can still enter)
//! ```
//! Memory is still read in order, a row of 16 sequences a cache line, and each lane pushes few more
//! than K elements, where one sequence at a time reads a cache line per element (4096 x 256 f32 on
//! axis 0 with K = 50). Scratch: one buffer of `candidates::capacity` entries per lane.

use core::marker::PhantomData;
use core::mem::size_of;

use crate::kernels::candidates::{Candidates, Sorter, capacity};
use crate::kernels::entry::{Buffer, Entry};
use crate::simd::vector::{MAX_LANES, Vector};
use crate::types::element::Order;
use crate::types::element::{Element, FLOAT_KEY, Key, Sealed};
use crate::types::output::ColumnOutputs;
use crate::types::sequence::Columns;

use super::filter::{HALF_K, SMALL_K};
use super::lanes::{FLOAT, KeyMap, Lanes, SIGNED, UNSIGNED, float_limits, keys};

/// Reads the neighbouring sequences `emit` is for (one run) side by side, one per lane, and writes each
/// one's first K to `emit` (a rank of a group's lanes at a time). Returns the sequences taken: a multiple of
/// `V::LANES` (one group of lanes, or with K <= 16 as many groups as fit), or 0 (nothing written) when
/// there are fewer than `V::LANES`, positions do not fit the lanes, or K is above 16 and `buffer` holds
/// fewer than `V::LANES` candidate buffers (`candidates::capacity` entries each).
#[inline(always)]
pub(crate) fn select_columns<V32: Vector, V64: Vector, S: Sorter, T: Element>(
    k: usize,
    order: Order,
    buffer: Buffer<'_>,
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    let columns = *emit.input();
    if const { size_of::<T>() == 8 } {
        columns_by_kind::<V64, S, T>(&columns, k, order, buffer, emit)
    } else {
        columns_by_kind::<V32, S, T>(&columns, k, order, buffer, emit)
    }
}

/// Lanes [`first_best_of_columns`] keeps at once: 256 keys and positions, a few KiB of stack, each row's
/// part a few cache lines long.
const BEST_LANES: usize = 256;

/// Runs of at most this many sequences keep their best in arrays of this size: zeroing 256 lanes' arrays
/// (6 KiB for 64-bit keys) for each call cost narrow inner extents more than their selection where a
/// call is one run (short non-last axes, `benches/sweep.py --set short`).
const FEW_LANES: usize = 16;

/// K = 1 of every sequence `emit` is for, in each of its runs: the first of the best of each, found by
/// one pass over the rows in memory order. Each lane keeps its best key with its position below it in
/// one word, so that the smallest word is the best key's first position and a lane's step is one
/// unsigned minimum: plain code, which the engine's target features vectorise, with no per-row setup
/// and no slots, which short axes pay most for. 64-bit keys keep key and position apart. Returns the sequences taken: all of
/// them, or 0 where positions do not fit 32 bits.
#[inline(always)]
pub(crate) fn first_best_of_columns<T: Element>(order: Order, emit: &mut ColumnOutputs<'_, T>) -> usize {
    let len = emit.input().len();
    if len == 0 || u32::try_from(len).is_err() {
        return 0;
    }
    let position_bits = usize::BITS - (len - 1).leading_zeros();
    let key_bits = <T::Key as Key>::BITS;
    if key_bits + position_bits <= u32::BITS {
        first_best_by_lanes(
            Packed::<u32> {
                order,
                position_bits,
                word: PhantomData,
            },
            emit,
        )
    } else if key_bits <= u32::BITS {
        first_best_by_lanes(
            Packed::<u64> {
                order,
                position_bits,
                word: PhantomData,
            },
            emit,
        )
    } else {
        first_best_by_lanes(Apart { order }, emit)
    }
}

/// How each lane of [`first_best_of_columns`] keeps its best: the lane's state is a word of `best`
/// and one of `at`, arrays the driver owns so that each step is a loop over plain arrays (structure of
/// arrays, which LLVM vectorises). A step reads one pair of arrays and writes the other whole: a lane
/// that keeps its state in place would be a conditional store, which LLVM makes a masked store
/// (`vpmaskmov`, microcoded on AMD, and a stall for the next row's load).
trait RunningBest<T: Element>: Copy {
    type Word: Copy + Default;
    /// The lanes' state from row 0.
    fn start(self, best: &mut [Self::Word], at: &mut [u32], row: &[T]);
    /// The lanes' state after the row at `position`, from `was` into `best` and `at`.
    fn step(self, was: (&[Self::Word], &[u32]), best: &mut [Self::Word], at: &mut [u32], position: u32, row: &[T]);
    /// Each lane's best position into `at`.
    fn finish(self, best: &[Self::Word], at: &mut [u32]);
}

/// A key over its position, in the `position_bits` bits below it, in one word `W`: a step is one
/// unsigned minimum a lane.
#[derive(Clone, Copy)]
struct Packed<W> {
    order: Order,
    position_bits: u32,
    word: PhantomData<W>,
}

/// A word a key and its position share.
trait Word: Copy + Ord + Default {
    /// `key` (of at most `BITS - position_bits` bits) over `position`.
    fn pack(key: u64, position_bits: u32, position: u32) -> Self;
    /// The position under the key.
    fn position(self, position_bits: u32) -> u32;
}

macro_rules! words {
    ($($word:ty),*) => {$(
        impl Word for $word {
            #[inline(always)]
            fn pack(key: u64, position_bits: u32, position: u32) -> Self {
                ((key as $word) << position_bits) | position as $word
            }
            #[inline(always)]
            fn position(self, position_bits: u32) -> u32 {
                (self & ((1 << position_bits) - 1)) as u32
            }
        }
    )*};
}
words!(u32, u64);

impl<T: Element, W: Word> RunningBest<T> for Packed<W> {
    type Word = W;
    #[inline(always)]
    fn start(self, best: &mut [W], _: &mut [u32], row: &[T]) {
        for (best, &x) in best.iter_mut().zip(row) {
            *best = W::pack(self.order.key(x), self.position_bits, 0);
        }
    }
    #[inline(always)]
    fn step(self, (was, _): (&[W], &[u32]), best: &mut [W], _: &mut [u32], position: u32, row: &[T]) {
        for ((best, &was), &x) in best.iter_mut().zip(was).zip(row) {
            *best = was.min(W::pack(self.order.key(x), self.position_bits, position));
        }
    }
    #[inline(always)]
    fn finish(self, best: &[W], at: &mut [u32]) {
        for (at, best) in at.iter_mut().zip(best) {
            *at = best.position(self.position_bits);
        }
    }
}

/// Keys too wide to share a word with their position: a lane that improves takes the row's position
/// as the larger of the two (positions only grow), a maximum rather than a choice, which LLVM would
/// store lane by lane.
#[derive(Clone, Copy)]
struct Apart {
    order: Order,
}

impl<T: Element> RunningBest<T> for Apart {
    type Word = T::Key;
    #[inline(always)]
    fn start(self, best: &mut [T::Key], at: &mut [u32], row: &[T]) {
        for (best, &x) in best.iter_mut().zip(row) {
            *best = self.order.narrow_key(x);
        }
        at.fill(0);
    }
    #[inline(always)]
    fn step(self, (was, was_at): (&[T::Key], &[u32]), best: &mut [T::Key], at: &mut [u32], position: u32, row: &[T]) {
        // Fewer than 16 lanes of integers go a fixed four at a time, which LLVM vectorises: its loop
        // over a run's length vectorises 16 lanes at once only, leaving shorter runs scalar. Floats'
        // keys (a dozen instructions each) lose this way.
        if best.len() < APART_VECTORISED && <T as Sealed>::KEY_FORM != FLOAT_KEY {
            let (best, best_rest) = best.as_chunks_mut::<APART_CHUNK>();
            let (at, at_rest) = at.as_chunks_mut::<APART_CHUNK>();
            let (was, was_rest) = was.as_chunks::<APART_CHUNK>();
            let (was_at, was_at_rest) = was_at.as_chunks::<APART_CHUNK>();
            let (row, row_rest) = row.as_chunks::<APART_CHUNK>();
            let chunks = best.iter_mut().zip(at).zip(was.iter().zip(was_at)).zip(row);
            for (((best, at), (was, was_at)), row) in chunks {
                self.step_lanes((was, was_at), best, at, position, row);
            }
            return self.step_lanes((was_rest, was_at_rest), best_rest, at_rest, position, row_rest);
        }
        self.step_lanes((was, was_at), best, at, position, row);
    }
    #[inline(always)]
    fn finish(self, _: &[T::Key], _: &mut [u32]) {}
}

impl Apart {
    /// [`RunningBest::step`] over however many lanes the slices hold.
    #[inline(always)]
    fn step_lanes<T: Element>(
        self,
        (was, was_at): (&[T::Key], &[u32]),
        best: &mut [T::Key],
        at: &mut [u32],
        position: u32,
        row: &[T],
    ) {
        let was = was.iter().zip(was_at);
        for (((best, at), (&was, &was_at)), &x) in best.iter_mut().zip(at.iter_mut()).zip(was).zip(row) {
            let x = self.order.narrow_key(x);
            let better = u32::from(x < was).wrapping_neg();
            *best = x.min(was);
            *at = was_at.max(position & better);
        }
    }
}

/// Lanes of 64-bit integer keys [`Apart`] steps at once in runs shorter than [`APART_VECTORISED`]: an
/// AVX2 vector's. Set by i64 217x61x2x8 along axis 2 and u64 1000x4x16 along axis 1 with K = 1.
const APART_CHUNK: usize = 4;

/// Runs from this many lanes are stepped in one loop, which LLVM vectorises itself.
const APART_VECTORISED: usize = 16;

/// [`first_best_in_groups`] with as many lanes as the run needs.
#[inline(always)]
fn first_best_by_lanes<T: Element, R: RunningBest<T>>(rule: R, emit: &mut ColumnOutputs<'_, T>) -> usize {
    if emit.input().count() <= FEW_LANES {
        first_best_in_groups::<T, R, FEW_LANES>(rule, emit)
    } else {
        first_best_in_groups::<T, R, BEST_LANES>(rule, emit)
    }
}

/// [`first_best_of_columns`] by `rule`, `LANES` sequences at a time, each run in turn with the same
/// lanes' arrays (set up once a call, where a run may be a few lanes long).
#[inline(always)]
fn first_best_in_groups<T: Element, R: RunningBest<T>, const LANES: usize>(
    rule: R,
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    let [mut best, mut was] = [[R::Word::default(); LANES]; 2];
    let [mut at, mut was_at] = [[0u32; LANES]; 2];
    let mut done = 0;
    let mut run = 0;
    while let Some(mut emit) = emit.run(run) {
        run += 1;
        let columns = *emit.input();
        let (count, len) = (columns.count(), columns.len());
        let mut first = 0;
        while first < count {
            let lanes = (count - first).min(LANES);
            let (mut best, mut at) = (&mut best[..lanes], &mut at[..lanes]);
            let (mut was, mut was_at) = (&mut was[..lanes], &mut was_at[..lanes]);
            let Some(row) = columns.lanes(0, first, lanes) else {
                return done + first;
            };
            rule.start(best, at, row);
            for position in 1..len {
                let Some(row) = columns.lanes(position, first, lanes) else {
                    return done + first;
                };
                (best, was) = (was, best);
                (at, was_at) = (was_at, at);
                rule.step((was, was_at), best, at, position as u32, row);
            }
            rule.finish(best, at);
            emit.write_rank(0, first, at);
            first += lanes;
        }
        done += count;
    }
    done
}

/// [`columns_by_k`] for `T`'s key kind.
#[inline(always)]
fn columns_by_kind<V: Vector, S: Sorter, T: Element>(
    columns: &Columns<'_, T>,
    k: usize,
    order: Order,
    buffer: Buffer<'_>,
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    let map = KeyMap::of::<T>();
    match <T as Sealed>::KEY_FORM {
        UNSIGNED => columns_by_k::<V, S, T, UNSIGNED>(columns, k, order, &map, buffer, emit),
        SIGNED => columns_by_k::<V, S, T, SIGNED>(columns, k, order, &map, buffer, emit),
        _ => columns_by_k::<V, S, T, FLOAT>(columns, k, order, &map, buffer, emit),
    }
}

/// Slots for K up to 4, below [`HALF_K`]: an insertion takes a step a slot, and K of 3 or 4 would pay 8.
const QUARTER_K: usize = HALF_K / 2;
/// Slots for K up to 2 (K = 1 mostly takes [`first_best_of_columns`]).
const EIGHTH_K: usize = QUARTER_K / 2;

/// [`columns_in_slots`] with as few slots as K needs (2, 4, 8 or 16: an insertion takes `S` steps, and
/// on short axes nearly every row inserts), or [`columns_in_buffers`] above 16.
#[inline(always)]
fn columns_by_k<V: Vector, S: Sorter, T: Element, const FORM: u8>(
    columns: &Columns<'_, T>,
    k: usize,
    order: Order,
    map: &KeyMap,
    buffer: Buffer<'_>,
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    if k <= EIGHTH_K {
        return columns_in_slots::<V, T, FORM, EIGHTH_K>(columns, k, order, map, emit);
    }
    if k <= QUARTER_K {
        return columns_in_slots::<V, T, FORM, QUARTER_K>(columns, k, order, map, emit);
    }
    if k <= HALF_K {
        return columns_in_slots::<V, T, FORM, HALF_K>(columns, k, order, map, emit);
    }
    if k <= SMALL_K {
        return columns_in_slots::<V, T, FORM, SMALL_K>(columns, k, order, map, emit);
    }
    if const { !cfg!(simd_arch) } {
        return 0;
    }
    match buffer {
        Buffer::Packed(entries) => columns_in_buffers::<V, S, T, u64, FORM>(columns, k, order, map, entries, emit),
        Buffer::Wide(entries) => columns_in_buffers::<V, S, T, [u64; 2], FORM>(columns, k, order, map, entries, emit),
    }
}

/// [`select_columns`] for K above 16: one candidate buffer per lane in `buffer` (see the module doc).
/// Positions fit the entries: `E` is chosen for the sequence's length, as for one sequence.
#[inline(always)]
fn columns_in_buffers<V: Vector, S: Sorter, T: Element, E: Entry, const FORM: u8>(
    columns: &Columns<'_, T>,
    k: usize,
    order: Order,
    map: &KeyMap,
    buffer: &mut [E],
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    let (lanes, len) = (V::LANES, columns.len());
    let each = capacity(len, k);
    let enough = each.checked_mul(lanes).is_some_and(|needed| needed <= buffer.len());
    if k == 0 || len < k || columns.count() < lanes || !enough {
        return 0;
    }
    let constants = Lanes::<V>::new(map, order);
    let Some(mut caps) = minima_caps::<V, S, T, E, FORM>(columns, k, each, &constants, buffer) else {
        return 0;
    };
    if each == len {
        // Groups of one row: the caps' selection has put each lane's first K at the start of its
        // buffer (minima positioned by group, each group a position), to be sorted. No second pass,
        // and the writes below rank by rank (4096 sequences of 128 with K = 100).
        let mut buffers = buffer.chunks_exact_mut(each).take(lanes);
        let best: [&[E]; MAX_LANES] = core::array::from_fn(|_| {
            let Some(best) = buffers.next().and_then(|entries| entries.get_mut(..k)) else {
                return &[][..];
            };
            S::sort(best, k);
            best
        });
        emit_by_rank(&best, k, emit);
        return lanes;
    }
    let mut buffers = buffer.chunks_exact_mut(each);
    let mut pools: [Option<Candidates<'_, E, S>>; MAX_LANES] = core::array::from_fn(|lane| {
        (lane < lanes)
            .then(|| buffers.next())
            .flatten()
            .map(|b| Candidates::sorted_by(b, k))
    });
    let (mut limit, all) = (V::from_lanes(caps), u64::MAX >> (64 - lanes));
    // Lanes whose pool's threshold is the smallest key: nothing enters them any more.
    let mut closed = 0u64;
    for position in 0..len {
        let Some(x) = column_keys::<V, T, FORM>(columns, position, &constants) else {
            return 0;
        };
        let mut bits = !V::bits(x.gt(limit)) & all & !closed;
        if bits == 0 {
            continue;
        }
        let keys = x.lanes();
        let mut lowered = false;
        while bits != 0 {
            let lane = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if let (Some(Some(pool)), Some(&key), Some(cap)) = (pools.get_mut(lane), keys.get(lane), caps.get_mut(lane))
            {
                pool.push(key, position);
                // Once the pool compacts, only keys below its threshold can enter: at most threshold - 1.
                match pool.threshold().checked_sub(1) {
                    Some(below) if pool.filtering() && below < *cap => (*cap, lowered) = (below, true),
                    None if pool.filtering() => closed |= 1 << lane,
                    _ => {}
                }
            }
        }
        // Only a compaction lowers a cap: one push in K or fewer. (Rebuilding the vector after every
        // push cost a stall on the stores it reads back.)
        if lowered {
            limit = V::from_lanes(caps);
        }
    }
    emit_by_rank(
        &pools.map(|pool| pool.map(Candidates::finish).unwrap_or_default()),
        k,
        emit,
    );
    lanes
}

/// Writes each lane's first `k` of `best` (sorted) to `emit`, rank by rank as the column filter does: the
/// lanes' outputs of one rank are neighbours (on a non-last axis of the outputs too), where a lane's
/// ranks lie a stride apart (written lane by lane, the writes are a large part of the time of 4096
/// sequences of 256 with K = 100).
#[inline(always)]
fn emit_by_rank<T: Copy, E: Entry>(best: &[&[E]; MAX_LANES], k: usize, emit: &mut ColumnOutputs<'_, T>) {
    for rank in 0..k {
        for (lane, entries) in best.iter().enumerate() {
            if let Some(entry) = entries.get(rank) {
                emit.write(lane, rank, entry.position());
            }
        }
    }
}

/// Rows per group of [`minima_caps`] at most.
const GROUP_ROWS: usize = 64;

/// Each lane's cap: the K-th smallest of its minima over `groups` (`>= k`, at most the length) runs
/// of consecutive rows, picked in `buffer` (one run of `groups` entries per lane). The groups are
/// disjoint, so at least K elements of the lane's sequence have a key at most its cap, and none with a
/// larger key is among its first K. On random rows of 4096 with K = 50 about 70 elements of each lie
/// at or below it, where a pool filling from nothing takes 2K of them and K · ln(n / 2K) more.
/// `None` if `side` has fewer than `V::LANES` sequences (nothing is read).
#[inline(always)]
fn minima_caps<V: Vector, S: Sorter, T: Element, E: Entry, const FORM: u8>(
    columns: &Columns<'_, T>,
    k: usize,
    groups: usize,
    constants: &Lanes<V>,
    buffer: &mut [E],
) -> Option<[u64; MAX_LANES]> {
    // Groups of at most GROUP_ROWS rows: on long sequences the caps come from their start. Each group
    // has `rows` rows, the first `longer` one more.
    let len = columns.len().min(groups.saturating_mul(GROUP_ROWS));
    let (rows, longer) = (len / groups, len % groups);
    let mut start = 0;
    for group in 0..groups {
        let end = start + rows + usize::from(group < longer);
        let mut minimum = V::splat(u64::MAX);
        for position in start..end {
            minimum = minimum.min(column_keys::<V, T, FORM>(columns, position, constants)?);
        }
        start = end;
        for (lane, &key) in minimum.lanes().iter().enumerate().take(V::LANES) {
            if let Some(slot) = buffer.get_mut(lane * groups + group) {
                *slot = E::new(key, group);
            }
        }
    }
    let mut caps = [u64::MAX; MAX_LANES];
    for (cap, minima) in caps.iter_mut().zip(buffer.chunks_exact_mut(groups)).take(V::LANES) {
        S::select(minima, k);
        *cap = minima.get(k - 1).map_or(u64::MAX, |entry| entry.key());
    }
    Some(caps)
}

/// Rows ahead of the current one that the column filter asks the cache for: its rows are a stride apart,
/// where the hardware prefetchers of some cores do not follow.
const COLUMNS_AHEAD: usize = 8;

/// Rows ahead of the current one whose part [`column_groups`] reads it asks the cache for, every line of
/// it (up to 16 groups of lanes: 512 bytes of f32 on AVX2, 1 KiB on AVX-512), where that part is not
/// the whole row: the first line alone, 8 rows on, leaves the core waiting on the rest. Set by
/// `axis0_4096x256_k8` (f32, i32 and f64 gain; f16 and u8, whose part is 256 or 128 bytes, do not
/// change); see BENCHMARKS.md, decisions. Whole rows back to back are one stream, which the hardware
/// prefetchers follow: there every line costs time, and the first line alone, `COLUMNS_AHEAD` rows on,
/// stays.
const GROUPS_AHEAD: usize = 4;

/// [`select_columns`] for one key kind with `S` slots (see the module doc): [`column_groups`] with as many
/// groups as [`STATE_BYTES`] holds (16, 8 or 4) where SIMD engines are. One group elsewhere (firmware's
/// stack and code size), and where `side` has fewer than two groups of sequences or short ones (the
/// tiles of tiny rows: the slots of 16 groups take longer to clear than their rows to read).
#[inline(always)]
fn columns_in_slots<V: Vector, T: Element, const FORM: u8, const S: usize>(
    columns: &Columns<'_, T>,
    k: usize,
    order: Order,
    map: &KeyMap,
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    if const { !cfg!(simd_arch) } || columns.count() < 2 * V::LANES || columns.len() < 8 * S {
        return column_groups::<V, T, FORM, S, 1, KEYS>(columns, k, order, map, emit);
    }
    if const { 16 * 2 * S * size_of::<V>() <= STATE_BYTES } {
        columns_with_test::<V, T, FORM, S, 16>(columns, k, order, map, emit)
    } else if const { 8 * 2 * S * size_of::<V>() <= STATE_BYTES } {
        columns_with_test::<V, T, FORM, S, 8>(columns, k, order, map, emit)
    } else {
        columns_with_test::<V, T, FORM, S, 4>(columns, k, order, map, emit)
    }
}

/// [`column_groups`] with the lane test for `T`: f32 and f64 compared as floats with each lane's limit
/// value, the rest as keys.
#[inline(always)]
fn columns_with_test<V: Vector, T: Element, const FORM: u8, const S: usize, const G: usize>(
    columns: &Columns<'_, T>,
    k: usize,
    order: Order,
    map: &KeyMap,
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    if const { FORM != FLOAT || size_of::<T>() < 4 } {
        column_groups::<V, T, FORM, S, G, KEYS>(columns, k, order, map, emit)
    } else if order.is_increasing() {
        column_groups::<V, T, FORM, S, G, FLOAT_AT_MOST>(columns, k, order, map, emit)
    } else {
        column_groups::<V, T, FORM, S, G, FLOAT_ABOVE>(columns, k, order, map, emit)
    }
}

/// The stack the groups' slots take at most: `2 · S` vectors a group, so 8 groups of 8 slots or 4 of 16
/// on AVX-512, 16 of 8 or 8 of 16 on AVX2 (what keeps a call within the 16 KiB `tests/stack.rs` checks).
/// One group at a time reads a cache line a row and stalls on its load; more groups read the row
/// whole. Set by `axis0_4096x256_k8`; see BENCHMARKS.md, decisions.
const STATE_BYTES: usize = 8 * 1024;

// How [`column_groups`] tests a row's lanes against the lanes' limits (f32 and f64 as floats: one compare
// where the keys take seven instructions).
/// The keys below the limit keys.
const KEYS: u8 = 0;
/// Floats at most the limit values (`float_limits`, `flip == 0`).
const FLOAT_AT_MOST: u8 = 1;
/// Floats not at most the limit values, NaN included (`float_limits`, `flip != 0`).
const FLOAT_ABOVE: u8 = 2;

/// The column filter on up to `G` groups of `V::LANES` neighbouring sequences at once, as many as `columns`
/// has (see the module doc): the groups' part of each row is read whole and in order, and a group's `S`
/// slots move only when one of its lanes passes its limit (`TEST`, a superset of the keys below the last
/// slot's: `insert` leaves the rest where they are). Returns the sequences taken.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn column_groups<V: Vector, T: Element, const FORM: u8, const S: usize, const G: usize, const TEST: u8>(
    columns: &Columns<'_, T>,
    k: usize,
    order: Order,
    map: &KeyMap,
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    let lanes = V::LANES;
    let groups = (columns.count() / lanes).min(G);
    let width = groups * lanes;
    // 32-bit lanes hold positions below 2^32.
    let positions_fit = size_of::<V>() == 8 * lanes || u32::try_from(columns.len()).is_ok();
    if !(1..=S).contains(&k) || groups == 0 || columns.len() < k || !positions_fit {
        return 0;
    }
    let constants = Lanes::<V>::new(map, order);
    // Slots S - K.. hold the best K; the ones before hold the smallest key, which no element passes.
    let first = S - k;
    let (mut best, mut at) = ([[V::splat(0); S]; G], [[V::splat(0); S]; G]);
    let mut limits = [V::splat(0); G];
    // The first K rows fill slots `first` on: every lane enters.
    for position in 0..k {
        let Some(row) = columns.row(position, width) else {
            return 0;
        };
        for g in 0..groups {
            // SAFETY: `row` holds `groups · LANES` elements of T, one of the crate's element types.
            let x = keys::<V, FORM>(unsafe { V::load(row.as_ptr().add(g * lanes)) }, &constants);
            insert(&mut best[g], &mut at[g], x, position, first + position);
        }
    }
    for (limit, best) in limits.iter_mut().zip(&best) {
        *limit = lane_limits::<V, TEST>(best[S - 1], order, map);
    }
    // The part of each row read is not all of it (see `GROUPS_AHEAD`).
    let gaps = columns.stride() != width as isize;
    for position in k..columns.len() {
        let Some(row) = columns.row(position, width) else {
            return 0;
        };
        if gaps {
            if let Some(ahead) = columns.row(position + GROUPS_AHEAD, width) {
                crate::simd::vector::prefetch_all(ahead);
            }
        } else if let Some(ahead) = columns.row(position + COLUMNS_AHEAD, lanes) {
            crate::simd::vector::prefetch(ahead.as_ptr());
        }
        for g in 0..groups {
            // SAFETY: `row` holds `groups · LANES` elements of T, one of the crate's element types.
            let raw = unsafe { V::load(row.as_ptr().add(g * lanes)) };
            let pass = match TEST {
                FLOAT_AT_MOST => raw.float_le(limits[g]),
                FLOAT_ABOVE => raw.float_nle(limits[g]),
                _ => keys::<V, FORM>(raw, &constants).lt(limits[g]),
            };
            if V::any(pass) {
                insert(&mut best[g], &mut at[g], keys::<V, FORM>(raw, &constants), position, S);
                limits[g] = lane_limits::<V, TEST>(best[g][S - 1], order, map);
            }
        }
    }
    for rank in first..S {
        for (g, at) in at.iter().take(groups).enumerate() {
            emit.write_rank(rank - first, g * lanes, &at[rank].lanes()[..lanes]);
        }
    }
    width
}

/// What `TEST` compares a group's lanes with, `threshold` being their last slot's keys.
#[inline(always)]
fn lane_limits<V: Vector, const TEST: u8>(threshold: V, order: Order, map: &KeyMap) -> V {
    match TEST {
        KEYS => threshold,
        _ => float_limits(threshold, order, map),
    }
}

/// The keys of element `position` of the first `V::LANES` sequences of `side`; `None` if it has fewer.
#[inline(always)]
fn column_keys<V: Vector, T: Element, const FORM: u8>(
    columns: &Columns<'_, T>,
    position: usize,
    constants: &Lanes<V>,
) -> Option<V> {
    // Checked once per row: the load below needs nothing else.
    let row = columns.row(position, V::LANES)?;
    if let Some(ahead) = columns.row(position + COLUMNS_AHEAD, V::LANES) {
        crate::simd::vector::prefetch(ahead.as_ptr());
    }
    // SAFETY: `row` holds V::LANES elements of T, one of the crate's element types.
    Some(keys::<V, FORM>(unsafe { V::load(row.as_ptr()) }, constants))
}

/// Inserts the keys `x` at `position` into each lane's sorted `best` (with positions `at`), whose slots
/// from `filled` on are empty.
///
/// Slot i takes its lower neighbour where x went below that, x where x went below slot i only, else
/// keeps its own: the slots above x move up one and the last falls out. Strict compares keep an equal
/// key behind the earlier one (ties by position). From the top down, so that each slot reads its
/// neighbour's old contents.
#[inline(always)]
fn insert<V: Vector, const S: usize>(best: &mut [V; S], at: &mut [V; S], x: V, position: usize, filled: usize) {
    let p = V::splat(position as u64);
    for i in (1..S).rev() {
        let (here, lower) = (below(best, x, i, filled), below(best, x, i - 1, filled));
        best[i] = V::select(lower, best[i - 1], V::select(here, x, best[i]));
        at[i] = V::select(lower, at[i - 1], V::select(here, p, at[i]));
    }
    let here = below(best, x, 0, filled);
    best[0] = V::select(here, x, best[0]);
    at[0] = V::select(here, p, at[0]);
}

/// The lanes where `x` goes below slot `i`: all of them if the slot is empty (from `filled` on).
/// (A function, not a closure: a closure the compiler declines to inline loses the engine's target
/// features, and each intrinsic in it becomes a call.)
#[inline(always)]
fn below<V: Vector, const S: usize>(best: &[V; S], x: V, i: usize, filled: usize) -> V::Mask {
    if i >= filled { x.eq(x) } else { x.lt(best[i]) }
}
