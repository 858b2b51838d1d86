#!/usr/bin/env python3
"""Shapes that shared/bench/peers.py leaves out, beside ONNX Runtime and NumPy: builds of `topk bench`
(best of two medians each, alternated) and the peers through peers.py's own functions, one table.
Sets: `nonlast`, a non-last axis with K above 16; `argmax`, K = 1 (and 2) on many short rows; `medium`,
K above 16 on short rows; `narrow`, u8 keys with K from 8 to half the row; `halves`, f16 rows with K
from a sixth to half of them.

Usage (the peers' venv of BENCHMARKS.md):
  /tmp/peers/bin/python benches/shapes.py [--set nonlast|argmax|medium|narrow|halves] [--peers ../shared/bench] BIN [BIN ...]
  e.g. /tmp/peers/bin/python benches/shapes.py --set argmax /tmp/topk-before target/release/topk
"""
import argparse, json, os, subprocess, sys

# (shape, axis, K, numpy dtype, `topk bench` dtype); uniform data, `Decreasing`.
NONLAST = [
    ((4096, 256), 0, 50, "float32", "f32"),
    ((4096, 256), 0, 17, "float32", "f32"),
    ((4096, 256), 0, 50, "float16", "f16"),
    ((65536, 16), 0, 100, "float32", "f32"),
    ((1024, 256), 0, 50, "float32", "f32"),
    ((128, 4096), 0, 100, "float32", "f32"),
    ((256, 4096), 0, 100, "float32", "f32"),
]
ARGMAX = [
    ((4096, 8), 1, 1, "float32", "f32"),
    ((4096, 16), 1, 1, "float32", "f32"),
    ((4096, 40), 1, 1, "float32", "f32"),
    ((4096, 64), 1, 1, "float32", "f32"),
    ((4096, 256), 1, 1, "float32", "f32"),
    ((4096, 40), 1, 1, "float16", "f16"),
    ((4096, 1000), 1, 1, "float32", "f32"),
    ((1, 1000000), 1, 1, "float32", "f32"),
    ((4096, 40), 1, 2, "float32", "f32"),
    ((4096, 64), 1, 2, "float32", "f32"),
]
# K above 16 on rows of a few hundred to a few thousand (beam search, top-k sampling over short
# vocabularies, retrieval over small collections).
MEDIUM = [
    ((4096, 256), 1, 17, "float32", "f32"),
    ((4096, 256), 1, 24, "float32", "f32"),
    ((4096, 256), 1, 32, "float32", "f32"),
    ((4096, 256), 1, 64, "float32", "f32"),
    ((4096, 256), 1, 32, "float16", "f16"),
    ((8192, 100), 1, 20, "float32", "f32"),
    ((2048, 512), 1, 32, "float32", "f32"),
    ((1024, 1024), 1, 32, "float32", "f32"),
    ((1024, 1024), 1, 64, "float32", "f32"),
    ((1024, 1024), 1, 128, "float32", "f32"),
    ((1024, 1024), 1, 32, "int32", "i32"),
    ((512, 2048), 1, 50, "float16", "f16"),
    ((256, 4096), 1, 100, "float32", "f32"),
    ((128, 8192), 1, 64, "float32", "f32"),
]
# 8-bit keys, where a row's K-th key comes from counting them (histogram.rs) once K is large enough.
NARROW = [
    ((4096, 256), 1, 8, "uint8", "u8"),
    ((4096, 256), 1, 16, "uint8", "u8"),
    ((4096, 256), 1, 32, "uint8", "u8"),
    ((4096, 256), 1, 64, "uint8", "u8"),
    ((4096, 256), 1, 128, "uint8", "u8"),
    ((1024, 1024), 1, 64, "uint8", "u8"),
    ((1024, 1024), 1, 512, "uint8", "u8"),
    ((1, 1000000), 1, 1000, "uint8", "u8"),
    ((1, 1000000), 1, 100000, "uint8", "u8"),
]
# f16 rows with K a large part of them, which the SIMD engines key into u16 and bisect (64 to 512
# elements, K from n/6 to n/2), and their neighbours either side.
HALVES = [
    ((4096, 256), 1, 32, "float16", "f16"),
    ((4096, 256), 1, 43, "float16", "f16"),
    ((4096, 256), 1, 64, "float16", "f16"),
    ((4096, 256), 1, 128, "float16", "f16"),
    ((2048, 512), 1, 100, "float16", "f16"),
    ((2048, 512), 1, 256, "float16", "f16"),
    ((1024, 1024), 1, 200, "float16", "f16"),
]
SETS = {"nonlast": NONLAST, "argmax": ARGMAX, "medium": MEDIUM, "narrow": NARROW, "halves": HALVES}

def ours(binary, shape, axis, k, dtype):
    out = subprocess.run([binary, "bench", "--shape", ",".join(map(str, shape)), "--dtype", dtype, "--axis",
                          str(axis), "--k", str(k), "--reps", "21", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["median_s"]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bins", nargs="+")
    ap.add_argument("--set", choices=SETS, default="nonlast")
    ap.add_argument("--peers", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "bench"))
    a = ap.parse_args()
    sys.path.insert(0, a.peers)
    from peers import bench, make, numpy_topk, onnx_model, ort_runner
    names = " | ".join(os.path.basename(b) for b in a.bins)
    cases = SETS[a.set]
    print(f"| shape, axis {cases[0][1]} | K | dtype | {names} | ONNX Runtime | NumPy | last vs fastest peer |")
    print("| --- " * (len(a.bins) + 6) + "|")
    for shape, axis, k, np_dtype, dtype in cases:
        x = make(shape, np_dtype, "uniform")
        ort = bench(ort_runner(onnx_model(shape, axis, k, 1, np_dtype)), x, 11)
        npy = bench(lambda x: numpy_topk(x, axis, k, 1), x, 5)
        best = {b: float("inf") for b in a.bins}
        for _ in range(2):
            for b in a.bins:
                best[b] = min(best[b], ours(b, shape, axis, k, dtype))
        times = " | ".join(f"{best[b] * 1e3:.3f} ms" for b in a.bins)
        ratio = min(ort, npy) / best[a.bins[-1]]
        print(f"| {shape[0]} x {shape[1]} | {k} | {dtype} | {times} | {ort * 1e3:.3f} ms | {npy * 1e3:.3f} ms"
              f" | {ratio:.1f}x |", flush=True)

if __name__ == "__main__":
    main()
