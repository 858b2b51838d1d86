//! ndarray's arrays (feature `ndarray`): top-K along any axis of any array or view, whatever its layout
//! (row- or column-major, transposed, stepped, reversed, broadcast) and dimension type (`Ix1` to `Ix6`,
//! `IxDyn` up to 8 dimensions), read in place (no copy of the input), into new arrays ([`topk`]) or the
//! caller's ([`topk_into`]). No `unsafe` in the caller.
//!
//! Arrays are taken as ndarray's reference types: `&ArrayRef` for the input (`&array`, `&view`) and
//! `&mut ArrayRef` for outputs (`&mut array`, `&mut view_mut`), so owned arrays, views and shared
//! arrays all work.
//!
//! ```
//! use ndarray::{Array2, s};
//! use topk_kernels::{Direction, ndarray::topk};
//!
//! let logits = Array2::from_shape_fn((4, 6), |(i, j)| ((i * 7 + j * 5) % 11) as f32);
//! // The two largest of each column of every other row, read through the view's strides.
//! let stepped = logits.slice(s![..;2, ..]);
//! let (values, indices) = topk::<f32, i64, _>(&stepped, 2, 0, Direction::Decreasing)?;
//! assert_eq!(values.shape(), [2, 6]);
//! assert_eq!(values[[0, 0]], 3.0); // column 0 of rows 0 and 2: 0 and 3
//! assert_eq!(indices[[0, 0]], 1);
//! // Along the last axis of the transpose: the columns of `logits`.
//! let (values, _) = topk::<f32, u32, _>(&logits.t(), 1, -1, Direction::Decreasing)?;
//! assert_eq!(values.shape(), [6, 1]);
//! # Ok::<(), topk_kernels::Error>(())
//! ```

use alloc::vec;

use ::ndarray::{Array, ArrayRef, Dimension};

use crate::api::request::Request;
use crate::api::topk::topk as run;
use crate::types::element::{Direction, Element};
use crate::types::error::Error;
use crate::types::index::Index;
use crate::types::view::{MAX_RANK, View, ViewMut};

/// The values and the indices [`topk`] returns, each an array of the input's shape with `k` along the axis.
pub type Outputs<T, I, D> = (Array<T, D>, Array<I, D>);

/// The first `k` elements of every sequence along `axis` of `input` in `direction`, and their positions
/// along the axis, as new arrays (row-major) of the input's shape with `k` along the axis: PyTorch's
/// `torch.topk(x, k, dim, largest)` ([`Direction::from_largest`]). `axis` counts from the last when
/// negative (-1 is the last).
///
/// The same results and errors as [`crate::topk()`]; nothing is allocated for a request that is refused.
pub fn topk<T: Element, I: Index, D: Dimension>(
    input: &ArrayRef<T, D>,
    k: usize,
    axis: isize,
    direction: Direction,
) -> Result<Outputs<T, I, D>, Error> {
    let view = view(input)?;
    let layout = view.layout();
    let Some(index) = layout.axis_index(axis) else {
        return Err(Error::Axis {
            axis,
            rank: layout.rank(),
        });
    };
    let (ndarray_axis, len) = (index - layout.padding(), layout.sizes()[index]);
    if k > len {
        return Err(Error::K {
            k,
            len,
            axis: ndarray_axis,
        });
    }
    let mut shape = input.raw_dim();
    shape[ndarray_axis] = k;
    let mut values = Array::from_elem(shape.clone(), T::ZERO);
    let mut indices = Array::from_elem(shape, I::from_position(0));
    topk_into(input, k, axis, direction, &mut values, &mut indices)?;
    Ok((values, indices))
}

