//! The partition kernels on every engine this CPU has.

use std::vec::Vec;

use super::{OnEngine, engines};
use crate::dispatch::engine::{Backend, Engine};
use crate::kernels::partition::*;
use crate::kernels::testing::xorshift;
use crate::simd::vector::Vector;

/// The long inputs' length: 100k when optimised (the qemu run), 20k in the unoptimised host build,
/// whose reference sorts of 100k words are slow.
const LONG: usize = if cfg!(debug_assertions) { 20_000 } else { 100_000 };

/// Selects `k` of `words` with `engine` and checks the result against `core`'s selection: the same
/// `k - 1`-th word, the same set before it (sorted), and still a permutation.
fn check(backend: Backend, engine: Engine, words: &[u64], k: usize, name: &str) {
    let mut got = words.to_vec();
    if engine.partition_select(&mut got, k).is_none() {
        return;
    }
    let mut want = words.to_vec();
    let what = || std::format!("{} {name} len {} k {k}", backend.name(), words.len());
    if let Some(rank) = k.checked_sub(1).filter(|&r| r < words.len()) {
        want.select_nth_unstable(rank);
        assert_eq!(got[rank], want[rank], "{}: k-th", what());
        let (mut a, mut b) = (got[..rank].to_vec(), want[..rank].to_vec());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "{}: the first k", what());
    } else {
        assert_eq!(got, want, "{}: k out of range changes nothing", what());
    }
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{}: not a permutation", what());
}

#[test]
fn partition_lanes_puts_the_set_lanes_first() {
    for (backend, engine) in engines() {
        for lanes in [2usize, 4, 8] {
            for bits in 0..1u64 << lanes {
                let words: Vec<u64> = (0..lanes as u64).map(|i| 100 + i).collect();
                let Some(got) = engine.partition_lanes(&words, bits) else {
                    continue;
                };
                let got = &got[..lanes];
                let want: Vec<u64> = (0..lanes)
                    .filter(|i| bits >> i & 1 == 1)
                    .chain((0..lanes).filter(|i| bits >> i & 1 == 0))
                    .map(|i| words[i])
                    .collect();
                assert_eq!(got, want, "{} lanes {lanes} bits {bits:#b}", backend.name());
            }
        }
    }
}

/// The default on 32-bit lanes too (none of the partition's vectors, but the method is any vector's).
#[test]
fn partition_lanes_default_on_32_bit_lanes() {
    type Lanes = crate::simd::portable::U32x8;
    let words: [u32; 8] = core::array::from_fn(|i| 100 + i as u32);
    // Miri: every 17th mask, 0 and all ones among them (all 256 are slow there); the method's one load of
    // 32-bit lanes is the same for each.
    for bits in (0..1u64 << 8).step_by(if cfg!(miri) { 17 } else { 1 }) {
        // SAFETY: `words` holds 8 u32s, the lanes and their width.
        let v: Lanes = unsafe { Lanes::load(words.as_ptr()) };
        let got = v.partition_lanes(bits).lanes();
        let want: Vec<u64> = (0..8)
            .filter(|i| bits >> i & 1 == 1)
            .chain((0..8).filter(|i| bits >> i & 1 == 0))
            .map(|i| u64::from(words[i]))
            .collect();
        assert_eq!(got[..8], want[..], "bits {bits:#b}");
    }
}

/// Random words of every length to 600 (fewer under miri): every k to 64 words, then the ends, the
/// quarters and a few random ranks (every k of every length is too slow for the unoptimised CI build).
#[test]
fn selects_every_k_of_random_words() {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let lengths: Vec<usize> = if cfg!(miri) {
        // 129 (SMALL + 1) is the shortest the selection partitions: one round of two steps and a
        // rest, then `core` (200 does the same, at a much larger cost under miri).
        [0, 1, 7, 64, 129].into()
    } else {
        (0..=600).collect()
    };
    for (backend, engine) in engines() {
        for &len in &lengths {
            let words: Vec<u64> = (0..len).map(|_| next()).collect();
            // Packed words of few distinct keys (high bits), positions distinct.
            let packed: Vec<u64> = (0..len as u64).map(|i| (next() % 3) << 32 | i).collect();
            let ks: Vec<usize> = if cfg!(miri) {
                [0, 1, len / 2, len, len + 1].into()
            } else if len <= 64 {
                (0..=len + 1).collect()
            } else {
                let ends = [
                    0,
                    1,
                    2,
                    len / 4,
                    len / 2,
                    len / 2 + 1,
                    3 * len / 4,
                    len - 1,
                    len,
                    len + 1,
                ];
                ends.into_iter().chain((0..4).map(|_| next() as usize % len)).collect()
            };
            for &k in &ks {
                check(backend, engine, &words, k, "random");
                check(backend, engine, &packed, k, "packed");
            }
        }
    }
}

