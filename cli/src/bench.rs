//! `topk bench`: times the kernel on generated data, next to a streaming pass over the same input.
//!
//! The kernel is timed through a [`TopK`] plan made once, with its scratch allocated once, outside the
//! timed loop: warm-up runs for [`WARM_UP`], then the median of `reps` runs. The floor is the median of
//! as many passes that read the same input in the same order and write one value per sequence (a fold
//! of the bits along the axis): no top-K can be faster than reading its input once, so `median_s / floor_s`
//! says how far the kernel is from the memory bound. On one thread the kernel's runs and the floor's
//! alternate, so that a shared host's slow and quiet phases meet both alike (run one after the other,
//! the ratio on 32 x 128k f32 with K = 50 moved from 1.04 to 1.88 between runs on the same build).

use std::hint::black_box;
use std::time::{Duration, Instant};

use topk_kernels::{
    Backend, DataType, Direction, Error, IndexType, Request, TopK, View, ViewMut, naive, with_data_type,
    with_index_type,
};

use crate::npy::checked_elements;
use crate::progress::Progress;
use crate::run::filled;
use crate::types::{IndexSample, Sample};

/// The data patterns of `--data`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Data {
    /// Uniform in [0, 1) (integers: x times the maximum if unsigned, x times 2^(bits-1) if signed).
    Uniform,
    /// Standard normal (integers: scaled to a sixteenth of their range).
    Normal,
    /// `arange(n)` over the whole tensor (integers wrap).
    Ascending,
    /// `arange(n)` reversed.
    Descending,
    /// Every element the same.
    Equal,
    /// Uniform with one element in 8 a NaN of random payload and sign (integers: their maximum).
    NanMix,
}

impl Data {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Data::Uniform => "uniform",
            Data::Normal => "normal",
            Data::Ascending => "ascending",
            Data::Descending => "descending",
            Data::Equal => "equal",
            Data::NanMix => "nan-mix",
        }
    }
}

/// One benchmark case.
pub(crate) struct Case {
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: DataType,
    pub(crate) axis: i64,
    pub(crate) k: usize,
    pub(crate) direction: Direction,
    pub(crate) data: Data,
    pub(crate) reps: usize,
    pub(crate) backend: Backend,
    pub(crate) index_type: IndexType,
    /// Threads: 1 runs a [`TopK`] plan; more run `parallel::topk` on a pool of that many (feature `rayon`).
    pub(crate) threads: usize,
    /// Compare the result with `naive::topk` when that is cheap enough.
    pub(crate) check: bool,
}

/// What one case measured.
pub(crate) struct Measurement {
    /// The engine that ran (`Backend::resolve`).
    pub(crate) backend: &'static str,
    /// Threads the kernel ran on.
    pub(crate) threads: usize,
    /// The axis, made non-negative.
    pub(crate) axis: usize,
    pub(crate) elements: usize,
    pub(crate) median_s: f64,
    pub(crate) floor_s: f64,
    /// Whether the result was compared with the reference (it is an error when it differs).
    pub(crate) checked: bool,
}

impl Measurement {
    pub(crate) fn ns_per_elem(&self) -> f64 {
        self.median_s * 1e9 / self.elements.max(1) as f64
    }

    /// Input bytes read per second, in GB/s.
    pub(crate) fn gb_per_s(&self, dtype: DataType) -> f64 {
        (self.elements * dtype.size()) as f64 / self.median_s / 1e9
    }
}

/// The naive check costs about n·K·sequences key comparisons; above this it would dwarf the timing.
const CHECK_LIMIT: f64 = 5e8;

/// More repetitions than anyone waits for; it also bounds the vector of timings.
const MAX_REPS: usize = 1_000_000;

/// Runs `case`, showing its stages on `progress`.
pub(crate) fn measure(case: &Case, progress: &mut Progress) -> Result<Measurement, String> {
    if !(1..=MAX_REPS).contains(&case.reps) {
        return Err(format!("--reps {} is outside 1 to {MAX_REPS}", case.reps));
    }
    if !(1..=8).contains(&case.shape.len()) {
        return Err(format!(
            "the shape has {} dimensions; 1 to 8 are supported",
            case.shape.len()
        ));
    }
    let axis = crate::normalize_axis(case.axis, case.shape.len())?;
    with_data_type!(case.dtype, T => with_index_type!(case.index_type, I => measure_typed::<T, I>(case, axis, progress)))
}

