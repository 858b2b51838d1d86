//! Layer 3, kernels: the algorithms, each written once, over the [`Vector`] vocabulary where they use
//! vectors. They execute what `dispatch::strategy` chose and choose nothing themselves, but for what the
//! data decide (a bound that does not hold, a pass that pushes too many).
//!
//! - one sequence: [`reference`](mod@reference) (by definition), [`ordered`] (a row already in order), [`scalar`] (the threshold filter an element at a
//!   time), [`row`] (a contiguous row on vectors: the block [`filter`] and the short-row paths around
//!   it: [`bound`]s, [`collect`]), [`bisect`] and [`count`] (8- and 16-bit keys with a large K);
//! - neighbouring sequences side by side, one per lane: [`columns`];
//! - what they share: the packed candidates ([`entry`], [`candidates`]), the lanes' tests ([`lanes`]),
//!   and the sorts that order candidates ([`sorter`], [`network`], [`partition`]).

pub(crate) mod bisect;
pub(crate) mod bound;
pub(crate) mod candidates;
pub(crate) mod collect;
pub(crate) mod count;
pub(crate) mod entry;
pub(crate) mod filter;
#[cfg(test)]
pub(crate) mod lane_tests;
pub(crate) mod lanes;
// The network and the partition are the AVX-512 and AVX2 sorters' (and every engine's tests'): dead
// elsewhere.
pub(crate) mod columns;
#[cfg_attr(not(simd_x86), allow(dead_code))]
pub(crate) mod network;
pub(crate) mod ordered;
#[cfg_attr(not(simd_x86), allow(dead_code))]
pub(crate) mod partition;
pub(crate) mod reference;
pub(crate) mod row;
pub(crate) mod scalar;
#[cfg_attr(not(simd_x86), allow(dead_code))]
pub(crate) mod sorter;
#[cfg(test)]
pub(crate) mod testing;

use crate::kernels::candidates::Sorter;
use crate::simd::vector::Vector;

/// The vectors and the sorter an engine runs the kernels on (`dispatch::isa` has one per instruction
/// set).
pub(crate) trait Isa {
    /// Lanes of 32 bits: elements of 8, 16 and 32 bits.
    type V32: Vector;
    /// Lanes of 64 bits: elements of 64 bits.
    type V64: Vector;
    /// How candidates are selected and ordered.
    type Sorter: Sorter;
}
