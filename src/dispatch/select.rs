//! The entries the walk and the accumulator select through: a run of rows, one sequence, or
//! neighbouring sequences side by side, on an engine. Each goes through [`run`], which erases the value
//! type (where SIMD engines are compiled) so that the kernels are compiled once, in this crate.

use core::marker::PhantomData;

use crate::dispatch::engine::Engine;
use crate::dispatch::isa::Kernel;
use crate::dispatch::strategy::{self, Row};
use crate::kernels::entry::{Buffer, Entry, packs_in_one_word};
use crate::kernels::row::{self, Method};
use crate::kernels::{Isa, bisect, count, scalar, side};
use crate::types::element::{Element, Key};
use crate::types::output::{Emit, Job, Rows, SideOutputs};
use crate::types::sequence::{Sequence, Side};

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
    flip: u64,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    select_rows(engine, &mut Rows::one(seq, emit), k, flip, buffer);
}

/// [`select`] for each of `rows`.
#[inline]
pub(crate) fn select_rows<T: Element, E: Entry>(
    engine: Engine,
    rows: &mut Rows<'_, '_, T>,
    k: usize,
    flip: u64,
    buffer: &mut [E],
) {
    run(engine, Job::Rows(rows), k, flip, E::buffer(buffer));
}

/// [`select`] with its candidates in `words` (at least [`scratch_len`](crate::scratch_len)`::<T>(seq.len(),
/// k)`): one word an entry where a key and a position pack into one, two otherwise.
#[inline]
pub(crate) fn select_in_words<T: Element>(
    engine: Engine,
    seq: &Sequence<'_, T>,
    k: usize,
    flip: u64,
    words: &mut [u64],
    emit: &mut Emit<'_, T>,
) {
    if packs_in_one_word(<T::Key as Key>::BITS, seq.len()) {
        select(engine, seq, k, flip, u64::from_words(words), emit);
    } else {
        select(engine, seq, k, flip, <[u64; 2]>::from_words(words), emit);
    }
}

/// Takes the first `done` sequences of `side` (one per lane, each taken whole or not at all: `done` is
/// 0 or a multiple of the engine's lane count) and writes each one's first `k` to `emit`; `k >= 1`.
/// K above [`SIDE_MAX_K`](super::strategy::SIDE_MAX_K) needs a candidate buffer per lane in `buffer` (see
/// `TopK::scratch_len`): with fewer, nothing is taken.
#[inline]
pub(crate) fn select_side<T: Element>(
    engine: Engine,
    side: &Side<'_, T>,
    k: usize,
    flip: u64,
    buffer: Buffer<'_>,
    emit: &mut SideOutputs<'_, T>,
) -> usize {
    run(engine, Job::Side(side, emit), k, flip, buffer)
}

/// Runs `job`: where SIMD engines are compiled, through [`run_any`], not generic over the value type
/// (the kernels are compiled once, here, for every type); elsewhere (firmware) in the caller's crate,
/// where only the types and paths its calls reach are linked.
#[inline(always)]
fn run<T: Element>(engine: Engine, job: Job<'_, '_, '_, T>, k: usize, flip: u64, buffer: Buffer<'_>) -> usize {
    #[cfg(simd)]
    return run_any(engine, T::erase(job), k, flip, buffer);
    #[cfg(not(simd))]
    return run_typed(engine, job, k, flip, buffer);
}

/// The one dispatch over the value type.
#[cfg(simd)]
#[inline(never)]
fn run_any(engine: Engine, job: AnyJob<'_, '_, '_>, k: usize, flip: u64, buffer: Buffer<'_>) -> usize {
    match job {
        AnyJob::U8(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::U16(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::U32(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::U64(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::I8(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::I16(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::I32(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::I64(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::F16(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::Bf16(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::F32(job) => run_typed(engine, job, k, flip, buffer),
        AnyJob::F64(job) => run_typed(engine, job, k, flip, buffer),
    }
}

fn run_typed<T: Element>(engine: Engine, job: Job<'_, '_, '_, T>, k: usize, flip: u64, buffer: Buffer<'_>) -> usize {
    match (job, buffer) {
        (Job::Rows(rows), Buffer::Packed(words)) => select_rows_here(engine, rows, k, flip, words),
        (Job::Rows(rows), Buffer::Wide(pairs)) => select_rows_here(engine, rows, k, flip, pairs),
        (Job::Side(side, emit), buffer) if engine.has_sides() => engine.run(SelectSide {
            side,
            k,
            flip,
            buffer,
            emit,
        }),
        (Job::Side(..), _) => 0,
    }
}

/// Each of `rows` by the algorithm the strategy gives them ([`strategy::row`]).
fn select_rows_here<T: Element, E: Entry>(
    engine: Engine,
    rows: &mut Rows<'_, '_, T>,
    k: usize,
    flip: u64,
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
    let mut row = 0;
    while let Some((seq, mut emit)) = rows.row(row) {
        row += 1;
        let emit = &mut emit;
        if plan.bisect
            && let Some(row) = seq.contiguous()
            && engine.run(SelectBisected {
                row,
                k,
                flip,
                emit: &mut *emit,
                entry: PhantomData::<E>,
            })
        {
            continue;
        }
        match (plan.then, seq.contiguous()) {
            (Row::Count, _) => count::select(&seq, k, flip, buffer, emit),
            (Row::Vectors(method), Some(row)) => engine.run(SelectRow {
                row,
                method: &method,
                k,
                flip,
                cap: seq.cap(),
                buffer: &mut *buffer,
                emit,
            }),
            (Row::Scalar | Row::Vectors(_), _) => scalar::select(&seq, k, flip, buffer, emit),
        }
    }
    0
}

/// One contiguous row on the engine's vectors ([`row::select`]).
struct SelectRow<'x, 'e, T, E> {
    row: &'x [T],
    method: &'x Method,
    k: usize,
    flip: u64,
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
            self.flip,
            self.cap,
            self.buffer,
            self.emit,
        );
    }
}

/// A row of 8- or 16-bit keys under its exact K-th key ([`bisect::select_bisected`]): whether it was
/// taken.
struct SelectBisected<'x, 'a, 'e, T, E> {
    row: &'a [T],
    k: usize,
    flip: u64,
    emit: &'x mut Emit<'e, T>,
    entry: PhantomData<E>,
}

impl<T: Element, E: Entry> Kernel for SelectBisected<'_, '_, '_, T, E> {
    type Output = bool;
    #[inline(always)]
    fn run<I: Isa>(self) -> bool {
        bisect::select_bisected::<I::V32, I::Sorter, T, E>(self.row, self.k, self.flip, self.emit)
    }
}

/// Neighbouring sequences side by side ([`side::select_side`]): how many were taken.
struct SelectSide<'x, 'a, 'b, 'e, T> {
    side: &'x Side<'a, T>,
    k: usize,
    flip: u64,
    buffer: Buffer<'b>,
    emit: &'x mut SideOutputs<'e, T>,
}

impl<T: Element> Kernel for SelectSide<'_, '_, '_, '_, T> {
    type Output = usize;
    #[inline(always)]
    fn run<I: Isa>(self) -> usize {
        side::select_side::<I::V32, I::V64, I::Sorter, T>(self.side, self.k, self.flip, self.buffer, self.emit)
    }
}
