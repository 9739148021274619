"""Accuracy of the cost model against published vLLM serving benchmarks (tests/data/throughput.yaml).

For every vLLM row whose model and GPU the catalogs resolve, the row's `vllm serve` command line is
replayed through sched-reader's own pipeline (spec builder: the release's defaults for the GPU, the
model catalog), the workload is rebuilt from its
``vllm bench serve`` arguments, and the prediction is compared with the published results:
output throughput, mean TPOT and mean TTFT (median when the source gives only the median), and
median TPOT where published (the closed form's median equals its mean).

Rows are grouped by how they can be predicted:
  steady      closed loop (--max-concurrency) or finite request rate below saturation: closed form
  burst       all requests at once (request rate inf, many prompts): needs queueing. When
              ``sched_reader.analyzers.simulator.simulate`` exists it is called (hook below); until
              then the closed-form burst approximation is used and the row is marked "sim-pending".
Rows needing V0 multi-step scheduling (--num-scheduler-steps) are predicted as single-step and marked.

Run:  python benchmarks/throughput_accuracy.py [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_reader.errors import SchedReaderError  # noqa: E402
from sched_reader.models.cost.iteration import IterationCostModel  # noqa: E402
from sched_reader.models.cost.performance import estimate_performance  # noqa: E402
from sched_reader.models.spec_builder import build_specs  # noqa: E402
from sched_reader.models.workload import Workload  # noqa: E402

DATA = ROOT / "tests" / "data"
METRICS = (("output_throughput", "output_throughput_tok_s"), ("tpot", "tpot_ms"), ("ttft", "ttft_ms"),
           ("median_tpot", "median_tpot_ms"))


def row_argv(row: dict) -> list[str]:
    """The `vllm serve` command line the row states (vLLM's defaults for the rest come from sched-reader)."""
    flags = row.get("config_flags") or {}
    other = flags.get("other") or {}
    argv = ["vllm", "serve", row["model"]]
    for key, flag in (("tensor_parallel_size", "--tensor-parallel-size"),
                      ("pipeline_parallel_size", "--pipeline-parallel-size"),
                      ("data_parallel_size", "--data-parallel-size"),
                      ("max_model_len", "--max-model-len"), ("gpu_memory_utilization", "--gpu-memory-utilization")):
        v = row.get(key)
        if isinstance(v, (int, float)) and not (key.endswith("_size") and v == 1):
            argv += [flag, str(v)]
    for key in ("max_num_seqs", "max_num_batched_tokens"):
        if flags.get(key):
            argv += ["--" + key.replace("_", "-"), str(flags[key])]
    for key in ("enable_chunked_prefill", "enable_prefix_caching"):
        if flags.get(key) is True:
            argv += ["--" + key.replace("_", "-")]
    if other.get("async_scheduling"):
        argv += ["--async-scheduling"]
    return argv


def build_spec(row: dict):
    """The row's engine spec through sched-reader's own pipeline (release defaults, catalogs)."""
    [spec] = build_specs([], row_argv(row), gpu=row["gpu"], vllm=str(row["engine_version"]))
    return spec


def build_workload(row: dict) -> Workload:
    w = row["workload"]
    ds = "sharegpt" if "sharegpt" in str(w.get("dataset") or "").lower() else "random"
    rate = w.get("request_rate")
    return Workload(dataset_name=ds, random_input_len=w.get("input_len") or 1024,
                    random_output_len=w.get("output_len") or 128, num_prompts=w.get("num_prompts") or 1000,
                    request_rate="inf" if rate in (None, "inf") else rate, max_concurrency=w.get("max_concurrency"))


def row_endpoint(row: dict) -> str:
    """API entry point the row's client called: "chat" for --backend openai-chat / /v1/chat/completions."""
    tool = str((row.get("workload") or {}).get("benchmark_tool") or "")
    return "chat" if ("openai-chat" in tool or "chat/completions" in tool) else "completions"


def _kv_tokens_from_notes(row: dict) -> int | None:
    """KV pool size when the row quotes it from the server's startup log."""
    import re

    m = re.search(r"KV pool ([\d,]+) tokens", str(row.get("notes") or ""))
    return int(m.group(1).replace(",", "")) if m else None


def simulate_hook(arch, gpu, cfg, workload: Workload, ckpt, kv_tokens, endpoint: str | None = None) -> dict | None:
    """Run engineer E's simulator (``sched_reader.analyzers.simulator``) on this row when it exists:
    requests from the bench flags, vLLM scheduler params for ``cfg`` and the KV block budget, and this
    package's IterationCostModel as the step cost. Returns its bench-serve metric dict."""
    try:
        from sched_reader.analyzers.simulator import from_bench_flags, params_for, simulate
    except ImportError:
        return None
    if kv_tokens is None:
        from sched_reader.models.capacity import estimate_capacity

        kv_tokens = int(estimate_capacity(arch, gpu, cfg, ckpt).kv_cache.tokens)
    requests = from_bench_flags(dataset_name=workload.dataset_name, random_input_len=workload.random_input_len,
                                random_output_len=workload.random_output_len, num_prompts=workload.num_prompts,
                                request_rate=workload.request_rate, max_concurrency=workload.max_concurrency)
    from sched_reader.analyzers.simulator.api import with_frontend_latency

    params = params_for("vllm", cfg, kv_tokens // max(1, cfg.block_size))
    return with_frontend_latency(simulate(requests, params, IterationCostModel(arch, gpu, cfg, ckpt)),
                                 endpoint or "completions")


def _published(results: dict, metric: str) -> tuple[float | None, str]:
    if metric == "output_throughput":
        return results.get("output_throughput_tok_s"), "output_throughput"
    if metric.startswith("median_"):
        return results.get(f"{metric}_ms"), f"{metric}_ms"
    for stat in ("mean", "median"):
        v = results.get(f"{stat}_{metric}_ms")
        if v is not None:
            return v, f"{stat}_{metric}_ms"
    return None, ""


def evaluate_row(row: dict, use_simulator: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"id": row["id"], "source_url": row["source_url"]}
    try:
        spec = build_spec(row)
    except SchedReaderError as exc:
        out["status"] = f"skipped: {exc}"
        return out
    arch, gpu, cfg, ckpt = spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization
    wl = build_workload(row)
    kv = _kv_tokens_from_notes(row)
    steady = wl.max_concurrency is not None or not math.isinf(wl.request_rate)
    pred = None
    kind = "steady" if steady else "burst"
    if not steady and use_simulator:
        pred = simulate_hook(arch, gpu, cfg, wl, ckpt, kv, row_endpoint(row))
        if pred is not None:
            kind = "burst (simulator)"
    if pred is None:
        pred = estimate_performance(arch, gpu, cfg, wl, ckpt, kv_tokens=kv, endpoint=row_endpoint(row))
        if not steady:
            kind = "burst (closed form, sim-pending)"
    other = (row.get("config_flags") or {}).get("other") or {}
    if other.get("num_scheduler_steps"):
        kind += f", multi-step {other['num_scheduler_steps']} not modelled"
    out["kind"] = kind
    out["status"] = "ok"
    res = row["results"]
    for metric, _ in METRICS:
        pub, key = _published(res, metric)
        if metric == "output_throughput":
            p = pred.get("output_throughput")
        elif metric.startswith("median_"):
            p = pred.get(f"{metric}_ms")
        else:
            p = pred.get(f"mean_{metric}_ms")
        if metric == "median_tpot" and out.get("tpot", {}).get("published_key") == "median_tpot_ms":
            pub = None  # already compared under "tpot" (the source gives only the median)
        out[metric] = {"published": pub, "published_key": key, "predicted": p,
                       "error_pct": (100.0 * (p - pub) / pub) if (pub and p is not None) else None}
    return out


def summarize(rows: list[dict]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for group in ("steady", "burst", "all"):
        sel = [r for r in rows if r.get("status") == "ok" and (group == "all" or r["kind"].startswith(group))]
        g: dict[str, Any] = {"rows": len(sel)}
        for metric, _ in METRICS:
            errs = [abs(r[metric]["error_pct"]) for r in sel if r[metric]["error_pct"] is not None]
            g[metric] = {"n": len(errs), "median_abs_error_pct": statistics.median(errs) if errs else None}
        summary[group] = g
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--no-simulator", action="store_true", help="closed form only")
    args = ap.parse_args(argv)
    rows = [r for r in yaml.safe_load((DATA / "throughput.yaml").read_text()) if r.get("engine") == "vllm"]
    results = [evaluate_row(r, not args.no_simulator) for r in rows]
    summary = summarize(results)
    if args.json:
        print(json.dumps({"rows": results, "summary": summary}, indent=2))
        return 0

    def f(x, w=9, p=1):
        return f"{x:>{w}.{p}f}" if isinstance(x, (int, float)) else f"{'-':>{w}}"

    print(f"{'row':58} {'metric':18} {'published':>10} {'predicted':>10} {'err %':>8}  kind")
    for r in results:
        if r["status"] != "ok":
            print(f"{r['id'][:58]:58} {r['status']}")
            continue
        for metric, _ in METRICS:
            m = r[metric]
            if m["published"] is None:
                continue
            print(f"{r['id'][:58]:58} {m['published_key'][:18]:18} {f(m['published'], 10)} "
                  f"{f(m['predicted'], 10)} {f(m['error_pct'], 8)}  {r['kind']}")
    print()
    for group, g in summary.items():
        parts = [f"{metric}: {f(g[metric]['median_abs_error_pct'], 6)}% (n={g[metric]['n']})" for metric, _ in METRICS]
        print(f"median |error| {group:7} rows={g['rows']:2}  " + "  ".join(parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
