"""vLLM releases whose V1 engine is the default only on NVIDIA GPUs: elsewhere they start V0.

From 0.8.0 V1 is vLLM's default engine, but ``EngineArgs._is_v1_supported_oracle`` kept it off by default on
other platforms until 0.9.2. Unless ``VLLM_USE_V1=1`` is set explicitly (then V1 runs, "experimental"), the
oracle's ``_warn_or_fallback`` logs "<device> is experimental on VLLM_USE_V1=1. Falling back to V0 Engine."
and the engine, scheduler and defaults are V0's (read in the release wheels, vllm/engine/arg_utils.py):

  0.8.0 - 0.8.5   "Non-CUDA is supported on V1, but off by default for now": ``not current_platform.is_cuda()``
  0.9.0 - 0.9.1   "Non-[CUDA, TPU] may be supported on V1, but off by default for now"
  0.9.2 and later ``current_platform.default_v1(model_config)``, which ROCm answers with ``supports_v1`` (True)

Each window is ``(first release, first release without it, vendors it applies to)``. An AMD Instinct or an
Intel GPU serving 0.8.x therefore runs V0 (no chunked prefill by default below 32K context, the V0 scheduler
and host path) even though the release's default engine is V1.
"""

from __future__ import annotations

from sched_reader.compat import rocm_builds
from sched_reader.versions import parse_version

SOURCE = "vllm/engine/arg_utils.py EngineArgs._is_v1_supported_oracle, vLLM 0.8.0-0.9.1 wheels"
WINDOWS: tuple[tuple[tuple[int, int, int], tuple[int, int, int], frozenset[str]], ...] = (
    ((0, 8, 0), (0, 9, 2), frozenset({"AMD", "Intel"})),
)


def v0_by_platform(release: str, vendor: str | None, requested: str | None = None) -> str | None:
    """The reason V0 runs on ``vendor``'s GPUs under ``release`` without ``VLLM_USE_V1``, or None when the
    release's default engine applies (NVIDIA, or a release outside the windows, or an AMD image build of the
    ROCm/vllm fork that already has V1 as ROCm's default: ``requested`` as the image tag gave it, e.g.
    ``0.9.1+rocm.20250715``; compat/rocm_builds.py)."""
    if not vendor:
        return None
    if vendor == "AMD" and rocm_builds.has(rocm_builds.code_date(requested), "v1_default"):
        return None
    ver = parse_version(release)[:3]
    for lo, hi, vendors in WINDOWS:
        if lo <= ver < hi and vendor in vendors:
            return (f"V0: vLLM {release} keeps V1 off by default on {vendor} GPUs and falls back to V0 unless "
                    f"VLLM_USE_V1=1 is set ({SOURCE})")
    return None
