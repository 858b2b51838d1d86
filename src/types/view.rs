//! Strided views of 1 to 8 dimensions over slices, validated once in the constructor.
//!
//! A view is a slice, `sizes[D]`, `strides[D]` in elements (DML_BUFFER_TENSOR_DESC's Strides, here signed so
//! that reversed numpy views need no copy) and an element offset. The constructor proves, once, that every
//! address `offset + Σ coord[d]·strides[d]` lies inside the slice without overflow (the rule of ndarray's
//! `can_index_slice_with_strides`); the kernels rely on that and never check again.

use crate::types::error::{Error, Tensor};

/// The highest rank a view may have (DirectML's limit).
pub const MAX_RANK: usize = 8;

/// Sizes, strides and offset of a view whose every reachable address is known to fit a slice of `len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout<const D: usize> {
    // Read in place by the walk (`plan.rs`), where copying the arrays out costs flash; written only here.
    pub(crate) sizes: [usize; D],
    pub(crate) strides: [isize; D],
    offset: usize,
}

impl<const D: usize> Layout<D> {
    const RANK_IS_SUPPORTED: () = assert!(D >= 1 && D <= MAX_RANK, "views have 1 to 8 dimensions");

    /// Validates a layout for a slice of `len` elements. `tensor` only names the tensor in errors.
    pub fn new(
        tensor: Tensor,
        sizes: [usize; D],
        strides: [isize; D],
        offset: usize,
        len: usize,
    ) -> Result<Self, Error> {
        let () = Self::RANK_IS_SUPPORTED;
        let overflow = Error::Overflow { tensor };
        let mut elements = 1usize;
        for &size in &sizes {
            elements = elements.checked_mul(size).ok_or(overflow)?;
        }
        if elements > isize::MAX as usize {
            return Err(overflow);
        }
        let layout = Layout { sizes, strides, offset };
        if elements == 0 {
            // No coordinate exists, so no address is reachable.
            return Ok(layout);
        }
        let start = isize::try_from(offset).map_err(|_| overflow)?;
        let (mut lowest, mut highest) = (start, start);
        for (&size, &stride) in sizes.iter().zip(&strides) {
            // `size - 1` fits isize because the element count does.
            let reach = ((size - 1) as isize).checked_mul(stride).ok_or(overflow)?;
            if reach < 0 {
                lowest = lowest.checked_add(reach).ok_or(overflow)?;
            } else {
                highest = highest.checked_add(reach).ok_or(overflow)?;
            }
        }
        if lowest < 0 || highest as usize >= len {
            return Err(Error::OutOfBounds {
                tensor,
                lowest,
                highest,
                len,
            });
        }
        Ok(layout)
    }

    /// Row-major strides for `sizes` (the last dimension contiguous), offset 0.
    pub fn contiguous(tensor: Tensor, sizes: [usize; D], len: usize) -> Result<Self, Error> {
        let () = Self::RANK_IS_SUPPORTED;
        let mut strides = [0isize; D];
        let mut step = 1isize;
        for d in (0..D).rev() {
            strides[d] = step;
            // A zero size makes the view empty; later strides do not matter then.
            let size = isize::try_from(sizes[d].max(1)).map_err(|_| Error::Overflow { tensor })?;
            step = step.checked_mul(size).unwrap_or(isize::MAX);
        }
        Self::new(tensor, sizes, strides, 0, len)
    }

