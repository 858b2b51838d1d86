//! The mergeable accumulator and the rayon path give exactly what one call gives.

mod common;

use common::{Rng, Seed, Value, random_values};
use quickcheck::{QuickCheck, TestResult};
use topk_kernels::{Accumulator, Direction, Error, Request, Slot, View, ViewMut, naive};

/// Reference result of one sequence.
fn reference(data: &[i16], k: usize, direction: Direction) -> (Vec<i16>, Vec<u64>) {
    let (mut v, mut i) = (vec![0; k], vec![0; k]);
    naive::topk(Request {
        input: View::contiguous(data, [data.len()]).unwrap(),
        axis: 0,
        k,
        direction,
        values: ViewMut::contiguous(&mut v, [k]).unwrap(),
        indices: ViewMut::contiguous(&mut i, [k]).unwrap(),
    })
    .unwrap();
    (v, i)
}

fn finish(acc: Accumulator<'_, i16>, k: usize) -> (Vec<i16>, Vec<u64>) {
    let (mut v, mut i) = (vec![0; k], vec![0; k]);
    acc.finish(
        ViewMut::contiguous(&mut v, [k]).unwrap(),
        ViewMut::contiguous(&mut i, [k]).unwrap(),
    )
    .unwrap();
    (v, i)
}

/// Cut `data` at `cuts`, push the pieces into separate accumulators, merge them back to front.
fn pieces_merged(data: &[i16], cuts: &[usize], k: usize, direction: Direction) -> (Vec<i16>, Vec<u64>) {
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
    bounds.extend([0, data.len()]);
    bounds.sort_unstable();
    let mut buffers: Vec<Vec<Slot<i16>>> = bounds.windows(2).map(|_| vec![Slot::EMPTY; 2 * k]).collect();
    let mut accs: Vec<Accumulator<'_, i16>> = Vec::new();
    for (w, buf) in bounds.windows(2).zip(buffers.iter_mut()) {
        let mut acc = Accumulator::new(k, direction, buf).unwrap();
        acc.push_at(w[0] as u64, View::contiguous(&data[w[0]..w[1]], [w[1] - w[0]]).unwrap())
            .unwrap();
        accs.push(acc);
    }
    let mut last = accs.pop().unwrap();
    while let Some(acc) = accs.pop() {
        last.merge(&acc).unwrap();
    }
    assert_eq!(last.seen(), data.len() as u64);
    finish(last, k)
}

#[test]
fn pieces_in_any_order_equal_one_call() {
    fn prop(data: Vec<i16>, cuts: Vec<usize>, k: usize, decreasing: bool) -> TestResult {
        if data.is_empty() {
            return TestResult::discard();
        }
        // Few distinct values, so that ties cross the cuts.
        let data: Vec<i16> = data.iter().map(|x| x % 5).collect();
        let k = k % (data.len() + 1);
        let direction = if decreasing {
            Direction::Decreasing
        } else {
            Direction::Increasing
        };
        TestResult::from_bool(pieces_merged(&data, &cuts, k, direction) == reference(&data, k, direction))
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(Vec<i16>, Vec<usize>, usize, bool) -> TestResult);
}

#[test]
fn sequential_pushes_of_a_strided_sequence() {
    let data: Vec<i16> = (0..1000).map(|i| ((i * 7919) % 313) as i16 - 150).collect();
    let mut slots = vec![Slot::EMPTY; 20];
    let mut acc = Accumulator::new(10, Direction::Increasing, &mut slots).unwrap();
    // The odd elements, in pieces of 37, through a stride-2 view each.
    let odd: Vec<i16> = data.iter().skip(1).step_by(2).copied().collect();
    for start in (0..500).step_by(37) {
        let len = 37.min(500 - start);
        acc.push(View::new(&data, [len], [2], 1 + 2 * start).unwrap()).unwrap();
    }
    assert_eq!(finish(acc, 10), reference(&odd, 10, Direction::Increasing));
}

