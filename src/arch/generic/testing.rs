//! What the tests of the vector algorithms share: the engines to run, random words, a timer.

extern crate std;
use std::vec::Vec;

use crate::backend::{Backend, Engine};

/// Every backend this CPU has, with its engine (the network tests' too).
pub(super) fn engines() -> impl Iterator<Item = (Backend, Engine)> {
    Backend::ALL.into_iter().filter_map(|b| Some((b, Engine::new(b)?)))
}

/// Marsaglia's xorshift64: the tests' deterministic random words.
pub(super) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// The ignored timing tests' measure: `f` on a fresh copy of one of `data`'s inputs (in turn), `reps`
/// times, best of five runs, in ns a call, the copy included.
pub(super) fn ns_per_call(data: &[Vec<u64>], reps: usize, f: &mut dyn FnMut(&mut [u64])) -> f64 {
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
