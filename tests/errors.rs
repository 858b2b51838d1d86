//! Every row of docs/CONTRACT.md §5 that is an error: the exact `Error` variant with its numbers, the same error
//! from every entry point (`TopK::new`, `topk`, `topk_on_stack`, `naive::topk`), outputs untouched, and
//! a `Display` message that names the numbers.

use topk_kernels::{
    Backend, Direction, Error, Operand, Request, TopK, View, ViewMut, min_scratch_len, naive, topk, topk_on_stack,
};

const VALUE_SENTINEL: f32 = -7.25;
const INDEX_SENTINEL: u32 = 0xDEAD;

/// Row-major strides of `sizes`.
fn row_major<const D: usize>(sizes: [usize; D]) -> [isize; D] {
    let mut strides = [0isize; D];
    let mut step = 1;
    for d in (0..D).rev() {
        strides[d] = step;
        step *= sizes[d].max(1) as isize;
    }
    strides
}

/// The error a request gives, the same from every entry point, none of which writes an output.
fn rejected<const D: usize>(
    input: View<'_, f32, D>,
    axis: isize,
    k: usize,
    values_sizes: [usize; D],
    indices_sizes: [usize; D],
) -> Error {
    let values_len = values_sizes.iter().product::<usize>() + 4;
    let indices_len = indices_sizes.iter().product::<usize>() + 4;
    let mut values = vec![VALUE_SENTINEL; values_len];
    let mut indices = vec![INDEX_SENTINEL; indices_len];
    let mut errors = Vec::new();
    for entry in 0..4 {
        let v = ViewMut::new(&mut values, values_sizes, row_major(values_sizes), 2).unwrap();
        let i = ViewMut::new(&mut indices, indices_sizes, row_major(indices_sizes), 2).unwrap();
        let direction = if entry % 2 == 0 {
            Direction::Decreasing
        } else {
            Direction::Increasing
        };
        let request = Request {
            input,
            axis,
            k,
            direction,
            values: v,
            indices: i,
        };
        let result = match entry {
            0 => TopK::new(request).map(|_| ()),
            1 => topk(request, &mut vec![0; 1 << 12]),
            2 => topk_on_stack::<64, _, _, D>(request),
            _ => naive::topk(request),
        };
        errors.push(result.expect_err("the request must be rejected"));
        assert!(
            values.iter().all(|&v| v.to_bits() == VALUE_SENTINEL.to_bits()),
            "values written"
        );
        assert!(indices.iter().all(|&i| i == INDEX_SENTINEL), "indices written");
    }
    assert!(
        errors.windows(2).all(|w| w[0] == w[1]),
        "entry points disagree: {errors:?}"
    );
    errors[0]
}

fn input_2x3x4() -> Vec<f32> {
    (0..24).map(|v| v as f32).collect()
}

#[test]
fn axis_out_of_range() {
    let data = input_2x3x4();
    let input = View::contiguous(&data, [2, 3, 4]).unwrap();
    let error = rejected(input, 3, 1, [2, 3, 1], [2, 3, 1]);
    assert_eq!(error, Error::Axis { axis: 3, rank: 3 });
    assert_eq!(
        error.to_string(),
        "axis 3 is out of range for a tensor of 3 dimensions (-3 to 2)"
    );
    for axis in [isize::MAX, isize::MIN, -4] {
        assert_eq!(
            rejected(input, axis, 0, [2, 3, 4], [2, 3, 4]),
            Error::Axis { axis, rank: 3 }
        );
    }
}

#[test]
fn k_above_the_axis_length() {
    let data = input_2x3x4();
    let input = View::contiguous(&data, [2, 3, 4]).unwrap();
    let error = rejected(input, 2, 5, [2, 3, 5], [2, 3, 5]);
    assert_eq!(error, Error::K { k: 5, len: 4, axis: 2 });
    assert!(
        error
            .to_string()
            .contains("K = 5 exceeds the axis length 4 of dimension 2"),
        "{error}"
    );
    assert_eq!(
        rejected(input, 0, 3, [3, 3, 4], [3, 3, 4]),
        Error::K { k: 3, len: 2, axis: 0 }
    );
    // An empty axis takes no K but 0.
    let empty = View::contiguous(&data, [2, 0, 4]).unwrap();
    assert_eq!(
        rejected(empty, 1, 1, [2, 1, 4], [2, 1, 4]),
        Error::K { k: 1, len: 0, axis: 1 }
    );
}

