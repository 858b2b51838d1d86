//! The block threshold filter, written once over [`Vector`] for every ISA.
//!
//! ```text
//! for each block of UNROLL vectors of a contiguous row:
//!     keys  = key(raw bits) ^ flip                      // SPEC §2 as lane-wise bit operations
//!     if no key < limit: next block                     // the hot loop: compares and one branch
//!     else push the passing lanes, in position order, into the candidate buffer (scalar)
//! limit = min(threshold of the buffer, caps); 0 means nothing can enter: stop early
//! ```
//! Tricks:
//! - f32/f64 lanes are not keyed at all: the limit is turned into the float it stands for once, and
//!   the block test is one IEEE compare per vector ([`float_limit`]); f16's is one or two integer
//!   compares of its raw bits where the ISA has 16-bit lanes (AVX-512BW: [`half_limit`], 32 a
//!   register), else an IEEE compare after converting to f32 on load (F16C: [`Vector::load_half`]); the
//!   other types' keys are computed exactly in the lanes (f16/bf16: sign → flip, -0 → +0, NaN → all
//!   ones; signed: sign bit flipped) and compared unsigned. Passing lanes are re-keyed by the scalar
//!   code, so the lane test may only ever pass too much, never too little;
//! - 8/16/32-bit elements share 32-bit lanes through a widening load; 64-bit elements use 64-bit lanes;
//! - the hot loop ([`Prepared::scan`]) holds only the compares and a branch: the pool is looked at after
//!   survivors only, the float test is chosen outside it, and 32/64-bit rows (and f16 bits) test two
//!   blocks a branch;
//! - the row's end is one more full block ending at the last element, its already-seen lanes masked
//!   off (no scalar tail: on 256-element rows the tail was a fifth of the row);
//! - K <= 16 keeps the best K sorted on the stack ([`Sorted`]): a push is a branch-free insertion,
//!   and the threshold is exact from the K-th element on, instead of the shared buffer's compaction
//!   every K pushes;
//! - K <= 16 also starts from a bound instead of from nothing: the K-th smallest of the lane-wise
//!   minima of the row's first 512 elements ([`prefix_bound`]), so that a short row's first blocks do
//!   not pass nearly every element; rows of at most 512 then collect what is below the bound and sort
//!   it once where the sorter is a network ([`short_row`], AVX-512);
//! - K > 16 on long rows guesses a cap from the group minima of the row's start, and checks it at the
//!   end ([`filter_row`]): a few K survivors instead of K · ln(n / K);
//! - once the threshold is the smallest key (e.g. K NaNs found when selecting `Decreasing`, or K
//!   copies of the best value) no later element can enter, and the scan stops;
//! - adversarial rows (ascending data selected `Decreasing`: every element beats the last K) would push
//!   every element and compact the buffer every K pushes. When pushes outrun a budget, the engine
//!   samples `64·K` evenly spaced elements, takes the K-th best sampled key `t` (at least K elements
//!   of the row have a key `<= t`, so nothing with a larger key is in the answer) and restarts with
//!   `t + 1` as a second limit: about one element in 64 still passes instead of every one.
//!   Measured on 1M ascending f32, K = 100: see BENCHMARKS.md.

// Only the AVX-512 engine orders candidates with the network (and the tests run it everywhere); on other
// targets its sorts are unused outside tests.
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2", not(miri))),
    allow(dead_code)
)]
pub(crate) mod network;
// Used where the network is (the AVX-512 engine's compactions), and by the tests everywhere.
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2", not(miri))),
    allow(dead_code)
)]
pub(crate) mod partition;

use core::mem::size_of;

use crate::arch::scalar;
use crate::candidates::{Candidates, Sorter};
use crate::element::{Element, FLOAT_KEY, Key, SIGNED_KEY, Sealed, UNSIGNED_KEY, ordered_key};
use crate::entry::{Emit, Entry, report};
use crate::topk::{Sequence, Side};
use crate::vector::{MAX_LANES, Vector};

/// Vectors per block: one compare-and-branch per `UNROLL · LANES` elements (at most 64 lanes, so a
/// block's pass bits fit one `u64`).
const UNROLL: usize = 4;

/// Rows shorter than this many times K never bail out to sampling: the sample would be a large part of
/// the row.
const BAIL_MIN_RATIO: usize = 256;

/// Elements sampled per selected element when a row bails out.
const SAMPLE_RATIO: usize = 64;

const UNSIGNED: u8 = UNSIGNED_KEY;
const SIGNED: u8 = SIGNED_KEY;
const FLOAT: u8 = FLOAT_KEY;
/// f32 and f64: compared as floats against the value whose key is the limit (see [`float_limit`]).
const NATIVE_FLOAT: u8 = 3;
/// f16 on vectors with 16-bit lanes ([`Vector::HALF_LANES`]): the raw bits, two vectors' worth a
/// register, compared as integers with the limit value's bits ([`half_test`]). On vectors that convert
/// it instead ([`Vector::CONVERTS_HALF`]): loaded as f32 and compared like `NATIVE_FLOAT` against the
/// f16 limit value, also converted (exact, so the test is the same). One kind for both, so that a
/// debug build, which compiles every kind's filter into each engine's one frame, has one more, not two.
const HALF: u8 = 4;

/// Selects with the block filter when the row is contiguous, with the scalar engine otherwise.
///
/// `V32` serves 8-, 16- and 32-bit elements, `V64` 64-bit ones; `S` orders the candidates (the network
/// where it pays, see [`network::Network`]). Same contract as [`scalar::select`].
#[inline(always)]
pub(crate) fn select<V32: Vector, V64: Vector, S: Sorter, T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    flip: u64,
    buffer: &mut [E],
    emit: &mut Emit<'_>,
) {
    let Some(row) = seq.contiguous() else {
        return scalar::select(seq, k, flip, buffer, emit);
    };
    if k > SMALL_K && row.len() <= buffer.len() {
        // K at least half the row: nothing to filter, every element is a candidate. Filled in bulk
        // (1024 f32, K = 512: 7.5 to 6.5 ms for 1024 rows); the filter's own filling is one element at a
        // time, which kept its block loop 5-8% faster on long rows than a bulk fill inside it did.
        let mut candidates = Candidates::<E, S>::sorted_by(buffer, k);
        candidates.fill(row, flip);
        return candidates.report(emit);
    }
    if size_of::<T>() == 8 {
        by_kind::<V64, S, T, E>(row, k, flip, buffer, emit);
    } else {
        by_kind::<V32, S, T, E>(row, k, flip, buffer, emit);
    }
}

