"""Honest error bars: each predicted speed metric with the range the model's measured error implies.

``data/error_bands.json`` is written by ``benchmarks/throughput_accuracy.py --write-bands`` from the
published-benchmark corpus (tests/data/throughput*.yaml). For every metric and regime it holds the
range of the log error r = ln(predicted / published) over the corpus rows; a prediction p then has the
likely range [p / exp(r_hi), p / exp(r_lo)] (r_lo, r_hi: smallest and largest r seen). The file also
records how often a row falls inside the band built WITHOUT its own source (``coverage``; about 60%
on the current 16 rows: the corpus is small and its sources disagree, so the bands are a floor on
the uncertainty, not a guarantee). Regimes:

  closed   fixed concurrency (``--max-concurrency``, batch 1 included) or a finite request rate
  burst    every prompt sent at once (``--request-rate inf``, no concurrency cap)

Dense/MoE and GPU class are reported by the benchmark but not split here: too few rows per cell.
Units: the range has the unit of its metric (tokens/s, ms).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "error_bands.json"
# metric key in the performance block -> band key in error_bands.json
METRICS = {"output_throughput": "output_throughput", "mean_tpot_ms": "tpot", "mean_ttft_ms": "ttft"}


@lru_cache(maxsize=1)
def load_bands() -> dict[str, Any]:
    """The shipped band table ({} when the file is missing)."""
    try:
        return json.loads(DATA.read_text())
    except (OSError, ValueError):
        return {}


def regime(max_concurrency: int | None, request_rate: float) -> str:
    """``closed`` (concurrency cap or finite rate) or ``burst`` (all prompts at once)."""
    if max_concurrency is not None or not math.isinf(float(request_rate)):
        return "closed"
    return "burst"


def band_range(value: float | None, metric: str, regime_name: str, bands: dict[str, Any] | None = None
               ) -> list[float] | None:
    """[low, high] likely range for ``value`` of ``metric`` (band key) in ``regime_name``; None if unknown."""
    if value is None or not isinstance(value, (int, float)) or value <= 0:
        return None
    table = (bands if bands is not None else load_bands()).get("bands", {})
    b = (table.get(regime_name) or {}).get(metric) or (table.get("all") or {}).get(metric)
    if not b:
        return None
    lo, hi = float(b["r_lo"]), float(b["r_hi"])
    return [value / math.exp(hi), value / math.exp(lo)]


def attach_ranges(perf: dict[str, Any], max_concurrency: int | None, request_rate: float) -> dict[str, Any]:
    """Add ``<metric>_range`` ([low, high]) for output throughput, mean TPOT and mean TTFT, and an
    ``error_bands`` note naming the regime and the corpus behind them. Returns ``perf`` (updated)."""
    bands = load_bands()
    if not bands:
        return perf
    reg = regime(max_concurrency, request_rate)
    for key, metric in METRICS.items():
        rng = band_range(perf.get(key), metric, reg, bands)
        if rng is not None:
            perf[f"{key}_range"] = rng
    cell = (bands.get("bands") or {}).get(reg) or {}
    perf["error_bands"] = {
        "regime": reg,
        "coverage": bands.get("coverage"),
        "rows": {m: (cell.get(m) or {}).get("n") for m in METRICS.values()},
        "source": bands.get("source"),
    }
    return perf
