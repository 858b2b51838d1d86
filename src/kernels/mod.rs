//! The vector algorithms, each written once over [`Vector`] for every ISA, and the choice among them
//! per contiguous row ([`select`]; a non-last axis goes to [`side`]). The main one is the block
//! threshold filter:
//!
//! ```text
//! for each block of UNROLL vectors of a contiguous row:
//!     keys  = key(raw bits) ^ flip                      // CONTRACT.md §2 as lane-wise bit operations
//!     if no key < limit: next block                     // the hot loop: compares and one branch
//!     else push the passing lanes, in position order, into the candidate buffer (scalar)
//! limit = min(threshold of the buffer, caps); 0 means nothing can enter: stop early
//! ```
//! Tricks:
//! - f32/f64 lanes are not keyed at all: the limit is turned into the float it stands for once, and
//!   the block test is one IEEE compare per vector ([`float_limit`](lanes::float_limit)); 32- and
//!   64-bit integers are compared raw, the key's xor moved into the limit likewise (signed or unsigned,
//!   below or above it by the direction). 8- and 16-bit elements are tested raw in lanes of their
//!   width where the ISA has them (AVX2, AVX-512BW and NEON: [`Vector::HALF_LANES`],
//!   [`Vector::BYTE_LANES`]): f16 and bf16, sign and magnitude, by one or two integer compares
//!   ([`half_limit`](lanes::half_limit)), the integers with the key's flips in the limit. The portable
//!   lanes compute those types' keys exactly in 32-bit lanes (sign → flip, -0 → +0, NaN → all ones;
//!   signed: sign bit flipped) and compare them unsigned.
//!   Passing lanes are re-keyed by the scalar code, so the lane test may only ever pass too much, never
//!   too little;
//! - elements without lanes of their width share 32-bit lanes through a widening load (f16 converted
//!   to f32, bf16 shifted up 16, where the bounds compare them as floats); 64-bit elements use 64-bit
//!   lanes;
//! - the hot loop ([`Prepared::scan`](lanes::Prepared::scan)) holds only the compares and a branch: the
//!   pool is looked at after survivors only, the float test is chosen outside it, and 32/64-bit rows
//!   (and f16 bits) test two blocks a branch;
//! - with K > 16 on 8- and 16-bit rows, whose scans are bound by their instructions, the hot loop tests
//!   chunks of 64 units with no branch, a bit each, and the marked units' lanes are pushed after: a
//!   chunk leaves the loop once however many of its units pass, where every exit costs a mispredicted
//!   branch and a restart of the loads;
//! - the row's end is one more full block ending at the last element, its already-seen lanes masked
//!   off (no scalar tail: on 256-element rows it could be a fifth of the row); a row shorter than a
//!   block is padded to one with the value that comes last in the order ([`by_kind`]);
//! - K <= 16 keeps the best K sorted on the stack ([`Sorted`](filter::Sorted)): a push is a branch-free insertion,
//!   and the threshold is exact from the K-th element on, instead of the shared buffer's compaction
//!   every K pushes;
//! - K <= 16 also starts from a bound instead of from nothing: the K-th smallest of the lane-wise
//!   minima of the row's first 512 elements (16 groups, 32 on short rows with K > 8, up to 64 with
//!   K of 17 to 32: [`prefix_bound`]),
//!   so that a short row's first blocks do not pass nearly every element; rows of at most 512 then
//!   collect what is below the bound and order it once ([`collect_below`]: AVX-512 by the network, AVX2,
//!   whose compress is a table of permutes, by the sorted pool's insertions);
//! - other rows shorter than 256 K with K of 9 to 128 (64 for 64-bit entries) take a bound over the
//!   whole row: its group minima in up to 8 interleaved sets, the largest of each set's K_s-th smallest
//!   ([`pieces_bound`]); what is below it (about 1.4 K elements) is collected and ordered likewise, in
//!   at most 4 K entries of stack, where the filter would push K · ln(n / K) elements through
//!   mispredicted branches;
//! - short rows with K > 16 that neither bound settles are selected whole from a buffer of 4 KiB on
//!   the stack ([`whole_row`]): the filter would pass most of their elements;
//! - short rows (64 to 512) of 8- and 16-bit integers with a large K (8-bit above 20, 16-bit from n/6,
//!   up to n/2; 8-bit rows up to 2048 where they would be counted, 16-bit up to 1024 from n/12) find
//!   their exact K-th key by bisection over the key's bits, each probe a count of the lanes below it
//!   ([`kth_by_bisection`]), collect what is at or below it and count those into order
//!   ([`select_bisected`]), where counting the whole row would keep 256 counters a row; f16 and bf16
//!   rows the same, keyed into u16 on the stack first
//!   ([`keyed_bisected`]);
//! - K = 1 on rows of up to 768 ([`first_best`]): the best key from the group minima of the whole row,
//!   then the first position holding it; no candidates, no sort;
//! - K > 16 on long rows guesses a cap from the group minima of the row's start, and checks it at the
//!   end ([`filter_row`]): a few K survivors instead of K · ln(n / K);
//! - once the threshold is the smallest key (e.g. K NaNs found when selecting `Decreasing`, or K
//!   copies of the best value) no later element can enter, and the scan stops;
//! - adversarial rows (ascending data selected `Decreasing`: every element beats the last K) would push
//!   every element and compact the buffer every K pushes. When pushes outrun a budget, the engine
//!   samples `64·K` evenly spaced elements, takes the K-th best sampled key `t` (at least K elements
//!   of the row have a key `<= t`, so nothing with a larger key is in the answer) and restarts with
//!   `t + 1` as a second limit: about one element in 64 still passes instead of every one.
//!   The case: 1M ascending f32 with K = 100 (`sorted1m_k100`); see BENCHMARKS.md.
//!
//! A choice that the element type, the kind or the vector decides is written `if const { .. }` (or a
//! `match const { .. }`) wherever it picks between generic calls: rustc compiles the calls of a branch
//! that is a constant false only when the condition itself is a constant, not a local or an expression
//! over one. Without it every engine compiles every kind's filter and tests for every type, dead or
//! not, and the unoptimised build grows several times over (`cargo llvm-lines -p topk-kernels --lib
//! --all-features` counts it).

