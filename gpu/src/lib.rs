//! topk-kernels on the GPU: the same operator as WGSL compute shaders on wgpu, bit-identical to the CPU
//! crate on every input (SPEC.md §6).
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
//! - Rows up to [`TILE`] elements: one workgroup per row sorts in workgroup memory and writes the
//!   outputs (one dispatch).
//! - Longer rows: radix select, 8 bits a pass from the top, with workgroup histograms: first the K-th
//!   key exactly, then (among the elements with that key) the position of the last tie taken, since
//!   ties go to the lowest positions. Exactly K candidates are then compacted and sorted: in one
//!   workgroup if `K <= TILE` (2·(key bytes + position bytes) + 2 dispatches, e.g. 16 for 1M f32),
//!   else by the bitonic sort below over K padded to a power of two.
//! - K close to n: a row-wide bitonic sort in a scratch buffer whose short-distance steps are fused
//!   in workgroup memory, then a pass writing the first K.
//! - [`TopKGpu::record`] records into your encoder over your buffers and never submits;
//!   [`TopKGpu::run_host`] is the blocking convenience from host slices to host slices.

use std::fmt;
use std::sync::{Arc, mpsc};

use bytemuck::{Pod, Zeroable};
use topk_kernels::{Direction, Element, Error, Index, Layout, MAX_RANK, Tensor, View};
use wgpu::util::DeviceExt;

/// The WGSL source of every kernel (entry points `sort_tile`, `bitonic_step`, `write_sorted`,
/// `radix_histogram`, `radix_select`, `radix_compact`).
pub const SHADER: &str = include_str!("../shaders/topk.wgsl");

/// Entries sorted in workgroup memory (the shader's `TILE`): rows up to this length take one dispatch.
pub const TILE: u32 = 1024;

/// The default of the shader's `override WORKGROUP` (invocations per workgroup).
pub const DEFAULT_WORKGROUP: u32 = 256;

/// Workgroup memory the shader declares: three u32 arrays of `TILE`.
const WORKGROUP_BYTES: u32 = 3 * 4 * TILE;

/// Positions one workgroup of `radix_histogram` counts.
const RADIX_CHUNK: u32 = 4096;

/// u32 words of per-row radix select state (the shader's `STATE`).
const RADIX_STATE_WORDS: u64 = 264;

/// Bytes of one (key hi, key lo, position) entry in the scratch buffers.
const ENTRY_BYTES: u64 = 12;

/// Everything that can go wrong on the GPU path. Nothing in this crate panics on a request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuError {
    /// The request itself is wrong: the same errors as the CPU crate, with the same numbers.
    Request(Error),
    /// No adapter (no GPU and no software rasterizer such as lavapipe), or no backend compiled in.
    NoAdapter(String),
    /// The adapter refused the device.
    RequestDevice(String),
    /// The device's limits are below what the kernels need.
    Limits {
        /// Which limit.
        limit: &'static str,
        /// What the kernels need.
        needed: u64,
        /// What the device has.
        available: u64,
    },
    /// A buffer handed to [`TopKGpu::record`] cannot be used as it is.
    Buffer {
        /// The tensor the buffer holds.
        tensor: Tensor,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A buffer the request needs is larger than the device can bind (or than 32-bit addressing).
    TooLarge {
        /// Which buffer.
        what: &'static str,
        /// Bytes needed.
        bytes: u64,
        /// Bytes allowed.
        max: u64,
    },
    /// The value or index type is not one the shader knows (cannot happen with the sealed traits).
    Unsupported(&'static str),
    /// wgpu reported a validation, out-of-memory or internal error.
    Wgpu(String),
    /// Waiting for the device failed (device lost, timeout).
    Poll(String),
    /// Mapping a read-back buffer failed.
    Map(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::Request(e) => e.fmt(f),
            GpuError::NoAdapter(why) => write!(f, "no GPU adapter: {why}"),
            GpuError::RequestDevice(why) => write!(f, "the adapter refused a device: {why}"),
            GpuError::Limits {
                limit,
                needed,
                available,
            } => write!(f, "the device's {limit} is {available}; the kernels need {needed}"),
            GpuError::Buffer { tensor, problem } => write!(f, "the {tensor} buffer {problem}"),
            GpuError::TooLarge { what, bytes, max } => {
                write!(f, "the {what} needs {bytes} bytes; the device binds at most {max}")
            }
            GpuError::Unsupported(name) => write!(f, "type {name} is not supported on the GPU"),
            GpuError::Wgpu(e) => write!(f, "wgpu error: {e}"),
            GpuError::Poll(e) => write!(f, "waiting for the GPU failed: {e}"),
            GpuError::Map(e) => write!(f, "reading back from the GPU failed: {e}"),
        }
    }
}

