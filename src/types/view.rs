//! Strided views of 1 to 8 dimensions, validated once in the constructor.
//!
//! A view is a pointer, `sizes[D]`, `strides[D]` in elements (DML_BUFFER_TENSOR_DESC's Strides, here
//! signed so that reversed numpy views need no copy) and an element offset. The constructor proves, once,
//! that every address `offset + Σ coord[d]·strides[d]` lies inside the slice it was given (or, from raw
//! parts, inside the span of the caller's elements) without overflow (the rule of ndarray's
//! `can_index_slice_with_strides`); the kernels rely on that and never check again.
//!
//! A view holds a pointer rather than a slice so that one made from raw parts claims only its own
//! elements: the memory between them (a stepped view's gaps, the elements of another view interleaved
//! with it) may be another's, written on another thread meanwhile. Nothing here reads or writes it.

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::types::error::{Error, Operand};

/// The highest rank a view may have (DirectML's limit).
pub const MAX_RANK: usize = 8;

/// Sizes, strides and offset of a view whose every reachable address is known to fit a slice of `len`.
///
/// A layout also knows the caller's rank: `D`, or for one [`padded`](Layout::padded) from a rank known
/// only at run time, that rank. Its first `D - rank` dimensions are then the padding (size 1), and axes
/// and errors count dimensions from the first of the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout<const D: usize> {
    // Read in place by the walk (`plan.rs`), where copying the arrays out costs flash; written only here.
    pub(crate) sizes: [usize; D],
    pub(crate) strides: [isize; D],
    offset: usize,
    rank: usize,
}

/// The number of elements of `sizes`, if it fits `isize`.
fn element_count(sizes: &[usize]) -> Option<usize> {
    let mut elements = 1usize;
    for &size in sizes {
        elements = elements.checked_mul(size)?;
    }
    (elements <= isize::MAX as usize).then_some(elements)
}

/// The lowest and highest of `start + Σ coord[d]·strides[d]` over the coordinates inside `sizes`, which
/// are not empty; `None` on overflow.
fn reach<const D: usize>(start: isize, sizes: &[usize; D], strides: &[isize; D]) -> Option<(isize, isize)> {
    let (mut lowest, mut highest) = (start, start);
    for (&size, &stride) in sizes.iter().zip(strides) {
        // `size - 1` fits isize because the element count does.
        let reach = (size.checked_sub(1)? as isize).checked_mul(stride)?;
        if reach < 0 {
            lowest = lowest.checked_add(reach)?;
        } else {
            highest = highest.checked_add(reach)?;
        }
    }
    Some((lowest, highest))
}

/// The memory a view made from raw parts spans, from the element at coordinate zero: from `lowest`
/// elements away, `len` elements.
#[derive(Clone, Copy)]
struct Span {
    lowest: isize,
    len: usize,
}

impl<const D: usize> Layout<D> {
    const RANK_IS_SUPPORTED: () = assert!(D >= 1 && D <= MAX_RANK, "views have 1 to 8 dimensions");

    /// Validates a layout for a slice of `len` elements. `operand` only names the operand in errors.
    pub fn new(
        operand: Operand,
        sizes: [usize; D],
        strides: [isize; D],
        offset: usize,
        len: usize,
    ) -> Result<Self, Error> {
        let () = Self::RANK_IS_SUPPORTED;
        let overflow = Error::Overflow { operand };
        let elements = element_count(&sizes).ok_or(overflow)?;
        let layout = Layout {
            sizes,
            strides,
            offset,
            rank: D,
        };
        if elements == 0 {
            // No coordinate exists, so no address is reachable.
            return Ok(layout);
        }
        let start = isize::try_from(offset).map_err(|_| overflow)?;
        let (lowest, highest) = reach(start, &sizes, &strides).ok_or(overflow)?;
        if lowest < 0 || highest as usize >= len {
            return Err(Error::OutOfBounds {
                operand,
                lowest,
                highest,
                len,
            });
        }
        Ok(layout)
    }

    /// Row-major strides for `sizes` (the last dimension contiguous), offset 0.
    pub fn contiguous(operand: Operand, sizes: [usize; D], len: usize) -> Result<Self, Error> {
        let () = Self::RANK_IS_SUPPORTED;
        let mut strides = [0isize; D];
        let mut step = 1isize;
        for d in (0..D).rev() {
            strides[d] = step;
            // A zero size makes the view empty; later strides do not matter then.
            let size = isize::try_from(sizes[d].max(1)).map_err(|_| Error::Overflow { operand })?;
            step = step.checked_mul(size).unwrap_or(isize::MAX);
        }
        Self::new(operand, sizes, strides, 0, len)
    }

    /// The layout of raw parts: `sizes` and `strides` from the element at coordinate zero, validated as
    /// [`Layout::new`] validates them for the slice that would run from the lowest element the view
    /// reaches to the highest (its offset the distance from the lowest to coordinate zero). Returns that
    /// layout and the span: the lowest element's address from coordinate zero, and the span's length in
    /// elements (0 and 0 when the view is empty).
    fn spanning(operand: Operand, sizes: [usize; D], strides: [isize; D]) -> Result<(Self, Span), Error> {
        let () = Self::RANK_IS_SUPPORTED;
        let overflow = Error::Overflow { operand };
        if element_count(&sizes).ok_or(overflow)? == 0 {
            return Ok((Layout::new(operand, sizes, strides, 0, 0)?, Span { lowest: 0, len: 0 }));
        }
        let (lowest, highest) = reach(0, &sizes, &strides).ok_or(overflow)?;
        let len = highest
            .checked_sub(lowest)
            .and_then(|span| span.checked_add(1))
            .ok_or(overflow)? as usize;
        let layout = Layout::new(operand, sizes, strides, lowest.unsigned_abs(), len)?;
        Ok((layout, Span { lowest, len }))
    }

