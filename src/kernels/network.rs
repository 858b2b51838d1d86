//! Bitonic sorting networks over [`Vector`] lanes, written once for every ISA: the final order of the
//! K (up to 512; beyond, the leaves of `partition::sort`), short rows collected whole, rows where K is a
//! large part of n (all on packed (key, position) entries in 64-bit lanes, on the engines where that
//! beats `core`'s sort: see `sorter::NetworkSorter`), and the K-th smallest of the group minima behind the prefix
//! bound and the guessed cap (keys in 32- or 64-bit lanes, every engine).
//!
//! ```text
//! sort_vectors(v):                          // N vectors in registers, N a power of two
//!     sort the lanes of each vector          // steps: exchange lanes, min, max, blend
//!     for size = 2, 4, .., N vectors:        // merge sorted runs pairwise
//!         mirror: vector a of a group meets vector size-1-a, reversed
//!         half-cleaners across vectors (distance size/4 .. 1), then within them (LANES/2 .. 1)
//! sort(entries, k):                         // any length, the first k final
//!     short: load into 1, 2, 4, 8 or 16 registers padded with all-ones, sort_vectors, store
//!     long:  sort_vectors each block of 16 vectors, then merge blocks as above with the steps of a
//!            block or more done in memory and the shorter ones in registers, block by block
//! ```
//! Tricks:
//! - every compare-exchange puts the minimum first: merges use the mirror step (an element against
//!   its mirror image) instead of runs sorted in alternating directions, so one step serves all;
//! - the array is padded to a power of two with all-ones entries that never exist in memory: loads past
//!   the end read all-ones, stores past the end are dropped. A step's upper element always lies after
//!   its lower one, so the maximum goes to the later place and a real entry is never sent past the end;
//! - only the first `k` need to be final: in the last merge, the half-cleaner ranges that start at or
//!   after `k` are left alone (half of the last merge when K is half the row);
//! - within a vector a step is one shuffle with constant indices, a minimum, a maximum and a blend with
//!   a constant mask: no branch anywhere, so the cost does not depend on the data.

use crate::simd::vector::{MAX_LANES, Vector};

/// Vectors a block holds in registers (AVX-512: 16 of the 32 registers, 128 entries).
pub(crate) const BLOCK: usize = 16;

/// One compare-exchange step within each vector: lane `i` meets lane `i ^ m`, and the lanes with bit
/// `d` set keep the larger (`d` is the bit in which `i` and `i ^ m` differ at the top).
#[inline(always)]
fn step<V: Vector>(v: V, m: usize, d: usize) -> V {
    let partner = v.exchange(m);
    let d = V::splat(d as u64);
    let upper = V::iota().and(d).eq(d);
    V::select(upper, v.max(partner), v.min(partner))
}

/// Half-cleaners within a vector at lane distances `from`, `from / 2`, .., 1.
#[inline(always)]
fn clean_lanes<V: Vector>(mut v: V, from: usize) -> V {
    let mut d = from;
    while d >= 1 {
        v = step(v, d, d);
        d /= 2;
    }
    v
}

/// The lanes of `v` in ascending order.
#[inline(always)]
pub(crate) fn sort_lanes<V: Vector>(mut v: V) -> V {
    let mut size = 2;
    while size <= V::LANES {
        v = step(v, size - 1, size / 2);
        v = clean_lanes(v, size / 4);
        size *= 2;
    }
    v
}

/// Sorts `N` vectors as one sequence of `N · LANES` lanes, vector 0 first (`N` a power of two).
#[inline(always)]
pub(crate) fn sort_vectors<V: Vector, const N: usize>(v: &mut [V; N]) {
    for x in v.iter_mut() {
        *x = sort_lanes(*x);
    }
    let mut size = 2;
    while size <= N {
        mirror(v, size);
        clean_vectors(v, size / 4);
        size *= 2;
    }
}

/// The lanes reversed.
#[inline(always)]
fn reverse<V: Vector>(v: V) -> V {
    v.exchange(V::LANES - 1)
}

/// The first step of merging sorted runs of `size / 2` vectors pairwise: vector `a` of each group of
/// `size` meets vector `size - 1 - a` reversed. Afterwards both halves of a group are bitonic, and the
/// lower one is below the upper one.
#[inline(always)]
fn mirror<V: Vector>(v: &mut [V], size: usize) {
    for group in v.chunks_exact_mut(size) {
        let (lower, upper) = group.split_at_mut(size / 2);
        for (a, b) in lower.iter_mut().zip(upper.iter_mut().rev()) {
            let (x, y) = (*a, reverse(*b));
            *a = x.min(y);
            *b = reverse(x.max(y));
        }
    }
}

