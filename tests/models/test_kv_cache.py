"""KV bytes per token, KV-cache groups, blocks/tokens/concurrency rounding and vLLM's errors."""

from __future__ import annotations

from functools import partial

from helpers import effective_config

from sched_reader.models.kv_cache import kv_bytes_per_token, kv_capacity
from sched_reader.models.model_catalog import resolve_model

MIB = 2**20


cfg = partial(effective_config, gpu_memory_utilization=0.95, enable_prefix_caching=False)


def arch(name):
    return resolve_model(name).arch


def test_llama_70b_bf16_kv_bytes_per_token():
    # 80 layers x 2 (K,V) x 8 KV heads x 128 head_dim x 2 bytes = 327,680
    assert kv_bytes_per_token(arch("meta-llama/Llama-3.3-70B-Instruct"), cfg()) == 327_680


def test_fp8_kv_cache_halves_it():
    a = arch("meta-llama/Llama-3.3-70B-Instruct")
    assert kv_bytes_per_token(a, cfg(kv_cache_dtype="fp8")) == 163_840
    assert kv_bytes_per_token(a, cfg(kv_cache_dtype="fp8_e5m2")) == 163_840


def test_tp_splits_gqa_heads_per_rank():
    # TP4: 2 KV heads per rank -> 80 x 2 x 2 x 128 x 2 = 81,920
    assert kv_bytes_per_token(arch("meta-llama/Llama-3.3-70B-Instruct"), cfg(tensor_parallel_size=4)) == 81_920


def test_mla_per_token_size_does_not_change_with_tp():
    a = arch("deepseek-ai/DeepSeek-V2-Lite-Chat")
    # 27 layers x (kv_lora_rank 512 + rope 64) x 2 bytes = 31,104
    sizes = {kv_bytes_per_token(a, cfg(tensor_parallel_size=tp)) for tp in (1, 2, 4)}
    assert sizes == {31_104}


def test_gemma2_hybrid_groups_reproduce_the_log():
    # v0.19.0 gemma-2-9b log: num_gpu_blocks 21110 -> "GPU KV cache size: 168,880 tokens", 20.60x.
    # 21 sliding + 21 full layers -> group_size 21, 2 groups; page = 16 x 2 x 8 x 256 x 2 = 131,072 B.
    a = arch("google/gemma-2-9b-it")
    r = kv_capacity(a, cfg(), [21110 * 131_072 * 21])
    assert (r.num_blocks, r.num_groups, r.group_size, r.page_size_bytes) == (21110, 2, 21, 131_072)
    assert r.tokens == 21110 // 2 * 16 == 168_880
    # one 8192-token request: full 512 blocks + sliding cdiv(min(4095 + 8192, 8192), 16) + 1 = 513
    assert r.max_concurrency == round(21110 / 1025, 2) == 20.6


def test_gemma3_six_groups_reproduce_the_log():
    # 48 layers, pattern 6: 8 full + 40 sliding(1024) -> group_size 8, 1 + 5 groups.
    # v0.19.0 log: num_gpu_blocks 48867 -> 130,304 tokens, 15.88x.
    a = arch("google/gemma-3-12b-it")
    r = kv_capacity(a, cfg(), [48867 * 131_072 * 8])
    assert (r.num_blocks, r.num_groups) == (48867, 6)
    assert r.tokens == 130_304
    assert r.max_concurrency == 15.88


def test_from_0_20_1_tokens_are_concurrency_times_len():
    a = arch("google/gemma-2-9b-it")
    r = kv_capacity(a, cfg(vllm_version="0.20.1"), [21110 * 131_072 * 21])
    assert r.tokens == int(21110 / 1025 * 8192)


def test_v0_blocks_and_concurrency():
    # issue #10517: 1952 blocks of 16 tokens for max_model_len 20000 -> 1.56x
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    c = cfg(vllm_version="0.6.4", engine="v0", max_model_len=20000, max_num_batched_tokens=20000,
            enable_chunked_prefill=False)
    r = kv_capacity(a, c, [1952 * 2 * MIB + 12345])
    assert r.num_blocks == 1952 and r.max_concurrency == 1.56 and r.fits


def test_no_memory_error_message():
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    r = kv_capacity(a, cfg(), [-5 * MIB])
    assert not r.fits
    assert r.error.startswith("No available memory for the cache blocks.")


def test_max_seq_len_error_gives_estimated_length():
    # 131,072 B/token; 1000 blocks of 16 tokens = 2000 MiB hold 16,000 tokens < 32,768
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    r = kv_capacity(a, cfg(max_model_len=32768), [1000 * 2 * MIB])
    assert not r.fits
    assert r.estimated_max_model_len == 16_000
    assert "max seq len (32768)" in r.error and "estimated maximum model length is 16000" in r.error


def test_v0_max_seq_len_error():
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    c = cfg(vllm_version="0.6.4", engine="v0", max_model_len=20000, enable_chunked_prefill=False)
    r = kv_capacity(a, c, [1000 * 2 * MIB])
    assert "is larger than the maximum number of tokens that can be stored in KV cache (16000)" in r.error


def test_pipeline_engine_uses_the_smallest_stage():
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    # 16 layers per stage -> 1 MiB per block; stage 1 has less memory and bounds the engine
    r = kv_capacity(a, cfg(pipeline_parallel_size=2), [68137 * MIB, 67207 * MIB])
    assert r.num_blocks == 67207 and r.tokens == 1_075_312   # v0.19.0 PP=2 log


def test_gpt_oss_tp2_hybrid_groups_reproduce_the_log():
    # 12 sliding(128) + 12 full layers, TP2 -> 4 KV heads per rank; page = 16 x 2 x 4 x 64 x 2 = 16,384 B.
    # v0.19.0 log: num_gpu_blocks 323972 -> 2,591,776 tokens, 316.07x (513 + 512 blocks per request)
    a = arch("openai/gpt-oss-20b")
    r = kv_capacity(a, cfg(tensor_parallel_size=2), [323972 * 16_384 * 12])
    assert (r.num_blocks, r.num_groups, r.page_size_bytes) == (323972, 2, 16_384)
    assert r.tokens == 2_591_776
    assert r.max_concurrency == 316.07
