//! A mergeable top-K of one sequence that arrives in pieces: streamed chunks, or partial results computed
//! on other threads or machines, merged in any order.
//!
//! ```text
//! slots ← caller buffer of 2K (key, position, value)
//! push(chunk at start):  long contiguous chunk: its own first K by the SIMD engine, scanning under
//!                        the K-th kept key once there is one, each offered in rank order (a sorted
//!                        run: merged at once into the K sorted before it)
//!                        otherwise each block of 32: skipped if no key is at or before the K-th kept one,
//!                        else each x offered;
//!                        then, the first time K are kept: sort them (a K-th key for the next chunk)
//! offer x:               if not yet full or (key, position) < K-th kept: append; if 2K: compact
//! merge(other):          push each kept slot of `other`
//! finish:                the K best sorted (merged, or selected and sorted), written as values and
//!                        positions
//! ```
//! Unlike the engines' candidate buffer (`candidates.rs`), pieces may come in any order, so the test
//! compares whole (key, position) pairs instead of keys alone, and slots carry the value itself, since
//! the pieces are gone by the time the result is written. The result equals one call on the whole
//! sequence, bit for bit, however the sequence was cut and in whatever order the pieces were merged.

use core::cmp::Ordering;

use crate::api::topk::min_scratch_len;
use crate::dispatch::engine::Engine;
use crate::dispatch::isa::Kernel;
use crate::dispatch::select::select_in_words;
use crate::dispatch::strategy;
use crate::kernels::Isa;
use crate::types::element::{Direction, Element, Key, Order};
use crate::types::error::{Error, Operand};
use crate::types::index::Index;
use crate::types::output::Emit;
use crate::types::sequence::Sequence;
use crate::types::view::{View, ViewMut};

/// Scratch words on the stack for [`Accumulator::push`]'s engine (2 KiB: K up to 128, 64 for 64-bit keys).
const STACK_WORDS: usize = 256;

/// Whether [`Accumulator::push`]'s engine has room on the stack for a chunk of `len` with `k`.
pub(crate) fn engine_fits<T: Element>(len: usize, k: usize) -> bool {
    min_scratch_len::<T>(len, k) <= STACK_WORDS
}

/// Elements [`Accumulator::push`] tests at once against the K-th kept key before offering any.
const BLOCK: usize = 32;

/// One kept element: its key, its position in the whole sequence and its value.
#[derive(Clone, Copy, Debug)]
pub struct Slot<T> {
    key: u64,
    position: u64,
    value: T,
}

impl<T: Element> Slot<T> {
    /// A placeholder to fill buffers with (`[Slot::EMPTY; N]` or `vec![Slot::EMPTY; n]`).
    pub const EMPTY: Slot<T> = Slot {
        key: 0,
        position: 0,
        value: T::ZERO,
    };

    /// `value` at `position`, keyed for `order`.
    pub(crate) fn new(value: T, position: u64, order: Order) -> Self {
        Slot {
            key: order.key(value),
            position,
            value,
        }
    }

    pub(crate) fn value(&self) -> T {
        self.value
    }

    pub(crate) fn position(&self) -> u64 {
        self.position
    }

    /// Which of two slots comes first: the smaller key, then the lower position.
    #[inline(always)]
    pub(crate) fn order(&self, other: &Self) -> Ordering {
        (self.key, self.position).cmp(&(other.key, other.position))
    }
}

