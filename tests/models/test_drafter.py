"""Speculative drafters add weights and KV layers (hand arithmetic from the configs in the catalog)."""

from __future__ import annotations

import json

from sched_reader.models.capacity import estimate_capacity
from sched_reader.analyzers.pipeline import build_specs


def _cap(model: str, tp: str, gpu: str, *extra: str) -> dict:
    [spec] = build_specs([], ["vllm", "serve", model, "-tp", tp, "--max-model-len", "8192", *extra], gpu=gpu,
                         vllm="0.19.0")
    return estimate_capacity(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization).to_json()


def test_mtp_adds_one_mla_layer_of_kv_per_token():
    base = _cap("deepseek-ai/DeepSeek-V3", "8", "H200")
    mtp = _cap("deepseek-ai/DeepSeek-V3", "8", "H200", "--speculative-config",
               json.dumps({"method": "mtp", "num_speculative_tokens": 1}))
    # MLA latent (512 + 64) x 2 B = 1,152 B per token per layer; 61 -> 62 layers
    assert base["kv_cache"]["bytes_per_token"] == 61 * 1152
    assert mtp["kv_cache"]["bytes_per_token"] == 62 * 1152
    # one more MoE decoder layer in FP8 on each of 8 GPUs: about 11.4e9 / 8 B ~ 1.3 GiB
    assert 1.1 < mtp["memory"]["weights_gib"] - base["memory"]["weights_gib"] < 1.6


def test_draft_model_adds_its_weights_and_layers():
    base = _cap("meta-llama/Llama-3.3-70B-Instruct", "4", "H100")
    draft = _cap("meta-llama/Llama-3.3-70B-Instruct", "4", "H100", "--speculative-config",
                 json.dumps({"method": "draft_model", "model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4}))
    # Llama-3.2-1B: 16 layers x 2 (K,V) x 8/4 KV heads x 64 x 2 B = 8,192 B per token per rank
    assert draft["kv_cache"]["bytes_per_token"] - base["kv_cache"]["bytes_per_token"] == 8192
    # 1.236e9 params x 2 B / 4 ranks ~ 0.58 GiB (embedding sharded by vocab)
    assert 0.5 < draft["memory"]["weights_gib"] - base["memory"]["weights_gib"] < 0.7


def test_ngram_adds_nothing():
    base = _cap("meta-llama/Llama-3.1-8B-Instruct", "1", "H100")
    ngram = _cap("meta-llama/Llama-3.1-8B-Instruct", "1", "H100", "--speculative-config",
                 json.dumps({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}))
    assert ngram["kv_cache"]["bytes_per_token"] == base["kv_cache"]["bytes_per_token"]
    assert ngram["memory"]["weights_gib"] == base["memory"]["weights_gib"]
