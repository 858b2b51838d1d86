//! The reference: the semantics of `docs/CONTRACT.md` §1-2 written as plainly as possible. Tests,
//! fuzzing and benchmarks compare every engine with it.
//!
//! The j-th output is the smallest (key, position) pair that is greater than the (j-1)-th: one full scan
//! per output, O(n·K) time, no memory at all (so it stays `no_std` without an allocator, and needs no
//! scratch); the kernel is `kernels/reference.rs`, this module runs it behind the validation of every call. It
//! shares the key mapping of `element.rs` ([`crate::Element::key`]), which is tested against an independent
//! comparison of the values themselves.

use crate::api::request::Request;
use crate::dispatch::engine::Backend;
use crate::types::element::Element;
use crate::types::error::Error;
use crate::types::index::Index;

/// The whole operation through the reference engine: same validation, same outputs as [`crate::topk()`].
pub fn topk<T: Element, I: Index, const D: usize>(request: Request<'_, T, I, D>) -> Result<(), Error> {
    let mut plan = request.into_plan()?;
    let all = 0..plan.sequences();
    plan.run_sequences(all, Backend::Naive, &mut [])
}
