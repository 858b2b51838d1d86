//! A request: the input, the axis, K, the direction and the two outputs, as every entry point takes
//! them ([`topk`](crate::topk()), [`TopK::new`](crate::TopK::new), [`topk_on_stack`](crate::topk_on_stack),
//! [`naive::topk`](crate::naive::topk), `parallel::topk`), and the scratch its fastest path takes.

use crate::dispatch::strategy;
use crate::types::element::{Direction, Element};
use crate::types::error::Error;
use crate::types::index::Index;
use crate::types::request::check_request;
use crate::types::view::{View, ViewMut};
use crate::walk::Plan;

/// One top-K request: select the first `k` elements of every sequence along `axis` of `input` in
/// `direction`, and write them to `values`, their positions along the axis to `indices`
/// (`docs/CONTRACT.md` §1).
///
/// Built as a struct literal, every field named; nothing is checked until an entry point takes it
/// ([`topk`](crate::topk()), [`TopK::new`](crate::TopK::new), ...), which checks everything before it
/// writes anything.
///
/// ```
/// use topk_kernels::{Direction, Request, View, ViewMut, topk};
/// let x = [0.0f32, 1.0, 10.0, 11.0, 3.0, 2.0, 9.0, 8.0, 4.0, 5.0, 6.0, 7.0];
/// let (mut values, mut indices) = ([0.0f32; 6], [0u32; 6]);
/// let request = Request {
///     input: View::contiguous(&x, [3, 4])?,
///     axis: -1, // the last: each row of 4
///     k: 2,
///     direction: Direction::Decreasing,
///     values: ViewMut::contiguous(&mut values, [3, 2])?,
///     indices: ViewMut::contiguous(&mut indices, [3, 2])?,
/// };
/// let mut scratch = vec![0u64; request.scratch_len()];
/// topk(request, &mut scratch)?;
/// assert_eq!(values, [11.0, 10.0, 9.0, 8.0, 7.0, 6.0]);
/// assert_eq!(indices, [3, 2, 2, 3, 3, 2]);
/// # Ok::<(), topk_kernels::Error>(())
/// ```
#[derive(Debug)]
pub struct Request<'a, T, I, const D: usize> {
    /// The tensor to select from.
    pub input: View<'a, T, D>,
    /// The dimension the sequences run along: 0 is the first, and a negative axis counts from the last
    /// (-1 is the last), as NumPy and PyTorch count. A [`padded`](View::padded) input counts the
    /// caller's dimensions, not the padding.
    pub axis: isize,
    /// How many elements to select from each sequence: 0 to the length of the axis.
    pub k: usize,
    /// The K largest, in decreasing order, or the K smallest, in increasing order.
    pub direction: Direction,
    /// The selected values: the input's sizes, but `k` along the axis.
    pub values: ViewMut<'a, T, D>,
    /// The selected values' positions along the axis: the sizes of `values`.
    pub indices: ViewMut<'a, I, D>,
}

impl<'a, T: Element, I: Index, const D: usize> Request<'a, T, I, D> {
    /// The scratch words the request runs fastest with: the one way to size the scratch of
    /// [`topk`](crate::topk()) (and of [`TopK::run`](crate::TopK::run), whose
    /// [`TopK::scratch_len`](crate::TopK::scratch_len) is the same number).
    ///
    /// That is `min(n, 2K)` candidates of one word (two for 64-bit types or sequences over 2^32
    /// elements), n the length of the axis, reused for every sequence; on a non-last axis whose
    /// neighbouring sequences are adjacent in memory (the innermost dimension has stride 1) with K above
    /// 16, 16 times that, a buffer for each of 16 sequences read side by side (on x86_64 and aarch64,
    /// where those engines are). Given only the least ([`TopK::min_scratch_len`](crate::TopK::min_scratch_len)),
    /// such a request reads its sequences one at a time, each through its stride: several times slower.
    /// 0 when there is nothing to select (K = 0, no element) or the axis is not one of the input's (the
    /// call then says so).
    ///
    /// ```
    /// use topk_kernels::{Direction, Request, View, ViewMut};
    /// let x = vec![0f32; 1000 * 64];
    /// let (mut v, mut i) = (vec![0f32; 50 * 64], vec![0u32; 50 * 64]);
    /// let columns = Request {
    ///     input: View::contiguous(&x, [1000, 64])?,
    ///     axis: 0,
    ///     k: 50,
    ///     direction: Direction::Decreasing,
    ///     values: ViewMut::contiguous(&mut v, [50, 64])?,
    ///     indices: ViewMut::contiguous(&mut i, [50, 64])?,
    /// };
    /// // 100 candidates of one word each, for each of 16 columns read side by side.
    /// # #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    /// assert_eq!(columns.scratch_len(), 16 * 100);
    /// # Ok::<(), topk_kernels::Error>(())
    /// ```
    pub fn scratch_len(&self) -> usize {
        let layout = self.input.layout();
        match layout.axis_index(self.axis) {
            Some(axis) => strategy::fastest_scratch_words::<T, D>(layout, axis, self.k),
            None => 0,
        }
    }

    /// Checks the request (`docs/CONTRACT.md` §5) into the walk's plan. Nothing is written.
    pub(crate) fn into_plan(self) -> Result<Plan<'a, T>, Error> {
        let Request {
            input,
            axis,
            k,
            direction,
            values,
            indices,
        } = self;
        let (layouts, max) = ((input.layout(), values.layout(), indices.layout()), I::MAX_POSITION);
        let axis = check_request(layouts.0, axis, k, layouts.1, layouts.2, max)?;
        let len = input.layout().sizes()[axis];
        Ok(Plan::new(input, axis, k, direction, values, indices, len))
    }
}

impl Direction {
    /// The direction of PyTorch's and ONNX's `largest` flag: `Decreasing` (the K largest, largest first)
    /// for `true`, `Increasing` (the K smallest, smallest first) for `false`.
    ///
    /// ```
    /// use topk_kernels::Direction;
    /// assert_eq!(Direction::from_largest(true), Direction::Decreasing);
    /// assert_eq!(Direction::from_largest(false), Direction::Increasing);
    /// ```
    pub const fn from_largest(largest: bool) -> Direction {
        if largest {
            Direction::Decreasing
        } else {
            Direction::Increasing
        }
    }
}
