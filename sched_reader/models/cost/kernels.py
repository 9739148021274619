"""Measured kernel efficiency (fraction of the roofline at vendor peak) of vLLM's kernels.

``data/kernel_efficiency.json`` is derived by ``tools/derive_kernel_efficiency.py`` from NVIDIA's
aiconfigurator-core kernel measurements (Apache-2.0; see data/LICENSE-aiconfigurator-data.txt), timed
by NVIDIA inside vLLM (CUDA-graph replays) per GPU. Everywhere

    efficiency = max(FLOPs / peak FLOP/s, bytes / peak B/s) / measured latency

with the FLOPs and bytes counted as ``IterationCostModel`` counts them, so that ``roofline at peak /
efficiency`` reproduces the measured latency, with one exception: fused MoE (below). Four efficiency tables:

* fused MoE (``moe_efficiency_curve``): per expert weight format and MoE shape, by tokens per step.
  Small steps reach only a fraction of HBM bandwidth (~0.2-0.3 at T = 1 on H100), prefill-sized steps
  only 0.2-0.35 of the dense tensor-core peak. Not counted alike: the derivation's roofline has the expert
  weights as its bytes, ``IterationCostModel``'s ``moe_experts`` term the weights plus the routed activation
  bytes (2 B x T x top_k x (2 hidden + 3 intermediate)), so wherever those activation bytes set the roofline
  (prefill-sized steps of narrow experts: DeepSeek-R1 at TP 8 in block FP8, gpt-oss-120b in BF16 at TP 8) the
  term is slower than the measured latency it came from (Qwen3-30B-A3B in FP8 on H100 at 4,096 tokens: 1.7x).
  The measured call already holds that traffic: aiconfigurator's collector times vLLM's whole
  ``fused_experts`` (input quantization, ``moe_align_block_size``, both grouped GEMMs, the activation and
  ``moe_sum``; benchmarks/moe_kernel_crosscheck.py), so counting it alike (the table's own latency at the
  shape) is the bookkeeping-correct form; it was measured to make MoE rows much worse (all rows 16.0 / 14.3 /
  25.4% -> 24.6 / 16.9 / 32.6%, MoE 19.0 / 16.0 / 36.2% -> 35.5 / 23.0 / 43.1%, corpus of 241 rows): the
  corpus's MoE prefill runs slower than these tables, and public measurements of the same kernel at 1-4k
  tokens agree (vLLM's benchmark_moe.py in vLLM PRs #44818 and #24700: 1.05-1.40x the table with tuned or
  post-#34846 default configs, 1.6-2.0x with the pre-#34846 defaults that vLLM <= 0.16 runs for a shape
  without a tuned config file; the tables come from vLLM 0.19 / 0.24). The routed-activation bytes are kept
  until that slowdown is modelled on its own (the old default tiles are priced only at <= E tokens per
  step, as a per-SM streaming cap; above E they are named, not priced: moe_default_tiles.py). Each table's
  latency is the slower of balanced and aiconfigurator's power-law routing once every expert gets a token
  (tools/derive_kernel_efficiency.raise_to_skewed; the cell's ``routing`` says so in the provenance).
* dense GEMMs (``gemm_efficiency_curve``): per GPU and dtype (bf16 cuBLAS, fp8 per-tensor CUTLASS,
  nvfp4), by tokens per step M (1-32,768) and weight-size class log2(n x k). A GEMM's latency floor
  (~2.5 us bf16) makes small GEMMs slow at decode: at M = 1 a 1024 x 4096 GEMM streams its weights at
  ~0.38 of H100's HBM peak, an 8192 x 28672 one at ~0.89; large-M GEMMs reach ~0.8 of dense peak.
  Block-FP8 was timed without CUDA graphs by the collector (~160 us per call whatever the shape): the
  graph-timed per-tensor FP8 table stands in for it (same tensor cores and weight bytes; named so in
  the term's source). Weight-only INT4/INT8 (Marlin) and MXFP4 on Hopper are not measured: the named
  constants apply.
* decode attention (``decode_attention_fit``): per KV dtype, latency per layer = launch + per_seq x
  batch + KV bytes / (peak B/s x fraction), fitted to the table (randomised paged block tables).
* prefill attention (``prefill_attention_curve``): per KV dtype, causal-attention efficiency against
  the 16-bit peak by prompt length (0.1 at 128 tokens, 0.5 at 4k, 0.6 at 16k on H100).

Two latency tables as well:

* TP all-reduce (``allreduce_table``): vLLM's own all-reduce in CUDA graphs by message size, per NVLink GPU
  and TP size (4.4-4.9 us up to 4 KiB on H100/H200 TP 2-8, where the alpha-beta constants gave 10 us).
* MLA decode module (``mla_module_floor``): vLLM's whole MLA attention module (projections, norms, W_UK/W_UV
  bmm, rotary + KV write, MLA decode kernel) for one sequence, per GPU, GEMM type, KV dtype and heads per GPU.

Between measured points efficiencies are interpolated (in log2 of tokens or weights); outside, held.
A GPU without its own table uses its family's (``FAMILY``: H100 PCIe -> H100 SXM...); a GPU or format
without any keeps the named constants of efficiency.py, and ``TermCost.source`` says which applied; for
fused MoE the constants' roofline is held above the measured latency floor of a fused-MoE call
(``moe_latency_floor``).
MoE tables whose measured efficiency never reaches ``MIN_TRUSTED`` are left out (dense GEMM curves are
kept: a small GEMM's low efficiency is its measured latency floor). Each MoE table comes from the oldest
measured release whose rows time the kernel vLLM runs for the format (W4A16 experts: Marlin, vLLM 0.24.0
rows; the 0.19.0 rows timed the Triton W4A16 kernel, see tools/derive_kernel_efficiency.py NOT_VLLM_KERNEL).
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
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
# Efficiency (dimensionless, roofline at vendor peak / measured latency) at which a measured MoE shape is taken to
# have outrun the roofline: tools/derive_kernel_efficiency.py clips efficiencies at 1.0, so a stored 1.0 means the
# call finished faster than its counted FLOPs or HBM bytes allow at the GPU's peak. Such a row did not time what its
# shape says in serving (the collector replays one layer's weights, which a GPU's L2 can partly keep between replays;
# a routing that touched fewer experts than the balanced count): H100 bf16 (2688, 464, 128 experts, top-6) took
# 251.7 us at 64 tokens for 128 x 3 x 2688 x 464 x 2 B = 958 MB, which needs >= 286 us at 3.35 TB/s (aiconfigurator
# 0.12.0 h100_sxm/moe/vllm/0.24.0). Such shapes are not chosen as the nearest measured shape while another exists.
OUTRAN_ROOFLINE = 1.0


# Expert format -> the format whose table stands in when the GPU has no trusted table of its own. Per-tensor and
# per-channel FP8 experts (e.g. zai-org/GLM-4.7-FP8, compressed-tensors channel-wise weights) run vLLM's FP8
# fused-MoE kernels on the same FP8 tensor cores and expert bytes as block-scaled FP8; H100's only "fp8" table timed
# the ModelOpt FlashInfer-CUTLASS path (0.11-0.13 of the roofline at every shape near GLM-4.7's, so MIN_TRUSTED drops
# it), and without a stand-in the named constants (0.60 of peak) priced GLM-4.7-FP8's TP 8 experts at 63 ms per
# 8,192-token step where H200's measured Triton FP8 table gives 242 ms on the same silicon. The H200 rows of that
# deployment (scicom-llm-benchmaxxing, measured table) are within 10% on TTFT; the H100 rows were 24-63% short.
MOE_STAND_IN = {"fp8": "fp8_block"}


def moe_efficiency_curve(gpu_name: str, fmt_key: str, hidden: int = 0, inter: int = 0, experts: int = 0,
                         top_k: int = 0) -> tuple | None:
    """(log2 tokens, efficiency, provenance) of the measured MoE shape nearest to (hidden, per-GPU
    intermediate size, per-GPU experts, top-k) on ``gpu_name`` in format ``fmt_key``; None when not
    measured. Nearest = smallest sum of |log ratio| over the four sizes, among the shapes whose measured
    efficiency stays below OUTRAN_ROOFLINE at every token count (all shapes when none does: see there).
    A format without a trusted table on the GPU takes its ``MOE_STAND_IN`` format's table (named so)."""
    own = _moe_curve(gpu_name, fmt_key, hidden, inter, experts, top_k)
    if own is not None or fmt_key not in MOE_STAND_IN:
        return own
    alt = _moe_curve(gpu_name, MOE_STAND_IN[fmt_key], hidden, inter, experts, top_k)
    if alt is None:
        return None
    return _curve(alt[0], alt[1], f"{alt[2]}, standing in for {fmt_key} experts (no trusted {fmt_key} table "
                                  f"for this GPU)")