#[inline(always)]
fn by_kind<V: Vector, S: Sorter, T: Element, E: Entry>(
    row: &[T],
    k: usize,
    flip: u64,
    buffer: &mut [E],
    emit: &mut Emit<'_>,
) {
    let map = KeyMap::of::<T>();
    // Every condition but f16's infinity is a constant once T and V are known: each engine compiles one
    // or two kinds of filter per type, not all five (which took most of the fuzz and test builds' time).
    match <T as Sealed>::KEY_FORM {
        UNSIGNED => filter_row::<V, S, T, E, UNSIGNED>(row, k, flip, &map, buffer, emit),
        SIGNED => filter_row::<V, S, T, E, SIGNED>(row, k, flip, &map, buffer, emit),
        _ if size_of::<T>() >= 4 => filter_row::<V, S, T, E, NATIVE_FLOAT>(row, k, flip, &map, buffer, emit),
        _ if size_of::<T>() == 2 && (V::HALF_LANES || V::CONVERTS_HALF) && map.infinity == F16_INFINITY => {
            filter_row::<V, S, T, E, HALF>(row, k, flip, &map, buffer, emit)
        }
        _ => filter_row::<V, S, T, E, FLOAT>(row, k, flip, &map, buffer, emit),
    }
}

/// The filter, in up to three passes from one call site (the filter inlined once: it is most of an
/// engine's code):
///
/// ```text
/// guess:   long rows with K > 16: the 8th smallest of the minima of 4 · LANES groups of the row's
///          first 2n/K elements (branch-free, like the prefix bound), plus one, is a guessed cap
/// guessed: the filter under the guessed cap; if fewer than K elements were below it, the guess
///          excluded part of the answer, and the row is run again without it
/// bailed:  a pass that stopped filtering (ascending data) runs again under a sampled bound
/// ```
/// A streaming filter pushes about K · ln(n / K) elements, each a mispredicted branch out of the hot
/// loop (about 12 ns): 460 for rows of 128k with K = 50. On a row whose start is like the rest, the
/// prefix holds about 2 of the row's first K (a Poisson count), and at least 8 of its elements are at or
/// below the guess: the guess is too tight with probability about 0.1%, and the pass under it pushes
/// about 4K. Measured here (AVX-512, Zen 5; 32 x 128k, K = 50): f32 0.34 to 0.23 ms, f16 0.28 to
/// 0.155 ms; 1M f32 with K = 100, 0.050 to 0.036 ms. Tried before: the 12th best of a prefix of 4n/K by
/// a pass of the filter (its own pushes cost a third of the gain); 4n/K and the 8th minimum (too tight
/// one time in 20); 8n/K and the 12th (too tight on a row of 1M with K = 1000, which then ran twice).
// Unoptimised builds keep each kind's filter a function of its own: they cannot drop the kinds a type
// cannot have, and inlined into the engine's one frame, every kind's locals took 1.4 MiB of stack.
// Without target features of its own it then calls the intrinsics, which only costs speed there.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn filter_row<V: Vector, S: Sorter, T: Element, E: Entry, const KIND: u8>(
    row: &[T],
    k: usize,
    flip: u64,
    map: &KeyMap,
    buffer: &mut [E],
    emit: &mut Emit<'_>,
) {
    let may_bail = row.len() / BAIL_MIN_RATIO >= k;
    // A bound of the largest key excludes nothing (and `bound + 1` would not fit a lane).
    let cap_of = |bound: u64| (bound < map.ones).then(|| bound + 1);
    let prefix_cap = prefix_bound::<V, T, KIND>(row, k, flip, map).and_then(cap_of);
    if let Some(cap) = prefix_cap.filter(|_| S::NETWORK && row.len() <= PREFIX)
        && short_row::<V, S, T, E, KIND>(row, k, flip, map, cap, emit)
    {
        return;
    }
    let both = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let prefix = GUESS_PREFIX.saturating_mul(row.len()) / k;
    // No closure around vector code: a closure does not inherit the ISA wrapper's target features, and
    // its intrinsics become calls when LLVM does not inline it (this one once cost 6x on f16 rows).
    let guess = if V::SPECIALIZE && k >= GUESS_MIN_K && may_bail {
        minima_bound::<V, T, KIND>(row.get(..prefix).unwrap_or(row), GUESS_RANK, flip, map, UNROLL).and_then(cap_of)
    } else {
        None
    };
    let mut stage = guess.map_or(Stage::Safe(prefix_cap), Stage::Guessed);
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
            (Stage::Guessed(_), Outcome::Short) => Stage::Safe(prefix_cap),
            _ => Stage::Sampled(both(prefix_cap, cap_of(sample_bound::<S, T, E>(row, k, flip, buffer)))),
        };
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

/// How a pass of [`filter`] ended.
enum Outcome {
    /// The first K were reported.
    Done,
    /// Stopped filtering (too many pushes), nothing reported.
    Bailed,
    /// Fewer than K elements were below the cap, nothing reported.
    Short,
}

/// K from which long rows guess a cap: the sorted pool of smaller K has an exact threshold from the
/// K-th push on, and the guess did not pay there (32 x 128k f16 with K = 10: 0.13 against 0.18 ms).
const GUESS_MIN_K: usize = SMALL_K + 1;

/// The prefix the guess reads holds about this many of the row's first K (it is this · n / K long).
const GUESS_PREFIX: usize = 2;

/// The rank of the guess among the prefix's group minima: a Poisson count of mean `GUESS_PREFIX`
/// reaches it with probability about 0.1%, so the guess is too tight only on rows whose start is not
/// like the rest (or on one in a thousand that are).
const GUESS_RANK: usize = 8;

/// One pass of [`filter`] with the pool that suits K: the sorted array for small K, the candidate buffer
/// otherwise.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one private body, inlined into each ISA wrapper
fn pass<V: Vector, S: Sorter, T: Element, E: Entry, const KIND: u8>(
    row: &[T],
    k: usize,
    flip: u64,
    map: &KeyMap,
    cap: Option<u64>,
    may_bail: bool,
    whole: bool,
    buffer: &mut [E],
    emit: &mut Emit<'_>,
) -> Outcome {
    if k <= SMALL_K {
        filter::<V, T, Sorted<E>, KIND>(row, k, flip, map, cap, may_bail, whole, Sorted::new(k), emit)
    } else {
        let candidates = Candidates::<E, S>::sorted_by(buffer, k);
        filter::<V, T, Candidates<'_, E, S>, KIND>(row, k, flip, map, cap, may_bail, whole, candidates, emit)
    }
}

/// Groups the prefix bound takes its minima over (at most; fewer when `UNROLL` vectors hold fewer lanes).
const GROUPS: usize = 16;

/// Elements of a row's start the prefix bound reads (all of a short row).
const PREFIX: usize = 512;

/// A bound on the K-th best key of `row` from its first `PREFIX` elements, for `k <= GROUPS`: `None` when
/// the row is too short or K too large.
///
/// ```text
/// minimum[g] = the best key among positions ≡ g (mod G) of the prefix      // lane-wise, branch-free
/// bound      = the K-th smallest of the G minima
/// ```
/// The G groups are disjoint, so the K minima at or below `bound` are K distinct elements: the row's
/// K-th best key is at most `bound`, and no element with a larger key is among the first K. Seeding the
/// filter with it spares short rows their warm-up (n = 256, K = 8: about 10 pushes instead of 27 pushes
/// and 70 failed offers from a threshold that starts at the worst of the first K).
#[inline(always)]
fn prefix_bound<V: Vector, T: Element, const KIND: u8>(row: &[T], k: usize, flip: u64, map: &KeyMap) -> Option<u64> {
    let vectors = (GROUPS / V::LANES).clamp(1, UNROLL);
    minima_bound::<V, T, KIND>(row.get(..PREFIX).unwrap_or(row), k, flip, map, vectors)
}

