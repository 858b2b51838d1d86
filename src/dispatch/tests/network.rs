//! The network kernels on every engine this CPU has.

use std::vec::Vec;

use super::{OnEngine, engines};
use crate::dispatch::engine::Backend;
use crate::dispatch::engine::Engine;
use crate::kernels::testing::xorshift;

/// Sorts `entries` with `engine` for `k` and checks the first `k` against `core`'s sort, and that
/// the whole is still a permutation of the input.
fn check(backend: Backend, engine: Engine, entries: &[u64], k: usize) {
    let mut got = entries.to_vec();
    if engine.network_sort(&mut got, k).is_none() {
        return;
    }
    let mut want = entries.to_vec();
    want.sort_unstable();
    assert_eq!(got[..k], want[..k], "{} len {} k {k}", backend.name(), entries.len());
    got.sort_unstable();
    assert_eq!(got, want, "{} len {}: not a permutation", backend.name(), entries.len());
}

/// The 0-1 principle: a comparator network that sorts every sequence of 0s and 1s sorts everything.
/// Every 0/1 input up to 16 entries (one to four vectors on every ISA, padded lanes included).
#[test]
fn sorts_every_zero_one_input_up_to_16() {
    for (backend, engine) in engines() {
        // Miri interprets: 2^16 inputs of 16 would take it hours; up to 5 still covers
        // one vector of the portable engine it runs (4 lanes of u64) and two, the second partly past
        // the end.
        let longest = if cfg!(miri) { 5 } else { 16 };
        for len in 1..=longest {
            for bits in 0..1u32 << len {
                let entries: Vec<u64> = (0..len).map(|i| u64::from(bits >> i & 1)).collect();
                check(backend, engine, &entries, len);
            }
        }
    }
}

/// The K-th smallest of 1, 2 or 4 vectors of keys (the group minima behind the bounds, the
/// partition's pivot) is that of `core`'s sort, for every K, in 32- and 64-bit lanes on every engine:
/// keys from a small range (ties across the halves the merge keeps) and from the whole lane.
#[test]
fn kth_smallest_is_the_sorted_kth() {
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    for (backend, engine) in engines() {
        let mut answered = 0;
        for wide in [false, true] {
            for vectors in [1, 2, 4] {
                for lanes in [2, 4, 8, 16] {
                    // Miri: one round of each range (the whole test is slow under Miri).
                    for round in 0..if cfg!(miri) { 2 } else { 8 } {
                        let range = if round % 2 == 0 {
                            5
                        } else if wide {
                            u64::MAX
                        } else {
                            u32::MAX.into()
                        };
                        let keys: Vec<u64> = (0..vectors * lanes).map(|_| next() % range).collect();
                        let mut sorted = keys.clone();
                        sorted.sort_unstable();
                        for k in 1..=keys.len() {
                            let Some(got) = engine.kth_smallest(&keys, vectors, k, wide) else {
                                break;
                            };
                            assert_eq!(got, sorted[k - 1], "{} {keys:?} k {k}", backend.name());
                            answered += 1;
                        }
                    }
                }
            }
        }
        // Every engine but the scalar one has lanes: 8 rounds of 1, 2 and 4 vectors, both widths.
        assert!(answered > 0 || matches!(engine, Engine::Scalar), "{}", backend.name());
    }
}

/// Lengths across every block boundary (1, 4 and 16 vectors in registers, then merges of up to 16
/// blocks in memory), random words and random 0/1 words, every K that changes which part is final.
#[test]
fn sorts_every_length_and_prefix() {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    for (backend, engine) in engines() {
        let lengths: Vec<usize> = if cfg!(miri) {
            // Each path once on the portable engine's 4 lanes: nothing to sort (0, 1), then one, two,
            // four, eight and sixteen vectors in registers (3, 5, 16, 31, 64: partly filled, full and
            // the largest), and three blocks merged in memory (129: the half-cleaners at block
            // distance, partners past the end, the last vector one entry long).
            [0, 1, 3, 5, 16, 31, 64, 129].into()
        } else {
            (0..300)
                .chain((300..2100).step_by(37))
                .chain([1024, 2048, 2049, 4096])
                .collect()
        };
        for len in lengths {
            let words: Vec<u64> = (0..len).map(|_| next()).collect();
            let zero_one: Vec<u64> = (0..len).map(|_| next() & 1).collect();
            let few: Vec<u64> = (0..len).map(|_| (next() % 5) | (u64::MAX << 3)).collect();
            // Miri: one k and one input a length (each check is slow there). The network does not
            // branch on the entries, so every input of a length makes the same loads and stores, and K
            // only chooses the blocks the last merge in memory cleans: half skips some, cleans others.
            // The native run checks the values of all three inputs at every k.
            let ks: &[usize] = if cfg!(miri) {
                &[len / 2]
            } else {
                &[len, len / 2, len / 3 + 1, 1]
            };
            for k in ks.iter().copied().filter(|&k| k <= len) {
                check(backend, engine, &words, k);
                if !cfg!(miri) {
                    check(backend, engine, &zero_one, k);
                    check(backend, engine, &few, k);
                }
            }
        }
    }
}
