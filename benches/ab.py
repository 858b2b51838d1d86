#!/usr/bin/env python3
"""A/B timing of `topk bench` builds on a noisy machine: the builds alternate ROUNDS times, and each
keeps the best of its medians (a slow round is the machine's, not the build's), and the best of its
medians divided by the same run's floor (`floor_s`, a plain read of the data).

Usage: benches/ab.py "SHAPE DTYPE AXIS K DATA" BIN [BIN ...] [--rounds 5] [--reps 31] [--backend auto]
                     [--direction decreasing]
  e.g. benches/ab.py "32,128256 f16 1 50 normal" /tmp/topk-before target/release/topk
"""
import argparse, json, os, subprocess

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("bins", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=31)
    ap.add_argument("--backend", default="auto", help="passed to `topk bench` (e.g. portable)")
    ap.add_argument("--direction", default="decreasing", choices=["decreasing", "increasing"])
    a = ap.parse_args()
    shape, dtype, axis, k, data = a.case.split()
    best = {b: float("inf") for b in a.bins}
    per_floor = {b: float("inf") for b in a.bins}
    for _ in range(a.rounds):
        for b in a.bins:
            out = subprocess.run([b, "bench", "--shape", shape, "--dtype", dtype, "--axis", axis, "--k", k,
                                  "--data", data, "--direction", a.direction, "--reps", str(a.reps),
                                  "--backend", a.backend, "--json"],
                                 capture_output=True, text=True, check=True).stdout
            run = json.loads(out.strip().splitlines()[-1])
            best[b] = min(best[b], run["median_s"] * 1e3)
            per_floor[b] = min(per_floor[b], run["median_s"] / run["floor_s"])
    print(f"{a.case}: " + " ".join(f"{os.path.basename(b)}={t:.4f}" for b, t in best.items()) + " ms; / floor: "
          + " ".join(f"{os.path.basename(b)}={per_floor[b]:.2f}" for b in a.bins))

if __name__ == "__main__":
    main()
