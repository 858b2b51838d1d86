//! The checks of `docs/CONTRACT.md` §5 that relate a request's tensors to each other.

use crate::types::error::{Error, Operand};
use crate::types::view::Layout;

/// The checks of `docs/CONTRACT.md` §5 that relate a request's tensors, on their layouts alone: `axis`
/// names one of the input's dimensions (from the first, or from the last when negative: -1 is the last),
/// `k` is at most the input's size along it, each output has the input's rank and sizes but `k` along
/// `axis`, and the last position along `axis` fits an index type whose largest position is
/// `max_position` ([`Index::MAX_POSITION`](crate::Index::MAX_POSITION)). Returns the axis as an index
/// into the layouts' [`sizes`](Layout::sizes) (past the padding of a [`padded`](Layout::padded) layout).
///
/// Axes and dimensions are the caller's: a layout padded from rank 2 takes axis 0, 1, -1 or -2, and its
/// errors name dimensions 0 and 1, never the padding.
///
/// [`TopK::new`](crate::TopK::new) runs exactly these (each layout having been validated against its
/// buffer by [`View`](crate::View)/[`ViewMut`](crate::ViewMut)); a backend of its own, such as the GPU
/// crate, calls it to accept and refuse what this crate does, with the same errors.
///
/// ```
/// use topk_kernels::{Error, Layout, Operand, check_request};
/// let input = Layout::contiguous(Operand::Input, [4, 300], 1200)?;
/// let out = Layout::contiguous(Operand::Output, [4, 2], 8)?;
/// assert_eq!(check_request(&input, 1, 2, &out, &out, u64::from(u32::MAX)), Ok(1));
/// assert_eq!(check_request(&input, -1, 2, &out, &out, u64::from(u32::MAX)), Ok(1));
/// assert_eq!(check_request(&input, 1, 3, &out, &out, u64::from(u32::MAX)),
///            Err(Error::OutputSize { operand: Operand::Values, dim: 1, expected: 3, actual: 2 }));
/// assert_eq!(check_request(&input, 1, 2, &out, &out, 255),
///            Err(Error::IndexType { len: 300, max: 255 }));
/// // Run-time ranks: the caller's axis and dimensions.
/// let input = Layout::padded(Operand::Input, &[4, 300], None, 0, 1200)?;
/// let out = Layout::padded(Operand::Output, &[4, 2], None, 0, 8)?;
/// // Dimension 0 of the caller's 2, not 6 of the 8 the layouts are padded to.
/// assert_eq!(check_request(&input, 0, 2, &out, &out, u64::from(u32::MAX)),
///            Err(Error::OutputSize { operand: Operand::Values, dim: 0, expected: 2, actual: 4 }));
/// assert_eq!(check_request(&input, 0, 5, &out, &out, u64::from(u32::MAX)),
///            Err(Error::K { k: 5, len: 4, axis: 0 }));
/// # Ok::<(), Error>(())
/// ```
pub fn check_request<const D: usize>(
    input: &Layout<D>,
    axis: isize,
    k: usize,
    values: &Layout<D>,
    indices: &Layout<D>,
    max_position: u64,
) -> Result<usize, Error> {
    let (sizes, rank, padding) = (input.sizes(), input.rank(), input.padding());
    let Some(index) = input.axis_index(axis) else {
        return Err(Error::Axis { axis, rank });
    };
    let len = sizes[index];
    if k > len {
        return Err(Error::K {
            k,
            len,
            axis: index - padding,
        });
    }
    for (operand, output) in [(Operand::Values, values), (Operand::Indices, indices)] {
        if output.rank() != rank {
            return Err(Error::OutputRank {
                operand,
                rank: output.rank(),
                expected: rank,
            });
        }
        // Equal ranks: the padding is size 1 in all three.
        let pairs = sizes.iter().zip(output.sizes()).enumerate().skip(padding);
        for (dim, (&expected, actual)) in pairs {
            let expected = if dim == index { k } else { expected };
            if actual != expected {
                return Err(Error::OutputSize {
                    operand,
                    dim: dim - padding,
                    expected,
                    actual,
                });
            }
        }
    }
    if len > 0 && (len - 1) as u64 > max_position {
        return Err(Error::IndexType { len, max: max_position });
    }
    Ok(index)
}
