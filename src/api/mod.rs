//! Layer 6, the public API: one call ([`topk`](topk::topk)), a validated plan to split across threads
//! ([`TopK`](topk::TopK)), the reference ([`naive`]), a top-K that arrives in pieces
//! ([`Accumulator`](accumulator::Accumulator)), and rayon's threads ([`parallel`], feature `rayon`).

pub(crate) mod accumulator;
#[cfg(feature = "internals")]
pub mod internals;
pub mod naive;
#[cfg(feature = "rayon")]
#[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
pub mod parallel;
pub(crate) mod topk;
