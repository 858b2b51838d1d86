//! Keys and limits in the lanes: the lane-wise key transforms ([`keys`]), a key limit turned into what
//! a block's lanes are compared with ([`LaneLimit`], [`float_limit`], [`half_limit`]; each lane's own
//! limit, for the column filter: [`float_limits`]), and the block test
//! with the hot loop over it ([`LaneLimit::scan`]), and the positions that pass it compressed in short rows
//! ([`LaneLimit::compress_blocks`]).

use core::mem::MaybeUninit;

use crate::simd::vector::Vector;
use crate::types::element::{Element, FLOAT_KEY, Key, Order, SIGNED_KEY, Sealed, UNSIGNED_KEY};

/// Bytes ahead of the hot loop that it asks the cache for, one line per two blocks: in the next 4 KiB
/// page, where the hardware prefetchers (which stay within a page) have not started yet. Set by
/// `llm32x128k_k50`, `llm32x128k_k50_f16` and `vec1m_k100` on an Intel CPU with AVX-512 (1 or 2 KiB
/// ahead gains less; i32 rows do not change); see BENCHMARKS.md, decisions. Float rows on AMD CPUs go
/// without (see the strategy's `prefetch_floats`): their prefetch is of the line
/// the loop loads anyway, which costs nothing measurable. (A prefetch of an address past the row is a
/// hint to the cache: it reads nothing and cannot fault.)
const SCAN_AHEAD: usize = 4096;

/// Vectors per block: one compare-and-branch per `UNROLL · LANES` elements (at most 64 lanes, so a
/// block's pass bits fit one `u64`).
pub(crate) const UNROLL: usize = 4;

/// Units a chunk of [`LaneLimit::scan`] with `CHUNKS` tests, a bit each, before it branches (see
/// `filter`): 4096 f16 on AVX2 (units of 64 in 16-bit lanes).
pub(crate) const CHUNK: usize = 64;

/// The elements the hot loop tests a branch: two blocks for 32- and 64-bit elements and 8- and 16-bit
/// ones in lanes of their width (one block a branch leaves the loads too few in flight to reach the
/// memory's speed), one for narrower ones, whose loads widen or convert (two blocks slow them). Set by
/// rows of 128k f32 and f16 with K of 1 and 8 (the shape of `llm32x128k_k50`).
#[inline(always)]
pub(crate) const fn scan_unit<V: Vector, T: Element, const FORM: u8>() -> usize {
    let blocks = if in_16_bit_lanes::<V, T, FORM>() || in_8_bit_lanes::<V, T, FORM>() || size_of::<T>() >= 4 {
        2
    } else {
        1
    };
    blocks * UNROLL * V::LANES
}

/// Whether `FORM`'s elements are tested as raw bits in 16-bit lanes on `V`, where the vector has them
/// ([`Vector::HALF_LANES`]): f16 and bf16 (`HALF`, `BF16`), sign and magnitude in 16 bits, so that one
/// set of integer tests ([`half_limit`]) serves both with the type's infinity; and 16-bit integers,
/// whose keys are their bits (the sign flipped if signed), on the same compares: twice the lanes a
/// register of 32-bit lanes holds, and no widening load.
#[inline(always)]
pub(crate) const fn in_16_bit_lanes<V: Vector, T: Element, const FORM: u8>() -> bool {
    V::HALF_LANES && size_of::<T>() == 2 && matches!(FORM, HALF | BF16 | UNSIGNED | SIGNED)
}

/// Whether `FORM`'s elements are 8-bit integers tested as raw bits in 8-bit lanes on `V`, where the
/// vector has them ([`Vector::BYTE_LANES`]): a block is one register, and the key's flips move into the
/// limit as for wider integers: four times the lanes of 32-bit lanes, and no widening load
/// (`u8_1m_k100`).
#[inline(always)]
pub(crate) const fn in_8_bit_lanes<V: Vector, T: Element, const FORM: u8>() -> bool {
    V::BYTE_LANES && size_of::<T>() == 1 && matches!(FORM, UNSIGNED | SIGNED)
}

/// The forms a row's keys take in the lanes: the `FORM` parameter every filter, bound and collection
/// is compiled for (one copy per form a type can have). The first three are the key forms of
/// `Element`s, keyed in the lanes; the others test floats without keying them.
pub(crate) const UNSIGNED: u8 = UNSIGNED_KEY;
pub(crate) const SIGNED: u8 = SIGNED_KEY;
pub(crate) const FLOAT: u8 = FLOAT_KEY;

/// f32 and f64: compared as floats against the value whose key is the limit (see
/// [`float_limit`]).
pub(crate) const NATIVE_FLOAT: u8 = 3;

/// f16 on vectors with 16-bit lanes ([`Vector::HALF_LANES`]): the raw bits, two vectors' worth a
/// register, compared as integers with the limit value's bits ([`half_test`]). On
/// vectors that convert it instead ([`Vector::CONVERTS_HALF`]): loaded as f32 and compared like
/// `NATIVE_FLOAT` against the f16 limit value, also converted (exact, so the test is the same). One kind
/// for both, so that a debug build, which compiles every kind's filter into each engine's one frame, has
/// one more, not two.
pub(crate) const HALF: u8 = 4;

/// bf16 on vectors with 16-bit lanes: the raw bits, like f16's (the same tests, with bf16's infinity:
/// [`in_16_bit_lanes`]). On the other SIMD engines' 32-bit lanes ([`Vector::WIDENS_BF16`]): widened to
/// the f32 of the same value on load ([`Vector::load_bf16`]: its bits shifted up 16, exact) and compared
/// like `NATIVE_FLOAT` against the bf16 limit value, widened too, where keying in the lanes (`FLOAT`)
/// takes nine operations a vector.
pub(crate) const BF16: u8 = 5;

/// A key limit turned into what the block test compares lanes with.
#[derive(Clone, Copy)]
pub(crate) struct LaneLimit<V> {
    /// The key limit this stands for (0 = none yet: a limit of 0 stops the scan before any test).
    pub(crate) key: u64,
    limit: V,
    /// f16 or bf16 in 16-bit lanes: lanes above this are negative NaNs (-inf in each, `0xFC00` or
    /// `0xFF80`, or all ones where the test needs no such term).
    negative_nan: V,
    /// How lanes are compared with `limit`: one of the test constants below `AT_RUN_TIME`.
    test: u8,
    /// Whether every lane the test passes is a float above +0 or a NaN (see [`above_zero_key`]).
    pub(crate) above_zero: bool,
}

/// Inside [`LaneLimit::scan`] and [`LaneLimit::compress_blocks`]: `$by_test!(TESTS..)` (the caller's
/// macro, which runs the test of `self.test` among `TESTS`, or `LESS`) with the family of tests that the
/// kind and the vector decide at compile time (`const`: each compiles only the copies of the tests it
/// can have).
macro_rules! by_family {
    ($by_test:ident) => {
        match const { test_family::<V, T, FORM>() } {
            FLOAT_TESTS => $by_test!(LESS_OR_EQUAL NOT_LESS_OR_EQUAL),
            HALF_TESTS => $by_test!(HALF_BELOW_SIGNED HALF_ABOVE HALF_ABOVE_SIGNED_OR_NAN HALF_BELOW_OR_NAN),
            UNSIGNED_TESTS => $by_test!(BELOW ABOVE),
            SIGNED_TESTS => $by_test!(BELOW_SIGNED ABOVE_SIGNED),
            BYTE_TESTS => $by_test!(BYTE_BELOW BYTE_ABOVE BYTE_BELOW_SIGNED BYTE_ABOVE_SIGNED),
            _ => $by_test!(),
        }
    };
}