/// The K-th smallest of the minima of `vectors · LANES` groups of `row` (positions ≡ g modulo the
/// group count), `vectors` 1, 2 or 4: at least K elements of `row` have a key at most this. `None` when
/// `row` has fewer elements than groups, or K is above their count. The prefix bound, and the guess of
/// [`filter_row`].
#[inline(always)]
fn minima_bound<V: Vector, T: Element, const KIND: u8>(
    row: &[T],
    k: usize,
    flip: u64,
    map: &KeyMap,
    vectors: usize,
) -> Option<u64> {
    let groups = vectors * V::LANES;
    let rounds = row.len() / groups;
    if k > groups || rounds == 0 {
        return None;
    }
    let lanes = Lanes::<V>::new(map, flip);
    let mut minima = [V::splat(u64::MAX); UNROLL];
    if KIND == NATIVE_FLOAT && V::SPECIALIZE {
        // f32/f64: each group keeps one of its elements by IEEE compares, keyed once at the end (a few
        // operations per vector instead of the keys' nine; not on the portable lanes, whose four more
        // copies of the loop took the firmware 4 KB over its flash budget).
        let picked = if flip == 0 {
            pick::<V, T, false>(row, vectors, rounds)
        } else {
            pick::<V, T, true>(row, vectors, rounds)
        };
        for (minimum, picked) in minima.iter_mut().zip(picked).take(vectors) {
            *minimum = keys::<V, FLOAT>(picked, &lanes);
        }
    } else {
        for round in 0..rounds {
            for (v, minimum) in minima.iter_mut().enumerate().take(vectors) {
                // SAFETY: vector `round · vectors + v` ends at `(round + 1) · groups <= row.len()` at the
                // latest; T is one of the crate's element types, of the lane's width or less.
                let raw = unsafe { nth_vector::<V, T>(row, round * vectors + v) };
                let key = match KIND {
                    NATIVE_FLOAT | HALF => keys::<V, FLOAT>(raw, &lanes),
                    _ => keys::<V, KIND>(raw, &lanes),
                };
                *minimum = key.min(*minimum);
            }
        }
    }
    // The K-th smallest minimum, by a sorting network on the minima (one vector of 16 on AVX-512: 10
    // steps, where counting each minimum's rank took 16 broadcasts, compares and popcounts).
    Some(network::kth_smallest(&minima, vectors, k))
}

/// Vector `j` of `row`: elements `j · LANES` on, each zero-extended to a lane.
///
/// # Safety
/// `(j + 1) · LANES <= row.len()`, and `T` is one of the crate's element types of the lane's width or
/// less.
#[inline(always)]
unsafe fn nth_vector<V: Vector, T>(row: &[T], j: usize) -> V {
    // SAFETY: the caller's precondition.
    unsafe { V::load::<T>(row.as_ptr().add(j * V::LANES)) }
}

/// For each of the `vectors · LANES` groups of [`minima_bound`], a best element of the group by
/// [`better`] (whose key is the group's minimum), as raw bits: the first `vectors` of the result.
///
/// UNROLL chains of compare and blend, not one (its latency): vector j goes to chain j mod UNROLL, which
/// holds the groups of vector j mod `vectors` (`vectors` divides UNROLL), and the chains merge at the end.
#[inline(always)]
fn pick<V: Vector, T, const DECREASING: bool>(row: &[T], vectors: usize, rounds: usize) -> [V; UNROLL] {
    let total = rounds * vectors;
    debug_assert!(total * V::LANES <= row.len() && vectors >= 1 && UNROLL.is_multiple_of(vectors));
    // Every `nth_vector` below reads a vector j < total, and total · LANES <= row.len() (the caller's
    // `rounds`); T is f32 or f64, in lanes of its width.
    let mut picked = [V::splat(0); UNROLL];
    for (a, picked) in picked.iter_mut().enumerate() {
        // SAFETY: see above; a % vectors < vectors <= total.
        *picked = unsafe { nth_vector::<V, T>(row, a % vectors) };
    }
    let whole = total - total % UNROLL;
    for j in (0..whole).step_by(UNROLL) {
        for (a, picked) in picked.iter_mut().enumerate() {
            // SAFETY: see above; j + a < whole <= total.
            let x = unsafe { nth_vector::<V, T>(row, j + a) };
            *picked = better::<V, DECREASING>(x, *picked);
        }
    }
    for j in whole..total {
        // SAFETY: see above.
        let x = unsafe { nth_vector::<V, T>(row, j) };
        picked[j % vectors] = better::<V, DECREASING>(x, picked[j % vectors]);
    }
    for a in vectors..UNROLL {
        picked[a % vectors] = better::<V, DECREASING>(picked[a], picked[a % vectors]);
    }
    picked
}

/// `x` where it is better than `y`, else `y`. `DECREASING`: the larger is better, and NaN better than
/// every number; else the smaller is better, and every number better than NaN (SPEC §2's order; IEEE
/// compares alone leave NaN out both ways).
#[inline(always)]
fn better<V: Vector, const DECREASING: bool>(x: V, y: V) -> V {
    let takes = if DECREASING {
        V::or_mask(y.float_lt(x), x.float_nle(x))
    } else {
        V::or_mask(x.float_lt(y), y.float_nle(y))
    };
    V::select(takes, x, y)
}

/// Elements below its cap the short-row path collects before it leaves the row to the filter.
const SHORT_CAP: usize = 64;

