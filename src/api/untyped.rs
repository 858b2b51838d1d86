//! Tensors whose element type is known only at run time, as a runtime holds them: a [`DataType`], sizes,
//! strides, and bytes.
//!
//! [`topk`] checks what the typed views check, plus that each buffer is aligned for its element type
//! ([`Error::Alignment`]), then runs the typed request of the types the names stand for
//! ([`with_data_type!`](crate::with_data_type), [`with_index_type!`](crate::with_index_type)). Strides and
//! offsets count elements, not bytes, as the typed views' do; a buffer's trailing bytes short of a whole
//! element are not part of it. [`scratch_len`] sizes the scratch from the shapes alone, before any
//! buffer exists.
//!
//! ```
//! use topk_kernels::untyped::{self, View, ViewMut};
//! use topk_kernels::{DataType, Direction, IndexType};
//!
//! /// Bytes aligned for every element type, as a runtime's buffers are.
//! #[repr(C, align(8))]
//! struct Aligned<const N: usize>([u8; N]);
//!
//! // Two rows of three f32; the largest of each row, and its position as an i64.
//! let mut logits = Aligned([0u8; 24]);
//! for (bytes, x) in logits.0.chunks_exact_mut(4).zip([0.5f32, 2.0, -1.0, 3.0, 1.0, 4.0]) {
//!     bytes.copy_from_slice(&x.to_ne_bytes());
//! }
//! let (mut values, mut indices) = (Aligned([0u8; 8]), Aligned([0u8; 16]));
//! let mut scratch = vec![0u64; untyped::scratch_len(DataType::F32, &[2, 3], None, -1, 1)];
//! untyped::topk(
//!     untyped::Request {
//!         data_type: DataType::F32,
//!         index_type: IndexType::I64,
//!         input: View::contiguous(&logits.0, &[2, 3]),
//!         axis: -1,
//!         k: 1,
//!         direction: Direction::Decreasing,
//!         values: ViewMut::contiguous(&mut values.0, &[2, 1]),
//!         indices: ViewMut::contiguous(&mut indices.0, &[2, 1]),
//!     },
//!     &mut scratch,
//! )?;
//! let positions: Vec<i64> = indices.0.chunks_exact(8).map(|b| i64::from_ne_bytes(b.try_into().unwrap())).collect();
//! assert_eq!(positions, [1, 2]);
//! # Ok::<(), topk_kernels::Error>(())
//! ```

use core::mem::{align_of, size_of};

use crate::api::request::Request as TypedRequest;
use crate::api::topk::topk as typed_topk;
use crate::dispatch::strategy;
use crate::types::data_type::{DataType, IndexType, with_data_type, with_index_type};
use crate::types::element::{Direction, Element};
use crate::types::error::{Error, Operand};
use crate::types::index::Index;
use crate::types::view::{self, Layout, MAX_RANK};

/// A tensor of run-time type and rank (1 to 8) to read: bytes, sizes, and strides and an offset in
/// elements (as [`View::padded`](crate::View::padded) takes them).
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    /// The bytes the elements are in, aligned for their type.
    pub data: &'a [u8],
    /// The sizes, outermost first.
    pub sizes: &'a [usize],
    /// The strides in elements, outermost first (may be zero or negative); `None` for row-major.
    pub strides: Option<&'a [isize]>,
    /// The element at coordinate zero, counted in elements from the start of `data`.
    pub offset: usize,
}

impl<'a> View<'a> {
    /// A row-major tensor of `sizes` at the start of `data`.
    pub fn contiguous(data: &'a [u8], sizes: &'a [usize]) -> Self {
        View {
            data,
            sizes,
            strides: None,
            offset: 0,
        }
    }
}

/// A tensor of run-time type and rank (1 to 8) to write: as [`View`], and no two coordinates may share
/// an element.
#[derive(Debug)]
pub struct ViewMut<'a> {
    /// The bytes the elements are in, aligned for their type.
    pub data: &'a mut [u8],
    /// The sizes, outermost first.
    pub sizes: &'a [usize],
    /// The strides in elements, outermost first (may be negative); `None` for row-major.
    pub strides: Option<&'a [isize]>,
    /// The element at coordinate zero, counted in elements from the start of `data`.
    pub offset: usize,
}

impl<'a> ViewMut<'a> {
    /// A row-major tensor of `sizes` at the start of `data`.
    pub fn contiguous(data: &'a mut [u8], sizes: &'a [usize]) -> Self {
        ViewMut {
            data,
            sizes,
            strides: None,
            offset: 0,
        }
    }
}

/// A request on tensors typed at run time: [`Request`](crate::Request)'s fields, with the element types
/// named. The values have the input's `data_type`, the indices `index_type`.
#[derive(Debug)]
pub struct Request<'a> {
    /// The type of the input's and the values' elements.
    pub data_type: DataType,
    /// The type of the indices' elements.
    pub index_type: IndexType,
    /// The tensor to select from.
    pub input: View<'a>,
    /// The dimension the sequences run along; negative counts from the last (-1 is the last).
    pub axis: isize,
    /// How many elements to select from each sequence: 0 to the length of the axis.
    pub k: usize,
    /// The K largest, in decreasing order, or the K smallest, in increasing order.
    pub direction: Direction,
    /// The selected values: the input's sizes, but `k` along the axis.
    pub values: ViewMut<'a>,
    /// Their positions along the axis: the sizes of `values`.
    pub indices: ViewMut<'a>,
}

