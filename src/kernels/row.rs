//! One contiguous row on an engine's vectors, by the steps the strategy chose for it ([`Method`]):
//! every element a candidate ([`Method::All`]), or the block threshold filter and the short-row paths
//! around it ([`Method::Filter`]):
//!
//! ```text
//! pad:           a row shorter than a block is copied into one, padded with the value that comes last
//! first_best:    K = 1: the best key of the group minima, then the first position holding it
//! bound:         K <= 32: the K-th smallest of the group minima of the row's first 512 (prefix_bound)
//! collect_short: a row of at most 512 collects what is below that bound and orders it once
//! collect_pieces: otherwise the bound of the whole row's pieces, what is below it collected likewise
//! whole_row:     a short row with K > 16 that no bound settles, selected whole on the stack
//! guess:         a long row with K > 16: a cap guessed from the minima of its start, checked at the end
//! filter:        the block filter under the caps (filter::pass); a pass that pushes too many
//!                (ascending data) runs again under a bound sampled from the whole row
//! ```
//! Every step after the first that applies falls through to the next when the data do not suit it (a
//! bound that excludes nothing, more below a bound than the room to collect them); the filter always
//! finishes. The block filter itself, its pools and its tricks are in [`filter`](super::filter) and
//! [`lanes`](super::lanes).
//!
//! A choice that the element type, the kind or the vector decides is written `if const { .. }` (or a
//! `match const { .. }`) wherever it picks between generic calls: rustc compiles the calls of a branch
//! that is a constant false only when the condition itself is a constant, not a local or an expression
//! over one. Without it every engine compiles every kind's filter and tests for every type.

use core::mem::size_of;

use crate::kernels::bound::{minima_bound, pieces_bound, prefix_bound, sample_bound};
use crate::kernels::candidates::{Candidates, Sorter};
use crate::kernels::collect::{SHORT_CAP, collect_below, first_best};
use crate::kernels::entry::Entry;
use crate::kernels::filter::{Outcome, Pass, Pool, Steps, pass};
use crate::kernels::lanes::{
    BF16, FLOAT, HALF, KeyMap, NATIVE_FLOAT, SIGNED, UNROLL, UNSIGNED, from_bits, last_in_order_bits,
};
use crate::simd::vector::{MAX_LANES, Vector};
use crate::types::data_type::DataType;
use crate::types::element::Order;
use crate::types::element::{Element, Sealed};
use crate::types::output::Emit;

/// How a contiguous row is selected on an engine's vectors: `dispatch::strategy` chooses, this module
/// executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    /// Every element a candidate, selected and sorted in the scratch (K at least half the row).
    All,
    /// The block filter and the short-row paths the steps name.
    Filter(Steps),
}

/// Rows whose entries fit this many bytes (512 elements of up to 32 bits, 256 of 64) can be selected
/// whole from the stack ([`Steps::whole_row`]).
pub(crate) const WHOLE_ROW_BYTES: usize = 4096;

/// Selects the first `k` of `row` by `method`, under `cap` where the caller gave one
/// ([`Sequence::with_cap`](crate::types::sequence::Sequence::with_cap)).
///
/// `V32` serves 8-, 16- and 32-bit elements, `V64` 64-bit ones; `S` orders the candidates. `buffer`
/// holds `candidates::capacity(row.len(), k)` entries and `1 <= k <= row.len()`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one private body, inlined into each engine's entry
pub(crate) fn select<V32: Vector, V64: Vector, S: Sorter, T: Element, E: Entry>(
    row: &[T],
    method: &Method,
    k: usize,
    order: Order,
    cap: Option<u64>,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    match method {
        // Filled in bulk: the filter's own filling is one element at a time, which keeps its block loop
        // faster on long rows than a bulk fill inside it would.
        Method::All => select_all::<S, T, E>(buffer, row, k, order, emit),
        Method::Filter(steps) if const { size_of::<T>() == 8 } => {
            by_kind::<V64, S, T, E>(row, steps, k, order, cap, buffer, emit)
        }
        Method::Filter(steps) => by_kind::<V32, S, T, E>(row, steps, k, order, cap, buffer, emit),
    }
}

