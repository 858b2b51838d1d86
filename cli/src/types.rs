//! What the command line needs of the value and index types: the dispatch over the types a .npy file
//! can hold (`with_npy_dtype!`), and the data generators and checks (`Sample`, `IndexSample`). The
//! run-time names are the library's `DataType` and `IndexType`; the .npy type codes are in `npy.rs`.

use topk_kernels::{Element, bf16, f16};

/// `topk_kernels::with_data_type!` for the 11 types .npy files can hold; `$bf16` is evaluated for bf16
/// (no npy code).
macro_rules! with_npy_dtype {
    ($dtype:expr, $t:ident => $body:expr, bf16 => $bf16:expr) => {{
        use topk_kernels::DataType as D;
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