/// Runs a request on tensors typed at run time, as [`crate::topk()`] runs a typed one: everything is
/// checked before anything is written, and `scratch` holds what [`scratch_len`] says (or at least one
/// sequence's candidates, more slowly: [`TopK::min_scratch_len`](crate::TopK::min_scratch_len)).
pub fn topk(request: Request<'_>, scratch: &mut [u64]) -> Result<(), Error> {
    let (data_type, index_type) = (request.data_type, request.index_type);
    with_data_type!(data_type, T => with_index_type!(index_type, I => run::<T, I>(request, scratch)))
}

/// The scratch words [`topk`] runs fastest with on an input of `data_type`, `sizes` and `strides` (`None`
/// for row-major), along `axis` with `k`: [`Request::scratch_len`](crate::Request::scratch_len) of the
/// typed request, known from the shapes alone (for a runtime sizing its workspace when it plans a graph,
/// or the C ABI's `topk1_scratch_bytes`). 0 when the request has nothing to select or is not valid (the
/// call then says what is wrong).
///
/// ```
/// use topk_kernels::{DataType, untyped};
/// // 128 candidates of one word, for each of 16 columns read side by side.
/// # #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
/// assert_eq!(untyped::scratch_len(DataType::F16, &[1000, 64], None, 0, 64), 16 * 128);
/// assert_eq!(untyped::scratch_len(DataType::F16, &[64, 1000], None, -1, 64), 128);
/// assert_eq!(untyped::scratch_len(DataType::F16, &[64, 1000], None, 2, 64), 0); // no axis 2
/// ```
pub fn scratch_len(data_type: DataType, sizes: &[usize], strides: Option<&[isize]>, axis: isize, k: usize) -> usize {
    // Only the sizes and strides matter: no buffer is too long for them.
    let Ok(layout) = Layout::padded(Operand::Input, sizes, strides, 0, usize::MAX) else {
        return 0;
    };
    let Some(axis) = layout.axis_index(axis) else {
        return 0;
    };
    with_data_type!(data_type, T => strategy::fastest_scratch_words::<T, MAX_RANK>(&layout, axis, k))
}

/// [`topk`] with `T` and `I` the types the request names.
fn run<T: Element + Plain, I: Index + Plain>(request: Request<'_>, scratch: &mut [u64]) -> Result<(), Error> {
    let Request {
        input,
        axis,
        k,
        direction,
        values,
        indices,
        ..
    } = request;
    let typed = TypedRequest {
        input: view::View::padded(
            elements(Operand::Input, input.data)?,
            input.sizes,
            input.strides,
            input.offset,
        )?,
        axis,
        k,
        direction,
        values: view::ViewMut::padded(
            elements_mut(Operand::Values, values.data)?,
            values.sizes,
            values.strides,
            values.offset,
        )?,
        indices: view::ViewMut::padded(
            elements_mut(Operand::Indices, indices.data)?,
            indices.sizes,
            indices.strides,
            indices.offset,
        )?,
    };
    typed_topk::<T, I, MAX_RANK>(typed, scratch)
}

/// The whole elements of `T` in `bytes`, which must be aligned for `T` if they hold one.
fn elements<T: Plain>(operand: Operand, bytes: &[u8]) -> Result<&[T], Error> {
    let len = bytes.len() / size_of::<T>();
    if len == 0 {
        return Ok(&[]);
    }
    let data = bytes.as_ptr().cast::<T>();
    if !data.is_aligned() {
        return Err(misaligned::<T>(operand, bytes.as_ptr().addr()));
    }
    // SAFETY: `len` whole elements of `T` lie in `bytes`, from an aligned start, borrowed for the slice's
    // lifetime; every bit pattern is a value of `T` (`Plain`).
    Ok(unsafe { core::slice::from_raw_parts(data, len) })
}

/// [`elements`], writable.
fn elements_mut<T: Plain>(operand: Operand, bytes: &mut [u8]) -> Result<&mut [T], Error> {
    let len = bytes.len() / size_of::<T>();
    if len == 0 {
        return Ok(&mut []);
    }
    let data = bytes.as_mut_ptr().cast::<T>();
    if !data.is_aligned() {
        return Err(misaligned::<T>(operand, data.addr()));
    }
    // SAFETY: as in `elements`, borrowed exclusively; any `T` written leaves valid bytes behind.
    Ok(unsafe { core::slice::from_raw_parts_mut(data, len) })
}

fn misaligned<T>(operand: Operand, address: usize) -> Error {
    Error::Alignment {
        operand,
        address,
        align: align_of::<T>(),
    }
}