// Only the AVX-512 engine orders candidates with the network (and the tests run it everywhere); on other
// targets its sorts are unused outside tests.
#[cfg_attr(not(simd_x86), allow(dead_code))]
pub(crate) mod network;
// Used where the network is (the AVX-512 engine's compactions), and by the tests everywhere.
#[cfg_attr(not(simd_x86), allow(dead_code))]
pub(crate) mod partition;
// The AVX-512 engine's alone.
#[cfg_attr(not(simd_x86), allow(dead_code))]
pub(crate) mod sorter;

pub(crate) mod candidates;
pub(crate) mod count;
pub(crate) mod entry;
pub(crate) mod reference;
pub(crate) mod scalar;

mod bound;
mod filter;
pub(crate) mod lanes;
mod short;
mod side;
#[cfg(test)]
pub(crate) mod testing;

/// The vectors and the sorter an engine runs the kernels on (`dispatch::isa` has one per instruction
/// set).
pub(crate) trait Isa {
    /// Lanes of 32 bits: elements of 8, 16 and 32 bits.
    type V32: Vector;
    /// Lanes of 64 bits: elements of 64 bits.
    type V64: Vector;
    /// How candidates are selected and ordered.
    type Sorter: Sorter;
}

pub(crate) use filter::SMALL_K;
pub(crate) use side::select_side;

use core::mem::size_of;

use crate::kernels::candidates::{Candidates, Sorter};
use crate::kernels::entry::Entry;
use crate::simd::vector::{MAX_LANES, Vector};
use crate::types::data_type::DataType;
use crate::types::element::{Element, Sealed};
use crate::types::output::Emit;
use crate::types::sequence::Sequence;
use bound::{PREFIX, kth_by_bisection, minima_bound, pieces_bound, prefix_bound, sample_bound};
use filter::{HALF_K, Outcome, Pool, pass};
use lanes::{
    BRAIN, FLOAT, HALF, KeyMap, NATIVE_FLOAT, SIGNED, UNROLL, UNSIGNED, from_bits, in_8_bit_lanes, in_16_bit_lanes,
    last_in_order_bits,
};
use short::{COLLECT_BYTES, SHORT_CAP, collect_below, first_best};

