//! The stack one call uses is bounded (lib.rs "Memory"), whatever the sizes, K or data: nothing
//! recurses but `core`'s sort and selection, whose depth is logarithmic in the (at most 2K) candidates,
//! and `topk_on_stack::<K_MAX, ..>` adds a fixed `32 · K_MAX` bytes.
//!
//! Two checks on a small call and on the heaviest ones we have (64-bit values and indices, rank 8,
//! `K_MAX = 64`, strided sequences, a full sort of 1000 elements):
//! - `one_call_fits_in_the_bound`: each call succeeds on a thread whose whole stack is [`bound`];
//! - `measured_stack_is_reported`: the smallest thread stack (in 4 KiB pages) each call succeeds on,
//!   found by running this test binary as a child on smaller and smaller stacks (a stack overflow aborts
//!   the child, not us). It prints the numbers (`--nocapture`) and checks them against [`bound`].
//!
//! The bounds ([`bound`]), and why there are three:
//! - optimised builds, 16 KiB: every call fits the smallest thread glibc makes (a smaller request is
//!   raised to `PTHREAD_STACK_MIN`, 16 KiB), the finest bound this method can check. Large fixed buffers
//!   (the tile of short rows, 4 KiB for 64-bit types) stay out of line so that they are not in every
//!   call's frame;
//! - optimised builds where the dispatch picks AVX-512, 32 KiB: its engine's and its sort's frames are
//!   larger (`emulated/run.py` measures the deepest of its cases on an emulated CPU);
//! - debug builds, 512 KiB: an unoptimised build keeps every SIMD temporary in a stack slot of its own,
//!   so the kernels that would inline into one frame (the block scan's copies, `first_best`,
//!   `pad_block`, the pieces' bound, the networks' K-th smallest, each kind of key's filter) stay out of
//!   line in debug builds. The dev profile builds this crate at opt-level 1, but a dependent's debug
//!   build is unoptimised, so the bound is kept for it.
//!
//! The measured figures are printed by `measured_stack_is_reported` (`--nocapture`); `./ci.sh` runs this
//! test in debug and in release builds.

use std::process::Command;

use topk_kernels::{
    Accumulator, Backend, Direction, Request, Slot, TopK, View, ViewMut, bf16, min_scratch_len, naive, topk,
    topk_on_stack,
};

/// The stated bound on one call, including `topk_on_stack::<64, ..>`'s 2 KiB buffer and the thread's own
/// start-up frames: 16 KiB optimised (measured on AVX2: fits glibc's 16 KiB minimum thread), 32 KiB
/// optimised where the dispatch picks AVX-512, 512 KiB in a debug build (see above).
fn bound() -> usize {
    if cfg!(debug_assertions) {
        512 * 1024
    } else if Backend::Auto.resolve() == Backend::Avx512 {
        32 * 1024
    } else {
        16 * 1024
    }
}
const PAGE: usize = 4096;
/// glibc's `PTHREAD_STACK_MIN` on x86_64: the least stack a thread gets, whatever it asks for.
const MIN_THREAD_KIB: usize = 16;
/// Set in the child: the stack size to probe.
const PROBE: &str = "TOPK_STACK_PROBE";
/// Set in the child: which of `CALLS` to run.
const PROBE_CALL: &str = "TOPK_STACK_CALL";

/// Deterministic data with many distinct values, so that ascending runs keep the filter busy.
fn data(n: usize) -> Vec<u64> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if i % 3 == 0 { i as u64 } else { state }
        })
        .collect()
}

const N: usize = 1000;
const K: usize = 64;

/// f64 with i64 indices, rank 8, on the stack; returns a checksum so nothing is optimised away.
fn f64_rank8_on_stack() -> u64 {
    let raw = data(N * 2);
    // f64 with i64 indices, rank 8 (six leading 1s and a 2 x N matrix), on the stack.
    let x: Vec<f64> = raw.iter().map(|&b| f64::from_bits(b)).collect();
    let sizes = [1, 1, 1, 1, 1, 1, 2, N];
    let out = [1, 1, 1, 1, 1, 1, 2, K];
    let (mut v, mut i) = (vec![0.0f64; 2 * K], vec![0i64; 2 * K]);
    topk_on_stack::<K, _, _, 8>(Request {
        input: View::contiguous(&x, sizes).unwrap(),
        axis: 7,
        k: K,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut v, out).unwrap(),
        indices: ViewMut::contiguous(&mut i, out).unwrap(),
    })
    .unwrap();
    i.iter().map(|&p| p as u64).sum::<u64>()
}

