//! The bound kernels on every engine this CPU has.

use std::vec::Vec;

use super::{OnEngine, engines};
use crate::kernels::lanes::from_bits;
use crate::kernels::testing::xorshift;
use crate::types::element::{Element, Order};

/// The group minima's bound of an 8- to 32-bit integer row is exactly the K-th smallest of the
/// groups' minimum keys (positions ≡ g modulo the groups, over the whole rounds the row holds), on
/// every engine, both directions, random and tie-heavy rows: the narrow lanes' one fold
/// (`pick_narrow`, one or two registers a round) and the keyed vectors alike. The selection tests
/// cannot see a bound that is merely loose (a fold in the wrong direction): this can.
#[test]
#[cfg_attr(
    miri,
    ignore = "values, not memory: miri runs only the portable lanes, whose keyed path is the selection \
              tests' too, and took 4 minutes over even two lengths"
)]
fn integer_minima_bounds_are_exact() {
    check::<u8>();
    check::<i8>();
    check::<u16>();
    check::<i16>();
    check::<u32>();
    check::<i32>();
}

fn check<T: Element>() {
    let mut next = xorshift(0xB0_0D5 ^ size_of::<T>() as u64);
    let bits = 8 * size_of::<T>() as u32;
    let mut answered = 0;
    for (backend, engine) in engines() {
        for len in [16, 40, 64, 100, 256, 300, 512] {
            for range in [5, u64::MAX] {
                let row: Vec<T> = (0..len).map(|_| from_bits(next() % range)).collect();
                for mask in [0, u64::MAX >> (64 - bits)] {
                    let flip = Order::from_mask(mask);
                    for vectors in [1, 2, 4] {
                        for k in [1, 2, 5, 8, 16, 31] {
                            let Some((bound, groups)) = engine.minima_bound(&row, k, flip, vectors) else {
                                continue;
                            };
                            let whole = row.len() / groups * groups;
                            let mut minima = std::vec![u64::MAX; groups];
                            for (p, &x) in row[..whole].iter().enumerate() {
                                minima[p % groups] = minima[p % groups].min(flip.key(x));
                            }
                            minima.sort_unstable();
                            assert_eq!(
                                bound,
                                minima[k - 1],
                                "{} {} n {len} flip {mask:#x} vectors {vectors} k {k}",
                                backend.name(),
                                core::any::type_name::<T>()
                            );
                            answered += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(
        answered > 0,
        "no engine gave a bound for {}",
        core::any::type_name::<T>()
    );
}
