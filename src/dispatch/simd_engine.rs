//! [`simd_engine!`]: what makes an ISA's vectors an engine, written once for every ISA.

/// The entry points of a SIMD engine: the methods of its capability token (`cpu.rs`), each calling a
/// `generic` algorithm on the ISA's vectors from inside a `#[target_feature]` function, so that the
/// intrinsics the algorithm inlines are compiled for the ISA.
///
/// ```text
/// simd_engine! {
///     token: Avx512,                           // only cpu.rs makes one, after checking the features
///     features: "avx512f,avx512bw,popcnt",     // exactly what the token's constructor checks
///     lanes: U32x16, U64x8,                    // 8/16/32-bit elements, 64-bit elements
///     sorter: Network<U64x8>,                  // how candidates are ordered (see `sorter`)
/// }
/// ```
/// Expands, in the invoking module, to the token's `select`, `select_bisected` and `select_side` (the
/// engine) and `run` (any `arch::Vectorizable` work), to its `network_sort`, `kth_smallest`,
/// `minima_bound`, `check_narrow_lanes`, `sort_few`, `partition_select`, `partition_sort` and
/// `partition_lanes` in test builds (`Engine` reaches them for the tests), and to one `unsafe` function
/// with the ISA's features behind each.
macro_rules! simd_engine {
    (
        token: $token:ty,
        features: $features:literal,
        lanes: $v32:ty, $v64:ty,
        sorter: $sorter:ty $(,)?
    ) => {
        impl $token {
            /// Selects each of `rows` through the generic filter on this ISA's lanes, in one call. Same
            /// contract as `arch::scalar::select`, for each row.
            pub(crate) fn select<T: $crate::types::element::Element, E: $crate::kernels::entry::Entry>(
                self,
                rows: &mut $crate::kernels::entry::Rows<'_, '_, T>,
                k: usize,
                flip: u64,
                buffer: &mut [E],
            ) {
                // SAFETY: the token exists, so the CPU has the features `engine_select` is compiled
                // with (the token's constructor checks them).
                unsafe { engine_select(rows, k, flip, buffer) }
            }

            /// A row of 8- or 16-bit keys (f16 and bf16 keyed first) under its exact K-th key, found
            /// by bisection on this ISA's lanes of their width (`generic::select_bisected`); false, having reported
            /// nothing, where the row is not one for it.
            pub(crate) fn select_bisected<T: $crate::types::element::Element, E: $crate::kernels::entry::Entry>(
                self,
                row: &[T],
                k: usize,
                flip: u64,
                emit: &mut $crate::kernels::entry::Emit<'_, T>,
            ) -> bool {
                // SAFETY: as in `select`.
                unsafe { engine_select_bisected::<T, E>(row, k, flip, emit) }
            }

            /// Neighbouring sequences side by side on this ISA's lanes. Same contract as
            /// `Engine::select_side`.
            pub(crate) fn select_side<T: $crate::types::element::Element>(
                self,
                side: &$crate::types::sequence::Side<'_, T>,
                k: usize,
                flip: u64,
                buffer: $crate::kernels::entry::Buffer<'_>,
                emit: &mut $crate::kernels::entry::SideOutputs<'_, T>,
            ) -> usize {
                // SAFETY: as in `select`.
                unsafe { engine_select_side(side, k, flip, buffer, emit) }
            }

            /// Runs `work` compiled with this ISA's features (see `arch::Vectorizable`).
            pub(crate) fn run<W: $crate::dispatch::Vectorizable>(self, work: W) -> W::Output {
                // SAFETY: as in `select`.
                unsafe { engine_run(work) }
            }

            /// The sorting network on these lanes (tests reach it through `Engine`).
            #[cfg(test)]
            pub(crate) fn network_sort(self, entries: &mut [u64], k: usize) {
                // SAFETY: as in `select`.
                unsafe { engine_network_sort(entries, k) }
            }

            /// The network's K-th smallest on these lanes (tests reach it through `Engine`).
            #[cfg(test)]
            pub(crate) fn kth_smallest(self, keys: &[u64], vectors: usize, k: usize, wide: bool) -> Option<u64> {
                // SAFETY: as in `select`.
                unsafe { engine_kth_smallest(keys, vectors, k, wide) }
            }

            /// The group minima's bound of an integer row on these lanes (tests reach it through
            /// `Engine`).
            #[cfg(test)]
            pub(crate) fn minima_bound<T: $crate::types::element::Element>(
                self,
                row: &[T],
                k: usize,
                flip: u64,
                vectors: usize,
            ) -> Option<(u64, usize)> {
                // SAFETY: as in `select`.
                unsafe { engine_minima_bound(row, k, flip, vectors) }
            }

            /// The check of the 16- and 8-bit lanes on these lanes, where they have them (tests reach
            /// it through `Engine`): whether it ran.
            #[cfg(test)]
            pub(crate) fn check_narrow_lanes(self) -> bool {
                // SAFETY: as in `select`.
                unsafe { engine_check_narrow_lanes() }
            }

            /// The sorter's way with a few packed words (tests reach it through `Engine`).
            #[cfg(test)]
            pub(crate) fn sort_few(
                self,
                words: &[u64],
                count: usize,
                sorted: &mut [u64; $crate::kernels::candidates::FEW],
            ) -> bool {
                // SAFETY: as in `select`.
                unsafe { engine_sort_few(words, count, sorted) }
            }

            /// The vectorised selection on these lanes (tests reach it through `Engine`).
            #[cfg(test)]
            pub(crate) fn partition_select(self, words: &mut [u64], k: usize) -> bool {
                // SAFETY: as in `select`.
                unsafe { engine_partition_select(words, k) }
            }

            /// The vectorised quicksort on these lanes (tests reach it through `Engine`).
            #[cfg(test)]
            pub(crate) fn partition_sort(self, words: &mut [u64], k: usize) {
                // SAFETY: as in `select`.
                unsafe { engine_partition_sort(words, k) }
            }

            /// `Vector::partition_lanes` on these lanes (tests reach it through `Engine`).
            #[cfg(test)]
            pub(crate) fn partition_lanes(
                self,
                words: &[u64],
                bits: u64,
            ) -> Option<[u64; $crate::simd::vector::MAX_LANES]> {
                // SAFETY: as in `select`.
                unsafe { engine_partition_lanes(words, bits) }
            }
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[target_feature(enable = $features)]
        unsafe fn engine_select<T: $crate::types::element::Element, E: $crate::kernels::entry::Entry>(
            rows: &mut $crate::kernels::entry::Rows<'_, '_, T>,
            k: usize,
            flip: u64,
            buffer: &mut [E],
        ) {
            let mut row = 0;
            while let Some((seq, mut emit)) = rows.row(row) {
                // SAFETY: the caller's: the CPU has the features.
                unsafe { engine_select_row(&seq, k, flip, buffer, &mut emit) };
                row += 1;
            }
        }

        /// One row of `engine_select`, out of line: inlined in the loop over the rows, the filter lost
        /// registers to the loop's state and spilled them in its hot loops, more instructions a row than
        /// the call saves (`moe4096x256_k8`).
        ///
        /// # Safety
        /// The CPU has the features this is compiled with.
        #[inline(never)]
        #[target_feature(enable = $features)]
        unsafe fn engine_select_row<T: $crate::types::element::Element, E: $crate::kernels::entry::Entry>(
            seq: &$crate::types::sequence::Sequence<'_, T>,
            k: usize,
            flip: u64,
            buffer: &mut [E],
            emit: &mut $crate::kernels::entry::Emit<'_, T>,
        ) {
            $crate::kernels::select::<$v32, $v64, $sorter, T, E>(seq, k, flip, buffer, emit);
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[target_feature(enable = $features)]
        unsafe fn engine_select_bisected<T: $crate::types::element::Element, E: $crate::kernels::entry::Entry>(
            row: &[T],
            k: usize,
            flip: u64,
            emit: &mut $crate::kernels::entry::Emit<'_, T>,
        ) -> bool {
            $crate::kernels::select_bisected::<$v32, $sorter, T, E>(row, k, flip, emit)
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[target_feature(enable = $features)]
        unsafe fn engine_select_side<T: $crate::types::element::Element>(
            side: &$crate::types::sequence::Side<'_, T>,
            k: usize,
            flip: u64,
            buffer: $crate::kernels::entry::Buffer<'_>,
            emit: &mut $crate::kernels::entry::SideOutputs<'_, T>,
        ) -> usize {
            $crate::kernels::select_side::<$v32, $v64, $sorter, T>(side, k, flip, buffer, emit)
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[target_feature(enable = $features)]
        unsafe fn engine_run<W: $crate::dispatch::Vectorizable>(work: W) -> W::Output {
            work.run()
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[cfg(test)]
        #[target_feature(enable = $features)]
        unsafe fn engine_network_sort(entries: &mut [u64], k: usize) {
            $crate::kernels::network::sort::<$v64>(entries, k);
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[cfg(test)]
        #[target_feature(enable = $features)]
        unsafe fn engine_kth_smallest(keys: &[u64], vectors: usize, k: usize, wide: bool) -> Option<u64> {
            if wide {
                $crate::kernels::network::kth_of::<$v64>(keys, vectors, k)
            } else {
                $crate::kernels::network::kth_of::<$v32>(keys, vectors, k)
            }
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[cfg(test)]
        #[target_feature(enable = $features)]
        unsafe fn engine_minima_bound<T: $crate::types::element::Element>(
            row: &[T],
            k: usize,
            flip: u64,
            vectors: usize,
        ) -> Option<(u64, usize)> {
            $crate::kernels::integer_minima_bound::<$v32, T>(row, k, flip, vectors)
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[cfg(test)]
        #[target_feature(enable = $features)]
        unsafe fn engine_check_narrow_lanes() -> bool {
            use $crate::simd::vector::Vector;
            let narrow = <$v32>::HALF_LANES && <$v32>::BYTE_LANES;
            if narrow {
                $crate::kernels::testing::check_narrow_lanes::<$v32>();
            }
            narrow
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[cfg(test)]
        #[target_feature(enable = $features)]
        unsafe fn engine_sort_few(
            words: &[u64],
            count: usize,
            sorted: &mut [u64; $crate::kernels::candidates::FEW],
        ) -> bool {
            <$sorter as $crate::kernels::candidates::Sorter>::sort_few(words, count, sorted)
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[cfg(test)]
        #[inline(never)]
        #[target_feature(enable = $features)]
        unsafe fn engine_partition_select(words: &mut [u64], k: usize) -> bool {
            $crate::kernels::partition::select::<$v64>(words, k)
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[cfg(test)]
        #[inline(never)]
        #[target_feature(enable = $features)]
        unsafe fn engine_partition_sort(words: &mut [u64], k: usize) {
            $crate::kernels::partition::sort::<$v64>(words, k);
        }

        /// # Safety
        /// The CPU has the features this is compiled with.
        #[cfg(test)]
        #[target_feature(enable = $features)]
        unsafe fn engine_partition_lanes(words: &[u64], bits: u64) -> Option<[u64; $crate::simd::vector::MAX_LANES]> {
            $crate::kernels::partition::partition_lanes::<$v64>(words, bits)
        }
    };
}

pub(crate) use simd_engine;
