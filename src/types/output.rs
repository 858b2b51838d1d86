//! Where a kernel writes its answer: [`Emit`] for one sequence (its [`Outputs`], or a callback),
//! [`Rows`] for a run of sequences selected in one call, [`ColumnOutputs`] for sequences read side by side;
//! and [`Job`], what one call of a kernel is given, erased to [`AnyJob`] where the value type stops
//! being a type parameter.

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::types::sequence::{Columns, Sequence};

/// Where an engine reports its answer, rank by rank: straight into one sequence's outputs (every call's
/// walk), or to a callback in batches (the accumulator's offers).
pub(crate) enum Emit<'a, T> {
    Outputs(Outputs<'a, T>),
    /// `each(first_rank, positions)`: `positions[i]` is the position of rank `first_rank + i`. In
    /// batches, so that the callee's work runs in a loop rather than a call each (one call per element
    /// would be most of the time of a full sort of 1M u8).
    Each(&'a mut dyn FnMut(usize, &[usize])),
}

/// Positions per batch handed to [`Emit::Each`] (128 bytes of stack, zeroed for each answer: a larger
/// batch slows short rows such as `moe4096x256_k8`'s).
const BATCH: usize = 16;

impl<T: Copy> Emit<'_, T> {
    /// Reports ranks 0, 1, ... as the elements at `positions` in order: at most K of them for outputs, in
    /// batches for a callback.
    #[inline(always)]
    pub(crate) fn positions(&mut self, mut positions: impl ExactSizeIterator<Item = usize>) {
        match self {
            Emit::Outputs(outputs) => outputs.write_positions(positions),
            Emit::Each(each) => {
                let mut batch = [0usize; BATCH];
                let mut rank = 0;
                loop {
                    let mut len = 0;
                    for (slot, position) in batch.iter_mut().zip(&mut positions) {
                        (*slot, len) = (position, len + 1);
                    }
                    if len == 0 {
                        break;
                    }
                    each(rank, batch.get(..len).unwrap_or_default());
                    rank += len;
                }
            }
        }
    }

    /// Reports that rank `rank` is the element at `position`.
    #[inline(always)]
    pub(crate) fn one(&mut self, rank: usize, position: usize) {
        match self {
            Emit::Outputs(outputs) => outputs.write(rank, position),
            Emit::Each(each) => each(rank, &[position]),
        }
    }
}

/// One sequence's outputs, written by the engine that selects it: its ranks' [`Slots`] from their
/// start. Written in the engine, where the positions are still in registers: handed to the walk's
/// callback instead, through a batch on the stack and an indirect call, they would slow short rows
/// (`moe4096x256_k8`).
pub(crate) struct Outputs<'a, T> {
    input: Sequence<'a, T>,
    slots: Slots<T>,
    borrow: PhantomData<&'a mut [T]>,
}

/// Sequences an engine selects in one call: `count` of them, each `step` elements of the input after
/// the one before (as long as `first`, with its stride and cap), and where their answers go. A run of
/// rows along one dimension other than the axis, or one sequence. One call for a run, where a call a
/// row (the dispatch's checks, the engine's entry and exit, the outputs' handle) adds instructions to
/// every short row (`moe4096x256_k8`).
pub(crate) struct Rows<'a, 'e, T> {
    first: Sequence<'a, T>,
    count: usize,
    step: isize,
    emit: RowsEmit<'e, T>,
    borrow: PhantomData<&'e mut [T]>,
}

/// Where the answers of [`Rows`] go.
enum RowsEmit<'e, T> {
    /// Row `r`'s ranks to `slots` moved `r` times `steps` (values, indices).
    Outputs { slots: Slots<T>, steps: [isize; 2] },
    /// The one row's positions to a callback ([`Emit::Each`]).
    Each(&'e mut dyn FnMut(usize, &[usize])),
}