#[test]
fn output_sizes_must_match() {
    let data = input_2x3x4();
    let input = View::contiguous(&data, [2, 3, 4]).unwrap();
    let good = [2, 3, 2];
    // A dimension other than the axis, on either output.
    let error = rejected(input, 2, 2, [2, 4, 2], good);
    assert_eq!(
        error,
        Error::OutputSize {
            operand: Operand::Values,
            dim: 1,
            expected: 3,
            actual: 4
        }
    );
    assert_eq!(
        error.to_string(),
        "the values output has size 4 in dimension 1; it must be 3"
    );
    let error = rejected(input, 2, 2, good, [1, 3, 2]);
    assert_eq!(
        error,
        Error::OutputSize {
            operand: Operand::Indices,
            dim: 0,
            expected: 2,
            actual: 1
        }
    );
    assert!(
        error
            .to_string()
            .contains("indices output has size 1 in dimension 0; it must be 2"),
        "{error}"
    );
    // The axis itself must be K.
    let error = rejected(input, 2, 2, [2, 3, 3], good);
    assert_eq!(
        error,
        Error::OutputSize {
            operand: Operand::Values,
            dim: 2,
            expected: 2,
            actual: 3
        }
    );
    let error = rejected(input, 2, 2, good, [2, 3, 4]);
    assert_eq!(
        error,
        Error::OutputSize {
            operand: Operand::Indices,
            dim: 2,
            expected: 2,
            actual: 4
        }
    );
    // K == 0 needs outputs of axis size 0 too.
    let error = rejected(input, 1, 0, [2, 1, 4], [2, 0, 4]);
    assert_eq!(
        error,
        Error::OutputSize {
            operand: Operand::Values,
            dim: 1,
            expected: 0,
            actual: 1
        }
    );
}

#[test]
fn views_outside_their_slice() {
    let data = [0.0f32; 6];
    // Too short a slice for the sizes.
    let error = View::new(&data[..5], [2, 3], [3, 1], 0).unwrap_err();
    assert_eq!(
        error,
        Error::OutOfBounds {
            operand: Operand::Input,
            lowest: 0,
            highest: 5,
            len: 5
        }
    );
    assert_eq!(
        error.to_string(),
        "the input view reaches elements 0 to 5 but its slice has 5 elements"
    );
    assert_eq!(
        View::contiguous(&data[..5], [2, 3]).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Input,
            lowest: 0,
            highest: 5,
            len: 5
        }
    );
    // An offset pushing the last element out.
    assert_eq!(
        View::new(&data, [2, 3], [3, 1], 1).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Input,
            lowest: 1,
            highest: 6,
            len: 6
        }
    );
    assert_eq!(
        View::new(&data, [1], [1], 6).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Input,
            lowest: 6,
            highest: 6,
            len: 6
        }
    );
    // A negative stride reaching below the slice.
    let error = View::new(&data, [3], [-1], 1).unwrap_err();
    assert_eq!(
        error,
        Error::OutOfBounds {
            operand: Operand::Input,
            lowest: -1,
            highest: 1,
            len: 6
        }
    );
    assert!(error.to_string().contains("elements -1 to 1"), "{error}");
    // An empty slice holds no element, but an empty view needs none.
    assert!(View::<f32, 1>::new(&[], [1], [1], 0).is_err());
    assert!(View::<f32, 2>::new(&[], [3, 0], [1, 1], 9).is_ok());
    // Outputs are checked the same way.
    let mut out = [0.0f32; 4];
    assert_eq!(
        ViewMut::new(&mut out, [2, 2], [1, 3], 0).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Output,
            lowest: 0,
            highest: 4,
            len: 4
        }
    );
    assert_eq!(
        ViewMut::contiguous(&mut out, [5]).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Output,
            lowest: 0,
            highest: 4,
            len: 4
        }
    );
    assert_eq!(out, [0.0; 4]);
}

