//! A mergeable top-K of one sequence that arrives in pieces: streamed chunks, or partial results computed
//! on other threads or machines, merged in any order.
//!
//! ```text
//! slots ← caller buffer of 2K (key, position, value)
//! push(chunk at start):  for each x:  if not yet full or (key, position) < K-th kept: append; if full: compact
//! merge(other):          push each kept slot of `other`
//! finish:                select and sort the K best, write values and positions
//! ```
//! Unlike the engines' candidate buffer (`candidates.rs`), pieces may come in any order, so the test
//! compares whole (key, position) pairs instead of keys alone, and slots carry the value itself, since
//! the pieces are gone by the time the result is written. The result equals one call on the whole
//! sequence, bit for bit, however the sequence was cut and in whatever order the pieces were merged.

use core::cmp::Ordering;

use crate::element::{Direction, Element, ordered_key};
use crate::error::{Error, Tensor};
use crate::index::Index;
use crate::view::{View, ViewMut};

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

    #[inline(always)]
    fn order(&self, other: &Self) -> Ordering {
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
    flip: u64,
    /// Whether the buffer has been compacted, so that `slots[k - 1]` is the K-th best so far.
    full: bool,
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
            flip: direction.flip::<T::Key>(),
            full: false,
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
    pub fn push_at(&mut self, start: u64, chunk: View<'_, T, 1>) -> Result<(), Error> {
        let [len] = chunk.sizes();
        let end = start
            .checked_add(len as u64)
            .ok_or(Error::Overflow { tensor: Tensor::Input })?;
        let [stride] = chunk.layout().strides();
        let data = chunk.data();
        let mut address = chunk.layout().offset() as isize;
        for position in start..end {
            // The view's constructor proved every address of its one dimension inside `data`.
            if let Some(&value) = data.get(address as usize) {
                self.offer(Slot {
                    key: ordered_key(value, self.flip),
                    position,
                    value,
                });
            }
            // Wrapping: the step after the last element may leave isize (a one-element view may have any
            // stride) and is never used (fuzz finding 3).
            address = address.wrapping_add(stride);
        }
        self.seen += len as u64;
        self.next_position = self.next_position.max(end);
        Ok(())
    }

    /// Folds in another accumulator of the same sequence (K and direction must match).
    pub fn merge(&mut self, other: &Accumulator<'_, T>) -> Result<(), Error> {
        if other.k != self.k || other.flip != self.flip {
            return Err(Error::Merge {
                k: self.k,
                other_k: other.k,
            });
        }
        for &slot in &other.slots[..other.len] {
            self.offer(slot);
        }
        self.seen += other.seen;
        self.next_position = self.next_position.max(other.next_position);
        Ok(())
    }

    /// Writes the first K (sorted, ties by position) to `values` and `indices`, both of size K.
    ///
    /// Fewer than K elements seen is [`Error::K`]; a position that does not fit `I` is
    /// [`Error::IndexType`]. Nothing is written on error.
    pub fn finish<I: Index>(self, values: ViewMut<'_, T, 1>, indices: ViewMut<'_, I, 1>) -> Result<(), Error> {
        let k = self.k;
        if self.seen < k as u64 {
            return Err(Error::K {
                k,
                len: self.seen as usize,
                axis: 0,
            });
        }
        for (tensor, [actual]) in [(Tensor::Values, values.sizes()), (Tensor::Indices, indices.sizes())] {
            if actual != k {
                return Err(Error::OutputSize {
                    tensor,
                    dim: 0,
                    expected: k,
                    actual,
                });
            }
        }
        let kept = &mut self.slots[..self.len];
        if kept.len() > k && k > 0 {
            kept.select_nth_unstable_by(k - 1, Slot::order);
        }
        let best = &mut kept[..k];
        best.sort_unstable_by(Slot::order);
        if let Some(last) = best.iter().map(|s| s.position).max()
            && last > I::MAX_POSITION
        {
            return Err(Error::IndexType {
                len: (last as usize).saturating_add(1),
                max: I::MAX_POSITION,
            });
        }
        write_line(values, best.iter().map(|s| s.value));
        write_line(indices, best.iter().map(|s| I::from_position(s.position as usize)));
        Ok(())
    }

    /// Offers one element already selected elsewhere (a piece's own top K), at its sequence position.
    #[cfg(feature = "rayon")]
    pub(crate) fn offer_value(&mut self, value: T, position: u64) {
        self.offer(Slot {
            key: ordered_key(value, self.flip),
            position,
            value,
        });
        self.seen += 1;
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
        if self.len == self.slots.len() && self.k > 0 {
            // 2K slots, K of them kept: room for K more.
            self.slots.select_nth_unstable_by(self.k - 1, Slot::order);
            self.len = self.k;
            self.full = true;
        }
    }
}

/// Writes `items` along the one dimension of `view`.
fn write_line<T>(view: ViewMut<'_, T, 1>, items: impl Iterator<Item = T>) {
    let [stride] = view.layout.strides();
    let mut address = view.layout.offset() as isize;
    for item in items {
        // Validated: every coordinate's address is inside the slice.
        if let Some(out) = view.data.get_mut(address as usize) {
            *out = item;
        }
        // Wrapping, as in `push_at`: the step after the last item is never used (fuzz finding 3).
        address = address.wrapping_add(stride);
    }
}