def _moe_curve(gpu_name: str, fmt_key: str, hidden: int, inter: int, experts: int, top_k: int) -> tuple | None:
    """:func:`moe_efficiency_curve` on the GPU's own table of ``fmt_key`` only."""
    name, entry = _entry(gpu_name)
    cell = (entry.get("moe") or {}).get(fmt_key)
    if not cell:
        return None
    want = [max(1.0, float(x)) for x in (hidden, inter, experts, top_k)]

    def dist(row):
        return sum(abs(np.log(max(1.0, float(a)) / b)) for a, b in zip(row[:4], want))

    shapes = [row for row in cell[SHAPES_KEY] if max(row[4]) < OUTRAN_ROOFLINE] or cell[SHAPES_KEY]
    best = min(shapes, key=dist)
    e = np.asarray(best[4], dtype=float)
    if e.max() < MIN_TRUSTED:
        return None
    t = np.log2(np.asarray(cell["tokens"], dtype=float))
    return _curve(t, e, f"{name} {fmt_key} shape h={best[0]} i={best[1]} E={best[2]} k={best[3]} "
                        f"({cell['kernel']}, vLLM {cell.get('vllm_release') or entry['vllm_release']}, aiconfigurator"
                        f"{'; ' + cell['routing'] if cell.get('routing') else ''})")


