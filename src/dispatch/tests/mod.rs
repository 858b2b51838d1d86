//! The kernels on every engine this CPU has, each run through a [`Kernel`] of the tests' own.

extern crate std;

mod bound;
mod network;
mod partition;
mod rows;
mod sorter;

use crate::dispatch::engine::{Backend, Engine};
use crate::dispatch::isa::Kernel;
use crate::kernels::candidates::{FEW, Sorter};
use crate::kernels::{self, Isa, lane_tests};
use crate::simd::vector::{MAX_LANES, Vector};
use crate::types::element::{Element, Order};

/// Every backend this CPU has, with its engine.
fn engines() -> impl Iterator<Item = (Backend, Engine)> {
    Backend::ALL.into_iter().filter_map(|b| Some((b, Engine::new(b)?)))
}

/// A test's body as a [`Kernel`]: `kernel!(Name<'a> { fields } -> Output = |I| body)`, `I` the
/// engine's [`Isa`].
macro_rules! kernel {
    ($name:ident $(<$l:lifetime>)? { $($field:ident: $ty:ty),* $(,)? } -> $out:ty = |$isa:ident| $body:expr) => {
        struct $name $(<$l>)? { $($field: $ty),* }
        impl $(<$l>)? Kernel for $name $(<$l>)? {
            type Output = $out;
            #[inline(always)]
            fn run<$isa: Isa>(self) -> $out {
                let $name { $($field),* } = self;
                $body
            }
        }
    };
}

kernel!(NetworkSort<'a> { entries: &'a mut [u64], k: usize } -> () = |I| kernels::network::sort::<I::V64>(entries, k));
kernel!(KthOf<'a> { keys: &'a [u64], vectors: usize, k: usize, wide: bool } -> Option<u64> = |I| if wide {
    kernels::network::kth_of::<I::V64>(keys, vectors, k)
} else {
    kernels::network::kth_of::<I::V32>(keys, vectors, k)
});
kernel!(NarrowLanes {} -> bool = |I| {
    let narrow = <I::V32 as Vector>::HALF_LANES && <I::V32 as Vector>::BYTE_LANES;
    if narrow {
        lane_tests::check_narrow_lanes::<I::V32>();
    }
    narrow
});
kernel!(SortFew<'a> { words: &'a [u64], count: usize, sorted: &'a mut [u64; FEW] } -> bool =
    |I| I::Sorter::sort_few(words, count, sorted));
kernel!(PartitionSelect<'a> { words: &'a mut [u64], k: usize } -> bool = |I| kernels::partition::select::<I::V64>(words, k));
kernel!(PartitionSort<'a> { words: &'a mut [u64], k: usize } -> () = |I| kernels::partition::sort::<I::V64>(words, k));
kernel!(PartitionLanes<'a> { words: &'a [u64], bits: u64 } -> Option<[u64; MAX_LANES]> =
    |I| kernels::partition::partition_lanes::<I::V64>(words, bits));

/// The group minima's bound of an integer row (generic over the row's type, so not by `kernel!`).
struct MinimaBound<'a, T> {
    row: &'a [T],
    k: usize,
    flip: Order,
    vectors: usize,
}

impl<T: Element> Kernel for MinimaBound<'_, T> {
    type Output = Option<(u64, usize)>;
    #[inline(always)]
    fn run<I: Isa>(self) -> Self::Output {
        crate::kernels::bound::integer_minima_bound::<I::V32, T>(self.row, self.k, self.flip, self.vectors)
    }
}

/// The kernels the tests run on an engine: `None` (or `false`) where the engine has no vectors for
/// them (the scalar engine), or, for what only the SIMD registers have, the portable one.
trait OnEngine {
    fn network_sort(self, entries: &mut [u64], k: usize) -> Option<()>;
    fn kth_smallest(self, keys: &[u64], vectors: usize, k: usize, wide: bool) -> Option<u64>;
    fn minima_bound<T: Element>(self, row: &[T], k: usize, flip: Order, vectors: usize) -> Option<(u64, usize)>;
    fn check_narrow_lanes(self) -> bool;
    fn sort_few(self, words: &[u64], count: usize, sorted: &mut [u64; FEW]) -> Option<bool>;
    fn partition_select(self, words: &mut [u64], k: usize) -> Option<bool>;
    fn partition_sort(self, words: &mut [u64], k: usize) -> Option<()>;
    fn partition_lanes(self, words: &[u64], bits: u64) -> Option<[u64; MAX_LANES]>;
}

impl OnEngine for Engine {
    fn network_sort(self, entries: &mut [u64], k: usize) -> Option<()> {
        self.has_vectors().then(|| self.run(NetworkSort { entries, k }))
    }
    fn kth_smallest(self, keys: &[u64], vectors: usize, k: usize, wide: bool) -> Option<u64> {
        self.has_vectors().then(|| self.run(KthOf { keys, vectors, k, wide }))?
    }
    fn minima_bound<T: Element>(self, row: &[T], k: usize, flip: Order, vectors: usize) -> Option<(u64, usize)> {
        self.has_vectors()
            .then(|| self.run(MinimaBound { row, k, flip, vectors }))?
    }
    fn check_narrow_lanes(self) -> bool {
        self.is_simd() && self.run(NarrowLanes {})
    }
    fn sort_few(self, words: &[u64], count: usize, sorted: &mut [u64; FEW]) -> Option<bool> {
        self.is_simd().then(|| self.run(SortFew { words, count, sorted }))
    }
    fn partition_select(self, words: &mut [u64], k: usize) -> Option<bool> {
        self.has_vectors().then(|| self.run(PartitionSelect { words, k }))
    }
    fn partition_sort(self, words: &mut [u64], k: usize) -> Option<()> {
        self.has_vectors().then(|| self.run(PartitionSort { words, k }))
    }
    fn partition_lanes(self, words: &[u64], bits: u64) -> Option<[u64; MAX_LANES]> {
        self.has_vectors().then(|| self.run(PartitionLanes { words, bits }))?
    }
}

/// Every SIMD engine of this CPU has the narrow lanes, and they pass
/// [`check_narrow_lanes`](lane_tests::check_narrow_lanes).
#[test]
fn narrow_lanes_agree_with_the_lanes() {
    for (backend, engine) in engines() {
        let checked = engine.check_narrow_lanes();
        assert!(
            checked || matches!(backend, Backend::Scalar | Backend::Portable),
            "{}",
            backend.name()
        );
    }
}