impl std::error::Error for GpuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GpuError::Request(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Error> for GpuError {
    fn from(e: Error) -> Self {
        GpuError::Request(e)
    }
}

/// A value type as the shader sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `half::f16`.
    F16,
    /// `half::bf16`.
    Bf16,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
}

impl Dtype {
    /// Every value type.
    pub const ALL: [Dtype; 12] = [
        Dtype::F32,
        Dtype::F64,
        Dtype::F16,
        Dtype::Bf16,
        Dtype::I8,
        Dtype::I16,
        Dtype::I32,
        Dtype::I64,
        Dtype::U8,
        Dtype::U16,
        Dtype::U32,
        Dtype::U64,
    ];

    /// The lowercase name (the CPU crate's `Element::NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::I8 => "i8",
            Dtype::I16 => "i16",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::U8 => "u8",
            Dtype::U16 => "u16",
            Dtype::U32 => "u32",
            Dtype::U64 => "u64",
        }
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The `Dtype` of an [`Element`].
    pub fn of<T: Element>() -> Option<Dtype> {
        Dtype::from_name(T::NAME)
    }

    /// Bytes per element.
    pub fn bytes(self) -> u32 {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 | Dtype::I64 | Dtype::U64 => 8,
        }
    }

    /// (kind, bits of +inf in the high word): kind 0 unsigned, 1 signed, 2 float.
    fn kind(self) -> (u32, u32) {
        match self {
            Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64 => (0, 0),
            Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64 => (1, 0),
            Dtype::F16 => (2, 0x7C00),
            Dtype::Bf16 => (2, 0x7F80),
            Dtype::F32 => (2, 0x7F80_0000),
            Dtype::F64 => (2, 0x7FF0_0000),
        }
    }
}

/// An index type as the shader sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
}

impl IndexType {
    /// Every index type.
    pub const ALL: [IndexType; 4] = [IndexType::U32, IndexType::U64, IndexType::I32, IndexType::I64];

    /// The lowercase name (the CPU crate's `Index::NAME`).
    pub fn name(self) -> &'static str {
        match self {
            IndexType::U32 => "u32",
            IndexType::U64 => "u64",
            IndexType::I32 => "i32",
            IndexType::I64 => "i64",
        }
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<IndexType> {
        IndexType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The `IndexType` of an [`Index`].
    pub fn of<I: Index>() -> Option<IndexType> {
        IndexType::from_name(I::NAME)
    }

    /// Bytes per index.
    pub fn bytes(self) -> u32 {
        match self {
            IndexType::U32 | IndexType::I32 => 4,
            IndexType::U64 | IndexType::I64 => 8,
        }
    }

    /// The largest position the type holds.
    pub fn max_position(self) -> u64 {
        match self {
            IndexType::U32 => u32::MAX.into(),
            IndexType::U64 => u64::MAX,
            IndexType::I32 => i32::MAX as u64,
            IndexType::I64 => i64::MAX as u64,
        }
    }
}

/// A writable strided view over a host slice for [`TopKGpu::run_host`]: the same rules as the CPU
/// crate's `ViewMut` (inside the slice, no overflow, no two coordinates on one element).
#[derive(Debug)]
pub struct HostViewMut<'a, T, const D: usize> {
    data: &'a mut [T],
    layout: Layout<D>,
}

impl<'a, T, const D: usize> HostViewMut<'a, T, D> {
    /// A view with explicit strides (in elements) and offset.
    pub fn new(data: &'a mut [T], sizes: [usize; D], strides: [isize; D], offset: usize) -> Result<Self, GpuError> {
        let layout = Layout::new(Tensor::Output, sizes, strides, offset, data.len())?;
        layout.check_unaliased(Tensor::Output)?;
        Ok(HostViewMut { data, layout })
    }

    /// A row-major view of `sizes` at the start of `data`.
    pub fn contiguous(data: &'a mut [T], sizes: [usize; D]) -> Result<Self, GpuError> {
        let layout = Layout::contiguous(Tensor::Output, sizes, data.len())?;
        Ok(HostViewMut { data, layout })
    }

    /// The validated layout.
    pub fn layout(&self) -> &Layout<D> {
        &self.layout
    }
}

impl<'a, T> HostViewMut<'a, T, MAX_RANK> {
    /// A view of run-time rank (1..=8), padded to rank 8 as `Layout::padded` says.
    pub fn padded(
        data: &'a mut [T],
        sizes: &[usize],
        strides: Option<&[isize]>,
        offset: usize,
    ) -> Result<Self, GpuError> {
        let layout = Layout::padded(Tensor::Output, sizes, strides, offset, data.len())?;
        layout.check_unaliased(Tensor::Output)?;
        Ok(HostViewMut { data, layout })
    }
}

