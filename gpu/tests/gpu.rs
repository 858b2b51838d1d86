//! The GPU kernels against the CPU crate, bit for bit: random requests over every value and index
//! type, rank, stride pattern, K and direction; the DirectML examples; adversarial rows; long rows on
//! every algorithm path. Without an adapter every test prints "skipping: no GPU adapter" and passes,
//! unless TOPK_REQUIRE_GPU=1, which makes a missing adapter a failure.

use std::io::Write;
use std::sync::OnceLock;

use bytemuck::Pod;
use topk_kernels::{Direction, Element, Index, MAX_RANK, View, ViewMut, bf16, f16, min_scratch_len};
use topk_kernels_gpu::{DataType, Gpu, GpuError, HostViewMut, IndexType, Request, TILE, TopKGpu};

fn gpu() -> Option<&'static (Gpu, TopKGpu)> {
    static GPU: OnceLock<Option<(Gpu, TopKGpu)>> = OnceLock::new();
    GPU.get_or_init(|| {
        // Written to the stderr handle rather than with eprintln!, which the test harness captures:
        // a skip must be visible in CI logs.
        let mut stderr = std::io::stderr();
        match Gpu::new() {
            Ok(gpu) => {
                let topk = TopKGpu::new(&gpu.device).expect("pipelines");
                let _ = writeln!(stderr, "GPU tests on {}", gpu.name());
                Some((gpu, topk))
            }
            Err(e) => {
                assert!(
                    std::env::var("TOPK_REQUIRE_GPU").as_deref() != Ok("1"),
                    "TOPK_REQUIRE_GPU=1 but {e}"
                );
                let _ = writeln!(stderr, "skipping: no GPU adapter ({e})");
                None
            }
        }
    })
    .as_ref()
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bit patterns of width `bits` that stress the order: zeros of both signs, infinities and NaNs of every
/// float format of that width, integer extremes.
fn specials(bits: u32) -> Vec<u64> {
    let mask = u64::MAX >> (64 - bits);
    let top = 1u64 << (bits - 1);
    let mut v = vec![0, 1, top, top | 1, mask, mask >> 1, top - 1, mask - 1, 2, top + 2];
    let floats: &[u64] = match bits {
        16 => &[
            0x7C00, 0xFC00, 0x7C01, 0x7E00, 0xFE00, 0x7F80, 0xFF80, 0x7F81, 0x7FC0, 0x3C00, 0xBC00,
        ],
        32 => &[
            0x7F80_0000,
            0xFF80_0000,
            0x7F80_0001,
            0x7FC0_0000,
            0xFFC0_0000,
            0x3F80_0000,
            0xBF80_0000,
        ],
        64 => &[
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0x7FF0_0000_0000_0001,
            0x7FF8_0000_0000_0000,
            0xFFF8_0000_0000_0001,
            0x3FF0_0000_0000_0000,
            0xBFF0_0000_0000_0000,
            0x0000_0001_0000_0000,
            0x8000_0001_0000_0000,
        ],
        _ => &[],
    };
    v.extend_from_slice(floats);
    v
}

/// Random values: a mix of uniform bits, a small pool (ties) and the specials.
fn values<T: Pod>(rng: &mut Rng, len: usize) -> Vec<T> {
    let bytes = size_of::<T>();
    let bits = 8 * bytes as u32;
    let specials = specials(bits);
    let pool: Vec<u64> = (0..1 + rng.below(6)).map(|_| rng.next()).collect();
    let mode = rng.below(4);
    (0..len)
        .map(|_| {
            let pattern = match (mode, rng.below(3)) {
                (0, _) | (_, 0) => rng.next(),
                (1, _) | (_, 1) => pool[rng.below(pool.len())],
                _ => specials[rng.below(specials.len())],
            };
            bytemuck::pod_read_unaligned(&pattern.to_le_bytes()[..bytes])
        })
        .collect()
}

