//! Shared machinery of the fuzz targets: arbitrary requests, an independent validity oracle, an
//! independent output checker, and the dtype x index-type dispatch.
//!
//! The oracle and the checker do not use the library's validation or its key mapping: they recompute
//! every address in `i128`, enumerate output coordinates to find aliasing, and order values by an
//! integer image of docs/CONTRACT.md §2 written differently from `src/types/element.rs`. So a bug that the library's
//! naive reference shares with its fast engines (both sit behind the same `TopK::new`) still shows.

use arbitrary::{Arbitrary, Unstructured};
use topk_kernels::{Direction, Element, Error, Index, MAX_RANK, View, ViewMut};

// The targets name the types at run time, and `dispatch!` turns them into Rust types.
pub use topk_kernels::{DataType, IndexType, bf16, f16, with_data_type, with_index_type};

/// Elements a fuzz-built tensor may hold, so that one execution stays around a millisecond.
pub const MAX_ELEMENTS: usize = 2048;
/// Longest sequence the generators build (the naive reference is O(n·K) per sequence).
pub const MAX_SEQUENCE: usize = 300;

/// An arbitrary value type, as `#[derive(Arbitrary)]` picks an enum's variant (so the committed seeds
/// decode as they did when this crate had its own copy of the enum, in the same order).
pub fn arbitrary_data_type(u: &mut Unstructured<'_>) -> arbitrary::Result<DataType> {
    Ok(DataType::ALL[pick(u, DataType::ALL.len())?])
}

/// An arbitrary index type, picked as [`arbitrary_data_type`] picks.
pub fn arbitrary_index_type(u: &mut Unstructured<'_>) -> arbitrary::Result<IndexType> {
    Ok(IndexType::ALL[pick(u, IndexType::ALL.len())?])
}

/// A number below `count` from four bytes, as the derive computes a variant.
fn pick(u: &mut Unstructured<'_>, count: usize) -> arbitrary::Result<usize> {
    Ok(((u64::from(u32::arbitrary(u)?) * count as u64) >> 32) as usize)
}

/// Calls `$f::<T, I>($args)` for the run-time `$dtype` ([`DataType`]) and `$index` ([`IndexType`]).
#[macro_export]
macro_rules! dispatch {
    ($dtype:expr, $index:expr, $f:ident($($args:expr),*)) => {
        $crate::with_data_type!($dtype, T => $crate::with_index_type!($index, I => $f::<T, I>($($args),*)))
    };
}

/// Plain-old-data access to the twelve value types (and so the four index types).
pub trait Pod: Copy + core::fmt::Debug {
    /// Size in bytes.
    const SIZE: usize;
    /// The value whose little-endian bytes start `bytes` (zero-extended when short).
    fn from_le(bytes: &[u8]) -> Self;
    /// The bits, zero-extended: equality of `bits` is bitwise equality.
    fn bits(self) -> u64;
    /// docs/CONTRACT.md §2 as an integer: integers are themselves; floats go through f64 (exact for every
    /// format here), `-0` becomes `+0`, negatives order by negated magnitude bits, every NaN is
    /// `i128::MAX`. Written apart from `topk_kernels::Element::key` on purpose.
    fn order(self) -> i128;
    /// A recognisable value that no correct run writes over an untouched element.
    fn sentinel() -> Self {
        Self::from_le(&[0xA5; 8])
    }
}

fn le_array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut array = [0u8; N];
    let n = bytes.len().min(N);
    array[..n].copy_from_slice(&bytes[..n]);
    array
}

macro_rules! int_pods {
    ($($t:ty => $u:ty),*) => {$(
        impl Pod for $t {
            const SIZE: usize = size_of::<$t>();
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(le_array(bytes))
            }
            fn bits(self) -> u64 {
                self as $u as u64
            }
            fn order(self) -> i128 {
                self as i128
            }
        }
    )*};
}
int_pods!(i8 => u8, i16 => u16, i32 => u32, i64 => u64, u8 => u8, u16 => u16, u32 => u32, u64 => u64);

