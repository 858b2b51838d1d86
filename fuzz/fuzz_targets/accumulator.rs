//! One sequence cut into pieces, the pieces spread over three accumulators and fed in any order
//! (`push` where they continue, `push_at` elsewhere), from strided, reversed or (for single elements)
//! extreme-stride views; the accumulators merged in any order and finished into strided outputs. The
//! result must equal `naive::topk` on the whole sequence, bit for bit.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use topk_fuzz::{
    DataType, IndexType, Pod, arbitrary_data_type, arbitrary_index_type, assert_same, dispatch, elements, wild_stride,
};
use topk_kernels::{Accumulator, Direction, Element, Error, Index, Request, Slot, View, ViewMut, naive};

#[derive(Arbitrary, Debug)]
struct Piece {
    /// Where the piece ends (cuts are sorted and deduplicated).
    cut: u16,
    /// Which accumulator gets it (`% 3`).
    owner: u8,
    /// Feeding order within the owner.
    order: u8,
    /// Layout of the piece's own buffer: stride `% 3 + 1`, negated when `reversed`; a single-element
    /// piece with `wild` uses `wild_stride(stride as i8)`.
    stride: u8,
    reversed: bool,
    wild: bool,
    offset: u8,
}

#[derive(Arbitrary, Debug)]
struct Output {
    stride: u8,
    reversed: bool,
    wild: bool,
    offset: u8,
}

#[derive(Arbitrary, Debug)]
struct Case {
    #[arbitrary(with = arbitrary_data_type)]
    dtype: DataType,
    #[arbitrary(with = arbitrary_index_type)]
    index: IndexType,
    len: u16,
    k: u8,
    decreasing: bool,
    pieces: Vec<Piece>,
    /// Merge order: a permutation of the three accumulators, the first receiving the other two.
    merge: u8,
    /// More slots than needed (garbage-filled), or 255: one too few (must be `Err`).
    extra_slots: u8,
    values: Output,
    indices: Output,
    data: Vec<u8>,
}

fuzz_target!(|case: Case| dispatch!(case.dtype, case.index, check(&case)));

/// A 1-D layout of `len` elements: (stride, offset, buffer length), the offset making negative strides fit.
fn line(len: usize, stride: u8, reversed: bool, wild: bool, offset: u8) -> (isize, usize, usize) {
    let offset = offset as usize % 4;
    if wild && len == 1 {
        // The only address is `offset`; any stride is valid and must not be stepped past it.
        return (wild_stride(stride as i8), offset, offset + 1 + stride as usize % 2);
    }
    let step = (stride % 3 + 1) as usize;
    let span = len.saturating_sub(1) * step;
    if reversed {
        (-(step as isize), offset + span, offset + span + 1)
    } else {
        (step as isize, offset, offset + span + 1)
    }
}

