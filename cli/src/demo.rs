//! `topk demo`: the four examples of DirectML's DML_TOP_K1 page (docs/CONTRACT.md §7), computed by the library and
//! printed in the page's notation, then a short throughput table, what its columns mean, and a `run`
//! command to try next.

use std::fmt::Write;

use topk_kernels::{Backend, DataType, Direction, Error, IndexType, Request, topk};

use crate::bench::{self, Case, Data};
use crate::progress::Progress;
use crate::types::Sample;

const SEQUENTIAL: [f32; 12] = [0., 1., 10., 11., 3., 2., 9., 8., 4., 5., 6., 7.];
const TIED: [f32; 12] = [1., 2., 2., 3., 3., 4., 5., 5., 6., 6., 6., 6.];
const SIZES: [usize; 4] = [1, 1, 3, 4];

/// The demo's text, with throughput measured over `reps` runs per row.
pub(crate) fn demo(reps: usize) -> Result<String, String> {
    let mut out = String::new();
    let examples = [
        ("Example 1", &SEQUENTIAL, 3, 2, Direction::Decreasing),
        (
            "Example 2. Using a different axis",
            &SEQUENTIAL,
            2,
            2,
            Direction::Decreasing,
        ),
        ("Example 3. Tied values", &TIED, 3, 3, Direction::Decreasing),
        (
            "Example 4. Increasing axis direction",
            &TIED,
            3,
            3,
            Direction::Increasing,
        ),
    ];
    for (title, input, axis, k, direction) in examples {
        example(&mut out, title, input, axis, k, direction).map_err(|e| e.to_string())?;
    }
    throughput(&mut out, reps)?;
    out.push_str(NEXT);
    Ok(out)
}

fn example(
    out: &mut String,
    title: &str,
    input: &[f32; 12],
    axis: usize,
    k: usize,
    direction: Direction,
) -> Result<(), Error> {
    let mut out_sizes = SIZES;
    out_sizes[axis] = k;
    let count = out_sizes.iter().product();
    let (mut values, mut indices) = (vec![0f32; count], vec![0u32; count]);
    let mut scratch = vec![0; topk_kernels::min_scratch_len::<f32>(SIZES[axis], k)];
    topk(
        Request {
            input: topk_kernels::View::contiguous(input, SIZES)?,
            axis: axis as isize,
            k,
            direction,
            values: topk_kernels::ViewMut::contiguous(&mut values, out_sizes)?,
            indices: topk_kernels::ViewMut::contiguous(&mut indices, out_sizes)?,
        },
        &mut scratch,
    )?;
    let direction = match direction {
        Direction::Decreasing => "DML_AXIS_DIRECTION_DECREASING",
        Direction::Increasing => "DML_AXIS_DIRECTION_INCREASING",
    };
    let _ = write!(
        out,
        "{title}\n\n{}\nAxis: {axis}\nK:    {k}\nAxisDirection: {direction}\n\n{}\n{}\n",
        tensor("InputTensor", "FLOAT32", &SIZES, &cells(input)),
        tensor("OutputValueTensor", "FLOAT32", &out_sizes, &cells(&values)),
        tensor(
            "OutputIndexTensor",
            "UINT32",
            &out_sizes,
            &indices.iter().map(u32::to_string).collect::<Vec<_>>()
        ),
    );
    Ok(())
}

/// What the table's columns mean, and what to try next.
const NEXT: &str = "
median: the kernel's median time per call over the runs (values and u32 indices written).
floor:  the median time of a plain read of the same input in the same order (one XOR per element, one
        value written per sequence): about the fastest any top-K could be, reading its input once.
        median / floor says how far the kernel is from the memory bound.
ns/elem and GB/s: the median per input element, and input bytes read per second.

Next, top-K of your own data: save an array with NumPy, then select along its last axis:
  python3 -c \"import numpy as np; np.save('x.npy', np.random.rand(8, 1000).astype(np.float32))\"
  topk run --input x.npy --axis -1 --k 5 --direction decreasing --values values.npy --indices indices.npy
