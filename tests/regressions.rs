//! Fuzz findings, each kept as the smallest request that showed it (FUZZING.md lists how each was found
//! and the command that reproduces it). Every test here failed (panicked or returned the wrong result)
//! before its fix.

use topk_kernels::{Accumulator, Direction, Error, Request, Slot, View, ViewMut, f16, min_scratch_len, naive, topk};

/// Finding 1 (`request` target): `scratch_len` multiplied the candidate count by the words per candidate
/// without a check, so a huge sequence length with a huge K (legal for an empty tensor) overflowed: a
/// panic in debug builds, a wrapped (too small) answer in release.
#[test]
fn scratch_len_does_not_overflow_for_huge_sequences() {
    // f16 keys pack in one word only for sequences up to 2^32: longer ones take two words per candidate.
    assert_eq!(min_scratch_len::<f16>(usize::MAX, usize::MAX), usize::MAX);
    assert_eq!(min_scratch_len::<f64>(usize::MAX, usize::MAX / 2), usize::MAX);
    assert_eq!(min_scratch_len::<u8>(usize::MAX, usize::MAX), usize::MAX);
    // Ordinary sizes are unchanged.
    #[cfg(target_pointer_width = "64")]
    assert_eq!(min_scratch_len::<f16>(1 << 33, 3), 12);
    assert_eq!(min_scratch_len::<f64>(10, 4), 16);
}

/// Finding 2 (`request` target's oracle, after finding 1): an empty tensor with a huge axis is a valid
/// request (docs/CONTRACT.md §5: zero elements, valid parameters → Ok), but the plan asked for the scratch of one
/// sequence of that length (2^41 words here) and answered `Error::Scratch` to any real buffer.
#[test]
fn empty_tensor_with_a_huge_axis_needs_no_scratch() {
    // 2^40 on 64-bit targets; on 32-bit ones the largest power of two, whose positions do fit u32.
    let n = 1usize << (usize::BITS - 1).min(40);
    let (input, mut values, mut indices) = ([f16::ZERO; 0], [f16::ZERO; 0], [0i64; 0]);
    let result = topk(
        Request {
            input: View::new(&input, [0, n], [1, 1], 0).unwrap(),
            axis: 1,
            k: n,
            direction: Direction::Increasing,
            values: ViewMut::new(&mut values, [0, n], [1, 1], 0).unwrap(),
            indices: ViewMut::new(&mut indices, [0, n], [1, 1], 0).unwrap(),
        },
        &mut [],
    );
    assert_eq!(result, Ok(()));
    // The index type is still checked: positions up to 2^40 - 1 do not fit u32.
    if u32::try_from(n - 1).is_ok() {
        return;
    }
    let mut narrow = [0u32; 0];
    let result = naive::topk(Request {
        input: View::new(&input, [0, n], [1, 1], 0).unwrap(),
        axis: 1,
        k: n,
        direction: Direction::Increasing,
        values: ViewMut::new(&mut values, [0, n], [1, 1], 0).unwrap(),
        indices: ViewMut::new(&mut narrow, [0, n], [1, 1], 0).unwrap(),
    });
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

/// Finding 4 (`request` target, a 30-minute timeout): a zero stride along the axis is a valid view of
/// any length (docs/CONTRACT.md §3): the fuzzer's had one element broadcast to 2^63 - 1 positions. Every engine
/// scanned all of them: finite, but centuries. Such a sequence is one element repeated, so the first K
/// are positions 0..K, all ties; the engines now answer that without reading the sequence.
#[test]
fn a_broadcast_axis_of_any_length_costs_only_its_outputs() {
    // 2^60 on 64-bit targets, 2^28 on 32-bit ones.
    let n = 1usize << (usize::BITS - 4);
    let x = [7u64, 3, 9];
    let (k, mut values, mut indices) = (130, vec![0u64; 3 * 130], vec![0u64; 3 * 130]);
    let mut scratch = vec![0u64; min_scratch_len::<u64>(n, k)];
    let started = std::time::Instant::now();
    let request = Request {
        // Three sequences (one per element of `x`), each that element n times.
        input: View::new(&x, [3, n], [1, 0], 0).unwrap(),
        axis: 1,
        k,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut values, [3, k]).unwrap(),
        indices: ViewMut::contiguous(&mut indices, [3, k]).unwrap(),
    };
    topk(request, &mut scratch).unwrap();
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    for (row, &value) in x.iter().enumerate() {
        assert!(values[row * k..][..k].iter().all(|&v| v == value), "row {row}");
        assert!(indices[row * k..][..k].iter().copied().eq(0..k as u64), "row {row}");
    }
}
