//! The selection engines. Each takes one validated sequence and reports the positions of its first K
//! elements in order; `topk.rs` validates and `plan.rs` does the rest (walking sequences, writing).
//!
//! - `naive`: the reference, O(n·K) by definition: the semantics every other engine is tested against;
//! - `scalar`: the threshold filter one element at a time (strided rows of every SIMD engine too);
//! - `generic`: the block filter, and the side-by-side filter for a non-last axis (one sequence per
//!   lane), written once over [`crate::simd::vector::Vector`];
//! - `all::portable`: `generic` on the `wide` crate's `u32x8` and `u64x4`, for every target;
//! - `x86_64::{avx2, avx512}`, `aarch64::neon`: `generic` on each ISA's registers, behind a capability
//!   token (`cpu.rs`), each made an engine by the one `kernels::engine::simd_engine!`. Every SIMD arm of
//!   the `cfg`s choosing what is compiled says `not(miri)`.
//!
//! `impl Engine` here dispatches a resolved [`Engine`] to its code (`by_engine!`), and
//! `engines_compiled_here!` compiles that dispatch once for every element type (see [`Engines`]).
//! [`Engine::run`] also compiles plain loops written elsewhere ([`Vectorizable`]: the accumulator's block
//! test) for the engine's ISA.

pub(crate) mod backend;
pub(crate) mod portable;
pub(crate) mod simd_engine;

#[cfg(simd_x86)]
pub(crate) mod avx2;
#[cfg(simd_x86)]
pub(crate) mod avx512;
#[cfg(simd_arm)]
pub(crate) mod neon;

use crate::dispatch::backend::Engine;
use crate::kernels::entry::{Buffer, Emit, Entry, Rows, SideOutputs, packs_in_one_word};
use crate::kernels::{self, scalar};
use crate::types::element::{Element, Engines, Key};
use crate::types::sequence::{Sequence, Side};

/// The largest K the engines read side by side (one sequence per lane, each lane's best K sorted in
/// vector slots).
pub(crate) const SIDE_MAX_K: usize = kernels::SMALL_K;

/// Whether this target has SIMD engines. The paths that pay only with them (tiny rows read from a
/// tile, side by side above [`SIDE_MAX_K`] with a candidate buffer per lane) are compiled only here:
/// elsewhere (firmware) the portable lanes keep their code out of the flash budget.
pub(crate) const SIMD_ENGINES: bool = cfg!(simd_arch);

/// `match $engine`: `$scalar` on the scalar engine, `$portable` on the portable one, and `$simd` on each
/// SIMD engine compiled here, with `$token` its capability token (each token has the same methods,
/// from [`kernels::engine::simd_engine!`]).
macro_rules! by_engine {
    ($engine:expr, scalar => $scalar:expr, portable => $portable:expr, $token:ident => $simd:expr $(,)?) => {
        match $engine {
            Engine::Scalar => $scalar,
            Engine::Portable => $portable,
            #[cfg(simd_x86)]
            Engine::Avx2($token) => $simd,
            #[cfg(simd_x86)]
            Engine::Avx512($token) => $simd,
            #[cfg(simd_arm)]
            Engine::Neon($token) => $simd,
        }
    };
}

/// Work written as plain loops that the compiler vectorizes by itself, with no intrinsics.
/// [`Engine::run`] compiles it once more inside each SIMD engine's `#[target_feature]` function, so that
/// those loops use the ISA's width rather than the build's baseline (SSE2 on x86_64). Only what is
/// inlined there gets the features: implementations make `run` `#[inline(always)]`.
pub(crate) trait Vectorizable {
    type Output;
    fn run(self) -> Self::Output;
}

impl Engine {
    /// Runs `work` compiled for this engine's ISA (the scalar and portable engines: for the baseline).
    #[inline]
    pub(crate) fn run<W: Vectorizable>(self, work: W) -> W::Output {
        by_engine!(self, scalar => work.run(), portable => work.run(), token => token.run(work))
    }

