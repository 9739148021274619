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

Named in the cost breakdown, not priced. Pricing it (x1.07 at M <= E, x1.42 above with >= 64 local experts,
on the measured tables, which time tuned tiles or the new defaults) was measured on the 254-row corpus: Scicom's
25 gpt-oss-120b BF16 rows (E = 128, N = 360, no file in any release) moved toward the published figures
(throughput +42 -> +26%, TTFT -41 -> -30%), but GLM-4.7 on H100 / B200 (E = 160, N = 192, vLLM 0.14.1, no file)
and vLLM PR 23151's Qwen3-30B-A3B run before its tuned table went from within 5% to 14-21% slow (TTFT +13 ->
+43%), and all rows moved 13.6 / 14.2 / 24.4 -> 13.9 / 13.7 / 26.4%: the published ratios are per shape and
too few to price a shape none of them timed.
"""

from __future__ import annotations

from sched_reader.models.fused_moe_configs import (
    NEW_DEFAULT_FROM, config_file_name, release_key, ships, vllm_device_name,
)

# expert weight format (kernels.moe_format) -> (dtype selector, block shape) of vLLM's tile-table file name;
# formats served by other kernels (Marlin W4A16, MXFP4, NVFP4) read no Triton tile table
TRITON_FORMATS = {"bf16": (None, None), "fp8": ("fp8_w8a8", None), "fp8_block": ("fp8_w8a8", (128, 128))}


def untuned_old_default(release: str | None, gpu_name: str, fmt_key: str, experts: int, n: int) -> str:
    """The tile-table file vLLM ``release`` looks for and does not ship, when it then runs the old default
    tiles; "" otherwise (no release, a format off the Triton path, an unmapped GPU, a shipped or unknown file,
    a release with PR #34846's defaults)."""
    if not release or fmt_key not in TRITON_FORMATS or release_key(release) >= NEW_DEFAULT_FROM:
        return ""
    device = vllm_device_name(gpu_name, release)
    if device is None or experts <= 0 or n <= 0:
        return ""
    dtype, block = TRITON_FORMATS[fmt_key]
    name = config_file_name(int(experts), int(n), device, dtype, block, release)
    return name if ships(release, name) is False else ""


def old_default_tiles_note(release: str | None, gpu_name: str, fmt_key: str, experts: int, n: int) -> str:
    """One line for the cost breakdown when vLLM ``release`` runs the old default tiles for this shape; ""."""
    missing = untuned_old_default(release, gpu_name, fmt_key, experts, n)
    if not missing:
        return ""
    return (f"experts: vLLM {release} ships no tuned fused-MoE tiles for this shape ({missing}) and runs its old "
            "default tiles, published at 1.04-1.13x tuned kernel time at <= E tokens per step and 1.4-1.7x above "
            "for many-expert models (not priced; models/cost/moe_default_tiles.py); vLLM >= 0.17 defaults run "
            "within 1.1x")