/// A tensor's layout padded to rank 8 (leading size-1 dimensions), in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Strided {
    sizes: [usize; MAX_RANK],
    strides: [isize; MAX_RANK],
    offset: usize,
}

impl Strided {
    fn of<const D: usize>(layout: &Layout<D>) -> Strided {
        let mut s = Strided {
            sizes: [1; MAX_RANK],
            strides: [0; MAX_RANK],
            offset: layout.offset(),
        };
        s.sizes[MAX_RANK - D..].copy_from_slice(&layout.sizes());
        s.strides[MAX_RANK - D..].copy_from_slice(&layout.strides());
        s
    }

    /// Checks that every address lies in a buffer of `elements` elements.
    fn check_fits(&self, tensor: Tensor, elements: usize) -> Result<(), Error> {
        Layout::new(tensor, self.sizes, self.strides, self.offset, elements).map(|_| ())
    }
}

/// A validated request, independent of where its tensors live: what [`TopKGpu::record`] runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    dtype: Dtype,
    index: IndexType,
    input: Strided,
    values: Strided,
    indices: Strided,
    /// The axis in the padded rank-8 numbering.
    axis: usize,
    k: usize,
    direction: Direction,
}

impl Request {
    /// Validates a request exactly as the CPU crate's `TopK::new` does (SPEC.md §5), given the layouts
    /// of the three tensors (each validated against its own buffer's length by `Layout::new`).
    #[allow(clippy::too_many_arguments)] // the operator's parameters, as in the CPU crate
    pub fn new<const D: usize>(
        dtype: Dtype,
        index: IndexType,
        input: &Layout<D>,
        axis: usize,
        k: usize,
        direction: Direction,
        values: &Layout<D>,
        indices: &Layout<D>,
    ) -> Result<Request, GpuError> {
        let sizes = input.sizes();
        let Some(&len) = sizes.get(axis) else {
            return Err(Error::Axis { axis, rank: D }.into());
        };
        if k > len {
            return Err(Error::K { k, len, axis }.into());
        }
        for (tensor, output) in [(Tensor::Values, values), (Tensor::Indices, indices)] {
            for (dim, (&expected, &actual)) in sizes.iter().zip(&output.sizes()).enumerate() {
                let expected = if dim == axis { k } else { expected };
                if actual != expected {
                    return Err(Error::OutputSize {
                        tensor,
                        dim,
                        expected,
                        actual,
                    }
                    .into());
                }
            }
            output.check_unaliased(tensor)?;
        }
        if len > 0 && (len - 1) as u64 > index.max_position() {
            return Err(Error::IndexType {
                len,
                max: index.max_position(),
            }
            .into());
        }
        Ok(Request {
            dtype,
            index,
            input: Strided::of(input),
            values: Strided::of(values),
            indices: Strided::of(indices),
            axis: axis + MAX_RANK - D,
            k,
            direction,
        })
    }

    /// The length of each sequence.
    pub fn sequence_len(&self) -> usize {
        self.input.sizes[self.axis]
    }

    /// The number of sequences with work to do (0 when K is 0 or the tensor is empty).
    pub fn sequences(&self) -> usize {
        let elements: usize = self.input.sizes.iter().product();
        if self.k == 0 || elements == 0 {
            0
        } else {
            elements / self.sequence_len()
        }
    }

    /// K.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The value type.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The index type.
    pub fn index_type(&self) -> IndexType {
        self.index
    }

