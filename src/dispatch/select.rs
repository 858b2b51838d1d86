//! The entries the walk and the accumulator select through: a run of rows, one sequence, or
//! neighbouring sequences side by side, on an engine. Each goes through [`run`], which erases the value
//! type (where SIMD engines are compiled) so that the kernels are compiled once, in this crate.

use core::marker::PhantomData;

use crate::dispatch::engine::Engine;
use crate::dispatch::isa::Kernel;
use crate::dispatch::strategy::{self, ColumnMethod, GATHERED_MAX_LEN, Row, RowPlan};
use crate::kernels::entry::{Buffer, Entry, needs_wide_entries, packs_in_one_word};
use crate::kernels::lanes::from_bits;
use crate::kernels::row::{self, Method};
use crate::kernels::{Isa, bisect, columns, count, ordered, scalar};
use crate::types::element::Order;
use crate::types::element::{Element, Key};
use crate::types::output::{ColumnOutputs, Emit, Job, Rows};
use crate::types::sequence::Sequence;

#[cfg(simd)]
use crate::types::output::AnyJob;

/// Reports, through `emit` ([`Emit`]), the first `k` positions of `seq` in the order of `flip`.
///
/// `buffer` holds `candidates::capacity(seq.len(), k)` entries and `1 <= k <= seq.len()`.
#[inline]
pub(crate) fn select<T: Element, E: Entry>(
    engine: Engine,
    seq: &Sequence<'_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    select_rows(engine, &mut Rows::one(seq, emit), k, order, buffer);
}

/// [`select`] for each of `rows`.
#[inline]
pub(crate) fn select_rows<T: Element, E: Entry>(
    engine: Engine,
    rows: &mut Rows<'_, '_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
) {
    run(engine, Job::Rows(rows), k, order, E::buffer(buffer));
}

/// [`select`] with its candidates in `words` (at least [`scratch_len`](crate::scratch_len)`::<T>(seq.len(),
/// k)`): one word an entry where a key and a position pack into one, two otherwise.
#[inline]
pub(crate) fn select_in_words<T: Element>(
    engine: Engine,
    seq: &Sequence<'_, T>,
    k: usize,
    order: Order,
    words: &mut [u64],
    emit: &mut Emit<'_, T>,
) {
    if packs_in_one_word(<T::Key as Key>::BITS, seq.len()) {
        select(engine, seq, k, order, u64::from_words(words), emit);
    } else {
        select(engine, seq, k, order, <[u64; 2]>::from_words(words), emit);
    }
}

/// Takes the first `done` sequences of `emit`'s input (one per lane, each taken whole or not at all: in
/// each run, all of it, none, or a multiple of the engine's lane count), and of the runs after it where
/// `emit` is [`repeated`](ColumnOutputs::repeated), up to the first run not taken whole, and writes each
/// one's first `k` to `emit`; `k >= 1`.
/// K above [`COLUMNS_MAX_K`](super::strategy::COLUMNS_MAX_K) needs a candidate buffer per lane in `buffer` (see
/// `TopK::scratch_len`): with fewer, nothing is taken.
#[inline]
pub(crate) fn select_columns<T: Element>(
    engine: Engine,
    k: usize,
    order: Order,
    buffer: Buffer<'_>,
    emit: &mut ColumnOutputs<'_, T>,
) -> usize {
    run(engine, Job::Columns(emit), k, order, buffer)
}

/// Runs `job`: where SIMD engines are compiled, through [`run_any`], not generic over the value type
/// (the kernels are compiled once, here, for every type); elsewhere (firmware) in the caller's crate,
/// where only the types and paths its calls reach are linked.
#[inline(always)]
fn run<T: Element>(engine: Engine, job: Job<'_, '_, '_, T>, k: usize, order: Order, buffer: Buffer<'_>) -> usize {
    #[cfg(simd)]
    return run_any(engine, T::erase(job), k, order, buffer);
    #[cfg(not(simd))]
    return run_typed(engine, job, k, order, buffer);
}