MOE_FLOOR_KEY = "min_one_token_latency_s"


@lru_cache(maxsize=16)
def moe_latency_floor(fmt_key: str) -> tuple[float, str] | None:
    """(seconds, provenance): the latency floor of one fused-MoE layer call in weight format ``fmt_key``,
    for GPUs or formats without a measured MoE table. Each measured GPU's table holds its fastest one-token
    call over all measured shapes (tools/derive_kernel_efficiency.py; the kernel chain align/sort, quantize,
    two grouped GEMMs, activation and top-k sum costs 19-31 us even when the expert bytes are tiny); the floor
    is the median over the measured GPUs (bf16: A100, B200, H100, H200, L40S -> 21.5 us; fp8_block 28.6 us;
    int4 Marlin 44.6 us; MXFP4 53.6 us). A format measured on no GPU takes the bf16 floor. None without data.

    Checked leaving each measured GPU out (its own floor excluded from the median): against its measured
    one-token latencies, max(roofline at the named constants, floor) has median |ln(predicted/measured)|
    0.31-0.88 where the constants alone have 0.80-2.35 (A100, B200, H100, H200, L40S); no worse at any
    tokens per step up to 1,024."""
    by_fmt: dict[str, list[float]] = {}
    for entry in _table().values():
        for key, cell in (entry.get("moe") or {}).items():
            if cell.get(MOE_FLOOR_KEY):
                by_fmt.setdefault(key, []).append(float(cell[MOE_FLOOR_KEY]))
    key = fmt_key if by_fmt.get(fmt_key) else "bf16"
    vals = sorted(by_fmt.get(key) or [])
    if not vals:
        return None
    n = len(vals)
    med = vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])
    return med, (f"fused-MoE latency floor {med * 1e6:.1f} us per layer: median over {n} measured GPUs of the fastest "
                 f"one-token {key} call (aiconfigurator)")


def _curve(t: np.ndarray, e: np.ndarray, provenance: str) -> tuple:
    """(log2 tokens, efficiency, provenance, the same two as lists): the lists feed :func:`interp_scalar`."""
    return t, e, provenance, [float(v) for v in t], [float(v) for v in e]


def efficiency_at(curve: tuple, tokens):
    """Efficiency at ``tokens`` per step (float or array), interpolated in log2(tokens).

    Scalars and arrays go through the same pure-Python :func:`interp_scalar`, so that the cost model's
    vector form, its scalar form and the simulator's compiled form agree bit for bit."""
    xs, ys = curve[3], curve[4]
    if type(tokens) is int or type(tokens) is float or np.ndim(tokens) == 0:
        return interp_scalar(math.log2(max(float(tokens), 1.0)), xs, ys)
    flat = [interp_scalar(math.log2(max(float(v), 1.0)), xs, ys) for v in np.ravel(tokens)]
    return np.asarray(flat, dtype=float).reshape(np.shape(tokens))


# ---------------------------------------------------------------------------------------------- dense GEMMs
GEMM_KEY = "efficiency [log2_weights][tokens]"


def _entry(gpu_name: str) -> tuple[str | None, dict[str, Any]]:
    """(measured GPU name, its table entry) standing in for ``gpu_name``; (None, {}) when unmeasured."""
    table = _table()
    name = gpu_name if gpu_name in table else next((t for p, t in FAMILY if gpu_name.startswith(p)), None)
    return name, (table.get(name) or {}) if name else {}