/// Half-cleaners across vectors at distances `from`, .., 1, then within every vector: sorts each run
/// of `2 · from` vectors that is bitonic.
#[inline(always)]
fn clean_vectors<V: Vector>(v: &mut [V], from: usize) {
    let mut d = from;
    while d >= 1 {
        for run in v.chunks_exact_mut(2 * d) {
            let (lower, upper) = run.split_at_mut(d);
            for (a, b) in lower.iter_mut().zip(upper.iter_mut()) {
                (*a, *b) = (a.min(*b), a.max(*b));
            }
        }
        d /= 2;
    }
    for x in v.iter_mut() {
        *x = clean_lanes(*x, V::LANES / 2);
    }
}

/// Sorts `entries` (in 64-bit lanes) so that the first `k` are the `k` smallest in ascending order; the
/// others end in some order (`k <= entries.len()`; `k == len` sorts everything).
#[inline(always)]
pub(crate) fn sort<V: Vector>(entries: &mut [u64], k: usize) {
    let lanes = V::LANES;
    match entries.len() {
        0 | 1 => {}
        len if len <= lanes => in_registers::<V, 1>(entries),
        len if len <= 2 * lanes => in_registers::<V, 2>(entries),
        len if len <= 4 * lanes => in_registers::<V, 4>(entries),
        len if len <= 8 * lanes => in_registers::<V, 8>(entries),
        len if len <= BLOCK * lanes => in_registers::<V, BLOCK>(entries),
        _ => in_blocks::<V>(entries, k),
    }
}

/// Sorts `entries`, at most `N · LANES` of them, in registers.
#[inline(always)]
fn in_registers<V: Vector, const N: usize>(entries: &mut [u64]) {
    let mut v: [V; N] = load_block(entries, 0);
    sort_vectors(&mut v);
    store_block(entries, 0, &v);
}

/// [`sort`] for more entries than one block: blocks sorted in registers, then merged by the bitonic
/// network over the whole (padded) array, its long distances in memory.
#[inline(always)]
fn in_blocks<V: Vector>(entries: &mut [u64], k: usize) {
    let lanes = V::LANES;
    let len = entries.len();
    // Vector slots with at least one real entry; the slots up to a power of two of blocks are all-ones.
    let used = len.div_ceil(lanes);
    let blocks = used.div_ceil(BLOCK);
    for block in 0..blocks {
        let mut v: [V; BLOCK] = load_block(entries, block * BLOCK);
        sort_vectors(&mut v);
        store_block(entries, block * BLOCK, &v);
    }
    let slots = blocks.next_power_of_two() * BLOCK;
    // Whether the half-cleaner range of `2 · d` slots holding slot `a` matters: in the last merge, the
    // ranges from `k` on hold only ranks from `k` on, so they can stay unsorted.
    let needed = |last: bool, a: usize, d: usize| !last || (a & !(2 * d - 1)) * lanes < k;
    let mut size = 2 * BLOCK;
    while size <= slots {
        let last = size == slots;
        for group in (0..used).step_by(size) {
            for i in 0..size / 2 {
                let (a, b) = (group + i, group + size - 1 - i);
                // A partner past the end is all ones: the pair would stay as it is.
                if b < used {
                    let (x, y) = (load::<V>(entries, a), reverse(load::<V>(entries, b)));
                    store(entries, a, x.min(y));
                    store(entries, b, reverse(x.max(y)));
                }
            }
        }
        let mut d = size / 4;
        while d >= BLOCK {
            for a in (0..used).filter(|a| a & d == 0 && a + d < used && needed(last, *a, d)) {
                let (x, y) = (load::<V>(entries, a), load::<V>(entries, a + d));
                store(entries, a, x.min(y));
                store(entries, a + d, x.max(y));
            }
            d /= 2;
        }
        for block in (0..blocks).filter(|&block| needed(last, block * BLOCK, BLOCK / 2)) {
            let mut v: [V; BLOCK] = load_block(entries, block * BLOCK);
            clean_vectors(&mut v, BLOCK / 2);
            store_block(entries, block * BLOCK, &v);
        }
        size *= 2;
    }
}