/// Rows shorter than this many times K never bail out to sampling: the sample would be a large part of
/// the row.
const BAIL_MIN_RATIO: usize = 256;

/// Selects with the block filter when the row is contiguous, with the scalar engine otherwise.
///
/// `V32` serves 8-, 16- and 32-bit elements, `V64` 64-bit ones; `S` orders the candidates (the network
/// where it pays, see [`sorter::Network`]). Same contract as [`scalar::select`].
#[inline(always)]
pub(crate) fn select<V32: Vector, V64: Vector, S: Sorter, T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    flip: u64,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    let Some(row) = seq.contiguous() else {
        return scalar::select(seq, k, flip, buffer, emit);
    };
    if k > SMALL_K && row.len() <= buffer.len() {
        // K at least half the row: nothing to filter, every element is a candidate. Filled in bulk
        // (`rows1024x1024_k512`); the filter's own filling is one element at a time, which keeps its
        // block loop faster on long rows than a bulk fill inside it would.
        return select_all::<S, T, E>(buffer, row, k, flip, emit);
    }
    if const { size_of::<T>() == 8 } {
        by_kind::<V64, S, T, E>(row, k, flip, seq.cap(), buffer, emit);
    } else {
        by_kind::<V32, S, T, E>(row, k, flip, seq.cap(), buffer, emit);
    }
}

/// Rows of 8- and 16-bit keys (integers, f16, bf16) from this long (a block of AVX-512's bytes) up to
/// [`BISECT_MAX_LEN`] are selected under their exact K-th key ([`select_bisected`]), from K above
/// [`BISECT_MIN_K_8`] for 8-bit keys and K of at least n / [`BISECT_RATIO_16`] for 16-bit ones (where
/// counting and the filter cross), up to n / 2; 8-bit rows up to [`BISECT_MAX_LEN_8`] too, where they
/// would be counted, with K up to 384.
///
/// f16 and bf16 rows, keyed first, cross with the filter near n / 7, close enough to keep the
/// integers' n / 6. 16-bit rows of 513 to [`BISECT_MAX_LEN_16`] from n / [`BISECT_RATIO_16_LONG`],
/// with K up to 179 (the collection's room). Above n / 2 the outputs are most of the row, and counting
/// it (no bisection, no collection) is faster; with K of 17 to 20, 8-bit rows do no better than with
/// the prefix bound; 16-bit rows with K below n / 6 keep the filter, which ties with bisection near
/// n / 8.
///
/// Set by rows of 256 to 2048 u8, u16 and f16 with K from 24 to 300 (the `narrow` and `halves` sets of
/// `benches/shapes.py`); the crossovers are in BENCHMARKS.md, decisions.
const BISECT_MIN_LEN: usize = 64;
const BISECT_MAX_LEN: usize = 512;
const BISECT_MAX_LEN_16: usize = 1024;
const BISECT_MAX_LEN_8: usize = 2048;
const BISECT_MIN_K_8: usize = 20;
const BISECT_RATIO_16: usize = 6;
const BISECT_RATIO_16_LONG: usize = 12;

