//! `topk`: the command line of docs/CONTRACT.md §8, over the `topk_kernels` crate.
//!
//! ```text
//! cargo install --path cli                     # or, from a clone: cargo run --release -p topk-cli -- ...
//! topk demo
//! topk run --input x.npy --axis -1 --k 5 --direction decreasing --values v.npy --indices i.npy \
//!     [--index-type u32|u64|i32|i64] [--backend auto|naive|scalar|...]
//! topk bench --shape 1,1000000 --dtype f32 --axis 1 --k 100 --direction decreasing --data uniform \
//!     --reps 15 [--backend NAME] [--index-type u32] [--threads N] [--json]
//! ```
//!
//! - `demo` prints the four examples of DirectML's DML_TOP_K1 page (computed, in the page's notation),
//!   then a short throughput table on random data, and the `run` command to try next.
//! - `run` reads a little-endian .npy file (`<f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8`, C or Fortran
//!   order, 1 to 8 dimensions), selects along `--axis` (negative counts from the end, as in ONNX), writes
//!   the values (input dtype) and indices (`--index-type`, default u32) as C-order .npy files, and prints
//!   one summary line. Fortran-order input is read through a column-major view, without a transposing
//!   copy.
//! - `bench` times the kernel on generated data of any of the 12 value types (f32 f64 f16 bf16 i8 i16
//!   i32 i64 u8 u16 u32 u64) next to a streaming pass over the same input (`floor_s`), checks the result
//!   against the reference when that is cheap, and prints a line of text or (`--json`) one JSON object.
//!
//! Long work shows a progress bar on stderr when it is a terminal. On any error, a signal included, the
//! program prints one line `error: ...` on stderr, exits with status 2, and leaves every file as it was:
//! outputs are checked against the input and each other first, and written to temporary files that are
//! renamed into place only when both are complete (`files.rs`).

mod bench;
mod demo;
mod files;
mod npy;
mod progress;
mod run;
mod signals;
mod types;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use topk_kernels::{Backend, DataType, Direction, IndexType};

use crate::bench::{Case, Data};

/// Exact top-K along any axis of 1-8D tensors (DirectML DML_TOP_K1).
///
/// Start with `topk demo`; then `topk run` on a .npy file of your own (`numpy.save`), and `topk bench` to
/// time a shape. On any error: one line on stderr, exit status 2, and no file written or changed.
#[derive(Parser)]
#[command(name = "topk", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print DirectML's four examples, computed, then a short throughput table and a `run` to try.
    Demo {
        /// Timed runs per throughput row (the median is shown).
        #[arg(long, default_value_t = 5)]
        reps: usize,
    },
    /// Top-K of a .npy file into two .npy files (values and indices), with a one-line summary.
    Run(RunArgs),
    /// Time the kernel on generated data, next to a plain read of the same data (the floor).
    Bench(BenchArgs),
}

/// The engine's help, shared by `run` and `bench`.
const BACKEND_HELP: &str = "The engine: auto picks the fastest this CPU has for the shape; naive is the \
    reference (a sort); scalar, portable, avx2, avx512 and neon are the engines by name (one this CPU or \
    build lacks is an error)";

#[derive(Args)]
struct RunArgs {
    /// Input .npy file: little-endian <f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8, C or Fortran order,
    /// 1 to 8 dimensions.
    #[arg(long)]
    input: PathBuf,
    /// The axis to select along; negative counts from the end (-1 is the last).
    #[arg(long, allow_negative_numbers = true)]
    axis: i64,
    /// How many elements to select per sequence along the axis (0 to the axis length).
    #[arg(long, allow_negative_numbers = true)]
    k: usize,
    /// Which K to select, and their order.
    #[arg(long, value_enum)]
    direction: DirectionArg,
    /// Output .npy file for the values (the input's dtype, the input's shape with K along the axis). It
    /// may exist (it is replaced only if the run succeeds) but may not be the input or --indices.
    #[arg(long)]
    values: PathBuf,
    /// Output .npy file for the indices (positions along the axis, --index-type). It may exist but may
    /// not be the input or --values.
    #[arg(long)]
    indices: PathBuf,
    /// The indices' integer type.
    #[arg(long, default_value = "u32", value_parser = index_type_parser())]
    index_type: IndexType,
    #[arg(long, default_value = "auto", value_parser = backend_parser(), help = BACKEND_HELP)]
    backend: Backend,
}

#[derive(Args)]
struct BenchArgs {
    /// Sizes of the generated tensor, comma-separated, 1 to 8 of them, e.g. 32,128256.
    #[arg(long, value_delimiter = ',', required = true)]
    shape: Vec<usize>,
    /// The value type.
    #[arg(long, value_parser = dtype_parser())]
    dtype: DataType,
    /// The axis to select along; negative counts from the end (-1 is the last).
    #[arg(long, allow_negative_numbers = true)]
    axis: i64,
    /// How many elements to select per sequence along the axis (0 to the axis length).
    #[arg(long, allow_negative_numbers = true)]
    k: usize,
    /// Which K to select, and their order.
    #[arg(long, value_enum, default_value_t = DirectionArg::Decreasing)]
    direction: DirectionArg,
    /// The data pattern (the same on every run: a fixed seed).
    #[arg(long, value_enum, default_value_t = Data::Uniform)]
    data: Data,
    /// Timed runs, after 0.2 s of warm-up runs; the median is reported.
    #[arg(long, default_value_t = 15)]
    reps: usize,
    #[arg(long, default_value = "auto", value_parser = backend_parser(), help = BACKEND_HELP)]
    backend: Backend,
    /// The indices' integer type.
    #[arg(long, default_value = "u32", value_parser = index_type_parser())]
    index_type: IndexType,
    /// Worker threads: more than 1 runs `parallel::topk` on a rayon pool (a build with `--features
    /// rayon`) and the auto engine only.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print one JSON object instead of a line of text.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum DirectionArg {
    /// The K largest, largest first.
    Decreasing,
    /// The K smallest, smallest first.
    Increasing,
}

