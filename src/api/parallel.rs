//! The operation on rayon's threads (feature `rayon`, which implies `std`).
//!
//! ```text
//! sequences ≥ threads:  split the plan by sequences (TopK::split_at), halves on rayon::join; of fewer
//!                       than FEW_ROWS_PER_THREAD long rows a thread, the remainder (sequences mod
//!                       threads) cut as below where K allows chunks
//! else, long rows, K whose candidates fit an accumulator's stack (K ≤ 128, 64 for 64-bit types):
//!                       per sequence, cut the row into CHUNKS_PER_THREAD chunks per thread, a share of
//!                       them per thread; each thread pushes its share's chunks from the front (half
//!                       of those left at a time, all of them once every other thread has started on
//!                       its own), then the other shares' from the back (one at a time), into an
//!                       Accumulator of its own, and sorts its K; merge the sorted runs
//! else, long rows:      per sequence, cut the row into one piece per thread, select each piece's
//!                       top K in parallel with the single-thread engine, merge the sorted runs
//! else:                 one thread
//! ```
//! This module allocates: scratch per task and the pieces' partial results (rayon allocates anyway).
//! Results are bit-identical to [`crate::topk()`]: accumulators give one call's result however the
//! row was cut and whoever took each chunk, each piece's selection is sorted with ties by position,
//! and the runs' merge orders by key, then by position in the row.
//!
//! Rayon sees the work as trait objects (`Job`), not generic closures: its jobs are then compiled
//! once, in this crate, instead of once per element type, index type and rank in every crate that calls
//! [`topk`] (48 copies each would be most of the command-line example's debug build).

use core::sync::atomic::{AtomicU64, Ordering};

use crate::api::accumulator::{Accumulator, Slot};
use crate::api::request::Request;
use crate::api::topk::{TopK, topk as topk_one_thread};
use crate::types::element::{Direction, Element};
use crate::types::error::{Error, Operand};
use crate::types::index::Index;
use crate::types::view::{View, ViewMut};
use crate::walk::coordinates;

/// Bytes of a piece of a row at least: rows of up to two pieces run on one thread. The second thread
/// must pay for its wake-up, tens of µs, which a row of 2 MiB or less does not repay. Set by rows of
/// 256Ki to 4M f32, f16 and u8 with K = 100 on two threads (`vec1m_k100` among them); see
/// BENCHMARKS.md, decisions.
const MIN_PIECE_BYTES: usize = 1 << 20;

/// Elements of a piece of a row of `T` at least ([`MIN_PIECE_BYTES`]).
fn min_piece<T>() -> usize {
    MIN_PIECE_BYTES / core::mem::size_of::<T>().max(1)
}

/// Tasks of sequences per thread: many, so that the threads that start first take up the work of one
/// still waking (a large part of a 1M-element call) and no thread waits long on the last. Set by
/// `llm32x128k_k50` on two threads. A row is cut into chunks only where accumulators carry each thread's
/// K-th key from chunk to chunk, else into one piece per thread: each piece's filter starts with no
/// threshold, so many pieces of one row (`vec1m_k100`) cost more than they share.
const TASKS_PER_THREAD: usize = 16;

/// Chunks of a long row per thread. A thread woken late (a large part of a 1M-element call) still takes
/// chunks from the back of the others' shares and ends with them, awake for the next call; with one
/// piece per thread it would find nothing left, go back to sleep, and leave every later call on one
/// thread. Each chunk after a thread's first is scanned under that thread's K-th key, so a few chunks
/// cost little more than one piece when both threads are awake (`vec1m_k100` on two threads).
const CHUNKS_PER_THREAD: usize = 4;

/// Long rows a thread, fewer than which the rows left over when they are dealt out whole (one of 3 rows
/// on 2 threads) are each cut into chunks across every thread, where dealt whole the last row keeps one
/// thread busy alone (3 x 1M f32 with K = 100 on two threads).
const FEW_ROWS_PER_THREAD: usize = 4;

