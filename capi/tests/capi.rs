//! The C entry points from Rust: the DirectML examples, the reference (`naive::topk`) on random strided
//! descriptors over every value and index type, and every error status.

use std::ffi::{CStr, c_void};
use std::ptr;

use topk_kernels::{Direction, Element, Request, View, ViewMut, bf16, f16, min_scratch_len, naive};
use topk_kernels_capi::*;

/// The element types as the tests need them: their C code and their bits, for bitwise comparison.
trait Sample: Element {
    const CODE: u32;
    fn from_bits64(bits: u64) -> Self;
    fn bits(self) -> u64;
}

macro_rules! samples {
    ($($t:ty => $code:expr, |$b:ident| $from:expr, |$v:ident| $to:expr;)*) => {$(
        impl Sample for $t {
            const CODE: u32 = $code;
            fn from_bits64($b: u64) -> Self {
                $from
            }
            fn bits(self) -> u64 {
                let $v = self;
                $to
            }
        }
    )*};
}
samples! {
    f32 => TOPK_DATA_TYPE_FLOAT32, |b| f32::from_bits(b as u32), |v| v.to_bits() as u64;
    f16 => TOPK_DATA_TYPE_FLOAT16, |b| f16::from_bits(b as u16), |v| v.to_bits() as u64;
    u32 => TOPK_DATA_TYPE_UINT32, |b| b as u32, |v| v as u64;
    u16 => TOPK_DATA_TYPE_UINT16, |b| b as u16, |v| v as u64;
    u8 => TOPK_DATA_TYPE_UINT8, |b| b as u8, |v| v as u64;
    i32 => TOPK_DATA_TYPE_INT32, |b| b as i32, |v| v as u32 as u64;
    i16 => TOPK_DATA_TYPE_INT16, |b| b as i16, |v| v as u16 as u64;
    i8 => TOPK_DATA_TYPE_INT8, |b| b as i8, |v| v as u8 as u64;
    f64 => TOPK_DATA_TYPE_FLOAT64, |b| f64::from_bits(b), |v| v.to_bits();
    u64 => TOPK_DATA_TYPE_UINT64, |b| b, |v| v;
    i64 => TOPK_DATA_TYPE_INT64, |b| b as i64, |v| v as u64;
    bf16 => TOPK_DATA_TYPE_BFLOAT16, |b| bf16::from_bits(b as u16), |v| v.to_bits() as u64;
}

/// xorshift64: deterministic, so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Bits that make ties, NaNs, zeros of both signs, extremes and plain random values common.
    fn sample_bits(&mut self, bits: u32) -> u64 {
        let top = 1u64 << (bits - 1);
        let raw = match self.below(4) {
            0 => self.next() % 4,
            1 => !(self.next() % 4),
            2 => top | (self.next() % 4),
            _ => self.next(),
        };
        raw & (u64::MAX >> (64 - bits))
    }
}

fn desc<T>(data_type: u32, sizes: &[u32], strides: Option<&[u32]>, data: *mut T, bytes: usize) -> TensorDesc {
    TensorDesc {
        data_type,
        dimension_count: sizes.len() as u32,
        sizes: sizes.as_ptr(),
        strides: strides.map_or(ptr::null(), <[u32]>::as_ptr),
        total_tensor_size_in_bytes: bytes as u64,
        data: data.cast::<c_void>(),
    }
}

fn message(status: i32) -> String {
    // SAFETY: `topk_status_message` returns a static NUL-terminated string for every status.
    unsafe { CStr::from_ptr(topk_status_message(status)) }
        .to_string_lossy()
        .into_owned()
}

fn example<I: Sample + Default>(
    input: &[f32; 12],
    axis: u32,
    k: u32,
    direction: u32,
    want_values: &[f32],
    want_indices: &[u64],
) {
    let mut input = *input;
    let in_sizes = [1u32, 1, 3, 4];
    let mut out_sizes = in_sizes;
    out_sizes[axis as usize] = k;
    let count = want_values.len();
    let (mut values, mut indices) = (vec![-1.0f32; count], vec![I::default(); count]);
    let input_desc = desc(TOPK_DATA_TYPE_FLOAT32, &in_sizes, None, input.as_mut_ptr(), 48);
    let values_desc = desc(TOPK_DATA_TYPE_FLOAT32, &out_sizes, None, values.as_mut_ptr(), count * 4);
    let indices_desc = desc(I::CODE, &out_sizes, None, indices.as_mut_ptr(), count * size_of::<I>());
    let mut bytes = 0usize;
    // SAFETY: the descriptor and its sizes are live locals.
    let status = unsafe { topk1_scratch_bytes(&input_desc, axis, k, &mut bytes) };
    assert_eq!(status, TOPK_STATUS_OK);
    assert_eq!(
        bytes,
        min_scratch_len::<f32>(in_sizes[axis as usize] as usize, k as usize) * 8
    );
    let mut scratch = vec![0u64; bytes / 8];
    // SAFETY: every descriptor points to live, disjoint buffers of the sizes given.
    let status = unsafe {
        topk1(
            &input_desc,
            &values_desc,
            &indices_desc,
            axis,
            k,
            direction,
            scratch.as_mut_ptr().cast(),
            bytes,
        )
    };
    assert_eq!(status, TOPK_STATUS_OK, "{}", message(status));
    assert_eq!(values, want_values, "axis {axis} k {k}");
    let indices: Vec<u64> = indices.iter().map(|i| i.bits()).collect();
    assert_eq!(indices, want_indices, "axis {axis} k {k} {}", I::NAME);
}

