"""Small builders shared by the model tests."""

from __future__ import annotations

from sched_reader.models.engine_spec import EffectiveConfig


def effective_config(**overrides) -> EffectiveConfig:
    """An EffectiveConfig with `vllm serve` defaults on an H100 in vLLM 0.19.0 (V1: 8,192-token budget,
    1,024 sequences, chunked prefill and prefix caching on, gmu 0.9), overridden by keyword."""
    base = dict(vllm_version="0.19.0", max_model_len=8192, gpu_memory_utilization=0.9, dtype="bfloat16",
                max_num_seqs=1024, max_num_batched_tokens=8192, enable_chunked_prefill=True,
                enable_prefix_caching=True)
    base.update(overrides)
    return EffectiveConfig(**base)
