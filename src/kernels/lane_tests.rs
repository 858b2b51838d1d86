//! The check of an instruction set's 8- and 16-bit lanes, which `dispatch`'s tests run on each engine
//! that has them.

extern crate std;
use std::format;

use crate::kernels::bound::kth_by_bisection;
use crate::kernels::lanes::{KeyMap, SIGNED, UNSIGNED, from_bits};
use crate::kernels::testing::xorshift;
use crate::simd::vector::{MAX_LANES, Vector};
use crate::types::element::{Element, Order};

/// `V`'s 16- and 8-bit lane tests agree with their lanes, one pair of lanes at a time, at the edges of
/// both orders (f16's infinities and NaNs among them): the bits, the `any` tests and the folds, which
/// the narrow scans rely on. Every other lane holds a pair that passes no test. `dispatch`'s tests call it with the engine's features, where `V` has the narrow lanes. Then the
/// bisection over them ([`check_bisection`]).
#[inline(always)]
// The SIMD engines' alone: dead (with what only it calls) where none is compiled.
#[cfg_attr(not(simd), allow(dead_code))]
pub(crate) fn check_narrow_lanes<V: Vector>() {
    let lanes = 2 * V::LANES;
    let edges = [
        0u16, 1, 0x7BFF, 0x7C00, 0x7C01, 0x7FFF, 0x8000, 0x8001, 0xFC00, 0xFC01, 0xFFFE, 0xFFFF,
    ];
    for (a, b) in edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b))) {
        for lane in [0, 5, lanes - 1] {
            let (mut x, mut y) = ([0u16; 2 * MAX_LANES], [0u16; 2 * MAX_LANES]);
            x[lane] = a;
            y[lane] = b;
            // SAFETY: 2 · MAX_LANES u16s each, at least the 2 · LANES loaded.
            let (vx, vy) = unsafe { (V::load16(x.as_ptr()), V::load16(y.as_ptr())) };
            let bit = |pass: bool| u64::from(pass) << lane;
            let (sa, sb) = (a as i16, b as i16);
            let case = format!("{a:#x} and {b:#x} in lane {lane}");
            assert_eq!(vx.gt16_signed(vy), bit(sa > sb), "{case}");
            assert_eq!(vx.lt16_signed(vy), bit(sa < sb), "{case}");
            assert_eq!(vx.gt16(vy), bit(a > b), "{case}");
            assert_eq!(vx.lt16(vy), bit(a < b), "{case}");
            // f16's negative-NaN bound (-inf) in every lane: the other lanes' zeros are not above it.
            let nan = V::splat(0xFC00_FC00_FC00_FC00);
            assert_eq!(vx.gt16_signed_or_gt16(vy, nan), bit(sa > sb || a > 0xFC00), "{case}");
            assert_eq!(vx.lt16_or_gt16(vy, nan), bit(a < b || a > 0xFC00), "{case}");
            assert_eq!(vx.any_gt16_signed(vy), sa > sb, "{case}");
            assert_eq!(vx.any_gt16(vy), a > b, "{case}");
            assert_eq!(lane_of::<V, u16>(vx.max16(vy), lane), a.max(b), "{case}");
            assert_eq!(lane_of::<V, u16>(vx.min16(vy), lane), a.min(b), "{case}");
            assert_eq!(
                lane_of::<V, u16>(vx.max16_signed(vy), lane) as i16,
                sa.max(sb),
                "{case}"
            );
            assert_eq!(
                lane_of::<V, u16>(vx.min16_signed(vy), lane) as i16,
                sa.min(sb),
                "{case}"
            );
        }
    }
    let lanes = 4 * V::LANES;
    let edges = [0u8, 1, 2, 0x7E, 0x7F, 0x80, 0x81, 0xFE, 0xFF];
    for (a, b) in edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b))) {
        for lane in [0, 7, 8, lanes - 1] {
            let (mut x, mut y) = ([0u8; 4 * MAX_LANES], [0u8; 4 * MAX_LANES]);
            x[lane] = a;
            y[lane] = b;
            // SAFETY: 4 · MAX_LANES bytes each, at least the 4 · LANES loaded.
            let (vx, vy) = unsafe { (V::load8(x.as_ptr()), V::load8(y.as_ptr())) };
            let bit = |pass: bool| u64::from(pass) << lane;
            let (sa, sb) = (a as i8, b as i8);
            let case = format!("{a:#x} and {b:#x} in lane {lane}");
            assert_eq!(vx.gt8_signed(vy), bit(sa > sb), "{case}");
            assert_eq!(vx.lt8_signed(vy), bit(sa < sb), "{case}");
            assert_eq!(vx.gt8(vy), bit(a > b), "{case}");
            assert_eq!(vx.lt8(vy), bit(a < b), "{case}");
            assert_eq!(vx.any_gt8_signed(vy), sa > sb, "{case}");
            assert_eq!(vx.any_gt8(vy), a > b, "{case}");
            assert_eq!(lane_of::<V, u8>(vx.max8(vy), lane), a.max(b), "{case}");
            assert_eq!(lane_of::<V, u8>(vx.min8(vy), lane), a.min(b), "{case}");
            assert_eq!(lane_of::<V, u8>(vx.max8_signed(vy), lane) as i8, sa.max(sb), "{case}");
            assert_eq!(lane_of::<V, u8>(vx.min8_signed(vy), lane) as i8, sa.min(sb), "{case}");
        }
    }
    check_bisection::<V, u8, UNSIGNED>();
    check_bisection::<V, i8, SIGNED>();
    check_bisection::<V, u16, UNSIGNED>();
    check_bisection::<V, i16, SIGNED>();
}

/// [`kth_by_bisection`] on `V`'s lanes of T's width is exactly the K-th smallest key, both directions,
/// on random rows and rows of few values (ties across the K-th), around the block lengths: a loose
/// answer would still select correctly (more collected, then sorted), so only this sees it.
#[inline(always)]
fn check_bisection<V: Vector, T: Element, const FORM: u8>() {
    let map = KeyMap::of::<T>();
    let mut random = xorshift(0xb15e_c7ed ^ size_of::<T>() as u64);
    for n in [64, 65, 100, 256, 300, 511] {
        for values in [u64::MAX, 5] {
            let row: Vec<T> = (0..n)
                .map(|_| from_bits::<T>(random() % values.min(map.ones + 1)))
                .collect();
            for mask in [0, map.ones] {
                let flip = Order::from_mask(mask);
                let mut keys: Vec<u64> = row.iter().map(|&x| flip.key(x)).collect();
                keys.sort_unstable();
                for k in [1, 2, n / 3, n / 2, n - 1, n] {
                    let got = kth_by_bisection::<V, T, FORM>(&row, k, flip, &map);
                    assert_eq!(got, keys[k - 1], "{} n {n} k {k} flip {mask:#x}", T::NAME);
                }
            }
        }
    }
}

/// Narrow lane `lane` of `v`, as a `T` (u16 or u8).
#[inline(always)]
fn lane_of<V: Vector, T: Copy + Default>(v: V, lane: usize) -> T {
    let mut out = [T::default(); 4 * MAX_LANES];
    // SAFETY: the register's LANES u32 (size_of::<V>() <= 64 bytes) fit in `out`, 4 · MAX_LANES = 64
    // elements of at least a byte.
    unsafe { v.store::<u32>(out.as_mut_ptr().cast()) };
    out[lane]
}