    /// Reports, through `emit` ([`Emit`]), the first `k` positions of `seq` in the order of `flip`.
    ///
    /// `buffer` holds `candidates::capacity(seq.len(), k)` entries and `1 <= k <= seq.len()`. Goes
    /// through `T`'s instance of the engines, compiled in this crate (see [`Engines`]).
    #[inline]
    pub(crate) fn select<T: Element, E: Entry>(
        self,
        seq: &Sequence<'_, T>,
        k: usize,
        flip: u64,
        buffer: &mut [E],
        emit: &mut Emit<'_, T>,
    ) {
        self.select_rows(&mut Rows::one(seq, emit), k, flip, buffer);
    }

    /// [`select`](Self::select) for each of `rows`, in one call of the engine where it can.
    #[inline]
    pub(crate) fn select_rows<T: Element, E: Entry>(
        self,
        rows: &mut Rows<'_, '_, T>,
        k: usize,
        flip: u64,
        buffer: &mut [E],
    ) {
        // `E::buffer` is one variant per entry type: the match is decided where this is inlined.
        match E::buffer(buffer) {
            Buffer::Packed(words) => T::select_packed(self, rows, k, flip, words),
            Buffer::Wide(pairs) => T::select_wide(self, rows, k, flip, pairs),
        }
    }

    /// [`select`](Self::select) with its candidates in `words` (at least
    /// [`scratch_len`](crate::scratch_len)`::<T>(seq.len(), k)`): one word an entry where a key and a
    /// position pack into one, two otherwise.
    #[inline]
    pub(crate) fn select_in_words<T: Element>(
        self,
        seq: &Sequence<'_, T>,
        k: usize,
        flip: u64,
        words: &mut [u64],
        emit: &mut Emit<'_, T>,
    ) {
        if packs_in_one_word(<T::Key as Key>::BITS, seq.len()) {
            self.select(seq, k, flip, u64::from_words(words), emit);
        } else {
            self.select(seq, k, flip, <[u64; 2]>::from_words(words), emit);
        }
    }

    /// [`select_rows`](Self::select_rows)'s body, instantiated by [`Engines`]' methods alone.
    #[inline]
    pub(crate) fn select_here<T: Element, E: Entry>(
        self,
        rows: &mut Rows<'_, '_, T>,
        k: usize,
        flip: u64,
        buffer: &mut [E],
    ) {
        let first = rows.first();
        // Short rows of 8- and 16-bit keys with a large K (f16 and bf16 keyed first): under their exact
        // K-th key where the engine has lanes of their width (not under a caller's cap: the filter keeps
        // to it).
        let bisected = kernels::bisects::<T>(first.len(), k) && first.cap().is_none();
        // Not under a cap: counting reads every element whatever the cap, where the filter under a K-th
        // key carried from earlier chunks passes few (chunks of 1024 u8 with K = 100).
        let counted = crate::kernels::count::suits::<T>(first.len(), k, self.wide()) && first.cap().is_none();
        if !bisected && !counted {
            // The filter: every row in one call of a SIMD engine.
            return by_engine!(self,
                scalar => each_row(rows, |seq, emit| scalar::select(seq, k, flip, buffer, emit)),
                portable => each_row(rows, |seq, emit| portable::select(seq, k, flip, buffer, emit)),
                token => token.select(rows, k, flip, buffer),
            );
        }
        each_row(rows, |seq, emit| {
            if bisected
                && by_engine!(self,
                    scalar => false,
                    portable => false,
                    token => seq.contiguous().is_some_and(|row| token.select_bisected::<T, E>(row, k, flip, emit)),
                )
            {
                return;
            }
            if counted {
                // Counting: no comparisons to vectorise, so one algorithm serves every engine.
                return crate::kernels::count::select(seq, k, flip, buffer, emit);
            }
            by_engine!(self,
                scalar => scalar::select(seq, k, flip, buffer, emit),
                portable => portable::select(seq, k, flip, buffer, emit),
                token => token.select(&mut Rows::one(seq, emit), k, flip, buffer),
            )
        });
    }

    /// Runs the sorting network on this engine's 64-bit lanes (`None` for the scalar engine, which has
    /// none): the first `k` of `entries` become the smallest, in order.
    #[cfg(test)]
    pub(crate) fn network_sort(self, entries: &mut [u64], k: usize) -> Option<()> {
        by_engine!(self,
            scalar => None,
            portable => {
                kernels::network::sort::<crate::simd::portable::U64x4>(entries, k);
                Some(())
            },
            token => {
                token.network_sort(entries, k);
                Some(())
            }
        )
    }

