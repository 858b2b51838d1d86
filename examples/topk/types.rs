//! The value and index types of the command line, and the one place that turns a run-time type name
//! into a compile-time type (`with_dtype!`, `with_npy_dtype!`, `with_index!`).

use topk_kernels::{Element, bf16, f16};

/// A value type, as named on the command line (`--dtype f32`) and in .npy headers (`<f4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DType {
    F16,
    Bf16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

impl DType {
    /// Every value type, in the order of the help text.
    pub(crate) const ALL: [DType; 12] = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::Bf16,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
    ];

    /// The command-line name: the library's `Element::NAME`.
    pub(crate) fn name(self) -> &'static str {
        with_dtype!(self, T => T::NAME)
    }

    pub(crate) fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The type of a little-endian (or byte-sized) .npy type code: `kind` is `f`, `i` or `u`.
    pub(crate) fn from_npy(kind: char, bytes: usize) -> Option<DType> {
        Some(match (kind, bytes) {
            ('f', 2) => DType::F16,
            ('f', 4) => DType::F32,
            ('f', 8) => DType::F64,
            ('i', 1) => DType::I8,
            ('i', 2) => DType::I16,
            ('i', 4) => DType::I32,
            ('i', 8) => DType::I64,
            ('u', 1) => DType::U8,
            ('u', 2) => DType::U16,
            ('u', 4) => DType::U32,
            ('u', 8) => DType::U64,
            _ => return None,
        })
    }

    /// DirectML's name of the type, for the demo's printouts.
    pub(crate) fn dml_name(self) -> &'static str {
        match self {
            DType::F16 => "FLOAT16",
            DType::Bf16 => "BFLOAT16",
            DType::F32 => "FLOAT32",
            DType::F64 => "FLOAT64",
            DType::I8 => "INT8",
            DType::I16 => "INT16",
            DType::I32 => "INT32",
            DType::I64 => "INT64",
            DType::U8 => "UINT8",
            DType::U16 => "UINT16",
            DType::U32 => "UINT32",
            DType::U64 => "UINT64",
        }
    }

    /// Bytes per element.
    pub(crate) fn size(self) -> usize {
        with_dtype!(self, T => size_of::<T>())
    }
}

/// An index output type (`--index-type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum IndexType {
    U32,
    U64,
    I32,
    I64,
}

impl IndexType {
    pub(crate) fn name(self) -> &'static str {
        with_index!(self, I => <I as topk_kernels::Index>::NAME)
    }
}

/// Binds the type alias `$t` to the value type of `$dtype` (all 12) and evaluates `$body`.
macro_rules! with_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {{
        use $crate::types::DType as D;
        match $dtype {
            D::F16 => {
                type $t = topk_kernels::f16;
                $body
            }
            D::Bf16 => {
                type $t = topk_kernels::bf16;
                $body
            }
            D::F32 => {
                type $t = f32;
                $body
            }
            D::F64 => {
                type $t = f64;
                $body
            }
            D::I8 => {
                type $t = i8;
                $body
            }
            D::I16 => {
                type $t = i16;
                $body
            }
            D::I32 => {
                type $t = i32;
                $body
            }
            D::I64 => {
                type $t = i64;
                $body
            }
            D::U8 => {
                type $t = u8;
                $body
            }
            D::U16 => {
                type $t = u16;
                $body
            }
            D::U32 => {
                type $t = u32;
                $body
            }
            D::U64 => {
                type $t = u64;
                $body
            }
        }
    }};
}
pub(crate) use with_dtype;

/// Like `with_dtype!` for the 11 types .npy files can hold; `$bf16` is evaluated for bf16 (no npy code).
macro_rules! with_npy_dtype {
    ($dtype:expr, $t:ident => $body:expr, bf16 => $bf16:expr) => {{
        use $crate::types::DType as D;
        match $dtype {
            D::Bf16 => $bf16,
            D::F16 => {
                type $t = topk_kernels::f16;
                $body
            }
            D::F32 => {
                type $t = f32;
                $body
            }
            D::F64 => {
                type $t = f64;
                $body
            }
            D::I8 => {
                type $t = i8;
                $body
            }
            D::I16 => {
                type $t = i16;
                $body
            }
            D::I32 => {
                type $t = i32;
                $body
            }
            D::I64 => {
                type $t = i64;
                $body
            }
            D::U8 => {
                type $t = u8;
                $body
            }
            D::U16 => {
                type $t = u16;
                $body
            }
            D::U32 => {
                type $t = u32;
                $body
            }
            D::U64 => {
                type $t = u64;
                $body
            }
        }
    }};
}
pub(crate) use with_npy_dtype;