/// [`crate::topk()`] on the current rayon pool (install a pool to choose the thread count).
///
/// ```
/// use topk_kernels::{Direction, Request, View, ViewMut, parallel};
/// let x: Vec<f32> = (0..1_000_000).map(|i| ((i * 7) % 1_000_000) as f32).collect(); // a permutation
/// let (mut v, mut i) = (vec![0.0f32; 3], vec![0u32; 3]);
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// pool.install(|| {
///     parallel::topk(Request {
///         input: View::contiguous(&x, [1_000_000])?,
///         axis: 0,
///         k: 3,
///         direction: Direction::Decreasing,
///         values: ViewMut::contiguous(&mut v, [3])?,
///         indices: ViewMut::contiguous(&mut i, [3])?,
///     })
/// })?;
/// assert_eq!(v, [999_999.0, 999_998.0, 999_997.0]);
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub fn topk<T: Element, I: Index, const D: usize>(request: Request<'_, T, I, D>) -> Result<(), Error> {
    let Request {
        input,
        axis,
        k,
        direction,
        mut values,
        mut indices,
    } = request;
    let threads = rayon::current_num_threads();
    let mut plan = TopK::new(Request {
        input,
        axis,
        k,
        direction,
        values: values.reborrow(),
        indices: indices.reborrow(),
    })?;
    // The plan checked the axis.
    let axis = input.layout().axis_index(axis).unwrap_or_default();
    let (sequences, len) = (plan.sequences(), plan.sequence_len());
    let long = len > 2 * min_piece::<T>();
    if threads == 1 || (sequences < threads && !long) {
        return plan.run(&mut vec![0; plan.scratch_len()]);
    }
    // Chunk numbers fit a share's 32-bit halves.
    let chunk_len = len
        .div_ceil(threads * CHUNKS_PER_THREAD)
        .max(min_piece::<T>() / CHUNKS_PER_THREAD)
        .max(len.div_ceil(u32::MAX as usize));
    let chunked = long && crate::api::accumulator::engine_fits::<T>(chunk_len, k);
    let remainder = if chunked && sequences < threads * FEW_ROWS_PER_THREAD {
        sequences % threads
    } else {
        0
    };
    let cut_from = if sequences >= threads {
        let by_rows = sequences - remainder;
        let grain = by_rows.div_ceil(threads * TASKS_PER_THREAD);
        if remainder == 0 {
            return run_split(Box::new(plan), grain);
        }
        let (rows, _) = plan.split_at(by_rows)?;
        run_split(Box::new(rows), grain)?;
        by_rows
    } else {
        0
    };
    // The sequences of a checked plan: every coordinate is inside, with 0 on the axis.
    let outside = Error::Overflow {
        operand: Operand::Input,
    };
    for sequence in cut_from..sequences {
        let coord = coordinates(&input.sizes(), axis, sequence);
        let row = input.line(&coord, axis).ok_or(outside)?;
        let values_line = values.line(&coord, axis).ok_or(outside)?;
        let indices_line = indices.line(&coord, axis).ok_or(outside)?;
        if chunked {
            run_chunks(row, k, direction, threads, chunk_len, values_line, indices_line)?;
        } else {
            run_pieces(row, k, direction, threads, values_line, indices_line)?;
        }
    }
    Ok(())
}

/// Work rayon runs: a part of a plan, or a piece of a long row.
trait Job: Send {
    fn run(&mut self) -> Result<(), Error>;
}

/// A plan as [`run_split`] sees it: one type, whatever the plan's element, index type and rank.
trait Split<'a>: Job {
    fn sequences(&self) -> usize;
    /// The first `mid` sequences and the rest ([`TopK::split_at`]).
    fn split(self: Box<Self>, mid: usize) -> Result<Halves<'a>, Error>;
}

type Halves<'a> = (Box<dyn Split<'a> + 'a>, Box<dyn Split<'a> + 'a>);

impl<T: Element, I: Index, const D: usize> Job for TopK<'_, T, I, D> {
    /// Every sequence, with scratch of its own.
    fn run(&mut self) -> Result<(), Error> {
        TopK::run(self, &mut vec![0; self.scratch_len()])
    }
}

impl<'a, T: Element, I: Index, const D: usize> Split<'a> for TopK<'a, T, I, D> {
    fn sequences(&self) -> usize {
        TopK::sequences(self)
    }

    fn split(self: Box<Self>, mid: usize) -> Result<Halves<'a>, Error> {
        let (low, high) = self.split_at(mid)?;
        Ok((Box::new(low), Box::new(high)))
    }
}

/// Runs `plan` in pieces of about `grain` sequences across the pool: halves on `rayon::join`.
fn run_split<'a>(mut plan: Box<dyn Split<'a> + 'a>, grain: usize) -> Result<(), Error> {
    if plan.sequences() <= grain.max(1) {
        return plan.run();
    }
    let mid = plan.sequences() / 2;
    let (low, high) = plan.split(mid)?;
    let (a, b) = rayon::join(|| run_split(low, grain), || run_split(high, grain));
    a.and(b)
}

