//! `topk_kernels::ndarray` against the reference (`naive`) on random arrays of every layout ndarray
//! makes (row- and column-major, permuted, stepped, reversed, broadcast, dynamic rank up to 8), every
//! axis counted from either end, floats compared bit for bit; and its errors in the array's own numbers.
#![cfg(feature = "ndarray")]

mod common;

use common::{Rng, Value, random_values};
use ndarray::{Array, ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use topk_kernels::ndarray::{topk, topk_into};
use topk_kernels::{Direction, Error, Index, Operand, Request, View, ViewMut, bf16, f16, naive};

/// The reference on a standard-layout copy of `input`, whose shape it returns with `k` along `axis`.
fn reference<T: Value, I: Index>(
    input: &ArrayViewD<T>,
    k: usize,
    axis: isize,
    direction: Direction,
) -> (ArrayD<T>, ArrayD<I>) {
    let copy = input.as_standard_layout();
    let shape = input.shape();
    let resolved = if axis < 0 { axis + shape.len() as isize } else { axis } as usize;
    let mut out = shape.to_vec();
    out[resolved] = k;
    let count = out.iter().product();
    let (mut values, mut indices) = (vec![T::ZERO; count], vec![I::from_position(0); count]);
    naive::topk(Request {
        input: View::padded(copy.as_slice().unwrap(), shape, None, 0).unwrap(),
        axis,
        k,
        direction,
        values: ViewMut::padded(&mut values, &out, None, 0).unwrap(),
        indices: ViewMut::padded(&mut indices, &out, None, 0).unwrap(),
    })
    .unwrap();
    (
        Array::from_shape_vec(IxDyn(&out), values).unwrap(),
        Array::from_shape_vec(IxDyn(&out), indices).unwrap(),
    )
}

/// A random view of `base` (which has `rank` dimensions): axes permuted, some stepped or reversed, one
/// sometimes broadcast from size 1.
fn random_layout<'a, T>(rng: &mut Rng, base: &'a ArrayD<T>) -> ArrayViewD<'a, T> {
    let mut view = base.view();
    for d in 0..view.ndim() {
        let len = view.len_of(Axis(d));
        match rng.below(4) {
            0 if len > 2 => view.slice_axis_inplace(Axis(d), Slice::new(0, None, 2)),
            1 => view.invert_axis(Axis(d)),
            2 if len > 1 => view.slice_axis_inplace(Axis(d), Slice::new(1, None, -1)),
            _ => {}
        }
    }
    let mut order: Vec<usize> = (0..view.ndim()).collect();
    rng.shuffle(&mut order);
    view.permuted_axes(order)
}

fn bits<T: Value>(a: &ArrayD<T>) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

fn check<T: Value>(seed: u64) {
    let mut rng = Rng::new(seed);
    let rank = rng.range(1, 8);
    let sizes: Vec<usize> = (0..rank).map(|_| rng.range(1, if rank > 4 { 3 } else { 8 })).collect();
    let count = sizes.iter().product();
    let base = Array::from_shape_vec(IxDyn(&sizes), random_values::<T>(&mut rng, count)).unwrap();
    let fortran = base.t().as_standard_layout().into_owned();
    let views = [
        base.view(),
        fortran.t(),
        random_layout(&mut rng, &base),
        random_layout(&mut rng, &base),
    ];
    for view in views {
        let rank = view.ndim();
        let axis = rng.below(rank);
        let k = rng.range(0, view.len_of(Axis(axis)));
        let direction = if rng.chance(1, 2) {
            Direction::Decreasing
        } else {
            Direction::Increasing
        };
        for signed in [axis as isize, axis as isize - rank as isize] {
            let context = format!(
                "{} seed {seed} shape {:?} strides {:?} axis {signed} k {k}",
                T::NAME,
                view.shape(),
                view.strides()
            );
            let (want_v, want_i) = reference::<T, i64>(&view, k, signed, direction);
            let (got_v, got_i) = topk::<T, i64, _>(&view, k, signed, direction).expect(&context);
            assert_eq!(bits(&got_v), bits(&want_v), "{context}");
            assert_eq!(got_i, want_i, "{context}");
            // Into the caller's outputs, laid out backwards along the axis.
            let (mut values, mut indices) = (
                Array::from_elem(want_v.raw_dim(), T::ZERO),
                Array::from_elem(want_i.raw_dim(), 0u32),
            );
            let mut v = values.view_mut();
            let mut i = indices.view_mut();
            v.invert_axis(Axis(axis));
            i.invert_axis(Axis(axis));
            topk_into(&view, k, signed, direction, &mut v, &mut i).expect(&context);
            values.invert_axis(Axis(axis));
            indices.invert_axis(Axis(axis));
            assert_eq!(bits(&values), bits(&want_v), "{context}");
            assert!(
                indices.iter().zip(&want_i).all(|(&a, &b)| i64::from(a) == b),
                "{context}"
            );
        }
    }
}

