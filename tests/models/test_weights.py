"""Weights per GPU: hand calculations (written out) and HF checkpoint element counts."""

from __future__ import annotations

from functools import partial

from helpers import effective_config

import pytest

from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import (
    get_pp_indices, kv_heads_per_rank, vocab_rows_per_rank, weight_breakdown,
)

GIB = 2**30


cfg = partial(effective_config)


def arch(name):
    return resolve_model(name).arch


def test_llama_8b_bf16_hand_calculation():
    # HF safetensors.total for Llama-3.1-8B = 8,030,261,248 elements, 2 bytes each,
    # plus the llama3 rope cos/sin cache: 131,072 positions x 128 dims x 2 bytes = 33,554,432.
    expected = 8_030_261_248 * 2 + 131_072 * 128 * 2
    wb = weight_breakdown(arch("meta-llama/Llama-3.1-8B-Instruct"), cfg())
    assert wb.params_total == 8_030_261_248
    assert wb.bytes_per_gpu == expected
    # vLLM v0.19.0 log: "Model loading took 14.99 GiB"
    assert round(wb.bytes_per_gpu / GIB, 2) == 14.99


def test_float32_doubles_every_component():
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    bf = weight_breakdown(a, cfg())
    f32 = weight_breakdown(a, cfg(dtype="float32"))
    assert f32.bytes_per_gpu == 2 * bf.bytes_per_gpu
    assert f32.weight_format == "fp32"


def test_runtime_fp8_stores_linear_layers_in_one_byte():
    # Llama-3.1-8B: linear weights = 8,030,261,248 - 2 x 128,256 x 4,096 (embed + lm_head)
    # - 32 x 2 x 4,096 - 4,096 (RMSNorms) = 6,979,321,856; fp8 -> 1 byte each.
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    wb = weight_breakdown(a, cfg(quantization="fp8"))
    linear = wb.component_bytes("attention") + wb.component_bytes("mlp_dense")
    assert linear == 6_979_321_856
    assert wb.component_bytes("embedding") == 128_256 * 4_096 * 2   # kept in bf16
    assert wb.component_bytes("lm_head") == 128_256 * 4_096 * 2


def test_tensor_parallel_split_llama_70b_fp8_tp4():
    a = arch("meta-llama/Llama-3.3-70B-Instruct")
    wb = weight_breakdown(a, cfg(tensor_parallel_size=4), "fp8")
    # vocab 128,256 is a multiple of 64 -> 32,064 rows per rank x 8,192 x 2 bytes
    assert wb.component_bytes("embedding") == 32_064 * 8_192 * 2
    # v0.19.0 log (H100 TP4): "Model loading took 16.96 GiB"
    assert abs(wb.gib_per_gpu / 16.96 - 1) < 0.01


def test_vocab_padding_and_kv_head_replication():
    assert vocab_rows_per_rank(151_655, 2) == 75_840   # pad to 151,680, split in two
    assert vocab_rows_per_rank(32_000, 1) == 32_000
    assert kv_heads_per_rank(8, 16) == 1                # fewer KV heads than ranks: replicated
    assert kv_heads_per_rank(8, 4) == 2


def test_pp_split_matches_vllm_get_pp_indices():
    # 61 layers on 4 stages: 15 each, the remainder goes to the stage before the last
    assert [get_pp_indices(61, s, 4) for s in range(4)] == [(0, 15), (15, 30), (30, 46), (46, 61)]
    assert [get_pp_indices(32, s, 2) for s in range(2)] == [(0, 16), (16, 32)]


def test_pipeline_stages_put_embedding_first_and_lm_head_last():
    a = arch("meta-llama/Llama-3.1-8B-Instruct")
    wb = weight_breakdown(a, cfg(pipeline_parallel_size=2))
    assert len(wb.stage_bytes) == 2
    # v0.19.0 PP=2 log: "Model loading took 7.51 GiB"
    assert round(wb.gib_per_gpu, 2) == 7.51


def test_tied_embeddings_have_no_separate_lm_head():
    wb = weight_breakdown(arch("google/gemma-2-9b-it"), cfg())
    assert wb.component_bytes("lm_head") == 0
    assert wb.params_total == 9_241_705_984            # HF safetensors.total


def test_moe_params_match_checkpoint_counts():
    for name, total in (("mistralai/Mixtral-8x7B-Instruct-v0.1", 46_702_792_704),
                        ("Qwen/Qwen3-30B-A3B", 30_532_122_624),
                        ("deepseek-ai/DeepSeek-V2-Lite-Chat", 15_706_484_224)):
        wb = weight_breakdown(arch(name), cfg())
        assert wb.params_total == total, name
        assert wb.component_bytes("moe_routed_experts") > 0


def test_mxfp4_experts_are_quarter_size_and_flagged_guessed():
    a = arch("openai/gpt-oss-20b")
    wb = weight_breakdown(a, cfg(tensor_parallel_size=2), "mxfp4")
    assert wb.weight_format == "mxfp4"
    moe = wb.components["moe_routed_experts"]
    # 32 experts x 3 x 2,880 x 2,880 / 2 (TP) params x 24 layers at ~0.53 B each << bf16
    assert moe.bytes_per_gpu < 0.3 * moe.params_per_gpu * 2
    assert any(t.guessed for t in wb.explain if t.name == "weights_moe_routed_experts")


def test_explain_terms_sum_to_total():
    wb = weight_breakdown(arch("Qwen/Qwen3-14B"), cfg())
    parts = sum(c.bytes_per_gpu for c in wb.components.values())
    assert abs(parts - wb.bytes_per_gpu) <= len(wb.components)
    assert wb.explain[-1].unit == "GiB"


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_more_tensor_parallel_ranks_never_hold_more(tp):
    a = arch("Qwen/Qwen3-14B")
    one = weight_breakdown(a, cfg()).bytes_per_gpu
    assert weight_breakdown(a, cfg(tensor_parallel_size=tp)).bytes_per_gpu <= one / tp * 1.05 + 2**28