/// u64 along the first axis of a transposed view (strided sequences), Increasing, on the stack.
fn u64_strided_on_stack() -> u64 {
    let raw = data(N * 2);
    let (mut v, mut i) = (vec![0u64; 2 * K], vec![0u64; 2 * K]);
    topk_on_stack::<K, _, _, 2>(Request {
        input: View::new(&raw, [N, 2], [2, 1], 0).unwrap(),
        axis: 0,
        k: K,
        direction: Direction::Increasing,
        values: ViewMut::contiguous(&mut v, [K, 2]).unwrap(),
        indices: ViewMut::contiguous(&mut i, [K, 2]).unwrap(),
    })
    .unwrap();
    i.iter().sum::<u64>()
}

/// f64 along a non-last axis with K = 16: sixteen sequences side by side, each lane's best K sorted on the
/// stack (16 pools of 16 two-word entries: the engines' largest stack buffer).
fn f64_side_by_side() -> u64 {
    const LANES: usize = 16;
    let raw = data(N * LANES);
    let x: Vec<f64> = raw.iter().map(|&b| f64::from_bits(b)).collect();
    let (mut v, mut i) = (vec![0.0f64; 16 * LANES], vec![0u64; 16 * LANES]);
    let mut scratch = vec![0u64; min_scratch_len::<f64>(N, 16)];
    topk(
        Request {
            input: View::contiguous(&x, [N, LANES]).unwrap(),
            axis: 0,
            k: 16,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut v, [16, LANES]).unwrap(),
            indices: ViewMut::contiguous(&mut i, [16, LANES]).unwrap(),
        },
        &mut scratch,
    )
    .unwrap();
    i.iter().sum::<u64>()
}

/// f64 along a non-last axis with K = 64 and the plan's scratch: sixteen sequences side by side, a
/// candidate buffer each in the scratch (the lanes' pools on the stack).
fn f64_side_pools() -> u64 {
    const LANES: usize = 16;
    let raw = data(N * LANES);
    let x: Vec<f64> = raw.iter().map(|&b| f64::from_bits(b)).collect();
    let (mut v, mut i) = (vec![0.0f64; K * LANES], vec![0u64; K * LANES]);
    let mut plan = TopK::new(Request {
        input: View::contiguous(&x, [N, LANES]).unwrap(),
        axis: 0,
        k: K,
        direction: Direction::Increasing,
        values: ViewMut::contiguous(&mut v, [K, LANES]).unwrap(),
        indices: ViewMut::contiguous(&mut i, [K, LANES]).unwrap(),
    })
    .unwrap();
    plan.run(&mut vec![0u64; plan.scratch_len()]).unwrap();
    i.iter().sum::<u64>()
}

/// f64 rows of 32 with K = 16: the rows copied 16 at a time into a 4 KiB tile, then read side by side
/// (the tile and the lanes' pools together).
fn f64_tiny_rows() -> u64 {
    const ROWS: usize = 64;
    let raw = data(32 * ROWS);
    let x: Vec<f64> = raw.iter().map(|&b| f64::from_bits(b)).collect();
    let (mut v, mut i) = (vec![0.0f64; 16 * ROWS], vec![0u64; 16 * ROWS]);
    let mut scratch = vec![0u64; min_scratch_len::<f64>(32, 16)];
    topk(
        Request {
            input: View::contiguous(&x, [ROWS, 32]).unwrap(),
            axis: 1,
            k: 16,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut v, [ROWS, 16]).unwrap(),
            indices: ViewMut::contiguous(&mut i, [ROWS, 16]).unwrap(),
        },
        &mut scratch,
    )
    .unwrap();
    i.iter().sum::<u64>()
}