/// A strided layout over a fresh buffer for `sizes`: dimensions permuted, every stride stepped by 1 or 2,
/// some reversed (negative strides), and for inputs some broadcast (stride 0).
fn layout(rng: &mut Rng, sizes: &[usize], input: bool) -> (Vec<isize>, usize, usize) {
    let rank = sizes.len();
    let mut order: Vec<usize> = (0..rank).collect();
    if rng.below(2) == 0 {
        for i in (1..rank).rev() {
            order.swap(i, rng.below(i + 1));
        }
    }
    let mut strides = vec![0isize; rank];
    let mut step = 1 + rng.below(2);
    for &d in order.iter().rev() {
        strides[d] = step as isize;
        step *= sizes[d].max(1) * (1 + rng.below(2) * (rng.below(3) == 0) as usize);
    }
    let len = step + 3;
    let mut offset = rng.below(3);
    for d in 0..rank {
        if input && sizes[d] > 1 && rng.below(6) == 0 {
            strides[d] = 0;
        } else if rng.below(4) == 0 {
            offset += (sizes[d].max(1) - 1) * strides[d] as usize;
            strides[d] = -strides[d];
        }
    }
    (strides, offset, len + offset)
}

/// One request on the CPU (the dispatched engine) and on the GPU; the whole output buffers (guard
/// elements included) must be bit-identical.
#[allow(clippy::too_many_arguments)]
fn check<T: Element + Pod, I: Index + Pod>(
    topk: &TopKGpu,
    gpu: &Gpu,
    rng: &mut Rng,
    sizes: &[usize],
    axis: usize,
    k: usize,
    direction: Direction,
    strided: bool,
) {
    let mut out_sizes = sizes.to_vec();
    out_sizes[axis] = k;
    let contiguous = |sizes: &[usize]| {
        let mut strides = vec![0isize; sizes.len()];
        let mut step = 1;
        for d in (0..sizes.len()).rev() {
            strides[d] = step as isize;
            step *= sizes[d].max(1);
        }
        (strides, 0, step)
    };
    let (in_strides, in_offset, in_len) = if strided {
        layout(rng, sizes, true)
    } else {
        contiguous(sizes)
    };
    let (v_strides, v_offset, v_len) = if strided {
        layout(rng, &out_sizes, false)
    } else {
        contiguous(&out_sizes)
    };
    let (i_strides, i_offset, i_len) = if strided {
        layout(rng, &out_sizes, false)
    } else {
        contiguous(&out_sizes)
    };
    let input: Vec<T> = values(rng, in_len);
    let guard_values: Vec<T> = values(rng, v_len);
    let guard_indices: Vec<I> = values(rng, i_len);
    let (mut cpu_values, mut cpu_indices) = (guard_values.clone(), guard_indices.clone());
    let (mut gpu_values, mut gpu_indices) = (guard_values, guard_indices);
    let view = || View::padded(&input, sizes, Some(&in_strides), in_offset).unwrap();
    let padded = axis;
    let mut scratch = vec![0u64; min_scratch_len::<T>(sizes[axis], k)];
    topk_kernels::topk::<T, I, MAX_RANK>(
        topk_kernels::Request {
            input: view(),
            axis: padded as isize,
            k,
            direction,
            values: ViewMut::padded(&mut cpu_values, &out_sizes, Some(&v_strides), v_offset).unwrap(),
            indices: ViewMut::padded(&mut cpu_indices, &out_sizes, Some(&i_strides), i_offset).unwrap(),
        },
        &mut scratch,
    )
    .unwrap();
    topk.run_host(
        &gpu.device,
        &gpu.queue,
        view(),
        padded,
        k,
        direction,
        HostViewMut::padded(&mut gpu_values, &out_sizes, Some(&v_strides), v_offset).unwrap(),
        HostViewMut::padded(&mut gpu_indices, &out_sizes, Some(&i_strides), i_offset).unwrap(),
    )
    .unwrap();
    let what = format!(
        "{} -> {} sizes {sizes:?} axis {axis} k {k} {direction:?} input strides {in_strides:?}+{in_offset} \
         values {v_strides:?}+{v_offset} indices {i_strides:?}+{i_offset}",
        T::NAME,
        I::NAME
    );
    same_bits(&cpu_values, &gpu_values, &format!("values: {what}"));
    same_bits(&cpu_indices, &gpu_indices, &format!("indices: {what}"));
}

