//! The four examples of DirectML's DML_TOP_K1 page (docs/CONTRACT.md §7), exactly, through every backend.

use topk_kernels::{Backend, Direction, Request, TopK, View, ViewMut};

const SEQUENTIAL: [f32; 12] = [0., 1., 10., 11., 3., 2., 9., 8., 4., 5., 6., 7.];
const TIED: [f32; 12] = [1., 2., 2., 3., 3., 4., 5., 5., 6., 6., 6., 6.];

fn run(input: &[f32; 12], axis: usize, k: usize, direction: Direction, backend: Backend) -> (Vec<f32>, Vec<u32>) {
    let mut out_sizes = [1, 1, 3, 4];
    out_sizes[axis] = k;
    let count = out_sizes.iter().product();
    let (mut values, mut indices) = (vec![f32::NAN; count], vec![u32::MAX; count]);
    let mut plan = TopK::new(Request {
        input: View::contiguous(input, [1, 1, 3, 4]).unwrap(),
        axis: axis as isize,
        k,
        direction,
        values: ViewMut::contiguous(&mut values, out_sizes).unwrap(),
        indices: ViewMut::contiguous(&mut indices, out_sizes).unwrap(),
    })
    .unwrap();
    let mut scratch = vec![0; plan.scratch_len()];
    let all = 0..plan.sequences();
    plan.run_sequences(all, backend, &mut scratch).unwrap();
    (values, indices)
}

#[test]
fn example_1_last_axis() {
    for backend in Backend::ALL.into_iter().filter(|b| b.is_available()) {
        let (v, i) = run(&SEQUENTIAL, 3, 2, Direction::Decreasing, backend);
        assert_eq!(v, [11., 10., 9., 8., 7., 6.], "{backend:?}");
        assert_eq!(i, [3, 2, 2, 3, 3, 2], "{backend:?}");
    }
}

#[test]
fn example_2_other_axis() {
    for backend in Backend::ALL.into_iter().filter(|b| b.is_available()) {
        let (v, i) = run(&SEQUENTIAL, 2, 2, Direction::Decreasing, backend);
        assert_eq!(v, [4., 5., 10., 11., 3., 2., 9., 8.], "{backend:?}");
        assert_eq!(i, [2, 2, 0, 0, 1, 1, 1, 1], "{backend:?}");
    }
}

#[test]
fn example_3_ties() {
    for backend in Backend::ALL.into_iter().filter(|b| b.is_available()) {
        let (v, i) = run(&TIED, 3, 3, Direction::Decreasing, backend);
        assert_eq!(v, [3., 2., 2., 5., 5., 4., 6., 6., 6.], "{backend:?}");
        assert_eq!(i, [3, 1, 2, 2, 3, 1, 0, 1, 2], "{backend:?}");
    }
}

#[test]
fn example_4_increasing() {
    for backend in Backend::ALL.into_iter().filter(|b| b.is_available()) {
        let (v, i) = run(&TIED, 3, 3, Direction::Increasing, backend);
        assert_eq!(v, [1., 2., 2., 3., 4., 5., 6., 6., 6.], "{backend:?}");
        assert_eq!(i, [0, 1, 2, 0, 1, 2, 0, 1, 2], "{backend:?}");
    }
}