/// The running top-K of one sequence. Pieces pushed or merged in any order give the same result as one
/// call on the whole sequence.
///
/// ```
/// use topk_kernels::{Accumulator, Direction, Slot, View, ViewMut};
/// let data = [3u16, 9, 1, 9, 4, 7, 9, 0];
/// // Two shards, merged the "wrong" way round: the result is the same as one call.
/// let (mut a_slots, mut b_slots) = ([Slot::EMPTY; 6], [Slot::EMPTY; 6]);
/// let mut a = Accumulator::new(3, Direction::Decreasing, &mut a_slots)?;
/// let mut b = Accumulator::new(3, Direction::Decreasing, &mut b_slots)?;
/// b.push_at(4, View::contiguous(&data[4..], [4])?)?;
/// a.push(View::contiguous(&data[..4], [4])?)?;
/// b.merge(&a)?;
/// let (mut values, mut indices) = ([0u16; 3], [0u32; 3]);
/// b.finish(ViewMut::contiguous(&mut values, [3])?, ViewMut::contiguous(&mut indices, [3])?)?;
/// assert_eq!((values, indices), ([9, 9, 9], [1, 3, 6]));
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub struct Accumulator<'s, T: Element> {
    slots: &'s mut [Slot<T>],
    len: usize,
    k: usize,
    order: Order,
    /// Whether the buffer has been compacted, so that `slots[k - 1]` is the K-th best so far.
    full: bool,
    /// The slots known to be in order: `slots[..sorted.0]`, and `slots[sorted.0..sorted.1]` as a
    /// second run (the engine reports a chunk's selection in order), so that the K best come from a
    /// merge of the two rather than a selection and a sort. `(0, 0)` once anything else was appended.
    sorted: (usize, usize),
    /// Elements pushed so far (not counting merged ones twice).
    seen: u64,
    /// Where `push` continues.
    next_position: u64,
}

impl<'s, T: Element> Accumulator<'s, T> {
    /// Slots [`Accumulator::new`] needs for `k`: `2k`.
    pub fn slots_len(k: usize) -> usize {
        k.saturating_mul(2)
    }

    /// An empty accumulator keeping the first `k` elements in `direction`, in `slots` (at least `2k`).
    pub fn new(k: usize, direction: Direction, slots: &'s mut [Slot<T>]) -> Result<Self, Error> {
        let needed = Self::slots_len(k);
        if slots.len() < needed {
            return Err(Error::Scratch {
                needed,
                given: slots.len(),
            });
        }
        Ok(Accumulator {
            slots: &mut slots[..needed],
            len: 0,
            k,
            order: direction.order::<T::Key>(),
            full: false,
            sorted: (0, 0),
            seen: 0,
            next_position: 0,
        })
    }

    /// Number of elements pushed (merged accumulators included).
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Appends the next piece of the sequence: its positions continue where the last `push` ended.
    pub fn push(&mut self, chunk: View<'_, T, 1>) -> Result<(), Error> {
        self.push_at(self.next_position, chunk)
    }

    /// Adds the piece of the sequence that starts at position `start`. Pieces may come in any order;
    /// the caller keeps their positions distinct (a position given twice counts twice).
    ///
    /// Contiguous chunks are first cut to their own top K by the fastest engine (K up to 128, 64 for
    /// 64-bit types, with its candidates in 2 KiB of stack): the first chunk when it is long enough, and
    /// once the K-th best key so far is known, chunks of 1024 elements on, scanned under that key as one
    /// scan of the whole sequence would be (longer chunks come closer to one call's speed). Other chunks
    /// are offered in blocks of 32 elements, those with no key at or before the K-th skipped whole by a
    /// test compiled for the widest vectors this CPU has, several times cheaper than offering each
    /// element.
    pub fn push_at(&mut self, start: u64, chunk: View<'_, T, 1>) -> Result<(), Error> {
        let [len] = chunk.sizes();
        let end = start.checked_add(len as u64).ok_or(Error::Overflow {
            operand: Operand::Input,
        })?;
        let before = self.len;
        if len < BLOCK {
            // No whole block: nothing to vectorize or select first, and choosing would cost more than
            // the offers (a push of one element through `Engine` costs several times its offer).
            Engine::Portable.run(OfferEach {
                accumulator: &mut *self,
                start,
                chunk: &chunk,
            });
            self.appended(before, false);
        } else if !self.push_through_engine(start, &chunk) {
            self.offer_each(start, &chunk);
            self.appended(before, false);
        }
        let (sorted, runs_end) = self.sorted;
        if (!self.full && self.len >= self.k) || (sorted >= self.k && sorted < runs_end) {
            // A K-th key as soon as there are K: the next chunk is scanned under it (two chunks of 500k
            // f32 with K = 100 then cost little more than one push). And a chunk's selection merged
            // at once into the K sorted before it, so that the next one is a second run again.
            self.sort_kept();
        }
        self.seen += len as u64;
        self.next_position = self.next_position.max(end);
        Ok(())
    }