def gemm_format(fmt: str | None, weight_bytes: float, compute_key: str) -> str:
    """The dense-GEMM table key of a weight format: bf16, fp8, fp8_block, nvfp4; "" when the kernel
    vLLM runs was not measured (weight-only INT4/INT8 Marlin, MXFP4, FP8 dequantized on Ampere...)."""
    f = (fmt or "").lower()
    if compute_key in ("bf16", "fp16"):
        return "bf16" if weight_bytes >= 2.0 else ""
    if compute_key == "fp8" and "fp8" in f:
        # block-scaled FP8 (128 x 128 blocks) stores a scale per 16,384 weights: bytes/weight just above 1
        return "fp8_block" if weight_bytes > 1.0 + 1e-9 else "fp8"
    if compute_key == "fp4" and ("nvfp4" in f or "modelopt_fp4" in f):
        return "nvfp4"
    if compute_key == "fp4" and "mxfp4" in f:
        return "mxfp4"   # MXFP4 weights and activations on FP4 matrix cores (measured on AMD only: rocm_paths.gemm_curve)
    return ""


def gemm_efficiency_curve(gpu_name: str, key: str, n: int, k: int) -> tuple | None:
    """(log2 tokens, efficiency, provenance) of a dense ``n x k`` GEMM on ``gpu_name`` in format ``key``:
    the measured curve interpolated in log2(n x k) between weight classes (held outside them); None
    when not measured."""
    name, entry = _entry(gpu_name)
    gemm = entry.get("gemm") or {}
    cell = gemm.get(key) if key else None
    stand_in = ""
    if not cell and key == "fp8_block" and gemm.get("fp8"):
        # block-FP8 was timed without CUDA graphs (left out by the derivation): the per-tensor FP8 GEMM
        # (same FP8 tensor cores and weight bytes, graph-timed) stands in for it
        cell, stand_in = gemm["fp8"], " standing in for fp8_block (timed without CUDA graphs)"
    if not cell:
        return None
    lw = np.asarray(cell["log2_weights"], dtype=float)
    grid = np.asarray(cell[GEMM_KEY], dtype=float)
    x = float(np.log2(max(1, int(n) * int(k))))
    # no MIN_TRUSTED cut here: a small GEMM's low efficiency is its measured latency floor (a few us)
    e = np.array([np.interp(x, lw, grid[:, j]) for j in range(grid.shape[1])])
    t = np.log2(np.asarray(cell["tokens"], dtype=float))
    shown = "fp8" if stand_in else key
    return _curve(t, e, f"{name} {shown} GEMM{stand_in} ({cell['kernel']}, vLLM {gemm['vllm_release']}, "
                        "aiconfigurator)")


# ---------------------------------------------------------------------------------------------- attention
def _kv_key(kv_bytes: float) -> str:
    return "bfloat16" if kv_bytes >= 2.0 else ("fp8" if kv_bytes >= 1.0 else "")


def decode_attention_fit(gpu_name: str, kv_bytes: float) -> tuple[float, float, float, str] | None:
    """(launch s per layer, s per sequence per layer, fraction of peak HBM bandwidth for KV reads,
    provenance) of vLLM's decode attention kernel on ``gpu_name`` with ``kv_bytes`` per KV element:

        latency per layer = launch + per_seq x batch + KV bytes / (peak B/s x fraction)

    fitted to the measured table (tools/derive_kernel_efficiency.py); None when not measured."""
    name, entry = _entry(gpu_name)
    attn = entry.get("attention") or {}
    cell = (attn.get("decode") or {}).get(_kv_key(kv_bytes))
    if not cell:
        return None
    return (float(cell["launch_s"]), float(cell["per_seq_s"]), float(cell["kv_bandwidth_fraction"]),
            f"{name} KV {_kv_key(kv_bytes)} ({cell['kernel']}, vLLM {attn['vllm_release']}, aiconfigurator)")


def prefill_attention_curve(gpu_name: str, kv_bytes: float) -> tuple[list[float], list[float], str] | None:
    """(log2 prompt tokens, efficiency, provenance) of causal prefill attention on ``gpu_name``:
    efficiency = max(FLOPs / 16-bit peak, KV bytes / peak B/s) / measured latency, by prompt length;
    None when not measured. Plain lists: evaluated with :func:`interp_scalar` on the simulator's path."""
    name, entry = _entry(gpu_name)
    attn = entry.get("attention") or {}
    cell = (attn.get("prefill") or {}).get(_kv_key(kv_bytes))
    if not cell:
        return None
    xs = [float(np.log2(v)) for v in cell["prompt_tokens"]]
    return xs, [float(v) for v in cell["efficiency"]], (
        f"{name} KV {_kv_key(kv_bytes)} ({cell['kernel']}, vLLM {attn['vllm_release']}, aiconfigurator)")


