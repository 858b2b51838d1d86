//! Arbitrary descriptors through the C ABI (`topk1`, `topk1_scratch_bytes`, `topk_status_message`): every
//! pointer points into one arena (or is NULL), so overlapping, misaligned and short buffers all occur.
//! Every call must return a documented status (never `TOPK_STATUS_INTERNAL`, never a crash); on an error
//! no byte outside the scratch changes; on success the buffers were disjoint and the outputs equal
//! `naive::topk` through the Rust API on copies.
#![no_main]

use core::ffi::c_void;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use topk_fuzz::{Concrete, ConcreteTensor, DataType, IndexType, NAIVE_BUDGET, Pod, dispatch, with_views};
use topk_kernels::{Direction, Element, Index, min_scratch_len, naive, topk};
use topk_kernels_capi::{
    TOPK_STATUS_INTERNAL, TOPK_STATUS_OK, TensorDesc, topk_status_message, topk1, topk1_scratch_bytes,
};

const ARENA_WORDS: usize = 1024;
const ARENA: usize = ARENA_WORDS * 8;
const CODES: [u32; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 64];
const INDEX_CODES: [u32; 4] = [3, 10, 6, 11];

#[derive(Arbitrary, Debug, Clone, Copy)]
struct Region {
    start: u16,
    bytes: u16,
    /// 255: NULL data.
    null: u8,
}

impl Region {
    fn range(&self) -> (usize, usize) {
        let start = self.start as usize % ARENA;
        (start, self.bytes as usize % (ARENA - start + 1))
    }
}

#[derive(Arbitrary, Debug)]
struct Desc {
    /// Below 240: one of the twelve codes (or an index code for the indices); else a raw code.
    data_type: u8,
    /// `% 10`: 0 and 9 are invalid.
    dimension_count: u8,
    sizes: [u8; 8],
    /// None: NULL (packed row-major).
    strides: Option<[u8; 8]>,
    region: Region,
    /// 255: a NULL descriptor; 254: NULL sizes.
    null: u8,
}

fn size_of_code(b: u8) -> u32 {
    match b {
        255 => u32::MAX,
        254 => 1 << 31,
        253 => 65_536,
        _ => (b % 6) as u32,
    }
}

fn stride_of_code(b: u8) -> u32 {
    match b {
        255 => u32::MAX,
        254 => 1 << 31,
        _ => (b % 12) as u32,
    }
}

#[derive(Arbitrary, Debug)]
struct Case {
    input: Desc,
    values: Desc,
    indices: Desc,
    /// The outputs get the input's dimension count, sizes with K along the axis, and the input's data
    /// type (values) — the shape of a valid request.
    derive_outputs: bool,
    /// The input's length along the axis (replaces a small size).
    axis_len: u16,
    axis: u8,
    k: u8,
    direction: u8,
    /// 0: exactly what topk1_scratch_bytes says, in its own buffer; 1: an arena region; 2: NULL.
    scratch_mode: u8,
    scratch: Region,
    data: Vec<u8>,
}

struct Built {
    desc: TensorDesc,
    sizes: Vec<u32>,
    strides: Option<Vec<u32>>,
    /// Arena byte range the descriptor claims.
    start: usize,
    bytes: usize,
    null: u8,
}

fn build(d: &Desc, dims: usize, sizes: Vec<u32>, code: u32, arena: *mut u8) -> Built {
    let strides = d
        .strides
        .map(|s| (0..dims).map(|i| stride_of_code(s[i % 8])).collect::<Vec<_>>());
    let (start, bytes) = d.region.range();
    let data = if d.region.null == 255 {
        core::ptr::null_mut()
    } else {
        arena.wrapping_add(start).cast::<c_void>()
    };
    Built {
        desc: TensorDesc {
            data_type: code,
            dimension_count: dims as u32,
            sizes: core::ptr::null(),
            strides: core::ptr::null(),
            total_tensor_size_in_bytes: bytes as u64,
            data,
        },
        sizes,
        strides,
        start,
        bytes,
        null: d.null,
    }
}

impl Built {
    /// The descriptor with its arrays' pointers filled in (the arrays live in `self`).
    fn desc(&mut self) -> TensorDesc {
        let mut desc = self.desc;
        // Pad to 9 entries so a dimension count of 9 reads initialised memory.
        self.sizes.resize(self.sizes.len().max(9), 1);
        desc.sizes = if self.null == 254 {
            core::ptr::null()
        } else {
            self.sizes.as_ptr()
        };
        if let Some(s) = &mut self.strides {
            s.resize(s.len().max(9), 1);
            desc.strides = s.as_ptr();
        }
        desc
    }
}

fn code(b: u8, codes: &[u32]) -> u32 {
    if b < 240 {
        codes[b as usize % codes.len()]
    } else {
        b as u32 * 3
    }
}

