"""Large served MoE models added to the catalog (GLM-4.5/4.6/4.7, DeepSeek-V3.2 DSA, Llama-4-Maverick,
Kimi-K2-Thinking INT4), each checked against a fact sourced apart from the code:

* parameter totals published on Hugging Face (safetensors metadata, as cited in models.yaml ``params_evidence``),
  reproduced by hand from the pieces the published total holds and vLLM does not load (MTP layer, router biases);
* KV bytes per token by hand from vLLM's source (DeepSeek-V3.2: MLA latent or the 656-byte ``fp8_ds_mla`` row plus
  the 132-byte indexer key per layer, per release);
* weight bytes by hand from the checkpoint's quantization_config (Kimi-K2-Thinking INT4 experts).
"""

from __future__ import annotations

import pytest

from sched_reader.errors import UnknownModelError
from sched_reader.models.architecture import sparse_mla_cache_dtype
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.kv_cache import kv_bytes_per_token
from sched_reader.models.model_catalog import get_model, resolve_model
from sched_reader.models.weights import weight_breakdown


def cfg(**kw) -> EffectiveConfig:
    base = dict(vllm_version="0.19.0", max_model_len=8192, gpu_memory_utilization=0.9, dtype="bfloat16",
                max_num_seqs=256, max_num_batched_tokens=8192, enable_chunked_prefill=True,
                enable_prefix_caching=True)
    base.update(kw)
    return EffectiveConfig(**base)


def params(name: str) -> int:
    r = resolve_model(name)
    return weight_breakdown(r.arch, cfg(), None).params_total


# --- GLM-4.5 / 4.6 / 4.7 (355B-A32B, glm4_moe) ---------------------------------------------------------------

def _glm_mtp_layer(h: int = 5120, heads: int = 96, kv: int = 8, hd: int = 128, experts: int = 160,
                   moe_inter: int = 1536) -> int:
    """One GLM-4.5 MoE decoder layer as stored for MTP, by hand from the HF Glm4Moe module layout."""
    attn = h * heads * hd + 2 * h * kv * hd + heads * hd * h + (heads * hd + 2 * kv * hd)   # q, k, v, o + qkv bias
    qk_norm = 2 * hd
    routed = experts * 3 * h * moe_inter
    shared = 3 * h * moe_inter
    router = experts * h + experts                      # gate weight + e_score_correction_bias
    norms = 2 * h
    extra = 2 * h * h + 3 * h                           # eh_proj, enorm, hnorm, shared_head.norm
    return attn + qk_norm + routed + shared + router + norms + extra


def test_glm45_total_is_the_published_safetensors_count():
    # Hugging Face safetensors total of zai-org/GLM-4.5 (and, to the element, zai-org/GLM-4.7): 358,337,791,296.
    # It holds what vLLM serves, plus the 89 MoE layers' e_score_correction_bias (160 each), plus the MTP layer
    # with its own copies of the embedding and the head (151552 x 5120 each).
    main = params("zai-org/GLM-4.5")
    assert main + 89 * 160 + _glm_mtp_layer() + 2 * 151552 * 5120 == 358_337_791_296
    assert params("zai-org/GLM-4.7") == main


def test_glm46_total_drops_the_mtp_embedding_copies():
    # zai-org/GLM-4.6 published total 356,785,898,816: GLM-4.5's layers, the MTP layer without embedding/head copies
    assert params("zai-org/GLM-4.6") + 89 * 160 + _glm_mtp_layer() == 356_785_898_816
    # model card: "355 billion total parameters with 32 billion active"
    assert abs(params("zai-org/GLM-4.6") - 355e9) / 355e9 < 0.01


def test_glm_context_lengths_and_fp8_repos():
    assert resolve_model("zai-org/GLM-4.5").arch.config["max_position_embeddings"] == 131072
    for name in ("zai-org/GLM-4.6", "zai-org/GLM-4.7", "zai-org/GLM-4.7-FP8", "zai-org/GLM-4.6-FP8"):
        assert resolve_model(name).arch.config["max_position_embeddings"] == 202752, name
    r = resolve_model("zai-org/GLM-4.5-FP8")
    assert r.arch.id == "zai-org/GLM-4.5" and r.checkpoint_quantization == "fp8" and not r.guessed