    /// The uniform block describing the call, or an error if it exceeds 32-bit addressing.
    fn desc(&self) -> Result<Desc, GpuError> {
        let too_large = |what, bytes: u64| GpuError::TooLarge {
            what,
            bytes,
            max: u32::MAX.into(),
        };
        let n = self.sequence_len();
        let rows = self.sequences();
        let n32 = u32::try_from(n)
            .ok()
            .filter(|&n| n < u32::MAX)
            .ok_or(too_large("sequence", n as u64))?;
        let rows32 = u32::try_from(rows).map_err(|_| too_large("sequence count", rows as u64))?;
        let outputs = (rows as u64).saturating_mul(self.k as u64);
        if outputs > u32::MAX.into() {
            return Err(too_large("output", outputs));
        }
        let (kind, inf_hi) = self.dtype.kind();
        // Strides and offsets wrap to 32 bits: every final address is below 2^32 (the buffers are
        // checked to be), and wrapping arithmetic is exact modulo 2^32.
        let mut desc = Desc {
            n: n32,
            k: self.k as u32,
            rows: rows32,
            input_offset: self.input.offset as i32,
            input_axis: self.input.strides[self.axis] as i32,
            values_offset: self.values.offset as i32,
            values_axis: self.values.strides[self.axis] as i32,
            indices_offset: self.indices.offset as i32,
            indices_axis: self.indices.strides[self.axis] as i32,
            elem_bytes: self.dtype.bytes(),
            kind,
            inf_hi,
            flip: u32::from(self.direction == Direction::Decreasing),
            index_words: self.index.bytes() / 4,
            ..Desc::zeroed()
        };
        let mut rank = 0;
        for d in 0..MAX_RANK {
            // Dimensions of size 1 add nothing to an address; leaving them out shortens the shader's loop.
            if d == self.axis || self.input.sizes[d] == 1 {
                continue;
            }
            let (q, r) = (rank / 4, rank % 4);
            desc.outer_sizes[q][r] = self.input.sizes[d] as u32;
            desc.input_outer[q][r] = self.input.strides[d] as i32;
            desc.values_outer[q][r] = self.values.strides[d] as i32;
            desc.indices_outer[q][r] = self.indices.strides[d] as i32;
            rank += 1;
        }
        desc.outer_rank = rank as u32;
        Ok(desc)
    }

    /// The dispatches of the call and the scratch entries per row they need.
    fn plan(&self, workgroup: u32) -> Result<Plan, GpuError> {
        let too_large = |what| GpuError::TooLarge {
            what,
            bytes: u64::MAX,
            max: u32::MAX.into(),
        };
        let mul = |a: u32, b: u32| a.checked_mul(b).ok_or(too_large("dispatch"));
        let n = self.sequence_len() as u32;
        let k = self.k as u32;
        let rows = self.sequences() as u32;
        let mut plan = Plan {
            steps: Vec::new(),
            scratch_row: 0,
            counters: false,
        };
        let final_tile = |source, src_stride, valid: u32| Step {
            kernel: Kernel::SortTile,
            groups: rows,
            job: Job {
                source,
                sink: 1,
                width: valid.next_power_of_two().max(2),
                chunks: 1,
                src_stride,
                valid,
                stage_first: 2,
                stage_last: valid.next_power_of_two().max(2),
                ..Job::zeroed()
            },
        };
        if n <= TILE {
            plan.steps.push(final_tile(0, n, n));
            return Ok(plan);
        }
        let p = n.checked_next_power_of_two().ok_or(too_large("sequence"))?;
        let q = k.checked_next_power_of_two().ok_or(too_large("K"))?;
        if k > TILE && q == p {
            // K close to n: selecting first would not shorten the sort.
            plan.scratch_row = p;
            sort_rows(&mut plan, rows, 0, n, p, k, workgroup)?;
            return Ok(plan);
        }
        // Radix select: the K-th key digit by digit, then the position of the last tie taken, then the
        // K candidates, sorted in one tile or, above TILE, in rows padded to a power of two.
        let stride = if k <= TILE { k } else { q };
        plan.counters = true;
        plan.scratch_row = stride;
        let chunk = RADIX_CHUNK;
        let chunks = n.div_ceil(chunk);
        let histogram_groups = mul(rows, chunks)?;
        let key_bits = 8 * self.dtype.bytes();
        let pos_bits = u32::BITS - (n - 1).leading_zeros();
        for (phase, bits) in [(0, key_bits), (1, pos_bits)] {
            let mut shift = (bits - 1) / 8 * 8;
            loop {
                let job = Job {
                    chunks,
                    width: chunk,
                    phase,
                    shift,
                    ..Job::zeroed()
                };
                plan.steps.push(Step {
                    kernel: Kernel::RadixHistogram,
                    groups: histogram_groups,
                    job,
                });
                plan.steps.push(Step {
                    kernel: Kernel::RadixSelect,
                    groups: rows,
                    job,
                });
                if shift == 0 {
                    break;
                }
                shift -= 8;
            }
        }
        plan.steps.push(Step {
            kernel: Kernel::RadixCompact,
            groups: mul(rows, n)?.div_ceil(workgroup),
            job: Job {
                dst_stride: stride,
                ..Job::zeroed()
            },
        });
        if k <= TILE {
            plan.steps.push(final_tile(1, k, k));
        } else {
            sort_rows(&mut plan, rows, 1, k, q, k, workgroup)?;
        }
        Ok(plan)
    }
}