/// bf16 with caller scratch (a full stable sort: K == n, which the engines count: 4 KiB of counters on the
/// stack), and the naive reference.
fn bf16_full_sort_and_naive() -> u64 {
    let raw = data(N);
    let h: Vec<bf16> = raw[..N].iter().map(|&b| bf16::from_bits(b as u16)).collect();
    let (mut v, mut i) = (vec![bf16::ZERO; N], vec![0u32; N]);
    let mut scratch = vec![0u64; min_scratch_len::<bf16>(N, N)];
    topk(
        Request {
            input: View::contiguous(&h, [N]).unwrap(),
            axis: 0,
            k: N,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut v, [N]).unwrap(),
            indices: ViewMut::contiguous(&mut i, [N]).unwrap(),
        },
        &mut scratch,
    )
    .unwrap();
    let sum = i.iter().map(|&p| p as u64).sum::<u64>();
    let (mut v, mut i) = (vec![bf16::ZERO; 8], vec![0u32; 8]);
    naive::topk(Request {
        input: View::contiguous(&h, [N]).unwrap(),
        axis: 0,
        k: 8,
        direction: Direction::Increasing,
        values: ViewMut::contiguous(&mut v, [8]).unwrap(),
        indices: ViewMut::contiguous(&mut i, [8]).unwrap(),
    })
    .unwrap();
    sum + i.iter().map(|&p| p as u64).sum::<u64>()
}

/// f32 through the sorting network's paths (AVX-512): a full sort of 1000 (blocks of 16 vectors in
/// registers, merged in memory), short rows of 256 with K = 8 (up to 64 entries collected on the stack),
/// and a long row with K = 50 (the guessed cap).
fn f32_network_paths() -> u64 {
    let raw = data(8 * N);
    let x: Vec<f32> = raw.iter().map(|&b| (b >> 40) as f32).collect();
    let mut sum = 0;
    for (shape, k) in [([1, N], N), ([8 * N / 256, 256], 8), ([1, 8 * N], 50)] {
        let n = shape[0] * shape[1];
        let (mut v, mut i) = (vec![0.0f32; shape[0] * k], vec![0u32; shape[0] * k]);
        let mut scratch = vec![0u64; min_scratch_len::<f32>(shape[1], k)];
        topk(
            Request {
                input: View::contiguous(&x[..n], shape).unwrap(),
                axis: 1,
                k,
                direction: Direction::Decreasing,
                values: ViewMut::contiguous(&mut v, [shape[0], k]).unwrap(),
                indices: ViewMut::contiguous(&mut i, [shape[0], k]).unwrap(),
            },
            &mut scratch,
        )
        .unwrap();
        sum += i.iter().map(|&p| u64::from(p)).sum::<u64>();
    }
    sum
}

/// f64 rows of 256 with K = 32 through `topk_on_stack::<64>` (2 KiB): each row selected whole from a
/// 4 KiB buffer of entries on the stack, the SIMD engines' path for short rows with K above 16.
fn f64_whole_rows_on_stack() -> u64 {
    const ROWS: usize = 8;
    const KEPT: usize = 32;
    let raw = data(256 * ROWS);
    let x: Vec<f64> = raw.iter().map(|&b| f64::from_bits(b)).collect();
    let (mut v, mut i) = (vec![0.0f64; KEPT * ROWS], vec![0u64; KEPT * ROWS]);
    topk_on_stack::<K, _, _, 2>(Request {
        input: View::contiguous(&x, [ROWS, 256]).unwrap(),
        axis: 1,
        k: KEPT,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut v, [ROWS, KEPT]).unwrap(),
        indices: ViewMut::contiguous(&mut i, [ROWS, KEPT]).unwrap(),
    })
    .unwrap();
    i.iter().sum::<u64>()
}

