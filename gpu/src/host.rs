//! Output views over host slices, for [`TopKGpu::run_host`](crate::TopKGpu::run_host).

use topk_kernels::{Layout, MAX_RANK, Operand};

use crate::error::GpuError;

/// A writable strided view over a host slice for [`TopKGpu::run_host`](crate::TopKGpu::run_host): the
/// same rules as the CPU crate's `ViewMut` (inside the slice, no overflow, no two coordinates on one
/// element).
#[derive(Debug)]
pub struct HostViewMut<'a, T, const D: usize> {
    pub(crate) data: &'a mut [T],
    layout: Layout<D>,
}

impl<'a, T, const D: usize> HostViewMut<'a, T, D> {
    /// A view with explicit strides (in elements) and offset.
    pub fn new(data: &'a mut [T], sizes: [usize; D], strides: [isize; D], offset: usize) -> Result<Self, GpuError> {
        let layout = Layout::new(Operand::Output, sizes, strides, offset, data.len())?;
        layout.check_unaliased(Operand::Output)?;
        Ok(HostViewMut { data, layout })
    }

    /// A row-major view of `sizes` at the start of `data`.
    pub fn contiguous(data: &'a mut [T], sizes: [usize; D]) -> Result<Self, GpuError> {
        let layout = Layout::contiguous(Operand::Output, sizes, data.len())?;
        Ok(HostViewMut { data, layout })
    }

    /// The validated layout.
    pub fn layout(&self) -> &Layout<D> {
        &self.layout
    }
}

impl<'a, T> HostViewMut<'a, T, MAX_RANK> {
    /// A view of run-time rank (1..=8), padded to rank 8 as `Layout::padded` says.
    pub fn padded(
        data: &'a mut [T],
        sizes: &[usize],
        strides: Option<&[isize]>,
        offset: usize,
    ) -> Result<Self, GpuError> {
        let layout = Layout::padded(Operand::Output, sizes, strides, offset, data.len())?;
        layout.check_unaliased(Operand::Output)?;
        Ok(HostViewMut { data, layout })
    }
}