fn f64_order(x: f64) -> i128 {
    if x.is_nan() {
        i128::MAX
    } else if x == 0.0 {
        0
    } else {
        let magnitude = (x.to_bits() & !(1 << 63)) as i128;
        if x < 0.0 { -magnitude } else { magnitude }
    }
}

macro_rules! float_pods {
    ($($t:ty => $from_bits:expr, $to_bits:expr, $bits:ty;)*) => {$(
        impl Pod for $t {
            const SIZE: usize = size_of::<$t>();
            fn from_le(bytes: &[u8]) -> Self {
                $from_bits(<$bits>::from_le_bytes(le_array(bytes)))
            }
            fn bits(self) -> u64 {
                $to_bits(self) as u64
            }
            fn order(self) -> i128 {
                f64_order(f64::from(self))
            }
        }
    )*};
}
float_pods! {
    f32 => f32::from_bits, f32::to_bits, u32;
    f64 => f64::from_bits, f64::to_bits, u64;
    f16 => f16::from_bits, f16::to_bits, u16;
    bf16 => bf16::from_bits, bf16::to_bits, u16;
}

/// `len` elements made from `bytes`, cycled (short byte strings give many ties, which is the point).
pub fn elements<T: Pod>(bytes: &[u8], len: usize) -> Vec<T> {
    if bytes.is_empty() {
        return vec![T::from_le(&[]); len];
    }
    let mut cycled = bytes.iter().copied().cycle();
    (0..len)
        .map(|_| {
            let chunk: Vec<u8> = cycled.by_ref().take(T::SIZE).collect();
            T::from_le(&chunk)
        })
        .collect()
}

/// A size: small mostly, sometimes one that overflows something.
pub fn wild_size(b: u8) -> usize {
    match b {
        255 => usize::MAX,
        254 => isize::MAX as usize,
        253 => (isize::MAX as usize) + 1,
        252 => 1 << 32,
        251 => (1 << 32) + 1,
        250 => 1 << 62,
        249 => 65_537,
        _ => (b % 6) as usize,
    }
}

/// A stride: small signed mostly, sometimes an extreme.
pub fn wild_stride(b: i8) -> isize {
    match b {
        -128 => isize::MIN,
        127 => isize::MAX,
        126 => 1 << 40,
        -127 => -(1 << 40),
        125 => 1 << 32,
        x => (x % 16) as isize,
    }
}

/// How a tensor's strides are made.
#[derive(Arbitrary, Clone, Debug)]
pub enum Strides {
    /// `None`: the library derives row-major strides.
    RowMajor,
    /// Arbitrary strides (zero, negative, overlapping, extreme).
    Raw([i8; MAX_RANK]),
    /// A permutation of the dimensions, each stepped by 1..=3 and possibly reversed: never aliases.
    Permuted {
        /// Sort keys giving the order of dimensions from innermost out.
        order: [u8; MAX_RANK],
        /// Steps (`% 3 + 1`).
        steps: [u8; MAX_RANK],
        /// Bit d reverses dimension d (negative stride).
        reversed: u8,
        /// Bit d gives dimension d stride 0 (broadcast; only fine for the input).
        broadcast: u8,
    },
}

/// Where a tensor starts and how long its slice is.
#[derive(Arbitrary, Clone, Debug)]
pub enum Placement {
    /// Offset just enough for negative strides plus `extra`, slice just long enough plus `slack`.
    Fit {
        /// Added to the minimal offset.
        extra: u8,
        /// Added to the minimal slice length.
        slack: u8,
    },
    /// Offset and slice length as given (lengths capped for memory).
    Raw {
        /// The offset ([`wild_size`] of it, or the byte itself).
        offset: u8,
        /// Whether the offset is `wild_size(offset)` rather than `offset`.
        wild_offset: bool,
        /// The slice length.
        len: u16,
    },
}