#[test]
fn every_layout_and_axis_matches_the_reference() {
    for seed in 0..40 {
        check::<f32>(seed);
        check::<f16>(seed);
        check::<bf16>(seed);
        check::<f64>(seed);
        check::<i8>(seed);
        check::<u16>(seed);
        check::<i64>(seed);
    }
}

#[test]
fn static_dimensions_and_broadcast_inputs() {
    let mut rng = Rng::new(7);
    let data = random_values::<f32>(&mut rng, 5 * 7);
    let base = Array::from_shape_vec((5, 7), data).unwrap();
    // A row broadcast to 6 rows: every sequence along axis 0 is one value 6 times.
    let row = base.row(2);
    let broadcast = row.broadcast((6, 7)).unwrap();
    for (axis, k) in [(0, 3), (1, 7), (-1, 2), (-2, 6)] {
        let (want_v, want_i) = reference::<f32, u32>(&broadcast.view().into_dyn(), k, axis, Direction::Decreasing);
        let (got_v, got_i) = topk::<f32, u32, _>(&broadcast, k, axis, Direction::Decreasing).unwrap();
        assert_eq!(bits(&got_v.into_dyn()), bits(&want_v), "axis {axis}");
        assert_eq!(got_i.into_dyn(), want_i, "axis {axis}");
    }
}

#[test]
fn errors_name_the_arrays_own_dimensions() {
    let input = Array::<f32, _>::zeros((2, 3, 4));
    assert_eq!(
        topk::<f32, u32, _>(&input, 5, -1, Direction::Decreasing).unwrap_err(),
        Error::K { k: 5, len: 4, axis: 2 }
    );
    assert_eq!(
        topk::<f32, u32, _>(&input, 1, 3, Direction::Decreasing).unwrap_err(),
        Error::Axis { axis: 3, rank: 3 }
    );
    assert_eq!(
        topk::<f32, u32, _>(&input, 1, -4, Direction::Decreasing).unwrap_err(),
        Error::Axis { axis: -4, rank: 3 }
    );
    // A rank-3 request's output error names one of its 3 dimensions, not the 8 the crate pads to.
    let (mut values, mut indices) = (Array::<f32, _>::zeros((2, 5, 2)), Array::<u32, _>::zeros((2, 3, 2)));
    let error = topk_into(&input, 2, -1, Direction::Decreasing, &mut values, &mut indices).unwrap_err();
    assert_eq!(
        error,
        Error::OutputSize {
            operand: Operand::Values,
            dim: 1,
            expected: 3,
            actual: 5
        }
    );
    // Dynamic rank: an output of another rank.
    let mut values = ArrayD::<f32>::zeros(IxDyn(&[2, 3]));
    let mut indices = ArrayD::<u32>::zeros(IxDyn(&[2, 3, 2]));
    let error = topk_into(
        &input.view().into_dyn(),
        2,
        2,
        Direction::Decreasing,
        &mut values,
        &mut indices,
    )
    .unwrap_err();
    assert_eq!(
        error,
        Error::OutputRank {
            operand: Operand::Values,
            rank: 2,
            expected: 3
        }
    );
    // Outputs that alias themselves: a broadcast view made writable is impossible in ndarray, but a
    // zero-length axis is fine and writes nothing.
    let empty = Array::<f32, _>::zeros((0, 4));
    let (v, i) = topk::<f32, u32, _>(&empty, 2, 1, Direction::Increasing).unwrap();
    assert_eq!((v.shape(), i.shape()), (&[0, 2][..], &[0, 2][..]));
}
