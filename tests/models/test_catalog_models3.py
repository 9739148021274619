"""Catalog entries for models people serve on vLLM that the catalog lacked: vLLM's quick-start OPT-125m,
Mistral Large 2, Phi-3-medium, Phi-3.5-MoE, DeepSeek-V2 236B / V2.5 / Coder-V2, OLMo 2, Hunyuan-A13B,
Llama-3.3-Nemotron-Super-49B (NAS blocks), Kimi-Linear (KDA hybrid), MiniMax-M1 (lightning hybrid), GLM-4.5V,
DeepSeek-OCR, InternVL3.5, Nemotron 3 Super / Ultra (latent MoE), Nemotron-H-56B, Gemma 4, Step-3.7-Flash,
MiniMax-M3, CodeLlama-34B.

Independent pins: the vendors' published parameter counts (model cards / papers, rounded: tolerance
stated per case) or a checkpoint's published tensor table / safetensors headers, element counts written out
by hand from the published tensor layout, KV bytes per token and recurrent-state bytes by hand from the
published head layout and vLLM's state-shape rules, and vLLM's hybrid block sizing by hand.
"""

from __future__ import annotations

import pytest
from helpers import effective_config

from sched_reader.models.kv_cache import kv_bytes_per_token
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import weight_breakdown


def _total(name: str) -> int:
    return weight_breakdown(resolve_model(name).arch, effective_config()).params_total


@pytest.mark.parametrize("name, published, tol", [
    ("facebook/opt-125m", 125e6, 0.005),                         # OPT paper Table 1: 125M
    ("mistralai/Mistral-Large-Instruct-2411", 123e9, 0.005),     # Mistral: 123B
    ("mistralai/Mistral-Large-Instruct-2407", 123e9, 0.005),
    ("microsoft/Phi-3-medium-4k-instruct", 14e9, 0.005),         # Microsoft: 14B
    ("microsoft/Phi-3-medium-128k-instruct", 14e9, 0.005),
    ("deepseek-ai/DeepSeek-V2-Chat", 236e9, 0.005),              # DeepSeek: 236B total
    ("deepseek-ai/DeepSeek-V2.5", 236e9, 0.005),
    ("deepseek-ai/DeepSeek-Coder-V2-Instruct", 236e9, 0.005),
    ("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct", 15.7e9, 0.005),  # DeepSeek: 16B (15.7B stored)
    ("allenai/OLMo-2-1124-7B-Instruct", 7.3e9, 0.005),           # Ai2: 7.3B
    ("allenai/OLMo-2-1124-13B-Instruct", 13.7e9, 0.005),         # Ai2: 13.7B
])
def test_totals_match_the_published_parameter_counts(name, published, tol):
    assert abs(_total(name) / published - 1) <= tol


def test_opt_125m_element_count_by_hand():
    h, ffn, layers, vocab, positions = 768, 3072, 12, 50_272, 2_048 + 2   # OPTLearnedPositionalEmbedding offset 2
    attn = 4 * (h * h + h)                      # q, k, v, out_proj, each with a bias
    mlp = h * ffn + ffn + ffn * h + h           # fc1 + bias, fc2 + bias (ReLU, no gate)
    norms = 2 * 2 * h                           # self_attn_layer_norm, final_layer_norm: weight + bias
    total = vocab * h + positions * h + layers * (attn + mlp + norms) + 2 * h   # + decoder final LayerNorm; tied head
    assert total == 125_239_296
    assert _total("facebook/opt-125m") == total


def test_olmo2_qk_norms_span_all_heads():
    # OLMo 2 7B: q_norm over 32 x 128 and k_norm over 32 x 128 (not one head of 128), plus the post-attention and
    # post-feedforward RMSNorms; no input norm
    h, inter, layers, vocab = 4096, 11_008, 32, 100_352
    per_layer = 4 * h * h + 3 * h * inter + 2 * h + 2 * h
    assert _total("allenai/OLMo-2-1124-7B") == 2 * vocab * h + layers * per_layer + h == 7_298_617_344