/// The one dispatch over the value type.
#[cfg(simd)]
#[inline(never)]
fn run_any(engine: Engine, job: AnyJob<'_, '_, '_>, k: usize, order: Order, buffer: Buffer<'_>) -> usize {
    match job {
        AnyJob::U8(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::U16(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::U32(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::U64(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::I8(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::I16(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::I32(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::I64(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::F16(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::Bf16(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::F32(job) => run_typed(engine, job, k, order, buffer),
        AnyJob::F64(job) => run_typed(engine, job, k, order, buffer),
    }
}

fn run_typed<T: Element>(engine: Engine, job: Job<'_, '_, '_, T>, k: usize, order: Order, buffer: Buffer<'_>) -> usize {
    // Where every sequence's candidates pack into one word (keys of 32 bits or less, a 32-bit `usize`),
    // the paths of two-word entries are unreachable, and a constant here keeps them out of the build.
    let buffer = match buffer {
        Buffer::Wide(pairs) if !needs_wide_entries(<T::Key as Key>::BITS) => Buffer::Packed(pairs.as_flattened_mut()),
        buffer => buffer,
    };
    match (job, buffer) {
        (Job::Rows(rows), Buffer::Packed(words)) => select_rows_here(engine, rows, k, order, words),
        (Job::Rows(rows), Buffer::Wide(pairs)) => select_rows_here(engine, rows, k, order, pairs),
        (Job::Columns(emit), buffer) if strategy::SIMD_ENGINES && engine.has_vectors() => {
            engine.run(SelectColumns { k, order, buffer, emit })
        }
        (Job::Columns(_), _) => 0,
    }
}

/// Each of `rows` by the algorithm the strategy gives them ([`strategy::row`]).
fn select_rows_here<T: Element, E: Entry>(
    engine: Engine,
    rows: &mut Rows<'_, '_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
) -> usize {
    let first = rows.first();
    let facts = strategy::Rows {
        data_type: T::DATA_TYPE,
        len: first.len(),
        k,
        stride: first.stride(),
        capped: first.cap().is_some(),
    };
    let plan = strategy::row(&strategy::capabilities(engine), &facts);
    // A running best alone (short rows, whose plan checks and outputs a row had cost more than the
    // row): one loop that writes each row's answer. A constant test too: firmware keeps one loop.
    const FIRST_BEST: RowPlan = RowPlan {
        ordered: false,
        bisect: false,
        gather: false,
        then: Row::FirstBest,
    };
    if strategy::SIMD_ENGINES && plan == FIRST_BEST {
        rows.write_firsts(|seq| scalar::first_best(seq, order));
    } else if strategy::SIMD_ENGINES && plan.gather {
        select_gathered_rows(engine, &plan, rows, k, order, buffer);
    } else {
        let mut row = 0;
        while let Some((seq, mut emit)) = rows.row(row) {
            row += 1;
            select_row(engine, &plan, &seq, k, order, buffer, &mut emit);
        }
    }
    0
}

/// Each of `rows` copied onto the stack and selected there by `plan` ([`RowPlan::gather`]). Out of
/// line: the copy's 4 KiB are in this frame only, not in every call's.
#[inline(never)]
fn select_gathered_rows<T: Element, E: Entry>(
    engine: Engine,
    plan: &RowPlan,
    rows: &mut Rows<'_, '_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
) {
    let mut copy = [from_bits::<T>(0); GATHERED_MAX_LEN];
    let mut row = 0;
    while let Some((seq, mut emit)) = rows.row(row) {
        row += 1;
        // A row the copy does not hold falls to the scalar engine in place (the plan's vector paths
        // ask for a contiguous one).
        let seq = seq.gathered(&mut copy).unwrap_or(seq);
        select_row(engine, plan, &seq, k, order, buffer, &mut emit);
    }
}

/// One row of [`select_rows_here`] by `plan`.
#[inline(always)]
fn select_row<T: Element, E: Entry>(
    engine: Engine,
    plan: &RowPlan,
    seq: &Sequence<'_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    // A constant test too: where SIMD engines are not (firmware), the check stays out of the build.
    if strategy::SIMD_ENGINES
        && plan.ordered
        && let Some(row) = seq.contiguous()
        && ordered::may_be_ordered(row)
        && engine.run(SelectOrdered {
            row,
            k,
            order,
            emit: &mut *emit,
        })
    {
        return;
    }
    if plan.bisect
        && let Some(row) = seq.contiguous()
        && engine.run(SelectBisected {
            row,
            k,
            order,
            emit: &mut *emit,
            entry: PhantomData::<E>,
        })
    {
        return;
    }
    match (plan.then, seq.contiguous()) {
        (Row::Count, _) => count::select(seq, k, order, buffer, emit),
        (Row::FirstBest, _) => emit.one(0, scalar::first_best(seq, order)),
        (Row::Vectors(method), Some(row)) if strategy::SIMD_ENGINES => engine.run(SelectRow {
            row,
            method: &method,
            k,
            order,
            cap: seq.cap(),
            buffer,
            emit,
        }),
        (Row::Scalar | Row::Vectors(_), _) => scalar::select(seq, k, order, buffer, emit),
    }
}

/// One contiguous row on the engine's vectors ([`row::select`]).
struct SelectRow<'x, 'e, T, E> {
    row: &'x [T],
    method: &'x Method,
    k: usize,
    order: Order,
    cap: Option<u64>,
    buffer: &'x mut [E],
    emit: &'x mut Emit<'e, T>,
}

impl<T: Element, E: Entry> Kernel for SelectRow<'_, '_, T, E> {
    type Output = ();
    #[inline(always)]
    fn run<I: Isa>(self) {
        row::select::<I::V32, I::V64, I::Sorter, T, E>(
            self.row,
            self.method,
            self.k,
            self.order,
            self.cap,
            self.buffer,
            self.emit,
        );
    }
}

/// A row already in order ([`ordered::select_ordered`]): whether it was.
struct SelectOrdered<'x, 'a, 'e, T> {
    row: &'a [T],
    k: usize,
    order: Order,
    emit: &'x mut Emit<'e, T>,
}

impl<T: Element> Kernel for SelectOrdered<'_, '_, '_, T> {
    type Output = bool;
    #[inline(always)]
    fn run<I: Isa>(self) -> bool {
        ordered::select_ordered(self.row, self.k, self.order, self.emit)
    }
}

/// A row of 8- or 16-bit keys under its exact K-th key ([`bisect::select_bisected`]): whether it was
/// taken.
struct SelectBisected<'x, 'a, 'e, T, E> {
    row: &'a [T],
    k: usize,
    order: Order,
    emit: &'x mut Emit<'e, T>,
    entry: PhantomData<E>,
}

impl<T: Element, E: Entry> Kernel for SelectBisected<'_, '_, '_, T, E> {
    type Output = bool;
    #[inline(always)]
    fn run<I: Isa>(self) -> bool {
        bisect::select_bisected::<I::V32, I::Sorter, T, E>(self.row, self.k, self.order, self.emit)
    }
}

/// Neighbouring sequences side by side ([`columns::select_columns`]): how many were taken.
struct SelectColumns<'x, 'b, 'e, T> {
    k: usize,
    order: Order,
    buffer: Buffer<'b>,
    emit: &'x mut ColumnOutputs<'e, T>,
}

impl<T: Element> Kernel for SelectColumns<'_, '_, '_, T> {
    type Output = usize;
    #[inline(always)]
    fn run<I: Isa>(mut self) -> usize {
        match strategy::columns(self.k, self.emit.input().len()) {
            ColumnMethod::FirstBest => columns::first_best_of_columns(self.order, self.emit),
            ColumnMethod::Slots => {
                // Each run in turn, up to the first not taken whole.
                let mut done = 0;
                let mut run = 0;
                while let Some(mut emit) = self.emit.run(run) {
                    run += 1;
                    let taken = columns::select_columns::<I::V32, I::V64, I::Sorter, T>(
                        self.k,
                        self.order,
                        self.buffer.reborrow(),
                        &mut emit,
                    );
                    done += taken;
                    if taken < emit.input().count() {
                        break;
                    }
                }
                done
            }
        }
    }
}
