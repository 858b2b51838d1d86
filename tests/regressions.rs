//! Fuzz findings, each kept as the smallest request that showed it (FUZZING.md lists how each was found
//! and the command that reproduces it). Every test here failed (panicked or returned the wrong result)
//! before its fix.

use topk_kernels::{Accumulator, Direction, Error, Slot, View, ViewMut, f16, naive, scratch_len, topk};

/// Finding 1 (`request` target): `scratch_len` multiplied the candidate count by the words per candidate
/// without a check, so a huge sequence length with a huge K (legal for an empty tensor) overflowed: a
/// panic in debug builds, a wrapped (too small) answer in release.
#[test]
fn scratch_len_does_not_overflow_for_huge_sequences() {
    // f16 keys pack in one word only for sequences up to 2^32: longer ones take two words per candidate.
    assert_eq!(scratch_len::<f16>(usize::MAX, usize::MAX), usize::MAX);
    assert_eq!(scratch_len::<f64>(usize::MAX, usize::MAX / 2), usize::MAX);
    assert_eq!(scratch_len::<u8>(usize::MAX, usize::MAX), usize::MAX);
    // Ordinary sizes are unchanged.
    assert_eq!(scratch_len::<f16>(1 << 33, 3), 12);
    assert_eq!(scratch_len::<f64>(10, 4), 16);
}

/// Finding 2 (`request` target's oracle, after finding 1): an empty tensor with a huge axis is a valid
/// request (SPEC.md §5: zero elements, valid parameters → Ok), but the plan asked for the scratch of one
/// sequence of that length (2^41 words here) and answered `Error::Scratch` to any real buffer.
#[test]
fn empty_tensor_with_a_huge_axis_needs_no_scratch() {
    let n = 1usize << 40;
    let (input, mut values, mut indices) = ([f16::ZERO; 0], [f16::ZERO; 0], [0i64; 0]);
    let result = topk(
        View::new(&input, [0, n], [1, 1], 0).unwrap(),
        1,
        n,
        Direction::Increasing,
        ViewMut::new(&mut values, [0, n], [1, 1], 0).unwrap(),
        ViewMut::new(&mut indices, [0, n], [1, 1], 0).unwrap(),
        &mut [],
    );
    assert_eq!(result, Ok(()));
    // The index type is still checked: positions up to 2^40 - 1 do not fit u32.
    let mut narrow = [0u32; 0];
    let result = naive::topk(
        View::new(&input, [0, n], [1, 1], 0).unwrap(),
        1,
        n,
        Direction::Increasing,
        ViewMut::new(&mut values, [0, n], [1, 1], 0).unwrap(),
        ViewMut::new(&mut narrow, [0, n], [1, 1], 0).unwrap(),
    );
    assert!(matches!(result, Err(Error::IndexType { .. })), "{result:?}");
}

/// Finding 3 (`accumulator` target): a one-element view may have any stride (only `offset` is reachable),
/// but `Accumulator::push_at` and `finish` stepped their address by the stride once more after the last
/// element, which overflows `isize` for a stride near `isize::MAX` and a non-zero offset: a panic in
/// debug builds.
#[test]
fn accumulator_single_element_views_with_extreme_strides() {
    let data = [7u32, 9, 4];
    let mut slots = [Slot::EMPTY; 2];
    let mut acc = Accumulator::new(1, Direction::Decreasing, &mut slots).unwrap();
    acc.push(View::new(&data, [1], [isize::MAX], 1).unwrap()).unwrap(); // the 9 at position 0
    acc.push(View::new(&data, [1], [isize::MIN], 2).unwrap()).unwrap(); // the 4 at position 1
    let (mut values, mut indices) = ([0u32; 3], [u64::MAX; 2]);
    acc.finish(
        ViewMut::new(&mut values, [1], [isize::MAX], 2).unwrap(),
        ViewMut::new(&mut indices, [1], [isize::MIN + 1], 1).unwrap(),
    )
    .unwrap();
    assert_eq!(values, [0, 0, 9]);
    assert_eq!(indices, [u64::MAX, 0]);
}