#[test]
fn padded_views_report_the_reach_with_their_offset() {
    let data = [0.0f32; 3];
    // Four elements from offset 2 reach 2..=5. Checking the row-major layout at offset 0 first would
    // report 0..=3, an address range the view does not have.
    assert_eq!(
        View::padded(&data, &[4], None, 2).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Input,
            lowest: 2,
            highest: 5,
            len: 3
        }
    );
    assert_eq!(
        View::padded(&data, &[1, 2], None, 2).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Input,
            lowest: 2,
            highest: 3,
            len: 3
        }
    );
    let mut out = [0u32; 3];
    assert_eq!(
        ViewMut::padded(&mut out, &[2, 2], None, 0).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Output,
            lowest: 0,
            highest: 3,
            len: 3
        }
    );
}

#[test]
fn arithmetic_overflow() {
    let data = [0.0f32; 8];
    let overflow = Error::Overflow {
        operand: Operand::Input,
    };
    // Element counts: over usize, and over isize::MAX.
    assert_eq!(View::new(&data, [usize::MAX, 2], [0, 0], 0).unwrap_err(), overflow);
    assert_eq!(
        View::new(&data, [1 << (usize::BITS - 1), 1], [0, 0], 0).unwrap_err(),
        overflow
    );
    assert_eq!(View::contiguous(&data, [usize::MAX, usize::MAX]).unwrap_err(), overflow);
    assert_eq!(View::contiguous(&data, [usize::MAX]).unwrap_err(), overflow);
    // Reach: (size - 1) · stride, and offset + reach, in either direction.
    assert_eq!(View::new(&data, [3], [isize::MAX], 0).unwrap_err(), overflow);
    assert_eq!(View::new(&data, [3], [isize::MIN], 0).unwrap_err(), overflow);
    assert_eq!(View::new(&data, [2], [isize::MAX], 1).unwrap_err(), overflow);
    assert_eq!(View::new(&data, [2, 2], [isize::MAX, 1], 0).unwrap_err(), overflow);
    assert_eq!(View::new(&data, [2, 2], [isize::MIN, -1], 0).unwrap_err(), overflow);
    // An offset beyond isize::MAX.
    assert_eq!(View::new(&data, [1], [1], usize::MAX).unwrap_err(), overflow);
    let error = ViewMut::new(&mut [0u8; 4], [2], [isize::MAX], 3).unwrap_err();
    assert_eq!(
        error,
        Error::Overflow {
            operand: Operand::Output
        }
    );
    assert!(error.to_string().contains("output"), "{error}");
    // Reaching far below zero without overflowing is out of bounds, with the exact address.
    assert_eq!(
        View::new(&data, [2], [isize::MIN], 0).unwrap_err(),
        Error::OutOfBounds {
            operand: Operand::Input,
            lowest: isize::MIN,
            highest: 0,
            len: 8
        }
    );
}

#[test]
fn aliasing_outputs() {
    let mut buffer = [9u32; 16];
    // A zero stride on a dimension longer than 1.
    let error = ViewMut::new(&mut buffer, [2, 3], [0, 1], 0).unwrap_err();
    assert_eq!(
        error,
        Error::Aliasing {
            operand: Operand::Output,
            dim: 0
        }
    );
    assert!(error.to_string().contains("dimension 0"), "{error}");
    // Overlapping strides: rows of 3 only 2 apart.
    assert_eq!(
        ViewMut::new(&mut buffer, [2, 3], [2, 1], 0).unwrap_err(),
        Error::Aliasing {
            operand: Operand::Output,
            dim: 0
        }
    );
    // Negative strides overlap the same way.
    assert_eq!(
        ViewMut::new(&mut buffer, [3, 2], [-1, 2], 2).unwrap_err(),
        Error::Aliasing {
            operand: Operand::Output,
            dim: 1
        }
    );
    // Equal strides on two dimensions.
    assert_eq!(
        ViewMut::new(&mut buffer, [2, 2, 2], [4, 1, 4], 0).unwrap_err(),
        Error::Aliasing {
            operand: Operand::Output,
            dim: 2
        }
    );
    assert_eq!(
        ViewMut::padded(&mut buffer, &[2, 2], Some(&[1, 1]), 0).unwrap_err(),
        // The caller's dimension 1 of 2, not the padded one (7 of 8).
        Error::Aliasing {
            operand: Operand::Output,
            dim: 1
        }
    );
    assert_eq!(buffer, [9; 16]);
    // Zero strides on size-1 dimensions, and interleaved layouts that do not collide, are fine.
    assert!(ViewMut::new(&mut buffer, [1, 4], [0, 1], 0).is_ok());
    assert!(ViewMut::new(&mut buffer, [2, 4], [1, 2], 0).is_ok());
    assert!(ViewMut::new(&mut buffer, [2, 2], [-8, -2], 10).is_ok());
    // An input may alias itself (broadcast).
    assert!(View::new(&buffer, [2, 3], [0, 1], 0).is_ok());
}

