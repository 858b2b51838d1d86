//! Criterion benchmarks: one group per data pattern (uniform, normal, ascending, descending, all-equal,
//! NaN-heavy), f32 rows across the filter's thresholds (short rows where the head is most of the row,
//! long rows where the block scan dominates, K small and K > n/16), every engine this CPU has beside
//! the dispatched one, and the reference on small sizes only; then 8- and 16-bit keys with K a large
//! part of the row (counted, not filtered; short rows bisected); then a row streamed through an
//! `Accumulator` in chunks. Each iteration's result is checked against the portable engine's, so a fast
//! wrong engine fails instead of winning.
//!
//! `cargo bench --bench topk -- --test` runs every case once (the test command does).

// `criterion_group!` and `criterion_main!` generate undocumented public functions.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use topk_kernels::{Accumulator, Backend, Direction, Element, Request, Slot, TopK, View, ViewMut, f16};

/// (rows, row length, K): sizes around the engines' thresholds.
const SHAPES: [(usize, usize, usize); 10] = [
    (4096, 256, 8),       // MoE routing: short rows, head = 16 of 256
    (4096, 256, 24),      // K > 16 on short rows: collected under a bound of 64 groups
    (4096, 256, 64),      // K > 16 on short rows: selected whole
    (256, 1024, 32),      // rows of a few thousand, K > 8: collected under the pieces' bound
    (4096, 40, 1),        // argmax of rows shorter than a block: K = 1's own path
    (1, 4096, 16),        // one medium row
    (1, 1_000_000, 100),  // the long-row case of the issue
    (32, 128_256, 50),    // LLM vocabulary
    (1, 1_000_000, 1000), // large K, still < n/16
    (256, 1024, 512),     // K > n/16: the buffer holds the whole row
];

#[derive(Clone, Copy)]
enum Pattern {
    Uniform,
    Normal,
    Ascending,
    Descending,
    Equal,
    NanMix,
}

impl Pattern {
    fn name(self) -> &'static str {
        match self {
            Pattern::Uniform => "uniform",
            Pattern::Normal => "normal",
            Pattern::Ascending => "ascending",
            Pattern::Descending => "descending",
            Pattern::Equal => "equal",
            Pattern::NanMix => "nan-mix",
        }
    }

    fn data(self, len: usize) -> Vec<f32> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        (0..len)
            .map(|i| match self {
                Pattern::Uniform => uniform(),
                // Irwin-Hall: the sum of four uniforms is close enough to normal for timing.
                Pattern::Normal => uniform() + uniform() + uniform() + uniform() - 2.0,
                Pattern::Ascending => i as f32,
                Pattern::Descending => (len - i) as f32,
                Pattern::Equal => 1.0,
                Pattern::NanMix if uniform() < 0.25 => f32::from_bits(0x7FC0_0000 | i as u32 & 0xFFFF),
                Pattern::NanMix => uniform(),
            })
            .collect()
    }
}

/// Runs `backend` and returns the indices (the values follow from them).
fn run<T: Element>(data: &[T], rows: usize, n: usize, k: usize, backend: Backend, out: &mut (Vec<T>, Vec<u32>)) {
    let mut plan = TopK::new(Request {
        input: View::contiguous(data, [rows, n]).unwrap(),
        axis: 1,
        k,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut out.0, [rows, k]).unwrap(),
        indices: ViewMut::contiguous(&mut out.1, [rows, k]).unwrap(),
    })
    .unwrap();
    let mut scratch = vec![0u64; plan.scratch_len()];
    let all = 0..plan.sequences();
    plan.run_sequences(all, backend, &mut scratch).unwrap();
}

/// Every engine this CPU has, `Auto` first.
fn engines() -> Vec<Backend> {
    [
        Backend::Auto,
        Backend::Scalar,
        Backend::Portable,
        Backend::Avx2,
        Backend::Avx512,
    ]
    .into_iter()
    .chain([Backend::Neon])
    .filter(|b| b.is_available())
    .collect()
}

