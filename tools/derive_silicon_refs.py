"""Extract NVIDIA aiconfigurator's measured end-to-end vLLM results into tests/data/silicon/.

Source: the PyPI package ``aiconfigurator-core`` 0.12.0 (NVIDIA, Apache-2.0), file
``aiconfigurator_core/systems/silicon_sample.csv``: measured mean TTFT and TPOT (ms) of real serving runs
("silicon") that aiconfigurator uses to check its own estimates, one row per engine, release, model, GPU
system, parallel layout, input / output length (fixed) and client concurrency (``batch_size``). It is read
here once, offline; nothing of it is a runtime dependency.

Kept: vLLM rows of aggregated serving (``mode == agg``: one engine does prefill and decode) with a stated
release and a single attention data-parallel rank (``attention_dp_size`` empty or 1: plain TP, optionally
with expert parallelism for the MoE layers). Written: ``tests/data/silicon/aiconfigurator_vllm_agg.csv``
with the columns benchmarks/silicon_accuracy.py reads, unchanged values, and the row's id and
``silicon_data_source`` (release image, measurement date), next to the license notice. A run the
package lists twice (two collection ids, identical configuration and measured values) is kept once.

Usage:
  pip download --no-deps aiconfigurator-core==0.12.0 -d /tmp/aic && unzip /tmp/aic/*.whl -d /tmp/aic/x
  python tools/derive_silicon_refs.py /tmp/aic/x/aiconfigurator_core/systems/silicon_sample.csv
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "silicon" / "aiconfigurator_vllm_agg.csv"
COLUMNS = ("id", "backend_version", "model_path", "system", "precision", "gemm_quant_mode", "moe_quant_mode",
           "isl", "osl", "batch_size", "tp_size", "pp_size", "moe_tp_size", "moe_ep_size",
           "silicon_ttft_ms", "silicon_tpot_ms", "silicon_data_source")
# what identifies one run: its configuration and measured values, not the collection id or its source text
MEASURED = tuple(c for c in COLUMNS if c not in ("id", "silicon_data_source"))


def keep(row: dict) -> bool:
    """vLLM, aggregated serving, a release stated, one attention DP rank, both metrics measured."""
    return (row.get("backend") == "vllm" and row.get("mode") == "agg" and bool(row.get("backend_version"))
            and row.get("attention_dp_size") in ("", "1") and bool(row.get("batch_size"))
            and bool(row.get("silicon_tpot_ms")) and bool(row.get("silicon_ttft_ms")))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    with open(argv[0], newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if keep(r)]
    rows.sort(key=lambda r: r["id"])
    # the package lists some runs twice under two collection ids (same run, same measured values): keep one
    seen: set[tuple] = set()
    unique = []
    for r in rows:
        key = tuple(r.get(c, "") for c in MEASURED)
        if key not in seen:
            seen.add(key)
            unique.append(r)
    rows = unique
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([r.get(c, "") for c in COLUMNS])
    print(f"{len(rows)} rows -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
