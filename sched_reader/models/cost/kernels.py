"""Measured kernel efficiency (fraction of the roofline at vendor peak) by tokens per step.

``data/kernel_efficiency.json`` is derived by ``tools/derive_kernel_efficiency.py`` from NVIDIA's
aiconfigurator-core kernel measurements (Apache-2.0; see data/LICENSE-aiconfigurator-data.txt). For vLLM's
fused-MoE kernels it gives, per GPU and expert weight format, the median over measured MoE shapes of

    efficiency(T) = max(FLOPs / peak FLOP/s, weight bytes / peak B/s) / measured latency

at T tokens per step. Small steps reach only a fraction of HBM bandwidth (launch and tile overheads:
~0.2-0.3 at T = 1 on H100), mid-size decode batches 0.5-0.7, and prefill-sized steps (T >= 4096)
only 0.2-0.35 of the dense tensor-core peak: far below the 0.60 the single GEMM constant assumed.
Between measured token counts the efficiency is interpolated in log2(T); outside, it is held.
Formats whose measured efficiency never reaches ``MIN_TRUSTED`` are left out (the roofline cannot
explain those kernels; the named constants of efficiency.py apply instead).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "kernel_efficiency.json"
MIN_TRUSTED = 0.2   # a table whose best point is below this is not used (see module docstring)
# our catalog GPU name prefix -> the measured GPU whose table stands in for it
FAMILY = (("H100", "H100 SXM5 80GB"), ("H200", "H200 SXM 141GB"), ("A100", "A100 SXM4 80GB"),
          ("B200", "B200 180GB"), ("GB200", "B200 180GB"), ("L40S", "L40S 48GB"))


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    try:
        return json.loads(DATA.read_text()).get("gpus", {})
    except (OSError, ValueError):
        return {}


def moe_format(fmt: str | None, expert_weight_bytes: float) -> str:
    """The table key of an expert weight format: bf16, fp8, fp8_block, int4, mxfp4 or nvfp4."""
    f = (fmt or "").lower()
    if not f or f in ("bf16", "fp16", "bfloat16", "float16", "auto"):
        return "bf16"
    if "nvfp4" in f or "modelopt_fp4" in f:
        return "nvfp4"
    if "mxfp4" in f:
        return "mxfp4"
    if "fp8" in f:
        # block-scaled FP8 (128 x 128 blocks) stores a scale per 16,384 weights: bytes/weight just above 1
        return "fp8_block" if expert_weight_bytes > 1.0 + 1e-9 else "fp8"
    if any(k in f for k in ("awq", "gptq", "int4", "marlin", "w4a16")):
        return "int4"
    return ""


SHAPES_KEY = "shapes [hidden, inter per GPU, experts per GPU, top_k, efficiency by tokens]"


def moe_efficiency_curve(gpu_name: str, fmt_key: str, hidden: int = 0, inter: int = 0, experts: int = 0,
                         top_k: int = 0) -> tuple[np.ndarray, np.ndarray, str] | None:
    """(log2 tokens, efficiency, provenance) of the measured MoE shape nearest to (hidden, per-GPU
    intermediate size, per-GPU experts, top-k) on ``gpu_name`` in format ``fmt_key``; None when not
    measured. Nearest = smallest sum of |log ratio| over the four sizes."""
    table = _table()
    name = gpu_name if gpu_name in table else next((t for p, t in FAMILY if gpu_name.startswith(p)), None)
    cell = ((table.get(name) or {}).get("moe") or {}).get(fmt_key) if name else None
    if not cell:
        return None
    want = [max(1.0, float(x)) for x in (hidden, inter, experts, top_k)]

    def dist(row):
        return sum(abs(np.log(max(1.0, float(a)) / b)) for a, b in zip(row[:4], want))

    best = min(cell[SHAPES_KEY], key=dist)
    e = np.asarray(best[4], dtype=float)
    if e.max() < MIN_TRUSTED:
        return None
    t = np.log2(np.asarray(cell["tokens"], dtype=float))
    return t, e, (f"{name} {fmt_key} shape h={best[0]} i={best[1]} E={best[2]} k={best[3]} "
                  f"({cell['kernel']}, vLLM {table[name]['vllm_release']}, aiconfigurator)")


def efficiency_at(curve: tuple[np.ndarray, np.ndarray, str], tokens):
    """Efficiency at ``tokens`` per step (float or array), interpolated in log2(tokens)."""
    lt, e, _ = curve
    x = np.log2(np.maximum(np.asarray(tokens, dtype=float), 1.0))
    out = np.interp(x, lt, e)
    return float(out) if np.ndim(out) == 0 else out
