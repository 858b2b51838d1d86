//! Layer 5, the walk: a validated request reduced to what the walk over its sequences needs (rank 8,
//! the views padded in front with dimensions of size 1 as [`Layout::padded`] does, and the index
//! output reduced to its word), and that walk: sequence by sequence, in runs of rows along a
//! dimension, side by side along the innermost dimension, or from a tile of short rows.
//!
//! [`TopK`] is generic over the index type and the rank for its callers; this is generic over the value
//! type only, so a caller compiles the walk once per value type, and the kernels not at all (they are
//! entered through `dispatch::select`). The methods [`TopK`] forwards to are documented there.
//!
//! [`TopK`]: crate::TopK
//! [`Layout::padded`]: crate::Layout::padded

use core::marker::PhantomData;
use core::ops::Range;
use core::ptr::NonNull;

use crate::dispatch::engine::{Backend, Engine};
use crate::dispatch::select::{select, select_columns, select_rows};
use crate::dispatch::strategy::{self, SIMD_ENGINES, TINY, Walk, columns_dimension};
use crate::kernels::entry::{Buffer, Entry, packs_in_one_word};
use crate::simd::vector::MAX_LANES;
use crate::types::element::{Direction, Element, Key, Order};
use crate::types::error::Error;
use crate::types::index::Index;
use crate::types::output::{ColumnOutputs, Emit, IndexWords, LaneStarts, Outputs, Rows, Slots};
use crate::types::sequence::{Columns, Sequence};
use crate::types::view::{self, Layout, MAX_RANK, View, ViewMut};

/// A validated request at rank 8 (see the module's doc); [`crate::TopK`] wraps one.
pub(crate) struct Plan<'a, T: Element> {
    input: View<'a, T, MAX_RANK>,
    values: Output<'a, NonNull<T>>,
    /// The index output as the words of its type's width (`u32` for `u32` and `i32`, `u64` for `u64`
    /// and `i64`), whose bits are the same for every position the type holds.
    indices: Output<'a, IndexWords>,
    axis: usize,
    k: usize,
    direction: Direction,
    /// The sequences this plan covers, in the numbering of the whole request.
    sequences: Range<usize>,
}

// SAFETY: a plan reads its input through a shared borrow and writes only the output elements of its own
// sequences; plans made by `split_at` cover disjoint sequences, and a validated output view maps distinct
// coordinates to distinct elements, so two plans on two threads never touch the same element.
unsafe impl<T: Element> Send for Plan<'_, T> {}

impl<'a, T: Element> Plan<'a, T> {
    /// The plan of a request [`crate::check_request`] accepted, `len` long along `axis`.
    pub(crate) fn new<I: Index, const D: usize>(
        input: View<'a, T, D>,
        axis: usize,
        k: usize,
        direction: Direction,
        values: ViewMut<'a, T, D>,
        indices: ViewMut<'a, I, D>,
        len: usize,
    ) -> Self {
        let count = if k == 0 {
            0
        } else {
            input.layout().elements() / len.max(1)
        };
        const { assert!(size_of::<I>() == 4 || size_of::<I>() == 8) };
        let indices_data = indices.data;
        // `u32` and `i32` have the size and alignment of `u32`, `u64` and `i64` those of `u64`, and every
        // bit pattern is one of each.
        let words = if size_of::<I>() == 4 {
            IndexWords::U32(indices_data.cast())
        } else {
            IndexWords::U64(indices_data.cast())
        };
        let (mut input, mut values, mut indices) = (
            input.pad(),
            Output::new(values.data, &values.layout),
            Output::new(words, &indices.layout),
        );
        let mut axis = axis + (MAX_RANK - D);
        // Longer runs of neighbours pay where they are read side by side (a constant test: firmware reads
        // one sequence at a time, and the merge stays out of its flash).
        if SIMD_ENGINES {
            axis = input.merge_dimensions([&mut values.strides, &mut indices.strides], axis);
        }
        Plan {
            input,
            values,
            indices,
            axis,
            k,
            direction,
            sequences: 0..count,
        }
    }

    pub(crate) fn sequences(&self) -> usize {
        self.sequences.len()
    }

    pub(crate) fn sequence_len(&self) -> usize {
        self.input.layout().sizes[self.axis]
    }

    pub(crate) fn k(&self) -> usize {
        self.k
    }

    pub(crate) fn scratch_len(&self) -> usize {
        if self.sequences.is_empty() {
            // Nothing to run: an empty tensor with a huge axis needs no scratch (fuzz finding 2).
            return 0;
        }
        strategy::fastest_scratch_words::<T, MAX_RANK>(self.input.layout(), self.axis, self.k)
    }

