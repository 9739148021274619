"""Catalog entries and aliases for models the vLLM recipes serve that the catalog lacked (this round):
Ministral 3 (3B / 8B / 14B; FP8 Instruct repos), Step-3.5-Flash (Step-3.7-Flash's text decoder), Qwen3.8-27B
(Qwen3.5-27B's shapes), Kimi-K2.7-Code (Kimi-K2.6 / K2.5), Macaron-V1-Coding-Venti (a GLM-5.2 merge).

Independent pins: the vendors' stated sizes (model cards; the vLLM recipes' model metadata), a published
config's parameter count, and KV bytes per token written out by hand from the published head layout.
"""

from __future__ import annotations

import pytest
from helpers import effective_config

from sched_reader.models.kv_cache import kv_bytes_per_token
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import weight_breakdown


def _text_total(name: str) -> int:
    wb = weight_breakdown(resolve_model(name).arch, effective_config())
    return wb.params_total - wb.components["vision"].params_total


@pytest.mark.parametrize("name, published, tol", [
    # Megatron-Bridge's Ministral3 providers, citing the model cards: "3.4B / 8.4B / 13.5B Language Model"
    ("mistralai/Ministral-3-3B-Instruct-2512", 3.4e9, 0.01),
    ("mistralai/Ministral-3-8B-Reasoning-2512", 8.4e9, 0.012),    # 8,490,... (the card rounds down)
    ("mistralai/Ministral-3-14B-Base-2512", 13.5e9, 0.005),
    # vLLM recipes models/stepfun-ai/Step-3.5-Flash.yaml: "196B" total (text only)
    ("stepfun-ai/Step-3.5-Flash", 196e9, 0.005),
])
def test_text_totals_match_the_vendors_sizes(name, published, tol):
    assert abs(_text_total(name) / published - 1) <= tol


def test_ministral3_3b_element_count_by_hand():
    h, inter, layers, vocab = 3072, 9216, 26, 131_072
    attn = h * 32 * 128 + 2 * h * 8 * 128 + 32 * 128 * h      # q, k, v, o (GQA 32 / 8 heads of 128)
    per_layer = attn + 3 * h * inter + 2 * h                   # SwiGLU + two RMSNorms
    assert _text_total("mistralai/Ministral-3-3B-Base-2512") == vocab * h + layers * per_layer + h   # tied head


@pytest.mark.parametrize("name, by_hand", [
    ("mistralai/Ministral-3-3B-Instruct-2512", 26 * 2 * 8 * 128 * 2),
    ("mistralai/Ministral-3-8B-Instruct-2512", 34 * 2 * 8 * 128 * 2),
    ("mistralai/Ministral-3-14B-Instruct-2512", 40 * 2 * 8 * 128 * 2),
])
def test_ministral3_kv_bytes_per_token_by_hand(name, by_hand):
    assert kv_bytes_per_token(resolve_model(name).arch, effective_config()) == by_hand


def test_ministral3_instruct_repo_is_fp8_and_base_reasoning_are_bf16():
    # model card: "This model is the instruct post-trained version in FP8"; Base and Reasoning are BF16
    assert resolve_model("mistralai/Ministral-3-14B-Instruct-2512").checkpoint_quantization == "fp8"
    assert resolve_model("mistralai/Ministral-3-14B-Reasoning-2512").checkpoint_quantization is None
    assert resolve_model("mistralai/Ministral-3-14B-Instruct-2512-BF16").checkpoint_quantization is None
    fp8 = weight_breakdown(resolve_model("mistralai/Ministral-3-8B-Instruct-2512").arch, effective_config())
    bf16 = weight_breakdown(resolve_model("mistralai/Ministral-3-8B-Base-2512").arch, effective_config())
    assert fp8.params_total == bf16.params_total


def test_ministral3_names_no_longer_map_to_another_family():
    # before this entry "Ministral-3-8B-Instruct-2512" was guessed as Qwen3-8B (a size-only proxy)
    for name in ("mistralai/Ministral-3-8B-Instruct-2512", "unsloth/Ministral-3-8B-Instruct-2512",
                 "mistralai/Ministral-3-14B-Instruct-2512-FP8"):
        assert resolve_model(name).arch.id.startswith("mistralai/Ministral-3-")


