//! The command line (`topk`), run as a program: `run` on .npy files of every dtype,
//! index type, negative axes and Fortran order, checked bit for bit against `naive::topk`; the error path
//! (exit status 2, one line on stderr, no output file); `bench --json` and `demo`.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use npyz::{AutoSerialize, Deserialize, WriteOptions, WriterBuilder};
use topk_kernels::{Direction, Element, Index, Request, View, ViewMut, f16, naive};

/// The `topk` binary cargo built for this test (`$TOPK_CLI` if set, to test another build).
fn topk() -> PathBuf {
    std::env::var_os("TOPK_CLI").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_topk")), PathBuf::from)
}

fn cli(args: &[&str]) -> Output {
    Command::new(topk()).args(args).output().expect("run topk")
}

/// A fresh directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("topk-cli-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().expect("utf-8 temp path").to_string()
    }

    /// The names of the files in the directory, sorted.
    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read temp dir")
            .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn save<T: AutoSerialize>(path: &str, shape: &[usize], data: &[T], fortran: bool) {
    let shape: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
    let order = if fortran { npyz::Order::Fortran } else { npyz::Order::C };
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create input"));
    let mut writer = WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .order(order)
        .writer(file)
        .begin_nd()
        .expect("npy header");
    writer.extend(data.iter()).expect("npy data");
    writer.finish().expect("npy finish");
}

/// Shape, elements and dtype string of a C-order .npy file.
fn load<T: Deserialize>(path: &str) -> (Vec<usize>, Vec<T>, String) {
    let bytes = std::fs::read(path).expect("read output");
    let file = npyz::NpyFile::new(&bytes[..]).expect("parse output");
    assert_eq!(file.order(), npyz::Order::C, "{path} must be C order");
    let shape = file.shape().iter().map(|&s| s as usize).collect();
    let descr = match file.dtype() {
        npyz::DType::Plain(type_str) => type_str.to_string(),
        other => other.descr(),
    };
    (shape, file.into_vec().expect("output data"), descr)
}

fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Decreasing => "decreasing",
        Direction::Increasing => "increasing",
    }
}

