"""A name the catalog lacks gets a proxy of its own kind: dense for dense, mixture-of-experts for MoE.

Before: an unknown dense 176B name took Mixtral-8x22B ("8x22" = 176) and an unknown 16B dense name took
DeepSeek-V2-Lite (MoE with MLA), whose KV cache and per-token FLOPs differ several-fold from a dense model
of that size. Every name here is made up (not in the catalog); the kind comes from the name alone.
"""

from __future__ import annotations

import pytest

from sched_reader.errors import UnknownModelError
from sched_reader.models.model_catalog import get_model, resolve_model
from sched_reader.models.name_match import name_key


def _has_experts(model_id: str) -> bool:
    c = get_model(model_id).config
    return bool(c.get("n_routed_experts") or c.get("num_local_experts") or c.get("num_experts"))


@pytest.mark.parametrize("name, moe", [
    ("acme/foo-176B", False), ("acme/bar-16B-chat", False),
    ("acme/foo-moe-16B", True),                      # the word MoE
    ("acme/blend-8x7B-v2", True),                    # expert count x size
    ("acme/thing-30B-A3B", True),                    # active-size tag
    ("acme/Scout-like-17B-16E", True),               # expert-count tag
    ("acme/Mixtral-custom-45B", True),               # a MoE-only family
    ("acme/DeepSeek-R1-Distill-Llama-70B-sft", False),   # R1 distills are dense
    ("acme/yi-1.5e-34B", False),                     # "1.5e" is no expert tag
])
def test_the_name_says_the_kind(name, moe):
    assert name_key(name).moe is moe


@pytest.mark.parametrize("name", ["acme/foo-176B", "acme/bar-16B-chat", "acme/dense-34B", "acme/tiny-3.2B"])
def test_a_dense_name_gets_a_dense_proxy(name):
    r = resolve_model(name)
    assert not _has_experts(r.arch.id)
    assert r.guessed and "a guess: the dense catalog model closest in total size" in r.note
    assert "--model-config" in r.note
    # closest total size among dense entries, within 20%
    assert abs(get_model(r.arch.id).official_params / 1e9 / name_key(name).size_b - 1) <= 0.2


def test_the_176b_dense_name_no_longer_takes_mixtral_8x22b():
    assert resolve_model("acme/foo-176B").arch.id == "tiiuae/falcon-180B"


@pytest.mark.parametrize("name", ["acme/foo-moe-16B", "acme/big-MoE-140B", "acme/blend-8x7B-v2"])
def test_a_moe_name_gets_a_moe_proxy(name):
    r = resolve_model(name)
    assert _has_experts(r.arch.id)
    assert r.guessed and "a guess: the mixture-of-experts catalog model closest in total size" in r.note


def test_closest_size_within_the_kind():
    # dense 16B: Qwen2.5-14B / phi-4 (14.7B) are the closest dense totals, never DeepSeek-V2-Lite (15.7B, MoE)
    assert resolve_model("acme/bar-16B-chat").arch.id != "deepseek-ai/DeepSeek-V2-Lite"
    assert resolve_model("acme/foo-moe-16B").arch.id == "deepseek-ai/deepseek-moe-16b-base"


def test_no_proxy_beyond_20_percent_or_for_a_known_line():
    with pytest.raises(UnknownModelError):
        resolve_model("acme/huge-900B")        # nothing dense within 20% of 900B
    with pytest.raises(UnknownModelError):
        resolve_model("Qwen/Qwen3-15B")        # the catalog has Qwen3 lines, none of 15B


def test_a_size_guess_prefers_grouped_query_attention():
    # 34-35B dense: Command-R v01 (35B, 64 KV heads = 1.25 MiB of KV per token) is closest in size, but a made-up
    # 34B name gets the grouped-query Command-R 08-2024 (32B, 8 KV heads) unless an MHA model is >10% closer
    r = resolve_model("acme/dense-34B")
    a = r.arch
    assert a.num_kv_heads < a.num_attention_heads and a.num_kv_heads > 1
    assert r.arch.id != "CohereForAI/c4ai-command-r-v01"


def test_size_decides_over_family_beyond_five_percent():
    # a made-up Qwen 3.9 27B: no Qwen line of that version; Qwen2.5-32B (same family word, 18% larger) is not
    # preferred over a 27B model of another family
    r = resolve_model("acme/qwen3.9-27b-sft")
    assert abs(get_model(r.arch.id).official_params / 27e9 - 1) < 0.05


def test_qwen_fp8_release_is_block_quantized():
    """Qwen's own -FP8 repos are block-wise FP8 (their model cards: "fine-grained fp8 quantization with block
    size of 128"; config.json weight_block_size [128, 128]); other publishers' FP8 names keep their own scheme."""
    from sched_reader.models.model_catalog import resolve_model
    from sched_reader.models.quantization import scheme_from_quant_config

    r = resolve_model("Qwen/Qwen3-30B-A3B-FP8")
    assert r.arch.quantization_config["weight_block_size"] == [128, 128]
    assert scheme_from_quant_config(r.arch.quantization_config) == ("fp8", "fp8")
    assert resolve_model("Qwen/Qwen3-30B-A3B").arch.quantization_config is None  # the catalog entry is untouched
    assert resolve_model("RedHatAI/Qwen3-30B-A3B-FP8-dynamic").arch.quantization_config is None