    /// Checks that no two coordinates map to one address (what an output view needs).
    ///
    /// The test is ndarray's sufficient one: ordered by |stride|, each dimension's stride must exceed the
    /// reach of all smaller ones together. It accepts every permuted or stepped layout (e.g. u32 indices
    /// every other word of a u64 buffer) and rejects zero strides on dimensions longer than 1. A few
    /// exotic interleavings that happen not to collide (sizes `[3, 2]`, strides `[2, 3]`) are rejected too.
    pub fn check_unaliased(&self, operand: Operand) -> Result<(), Error> {
        if self.elements() == 0 {
            return Ok(());
        }
        let mut dims = [0usize; D];
        let mut used = 0;
        for d in 0..D {
            if self.sizes[d] > 1 {
                if self.strides[d] == 0 {
                    return Err(self.aliasing(operand, d));
                }
                dims[used] = d;
                used += 1;
            }
        }
        let dims = &mut dims[..used];
        dims.sort_unstable_by_key(|&d| self.strides[d].unsigned_abs());
        let mut reach = 0usize; // highest offset reachable by the smaller dimensions, all ≥ 0 here
        for &d in dims.iter() {
            let stride = self.strides[d].unsigned_abs();
            if stride <= reach {
                return Err(self.aliasing(operand, d));
            }
            // No overflow: the constructor bounded every reach by the slice length.
            reach += (self.sizes[d] - 1) * stride;
        }
        Ok(())
    }

    /// [`Error::Aliasing`] at dimension `d`, in the caller's numbering (the padding has size 1, so `d` is
    /// one of the caller's dimensions).
    fn aliasing(&self, operand: Operand, d: usize) -> Error {
        Error::Aliasing {
            operand,
            dim: d - self.padding(),
        }
    }

    /// Sizes of the dimensions (at rank `D`, the padding included).
    pub fn sizes(&self) -> [usize; D] {
        self.sizes
    }

    /// Strides of the dimensions, in elements (at rank `D`, the padding included).
    pub fn strides(&self) -> [isize; D] {
        self.strides
    }

    /// Element offset of coordinate zero.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The caller's dimension count: `D`, or the rank a [`padded`](Layout::padded) layout was made from.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The dimensions of padding in front of the caller's (0 but for a [`padded`](Layout::padded) layout).
    pub(crate) fn padding(&self) -> usize {
        D - self.rank
    }

    /// The index into [`sizes`](Self::sizes) of the caller's `axis`: `axis` itself, counted from the last
    /// dimension when negative (-1 is the last), past the padding; `None` outside `-rank..rank`.
    pub fn axis_index(&self, axis: isize) -> Option<usize> {
        let rank = self.rank as isize;
        let from_first = if axis < 0 { axis.checked_add(rank)? } else { axis };
        (0..rank)
            .contains(&from_first)
            .then(|| from_first as usize + self.padding())
    }

    /// Number of elements (the product of the sizes).
    pub fn elements(&self) -> usize {
        // Cannot overflow: the constructor checked the product.
        self.sizes.iter().product()
    }

    /// The same layout at rank 8: dimensions of size 1 (stride 0) in front, as [`Layout::padded`] makes
    /// them, and the same caller's rank. It reaches the same addresses, so it fits the same slice.
    pub(crate) fn pad(&self) -> Layout<MAX_RANK> {
        let () = Self::RANK_IS_SUPPORTED;
        let pad = MAX_RANK - D;
        let mut sizes = [1; MAX_RANK];
        let mut strides = [0; MAX_RANK];
        sizes[pad..].copy_from_slice(&self.sizes);
        strides[pad..].copy_from_slice(&self.strides);
        Layout {
            sizes,
            strides,
            offset: self.offset,
            rank: self.rank,
        }
    }

    /// The same layout, its first `D - rank` dimensions (of size 1) counted as padding.
    pub(crate) fn with_rank(self, rank: usize) -> Self {
        debug_assert!(
            rank <= D && self.sizes[..D - rank].iter().all(|&s| s == 1),
            "rank {rank} of {:?}",
            self.sizes
        );
        Layout { rank, ..self }
    }

    /// Address of `coord`; every coordinate inside `sizes` gives one inside the slice.
    #[inline]
    pub(crate) fn address(&self, coord: &[usize; D]) -> isize {
        address(self.offset, &self.strides, coord)
    }
}

/// `offset + Σ coord[d]·strides[d]`: the address of `coord` in a layout with these strides and offset.
#[inline]
pub(crate) fn address<const D: usize>(offset: usize, strides: &[isize; D], coord: &[usize; D]) -> isize {
    let mut address = offset as isize;
    for (&c, &stride) in coord.iter().zip(strides) {
        address += c as isize * stride;
    }
    address
}

/// Sizes and strides of run-time rank (1..=8) padded in front to rank 8 with dimensions of size 1
/// (stride 0 where strides are given; row-major strides where `strides` is `None`), and the rank.
fn pad_dims(
    operand: Operand,
    sizes: &[usize],
    strides: Option<&[isize]>,
) -> Result<([usize; MAX_RANK], [isize; MAX_RANK], usize), Error> {
    let rank = sizes.len();
    if !(1..=MAX_RANK).contains(&rank) || strides.is_some_and(|s| s.len() != rank) {
        return Err(Error::Rank { rank });
    }
    let pad = MAX_RANK - rank;
    let mut padded_sizes = [1usize; MAX_RANK];
    padded_sizes[pad..].copy_from_slice(sizes);
    let padded_strides = match strides {
        // Only the strides are wanted here (no slice is too long for them); the bounds are checked next,
        // with the offset, so that an error reports the addresses the view really reaches.
        None => Layout::contiguous(operand, padded_sizes, usize::MAX)?.strides,
        Some(strides) => {
            let mut padded = [0isize; MAX_RANK];
            padded[pad..].copy_from_slice(strides);
            padded
        }
    };
    Ok((padded_sizes, padded_strides, rank))
}

