"""Text layout of ``sched-reader explain-log``: verdict first, then each term logged vs predicted."""

from __future__ import annotations

from typing import Any


def _fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "-"
    if unit == "GiB":
        return f"{v:.2f} GiB"
    if unit == "x":
        return f"{v:.2f}x"
    return f"{int(round(v)):,} {unit}"


def render_explanation(console: Any, ex: Any) -> None:
    """Print one ``Explanation`` (see ``analyzers.explain_log``)."""
    p = console.print
    p(f"{ex.file}: {ex.verdict}")
    if ex.cause:
        p(f"  differs: {ex.cause}")
    if ex.start_failure:
        p(f"  start-up failed (line {ex.start_failure_line}): {ex.start_failure}")
    par = f"TP {ex.tensor_parallel_size}, PP {ex.pipeline_parallel_size}"
    if ex.data_parallel_size > 1:
        par += f", DP {ex.data_parallel_size}"
    p(f"  engine: {ex.model or '?'}, vLLM {ex.release or '?'} ({ex.engine_core or '?'}), {par}, "
      f"GPU {ex.gpu or '?'} ({ex.gpu_source})")
    if ex.spec_source == "log" and ex.rebuilt_args:
        p("  rebuilt from the log: " + " ".join(ex.rebuilt_args))
    else:
        p(f"  predicted from: {ex.spec_source}")
    for m in ex.config_mismatches:
        p(f"  config differs from the log: {m}")
    p("")
    p(f"  {'term (per GPU)':<18}{'logged':>16}{'predicted':>16}{'diff':>12}  line")
    for r in list(ex.memory) + list(ex.kv):
        d = r.rel()
        diff = "-" if d is None else f"{d * 100:+.1f}%"
        line = str(r.line) if r.line else ""
        note = f"  ({r.note})" if r.note else ""
        p(f"  {r.name:<18}{_fmt(r.logged, r.unit):>16}{_fmt(r.predicted, r.unit):>16}{diff:>12}  {line}{note}")
    for n in ex.notes:
        p(f"  note: {n}")
    if ex.warnings:
        p(f"  {len(ex.warnings)} warning line(s) in the log; first: {ex.warnings[0][:200]}")