/// The chunks of one long row a thread pushes into its own accumulator while any are left: first its own
/// share's from the front (so that, call after call, each thread reads the same part of a row kept in its
/// cache), then the other shares' from the back.
struct ChunkTaker<'a, 's, T: Element> {
    accumulator: Accumulator<'s, T>,
    row: View<'a, T, 1>,
    chunk_len: usize,
    shares: &'a [Share],
    own: usize,
}

impl<T: Element> Job for ChunkTaker<'_, '_, T> {
    fn run(&mut self) -> Result<(), Error> {
        let [len] = self.row.sizes();
        let count = self.shares.len();
        for turn in 0..count {
            let Some(share) = self.shares.get((self.own + turn) % count) else {
                break;
            };
            let own = turn == 0;
            let others_started = || (self.shares.iter().enumerate()).all(|(i, other)| i == self.own || other.started());
            while let Some(chunks) = share.take(own, own && others_started()) {
                let first = chunks.start.saturating_mul(self.chunk_len);
                let taken = chunks
                    .len()
                    .saturating_mul(self.chunk_len)
                    .min(len.saturating_sub(first));
                self.accumulator.push_at(first as u64, part(&self.row, first, taken)?)?;
            }
        }
        // Sorted here, on every thread at once, for the caller's merge of sorted runs.
        self.accumulator.sort_kept();
        Ok(())
    }
}

/// The `len` elements of `row` from position `first` on.
fn part<'a, T: Element>(row: &View<'a, T, 1>, first: usize, len: usize) -> Result<View<'a, T, 1>, Error> {
    row.part(first, len).ok_or(Error::Overflow {
        operand: Operand::Input,
    })
}

/// A thread's share of a row's chunks: the numbers of its first and one past its last chunk not yet
/// taken, in one word, so that its owner (from the front) and the others (from the back) take each chunk
/// once; and the share's first chunk, to tell whether its owner has started.
struct Share {
    left: AtomicU64,
    first: usize,
}

impl Share {
    fn new(chunks: core::ops::Range<usize>) -> Self {
        Share {
            left: AtomicU64::new(((chunks.start as u64) << 32) | chunks.end as u64),
            first: chunks.start,
        }
    }

    /// Whether the share's owner has taken its first chunks, or none are left to take: a thread
    /// whose own share is all that remains unstarted is not waited for.
    fn started(&self) -> bool {
        let (first, end) = Self::bounds(self.left.load(Ordering::Relaxed));
        first as usize > self.first || first >= end
    }

    /// The first chunk left and one past the last, from the share's word.
    fn bounds(word: u64) -> (u64, u64) {
        (word >> 32, word & 0xffff_ffff)
    }

    /// The chunks taken. By another thread, the last one. By the owner, in as few pushes as it can,
    /// since each costs a chunk's own selection, its offers and their merge: every one left where `rest`
    /// (every other thread has started on its own share, and will come for this one's back only once
    /// that is done), else the first half of those left (at least one), so that a thread still waking
    /// finds the last ones (`vec1m_k100` on two threads).
    fn take(&self, front: bool, rest: bool) -> Option<core::ops::Range<usize>> {
        let mut now = self.left.load(Ordering::Relaxed);
        loop {
            let (first, end) = Self::bounds(now);
            if first >= end {
                return None;
            }
            let (next, taken) = if front {
                let count = if rest { end - first } else { (end - first).div_ceil(2) };
                (now + (count << 32), first..first + count)
            } else {
                (now - 1, end - 1..end)
            };
            match self
                .left
                .compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(taken.start as usize..taken.end as usize),
                Err(seen) => now = seen,
            }
        }
    }
}

/// One long row in chunks of `chunk_len`, taken by the threads into an accumulator each, merged and
/// written to `values` and `indices` (K each).
fn run_chunks<T: Element, I: Index>(
    row: View<'_, T, 1>,
    k: usize,
    direction: Direction,
    threads: usize,
    chunk_len: usize,
    values: ViewMut<'_, T, 1>,
    indices: ViewMut<'_, I, 1>,
) -> Result<(), Error> {
    let [len] = row.sizes();
    let chunks = len.div_ceil(chunk_len);
    let per_share = chunks.div_ceil(threads);
    let shares: Vec<Share> = (0..threads)
        .map(|share| Share::new((share * per_share).min(chunks)..((share + 1) * per_share).min(chunks)))
        .collect();
    let mut slots = vec![vec![Slot::EMPTY; Accumulator::<T>::slots_len(k)]; threads];
    let mut takers = Vec::with_capacity(threads);
    for (own, slots) in slots.iter_mut().enumerate() {
        takers.push(ChunkTaker {
            accumulator: Accumulator::new(k, direction, slots)?,
            row,
            chunk_len,
            shares: &shares,
            own,
        });
    }
    let mut jobs: Vec<&mut dyn Job> = takers.iter_mut().map(|taker| taker as &mut dyn Job).collect();
    run_each(&mut jobs)?;
    let runs: Vec<&[Slot<T>]> = takers.iter_mut().map(|taker| taker.accumulator.sort_kept()).collect();
    write_merged(&runs, values, indices);
    Ok(())
}

