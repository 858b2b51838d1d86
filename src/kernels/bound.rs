//! Bounds that let a row's filter start with a limit instead of from nothing: the K-th best of the
//! group minima of the row's start ([`prefix_bound`], [`minima_bound`]), and of an even sample of the
//! row once a pass has stopped filtering ([`sample_bound`]).

use crate::kernels::candidates::{Candidates, Sorter};
use crate::kernels::entry::Entry;
use crate::simd::vector::{MAX_LANES, Vector};
use crate::types::element::{Element, Order};

use super::filter::offer;
use super::lanes::{
    BF16, FLOAT, HALF, KeyMap, LaneLimit, Lanes, NATIVE_FLOAT, SIGNED, UNROLL, UNSIGNED, in_8_bit_lanes,
    in_16_bit_lanes, keys, load_as,
};
use super::network;

/// Groups the prefix bound takes its minima over (at most; fewer when `UNROLL` vectors hold fewer lanes;
/// twice as many on short rows with K above half of it).
const GROUPS: usize = 16;

/// Blocks a row must exceed for [`minima_bound`] to pick by float compares ([`pick`]) rather than key
/// every vector: on shorter rows the picks' latency (dependent maxima, and f16's conversions) is
/// exposed. Set by rows of 64 and 100 f32 and f16 with K of 1 and 8, and by rows of 256
/// (`moe4096x256_k8`), which 4 blocks would slow; see BENCHMARKS.md, decisions.
const PICK_MIN: usize = 2;

/// Elements of a row's start the prefix bound reads (all of a short row).
pub(crate) const PREFIX: usize = 512;

/// A bound on the K-th best key of `row` from its first `PREFIX` elements, for `k <= GROUPS` (up to
/// `2 · GROUPS` on short rows, see below): `None` when the row is too short or K too large.
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
pub(crate) fn prefix_bound<V: Vector, T: Element, const FORM: u8>(
    row: &[T],
    k: usize,
    order: Order,
    map: &KeyMap,
) -> Option<u64> {
    let prefix = row.get(..PREFIX).unwrap_or(row);
    let short = V::SPECIALIZE && (2 * GROUPS..=PREFIX).contains(&row.len());
    // Short rows with K of 17 to 32 take four times the groups, as many as the lanes of UNROLL vectors
    // hold (64 for 32-bit elements on AVX-512, 32 for AVX2 or 64-bit ones), and K at most three quarters
    // of them: the K-th minimum then leaves about 40 elements of a random row of 256 or 512 below it,
    // which `collect_below` collects (SHORT_CAP). Nearer the largest minimum, too many lie below it; the
    // row is then selected whole (`whole_row`), which is slower on such rows (rows of 256 f32 with K of
    // 17 to 32).
    let vectors = (4 * GROUPS / V::LANES).clamp(1, UNROLL);
    if short && k > GROUPS && k <= 2 * GROUPS && 4 * k <= 3 * vectors * V::LANES {
        return minima_bound::<V, T, FORM>(prefix, k, order, map, vectors);
    }
    if k > GROUPS {
        return None;
    }
    // Short rows with K above GROUPS / 2 take twice the groups: the K-th of 16 minima is then near their
    // largest, and about 45 elements of a random row of 256 with K = 16 lie below it, for the network
    // to sort (or, past SHORT_CAP, for the filter to run the row again); below the 16th of 32 minima,
    // about 21 (rows of 256 with K of 12 and 16).
    // Long rows keep 16: their bound only seeds the pool for the first PREFIX elements. So do the
    // portable lanes (to keep the firmware's code small).
    // Each call with a constant count of vectors: a count known only at run time slows rows of 256 with
    // K = 8 (`moe4096x256_k8`).
    if short && k > GROUPS / 2 {
        minima_bound::<V, T, FORM>(prefix, k, order, map, (2 * GROUPS / V::LANES).clamp(1, UNROLL))
    } else {
        minima_bound::<V, T, FORM>(prefix, k, order, map, (GROUPS / V::LANES).clamp(1, UNROLL))
    }
}