def test_qwen38_27b_is_qwen35_27b_plus_the_mtp_block():
    # kvfit's Qwen3.8-27B entry (https://github.com/debaditc/kvfit/blob/bd4ccab/src/kvfit/data/models.json) carries the
    # checkpoint's num_params 27,781,427,952, which counts the MTP block the catalog does not load by default:
    # one full-attention layer (gated q: 24 x 256 x 2 outputs) + SwiGLU 17408 + eh_proj (2h -> h) + 3 norms
    h = 5120
    attn = h * 24 * 256 * 2 + 2 * h * 4 * 256 + 24 * 256 * h + 2 * 256
    mtp = attn + 3 * h * 17_408 + 2 * h + 2 * h * h + 3 * h
    r = resolve_model("Qwen/Qwen3.8-27B")
    assert r.arch.id == "Qwen/Qwen3.5-27B" and not r.guessed
    total = weight_breakdown(r.arch, effective_config()).params_total
    assert abs((total + mtp) / 27_781_427_952 - 1) <= 0.005


@pytest.mark.parametrize("name, base", [
    ("moonshotai/Kimi-K2.7-Code", "moonshotai/Kimi-K2.5"),
    ("nvidia/Kimi-K2.7-Code-NVFP4", "moonshotai/Kimi-K2.5"),
    ("mindlab-research/Macaron-V1-Coding-Venti", "zai-org/GLM-5.2"),
    ("stepfun-ai/Step-3.5-Flash-FP8", "stepfun-ai/Step-3.7-Flash"),
])
def test_recipe_names_resolve_to_their_base_architecture(name, base):
    assert resolve_model(name).arch.id == base


# --- names of fine-tune lines and predecessor releases -----------------------------------------------------------

@pytest.mark.parametrize("name, arch_id", [
    ("google/medgemma-27b-text-it", "google/gemma-3-27b-it"),       # MedGemma: "built on Gemma 3" (model card)
    ("google/medgemma-4b-it", "google/gemma-3-4b-it"),
    ("google/translategemma-27b-it", "google/gemma-3-27b-it"),      # TranslateGemma: Gemma 3 (vLLM recipe: 27B)
    ("deepseek-ai/deepseek-llm-7b-chat", "meta-llama/Llama-2-7b-hf"),   # multi-head 32 x 128, was a GQA Qwen2-7B
])
def test_fine_tune_lines_resolve_to_their_base_family(name, arch_id):
    r = resolve_model(name)
    assert r.arch.id == arch_id and r.guessed and "assumed architecture" in r.note


def test_a_qwen2_size_takes_the_qwen25_shapes_it_kept():
    # Qwen2 report (arXiv 2407.10671) Table 1, 1.5B: hidden 1536, 28 layers, 12 query / 2 KV heads, FFN 8960,
    # tied embeddings -- the Qwen2.5-1.5B configuration (arXiv 2412.15115 Table 1)
    r = resolve_model("Qwen/Qwen2-1.5B-Instruct")
    assert r.arch.id == "Qwen/Qwen2.5-1.5B-Instruct" and r.guessed and "kept qwen2's shapes" in r.note
    c = r.arch.config
    assert (c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"],
            c["intermediate_size"], c["tie_word_embeddings"]) == (1536, 28, 12, 2, 8960, True)
    with pytest.raises(Exception):
        resolve_model("Qwen/Qwen2-14B")          # no Qwen2 14B was published: not taken from Qwen2.5-14B by size


# --- Qwen3.8-2.4T-A95B, Muse-Glimmer-30B, Nemotron-3.5-Lightning -------------------------------------------------