/// The DirectML examples (docs/CONTRACT.md §7) through `topk1`, with indices of every index type.
#[test]
fn directml_examples() {
    const TIED: [f32; 12] = [1., 2., 2., 3., 3., 4., 5., 5., 6., 6., 6., 6.];
    type Case = (&'static [f32; 12], u32, u32, u32, &'static [f32], &'static [u64]);
    let cases: [Case; 4] = [
        (&SEQUENTIAL, 3, 2, 1, &[11., 10., 9., 8., 7., 6.], &[3, 2, 2, 3, 3, 2]),
        (
            &SEQUENTIAL,
            2,
            2,
            1,
            &[4., 5., 10., 11., 3., 2., 9., 8.],
            &[2, 2, 0, 0, 1, 1, 1, 1],
        ),
        (
            &TIED,
            3,
            3,
            1,
            &[3., 2., 2., 5., 5., 4., 6., 6., 6.],
            &[3, 1, 2, 2, 3, 1, 0, 1, 2],
        ),
        (
            &TIED,
            3,
            3,
            0,
            &[1., 2., 2., 3., 4., 5., 6., 6., 6.],
            &[0, 1, 2, 0, 1, 2, 0, 1, 2],
        ),
    ];
    for (input, axis, k, direction, want_values, want_indices) in cases {
        example::<u32>(input, axis, k, direction, want_values, want_indices);
        example::<u64>(input, axis, k, direction, want_values, want_indices);
        example::<i32>(input, axis, k, direction, want_values, want_indices);
        example::<i64>(input, axis, k, direction, want_values, want_indices);
    }
}

/// A random layout for `sizes`: dimensions in a random order, each stride a step of 1 or 2 times the
/// extent of the faster ones; with `broadcast`, some dimensions get stride 0. Returns the strides and the
/// elements the layout spans.
fn random_layout(rng: &mut Rng, sizes: &[u32], broadcast: bool) -> (Vec<u32>, usize) {
    let rank = sizes.len();
    let mut order: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut strides = vec![0u32; rank];
    let mut extent = 1usize;
    for &d in &order {
        if broadcast && rng.below(4) == 0 {
            continue; // stride 0
        }
        let step = 1 + rng.below(2);
        strides[d] = (extent * step) as u32;
        extent = extent * step * (sizes[d].max(1) as usize);
    }
    let span = 1 + sizes
        .iter()
        .zip(&strides)
        .map(|(&s, &t)| (s.max(1) as usize - 1) * t as usize)
        .sum::<usize>();
    (strides, span)
}

/// A buffer for a layout: a random start offset, the span, and slack after it, filled with `fill`.
fn buffer<T: Sample>(rng: &mut Rng, span: usize, fill: impl FnMut(&mut Rng) -> T) -> (Vec<T>, usize) {
    let offset = rng.below(3);
    let len = offset + span + rng.below(3);
    let mut fill = fill;
    ((0..len).map(|_| fill(rng)).collect(), offset)
}

fn bits_of<T: Sample>(data: &[T]) -> Vec<u64> {
    data.iter().map(|v| v.bits()).collect()
}

/// One random request through `topk1` and through `naive::topk` on the same views, compared bit for bit
/// over the whole output buffers (so elements outside the views must be untouched by both).
fn differential<T: Sample, I: Sample + topk_kernels::Index>(rng: &mut Rng) {
    let max_rank = if rng.below(8) == 0 { 8 } else { 4 };
    let rank = 1 + rng.below(max_rank);
    let sizes: Vec<u32> = (0..rank)
        .map(|_| {
            if rng.below(12) == 0 {
                0
            } else {
                1 + rng.below(if rank > 4 { 2 } else { 6 }) as u32
            }
        })
        .collect();
    let axis = rng.below(rank);
    let n = sizes[axis] as usize;
    let k = rng.below(n + 1);
    let direction = rng.below(2) as u32;
    let mut out_sizes = sizes.clone();
    out_sizes[axis] = k as u32;

    let key_bits = (size_of::<T>() * 8) as u32;
    let packed_input = rng.below(3) == 0;
    let (in_strides, in_span) = if packed_input {
        (None, sizes.iter().map(|&s| s as usize).product::<usize>().max(1))
    } else {
        let (s, span) = random_layout(rng, &sizes, true);
        (Some(s), span)
    };
    let (mut input, in_offset) = buffer(rng, in_span, |r| T::from_bits64(r.sample_bits(key_bits)));
    let packed_output = rng.below(3) == 0;
    let out_layout = |rng: &mut Rng| {
        if packed_output {
            (None, out_sizes.iter().map(|&s| s as usize).product::<usize>().max(1))
        } else {
            let (s, span) = random_layout(rng, &out_sizes, false);
            (Some(s), span)
        }
    };
    let (value_strides, value_span) = out_layout(rng);
    let (index_strides, index_span) = out_layout(rng);
    let value_guard = T::from_bits64(rng.next());
    let index_guard = I::from_bits64(rng.next());
    let (mut values, value_offset) = buffer(rng, value_span, |_| value_guard);
    let (mut indices, index_offset) = buffer(rng, index_span, |_| index_guard);
    let (mut want_values, mut want_indices) = (values.clone(), indices.clone());

    let context = format!(
        "{} {} sizes {sizes:?} axis {axis} k {k} dir {direction} in {in_strides:?}+{in_offset} values \
         {value_strides:?}+{value_offset} indices {index_strides:?}+{index_offset}",
        T::NAME,
        <I as Element>::NAME
    );

    let to_isize = |s: &Option<Vec<u32>>| s.as_ref().map(|s| s.iter().map(|&t| t as isize).collect::<Vec<_>>());
    let usizes = |s: &[u32]| s.iter().map(|&t| t as usize).collect::<Vec<_>>();
    let reference = naive::topk(Request {
        input: View::padded(&input, &usizes(&sizes), to_isize(&in_strides).as_deref(), in_offset).expect(&context),
        axis: (axis) as isize,
        k,
        direction: if direction == 0 {
            Direction::Increasing
        } else {
            Direction::Decreasing
        },
        values: ViewMut::padded(
            &mut want_values,
            &usizes(&out_sizes),
            to_isize(&value_strides).as_deref(),
            value_offset,
        )
        .expect(&context),
        indices: ViewMut::padded(
            &mut want_indices,
            &usizes(&out_sizes),
            to_isize(&index_strides).as_deref(),
            index_offset,
        )
        .expect(&context),
    });
    assert_eq!(reference, Ok(()), "{context}");

    let sub = |len: usize, offset: usize, size: usize| (len - offset) * size;
    let input_desc = desc(
        T::CODE,
        &sizes,
        in_strides.as_deref(),
        input[in_offset..].as_mut_ptr(),
        sub(input.len(), in_offset, size_of::<T>()),
    );
    let values_desc = desc(
        T::CODE,
        &out_sizes,
        value_strides.as_deref(),
        values[value_offset..].as_mut_ptr(),
        sub(values.len(), value_offset, size_of::<T>()),
    );
    let indices_desc = desc(
        I::CODE,
        &out_sizes,
        index_strides.as_deref(),
        indices[index_offset..].as_mut_ptr(),
        sub(indices.len(), index_offset, size_of::<I>()),
    );
    let mut bytes = usize::MAX;
    // SAFETY: the descriptor and its sizes are live locals.
    let status = unsafe { topk1_scratch_bytes(&input_desc, axis as u32, k as u32, &mut bytes) };
    assert_eq!(status, TOPK_STATUS_OK, "{context}");
    // The crate's fastest-path scratch for the input's layout (0 for an empty tensor).
    let strides = to_isize(&in_strides);
    let fastest =
        topk_kernels::untyped::scratch_len(T::DATA_TYPE, &usizes(&sizes), strides.as_deref(), axis as isize, k);
    assert_eq!(bytes, fastest * 8, "{context}");
    // Dirty scratch: topk1 must not depend on its contents.
    let mut scratch: Vec<u64> = (0..bytes / 8).map(|_| rng.next()).collect();
    let scratch_ptr = if bytes == 0 {
        ptr::null_mut()
    } else {
        scratch.as_mut_ptr().cast()
    };
    // SAFETY: every descriptor points into a live buffer of at least the bytes given; the buffers are
    // distinct allocations.
    let status = unsafe {
        topk1(
            &input_desc,
            &values_desc,
            &indices_desc,
            axis as u32,
            k as u32,
            direction,
            scratch_ptr,
            bytes,
        )
    };
    assert_eq!(status, TOPK_STATUS_OK, "{context}: {}", message(status));
    assert_eq!(bits_of(&values), bits_of(&want_values), "{context}");
    assert_eq!(bits_of(&indices), bits_of(&want_indices), "{context}");
}

/// A non-last axis with K above 16 gives the same answer with the scratch `topk1_scratch_bytes` reports
/// (16 sequences side by side) and with the least, one sequence's (one at a time); less than that is
/// refused.
#[test]
fn non_last_axis_takes_either_scratch() {
    const N: usize = 300;
    const COUNT: usize = 20;
    const K: usize = 40;
    let mut rng = Rng(7);
    let mut input: Vec<f32> = (0..N * COUNT).map(|_| f32::from_bits(rng.next() as u32 >> 2)).collect();
    let (sizes, out_sizes) = ([N as u32, COUNT as u32], [K as u32, COUNT as u32]);
    let input_desc = desc(TOPK_DATA_TYPE_FLOAT32, &sizes, None, input.as_mut_ptr(), N * COUNT * 4);
    let mut bytes = 0usize;
    // SAFETY: the descriptor and its sizes are live locals.
    let status = unsafe { topk1_scratch_bytes(&input_desc, 0, K as u32, &mut bytes) };
    assert_eq!(status, TOPK_STATUS_OK);
    let least = min_scratch_len::<f32>(N, K) * 8;
    let mut answers = Vec::new();
    for given in [bytes, least, least - 8] {
        let (mut values, mut indices) = (vec![0f32; K * COUNT], vec![0u32; K * COUNT]);
        let values_desc = desc(
            TOPK_DATA_TYPE_FLOAT32,
            &out_sizes,
            None,
            values.as_mut_ptr(),
            K * COUNT * 4,
        );
        let indices_desc = desc(
            TOPK_DATA_TYPE_UINT32,
            &out_sizes,
            None,
            indices.as_mut_ptr(),
            K * COUNT * 4,
        );
        let mut scratch = vec![0u64; given.div_ceil(8)];
        // SAFETY: every descriptor points into a live buffer of the bytes given; the buffers are distinct
        // allocations, and `scratch` holds at least `given` bytes.
        let status = unsafe {
            topk1(
                &input_desc,
                &values_desc,
                &indices_desc,
                0,
                K as u32,
                1,
                scratch.as_mut_ptr().cast(),
                given,
            )
        };
        answers.push((status, bits_of(&values), indices));
    }
    let (mut want_values, mut want_indices) = (vec![0f32; K * COUNT], vec![0u32; K * COUNT]);
    naive::topk(Request {
        input: View::contiguous(&input, [N, COUNT]).unwrap(),
        axis: 0,
        k: K,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut want_values, [K, COUNT]).unwrap(),
        indices: ViewMut::contiguous(&mut want_indices, [K, COUNT]).unwrap(),
    })
    .unwrap();
    let want = (TOPK_STATUS_OK, bits_of(&want_values), want_indices);
    assert_eq!(answers[0], want);
    assert_eq!(answers[1], want);
    assert_eq!(answers[2].0, TOPK_STATUS_SCRATCH_TOO_SMALL);
}