impl<V: Vector> LaneLimit<V> {
    /// The lanes of the `UNROLL` vectors of `row` from `start` that pass the limit, as bits (lane `i`
    /// of vector `u` is bit `u · LANES + i`); tested with one `any` before the bits are gathered.
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`.
    #[inline(always)]
    unsafe fn block_bits<T: Element, const FORM: u8>(&self, row: &[T], start: usize, lanes: &Lanes<V>) -> u64 {
        // SAFETY: the caller's precondition.
        unsafe { self.bits_with::<T, FORM, AT_RUN_TIME>(row, start, lanes) }
    }

    /// The lanes of the [`scan_unit`] elements of `row` from `start` that pass the limit, as bits (lane
    /// `i` is bit `i`), for units of 64 lanes at most: the units a chunk marked, tested again with the
    /// test matched once a unit and no clamp to the row's end, where [`block_at`](Self::block_at) matched
    /// it for each register and clamped each block.
    ///
    /// # Safety
    /// `start + scan_unit::<V, T, FORM>() <= row.len()`.
    #[inline(always)]
    pub(crate) unsafe fn unit_bits<T: Element, const FORM: u8>(
        &self,
        row: &[T],
        start: usize,
        lanes: &Lanes<V>,
    ) -> u64 {
        debug_assert!(scan_unit::<V, T, FORM>() <= 64 && start + scan_unit::<V, T, FORM>() <= row.len());
        macro_rules! by_test {
            ($($test:ident)*) => {
                match self.test {
                    // SAFETY: the caller's precondition.
                    $($test => unsafe { self.unit_bits_with::<T, FORM, $test>(row, start, lanes) },)*
                    // SAFETY: as above.
                    _ => unsafe { self.unit_bits_with::<T, FORM, AT_RUN_TIME>(row, start, lanes) },
                }
            };
        }
        by_family!(by_test)
    }

    /// [`unit_bits`](Self::unit_bits) with the test `TEST`.
    ///
    /// # Safety
    /// As `unit_bits`.
    #[inline(always)]
    unsafe fn unit_bits_with<T: Element, const FORM: u8, const TEST: u8>(
        &self,
        row: &[T],
        start: usize,
        lanes: &Lanes<V>,
    ) -> u64 {
        let block = UNROLL * V::LANES;
        let mut bits = 0;
        for b in 0..scan_unit::<V, T, FORM>() / block {
            // SAFETY: the block ends at start + scan_unit at the latest (the caller's precondition).
            bits |= unsafe { self.bits_with::<T, FORM, TEST>(row, start + b * block, lanes) } << (b * block);
        }
        bits
    }

    /// The block of `row` that holds `position` (`< row.len()`): the one from `position`, or, with less
    /// than a block left, the row's last block with its lanes before `position` (already seen) masked
    /// off. Returns its start and the lanes that pass, as [`block_bits`](Self::block_bits); the bits are 0
    /// where the row is shorter than a block or `position` is past its end.
    #[inline(always)]
    pub(crate) fn block_at<T: Element, const FORM: u8>(
        &self,
        row: &[T],
        position: usize,
        lanes: &Lanes<V>,
    ) -> (usize, u64) {
        let Some(last) = row.len().checked_sub(UNROLL * V::LANES) else {
            return (position, 0);
        };
        let start = position.min(last);
        if position - start >= UNROLL * V::LANES {
            return (position, 0);
        }
        // SAFETY: start <= last, so start + UNROLL · LANES <= row.len().
        let bits = unsafe { self.block_bits::<T, FORM>(row, start, lanes) };
        (start, bits & u64::MAX << (position - start))
    }

    /// The hot loop: the first whole block of `row` from `start` on with a lane that passes the limit, as
    /// its start and [`block_bits`](Self::block_bits); or the first start past the last whole block, and 0.
    /// With `CHUNKS` (SIMD engines only): the first whole chunk of [`CHUNK`] units of [`scan_unit`]
    /// elements from `start` on with a unit that passes, as its start and its units' tests (unit `u` is
    /// bit `u`); or the first start past the last whole chunk, and 0.
    ///
    /// The float test is matched once, outside the loop (matched inside, it is a load and a branch per
    /// block, and the loop falls short of the memory's speed). Float rows prefetch ahead of the hardware
    /// where `prefetch_floats`; integer rows always do.
    #[inline(always)]
    pub(crate) fn scan<T: Element, const FORM: u8, const CHUNKS: bool>(
        &self,
        row: &[T],
        start: usize,
        lanes: &Lanes<V>,
        prefetch_floats: bool,
    ) -> (usize, u64) {
        if !V::SPECIALIZE {
            return self.scan_generic::<T, FORM>(row, start, lanes);
        }
        // The family by the kind and the vector (`by_family`), the test within it at run time.
        macro_rules! by_test {
            ($($test:ident)*) => {
                match self.test {
                    $($test => self.scan_with::<T, FORM, $test, CHUNKS>(row, start, lanes, prefetch_floats),)*
                    _ => self.scan_with::<T, FORM, LESS, CHUNKS>(row, start, lanes, prefetch_floats),
                }
            };
        }
        by_family!(by_test)
    }

    /// The positions of the lanes that pass the limit in `row`'s whole blocks, compressed into `found`
    /// in order, a vector at a time ([`Vector::COMPRESSES`] engines): the start of the first block not
    /// seen and the count, or `None` once `found` has no room for another block. 16-bit elements in 16-bit
    /// lanes take their tests as bits, two vectors at a time.
    ///
    /// Each vector's test stays a mask register that the compress takes as it is, where the bits of a
    /// whole block went through a general register and back, and the test is matched outside the loop.
    // Out of line in unoptimised builds (see `first_best`): inlined, its three copies' temporaries each
    // take stack slots in the filter's frame (12 KiB more).
    #[cfg_attr(debug_assertions, inline(never))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn compress_blocks<T: Element, const FORM: u8>(
        &self,
        row: &[T],
        lanes: &Lanes<V>,
        found: &mut [MaybeUninit<u32>],
    ) -> Option<(usize, usize)> {
        if !V::COMPRESSES {
            return Some((0, 0));
        }
        // As in `scan`.
        macro_rules! by_test {
            ($($test:ident)*) => {
                match self.test {
                    $($test => self.compress_blocks_with::<T, FORM, $test>(row, lanes, found),)*
                    _ => self.compress_blocks_with::<T, FORM, LESS>(row, lanes, found),
                }
            };
        }
        by_family!(by_test)
    }

    /// How many elements of `row` (at least a block long, else 0) pass the limit, each counted once:
    /// the whole blocks, then the block that ends the row with its lanes already counted masked off.
    /// Exact only where the lane test is (integers: f16 and bf16 in 16-bit lanes pass negative NaNs).
    #[inline(always)]
    pub(crate) fn count<T: Element, const FORM: u8>(&self, row: &[T], lanes: &Lanes<V>) -> usize {
        // As in `scan`.
        macro_rules! by_test {
            ($($test:ident)*) => {
                match self.test {
                    $($test => self.count_with::<T, FORM, $test>(row, lanes),)*
                    _ => self.count_with::<T, FORM, LESS>(row, lanes),
                }
            };
        }
        by_family!(by_test)
    }

    #[inline(always)]
    fn count_with<T: Element, const FORM: u8, const TEST: u8>(&self, row: &[T], lanes: &Lanes<V>) -> usize {
        let block = UNROLL * V::LANES;
        let Some(last) = row.len().checked_sub(block) else {
            return 0;
        };
        let mut count = 0;
        let mut start = 0;
        while start < last {
            // SAFETY: start < last = row.len() - block.
            count += unsafe { self.bits_with::<T, FORM, TEST>(row, start, lanes) }.count_ones() as usize;
            start += block;
        }
        // SAFETY: last + block = row.len(). The lanes before `start` were counted above, and
        // start - last < block <= 64.
        let bits = unsafe { self.bits_with::<T, FORM, TEST>(row, last, lanes) } & u64::MAX << (start - last);
        count + bits.count_ones() as usize
    }

    // Out of line in unoptimised builds, as `scan_with`.
    #[cfg_attr(debug_assertions, inline(never))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn compress_blocks_with<T: Element, const FORM: u8, const TEST: u8>(
        &self,
        row: &[T],
        lanes: &Lanes<V>,
        found: &mut [MaybeUninit<u32>],
    ) -> Option<(usize, usize)> {
        let block = UNROLL * V::LANES;
        let lane_bits = u64::MAX >> (64 - V::LANES);
        let mut passed = 0;
        let mut start = 0;
        // The block's first position: a passing lane's position is its number in the block plus this.
        let mut first = V::splat(0);
        let step = V::splat(block as u64);
        // The most positions `found` may hold before a block and still take all of it.
        let last_room = found.len().checked_sub(block)?;
        for _ in 0..row.len() / block {
            // Room for the whole block checked once, not per vector (two compares and branches of each
            // vector's dozen instructions), and by one compare: a subslice takes two and its own bounds.
            if passed > last_room {
                return None;
            }
            // SAFETY: passed <= found.len() - block, so the block's positions fit from `passed` on.
            let room = unsafe { found.as_mut_ptr().add(passed).cast::<u32>() };
            let mut filled = 0;
            let mut keep = |v: usize, bits: u64| {
                let bits = bits & lane_bits;
                // SAFETY: `filled` counts the lanes of the earlier vectors of the block that passed, at
                // most LANES each, and the block has UNROLL vectors: `filled + LANES <= block`, and
                // `room` has a block's positions, which store_positions' LANES u32 fit in.
                unsafe { V::compress_iota(bits, v).add(first).store_positions(room.add(filled)) };
                filled += bits.count_ones() as usize;
            };
            if const { in_16_bit_lanes::<V, T, FORM>() || in_8_bit_lanes::<V, T, FORM>() } {
                // Lanes of the element's width: their tests come as bits already (`bits_with`).
                // SAFETY: start + block <= row.len(), as this is one of the row's `row.len() / block`
                // whole blocks.
                let bits = unsafe { self.bits_with::<T, FORM, TEST>(row, start, lanes) };
                for v in 0..UNROLL {
                    keep(v, bits >> (v * V::LANES));
                }
            } else {
                // SAFETY: as above, start + block <= row.len().
                let masks = unsafe { self.masks_with::<T, FORM, TEST>(row, start, lanes) };
                for (v, mask) in masks.into_iter().enumerate() {
                    keep(v, V::bits(mask));
                }
            }
            first = first.add(step);
            passed += filled;
            start += block;
        }
        Some((start, passed))
    }

    /// [`scan`](Self::scan) in one copy, the float test matched per block.
    #[inline(always)]
    fn scan_generic<T: Element, const FORM: u8>(&self, row: &[T], mut start: usize, lanes: &Lanes<V>) -> (usize, u64) {
        let block = UNROLL * V::LANES;
        while start + block <= row.len() {
            // SAFETY: checked just above.
            let bits = unsafe { self.block_bits::<T, FORM>(row, start, lanes) };
            if bits != 0 {
                return (start, bits);
            }
            start += block;
        }
        (start, 0)
    }

    // Out of line in unoptimised builds (see `first_best`): inlined, each test's copy, matched at run
    // time there, takes stack slots of its own in the filter's frame (with the integer tests, the
    // network paths of `tests/stack.rs` pass 512 KiB).
    #[cfg_attr(debug_assertions, inline(never))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn scan_with<T: Element, const FORM: u8, const TEST: u8, const CHUNKS: bool>(
        &self,
        row: &[T],
        mut start: usize,
        lanes: &Lanes<V>,
        prefetch_floats: bool,
    ) -> (usize, u64) {
        let block = UNROLL * V::LANES;
        let ahead = if FORM == UNSIGNED || FORM == SIGNED || prefetch_floats {
            SCAN_AHEAD / size_of::<T>()
        } else {
            0
        };
        let unit = scan_unit::<V, T, FORM>();
        if CHUNKS {
            while start + CHUNK * unit <= row.len() {
                let mut tested = 0;
                // Eight units a pass, unrolled: a loop of 64 passes mispredicted its exit once a chunk.
                for group in 0..CHUNK / 8 {
                    // The group's bits gathered by constant shifts, then moved into place once.
                    let mut bits = 0u64;
                    for u in 0..8 {
                        let at = start + (8 * group + u) * unit;
                        crate::simd::vector::prefetch(row.as_ptr().wrapping_add(at + ahead));
                        // SAFETY: the unit ends at start + CHUNK · unit at the latest, inside `row`
                        // (checked just above).
                        bits |= u64::from(unsafe { self.unit_any::<T, FORM, TEST>(row, at, lanes) }) << u;
                    }
                    tested |= bits << (8 * group);
                }
                if tested != 0 {
                    return (start, tested);
                }
                start += CHUNK * unit;
            }
            return (start, 0);
        }
        while unit > block && start + unit <= row.len() {
            crate::simd::vector::prefetch(row.as_ptr().wrapping_add(start + ahead));
            // SAFETY: checked just above.
            if unsafe { self.unit_any::<T, FORM, TEST>(row, start, lanes) } {
                // The two blocks tested again for their bits, rather than their eight masks kept across
                // the branch: live together, they outnumber the mask registers, and every pass of the
                // loop would spill them to the stack and back (AVX-512). `black_box` keeps the compiler
                // from reusing the masks above.
                let again = core::hint::black_box(start);
                // SAFETY: `again` is `start`, checked above.
                let bits = unsafe { self.bits_with::<T, FORM, TEST>(row, again, lanes) };
                if bits != 0 {
                    return (again, bits);
                }
                // SAFETY: as above.
                return (again + block, unsafe {
                    self.bits_with::<T, FORM, TEST>(row, again + block, lanes)
                });
            }
            start += unit;
        }
        while start + block <= row.len() {
            // SAFETY: checked just above.
            let bits = unsafe { self.bits_with::<T, FORM, TEST>(row, start, lanes) };
            if bits != 0 {
                return (start, bits);
            }
            start += block;
        }
        (start, 0)
    }

    /// Whether any lane of the [`scan_unit`] elements of `row` from `start` passes the test `TEST`:
    /// 16-bit elements in 16-bit lanes folded lane-wise ([`half_any`]), f32/f64 folded where the vectors can
    /// ([`float_any`](Self::float_any)), the masks of the unit's blocks or-ed otherwise.
    ///
    /// # Safety
    /// `start + scan_unit::<V, T, FORM>() <= row.len()`.
    #[inline(always)]
    unsafe fn unit_any<T: Element, const FORM: u8, const TEST: u8>(
        &self,
        row: &[T],
        start: usize,
        lanes: &Lanes<V>,
    ) -> bool {
        let block = UNROLL * V::LANES;
        let unit = scan_unit::<V, T, FORM>();
        debug_assert!(start + unit <= row.len(), "{start} of {}", row.len());
        if const { in_16_bit_lanes::<V, T, FORM>() } {
            let test = if TEST == AT_RUN_TIME { self.test } else { TEST };
            let mut raw = [V::splat(0); UNROLL];
            for (pair, raw) in raw.iter_mut().enumerate() {
                // SAFETY: the pair's 2 · LANES elements end at start + 2 · block = start + unit at the
                // latest, inside `row` (the caller's precondition), and T is 2 bytes wide (in_16_bit_lanes).
                *raw = unsafe { V::load16(row.as_ptr().add(start + 2 * pair * V::LANES).cast()) };
            }
            return half_any(&raw, self.limit, self.negative_nan, test);
        }
        if const { in_8_bit_lanes::<V, T, FORM>() } {
            let test = if TEST == AT_RUN_TIME { self.test } else { TEST };
            // SAFETY: the unit's two blocks of 4 · LANES bytes end at start + unit, inside `row` (the
            // caller's precondition), and T is 1 byte wide.
            let raw = unsafe {
                [
                    V::load8(row.as_ptr().add(start).cast()),
                    V::load8(row.as_ptr().add(start + block).cast()),
                ]
            };
            return byte_any(raw, self.limit, test);
        }
        if const { FORM == NATIVE_FLOAT && V::FOLDS_FLOATS && (TEST == LESS || TEST == NOT_LESS_OR_EQUAL) }
            && unit == 2 * block
        {
            // SAFETY: the caller's precondition; T is f32 or f64 for NATIVE_FLOAT, as wide as the lanes.
            return unsafe { self.float_any::<T, TEST>(row, start) };
        }
        let mut any = V::lt(self.limit, self.limit);
        for b in 0..unit / block {
            // SAFETY: the block ends at start + unit at the latest (the caller's precondition).
            let masks = unsafe { self.masks_with::<T, FORM, TEST>(row, start + b * block, lanes) };
            any = masks.iter().fold(any, |a, &b| V::or_mask(a, b));
        }
        V::any(any)
    }

    /// Whether any lane of the two blocks of `row` from `start` passes the float test `TEST` (`LESS` or
    /// `NOT_LESS_OR_EQUAL`; `LESS_OR_EQUAL`, whose limit is +inf, keeps the masks: a minimum folded from
    /// it could not tell a block of NaNs), from their vectors folded lane-wise and one compare
    /// ([`Vector::FOLDS_FLOATS`]):
    ///
    /// ```text
    /// LESS (x < v):                  least = min(x_i, least) from least = v    any: least < v
    /// NOT_LESS_OR_EQUAL (!(x <= v)): most = NaN-keeping max of the x_i          any: !(most <= v)
    /// ```
    /// Exact: the limit `v` is never NaN, so the minimum skips NaNs (which never pass `LESS`), and the
    /// maximum keeps them (which always pass the other). One compare a unit, where a compare into a mask
    /// register per vector and the 7 ors of their masks can bound the loop (AVX-512).
    ///
    /// # Safety
    /// `start + 2 · UNROLL · LANES <= row.len()`, and T is as wide as the lanes.
    #[inline(always)]
    unsafe fn float_any<T: Element, const TEST: u8>(&self, row: &[T], start: usize) -> bool {
        debug_assert!(start + 2 * UNROLL * V::LANES <= row.len() && size_of::<T>() * V::LANES == size_of::<V>());
        let mut folded = if TEST == LESS {
            self.limit
        } else {
            // SAFETY: the first vector of the two blocks, inside `row` (the caller's precondition).
            unsafe { V::load(row.as_ptr().add(start)) }
        };
        for u in usize::from(TEST != LESS)..2 * UNROLL {
            // SAFETY: the u-th vector of the two blocks ends at start + 2 · UNROLL · LANES at the latest.
            let x = unsafe { V::load(row.as_ptr().add(start + u * V::LANES)) };
            folded = if TEST == LESS {
                x.float_min(folded)
            } else {
                x.float_max(folded)
            };
        }
        V::any(if TEST == LESS {
            folded.float_lt(self.limit)
        } else {
            folded.float_nle(self.limit)
        })
    }