def test_deepseek_v2_active_parameters_match_the_published_21b():
    a = resolve_model("deepseek-ai/DeepSeek-V2-Chat").arch
    wb = weight_breakdown(a, effective_config())
    routed = wb.components["moe_routed_experts"].params_total
    active = wb.params_total - routed + routed * 6 // 160          # 6 of 160 routed experts per token
    assert abs(active / 21e9 - 1) <= 0.02                           # "21B activated" (vendor rounding)


@pytest.mark.parametrize("name, by_hand", [
    ("facebook/opt-125m", 12 * 2 * 12 * 64 * 2),                          # MHA: 12 heads of 64
    ("mistralai/Mistral-Large-Instruct-2411", 88 * 2 * 8 * 128 * 2),      # 8 KV heads of 128
    ("microsoft/Phi-3-medium-4k-instruct", 40 * 2 * 10 * 128 * 2),        # 10 KV heads of 128
    ("deepseek-ai/DeepSeek-V2.5", 60 * (512 + 64) * 2),                   # MLA latent: kv_lora_rank + rope dims
    ("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct", 27 * (512 + 64) * 2),
    ("allenai/OLMo-2-1124-13B", 40 * 2 * 40 * 128 * 2),                   # MHA: 40 heads of 128
])
def test_kv_bytes_per_token_by_hand(name, by_hand):
    assert kv_bytes_per_token(resolve_model(name).arch, effective_config()) == by_hand


@pytest.mark.parametrize("name, arch_id", [
    ("mistralai/Mistral-Large-Instruct-2407", "mistralai/Mistral-Large-Instruct-2411"),
    ("deepseek-ai/DeepSeek-V2.5", "deepseek-ai/DeepSeek-V2-Chat"),
    ("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct", "deepseek-ai/DeepSeek-V2-Lite"),
    ("facebook/opt-125m", "facebook/opt-125m"),
])
def test_names_resolve_exactly(name, arch_id):
    r = resolve_model(name)
    assert not r.guessed and r.arch.id in (arch_id, name)


def test_phi3_medium_128k_variant_context():
    assert resolve_model("microsoft/Phi-3-medium-128k-instruct").arch.config["max_position_embeddings"] == 131072
    assert resolve_model("microsoft/Phi-3-medium-4k-instruct").arch.config["max_position_embeddings"] == 4096