impl Layout<MAX_RANK> {
    /// Merges the neighbouring dimensions other than `axis` that this layout and each of `others` (the
    /// strides of layouts of the same sizes but along `axis`) step through as one (the outer's stride
    /// the inner's times its size), and drops those of size 1 but `axis`: the dimensions left are the
    /// last ones, padded in front as [`Layout::pad`] pads. Sequences along the axis keep their row-major
    /// numbering and every coordinate its addresses; runs of neighbouring sequences grow as long as the
    /// memory allows (a non-last axis over a contiguous inner block of several dimensions is read side by
    /// side whole). Returns where `axis` went. An empty layout is left as it is.
    pub(crate) fn merge_dimensions<const N: usize>(
        &mut self,
        mut others: [&mut [isize; MAX_RANK]; N],
        axis: usize,
    ) -> usize {
        if self.elements() == 0 {
            return axis;
        }
        // In place from the innermost out: dimension `d` merges into the one kept last, at `kept`, or
        // moves to the slot before it (`d` or later, already read).
        let (mut kept, mut merged_axis) = (MAX_RANK, axis);
        for d in (0..MAX_RANK).rev() {
            let size = self.sizes[d];
            if d != axis && size == 1 {
                continue;
            }
            if d != axis && kept < MAX_RANK && kept != merged_axis {
                let inner = self.sizes[kept] as isize;
                let steps_as_one = |strides: &[isize; MAX_RANK]| strides[kept].checked_mul(inner) == Some(strides[d]);
                if steps_as_one(&self.strides) && others.iter().all(|strides| steps_as_one(strides)) {
                    self.sizes[kept] *= size;
                    continue;
                }
            }
            kept -= 1;
            self.sizes[kept] = size;
            self.strides[kept] = self.strides[d];
            for strides in others.iter_mut() {
                strides[kept] = strides[d];
            }
            if d == axis {
                merged_axis = kept;
            }
        }
        for slot in 0..kept {
            (self.sizes[slot], self.strides[slot]) = (1, 0);
            for strides in others.iter_mut() {
                strides[slot] = 0;
            }
        }
        self.rank = MAX_RANK - kept;
        merged_axis
    }

    /// A layout whose rank (1..=8) is known only at run time, padded in front to rank 8 with dimensions
    /// of size 1: the elements, their order and their addresses are unchanged, and the layout remembers
    /// `sizes.len()` as its [`rank`](Layout::rank), so that a request's axis is the caller's (0 is the
    /// first of `sizes`) and its errors name the caller's dimensions. `strides: None` means row-major.
    pub fn padded(
        operand: Operand,
        sizes: &[usize],
        strides: Option<&[isize]>,
        offset: usize,
        len: usize,
    ) -> Result<Self, Error> {
        let (sizes, strides, rank) = pad_dims(operand, sizes, strides)?;
        Ok(Layout::new(operand, sizes, strides, offset, len)?.with_rank(rank))
    }

    /// [`Layout::spanning`] of run-time rank, padded as [`Layout::padded`] pads.
    fn padded_spanning(operand: Operand, sizes: &[usize], strides: &[isize]) -> Result<(Self, Span), Error> {
        let (sizes, strides, rank) = pad_dims(operand, sizes, Some(strides))?;
        let (layout, span) = Layout::spanning(operand, sizes, strides)?;
        Ok((layout.with_rank(rank), span))
    }
}

/// The pointer a view made from raw parts keeps: `ptr` (coordinate zero) moved to the lowest element
/// of the span, which the layout's offset undoes; dangling when the span is empty (the view has no
/// element). Refuses a null or misaligned `ptr`, and a span of more than `isize::MAX` bytes.
fn raw_data<T>(operand: Operand, ptr: *mut T, span: Span) -> Result<NonNull<T>, Error> {
    if span.len == 0 {
        return Ok(NonNull::dangling());
    }
    let misaligned = Error::Alignment {
        operand,
        address: ptr.addr(),
        align: align_of::<T>(),
    };
    if ptr.is_null() || !ptr.is_aligned() {
        return Err(misaligned);
    }
    if span
        .len
        .checked_mul(size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(Error::Overflow { operand });
    }
    // `wrapping_offset`: no precondition here. By the caller's contract the result is one of the view's
    // elements, inside the caller's allocation, like every address the layout reaches from it.
    NonNull::new(ptr.wrapping_offset(span.lowest)).ok_or(misaligned)
}

/// A read-only strided view of `D` dimensions: a borrow of the elements it reaches, as `&'a [T]` is of
/// a slice's.
#[derive(Debug)]
pub struct View<'a, T, const D: usize> {
    /// Address 0 of the layout.
    data: NonNull<T>,
    layout: Layout<D>,
    /// The length of the slice the view was made from, which starts at `data`; `None` for one made from
    /// raw parts.
    slice_len: Option<usize>,
    borrow: PhantomData<&'a [T]>,
}

// Derived, these would ask `T: Clone` (a view copies a pointer, not elements).
impl<T, const D: usize> Clone for View<'_, T, D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const D: usize> Copy for View<'_, T, D> {}

// SAFETY: a view only reads its elements, as a `&[T]` does, which is `Send` and `Sync` for `T: Sync`.
unsafe impl<T: Sync, const D: usize> Send for View<'_, T, D> {}
// SAFETY: as above.
unsafe impl<T: Sync, const D: usize> Sync for View<'_, T, D> {}

impl<'a, T, const D: usize> View<'a, T, D> {
    /// A view with explicit strides (in elements) and offset; strides may be zero or negative.
    ///
    /// ```
    /// use topk_kernels::View;
    /// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// // The transpose of a 2x3 row-major matrix, without a copy.
    /// let t = View::new(&data, [3, 2], [1, 3], 0)?;
    /// assert_eq!(t.sizes(), [3, 2]);
    /// assert!(View::new(&data, [3, 2], [1, 4], 0).is_err()); // reaches element 6
    /// # Ok::<(), topk_kernels::Error>(())
    /// ```
    pub fn new(data: &'a [T], sizes: [usize; D], strides: [isize; D], offset: usize) -> Result<Self, Error> {
        let layout = Layout::new(Operand::Input, sizes, strides, offset, data.len())?;
        Ok(View::from_slice(data, layout))
    }