/// Times every engine on `rows` rows of `data`, each iteration checked against the portable engine.
fn bench_engines<T: Element + PartialEq + core::fmt::Debug>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    data: &[T],
    (rows, n, k): (usize, usize, usize),
) {
    let mut expected = (vec![T::ZERO; rows * k], vec![0u32; rows * k]);
    run(data, rows, n, k, Backend::Portable, &mut expected);
    group.throughput(Throughput::Elements((rows * n) as u64));
    let naive_ok = rows * n * k <= 1 << 22;
    let backends = engines().into_iter().chain(naive_ok.then_some(Backend::Naive));
    for backend in backends {
        let id = BenchmarkId::new(backend.name(), format!("{}_{rows}x{n}_k{k}", T::NAME));
        let mut out = (vec![T::ZERO; rows * k], vec![0u32; rows * k]);
        group.bench_function(id, |b| {
            b.iter(|| {
                run(black_box(data), rows, n, k, backend, &mut out);
                assert_eq!(out.1, expected.1, "{} disagrees", backend.name());
            })
        });
    }
}

fn patterns(c: &mut Criterion) {
    for pattern in [
        Pattern::Uniform,
        Pattern::Normal,
        Pattern::Ascending,
        Pattern::Descending,
        Pattern::Equal,
        Pattern::NanMix,
    ] {
        let mut group = c.benchmark_group(pattern.name());
        group.sample_size(10);
        for shape in SHAPES {
            bench_engines(&mut group, &pattern.data(shape.0 * shape.1), shape);
        }
        group.finish();
    }
}

/// 8- and 16-bit keys with K a large part of the row, which every engine counts instead of filtering:
/// half of 1M u8, and full sorts of 4096-element f16 rows (top-p sampling sorts the whole vocabulary);
/// and short rows of them, which the SIMD engines bisect for the K-th key instead of counting (4096
/// rows of 256 u8 with K = 64, u16 with K = 100).
fn counted(c: &mut Criterion) {
    let mut group = c.benchmark_group("counted");
    group.sample_size(10);
    let uniform = Pattern::Uniform.data(1 << 20);
    let bytes: Vec<u8> = uniform.iter().map(|&x| (x * 256.0) as u8).collect();
    bench_engines(&mut group, &bytes[..1_000_000], (1, 1_000_000, 500_000));
    let normal = Pattern::Normal.data(64 * 4096);
    let halves: Vec<f16> = normal.iter().map(|&x| f16::from_f32(x)).collect();
    bench_engines(&mut group, &halves, (64, 4096, 4096));
    bench_engines(&mut group, &bytes, (4096, 256, 64));
    let words: Vec<u16> = uniform.iter().map(|&x| (x * 65536.0) as u16).collect();
    bench_engines(&mut group, &words, (4096, 256, 100));
    group.finish();
}

/// 1M f32 streamed through an `Accumulator` in chunks (an LLM vocabulary arriving in shards, a stream
/// cut into blocks), against one call on the whole row; each iteration's result is checked against it.
/// The first chunk, and once there is a K-th kept key chunks of 1024 on (scanned under that key), are
/// selected by the engine before they are offered; the others are offered with the blocks that cannot
/// enter skipped.
fn accumulated(c: &mut Criterion) {
    let mut group = c.benchmark_group("accumulated");
    group.sample_size(10);
    let (n, k) = (1_000_000, 100);
    let data = Pattern::Uniform.data(n);
    let mut expected = (vec![0.0f32; k], vec![0u32; k]);
    run(&data, 1, n, k, Backend::Auto, &mut expected);
    group.throughput(Throughput::Elements(n as u64));
    for chunk in [n, 65_536, 4096, 256] {
        let id = BenchmarkId::new("accumulator", format!("f32_1x{n}_k{k}_chunks_of_{chunk}"));
        let mut slots = vec![Slot::EMPTY; Accumulator::<f32>::slots_len(k)];
        let mut out = (vec![0.0f32; k], vec![0u32; k]);
        group.bench_function(id, |b| {
            b.iter(|| {
                let mut acc = Accumulator::new(k, Direction::Decreasing, &mut slots).unwrap();
                for piece in black_box(&data).chunks(chunk) {
                    acc.push(View::contiguous(piece, [piece.len()]).unwrap()).unwrap();
                }
                let (values, indices) = (&mut out.0, &mut out.1);
                acc.finish(
                    ViewMut::contiguous(values, [k]).unwrap(),
                    ViewMut::contiguous(indices, [k]).unwrap(),
                )
                .unwrap();
                assert_eq!(out.1, expected.1, "the accumulator disagrees");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, patterns, counted, accumulated);
criterion_main!(benches);
