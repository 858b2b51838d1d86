//! Edge cases with their expected outputs written out (not only compared with the reference): ties at the
//! K boundary, NaN payloads and signs, signed zeros, integer extremes, K == n, K == 0, empty tensors,
//! long rows, sorted input, strided, broadcast and reversed views. Every backend the CPU has runs each
//! case; all must agree bit for bit and leave the guard elements around the outputs untouched.

mod common;

use common::*;
use topk_kernels::{Backend, Direction, Error, Request, TopK, View, ViewMut, bf16, f16, min_scratch_len, topk};

use Direction::{Decreasing, Increasing};

/// Guard elements on each side of every output.
const GUARD: usize = 3;

/// Which backends run: the reference is O(n·K), too slow for the long rows in debug builds.
#[derive(Clone, Copy, PartialEq)]
enum Engines {
    All,
    Filtering,
}

/// Runs every available backend (and `topk`) on contiguous outputs between guard elements; asserts that
/// they agree bit for bit, write every output and nothing else; returns the outputs.
fn select_with<T: Value, I: TestIndex, const D: usize>(
    input: View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    engines: Engines,
) -> (Vec<T>, Vec<I>) {
    let mut out = input.sizes();
    out[axis] = k;
    let mut strides = [0isize; D];
    let mut step = 1;
    for d in (0..D).rev() {
        strides[d] = step;
        step *= out[d].max(1) as isize;
    }
    select_into(input, axis, k, direction, engines, strides)
}

/// [`select_with`] on outputs laid out by `strides` (not negative, no two elements at one address).
fn select_into<T: Value, I: TestIndex, const D: usize>(
    input: View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    engines: Engines,
    strides: [isize; D],
) -> (Vec<T>, Vec<I>) {
    let mut out = input.sizes();
    out[axis] = k;
    let count: usize = out.iter().product();
    let span = if count == 0 {
        0
    } else {
        1 + (0..D).map(|d| (out[d] - 1) * strides[d] as usize).sum::<usize>()
    };
    let layout = Strided {
        sizes: out,
        strides,
        offset: GUARD,
        len: span + 2 * GUARD,
    };
    // Sentinels: all-ones values (a NaN for floats, MAX or -1 for integers) and all-ones indices; the
    // index check below proves every element was written.
    let value_sentinel = mask(T::WIDTH);
    let mut first: Option<(Vec<u64>, Vec<I>)> = None;
    let mut result = None;
    let backends = Backend::ALL
        .into_iter()
        .filter(|&b| engines == Engines::All || b != Backend::Naive);
    for backend in backends.map(Some).chain([None]) {
        let mut values = vec![T::from_bits(value_sentinel); layout.len];
        let mut indices = vec![I::SENTINEL; layout.len];
        let views = |values, indices| {
            (
                ViewMut::new(values, out, strides, GUARD).unwrap(),
                ViewMut::new(indices, out, strides, GUARD).unwrap(),
            )
        };
        let (v, i) = views(&mut values, &mut indices);
        let outcome = match backend {
            Some(backend) => {
                let mut plan = TopK::new(Request {
                    input,
                    axis: axis as isize,
                    k,
                    direction,
                    values: v,
                    indices: i,
                })
                .unwrap();
                let mut scratch = vec![0; plan.scratch_len()];
                let all = 0..plan.sequences();
                plan.run_sequences(all, backend, &mut scratch)
            }
            None => {
                let mut scratch = vec![0; min_scratch_len::<T>(input.sizes()[axis], k)];
                topk(
                    Request {
                        input,
                        axis: axis as isize,
                        k,
                        direction,
                        values: v,
                        indices: i,
                    },
                    &mut scratch,
                )
            }
        };
        let name = backend.map_or("topk", Backend::name);
        match outcome {
            Ok(()) => {}
            Err(Error::Backend { .. }) if backend.is_some_and(|b| !b.is_available()) => continue,
            Err(e) => panic!("{name}: {e}"),
        }
        let context = || format!("{name}, {} {}, k {k} {direction:?}", T::NAME, I::NAME);
        check_guards(&values, &layout, |v: T| v.to_bits() == value_sentinel, &context);
        check_guards(&indices, &layout, |i: I| i == I::SENTINEL, &context);
        let got_values = gather(&values, &layout);
        let got_indices = gather(&indices, &layout);
        assert!(
            !got_indices.contains(&I::SENTINEL),
            "an output was not written: {}",
            context()
        );
        let bits: Vec<u64> = got_values.iter().map(|v| v.to_bits()).collect();
        match &first {
            None => {
                first = Some((bits, got_indices.clone()));
                result = Some((got_values, got_indices));
            }
            Some(expected) => assert_eq!(&(bits, got_indices), expected, "backends disagree: {}", context()),
        }
    }
    result.expect("at least the portable backends run")
}