/// A row the prefix bound read whole, `cap` one above that bound: every element below `cap` collected
/// in one pass, then ordered by the network. Returns false, having reported nothing, when more than
/// `SHORT_CAP` are below it (ties with the bound; the filter's running threshold handles those).
///
/// ```text
/// for each block: for each lane below cap: entries[count++] = (key, position)   // no pool to update
/// sort entries[..count] by the network; report the first K
/// ```
/// The bound leaves about K + 3 elements of a random row of 256 with K = 8, so this is one compare per
/// vector and a store per survivor, where the sorted pool spent a 16-slot insertion on each.
#[inline(always)]
fn short_row<V: Vector, S: Sorter, T: Element, E: Entry, const KIND: u8>(
    row: &[T],
    k: usize,
    flip: u64,
    map: &KeyMap,
    cap: u64,
    emit: &mut Emit<'_>,
) -> bool {
    let n = row.len();
    let block = V::LANES * UNROLL;
    let mut entries = [E::LAST; SHORT_CAP];
    let mut count = 0;
    let mut collect = |position: usize, value: T| {
        let key = ordered_key(value, flip);
        // The lane test may pass more than the keys below cap (f16 and bf16 keyed in the lanes do not).
        if key < cap {
            let Some(slot) = entries.get_mut(count) else {
                return false;
            };
            *slot = E::new(key, position);
            count += 1;
        }
        true
    };
    if n < block {
        for (position, &value) in row.iter().enumerate() {
            if !collect(position, value) {
                return false;
            }
        }
    } else if V::COMPRESSES && n > block {
        // The passing positions compressed a vector at a time, then one loop over them: no branch per
        // block on how many passed (each a likely misprediction). On the Xeon: 8-12% off f32, f16 and i32
        // rows of 256 and 512 with K = 8 or 16, 4% on rows of 128; 4% slower on u8 rows of 256 with K = 4
        // (few pass); rows of one block (one such branch) were 6% slower so, and keep the loop below.
        let lanes = Lanes::<V>::new(map, flip);
        let prepared = Prepared::<V>::new::<KIND>(cap, flip, map);
        let mut found = [0u32; SHORT_CAP + MAX_LANES];
        let mut passed = 0;
        let mut position = 0;
        while position < n {
            let (start, bits) = prepared.block_at::<T, KIND>(row, position, &lanes);
            for v in 0..UNROLL {
                if passed > SHORT_CAP {
                    return false;
                }
                let lane_bits = bits >> (v * V::LANES) & (u64::MAX >> (64 - V::LANES));
                let positions = V::iota()
                    .add(V::splat((start + v * V::LANES) as u64))
                    .compress(lane_bits);
                // SAFETY: passed <= SHORT_CAP, so `found` has room for the LANES <= MAX_LANES u32 lanes
                // (COMPRESSES vectors have 32-bit lanes).
                unsafe { positions.store(found.as_mut_ptr().add(passed)) };
                passed += lane_bits.count_ones() as usize;
            }
            position = start + block;
        }
        for &p in found.get(..passed).unwrap_or_default() {
            let p = p as usize;
            if !row.get(p).is_some_and(|&value| collect(p, value)) {
                return false;
            }
        }
    } else {
        let lanes = Lanes::<V>::new(map, flip);
        let prepared = Prepared::<V>::new::<KIND>(cap, flip, map);
        let mut position = 0;
        while position < n {
            let (start, mut bits) = prepared.block_at::<T, KIND>(row, position, &lanes);
            while bits != 0 {
                let p = start + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if !collect(p, row[p]) {
                    return false;
                }
            }
            position = start + block;
        }
    }
    // The slots past `count` hold `LAST`: sorting a whole number of vectors needs no padding.
    let collected = entries
        .get_mut(..count.next_multiple_of(MAX_LANES / 2))
        .unwrap_or_default();
    S::sort(collected, k);
    report(collected.get(..k).unwrap_or_default(), emit);
    true
}

/// The K-th best key among `SAMPLE_RATIO · k` evenly spaced elements of `row`.
///
/// At least K elements of the row have a key at most this, so no element with a larger key is among
/// the row's first K.
fn sample_bound<S: Sorter, T: Element, E: Entry>(row: &[T], k: usize, flip: u64, buffer: &mut [E]) -> u64 {
    let samples = (k * SAMPLE_RATIO).min(row.len());
    let step = row.len() / samples;
    let mut candidates = Candidates::<E, S>::sorted_by(buffer, k);
    for position in (0..samples).map(|i| i * step) {
        offer(&mut candidates, ordered_key(row[position], flip), position, None);
    }
    candidates.finish().last().map_or(u64::MAX, |entry| entry.key())
}

/// Pushes `key` if it can still be among the first K.
#[inline(always)]
fn offer(candidates: &mut impl Pool, key: u64, position: usize, cap: Option<u64>) -> bool {
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
    emit: &mut Emit<'_>,
) -> Outcome {
    let n = row.len();
    let lanes = Lanes::<V>::new(map, flip);
    let block = V::LANES * UNROLL;
    let mut position = 0;
    let mut pushed = 0usize;
    let mut prepared = Prepared::<V>::none();
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
        // once per block (worth about 3% on f16 rows of 128k, K = 50).
        if prepared.key != key {
            prepared = Prepared::new::<KIND>(key, flip, map);
        }
        // The hot loop: whole blocks against an unchanged limit until one has a lane below it. The pool
        // is looked at only after survivors (it was once per block: f16 rows of 128k with K = 8, 0.25 to
        // 0.13 ms for 32). Noting the blocks with survivors without a branch, to take them up in
        // batches, was tried: the scan slowed more than the mispredicted branches cost.
        let (mut start, mut bits) = prepared.scan::<T, KIND>(row, position, &lanes);
        if bits == 0 {
            if start >= n {
                position = n;
                break;
            }
            // The row's end: its last full block, rather than a scalar tail.
            (start, bits) = prepared.block_at::<T, KIND>(row, start, &lanes);
        }
        while bits != 0 {
            let p = start + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            pushed += usize::from(offer(&mut candidates, ordered_key(row[p], flip), p, cap));
        }
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

/// Reads `V::LANES` neighbouring sequences of `side` side by side, one per lane, and reports each one's
/// first K through `emit(lane, rank, position)`. Returns the sequences taken: `V::LANES`, or 0 (nothing
/// reported) when `side` has fewer, `k > SMALL_K`, or positions do not fit the lanes.
///
/// ```text
/// best[0..S], at[0..S] = each lane's best keys so far, sorted, and their positions   // in registers
/// for each position j (one vector: element j of every lane, adjacent in memory):
///     x = keys(row j)
///     if j < K or any lane of x < best[S - 1]: insert x at j into every lane    // branch-free
/// ```
/// The lanes' best K sit in the last K of `S` slots (8 or 16), the slots before them hold key 0 and
/// never move, so the threshold is always the last slot. A non-last axis costs one vector compare per
/// `LANES` elements, reading memory in order, and one `S`-step vector insertion when some lane's
/// threshold falls, instead of one strided (cache-missing) walk per sequence, or a scalar insertion per
/// passing lane. Stack: `2 · S` vectors (at most 2 KiB).
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

/// Where the filter keeps its candidates: the shared buffer, or for small K a sorted array.
trait Pool {
    /// Appends a candidate (positions in increasing order).
    fn push(&mut self, key: u64, position: usize);
    /// The K-th best key so far, once there is one: only keys strictly below it can still enter.
    fn threshold(&self) -> Option<u64>;
    /// Whether K entries were pushed.
    fn holds_k(&self) -> bool;
    /// Reports the best K, in order.
    fn report(self, emit: &mut Emit<'_>);
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

    fn report(self, emit: &mut Emit<'_>) {
        report(self.finish(), emit);
    }
}

/// K at most this keeps its candidates sorted on the stack (`SMALL_K` entries of 16 bytes at most).
pub(crate) const SMALL_K: usize = 16;

/// K at most this needs only the lower half of the sorted pool's slots.
const HALF_K: usize = SMALL_K / 2;

/// The best K so far, sorted: a push is an insertion instead of the buffer's compaction every K
/// pushes, and the threshold is exact from the K-th element on. Short rows with small K (MoE routing:
/// n = 256, K = 8) spend most of their time in those compactions otherwise.
///
/// The slots start as [`Entry::LAST`], so every push is the same branch-free pass over them (an
/// insertion loop's exit is a mispredicted branch per push, which cost more than the moves). K <= 8
/// passes over the lower 8 slots only: the one branch is the same for every push of a call, and it took
/// a quarter off MoE rows (1.04 to 0.78 ms for 4096 x 256, K = 8). (Two pool types sized 8 and 16 did the same, but doubled the filter's
/// code: the firmware build grew from 26 to 45 KB.)
struct Sorted<E> {
    best: [E; SMALL_K],
    /// Entries pushed, up to K: the slots from here on are still `LAST`.
    filled: usize,
    k: usize,
}

impl<E: Entry> Sorted<E> {
    #[inline(always)]
    fn new(k: usize) -> Self {
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
                best[i] = best[i - 1].max(best[i].min(entry));
            }
        }
        for i in (1..HALF_K).rev() {
            best[i] = best[i - 1].max(best[i].min(entry));
        }
        best[0] = best[0].min(entry);
        self.filled = (self.filled + 1).min(self.k);
    }
    #[inline(always)]
    fn threshold(&self) -> Option<u64> {
        (self.filled == self.k).then(|| self.best[self.k - 1].key())
    }
    fn holds_k(&self) -> bool {
        self.filled == self.k
    }
    fn report(self, emit: &mut Emit<'_>) {
        report(self.best.get(..self.filled).unwrap_or_default(), emit);
    }
}

