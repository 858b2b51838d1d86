//! Counting selection for 8- and 16-bit keys, when K is a large part of the row.
//!
//! A threshold filter is linear only while few elements pass it; with K a large part of the row most
//! elements do, and the cost becomes the candidate buffer's compactions and the final sort of K
//! (1M u8 with K = 500k). Keys of 8 or 16 bits have few enough values to count
//! instead: no comparison at all, and the output comes out sorted.
//!
//! ```text
//! 8-bit keys (two passes over the row, one over the gathered):
//!     count[key]                                   // 256 counters
//!     kth = the key where the running count reaches K; quota = K - (elements below kth)
//!     gather, in position order, the keys below kth and kth's ties (all of them where they fit in
//!         the buffer, else the first quota)        // one compare and one store an element
//!     next[key] = rank of key's first element      // prefix sums
//!     for each gathered: if next[key] < K: sorted[next[key]++] = it
//!                                                  // a counting sort: ties stay in position order,
//!                                                  // kth's bucket stops at its quota
//!     report sorted[..K]
//! 16-bit keys (three passes over the row, two over the K selected):
//!     count[high byte]                             → top = the K-th's high byte
//!     count[low byte] of keys with high < top, and separately of keys with high == top
//!                                                  → kth, quota, and the selected elements' low bytes
//!     gather the K selected as 8-bit keys do (the first quota of kth's ties)
//!     place them in the spare half by low byte (stable)
//!     place those back by high byte (stable), report them             // LSD: (key, position) order
//!     (K > n/2, no room for two copies: placed by low byte straight from the row, then emitted by
//!     high byte a rank at a time)
//! ```
//! No element is compared with another, and the passes have no data-dependent branch. Counters are
//! `u32`: rows longer than `u32::MAX` go to the filter (the strategy's `counts`). Short contiguous rows of 8- and
//! 16-bit keys (integers, f16 and bf16) on the SIMD engines find their K-th key by bisection instead
//! (`generic::bisects`), and only their gathered come here to be ordered ([`report_gathered`]).

use core::cmp::Ordering;

use crate::kernels::entry::{Entry, report};
use crate::types::element::{Element, FLOAT_KEY, Key, Order, Sealed};
use crate::types::output::Emit;
use crate::types::sequence::Sequence;

const BUCKETS: usize = 256;

/// Reports, through `emit`, the first `k` positions of `seq` in the order of `flip`.
///
/// `1 <= k <= seq.len() <= u32::MAX`, `T`'s keys have 8 or 16 bits, and `buffer` holds at
/// least `k` entries.
pub(crate) fn select<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    debug_assert!(
        <T::Key as Key>::BITS <= 16 && seq.len() <= u32::MAX as usize && k >= 1 && buffer.len() >= k,
        "len {} k {k} buffer {}",
        seq.len(),
        buffer.len()
    );
    if <T::Key as Key>::BITS == 8 {
        bytes(seq, k, order, buffer, emit);
    } else {
        halfwords(seq, k, order, buffer, emit);
    }
}

/// 8-bit keys: count, gather the selected in position order, then place those at their ranks (a
/// counting sort of K, ties in position order).
fn bytes<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    let mut count = [0u32; BUCKETS];
    each_key(seq, order, |_, key| count[key as usize & 0xFF] += 1);
    let Some(cut) = Cut::of(&count, k) else { return };
    let ties = count.get(cut.key).map_or(0, |&c| c as usize);
    let gathered = gather(seq, order, k, cut, ties, buffer);
    first_ranks(&mut count, cut.key + 1);
    emit_by_rank(buffer, gathered, k, &mut count, |key| key as usize, emit);
}

/// Reports the first K of the first `gathered` entries of `buffer` (8- or 16-bit keys, in position
/// order, at least K of them) in (key, position) order: a counting sort of the gathered alone, for a
/// caller that found the K-th key without counting the row (`generic`'s bisection over short rows),
/// where a sorting network, the lanes' ranks or `core`'s sort take more instructions an element of
/// rows of 256 with K of 32 to 128. 16-bit keys go by low byte into the rest of `buffer`, then back by
/// high byte (as [`halfwords`]); false, having reported nothing, where the rest holds fewer than
/// `gathered`. Out of line: scalar code, once a row, whose 2 KiB of counters would otherwise join the
/// frame of the short rows' path for every row, slowing rows that never come here (256 u8 with
/// K = 8).
#[inline(never)]
pub(crate) fn report_gathered<T: Element, E: Entry>(
    buffer: &mut [E],
    gathered: usize,
    k: usize,
    emit: &mut Emit<'_, T>,
) -> bool {
    let Some((entries, spare)) = buffer.split_at_mut_checked(gathered) else {
        return false;
    };
    let mut low = [0u32; BUCKETS];
    if <T::Key as Key>::BITS == 8 {
        let mut last = 0;
        for entry in entries.iter() {
            low[entry.key() as usize % BUCKETS] += 1;
            last = last.max(entry.key() as usize);
        }
        first_ranks(&mut low, last + 1);
        emit_by_rank(buffer, gathered, k, &mut low, |key| key as usize, emit);
        return true;
    }
    let Some(sorted) = spare.get_mut(..gathered) else {
        return false;
    };
    let mut high = [0u32; BUCKETS];
    for entry in entries.iter() {
        low[entry.key() as usize % BUCKETS] += 1;
        high[(entry.key() >> 8) as usize % BUCKETS] += 1;
    }
    first_ranks(&mut low, BUCKETS);
    first_ranks(&mut high, BUCKETS);
    report_by_bytes(entries, sorted, &mut low, &mut high, k, emit);
    true
}

