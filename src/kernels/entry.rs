//! Candidates as (key, position) pairs packed so that one integer comparison orders them.
//!
//! Keys of up to 32 bits with positions below 2^32 pack into one `u64` (`key << 32 | position`); wider
//! keys or longer sequences use `[u64; 2]` (`[key, position]`, which Rust orders lexicographically).
//! Either way `a < b` is exactly "a comes first": smaller key, then lower position. Scratch is handed
//! out as `u64` words, so both forms live in the same caller-owned slice.

use crate::types::output::Emit;

/// A packed (key, position) candidate.
pub(crate) trait Entry: Copy + Ord {
    fn new(key: u64, position: usize) -> Self;
    fn key(self) -> u64;
    fn position(self) -> usize;
    /// The scratch words viewed as entries (a trailing partial entry is left out).
    fn from_words(words: &mut [u64]) -> &mut [Self];
    /// The entry no other is above: all ones (a real entry can only equal it, and is then the same).
    const LAST: Self;
    /// The entries as one of the two concrete forms: what the engines compiled per type take, and the
    /// plain words the sorting networks take.
    fn buffer(entries: &mut [Self]) -> Buffer<'_>;
    /// `min(self, other)` with no branch (the sorted pool's insertion: see `arch::generic::filter`).
    #[inline(always)]
    fn lesser(self, other: Self) -> Self {
        self.min(other)
    }
    /// `max(self, other)` with no branch.
    #[inline(always)]
    fn greater(self, other: Self) -> Self {
        self.max(other)
    }
}

/// A candidate buffer of either entry form.
pub(crate) enum Buffer<'a> {
    Packed(&'a mut [u64]),
    Wide(&'a mut [[u64; 2]]),
}

impl Buffer<'_> {
    /// The same buffer, borrowed for a shorter while.
    #[inline(always)]
    pub(crate) fn reborrow(&mut self) -> Buffer<'_> {
        match self {
            Buffer::Packed(words) => Buffer::Packed(words),
            Buffer::Wide(pairs) => Buffer::Wide(pairs),
        }
    }
}

impl Entry for u64 {
    const LAST: Self = u64::MAX;
    #[inline(always)]
    fn new(key: u64, position: usize) -> Self {
        debug_assert!(
            key >> 32 == 0 && (position as u64) >> 32 == 0,
            "packing {key:#x} at {position}"
        );
        key << 32 | position as u64
    }
    #[inline(always)]
    fn key(self) -> u64 {
        self >> 32
    }
    #[inline(always)]
    fn position(self) -> usize {
        // The position was a usize when packed.
        (self & 0xFFFF_FFFF) as usize
    }
    fn from_words(words: &mut [u64]) -> &mut [Self] {
        words
    }
    #[inline(always)]
    fn buffer(entries: &mut [Self]) -> Buffer<'_> {
        Buffer::Packed(entries)
    }
}

impl Entry for [u64; 2] {
    const LAST: Self = [u64::MAX; 2];
    #[inline(always)]
    fn new(key: u64, position: usize) -> Self {
        [key, position as u64]
    }
    #[inline(always)]
    fn key(self) -> u64 {
        self[0]
    }
    #[inline(always)]
    fn position(self) -> usize {
        // The position was a usize when packed.
        self[1] as usize
    }
    fn from_words(words: &mut [u64]) -> &mut [Self] {
        words.as_chunks_mut::<2>().0
    }
    #[inline(always)]
    fn buffer(entries: &mut [Self]) -> Buffer<'_> {
        Buffer::Wide(entries)
    }
    // The arrays' own `min` compares a word at a time with branches and goes through the stack, which
    // slows the sorted pool's insertions of f64 rows (rows of 256 with K = 16).
    #[inline(always)]
    fn lesser(self, other: Self) -> Self {
        pick_wide(wide_below(other, self), other, self)
    }
    #[inline(always)]
    fn greater(self, other: Self) -> Self {
        pick_wide(wide_below(self, other), other, self)
    }
}

/// Whether `a < b` in the order of wide entries, as one 128-bit compare.
#[inline(always)]
fn wide_below(a: [u64; 2], b: [u64; 2]) -> bool {
    (u128::from(a[0]) << 64 | u128::from(a[1])) < (u128::from(b[0]) << 64 | u128::from(b[1]))
}

/// `yes` if `take`, else `no`, by masks rather than a branch.
#[inline(always)]
fn pick_wide(take: bool, yes: [u64; 2], no: [u64; 2]) -> [u64; 2] {
    let mask = u64::from(take).wrapping_neg();
    [no[0] ^ ((yes[0] ^ no[0]) & mask), no[1] ^ ((yes[1] ^ no[1]) & mask)]
}

/// Whether candidates of a sequence of `len` elements with `key_bits`-bit keys pack into one word.
#[inline]
pub(crate) fn packs_in_one_word(key_bits: u32, len: usize) -> bool {
    key_bits <= 32 && (len as u64) <= 1 << 32
}

/// Whether some sequence with `key_bits`-bit keys needs two-word entries on this target: not for keys of
/// 32 bits or less where `usize` is 32 bits (every sequence then packs, see [`packs_in_one_word`]).
#[inline(always)]
pub(crate) const fn needs_wide_entries(key_bits: u32) -> bool {
    key_bits > 32 || usize::BITS > 32
}

/// Reports the positions of `entries` as ranks 0, 1, ... in order (the first K of them to outputs).
#[inline(always)]
pub(crate) fn report<T: Copy, E: Entry>(entries: &[E], emit: &mut Emit<'_, T>) {
    let entries = match emit {
        Emit::Outputs(outputs) => entries.get(..outputs.k()).unwrap_or(entries),
        Emit::Each(_) => entries,
    };
    emit.positions(entries.iter().map(|entry| entry.position()));
}
