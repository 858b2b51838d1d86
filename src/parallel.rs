//! The operation on rayon's threads (feature `rayon`, which implies `std`).
//!
//! ```text
//! sequences ≥ threads:  split the plan by sequences (TopK::split_at), halves on rayon::join
//! else, long rows:      per sequence, cut the row into one piece per thread, select each piece's
//!                       top K in parallel with the single-thread engine, merge the sorted selections
//! else:                 one thread
//! ```
//! This module allocates: scratch per task and the pieces' partial results (rayon allocates anyway).
//! Results are bit-identical to [`crate::topk()`]: each piece's selection is sorted with ties by
//! position, and the merge takes the earlier piece's head on equal keys.
//!
//! Rayon sees the work as trait objects (`Job`), not generic closures: its jobs are then compiled
//! once, in this crate, instead of once per element type, index type and rank in every crate that calls
//! [`topk`] (they were 60% of the command-line example's debug LLVM IR: 1.03 M lines, 48 copies each).

use crate::element::{Direction, Element, ordered_key};
use crate::error::Error;
use crate::index::Index;
use crate::plan::coordinates;
use crate::topk::{TopK, topk as topk_one_thread};
use crate::view::{View, ViewMut};

/// Rows shorter than this are not worth cutting into pieces.
const MIN_PIECE: usize = 1 << 15;

/// Tasks of sequences per thread: many, so that the threads that start first take up the work of one
/// still waking (36-58 µs on this project's VM, a third of a 1M-element call) and no thread waits long
/// on the last. On 2 threads, 32 x 128k f32 with K = 50: 0.357 ms (median of five) with 4 tasks per
/// thread, 0.329 with 16. A row's pieces are not cut finer than one per thread: each piece's filter
/// starts with no threshold, and 1M f32 with K = 100 in 31 pieces took 0.25 ms against 0.14 in 2.
const TASKS_PER_THREAD: usize = 16;

/// [`crate::topk()`] on the current rayon pool (install a pool to choose the thread count).
///
/// ```
/// use topk_kernels::{Direction, View, ViewMut, parallel};
/// let x: Vec<f32> = (0..1_000_000).map(|i| ((i * 7) % 1_000_000) as f32).collect(); // a permutation
/// let (mut v, mut i) = (vec![0.0f32; 3], vec![0u32; 3]);
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// pool.install(|| {
///     parallel::topk(
///         View::contiguous(&x, [1_000_000])?,
///         0,
///         3,
///         Direction::Decreasing,
///         ViewMut::contiguous(&mut v, [3])?,
///         ViewMut::contiguous(&mut i, [3])?,
///     )
/// })?;
/// assert_eq!(v, [999_999.0, 999_998.0, 999_997.0]);
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub fn topk<T: Element, I: Index, const D: usize>(
    input: View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    mut values: ViewMut<'_, T, D>,
    mut indices: ViewMut<'_, I, D>,
) -> Result<(), Error> {
    let threads = rayon::current_num_threads();
    let (sequences, len) = {
        let mut plan = TopK::new(input, axis, k, direction, values.reborrow(), indices.reborrow())?;
        if threads == 1 || (plan.sequences() < threads && plan.sequence_len() < 2 * MIN_PIECE) {
            return plan.run(&mut vec![0; plan.scratch_len()]);
        }
        if plan.sequences() >= threads {
            let grain = plan.sequences().div_ceil(threads * TASKS_PER_THREAD);
            return run_split(Box::new(plan), grain);
        }
        (plan.sequences(), plan.sequence_len())
    };
    debug_assert!(len >= 2 * MIN_PIECE);
    for sequence in 0..sequences {
        run_pieces(&input, axis, k, direction, &mut values, &mut indices, sequence, threads)?;
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

/// A piece of a long sequence, and once run its own top K: values, and positions within the piece.
struct Piece<'a, T: Element> {
    /// The piece's first position in the sequence.
    first: usize,
    input: View<'a, T, 1>,
    direction: Direction,
    values: Vec<T>,
    positions: Vec<u64>,
}

impl<T: Element> Job for Piece<'_, T> {
    fn run(&mut self) -> Result<(), Error> {
        let (len, kept) = (self.input.sizes()[0], self.values.len());
        let mut scratch = vec![0; crate::scratch_len::<T>(len, kept)];
        topk_one_thread(
            self.input,
            0,
            kept,
            self.direction,
            ViewMut::contiguous(&mut self.values, [kept])?,
            ViewMut::contiguous(&mut self.positions, [kept])?,
            &mut scratch,
        )
    }
}

