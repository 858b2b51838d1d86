//! The public entry: validate a [`Request`] once into a [`TopK`] plan, then run it on all or part of its
//! sequences with an engine picked once per call.

use core::marker::PhantomData;
use core::ops::Range;

use crate::api::request::Request;
use crate::dispatch::engine::Backend;
use crate::dispatch::strategy;
use crate::types::element::Element;
use crate::types::error::Error;
use crate::types::index::Index;
use crate::walk::Plan;

/// The least scratch, in words, that any request selecting `k` of sequences of `len` elements of type
/// `T` runs with, known from those two numbers alone (for a buffer sized before the tensors exist, such
/// as a static one): `min(len, 2k)` candidates of one word each (two for 64-bit types or sequences over
/// 2^32 elements), saturating. The same number as [`TopK::min_scratch_len`].
///
/// For the fastest path, size the scratch with [`Request::scratch_len`] instead: up to 16 times this on
/// a non-last axis.
///
/// ```
/// assert_eq!(topk_kernels::min_scratch_len::<f32>(1_000_000, 100), 200);
/// assert_eq!(topk_kernels::min_scratch_len::<f64>(1_000_000, 100), 400);
/// assert_eq!(topk_kernels::min_scratch_len::<u8>(10, 8), 10);
/// ```
pub fn min_scratch_len<T: Element>(len: usize, k: usize) -> usize {
    strategy::scratch_words::<T>(len, k)
}

/// Runs a request (`docs/CONTRACT.md` §1): the first `k` elements of every sequence along its axis.
///
/// Validates everything first; on error nothing is written. `scratch` holds what
/// [`Request::scratch_len`] says, for the fastest path; a request also runs, more slowly, on the least
/// ([`TopK::min_scratch_len`]).
///
/// ```
/// use topk_kernels::{Direction, Request, View, ViewMut, topk};
/// let x = [0.0f32, 1.0, 10.0, 11.0, 3.0, 2.0, 9.0, 8.0, 4.0, 5.0, 6.0, 7.0];
/// let (mut values, mut indices) = ([0.0f32; 6], [0u32; 6]);
/// let request = Request {
///     input: View::contiguous(&x, [1, 1, 3, 4])?,
///     axis: 3,
///     k: 2,
///     direction: Direction::Decreasing,
///     values: ViewMut::contiguous(&mut values, [1, 1, 3, 2])?,
///     indices: ViewMut::contiguous(&mut indices, [1, 1, 3, 2])?,
/// };
/// let mut scratch = [0u64; 4];
/// assert!(scratch.len() >= request.scratch_len());
/// topk(request, &mut scratch)?;
/// assert_eq!(values, [11.0, 10.0, 9.0, 8.0, 7.0, 6.0]);
/// assert_eq!(indices, [3, 2, 2, 3, 3, 2]);
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub fn topk<T: Element, I: Index, const D: usize>(
    request: Request<'_, T, I, D>,
    scratch: &mut [u64],
) -> Result<(), Error> {
    TopK::new(request)?.run(scratch)
}

/// [`topk`] with its scratch on the stack: `32 · K_MAX` bytes, enough for `k <= K_MAX`.
///
/// For callers without a heap that know a bound on K at compile time. The scratch holds `min(n, 2k)`
/// candidates, so a larger `k` still runs on rows of at most `2 · K_MAX` elements; otherwise it is
/// [`Error::Scratch`].
///
/// ```
/// use topk_kernels::{Direction, Request, View, ViewMut, topk_on_stack};
/// let x = [5u8, 1, 4, 1, 5, 9, 2, 6];
/// let (mut v, mut i) = ([0u8; 3], [0u32; 3]);
/// topk_on_stack::<4, _, _, 1>(Request {
///     input: View::contiguous(&x, [8])?,
///     axis: 0,
///     k: 3,
///     direction: Direction::Increasing,
///     values: ViewMut::contiguous(&mut v, [3])?,
///     indices: ViewMut::contiguous(&mut i, [3])?,
/// })?;
/// assert_eq!((v, i), ([1, 1, 2], [1, 3, 6]));
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub fn topk_on_stack<const K_MAX: usize, T: Element, I: Index, const D: usize>(
    request: Request<'_, T, I, D>,
) -> Result<(), Error> {
    // 2·K_MAX candidates of at most two words.
    let mut scratch = [[0u64; 4]; K_MAX];
    topk(request, scratch.as_flattened_mut())
}