fn select<T: Value, const D: usize>(
    input: View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
) -> (Vec<T>, Vec<u32>) {
    select_with::<T, u32, D>(input, axis, k, direction, Engines::All)
}

/// 1-D shorthand.
fn select_1d<T: Value>(data: &[T], k: usize, direction: Direction) -> (Vec<T>, Vec<u32>) {
    select(View::contiguous(data, [data.len()]).unwrap(), 0, k, direction)
}

fn bits<T: Value>(values: &[T]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn ties_at_the_k_boundary_go_to_the_lower_position() {
    let x = [5i32, 3, 5, 3, 5];
    assert_eq!(select_1d(&x, 2, Decreasing), (vec![5, 5], vec![0, 2]));
    assert_eq!(select_1d(&x, 2, Increasing), (vec![3, 3], vec![1, 3]));
    assert_eq!(select_1d(&x, 3, Decreasing), (vec![5, 5, 5], vec![0, 2, 4]));
    assert_eq!(select_1d(&x, 3, Increasing), (vec![3, 3, 5], vec![1, 3, 0]));
    assert_eq!(select_1d(&x, 4, Decreasing), (vec![5, 5, 5, 3], vec![0, 2, 4, 1]));
    let y = [1.5f32, 0.5, 1.5, 0.5, 1.5];
    assert_eq!(select_1d(&y, 2, Decreasing), (vec![1.5, 1.5], vec![0, 2]));
    assert_eq!(select_1d(&y, 2, Increasing), (vec![0.5, 0.5], vec![1, 3]));
}

#[test]
fn all_equal_rows_keep_positions_in_order() {
    let x = [7u16; 12];
    for direction in [Decreasing, Increasing] {
        let (v, i) = select(View::contiguous(&x, [3, 4]).unwrap(), 1, 3, direction);
        assert_eq!(v, [7; 9]);
        assert_eq!(i, [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }
}

/// Counted rows (8-bit keys, K a large part of the row) whose selected elements and the K-th's ties
/// fill the candidate buffer (2K) exactly, with the best last and more elements after: the elements
/// not taken must not overwrite the last one gathered.
#[test]
fn counted_rows_whose_ties_fill_the_buffer() {
    let k = 32;
    // 54 ties of the K-th key, then the 10 best: 64 = 2K gathered, then 236 elements below all.
    let mut x = vec![100u8; 54];
    x.extend([200u8; 10]);
    x.extend(std::iter::repeat_n(50u8, 236));
    let (values, indices) = select_1d(&x, k, Decreasing);
    assert_eq!(values, [[200u8; 10].as_slice(), &[100; 22]].concat());
    assert_eq!(indices, (54..64).chain(0..22).collect::<Vec<u32>>());
    // The same row increasing, in i8.
    let y: Vec<i8> = x
        .iter()
        .map(|&v| match v {
            200 => -100,
            100 => -50,
            _ => 30,
        })
        .collect();
    let (values, indices) = select_1d(&y, k, Increasing);
    assert_eq!(values, [[-100i8; 10].as_slice(), &[-50; 22]].concat());
    assert_eq!(indices, (54..64).chain(0..22).collect::<Vec<u32>>());
}

/// Short 8-bit sequences with K of half or more, counted (strided where they lie side by side): every
/// backend agrees with the reference, ties in position order, down columns and along rows.
#[test]
fn short_counted_sequences_of_bytes() {
    let x: Vec<u8> = (0..183 * 40)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 27) as u8)
        .collect();
    let y: Vec<i8> = x.iter().map(|&v| v as i8 - 16).collect();
    for k in [92, 150, 183] {
        for direction in [Decreasing, Increasing] {
            let (columns, _) = select(View::contiguous(&x, [183, 40]).unwrap(), 0, k, direction);
            let (rows, _) = select(View::contiguous(&y, [40, 183]).unwrap(), 1, k, direction);
            assert_eq!((columns.len(), rows.len()), (40 * k, 40 * k));
        }
    }
}

/// 64-bit sequences down columns with K above 8, gathered a row at a time: keys a few low bits apart
/// under a spread over all 64 bits, runs of ties, and both ends of the gathered length (513: side by
/// side).
#[test]
fn gathered_sequences_of_wide_keys() {
    let mut state = 3u64;
    let mut random = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state
    };
    for len in [9, 100, 512, 513] {
        let x: Vec<u64> = (0..len * 21).map(|_| (random() % 3) << 62 | (random() >> 60)).collect();
        let y: Vec<i64> = x.iter().map(|&v| v as i64).collect();
        let z: Vec<f64> = x.iter().map(|&v| ((v >> 60) as f64 - 7.5) * (v & 3) as f64).collect();
        for k in [9, 16, 57, len] {
            let k = k.min(len);
            for direction in [Decreasing, Increasing] {
                let (a, _) = select(View::contiguous(&x, [len, 21]).unwrap(), 0, k, direction);
                let (b, _) = select(View::contiguous(&y, [len, 3, 7]).unwrap(), 0, k, direction);
                let (c, _) = select(View::contiguous(&z, [3, len, 7]).unwrap(), 1, k, direction);
                assert_eq!((a.len(), b.len(), c.len()), (21 * k, 21 * k, 21 * k));
            }
        }
    }
}

