//! The GPU twin of the `topk` command line (`cli/`, docs/CONTRACT.md §8):
//!
//! ```text
//! topk_gpu run --input X.npy --axis A --k K --direction decreasing|increasing --values V.npy --indices I.npy
//!              [--index-type u32|u64|i32|i64] [--backend gpu]
//! topk_gpu bench [--shape 32x128256] [--dtype f32] [--k 50] [--axis -1] [--direction decreasing]
//!                [--repeats 10] [--workgroup 256] [--data bits|normal] [--json]
//! ```
//!
//! `run` reads a little-endian `.npy` (`<f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8`, C or Fortran order,
//! 1 to 8 dimensions), selects on the GPU and writes both outputs as C-order `.npy`. On any error it prints
//! one line on stderr, exits with code 2 and writes no file. `bench` times calls on uniform random bits
//! (`--data normal`: normal values, integers scaled): the median wall time from `record` to the GPU's
//! completion and, where the adapter has timestamp queries, the median GPU time between timestamps
//! around the recorded kernels; it prints them with the plan's dispatch count and passes over the input
//! (`TopKGpu::plan_stats`), checks the result against the CPU crate once, and names the adapter.

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use bytemuck::Pod;
use topk_kernels::{Direction, Element, Index, Layout, MAX_RANK, Operand, View, ViewMut, f16};
use topk_kernels_gpu::{DataType, Gpu, GpuError, HostViewMut, IndexType, Request, TopKGpu};

// The kernel CLI's .npy reader and writer, its output files (checked against the input and each other,
// written both or neither) and its dtype dispatch (`cli/src/`), shared rather than written twice;
// `topk_gpu` uses only part of them.
#[allow(dead_code)]
#[path = "../../cli/src/files.rs"]
mod files;
#[allow(dead_code)]
#[path = "../../cli/src/npy.rs"]
mod npy;
#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../../cli/src/types.rs"]
mod types;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("bench") => bench(&args[1..]),
        _ => Err("usage: topk_gpu run|bench [--flag value]... (see the source's header)".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// `--name value` pairs (and bare `--json`).
fn flags(args: &[String], known: &[&str]) -> Result<HashMap<String, String>, String> {
    let mut map = HashMap::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let name = flag
            .strip_prefix("--")
            .filter(|n| known.contains(n))
            .ok_or_else(|| format!("unknown argument {flag:?}"))?;
        let value = if name == "json" {
            String::new()
        } else {
            it.next().ok_or_else(|| format!("{flag} needs a value"))?.clone()
        };
        if map.insert(name.to_string(), value).is_some() {
            return Err(format!("{flag} given twice"));
        }
    }
    Ok(map)
}

fn required<'a>(flags: &'a HashMap<String, String>, name: &str) -> Result<&'a str, String> {
    flags
        .get(name)
        .map(String::as_str)
        .ok_or_else(|| format!("--{name} is required"))
}

fn direction(name: &str) -> Result<Direction, String> {
    match name {
        "decreasing" => Ok(Direction::Decreasing),
        "increasing" => Ok(Direction::Increasing),
        other => Err(format!("--direction must be decreasing or increasing, not {other:?}")),
    }
}

/// An ONNX-style axis (negative counts from the end) as a dimension number.
fn axis(text: &str, rank: usize) -> Result<usize, String> {
    let axis: i64 = text.parse().map_err(|_| format!("--axis {text:?} is not an integer"))?;
    let resolved = if axis < 0 { axis + rank as i64 } else { axis };
    usize::try_from(resolved)
        .ok()
        .filter(|&a| a < rank)
        .ok_or_else(|| format!("axis {axis} is out of range for a tensor of {rank} dimensions"))
}

fn gpu() -> Result<(Gpu, TopKGpu), String> {
    let gpu = Gpu::new().map_err(|e| e.to_string())?;
    let topk = TopKGpu::new(&gpu.device).map_err(|e| e.to_string())?;
    Ok((gpu, topk))
}

