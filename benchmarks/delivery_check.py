"""Can the API server's token delivery explain the mean TPOT that bursts measure above the prediction?

Every burst row of the corpus (all prompts at once; kept-out sources included, reported, never used to
set anything) is simulated three ways, with everything else as ``throughput_accuracy.py`` predicts it:

  model      the API-server model as shipped (models/cost/frontend.py: intake through the event loop and
             the tokenizer thread, every streamed token API_OUTPUT_TOKEN_S of event-loop time)
  no-stream  the same intake, streamed tokens free (output_token_s ~ 0): the engine's own TPOT as the
             client would see it without any delivery backlog
  2x         every streamed token twice API_OUTPUT_TOKEN_S (144 us): what a slower chat streaming path
             would do (the size the previous round's analysis said TPOT would need)

and the table prints the published mean and median TPOT beside the three, the model's peak event-loop
load from streaming (the engine's highest token rate, tokens of every running request spread evenly
between their first and last token, x API_OUTPUT_TOKEN_S) and the TPOT each variant gives.

A fourth run is an attribution, not a prediction: every engine step that carries prefill tokens (a
mixed step) takes X times the cost model's time, X = published p99 ITL / the model's p99 ITL (the p99
inter-token gap of a burst is a step at the full token budget: prefill chunks plus the running decodes),
API server as shipped. Where this closes the TPOT and TTFT gaps, the miss is the engine's mixed steps
(short ShareGPT replies decode entirely inside the prefill flood, so their TPOT is a mixed step and they
carry the mean), not delivery.

What it tests. The hypothesis: requests' intake work (chat template, tokenizer hand-offs) shares the one
asyncio event loop with the output handler, so tokens reach the client late and in bunches and the
client's per-request decode phase (mean TPOT) stretches while the engine's speed is unchanged. The
order of work in vLLM 0.10-0.11's API server (read in the release wheels; see the frontend.py
docstring): a burst's request handlers all run their first pass (template render) before any of them
resumes after its tokenizer hand-off, so the engine receives nothing until the intake is done, and no
token exists while intake work is queued. Even where one did (requests sent over time), a token held
behind intake work is one emitted EARLY in its request's life (intake happens before decoding):
``vllm bench serve`` measures TPOT = (last token time - first token time) / (output tokens - 1), so
delaying a request's early tokens more than its late ones lowers its TPOT. Only a backlog that GROWS
over a request's decode phase raises it: streaming work above the event loop's capacity (load > 1),
which the 'model' and '2x' columns carry.

Run:  python benchmarks/delivery_check.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import throughput_accuracy as ta  # noqa: E402
from sched_reader.analyzers.simulator import api as sim_api  # noqa: E402
from sched_reader.models.cost import frontend as fe  # noqa: E402

KEYS = ("mean_tpot_ms", "median_tpot_ms", "mean_ttft_ms", "p99_itl_ms", "output_throughput")
VARIANTS = {"model": 1.0, "no-stream": 1e-9, "2x": 2.0}  # no-stream: 72 fs per token (0 divides by zero)


def _peak_load(first_s: np.ndarray, finish_s: np.ndarray, output_len: np.ndarray, token_s: float) -> float:
    """Highest streaming load of the event loop over 0.5 s windows: the engine's token rate (tokens of
    each request spread evenly between its first and last token) x ``token_s`` seconds per token."""
    span = finish_s - first_s
    rate = np.where(span > 0, np.maximum(output_len - 1, 0) / np.where(span > 0, span, 1.0), 0.0)
    grid = np.arange(0.0, float(finish_s.max(initial=0.0)) + 0.5, 0.5)
    live = (first_s[None, :] <= grid[:, None]) & (finish_s[None, :] > grid[:, None])
    return float((live @ rate).max(initial=0.0)) * token_s


class MixedScaled:
    """A step cost whose steps with prefill tokens take ``x`` times ``base``'s time (decode-only steps and
    every other method unchanged). Not an IterationCostModel, so the simulator calls its step_time."""

    def __init__(self, base: Any, x: float) -> None:
        self.base, self.x = base, x

    def step_time(self, num_decode: int, decode_context_sum: int, prefill_tokens: int,
                  prefill_attn_pairs: float = 0.0, num_prefill: int = 0) -> float:
        t = self.base.step_time(num_decode, decode_context_sum, prefill_tokens, prefill_attn_pairs, num_prefill)
        return t * self.x if (prefill_tokens or num_prefill) else t

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)


def run_row(row: dict) -> dict[str, Any] | None:
    """Published TPOT and the three variants' predictions for one burst row (ms, tok/s, load)."""
    spec = ta.build_spec(row)
    arch, gpu, cfg, ckpt = spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization
    wl = ta.build_workload(row)
    kv = ta._kv_tokens_from_notes(row)
    endpoint = ta.row_endpoint(row)
    rr = float(row["workload"].get("random_range_ratio") or 0.0)
    warm = ta.row_warm_prefix_len(row)
    warm_k = ta.row_warm_prompts(row)
    out: dict[str, Any] = {"id": row["id"], "engine_version": str(row.get("engine_version")),
                           "published": {k: row["results"].get(k) for k in
                                         ("mean_tpot_ms", "median_tpot_ms", "mean_ttft_ms", "p99_itl_ms",
                                          "output_throughput_tok_s")}}
    base = fe.api_server_for
    seen: dict[str, Any] = {}
    orig_client = sim_api._client_times

    def spy(run, frontend, sent_s, requests):
        seen.update(first=np.asarray(run.rec.first_ns, np.float64) / 1e9,
                    finish=np.asarray(run.rec.finish_ns, np.float64) / 1e9, out=np.asarray(run.target, np.float64))
        return orig_client(run, frontend, sent_s, requests)

    try:
        sim_api._client_times = spy
        for name, scale in VARIANTS.items():
            def patched(*a, _s=scale, **k):
                m = base(*a, **k)
                return None if m is None else replace(m, output_token_s=m.output_token_s * _s)
            fe.api_server_for = patched
            pred = ta.simulate_hook(arch, gpu, cfg, wl, ckpt, kv, endpoint, rr, warm, warm_k)
            if not pred:
                return None
            out[name] = {k: pred.get(k) for k in KEYS}
            if name == "model" and seen:
                out["peak_stream_load"] = _peak_load(seen["first"], seen["finish"], seen["out"], fe.API_OUTPUT_TOKEN_S)
        fe.api_server_for = base
        pub_p99, model_p99 = out["published"]["p99_itl_ms"], out["model"].get("p99_itl_ms")
        if pub_p99 and model_p99:
            x = pub_p99 / model_p99
            cost_cls = ta.IterationCostModel
            ta.IterationCostModel = lambda *a, _c=cost_cls, _x=x, **k: MixedScaled(_c(*a, **k), _x)
            try:
                pred = ta.simulate_hook(arch, gpu, cfg, wl, ckpt, kv, endpoint, rr, warm, warm_k)
            finally:
                ta.IterationCostModel = cost_cls
            out["mixed_x"] = x
            out["mixed"] = {k: pred.get(k) for k in KEYS} if pred else None
    finally:
        fe.api_server_for = base
        sim_api._client_times = orig_client
    return out


