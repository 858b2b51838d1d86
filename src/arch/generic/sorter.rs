//! The AVX-512 engine's [`Sorter`] of packed entries: the sorting network or the vectorised partition,
//! whichever is faster for the size (the measurements are on [`Network`]).

use core::marker::PhantomData;

use crate::arch::generic::network::BLOCK;
use crate::arch::generic::partition;
use crate::candidates::{CoreSort, Sorter};
use crate::entry::{Buffer, Entry};
use crate::vector::MAX_LANES;

/// An ISA's one compiled copy of [`network::sort`](super::network::sort) on its 64-bit vectors: a
/// `#[target_feature]` function that every caller shares, rather than the network inlined into each of
/// the filter's instantiations.
pub(crate) trait SortPacked {
    /// [`network::sort`](super::network::sort) on this ISA's 64-bit lanes.
    fn sort_packed(entries: &mut [u64], k: usize);
    /// [`partition::select`] on this ISA's 64-bit lanes.
    fn select_packed(words: &mut [u64], k: usize) -> bool;
    /// [`partition::sort`] on this ISA's 64-bit lanes.
    fn quicksort_packed(words: &mut [u64], k: usize);
}

/// The [`Sorter`] of the AVX-512 engine: the network for the order of packed entries, and for their
/// compactions and the select before a long sort, the vectorised quickselect of [`partition`] from
/// [`partition::SMALL`] entries on (`core`'s selection below; wider entries: `core`'s selection and sort).
///
/// Measured on AVX-512 (Zen 5), random u64, ns per call: sorting the best half of 128 entries, network
/// 167 against `core`'s select and sort 382; of 1024, 3023 (network) or 2545 (`core`'s select, then the
/// network on the 512) against 3849. A compaction needs no order, and `core`'s O(n) select beats the
/// O(n log² n) network from 64 entries on (200 entries: 295 against 412).
///
/// The partition beats `core`'s select from 129 entries on (1.15x to 2.1x up to 100k on an Intel Xeon;
/// `partition::tests::select_against_core`), and beyond 512 entries the sort is the quicksort of
/// [`partition::sort`] (the partition, the network on parts of one block, parts past K dropped), whatever
/// K: the network's O(n log² n) loses to it as n grows (1.1x at 1024 entries, 3.1x at 100k;
/// `partition::tests::sort_against_network`). The measurements are in BENCHMARKS.md (fifth session). The
/// AVX2 engine keeps `core`'s selection and sort: the same code on four lanes lost or tied up to 512
/// entries (select) and 2048 (sort).
pub(crate) struct Network<V>(PhantomData<V>);

/// Packed entries beyond this many (four blocks of AVX-512) are sorted by [`partition::sort`], whatever
/// K (see [`Network`]).
const QUICKSORT: usize = 4 * BLOCK * MAX_LANES;

impl<V: SortPacked> Sorter for Network<V> {
    const NETWORK: bool = true;

    #[inline(always)]
    fn select<E: Entry>(entries: &mut [E], k: usize) -> bool {
        // Up to `partition::SMALL`, the partition would hand the words straight to `core`.
        if let Buffer::Packed(words) = E::buffer(entries)
            && words.len() > partition::SMALL
        {
            return V::select_packed(words, k);
        }
        CoreSort::select(entries, k)
    }

    #[inline(always)]
    fn sort<E: Entry>(entries: &mut [E], k: usize) {
        let Buffer::Packed(words) = E::buffer(entries) else {
            return CoreSort::sort(entries, k);
        };
        if words.len() > QUICKSORT {
            V::quicksort_packed(words, k);
        } else if words.len() > BLOCK * MAX_LANES / 2 && k < words.len() {
            // Beyond half a block, selecting first halves what the network sorts.
            Self::select(words, k);
            if let Some(best) = words.get_mut(..k) {
                V::sort_packed(best, k);
            }
        } else {
            V::sort_packed(words, k);
        }
    }
}