/// A validated request: run it whole, on a range of its sequences, or split it across threads.
///
/// Sequences are numbered in row-major order of the coordinates other than the axis.
///
/// ```
/// use topk_kernels::{Backend, Direction, Request, TopK, View, ViewMut};
/// let x: Vec<i32> = (0..64).map(|i| (i * 37) % 64).collect();
/// let (mut v, mut i) = (vec![0i32; 16], vec![0u64; 16]);
/// let plan = TopK::new(Request {
///     input: View::contiguous(&x, [8, 8])?,
///     axis: 1,
///     k: 2,
///     direction: Direction::Decreasing,
///     values: ViewMut::contiguous(&mut v, [8, 2])?,
///     indices: ViewMut::contiguous(&mut i, [8, 2])?,
/// })?;
/// let words = plan.scratch_len();
/// let (mut low, mut high) = plan.split_at(4)?;
/// std::thread::scope(|s| {
///     s.spawn(move || low.run(&mut vec![0; words]).unwrap());
///     s.spawn(move || high.run(&mut vec![0; words]).unwrap());
/// });
/// assert_eq!((&v[..2], &i[..2]), (&[57, 47][..], &[5, 3][..])); // row 0: 0 37 10 47 20 57 30 3
/// # Ok::<(), topk_kernels::Error>(())
/// ```
pub struct TopK<'a, T: Element, I: Index, const D: usize> {
    plan: Plan<'a, T>,
    indices: PhantomData<&'a mut [I]>,
}

impl<'a, T: Element, I: Index, const D: usize> TopK<'a, T, I, D> {
    /// Validates a request (`docs/CONTRACT.md` §5). Nothing is written, whatever the result.
    pub fn new(request: Request<'a, T, I, D>) -> Result<Self, Error> {
        Ok(TopK {
            plan: request.into_plan()?,
            indices: PhantomData,
        })
    }

    /// Number of sequences this plan covers (0 when K is 0 or the tensor is empty).
    pub fn sequences(&self) -> usize {
        self.plan.sequences()
    }

    /// Length of each sequence (the input's size along the axis).
    pub fn sequence_len(&self) -> usize {
        self.plan.sequence_len()
    }

    /// K.
    pub fn k(&self) -> usize {
        self.plan.k()
    }

    /// Scratch words for [`run`](Self::run)'s fastest path: [`Request::scratch_len`] of the request the
    /// plan was made from (0 with no sequence).
    pub fn scratch_len(&self) -> usize {
        self.plan.scratch_len()
    }

    /// The least scratch [`run`](Self::run) takes: one sequence's `min(n, 2K)` candidates, the
    /// [`scratch_len`](Self::scratch_len) of a request whose sequences are read one at a time (0 with
    /// no sequence). For callers short of memory: where the fastest path reads sequences side by side,
    /// this one is several times slower.
    ///
    /// ```
    /// use topk_kernels::{Direction, Request, TopK, View, ViewMut};
    /// let x = vec![0f32; 1000 * 64];
    /// let (mut v, mut i) = (vec![0f32; 50 * 64], vec![0u32; 50 * 64]);
    /// let plan = TopK::new(Request {
    ///     input: View::contiguous(&x, [1000, 64])?,
    ///     axis: 0,
    ///     k: 50,
    ///     direction: Direction::Decreasing,
    ///     values: ViewMut::contiguous(&mut v, [50, 64])?,
    ///     indices: ViewMut::contiguous(&mut i, [50, 64])?,
    /// })?;
    /// # #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    /// assert_eq!(plan.scratch_len(), 16 * plan.min_scratch_len());
    /// assert_eq!(plan.min_scratch_len(), 100);
    /// # Ok::<(), topk_kernels::Error>(())
    /// ```
    pub fn min_scratch_len(&self) -> usize {
        self.plan.min_scratch_len()
    }

