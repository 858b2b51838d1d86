//! Short rows (up to 512 elements) with small K: everything below the prefix bound collected in one
//! pass, then ordered once by the sorting network.

use crate::candidates::Sorter;
use crate::element::{Element, ordered_key};
use crate::entry::{Emit, Entry, report};
use crate::vector::{MAX_LANES, Vector};

use super::lanes::{KeyMap, Lanes, Prepared, UNROLL};

/// Elements below its cap the short-row path collects before it leaves the row to the filter.
const SHORT_CAP: usize = 64;

/// A row the prefix bound read whole, `cap` one above that bound: every element below `cap` collected
/// in one pass, then ordered by the network. Returns false, having reported nothing, when more than
/// `SHORT_CAP` are below it (ties with the bound; the filter's running threshold handles those).
///
/// ```text
/// for each block: for each lane below cap: entries[count++] = (key, position)   // no pool to update
/// sort entries[..count] by the network; report the first K
/// ```
/// The bound leaves about K + 3 elements of a random row of 256 with K = 8, so this is one compare per
/// vector and a store per survivor, where the sorted pool spent a 16-slot insertion on each.
#[inline(always)]
pub(super) fn short_row<V: Vector, S: Sorter, T: Element, E: Entry, const KIND: u8>(
    row: &[T],
    k: usize,
    flip: u64,
    map: &KeyMap,
    cap: u64,
    emit: &mut Emit<'_>,
) -> bool {
    let n = row.len();
    let block = V::LANES * UNROLL;
    let mut entries = [E::LAST; SHORT_CAP];
    let mut count = 0;
    let mut collect = |position: usize, value: T| {
        let key = ordered_key(value, flip);
        // The lane test may pass more than the keys below cap (f16 and bf16 keyed in the lanes do not).
        if key < cap {
            let Some(slot) = entries.get_mut(count) else {
                return false;
            };
            *slot = E::new(key, position);
            count += 1;
        }
        true
    };
    if n < block {
        for (position, &value) in row.iter().enumerate() {
            if !collect(position, value) {
                return false;
            }
        }
    } else {
        let lanes = Lanes::<V>::new(map, flip);
        let prepared = Prepared::<V>::new::<KIND>(cap, flip, map);
        if V::COMPRESSES && n > block {
            // The passing positions compressed a vector at a time, then one loop over them: no branch per
            // block on how many passed (each a likely misprediction). On the Xeon: 8-12% off f32, f16 and i32
            // rows of 256 and 512 with K = 8 or 16, 4% on rows of 128; 4% slower on u8 rows of 256 with K = 4
            // (few pass); rows of one block (one such branch) were 6% slower so, and keep the loop below.
            let mut found = [0u32; SHORT_CAP + MAX_LANES];
            let mut passed = 0;
            let mut position = 0;
            while position < n {
                let (start, bits) = prepared.block_at::<T, KIND>(row, position, &lanes);
                for v in 0..UNROLL {
                    if passed > SHORT_CAP {
                        return false;
                    }
                    let lane_bits = bits >> (v * V::LANES) & (u64::MAX >> (64 - V::LANES));
                    let positions = V::iota()
                        .add(V::splat((start + v * V::LANES) as u64))
                        .compress(lane_bits);
                    // SAFETY: passed <= SHORT_CAP, so `found` has room for the LANES <= MAX_LANES u32 lanes
                    // (COMPRESSES vectors have 32-bit lanes).
                    unsafe { positions.store(found.as_mut_ptr().add(passed)) };
                    passed += lane_bits.count_ones() as usize;
                }
                position = start + block;
            }
            for &p in found.get(..passed).unwrap_or_default() {
                let p = p as usize;
                if !row.get(p).is_some_and(|&value| collect(p, value)) {
                    return false;
                }
            }
        } else {
            let mut position = 0;
            while position < n {
                let (start, mut bits) = prepared.block_at::<T, KIND>(row, position, &lanes);
                while bits != 0 {
                    let p = start + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if !collect(p, row[p]) {
                        return false;
                    }
                }
                position = start + block;
            }
        }
    }
    // The slots past `count` hold `LAST`: sorting a whole number of vectors needs no padding.
    let collected = entries
        .get_mut(..count.next_multiple_of(MAX_LANES / 2))
        .unwrap_or_default();
    S::sort(collected, k);
    report(collected.get(..k).unwrap_or_default(), emit);
    true
}
