//! Helpers shared by the integration tests: a seeded generator, values biased to the hard cases (NaN
//! payloads of both signs, infinities, signed zeros, subnormals, integer extremes, heavy ties), strided
//! layouts (permuted, stepped, broadcast, reversed, offset), output buffers with sentinel guard regions,
//! and a plain sort-based oracle that checks the reference itself.
#![allow(dead_code, unreachable_pub)] // every test crate uses a different subset; `pub` is for them

use std::fmt::Debug;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use topk_kernels::{Direction, Element, Index, Key, View, bf16, f16};

/// SplitMix64: seedable and small; a failing case is replayed from its seed alone.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias does not matter here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// A value type as the tests see it: its raw bits, and for floats the field widths.
pub trait Value: Element + Debug {
    /// Width in bits.
    const WIDTH: u32;
    /// `(exponent bits, mantissa bits)` of a float, `None` for integers.
    const FLOAT: Option<(u32, u32)>;
    /// Whether an integer type is signed.
    const SIGNED: bool;
    fn from_bits(bits: u64) -> Self;
    fn to_bits(self) -> u64;
}

macro_rules! int_values {
    ($($t:ty => $u:ty, $signed:expr;)*) => {$(
        impl Value for $t {
            const WIDTH: u32 = <$t>::BITS;
            const FLOAT: Option<(u32, u32)> = None;
            const SIGNED: bool = $signed;
            fn from_bits(bits: u64) -> Self {
                bits as $u as $t
            }
            fn to_bits(self) -> u64 {
                self as $u as u64
            }
        }
    )*};
}
int_values! {
    u8 => u8, false; u16 => u16, false; u32 => u32, false; u64 => u64, false;
    i8 => u8, true; i16 => u16, true; i32 => u32, true; i64 => u64, true;
}

macro_rules! float_values {
    ($($t:ty => $u:ty, $exponent:expr, $mantissa:expr;)*) => {$(
        impl Value for $t {
            const WIDTH: u32 = <$u>::BITS;
            const FLOAT: Option<(u32, u32)> = Some(($exponent, $mantissa));
            const SIGNED: bool = true;
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as $u)
            }
            fn to_bits(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
        }
    )*};
}
float_values! {
    f16 => u16, 5, 10;
    bf16 => u16, 8, 7;
    f32 => u32, 8, 23;
    f64 => u64, 11, 52;
}

/// All ones in the low `width` bits.
pub fn mask(width: u32) -> u64 {
    u64::MAX >> (64 - width)
}

/// One bit pattern drawn toward the cases that break selection kernels.
pub fn special_bits<T: Value>(rng: &mut Rng) -> u64 {
    let width = T::WIDTH;
    let all = mask(width);
    let sign = 1u64 << (width - 1);
    match T::FLOAT {
        Some((exponent, mantissa)) => {
            let infinity = mask(exponent) << mantissa;
            let mantissa_mask = mask(mantissa);
            let quiet = 1u64 << (mantissa - 1);
            let payload = rng.next() & mantissa_mask;
            let sign = if rng.chance(1, 2) { sign } else { 0 };
            sign | match rng.below(13) {
                0 => 0,                                         // ±0
                1 => infinity,                                  // ±inf
                2 => infinity | quiet,                          // the canonical NaN
                3 => infinity | quiet | payload,                // quiet NaN with a payload
                4 => infinity | (payload & (quiet - 1)).max(1), // signalling NaN
                5 => payload.max(1),                            // a subnormal
                6 => 1,                                         // the smallest subnormal
                7 => mantissa_mask,                             // the largest subnormal
                8 => 1 << mantissa,                             // the smallest normal
                9 => infinity - 1,                              // the largest finite
                10 => mask(exponent - 1) << mantissa,           // 1.0
                11 => infinity | mantissa_mask,                 // the all-ones NaN
                _ => rng.next() & (all >> 1),
            }
        }
        None => match rng.below(9) {
            0 => 0,
            1 => 1,
            2 => all, // MAX unsigned, -1 signed
            3 => all - 1,
            4 => sign, // MIN signed
            5 => sign + 1,
            6 => sign - 1, // MAX signed
            7 => 2,
            _ => rng.next() & all,
        },
    }
}

/// `len` values: uniform bits, specials, or draws from a small pool (frequent ties), sometimes sorted.
pub fn random_values<T: Value>(rng: &mut Rng, len: usize) -> Vec<T> {
    let all = mask(T::WIDTH);
    let mut values: Vec<T> = match rng.below(6) {
        0 => (0..len).map(|_| T::from_bits(rng.next() & all)).collect(),
        1 => (0..len).map(|_| T::from_bits(special_bits::<T>(rng))).collect(),
        _ => {
            let pool_len = rng.pick(&[1, 2, 3, 4, 8, 16, 64]);
            let pool: Vec<u64> = (0..pool_len)
                .map(|_| {
                    if rng.chance(3, 4) {
                        special_bits::<T>(rng)
                    } else {
                        rng.next() & all
                    }
                })
                .collect();
            (0..len).map(|_| T::from_bits(rng.pick(&pool))).collect()
        }
    };
    // Sorted data is the filter's worst case in one direction and its best in the other.
    match rng.below(8) {
        0 => values.sort_by_key(|v| v.key()),
        1 => values.sort_by_key(|v| std::cmp::Reverse(v.key())),
        _ => {}
    }
    values
}

