//! What an engine reads: one sequence (a line along the axis), or neighbouring sequences side by side.
//!
//! Both are a pointer and an affine address map whose every address holds one of the sequence's
//! elements, which their `unsafe` constructors take as given: `plan.rs` makes them from validated layouts
//! (or from its tile), and the engines read them with unchecked loads. A pointer, not a slice: a view
//! from raw parts vouches for its elements only, not for the memory between them.

use core::marker::PhantomData;
use core::ptr::NonNull;

/// One sequence: `len` elements from address `start` of `data`, `stride` apart.
pub(crate) struct Sequence<'a, T> {
    data: NonNull<T>,
    start: isize,
    stride: isize,
    len: usize,
    /// Keys at or above this may be left out of the report ([`with_cap`](Self::with_cap)).
    cap: Option<u64>,
    borrow: PhantomData<&'a [T]>,
}

// Derived, these would ask `T: Clone`.
impl<T> Clone for Sequence<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Sequence<'_, T> {}

impl<'a, T: Copy> Sequence<'a, T> {
    /// The sequence of `len` elements of `data` from `start`, `stride` apart.
    ///
    /// # Safety
    /// `start + position · stride` is an index of `data` for every `position < len`.
    #[inline(always)]
    pub(crate) unsafe fn new(data: &'a [T], start: isize, stride: isize, len: usize) -> Self {
        // SAFETY: the caller's precondition: each such address is an element of `data`, which is
        // borrowed for 'a.
        unsafe { Self::from_ptr(NonNull::from(data).cast(), start, stride, len) }
    }

    /// The sequence of `len` elements from address `start` of `data`, `stride` apart.
    ///
    /// # Safety
    /// For every `position < len`, `data` moved `start + position · stride` elements is an element inside
    /// the allocation of `data`, aligned, initialised and not written by anyone during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_ptr(data: NonNull<T>, start: isize, stride: isize, len: usize) -> Self {
        Sequence {
            data,
            start,
            stride,
            len,
            cap: None,
            borrow: PhantomData,
        }
    }

    /// The element at address `address`.
    ///
    /// # Safety
    /// `address` is `start + position · stride` for a `position < len`, or as [`Columns::new`] says.
    #[inline(always)]
    unsafe fn at(&self, address: isize) -> *const T {
        // SAFETY: the caller's: an element inside the allocation of `data`.
        unsafe { self.data.as_ptr().offset(address) }
    }

    /// The sequence whose positions are this one's moved `by` elements of `data` (its length, stride
    /// and cap).
    ///
    /// # Safety
    /// The moved sequence meets [`new`](Self::new)'s precondition.
    #[inline(always)]
    pub(crate) unsafe fn moved(&self, by: isize) -> Self {
        Sequence {
            start: self.start + by,
            ..*self
        }
    }

    /// The same sequence, for a caller that has no use for keys at or above `cap` (ordered keys, as
    /// [`Order::key`](crate::types::element::Order::key) makes them): an engine may then report fewer than K,
    /// only the first K of those below `cap`, or ignore the cap and report the first K as usual. An
    /// [`Accumulator`](crate::Accumulator) passes its K-th kept key, so that a chunk's scan starts with
    /// the threshold its earlier chunks left, as one scan of the whole sequence would have it.
    #[inline(always)]
    pub(crate) fn with_cap(self, cap: u64) -> Self {
        Sequence { cap: Some(cap), ..self }
    }

    /// See [`with_cap`](Self::with_cap).
    #[inline(always)]
    pub(crate) fn cap(&self) -> Option<u64> {
        self.cap
    }

    /// Number of elements.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Elements of the data from one position to the next.
    #[inline(always)]
    pub(crate) fn stride(&self) -> isize {
        self.stride
    }

    /// The elements as a slice, if they are adjacent in memory (stride 1, or fewer than two).
    #[inline(always)]
    pub(crate) fn contiguous(&self) -> Option<&[T]> {
        if self.stride != 1 && self.len > 1 {
            return None;
        }
        if self.len == 0 {
            return Some(&[]);
        }
        // SAFETY: `from_ptr`'s precondition makes the `len` addresses from `start` (stride 1, or one
        // element) aligned elements of one allocation, initialised and unchanging for 'a.
        Some(unsafe { core::slice::from_raw_parts(self.at(self.start), self.len) })
    }

    /// The same sequence copied into the start of `out`, contiguous there and with this one's cap, if
    /// it fits.
    #[inline(always)]
    pub(crate) fn gathered<'o>(&self, out: &'o mut [T]) -> Option<Sequence<'o, T>> {
        let out = out.get_mut(..self.len)?;
        for (position, slot) in out.iter_mut().enumerate() {
            // SAFETY: position < len.
            *slot = unsafe { self.get(position) };
        }
        let out: &'o [T] = out;
        // SAFETY: positions 0..len are the indices of `out`.
        let copy = unsafe { Sequence::new(out, 0, 1, out.len()) };
        Some(Sequence { cap: self.cap, ..copy })
    }

    /// The element at `position`.
    ///
    /// # Safety
    /// `position < self.len()`.
    #[inline(always)]
    pub(crate) unsafe fn get(&self, position: usize) -> T {
        debug_assert!(position < self.len, "position {position} of {}", self.len);
        let address = self.start + position as isize * self.stride;
        // SAFETY: `from_ptr`'s precondition with position < len (the caller's).
        unsafe { self.at(address).read() }
    }
}

