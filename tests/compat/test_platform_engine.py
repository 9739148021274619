"""V1 off by default on non-NVIDIA GPUs in vLLM 0.8.0-0.9.1 (compat/platform_engine.py).

Pinned to the release wheels' EngineArgs._is_v1_supported_oracle: 0.8.x "Non-CUDA is supported on V1, but off
by default for now", 0.9.0/0.9.1 "Non-[CUDA, TPU] ...", from 0.9.2 ``current_platform.default_v1`` (ROCm: True);
VLLM_USE_V1=1 set explicitly keeps V1 ("experimental")."""

from __future__ import annotations

import pytest

from sched_reader.analyzers.pipeline import build_specs
from sched_reader.compat.platform_engine import v0_by_platform


def engine(gpu: str, vllm: str, env: tuple[str, ...] = ()) -> str:
    [spec] = build_specs([], [*env, "vllm", "serve", "Qwen/Qwen3-8B"], gpu=gpu, vllm=vllm)
    return spec.effective.engine


@pytest.mark.parametrize("gpu, vllm, expected", [
    ("MI300X", "0.8.0", "v0"), ("MI300X", "0.8.5", "v0"), ("MI300X", "0.9.1", "v0"),
    ("MI300X", "0.9.2", "v1"), ("MI300X", "0.10.1", "v1"),
    ("H100 SXM", "0.8.0", "v1"), ("H100 SXM", "0.8.5", "v1"),
    ("MI300X", "0.7.3", "v0"),          # before 0.8.0 V0 is every platform's default anyway
])
def test_default_engine_by_platform_and_release(gpu, vllm, expected):
    assert engine(gpu, vllm) == expected


def test_explicit_vllm_use_v1_keeps_v1_on_amd():
    assert engine("MI300X", "0.8.5", ("VLLM_USE_V1=1",)) == "v1"
    assert engine("MI300X", "0.9.2", ("VLLM_USE_V1=0",)) == "v0"


def test_reason_names_the_rule_and_its_source():
    why = v0_by_platform("0.8.5", "AMD")
    assert why.startswith("V0:") and "VLLM_USE_V1=1" in why and "_is_v1_supported_oracle" in why
    assert v0_by_platform("0.8.5", "NVIDIA") is None and v0_by_platform("0.9.2", "AMD") is None
    assert v0_by_platform("0.9.1", "Intel") is not None


def test_explain_log_rebuilds_the_engine_the_log_ran():
    # a log that shows "Initializing a V1 LLM engine" in a release with both engines is rebuilt with
    # VLLM_USE_V1=1, so an AMD GPU on 0.8.x (V0 by default there) is predicted with the V1 engine it ran
    from sched_reader.analyzers.explain_log import _engine_env
    from sched_reader.readers.vllm_log import LogFacts

    assert _engine_env(LogFacts(file="x.log", lines=1, engine_core="v1", release="0.8.5")) == ["VLLM_USE_V1=1"]
    assert _engine_env(LogFacts(file="x.log", lines=1, engine_core="v0", release="0.8.5")) == []
    assert _engine_env(LogFacts(file="x.log", lines=1, engine_core="v1", release="0.11.0")) == []   # V1 only
    assert _engine_env(LogFacts(file="x.log", lines=1, engine_core="v1", release="0.6.3")) == []    # before V1
    assert engine("MI300X", "0.8.5", tuple(_engine_env(LogFacts(file="x.log", lines=1, engine_core="v1",
                                                                release="0.8.5")))) == "v1"
