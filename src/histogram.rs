//! Counting selection for 8- and 16-bit keys, when K is a large part of the row.
//!
//! A threshold filter is linear only while few elements pass it; with K a large part of the row most
//! elements do, and the cost becomes the candidate buffer's compactions and the final sort of K
//! (10-20 ns per element on 1M u8 with K = 500k). Keys of 8 or 16 bits have few enough values to count
//! instead: no comparison at all, and the output comes out sorted.
//!
//! ```text
//! 8-bit keys (two passes over the row):
//!     count[key]                                   // 256 counters
//!     kth = the key where the running count reaches K; quota = K - (elements below kth)
//!     next[key] = rank of key's first element      // prefix sums; K past kth
//!     for each element in position order: if next[key] < K: buffer[next[key]++] = position
//!                                                  // a counting sort: ties stay in position order,
//!                                                  // kth's bucket stops at its quota
//!     report buffer[..K]
//! 16-bit keys (three passes over the row, one over the K selected):
//!     count[high byte]                             → top = the K-th's high byte
//!     count[low byte] of keys with high < top, and separately of keys with high == top
//!                                                  → kth, quota, and the selected elements' low bytes
//!     place the selected in the buffer by low byte (stable)
//!     place those in the spare half by high byte (stable), report it   // LSD: (key, position) order
//! ```
//! No element is compared with another, and the passes have no data-dependent branch. Counters are
//! `u32`: rows longer than `u32::MAX` go to the filter ([`suits`]).

use core::cmp::Ordering;

use crate::element::{Element, Key, ordered_key};
use crate::entry::{Emit, Entry, report};
use crate::sequence::Sequence;

/// K at least `len / ratio` is counted rather than filtered. Counting costs the same whatever K (about
/// 1.3 ms for 1M u8 in two passes, 5 ms for 1M f16 in four), the filter grows with K; measured on 1M
/// uniform rows (AVX-512) they cross near K = n/32 for 8-bit keys and K = n/5 for 16-bit ones.
const RATIO_8: usize = 24;
const RATIO_16: usize = 5;

/// Rows shorter than this are filtered: the counters' setup outweighs the row (measured: counting already
/// wins on 256-element u8 rows with K = 64, 1.9 against 5.6 ms for 4096 rows).
const MIN_LEN: usize = 256;

const BUCKETS: usize = 256;

/// Whether counting is the faster way to select `k` of `len` elements of `T`.
#[inline]
pub(crate) fn suits<T: Element>(len: usize, k: usize) -> bool {
    let ratio = match <T::Key as Key>::BITS {
        8 => RATIO_8,
        16 => RATIO_16,
        _ => return false,
    };
    len >= MIN_LEN && k.saturating_mul(ratio) >= len && len <= u32::MAX as usize
}

/// Reports, through `emit`, the first `k` positions of `seq` in the order of `flip`.
///
/// `1 <= k <= seq.len() <= u32::MAX`, `T`'s keys have 8 or 16 bits ([`suits`]), and `buffer` holds at
/// least `k` entries.
pub(crate) fn select<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    flip: u64,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    debug_assert!(suits::<T>(seq.len(), k) && k >= 1 && buffer.len() >= k);
    if <T::Key as Key>::BITS == 8 {
        bytes(seq, k, flip, buffer, emit);
    } else {
        halfwords(seq, k, flip, buffer, emit);
    }
}

/// 8-bit keys: count, then place each selected element at its rank in the buffer (a counting sort,
/// ties in position order), then report the buffer in order.
fn bytes<T: Element, E: Entry>(seq: &Sequence<'_, T>, k: usize, flip: u64, buffer: &mut [E], emit: &mut Emit<'_, T>) {
    let mut next = [0u32; BUCKETS];
    each_key(seq, flip, |_, key| next[key as usize & 0xFF] += 1);
    let Some(cut) = Cut::of(&next, k) else { return };
    first_ranks(&mut next, cut.key + 1);
    // Past the K-th's bucket nothing is selected: their next rank is K, one past the last.
    next.iter_mut().skip(cut.key + 1).for_each(|rank| *rank = k as u32);
    place(seq, flip, k, buffer, &mut next, |_| true);
    report(buffer.get(..k).unwrap_or_default(), emit);
}

/// Places every element that `selected` takes and whose bucket's next rank is below K at that rank
/// (`buffer[rank]`), and advances the rank: a stable counting sort by the key's low byte. Branch-free: an
/// element not placed is written to `buffer[k]`, the spare slot (there is one unless K = n, when every
/// element is placed), and advances nothing.
#[inline(always)]
fn place<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    flip: u64,
    k: usize,
    buffer: &mut [E],
    next: &mut [u32; BUCKETS],
    mut selected: impl FnMut(u64) -> bool,
) {
    let k = k as u32;
    each_key(seq, flip, |position, key| {
        let next = &mut next[key as usize & 0xFF];
        let placed = (*next < k) & selected(key);
        let rank = if placed { *next } else { k };
        if let Some(slot) = buffer.get_mut(rank as usize) {
            *slot = E::new(key, position);
        }
        *next += u32::from(placed);
    });
}

