"""Which bytes-per-weight and which tensor-core pipeline each component of the model uses.

The cost model needs, per weight group (attention projections, dense MLP, routed experts, shared
experts, router, embeddings, lm_head): bytes per stored weight and the peak-FLOPS key of the GEMM that
runs it (``"bf16"``, ``"fp8"``, ``"int8"``, ``"fp4"``). Format facts (bytes per weight, compute path)
are owned by ``sched_reader.models.quantization`` (engineer C1); this module only decides which
component each format applies to: bytes per weight and which components are quantized come from
engineer C2's ``weights.quant_layout`` (the same numbers the memory model uses); the compute pipeline
and KV element size from C1's ``quantization.compute_dtype`` / ``kv_bytes_per_element``
(``_LAYOUT_COMPUTE`` only for layout names C1 does not know).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sched_reader.errors import SchedReaderError
from sched_reader.models import quantization
from sched_reader.models.architecture import ModelArch
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.gpu import GPU
from sched_reader.models.weights import model_dtype_bytes, quant_layout

COMPONENTS = ("attn", "mlp", "experts", "shared", "router", "embed", "lm_head")

# compute family of each run-time weight layout name (weights.QuantLayout.name); "w" = weight-only:
# the GEMM dequantizes to 16-bit (Marlin-style w4a16 / w8a16). Facts: catalog quantization.yaml
# compute_path column.
# mxfp4_w4a4: AMD Quark w_mxfp4_a_mxfp4 (weights and activations MXFP4; vLLM quark_w4a4_mxfp4.py QuarkW4A4MXFP4 runs
# AITER's FP4 GEMM where current_platform.supports_mx() (gfx950), else emulates: dequantized, 16-bit GEMM)
_LAYOUT_COMPUTE: dict[str, str] = {"fp8": "fp8", "int8": "int8", "nvfp4": "fp4", "mxfp4": "fp4", "mxfp4_w4a4": "fp4"}


@dataclass(frozen=True)
class Precision:
    """Per-component storage and compute precision for one (model, GPU, config).

    ``weight_bytes[c]``: bytes per stored weight of component ``c``; ``compute[c]``: key into
    ``GPU.tflops`` for that component's GEMMs; ``act_bytes``: bytes per activation element;
    ``kv_bytes``: bytes per KV-cache element; ``fmt``: the normalized weight format or None.
    """

    fmt: str | None
    weight_bytes: dict[str, float]
    compute: dict[str, str]
    act_bytes: float
    kv_bytes: float
    act_key: str = "bf16"
    notes: tuple[str, ...] = ()


def _dtype_key(nbytes: int, cfg: EffectiveConfig) -> str:
    if nbytes == 4:
        return "fp32"
    return "fp16" if "float16" in (cfg.dtype or "") and "bfloat" not in (cfg.dtype or "") else "bf16"


def _compute_key(layout_name: str, gpu: GPU, act_key: str, act_dtype: str) -> tuple[str, list[str]]:
    """Tensor-core pipeline (key of ``GPU.tflops``) for GEMMs with weights in ``layout_name``."""
    fam = _LAYOUT_COMPUTE.get(layout_name, "w")
    key: str | None = None
    try:  # engineer C1's quantization module owns this fact
        key = str(quantization.compute_dtype(layout_name, gpu, act_dtype)).lower()
    except SchedReaderError:  # a layout name C1 does not know: fall back to the family table
        key = None
    if key is None or not gpu.tflops.get(key):
        key = fam if (fam != "w" and gpu.tflops.get(fam)) else act_key
    notes: list[str] = []
    if fam != "w" and key in ("bf16", "fp16", "fp32"):
        # e.g. FP8 on Ampere, MXFP4 on Hopper: vLLM dequantizes (Marlin-style), the GEMM runs in 16-bit
        notes.append(f"{gpu.name} has no {fam} tensor cores: {layout_name} weights are dequantized "
                     f"and GEMMs run in 16-bit")
    return key, notes


def resolve_precision(arch: ModelArch, gpu: GPU, cfg: EffectiveConfig,
                      checkpoint_quantization: str | None = None) -> Precision:
    """Bytes per weight and compute pipeline for each component (see module docstring)."""
    dt = model_dtype_bytes(arch, cfg)
    act_key = _dtype_key(dt, cfg)
    kv_b = quantization.kv_bytes_per_element(cfg.kv_cache_dtype, {4: "float32"}.get(dt, act_key))
    layout = quant_layout(arch, cfg, checkpoint_quantization)
    wb = {c: float(dt) for c in COMPONENTS}
    comp = {c: act_key for c in COMPONENTS}
    notes: list[str] = []
    if layout is not None:
        ckey, n = _compute_key(layout.name, gpu, act_key, cfg.dtype or "bfloat16")
        notes.extend(n)
        quantized = [c for c, flag in (("attn", layout.quantize_attention), ("mlp", layout.quantize_dense_mlp),
                                       ("shared", layout.quantize_dense_mlp), ("experts", layout.quantize_experts))
                     if flag]
        for c in quantized:
            wb[c] = layout.bytes_per_weight
            comp[c] = ckey
    return Precision(fmt=layout.name if layout else None, weight_bytes=wb, compute=comp, act_bytes=float(dt),
                     kv_bytes=kv_b, act_key=act_key, notes=tuple(notes))


def peak_flops(gpu: GPU, key: str) -> float:
    """Dense peak in FLOP/s for ``key``, falling back to 16-bit when the GPU lacks that pipeline."""
    for k in (key, "bf16", "fp16"):
        v = gpu.tflops.get(k)
        if v:
            return float(v) * 1e12
    raise ValueError(f"{gpu.name}: no tensor-core peak for {key!r} in the catalog")


def describe(p: Precision) -> dict[str, Any]:
    """A JSON-friendly summary for reports."""
    return {"format": p.fmt, "weight_bytes": p.weight_bytes, "compute": p.compute,
            "act_bytes": p.act_bytes, "kv_bytes": p.kv_bytes, "notes": list(p.notes)}