/// The sizes of an output.
#[derive(Arbitrary, Clone, Debug)]
pub enum OutputSizes {
    /// The input's, with K along the axis (what a valid request has).
    Derived,
    /// The input's with K along the axis, one dimension then changed to `wild_size(by)`.
    Perturbed {
        /// The dimension changed (`% rank`).
        dim: u8,
        /// Its new size.
        by: u8,
    },
    /// Arbitrary sizes.
    Raw([u8; MAX_RANK]),
}

/// One tensor of a request.
#[derive(Arbitrary, Clone, Debug)]
pub struct TensorDesc {
    /// How strides are made.
    pub strides: Strides,
    /// Offset and slice length.
    pub placement: Placement,
}

/// An arbitrary request: everything the public API lets a caller choose.
#[derive(Arbitrary, Clone, Debug)]
pub struct Request {
    /// Value type.
    #[arbitrary(with = arbitrary_data_type)]
    pub dtype: DataType,
    /// Index type.
    #[arbitrary(with = arbitrary_index_type)]
    pub index: IndexType,
    /// `rank % 8 + 1`; 250 and up give the invalid ranks 0 and 9.
    pub rank: u8,
    /// The axis (`% (rank + 1)`, so sometimes one past the end; 255 is `usize::MAX`).
    pub axis: u8,
    /// Input sizes ([`wild_size`]).
    pub sizes: [u8; MAX_RANK],
    /// The sequence length, replacing the axis size unless the axis size is wild (`% MAX_SEQUENCE + 1`
    /// when below 0xFF00, else 0).
    pub len: u16,
    /// K: `k % (n + 2)` below 250 (so sometimes n + 1), else an extreme.
    pub k: u8,
    /// Decreasing or increasing.
    pub decreasing: bool,
    /// The input.
    pub input: TensorDesc,
    /// The values output.
    pub values: (TensorDesc, OutputSizes),
    /// The indices output.
    pub indices: (TensorDesc, OutputSizes),
    /// Bytes the input is made of (cycled).
    pub data: Vec<u8>,
}

/// A request decoded into concrete numbers.
#[derive(Clone, Debug)]
pub struct Concrete {
    /// Dimension count (0 and 9 are invalid).
    pub rank: usize,
    /// Axis, in the caller's rank.
    pub axis: usize,
    /// K.
    pub k: usize,
    /// Direction.
    pub direction: Direction,
    /// Input, values, indices.
    pub tensors: [ConcreteTensor; 3],
}

/// One tensor decoded.
#[derive(Clone, Debug)]
pub struct ConcreteTensor {
    /// Sizes (`rank` of them; 9 for rank 9).
    pub sizes: Vec<usize>,
    /// Strides (`None`: row-major).
    pub strides: Option<Vec<isize>>,
    /// Element offset.
    pub offset: usize,
    /// Slice length.
    pub len: usize,
}

fn permuted_strides(sizes: &[usize], order: &[u8], steps: &[u8], reversed: u8, broadcast: u8) -> Vec<isize> {
    let rank = sizes.len();
    let mut dims: Vec<usize> = (0..rank).collect();
    dims.sort_by_key(|&d| (order[d % MAX_RANK], d));
    let mut strides = vec![0isize; rank];
    let mut running: isize = 1;
    for &d in &dims {
        let step = (steps[d % MAX_RANK] % 3 + 1) as isize;
        let stride = running.saturating_mul(step);
        strides[d] = if reversed >> (d % 8) & 1 == 1 { -stride } else { stride };
        if broadcast >> (d % 8) & 1 == 1 {
            strides[d] = 0;
        }
        let size = isize::try_from(sizes[d].max(1)).unwrap_or(isize::MAX);
        running = stride.saturating_mul(size);
    }
    strides
}