/// Long inputs, random and patterned, at a few ranks.
#[test]
fn selects_long_and_patterned_inputs() {
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let lengths: &[usize] = if cfg!(miri) { &[300] } else { &[1000, 4097, 5000, LONG] };
    for &len in lengths {
        let inputs = patterns(len, &mut next);
        for (backend, engine) in engines() {
            for (name, words) in &inputs {
                // Miri: half only (two ranks are slow there): two rounds or more on 300 words, each going
                // left or right, and `core` at once where the words are all equal.
                let ks: Vec<usize> = if cfg!(miri) {
                    [len / 2].into()
                } else {
                    [1, 2, len / 100 + 1, len / 3, len / 2, len / 2 + 1, len - 1, len].into()
                };
                for k in ks {
                    check(backend, engine, words, k, name);
                }
            }
        }
    }
}

/// Random words take a few rounds; equal words stop at once; a budget too small falls back, and
/// the result is still right.
#[test]
fn worst_cases_fall_back() {
    type Lanes = crate::simd::portable::U64x4;
    // Miri: 300 words, still long enough for two rounds and for the budget below to run out past
    // `SMALL`, and one rank a pattern (600 words at four ranks are slow there).
    let len = if cfg!(miri) { 300 } else { LONG };
    let ks: &[usize] = if cfg!(miri) {
        &[len / 3]
    } else {
        &[1, len / 3, len / 2, len]
    };
    let mut next = xorshift(7);
    let random: Vec<u64> = (0..len).map(|_| next()).collect();
    let mut words = random.clone();
    let rounds = quickselect::<Lanes>(&mut words, len / 2, WORK_RATIO);
    assert!(
        !rounds.fell_back && rounds.rounds <= 2 * len.ilog2() as usize,
        "{rounds:?}"
    );
    let n = len as u64;
    let patterns: [Vec<u64>; 4] = [
        (0..n).collect(),
        (0..n).rev().collect(),
        (0..n).map(|i| i.min(n - 1 - i) << 32 | i).collect(),
        (0..n).map(|i| (i % 97) << 32 | i).collect(),
    ];
    for (i, pattern) in patterns.iter().enumerate() {
        for &k in ks {
            let mut words = pattern.clone();
            let rounds = quickselect::<Lanes>(&mut words, k, WORK_RATIO);
            assert!(
                !rounds.fell_back && rounds.rounds <= 2 * len.ilog2() as usize,
                "{i} {k} {rounds:?}"
            );
        }
    }
    let mut words = std::vec![5u64; len];
    assert_eq!(
        quickselect::<Lanes>(&mut words, len / 2, WORK_RATIO),
        Rounds {
            rounds: 1,
            fell_back: true
        }
    );
    // A budget of one length: one round, then `core`.
    let mut words = random.clone();
    let rounds = quickselect::<Lanes>(&mut words, len / 3, 1);
    assert_eq!(
        rounds,
        Rounds {
            rounds: 1,
            fell_back: true
        }
    );
    let mut want = random.clone();
    want.select_nth_unstable(len / 3 - 1);
    assert_eq!(words[len / 3 - 1], want[len / 3 - 1]);
    let (mut a, mut b) = (words[..len / 3].to_vec(), want[..len / 3].to_vec());
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
}

/// Sorts `k` of `words` with `engine`'s quicksort and checks the first `k` against `core`'s sort of
/// the whole, and that the whole is still a permutation.
fn check_sort(backend: Backend, engine: Engine, words: &[u64], k: usize, name: &str) {
    let mut got = words.to_vec();
    if engine.partition_sort(&mut got, k).is_none() {
        return;
    }
    let mut want = words.to_vec();
    want.sort_unstable();
    let k = k.min(words.len());
    let what = || std::format!("{} {name} len {} k {k}", backend.name(), words.len());
    assert_eq!(got[..k], want[..k], "{}: the first k", what());
    got.sort_unstable();
    assert_eq!(got, want, "{}: not a permutation", what());
}

