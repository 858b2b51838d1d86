#!/bin/bash
# The GPU figures of BENCHMARKS.md: topk_gpu bench over the cases of shared/bench/peers.py and four
# more, one JSON line each (wall time from record to completion, GPU timestamp time, dispatches, passes
# over the input), then torch.topk on CUDA over the same shapes when PyTorch is there.
# Usage (from the workspace root): gpu/bench/cases.sh [REPEATS]
# TOPK_GPU_BIN=path runs a binary built elsewhere (a GPU machine without cargo) instead of building one.
set -euo pipefail
repeats=${1:-50}
bin=${TOPK_GPU_BIN:-target/release/examples/topk_gpu}
[ -n "${TOPK_GPU_BIN:-}" ] || cargo build --release -q -p topk-kernels-gpu --example topk_gpu
while read -r shape dtype k axis direction; do
    "$bin" bench --shape "$shape" --dtype "$dtype" --k "$k" --axis "$axis" \
        --direction "$direction" --repeats "$repeats" --json
done <<'CASES'
1x1000000 f32 100 -1 decreasing
32x128256 f32 50 -1 decreasing
32x128256 f16 50 -1 decreasing
4096x256 f32 8 -1 decreasing
4096x256 f32 8 0 decreasing
1x1000000 f32 1000 -1 increasing
1x1000000 i32 100 -1 decreasing
1x1000000 u8 100 -1 decreasing
1024x1024 f32 512 -1 decreasing
1x1000000 f32 2000 -1 decreasing
1x1000000 f64 100 -1 decreasing
1x16000000 f32 1000 -1 decreasing
CASES
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    python3 "$(dirname "$0")/torch_topk.py" "$repeats"
fi
