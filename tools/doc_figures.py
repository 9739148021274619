#!/usr/bin/env python3
"""Redraw the figures the docs show (needs the plot extra: pip install 'sched-reader[plot]').

    python tools/doc_figures.py        # docs/diagnose.png from examples/llama3-8b-h100.yaml

The numbers the docs quote are checked (and rewritten with --update) by tools/doc_check.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from sched_reader.analyzers.diagnosis import diagnose
    from sched_reader.analyzers.pipeline import build_specs
    from sched_reader.report.plots import plot_diagnoses

    specs = build_specs([str(ROOT / "examples" / "llama3-8b-h100.yaml")])
    out = ROOT / "docs" / "diagnose.png"
    out.parent.mkdir(exist_ok=True)
    docs = []
    for s in specs:
        d = diagnose(s).to_json(explain=False)
        d["file"] = "examples/llama3-8b-h100.yaml"
        docs.append(d)
    plot_diagnoses(docs, out)
    print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
