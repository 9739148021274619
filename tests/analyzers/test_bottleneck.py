"""Bottleneck verdicts pinned to hand calculations written here."""

from __future__ import annotations

from sched_reader.analyzers.bottleneck import MemoryBudget, analyze

BASE = dict(block_size=16, max_model_len=8192, chunked_prefill=True, fits=True)


def test_kv_blocks_bind_when_they_hold_fewer_sequences_than_max_num_seqs():
    # 100,000 tokens = 6,250 blocks; a 1,000 + 1,000 token sequence needs 125 blocks -> 50 sequences.
    v = analyze(kv_tokens=100_000, max_num_seqs=256, max_num_batched_tokens=8192, mean_input_len=1000,
                mean_output_len=1000, workload_concurrency=None, **BASE)
    assert v.bottleneck == "kv_cache_blocks"
    assert v.limits["kv_cache_blocks"] == 50
    assert v.concurrency_limit == 50
    assert v.recommendations[0].flag == "--kv-cache-dtype"


def test_max_num_seqs_binds_when_kv_holds_more():
    # 1,000,000 tokens = 62,500 blocks; 512 + 128 tokens = 40 blocks -> 1,562 sequences > 256.
    v = analyze(kv_tokens=1_000_000, max_num_seqs=256, max_num_batched_tokens=8192, mean_input_len=512,
                mean_output_len=128, workload_concurrency=None, **BASE)
    assert v.bottleneck == "max_num_seqs"
    assert v.limits["kv_cache_blocks"] == 1562
    assert v.recommendations[0].flag == "--max-num-seqs"
    assert int(v.recommendations[0].suggested) == 1552  # 1,562 rounded down to a multiple of 16


def test_token_budget_binds_for_long_prompts():
    # 16,000-token prompts with a 2,048-token budget: ceil(16000 / 2048) = 8 iterations per prompt.
    v = analyze(kv_tokens=2_000_000, max_num_seqs=64, max_num_batched_tokens=2048, mean_input_len=16000,
                mean_output_len=100, workload_concurrency=16, **BASE)
    assert v.bottleneck == "token_budget"
    assert any(f.value == 8 and f.unit == "iterations" for f in v.figures)


def test_workload_itself_is_the_limit_when_nothing_binds():
    v = analyze(kv_tokens=1_000_000, max_num_seqs=256, max_num_batched_tokens=8192, mean_input_len=512,
                mean_output_len=128, workload_concurrency=8, **BASE)
    assert v.bottleneck == "workload_concurrency"
    assert v.concurrency_limit == 8


GIB = 2**30


def test_kv_shortfall_suggests_a_max_model_len_that_fits_and_only_fixes_that_close_the_gap():
    # 80 GiB GPU at gmu 0.3 = 24 GiB requested; 15 GiB weights + 2 GiB other leave 7 GiB of KV at
    # 131,072 B/token = 57,344 tokens < max-model-len 131,072. At gmu 0.95: 76 - 17 = 59 GiB -> 483,328 tokens.
    # fp8 KV doubles to 114,688 < 131,072: not offered. TP 2: 24 - 7.5 - 2 = 14.5 GiB -> 118,784: not offered.
    mem = MemoryBudget(total_bytes=80 * GIB, requested_bytes=24 * GIB, weights_bytes=15 * GIB,
                       other_bytes=2 * GIB, bytes_per_token=131072)
    v = analyze(kv_tokens=57344, max_num_seqs=256, max_num_batched_tokens=8192, mean_input_len=512,
                mean_output_len=128, workload_concurrency=None, block_size=16, max_model_len=131072,
                chunked_prefill=True, fits=False, start_error="max seq len too large",
                gpu_memory_utilization=0.3, memory=mem)
    assert v.bottleneck == "does_not_start"
    flags = {r.flag: r.suggested for r in v.recommendations}
    assert flags == {"--max-model-len": "57344", "--gpu-memory-utilization": "0.95"}


def test_weights_that_do_not_load_get_only_more_gpus():
    # 131 GiB of weights, 71 GiB requested, 3 GiB other: TP 2 leaves 71 - 65.5 - 3 = 2.5 GiB (8,192 tokens at
    # 327,680 B/token): 2.5 GiB / 327,680 B = 8,192 tokens exactly, enough for max-model-len 8,192.
    mem = MemoryBudget(total_bytes=80 * GIB, requested_bytes=71 * GIB, weights_bytes=131 * GIB,
                       other_bytes=3 * GIB, bytes_per_token=327680)
    v = analyze(kv_tokens=0, max_num_seqs=256, max_num_batched_tokens=8192, mean_input_len=512,
                mean_output_len=128, workload_concurrency=None, block_size=16, max_model_len=8192,
                chunked_prefill=True, fits=False, start_error="weights do not fit", memory=mem)
    assert [(r.flag, r.suggested) for r in v.recommendations][0] == ("--tensor-parallel-size", "2")
    assert all(r.flag not in ("--kv-cache-dtype", "--gpu-memory-utilization") for r in v.recommendations)


def test_mixed_step_is_slower_than_a_decode_only_step():
    def step(nd, ctx, tokens, pairs):  # toy linear cost: 5 ms + 2 us/token + 10 ns/context token
        return 0.005 + 2e-6 * (nd + tokens) + 1e-8 * ctx

    v = analyze(kv_tokens=1_000_000, max_num_seqs=64, max_num_batched_tokens=2048, mean_input_len=1000,
                mean_output_len=200, workload_concurrency=32, step_time=step, **BASE)
    times = {f.name: f.value for f in v.figures if f.unit == "ms"}
    assert times["step time with a prefill chunk"] > times["decode-only step time"]


def test_more_tensor_parallelism_also_splits_each_tokens_kv():
    # 70B BF16 on 80 GB GPUs, max-model-len 131,072: TP 2 leaves 71 - 65.5 - 3 = 2.5 GiB for KV at
    # 327,680 / 2 B/token = 16,384 tokens (too few); TP 4 leaves 71 - 32.75 - 3 = 35.25 GiB at 81,920 B/token
    # = 462,028 tokens (8 KV heads split 4 ways), so TP 4 is the smallest that starts.
    mem = MemoryBudget(total_bytes=80 * GIB, requested_bytes=71 * GIB, weights_bytes=131 * GIB,
                       other_bytes=3 * GIB, bytes_per_token=327680, kv_split_limit=8)
    assert mem.kv_tokens_at(tp_factor=2) == 16384
    assert mem.kv_tokens_at(tp_factor=4) == 462028
    v = analyze(kv_tokens=0, max_num_seqs=256, max_num_batched_tokens=8192, mean_input_len=512,
                mean_output_len=128, workload_concurrency=None, block_size=16, max_model_len=131072,
                chunked_prefill=True, fits=False, start_error="weights do not fit", memory=mem)
    assert (v.recommendations[0].flag, v.recommendations[0].suggested) == ("--tensor-parallel-size", "4")
