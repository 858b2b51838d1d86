#!/usr/bin/env python3
"""topk1 called from C (bench.c) against the Rust engine (`topk bench`), on shared/bench/peers.py's cases.

Each round runs every case once each way, C and Rust in turn (the order swapped every round), so that a
drift of the machine's speed meets both; each run reports the median of REPS calls after 0.2 s of
warm-up. Printed per case: the median over rounds of C's median, of Rust's, and of their ratio C / Rust
(1.00 = as fast; above 1 = C slower).

Usage: capi/bench/compare.py [--lib LIB] [--cli CLI] [--rounds 5] [--reps 15] [--cases a,b]
  LIB: the static library (default target/dist/libtopk_kernels_capi.a: `make -C capi build`)
  CLI: the Rust bench (default target/release/examples/topk: `cargo build --release --example topk`)
Needs only python3 and a C compiler (CC, default cc).
"""
import argparse, json, os, shlex, statistics, subprocess, sys, tempfile

# peers.py's CASES, as (shape, axis, k, largest, dtype, data); copied so that no numpy is needed.
CASES = {
    "vec1m_k100": ((1, 1_000_000), 1, 100, 1, "f32", "uniform"),
    "llm32x128k_k50": ((32, 128_256), 1, 50, 1, "f32", "normal"),
    "llm32x128k_k50_f16": ((32, 128_256), 1, 50, 1, "f16", "normal"),
    "moe4096x256_k8": ((4096, 256), 1, 8, 1, "f32", "normal"),
    "axis0_4096x256_k8": ((4096, 256), 0, 8, 1, "f32", "normal"),
    "vec1m_k1000_small": ((1, 1_000_000), 1, 1000, 0, "f32", "uniform"),
    "i32_1m_k100": ((1, 1_000_000), 1, 100, 1, "i32", "uniform"),
    "u8_1m_k100": ((1, 1_000_000), 1, 100, 1, "u8", "uniform"),
    "sorted1m_k100": ((1, 1_000_000), 1, 100, 1, "f32", "ascending"),
    "rows1024x1024_k512": ((1024, 1024), 1, 512, 1, "f32", "uniform"),
}


def c_time(binary, case, reps):
    shape, axis, k, largest, dtype, data = case
    direction = "decreasing" if largest else "increasing"
    out = subprocess.run([binary, ",".join(map(str, shape)), dtype, str(axis), str(k), direction, data,
                          str(reps)], capture_output=True, text=True, check=True).stdout
    return float(out.split()[0].split("=")[1])


def rust_time(cli, case, reps):
    shape, axis, k, largest, dtype, data = case
    direction = "decreasing" if largest else "increasing"
    out = subprocess.run(shlex.split(cli) + ["bench", "--shape", ",".join(map(str, shape)), "--dtype", dtype,
                                             "--axis", str(axis), "--k", str(k), "--direction", direction,
                                             "--data", data, "--reps", str(reps), "--json"],
                         capture_output=True, text=True, check=True).stdout
    row = json.loads(out.strip().splitlines()[-1])
    return row["median_s"], row["backend"]


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(root, "target/dist/libtopk_kernels_capi.a"))
    ap.add_argument("--cli", default=os.path.join(root, "target/release/examples/topk"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cases", default=",".join(CASES))
    a = ap.parse_args()
    binary = os.path.join(tempfile.mkdtemp(), "bench")
    subprocess.run(shlex.split(os.environ.get("CC", "cc")) + [
        "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(root, "capi/include"),
        os.path.join(root, "capi/bench/bench.c"), a.lib, "-lpthread", "-ldl", "-lm", "-o", binary], check=True)
    print(f"{'case':22s} {'engine':>8s} {'C ms':>9s} {'Rust ms':>9s} {'C/Rust':>7s}  (rounds' ratios)")
    worst = (0.0, None)
    for name in a.cases.split(","):
        case = CASES[name]
        c, rust, ratios, engine = [], [], [], ""
        for r in range(a.rounds):
            if r % 2 == 0:
                ct = c_time(binary, case, a.reps)
                rt, engine = rust_time(a.cli, case, a.reps)
            else:
                rt, engine = rust_time(a.cli, case, a.reps)
                ct = c_time(binary, case, a.reps)
            c.append(ct); rust.append(rt); ratios.append(ct / rt)
        ratio = statistics.median(ratios)
        print(f"{name:22s} {engine:>8s} {statistics.median(c)*1e3:9.3f} {statistics.median(rust)*1e3:9.3f} "
              f"{ratio:7.2f}  ({' '.join(f'{x:.2f}' for x in ratios)})", flush=True)
        worst = max(worst, (ratio, name))
    print(f"worst C/Rust ratio: {worst[0]:.2f} on {worst[1]}")


if __name__ == "__main__":
    sys.exit(main())
