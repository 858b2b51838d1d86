//! The public entry: validate a request once into a [`TopK`] plan, then run it on all or part of its
//! sequences with an engine picked once per call.

use core::marker::PhantomData;
use core::ops::Range;
use core::ptr::NonNull;

use crate::backend::{Backend, Engine};
use crate::element::{Direction, Element, Key};
use crate::entry::{Buffer, Emit, Entry, packs_in_one_word};
use crate::error::{Error, Tensor};
use crate::index::Index;
use crate::sequence::{Sequence, Side};
use crate::vector::MAX_LANES;
use crate::view::{Layout, View, ViewMut};
use crate::{arch, candidates};

/// Scratch words the engines need to select `k` of a sequence of `len` elements of type `T`.
///
/// The buffer holds `min(len, 2k)` candidates of one word each (two for 64-bit types or sequences over
/// 2^32 elements); it is reused for every sequence of a call.
///
/// ```
/// assert_eq!(topk_kernels::scratch_len::<f32>(1_000_000, 100), 200);
/// assert_eq!(topk_kernels::scratch_len::<f64>(1_000_000, 100), 400);
/// assert_eq!(topk_kernels::scratch_len::<u8>(10, 8), 10);
/// ```
pub fn scratch_len<T: Element>(len: usize, k: usize) -> usize {
    let words = if packs_in_one_word(<T::Key as Key>::BITS, len) {
        1
    } else {
        2
    };
    // Saturating: huge `len` and `k` (possible with an empty tensor) must not overflow (fuzz finding 1).
    candidates::capacity(len, k).saturating_mul(words)
}

/// Scratch words for the fastest path of a request whose input has the layout `input`: what
/// [`TopK::scratch_len`] says of its plan, known before the tensors are.
///
/// That is [`scratch_len`]`::<T>(n, k)` (the least any request takes), except on a non-last axis whose
/// neighbouring sequences are adjacent in memory (the innermost dimension, stride 1) with K above 16:
/// there it is 16 times that, a candidate buffer for each of the 16 sequences the engines read side
/// by side (on x86_64 and aarch64, where those engines are). Given less, such a request reads its
/// sequences one at a time, each through its stride: one cache line per element, 4x slower on
/// 4096 x 256 f32 with K = 50 (BENCHMARKS.md). 0 when there is nothing to select (K = 0, no element,
/// or no such axis).
///
/// ```
/// use topk_kernels::{Layout, Tensor, scratch_len, scratch_len_for};
/// let columns = Layout::contiguous(Tensor::Input, [1000, 64], 64_000)?;
/// let rows = Layout::contiguous(Tensor::Input, [64, 1000], 64_000)?;
/// # #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
/// assert_eq!(scratch_len_for::<f32, 2>(&columns, 0, 50), 16 * scratch_len::<f32>(1000, 50));
/// assert_eq!(scratch_len_for::<f32, 2>(&columns, 0, 16), scratch_len::<f32>(1000, 16));
/// assert_eq!(scratch_len_for::<f32, 2>(&rows, 1, 50), scratch_len::<f32>(1000, 50));
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub fn scratch_len_for<T: Element, const D: usize>(input: &Layout<D>, axis: usize, k: usize) -> usize {
    let Some(&len) = input.sizes().get(axis) else {
        return 0;
    };
    if k == 0 || input.elements() == 0 {
        return 0;
    }
    let least = scratch_len::<T>(len, k);
    if side_pools(input, axis, k) {
        least.saturating_mul(MAX_LANES)
    } else {
        least
    }
}

/// The innermost dimension of `input`, if sequences along `axis` can be read side by side there: it is
/// not the axis, and has stride 1 and more than one sequence.
fn side_dimension<const D: usize>(input: &Layout<D>, axis: usize) -> Option<usize> {
    let inner = D.checked_sub(1)?;
    let adjacent = axis != inner && input.strides()[inner] == 1 && input.sizes()[inner] > 1;
    adjacent.then_some(inner)
}

/// Whether sequences along `axis` of `input` are read side by side with a candidate buffer each (K
/// above the lanes' sorted slots), which [`scratch_len_for`] gives [`MAX_LANES`] buffers.
fn side_pools<const D: usize>(input: &Layout<D>, axis: usize, k: usize) -> bool {
    arch::SIMD_ENGINES && k > arch::SIDE_MAX_K && side_dimension(input, axis).is_some()
}