/// Exact reach of a layout: (lowest, highest) address offsets from the start, None for no elements.
fn reach(sizes: &[usize], strides: &[isize]) -> Option<(i128, i128)> {
    if sizes.contains(&0) {
        return None;
    }
    let (mut low, mut high) = (0i128, 0i128);
    for (&size, &stride) in sizes.iter().zip(strides) {
        // Saturated sums are far outside any slice, which is all the oracle needs of them.
        let r = (size as i128 - 1).saturating_mul(stride as i128);
        if r < 0 {
            low = low.saturating_add(r)
        } else {
            high = high.saturating_add(r)
        }
    }
    Some((low, high))
}

/// Row-major strides, computed exactly (saturated into isize where they cannot matter).
pub fn row_major(sizes: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; sizes.len()];
    let mut step: i128 = 1;
    for d in (0..sizes.len()).rev() {
        strides[d] = step.clamp(isize::MIN as i128, isize::MAX as i128) as isize;
        step = step.saturating_mul(sizes[d].max(1) as i128);
    }
    strides
}

impl TensorDesc {
    fn concrete(&self, sizes: Vec<usize>) -> ConcreteTensor {
        let strides = match &self.strides {
            Strides::RowMajor => None,
            Strides::Raw(raw) => Some(sizes.iter().enumerate().map(|(d, _)| wild_stride(raw[d % 8])).collect()),
            Strides::Permuted {
                order,
                steps,
                reversed,
                broadcast,
            } => Some(permuted_strides(&sizes, order, steps, *reversed, *broadcast)),
        };
        let effective = strides.clone().unwrap_or_else(|| row_major(&sizes));
        let (offset, len) = match self.placement {
            Placement::Fit { extra, slack } => match reach(&sizes, &effective) {
                Some((low, high)) => {
                    let offset = low.unsigned_abs().saturating_add(extra as u128);
                    let end = offset.saturating_add(high as u128).saturating_add(1 + slack as u128);
                    if end > (MAX_ELEMENTS * 4) as u128 {
                        (usize::try_from(offset).unwrap_or(usize::MAX), MAX_ELEMENTS)
                    } else {
                        (offset as usize, end as usize)
                    }
                }
                None => (extra as usize, slack as usize),
            },
            Placement::Raw {
                offset,
                wild_offset,
                len,
            } => {
                let offset = if wild_offset {
                    wild_size(offset)
                } else {
                    offset as usize
                };
                (offset, (len as usize) % (MAX_ELEMENTS * 2))
            }
        };
        ConcreteTensor {
            sizes,
            strides,
            offset,
            len,
        }
    }

    /// The strides actually used (the row-major ones when `None`).
    pub fn effective(t: &ConcreteTensor) -> Vec<isize> {
        t.strides.clone().unwrap_or_else(|| row_major(&t.sizes))
    }
}

fn output_sizes(input: &[usize], axis: usize, k: usize, how: &OutputSizes) -> Vec<usize> {
    let mut sizes = input.to_vec();
    if let Some(s) = sizes.get_mut(axis) {
        *s = k;
    }
    match how {
        OutputSizes::Derived => {}
        OutputSizes::Perturbed { dim, by } => {
            if !sizes.is_empty() {
                let d = *dim as usize % sizes.len();
                sizes[d] = wild_size(*by);
            }
        }
        OutputSizes::Raw(raw) => {
            for (d, s) in sizes.iter_mut().enumerate() {
                *s = wild_size(raw[d % 8]);
            }
        }
    }
    sizes
}