/// A row of at most [`WHOLE_ROW_BYTES`] of entries, every element a candidate, in a buffer on the stack
/// (the scratch holds 2K entries, fewer than the row's): [`select_all`], as rows with K at least half
/// of n are in the caller's scratch. Inlined into the engine (its frame then takes 4 KiB more): out of
/// line, without the engine's target features, its fill runs scalar. Out of line in unoptimised builds
/// (see `first_best`).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn whole_row<S: Sorter, T: Element, E: Entry>(row: &[T], k: usize, order: Order, emit: &mut Emit<'_, T>) {
    let mut words = [u64::MAX; WHOLE_ROW_BYTES / size_of::<u64>()];
    let entries = E::from_words(&mut words);
    // The strategy checked that the row fits; `get_mut` only keeps the indexing panic-free.
    let Some(entries) = entries.get_mut(..row.len()) else {
        return;
    };
    select_all::<S, T, E>(entries, row, k, order, emit);
}

/// Every element of `row` a candidate in `entries` (at least `row.len()` of them), the best K selected
/// and sorted by `S`: rows with K at least half of n, in the caller's scratch, and [`whole_row`].
#[inline(always)]
fn select_all<S: Sorter, T: Element, E: Entry>(
    entries: &mut [E],
    row: &[T],
    k: usize,
    order: Order,
    emit: &mut Emit<'_, T>,
) {
    let mut candidates = Candidates::<E, S>::sorted_by(entries, k);
    candidates.fill(row, order);
    candidates.report(emit);
}

/// [`filter_row`] for `T`'s kind of lanes, after the padding of [`Steps::pad`].
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one private body, inlined into each engine's entry
fn by_kind<V: Vector, S: Sorter, T: Element, E: Entry>(
    row: &[T],
    steps: &Steps,
    k: usize,
    order: Order,
    cap: Option<u64>,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    let map = KeyMap::of::<T>();
    // A row shorter than a block (33-63 f32 on AVX-512: MoE routing over 40-60 experts) has no block to
    // test and would go through the scalar tail whole, slower than a longer row. It is copied into a
    // block padded with the value that comes last in the order: every real element precedes it or ties
    // with it at a lower position, so with K <= n it is never among the first K. One call site below
    // either way: the filter is inlined once per kind. The copy goes a vector at a time where it can
    // ([`pad_block`]).
    let block = V::LANES * UNROLL;
    let mut padded;
    let row = if V::SPECIALIZE && steps.pad && (V::LANES..block).contains(&row.len()) {
        let pad = last_in_order_bits::<T>(order, &map);
        padded = [from_bits::<T>(pad); MAX_LANES * UNROLL];
        pad_block::<V, T>(row, pad, &mut padded);
        &padded[..block]
    } else {
        row
    };
    // Every condition is a `const` (see the module doc): each engine compiles one kind of filter per type.
    match <T as Sealed>::KEY_FORM {
        UNSIGNED => filter_row::<V, S, T, E, UNSIGNED>(row, steps, k, order, cap, &map, buffer, emit),
        SIGNED => filter_row::<V, S, T, E, SIGNED>(row, steps, k, order, cap, &map, buffer, emit),
        _ if const { size_of::<T>() >= 4 } => {
            filter_row::<V, S, T, E, NATIVE_FLOAT>(row, steps, k, order, cap, &map, buffer, emit)
        }
        _ if const { matches!(T::DATA_TYPE, DataType::F16) && (V::HALF_LANES || V::CONVERTS_HALF) } => {
            filter_row::<V, S, T, E, HALF>(row, steps, k, order, cap, &map, buffer, emit)
        }
        _ if const { matches!(T::DATA_TYPE, DataType::Bf16) && V::WIDENS_BF16 } => {
            filter_row::<V, S, T, E, BF16>(row, steps, k, order, cap, &map, buffer, emit)
        }
        _ => filter_row::<V, S, T, E, FLOAT>(row, steps, k, order, cap, &map, buffer, emit),
    }
}

