//! The checks of `docs/CONTRACT.md` §5 that relate a request's tensors to each other.

use crate::types::error::{Error, Tensor};
use crate::types::view::Layout;

/// The checks of `docs/CONTRACT.md` §5 that relate a request's tensors, on their layouts alone: `axis`
/// names one of the input's dimensions, `k` is at most the input's size along it, each output has the
/// input's sizes but `k` along `axis`, and the last position along `axis` fits an index type whose
/// largest position is `max_position` ([`Index::MAX_POSITION`](crate::Index::MAX_POSITION)). Returns the input's size along `axis`.
///
/// [`TopK::new`](crate::TopK::new) runs exactly these (each layout having been validated against its buffer by
/// [`View`](crate::View)/[`ViewMut`](crate::ViewMut)); a backend of its own, such as the GPU crate, calls it to accept and refuse
/// what this crate does, with the same errors.
///
/// ```
/// use topk_kernels::{Error, Layout, Tensor, check_request};
/// let input = Layout::contiguous(Tensor::Input, [4, 300], 1200)?;
/// let out = Layout::contiguous(Tensor::Output, [4, 2], 8)?;
/// assert_eq!(check_request(&input, 1, 2, &out, &out, u64::from(u32::MAX)), Ok(300));
/// assert_eq!(check_request(&input, 1, 3, &out, &out, u64::from(u32::MAX)),
///            Err(Error::OutputSize { tensor: Tensor::Values, dim: 1, expected: 3, actual: 2 }));
/// assert_eq!(check_request(&input, 1, 2, &out, &out, 255),
///            Err(Error::IndexType { len: 300, max: 255 }));
/// # Ok::<(), Error>(())
/// ```
pub fn check_request<const D: usize>(
    input: &Layout<D>,
    axis: usize,
    k: usize,
    values: &Layout<D>,
    indices: &Layout<D>,
    max_position: u64,
) -> Result<usize, Error> {
    let sizes = input.sizes();
    let Some(&len) = sizes.get(axis) else {
        return Err(Error::Axis { axis, rank: D });
    };
    if k > len {
        return Err(Error::K { k, len, axis });
    }
    for (tensor, output) in [(Tensor::Values, values), (Tensor::Indices, indices)] {
        for (dim, (&expected, &actual)) in sizes.iter().zip(&output.sizes()).enumerate() {
            let expected = if dim == axis { k } else { expected };
            if actual != expected {
                return Err(Error::OutputSize {
                    tensor,
                    dim,
                    expected,
                    actual,
                });
            }
        }
    }
    if len > 0 && (len - 1) as u64 > max_position {
        return Err(Error::IndexType { len, max: max_position });
    }
    Ok(len)
}