impl<'a, 'e, T: Copy> Rows<'a, 'e, T> {
    /// `seq` alone, its answer to `emit`, whose outputs (if it writes outputs) are `seq`'s.
    #[inline(always)]
    pub(crate) fn one(seq: &Sequence<'a, T>, emit: &'e mut Emit<'_, T>) -> Self {
        let emit = match emit {
            Emit::Outputs(outputs) => RowsEmit::Outputs {
                slots: outputs.slots,
                steps: [0, 0],
            },
            Emit::Each(each) => RowsEmit::Each(&mut **each),
        };
        Rows {
            first: *seq,
            count: 1,
            step: 0,
            emit,
            borrow: PhantomData,
        }
    }

    /// `count` sequences from `first`, each `step` elements after the one before, whose ranks go to
    /// `slots` moved `steps` (values, indices) a row.
    ///
    /// # Safety
    /// For every `row < count`: `first` moved `row · step` meets [`Sequence::new`]'s precondition, and
    /// `slots` moved `row · steps` meets [`Outputs::new`]'s with it; no two rows share a slot.
    #[inline(always)]
    pub(crate) unsafe fn new(
        first: Sequence<'a, T>,
        count: usize,
        step: isize,
        slots: Slots<T>,
        steps: [isize; 2],
    ) -> Self {
        Rows {
            first,
            count,
            step,
            emit: RowsEmit::Outputs { slots, steps },
            borrow: PhantomData,
        }
    }

