//! Value types and their order-preserving keys: the total order of `docs/CONTRACT.md` §2 as unsigned
//! integers.
//!
//! Every kernel compares keys, never values: `a` precedes `b` in `Increasing` order iff
//! `key(a) < key(b)`, and `Decreasing` is the same with every key's bits flipped (see [`Order`]).
//! Positions break ties in both directions, so no kernel ever negates a value.
//!
//! - unsigned integers: the value itself;
//! - signed integers: the two's complement bits with the sign bit flipped (MIN → 0, MAX → all ones);
//! - floats: NaN (any sign, any payload) → all ones, above +inf; -0 → +0; other negatives → bits
//!   flipped; other positives → sign bit set. Values themselves are always copied bit for bit.

use half::{bf16, f16};

use crate::types::data_type::DataType;
use crate::types::output::{AnyJob, Job};

mod sealed {
    use crate::types::output::{AnyJob, Job};

    pub trait Sealed {
        /// How [`Element::key`](super::Element::key) makes the key from the bits: one of
        /// [`UNSIGNED_KEY`](super::UNSIGNED_KEY), [`SIGNED_KEY`](super::SIGNED_KEY),
        /// [`FLOAT_KEY`](super::FLOAT_KEY). A constant, so that a kernel's choice on it is made when it
        /// is compiled for a type (only that kind's filter is compiled); the kernels' tests check it
        /// against `key` itself.
        const KEY_FORM: u8;
    }

    /// The value type as the variant of [`AnyJob`] its jobs travel in: the kernels are entered through
    /// one function that is not generic over the value type (`dispatch`), so that a caller in another
    /// crate (a test binary, the C ABI, a runtime) does not compile them all again for itself.
    //
    // `Job` and `AnyJob` are crate-private, and so is this trait in effect: it cannot be named outside
    // the crate.
    #[allow(private_interfaces)]
    pub trait Erase: Sized {
        /// `job` as its type's variant.
        fn erase<'j, 'a, 'e>(job: Job<'j, 'a, 'e, Self>) -> AnyJob<'j, 'a, 'e>;
    }
}

/// A type's key form, and its jobs erased (neither can be named outside the crate).
pub(crate) use sealed::Sealed;

/// Keys are the bits: unsigned integers.
pub(crate) const UNSIGNED_KEY: u8 = 0;
/// Keys are the bits with the sign bit flipped: signed integers.
pub(crate) const SIGNED_KEY: u8 = 1;
/// Sign and magnitude: floats (negatives flipped, -0 as +0, NaN above everything).
pub(crate) const FLOAT_KEY: u8 = 2;

/// An unsigned key: `u8`, `u16`, `u32` or `u64`.
pub trait Key: Copy + Ord + Default + Send + Sync + 'static + sealed::Sealed {
    /// Width in bits.
    const BITS: u32;
    /// The key widened to 64 bits.
    fn widen(self) -> u64;
    /// The low `BITS` bits of `wide`: a widened key back at its own width.
    #[doc(hidden)]
    fn narrow(wide: u64) -> Self;
}

/// A value type the kernels select from.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed + sealed::Erase {
    /// The unsigned key whose natural order is this type's order (`docs/CONTRACT.md` §2).
    type Key: Key;
    /// The type's name at run time.
    const DATA_TYPE: DataType;
    /// A short lowercase name: `f32`, `bf16`, `u8`, ... (its `DATA_TYPE`'s name).
    const NAME: &'static str = Self::DATA_TYPE.name();
    /// Zero (all bits clear), to fill buffers with.
    const ZERO: Self;
    /// The key of a value.
    fn key(self) -> Self::Key;
}

macro_rules! keys {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {
            const KEY_FORM: u8 = UNSIGNED_KEY;
        }
        impl Key for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn widen(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn narrow(wide: u64) -> Self {
                wide as $t
            }
        }
    )*};
}
keys!(u8, u16, u32, u64);

macro_rules! unsigned_elements {
    ($($t:ident: $d:ident),*) => {$(
        impl Element for $t {
            type Key = $t;
            const DATA_TYPE: DataType = DataType::$d;
            const ZERO: $t = 0;
            #[inline(always)]
            fn key(self) -> $t {
                self
            }
        }
    )*};
}
unsigned_elements!(u8: U8, u16: U16, u32: U32, u64: U64);

