//! Arbitrary requests through the run-time-rank API: invalid ones must be `Err` with both outputs
//! untouched; valid ones must equal `naive::topk` bit for bit (where it is affordable: `NAIVE_BUDGET`)
//! and pass an independent check, linear in the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use topk_fuzz::{
    Concrete, Expect, NAIVE_BUDGET, Pod, Request, assert_same, check_outputs, dispatch, elements, index_max, with_views,
};
use topk_kernels::{Element, Error, Index, min_scratch_len, naive, topk, topk_on_stack};

fuzz_target!(|request: Request| {
    let c = request.concrete();
    dispatch!(request.dtype, request.index, check(&c, &request.data));
});

/// Scratch words the target is willing to allocate.
const SCRATCH_CAP: usize = 1 << 16;

fn check<T: Element + Pod, I: Index + Pod>(c: &Concrete, bytes: &[u8]) {
    let expect = c.expect(index_max::<I>());
    let [ti, tv, tx] = &c.tensors;
    let input: Vec<T> = elements(bytes, ti.len);
    let fresh = || (vec![T::sentinel(); tv.len], vec![I::sentinel(); tx.len]);
    let untouched = |v: &[T], x: &[I]| {
        let (v0, x0) = fresh();
        assert_same("values (must be untouched)", v, &v0);
        assert_same("indices (must be untouched)", x, &x0);
    };

    // `scratch_len` is public and takes any numbers: it must not panic on any of them.
    let n = ti.sizes.get(c.axis).copied().unwrap_or(0);
    let needed = min_scratch_len::<T>(n, c.k);
    let mut scratch = vec![0u64; needed.min(SCRATCH_CAP)];

    let (mut v1, mut x1) = fresh();
    let got = with_views(c, &input, &mut v1, &mut x1, |i, axis, v, x| {
        topk(
            topk_kernels::Request {
                input: i,
                axis,
                k: c.k,
                direction: c.direction,
                values: v,
                indices: x,
            },
            &mut scratch,
        )
    });
    let (mut v0, mut x0) = fresh();
    let reference = if c.naive_work() <= NAIVE_BUDGET {
        with_views(c, &input, &mut v0, &mut x0, |i, axis, v, x| {
            naive::topk(topk_kernels::Request {
                input: i,
                axis,
                k: c.k,
                direction: c.direction,
                values: v,
                indices: x,
            })
        })
    } else {
        // Too slow a reference: `topk`'s own outputs go through the checks below, `check_outputs` (which
        // alone establishes the answer) and the untouched-outputs checks included.
        (v0, x0) = (v1.clone(), x1.clone());
        got
    };
    for e in [&reference, &got].into_iter().filter_map(|r| r.err()) {
        let _ = e.to_string(); // Display must not panic either
    }

    match (expect, reference, got) {
        (Expect::Invalid, Ok(()), _) | (Expect::Invalid, _, Ok(())) => {
            panic!("an invalid request was accepted: {c:?} naive {reference:?} topk {got:?}")
        }
        (Expect::Valid, Err(e), _) if !matches!(e, Error::Aliasing { .. }) => {
            // Aliasing is the one rule the library checks conservatively (docs/CONTRACT.md §3: a sufficient test).
            panic!("a valid request was rejected by naive: {e}: {c:?}")
        }
        (Expect::Valid, Ok(()), Err(e)) => panic!("a valid request was rejected by topk: {e}: {c:?}"),
        (_, Ok(()), Ok(())) => {
            assert_same("values", &v1, &v0);
            assert_same("indices", &x1, &x0);
            check_outputs(c, &input, &v0, &x0);
        }
        (_, Err(a), Err(b)) => {
            assert_eq!(a, b, "naive and topk disagree on the error");
            untouched(&v0, &x0);
            untouched(&v1, &x1);
        }
        (_, Ok(()), Err(e)) | (_, Err(e), Ok(())) => panic!("only one engine failed ({e}): {c:?}"),
    }

    // The stack variant: same answer whenever its 16 · 4 words suffice, untouched outputs otherwise.
    let (mut v2, mut x2) = fresh();
    let on_stack = with_views(c, &input, &mut v2, &mut x2, |i, axis, v, x| {
        topk_on_stack::<16, T, I, 8>(topk_kernels::Request {
            input: i,
            axis,
            k: c.k,
            direction: c.direction,
            values: v,
            indices: x,
        })
    });
    match (on_stack, reference) {
        (Ok(()), Ok(())) => {
            assert_same("values (on stack)", &v2, &v0);
            assert_same("indices (on stack)", &x2, &x0);
        }
        (Ok(()), Err(e)) => panic!("topk_on_stack accepted what naive rejected ({e}): {c:?}"),
        (Err(e), Ok(())) => {
            assert!(
                c.k > 16 && matches!(e, Error::Scratch { .. }),
                "topk_on_stack: {e}: {c:?}"
            );
            untouched(&v2, &x2);
        }
        (Err(_), Err(_)) => untouched(&v2, &x2),
    }
}