/// Binds the type alias `$t` to the index type of `$index` and evaluates `$body`.
macro_rules! with_index {
    ($index:expr, $t:ident => $body:expr) => {{
        use $crate::types::IndexType as X;
        match $index {
            X::U32 => {
                type $t = u32;
                $body
            }
            X::U64 => {
                type $t = u64;
                $body
            }
            X::I32 => {
                type $t = i32;
                $body
            }
            X::I64 => {
                type $t = i64;
                $body
            }
        }
    }};
}
pub(crate) use with_index;

/// What the benchmark's data generators and the result check need of a value type.
pub(crate) trait Sample: Element + Default {
    /// A value from `u` uniform in [0, 1): floats take it as it is; integers scale it to their range
    /// the way `shared/bench/peers.py` does (`x * MAX` unsigned, `x * 2^(bits-1)` signed, so >= 0).
    fn uniform(u: f64) -> Self;
    /// A value from `z` standard normal: floats as it is; integers `z` times a sixteenth of the range
    /// around the middle of their range (0 for signed), saturating.
    fn normal(z: f64) -> Self;
    /// Element `i` of `arange(n)` converted as NumPy's `astype` would: integers wrap, floats round.
    fn ascending(i: u64) -> Self;
    /// A NaN with this payload and sign (floats); the largest value (integers, which have no NaN).
    fn nan(payload: u64, negative: bool) -> Self;
    /// The bits of the value, for bit-for-bit comparison.
    fn bits(self) -> u64;
    /// The raw bits at their own width, for the benchmark's streaming floor.
    type Raw: Copy + Send + std::ops::BitXor<Output = Self::Raw>;
    /// The value's bits as [`Self::Raw`].
    fn raw(self) -> Self::Raw;
    /// The value for the demo's printouts: integers as they are, floats with Rust's shortest repr.
    fn show(self) -> String;
}

macro_rules! float_samples {
    ($($t:ty: $raw:ty, $from:expr, $to_f64:expr, $mantissa:expr;)*) => {$(
        impl Sample for $t {
            type Raw = $raw;
            fn raw(self) -> $raw {
                self.to_bits()
            }
            fn uniform(u: f64) -> Self {
                $from(u)
            }
            fn normal(z: f64) -> Self {
                $from(z)
            }
            fn ascending(i: u64) -> Self {
                $from(i as f64)
            }
            fn nan(payload: u64, negative: bool) -> Self {
                let bits = size_of::<$t>() as u32 * 8;
                let sign = (negative as u64) << (bits - 1);
                let exponent = ((1u64 << (bits - 1)) - 1) & !((1u64 << $mantissa) - 1);
                // A non-zero payload: the quiet bit or a random pattern, never an infinity.
                let payload = (payload & ((1u64 << $mantissa) - 1)).max(1);
                <$t>::from_bits((sign | exponent | payload) as _)
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn show(self) -> String {
                format!("{}", $to_f64(self))
            }
        }
    )*};
}
float_samples! {
    f32: u32, |x: f64| x as f32, f64::from, 23;
    f64: u64, |x: f64| x, |x: f64| x, 52;
    f16: u16, f16::from_f64, f64::from, 10;
    bf16: u16, bf16::from_f64, f64::from, 7;
}

macro_rules! int_samples {
    ($($t:ty: $u:ty, $signed:expr;)*) => {$(
        impl Sample for $t {
            type Raw = $u;
            fn raw(self) -> $u {
                self as $u
            }
            fn uniform(u: f64) -> Self {
                // `as` from f64 saturates, so no input can overflow.
                if $signed { (u * (<$t>::MAX as f64 + 1.0)) as $t } else { (u * <$t>::MAX as f64) as $t }
            }
            fn normal(z: f64) -> Self {
                let span = <$u>::MAX as f64;
                let middle = if $signed { 0.0 } else { span / 2.0 };
                (middle + z * span / 16.0) as $t
            }
            fn ascending(i: u64) -> Self {
                i as $t // wraps, like NumPy's astype of arange
            }
            fn nan(_payload: u64, _negative: bool) -> Self {
                <$t>::MAX
            }
            fn bits(self) -> u64 {
                self as $u as u64
            }
            fn show(self) -> String {
                self.to_string()
            }
        }
    )*};
}
int_samples! {
    i8: u8, true;
    i16: u16, true;
    i32: u32, true;
    i64: u64, true;
    u8: u8, false;
    u16: u16, false;
    u32: u32, false;
    u64: u64, false;
}

/// What the result check and the writers need of an index type.
pub(crate) trait IndexSample: topk_kernels::Index + Default + PartialEq + std::fmt::Display {}
impl<I: topk_kernels::Index + Default + PartialEq + std::fmt::Display> IndexSample for I {}