#[cfg(target_pointer_width = "64")]
#[test]
fn index_type_too_narrow() {
    let one = [1.0f32];
    // A broadcast axis: 2^32 + 1 elements with no memory behind them.
    let beyond_u32 = u32::MAX as usize + 2;
    let input = View::new(&one, [beyond_u32], [0], 0).unwrap();
    let error = rejected(input, 0, 1, [1], [1]);
    assert_eq!(
        error,
        Error::IndexType {
            len: beyond_u32,
            max: u32::MAX as u64
        }
    );
    assert_eq!(
        error.to_string(),
        "positions up to 4294967296 do not fit the index type (largest 4294967295)"
    );

    let plan = |len: usize, k: usize| -> Result<(), Error> {
        let input = View::new(&one, [len], [0], 0).unwrap();
        let (mut v, mut i32s, mut i64s) = ([0.0f32; 2], [0i32; 2], [0u64; 2]);
        let a = TopK::new(Request {
            input,
            axis: 0,
            k,
            direction: Direction::Increasing,
            values: ViewMut::contiguous(&mut v, [k])?,
            indices: ViewMut::contiguous(&mut i32s, [k])?,
        });
        a?;
        let b = TopK::new(Request {
            input,
            axis: 0,
            k,
            direction: Direction::Increasing,
            values: ViewMut::contiguous(&mut v, [k])?,
            indices: ViewMut::contiguous(&mut i64s, [k])?,
        });
        b.map(|_| ())
    };
    // i32 holds positions up to 2^31 - 1: an axis of 2^31 fits, one more does not.
    assert_eq!(plan(1 << 31, 1), Ok(()));
    assert_eq!(
        plan((1 << 31) + 1, 1),
        Err(Error::IndexType {
            len: (1 << 31) + 1,
            max: i32::MAX as u64
        })
    );
    // K == 0 does not excuse the index type.
    assert_eq!(
        plan((1 << 31) + 1, 0),
        Err(Error::IndexType {
            len: (1 << 31) + 1,
            max: i32::MAX as u64
        })
    );
    // u32 holds an axis of exactly 2^32 (the plan is made, not run), on targets where it can be one.
    #[cfg(target_pointer_width = "64")]
    {
        let input = View::new(&one, [1usize << 32], [0], 0).unwrap();
        let (mut v, mut i) = ([0.0f32; 1], [0u32; 1]);
        let made = TopK::new(Request {
            input,
            axis: 0,
            k: 1,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut v, [1]).unwrap(),
            indices: ViewMut::contiguous(&mut i, [1]).unwrap(),
        });
        assert_eq!(made.map(|p| p.sequences()).ok(), Some(1));
    }
}