fn measure_typed<T: Sample, I: IndexSample>(
    case: &Case,
    axis: usize,
    progress: &mut Progress,
) -> Result<Measurement, String> {
    let library = |e: Error| e.to_string();
    let shape = &case.shape;
    let elements = checked_elements(shape, size_of::<T>()).ok_or("the shape has too many elements")?;
    let (k, len) = (case.k, shape[axis]);
    if k > len {
        return Err(library(Error::K { k, len, axis }));
    }
    progress.stage("generating", 1);
    let data = generate::<T>(elements, case.data)?;
    let mut out_shape = shape.clone();
    out_shape[axis] = k;
    let count = checked_elements(&out_shape, size_of::<T>()).ok_or("the output has too many elements")?;
    let mut values = filled(count, T::default())?;
    let mut indices = filled(count, I::default())?;
    let input = View::padded(&data, shape, None, 0).map_err(library)?;
    let padded = axis;
    let sequences: usize = shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != axis)
        .map(|(_, &n)| n)
        .product();
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let mut folds = filled(outer * inner, T::default().raw())?;
    let mut floor = || {
        if elements != 0 {
            streaming_fold(black_box(&data), len, inner, &mut folds);
        }
        black_box(&folds);
        Ok(())
    };
    // The engine `Auto` picks for this shape (`TopK::resolve`); the threaded runs' rows pick it alike.
    let mut backend = case.backend.resolve();
    let (median_s, floor_s) = if case.threads == 1 {
        let mut plan = TopK::new(Request {
            input,
            axis: padded as isize,
            k,
            direction: case.direction,
            values: ViewMut::padded(&mut values, &out_shape, None, 0).map_err(library)?,
            indices: ViewMut::padded(&mut indices, &out_shape, None, 0).map_err(library)?,
        })
        .map_err(library)?;
        backend = plan.resolve(case.backend);
        let mut scratch = filled(plan.scratch_len(), 0u64)?;
        // Warm-ups, then the kernel and the floor in turn, so that a change of the machine's speed
        // (a shared host's phases) meets both alike.
        let mut kernel = || {
            plan.run_sequences(0..sequences, case.backend, black_box(&mut scratch))
                .map_err(library)
        };
        progress.stage("warming up", 1);
        warm_up(&mut kernel)?;
        floor()?;
        progress.stage("timing", case.reps as u64);
        medians(case.reps, &mut kernel, &mut floor, progress)?
    } else {
        progress.stage("timing", 1);
        let median_s = threaded(case, input, padded, &out_shape, &mut values, &mut indices)?;
        floor()?;
        (median_s, median(case.reps, &mut floor)?)
    };
    // An empty tensor reads nothing.
    let floor_s = if elements == 0 { 0.0 } else { floor_s };

    let work = len as f64 * k as f64 * sequences as f64;
    let checked = case.check && work < CHECK_LIMIT;
    if checked {
        progress.stage("checking", 1);
        let mut expected_values = filled(count, T::default())?;
        let mut expected_indices = filled(count, I::default())?;
        naive::topk(Request {
            input,
            axis: padded as isize,
            k,
            direction: case.direction,
            values: ViewMut::padded(&mut expected_values, &out_shape, None, 0).map_err(library)?,
            indices: ViewMut::padded(&mut expected_indices, &out_shape, None, 0).map_err(library)?,
        })
        .map_err(library)?;
        let differs = |i: usize| indices[i] != expected_indices[i] || values[i].bits() != expected_values[i].bits();
        if let Some(at) = (0..count).find(|&i| differs(i)) {
            return Err(format!(
                "the {} backend differs from the reference at output element {at}: \
                 value bits {:#x} index {} instead of {:#x} {}",
                backend.name(),
                values[at].bits(),
                indices[at],
                expected_values[at].bits(),
                expected_indices[at]
            ));
        }
    }

    Ok(Measurement {
        backend: backend.name(),
        threads: case.threads,
        axis,
        elements,
        median_s,
        floor_s,
        checked,
    })
}

