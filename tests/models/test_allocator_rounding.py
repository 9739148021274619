"""Weights as torch's caching allocator counts them (the figure vLLM logs as "Loading model weights took").

Hand calculations from c10/cuda/CUDACachingAllocator.cpp: a request >= 10 MiB gets a segment rounded up to 2 MiB and
is split only when the remainder exceeds 1 MiB; 1-10 MiB requests are split from 20 MiB segments; every request is
rounded to 512 bytes. Pinned to real start-up logs of Qwen2-family models, whose tensors are not 2 MiB multiples.
"""

from __future__ import annotations

from functools import partial

import pytest
from helpers import effective_config

from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import allocator_rounding, weight_breakdown

MIB = 2**20
GIB = 2**30
cfg = partial(effective_config)


def _wb(name, **kw):
    return weight_breakdown(resolve_model(name).arch, cfg(**kw))


@pytest.mark.parametrize("nbytes, extra", [
    (4608 * 3584 * 2, MIB // 2),        # Qwen2.5-7B qkv 31.5 MiB: 32 MiB segment, 0.5 MiB not split off
    (3584 * 3584 * 2, 0),               # o_proj 24.5 MiB: 26 MiB segment, 1.5 MiB > 1 MiB is split off
    (2 * 18944 * 3584 * 2, MIB),        # gate_up 259 MiB: 260 MiB segment, exactly 1 MiB stays (not > 1 MiB)
    (48 * MIB, 0),                      # Llama-3.1-8B qkv: a 2 MiB multiple
    (5 * MIB + 3, 509),                 # 1-10 MiB: split from a 20 MiB segment, only the 512-byte rounding
    (1000, 24),                         # small pool: 512-byte blocks
])
def test_allocator_rounding_hand_calculation(nbytes, extra):
    assert allocator_rounding(nbytes) == extra


def test_qwen25_7b_weights_match_the_logged_load():
    # 28 layers x (qkv 0.5 + gate_up 1 + down 0.5 MiB) + embedding 0.5 + lm_head 0.5 MiB = 57 MiB over the shapes.
    wb = _wb("Qwen/Qwen2.5-7B-Instruct")
    assert wb.component_bytes("allocator_rounding") == 57 * MIB
    # vllm-ascend issue log "Loading model weights took 14.2488 GB" (stored-code index id 56101152577);
    # llm-d-planner v0.19.0 H100 log 14.25 GiB.
    assert wb.bytes_per_gpu / GIB == pytest.approx(14.2488, abs=0.0005)


def test_qwen25_14b_tp2_weights_match_vllm_issue_13061():
    # Per rank: qkv 35, o 25, gate_up 135 MiB take 1 MiB each, down 67.5 MiB takes 0.5: 3.5 MiB x 48 layers;
    # embeddings 742.5 MiB leave 1.5 MiB, split off.
    wb = _wb("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", tensor_parallel_size=2)
    assert wb.component_bytes("allocator_rounding") == 168 * MIB
    # vLLM issue 13061 (V0 0.7.x, 2x RTX 4090): "Loading model weights took 13.9476 GB"
    assert wb.bytes_per_gpu / GIB == pytest.approx(13.9476, abs=0.005)


def test_llama_8b_rounds_only_its_embeddings():
    # Llama-3.1-8B: every layer tensor is a 2 MiB multiple; logged 14.99 GiB at TP 1. At TP 2 each embedding shard is
    # 64,128 x 4,096 x 2 B = 501 MiB: a 502 MiB segment whose 1 MiB remainder stays, 2 MiB in all.
    assert _wb("meta-llama/Llama-3.1-8B-Instruct").component_bytes("allocator_rounding") == 0
    wb = _wb("meta-llama/Llama-3.1-8B-Instruct", tensor_parallel_size=2)
    assert wb.component_bytes("allocator_rounding") == 2 * MIB
    # V0 0.6.x TP 2 log "Loading model weights took 7.5122 GB" (stored-code index id 40902855807); a 0.7.x
    # LeaderWorkerSet example prints 7.5100 GB (id 7354110786).
    assert wb.bytes_per_gpu / GIB == pytest.approx(7.5122, abs=0.0005)


def test_w8a8_channel_scales_match_vllm_pr12569():
    # neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8 (compressed-tensors INT8, per-channel weight scales):
    # fp32 (N, 1) per linear: qkv 10,240 + o 8,192 + gate_up 57,344 + down 8,192 channels x 4 B x 80 layers
    # = 26,869,760 B. Every INT8 tensor and the bf16 embeddings are 2 MiB multiples (no rounding).
    # vLLM PR 12569's 0.7.0 log: "Loading model weights took 67.7229 GB".
    plain = _wb("meta-llama/Llama-3.1-70B-Instruct")
    wb = weight_breakdown(resolve_model("neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8").arch, cfg(),
                          "w8a8")
    assert wb.component_bytes("allocator_rounding") == 0
    linear_params = plain.components["attention"].params_per_gpu + plain.components["mlp_dense"].params_per_gpu
    scales = (10_240 + 8_192 + 57_344 + 8_192) * 4 * 80
    assert scales == 26_869_760
    assert (wb.component_bytes("attention") + wb.component_bytes("mlp_dense")) == linear_params + scales
    assert wb.bytes_per_gpu / GIB == pytest.approx(67.7229, abs=0.002)
