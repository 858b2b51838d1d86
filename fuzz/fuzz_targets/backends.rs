//! Valid requests over arbitrary bytes, every backend of `Backend::ALL`, run whole, in pieces, out of
//! order and split, with garbage in the scratch: all must equal `naive::topk` bit for bit.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use topk_fuzz::{
    Concrete, DataType, Expect, IndexType, OutputSizes, Placement, Pod, Request, Strides, TensorDesc,
    arbitrary_data_type, arbitrary_index_type, assert_same, check_outputs, dispatch, elements, index_max, with_views,
};
use topk_kernels::{Backend, Element, Error, Index, TopK, naive};

/// A permuted, stepped, possibly reversed layout (outputs never broadcast).
#[derive(Arbitrary, Debug)]
struct Layout {
    order: [u8; 8],
    steps: [u8; 8],
    reversed: u8,
    broadcast: u8,
    row_major: bool,
    extra: u8,
    slack: u8,
}

impl Layout {
    fn desc(&self, broadcast: bool) -> TensorDesc {
        TensorDesc {
            strides: if self.row_major {
                Strides::RowMajor
            } else {
                Strides::Permuted {
                    order: self.order,
                    steps: self.steps,
                    reversed: self.reversed,
                    broadcast: if broadcast { self.broadcast } else { 0 },
                }
            },
            placement: Placement::Fit {
                extra: self.extra % 4,
                slack: self.slack % 4,
            },
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Case {
    #[arbitrary(with = arbitrary_data_type)]
    dtype: DataType,
    #[arbitrary(with = arbitrary_index_type)]
    index: IndexType,
    rank: u8,
    axis: u8,
    sizes: [u8; 8],
    len: u16,
    k: u8,
    decreasing: bool,
    input: Layout,
    values: Layout,
    indices: Layout,
    /// Sequence boundaries to run between (mod the count), then run in reverse when `backwards`.
    cuts: Vec<u16>,
    backwards: bool,
    /// Split the plan at this sequence (mod the count + 1) and run the high half first.
    split: Option<u16>,
    /// What the scratch holds before the run (the engines must not read it before writing it).
    garbage: u64,
    data: Vec<u8>,
}

fuzz_target!(|case: Case| {
    let request = Request {
        dtype: case.dtype,
        index: case.index,
        rank: case.rank % 8,
        axis: case.axis % 8,
        sizes: case.sizes.map(|s| s % 6),
        len: case.len % 0xFF00,
        k: case.k % 250,
        decreasing: case.decreasing,
        input: case.input.desc(true),
        values: (case.values.desc(false), OutputSizes::Derived),
        indices: (case.indices.desc(false), OutputSizes::Derived),
        data: Vec::new(),
    };
    let c = request.concrete();
    dispatch!(case.dtype, case.index, check(&c, &case));
});

fn check<T: Element + Pod, I: Index + Pod>(c: &Concrete, case: &Case) {
    if c.expect(index_max::<I>()) != Expect::Valid {
        return; // k = n + 1 now and then: the request target covers those
    }
    let [ti, tv, tx] = &c.tensors;
    let input: Vec<T> = elements(&case.data, ti.len);
    let fresh = || (vec![T::sentinel(); tv.len], vec![I::sentinel(); tx.len]);
    let (mut v0, mut x0) = fresh();
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
    .expect("a valid request");
    check_outputs(c, &input, &v0, &x0);

    for backend in Backend::ALL {
        let (mut v, mut x) = fresh();
        let result = with_views(c, &input, &mut v, &mut x, |i, axis, vv, xx| {
            let mut plan = TopK::new(topk_kernels::Request {
                input: i,
                axis,
                k: c.k,
                direction: c.direction,
                values: vv,
                indices: xx,
            })?;
            let mut scratch = vec![case.garbage; plan.scratch_len()];
            let total = plan.sequences();
            if let Some(mid) = case.split {
                let (mut low, mut high) = plan.split_at(mid as usize % (total + 1))?;
                high.run_sequences(0..high.sequences(), backend, &mut scratch)?;
                return low.run_sequences(0..low.sequences(), backend, &mut scratch);
            }
            let mut bounds: Vec<usize> = case.cuts.iter().map(|&b| b as usize % (total + 1)).collect();
            bounds.extend([0, total]);
            bounds.sort_unstable();
            bounds.dedup();
            let mut ranges: Vec<_> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
            if case.backwards {
                ranges.reverse();
            }
            for range in ranges {
                plan.run_sequences(range, backend, &mut scratch)?;
            }
            Ok(())
        });
        match result {
            Ok(()) => {
                assert_same(backend.name(), &v, &v0);
                assert_same(backend.name(), &x, &x0);
            }
            Err(Error::Backend { .. }) => {
                // Not on this CPU: nothing may have been written.
                let (v_, x_) = fresh();
                assert_same("values (untouched)", &v, &v_);
                assert_same("indices (untouched)", &x, &x_);
            }
            Err(e) => panic!("{} rejected a valid request: {e}: {c:?}", backend.name()),
        }
    }
}
