//! Criterion benchmarks of the word sorters under every selection, on each engine with vectors this CPU
//! has, beside `core`'s: the sorting network against `core`'s sort (whole and half), the vectorised
//! partition's selection against `select_nth_unstable` (random words, and words each below all before
//! them, as a compaction sees when every element enters), and its quicksort against the network after
//! a selection. They set the sorters' crossovers in `kernels/candidates.rs` and `kernels/sorter.rs`
//! (`SMALL`, the network's block limit). Each case's result is checked against `core`'s before it is timed.
//!
//! `cargo bench --features internals --bench sorters` (`-- --test` runs every case once).

// `criterion_group!` and `criterion_main!` generate undocumented public functions.
#![allow(missing_docs)]

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use topk_kernels::Backend;
use topk_kernels::internals::Sorters;

/// Random words from a fixed seed.
fn random_words(len: usize, seed: u64) -> Vec<u64> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
        .collect()
}

/// Words each below every one before it in the second half, the first half reversed: what a
/// compaction holds when ascending data is selected decreasing (the K kept, then K new ones).
fn entering_words(len: usize) -> Vec<u64> {
    let n = len as u64;
    let mut words: Vec<u64> = (0..n).map(|i| (n - i) << 32 | i).collect();
    words[..len / 2].reverse();
    words
}

/// Every engine with vectors this CPU has.
fn engines() -> impl Iterator<Item = (Backend, Sorters)> {
    Backend::ALL.into_iter().filter_map(|b| Some((b, Sorters::new(b)?)))
}

/// The `k` smallest of `words`, ascending, as `core` finds them.
fn smallest(words: &[u64], k: usize) -> Vec<u64> {
    let mut sorted = words.to_vec();
    sorted.sort_unstable();
    sorted.truncate(k);
    sorted
}

fn network_against_core(c: &mut Criterion) {
    let mut group = c.benchmark_group("network");
    for len in [16usize, 64, 128, 256, 1024, 2000] {
        let words = random_words(len, len as u64);
        group.throughput(Throughput::Elements(len as u64));
        for k in [len, len / 2] {
            let want = smallest(&words, k);
            let case = format!("{len}/k{k}");
            for (backend, sorters) in engines() {
                let mut check = words.clone();
                sorters.network_sort(&mut check, k);
                assert_eq!(check[..k], want[..], "{} network {case}", backend.name());
                group.bench_with_input(BenchmarkId::new(backend.name(), &case), &k, |b, &k| {
                    b.iter_batched_ref(
                        || words.clone(),
                        |w| sorters.network_sort(black_box(w), k),
                        BatchSize::SmallInput,
                    )
                });
            }
            group.bench_with_input(BenchmarkId::new("core", &case), &k, |b, &k| {
                b.iter_batched_ref(
                    || words.clone(),
                    |w| {
                        if k < w.len() {
                            w.select_nth_unstable(k - 1);
                        }
                        w[..k].sort_unstable();
                    },
                    BatchSize::SmallInput,
                )
            });
        }
    }
    group.finish();
}

fn partition_against_core(c: &mut Criterion) {
    let mut group = c.benchmark_group("partition select");
    for len in [128usize, 512, 4096, 100_000] {
        for (name, words) in [("random", random_words(len, 7)), ("entering", entering_words(len))] {
            group.throughput(Throughput::Elements(len as u64));
            let k = len / 8;
            let want = smallest(&words, k);
            let case = format!("{name}/{len}/k{k}");
            for (backend, sorters) in engines() {
                let mut check = words.clone();
                sorters.partition_select(&mut check, k);
                check[..k].sort_unstable();
                assert_eq!(check[..k], want[..], "{} select {case}", backend.name());
                group.bench_with_input(BenchmarkId::new(backend.name(), &case), &k, |b, &k| {
                    b.iter_batched_ref(
                        || words.clone(),
                        |w| sorters.partition_select(black_box(w), k),
                        BatchSize::LargeInput,
                    )
                });
            }
            group.bench_with_input(BenchmarkId::new("core", &case), &k, |b, &k| {
                b.iter_batched_ref(
                    || words.clone(),
                    |w| {
                        w.select_nth_unstable(k - 1);
                    },
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("partition sort");
    for len in [256usize, 1024, 4096, 100_000] {
        let words = random_words(len, 11);
        group.throughput(Throughput::Elements(len as u64));
        let k = len / 2;
        let want = smallest(&words, k);
        let case = format!("{len}/k{k}");
        for (backend, sorters) in engines() {
            let mut check = words.clone();
            sorters.partition_sort(&mut check, k);
            assert_eq!(check[..k], want[..], "{} quicksort {case}", backend.name());
            group.bench_with_input(BenchmarkId::new(backend.name(), &case), &k, |b, &k| {
                b.iter_batched_ref(
                    || words.clone(),
                    |w| sorters.partition_sort(black_box(w), k),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, network_against_core, partition_against_core);
criterion_main!(benches);
