//! [`Vector`] on the `wide` crate: `u32x8` for eight 32-bit lanes, `u64x4` for four 64-bit ones (one
//! 256-bit register's worth). `wide` picks the instructions from the build's target features: two SSE2
//! registers on x86_64's baseline, two NEON registers on aarch64, plain arrays where there is no SIMD
//! (a Cortex-M). Float tests read the lanes as `f32x8`/`f64x4` through `bytemuck::cast` (a no-op).
//!
//! `wide` has no 64-bit lane compare on x86 below SSE4.1/4.2 (`pcmpeqq`, `pcmpgtq`): there it falls back
//! to a scalar loop, so [`eq64`] and [`gt64`] build them from 32-bit compares and 64-bit subtraction.
//! Where `wide` has no SIMD at all, the float tests and the lane exchange are loops (see [`WIDE_SIMD`]).
//!
//! No `unsafe` beyond the loads and stores, no `#[target_feature]`: this is the engine for every target,
//! for miri, and the baseline the SIMD engines are benchmarked against.

use wide::bytemuck::cast;
use wide::{f32x8, f64x4, i32x8, u16x8, u32x8, u64x4};

use crate::simd::vector::{MAX_LANES, Vector};

/// Whether `wide` has SIMD registers on this target. Where it has none (a Cortex-M), its vectors are
/// arrays and each operation is written out lane by lane; its float compares (through float lanes and
/// back, for each of the three tests the one generic filter holds) and its run-time shuffle (a bounds check
/// per lane) then take the firmware image over its flash budget. Those are loops over the lanes there,
/// which a size-optimised build keeps rolled.
const WIDE_SIMD: bool = cfg!(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon"),
    all(target_arch = "wasm32", target_feature = "simd128"),
));

/// Eight 32-bit lanes; masks are `u32x8` lanes of all ones or all zeros, as `wide`'s compares make them.
#[derive(Clone, Copy)]
pub(crate) struct U32x8(u32x8);

/// Four 64-bit lanes; masks are `u64x4` lanes of all ones or all zeros.
#[derive(Clone, Copy)]
pub(crate) struct U64x4(u64x4);

/// `a <= b`, one lane of [`Vector::float_le`] where `wide` has no SIMD (see [`WIDE_SIMD`]).
#[inline(always)]
fn le<F: PartialOrd>(a: F, b: F) -> bool {
    a <= b
}

/// `a < b`, one lane of [`Vector::float_lt`] likewise.
#[inline(always)]
fn lt<F: PartialOrd>(a: F, b: F) -> bool {
    a < b
}

/// Not `a <= b`, true for NaN: one lane of [`Vector::float_nle`] likewise.
#[inline(always)]
fn nle<F: PartialOrd>(a: F, b: F) -> bool {
    !le(a, b)
}

// Where `wide` has no SIMD (see `WIDE_SIMD`): the float tests and the exchange as loops over the lanes.
impl U32x8 {
    #[inline(always)]
    fn float_lanes(self, limit: Self, test: impl Fn(f32, f32) -> bool) -> u32x8 {
        let (a, b) = (self.0.to_array(), limit.0.to_array());
        u32x8::new(core::array::from_fn(|i| {
            if test(f32::from_bits(a[i]), f32::from_bits(b[i])) {
                u32::MAX
            } else {
                0
            }
        }))
    }
    #[inline(always)]
    fn exchange_lanes(self, m: usize) -> Self {
        let lanes = self.0.to_array();
        U32x8(u32x8::new(core::array::from_fn(|i| lanes[(i ^ m) & 7])))
    }
}

