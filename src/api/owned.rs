//! Outputs the crate allocates (feature `alloc`): PyTorch's `torch.topk(x, k, dim, largest)`, returning
//! `(values, indices)`.
//!
//! ```
//! use topk_kernels::{Direction, View, owned};
//! let logits = [0.1f32, 2.5, -1.0, 2.5, 0.3, 9.0];
//! // The two largest of each row of 3, along the last axis.
//! let (values, indices) = owned::topk::<f32, i64, 2>(View::contiguous(&logits, [2, 3])?, 2, -1, Direction::from_largest(true))?;
//! assert_eq!(values, [2.5, 0.1, 9.0, 2.5]);
//! assert_eq!(indices, [1, 0, 2, 0]);
//! # Ok::<(), topk_kernels::Error>(())
//! ```

use alloc::vec;
use alloc::vec::Vec;

use crate::api::request::Request;
use crate::api::topk::topk as run;
use crate::types::element::{Direction, Element};
use crate::types::error::Error;
use crate::types::index::Index;
use crate::types::view::{View, ViewMut};

/// The first `k` elements of every sequence along `axis` of `input` in `direction`, and their positions
/// along the axis, in new vectors: each row-major over the input's sizes with `k` along the axis (the
/// shape of the input with `k` there). `axis` counts from the last when negative, as PyTorch's `dim`;
/// [`Direction::from_largest`] turns its `largest` into a direction.
///
/// The same results, errors and speed as [`crate::topk()`], the scratch allocated here too. Nothing is
/// allocated for a request that is refused.
pub fn topk<T: Element, I: Index, const D: usize>(
    input: View<'_, T, D>,
    k: usize,
    axis: isize,
    direction: Direction,
) -> Result<(Vec<T>, Vec<I>), Error> {
    let layout = input.layout();
    let rank = layout.rank();
    let Some(index) = layout.axis_index(axis) else {
        return Err(Error::Axis { axis, rank });
    };
    let mut sizes = layout.sizes();
    let len = sizes[index];
    if k > len {
        return Err(Error::K {
            k,
            len,
            axis: index - layout.padding(),
        });
    }
    sizes[index] = k;
    // At most the input's element count: k ≤ len.
    let count = sizes.iter().product();
    let (mut values, mut indices) = (vec![T::ZERO; count], vec![I::from_position(0); count]);
    let request = Request {
        input,
        axis,
        k,
        direction,
        values: ViewMut::contiguous_of_rank(&mut values, sizes, rank)?,
        indices: ViewMut::contiguous_of_rank(&mut indices, sizes, rank)?,
    };
    let mut scratch = vec![0; request.scratch_len()];
    run(request, &mut scratch)?;
    Ok((values, indices))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_the_outputs_of_a_call_in_row_major_order() {
        let x: Vec<u16> = (0..24).map(|i| (i * 7 % 24) as u16).collect();
        // Along the middle axis of 2x3x4, padded from a run-time rank and typed.
        let padded = View::padded(&x, &[2, 3, 4], None, 0).unwrap();
        let typed = View::contiguous(&x, [2, 3, 4]).unwrap();
        let (mut want_v, mut want_i) = (vec![0u16; 16], vec![0u32; 16]);
        crate::api::naive::topk(Request {
            input: typed,
            axis: 1,
            k: 2,
            direction: Direction::Increasing,
            values: ViewMut::contiguous(&mut want_v, [2, 2, 4]).unwrap(),
            indices: ViewMut::contiguous(&mut want_i, [2, 2, 4]).unwrap(),
        })
        .unwrap();
        for axis in [1, -2] {
            assert_eq!(
                topk(padded, 2, axis, Direction::Increasing),
                Ok((want_v.clone(), want_i.clone()))
            );
            assert_eq!(
                topk(typed, 2, axis, Direction::Increasing),
                Ok((want_v.clone(), want_i.clone()))
            );
        }
    }

    #[test]
    fn refuses_as_a_call_does_in_the_callers_numbering() {
        let x = [0.0f32; 10];
        let padded = View::padded(&x, &[2, 5], None, 0).unwrap();
        assert_eq!(
            topk::<f32, u32, 8>(padded, 3, 0, Direction::Decreasing).unwrap_err(),
            Error::K { k: 3, len: 2, axis: 0 }
        );
        assert_eq!(
            topk::<f32, u32, 8>(padded, 1, 2, Direction::Decreasing).unwrap_err(),
            Error::Axis { axis: 2, rank: 2 }
        );
        assert_eq!(
            topk::<f32, u32, 8>(padded, 1, -3, Direction::Decreasing).unwrap_err(),
            Error::Axis { axis: -3, rank: 2 }
        );
        // Empty: K = 0, or an empty axis.
        assert_eq!(
            topk::<f32, u32, 8>(padded, 0, 1, Direction::Decreasing),
            Ok((vec![], vec![]))
        );
        let empty = View::contiguous(&x, [3, 0]).unwrap();
        assert_eq!(
            topk::<f32, u64, 2>(empty, 0, -1, Direction::Decreasing),
            Ok((vec![], vec![]))
        );
    }
}