def test_glm45_kv_bytes_per_token_by_hand():
    # 92 layers x 2 (K, V) x 8 KV heads x 128 x 2 bytes (bf16) = 376,832 bytes; TP 8: one KV head per rank
    a = get_model("zai-org/GLM-4.5")
    assert kv_bytes_per_token(a, cfg()) == 92 * 2 * 8 * 128 * 2
    assert kv_bytes_per_token(a, cfg(tensor_parallel_size=8)) == 92 * 2 * 1 * 128 * 2


# --- DeepSeek-V3.2 (DeepseekV32ForCausalLM: MLA + DSA lightning indexer) --------------------------------------

def test_deepseek_v32_indexer_params_match_the_published_totals():
    # Published totals: DeepSeek-V3 684,531,386,000; DeepSeek-V3.2-Exp 685,396,921,376. The difference is 62 indexers
    # (61 layers + the MTP layer), each wq_b (1536 -> 64 x 128) + wk (7168 -> 128) + weights_proj (7168 -> 64)
    # + k_norm (LayerNorm weight and bias, 2 x 128), plus the fp32 128x128 block scales of the two fp8 projections
    # (64 x 12 + 1 x 56 = 824).
    per_layer = (685_396_921_376 - 684_531_386_000) // 62 - 824
    assert (685_396_921_376 - 684_531_386_000) % 62 == 0
    assert per_layer == 1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128
    # vLLM builds the same indexer in each of the 61 served layers
    assert params("deepseek-ai/DeepSeek-V3.2") - params("deepseek-ai/DeepSeek-V3") == 61 * per_layer


@pytest.mark.parametrize("version, requested, mla_bytes", [
    ("0.11.0", "auto", 656),         # 0.11.0 DeepseekV32 hook: auto -> fp8_ds_mla
    ("0.11.0", "bfloat16", 1152),    # bfloat16 -> auto (bf16 latent: 576 x 2)
    ("0.11.1", "auto", 1152),        # 0.11.1+: auto stays the model dtype
    ("0.12.0", "fp8", 656),          # fp8 -> fp8_ds_mla: 512 fp8 + 4 fp32 scales + 64 bf16 rope = 656 bytes
    ("0.19.0", "fp8_e4m3", 656),
])
def test_deepseek_v32_kv_bytes_per_token_by_hand(version, requested, mla_bytes):
    # every layer also caches a 132-byte indexer key: 128 fp8 values + one fp32 scale per 128 (uint8 MLAAttentionSpec)
    a = get_model("deepseek-ai/DeepSeek-V3.2")
    got = kv_bytes_per_token(a, cfg(vllm_version=version, kv_cache_dtype=requested, tensor_parallel_size=8))
    assert got == 61 * (mla_bytes + 132)


def test_dense_mla_models_keep_their_576_element_latent():
    a = get_model("deepseek-ai/DeepSeek-V3")
    assert not a.is_sparse_mla and a.indexer_bytes_per_token == 0
    assert kv_bytes_per_token(a, cfg(vllm_version="0.11.0")) == 61 * 576 * 2
    assert sparse_mla_cache_dtype("fp8", (0, 19, 0))[0] == "fp8_ds_mla"


def test_deepseek_v32_diagnose_reports_vllm_cache_dtype(run_cli):
    code, out, err = run_cli("diagnose", "--gpu", "H200", "--vllm", "0.11.0", "-f", "json", "--",
                             "vllm", "serve", "deepseek-ai/DeepSeek-V3.2-Exp", "-tp", "8")
    assert code in (0, 1), err
    assert '"kv_cache_dtype": "fp8_ds_mla"' in out
    assert '"bytes_per_token": 48068' in out        # 61 x (656 + 132)


# --- Llama-4-Maverick-17B-128E ---------------------------------------------------------------------------------