/// Types of which every bit pattern of their size is a value, with no padding: the element and index
/// types, which are integers, IEEE floats, and `half`'s `repr(transparent)` wrappers of `u16`.
trait Plain: Copy {}

macro_rules! plain {
    ($($t:ty),*) => {$(impl Plain for $t {})*};
}
plain!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, half::f16, half::bf16);

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec;
    use std::vec::Vec;

    use super::*;

    /// `words` as bytes (u64 words are aligned for every type).
    fn bytes(words: &mut [u64]) -> &mut [u8] {
        // SAFETY: the slice covers exactly the words; any bytes are valid u64s and u8s.
        unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), words.len() * 8) }
    }

    #[test]
    fn every_type_agrees_with_the_typed_call() {
        let raw: Vec<u64> = (0..24u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        for data_type in DataType::ALL {
            for index_type in IndexType::ALL {
                let mut input = raw.clone();
                let input = &*bytes(&mut input);
                let (mut values, mut indices) = ([0u64; 12], [0u64; 12]);
                let request = Request {
                    data_type,
                    index_type,
                    input: View {
                        data: input,
                        sizes: &[3, 4],
                        strides: Some(&[1, 3]),
                        offset: 0,
                    },
                    axis: 0,
                    k: 2,
                    direction: Direction::Decreasing,
                    values: ViewMut::contiguous(bytes(&mut values), &[2, 4]),
                    indices: ViewMut::contiguous(bytes(&mut indices), &[2, 4]),
                };
                let mut scratch = vec![0; scratch_len(data_type, &[3, 4], Some(&[1, 3]), 0, 2)];
                topk(request, &mut scratch).unwrap();
                let (mut want_values, mut want_indices) = ([0u64; 12], [0u64; 12]);
                with_data_type!(data_type, T => with_index_type!(index_type, I => {
                    let typed = TypedRequest {
                        input: view::View::new(elements::<T>(Operand::Input, input).unwrap(), [3, 4], [1, 3], 0)
                            .unwrap(),
                        axis: 0,
                        k: 2,
                        direction: Direction::Decreasing,
                        values: view::ViewMut::contiguous(
                            elements_mut::<T>(Operand::Values, bytes(&mut want_values)).unwrap(),
                            [2, 4],
                        )
                        .unwrap(),
                        indices: view::ViewMut::contiguous(
                            elements_mut::<I>(Operand::Indices, bytes(&mut want_indices)).unwrap(),
                            [2, 4],
                        )
                        .unwrap(),
                    };
                    crate::api::naive::topk(typed).unwrap()
                }));
                assert_eq!(
                    (values, indices),
                    (want_values, want_indices),
                    "{data_type:?} {index_type:?}"
                );
            }
        }
    }

    #[test]
    fn misaligned_buffers_are_refused_by_name() {
        let mut words = [0u64; 8];
        let all = bytes(&mut words);
        let address = all.as_ptr().addr();
        let (input, outputs) = all.split_at_mut(32);
        let (values, indices) = outputs.split_at_mut(16);
        fn request<'a>(input: &'a [u8], values: &'a mut [u8], indices: &'a mut [u8]) -> Request<'a> {
            Request {
                data_type: DataType::F32,
                index_type: IndexType::U32,
                input: View::contiguous(input, &[4]),
                axis: 0,
                k: 2,
                direction: Direction::Increasing,
                values: ViewMut::contiguous(values, &[2]),
                indices: ViewMut::contiguous(indices, &[2]),
            }
        }
        assert_eq!(
            topk(request(&input[..16], &mut values[..8], &mut indices[..8]), &mut [0; 4]),
            Ok(())
        );
        assert_eq!(
            topk(request(&input[2..18], &mut values[..8], &mut indices[..8]), &mut [0; 4]),
            Err(Error::Alignment {
                operand: Operand::Input,
                address: address + 2,
                align: 4
            })
        );
        assert_eq!(
            topk(request(&input[..16], &mut values[1..9], &mut indices[..8]), &mut [0; 4]).unwrap_err(),
            Error::Alignment {
                operand: Operand::Values,
                address: address + 33,
                align: 4
            }
        );
    }

    #[test]
    fn errors_name_the_callers_dimensions() {
        let (mut input, mut values, mut indices) = ([0u64; 8], [0u64; 8], [0u64; 8]);
        let input = &*bytes(&mut input);
        let (values, indices) = (bytes(&mut values), bytes(&mut indices));
        let request = Request {
            data_type: DataType::F32,
            index_type: IndexType::U32,
            input: View::contiguous(input, &[2, 5]),
            axis: 0,
            k: 3,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(values, &[3, 5]),
            indices: ViewMut::contiguous(indices, &[3, 5]),
        };
        let error = topk(request, &mut [0; 64]).unwrap_err();
        assert_eq!(error, Error::K { k: 3, len: 2, axis: 0 });
        assert_eq!(error.to_string(), "K = 3 exceeds the axis length 2 of dimension 0");
    }
}
