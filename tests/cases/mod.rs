//! The cases of the backend sweep (`tests/backends.rs`): value types built from raw bits, data patterns
//! that stress the block filter, and the walks over lengths, shapes, K and directions that hand each
//! case to a [`Check`]. `no_std` with `alloc`, so that `emulated/` runs the same walk on a bare emulated
//! CPU (the AVX-512 engine, on machines without it) that the host suite runs here.
#![allow(dead_code, unreachable_pub)] // each includer uses its own part; `pub` is for them

extern crate alloc;

use alloc::vec::Vec;

use topk_kernels::{Direction, Element, bf16, f16};

/// What a walk does with each case: `rows` rows of `data` (contiguous, or along axis 0 when
/// `transposed`), their top `k` in `direction`.
pub trait Check {
    fn check<T: Bits>(&mut self, data: &[T], rows: usize, transposed: bool, k: usize, direction: Direction);
}

/// A case's shapes: `(input sizes, axis, output sizes)` for `rows` sequences of `n` with K = `k`.
pub fn shapes(n: usize, rows: usize, transposed: bool, k: usize) -> ([usize; 2], usize, [usize; 2]) {
    if transposed {
        ([n, rows], 0, [k, rows])
    } else {
        ([rows, n], 1, [rows, k])
    }
}

pub struct Rng(u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        // xorshift64*: plenty for test data.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A value type built from raw bits.
pub trait Bits: Element + Copy {
    const WIDTH: u32;
    const FLOAT: bool;
    fn from_raw(bits: u64) -> Self;
    fn raw(self) -> u64;
}

macro_rules! ints {
    ($($t:ty => $u:ty),*) => {$(
        impl Bits for $t {
            const WIDTH: u32 = <$t>::BITS;
            const FLOAT: bool = false;
            fn from_raw(bits: u64) -> Self { bits as $u as $t }
            fn raw(self) -> u64 { self as $u as u64 }
        }
    )*};
}
ints!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, i8 => u8, i16 => u16, i32 => u32, i64 => u64);

macro_rules! floats {
    ($($t:ty => $u:ty),*) => {$(
        impl Bits for $t {
            const WIDTH: u32 = <$u>::BITS;
            const FLOAT: bool = true;
            fn from_raw(bits: u64) -> Self { <$t>::from_bits(bits as $u) }
            fn raw(self) -> u64 { self.to_bits() as u64 }
        }
    )*};
}
floats!(f32 => u32, f64 => u64, f16 => u16, bf16 => u16);

#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    Random,
    Ties,
    Ascending,
    Descending,
    Equal,
    NanMix,
    /// Ascending, then a long plateau at the top: ties at the sampled bound.
    Steps,
    /// Only the ends of the order (NaNs, infinities; the integers' extremes): ties with the value the
    /// engines pad short rows with, in either direction.
    Extremes,
    /// Finite values with a NaN of either sign about once in 1024: after a limit settled on finite
    /// values, a NaN in a block where nothing else passes (`Decreasing` must find it; `Increasing` must
    /// pass over it), as the block tests that fold a block's lanes before comparing see it. In the
    /// other patterns specials are common enough that the limit soon stands at NaN or an infinity.
    SparseNan,
}

pub const PATTERNS: [Pattern; 9] = [
    Pattern::Random,
    Pattern::Ties,
    Pattern::Ascending,
    Pattern::Descending,
    Pattern::Equal,
    Pattern::NanMix,
    Pattern::Steps,
    Pattern::Extremes,
    Pattern::SparseNan,
];