macro_rules! signed_elements {
    ($($t:ident: $d:ident => $k:ident),*) => {$(
        impl sealed::Sealed for $t {
            const KEY_FORM: u8 = SIGNED_KEY;
        }
        impl Element for $t {
            type Key = $k;
            const DATA_TYPE: DataType = DataType::$d;
            const ZERO: $t = 0;
            #[inline(always)]
            fn key(self) -> $k {
                (self as $k) ^ (1 << ($k::BITS - 1))
            }
        }
    )*};
}
signed_elements!(i8: I8 => u8, i16: I16 => u16, i32: I32 => u32, i64: I64 => u64);

macro_rules! float_elements {
    ($($t:ident: $d:ident => $k:ident, $infinity:expr, $to_bits:expr, $zero:expr;)*) => {$(
        impl sealed::Sealed for $t {
            const KEY_FORM: u8 = FLOAT_KEY;
        }
        impl Element for $t {
            type Key = $k;
            const DATA_TYPE: DataType = DataType::$d;
            const ZERO: $t = $zero;
            #[inline(always)]
            fn key(self) -> $k {
                const SIGN: $k = 1 << ($k::BITS - 1);
                let bits: $k = $to_bits(self);
                let magnitude = bits & !SIGN;
                // Negative: all bits flipped; positive: the sign bit set. Written as masks and selects
                // rather than branches: the sign of random data is a coin toss.
                let negative = (bits >> ($k::BITS - 1)).wrapping_neg();
                let key = bits ^ (negative | SIGN);
                let key = if magnitude == 0 { SIGN } else { key }; // -0 == +0
                if magnitude > $infinity { $k::MAX } else { key } // every NaN: above +inf, all equal
            }
        }
    )*};
}
float_elements! {
    f32: F32 => u32, 0x7F80_0000, f32::to_bits, 0.0;
    f64: F64 => u64, 0x7FF0_0000_0000_0000, f64::to_bits, 0.0;
    f16: F16 => u16, 0x7C00, f16::to_bits, f16::ZERO;
    bf16: Bf16 => u16, 0x7F80, bf16::to_bits, bf16::ZERO;
}

macro_rules! erase {
    ($($t:ty: $variant:ident),*) => {$(
        #[allow(private_interfaces)] // as on `Erase`
        impl sealed::Erase for $t {
            #[inline(always)]
            fn erase<'j, 'a, 'e>(job: Job<'j, 'a, 'e, Self>) -> AnyJob<'j, 'a, 'e> {
                AnyJob::$variant(job)
            }
        }
    )*};
}
erase!(u8: U8, u16: U16, u32: U32, u64: U64, i8: I8, i16: I16, i32: I32, i64: I64, f16: F16, bf16: Bf16, f32: F32, f64: F64);

/// Which elements come first (`docs/CONTRACT.md` §1). Ties go to the lower position in both directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The K smallest, ascending (DML_AXIS_DIRECTION_INCREASING, ONNX `largest=0`).
    Increasing,
    /// The K largest, descending (DML_AXIS_DIRECTION_DECREASING, ONNX `largest=1`).
    Decreasing,
}

impl Direction {
    /// This direction for keys of `K`: what the kernels order by.
    #[inline(always)]
    pub(crate) fn order<K: Key>(self) -> Order {
        match self {
            Direction::Increasing => Order(0),
            Direction::Decreasing => Order(u64::MAX >> (64 - K::BITS)),
        }
    }
}

/// A direction as the kernels see it, for keys of one width: the mask XORed into a widened key so that
/// "first in the direction" is "smallest ordered key" (0 for `Increasing`; the key's ones for
/// `Decreasing`). Every kernel compares ordered keys and positions, and nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Order(u64);

impl Order {
    /// The order whose mask is `mask` (0, or the ones of a key's width).
    #[inline(always)]
    pub(crate) const fn from_mask(mask: u64) -> Order {
        Order(mask)
    }

    /// The mask XORed into widened keys.
    #[inline(always)]
    pub(crate) const fn mask(self) -> u64 {
        self.0
    }

    /// Whether smaller keys come first (`Increasing`: the mask flips nothing).
    #[inline(always)]
    pub(crate) const fn is_increasing(self) -> bool {
        self.0 == 0
    }

