"""Whether vLLM runs its old default fused-MoE tiles (vLLM <= 0.16.x, no tuned tile table for the shape).

vLLM's Triton fused-MoE call (bf16/fp16, FP8 W8A8 per-tensor and block) reads a tuned tile table per
(local experts E, intermediate per GPU N, device, dtype) when the release ships one
(``models/fused_moe_configs.py``, facts read from every wheel 0.6.0-0.19.1); without it it logs "Using default
MoE config. Performance might be sub-optimal!" and takes ``get_default_config``. Up to 0.16.x that is a
two-branch heuristic (M <= E tokens: 16x32x64 tiles; M > E: 64x64x32, GROUP 8, num_warps / num_stages unset);
vLLM PR #34846 (0.17.0) replaced it with batch-aware tiles within 1.0-1.1x of tuned ones.

Published kernel timings of the old default against tuned tiles (every point with its URL in
``models/data/fused_moe_default_penalty.yaml``): 1.04-1.13x at M <= E (gpt-oss-120b BF16 on H100, vLLM PR
#39902; Qwen3-30B-A3B FP8, PR #24700), 1.38-1.46x at M = 256-1,024 > E for gpt-oss-120b, 1.37-1.74x for LFM2.5
(SGLang PR #32806), fading to 1.0 for Mixtral's 8 experts (PR #44152).

What is priced, and what is only named:

* M <= E tokens per step (decode), bf16/fp16 and per-tensor FP8 (the 16x32x64 tiles, 4 warps): priced as a
  streaming-rate cap per SM, ``OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S``. Tiles that small keep too few bytes in
  flight per SM to reach HBM bandwidth, so the kernel's speed follows the SMs, not the memory: the same rate per
  SM on H100, H200 (same 132 SMs, 1.43x the bandwidth) and B200. The rate is one published kernel timing (vLLM
  PR #39902, H100, gpt-oss-120b's expert shape at M = 8, the old default), worked out below; the step's expert
  time is the larger of the measured-table time (tuned tiles) and the expert bytes read at that rate.
  Check, not fit: Scicom's gpt-oss-120b BF16 runs on vLLM 0.14.1 (no tile file for E = 128, N = 360 on any GPU)
  print median ITLs of 14.45 / 13.67 / 12.50 ms at 100 running requests on 8 x H100 / H200 / B200 (TP8); the
  tuned tables alone give decode steps of 14.2 / 10.9 / 8.4 ms, with the cap 14.2 / 14.1 / 12.2 ms.
* M > E (prefill) and block FP8 (64 x 128 x 128 tiles, as vLLM >= 0.17 for M > 64): named in the breakdown,
  not priced. Pricing the published x1.42 above E (on the measured tables) was measured twice on the
  254-row corpus (alone, and with the cap): Scicom's gpt-oss-120b BF16 TTFT moved toward the published figures,
  but GLM-4.7 on H100 / B200 (E = 160, N = 192, vLLM 0.14.1, no file) went from within -13..+29% to +12..+65% on
  TTFT, and vLLM PR 23151's Qwen3-30B-A3B run before its tuned table from -0.3% to +22%: the published ratios
  are per shape and too few to price a shape none of them timed.
"""

from __future__ import annotations

from functools import lru_cache

from sched_reader.models.fused_moe_configs import (
    NEW_DEFAULT_FROM, config_file_name, release_key, ships, vllm_device_name,
)

# expert weight format (kernels.moe_format) -> (dtype selector, block shape) of vLLM's tile-table file name;
# formats served by other kernels (Marlin W4A16, MXFP4, NVFP4) read no Triton tile table
TRITON_FORMATS = {"bf16": (None, None), "fp8": ("fp8_w8a8", None), "fp8_block": ("fp8_w8a8", (128, 128))}

# Streaming rate per SM of vLLM's old default fused-MoE tiles at M <= E (16x32x64, GROUP 1, Triton's 4 warps),
# bytes/s per SM. vLLM PR #39902 (https://github.com/vllm-project/vllm/pull/39902, "Optimize gpt-oss 120b Fused
# MoE kernels", series vllm39902-h100-gptoss120b-bf16 in models/data/fused_moe_default_penalty.yaml): H100 SXM5
# (132 SMs), E = 128, N = K = 2880, top-4, BF16, M = 8 tokens: 562.57 us. Random routing touches
# 128 x (1 - (1 - 4/128)^8) = 28.7 experts of 3 x 2880 x 2880 x 2 B = 49.8 MB (w13 and w2): 1.428 GB in
# 562.57 us = 2.54 TB/s = 19.2 GB/s per SM (the tuned tiles: 501.58 us, 2.85 TB/s, 85% of the 3.35 TB/s HBM).
OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S = 19.2e9
# formats whose old default at M <= E is the 16x32x64 tile (block FP8 has its own 64 x bn x bk default)
SMALL_TILE_FORMATS = ("bf16", "fp8")


@lru_cache(maxsize=256)
def untuned_old_default(release: str | None, gpu_name: str, fmt_key: str, experts: int, n: int) -> str:
    """The tile-table file vLLM ``release`` looks for and does not ship, when it then runs the old default
    tiles; "" otherwise (no release, a format off the Triton path, an unmapped GPU, a shipped or unknown file,
    a release with PR #34846's defaults). Cached: every IterationCostModel of a MoE config asks it once for the
    stream cap (old_default_stream_cap) and its breakdown again for the note, with the same arguments."""
    if not release or fmt_key not in TRITON_FORMATS or release_key(release) >= NEW_DEFAULT_FROM:
        return ""
    device = vllm_device_name(gpu_name, release)
    if device is None or experts <= 0 or n <= 0:
        return ""
    dtype, block = TRITON_FORMATS[fmt_key]
    name = config_file_name(int(experts), int(n), device, dtype, block, release)
    return name if ships(release, name) is False else ""


def old_default_stream_cap(release: str | None, gpu, fmt_key: str, experts: int, n: int) -> float | None:
    """Bytes/s the old default fused-MoE tiles stream at M <= ``experts`` tokens per step on ``gpu`` (all its
    SMs at ``OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S``), when vLLM ``release`` runs those tiles for this shape
    (``untuned_old_default``) on an NVIDIA GPU with a known SM count; None otherwise (tuned or new-default
    tiles, block FP8, other kernels, AMD: its compute units run other kernels)."""
    if fmt_key not in SMALL_TILE_FORMATS or str(getattr(gpu, "vendor", "")).lower() != "nvidia":
        return None
    sms = getattr(gpu, "sm_count", None)
    if not sms or not untuned_old_default(release, gpu.name, fmt_key, experts, n):
        return None
    return OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S * float(sms)


def old_default_tiles_note(release: str | None, gpu_name: str, fmt_key: str, experts: int, n: int) -> str:
    """One line for the cost breakdown when vLLM ``release`` runs the old default tiles for this shape; ""."""
    missing = untuned_old_default(release, gpu_name, fmt_key, experts, n)
    if not missing:
        return ""
    small = fmt_key in SMALL_TILE_FORMATS
    return (f"experts: vLLM {release} ships no tuned fused-MoE tiles for this shape ({missing}) and runs its old "
            "default tiles: "
            + ("at <= E tokens per step their 16x32x64 tiles stream at most "
               f"{OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S / 1e9:.1f} GB/s per SM (vLLM PR #39902; priced as a cap on the "
               "expert time), " if small else "")
            + "published at 1.4-1.7x tuned kernel time above E tokens for many-expert models (not priced; "
            "models/cost/moe_default_tiles.py); vLLM >= 0.17 defaults run within 1.1x")