/// Raw bits of a special value: NaNs of both signs with random payloads, zeros, infinities, extremes.
fn special<T: Bits>(rng: &mut Rng) -> u64 {
    let ones = u64::MAX >> (64 - T::WIDTH);
    let sign = 1u64 << (T::WIDTH - 1);
    if T::FLOAT {
        let exponent_all = infinity_bits::<T>();
        let payload = (rng.next() & (ones >> 1) & !exponent_all).max(1);
        [
            exponent_all | payload,
            sign | exponent_all | payload,
            0,
            sign,
            exponent_all,
            sign | exponent_all,
            1,
            sign | 1,
        ][rng.below(8) as usize]
    } else {
        [0, ones, sign, sign - 1, 1, ones - 1][rng.below(6) as usize]
    }
}

/// Raw bits of a value at either end of the order: a NaN of either sign or an infinity; an integer's
/// smallest or largest value.
fn extreme<T: Bits>(rng: &mut Rng) -> u64 {
    let ones = u64::MAX >> (64 - T::WIDTH);
    let sign = 1u64 << (T::WIDTH - 1);
    let choices = if T::FLOAT {
        let infinity = infinity_bits::<T>();
        [ones, ones >> 1, infinity, sign | infinity] // -NaN, NaN, +inf, -inf
    } else {
        [0, ones, sign, sign - 1]
    };
    choices[rng.below(4) as usize]
}

/// The raw bits of +inf.
fn infinity_bits<T: Bits>() -> u64 {
    match T::WIDTH {
        16 if T::from_raw(0x7C01).key() == T::from_raw(0x7FFF).key() => 0x7C00,
        16 => 0x7F80,
        32 => 0x7F80_0000,
        _ => 0x7FF0_0000_0000_0000,
    }
}

pub fn make<T: Bits>(rng: &mut Rng, n: usize, pattern: Pattern) -> Vec<T> {
    let ones = u64::MAX >> (64 - T::WIDTH);
    let equal = rng.next() & ones;
    // A small pool of values (specials included) for ties.
    let pool: Vec<u64> = (0..5)
        .map(|i| if i < 2 { special::<T>(rng) } else { rng.next() & ones })
        .collect();
    // Monotone data: integers count (wrapping at the width), floats step through finite positives.
    let ramp = |i: usize| -> u64 {
        if T::FLOAT {
            let bits = match T::WIDTH {
                16 => 0x3C00 + (i as u64 % 0x3000),
                32 => 0x3F80_0000 + i as u64,
                _ => 0x3FF0_0000_0000_0000 + i as u64,
            };
            bits & ones
        } else {
            (i as u64 + (1u64 << (T::WIDTH - 1)).min(1 << 20)) & ones
        }
    };
    (0..n)
        .map(|i| {
            let bits = match pattern {
                Pattern::Random if rng.below(8) == 0 => special::<T>(rng),
                Pattern::Random => rng.next() & ones,
                Pattern::Ties => pool[rng.below(pool.len() as u64) as usize],
                Pattern::Ascending => ramp(i),
                Pattern::Descending => ramp(n - i),
                Pattern::Equal => equal,
                Pattern::NanMix if rng.below(4) == 0 => special::<T>(rng),
                Pattern::NanMix => rng.next() & ones,
                Pattern::Steps => ramp(i.min(n - n / 10)),
                Pattern::Extremes => extreme::<T>(rng),
                Pattern::SparseNan if T::FLOAT && rng.below(1024) == 0 => {
                    let infinity = infinity_bits::<T>();
                    let sign = (rng.next() & 1) << (T::WIDTH - 1);
                    sign | infinity | (rng.next() & (ones >> 1) & !infinity).max(1)
                }
                Pattern::SparseNan if T::FLOAT => {
                    // Finite: an all-ones exponent loses its top bit.
                    let bits = rng.next() & ones;
                    let infinity = infinity_bits::<T>();
                    if bits & infinity == infinity {
                        bits & !(1 << (T::WIDTH - 2))
                    } else {
                        bits
                    }
                }
                Pattern::SparseNan => rng.next() & ones,
            };
            T::from_raw(bits)
        })
        .collect()
}

