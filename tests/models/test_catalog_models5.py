"""Catalog entries for the vLLM recipes' newer model ids the catalog could not resolve: Laguna (poolside XS-2.1 /
XS.2 / S-2.1 / M.1, per-layer query heads and an attention output gate), DeepSeek-V4 (Flash / Pro: a 128-token
window on every layer plus compressed KV rows, models/dsv4.py), and the families added after them.

Independent pins: the vendors' stated totals (model cards; the vLLM recipes' model metadata) and KV bytes per token
written out by hand from the published layouts.
"""

from __future__ import annotations

import pytest
from helpers import effective_config

from sched_reader.models.kv_cache import kv_bytes_per_token, kv_layers
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import weight_breakdown


def _text_total(name: str) -> int:
    wb = weight_breakdown(resolve_model(name).arch, effective_config())
    vis = wb.components.get("vision")
    return wb.params_total - (vis.params_total if vis else 0)


@pytest.mark.parametrize("name, published, tol", [
    # vLLM recipes models/poolside/*.yaml parameter_count; the Laguna model cards
    ("poolside/Laguna-XS-2.1", 33e9, 0.02),
    ("poolside/Laguna-XS.2", 33e9, 0.04),
    ("poolside/Laguna-S-2.1", 118e9, 0.01),
    ("poolside/Laguna-M.1", 225e9, 0.01),
    # DeepSeek-V4 model cards (via the recipes): 284B Flash, 1.6T Pro (the card's rounding)
    ("deepseek-ai/DeepSeek-V4-Flash", 284e9, 0.005),
    ("deepseek-ai/DeepSeek-V4-Pro", 1.6e12, 0.03),
])
def test_totals_match_the_vendors_sizes(name, published, tol):
    assert abs(_text_total(name) / published - 1) <= tol


def test_laguna_m1_active_parameters_match_the_card():
    # card: 67 MoE layers of 256 experts, top-16; 23B activated. Active = total - idle experts' weights.
    h, mi = 4096, 1024
    idle = 67 * (256 - 16) * 3 * h * mi
    assert abs((_text_total("poolside/Laguna-M.1") - idle) / 23e9 - 1) <= 0.03


@pytest.mark.parametrize("name, layers", [
    ("poolside/Laguna-XS-2.1", 40), ("poolside/Laguna-S-2.1", 48), ("poolside/Laguna-M.1", 70),
])
def test_laguna_kv_bytes_per_token_by_hand(name, layers):
    # every layer caches 8 KV heads of 128 (the per-layer head counts change only the query side), BF16
    assert kv_bytes_per_token(resolve_model(name).arch, effective_config()) == layers * 2 * 8 * 128 * 2


def test_laguna_windows_and_per_layer_query_heads():
    arch = resolve_model("poolside/Laguna-XS-2.1").arch
    kinds = [(x.kind, x.window) for x in kv_layers(arch, effective_config())]
    assert kinds.count(("sliding", 512)) == 30 and kinds.count(("full", None)) == 10   # card: 30 SWA, 10 global
    # one layer by hand: q (64 heads x 128) + k, v (8 x 128) + o + per-head gate (64) from hidden 2048, + q/k norms
    h = 2048
    wide = weight_breakdown(arch, effective_config())
    assert wide.components["attention"].params_total == sum(
        h * heads * 128 + 2 * h * 8 * 128 + heads * 128 * h + h * heads
        for heads in [48 if i % 4 == 0 else 64 for i in range(40)])


@pytest.mark.parametrize("name, q", [
    ("poolside/Laguna-XS.2-INT4", "w4a16"), ("poolside/Laguna-S-2.1-NVFP4", "nvfp4"), ("poolside/Laguna-M.1-FP8", "fp8"),
    ("nvidia/DeepSeek-V4-Pro-NVFP4", "nvfp4"), ("deepseek-ai/DeepSeek-V4-Flash-0731", "fp8"),
])
def test_recipe_variants_resolve_exactly_with_their_format(name, q):
    r = resolve_model(name)
    assert not r.guessed and r.checkpoint_quantization == q