/// Vector slot `slot` of `entries` (entries `slot · LANES ..`), all ones past the end.
#[inline(always)]
fn load<V: Vector>(entries: &[u64], slot: usize) -> V {
    let start = slot * V::LANES;
    match entries.get(start..start + V::LANES) {
        // SAFETY: the slice holds LANES u64s, the lane width of 64-bit vectors.
        Some(full) => unsafe { V::load(full.as_ptr()) },
        None => {
            let mut padded = [u64::MAX; MAX_LANES];
            for (lane, &entry) in padded.iter_mut().zip(entries.get(start..).unwrap_or_default()) {
                *lane = entry;
            }
            // SAFETY: `padded` holds MAX_LANES >= LANES u64s.
            unsafe { V::load(padded.as_ptr()) }
        }
    }
}

/// Stores `v` into vector slot `slot` of `entries`, dropping the lanes past the end.
#[inline(always)]
fn store<V: Vector>(entries: &mut [u64], slot: usize, v: V) {
    let start = slot * V::LANES;
    match entries.get_mut(start..start + V::LANES) {
        // SAFETY: the slice holds LANES u64s, the lane width of 64-bit vectors.
        Some(full) => unsafe { v.store(full.as_mut_ptr()) },
        None => {
            let mut padded = [0u64; MAX_LANES];
            // SAFETY: `padded` holds MAX_LANES >= LANES u64s.
            unsafe { v.store(padded.as_mut_ptr()) };
            for (entry, &lane) in entries.get_mut(start..).unwrap_or_default().iter_mut().zip(&padded) {
                *entry = lane;
            }
        }
    }
}

#[inline(always)]
fn load_block<V: Vector, const N: usize>(entries: &[u64], first: usize) -> [V; N] {
    // A loop rather than `array::from_fn`, which can be left out of line, outside the ISA's features.
    let mut v = [V::splat(u64::MAX); N];
    for (i, x) in v.iter_mut().enumerate() {
        *x = load(entries, first + i);
    }
    v
}

#[inline(always)]
fn store_block<V: Vector, const N: usize>(entries: &mut [u64], first: usize, v: &[V; N]) {
    for (i, &x) in v.iter().enumerate() {
        store(entries, first + i, x);
    }
}

/// The `k`-th smallest (from 1) of the first `vectors · LANES` lanes of `v` (`vectors` is 1, 2 or 4).
///
/// ```text
/// 1 vector:   its lanes sorted
/// 2 vectors:  each one's lanes sorted, then the mirror step of their merge, kept only on the half that
///             holds the rank (bitonic): at either end of it a fold (log2(LANES) exchanges and a
///             minimum or maximum), else its half-cleaners; the whole network on the portable lanes
/// 4 vectors:  the whole network
/// ```
/// Two vectors are AVX2's 16 minima of the prefix bound for K <= 8, whose 8th (K = 8) the whole merge
/// takes 10 steps on two vectors to find, this 6 on two and 3 folds on one (`moe4096x256_k8`). Four
/// vectors take the whole network: there the two sorts of two vectors and the halves kept do not beat
/// the one network (rows of 512 with K = 12).
// Out of line in unoptimised builds (see `first_best`): inlined, each caller's frame would take a
// network's temporaries.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn kth_smallest<V: Vector>(v: &[V; 4], vectors: usize, k: usize) -> u64 {
    debug_assert!(matches!(vectors, 1 | 2 | 4) && (1..=vectors * V::LANES).contains(&k));
    if k == 1 && V::SPECIALIZE {
        // The smallest: no network at all (not on the portable lanes, to keep the firmware's code small).
        let least = v.iter().take(vectors).fold(V::splat(u64::MAX), |a, &b| a.min(b));
        return fold_lanes::<V, false>(least);
    }
    let rank = k.saturating_sub(1);
    let (vector, lane) = (rank / V::LANES, rank % V::LANES);
    let bitonic = match vectors {
        1 => return sort_lanes(v[0]).lanes()[lane % MAX_LANES],
        // The mirror step's half that holds the rank (bitonic either way round: the half-cleaners sort
        // both). Not on the portable lanes, whose whole network is already in the firmware's code: this
        // would add to it.
        2 if V::SPECIALIZE && V::RANKS_PAIRS => return kth_by_ranks(v[0], v[1], k),
        2 if V::SPECIALIZE => half(sort_lanes(v[0]), reverse(sort_lanes(v[1])), vector == 0),
        2 => {
            let mut pair = [v[0], v[1]];
            sort_vectors(&mut pair);
            return pair[vector & 1].lanes()[lane % MAX_LANES];
        }
        _ => {
            let mut all = *v;
            sort_vectors(&mut all);
            return all[vector & 3].lanes()[lane % MAX_LANES];
        }
    };
    match lane {
        0 => fold_lanes::<V, false>(bitonic),
        l if l == V::LANES - 1 => fold_lanes::<V, true>(bitonic),
        _ => clean_lanes(bitonic, V::LANES / 2).lanes()[lane % MAX_LANES],
    }
}