/// Interleaved sets of groups [`pieces_bound`] takes at most (`UNROLL` vectors of groups each). Eight,
/// not four, take AVX2's K of 65 to 128 from the filter to the collection, which is faster there
/// (rows of 1024 and 4096 f32 and f64 with K of 60 to 100, random and ascending); see BENCHMARKS.md,
/// decisions.
const MAX_SETS: usize = 8;

/// A bound on the K-th best key of the whole of `row`, for K up to `MAX_SETS` (4 on AVX-512's vectors)
/// times half of `UNROLL · LANES` groups: 128 on AVX-512 and AVX2 for 32-bit elements, 64 for 64-bit
/// ones (NEON: 64 and 32). `None` for larger K, or when each group would hold fewer than two elements.
///
/// ```text
/// S       = ⌈K / (groups / 2)⌉ sets of `groups` groups, rounded up to 1, 2, 4 or 8; K split among them
/// minima  = the lane-wise minima of S · groups groups (positions ≡ g modulo S · groups)
/// bound_s = the K_s-th smallest of set s's minima, K_s about K / S
/// bound   = the largest bound_s
/// ```
/// Each set has K_s distinct elements at or below `bound_s`, so the row has K at or below `bound`.
/// With K_s at most half the groups, about 1.4 K elements of a random row lie below it (AVX-512 f32,
/// 64 groups; 1.5-1.7 K with 32, 2 K with 16), and at most 2.2 K, 3 K and 4.5 K in 400 rows of 256 to
/// 8192 with K of 17 to 128 (a simulation); K near the group count took about 1.8 K, the K-th minimum
/// near their largest. The groups interleave rather than cut the row into pieces: on sorted rows,
/// contiguous pieces each bounded by their own end (the looser half of an ascending row of 256 with
/// K = 40 let 148 elements below), where every interleaved group has its minimum near the best end.
// Out of line in unoptimised builds (see `first_best`): inlined into the filter's frame, its
// temporaries take the debug stack test past its bound.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn pieces_bound<V: Vector, T: Element, const FORM: u8>(
    row: &[T],
    k: usize,
    order: Order,
    map: &KeyMap,
) -> Option<u64> {
    let half = UNROLL * V::LANES / 2;
    let sets = k.div_ceil(half).next_power_of_two();
    if sets > MAX_SETS || row.len() < 2 * sets * UNROLL * V::LANES {
        return None;
    }
    // As many chains as groups (see `pick`): 16 chains for one set slow rows of 1024 with K = 32.
    match sets {
        1 => sets_bound::<V, T, FORM, UNROLL>(row, k, order, map),
        2 => sets_bound::<V, T, FORM, { 2 * UNROLL }>(row, k, order, map),
        4 => sets_bound::<V, T, FORM, { 4 * UNROLL }>(row, k, order, map),
        // Not on AVX-512's vectors: 4 sets hold the K that the collection's 4 KiB take there, and the
        // minima of 8 would add 2 KiB to its engine's frame, every call's stack.
        _ if const { size_of::<V>() < 64 } => sets_bound::<V, T, FORM, { MAX_SETS * UNROLL }>(row, k, order, map),
        _ => None,
    }
}

