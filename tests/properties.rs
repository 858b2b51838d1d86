//! Every backend against the reference `naive::topk`, bit for bit, on random requests: every dtype at
//! ranks 1, 2, 3 and one of 4..=8 (one generic body, expanded by a macro; every rank with two dtypes at
//! least) x both directions, each rank with one index type (every index type once for every dtype).
//!
//! A case (one seed) draws sizes (small products, sometimes one long axis, sometimes an empty dimension),
//! an axis, K in {0, 1, small, n-1, n, random}, an input layout (permuted, stepped, broadcast, reversed,
//! offset), and values biased to NaN payloads of both signs, infinities, signed zeros, subnormals,
//! integer extremes and heavy ties. Then, for both directions:
//! - `naive::topk` is checked against a sort-based oracle;
//! - every backend of `Backend::ALL` (an `Error::Backend` means the CPU lacks it)
//!   writes into outputs with random strided layouts inside sentinel-filled buffers; everything outside
//!   the views must stay untouched and everything inside must equal the reference;
//! - a plan split with `split_at` and run range by range, in random order and with random backends,
//!   writes exactly the sequences run so far;
//! - `topk_on_stack` and `topk` with exactly `scratch_len` words (and one word less) agree too.
//!
//! QUICKCHECK_TESTS=n sets the cases per test (dtype x rank); TOPK_SEED=s replays one failing seed.

mod common;

use common::*;
use topk_kernels::{
    Backend, Direction, Error, Request, TopK, View, ViewMut, bf16, f16, min_scratch_len, naive, topk, topk_on_stack,
};

/// Cases per test when QUICKCHECK_TESTS is unset (48 tests). Each case runs one index type, so 32 gave
/// as many engine runs as 12 did when each ran all four; 64 since the ranks above 3 went from every dtype
/// to two or three each, as many cases as before in all.
const CASES: u64 = 64;

/// The K bound of the `topk_on_stack` calls: its scratch is `4 · STACK_K` words.
const STACK_K: usize = 16;

/// The O(n·K) reference runs about ten times per case; this bounds elements × K.
const REFERENCE_WORK: usize = 200_000;

struct Case<'a, T, const D: usize> {
    seed: u64,
    input: View<'a, T, D>,
    layout: Strided<D>,
    axis: usize,
    k: usize,
    direction: Direction,
}

impl<T: Value, const D: usize> Case<'_, T, D> {
    fn n(&self) -> usize {
        self.layout.sizes[self.axis]
    }

    fn out_sizes(&self) -> [usize; D] {
        let mut sizes = self.layout.sizes;
        sizes[self.axis] = self.k;
        sizes
    }

    fn sequences(&self) -> usize {
        if self.k == 0 {
            0
        } else {
            self.layout.sizes.iter().product::<usize>() / self.n()
        }
    }

    fn describe(&self) -> String {
        format!(
            "TOPK_SEED={} {}: sizes {:?} strides {:?} offset {} len {} axis {} k {} {:?}",
            self.seed,
            T::NAME,
            self.layout.sizes,
            self.layout.strides,
            self.layout.offset,
            self.layout.len,
            self.axis,
            self.k,
            self.direction
        )
    }
}

fn random_sizes<const D: usize>(rng: &mut Rng, axis: usize) -> [usize; D] {
    let mut sizes = [1usize; D];
    if rng.chance(1, 12) {
        // One long sequence (or two): the filter compacts many times.
        sizes[axis] = rng.range(1000, 4000);
        let other = rng.below(D);
        if other != axis && rng.chance(1, 2) {
            sizes[other] = 2;
        }
    } else {
        let budget = rng.pick(&[4, 16, 64, 300, 2000]);
        if rng.chance(1, 3) {
            sizes[axis] = rng.range(1, budget.min(300));
        }
        for _ in 0..3 * D {
            let d = rng.below(D);
            let factor = rng.range(2, 6);
            if sizes.iter().product::<usize>() * factor <= budget {
                sizes[d] *= factor;
            }
        }
    }
    if rng.chance(1, 20) {
        sizes[rng.below(D)] = 0;
    }
    sizes
}

