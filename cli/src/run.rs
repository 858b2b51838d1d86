//! `topk run`: top-K of a .npy file into two .npy files.

use std::path::PathBuf;
use std::time::Instant;

use topk_kernels::{Backend, Direction, Error, IndexType, TopK, View, ViewMut, with_index_type};

use crate::files::{self, Outputs};
use crate::npy::{self, Npy, NpyElement, checked_elements};
use crate::progress::Progress;
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

/// Pieces the selection is cut into, so that the progress bar moves on a long run.
const PIECES: usize = 256;

/// What one run did, for its summary line.
struct Done {
    /// The engine that ran.
    backend: Backend,
    /// Seconds spent selecting.
    select_s: f64,
}

/// Checks the outputs, reads, computes and encodes everything in memory, then writes both outputs or
/// neither. Returns the summary line.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let start = Instant::now();
    let outputs = Outputs::prepare(
        &request.input,
        &[("--values", &request.values), ("--indices", &request.indices)],
    )?;
    let path = request.input.display();
    let mut progress = Progress::new("reading", 0, true);
    let bytes = files::read_input(&request.input, &mut |done, total| progress.set_of(done, total))?;
    let npy = Npy::parse(bytes).map_err(|e| format!("{path}: {e}"))?;
    let axis = crate::normalize_axis(request.axis, npy.shape.len())?;
    let mut out_shape = npy.shape.clone();
    out_shape[axis] = request.k;
    let (values, indices, done) = with_npy_dtype!(
        npy.dtype,
        T => with_index_type!(request.index_type, I => compute::<T, I>(&npy, axis, request, &mut progress)?),
        bf16 => return Err("bf16 has no .npy type code".to_string())
    );
    progress.stage("writing", (values.len() + indices.len()) as u64);
    outputs.write(&[&values, &indices], &mut |bytes| progress.add(bytes))?;
    drop(progress);
    let shape = |shape: &[usize]| shape.iter().map(usize::to_string).collect::<Vec<_>>().join("x");
    let direction = match request.direction {
        Direction::Decreasing => "decreasing",
        Direction::Increasing => "increasing",
    };
    Ok(format!(
        "{path} {} {dtype}, axis {axis}, K = {k} {direction} -> {values} {out} {dtype}, {indices} {out} {index}; \
         {select:.3} ms selecting ({backend}), {total:.3} ms in all\n",
        shape(&npy.shape),
        dtype = npy.dtype.name(),
        k = request.k,
        values = request.values.display(),
        indices = request.indices.display(),
        out = shape(&out_shape),
        index = request.index_type.name(),
        select = done.select_s * 1e3,
        backend = done.backend.name(),
        total = start.elapsed().as_secs_f64() * 1e3,
    ))
}

/// The two output files' bytes.
fn compute<T, I>(
    npy: &Npy,
    axis: usize,
    request: &Request,
    progress: &mut Progress,
) -> Result<(Vec<u8>, Vec<u8>, Done), String>
where
    T: Sample + NpyElement,
    I: IndexSample + NpyElement,
{
    let library = |e: Error| e.to_string();
    let data: Vec<T> = npy.elements()?;
    let shape = &npy.shape;
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
    let mut plan = TopK::new(topk_kernels::Request {
        input,
        axis: axis as isize,
        k,
        direction: request.direction,
        values: ViewMut::padded(&mut values, &out_shape, None, 0).map_err(library)?,
        indices: ViewMut::padded(&mut indices, &out_shape, None, 0).map_err(library)?,
    })
    .map_err(library)?;
    let backend = plan.resolve(request.backend);
    let mut scratch = filled(plan.scratch_len(), 0u64)?;
    let sequences = plan.sequences();
    progress.stage("selecting", sequences as u64);
    let select = Instant::now();
    let piece = sequences.div_ceil(PIECES).max(1);
    let mut at = 0;
    while at < sequences {
        let end = sequences.min(at + piece);
        plan.run_sequences(at..end, request.backend, &mut scratch)
            .map_err(library)?;
        progress.set(end as u64);
        at = end;
    }
    let select_s = select.elapsed().as_secs_f64();
    let done = Done { backend, select_s };
    Ok((
        npy::encode(&out_shape, &values)?,
        npy::encode(&out_shape, &indices)?,
        done,
    ))
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