def test_dsv4_flash_kv_by_hand():
    # 43 layers: 0-1 window only, then CSA (ratio 4) on even layers and HCA (ratio 128) on odd ones up to layer 42.
    # Window rows: 512 elements x 2 B; a CSA row adds a 128-element FP4 indexer key (64 B) and is shared by 4 tokens.
    arch = resolve_model("deepseek-ai/DeepSeek-V4-Flash").arch
    layers = kv_layers(arch, effective_config())
    window = [x for x in layers if x.kind == "sliding"]
    compressed = [x.bytes_per_token for x in layers if x.kind == "full"]
    assert len(window) == 43 and all(x.window == 128 and x.bytes_per_token == 1024 for x in window)
    assert sorted(compressed) == [8] * 20 + [(1024 + 64) // 4] * 21
    # DeepSeek-V3's MLA (61 x 576 x 2 B per token) is ~12x the compressed per-token cost
    assert 61 * 576 * 2 / sum(compressed) > 10


def test_dsv4_weights_fp4_experts_fp8_rest():
    wb = weight_breakdown(resolve_model("deepseek-ai/DeepSeek-V4-Flash").arch, effective_config(),
                          "fp8")
    experts = wb.components["moe_routed_experts"]
    assert experts.params_total == 43 * 256 * 3 * 4096 * 2048
    assert experts.bytes_per_weight == pytest.approx(0.5 + 1 / 32)
    assert wb.components["attention"].bytes_per_weight == pytest.approx(1 + 4 / 128 ** 2)


# --- Gemma 4 E2B / E4B: KV-shared layers, double-wide MLPs, per-layer embeddings --------------------------------

@pytest.mark.parametrize("name, by_hand", [
    # E2B: layers 0-14 cache (12 sliding of 1 KV head x 256, 3 full of 1 x 512); 15-34 reuse them
    ("google/gemma-4-E2B-it", 12 * 2 * 1 * 256 * 2 + 3 * 2 * 1 * 512 * 2),
    # E4B: layers 0-23 cache (20 sliding of 2 x 256, 4 full of 2 x 512); the last 18 share
    ("google/gemma-4-E4B-it", 20 * 2 * 2 * 256 * 2 + 4 * 2 * 2 * 512 * 2),
])
def test_gemma4_small_kv_bytes_per_token_by_hand(name, by_hand):
    assert kv_bytes_per_token(resolve_model(name).arch, effective_config()) == by_hand


@pytest.mark.parametrize("name, published", [
    # vLLM recipes models/Google/gemma-4-E2B-it.yaml "5B", gemma-4-E4B-it.yaml "8B" (with a ~0.3B audio tower,
    # not counted here: text + vision must land within 7% below)
    ("google/gemma-4-E2B-it", 5e9), ("google/gemma-4-E4B-it", 8e9),
])
def test_gemma4_small_totals(name, published):
    total = weight_breakdown(resolve_model(name).arch, effective_config()).params_total
    assert 0.93 <= total / published <= 1.0


def test_gemma4_e2b_per_layer_embeddings_and_double_wide_mlp_by_hand():
    wb = weight_breakdown(resolve_model("google/gemma-4-E2B-it").arch, effective_config())
    h, ple, layers, vocab = 1536, 256, 35, 262_144
    # token embedding (tied head) + per-layer embedding table + per_layer_model_projection + its norm
    assert wb.components["embedding"].params_total == vocab * h + vocab * layers * ple + h * layers * ple + ple
    # GeGLU 6144 on layers 0-14, 12288 on the 20 KV-shared layers; per-layer input gate + projection on every layer
    mlp = 15 * 3 * h * 6144 + 20 * 3 * h * 12288 + layers * 2 * h * ple
    assert wb.components["mlp_dense"].params_total == mlp


@pytest.mark.parametrize("name, base, q", [
    ("google/gemma-4-E2B-it-qat-w4a16-ct", "google/gemma-4-E2B-it", "w4a16"),
    ("google/gemma-4-E4B-it-qat-mobile-ct", "google/gemma-4-E4B-it", "w4a16"),
    ("google/gemma-4-31B-it-qat-w4a16-ct", "google/gemma-4-31B-it", "w4a16"),
    ("RedHatAI/gemma-4-E2B-it-FP8-dynamic", "google/gemma-4-E2B-it", "fp8"),
])
def test_gemma4_qat_and_fp8_releases_resolve_to_their_base(name, base, q):
    r = resolve_model(name)
    assert r.arch.id == base and r.checkpoint_quantization == q and not r.guessed


# --- Kimi-K3: KDA + gated MLA hybrid with a latent MoE, MXFP4 routed experts ------------------------------------

def test_kimi_k3_total_and_latent_experts():
    wb = weight_breakdown(resolve_model("moonshotai/Kimi-K3").arch, effective_config())
    assert abs(wb.params_total / 2.8e12 - 1) <= 0.01             # vLLM recipes models/moonshotai/Kimi-K3.yaml "2.8T"
    # 92 MoE layers (layer 1 dense) x 896 experts, each gate / up / down between the 3584 latent and 3072
    assert wb.components["moe_routed_experts"].params_total == 92 * 896 * 3 * 3584 * 3072
    # MXFP4 routed experts; attention, shared experts, dense MLP kept in BF16 by the checkpoint's ignore list
    assert wb.components["moe_routed_experts"].bytes_per_weight < 0.6
    assert wb.components["attention"].bytes_per_weight == 2.0 and wb.components["moe_shared"].bytes_per_weight == 2.0


def test_kimi_k3_kv_by_hand():
    # only the 24 MLA layers hold per-token KV: one 512 + 64 latent, BF16; the 69 KDA layers keep a fixed state
    arch = resolve_model("moonshotai/Kimi-K3").arch
    assert kv_bytes_per_token(arch, effective_config()) == 24 * (512 + 64) * 2
    assert sum(1 for x in kv_layers(arch, effective_config()) if x.kind == "mamba") == 69


def test_kimi_k3_checkpoint_format_and_nvfp4_requant():
    assert resolve_model("moonshotai/Kimi-K3").checkpoint_quantization == "mxfp4"
    r = resolve_model("RedHatAI/Kimi-K3-NVFP4")
    assert r.arch.id == "moonshotai/Kimi-K3" and r.checkpoint_quantization == "nvfp4" and not r.guessed


# --- Ling-1T / Ring-1T, Intern-S1 / S2, Qwen3.5-0.8B / 2B --------------------------------------------------------

def test_ling_1t_total_is_the_published_999_7b():
    # the HF model pages (via a public model table): Ling-1T and Ring-1T 999.7B
    assert round(_text_total("inclusionAI/Ling-1T") / 1e9, 1) == 999.7
    r = resolve_model("inclusionAI/Ring-1T-FP8")                 # the recipes' Ring-1T-FP8 id
    assert r.arch.id == "inclusionAI/Ring-1T" and r.checkpoint_quantization == "fp8" and not r.guessed
    assert r.arch.config["max_position_embeddings"] == 65536    # recipes: 65,536 context


def test_ling_1t_kv_by_hand():
    assert kv_bytes_per_token(resolve_model("inclusionAI/Ling-1T").arch, effective_config()) == 80 * 2 * 8 * 128 * 2


@pytest.mark.parametrize("name, arch_id", [
    ("internlm/Intern-S1", "OpenGVLab/InternVL3_5-241B-A28B"),         # InternViT-6B + Qwen3-235B-A22B: 241B / 28B
    ("internlm/Intern-S1-FP8", "OpenGVLab/InternVL3_5-241B-A28B"),
    ("internlm/Intern-S2-Preview", "Qwen/Qwen3.5-35B-A3B"),            # "continued pre-trained from Qwen3.5", 35B-A3B
    ("internlm/Intern-S2-Preview-FP8", "Qwen/Qwen3.5-35B-A3B"),
])
def test_intern_s_models_resolve_to_their_published_base(name, arch_id):
    r = resolve_model(name)
    assert r.arch.id == arch_id and not r.guessed


def test_intern_s1_total_matches_the_recipes_241b():
    total = weight_breakdown(resolve_model("internlm/Intern-S1").arch, effective_config()).params_total
    assert abs(total / 241e9 - 1) <= 0.01


def test_qwen35_0p8b_reproduces_the_vllm_block_size_and_padding_log():
    # vLLM start-up log (Qwen3.5-0.8B, TP1): "Setting attention block size to 544 tokens",
    # "Padding mamba page size by 2.64%". By hand: state = conv (2 x 16 x 128 + 16 x 128) x 3 x 2 B
    # + temporal 16 x 128 x 128 x 4 B (fp32) = 1,085,440 B; attention 2 x 2 x 256 x 2 B = 2,048 B per token;
    # ceil(1,085,440 / 2,048) = 530 -> 544 (a multiple of 16); 544 x 2,048 / 1,085,440 = 1.0264
    from sched_reader.models.engine_spec import EffectiveConfig
    from sched_reader.models.kv_cache import kv_capacity
    cfg = EffectiveConfig(vllm_version="0.17.0", tensor_parallel_size=1, max_model_len=32768,
                          gpu_memory_utilization=0.9, dtype="bfloat16", max_num_seqs=256,
                          max_num_batched_tokens=8192, enable_chunked_prefill=True, enable_prefix_caching=False)
    r = kv_capacity(resolve_model("Qwen/Qwen3.5-0.8B").arch, cfg, [20 * 2**30])
    assert r.block_size == 544
    assert round(100 * (r.page_size_bytes / 1_085_440 - 1), 2) == 2.64


@pytest.mark.parametrize("name, published", [("Qwen/Qwen3.5-0.8B", 0.8e9), ("Qwen/Qwen3.5-2B", 2e9)])
def test_qwen35_small_totals(name, published):
    total = weight_breakdown(resolve_model(name).arch, effective_config()).params_total
    assert abs(total / published - 1) <= 0.1       # the recipes' one-significant-digit sizes


# --- LFM2 / LFM2.5: gated short-convolution layers (fixed conv state) + GQA attention ----------------------------

def test_lfm2_350m_element_count_by_hand():
    # config.json: hidden 1024, 16 layers (10 conv, 6 attention: 16 / 8 heads of 64), block_ff_dim 6656 auto-adjusted:
    # int(2 x 6656 / 3) = 4437 -> 4608 (a multiple of 256); tied 65,536 vocabulary; conv_L_cache 3, no conv bias
    h, ff, vocab = 1024, 4608, 65536
    conv = 3 * h * h + h * 3 + h * h                              # in_proj (B, C, x), depthwise conv, out_proj
    attn = h * 16 * 64 + 2 * h * 8 * 64 + 16 * 64 * h + 2 * 64    # q, k, v, o + q / k layernorms
    per_layer_rest = 3 * h * ff + 2 * h                            # SwiGLU + operator / ffn norms
    total = vocab * h + 10 * conv + 6 * attn + 16 * per_layer_rest + h
    assert weight_breakdown(resolve_model("LiquidAI/LFM2-350M").arch, effective_config()).params_total == total
    assert abs(total / 354e6 - 1) < 0.01                          # Liquid AI: LFM2-350M, 354M parameters


def test_lfm2_kv_and_conv_state_by_hand():
    from sched_reader.models.hybrid import layer_mixers, state_bytes
    arch = resolve_model("LiquidAI/LFM2.5-1.2B-Instruct").arch
    assert layer_mixers(arch).count("shortconv") == 10
    assert kv_bytes_per_token(arch, effective_config()) == 6 * 2 * 8 * 64 * 2
    assert state_bytes(arch, "shortconv", 1, 2) == 2048 * (3 - 1) * 2      # (conv_dim, L_cache - 1) x 2 B


@pytest.mark.parametrize("name, published, tol", [
    ("LiquidAI/LFM2.5-1.2B-Thinking", 1.17e9, 0.01),   # LFM2-1.2B: 1.17B
    ("LiquidAI/LFM2.5-VL-450M", 450e6, 0.03),           # recipes: 450M
    ("LiquidAI/LFM2.5-VL-1.6B", 1.6e9, 0.03),           # recipes: 1.6B
])
def test_lfm2_family_totals(name, published, tol):
    total = weight_breakdown(resolve_model(name).arch, effective_config()).params_total
    assert abs(total / published - 1) <= tol and not resolve_model(name).guessed


# --- Nemotron Nano 12B v2 (+ VL) -----------------------------------------------------------------------------------

def test_nemotron_nano_12b_v2_total_and_kv():
    # NVIDIA: Nemotron Nano 2 12B = 12.31B parameters (the 9B-v2's unpruned parent); 6 attention blocks cache KV
    arch = resolve_model("nvidia/NVIDIA-Nemotron-Nano-12B-v2").arch
    assert round(_text_total("nvidia/NVIDIA-Nemotron-Nano-12B-v2") / 1e9, 2) == 12.31
    assert kv_bytes_per_token(arch, effective_config()) == 6 * 2 * 8 * 128 * 2
    assert arch.config["hybrid_override_pattern"].count("M") == 28


@pytest.mark.parametrize("name, q", [
    ("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16", None),
    ("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-FP8", "fp8"),
    ("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-NVFP4-QAD", "nvfp4"),
])
def test_nemotron_nano_12b_v2_vl_variants(name, q):
    r = resolve_model(name)
    assert not r.guessed and r.checkpoint_quantization == q
    assert r.arch.config["hidden_size"] == 5120 and r.arch.vision_config is not None


# --- older ids the look-alike matcher got wrong by > 10% of KV: phi-2, SmolLM2-1.7B; Qwen2.5 Coder / Math aliases --

def test_phi2_element_count_is_the_published_total():
    # microsoft/phi-2: 2,779,683,840 parameters (HF safetensors total; biases on every linear and LayerNorm)
    assert weight_breakdown(resolve_model("microsoft/phi-2").arch, effective_config()).params_total == 2_779_683_840


@pytest.mark.parametrize("name, by_hand", [
    ("microsoft/phi-2", 32 * 2 * 32 * 80 * 2),                         # MHA, FP16
    ("HuggingFaceTB/SmolLM2-1.7B-Instruct", 24 * 2 * 32 * 64 * 2),     # MHA
    ("Qwen/Qwen2.5-Coder-1.5B-Instruct", 28 * 2 * 2 * 128 * 2),
    ("Qwen/Qwen2.5-Math-7B-Instruct", 28 * 2 * 4 * 128 * 2),
])
def test_old_ids_kv_by_hand(name, by_hand):
    r = resolve_model(name)
    assert not r.guessed and kv_bytes_per_token(r.arch, effective_config()) == by_hand


def test_smollm2_total():
    assert abs(weight_breakdown(resolve_model("HuggingFaceTB/SmolLM2-1.7B").arch, effective_config()).params_total
               / 1.71e9 - 1) < 0.005                              # HF: 1.71B


def test_muse_glimmer_nvfp4_w4a4_name():
    # the recipes' Inferact/Muse-Glimmer-30B-NVFP4-W4A4: NVFP4 weights and activations of Muse-Glimmer-30B
    r = resolve_model("Inferact/Muse-Glimmer-30B-NVFP4-W4A4")
    assert r.arch.id == "meta-models/Muse-Glimmer-30B" and r.checkpoint_quantization == "nvfp4" and not r.guessed


def test_mimo_v25_is_the_v2_flash_backbone():
    r = resolve_model("XiaomiMiMo/MiMo-V2.5")
    assert r.arch.id == "XiaomiMiMo/MiMo-V2-Flash" and not r.guessed
    assert abs(_text_total("XiaomiMiMo/MiMo-V2.5") / 310e9 - 1) < 0.01   # recipes: 310B with ~1B of encoders


# --- GLM-4.7-Flash (MLA + MoE), GLM-4-32B-0414 (GQA 24:1) ---------------------------------------------------------

def test_glm47_flash_total_and_mla_kv():
    # NVIDIA Megatron-Bridge: "about 30B total parameters and 3B active"; 47 MLA layers cache 512 + 64 per token
    assert abs(_text_total("zai-org/GLM-4.7-Flash") / 30e9 - 1) < 0.02
    assert kv_bytes_per_token(resolve_model("zai-org/GLM-4.7-Flash").arch, effective_config()) == 47 * (512 + 64) * 2


def test_glm4_32b_0414_total_and_kv():
    assert abs(_text_total("zai-org/GLM-4-32B-0414") / 32.6e9 - 1) < 0.005     # HF: 32.6B
    r = resolve_model("THUDM/GLM-Z1-32B-0414")
    assert r.arch.id == "zai-org/GLM-4-32B-0414" and not r.guessed
    assert kv_bytes_per_token(r.arch, effective_config()) == 61 * 2 * 2 * 128 * 2


# --- Cohere2: Command A, Command R7B (3 sliding : 1 full) -----------------------------------------------------------

@pytest.mark.parametrize("name, published, tol", [
    ("CohereLabs/c4ai-command-a-03-2025", 111e9, 0.002),       # Cohere: 111B
    ("CohereLabs/c4ai-command-r7b-12-2024", 8.03e9, 0.002),    # HF: 8.03B
])
def test_cohere2_totals(name, published, tol):
    assert abs(_text_total(name) / published - 1) <= tol


def test_command_a_windows():
    arch = resolve_model("CohereLabs/c4ai-command-a-03-2025").arch
    kinds = [(x.kind, x.window) for x in kv_layers(arch, effective_config())]
    assert kinds.count(("sliding", 4096)) == 48 and kinds.count(("full", None)) == 16 and kinds[3] == ("full", None)
    assert kv_bytes_per_token(arch, effective_config()) == 64 * 2 * 8 * 128 * 2   # full-length sum over all 64 layers


# --- Qwen2-57B-A14B, Gemma 3 270M -------------------------------------------------------------------------------------

def test_qwen2_57b_a14b_total_and_kv():
    assert round(_text_total("Qwen/Qwen2-57B-A14B-Instruct") / 1e9, 1) == 57.4         # Qwen: 57.4B
    arch = resolve_model("Qwen/Qwen2-57B-A14B-Instruct").arch
    assert kv_bytes_per_token(arch, effective_config()) == 28 * 2 * 4 * 128 * 2


def test_gemma3_270m_total_and_windows():
    assert abs(_text_total("google/gemma-3-270m-it") / 268e6 - 1) < 0.01               # Google: 268M
    arch = resolve_model("google/gemma-3-270m-it").arch
    kinds = [(x.kind, x.window) for x in kv_layers(arch, effective_config())]
    assert [i for i, k in enumerate(kinds) if k == ("full", None)] == [5, 11, 17]


def test_an_unknown_lfm_size_is_not_mapped_onto_a_dense_model():
    # "lfm" is a family word: LFM2.5-230M (a hybrid whose config the catalog lacks) is refused with a hint rather
    # than sized onto Gemma-3-270M (dense, 18 attention layers where LFM2 has 6 of 16)
    from sched_reader.errors import UnknownModelError
    with pytest.raises(UnknownModelError) as exc:
        resolve_model("LiquidAI/LFM2.5-230M")
    assert "--model-config" in exc.value.hint


# --- MiMo-7B, InternLM2.5-7B (2.3-2.6x the KV of the Qwen2-7B look-alike they were guessed as) ------------------------

def test_internlm25_7b_element_count_is_the_published_total():
    arch = resolve_model("internlm/internlm2_5-7b-chat").arch
    assert weight_breakdown(arch, effective_config()).params_total == 7_737_708_544
    assert kv_bytes_per_token(arch, effective_config()) == 32 * 2 * 8 * 128 * 2


def test_mimo_7b_kv_and_size():
    r = resolve_model("XiaomiMiMo/MiMo-7B-RL")
    assert r.arch.id == "XiaomiMiMo/MiMo-7B-Base" and not r.guessed
    assert kv_bytes_per_token(r.arch, effective_config()) == 36 * 2 * 8 * 128 * 2
    # Xiaomi: 7.8B with the MTP layer (one decoder layer, not loaded without --speculative-config)
    assert 7.5e9 < weight_breakdown(r.arch, effective_config()).params_total < 7.8e9


def test_dsv4_capacity_counts_windows_per_request_and_compressed_rows_per_token():
    # one request of 65,536 tokens: 43 windows of (128 + one 16-token block) rows x 1,024 B, plus
    # 65,536 x (21 CSA layers x 272 B + 20 HCA layers x 8 B) -- by hand, not through the layer list
    from sched_reader.models.engine_spec import EffectiveConfig
    from sched_reader.models.kv_cache import kv_capacity
    cfg = EffectiveConfig(vllm_version="0.25.0", tensor_parallel_size=4, max_model_len=65536,
                          gpu_memory_utilization=0.9, dtype="bfloat16", max_num_seqs=256,
                          max_num_batched_tokens=8192, enable_chunked_prefill=True, enable_prefix_caching=False)
    need = 43 * (128 + 16) * 1024 + 65536 * (21 * 272 + 20 * 8)
    r = kv_capacity(resolve_model("deepseek-ai/DeepSeek-V4-Flash").arch, cfg, [40 * 2**30])
    assert r.fits and r.max_concurrency == round(40 * 2**30 / need, 2)
    small = kv_capacity(resolve_model("deepseek-ai/DeepSeek-V4-Flash").arch, cfg, [need - 1])
    assert not small.fits and "65536" in small.error


# --- LLaVA-1.5-7B (multi-head Llama-2 decoder), ChatGLM3-6B (2 KV groups) ------------------------------------------------

@pytest.mark.parametrize("name, published, by_hand", [
    ("llava-hf/llava-1.5-7b-hf", 7.06e9, 32 * 2 * 32 * 128 * 2),   # HF: 7.06B with the CLIP tower; MHA FP16
    ("THUDM/chatglm3-6b", 6.24e9, 28 * 2 * 2 * 128 * 2),           # HF: 6.24B; 2 KV groups of 128
])
def test_llava15_and_chatglm3(name, published, by_hand):
    r = resolve_model(name)
    assert not r.guessed and kv_bytes_per_token(r.arch, effective_config()) == by_hand
    assert abs(weight_breakdown(r.arch, effective_config()).params_total / published - 1) < 0.005


def test_gpt_j_6b_total_and_multi_head_kv():
    # EleutherAI: 6,053,381,344 parameters; 16 heads of 256 all cached (multi-head)
    arch = resolve_model("EleutherAI/gpt-j-6b").arch
    assert abs(weight_breakdown(arch, effective_config()).params_total / 6_053_381_344 - 1) < 0.001
    assert kv_bytes_per_token(arch, effective_config()) == 28 * 2 * 16 * 256 * 2
