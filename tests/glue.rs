//! The glue for runtimes against the reference (`naive`), floats bit for bit: views from raw parts
//! (negative strides), `owned::topk` (PyTorch's shape), `untyped::topk` (bytes typed at run time) and its
//! alignment check; negative axes, and errors that name the caller's dimensions, never the padding.
#![cfg(feature = "alloc")]

mod common;

use common::{Rng, Value, random_values};
use topk_kernels::{
    DataType, Direction, Error, Index, IndexType, Operand, Request, TopK, View, ViewMut, bf16, f16, naive, owned, topk,
    untyped, with_data_type, with_index_type,
};

/// The reference on a row-major `data` of `sizes` at run-time rank: values and indices, row-major.
fn reference<T: Value, I: Index>(
    data: &[T],
    sizes: &[usize],
    axis: isize,
    k: usize,
    direction: Direction,
) -> (Vec<T>, Vec<I>) {
    let rank = sizes.len() as isize;
    let resolved = (if axis < 0 { axis + rank } else { axis }) as usize;
    let mut out = sizes.to_vec();
    out[resolved] = k;
    let count = out.iter().product();
    let (mut values, mut indices) = (vec![T::ZERO; count], vec![I::from_position(0); count]);
    naive::topk(Request {
        input: View::padded(data, sizes, None, 0).unwrap(),
        axis,
        k,
        direction,
        values: ViewMut::padded(&mut values, &out, None, 0).unwrap(),
        indices: ViewMut::padded(&mut indices, &out, None, 0).unwrap(),
    })
    .unwrap();
    (values, indices)
}

fn bits<T: Value>(values: &[T]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// A random shape of rank 1 to 4, an axis in it counted from either end, and a K.
fn request_shape(rng: &mut Rng) -> (Vec<usize>, isize, usize, Direction) {
    let rank = rng.range(1, 5);
    let sizes: Vec<usize> = (0..rank).map(|_| rng.range(1, 12)).collect();
    let axis = rng.below(rank);
    let k = rng.range(0, sizes[axis]);
    let signed = if rng.chance(1, 2) {
        axis as isize
    } else {
        axis as isize - rank as isize
    };
    let direction = if rng.chance(1, 2) {
        Direction::Decreasing
    } else {
        Direction::Increasing
    };
    (sizes, signed, k, direction)
}

fn owned_matches<T: Value>(seed: u64) {
    let mut rng = Rng::new(seed);
    let (sizes, axis, k, direction) = request_shape(&mut rng);
    let data = random_values::<T>(&mut rng, sizes.iter().product());
    let (want_v, want_i) = reference::<T, i64>(&data, &sizes, axis, k, direction);
    let input = View::padded(&data, &sizes, None, 0).unwrap();
    let (got_v, got_i) = owned::topk::<T, i64, 8>(input, k, axis, direction).unwrap();
    let context = format!("{} seed {seed} {sizes:?} axis {axis} k {k}", T::NAME);
    assert_eq!(bits(&got_v), bits(&want_v), "{context}");
    assert_eq!(got_i, want_i, "{context}");
}

#[test]
fn owned_topk_matches_the_reference() {
    for seed in 0..200 {
        owned_matches::<f32>(seed);
        owned_matches::<f16>(seed);
        owned_matches::<bf16>(seed);
        owned_matches::<f64>(seed);
        owned_matches::<u8>(seed);
        owned_matches::<i32>(seed);
    }
}

/// A matrix read through raw parts with both strides negative (the element at coordinate zero is the
/// buffer's last), against the same view made from the slice.
fn raw_parts_match<T: Value>(seed: u64) {
    let mut rng = Rng::new(seed);
    let (rows, cols) = (rng.range(1, 9), rng.range(1, 40));
    let data = random_values::<T>(&mut rng, rows * cols);
    let strides = [-(cols as isize), -1];
    for (axis, k) in [(-1isize, rng.range(0, cols)), (0, rng.range(0, rows))] {
        let resolved = if axis < 0 { 1 } else { 0 };
        let mut out = [rows, cols];
        out[resolved] = k;
        let (mut want_v, mut want_i) = (vec![T::ZERO; rows * cols], vec![0u32; rows * cols]);
        let (mut got_v, mut got_i) = (want_v.clone(), want_i.clone());
        let from_slice = View::new(&data, [rows, cols], strides, rows * cols - 1).unwrap();
        naive::topk(Request {
            input: from_slice,
            axis,
            k,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut want_v, out).unwrap(),
            indices: ViewMut::contiguous(&mut want_i, out).unwrap(),
        })
        .unwrap();
        // SAFETY: every element the view reaches (coordinate zero is the last of `data`, and the strides
        // walk back to its first) is one of `data`'s, which nothing writes while the view lives.
        let raw = unsafe { View::from_raw_parts(data.as_ptr().add(rows * cols - 1), [rows, cols], strides) }.unwrap();
        // The outputs through raw parts as well, reversed along the axis.
        let mut ostrides = [out[1] as isize, 1];
        ostrides[resolved] = -ostrides[resolved];
        let last = (out[resolved].max(1) - 1) * ostrides[resolved].unsigned_abs();
        let (v_ptr, i_ptr) = (got_v.as_mut_ptr(), got_i.as_mut_ptr());
        // SAFETY: the coordinates reach `last` back to 0, all inside `got_v` and `got_i` (each as long as
        // `rows * cols` elements), which nothing else uses while the views live.
        let (values, indices) = unsafe {
            (
                ViewMut::from_raw_parts(v_ptr.add(last), out, ostrides).unwrap(),
                ViewMut::from_raw_parts(i_ptr.add(last), out, ostrides).unwrap(),
            )
        };
        let request = Request {
            input: raw,
            axis,
            k,
            direction: Direction::Decreasing,
            values,
            indices,
        };
        let mut scratch = vec![0; request.scratch_len()];
        topk(request, &mut scratch).unwrap();
        // Undo the reversal along the axis to compare in row-major order.
        let context = format!("{} seed {seed} {rows}x{cols} axis {axis} k {k}", T::NAME);
        for r in 0..out[0] {
            for c in 0..out[1] {
                let at = r * out[1] + c;
                let mut flipped = [r, c];
                flipped[resolved] = out[resolved] - 1 - flipped[resolved];
                let got = flipped[0] * out[1] + flipped[1];
                assert_eq!(got_v[got].to_bits(), want_v[at].to_bits(), "{context}");
                assert_eq!(got_i[got], want_i[at], "{context}");
            }
        }
    }
}

