//! The operation on rayon's threads (feature `rayon`, which implies `std`).
//!
//! ```text
//! sequences ≥ threads:  split the plan by sequences (TopK::split_at), halves on rayon::join
//! else, long rows:      per sequence, cut the row into one piece per thread, select each piece's
//!                       top K in parallel with the single-thread engine, merge them in an Accumulator
//! else:                 one thread
//! ```
//! This module allocates: scratch per task and the pieces' partial results (rayon allocates anyway).
//! Results are bit-identical to [`crate::topk()`]: the accumulator's merge is exact in any order.

use crate::accumulator::{Accumulator, Slot};
use crate::element::{Direction, Element};
use crate::error::Error;
use crate::index::Index;
use crate::plan::coordinates;
use crate::topk::{TopK, topk as topk_one_thread};
use crate::view::{View, ViewMut};

/// A piece's own top K: values and positions within the piece.
type Partial<T> = (Vec<T>, Vec<u64>);

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
            return run_split(plan, grain);
        }
        (plan.sequences(), plan.sequence_len())
    };
    debug_assert!(len >= 2 * MIN_PIECE);
    for sequence in 0..sequences {
        run_pieces(&input, axis, k, direction, &mut values, &mut indices, sequence, threads)?;
    }
    Ok(())
}

/// Runs `plan` in pieces of about `grain` sequences across the pool.
fn run_split<T: Element, I: Index, const D: usize>(mut plan: TopK<'_, T, I, D>, grain: usize) -> Result<(), Error> {
    if plan.sequences() <= grain.max(1) {
        return plan.run(&mut vec![0; plan.scratch_len()]);
    }
    let mid = plan.sequences() / 2;
    let (low, high) = plan.split_at(mid)?;
    let (a, b) = rayon::join(|| run_split(low, grain), || run_split(high, grain));
    a.and(b)
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
    let starts: Vec<usize> = (0..len).step_by(piece_len).collect();
    let partials: Vec<Result<Partial<T>, Error>> = rayon_map(&starts, |&first| {
        let piece = piece_len.min(len - first);
        let view = View::new(
            input.data(),
            [piece],
            [stride],
            (start + first as isize * stride) as usize,
        )?;
        let kept = k.min(piece);
        let (mut v, mut p) = (vec![T::ZERO; kept], vec![0u64; kept]);
        let mut scratch = vec![0; crate::scratch_len::<T>(piece, kept)];
        topk_one_thread(
            view,
            0,
            kept,
            direction,
            ViewMut::contiguous(&mut v, [kept])?,
            ViewMut::contiguous(&mut p, [kept])?,
            &mut scratch,
        )?;
        Ok((v, p))
    });
    let mut slots = vec![Slot::EMPTY; Accumulator::<T>::slots_len(k)];
    let mut merged = Accumulator::new(k, direction, &mut slots)?;
    for (&first, partial) in starts.iter().zip(partials) {
        let (v, p) = partial?;
        for (value, position) in v.into_iter().zip(p) {
            merged.offer_value(value, first as u64 + position);
        }
    }
    let values_at = values.layout().address(&coord) as usize;
    let indices_at = indices.layout().address(&coord) as usize;
    let values_step = values.layout().strides()[axis];
    let indices_step = indices.layout().strides()[axis];
    merged.finish(
        values.line(k, values_step, values_at)?,
        indices.line(k, indices_step, indices_at)?,
    )
}

/// `items.map(f)` across the pool, results in order.
fn rayon_map<A: Sync, B: Send>(items: &[A], f: impl Fn(&A) -> B + Sync + Send) -> Vec<B> {
    use rayon::prelude::*;
    items.par_iter().map(f).collect()
}
