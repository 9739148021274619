"""Text summary of a fitted calibration profile: each term, its value, bounds and support; the residuals."""

from __future__ import annotations

from typing import Any, Callable


def render_profile(echo: Callable[[str], Any], prof: Any, path: str | None) -> None:
    d = prof.deployment
    echo(f"profile for {d.get('model')} on {d.get('gpu')} (vLLM {d.get('vllm')}, TP {d.get('tensor_parallel_size')})"
         + (f" -> {path}" if path else ""))
    for name, t in prof.terms.items():
        flag = "fitted" if t.fitted else "held"
        bound = "  AT BOUND" if t.at_bound else ""
        echo(f"  {name:20} {t.value:>9.4g} {t.unit:3} [{t.lower:g}, {t.upper:g}] {flag}{bound}: "
             f"{t.supported_by[0] if t.supported_by else ''}")
        for extra in t.supported_by[1:]:
            if "shrunk toward" in extra:   # how far the data moved the term from the uncalibrated model
                echo(f"  {'':20} {'':9} {'':3} {extra}")
    for r in prof.fit.get("results", []):
        u, c = r["uncalibrated_error"], r["calibrated_error"]

        def pct(x: Any) -> str:
            return "-" if x is None else f"{x * 100:+.1f}%"

        echo(f"  {r['bench']}")
        echo(f"    error before -> after: output throughput {pct(u.get('output_throughput'))} -> "
             f"{pct(c.get('output_throughput'))}, mean TPOT {pct(u.get('mean_tpot_ms'))} -> "
             f"{pct(c.get('mean_tpot_ms'))}, mean TTFT {pct(u.get('mean_ttft_ms'))} -> {pct(c.get('mean_ttft_ms'))}")
    for n in prof.fit.get("notes", []):
        echo(f"  note: {n}")