macro_rules! differential_tests {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ <$t as Sample>::CODE as u64);
            // Miri checks the raw-pointer paths for UB on a few requests; natively, many.
            let rounds = if cfg!(miri) { 3 } else { 150 };
            for _ in 0..rounds {
                differential::<$t, u32>(&mut rng);
                differential::<$t, u64>(&mut rng);
                differential::<$t, i32>(&mut rng);
                differential::<$t, i64>(&mut rng);
            }
        }
    )*};
}
differential_tests! {
    matches_naive_f32: f32,
    matches_naive_f16: f16,
    matches_naive_bf16: bf16,
    matches_naive_f64: f64,
    matches_naive_u8: u8,
    matches_naive_u16: u16,
    matches_naive_u32: u32,
    matches_naive_u64: u64,
    matches_naive_i8: i8,
    matches_naive_i16: i16,
    matches_naive_i32: i32,
    matches_naive_i64: i64,
}

/// The buffers of a valid request (DirectML example 1) whose parts each error case breaks. `repr(C)`
/// keeps every array 8-byte aligned (the u64 scratch first, every size a multiple of 8), so the
/// scratch-overlap cases fail for overlap, not alignment.
#[repr(C)]
struct Fixture {
    scratch: [u64; 16],
    input: [f32; 12],
    values: [f32; 8],
    indices: [u32; 8],
}