/// NaN bit patterns of a float type: (canonical, negative canonical, quiet with payload 1, signalling
/// with payload 1, all ones).
fn nans<T: Value>() -> [u64; 5] {
    let (exponent, mantissa) = T::FLOAT.unwrap();
    let infinity = mask(exponent) << mantissa;
    let quiet = 1 << (mantissa - 1);
    let sign = 1 << (T::WIDTH - 1);
    [
        infinity | quiet,
        sign | infinity | quiet,
        infinity | quiet | 1,
        infinity | 1,
        mask(T::WIDTH),
    ]
}

fn one<T: Value>() -> u64 {
    let (exponent, mantissa) = T::FLOAT.unwrap();
    mask(exponent - 1) << mantissa
}

fn nan_at_the_front_and_back<T: Value>() {
    let [nan, ..] = nans::<T>();
    let x: Vec<T> = [nan, one::<T>(), 0, nan].map(T::from_bits).to_vec();
    let (v, i) = select_1d(&x, 2, Decreasing);
    assert_eq!((bits(&v), i), (vec![nan, nan], vec![0, 3]), "{}", T::NAME);
    let (v, i) = select_1d(&x, 4, Increasing);
    assert_eq!(
        (bits(&v), i),
        (vec![0, one::<T>(), nan, nan], vec![2, 1, 0, 3]),
        "{}",
        T::NAME
    );
    let (v, i) = select_1d(&x, 1, Increasing);
    assert_eq!((bits(&v), i), (vec![0], vec![2]), "{}", T::NAME);
}

#[test]
fn nan_comes_first_decreasing_and_last_increasing() {
    nan_at_the_front_and_back::<f32>();
    nan_at_the_front_and_back::<f64>();
    nan_at_the_front_and_back::<f16>();
    nan_at_the_front_and_back::<bf16>();
}

fn nan_payloads_tie_and_are_copied<T: Value>() {
    let [canonical, negative, payload, signalling, ones] = nans::<T>();
    let (exponent, mantissa) = T::FLOAT.unwrap();
    let infinity = mask(exponent) << mantissa;
    let x: Vec<T> = [payload, negative, infinity, one::<T>(), signalling, ones, canonical]
        .map(T::from_bits)
        .to_vec();
    let (v, i) = select_1d(&x, 7, Decreasing);
    assert_eq!(
        (bits(&v), i),
        (
            vec![payload, negative, signalling, ones, canonical, infinity, one::<T>()],
            vec![0, 1, 4, 5, 6, 2, 3]
        ),
        "{}",
        T::NAME
    );
    let (v, i) = select_1d(&x, 7, Increasing);
    assert_eq!(
        (bits(&v), i),
        (
            vec![one::<T>(), infinity, payload, negative, signalling, ones, canonical],
            vec![3, 2, 0, 1, 4, 5, 6]
        ),
        "{}",
        T::NAME
    );
    // K cuts inside the run of NaNs: the lowest positions win.
    let (v, i) = select_1d(&x, 3, Decreasing);
    assert_eq!(
        (bits(&v), i),
        (vec![payload, negative, signalling], vec![0, 1, 4]),
        "{}",
        T::NAME
    );
}

#[test]
fn nans_of_any_sign_and_payload_tie_and_keep_their_bits() {
    nan_payloads_tie_and_are_copied::<f32>();
    nan_payloads_tie_and_are_copied::<f64>();
    nan_payloads_tie_and_are_copied::<f16>();
    nan_payloads_tie_and_are_copied::<bf16>();
}

fn signed_zeros_tie<T: Value>() {
    let sign = 1 << (T::WIDTH - 1);
    let (plus, minus, one) = (0, sign, one::<T>());
    let x: Vec<T> = [plus, minus, plus, minus, sign | one, one].map(T::from_bits).to_vec();
    let (v, i) = select_1d(&x, 6, Decreasing);
    assert_eq!(
        (bits(&v), i),
        (vec![one, plus, minus, plus, minus, sign | one], vec![5, 0, 1, 2, 3, 4])
    );
    let (v, i) = select_1d(&x, 6, Increasing);
    assert_eq!(
        (bits(&v), i),
        (vec![sign | one, plus, minus, plus, minus, one], vec![4, 0, 1, 2, 3, 5])
    );
    let (v, i) = select_1d(&x, 2, Increasing);
    assert_eq!((bits(&v), i), (vec![sign | one, plus], vec![4, 0]));
    // -0 first: it still ties with the +0 after it, and keeps its sign.
    let (v, i) = select_1d(&x[1..4], 2, Decreasing);
    assert_eq!((bits(&v), i), (vec![minus, plus], vec![0, 1]));
}

