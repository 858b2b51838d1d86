//! Every engine the CPU has, run explicitly against the reference: all twelve value types, data patterns
//! that stress the block filter (random bits with NaN payloads and signed zeros, heavy ties, sorted both
//! ways, all equal, NaN-heavy), row lengths around every lane, unroll and threshold boundary, both
//! directions, K from 1 to n. Values are compared bit for bit, indices exactly.

use topk_kernels::{Backend, Direction, Element, Error, TopK, View, ViewMut, bf16, f16, naive};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*: plenty for test data.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A value type built from raw bits.
trait Bits: Element + Copy {
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
enum Pattern {
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

const PATTERNS: [Pattern; 9] = [
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

fn make<T: Bits>(rng: &mut Rng, n: usize, pattern: Pattern) -> Vec<T> {
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

/// Runs the reference and then every engine on `rows` rows of `data` (contiguous, or along axis 0 when
/// `transposed`), and asserts identical outputs.
fn check<T: Bits>(data: &[T], rows: usize, transposed: bool, k: usize, direction: Direction) {
    let n = data.len() / rows;
    let (sizes, axis, out) = if transposed {
        ([n, rows], 0, [k, rows])
    } else {
        ([rows, n], 1, [rows, k])
    };
    let input = View::contiguous(data, sizes).unwrap();
    let zero = T::from_raw(0);
    let raw = |v: &[T]| v.iter().map(|x| x.raw()).collect::<Vec<_>>();
    let (mut want_v, mut want_i) = (vec![zero; rows * k], vec![0u64; rows * k]);
    naive::topk(
        input,
        axis,
        k,
        direction,
        ViewMut::contiguous(&mut want_v, out).unwrap(),
        ViewMut::contiguous(&mut want_i, out).unwrap(),
    )
    .unwrap();
    let want = (want_i, raw(&want_v));
    for backend in Backend::ALL.into_iter().filter(|&b| b != Backend::Naive) {
        let (mut got_v, mut got_i) = (vec![zero; rows * k], vec![u64::MAX; rows * k]);
        let mut plan = TopK::new(
            input,
            axis,
            k,
            direction,
            ViewMut::contiguous(&mut got_v, out).unwrap(),
            ViewMut::contiguous(&mut got_i, out).unwrap(),
        )
        .unwrap();
        let mut scratch = vec![0u64; plan.scratch_len()];
        let all = 0..plan.sequences();
        match plan.run_sequences(all, backend, &mut scratch) {
            Ok(()) => {}
            Err(Error::Backend { name }) => {
                // Unavailable engines must refuse cleanly, and only those.
                assert!(!backend.is_available(), "{name} is available but refused");
                continue;
            }
            Err(e) => panic!("{}: {e}", backend.name()),
        }
        assert_eq!(
            (&got_i, &raw(&got_v)),
            (&want.0, &want.1),
            "{} {} n {n} rows {rows} transposed {transposed} k {k} {direction:?}",
            backend.name(),
            T::NAME
        );
    }
}

fn lengths() -> Vec<usize> {
    let mut lengths: Vec<usize> = (1..=70).collect();
    for edge in [128usize, 256, 512, 1024] {
        lengths.extend([edge - 1, edge, edge + 1]);
    }
    lengths
}

fn sweep<T: Bits>(seed: u64) {
    let mut rng = Rng(seed | 1);
    let small = if cfg!(miri) {
        vec![1usize, 17, 64, 65]
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
                let direction = if rng.below(2) == 0 {
                    Direction::Decreasing
                } else {
                    Direction::Increasing
                };
                check(&data, 1, false, k, direction);
            }
        }
    }
}

/// One test per type: `per_type! { run; name: type, seed; .. }` calls `run::<type>(seed)`.
macro_rules! per_type {
    ($run:ident; $($name:ident: $t:ty, $seed:expr;)*) => {$(
        #[test]
        fn $name() {
            $run::<$t>($seed);
        }
    )*};
}
per_type! {
    sweep;
    sweep_f32: f32, 1;
    sweep_f64: f64, 2;
    sweep_f16: f16, 3;
    sweep_bf16: bf16, 4;
    sweep_u8: u8, 5;
    sweep_i8: i8, 6;
    sweep_u16: u16, 7;
    sweep_i16: i16, 8;
    sweep_u32: u32, 9;
    sweep_i32: i32, 10;
    sweep_u64: u64, 11;
    sweep_i64: i64, 12;
}

/// A non-last axis whose neighbouring sequences are adjacent (the engines read them side by side, one
/// per lane): neighbour counts around the lane counts (4, 8, 16) so that runs split into full groups and
/// a remainder done one at a time, 40 and 260 neighbours of sequences long enough for the side filter to
/// read several groups of lanes a row (2 to 16 a call, then the rest), K at both ends of each slot count
/// (8, 16), and above them (a candidate buffer per lane): just past, and 60 (a tenth to a fifth of the
/// longer sequences; at least half of the shorter ones, which the caps' selection answers alone; all of
/// the shortest).
fn sides<T: Bits>(seed: u64) {
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
    many_sequences::<T>(&mut rng, shapes, &[1, 3, 8, 9, 16, 17, 60], true);
}

per_type! {
    sides;
    sides_f32: f32, 21;
    sides_f64: f64, 22;
    sides_f16: f16, 23;
    sides_bf16: bf16, 24;
    sides_u8: u8, 25;
    sides_i8: i8, 26;
    sides_u16: u16, 27;
    sides_i16: i16, 28;
    sides_u32: u32, 29;
    sides_i32: i32, 30;
    sides_u64: u64, 31;
    sides_i64: i64, 32;
}

/// Many short rows (at most 32): the engines copy them 16 at a time into a tile and read them side by
/// side from there. Row counts with a remainder past the last full group, lengths around the tile's
/// limit, K at both ends of each slot count (8, 16) and just past the side-by-side limit.
fn tiny<T: Bits>(seed: u64) {
    let mut rng = Rng(seed | 1);
    let shapes: &[(usize, usize)] = if cfg!(miri) {
        &[(8, 17)]
    } else {
        &[(2, 16), (3, 37), (8, 300), (16, 33), (31, 20), (32, 48), (33, 17)]
    };
    many_sequences::<T>(&mut rng, shapes, &[1, 2, 8, 9, 16, 17, usize::MAX], false);
}

/// For each `(n, count)` of `shapes` and each pattern, `count` sequences of `n` (contiguous rows, or
/// along axis 0 when `transposed`), checked for each K of `ks` (capped at n: `usize::MAX` is K = n) in a
/// random direction.
fn many_sequences<T: Bits>(rng: &mut Rng, shapes: &[(usize, usize)], ks: &[usize], transposed: bool) {
    for &(n, count) in shapes {
        for pattern in PATTERNS {
            let data = make::<T>(rng, n * count, pattern);
            let mut ks: Vec<usize> = ks.iter().map(|&k| k.min(n)).collect();
            ks.dedup();
            for k in ks {
                let direction = if rng.below(2) == 0 {
                    Direction::Decreasing
                } else {
                    Direction::Increasing
                };
                check(&data, count, transposed, k, direction);
            }
        }
    }
}

per_type! {
    tiny;
    tiny_f32: f32, 41;
    tiny_f64: f64, 42;
    tiny_f16: f16, 43;
    tiny_bf16: bf16, 44;
    tiny_u8: u8, 45;
    tiny_i8: i8, 46;
    tiny_u16: u16, 47;
    tiny_i16: i16, 48;
    tiny_u32: u32, 49;
    tiny_i32: i32, 50;
    tiny_u64: u64, 51;
    tiny_i64: i64, 52;
}

/// Long rows: the adversarial orders that make the filter bail out to sampling, several rows, and a
/// non-last axis with five neighbours (fewer than most engines' lanes: mostly one sequence at a time).
fn long<T: Bits>(seed: u64) {
    let mut rng = Rng(seed | 1);
    let n = if cfg!(miri) { 600 } else { 5000 };
    for pattern in PATTERNS {
        for (k, direction) in [
            (1, Direction::Decreasing),
            (4, Direction::Decreasing),
            (13, Direction::Increasing),
        ] {
            let data = make::<T>(&mut rng, n, pattern);
            check(&data, 1, false, k, direction);
            check(&data, 2, false, k, direction);
            check(&data, 5, true, k, direction);
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
                check(&data, 1, false, k, direction);
            }
        }
    }
}

#[test]
fn long_rows_f32() {
    long::<f32>(21);
}

#[test]
fn long_rows_f64() {
    long::<f64>(22);
}

#[test]
fn long_rows_u8() {
    long::<u8>(23);
}

#[test]
fn long_rows_i16() {
    long::<i16>(24);
}

#[test]
fn long_rows_bf16() {
    long::<bf16>(25);
}

/// f16 takes its own paths on the x86 engines: its raw bits in 16-bit lanes for the scans, converted to
/// f32 for the bounds.
#[test]
fn long_rows_f16() {
    long::<f16>(27);
}

/// Every f16 bit pattern in one row (NaNs of both signs, both zeros, subnormals, infinities), in raw
/// order and shuffled, for each of the limits the bit tests derive from them.
#[test]
#[cfg_attr(miri, ignore = "65536-element rows")]
fn every_f16_bit_pattern() {
    let mut rng = Rng(29);
    let ordered: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let mut shuffled = ordered.clone();
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for data in [&ordered, &shuffled] {
        for k in [1, 8, 17, 50] {
            for direction in [Direction::Decreasing, Direction::Increasing] {
                check(data, 1, false, k, direction);
            }
        }
    }
}

#[test]
fn long_rows_i64() {
    long::<i64>(26);
}

/// K a large part of a long row: 8- and 16-bit keys are counted instead of filtered (from K = n/24 and
/// n/5), with and without room for the second copy the 16-bit path sorts into (n >= 2K), on contiguous
/// and strided rows.
fn counted<T: Bits>(seed: u64) {
    let mut rng = Rng(seed | 1);
    let n = if cfg!(miri) { 300 } else { 2048 + rng.below(64) as usize };
    for pattern in PATTERNS {
        let data = make::<T>(&mut rng, 2 * n, pattern);
        for k in [n / 24 + 1, n / 5 + 1, n / 2 - 1, n / 2 + 1, n] {
            let direction = if rng.below(2) == 0 {
                Direction::Decreasing
            } else {
                Direction::Increasing
            };
            check(&data[..n], 1, false, k, direction);
            check(&data, 2, true, k, direction);
        }
    }
}

per_type! {
    counted;
    counted_u8: u8, 41;
    counted_i8: i8, 42;
    counted_u16: u16, 43;
    counted_i16: i16, 44;
    counted_f16: f16, 45;
    counted_bf16: bf16, 46;
}

#[test]
fn availability_matches_the_cpu() {
    assert!(Backend::Portable.is_available() && Backend::Scalar.is_available());
    let auto = Backend::Auto.resolve();
    assert!(auto.is_available() && auto != Backend::Auto && auto != Backend::Naive);
    // TOPK_MAX_ISA caps the engines (the test command runs the suite under each cap).
    let cap = std::env::var("TOPK_MAX_ISA").ok();
    let portable_only = cap.as_deref() == Some("portable");
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    {
        assert_eq!(Backend::Neon.is_available(), !portable_only);
        assert!(!Backend::Avx2.is_available());
        assert_eq!(
            auto,
            if portable_only {
                Backend::Portable
            } else {
                Backend::Neon
            }
        );
    }
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        assert!(!Backend::Neon.is_available());
        let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("f16c") && !portable_only;
        let avx512 = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && !portable_only
            && cap.as_deref() != Some("avx2");
        assert_eq!(Backend::Avx2.is_available(), avx2);
        assert_eq!(Backend::Avx512.is_available(), avx512);
        let widest = if avx512 {
            Backend::Avx512
        } else if avx2 {
            Backend::Avx2
        } else {
            Backend::Portable
        };
        assert_eq!(auto, widest);
    }
    let _ = portable_only; // other targets, and miri, check neither
    for backend in Backend::ALL {
        assert_eq!(Backend::from_name(backend.name()), Some(backend));
    }
}