/// The steps after the padding, in up to three passes of the filter from one call site (the filter
/// inlined once: it is most of an engine's code), every pass under `caller_cap` too where the caller
/// gave one:
///
/// ```text
/// guess:   the 8th smallest of the minima of 4 · LANES groups of the row's first 2n/K elements
///          (branch-free, like the prefix bound), plus one, is a guessed cap
/// guessed: the filter under the guessed cap; if fewer than K elements were below it, the guess
///          excluded part of the answer, and the row is run again without it
/// bailed:  a pass that stopped filtering (ascending data) runs again under a sampled bound
/// ```
/// A streaming filter pushes about K · ln(n / K) elements, each a mispredicted branch out of the hot
/// loop: 460 for rows of 128k with K = 50. On a row whose start is like the rest, the prefix holds
/// about 2 of the row's first K (a Poisson count), and at least 8 of its elements are at or below the
/// guess: the guess is too tight with probability about 0.1%, and the pass under it pushes about 4K.
/// A shorter prefix or a lower rank is too tight too often, and a guess by a pass of the filter pays
/// pushes of its own.
// Unoptimised builds keep each kind's filter a function of its own: they cannot drop the kinds a type
// cannot have, and inlined into the engine's one frame, every kind's locals take over a MiB of stack.
// Without target features of its own it then calls the intrinsics, which only costs speed there.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
#[allow(clippy::too_many_arguments)] // one private body, inlined into each engine's entry
fn filter_row<V: Vector, S: Sorter, T: Element, E: Entry, const FORM: u8>(
    row: &[T],
    steps: &Steps,
    k: usize,
    order: Order,
    caller_cap: Option<u64>,
    map: &KeyMap,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    // The vectors that take the short-row steps; the strategy asks for none of them elsewhere, and the
    // constants keep their code out of the engines that cannot.
    let specialized = V::SPECIALIZE;
    let collects = (S::NETWORK || V::COMPRESSES) && V::SPECIALIZE;
    debug_assert!(
        specialized || !(steps.first_best || steps.whole_row || steps.guess),
        "{steps:?}"
    );
    debug_assert!(collects || !(steps.collect_short || steps.collect_pieces), "{steps:?}");
    // A bound of the largest key excludes nothing (and `bound + 1` would not fit a lane).
    let cap_of = |bound: u64| (bound < map.ones).then(|| bound + 1);
    if specialized && steps.first_best && first_best::<V, T, FORM>(row, order, map, emit) {
        return;
    }
    let prefix_cap = prefix_bound::<V, T, FORM>(row, k, order, map).and_then(cap_of);
    // A cap of 1 (the bound is the smallest key: K NaNs when selecting `Decreasing`, say) leaves the row
    // to the filter, which stops at the K-th such element, where collecting would take them all.
    let short_cap = prefix_cap.filter(|_| collects && steps.collect_short);
    // Not where the prefix bound already found K of the smallest key: the filter stops at the K-th of
    // them, and the pieces' bound would only read the row to find the same.
    let pieces_cap = if collects && steps.collect_pieces && short_cap.is_none() && prefix_cap != Some(1) {
        pieces_bound::<V, T, FORM>(row, k, order, map).and_then(cap_of)
    } else {
        None
    };
    if let Some(cap) = short_cap.or(pieces_cap).filter(|&cap| cap > 1) {
        // Under the pieces' bound at most 4 K: more means the bound did not hold on this row (long runs
        // of one value, say), and the rest is left to the filter or `whole_row` early.
        let capacity = if pieces_cap.is_some() { 4 * k } else { SHORT_CAP };
        if collect_below::<V, S, T, E, FORM, false, T>(row, k, order, map, cap, capacity, emit) {
            return;
        }
    }
    if specialized && steps.whole_row && row.len() * size_of::<E>() <= WHOLE_ROW_BYTES {
        return whole_row::<S, T, E>(row, k, order, emit);
    }
    let both = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    // The bounds every pass keeps: the prefix's and the caller's.
    let sure_cap = both(prefix_cap, caller_cap);
    let prefix = GUESS_PREFIX.saturating_mul(row.len()) / k;
    // No closure around vector code: a closure does not inherit the ISA wrapper's target features, and
    // its intrinsics become calls when LLVM does not inline it.
    let guess = if specialized && steps.guess {
        minima_bound::<V, T, FORM>(row.get(..prefix).unwrap_or(row), GUESS_RANK, order, map, UNROLL).and_then(cap_of)
    } else {
        None
    };
    let mut stage = guess.map_or(Stage::Safe(sure_cap), Stage::Guessed);
    loop {
        let this = match stage {
            Stage::Guessed(guess) => Pass::new(steps, both(prefix_cap, Some(guess)), steps.may_bail, true),
            Stage::Safe(cap) => Pass::new(steps, cap, steps.may_bail, false),
            Stage::Sampled(cap) => Pass::new(steps, cap, false, false),
        };
        stage = match (stage, pass::<V, S, T, E, FORM>(row, k, order, map, &this, buffer, emit)) {
            (_, Outcome::Done) => return,
            (Stage::Guessed(_), Outcome::TooFewBelowCap) => Stage::Safe(sure_cap),
            _ => Stage::Sampled(both(sure_cap, cap_of(sample_bound::<S, T, E>(row, k, order, buffer)))),
        };
    }
}

