//! Short rows (up to 512 elements) with K up to 32, and rows shorter than 256 K with K of 9 to 128:
//! everything below the prefix bound (or the pieces' bound) collected in one pass, then ordered once:
//! by the sorting network (AVX-512; AVX2 for K up to 64), by rank (AVX2, up to 32 collected:
//! `sorter::RankSorter`), or by the sorted pool's insertions (K up to 16; `core`'s sort above).

use core::mem::{MaybeUninit, align_of, size_of};

use crate::kernels::candidates::{FEW, Sorter};
use crate::kernels::entry::{Buffer, Entry, report};
use crate::simd::vector::{MAX_LANES, Vector};
use crate::types::element::{Element, Order};
use crate::types::output::Emit;

use super::bound::minima_bound;
use super::filter::{Pool, SMALL_K, SortedPool};
use super::lanes::{BF16, HALF, KeyMap, LaneLimit, Lanes, NATIVE_FLOAT, UNROLL, above_zero_key, keys};

/// Elements below the prefix bound's cap the short-row path collects before it leaves the row to the
/// filter.
pub(crate) const SHORT_CAP: usize = 64;

/// Bytes of entries [`Space`] holds: 512 packed, 256 wide.
pub(crate) const COLLECT_BYTES: usize = 4096;

/// Entries of [`Entry::LAST`] the orderings may read past the collected ones: `Sorter::sort_few` up to
/// `FEW` lanes, the network up to a whole vector (at most `NETWORK_PAD` past the count).
const PAD: usize = FEW;
const NETWORK_PAD: usize = MAX_LANES / 2;

/// Stack for up to [`COLLECT_BYTES`] of entries and their positions, of which only the part a row uses
/// is written: [`PAD`] entries of [`Entry::LAST`] before the collection (the stores long done by the
/// time the orderings load them), the entries collected and the positions that passed. Filling all of
/// it (6 KiB) is a large part of a short row's time; filling the room the row might use (64 entries
/// and their positions) takes two calls of `memset` a row (`moe4096x256_k8`).
struct Space {
    words: [MaybeUninit<u64>; WORDS],
    found: [MaybeUninit<u32>; FOUND],
}

/// Words of entries in [`Space`]: [`COLLECT_BYTES`], and [`NETWORK_PAD`] wide entries more.
const WORDS: usize = COLLECT_BYTES / size_of::<u64>() + 2 * NETWORK_PAD;

/// Slots for the positions that pass the lanes' test: one per entry, and a block more
/// (`compress_blocks` checks its room a block at a time).
const FOUND: usize = COLLECT_BYTES / size_of::<u64>() + UNROLL * MAX_LANES;

impl Space {
    #[inline(always)]
    fn new() -> Self {
        Space {
            words: [const { MaybeUninit::uninit() }; WORDS],
            found: [const { MaybeUninit::uninit() }; FOUND],
        }
    }

    /// Room for `capacity` entries (fewer if [`COLLECT_BYTES`] holds fewer), the first [`PAD`] slots
    /// [`Entry::LAST`], and for the positions that pass the lanes' test (a block more:
    /// `compress_blocks` checks its room a block at a time), none written.
    #[inline(always)]
    fn room<E: Entry>(&mut self, capacity: usize) -> (Collected<'_, E>, &mut [MaybeUninit<u32>]) {
        const { assert!(align_of::<E>() <= align_of::<u64>() && size_of::<E>().is_multiple_of(size_of::<u64>())) };
        let slots = WORDS * size_of::<u64>() / size_of::<E>();
        // SAFETY: `slots` entries of E span at most the words' bytes, E's alignment is at most the
        // words' (asserted above), `MaybeUninit<E>` has no validity requirement, and the words are
        // borrowed mutably for the result's lifetime.
        let slots = unsafe { core::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<MaybeUninit<E>>(), slots) };
        // A constant count: stores, where a count known at run time is a call of `memset`.
        if let Some(first) = slots.first_chunk_mut::<PAD>() {
            for slot in first {
                slot.write(E::LAST);
            }
        }
        let limit = capacity.min(COLLECT_BYTES / size_of::<E>());
        let found = self.found.get_mut(..limit + UNROLL * MAX_LANES).unwrap_or_default();
        (
            Collected {
                slots,
                limit,
                filled: 0,
            },
            found,
        )
    }
}

/// Entries collected into [`Space`] in order: the first `filled` of `slots` are written (only
/// [`push`](Self::push) and [`keep_found`](Self::keep_found) add to it), at most `limit`; the slots from
/// `filled` to [`PAD`] hold [`Entry::LAST`].
struct Collected<'a, E> {
    slots: &'a mut [MaybeUninit<E>],
    limit: usize,
    filled: usize,
}