/// Bitwise equality, reporting the first differing element rather than two whole buffers.
fn same_bits<T: Pod>(cpu: &[T], gpu: &[T], what: &str) {
    let size = size_of::<T>();
    let (c, g) = (bytemuck::cast_slice::<T, u8>(cpu), bytemuck::cast_slice::<T, u8>(gpu));
    assert_eq!(c.len(), g.len(), "{what}");
    if let Some(i) = (0..cpu.len()).find(|&i| c[i * size..(i + 1) * size] != g[i * size..(i + 1) * size]) {
        panic!(
            "{what}: element {i} of {} differs: cpu {:02x?} gpu {:02x?}",
            cpu.len(),
            &c[i * size..(i + 1) * size],
            &g[i * size..(i + 1) * size]
        );
    }
}

fn random_requests<T: Element + Pod>(seed: u64, cases: usize) {
    let Some((gpu, topk)) = gpu() else { return };
    let mut rng = Rng(seed);
    for case in 0..cases {
        let rank = 1 + rng.below(if case % 8 == 0 { 8 } else { 4 });
        let mut sizes: Vec<usize> = (0..rank).map(|_| 1 + rng.below(4)).collect();
        let axis = rng.below(rank);
        sizes[axis] = match rng.below(8) {
            0 => 1 + rng.below(3000),
            1 => TILE as usize - 1 + rng.below(3),
            _ => 1 + rng.below(40),
        };
        if rng.below(16) == 0 {
            sizes[rng.below(rank)] = 0;
        }
        let n = sizes[axis];
        let k = match rng.below(4) {
            0 => n,
            1 => n.min(1 + rng.below(4)),
            _ => rng.below(n + 1),
        };
        let direction = if rng.below(2) == 0 {
            Direction::Decreasing
        } else {
            Direction::Increasing
        };
        let strided = rng.below(3) != 0;
        match case % 4 {
            0 => check::<T, u32>(topk, gpu, &mut rng, &sizes, axis, k, direction, strided),
            1 => check::<T, u64>(topk, gpu, &mut rng, &sizes, axis, k, direction, strided),
            2 => check::<T, i32>(topk, gpu, &mut rng, &sizes, axis, k, direction, strided),
            _ => check::<T, i64>(topk, gpu, &mut rng, &sizes, axis, k, direction, strided),
        }
    }
}