    /// [`block_bits`](Self::block_bits) with the float test `TEST`.
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`.
    // Out of line in unoptimised builds, as `scan_with`.
    #[cfg_attr(debug_assertions, inline(never))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn bits_with<T: Element, const FORM: u8, const TEST: u8>(
        &self,
        row: &[T],
        start: usize,
        lanes: &Lanes<V>,
    ) -> u64 {
        if const { in_16_bit_lanes::<V, T, FORM>() } {
            // SAFETY: the caller's precondition.
            return unsafe { self.half_bits::<T, TEST>(row, start) };
        }
        if const { in_8_bit_lanes::<V, T, FORM>() } {
            // SAFETY: the caller's precondition.
            return unsafe { self.byte_bits::<T, TEST>(row, start) };
        }
        // SAFETY: the caller's precondition.
        let masks = unsafe { self.masks_with::<T, FORM, TEST>(row, start, lanes) };
        let any = masks
            .iter()
            .fold(V::lt(self.limit, self.limit), |a, &b| V::or_mask(a, b));
        if !V::any(any) {
            return 0;
        }
        bits_of::<V>(&masks)
    }

    /// [`bits_with`](Self::bits_with) for 16-bit elements in 16-bit lanes: `UNROLL / 2` registers of 16-bit
    /// lanes, whose tests come as bits already (kept out of the masks of 32-bit lanes: splitting them per
    /// `LANES` makes LLVM shuffle the masks through memory, several times slower).
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`, and T is 2 bytes wide.
    #[inline(always)]
    unsafe fn half_bits<T: Element, const TEST: u8>(&self, row: &[T], start: usize) -> u64 {
        debug_assert!(start + UNROLL * V::LANES <= row.len() && size_of::<T>() == 2);
        let test = if TEST == AT_RUN_TIME { self.test } else { TEST };
        let mut bits = 0;
        for pair in 0..UNROLL / 2 {
            // SAFETY: the pair's 2 · LANES elements end at start + UNROLL · LANES at the latest, inside
            // `row` (the caller's precondition), and T is 2 bytes wide (in_16_bit_lanes).
            let raw = unsafe { V::load16(row.as_ptr().add(start + 2 * pair * V::LANES).cast()) };
            bits |= half_test(raw, self.limit, self.negative_nan, test) << (2 * pair * V::LANES);
        }
        bits
    }