/// [`topk`] into the caller's arrays: `values` and `indices` have the input's shape with `k` along the
/// axis, any layout (a slice of a larger array, transposed, stepped) but none that maps two indices to
/// one element. Nothing is written on error.
///
/// ```
/// use ndarray::{Array2, Array3, Axis, s};
/// use topk_kernels::{Direction, ndarray::topk_into};
///
/// let scores = Array3::from_shape_fn((2, 5, 3), |(b, i, j)| (b * 100 + (i * 3 + j) * 7 % 15) as u16);
/// // The 2 smallest along the middle axis, written into columns 1..3 of outputs laid out (2, 3, 4).
/// let mut values = Array3::<u16>::zeros((2, 3, 4));
/// let mut indices = Array3::<u32>::zeros((2, 3, 4));
/// let mut v = values.slice_mut(s![.., .., 1..3]).permuted_axes([0, 2, 1]);
/// let mut i = indices.slice_mut(s![.., .., 1..3]).permuted_axes([0, 2, 1]);
/// topk_into(&scores, 2, 1, Direction::Increasing, &mut v, &mut i)?;
/// assert_eq!(values.slice(s![0, .., 1]), ndarray::arr1(&[0, 1, 2])); // the least of each column j
/// assert_eq!(indices.slice(s![0, .., 1]), ndarray::arr1(&[0, 4, 3]));
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub fn topk_into<T: Element, I: Index, D: Dimension>(
    input: &ArrayRef<T, D>,
    k: usize,
    axis: isize,
    direction: Direction,
    values: &mut ArrayRef<T, D>,
    indices: &mut ArrayRef<I, D>,
) -> Result<(), Error> {
    let request = Request {
        input: view(input)?,
        axis,
        k,
        direction,
        values: view_mut(values)?,
        indices: view_mut(indices)?,
    };
    let mut scratch = vec![0; request.scratch_len()];
    run(request, &mut scratch)
}

/// `input` as a view of its own elements, in its own layout.
fn view<T, D: Dimension>(input: &ArrayRef<T, D>) -> Result<View<'_, T, MAX_RANK>, Error> {
    // SAFETY: ndarray's strided indexing puts element `index` of `input` at `as_ptr() + Σ index[d] ·
    // strides()[d]`, each inside the array's allocation, aligned and initialised; a shared borrow of an
    // `ArrayRef` lets no one write them while the view lives.
    unsafe { View::padded_from_raw_parts(input.as_ptr(), input.shape(), input.strides()) }
}

/// `output` as a writable view of its own elements, in its own layout.
fn view_mut<T, D: Dimension>(output: &mut ArrayRef<T, D>) -> Result<ViewMut<'_, T, MAX_RANK>, Error> {
    // Taken before the shape and strides (ndarray's rule for `as_mut_ptr`); a `&mut ArrayRef` is unshared
    // already.
    let data = output.as_mut_ptr();
    // SAFETY: as in `view`, for elements that a `&mut ArrayRef` borrows exclusively: valid for writes,
    // and used by no one else while the view lives.
    unsafe { ViewMut::padded_from_raw_parts(data, output.shape(), output.strides()) }
}

#[cfg(test)]
mod tests {
    use ::ndarray::{Array, Array2, ArrayD, Axis, IxDyn, s};

    use super::*;
    use crate::types::error::Operand;

    /// The expected values and positions along `axis` by sorting each lane of `input` (stable: ties by
    /// position), independent of the crate.
    fn sorted_lanes<D: Dimension>(input: &ArrayRef<i32, D>, axis: usize, k: usize) -> (Array<i32, D>, Array<u64, D>) {
        let mut shape = input.raw_dim();
        shape[axis] = k;
        let (mut values, mut indices) = (Array::zeros(shape.clone()), Array::zeros(shape));
        for ((lane, mut v), mut i) in input
            .lanes(Axis(axis))
            .into_iter()
            .zip(values.lanes_mut(Axis(axis)))
            .zip(indices.lanes_mut(Axis(axis)))
        {
            let mut pairs: Vec<(i32, usize)> = lane.iter().copied().zip(0..).collect();
            pairs.sort_by_key(|&(value, _)| core::cmp::Reverse(value));
            for (j, &(value, position)) in pairs[..k].iter().enumerate() {
                v[j] = value;
                i[j] = position as u64;
            }
        }
        (values, indices)
    }