/// Pushes allowed before `position` before the filter counts as failing: random data pushes about
/// `K · ln(position / K)`, ascending data every element.
#[inline(always)]
fn bail_budget(k: usize, position: usize) -> usize {
    8 * k + position / 64
}

/// A key limit turned into what the block test compares lanes with.
#[derive(Clone, Copy)]
struct Prepared<V> {
    /// The key limit this stands for (0 = none yet: a limit of 0 stops the scan before any test).
    key: u64,
    limit: V,
    /// `HALF` in 16-bit lanes: lanes above this are negative NaNs (`0xFC00` in each, or all ones where the
    /// test needs no such term).
    negative_nan: V,
    /// How lanes are compared with `limit`: one of the test constants below `AT_RUN_TIME`.
    test: u8,
}

impl<V: Vector> Prepared<V> {
    /// The lanes of the `UNROLL` vectors of `row` from `start` that pass the limit, as bits (lane `i`
    /// of vector `u` is bit `u · LANES + i`); tested with one `any` before the bits are gathered.
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`.
    #[inline(always)]
    unsafe fn block_bits<T: Element, const KIND: u8>(&self, row: &[T], start: usize, lanes: &Lanes<V>) -> u64 {
        // SAFETY: the caller's precondition.
        unsafe { self.bits_with::<T, KIND, AT_RUN_TIME>(row, start, lanes) }
    }

    /// The block of `row` that holds `position` (`< row.len()`): the one from `position`, or, with less
    /// than a block left, the row's last block with its lanes before `position` (already seen) masked
    /// off. Returns its start and the lanes that pass, as [`block_bits`](Self::block_bits); the bits are 0
    /// where the row is shorter than a block or `position` is past its end.
    #[inline(always)]
    fn block_at<T: Element, const KIND: u8>(&self, row: &[T], position: usize, lanes: &Lanes<V>) -> (usize, u64) {
        let Some(last) = row.len().checked_sub(UNROLL * V::LANES) else {
            return (position, 0);
        };
        let start = position.min(last);
        if position - start >= UNROLL * V::LANES {
            return (position, 0);
        }
        // SAFETY: start <= last, so start + UNROLL · LANES <= row.len().
        let bits = unsafe { self.block_bits::<T, KIND>(row, start, lanes) };
        (start, bits & u64::MAX << (position - start))
    }

    /// The hot loop: the first whole block of `row` from `start` on with a lane that passes the limit, as
    /// its start and [`block_bits`](Self::block_bits); or the first start past the last whole block, and 0.
    ///
    /// The float test is matched once, outside the loop (matched inside, it was a load and a branch per
    /// block, and the loop ran at 80% of the memory's speed on 1M f32 with K = 1).
    #[inline(always)]
    fn scan<T: Element, const KIND: u8>(&self, row: &[T], start: usize, lanes: &Lanes<V>) -> (usize, u64) {
        if !V::SPECIALIZE {
            return self.scan_generic::<T, KIND>(row, start, lanes);
        }
        // Matched on the kind and the vector first: each compiles only the copies of the tests it can have.
        let bits = KIND == HALF && V::HALF_LANES;
        match (KIND, self.test) {
            (NATIVE_FLOAT | HALF, LESS_OR_EQUAL) if !bits => {
                self.scan_with::<T, KIND, LESS_OR_EQUAL>(row, start, lanes)
            }
            (NATIVE_FLOAT | HALF, NOT_LESS_OR_EQUAL) if !bits => {
                self.scan_with::<T, KIND, NOT_LESS_OR_EQUAL>(row, start, lanes)
            }
            (HALF, HALF_BELOW_SIGNED) if bits => self.scan_with::<T, KIND, HALF_BELOW_SIGNED>(row, start, lanes),
            (HALF, HALF_ABOVE) if bits => self.scan_with::<T, KIND, HALF_ABOVE>(row, start, lanes),
            (HALF, HALF_ABOVE_SIGNED_OR_NAN) if bits => {
                self.scan_with::<T, KIND, HALF_ABOVE_SIGNED_OR_NAN>(row, start, lanes)
            }
            (HALF, HALF_BELOW_OR_NAN) if bits => self.scan_with::<T, KIND, HALF_BELOW_OR_NAN>(row, start, lanes),
            _ => self.scan_with::<T, KIND, LESS>(row, start, lanes),
        }
    }

    /// [`scan`](Self::scan) in one copy, the float test matched per block.
    #[inline(always)]
    fn scan_generic<T: Element, const KIND: u8>(&self, row: &[T], mut start: usize, lanes: &Lanes<V>) -> (usize, u64) {
        let block = UNROLL * V::LANES;
        while start + block <= row.len() {
            // SAFETY: checked just above.
            let bits = unsafe { self.block_bits::<T, KIND>(row, start, lanes) };
            if bits != 0 {
                return (start, bits);
            }
            start += block;
        }
        (start, 0)
    }

    #[inline(always)]
    fn scan_with<T: Element, const KIND: u8, const TEST: u8>(
        &self,
        row: &[T],
        mut start: usize,
        lanes: &Lanes<V>,
    ) -> (usize, u64) {
        let block = UNROLL * V::LANES;
        // 32- and 64-bit elements and f16 bits: two blocks a branch (32 x 128k f32 with K = 8: 0.26 to
        // 0.18 ms; f16 with K = 1, 0.100 to 0.081; one block a branch left the loads too few in flight to
        // reach the memory's speed). Narrower ones, whose loads widen or convert, lost 10-15% with it, and
        // test one block a branch.
        while KIND == HALF && V::HALF_LANES && start + 2 * block <= row.len() {
            // SAFETY: checked just above; T is f16 for HALF.
            let (a, b) = unsafe {
                (
                    self.half_bits::<T, TEST>(row, start),
                    self.half_bits::<T, TEST>(row, start + block),
                )
            };
            if a | b != 0 {
                return if a != 0 { (start, a) } else { (start + block, b) };
            }
            start += 2 * block;
        }
        while size_of::<T>() >= 4 && start + 2 * block <= row.len() {
            // SAFETY: checked just above.
            let (a, b) = unsafe {
                (
                    self.masks_with::<T, KIND, TEST>(row, start, lanes),
                    self.masks_with::<T, KIND, TEST>(row, start + block, lanes),
                )
            };
            let none = V::lt(self.limit, self.limit);
            let any = a.iter().chain(&b).fold(none, |x, &y| V::or_mask(x, y));
            if V::any(any) {
                let bits = bits_of::<V>(&a);
                return if bits != 0 {
                    (start, bits)
                } else {
                    (start + block, bits_of::<V>(&b))
                };
            }
            start += 2 * block;
        }
        while start + block <= row.len() {
            // SAFETY: checked just above.
            let bits = unsafe { self.bits_with::<T, KIND, TEST>(row, start, lanes) };
            if bits != 0 {
                return (start, bits);
            }
            start += block;
        }
        (start, 0)
    }

    /// [`block_bits`](Self::block_bits) with the float test `TEST`.
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`.
    #[inline(always)]
    unsafe fn bits_with<T: Element, const KIND: u8, const TEST: u8>(
        &self,
        row: &[T],
        start: usize,
        lanes: &Lanes<V>,
    ) -> u64 {
        if KIND == HALF && V::HALF_LANES {
            // SAFETY: the caller's precondition.
            return unsafe { self.half_bits::<T, TEST>(row, start) };
        }
        // SAFETY: the caller's precondition.
        let masks = unsafe { self.masks_with::<T, KIND, TEST>(row, start, lanes) };
        let any = masks
            .iter()
            .fold(V::lt(self.limit, self.limit), |a, &b| V::or_mask(a, b));
        if !V::any(any) {
            return 0;
        }
        bits_of::<V>(&masks)
    }