/// A bit pattern that no element of `data` has, so that "written" can be told from "untouched".
pub fn absent_bits<T: Value>(rng: &mut Rng, data: &[T]) -> Option<u64> {
    let present: std::collections::HashSet<u64> = data.iter().map(|v| v.to_bits()).collect();
    if T::WIDTH <= 16 {
        let start = rng.next() & mask(T::WIDTH);
        (0..=mask(T::WIDTH))
            .map(|i| (start + i) & mask(T::WIDTH))
            .find(|b| !present.contains(b))
    } else {
        (0..64)
            .map(|_| rng.next() & mask(T::WIDTH))
            .find(|b| !present.contains(b))
    }
}

/// An index type as the tests see it.
pub trait TestIndex: Index + Debug + PartialEq {
    /// Never a position in these tests: all ones.
    const SENTINEL: Self;
    fn wide(self) -> i128;
}

macro_rules! test_indices {
    ($($t:ty: $sentinel:expr),*) => {$(
        impl TestIndex for $t {
            const SENTINEL: Self = $sentinel;
            fn wide(self) -> i128 {
                self as i128
            }
        }
    )*};
}
test_indices!(u32: u32::MAX, u64: u64::MAX, i32: -1, i64: -1);

/// A strided layout and the length of the buffer it lives in.
#[derive(Clone, Copy, Debug)]
pub struct Strided<const D: usize> {
    pub sizes: [usize; D],
    pub strides: [isize; D],
    pub offset: usize,
    pub len: usize,
}

/// How [`strided`] may lay a tensor out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Anything a view allows: broadcast (stride 0) and reversed dimensions too.
    Input,
    /// No broadcast: outputs must not alias.
    Output,
}

/// A random layout of `sizes`: dimensions in a random memory order, some stepped (stride × 2..3), some
/// reversed (negative stride, offset moved to the last element), inputs also broadcast (stride 0), a
/// random offset in front and slack behind. `unit` names a dimension that gets stride 1 (innermost,
/// not stepped, reversed or broadcast): contiguous rows take the vector engines' block paths.
pub fn strided<const D: usize>(rng: &mut Rng, sizes: [usize; D], role: Role, unit: Option<usize>) -> Strided<D> {
    let mut order: [usize; D] = std::array::from_fn(|d| d);
    if rng.chance(1, 2) {
        rng.shuffle(&mut order);
    }
    if let Some(unit) = unit {
        let at = order.iter().position(|&d| d == unit).unwrap();
        order[at..].rotate_left(1); // `unit` last: innermost
    }
    let stepping = rng.chance(1, 3);
    let mut strides = [0isize; D];
    let mut step = 1isize;
    for &d in order.iter().rev() {
        if Some(d) == unit {
            strides[d] = 1;
            step = sizes[d].max(1) as isize;
            continue;
        }
        if role == Role::Input && rng.chance(1, 8) {
            strides[d] = 0;
            continue;
        }
        let factor = if stepping && rng.chance(1, 2) {
            rng.range(2, 3) as isize
        } else {
            1
        };
        strides[d] = step * factor;
        step = strides[d] * sizes[d].max(1) as isize;
    }
    let mut offset = if rng.chance(1, 2) { rng.range(0, 7) } else { 0 };
    if rng.chance(1, 3) {
        for d in 0..D {
            if rng.chance(1, 2) && sizes[d] > 0 && Some(d) != unit {
                offset += (sizes[d] - 1) * strides[d] as usize;
                strides[d] = -strides[d];
            }
        }
    }
    let extent = span(sizes, strides, offset);
    let len = extent + if rng.chance(1, 2) { rng.range(0, 5) } else { 0 };
    Strided {
        sizes,
        strides,
        offset,
        len,
    }
}

/// One past the highest address a layout reaches (0 for an empty one).
pub fn span<const D: usize>(sizes: [usize; D], strides: [isize; D], offset: usize) -> usize {
    if sizes.contains(&0) {
        return offset;
    }
    let highest: isize = offset as isize
        + (0..D)
            .map(|d| (sizes[d] as isize - 1) * strides[d].max(0))
            .sum::<isize>();
    highest as usize + 1
}

/// Every coordinate of `sizes` in row-major order.
pub fn coordinates<const D: usize>(sizes: [usize; D]) -> Vec<[usize; D]> {
    let count: usize = sizes.iter().product();
    let mut all = Vec::with_capacity(count);
    if count == 0 {
        return all;
    }
    let mut coord = [0usize; D];
    loop {
        all.push(coord);
        let mut d = D;
        loop {
            if d == 0 {
                return all;
            }
            d -= 1;
            coord[d] += 1;
            if coord[d] < sizes[d] {
                break;
            }
            coord[d] = 0;
        }
    }
}