def interp_scalar(x: float, xs: list[float], ys: list[float]) -> float:
    """Piecewise-linear interpolation of ``ys`` over increasing ``xs`` at ``x``, held outside (pure Python:
    the cost model and its compiled form call this same function, so their floats agree bit for bit)."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect_right(xs, x)
    x0, x1 = xs[i - 1], xs[i]
    y0 = ys[i - 1]
    return y0 + (ys[i] - y0) * (x - x0) / (x1 - x0)


# ---------------------------------------------------------------------------------------------- all-reduce
ALLREDUCE_KEY = "tp [bytes, seconds]"


@lru_cache(maxsize=64)
def allreduce_table(gpu_name: str, interconnect: str, n: int) -> tuple[list[float], list[float], str, float] | None:
    """(message bytes, seconds, provenance, fastest call in seconds) of vLLM's TP all-reduce over ``n`` GPUs of ``gpu_name``, measured in
    CUDA-graph replays (bf16; median over the measured releases, tools/derive_kernel_efficiency.py); None when
    this GPU (or its family's measured GPU) was not measured at ``n`` GPUs. NVLink GPUs only: over PCIe the
    all-reduce depends on the host's PCIe topology and peer-to-peer support (NVIDIA's L40S host took 7 ms for
    7 MiB over 8 GPUs, ~1 GB/s), which the catalog does not know; those keep the alpha-beta model."""
    if interconnect != "nvlink":
        return None
    table = _table()
    name = gpu_name if gpu_name in table else next((t for p, t in FAMILY if gpu_name.startswith(p)), None)
    cell = (table.get(name) or {}).get("allreduce") if name else None
    rows = (cell or {}).get(ALLREDUCE_KEY, {}).get(str(int(n)))
    if not rows:
        return None
    xs = [float(b) for b, _ in rows]
    ys = [float(s) for _, s in rows]
    return xs, ys, (f"{name} TP{int(n)} all-reduce measured in CUDA graphs, vLLM {'/'.join(cell['vllm_releases'])} "
                    "(aiconfigurator)"), min(ys)


def allreduce_latency(table: tuple, nbytes: float) -> float:
    """Seconds for one all-reduce of ``nbytes`` from :func:`allreduce_table`: piecewise linear in bytes between
    measured sizes (latency + bytes / bandwidth on each segment), the smallest size's latency below them, and
    the last segment's bandwidth extended beyond the largest (1 GiB)."""
    xs, ys = table[0], table[1]
    x = float(nbytes)
    if x > xs[-1]:
        return ys[-1] + (ys[-1] - ys[-2]) * (x - xs[-1]) / (xs[-1] - xs[-2])
    return interp_scalar(x, xs, ys)


# ---------------------------------------------------------------------------------------------- MLA module
MLA_GEMM = {"bf16": "bfloat16", "fp8_block": "fp8_block", "nvfp4": "nvfp4"}


def mla_module_floor(gpu_name: str, gemm_key: str, kv_bytes: float, heads: int) -> tuple[float, str] | None:
    """(seconds, provenance): vLLM's whole MLA attention module at decode for one sequence of a 2-token context,
    with ``heads`` query heads on the GPU (DeepSeek-V3 shapes), projections in ``gemm_key`` (bf16, fp8_block or
    nvfp4, the dense-GEMM table key) and the KV cache in ``kv_bytes`` per element: the chain of ~15 kernels
    (fused q_a/kv_a GEMM, two RMSNorms, q_b GEMM, W_UK bmm, rotary + KV-cache write, MLA decode, W_UV bmm,
    o_proj) measured in a CUDA graph (tools/derive_kernel_efficiency.py: 88-120 us on H100/H200 at 16 heads,
    40-50 us on B200). None when not measured for this GPU, GEMM type, KV dtype or head count."""
    name, entry = _entry(gpu_name)
    cell = ((entry.get("mla_decode_module") or {}).get(MLA_GEMM.get(gemm_key, "")) or {}).get(_kv_key(kv_bytes))
    rows = (cell or {}).get("heads", {}).get(str(int(heads)))
    if not rows:
        return None
    batch, seconds = rows[0]
    return float(seconds), (f"{name} MLA decode module {float(seconds) * 1e6:.1f} us per layer at {int(heads)} heads, "
                            f"batch {int(batch)} ({cell['kernel']}, {gemm_key} GEMMs, KV {_kv_key(kv_bytes)}, vLLM "
                            f"{cell['vllm_release']}, aiconfigurator)")