/// Reports the first K of `entries` (16-bit keys, in position order) in (key, position) order: sorted
/// by low byte into `sorted` (as long), then back by high byte, stably; `low` and `high` hold each
/// bucket's first rank.
#[inline(always)]
fn report_by_bytes<T: Element, E: Entry>(
    entries: &mut [E],
    sorted: &mut [E],
    low: &mut [u32; BUCKETS],
    high: &mut [u32; BUCKETS],
    k: usize,
    emit: &mut Emit<'_, T>,
) {
    counting_sort(entries, sorted, low, |key| key as usize);
    counting_sort(sorted, entries, high, |key| (key >> 8) as usize);
    report(entries.get(..k).unwrap_or_default(), emit);
}

/// Gathers into `buffer`, in position order, the elements that the K-th key `cut.key` selects: every
/// key below it, and of the `ties` equal to it all of them where a slot of `buffer` is left spare (one
/// compare an element), else the first `cut.quota`. Returns how many it gathered. Branch-free: an
/// element not taken is written past the last taken, where the next one taken overwrites it (the spare
/// slot; with only the quota, `buffer[k]`, there unless K = n, when every element is taken).
///
/// Without this pass the counting sort would place every element of the row at its rank: a load and a
/// store of its bucket's rank that the next element of the same key waits for (1M u8 with K = 50 000;
/// see BENCHMARKS.md, decisions).
#[inline(always)]
fn gather<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    order: Order,
    k: usize,
    cut: Cut,
    ties: usize,
    buffer: &mut [E],
) -> usize {
    let Some(last) = buffer.len().checked_sub(1) else {
        return 0;
    };
    let kth = cut.key as u64;
    let ties_fit = k + ties - (cut.quota as usize) < buffer.len();
    let mut taken = 0usize;
    let mut take = |position: usize, key: u64, taking: bool| {
        // `taken.min(last)`: in `buffer` with no branch (`taken` reaches its length only after the
        // last element, when K = n).
        if let Some(slot) = buffer.get_mut(taken.min(last)) {
            *slot = E::new(key, position);
        }
        taken += usize::from(taking);
    };
    if ties_fit {
        each_key(seq, order, |position, key| take(position, key, key <= kth));
    } else {
        let mut selected = first_quota(kth, cut.quota);
        each_key(seq, order, |position, key| take(position, key, selected(key)));
    }
    taken
}

/// Whether each key offered, in position order, is selected by the K-th key `kth` with `quota` of its
/// ties: keys below it, and the first `quota >= 1` equal to it. A running limit, `kth + 1` until the
/// quota's last tie and `kth` after, with no branch.
#[inline(always)]
fn first_quota(kth: u64, quota: u32) -> impl FnMut(u64) -> bool {
    let (mut limit, mut ties) = (kth + 1, 0u32);
    move |key| {
        let selected = key < limit;
        ties += u32::from(key == kth);
        limit = kth + u64::from(ties < quota);
        selected
    }
}

/// Reports the first `gathered` entries of `buffer` (in position order) at their ranks, the first K
/// ranks: `ranks[bucket]` is the rank of the next entry of that bucket. Sorted into the rest of
/// `buffer` where K fit there and reported in order, else written to the outputs a rank at a time.
#[inline(always)]
fn emit_by_rank<T: Element, E: Entry>(
    buffer: &mut [E],
    gathered: usize,
    k: usize,
    ranks: &mut [u32; BUCKETS],
    bucket: impl Fn(u64) -> usize,
    emit: &mut Emit<'_, T>,
) {
    let (gathered, spare) = buffer.split_at_mut(gathered.min(buffer.len()));
    match spare.get_mut(..k) {
        Some(sorted) => {
            counting_sort(gathered, sorted, ranks, bucket);
            report(sorted, emit);
        }
        None => {
            for &entry in gathered.iter() {
                let rank = &mut ranks[bucket(entry.key()) % BUCKETS];
                // Ranks from K on are the K-th's ties past its quota.
                if (*rank as usize) < k {
                    emit.one(*rank as usize, entry.position());
                }
                *rank += 1;
            }
        }
    }
}