#[test]
fn scratch_too_small() {
    let data = input_2x3x4();
    let input = View::contiguous(&data, [2, 3, 4]).unwrap();
    let needed = min_scratch_len::<f32>(4, 3);
    assert_eq!(needed, 4);
    let (mut values, mut indices) = ([VALUE_SENTINEL; 18], [INDEX_SENTINEL; 18]);
    let error = topk(
        Request {
            input,
            axis: 2,
            k: 3,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut values, [2, 3, 3]).unwrap(),
            indices: ViewMut::contiguous(&mut indices, [2, 3, 3]).unwrap(),
        },
        &mut [0; 3],
    )
    .unwrap_err();
    assert_eq!(error, Error::Scratch { needed: 4, given: 3 });
    assert_eq!(error.to_string(), "the scratch has 3 words; 4 are needed");
    assert_eq!((values, indices), ([VALUE_SENTINEL; 18], [INDEX_SENTINEL; 18]));

    // 64-bit keys take two words per candidate.
    let wide: Vec<f64> = (0..24).map(f64::from).collect();
    assert_eq!(min_scratch_len::<f64>(4, 3), 8);
    let (mut values, mut indices) = ([0.5f64; 6], [INDEX_SENTINEL; 6]);
    let mut plan = TopK::new(Request {
        input: View::contiguous(&wide, [2, 3, 4]).unwrap(),
        axis: 2,
        k: 1,
        direction: Direction::Increasing,
        values: ViewMut::contiguous(&mut values, [2, 3, 1]).unwrap(),
        indices: ViewMut::contiguous(&mut indices, [2, 3, 1]).unwrap(),
    })
    .unwrap();
    assert_eq!(plan.scratch_len(), 4);
    for backend in Backend::ALL {
        match plan.run_sequences(0..6, backend, &mut [0; 3]) {
            Err(Error::Scratch { needed: 4, given: 3 }) | Err(Error::Backend { .. }) => {}
            // The reference needs no scratch at all.
            Ok(()) if backend == Backend::Naive => {}
            other => panic!("{}: {other:?}", backend.name()),
        }
    }
    assert_eq!(values, [0.0, 4.0, 8.0, 12.0, 16.0, 20.0]);

    // On the stack: 2K candidates beyond the 4 · K_MAX words it holds.
    let (mut values, mut indices) = ([VALUE_SENTINEL; 3], [INDEX_SENTINEL; 3]);
    let error = topk_on_stack::<1, _, _, 1>(Request {
        input: View::contiguous(&data[..8], [8]).unwrap(),
        axis: 0,
        k: 3,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut values, [3]).unwrap(),
        indices: ViewMut::contiguous(&mut indices, [3]).unwrap(),
    })
    .unwrap_err();
    assert_eq!(error, Error::Scratch { needed: 6, given: 4 });
    assert_eq!((values, indices), ([VALUE_SENTINEL; 3], [INDEX_SENTINEL; 3]));
}

#[test]
fn sequence_ranges_and_splits_out_of_bounds() {
    let data = input_2x3x4();
    let (mut values, mut indices) = ([VALUE_SENTINEL; 6], [INDEX_SENTINEL; 6]);
    let mut plan = TopK::new(Request {
        input: View::contiguous(&data, [2, 3, 4]).unwrap(),
        axis: 2,
        k: 1,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut values, [2, 3, 1]).unwrap(),
        indices: ViewMut::contiguous(&mut indices, [2, 3, 1]).unwrap(),
    })
    .unwrap();
    assert_eq!(plan.sequences(), 6);
    let mut scratch = vec![0; plan.scratch_len()];
    let error = plan.run_sequences(4..7, Backend::Auto, &mut scratch).unwrap_err();
    assert_eq!(
        error,
        Error::Sequences {
            start: 4,
            end: 7,
            count: 6
        }
    );
    assert_eq!(
        error.to_string(),
        "sequence range 4..7 is outside the plan's 6 sequences"
    );
    #[allow(clippy::reversed_empty_ranges)] // the point of the test
    let backwards = 3..2;
    assert_eq!(
        plan.run_sequences(backwards, Backend::Scalar, &mut scratch)
            .unwrap_err(),
        Error::Sequences {
            start: 3,
            end: 2,
            count: 6
        }
    );
    assert_eq!(
        plan.run_sequences(7..7, Backend::Naive, &mut scratch).unwrap_err(),
        Error::Sequences {
            start: 7,
            end: 7,
            count: 6
        }
    );
    // Ranges are numbered within each half of a split.
    let (mut low, mut high) = plan.split_at(2).unwrap();
    assert_eq!(
        low.run_sequences(0..3, Backend::Auto, &mut scratch).unwrap_err(),
        Error::Sequences {
            start: 0,
            end: 3,
            count: 2
        }
    );
    assert_eq!(
        high.run_sequences(1..5, Backend::Auto, &mut scratch).unwrap_err(),
        Error::Sequences {
            start: 1,
            end: 5,
            count: 4
        }
    );
    // Splitting beyond the end.
    assert_eq!(
        high.split_at(5).err(),
        Some(Error::Sequences {
            start: 5,
            end: 5,
            count: 4
        })
    );
    assert_eq!((values, indices), ([VALUE_SENTINEL; 6], [INDEX_SENTINEL; 6]));
    // Splitting at either end is fine: one half is empty.
    let (mut values, mut indices) = ([VALUE_SENTINEL; 6], [INDEX_SENTINEL; 6]);
    let plan = TopK::new(Request {
        input: View::contiguous(&data, [2, 3, 4]).unwrap(),
        axis: 2,
        k: 1,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut values, [2, 3, 1]).unwrap(),
        indices: ViewMut::contiguous(&mut indices, [2, 3, 1]).unwrap(),
    })
    .unwrap();
    let (empty, all) = plan.split_at(0).unwrap();
    assert_eq!((empty.sequences(), all.sequences()), (0, 6));
    let (mut all, mut none) = all.split_at(6).unwrap();
    assert_eq!(none.sequences(), 0);
    none.run(&mut scratch).unwrap();
    all.run(&mut scratch).unwrap();
    assert_eq!(values, [3.0, 7.0, 11.0, 15.0, 19.0, 23.0]);
    assert_eq!(indices, [3; 6]);
}