(from a clone of the repository: cargo run --release -p topk-cli -- run ...; `topk run --help` for more,
`topk bench --help` to time a shape of your own.)
";

fn cells<T: Sample>(values: &[T]) -> Vec<String> {
    values.iter().map(|v| v.show()).collect()
}

/// `Name: (Sizes:{1,1,3,4}, DataType:FLOAT32)` and the data as nested brackets.
fn tensor(name: &str, dtype: &str, sizes: &[usize], cells: &[String]) -> String {
    let sizes_text = sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    format!(
        "{name}: (Sizes:{{{sizes_text}}}, DataType:{dtype})\n{}\n",
        nested(sizes, cells)
    )
}

/// NumPy's (and the DML page's) nested-array notation: cells right-aligned to one width, one innermost
/// row per line, indented by its depth, and a blank line between blocks of higher dimensions.
pub(crate) fn nested(sizes: &[usize], cells: &[String]) -> String {
    let width = cells.iter().map(String::len).max().unwrap_or(0);
    let padded: Vec<String> = cells.iter().map(|c| format!("{c:>width$}")).collect();
    let mut out = String::new();
    write_nested(&mut out, sizes, &padded, 0);
    out
}

fn write_nested(out: &mut String, sizes: &[usize], cells: &[String], depth: usize) {
    out.push('[');
    match sizes {
        [] => {}
        [_] => out.push_str(&cells.join(", ")),
        [count, rest @ ..] => {
            let block = rest.iter().product::<usize>();
            for i in 0..*count {
                if i > 0 {
                    out.push(',');
                    out.push_str(&"\n".repeat(sizes.len() - 1));
                    out.push_str(&" ".repeat(depth + 1));
                }
                write_nested(out, rest, &cells[i * block..(i + 1) * block], depth + 1);
            }
        }
    }
    out.push(']');
}

/// A few shapes of the workloads top-K serves: one long vector, many short rows (along either axis),
/// a batch of LLM vocabularies.
fn throughput(out: &mut String, reps: usize) -> Result<(), String> {
    let rows: [(&[usize], i64, usize); 4] = [
        (&[1, 1_000_000], 1, 100),
        (&[4096, 256], 1, 8),
        (&[4096, 256], 0, 8),
        (&[32, 128_256], 1, 50),
    ];
    let _ = writeln!(
        out,
        "Throughput ({reps} runs each, median; uniform random data, decreasing, u32 indices)\n\n\
         {:<12} {:<5} {:>4} {:>4} {:<8} {:>10} {:>10} {:>8} {:>7}",
        "shape", "dtype", "K", "axis", "backend", "median", "floor", "ns/elem", "GB/s"
    );
    let mut progress = Progress::new("demo", rows.len() as u64, false);
    for (row, (shape, axis, k)) in rows.into_iter().enumerate() {
        let case = Case {
            shape: shape.to_vec(),
            dtype: DataType::F32,
            axis,
            k,
            direction: Direction::Decreasing,
            data: Data::Uniform,
            reps,
            backend: Backend::Auto,
            index_type: IndexType::U32,
            threads: 1,
            check: false,
        };
        let m = bench::measure(&case, &mut progress)?;
        progress.stage("demo", rows.len() as u64);
        progress.set(row as u64 + 1);
        let shape_text = shape.iter().map(usize::to_string).collect::<Vec<_>>().join("x");
        let _ = writeln!(
            out,
            "{shape_text:<12} {:<5} {k:>4} {:>4} {:<8} {:>8.3}ms {:>8.3}ms {:>8.3} {:>7.2}",
            case.dtype.name(),
            m.axis,
            m.backend,
            m.median_s * 1e3,
            m.floor_s * 1e3,
            m.ns_per_elem(),
            m.gb_per_s(case.dtype)
        );
    }
    Ok(())
}