    /// [`bits_with`](Self::bits_with) for `HALF` in 16-bit lanes: `UNROLL / 2` registers of 16-bit
    /// lanes, whose tests come as bits already (kept out of the masks of 32-bit lanes: splitting them per
    /// `LANES` made LLVM shuffle the masks through memory, and the loop 7 times slower).
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`, and T is f16.
    #[inline(always)]
    unsafe fn half_bits<T: Element, const TEST: u8>(&self, row: &[T], start: usize) -> u64 {
        debug_assert!(start + UNROLL * V::LANES <= row.len() && size_of::<T>() == 2);
        let test = if TEST == AT_RUN_TIME { self.test } else { TEST };
        let mut bits = 0;
        for pair in 0..UNROLL / 2 {
            // SAFETY: the pair's 2 · LANES elements end at start + UNROLL · LANES at the latest, inside
            // `row` (the caller's precondition), and T is f16 (2 bytes).
            let raw = unsafe { V::load16(row.as_ptr().add(start + 2 * pair * V::LANES).cast()) };
            bits |= half_test(raw, self.limit, self.negative_nan, test) << (2 * pair * V::LANES);
        }
        bits
    }

    /// The lane tests of the block of `row` from `start`, with the float test `TEST`.
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`.
    #[inline(always)]
    unsafe fn masks_with<T: Element, const KIND: u8, const TEST: u8>(
        &self,
        row: &[T],
        start: usize,
        lanes: &Lanes<V>,
    ) -> [V::Mask; UNROLL] {
        debug_assert!(start + UNROLL * V::LANES <= row.len(), "{start} of {}", row.len());
        let limit = self.limit;
        let mut masks = [V::eq(limit, limit); UNROLL];
        let test = if TEST == AT_RUN_TIME { self.test } else { TEST };
        for (u, mask) in masks.iter_mut().enumerate() {
            // SAFETY: the u-th vector of the block ends at start + UNROLL · LANES at the latest, inside `row`
            // (the caller's precondition); T is one of the crate's element types, of the lane's width or less.
            let raw = unsafe {
                let ptr = row.as_ptr().add(start + u * V::LANES);
                // HALF: T is f16 (2 bytes), and the vector converts it (16-bit lanes do not come here).
                if KIND == HALF {
                    V::load_half(ptr.cast())
                } else {
                    V::load(ptr)
                }
            };
            *mask = match KIND {
                NATIVE_FLOAT | HALF => match test {
                    LESS => raw.float_lt(limit),
                    LESS_OR_EQUAL => raw.float_le(limit),
                    _ => raw.float_nle(limit),
                },
                _ => keys::<V, KIND>(raw, lanes).lt(limit),
            };
        }
        masks
    }

    #[inline(always)]
    fn none() -> Self {
        Prepared {
            key: 0,
            limit: V::splat(0),
            negative_nan: V::splat(u64::MAX),
            test: LESS,
        }
    }

    #[inline(always)]
    fn new<const KIND: u8>(key: u64, flip: u64, map: &KeyMap) -> Self {
        let (limit, test) = match KIND {
            NATIVE_FLOAT => {
                let (value, test) = float_limit(key, flip, map);
                (value, test.code())
            }
            HALF if V::HALF_LANES => {
                let (half, test) = half_limit(float_limit(key, flip, map));
                // The same 16 bits in both halves of every 32-bit lane.
                (half * 0x1_0001, test)
            }
            HALF => {
                let (half, test) = float_limit(key, flip, map);
                (
                    u64::from(half::f16::from_bits(half as u16).to_f32().to_bits()),
                    test.code(),
                )
            }
            _ => (key, LESS),
        };
        let negative_nan = match test {
            HALF_ABOVE_SIGNED_OR_NAN | HALF_BELOW_OR_NAN => (F16_INFINITY | 0x8000) * 0x1_0001,
            _ => u64::MAX,
        };
        Prepared {
            key,
            limit: V::splat(limit),
            negative_nan: V::splat(negative_nan),
            test,
        }
    }
}

/// A block's lane tests as bits: lane `i` of vector `u` is bit `u · LANES + i`.
#[inline(always)]
fn bits_of<V: Vector>(masks: &[V::Mask; UNROLL]) -> u64 {
    let mut bits = 0u64;
    for (u, &mask) in masks.iter().enumerate() {
        bits |= V::bits(mask) << (u * V::LANES);
    }
    bits
}

// How lanes are compared with the prepared limit, as the const parameter of the hot loop: the
// [`FloatTest`]s, and the tests of f16 bits in 16-bit lanes ([`half_test`]).
const LESS: u8 = 0;
const LESS_OR_EQUAL: u8 = 1;
const NOT_LESS_OR_EQUAL: u8 = 2;
const HALF_BELOW_SIGNED: u8 = 3;
const HALF_ABOVE: u8 = 4;
const HALF_ABOVE_SIGNED_OR_NAN: u8 = 5;
const HALF_BELOW_OR_NAN: u8 = 6;
/// The test matched per block, in the one copy of the cold paths.
const AT_RUN_TIME: u8 = 7;

/// The lanes of `raw` (f16 bits in 16-bit lanes) that pass `test` against `limit` and `negative_nan`,
/// as bits.
#[inline(always)]
fn half_test<V: Vector>(raw: V, limit: V, negative_nan: V, test: u8) -> u64 {
    match test {
        HALF_BELOW_SIGNED => raw.lt16_signed(limit),
        HALF_ABOVE => raw.gt16(limit),
        HALF_ABOVE_SIGNED_OR_NAN => raw.gt16_signed(limit) | raw.gt16(negative_nan),
        _ => raw.lt16(limit) | raw.gt16(negative_nan),
    }
}