    /// A row-major view of `sizes` at the start of `data` (which may be longer).
    pub fn contiguous(data: &'a [T], sizes: [usize; D]) -> Result<Self, Error> {
        let layout = Layout::contiguous(Operand::Input, sizes, data.len())?;
        Ok(View::from_slice(data, layout))
    }

    /// A view of memory this crate did not get as a slice: a tensor library's storage, a runtime's or a C
    /// caller's buffer. Element `coord` is at `ptr + Σ coord[d]·strides[d]` (in elements; strides may be
    /// zero or negative): `ptr` is the element at coordinate zero, as ndarray's `as_ptr` and DLPack's
    /// `data + byte_offset` give it.
    ///
    /// Everything that can be checked is, as [`View::new`] checks it: the sizes and strides (no
    /// overflow; the span from the lowest element reached to the highest within `isize::MAX` bytes), and
    /// `ptr` (neither null nor misaligned: [`Error::Alignment`]). A view without elements never uses
    /// `ptr`, which may then be anything.
    ///
    /// ```
    /// use topk_kernels::View;
    /// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// // The rows of a 2x3 matrix read backwards: coordinate zero is element 2.
    /// // SAFETY: every element the view reaches (0 to 5) is one of `data`'s, which nothing writes while
    /// // the view lives.
    /// let reversed = unsafe { View::from_raw_parts(data.as_ptr().add(2), [2, 3], [3, -1]) }?;
    /// assert_eq!(reversed.sizes(), [2, 3]);
    /// # Ok::<(), topk_kernels::Error>(())
    /// ```
    ///
    /// # Safety
    /// If the view has elements, then for every coordinate inside `sizes`, the element at
    /// `ptr + Σ coord[d]·strides[d]`:
    /// - lies inside one allocated object, the same for all of them (`ptr` among them);
    /// - is initialised, and valid for reads for `'a`;
    /// - is not written by anyone, through any pointer or reference, during `'a`.
    ///
    /// Only those elements are read. Memory between them (a stepped view's gaps, another view's
    /// elements interleaved with these) is never read or written, and others may write it meanwhile.
    pub unsafe fn from_raw_parts(ptr: *const T, sizes: [usize; D], strides: [isize; D]) -> Result<Self, Error> {
        let (layout, span) = Layout::spanning(Operand::Input, sizes, strides)?;
        let data = raw_data(Operand::Input, ptr.cast_mut(), span)?;
        Ok(View {
            data,
            layout,
            slice_len: None,
            borrow: PhantomData,
        })
    }

    fn from_slice(data: &'a [T], layout: Layout<D>) -> Self {
        View {
            data: NonNull::from(data).cast(),
            layout,
            slice_len: Some(data.len()),
            borrow: PhantomData,
        }
    }

    /// The validated layout.
    pub fn layout(&self) -> &Layout<D> {
        &self.layout
    }

    /// Sizes of the dimensions.
    pub fn sizes(&self) -> [usize; D] {
        self.layout.sizes
    }

    /// The slice the view was made from ([`View::new`], [`View::contiguous`], [`View::padded`]), whose
    /// element 0 is the layout's address 0; `None` for a view made from raw parts, whose memory between
    /// elements is not the view's to read.
    ///
    /// ```
    /// use topk_kernels::View;
    /// let data = [1u8, 2, 3, 4];
    /// let view = View::new(&data, [2], [2], 1)?;
    /// assert_eq!(view.source(), Some(&data[..]));
    /// // SAFETY: the two elements are `data`'s, unwritten while the view lives.
    /// let raw = unsafe { View::from_raw_parts(data.as_ptr().add(1), [2], [2]) }?;
    /// assert_eq!(raw.source(), None);
    /// # Ok::<(), topk_kernels::Error>(())
    /// ```
    pub fn source(&self) -> Option<&'a [T]> {
        let len = self.slice_len?;
        // SAFETY: `data` is the start of a slice of `len` elements borrowed for 'a (`from_slice`, the only
        // place that sets `slice_len`).
        Some(unsafe { core::slice::from_raw_parts(self.data.as_ptr(), len) })
    }

    /// Address 0 of the layout: every address the layout reaches from it holds one of the view's
    /// elements, readable and unchanging for `'a`.
    pub(crate) fn data(&self) -> NonNull<T> {
        self.data
    }

    /// The same view at rank 8 ([`Layout::pad`]).
    pub(crate) fn pad(&self) -> View<'a, T, MAX_RANK> {
        View {
            data: self.data,
            layout: self.layout.pad(),
            slice_len: self.slice_len,
            borrow: PhantomData,
        }
    }

    /// The sequence along `axis` through `coord` (which has 0 there) as a view of its own.
    #[cfg(feature = "rayon")]
    pub(crate) fn line(&self, coord: &[usize; D], axis: usize) -> Option<View<'a, T, 1>> {
        let layout = line(&self.layout, coord, axis)?;
        Some(View {
            data: self.data,
            layout,
            slice_len: self.slice_len,
            borrow: PhantomData,
        })
    }
}

/// The layout of the sequence along `axis` through `coord` (0 there, inside elsewhere): its elements are
/// the layout's own, at the same addresses.
#[cfg(feature = "rayon")]
fn line<const D: usize>(layout: &Layout<D>, coord: &[usize; D], axis: usize) -> Option<Layout<1>> {
    let inside = coord.iter().zip(&layout.sizes).all(|(&c, &size)| c < size);
    if !inside || coord.get(axis) != Some(&0) {
        return None;
    }
    Some(Layout {
        sizes: [layout.sizes[axis]],
        strides: [layout.strides[axis]],
        offset: usize::try_from(layout.address(coord)).ok()?,
        rank: 1,
    })
}