    /// The ordered key of `value`, widened: the kernels' only notion of order.
    #[inline(always)]
    pub(crate) fn key<T: Element>(self, value: T) -> u64 {
        value.key().widen() ^ self.0
    }

    /// [`key`](Self::key) in the element's own width (the mask is as wide): 32-bit compares on a
    /// 32-bit core, and lanes of the key's width where the compiler vectorises.
    #[inline(always)]
    pub(crate) fn narrow_key<T: Element>(self, value: T) -> T::Key {
        <T::Key as Key>::narrow(self.key(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cmp::Ordering;

    /// `docs/CONTRACT.md` §2 written the plain way, independent of the bit tricks above.
    fn spec_cmp(a: f64, b: f64) -> Ordering {
        match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => a.partial_cmp(&b).unwrap(), // -0 == +0 already
        }
    }

    fn check_floats<T: Element>(bits: impl Fn(u64) -> T, widen: impl Fn(T) -> f64) {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let specials = [0u64, 1, 0x8000_0000_0000_0000, u64::MAX, 0x7FF0_0000_0000_0000];
        for i in 0..200_000 {
            let (x, y) = if i < 25 {
                (specials[i / 5], specials[i % 5])
            } else {
                (next(), next())
            };
            let (a, b) = (bits(x), bits(y));
            assert_eq!(a.key().cmp(&b.key()), spec_cmp(widen(a), widen(b)), "{x:#x} vs {y:#x}");
        }
    }

    #[test]
    fn float_keys_follow_the_spec_order() {
        check_floats(|x| f32::from_bits(x as u32), f64::from);
        check_floats(|x| f32::from_bits((x >> 32) as u32), f64::from);
        check_floats(f64::from_bits, |v| v);
        check_floats(|x| f16::from_bits(x as u16), f64::from);
        check_floats(|x| bf16::from_bits(x as u16), f64::from);
        check_floats(|x| f16::from_bits((x >> 48) as u16), f64::from);
    }

    #[test]
    fn float_specials() {
        assert_eq!((-0.0f32).key(), 0.0f32.key());
        assert_eq!(f32::NAN.key(), (-f32::NAN).key());
        assert_eq!(f32::from_bits(0x7F80_0001).key(), u32::MAX);
        assert!(f32::INFINITY.key() < f32::NAN.key());
        assert!(f32::NEG_INFINITY.key() < f32::MIN.key());
        assert!((-f32::from_bits(1)).key() < 0.0f32.key());
        assert!(0.0f32.key() < f32::from_bits(1).key());
    }

    #[test]
    fn integer_keys_keep_order_at_the_extremes() {
        assert_eq!(i8::MIN.key(), 0);
        assert_eq!(i8::MAX.key(), u8::MAX);
        // Every pair natively; miri (slow on all 65,536 pairs of plain integer code, no `unsafe`) the
        // values on either side of the sign flip and at the ends.
        let every: [i8; 256] = core::array::from_fn(|i| i8::MIN.wrapping_add(i as i8));
        let values: &[i8] = if cfg!(miri) {
            &[i8::MIN, i8::MIN + 1, -2, -1, 0, 1, i8::MAX - 1, i8::MAX]
        } else {
            &every
        };
        for &a in values {
            for &b in values {
                assert_eq!(a.key().cmp(&b.key()), a.cmp(&b));
            }
        }
        for (a, b) in [(i64::MIN, i64::MAX), (-1, 0), (i64::MIN, i64::MIN + 1)] {
            assert!(a.key() < b.key());
        }
        for (a, b) in [(i32::MIN, -1), (-1, 0), (0, i32::MAX)] {
            assert!(a.key() < b.key());
        }
        assert!(i16::MIN.key() < i16::MAX.key());
        assert_eq!(u64::MAX.key(), u64::MAX);
    }

    #[test]
    fn decreasing_flip_reverses_keys_of_every_width() {
        let d = Direction::Decreasing;
        assert_eq!(d.order::<u8>().key(0u8), 0xFF);
        assert_eq!(d.order::<u32>().key(f32::NAN), 0);
        assert_eq!(d.order::<u64>().key(u64::MAX), 0);
        assert_eq!(Direction::Increasing.order::<u16>().key(7u16), 7);
    }
}