/// The float test `(v, test)` of [`float_limit`] for f16, as integer compares of the raw bits
/// (sign and magnitude) in 16-bit lanes: the value and the test constant for [`half_test`].
///
/// ```text
/// x < v, v > +0       x <s v           (signed: every negative is below; positives by magnitude)
/// x < v, v <= +0      x >u v|0x8000    (negatives of larger magnitude; +0 stands as -0)
/// x <= +inf           x <s +inf + 1
/// !(x <= v), v >= +0  x >s v  or  x >u -inf
/// !(x <= v), v < -0   x <u v  or  x >u -inf   (every positive, negatives of smaller magnitude)
/// ```
/// `x >u -inf` is a negative NaN, which `!(x <= v)` passes. Exact, except that the two tests of
/// `x < v` also pass negative NaNs: a lane test may pass too much, and these are rare.
#[inline(always)]
fn half_limit((v, test): (u64, FloatTest)) -> (u64, u8) {
    let negative = v & 0x8000 != 0;
    match test {
        FloatTest::Less if !negative && v != 0 => (v, HALF_BELOW_SIGNED),
        FloatTest::Less => (v | 0x8000, HALF_ABOVE),
        FloatTest::LessOrEqual => (v + 1, HALF_BELOW_SIGNED),
        FloatTest::NotLessOrEqual if !negative => (v, HALF_ABOVE_SIGNED_OR_NAN),
        FloatTest::NotLessOrEqual => (v, HALF_BELOW_OR_NAN),
    }
}

/// How f32/f64 lanes are compared with the float a limit stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FloatTest {
    /// `x < v` (false for NaN).
    Less,
    /// `x <= v` (false for NaN).
    LessOrEqual,
    /// `!(x <= v)` (true for NaN).
    NotLessOrEqual,
}

impl FloatTest {
    /// The hot loop's constant for this test.
    #[inline(always)]
    fn code(self) -> u8 {
        match self {
            FloatTest::Less => LESS,
            FloatTest::LessOrEqual => LESS_OR_EQUAL,
            FloatTest::NotLessOrEqual => NOT_LESS_OR_EQUAL,
        }
    }
}

/// The bits of a float `v`, and the comparison, that pass exactly the elements whose flipped key is
/// below `limit` — the key transform moved from every element to the one limit.
///
/// Keys are monotone in the total order of SPEC §2, which is IEEE order with -0 == +0 and NaN above
/// everything; IEEE compares tie the zeros already, so only NaN and the one key no value has (just below
/// +0's, where -0 would have gone) need care:
/// - `Increasing`: key(x) < L iff x < v for v the value of key L (the hole inverts to -0: x < -0 is
///   exactly "negative"); when L is above +inf's key every non-NaN passes: x <= +inf.
/// - `Decreasing`: key(x) > M (M = L ^ ones) iff x > v or x is NaN, with the hole taken as the key
///   just below it (the smallest negative subnormal) and M at or above +inf's key meaning "NaN only".
#[inline(always)]
fn float_limit(limit: u64, flip: u64, map: &KeyMap) -> (u64, FloatTest) {
    let infinity_key = map.infinity | map.sign;
    let hole = map.sign - 1;
    let value = |key: u64| {
        if key >= map.sign {
            key ^ map.sign
        } else {
            !key & map.ones
        }
    };
    if flip == 0 {
        if limit > infinity_key {
            (map.infinity, FloatTest::LessOrEqual)
        } else {
            (value(limit), FloatTest::Less)
        }
    } else {
        let key = limit ^ map.ones;
        let key = if key == hole { hole - 1 } else { key };
        (value(key.min(infinity_key)), FloatTest::NotLessOrEqual)
    }
}

/// The bits of f16's +inf; bf16, the other 16-bit float, has 0x7F80.
const F16_INFINITY: u64 = 0x7C00;

/// How raw bits become keys for one element type, probed from [`Element::key`] itself so that the
/// lanes can never disagree with the scalar keys (the form of the key, a constant of the type, is
/// checked against the same probe by a test).
pub(crate) struct KeyMap {
    sign: u64,
    ones: u64,
    infinity: u64,
}

impl KeyMap {
    #[inline(always)]
    fn of<T: Element>() -> KeyMap {
        let bits = 8 * size_of::<T>() as u32;
        let ones = u64::MAX >> (64 - bits);
        let sign = 1u64 << (bits - 1);
        let key = |raw: u64| from_bits::<T>(raw).key().widen();
        // The largest finite magnitude's successor: IEEE infinity (f16 and bf16 share a width).
        let infinity = match bits {
            16 if key(0x7C01) == ones => F16_INFINITY,
            16 => 0x7F80,
            32 => 0x7F80_0000,
            _ => 0x7FF0_0000_0000_0000,
        };
        KeyMap { sign, ones, infinity }
    }
}

/// The value of `T` with the raw bits `raw` (truncated to T's width).
#[inline(always)]
fn from_bits<T: Element>(raw: u64) -> T {
    match size_of::<T>() {
        // `Element` is sealed to the primitive integers and floats and half's `repr(transparent)`
        // f16/bf16, for which every bit pattern of their size is a valid value, and each arm reads exactly
        // size_of::<T>() bytes of a source of that size.
        // SAFETY: see above.
        1 => unsafe { core::mem::transmute_copy(&(raw as u8)) },
        // SAFETY: see above.
        2 => unsafe { core::mem::transmute_copy(&(raw as u16)) },
        // SAFETY: see above.
        4 => unsafe { core::mem::transmute_copy(&(raw as u32)) },
        // SAFETY: see above (size 8).
        _ => unsafe { core::mem::transmute_copy(&raw) },
    }
}

/// The key map's constants broadcast once per row, with the direction's flip folded in.
struct Lanes<V> {
    flip: V,
    sign_flip: V,
    sign: V,
    magnitude: V,
    infinity: V,
    negative_flip: V,
}

impl<V: Vector> Lanes<V> {
    #[inline(always)]
    fn new(map: &KeyMap, flip: u64) -> Self {
        Lanes {
            flip: V::splat(flip),
            sign_flip: V::splat(map.sign ^ flip),
            sign: V::splat(map.sign),
            magnitude: V::splat(map.ones >> 1),
            infinity: V::splat(map.infinity),
            negative_flip: V::splat(map.ones ^ flip),
        }
    }
}

