#!/usr/bin/env python3
"""A sweep of the whole request space (issue 65): requests drawn at random, or a named fixed set, timed
with `topk bench` beside ONNX Runtime and NumPy (optionally tract) in one run, one thread each.

Usage (the peers' venv; matplotlib there for the picture: /tmp/peers/bin/pip install matplotlib):
  /tmp/peers/bin/python benches/sweep.py BIN [--seed 1] [--count 60]            # a random draw
  /tmp/peers/bin/python benches/sweep.py BIN --set short|narrow|k1|sorted|wide64|ten|all   # issue 65's regions
  /tmp/peers/bin/python benches/sweep.py BIN --set nonlast|argmax|tiny|moe|medium|bytes|halves  # the strategy's
  /tmp/peers/bin/python benches/sweep.py BIN --requests "f32 426x4808 0 13 dec uniform; i32 374x56x13x2 1 3"
  /tmp/peers/bin/python benches/sweep.py BIN --seed 1 --count 60 --only 7,31    # rerun some of a draw
  /tmp/peers/bin/python benches/sweep.py BIN --seed 1 --count 60 --list         # print the draw, time nothing
  /tmp/peers/bin/python benches/sweep.py BIN --replot target/sweep/sweep-short.csv [more.csv] --name all
  e.g. BIN = target/release/topk (from `cargo build --release -p topk-cli`); a quoted command works too.
Options: --cap-mib 64 (largest input), --min-kib 64 (four in five draws at least that), --rounds 3,
--budget 0.25 (seconds of timed calls per round and timer), --max-reps 101, --peers
numpy,onnxruntime[,tract], --backend auto, --out target/sweep, --peers-dir ../shared/bench.

A request is written `DTYPE SHAPE AXIS K [dec|inc] [DATA]`, the shape outermost first ("f32 11399x45x2
2 2 dec uniform"). The random draw (seeded, the same on any machine; request i does not depend on
--count): rank 1-4 (one in twelve 5-8), the axis anywhere, the inner extent (elements between
neighbouring sequences: 1 on a last axis, 2-30, or larger, or 1 through trailing dimensions of 1), n
log-uniform from 2 to millions, the number of sequences log-uniform from 1 (or, four times in five, from
what makes the input --min-kib) to what the cap leaves, K
log-uniform from 1 to n with K = 1, n, n/2 and near n over-represented, all 12 dtypes, both directions,
the 6 data patterns of `topk bench --data`.

Timing: each request runs in --rounds rounds; a round is one `topk bench --json` process (its median of
--reps, and its floor `floor_s`, a plain read of the same input) followed by each peer's median
(`peers.bench`) on the same pattern of data, generated here as `topk bench` generates it. The ratio is
the median over rounds of (fastest peer's time / project's time): above 1 the project is faster. Peers
that cannot run a dtype are found by a probe at start and skipped (ONNX Runtime lacks u16 u32 u64 bf16;
NumPy runs bf16 through ml_dtypes).

Writes OUT/sweep-NAME.csv (every field), OUT/sweep-NAME.md (worst first) and OUT/sweep-NAME.png, and
prints a summary line: geometric mean, worst case, counts under 3x and 2x, requests over 3 ns per
element (and of those, where the fastest peer is under 3 ns per element), K = 1 requests over 64 KiB
beyond 1.5x the read floor; then issue 65's targets, met or not.
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS",
           "NUMEXPR_NUM_THREADS", "ORT_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse, csv, json, math, random, shlex, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# `topk bench --dtype` name: (NumPy dtype name, ONNX TensorProto type)
DTYPES = {
    "f32": ("float32", 1), "f64": ("float64", 11), "f16": ("float16", 10), "bf16": ("bfloat16", 16),
    "i8": ("int8", 3), "i16": ("int16", 5), "i32": ("int32", 6), "i64": ("int64", 7),
    "u8": ("uint8", 2), "u16": ("uint16", 4), "u32": ("uint32", 12), "u64": ("uint64", 13),
}
DATA = ["uniform", "normal", "ascending", "descending", "equal", "nan-mix"]
PEER_NAMES = {"numpy": "NumPy", "onnxruntime": "ONNX Runtime", "tract": "tract"}


def np_dtype(dtype):
    name = DTYPES[dtype][0]
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def itemsize(dtype):
    return {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
            "u8": 1, "u16": 2, "u32": 4, "u64": 8}[dtype]


# ---------------------------------------------------------------------------------------------------
# Requests

class Request:
    def __init__(self, dtype, shape, axis, k, largest=True, data="uniform"):
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {dtype}")
        if data not in DATA:
            raise ValueError(f"unknown data pattern {data}")
        shape = tuple(int(s) for s in shape)
        if not 1 <= len(shape) <= 8 or min(shape) < 1:
            raise ValueError(f"bad shape {shape}")
        if axis < 0:
            axis += len(shape)
        if not 0 <= axis < len(shape) or not 1 <= k <= shape[axis]:
            raise ValueError(f"bad axis {axis} or K {k} for {shape}")
        self.dtype, self.shape, self.axis, self.k, self.largest, self.data = dtype, shape, axis, k, largest, data

    @property
    def n(self):
        return self.shape[self.axis]

    @property
    def inner(self):
        return math.prod(self.shape[self.axis + 1:])

    @property
    def elements(self):
        return math.prod(self.shape)

    @property
    def sequences(self):
        return self.elements // self.n

    @property
    def nbytes(self):
        return self.elements * itemsize(self.dtype)

    def __str__(self):
        return (f"{self.dtype} {'x'.join(map(str, self.shape))} {self.axis} {self.k} "
                f"{'dec' if self.largest else 'inc'} {self.data}")

    def cli_args(self):
        return ["bench", "--shape", ",".join(map(str, self.shape)), "--dtype", self.dtype,
                "--axis", str(self.axis), "--k", str(self.k),
                "--direction", "decreasing" if self.largest else "increasing", "--data", self.data]


def parse_request(text):
    """`DTYPE SHAPE AXIS K [dec|inc] [DATA]`; K may be `n`, `n/2`, `n-1`, `n/3`..."""
    parts = text.split()
    if len(parts) < 4:
        raise ValueError(f"request {text!r}: want DTYPE SHAPE AXIS K [dec|inc] [DATA]")
    dtype, shape, axis = parts[0], [int(s) for s in parts[1].replace(",", "x").split("x")], int(parts[2])
    n = shape[axis]
    kt = parts[3]  # "13", "n", "n/2", "n-3"
    if kt == "n":
        k = n
    elif kt.startswith("n/"):
        k = n // int(kt[2:])
    elif kt.startswith("n-"):
        k = n - int(kt[2:])
    else:
        k = int(kt)
    largest = True
    data = "uniform"
    for p in parts[4:]:
        if p in ("dec", "decreasing", "largest"):
            largest = True
        elif p in ("inc", "increasing", "smallest"):
            largest = False
        else:
            data = p
    return Request(dtype, shape, axis, max(1, k), largest, data)


def log_uniform(rng, lo, hi):
    """An integer log-uniform in [lo, hi]."""
    lo, hi = max(1, lo), max(1, hi)
    if hi <= lo:
        return lo
    return min(hi, max(lo, int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 0.999)) - 0.499)))))


def split(rng, total, parts):
    """`parts` sizes (>= 1) whose product is near `total`, in random proportions."""
    if parts == 0:
        return []
    if parts == 1:
        return [max(1, total)]
    w = [rng.random() + 0.05 for _ in range(parts)]
    s = sum(w)
    sizes = [max(1, int(round(total ** (x / s)))) for x in w]
    # Move the rounding error onto the largest part.
    big = max(range(parts), key=lambda i: sizes[i])
    rest = math.prod(sizes) // sizes[big]
    sizes[big] = max(1, int(round(total / rest)))
    return sizes


DTYPE_WEIGHTS = {"f32": 3, "f16": 1.5, "bf16": 1.5, "f64": 1.5, "i32": 1.5, "i8": 1, "i16": 1, "i64": 1,
                 "u8": 1, "u16": 1, "u32": 1, "u64": 1}
DATA_WEIGHTS = {"uniform": 3, "normal": 2, "ascending": 1.5, "descending": 1.5, "equal": 1, "nan-mix": 1.5}
MAX_N = 1 << 22  # 4M


def draw(rng, cap_bytes, min_bytes):
    """One request over the whole space (see the module's docstring)."""
    dtype = rng.choices(list(DTYPE_WEIGHTS), list(DTYPE_WEIGHTS.values()))[0]
    size = itemsize(dtype)
    cap = max(2, cap_bytes // size)  # elements
    rank = rng.randint(5, 8) if rng.random() < 1 / 12 else rng.choices([1, 2, 3, 4], [2, 4, 3, 3])[0]
    axis = rng.randrange(rank)
    n = log_uniform(rng, 2, min(MAX_N, cap))
    room = max(1, cap // n)  # sequences the cap leaves
    after, before = rank - 1 - axis, axis
    # The number of sequences, log-uniform in what the cap leaves, whatever the axis; then how many of
    # them lie side by side (the inner extent) and how many one after the other (the outer extent).
    # Four in five inputs of at least `min_bytes` (a tiny input times the peers' call overhead).
    lo = max(1, -(-min_bytes // (n * size))) if rng.random() < 0.8 else 1  # rounded up
    seqs = 1 if rank == 1 else log_uniform(rng, min(lo, room), min(room, 1 << 23))
    if after == 0:
        inner, outer = 1, seqs
    elif rng.random() < 0.15:
        inner, outer = 1, (seqs if before else 1)  # trailing dimensions of 1
    elif before == 0:
        inner, outer = seqs, 1
    elif rng.random() < 0.5:
        inner = min(seqs, rng.randint(2, 30))  # narrow
        outer = max(1, seqs // inner)
    else:
        inner = log_uniform(rng, min(31, seqs), seqs)  # wide
        outer = max(1, seqs // inner)
    dims_before = split(rng, outer, before)
    dims_after = split(rng, inner, after) if inner > 1 else [1] * after
    shape = dims_before + [n] + dims_after
    # The rounding in split() can overshoot the cap a little: trim the largest outer dimension.
    while math.prod(shape) * size > cap_bytes:
        i = max((d for d in range(rank) if d != axis), key=lambda d: shape[d], default=None)
        if i is None or shape[i] == 1:
            shape[axis] = max(2, shape[axis] // 2)
            n = shape[axis]
        else:
            shape[i] = max(1, shape[i] // 2)
    # K.
    c = rng.random()
    if c < 0.14:
        k = 1
    elif c < 0.24:
        k = n
    elif c < 0.34:
        k = max(1, n // 2)
    elif c < 0.42:
        k = max(1, n - log_uniform(rng, 1, max(1, n // 20)))  # near n
    else:
        k = log_uniform(rng, 1, n)
    largest = rng.random() < 0.5
    data = rng.choices(list(DATA_WEIGHTS), list(DATA_WEIGHTS.values()))[0]
    return Request(dtype, shape, axis, k, largest, data)


def random_set(seed, count, cap_bytes, min_bytes):
    rng = random.Random(seed)
    return [draw(rng, cap_bytes, min_bytes) for _ in range(count)]


# Named fixed sets: the regions issue 65 lists, with its examples first.
SETS = {
    # Short axes (n up to a few dozen) with many sequences.
    "short": [
        "f16 6x27x2x84 2 1", "i16 18x654x2 2 1", "f32 11399x45x2 2 2", "f32 2x170x896 0 1",
        "f32 262144x2 1 1", "f32 131072x4 1 2", "f32 65536x8 1 1", "f32 65536x8 1 3", "f32 32768x16 1 4",
        "f32 16384x32 1 8", "f32 16384x40 1 1", "f16 65536x12 1 2", "i32 100000x3 1 1", "u8 262144x6 1 2",
        "f64 65536x5 1 2", "bf16 65536x10 1 3", "f32 4x65536 0 1", "f32 3x8x20000 1 2", "i8 2x500000 0 1",
        "f32 1000x24x64 1 5 inc",
    ],
    # Non-last axes with a narrow inner extent (2-30 elements between neighbouring sequences).
    "narrow": [
        "i32 374x56x13x2 1 3", "f32 1742x156x1x3 1 51", "i32 2x5x332x201 2 36", "i32 1x6x25x933 1 1",
        "f32 426x4808 0 13", "f32 4808x426 1 13", "f32 4096x256 0 8", "f32 20000x100x4 1 10",
        "f32 5000x300x8 1 20", "f16 2000x500x16 1 32", "f64 10000x64x6 1 5", "i16 4000x1000x2 1 50",
        "u8 100x10000x20 1 100", "f32 64x2000x24 1 1", "f32 1x100000x30 1 300", "f32 8x50000x3 1 n/2",
    ],
    # K = 1 along any axis, inputs over 64 KiB.
    "k1": [
        "f32 1000000 0 1", "f32 1024x1024 0 1", "f32 1024x1024 1 1", "f32 64x128x128 1 1",
        "f32 64x128x128 0 1", "f32 64x128x128 2 1", "f16 4096x512 0 1", "f16 4096x512 1 1",
        "bf16 256x4096 1 1 inc", "f64 512x512 0 1", "i8 4096x256 0 1", "u8 4096x256 1 1", "i32 16x65536 0 1",
        "u16 2x8x65536 1 1", "i64 32x32x256 1 1 inc", "u32 128x4096 0 1 inc", "u64 100000x4 1 1",
        "f32 2x170x896 0 1", "f32 1000000x2 1 1", "f32 8x8x8x8x8x8x8x8 3 1",
    ],
    # Sorted and run-heavy data with a large K.
    "sorted": [
        "f32 219055 0 n/2 inc ascending", "f32 26698 0 n/3 dec ascending", "f32 1000000 0 n/2 dec ascending",
        "f32 1000000 0 n/2 inc descending", "f32 1000000 0 n-1 dec descending", "f32 1024x1024 1 512 dec ascending",
        "f32 1024x1024 0 512 dec ascending", "i32 1000000 0 100000 dec ascending",
        "f64 500000 0 n/4 inc descending", "f16 4096x256 1 128 dec ascending", "u16 300000 0 n/2 dec ascending",
        "f32 1000000 0 n/2 dec equal", "i64 262144 0 n/3 inc equal", "f32 1000x1000 1 n dec descending",
    ],
    # 64-bit keys with a large K.
    "wide64": [
        "f64 67842x17 0 n/4", "f64 671x1151 1 383", "f64 1000000 0 n/2", "f64 1024x1024 1 512",
        "f64 4096x256 1 64", "i64 1000000 0 n/4", "i64 1024x1024 1 300", "u64 1000000 0 n/2 inc",
        "u64 512x2048 1 700", "f64 256x4096 0 100", "i64 2000x500 0 250 inc normal", "f64 1000000 0 n/2 dec normal",
    ],
}
SETS["all"] = [r for name in ("short", "narrow", "k1", "sorted", "wide64") for r in SETS[name]]

# The sets that set the strategy's constants (src/dispatch/strategy.rs names them).
SETS.update({
    # A non-last axis with K above 16.
    "nonlast": ["f32 4096x256 0 50", "f32 4096x256 0 17", "f16 4096x256 0 50", "f32 65536x16 0 100",
                "f32 1024x256 0 50", "f32 128x4096 0 100", "f32 256x4096 0 100"],
    # K = 1 and 2 on rows of 8 to 1M.
    "argmax": ["f32 4096x8 1 1", "f32 4096x16 1 1", "f32 4096x40 1 1", "f32 4096x64 1 1", "f32 4096x256 1 1",
               "f16 4096x40 1 1", "f32 4096x1000 1 1", "f32 4096x4096 1 1", "f32 1000000 0 1", "f32 4096x40 1 2",
               "f32 4096x64 1 2"],
    # Rows of 8 to 32 read side by side from a tile.
    "tiny": ["f32 65536x8 1 1", "f32 65536x8 1 2", "f32 32768x16 1 1", "f32 32768x16 1 2", "f32 16384x24 1 2",
             "f32 16384x32 1 1", "f32 16384x32 1 2", "f32 16384x33 1 2"],
    # Short contiguous rows with small K (MoE routing).
    "moe": ["f32 4096x128 1 8", "f32 4096x256 1 2", "f32 4096x256 1 8", "f32 4096x256 1 16", "f32 2048x512 1 8",
            "f16 4096x256 1 8", "f32 4096x320 1 8"],
    # K above 16 on rows of a few hundred to a few thousand (beam search, small vocabularies).
    "medium": ["f32 4096x256 1 17", "f32 4096x256 1 24", "f32 4096x256 1 32", "f32 4096x256 1 64",
               "f16 4096x256 1 32", "f32 8192x100 1 20", "f32 2048x512 1 32", "f32 1024x1024 1 32",
               "f32 1024x1024 1 64", "f32 1024x1024 1 128", "i32 1024x1024 1 32", "f16 512x2048 1 50",
               "f32 256x4096 1 100", "f32 128x8192 1 64"],
    # 8-bit keys with K from 8 to half the row, where counting them may beat filtering.
    "bytes": ["u8 4096x256 1 8", "u8 4096x256 1 16", "u8 4096x256 1 32", "u8 4096x256 1 64", "u8 4096x256 1 128",
              "u8 1024x1024 1 64", "u8 1024x1024 1 512", "u8 1000000 0 1000", "u8 1000000 0 100000"],
    # f16 rows with K from a sixth to half of them, which may be keyed into u16 and bisected.
    "halves": ["f16 4096x256 1 32", "f16 4096x256 1 43", "f16 4096x256 1 64", "f16 4096x256 1 128",
               "f16 2048x512 1 100", "f16 2048x512 1 256", "f16 1024x1024 1 200"],
})


def ten_cases(peers):
    short = {"float32": "f32", "float16": "f16", "int32": "i32", "uint8": "u8", "float64": "f64"}
    return [Request(short[dt], shape, axis, k, bool(largest), data)
            for shape, axis, k, largest, dt, data in peers.CASES.values()]


# ---------------------------------------------------------------------------------------------------
# Data, as `topk bench --data` makes it (cli/src/bench.rs `generate`, cli/src/types.rs `Sample`): the same
# pattern and value range, not the same bits (another generator).

def make_data(req, seed):
    dt = np_dtype(req.dtype)
    count = req.elements
    rng = np.random.default_rng(seed)
    is_float = req.dtype in ("f32", "f64", "f16", "bf16")
    if req.data in ("ascending", "descending"):
        i = np.arange(count, dtype=np.uint64)
        if req.data == "descending":
            i = i[::-1]
        if is_float:
            with np.errstate(over="ignore"):  # f16 past 65504: infinity, as the CLI's f16::from_f64
                x = i.astype(np.float64).astype(np.float32 if req.dtype == "bf16" else dt).astype(dt)
        else:
            x = i.astype(dt)  # wraps, as the CLI's `i as T`
        return np.ascontiguousarray(x.reshape(req.shape))
    if req.data == "equal":
        u = np.full(count, 0.5)
    elif req.data == "normal":
        u = rng.standard_normal(count)
    else:
        u = rng.random(count)
    if is_float:
        if req.data == "nan-mix":
            u[rng.integers(0, 8, count) == 0] = np.nan
        x = u.astype(np.float32).astype(dt) if req.dtype == "bf16" else u.astype(dt)
    else:
        info = np.iinfo(dt)
        signed = info.min < 0
        if req.data == "normal":
            span = float(2 ** (8 * dt.itemsize) - 1)
            v = (0.0 if signed else span / 2) + u * span / 16
        else:
            v = u * (float(info.max) + 1.0) if signed else u * float(info.max)
        # Saturating, as Rust's `as`; 64-bit maxima round up past the range in float64, so below them.
        top = float(info.max) if dt.itemsize < 8 else np.nextafter(float(info.max), 0.0)
        v = np.clip(np.trunc(v), float(info.min), top)
        x = v.astype(dt)
        if req.data == "nan-mix":
            x[rng.integers(0, 8, count) == 0] = info.max
    return np.ascontiguousarray(x.reshape(req.shape))


# ---------------------------------------------------------------------------------------------------
# Timing

class Peers:
    """The peers' runners through shared/bench/peers.py, with the dtypes each can run (probed once)."""

    def __init__(self, peers_mod, names):
        self.p = peers_mod
        for dtype, (npname, onnx_type) in DTYPES.items():
            self.p.ONNX_T.setdefault(npname, onnx_type)
        self.names = names
        self.support = {}

    def make(self, name, req, tmpdir):
        if name == "numpy":
            np_dtype(req.dtype)  # bf16 needs ml_dtypes
            return lambda x: self.p.numpy_topk(x, req.axis, req.k, int(req.largest))
        model = self.p.onnx_model(req.shape, req.axis, req.k, int(req.largest), DTYPES[req.dtype][0])
        if name == "onnxruntime":
            return self.p.ort_runner(model)
        return self.p.tract_runner(model, os.path.join(tmpdir, "sweep_peer.onnx"))

    def supports(self, name, dtype, tmpdir):
        """Whether peer `name` runs `dtype` at all: a probe on a tiny input, once."""
        key = (name, dtype)
        if key not in self.support:
            small = Request(dtype, (2, 5), 1, 2)
            try:
                self.make(name, small, tmpdir)(make_data(small, 0))
                self.support[key] = True
            except Exception as e:
                self.support[key] = False
                print(f"# {PEER_NAMES[name]} cannot run {dtype}, skipped: {str(e).splitlines()[0][:100]}",
                      file=sys.stderr)
        return self.support[key]

    def runners(self, req, tmpdir):
        out = {}
        for name in self.names:
            if self.supports(name, req.dtype, tmpdir):
                try:
                    out[name] = self.make(name, req, tmpdir)
                except Exception as e:
                    print(f"# {PEER_NAMES[name]} failed on {req}: {str(e).splitlines()[0][:100]}", file=sys.stderr)
        return out


def project_time(cli, req, reps, backend):
    cmd = shlex.split(cli) + req.cli_args() + ["--reps", str(reps), "--backend", backend, "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip() or p.stdout.strip())[-300:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def once(fn, x):
    t = time.perf_counter()
    fn(x)
    return time.perf_counter() - t


def reps_for(estimate, budget, lo, hi):
    return int(min(hi, max(lo, budget / max(estimate, 1e-7))))


def time_request(req, cli, peers, a, seed):
    """Rounds of (project, then each peer); returns a row of results."""
    row = dict(request=str(req), dtype=req.dtype, shape="x".join(map(str, req.shape)), axis=req.axis,
               k=req.k, direction="dec" if req.largest else "inc", data=req.data, n=req.n,
               inner=req.inner, sequences=req.sequences, elements=req.elements, mib=req.nbytes / 2**20)
    x = make_data(req, seed)
    runners = peers.runners(req, a.out)
    est = {}
    for name, fn in list(runners.items()):
        try:
            est[name] = once(fn, x)  # also a warm-up
        except Exception as e:
            print(f"# {PEER_NAMES[name]} failed on {req}: {str(e).splitlines()[0][:90]}", file=sys.stderr)
            del runners[name]
    ratios, proj, floors, wins, ptimes = [], [], [], {}, {name: [] for name in runners}
    backend, checked, error = "", False, ""
    # The first round's reps from the peers' time (the project taken as 5x faster), later rounds' from
    # the project's own median.
    guess = min(est.values()) / 5 if est else 1e-3
    for _ in range(a.rounds):
        try:
            res = project_time(cli, req, reps_for(guess, a.budget, 5, a.max_reps), a.backend)
        except Exception as e:
            error = str(e).replace("\n", " ")
            break
        t = res["median_s"]
        guess = t
        proj.append(t)
        floors.append(res.get("floor_s") or float("nan"))
        backend, checked = res.get("backend", ""), res.get("checked", False)
        times = {}
        for name, fn in runners.items():
            try:
                # One rep (after peers.bench's warm-up call) where a call takes longer than the budget.
                lo = 1 if est[name] > a.budget else 3
                times[name] = peers.p.bench(fn, x, reps_for(est[name], a.budget, lo, a.max_reps))
                ptimes[name].append(times[name])
            except Exception as e:
                print(f"# {PEER_NAMES[name]} failed on {req}: {str(e).splitlines()[0][:90]}", file=sys.stderr)
        if times:
            best = min(times, key=times.get)
            wins[best] = wins.get(best, 0) + 1
            ratios.append(times[best] / t)
    del x
    med = lambda v: float(np.median(v)) if v else float("nan")
    p = med(proj)
    f = med(floors)
    r = med(ratios)
    best = max(wins, key=wins.get) if wins else ""
    row.update(backend=backend, checked=checked, error=error, project_ms=p * 1e3, floor_ms=f * 1e3,
               ns_per_elem=p * 1e9 / req.elements, per_floor=p / f if f > 0 else float("nan"),
               best_peer=best, best_peer_ms=p * r * 1e3 if best else float("nan"),
               peer_ns_per_elem=p * r * 1e9 / req.elements if best else float("nan"), ratio=r,
               rounds=len(proj))
    for name in peers.names:
        row[f"{name}_ms"] = med(ptimes.get(name, [])) * 1e3
    return row


# ---------------------------------------------------------------------------------------------------
# Output

def fmt_row(i, row):
    err = f"  ERROR {row['error'][:120]}" if row["error"] else ""
    return (f"{i:3d} {row['request']:42s} {row['project_ms']:9.4f} ms {row['ns_per_elem']:7.3f} ns/el "
            f"{row['per_floor']:7.2f}x floor  {PEER_NAMES.get(row['best_peer'], '-'):>12s} "
            f"{row['peer_ns_per_elem']:7.3f} ns/el  {row['ratio']:6.2f}x{err}")


def summary(rows, label):
    ok = [r for r in rows if r["ratio"] == r["ratio"] and r["ratio"] > 0]
    lines = []
    if not ok:
        return [f"{label}: no request timed"]
    g = math.exp(sum(math.log(r["ratio"]) for r in ok) / len(ok))
    worst = min(ok, key=lambda r: r["ratio"])
    n = len(ok)
    u3 = sum(r["ratio"] < 3 for r in ok)
    u2 = sum(r["ratio"] < 2 for r in ok)
    u1 = sum(r["ratio"] < 1 for r in ok)
    over3 = [r for r in ok if r["ns_per_elem"] > 3]
    over3_peer = [r for r in over3 if r["peer_ns_per_elem"] < 3]
    k1 = [r for r in ok if r["k"] == 1 and r["mib"] * 2**20 > 64 * 1024]
    k1_bad = [r for r in k1 if r["per_floor"] > 1.5]
    errors = sum(1 for r in rows if r["error"])
    lines.append(
        f"{label}: {n} requests, geomean {g:.2f}x, worst {worst['ratio']:.2f}x ({worst['request']}, "
        f"{worst['ns_per_elem']:.3f} ns/elem), under 3x: {u3}/{n}, under 2x: {u2}/{n}, under 1x: {u1}/{n}, "
        f"over 3 ns/elem: {len(over3)} (fastest peer under 3 ns/elem on {len(over3_peer)}), "
        f"K = 1 over 64 KiB beyond 1.5x floor: {len(k1_bad)}/{len(k1)}"
        + (f", CLI errors: {errors}" if errors else ""))
    met = lambda b: "met" if b else "NOT met"
    lines.append(
        f"issue 65 targets: >= 3x on 90%: {met(n - u3 >= 0.9 * n)} ({100 * (n - u3) / n:.0f}%); "
        f">= 2x on every request: {met(u2 == 0)}; geomean >= 8x: {met(g >= 8)}; "
        f"K = 1 within 1.5x floor over 64 KiB: {met(not k1_bad)}; "
        f"<= 3 ns/elem unless the peer is slower: {met(not over3_peer)}")
    return lines


CSV_FIELDS = ["index", "request", "dtype", "shape", "axis", "k", "direction", "data", "n", "inner", "sequences",
              "elements", "mib", "backend", "checked", "project_ms", "floor_ms", "ns_per_elem", "per_floor",
              "best_peer", "best_peer_ms", "peer_ns_per_elem", "ratio", "numpy_ms", "onnxruntime_ms",
              "tract_ms", "rounds", "error"]


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def read_csv(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k, v in r.items():
                if k in ("axis", "k", "n", "inner", "sequences", "elements", "index", "rounds"):
                    r[k] = int(v)
                elif k.endswith("_ms") or k in ("mib", "ns_per_elem", "per_floor", "peer_ns_per_elem", "ratio"):
                    r[k] = float(v) if v not in ("", None) else float("nan")
            r["checked"] = r.get("checked") == "True"
            rows.append(r)
    return rows


def write_md(path, rows, lines, title):
    with open(path, "w") as f:
        f.write(f"{title}\n\n" + "\n".join(f"- {l}" for l in lines) + "\n\n")
        f.write("Worst first. Ratio: the fastest peer's time over the project's (above 1: the project is "
                "faster). / floor: the project's time over a plain read of the input.\n\n")
        f.write("| # | request (dtype shape axis K direction data) | inner | time (ms) | ns/elem | / floor | "
                "fastest peer (ms) | ratio |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
        for r in sorted(rows, key=lambda r: (r["ratio"] if r["ratio"] == r["ratio"] else -1)):
            peer = f"{r['best_peer_ms']:.4g} ({PEER_NAMES.get(r['best_peer'], '-')})" if r["best_peer"] else "-"
            err = f" error: {r['error'][:80]}" if r["error"] else ""
            f.write(f"| {r['index']} | {r['request']}{err} | {r['inner']} | {r['project_ms']:.4g} | "
                    f"{r['ns_per_elem']:.3f} | {r['per_floor']:.2f} | {peer} | {r['ratio']:.2f}x |\n")


RATIO_BINS = [(0, 1, "#7f0000", "< 1x"), (1, 2, "#e34a33", "1-2x"), (2, 3, "#fdae61", "2-3x"),
              (3, 8, "#a6d96a", "3-8x"), (8, float("inf"), "#1a9641", ">= 8x")]
FLOOR_BINS = [(0, 1.5, "#1a9641", "< 1.5"), (1.5, 3, "#a6d96a", "1.5-3"), (3, 10, "#fdae61", "3-10"),
              (10, 30, "#e34a33", "10-30"), (30, float("inf"), "#7f0000", ">= 30")]


def colour(v, bins):
    for lo, hi, c, _ in bins:
        if lo <= v < hi:
            return c
    return "#999999"


def plot(path, rows, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError:
        print("# no matplotlib: no picture (/tmp/peers/bin/pip install matplotlib)", file=sys.stderr)
        return False
    ok = [r for r in rows if r["ratio"] == r["ratio"] and r["ratio"] > 0]
    if not ok:
        return False
    fig, ax = plt.subplots(2, 3, figsize=(18, 12))
    fig.subplots_adjust(left=0.05, right=0.98, top=0.9, bottom=0.08, hspace=0.45, wspace=0.2)
    jit = random.Random(0)
    markers = lambda r: "o" if r["inner"] == 1 else "s"

    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    def short(v, _=None):
        for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if v >= div:
                return f"{v / div:g}{suffix}"
        return f"{v:g}"

    def log_axes(a, x=True, y=True):
        for on, axis in ((x, a.xaxis), (y, a.yaxis)):
            if on:
                axis.set_major_locator(LogLocator(base=10))
                axis.set_major_formatter(FuncFormatter(short))
                axis.set_minor_formatter(NullFormatter())

    def scatter(a, xs, key, bins, xlabel, label_fn):
        for r in ok:
            x = xs(r) * (1 + 0.08 * (jit.random() - 0.5))
            a.scatter(x, r["k"], c=colour(r[key], bins), marker=markers(r), s=55, edgecolors="black",
                      linewidths=0.4, zorder=3)
            lab = label_fn(r)
            if lab:
                a.annotate(lab, (x, r["k"]), fontsize=7, xytext=(4, 3), textcoords="offset points")
        a.set_xscale("log"); a.set_yscale("log")
        log_axes(a)
        a.set_xlabel(xlabel); a.set_ylabel("K")
        a.grid(True, which="major", alpha=0.3)

    def legend(bins, what, y):
        handles = [Line2D([], [], marker="o", ls="", color=c, markeredgecolor="black", label=f"{what} {l}")
                   for _, _, c, l in bins]
        handles += [Line2D([], [], marker="o", ls="", color="white", markeredgecolor="black", label="last axis"),
                    Line2D([], [], marker="s", ls="", color="white", markeredgecolor="black", label="non-last axis")]
        fig.legend(handles=handles, fontsize=8, loc="center", ncol=len(handles), bbox_to_anchor=(0.36, y),
                   frameon=False)

    ratio_label = lambda r: f"{r['ratio']:.2g}x" if r["ratio"] < 2 else ""
    floor_label = lambda r: f"{r['per_floor']:.0f}" if r["per_floor"] >= 10 else ""
    scatter(ax[0, 0], lambda r: r["n"], "ratio", RATIO_BINS, "n (axis length)", ratio_label)
    ns = np.logspace(0, math.log10(max(r["n"] for r in ok) * 1.2), 50)
    ax[0, 0].plot(ns, ns, "k:", lw=0.8); ax[1, 0].plot(ns, ns, "k:", lw=0.8)
    ax[0, 0].set_title("ratio to the fastest peer, over n x K (labels: under 2x)")
    scatter(ax[0, 1], lambda r: r["inner"], "ratio", RATIO_BINS, "inner extent (1 = last axis)", ratio_label)
    ax[0, 1].set_title("ratio to the fastest peer, over inner extent x K")
    scatter(ax[1, 0], lambda r: r["n"], "per_floor", FLOOR_BINS, "n (axis length)", floor_label)
    ax[1, 0].set_title("time / read floor, over n x K (labels: 10 and over)")
    scatter(ax[1, 1], lambda r: r["inner"], "per_floor", FLOOR_BINS, "inner extent (1 = last axis)", floor_label)
    ax[1, 1].set_title("time / read floor, over inner extent x K")
    legend(RATIO_BINS, "ratio", 0.5)
    legend(FLOOR_BINS, "/ floor", 0.012)

    # Every request's ratio, sorted, against the targets.
    a = ax[0, 2]
    srt = sorted(ok, key=lambda r: r["ratio"])
    a.bar(range(len(srt)), [r["ratio"] for r in srt], color=[colour(r["ratio"], RATIO_BINS) for r in srt],
          edgecolor="black", linewidth=0.3)
    a.set_xticks(range(len(srt)), [str(r["index"]) for r in srt], fontsize=6 if len(srt) > 30 else 8,
                 rotation=90 if len(srt) > 30 else 0)
    for y, s in ((1, "1x"), (2, "2x"), (3, "3x"), (8, "8x")):
        a.axhline(y, color="black", ls="--" if y != 1 else "-", lw=0.7)
        a.text(len(srt) - 0.5, y, s, fontsize=8, va="bottom", ha="right")
    g = math.exp(sum(math.log(r["ratio"]) for r in ok) / len(ok))
    a.axhline(g, color="blue", lw=1)
    a.text(0, g, f" geomean {g:.2f}x", color="blue", fontsize=8, va="bottom")
    a.set_yscale("log"); a.set_xlabel("requests (#), worst first"); a.set_ylabel("fastest peer time / project time")
    a.yaxis.set_major_locator(FixedLocator([v for v in (0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 16, 32, 64, 128, 256, 512, 1024)]))
    a.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x")); a.yaxis.set_minor_formatter(NullFormatter())
    a.set_title(f"every request's ratio ({sum(r['ratio'] < 3 for r in ok)} of {len(ok)} under 3x)")

    # ns per element: the project against the fastest peer.
    a = ax[1, 2]
    for r in ok:
        a.scatter(r["peer_ns_per_elem"], r["ns_per_elem"], c=colour(r["ratio"], RATIO_BINS), marker=markers(r),
                  s=45, edgecolors="black", linewidths=0.4, zorder=3)
    lo = min(min(r["ns_per_elem"] for r in ok), min(r["peer_ns_per_elem"] for r in ok)) / 2
    hi = max(max(r["ns_per_elem"] for r in ok), max(r["peer_ns_per_elem"] for r in ok)) * 2
    xs = np.logspace(math.log10(lo), math.log10(hi), 20)
    a.plot(xs, xs, "k-", lw=0.7, label="equal")
    a.plot(xs, xs / 3, "k--", lw=0.7, label="3x faster")
    a.axhline(3, color="red", lw=0.7, label="3 ns/elem")
    a.axvline(3, color="red", lw=0.7, ls=":")
    a.set_xscale("log"); a.set_yscale("log")
    log_axes(a)
    a.set_xlabel("fastest peer, ns per element"); a.set_ylabel("project, ns per element")
    a.set_title("ns per element (below the dashed line: 3x ahead)")
    a.legend(fontsize=7, loc="upper left"); a.grid(True, alpha=0.3)

    import textwrap
    fig.suptitle("\n".join(w for line in title.split("\n") for w in textwrap.wrap(line, 170)), fontsize=11)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cli", help="the topk binary (or a quoted command), e.g. target/release/topk")
    ap.add_argument("--set", choices=sorted(SETS) + ["ten", "random"], default="random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--requests", help="';'-separated requests `DTYPE SHAPE AXIS K [dec|inc] [DATA]`")
    ap.add_argument("--only", help="comma-separated indices of the set or draw to run")
    ap.add_argument("--list", action="store_true", help="print the requests and exit")
    ap.add_argument("--cap-mib", type=float, default=64, help="the largest input drawn")
    ap.add_argument("--min-kib", type=float, default=64,
                    help="four in five drawn inputs at least this large, where the axis allows")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget", type=float, default=0.25, help="seconds of timed calls per round and timer")
    ap.add_argument("--max-reps", type=int, default=101)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--peers", default="numpy,onnxruntime")
    ap.add_argument("--peers-dir", default=os.path.join(HERE, "..", "..", "shared", "bench"))
    ap.add_argument("--out", default=os.path.normpath(os.path.join(HERE, "..", "target", "sweep")))
    ap.add_argument("--name", help="file name stem (default from the set and seed)")
    ap.add_argument("--replot", nargs="+", metavar="CSV",
                    help="time nothing: the summary, table and picture of earlier runs' CSVs (merged)")
    a = ap.parse_args()

    if a.replot:
        rows = [r for path in a.replot for r in read_csv(path)]
        label = a.name or "+".join(os.path.basename(p)[len("sweep-"):-len(".csv")] for p in a.replot)
        lines = summary(rows, f"sweep {label}")
        for l in lines:
            print(l)
        os.makedirs(a.out, exist_ok=True)
        base = os.path.join(a.out, f"sweep-{label}")
        title = f"topk sweep {label} ({', '.join(a.replot)})"
        write_md(base + ".md", rows, lines, f"## {title}")
        if [os.path.abspath(p) for p in a.replot] != [os.path.abspath(base + ".csv")]:
            write_csv(base + ".csv", rows)
        pic = plot(base + ".png", rows, title + "\n" + lines[0].split(": ", 1)[1])
        print(f"wrote {base}.md" + (f", {base}.png" if pic else ""))
        return

    sys.path.insert(0, os.path.abspath(a.peers_dir))
    import peers as peers_mod

    if a.requests:
        reqs = [parse_request(s) for s in a.requests.split(";") if s.strip()]
        label = "requests"
    elif a.set == "random":
        reqs = random_set(a.seed, a.count, int(a.cap_mib * 2**20), int(a.min_kib * 1024))
        label = f"random-seed{a.seed}-n{a.count}"
    elif a.set == "ten":
        reqs = ten_cases(peers_mod)
        label = "ten"
    else:
        reqs = [parse_request(s) for s in SETS[a.set]]
        label = a.set
    indices = list(range(len(reqs)))
    if a.only:
        indices = [int(i) for i in a.only.split(",")]
    name = a.name or label + ("-only" if a.only else "")
    if a.list:
        for i in indices:
            r = reqs[i]
            print(f"{i:3d} {str(r):44s} n={r.n} inner={r.inner} sequences={r.sequences} {r.nbytes / 2**20:.2f} MiB")
        return

    os.makedirs(a.out, exist_ok=True)
    peers = Peers(peers_mod, [p for p in a.peers.split(",") if p])
    version = subprocess.run(shlex.split(a.cli) + ["--version"], capture_output=True, text=True).stdout.strip()
    print(f"# {version} ({a.cli}) against {', '.join(PEER_NAMES[p] for p in peers.names)}; "
          f"{a.rounds} rounds, one thread; {label}")
    print(f"{'#':>3s} {'request (dtype shape axis K direction data)':42s} {'project':>12s} {'':15s} "
          f"{'/ floor':>13s}  {'fastest peer':>12s} {'':14s} {'ratio':>6s}")
    rows = []
    start = time.time()
    for i in indices:
        req = reqs[i]
        row = time_request(req, a.cli, peers, a, seed=1000 + i)
        row["index"] = i
        rows.append(row)
        print(fmt_row(i, row), flush=True)
    elapsed = time.time() - start

    lines = summary(rows, f"sweep {label}")
    worst = sorted((r for r in rows if r["ratio"] == r["ratio"]), key=lambda r: r["ratio"])[:10]
    print(f"\nworst {len(worst)}:")
    for r in worst:
        print(fmt_row(r["index"], r))
    print(f"\n({elapsed:.0f} s)")
    for l in lines:
        print(l)
    base = os.path.join(a.out, f"sweep-{name}")
    write_csv(base + ".csv", rows)
    title = f"topk sweep {label}: {version}, {a.rounds} rounds, one thread, against {', '.join(PEER_NAMES[p] for p in peers.names)}"
    write_md(base + ".md", rows, lines, f"## {title}")
    pic = plot(base + ".png", rows, title + "\n" + lines[0].split(": ", 1)[1])
    print(f"wrote {base}.csv, {base}.md" + (f", {base}.png" if pic else ""))


if __name__ == "__main__":
    main()