    /// The first sequence (every one has its length, stride and cap).
    #[inline(always)]
    pub(crate) fn first(&self) -> &Sequence<'a, T> {
        &self.first
    }

    /// Sequence `row` (`None` from `count` on), and where its answer goes.
    #[inline(always)]
    pub(crate) fn row(&mut self, row: usize) -> Option<(Sequence<'a, T>, Emit<'_, T>)> {
        if row >= self.count {
            return None;
        }
        // SAFETY: row < count: `new`'s precondition (`one`'s row 0 is `first` itself).
        let seq = unsafe { self.first.moved(row as isize * self.step) };
        let emit = match &mut self.emit {
            RowsEmit::Outputs { slots, steps } => {
                // SAFETY: as above, the slots moved `row · steps` meet `Outputs::new`'s precondition with
                // `seq` (`one`'s are the caller's own outputs of `seq`), and are this row's alone.
                Emit::Outputs(unsafe {
                    Outputs::new(seq, slots.moved([row as isize * steps[0], row as isize * steps[1]]))
                })
            }
            RowsEmit::Each(each) => Emit::Each(&mut **each),
        };
        Some((seq, emit))
    }

    /// Writes each row's rank 0 as the element at the position `best` gives for it (K = 1): one loop
    /// over the rows with the index word matched once, where [`row`](Self::row)'s outputs and
    /// [`Emit::one`]'s matches a row cost short rows more than their selection (rows of 2 to 8).
    #[inline(always)]
    pub(crate) fn write_firsts(&mut self, best: impl Fn(&Sequence<'a, T>) -> usize) {
        match &mut self.emit {
            RowsEmit::Outputs { slots, steps } => match slots.indices {
                IndexWords::U32(words) => {
                    Self::write_firsts_by(&self.first, self.count, self.step, *slots, *steps, words, best, |p| {
                        p as u32
                    })
                }
                IndexWords::U64(words) => {
                    Self::write_firsts_by(&self.first, self.count, self.step, *slots, *steps, words, best, |p| {
                        p as u64
                    })
                }
            },
            RowsEmit::Each(each) => {
                for row in 0..self.count {
                    // SAFETY: row < count: `new`'s precondition.
                    let seq = unsafe { self.first.moved(row as isize * self.step) };
                    each(0, &[best(&seq)]);
                }
            }
        }
    }

    /// [`write_firsts`](Self::write_firsts) for one index word `W`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // one private body, inlined into `write_firsts`
    fn write_firsts_by<W>(
        first: &Sequence<'a, T>,
        count: usize,
        step: isize,
        slots: Slots<T>,
        [values_step, indices_step]: [isize; 2],
        indices: NonNull<W>,
        best: impl Fn(&Sequence<'a, T>) -> usize,
        word: impl Fn(usize) -> W,
    ) {
        if slots.k == 0 {
            return;
        }
        let (mut values, mut indices) = (slots.values.as_ptr(), indices.as_ptr());
        for row in 0..count {
            // SAFETY: row < count: `new`'s precondition.
            let seq = unsafe { first.moved(row as isize * step) };
            let position = best(&seq);
            if position < seq.len() {
                // SAFETY: row < count, so `new`'s precondition makes this row's rank-0 slots (the slots
                // moved `row · steps`) writable, and its index word hold the position; position < len.
                unsafe {
                    values.write(seq.get(position));
                    indices.write(word(position));
                }
            }
            values = values.wrapping_offset(values_step);
            indices = indices.wrapping_offset(indices_step);
        }
    }
}

/// Where ranks `0..k` of an answer go: rank `r` of the answer whose slots start at `[v, i]` at
/// `values + v + r · values_step` (the element) and `indices + i + r · indices_step` (its position, as
/// the index type's word). One sequence's answer starts at `[0, 0]`; [`ColumnOutputs`] has one per lane.
#[derive(Clone, Copy)]
pub(crate) struct Slots<T> {
    k: usize,
    values: NonNull<T>,
    values_step: isize,
    indices: IndexWords,
    indices_step: isize,
}

impl<T: Copy> Slots<T> {
    /// The slots of ranks `0..k`, a step a rank from `values` and `indices`.
    #[inline(always)]
    pub(crate) fn new(
        k: usize,
        (values, values_step): (NonNull<T>, isize),
        (indices, indices_step): (IndexWords, isize),
    ) -> Self {
        Slots {
            k,
            values,
            values_step,
            indices,
            indices_step,
        }
    }

    /// The same slots moved `[values, indices]` elements and index words on.
    ///
    /// # Safety
    /// The moved slots are those of an answer the caller may write (see [`Outputs::new`]).
    #[inline(always)]
    unsafe fn moved(self, [values, indices]: [isize; 2]) -> Self {
        Slots {
            // SAFETY: the caller's: the moved slots are in the same output.
            values: unsafe { self.values.offset(values) },
            // SAFETY: as above.
            indices: unsafe { self.indices.offset(indices) },
            ..self
        }
    }

    /// Writes `value`, the element at `position`, as rank `rank` of the answer whose slots start at
    /// `[values_start, indices_start]`.
    ///
    /// # Safety
    /// Both slots can be written (see [`Outputs::new`] and [`ColumnOutputs::new`]), and `position` fits
    /// the index type.
    #[inline(always)]
    unsafe fn write(&self, [values_start, indices_start]: [isize; 2], rank: usize, value: T, position: usize) {
        let rank = rank as isize;
        // SAFETY: the caller's.
        unsafe {
            self.values.offset(values_start + rank * self.values_step).write(value);
            self.indices.write(indices_start + rank * self.indices_step, position);
        }
    }
}

/// The index output's words: positions are written as the index type's word, whose values below its
/// type's largest position are the same bits (`Index::from_position`).
#[derive(Clone, Copy)]
pub(crate) enum IndexWords {
    U32(NonNull<u32>),
    U64(NonNull<u64>),
}

impl IndexWords {
    /// The words `by` words on.
    ///
    /// # Safety
    /// The moved pointer stays within the index output (as `NonNull::offset` requires).
    #[inline(always)]
    pub(crate) unsafe fn offset(self, by: isize) -> Self {
        // SAFETY: the caller's.
        unsafe {
            match self {
                IndexWords::U32(words) => IndexWords::U32(words.offset(by)),
                IndexWords::U64(words) => IndexWords::U64(words.offset(by)),
            }
        }
    }

    /// Writes `position` as the word `at` words on.
    ///
    /// # Safety
    /// That word can be written, and `position` fits the index type.
    #[inline(always)]
    unsafe fn write(self, at: isize, position: usize) {
        // SAFETY: the caller's.
        unsafe {
            match self {
                IndexWords::U32(words) => words.offset(at).write(position as u32),
                IndexWords::U64(words) => words.offset(at).write(position as u64),
            }
        }
    }
}

impl<'a, T: Copy> Outputs<'a, T> {
    /// The outputs of `input`'s first `slots.k`.
    ///
    /// # Safety
    /// For every `rank < slots.k`, rank `rank`'s slots from `[0, 0]` can be written, and nothing else
    /// reads or writes them while the result lives; every position of `input` fits the index type whose
    /// words the slots point at.
    #[inline(always)]
    pub(crate) unsafe fn new(input: Sequence<'a, T>, slots: Slots<T>) -> Self {
        Outputs {
            input,
            slots,
            borrow: PhantomData,
        }
    }

    /// Writes the element at `position` as rank `rank`; nothing where `rank` or `position` is out of
    /// range (no engine reports one: checked all the same, two compares against a write out of bounds).
    #[inline(always)]
    fn write(&mut self, rank: usize, position: usize) {
        debug_assert!(
            rank < self.slots.k && position < self.input.len(),
            "rank {rank} of {}, position {position} of {}",
            self.slots.k,
            self.input.len()
        );
        if rank >= self.slots.k || position >= self.input.len() {
            return;
        }
        // SAFETY: rank < k (`new`'s precondition makes both slots writable, and the index type holds the
        // position); position < len.
        unsafe { self.slots.write([0, 0], rank, self.input.get(position), position) };
    }
}

impl<T: Copy> Outputs<'_, T> {
    /// K: how many ranks these outputs hold.
    #[inline(always)]
    pub(crate) fn k(&self) -> usize {
        self.slots.k
    }

    /// Writes the elements at `positions` as ranks 0, 1, ... (at most K of them: the caller's).
    #[inline(always)]
    pub(crate) fn write_positions(&mut self, positions: impl ExactSizeIterator<Item = usize>) {
        match self.slots.indices {
            IndexWords::U32(words) => self.write_each(positions, words, |position| position as u32),
            IndexWords::U64(words) => self.write_each(positions, words, |position| position as u64),
        }
    }

    /// [`write_positions`](Self::write_positions) for one index word, with both addresses moved a step a
    /// rank: a loop of a dozen instructions an element, where the rank's multiplies, its check and the
    /// word's choice inside it leave its count to the stack.
    #[inline(always)]
    fn write_each<W>(
        &mut self,
        positions: impl ExactSizeIterator<Item = usize>,
        indices: NonNull<W>,
        word: impl Fn(usize) -> W,
    ) {
        debug_assert!(positions.len() <= self.slots.k);
        let (mut values, mut indices) = (self.slots.values.as_ptr(), indices.as_ptr());
        for position in positions {
            debug_assert!(
                position < self.input.len(),
                "position {position} of {}",
                self.input.len()
            );
            if position < self.input.len() {
                // SAFETY: `values` and `indices` are moved by `rank` steps, rank < positions.len() <= k,
                // so `new`'s precondition makes both writable; position < len.
                unsafe {
                    values.write(self.input.get(position));
                    indices.write(word(position));
                }
            }
            values = values.wrapping_offset(self.slots.values_step);
            indices = indices.wrapping_offset(self.slots.indices_step);
        }
    }
}