#[test]
fn signed_zeros_tie_and_keep_their_sign() {
    signed_zeros_tie::<f32>();
    signed_zeros_tie::<f64>();
    signed_zeros_tie::<f16>();
    signed_zeros_tie::<bf16>();
}

#[test]
fn infinities_and_subnormals_order() {
    let tiny = f32::from_bits(1);
    let x = [f32::INFINITY, -tiny, f32::NEG_INFINITY, tiny, f32::MAX, f32::MIN, 0.0];
    let (v, i) = select_1d(&x, 7, Increasing);
    assert_eq!(
        bits(&v),
        bits(&[f32::NEG_INFINITY, f32::MIN, -tiny, 0.0, tiny, f32::MAX, f32::INFINITY])
    );
    assert_eq!(i, [2, 5, 1, 6, 3, 4, 0]);
    let (v, i) = select_1d(&x, 2, Decreasing);
    assert_eq!((bits(&v), i), (bits(&[f32::INFINITY, f32::MAX]), vec![0, 4]));
}

macro_rules! integer_extremes {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() {
            let (min, max) = (<$t>::MIN, <$t>::MAX);
            let x: [$t; 6] = [0, max, min, max, min, 1];
            // With unsigned types MIN is 0, which ties with position 0.
            let (v, i) = select_1d(&x, 6, Decreasing);
            if min == 0 {
                assert_eq!((v, i), (vec![max, max, 1, 0, 0, 0], vec![1, 3, 5, 0, 2, 4]));
            } else {
                assert_eq!((v, i), (vec![max, max, 1, 0, min, min], vec![1, 3, 5, 0, 2, 4]));
            }
            let (v, i) = select_1d(&x, 6, Increasing);
            if min == 0 {
                assert_eq!((v, i), (vec![0, 0, 0, 1, max, max], vec![0, 2, 4, 5, 1, 3]));
            } else {
                assert_eq!((v, i), (vec![min, min, 0, 1, max, max], vec![2, 4, 0, 5, 1, 3]));
            }
            // The extreme alone at the far end.
            assert_eq!(select_1d(&[1, 1, 1, max], 1, Decreasing), (vec![max], vec![3]));
            assert_eq!(select_1d(&[1, 1, 1, min], 1, Increasing), (vec![min], vec![3]));
            assert_eq!(select_1d(&[max, max, max], 2, Increasing), (vec![max, max], vec![0, 1]));
            assert_eq!(select_1d(&[min, min, min], 2, Decreasing), (vec![min, min], vec![0, 1]));
        }
    )*};
}

integer_extremes! {
    extremes_i8: i8; extremes_i16: i16; extremes_i32: i32; extremes_i64: i64;
    extremes_u8: u8; extremes_u16: u16; extremes_u32: u32; extremes_u64: u64;
}

#[test]
fn k_equal_to_n_is_a_full_stable_sort() {
    let x = [3i64, 1, 2, 1, 3];
    assert_eq!(select_1d(&x, 5, Increasing), (vec![1, 1, 2, 3, 3], vec![1, 3, 2, 0, 4]));
    assert_eq!(select_1d(&x, 5, Decreasing), (vec![3, 3, 2, 1, 1], vec![0, 4, 2, 1, 3]));
    assert_eq!(select_1d(&[9u8], 1, Decreasing), (vec![9], vec![0]));
}

/// Runs a request whose outputs are empty inside non-empty sentinel buffers: Ok, nothing written.
fn writes_nothing<const D: usize>(sizes: [usize; D], axis: usize, k: usize) {
    let data = [1.0f32; 8];
    let input = View::new(&data, sizes, [0; D], 0).unwrap();
    let mut out = sizes;
    out[axis] = k;
    assert_eq!(out.iter().product::<usize>(), 0);
    for backend in Backend::ALL {
        let (mut values, mut indices) = ([-7.0f32; 8], [u64::MAX; 8]);
        let mut plan = TopK::new(Request {
            input,
            axis: axis as isize,
            k,
            direction: Decreasing,
            values: ViewMut::new(&mut values, out, [1; D], 2).unwrap(),
            indices: ViewMut::new(&mut indices, out, [1; D], 2).unwrap(),
        })
        .unwrap();
        assert_eq!(plan.sequences(), 0, "{sizes:?} axis {axis} k {k}");
        match plan.run_sequences(0..0, backend, &mut [0; 64]) {
            Ok(()) | Err(Error::Backend { .. }) => {}
            Err(e) => panic!("{}: {e}", backend.name()),
        }
        assert_eq!(
            (values, indices),
            ([-7.0; 8], [u64::MAX; 8]),
            "{sizes:?} axis {axis} k {k}"
        );
    }
    let (mut values, mut indices) = ([-7.0f32; 8], [u64::MAX; 8]);
    let outputs = (
        ViewMut::new(&mut values, out, [1; D], 2).unwrap(),
        ViewMut::new(&mut indices, out, [1; D], 2).unwrap(),
    );
    let mut scratch = vec![0; min_scratch_len::<f32>(sizes[axis], k)];
    topk(
        Request {
            input,
            axis: axis as isize,
            k,
            direction: Increasing,
            values: outputs.0,
            indices: outputs.1,
        },
        &mut scratch,
    )
    .unwrap();
    assert_eq!((values, indices), ([-7.0; 8], [u64::MAX; 8]));
}

