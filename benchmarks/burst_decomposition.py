"""Where a burst prediction goes wrong: intake floor, first-token spread, decode and mixed steps.

For every corpus row where all prompts arrive at once (``--request-rate inf`` without
``--max-concurrency``) and the source publishes mean, median and p99 TTFT, this splits the TTFT
distribution the client measured, and the one the simulator predicts, into two parts:

  first tokens spread evenly over [F, F + P] (the 1,000-prompt ShareGPT bursts of vLLM 0.9-0.11 have
  median TTFT within 2% of the mean, so the spread is close to uniform):
      mean = F + P / 2,   p99 = F + 0.99 P
      => P = (p99 - mean) / 0.49,   F = mean - P / 2 = mean - (p99 - mean) / 0.98        (seconds)
  F  the floor before any first token reaches a client: the API server's intake of the whole burst
     (models/cost/frontend.py: N x c_req, all first passes before the first hand-off) plus the first
     engine step. F / N is the intake time per request it implies (ms/request).
  P  the first-token spread: the engine's prefill phase (every prompt through the token budget while
     the decodes of earlier requests share each step).

and compares the inter-token latencies: median ITL ~ a decode step at the running batch, p99 ITL ~ a
mixed prefill+decode step at the full token budget (max_num_batched_tokens). The ratio published /
predicted of each part says which physics the prediction misses:

  F ratio > 1   intake per request longer than models/cost/frontend.py's intake_base_s (per release)
  P ratio > 1   the engine prefills a burst more slowly than the step-cost model (mixed steps)
  ITL ratios    decode-step and mixed-step time at large batch

and, by Little's law, how long requests stay between their first and last token (the decode phase):

  Sum over requests of (last - first token time) = mean ITL x (output tokens - N)   (one token per chunk:
      ``vllm bench serve`` records one ITL per streamed chunk after the first, and the gaps of a request
      add up to its last-minus-first-token time)
  D = that sum / N           the mean decode phase per request (s); mean E2E = mean TTFT + D
  L = that sum / duration    the mean number of requests between first and last token (requests)

  D ratio > 1 with duration and median ITL close (ratio ~1): the engine's steps and the run's length
      agree, but the client sees each request's tokens spread over a longer time (delivery lag behind the
      API server's streaming, models/cost/frontend.py), not slower engine steps
  D and median ITL ratios both > 1: the engine's decode steps are slower than the step-cost model

A chunk carrying several tokens (a lagging API server merges them) records fewer gaps, so D and L are
then upper bounds on the engine-side values.

The reading holds when first tokens really are spread evenly after a floor: ``skew`` = |median - mean| / P
at most 0.1 and F >= 0. A burst whose TTFT is set by waiting for KV blocks or ``max_num_seqs`` slots
(requests start one after another over the whole run) gives F < 0: printed, marked "queue-bound", and
its F and P are not read as intake and prefill.

Published and predicted distributions go through the same formula, so the comparison does not depend
on the uniform assumption being exact. Hand check (tests/accuracy/test_burst_decomposition.py): vLLM
PR #18566's Llama-3.1-8B chat burst (TTFT mean 9,626 ms, p99 12,667 ms) gives F = 6.52 s, P = 6.21 s.

Run:  python benchmarks/burst_decomposition.py [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import throughput_accuracy as ta  # noqa: E402

P99 = 0.99     # the p99 of a uniform spread over [F, F + P] is F + 0.99 P
SKEW_LIMIT = 0.1


def uniform_split(mean_s: float, p99_s: float) -> tuple[float, float]:
    """(floor F, spread P) in seconds of first tokens spread evenly over [F, F + P]."""
    spread = (p99_s - mean_s) / (P99 - 0.5)
    return mean_s - spread / 2.0, spread


def skew(mean_s: float, median_s: float, spread_s: float) -> float:
    """|median - mean| / P: 0 for a uniform (or any symmetric) spread."""
    return abs(median_s - mean_s) / spread_s if spread_s > 0 else math.inf


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if (a is not None and b) else None


def decode_phase(src: dict[str, float], num_prompts: int) -> dict[str, float | None]:
    """Little's-law reading of a run's decode phase (see the module docstring): ``decode_s_per_request`` D
    (s), ``decode_occupancy`` L (requests) and ``mean_e2e_s`` (s), None where a metric is missing. Output
    tokens: ``total_output_tokens``, else output throughput x duration."""
    itl, dur = src.get("mean_itl_ms"), src.get("duration_s")
    out_tok = src.get("total_output_tokens")
    if out_tok is None and src.get("output_throughput") is not None and dur:
        out_tok = src["output_throughput"] * dur
    if out_tok is None and src.get("output_throughput_tok_s") is not None and dur:
        out_tok = src["output_throughput_tok_s"] * dur
    if itl is None or out_tok is None or not dur or num_prompts <= 0:
        return {"decode_s_per_request": None, "decode_occupancy": None, "mean_e2e_s": None}
    total_s = itl / 1e3 * max(0.0, out_tok - num_prompts)
    ttft = src.get("mean_ttft_ms")
    return {"decode_s_per_request": total_s / num_prompts, "decode_occupancy": total_s / dur,
            "mean_e2e_s": (ttft / 1e3 + total_s / num_prompts) if ttft is not None else None}


def decompose(published: dict[str, float], predicted: dict[str, float], num_prompts: int) -> dict[str, Any]:
    """Published vs predicted F, P, implied intake per request and ITL ratios (seconds, ms)."""
    out: dict[str, Any] = {}
    for name, src in (("published", published), ("predicted", predicted)):
        mean = src.get("mean_ttft_ms")
        p99 = src.get("p99_ttft_ms")
        med = src.get("median_ttft_ms")
        if mean is None or p99 is None:
            return {}
        f, p = uniform_split(mean / 1e3, p99 / 1e3)
        out[name] = {"floor_s": f, "spread_s": p, "intake_ms_per_request": 1e3 * f / num_prompts,
                     "skew": skew(mean / 1e3, (med if med is not None else mean) / 1e3, p),
                     "median_itl_ms": src.get("median_itl_ms"), "p99_itl_ms": src.get("p99_itl_ms"),
                     "mean_tpot_ms": src.get("mean_tpot_ms"), "median_tpot_ms": src.get("median_tpot_ms"),
                     "duration_s": src.get("duration_s")}
        out[name].update(decode_phase(src, num_prompts))
    pub, pred = out["published"], out["predicted"]
    out["ratio"] = {k: _ratio(pub[k], pred[k]) for k in ("floor_s", "spread_s", "median_itl_ms", "p99_itl_ms",
                                                        "mean_tpot_ms", "median_tpot_ms", "duration_s",
                                                        "decode_s_per_request", "decode_occupancy", "mean_e2e_s")}
    out["uniform"] = pub["skew"] <= SKEW_LIMIT and pub["floor_s"] >= 0.0
    # mean TTFT = F + P / 2 exactly, so the mean-TTFT miss splits into its two parts (seconds)
    out["ttft_miss_s"] = {"floor": pub["floor_s"] - pred["floor_s"], "half_spread": (pub["spread_s"] - pred["spread_s"]) / 2}
    return out


def predicted_metrics(row: dict) -> dict[str, float] | None:
    """The simulator's bench-serve metrics for a row (the same pipeline as throughput_accuracy.py)."""
    spec = ta.build_spec(row)
    arch, gpu, cfg, ckpt = spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization
    wl = ta.build_workload(row)
    return ta.simulate_hook(arch, gpu, cfg, wl, ckpt, ta._kv_tokens_from_notes(row), ta.row_endpoint(row),
                            float(row["workload"].get("random_range_ratio") or 0.0), ta.row_warm_prefix_len(row),
                            ta.row_warm_prompts(row))