def test_maverick_text_model_and_vision_tower_fit_both_published_totals():
    # Published totals: Maverick 401,583,781,376; Scout 108,641,793,536. Both checkpoints carry the same vision tower
    # and projector (to the text hidden size 5120), so the totals minus each text model must agree.
    mav = resolve_model("meta-llama/Llama-4-Maverick-17B-128E-Instruct").arch
    scout = get_model("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    wm = weight_breakdown(mav, cfg())
    ws = weight_breakdown(scout, cfg())
    text_m = wm.params_total - wm.components["vision"].params_per_gpu
    text_s = ws.params_total - ws.components["vision"].params_per_gpu
    assert 401_583_781_376 - text_m == 108_641_793_536 - text_s
    # model card: "17B active parameters, 128 experts, 400B total parameters"
    assert abs(wm.params_total - 400e9) / 400e9 < 0.01


def test_maverick_is_no_longer_assumed_to_be_scout():
    for name in ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"):
        r = resolve_model(name)
        assert r.arch.id == "meta-llama/Llama-4-Maverick-17B-128E-Instruct" and not r.guessed
        assert r.arch.config["num_local_experts"] == 128


# --- Kimi-K2 family ----------------------------------------------------------------------------------------------

def test_kimi_k2_thinking_int4_experts_and_bf16_rest():
    # Kimi-K2-Thinking ships compressed-tensors W4A16 (group 32, symmetric) on the routed experts; attention, shared
    # experts and the dense layer's MLP are in its ignore list (16 bits). By hand: 0.5 + 2/32 bytes per expert weight.
    r = resolve_model("moonshotai/Kimi-K2-Thinking")
    assert r.checkpoint_quantization == "w4a16" and r.quantization_method == "compressed-tensors"
    assert r.arch.config["max_position_embeddings"] == 262144
    wb = weight_breakdown(r.arch, cfg(tensor_parallel_size=8, quantization="compressed-tensors"), r.checkpoint_quantization)
    experts = wb.components["moe_routed_experts"]
    assert experts.bytes_per_gpu == pytest.approx(experts.params_per_gpu * (0.5 + 2 / 32), rel=1e-6)
    attn = wb.components["attention"]
    assert attn.bytes_per_gpu == pytest.approx(attn.params_per_gpu * 2, rel=1e-6)
    shared = wb.components["moe_shared"]
    assert shared.bytes_per_gpu == pytest.approx(shared.params_per_gpu * 2, rel=1e-6)
    # same shapes as Kimi-K2-Instruct (the fp8 checkpoint): the INT4 one is lighter
    k2 = resolve_model("moonshotai/Kimi-K2-Instruct")
    wk2 = weight_breakdown(k2.arch, cfg(tensor_parallel_size=8), k2.checkpoint_quantization)
    assert wb.params_total == wk2.params_total and wb.bytes_per_gpu < 0.65 * wk2.bytes_per_gpu


def test_unknown_model_error_stays_one_line_with_a_suggestion():
    with pytest.raises(UnknownModelError) as e:
        resolve_model("zai-org/GLM-9.9-Turbo")
    msg = str(e.value)
    assert "\n" not in msg and "nearest known models" in msg and "GLM" in msg


def test_kimi_k2_total_is_the_published_count():
    # Hugging Face total of moonshotai/Kimi-K2-Instruct: 1,026,408,235,864 (the served layers; no MTP layer)
    assert abs(params("moonshotai/Kimi-K2-Instruct") - 1_026_408_235_864) < 1e-6 * 1_026_408_235_864


# --- Seed-OSS-36B (dense) and ERNIE-4.5-21B-A3B (MoE with its own expert keys) ------------------------------------

def test_seed_oss_36b_size_and_kv_by_hand():
    a = get_model("ByteDance-Seed/Seed-OSS-36B-Instruct")
    # model card: "36B"; a public engine test states "Seed-OSS-36B: 256 KiB of cache per token" (bf16):
    # 64 layers x 2 (K, V) x 8 KV heads x 128 x 2 bytes = 262,144
    assert abs(params("ByteDance-Seed/Seed-OSS-36B-Instruct") - 36e9) <= 0.5e9
    # a public model table gives 36,151,104,512 for the -Instruct, -Base and -Base-woSyn repos
    assert params("ByteDance-Seed/Seed-OSS-36B-Base-woSyn") == 36_151_104_512
    assert kv_bytes_per_token(a, cfg()) == 64 * 2 * 8 * 128 * 2 == 256 * 1024
    assert resolve_model("ByteDance-Seed/Seed-OSS-36B-Instruct-FP8").checkpoint_quantization == "fp8"


def test_ernie45_21b_counts_its_experts():
    # "21.8B in all" (public planner test for this config); model card: 21B total, 3B activated per token.
    # By hand: tied embedding 103424 x 2560; 28 attention blocks (q 2560x2560, k/v 2560x512, o 2560x2560);
    # layer 0 dense MLP 3 x 2560 x 12288; 27 MoE layers of 64 experts x 3 x 2560 x 1536, 2 shared experts
    # (one MLP of 3072), a 64 x 2560 router and its 64-element correction bias; 2 norms per layer + final norm.
    h = 2560
    by_hand = (103424 * h + 28 * (2 * h * h + 2 * h * 512) + 3 * h * 12288
               + 27 * (64 * 3 * h * 1536 + 3 * h * 3072 + 64 * h + 64) + 28 * 2 * h + h)
    assert params("baidu/ERNIE-4.5-21B-A3B-PT") == by_hand
    assert abs(by_hand - 21.8e9) < 0.05e9
    # 28 layers x 2 x 4 KV heads x 128 x 2 bytes (bf16)
    assert kv_bytes_per_token(get_model("baidu/ERNIE-4.5-21B-A3B-PT"), cfg()) == 28 * 2 * 4 * 128 * 2


def test_ernie45_is_a_moe_for_the_cost_model():
    from sched_reader.models.cost.error_bands import model_kind
    from sched_reader.models.cost.shapes import model_shapes

    a = get_model("baidu/ERNIE-4.5-21B-A3B-PT")
    assert model_kind(a) == "moe"
    moe = [g for g in model_shapes(a, 1).groups if g.moe is not None]
    assert sum(g.count for g in moe) == 27                      # layers 1..27 (moe_layer_start_index 1)
    assert all(g.moe.top_k == 6 and g.moe.num_experts == 64 for g in moe)


def test_llama4_fine_tunes_keep_their_expert_count():
    # "17B" is the active size of both Llama-4 lines: the expert count in the name ("16E" / "128E") decides
    r = resolve_model("acme/Llama-4-Scout-17B-16E-Instruct-abliterated")
    assert r.arch.id == "meta-llama/Llama-4-Scout-17B-16E-Instruct" and r.guessed
    r = resolve_model("acme/Llama-4-Maverick-17B-128E-Instruct-abliterated")
    assert r.arch.id == "meta-llama/Llama-4-Maverick-17B-128E-Instruct" and r.guessed
    with pytest.raises(UnknownModelError):
        resolve_model("acme/llama-4-17b-64e")


# --- Qwen3.5 MoE (397B-A17B, 122B-A10B), Qwen3-VL 235B / 32B / 8B / 2B, GLM-5, Kimi-K2.5 ------------------------

def _text_and_vision(name: str) -> tuple[int, int]:
    r = resolve_model(name)
    wb = weight_breakdown(r.arch, cfg(), None)
    vision = wb.components["vision"].params_per_gpu
    return wb.params_total - vision, vision


@pytest.mark.parametrize("vl, text_model", [
    ("Qwen/Qwen3-VL-235B-A22B-Instruct", "Qwen/Qwen3-235B-A22B"),   # published total 235,093,634,560
    ("Qwen/Qwen3-VL-32B-Instruct", "Qwen/Qwen3-32B"),               # 32,762,123,264
    ("Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-8B"),                 # 8,190,735,360
])
def test_qwen3_vl_text_models_are_the_published_qwen3_totals(vl, text_model):
    # the VL checkpoints' language models have the Qwen3 text shapes: their count must hit the Qwen3 published total
    text, vision = _text_and_vision(vl)
    assert text == get_model(text_model).official_params
    assert 0.40e9 < vision < 0.43e9          # the 27-layer 1152-wide ViT + merger of Qwen3-VL (~0.42B)


def test_qwen3_vl_2b_is_the_tied_qwen3_1_7b_text_model():
    # Qwen3-1.7B published total 2,031,739,904 counts its tied lm_head as a second copy (151936 x 2048)
    text, _ = _text_and_vision("Qwen/Qwen3-VL-2B-Instruct")
    assert text + 151936 * 2048 == 2_031_739_904


@pytest.mark.parametrize("name, total_b, full_layers", [
    ("Qwen/Qwen3.5-397B-A17B", 397, 15),     # model card: 397B total, 17B active; 60 layers, every 4th full
    ("Qwen/Qwen3.5-122B-A10B", 122, 12),     # model card: 122B total, 10B active; 48 layers
])
def test_qwen35_moe_sizes_and_kv_by_hand(name, total_b, full_layers):
    assert abs(params(name) - total_b * 1e9) <= 0.6e9               # the card's whole-billion rounding
    # only the full-attention layers cache K/V: layers x 2 x 2 KV heads x 256 x 2 bytes (bf16)
    assert kv_bytes_per_token(get_model(name), cfg()) == full_layers * 2 * 2 * 256 * 2
    assert resolve_model(name + "-FP8").checkpoint_quantization == "fp8"


def test_glm5_total_is_main_plus_its_mtp_layer():
    # Published total of zai-org/GLM-5 (and GLM-5.1): 753,864,139,008 = the served model + one MTP layer, by hand:
    h = 6144
    mla = (h * 2048 + 2048 + 2048 * 64 * (192 + 64) + h * (512 + 64) + 512 + 512 * 64 * (192 + 256)
           + 64 * 256 * h)                                         # q_a, q_a_norm, q_b, kv_a, kv_a_norm, kv_b, o
    indexer = 2048 * 32 * 128 + h * 128 + h * 32 + 2 * 128          # wq_b, wk, weights_proj, k_norm
    moe = 256 * 3 * h * 2048 + 3 * h * 2048 + 256 * h + 256         # routed, shared, router + correction bias
    mtp = mla + indexer + moe + 2 * h + 2 * h * h + 3 * h           # + layer norms, eh_proj, enorm/hnorm/head norm
    assert params("zai-org/GLM-5") + mtp == 753_864_139_008
    assert params("zai-org/GLM-5.1") == params("zai-org/GLM-5")


def test_glm5_kv_is_sparse_mla_with_the_indexer():
    a = get_model("zai-org/GLM-5")
    assert a.is_sparse_mla
    # 78 layers x (576 x 2 bytes bf16 latent + 132-byte indexer key); fp8 -> fp8_ds_mla 656 bytes
    assert kv_bytes_per_token(a, cfg()) == 78 * (1152 + 132)
    assert kv_bytes_per_token(a, cfg(kv_cache_dtype="fp8")) == 78 * (656 + 132)


def test_kimi_k25_keeps_k2_shapes_with_int4_experts():
    r = resolve_model("moonshotai/Kimi-K2.5")
    assert r.checkpoint_quantization == "w4a16"
    k2 = resolve_model("moonshotai/Kimi-K2-Instruct")
    text, vision = _text_and_vision("moonshotai/Kimi-K2.5")
    assert text == weight_breakdown(k2.arch, cfg(), None).params_total
    assert 0.3e9 < vision < 0.6e9            # 27-layer 1152-wide MoonViT (~0.4B) + projector, estimated


def test_kimi_256k_repos_default_to_their_stated_context():
    # vLLM: a yarn model's derived max_model_len = original_max_position_embeddings (4096) x factor;
    # the -0905 / -Thinking / K2.5 model cards state a 256K (262,144-token) context, K2-Instruct 128K
    from sched_reader.models.spec_builder import derived_max_model_len

    for name in ("moonshotai/Kimi-K2-Instruct-0905", "moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2.5"):
        assert derived_max_model_len(resolve_model(name).arch.config) == 262144, name
    assert derived_max_model_len(resolve_model("moonshotai/Kimi-K2-Instruct").arch.config) == 131072


def test_glm52_builds_indexers_only_where_vllm_does():
    # vLLM (deepseek_v2.py IndexCache): layer i has its own indexer when max(i - 3 + 1, 0) % 4 == 0 for GLM-5.2
    # (index_topk_freq 4, index_skip_topk_offset 3); the config's indexer_types lists the same 21 "full" layers
    a = get_model("zai-org/GLM-5.2")
    built = [i for i in range(78) if a.has_indexer(i)]
    assert built == [i for i, t in enumerate(a.config["indexer_types"]) if t == "full"] and len(built) == 21
    indexer = 2048 * 32 * 128 + 6144 * 128 + 6144 * 32 + 2 * 128
    # published totals: GLM-5 753,864,139,008 and GLM-5.2 753,329,940,480 differ by exactly the 57 skipped indexers
    assert 753_864_139_008 - 753_329_940_480 == 57 * indexer
    assert params("zai-org/GLM-5") - params("zai-org/GLM-5.2") == 57 * indexer
    # KV: 78 latents, 21 indexer keys; one KV group whose page is the sum of the layers' pages
    assert kv_bytes_per_token(a, cfg()) == 78 * 1152 + 21 * 132
    from sched_reader.models.kv_cache import kv_capacity
    r = kv_capacity(a, cfg(block_size=64), [10 * 2**30])
    assert r.num_blocks == 10 * 2**30 // (64 * (78 * 1152 + 21 * 132))


def test_minimax_m27_is_m25_with_its_own_context():
    # M2.7's config.json (aiconfigurator copy) has M2.5's shapes; its published total equals M2's (228,689,764,864)
    a, b = resolve_model("MiniMaxAI/MiniMax-M2.7").arch, resolve_model("MiniMaxAI/MiniMax-M2.5").arch
    assert a.config["max_position_embeddings"] == 204800
    assert weight_breakdown(a, cfg()).params_total == weight_breakdown(b, cfg()).params_total


def test_ernie45_300b_total_and_active_match_the_name():
    # model card / repo name: 300B total, 47B activated (A47B): 51 MoE layers route to 8 of 64 experts of 3584
    total = params("baidu/ERNIE-4.5-300B-A47B-PT")
    assert abs(total - 300e9) / 300e9 < 0.01
    h = 8192
    routed_all = 51 * 64 * 3 * h * 3584
    active = total - routed_all + 51 * 8 * 3 * h * 3584
    assert abs(active - 47e9) < 0.5e9


def test_granite_4_h_small_total_kv_and_active():
    # published total 32,207,337,984 (debaditc/kvfit models.json num_params): reproduced to the element only with
    # the shared MLP (3 x 4096 x 1536 per layer) counted
    assert params("ibm-granite/granite-4.0-h-small") == 32_207_337_984
    a = get_model("ibm-granite/granite-4.0-h-small")
    # only the 4 attention layers cache K/V: 4 x 2 x 8 KV heads x 128 x 2 bytes
    assert kv_bytes_per_token(a, cfg()) == 4 * 2 * 8 * 128 * 2
    # model card: 9B active (10 of 72 experts of 768 in each of the 40 layers)
    active = 32_207_337_984 - 40 * 72 * 3 * 4096 * 768 + 40 * 10 * 3 * 4096 * 768
    assert abs(active - 9e9) < 0.5e9


@pytest.mark.parametrize("gpu, backend, mla_bytes", [
    ("H200", "FLASHMLA_SPARSE", 656),            # the layer turns fp8 into fp8_ds_mla (vLLM 0.19.0 mla_attention.py)
    ("B200", "FLASHINFER_MLA_SPARSE", 576),      # "Using standard fp8 KV cache format": a 576-byte fp8 latent
])
def test_deepseek_v32_fp8_cache_layout_follows_the_sparse_backend(run_cli, gpu, backend, mla_bytes):
    code, out, err = run_cli("diagnose", "--gpu", gpu, "--vllm", "0.19.0", "-f", "json", "--", "vllm", "serve",
                             "deepseek-ai/DeepSeek-V3.2", "-tp", "8", "--kv-cache-dtype", "fp8")
    assert code in (0, 1), err
    assert f'"sparse_mla_backend": "{backend}"' in out
    assert f'"bytes_per_token": {61 * (mla_bytes + 132)}' in out


@pytest.mark.parametrize("name, model_id, scheme", [
    ("nvidia/DeepSeek-R1-0528-FP4-V2", "deepseek-ai/DeepSeek-V3", "nvfp4"),        # InferenceX B200 runs
    ("amd/DeepSeek-R1-0528-MXFP4-Preview", "deepseek-ai/DeepSeek-V3", "mxfp4"),    # InferenceX MI355X runs
    ("nvidia/Qwen3.5-397B-A17B-NVFP4-V2", "Qwen/Qwen3.5-397B-A17B", "nvfp4"),
    ("nvidia/Kimi-K2.6-NVFP4", "moonshotai/Kimi-K2.5", "nvfp4"),
])
def test_quantized_repos_with_a_release_tag_after_the_format(name, model_id, scheme):
    r = resolve_model(name)
    assert r.arch.id.startswith(model_id) and r.checkpoint_quantization == scheme and not r.guessed


def test_a_version_tag_alone_is_not_a_quantized_name():
    assert resolve_model("mistralai/Mistral-7B-v0.1").checkpoint_quantization is None
    with pytest.raises(UnknownModelError):
        resolve_model("acme/foo-v2")


def test_amd_quark_mxfp4_weights_fp8_activations_name():
    # "w-mxfp4-a-fp8": MXFP4 weights (the weight bytes), FP8 activations; not an FP8-weight checkpoint
    r = resolve_model("amd/gpt-oss-120b-w-mxfp4-a-fp8")
    assert r.arch.id == "openai/gpt-oss-120b" and r.checkpoint_quantization == "mxfp4" and not r.guessed


def test_nemotron3_nano_total_and_kv():
    # published total 31,577,937,344; the count here adds the 23 MoE layers' e_score_correction_bias (128 each),
    # which that total does not hold
    assert params("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16") == 31_577_937_344 + 23 * 128
    # 6 attention layers x 2 x 2 KV heads x 128 x 2 bytes; Mamba layers keep state, not per-token KV
    assert kv_bytes_per_token(get_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"), cfg()) == 6 * 2 * 2 * 128 * 2
    assert resolve_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8").checkpoint_quantization == "fp8"


@pytest.mark.parametrize("derivative, base", [
    ("nvidia/DeepSeek-R1-FP4", "deepseek-ai/DeepSeek-R1"),          # native block FP8 -> NVFP4
    ("nvidia/MiniMax-M2.5-NVFP4", "MiniMaxAI/MiniMax-M2.5"),        # native block FP8 -> NVFP4
])
def test_nvfp4_requantization_of_a_natively_fp8_model_weighs_nvfp4(derivative, base):
    # the base repository's quantization_config (FP8, 1 byte + a fp32 scale per 128 x 128 block) describes the
    # base's files, not NVIDIA's NVFP4 checkpoint: NVFP4 holds 0.5 byte + one FP8 scale per 16 weights =
    # 0.5625 byte, so the quantized layers weigh 0.5625 / (1 + 4 / 16384) = 0.5624x, and the 16-bit
    # embeddings / lm_head and norms, unchanged, pull the whole-model ratio slightly above that
    d, b = resolve_model(derivative), resolve_model(base)
    assert d.checkpoint_quantization == "nvfp4" and d.arch.quantization_config is None
    assert b.arch.quantization_config is not None      # the base keeps its own
    wd = weight_breakdown(d.arch, cfg(tensor_parallel_size=8), d.checkpoint_quantization)
    wb = weight_breakdown(b.arch, cfg(tensor_parallel_size=8), b.checkpoint_quantization)
    assert wd.weight_format == "nvfp4" and wb.weight_format == "fp8"
    assert 0.5624 < wd.bytes_per_gpu / wb.bytes_per_gpu < 0.60
