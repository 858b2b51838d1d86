//! What the tests of the kernels share: random words and a timer.

extern crate std;
use std::vec::Vec;

/// Marsaglia's xorshift64: the tests' deterministic random words.
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// The ignored timing tests' measure: `f` on a fresh copy of one of `data`'s inputs (in turn), `reps`
/// times, best of five runs, in ns a call, the copy included.
pub(crate) fn ns_per_call(data: &[Vec<u64>], reps: usize, f: &mut dyn FnMut(&mut [u64])) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let mut work: Vec<Vec<u64>> = data.to_vec();
        let t = std::time::Instant::now();
        for r in 0..reps {
            let w = &mut work[r % data.len()];
            w.copy_from_slice(&data[r % data.len()]);
            f(w);
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / reps as f64);
    }
    best
}