    #[test]
    fn every_layout_and_axis_reads_in_place() {
        let base = Array::from_shape_fn((6, 5, 4), |(a, b, c)| ((a * 31 + b * 17 + c * 7) % 13) as i32);
        let owned = base.clone();
        let fortran = base.t().as_standard_layout().reversed_axes().into_owned();
        let transposed = base.view().permuted_axes([2, 0, 1]);
        let stepped = base.slice(s![..;2, ..;-1, 1..]);
        let broadcast = base.slice(s![0..1, .., ..]).broadcast((3, 5, 4)).unwrap().to_owned();
        for input in [owned.view(), fortran.view(), transposed, stepped, broadcast.view()] {
            for axis in 0..3 {
                let k = input.len_of(Axis(axis)).min(3);
                let want = sorted_lanes(&input, axis, k);
                for signed in [axis as isize, axis as isize - 3] {
                    let got = topk::<i32, u64, _>(&input, k, signed, Direction::Decreasing).unwrap();
                    assert_eq!(got, want, "{:?} {:?} axis {signed}", input.shape(), input.strides());
                    let dynamic = topk::<i32, u64, _>(&input.view().into_dyn(), k, signed, Direction::Decreasing);
                    let (values, indices) = dynamic.unwrap();
                    assert_eq!((values.shape(), indices.shape()), (want.0.shape(), want.1.shape()));
                }
            }
        }
    }

    #[test]
    fn writes_into_strided_outputs_only() {
        let input = Array2::from_shape_fn((7, 3), |(i, j)| ((i * 5 + j) % 7) as i32);
        let want = sorted_lanes(&input, 0, 2);
        // Outputs every other column of wider arrays, reversed: the other columns stay as they were.
        let (mut values, mut indices) = (Array2::from_elem((2, 6), -1), Array2::from_elem((2, 6), 99u64));
        let mut v = values.slice_mut(s![.., ..;-2]);
        let mut i = indices.slice_mut(s![.., ..;-2]);
        topk_into(&input, 2, 0, Direction::Decreasing, &mut v, &mut i).unwrap();
        assert_eq!(v, want.0);
        assert_eq!(i, want.1);
        assert!(values.slice(s![.., ..;2]).iter().all(|&x| x == -1));
        assert!(indices.slice(s![.., ..;2]).iter().all(|&x| x == 99));
    }

    #[test]
    fn errors_speak_of_the_arrays_dimensions() {
        let input = Array2::<f32>::zeros((2, 5));
        let error = topk::<f32, u32, _>(&input, 3, 0, Direction::Decreasing).unwrap_err();
        assert_eq!(error, Error::K { k: 3, len: 2, axis: 0 });
        assert_eq!(error.to_string(), "K = 3 exceeds the axis length 2 of dimension 0");
        let (mut values, mut indices) = (Array2::<f32>::zeros((3, 5)), Array2::<u32>::zeros((2, 3)));
        let error = topk_into(&input, 2, 0, Direction::Decreasing, &mut values, &mut indices).unwrap_err();
        assert_eq!(
            error,
            Error::OutputSize {
                operand: Operand::Values,
                dim: 0,
                expected: 2,
                actual: 3
            }
        );
        assert_eq!(
            error.to_string(),
            "the values output has size 3 in dimension 0; it must be 2"
        );
        assert_eq!(
            topk::<f32, u32, _>(&input, 1, -3, Direction::Decreasing).unwrap_err(),
            Error::Axis { axis: -3, rank: 2 }
        );
        let nine = ArrayD::<f32>::zeros(IxDyn(&[1; 9]));
        assert_eq!(
            topk::<f32, u32, _>(&nine, 1, 0, Direction::Decreasing).unwrap_err(),
            Error::Rank { rank: 9 }
        );
        let scalar = ::ndarray::arr0(1.0f32);
        assert_eq!(
            topk::<f32, u32, _>(&scalar, 1, 0, Direction::Decreasing).unwrap_err(),
            Error::Rank { rank: 0 }
        );
        // Empty arrays need no memory at all.
        let empty = Array2::<f32>::zeros((0, 5));
        let (values, indices) = topk::<f32, u32, _>(&empty, 2, 1, Direction::Decreasing).unwrap();
        assert_eq!(
            (values.shape(), indices.shape()),
            ([0, 2].as_slice(), [0, 2].as_slice())
        );
    }
}
