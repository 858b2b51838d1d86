//! The word sorters under every selection, on a chosen engine, for `benches/sorters.rs` to set the
//! strategy's crossovers with: not a stable API (feature `internals`, hidden from the docs).
//!
//! A word is a 64-bit ordered key with its position in the low bits, as the kernels pack them; here any
//! `u64` will do, and "smallest" is plain `u64` order.

use crate::dispatch::engine::{Backend, Engine};
use crate::dispatch::isa::Kernel;
use crate::kernels;

/// The sorters of one engine with vectors (every backend but `Scalar`).
#[derive(Clone, Copy)]
pub struct Sorters(Engine);

impl Sorters {
    /// The sorters of `backend`, if this CPU has it and it has vectors.
    pub fn new(backend: Backend) -> Option<Sorters> {
        Engine::new(backend).filter(|engine| engine.has_vectors()).map(Sorters)
    }

    /// The sorting network (bitonic merges in registers): the `k` smallest first, ascending.
    pub fn network_sort(self, words: &mut [u64], k: usize) {
        let k = k.min(words.len());
        self.0.run(NetworkSort { words, k });
    }

    /// The vectorised partition's selection: the `k` smallest first, the `k`-th at `k - 1`, in no order.
    pub fn partition_select(self, words: &mut [u64], k: usize) {
        self.0.run(PartitionSelect { words, k });
    }

    /// The vectorised quicksort: the `k` smallest first, ascending.
    pub fn partition_sort(self, words: &mut [u64], k: usize) {
        self.0.run(PartitionSort { words, k });
    }
}

struct NetworkSort<'a> {
    words: &'a mut [u64],
    k: usize,
}

impl Kernel for NetworkSort<'_> {
    type Output = ();
    #[inline(always)]
    fn run<I: kernels::Isa>(self) {
        kernels::network::sort::<I::V64>(self.words, self.k);
    }
}

struct PartitionSelect<'a> {
    words: &'a mut [u64],
    k: usize,
}

impl Kernel for PartitionSelect<'_> {
    type Output = ();
    #[inline(always)]
    fn run<I: kernels::Isa>(self) {
        kernels::partition::select::<I::V64>(self.words, self.k);
    }
}

struct PartitionSort<'a> {
    words: &'a mut [u64],
    k: usize,
}

impl Kernel for PartitionSort<'_> {
    type Output = ();
    #[inline(always)]
    fn run<I: kernels::Isa>(self) {
        kernels::partition::sort::<I::V64>(self.words, self.k);
    }
}