/// Selects the first `k` elements of every sequence along `axis` (SPEC.md §1).
///
/// Validates everything first; on error nothing is written. `scratch` needs
/// [`scratch_len`]`::<T>(input.sizes()[axis], k)` words; [`scratch_len_for`] says what runs fastest
/// (16 times as much on a non-last axis with K above 16).
///
/// ```
/// use topk_kernels::{Direction, View, ViewMut, scratch_len, topk};
/// let x = [0.0f32, 1.0, 10.0, 11.0, 3.0, 2.0, 9.0, 8.0, 4.0, 5.0, 6.0, 7.0];
/// let (mut values, mut indices) = ([0.0f32; 6], [0u32; 6]);
/// let mut scratch = [0u64; 4];
/// assert!(scratch.len() >= scratch_len::<f32>(4, 2));
/// topk(
///     View::contiguous(&x, [1, 1, 3, 4])?,
///     3,
///     2,
///     Direction::Decreasing,
///     ViewMut::contiguous(&mut values, [1, 1, 3, 2])?,
///     ViewMut::contiguous(&mut indices, [1, 1, 3, 2])?,
///     &mut scratch,
/// )?;
/// assert_eq!(values, [11.0, 10.0, 9.0, 8.0, 7.0, 6.0]);
/// assert_eq!(indices, [3, 2, 2, 3, 3, 2]);
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub fn topk<T: Element, I: Index, const D: usize>(
    input: View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    values: ViewMut<'_, T, D>,
    indices: ViewMut<'_, I, D>,
    scratch: &mut [u64],
) -> Result<(), Error> {
    TopK::new(input, axis, k, direction, values, indices)?.run(scratch)
}

/// [`topk`] with its scratch on the stack: `32 · K_MAX` bytes, enough for `k <= K_MAX`.
///
/// For callers without a heap that know a bound on K at compile time. The scratch holds `min(n, 2k)`
/// candidates, so a larger `k` still runs on rows of at most `2 · K_MAX` elements; otherwise it is
/// [`Error::Scratch`].
///
/// ```
/// use topk_kernels::{Direction, View, ViewMut, topk_on_stack};
/// let x = [5u8, 1, 4, 1, 5, 9, 2, 6];
/// let (mut v, mut i) = ([0u8; 3], [0u32; 3]);
/// topk_on_stack::<4, _, _, 1>(
///     View::contiguous(&x, [8])?,
///     0,
///     3,
///     Direction::Increasing,
///     ViewMut::contiguous(&mut v, [3])?,
///     ViewMut::contiguous(&mut i, [3])?,
/// )?;
/// assert_eq!((v, i), ([1, 1, 2], [1, 3, 6]));
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub fn topk_on_stack<const K_MAX: usize, T: Element, I: Index, const D: usize>(
    input: View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    values: ViewMut<'_, T, D>,
    indices: ViewMut<'_, I, D>,
) -> Result<(), Error> {
    // 2·K_MAX candidates of at most two words.
    let mut scratch = [[0u64; 4]; K_MAX];
    topk(input, axis, k, direction, values, indices, scratch.as_flattened_mut())
}

/// The checks of SPEC.md §5 that relate a request's tensors, on their layouts alone: `axis` names one of
/// the input's dimensions, `k` is at most the input's size along it, each output has the input's sizes
/// but `k` along `axis`, and the last position along `axis` fits an index type whose largest position
/// is `max_position` ([`Index::MAX_POSITION`]). Returns the input's size along `axis`.
///
/// [`TopK::new`] runs exactly these (each layout having been validated against its buffer by
/// [`View`]/[`ViewMut`]); a backend of its own, such as the GPU crate, calls it to accept and refuse
/// what this crate does, with the same errors.
///
/// ```
/// use topk_kernels::{Error, Layout, Tensor, check_request};
/// let input = Layout::contiguous(Tensor::Input, [4, 300], 1200)?;
/// let out = Layout::contiguous(Tensor::Output, [4, 2], 8)?;
/// assert_eq!(check_request(&input, 1, 2, &out, &out, u64::from(u32::MAX)), Ok(300));
/// assert_eq!(check_request(&input, 1, 3, &out, &out, u64::from(u32::MAX)),
///            Err(Error::OutputSize { tensor: Tensor::Values, dim: 1, expected: 3, actual: 2 }));
/// assert_eq!(check_request(&input, 1, 2, &out, &out, 255),
///            Err(Error::IndexType { len: 300, max: 255 }));
/// # Ok::<(), Error>(())
/// ```
pub fn check_request<const D: usize>(
    input: &Layout<D>,
    axis: usize,
    k: usize,
    values: &Layout<D>,
    indices: &Layout<D>,
    max_position: u64,
) -> Result<usize, Error> {
    let sizes = input.sizes();
    let Some(&len) = sizes.get(axis) else {
        return Err(Error::Axis { axis, rank: D });
    };
    if k > len {
        return Err(Error::K { k, len, axis });
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
                });
            }
        }
    }
    if len > 0 && (len - 1) as u64 > max_position {
        return Err(Error::IndexType { len, max: max_position });
    }
    Ok(len)
}