/// Puts each of `from` at its bucket's next rank in `to`, and advances the rank: a stable counting sort
/// (`ranks[bucket]` is the rank of the bucket's first entry). Ranks past `to` are dropped (the K-th's
/// ties past its quota).
#[inline(always)]
fn counting_sort<E: Entry>(from: &[E], to: &mut [E], ranks: &mut [u32; BUCKETS], bucket: impl Fn(u64) -> usize) {
    for &entry in from {
        let rank = &mut ranks[bucket(entry.key()) % BUCKETS];
        if let Some(slot) = to.get_mut(*rank as usize) {
            *slot = entry;
        }
        *rank += 1;
    }
}

/// Places every element that `selected` takes and whose bucket's next rank is below K at that rank
/// (`buffer[rank]`), and advances the rank: a stable counting sort by the key's low byte. Branch-free: an
/// element not placed is written to `buffer[k]`, the spare slot (there is one unless K = n, when every
/// element is placed), and advances nothing.
#[inline(always)]
fn place<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    order: Order,
    k: usize,
    buffer: &mut [E],
    next: &mut [u32; BUCKETS],
    mut selected: impl FnMut(u64) -> bool,
) {
    let k = k as u32;
    each_key(seq, order, |position, key| {
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
/// the selected are gathered, sorted by low byte, and emitted by high byte.
fn halfwords<T: Element, E: Entry>(
    seq: &Sequence<'_, T>,
    k: usize,
    order: Order,
    buffer: &mut [E],
    emit: &mut Emit<'_, T>,
) {
    let mut high = [0u32; BUCKETS];
    each_key(seq, order, |_, key| high[(key >> 8) as usize & 0xFF] += 1);
    let Some(top) = Cut::of(&high, k) else { return };
    // Low bytes of keys below bucket `top` (all selected), in it, and above it (counted only so that the
    // pass has no branch: one shared counter for them made every increment wait for the last).
    let mut low = [[0u32; BUCKETS]; 3];
    each_key(seq, order, |_, key| {
        let bucket = (key >> 8) as usize & 0xFF;
        let side = usize::from(bucket >= top.key) + usize::from(bucket > top.key);
        low[side][key as usize & 0xFF] += 1;
    });
    let [below, in_top, _] = &mut low;
    let Some(cut) = Cut::of(in_top, top.quota as usize) else {
        return;
    };
    let kth = Cut {
        key: top.key << 8 | cut.key,
        quota: cut.quota,
    };
    let ties = in_top.get(cut.key).map_or(0, |&c| c as usize);
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
    if let Some(count) = high.get_mut(top.key) {
        *count = top.quota;
    }
    first_ranks(&mut high, top.key + 1);
    if k.saturating_mul(2) <= buffer.len() {
        // Room for two copies (n >= 2K): the K gathered (exactly: `gather` is given one spare slot),
        // sorted by low byte, then back by high byte, stably: (key, position) order.
        gather(seq, order, k, kth, ties, buffer.get_mut(..=k).unwrap_or_default());
        let (gathered, sorted) = buffer.split_at_mut(k);
        let sorted = sorted.get_mut(..k).unwrap_or_default();
        report_by_bytes(gathered, sorted, below, &mut high, k, emit);
    } else {
        // Otherwise placed by low byte straight from the row, then emitted by high byte a rank at a
        // time.
        place(seq, order, k, buffer, below, first_quota(kth.key as u64, kth.quota));
        emit_by_rank(buffer, k, k, &mut high, |key| (key >> 8) as usize, emit);
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
///
/// A contiguous row of floats has its keys computed a chunk at a time into an array, a loop the
/// compiler vectorises, before `f` takes them one by one: a float's key is a dozen instructions (the
/// sign's flip, both zeros and every NaN merged), which each of the 16-bit count's four passes would
/// spend on every element (1M f16 with K = 300 000). An integer's key is one `xor`, which
/// the array's store and load would only slow.
#[inline(always)]
fn each_key<T: Element>(seq: &Sequence<'_, T>, order: Order, mut f: impl FnMut(usize, u64)) {
    const CHUNK: usize = 64;
    match seq.contiguous() {
        Some(row) if <T as Sealed>::KEY_FORM == FLOAT_KEY => {
            let (chunks, tail) = row.as_chunks::<CHUNK>();
            for (c, chunk) in chunks.iter().enumerate() {
                let mut keys = [<T::Key as Key>::narrow(0); CHUNK];
                for (key, &value) in keys.iter_mut().zip(chunk) {
                    *key = value.key();
                }
                for (i, key) in keys.into_iter().enumerate() {
                    f(c * CHUNK + i, key.widen() ^ order.mask());
                }
            }
            let done = chunks.len() * CHUNK;
            for (i, &value) in tail.iter().enumerate() {
                f(done + i, order.key(value));
            }
        }
        Some(row) => {
            for (position, &value) in row.iter().enumerate() {
                f(position, order.key(value));
            }
        }
        None => {
            for position in 0..seq.len() {
                // SAFETY: position < seq.len().
                f(position, order.key(unsafe { seq.get(position) }));
            }
        }
    }
}