    /// Checks that no two coordinates map to one address (what an output view needs).
    ///
    /// The test is ndarray's sufficient one: ordered by |stride|, each dimension's stride must exceed the
    /// reach of all smaller ones together. It accepts every permuted or stepped layout (e.g. u32 indices
    /// every other word of a u64 buffer) and rejects zero strides on dimensions longer than 1. A few
    /// exotic interleavings that happen not to collide (sizes `[3, 2]`, strides `[2, 3]`) are rejected too.
    pub fn check_unaliased(&self, tensor: Tensor) -> Result<(), Error> {
        if self.elements() == 0 {
            return Ok(());
        }
        let mut dims = [0usize; D];
        let mut used = 0;
        for d in 0..D {
            if self.sizes[d] > 1 {
                if self.strides[d] == 0 {
                    return Err(Error::Aliasing { tensor, dim: d });
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
                return Err(Error::Aliasing { tensor, dim: d });
            }
            // No overflow: the constructor bounded every reach by the slice length.
            reach += (self.sizes[d] - 1) * stride;
        }
        Ok(())
    }

    /// Sizes of the dimensions.
    pub fn sizes(&self) -> [usize; D] {
        self.sizes
    }

    /// Strides of the dimensions, in elements.
    pub fn strides(&self) -> [isize; D] {
        self.strides
    }

    /// Element offset of coordinate zero.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of elements (the product of the sizes).
    pub fn elements(&self) -> usize {
        // Cannot overflow: the constructor checked the product.
        self.sizes.iter().product()
    }

    /// The same layout at rank 8: dimensions of size 1 (stride 0) in front, as [`Layout::padded`] makes
    /// them. It reaches the same addresses, so it fits the same slice.
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
        }
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

impl Layout<MAX_RANK> {
    /// A layout whose rank (1..=8) is known only at run time, padded in front to rank 8 with dimensions
    /// of size 1: axis `a` of the original is axis [`padded_axis`]`(a, rank)` of the result, and the
    /// elements, their order and their addresses are unchanged. `strides: None` means row-major.
    pub fn padded(
        tensor: Tensor,
        sizes: &[usize],
        strides: Option<&[isize]>,
        offset: usize,
        len: usize,
    ) -> Result<Self, Error> {
        let rank = sizes.len();
        if !(1..=MAX_RANK).contains(&rank) || strides.is_some_and(|s| s.len() != rank) {
            return Err(Error::Rank { rank });
        }
        let pad = MAX_RANK - rank;
        let mut padded_sizes = [1usize; MAX_RANK];
        padded_sizes[pad..].copy_from_slice(sizes);
        match strides {
            None => {
                // Only the strides are wanted here (no slice is too long for them); the bounds are checked
                // next, with the offset, so that an error reports the addresses the view really reaches.
                let row_major = Layout::contiguous(tensor, padded_sizes, usize::MAX)?;
                Layout::new(tensor, padded_sizes, row_major.strides, offset, len)
            }
            Some(strides) => {
                let mut padded_strides = [0isize; MAX_RANK];
                padded_strides[pad..].copy_from_slice(strides);
                Layout::new(tensor, padded_sizes, padded_strides, offset, len)
            }
        }
    }
}

/// Where axis `axis` of a rank-`rank` tensor lands after [`Layout::padded`]: `axis + 8 - rank`.
///
/// Out-of-range axes stay out of range (they are reported when the plan is made).
pub fn padded_axis(axis: usize, rank: usize) -> usize {
    axis.saturating_add(MAX_RANK.saturating_sub(rank))
}

/// A read-only strided view of `D` dimensions over a slice.
#[derive(Clone, Copy, Debug)]
pub struct View<'a, T, const D: usize> {
    data: &'a [T],
    layout: Layout<D>,
}

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
        let layout = Layout::new(Tensor::Input, sizes, strides, offset, data.len())?;
        Ok(View { data, layout })
    }

    /// A row-major view of `sizes` at the start of `data` (which may be longer).
    pub fn contiguous(data: &'a [T], sizes: [usize; D]) -> Result<Self, Error> {
        let layout = Layout::contiguous(Tensor::Input, sizes, data.len())?;
        Ok(View { data, layout })
    }

    /// The validated layout.
    pub fn layout(&self) -> &Layout<D> {
        &self.layout
    }

    /// Sizes of the dimensions.
    pub fn sizes(&self) -> [usize; D] {
        self.layout.sizes
    }

    /// The whole underlying slice.
    pub fn data(&self) -> &'a [T] {
        self.data
    }

    /// The same view at rank 8 ([`Layout::pad`]).
    pub(crate) fn pad(&self) -> View<'a, T, MAX_RANK> {
        View {
            data: self.data,
            layout: self.layout.pad(),
        }
    }
}

/// A writable strided view: like [`View`], and no two coordinates may share an element.
#[derive(Debug)]
pub struct ViewMut<'a, T, const D: usize> {
    pub(crate) data: &'a mut [T],
    pub(crate) layout: Layout<D>,
}

impl<'a, T> View<'a, T, MAX_RANK> {
    /// A view of run-time rank (1..=8), padded to rank 8 as [`Layout::padded`] says.
    pub fn padded(data: &'a [T], sizes: &[usize], strides: Option<&[isize]>, offset: usize) -> Result<Self, Error> {
        let layout = Layout::padded(Tensor::Input, sizes, strides, offset, data.len())?;
        Ok(View { data, layout })
    }
}