/// Whether a contiguous row of `len` elements of T with this K is one for [`select_bisected`]: every
/// element type of 8 and 16 bits (integers; f16 and bf16, keyed first by [`keyed_bisected`]).
#[inline(always)]
pub(crate) fn bisects<T: Element>(len: usize, k: usize) -> bool {
    let large_k = match size_of::<T>() {
        1 if len <= BISECT_MAX_LEN => k > BISECT_MIN_K_8,
        // Longer 8-bit rows where they would be counted, with K up to three quarters of the
        // collection's 512 entries (a quarter left for the K-th key's ties).
        1 => len <= BISECT_MAX_LEN_8 && crate::kernels::count::suits::<T>(len, k, false) && 4 * k <= 3 * COLLECTED,
        2 if len <= BISECT_MAX_LEN => k.saturating_mul(BISECT_RATIO_16) >= len,
        // Longer 16-bit rows from n / 12, while what the K-th key leaves (K and a quarter for ties,
        // twice: the count's copy) fits the collection.
        2 => {
            len <= BISECT_MAX_LEN_16
                && k.saturating_mul(BISECT_RATIO_16_LONG) >= len
                && 2 * (k + k / 4 + 32) <= COLLECTED
        }
        _ => false,
    };
    large_k && len >= BISECT_MIN_LEN && 2 * k <= len
}

/// Entries [`collect_below`] holds (4 KiB of packed entries).
const COLLECTED: usize = COLLECT_BYTES / size_of::<u64>();

/// A row of 8- or 16-bit keys with a large K ([`bisects`]) on `V`'s lanes of their width: its exact
/// K-th key by bisection ([`kth_by_bisection`]), everything at or below it collected
/// ([`collect_below`]) and ordered (8- and 16-bit keys counted into their order, see there). False,
/// having reported nothing, where the row is not one for it or `V` has no such lanes, the K-th key is
/// the largest (nothing to exclude), or its ties overflow the collection.
///
/// An engine entry of its own (`simd_engine!`'s `select_bisected`), not a branch of the filter: inlined
/// there, the bisection's code slows the filter's own short rows of these types.
#[inline(always)]
// The SIMD engines' alone: dead (with what only it calls) where none is compiled.
#[cfg_attr(not(simd), allow(dead_code))]
pub(crate) fn select_bisected<V: Vector, S: Sorter, T: Element, E: Entry>(
    row: &[T],
    k: usize,
    flip: u64,
    emit: &mut Emit<'_, T>,
) -> bool {
    match <T as Sealed>::KEY_FORM {
        UNSIGNED => bisected::<V, S, T, E, UNSIGNED, T>(row, k, flip, emit),
        SIGNED => bisected::<V, S, T, E, SIGNED, T>(row, k, flip, emit),
        FLOAT if const { size_of::<T>() == 2 } => keyed_bisected::<V, S, T, E>(row, k, flip, emit),
        _ => false,
    }
}

/// f16 and bf16 rows for [`bisected`]: their keys (`docs/CONTRACT.md` §2's order: -0 as +0, every NaN
/// above +inf and equal) written to 16-bit integers on the stack (2 KiB; the loop vectorises), which are
/// bisected as u16. Only positions come out, and the outputs read the row's own values: NaN payloads and
/// the sign of zero stay as they were. Their raw bits in 16-bit lanes would not do: the filter's lane
/// tests pass negative NaNs (see `lanes::half_limit`), where a bisection's counts must be exact.
#[inline(always)]
fn keyed_bisected<V: Vector, S: Sorter, T: Element, E: Entry>(
    row: &[T],
    k: usize,
    flip: u64,
    emit: &mut Emit<'_, T>,
) -> bool {
    let mut keys = [0u16; BISECT_MAX_LEN_16];
    let Some(keys) = keys.get_mut(..row.len()) else {
        return false;
    };
    for (key, &value) in keys.iter_mut().zip(row) {
        // T's key is 16 bits wide (the caller's `size_of` check).
        *key = crate::types::element::ordered_key(value, 0) as u16;
    }
    bisected::<V, S, u16, E, UNSIGNED, T>(keys, k, flip, emit)
}