impl<'a, T: Copy> View<'a, T, 1> {
    /// The element at `position`, if the view has one there.
    #[inline]
    pub(crate) fn get(&self, position: usize) -> Option<T> {
        if position >= self.layout.sizes[0] {
            return None;
        }
        let address = self.layout.address(&[position]);
        // SAFETY: a coordinate inside the sizes: the constructor proved its address one of the view's
        // elements, readable for 'a.
        Some(unsafe { self.data.as_ptr().offset(address).read() })
    }

    /// The elements as one slice, if they are adjacent in memory (stride 1, or fewer than two).
    pub(crate) fn as_slice(&self) -> Option<&'a [T]> {
        let ([len], [stride]) = (self.layout.sizes, self.layout.strides);
        if len == 0 {
            return Some(&[]);
        }
        if stride != 1 && len > 1 {
            return None;
        }
        // SAFETY: the `len` elements from coordinate 0 are the view's (stride 1), readable and unchanging
        // for 'a; the first is aligned and inside the caller's allocation, like every element.
        Some(unsafe { core::slice::from_raw_parts(self.data.as_ptr().add(self.layout.offset), len) })
    }

    /// The `len` elements from position `first` on, as a view of their own.
    #[cfg(feature = "rayon")]
    pub(crate) fn part(&self, first: usize, len: usize) -> Option<View<'a, T, 1>> {
        let ([size], [stride]) = (self.layout.sizes, self.layout.strides);
        if first.checked_add(len)? > size {
            return None;
        }
        // Inside the view: first < size unless len is 0, when no address is reached.
        let offset = (self.layout.offset as isize).wrapping_add((first as isize).wrapping_mul(stride));
        Some(View {
            data: self.data,
            layout: Layout {
                sizes: [len],
                strides: [stride],
                offset: if len == 0 { 0 } else { usize::try_from(offset).ok()? },
                rank: 1,
            },
            slice_len: self.slice_len,
            borrow: PhantomData,
        })
    }
}

impl<'a, T> View<'a, T, MAX_RANK> {
    /// [`Layout::merge_dimensions`] of this view's layout.
    pub(crate) fn merge_dimensions<const N: usize>(
        &mut self,
        others: [&mut [isize; MAX_RANK]; N],
        axis: usize,
    ) -> usize {
        self.layout.merge_dimensions(others, axis)
    }

    /// A view of run-time rank (1..=8), padded to rank 8 as [`Layout::padded`] says: requests on it take
    /// the caller's axis (0 is the first of `sizes`, -1 the last), and errors name the caller's
    /// dimensions.
    pub fn padded(data: &'a [T], sizes: &[usize], strides: Option<&[isize]>, offset: usize) -> Result<Self, Error> {
        let layout = Layout::padded(Operand::Input, sizes, strides, offset, data.len())?;
        Ok(View::from_slice(data, layout))
    }

    /// [`View::from_raw_parts`] of run-time rank (1..=8), padded to rank 8 as [`View::padded`] is.
    ///
    /// # Safety
    /// As [`View::from_raw_parts`]'s, for the coordinates inside `sizes`.
    pub unsafe fn padded_from_raw_parts(ptr: *const T, sizes: &[usize], strides: &[isize]) -> Result<Self, Error> {
        let (layout, span) = Layout::padded_spanning(Operand::Input, sizes, strides)?;
        let data = raw_data(Operand::Input, ptr.cast_mut(), span)?;
        Ok(View {
            data,
            layout,
            slice_len: None,
            borrow: PhantomData,
        })
    }
}

/// A writable strided view: like [`View`], and no two coordinates may share an element. A borrow of the
/// elements it reaches, as `&'a mut [T]` is of a slice's.
#[derive(Debug)]
pub struct ViewMut<'a, T, const D: usize> {
    /// Address 0 of the layout.
    pub(crate) data: NonNull<T>,
    pub(crate) layout: Layout<D>,
    borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a writable view is an exclusive borrow of its elements, as a `&mut [T]` is, which is `Send`
// for `T: Send` and `Sync` for `T: Sync`.
unsafe impl<T: Send, const D: usize> Send for ViewMut<'_, T, D> {}
// SAFETY: as above; `&ViewMut` gives no access to the elements.
unsafe impl<T: Sync, const D: usize> Sync for ViewMut<'_, T, D> {}

impl<'a, T> ViewMut<'a, T, MAX_RANK> {
    /// A writable view of run-time rank (1..=8), padded to rank 8 as [`View::padded`] is.
    pub fn padded(data: &'a mut [T], sizes: &[usize], strides: Option<&[isize]>, offset: usize) -> Result<Self, Error> {
        let layout = Layout::padded(Operand::Output, sizes, strides, offset, data.len())?;
        layout.check_unaliased(Operand::Output)?;
        Ok(ViewMut::from_slice(data, layout))
    }

    /// [`ViewMut::from_raw_parts`] of run-time rank (1..=8), padded to rank 8 as [`View::padded`] is.
    ///
    /// # Safety
    /// As [`ViewMut::from_raw_parts`]'s, for the coordinates inside `sizes`.
    pub unsafe fn padded_from_raw_parts(ptr: *mut T, sizes: &[usize], strides: &[isize]) -> Result<Self, Error> {
        let (layout, span) = Layout::padded_spanning(Operand::Output, sizes, strides)?;
        layout.check_unaliased(Operand::Output)?;
        let data = raw_data(Operand::Output, ptr, span)?;
        Ok(ViewMut {
            data,
            layout,
            borrow: PhantomData,
        })
    }
}

impl<'a, T, const D: usize> ViewMut<'a, T, D> {
    /// A writable view with explicit strides and offset; it must not alias itself.
    pub fn new(data: &'a mut [T], sizes: [usize; D], strides: [isize; D], offset: usize) -> Result<Self, Error> {
        let layout = Layout::new(Operand::Output, sizes, strides, offset, data.len())?;
        layout.check_unaliased(Operand::Output)?;
        Ok(ViewMut::from_slice(data, layout))
    }