/// A validated request: run it whole, on a range of its sequences, or split it across threads.
///
/// Sequences are numbered in row-major order of the coordinates other than `axis`.
///
/// ```
/// use topk_kernels::{Backend, Direction, TopK, View, ViewMut};
/// let x: Vec<i32> = (0..64).map(|i| (i * 37) % 64).collect();
/// let (mut v, mut i) = (vec![0i32; 16], vec![0u64; 16]);
/// let plan = TopK::new(
///     View::contiguous(&x, [8, 8])?,
///     1,
///     2,
///     Direction::Decreasing,
///     ViewMut::contiguous(&mut v, [8, 2])?,
///     ViewMut::contiguous(&mut i, [8, 2])?,
/// )?;
/// let words = plan.scratch_len();
/// let (mut low, mut high) = plan.split_at(4)?;
/// std::thread::scope(|s| {
///     s.spawn(move || low.run(&mut vec![0; words]).unwrap());
///     s.spawn(move || high.run(&mut vec![0; words]).unwrap());
/// });
/// assert_eq!((&v[..2], &i[..2]), (&[57, 47][..], &[5, 3][..])); // row 0: 0 37 10 47 20 57 30 3
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub struct TopK<'a, T: Element, I: Index, const D: usize> {
    input: View<'a, T, D>,
    values: Output<'a, T, D>,
    indices: Output<'a, I, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    /// The sequences this plan covers, in the numbering of the whole request.
    sequences: Range<usize>,
}

// SAFETY: a plan reads its input through a shared borrow and writes only the output elements of its own
// sequences; plans made by `split_at` cover disjoint sequences, and a validated output view maps distinct
// coordinates to distinct elements, so two plans on two threads never touch the same element.
unsafe impl<T: Element, I: Index, const D: usize> Send for TopK<'_, T, I, D> {}

impl<'a, T: Element, I: Index, const D: usize> TopK<'a, T, I, D> {
    /// Validates a request (SPEC.md §5). Nothing is written, whatever the result.
    pub fn new(
        input: View<'a, T, D>,
        axis: usize,
        k: usize,
        direction: Direction,
        values: ViewMut<'a, T, D>,
        indices: ViewMut<'a, I, D>,
    ) -> Result<Self, Error> {
        let len = check_request(
            input.layout(),
            axis,
            k,
            values.layout(),
            indices.layout(),
            I::MAX_POSITION,
        )?;
        let count = if k == 0 {
            0
        } else {
            input.layout().elements() / len.max(1)
        };
        Ok(TopK {
            input,
            values: Output::new(values),
            indices: Output::new(indices),
            axis,
            k,
            direction,
            sequences: 0..count,
        })
    }

    /// Number of sequences this plan covers (0 when K is 0 or the tensor is empty).
    pub fn sequences(&self) -> usize {
        self.sequences.len()
    }

    /// Length of each sequence (the input's size along the axis).
    pub fn sequence_len(&self) -> usize {
        self.input.sizes()[self.axis]
    }

    /// K.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Scratch words for [`run`](Self::run)'s fastest path: [`scratch_len_for`] the plan's input (16
    /// times [`min_scratch_len`](Self::min_scratch_len) on a non-last axis with K above 16, else the
    /// same; 0 with no sequence).
    ///
    /// ```
    /// use topk_kernels::{Direction, TopK, View, ViewMut, scratch_len};
    /// let x = vec![0f32; 1000 * 64];
    /// let (mut v, mut i) = (vec![0f32; 50 * 64], vec![0u32; 50 * 64]);
    /// let plan = TopK::new(
    ///     View::contiguous(&x, [1000, 64])?,
    ///     0,
    ///     50,
    ///     Direction::Decreasing,
    ///     ViewMut::contiguous(&mut v, [50, 64])?,
    ///     ViewMut::contiguous(&mut i, [50, 64])?,
    /// )?;
    /// # #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    /// assert_eq!(plan.scratch_len(), 16 * scratch_len::<f32>(1000, 50));
    /// assert_eq!(plan.min_scratch_len(), scratch_len::<f32>(1000, 50));
    /// # Ok::<(), topk_kernels::Error>(())
    /// ```
    pub fn scratch_len(&self) -> usize {
        if self.sequences.is_empty() {
            // Nothing to run: an empty tensor with a huge axis needs no scratch (fuzz finding 2).
            return 0;
        }
        scratch_len_for::<T, D>(self.input.layout(), self.axis, self.k)
    }

    /// The least scratch [`run`](Self::run) takes: [`scratch_len`]`::<T>(n, k)` words, one sequence's
    /// candidates (0 with no sequence).
    pub fn min_scratch_len(&self) -> usize {
        if self.sequences.is_empty() {
            return 0;
        }
        scratch_len::<T>(self.sequence_len(), self.k)
    }

    /// Splits into the first `mid` sequences and the rest: two plans that may run on two threads.
    pub fn split_at(self, mid: usize) -> Result<(Self, Self), Error> {
        let Range { start, end } = self.sequences;
        if mid > end - start {
            return Err(Error::Sequences {
                start: mid,
                end: mid,
                count: end - start,
            });
        }
        let low = TopK {
            sequences: start..start + mid,
            ..self.duplicate()
        };
        let high = TopK {
            sequences: start + mid..end,
            ..self
        };
        Ok((low, high))
    }

    /// Runs every sequence of this plan with the fastest engine.
    pub fn run(&mut self, scratch: &mut [u64]) -> Result<(), Error> {
        self.run_sequences(0..self.sequences(), Backend::Auto, scratch)
    }

