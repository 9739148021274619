"""Accuracy of sched-reader's start-up memory / KV predictions against real vLLM logs.

Usage: python benchmarks/kv_accuracy.py [path/to/kv_logs.yaml]
Prints, per row of tests/data/kv_logs.yaml: predicted / logged / relative error for weights,
activation peak, non-torch memory, KV GiB and KV tokens (blocks for V0 rows), then the median and
p90 absolute relative error of each column. Row configs follow tests/test_kv_calibration.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_reader.models.capacity import estimate_capacity  # noqa: E402
from sched_reader.models.engine_spec import EffectiveConfig  # noqa: E402
from sched_reader.models.gpu_catalog import resolve_gpu  # noqa: E402
from sched_reader.models.model_catalog import resolve_model  # noqa: E402


def row_config(row: dict, total_gib: float) -> EffectiveConfig:
    """The values the log states plus the vLLM defaults it implies (same rule as the calibration test)."""
    v1 = row["engine_core"] == "v1"
    big = total_gib >= 70 and "a100" not in row["gpu"].lower()
    if v1:
        seqs = row["max_num_seqs"] or (1024 if big else 256)
        mbt = row["max_num_batched_tokens"] or (8192 if big else 2048)
        chunked = True
    else:
        seqs = row["max_num_seqs"] or 256
        mbt = row["max_num_batched_tokens"] or max(row["max_model_len"], 2048)
        chunked = bool(row["enable_chunked_prefill"])
    return EffectiveConfig(
        vllm_version=row["vllm_version"] or "0.6.4", engine=row["engine_core"],
        tensor_parallel_size=row["tensor_parallel_size"], pipeline_parallel_size=row["pipeline_parallel_size"],
        max_model_len=row["max_model_len"], gpu_memory_utilization=row["gpu_memory_utilization"],
        dtype=row["dtype"] or "auto", quantization=row["quantization"], kv_cache_dtype=row["kv_cache_dtype"] or "auto",
        block_size=row["block_size"] or 16, max_num_seqs=seqs, max_num_batched_tokens=mbt,
        enable_chunked_prefill=chunked, enable_prefix_caching=bool(row["enable_prefix_caching"]),
        enforce_eager=bool(row["enforce_eager"]))


def main(path: str | None = None) -> int:
    rows = yaml.safe_load(Path(path or ROOT / "tests" / "data" / "kv_logs.yaml").read_text())
    cols = ("weights", "activation", "non_torch", "kv_gib", "tokens")
    errs: dict[str, list[float]] = {c: [] for c in cols}
    print(f"{'row':44s} " + " ".join(f"{c:>24s}" for c in cols))
    for row in rows:
        gpu = resolve_gpu(row["gpu"]).gpu
        res = resolve_model(row["model"])
        j = estimate_capacity(res.arch, gpu, row_config(row, gpu.cuda_total_bytes / 2**30),
                              res.checkpoint_quantization).to_json()
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