    /// A row-major writable view of `sizes` at the start of `data` (which may be longer).
    pub fn contiguous(data: &'a mut [T], sizes: [usize; D]) -> Result<Self, Error> {
        let layout = Layout::contiguous(Operand::Output, sizes, data.len())?;
        Ok(ViewMut::from_slice(data, layout))
    }

    /// A writable view of memory this crate did not get as a slice, as [`View::from_raw_parts`] reads
    /// one: `ptr` is the element at coordinate zero, strides are in elements. Checked as
    /// [`ViewMut::new`] checks a view (and `ptr` as [`View::from_raw_parts`] does), no two coordinates
    /// on one element included.
    ///
    /// # Safety
    /// If the view has elements, then for every coordinate inside `sizes`, the element at
    /// `ptr + Σ coord[d]·strides[d]`:
    /// - lies inside one allocated object, the same for all of them (`ptr` among them);
    /// - is initialised, and valid for reads and writes for `'a`;
    /// - is not read or written by anyone else, through any pointer or reference, during `'a`.
    ///
    /// Only those elements are written. Memory between them (a stepped view's gaps, another view's
    /// elements interleaved with these) is never read or written, and others may use it meanwhile.
    pub unsafe fn from_raw_parts(ptr: *mut T, sizes: [usize; D], strides: [isize; D]) -> Result<Self, Error> {
        let (layout, span) = Layout::spanning(Operand::Output, sizes, strides)?;
        layout.check_unaliased(Operand::Output)?;
        let data = raw_data(Operand::Output, ptr, span)?;
        Ok(ViewMut {
            data,
            layout,
            borrow: PhantomData,
        })
    }

    fn from_slice(data: &'a mut [T], layout: Layout<D>) -> Self {
        ViewMut {
            data: NonNull::from(data).cast(),
            layout,
            borrow: PhantomData,
        }
    }

    /// A row-major writable view of `sizes`, of rank `rank` as a [`padded`](ViewMut::padded) one is
    /// (the first `D - rank` sizes are 1).
    #[cfg(feature = "alloc")]
    pub(crate) fn contiguous_of_rank(data: &'a mut [T], sizes: [usize; D], rank: usize) -> Result<Self, Error> {
        let layout = Layout::contiguous(Operand::Output, sizes, data.len())?.with_rank(rank);
        Ok(ViewMut::from_slice(data, layout))
    }

    /// The validated layout.
    pub fn layout(&self) -> &Layout<D> {
        &self.layout
    }

    /// Sizes of the dimensions.
    pub fn sizes(&self) -> [usize; D] {
        self.layout.sizes
    }

    /// A shorter-lived view of the same elements.
    pub fn reborrow(&mut self) -> ViewMut<'_, T, D> {
        ViewMut {
            data: self.data,
            layout: self.layout,
            borrow: PhantomData,
        }
    }

    /// The sequence along `axis` through `coord` (which has 0 there) as a view of its own.
    #[cfg(feature = "rayon")]
    pub(crate) fn line(&mut self, coord: &[usize; D], axis: usize) -> Option<ViewMut<'_, T, 1>> {
        let layout = line(&self.layout, coord, axis)?;
        Some(ViewMut {
            data: self.data,
            layout,
            borrow: PhantomData,
        })
    }
}