#[test]
fn k_zero_writes_nothing() {
    writes_nothing([5], 0, 0);
    writes_nothing([3, 4], 1, 0);
    writes_nothing([3, 4], 0, 0);
    writes_nothing([2, 1, 3, 1, 2, 1, 1, 2], 5, 0);
}

#[test]
fn empty_tensors_write_nothing() {
    writes_nothing([0], 0, 0);
    writes_nothing([0, 5], 1, 3);
    writes_nothing([0, 5], 1, 5);
    writes_nothing([4, 0], 1, 0);
    writes_nothing([4, 0, 3], 2, 2);
    writes_nothing([2, 3, 0, 1, 1, 1, 1, 4], 7, 1);
}

/// The first `k` of `data` by sorting (key, position), written independently of every engine.
fn sorted_first<T: Value>(data: &[T], k: usize, direction: Direction) -> (Vec<u64>, Vec<u32>) {
    let input = View::contiguous(data, [data.len()]).unwrap();
    let expected = oracle(&input, 0, k, direction);
    (expected.values, expected.indices.iter().map(|&i| i as u32).collect())
}

#[test]
fn long_rows_compact_many_times() {
    let n = 100_000;
    let mut rng = Rng::new(0x5EED);
    let patterns: [(&str, Vec<f32>); 4] = [
        (
            "uniform",
            (0..n)
                .map(|_| f32::from_bits(rng.next() as u32 & 0x7FFF_FFFF))
                .collect(),
        ),
        ("few values", (0..n).map(|_| rng.below(50) as f32 - 25.0).collect()),
        ("ascending", (0..n).map(|i| i as f32).collect()),
        ("descending", (0..n).map(|i| (n - i) as f32).collect()),
    ];
    for (name, data) in &patterns {
        for k in [1, 100, 5000] {
            for direction in [Decreasing, Increasing] {
                let view = View::contiguous(&data[..], [n]).unwrap();
                let (v, i) = select_with::<f32, u32, 1>(view, 0, k, direction, Engines::Filtering);
                assert_eq!(
                    (bits(&v), i),
                    sorted_first(data, k, direction),
                    "{name} k {k} {direction:?}"
                );
            }
        }
    }
    // The explicit answer for sorted input: the K largest of 0..n are n-1, n-2, ...
    let ascending = &patterns[2].1;
    let (v, i) = select_with::<f32, u64, 1>(
        View::contiguous(&ascending[..], [n]).unwrap(),
        0,
        3,
        Decreasing,
        Engines::All,
    );
    assert_eq!(
        (v, i),
        (vec![99_999.0, 99_998.0, 99_997.0], vec![99_999, 99_998, 99_997])
    );
    let descending = &patterns[3].1;
    let (v, i) = select_with::<f32, i32, 1>(
        View::contiguous(&descending[..], [n]).unwrap(),
        0,
        2,
        Increasing,
        Engines::All,
    );
    assert_eq!((v, i), (vec![1.0, 2.0], vec![99_999, 99_998]));
}

#[test]
fn long_rows_of_64_bit_keys() {
    let n = 50_000;
    let mut rng = Rng::new(7);
    let data: Vec<u64> = (0..n).map(|_| rng.next() % 1000).collect();
    for k in [1, 100, 3000] {
        for direction in [Decreasing, Increasing] {
            let view = View::contiguous(&data[..], [n]).unwrap();
            let (v, i) = select_with::<u64, i64, 1>(view, 0, k, direction, Engines::Filtering);
            let (ev, ei) = sorted_first(&data, k, direction);
            assert_eq!(
                (v, i.iter().map(|&i| i as u32).collect::<Vec<_>>()),
                (ev, ei),
                "k {k} {direction:?}"
            );
        }
    }
}