def burst_rows() -> list[dict]:
    """Corpus rows with a burst and a published TTFT distribution (mean, p99)."""
    return [r for r in ta.load_rows() if ta.regime_of(r) == "burst" and not r.get("keep_out")
            and r["results"].get("mean_ttft_ms") and r["results"].get("p99_ttft_ms")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    report = []
    for row in burst_rows():
        pred = predicted_metrics(row)
        if not pred:
            continue
        pub = dict(row["results"])
        if row["workload"].get("total_output_tokens"):
            pub["total_output_tokens"] = row["workload"]["total_output_tokens"]
        d = decompose(pub, pred, int(row["workload"].get("num_prompts") or 1000))
        if d:
            d.update({"id": row["id"], "engine_version": str(row.get("engine_version")),
                      "endpoint": ta.row_endpoint(row), "num_prompts": row["workload"].get("num_prompts")})
            report.append(d)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0

    def f(x, p=1):
        return f"{x:.{p}f}" if isinstance(x, (int, float)) else "-"

    print("TTFT floor F and spread P (s) published / predicted; implied intake ms/request; ITL ratios pub/pred;")
    print("D: mean decode phase per request (s, Little's law: mean ITL x (output tokens - N) / N); ratios pub/pred")
    print(f"{'row':50} {'vllm':7} {'F pub':>6} {'F pred':>6} {'ms/req':>11} {'P pub':>6} {'P pred':>6} "
          f"{'P x':>5} {'medITL x':>8} {'p99ITL x':>8} {'miss F':>7} {'miss P/2':>8} {'D pub':>6} {'D pred':>6} "
          f"{'D x':>5} {'dur x':>5}")
    for d in report:
        pub, pred, r = d["published"], d["predicted"], d["ratio"]
        flag = "" if d["uniform"] else "  (queue-bound or skewed: F, P not intake and prefill)"
        print(f"{d['id'][:50]:50} {d['engine_version']:7} {f(pub['floor_s']):>6} {f(pred['floor_s']):>6} "
              f"{f(pub['intake_ms_per_request']):>5}/{f(pred['intake_ms_per_request']):<5} "
              f"{f(pub['spread_s']):>6} {f(pred['spread_s']):>6} {f(r['spread_s'], 2):>5} "
              f"{f(r['median_itl_ms'], 2):>8} {f(r['p99_itl_ms'], 2):>8} {f(d['ttft_miss_s']['floor']):>7} "
              f"{f(d['ttft_miss_s']['half_spread']):>8} {f(pub['decode_s_per_request']):>6} "
              f"{f(pred['decode_s_per_request']):>6} {f(r['decode_s_per_request'], 2):>5} {f(r['duration_s'], 2):>5}{flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