/// The outputs of neighbouring sequences read side by side, written by the engine that selects them:
/// lane `l`'s rank `r` at its start plus `r` steps, rather than an indirect call of a callback for
/// each element (`axis0_4096x256_k8`). They may be the first of `runs` such runs, evenly spaced: one
/// engine call for all of them, where a run of a few lanes each (a narrow inner extent) had paid a
/// walk step and an engine's entry a run.
pub(crate) struct ColumnOutputs<'a, T> {
    input: Columns<'a, T>,
    slots: Slots<T>,
    starts: LaneStarts<'a>,
    runs: usize,
    /// From one run to the next: input elements, values, index words.
    run_steps: [isize; 3],
}

/// Where each lane's outputs start, from the pointers [`ColumnOutputs`] holds: (values, indices).
#[derive(Clone, Copy)]
pub(crate) enum LaneStarts<'a> {
    /// Lane `l`'s `l` times these on (sequences evenly spaced in the outputs: along a dimension, or a
    /// tile's group of rows).
    Step([isize; 2]),
    /// Lane `l`'s listed (a tile's sequences whose outputs are not evenly spaced).
    Listed(&'a [[isize; 2]]),
}

impl<'a, T: Copy> ColumnOutputs<'a, T> {
    /// The outputs of the first `slots.k` of each sequence of `input`.
    ///
    /// # Safety
    /// For every lane `l < input.count()` (and, listed, below the list's length) with start `[v, i]`, and
    /// every `rank < slots.k`, rank `rank`'s slots from `[v, i]` can be written, and nothing else reads or
    /// writes them while the result lives; every position of `input` fits the index type whose words the
    /// slots point at.
    #[inline(always)]
    pub(crate) unsafe fn new(input: Columns<'a, T>, slots: Slots<T>, starts: LaneStarts<'a>) -> Self {
        ColumnOutputs {
            input,
            slots,
            starts,
            runs: 1,
            run_steps: [0; 3],
        }
    }

