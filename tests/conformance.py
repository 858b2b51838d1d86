#!/usr/bin/env python3
"""Conformance of `topk run` with the ONNX reference implementation of TopK, bit for bit.

Usage: conformance.py CLI [--cases 400] [--seed 1] [--jobs N]
  CLI: the built command line, e.g. target/release/topk (or target/debug/examples/topk_gpu)
  --jobs: cases run side by side (default: the CPU count); the cases are drawn first, in order, so a
          seed names the same cases whatever the count
Needs: numpy and onnx (pip install numpy onnx).

Random cases cover every .npy dtype, ranks 1-8, every axis (negative too), K from 0 to n, both
directions, ties, NaNs with payloads and either sign, +-0, +-inf, subnormals, integer extremes, all four
index types, C and Fortran order, empty tensors. Each is run through the CLI and compared with
`onnx.reference.ReferenceEvaluator` on a TopK node (opset 11): values as raw bytes, indices exactly.

Every case is also compared with `spec_topk`, docs/CONTRACT.md §1-2 written in NumPy. The ONNX reference sorts with
`np.lexsort((±position, x))`, whose order is docs/CONTRACT.md's (NaNs above +inf and tied with each other, -0 tied
with +0, ties by ascending position in both directions); if it ever disagrees with `spec_topk`, the case
is counted as an ONNX deviation, reported, and the CLI is held to `spec_topk` instead.

Then bad requests, each expecting exit status 2, exactly one line on stderr, and no output file.
The last line is `N passed, M failed`; the exit status is 1 when anything failed.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

DTYPES = ["<f2", "<f4", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8"]
INDEX_TYPES = {"u32": np.uint32, "u64": np.uint64, "i32": np.int32, "i64": np.int64}
UINT_OF = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def onnx_topk(x, axis, k, largest):
    """The ONNX reference's TopK (opset 11): values and int64 indices."""
    t = helper.np_dtype_to_tensor_dtype(x.dtype)
    inputs = [helper.make_tensor_value_info("x", t, None), helper.make_tensor_value_info("k", TensorProto.INT64, [1])]
    outputs = [helper.make_tensor_value_info("v", t, None), helper.make_tensor_value_info("i", TensorProto.INT64, None)]
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=int(largest), sorted=1)
    graph = helper.make_graph([node], "topk", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    v, i = ReferenceEvaluator(model).run(None, {"x": x, "k": np.array([k], np.int64)})
    return np.asarray(v), np.asarray(i)


def spec_topk(x, axis, k, largest):
    """docs/CONTRACT.md §1-2 in NumPy: a stable sort by (key, position), the first k."""
    position = np.indices(x.shape)[axis] if x.size else np.zeros(x.shape, np.int64)
    if x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # signalling NaNs stay NaN
            f = x.astype(np.float64)  # exact for f16, f32; -0.0 == 0.0 in every comparison
        nan = np.isnan(f)
        g = np.where(nan, 0.0, f)
        keys = (position, -g, ~nan) if largest else (position, g, nan)
    else:
        keys = (position, ~x) if largest else (position, x)  # ~ reverses the order without overflow
    order = np.lexsort(keys, axis=axis) if x.size else np.zeros(x.shape, np.int64)
    order = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, order, axis=axis), order