/// [`select_bisected`] on a row of keys of the kind `KIND`, reporting to the outputs of `O` (T itself,
/// or the float type a row of u16 keys was made from).
#[inline(always)]
fn bisected<V: Vector, S: Sorter, T: Element, E: Entry, const KIND: u8, O: Element>(
    row: &[T],
    k: usize,
    flip: u64,
    emit: &mut Emit<'_, O>,
) -> bool {
    // `bisects` again, though the caller checked it: its bounds on the row and K, known here, take
    // instructions off each row.
    if const { !(V::SPECIALIZE && (in_8_bit_lanes::<V, T, KIND>() || in_16_bit_lanes::<V, T, KIND>())) }
        || !bisects::<T>(row.len(), k)
    {
        return false;
    }
    let map = KeyMap::of::<T>();
    let kth = kth_by_bisection::<V, T, KIND>(row, k, flip, &map);
    // Room for the gathered (K and a quarter more of the K-th key's ties; more are counted instead)
    // twice: the counting sort's copy (16-bit keys: its two passes; 8-bit ones too, faster than writing
    // straight to the outputs). No more: the slots are written before the collection (a network pads
    // with them), and writing 4 KiB for every short row would cost much of its time.
    let room = 2 * (k + k / 4 + 32).min(row.len());
    kth < map.ones && collect_below::<V, S, T, E, KIND, true, O>(row, k, flip, &map, kth + 1, room, emit)
}

/// Rows whose entries fit this many bytes (512 elements of up to 32 bits, 256 of 64) are selected whole
/// when K is above 16 and the prefix bound did not settle them (K above 32, or near the number of its
/// groups), by the engine's selection and sort, rather than filtered: with K a large part of a short
/// row, most elements pass the filter's test, each entering the buffer through a mispredicted branch,
/// and the buffer of 2K is compacted every K pushes. Set by rows of 256 f32 with K of 32 to 100 (the
/// `medium` set of `benches/shapes.py`); rows of one repeated value are slower this way, where the
/// filter stops at the K-th element. SIMD engines only: the portable one is the firmware's, with its
/// stack and code-size budgets.
const WHOLE_ROW_BYTES: usize = 4096;

/// A row of at most [`WHOLE_ROW_BYTES`] of entries, every element a candidate, in a buffer on the stack
/// (the scratch holds 2K entries, fewer than the row's): [`select_all`], as rows with K at least half
/// of n are in the caller's scratch. Inlined into the engine (whose frame then holds the 4 KiB): out of
/// line, without the engine's target features, its fill would run scalar. Out of line in unoptimised
/// builds (see `first_best`).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn whole_row<S: Sorter, T: Element, E: Entry>(row: &[T], k: usize, flip: u64, emit: &mut Emit<'_, T>) {
    let mut words = [u64::MAX; WHOLE_ROW_BYTES / size_of::<u64>()];
    let entries = E::from_words(&mut words);
    // The caller checked that the row fits; `get_mut` only keeps the indexing panic-free.
    let Some(entries) = entries.get_mut(..row.len()) else {
        return;
    };
    select_all::<S, T, E>(entries, row, k, flip, emit);
}

/// Every element of `row` a candidate in `entries` (at least `row.len()` of them), the best K selected
/// and sorted by `S`: rows with K at least half of n, in the caller's scratch, and [`whole_row`].
#[inline(always)]
fn select_all<S: Sorter, T: Element, E: Entry>(
    entries: &mut [E],
    row: &[T],
    k: usize,
    flip: u64,
    emit: &mut Emit<'_, T>,
) {
    let mut candidates = Candidates::<E, S>::sorted_by(entries, k);
    candidates.fill(row, flip);
    candidates.report(emit);
}

/// [`minima_bound`] of an integer row of 8 to 32 bits on `V`'s 32-bit lanes, and the number of groups
/// it took (`vectors · LANES`): what the tests check against the groups' minima counted one by one.
#[cfg(test)]
#[inline(always)]
pub(crate) fn integer_minima_bound<V: Vector, T: Element>(
    row: &[T],
    k: usize,
    flip: u64,
    vectors: usize,
) -> Option<(u64, usize)> {
    let map = KeyMap::of::<T>();
    let bound = match <T as Sealed>::KEY_FORM {
        _ if size_of::<T>() > 4 => None,
        UNSIGNED => minima_bound::<V, T, UNSIGNED>(row, k, flip, &map, vectors),
        SIGNED => minima_bound::<V, T, SIGNED>(row, k, flip, &map, vectors),
        _ => None,
    };
    Some((bound?, vectors * V::LANES))
}

