//! A non-last axis: neighbouring sequences read side by side, one per lane, each lane's best K kept in
//! registers ([`side_filter`]), so that memory is read in order and never transposed.
//!
//! ```text
//! best[0..S], at[0..S] = each lane's best keys so far, sorted, and their positions   // in registers
//! for each position j (one vector: element j of every lane, adjacent in memory):
//!     x = keys(row j)
//!     if j < K or any lane of x < best[S - 1]: insert x at j into every lane    // branch-free
//! ```
//! The lanes' best K sit in the last K of `S` slots (8 or 16), the slots before them hold key 0 and
//! never move, so the threshold is always the last slot. A non-last axis costs one vector compare per
//! `LANES` elements, reading memory in order, and one `S`-step vector insertion when some lane's
//! threshold falls, instead of one strided (cache-missing) walk per sequence, or a scalar insertion per
//! passing lane. Stack: `2 · S` vectors (at most 2 KiB).

use core::mem::size_of;

use crate::element::{Element, Sealed};
use crate::sequence::Side;
use crate::vector::Vector;

use super::filter::{HALF_K, SMALL_K};
use super::lanes::{FLOAT, KeyMap, Lanes, SIGNED, UNSIGNED, keys};

/// Reads `V::LANES` neighbouring sequences of `side` side by side, one per lane, and reports each one's
/// first K through `emit(lane, rank, position)`. Returns the sequences taken: `V::LANES`, or 0 (nothing
/// reported) when `side` has fewer, `k > SMALL_K`, or positions do not fit the lanes.
#[inline(always)]
pub(crate) fn select_side<V32: Vector, V64: Vector, T: Element>(
    side: &Side<'_, T>,
    k: usize,
    flip: u64,
    emit: &mut dyn FnMut(usize, usize, usize),
) -> usize {
    let map = KeyMap::of::<T>();
    match (size_of::<T>() == 8, <T as Sealed>::KEY_FORM) {
        (true, UNSIGNED) => side_slots::<V64, T, UNSIGNED>(side, k, flip, &map, emit),
        (true, SIGNED) => side_slots::<V64, T, SIGNED>(side, k, flip, &map, emit),
        (true, _) => side_slots::<V64, T, FLOAT>(side, k, flip, &map, emit),
        (false, UNSIGNED) => side_slots::<V32, T, UNSIGNED>(side, k, flip, &map, emit),
        (false, SIGNED) => side_slots::<V32, T, SIGNED>(side, k, flip, &map, emit),
        (false, _) => side_slots::<V32, T, FLOAT>(side, k, flip, &map, emit),
    }
}

/// [`side_filter`] with as few slots as K needs: 8 (half the registers of AVX-512 for both arrays)
/// or 16.
#[inline(always)]
fn side_slots<V: Vector, T: Element, const KIND: u8>(
    side: &Side<'_, T>,
    k: usize,
    flip: u64,
    map: &KeyMap,
    emit: &mut dyn FnMut(usize, usize, usize),
) -> usize {
    if k <= HALF_K {
        side_filter::<V, T, KIND, HALF_K>(side, k, flip, map, emit)
    } else {
        side_filter::<V, T, KIND, SMALL_K>(side, k, flip, map, emit)
    }
}

/// Rows ahead of the current one that the side filter asks the cache for: its rows are a stride apart,
/// where the hardware prefetchers of some cores (a Xeon here) do not follow.
const SIDE_AHEAD: usize = 8;

/// [`select_side`] for one key kind with `S` slots (see the module doc).
#[inline(always)]
fn side_filter<V: Vector, T: Element, const KIND: u8, const S: usize>(
    side: &Side<'_, T>,
    k: usize,
    flip: u64,
    map: &KeyMap,
    emit: &mut dyn FnMut(usize, usize, usize),
) -> usize {
    let lanes = V::LANES;
    // 32-bit lanes hold positions below 2^32.
    let positions_fit = size_of::<V>() == 8 * lanes || u32::try_from(side.len()).is_ok();
    if !(1..=S).contains(&k) || side.count() < lanes || side.len() < k || !positions_fit {
        return 0;
    }
    let constants = Lanes::<V>::new(map, flip);
    // Slots S - K.. hold the best K; the ones before hold the smallest key, which no element passes.
    let first = S - k;
    let (mut best, mut at) = ([V::splat(0); S], [V::splat(0); S]);
    // The first K rows fill slots `first` on: every lane enters.
    for position in 0..k {
        let Some(x) = side_keys::<V, T, KIND>(side, position, &constants) else {
            return 0;
        };
        insert(&mut best, &mut at, x, position, first + position);
    }
    for position in k..side.len() {
        let Some(x) = side_keys::<V, T, KIND>(side, position, &constants) else {
            return 0;
        };
        if V::any(x.lt(best[S - 1])) {
            insert(&mut best, &mut at, x, position, S);
        }
    }
    for (rank, slot) in at.iter().skip(first).enumerate() {
        for (lane, &position) in slot.lanes().iter().take(lanes).enumerate() {
            emit(lane, rank, position as usize);
        }
    }
    lanes
}

/// The keys of element `position` of the first `V::LANES` sequences of `side`; `None` if it has fewer.
#[inline(always)]
fn side_keys<V: Vector, T: Element, const KIND: u8>(
    side: &Side<'_, T>,
    position: usize,
    constants: &Lanes<V>,
) -> Option<V> {
    // Checked once per row: the load below needs nothing else.
    let row = side.row(position, V::LANES)?;
    if let Some(ahead) = side.row(position + SIDE_AHEAD, V::LANES) {
        crate::vector::prefetch(ahead.as_ptr());
    }
    // SAFETY: `row` holds V::LANES elements of T, one of the crate's element types.
    Some(keys::<V, KIND>(unsafe { V::load(row.as_ptr()) }, constants))
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