macro_rules! random_tests {
    ($($name:ident: $t:ty, $seed:expr;)*) => {$(
        #[test]
        fn $name() {
            // TOPK_GPU_CASES raises the count for a longer soak.
            let cases = std::env::var("TOPK_GPU_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(60);
            random_requests::<$t>($seed, cases);
        }
    )*};
}

random_tests! {
    random_f32: f32, 1;
    random_f64: f64, 2;
    random_f16: f16, 3;
    random_bf16: bf16, 4;
    random_i8: i8, 5;
    random_i16: i16, 6;
    random_i32: i32, 7;
    random_i64: i64, 8;
    random_u8: u8, 9;
    random_u16: u16, 10;
    random_u32: u32, 11;
    random_u64: u64, 12;
}

/// Every algorithm path: one tile, chunk rounds (one, several), the row-wide bitonic sort, K = n.
#[test]
fn long_rows_on_every_path() {
    let Some((gpu, topk)) = gpu() else { return };
    let mut rng = Rng(99);
    let t = TILE as usize;
    let cases: [(usize, usize, usize); 9] = [
        (3, t, t / 2),
        (2, t + 1, 1),
        (2, 3 * t + 5, t / 2),
        (1, 70_000, 100),
        (2, 3 * t + 5, t / 2 + 1),
        (1, 2 * t, 2 * t),
        (1, 5000, 5000),
        (2, 9000, 3000),
        (1, 40_000, 1),
    ];
    for (rows, n, k) in cases {
        for direction in [Direction::Decreasing, Direction::Increasing] {
            check::<f32, u32>(topk, gpu, &mut rng, &[rows, n], 1, k, direction, false);
            check::<f64, i64>(topk, gpu, &mut rng, &[n, rows], 0, k, direction, true);
        }
    }
    check::<u8, u64>(topk, gpu, &mut rng, &[3, 6000], 1, 700, Direction::Increasing, true);
    check::<f16, i32>(topk, gpu, &mut rng, &[6000, 2], 0, 20, Direction::Decreasing, true);
}

/// All ties, all NaNs (of every sign and payload), signed zeros, integer extremes.
#[test]
fn adversarial_rows() {
    let Some((gpu, topk)) = gpu() else { return };
    let nans: Vec<f32> = (0..3000u32)
        .map(|i| f32::from_bits(if i % 2 == 0 { 0x7F80_0001 + i } else { 0xFFC0_0000 | i }))
        .collect();
    let zeros: Vec<f32> = (0..3000).map(|i| if i % 3 == 0 { -0.0 } else { 0.0 }).collect();
    let ints: Vec<i64> = (0..3000).map(|i| [i64::MIN, i64::MAX, 0, -1][i % 4]).collect();
    let ties: Vec<u16> = vec![7; 3000];
    for n in [5, 1024, 1025, 3000] {
        for k in [0, 1, n / 2, n] {
            for direction in [Direction::Decreasing, Direction::Increasing] {
                compare(topk, gpu, &nans[..n], k, direction);
                compare(topk, gpu, &zeros[..n], k, direction);
                compare(topk, gpu, &ints[..n], k, direction);
                compare(topk, gpu, &ties[..n], k, direction);
            }
        }
    }
    // Each value four times, shuffled: the K-th value's copies all taken (K a multiple of 4, phase 1
    // skipped) or only some of them (phase 1 finds the last position taken).
    let quads: Vec<i32> = (0..3000).map(|i| ((i * 7919) % 3000) / 4 - 300).collect();
    for k in [1, 4, 400, 401, 402, 403, 1100, 1101] {
        for direction in [Direction::Decreasing, Direction::Increasing] {
            compare(topk, gpu, &quads, k, direction);
        }
    }
}

/// The threshold filter (n > TILE, K <= TILE): candidates sorted whole, an exact select among more
/// than TILE of them (many ties in the K-th's bucket), and a list overflowing into a select over the
/// whole row (equal and skewed data); 8, 32 and 64-bit keys.
#[test]
fn threshold_filter_paths() {
    let Some((gpu, topk)) = gpu() else { return };
    let equal = vec![1.5f32; 70_000];
    let few: Vec<f32> = (0..20_000).map(|i| ((i * 7919) % 7) as f32).collect();
    let skewed: Vec<f64> = (0..70_000)
        .map(|i| {
            if i % 1000 == 0 {
                i as f64
            } else {
                0.25 + (i % 3) as f64 * 1e-9
            }
        })
        .collect();
    let bytes: Vec<u8> = (0..50_000).map(|i| (i % 5) as u8 * 50).collect();
    for k in [1, 10, 100, 1024] {
        for direction in [Direction::Decreasing, Direction::Increasing] {
            compare(topk, gpu, &equal, k, direction);
            compare(topk, gpu, &few, k, direction);
            compare(topk, gpu, &skewed, k, direction);
            compare(topk, gpu, &bytes, k, direction);
        }
    }
    let mut rng = Rng(5);
    check::<f32, u32>(topk, gpu, &mut rng, &[3, 40_000], 1, 300, Direction::Decreasing, true);
    check::<i8, i64>(topk, gpu, &mut rng, &[9000, 2], 0, 1000, Direction::Increasing, true);
}

/// Short rows with small K (`short_select`): candidates ranked by counting, with ties among them, and
/// the whole-row sort when more than its 128 candidates share the K-th's top 8 bits.
#[test]
fn short_rows_small_k() {
    let Some((gpu, topk)) = gpu() else { return };
    let thirds: Vec<f32> = (0..300).map(|i| (i % 3) as f32).collect();
    let halves: Vec<i16> = (0..300).map(|i| (i % 2) as i16 * 300).collect();
    let close: Vec<u64> = (0..1000).map(|i| (7u64 << 56) + (i * 7919 % 1000)).collect();
    for k in [1, 5, 64] {
        for direction in [Direction::Decreasing, Direction::Increasing] {
            compare(topk, gpu, &thirds, k, direction);
            compare(topk, gpu, &halves, k, direction);
            compare(topk, gpu, &close, k, direction);
        }
    }
    let mut rng = Rng(11);
    check::<f64, u32>(topk, gpu, &mut rng, &[50, 700], 1, 20, Direction::Decreasing, true);
    check::<u8, i32>(topk, gpu, &mut rng, &[1024, 30], 0, 64, Direction::Increasing, true);
    check::<bf16, u64>(topk, gpu, &mut rng, &[3, 7, 9], 2, 3, Direction::Decreasing, true);
}

/// Calls recorded again and again over the same buffers (cached bind groups, the shared workspace),
/// alternating the threshold filter, the radix select and short rows, with new input each time: each
/// call must find the counters as the previous one left them, zero.
#[test]
fn repeated_calls_reuse_the_workspace() {
    let Some((gpu, topk)) = gpu() else { return };
    use wgpu::util::DeviceExt;
    let n = 5000usize;
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let input = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: (n * 4) as u64,
        usage: storage,
        mapped_at_creation: false,
    });
    let out = |_| {
        gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &vec![0u8; 2000 * 4],
            usage: storage,
        })
    };
    let (values, indices) = (out(0), out(1));
    let read = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 2 * 2000 * 4,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut rng = Rng(21);
    for round in 0..12 {
        let row: Vec<f32> = values_of(&mut rng, n, round);
        let (k, rows_n) = match round % 4 {
            0 => (10, n),
            1 => (2000, n),
            2 => (7, 300),
            _ => (1024, n),
        };
        let row = &row[..rows_n];
        gpu.queue.write_buffer(&input, 0, bytemuck::cast_slice(row));
        let layout = |tensor, len, elements| topk_kernels::Layout::contiguous(tensor, [len], elements).unwrap();
        let request = Request::new(
            DataType::F32,
            IndexType::U32,
            &layout(topk_kernels::Operand::Input, rows_n, n),
            0,
            k,
            Direction::Decreasing,
            &layout(topk_kernels::Operand::Values, k, 2000),
            &layout(topk_kernels::Operand::Indices, k, 2000),
        )
        .unwrap();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        topk.record(&gpu.device, &mut encoder, &request, &input, &values, &indices)
            .unwrap();
        encoder.copy_buffer_to_buffer(&values, 0, &read, 0, 2000 * 4);
        encoder.copy_buffer_to_buffer(&indices, 0, &read, 2000 * 4, 2000 * 4);
        gpu.queue.submit([encoder.finish()]);
        let (sender, receiver) = std::sync::mpsc::channel();
        read.map_async(wgpu::MapMode::Read, .., move |r| sender.send(r).unwrap());
        gpu.device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        receiver.recv().unwrap().unwrap();
        let bytes = read.get_mapped_range(..).unwrap().to_vec();
        read.unmap();
        let (mut cv, mut ci) = (vec![0f32; k], vec![0u32; k]);
        topk_kernels::naive::topk(topk_kernels::Request {
            input: View::contiguous(row, [rows_n]).unwrap(),
            axis: 0,
            k,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut cv, [k]).unwrap(),
            indices: ViewMut::contiguous(&mut ci, [k]).unwrap(),
        })
        .unwrap();
        assert_eq!(bytemuck::cast_slice::<f32, u8>(&cv), &bytes[..k * 4], "round {round}");
        assert_eq!(
            bytemuck::cast_slice::<u32, u8>(&ci),
            &bytes[2000 * 4..2000 * 4 + k * 4],
            "round {round}"
        );
    }
}

