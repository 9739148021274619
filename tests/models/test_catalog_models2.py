"""Catalog entries for Qwen2-72B, DBRX, Command R / R+, Falcon 7B/40B/180B and DeepSeekMoE 16B.

Independent pins: the vendors' published parameter counts (model cards; tolerance stated per case, as
they are rounded), KV bytes per token by hand from the published head layout, and tensor shapes from a
printed Falcon-7B module tree (github.com/kimborgen/falcon-llm README). Names of the FP8 checkpoints AMD
and Neural Magic / Red Hat publish resolve onto these entries with their weight format.
"""

from __future__ import annotations

import json

import pytest
from helpers import effective_config

from sched_reader.models.kv_cache import kv_bytes_per_token
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import weight_breakdown


def _total(name: str) -> int:
    return weight_breakdown(resolve_model(name).arch, effective_config()).params_total


@pytest.mark.parametrize("name, published, tol", [
    ("Qwen/Qwen2-72B-Instruct", 72.7e9, 0.001),                 # Qwen model card: 72.7B
    ("databricks/dbrx-instruct", 132e9, 0.005),                 # Databricks: 132B total
    ("CohereForAI/c4ai-command-r-plus-08-2024", 104e9, 0.005),  # Cohere: 104B
    ("CohereForAI/c4ai-command-r-08-2024", 32e9, 0.015),        # Cohere: 32B
    ("CohereForAI/c4ai-command-r-v01", 35e9, 0.005),            # Cohere: 35B
    ("tiiuae/falcon-180B", 180e9, 0.01),                        # TII: 180B
    ("tiiuae/falcon-7b", 7e9, 0.015),                           # TII: 7B
    ("deepseek-ai/deepseek-moe-16b-base", 16.4e9, 0.005),       # DeepSeek: 16.4B
    ("core42/jais-13b-chat", 13e9, 0.005),                      # Jais paper: 13B
])
def test_totals_match_the_published_parameter_counts(name, published, tol):
    assert abs(_total(name) / published - 1) <= tol


def test_falcon_40b_counts_the_tied_head_once():
    # TII calls it 40B; the checkpoint (HF: 41.8B elements) stores lm_head beside the embedding, which vLLM ties:
    # 41.8e9 (rounded to 0.1e9) - 65,024 x 8,192 (0.53e9) = 41.3e9 loaded
    assert abs(_total("tiiuae/falcon-40b") - (41.8e9 - 65_024 * 8_192)) <= 0.05e9


@pytest.mark.parametrize("name, published_active, tol", [
    ("databricks/dbrx-instruct", 36e9, 0.02),                   # 4 of 16 experts: "36B active"
    ("deepseek-ai/deepseek-moe-16b-chat", 2.8e9, 0.02),         # 6 routed + 2 shared of 1408: "2.8B activated"
])
def test_moe_active_parameters_match_the_published_figure(name, published_active, tol):
    a = resolve_model(name).arch
    wb = weight_breakdown(a, effective_config())
    c = a.config
    n_exp = c.get("num_local_experts") or c.get("n_routed_experts")
    routed = wb.components["moe_routed_experts"].params_total
    active = wb.params_total - routed + routed * c["num_experts_per_tok"] // n_exp
    assert abs(active / published_active - 1) <= tol


@pytest.mark.parametrize("name, by_hand", [
    ("tiiuae/falcon-7b", 32 * 2 * 1 * 64 * 2),                  # multi-query: ONE KV head of 64
    ("tiiuae/falcon-40b", 60 * 2 * 8 * 64 * 2),
    ("tiiuae/falcon-180B", 80 * 2 * 8 * 64 * 2),                # 8 KV groups of 64
    ("CohereForAI/c4ai-command-r-v01", 40 * 2 * 64 * 128 * 2),  # multi-head: 1.25 MiB per token
    ("CohereForAI/c4ai-command-r-08-2024", 40 * 2 * 8 * 128 * 2),
    ("CohereForAI/c4ai-command-r-plus-08-2024", 64 * 2 * 8 * 128 * 2),
    ("databricks/dbrx-instruct", 40 * 2 * 8 * 128 * 2),
    ("deepseek-ai/deepseek-moe-16b-base", 28 * 2 * 16 * 128 * 2),   # MHA, not MLA
    ("Qwen/Qwen2-72B-Instruct", 80 * 2 * 8 * 128 * 2),
    ("core42/jais-13b-chat", 40 * 2 * 40 * 128 * 2),            # MHA: 800 KiB per token
    ("mistralai/Mistral-7B-Instruct-v0.1", 32 * 2 * 8 * 128 * 2),
])
def test_kv_bytes_per_token_by_hand(name, by_hand):
    # layers x (K, V) x KV heads x head_dim x 2 bytes (16-bit cache)
    assert kv_bytes_per_token(resolve_model(name).arch, effective_config()) == by_hand