impl<'a, E: Entry> Collected<'a, E> {
    /// Adds `entry` after the others; false when `limit` are collected.
    #[inline(always)]
    fn push(&mut self, entry: E) -> bool {
        if self.filled >= self.limit {
            return false;
        }
        let Some(slot) = self.slots.get_mut(self.filled) else {
            return false;
        };
        slot.write(entry);
        self.filled += 1;
        true
    }

    /// The elements of `row` at the positions in `found`, keyed, added after the others: by
    /// [`above_zero_key`] where `ABOVE_ZERO` (the lane test passed only floats above +0 and NaNs), else
    /// by the whole transform. All of them, or none and false when more than `limit` would be collected.
    ///
    /// Every one kept, even a key the lane test passed at or above the cap (f16 bits tested against
    /// `x < v` pass negative NaNs): it sorts after the K below the cap the bound guarantees, so it is
    /// never reported. No branch on the key: a short row's ten survivors cost half the instructions they
    /// take with the check (`moe4096x256_k8`); and one check of the room for all, where
    /// [`push`](Self::push) checks each.
    #[inline(always)]
    fn keep_found<T: Element, const ABOVE_ZERO: bool>(
        &mut self,
        row: &[T],
        found: &[u32],
        order: Order,
        map: &KeyMap,
    ) -> bool {
        let end = self.filled + found.len();
        let Some(free) = self.slots.get_mut(self.filled..end).filter(|_| end <= self.limit) else {
            return false;
        };
        // A loop, not an iterator's adapters: those are compiled without the engine's target features,
        // and become calls.
        for (slot, &p) in free.iter_mut().zip(found) {
            let p = p as usize;
            // Every position is in the row (the compress's); were one not, its entry would sort last.
            let entry = match row.get(p) {
                Some(&value) if ABOVE_ZERO => E::new(above_zero_key(value, order, map), p),
                Some(&value) => E::new(order.key(value), p),
                None => E::LAST,
            };
            slot.write(entry);
            self.filled += 1;
        }
        true
    }

    /// The entries collected, then [`Entry::LAST`] up to `pad` past them (fewer where the slots end) or
    /// up to [`PAD`] (the room's), whichever is further.
    #[inline(always)]
    fn padded(self, pad: usize) -> &'a mut [E] {
        let filled = self.filled.min(self.slots.len());
        let end = filled.saturating_add(pad).min(self.slots.len());
        if end > PAD {
            for slot in self.slots.get_mut(filled..end).unwrap_or_default() {
                slot.write(E::LAST);
            }
        }
        let written = self.slots.get_mut(..end.max(PAD)).unwrap_or_default();
        // SAFETY: the slots below `filled` were written by `push` and `keep_found` (the only code that moves
        // `filled`, and by the slots each wrote), those from `filled` to PAD by `Space::room` (the slots
        // have more than PAD: WORDS holds COLLECT_BYTES and more), and those from PAD to `end` just
        // above; `MaybeUninit<E>` has the layout of E.
        unsafe { &mut *(core::ptr::from_mut::<[MaybeUninit<E>]>(written) as *mut [E]) }
    }
}

/// The first `passed` of `found`, each stored by the compress: `compress_blocks` and `collect_below`'s
/// tail store each vector's `LANES` positions from the count so far and move it on by those that passed
/// (at most `LANES`), so every slot below the final count was stored.
#[inline(always)]
fn stored(found: &[MaybeUninit<u32>], passed: usize) -> &[u32] {
    let stored = found.get(..passed).unwrap_or_default();
    // SAFETY: see above: the caller's `passed` is the compress's count; `MaybeUninit<u32>` has the layout
    // of u32.
    unsafe { &*(core::ptr::from_ref::<[MaybeUninit<u32>]>(stored) as *const [u32]) }
}

/// A row the prefix bound read whole (or the pieces' bound, or the exact K-th key of a short row of 8-
/// or 16-bit integers: `COUNTED`), `cap` one above that bound: every element below `cap` collected in
/// one pass, then ordered by the network (`COUNTED`: counted into their order where K is above the
/// network's few). Returns false, having reported nothing, when more than `capacity` are below it
/// (ties with the bound; the filter's running threshold handles those).
///
/// ```text
/// for each block: for each lane below cap: entries[count++] = (key, position)   // no pool to update
/// sort entries[..count] by the network; report the first K
/// ```
/// The bound leaves about K + 3 elements of a random row of 256 with K = 8, so this is one compare per
/// vector and a store per survivor, where the sorted pool spends a 16-slot insertion on each.
// Out of line in unoptimised builds (see `first_best`): with its 6 KiB of `Space` in the filter's
// frame, the debug stack test passed its bound.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn collect_below<
    V: Vector,
    S: Sorter,
    T: Element,
    E: Entry,
    const FORM: u8,
    const COUNTED: bool,
    O: Element,
