//! Exact top-K selection along any axis of strided 1-8D tensors: DirectML's `DML_TOP_K1`, and more.
//!
//! For every *sequence* (the elements along `axis` with the other coordinates fixed) the crate writes the
//! K largest (`Decreasing`) or smallest (`Increasing`) elements, sorted, and their positions in the
//! sequence. Ties go to the lower position in both directions; every NaN ranks above `+inf` and ties with
//! other NaNs; `-0.0` ties with `+0.0`; values are copied bit for bit. `K == n` (a full stable sort) and
//! `K == 0` are allowed.
//!
//! ```
//! use topk_kernels::{Direction, Request, View, ViewMut, topk};
//!
//! // Two rows of logits; the two largest of each, with their positions.
//! let logits = [0.1f32, 2.5, -1.0, 2.5, 0.3, f32::NAN, 7.0, 7.0];
//! let (mut values, mut indices) = ([0.0f32; 4], [0i64; 4]);
//! let request = Request {
//!     input: View::contiguous(&logits, [2, 4])?,
//!     axis: -1,
//!     k: 2,
//!     direction: Direction::Decreasing,
//!     values: ViewMut::contiguous(&mut values, [2, 2])?,
//!     indices: ViewMut::contiguous(&mut indices, [2, 2])?,
//! };
//! let mut scratch = vec![0u64; request.scratch_len()];
//! topk(request, &mut scratch)?;
//! assert_eq!(indices, [1, 3, 1, 2]); // a tie keeps the lower position first; NaN is the largest
//! assert_eq!(values[..2], [2.5, 2.5]);
//! assert!(values[2].is_nan() && values[3] == 7.0);
//! # Ok::<(), topk_kernels::Error>(())
//! ```
//!
//! # Why this crate
//! - **Exact** on every input: one total order (`docs/CONTRACT.md` §2) realised as unsigned integer keys,
//!   so ties, NaN payloads, signed zeros and integer extremes all follow one rule, identical in every
//!   engine.
//! - **No copies, no allocation**: inputs are strided views (permuted, stepped, broadcast, reversed);
//!   outputs are strided views you own; working memory is a scratch slice you own
//!   ([`Request::scratch_len`]) or the stack ([`topk_on_stack`]). `#![no_std]`, no `alloc`.
//! - **Never panics on a request**: every bad shape, stride, axis, K or index type is an [`Error`]
//!   reported before anything is written.
//! - **Splittable**: a validated [`TopK`] plan runs on any range of its sequences, or splits into
//!   `Send` halves for your own thread pool.
//!
//! # Types
//! Values: `f32`, `f64`, [`half::f16`], [`half::bf16`], `i8`..`i64`, `u8`..`u64` ([`Element`]).
//! Indices: `u32`, `u64`, `i32`, `i64` ([`Index`]).
//! Named at run time by [`DataType`] and [`IndexType`]; [`with_data_type!`] and [`with_index_type!`]
//! run generic code on the type a name stands for.
//! The generic entry points are thin: a request's views are padded to rank 8 and its index type reduced
//! to `u32` or `u64` before anything runs, and the engines are compiled in this crate, so a caller that
//! uses every value type, index type and rank compiles the walk over sequences 24 times, not 384.
//!
//! # Features
//! - `std` (default): links `std`, and reads `TOPK_MAX_ISA` (a cap on the engines `Backend::Auto` may
//!   pick). Without it the crate is `#![no_std]`, without `alloc`, and builds for bare-metal targets such
//!   as `thumbv7em-none-eabihf`; `Error` implements `core::error::Error` either way. The CPU's engines
//!   (AVX2, AVX-512) are detected at run time on x86_64 with or without `std` (CPUID and XGETBV, once,
//!   cached), wherever SSE2 is enabled: every hosted target, and `x86_64-unknown-none` built with
//!   `-C target-feature=+sse,+sse2` (its default soft-float ABI compiles no SIMD engine). NEON is
//!   part of the aarch64 targets.
//! - `alloc` (implied by `std`): [`owned::topk`], PyTorch's `torch.topk(x, k, dim, largest)`, whose
//!   outputs are allocated.
//! - `rayon`: `parallel::topk`, sequences split across rayon's threads and single long rows split
//!   into chunks merged at the end (implies `std`).
//! - `ndarray`: `ndarray::topk` and `ndarray::topk_into`, on any ndarray array or view in place (any
//!   layout, axis or stride), into new arrays or the caller's, with no `unsafe` (implies `alloc`, not
//!   `std`).
//!
//! # Runtimes and other tensor libraries
//! - [`View::from_raw_parts`] and [`ViewMut::from_raw_parts`] (`unsafe`, with their safety contract)
//!   view memory this crate did not get as a slice: a tensor library's storage, a DLPack tensor, a C
//!   caller's buffer, with any strides, negative ones included.
//! - [`untyped::topk`] runs a request on bytes whose element type is known at run time (a
//!   [`DataType`], sizes, strides), safely: it checks each buffer's alignment ([`Error::Alignment`]).
//! - Axes may be negative (-1 is the last), and errors name the caller's dimensions and axis, also for
//!   run-time ranks, which the crate pads to 8 inside.
//!
//! # Memory
//! Scratch: `min(n, 2K)` candidates of 8 bytes (16 for 64-bit types), reused across sequences
//! ([`min_scratch_len`], [`TopK::min_scratch_len`]); on a non-last axis with K > 16, 16 times that runs 16
//! sequences side by side, a buffer each. [`Request::scratch_len`] (the same number as
//! [`TopK::scratch_len`] and [`untyped::scratch_len`]) is the one way to size the scratch for the
//! fastest path, several times faster there than one sequence at a time.
//! Stack: a few KiB in an optimised build (a non-last axis with K ≤ 16 keeps each SIMD lane's best K
//! in 2 to 16 slots of vectors, for up to 16 groups of lanes at once, 8 KiB at most, with K > 16 the
//! state of 16 candidate buffers, 1 KiB; rows of up to 32 are read from a tile of 16 of them, 4 KiB
//! at most; counting 16-bit keys keeps 4 KiB of counters; the AVX-512 sorting network
//! holds up to 16 vectors and short rows collect up to 64 entries, or with K > 16 take 4 KiB of
//! entries, the whole row; rows shorter than 256 K with K of 9 to 128 collect up to 4 KiB of entries
//! and 2 KiB of their positions; short rows of 8- and 16-bit integers with a large K collect likewise
//! and count those into order with 2 KiB of counters), plus [`topk_on_stack`]'s
//! `32 · K_MAX` bytes, and [`Accumulator::push`]'s 2 KiB of candidates. No recursion other than
//! `core`'s bounded selection and sort. `tests/stack.rs` runs the heaviest calls on a 16 KiB thread
//! (optimised builds, checked with the AVX2 engine and, under qemu, NEON; AVX-512's frames are larger:
//! the backend sweep's deepest case takes about 19 KiB on an emulated CPU, the harness's frames
//! included (`emulated/`), and the test allows it 32 KiB; an unoptimised build needs up to 340 KiB: it
//! keeps every SIMD temporary in a stack slot of its own). On a Cortex-M4F (the portable engine), the
//! 64 best of 1000 f32 through `topk_on_stack::<64, ..>` take about 4.8 KiB beside the caller's arrays
//! and the 2 KiB buffer (`firmware/`, checked on QEMU by `ci.sh`).
#![cfg_attr(not(any(feature = "std", test)), no_std)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;

// The layers, bottom up: each module uses only its own layer and those below (tests/layers.rs checks).
// 1. What a request is made of: types, keys, views, errors, sequences and their outputs.
mod types;

// 2. Vectors, their implementation for each instruction set, and what this CPU has.
mod simd;

// 3. The algorithms, each written once over the vectors.
mod kernels;

// 4. Which algorithm a request gets, and running it on an engine.
mod dispatch;

// 5. The walk over a tensor's sequences.
mod walk;

// 6. The public API.
mod api;

pub use api::accumulator::{Accumulator, Slot};
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use api::internals;
#[cfg(feature = "ndarray")]
#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
pub use api::ndarray;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use api::owned;
#[cfg(feature = "rayon")]
#[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
pub use api::parallel;
pub use api::request::Request;
pub use api::topk::{TopK, min_scratch_len, topk, topk_on_stack};
pub use api::{naive, untyped};
pub use dispatch::engine::Backend;
pub use half::{bf16, f16};
pub use types::data_type::{DataType, IndexType};
pub use types::element::{Direction, Element, Key};
pub use types::error::{Error, Operand};
pub use types::index::Index;
pub use types::request::check_request;
pub use types::view::{Layout, MAX_RANK, View, ViewMut};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