/// Bits of a value, for bit-for-bit comparison whatever the type.
trait Bits: Copy {
    fn bits(self) -> u64;
}
macro_rules! bits {
    ($($t:ty => $e:expr),*) => {$(impl Bits for $t { fn bits(self) -> u64 { #[allow(clippy::redundant_closure_call)] ($e)(self) } })*};
}
bits!(f32 => |x: f32| x.to_bits() as u64, f64 => f64::to_bits, f16 => |x: f16| x.to_bits() as u64,
      i8 => |x: i8| x as u8 as u64, i16 => |x: i16| x as u16 as u64, i32 => |x: i32| x as u32 as u64,
      i64 => |x: i64| x as u64, u8 => |x: u8| x as u64, u16 => |x: u16| x as u64, u32 => |x: u32| x as u64,
      u64 => |x: u64| x);

/// Runs `topk run` on `data` (C order, or the same tensor stored in Fortran order) and compares both
/// outputs, shapes and dtypes with the library's reference.
#[allow(clippy::too_many_arguments)]
fn check_run<T, I>(data: &[T], shape: &[usize], axis: i64, k: usize, direction: Direction, index: &str, fortran: bool)
where
    T: Element + Bits + AutoSerialize + Deserialize + Default,
    I: Index + AutoSerialize + Deserialize + Default + PartialEq + std::fmt::Debug,
{
    let dir = TempDir::new();
    let rank = shape.len();
    let positive = if axis < 0 {
        (axis + rank as i64) as usize
    } else {
        axis as usize
    };
    // Reference outputs, from the C-order data.
    let mut out_shape = shape.to_vec();
    out_shape[positive] = k;
    let count: usize = out_shape.iter().product();
    let (mut values, mut indices) = (vec![T::default(); count], vec![I::default(); count]);
    naive::topk(Request {
        input: View::padded(data, shape, None, 0).unwrap(),
        axis: (positive) as isize,
        k,
        direction,
        values: ViewMut::padded(&mut values, &out_shape, None, 0).unwrap(),
        indices: ViewMut::padded(&mut indices, &out_shape, None, 0).unwrap(),
    })
    .unwrap();

    let stored = if fortran {
        to_fortran(data, shape)
    } else {
        data.to_vec()
    };
    let (input, v, i) = (dir.path("x.npy"), dir.path("v.npy"), dir.path("i.npy"));
    save(&input, shape, &stored, fortran);
    let (axis, k) = (axis.to_string(), k.to_string());
    let out = cli(&[
        "run",
        "--input",
        &input,
        "--axis",
        &axis,
        "--k",
        &k,
        "--direction",
        direction_name(direction),
        "--values",
        &v,
        "--indices",
        &i,
        "--index-type",
        index,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty());
    let summary = String::from_utf8_lossy(&out.stdout);
    assert_eq!(summary.lines().count(), 1, "{summary}");
    assert!(
        summary.contains(&format!(" {},", T::NAME)) && summary.contains(" ms "),
        "{summary}"
    );
    let (v_shape, got_values, _) = load::<T>(&v);
    let (i_shape, got_indices, i_descr) = load::<I>(&i);
    assert_eq!((v_shape, i_shape), (out_shape.clone(), out_shape));
    let expected_descr = match index {
        "u32" => "<u4",
        "u64" => "<u8",
        "i32" => "<i4",
        _ => "<i8",
    };
    assert_eq!(i_descr, expected_descr, "index type {index}");
    let bits = |v: &[T]| v.iter().map(|x| x.bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&got_values),
        bits(&values),
        "values, {} {shape:?} axis {axis} k {k}",
        T::NAME
    );
    assert_eq!(got_indices, indices, "indices, {} {shape:?} axis {axis} k {k}", T::NAME);
}

/// The elements of row-major `data` in column-major order.
fn to_fortran<T: Copy>(data: &[T], shape: &[usize]) -> Vec<T> {
    let mut out = Vec::with_capacity(data.len());
    let mut coord = vec![0usize; shape.len()];
    for _ in 0..data.len() {
        let row_major = coord.iter().zip(shape).fold(0, |a, (&c, &s)| a * s + c);
        out.push(data[row_major]);
        for (c, &s) in coord.iter_mut().zip(shape) {
            *c += 1;
            if *c < s {
                break;
            }
            *c = 0;
        }
    }
    out
}

/// Deterministic pseudo-random bits.
fn noise(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n).map(move |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    })
}

#[test]
fn directml_example_through_files() {
    let dir = TempDir::new();
    let input = dir.path("x.npy");
    save(
        &input,
        &[1, 1, 3, 4],
        &[0f32, 1., 10., 11., 3., 2., 9., 8., 4., 5., 6., 7.],
        false,
    );
    for axis in ["3", "-1"] {
        let (v, i) = (dir.path("v.npy"), dir.path("i.npy"));
        let out = cli(&[
            "run",
            "--input",
            &input,
            "--axis",
            axis,
            "--k",
            "2",
            "--direction",
            "decreasing",
            "--values",
            &v,
            "--indices",
            &i,
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let summary = String::from_utf8_lossy(&out.stdout);
        let expected = format!("{input} 1x1x3x4 f32, axis 3, K = 2 decreasing -> {v} 1x1x3x2 f32, {i} 1x1x3x2 u32; ");
        assert!(summary.starts_with(&expected), "{summary}");
        assert!(
            summary.ends_with(" ms in all\n") && summary.lines().count() == 1,
            "{summary}"
        );
        let (shape, values, descr) = load::<f32>(&v);
        assert_eq!(
            (shape, values, descr.as_str()),
            (vec![1, 1, 3, 2], vec![11., 10., 9., 8., 7., 6.], "<f4")
        );
        let (shape, indices, descr) = load::<u32>(&i);
        assert_eq!(
            (shape, indices, descr.as_str()),
            (vec![1, 1, 3, 2], vec![3, 2, 2, 3, 3, 2], "<u4")
        );
    }
}

#[test]
fn floats_with_nans_zeros_and_ties() {
    let specials = [
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7F80_0001),
        0.0,
        -0.0,
        1.0,
        1.0,
        f32::INFINITY,
    ];
    let data: Vec<f32> = noise(60, 1).map(|r| specials[(r % 8) as usize]).collect();
    for direction in [Direction::Decreasing, Direction::Increasing] {
        check_run::<f32, u32>(&data, &[5, 12], -1, 7, direction, "u32", false);
        check_run::<f32, i64>(&data, &[5, 12], 0, 5, direction, "i64", true);
    }
    let halves: Vec<f16> = noise(60, 2).map(|r| f16::from_bits(r as u16)).collect();
    check_run::<f16, u64>(&halves, &[3, 4, 5], 1, 4, Direction::Decreasing, "u64", true);
    check_run::<f16, i32>(&halves, &[3, 4, 5], -3, 2, Direction::Increasing, "i32", false);
    let doubles: Vec<f64> = noise(48, 3)
        .map(|r| f64::from_bits(r & 0xFFF0_0000_0000_000F))
        .collect();
    check_run::<f64, u32>(&doubles, &[2, 3, 8], 2, 8, Direction::Increasing, "u32", true);
}

#[test]
fn integers_at_their_extremes() {
    let bytes: Vec<i8> = noise(64, 4)
        .map(|r| [i8::MIN, i8::MAX, 0, -1, r as i8][(r % 5) as usize])
        .collect();
    check_run::<i8, u32>(&bytes, &[4, 16], 1, 16, Direction::Increasing, "u32", false);
    check_run::<i8, i32>(&bytes, &[2, 2, 2, 2, 2, 2], -4, 1, Direction::Decreasing, "i32", true);
    let words: Vec<u64> = noise(40, 5).map(|r| [0, u64::MAX, r][(r % 3) as usize]).collect();
    check_run::<u64, u64>(&words, &[8, 5], 0, 3, Direction::Decreasing, "u64", true);
    check_run::<i16, i64>(
        &[i16::MIN, i16::MAX, 0, i16::MIN],
        &[4],
        0,
        4,
        Direction::Decreasing,
        "i64",
        false,
    );
    check_run::<u8, u32>(
        &[3, 1, 2],
        &[1, 1, 1, 1, 1, 1, 1, 3],
        7,
        0,
        Direction::Decreasing,
        "u32",
        false,
    );
    check_run::<u16, u32>(&[], &[3, 0, 2], 2, 1, Direction::Decreasing, "u32", false);
    check_run::<i32, u32>(
        &[7, -7, 7, -7, 0, 1],
        &[2, 3],
        -2,
        2,
        Direction::Increasing,
        "u32",
        true,
    );
    check_run::<u32, u64>(&[u32::MAX, 0, 5], &[3], 0, 2, Direction::Increasing, "u64", false);
    check_run::<i64, u32>(
        &[i64::MIN, i64::MAX, i64::MIN],
        &[3],
        0,
        3,
        Direction::Increasing,
        "u32",
        false,
    );
}

/// A request that must fail: status 2, one `error:` line on stderr, and the directory unchanged.
fn expect_error(dir: &TempDir, args: &[&str], message: &str) {
    let before = dir.files();
    let out = cli(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains(message),
        "{args:?}: {stderr}"
    );
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(dir.files(), before, "{args:?} left files behind");
}

#[test]
fn errors_exit_2_with_one_line_and_no_output() {
    let dir = TempDir::new();
    let good = dir.path("good.npy");
    save(&good, &[3, 4], &[1f32; 12], false);
    let big_endian = dir.path("big.npy");
    {
        let descr = npyz::DType::Plain(">f4".parse().unwrap());
        let file = std::fs::File::create(&big_endian).unwrap();
        let mut w = WriteOptions::new()
            .dtype(descr)
            .shape(&[4])
            .writer(file)
            .begin_nd()
            .unwrap();
        w.extend([1f32, 2., 3., 4.].iter()).unwrap();
        w.finish().unwrap();
    }
    let boolean = dir.path("bool.npy");
    save(&boolean, &[2], &[true, false], false);
    let rank9 = dir.path("rank9.npy");
    save(&rank9, &[1; 9], &[1u8], false);
    let truncated = dir.path("truncated.npy");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 1]).unwrap();
    let (v, i, missing) = (dir.path("v.npy"), dir.path("i.npy"), dir.path("missing.npy"));
    let nowhere = dir.path("no/such/dir/i.npy");
    let run_to = |input: &str, axis: &str, k: &str, extra: &[&str], values: &str, indices: &str| {
        let mut args = vec![
            "run",
            "--input",
            input,
            "--axis",
            axis,
            "--k",
            k,
            "--direction",
            "increasing",
            "--values",
            values,
            "--indices",
            indices,
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |input: &str, axis: &str, k: &str, extra: &[&str]| run_to(input, axis, k, extra, &v, &i);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (run(&good, "1", "5", &[]), "K = 5 exceeds the axis length 4"),
        (run(&good, "2", "1", &[]), "axis 2 is out of range"),
        (run(&good, "-3", "1", &[]), "axis -3 is out of range"),
        (run(&good, "1", "x", &[]), "--k"),
        (run(&good, "1", "-1", &[]), "--k"),
        (
            run(&good, "1", "1", &["--backend", "warp-drive"]),
            "invalid value 'warp-drive'",
        ),
        (run(&good, "1", "1", &["--index-type", "u8"]), "--index-type"),
        (run(&missing, "0", "1", &[]), "cannot read"),
        (run(&big_endian, "0", "1", &[]), "big-endian"),
        (run(&boolean, "0", "1", &[]), "unsupported dtype |b1"),
        (run(&rank9, "0", "1", &[]), "9 dimensions"),
        (run(&truncated, "0", "1", &[]), "data bytes"),
        (run_to(&good, "1", "1", &[], &v, &v), "same file"),
        (run_to(&good, "1", "1", &[], &v, &nowhere), "cannot write"),
        (vec!["run".into()], "required"),
        (vec![], "subcommand"),
    ];
    for (args, message) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        expect_error(&dir, &args, message);
    }
    expect_error(
        &dir,
        &["bench", "--shape", "4,4", "--dtype", "f32", "--axis", "1", "--k", "9"],
        "K = 9",
    );
    expect_error(
        &dir,
        &["bench", "--shape", "4,4", "--dtype", "c64", "--axis", "1", "--k", "1"],
        "dtype",
    );
    expect_error(
        &dir,
        &[
            "bench",
            "--shape",
            "4",
            "--dtype",
            "u8",
            "--axis",
            "0",
            "--k",
            "1",
            "--threads",
            "0",
        ],
        "threads 0",
    );
}

/// `--threads 2` runs `parallel::topk` on a long row (cut into merged pieces) and is checked.
#[cfg(feature = "rayon")]
#[test]
fn bench_on_two_threads_matches_the_reference() {
    let out = cli(&[
        "bench",
        "--shape",
        "200000",
        "--dtype",
        "f32",
        "--axis",
        "0",
        "--k",
        "7",
        "--threads",
        "2",
        "--reps",
        "2",
        "--json",
    ]);
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(line.contains("\"threads\":2"), "{line}");
    assert!(line.contains("\"checked\":true"), "{line}");
}

#[test]
fn bench_json_for_every_dtype() {
    let dtypes = [
        "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    ];
    for (n, dtype) in dtypes.into_iter().enumerate() {
        let data = ["uniform", "normal", "ascending", "descending", "equal", "nan-mix"][n % 6];
        let out = cli(&[
            "bench",
            "--shape",
            "3,40",
            "--dtype",
            dtype,
            "--axis",
            "-1",
            "--k",
            "5",
            "--direction",
            "increasing",
            "--data",
            data,
            "--reps",
            "2",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{dtype}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let line = text.lines().last().unwrap();
        for field in [
            "\"shape\":[3,40]",
            &format!("\"dtype\":\"{dtype}\""),
            "\"axis\":1",
            "\"k\":5",
            "\"direction\":\"increasing\"",
            &format!("\"data\":\"{data}\""),
            "\"reps\":2",
            "\"checked\":true",
            "\"median_s\":",
            "\"floor_s\":",
            "\"ns_per_elem\":",
        ] {
            assert!(line.contains(field), "{field} missing in {line}");
        }
        let backend = topk_kernels::Backend::Auto.resolve().name();
        assert!(line.contains(&format!("\"backend\":\"{backend}\"")), "{line}");
    }
    // bf16 exists only in bench; a named backend is reported as itself.
    let out = cli(&[
        "bench",
        "--shape",
        "100",
        "--dtype",
        "bf16",
        "--axis",
        "0",
        "--k",
        "100",
        "--backend",
        "naive",
        "--reps",
        "1",
        "--json",
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"backend\":\"naive\""));
}

#[test]
fn demo_prints_the_directml_examples() {
    let out = cli(&["demo", "--reps", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for expected in [
        "OutputValueTensor: (Sizes:{1,1,3,2}, DataType:FLOAT32)\n[[[[11, 10],\n   [ 9,  8],\n   [ 7,  6]]]]",
        "OutputIndexTensor: (Sizes:{1,1,2,4}, DataType:UINT32)\n[[[[2, 2, 0, 0],\n   [1, 1, 1, 1]]]]",
        "OutputIndexTensor: (Sizes:{1,1,3,3}, DataType:UINT32)\n[[[[3, 1, 2],\n   [2, 3, 1],\n   [0, 1, 2]]]]",
        "OutputValueTensor: (Sizes:{1,1,3,3}, DataType:FLOAT32)\n[[[[1, 2, 2],\n   [3, 4, 5],\n   [6, 6, 6]]]]",
        "32x128256",
    ] {
        assert!(text.contains(expected), "missing:\n{expected}\nin:\n{text}");
    }
}