fn run(args: &[String]) -> Result<(), String> {
    let flags = flags(
        args,
        &[
            "input",
            "axis",
            "k",
            "direction",
            "values",
            "indices",
            "index-type",
            "backend",
        ],
    )?;
    let input = required(&flags, "input")?;
    let values = required(&flags, "values")?;
    let indices = required(&flags, "indices")?;
    let direction = direction(required(&flags, "direction")?)?;
    let k: usize = required(&flags, "k")?
        .parse()
        .map_err(|_| "--k must be a non-negative integer".to_string())?;
    match flags.get("backend").map(String::as_str) {
        None | Some("gpu") | Some("auto") => {}
        Some(other) => return Err(format!("backend {other:?} is not available here (gpu)")),
    }
    let index = match flags.get("index-type") {
        None => IndexType::U32,
        Some(name) => IndexType::from_name(name).ok_or_else(|| format!("unknown index type {name:?}"))?,
    };
    let outputs = files::Outputs::prepare(
        Path::new(input),
        &[("--values", Path::new(values)), ("--indices", Path::new(indices))],
    )?;
    let bytes = files::read_input(Path::new(input), &mut |_, _| {})?;
    // The kernel CLI's reader: every header field a hostile file could get wrong is checked first.
    let npy = npy::Npy::parse(bytes).map_err(|e| format!("{input}: {e}"))?;
    let axis = axis(required(&flags, "axis")?, npy.shape.len())?;
    let job = Job {
        shape: npy.shape.clone(),
        fortran: npy.fortran,
        axis,
        k,
        direction,
        outputs,
        index,
    };
    types::with_npy_dtype!(
        npy.dtype,
        T => job.read::<T>(&npy),
        bf16 => Err("bf16 has no .npy type code".to_string())
    )
}

struct Job {
    shape: Vec<usize>,
    fortran: bool,
    axis: usize,
    k: usize,
    direction: Direction,
    outputs: files::Outputs,
    index: IndexType,
}

impl Job {
    fn read<T>(&self, npy: &npy::Npy) -> Result<(), String>
    where
        T: Element + Pod + npy::NpyElement,
    {
        let data: Vec<T> = npy.elements()?;
        topk_kernels::with_index_type!(self.index, I => self.select::<T, I>(&data))
    }