fn lengths() -> Vec<usize> {
    let mut lengths: Vec<usize> = (1..=70).collect();
    for edge in [128usize, 256, 512, 1024] {
        lengths.extend([edge - 1, edge, edge + 1]);
    }
    lengths
}

/// A direction drawn from `rng`.
fn direction(rng: &mut Rng) -> Direction {
    if rng.below(2) == 0 {
        Direction::Decreasing
    } else {
        Direction::Increasing
    }
}

/// Single rows of every length up to 70 and around 128, 256, 512 and 1024, each pattern, K at the
/// engines' boundaries.
pub fn sweep<T: Bits>(seed: u64, check: &mut impl Check) {
    let mut rng = Rng(seed | 1);
    let small = if cfg!(miri) {
        alloc::vec![1usize, 17, 64, 65]
    } else {
        lengths()
    };
    for &n in &small {
        for pattern in PATTERNS {
            let data = make::<T>(&mut rng, n, pattern);
            // 8 and 16: the sorted pool's two sizes, and the short-row path's (rows of up to 512 collected
            // below the prefix bound, more than 64 of them given back to the filter on ties). Past 16 on
            // rows of 256 on: the pieces' bound, in one to four pieces (AVX-512 f32; more elsewhere).
            let ks = [1, 2, 3, 8, 16, n / 16, n / 2, n];
            let pieces = [24, 40, 100].into_iter().filter(|_| n >= 255);
            for k in ks.into_iter().chain(pieces).filter(|&k| (1..=n).contains(&k)) {
                let direction = direction(&mut rng);
                check.check(&data, 1, false, k, direction);
            }
        }
    }
}

/// A non-last axis whose neighbouring sequences are adjacent (the engines read them side by side, one
/// per lane): neighbour counts around the lane counts (4, 8, 16) so that runs split into full groups and
/// a remainder done one at a time, 40 and 260 neighbours of sequences long enough for the side filter to
/// read several groups of lanes a row (2 to 16 a call, then the rest), K at both ends of each slot count
/// (8, 16), and above them (a candidate buffer per lane): just past, and 60 (a tenth to a fifth of the
/// longer sequences; at least half of the shorter ones, which the caps' selection answers alone; all of
/// the shortest).
pub fn sides<T: Bits>(seed: u64, check: &mut impl Check) {
    let mut rng = Rng(seed | 1);
    let shapes: &[(usize, usize)] = if cfg!(miri) {
        &[(20, 9)]
    } else {
        &[
            (1, 8),
            (5, 16),
            (40, 17),
            (97, 33),
            (300, 20),
            (600, 17),
            (140, 40),
            (130, 260),
        ]
    };
    many_sequences::<T>(&mut rng, shapes, &[1, 3, 8, 9, 16, 17, 60], true, check);
}

/// Many short rows (at most 32): the engines copy them 16 at a time into a tile and read them side by
/// side from there. Row counts with a remainder past the last full group, lengths around the tile's
/// limit, K at both ends of each slot count (8, 16) and just past the side-by-side limit.
pub fn tiny<T: Bits>(seed: u64, check: &mut impl Check) {
    let mut rng = Rng(seed | 1);
    let shapes: &[(usize, usize)] = if cfg!(miri) {
        &[(8, 17)]
    } else {
        &[(2, 16), (3, 37), (8, 300), (16, 33), (31, 20), (32, 48), (33, 17)]
    };
    many_sequences::<T>(&mut rng, shapes, &[1, 2, 8, 9, 16, 17, usize::MAX], false, check);
}

/// For each `(n, count)` of `shapes` and each pattern, `count` sequences of `n` (contiguous rows, or
/// along axis 0 when `transposed`), checked for each K of `ks` (capped at n: `usize::MAX` is K = n) in a
/// random direction.
fn many_sequences<T: Bits>(
    rng: &mut Rng,
    shapes: &[(usize, usize)],
    ks: &[usize],
    transposed: bool,
    check: &mut impl Check,
) {
    for &(n, count) in shapes {
        for pattern in PATTERNS {
            let data = make::<T>(rng, n * count, pattern);
            let mut ks: Vec<usize> = ks.iter().map(|&k| k.min(n)).collect();
            ks.dedup();
            for k in ks {
                let direction = direction(rng);
                check.check(&data, count, transposed, k, direction);
            }
        }
    }
}