impl Request {
    /// Decodes the request into concrete numbers, keeping tensors small.
    pub fn concrete(&self) -> Concrete {
        let rank = match self.rank {
            250..=252 => 0,
            253..=255 => 9,
            r => r as usize % 8 + 1,
        };
        let axis = if self.axis == 255 {
            usize::MAX
        } else {
            self.axis as usize % (rank + 1)
        };
        let mut sizes: Vec<usize> = (0..rank).map(|d| wild_size(self.sizes[d % 8])).collect();
        if axis < rank && sizes[axis] <= 5 {
            sizes[axis] = if self.len >= 0xFF00 {
                0
            } else {
                self.len as usize % MAX_SEQUENCE + 1
            };
        }
        // Keep small tensors small: fold leading non-axis dimensions to 1 until the count fits.
        let small = sizes.iter().all(|&s| s <= MAX_SEQUENCE);
        if small {
            for d in 0..rank {
                if sizes.iter().product::<usize>() <= MAX_ELEMENTS {
                    break;
                }
                if d != axis {
                    sizes[d] = 1;
                }
            }
        }
        let n = sizes.get(axis).copied().unwrap_or(0);
        let k = match self.k {
            255 => usize::MAX,
            254 => n.saturating_add(1),
            253 => n,
            252 => 1 << 32,
            k => k as usize % (n.min(250) + 2),
        };
        let direction = if self.decreasing {
            Direction::Decreasing
        } else {
            Direction::Increasing
        };
        let input = self.input.concrete(sizes.clone());
        let values = self.values.0.concrete(output_sizes(&sizes, axis, k, &self.values.1));
        let indices = self.indices.0.concrete(output_sizes(&sizes, axis, k, &self.indices.1));
        Concrete {
            rank,
            axis,
            k,
            direction,
            tensors: [input, values, indices],
        }
    }
}

/// What the oracle expects of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Every rule of docs/CONTRACT.md §5 holds: `Ok` (or, see `maybe_aliasing`, the library's conservative
    /// aliasing rejection).
    Valid,
    /// Some rule is broken: `Err`.
    Invalid,
    /// docs/CONTRACT.md does not decide (a zero-element view whose sizes overflow on the way to the zero).
    Either,
}

/// Independent validity of one layout against its slice. `output`: must also be unaliased.
fn layout_expect(t: &ConcreteTensor, output: bool) -> Expect {
    let exact: u128 = t
        .sizes
        .iter()
        .try_fold(1u128, |p, &s| p.checked_mul(s as u128))
        .unwrap_or(u128::MAX);
    let any_zero = t.sizes.contains(&0);
    if any_zero {
        // Zero elements: nothing is reachable. The library multiplies sizes left to right and rejects an
        // overflow before the zero; row-major strides also need every size to fit isize.
        let mut running = 1usize;
        let mut overflowed = false;
        for &s in &t.sizes {
            match running.checked_mul(s) {
                Some(p) => running = p,
                None => overflowed = true,
            }
            if overflowed {
                break;
            }
        }
        let huge = t.sizes.iter().any(|&s| s > isize::MAX as usize);
        return if overflowed || huge {
            Expect::Either
        } else {
            Expect::Valid
        };
    }
    if exact > isize::MAX as u128 || t.offset > isize::MAX as usize {
        return Expect::Invalid;
    }
    let strides = TensorDesc::effective(t);
    let Some((low, high)) = reach(&t.sizes, &strides) else {
        return Expect::Valid;
    };
    let (lowest, highest) = (
        (t.offset as i128).saturating_add(low),
        (t.offset as i128).saturating_add(high),
    );
    if lowest < 0 || highest >= t.len as i128 {
        return Expect::Invalid;
    }
    if output {
        if exact > t.len as u128 {
            return Expect::Invalid; // pigeonhole: more coordinates than elements
        }
        let mut seen = vec![false; t.len];
        let mut aliased = false;
        for_each_coord(&t.sizes, |coord| {
            let a = address(t.offset, &strides, coord) as usize;
            aliased |= std::mem::replace(&mut seen[a], true);
        });
        if aliased {
            return Expect::Invalid;
        }
    }
    Expect::Valid
}

/// Calls `f` with every coordinate of `sizes` in row-major order.
pub fn for_each_coord(sizes: &[usize], mut f: impl FnMut(&[usize])) {
    if sizes.contains(&0) {
        return;
    }
    let mut coord = vec![0usize; sizes.len()];
    loop {
        f(&coord);
        let mut d = sizes.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            coord[d] += 1;
            if coord[d] < sizes[d] {
                break;
            }
            coord[d] = 0;
        }
    }
}