/// Random bits, or every third round few distinct values (ties across the K-th).
fn values_of(rng: &mut Rng, n: usize, round: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            if round % 3 == 2 {
                (rng.below(5) as f32) * 0.5
            } else {
                f32::from_bits(rng.next() as u32)
            }
        })
        .collect()
}

/// Where the threshold filter's 2052 counters a row do not fit a binding (many rows of a short type),
/// long rows with K <= TILE take the radix select and its one-tile sort; calls alternate with the
/// filter on the same `TopKGpu`, each finding the counters zero.
#[test]
fn radix_select_when_filter_counters_do_not_fit() {
    let Some((gpu, _)) = gpu() else { return };
    let mut topk = TopKGpu::new(&gpu.device).unwrap();
    topk.limit_binding_for_tests(4 << 20);
    let layout =
        |tensor, sizes: [usize; 2]| topk_kernels::Layout::contiguous(tensor, sizes, sizes[0] * sizes[1]).unwrap();
    let request = |rows| {
        Request::new(
            DataType::U8,
            IndexType::U32,
            &layout(topk_kernels::Operand::Input, [rows, 1100]),
            1,
            100,
            Direction::Decreasing,
            &layout(topk_kernels::Operand::Values, [rows, 100]),
            &layout(topk_kernels::Operand::Indices, [rows, 100]),
        )
        .unwrap()
    };
    // Radix select: 1 key digit and 2 position digits, compaction, one tile; the filter: 4.
    assert_eq!(topk.plan_stats(&request(600)).unwrap().dispatches, 8);
    assert_eq!(topk.plan_stats(&request(20)).unwrap().dispatches, 4);
    let mut rng = Rng(31);
    for round in 0..3 {
        // 600 rows: 4.9 MB of filter counters, over the limit: radix select.
        check::<u8, u32>(&topk, gpu, &mut rng, &[600, 1100], 1, 100, Direction::Decreasing, false);
        let k = 1 + round * 100;
        check::<i16, i64>(&topk, gpu, &mut rng, &[1500, 600], 0, k, Direction::Increasing, false);
        // 20 rows: the filter.
        check::<f32, u32>(&topk, gpu, &mut rng, &[20, 3000], 1, 10, Direction::Decreasing, true);
    }
}

