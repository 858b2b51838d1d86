//! What the tests of the kernels share: random words, every element type.

extern crate std;

/// Marsaglia's xorshift64: the tests' deterministic random words.
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// `$check::<T>()` for every element type.
macro_rules! every_type {
    ($check:ident) => {
        $check::<u8>();
        $check::<u16>();
        $check::<u32>();
        $check::<u64>();
        $check::<i8>();
        $check::<i16>();
        $check::<i32>();
        $check::<i64>();
        $check::<f32>();
        $check::<f64>();
        $check::<half::f16>();
        $check::<half::bf16>();
    };
}
pub(crate) use every_type;