/// One long sequence: each piece's top K on its own thread, merged, written.
#[allow(clippy::too_many_arguments)]
fn run_pieces<T: Element, I: Index, const D: usize>(
    input: &View<'_, T, D>,
    axis: usize,
    k: usize,
    direction: Direction,
    values: &mut ViewMut<'_, T, D>,
    indices: &mut ViewMut<'_, I, D>,
    sequence: usize,
    threads: usize,
) -> Result<(), Error> {
    let sizes = input.sizes();
    let len = sizes[axis];
    let coord = coordinates(&sizes, axis, sequence);
    let stride = input.layout().strides()[axis];
    let start = input.layout().address(&coord);
    let piece_len = len.div_ceil(threads).max(MIN_PIECE);
    let mut pieces = Vec::new();
    for first in (0..len).step_by(piece_len) {
        let piece = piece_len.min(len - first);
        let kept = k.min(piece);
        pieces.push(Piece {
            first,
            input: View::new(
                input.data(),
                [piece],
                [stride],
                (start + first as isize * stride) as usize,
            )?,
            direction,
            values: vec![T::ZERO; kept],
            positions: vec![0; kept],
        });
    }
    let mut jobs: Vec<&mut dyn Job> = pieces.iter_mut().map(|piece| piece as &mut dyn Job).collect();
    run_each(&mut jobs)?;
    let (best_values, best_positions) = merge_sorted(&pieces, k, direction.flip::<T::Key>());
    let values_at = values.layout().address(&coord) as usize;
    let indices_at = indices.layout().address(&coord) as usize;
    let values_step = values.layout().strides()[axis];
    let indices_step = indices.layout().strides()[axis];
    values.line(k, values_step, values_at)?.write_all(best_values);
    // The plan checked that every position of the sequence fits `I`.
    indices.line(k, indices_step, indices_at)?.write_all(
        best_positions
            .into_iter()
            .map(|position| I::from_position(position as usize)),
    );
    Ok(())
}

/// The first `k` of the pieces' selections, each sorted (first best, ties by position), by a merge:
/// the next is the best of the pieces' heads, the earlier piece's on equal keys (its positions come
/// first). O(k · pieces), where an `Accumulator` selected among the `k · pieces` entries and sorted the
/// first `k` again (5-7 µs of a 60-100 µs call on 1M f32 with K = 100 on two threads).
fn merge_sorted<T: Element>(pieces: &[Piece<'_, T>], k: usize, flip: u64) -> (Vec<T>, Vec<u64>) {
    let mut heads = vec![0; pieces.len()];
    let (mut values, mut positions) = (Vec::with_capacity(k), Vec::with_capacity(k));
    while values.len() < k {
        let next = pieces
            .iter()
            .zip(&heads)
            .enumerate()
            .filter_map(|(p, (piece, &head))| Some((ordered_key(*piece.values.get(head)?, flip), p)))
            .min();
        // The pieces hold at least k elements in all: `len >= k` (the plan checked it).
        let Some((piece, head)) = next.and_then(|(_, p)| Some((pieces.get(p)?, heads.get_mut(p)?))) else {
            break;
        };
        let (Some(&value), Some(&position)) = (piece.values.get(*head), piece.positions.get(*head)) else {
            break;
        };
        values.push(value);
        positions.push(piece.first as u64 + position);
        *head += 1;
    }
    (values, positions)
}

/// Runs every job across the pool; the first error, if any.
fn run_each(jobs: &mut [&mut dyn Job]) -> Result<(), Error> {
    use rayon::prelude::*;
    jobs.par_iter_mut().try_for_each(|job| job.run())
}