/// Address of `coord`, exactly.
pub fn address(offset: usize, strides: &[isize], coord: &[usize]) -> i128 {
    offset as i128
        + coord
            .iter()
            .zip(strides)
            .map(|(&c, &s)| c as i128 * s as i128)
            .sum::<i128>()
}

impl Concrete {
    /// What docs/CONTRACT.md §5 says of this request, worked out without the library. `index_max` is the index
    /// type's largest value.
    pub fn expect(&self, index_max: u64) -> Expect {
        if !(1..=MAX_RANK).contains(&self.rank) || self.axis >= self.rank {
            return Expect::Invalid;
        }
        let [input, values, indices] = &self.tensors;
        let n = input.sizes[self.axis];
        if self.k > n {
            return Expect::Invalid;
        }
        for out in [values, indices] {
            for (d, (&i, &o)) in input.sizes.iter().zip(&out.sizes).enumerate() {
                if o != if d == self.axis { self.k } else { i } {
                    return Expect::Invalid;
                }
            }
        }
        if n > 0 && (n - 1) as u64 > index_max {
            return Expect::Invalid;
        }
        let mut result = Expect::Valid;
        for (t, output) in [(input, false), (values, true), (indices, true)] {
            match layout_expect(t, output) {
                Expect::Invalid => return Expect::Invalid,
                Expect::Either => result = Expect::Either,
                Expect::Valid => {}
            }
        }
        result
    }
}

/// The largest value of the index type `I` (what the library calls `MAX_POSITION`).
pub fn index_max<I: Index>() -> u64 {
    I::MAX_POSITION
}

