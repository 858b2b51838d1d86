//! The SIMD engines' [`Sorter`]s of packed entries: AVX-512's sorting network or vectorised partition,
//! whichever is faster for the size (the crossovers are on [`NetworkSorter`]), and AVX2's ranks of a few
//! ([`RankSorter`]).

use core::marker::PhantomData;

use crate::kernels::candidates::{CoreSorter, FEW, Sorter};
use crate::kernels::entry::{Buffer, Entry};
use crate::kernels::network::BLOCK;
use crate::kernels::partition;
use crate::simd::vector::{MAX_LANES, Vector};

/// An ISA's one compiled copy of [`network::sort`](super::network::sort) on its 64-bit vectors: a
/// `#[target_feature]` function that every caller shares, rather than the network inlined into each of
/// the filter's instantiations (inlined into AVX2's filter, it slowed the filter's long rows down:
/// `llm32x128k_k50`).
pub(crate) trait PackedNetwork {
    /// [`network::sort`](super::network::sort) on this ISA's 64-bit lanes.
    fn network_sort_packed(entries: &mut [u64], k: usize);
}

/// An ISA's one compiled copy of [`partition`]'s selection and sort on its 64-bit vectors (as
/// [`PackedNetwork`]).
pub(crate) trait PackedPartition: PackedNetwork {
    /// [`partition::select`] on this ISA's 64-bit lanes.
    fn partition_select_packed(words: &mut [u64], k: usize) -> bool;
    /// [`partition::sort`] on this ISA's 64-bit lanes.
    fn partition_sort_packed(words: &mut [u64], k: usize);
}

/// The [`Sorter`] of the AVX-512 engine: the network for the order of packed entries, and for their
/// compactions and the select before a long sort, the vectorised quickselect of [`partition`] from
/// [`partition::SMALL`] entries on (`core`'s selection below; wider entries: `core`'s selection and sort).
///
/// Sorting the best half of up to a block, the network beats `core`'s select and sort; beyond half a
/// block, a selection first halves what it sorts. A compaction needs no order, and an O(n) select beats
/// the O(n log² n) network from 64 entries on.
///
/// The partition beats `core`'s select from 129 entries on (`benches/sorters.rs`, "partition select"),
/// and beyond 512 entries the sort is the quicksort of [`partition::sort`] (the partition, the network
/// on parts of one block, parts past K dropped), whatever K: the network's O(n log² n) loses to it as
/// n grows (`benches/sorters.rs`, "partition sort"). The crossovers are in BENCHMARKS.md, decisions.
/// The AVX2 engine keeps `core`'s selection and sort: the same code on four lanes does not beat them up
/// to 512 entries (select) and 2048 (sort).
pub(crate) struct NetworkSorter<V>(PhantomData<V>);

/// Packed entries beyond this many (four blocks of AVX-512) are sorted by [`partition::sort`], whatever
/// K (see [`NetworkSorter`]).
const QUICKSORT: usize = 4 * BLOCK * MAX_LANES;

impl<V: PackedPartition> Sorter for NetworkSorter<V> {
    const NETWORK: bool = true;

    #[inline(always)]
    fn select<E: Entry>(entries: &mut [E], k: usize) -> bool {
        // Up to `partition::SMALL`, the partition would hand the words straight to `core`.
        if let Buffer::Packed(words) = E::buffer(entries)
            && words.len() > partition::SMALL
        {
            return V::partition_select_packed(words, k);
        }
        CoreSorter::select(entries, k)
    }

    #[inline(always)]
    fn sort<E: Entry>(entries: &mut [E], k: usize) {
        let Buffer::Packed(words) = E::buffer(entries) else {
            return CoreSorter::sort(entries, k);
        };
        if words.len() > QUICKSORT {
            V::partition_sort_packed(words, k);
        } else if words.len() > BLOCK * MAX_LANES / 2 && k < words.len() {
            // Beyond half a block, selecting first halves what the network sorts.
            Self::select(words, k);
            if let Some(best) = words.get_mut(..k) {
                V::network_sort_packed(best, k);
            }
        } else {
            V::network_sort_packed(words, k);
        }
    }
}

/// The [`Sorter`] of the AVX2 engine: `core`'s selection (the partition lost to it on four 64-bit
/// lanes), the network for K up to 64 packed entries and `core`'s sort above, and the few entries a
/// short row collects sorted by rank in the lanes ([`Sorter::sort_few`]), where the sorted pool spent a
/// branch-free insertion of K slots on each.
///
/// The ranks are set by short rows with small K (`moe4096x256_k8`, and rows of 256 and 512 with K up
/// to 16); the network against `core`'s sort by rows of 256 and 1024 with K of 24 to 64. A network over
/// more than 64 entries (two blocks merged) gains nothing on `core`'s sort. See BENCHMARKS.md,
/// decisions.
///
/// ```text
/// rank[i] = #{ j : words[j] < words[i] }     // one broadcast, and a compare and an add per vector, per j
/// sorted[rank[i]] = words[i]                 // distinct words: the ranks are 0..count
/// ```
pub(crate) struct RankSorter<V>(PhantomData<V>);