    /// The network's K-th smallest of `keys` on this engine's lanes (`None` for the scalar engine, or
    /// where `keys` do not fill 1, 2 or 4 vectors): 32-bit lanes, or 64-bit ones if `wide`.
    #[cfg(test)]
    pub(crate) fn kth_smallest(self, keys: &[u64], vectors: usize, k: usize, wide: bool) -> Option<u64> {
        by_engine!(self,
            scalar => None,
            portable => if wide {
                kernels::network::kth_of::<crate::simd::portable::U64x4>(keys, vectors, k)
            } else {
                kernels::network::kth_of::<crate::simd::portable::U32x8>(keys, vectors, k)
            },
            token => token.kth_smallest(keys, vectors, k, wide),
        )
    }

    /// The group minima's bound of an integer row of 8 to 32 bits on this engine's lanes, and the
    /// number of groups (`None` for the scalar engine, or where the bound gives none).
    #[cfg(test)]
    // Only the SIMD arms read them, and targets without SIMD engines (and miri builds) lack them.
    #[cfg_attr(not(simd), allow(unused_variables))]
    pub(crate) fn minima_bound<T: Element>(
        self,
        row: &[T],
        k: usize,
        flip: u64,
        vectors: usize,
    ) -> Option<(u64, usize)> {
        by_engine!(self,
            scalar => None,
            portable => kernels::integer_minima_bound::<crate::simd::portable::U32x8, T>(row, k, flip, vectors),
            token => token.minima_bound(row, k, flip, vectors),
        )
    }

    /// Checks this engine's 16- and 8-bit lanes (`kernels::testing::check_narrow_lanes`): whether it
    /// has them (the scalar and portable engines have none).
    #[cfg(test)]
    pub(crate) fn check_narrow_lanes(self) -> bool {
        by_engine!(self, scalar => false, portable => false, token => token.check_narrow_lanes())
    }

    /// The engine's sorter on a few packed words (`Sorter::sort_few`): whether it sorted them (`None`
    /// for the scalar and portable engines, whose sorter has no such way).
    #[cfg(test)]
    // Only the SIMD arms read them, and targets without SIMD engines (and miri builds) lack them.
    #[cfg_attr(not(simd), allow(unused_variables))]
    pub(crate) fn sort_few(
        self,
        words: &[u64],
        count: usize,
        sorted: &mut [u64; crate::kernels::candidates::FEW],
    ) -> Option<bool> {
        by_engine!(self,
            scalar => None,
            portable => None,
            token => Some(token.sort_few(words, count, sorted))
        )
    }

    /// Runs the vectorised selection on this engine's 64-bit lanes (`None` for the scalar engine): the
    /// first `k` of `words` become the smallest, the `k`-th at `k - 1`.
    #[cfg(test)]
    pub(crate) fn partition_select(self, words: &mut [u64], k: usize) -> Option<bool> {
        by_engine!(self,
            scalar => None,
            portable => Some(kernels::partition::select::<crate::simd::portable::U64x4>(words, k)),
            token => Some(token.partition_select(words, k)),
        )
    }

    /// Runs the vectorised quicksort on this engine's 64-bit lanes (`None` for the scalar engine): the
    /// first `k` of `words` become the smallest, in order.
    #[cfg(test)]
    pub(crate) fn partition_sort(self, words: &mut [u64], k: usize) -> Option<()> {
        by_engine!(self,
            scalar => None,
            portable => {
                kernels::partition::sort::<crate::simd::portable::U64x4>(words, k);
                Some(())
            },
            token => {
                token.partition_sort(words, k);
                Some(())
            }
        )
    }

    /// `Vector::partition_lanes` on this engine's 64-bit lanes, if `words` is one vector's worth.
    #[cfg(test)]
    pub(crate) fn partition_lanes(self, words: &[u64], bits: u64) -> Option<[u64; crate::simd::vector::MAX_LANES]> {
        by_engine!(self,
            scalar => None,
            portable => kernels::partition::partition_lanes::<crate::simd::portable::U64x4>(words, bits),
            token => token.partition_lanes(words, bits),
        )
    }