/// A piece of a long sequence, and once run its own top `kept`, sorted, as slots at their positions in
/// the sequence.
struct Piece<'a, T: Element> {
    /// The piece's first position in the sequence.
    first: usize,
    input: View<'a, T, 1>,
    direction: Direction,
    kept: usize,
    best: Vec<Slot<T>>,
}

impl<T: Element> Job for Piece<'_, T> {
    fn run(&mut self) -> Result<(), Error> {
        let kept = self.kept;
        let (mut values, mut positions) = (vec![T::ZERO; kept], vec![0u64; kept]);
        let request = Request {
            input: self.input,
            axis: 0,
            k: kept,
            direction: self.direction,
            values: ViewMut::contiguous(&mut values, [kept])?,
            indices: ViewMut::contiguous(&mut positions, [kept])?,
        };
        let mut scratch = vec![0; request.scratch_len()];
        topk_one_thread(request, &mut scratch)?;
        let order = self.direction.order::<T::Key>();
        self.best = (values.into_iter().zip(positions))
            .map(|(value, position)| Slot::new(value, self.first as u64 + position, order))
            .collect();
        Ok(())
    }
}

/// One long row: each piece's top K on its own thread, merged, written to `values` and `indices` (K
/// each).
fn run_pieces<T: Element, I: Index>(
    row: View<'_, T, 1>,
    k: usize,
    direction: Direction,
    threads: usize,
    values: ViewMut<'_, T, 1>,
    indices: ViewMut<'_, I, 1>,
) -> Result<(), Error> {
    let [len] = row.sizes();
    let piece_len = len.div_ceil(threads).max(min_piece::<T>());
    let mut pieces = Vec::new();
    for first in (0..len).step_by(piece_len) {
        let piece = piece_len.min(len - first);
        pieces.push(Piece {
            first,
            input: part(&row, first, piece)?,
            direction,
            kept: k.min(piece),
            best: Vec::new(),
        });
    }
    let mut jobs: Vec<&mut dyn Job> = pieces.iter_mut().map(|piece| piece as &mut dyn Job).collect();
    run_each(&mut jobs)?;
    let runs: Vec<&[Slot<T>]> = pieces.iter().map(|piece| piece.best.as_slice()).collect();
    write_merged(&runs, values, indices);
    Ok(())
}

/// Writes the first K (the outputs' length) of `runs`, each sorted (first best, ties by position), to
/// `values` and `indices`, by a merge: the next is the first of the runs' heads in the slots' order.
/// O(K · runs), on the caller's thread after the runs were sorted on theirs; offering every run's slots
/// to one `Accumulator` and sorting its K there would cost a tenth of a call (`vec1m_k100` on two
/// threads), and a merge of the pieces by keys alone would have to break ties by the pieces' order.
fn write_merged<T: Element, I: Index>(runs: &[&[Slot<T>]], values: ViewMut<'_, T, 1>, indices: ViewMut<'_, I, 1>) {
    let [k] = values.sizes();
    let mut heads = vec![0; runs.len()];
    let mut best = Vec::with_capacity(k);
    while best.len() < k {
        let next = runs
            .iter()
            .zip(&heads)
            .enumerate()
            .filter_map(|(run, (slots, &head))| Some((slots.get(head)?, run)))
            .min_by(|(a, _), (b, _)| a.order(b));
        // The runs hold at least K slots in all: `len >= k` (the plan checked it).
        let Some((&slot, run)) = next else {
            break;
        };
        best.push(slot);
        if let Some(head) = heads.get_mut(run) {
            *head += 1;
        }
    }
    values.write_all(best.iter().map(Slot::value));
    // The plan checked that every position of the sequence fits `I`.
    indices.write_all(best.iter().map(|slot| I::from_position(slot.position() as usize)));
}

/// Runs every job across the pool; the first error, if any.
fn run_each(jobs: &mut [&mut dyn Job]) -> Result<(), Error> {
    use rayon::prelude::*;
    jobs.par_iter_mut().try_for_each(|job| job.run())
}