fn random_k(rng: &mut Rng, n: usize, elements: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let k = match rng.below(7) {
        0 => 0,
        1 => 1,
        2 => n - 1,
        3 => n,
        4 => rng.range(1, n.min(8)),
        _ => rng.range(0, n),
    };
    if k > 0 && elements.saturating_mul(k) > REFERENCE_WORK {
        rng.range(1, (REFERENCE_WORK / elements).max(1)).min(n)
    } else {
        k
    }
}

/// The reference outputs, from `naive::topk` into contiguous buffers.
fn reference<T: Value, const D: usize>(case: &Case<'_, T, D>) -> Expected {
    let out = case.out_sizes();
    let count: usize = out.iter().product();
    let (mut values, mut indices) = (vec![T::from_bits(0); count], vec![u64::MAX; count]);
    naive::topk(Request {
        input: case.input,
        axis: case.axis as isize,
        k: case.k,
        direction: case.direction,
        values: ViewMut::contiguous(&mut values, out).unwrap(),
        indices: ViewMut::contiguous(&mut indices, out).unwrap(),
    })
    .unwrap_or_else(|e| panic!("naive: {e}: {}", case.describe()));
    assert!(
        indices.iter().all(|&i| i < case.n() as u64),
        "naive left an index unwritten: {}",
        case.describe()
    );
    Expected {
        values: values.iter().map(|v| v.to_bits()).collect(),
        indices: indices.iter().map(|&i| i as i128).collect(),
    }
}

/// Both outputs of one run, each a random strided view inside a sentinel-filled buffer.
struct Outputs<T, I, const D: usize> {
    values: Vec<T>,
    value_layout: Strided<D>,
    value_sentinel: u64,
    indices: Vec<I>,
    index_layout: Strided<D>,
}

impl<T: Value, I: TestIndex, const D: usize> Outputs<T, I, D> {
    fn new(rng: &mut Rng, sizes: [usize; D], value_sentinel: u64) -> Self {
        let value_layout = strided(rng, sizes, Role::Output, None);
        let index_layout = strided(rng, sizes, Role::Output, None);
        Outputs {
            values: vec![T::from_bits(value_sentinel); value_layout.len],
            value_layout,
            value_sentinel,
            indices: vec![I::SENTINEL; index_layout.len],
            index_layout,
        }
    }

    fn views(&mut self) -> (ViewMut<'_, T, D>, ViewMut<'_, I, D>) {
        let (v, i) = (&self.value_layout, &self.index_layout);
        (
            ViewMut::new(&mut self.values, v.sizes, v.strides, v.offset).expect("values layout"),
            ViewMut::new(&mut self.indices, i.sizes, i.strides, i.offset).expect("indices layout"),
        )
    }

    /// Sequences with `written(number)` must hold the expected outputs, the others (and every element
    /// outside the views) their sentinels. The value sentinel is absent from the input, so equality
    /// with the expected value also proves the element was written.
    fn check(&self, case: &Case<'_, T, D>, expected: &Expected, written: &dyn Fn(usize) -> bool, what: &str) {
        let context = || format!("{what} with {} indices: {}", I::NAME, case.describe());
        let sentinel = self.value_sentinel;
        check_guards(
            &self.values,
            &self.value_layout,
            |v: T| v.to_bits() == sentinel,
            &context,
        );
        check_guards(&self.indices, &self.index_layout, |i: I| i == I::SENTINEL, &context);
        let values = gather(&self.values, &self.value_layout);
        let indices = gather(&self.indices, &self.index_layout);
        for (j, c) in coordinates(case.out_sizes()).iter().enumerate() {
            let (value, index) = (values[j].to_bits(), indices[j]);
            if written(sequence_of(case.out_sizes(), case.axis, c)) {
                assert_eq!(
                    (value, index.wide()),
                    (expected.values[j], expected.indices[j]),
                    "output {c:?} (value bits, index): {}",
                    context()
                );
            } else {
                assert_eq!(
                    (value, index),
                    (sentinel, I::SENTINEL),
                    "output {c:?} written: {}",
                    context()
                );
            }
        }
    }
}