    pub(crate) fn min_scratch_len(&self) -> usize {
        if self.sequences.is_empty() {
            return 0;
        }
        strategy::scratch_words::<T>(self.sequence_len(), self.k)
    }

    pub(crate) fn split_at(self, mid: usize) -> Result<(Self, Self), Error> {
        let Range { start, end } = self.sequences;
        if mid > end - start {
            return Err(Error::Sequences {
                start: mid,
                end: mid,
                count: end - start,
            });
        }
        let low = Plan {
            sequences: start..start + mid,
            ..self.duplicate()
        };
        let high = Plan {
            sequences: start + mid..end,
            ..self
        };
        Ok((low, high))
    }

    /// The engine `backend` runs this plan on ([`crate::TopK::resolve`], [`strategy::backend`]).
    pub(crate) fn resolve(&self, backend: Backend) -> Backend {
        strategy::backend(
            backend,
            Backend::Auto.resolve(),
            &self.rows(),
            crate::simd::cpu::facts(),
        )
    }

    /// This plan's rows as the strategy sees them.
    fn rows(&self) -> strategy::Rows {
        strategy::Rows {
            data_type: T::DATA_TYPE,
            len: self.sequence_len(),
            k: self.k,
            stride: self.input.layout().strides[self.axis],
            capped: false,
        }
    }

    /// Runs sequences `range` (numbered from 0 within this plan) with `backend`.
    pub(crate) fn run_sequences(
        &mut self,
        range: Range<usize>,
        backend: Backend,
        scratch: &mut [u64],
    ) -> Result<(), Error> {
        let count = self.sequences();
        if range.start > range.end || range.end > count {
            return Err(Error::Sequences {
                start: range.start,
                end: range.end,
                count,
            });
        }
        let backend = self.resolve(backend);
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
        let call = strategy::Call {
            rows: self.rows(),
            sequences: range.len(),
            columns: columns_dimension(self.input.layout(), self.axis).is_some(),
            column_buffers: scratch.len() >= self.scratch_len(),
        };
        let first = self.sequences.start + range.start;
        let sequences = first..self.sequences.start + range.end;
        let packed = packs_in_one_word(<T::Key as Key>::BITS, self.sequence_len());
        match (
            engine,
            strategy::walk(engine.map(strategy::capabilities).as_ref(), &call),
        ) {
            (None, _) | (_, Walk::Reference) => self.each_sequence(sequences, |seq, k, order, emit| {
                crate::kernels::reference::select(seq, k, order, emit)
            }),
            (_, Walk::Broadcast) => self.each_sequence(sequences, |_, k, _, emit| {
                for rank in 0..k {
                    emit.one(rank, rank);
                }
            }),
            (Some(engine), walk) if packed => self.with_buffer::<u64>(engine, walk, sequences, scratch, needed),
            (Some(engine), walk) => self.with_buffer::<[u64; 2]>(engine, walk, sequences, scratch, needed),
        }
        Ok(())
    }

    /// Runs `sequences` with `engine` as `walk` says, its candidates in `scratch`: the first `needed`
    /// words (one sequence's) or, read side by side with K above [`strategy::COLUMNS_MAX_K`], all of it.
    fn with_buffer<E: Entry>(
        &mut self,
        engine: Engine,
        walk: Walk,
        sequences: Range<usize>,
        scratch: &mut [u64],
        needed: usize,
    ) {
        let inner = columns_dimension(self.input.layout(), self.axis);
        match (walk, inner) {
            (Walk::Columns, Some(inner)) => {
                // Runs of neighbouring sequences side by side, one per lane; what a run leaves, one at a
                // time.
                let mut next = sequences.start;
                while next < sequences.end {
                    next = self.each_columns(inner, next..sequences.end, |k, order, emit| {
                        select_columns(engine, k, order, E::buffer(E::from_words(scratch)), emit)
                    });
                    let coord = coordinates(&self.input.layout().sizes, self.axis, next);
                    let rest_of_run = (self.input.layout().sizes[inner] - coord[inner]).min(sequences.end - next);
                    let buffer = E::from_words(&mut scratch[..needed]);
                    self.each_sequence(next..next + rest_of_run, |seq, k, order, emit| {
                        select(engine, seq, k, order, buffer, emit)
                    });
                    next += rest_of_run;
                }
            }
            // A constant test too: where SIMD engines are not (firmware), the tile's code stays out.
            (Walk::Tiles, _) if SIMD_ENGINES => {
                let buffer = E::from_words(&mut scratch[..needed]);
                let mut one = |seq: &Sequence<'_, T>, k, order, emit: &mut Emit<'_, T>| {
                    select(engine, seq, k, order, buffer, emit)
                };
                self.each_tiny(sequences, engine, &mut one);
            }
            _ => self.each_run(sequences, engine, E::from_words(&mut scratch[..needed])),
        }
    }