/// Chunks of every length, pushed in position order or shuffled, through contiguous and reversed views:
/// the engine's (contiguous, before the first compaction, or of 1024 on under the K-th kept key, which
/// shuffled pieces may tie ahead of) and the offers with blocks skipped
/// against the K-th key (loaded whole when contiguous, gathered when reversed). Every type, K on both
/// sides of the engine's limits (16, and 128 candidates on the stack), both directions, bit for bit
/// against one call of the reference.
#[test]
fn long_chunks_equal_one_call() {
    fn check<T: Value>(rng: &mut Rng) {
        // One sequence in ten is long enough for chunks the engine takes after the first compaction.
        let long = rng.chance(1, 10);
        let len = if long {
            rng.range(70_000, 160_000)
        } else {
            rng.range(1, 6000)
        };
        let data: Vec<T> = random_values(rng, len);
        let k = rng.pick(&[1, 2, 8, 16, 17, 50, 100, 128, 129]).min(len);
        let direction = if rng.chance(1, 2) {
            Direction::Decreasing
        } else {
            Direction::Increasing
        };
        // The sequence is `data` read backwards from its end, or every element in order.
        let reversed = rng.chance(1, 3);
        let sequence: Vec<T> = if reversed {
            data.iter().rev().copied().collect()
        } else {
            data.clone()
        };
        let (mut expected_v, mut expected_i) = (vec![T::ZERO; k], vec![0u64; k]);
        naive::topk(Request {
            input: View::contiguous(&sequence, [len]).unwrap(),
            axis: 0,
            k,
            direction,
            values: ViewMut::contiguous(&mut expected_v, [k]).unwrap(),
            indices: ViewMut::contiguous(&mut expected_i, [k]).unwrap(),
        })
        .unwrap();
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < len {
            let piece = rng.range(1, if long { 100_000 } else { 4000 }).min(len - start);
            pieces.push((start, piece));
            start += piece;
        }
        // Pieces out of order: an element tied with the K-th kept key may now come before it.
        let shuffled = rng.chance(1, 4);
        if shuffled {
            rng.shuffle(&mut pieces);
        }
        let mut slots = vec![Slot::EMPTY; 2 * k];
        let mut acc = Accumulator::new(k, direction, &mut slots).unwrap();
        for (start, piece) in pieces {
            let view = if reversed {
                View::new(&data, [piece], [-1], len - 1 - start).unwrap()
            } else {
                View::contiguous(&data[start..start + piece], [piece]).unwrap()
            };
            acc.push_at(start as u64, view).unwrap();
        }
        let (mut v, mut i) = (vec![T::ZERO; k], vec![0u64; k]);
        acc.finish(
            ViewMut::contiguous(&mut v, [k]).unwrap(),
            ViewMut::contiguous(&mut i, [k]).unwrap(),
        )
        .unwrap();
        let bits = |values: &[T]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            (bits(&v), i),
            (bits(&expected_v), expected_i),
            "{} len {len} k {k} {direction:?} reversed {reversed} shuffled {shuffled}",
            T::NAME
        );
    }
    common::check_seeds(40, |Seed(seed)| {
        common::replayable("long_chunks_equal_one_call", seed, || {
            let mut rng = Rng::new(seed);
            check::<f32>(&mut rng);
            check::<f64>(&mut rng);
            check::<topk_kernels::f16>(&mut rng);
            check::<topk_kernels::bf16>(&mut rng);
            check::<u8>(&mut rng);
            check::<i16>(&mut rng);
            check::<i32>(&mut rng);
            check::<u64>(&mut rng);
        })
    });
}

#[test]
fn accumulator_errors() {
    let mut small = [Slot::<u8>::EMPTY; 3];
    assert_eq!(
        Accumulator::new(2, Direction::Decreasing, &mut small).err(),
        Some(Error::Scratch { needed: 4, given: 3 })
    );
    let (mut a, mut b) = ([Slot::<u8>::EMPTY; 4], [Slot::<u8>::EMPTY; 6]);
    let mut two = Accumulator::new(2, Direction::Decreasing, &mut a).unwrap();
    let three = Accumulator::new(3, Direction::Decreasing, &mut b).unwrap();
    assert_eq!(two.merge(&three), Err(Error::Merge { k: 2, other_k: 3 }));
    two.push(View::contiguous(&[1u8], [1]).unwrap()).unwrap();
    let (mut v, mut i) = ([7u8; 2], [7u32; 2]);
    let err = two.finish(
        ViewMut::contiguous(&mut v, [2]).unwrap(),
        ViewMut::contiguous(&mut i, [2]).unwrap(),
    );
    assert_eq!(err, Err(Error::K { k: 2, len: 1, axis: 0 }));
    assert_eq!((v, i), ([7; 2], [7; 2]), "nothing written on error");
}

#[cfg(feature = "rayon")]
mod parallel {
    use super::common::{Rng, Value, random_values};
    use topk_kernels::{Direction, Request, View, ViewMut, naive, parallel, topk};

