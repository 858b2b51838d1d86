//! The one error type of the crate.

use core::fmt;

/// Which operand of a request an error speaks of: the input, or one of the outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The input tensor.
    Input,
    /// An output view, before it is known as values or indices.
    Output,
    /// The output value tensor.
    Values,
    /// The output index tensor.
    Indices,
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operand::Input => "input",
            Operand::Output => "output",
            Operand::Values => "values output",
            Operand::Indices => "indices output",
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
    /// `axis` is not a dimension of the input: neither in `0..rank` nor in `-rank..0` (counted from the
    /// last).
    Axis {
        /// The axis given.
        axis: isize,
        /// The input's dimension count.
        rank: usize,
    },
    /// `K` is larger than the length of the axis.
    K {
        /// The K given.
        k: usize,
        /// The length of the axis.
        len: usize,
        /// The axis, counted from the first dimension (a negative axis resolved).
        axis: usize,
    },
    /// An output has another dimension count than the input (only reachable through run-time ranks).
    OutputRank {
        /// The output in question.
        operand: Operand,
        /// Its dimension count.
        rank: usize,
        /// The input's.
        expected: usize,
    },
    /// An output's size along a dimension is not the input's (or `K` along the axis).
    OutputSize {
        /// The output in question.
        operand: Operand,
        /// The dimension.
        dim: usize,
        /// The size it must have.
        expected: usize,
        /// The size it has.
        actual: usize,
    },
    /// A size, stride or address computation of a view overflows.
    Overflow {
        /// The operand in question.
        operand: Operand,
    },
    /// A view reaches outside its slice.
    OutOfBounds {
        /// The operand in question.
        operand: Operand,
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
        operand: Operand,
        /// A dimension whose stride overlaps another's (or is 0 with a size above 1).
        dim: usize,
    },
    /// An operand's data is not aligned for its element type (or its pointer is null).
    Alignment {
        /// The operand in question.
        operand: Operand,
        /// The address of its data.
        address: usize,
        /// The alignment its element type needs, in bytes.
        align: usize,
    },
    /// The index type cannot hold position `len - 1`.
    IndexType {
        /// The length of the axis.
        len: usize,
        /// The largest position the index type can hold.
        max: u64,
    },
    /// The scratch slice is shorter than the least a request runs with ([`TopK::min_scratch_len`](crate::TopK::min_scratch_len)).
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
                "axis {axis} is out of range for a tensor of {rank} dimensions (-{rank} to {})",
                rank.saturating_sub(1)
            ),
            Error::K { k, len, axis } => {
                write!(f, "K = {k} exceeds the axis length {len} of dimension {axis}")
            }
            Error::OutputSize {
                operand,
                dim,
                expected,
                actual,
            } => write!(
                f,
                "the {operand} has size {actual} in dimension {dim}; it must be {expected}"
            ),
            Error::OutputRank {
                operand,
                rank,
                expected,
            } => write!(
                f,
                "the {operand} has {rank} dimensions; it must have the input's {expected}"
            ),
            Error::Overflow { operand } => {
                write!(f, "the {operand} view's sizes and strides overflow an address")
            }
            Error::OutOfBounds {
                operand,
                lowest,
                highest,
                len,
            } => write!(
                f,
                "the {operand} view reaches elements {lowest} to {highest} but its slice has {len} elements"
            ),
            Error::Aliasing { operand, dim } => write!(
                f,
                "the {operand} view maps two coordinates to one element (the stride of dimension {dim} overlaps)"
            ),
            Error::Alignment {
                operand, address: 0, ..
            } => write!(f, "the {operand}'s data pointer is null"),
            Error::Alignment {
                operand,
                address,
                align,
            } => write!(
                f,
                "the {operand}'s data at {address:#x} is not aligned to {align} bytes, as its element type needs"
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