#[test]
fn a_non_last_axis_is_strided() {
    // 4 x 3 row-major; the sequences run down the columns.
    let x = [1u8, 9, 5, 7, 2, 5, 3, 8, 5, 7, 0, 6];
    let input = View::contiguous(&x, [4, 3]).unwrap();
    let (v, i) = select(input, 0, 2, Decreasing);
    assert_eq!(v, [7, 9, 6, 7, 8, 5]);
    assert_eq!(i, [1, 0, 3, 3, 2, 0]);
    let (v, i) = select(input, 0, 2, Increasing);
    assert_eq!(v, [1, 0, 5, 3, 2, 5]);
    assert_eq!(i, [0, 3, 0, 2, 1, 1]);
    // The middle axis of a 2 x 3 x 2 tensor.
    let y: Vec<i16> = (0..12).map(|v| (v * 5) % 7).collect(); // 0 5 3 1 6 4 | 2 0 5 3 1 6
    let (v, i) = select(View::contiguous(&y, [2, 3, 2]).unwrap(), 1, 1, Decreasing);
    assert_eq!(v, [6, 5, 5, 6]);
    assert_eq!(i, [2, 0, 1, 2]);
}

/// K = 1 along short non-last axes (a running best per lane), on data with many ties, NaNs and signed
/// zeros: every backend agrees with the reference bit for bit, the first of equal keys kept.
#[test]
fn k_1_along_short_non_last_axes_keeps_the_first_best() {
    for n in [1usize, 2, 3, 7, 32, 33] {
        for inner in [1usize, 5, 8, 300] {
            let len = 2 * n * inner;
            let level = |i: usize| (i * 7919 + i / 3) % 11;
            let floats: Vec<f32> = (0..len)
                .map(|i| match level(i) {
                    0 => f32::NAN,
                    1 => -f32::NAN,
                    2 => -0.0,
                    3 => 0.0,
                    v => (v % 4) as f32 - 1.5,
                })
                .collect();
            let bytes: Vec<u8> = (0..len).map(|i| (level(i) % 3) as u8 * 127).collect();
            let longs: Vec<i64> = (0..len).map(|i| (level(i) as i64 - 5) * (i64::MAX / 6)).collect();
            for direction in [Decreasing, Increasing] {
                select(View::contiguous(&floats, [2, n, inner]).unwrap(), 1, 1, direction);
                select(View::contiguous(&bytes, [2, n, inner]).unwrap(), 1, 1, direction);
                select(View::contiguous(&longs, [2, n, inner]).unwrap(), 1, 1, direction);
            }
        }
    }
}

/// Narrow inner extents beside a short axis: the runs of neighbours along the dimension outside are
/// taken in one call, whole runs, and a call that starts or ends inside a run (sequence ranges cut
/// anywhere) takes its part; every backend agrees with the reference.
#[test]
fn runs_of_narrow_inner_extents_in_one_call() {
    let mut rng = Rng::new(65);
    for (n, inner) in [(2usize, 1usize), (2, 3), (3, 8), (2, 9), (5, 16), (4, 17), (33, 8)] {
        let shape = [3, 7, n, inner];
        let bytes: Vec<u8> = (0..shape.iter().product::<usize>())
            .map(|i| ((i * 7919) % 5) as u8)
            .collect();
        let floats: Vec<f32> = random_values(&mut rng, shape.iter().product());
        for k in [1, 2, 4, 17].into_iter().filter(|&k| k <= n) {
            for direction in [Decreasing, Increasing] {
                select(View::contiguous(&bytes, shape).unwrap(), 2, k, direction);
                let input = View::contiguous(&floats, shape).unwrap();
                select(input, 2, k, direction);
                // The same through sequence ranges of 1, 2, 3, ... sequences.
                let expected = oracle(&input, 2, k, direction);
                let outputs = [3, 7, k, inner];
                let (mut values, mut indices) = (vec![f32::NAN; 21 * k * inner], vec![u32::MAX; 21 * k * inner]);
                let mut plan = TopK::new(Request {
                    input,
                    axis: 2,
                    k,
                    direction,
                    values: ViewMut::contiguous(&mut values, outputs).unwrap(),
                    indices: ViewMut::contiguous(&mut indices, outputs).unwrap(),
                })
                .unwrap();
                let mut scratch = vec![0; plan.scratch_len()];
                let (mut start, mut size) = (0, 1);
                while start < plan.sequences() {
                    let end = (start + size).min(plan.sequences());
                    plan.run_sequences(start..end, Backend::Auto, &mut scratch).unwrap();
                    (start, size) = (end, size + 1);
                }
                let context = format!("{shape:?} k {k} {direction:?}");
                assert_eq!(bits(&values), expected.values, "{context}");
                assert_eq!(
                    indices.iter().map(|&i| i as i128).collect::<Vec<_>>(),
                    expected.indices,
                    "{context}"
                );
            }
        }
    }
}