/// Long rows: the adversarial orders that make the filter bail out to sampling, several rows, and a
/// non-last axis with five neighbours (fewer than most engines' lanes: mostly one sequence at a time).
pub fn long<T: Bits>(seed: u64, check: &mut impl Check) {
    let mut rng = Rng(seed | 1);
    let n = if cfg!(miri) { 600 } else { 5000 };
    for pattern in PATTERNS {
        for (k, direction) in [
            (1, Direction::Decreasing),
            (4, Direction::Decreasing),
            (13, Direction::Increasing),
        ] {
            let data = make::<T>(&mut rng, n, pattern);
            check.check(&data, 1, false, k, direction);
            check.check(&data, 2, false, k, direction);
            check.check(&data, 5, true, k, direction);
        }
        if !cfg!(miri) {
            // Rows of at least 256 K with K > 16 first guess a cap from their start: random rows keep it,
            // rows whose start holds the best (descending for `Decreasing`, ascending for `Increasing`)
            // find fewer than K below it and run again without it.
            for (k, direction) in [
                (17, Direction::Decreasing),
                (32, Direction::Increasing),
                (40, Direction::Decreasing),
            ] {
                let data = make::<T>(&mut rng, 256 * k + 77, pattern);
                check.check(&data, 1, false, k, direction);
            }
        }
    }
}

/// Long rows of 8- and 16-bit elements with K > 16, which the SIMD engines scan in chunks of 64 units
/// (up to 32 KiB: AVX-512's bytes) and then push the marked units' lanes: rows of two chunks and more,
/// where a compaction inside a chunk lowers the limit under the lanes its marks were tested against
/// (all equal, ties, plateaus), so that the scan goes on under the new limit from the element after the
/// one turned away.
pub fn chunked<T: Bits>(seed: u64, check: &mut impl Check) {
    let mut rng = Rng(seed | 1);
    // Two of AVX-512's chunks of bytes (64 units of 512), three of its 16-bit chunks (64 units of 128):
    // short enough for K = 17 to be dense there, and K = 50 for bytes.
    let chunks = if T::WIDTH == 8 { 2 * 64 * 512 } else { 3 * 64 * 128 };
    let n = if cfg!(miri) { 1000 } else { chunks + 301 };
    for pattern in [
        Pattern::Random,
        Pattern::Ties,
        Pattern::Equal,
        Pattern::Steps,
        Pattern::Ascending,
        Pattern::NanMix,
    ] {
        let data = make::<T>(&mut rng, n, pattern);
        // n / 256: survivors dense enough for chunks on every CPU (`cpu::exits_are_cheap`).
        for k in [17, 50, n / 256] {
            check.check(&data, 1, false, k, direction(&mut rng));
        }
    }
}

/// Every f16 bit pattern in one row (NaNs of both signs, both zeros, subnormals, infinities), in raw
/// order and shuffled, for each of the limits the bit tests derive from them.
pub fn every_f16_bit_pattern(seed: u64, check: &mut impl Check) {
    let mut rng = Rng(seed);
    let ordered: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let mut shuffled = ordered.clone();
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for data in [&ordered, &shuffled] {
        for k in [1, 8, 17, 50] {
            for direction in [Direction::Decreasing, Direction::Increasing] {
                check.check(data, 1, false, k, direction);
            }
        }
    }
}