/// Appends a row-wide bitonic sort of `valid` entries per row, padded to `p` (a power of two above
/// TILE) in the scratch buffer, read from the input (`source` 0) or the scratch buffer (1, rows of `p`),
/// and the pass writing the first `k` of each row.
fn sort_rows(
    plan: &mut Plan,
    rows: u32,
    source: u32,
    valid: u32,
    p: u32,
    k: u32,
    workgroup: u32,
) -> Result<(), GpuError> {
    let mul = |a: u32, b: u32| {
        a.checked_mul(b).ok_or(GpuError::TooLarge {
            what: "dispatch",
            bytes: u64::from(a) * u64::from(b),
            max: u32::MAX.into(),
        })
    };
    let chunks = p / TILE;
    let tile_groups = mul(rows, chunks)?;
    let tile = |source, valid, stage_first, stage_last| Step {
        kernel: Kernel::SortTile,
        groups: tile_groups,
        job: Job {
            source,
            sink: 0,
            width: TILE,
            chunks,
            src_stride: p,
            valid,
            dst_stride: p,
            stage_first,
            stage_last,
            global_dir: 1,
            ..Job::zeroed()
        },
    };
    // The first pass pads positions at and above `valid` with entries that sort last.
    plan.steps.push(tile(source, valid, 2, TILE));
    let mut stage = 2 * TILE;
    while stage <= p {
        let mut j = stage / 2;
        while j >= TILE {
            plan.steps.push(Step {
                kernel: Kernel::BitonicStep,
                groups: mul(rows, p / 2)?.div_ceil(workgroup),
                job: Job {
                    dst_stride: p,
                    j,
                    stage,
                    ..Job::zeroed()
                },
            });
            j /= 2;
        }
        plan.steps.push(tile(1, p, stage, stage));
        stage = stage.saturating_mul(2);
    }
    plan.steps.push(Step {
        kernel: Kernel::WriteSorted,
        groups: mul(rows, k)?.div_ceil(workgroup),
        job: Job {
            dst_stride: p,
            ..Job::zeroed()
        },
    });
    Ok(())
}

/// Mirrors the shader's `Desc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Desc {
    outer_sizes: [[u32; 4]; 2],
    input_outer: [[i32; 4]; 2],
    values_outer: [[i32; 4]; 2],
    indices_outer: [[i32; 4]; 2],
    outer_rank: u32,
    n: u32,
    k: u32,
    rows: u32,
    input_offset: i32,
    input_axis: i32,
    values_offset: i32,
    values_axis: i32,
    indices_offset: i32,
    indices_axis: i32,
    elem_bytes: u32,
    kind: u32,
    inf_hi: u32,
    flip: u32,
    index_words: u32,
    pad0: u32,
}

/// Mirrors the shader's `Job`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Job {
    source: u32,
    sink: u32,
    width: u32,
    chunks: u32,
    src_stride: u32,
    valid: u32,
    dst_stride: u32,
    stage_first: u32,
    stage_last: u32,
    global_dir: u32,
    j: u32,
    stage: u32,
    phase: u32,
    shift: u32,
    pad: [u32; 2],
}

/// Bytes between two jobs in the job buffer: WebGPU's largest `minUniformBufferOffsetAlignment`.
const JOB_SLOT: u64 = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    SortTile,
    BitonicStep,
    WriteSorted,
    RadixHistogram,
    RadixSelect,
    RadixCompact,
}

#[derive(Clone, Copy, Debug)]
struct Step {
    kernel: Kernel,
    /// Workgroups to dispatch (laid out in 2D when above the per-dimension limit).
    groups: u32,
    job: Job,
}

#[derive(Debug)]
struct Plan {
    steps: Vec<Step>,
    /// Entries per row of the scratch buffer.
    scratch_row: u32,
    /// Whether the radix select's per-row counters are used.
    counters: bool,
}

/// An adapter, its device and queue: the blocking helper for tests and the command line.
#[derive(Debug)]
pub struct Gpu {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device (with the adapter's limits, and timestamp queries where the adapter has them).
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
}

impl Gpu {
    /// The first adapter wgpu finds (environment variables such as `WGPU_BACKEND` and
    /// `WGPU_ADAPTER_NAME` are honoured), blocking.
    pub fn new() -> Result<Gpu, GpuError> {
        pollster::block_on(Gpu::new_async())
    }

    /// [`Gpu::new`], as a future.
    pub async fn new_async() -> Result<Gpu, GpuError> {
        if wgpu::Instance::enabled_backend_features().is_empty() {
            return Err(GpuError::NoAdapter(
                "no wgpu backend compiled in for this target".into(),
            ));
        }
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("topk-kernels-gpu"),
                required_features: adapter.features() & wanted,
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        // wgpu's default handler panics on an error outside an error scope; this crate reports errors
        // through scopes (`run_host`) and checks requests up front (`record`), so only report here.
        device.on_uncaptured_error(Arc::new(|e| eprintln!("topk-kernels-gpu: uncaptured wgpu error: {e}")));
        Ok(Gpu { adapter, device, queue })
    }