#[inline(always)]
fn by_kind<V: Vector, S: Sorter, T: Element, E: Entry>(
    row: &[T],
    k: usize,
    flip: u64,
    cap: Option<u64>,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    let map = KeyMap::of::<T>();
    // A row shorter than a block (33-63 f32 on AVX-512: MoE routing over 40-60 experts) has no block to
    // test and would go through the scalar tail whole, slower than a longer row. It is copied into a
    // block padded with the value that comes last in the order: every real element precedes it or ties
    // with it at a lower position, so with K <= n it is never among the first K. One call site below
    // either way: the filter is inlined once per kind. SIMD engines only (the firmware's code size).
    // The copy goes a vector at a time where it can ([`pad_block`]); K = 1 reads such rows as they are
    // ([`first_best`]).
    let block = V::LANES * UNROLL;
    let mut padded;
    let row = if V::SPECIALIZE && (2..=SMALL_K).contains(&k) && (V::LANES..block).contains(&row.len()) {
        let pad = last_in_order_bits::<T>(flip, &map);
        padded = [from_bits::<T>(pad); MAX_LANES * UNROLL];
        pad_block::<V, T>(row, pad, &mut padded);
        &padded[..block]
    } else {
        row
    };
    // Every condition is a `const` (see the module doc): each engine compiles one kind of filter per type.
    match <T as Sealed>::KEY_FORM {
        UNSIGNED => filter_row::<V, S, T, E, UNSIGNED>(row, k, flip, cap, &map, buffer, emit),
        SIGNED => filter_row::<V, S, T, E, SIGNED>(row, k, flip, cap, &map, buffer, emit),
        _ if const { size_of::<T>() >= 4 } => {
            filter_row::<V, S, T, E, NATIVE_FLOAT>(row, k, flip, cap, &map, buffer, emit)
        }
        _ if const { matches!(T::DATA_TYPE, DataType::F16) && (V::HALF_LANES || V::CONVERTS_HALF) } => {
            filter_row::<V, S, T, E, HALF>(row, k, flip, cap, &map, buffer, emit)
        }
        _ if const { matches!(T::DATA_TYPE, DataType::Bf16) && V::WIDENS_BF16 } => {
            filter_row::<V, S, T, E, BRAIN>(row, k, flip, cap, &map, buffer, emit)
        }
        _ => filter_row::<V, S, T, E, FLOAT>(row, k, flip, cap, &map, buffer, emit),
    }
}