fn compare<T: Element + Pod>(topk: &TopKGpu, gpu: &Gpu, row: &[T], k: usize, direction: Direction) {
    let (mut cv, mut ci) = (vec![row[0]; k], vec![0u32; k]);
    let (mut gv, mut gi) = (cv.clone(), vec![u32::MAX; k]);
    topk_kernels::naive::topk(topk_kernels::Request {
        input: View::contiguous(row, [row.len()]).unwrap(),
        axis: 0,
        k,
        direction,
        values: ViewMut::contiguous(&mut cv, [k]).unwrap(),
        indices: ViewMut::contiguous(&mut ci, [k]).unwrap(),
    })
    .unwrap();
    topk.run_host(
        &gpu.device,
        &gpu.queue,
        View::contiguous(row, [row.len()]).unwrap(),
        0,
        k,
        direction,
        HostViewMut::contiguous(&mut gv, [k]).unwrap(),
        HostViewMut::contiguous(&mut gi, [k]).unwrap(),
    )
    .unwrap();
    assert_eq!(ci, gi, "{} n {} k {k} {direction:?}", T::NAME, row.len());
    assert_eq!(bytemuck::cast_slice::<T, u8>(&cv), bytemuck::cast_slice::<T, u8>(&gv));
}

/// docs/CONTRACT.md §7, exactly.
#[test]
fn directml_examples() {
    let Some((gpu, topk)) = gpu() else { return };
    let run = |x: &[f32; 12], axis: usize, k: usize, direction: Direction| {
        let mut out_sizes = [1, 1, 3, 4];
        out_sizes[axis] = k;
        let count = out_sizes.iter().product();
        let (mut v, mut i) = (vec![0f32; count], vec![0u32; count]);
        topk.run_host(
            &gpu.device,
            &gpu.queue,
            View::contiguous(x, [1, 1, 3, 4]).unwrap(),
            axis,
            k,
            direction,
            HostViewMut::contiguous(&mut v, out_sizes).unwrap(),
            HostViewMut::contiguous(&mut i, out_sizes).unwrap(),
        )
        .unwrap();
        (v, i)
    };
    let a = [0., 1., 10., 11., 3., 2., 9., 8., 4., 5., 6., 7.];
    let b = [1., 2., 2., 3., 3., 4., 5., 5., 6., 6., 6., 6.];
    let d = Direction::Decreasing;
    assert_eq!(
        run(&a, 3, 2, d),
        (vec![11., 10., 9., 8., 7., 6.], vec![3, 2, 2, 3, 3, 2])
    );
    assert_eq!(
        run(&a, 2, 2, d),
        (vec![4., 5., 10., 11., 3., 2., 9., 8.], vec![2, 2, 0, 0, 1, 1, 1, 1])
    );
    assert_eq!(
        run(&b, 3, 3, d),
        (
            vec![3., 2., 2., 5., 5., 4., 6., 6., 6.],
            vec![3, 1, 2, 2, 3, 1, 0, 1, 2]
        )
    );
    assert_eq!(
        run(&b, 3, 3, Direction::Increasing),
        (
            vec![1., 2., 2., 3., 4., 5., 6., 6., 6.],
            vec![0, 1, 2, 0, 1, 2, 0, 1, 2]
        )
    );
}