def burst_rows() -> list[dict]:
    """Burst rows with a published mean TPOT (kept-out sources included)."""
    return [r for r in ta.load_rows() if ta.regime_of(r) == "burst" and r["results"].get("mean_tpot_ms")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    report = []
    for row in burst_rows():
        try:
            r = run_row(row)
        except Exception as exc:  # a row the pipeline cannot build: say so, go on
            print(f"{row['id']}: skipped ({exc})", file=sys.stderr)
            continue
        if r:
            report.append(r)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0

    def f(x):
        return f"{x:.1f}" if isinstance(x, (int, float)) else "-"

    print("mean / median TPOT (ms): published, then predicted with the API-server model as shipped, with streamed")
    print("tokens free (no delivery backlog) and at 2x the per-token cost; load: peak streaming load of the event loop")
    print("mixed: attribution run, steps with prefill tokens X = published / model p99 ITL times slower; TTFT (s)")
    print(f"{'row':52} {'vllm':8} {'published':>13} {'model':>13} {'no-stream':>13} {'2x':>13} {'load':>5} "
          f"{'X':>5} {'mixed':>13} {'TTFT pub/model/mixed':>20}")
    for r in report:
        pub = r["published"]
        mixed = r.get("mixed") or {}
        cols = [f"{f(pub['mean_tpot_ms'])}/{f(pub['median_tpot_ms'])}"]
        cols += [f"{f(r[n]['mean_tpot_ms'])}/{f(r[n]['median_tpot_ms'])}" for n in VARIANTS]
        ttft = "/".join(f(v / 1e3) if isinstance(v, (int, float)) else "-" for v in
                        (pub.get("mean_ttft_ms"), r["model"].get("mean_ttft_ms"), mixed.get("mean_ttft_ms")))
        print(f"{r['id'][:52]:52} {r['engine_version'][:8]:8} " + " ".join(f"{c:>13}" for c in cols)
              + f" {r.get('peak_stream_load', 0.0):5.2f} {f(r.get('mixed_x')) if r.get('mixed_x') else '-':>5}"
              + f" {f(mixed.get('mean_tpot_ms')) + '/' + f(mixed.get('median_tpot_ms')) if mixed else '-':>13} {ttft:>20}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
