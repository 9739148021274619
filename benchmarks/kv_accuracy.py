"""Accuracy of sched-reader's start-up memory / KV predictions against real vLLM logs.

Usage: python benchmarks/kv_accuracy.py [path/to/kv_logs.yaml]
Prints, per row of tests/data/kv_logs.yaml: predicted / logged / relative error for weights,
activation peak, non-torch memory, KV GiB and KV tokens (blocks for V0 rows), then the median and
p90 absolute relative error of each column. Each row is replayed through the whole pipeline
(tests/accuracy/kv_rows.py: the command line the log states -> spec builder -> capacity model).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests" / "accuracy"))

from kv_rows import load_rows, predict  # noqa: E402


def main(path: str | None = None) -> int:
    rows = load_rows(path)
    cols = ("weights", "activation", "non_torch", "kv_gib", "tokens")
    errs: dict[str, list[float]] = {c: [] for c in cols}
    print(f"{'row':44s} " + " ".join(f"{c:>24s}" for c in cols))
    for row in rows:
        j = predict(row)
        lg = row["logged"]
        act = lg["activation_peak_gib"]
        if act is None and lg["peak_torch_memory_gib"] is not None:
            act = round(lg["peak_torch_memory_gib"] - lg["weights_gib"], 2)
        v1 = row["engine_core"] == "v1"
        pairs = {
            "weights": (j["memory"]["weights_gib"], lg["weights_gib"]),
            "activation": (j["memory"]["activation_peak_gib"], act),
            "non_torch": (j["memory"]["non_torch_gib"], lg["non_torch_gib"]),
            "kv_gib": (j["memory"]["kv_cache_gib"], lg["kv_cache_gib"]),
            "tokens": ((j["kv_cache"]["tokens"], lg["kv_cache_tokens"]) if v1
                       else (j["kv_cache"]["num_blocks"], lg["gpu_blocks"])),
        }
        cells = []
        for c in cols:
            p, r = pairs[c]
            if r is None or r == 0:
                cells.append(f"{p:>10} / {'-':>6} {'':>5}")
                continue
            e = p / r - 1
            errs[c].append(abs(e))
            cells.append(f"{p:>10} / {r:>6} {100 * e:+5.1f}%")
        print(f"{row['id'][:44]:44s} " + " ".join(f"{x:>24s}" for x in cells))
    print()
    for c in cols:
        a = np.array(errs[c])
        print(f"{c:12s} n={len(a):2d}  median |err| {100 * np.median(a):6.2f}%  p90 |err| {100 * np.percentile(a, 90):6.2f}%"
              f"  max {100 * a.max():6.2f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else None))
