"""Speed of the event-driven simulator: 100,000 ShareGPT-like requests, Poisson arrivals.

Usage: python benchmarks/simulate_speed.py [--num-prompts N] [--rate R] [--cost toy|model|both]
                                           [--spec K] [--trace-memory]

``toy``: the analytic LinearStepCost (12 ms + 30 us/token + 2 ns/context token);
``model``: engineer D's IterationCostModel for Llama-3.1-8B on an H100 (if the catalog resolves it);
``both`` (default): one after the other, each in a fresh child process so that the peak RSS of each is
its own. ``--spec K``: the model run with EAGLE speculative decoding, K draft tokens.
Prints wall time of the simulation, of the metric summary, and peak RSS (plus traced peak with
``--trace-memory``, which slows the run down).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sched_reader.analyzers.simulator import LinearStepCost, from_bench_flags, params_for  # noqa: E402
from sched_reader.analyzers.simulator.engine import run_engine  # noqa: E402
from sched_reader.analyzers.simulator.metrics import summarize  # noqa: E402


def _model_cost(spec_k: int = 0):
    from sched_reader.analyzers.simulator.api import engine_inputs
    from sched_reader.analyzers.pipeline import build_specs

    spec = build_specs([], ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"])[0]
    cost, blocks = engine_inputs(spec)
    cfg = spec.effective
    if spec_k:
        cfg = cfg.model_copy(update={"speculative": {"method": "eagle", "num_speculative_tokens": spec_k}})
    return cost, blocks, cfg


def run_one(a: argparse.Namespace, which: str) -> None:
    req = from_bench_flags(dataset_name="sharegpt", num_prompts=a.num_prompts, request_rate=a.rate, seed=0)
    if which == "model":
        cost, blocks, cfg = _model_cost(a.spec)
    else:
        cost, blocks = LinearStepCost(base_s=0.012, per_token_s=3e-5, per_ctx_s=2e-9), 40_000
        cfg = dict(block_size=16, max_num_seqs=256, max_num_batched_tokens=8192, max_model_len=4096)
    params = params_for("vllm", cfg, blocks)
    if a.trace_memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    eng = run_engine(req, params, cost)
    t1 = time.perf_counter()
    res = summarize(eng.rec, eng.send_ns, eng.prompt, eng.target)
    t2 = time.perf_counter()
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if a.trace_memory else None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    label = which + (f"+spec{a.spec}" if which == "model" and a.spec else "")
    print(f"[{label}] requests {len(req)}  steps {eng.rec.steps}  fast {eng.fast_steps}  slow {eng.slow_steps}  "
          f"stretches {eng.stretches}")
    print(f"[{label}] simulate {t1 - t0:.2f} s  summarize {t2 - t1:.2f} s  total {t2 - t0:.2f} s  "
          f"peak RSS {rss:.0f} MiB" + (f"  traced peak {peak:.0f} MiB" if peak is not None else ""))
    print(f"[{label}] output tok/s {res['output_throughput']:.0f}  p99 ITL {res['p99_itl_ms']:.1f} ms  "
          f"mean TTFT {res['mean_ttft_ms']:.1f} ms  mean TPOT {res['mean_tpot_ms']:.2f} ms  "
          f"preemptions {res['preemptions']}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--num-prompts", type=int, default=100_000)
    ap.add_argument("--rate", type=float, default=30.0)
    ap.add_argument("--cost", choices=["toy", "model", "both"], default="both")
    ap.add_argument("--spec", type=int, default=0, help="model run with EAGLE, this many draft tokens")
    ap.add_argument("--trace-memory", action="store_true", help="tracemalloc (slows the run down)")
    a = ap.parse_args()
    if a.cost != "both":
        run_one(a, a.cost)
        return
    for which in ("toy", "model"):   # a child each: separate peak RSS
        argv = [sys.executable, __file__, "--cost", which, "--num-prompts", str(a.num_prompts),
                "--rate", str(a.rate), "--spec", str(a.spec)] + (["--trace-memory"] if a.trace_memory else [])
        subprocess.run(argv, check=True)


if __name__ == "__main__":
    main()
