//! [`Vector`] as plain arrays: eight 32-bit or four 64-bit lanes (one 256-bit register's worth, two SSE
//! or NEON registers), written as loops the compiler turns into SIMD where the target has it.
//!
//! No `unsafe` beyond the loads, no `#[target_feature]`: this is the engine for every target, for miri,
//! and the baseline the SIMD engines are benchmarked against.

use crate::arch::generic;
use crate::candidates::CoreSort;
use crate::element::Element;
use crate::entry::{Emit, Entry};
use crate::topk::{Sequence, Side};
use crate::vector::{MAX_LANES, Vector};

/// Selects through the generic filter on portable lanes. Same contract as `arch::scalar::select`.
pub(crate) fn select<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    flip: u64,
    buffer: &mut [E],
    emit: &mut Emit<'_>,
) {
    // Candidates ordered by `core`'s sort: the network lost to it on these lanes (see `network::Network`).
    generic::select::<Lanes<u32, 8>, Lanes<u64, 4>, CoreSort, T, E>(seq, k, flip, buffer, emit);
}

/// Neighbouring sequences side by side on portable lanes. Same contract as `arch::Engine::select_side`.
pub(crate) fn select_side<T: Element, E: Entry>(
    side: &Side<'_, T>,
    k: usize,
    flip: u64,
    emit: &mut dyn FnMut(usize, usize, usize),
) -> usize {
    generic::select_side::<Lanes<u32, 8>, Lanes<u64, 4>, T, E>(side, k, flip, emit)
}

/// `N` lanes of `L`; masks are lanes of all ones or all zeros, as SIMD compares make them.
#[derive(Clone, Copy)]
pub(crate) struct Lanes<L, const N: usize>([L; N]);

/// The lane operations the portable vectors need from `u32` and `u64`.
pub(crate) trait Lane: Copy + Ord + core::ops::BitAnd<Output = Self> + core::ops::BitXor<Output = Self> {
    const ZERO: Self;
    const ONES: Self;
    /// The bits read as a float of the lane's width, widened to f64 (exact for f32).
    fn float(self) -> f64;
    fn truncate(value: u64) -> Self;
    fn widen(self) -> u64;
}

impl Lane for u32 {
    const ZERO: u32 = 0;
    const ONES: u32 = u32::MAX;
    #[inline(always)]
    fn float(self) -> f64 {
        f64::from(f32::from_bits(self))
    }
    #[inline(always)]
    fn truncate(value: u64) -> u32 {
        value as u32
    }
    #[inline(always)]
    fn widen(self) -> u64 {
        u64::from(self)
    }
}

impl Lane for u64 {
    const ZERO: u64 = 0;
    const ONES: u64 = u64::MAX;
    #[inline(always)]
    fn float(self) -> f64 {
        f64::from_bits(self)
    }
    #[inline(always)]
    fn truncate(value: u64) -> u64 {
        value
    }
    #[inline(always)]
    fn widen(self) -> u64 {
        self
    }
}

impl<L: Lane, const N: usize> Lanes<L, N> {
    #[inline(always)]
    fn zip(self, other: Self, f: impl Fn(L, L) -> L) -> Self {
        let mut out = self.0;
        for (o, &b) in out.iter_mut().zip(&other.0) {
            *o = f(*o, b);
        }
        Lanes(out)
    }

    #[inline(always)]
    fn compare(self, other: Self, f: impl Fn(L, L) -> bool) -> Self {
        self.zip(other, |a, b| if f(a, b) { L::ONES } else { L::ZERO })
    }
}

impl<L: Lane, const N: usize> Vector for Lanes<L, N> {
    const LANES: usize = N;
    type Mask = Self;
    const SPECIALIZE: bool = false;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        debug_assert_eq!(size_of::<T>(), size_of::<L>());
        for (i, lane) in self.0.into_iter().enumerate() {
            // SAFETY: the caller guarantees N writable elements of T, the lane type L itself.
            unsafe { ptr.cast::<L>().add(i).write_unaligned(lane) };
        }
    }
    #[inline(always)]
    fn iota() -> Self {
        Lanes(core::array::from_fn(|i| L::truncate(i as u64)))
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        // N is a power of two and m < N, so the mask changes nothing; it keeps the index provably in range.
        Lanes(core::array::from_fn(|i| self.0[(i ^ m) & (N - 1)]))
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        self.zip(other, Ord::min)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        self.zip(other, Ord::max)
    }

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        let mut out = [L::ZERO; N];
        for (i, lane) in out.iter_mut().enumerate() {
            // The caller guarantees N readable elements of T at `ptr`, and T is a plain integer or float of
            // the size matched, so reading its bits as that unsigned type is valid.
            *lane = L::truncate(match size_of::<T>() {
                // SAFETY: see above.
                1 => u64::from(unsafe { ptr.cast::<u8>().add(i).read_unaligned() }),
                // SAFETY: see above.
                2 => u64::from(unsafe { ptr.cast::<u16>().add(i).read_unaligned() }),
                // SAFETY: see above.
                4 => u64::from(unsafe { ptr.cast::<u32>().add(i).read_unaligned() }),
                // SAFETY: see above.
                _ => unsafe { ptr.cast::<u64>().add(i).read_unaligned() },
            });
        }
        Lanes(out)
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        Lanes([L::truncate(value); N])
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        self.zip(other, |a, b| a & b)
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self.zip(other, |a, b| a ^ b)
    }
    #[inline(always)]
    fn eq(self, other: Self) -> Self {
        self.compare(other, |a, b| a == b)
    }
    #[inline(always)]
    fn gt(self, other: Self) -> Self {
        self.compare(other, |a, b| a > b)
    }
    #[inline(always)]
    fn lt(self, other: Self) -> Self {
        self.compare(other, |a, b| a < b)
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> Self {
        self.compare(limit, |a, b| a.float() <= b.float())
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> Self {
        self.compare(limit, |a, b| a.float() < b.float())
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> Self {
        // Unordered (a NaN) is "not less or equal" too, as the SIMD predicates NLE_UQ have it.
        self.compare(limit, |a, b| {
            a.float()
                .partial_cmp(&b.float())
                .is_none_or(|order| order == core::cmp::Ordering::Greater)
        })
    }
    #[inline(always)]
    fn select(mask: Self, yes: Self, no: Self) -> Self {
        // Bitwise, as SIMD blends are: masks are all ones or all zeros per lane.
        mask.and(yes).xor(mask.zip(no, |m, n| (m ^ L::ONES) & n))
    }
    #[inline(always)]
    fn or_mask(a: Self, b: Self) -> Self {
        // Lanes are all ones or zero, so the larger is the union.
        a.zip(b, |x, y| x.max(y))
    }
    #[inline(always)]
    fn any(mask: Self) -> bool {
        mask.0.iter().any(|&lane| lane != L::ZERO)
    }
    #[inline(always)]
    fn bits(mask: Self) -> u64 {
        mask.0
            .iter()
            .enumerate()
            .fold(0, |bits, (i, &lane)| bits | (lane.widen() & 1) << i)
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut out = [0; MAX_LANES];
        for (out, lane) in out.iter_mut().zip(self.0) {
            *out = lane.widen();
        }
        out
    }
}