#[test]
fn raw_parts_views_match_the_reference() {
    for seed in 0..100 {
        raw_parts_match::<f32>(seed);
        raw_parts_match::<f64>(seed);
        raw_parts_match::<i16>(seed);
    }
}

/// Bytes aligned for every element type.
fn words_as_bytes(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: the slice covers exactly the words' bytes; every byte pattern is a valid u8 and u64.
    unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), words.len() * 8) }
}

fn untyped_matches<T: Value, I: Index + PartialEq + core::fmt::Debug>(
    seed: u64,
    data_type: DataType,
    index_type: IndexType,
) {
    let mut rng = Rng::new(seed);
    let (sizes, axis, k, direction) = request_shape(&mut rng);
    let count: usize = sizes.iter().product();
    let data = random_values::<T>(&mut rng, count);
    let (want_v, want_i) = reference::<T, I>(&data, &sizes, axis, k, direction);
    let resolved = (if axis < 0 { axis + sizes.len() as isize } else { axis }) as usize;
    let mut out = sizes.clone();
    out[resolved] = k;
    let mut input = vec![0u64; count];
    let input = words_as_bytes(&mut input);
    for (bytes, x) in input.chunks_exact_mut(size_of::<T>()).zip(&data) {
        // SAFETY: `bytes` holds exactly one `T`; `write_unaligned` takes any address.
        unsafe { bytes.as_mut_ptr().cast::<T>().write_unaligned(*x) };
    }
    let (mut values, mut indices) = (vec![0u64; count], vec![0u64; count]);
    let scratch_len = untyped::scratch_len(data_type, &sizes, None, axis, k);
    untyped::topk(
        untyped::Request {
            data_type,
            index_type,
            input: untyped::View::contiguous(input, &sizes),
            axis,
            k,
            direction,
            values: untyped::ViewMut::contiguous(words_as_bytes(&mut values), &out),
            indices: untyped::ViewMut::contiguous(words_as_bytes(&mut indices), &out),
        },
        &mut vec![0; scratch_len],
    )
    .unwrap();
    let values = words_as_bytes(&mut values);
    let got_v: Vec<u64> = (0..want_v.len())
        // SAFETY: element `j` lies inside `values` (`count` words hold `count` of any type).
        .map(|j| unsafe { values.as_ptr().cast::<T>().add(j).read() }.to_bits())
        .collect();
    let indices = words_as_bytes(&mut indices);
    // SAFETY: as above, for the indices.
    let got_i: Vec<I> = (0..want_i.len())
        .map(|j| unsafe { indices.as_ptr().cast::<I>().add(j).read() })
        .collect();
    let context = format!("{data_type:?} {index_type:?} seed {seed} {sizes:?} axis {axis} k {k}");
    assert_eq!(got_v, bits(&want_v), "{context}");
    assert_eq!(got_i, want_i, "{context}");
}