    /// Runs sequences `range` (numbered from 0 within this plan) with `backend`.
    ///
    /// Checks the range, the backend and the scratch length before writing anything.
    pub fn run_sequences(&mut self, range: Range<usize>, backend: Backend, scratch: &mut [u64]) -> Result<(), Error> {
        let count = self.sequences();
        if range.start > range.end || range.end > count {
            return Err(Error::Sequences {
                start: range.start,
                end: range.end,
                count,
            });
        }
        let backend = backend.resolve();
        let engine = match backend {
            Backend::Naive => None,
            concrete => Some(Engine::new(concrete).ok_or(Error::Backend { name: concrete.name() })?),
        };
        let needed = match engine {
            None => 0,
            Some(_) => self.min_scratch_len(),
        };
        if scratch.len() < needed {
            return Err(Error::Scratch {
                needed,
                given: scratch.len(),
            });
        }
        let first = self.sequences.start + range.start;
        let sequences = first..self.sequences.start + range.end;
        let packed = packs_in_one_word(<T::Key as Key>::BITS, self.sequence_len());
        match engine {
            None => self.each_sequence(sequences, |seq, k, flip, emit| arch::naive::select(seq, k, flip, emit)),
            // A zero stride along the axis makes every element of a sequence the same element: they all
            // tie, so the first K are positions 0..K in order. One read per output instead of n reads per
            // sequence, which a broadcast view can make 2^63 (fuzz finding 4).
            Some(_) if self.input.layout().strides()[self.axis] == 0 => {
                self.each_sequence(sequences, |_, k, _, emit| {
                    let mut ranks = [0; 64];
                    for first in (0..k).step_by(ranks.len()) {
                        let batch = ranks.iter_mut().zip(first..k).map(|(slot, rank)| *slot = rank).count();
                        emit(first, ranks.get(..batch).unwrap_or_default());
                    }
                })
            }
            Some(engine) if packed => self.with_buffer::<u64>(engine, sequences, scratch, needed),
            Some(engine) => self.with_buffer::<[u64; 2]>(engine, sequences, scratch, needed),
        }
        Ok(())
    }

    /// Runs `sequences` with `engine`, its candidates in `scratch`: the first `needed` words (one
    /// sequence's) or, read side by side with K above 16, all of it.
    fn with_buffer<E: Entry>(&mut self, engine: Engine, sequences: Range<usize>, scratch: &mut [u64], needed: usize) {
        let Some(inner) = self.side_by_side(engine, scratch.len()) else {
            let buffer = E::from_words(&mut scratch[..needed]);
            let mut one =
                |seq: &Sequence<'_, T>, k, flip, emit: &mut Emit<'_>| engine.select(seq, k, flip, buffer, emit);
            if self.tiny_rows(engine, sequences.len()) {
                return self.each_tiny(sequences, engine, &mut one);
            }
            return self.each_sequence(sequences, &mut one);
        };
        // Runs of neighbouring sequences side by side, one per lane; what a run leaves, one at a time.
        let mut next = sequences.start;
        while next < sequences.end {
            next = self.each_side(next..sequences.end, |side, k, flip, emit| {
                engine.select_side::<T>(side, k, flip, E::buffer(E::from_words(scratch)), emit)
            });
            let coord = coordinates(self.input.sizes(), self.axis, next);
            let rest_of_run = (self.input.sizes()[inner] - coord[inner]).min(sequences.end - next);
            let buffer = E::from_words(&mut scratch[..needed]);
            self.each_sequence(next..next + rest_of_run, |seq, k, flip, emit| {
                engine.select(seq, k, flip, buffer, emit)
            });
            next += rest_of_run;
        }
    }

    /// The innermost dimension, if `engine` can read sequences side by side here: there is one
    /// ([`side_dimension`]), and K fits the lanes' sorted slots or `scratch` words hold the buffers
    /// [`side_pools`] needs.
    fn side_by_side(&self, engine: Engine, scratch: usize) -> Option<usize> {
        let (input, axis) = (self.input.layout(), self.axis);
        let inner = side_dimension(input, axis)?;
        let fits = self.k <= arch::SIDE_MAX_K || (side_pools(input, axis, self.k) && scratch >= self.scratch_len());
        (fits && engine.has_sides()).then_some(inner)
    }

    /// Whether sequences are short enough to be read side by side from a tile ([`each_tiny`]): at most
    /// [`TINY`] long, K small enough for the lanes' pools, and a group of them at least; with K = 1, also
    /// shorter than the widest vector where the engine has `first_best` (rows of 16 to 32 f32 are 10-50%
    /// faster one at a time through it). Only where SIMD engines exist: elsewhere (firmware) the portable
    /// lanes keep one sequence at a time, and the path's 7 KB of code stay out of a 32 KiB flash budget.
    ///
    /// [`each_tiny`]: TopK::each_tiny
    fn tiny_rows(&self, engine: Engine, sequences: usize) -> bool {
        let len = self.sequence_len();
        arch::SIMD_ENGINES
            && (2..=TINY).contains(&len)
            && self.k <= arch::SIDE_MAX_K
            && (self.k > 1 || len < MAX_LANES || !engine.finds_first_best())
            && sequences >= MAX_LANES
            && engine.has_sides()
    }

