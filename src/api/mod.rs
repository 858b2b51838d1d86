//! Layer 6, the public API: a request ([`Request`](request::Request)), one call
//! ([`topk`](topk::topk)), a validated plan to split across threads ([`TopK`](topk::TopK)), the reference
//! ([`naive`]), a top-K that arrives in pieces ([`Accumulator`](accumulator::Accumulator)), rayon's
//! threads ([`parallel`], feature `rayon`), and the glue of runtimes: tensors typed at run time
//! ([`untyped`]), owned outputs ([`owned`], feature `alloc`) and ndarray's arrays ([`ndarray`](mod@ndarray), feature
//! `ndarray`).

pub(crate) mod accumulator;
#[cfg(feature = "internals")]
pub mod internals;
pub mod naive;
#[cfg(feature = "ndarray")]
#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
pub mod ndarray;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub mod owned;
#[cfg(feature = "rayon")]
#[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
pub mod parallel;
pub(crate) mod request;
pub(crate) mod topk;
pub mod untyped;
