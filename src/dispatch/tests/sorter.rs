//! The sorter kernels on every engine this CPU has.

use crate::kernels::candidates::FEW;

use super::{OnEngine, engines};
use crate::kernels::testing::xorshift;

/// The engines whose sorter sorts a few packed words (AVX2's ranks) put 1 to `FEW` of them in order,
/// whatever their count (each of the three sizes of lanes), with keys tied at the lowest position
/// first, as packed words order them; the others decline.
#[test]
fn few_words_come_out_in_order() {
    let mut random = xorshift(0x5eed_f00d);
    for (backend, engine) in engines() {
        for count in 1..=FEW {
            // Keys from a small range, so that many tie; positions 0..count, shuffled.
            let mut words = [u64::MAX; FEW];
            for (position, word) in words.iter_mut().enumerate().take(count) {
                *word = (random() % 7) << 32 | position as u64;
            }
            for i in (1..count).rev() {
                words.swap(i, (random() % (i as u64 + 1)) as usize);
            }
            let mut sorted = [0; FEW];
            if engine.sort_few(&words, count, &mut sorted) != Some(true) {
                continue;
            }
            let mut want = words;
            want[..count].sort_unstable();
            assert_eq!(sorted[..count], want[..count], "{} count {count}", backend.name());
        }
    }
}
