"""The kernels vLLM runs for gpt-oss (MXFP4 experts, attention sinks) on NVIDIA GPUs, by release and GPU.

Read in the release wheels (``pip download vllm==X --no-deps``), default environment:

MXFP4 MoE backend (vllm/model_executor/layers/quantization/mxfp4.py; 0.10.1 ``Mxfp4MoEMethod._should_use_marlin``
and ``should_use_flashinfer_mxfp4``, 0.10.2+ ``get_mxfp4_backend``):
  * SM100 (B200, GB200, B300) with FlashInfer importable: FlashInfer TRTLLM-gen MXFP4 x BF16 (activations stay
    bf16; MXFP8 activations only with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1, CUTLASS with ..._MXFP8_CUTLASS=1).
    FlashInfer is a wheel dependency from FLASHINFER_WHEEL_DEP_FROM (``Requires-Dist: flashinfer-python==0.5.2``);
    before it only the ``vllm[flashinfer]`` extra (and images that add it) brings it.
  * SM90 (H100, H200): OpenAI's ``triton_kernels`` matmul_ogs when importable, else Marlin (FlashInfer MXFP4 x BF16
    only with VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1). ``triton_kernels`` is no wheel dependency; the wheel vendors it
    as vllm/third_party/triton_kernels from TRITON_KERNELS_VENDORED_FROM (absent from 0.11.2's wheel, present in
    0.12.0's and 0.13.0's, 0.14.1's ``has_triton_kernels`` imports either copy).
  * below SM90 (A100, L40S, A10): Marlin MXFP4 (0.10.1: "marlin kernel has better performance on ampere"); SM120
    (RTX 50 / RTX PRO 6000) Marlin from 0.14.1 (triton_kernels only for 9.0 <= capability < 11.0).
Attention with sinks (vllm/platforms/cuda.py): SM90 FLASH_ATTN (FA3 supports sinks; FA2 does not); SM100
FLASHINFER (TRTLLM attention supports sinks); every other capability TRITON_ATTN (0.10.1-0.11.x: "has_sink and
not is_device_capability(90)" -> Triton unless Blackwell's FlashInfer default; 0.14.1: FLASH_ATTN and FLASHINFER
refuse sinks there via supports_sink).
"""

from __future__ import annotations

from sched_reader.models.gpu import GPU
from sched_reader.versions import parse_version

TRITON_KERNELS_VENDORED_FROM = (0, 12, 0)   # vllm/third_party/triton_kernels in the wheel (vLLM release tuple)
FLASHINFER_WHEEL_DEP_FROM = (0, 11, 1)      # flashinfer-python a Requires-Dist of the wheel (vLLM release tuple)


def _capability(gpu: GPU) -> tuple[int, int] | None:
    try:
        major, _, minor = str(gpu.compute_capability or "").partition(".")
        return int(major), int(minor or 0)
    except ValueError:
        return None


def mxfp4_moe_backend(gpu: GPU, vllm_version: str | None) -> tuple[str, str]:
    """(backend, reason) of vLLM's MXFP4 fused MoE for gpt-oss on an NVIDIA ``gpu``: "flashinfer_trtllm_mxfp4_bf16",
    "triton_kernels", "marlin" or "marlin_or_triton_kernels" (SM90 before the vendored copy: Marlin unless the
    environment installed triton_kernels); ("", "") for other vendors or an unknown capability."""
    cap = _capability(gpu)
    if str(gpu.vendor or "").upper() != "NVIDIA" or cap is None:
        return "", ""
    v = parse_version(vllm_version)
    if cap[0] == 10:
        how = ("flashinfer-python is a wheel dependency" if v >= FLASHINFER_WHEEL_DEP_FROM else
               "with FlashInfer installed (vllm[flashinfer] or an image that adds it; else Marlin)")
        return "flashinfer_trtllm_mxfp4_bf16", f"SM100: FlashInfer TRTLLM-gen MXFP4 x BF16 {how}"
    if cap[0] == 9:
        if v >= TRITON_KERNELS_VENDORED_FROM:
            return "triton_kernels", "SM90: OpenAI triton_kernels matmul_ogs (vendored in the wheel)"
        return ("marlin_or_triton_kernels", "SM90: Marlin MXFP4 unless the environment installed triton_kernels "
                "(not a wheel dependency before the vendored copy)")
    return "marlin", f"SM{cap[0]}{cap[1]}: Marlin MXFP4 (dequantized to bf16 in the GEMM)"


def sink_attention_backend(gpu: GPU) -> str:
    """vLLM's attention backend for layers with attention sinks (gpt-oss) on an NVIDIA ``gpu``; "" elsewhere."""
    cap = _capability(gpu)
    if str(gpu.vendor or "").upper() != "NVIDIA" or cap is None:
        return ""
    if cap[0] == 9:
        return "FLASH_ATTN (FA3 with sinks)"
    if cap[0] == 10:
        return "FLASHINFER (TRTLLM attention with sinks)"
    return "TRITON_ATTN (FA2 has no sinks)"


# substrings of the measured table's kernel name (kernels.moe_efficiency_curve provenance) per backend
_TABLE_KERNEL = {"flashinfer_trtllm_mxfp4_bf16": ("flashinfer",), "triton_kernels": ("oaitriton",),
                 "marlin": ("marlin",)}


def path_note(gpu: GPU, vllm_version: str | None, moe_source: str) -> str:
    """One line for the cost breakdown: the MoE backend and sink attention vLLM runs for gpt-oss here, and whether
    ``moe_source`` (the experts term's provenance) times that kernel; "" on non-NVIDIA GPUs."""
    backend, why = mxfp4_moe_backend(gpu, vllm_version)
    if not backend:
        return ""
    src = moe_source.lower()
    if "aiconfigurator" not in src:
        table = "no measured table of it: named constants"
    elif backend == "marlin_or_triton_kernels":
        table = "which one depends on the environment; the measured table times " + (
            "triton_kernels" if "triton" in src else "another kernel")
    elif any(k in src for k in _TABLE_KERNEL[backend]):
        table = "the measured table times it"
    else:
        table = "the measured table times another kernel"
    return (f"gpt-oss on vLLM {vllm_version or '?'}: MXFP4 MoE {why} ({table}); attention with sinks "
            f"{sink_attention_backend(gpu)}")