# ---------------------------------------------------------------- Nemotron-NAS: heterogeneous per-layer blocks
def _nas_width(ffn_mult: float, hidden: int = 8192) -> int:
    # vLLM nemotron_nas.py _ffn_mult_to_intermediate_size: int(2 x mult x hidden / 3) rounded up to 256
    n = int(2 * ffn_mult * hidden / 3)
    return -(-n // 256) * 256


def test_nemotron_super_49b_block_widths_by_hand():
    assert [_nas_width(m) for m in (5.25, 3.28125, 2.625, 1.3125, 1.0, 0.5)] == [28672, 17920, 14336, 7168, 5632, 2816]


def test_nemotron_super_49b_total_is_the_published_49_9b():
    # 49 attention blocks (q, o 8192 x 8192; k, v 8192 x 8 x 128; input norm), 80 SwiGLU blocks of the listed
    # multipliers (+ post-attention norm), untied 128,256-row embedding and head, final norm
    a = resolve_model("nvidia/Llama-3_3-Nemotron-Super-49B-v1").arch
    h = 8192
    mults = [b["ffn"]["ffn_mult"] for b in a.config["block_configs"]]
    n_attn = sum(1 for b in a.config["block_configs"] if not b["attention"]["no_op"])
    assert n_attn == 49 and len(mults) == 80
    total = 2 * 128_256 * h + h + n_attn * (2 * h * h + 2 * h * 8 * 128 + h) + sum(3 * h * _nas_width(m) + h for m in mults)
    assert total == 49_867_145_216
    assert _total("nvidia/Llama-3_3-Nemotron-Super-49B-v1") == total
    assert abs(total / 49.9e9 - 1) < 0.001                  # HF model page: 49.9B


def test_nemotron_super_49b_kv_only_in_attention_blocks():
    a = resolve_model("nvidia/Llama-3_3-Nemotron-Super-49B-v1").arch
    # 49 attention blocks x (K, V) x 8 KV heads x 128 x 2 bytes; the 31 attention-free blocks hold no cache
    assert kv_bytes_per_token(a, effective_config()) == 49 * 2 * 8 * 128 * 2
    # TP2: 4 KV heads per rank
    assert kv_bytes_per_token(a, effective_config(tensor_parallel_size=2)) == 49 * 2 * 4 * 128 * 2


def test_nemotron_super_cost_shapes_follow_the_blocks():
    from sched_reader.models.cost.shapes import model_shapes
    a = resolve_model("nvidia/Llama-3_3-Nemotron-Super-49B-v1").arch
    s = model_shapes(a, tp=2)
    assert sum(g.count for g in s.groups) == 80
    assert sum(g.count for g in s.groups if g.attention.heads) == 49
    p = s.params_per_gpu()
    wb = weight_breakdown(a, effective_config(tensor_parallel_size=2))
    assert p["mlp"] == wb.components["mlp_dense"].params_per_gpu
    assert p["attn"] == wb.components["attention"].params_per_gpu


# ---------------------------------------------------------------- MoE entries: Hunyuan-A13B, Phi-3.5-MoE
@pytest.mark.parametrize("name, published, tol", [
    ("tencent/Hunyuan-A13B-Instruct", 80e9, 0.01),       # Tencent: "80 billion total parameters"
    ("microsoft/Phi-3.5-MoE-instruct", 42e9, 0.005),     # Microsoft: 42B (16 x 3.8B, shared attention)
])
def test_moe_totals_match_the_published_counts(name, published, tol):
    assert abs(_total(name) / published - 1) <= tol


@pytest.mark.parametrize("name, experts, top_k, published_active, tol", [
    ("tencent/Hunyuan-A13B-Instruct", 64, 8, 13e9, 0.03),    # "13 billion active"
    ("microsoft/Phi-3.5-MoE-instruct", 16, 2, 6.6e9, 0.01),  # "6.6B active parameters"
])
def test_moe_active_parameters(name, experts, top_k, published_active, tol):
    wb = weight_breakdown(resolve_model(name).arch, effective_config())
    routed = wb.components["moe_routed_experts"].params_total
    active = wb.params_total - routed + routed * top_k // experts
    assert abs(active / published_active - 1) <= tol


def test_hunyuan_a13b_element_count_by_hand():
    h, layers, vocab, experts, mi = 4096, 32, 128_167, 64, 3072
    attn = 2 * h * 32 * 128 + 2 * h * 8 * 128 + 2 * 128        # q, o; k, v (8 KV heads); per-head q/k RMSNorm
    moe = experts * 3 * h * mi + 3 * h * mi + h * experts       # routed SwiGLU experts, 1 shared expert, router
    total = vocab * h + layers * (attn + moe + 2 * h) + h       # tied head
    assert _total("tencent/Hunyuan-A13B-Instruct") == total == 80_393_183_232


def test_phi35_moe_element_count_by_hand():
    h, layers, vocab = 4096, 32, 32_064
    attn = h * (h + 2 * 1024) + (h + 2 * 1024) + h * h + h      # qkv + bias, o_proj + bias
    moe = 16 * 3 * h * 6400 + h * 16                            # 16 SwiGLU experts + router
    norms = 2 * 2 * h                                           # two LayerNorms with bias
    total = 2 * vocab * h + vocab + layers * (attn + moe + norms) + 2 * h   # embed, lm_head + bias, final LayerNorm
    assert _total("microsoft/Phi-3.5-MoE-instruct") == total == 41_873_153_344


@pytest.mark.parametrize("name, by_hand", [
    ("tencent/Hunyuan-A13B-Instruct", 32 * 2 * 8 * 128 * 2),
    ("microsoft/Phi-3.5-MoE-instruct", 32 * 2 * 8 * 128 * 2),
])
def test_moe_kv_bytes_per_token_by_hand(name, by_hand):
    assert kv_bytes_per_token(resolve_model(name).arch, effective_config()) == by_hand


# ---------------------------------------------------------------- Kimi-Linear: KDA (linear attention) + MLA hybrid
KIMI = "moonshotai/Kimi-Linear-48B-A3B-Instruct"


def test_kimi_linear_layer_mix_is_20_kda_7_mla():
    from sched_reader.models.hybrid import layer_mixers
    kinds = layer_mixers(resolve_model(KIMI).arch)
    # config full_attn_layers [4, 8, ..., 24, 27] are 1-based: 0-based 3, 7, ..., 23, 26
    assert [i for i, k in enumerate(kinds) if k == "attention"] == [3, 7, 11, 15, 19, 23, 26]
    assert kinds.count("kda") == 20


def test_kimi_linear_total_by_hand():
    h, vocab, experts, mi = 2304, 163_840, 256, 1024
    p, d, heads = 32 * 128, 128, 32                                # KDA projection width, head dim, heads
    kda = 3 * h * p + 3 * p * 4 + heads + h * d + d * p + p + h * heads + h * d + d * p + d + p * h
    mla = h * 32 * 192 + h * (512 + 64) + 512 + 512 * 32 * 256 + 32 * 128 * h   # q, kv_a, kv_a norm, kv_b, o
    moe = experts * 3 * h * mi + 3 * h * mi + h * experts + experts          # experts, shared, router + bias
    total = 2 * vocab * h + 20 * kda + 7 * mla + 3 * h * 9216 + 26 * moe + 27 * 2 * h + h
    assert _total(KIMI) == total == 49_122_681_728
    assert abs(total / 49.1e9 - 1) < 0.002                       # HF model page: 49.1B (model card: "48B")


def test_kimi_linear_kda_state_and_mla_latent_by_hand():
    from sched_reader.models.hybrid import state_bytes
    a = resolve_model(KIMI).arch
    # q/k/v short-conv states: 3 x 4096 channels x (4 - 1) x 2 B; recurrent: 32 heads x 128 x 128 x 4 B (float32)
    assert state_bytes(a, "kda", 1, 2) == 3 * 4096 * 3 * 2 + 32 * 128 * 128 * 4 == 2_170_880
    assert state_bytes(a, "kda", 2, 2) == 3 * 2048 * 3 * 2 + 16 * 128 * 128 * 4
    assert kv_bytes_per_token(a, effective_config()) == 7 * (512 + 64) * 2   # only the 7 MLA layers cache tokens


def test_kimi_linear_hybrid_blocks_by_hand():
    from sched_reader.models.kv_cache import kv_capacity
    a = resolve_model(KIMI).arch
    cfg = effective_config(vllm_version="0.11.2", max_model_len=32768, enable_prefix_caching=False)
    r = kv_capacity(a, cfg, [40 * 2**30])
    # MLA hybrid: block = 64 x cdiv(2,170,880 B state, 64 x 1,152 B per token) = 64 x 30 = 1,920 tokens
    assert r.block_size == 1920 and r.page_size_bytes == 1920 * 1152
    # groups of min(7, 20) = 7 layers: 1 MLA group + cdiv(20, 7) = 3 KDA groups
    blocks = 40 * 2**30 // (1920 * 1152 * 7)
    assert (r.num_blocks, r.num_groups) == (blocks, 4)
    assert r.tokens == blocks // 4 * 1920


# ---------------------------------------------------------------- GLM-4.5V: GLM-4.5-Air decoder + GLM-4V vision
def test_glm45v_total_is_the_checkpoint_tensor_sum_by_hand():
    # tensor table of the 46 safetensors files (public model report): 107,710,933,120 elements
    h, vocab, heads, kv, hd = 4096, 151_552, 96, 8, 128
    attn = h * heads * hd + heads * hd + 2 * (h * kv * hd + kv * hd) + heads * hd * h   # q + bias, k/v + bias, o
    moe = 128 * 3 * h * 1408 + 3 * h * 1408 + 128 * h                                  # experts, shared, gate
    text = 2 * vocab * h + 46 * (attn + 2 * h) + 3 * h * 10944 + 45 * moe + h
    vh = 1536
    block = vh * 3 * vh + vh * vh + 3 * vh * 4096 + 2 * vh                              # qkv, proj, SwiGLU, 2 norms
    vision = (24 * block + 4096 * vh * 4 + 4096 + 576 * vh                             # blocks, downsample, positions
              + 4096 * 4096 + 2 * 4096 + 3 * 4096 * 10944                              # merger proj, LayerNorm, MLP
              + vh * 3 * 2 * 14 * 14 + vh + 2 * vh)                                    # patch embed + bias, 2 norms
    router_bias = 45 * 128                                                              # e_score_correction_bias
    assert text + vision + router_bias == 107_710_933_120
    a = resolve_model("zai-org/GLM-4.5V").arch
    wb = weight_breakdown(a, effective_config())
    assert wb.params_total == 107_710_933_120
    assert wb.params_total - wb.components["vision"].params_total == text   # the text model exactly (bias aside)


def test_glm45v_kv_and_fp8_name():
    a = resolve_model("zai-org/GLM-4.5V").arch
    assert kv_bytes_per_token(a, effective_config()) == 46 * 2 * 8 * 128 * 2
    r = resolve_model("zai-org/GLM-4.5V-FP8")
    assert r.arch.id == "zai-org/GLM-4.5V" and r.checkpoint_quantization == "fp8" and not r.guessed


def test_deepseek_ocr_text_model_by_hand_and_vision_remainder():
    # DeepSeek3B-MoE decoder of DeepSeek-OCR: MHA (no MLA), 64 experts of 896 + 2 shared, layer 0 dense 6848
    h, vocab = 1280, 129_280
    moe = 64 * 3 * h * 896 + 3 * h * 2 * 896 + 64 * h
    text = 2 * vocab * h + 12 * (4 * h * h + 2 * h) + 3 * h * 6848 + 11 * moe + h
    a = resolve_model("deepseek-ai/DeepSeek-OCR").arch
    wb = weight_breakdown(a, effective_config())
    assert wb.params_total - wb.components["vision"].params_total == text == 2_934_734_080
    # the checkpoint's tensor table sums to 3,336,106,240: SAM-B + CLIP-L + projector = the rest (~0.40B)
    assert wb.params_total == 3_336_106_240 and wb.components["vision"].params_total == 401_372_160
    assert kv_bytes_per_token(a, effective_config()) == 12 * 2 * 10 * 128 * 2        # MHA, not an MLA latent


# ---------------------------------------------------------------- InternVL3.5: InternViT + MLP + Qwen3 decoders
@pytest.mark.parametrize("name, text_model, published, tol", [
    # InternVL3.5 model card, model zoo: #Total Param (vision 0.3B / 5.5B + language)
    ("OpenGVLab/InternVL3_5-8B", "Qwen/Qwen3-8B", 8.5e9, 0.005),
    ("OpenGVLab/InternVL3_5-14B", "Qwen/Qwen3-14B", 15.1e9, 0.005),
    ("OpenGVLab/InternVL3_5-38B", "Qwen/Qwen3-32B", 38.4e9, 0.005),
    ("OpenGVLab/InternVL3_5-30B-A3B", "Qwen/Qwen3-30B-A3B", 30.8e9, 0.005),
    ("OpenGVLab/InternVL3_5-241B-A28B", "Qwen/Qwen3-235B-A22B", 240.7e9, 0.005),
])
def test_internvl35_totals_and_text_models(name, text_model, published, tol):
    a = resolve_model(name).arch
    wb = weight_breakdown(a, effective_config())
    assert abs(wb.params_total / published - 1) <= tol
    text = weight_breakdown(resolve_model(text_model).arch, effective_config()).params_total
    assert wb.params_total - wb.components["vision"].params_total == text      # the Qwen3 decoder, unchanged
    assert kv_bytes_per_token(a, effective_config()) == kv_bytes_per_token(resolve_model(text_model).arch,
                                                                            effective_config())
    assert not resolve_model(name + "-HF").guessed


# ---------------------------------------------------------------- MiniMax-M1: lightning attention + softmax hybrid
M1 = "MiniMaxAI/MiniMax-M1-80k"


def test_minimax_m1_total_by_hand():
    h, vocab, heads, kv, hd = 6144, 200_064, 64, 8, 128
    lightning = 3 * h * heads * hd + h * heads * hd + heads * hd * h + heads * hd   # qkv, output gate, out, norm
    softmax = h * heads * hd + 2 * h * kv * hd + heads * hd * h                     # q, k, v (8 KV heads), o
    moe = 32 * 3 * h * 9216 + h * 32                                                # 32 experts + router
    total = 2 * vocab * h + 70 * lightning + 10 * softmax + 80 * (moe + 2 * h) + h
    assert _total(M1) == total == 456_089_655_296
    assert abs(total / 456e9 - 1) < 0.001                         # MiniMax: "456 billion total parameters"


def test_minimax_m1_layer_mix_state_and_kv_by_hand():
    from sched_reader.models.hybrid import layer_mixers, state_bytes
    a = resolve_model(M1).arch
    kinds = layer_mixers(a)
    assert [i for i, k in enumerate(kinds) if k == "attention"] == list(range(7, 80, 8))
    # lightning state: 64 heads x 128 x 128 in bf16 (no conv state); TP8: 8 heads per rank
    assert state_bytes(a, "lightning", 1, 2) == 64 * 128 * 128 * 2
    assert state_bytes(a, "lightning", 8, 2) == 8 * 128 * 128 * 2
    assert kv_bytes_per_token(a, effective_config()) == 10 * 2 * 8 * 128 * 2    # only the 10 softmax layers


def test_minimax_m1_hybrid_blocks_by_hand():
    from sched_reader.models.kv_cache import kv_capacity
    a = resolve_model(M1).arch
    cfg = effective_config(tensor_parallel_size=8, vllm_version="0.11.2", max_model_len=131072,
                           enable_prefix_caching=False)
    r = kv_capacity(a, cfg, [20 * 2**30])
    # TP8: 512 B per token per softmax layer (1 KV head x 128 x 2 x 2 B); state 262,144 B -> 16 x cdiv(262144, 16 x 512)
    assert r.block_size == 512 and r.page_size_bytes == 262_144
    # groups of min(10, 70) = 10 layers: 1 softmax group + 7 lightning groups
    assert (r.num_blocks, r.num_groups) == (20 * 2**30 // (262_144 * 10), 8)
    assert r.tokens == r.num_blocks // 8 * 512


# ---------------------------------------------------------------- Nemotron 3 Super: latent MoE in a Nemotron-H stack
SUPER = "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"


def test_nemotron3_super_total_matches_the_safetensors_headers():
    # public header sums of the BF16 repo: 123,611,012,096 BF16 elements, of which the MTP layer 2,942,324,736;
    # the API total adds the 40 MoE layers' float32 e_score_correction_bias (512 each)
    h, vocab, L = 4096, 131_072, 1024
    mamba = h * (2 * 8192 + 2 * 8 * 128 + 128) + (8192 + 2 * 8 * 128) * 5 + 3 * 128 + 8192 + 8192 * h
    attn = 2 * h * 32 * 128 + 2 * h * 2 * 128
    moe = 512 * 2 * L * 2688 + 2 * h * L + 2 * h * 5376 + h * 512 + 512   # latent experts, latent projs, shared, router
    total = 2 * vocab * h + 40 * mamba + 8 * attn + 40 * moe + 88 * h + h      # one norm per layer + final norm
    assert total == 123_611_012_096 - 2_942_324_736 + 40 * 512
    assert _total(SUPER) == total


def test_nemotron3_super_kv_and_quantized_names():
    a = resolve_model(SUPER).arch
    assert kv_bytes_per_token(a, effective_config()) == 8 * 2 * 2 * 128 * 2     # 8 attention layers, 2 KV heads
    for name in ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4"):
        r = resolve_model(name)
        assert r.arch.id == SUPER and not r.guessed and r.checkpoint_quantization in ("fp8", "nvfp4")


@pytest.mark.parametrize("name", [SUPER, "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "nvidia/NVIDIA-Nemotron-Nano-9B-v2"])
def test_nemotron_h_cost_shapes_follow_the_pattern(name):
    # one mixer OR one MLP per layer (M / * / - / E); squared-ReLU experts have no gate; latent experts work in
    # moe_latent_size: the cost shapes hold the same weights as the weight model (conv / norm / bias aside)
    from sched_reader.models.cost.shapes import model_shapes
    a = resolve_model(name).arch
    s = model_shapes(a, tp=2)
    p = s.params_per_gpu()
    wb = weight_breakdown(a, effective_config(tensor_parallel_size=2)).components
    pat = a.config["hybrid_override_pattern"]
    assert sum(g.count for g in s.groups if g.attention.heads) == pat.count("*")
    assert p["experts"] == wb["moe_routed_experts"].params_per_gpu
    assert p["shared"] == wb["moe_shared"].params_per_gpu
    assert p["mlp"] == wb["mlp_dense"].params_per_gpu
    assert abs(p["attn"] / wb["attention"].params_per_gpu - 1) < 0.001


def test_codellama_34b_by_hand_and_phi4_mini_reasoning():
    h, layers = 8192, 48
    per_layer = 2 * h * h + 2 * h * 8 * 128 + 3 * h * 22016 + 2 * h
    assert _total("meta-llama/CodeLlama-34b-Instruct-hf") == 2 * 32000 * h + layers * per_layer + h == 33_743_970_304
    assert abs(33_743_970_304 / 34e9 - 1) < 0.01                              # Meta: "34B"
    assert kv_bytes_per_token(resolve_model("codellama/CodeLlama-34b-hf").arch, effective_config()) == 48 * 2 * 8 * 128 * 2
    r = resolve_model("microsoft/Phi-4-mini-reasoning")
    assert r.arch.id == "microsoft/Phi-4-mini-instruct" and not r.guessed


def _nemotron_mtp(h: int, heads: int, kv: int, lat: int, mi: int, shared: int, experts: int = 512) -> int:
    """One Nemotron 3 MTP block (attention + latent MoE layer + eh_proj + 5 norms), the layout that reproduces
    the Super repo's published MTP header count 2,942,324,736."""
    attn = 2 * h * heads * 128 + 2 * h * kv * 128
    moe = experts * 2 * lat * mi + 2 * h * lat + 2 * h * shared + h * experts
    return attn + moe + 2 * h * h + 5 * h


def test_nemotron3_mtp_block_layout_reproduces_the_super_header():
    assert _nemotron_mtp(4096, 32, 2, 1024, 2688, 5376) == 2_942_324_736


def test_nemotron3_ultra_from_layers_block_type():
    a = resolve_model("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16").arch
    pat = a.config["hybrid_override_pattern"]                     # filled from layers_block_type
    assert len(pat) == a.num_layers and pat.count("*") * 2 * 2 * 128 * 2 == kv_bytes_per_token(a, effective_config())
    main = _total("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16")
    mtp = _nemotron_mtp(8192, 64, 2, 2048, 5120, 10240)
    routing_bias = pat.count("E") * 512                            # float32 buffers, outside the BF16 count
    assert abs((main - routing_bias + mtp) / 560.5e9 - 1) < 0.0005  # HF model page: 560.5B (with the MTP block)


def test_nemotron_h_56b_is_the_published_56b():
    a = resolve_model("nvidia/Nemotron-H-56B-Base-8K").arch
    assert abs(_total("nvidia/Nemotron-H-56B-Base-8K") / 56e9 - 1) < 0.01      # NVIDIA: "56B"
    assert kv_bytes_per_token(a, effective_config()) == 10 * 2 * 8 * 128 * 2     # 10 attention layers of 118


# ---------------------------------------------------------------- Gemma 4: per-layer-type KV geometry
@pytest.mark.parametrize("name, sliding, full, kv_sliding, kv_full", [
    ("google/gemma-4-26B-A4B-it", 25, 5, 8, 2),
    ("google/gemma-4-31B-it", 50, 10, 16, 4),
])
def test_gemma4_kv_bytes_by_layer_type(name, sliding, full, kv_sliding, kv_full):
    # sliding layers: KV heads of 256; full layers: KV heads of 512 (K = V at the projection, both cached)
    a = resolve_model(name).arch
    assert kv_bytes_per_token(a, effective_config()) == sliding * 2 * kv_sliding * 256 * 2 + full * 2 * kv_full * 512 * 2


def test_gemma4_full_layer_has_no_v_proj():
    from sched_reader.models.weights import _attention_params
    a = resolve_model("google/gemma-4-31B-it").arch
    h = 5376
    full = _attention_params(a.config, a, 1, 5)[0]          # layer 6 is full attention
    sliding = _attention_params(a.config, a, 1, 0)[0]
    assert full == h * 32 * 512 + h * 4 * 512 + 32 * 512 * h      # q, k (= v), o
    assert sliding == h * 32 * 256 + 2 * h * 16 * 256 + 32 * 256 * h


def test_gemma4_unified_pages_by_hand():
    from sched_reader.models.kv_cache import kv_capacity
    a = resolve_model("google/gemma-4-26B-A4B-it").arch
    r = kv_capacity(a, effective_config(max_model_len=32768), [20 * 2**30])
    # page = 16 tokens x 8,192 B (sliding); full layers (4,096 B/token) get blocks of 32 tokens for the same page
    assert r.page_size_bytes == 16 * 8192
    # groups of min(25, 5) = 5 layers: 5 sliding groups + 1 full group
    blocks = 20 * 2**30 // (16 * 8192 * 5)
    assert (r.num_blocks, r.num_groups) == (blocks, 6)
    per_request = 5 * (-(-(1024 - 1 + 8192) // 16) + 1) + -(-32768 // 32)     # sliding window + full at 32/block
    assert r.max_concurrency == round(blocks / per_request, 2)


def test_step37_flash_by_hand():
    a = resolve_model("stepfun-ai/Step-3.7-Flash").arch
    h, vocab = 4096, 128_896
    attn = 2 * h * 64 * 128 + 2 * h * 8 * 128
    moe = 288 * 3 * h * 1280 + 3 * h * 1280 + h * 288 + 288        # experts, shared, router + bias
    total = 2 * vocab * h + 45 * (attn + 2 * h) + 3 * 3 * h * 11264 + 42 * moe + h
    assert _total("stepfun-ai/Step-3.7-Flash") == total
    # one KV geometry on the 12 full and 33 sliding (512-token) layers
    assert kv_bytes_per_token(a, effective_config()) == 45 * 2 * 8 * 128 * 2
    assert a.config["layer_types"].count("sliding_attention") == 33 and a.config["sliding_window"] == 512


def test_minimax_m3_text_decoder():
    a = resolve_model("MiniMaxAI/MiniMax-M3").arch
    h, vocab = 6144, 200_064
    attn = 2 * h * 64 * 128 + 2 * h * 4 * 128 + 2 * 128                       # q, o; k, v (4 KV heads); q/k norm
    moe = 128 * 3 * h * 3072 + 3 * h * 3072 + h * 128 + 128                  # experts, shared, router + bias
    total = 2 * vocab * h + 60 * (attn + 2 * h) + 3 * 3 * h * 12288 + 57 * moe + h
    assert _total("MiniMaxAI/MiniMax-M3") == total
    # HF model page 427.0B (third-party table, stored-code index id 58752063953): the indexer weights are not modelled
    assert -0.005 < total / 427.0e9 - 1 < 0
    assert kv_bytes_per_token(a, effective_config()) == 60 * 2 * 4 * 128 * 2