    /// Sequences of at most [`TINY`] elements, [`MAX_LANES`] at a time: copied into a tile on the stack,
    /// element `p` of the group's sequence `r` at `p · MAX_LANES + r`, then read side by side from there
    /// by the engine's side filter, one sequence per lane (the rows of MoE routing: one at a time, a row
    /// of 8 cost as much as ONNX Runtime's heap). A group the engine declines, and the last one if
    /// shorter, go one at a time through `one`.
    fn each_tiny(
        &mut self,
        sequences: Range<usize>,
        engine: Engine,
        one: &mut impl FnMut(&Sequence<'_, T>, usize, u64, &mut Emit<'_>),
    ) {
        let axis = self.axis;
        let sizes = self.input.sizes();
        let len = sizes[axis];
        let flip = self.direction.flip::<T::Key>();
        let (values_step, indices_step) = (self.values.layout.strides()[axis], self.indices.layout.strides()[axis]);
        let strides = self.strides();
        let mut tile = [T::ZERO; TINY * MAX_LANES];
        let mut number = sequences.start;
        let mut coord = coordinates(sizes, axis, number);
        let mut addresses = self.addresses(&coord);
        while sequences.end - number >= MAX_LANES {
            // Each lane's output addresses, and its elements into the tile.
            let mut outputs = [[0isize; 2]; MAX_LANES];
            for (lane, output) in outputs.iter_mut().enumerate() {
                let [start, values_start, indices_start] = addresses;
                *output = [values_start, indices_start];
                // SAFETY: `start` is the address of `coord` (`advance` keeps it so), which has 0 on the axis.
                let seq = unsafe { self.sequence(start) };
                for (position, slot) in tile.iter_mut().skip(lane).step_by(MAX_LANES).take(len).enumerate() {
                    // SAFETY: position < len.
                    *slot = unsafe { seq.get(position) };
                }
                advance(&mut coord, &sizes, axis, &strides, &mut addresses);
            }
            let mut done = 0;
            while done < MAX_LANES {
                // SAFETY: every done + lane + position · MAX_LANES with lane < MAX_LANES - done and
                // position < len is below len · MAX_LANES, within the tile as len <= TINY (`tiny_rows`).
                let side = unsafe {
                    Side::new(
                        Sequence::new(&tile, done as isize, MAX_LANES as isize, len),
                        MAX_LANES - done,
                    )
                };
                let (values, indices) = (&self.values, &self.indices);
                let no_buffer = Buffer::Packed(&mut []);
                let taken = engine.select_side::<T>(&side, self.k, flip, no_buffer, &mut |lane, rank, position| {
                    debug_assert!(done + lane < MAX_LANES && rank < self.k && position < len);
                    let Some(&[values_start, indices_start]) = outputs.get(done + lane) else {
                        return;
                    };
                    let rank = rank as isize;
                    // SAFETY: the output addresses are those of a sequence of this group (`coord` when
                    // it was taken), with 0 on the axis, and rank < k is a coordinate along it, so both
                    // were validated. `side.get` takes lane < count and position < len, which lie in the
                    // tile: done + lane + position · MAX_LANES < len · MAX_LANES.
                    unsafe {
                        values.write(values_start + rank * values_step, side.get(lane, position));
                        indices.write(indices_start + rank * indices_step, I::from_position(position));
                    }
                });
                if taken == 0 {
                    break;
                }
                done += taken;
            }
            if done < MAX_LANES {
                self.each_sequence(number + done..number + MAX_LANES, &mut *one);
            }
            number += MAX_LANES;
        }
        self.each_sequence(number..sequences.end, one);
    }