#[test]
fn broadcast_input_is_all_ties() {
    let x = [4.5f64];
    let input = View::new(&x, [1000], [0], 0).unwrap();
    let (v, i) = select(input, 0, 10, Decreasing);
    assert_eq!((v, i), (vec![4.5; 10], (0..10).collect::<Vec<u32>>()));
    // A huge broadcast axis costs no memory; the filter keeps the first K.
    let input = View::new(&x, [2_000_000], [0], 0).unwrap();
    let (v, i) = select_with::<f64, u32, 1>(input, 0, 3, Increasing, Engines::Filtering);
    assert_eq!((v, i), (vec![4.5; 3], vec![0, 1, 2]));
    // Broadcast along another axis: every row is the same row.
    let row = [3i8, -1, 7];
    let (v, i) = select(View::new(&row, [4, 3], [0, 1], 0).unwrap(), 1, 2, Decreasing);
    assert_eq!((v, i), ([7, 3].repeat(4), [2, 0].repeat(4)));
}

#[test]
fn negative_strides_reverse_the_sequence() {
    let x = [1u32, 2, 3, 4, 5];
    let reversed = View::new(&x, [5], [-1], 4).unwrap(); // 5 4 3 2 1
    assert_eq!(select(reversed, 0, 2, Decreasing), (vec![5, 4], vec![0, 1]));
    assert_eq!(select(reversed, 0, 2, Increasing), (vec![1, 2], vec![4, 3]));
    // Both axes of a 2 x 3 matrix reversed, selecting along the first.
    let m = [1i32, 2, 3, 4, 5, 6]; // rows [1 2 3], [4 5 6]; reversed: [6 5 4], [3 2 1]
    let view = View::new(&m, [2, 3], [-3, -1], 5).unwrap();
    assert_eq!(select(view, 0, 1, Increasing), (vec![3, 2, 1], vec![1, 1, 1]));
    assert_eq!(select(view, 1, 2, Increasing), (vec![4, 5, 1, 2], vec![2, 1, 2, 1]));
}

#[test]
fn outputs_may_be_strided_and_reversed() {
    // Values every other element, indices reversed: the outputs land where the strides say.
    let x = [5i32, 1, 4, 2, 3];
    let input = View::contiguous(&x, [5]).unwrap();
    let mut values = [0i32; 7];
    let mut indices = [u32::MAX; 3];
    let mut scratch = [0; 8];
    topk(
        Request {
            input,
            axis: 0,
            k: 3,
            direction: Increasing,
            values: ViewMut::new(&mut values, [3], [2], 1).unwrap(),
            indices: ViewMut::new(&mut indices, [3], [-1], 2).unwrap(),
        },
        &mut scratch,
    )
    .unwrap();
    assert_eq!(values, [0, 1, 0, 2, 0, 3, 0]);
    assert_eq!(indices, [4, 3, 1]);
}

/// Contiguous rows of every length up to a few vector blocks and around larger powers of two, at
/// several alignments, several K and data patterns: every backend against the sort-based oracle.
fn sweep_lengths<T: Value>() {
    let mut rng = Rng::new(T::WIDTH as u64);
    let lengths = (1..=140).chain([255, 256, 257, 511, 512, 513, 1023, 1024, 1025]);
    for n in lengths {
        let misalign = n % 4;
        let mut ks = vec![1, 2, n / 3, n - 1, n];
        ks.retain(|&k| (1..=n).contains(&k));
        ks.sort_unstable();
        ks.dedup();
        for pattern in 0..4 {
            let mut data: Vec<T> = match pattern {
                0 => (0..n + misalign)
                    .map(|_| T::from_bits(special_bits::<T>(&mut rng)))
                    .collect(),
                _ => random_values::<T>(&mut rng, n + misalign),
            };
            match pattern {
                2 => data[misalign..].sort_by_key(|v| v.key()),
                3 => data[misalign..].sort_by_key(|v| std::cmp::Reverse(v.key())),
                _ => {}
            }
            let input = View::new(&data, [n], [1], misalign).unwrap();
            for &k in &ks {
                for direction in [Decreasing, Increasing] {
                    let (v, i) = select_with::<T, u32, 1>(input, 0, k, direction, Engines::Filtering);
                    assert_eq!(
                        (bits(&v), i),
                        sorted_first(&data[misalign..], k, direction),
                        "{} n {n} k {k} pattern {pattern} {direction:?}",
                        T::NAME
                    );
                }
            }
        }
    }
}

#[test]
fn lengths_around_block_boundaries_8_bit() {
    sweep_lengths::<u8>();
    sweep_lengths::<i8>();
}

#[test]
fn lengths_around_block_boundaries_16_bit() {
    sweep_lengths::<f16>();
    sweep_lengths::<i16>();
}

#[test]
fn lengths_around_block_boundaries_32_bit() {
    sweep_lengths::<f32>();
    sweep_lengths::<u32>();
}

#[test]
fn lengths_around_block_boundaries_64_bit() {
    sweep_lengths::<f64>();
    sweep_lengths::<i64>();
}