def test_qwen38_2p4t_total_and_active_match_the_published_2p4t_a95b():
    # vLLM recipes models/Qwen/Qwen3.8-2.4T-A95B.yaml: parameter_count "2.4T", active "95B" (10 of 512 experts + shared)
    wb = weight_breakdown(resolve_model("Qwen/Qwen3.8-2.4T-A95B").arch, effective_config())
    routed = wb.components["moe_routed_experts"].params_total
    assert abs(wb.params_total / 2.4e12 - 1) <= 0.01
    assert abs((wb.params_total - routed + routed * 10 // 512) / 95e9 - 1) <= 0.03


def test_qwen38_2p4t_cache_holds_kv_only_on_its_23_full_attention_layers():
    # 92 layers, every 4th full attention: 23 x 2 (K, V) x 4 KV heads x 256 x 2 B; the 69 DeltaNet layers keep state
    r = resolve_model("Inferact/Qwen3.8-2.4T-A95B-NVFP4")
    assert r.arch.id == "Qwen/Qwen3.8-2.4T-A95B" and r.checkpoint_quantization == "nvfp4"
    assert kv_bytes_per_token(r.arch, effective_config()) == 23 * 2 * 4 * 256 * 2


def test_muse_glimmer_text_decoder_by_hand():
    h, inter, layers, vocab = 6656, 19_968, 52, 202_048
    attn = h * 32 * 128 + 2 * h * 2 * 128 + 32 * 128 * h           # GQA 32 / 2 heads of 128, no bias
    text = 2 * vocab * h + layers * (attn + 3 * h * inter + 2 * h) + h
    wb = weight_breakdown(resolve_model("meta-models/Muse-Glimmer-30B").arch, effective_config())
    assert wb.params_total - wb.components["vision"].params_total == text
    # the recipe's 29.6B includes the 50-layer vision tower (not an exact count): the estimate stays within 5%
    assert abs(wb.params_total / 29.6e9 - 1) <= 0.05
    # 52 layers x 2 x 2 KV heads x 128 x 2 B (39 of them sliding, 2,048-token window)
    assert kv_bytes_per_token(resolve_model("meta-models/Muse-Glimmer-30B").arch, effective_config()) == 52 * 2 * 2 * 128 * 2


def test_nemotron35_lightning_is_the_nano_30b_a3b_layout_with_1m_positions():
    r = resolve_model("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4")
    nano = resolve_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert r.checkpoint_quantization == "nvfp4" and r.arch.config["max_position_embeddings"] == 1_048_576
    e = effective_config()
    assert weight_breakdown(r.arch, e).params_total == weight_breakdown(nano.arch, e).params_total
    # vLLM recipes: Nemotron-3.5-Lightning-30B-A3B "30B" total, "3B" active
    assert abs(weight_breakdown(r.arch, e).params_total / 31.6e9 - 1) <= 0.01   # Nano-30B-A3B's published 31.6B


# --- MiMo-V2-Flash: per-layer-type KV heads, V narrower than K ---------------------------------------------------

def test_mimo_v2_flash_total_and_active_match_the_published_309b_a15b():
    # vLLM recipes (models/XiaomiMiMo/MiMo-V2-Flash.yaml; MiMo/MiMo-V2-Flash.md): 309B total, 15B active
    wb = weight_breakdown(resolve_model("XiaomiMiMo/MiMo-V2-Flash").arch, effective_config())
    routed = wb.components["moe_routed_experts"].params_total
    assert abs(wb.params_total / 309e9 - 1) <= 0.005
    assert abs((wb.params_total - routed + routed * 8 // 256) / 15e9 - 1) <= 0.05


def test_mimo_v2_flash_attention_weights_by_hand():
    # full layers: q 64 x 192, k 4 x 192, v 4 x 128, o from 64 x 128; sliding layers: 8 KV heads
    h = 4096
    full = h * 64 * 192 + h * 4 * 192 + h * 4 * 128 + 64 * 128 * h
    swa = h * 64 * 192 + h * 8 * 192 + h * 8 * 128 + 64 * 128 * h
    wb = weight_breakdown(resolve_model("XiaomiMiMo/MiMo-V2-Flash").arch, effective_config())
    assert wb.components["attention"].params_total == 9 * full + 39 * swa


def test_mimo_v2_flash_kv_cache_per_layer_type():
    # 9 full layers x 2 x 4 KV heads x 192 x 2 B + 39 sliding layers x 2 x 8 x 192 x 2 B (V padded to 192: assumed)
    r = resolve_model("XiaomiMiMo/MiMo-V2-Flash")
    assert r.checkpoint_quantization == "fp8"            # block FP8 (weight_block_size [128, 128]) in its config.json
    assert kv_bytes_per_token(r.arch, effective_config()) == 9 * 2 * 4 * 192 * 2 + 39 * 2 * 8 * 192 * 2


# --- Ling / Ring 2.0 (BailingMoeV2) -------------------------------------------------------------------------------

def test_ling_flash_2_reproduces_the_hf_api_element_count():
    # HF model API for inclusionAI/Ling-flash-2.0 (copy: daniel-p-green/alain-ai-learning-platform ... model.json):
    # safetensors BF16 102,889,697,280 + F32 7,936 (31 MoE layers x 256 router expert biases) = 102,889,705,216
    wb = weight_breakdown(resolve_model("inclusionAI/Ling-flash-2.0").arch, effective_config())
    assert wb.params_total == 102_889_697_280
    assert wb.params_total + 31 * 256 == 102_889_705_216


@pytest.mark.parametrize("name, total, active, tol", [
    ("inclusionAI/Ling-mini-2.0", 16.26e9, 1.43e9, 0.005),     # Ling-V2 README: 16.26B total, 1.43B activated
    ("inclusionAI/Ring-flash-2.0", 100e9, 6.1e9, 0.03),         # model card: 100B total, 6.1B activated
])
def test_ling_ring_2_totals_and_active(name, total, active, tol):
    wb = weight_breakdown(resolve_model(name).arch, effective_config())
    routed = wb.components["moe_routed_experts"].params_total
    assert abs(wb.params_total / total - 1) <= tol
    assert abs((wb.params_total - routed + routed * 8 // 256) / active - 1) <= 0.02
    assert wb.components["mlp_dense"].params_total > 0                  # layer 0 dense (first_k_dense_replace 1)


def test_ling_flash_2_kv_by_hand():
    # 32 layers x 2 (K, V) x 4 KV heads x 128 x 2 B
    assert kv_bytes_per_token(resolve_model("inclusionAI/Ling-flash-2.0").arch, effective_config()) == 32 * 2 * 4 * 128 * 2


def test_glm46v_is_glm45v_with_128k_positions():
    # vLLM recipe GLM/GLM-V.md: "GLM-4.5V only supports a 64K context length, while GLM-4.6V supports a 128K context
    # length"; both 107B total / 12B active (models/zai-org/GLM-4.5V.yaml, GLM-4.6V.yaml)
    r, base = resolve_model("zai-org/GLM-4.6V-FP8"), resolve_model("zai-org/GLM-4.5V")
    assert r.checkpoint_quantization == "fp8"
    assert r.arch.config["max_position_embeddings"] == 131_072 and base.arch.config["max_position_embeddings"] == 65_536
    e = effective_config()
    assert weight_breakdown(r.arch, e).params_total == weight_breakdown(base.arch, e).params_total


# --- Gemma 1 and Falcon3 (were size proxies of another layout) ----------------------------------------------------

@pytest.mark.parametrize("name, embedding, non_embedding", [
    # Gemma technical report (arXiv 2403.08295) Table 2: embedding / non-embedding parameters
    ("google/gemma-2b-it", 524_288_000, 1_981_884_416),
    ("google/gemma-7b-it", 786_432_000, 7_751_248_896),
])
def test_gemma1_parameter_split_matches_the_report(name, embedding, non_embedding):
    wb = weight_breakdown(resolve_model(name).arch, effective_config())
    assert wb.components["embedding"].params_total == embedding
    assert wb.params_total == embedding + non_embedding          # tied head


def test_gemma1_kv_by_hand_is_not_a_gqa_proxy():
    # gemma-7b was guessed as Qwen2-7B (4 KV heads of 128: 57,344 B/token); it is multi-head 16 x 256
    assert kv_bytes_per_token(resolve_model("google/gemma-7b-it").arch, effective_config()) == 28 * 2 * 16 * 256 * 2
    assert kv_bytes_per_token(resolve_model("google/gemma-2b-it").arch, effective_config()) == 18 * 2 * 1 * 256 * 2


@pytest.mark.parametrize("name, published", [
    # Hugging Face model cards (tiiuae/Falcon3-*): 1.67B, 3.23B, 7.46B, 10.3B
    ("tiiuae/Falcon3-1B-Instruct", 1.67e9), ("tiiuae/Falcon3-3B-Instruct", 3.23e9),
    ("tiiuae/Falcon3-7B-Instruct", 7.46e9), ("tiiuae/Falcon3-10B-Instruct", 10.3e9),
])
def test_falcon3_totals(name, published):
    r = resolve_model(name)
    assert not r.guessed and r.arch.num_kv_heads == 4          # was guessed as the multi-query falcon-7b
    assert abs(weight_breakdown(r.arch, effective_config()).params_total / published - 1) <= 0.005


def test_mxfp8_name_weighs_one_byte_plus_a_scale_per_32():
    # MiniMaxAI/MiniMax-M3-MXFP8 (vLLM recipes): OCP MX FP8 = E4M3 elements + one E8M0 scale byte per 32 elements
    e = effective_config(tensor_parallel_size=8)
    mx, fp8 = resolve_model("MiniMaxAI/MiniMax-M3-MXFP8"), resolve_model("MiniMaxAI/MiniMax-M3-FP8")
    assert (mx.checkpoint_quantization, mx.arch.id) == ("mxfp8", "MiniMaxAI/MiniMax-M3")
    b_mx = weight_breakdown(mx.arch, e, mx.checkpoint_quantization).bytes_per_gpu
    b_fp8 = weight_breakdown(fp8.arch, e, fp8.checkpoint_quantization).bytes_per_gpu
    bf16 = weight_breakdown(mx.arch, e).bytes_per_gpu
    assert b_fp8 < b_mx < 0.55 * bf16                  # 1 + 1/32 bytes a weight vs FP8's 1, BF16's 2


def test_ministral_8b_2410_is_its_own_shape_not_a_qwen3_proxy():
    # model card: 8.0B parameters; KV 36 layers x 2 x 8 x 128 x 2 B (was guessed as Qwen3-8B: 36 x 2 x 8 x 128 x 2 too,
    # but its 12,288-wide MLP and 131K vocab differ)
    r = resolve_model("mistralai/Ministral-8B-Instruct-2410")
    assert r.arch.id == "mistralai/Ministral-8B-Instruct-2410" and not r.guessed
    e = effective_config()
    assert abs(weight_breakdown(r.arch, e).params_total / 8.02e9 - 1) <= 0.005
    h, layers = 4096, 36
    by_hand = 2 * 131_072 * h + layers * (h * 32 * 128 + 2 * h * 8 * 128 + 32 * 128 * h + 3 * h * 12_288 + 2 * h) + h
    assert weight_breakdown(r.arch, e).params_total == by_hand
    assert kv_bytes_per_token(r.arch, e) == layers * 2 * 8 * 128 * 2


# --- Qwen1.5 and GLM-4-9B -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, published", [
    # Hugging Face model pages (safetensors size, rounded): 0.62B, 1.84B, 3.95B, 7.72B, 14.2B, 32.5B, 72.3B, 111B
    ("Qwen/Qwen1.5-0.5B-Chat", 0.62e9), ("Qwen/Qwen1.5-1.8B-Chat", 1.84e9), ("Qwen/Qwen1.5-4B-Chat", 3.95e9),
    ("Qwen/Qwen1.5-7B-Chat", 7.72e9), ("Qwen/Qwen1.5-14B-Chat", 14.2e9), ("Qwen/Qwen1.5-32B-Chat", 32.5e9),
    ("Qwen/Qwen1.5-72B-Chat", 72.3e9), ("Qwen/Qwen1.5-110B-Chat", 111.2e9),
    ("zai-org/glm-4-9b-hf", 9.4e9),                       # GLM-4 model card: 9.4B
])
def test_qwen15_and_glm4_totals(name, published):
    r = resolve_model(name)
    assert not r.guessed
    assert abs(weight_breakdown(r.arch, effective_config()).params_total / published - 1) <= 0.005


@pytest.mark.parametrize("name, by_hand", [
    ("Qwen/Qwen1.5-7B-Chat", 32 * 2 * 32 * 128 * 2),        # multi-head: KV 8x Qwen2-7B's (4 KV heads of 128, 28 layers)
    ("Qwen/Qwen1.5-72B-Chat", 80 * 2 * 64 * 128 * 2),
    ("Qwen/Qwen1.5-32B-Chat", 64 * 2 * 8 * 128 * 2),         # grouped-query from 32B on
    ("zai-org/glm-4-9b-hf", 40 * 2 * 2 * 128 * 2),
])
def test_qwen15_and_glm4_kv_by_hand(name, by_hand):
    assert kv_bytes_per_token(resolve_model(name).arch, effective_config()) == by_hand


# --- size-only proxies: kind from the name, no borrowed 4-bit release format -------------------------------------

def test_mistral_small_4_is_a_moe_guess_not_the_dense_123b():
    # vLLM recipe (models/mistralai/Mistral-Small-4-119B-2603.yaml): "128 experts, 4 active per token (plus 1 shared
    # expert), 119B total parameters with 6.5B activated": it was guessed as Mistral-Large-2411 (dense, 123B active)
    r = resolve_model("mistralai/Mistral-Small-4-119B-2603")
    assert r.guessed and "mixture-of-experts" in r.note
    assert any(r.arch.config.get(k) for k in ("n_routed_experts", "num_local_experts", "num_experts"))


def test_a_size_proxy_does_not_lend_its_4bit_release_format():
    # gpt-oss-120b's MXFP4 experts are that release's format; a name stating no format gets 16-bit weights
    r = resolve_model("acme/foo-moe-120B")
    assert r.arch.id == "openai/gpt-oss-120b" and r.checkpoint_quantization is None
    assert r.arch.quantization_config is None and "not assumed" in r.note
    # the same family keeps it (a gpt-oss fine-tune ships the MXFP4 experts)
    assert resolve_model("unsloth/gpt-oss-20b").checkpoint_quantization == "mxfp4"
    # and a format the name states wins
    assert resolve_model("acme/foo-moe-120B-FP8").checkpoint_quantization == "fp8"


def test_mixtral_8x22b_instruct_is_the_base_with_the_32768_vocabulary():
    # ROCm MI300X tables serve amd/Mixtral-8x22B-Instruct-v0.1-FP8-KV (was a guess from the base's repo name)
    e = effective_config()
    inst = resolve_model("amd/Mixtral-8x22B-Instruct-v0.1-FP8-KV")
    base = resolve_model("mistralai/Mixtral-8x22B-v0.1")
    assert inst.arch.id == "mistralai/Mixtral-8x22B-Instruct-v0.1" and not inst.guessed
    assert inst.checkpoint_quantization == "fp8"
    # 768 more vocabulary rows in the embedding and the untied head, 6144 wide
    assert weight_breakdown(inst.arch, e).params_total - weight_breakdown(base.arch, e).params_total == 2 * 768 * 6144


# --- Hy3 (widths derived from its published totals) and two-format names -----------------------------------------

def test_hy3_expert_width_reproduces_all_three_published_figures():
    # vLLM recipes (models/tencent/Hy3.yaml): 295B total, 21B active, "a 3.8B MTP layer"; 80 layers, 192 experts top-8
    # + 1 shared, 64 / 8 heads. The catalog's 1536-wide experts (not read from config.json) must give all three.
    r = resolve_model("tencent/Hy3-preview")
    wb = weight_breakdown(r.arch, effective_config())
    routed = wb.components["moe_routed_experts"].params_total
    assert abs(wb.params_total / 295e9 - 1) <= 0.005
    assert abs((wb.params_total - routed + routed * 8 // 192) / 21e9 - 1) <= 0.03
    h, e = 4096, 1536
    mtp = (h * 64 * 128 * 2 + 2 * h * 8 * 128) + 193 * 3 * h * e + 192 * h + 2 * h * h     # attention, experts, eh_proj
    assert abs(mtp / 3.8e9 - 1) <= 0.02
    assert kv_bytes_per_token(r.arch, effective_config()) == 80 * 2 * 8 * 128 * 2


def test_a_name_with_two_formats_takes_the_first_for_the_bulk_of_the_weights():
    # RedHatAI/Hy3-NVFP4-FP8 (vLLM recipes): "MoE experts in NVFP4, attention in FP8 block"
    r = resolve_model("RedHatAI/Hy3-NVFP4-FP8")
    assert (r.arch.id, r.checkpoint_quantization) == ("tencent/Hy3", "nvfp4")
    assert resolve_model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic").checkpoint_quantization == "fp8"