impl<T> ViewMut<'_, T, 1> {
    /// Writes `items` along the one dimension, from its first element; items past its size are dropped.
    pub(crate) fn write_all(self, items: impl IntoIterator<Item = T>) {
        for (position, item) in (0..self.layout.sizes[0]).zip(items) {
            let address = self.layout.address(&[position]);
            // SAFETY: a coordinate inside the sizes: the constructor proved its address one of the view's
            // elements, writable and not accessed otherwise for its lifetime.
            unsafe { self.data.as_ptr().offset(address).write(item) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Operand = Operand::Values;

    fn overflow<const D: usize>() -> Result<Layout<D>, Error> {
        Err(Error::Overflow { operand: T })
    }

    fn out_of_bounds(lowest: isize, highest: isize, len: usize) -> Error {
        Error::OutOfBounds {
            operand: T,
            lowest,
            highest,
            len,
        }
    }

    #[test]
    fn new_accepts_every_layout_inside_the_slice() {
        // Row-major, transposed, stepped, reversed, broadcast: each reaches exactly the last element.
        let cases: [([usize; 2], [isize; 2], usize, usize); 6] = [
            ([2, 3], [3, 1], 0, 6),
            ([3, 2], [1, 3], 0, 6),
            ([2, 3], [6, 2], 0, 11),
            ([2, 3], [-3, -1], 5, 6),
            ([4, 3], [0, 1], 2, 5),
            ([1, 1], [isize::MAX, isize::MIN], 0, 1),
        ];
        for (sizes, strides, offset, len) in cases {
            let layout = Layout::new(T, sizes, strides, offset, len).unwrap();
            assert_eq!(
                (layout.sizes(), layout.strides(), layout.offset()),
                (sizes, strides, offset)
            );
            assert_eq!(layout.elements(), sizes[0] * sizes[1]);
            // One element less is out of bounds (the size-1 layout reaches only its offset).
            assert!(
                Layout::new(T, sizes, strides, offset, len - 1).is_err(),
                "{sizes:?} {strides:?}"
            );
        }
        // No coordinate, no address: anything goes.
        let empty = Layout::new(T, [0, 7], [isize::MAX, isize::MIN], usize::MAX, 0).unwrap();
        assert_eq!(empty.elements(), 0);
    }

    #[test]
    fn new_rejects_with_the_reach() {
        assert_eq!(Layout::new(T, [2, 3], [3, 1], 0, 5), Err(out_of_bounds(0, 5, 5)));
        assert_eq!(Layout::new(T, [2, 3], [3, 1], 4, 9), Err(out_of_bounds(4, 9, 9)));
        assert_eq!(Layout::new(T, [2, 3], [-3, 1], 2, 9), Err(out_of_bounds(-1, 4, 9)));
        assert_eq!(Layout::new(T, [5], [-2], 7, 100), Err(out_of_bounds(-1, 7, 100)));
        assert_eq!(Layout::new(T, [usize::MAX, 2], [0, 0], 0, 1), overflow());
        assert_eq!(Layout::new(T, [isize::MAX as usize + 1], [0], 0, 1), overflow());
        assert_eq!(Layout::new(T, [3], [isize::MAX / 2 + 1], 0, 1), overflow());
        assert_eq!(Layout::new(T, [2, 2], [isize::MAX, 1], 0, 1), overflow());
        assert_eq!(Layout::new(T, [2, 2], [isize::MIN + 1, -2], 0, 1), overflow());
        assert_eq!(
            Layout::new(T, [1], [1], isize::MAX as usize + 1, usize::MAX),
            overflow()
        );
    }

    #[test]
    fn contiguous_is_row_major() {
        let layout = Layout::contiguous(T, [2, 3, 4], 24).unwrap();
        assert_eq!((layout.strides(), layout.offset()), ([12, 4, 1], 0));
        assert_eq!(layout.address(&[1, 2, 3]), 23);
        // A zero size leaves the view empty whatever the slice.
        assert_eq!(Layout::contiguous(T, [5, 0, 3], 0).unwrap().strides(), [3, 3, 1]);
        assert_eq!(Layout::contiguous(T, [2, 3], 5), Err(out_of_bounds(0, 5, 5)));
        assert_eq!(
            Layout::contiguous(T, [usize::MAX, 2], 0),
            Err(Error::Overflow { operand: T })
        );
    }

    /// Every (sequence, position) of a layout and of `others` (strides over its sizes), in the walk's
    /// order: sequences row-major over the dimensions but `axis`.
    fn addresses_in_order<const N: usize>(
        layout: &Layout<MAX_RANK>,
        others: &[[isize; MAX_RANK]; N],
        axis: usize,
    ) -> Vec<[isize; 3]> {
        let mut all = Vec::new();
        let mut coord = [0usize; MAX_RANK];
        'sequences: loop {
            for position in 0..layout.sizes[axis] {
                coord[axis] = position;
                let mut each = [layout.address(&coord), 0, 0];
                for (slot, strides) in each[1..].iter_mut().zip(others) {
                    *slot = address(0, strides, &coord);
                }
                all.push(each);
            }
            coord[axis] = 0;
            for d in (0..MAX_RANK).rev().filter(|&d| d != axis) {
                if coord[d] + 1 < layout.sizes[d] {
                    coord[d] += 1;
                    continue 'sequences;
                }
                coord[d] = 0;
            }
            return all;
        }
    }

    #[test]
    fn merged_dimensions_keep_every_address_in_order() {
        /// Sizes, strides, the outputs' strides, the axis, and the merged sizes (the last dimensions).
        type Case<'a> = (&'a [usize], &'a [isize], [&'a [isize]; 2], usize, &'a [usize]);
        let cases: [Case<'_>; 5] = [
            // Contiguous, a non-last axis: the inner block of three dimensions is one.
            (
                &[3, 4, 1, 2, 5],
                &[40, 10, 10, 5, 1],
                [&[20, 10, 10, 5, 1], &[20, 10, 10, 5, 1]],
                1,
                &[3, 4, 10],
            ),
            // A last axis: everything in front is one dimension of rows.
            (&[2, 3, 4], &[12, 4, 1], [&[6, 2, 1], &[6, 2, 1]], 2, &[6, 4]),
            // The values' gap between the outer two keeps them apart.
            (&[2, 3, 4], &[12, 4, 1], [&[8, 2, 1], &[6, 2, 1]], 2, &[2, 3, 4]),
            // Reversed together, they merge; a broadcast pair merges too.
            (
                &[2, 3, 4, 5],
                &[-3, -1, 0, 0],
                [&[12, 4, 1, 4], &[12, 4, 1, 4]],
                3,
                &[6, 4, 5],
            ),
            // A transposed inner pair stays two; the axis of size 1 stays.
            (&[3, 1, 4], &[1, 7, 3], [&[4, 4, 1], &[4, 4, 1]], 1, &[3, 1, 4]),
        ];
        for (sizes, strides, [values, indices], axis, merged) in cases {
            let pad = MAX_RANK - sizes.len();
            let padded = |strides: &[isize]| {
                let mut all = [0; MAX_RANK];
                all[pad..].copy_from_slice(strides);
                all
            };
            let mut layout = Layout::<MAX_RANK>::padded(T, sizes, Some(strides), 12, 256).unwrap();
            let outputs = [padded(values), padded(indices)];
            let before = addresses_in_order(&layout, &outputs, axis + pad);
            let [mut values, mut indices] = outputs;
            let merged_axis = layout.merge_dimensions([&mut values, &mut indices], axis + pad);
            assert_eq!(
                &layout.sizes[MAX_RANK - merged.len()..],
                merged,
                "{sizes:?} {strides:?}"
            );
            assert_eq!(layout.rank(), merged.len());
            assert_eq!(addresses_in_order(&layout, &[values, indices], merged_axis), before);
        }
    }

    #[test]
    fn addresses_follow_signed_strides() {
        let layout = Layout::new(T, [2, 3], [-3, -1], 5, 6).unwrap();
        assert_eq!(layout.address(&[0, 0]), 5);
        assert_eq!(layout.address(&[0, 2]), 3);
        assert_eq!(layout.address(&[1, 2]), 0);
    }

    fn aliasing<const D: usize>(sizes: [usize; D], strides: [isize; D]) -> Result<(), Error> {
        let reach: usize = sizes
            .iter()
            .zip(&strides)
            .map(|(&s, &t)| (s.max(1) - 1) * t.unsigned_abs())
            .sum();
        let offset: usize = sizes
            .iter()
            .zip(&strides)
            .filter(|&(_, &t)| t < 0)
            .map(|(&s, &t)| (s.max(1) - 1) * t.unsigned_abs())
            .sum();
        Layout::new(T, sizes, strides, offset, reach + 1)
            .unwrap()
            .check_unaliased(T)
    }

    #[test]
    fn check_unaliased_accepts_injective_layouts() {
        assert_eq!(aliasing([2, 3], [3, 1]), Ok(()));
        assert_eq!(aliasing([2, 3], [1, 2]), Ok(())); // transposed
        assert_eq!(aliasing([4], [2]), Ok(())); // every other word
        assert_eq!(aliasing([2, 3], [-7, 2]), Ok(())); // stepped and reversed
        assert_eq!(aliasing([1, 5, 1], [0, 1, 0]), Ok(())); // zero strides on size-1 dimensions
        assert_eq!(aliasing([2, 4], [1, 2]), Ok(())); // interleaved rows
        assert_eq!(aliasing([3, 0], [0, 0]), Ok(())); // empty
        assert_eq!(aliasing([2, 2, 2], [1, 2, 4]), Ok(()));
    }

    #[test]
    fn check_unaliased_rejects_with_the_dimension() {
        assert_eq!(aliasing([2], [0]), Err(Error::Aliasing { operand: T, dim: 0 }));
        assert_eq!(
            aliasing([1, 3, 2], [5, 1, 0]),
            Err(Error::Aliasing { operand: T, dim: 2 })
        );
        assert_eq!(aliasing([2, 3], [2, 1]), Err(Error::Aliasing { operand: T, dim: 0 }));
        assert_eq!(aliasing([3, 2], [-1, 2]), Err(Error::Aliasing { operand: T, dim: 1 }));
        // (1, 1, 0) and (0, 0, 1) both land on 3.
        assert_eq!(
            aliasing([2, 2, 2], [1, 2, 3]),
            Err(Error::Aliasing { operand: T, dim: 2 })
        );
        // The documented conservative case: sizes [3, 2], strides [2, 3] do not collide, yet are refused.
        assert_eq!(aliasing([3, 2], [2, 3]), Err(Error::Aliasing { operand: T, dim: 1 }));
        assert_eq!(aliasing([2, 2], [4, 4]), Err(Error::Aliasing { operand: T, dim: 1 }));
    }

    #[test]
    fn padded_puts_size_1_dimensions_in_front() {
        let layout = Layout::padded(T, &[2, 3, 4], None, 0, 24).unwrap();
        assert_eq!(layout.sizes(), [1, 1, 1, 1, 1, 2, 3, 4]);
        assert_eq!(layout.strides()[5..], [12, 4, 1]);
        assert_eq!(layout.elements(), 24);
        let layout = Layout::padded(T, &[3, 2], Some(&[1, -3]), 3, 6).unwrap();
        assert_eq!(layout.sizes(), [1, 1, 1, 1, 1, 1, 3, 2]);
        assert_eq!(layout.strides(), [0, 0, 0, 0, 0, 0, 1, -3]);
        assert_eq!(layout.address(&[0, 0, 0, 0, 0, 0, 2, 1]), 2);
        let full = Layout::padded(T, &[1, 2, 1, 2, 1, 2, 1, 2], None, 1, 17).unwrap();
        assert_eq!(full.sizes(), [1, 2, 1, 2, 1, 2, 1, 2]);
        assert_eq!(full.offset(), 1);
        assert_eq!(full.rank(), 8);
    }

    #[test]
    fn axes_count_from_the_callers_first_or_last_dimension() {
        let padded = Layout::padded(T, &[2, 3, 4], None, 0, 24).unwrap();
        assert_eq!(padded.rank(), 3);
        assert_eq!(padded.axis_index(0), Some(5));
        assert_eq!(padded.axis_index(2), Some(7));
        assert_eq!(padded.axis_index(-1), Some(7));
        assert_eq!(padded.axis_index(-3), Some(5));
        for outside in [3, -4, isize::MAX, isize::MIN] {
            assert_eq!(padded.axis_index(outside), None, "{outside}");
        }
        let typed = Layout::contiguous(T, [2, 3], 6).unwrap();
        assert_eq!(typed.rank(), 2);
        assert_eq!((typed.axis_index(0), typed.axis_index(-1)), (Some(0), Some(1)));
        assert_eq!((typed.axis_index(2), typed.axis_index(-3)), (None, None));
        // Padding a typed layout keeps the caller's rank.
        assert_eq!(typed.pad().rank(), 2);
        assert_eq!(typed.pad().axis_index(-2), Some(6));
    }

    #[test]
    fn padded_aliasing_names_the_callers_dimension() {
        let layout = Layout::padded(T, &[2, 3], Some(&[0, 1]), 0, 3).unwrap();
        assert_eq!(layout.check_unaliased(T), Err(Error::Aliasing { operand: T, dim: 0 }));
    }

    #[test]
    fn padded_rejects_ranks_and_reach() {
        assert_eq!(Layout::padded(T, &[], None, 0, 1), Err(Error::Rank { rank: 0 }));
        assert_eq!(Layout::padded(T, &[1; 9], None, 0, 1), Err(Error::Rank { rank: 9 }));
        assert_eq!(
            Layout::padded(T, &[2, 2], Some(&[1]), 0, 4),
            Err(Error::Rank { rank: 2 })
        );
        // The reach is reported from the offset, for row-major and explicit strides alike.
        assert_eq!(Layout::padded(T, &[4], None, 2, 3), Err(out_of_bounds(2, 5, 3)));
        assert_eq!(Layout::padded(T, &[4], Some(&[1]), 2, 3), Err(out_of_bounds(2, 5, 3)));
        assert_eq!(Layout::padded(T, &[4], None, 2, 5), Err(out_of_bounds(2, 5, 5)));
        assert_eq!(
            Layout::padded(T, &[usize::MAX, 3], None, 0, 1),
            Err(Error::Overflow { operand: T })
        );
    }
}