/// The flipped keys of raw lanes: [`crate::element`]'s transform, lane-wise.
#[inline(always)]
fn keys<V: Vector, const KIND: u8>(raw: V, c: &Lanes<V>) -> V {
    match KIND {
        UNSIGNED => raw.xor(c.flip),
        SIGNED => raw.xor(c.sign_flip),
        _ => {
            // Negative: all bits flipped; positive: sign set (then the direction's flip on top).
            let negative = raw.and(c.sign).eq(c.sign);
            let key = raw.xor(V::select(negative, c.negative_flip, c.sign_flip));
            // -0 ties with +0, whose key is the sign bit alone.
            let key = V::select(raw.eq(c.sign), c.sign_flip, key);
            // Every NaN is above +inf: all ones.
            V::select(raw.and(c.magnitude).gt(c.infinity), c.negative_flip, key)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The float test of every limit near an interesting key passes exactly the keys below the limit:
    /// the lanes' test is then exact for f32, not only a superset.
    #[test]
    fn float_limits_are_exact_for_f32() {
        let map = KeyMap::of::<f32>();
        let values: [u32; 14] = [
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x3F80_0000,
            0xBF80_0000,
            0x7F7F_FFFF,
            0xFF7F_FFFF,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0000,
            0xFFC0_0001,
            0x7F80_0001,
            0x0080_0000,
        ];
        let keys = values.map(|v| u64::from(f32::from_bits(v).key()));
        let mut limits: Vec<u64> = keys.iter().flat_map(|&k| [k.saturating_sub(1), k, k + 1]).collect();
        limits.extend([0x7FFF_FFFF, 0x7FFF_FFFE, 0xFFFF_FFFE, 0xFFFF_FFFF, 0xFF80_0001, 1]);
        for flip in [0, 0xFFFF_FFFF] {
            for &limit in limits.iter().filter(|&&l| (1..=0xFFFF_FFFF).contains(&l)) {
                let (v, test) = float_limit(limit, flip, &map);
                let v = f32::from_bits(v as u32);
                for &x in &values {
                    let want = (u64::from(f32::from_bits(x).key()) ^ flip) < limit;
                    let x = f32::from_bits(x);
                    let got = match test {
                        FloatTest::Less => x < v,
                        FloatTest::LessOrEqual => x <= v,
                        FloatTest::NotLessOrEqual => x.partial_cmp(&v).is_none_or(|o| o.is_gt()),
                    };
                    assert_eq!(got, want, "x {:#x} limit {limit:#x} flip {flip:#x}", x.to_bits());
                }
            }
        }
    }

    /// The f16 bit tests of every limit pass every f16 whose key is below it, and besides those only
    /// negative NaNs (which `x < v` may pass): checked over all 65536 values, for limits at and around
    /// every key of interest.
    #[test]
    #[cfg_attr(miri, ignore = "9 million tests of plain integer code")]
    fn half_limits_pass_exactly_the_keys_below() {
        let map = KeyMap::of::<half::f16>();
        let key = |x: u16| u64::from(half::f16::from_bits(x).key());
        let values = [
            0u16, 0x8000, 1, 0x8001, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE01,
        ];
        let mut limits: Vec<u64> = values.iter().flat_map(|&x| [key(x) - 1, key(x), key(x) + 1]).collect();
        limits.extend([1, 0xFFFE, 0xFFFF, 0x7FFF, 0x7FFE]);
        for flip in [0, 0xFFFF] {
            for &limit in limits.iter().filter(|&&l| (1..=0xFFFF).contains(&l)) {
                let (v, test) = half_limit(float_limit(limit, flip, &map));
                let v = v as u16;
                for x in 0..=u16::MAX {
                    let (signed, v_signed) = (x as i16, v as i16);
                    let negative_nan = x > 0xFC00;
                    let passes = match test {
                        HALF_BELOW_SIGNED => signed < v_signed,
                        HALF_ABOVE => x > v,
                        HALF_ABOVE_SIGNED_OR_NAN => signed > v_signed || negative_nan,
                        _ => x < v || negative_nan,
                    };
                    let want = (key(x) ^ flip) < limit;
                    assert!(
                        passes == want || (passes && negative_nan),
                        "x {x:#x} limit {limit:#x} flip {flip:#x}: test {test} v {v:#x}"
                    );
                }
            }
        }
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
        check::<u8>();
        check::<u16>();
        check::<u32>();
        check::<u64>();
        check::<i8>();
        check::<i16>();
        check::<i32>();
        check::<i64>();
        check::<f32>();
        check::<f64>();
        check::<half::f16>();
        check::<half::bf16>();
    }

    /// Every engine this build has against the reference on rows of a few vectors (small enough for
    /// miri, which runs the portable lanes' loads here).
    fn agrees_with_naive<T: Element + PartialEq + core::fmt::Debug>(data: &[T]) {
        extern crate std;
        use crate::{Backend, Direction, TopK, View, ViewMut, naive};
        use std::vec;
        let n = data.len();
        for k in [1, 3, n / 2, n] {
            for direction in [Direction::Decreasing, Direction::Increasing] {
                let (mut want_v, mut want_i) = (vec![T::ZERO; k], vec![0u32; k]);
                let input = View::contiguous(data, [n]).unwrap();
                let (v, i) = (
                    ViewMut::contiguous(&mut want_v[..], [k]).unwrap(),
                    ViewMut::contiguous(&mut want_i[..], [k]).unwrap(),
                );
                naive::topk(input, 0, k, direction, v, i).unwrap();
                // Miri leaves out the backends that would repeat a run it has just made: `Naive` is the
                // reference's own `run_sequences` call, and `Auto` resolves to `Portable` there (the two
                // took it about 40 of 89 s: the reference reads the row once for each of the K).
                let repeats = |b: &Backend| cfg!(miri) && matches!(b, Backend::Naive | Backend::Auto);
                for backend in Backend::ALL.into_iter().filter(|b| b.is_available() && !repeats(b)) {
                    let (mut got_v, mut got_i) = (vec![T::ZERO; k], vec![0u32; k]);
                    let (v, i) = (
                        ViewMut::contiguous(&mut got_v[..], [k]).unwrap(),
                        ViewMut::contiguous(&mut got_i[..], [k]).unwrap(),
                    );
                    let mut plan = TopK::new(input, 0, k, direction, v, i).unwrap();
                    let mut scratch = vec![0u64; plan.scratch_len()];
                    plan.run_sequences(0..1, backend, &mut scratch).unwrap();
                    assert_eq!(got_i, want_i, "{} {} k {k} {direction:?}", backend.name(), T::NAME);
                }
            }
        }
    }

    #[test]
    fn engines_agree_on_short_rows() {
        let bits = |i: u32| i.wrapping_mul(0x9E37_79B9).rotate_left(i % 7);
        let specials = [0x7FC0_0001u32, 0xFFC0_0000, 0x8000_0000, 0, 0x7F80_0000, 0xFF80_0000];
        let f32s: [f32; 77] =
            core::array::from_fn(|i| f32::from_bits(if i % 5 == 0 { specials[i % 6] } else { bits(i as u32) }));
        agrees_with_naive(&f32s);
        let f64s: [f64; 41] = core::array::from_fn(|i| f64::from(f32s[i]));
        agrees_with_naive(&f64s);
        let u8s: [u8; 70] = core::array::from_fn(|i| (bits(i as u32) % 7) as u8);
        agrees_with_naive(&u8s);
        let i16s: [i16; 69] = core::array::from_fn(|i| bits(i as u32) as i16);
        agrees_with_naive(&i16s);
        let f16s: [half::f16; 66] = core::array::from_fn(|i| half::f16::from_bits((f32s[i].to_bits() >> 16) as u16));
        agrees_with_naive(&f16s);
    }
}