/// The filter, in up to three passes from one call site (the filter inlined once: it is most of an
/// engine's code), every pass under `caller_cap` too where the caller gave one ([`Sequence::with_cap`]):
///
/// ```text
/// guess:   long rows with K > 16: the 8th smallest of the minima of 4 · LANES groups of the row's
///          first 2n/K elements (branch-free, like the prefix bound), plus one, is a guessed cap
/// guessed: the filter under the guessed cap; if fewer than K elements were below it, the guess
///          excluded part of the answer, and the row is run again without it
/// bailed:  a pass that stopped filtering (ascending data) runs again under a sampled bound
/// ```
/// A streaming filter pushes about K · ln(n / K) elements, each a mispredicted branch out of the hot
/// loop: 460 for rows of 128k with K = 50. On a row whose start is like the rest, the prefix holds
/// about 2 of the row's first K (a Poisson count), and at least 8 of its elements are at or below the
/// guess: the guess is too tight with probability about 0.1%, and the pass under it pushes about 4K.
/// A shorter prefix or a lower rank is too tight too often, and a guess by a pass of the filter pays
/// pushes of its own. Set by `llm32x128k_k50`, `llm32x128k_k50_f16`, `vec1m_k100` and
/// `vec1m_k1000_small`; see BENCHMARKS.md, decisions.
// Unoptimised builds keep each kind's filter a function of its own: they cannot drop the kinds a type
// cannot have, and inlined into the engine's one frame, every kind's locals take over a MiB of stack.
// Without target features of its own it then calls the intrinsics, which only costs speed there.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn filter_row<V: Vector, S: Sorter, T: Element, E: Entry, const KIND: u8>(
    row: &[T],
    k: usize,
    flip: u64,
    caller_cap: Option<u64>,
    map: &KeyMap,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    let may_bail = row.len() / BAIL_MIN_RATIO >= k;
    // A bound of the largest key excludes nothing (and `bound + 1` would not fit a lane).
    let cap_of = |bound: u64| (bound < map.ones).then(|| bound + 1);
    if k == 1 && V::SPECIALIZE && row.len() <= FIRST_BEST_MAX && first_best::<V, T, KIND>(row, flip, map, emit) {
        return;
    }
    let prefix_cap = prefix_bound::<V, T, KIND>(row, k, flip, map).and_then(cap_of);
    // A cap of 1 (the bound is the smallest key: K NaNs when selecting `Decreasing`, say) leaves the row
    // to the filter, which stops at the K-th such element, where collecting would take them all.
    let collects = (S::NETWORK || V::COMPRESSES) && V::SPECIALIZE;
    let short_cap = prefix_cap.filter(|_| collects && row.len() <= PREFIX);
    // Rows the prefix bound does not settle, with K > 8 (and up to a quarter of the 4 KiB of room),
    // too short for the guess below: the bound of the whole row's pieces, everything below it collected
    // likewise; not where the prefix bound already found K of the smallest key (the filter stops at
    // the K-th of them, and the pieces' bound would only read the row to find the same). (Where the
    // guess is taken, it is as fast or faster than collecting.) Rows that fit `whole_row` take it from
    // K of a fifth of n on (rows of 256 and 512 f32 with K of 48 to 128).
    let pieces_cap = if short_cap.is_none()
        && caller_cap.is_none()
        && prefix_cap != Some(1)
        && collects
        && k > HALF_K
        && 4 * k * size_of::<E>() <= COLLECT_BYTES
        && !may_bail
        && (5 * k < row.len() || row.len() * size_of::<E>() > WHOLE_ROW_BYTES)
    {
        pieces_bound::<V, T, KIND>(row, k, flip, map).and_then(cap_of)
    } else {
        None
    };
    if let Some(cap) = short_cap.or(pieces_cap).filter(|&cap| cap > 1) {
        // Under the pieces' bound at most 4 K: more means the bound did not hold on this row (long runs
        // of one value, say), and the rest is left to the filter or `whole_row` early.
        let capacity = if pieces_cap.is_some() { 4 * k } else { SHORT_CAP };
        if collect_below::<V, S, T, E, KIND, false, T>(row, k, flip, map, cap, capacity, emit) {
            return;
        }
    }
    if V::SPECIALIZE && k > SMALL_K && row.len() > buffer.len() && row.len() * size_of::<E>() <= WHOLE_ROW_BYTES {
        return whole_row::<S, T, E>(row, k, flip, emit);
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
    // Not under a caller's cap: that is the K-th key of the sequence so far, which a guess from this
    // chunk's start would rarely beat.
    let guess = if V::SPECIALIZE && k >= GUESS_MIN_K && may_bail && caller_cap.is_none() {
        minima_bound::<V, T, KIND>(row.get(..prefix).unwrap_or(row), GUESS_RANK, flip, map, UNROLL).and_then(cap_of)
    } else {
        None
    };
    let mut stage = guess.map_or(Stage::Safe(sure_cap), Stage::Guessed);
    loop {
        let (cap, may_bail, whole) = match stage {
            Stage::Guessed(guess) => (both(prefix_cap, Some(guess)), may_bail, true),
            Stage::Safe(cap) => (cap, may_bail, false),
            Stage::Sampled(cap) => (cap, false, false),
        };
        stage = match (
            stage,
            pass::<V, S, T, E, KIND>(row, k, flip, map, cap, may_bail, whole, buffer, emit),
        ) {
            (_, Outcome::Done) => return,
            (Stage::Guessed(_), Outcome::Short) => Stage::Safe(sure_cap),
            _ => Stage::Sampled(both(sure_cap, cap_of(sample_bound::<S, T, E>(row, k, flip, buffer)))),
        };
    }
}

