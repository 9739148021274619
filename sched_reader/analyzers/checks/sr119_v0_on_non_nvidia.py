"""vLLM 0.8.0-0.9.1 run the V0 engine on AMD and Intel GPUs unless VLLM_USE_V1=1

V1 is vLLM's default engine from 0.8.0, but `EngineArgs._is_v1_supported_oracle` kept it off by default on
non-NVIDIA platforms until 0.9.2 ("Non-CUDA is supported on V1, but off by default for now" in 0.8.x;
"Non-[CUDA, TPU] ..." in 0.9.0 and 0.9.1): without `VLLM_USE_V1=1` set explicitly the engine logs
"<device> is experimental on VLLM_USE_V1=1. Falling back to V0 Engine." and serves with V0's scheduler,
defaults (256 sequences, 2,048-token chunks where chunked prefill is on) and host path. sched-reader predicts
V0 for such a deploy; this finding says so, because the release notes' "V1 is the default" does not hold
there. From 0.9.2 the platform's `default_v1` decides, and ROCm answers true. Source: vLLM
vllm/engine/arg_utils.py in the 0.8.0-0.9.1 wheels (see sched_reader/compat/platform_engine.py).
"""

from __future__ import annotations

from sched_reader.compat.platform_engine import v0_by_platform
from sched_reader.findings import Finding
from sched_reader.models.engine_spec import EngineSpec

ID = "SR119"
NAME = "v0-engine-on-non-nvidia"
SEVERITY = "info"
FIX = "set VLLM_USE_V1=1 in the engine's environment for V1 (experimental on this platform there), or use vLLM 0.9.2+"
TAGS = ("engine", "defaults", "platform")


def check(spec: EngineSpec) -> list[Finding]:
    eff, hw = spec.effective, spec.hardware
    if eff is None or hw is None or eff.engine != "v0":
        return []
    why = v0_by_platform(spec.vllm_version, hw.gpu.vendor)
    if why is None or (eff.reasons or {}).get("engine") != why:
        return []  # V0 for another reason (an older release, VLLM_USE_V1=0)
    return [Finding(
        rule=ID, severity=SEVERITY,
        message=(f"vLLM {spec.vllm_version} runs the V0 engine on {hw.gpu.name} ({hw.gpu.vendor}): V1 is the "
                 f"default only on NVIDIA GPUs before 0.9.2 and VLLM_USE_V1=1 is not set; predictions use V0's "
                 f"scheduler and defaults"),
        file=spec.file, line=spec.line, key="VLLM_USE_V1", fix=FIX,
    )]