/// Pointers into a fixture, all derived once from one borrow (so no later reborrow invalidates them).
struct Buffers {
    scratch: *mut u64,
    input: *mut f32,
    values: *mut f32,
    indices: *mut u32,
}

/// The arguments of one `topk1` call, editable by a case.
struct Call {
    input: TensorDesc,
    values: TensorDesc,
    indices: TensorDesc,
    null: [bool; 3],
    axis: u32,
    k: u32,
    direction: u32,
    scratch: *mut c_void,
    scratch_bytes: usize,
}

const SEQUENTIAL: [f32; 12] = [0., 1., 10., 11., 3., 2., 9., 8., 4., 5., 6., 7.];
static IN_SIZES: [u32; 4] = [1, 1, 3, 4];
static OUT_SIZES: [u32; 4] = [1, 1, 3, 2];
static K5_SIZES: [u32; 4] = [1, 1, 3, 5];
static WRONG_SIZES: [u32; 4] = [1, 0, 3, 2];
static HUGE_SIZES: [u32; 4] = [u32::MAX; 4];
static REACHING_STRIDES: [u32; 4] = [0, 0, 3, 1];
static ALIASING_STRIDES: [u32; 4] = [0, 0, 1, 1];

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            scratch: [0; 16],
            input: SEQUENTIAL,
            values: [-1.0; 8],
            indices: [0xDEAD_BEEF; 8],
        }
    }

    /// Runs `topk1` with the valid call after `edit`.
    fn run(&mut self, edit: impl FnOnce(&mut Call, &Buffers)) -> i32 {
        let Fixture {
            scratch,
            input,
            values,
            indices,
        } = self;
        let buffers = Buffers {
            scratch: scratch.as_mut_ptr(),
            input: input.as_mut_ptr(),
            values: values.as_mut_ptr(),
            indices: indices.as_mut_ptr(),
        };
        let mut call = Call {
            input: desc(TOPK_DATA_TYPE_FLOAT32, &IN_SIZES, None, buffers.input, 48),
            values: desc(TOPK_DATA_TYPE_FLOAT32, &OUT_SIZES, None, buffers.values, 24),
            indices: desc(TOPK_DATA_TYPE_UINT32, &OUT_SIZES, None, buffers.indices, 24),
            null: [false; 3],
            axis: 3,
            k: 2,
            direction: TOPK_AXIS_DIRECTION_DECREASING,
            scratch: buffers.scratch.cast(),
            scratch_bytes: 128,
        };
        edit(&mut call, &buffers);
        let pick = |d: &TensorDesc, null: bool| if null { ptr::null() } else { d as *const TensorDesc };
        // SAFETY: every pointer a case leaves non-NULL points into this fixture or a static, whose buffers
        // are at least as long as the descriptors say except where a case deliberately breaks that, which
        // topk1 rejects before touching the memory.
        unsafe {
            topk1(
                pick(&call.input, call.null[0]),
                pick(&call.values, call.null[1]),
                pick(&call.indices, call.null[2]),
                call.axis,
                call.k,
                call.direction,
                call.scratch,
                call.scratch_bytes,
            )
        }
    }

    fn untouched(&self) -> bool {
        self.input == SEQUENTIAL && self.values == [-1.0; 8] && self.indices == [0xDEAD_BEEF; 8]
    }
}

