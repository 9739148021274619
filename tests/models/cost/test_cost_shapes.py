"""The cost model's GEMM shapes agree with the weight-memory model (models/weights.py) and with the
published parameter totals, so FLOPs (2 x params x tokens) and weight bytes come from one accounting."""

from __future__ import annotations

import pytest

from sched_reader.models.cost.shapes import model_shapes
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import weight_breakdown

PAIRS = {"attn": "attention", "mlp": "mlp_dense", "experts": "moe_routed_experts", "shared": "moe_shared",
         "router": "router"}


def cfg(tp: int = 1) -> EffectiveConfig:
    return EffectiveConfig(vllm_version="0.11.0", tensor_parallel_size=tp, max_model_len=4096,
                           gpu_memory_utilization=0.9, dtype="bfloat16", max_num_seqs=256,
                           max_num_batched_tokens=8192, enable_chunked_prefill=True, enable_prefix_caching=True)


@pytest.mark.parametrize("model,tp", [
    ("meta-llama/Llama-3.1-8B", 1), ("meta-llama/Llama-3.1-8B", 2), ("Qwen/Qwen3-30B-A3B", 1),
    ("deepseek-ai/DeepSeek-V3", 8), ("openai/gpt-oss-120b", 2), ("google/gemma-2-9b", 1),
    ("mistralai/Mixtral-8x7B-v0.1", 2),
])
def test_params_per_gpu_match_weight_breakdown(model, tp):
    arch = resolve_model(model).arch
    mine = model_shapes(arch, tp=tp).params_per_gpu()
    wb = weight_breakdown(arch, cfg(tp))
    for c, theirs in PAIRS.items():
        # the weight model also counts biases, attention sinks and router correction biases (< 0.5%)
        assert mine[c] == pytest.approx(wb.components[theirs].params_per_gpu, rel=5e-3, abs=1024), c


@pytest.mark.parametrize("model,official", [
    ("meta-llama/Llama-3.1-8B", 8_030_261_248),   # HF safetensors total
    ("Qwen/Qwen3-30B-A3B", 30_532_122_624),
])
def test_total_params_match_published_totals(model, official):
    arch = resolve_model(model).arch
    p = model_shapes(arch).params_per_gpu()
    total = sum(p.values())
    if not arch.config.get("tie_word_embeddings"):
        assert p["lm_head"] == p["embed"]
    # shapes leave out norms (2 x hidden per layer + final): < 0.01% of these models
    assert total == pytest.approx(official, rel=1e-4)


def test_layer_patterns():
    gemma = model_shapes(resolve_model("google/gemma-2-9b").arch)
    windows = sorted((g.attention.window or 0, g.count) for g in gemma.groups)
    assert windows == [(0, 21), (4096, 21)]                 # alternating sliding / global
    oss = model_shapes(resolve_model("openai/gpt-oss-20b").arch)
    assert sorted((g.attention.window or 0, g.count) for g in oss.groups) == [(0, 12), (128, 12)]
    ds = model_shapes(resolve_model("deepseek-ai/DeepSeek-V3").arch, tp=8)
    assert sorted((g.moe is not None, g.count) for g in ds.groups) == [(False, 3), (True, 58)]
    moe = next(g.moe for g in ds.groups if g.moe)
    assert (moe.num_experts, moe.top_k, moe.local_experts) == (256, 8, 256)
    ep = model_shapes(resolve_model("deepseek-ai/DeepSeek-V3").arch, tp=8, expert_parallel=True)
    assert next(g.moe for g in ep.groups if g.moe).local_experts == 32   # 256 / (tp 8 x dp 1)