    /// The adapter's name (e.g. `llvmpipe (LLVM 15.0.6, 256 bits)` for lavapipe).
    pub fn name(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?}, {})", info.name, info.backend, info.driver_info)
    }
}

/// The kernels' pipelines, built once per device.
#[derive(Debug)]
pub struct TopKGpu {
    layout: wgpu::BindGroupLayout,
    sort_tile: wgpu::ComputePipeline,
    bitonic_step: wgpu::ComputePipeline,
    write_sorted: wgpu::ComputePipeline,
    radix_histogram: wgpu::ComputePipeline,
    radix_select: wgpu::ComputePipeline,
    radix_compact: wgpu::ComputePipeline,
    max_binding: u64,
    max_groups: u32,
    workgroup: u32,
}

impl TopKGpu {
    /// Compiles the shader and builds the pipelines. Checks the device's limits first.
    pub fn new(device: &wgpu::Device) -> Result<TopKGpu, GpuError> {
        TopKGpu::with_workgroup_size(device, DEFAULT_WORKGROUP)
    }

    /// [`TopKGpu::new`] with the shader's `WORKGROUP` override set to `workgroup` invocations, a power
    /// of two from 32 to `TILE / 2` (the default, 256, suits most GPUs; 64 or 128 may suit small ones).
    pub fn with_workgroup_size(device: &wgpu::Device, workgroup: u32) -> Result<TopKGpu, GpuError> {
        if !workgroup.is_power_of_two() || !(32..=TILE / 2).contains(&workgroup) {
            return Err(GpuError::Limits {
                limit: "workgroup size (a power of two from 32 to 512)",
                needed: 32,
                available: workgroup.into(),
            });
        }
        let limits = device.limits();
        let checks: [(&'static str, u64, u64); 6] = [
            (
                "max_compute_workgroup_storage_size",
                WORKGROUP_BYTES.into(),
                limits.max_compute_workgroup_storage_size.into(),
            ),
            (
                "max_compute_invocations_per_workgroup",
                workgroup.into(),
                limits.max_compute_invocations_per_workgroup.into(),
            ),
            (
                "max_compute_workgroup_size_x",
                workgroup.into(),
                limits.max_compute_workgroup_size_x.into(),
            ),
            (
                "max_storage_buffers_per_shader_stage",
                5,
                limits.max_storage_buffers_per_shader_stage.into(),
            ),
            (
                "max_uniform_buffers_per_shader_stage",
                2,
                limits.max_uniform_buffers_per_shader_stage.into(),
            ),
            (
                "max_dynamic_uniform_buffers_per_pipeline_layout",
                1,
                limits.max_dynamic_uniform_buffers_per_pipeline_layout.into(),
            ),
        ];
        for (limit, needed, available) in checks {
            if available < needed {
                return Err(GpuError::Limits {
                    limit,
                    needed,
                    available,
                });
            }
        }
        if u64::from(limits.min_uniform_buffer_offset_alignment) > JOB_SLOT {
            return Err(GpuError::Limits {
                limit: "min_uniform_buffer_offset_alignment",
                needed: JOB_SLOT,
                available: limits.min_uniform_buffer_offset_alignment.into(),
            });
        }
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("topk.wgsl"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let entry = |binding, ty, dynamic| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: dynamic,
                min_binding_size: None,
            },
            count: None,
        };
        let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("topk"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform, false),
                entry(1, wgpu::BufferBindingType::Uniform, true),
                entry(2, storage(true), false),
                entry(3, storage(false), false),
                entry(4, storage(false), false),
                entry(5, storage(false), false),
                entry(6, storage(false), false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("topk"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |entry_point| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry_point),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &[("WORKGROUP", f64::from(workgroup))],
                    // Every workgroup variable is written before it is read.
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            })
        };
        let sort_tile = pipeline("sort_tile");
        let bitonic_step = pipeline("bitonic_step");
        let write_sorted = pipeline("write_sorted");
        let radix_histogram = pipeline("radix_histogram");
        let radix_select = pipeline("radix_select");
        let radix_compact = pipeline("radix_compact");
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        Ok(TopKGpu {
            layout,
            sort_tile,
            bitonic_step,
            write_sorted,
            radix_histogram,
            radix_select,
            radix_compact,
            max_binding: limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size)
                .min(u32::MAX.into()),
            max_groups: limits.max_compute_workgroups_per_dimension,
            workgroup,
        })
    }

    /// Records the kernels for `request` into `encoder`; never submits.
    ///
    /// `input`, `values` and `indices` are three distinct buffers with `STORAGE` usage, each bound
    /// whole; the request's layouts address them in elements from their start, and are checked
    /// against their sizes here. Scratch and parameter buffers are created on `device` and kept alive
    /// by the command buffer. Sub-word values are written with atomic read-modify-write, so bytes of
    /// the values buffer outside the view keep their contents. Nothing is recorded on error.
    pub fn record(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        request: &Request,
        input: &wgpu::Buffer,
        values: &wgpu::Buffer,
        indices: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let desc = request.desc()?;
        if request.sequences() == 0 {
            return Ok(());
        }
        if input == values || input == indices || values == indices {
            return Err(GpuError::Buffer {
                tensor: if input == values || input == indices {
                    Tensor::Input
                } else {
                    Tensor::Values
                },
                problem: "is also bound as another tensor; the three buffers must be distinct",
            });
        }
        let tensors = [
            (Tensor::Input, input, &request.input, request.dtype.bytes()),
            (Tensor::Values, values, &request.values, request.dtype.bytes()),
            (Tensor::Indices, indices, &request.indices, request.index.bytes()),
        ];
        for (tensor, buffer, layout, bytes) in tensors {
            if !buffer.usage().contains(wgpu::BufferUsages::STORAGE) {
                return Err(GpuError::Buffer {
                    tensor,
                    problem: "lacks STORAGE usage",
                });
            }
            if buffer.size() % 4 != 0 {
                return Err(GpuError::Buffer {
                    tensor,
                    problem: "size is not a multiple of 4 bytes",
                });
            }
            if buffer.size() > self.max_binding {
                return Err(GpuError::TooLarge {
                    what: "tensor buffer",
                    bytes: buffer.size(),
                    max: self.max_binding,
                });
            }
            layout.check_fits(tensor, (buffer.size() / u64::from(bytes)) as usize)?;
        }
        let plan = request.plan(self.workgroup)?;
        let rows = u64::from(desc.rows);
        let scratch_bytes = (rows * u64::from(plan.scratch_row) * ENTRY_BYTES).max(ENTRY_BYTES);
        let counters_bytes = if plan.counters { rows * RADIX_STATE_WORDS * 4 } else { 4 };
        for bytes in [scratch_bytes, counters_bytes] {
            if bytes > self.max_binding {
                return Err(GpuError::TooLarge {
                    what: "scratch buffer",
                    bytes,
                    max: self.max_binding,
                });
            }
        }
        let mut grids = Vec::with_capacity(plan.steps.len());
        for step in &plan.steps {
            grids.push(self.grid(step.groups)?);
        }
        let scratch = |label, size| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        let entries = scratch("topk scratch", scratch_bytes);
        // New buffers are zeroed, which is the radix select's initial state.
        let counters = scratch("topk radix counters", counters_bytes);
        let desc_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("topk desc"),
            contents: bytemuck::bytes_of(&desc),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let mut jobs = vec![0u8; plan.steps.len() * JOB_SLOT as usize];
        for (slot, step) in jobs.chunks_exact_mut(JOB_SLOT as usize).zip(&plan.steps) {
            slot[..size_of::<Job>()].copy_from_slice(bytemuck::bytes_of(&step.job));
        }
        let job_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("topk jobs"),
            contents: &jobs,
            usage: wgpu::BufferUsages::UNIFORM,
        });
        fn whole(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            }
        }
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("topk"),
            layout: &self.layout,
            entries: &[
                whole(0, &desc_buffer),
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &job_buffer,
                        offset: 0,
                        size: wgpu::BufferSize::new(size_of::<Job>() as u64),
                    }),
                },
                whole(2, input),
                whole(3, &entries),
                whole(4, values),
                whole(5, indices),
                whole(6, &counters),
            ],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("topk"),
            timestamp_writes: None,
        });
        for (slot, (step, (x, y))) in plan.steps.iter().zip(grids).enumerate() {
            pass.set_pipeline(match step.kernel {
                Kernel::SortTile => &self.sort_tile,
                Kernel::BitonicStep => &self.bitonic_step,
                Kernel::WriteSorted => &self.write_sorted,
                Kernel::RadixHistogram => &self.radix_histogram,
                Kernel::RadixSelect => &self.radix_select,
                Kernel::RadixCompact => &self.radix_compact,
            });
            pass.set_bind_group(0, &bind_group, &[(slot as u64 * JOB_SLOT) as u32]);
            pass.dispatch_workgroups(x, y, 1);
        }
        Ok(())
    }

    /// A 2D grid of at least `groups` workgroups within the per-dimension limit.
    fn grid(&self, groups: u32) -> Result<(u32, u32), GpuError> {
        let max = self.max_groups.max(1);
        if groups <= max {
            return Ok((groups, 1));
        }
        let y = groups.div_ceil(max);
        if y > max {
            return Err(GpuError::TooLarge {
                what: "dispatch",
                bytes: groups.into(),
                max: u64::from(max) * u64::from(max),
            });
        }
        Ok((max, y))
    }

    /// The whole operation from host memory to host memory, blocking: uploads the input slice and the
    /// current contents of the output slices, records, submits, waits and copies the outputs back.
    ///
    /// Validation is the CPU crate's; on any error nothing has been written to the output slices.
    #[allow(clippy::too_many_arguments)] // the operator's parameters, as in the CPU crate
    pub fn run_host<T: Element + Pod, I: Index + Pod, const D: usize>(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        input: View<'_, T, D>,
        axis: usize,
        k: usize,
        direction: Direction,
        values: HostViewMut<'_, T, D>,
        indices: HostViewMut<'_, I, D>,
    ) -> Result<(), GpuError> {
        let dtype = Dtype::of::<T>().ok_or(GpuError::Unsupported(T::NAME))?;
        let index = IndexType::of::<I>().ok_or(GpuError::Unsupported(I::NAME))?;
        let request = Request::new(
            dtype,
            index,
            input.layout(),
            axis,
            k,
            direction,
            values.layout(),
            indices.layout(),
        )?;
        request.desc()?;
        if request.sequences() == 0 {
            return Ok(());
        }
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let result = self.run_host_inner(device, queue, &request, input.data(), values.data, indices.data);
        let memory = pollster::block_on(memory.pop());
        let validation = pollster::block_on(validation.pop());
        if let Some(e) = memory.or(validation) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        let (values_bytes, indices_bytes) = result?;
        // Everything succeeded: only now touch the caller's slices. The read-backs are the uploaded
        // slices rounded up to whole words, so they are at least as long.
        let values_out: &mut [u8] = bytemuck::cast_slice_mut(values.data);
        let len = values_out.len();
        values_out.copy_from_slice(&values_bytes[..len]);
        let indices_out: &mut [u8] = bytemuck::cast_slice_mut(indices.data);
        let len = indices_out.len();
        indices_out.copy_from_slice(&indices_bytes[..len]);
        Ok(())
    }

    fn run_host_inner<T: Pod, I: Pod>(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        request: &Request,
        input: &[T],
        values: &[T],
        indices: &[I],
    ) -> Result<(Vec<u8>, Vec<u8>), GpuError> {
        let upload = |label, bytes: &[u8], usage| {
            let size = words(bytes.len());
            if size > self.max_binding {
                return Err(GpuError::TooLarge {
                    what: label,
                    bytes: size,
                    max: self.max_binding,
                });
            }
            let mut padded = bytes.to_vec();
            padded.resize(size as usize, 0);
            Ok(device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &padded,
                usage,
            }))
        };
        let output = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let input_buffer = upload("input", bytemuck::cast_slice(input), wgpu::BufferUsages::STORAGE)?;
        let values_buffer = upload("values", bytemuck::cast_slice(values), output)?;
        let indices_buffer = upload("indices", bytemuck::cast_slice(indices), output)?;
        let read_back = |buffer: &wgpu::Buffer| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("topk read-back"),
                size: buffer.size(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let (values_read, indices_read) = (read_back(&values_buffer), read_back(&indices_buffer));
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("topk") });
        self.record(
            device,
            &mut encoder,
            request,
            &input_buffer,
            &values_buffer,
            &indices_buffer,
        )?;
        encoder.copy_buffer_to_buffer(&values_buffer, 0, &values_read, 0, values_buffer.size());
        encoder.copy_buffer_to_buffer(&indices_buffer, 0, &indices_read, 0, indices_buffer.size());
        queue.submit([encoder.finish()]);
        Ok((read_buffer(device, &values_read)?, read_buffer(device, &indices_read)?))
    }
}

/// `bytes` rounded up to whole u32 words, at least one word (a binding may not be empty).
fn words(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4).max(1) * 4
}

/// Maps a `MAP_READ` buffer, waits, and copies its contents out.
fn read_buffer(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Result<Vec<u8>, GpuError> {
    let (sender, receiver) = mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |result| {
        // The receiver outlives the poll below; a send error would only mean it is gone.
        let _ = sender.send(result);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Poll(e.to_string()))?;
    match receiver.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(GpuError::Map(e.to_string())),
        Err(_) => return Err(GpuError::Map("the map callback never ran".into())),
    }
    let bytes = buffer
        .get_mapped_range(..)
        .map_err(|e| GpuError::Map(e.to_string()))?
        .to_vec();
    buffer.unmap();
    Ok(bytes)
}