    /// Walks `sequences` from their start in runs of neighbours (same coordinates but the innermost),
    /// letting `select` take the first `done` of each run side by side and report them through
    /// `emit(lane, rank, position)`. Stops at the first run `select` declines (`done == 0`) and returns
    /// the first sequence not done.
    fn each_side(
        &mut self,
        sequences: Range<usize>,
        mut select: impl FnMut(&Side<'_, T>, usize, u64, &mut dyn FnMut(usize, usize, usize)) -> usize,
    ) -> usize {
        let inner = D.saturating_sub(1);
        let axis = self.axis;
        let sizes = self.input.sizes();
        let len = sizes[axis];
        let flip = self.direction.flip::<T::Key>();
        let (values_step, values_lane) = (self.values.layout.strides()[axis], self.values.layout.strides()[inner]);
        let (indices_step, indices_lane) = (
            self.indices.layout.strides()[axis],
            self.indices.layout.strides()[inner],
        );
        let mut number = sequences.start;
        let mut coord = coordinates(sizes, axis, number);
        while number < sequences.end {
            let count = (sizes[inner] - coord[inner]).min(sequences.end - number);
            let [start, values_start, indices_start] = self.addresses(&coord);
            // SAFETY: `start` is the address of `coord`, which has 0 on the axis; moved lane < count along
            // the innermost dimension (input stride 1, see `side_by_side`) it stays a coordinate, as
            // count <= sizes[inner] - coord[inner].
            let side = unsafe { Side::new(self.sequence(start), count) };
            let (values, indices) = (&self.values, &self.indices);
            let done = select(&side, self.k, flip, &mut |lane, rank, position| {
                debug_assert!(
                    lane < count && rank < self.k && position < len,
                    "{lane} {rank} {position}"
                );
                let (lane, rank) = (lane as isize, rank as isize);
                // SAFETY: `coord` moved `lane < count` along the innermost dimension is still a coordinate
                // (count <= sizes[inner] - coord[inner]) with 0 on the axis, and rank < k is a coordinate
                // along the axis, so both output addresses were validated; `side.get` takes lane < count
                // and position < len.
                unsafe {
                    values.write(
                        values_start + lane * values_lane + rank * values_step,
                        side.get(lane as usize, position),
                    );
                    indices.write(
                        indices_start + lane * indices_lane + rank * indices_step,
                        I::from_position(position),
                    );
                }
            });
            if done == 0 {
                break;
            }
            let done = done.min(count);
            number += done;
            for _ in 0..done {
                advance(&mut coord, &sizes, axis, &[], &mut []);
            }
        }
        number
    }

    /// Walks `sequences` in order, lets `select` report each one's positions, and writes the outputs.
    fn each_sequence(
        &mut self,
        sequences: Range<usize>,
        mut select: impl FnMut(&Sequence<'_, T>, usize, u64, &mut Emit<'_>),
    ) {
        if sequences.is_empty() {
            return;
        }
        let axis = self.axis;
        let sizes = self.input.sizes();
        let len = sizes[axis];
        let flip = self.direction.flip::<T::Key>();
        let values_step = self.values.layout.strides()[axis];
        let indices_step = self.indices.layout.strides()[axis];
        let mut coord = coordinates(sizes, axis, sequences.start);
        // The three addresses of `coord`, moved with it (most steps add one stride to each, where
        // computing them took three times eight multiply-adds a sequence).
        let strides = self.strides();
        let mut addresses = self.addresses(&coord);
        for _ in sequences {
            debug_assert_eq!(addresses, self.addresses(&coord));
            let [start, values_start, indices_start] = addresses;
            // SAFETY: `start` is the address of `coord` (`advance` keeps it so), which has 0 on the axis.
            let seq = unsafe { self.sequence(start) };
            let (values, indices) = (&self.values, &self.indices);
            select(&seq, self.k, flip, &mut |first, positions| {
                // Copied into locals: the writes go through raw pointers, after each of which LLVM reloaded
                // all it read through the captures (twice the instructions an element; rows of 256 with
                // K = 8: 0.55 to 0.53 ms).
                let (values, indices, seq) = (values.duplicate(), indices.duplicate(), seq);
                let [values_start, indices_start, values_step, indices_step] =
                    [values_start, indices_start, values_step, indices_step];
                for (rank, &position) in (first..).zip(positions) {
                    debug_assert!(rank < self.k && position < len, "rank {rank} position {position}");
                    let rank = rank as isize;
                    // SAFETY: `values_start` and `indices_start` are the addresses of `coord` (`advance`
                    // keeps them so), a coordinate of the outputs with 0 along the axis, and rank < k is a
                    // coordinate along it, so both addresses were validated; position < len is a
                    // coordinate of the input sequence.
                    unsafe {
                        values.write(values_start + rank * values_step, seq.get(position));
                        indices.write(indices_start + rank * indices_step, I::from_position(position));
                    }
                }
            });
            advance(&mut coord, &sizes, axis, &strides, &mut addresses);
        }
    }

    /// The addresses of `coord` in the input, the values and the indices.
    fn addresses(&self, coord: &[usize; D]) -> [isize; 3] {
        [
            self.input.layout().address(coord),
            self.values.layout.address(coord),
            self.indices.layout.address(coord),
        ]
    }

    /// The strides of the input, the values and the indices, in the order of [`TopK::addresses`].
    fn strides(&self) -> [[isize; D]; 3] {
        [
            self.input.layout().strides(),
            self.values.layout.strides(),
            self.indices.layout.strides(),
        ]
    }

    /// The input sequence that starts at address `start`.
    ///
    /// # Safety
    /// `start` is the input's address of a coordinate with 0 on the axis.
    unsafe fn sequence(&self, start: isize) -> Sequence<'a, T> {
        let layout = self.input.layout();
        // SAFETY: a validated layout maps every coordinate into the data, and the sequence's positions
        // are the coordinates along the axis from one with 0 there (the caller's precondition).
        unsafe {
            Sequence::new(
                self.input.data(),
                start,
                layout.strides()[self.axis],
                layout.sizes()[self.axis],
            )
        }
    }