    /// Sequences of at most [`TINY`] elements, [`MAX_LANES`] at a time: copied into a tile on the stack,
    /// element `p` of the group's sequence `r` at `p · MAX_LANES + r`, then read side by side from there
    /// by the engine's column filter, one sequence per lane (the rows of MoE routing, where a row of 8 one at
    /// a time pays a whole selection's fixed cost). A group the engine declines, and the last one if
    /// shorter, go one at a time through `one`.
    // Out of line: inlined, its 4 KiB tile sat in the frame of every call, tiny rows or not.
    #[inline(never)]
    fn each_tiny(
        &mut self,
        sequences: Range<usize>,
        engine: Engine,
        one: &mut impl FnMut(&Sequence<'_, T>, usize, Order, &mut Emit<'_, T>),
    ) {
        let axis = self.axis;
        // Copies: `self` runs the sequences a group declines.
        let sizes = &self.input.sizes();
        let len = sizes[axis];
        let order = self.direction.order::<T::Key>();
        let strides = self.strides().map(|strides| *strides);
        let strides = strides.each_ref();
        // SAFETY: offset 0 is the outputs' first address.
        let slots = unsafe { self.slots_from([0, 0]) };
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
                advance(&mut coord, sizes, axis, &strides, &mut addresses);
            }
            // Evenly spaced outputs (the group along one dimension) are written a step a lane, where a
            // list is a load a lane.
            let [first, second] = [outputs[0], outputs[1]];
            let step = [second[0] - first[0], second[1] - first[1]];
            let even = (0..MAX_LANES as isize)
                .zip(&outputs)
                .all(|(lane, output)| *output == [first[0] + lane * step[0], first[1] + lane * step[1]]);
            let mut done = 0;
            while done < MAX_LANES {
                // SAFETY: every done + lane + position · MAX_LANES with lane < MAX_LANES - done and
                // position < len is below len · MAX_LANES, within the tile as len <= TINY (`tiny_rows`).
                let columns = unsafe {
                    Columns::new(
                        Sequence::new(&tile, done as isize, MAX_LANES as isize, len),
                        MAX_LANES - done,
                    )
                };
                let rest = outputs.get(done..).unwrap_or_default();
                let (slots, starts) = match rest.first() {
                    // SAFETY: the first lane's output address (see below).
                    Some(&start) if even => (unsafe { self.slots_from(start) }, LaneStarts::Step(step)),
                    _ => (slots, LaneStarts::Listed(rest)),
                };
                // SAFETY: `outputs` holds the output addresses of this group's sequences (`coord` when each
                // was taken), with 0 on the axis; moved rank < k along it they stay coordinates, whose
                // addresses validated outputs hold, written by this plan alone. The index type holds every
                // position of a sequence. Evenly spaced, lane l's start from the first left is `l · step`.
                let mut emit = unsafe { ColumnOutputs::new(columns, slots, starts) };
                let no_buffer = Buffer::Packed(&mut []);
                let taken = select_columns(engine, self.k, order, no_buffer, &mut emit);
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

    /// Walks `sequences` from their start in runs of neighbours along `inner` ([`columns_dimension`]),
    /// letting `select` take the first `done` of each run side by side and write them to the outputs
    /// ([`ColumnOutputs`]). Stops at the first run `select` declines (`done == 0`) and returns
    /// the first sequence not done.
    fn each_columns(
        &mut self,
        inner: usize,
        sequences: Range<usize>,
        mut select: impl FnMut(usize, Order, &mut ColumnOutputs<'_, T>) -> usize,
    ) -> usize {
        let axis = self.axis;
        let sizes = &self.input.layout().sizes;
        let order = self.direction.order::<T::Key>();
        let (values_lane, indices_lane) = (self.values.strides[inner], self.indices.strides[inner]);
        // Whole runs follow one another along the next dimension out: one call takes as many as that
        // dimension has left.
        let outer = (0..inner).rev().find(|&d| d != axis && sizes[d] > 1);
        let run_steps = outer.map_or([0; 3], |d| {
            [
                self.input.layout().strides[d],
                self.values.strides[d],
                self.indices.strides[d],
            ]
        });
        let mut number = sequences.start;
        let mut coord = coordinates(sizes, axis, number);
        while number < sequences.end {
            let count = (sizes[inner] - coord[inner]).min(sequences.end - number);
            let runs = match outer {
                Some(d) if count == sizes[inner] => (sizes[d] - coord[d]).min((sequences.end - number) / count),
                _ => 1,
            };
            let [start, values_start, indices_start] = self.addresses(&coord);
            // SAFETY: `start` is the address of `coord`, which has 0 on the axis; moved lane < count along
            // the innermost dimension (input stride 1, see `columns_dimension`) it stays a coordinate, as
            // count <= sizes[inner] - coord[inner].
            let columns = unsafe { Columns::new(self.sequence(start), count) };
            // SAFETY: `coord` moved `lane < count` along the innermost dimension is still a coordinate
            // (count <= sizes[inner] - coord[inner]) with 0 on the axis, and moved rank < k along the axis
            // too, so the outputs' addresses from those of `coord` were validated; this plan alone writes
            // them. The index type holds every position of a sequence. Runs past the first are whole
            // (coord[inner] == 0) and move `coord` r < runs <= sizes[outer] - coord[outer] along the
            // next dimension out, the sequences `number + r · count + lane`, below `sequences.end`
            // (runs · count <= sequences.end - number): coordinates too, each its own slots.
            let mut emit = unsafe {
                ColumnOutputs::new(
                    columns,
                    self.slots_from([values_start, indices_start]),
                    LaneStarts::Step([values_lane, indices_lane]),
                )
                .repeated(runs, run_steps)
            };
            let done = select(self.k, order, &mut emit);
            if done == 0 {
                break;
            }
            // Within the run, or past its end: one step from its last sequence (a run of a few lanes
            // paid more for a division a dimension, and a long one for a step a lane).
            let done = done.min(count * runs);
            number += done;
            if done < count {
                coord[inner] += done;
            } else if done == count * runs {
                coord[inner] = sizes[inner] - 1;
                if let Some(d) = outer {
                    coord[d] += runs - 1;
                }
                advance(&mut coord, sizes, axis, &[], &mut []);
            } else {
                coord = coordinates(sizes, axis, number);
            }
        }
        number
    }

    /// Selects `sequences` with `engine` in runs along the innermost dimension (other than the axis)
    /// that has more than one: one call of the engine a run ([`Rows`]), where the walk called it for
    /// each sequence.
    fn each_run<E: Entry>(&mut self, sequences: Range<usize>, engine: Engine, buffer: &mut [E]) {
        let axis = self.axis;
        let sizes = &self.input.layout().sizes;
        let order = self.direction.order::<T::Key>();
        let inner = (0..MAX_RANK).rev().find(|&d| d != axis && sizes[d] > 1);
        let mut number = sequences.start;
        while number < sequences.end {
            let coord = coordinates(sizes, axis, number);
            let count = inner.map_or(1, |d| sizes[d] - coord[d]).min(sequences.end - number);
            let [start, values_start, indices_start] = self.addresses(&coord);
            let [step, values_step, indices_step] = inner.map_or([0; 3], |d| {
                [
                    self.input.layout().strides[d],
                    self.values.strides[d],
                    self.indices.strides[d],
                ]
            });
            // SAFETY: `coord` has 0 on the axis, and moved `row < count` along `inner` it stays a
            // coordinate (count <= sizes[inner] - coord[inner]), the sequence `number + row`: its input
            // address is `start` moved `row` steps, its outputs' those of `coord` moved as many, validated
            // for every rank < k along the axis and written by this plan alone (plans split by `split_at`
            // cover disjoint sequences). The index type holds every position of a sequence.
            let mut rows = unsafe {
                Rows::new(
                    self.sequence(start),
                    count,
                    step,
                    self.slots_from([values_start, indices_start]),
                    [values_step, indices_step],
                )
            };
            select_rows(engine, &mut rows, self.k, order, buffer);
            number += count;
        }
    }

    /// Walks `sequences` in order, lets `select` report each one's positions, and writes the outputs.
    fn each_sequence(
        &mut self,
        sequences: Range<usize>,
        mut select: impl FnMut(&Sequence<'_, T>, usize, Order, &mut Emit<'_, T>),
    ) {
        if sequences.is_empty() {
            return;
        }
        let axis = self.axis;
        let sizes = &self.input.layout().sizes;
        let order = self.direction.order::<T::Key>();
        let mut coord = coordinates(sizes, axis, sequences.start);
        // The three addresses of `coord`, moved with it (most steps add one stride to each, where
        // computing them takes three times eight multiply-adds a sequence).
        let strides = self.strides();
        let mut addresses = self.addresses(&coord);
        for _ in sequences {
            debug_assert_eq!(addresses, self.addresses(&coord));
            let [start, values_start, indices_start] = addresses;
            // SAFETY: `start` is the address of `coord` (`advance` keeps it so), which has 0 on the axis.
            let seq = unsafe { self.sequence(start) };
            // SAFETY: `values_start` and `indices_start` are the addresses of `coord` (`advance` keeps
            // them so), a coordinate of the outputs with 0 along the axis; moved rank < k along it they
            // stay coordinates, whose addresses a validated output holds, written by this plan alone
            // (plans split by `split_at` cover disjoint sequences). The plan's index type holds every
            // position of a sequence (`check_request`).
            let outputs = unsafe { Outputs::new(seq, self.slots_from([values_start, indices_start])) };
            select(&seq, self.k, order, &mut Emit::Outputs(outputs));
            advance(&mut coord, sizes, axis, &strides, &mut addresses);
        }
    }

    /// The outputs' slots of ranks `0..K` of the answer whose first rank is at `[values_start,
    /// indices_start]` (offsets from the outputs' data), a step along the axis a rank.
    ///
    /// # Safety
    /// Both offsets are addresses of a coordinate of their output (`offset`'s precondition).
    #[inline(always)]
    unsafe fn slots_from(&self, [values_start, indices_start]: [isize; 2]) -> Slots<T> {
        let axis = self.axis;
        // SAFETY: the caller's.
        let (values, indices) = unsafe {
            (
                self.values.data.offset(values_start),
                self.indices.data.offset(indices_start),
            )
        };
        Slots::new(
            self.k,
            (values, self.values.strides[axis]),
            (indices, self.indices.strides[axis]),
        )
    }

    /// The addresses of `coord` in the input, the values and the indices.
    fn addresses(&self, coord: &[usize; MAX_RANK]) -> [isize; 3] {
        [
            self.input.layout().address(coord),
            self.values.address(coord),
            self.indices.address(coord),
        ]
    }

    /// The strides of the input, the values and the indices, in the order of [`Plan::addresses`].
    fn strides(&self) -> [&[isize; MAX_RANK]; 3] {
        [
            &self.input.layout().strides,
            &self.values.strides,
            &self.indices.strides,
        ]
    }

    /// The input sequence that starts at address `start`.
    ///
    /// # Safety
    /// `start` is the input's address of a coordinate with 0 on the axis.
    unsafe fn sequence(&self, start: isize) -> Sequence<'a, T> {
        let layout = self.input.layout();
        // SAFETY: a validated view maps every coordinate to one of its elements, and the sequence's
        // positions are the coordinates along the axis from one with 0 there (the caller's precondition).
        unsafe {
            Sequence::from_ptr(
                self.input.data(),
                start,
                layout.strides[self.axis],
                layout.sizes[self.axis],
            )
        }
    }

    /// A second handle on the same borrows; only `split_at` uses it, and narrows both to disjoint ranges.
    fn duplicate(&self) -> Self {
        Plan {
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
#[cfg_attr(not(simd_arch), inline(never))]
pub(crate) fn coordinates<const D: usize>(sizes: &[usize; D], axis: usize, mut number: usize) -> [usize; D] {
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
/// walk read two of them back as one 16-byte load, which waited for those stores (a large part of the
/// time of many rows of 8 with K of 1 or 2).
#[cfg_attr(simd_arch, inline(always))]
fn advance<const D: usize, const N: usize>(
    coord: &mut [usize; D],
    sizes: &[usize; D],
    axis: usize,
    strides: &[&[isize; D]; N],
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

/// An output view reduced to a handle on its data (a pointer, so that plans split by sequence can
/// share it) and its padded layout to strides and offset (its sizes are the input's, but K along the
/// axis).
struct Output<'a, P> {
    data: P,
    strides: [isize; MAX_RANK],
    offset: usize,
    borrow: PhantomData<&'a mut ()>,
}

impl<P: Copy> Output<'_, P> {
    fn new<const D: usize>(data: P, layout: &Layout<D>) -> Self {
        let layout = layout.pad();
        Output {
            data,
            strides: layout.strides,
            offset: layout.offset(),
            borrow: PhantomData,
        }
    }

    /// The address of `coord`.
    fn address(&self, coord: &[usize; MAX_RANK]) -> isize {
        view::address(self.offset, &self.strides, coord)
    }

    fn duplicate(&self) -> Self {
        Output {
            data: self.data,
            strides: self.strides,
            offset: self.offset,
            borrow: PhantomData,
        }
    }
}