    fn compare(sizes: [usize; 2], axis: usize, k: usize, threads: usize) {
        let n: usize = sizes.iter().product();
        let data: Vec<f32> = (0..n)
            .map(|i| ((i * 2_654_435_761usize) % 1009) as f32 - 500.0)
            .collect();
        let mut out = sizes;
        out[axis] = k;
        let m: usize = out.iter().product();
        let run = |parallel_run: bool| {
            let (mut v, mut i) = (vec![0f32; m], vec![0u32; m]);
            let input = View::contiguous(&data, sizes).unwrap();
            let (values, indices) = (
                ViewMut::contiguous(&mut v, out).unwrap(),
                ViewMut::contiguous(&mut i, out).unwrap(),
            );
            if parallel_run {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    parallel::topk(Request {
                        input,
                        axis: axis as isize,
                        k,
                        direction: Direction::Decreasing,
                        values,
                        indices,
                    })
                })
                .unwrap();
            } else {
                let mut scratch = vec![0; topk_kernels::min_scratch_len::<f32>(sizes[axis], k)];
                topk(
                    Request {
                        input,
                        axis: axis as isize,
                        k,
                        direction: Direction::Decreasing,
                        values,
                        indices,
                    },
                    &mut scratch,
                )
                .unwrap();
            }
            (v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), i)
        };
        assert_eq!(run(true), run(false), "{sizes:?} axis {axis} k {k} threads {threads}");
    }

    #[test]
    fn many_rows_split_by_sequence() {
        for threads in [1, 2, 3] {
            compare([64, 100], 1, 7, threads);
            compare([64, 100], 0, 64, threads);
        }
    }

    #[test]
    fn long_rows_split_into_pieces() {
        // Rows over 2 MiB are split: K up to 128 into chunks, larger K into one piece per thread.
        for threads in [2, 3] {
            compare([1, 600_000], 1, 100, threads);
            compare([2, 600_000], 1, 1000, threads);
            compare([600_000, 1], 0, 5, threads);
            // A last chunk and a last piece (on 3 threads) shorter than K.
            compare([1, 524_298], 1, 100, threads);
            compare([1, 524_298], 1, 1000, threads);
            // Rows dealt out whole, and the rows left over cut.
            compare([threads + 1, 600_000], 1, 100, threads);
            compare([2 * threads + 1, 600_000], 1, 50, threads);
        }
    }

    /// One long row of random values (ties, NaNs, sorted runs) on 2-5 threads against the reference,
    /// bit for bit: K up to the accumulators' 128 (64 for 64-bit types) is cut into chunks that the
    /// threads take from each other's shares, larger K into one piece per thread.
    fn random_long_rows<T: Value>(seed: u64) {
        let mut rng = Rng::new(seed);
        // Over 2 MiB, so that the row is split.
        let min_len = (2 << 20) / std::mem::size_of::<T>() + 1;
        for _ in 0..4 {
            let len = rng.range(min_len, min_len + min_len / 2);
            let data: Vec<T> = random_values(&mut rng, len);
            let k = rng.pick(&[1, 8, 63, 64, 65, 100, 128, 129, 700]);
            let direction = rng.pick(&[Direction::Decreasing, Direction::Increasing]);
            let threads = rng.range(2, 6);
            let (mut expected_values, mut expected_indices) = (vec![T::ZERO; k], vec![0u32; k]);
            naive::topk(Request {
                input: View::contiguous(&data, [len]).unwrap(),
                axis: 0,
                k,
                direction,
                values: ViewMut::contiguous(&mut expected_values, [k]).unwrap(),
                indices: ViewMut::contiguous(&mut expected_indices, [k]).unwrap(),
            })
            .unwrap();
            let (mut values, mut indices) = (vec![T::ZERO; k], vec![0u32; k]);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                parallel::topk(Request {
                    input: View::contiguous(&data, [len]).unwrap(),
                    axis: 0,
                    k,
                    direction,
                    values: ViewMut::contiguous(&mut values, [k]).unwrap(),
                    indices: ViewMut::contiguous(&mut indices, [k]).unwrap(),
                })
            })
            .unwrap();
            let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let case = format!("len {len} k {k} {direction:?} threads {threads}");
            assert_eq!(indices, expected_indices, "{case}");
            assert_eq!(bits(&values), bits(&expected_values), "{case}");
        }
    }

    #[test]
    fn random_long_rows_of_each_width() {
        random_long_rows::<f32>(71);
        random_long_rows::<half::f16>(72);
        random_long_rows::<u8>(73);
        random_long_rows::<i64>(74);
        random_long_rows::<f64>(75);
    }
}