/// The buffer address of `coord` in `layout`.
pub fn address<const D: usize>(layout: &Strided<D>, coord: &[usize; D]) -> usize {
    let reach: isize = coord.iter().zip(&layout.strides).map(|(&c, &s)| c as isize * s).sum();
    (layout.offset as isize + reach) as usize
}

/// The elements of a view, row-major.
pub fn gather<T: Copy, const D: usize>(buffer: &[T], layout: &Strided<D>) -> Vec<T> {
    coordinates(layout.sizes)
        .iter()
        .map(|c| buffer[address(layout, c)])
        .collect()
}

/// Panics if any element of `buffer` outside `layout`'s view is not `sentinel`.
pub fn check_guards<T: Copy, const D: usize>(
    buffer: &[T],
    layout: &Strided<D>,
    is_sentinel: impl Fn(T) -> bool,
    context: &dyn Fn() -> String,
) {
    let mut inside = vec![false; buffer.len()];
    for c in coordinates(layout.sizes) {
        inside[address(layout, &c)] = true;
    }
    for (i, (&value, &inside)) in buffer.iter().zip(&inside).enumerate() {
        assert!(
            inside || is_sentinel(value),
            "element {i} outside the output view was written: {}",
            context()
        );
    }
}

/// Row-major number of the sequence an output coordinate belongs to (its coordinates other than `axis`).
pub fn sequence_of<const D: usize>(sizes: [usize; D], axis: usize, coord: &[usize; D]) -> usize {
    let mut number = 0;
    for d in 0..D {
        if d != axis {
            number = number * sizes[d] + coord[d];
        }
    }
    number
}

/// The expected outputs, row-major over the output shape: value bits and positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub values: Vec<u64>,
    pub indices: Vec<i128>,
}

/// `(key, position)` pairs in the order of `direction`, ties by position. Not generic: a sort written in
/// `oracle` was compiled once per type and rank, a quarter of the property tests' build.
fn sort_in_order(pairs: &mut [(u64, usize)], direction: Direction) {
    match direction {
        Direction::Increasing => pairs.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1))),
        Direction::Decreasing => pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1))),
    }
}

/// docs/CONTRACT.md §1 by sorting each sequence with a comparison of keys written per direction, independent of
/// the kernels' flip trick and of `naive`'s scan.
pub fn oracle<T: Value, const D: usize>(
    input: &View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
) -> Expected {
    let layout = input.layout();
    let strided = Strided {
        sizes: layout.sizes(),
        strides: layout.strides(),
        offset: layout.offset(),
        len: 0,
    };
    let mut out_sizes = layout.sizes();
    out_sizes[axis] = k;
    let n = layout.sizes()[axis];
    let outputs = coordinates(out_sizes);
    let mut expected = Expected {
        values: vec![0; outputs.len()],
        indices: vec![0; outputs.len()],
    };
    let mut sorted: Vec<(u64, usize)> = Vec::with_capacity(n);
    for (i, c) in outputs.iter().enumerate() {
        if c[axis] != 0 {
            continue;
        }
        sorted.clear();
        for p in 0..n {
            let mut at = *c;
            at[axis] = p;
            sorted.push((input.source().unwrap()[address(&strided, &at)].key().widen(), p));
        }
        sort_in_order(&mut sorted, direction);
        // Coordinates along the axis are consecutive in row-major order `stride` apart.
        let stride: usize = out_sizes[axis + 1..].iter().product();
        for (j, &(_, p)) in sorted[..k].iter().enumerate() {
            let mut at = *c;
            at[axis] = p;
            expected.values[i + j * stride] = input.source().unwrap()[address(&strided, &at)].to_bits();
            expected.indices[i + j * stride] = p as i128;
        }
    }
    expected
}

/// Seed of one generated case. No shrinking: a smaller seed is an unrelated case.
#[derive(Clone, Copy, Debug)]
pub struct Seed(pub u64);

impl Arbitrary for Seed {
    fn arbitrary(g: &mut Gen) -> Self {
        Seed(u64::arbitrary(g))
    }
}

/// Runs `property` on `default_tests` random seeds (QUICKCHECK_TESTS overrides the count); with
/// TOPK_SEED=<n> it replays that one seed instead.
pub fn check_seeds(default_tests: u64, property: fn(Seed)) {
    if let Some(seed) = std::env::var("TOPK_SEED").ok().and_then(|s| s.parse().ok()) {
        property(Seed(seed));
        return;
    }
    let tests = std::env::var("QUICKCHECK_TESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_tests);
    QuickCheck::new()
        .tests(tests)
        .max_tests(tests)
        .quickcheck(property as fn(Seed));
}

/// Runs one case and, if it panics, panics again naming the seed that replays it (quickcheck reports
/// no arguments for a panic).
pub fn replayable(name: &str, seed: u64, case: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(case)) {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!("{name} failed; replay with TOPK_SEED={seed}: {message}");
    }
}