/// f64 rows of 1024 with K = 64 through `topk_on_stack::<64>`: the SIMD engines collect what is below
/// the pieces' bound into 6 KiB of stack (4 K wide entries and their positions).
fn f64_collected_rows_on_stack() -> u64 {
    const ROWS: usize = 8;
    const LEN: usize = 1024;
    let raw = data(LEN * ROWS);
    let x: Vec<f64> = raw.iter().map(|&b| f64::from_bits(b)).collect();
    let (mut v, mut i) = (vec![0.0f64; K * ROWS], vec![0u64; K * ROWS]);
    topk_on_stack::<K, _, _, 2>(Request {
        input: View::contiguous(&x, [ROWS, LEN]).unwrap(),
        axis: 1,
        k: K,
        direction: Direction::Increasing,
        values: ViewMut::contiguous(&mut v, [ROWS, K]).unwrap(),
        indices: ViewMut::contiguous(&mut i, [ROWS, K]).unwrap(),
    })
    .unwrap();
    i.iter().sum::<u64>()
}

/// bf16 rows of 1024 with K = 128 through `topk_on_stack::<128>`: the SIMD engines key the row into
/// 2 KiB of u16 on the stack, bisect for the K-th key, collect up to 384 entries into the short rows'
/// 6 KiB of stack and count them into order (2 KiB of counters). The integers' bisection is the same
/// path without the keys.
fn bf16_bisected_rows_on_stack() -> u64 {
    const ROWS: usize = 8;
    const LEN: usize = 1024;
    const K: usize = 128;
    let x: Vec<bf16> = data(LEN * ROWS).iter().map(|&b| bf16::from_bits(b as u16)).collect();
    let (mut v, mut i) = (vec![bf16::ZERO; K * ROWS], vec![0u32; K * ROWS]);
    topk_on_stack::<K, _, _, 2>(Request {
        input: View::contiguous(&x, [ROWS, LEN]).unwrap(),
        axis: 1,
        k: K,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut v, [ROWS, K]).unwrap(),
        indices: ViewMut::contiguous(&mut i, [ROWS, K]).unwrap(),
    })
    .unwrap();
    i.iter().map(|&i| u64::from(i)).sum::<u64>()
}

/// A small call: what every call pays whatever its size.
fn small_call() -> u64 {
    let x = [5u8, 1, 4, 1, 5, 9, 2, 6];
    let (mut v, mut i) = ([0u8; 1], [0u32; 1]);
    let mut scratch = [0u64; 2];
    topk(
        Request {
            input: View::contiguous(&x, [8]).unwrap(),
            axis: 0,
            k: 1,
            direction: Direction::Decreasing,
            values: ViewMut::contiguous(&mut v, [1]).unwrap(),
            indices: ViewMut::contiguous(&mut i, [1]).unwrap(),
        },
        &mut scratch,
    )
    .unwrap();
    u64::from(v[0]) + u64::from(i[0])
}

/// `Accumulator::push` of long chunks (each selected by the engine from 2 KiB of candidates on the
/// stack), u64 values with K = 64: the most its stack buffer takes for 64-bit keys.
fn u64_accumulator_pushes() -> u64 {
    let x = data(4 * N * K);
    let mut slots = vec![Slot::EMPTY; 2 * K];
    let mut acc = Accumulator::new(K, Direction::Increasing, &mut slots).unwrap();
    for chunk in x.chunks(N * K) {
        acc.push(View::contiguous(chunk, [chunk.len()]).unwrap()).unwrap();
    }
    let (mut v, mut i) = (vec![0u64; K], vec![0u64; K]);
    acc.finish(
        ViewMut::contiguous(&mut v, [K]).unwrap(),
        ViewMut::contiguous(&mut i, [K]).unwrap(),
    )
    .unwrap();
    v.iter().chain(&i).fold(0, |sum, &x| sum ^ x) | 1
}