/// Rows up to this long with K = 1 take [`first_best`]'s two passes; longer ones keep the filter's one.
/// Set by rows of 512 to 4096 f32 with K = 1 (the `argmax` set of `benches/shapes.py`): two passes win
/// up to about 700, and at 1024 lose on AVX2; see BENCHMARKS.md, decisions.
const FIRST_BEST_MAX: usize = PREFIX + PREFIX / 2;

/// Copies `row` (at least `LANES` and under a block long) into `padded`, which holds the pad. Where `T`
/// fills the lanes and the ISA compresses (AVX-512 on 32-bit elements), a vector at a time, the last
/// part-vector shifted into place in a register and blended with the pad: each of the filter's loads
/// then meets one store of its own size and is forwarded from it. After `memcpy`'s stores (or a masked
/// store, which LLVM made of a blend with the pad loaded from `padded`) the loads waited for them.
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

/// K from which long rows guess a cap: the sorted pool of smaller K has an exact threshold from the
/// K-th push on, and the guess does not pay there (rows of 128k f16 with K = 10).
const GUESS_MIN_K: usize = SMALL_K + 1;

/// The prefix the guess reads holds about this many of the row's first K (it is this · n / K long).
const GUESS_PREFIX: usize = 2;

/// The rank of the guess among the prefix's group minima: a Poisson count of mean `GUESS_PREFIX`
/// reaches it with probability about 0.1%, so the guess is too tight only on rows whose start is not
/// like the rest (or on one in a thousand that are).
const GUESS_RANK: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::element::{Key, ordered_key};
    use lanes::from_bits;
    use testing::xorshift;

    /// `$check::<T>()` for every element type.
    macro_rules! every_type {
        ($check:ident) => {
            $check::<u8>();
            $check::<u16>();
            $check::<u32>();
            $check::<u64>();
            $check::<i8>();
            $check::<i16>();
            $check::<i32>();
            $check::<i64>();
            $check::<f32>();
            $check::<f64>();
            $check::<half::f16>();
            $check::<half::bf16>();
        };
    }

    /// The key form each type declares is the one its `key` has: the lanes' transforms follow the form.
    #[test]
    fn key_forms_agree_with_the_keys() {
        fn probed<T: Element>() -> u8 {
            let sign = 1u64 << (8 * size_of::<T>() - 1);
            let key = |raw: u64| from_bits::<T>(raw).key().widen();
            if key(0) == 0 {
                UNSIGNED
            } else if key(sign) == 0 {
                SIGNED
            } else {
                FLOAT
            }
        }
        fn check<T: Element>() {
            assert_eq!(<T as Sealed>::KEY_FORM, probed::<T>(), "{}", T::NAME);
        }
        every_type!(check);
    }

    /// The padding of rows shorter than a block comes last: no value's flipped key is above its own.
    /// Every value of the 8- and 16-bit types, the specials and a spread of bit patterns of the others.
    #[test]
    fn padding_comes_last_in_both_directions() {
        fn check<T: Element>() {
            let bits = 8 * size_of::<T>() as u32;
            let ones = u64::MAX >> (64 - bits);
            let raws: Vec<u64> = if bits <= 16 && !cfg!(miri) {
                (0..=ones).collect()
            } else {
                let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
                let spread = (0..1000).map(|_| next() & ones);
                [0, 1, ones, ones >> 1, ones ^ (ones >> 1), ones - 1]
                    .into_iter()
                    .chain(spread)
                    .collect()
            };
            for flip in [0, ones] {
                let last = ordered_key(from_bits::<T>(last_in_order_bits::<T>(flip, &KeyMap::of::<T>())), flip);
                let beyond = raws.iter().find(|&&raw| ordered_key(from_bits::<T>(raw), flip) > last);
                assert_eq!(beyond, None, "{} flip {flip:#x}", T::NAME);
            }
        }
        every_type!(check);
    }
}