/// [`pieces_bound`] over `N / UNROLL` sets; `None` also when the bound is the smallest key of the
/// minima: then at least K elements hold that key (rows of one value, or with K NaNs selecting
/// `Decreasing`), every one of them would be collected, and the filter, which stops taking them at the
/// K-th, is faster (rows of 1024 f32 with K = 32, one in 8 a NaN).
// Out of line in unoptimised builds, as `pieces_bound`: one size's frame at a time.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn sets_bound<V: Vector, T: Element, const FORM: u8, const N: usize>(
    row: &[T],
    k: usize,
    order: Order,
    map: &KeyMap,
) -> Option<u64> {
    let sets = N / UNROLL;
    let rounds = row.len() / (N * V::LANES);
    if rounds == 0 {
        return None;
    }
    let mut minima = [V::splat(u64::MAX); N];
    group_minima::<V, T, FORM, N>(row, order, map, N, rounds, &mut minima);
    // A loop, not a fold: its closure would not inherit the engine's target features.
    let (mut least, mut most) = (V::splat(u64::MAX), V::splat(0));
    for &minimum in &minima {
        (least, most) = (least.min(minimum), most.max(minimum));
    }
    let least = network::kth_smallest(&[least; UNROLL], 1, 1);
    // Every minimum the same key (a row of one value): no network needed to know.
    if V::bits(most.eq(V::splat(least))) == u64::MAX >> (64 - V::LANES) {
        return None;
    }
    let mut bound = 0;
    for (set, vectors) in minima.as_chunks::<UNROLL>().0.iter().enumerate() {
        let rank = k / sets + usize::from(set < k % sets);
        bound = bound.max(network::kth_smallest(vectors, UNROLL, rank));
    }
    (bound > least).then_some(bound)
}

/// The K-th smallest of the minima of `vectors · LANES` groups of `row` (positions ≡ g modulo the
/// group count), `vectors` 1, 2 or 4: at least K elements of `row` have a key at most this. `None` when
/// `row` has fewer elements than groups, or K is above their count. The prefix bound, and the guess of
/// `row::filter_row`.
#[inline(always)]
pub(crate) fn minima_bound<V: Vector, T: Element, const FORM: u8>(
    row: &[T],
    k: usize,
    order: Order,
    map: &KeyMap,
    vectors: usize,
) -> Option<u64> {
    let groups = vectors * V::LANES;
    let rounds = row.len() / groups;
    if k > groups || rounds == 0 {
        return None;
    }
    let mut minima = [V::splat(u64::MAX); UNROLL];
    group_minima::<V, T, FORM, UNROLL>(row, order, map, vectors, rounds, &mut minima);
    // The K-th smallest minimum, by a sorting network on the minima (one vector of 16 on AVX-512: 10
    // steps, where counting each minimum's rank takes 16 broadcasts, compares and popcounts).
    Some(network::kth_smallest(&minima, vectors, k))
}