>(
    row: &[T],
    k: usize,
    order: Order,
    map: &KeyMap,
    cap: u64,
    capacity: usize,
    emit: &mut Emit<'_, O>,
) -> bool {
    let n = row.len();
    let block = V::LANES * UNROLL;
    let mut space = Space::new();
    let (mut collected, found) = space.room::<E>(capacity);
    if n < block {
        for (position, &value) in row.iter().enumerate() {
            if !keep_below(&mut collected, cap, order.key(value), position) {
                return false;
            }
        }
    } else {
        let lanes = Lanes::<V>::new(map, order);
        let prepared = LaneLimit::<V>::new::<T, FORM>(cap, order, map);
        if V::COMPRESSES && n > block {
            // The passing positions compressed a vector at a time, then one loop over them: no branch per
            // block on how many passed (each a likely misprediction). Rows of one block (one such
            // branch) gain nothing, and keep the loop below. The loop rather than one gather of the
            // positions' elements (built into entries in the lanes): the gather waits for every
            // position, where the loop runs ahead on its predicted count. Set by rows of 128 to 512 with
            // K of 4 to 16 (`moe4096x256_k8`); see BENCHMARKS.md, decisions.
            // The whole blocks with each vector's test kept in a mask register; the rest, a block's bits
            // at a time.
            let Some((mut position, mut passed)) = prepared.compress_blocks::<T, FORM>(row, &lanes, found) else {
                return false;
            };
            while position < n {
                let (start, bits) = prepared.block_at::<T, FORM>(row, position, &lanes);
                for v in 0..UNROLL {
                    let Some(free) = found.get_mut(passed..passed + V::LANES) else {
                        return false;
                    };
                    let lane_bits = bits >> (v * V::LANES) & (u64::MAX >> (64 - V::LANES));
                    let positions = V::compress_iota(lane_bits, v).add(V::splat(start as u64));
                    // SAFETY: `free` holds LANES u32s.
                    unsafe { positions.store_positions(free.as_mut_ptr().cast()) };
                    passed += lane_bits.count_ones() as usize;
                }
                position = start + block;
            }
            if passed < k {
                return false;
            }
            let found = stored(found, passed);
            let kept = if const { matches!(FORM, NATIVE_FLOAT | HALF | BF16) } && prepared.above_zero {
                collected.keep_found::<T, true>(row, found, order, map)
            } else {
                collected.keep_found::<T, false>(row, found, order, map)
            };
            if !kept {
                return false;
            }
        } else {
            let mut position = 0;
            while position < n {
                let (start, mut bits) = prepared.block_at::<T, FORM>(row, position, &lanes);
                while bits != 0 {
                    let p = start + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if !keep_below(&mut collected, cap, order.key(row[p]), p) {
                        return false;
                    }
                }
                position = start + block;
            }
        }
    }
    // The bound leaves at least K below `cap`; checked, so that only collected entries are reported.
    let count = collected.filled;
    if count < k {
        return false;
    }
    // 8- and 16-bit keys under their exact K-th key: counted into their order, as `count` does,
    // where the network would sort more than a few (16-bit keys: above AVX2's network, whose 64 the
    // count's two passes over 256 buckets each did not beat).
    let counts = match size_of::<T>() {
        1 => k > SMALL_K,
        2 => k > 64,
        _ => false,
    };
    if COUNTED && counts {
        // The count's copy goes to the room past the collected (16-bit keys).
        return crate::kernels::count::report_gathered(collected.padded(count), count, k, emit);
    }
    let entries = collected.padded(NETWORK_PAD);
    let packed = matches!(E::buffer(entries), Buffer::Packed(_));
    // A few collected: sorted by the sorter's own way for so few, where it has one.
    let mut sorted = [0; FEW];
    if let Buffer::Packed(words) = E::buffer(entries)
        && S::sort_few(words, count, &mut sorted)
    {
        report(sorted.get(..k).unwrap_or_default(), emit);
        return true;
    }
    if !S::NETWORK && packed && k <= SMALL_K {
        // The best K by the sorted pool's branch-free insertions: `core`'s insertion sort of the dozen
        // collected mispredicts on most of them (`moe4096x256_k8`). Not for wide entries: their
        // insertions cost more than the sort.
        let mut best = SortedPool::<E>::new(k);
        for entry in entries.get(..count).unwrap_or_default() {
            best.push(entry.key(), entry.position());
        }
        best.report(emit);
        return true;
    }
    // The `PAD` slots past `count` hold `LAST`: sorting a whole number of vectors needs no padding. Wide
    // entries (and AVX2's, whose network pads its own loads) go to a sort of the collected ones.
    let sorted = if S::NETWORK && packed {
        count.next_multiple_of(MAX_LANES / 2).min(entries.len())
    } else {
        count.max(k)
    };
    let collected = entries.get_mut(..sorted).unwrap_or_default();
    S::sort(collected, k);
    report(collected.get(..k).unwrap_or_default(), emit);
    true
}