    /// Offers every element of `chunk`, the first at position `start`, through
    /// [`offer_blocks`](Self::offer_blocks) compiled for the widest vectors this CPU has.
    fn offer_each(&mut self, start: u64, chunk: &View<'_, T, 1>) {
        Engine::widest().run(OfferEach {
            accumulator: self,
            start,
            chunk,
        });
    }

    /// Offers the `len` elements `value_at(0..len)`, the first at position `start`. Once there is a K-th
    /// kept key, blocks of [`BLOCK`] (`block_at(position)`: the elements from `position` on) whose keys
    /// are all beyond it are skipped whole: the test has no branch per element, so the compiler makes it
    /// vector compares, and random data offers one element in a few hundred instead of every one.
    /// `value_at` and `block_at` are `None` only outside the chunk (never here): such a block is offered
    /// element by element.
    #[inline(always)]
    fn offer_blocks(
        &mut self,
        start: u64,
        len: usize,
        value_at: impl Fn(usize) -> Option<T>,
        block_at: impl Fn(usize) -> Option<[T; BLOCK]>,
    ) {
        let offer_range = |accumulator: &mut Self, positions: core::ops::Range<usize>| {
            for position in positions {
                if let Some(value) = value_at(position) {
                    accumulator.offer_value_at(value, start + position as u64);
                }
            }
        };
        // No threshold until the first compaction: one at a time.
        let mut position = 0;
        while !self.full && position < len {
            offer_range(self, position..position + 1);
            position += 1;
        }
        while len - position >= BLOCK {
            if block_at(position).is_none_or(|block| self.may_enter(&block)) {
                offer_range(self, position..position + BLOCK);
            }
            position += BLOCK;
        }
        offer_range(self, position..len);
    }

    /// Whether any key of `block` is at or before the K-th kept key (the buffer is full): only those can
    /// enter, depending on their positions. At the key's own width and in its own direction, so that
    /// 32-bit keys fill 32-bit lanes.
    #[inline(always)]
    fn may_enter(&self, block: &[T; BLOCK]) -> bool {
        let Some(kth) = self.slots.get(self.k.wrapping_sub(1)) else {
            return true;
        };
        let limit = T::Key::narrow(kth.key ^ self.order.mask());
        if self.order.is_increasing() {
            block.iter().fold(false, |any, value| any | (value.key() <= limit))
        } else {
            block.iter().fold(false, |any, value| any | (value.key() >= limit))
        }
    }

    /// Offers only the chunk's own first K, selected by the fastest engine this CPU has (its candidates
    /// on the stack), instead of every element. Returns false, having offered nothing, where offering
    /// every element is as fast or the candidates do not fit: short or strided chunks ([`strategy::chunk_through_engine`]), K
    /// over `STACK_WORDS / 2` (a quarter of that for 64-bit keys).
    fn push_through_engine(&mut self, start: u64, chunk: &View<'_, T, 1>) -> bool {
        let ([len], [stride]) = (chunk.sizes(), chunk.layout().strides());
        let k = self.k;
        let needed = min_scratch_len::<T>(len, k);
        let cap = self.cap_for(start);
        if cap == Some(0) {
            // K of the best key, all before the chunk: nothing in it can enter.
            return true;
        }
        if k == 0 || !strategy::chunk_through_engine(len, k, cap.is_some(), stride == 1) || !engine_fits::<T>(len, k) {
            return false;
        }
        let engine = Engine::widest();
        let (offset, order) = (chunk.layout().offset() as isize, self.order);
        let before = self.len;
        let mut next_rank = Some(0);
        // SAFETY: the view's constructor proved `offset + position · stride` one of its elements for every
        // `position < len`.
        let seq = unsafe { Sequence::from_ptr(chunk.data(), offset, stride, len) };
        let seq = cap.map_or(seq, |cap| seq.with_cap(cap));
        let mut offer_positions = |first_rank: usize, positions: &[usize]| {
            // In order while the ranks come one batch after another.
            next_rank = next_rank
                .filter(|&next| next == first_rank)
                .map(|next| next + positions.len());
            for &position in positions {
                if let Some(value) = chunk.get(position) {
                    self.offer_value_at(value, start + position as u64);
                }
            }
        };
        let mut scratch = [0u64; STACK_WORDS];
        select_in_words(
            engine,
            &seq,
            k,
            order,
            &mut scratch[..needed],
            &mut Emit::Each(&mut offer_positions),
        );
        self.appended(before, next_rank.is_some());
        true
    }

