//! `topk run`: top-K of a .npy file into two .npy files.

use std::path::PathBuf;

use npyz::{AutoSerialize, Deserialize};
use topk_kernels::{Backend, Direction, Error, IndexType, TopK, View, ViewMut, padded_axis, with_index_type};

use crate::npy::{self, Npy, checked_elements};
use crate::types::{IndexSample, Sample, with_npy_dtype};

/// A validated `run` request.
pub(crate) struct Request {
    pub(crate) input: PathBuf,
    pub(crate) axis: i64,
    pub(crate) k: usize,
    pub(crate) direction: Direction,
    pub(crate) values: PathBuf,
    pub(crate) indices: PathBuf,
    pub(crate) index_type: IndexType,
    pub(crate) backend: Backend,
}

/// Reads, computes and encodes everything in memory, then writes both outputs or neither.
pub(crate) fn run(request: &Request) -> Result<(), String> {
    if request.values == request.indices {
        return Err(format!(
            "--values and --indices name the same file {}",
            request.values.display()
        ));
    }
    let path = request.input.display();
    let bytes = std::fs::read(&request.input).map_err(|e| format!("cannot read {path}: {e}"))?;
    let npy = Npy::parse(bytes).map_err(|e| format!("{path}: {e}"))?;
    let axis = crate::normalize_axis(request.axis, npy.shape.len())?;
    let (values, indices) = with_npy_dtype!(
        npy.dtype,
        T => with_index_type!(request.index_type, I => compute::<T, I>(&npy, axis, request)?),
        bf16 => return Err("bf16 has no .npy type code".to_string())
    );
    npy::write_all_or_none(&[(&request.values, &values), (&request.indices, &indices)])
}

/// The two output files' bytes.
fn compute<T, I>(npy: &Npy, axis: usize, request: &Request) -> Result<(Vec<u8>, Vec<u8>), String>
where
    T: Sample + Deserialize + AutoSerialize,
    I: IndexSample + AutoSerialize,
{
    let library = |e: Error| e.to_string();
    let data: Vec<T> = npy.elements()?;
    let shape = &npy.shape;
    let rank = shape.len();
    // Fortran order is a view with column-major strides over the same data: no transposing copy.
    let strides = npy.fortran.then(|| column_major(shape));
    let input = View::padded(&data, shape, strides.as_deref(), 0).map_err(library)?;
    let (k, len) = (request.k, shape[axis]);
    if k > len {
        // Checked before allocating the outputs, whose size grows with K.
        return Err(library(Error::K { k, len, axis }));
    }
    let mut out_shape = shape.clone();
    out_shape[axis] = k;
    let count = checked_elements(&out_shape, size_of::<T>().max(size_of::<I>())).ok_or("the output is too large")?;
    let mut values = filled(count, T::default())?;
    let mut indices = filled(count, I::default())?;
    let mut plan = TopK::new(
        input,
        padded_axis(axis, rank),
        k,
        request.direction,
        ViewMut::padded(&mut values, &out_shape, None, 0).map_err(library)?,
        ViewMut::padded(&mut indices, &out_shape, None, 0).map_err(library)?,
    )
    .map_err(library)?;
    let mut scratch = filled(plan.scratch_len(), 0u64)?;
    let all = 0..plan.sequences();
    plan.run_sequences(all, request.backend, &mut scratch)
        .map_err(library)?;
    Ok((npy::encode(&out_shape, &values)?, npy::encode(&out_shape, &indices)?))
}

/// Column-major strides of `shape`, in elements. The caller has checked that the product fits.
fn column_major(shape: &[usize]) -> Vec<isize> {
    let mut stride = 1isize;
    shape
        .iter()
        .map(|&size| {
            let this = stride;
            stride = stride.saturating_mul(size.max(1) as isize);
            this
        })
        .collect()
}

/// A vector of `len` copies of `value`, or an error (not an abort) when memory runs out.
pub(crate) fn filled<T: Clone>(len: usize, value: T) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| format!("cannot allocate {len} elements of {} bytes", size_of::<T>()))?;
    v.resize(len, value);
    Ok(v)
}
