//! The reference: the semantics of `docs/CONTRACT.md` §1-2 written as plainly as possible. Tests,
//! fuzzing and benchmarks compare every engine with it.
//!
//! The j-th output is the smallest (key, position) pair that is greater than the (j-1)-th: one full scan
//! per output, O(n·K) time, no memory at all (so it stays `no_std` without an allocator, and needs no
//! scratch); the engine is `arch/naive.rs`, this module runs it behind the validation of every call. It
//! shares the key mapping of `element.rs` ([`crate::Element::key`]), which is tested against an independent
//! comparison of the values themselves.

use crate::api::topk::TopK;
use crate::dispatch::backend::Backend;
use crate::types::element::{Direction, Element};
use crate::types::error::Error;
use crate::types::index::Index;
use crate::types::view::{View, ViewMut};

/// The whole operation through the reference engine: same validation, same outputs as [`crate::api::topk()`].
pub fn topk<T: Element, I: Index, const D: usize>(
    input: View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    values: ViewMut<'_, T, D>,
    indices: ViewMut<'_, I, D>,
) -> Result<(), Error> {
    let mut plan = TopK::new(input, axis, k, direction, values, indices)?;
    let all = 0..plan.sequences();
    plan.run_sequences(all, Backend::Naive, &mut [])
}