    /// A second handle on the same borrows; only `split_at` uses it, and narrows both to disjoint ranges.
    fn duplicate(&self) -> Self {
        TopK {
            input: self.input,
            values: self.values.duplicate(),
            indices: self.indices.duplicate(),
            axis: self.axis,
            k: self.k,
            direction: self.direction,
            sequences: self.sequences.clone(),
        }
    }
}

/// The coordinates of sequence `number` (row-major over the dimensions other than `axis`), 0 on `axis`.
pub(crate) fn coordinates<const D: usize>(sizes: [usize; D], axis: usize, mut number: usize) -> [usize; D] {
    let mut coord = [0; D];
    for d in (0..D).rev() {
        if d != axis && sizes[d] > 0 {
            coord[d] = number % sizes[d];
            number /= sizes[d];
        }
    }
    coord
}

/// Moves `coord` to the next sequence, and each of `addresses` (of layouts with `strides`) with it.
///
/// Inlined: called out of line, it left `addresses` in memory, written a word at a time, and the tile's
/// walk read two of them back as one 16-byte load, which waited for those stores (a quarter of the time
/// of 4096 rows of 8; 0.077 to 0.055 ms with K = 1, and 16384 rows of 8 with K = 2, 0.37 to 0.28).
#[inline(always)]
fn advance<const D: usize, const N: usize>(
    coord: &mut [usize; D],
    sizes: &[usize; D],
    axis: usize,
    strides: &[[isize; D]; N],
    addresses: &mut [isize; N],
) {
    for d in (0..D).rev() {
        if d == axis {
            continue;
        }
        if coord[d] + 1 < sizes[d] {
            coord[d] += 1;
            for (address, strides) in addresses.iter_mut().zip(strides) {
                *address += strides[d];
            }
            return;
        }
        // Back to 0 on this dimension, and on to the next one out.
        for (address, strides) in addresses.iter_mut().zip(strides) {
            *address -= coord[d] as isize * strides[d];
        }
        coord[d] = 0;
    }
}

/// Longest sequences [`TopK::each_tiny`] reads side by side from a tile: its `TINY · MAX_LANES` elements
/// take 4 KiB of stack for 64-bit types.
const TINY: usize = 32;