#[test]
fn ranks_outside_1_to_8() {
    let data = [0.0f32; 4];
    assert_eq!(View::padded(&data, &[], None, 0).unwrap_err(), Error::Rank { rank: 0 });
    let nine = [1usize; 9];
    let error = View::padded(&data, &nine, None, 0).unwrap_err();
    assert_eq!(error, Error::Rank { rank: 9 });
    assert_eq!(error.to_string(), "the tensor has 9 dimensions; 1 to 8 are supported");
    assert_eq!(
        ViewMut::padded(&mut [0u8; 4], &nine, None, 0).unwrap_err(),
        Error::Rank { rank: 9 }
    );
    // Strides that do not match the sizes' count.
    assert_eq!(
        View::padded(&data, &[2, 2], Some(&[2]), 0).unwrap_err(),
        Error::Rank { rank: 2 }
    );
}

#[test]
fn backends_by_name() {
    for backend in Backend::ALL {
        assert_eq!(Backend::from_name(backend.name()), Some(backend));
    }
    assert_eq!(Backend::from_name("no-such-engine"), None);
    assert_ne!(Backend::Auto.resolve(), Backend::Auto);
    let error = Error::Backend { name: "avx512" };
    assert_eq!(error.to_string(), "the avx512 backend is not available on this CPU");
}

#[test]
fn every_error_displays_its_numbers() {
    let cases: [(Error, &[&str]); 11] = [
        (Error::Rank { rank: 11 }, &["11"]),
        (Error::Axis { axis: 9, rank: 4 }, &["9", "4", "-4 to 3"]),
        (Error::K { k: 5, len: 4, axis: 2 }, &["K = 5", "4", "dimension 2"]),
        (
            Error::OutputSize {
                operand: Operand::Indices,
                dim: 3,
                expected: 7,
                actual: 8,
            },
            &["indices", "3", "7", "8"],
        ),
        (
            Error::Overflow {
                operand: Operand::Values,
            },
            &["values"],
        ),
        (
            Error::OutOfBounds {
                operand: Operand::Input,
                lowest: -3,
                highest: 40,
                len: 12,
            },
            &["input", "-3", "40", "12"],
        ),
        (
            Error::Aliasing {
                operand: Operand::Output,
                dim: 6,
            },
            &["output", "6"],
        ),
        (
            Error::IndexType {
                len: 70_000,
                max: 65_535,
            },
            &["69999", "65535"],
        ),
        (Error::Scratch { needed: 10, given: 9 }, &["10", "9"]),
        (
            Error::Sequences {
                start: 2,
                end: 9,
                count: 8,
            },
            &["2..9", "8"],
        ),
        (Error::Backend { name: "neon" }, &["neon"]),
    ];
    for (error, parts) in cases {
        let text = error.to_string();
        for part in parts {
            assert!(text.contains(part), "{error:?} displays {text:?}, without {part:?}");
        }
        // Through `std::error::Error` too.
        let boxed: Box<dyn std::error::Error> = Box::new(error);
        assert_eq!(boxed.to_string(), text);
    }
}