/// `count` neighbouring sequences read side by side, one per lane: sequence `lane` is `first` moved
/// `lane` elements on, so element `j` of every one is adjacent in memory (the columns of a row-major
/// matrix whose rows are position `j`).
pub(crate) struct Columns<'a, T> {
    first: Sequence<'a, T>,
    count: usize,
}

// Derived, these would ask `T: Clone`.
impl<T> Clone for Columns<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Columns<'_, T> {}

impl<'a, T: Copy> Columns<'a, T> {
    /// The `count` sequences `first`, `first` moved one element on, and so on.
    ///
    /// # Safety
    /// Every `first.start + lane + position · first.stride`, for `lane < count` and `position <
    /// first.len()`, is an address [`Sequence::from_ptr`]'s precondition holds for.
    #[inline(always)]
    pub(crate) unsafe fn new(first: Sequence<'a, T>, count: usize) -> Self {
        Columns { first, count }
    }

    /// The same sequences moved `by` elements on.
    ///
    /// # Safety
    /// The moved sequences meet [`new`](Self::new)'s precondition.
    #[inline(always)]
    pub(crate) unsafe fn moved(&self, by: isize) -> Self {
        Columns {
            // SAFETY: the caller's.
            first: unsafe { self.first.moved(by) },
            count: self.count,
        }
    }

    /// Number of sequences.
    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Length of each sequence.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.first.len
    }

    /// Elements from one position of the sequences to the next.
    #[inline(always)]
    pub(crate) fn stride(&self) -> isize {
        self.first.stride
    }

    /// Element `position` of the first `lanes` sequences, adjacent in memory; `None` if `lanes > count`
    /// (checked, so that vector loads from the slice need no other precondition).
    #[inline(always)]
    pub(crate) fn row(&self, position: usize, lanes: usize) -> Option<&[T]> {
        self.lanes(position, 0, lanes)
    }

    /// Element `position` of sequences `first..first + lanes`, adjacent in memory; `None` if they are
    /// not all among the `count` (checked, as in [`row`](Self::row)).
    #[inline(always)]
    pub(crate) fn lanes(&self, position: usize, first: usize, lanes: usize) -> Option<&[T]> {
        if first.checked_add(lanes)? > self.count || position >= self.first.len {
            return None;
        }
        if lanes == 0 {
            return Some(&[]);
        }
        let address = self.first.start + position as isize * self.first.stride + first as isize;
        // SAFETY: `new`'s precondition with first + lanes <= count and position < len (checked): the
        // `lanes` adjacent addresses are aligned elements of one allocation, initialised and unchanging
        // for 'a.
        Some(unsafe { core::slice::from_raw_parts(self.first.at(address), lanes) })
    }

    /// Element `position` of sequence `lane`.
    ///
    /// # Safety
    /// `lane < self.count()` and `position < self.len()`.
    #[inline(always)]
    pub(crate) unsafe fn get(&self, lane: usize, position: usize) -> T {
        debug_assert!(lane < self.count, "lane {lane} of {}", self.count);
        let address = self.first.start + lane as isize + position as isize * self.first.stride;
        // SAFETY: `new`'s precondition with lane < count and position < len (the caller's).
        unsafe { self.first.at(address).read() }
    }
}
