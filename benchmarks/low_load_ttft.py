"""How much of a low-load TTFT the corpus leaves to time outside the engine, per source and per vLLM release.

At low load (one client, or a request rate the engine keeps up with) a request's TTFT is the engine's part
(the wait for the step in flight, its prefill step or steps, the first token's output step; the simulator)
plus a fixed share outside the engine that the prediction adds per request (models/cost/steady_state.py
``frontend_ttft_s``: 34.4 ms for /v1/completions, more for a chat entry point that re-parses its template).
For every corpus row of the batch1 and rate regimes (benchmarks/throughput_accuracy.py ``regime_of``) this
splits the prediction into those two parts and reads the share the published TTFT leaves:

  engine part   E = predicted TTFT - share                       (ms)
  implied share S = published TTFT - E                           (ms)

S is the fixed time the row's deployment spent outside vLLM's engine only where the engine part is right;
a row whose engine part is wrong (a saturating engine, a prefill cost the model misses) shows up as a
negative or very large S, so the per-source and per-release summaries print medians over rows whose
published TTFT is under LOW_LOAD_TTFT_MS (a low-load TTFT by its size, whatever the prediction says).

What vLLM's own code puts on that path is small: models/cost/frontend.py charges the API server's intake
(1.0 ms per completions request, 0.3 ms of it the hand-off) and ~10 us per streamed chunk
(tools/measure_stream_chunk_cost.py); the engine core's loop has no fixed wait between a request's arrival
and the next step (vllm/v1/engine/core.py: the busy loop blocks on its input queue while idle and
sleeps only while requests wait on remote KV). A share that differs between sources by tens of
milliseconds therefore belongs to the deployment (client host, proxy, network), not to a release.

Run:  python benchmarks/low_load_ttft.py [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import throughput_accuracy as TA  # noqa: E402
from sched_reader.errors import SchedReaderError  # noqa: E402
from sched_reader.models.cost.frontend import endpoint_for  # noqa: E402
from sched_reader.models.cost.steady_state import frontend_ttft_s  # noqa: E402

REGIMES = ("batch1", "rate")
# a published TTFT under this is a low-load one by its size: a few prefill steps and the fixed share (ms)
LOW_LOAD_TTFT_MS = 150.0


def split_ttft(published_ms: float, predicted_ms: float, share_ms: float) -> dict[str, float]:
    """The engine part of a predicted TTFT (the prediction less its fixed share) and the fixed share the
    published TTFT leaves over that engine part (ms)."""
    engine = predicted_ms - share_ms
    return {"engine_ms": engine, "implied_share_ms": published_ms - engine, "model_share_ms": share_ms}


def row_share_ms(row: dict) -> float:
    """The fixed TTFT share (ms) the prediction of ``row`` contains (its entry point and release)."""
    spec = TA.build_spec(row)
    endpoint = endpoint_for(TA.row_endpoint(row), getattr(spec.arch, "model_type", None), spec.effective.vllm_version)
    return 1e3 * frontend_ttft_s(endpoint)


def analyse() -> list[dict]:
    out = []
    for row in TA.load_rows():
        if row.get("keep_out") or TA.regime_of(row) not in REGIMES:
            continue
        try:
            res = TA.evaluate_row(row)
            share = row_share_ms(row)
        except SchedReaderError:
            continue
        t = res.get("ttft") or {}
        if t.get("published") is None or t.get("predicted") is None:
            continue
        out.append({"id": row["id"], "source": TA.source_of(row), "release": str(row.get("engine_version")),
                    "regime": TA.regime_of(row), "published_ms": t["published"], "predicted_ms": t["predicted"],
                    **split_ttft(t["published"], t["predicted"], share)})
    return out


def summary(rows: list[dict], key: str) -> dict[str, dict]:
    groups: dict[str, list[float]] = {}
    for r in rows:
        if r["published_ms"] < LOW_LOAD_TTFT_MS:
            groups.setdefault(r[key], []).append(r["implied_share_ms"])
    return {k: {"rows": len(v), "median_implied_share_ms": statistics.median(v), "min": min(v), "max": max(v)}
            for k, v in sorted(groups.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = analyse()
    result = {"rows": rows, "by_source": summary(rows, "source"), "by_release": summary(rows, "release")}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{'row':60s} {'release':8s} {'pub':>8s} {'pred':>8s} {'engine':>8s} {'implied':>8s}  (TTFT ms; model share)")
    for r in sorted(rows, key=lambda r: (r["source"], r["id"])):
        print(f"{r['id'][:60]:60s} {r['release']:8s} {r['published_ms']:8.1f} {r['predicted_ms']:8.1f} "
              f"{r['engine_ms']:8.1f} {r['implied_share_ms']:8.1f}  ({r['model_share_ms']:.1f})")
    for key in ("by_source", "by_release"):
        print(f"\n{key.replace('_', ' ')}: rows with published TTFT < {LOW_LOAD_TTFT_MS:.0f} ms, implied share (ms) "
              "median [min .. max]")
        for k, s in result[key].items():
            print(f"  {k:28s} n={s['rows']:3d}  {s['median_implied_share_ms']:7.1f}  [{s['min']:.1f} .. {s['max']:.1f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
