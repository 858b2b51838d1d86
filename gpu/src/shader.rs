//! What the Rust side shares with `shaders/topk.wgsl`: the source, its sizes, the mirrors of its uniform
//! blocks, and its entry points.

use bytemuck::{Pod, Zeroable};

/// The WGSL source of every kernel (entry points `sort_tile`, `bitonic_step`, `write_sorted`,
/// `radix_histogram`, `radix_select`, `radix_compact`, `filter_histogram`, `filter_pick`,
/// `filter_candidates`, `filter_finish`, `short_select`, `tiny_rows`).
pub const SHADER: &str = include_str!("../shaders/topk.wgsl");

/// Entries sorted in workgroup memory (the shader's `TILE`): rows up to this length take one dispatch.
pub const TILE: u32 = 1024;

/// The default of the shader's `override WORKGROUP` (invocations per workgroup).
pub const DEFAULT_WORKGROUP: u32 = 256;

/// Workgroup memory the largest entry point uses (`short_select`): three u32 arrays of `TILE`, 256
/// bins, three of `SHORT_CANDIDATES` and a few words.
pub(crate) const WORKGROUP_BYTES: u32 = 3 * 4 * TILE + 4 * 256 + 3 * 4 * SHORT_CANDIDATES + 128;

/// Rows up to this length go several to a workgroup (`tiny_rows`).
pub(crate) const TINY_ROW: u32 = 32;

/// Entries `short_select` ranks by counting (the shader's `SHORT_CANDIDATES`); it serves K up to half.
pub(crate) const SHORT_CANDIDATES: u32 = 128;

/// Positions one workgroup of `radix_histogram` counts.
pub(crate) const RADIX_CHUNK: u32 = 4096;

/// u32 words of per-row radix select state (the shader's `STATE`).
pub(crate) const RADIX_STATE_WORDS: u64 = 264;

/// Positions one workgroup of `filter_histogram` counts.
pub(crate) const FILTER_CHUNK: u32 = 8192;

/// u32 words of per-row threshold filter state (the shader's `FILTER_STATE`).
pub(crate) const FILTER_STATE_WORDS: u64 = 2052;

/// Bytes of one (key hi, key lo, position) entry in the scratch buffers.
pub(crate) const ENTRY_BYTES: u64 = 12;

/// Mirrors the shader's `Desc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct Desc {
    pub(crate) outer_sizes: [[u32; 4]; 2],
    pub(crate) input_outer: [[i32; 4]; 2],
    pub(crate) values_outer: [[i32; 4]; 2],
    pub(crate) indices_outer: [[i32; 4]; 2],
    pub(crate) outer_rank: u32,
    pub(crate) n: u32,
    pub(crate) k: u32,
    pub(crate) rows: u32,
    pub(crate) input_offset: i32,
    pub(crate) input_axis: i32,
    pub(crate) values_offset: i32,
    pub(crate) values_axis: i32,
    pub(crate) indices_offset: i32,
    pub(crate) indices_axis: i32,
    pub(crate) elem_bytes: u32,
    pub(crate) kind: u32,
    pub(crate) inf_hi: u32,
    pub(crate) flip: u32,
    pub(crate) index_words: u32,
    pub(crate) pad0: u32,
}

/// Mirrors the shader's `Job`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct Job {
    pub(crate) source: u32,
    pub(crate) sink: u32,
    pub(crate) width: u32,
    pub(crate) chunks: u32,
    pub(crate) src_stride: u32,
    pub(crate) valid: u32,
    pub(crate) dst_stride: u32,
    pub(crate) stage_first: u32,
    pub(crate) stage_last: u32,
    pub(crate) global_dir: u32,
    pub(crate) j: u32,
    pub(crate) stage: u32,
    pub(crate) phase: u32,
    pub(crate) shift: u32,
    pub(crate) reset: u32,
    pub(crate) pad: u32,
}

/// Bytes between two jobs in the job buffer: WebGPU's largest `minUniformBufferOffsetAlignment`.
pub(crate) const JOB_SLOT: u64 = 256;

/// The entry points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    SortTile,
    BitonicStep,
    WriteSorted,
    RadixHistogram,
    RadixSelect,
    RadixCompact,
    FilterHistogram,
    FilterPick,
    FilterCandidates,
    FilterFinish,
    ShortSelect,
    TinyRows,
}
