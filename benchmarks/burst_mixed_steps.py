"""Diagnostic: how much of a burst's TPOT / TTFT / throughput error the prefill flood's mixed steps carry.

In a ``--request-rate inf`` burst every engine step of the prefill flood carries a full token budget of prompt
chunks beside the running decodes; the client's p99 ITL is such a step (about 7-12% of a 1,000-prompt ShareGPT
burst's gaps fall in the flood). Requests with short replies decode entirely inside the flood, so their TPOT is
the mixed step, and ``vllm bench serve`` averages TPOT over requests. This script asks one question per row:
if every step carrying at least ``--threshold`` prompt tokens took ``s`` times the cost model's time, with
``s`` = published / predicted p99 ITL of the row itself, what would the other metrics be? A row whose TPOT,
TTFT and duration all fall in line at that ``s`` (median ITL untouched) has its errors in the flood's steps;
a row that stays off has its error elsewhere (decode steps, delivery). ``s`` is read from the row it is applied
to: this is a decomposition of one row's error, never a constant for the model.

Run:  python benchmarks/burst_mixed_steps.py [ROW_ID ...]   (default: the rows below, ~1 min each)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import throughput_accuracy as ta  # noqa: E402

ROWS = ("gpustack-vllm-qwen3-14b-h100-sharegpt", "gpustack-vllm-gpt-oss-120b-2xh100-tp2-async-sharegpt",
        "gpustack-vllm-gpt-oss-20b-a100-sharegpt", "gpustack-vllm-deepseek-r1-0528-8xh200-tp8-sharegpt",
        "vllm-pr20308-before-triton-llama31-8b-1xh100-sharegpt1000-inf")
KEYS = (("duration_s", "duration_s"), ("output_throughput", "output_throughput_tok_s"),
        ("mean_ttft_ms", "mean_ttft_ms"), ("mean_tpot_ms", "mean_tpot_ms"), ("median_tpot_ms", "median_tpot_ms"),
        ("median_itl_ms", "median_itl_ms"), ("p99_itl_ms", "p99_itl_ms"))


class ScaledMixed:
    """A step cost whose steps with at least ``threshold`` prompt tokens take ``scale`` x the model's time."""

    def __init__(self, model, scale: float, threshold: int) -> None:
        self.model, self.scale, self.threshold, self.dp = model, scale, threshold, model.dp

    def step_time(self, num_decode, decode_context_sum, prefill_tokens, prefill_attn_pairs, num_prefill_seqs=0):
        t = self.model.step_time(num_decode, decode_context_sum, prefill_tokens, prefill_attn_pairs, num_prefill_seqs)
        return t * self.scale if prefill_tokens >= self.threshold else t


def run(row: dict, scale: float, threshold: int) -> dict:
    from sched_reader.analyzers.simulator import params_for, simulate
    from sched_reader.analyzers.simulator.api import with_frontend_latency
    from sched_reader.models.capacity import estimate_capacity
    from sched_reader.models.cost.frontend import api_server_for, endpoint_for
    from sched_reader.models.cost.iteration import IterationCostModel

    spec = ta.build_spec(row)
    arch, gpu, cfg, ckpt = spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization
    kv = ta._kv_tokens_from_notes(row) or int(estimate_capacity(arch, gpu, cfg, ckpt).kv_cache.tokens)
    params = params_for("vllm", cfg, kv // max(1, cfg.block_size))
    ep = endpoint_for(ta.row_endpoint(row), getattr(arch, "model_type", None), cfg.vllm_version)
    cost = ScaledMixed(IterationCostModel(arch, gpu, cfg, ckpt), scale, threshold)
    return with_frontend_latency(simulate(ta.row_requests(ta.build_workload(row)), params, cost,
                                          frontend=api_server_for(ep, cfg.vllm_version)), ep)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", default=list(ROWS))
    ap.add_argument("--threshold", type=int, default=1024, help="prompt tokens that make a step a flood step")
    a = ap.parse_args(argv)
    rows = {r["id"]: r for r in ta.load_rows()}
    for rid in a.rows:
        row = rows[rid]
        pub = row["results"]
        base = run(row, 1.0, a.threshold)
        scale = (pub["p99_itl_ms"] / base["p99_itl_ms"]) if pub.get("p99_itl_ms") else 1.0
        scaled = run(row, scale, a.threshold) if scale != 1.0 else base
        print(f"{rid}  (flood steps x {scale:.2f} = published / predicted p99 ITL)")
        for key, pkey in KEYS:
            p = pub.get(pkey)
            if p is None:
                continue
            e0, e1 = 100 * (base[key] / p - 1), 100 * (scaled[key] / p - 1)
            print(f"  {key:18s} published {p:10.1f}  model {base[key]:10.1f} ({e0:+6.1f}%)  "
                  f"flood x{scale:.2f} {scaled[key]:10.1f} ({e1:+6.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