    fn select<T, I>(&self, data: &[T]) -> Result<(), String>
    where
        T: Element + Pod + npy::NpyElement,
        I: Index + Pod + npy::NpyElement,
    {
        // Checked here so that the message names the axis as given, not its padded rank-8 number.
        let len = self.shape[self.axis];
        if self.k > len {
            let (k, axis) = (self.k, self.axis);
            return Err(topk_kernels::Error::K { k, len, axis }.to_string());
        }
        let strides = self.fortran.then(|| {
            let mut step = 1isize;
            self.shape
                .iter()
                .map(|&size| {
                    let stride = step;
                    step = step.saturating_mul(size.max(1) as isize);
                    stride
                })
                .collect::<Vec<_>>()
        });
        let input = View::padded(data, &self.shape, strides.as_deref(), 0).map_err(|e| e.to_string())?;
        let mut out_shape = self.shape.clone();
        out_shape[self.axis] = self.k;
        let count = out_shape
            .iter()
            .try_fold(1usize, |a, &s| a.checked_mul(s))
            .ok_or("output too large")?;
        let mut values = vec![T::zeroed(); count];
        let mut indices = vec![I::zeroed(); count];
        let (gpu, topk) = gpu()?;
        topk.run_host(
            &gpu.device,
            &gpu.queue,
            input,
            self.axis,
            self.k,
            self.direction,
            HostViewMut::padded(&mut values, &out_shape, None, 0).map_err(|e| e.to_string())?,
            HostViewMut::padded(&mut indices, &out_shape, None, 0).map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
        let (values, indices) = (npy::encode(&out_shape, &values)?, npy::encode(&out_shape, &indices)?);
        self.outputs.write(&[&values, &indices], &mut |_| {})
    }
}

fn bench(args: &[String]) -> Result<(), String> {
    let flags = flags(
        args,
        &[
            "shape",
            "dtype",
            "k",
            "axis",
            "direction",
            "repeats",
            "workgroup",
            "data",
            "json",
        ],
    )?;
    let shape: Vec<usize> = flags
        .get("shape")
        .map_or("32x128256", String::as_str)
        .split('x')
        .map(|s| s.parse().map_err(|_| format!("bad --shape part {s:?}")))
        .collect::<Result<_, _>>()?;
    let dtype = flags.get("dtype").map_or("f32", String::as_str);
    let k: usize = flags
        .get("k")
        .map_or("50", String::as_str)
        .parse()
        .map_err(|_| "bad --k")?;
    let axis = axis(flags.get("axis").map_or("-1", String::as_str), shape.len())?;
    let direction = direction(flags.get("direction").map_or("decreasing", String::as_str))?;
    let repeats: usize = flags
        .get("repeats")
        .map_or("10", String::as_str)
        .parse()
        .map_err(|_| "bad --repeats")?;
    let workgroup: u32 = flags
        .get("workgroup")
        .map_or("256", String::as_str)
        .parse()
        .map_err(|_| "bad --workgroup")?;
    let bench = Bench {
        workgroup,
        shape,
        axis,
        k,
        direction,
        repeats: repeats.max(1),
        json: flags.contains_key("json"),
        normal: match flags.get("data").map(String::as_str) {
            None | Some("bits") => false,
            Some("normal") => true,
            Some(other) => return Err(format!("--data must be bits or normal, not {other:?}")),
        },
    };
    match DataType::from_name(dtype) {
        Some(DataType::F32) => bench.run::<f32>(),
        Some(DataType::F64) => bench.run::<f64>(),
        Some(DataType::F16) => bench.run::<f16>(),
        Some(DataType::I32) => bench.run::<i32>(),
        Some(DataType::U8) => bench.run::<u8>(),
        Some(DataType::I64) => bench.run::<i64>(),
        _ => Err(format!("bench supports f32 f64 f16 i32 i64 u8, not {dtype:?}")),
    }
}

struct Bench {
    workgroup: u32,
    shape: Vec<usize>,
    axis: usize,
    k: usize,
    direction: Direction,
    repeats: usize,
    /// Normal(0, 1) values (integers: scaled by 1000 and rounded) instead of uniform random bits.
    normal: bool,
    json: bool,
}

impl Bench {
    fn run<T: Element + Pod>(&self) -> Result<(), String> {
        let err = |e: GpuError| e.to_string();
        let elements: usize = self.shape.iter().product();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let bytes: Vec<u8> = if self.normal {
            let mut normal = || {
                // Box-Muller over two uniforms in (0, 1].
                let u = ((next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                let v = (next() >> 11) as f64 / (1u64 << 53) as f64;
                (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
            };
            let mut out = Vec::with_capacity(elements * size_of::<T>());
            for _ in 0..elements {
                let x = normal();
                match T::DATA_TYPE {
                    DataType::F32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
                    DataType::F64 => out.extend_from_slice(&x.to_le_bytes()),
                    DataType::F16 => out.extend_from_slice(&f16::from_f64(x).to_le_bytes()),
                    DataType::I32 => out.extend_from_slice(&((x * 1000.0).round() as i32).to_le_bytes()),
                    DataType::I64 => out.extend_from_slice(&((x * 1000.0).round() as i64).to_le_bytes()),
                    _ => out.push((x * 40.0 + 128.0).round().clamp(0.0, 255.0) as u8),
                }
            }
            out
        } else {
            (0..elements * size_of::<T>()).map(|_| (next() >> 32) as u8).collect()
        };
        let data: Vec<T> = bytes
            .chunks_exact(size_of::<T>())
            .map(bytemuck::pod_read_unaligned)
            .collect();
        let mut out_shape = self.shape.clone();
        out_shape[self.axis] = self.k;
        let outputs: usize = out_shape.iter().product();
        let gpu = Gpu::new().map_err(err)?;
        let topk = TopKGpu::with_workgroup_size(&gpu.device, self.workgroup).map_err(err)?;
        let padded = self.axis;
        let input_layout =
            Layout::padded(Operand::Input, &self.shape, None, 0, data.len()).map_err(|e| e.to_string())?;
        let out_layout = Layout::padded(Operand::Output, &out_shape, None, 0, outputs).map_err(|e| e.to_string())?;
        let request = Request::new(
            T::DATA_TYPE,
            IndexType::U32,
            &input_layout,
            padded,
            self.k,
            self.direction,
            &out_layout,
            &out_layout,
        )
        .map_err(err)?;
        use wgpu::util::DeviceExt;
        let mut padded_bytes = bytes.clone();
        padded_bytes.resize(bytes.len().div_ceil(4).max(1) * 4, 0);
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let input = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("input"),
            contents: &padded_bytes,
            usage: storage,
        });
        let buffer = |bytes: usize| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: (bytes.div_ceil(4).max(1) * 4) as u64,
                usage: storage,
                mapped_at_creation: false,
            })
        };
        let values = buffer(outputs * size_of::<T>());
        let indices = buffer(outputs * 4);
        let timestamps = gpu
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        let queries = timestamps.then(|| {
            let set = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: None,
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            (set, resolve, read)
        });
        let mut wall = Vec::new();
        let mut device_times = Vec::new();
        let stats = topk.plan_stats(&request).map_err(err)?;
        for _ in 0..self.repeats + 1 {
            // Wall time of one call: from recording to the GPU's completion, as a caller sees it.
            let start = Instant::now();
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            if let Some((set, _, _)) = &queries {
                encoder.write_timestamp(set, 0);
            }
            topk.record(&gpu.device, &mut encoder, &request, &input, &values, &indices)
                .map_err(err)?;
            if let Some((set, resolve, read)) = &queries {
                encoder.write_timestamp(set, 1);
                encoder.resolve_query_set(set, 0..2, resolve, 0);
                encoder.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
            }
            gpu.queue.submit([encoder.finish()]);
            gpu.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| e.to_string())?;
            wall.push(start.elapsed().as_secs_f64());
            if let Some((_, _, read)) = &queries {
                let stamps = read_u64s(&gpu.device, read)?;
                let period = f64::from(gpu.queue.get_timestamp_period());
                device_times.push(stamps[1].wrapping_sub(stamps[0]) as f64 * period * 1e-9);
            }
        }
        // The first run compiles and warms up; it is not counted.
        let median = |v: &mut Vec<f64>| {
            v.remove(0);
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let wall = median(&mut wall);
        let device = (!device_times.is_empty()).then(|| median(&mut device_times));
        self.verify::<T>(&gpu, &topk, &data)?;
        let gbs = (elements * size_of::<T>()) as f64 / wall / 1e9;
        let shape = self.shape.iter().map(usize::to_string).collect::<Vec<_>>().join("x");
        let passes = stats.input_passes();
        if self.json {
            let gpu_s = device.map_or("null".to_string(), |s| format!("{s:e}"));
            println!(
                "{{\"adapter\":{:?},\"shape\":\"{shape}\",\"dtype\":\"{}\",\"k\":{},\"axis\":{},\"median_s\":{wall:e},\"wall_s\":{wall:e},\"gpu_s\":{gpu_s},\"dispatches\":{},\"input_passes\":{passes:.4},\"gb_per_s\":{gbs:.3}}}",
                gpu.name(),
                T::NAME,
                self.k,
                self.axis,
                stats.dispatches,
            );
        } else {
            println!("adapter: {}", gpu.name());
            println!(
                "{shape} {} k={} axis={} {:?} workgroup={}: wall {:.3} ms (record to completion), GPU {}, {} dispatches, {passes:.3} passes over the input, {gbs:.4} GB/s",
                T::NAME,
                self.k,
                self.axis,
                self.direction,
                self.workgroup,
                wall * 1e3,
                device.map_or("untimed (no timestamp queries)".to_string(), |s| format!(
                    "{:.3} ms (timestamps)",
                    s * 1e3
                )),
                stats.dispatches,
            );
        }
        Ok(())
    }

    /// One run through `run_host`, compared with the CPU crate bit for bit.
    fn verify<T: Element + Pod>(&self, gpu: &Gpu, topk: &TopKGpu, data: &[T]) -> Result<(), String> {
        let mut out_shape = self.shape.clone();
        out_shape[self.axis] = self.k;
        let outputs: usize = out_shape.iter().product();
        let padded = self.axis;
        let (mut cv, mut ci) = (vec![T::zeroed(); outputs], vec![0u32; outputs]);
        let (mut gv, mut gi) = (cv.clone(), ci.clone());
        let input = View::padded(data, &self.shape, None, 0).map_err(|e| e.to_string())?;
        let mut scratch = vec![0u64; topk_kernels::min_scratch_len::<T>(self.shape[self.axis], self.k)];
        topk_kernels::topk::<T, u32, MAX_RANK>(
            topk_kernels::Request {
                input,
                axis: padded as isize,
                k: self.k,
                direction: self.direction,
                values: ViewMut::padded(&mut cv, &out_shape, None, 0).map_err(|e| e.to_string())?,
                indices: ViewMut::padded(&mut ci, &out_shape, None, 0).map_err(|e| e.to_string())?,
            },
            &mut scratch,
        )
        .map_err(|e| e.to_string())?;
        topk.run_host(
            &gpu.device,
            &gpu.queue,
            input,
            padded,
            self.k,
            self.direction,
            HostViewMut::padded(&mut gv, &out_shape, None, 0).map_err(|e| e.to_string())?,
            HostViewMut::padded(&mut gi, &out_shape, None, 0).map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
        if bytemuck::cast_slice::<T, u8>(&cv) != bytemuck::cast_slice::<T, u8>(&gv) || ci != gi {
            return Err("the GPU result differs from the CPU crate's".into());
        }
        Ok(())
    }
}

fn read_u64s(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Result<[u64; 2], String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = sender.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| e.to_string())?;
    receiver.recv().map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
    let stamps = {
        let view = buffer.get_mapped_range(..).map_err(|e| e.to_string())?;
        let words: [u64; 2] = bytemuck::pod_read_unaligned(&view[..16]);
        words
    };
    buffer.unmap();
    Ok(stamps)
}