fn random_scratch(rng: &mut Rng, words: usize) -> Vec<u64> {
    // Garbage, not zeros: no engine may rely on the scratch's contents.
    (0..words).map(|_| rng.next()).collect()
}

/// Random consecutive ranges covering `0..len`.
fn chunks(rng: &mut Rng, len: usize) -> Vec<std::ops::Range<usize>> {
    let mut cuts: Vec<usize> = (0..rng.range(0, 3)).map(|_| rng.range(0, len)).collect();
    cuts.extend([0, len]);
    cuts.sort_unstable();
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

fn run_or_auto<T: Value, I: TestIndex, const D: usize>(
    plan: &mut TopK<'_, T, I, D>,
    range: std::ops::Range<usize>,
    backend: Backend,
    scratch: &mut [u64],
) {
    match plan.run_sequences(range.clone(), backend, scratch) {
        Err(Error::Backend { .. }) => plan.run_sequences(range, Backend::Auto, scratch).unwrap(),
        other => other.unwrap(),
    }
}

fn index_type<T: Value, I: TestIndex, const D: usize>(
    case: &Case<'_, T, D>,
    expected: &Expected,
    sentinel: u64,
    rng: &mut Rng,
) {
    let out = case.out_sizes();
    let (input, axis, k, direction) = (case.input, case.axis, case.k, case.direction);
    let everything = |_| true;
    let nothing = |_| false;

    for backend in Backend::ALL {
        let mut outputs = Outputs::<T, I, D>::new(rng, out, sentinel);
        let result = {
            let (values, indices) = outputs.views();
            let mut plan = TopK::new(Request {
                input,
                axis: axis as isize,
                k,
                direction,
                values,
                indices,
            })
            .unwrap_or_else(|e| panic!("plan: {e}: {}", case.describe()));
            assert_eq!(plan.sequences(), case.sequences());
            assert_eq!((plan.k(), plan.sequence_len()), (k, case.n()));
            // A plan with nothing to run needs no scratch.
            let words = if case.sequences() == 0 {
                0
            } else {
                min_scratch_len::<T>(case.n(), k)
            };
            assert_eq!(plan.min_scratch_len(), words);
            // 16 buffers where 16 sequences are read side by side with K above 16: a non-last axis
            // over a contiguous innermost dimension (of those with more than one element), on x86_64
            // and aarch64.
            let inner = (0..D).rev().find(|&d| input.sizes()[d] > 1);
            let side_by_side = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
                && k > 16
                && inner.is_some_and(|inner| axis != inner && input.layout().strides()[inner] == 1);
            assert_eq!(plan.scratch_len(), if side_by_side { 16 * words } else { words });
            // Either is enough: the fastest path's, or the least (one sequence at a time).
            let given = if rng.below(2) == 0 {
                plan.scratch_len()
            } else {
                plan.min_scratch_len()
            };
            let mut scratch = random_scratch(rng, given);
            plan.run_sequences(0..case.sequences(), backend, &mut scratch)
        };
        match result {
            Ok(()) => {
                assert!(
                    backend.is_available(),
                    "{} ran but says it is unavailable",
                    backend.name()
                );
                outputs.check(case, expected, &everything, backend.name());
            }
            Err(Error::Backend { name }) => {
                assert!(
                    !backend.is_available() && name == backend.name(),
                    "{}: {name}",
                    backend.name()
                );
                outputs.check(case, expected, &nothing, backend.name());
            }
            Err(e) => panic!("{}: {e}: {}", backend.name(), case.describe()),
        }
    }

    // A plan split in two, each half run range by range in random order with random backends; first a
    // random subset of the ranges (only those sequences may be written), then the rest.
    let mut outputs = Outputs::<T, I, D>::new(rng, out, sentinel);
    let count = case.sequences();
    let mid = rng.range(0, count);
    let mut jobs: Vec<(bool, std::ops::Range<usize>)> = chunks(rng, mid).into_iter().map(|r| (false, r)).collect();
    jobs.extend(chunks(rng, count - mid).into_iter().map(|r| (true, r)));
    rng.shuffle(&mut jobs);
    let first = rng.range(0, jobs.len());
    let mut done = vec![false; count];
    for phase in [&jobs[..first], &jobs[first..]] {
        {
            let (values, indices) = outputs.views();
            let plan = TopK::new(Request {
                input,
                axis: axis as isize,
                k,
                direction,
                values,
                indices,
            })
            .unwrap();
            let (mut low, mut high) = plan.split_at(mid).unwrap();
            assert_eq!((low.sequences(), high.sequences()), (mid, count - mid));
            let mut scratch = random_scratch(rng, low.scratch_len().max(high.scratch_len()));
            for (upper, range) in phase {
                let backend = rng.pick(&Backend::ALL);
                let (part, base) = if *upper { (&mut high, mid) } else { (&mut low, 0) };
                run_or_auto(part, range.clone(), backend, &mut scratch);
                done[base + range.start..base + range.end].fill(true);
            }
        }
        outputs.check(case, expected, &|s| done[s], "split_at + run_sequences");
    }

    // On the stack: enough room whenever the candidate buffer fits 4 · STACK_K words.
    let mut outputs = Outputs::<T, I, D>::new(rng, out, sentinel);
    let needed = if count == 0 {
        0
    } else {
        min_scratch_len::<T>(case.n(), k)
    };
    let result = {
        let (values, indices) = outputs.views();
        topk_on_stack::<STACK_K, T, I, D>(Request {
            input,
            axis: axis as isize,
            k,
            direction,
            values,
            indices,
        })
    };
    if needed <= 4 * STACK_K {
        result.unwrap_or_else(|e| panic!("topk_on_stack: {e}: {}", case.describe()));
        outputs.check(case, expected, &everything, "topk_on_stack");
    } else {
        assert_eq!(
            result,
            Err(Error::Scratch {
                needed,
                given: 4 * STACK_K
            }),
            "{}",
            case.describe()
        );
        outputs.check(case, expected, &nothing, "topk_on_stack (scratch too small)");
    }

    // `topk` with one word too few (an error that writes nothing), then exactly enough.
    let mut outputs = Outputs::<T, I, D>::new(rng, out, sentinel);
    if needed > 0 && count > 0 {
        let mut scratch = random_scratch(rng, needed - 1);
        let (values, indices) = outputs.views();
        let result = topk(
            Request {
                input,
                axis: axis as isize,
                k,
                direction,
                values,
                indices,
            },
            &mut scratch,
        );
        assert_eq!(
            result,
            Err(Error::Scratch {
                needed,
                given: needed - 1
            }),
            "{}",
            case.describe()
        );
        outputs.check(case, expected, &nothing, "topk (scratch too small)");
    }
    let mut scratch = random_scratch(rng, needed);
    let (values, indices) = outputs.views();
    topk(
        Request {
            input,
            axis: axis as isize,
            k,
            direction,
            values,
            indices,
        },
        &mut scratch,
    )
    .unwrap_or_else(|e| panic!("topk: {e}: {}", case.describe()));
    outputs.check(case, expected, &everything, "topk");
}

/// The same request at run-time rank: views padded to rank 8, the axis moved by `padded_axis`.
fn padded<T: Value, const D: usize>(case: &Case<'_, T, D>, data: &[T], expected: &Expected) {
    let layout = &case.layout;
    let input = View::padded(data, &layout.sizes, Some(&layout.strides), layout.offset).unwrap();
    let axis = case.axis;
    let out = case.out_sizes();
    let count = out.iter().product();
    let (mut values, mut indices) = (vec![T::from_bits(0); count], vec![i64::MIN; count]);
    let mut scratch = vec![0; min_scratch_len::<T>(case.n(), case.k)];
    topk(
        Request {
            input,
            axis: axis as isize,
            k: case.k,
            direction: case.direction,
            values: ViewMut::padded(&mut values, &out, None, 0).unwrap(),
            indices: ViewMut::padded(&mut indices, &out, None, 0).unwrap(),
        },
        &mut scratch,
    )
    .unwrap_or_else(|e| panic!("padded: {e}: {}", case.describe()));
    let values: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
    let indices: Vec<i128> = indices.iter().map(|&i| i as i128).collect();
    assert_eq!(
        (&values, &indices),
        (&expected.values, &expected.indices),
        "padded: {}",
        case.describe()
    );
}

/// The one test body: a random request of `T` at rank `D`, indices of type `I`, both directions.
///
/// One index type per rank, not all four, and not every rank for every dtype: the plan reduces the index
/// type to its width and the rank to 8 (`src/plan.rs`) before anything runs, so past a few ranks (the
/// shapes and axes they make) the pairs add nothing but copies of the test's code (in release for qemu,
/// the longest build of the test command: 96 copies of this body built in 128 s, 48 in half that).
fn property<T: Value, I: TestIndex, const D: usize>(Seed(seed): Seed) {
    replayable(&format!("{} rank {D} {}", T::NAME, I::NAME), seed, || {
        case::<T, I, D>(seed)
    });
}

fn case<T: Value, I: TestIndex, const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let axis = rng.below(D);
    let sizes = random_sizes::<D>(&mut rng, axis);
    // Half the cases have contiguous rows, which the vector engines scan in blocks.
    let unit = if rng.chance(1, 2) { Some(axis) } else { None };
    let layout = strided(&mut rng, sizes, Role::Input, unit);
    let data = random_values::<T>(&mut rng, layout.len);
    let input = View::new(&data, sizes, layout.strides, layout.offset)
        .unwrap_or_else(|e| panic!("TOPK_SEED={seed}: input layout {layout:?}: {e}"));
    let elements = sizes.iter().product();
    let k = random_k(&mut rng, sizes[axis], elements);
    // A pattern absent from the input tells untouched outputs from written ones; when a narrow type uses
    // every pattern, the index outputs (whose sentinel is never a position) still do.
    let sentinel = absent_bits(&mut rng, &data).unwrap_or(mask(T::WIDTH));
    for direction in [Direction::Increasing, Direction::Decreasing] {
        let case = Case {
            seed,
            input,
            layout,
            axis,
            k,
            direction,
        };
        let expected = reference(&case);
        assert_eq!(
            expected,
            oracle(&input, axis, k, direction),
            "naive vs oracle: {}",
            case.describe()
        );
        padded(&case, &data, &expected);
        index_type::<T, I, D>(&case, &expected, sentinel, &mut rng);
    }
}

macro_rules! properties {
    ($($module:ident: $t:ty, $high:ident: $rank:literal;)*) => {$(
        mod $module {
            use super::*;
            #[test] fn rank_1() { check_seeds(CASES, property::<$t, u32, 1>) }
            #[test] fn rank_2() { check_seeds(CASES, property::<$t, i64, 2>) }
            #[test] fn rank_3() { check_seeds(CASES, property::<$t, u64, 3>) }
            #[test] fn $high() { check_seeds(CASES, property::<$t, i32, $rank>) }
        }
    )*};
}

properties! {
    of_f32: f32, rank_4: 4;
    of_f64: f64, rank_5: 5;
    of_f16: f16, rank_6: 6;
    of_bf16: bf16, rank_7: 7;
    of_i8: i8, rank_8: 8;
    of_i16: i16, rank_4: 4;
    of_i32: i32, rank_5: 5;
    of_i64: i64, rank_6: 6;
    of_u8: u8, rank_7: 7;
    of_u16: u16, rank_8: 8;
    of_u32: u32, rank_4: 4;
    of_u64: u64, rank_5: 5;
}