impl<V: Vector + PackedNetwork> Sorter for RankSorter<V> {
    #[inline(always)]
    fn select<E: Entry>(entries: &mut [E], k: usize) -> bool {
        CoreSorter::select(entries, k)
    }

    /// K up to a block of packed entries (16 vectors, 64 entries) ordered by the network, after
    /// `core`'s select where there are more: `core`'s sort of a few dozen mispredicts most of its
    /// compares.
    #[inline(always)]
    fn sort<E: Entry>(entries: &mut [E], k: usize) {
        let block = BLOCK * V::LANES;
        match E::buffer(entries) {
            Buffer::Packed(words) if k <= block => {
                let sorted = if words.len() > block {
                    CoreSorter::select(words, k);
                    k
                } else {
                    words.len()
                };
                V::network_sort_packed(words.get_mut(..sorted).unwrap_or_default(), k);
            }
            _ => CoreSorter::sort(entries, k),
        }
    }

    #[inline(always)]
    fn sort_few(words: &[u64], count: usize, sorted: &mut [u64; FEW]) -> bool {
        // Lanes of 64 bits, and an add in a few instructions (what compressing engines have).
        if size_of::<V>() != 8 * V::LANES || !V::COMPRESSES || count > FEW {
            return false;
        }
        // As many vectors as the count needs, in three sizes (a count known only at run time would
        // leave the loops rolled).
        if count <= FEW / 4 {
            by_rank::<V, { FEW / 4 }>(words, count, sorted)
        } else if count <= FEW / 2 {
            by_rank::<V, { FEW / 2 }>(words, count, sorted)
        } else {
            by_rank::<V, FEW>(words, count, sorted)
        }
    }
}

/// [`RankSorter::sort_few`] with the words in `N` lanes (`count <= N <= FEW`, a multiple of `LANES`): the
/// lanes past `count` are set above every word, ranked too, and put past the sorted ones.
#[inline(always)]
fn by_rank<V: Vector, const N: usize>(words: &[u64], count: usize, sorted: &mut [u64; FEW]) -> bool {
    let Some(padded) = words.get(..N) else {
        return false;
    };
    let vectors = N / V::LANES;
    // The words biased by the sign bit, in the lanes and in memory (for the broadcasts), so that the
    // signed compares order them unsigned with no bias of each broadcast word; unbiased in `word_of`,
    // for the scatter.
    let sign = V::splat(1 << 63);
    let (mut lanes, mut biased, mut word_of) = ([V::splat(0); N], [0u64; N], [0u64; N]);
    for (v, lane) in lanes.iter_mut().enumerate().take(vectors) {
        // SAFETY: vector v's LANES words end at (v + 1) · LANES <= N, inside `padded`, `biased` and
        // `word_of`.
        unsafe {
            let word = V::load(padded.as_ptr().add(v * V::LANES));
            let known = V::iota()
                .add(V::splat((v * V::LANES) as u64))
                .lt(V::splat(count as u64));
            let word = V::select(known, word, V::splat(u64::MAX));
            word.store(word_of.as_mut_ptr().add(v * V::LANES));
            *lane = word.xor(sign);
            lane.store(biased.as_mut_ptr().add(v * V::LANES));
        }
    }
    let (one, zero) = (V::splat(1), V::splat(0));
    let mut ranks = [zero; N];
    for &word in biased.get(..count.min(N)).unwrap_or_default() {
        let word = V::splat(word);
        for (rank, &lane) in ranks.iter_mut().zip(&lanes).take(vectors) {
            *rank = rank.add(V::select(word.lt_signed(lane), one, zero));
        }
    }
    let mut rank_of = [0u64; N];
    for (v, rank) in ranks.iter().enumerate().take(vectors) {
        // SAFETY: vector v's LANES ranks end at (v + 1) · LANES <= N, inside `rank_of`.
        unsafe { rank.store(rank_of.as_mut_ptr().add(v * V::LANES)) };
    }
    // All N lanes, a count known at compile time: straight-line code, where a loop over the `count`
    // known mispredicted its exit. The `count` distinct words rank below `count`; the lanes past them
    // (all ones) rank `count` and land past the sorted ones (or, should a word be all ones, on it: the
    // same word). The modulo changes no rank, and spares each word a check and a branch.
    for (&word, &rank) in word_of.iter().zip(&rank_of) {
        sorted[rank as usize % FEW] = word;
    }
    true
}
