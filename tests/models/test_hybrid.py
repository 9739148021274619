"""Hybrid (recurrent-state) models: vLLM's hybrid block sizing and KV groups, checked against real logs.

Independent figures:
* Qwen3-Next-80B-A3B-Instruct, vLLM 0.10.2, TP2 (public start-up log): "Setting attention block size to
  544 tokens", "Padding mamba page size by 1.49%", "Available KV cache memory: 44.59 GiB",
  "GPU KV cache size: 973,760 tokens", "Maximum concurrency for 262,144 tokens per request: 14.77x".
* Qwen3-Coder-Next (same shapes): published parameter total 79,674,391,296.
* Qwen3.6-27B: vLLM prints "Setting attention block size to 784 tokens" (LMCache / GPUStack docs).
"""

from __future__ import annotations

from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.hybrid import layer_mixers, state_bytes
from sched_reader.models.kv_cache import kv_capacity
from sched_reader.models.model_catalog import get_model
from sched_reader.models.weights import weight_breakdown

GIB = 2**30


def _cfg(**kw) -> EffectiveConfig:
    base = dict(vllm_version="0.10.2", tensor_parallel_size=2, max_model_len=262144, gpu_memory_utilization=0.9,
                dtype="bfloat16", max_num_seqs=1024, max_num_batched_tokens=8192, enable_chunked_prefill=True,
                enable_prefix_caching=False)
    base.update(kw)
    return EffectiveConfig(**base)


def test_qwen3_next_layer_mix():
    kinds = layer_mixers(get_model("Qwen/Qwen3-Next-80B-A3B-Instruct"))
    assert kinds.count("attention") == 12 and kinds.count("gdn") == 36 and kinds[3] == "attention"


def test_qwen3_next_state_page_by_hand():
    arch = get_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    # TP2: conv (2*16*128 + 32*128)/2 * 3 * 2 B = 24,576; temporal 32/2 * 128 * 128 * 2 B = 524,288
    assert state_bytes(arch, "gdn", 2, 2) == 24_576 + 524_288


def test_qwen3_next_kv_matches_the_vllm_0_10_2_log():
    arch = get_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    r = kv_capacity(arch, _cfg(), [int(44.59 * GIB)])
    assert r.block_size == 544                       # "Setting attention block size to 544 tokens"
    assert round(100 * (r.page_size_bytes / (24_576 + 524_288) - 1), 2) == 1.49   # "Padding ... by 1.49%"
    assert r.tokens == 973_760                       # "GPU KV cache size: 973,760 tokens"
    assert r.max_concurrency == 14.77                # "... 262,144 tokens per request: 14.77x"


def test_qwen3_next_parameter_count_is_the_published_total():
    arch = get_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    wb = weight_breakdown(arch, _cfg(tensor_parallel_size=1))
    assert wb.params_total == 79_674_391_296


def test_qwen3_6_27b_block_size_784():
    arch = get_model("Qwen/Qwen3.6-27B")
    r = kv_capacity(arch, _cfg(tensor_parallel_size=1, vllm_version="0.21.0", max_model_len=32768),
                    [20 * GIB])
    assert r.block_size == 784                       # fp32 temporal state (mamba_ssm_dtype float32)


def test_prefix_caching_on_hybrid_keeps_two_state_blocks_per_request():
    arch = get_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    none = kv_capacity(arch, _cfg(vllm_version="0.19.0", enable_prefix_caching=False), [int(44.59 * GIB)])
    align = kv_capacity(arch, _cfg(vllm_version="0.19.0", enable_prefix_caching=True), [int(44.59 * GIB)])
    # 7162 blocks; per request 482 attention blocks + 3 state groups x (1 | 2)
    assert none.max_concurrency == round(7162 / 485, 2) and align.max_concurrency == round(7162 / 488, 2)


def test_nemotron_h_pattern():
    kinds = layer_mixers(get_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2"))
    assert kinds.count("attention") == 4 and kinds.count("mamba2") == 27 and kinds.count("none") == 25
