//! What the tests of the kernels share: random words.

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
