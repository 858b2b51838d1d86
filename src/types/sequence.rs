//! What an engine reads: one sequence (a line along the axis), or neighbouring sequences side by side.
//!
//! Both are a slice and an affine address map whose every address lies in the slice, which their `unsafe`
//! constructors take as given: `plan.rs` makes them from validated layouts (or from its tile), and the
//! engines read them with unchecked loads.

/// One sequence: `len` elements of `data` from address `start`, `stride` apart.
#[derive(Clone, Copy)]
pub(crate) struct Sequence<'a, T> {
    data: &'a [T],
    start: isize,
    stride: isize,
    len: usize,
    /// Keys at or above this may be left out of the report ([`with_cap`](Self::with_cap)).
    cap: Option<u64>,
}

impl<'a, T: Copy> Sequence<'a, T> {
    /// The sequence of `len` elements from `start`, `stride` apart.
    ///
    /// # Safety
    /// `start + position · stride` is an index of `data` for every `position < len`.
    #[inline(always)]
    pub(crate) unsafe fn new(data: &'a [T], start: isize, stride: isize, len: usize) -> Self {
        Sequence {
            data,
            start,
            stride,
            len,
            cap: None,
        }
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
        // `new`'s precondition puts start..start + len inside `data`; `get` keeps this panic-free anyway.
        self.data.get(usize::try_from(self.start).ok()?..)?.get(..self.len)
    }

    /// The element at `position`.
    ///
    /// # Safety
    /// `position < self.len()`.
    #[inline(always)]
    pub(crate) unsafe fn get(&self, position: usize) -> T {
        debug_assert!(position < self.len, "position {position} of {}", self.len);
        let address = self.start + position as isize * self.stride;
        // SAFETY: `new`'s precondition with position < len (the caller's).
        unsafe { *self.data.get_unchecked(address as usize) }
    }
}

/// `count` neighbouring sequences read side by side, one per lane: sequence `lane` is `first` moved
/// `lane` elements on, so element `j` of every one is adjacent in memory (the columns of a row-major
/// matrix whose rows are position `j`).
#[derive(Clone, Copy)]
pub(crate) struct Columns<'a, T> {
    first: Sequence<'a, T>,
    count: usize,
}

impl<'a, T: Copy> Columns<'a, T> {
    /// The `count` sequences `first`, `first` moved one element on, and so on.
    ///
    /// # Safety
    /// `first.start + lane + position · first.stride` is an index of `first.data` for every `lane < count`
    /// and `position < first.len()`.
    #[inline(always)]
    pub(crate) unsafe fn new(first: Sequence<'a, T>, count: usize) -> Self {
        Columns { first, count }
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
        let address = self.first.start + position as isize * self.first.stride + first as isize;
        self.first.data.get(usize::try_from(address).ok()?..)?.get(..lanes)
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
        unsafe { *self.first.data.get_unchecked(address as usize) }
    }
}