fn dtype_of(code: u32) -> Option<DataType> {
    Some(match code {
        1 => DataType::F32,
        2 => DataType::F16,
        3 => DataType::U32,
        4 => DataType::U16,
        5 => DataType::U8,
        6 => DataType::I32,
        7 => DataType::I16,
        8 => DataType::I8,
        9 => DataType::F64,
        10 => DataType::U64,
        11 => DataType::I64,
        64 => DataType::Bf16,
        _ => return None,
    })
}

fn index_of(code: u32) -> Option<IndexType> {
    Some(match code {
        3 => IndexType::U32,
        10 => IndexType::U64,
        6 => IndexType::I32,
        11 => IndexType::I64,
        _ => return None,
    })
}

fn element_size(code: u32) -> usize {
    match code {
        5 | 8 => 1,
        2 | 4 | 7 | 64 => 2,
        1 | 3 | 6 => 4,
        _ => 8,
    }
}

fuzz_target!(|case: Case| {
    let mut arena = vec![0u64; ARENA_WORDS];
    let base = arena.as_mut_ptr().cast::<u8>();
    {
        // SAFETY: the arena is ARENA bytes, initialised.
        let bytes = unsafe { core::slice::from_raw_parts_mut(base, ARENA) };
        for (b, d) in bytes.iter_mut().zip(case.data.iter().cycle()) {
            *b = *d;
        }
    }

    let dims = case.input.dimension_count as usize % 10;
    let mut sizes: Vec<u32> = (0..dims).map(|d| size_of_code(case.input.sizes[d % 8])).collect();
    let axis = case.axis as usize % (dims + 1);
    if axis < dims && sizes[axis] <= 5 {
        sizes[axis] = (case.axis_len % 200) as u32;
    }
    let n = sizes.get(axis).copied().unwrap_or(0);
    let k = match case.k {
        255 => u32::MAX,
        254 => n.saturating_add(1),
        k => k as u32 % (n.min(250) + 1),
    };
    let input_code = code(case.input.data_type, &CODES);
    let mut input = build(&case.input, dims, sizes.clone(), input_code, base);
    let mut out_sizes = sizes.clone();
    if let Some(s) = out_sizes.get_mut(axis) {
        *s = k;
    }
    let outputs = [(&case.values, false), (&case.indices, true)].map(|(d, is_index)| {
        let c = if is_index {
            code(d.data_type, &INDEX_CODES)
        } else {
            code(d.data_type, &CODES)
        };
        if case.derive_outputs {
            build(d, dims, out_sizes.clone(), if is_index { c } else { input_code }, base)
        } else {
            let dd = d.dimension_count as usize % 10;
            build(d, dd, (0..dd).map(|i| size_of_code(d.sizes[i % 8])).collect(), c, base)
        }
    });
    let [mut values, mut indices] = outputs;
    let (di, dv, dx) = (input.desc(), values.desc(), indices.desc());
    let null = |b: &Built, d: &TensorDesc| {
        if b.null == 255 {
            core::ptr::null()
        } else {
            d as *const TensorDesc
        }
    };
    let (pi, pv, px) = (null(&input, &di), null(&values, &dv), null(&indices, &dx));
    let direction = match case.direction {
        0..=120 => 0,
        121..=250 => 1,
        d => d as u32,
    };

    // topk1_scratch_bytes: a documented status, and with a NULL result pointer too.
    let mut needed = usize::MAX;
    // SAFETY: every pointer is NULL or valid as the function asks.
    let status = unsafe { topk1_scratch_bytes(pi, axis as u32, k, &mut needed) };
    assert!(
        status == TOPK_STATUS_OK || (TOPK_STATUS_INTERNAL + 1..0).contains(&status),
        "{status}"
    );
    // SAFETY: as above; a NULL result pointer is one of the documented errors.
    let _ = unsafe { topk1_scratch_bytes(pi, axis as u32, k, core::ptr::null_mut()) };

    let mut own_scratch: Vec<u64> = Vec::new();
    let (scratch_ptr, scratch_bytes, scratch_range) = match case.scratch_mode % 3 {
        0 if status == TOPK_STATUS_OK && needed <= 1 << 20 => {
            own_scratch = vec![0xDEAD_BEEF; needed.div_ceil(8)];
            (own_scratch.as_mut_ptr().cast::<c_void>(), needed, None)
        }
        1 if case.scratch.null != 255 => {
            let (s, b) = case.scratch.range();
            (base.wrapping_add(s).cast::<c_void>(), b, Some((s, b)))
        }
        _ => (core::ptr::null_mut(), case.scratch.bytes as usize, None),
    };

    let before: Vec<u8> = {
        // SAFETY: the arena is ARENA initialised bytes.
        unsafe { core::slice::from_raw_parts(base, ARENA) }.to_vec()
    };
    // SAFETY: descriptors and their arrays are alive; data pointers are NULL or point into the arena with
    // total_tensor_size_in_bytes bytes after them; the scratch is NULL, our own buffer, or an arena region.
    let status = unsafe { topk1(pi, pv, px, axis as u32, k, direction, scratch_ptr, scratch_bytes) };
    drop(own_scratch);
    assert_ne!(status, TOPK_STATUS_INTERNAL, "a library error without a status");
    assert!(
        status == TOPK_STATUS_OK || (TOPK_STATUS_INTERNAL..0).contains(&status),
        "{status}"
    );
    // Every status has its sentence.
    // SAFETY: topk_status_message returns a static NUL-terminated string.
    let message = unsafe { core::ffi::CStr::from_ptr(topk_status_message(status)) };
    assert_ne!(message.to_bytes(), b"unknown status");

    // SAFETY: the arena is ARENA initialised bytes and the call is over.
    let after = unsafe { core::slice::from_raw_parts(base, ARENA) }.to_vec();
    drop(arena);
    let in_scratch = |a: usize| scratch_range.is_some_and(|(s, b)| (s..s + b).contains(&a));
    if status != TOPK_STATUS_OK {
        for a in 0..ARENA {
            assert!(
                in_scratch(a) || before[a] == after[a],
                "byte {a} written by a failed call ({status})"
            );
        }
        return;
    }

    // Success: the slices (whole elements of tensors that have elements) did not overlap.
    let slice = |b: &Built| {
        let elements: u128 = b.sizes[..dims].iter().map(|&s| s as u128).product();
        let size = element_size(b.desc.data_type);
        if elements == 0 {
            0..0
        } else {
            b.start..b.start + b.bytes / size * size
        }
    };
    let ranges = [slice(&input), slice(&values), slice(&indices)];
    for i in 0..3 {
        for j in i + 1..3 {
            let (a, b) = (&ranges[i], &ranges[j]);
            assert!(
                a.is_empty() || b.is_empty() || a.end <= b.start || b.end <= a.start,
                "{a:?} {b:?} overlap"
            );
        }
    }

    // And the outputs are those of the Rust API's reference on copies.
    let dtype = dtype_of(input_code).expect("accepted");
    let itype = index_of(indices.desc.data_type).expect("accepted");
    let tensor = |b: &Built| ConcreteTensor {
        sizes: b.sizes[..dims].iter().map(|&s| s as usize).collect(),
        strides: b
            .strides
            .as_ref()
            .map(|s| s[..dims].iter().map(|&x| x as isize).collect()),
        offset: 0,
        len: b.bytes / element_size(b.desc.data_type),
    };
    let c = Concrete {
        rank: dims,
        axis,
        k: k as usize,
        direction: if direction == 1 {
            Direction::Decreasing
        } else {
            Direction::Increasing
        },
        tensors: [tensor(&input), tensor(&values), tensor(&indices)],
    };
    let regions = [
        (input.start, input.bytes),
        (values.start, values.bytes),
        (indices.start, indices.bytes),
    ];
    dispatch!(dtype, itype, compare(&c, &before, &after, regions));
});