/// Bad requests give the CPU crate's errors, and leave the outputs untouched; needs no GPU.
#[test]
fn errors_match_the_cpu_crate() {
    use topk_kernels::{Layout, Operand, TopK};
    let x = [1u8; 12];
    let input = Layout::contiguous(Operand::Input, [3, 4], 12).unwrap();
    let out = |sizes| Layout::contiguous(Operand::Output, sizes, 100).unwrap();
    let cases: [(usize, usize, [usize; 2], [usize; 2]); 5] = [
        (2, 1, [3, 1], [3, 1]),
        (1, 5, [3, 5], [3, 5]),
        (1, 2, [3, 3], [3, 2]),
        (1, 2, [3, 2], [2, 2]),
        (0, 2, [2, 4], [2, 4]),
    ];
    for (axis, k, values, indices) in cases {
        let gpu = Request::new(
            DataType::U8,
            IndexType::U32,
            &input,
            axis,
            k,
            Direction::Decreasing,
            &out(values),
            &out(indices),
        );
        let (mut v, mut i) = ([0u8; 100], [0u32; 100]);
        let cpu = TopK::new(topk_kernels::Request {
            input: View::contiguous(&x, [3, 4]).unwrap(),
            axis: axis as isize,
            k,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut v, values).unwrap(),
            indices: ViewMut::contiguous(&mut i, indices).unwrap(),
        })
        .map(|_| ());
        match (gpu, cpu) {
            (Err(GpuError::Request(g)), Err(c)) => assert_eq!(g, c),
            (Ok(_), Ok(())) => {}
            other => panic!("axis {axis} k {k}: {other:?}"),
        }
    }
    // An index type too narrow: the CPU crate's IndexType error.
    let long = Layout::contiguous(Operand::Input, [(1usize << 31) + 1], usize::MAX).unwrap();
    let out = Layout::contiguous(Operand::Output, [1], 1).unwrap();
    let e = Request::new(
        DataType::U8,
        IndexType::I32,
        &long,
        0,
        1,
        Direction::Increasing,
        &out,
        &out,
    );
    assert!(
        matches!(e, Err(GpuError::Request(topk_kernels::Error::IndexType { .. }))),
        "{e:?}"
    );
    // Aliasing output.
    let aliased = Layout::new(Operand::Output, [3, 1], [0, 1], 0, 4).unwrap();
    let e = Request::new(
        DataType::U8,
        IndexType::U32,
        &input,
        1,
        1,
        Direction::Increasing,
        &aliased,
        &aliased,
    );
    assert!(
        matches!(e, Err(GpuError::Request(topk_kernels::Error::Aliasing { .. }))),
        "{e:?}"
    );
}