/// Copies `row` (at least `LANES` and under a block long) into `padded`, which holds the pad. Where `T`
/// fills the lanes and the ISA compresses (AVX-512 on 32-bit elements), a vector at a time, the last
/// part-vector shifted into place in a register and blended with the pad: each of the filter's loads
/// then meets one store of its own size and is forwarded from it. After `memcpy`'s stores (or a masked
/// store, which LLVM makes of a blend with the pad loaded from `padded`) the loads wait for them.
// Out of line in unoptimised builds (see `first_best`).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn pad_block<V: Vector, T: Element>(row: &[T], pad: u64, padded: &mut [T; MAX_LANES * UNROLL]) {
    let n = row.len();
    if size_of::<T>() * V::LANES != size_of::<V>() || !V::COMPRESSES || n < V::LANES {
        padded[..n].copy_from_slice(row);
        return;
    }
    let whole = n - n % V::LANES;
    for at in (0..whole).step_by(V::LANES) {
        // SAFETY: at + LANES <= whole <= n < MAX_LANES · UNROLL; T fills the lanes, so the store writes
        // LANES elements of T.
        unsafe { V::load::<T>(row.as_ptr().add(at)).store(padded.as_mut_ptr().add(at)) };
    }
    if whole < n {
        let rest = n - whole;
        // SAFETY: n >= LANES.
        let last = unsafe { V::load::<T>(row.as_ptr().add(n - V::LANES)) };
        // Its last `rest` lanes first, then the pad.
        let moved = last.compress(u64::MAX << (V::LANES - rest));
        let part = V::select(V::iota().lt(V::splat(rest as u64)), moved, V::splat(pad));
        // SAFETY: whole + LANES <= block <= MAX_LANES · UNROLL, as above.
        unsafe { part.store(padded.as_mut_ptr().add(whole)) };
    }
}

/// Where [`filter_row`] stands.
#[derive(Clone, Copy)]
enum Stage {
    /// Filtering under the guessed cap, which may prove too tight.
    Guessed(u64),
    /// Filtering under sure bounds only.
    Safe(Option<u64>),
    /// Filtering under sure bounds and a sampled one, after a pass that bailed out; never bails.
    Sampled(Option<u64>),
}

/// The prefix the guess reads holds about this many of the row's first K (it is this · n / K long).
const GUESS_PREFIX: usize = 2;

/// The rank of the guess among the prefix's group minima: a Poisson count of mean `GUESS_PREFIX`
/// reaches it with probability about 0.1%, so the guess is too tight only on rows whose start is not
/// like the rest (or on one in a thousand that are).
const GUESS_RANK: usize = 8;