    /// These outputs as the first of `runs` runs, run `r`'s input and slots `r` times `steps` (input
    /// elements, values, index words) on.
    ///
    /// # Safety
    /// For every `r < runs`, the input and slots moved `r` steps meet [`new`](Self::new)'s precondition
    /// with these starts, and no two runs share a slot.
    #[inline(always)]
    pub(crate) unsafe fn repeated(self, runs: usize, steps: [isize; 3]) -> Self {
        ColumnOutputs {
            runs,
            run_steps: steps,
            ..self
        }
    }

    /// The sequences these outputs are for (the first run's).
    #[inline(always)]
    pub(crate) fn input(&self) -> &Columns<'a, T> {
        &self.input
    }

    /// Run `run`'s sequences and outputs (`None` from `runs` on), as one run. Its callers take the runs
    /// in turn up to the first not taken whole, in loops of their own: a closure here would be compiled
    /// without the engine's target features, and its intrinsics called rather than inlined.
    #[inline(always)]
    pub(crate) fn run(&self, run: usize) -> Option<Self> {
        if run >= self.runs {
            return None;
        }
        let [input, values, indices] = self.run_steps.map(|step| run as isize * step);
        // SAFETY: run < runs: `repeated`'s precondition (run 0 is the outputs themselves).
        let (input, slots) = unsafe { (self.input.moved(input), self.slots.moved([values, indices])) };
        Some(ColumnOutputs {
            input,
            slots,
            starts: self.starts,
            runs: 1,
            run_steps: [0; 3],
        })
    }

    /// Writes lane `lane`'s element at `position` as its rank `rank`; nothing where one of them is out of
    /// range (no engine reports one: checked all the same, against a write out of bounds).
    #[inline(always)]
    pub(crate) fn write(&mut self, lane: usize, rank: usize, position: usize) {
        let (count, len, k) = (self.input.count(), self.input.len(), self.slots.k);
        debug_assert!(
            lane < count && rank < k && position < len,
            "lane {lane} of {count}, rank {rank} of {k}, position {position} of {len}"
        );
        if lane >= count || rank >= k || position >= len {
            return;
        }
        let start = match self.starts {
            LaneStarts::Step([values, indices]) => [lane as isize * values, lane as isize * indices],
            LaneStarts::Listed(starts) => match starts.get(lane) {
                Some(&start) => start,
                None => return,
            },
        };
        // SAFETY: lane < count (and below the list's length) and rank < k, so `new`'s precondition makes
        // both slots writable (and the index type holds the position); lane < count and position < len
        // for `get`.
        unsafe { self.slots.write(start, rank, self.input.get(lane, position), position) };
    }

    /// Writes rank `rank` of lanes `first..first + positions.len()`, lane `first + l`'s element at
    /// `positions[l]`: the lanes' starts and the index word matched once, not an element at a time
    /// ([`write`](Self::write)'s match and checks had cost short axes and tiles of short rows more than
    /// their selection), evenly spaced lanes in loops of their own.
    #[inline(always)]
    pub(crate) fn write_rank<P: Copy + Into<u64>>(&mut self, rank: usize, first: usize, positions: &[P]) {
        let step =
            |[values, indices]: [isize; 2]| move |lane: usize| Some([lane as isize * values, lane as isize * indices]);
        match (self.starts, self.slots.indices) {
            // Adjacent lanes: steps of 1 known where inlined, a loop with no multiplies.
            (LaneStarts::Step([1, 1]), IndexWords::U32(words)) => {
                self.write_rank_by(rank, first, positions, words, step([1, 1]), |p| p as u32)
            }
            (LaneStarts::Step([1, 1]), IndexWords::U64(words)) => {
                self.write_rank_by(rank, first, positions, words, step([1, 1]), |p| p as u64)
            }
            (LaneStarts::Step(steps), IndexWords::U32(words)) => {
                self.write_rank_by(rank, first, positions, words, step(steps), |p| p as u32)
            }
            (LaneStarts::Step(steps), IndexWords::U64(words)) => {
                self.write_rank_by(rank, first, positions, words, step(steps), |p| p as u64)
            }
            (LaneStarts::Listed(starts), IndexWords::U32(words)) => self.write_rank_by(
                rank,
                first,
                positions,
                words,
                |lane| starts.get(lane).copied(),
                |p| p as u32,
            ),
            (LaneStarts::Listed(starts), IndexWords::U64(words)) => self.write_rank_by(
                rank,
                first,
                positions,
                words,
                |lane| starts.get(lane).copied(),
                |p| p as u64,
            ),
        }
    }

    /// [`write_rank`](Self::write_rank) with one index word `W` and each lane's start from `start`
    /// (`None`: nothing written).
    #[inline(always)]
    fn write_rank_by<P: Copy + Into<u64>, W>(
        &self,
        rank: usize,
        first: usize,
        positions: &[P],
        indices: NonNull<W>,
        start: impl Fn(usize) -> Option<[isize; 2]>,
        word: impl Fn(usize) -> W,
    ) {
        let input = self.input;
        if rank >= self.slots.k || first >= input.count() || input.len() == 0 {
            return;
        }
        // Positions past the end (no engine reports one) are written as the last: a minimum, where a
        // check would be a branch a lane.
        let last = input.len() - 1;
        let positions = &positions[..positions.len().min(input.count() - first)];
        let rank = rank as isize;
        let values = self
            .slots
            .values
            .as_ptr()
            .wrapping_offset(rank * self.slots.values_step);
        let indices = indices.as_ptr().wrapping_offset(rank * self.slots.indices_step);
        for (lane, &position) in (first..).zip(positions) {
            let Some([values_start, indices_start]) = start(lane) else {
                return;
            };
            let position = usize::try_from(position.into()).unwrap_or(usize::MAX).min(last);
            // SAFETY: lane < count (positions were cut to the lanes left) with its start, and rank < k, so
            // `new`'s precondition makes the lane's rank-`rank` slots writable, and its index word hold
            // the position; position <= last < len for `get`.
            unsafe {
                values.wrapping_offset(values_start).write(input.get(lane, position));
                indices.wrapping_offset(indices_start).write(word(position));
            }
        }
    }
}

