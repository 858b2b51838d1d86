//! topk-kernels on the GPU: the same operator as WGSL compute shaders on wgpu, bit-identical to the CPU
//! crate on every input (`docs/CONTRACT.md` §6).
//!
//! ```no_run
//! use topk_kernels::{Direction, View};
//! use topk_kernels_gpu::{Gpu, HostViewMut, TopKGpu};
//!
//! let gpu = Gpu::new()?; // the first adapter wgpu finds (WGPU_BACKEND etc. are honoured)
//! let topk = TopKGpu::new(&gpu.device)?; // pipelines, built once
//! let x = [0.0f32, 1.0, 10.0, 11.0, 3.0, 2.0, 9.0, 8.0, 4.0, 5.0, 6.0, 7.0];
//! let (mut values, mut indices) = ([0.0f32; 6], [0u32; 6]);
//! topk.run_host(
//!     &gpu.device,
//!     &gpu.queue,
//!     View::contiguous(&x, [1, 1, 3, 4])?,
//!     3,
//!     2,
//!     Direction::Decreasing,
//!     HostViewMut::contiguous(&mut values, [1, 1, 3, 2])?,
//!     HostViewMut::contiguous(&mut indices, [1, 1, 3, 2])?,
//! )?;
//! assert_eq!(indices, [3, 2, 2, 3, 3, 2]);
//! # Ok::<(), topk_kernels_gpu::GpuError>(())
//! ```
//!
//! # Design
//! - One WGSL module ([`SHADER`]), baseline WGSL only: every value type is read as u32 words (64-bit
//!   types as word pairs, 8/16-bit types unpacked), so no `SHADER_F16` or `SHADER_INT64` is needed.
//! - Each element's order-preserving key (the CPU crate's `Element::key`, flipped for `Decreasing`) is
//!   computed in the shader; selection sorts (key, position) entries, which are all distinct, so the
//!   result is the CPU crate's exactly.
//! - Rows up to 32 elements: several rows per workgroup, each entry's rank counted in workgroup
//!   memory (one dispatch).
//! - Rows up to [`TILE`] elements: one workgroup per row (one dispatch). With `K <= 64` it gathers
//!   the entries up to the K-th's top-16-bit bucket and writes each one's counted rank below K;
//!   otherwise (or past 128 such entries) it sorts the row in workgroup memory.
//! - Longer rows with `K <= TILE`: a threshold filter in 4 dispatches: a histogram of each key's top
//!   11 bits, the bucket holding the K-th, the (key, position) candidates at or below it, and one
//!   workgroup per row selecting and sorting the K among them exactly (or among the whole row when
//!   the candidate list overflowed).
//! - Longer rows with `K > TILE` (or too many rows for the filter's counters): radix select, 8 bits
//!   a pass from the top, with workgroup histograms: first the K-th key exactly, then (among the
//!   elements with that key) the position of the last tie taken, since ties go to the lowest
//!   positions (indirect dispatches, empty when no tie needs them). Exactly K candidates are then
//!   compacted and sorted, in one workgroup if `K <= TILE`, else by the bitonic sort below over K
//!   padded to a power of two.
//! - K close to n: a row-wide bitonic sort in a scratch buffer whose short-distance steps are fused
//!   in workgroup memory, then a pass writing the first K.
//! - [`TopKGpu::record`] records into your encoder over your buffers and never submits;
//!   [`TopKGpu::run_host`] is the blocking convenience from host slices to host slices.

mod device;
mod error;
mod host;
mod pipelines;
mod request;
mod shader;

pub use device::Gpu;
pub use error::GpuError;
pub use host::HostViewMut;
pub use pipelines::{PlanStats, TopKGpu};
pub use request::Request;
pub use shader::{DEFAULT_WORKGROUP, SHADER, TILE};
pub use topk_kernels::{DataType, IndexType};