/// The patterned inputs of the selection tests, `len` words each.
fn patterns(len: usize, next: &mut impl FnMut() -> u64) -> Vec<(&'static str, Vec<u64>)> {
    let n = len as u64;
    // Musser's median-of-3 killer, for a pivot rule this module does not use: cheap to keep.
    let mut killer: Vec<u64> = (0..n).collect();
    let half = len / 2;
    for i in 1..=half {
        if i % 2 == 1 {
            killer[i - 1] = i as u64;
            killer[i] = (half + i) as u64;
        }
        killer[half + i - 1] = 2 * i as u64;
    }
    std::vec![
        ("median-of-3 killer", killer),
        ("sawtooth", (0..n).map(|i| (i % 97) << 32 | i).collect()),
        ("random", (0..len).map(|_| next()).collect()),
        ("ascending", (0..n).collect()),
        ("descending", (0..n).rev().collect()),
        ("organ pipe", (0..n).map(|i| i.min(n - 1 - i) << 32 | i).collect()),
        ("equal keys", (0..n).map(|i| 7 << 32 | i).collect()),
        ("equal words", std::vec![42; len]),
        ("two words", (0..len).map(|_| next() & 1).collect()),
        ("all ones", std::vec![u64::MAX; len]),
    ]
}

/// Random words of every length to 600 and a few long ones (fewer under miri), at k 1, half, all.
#[test]
fn sorts_random_words() {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    // Miri: nothing to sort, leaves of one and two vectors, one partition (65, a leaf past), several
    // (129: steps of the loop, parts kept for later), at half (parts past k dropped) and all of it
    // (every leaf), the packed words at half only; lengths to 200 at k 1 too are slow there, most of
    // it the leaves' networks.
    let lengths: Vec<usize> = if cfg!(miri) {
        [0, 1, 7, 65, 129].into()
    } else {
        (0..=600).chain([1000, 5000, LONG]).collect()
    };
    let ks = |len: usize| -> Vec<usize> {
        if cfg!(miri) {
            [len / 2, len].into()
        } else {
            [0, 1, len / 2, len, len + 1].into()
        }
    };
    for (backend, engine) in engines() {
        for &len in &lengths {
            let words: Vec<u64> = (0..len).map(|_| next()).collect();
            let packed: Vec<u64> = (0..len as u64).map(|i| (next() % 3) << 32 | i).collect();
            for k in ks(len) {
                check_sort(backend, engine, &words, k, "random");
                if !cfg!(miri) || k < len {
                    check_sort(backend, engine, &packed, k, "packed");
                }
            }
        }
    }
}

/// Patterned inputs, long and short, at a few k.
#[test]
#[cfg_attr(
    miri,
    ignore = "quicksort_worst_cases_fall_back runs every pattern through the same quicksort under miri"
)]
fn sorts_patterned_inputs() {
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let lengths: &[usize] = &[129, 257, 1000, 4097, 5000, LONG];
    for &len in lengths {
        for (backend, engine) in engines() {
            for (name, words) in &patterns(len, &mut next) {
                for k in [1, 2, len / 100 + 1, len / 3, len / 2, len / 2 + 1, len - 1, len] {
                    check_sort(backend, engine, words, k, name);
                }
            }
        }
    }
}

/// Random and patterned words take at most about `log2(n)` partitions a level and never fall back;
/// equal words and a budget too small fall back to `core`'s sort, and the result is still right.
#[test]
fn quicksort_worst_cases_fall_back() {
    type Lanes = crate::simd::portable::U64x4;
    // Miri: 192 words at a quarter, one or two partitions a pattern (the first with no rest), parts
    // kept for later and parts past k dropped, the repeated patterns falling back; 256 at half is
    // slow there, most of it the leaves' networks.
    let len = if cfg!(miri) { 192 } else { LONG };
    let ks: &[usize] = if cfg!(miri) { &[len / 4] } else { &[1, len / 2, len] };
    let mut next = xorshift(11);
    for (name, words) in patterns(len, &mut next) {
        for &k in ks {
            let mut got = words.clone();
            let rounds = quicksort::<Lanes>(&mut got, k, SORT_WORK_RATIO);
            let mut want = words.clone();
            want.sort_unstable();
            assert_eq!(got[..k], want[..k], "{name} {k}");
            let repeated = matches!(name, "equal words" | "two words" | "all ones");
            assert_eq!(rounds.fell_back, repeated, "{name} {k} {rounds:?}");
            // Every partition of a part longer than a leaf splits it: fewer partitions than leaves.
            assert!(rounds.rounds <= 2 * len / 32, "{name} {k} {rounds:?}");
        }
    }
    // A budget of zero: `core` sorts it all.
    let random: Vec<u64> = (0..len).map(|_| next()).collect();
    let mut words = random.clone();
    let rounds = quicksort::<Lanes>(&mut words, len / 3, 0);
    assert_eq!(
        rounds,
        Rounds {
            rounds: 0,
            fell_back: true
        }
    );
    let mut want = random;
    want.sort_unstable();
    assert_eq!(words[..len / 3], want[..len / 3]);
}