/// K a large part of a long row: 8- and 16-bit keys are counted instead of filtered (from K = n/24 + 16
/// and n/10, AVX-512's 16-bit keys from n/5), with and without room for the second copy the 16-bit path
/// sorts into (n >= 2K), on contiguous and strided rows.
pub fn counted<T: Bits>(seed: u64, check: &mut impl Check) {
    let mut rng = Rng(seed | 1);
    let n = if cfg!(miri) { 300 } else { 2048 + rng.below(64) as usize };
    for pattern in PATTERNS {
        let data = make::<T>(&mut rng, 2 * n, pattern);
        for k in [n / 24 + 17, n / 10, n / 10 + 1, n / 5 + 1, n / 2 - 1, n / 2 + 1, n] {
            let direction = direction(&mut rng);
            check.check(&data[..n], 1, false, k, direction);
            check.check(&data, 2, true, k, direction);
        }
    }
}

/// Short rows of 8- and 16-bit keys with K a large part of them (64 to 512 elements; K from 21 for
/// 8-bit keys and n/6 for 16-bit ones, up to n/2; 8-bit rows up to 2048 where they would be counted,
/// 16-bit ones up to 1024 from n/12 while K is below 180):
/// the SIMD engines find the exact K-th key by bisection and count the gathered into order (16-bit keys
/// from K = 65); f16 and bf16 are keyed into u16 first, so their NaNs (either sign, any payload) and
/// zeros must come out as the row holds them. Each pattern's ties, including rows whose K-th key is the
/// last in the order (nothing to exclude) or whose ties overflow the collection (counted or filtered
/// instead), several rows at once, and each length's neighbours outside the range.
pub fn bisected<T: Bits>(seed: u64, check: &mut impl Check) {
    let mut rng = Rng(seed | 1);
    let lengths: &[usize] = if cfg!(miri) {
        &[64, 200]
    } else {
        &[63, 64, 100, 255, 256, 300, 511, 512, 513, 1000, 1024, 1025]
    };
    for &n in lengths {
        for pattern in PATTERNS {
            let data = make::<T>(&mut rng, 3 * n, pattern);
            let ks = [
                21,
                22,
                n / 12,
                n / 12 + 1,
                n / 6,
                n / 6 + 1,
                64,
                65,
                179,
                180,
                n / 2,
                n / 2 + 1,
            ];
            for k in ks.into_iter().filter(|&k| (1..=n).contains(&k)) {
                let direction = direction(&mut rng);
                check.check(&data, 3, false, k, direction);
            }
        }
    }
}

/// Every walk of `tests/backends.rs`, with its seeds: what `emulated/` runs.
pub fn all(check: &mut impl Check) {
    macro_rules! per_type {
        ($walk:ident: $($t:ty, $seed:expr;)*) => {$( $walk::<$t>($seed, check); )*};
    }
    per_type!(sweep: f32, 1; f64, 2; f16, 3; bf16, 4; u8, 5; i8, 6; u16, 7; i16, 8; u32, 9; i32, 10; u64, 11; i64, 12;);
    per_type!(sides: f32, 21; f64, 22; f16, 23; bf16, 24; u8, 25; i8, 26; u16, 27; i16, 28; u32, 29; i32, 30; u64, 31; i64, 32;);
    per_type!(tiny: f32, 41; f64, 42; f16, 43; bf16, 44; u8, 45; i8, 46; u16, 47; i16, 48; u32, 49; i32, 50; u64, 51; i64, 52;);
    per_type!(long: f32, 21; f64, 22; u8, 23; i16, 24; bf16, 25; i64, 26; f16, 27;);
    per_type!(chunked: u8, 61; i8, 62; u16, 63; i16, 64; f16, 65; bf16, 66;);
    every_f16_bit_pattern(29, check);
    per_type!(counted: u8, 41; i8, 42; u16, 43; i16, 44; f16, 45; bf16, 46;);
    per_type!(bisected: u8, 51; i8, 52; u16, 53; i16, 54; f16, 55; bf16, 56;);
}