/// 16-bit keys: the high byte's count finds the K-th's bucket, the low bytes' count the K-th itself;
/// the selected are gathered by low byte and emitted by high byte.
fn halfwords<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    flip: u64,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    let mut high = [0u32; BUCKETS];
    each_key(seq, flip, |_, key| high[(key >> 8) as usize & 0xFF] += 1);
    let Some(top) = Cut::of(&high, k) else { return };
    // Low bytes of keys below bucket `top` (all selected), in it, and above it (counted only so that the
    // pass has no branch: one shared counter for them made every increment wait for the last).
    let mut low = [[0u32; BUCKETS]; 3];
    each_key(seq, flip, |_, key| {
        let bucket = (key >> 8) as usize & 0xFF;
        let side = usize::from(bucket >= top.key) + usize::from(bucket > top.key);
        low[side][key as usize & 0xFF] += 1;
    });
    let [below, in_top, _] = &mut low;
    let Some(cut) = Cut::of(in_top, top.quota as usize) else {
        return;
    };
    let kth = top.key << 8 | cut.key;
    // The selected elements' low bytes: all of those below bucket `top`, and of bucket `top` those
    // below the K-th's low byte plus the quota of ties.
    for (byte, (all, &in_top)) in below.iter_mut().zip(in_top.iter()).enumerate() {
        *all += match byte.cmp(&cut.key) {
            Ordering::Less => in_top,
            Ordering::Equal => cut.quota,
            Ordering::Greater => 0,
        };
    }
    first_ranks(below, BUCKETS);
    let mut taken = 0;
    let selected = |key: u64| {
        let tie = key == kth as u64 && taken < cut.quota;
        taken += u32::from(tie);
        key < kth as u64 || tie
    };
    place(seq, flip, k, buffer, below, selected);
    // Gathered in (low byte, position) order; a stable pass by high byte makes it (key, position).
    if let Some(count) = high.get_mut(top.key) {
        *count = top.quota;
    }
    first_ranks(&mut high, top.key + 1);
    let (gathered, spare) = buffer.split_at_mut(k.min(buffer.len()));
    match spare.get_mut(..k) {
        // Room for a second copy (n >= 2K): placed in the spare half, reported in order.
        Some(sorted) => {
            for &entry in gathered.iter() {
                let rank = &mut high[(entry.key() >> 8) as usize & 0xFF];
                if let Some(slot) = sorted.get_mut(*rank as usize) {
                    *slot = entry;
                }
                *rank += 1;
            }
            report(sorted, emit);
        }
        // Otherwise straight to the outputs, one rank at a time.
        None => {
            for &entry in gathered.iter() {
                let rank = &mut high[(entry.key() >> 8) as usize & 0xFF];
                emit.one(*rank as usize, entry.position());
                *rank += 1;
            }
        }
    }
}

/// Where the K-th smallest key falls in a count: the bucket, and how many of the bucket are selected.
#[derive(Clone, Copy)]
struct Cut {
    key: usize,
    quota: u32,
}

impl Cut {
    /// `None` only if the count holds fewer than `k` elements (never, for a count of the whole row).
    fn of(count: &[u32; BUCKETS], k: usize) -> Option<Cut> {
        let mut below = 0usize;
        for (key, &c) in count.iter().enumerate() {
            if below + c as usize >= k {
                // k - below <= c, a u32.
                let quota = (k - below) as u32;
                return Some(Cut { key, quota });
            }
            below += c as usize;
        }
        None
    }
}

/// Turns the first `buckets` counts into the rank of each bucket's first element (exclusive prefix
/// sums), in place.
fn first_ranks(count: &mut [u32; BUCKETS], buckets: usize) {
    let mut sum = 0u32;
    for c in count.iter_mut().take(buckets) {
        (*c, sum) = (sum, sum.wrapping_add(*c));
    }
}

/// Calls `f(position, key)` for every element in position order, the slice way when the row is
/// contiguous.
#[inline(always)]
fn each_key<T: Element>(seq: &Sequence<'_, T>, flip: u64, mut f: impl FnMut(usize, u64)) {
    if let Some(row) = seq.contiguous() {
        for (position, &value) in row.iter().enumerate() {
            f(position, ordered_key(value, flip));
        }
    } else {
        for position in 0..seq.len() {
            // SAFETY: position < seq.len().
            f(position, ordered_key(unsafe { seq.get(position) }, flip));
        }
    }
}