type Edit = fn(&mut Call, &Buffers);

/// One case per status topk1 can return, each leaving every output untouched.
#[test]
fn every_error_status() {
    let cases: &[(&str, i32, Edit)] = &[
        ("NULL input", TOPK_STATUS_NULL_DESCRIPTOR, |c, _| c.null[0] = true),
        ("NULL values", TOPK_STATUS_NULL_DESCRIPTOR, |c, _| c.null[1] = true),
        ("NULL indices", TOPK_STATUS_NULL_DESCRIPTOR, |c, _| c.null[2] = true),
        ("NULL sizes", TOPK_STATUS_NULL_SIZES, |c, _| {
            c.indices.sizes = ptr::null()
        }),
        ("NULL data", TOPK_STATUS_NULL_DATA, |c, _| {
            c.input.data = ptr::null_mut()
        }),
        ("NULL scratch", TOPK_STATUS_NULL_SCRATCH, |c, _| {
            c.scratch = ptr::null_mut()
        }),
        ("rank 0", TOPK_STATUS_DIMENSION_COUNT, |c, _| {
            c.input.dimension_count = 0
        }),
        ("rank 9", TOPK_STATUS_DIMENSION_COUNT, |c, _| {
            c.indices.dimension_count = 9
        }),
        ("rank mismatch", TOPK_STATUS_DIMENSION_COUNT_MISMATCH, |c, _| {
            c.values.dimension_count = 3;
            c.values.sizes = OUT_SIZES[1..].as_ptr();
        }),
        ("data type", TOPK_STATUS_DATA_TYPE, |c, _| {
            c.input.data_type = 0;
            c.values.data_type = 0;
        }),
        ("values data type", TOPK_STATUS_VALUES_DATA_TYPE, |c, _| {
            c.values.data_type = TOPK_DATA_TYPE_UINT32
        }),
        ("index data type", TOPK_STATUS_INDICES_DATA_TYPE, |c, _| {
            c.indices.data_type = TOPK_DATA_TYPE_FLOAT32
        }),
        ("index data type unknown", TOPK_STATUS_INDICES_DATA_TYPE, |c, _| {
            c.indices.data_type = 65
        }),
        ("direction", TOPK_STATUS_AXIS_DIRECTION, |c, _| c.direction = 2),
        ("axis", TOPK_STATUS_AXIS, |c, _| c.axis = 4),
        ("axis huge", TOPK_STATUS_AXIS, |c, _| c.axis = u32::MAX),
        ("k", TOPK_STATUS_K, |c, _| {
            c.k = 5;
            c.values.sizes = K5_SIZES.as_ptr();
            c.indices.sizes = K5_SIZES.as_ptr();
        }),
        ("output sizes", TOPK_STATUS_OUTPUT_SIZES, |c, _| {
            c.values.sizes = WRONG_SIZES.as_ptr()
        }),
        ("output sizes on the axis", TOPK_STATUS_OUTPUT_SIZES, |c, _| c.k = 1),
        ("out of bounds", TOPK_STATUS_OUT_OF_BOUNDS, |c, _| {
            c.input.total_tensor_size_in_bytes = 47
        }),
        ("out of bounds by strides", TOPK_STATUS_OUT_OF_BOUNDS, |c, _| {
            c.values.strides = REACHING_STRIDES.as_ptr()
        }),
        ("overflow of bytes", TOPK_STATUS_OVERFLOW, |c, _| {
            c.values.total_tensor_size_in_bytes = 1 << 63
        }),
        ("overflow of sizes", TOPK_STATUS_OVERFLOW, |c, _| {
            c.input.sizes = HUGE_SIZES.as_ptr()
        }),
        ("overflow of address", TOPK_STATUS_OVERFLOW, |c, _| {
            c.indices.data = ptr::without_provenance_mut(usize::MAX - 3);
            c.indices.total_tensor_size_in_bytes = 24;
        }),
        ("output aliasing", TOPK_STATUS_OUTPUT_ALIASING, |c, _| {
            c.indices.strides = ALIASING_STRIDES.as_ptr()
        }),
        ("outputs overlap", TOPK_STATUS_OUTPUTS_OVERLAP, |c, b| {
            c.indices.data = b.values.wrapping_add(2).cast()
        }),
        ("input overlaps values", TOPK_STATUS_INPUT_OUTPUT_OVERLAP, |c, b| {
            c.values.data = b.input.wrapping_add(11).cast()
        }),
        ("input overlaps indices", TOPK_STATUS_INPUT_OUTPUT_OVERLAP, |c, b| {
            c.indices.data = b.input.cast()
        }),
        ("scratch overlaps input", TOPK_STATUS_SCRATCH_OVERLAP, |c, b| {
            c.scratch = b.input.cast();
            c.scratch_bytes = 32;
        }),
        ("scratch overlaps indices", TOPK_STATUS_SCRATCH_OVERLAP, |c, b| {
            c.scratch = b.indices.cast();
            c.scratch_bytes = 32;
        }),
        ("misaligned data", TOPK_STATUS_MISALIGNED_DATA, |c, b| {
            c.values.data = b.values.cast::<u8>().wrapping_add(2).cast();
            c.values.total_tensor_size_in_bytes = 20;
        }),
        ("misaligned scratch", TOPK_STATUS_MISALIGNED_SCRATCH, |c, b| {
            c.scratch = b.scratch.cast::<u8>().wrapping_add(4).cast();
            c.scratch_bytes = 64;
        }),
        ("scratch too small", TOPK_STATUS_SCRATCH_TOO_SMALL, |c, _| {
            c.scratch_bytes = 31
        }),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for &(name, want, edit) in cases {
        let mut fixture = Fixture::new();
        let status = fixture.run(edit);
        assert_eq!(status, want, "{name}: got {status} ({})", message(status));
        assert!(fixture.untouched(), "{name}: an output was written");
        seen.insert(want);
    }
    // The base request itself succeeds, so every case failed for its own reason.
    let mut fixture = Fixture::new();
    assert_eq!(fixture.run(|_, _| {}), TOPK_STATUS_OK);
    assert_eq!(fixture.values[..6], [11., 10., 9., 8., 7., 6.]);
    assert_eq!(fixture.indices[..6], [3, 2, 2, 3, 3, 2]);
    assert_eq!(fixture.values[6..], [-1.0; 2]);
    // Every status but OK, INDEX_TYPE_TOO_NARROW (below) and INTERNAL (no request reaches it) is covered.
    assert_eq!(seen.len(), 22, "{seen:?}");
}

/// More positions than the index type holds: a broadcast input of 2^31 + 1 elements over one value.
#[test]
fn index_type_too_narrow() {
    let mut input = [5i8];
    let in_sizes = [(1u32 << 31) + 1];
    let stride = [0u32];
    let out_sizes = [1u32];
    let (mut values, mut indices) = ([7i8], [-7i32]);
    let input_desc = desc(TOPK_DATA_TYPE_INT8, &in_sizes, Some(&stride), input.as_mut_ptr(), 1);
    let values_desc = desc(TOPK_DATA_TYPE_INT8, &out_sizes, None, values.as_mut_ptr(), 1);
    let indices_desc = desc(TOPK_DATA_TYPE_INT32, &out_sizes, None, indices.as_mut_ptr(), 4);
    let mut scratch = [0u64; 2];
    // SAFETY: live buffers of the sizes given.
    let status = unsafe {
        topk1(
            &input_desc,
            &values_desc,
            &indices_desc,
            0,
            1,
            1,
            scratch.as_mut_ptr().cast(),
            16,
        )
    };
    assert_eq!(status, TOPK_STATUS_INDEX_TYPE_TOO_NARROW, "{}", message(status));
    assert_eq!((values, indices), ([7], [-7]));
}

/// `topk1_scratch_bytes`: the library's `scratch_len` in bytes for every type, and its own errors.
#[test]
fn scratch_bytes() {
    fn bytes_for(code: u32, sizes: &[u32], axis: u32, k: u32) -> (i32, usize) {
        let d = desc(code, sizes, None, ptr::null_mut::<u8>(), 0);
        let mut bytes = 777usize;
        // SAFETY: the descriptor and its sizes are live locals.
        let status = unsafe { topk1_scratch_bytes(&d, axis, k, &mut bytes) };
        (status, bytes)
    }
    fn check<T: Sample>() {
        for (n, k) in [(1000u32, 10u32), (5, 5), (7, 0), (0, 0)] {
            assert_eq!(
                bytes_for(T::CODE, &[3, n], 1, k),
                (TOPK_STATUS_OK, min_scratch_len::<T>(n as usize, k as usize) * 8),
                "{} n {n} k {k}",
                T::NAME
            );
        }
    }
    check::<f32>();
    check::<f16>();
    check::<bf16>();
    check::<f64>();
    check::<u8>();
    check::<u16>();
    check::<u32>();
    check::<u64>();
    check::<i8>();
    check::<i16>();
    check::<i32>();
    check::<i64>();
    // 64-bit keys take two words a candidate, 32-bit ones one.
    assert_eq!(bytes_for(TOPK_DATA_TYPE_FLOAT64, &[100], 0, 10), (TOPK_STATUS_OK, 320));
    assert_eq!(bytes_for(TOPK_DATA_TYPE_FLOAT32, &[100], 0, 10), (TOPK_STATUS_OK, 160));
    // A non-last axis over a contiguous last dimension with K above 16: a buffer for each of 16
    // sequences read side by side, where those engines are. K = 16, or a strided last dimension: one.
    let side_by_side = if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        16
    } else {
        1
    };
    assert_eq!(
        bytes_for(TOPK_DATA_TYPE_FLOAT32, &[1000, 64], 0, 50),
        (TOPK_STATUS_OK, side_by_side * 800)
    );
    assert_eq!(
        bytes_for(TOPK_DATA_TYPE_FLOAT32, &[1000, 64], 0, 16),
        (TOPK_STATUS_OK, 256)
    );
    let d = desc(
        TOPK_DATA_TYPE_FLOAT32,
        &[1000, 64],
        Some(&[1, 1000]),
        ptr::null_mut::<u8>(),
        0,
    );
    let mut bytes = 0usize;
    // SAFETY: the descriptor, its sizes and strides are live locals.
    let status = unsafe { topk1_scratch_bytes(&d, 0, 50, &mut bytes) };
    assert_eq!(status, TOPK_STATUS_OK);
    assert_eq!(bytes, 800);
    // Nothing to select in an empty tensor: no scratch, whatever the axis's size.
    assert_eq!(
        bytes_for(TOPK_DATA_TYPE_FLOAT32, &[0, 1000], 1, 50),
        (TOPK_STATUS_OK, 0)
    );

    assert_eq!(bytes_for(99, &[4], 0, 1), (TOPK_STATUS_DATA_TYPE, 777));
    assert_eq!(bytes_for(TOPK_DATA_TYPE_UINT8, &[4], 1, 1), (TOPK_STATUS_AXIS, 777));
    assert_eq!(bytes_for(TOPK_DATA_TYPE_UINT8, &[4], 0, 5), (TOPK_STATUS_K, 777));
    assert_eq!(
        bytes_for(TOPK_DATA_TYPE_UINT8, &[], 0, 0),
        (TOPK_STATUS_DIMENSION_COUNT, 777)
    );
    assert_eq!(
        bytes_for(TOPK_DATA_TYPE_UINT8, &[1; 9], 0, 0),
        (TOPK_STATUS_DIMENSION_COUNT, 777)
    );
    let mut d = desc(TOPK_DATA_TYPE_UINT8, &[4], None, ptr::null_mut::<u8>(), 0);
    let mut bytes = 777usize;
    // SAFETY: NULL pointers are checked; everything else is a live local.
    unsafe {
        assert_eq!(
            topk1_scratch_bytes(ptr::null(), 0, 1, &mut bytes),
            TOPK_STATUS_NULL_DESCRIPTOR
        );
        assert_eq!(topk1_scratch_bytes(&d, 0, 1, ptr::null_mut()), TOPK_STATUS_NULL_RESULT);
        d.sizes = ptr::null();
        assert_eq!(topk1_scratch_bytes(&d, 0, 1, &mut bytes), TOPK_STATUS_NULL_SIZES);
    }
    assert_eq!(bytes, 777);
}