/// The median time of `parallel::topk` on a pool of `case.threads` threads (the `Auto` engine).
#[cfg(feature = "rayon")]
fn threaded<T: Sample, I: IndexSample>(
    case: &Case,
    input: View<'_, T, 8>,
    axis: usize,
    out_shape: &[usize],
    values: &mut [T],
    indices: &mut [I],
) -> Result<f64, String> {
    if case.backend != Backend::Auto {
        return Err(format!("--threads {} runs the auto backend only", case.threads));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(case.threads)
        .build()
        .map_err(|e| format!("cannot start {} threads: {e}", case.threads))?;
    // Timed from inside the pool, as a runtime whose executor is the pool calls the kernel: each call
    // pays for waking the other threads, not also for handing the work over to the pool and waking the
    // caller back afterwards (`install` from outside the pool).
    // Through a trait object: rayon's `install` compiled once, not for each element and index type.
    let mut timed = || {
        let mut once = || {
            let mut run = || {
                topk_kernels::parallel::topk(Request {
                    input,
                    axis: axis as isize,
                    k: case.k,
                    direction: case.direction,
                    values: ViewMut::padded(&mut *values, out_shape, None, 0)?,
                    indices: ViewMut::padded(&mut *indices, out_shape, None, 0)?,
                })
            };
            run().map_err(|e| e.to_string())
        };
        warm_up(&mut once)?;
        median(case.reps, &mut once)
    };
    in_pool(&pool, &mut timed)
}

/// `work` on `pool`'s threads.
#[cfg(feature = "rayon")]
fn in_pool(pool: &rayon::ThreadPool, work: &mut (dyn FnMut() -> Result<f64, String> + Send)) -> Result<f64, String> {
    pool.install(work)
}

#[cfg(not(feature = "rayon"))]
fn threaded<T: Sample, I: IndexSample>(
    case: &Case,
    _: View<'_, T, 8>,
    _: usize,
    _: &[usize],
    _: &mut [T],
    _: &mut [I],
) -> Result<f64, String> {
    Err(format!(
        "--threads {} needs a build with the rayon feature: cargo install --path cli --features rayon, \
         or cargo run --release -p topk-cli --features rayon -- bench ...",
        case.threads
    ))
}

/// How long the kernel runs before it is timed (one run at least). A rayon pool's second thread can
/// stay asleep for the first hundreds of back-to-back calls of a short kernel, which then run on one
/// thread: one warm-up call is not enough to wake it. The same warm-up on one thread keeps the two
/// comparable.
const WARM_UP: Duration = Duration::from_millis(200);

/// Runs `kernel` for [`WARM_UP`], at least once.
fn warm_up(kernel: &mut dyn FnMut() -> Result<(), String>) -> Result<(), String> {
    let start = Instant::now();
    kernel()?;
    while start.elapsed() < WARM_UP {
        kernel()?;
    }
    Ok(())
}

/// The median wall times of `reps` calls of `kernel` and of `floor`, called in turn, in seconds.
fn medians(
    reps: usize,
    kernel: &mut dyn FnMut() -> Result<(), String>,
    floor: &mut dyn FnMut() -> Result<(), String>,
    progress: &mut Progress,
) -> Result<(f64, f64), String> {
    let mut kernel_times = Vec::with_capacity(reps);
    let mut floor_times = Vec::with_capacity(reps);
    for _ in 0..reps {
        kernel_times.push(timed(kernel)?);
        floor_times.push(timed(floor)?);
        progress.add(1);
    }
    Ok((middle(kernel_times), middle(floor_times)))
}

/// The median wall time of `reps` calls of `f`, in seconds.
fn median(reps: usize, f: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String> {
    let times = (0..reps).map(|_| timed(f)).collect::<Result<Vec<_>, _>>()?;
    Ok(middle(times))
}

/// The wall time of one call of `f`, in seconds.
fn timed(f: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed().as_secs_f64())
}

/// The median of `times` (`reps >= 1` of them).
fn middle(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The XOR of the bits of every sequence of a row-major `[outer, len, inner]` tensor, read in memory
/// order: a row reduction when the axis is the last one, otherwise an element-wise fold of `len` rows of
/// `inner` elements (the access pattern of a kernel that walks such an axis efficiently).
///
/// XOR rather than a maximum: one instruction at every width, which vectorizes everywhere. Compiled for
/// the widest vectors the CPU has, as the kernel is: built for the baseline target (SSE2 on x86-64) the
/// fold runs well below the memory's speed, and the kernel would beat its "floor".
fn streaming_fold<T: Sample>(data: &[T], len: usize, inner: usize, out: &mut [T::Raw]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU has the features the function is compiled for.
            return unsafe { fold_avx512(data, len, inner, out) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: as above.
            return unsafe { fold_avx2(data, len, inner, out) };
        }
    }
    fold(data, len, inner, out);
}

/// [`fold`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn fold_avx512<T: Sample>(data: &[T], len: usize, inner: usize, out: &mut [T::Raw]) {
    fold(data, len, inner, out);
}

/// [`fold`] compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_avx2<T: Sample>(data: &[T], len: usize, inner: usize, out: &mut [T::Raw]) {
    fold(data, len, inner, out);
}

#[inline(always)]
fn fold<T: Sample>(data: &[T], len: usize, inner: usize, out: &mut [T::Raw]) {
    if inner == 1 {
        for (row, fold) in data.chunks_exact(len).zip(out.iter_mut()) {
            *fold = row[1..].iter().fold(row[0].raw(), |m, x| m ^ x.raw());
        }
        return;
    }
    for (block, folds) in data.chunks_exact(len * inner).zip(out.chunks_exact_mut(inner)) {
        for (fold, x) in folds.iter_mut().zip(&block[..inner]) {
            *fold = x.raw();
        }
        for row in block.chunks_exact(inner).skip(1) {
            for (fold, x) in folds.iter_mut().zip(row) {
                *fold = *fold ^ x.raw();
            }
        }
    }
}

/// `elements` values of the pattern `data`, the same on every run (fixed seed).
fn generate<T: Sample>(elements: usize, data: Data) -> Result<Vec<T>, String> {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut out = filled(elements, T::default())?;
    let last = elements.saturating_sub(1) as u64;
    for (i, x) in out.iter_mut().enumerate() {
        *x = match data {
            Data::Uniform => T::uniform(rng.f64()),
            Data::Normal => {
                // Box-Muller; 1 - u is in (0, 1], so the logarithm is finite.
                let (u, v) = (1.0 - rng.f64(), rng.f64());
                T::normal((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos())
            }
            Data::Ascending => T::ascending(i as u64),
            Data::Descending => T::ascending(last - i as u64),
            Data::Equal => T::uniform(0.5),
            Data::NanMix if rng.u8(..8) == 0 => T::nan(rng.u64(..), rng.bool()),
            Data::NanMix => T::uniform(rng.f64()),
        };
    }
    Ok(out)
}