impl DirectionArg {
    fn direction(self) -> Direction {
        match self {
            DirectionArg::Decreasing => Direction::Decreasing,
            DirectionArg::Increasing => Direction::Increasing,
        }
    }

    fn name(self) -> &'static str {
        match self {
            DirectionArg::Decreasing => "decreasing",
            DirectionArg::Increasing => "increasing",
        }
    }
}

fn backend_parser() -> impl TypedValueParser<Value = Backend> {
    PossibleValuesParser::new(Backend::ALL.map(Backend::name))
        .try_map(|name| Backend::from_name(&name).ok_or("unknown backend"))
}

fn dtype_parser() -> impl TypedValueParser<Value = DataType> {
    PossibleValuesParser::new(DataType::ALL.map(DataType::name))
        .try_map(|name| DataType::from_name(&name).ok_or("unknown dtype"))
}

fn index_type_parser() -> impl TypedValueParser<Value = IndexType> {
    PossibleValuesParser::new(IndexType::ALL.map(IndexType::name))
        .try_map(|name| IndexType::from_name(&name).ok_or("unknown index type"))
}

/// `axis` made non-negative (ONNX: `axis + rank` when negative), or an error naming the valid range.
pub(crate) fn normalize_axis(axis: i64, rank: usize) -> Result<usize, String> {
    let signed_rank = rank as i64;
    let normalized = if axis < 0 { axis + signed_rank } else { axis };
    if (0..signed_rank).contains(&normalized) {
        Ok(normalized as usize)
    } else {
        Err(format!(
            "axis {axis} is out of range for a tensor of {rank} dimensions (-{rank} to {})",
            rank.saturating_sub(1)
        ))
    }
}

fn main() -> ExitCode {
    signals::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(&usage_error(&e)),
    };
    let result = match cli.command {
        Command::Demo { reps } => demo::demo(reps.max(1)).and_then(|text| print(&text)),
        Command::Run(args) => run::run(&run::Request {
            input: args.input,
            axis: args.axis,
            k: args.k,
            direction: args.direction.direction(),
            values: args.values,
            indices: args.indices,
            index_type: args.index_type,
            backend: args.backend,
        })
        .map(|summary| {
            // The outputs are in place: a closed stdout does not make the run a failure.
            let _ = print(&summary);
        }),
        Command::Bench(args) => bench(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

fn bench(args: BenchArgs) -> Result<(), String> {
    if !(1..=1024).contains(&args.threads) {
        return Err(format!("--threads {} is outside 1 to 1024", args.threads));
    }
    let case = Case {
        shape: args.shape,
        dtype: args.dtype,
        axis: args.axis,
        k: args.k,
        direction: args.direction.direction(),
        data: args.data,
        reps: args.reps,
        backend: args.backend,
        index_type: args.index_type,
        threads: args.threads,
        check: true,
    };
    let mut progress = progress::Progress::new("bench", 1, false);
    let m = bench::measure(&case, &mut progress)?;
    drop(progress);
    let shape: Vec<String> = case.shape.iter().map(usize::to_string).collect();
    let line = if args.json {
        format!(
            "{{\"shape\":[{}],\"dtype\":\"{}\",\"axis\":{},\"k\":{},\"direction\":\"{}\",\"data\":\"{}\",\
             \"index_type\":\"{}\",\"backend\":\"{}\",\"threads\":{},\"reps\":{},\"elements\":{},\
             \"median_s\":{:e},\"floor_s\":{:e},\"ns_per_elem\":{:e},\"gb_per_s\":{:e},\"checked\":{}}}\n",
            shape.join(","),
            case.dtype.name(),
            m.axis,
            case.k,
            args.direction.name(),
            case.data.name(),
            case.index_type.name(),
            m.backend,
            m.threads,
            case.reps,
            m.elements,
            m.median_s,
            m.floor_s,
            m.ns_per_elem(),
            m.gb_per_s(case.dtype),
            m.checked
        )
    } else {
        format!(
            "{} {} axis {} k {} {} {} backend {}: median {:.3} ms, floor {:.3} ms, {:.3} ns/elem, {:.2} GB/s{}\n",
            shape.join("x"),
            case.dtype.name(),
            m.axis,
            case.k,
            args.direction.name(),
            case.data.name(),
            m.backend,
            m.median_s * 1e3,
            m.floor_s * 1e3,
            m.ns_per_elem(),
            m.gb_per_s(case.dtype),
            if m.checked { ", checked against naive" } else { "" }
        )
    };
    print(&line)
}

/// Writes to stdout; a closed pipe is an error, not a panic.
fn print(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}

/// clap's message (several lines with usage and tips) folded into one line, without the usage.
fn usage_error(e: &clap::Error) -> String {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand
    ) {
        return "a subcommand is required: demo, run or bench (see --help)".to_string();
    }
    let text = e.render().to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("Usage:") && !line.starts_with("For more information"))
        .filter(|line| !line.is_empty())
        .collect();
    let message = lines.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    format!("{message} (see --help)")
}

/// One line on stderr and status 2.
fn fail(message: &str) -> ExitCode {
    let line = message.replace(['\n', '\r'], " ");
    let _ = writeln!(std::io::stderr(), "error: {line}");
    ExitCode::from(2)
}