impl Vector for U32x8 {
    const LANES: usize = 8;
    type Mask = u32x8;
    const SPECIALIZE: bool = false;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        debug_assert_eq!(size_of::<T>(), 4);
        // SAFETY: the caller guarantees 8 writable elements of T, which is u32: 32 bytes, an [u32; 8].
        unsafe { ptr.cast::<[u32; 8]>().write_unaligned(self.0.to_array()) };
    }
    #[inline(always)]
    fn iota() -> Self {
        U32x8(u32x8::new([0, 1, 2, 3, 4, 5, 6, 7]))
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        if !WIDE_SIMD {
            return self.exchange_lanes(m);
        }
        // The indices are constants after inlining: the shuffle folds into fixed ones (`pshufd` on SSE2).
        U32x8(self.0.shuffle(Self::iota().0 ^ u32x8::splat(m as u32)))
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        U32x8(self.0.min(other.0))
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        U32x8(self.0.max(other.0))
    }

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        // The caller guarantees 8 readable elements of T at `ptr`, and T is a plain integer or float of
        // the size matched, so reading its bits as an array of that unsigned type is valid.
        U32x8(match size_of::<T>() {
            1 => {
                // SAFETY: see above.
                let bytes = unsafe { ptr.cast::<[u8; 8]>().read_unaligned() };
                u32x8::from(u16x8::new(bytes.map(u16::from)))
            }
            // SAFETY: see above.
            2 => u32x8::from(u16x8::new(unsafe { ptr.cast::<[u16; 8]>().read_unaligned() })),
            // SAFETY: see above.
            _ => u32x8::new(unsafe { ptr.cast::<[u32; 8]>().read_unaligned() }),
        })
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        U32x8(u32x8::splat(value as u32))
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        U32x8(self.0 & other.0)
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        U32x8(self.0 ^ other.0)
    }
    #[inline(always)]
    fn eq(self, other: Self) -> u32x8 {
        self.0.simd_eq(other.0)
    }
    #[inline(always)]
    fn gt(self, other: Self) -> u32x8 {
        self.0.simd_gt(other.0)
    }
    #[inline(always)]
    fn lt(self, other: Self) -> u32x8 {
        self.0.simd_lt(other.0)
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> u32x8 {
        if !WIDE_SIMD {
            return self.float_lanes(limit, le);
        }
        cast(cast::<u32x8, f32x8>(self.0).simd_le(cast::<u32x8, f32x8>(limit.0)))
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> u32x8 {
        if !WIDE_SIMD {
            return self.float_lanes(limit, lt);
        }
        cast(cast::<u32x8, f32x8>(self.0).simd_lt(cast::<u32x8, f32x8>(limit.0)))
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> u32x8 {
        // Unordered (a NaN) is "not less or equal" too, as the SIMD predicates NLE_UQ have it.
        if !WIDE_SIMD {
            return self.float_lanes(limit, nle);
        }
        !self.float_le(limit)
    }
    #[inline(always)]
    fn select(mask: u32x8, yes: Self, no: Self) -> Self {
        U32x8(mask.select(yes.0, no.0))
    }
    #[inline(always)]
    fn or_mask(a: u32x8, b: u32x8) -> u32x8 {
        a | b
    }
    #[inline(always)]
    fn any(mask: u32x8) -> bool {
        mask.any()
    }
    #[inline(always)]
    fn bits(mask: u32x8) -> u64 {
        u64::from(mask.to_bitmask())
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut out = [0; MAX_LANES];
        for (out, lane) in out.iter_mut().zip(self.0.to_array()) {
            *out = u64::from(lane);
        }
        out
    }
}

/// Whether `wide`'s 64-bit lane equality is a scalar loop: x86 without SSE4.1's `pcmpeqq`.
const SPLIT_EQ64: bool = cfg!(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    not(target_feature = "sse4.1")
));
/// Whether `wide`'s unsigned 64-bit lane compare is a scalar loop: x86 without SSE4.2's `pcmpgtq`.
const SPLIT_GT64: bool = cfg!(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    not(target_feature = "sse4.2")
));

/// 64-bit lanes where `a == b`: where the build has no 64-bit compare, both 32-bit halves equal.
#[inline(always)]
fn eq64(a: u64x4, b: u64x4) -> u64x4 {
    if !SPLIT_EQ64 {
        return a.simd_eq(b);
    }
    let halves = cast::<u32x8, u64x4>(cast::<u64x4, u32x8>(a).simd_eq(cast::<u64x4, u32x8>(b)));
    // Each half and its neighbour (the lane's halves swapped by two 64-bit shifts).
    halves & (halves.unbounded_shl_scalar(32) | halves.unbounded_shr_scalar(32))
}

/// 64-bit lanes where `a > b`, unsigned: where the build has no 64-bit compare, where `b - a` borrows
/// (`wide`'s 64-bit subtraction).
#[inline(always)]
fn gt64(a: u64x4, b: u64x4) -> u64x4 {
    if !SPLIT_GT64 {
        return a.simd_gt(b);
    }
    // The borrow out of `b - a` is the top bit of this (Hacker's Delight, 2-13).
    let borrow = (a & !b) | ((b - a) & !(a ^ b));
    // Spread over the lane: the high half by the arithmetic 32-bit shift, then copied to the low half.
    // Where only the top bits are read (`bits`, `any`), the compiler drops these steps.
    let high = cast::<i32x8, u64x4>(cast::<u64x4, i32x8>(borrow) >> 31_u32);
    let low = high.unbounded_shr_scalar(32);
    low | low.unbounded_shl_scalar(32)
}

