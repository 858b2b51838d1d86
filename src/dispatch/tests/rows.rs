//! The row kernels under a caller's cap, on every engine this CPU has.

use std::vec;
use std::vec::Vec;

use super::engines;
use crate::dispatch::engine::Engine;
use crate::dispatch::select::select_in_words;
use crate::kernels::lanes::from_bits;
use crate::kernels::testing::{every_type, xorshift};
use crate::types::element::{Element, Order};
use crate::types::output::Emit;
use crate::types::sequence::Sequence;

/// Under a caller's cap ([`Sequence::with_cap`], an accumulator's K-th key), every engine reports
/// the first K of the keys below the cap (fewer where fewer are), or ignores it and reports the first
/// K: either way a prefix of the first K, at least as long as the keys below the cap allow. Rows of
/// few distinct values (ties at the cap) and of random bits, every type, both directions.
// Not under miri: a capped scan makes the loads an uncapped one makes, which the other tests run
// there, and one row of each type is too slow in the interpreter.
#[test]
#[cfg_attr(miri, ignore)]
fn capped_rows_report_the_first_keys_below_the_cap() {
    fn reported<T: Element>(engine: Engine, row: &[T], k: usize, flip: Order, cap: u64) -> Vec<usize> {
        // SAFETY: every position below the row's length is an index of it.
        let seq = unsafe { Sequence::new(row, 0, 1, row.len()) }.with_cap(cap);
        let mut words = vec![0u64; 2 * crate::kernels::candidates::capacity(row.len(), k)];
        let mut out = Vec::new();
        let mut each = |first_rank: usize, positions: &[usize]| {
            assert_eq!(first_rank, out.len(), "ranks in order");
            out.extend_from_slice(positions);
        };
        select_in_words(engine, &seq, k, flip, &mut words, &mut Emit::Each(&mut each));
        out
    }
    fn check<T: Element>() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let ones = u64::MAX >> (64 - 8 * size_of::<T>() as u32);
        for (backend, engine) in engines() {
            for round in 0..4 {
                let len = [1024, 4099][round % 2];
                let pool: Vec<u64> = (0..7).map(|_| next() & ones).collect();
                let row: Vec<T> = (0..len)
                    .map(|_| {
                        from_bits::<T>(if round < 2 {
                            pool[(next() % 7) as usize]
                        } else {
                            next() & ones
                        })
                    })
                    .collect();
                for mask in [0, ones] {
                    let flip = Order::from_mask(mask);
                    let mut order: Vec<(u64, usize)> = row.iter().enumerate().map(|(p, &v)| (flip.key(v), p)).collect();
                    order.sort_unstable();
                    for k in [1, 8, 17, 50] {
                        let first_k: Vec<usize> = order[..k].iter().map(|&(_, p)| p).collect();
                        for rank in [0, k / 2, k, 3 * k] {
                            let cap = order[rank].0;
                            let below = order[..k].iter().filter(|&&(key, _)| key < cap).count();
                            let got = reported(engine, &row, k, flip, cap);
                            assert!(
                                got.len() >= below && got.len() <= k && got[..] == first_k[..got.len()],
                                "{} {backend:?} len {len} round {round} flip {mask:#x} k {k} rank {rank}: \
                                 {below} below the cap, reported {got:?}, first K {first_k:?}",
                                T::NAME
                            );
                        }
                    }
                }
            }
        }
    }
    every_type!(check);
}
