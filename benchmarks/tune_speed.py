"""How long `tune` takes: 200 configurations x 2,000 requests (the issue's budget: 60 s on 2 cores).

Prints wall time, CPU time of all processes, and per-point cost. Run: python benchmarks/tune_speed.py
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sched_reader.analyzers.simulator.workloads import from_bench_flags  # noqa: E402
from sched_reader.analyzers.tune import run_sweep  # noqa: E402
from sched_reader.analyzers.pipeline import build_specs  # noqa: E402


def main() -> int:
    [spec] = build_specs([], ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"],
                         gpu="H100", vllm="0.19.0")
    req = from_bench_flags(dataset_name="sharegpt", num_prompts=2000, request_rate=20.0)
    grid = {
        "max_num_batched_tokens": [2048, 4096, 8192, 16384, 32768],
        "max_num_seqs": [64, 128, 256, 512, 1024],
        "gpu_memory_utilization": [0.85, 0.9, 0.95, 0.97],
        "kv_cache_dtype": ["auto", "fp8"],
    }
    n = 1
    for v in grid.values():
        n *= len(v)
    workers = int(os.environ.get("WORKERS", os.cpu_count() or 1))
    t0 = time.perf_counter()
    res = run_sweep(spec, req, grid, {"ttft": 500.0, "tpot": 50.0}, executor="local", workers=workers)
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    cpu = ru.ru_utime + ru.ru_stime + me.ru_utime + me.ru_stime
    print(f"{n} configurations x {len(req)} requests on {workers} worker(s): wall {wall:.1f} s, "
          f"CPU {cpu:.1f} s ({cpu / n * 1000:.0f} ms CPU per configuration), frontier {len(res.frontier)} points")
    print(f"cores on this machine: {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