    /// Notes that `slots[before..len]` were appended, in order where `ordered`: a run after one sorted
    /// run is a second, anything else leaves the order unknown.
    fn appended(&mut self, before: usize, ordered: bool) {
        self.sorted = match self.sorted {
            _ if self.len == before => self.sorted,
            _ if !ordered => (0, 0),
            (0, 0) if before == 0 => (self.len, self.len),
            (first, end) if first == end && end == before => (first, self.len),
            _ => (0, 0),
        };
    }

    /// Keys at or above this cannot enter from a chunk starting at `start` (`None` until the first
    /// compaction, or where every key can): below the K-th kept key, or at it for a chunk before its
    /// position, whose equal keys would come first.
    fn cap_for(&self, start: u64) -> Option<u64> {
        let kth = self.slots.get(self.k.checked_sub(1)?).filter(|_| self.full)?;
        if start > kth.position {
            return Some(kth.key);
        }
        let largest = u64::MAX >> (64 - <T::Key as Key>::BITS);
        (kth.key < largest).then(|| kth.key + 1)
    }

    /// Folds in another accumulator of the same sequence (K and direction must match).
    pub fn merge(&mut self, other: &Accumulator<'_, T>) -> Result<(), Error> {
        if other.k != self.k || other.order != self.order {
            return Err(Error::Merge {
                k: self.k,
                other_k: other.k,
            });
        }
        let before = self.len;
        for &slot in &other.slots[..other.len] {
            self.offer(slot);
        }
        self.appended(before, false);
        self.seen += other.seen;
        self.next_position = self.next_position.max(other.next_position);
        Ok(())
    }

    /// Writes the first K (sorted, ties by position) to `values` and `indices`, both of size K.
    ///
    /// Fewer than K elements seen is [`Error::K`]; a position that does not fit `I` is
    /// [`Error::IndexType`]. Nothing is written on error.
    pub fn finish<I: Index>(mut self, values: ViewMut<'_, T, 1>, indices: ViewMut<'_, I, 1>) -> Result<(), Error> {
        let k = self.k;
        if self.seen < k as u64 {
            return Err(Error::K {
                k,
                len: self.seen as usize,
                axis: 0,
            });
        }
        for (operand, [actual]) in [(Operand::Values, values.sizes()), (Operand::Indices, indices.sizes())] {
            if actual != k {
                return Err(Error::OutputSize {
                    operand,
                    dim: 0,
                    expected: k,
                    actual,
                });
            }
        }
        let best = self.sort_kept();
        if let Some(last) = best.iter().map(Slot::position).max()
            && last > I::MAX_POSITION
        {
            return Err(Error::IndexType {
                len: (last as usize).saturating_add(1),
                max: I::MAX_POSITION,
            });
        }
        values.write_all(best.iter().map(Slot::value));
        indices.write_all(best.iter().map(|s| I::from_position(s.position() as usize)));
        Ok(())
    }