/// The lane-wise minimum keys of `vectors · LANES` groups of `row` (positions ≡ g modulo the group
/// count) over its first `rounds · vectors · LANES` elements (at most the whole rounds the row holds),
/// into the first `vectors` of `minima`, which start all ones (`vectors` divides `N`, a
/// multiple of `UNROLL`).
#[inline(always)]
fn group_minima<V: Vector, T: Element, const FORM: u8, const N: usize>(
    row: &[T],
    order: Order,
    map: &KeyMap,
    vectors: usize,
    rounds: usize,
    minima: &mut [V; N],
) {
    // Never more than the row holds, whatever the caller passed: the loads below rely on it.
    let rounds = rounds.min(row.len() / (vectors * V::LANES));
    let lanes = Lanes::<V>::new(map, order);
    let long = row.len() > PICK_MIN * UNROLL * V::LANES;
    if const { V::SPECIALIZE && (FORM == HALF || FORM == BF16) && V::HALF_LANES && N == UNROLL }
        && long
        && rounds > 0
        && vectors.is_multiple_of(2)
    {
        // f16 and bf16 in 16-bit lanes: two integer folds a register of 2 · LANES elements, where the
        // f32 picks below take a conversion (or a widening) and a float maximum with its NaN test every
        // LANES.
        // SAFETY: 1 <= rounds <= row.len() / (vectors · LANES) (checked, and clamped above); vectors is 2
        // or 4 (even, at most N = UNROLL); FORM HALF is f16, BF16 bf16.
        let picked = unsafe {
            if order.is_increasing() {
                pick_halves::<V, T, false>(row, vectors, rounds)
            } else {
                pick_halves::<V, T, true>(row, vectors, rounds)
            }
        };
        for (minimum, picked) in minima.iter_mut().zip(picked).take(vectors) {
            *minimum = keys::<V, FORM>(picked, &lanes);
        }
    } else if const { V::SPECIALIZE && narrow_integers::<V, T, FORM>() && N == UNROLL }
        && rounds > 0
        && (rounds * vectors * V::LANES).is_multiple_of(size_of::<V>() / size_of::<T>())
    {
        // 8- and 16-bit integers in lanes of their width: one fold a register of 4 or 2 vectors'
        // elements, where keying each vector takes a widening load, a flip and a minimum.
        let total = rounds * vectors * V::LANES;
        // Four vectors of groups span two registers of 16-bit lanes: a fold for each.
        let two = vectors * V::LANES > size_of::<V>() / size_of::<T>();
        // SAFETY: total is a nonzero multiple of the register's lanes (checked above), and of two
        // registers' where `two` (total is then a multiple of vectors · LANES, two registers' lanes), at
        // most row.len() (rounds clamped above); vectors, 1 to 4 = N, divides the vectors' worth of lanes
        // of one register (4 or 2), or of two where `two` (4 = vectors); T is an 8- or 16-bit integer in
        // lanes of its width (narrow_integers).
        unsafe {
            match (order.is_increasing(), two) {
                (true, false) => pick_narrow::<V, T, FORM, false, 1>(row, total, &lanes, minima, vectors),
                (true, true) => pick_narrow::<V, T, FORM, false, 2>(row, total, &lanes, minima, vectors),
                (false, false) => pick_narrow::<V, T, FORM, true, 1>(row, total, &lanes, minima, vectors),
                (false, true) => pick_narrow::<V, T, FORM, true, 2>(row, total, &lanes, minima, vectors),
            }
        }
    } else if const {
        V::SPECIALIZE && (FORM == NATIVE_FLOAT || FORM == HALF && V::CONVERTS_HALF || FORM == BF16 && V::WIDENS_BF16)
    } && long
    {
        // f32/f64: each group keeps one of its elements by IEEE compares, keyed once at the end (a few
        // operations per vector instead of the keys' nine; not on the portable lanes, whose four more
        // copies of the loop would swell the firmware's code). f16 without the 16-bit lanes above (or
        // with an odd count of vectors) the same, converted to f32 on load and back at the end.
        let picked = if order.is_increasing() {
            pick::<V, T, FORM, false, N>(row, vectors, rounds)
        } else {
            pick::<V, T, FORM, true, N>(row, vectors, rounds)
        };
        for (minimum, picked) in minima.iter_mut().zip(picked).take(vectors) {
            *minimum = if FORM == HALF {
                keys::<V, HALF>(picked.to_half(), &lanes)
            } else if FORM == BF16 {
                keys::<V, BF16>(picked.to_bf16(), &lanes)
            } else {
                keys::<V, FLOAT>(picked, &lanes)
            };
        }
    } else {
        for round in 0..rounds {
            for (v, minimum) in minima.iter_mut().enumerate().take(vectors) {
                // SAFETY: vector `round · vectors + v` ends at `(round + 1) · groups <= row.len()` at the
                // latest; T is one of the crate's element types, of the lane's width or less.
                let raw = unsafe { nth_vector::<V, T>(row, round * vectors + v) };
                *minimum = keys::<V, FORM>(raw, &lanes).min(*minimum);
            }
        }
    }
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

/// Vector `j` of `row` as floats: f32/f64 as they are, f16 converted to f32 (`HALF`), bf16 widened to
/// f32 (`BF16`).
///
/// # Safety
/// As [`nth_vector`]; `T` is f32 or f64 in lanes of its width, or f16 (`HALF`) where the vector
/// [converts](Vector::CONVERTS_HALF) it, or bf16 (`BF16`) where it [widens](Vector::WIDENS_BF16) it.
#[inline(always)]
unsafe fn nth_floats<V: Vector, T, const FORM: u8>(row: &[T], j: usize) -> V {
    // SAFETY: the caller's precondition, which is `load_as`'s for these kinds.
    unsafe { load_as::<V, T, FORM>(row.as_ptr().add(j * V::LANES)) }
}

/// For each of the `vectors · LANES` groups of [`group_minima`], a best element of the group by
/// [`better`] (whose key is the group's minimum), as raw bits: the first `vectors` of the result. (A
/// NaN's bits may be another NaN's: every NaN keys the same.)
///
/// `N` chains of compare and blend, not one (its latency): vector j goes to chain j mod N, which holds
/// the groups of vector j mod `vectors` (`vectors` divides N), and the chains merge at the end.
#[inline(always)]
fn pick<V: Vector, T, const FORM: u8, const DECREASING: bool, const N: usize>(
    row: &[T],
    vectors: usize,
    rounds: usize,
) -> [V; N] {
    let total = rounds * vectors;
    debug_assert!(total * V::LANES <= row.len() && vectors >= 1 && N.is_multiple_of(vectors));
    // Every `nth_vector` below reads a vector j < total, and total · LANES <= row.len() (the caller's
    // `rounds`); T is f32 or f64, in lanes of its width, or f16 that V converts (`HALF`).
    let mut picked = [V::splat(0); N];
    for (a, picked) in picked.iter_mut().enumerate() {
        // SAFETY: see above; a % vectors < vectors <= total.
        *picked = unsafe { nth_floats::<V, T, FORM>(row, a % vectors) };
    }
    // Two vectors a chain a step: `better_of3` takes them in fewer instructions than two steps.
    let whole = total - total % (2 * N);
    for j in (0..whole).step_by(2 * N) {
        for (a, picked) in picked.iter_mut().enumerate() {
            // SAFETY: see above; j + N + a < whole <= total.
            let (x, y) = unsafe {
                (
                    nth_floats::<V, T, FORM>(row, j + a),
                    nth_floats::<V, T, FORM>(row, j + N + a),
                )
            };
            *picked = better_of3::<V, DECREASING>(x, y, *picked);
        }
    }
    for j in whole..total {
        // SAFETY: see above.
        let x = unsafe { nth_floats::<V, T, FORM>(row, j) };
        picked[j % vectors] = better::<V, DECREASING>(x, picked[j % vectors]);
    }
    for a in vectors..N {
        picked[a % vectors] = better::<V, DECREASING>(picked[a], picked[a % vectors]);
    }
    picked
}

/// [`pick`] for f16 or bf16 on vectors with 16-bit lanes ([`Vector::HALF_LANES`]), `vectors` even: for
/// each group, one of its elements as raw bits zero-extended to a lane, the first `vectors` of the result.
/// Two folds of the raw bits (sign and magnitude, NaNs above the infinities), and a choice between them
/// at the end:
///
/// ```text
/// decreasing: the signed maximum where it is not negative (the largest, a positive NaN first),
///             else, every element negative, the unsigned minimum (the smallest magnitude)
/// increasing: the unsigned maximum where it is negative (the largest magnitude, or a negative NaN),
///             else, every element non-negative, the unsigned minimum
/// ```
/// Exact but for NaNs, which are picked where they lose (a negative NaN increasing) or left where they
/// win (decreasing, a negative NaN among negatives): the pick is still an element of the group, and the
/// bound over it still holds, only looser.
///
/// # Safety
/// `rounds >= 1`, `rounds · vectors · LANES <= row.len()`, `vectors` is 2 or 4, and T is f16 or bf16.
#[inline(always)]
unsafe fn pick_halves<V: Vector, T, const DECREASING: bool>(row: &[T], vectors: usize, rounds: usize) -> [V; UNROLL] {
    let registers = vectors / 2;
    let width = 2 * V::LANES;
    debug_assert!(rounds * registers * width <= row.len() && (1..=UNROLL / 2).contains(&registers));
    // Each register its own pair of folds, indexed by constants (indexed by `j % registers`, they lived
    // on the stack, and each fold waited for the last one's store).
    // SAFETY: R · width = vectors · LANES, so the caller's precondition is `fold_halves`'s.
    let (most, least) = unsafe {
        if registers == 1 {
            let (most, least) = fold_halves::<V, T, DECREASING, 1>(row, rounds);
            ([most[0], most[0]], [least[0], least[0]])
        } else {
            fold_halves::<V, T, DECREASING, 2>(row, rounds)
        }
    };
    // Each register's lanes widened to two vectors of 32-bit lanes, through the stack.
    let mut bits = [[0u16; UNROLL * MAX_LANES]; 2];
    for (r, (most, least)) in most.iter().zip(&least).enumerate().take(registers) {
        // SAFETY: register r's 2 · LANES u16 (LANES u32) end at (r + 1) · width <= vectors · LANES <=
        // UNROLL · MAX_LANES.
        unsafe {
            most.store::<u32>(bits[0].as_mut_ptr().add(r * width).cast());
            least.store::<u32>(bits[1].as_mut_ptr().add(r * width).cast());
        }
    }
    let mut picked = [V::splat(0); UNROLL];
    for (v, picked) in picked.iter_mut().enumerate().take(vectors) {
        // SAFETY: vector v's LANES u16 end at (v + 1) · LANES <= vectors · LANES <= UNROLL · MAX_LANES.
        let (most, least) = unsafe {
            (
                V::load::<u16>(bits[0].as_ptr().add(v * V::LANES)),
                V::load::<u16>(bits[1].as_ptr().add(v * V::LANES)),
            )
        };
        let non_negative = most.lt(V::splat(0x8000));
        *picked = if DECREASING {
            V::select(non_negative, most, least)
        } else {
            V::select(non_negative, least, most)
        };
    }
    picked
}

/// The two folds of [`pick_halves`] over `R` registers a round, `rounds` rounds of `row` (unsigned minima,
/// and signed or unsigned maxima).
///
/// # Safety
/// `rounds >= 1`, `rounds · R · 2 · LANES <= row.len()`, and T is f16 or bf16.
#[inline(always)]
unsafe fn fold_halves<V: Vector, T, const DECREASING: bool, const R: usize>(
    row: &[T],
    rounds: usize,
) -> ([V; R], [V; R]) {
    let width = 2 * V::LANES;
    debug_assert!(rounds >= 1 && rounds * R * width <= row.len());
    // Register r of round j holds the 16-bit floats from (j · R + r) · width on, inside `row` for
    // j < rounds (the caller's precondition).
    let mut most = [V::splat(0); R];
    for (r, most) in most.iter_mut().enumerate() {
        // SAFETY: see above (round 0).
        *most = unsafe { V::load16(row.as_ptr().add(r * width).cast()) };
    }
    let mut least = most;
    for j in 1..rounds {
        for r in 0..R {
            // SAFETY: see above.
            let x = unsafe { V::load16(row.as_ptr().add((j * R + r) * width).cast()) };
            most[r] = if DECREASING {
                most[r].max16_signed(x)
            } else {
                most[r].max16(x)
            };
            least[r] = least[r].min16(x);
        }
    }
    (most, least)
}

/// Whether `FORM`'s elements are 8- or 16-bit integers that `V` holds in lanes of their width
/// ([`in_8_bit_lanes`], [`in_16_bit_lanes`]): [`pick_narrow`]'s.
const fn narrow_integers<V: Vector, T: Element, const FORM: u8>() -> bool {
    (in_8_bit_lanes::<V, T, FORM>() || in_16_bit_lanes::<V, T, FORM>()) && matches!(FORM, UNSIGNED | SIGNED)
}

/// [`group_minima`] for 8- and 16-bit integers in lanes of their width ([`narrow_integers`]), over the
/// first `total` elements of `row`: each group's best element by a fold of the raw registers in the
/// key's order (the maximum for `DECREASING`, else the minimum; signed for `SIGNED`). A register's W
/// lanes are those of `W / LANES` vectors (4 for bytes, 2 for 16 bits), consecutive in the row, and
/// register j goes to fold j mod `FOLDS`; keyed through the stack at the end, fold f's vector u holds
/// the groups of vector `(f · W / LANES + u) mod vectors`, the group of position `p` being `p` modulo
/// the `vectors · LANES` groups.
///
/// # Safety
/// `total <= row.len()` is a nonzero multiple of `FOLDS · W` (`W = size_of::<V>() / size_of::<T>()`),
/// `vectors <= minima.len()` divides `FOLDS · W / LANES`, and `narrow_integers::<V, T, FORM>()`.
#[inline(always)]
unsafe fn pick_narrow<V: Vector, T: Element, const FORM: u8, const DECREASING: bool, const FOLDS: usize>(
    row: &[T],
    total: usize,
    lanes: &Lanes<V>,
    minima: &mut [V],
    vectors: usize,
) {
    let width = size_of::<V>() / size_of::<T>();
    let per = width / V::LANES;
    debug_assert!(total <= row.len() && total >= FOLDS * width && total.is_multiple_of(FOLDS * width));
    debug_assert!(vectors >= 1 && vectors <= minima.len() && (FOLDS * per).is_multiple_of(vectors));
    // Register j holds the elements from j · width on, inside `row` for j < total / width (the
    // caller's precondition).
    let mut picked = [V::splat(0); FOLDS];
    for (f, picked) in picked.iter_mut().enumerate() {
        // SAFETY: as above, f < FOLDS <= total / width.
        *picked = unsafe { narrow_register::<V, T>(row, f) };
    }
    for j in (FOLDS..total / width).step_by(FOLDS) {
        for (f, picked) in picked.iter_mut().enumerate() {
            // SAFETY: as above: j + f < total / width, a multiple of FOLDS.
            let x = unsafe { narrow_register::<V, T>(row, j + f) };
            *picked = narrow_better::<V, T, FORM, DECREASING>(*picked, x);
        }
    }
    for (f, picked) in picked.iter().enumerate() {
        let mut bits = [0u16; 2 * MAX_LANES];
        // SAFETY: the register's LANES u32 are size_of::<V>() <= 64 bytes, the size of `bits`.
        unsafe { picked.store::<u32>(bits.as_mut_ptr().cast()) };
        for u in 0..per {
            // SAFETY: vector u's LANES elements of T end at (u + 1) · LANES · size_of::<T>() <=
            // size_of::<V>() bytes, inside `bits`; T is of the lane's width or less.
            let raw = unsafe { V::load::<T>(bits.as_ptr().cast::<T>().add(u * V::LANES)) };
            if let Some(minimum) = minima.get_mut((f * per + u) % vectors.max(1)) {
                *minimum = keys::<V, FORM>(raw, lanes).min(*minimum);
            }
        }
    }
}

/// Register `j` of `row` in lanes of T's width: its elements from `j · size_of::<V>() / size_of::<T>()`.
///
/// # Safety
/// The register's elements lie inside `row`, and T is 1 or 2 bytes wide.
#[inline(always)]
unsafe fn narrow_register<V: Vector, T>(row: &[T], j: usize) -> V {
    let at = row.as_ptr().wrapping_add(j * (size_of::<V>() / size_of::<T>()));
    // SAFETY: the caller's precondition.
    unsafe {
        if size_of::<T>() == 1 {
            V::load8(at.cast())
        } else {
            V::load16(at.cast())
        }
    }
}

/// The lane-wise better of `x` and `y` in lanes of T's width (1 or 2 bytes), raw integers of `FORM`:
/// the larger for `DECREASING`, else the smaller.
#[inline(always)]
fn narrow_better<V: Vector, T, const FORM: u8, const DECREASING: bool>(x: V, y: V) -> V {
    match (size_of::<T>() == 1, FORM == SIGNED, DECREASING) {
        (true, false, true) => x.max8(y),
        (true, false, false) => x.min8(y),
        (true, true, true) => x.max8_signed(y),
        (true, true, false) => x.min8_signed(y),
        (false, false, true) => x.max16(y),
        (false, false, false) => x.min16(y),
        (false, true, true) => x.max16_signed(y),
        (false, true, false) => x.min16_signed(y),
    }
}

/// `x` where it is better than `y`, else `y`. `DECREASING`: the larger is better, and NaN better than
/// every number; else the smaller is better, and every number better than NaN (`docs/CONTRACT.md` §2's order; IEEE
/// compares alone leave NaN out both ways).
///
/// `DECREASING` is [`Vector::float_max`]: two instructions on AVX-512 where the compares and blend
/// take four.
#[inline(always)]
fn better<V: Vector, const DECREASING: bool>(x: V, y: V) -> V {
    if DECREASING {
        x.float_max(y)
    } else {
        V::select(V::or_mask(x.float_lt(y), y.float_nle(y)), x, y)
    }
}

/// The best of `x`, `y` and `acc` by [`better`], `acc` last (a fold's accumulator).
#[inline(always)]
fn better_of3<V: Vector, const DECREASING: bool>(x: V, y: V, acc: V) -> V {
    if DECREASING {
        x.float_max3(y, acc)
    } else {
        better::<V, false>(y, better::<V, false>(x, acc))
    }
}

/// The K-th smallest key of `row` exactly, for integers tested in lanes of their width (8 or 16 bits,
/// whose lane tests are exact): a bisection over the key's bits, each probe a count of the lanes below
/// it. `row` is at least a block long, `1 <= k <= row.len()`.
///
/// ```text
/// kth = 0
/// for each bit b of the key, high to low:
///     if #{ key < kth | b } < K: kth |= b              // one compare and a popcount a register
/// ```
/// Afterwards fewer than K keys are below `kth` and at least K at or below it. No memory but the row,
/// where counting keeps 256 counters a row, zeroed, incremented through a load and a store each, and
/// walked.
#[inline(always)]
pub(crate) fn kth_by_bisection<V: Vector, T: Element, const FORM: u8>(
    row: &[T],
    k: usize,
    order: Order,
    map: &KeyMap,
) -> u64 {
    debug_assert!(in_8_bit_lanes::<V, T, FORM>() || in_16_bit_lanes::<V, T, FORM>());
    debug_assert!(matches!(FORM, UNSIGNED | SIGNED) && (1..=row.len()).contains(&k));
    let lanes = Lanes::<V>::new(map, order);
    let mut kth = 0;
    let mut bit = map.ones.div_ceil(2);
    while bit != 0 {
        let probe = kth | bit;
        if LaneLimit::<V>::new::<T, FORM>(probe, order, map).count::<T, FORM>(row, &lanes) < k {
            kth = probe;
        }
        bit >>= 1;
    }
    kth
}

/// Elements sampled per selected element when a row bails out.
const SAMPLE_RATIO: usize = 64;

/// The K-th best key among `SAMPLE_RATIO · k` evenly spaced elements of `row`.
///
/// At least K elements of the row have a key at most this, so no element with a larger key is among
/// the row's first K.
pub(crate) fn sample_bound<S: Sorter, T: Element, E: Entry>(
    row: &[T],
    k: usize,
    order: Order,
    buffer: &mut [E],
) -> u64 {
    let samples = (k * SAMPLE_RATIO).min(row.len());
    let step = row.len() / samples;
    let mut candidates = Candidates::<E, S>::sorted_by(buffer, k);
    for position in (0..samples).map(|i| i * step) {
        offer(&mut candidates, order.key(row[position]), position, None);
    }
    candidates.finish().last().map_or(u64::MAX, |entry| entry.key())
}

/// [`minima_bound`] of an integer row of 8 to 32 bits on `V`'s 32-bit lanes, and the number of groups
/// it took (`vectors · LANES`): what the tests check against the groups' minima counted one by one.
#[cfg(test)]
#[inline(always)]
pub(crate) fn integer_minima_bound<V: Vector, T: Element>(
    row: &[T],
    k: usize,
    order: Order,
    vectors: usize,
) -> Option<(u64, usize)> {
    let map = KeyMap::of::<T>();
    use crate::types::element::Sealed;
    let bound = match <T as Sealed>::KEY_FORM {
        _ if size_of::<T>() > 4 => None,
        UNSIGNED => minima_bound::<V, T, UNSIGNED>(row, k, order, &map, vectors),
        SIGNED => minima_bound::<V, T, SIGNED>(row, k, order, &map, vectors),
        _ => None,
    };
    Some((bound?, vectors * V::LANES))
}