impl<'a, T> ViewMut<'a, T, MAX_RANK> {
    /// A writable view of run-time rank (1..=8), padded to rank 8 as [`Layout::padded`] says.
    pub fn padded(data: &'a mut [T], sizes: &[usize], strides: Option<&[isize]>, offset: usize) -> Result<Self, Error> {
        let layout = Layout::padded(Tensor::Output, sizes, strides, offset, data.len())?;
        layout.check_unaliased(Tensor::Output)?;
        Ok(ViewMut { data, layout })
    }
}

impl<'a, T, const D: usize> ViewMut<'a, T, D> {
    /// A writable view with explicit strides and offset; it must not alias itself.
    pub fn new(data: &'a mut [T], sizes: [usize; D], strides: [isize; D], offset: usize) -> Result<Self, Error> {
        let layout = Layout::new(Tensor::Output, sizes, strides, offset, data.len())?;
        layout.check_unaliased(Tensor::Output)?;
        Ok(ViewMut { data, layout })
    }

    /// A row-major writable view of `sizes` at the start of `data` (which may be longer).
    pub fn contiguous(data: &'a mut [T], sizes: [usize; D]) -> Result<Self, Error> {
        let layout = Layout::contiguous(Tensor::Output, sizes, data.len())?;
        Ok(ViewMut { data, layout })
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
            data: &mut *self.data,
            layout: self.layout,
        }
    }

    /// The line of `len` elements `stride` apart from `offset`, inside the same slice.
    #[cfg(feature = "rayon")]
    pub(crate) fn line(&mut self, len: usize, stride: isize, offset: usize) -> Result<ViewMut<'_, T, 1>, Error> {
        let layout = Layout::new(Tensor::Output, [len], [stride], offset, self.data.len())?;
        Ok(ViewMut {
            data: &mut *self.data,
            layout,
        })
    }
}

impl<T> ViewMut<'_, T, 1> {
    /// Writes `items` along the one dimension, from its first element; items past its size are dropped.
    pub(crate) fn write_all(self, items: impl IntoIterator<Item = T>) {
        let [stride] = self.layout.strides();
        let mut address = self.layout.offset() as isize;
        for item in items.into_iter().take(self.layout.sizes[0]) {
            // Validated: every coordinate's address is inside the slice.
            if let Some(out) = self.data.get_mut(address as usize) {
                *out = item;
            }
            // Wrapping: the step after the last item is never used, and a one-element view may have any
            // stride (fuzz finding 3).
            address = address.wrapping_add(stride);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Tensor = Tensor::Values;

    fn overflow<const D: usize>() -> Result<Layout<D>, Error> {
        Err(Error::Overflow { tensor: T })
    }

    fn out_of_bounds(lowest: isize, highest: isize, len: usize) -> Error {
        Error::OutOfBounds {
            tensor: T,
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
            Err(Error::Overflow { tensor: T })
        );
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
        assert_eq!(aliasing([2], [0]), Err(Error::Aliasing { tensor: T, dim: 0 }));
        assert_eq!(
            aliasing([1, 3, 2], [5, 1, 0]),
            Err(Error::Aliasing { tensor: T, dim: 2 })
        );
        assert_eq!(aliasing([2, 3], [2, 1]), Err(Error::Aliasing { tensor: T, dim: 0 }));
        assert_eq!(aliasing([3, 2], [-1, 2]), Err(Error::Aliasing { tensor: T, dim: 1 }));
        // (1, 1, 0) and (0, 0, 1) both land on 3.
        assert_eq!(
            aliasing([2, 2, 2], [1, 2, 3]),
            Err(Error::Aliasing { tensor: T, dim: 2 })
        );
        // The documented conservative case: sizes [3, 2], strides [2, 3] do not collide, yet are refused.
        assert_eq!(aliasing([3, 2], [2, 3]), Err(Error::Aliasing { tensor: T, dim: 1 }));
        assert_eq!(aliasing([2, 2], [4, 4]), Err(Error::Aliasing { tensor: T, dim: 1 }));
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
        assert_eq!(padded_axis(0, 3), 5);
        assert_eq!(padded_axis(2, 3), 7);
        assert_eq!(padded_axis(7, 8), 7);
        assert_eq!(padded_axis(3, 3), 8); // still out of range
        assert_eq!(padded_axis(usize::MAX, 1), usize::MAX);
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
            Err(Error::Overflow { tensor: T })
        );
    }
}