/// An output view reduced to a pointer, so that plans split by sequence can share it.
struct Output<'a, T, const D: usize> {
    data: NonNull<T>,
    len: usize,
    layout: Layout<D>,
    borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T, const D: usize> Output<'a, T, D> {
    fn new(view: ViewMut<'a, T, D>) -> Self {
        Output {
            len: view.data.len(),
            data: NonNull::from(view.data).cast(),
            layout: view.layout,
            borrow: PhantomData,
        }
    }

    fn duplicate(&self) -> Self {
        Output {
            data: self.data,
            len: self.len,
            layout: self.layout,
            borrow: PhantomData,
        }
    }

    /// Writes `value` at `address`.
    ///
    /// # Safety
    /// `address` is the address of a coordinate of `layout`, and no other thread writes it.
    #[inline(always)]
    unsafe fn write(&self, address: isize, value: T) {
        debug_assert!(
            0 <= address && (address as usize) < self.len,
            "address {address} of {}",
            self.len
        );
        // SAFETY: validated layouts put every coordinate's address inside the borrowed slice.
        unsafe { self.data.add(address as usize).write(value) }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec;

    use super::*;
    use crate::naive;

    /// Every engine this build has against the reference on rows of a few vectors (small enough for
    /// miri, which runs the portable lanes' loads here).
    fn agrees_with_naive<T: Element + PartialEq + core::fmt::Debug>(data: &[T]) {
        let n = data.len();
        // K = 12 and 16 take the SIMD engines' 32 prefix groups (K > 8 on short rows); left out under
        // miri, for time.
        let ks: &[usize] = if cfg!(miri) {
            &[1, 3, n / 2, n]
        } else {
            &[1, 3, 12, 16, n / 2, n]
        };
        for &k in ks {
            for direction in [Direction::Decreasing, Direction::Increasing] {
                let (mut want_v, mut want_i) = (vec![T::ZERO; k], vec![0u32; k]);
                let input = View::contiguous(data, [n]).unwrap();
                let (v, i) = (
                    ViewMut::contiguous(&mut want_v[..], [k]).unwrap(),
                    ViewMut::contiguous(&mut want_i[..], [k]).unwrap(),
                );
                naive::topk(input, 0, k, direction, v, i).unwrap();
                // Miri leaves out the backends that would repeat a run it has just made: `Naive` is the
                // reference's own `run_sequences` call, and `Auto` resolves to `Portable` there (the two
                // took it about 40 of 89 s: the reference reads the row once for each of the K).
                let repeats = |b: &Backend| cfg!(miri) && matches!(b, Backend::Naive | Backend::Auto);
                for backend in Backend::ALL.into_iter().filter(|b| b.is_available() && !repeats(b)) {
                    let (mut got_v, mut got_i) = (vec![T::ZERO; k], vec![0u32; k]);
                    let (v, i) = (
                        ViewMut::contiguous(&mut got_v[..], [k]).unwrap(),
                        ViewMut::contiguous(&mut got_i[..], [k]).unwrap(),
                    );
                    let mut plan = TopK::new(input, 0, k, direction, v, i).unwrap();
                    let mut scratch = vec![0u64; plan.scratch_len()];
                    plan.run_sequences(0..1, backend, &mut scratch).unwrap();
                    assert_eq!(got_i, want_i, "{} {} k {k} {direction:?}", backend.name(), T::NAME);
                }
            }
        }
    }

    /// Every engine this build has against the reference along axis 0 of `data` as `n x 9`: nine
    /// neighbouring sequences, read side by side (a group of the engine's lanes, the rest one at a
    /// time), with K in the lanes' sorted slots and above them, given the plan's scratch or the least.
    fn agrees_on_a_non_last_axis<T: Element + PartialEq + core::fmt::Debug>(data: &[T], n: usize) {
        const COUNT: usize = 9;
        let input = View::contiguous(&data[..n * COUNT], [n, COUNT]).unwrap();
        for k in [3, 17, n] {
            let direction = if k == 17 {
                Direction::Increasing
            } else {
                Direction::Decreasing
            };
            let (mut want_v, mut want_i) = (vec![T::ZERO; k * COUNT], vec![0u32; k * COUNT]);
            let (v, i) = (
                ViewMut::contiguous(&mut want_v[..], [k, COUNT]).unwrap(),
                ViewMut::contiguous(&mut want_i[..], [k, COUNT]).unwrap(),
            );
            naive::topk(input, 0, k, direction, v, i).unwrap();
            // As above, miri leaves out `Auto`, which is `Portable` there.
            let runs = |b: &Backend| b.is_available() && *b != Backend::Naive && !(cfg!(miri) && *b == Backend::Auto);
            for backend in Backend::ALL.into_iter().filter(runs) {
                for least in [false, true] {
                    let (mut got_v, mut got_i) = (vec![T::ZERO; k * COUNT], vec![0u32; k * COUNT]);
                    let (v, i) = (
                        ViewMut::contiguous(&mut got_v[..], [k, COUNT]).unwrap(),
                        ViewMut::contiguous(&mut got_i[..], [k, COUNT]).unwrap(),
                    );
                    let mut plan = TopK::new(input, 0, k, direction, v, i).unwrap();
                    let words = if least {
                        scratch_len::<T>(n, k)
                    } else {
                        plan.scratch_len()
                    };
                    plan.run_sequences(0..COUNT, backend, &mut vec![0u64; words]).unwrap();
                    assert_eq!(got_i, want_i, "{} {} k {k} least {least}", backend.name(), T::NAME);
                    assert_eq!(got_v, want_v);
                }
            }
        }
    }

    #[test]
    fn engines_agree_on_a_non_last_axis() {
        let bits = |i: u32| i.wrapping_mul(0x9E37_79B9).rotate_left(i % 7);
        // Sequences of 40 with K = 17 compact their buffers (of 34) once; miri runs shorter ones.
        let n = if cfg!(miri) { 20 } else { 40 };
        let f32s: [f32; 40 * 9] = core::array::from_fn(|i| f32::from_bits(bits(i as u32) >> 2));
        agrees_on_a_non_last_axis(&f32s, n);
        let f64s: [f64; 40 * 9] = core::array::from_fn(|i| f64::from(f32s[i]));
        agrees_on_a_non_last_axis(&f64s, n);
        let u8s: [u8; 40 * 9] = core::array::from_fn(|i| (bits(i as u32) % 5) as u8);
        agrees_on_a_non_last_axis(&u8s, n);
    }

    #[test]
    fn engines_agree_on_short_rows() {
        let bits = |i: u32| i.wrapping_mul(0x9E37_79B9).rotate_left(i % 7);
        let specials = [0x7FC0_0001u32, 0xFFC0_0000, 0x8000_0000, 0, 0x7F80_0000, 0xFF80_0000];
        let f32s: [f32; 77] =
            core::array::from_fn(|i| f32::from_bits(if i % 5 == 0 { specials[i % 6] } else { bits(i as u32) }));
        agrees_with_naive(&f32s);
        let f64s: [f64; 41] = core::array::from_fn(|i| f64::from(f32s[i]));
        agrees_with_naive(&f64s);
        let u8s: [u8; 70] = core::array::from_fn(|i| (bits(i as u32) % 7) as u8);
        agrees_with_naive(&u8s);
        let i16s: [i16; 69] = core::array::from_fn(|i| bits(i as u32) as i16);
        agrees_with_naive(&i16s);
        let f16s: [half::f16; 66] = core::array::from_fn(|i| half::f16::from_bits((f32s[i].to_bits() >> 16) as u16));
        agrees_with_naive(&f16s);
    }
}