    /// Splits into the first `mid` sequences and the rest: two plans that may run on two threads.
    pub fn split_at(self, mid: usize) -> Result<(Self, Self), Error> {
        let (low, high) = self.plan.split_at(mid)?;
        let wrap = |plan| TopK {
            plan,
            indices: PhantomData,
        };
        Ok((wrap(low), wrap(high)))
    }

    /// The engine `backend` runs this plan on: a concrete backend stands for itself; `Auto` is the
    /// widest this CPU has ([`Backend::resolve`]), except on AMD's Zen 4, where short contiguous rows
    /// (up to 512 elements, a multiple of 32) of up to 32-bit elements with K from 2 to 16 run on AVX2,
    /// faster there than its AVX-512.
    ///
    /// ```
    /// use topk_kernels::{Backend, Direction, Request, TopK, View, ViewMut};
    /// let x = [3.0f32, 1.0, 2.0];
    /// let (mut v, mut i) = ([0.0f32; 2], [0u32; 2]);
    /// let plan = TopK::new(Request {
    ///     input: View::contiguous(&x, [3])?,
    ///     axis: 0,
    ///     k: 2,
    ///     direction: Direction::Decreasing,
    ///     values: ViewMut::contiguous(&mut v, [2])?,
    ///     indices: ViewMut::contiguous(&mut i, [2])?,
    /// })?;
    /// assert_eq!(plan.resolve(Backend::Portable), Backend::Portable);
    /// assert_ne!(plan.resolve(Backend::Auto), Backend::Auto);
    /// # Ok::<(), topk_kernels::Error>(())
    /// ```
    pub fn resolve(&self, backend: Backend) -> Backend {
        self.plan.resolve(backend)
    }

    /// Runs every sequence of this plan with the fastest engine.
    pub fn run(&mut self, scratch: &mut [u64]) -> Result<(), Error> {
        self.run_sequences(0..self.sequences(), Backend::Auto, scratch)
    }

