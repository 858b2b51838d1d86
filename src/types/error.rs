//! The one error type of the crate.

use core::fmt;

/// Which tensor of a request an error speaks of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tensor {
    /// The input tensor.
    Input,
    /// An output view, before it is known as values or indices.
    Output,
    /// The output value tensor.
    Values,
    /// The output index tensor.
    Indices,
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tensor::Input => "input",
            Tensor::Output => "output",
            Tensor::Values => "values output",
            Tensor::Indices => "indices output",
        })
    }
}

/// Everything that can be wrong with a request. Every variant carries the numbers that made it wrong.
///
/// When a function returns an `Error`, no output element has been written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// A dimension count outside 1..=8 (only reachable through run-time ranks: the CLI, the C ABI).
    Rank {
        /// The dimension count given.
        rank: usize,
    },
    /// `axis` is not a dimension of the input.
    Axis {
        /// The axis given.
        axis: usize,
        /// The input's dimension count.
        rank: usize,
    },
    /// `K` is larger than the length of the axis.
    K {
        /// The K given.
        k: usize,
        /// The length of the axis.
        len: usize,
        /// The axis.
        axis: usize,
    },
    /// An output's size along a dimension is not the input's (or `K` along the axis).
    OutputSize {
        /// The output in question.
        tensor: Tensor,
        /// The dimension.
        dim: usize,
        /// The size it must have.
        expected: usize,
        /// The size it has.
        actual: usize,
    },
    /// A size, stride or address computation of a view overflows.
    Overflow {
        /// The tensor in question.
        tensor: Tensor,
    },
    /// A view reaches outside its slice.
    OutOfBounds {
        /// The tensor in question.
        tensor: Tensor,
        /// The lowest element address the view reaches (negative with negative strides).
        lowest: isize,
        /// The highest element address the view reaches.
        highest: isize,
        /// The slice length in elements.
        len: usize,
    },
    /// Two coordinates of an output view map to the same element.
    Aliasing {
        /// The output in question.
        tensor: Tensor,
        /// A dimension whose stride overlaps another's (or is 0 with a size above 1).
        dim: usize,
    },
    /// The index type cannot hold position `len - 1`.
    IndexType {
        /// The length of the axis.
        len: usize,
        /// The largest position the index type can hold.
        max: u64,
    },
    /// The scratch slice is shorter than [`scratch_len`](crate::scratch_len) asks.
    Scratch {
        /// Words needed.
        needed: usize,
        /// Words given.
        given: usize,
    },
    /// A range of sequences outside the plan's.
    Sequences {
        /// Start of the range given.
        start: usize,
        /// End of the range given.
        end: usize,
        /// Number of sequences in the plan.
        count: usize,
    },
    /// Two accumulators of different K or direction were merged.
    Merge {
        /// K of the accumulator merged into.
        k: usize,
        /// K of the other one.
        other_k: usize,
    },
    /// A backend this CPU (or this build) does not have.
    Backend {
        /// The backend's name.
        name: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Rank { rank } => {
                write!(f, "the tensor has {rank} dimensions; 1 to 8 are supported")
            }
            Error::Axis { axis, rank } => write!(
                f,
                "axis {axis} is out of range for a tensor of {rank} dimensions (0 to {})",
                rank.saturating_sub(1)
            ),
            Error::K { k, len, axis } => {
                write!(f, "K = {k} exceeds the axis length {len} of dimension {axis}")
            }
            Error::OutputSize {
                tensor,
                dim,
                expected,
                actual,
            } => write!(
                f,
                "the {tensor} has size {actual} in dimension {dim}; it must be {expected}"
            ),
            Error::Overflow { tensor } => {
                write!(f, "the {tensor} view's sizes and strides overflow an address")
            }
            Error::OutOfBounds {
                tensor,
                lowest,
                highest,
                len,
            } => write!(
                f,
                "the {tensor} view reaches elements {lowest} to {highest} but its slice has {len} elements"
            ),
            Error::Aliasing { tensor, dim } => write!(
                f,
                "the {tensor} view maps two coordinates to one element (the stride of dimension {dim} overlaps)"
            ),
            Error::IndexType { len, max } => write!(
                f,
                "positions up to {} do not fit the index type (largest {max})",
                len.saturating_sub(1)
            ),
            Error::Scratch { needed, given } => {
                write!(f, "the scratch has {given} words; {needed} are needed")
            }
            Error::Sequences { start, end, count } => write!(
                f,
                "sequence range {start}..{end} is outside the plan's {count} sequences"
            ),
            Error::Merge { k, other_k } => write!(
                f,
                "cannot merge an accumulator of K = {other_k} into one of K = {k} (K and direction must match)"
            ),
            Error::Backend { name } => write!(f, "the {name} backend is not available on this CPU"),
        }
    }
}

// `core::error::Error` (Rust 1.81), so `no_std` callers get `?` into their own error types too.
impl core::error::Error for Error {}