/// Adds `key` at `position` to `collected` if it is below `cap`; false when it is full.
/// A function, not a closure: LLVM can leave a closure out of line once the filter around it grows, a
/// call per survivor.
#[inline(always)]
fn keep_below<E: Entry>(collected: &mut Collected<'_, E>, cap: u64, key: u64, position: usize) -> bool {
    // The lane test may pass more than the keys below cap (f16 and bf16 keyed in the lanes do not).
    key >= cap || collected.push(E::new(key, position))
}

/// K = 1 on a row of at least `LANES` elements: the best key (the smallest of the minima of groups that
/// cover the row, the last group overlapping the others), then the first position holding it. Returns
/// false, having reported nothing, on a shorter row.
///
/// ```text
/// best = min(minima of the whole vectors, minima of the last LANES elements)
/// shorter than a block: every vector's keys compared with best, the matches one mask, its lowest bit
/// else: the first block with a lane below best + 1 (the filter's block test), its first such lane
/// ```
/// Two reads of the row (the caller keeps to rows that sit in L1) and no candidates, where the short-row
/// path compresses every block, then collects and sorts the few below the bound, for one answer; and
/// no padding of rows shorter than a block (the copy's stores would stall the loads that follow them).
// Out of line in unoptimised builds, as `filter_row` is: inlined there, its vector temporaries each take
// a stack slot of the frame it joins.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn first_best<V: Vector, T: Element, const FORM: u8>(
    row: &[T],
    order: Order,
    map: &KeyMap,
    emit: &mut Emit<'_, T>,
) -> bool {
    let n = row.len();
    let Some(last) = n.checked_sub(V::LANES) else {
        return false;
    };
    let Some(whole) = minima_bound::<V, T, FORM>(row, 1, order, map, 1) else {
        return false;
    };
    let best = match row.get(last..) {
        Some(tail) if !n.is_multiple_of(V::LANES) => {
            minima_bound::<V, T, FORM>(tail, 1, order, map, 1).map_or(whole, |t| t.min(whole))
        }
        _ => whole,
    };
    let lanes = Lanes::<V>::new(map, order);
    let block = V::LANES * UNROLL;
    if n < block {
        // At most UNROLL vectors, the last overlapping: every key compared with `best`, the matches as
        // one mask of positions, one branch-free answer (a branch per vector mispredicted where the
        // answer lay).
        let best = V::splat(best);
        let mut matches = 0u64;
        for start in (0..n).step_by(V::LANES) {
            let at = start.min(last);
            // SAFETY: at + LANES <= n; T is one of the crate's element types, of the lane's width or less.
            let raw = unsafe { V::load::<T>(row.as_ptr().add(at)) };
            matches |= V::bits(keys::<V, FORM>(raw, &lanes).eq(best)) << at;
        }
        if matches == 0 {
            return false;
        }
        emit.one(0, matches.trailing_zeros() as usize);
        return true;
    }
    // No element is below `best`; at the largest key every element holds it, and the first is 0.
    let Some(cap) = (best < map.ones).then(|| best + 1) else {
        emit.one(0, 0);
        return true;
    };
    // The block test under best + 1, the filter's own: a float compare per vector, a branch per block.
    let prepared = LaneLimit::<V>::new::<T, FORM>(cap, order, map);
    let mut position = 0;
    while position < n {
        let (start, mut bits) = prepared.block_at::<T, FORM>(row, position, &lanes);
        while bits != 0 {
            let p = start + bits.trailing_zeros() as usize;
            // The lane test may pass more than the keys below cap (see `collect_below`).
            if row.get(p).is_some_and(|&value| order.key(value) < cap) {
                emit.one(0, p);
                return true;
            }
            bits &= bits - 1;
        }
        position = start + block;
    }
    false
}