    /// Runs sequences `range` (numbered from 0 within this plan) with `backend`.
    ///
    /// Checks the range, the backend and the scratch length before writing anything.
    pub fn run_sequences(&mut self, range: Range<usize>, backend: Backend, scratch: &mut [u64]) -> Result<(), Error> {
        self.plan.run_sequences(range, backend, scratch)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec;

    use super::*;
    use crate::api::naive;
    use crate::types::element::Direction;
    use crate::types::view::{View, ViewMut};

    /// The request of these arguments, in the order the fields are declared.
    fn request<'a, T, I, const D: usize>(
        input: View<'a, T, D>,
        axis: isize,
        k: usize,
        direction: Direction,
        values: ViewMut<'a, T, D>,
        indices: ViewMut<'a, I, D>,
    ) -> Request<'a, T, I, D> {
        Request {
            input,
            axis,
            k,
            direction,
            values,
            indices,
        }
    }

    /// Every engine this build has against the reference on rows of a few vectors (small enough for
    /// miri, which runs the portable lanes' loads here).
    fn agrees_with_naive<T: Element + PartialEq + core::fmt::Debug>(data: &[T]) {
        let n = data.len();
        // K = 12 and 16 take the SIMD engines' 32 prefix groups (K > 8 on short rows); left out under
        // miri, for time.
        let ks: &[usize] = if cfg!(miri) {
            &[1, 3, n / 2, n]
        } else {
            &[1, 3, 12, 16, n / 2, n]
        };
        for &k in ks {
            for direction in [Direction::Decreasing, Direction::Increasing] {
                let (mut want_v, mut want_i) = (vec![T::ZERO; k], vec![0u32; k]);
                let input = View::contiguous(data, [n]).unwrap();
                let (values, indices) = (
                    ViewMut::contiguous(&mut want_v[..], [k]).unwrap(),
                    ViewMut::contiguous(&mut want_i[..], [k]).unwrap(),
                );
                naive::topk(request(input, 0, k, direction, values, indices)).unwrap();
                // Miri leaves out the backends that would repeat a run it has just made: `Naive` is the
                // reference's own `run_sequences` call, and `Auto` resolves to `Portable` there (the two
                // are most of its time: the reference reads the row once for each of the K).
                let repeats = |b: &Backend| cfg!(miri) && matches!(b, Backend::Naive | Backend::Auto);
                for backend in Backend::ALL.into_iter().filter(|b| b.is_available() && !repeats(b)) {
                    let (mut got_v, mut got_i) = (vec![T::ZERO; k], vec![0u32; k]);
                    let (values, indices) = (
                        ViewMut::contiguous(&mut got_v[..], [k]).unwrap(),
                        ViewMut::contiguous(&mut got_i[..], [k]).unwrap(),
                    );
                    let mut plan = TopK::new(request(input, 0, k, direction, values, indices)).unwrap();
                    let mut scratch = vec![0u64; plan.scratch_len()];
                    plan.run_sequences(0..1, backend, &mut scratch).unwrap();
                    assert_eq!(got_i, want_i, "{} {} k {k} {direction:?}", backend.name(), T::NAME);
                }
            }
        }
    }

    /// Every engine this build has against the reference along axis 0 of `data` as `n x 9`: nine
    /// neighbouring sequences, read side by side (a group of the engine's lanes, the rest one at a
    /// time), with K in the lanes' sorted slots and above them, given the plan's scratch or the least.
    fn agrees_on_a_non_last_axis<T: Element + PartialEq + core::fmt::Debug>(data: &[T], n: usize) {
        const COUNT: usize = 9;
        let input = View::contiguous(&data[..n * COUNT], [n, COUNT]).unwrap();
        for k in [3, 17, n] {
            let direction = if k == 17 {
                Direction::Increasing
            } else {
                Direction::Decreasing
            };
            let (mut want_v, mut want_i) = (vec![T::ZERO; k * COUNT], vec![0u32; k * COUNT]);
            let (values, indices) = (
                ViewMut::contiguous(&mut want_v[..], [k, COUNT]).unwrap(),
                ViewMut::contiguous(&mut want_i[..], [k, COUNT]).unwrap(),
            );
            naive::topk(request(input, 0, k, direction, values, indices)).unwrap();
            // As above, miri leaves out `Auto`, which is `Portable` there.
            let runs = |b: &Backend| b.is_available() && *b != Backend::Naive && !(cfg!(miri) && *b == Backend::Auto);
            for backend in Backend::ALL.into_iter().filter(runs) {
                for least in [false, true] {
                    let (mut got_v, mut got_i) = (vec![T::ZERO; k * COUNT], vec![0u32; k * COUNT]);
                    let (values, indices) = (
                        ViewMut::contiguous(&mut got_v[..], [k, COUNT]).unwrap(),
                        ViewMut::contiguous(&mut got_i[..], [k, COUNT]).unwrap(),
                    );
                    let mut plan = TopK::new(request(input, 0, k, direction, values, indices)).unwrap();
                    let words = if least {
                        min_scratch_len::<T>(n, k)
                    } else {
                        plan.scratch_len()
                    };
                    plan.run_sequences(0..COUNT, backend, &mut vec![0u64; words]).unwrap();
                    assert_eq!(got_i, want_i, "{} {} k {k} least {least}", backend.name(), T::NAME);
                    assert_eq!(got_v, want_v);
                }
            }
        }
    }

    #[test]
    fn engines_agree_on_a_non_last_axis() {
        let bits = |i: u32| i.wrapping_mul(0x9E37_79B9).rotate_left(i % 7);
        // Sequences of 40 with K = 17 compact their buffers (of 34) once; miri runs shorter ones.
        let n = if cfg!(miri) { 20 } else { 40 };
        let f32s: [f32; 40 * 9] = core::array::from_fn(|i| f32::from_bits(bits(i as u32) >> 2));
        agrees_on_a_non_last_axis(&f32s, n);
        let f64s: [f64; 40 * 9] = core::array::from_fn(|i| f64::from(f32s[i]));
        agrees_on_a_non_last_axis(&f64s, n);
        let u8s: [u8; 40 * 9] = core::array::from_fn(|i| (bits(i as u32) % 5) as u8);
        agrees_on_a_non_last_axis(&u8s, n);
    }

    #[test]
    fn engines_agree_on_short_rows() {
        let bits = |i: u32| i.wrapping_mul(0x9E37_79B9).rotate_left(i % 7);
        let specials = [0x7FC0_0001u32, 0xFFC0_0000, 0x8000_0000, 0, 0x7F80_0000, 0xFF80_0000];
        let f32s: [f32; 77] =
            core::array::from_fn(|i| f32::from_bits(if i % 5 == 0 { specials[i % 6] } else { bits(i as u32) }));
        agrees_with_naive(&f32s);
        let f64s: [f64; 41] = core::array::from_fn(|i| f64::from(f32s[i]));
        agrees_with_naive(&f64s);
        let u8s: [u8; 70] = core::array::from_fn(|i| (bits(i as u32) % 7) as u8);
        agrees_with_naive(&u8s);
        let i16s: [i16; 69] = core::array::from_fn(|i| bits(i as u32) as i16);
        agrees_with_naive(&i16s);
        let f16s: [half::f16; 66] = core::array::from_fn(|i| half::f16::from_bits((f32s[i].to_bits() >> 16) as u16));
        agrees_with_naive(&f16s);
    }

    /// `Auto` on a plan is the CPU's widest engine, but AVX2 for the short rows of the AMD rule (and
    /// only there): rows of whole AVX2 blocks up to 512, K from 2 to 16, up to 32-bit elements,
    /// contiguous; a concrete backend stands for itself.
    #[test]
    fn auto_takes_avx2_for_short_rows_on_zen_4_only() {
        let data = [0.0f32; 512 * 3];
        let (mut values, mut indices) = ([0.0f32; 64 * 3], [0u32; 64 * 3]);
        let mut resolve = |len: usize, k: usize, axis: usize, backend: Backend| {
            let (sizes, out) = if axis == 1 {
                ([3, len], [3, k])
            } else {
                ([len, 3], [k, 3])
            };
            let input = View::contiguous(&data[..3 * len], sizes).unwrap();
            let values = ViewMut::contiguous(&mut values[..3 * k], out).unwrap();
            let indices = ViewMut::contiguous(&mut indices[..3 * k], out).unwrap();
            TopK::new(request(input, axis as isize, k, Direction::Decreasing, values, indices))
                .unwrap()
                .resolve(backend)
        };
        let widest = Backend::Auto.resolve();
        let zen_4 = widest == Backend::Avx512 && crate::simd::cpu::facts().zen4;
        for (len, k, axis, rule) in [
            (256, 8, 1, true),
            (512, 2, 1, true),
            (32, 16, 1, true),
            (256, 1, 1, false),
            (256, 17, 1, false),
            (200, 8, 1, false),
            (256, 8, 0, false),
        ] {
            let want = if rule && zen_4 { Backend::Avx2 } else { widest };
            assert_eq!(resolve(len, k, axis, Backend::Auto), want, "{len} {k} {axis}");
            assert_eq!(resolve(len, k, axis, Backend::Portable), Backend::Portable);
        }
    }
}