    /// [`bits_with`](Self::bits_with) for 8-bit integers in 8-bit lanes: the block is one register.
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`, and T is 1 byte wide.
    #[inline(always)]
    unsafe fn byte_bits<T: Element, const TEST: u8>(&self, row: &[T], start: usize) -> u64 {
        debug_assert!(start + UNROLL * V::LANES <= row.len() && size_of::<T>() == 1 && UNROLL == 4);
        let test = if TEST == AT_RUN_TIME { self.test } else { TEST };
        // SAFETY: the block's 4 · LANES bytes end at start + UNROLL · LANES, inside `row` (the caller's
        // precondition), and T is 1 byte wide.
        let raw = unsafe { V::load8(row.as_ptr().add(start).cast()) };
        byte_test(raw, self.limit, test)
    }

    /// The lane tests of the block of `row` from `start`, with the float test `TEST`.
    ///
    /// # Safety
    /// `start + UNROLL · LANES <= row.len()`.
    #[inline(always)]
    unsafe fn masks_with<T: Element, const FORM: u8, const TEST: u8>(
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
            // HALF and BF16 come here with f16 and bf16 only, on vectors that widen them (16-bit lanes
            // do not come here).
            let raw = unsafe { load_as::<V, T, FORM>(row.as_ptr().add(start + u * V::LANES)) };
            *mask = match FORM {
                NATIVE_FLOAT | HALF | BF16 => match test {
                    LESS => raw.float_lt(limit),
                    LESS_OR_EQUAL => raw.float_le(limit),
                    _ => raw.float_nle(limit),
                },
                UNSIGNED | SIGNED if raw_integers::<V, T>() => match test {
                    BELOW => raw.lt(limit),
                    ABOVE => raw.gt(limit),
                    BELOW_SIGNED => raw.lt_signed(limit),
                    _ => raw.gt_signed(limit),
                },
                _ => keys::<V, FORM>(raw, lanes).lt(limit),
            };
        }
        masks
    }

    #[inline(always)]
    pub(crate) fn none() -> Self {
        LaneLimit {
            key: 0,
            limit: V::splat(0),
            negative_nan: V::splat(u64::MAX),
            test: LESS,
            above_zero: false,
        }
    }

    #[inline(always)]
    pub(crate) fn new<T: Element, const FORM: u8>(key: u64, order: Order, map: &KeyMap) -> Self {
        // Whether the float test passes only values above +0 and NaNs: `!(x <= v)` for v at or above +0.
        let above = |(value, test): (u64, FloatTest)| test == FloatTest::NotLessOrEqual && value & map.sign == 0;
        let (limit, test, above_zero) = match FORM {
            // An integer's key is its bits, the sign bit flipped if signed, then all flipped for
            // `Decreasing` (flip = all ones): order-preserving maps, moved from every lane to the limit.
            // key < L is x < L (^ sign), or, flipped, x > L ^ ones (^ sign). 16-bit integers in 16-bit
            // lanes take the compares of the float tests there, whose negative NaN term is never met
            // (all ones, set below); 8-bit ones in 8-bit lanes the byte tests.
            UNSIGNED | SIGNED
                if raw_integers::<V, T>() || in_16_bit_lanes::<V, T, FORM>() || in_8_bit_lanes::<V, T, FORM>() =>
            {
                debug_assert!((order.is_increasing() || order.mask() == map.ones) && key <= map.ones);
                let signed = FORM == SIGNED;
                let limit = key ^ order.mask() ^ if signed { map.sign } else { 0 };
                let (tests, limit) = if in_16_bit_lanes::<V, T, FORM>() {
                    // The same 16 bits in both halves of every 32-bit lane.
                    (
                        [
                            HALF_BELOW_OR_NAN,
                            HALF_ABOVE,
                            HALF_BELOW_SIGNED,
                            HALF_ABOVE_SIGNED_OR_NAN,
                        ],
                        limit * 0x1_0001,
                    )
                } else if in_8_bit_lanes::<V, T, FORM>() {
                    // The same 8 bits in every byte of every 32-bit lane.
                    (
                        [BYTE_BELOW, BYTE_ABOVE, BYTE_BELOW_SIGNED, BYTE_ABOVE_SIGNED],
                        limit * 0x0101_0101,
                    )
                } else {
                    ([BELOW, ABOVE, BELOW_SIGNED, ABOVE_SIGNED], limit)
                };
                let test = match (order.is_increasing(), signed) {
                    (true, false) => tests[0],
                    (false, false) => tests[1],
                    (true, true) => tests[2],
                    (false, true) => tests[3],
                };
                (limit, test, false)
            }
            NATIVE_FLOAT => {
                let (value, test) = float_limit(key, order, map);
                (value, test.code(), above((value, test)))
            }
            HALF | BF16 if V::HALF_LANES => {
                let float = float_limit(key, order, map);
                let (half, test) = half_limit(float);
                // The same 16 bits in both halves of every 32-bit lane.
                (half * 0x1_0001, test, above(float))
            }
            HALF => {
                let (half, test) = float_limit(key, order, map);
                (
                    u64::from(half::f16::from_bits(half as u16).to_f32().to_bits()),
                    test.code(),
                    above((half, test)),
                )
            }
            BF16 => {
                let (brain, test) = float_limit(key, order, map);
                (brain << 16, test.code(), above((brain, test)))
            }
            _ => (key, LESS, false),
        };
        let negative_nan = match test {
            HALF_ABOVE_SIGNED_OR_NAN | HALF_BELOW_OR_NAN if matches!(FORM, HALF | BF16) => {
                (map.infinity | map.sign) * 0x1_0001
            }
            _ => u64::MAX,
        };
        LaneLimit {
            key,
            limit: V::splat(limit),
            negative_nan: V::splat(negative_nan),
            test,
            above_zero,
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
// [`FloatTest`]s (`LESS` is also the keyed integer test), the tests of 16-bit elements in 16-bit lanes
// ([`half_test`]), and those of raw integers.
const LESS: u8 = 0;
const LESS_OR_EQUAL: u8 = 1;

const NOT_LESS_OR_EQUAL: u8 = 2;
const HALF_BELOW_SIGNED: u8 = 3;

const HALF_ABOVE: u8 = 4;
const HALF_ABOVE_SIGNED_OR_NAN: u8 = 5;

const HALF_BELOW_OR_NAN: u8 = 6;
// The integer tests of lanes as wide as their elements ([`raw_integers`]), compared as they are loaded.
const BELOW: u8 = 7;
const ABOVE: u8 = 8;
const BELOW_SIGNED: u8 = 9;
const ABOVE_SIGNED: u8 = 10;
// The integer tests of 8-bit elements in 8-bit lanes ([`in_8_bit_lanes`]).
const BYTE_BELOW: u8 = 11;
const BYTE_ABOVE: u8 = 12;
const BYTE_BELOW_SIGNED: u8 = 13;
const BYTE_ABOVE_SIGNED: u8 = 14;
/// The test matched per block, in the one copy of the cold paths.
const AT_RUN_TIME: u8 = 15;

/// Whether integer lanes of `T` are tested raw, against a limit in their own terms ([`LaneLimit::new`]),
/// rather than keyed first: where the element is as wide as the lane (32- and 64-bit integers; 16-bit ones
/// where the vector has 16-bit lanes, [`in_16_bit_lanes`]; others are zero-extended, so their sign is not
/// the lane's), on SIMD engines. The xor of the key would be an instruction per vector and keep the
/// load out of the compare (`i32_1m_k100`).
#[inline(always)]
const fn raw_integers<V: Vector, T: Element>() -> bool {
    V::SPECIALIZE && size_of::<T>() == size_of::<V>() / V::LANES
}

/// The tests [`LaneLimit::scan`] and [`LaneLimit::compress_blocks`] can meet for a kind on a vector, each
/// family compiled only where it can occur; every kind also has `LESS` (the keys).
const fn test_family<V: Vector, T: Element, const FORM: u8>() -> u8 {
    match FORM {
        _ if in_16_bit_lanes::<V, T, FORM>() => HALF_TESTS,
        _ if in_8_bit_lanes::<V, T, FORM>() => BYTE_TESTS,
        NATIVE_FLOAT | HALF | BF16 => FLOAT_TESTS,
        UNSIGNED if raw_integers::<V, T>() => UNSIGNED_TESTS,
        SIGNED if raw_integers::<V, T>() => SIGNED_TESTS,
        _ => KEY_TESTS,
    }
}

/// The families of [`test_family`]: floats compared as floats, 16-bit elements in 16-bit lanes, 32- and
/// 64-bit integers compared raw, keys only, and 8-bit integers in 8-bit lanes.
const FLOAT_TESTS: u8 = 0;
const HALF_TESTS: u8 = 1;
const UNSIGNED_TESTS: u8 = 2;
const SIGNED_TESTS: u8 = 3;
const KEY_TESTS: u8 = 4;
const BYTE_TESTS: u8 = 5;

/// The lanes of `raw` (16-bit elements in 16-bit lanes) that pass `test` against `limit` and
/// `negative_nan`, as bits.
#[inline(always)]
pub(crate) fn half_test<V: Vector>(raw: V, limit: V, negative_nan: V, test: u8) -> u64 {
    match test {
        HALF_BELOW_SIGNED => raw.lt16_signed(limit),
        HALF_ABOVE => raw.gt16(limit),
        HALF_ABOVE_SIGNED_OR_NAN => raw.gt16_signed_or_gt16(limit, negative_nan),
        _ => raw.lt16_or_gt16(limit, negative_nan),
    }
}

/// Whether any 16-bit lane of `raw` passes [`half_test`]: the registers folded lane-wise by the minimum
/// or maximum the test looks at, then one compare of each kind, where testing each register takes one
/// or two (a scan of f16 can be bound by its compares). The compares are `any` tests, with no bits to
/// gather: on AVX2 an or and one `vptest` where the bits take two packs, a permute and a move
/// (`llm32x128k_k50_f16`).
#[inline(always)]
fn half_any<V: Vector>(raw: &[V; UNROLL], limit: V, negative_nan: V, test: u8) -> bool {
    // Loops, not folds: a closure would not inherit the engine's target features.
    match test {
        HALF_BELOW_SIGNED => {
            let mut least = raw[0];
            for &x in raw {
                least = least.min16_signed(x);
            }
            limit.any_gt16_signed(least)
        }
        HALF_ABOVE => {
            let mut most = raw[0];
            for &x in raw {
                most = most.max16(x);
            }
            most.any_gt16(limit)
        }
        HALF_ABOVE_SIGNED_OR_NAN => {
            let (mut most_signed, mut most) = (raw[0], raw[0]);
            for &x in raw {
                (most_signed, most) = (most_signed.max16_signed(x), most.max16(x));
            }
            most_signed.any_gt16_signed(limit) | most.any_gt16(negative_nan)
        }
        _ => {
            let (mut least, mut most) = (raw[0], raw[0]);
            for &x in raw {
                (least, most) = (least.min16(x), most.max16(x));
            }
            limit.any_gt16(least) | most.any_gt16(negative_nan)
        }
    }
}

/// The lanes of `raw` (8-bit integers in 8-bit lanes) that pass `test` against `limit`, as bits.
#[inline(always)]
fn byte_test<V: Vector>(raw: V, limit: V, test: u8) -> u64 {
    match test {
        BYTE_BELOW => raw.lt8(limit),
        BYTE_ABOVE => raw.gt8(limit),
        BYTE_BELOW_SIGNED => raw.lt8_signed(limit),
        _ => raw.gt8_signed(limit),
    }
}

/// Whether any 8-bit lane of the two registers passes [`byte_test`]: folded lane-wise by the minimum or
/// maximum the test looks at, then one `any` compare (as [`half_any`]).
#[inline(always)]
fn byte_any<V: Vector>(raw: [V; 2], limit: V, test: u8) -> bool {
    match test {
        BYTE_BELOW => limit.any_gt8(raw[0].min8(raw[1])),
        BYTE_ABOVE => raw[0].max8(raw[1]).any_gt8(limit),
        BYTE_BELOW_SIGNED => limit.any_gt8_signed(raw[0].min8_signed(raw[1])),
        _ => raw[0].max8_signed(raw[1]).any_gt8_signed(limit),
    }
}

/// The float test `(v, test)` of [`float_limit`] for f16 or bf16, as integer compares of the raw bits
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
pub(crate) fn half_limit((v, test): (u64, FloatTest)) -> (u64, u8) {
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
pub(crate) enum FloatTest {
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
/// Keys are monotone in the total order of `docs/CONTRACT.md` §2, which is IEEE order with -0 == +0 and
/// NaN above everything; IEEE compares tie the zeros already, so only NaN and the one key no value has
/// (just below +0's, where -0 would have gone) need care:
/// - `Increasing`: key(x) < L iff x < v for v the value of key L (the hole inverts to -0: x < -0 is
///   exactly "negative"); when L is above +inf's key every non-NaN passes: x <= +inf.
/// - `Decreasing`: key(x) > M (M = L ^ ones) iff x > v or x is NaN, with the hole taken as the key
///   just below it (the smallest negative subnormal) and M at or above +inf's key meaning "NaN only".
#[inline(always)]
pub(crate) fn float_limit(limit: u64, order: Order, map: &KeyMap) -> (u64, FloatTest) {
    let infinity_key = map.infinity | map.sign;
    let hole = map.sign - 1;
    let value = |key: u64| {
        if key >= map.sign {
            key ^ map.sign
        } else {
            !key & map.ones
        }
    };
    if order.is_increasing() {
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

/// [`float_limit`] lane-wise, for f32 and f64 in lanes of their width: the value each lane's key limit
/// stands for, to be compared with `float_le` where `flip == 0` and `float_nle` otherwise. The values are
/// `float_limit`'s; its `Less` becomes `LessOrEqual`, so that every lane has the same test: a lane then
/// also passes the elements equal to its value (whose keys are not below the limit), never fewer.
#[inline(always)]
pub(crate) fn float_limits<V: Vector>(limits: V, order: Order, map: &KeyMap) -> V {
    let infinity_key = V::splat(map.infinity | map.sign);
    if order.is_increasing() {
        return V::select(
            limits.gt(infinity_key),
            V::splat(map.infinity),
            float_value(limits, map),
        );
    }
    let key = limits.xor(V::splat(map.ones));
    let hole = V::splat(map.sign - 1);
    let key = V::select(key.eq(hole), V::splat(map.sign - 2), key);
    float_value(key.min(infinity_key), map)
}

/// The float bits whose (unflipped) key is `key`, lane-wise: the inverse of [`keys`] but for -0 and NaN.
#[inline(always)]
fn float_value<V: Vector>(key: V, map: &KeyMap) -> V {
    let positive = key.gt(V::splat(map.sign - 1));
    V::select(positive, key.xor(V::splat(map.sign)), key.xor(V::splat(map.ones)))
}

/// The bits of f16's +inf.
pub(crate) const F16_INFINITY: u64 = 0x7C00;
/// The bits of bf16's +inf.
pub(crate) const BF16_INFINITY: u64 = 0x7F80;

/// How raw bits become keys for one element type, probed from [`Element::key`] itself so that the
/// lanes can never disagree with the scalar keys (the form of the key, a constant of the type, is
/// checked against the same probe by a test).
pub(crate) struct KeyMap {
    pub(crate) sign: u64,
    pub(crate) ones: u64,
    pub(crate) infinity: u64,
}

impl KeyMap {
    #[inline(always)]
    pub(crate) fn of<T: Element>() -> KeyMap {
        let bits = 8 * size_of::<T>() as u32;
        let ones = u64::MAX >> (64 - bits);
        let sign = 1u64 << (bits - 1);
        let key = |raw: u64| from_bits::<T>(raw).key().widen();
        // The largest finite magnitude's successor: IEEE infinity (f16 and bf16 share a width).
        let infinity = match bits {
            16 if key(0x7C01) == ones => F16_INFINITY,
            16 => BF16_INFINITY,
            32 => 0x7F80_0000,
            _ => 0x7FF0_0000_0000_0000,
        };
        KeyMap { sign, ones, infinity }
    }
}

/// The value of `T` with the raw bits `raw` (truncated to T's width).
#[inline(always)]
pub(crate) fn from_bits<T: Element>(raw: u64) -> T {
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

/// The raw bits of `value`, zero-extended.
#[inline(always)]
pub(crate) fn to_bits<T: Element>(value: T) -> u64 {
    match size_of::<T>() {
        // `Element` is sealed to the primitive integers and floats and half's `repr(transparent)`
        // f16/bf16, plain bits of their size, and each arm reads exactly size_of::<T>() bytes of it.
        // SAFETY: see above.
        1 => u64::from(unsafe { core::mem::transmute_copy::<T, u8>(&value) }),
        // SAFETY: see above.
        2 => u64::from(unsafe { core::mem::transmute_copy::<T, u16>(&value) }),
        // SAFETY: see above.
        4 => u64::from(unsafe { core::mem::transmute_copy::<T, u32>(&value) }),
        // SAFETY: see above (size 8).
        _ => unsafe { core::mem::transmute_copy::<T, u64>(&value) },
    }
}

/// The flipped key of a float above +0 or a NaN (what a test with [`LaneLimit::above_zero`] passes):
/// its bits with the sign set, every NaN all ones. Four instructions where the whole transform (both
/// signs and both zeros) takes a dozen, for each element a short row collects.
#[inline(always)]
pub(crate) fn above_zero_key<T: Element>(value: T, order: Order, map: &KeyMap) -> u64 {
    let key = to_bits(value) | map.sign;
    let key = if key > (map.infinity | map.sign) { map.ones } else { key };
    debug_assert_eq!(key, value.key().widen(), "not above +0 nor NaN");
    key ^ order.mask()
}

/// The raw bits of the value of `T` that every other value precedes or ties with in the order of `flip`
/// (its flipped key is the largest any value has): NaN or the largest integer when increasing, -inf or
/// the smallest integer when decreasing (no float has the key 0, which -inf's is next to).
#[inline(always)]
pub(crate) fn last_in_order_bits<T: Element>(order: Order, map: &KeyMap) -> u64 {
    match (<T as Sealed>::KEY_FORM, order.is_increasing()) {
        (UNSIGNED, true) => map.ones,
        (UNSIGNED, false) => 0,
        (SIGNED, true) => map.ones ^ map.sign,
        (SIGNED, false) => map.sign,
        (_, true) => map.ones, // a NaN
        (_, false) => map.sign | map.infinity,
    }
}

/// The key map's constants broadcast once per row, with the direction's flip folded in.
pub(crate) struct Lanes<V> {
    mask: V,
    sign_flip: V,
    sign: V,
    magnitude: V,
    infinity: V,
    negative_flip: V,
}

impl<V: Vector> Lanes<V> {
    #[inline(always)]
    pub(crate) fn new(map: &KeyMap, order: Order) -> Self {
        Lanes {
            mask: V::splat(order.mask()),
            sign_flip: V::splat(map.sign ^ order.mask()),
            sign: V::splat(map.sign),
            magnitude: V::splat(map.ones >> 1),
            infinity: V::splat(map.infinity),
            negative_flip: V::splat(map.ones ^ order.mask()),
        }
    }
}

/// `LANES` elements of `T` from `ptr` as the filter of form `FORM` compares them: f16 converted to f32
/// (`HALF`), bf16 widened to f32 (`BF16`), any other type zero-extended to a lane.
///
/// # Safety
/// `LANES` elements of `T` from `ptr` are readable, and `T` is one of the crate's element types of the
/// lane's width or less; with `HALF`, `T` is f16 and `V` [converts](Vector::CONVERTS_HALF) it; with
/// `BF16`, `T` is bf16 and `V` [widens](Vector::WIDENS_BF16) it.
#[inline(always)]
pub(crate) unsafe fn load_as<V: Vector, T, const FORM: u8>(ptr: *const T) -> V {
    if FORM == HALF {
        // SAFETY: the caller's precondition: LANES f16 from `ptr`, and V converts them.
        unsafe { V::load_half(ptr.cast()) }
    } else if FORM == BF16 {
        // SAFETY: the caller's precondition: LANES bf16 from `ptr`, and V widens them.
        unsafe { V::load_bf16(ptr.cast()) }
    } else {
        // SAFETY: the caller's precondition.
        unsafe { V::load(ptr) }
    }
}

/// The flipped keys of raw lanes: [`crate::types::element`]'s transform, lane-wise.
#[inline(always)]
pub(crate) fn keys<V: Vector, const FORM: u8>(raw: V, c: &Lanes<V>) -> V {
    match FORM {
        UNSIGNED => raw.xor(c.mask),
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

    /// f32 bits of interest: both zeros, the smallest subnormals and normal, ±1, the largest finite
    /// values, both infinities, NaNs of either sign.
    const F32_VALUES: [u32; 14] = [
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

    /// The float test of every limit near an interesting key passes exactly the keys below the limit:
    /// the lanes' test is then exact for f32, not only a superset.
    #[test]
    fn float_limits_are_exact_for_f32() {
        let map = KeyMap::of::<f32>();
        let values = F32_VALUES;
        let keys = values.map(|v| u64::from(f32::from_bits(v).key()));
        let mut limits: Vec<u64> = keys.iter().flat_map(|&k| [k.saturating_sub(1), k, k + 1]).collect();
        limits.extend([0x7FFF_FFFF, 0x7FFF_FFFE, 0xFFFF_FFFE, 0xFFFF_FFFF, 0xFF80_0001, 1]);
        for mask in [0, 0xFFFF_FFFF] {
            let flip = Order::from_mask(mask);
            for &limit in limits.iter().filter(|&&l| (1..=0xFFFF_FFFF).contains(&l)) {
                let (v, test) = float_limit(limit, flip, &map);
                let v = f32::from_bits(v as u32);
                for &x in &values {
                    let want = (u64::from(f32::from_bits(x).key()) ^ mask) < limit;
                    let x = f32::from_bits(x);
                    let got = match test {
                        FloatTest::Less => x < v,
                        FloatTest::LessOrEqual => x <= v,
                        FloatTest::NotLessOrEqual => x.partial_cmp(&v).is_none_or(|o| o.is_gt()),
                    };
                    assert_eq!(got, want, "x {:#x} limit {limit:#x} flip {mask:#x}", x.to_bits());
                }
            }
        }
    }

    /// The widened tests of the 16-bit floats (f16 converted, `HALF` on F16C; bf16 shifted up, `BF16`):
    /// every bit pattern, against every limit near the key of a special value, passes exactly when its
    /// key is below the limit, as for f32.
    #[test]
    fn widened_limits_are_exact_for_16_bit_floats() {
        fn check(map: &KeyMap, key: impl Fn(u16) -> u64, widen: impl Fn(u16) -> f32) {
            let infinity = map.infinity as u16;
            let specials = [
                0,
                0x8000,
                1,
                0x8001,
                0x3C00,
                0xBF80,
                infinity - 1,
                infinity,
                infinity | 0x8000,
            ];
            let nans = [infinity + 1, 0x7FFF, 0xFFFF];
            let mut limits: Vec<u64> = specials
                .iter()
                .chain(&nans)
                .flat_map(|&x| [key(x).saturating_sub(1), key(x), key(x) + 1])
                .collect();
            limits.extend([1, 0x7FFE, 0x7FFF, 0xFFFE, 0xFFFF]);
            limits.retain(|&l| (1..=0xFFFF).contains(&l));
            // Every pattern, but under miri (millions of compares: hours in the interpreter).
            let xs: Vec<u16> = if cfg!(miri) {
                specials
                    .iter()
                    .chain(&nans)
                    .copied()
                    .chain((0..=u16::MAX).step_by(4099))
                    .collect()
            } else {
                (0..=u16::MAX).collect()
            };
            for mask in [0, 0xFFFF] {
                let flip = Order::from_mask(mask);
                for &limit in &limits {
                    let (v, test) = float_limit(limit, flip, map);
                    let v = widen(v as u16);
                    for &x in &xs {
                        let want = (key(x) ^ mask) < limit;
                        let wide = widen(x);
                        let got = match test {
                            FloatTest::Less => wide < v,
                            FloatTest::LessOrEqual => wide <= v,
                            FloatTest::NotLessOrEqual => wide.partial_cmp(&v).is_none_or(|o| o.is_gt()),
                        };
                        assert_eq!(got, want, "x {x:#x} limit {limit:#x} flip {mask:#x}");
                    }
                }
            }
        }
        check(
            &KeyMap::of::<half::f16>(),
            |x| u64::from(half::f16::from_bits(x).key()),
            |x| half::f16::from_bits(x).to_f32(),
        );
        check(
            &KeyMap::of::<half::bf16>(),
            |x| u64::from(half::bf16::from_bits(x).key()),
            |x| f32::from_bits(u32::from(x) << 16),
        );
    }

    /// The lane-wise limits of the column filter: `float_limit`'s values, each lane its own, and the one
    /// test of each direction passes every element whose key is below the lane's limit and, besides
    /// those, only elements equal to the value (f32 and f64, in the portable lanes).
    #[test]
    fn lane_limits_pass_the_keys_below() {
        use crate::simd::portable::{U32x8, U64x4};
        fn check<V: Vector>(
            values: &[u64],
            map: &KeyMap,
            key: impl Fn(u64) -> u64,
            less: impl Fn(u64, u64) -> Option<core::cmp::Ordering>,
        ) {
            let mut limits: Vec<u64> = values
                .iter()
                .flat_map(|&x| [key(x).saturating_sub(1), key(x), key(x).saturating_add(1)])
                .collect();
            limits.extend([
                1,
                map.ones - 1,
                map.ones,
                map.sign - 1,
                map.sign - 2,
                map.sign | map.infinity,
            ]);
            limits.retain(|&l| (1..=map.ones).contains(&l));
            for mask in [0, map.ones] {
                let flip = Order::from_mask(mask);
                for &limit in &limits {
                    let lanes = float_limits(V::splat(limit), flip, map).lanes();
                    let (v, _) = float_limit(limit, flip, map);
                    assert!(
                        lanes.iter().take(V::LANES).all(|&lane| lane == v),
                        "limit {limit:#x} flip {mask:#x}"
                    );
                    for &x in values {
                        let want = (key(x) ^ mask) < limit;
                        let order = less(x, v);
                        let passes = if mask == 0 {
                            order.is_some_and(|o| o.is_le())
                        } else {
                            order.is_none_or(|o| o.is_gt())
                        };
                        let equal = order.is_some_and(|o| o.is_eq());
                        assert!(
                            passes == want || (passes && equal),
                            "x {x:#x} limit {limit:#x} flip {mask:#x} v {v:#x}"
                        );
                    }
                }
            }
        }
        let f32_values = F32_VALUES.map(u64::from);
        check::<U32x8>(
            &f32_values,
            &KeyMap::of::<f32>(),
            |x| u64::from(f32::from_bits(x as u32).key()),
            |x, v| f32::from_bits(x as u32).partial_cmp(&f32::from_bits(v as u32)),
        );
        let f64_values = f32_values.map(|x| f64::from(f32::from_bits(x as u32)).to_bits());
        check::<U64x4>(
            &f64_values,
            &KeyMap::of::<f64>(),
            |x| f64::from_bits(x).key(),
            |x, v| f64::from_bits(x).partial_cmp(&f64::from_bits(v)),
        );
    }

    /// The bit tests of every limit, in 16-bit lanes, pass every f16 (and every bf16) whose key is below
    /// it, and besides those only negative NaNs (which `x < v` may pass): checked over all 65536 values,
    /// for limits at and around every key of interest.
    #[test]
    #[cfg_attr(miri, ignore = "18 million tests of plain integer code")]
    fn half_limits_pass_exactly_the_keys_below() {
        check_half_limits(
            &KeyMap::of::<half::f16>(),
            |x| u64::from(half::f16::from_bits(x).key()),
            &[
                0u16, 0x8000, 1, 0x8001, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE01,
            ],
        );
        check_half_limits(
            &KeyMap::of::<half::bf16>(),
            |x| u64::from(half::bf16::from_bits(x).key()),
            &[
                0u16, 0x8000, 1, 0x8001, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1,
            ],
        );
    }

    /// [`half_limit`]'s tests against the keys of one 16-bit float type, at and around `values`' keys.
    fn check_half_limits(map: &KeyMap, key: impl Fn(u16) -> u64, values: &[u16]) {
        let mut limits: Vec<u64> = values.iter().flat_map(|&x| [key(x) - 1, key(x), key(x) + 1]).collect();
        limits.extend([1, 0xFFFE, 0xFFFF, 0x7FFF, 0x7FFE]);
        let negative_infinity = (map.infinity | map.sign) as u16;
        for mask in [0, 0xFFFF] {
            let flip = Order::from_mask(mask);
            for &limit in limits.iter().filter(|&&l| (1..=0xFFFF).contains(&l)) {
                let (v, test) = half_limit(float_limit(limit, flip, map));
                let v = v as u16;
                for x in 0..=u16::MAX {
                    let (signed, v_signed) = (x as i16, v as i16);
                    let negative_nan = x > negative_infinity;
                    let passes = match test {
                        HALF_BELOW_SIGNED => signed < v_signed,
                        HALF_ABOVE => x > v,
                        HALF_ABOVE_SIGNED_OR_NAN => signed > v_signed || negative_nan,
                        _ => x < v || negative_nan,
                    };
                    let want = (key(x) ^ mask) < limit;
                    assert!(
                        passes == want || (passes && negative_nan),
                        "x {x:#x} limit {limit:#x} flip {mask:#x}: test {test} v {v:#x}"
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod form_tests {
    use super::*;
    use crate::kernels::testing::{every_type, xorshift};
    use crate::types::element::{Key, Order, Sealed};

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
            for mask in [0, ones] {
                let flip = Order::from_mask(mask);
                let last = flip.key(from_bits::<T>(last_in_order_bits::<T>(flip, &KeyMap::of::<T>())));
                let beyond = raws.iter().find(|&&raw| flip.key(from_bits::<T>(raw)) > last);
                assert_eq!(beyond, None, "{} flip {mask:#x}", T::NAME);
            }
        }
        every_type!(check);
    }
}