#[test]
fn untyped_topk_matches_the_reference() {
    for seed in 0..30 {
        for data_type in DataType::ALL {
            for index_type in IndexType::ALL {
                with_data_type!(data_type, T => with_index_type!(index_type, I => {
                    untyped_matches::<T, I>(seed, data_type, index_type)
                }));
            }
        }
    }
}

#[test]
fn untyped_topk_refuses_misaligned_bytes() {
    let mut words = [0u64; 16];
    let all = words_as_bytes(&mut words);
    let start = all.as_ptr().addr();
    let (input, outputs) = all.split_at_mut(64);
    let (values, indices) = outputs.split_at_mut(32);
    let request = untyped::Request {
        data_type: DataType::F64,
        index_type: IndexType::U64,
        input: untyped::View::contiguous(&input[4..], &[2, 3]),
        axis: -1,
        k: 1,
        direction: Direction::Decreasing,
        values: untyped::ViewMut::contiguous(values, &[2, 1]),
        indices: untyped::ViewMut::contiguous(indices, &[2, 1]),
    };
    let error = untyped::topk(request, &mut [0; 16]).unwrap_err();
    assert_eq!(
        error,
        Error::Alignment {
            operand: Operand::Input,
            address: start + 4,
            align: 8
        }
    );
    assert!(error.to_string().contains("aligned"), "{error}");
    // Nothing was written.
    assert!(words.iter().all(|&w| w == 0));
}

#[test]
fn errors_name_the_callers_dimensions_at_run_time_rank() {
    let data = [0.0f32; 24];
    let input = View::padded(&data, &[2, 3, 4], None, 0).unwrap();
    let (mut values, mut indices) = ([0.0f32; 64], [0u32; 64]);
    let mut request = |axis: isize, k: usize, out: &[usize]| {
        TopK::new(Request {
            input,
            axis,
            k,
            direction: Direction::Decreasing,
            values: ViewMut::padded(&mut values, out, None, 0).unwrap(),
            indices: ViewMut::padded(&mut indices, &[2, 3, 1], None, 0).unwrap(),
        })
        .map(|_| ())
        .unwrap_err()
    };
    assert_eq!(request(3, 1, &[2, 3, 1]), Error::Axis { axis: 3, rank: 3 });
    assert_eq!(request(-4, 1, &[2, 3, 1]), Error::Axis { axis: -4, rank: 3 });
    assert_eq!(request(-2, 4, &[2, 4, 4]), Error::K { k: 4, len: 3, axis: 1 });
    assert_eq!(
        request(-1, 1, &[2, 2, 1]),
        Error::OutputSize {
            operand: Operand::Values,
            dim: 1,
            expected: 3,
            actual: 2
        }
    );
    assert_eq!(
        request(-1, 1, &[2, 3]),
        Error::OutputRank {
            operand: Operand::Values,
            rank: 2,
            expected: 3
        }
    );
    let error = request(-1, 1, &[2, 2, 1]);
    assert_eq!(
        error.to_string(),
        "the values output has size 2 in dimension 1; it must be 3"
    );
    // owned::topk and untyped::topk, the same numbers.
    assert_eq!(
        owned::topk::<f32, u32, 8>(input, 5, -1, Direction::Decreasing).unwrap_err(),
        Error::K { k: 5, len: 4, axis: 2 }
    );
    let mut words = [0u64; 16];
    let bytes = words_as_bytes(&mut words);
    let (inp, out) = bytes.split_at_mut(96);
    let (v, i) = out.split_at_mut(16);
    let error = untyped::topk(
        untyped::Request {
            data_type: DataType::F32,
            index_type: IndexType::U32,
            input: untyped::View::contiguous(inp, &[2, 3, 4]),
            axis: 1,
            k: 1,
            direction: Direction::Decreasing,
            values: untyped::ViewMut::contiguous(v, &[2, 1, 2]),
            indices: untyped::ViewMut::contiguous(i, &[2, 1, 2]),
        },
        &mut [0; 16],
    )
    .unwrap_err();
    assert_eq!(
        error,
        Error::OutputSize {
            operand: Operand::Values,
            dim: 2,
            expected: 4,
            actual: 2
        }
    );
}
