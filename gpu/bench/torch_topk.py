# torch.topk on CUDA over the shapes of gpu/bench/cases.sh, timed as topk_gpu bench times itself (median
# of REPS): wall time of one call from the call to its completion (torch.cuda.synchronize), and GPU time
# between CUDA events around it.
import json, statistics, sys, time, torch
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 50
CASES = [  # name, shape, dim, k, largest, dtype
    ("vec1m_k100", (1, 1_000_000), 1, 100, True, torch.float32),
    ("llm32x128k_k50", (32, 128_256), 1, 50, True, torch.float32),
    ("llm32x128k_k50_f16", (32, 128_256), 1, 50, True, torch.float16),
    ("moe4096x256_k8", (4096, 256), 1, 8, True, torch.float32),
    ("axis0_4096x256_k8", (4096, 256), 0, 8, True, torch.float32),
    ("vec1m_k1000_small", (1, 1_000_000), 1, 1000, False, torch.float32),
    ("i32_1m_k100", (1, 1_000_000), 1, 100, True, torch.int32),
    ("u8_1m_k100", (1, 1_000_000), 1, 100, True, torch.uint8),
    ("rows1024x1024_k512", (1024, 1024), 1, 512, True, torch.float32),
    ("vec1m_k2000", (1, 1_000_000), 1, 2000, True, torch.float32),
    ("vec1m_k100_f64", (1, 1_000_000), 1, 100, True, torch.float64),
    ("vec16m_k1000", (1, 16_000_000), 1, 1000, True, torch.float32),
]
dev = torch.device("cuda")
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}))
g = torch.Generator(device=dev).manual_seed(7)
for name, shape, dim, k, largest, dtype in CASES:
    # Uniform random bits, as topk_gpu bench makes them (NaNs included for floats).
    bits = {torch.float32: torch.int32, torch.float16: torch.int16, torch.float64: torch.int64}.get(dtype, dtype)
    info = torch.iinfo(bits)
    x = torch.randint(info.min, info.max, shape, device=dev, generator=g, dtype=bits).view(dtype)
    def once():
        return torch.topk(x, k, dim=dim, largest=largest, sorted=True)
    try:
        for _ in range(5):
            once()
        torch.cuda.synchronize()
        walls, times = [], []
        for _ in range(REPS):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start = time.perf_counter()
            a.record(); once(); b.record(); b.synchronize()
            walls.append(time.perf_counter() - start)
            times.append(a.elapsed_time(b) / 1e3)
        wall = statistics.median(walls)
        print(json.dumps({"case": name, "median_s": wall, "wall_s": wall, "gpu_s": statistics.median(times),
                          "min_wall_s": min(walls)}))
    except Exception as e:
        print(json.dumps({"case": name, "error": str(e)[:200]}))