    /// Keeps only the best min(K, kept) slots, sorted (first best, ties by position), and returns them:
    /// what [`finish`](Self::finish) writes, or one sorted run of a merge (`parallel`'s threads sort
    /// their own before the caller merges the runs).
    pub(crate) fn sort_kept(&mut self) -> &[Slot<T>] {
        let (k, len) = (self.k, self.len);
        match self.sorted {
            (first, end) if end == len && first == len => {}
            // Two runs, the first at least K long: the K best are a merge of their heads, written from
            // the back into `slots[..k]`, which the second run lies beyond.
            (first, end) if end == len && first >= k => merge_heads(&mut self.slots[..len], first, k),
            _ => {
                let kept = &mut self.slots[..len];
                if len > k && k > 0 {
                    kept.select_nth_unstable_by(k - 1, Slot::order);
                }
                let kept = kept.len().min(k);
                self.slots[..kept].sort_unstable_by(Slot::order);
            }
        }
        if len >= k && k > 0 {
            (self.len, self.full) = (k, true);
        }
        self.sorted = (self.len, self.len);
        &self.slots[..self.len]
    }

    #[inline(always)]
    fn offer_value_at(&mut self, value: T, position: u64) {
        self.offer(Slot::new(value, position, self.order));
    }

    #[inline(always)]
    fn offer(&mut self, slot: Slot<T>) {
        if self.full && slot.order(&self.slots[self.k - 1]).is_ge() {
            return;
        }
        if let Some(free) = self.slots.get_mut(self.len) {
            *free = slot;
            self.len += 1;
        }
        if self.len == self.slots.len() {
            // 2K slots, K of them kept: room for K more.
            self.compact();
        }
    }

    /// Keeps the K best of the slots, the K-th of them at `slots[k - 1]`. Needs `len >= k`.
    fn compact(&mut self) {
        let Some(kth) = self.k.checked_sub(1) else {
            return;
        };
        let kept = &mut self.slots[..self.len];
        if kth < kept.len() {
            kept.select_nth_unstable_by(kth, Slot::order);
            self.len = self.k;
            self.full = true;
            self.sorted = (0, 0);
        }
    }
}

/// Puts the first `k` of the two sorted runs `slots[..first]` and `slots[first..]` (`first >= k`) in
/// order into `slots[..k]`: the run heads that make the K best are counted from the front, then merged
/// from the back, where every write lands at or after the first run's next unread slot and before the
/// second run. O(K) where a selection and a sort of the 2K cost O(K log K).
fn merge_heads<T: Element>(slots: &mut [Slot<T>], first: usize, k: usize) {
    let (mut a, mut b) = (0, first);
    for _ in 0..k.min(slots.len()) {
        let head = if a < first { slots.get(a) } else { None };
        let take_b = match (head, slots.get(b)) {
            (Some(x), Some(y)) => y.order(x).is_lt(),
            (head, _) => head.is_none(),
        };
        if take_b { b += 1 } else { a += 1 }
    }
    // `a` of the first run and `b - first` of the second make the K best; merge them from the back.
    let (mut a, mut b, mut write) = (a, b, a + (b - first));
    while b > first {
        let (Some(&x), Some(&y)) = (a.checked_sub(1).and_then(|i| slots.get(i)), slots.get(b - 1)) else {
            // The first run's heads are all placed: the second's go before them.
            break;
        };
        write -= 1;
        if y.order(&x).is_lt() {
            a -= 1;
            slots[write] = x;
        } else {
            b -= 1;
            slots[write] = y;
        }
    }
    while b > first {
        write -= 1;
        b -= 1;
        slots[write] = slots[b];
    }
}

/// [`Accumulator::offer_blocks`] over a chunk, as work for [`Engine::run`]: the block test compiled for
/// the widest vectors this CPU has (AVX-512's take half SSE2's time an element). A contiguous chunk and
/// a strided one are two instances: only the first loads a block as a vector.
struct OfferEach<'a, 's, 'c, 'd, T: Element> {
    accumulator: &'a mut Accumulator<'s, T>,
    start: u64,
    chunk: &'c View<'d, T, 1>,
}