def test_falcon_7b_tensor_shapes_from_the_module_print():
    # FalconForCausalLM print: query_key_value 4544 -> 4672, dense 4544 -> 4544, dense_h_to_4h 4544 -> 18176,
    # dense_4h_to_h 18176 -> 4544 (no gate, no bias), one LayerNorm (weight + bias) per layer, ln_f, tied lm_head
    wb = weight_breakdown(resolve_model("tiiuae/falcon-7b").arch, effective_config())
    comp = wb.components
    assert comp["attention"].params_total == 32 * (4544 * 4672 + 4544 * 4544)
    assert comp["mlp_dense"].params_total == 32 * 2 * 4544 * 18176
    assert comp["norms"].params_total == 32 * 2 * 4544 + 2 * 4544
    assert comp["embedding"].params_total == 65024 * 4544 and comp["lm_head"].params_total == 0


def test_command_r_plus_parallel_block_and_per_head_qk_norm():
    # one LayerNorm (weight only) per layer + q_norm (96 heads x 128) + k_norm (8 x 128); final norm 12288
    a = resolve_model("CohereForAI/c4ai-command-r-plus-08-2024").arch
    wb = weight_breakdown(a, effective_config(tensor_parallel_size=8))
    assert wb.components["norms"].params_total == 64 * (12288 + (96 + 8) * 128) + 12288
    # per rank: the q_norm rows of its 12 heads and the k_norm row of its one KV head
    assert wb.components["norms"].params_per_gpu == 64 * (12288 + (12 + 1) * 128) + 12288
    assert wb.components["lm_head"].params_total == 0          # tied 256k vocabulary


def test_falcon_40b_two_layernorms_per_layer():
    wb = weight_breakdown(resolve_model("tiiuae/falcon-40b").arch, effective_config())
    assert wb.components["norms"].params_total == 60 * 2 * 2 * 8192 + 2 * 8192   # ln_attn + ln_mlp, ln_f


@pytest.mark.parametrize("name, arch_id, scheme, method", [
    ("amd/Qwen2-72B-Instruct-FP8-KV", "Qwen/Qwen2-72B-Instruct", "fp8", "fp8"),
    ("neuralmagic/Qwen2-72B-Instruct-FP8", "Qwen/Qwen2-72B-Instruct", "fp8", "compressed-tensors"),
    ("RedHatAI/Qwen2-72B-Instruct-FP8", "Qwen/Qwen2-72B-Instruct", "fp8", "compressed-tensors"),
    ("amd/dbrx-instruct-FP8-KV", "databricks/dbrx-instruct", "fp8", "fp8"),
    ("amd/Mistral-7B-v0.1-FP8-KV", "mistralai/Mistral-7B-v0.1", "fp8", "fp8"),
    ("amd/c4ai-command-r-plus-FP8-KV", "CohereForAI/c4ai-command-r-plus", "fp8", "fp8"),
    ("neuralmagic/c4ai-command-r-plus-FP8", "CohereForAI/c4ai-command-r-plus", "fp8", "compressed-tensors"),
    ("RedHatAI/c4ai-command-r-plus-08-2024-FP8", "CohereForAI/c4ai-command-r-plus-08-2024", "fp8",
     "compressed-tensors"),
])
def test_fp8_derivatives_resolve_with_their_weight_format(name, arch_id, scheme, method):
    r = resolve_model(name)
    assert r.arch.id == arch_id
    assert (r.checkpoint_quantization, r.quantization_method) == (scheme, method)
    # FP8 linear layers: about half the 16-bit weight bytes
    full = weight_breakdown(resolve_model(arch_id).arch, effective_config(tensor_parallel_size=8))
    fp8 = weight_breakdown(r.arch, effective_config(tensor_parallel_size=8), checkpoint_quantization=scheme)
    assert 0.45 < fp8.bytes_per_gpu / full.bytes_per_gpu < 0.6


@pytest.mark.parametrize("name, arch_id", [
    ("Qwen/Qwen2-72B", "Qwen/Qwen2-72B"), ("databricks/dbrx-base", "databricks/dbrx-instruct"),
    ("CohereLabs/c4ai-command-r-plus-08-2024", "CohereForAI/c4ai-command-r-plus-08-2024"),
    ("CohereLabs/c4ai-command-r-08-2024", "CohereForAI/c4ai-command-r-08-2024"),
    ("tiiuae/falcon-180B-chat", "tiiuae/falcon-180B"), ("tiiuae/falcon-40b-instruct", "tiiuae/falcon-40b"),
    ("tiiuae/falcon-7b-instruct", "tiiuae/falcon-7b"),
    ("deepseek-ai/deepseek-moe-16b-chat", "deepseek-ai/deepseek-moe-16b-base"),
])
def test_aliases_resolve_exactly(name, arch_id):
    r = resolve_model(name)
    assert r.arch.id in (arch_id, name) and not r.guessed
    assert r.checkpoint_quantization is None