/// Long rows that defeat the threshold (every element beats the last K), where the vector engines
/// bail out to sampling: staircases of ties, sawtooth ramps, ramps ending in NaN, ramps of equal keys
/// with different bits (signed zeros, NaN payloads).
#[test]
fn adversarial_long_rows() {
    let n = 60_000;
    let nan = f32::from_bits(0x7FC0_0000);
    let patterns: [(&str, Vec<f32>); 6] = [
        ("staircase", (0..n).map(|i| (i / 7) as f32).collect()),
        ("falling staircase", (0..n).map(|i| ((n - i) / 5) as f32).collect()),
        ("sawtooth", (0..n).map(|i| (i % 1000) as f32).collect()),
        (
            "ramp then NaN",
            (0..n).map(|i| if i >= n - 300 { nan } else { i as f32 }).collect(),
        ),
        (
            "ramp of NaN payloads and zeros",
            (0..n)
                .map(|i| match i % 3 {
                    0 => f32::from_bits(0x7F80_0001 + i as u32 % 1000),
                    1 => f32::from_bits(0x8000_0000),
                    _ => i as f32,
                })
                .collect(),
        ),
        (
            "ramp with a long tie at the top",
            (0..n).map(|i| i.min(n - 500) as f32).collect(),
        ),
    ];
    for (name, data) in &patterns {
        for k in [1, 7, 100, 234] {
            for direction in [Decreasing, Increasing] {
                let input = View::contiguous(&data[..], [n]).unwrap();
                let (v, i) = select_with::<f32, u32, 1>(input, 0, k, direction, Engines::Filtering);
                assert_eq!(
                    (bits(&v), i),
                    sorted_first(data, k, direction),
                    "{name} k {k} {direction:?}"
                );
            }
        }
    }
    // The staircase, explicitly: the top step holds positions n-7.. in order (n = 60000 = 7 · 8571 + 3).
    let (v, i) = select_1d(&patterns[0].1[..700], 3, Decreasing);
    assert_eq!((v, i), (vec![99.0, 99.0, 99.0], vec![693, 694, 695]));
}

#[test]
fn split_plans_run_on_threads() {
    let (rows, n, k) = (37, 500, 10);
    let mut rng = Rng::new(99);
    let data: Vec<f32> = random_values(&mut rng, rows * n);
    let input = View::contiguous(&data, [rows, n]).unwrap();
    for direction in [Decreasing, Increasing] {
        let expected = oracle(&input, 1, k, direction);
        let (mut values, mut indices) = (vec![f32::NAN; rows * k], vec![u64::MAX; rows * k]);
        let plan = TopK::new(Request {
            input,
            axis: 1,
            k,
            direction,
            values: ViewMut::contiguous(&mut values, [rows, k]).unwrap(),
            indices: ViewMut::contiguous(&mut indices, [rows, k]).unwrap(),
        })
        .unwrap();
        let words = plan.scratch_len();
        // Cut into parts of 1, 2, 3, ... sequences, one backend each, all on their own thread.
        let mut parts = Vec::new();
        let mut rest = plan;
        let mut size = 1;
        while rest.sequences() > size {
            let (part, tail) = rest.split_at(size).unwrap();
            parts.push(part);
            rest = tail;
            size += 1;
        }
        parts.push(rest);
        std::thread::scope(|s| {
            for (i, mut part) in parts.into_iter().enumerate() {
                let backend = Backend::ALL[i % Backend::ALL.len()];
                let backend = if backend.is_available() { backend } else { Backend::Auto };
                s.spawn(move || {
                    part.run_sequences(0..part.sequences(), backend, &mut vec![0; words])
                        .unwrap()
                });
            }
        });
        assert_eq!(bits(&values), expected.values, "{direction:?}");
        assert_eq!(
            indices.iter().map(|&i| i as i128).collect::<Vec<_>>(),
            expected.indices,
            "{direction:?}"
        );
    }
}

/// Short rows read side by side from a tile (16 rows at a time) into outputs that are not evenly
/// spaced: padded between blocks of rows, or ordered across them, so that a group's output starts are
/// listed rather than stepped.
#[test]
fn short_rows_into_uneven_outputs() {
    fn check<T: Value>(data: &[T]) {
        let input = View::contiguous(data, [3, 7, 4]).unwrap();
        for k in [2, 3] {
            let step = k as isize;
            // Row-major, padded after each block of 7 rows, rows across blocks first, ranks outermost.
            let layouts = [
                [7 * step, step, 1],
                [7 * step + 5, step, 1],
                [step, 3 * step, 1],
                [1, 3, 21],
            ];
            for strides in layouts {
                for direction in [Decreasing, Increasing] {
                    select_into::<T, u32, 3>(input, 2, k, direction, Engines::All, strides);
                }
            }
        }
    }
    let keys = (0..84u64).map(|i| (i * 37 + 11) % 29);
    check(&keys.clone().map(|x| x as f32 - 9.0).collect::<Vec<_>>());
    check(&keys.clone().map(|x| x as u8).collect::<Vec<_>>());
    check(&keys.map(|x| x as i16 - 9).collect::<Vec<_>>());
}
