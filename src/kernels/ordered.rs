//! Rows already in order: a row whose keys never fall, or never rise, is its own answer, found by
//! reading it once. Sorted, reverse-sorted and constant rows with a large K, which a filter passes
//! almost whole to a sort, then cost a read and the outputs' writes.
//!
//! ```text
//! up = every key[i] <= key[i+1],  down = every key[i] >= key[i+1]   // stop once both fail
//! best first (up for Increasing, down for Decreasing): ranks 0..K are positions 0..K
//! best last (the other way): from the end, each run of equal keys in position order (ties: lower first)
//! ```
//! Random rows fail within a few pairs, checked one at a time before an engine is entered
//! ([`may_be_ordered`]); the engine checks every pair in blocks without branches, which its target
//! features vectorise.

use core::ops::Range;

use crate::types::element::{Element, Order};
use crate::types::output::Emit;

/// Elements [`may_be_ordered`] checks a pair at a time: random rows stop there.
const HEAD: usize = 32;
/// Pairs a block checks without a branch.
const BLOCK: usize = 256;

/// Writes the first `k` of `row` through `emit` and returns true if its keys never fall or never rise
/// along it; otherwise returns false, having written nothing. `1 <= k <= row.len()`.
#[inline(always)]
pub(crate) fn select_ordered<T: Element>(row: &[T], k: usize, order: Order, emit: &mut Emit<'_, T>) -> bool {
    let Some(Monotone { up, down, ties }) = monotone(row) else {
        return false;
    };
    if up && down || up == order.is_increasing() {
        emit.positions(0..k);
    } else if !ties {
        emit.positions((row.len() - k..row.len()).rev());
    } else {
        emit.positions(BestLast {
            row,
            run: 0..0,
            unread: row.len(),
            left: k,
        });
    }
    true
}

/// What [`monotone`] found of a row's keys.
struct Monotone {
    /// They never fall.
    up: bool,
    /// They never rise.
    down: bool,
    /// Two neighbours are equal.
    ties: bool,
}

/// Whether the first [`HEAD`] keys of `row` never fall or never rise: a check in the caller's code, before
/// entering an engine for the rest, that random rows fail within a few pairs.
#[inline(always)]
pub(crate) fn may_be_ordered<T: Element>(row: &[T]) -> bool {
    let head = row.get(..HEAD).unwrap_or(row);
    let (mut up, mut down) = (true, true);
    for (a, b) in head.iter().zip(head.iter().skip(1)) {
        let (a, b) = (a.key(), b.key());
        up &= a <= b;
        down &= a >= b;
        if !(up || down) {
            return false;
        }
    }
    true
}

/// Whether the keys of `row` never fall, never rise, and have equal neighbours: `None` once they have
/// both risen and fallen.
#[inline(always)]
fn monotone<T: Element>(row: &[T]) -> Option<Monotone> {
    let (mut up, mut down, mut ties) = (true, true, false);
    // Pair (i, i + 1) for every i, a block of them at a time.
    let mut first = 0;
    while first + 1 < row.len() {
        let end = row.len().min(first + 1 + BLOCK);
        let (lower, upper) = (
            row.get(first..end - 1).unwrap_or_default(),
            row.get(first + 1..end).unwrap_or_default(),
        );
        // Integer flags, not bools: their OR vectorises without packing each compare to a byte.
        let (mut falls, mut rises, mut equal) = (0u32, 0u32, 0u32);
        for (a, b) in lower.iter().zip(upper) {
            let (a, b) = (a.key(), b.key());
            falls |= u32::from(a > b);
            rises |= u32::from(a < b);
            equal |= u32::from(a == b);
        }
        up &= falls == 0;
        down &= rises == 0;
        ties |= equal != 0;
        if !(up || down) {
            return None;
        }
        first = end - 1;
    }
    Some(Monotone { up, down, ties })
}

/// The positions of a row whose best keys are last, best first: from the end, each run of equal keys
/// in position order. `left` of them, at most as many as the row holds.
struct BestLast<'a, T> {
    row: &'a [T],
    /// What remains of the current run.
    run: Range<usize>,
    /// The positions before the current run, not yet reached.
    unread: usize,
    left: usize,
}

impl<T: Element> Iterator for BestLast<'_, T> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        if self.run.is_empty() {
            let last = self.row.get(self.unread.checked_sub(1)?)?.key();
            let before = self.row.get(..self.unread - 1).unwrap_or_default();
            let equal = before.iter().rev().take_while(|x| x.key() == last).count();
            self.run = self.unread - 1 - equal..self.unread;
            self.unread = self.run.start;
        }
        self.left -= 1;
        self.run.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T: Element> ExactSizeIterator for BestLast<'_, T> {}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::kernels::testing::xorshift;
    use crate::types::element::Direction;

    fn positions<T: Element>(row: &[T], k: usize, direction: Direction) -> Option<Vec<usize>> {
        let mut got = vec![usize::MAX; k];
        let mut each = |rank: usize, batch: &[usize]| got[rank..rank + batch.len()].copy_from_slice(batch);
        let mut emit = Emit::Each(&mut each);
        let taken = may_be_ordered(row) && select_ordered(row, k, direction.order::<T::Key>(), &mut emit);
        taken.then_some(got)
    }

    /// The reference's order: keys best first, ties by position.
    fn want<T: Element>(row: &[T], k: usize, direction: Direction) -> Vec<usize> {
        let order = direction.order::<T::Key>();
        let mut all: Vec<usize> = (0..row.len()).collect();
        all.sort_by_key(|&p| (order.key(row[p]), p));
        all.truncate(k);
        all
    }

    /// Runs of equal values rising or falling, every K, both directions, against the reference's order;
    /// rows out of order are declined however late the first pair out of order is.
    #[test]
    fn ordered_rows_are_their_own_answer() {
        let mut random = xorshift(7);
        for len in [1usize, 2, 3, 31, 32, 33, 34, 100, 288, 289, 290, 1000] {
            for runs in [1u64, 2, 5, 1000] {
                let mut rising: Vec<f32> = (0..len).map(|_| (random() % runs) as f32).collect();
                rising.sort_by(f32::total_cmp);
                if len > 1 {
                    rising[0] = -0.0; // ties with +0.0
                }
                let falling: Vec<f32> = rising.iter().rev().copied().collect();
                for row in [&rising, &falling] {
                    for k in [1, 2, len / 2, len - 1, len]
                        .into_iter()
                        .filter(|k| (1..=len).contains(k))
                    {
                        for direction in [Direction::Decreasing, Direction::Increasing] {
                            let got = positions(row, k, direction);
                            assert_eq!(got, Some(want(row, k, direction)), "len {len} runs {runs} k {k}");
                        }
                    }
                }
            }
            if len > 2 {
                for late in [1, len / 2, len - 1] {
                    let mut row: Vec<i64> = (0..len as i64).collect();
                    row.swap(late - 1, late);
                    assert_eq!(
                        positions(&row, 1, Direction::Increasing),
                        None,
                        "len {len}, swapped at {late}"
                    );
                    let mut nothing = |_: usize, _: &[usize]| ();
                    let order = Direction::Increasing.order::<u64>();
                    assert!(
                        !select_ordered(&row, 1, order, &mut Emit::Each(&mut nothing)),
                        "len {len}, swapped at {late}"
                    );
                }
            }
        }
    }
}
