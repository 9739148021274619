"""Honest error bars: each predicted speed metric with the range the model's measured error implies.

``data/error_bands.json`` is written by ``benchmarks/throughput_accuracy.py --write-bands`` from the
published-benchmark corpus (tests/data/throughput*.yaml). For every metric and regime it holds the
quantiles (``quantiles``, e.g. 0.0 and 1.0 = the smallest and largest error seen) of the log error
r = ln(predicted / published) over the corpus rows of that regime, and their median. A prediction p
then has the likely range

    [p / exp(max(r_hi, 0)), p / exp(min(r_lo, 0))]

i.e. the estimate times the error factors seen on comparable published cases, widened to include
1.0x so that the range ALWAYS contains the point estimate (a range that excluded the printed number
would contradict it). The range is not shifted to correct a bias: when the corpus shows the model
systematically low or high in a regime (median |r| above BIAS_NOTE_LOG, with at least BIAS_NOTE_MIN_N
rows) the JSON and --explain carry a note saying so instead. The file also records how often a row
falls inside the band built WITHOUT its own source (``coverage``: the corpus is small and its sources
disagree, so the bands are a floor on the uncertainty, not a guarantee). Regimes:

  closed   fixed concurrency (``--max-concurrency``, batch 1 included) or a finite request rate
  burst    every prompt sent at once (``--request-rate inf``, no concurrency cap)

Within a regime, dense and mixture-of-experts models have their own cells (``closed/dense``,
``closed/moe``, ``burst/dense``, ``burst/moe``) where at least BAND_MIN_ROWS corpus rows back the metric;
otherwise the kind's cell over both regimes (``dense``, ``moe``, same test), then the regime's cell, else
the ``all`` cell. GPU class is reported by the benchmark but not split
here: too few rows per cell.
Units: the range has the unit of its metric (tokens/s, ms); log errors are natural logs (unitless).
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
# A regime's median log error beyond ln(1.2) (the model 20% off in the median) is reported as a bias note.
BIAS_NOTE_LOG = math.log(1.2)
# ... but only when at least this many corpus rows back the median (fewer is anecdote, not a bias).
BIAS_NOTE_MIN_N = 4
_WHAT = {"output_throughput": "output throughput", "tpot": "mean TPOT", "ttft": "mean TTFT"}
# A dense/MoE cell of a regime is used only when at least this many corpus rows back its metric.
BAND_MIN_ROWS = 8
MOE_KEYS = ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts")


def model_kind(arch: Any) -> str | None:
    """``moe`` when the model config names routed experts, ``dense`` otherwise; None without a model."""
    if arch is None:
        return None
    return "moe" if any(arch.get(k) for k in MOE_KEYS) else "dense"


@lru_cache(maxsize=1)
def load_bands() -> dict[str, Any]:
    """The shipped band table ({} when the file is missing)."""
    try:
        return json.loads(DATA.read_text())
    except (OSError, ValueError):
        return {}


def cap_binds(max_concurrency: int | None, num_prompts: int | None = None) -> bool:
    """Whether a ``--max-concurrency`` cap holds requests back: set, and below ``num_prompts`` when that is known
    (a cap at or above the prompt count never binds)."""
    return bool(max_concurrency) and not (isinstance(num_prompts, int) and max_concurrency >= num_prompts)


def regime(max_concurrency: int | None, request_rate: float, num_prompts: int | None = None) -> str:
    """``closed`` (a concurrency cap that binds, or a finite rate) or ``burst`` (all prompts at once; a cap at or
    above ``num_prompts`` never binds, so such a run is a burst too)."""
    if cap_binds(max_concurrency, num_prompts) or not math.isinf(float(request_rate)):
        return "closed"
    return "burst"


def band_cell(metric: str, regime_name: str, bands: dict[str, Any], kind: str | None = None
          ) -> tuple[str, dict[str, Any]] | None:
    """(cell actually used, band cell) for ``metric``: the regime's dense/MoE cell when it has at least
    BAND_MIN_ROWS rows, else the model kind's cell over both regimes (same test), else the regime's own cell,
    else the ``all`` cell: a dense model is compared with dense models before MoE ones of its regime."""
    table = bands.get("bands", {})
    for key in ((f"{regime_name}/{kind}", kind) if kind else ()):
        b = (table.get(key) or {}).get(metric)
        if b and int(b.get("n") or 0) >= BAND_MIN_ROWS:
            return key, b
    b = (table.get(regime_name) or {}).get(metric)
    if b:
        return regime_name, b
    b = (table.get("all") or {}).get(metric)
    return ("all", b) if b else None


def band_range(value: float | None, metric: str, regime_name: str, bands: dict[str, Any] | None = None,
               kind: str | None = None) -> list[float] | None:
    """[low, high] likely range for ``value`` of ``metric`` (band key) in ``regime_name``; None if unknown.
    Always low <= value <= high: the error quantiles are widened to include r = 0 (1.0x)."""
    if value is None or not isinstance(value, (int, float)) or value <= 0:
        return None
    found = band_cell(metric, regime_name, bands if bands is not None else load_bands(), kind)
    if not found:
        return None
    b = found[1]
    lo, hi = min(float(b["r_lo"]), 0.0), max(float(b["r_hi"]), 0.0)
    return [value / math.exp(hi), value / math.exp(lo)]


def bias_note(metric: str, cell: dict[str, Any], regime_name: str) -> str | None:
    """A sentence when the corpus shows the model systematically low or high for ``metric`` in the regime."""
    med = cell.get("r_median")
    n = int(cell.get("n") or 0)
    if med is None or n < BIAS_NOTE_MIN_N or abs(float(med)) <= BIAS_NOTE_LOG:
        return None
    factor = math.exp(-float(med))  # published / predicted in the median
    side = "above" if factor > 1 else "below"
    return (f"on {n} published {regime_name} benchmarks the measured {_WHAT.get(metric, metric)} was in the median "
            f"{factor:.2f}x the prediction ({side} it): expect the {'high' if factor > 1 else 'low'} end of the range")


def attach_ranges(perf: dict[str, Any], max_concurrency: int | None, request_rate: float,
                  kind: str | None = None, num_prompts: int | None = None) -> dict[str, Any]:
    """Add ``<metric>_range`` ([low, high], the metric's unit) for output throughput, mean TPOT and mean TTFT,
    an ``error_bands`` block saying what each range is built from (regime and dense/MoE cell, corpus rows,
    quantiles, the error factors, a bias note where the corpus shows one), and one --explain term per range.
    ``kind``: ``model_kind(arch)``. Returns ``perf``."""
    bands = load_bands()
    if not bands:
        return perf
    reg = regime(max_concurrency, request_rate, num_prompts)
    quantiles = bands.get("quantiles")
    per_metric: dict[str, Any] = {}
    notes: list[str] = []
    explain = perf.get("explain")
    for key, metric in METRICS.items():
        value = perf.get(key)
        rng = band_range(value, metric, reg, bands, kind)
        if rng is None:
            continue
        used, cell = band_cell(metric, reg, bands, kind)  # type: ignore[misc]
        perf[f"{key}_range"] = rng
        entry = {
            "regime": used, "n_rows": cell.get("n"), "quantiles": quantiles,
            "log_error_quantiles": [cell.get("r_lo"), cell.get("r_hi")],
            "log_error_median": cell.get("r_median"),
            "factor": [round(rng[0] / value, 4), round(rng[1] / value, 4)],
        }
        note = bias_note(metric, cell, used)
        if note:
            entry["note"] = note
            notes.append(note)
        per_metric[key] = entry
        if isinstance(explain, list):
            explain.append({
                "name": f"{key}_range", "value": f"{rng[0]:.4g}-{rng[1]:.4g}", "unit": _unit(key),
                "formula": (f"estimate {value:.4g} x [1/exp(max(r_hi,0)), 1/exp(min(r_lo,0))], r = ln(predicted/"
                            f"published) quantiles {quantiles} over {cell.get('n')} {used} corpus rows"
                            + (f"; {note}" if note else "")),
                "inputs": {"r_lo": cell.get("r_lo"), "r_hi": cell.get("r_hi"), "r_median": cell.get("r_median")},
            })
    cell = (bands.get("bands") or {}).get(reg) or {}
    perf["error_bands"] = {
        "regime": reg,
        "model_kind": kind,
        "what": ("each range = the estimate times the error factors published benchmarks of the same regime "
                 "showed (quantiles of ln(predicted/published)), widened to include 1.0x; not shifted for bias"),
        "quantiles": quantiles,
        "coverage": bands.get("coverage"),
        "rows": {m: (cell.get(m) or {}).get("n") for m in METRICS.values()},
        "metrics": per_metric,
        "notes": notes,
        "source": bands.get("source"),
    }
    return perf


def _unit(key: str) -> str:
    return "tokens/s" if key == "output_throughput" else "ms"