/// The `k`-th smallest (from 1) of the lanes of `a` and `b`, by each lane's rank: the largest lane with
/// fewer than `k` lanes below it.
///
/// ```text
/// below[i] = #{ j : lane j < lane i }      // every lane against every exchange of both vectors
/// k-th     = max { lane i : below[i] < k }
/// ```
/// More instructions than the network's two sorts and fold (AVX2: 30 compares and adds where those
/// take about 60 steps in all), but independent ones, where each step of the network waits for the
/// last (`moe4096x256_k8` on AVX2).
#[inline(always)]
fn kth_by_ranks<V: Vector>(a: V, b: V, k: usize) -> u64 {
    // Biased by the sign bit, so that the signed compares (one instruction on AVX2) order them unsigned.
    let sign = V::splat(1 << (8 * size_of::<V>() / V::LANES - 1));
    let (sa, sb) = (a.xor(sign), b.xor(sign));
    let (zero, ones) = (V::splat(0), V::splat(u64::MAX));
    // Minus the ranks (all-ones lanes added), in two sums each for shorter chains.
    let (mut below_a, mut below_b) = ([zero; 2], [zero; 2]);
    for m in 0..V::LANES {
        let (xa, xb) = (sa.exchange(m), sb.exchange(m));
        let sum = m & 1;
        below_a[sum] = below_a[sum].add(V::select(xb.lt_signed(sa), ones, zero));
        below_b[sum] = below_b[sum].add(V::select(xa.lt_signed(sb), ones, zero));
        // A lane against itself (m = 0) is never below.
        if m != 0 {
            below_a[sum] = below_a[sum].add(V::select(xa.lt_signed(sa), ones, zero));
            below_b[sum] = below_b[sum].add(V::select(xb.lt_signed(sb), ones, zero));
        }
    }
    // rank < k, as -rank > -k.
    let limit = V::splat((k as u64).wrapping_neg());
    let (below_a, below_b) = (below_a[0].add(below_a[1]), below_b[0].add(below_b[1]));
    let kept = V::select(below_a.gt_signed(limit), a, zero).max(V::select(below_b.gt_signed(limit), b, zero));
    fold_lanes::<V, true>(kept)
}

/// The lane-wise minimum of `x` and `y` if `low`, else their maximum: a half-cleaner's lower or upper
/// half.
#[inline(always)]
fn half<V: Vector>(x: V, y: V, low: bool) -> V {
    if low { x.min(y) } else { x.max(y) }
}

/// The smallest lane of `v` (the largest if `LARGEST`), by log2(LANES) exchanges.
#[inline(always)]
fn fold_lanes<V: Vector, const LARGEST: bool>(mut v: V) -> u64 {
    let mut m = V::LANES / 2;
    while m >= 1 {
        v = half(v, v.exchange(m), !LARGEST);
        m /= 2;
    }
    v.lanes()[0]
}

/// [`kth_smallest`] of `keys` (one per lane, `vectors · LANES` of them, each fitting a lane) for the
/// tests, which reach it through `Engine`: `None` when the count or `k` does not fit.
#[cfg(test)]
pub(crate) fn kth_of<V: Vector>(keys: &[u64], vectors: usize, k: usize) -> Option<u64> {
    if !matches!(vectors, 1 | 2 | 4) || keys.len() != vectors * V::LANES || !(1..=keys.len()).contains(&k) {
        return None;
    }
    let mut v = [V::splat(u64::MAX); 4];
    for (x, keys) in v.iter_mut().zip(keys.chunks_exact(V::LANES)) {
        *x = V::from_lanes(core::array::from_fn(|i| keys.get(i).copied().unwrap_or(u64::MAX)));
    }
    Some(kth_smallest(&v, vectors, k))
}