    /// Whether [`select_side`](Self::select_side) can ever take sequences (the SIMD engines).
    pub(crate) fn has_sides(self) -> bool {
        !matches!(self, Engine::Scalar)
    }

    /// Whether one row of K = 1 at least a vector long is read by `generic`'s `first_best` (the SIMD
    /// registers' engines; the portable lanes leave it out), which beats reading rows side by side.
    pub(crate) fn finds_first_best(self) -> bool {
        !matches!(self, Engine::Scalar | Engine::Portable)
    }

    /// Takes the first `done` sequences of `side` (one per lane, each taken whole or not at all: `done` is
    /// 0 or a multiple of the engine's lane count) and writes each one's first `k` to `emit`; `k >= 1`. K above [`SIDE_MAX_K`] needs a candidate buffer per lane in `buffer`
    /// (see `TopK::scratch_len`): with fewer, nothing is taken. Goes through `T`'s instance, compiled in
    /// this crate (see [`Engines`]).
    #[inline]
    pub(crate) fn select_side<T: Element>(
        self,
        side: &Side<'_, T>,
        k: usize,
        flip: u64,
        buffer: Buffer<'_>,
        emit: &mut SideOutputs<'_, T>,
    ) -> usize {
        T::select_side(self, side, k, flip, buffer, emit)
    }

    /// [`select_side`](Self::select_side)'s body, instantiated by [`Engines::select_side`] alone.
    #[inline]
    pub(crate) fn select_side_here<T: Element>(
        self,
        side: &Side<'_, T>,
        k: usize,
        flip: u64,
        buffer: Buffer<'_>,
        emit: &mut SideOutputs<'_, T>,
    ) -> usize {
        by_engine!(self,
            scalar => 0,
            portable => portable::select_side::<T>(side, k, flip, buffer, emit),
            token => token.select_side::<T>(side, k, flip, buffer, emit),
        )
    }
}

/// Each of `rows` in turn, to `select` with where its answer goes.
#[inline(always)]
fn each_row<T: Copy>(rows: &mut Rows<'_, '_, T>, mut select: impl FnMut(&Sequence<'_, T>, &mut Emit<'_, T>)) {
    let mut row = 0;
    while let Some((seq, mut emit)) = rows.row(row) {
        select(&seq, &mut emit);
        row += 1;
    }
}

/// Implements [`Engines`] for each type: `Engine`'s dispatch and (where SIMD engines are) the plan's
/// walk, instantiated here and nowhere else.
macro_rules! engines_compiled_here {
    ($($t:ty),*) => {$(
        #[allow(private_interfaces)] // as on `Engines`
        impl Engines for $t {
            fn select_packed(engine: Engine, rows: &mut Rows<'_, '_, $t>, k: usize, flip: u64, buffer: &mut [u64]) {
                engine.select_here(rows, k, flip, buffer)
            }

            fn select_wide(
                engine: Engine,
                rows: &mut Rows<'_, '_, $t>,
                k: usize,
                flip: u64,
                buffer: &mut [[u64; 2]],
            ) {
                engine.select_here(rows, k, flip, buffer)
            }

            fn select_side(
                engine: Engine,
                side: &Side<'_, $t>,
                k: usize,
                flip: u64,
                buffer: Buffer<'_>,
                emit: &mut SideOutputs<'_, $t>,
            ) -> usize {
                engine.select_side_here(side, k, flip, buffer, emit)
            }

            #[cfg(simd_arch)]
            fn run_narrow(
                plan: &mut crate::walk::Plan<'_, $t, u32>,
                range: core::ops::Range<usize>,
                backend: crate::dispatch::backend::Backend,
                scratch: &mut [u64],
            ) -> Result<(), crate::types::error::Error> {
                plan.run_sequences_here(range, backend, scratch)
            }

            #[cfg(simd_arch)]
            fn run_wide(
                plan: &mut crate::walk::Plan<'_, $t, u64>,
                range: core::ops::Range<usize>,
                backend: crate::dispatch::backend::Backend,
                scratch: &mut [u64],
            ) -> Result<(), crate::types::error::Error> {
                plan.run_sequences_here(range, backend, scratch)
            }
        }
    )*};
}
engines_compiled_here!(u8, u16, u32, u64, i8, i16, i32, i64, half::f16, half::bf16, f32, f64);