/// Runs `f` on views built from `c` over the given buffers, the way a caller of the run-time-rank API
/// would (`View::padded`, `ViewMut::padded`, the caller's axis; `usize::MAX` stays out of range).
pub fn with_views<T: Element, I: Index, R>(
    c: &Concrete,
    input: &[T],
    values: &mut [T],
    indices: &mut [I],
    f: impl FnOnce(View<'_, T, MAX_RANK>, isize, ViewMut<'_, T, MAX_RANK>, ViewMut<'_, I, MAX_RANK>) -> Result<R, Error>,
) -> Result<R, Error> {
    let [ti, tv, tx] = &c.tensors;
    let input = View::padded(input, &ti.sizes, ti.strides.as_deref(), ti.offset)?;
    let values = ViewMut::padded(values, &tv.sizes, tv.strides.as_deref(), tv.offset)?;
    let indices = ViewMut::padded(indices, &tx.sizes, tx.strides.as_deref(), tx.offset)?;
    f(input, isize::try_from(c.axis).unwrap_or(isize::MAX), values, indices)
}

/// Checks a finished run independently of the library: for every sequence, each output value is the
/// input element at the reported position (bit for bit), the K outputs are strictly ordered by
/// (docs/CONTRACT.md §2 order, position), no unselected element comes before the last selected one, and every element
/// of the output slices outside the output views still holds the sentinel.
pub fn check_outputs<T: Pod, I: Pod>(c: &Concrete, input: &[T], values: &[T], indices: &[I]) {
    let [ti, tv, tx] = &c.tensors;
    let (si, sv, sx) = (
        TensorDesc::effective(ti),
        TensorDesc::effective(tv),
        TensorDesc::effective(tx),
    );
    let mut written_v = vec![false; values.len()];
    let mut written_x = vec![false; indices.len()];
    let axis = c.axis;
    let n = ti.sizes[axis];
    let mut outer = ti.sizes.clone();
    outer[axis] = 1;
    let decreasing = c.direction == Direction::Decreasing;
    // "a comes first": smaller rank key. Decreasing negates the order (i128::MAX for NaN stays distinct
    // from every finite key, so negation is safe).
    let rank_key = |x: T, p: usize| -> (i128, usize) {
        let o = x.order();
        (if decreasing { -o } else { o }, p)
    };
    // K = 0 writes nothing, and the input may then have 2^40 sequences (broadcast): only the sentinel
    // check below applies.
    let outer_coords = if c.k == 0 {
        vec![0] /* no coordinates */
    } else {
        outer
    };
    // A zero stride along the axis repeats one element n times, and n may be 2^63 (finding 4): the K
    // positions are kept as a set, not n flags, and only the first unselected position is compared with
    // the K-th, since a repeated element ties everywhere and positions decide.
    let repeated = si.get(axis) == Some(&0);
    for_each_coord(&outer_coords, |coord| {
        let mut coord = coord.to_vec();
        let mut selected = std::collections::BTreeSet::new();
        let mut previous: Option<(i128, usize)> = None;
        for j in 0..c.k {
            coord[axis] = j;
            let av = address(tv.offset, &sv, &coord) as usize;
            let ax = address(tx.offset, &sx, &coord) as usize;
            written_v[av] = true;
            written_x[ax] = true;
            let position = indices[ax].bits();
            let position = usize::try_from(position).expect("position fits usize");
            assert!(position < n, "index {position} out of a sequence of {n} at {coord:?}");
            assert!(
                selected.insert(position),
                "position {position} selected twice at {coord:?}"
            );
            coord[axis] = position;
            let x = input[address(ti.offset, &si, &coord) as usize];
            assert_eq!(
                values[av].bits(),
                x.bits(),
                "value at rank {j} is not input[{position}]"
            );
            let key = rank_key(x, position);
            assert!(previous.is_none_or(|p| p < key), "rank {j} out of order at {coord:?}");
            previous = Some(key);
        }
        if let Some(last) = previous {
            let unselected = (0..n).filter(|p| !selected.contains(p));
            for p in unselected.take(if repeated { 1 } else { usize::MAX }) {
                coord[axis] = p;
                let x = input[address(ti.offset, &si, &coord) as usize];
                assert!(
                    rank_key(x, p) > last,
                    "unselected position {p} beats the K-th at {coord:?}"
                );
            }
        }
    });
    for (a, v) in values.iter().enumerate() {
        assert!(
            written_v[a] || v.bits() == T::sentinel().bits(),
            "values[{a}] written outside the view"
        );
    }
    for (a, v) in indices.iter().enumerate() {
        assert!(
            written_x[a] || v.bits() == I::sentinel().bits(),
            "indices[{a}] written outside the view"
        );
    }
}

/// Comparisons above which the targets skip `naive::topk`, which makes about sequences · n · K of them: a
/// broadcast (zero-stride) input can have sequences of millions with a small output, and the reference
/// then ran for minutes under the sanitizer (fuzz finding 4, a timeout of the `request` target).
pub const NAIVE_BUDGET: u128 = 1 << 24;

impl Concrete {
    /// About how many comparisons `naive::topk` makes on this request: sequences · n · K (saturating; 0
    /// when the axis is out of range).
    pub fn naive_work(&self) -> u128 {
        let sizes = &self.tensors[0].sizes;
        let Some(&n) = sizes.get(self.axis) else {
            return 0;
        };
        let sequences = sizes
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != self.axis)
            .fold(1u128, |a, (_, &s)| a.saturating_mul(s as u128));
        sequences.saturating_mul(n as u128).saturating_mul(self.k as u128)
    }
}

/// Bitwise equality of two buffers, with the first difference in the message.
pub fn assert_same<T: Pod>(what: &str, a: &[T], b: &[T]) {
    assert_eq!(a.len(), b.len());
    if let Some(i) = (0..a.len()).find(|&i| a[i].bits() != b[i].bits()) {
        panic!("{what} differ at {i}: {:?} vs {:?}", a[i], b[i]);
    }
}