def test_context_lengths_of_the_alias_variants():
    assert resolve_model("Qwen/Qwen2-72B-Instruct").arch.config["max_position_embeddings"] == 32768
    assert resolve_model("CohereForAI/c4ai-command-r-plus").arch.config["max_position_embeddings"] == 8192
    assert resolve_model("databricks/dbrx-instruct").arch.config["max_position_embeddings"] == 32768
    assert resolve_model("tiiuae/falcon-180B").arch.config["max_position_embeddings"] == 2048


def test_raw_dbrx_and_falcon_configs_read_with_model_config(tmp_path):
    # config.json as published: DBRX keeps its geometry in nested attn_config / ffn_config, Falcon-7B has no
    # num_key_value_heads (multi_query) and no intermediate_size (4 x hidden)
    dbrx = {"architectures": ["DbrxForCausalLM"], "model_type": "dbrx", "d_model": 6144, "n_heads": 48,
            "n_layers": 40, "max_seq_len": 32768, "vocab_size": 100352, "tie_word_embeddings": False,
            "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000},
            "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}}
    (tmp_path / "dbrx").mkdir()
    (tmp_path / "dbrx" / "config.json").write_text(json.dumps(dbrx))
    r = resolve_model("local-dbrx", model_config_path=str(tmp_path / "dbrx"))
    c = r.arch.config
    assert (c["hidden_size"], c["num_key_value_heads"], c["num_local_experts"], c["num_experts_per_tok"]) == \
        (6144, 8, 16, 4)
    assert "attn_config.kv_n_heads" in r.note
    assert _total("databricks/dbrx-instruct") == weight_breakdown(r.arch, effective_config()).params_total

    falcon = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": 4544,
              "num_attention_heads": 71, "num_hidden_layers": 32, "multi_query": True, "parallel_attn": True,
              "new_decoder_architecture": False, "bias": False, "alibi": False, "vocab_size": 65024}
    (tmp_path / "falcon").mkdir()
    (tmp_path / "falcon" / "config.json").write_text(json.dumps(falcon))
    r = resolve_model("local-falcon", model_config_path=str(tmp_path / "falcon"))
    a = r.arch
    assert (a.num_kv_heads, a.config["intermediate_size"], a.config["tie_word_embeddings"]) == (1, 4 * 4544, True)
    assert kv_bytes_per_token(a, effective_config()) == 32 * 2 * 1 * 64 * 2


def test_mistral_7b_v01_is_its_own_release():
    # kvfit's model table: Mistral-7B-v0.1 has 7,241,732,096 parameters and a 4,096-token sliding window
    r = resolve_model("mistralai/Mistral-7B-v0.1")
    assert not r.guessed and r.arch.config["sliding_window"] == 4096
    assert _total("mistralai/Mistral-7B-v0.1") == 7_241_732_096


def test_dbrx_bf16_weights_match_the_published_checkpoint_size():
    # sglang PR #337 (maintainer, 2024-03-28): "the model weight is 246GB" (bf16, i.e. GiB as tools print it)
    wb = weight_breakdown(resolve_model("databricks/dbrx-instruct").arch, effective_config())
    assert abs(wb.params_total * 2 / 2**30 - 246) <= 2


def test_cost_shapes_use_the_two_matrix_falcon_mlp():
    from sched_reader.models.cost.shapes import model_shapes
    a = resolve_model("tiiuae/falcon-7b").arch
    s = model_shapes(a, tp=1)
    assert s.gated is False
    mlp = sum(g.count * sum(lin.params for lin in g.mlp_linears) for g in s.groups)
    assert mlp == weight_breakdown(a, effective_config()).components["mlp_dense"].params_total == 32 * 2 * 4544 * 18176


def test_raw_cohere_and_jais_configs_tie_the_head_by_default(tmp_path):
    # neither config.json states tie_word_embeddings: CohereConfig and JAIS's config class default to tied heads
    cohere = {"architectures": ["CohereForCausalLM"], "model_type": "cohere", "hidden_size": 8192,
              "intermediate_size": 22528, "num_hidden_layers": 40, "num_attention_heads": 64,
              "num_key_value_heads": 64, "vocab_size": 256000, "max_position_embeddings": 8192}
    jais = {"architectures": ["JAISLMHeadModel"], "model_type": "jais", "n_embd": 5120, "n_inner": 13653,
            "n_layer": 40, "n_head": 40, "n_positions": 2048, "vocab_size": 84992}
    for name, cfg, catalog_id in (("cohere", cohere, "CohereForAI/c4ai-command-r-v01"),
                                  ("jais", jais, "inceptionai/jais-13b-chat")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps(cfg))
        r = resolve_model(f"local-{name}", model_config_path=str(tmp_path / name))
        assert r.arch.config["tie_word_embeddings"] is True
        assert weight_breakdown(r.arch, effective_config()).components["lm_head"].params_total == 0
        assert _total(catalog_id) == weight_breakdown(r.arch, effective_config()).params_total