fn check<T: Element + Pod, I: Index + Pod>(case: &Case) {
    let n = case.len as usize % 300;
    let k = case.k as usize % (n + 1);
    let direction = if case.decreasing {
        Direction::Decreasing
    } else {
        Direction::Increasing
    };
    let x: Vec<T> = elements(&case.data, n);

    // The reference: one call on the whole sequence.
    let (mut v0, mut i0) = (vec![T::sentinel(); k], vec![I::sentinel(); k]);
    naive::topk(Request {
        input: View::contiguous(&x, [n]).unwrap(),
        axis: 0,
        k,
        direction,
        values: ViewMut::contiguous(&mut v0, [k]).unwrap(),
        indices: ViewMut::contiguous(&mut i0, [k]).unwrap(),
    })
    .expect("k <= n");

    // Pieces covering 0..n exactly once.
    let mut cuts: Vec<usize> = case.pieces.iter().map(|p| p.cut as usize % (n + 1)).collect();
    cuts.extend([0, n]);
    cuts.sort_unstable();
    cuts.dedup();
    let whole = Piece {
        cut: 0,
        owner: 0,
        order: 0,
        stride: 0,
        reversed: false,
        wild: false,
        offset: 0,
    };
    let layouts = if case.pieces.is_empty() {
        std::slice::from_ref(&whole)
    } else {
        &case.pieces[..]
    };
    let mut pieces: Vec<(usize, usize, &Piece)> = Vec::new();
    for (w, piece) in cuts.windows(2).zip(layouts.iter().cycle()) {
        pieces.push((w[0], w[1], piece));
    }
    pieces.sort_by_key(|&(start, _, p)| (p.owner % 3, p.order, start));

    let slots_len = Accumulator::<T>::slots_len(k);
    if case.extra_slots == 255 && slots_len > 0 {
        let mut short = vec![Slot::<T>::EMPTY; slots_len - 1];
        let e = Accumulator::new(k, direction, &mut short).err();
        assert!(matches!(e, Some(Error::Scratch { .. })), "{e:?}");
    }
    let garbage = Slot::<T>::EMPTY;
    let extra = case.extra_slots as usize % 8;
    let mut slots: Vec<Vec<Slot<T>>> = (0..3).map(|_| vec![garbage; slots_len + extra]).collect();
    let mut accumulators: Vec<Accumulator<'_, T>> = slots
        .iter_mut()
        .map(|s| Accumulator::new(k, direction, s).expect("enough slots"))
        .collect();
    let mut next = [0usize; 3];
    for &(start, end, p) in &pieces {
        let owner = p.owner as usize % 3;
        let len = end - start;
        let (stride, offset, buffer_len) = line(len, p.stride, p.reversed, p.wild, p.offset);
        let mut buffer = vec![T::sentinel(); buffer_len];
        for (j, &value) in x[start..end].iter().enumerate() {
            buffer[(offset as isize + j as isize * stride) as usize] = value;
        }
        let view = View::new(&buffer, [len], [stride], offset).expect("a valid piece view");
        let acc = &mut accumulators[owner];
        if start == next[owner] {
            acc.push(view).expect("push");
        } else {
            acc.push_at(start as u64, view).expect("push_at");
        }
        next[owner] = next[owner].max(end);
    }

    let order = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]][case.merge as usize % 6];
    let mut taken: Vec<Option<Accumulator<'_, T>>> = accumulators.into_iter().map(Some).collect();
    let mut root = taken[order[0]].take().expect("distinct");
    for &other in &order[1..] {
        let other = taken[other].take().expect("distinct");
        root.merge(&other).expect("same k and direction");
    }
    assert_eq!(root.seen(), n as u64);

    let (vs, vo, vlen) = line(
        k,
        case.values.stride,
        case.values.reversed,
        case.values.wild,
        case.values.offset,
    );
    let (is, io, ilen) = line(
        k,
        case.indices.stride,
        case.indices.reversed,
        case.indices.wild,
        case.indices.offset,
    );
    let (mut v, mut i) = (vec![T::sentinel(); vlen], vec![I::sentinel(); ilen]);
    root.finish(
        ViewMut::new(&mut v, [k], [vs], vo).expect("a valid values view"),
        ViewMut::new(&mut i, [k], [is], io).expect("a valid indices view"),
    )
    .expect("finish");

    // Gather the strided outputs and check that nothing else was written.
    let (mut got_v, mut got_i) = (Vec::new(), Vec::new());
    for j in 0..k {
        let a = (vo as isize + j as isize * vs) as usize;
        got_v.push(std::mem::replace(&mut v[a], T::sentinel()));
        let a = (io as isize + j as isize * is) as usize;
        got_i.push(std::mem::replace(&mut i[a], I::sentinel()));
    }
    assert_same("values", &got_v, &v0);
    assert_same("indices", &got_i, &i0);
    assert_same("values outside the view", &v, &vec![T::sentinel(); vlen]);
    assert_same("indices outside the view", &i, &vec![I::sentinel(); ilen]);
}