/// The calls measured, by name. Index 0 is an empty thread: the baseline the others add to.
type Call = (&'static str, fn() -> u64);

const CALLS: [Call; 13] = [
    ("empty thread", || 0),
    ("u8 n = 8, K = 1, topk", small_call),
    ("f64/i64 rank 8, topk_on_stack::<64>", f64_rank8_on_stack),
    ("u64 strided, topk_on_stack::<64>", u64_strided_on_stack),
    ("f64 rows of 256, K = 32, topk_on_stack::<64>", f64_whole_rows_on_stack),
    (
        "f64 rows of 1024, K = 64, topk_on_stack::<64>",
        f64_collected_rows_on_stack,
    ),
    ("f64 non-last axis, 16 side by side, K = 16", f64_side_by_side),
    ("f64 non-last axis, 16 side by side, K = 64", f64_side_pools),
    ("f64 rows of 32, K = 16 (the tile)", f64_tiny_rows),
    ("bf16 full sort (K = n = 1000) + naive", bf16_full_sort_and_naive),
    (
        "f32 full sort, short rows, a long row (the network's paths)",
        f32_network_paths,
    ),
    ("u64 Accumulator::push of long chunks, K = 64", u64_accumulator_pushes),
    (
        "bf16 rows of 1024, K = 128, topk_on_stack::<128> (keyed, bisected)",
        bf16_bisected_rows_on_stack,
    ),
];

fn on_thread(stack: usize, f: fn() -> u64) -> u64 {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(f)
        .expect("spawn a thread")
        .join()
        .expect("the calls succeed")
}

#[test]
#[cfg_attr(miri, ignore)] // threads with explicit stacks and child processes: not for miri
fn one_call_fits_in_the_bound() {
    for (name, call) in &CALLS[1..] {
        let on_big_stack = on_thread(8 << 20, *call);
        assert_eq!(on_thread(bound(), *call), on_big_stack, "{name}");
        assert!(on_big_stack > 0, "{name}");
    }
}

/// Runs in the child only (it passes trivially in the parent): call `$PROBE_CALL` on a stack of
/// `$PROBE` bytes.
#[test]
fn stack_probe() {
    if let (Ok(bytes), Ok(call)) = (std::env::var(PROBE), std::env::var(PROBE_CALL)) {
        let bytes: usize = bytes.parse().expect("a byte count");
        let call: usize = call.parse().expect("a call number");
        on_thread(bytes, CALLS[call].1);
    }
}

/// Whether call `call` succeeds on a thread of `bytes` (in a child process: an overflow aborts it), or
/// `None` when this binary cannot run itself (a cross build run through a runner such as qemu-user).
fn fits(bytes: usize, call: usize) -> Option<bool> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new(exe)
        .args(["--exact", "stack_probe", "--test-threads=1", "--quiet"])
        .env(PROBE, bytes.to_string())
        .env(PROBE_CALL, call.to_string())
        .output()
        .ok()?;
    Some(out.status.success())
}

/// Smallest page count in `1..=max` whose stack fits call `call`, by bisection (fitting is monotone).
fn smallest_fitting(max: usize, call: usize) -> Result<usize, &'static str> {
    match fits(max * PAGE, call) {
        None => return Err("cannot run the test binary as a child"),
        Some(false) => return Err("overflows the bound"),
        Some(true) => {}
    }
    let (mut low, mut high) = (0, max); // low does not fit (or is 0), high fits
    while high - low > 1 {
        let mid = (low + high) / 2;
        if fits(mid * PAGE, call) == Some(true) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Ok(high)
}

#[test]
#[cfg_attr(miri, ignore)]
fn measured_stack_is_reported() {
    let build = if cfg!(debug_assertions) { "debug" } else { "release" };
    if fits(8 << 20, 0) != Some(true) {
        // A cross build under a runner (qemu-user) may not start itself as a child (no binfmt, or no
        // sysroot for it). `one_call_fits_in_the_bound` still checks the bound in-process.
        eprintln!("stack: not measured (this binary cannot run itself as a child here)");
        return;
    }
    let mut baseline = 0;
    for (call, (name, _)) in CALLS.iter().enumerate() {
        let pages =
            smallest_fitting(bound() / PAGE, call).unwrap_or_else(|e| panic!("{name}: {e} ({} bytes)", bound()));
        if call == 0 {
            baseline = pages;
        }
        let kib = pages * PAGE / 1024;
        if kib < MIN_THREAD_KIB {
            // Smaller requests are raised to the minimum: fitting one says only that much.
            eprintln!("stack ({build}): {name}: fits the smallest thread ({MIN_THREAD_KIB} KiB)");
        } else {
            eprintln!("stack ({build}): {name}: fits a {kib} KiB thread");
        }
        assert!(pages >= baseline);
    }
}