def special_values(dtype, rng, count):
    """Values that stress the order: ties, NaN payloads and signs, zeros, infinities, extremes."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        bits = dt.itemsize * 8
        mantissa = {2: 10, 4: 23, 8: 52}[dt.itemsize]
        u = UINT_OF[dt.itemsize]
        exponent = ((1 << (bits - 1)) - 1) & ~((1 << mantissa) - 1)
        sign = 1 << (bits - 1)
        nans = [exponent | 1, exponent | (1 << (mantissa - 1)), exponent | ((1 << mantissa) - 1),
                sign | exponent | 1, sign | exponent | (1 << (mantissa - 1)), sign | exponent | 12345 % (1 << mantissa)]
        raw = nans + [0, sign, exponent, sign | exponent, 1, sign | 1]  # NaNs, +-0, +-inf, +-subnormal
        specials = np.array(raw, dtype=u).view(dt)
        pool = np.concatenate([specials, np.array([1, -1, 2, 0.5, -2.5, 3], dt),
                               rng.standard_normal(8).astype(dt)])
    else:
        info = np.iinfo(dt)
        pool = np.array([info.min, info.min + 1, info.max, info.max - 1, 0, 1, info.max // 2], dtype=dt)
        if info.min < 0:
            pool = np.concatenate([pool, np.array([-1, -2], dt)])
        pool = np.concatenate([pool, rng.integers(info.min, info.max, 8, dtype=dt, endpoint=True)])
    return rng.choice(pool, count)


def random_input(rng, dtype, shape):
    count = int(np.prod(shape))
    dt = np.dtype(dtype)
    style = rng.integers(4)
    if style == 0:  # few distinct values: many ties
        pool = special_values(dt, rng, 3)
        x = rng.choice(pool, count)
    elif style == 1:  # specials everywhere
        x = special_values(dt, rng, count)
    elif dt.kind == "f":  # mostly normal, some specials
        x = rng.standard_normal(count).astype(dt)
        mask = rng.random(count) < 0.2
        x[mask] = special_values(dt, rng, int(mask.sum()))
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, count, dtype=dt, endpoint=True)
        mask = rng.random(count) < 0.2
        x[mask] = special_values(dt, rng, int(mask.sum()))
    x = np.asarray(x, dtype=dt).reshape(shape)
    return x.astype(dt.newbyteorder("<"))


def random_case(rng):
    rank = int(rng.integers(1, 9))
    budget = 3000
    shape = []
    for _ in range(rank):
        size = int(rng.integers(1, max(2, min(64, budget)) + 1))
        if rng.random() < 0.3:
            size = int(rng.integers(1, 3))
        shape.append(size)
        budget = max(1, budget // size)
    if rng.random() < 0.04:
        shape[int(rng.integers(rank))] = 0  # an empty tensor
    axis = int(rng.integers(-rank, rank))
    n = shape[axis]
    k = int(rng.choice([0, min(1, n), n, int(rng.integers(0, n + 1))]))
    return {
        "dtype": DTYPES[int(rng.integers(len(DTYPES)))],
        "shape": tuple(shape),
        "axis": axis,
        "k": k,
        "largest": bool(rng.integers(2)),
        "index_type": list(INDEX_TYPES)[int(rng.integers(4))],
        "fortran": bool(rng.integers(2)),
    }


class Runner:
    def __init__(self, cli, workdir):
        self.cli, self.dir = cli, workdir
        self.passed, self.failed, self.onnx_deviations = 0, 0, 0

    def fail(self, what):
        self.failed += 1
        print(f"FAIL {what}", flush=True)

    def topk(self, input_path, axis, k, direction, index_type=None, extra=()):
        values, indices = os.path.join(self.dir, "v.npy"), os.path.join(self.dir, "i.npy")
        for p in (values, indices):
            if os.path.exists(p):
                os.remove(p)
        cmd = [self.cli, "run", "--input", input_path, "--axis", str(axis), "--k", str(k), "--direction", direction,
               "--values", values, "--indices", indices, *extra]
        if index_type:
            cmd += ["--index-type", index_type]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return p, values, indices

    def conformance(self, case, x):
        if case["fortran"]:
            x = np.asfortranarray(x)
        path = os.path.join(self.dir, "x.npy")
        np.save(path, x)
        axis, k, largest = case["axis"], case["k"], case["largest"]
        want_v, want_i = onnx_topk(np.ascontiguousarray(x), axis, k, largest)
        spec_v, spec_i = spec_topk(np.ascontiguousarray(x), axis, k, largest)
        if want_v.tobytes() != spec_v.tobytes() or not np.array_equal(want_i, spec_i):
            self.onnx_deviations += 1
            print(f"note: the ONNX reference differs from docs/CONTRACT.md on {case}; comparing with spec_topk", flush=True)
            want_v, want_i = spec_v, spec_i
        index_type = case["index_type"]
        p, vpath, ipath = self.topk(path, axis, k, "decreasing" if largest else "increasing", index_type)
        if p.returncode != 0:
            return self.fail(f"{case}: exit {p.returncode}: {p.stderr.strip()}")
        v, i = np.load(vpath), np.load(ipath)
        want_i = want_i.astype(INDEX_TYPES[index_type])
        problems = []
        if v.dtype != x.dtype or v.shape != want_v.shape:
            problems.append(f"values {v.dtype}{v.shape} instead of {x.dtype}{want_v.shape}")
        elif np.ascontiguousarray(v).tobytes() != np.ascontiguousarray(want_v).tobytes():
            problems.append(f"values differ: {v.ravel()[:16]} instead of {want_v.ravel()[:16]}")
        if i.dtype != want_i.dtype or i.shape != want_i.shape:
            problems.append(f"indices {i.dtype}{i.shape} instead of {want_i.dtype}{want_i.shape}")
        elif not np.array_equal(i, want_i):
            problems.append(f"indices differ: {i.ravel()[:16]} instead of {want_i.ravel()[:16]}")
        if v.flags.f_contiguous and not v.flags.c_contiguous or i.flags.f_contiguous and not i.flags.c_contiguous:
            problems.append("outputs are not in C order")
        if problems:
            return self.fail(f"{case}: " + "; ".join(problems))
        self.passed += 1

    def bad(self, name, argv_or_request):
        """A request that must fail: status 2, one line on stderr, no output file."""
        values, indices = os.path.join(self.dir, "bad_v.npy"), os.path.join(self.dir, "bad_i.npy")
        for p in (values, indices):
            if os.path.exists(p):
                os.remove(p)
        argv = [a.replace("{V}", values).replace("{I}", indices) for a in argv_or_request]
        p = subprocess.run([self.cli, *argv], capture_output=True, text=True, timeout=60)
        lines = p.stderr.splitlines()
        problems = []
        if p.returncode != 2:
            problems.append(f"exit {p.returncode}")
        if len(lines) != 1 or not lines[0].startswith("error: "):
            problems.append(f"stderr {p.stderr!r}")
        leftovers = [f for f in os.listdir(os.path.dirname(values)) if f.startswith(("bad_", ".bad_"))]
        if leftovers:
            problems.append(f"left files {leftovers}")
        if problems:
            return self.fail(f"bad request {name}: " + "; ".join(problems))
        self.passed += 1


def bad_requests(r):
    d = r.dir
    good = os.path.join(d, "good.npy")
    np.save(good, np.arange(12, dtype=np.float32).reshape(3, 4))

    def save_raw(name, header, data=b""):
        path = os.path.join(d, name)
        text = repr(header).encode() + b" " * (64 - 11 - len(repr(header))) + b"\n"
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + data)
        return path

    files = {
        "big-endian": lambda: np.save(os.path.join(d, "be.npy"), np.arange(4, dtype=">f4")) or "be.npy",
        "bool": lambda: np.save(os.path.join(d, "b.npy"), np.ones(4, bool)) or "b.npy",
        "complex": lambda: np.save(os.path.join(d, "c.npy"), np.ones(4, np.complex64)) or "c.npy",
        "string": lambda: np.save(os.path.join(d, "s.npy"), np.array(["ab", "cd"])) or "s.npy",
        "scalar": lambda: np.save(os.path.join(d, "0d.npy"), np.float32(1)) or "0d.npy",
        "rank 9": lambda: np.save(os.path.join(d, "9d.npy"), np.ones([1] * 9, np.float32)) or "9d.npy",
    }
    paths = {name: os.path.join(d, make()) for name, make in files.items()}
    with open(os.path.join(d, "garbage.npy"), "wb") as f:
        f.write(b"this is not a numpy file at all")
    paths["garbage"] = os.path.join(d, "garbage.npy")
    with open(good, "rb") as f:
        whole = f.read()
    with open(os.path.join(d, "short.npy"), "wb") as f:
        f.write(whole[:-3])
    paths["truncated"] = os.path.join(d, "short.npy")
    paths["huge shape"] = save_raw("huge.npy", {"descr": "<f4", "fortran_order": False,
                                                "shape": (2**40, 2**40, 2**40)})
    paths["missing"] = os.path.join(d, "does-not-exist.npy")

    def run(path, axis="1", k="2", direction="decreasing", *extra):
        return ["run", "--input", path, "--axis", axis, "--k", k, "--direction", direction,
                "--values", "{V}", "--indices", "{I}", *extra]

    for name, path in paths.items():
        r.bad(f"file {name}", run(path, "0", "1"))
    r.bad("K > n", run(good, "1", "5"))
    r.bad("axis = rank", run(good, "2"))
    r.bad("axis < -rank", run(good, "-3"))
    r.bad("K not a number", run(good, "1", "two"))
    r.bad("K negative", run(good, "1", "-1"))
    r.bad("axis not a number", run(good, "x"))
    r.bad("bad direction", run(good, "1", "2", "up"))
    r.bad("bad backend", run(good, "1", "2", "decreasing", "--backend", "quantum"))
    r.bad("bad index type", run(good, "1", "2", "decreasing", "--index-type", "u16"))
    r.bad("unknown flag", run(good, "1", "2", "decreasing", "--frobnicate"))
    r.bad("missing --k", ["run", "--input", good, "--axis", "1", "--direction", "decreasing",
                          "--values", "{V}", "--indices", "{I}"])
    r.bad("same output twice", ["run", "--input", good, "--axis", "1", "--k", "2", "--direction", "decreasing",
                                "--values", "{V}", "--indices", "{V}"])
    r.bad("indices in a missing folder", ["run", "--input", good, "--axis", "1", "--k", "2", "--direction",
                                          "decreasing", "--values", "{V}", "--indices",
                                          os.path.join(d, "no-such-dir", "bad_i.npy")])
    # An output that is the input, however it is named, is refused and the input stays as it was.
    os.symlink(good, os.path.join(d, "good-link.npy"))
    for name, values in [("values = input", good), ("values = input via ..", os.path.join(d, ".", "..",
                         os.path.basename(d), "good.npy")), ("values = link to input", os.path.join(d, "good-link.npy"))]:
        r.bad(name, ["run", "--input", good, "--axis", "1", "--k", "2", "--direction", "decreasing",
                     "--values", values, "--indices", "{I}"])
    r.bad("indices = input", ["run", "--input", good, "--axis", "1", "--k", "2", "--direction", "decreasing",
                              "--values", "{V}", "--indices", good])
    r.bad("indices is a folder", ["run", "--input", good, "--axis", "1", "--k", "2", "--direction", "decreasing",
                                  "--values", "{V}", "--indices", d])
    r.bad("nested header", ["run", "--input", _deep(d), "--axis", "0", "--k", "1",
                            "--direction", "decreasing", "--values", "{V}", "--indices", "{I}"])
    with open(good, "rb") as f:
        if f.read() != whole:
            r.fail("the input changed")
    r.bad("no subcommand", [])
    r.bad("unknown subcommand", ["frobnicate"])
    r.bad("bench K > n", ["bench", "--shape", "4,4", "--dtype", "f32", "--axis", "1", "--k", "5"])
    r.bad("bench bad dtype", ["bench", "--shape", "4,4", "--dtype", "f128", "--axis", "1", "--k", "1"])
    r.bad("bench rank 9", ["bench", "--shape", "1,1,1,1,1,1,1,1,1", "--dtype", "f32", "--axis", "1", "--k", "1"])


def _deep(d):
    """A header with a dict value nested 40 deep (issue 66: a parser that goes back over nested values
    takes time doubling with each level)."""
    path = os.path.join(d, "deep.npy")
    text = ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': " + "[" * 40 + "0" + "]" * 40 + "}\n")
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode() + b"\0" * 4)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cli")
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    cases = []
    for _ in range(a.cases):
        case = random_case(rng)
        cases.append((case, random_input(rng, case["dtype"], case["shape"])))
    jobs = max(1, a.jobs)
    with tempfile.TemporaryDirectory() as d:
        # One runner (and folder) per job, each taking every jobs-th case: most of a case's time is the
        # CLI's process (a GPU example's starts Vulkan, 0.25 s), which runs outside the GIL.
        runners = [Runner(os.path.abspath(a.cli), os.path.join(d, str(j))) for j in range(jobs)]
        for runner in runners:
            os.mkdir(runner.dir)

        def run_share(j):
            for case, x in cases[j::jobs]:
                runners[j].conformance(case, x)

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for done in [pool.submit(run_share, j) for j in range(jobs)]:
                done.result()
        r = runners[0]
        bad_requests(r)
        for other in runners[1:]:
            r.passed, r.failed = r.passed + other.passed, r.failed + other.failed
            r.onnx_deviations += other.onnx_deviations
    if r.onnx_deviations:
        print(f"note: the ONNX reference differed from docs/CONTRACT.md on {r.onnx_deviations} cases")
    print(f"{r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