/// What one call of a kernel is given: a run of rows, or neighbouring sequences side by side.
pub(crate) enum Job<'j, 'a, 'e, T> {
    /// Each of the rows, its answer to its own outputs (or callback).
    Rows(&'j mut Rows<'a, 'e, T>),
    /// The sequences of the outputs' input, one per lane; the kernel says how many it took.
    Columns(&'j mut ColumnOutputs<'e, T>),
}

/// A [`Job`] whose value type is a variant rather than a type parameter: the one place the engines
/// are entered without being compiled again for the caller ([`Element`](crate::types::element)'s
/// sealed `erase`).
// Built and matched only where SIMD engines are compiled; elsewhere the kernels are compiled for the
// caller's own types.
#[cfg_attr(not(simd), allow(dead_code))]
pub(crate) enum AnyJob<'j, 'a, 'e> {
    U8(Job<'j, 'a, 'e, u8>),
    U16(Job<'j, 'a, 'e, u16>),
    U32(Job<'j, 'a, 'e, u32>),
    U64(Job<'j, 'a, 'e, u64>),
    I8(Job<'j, 'a, 'e, i8>),
    I16(Job<'j, 'a, 'e, i16>),
    I32(Job<'j, 'a, 'e, i32>),
    I64(Job<'j, 'a, 'e, i64>),
    F16(Job<'j, 'a, 'e, half::f16>),
    Bf16(Job<'j, 'a, 'e, half::bf16>),
    F32(Job<'j, 'a, 'e, f32>),
    F64(Job<'j, 'a, 'e, f64>),
}