/// Descriptors, sizes and strides at odd addresses are read (C does not promise their alignment here).
#[test]
fn unaligned_descriptors_and_sizes() {
    let mut input = [3u16, 1, 4, 1, 5];
    let (mut values, mut indices) = ([0u16; 2], [0u64; 2]);
    // sizes at an odd byte offset inside a byte buffer
    let mut raw = [0u8; 64];
    raw[1..5].copy_from_slice(&5u32.to_ne_bytes());
    raw[5..9].copy_from_slice(&2u32.to_ne_bytes());
    raw[9..13].copy_from_slice(&1u32.to_ne_bytes());
    let base = raw.as_ptr();
    let sizes_in = base.wrapping_add(1).cast::<u32>();
    let sizes_out = base.wrapping_add(5).cast::<u32>();
    let stride = base.wrapping_add(9).cast::<u32>();
    let make = |data_type, sizes, strides, data: *mut c_void, bytes| TensorDesc {
        data_type,
        dimension_count: 1,
        sizes,
        strides,
        total_tensor_size_in_bytes: bytes,
        data,
    };
    let descs = [
        make(TOPK_DATA_TYPE_UINT16, sizes_in, stride, input.as_mut_ptr().cast(), 10),
        make(
            TOPK_DATA_TYPE_UINT16,
            sizes_out,
            ptr::null(),
            values.as_mut_ptr().cast(),
            4,
        ),
        make(
            TOPK_DATA_TYPE_UINT64,
            sizes_out,
            ptr::null(),
            indices.as_mut_ptr().cast(),
            16,
        ),
    ];
    // The three descriptors copied to an odd address.
    let mut store = vec![0u8; 3 * size_of::<TensorDesc>() + 1];
    for (i, d) in descs.iter().enumerate() {
        // SAFETY: `store` has room for three descriptors from byte 1; `write_unaligned` needs no alignment.
        unsafe {
            store
                .as_mut_ptr()
                .add(1 + i * size_of::<TensorDesc>())
                .cast::<TensorDesc>()
                .write_unaligned(*d)
        };
    }
    let at = |i: usize| {
        store
            .as_ptr()
            .wrapping_add(1 + i * size_of::<TensorDesc>())
            .cast::<TensorDesc>()
    };
    let mut scratch = [0u64; 4];
    // SAFETY: the descriptors (at odd addresses) point to live buffers of the sizes given.
    let status = unsafe { topk1(at(0), at(1), at(2), 0, 2, 0, scratch.as_mut_ptr().cast(), 32) };
    assert_eq!(status, TOPK_STATUS_OK, "{}", message(status));
    assert_eq!((values, indices), ([1, 1], [1, 3]));
}