// As for `U32x8`.
impl U64x4 {
    #[inline(always)]
    fn float_lanes(self, limit: Self, test: impl Fn(f64, f64) -> bool) -> u64x4 {
        let (a, b) = (self.0.to_array(), limit.0.to_array());
        u64x4::new(core::array::from_fn(|i| {
            if test(f64::from_bits(a[i]), f64::from_bits(b[i])) {
                u64::MAX
            } else {
                0
            }
        }))
    }
    #[inline(always)]
    fn exchange_lanes(self, m: usize) -> Self {
        let lanes = self.0.to_array();
        U64x4(u64x4::new(core::array::from_fn(|i| lanes[(i ^ m) & 3])))
    }
}

impl Vector for U64x4 {
    const LANES: usize = 4;
    type Mask = u64x4;
    const SPECIALIZE: bool = false;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        debug_assert_eq!(size_of::<T>(), 8);
        // SAFETY: the caller guarantees 4 writable elements of T, which is u64: 32 bytes, an [u64; 4].
        unsafe { ptr.cast::<[u64; 4]>().write_unaligned(self.0.to_array()) };
    }
    #[inline(always)]
    fn iota() -> Self {
        U64x4(u64x4::new([0, 1, 2, 3]))
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        if !WIDE_SIMD {
            return self.exchange_lanes(m);
        }
        // As for 32-bit lanes: constant indices after inlining, fixed shuffles.
        U64x4(self.0.shuffle(Self::iota().0 ^ u64x4::splat(m as u64)))
    }
    // min and max: the trait's, on `gt` (`wide`'s own are the scalar compare where `gt64` splits).

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        debug_assert_eq!(size_of::<T>(), 8);
        // SAFETY: the caller guarantees 4 readable elements of T, an 8-byte integer or float: reading
        // its bits as an [u64; 4] is valid.
        U64x4(u64x4::new(unsafe { ptr.cast::<[u64; 4]>().read_unaligned() }))
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        U64x4(u64x4::splat(value))
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        U64x4(self.0 & other.0)
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        U64x4(self.0 ^ other.0)
    }
    #[inline(always)]
    fn eq(self, other: Self) -> u64x4 {
        eq64(self.0, other.0)
    }
    #[inline(always)]
    fn gt(self, other: Self) -> u64x4 {
        gt64(self.0, other.0)
    }
    #[inline(always)]
    fn lt(self, other: Self) -> u64x4 {
        gt64(other.0, self.0)
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> u64x4 {
        if !WIDE_SIMD {
            return self.float_lanes(limit, le);
        }
        cast(cast::<u64x4, f64x4>(self.0).simd_le(cast::<u64x4, f64x4>(limit.0)))
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> u64x4 {
        if !WIDE_SIMD {
            return self.float_lanes(limit, lt);
        }
        cast(cast::<u64x4, f64x4>(self.0).simd_lt(cast::<u64x4, f64x4>(limit.0)))
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> u64x4 {
        // Unordered (a NaN) is "not less or equal" too, as the SIMD predicates NLE_UQ have it.
        if !WIDE_SIMD {
            return self.float_lanes(limit, nle);
        }
        !self.float_le(limit)
    }
    #[inline(always)]
    fn select(mask: u64x4, yes: Self, no: Self) -> Self {
        U64x4(mask.select(yes.0, no.0))
    }
    #[inline(always)]
    fn or_mask(a: u64x4, b: u64x4) -> u64x4 {
        a | b
    }
    #[inline(always)]
    fn any(mask: u64x4) -> bool {
        mask.any()
    }
    #[inline(always)]
    fn bits(mask: u64x4) -> u64 {
        u64::from(mask.to_bitmask())
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut out = [0; MAX_LANES];
        for (out, lane) in out.iter_mut().zip(self.0.to_array()) {
            *out = lane;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use core::cmp::Ordering;

    use super::*;

    /// 32-bit lanes where sign bits and float classes change: zeros, ±1, ±infinity, NaNs, subnormals.
    const EDGES32: [u32; 16] = [
        0,
        1,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x7f80_0000,
        0x7fc0_0001,
        0xff80_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x8000_0001,
        0x0001_0000,
        0xffff_0000,
        0x0000_ffff,
        0x7f7f_ffff,
        0x3f80_0001,
    ];

    /// 64-bit lanes likewise, and lanes whose halves compare the other way from the lanes (the split
    /// compares).
    const EDGES64: [u64; 16] = [
        0,
        1,
        0x0000_0000_ffff_ffff,
        0x0000_0001_0000_0000,
        0x0000_0001_ffff_ffff,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        0x8000_0000_ffff_ffff,
        0xffff_ffff_0000_0000,
        u64::MAX,
        0x7ff0_0000_0000_0000,
        0x7ff8_0000_0000_0001,
        0xfff0_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0xbff0_0000_0000_0000,
        0x3ff0_0000_8000_0000,
    ];

    /// What a test should find in two lanes.
    type Rule<'a> = dyn Fn(u64, u64) -> bool + 'a;

    /// Checks every operation of `V` on every pair of `edges` (in every lane) against the scalar
    /// definitions in `crate::simd::vector`; `float` orders two lanes as floats of the lane's width.
    fn check<V: Vector>(edges: &[u64; 16], float: fn(u64, u64) -> Option<Ordering>) {
        let n = edges.len();
        let lanes = V::LANES;
        let width_ones = if lanes == 8 { u64::from(u32::MAX) } else { u64::MAX };
        let vector = |first: usize| {
            let mut values = [0u64; 8];
            for (i, value) in values.iter_mut().enumerate().take(lanes) {
                *value = edges[(first + i) % n];
            }
            // SAFETY: `values` holds 8 u64s, the most either vector reads (4 of them, or 8 of 4 bytes).
            let v = unsafe {
                if lanes == 8 {
                    let narrow = values.map(|x| x as u32);
                    V::load(narrow.as_ptr())
                } else {
                    V::load(values.as_ptr())
                }
            };
            (v, values)
        };
        let bits_of = |values: &[u64; 8], other: &[u64; 8], f: &Rule<'_>| {
            (0..lanes).fold(0u64, |bits, i| bits | u64::from(f(values[i], other[i])) << i)
        };
        // A mask's lanes as `select` sees them: all ones or all zeros.
        let full = |mask: V::Mask| V::select(mask, V::splat(u64::MAX), V::splat(0)).lanes();
        for a in 0..n {
            // Miri: each window against itself and against the one 7 edges on, 32 of the 256 pairs (all
            // of them are slow there). Every operation and every edge in every lane still
            // runs: the operations do not branch on the values, which the native run checks on every pair.
            let partners = (0..n).filter(|&b| !cfg!(miri) || b == a || b == (a + 7) % n);
            for b in partners {
                let ((x, xs), (y, ys)) = (vector(a), vector(b));
                assert_eq!(&x.lanes()[..lanes], &xs[..lanes]);
                let tests: [(V::Mask, &Rule<'_>); 6] = [
                    (x.eq(y), &|p, q| p == q),
                    (x.gt(y), &|p, q| p > q),
                    (x.lt(y), &|p, q| p < q),
                    (x.float_le(y), &|p, q| {
                        matches!(float(p, q), Some(Ordering::Less | Ordering::Equal))
                    }),
                    (x.float_lt(y), &|p, q| float(p, q) == Some(Ordering::Less)),
                    (x.float_nle(y), &|p, q| {
                        !matches!(float(p, q), Some(Ordering::Less | Ordering::Equal))
                    }),
                ];
                for (t, (mask, f)) in tests.into_iter().enumerate() {
                    let bits = bits_of(&xs, &ys, f);
                    assert_eq!(V::bits(mask), bits, "test {t} on {xs:x?} and {ys:x?}");
                    assert_eq!(V::any(mask), bits != 0);
                    let expanded = full(mask);
                    for (i, &lane) in expanded[..lanes].iter().enumerate() {
                        assert_eq!(lane, if bits >> i & 1 == 1 { width_ones } else { 0 });
                    }
                    let other = x.gt(y);
                    assert_eq!(V::bits(V::or_mask(mask, other)), bits | V::bits(other));
                    let chosen = V::select(mask, x, y).lanes();
                    for i in 0..lanes {
                        assert_eq!(chosen[i], if bits >> i & 1 == 1 { xs[i] } else { ys[i] });
                    }
                }
                let (and, xor, min, max) = (x.and(y).lanes(), x.xor(y).lanes(), x.min(y).lanes(), x.max(y).lanes());
                let (add, width) = (x.add(y).lanes(), u64::MAX >> (64 - 8 * size_of::<V>() / lanes));
                for i in 0..lanes {
                    assert_eq!(add[i], xs[i].wrapping_add(ys[i]) & width);
                    assert_eq!(and[i], xs[i] & ys[i]);
                    assert_eq!(xor[i], xs[i] ^ ys[i]);
                    assert_eq!(min[i], xs[i].min(ys[i]));
                    assert_eq!(max[i], xs[i].max(ys[i]));
                }
            }
            let (x, xs) = vector(a);
            for m in 0..lanes {
                let exchanged = x.exchange(m).lanes();
                for i in 0..lanes {
                    assert_eq!(exchanged[i], xs[i ^ m]);
                }
            }
            assert_eq!(V::splat(xs[0]).lanes()[..lanes], [xs[0]; 8][..lanes]);
        }
        let iota = V::iota().lanes();
        assert!((0..lanes).all(|i| iota[i] == i as u64) && iota[lanes..].iter().all(|&x| x == 0));
    }

    #[test]
    fn u32x8_follows_the_scalar_definitions() {
        check::<U32x8>(&EDGES32.map(u64::from), |a, b| {
            f32::from_bits(a as u32).partial_cmp(&f32::from_bits(b as u32))
        });
    }

    #[test]
    fn u64x4_follows_the_scalar_definitions() {
        check::<U64x4>(&EDGES64, |a, b| f64::from_bits(a).partial_cmp(&f64::from_bits(b)));
    }

    /// The loops of the targets without SIMD agree with `wide`'s operations (this target's).
    #[test]
    fn lane_loops_agree_with_wide() {
        for (a, b) in (0..16).zip((0..16).rev()) {
            let x = U32x8(u32x8::new(core::array::from_fn(|i| EDGES32[(i * 5 + a) % 16])));
            let y = U32x8(u32x8::new(core::array::from_fn(|i| EDGES32[(i * 3 + b) % 16])));
            assert_eq!(x.float_lanes(y, le).to_array(), x.float_le(y).to_array());
            assert_eq!(x.float_lanes(y, lt).to_array(), x.float_lt(y).to_array());
            assert_eq!(x.float_lanes(y, nle).to_array(), x.float_nle(y).to_array());
            for m in 0..8 {
                assert_eq!(x.exchange_lanes(m).0.to_array(), x.exchange(m).0.to_array());
            }
            let x = U64x4(u64x4::new(core::array::from_fn(|i| EDGES64[(i * 5 + a) % 16])));
            let y = U64x4(u64x4::new(core::array::from_fn(|i| EDGES64[(i * 3 + b) % 16])));
            assert_eq!(x.float_lanes(y, le).to_array(), x.float_le(y).to_array());
            assert_eq!(x.float_lanes(y, lt).to_array(), x.float_lt(y).to_array());
            assert_eq!(x.float_lanes(y, nle).to_array(), x.float_nle(y).to_array());
            for m in 0..4 {
                assert_eq!(x.exchange_lanes(m).0.to_array(), x.exchange(m).0.to_array());
            }
        }
    }

    #[test]
    fn loads_zero_extend_and_stores_round_trip() {
        let bytes: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x80);
        // Element `i` of `width` bytes, read in the machine's byte order and zero-extended.
        let element = |width: usize, i: usize| {
            let mut b = [0u8; 8];
            let chunk = &bytes[i * width..(i + 1) * width];
            if cfg!(target_endian = "little") {
                b[..width].copy_from_slice(chunk);
            } else {
                b[8 - width..].copy_from_slice(chunk);
            }
            u64::from_ne_bytes(b)
        };
        let ptr = bytes.as_ptr();
        // SAFETY: `bytes` holds 32 bytes: 8 elements of 1, 2 or 4 bytes, or 4 of 8 (reads are unaligned).
        let (v8, v16, v32, v64) = unsafe {
            (
                U32x8::load(ptr),
                U32x8::load(ptr.cast::<u16>()),
                U32x8::load(ptr.cast::<f32>()),
                U64x4::load(ptr.cast::<i64>()),
            )
        };
        for (v, width) in [(v8, 1), (v16, 2), (v32, 4)] {
            assert_eq!(v.lanes()[..8], core::array::from_fn::<u64, 8, _>(|i| element(width, i)));
        }
        assert_eq!(v64.lanes()[..4], core::array::from_fn::<u64, 4, _>(|i| element(8, i)));
        let mut narrow = [0u32; 8];
        let mut wide = [0u64; 4];
        // SAFETY: 8 u32s and 4 u64s, the lanes' own widths.
        unsafe {
            v32.store(narrow.as_mut_ptr());
            v64.store(wide.as_mut_ptr());
        }
        assert_eq!(narrow.map(u64::from), v32.lanes()[..8]);
        assert_eq!(wide, v64.lanes()[..4]);
    }
}