fn read<T: Pod>(bytes: &[u8], count: usize) -> Vec<T> {
    (0..count).map(|i| T::from_le(&bytes[i * T::SIZE..])).collect()
}

fn compare<T: Element + Pod, I: Index + Pod>(c: &Concrete, before: &[u8], after: &[u8], regions: [(usize, usize); 3]) {
    let [(is, ib), (vs, vb), (xs, xb)] = regions;
    let input: Vec<T> = read(&before[is..is + ib], ib / T::SIZE);
    let mut values: Vec<T> = read(&before[vs..vs + vb], vb / T::SIZE);
    let mut indices: Vec<I> = read(&before[xs..xs + xb], xb / I::SIZE);
    if c.naive_work() <= NAIVE_BUDGET {
        with_views(c, &input, &mut values, &mut indices, |i, axis, v, x| {
            naive::topk(topk_kernels::Request {
                input: i,
                axis,
                k: c.k,
                direction: c.direction,
                values: v,
                indices: x,
            })
        })
    } else {
        // Too slow a reference: the Rust API's `topk`, which the other targets hold to `naive`.
        let n = c.tensors[0].sizes[c.axis];
        let mut scratch = vec![0u64; min_scratch_len::<T>(n, c.k)];
        with_views(c, &input, &mut values, &mut indices, |i, axis, v, x| {
            topk(
                topk_kernels::Request {
                    input: i,
                    axis,
                    k: c.k,
                    direction: c.direction,
                    values: v,
                    indices: x,
                },
                &mut scratch,
            )
        })
    }
    .expect("the Rust API accepts what topk1 accepted");
    let got_values: Vec<T> = read(&after[vs..vs + vb], vb / T::SIZE);
    let got_indices: Vec<I> = read(&after[xs..xs + xb], xb / I::SIZE);
    topk_fuzz::assert_same("values", &got_values, &values);
    topk_fuzz::assert_same("indices", &got_indices, &indices);
}