/// Every status has its own non-empty message; unknown numbers get "unknown status".
#[test]
fn status_messages() {
    let mut seen = std::collections::BTreeSet::new();
    for status in TOPK_STATUS_INTERNAL..=TOPK_STATUS_OK {
        let m = message(status);
        assert!(!m.is_empty() && m != "unknown status", "{status}");
        assert!(seen.insert(m), "{status} repeats a message");
    }
    for status in [1, TOPK_STATUS_INTERNAL - 1, i32::MIN, i32::MAX] {
        assert_eq!(message(status), "unknown status");
    }
}

/// The version functions tell the crate's version, as the header's macros do.
#[test]
fn version() {
    // SAFETY: `topk_version` returns a static NUL-terminated string.
    let text = unsafe { CStr::from_ptr(topk_version()) };
    assert_eq!(text.to_str(), Ok(env!("CARGO_PKG_VERSION")));
    let number = topk_version_number();
    assert_eq!(number, TOPK_KERNELS_VERSION_NUMBER);
    let parts: Vec<u32> = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(number, parts[0] * 1_000_000 + parts[1] * 1000 + parts[2]);
    assert_eq!(
        [
            TOPK_KERNELS_VERSION_MAJOR,
            TOPK_KERNELS_VERSION_MINOR,
            TOPK_KERNELS_VERSION_PATCH
        ],
        parts[..]
    );
}