impl<T: Element> Kernel for OfferEach<'_, '_, '_, '_, T> {
    type Output = ();
    #[inline(always)]
    fn run<I: Isa>(self) {
        let (accumulator, start, chunk) = (self.accumulator, self.start, self.chunk);
        let ([len], [stride]) = (chunk.sizes(), chunk.layout().strides());
        if stride == 1
            && let Some(row) = chunk.as_slice()
        {
            let block_at = |position: usize| row.get(position..)?.first_chunk().copied();
            accumulator.offer_blocks(start, len, |position| row.get(position).copied(), block_at);
        } else {
            let value_at = |position: usize| chunk.get(position);
            let block_at = |position: usize| {
                let mut block = [T::ZERO; BLOCK];
                for (slot, at) in block.iter_mut().zip(position..) {
                    *slot = value_at(at)?;
                }
                Some(block)
            };
            accumulator.offer_blocks(start, len, value_at, block_at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk selected by the engine and the same chunk offered element by element leave the same
    /// result, the reference's (here under miri too: the engine reads the chunk with unchecked loads).
    #[test]
    fn engine_and_offers_agree() {
        let data: [i32; 700] = core::array::from_fn(|i| (i as i32 * 7919) % 101 - 50);
        let (k, cut) = (8, 600);
        assert!(
            strategy::chunk_through_engine(cut, k, false, true)
                && !strategy::chunk_through_engine(data.len() - cut, k, true, true)
        );
        let run = |through_engine: bool| {
            let mut slots = [Slot::EMPTY; 16];
            let mut acc = Accumulator::new(k, Direction::Decreasing, &mut slots).unwrap();
            let (head, tail) = data.split_at(cut);
            let head = View::contiguous(head, [cut]).unwrap();
            if through_engine {
                assert!(acc.push_through_engine(0, &head));
            } else {
                acc.offer_each(0, &head);
            }
            acc.push_at(cut as u64, View::contiguous(tail, [tail.len()]).unwrap())
                .unwrap();
            let (mut values, mut indices) = ([0i32; 8], [0u32; 8]);
            acc.finish(
                ViewMut::contiguous(&mut values, [k]).unwrap(),
                ViewMut::contiguous(&mut indices, [k]).unwrap(),
            )
            .unwrap();
            (values, indices)
        };
        let (mut values, mut indices) = ([0i32; 8], [0u32; 8]);
        crate::api::naive::topk(crate::api::request::Request {
            input: View::contiguous(&data, [data.len()]).unwrap(),
            axis: 0,
            k,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut values, [k]).unwrap(),
            indices: ViewMut::contiguous(&mut indices, [k]).unwrap(),
        })
        .unwrap();
        assert_eq!(run(true), (values, indices));
        assert_eq!(run(false), (values, indices));
    }

    /// Every pair of short sorted runs (keys 0-2, so with ties) and every K up to the first run's length,
    /// against a sort of both.
    #[test]
    fn merge_heads_takes_the_first_k_of_two_runs() {
        let pairs = |slots: &[Slot<u32>]| slots.iter().map(|s| (s.key, s.position)).collect::<Vec<_>>();
        // Runs of up to 5 (0.6 million merges) natively, of up to 2 under miri.
        let longest = if cfg!(miri) { 2 } else { 5 };
        for first in 1..=longest {
            for second in 0..=longest {
                for keys in 0..3u32.pow((first + second) as u32) {
                    let mut slots: Vec<Slot<u32>> = (0..first + second)
                        .map(|p| Slot {
                            key: u64::from(keys / 3u32.pow(p as u32) % 3),
                            position: p as u64 * 7 % 11,
                            value: 0,
                        })
                        .collect();
                    slots[..first].sort_unstable_by(Slot::order);
                    slots[first..].sort_unstable_by(Slot::order);
                    let mut expected = slots.clone();
                    expected.sort_unstable_by(Slot::order);
                    for k in 1..=first {
                        let mut merged = slots.clone();
                        merge_heads(&mut merged, first, k);
                        assert_eq!(
                            pairs(&merged[..k]),
                            pairs(&expected[..k]),
                            "first {first} second {second} k {k}"
                        );
                    }
                }
            }
        }
    }
}