/// Nothing is written when a request fails on the GPU side, and a buffer that is too small is an error.
#[test]
fn gpu_errors_write_nothing() {
    let Some((gpu, topk)) = gpu() else { return };
    let x = [3u16, 1, 2];
    let (mut v, mut i) = ([9u16; 4], [9u32; 4]);
    let e = topk.run_host(
        &gpu.device,
        &gpu.queue,
        View::contiguous(&x, [3]).unwrap(),
        0,
        4,
        Direction::Increasing,
        HostViewMut::contiguous(&mut v, [4]).unwrap(),
        HostViewMut::contiguous(&mut i, [4]).unwrap(),
    );
    assert!(
        matches!(
            e,
            Err(GpuError::Request(topk_kernels::Error::K { k: 4, len: 3, axis: 0 }))
        ),
        "{e:?}"
    );
    assert_eq!((v, i), ([9; 4], [9; 4]));
    // record() checks the caller's buffers against the request.
    let request = Request::new(
        DataType::U32,
        IndexType::U32,
        &topk_kernels::Layout::contiguous(topk_kernels::Operand::Input, [64], 64).unwrap(),
        0,
        2,
        Direction::Increasing,
        &topk_kernels::Layout::contiguous(topk_kernels::Operand::Output, [2], 2).unwrap(),
        &topk_kernels::Layout::contiguous(topk_kernels::Operand::Output, [2], 2).unwrap(),
    )
    .unwrap();
    let buffer = |size| {
        gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (small, out_v, out_i) = (buffer(32), buffer(8), buffer(8));
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let e = topk.record(&gpu.device, &mut encoder, &request, &small, &out_v, &out_i);
    assert!(
        matches!(
            e,
            Err(GpuError::Request(topk_kernels::Error::OutOfBounds { len: 8, .. }))
        ),
        "{e:?}"
    );
    let e = topk.record(&gpu.device, &mut encoder, &request, &out_v, &out_v, &out_i);
    assert!(matches!(e, Err(GpuError::Buffer { .. })), "{e:?}");
}

/// The `WORKGROUP` override at both ends of its range gives the same results; bad sizes are errors.
#[test]
fn other_workgroup_sizes() {
    let Some((gpu, _)) = gpu() else { return };
    let mut rng = Rng(7);
    for workgroup in [32, 512] {
        let topk = TopKGpu::with_workgroup_size(&gpu.device, workgroup).unwrap();
        let cases = [
            (5, 37, 5),
            (3, 1000, 1000),
            (2, 5000, 300),
            (1, 3000, 2000),
            (70, 31, 4),
            (100, 1, 1),
            (33, 32, 32),
            (600, 3, 2),
        ];
        for (rows, n, k) in cases {
            check::<i16, u32>(&topk, gpu, &mut rng, &[rows, n], 1, k, Direction::Increasing, true);
            check::<f32, i64>(&topk, gpu, &mut rng, &[n, rows], 0, k, Direction::Decreasing, true);
        }
    }
    for bad in [0, 48, 16, 1024] {
        assert!(matches!(
            TopKGpu::with_workgroup_size(&gpu.device, bad),
            Err(GpuError::Limits { .. })
        ));
    }
}
