"""Model catalog: configs checked against official parameter totals, and every name form deploy files use."""

from __future__ import annotations

import json

import pytest

from sched_reader.errors import EXIT_ERROR, InputError, UnknownModelError
from sched_reader.models.model_catalog import (
    get_model,
    list_models,
    nearest_model_ids,
    resolve_model,
)


# --- parameter counts: configs vs Hugging Face safetensors.total -----------------------------------

def test_llama_31_8b_param_count_by_hand():
    c = get_model("meta-llama/Llama-3.1-8B").config
    h, inter, layers, heads, kv, vocab = (c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"],
                                          c["num_attention_heads"], c["num_key_value_heads"], c["vocab_size"])
    head_dim = h // heads                                  # 128
    embed = vocab * h                                      # 128256 x 4096 = 525,336,576
    lm_head = vocab * h                                    # untied
    attn = h * heads * head_dim + 2 * h * kv * head_dim + heads * head_dim * h   # q, k, v, o
    mlp = 3 * h * inter                                    # gate, up, down
    norms = 2 * h                                          # input + post-attention RMSNorm
    total = embed + lm_head + layers * (attn + mlp + norms) + h   # + final norm
    assert total == 8_030_261_248                          # HF safetensors.total for Llama-3.1-8B
    assert get_model("meta-llama/Llama-3.1-8B").official_params == 8_030_261_248


def _dense_params(c: dict) -> int:
    """Decoder-only dense/MoE (non-MLA) parameter count written for this test from the HF module layout."""
    h, layers, heads = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    kv = c.get("num_key_value_heads") or heads
    hd = c.get("head_dim") or h // heads
    tied = c.get("tie_word_embeddings", False)
    total = c["vocab_size"] * h * (1 if tied else 2) + h
    attn = h * heads * hd + 2 * h * kv * hd + heads * hd * h
    experts = c.get("num_local_experts") or c.get("num_experts") or 0
    if experts:
        ffn = experts * 3 * h * (c.get("moe_intermediate_size") or c["intermediate_size"]) + h * experts
    else:
        ffn = 3 * h * c["intermediate_size"]
    return total + layers * (attn + ffn + 2 * h)


# (model id, extra params per layer the layout adds, why) -- checked against safetensors.total
@pytest.mark.parametrize(
    "model_id, per_layer_extra",
    [
        ("microsoft/phi-4", lambda c: 0),
        ("mistralai/Mistral-7B-v0.3", lambda c: 0),
        ("mistralai/Mixtral-8x7B-v0.1", lambda c: 0),
        ("meta-llama/Llama-3.1-405B", lambda c: 0),
        ("Qwen/Qwen2.5-7B", lambda c: c["num_attention_heads"] * 128 + 2 * c["num_key_value_heads"] * 128),  # qkv bias
        ("Qwen/Qwen3-14B", lambda c: 2 * c["head_dim"]),                       # q_norm + k_norm
        ("Qwen/Qwen3-30B-A3B", lambda c: 2 * c["head_dim"]),
        ("google/gemma-2-9b", lambda c: 2 * c["hidden_size"]),                 # 4 norms per layer
        ("google/gemma-2-2b-it", lambda c: 2 * c["hidden_size"]),
    ],
)
def test_catalog_configs_reproduce_official_totals(model_id, per_layer_extra):
    arch = get_model(model_id)
    computed = _dense_params(arch.config) + arch.config["num_hidden_layers"] * per_layer_extra(arch.config)
    assert computed == arch.official_params


def test_gemma3_12b_text_plus_vision_is_official_total():
    arch = get_model("google/gemma-3-12b-it")
    c = arch.config
    text = _dense_params(c) + c["num_hidden_layers"] * (2 * c["hidden_size"] + 2 * c["head_dim"])
    assert text == 11_766_034_176
    # Gemma 3 tech report: the 12B vision encoder is ~417M; the rest is the projector
    assert 0.40e9 < arch.official_params - text < 0.43e9


def test_every_catalog_entry_is_sourced_and_complete():
    models = list_models()
    assert len(models) >= 38
    for m in models:
        assert m.source.startswith("https://huggingface.co/"), m.id
        for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"):
            assert key in m.config, (m.id, key)


def test_hybrid_moe_and_mla_keys_are_kept():
    oss = get_model("openai/gpt-oss-120b").config
    assert oss["layer_types"].count("sliding_attention") == 18 and oss["sliding_window"] == 128
    assert oss["quantization_config"]["quant_method"] == "mxfp4"
    g3 = get_model("google/gemma-3-12b-it")
    assert g3.config["sliding_window_pattern"] == 6 and g3.vision_config["num_hidden_layers"] == 27
    kimi = get_model("moonshotai/Kimi-VL-A3B-Instruct")
    assert kimi.is_mla and kimi.config["kv_lora_rank"] + kimi.config["qk_rope_head_dim"] == 576
    assert kimi.vision_config["model_type"] == "moonvit"
    assert get_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506").vision_config["model_type"] == "pixtral"


def test_mistral_small_kv_bytes_match_the_vllm_log():
    # llm-d-benchmark: vLLM 0.11.0 logged 28.20 GiB for 184,832 tokens = 163,840 bytes/token (bf16)
    a = get_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506")
    assert a.num_layers * 2 * a.num_kv_heads * a.head_dim * 2 == 163_840


# --- name resolution --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name, model_id, quant, method",
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B", None, None),
        ("META-LLAMA/llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B", None, None),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B", None, None),
        ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "fp8", "fp8"),
        ("deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-V3", "fp8", "fp8"),
        ("openai/gpt-oss-120b", "openai/gpt-oss-120b", "mxfp4", "mxfp4"),
        ("hf://Qwen/Qwen3-32B", "Qwen/Qwen3-32B", None, None),
        ("Qwen2-7B-Instruct", "Qwen/Qwen2-7B-Instruct", None, None),     # bare repo name (served local dir)
        # quantized derivatives -> base architecture + checkpoint quantization
        ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "meta-llama/Llama-3.3-70B-Instruct", "fp8", "compressed-tensors"),
        ("RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", "meta-llama/Llama-3.3-70B-Instruct", "fp8", "compressed-tensors"),
        ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "meta-llama/Llama-3.1-8B", "w4a16", "compressed-tensors"),
        ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", "meta-llama/Llama-3.1-8B", "w8a8", "compressed-tensors"),
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct", "awq", "awq"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen/Qwen2.5-7B-Instruct", "gptq", "gptq"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen/Qwen2.5-7B-Instruct", "gptq_int8", "gptq"),
        ("Qwen/Qwen3-32B-FP8", "Qwen/Qwen3-32B", "fp8", "fp8"),
        ("nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B", "fp8", "modelopt"),
        ("nvidia/Llama-3.3-70B-Instruct-NVFP4", "meta-llama/Llama-3.3-70B-Instruct", "nvfp4", "modelopt_fp4"),
        ("meta-llama/Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.1-405B", "fp8", "fbgemm_fp8"),
        ("someorg/Qwen3-14B-w8a8", "Qwen/Qwen3-14B", "w8a8", "compressed-tensors"),
        ("someorg/Qwen3-14B-Int8", "Qwen/Qwen3-14B", "w8a8", "compressed-tensors"),
        # KubeAI url: hf:// prefix + neuralmagic FP8 (kubeai__llama-3.1-405b-instruct-fp8-h100.yaml)
        ("hf://neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.1-405B", "fp8", "compressed-tensors"),
        ("hf://neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "meta-llama/Llama-3.1-70B", "fp8", "compressed-tensors"),
    ],
)
def test_name_forms(name, model_id, quant, method):
    r = resolve_model(name)
    assert r.arch.id == model_id
    assert (r.checkpoint_quantization, r.quantization_method) == (quant, method)
    assert r.guessed is False


@pytest.mark.parametrize(
    "name, model_id",
    [
        ("/models/Qwen2-7B-Instruct", "Qwen/Qwen2-7B-Instruct"),
        ("/models/TinyLlama--TinyLlama-1.1B-Chat-v1.0", "TinyLlama/TinyLlama-1.1B-Chat-v1.0"),   # compose fixture
        ("s3://bucket/llm/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),
        ("/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B", "Qwen/Qwen3-8B"),
        ("someone/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),    # re-upload under another org
    ],
)
def test_paths_and_lookalikes_are_guessed(name, model_id):
    r = resolve_model(name)
    assert r.arch.id == model_id
    assert r.guessed is True and r.note


@pytest.mark.parametrize(
    "name",
    [   # every model named in calibration/kv_logs.yaml, throughput.yaml and the deploy fixtures
        "deepseek-ai/DeepSeek-V2-Lite-Chat", "google/gemma-2-9b-it", "google/gemma-3-12b-it",
        "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct",
        "microsoft/phi-4", "mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
        "moonshotai/Kimi-VL-A3B-Instruct", "openai/gpt-oss-20b", "openai/gpt-oss-120b", "Qwen/Qwen2-7B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-32B",
        "nvidia/Llama-3.1-8B-Instruct-FP8", "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16",
        "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", "deepseek-ai/DeepSeek-R1-0528",
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "Qwen/Qwen2.5-3B-Instruct", "meta-llama/Llama-3.2-3B-Instruct",
        "google/gemma-2-2b-it", "meta-llama/Llama-3.2-1B", "mistralai/Mistral-7B-Instruct-v0.2",
        "Qwen/Qwen3-VL-4B-Instruct", "hf://Qwen/Qwen2-0.5B-Instruct", "h2oai/h2ogpt-4096-llama2-7b-chat",
        "Qwen/Qwen2.5-VL-7B-Instruct",
    ],
)
def test_calibration_and_fixture_models_resolve(name):
    assert resolve_model(name).arch is not None


def test_unknown_model_names_three_nearest():
    with pytest.raises(UnknownModelError) as exc:
        resolve_model("Qwen/Qwen3-15B")
    err = exc.value
    assert err.exit_code == EXIT_ERROR and err.key == "model"
    near = nearest_model_ids("Qwen/Qwen3-15B")
    assert len(near) == 3 and "Qwen/Qwen3-14B" in near
    assert all(mid in err.hint for mid in near)


@pytest.mark.parametrize("bad", ["", "   ", "config-model", "$MODEL", "/mnt/models", None])
def test_unresolvable_names_raise_user_errors(bad):
    with pytest.raises(UnknownModelError):
        resolve_model(bad)  # type: ignore[arg-type]


# --- --model-config PATH ------------------------------------------------------------------------

def test_model_config_flattens_text_config(tmp_path):
    cfg = {
        "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "torch_dtype": "bfloat16",
        "mm_tokens_per_image": 256,
        "text_config": {"model_type": "gemma3_text", "hidden_size": 64, "intermediate_size": 128,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "head_dim": 16, "vocab_size": 1000, "sliding_window": 32},
        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32},
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
    }
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    r = resolve_model("my-private-model", model_config_path=str(tmp_path))
    a = r.arch
    assert a.id == "my-private-model"
    assert (a.model_type, a.hidden_size, a.num_kv_heads, a.head_dim) == ("gemma3_text", 64, 2, 16)
    assert a.torch_dtype == "bfloat16" and a.config["sliding_window"] == 32
    assert a.vision_config == {"model_type": "siglip_vision_model", "hidden_size": 32}
    assert "text_config" not in a.config and "vision_config" not in a.config
    assert a.multimodal == {"mm_tokens_per_image": 256}
    assert (r.checkpoint_quantization, r.quantization_method) == ("fp8", "fp8")
    assert r.quantization_config["weight_block_size"] == [128, 128]


def test_model_config_file_path_and_compressed_tensors(tmp_path):
    cfg = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "vocab_size": 100, "intermediate_size": 128,
           "quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {
               "weights": {"num_bits": 4, "type": "int", "symmetric": True, "group_size": 128},
               "input_activations": None}}}}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    r = resolve_model("x", model_config_path=str(f))
    assert (r.checkpoint_quantization, r.quantization_method) == ("w4a16", "compressed-tensors")


def test_local_directory_name_reads_its_config(tmp_path):
    d = tmp_path / "Qwen2-7B-Instruct"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "qwen2", "hidden_size": 8, "num_hidden_layers": 1,
                                               "num_attention_heads": 2, "vocab_size": 10}))
    r = resolve_model(str(d))
    assert r.arch.hidden_size == 8 and r.guessed is False   # the file wins over the catalog


def test_gpt2_style_keys_are_mapped(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "gpt2", "n_embd": 768, "n_layer": 6, "n_head": 12, "n_positions": 1024, "vocab_size": 50257}))
    r = resolve_model("distilbert/distilgpt2", model_config_path=str(tmp_path))
    assert (r.arch.hidden_size, r.arch.num_layers, r.arch.num_attention_heads) == (768, 6, 12)
    assert "n_embd" in r.note


@pytest.mark.parametrize(
    "content, fragment",
    [("{not json", "not valid JSON"), ("[1, 2]", "JSON object"), ('{"model_type": "llama"}', "lacks")],
)
def test_bad_model_config_is_a_user_error(tmp_path, content, fragment):
    f = tmp_path / "config.json"
    f.write_text(content)
    with pytest.raises(InputError) as exc:
        resolve_model("x", model_config_path=str(f))
    assert fragment in str(exc.value) and exc.value.file == str(f)


def test_missing_model_config_is_a_user_error(tmp_path):
    with pytest.raises(InputError):
        resolve_model("x", model_config_path=str(tmp_path / "nope"))


def test_instruct_variant_keeps_its_own_context_length():
    # Qwen2.5-7B base config.json: max_position_embeddings 131072; the Instruct repo: 32768
    assert resolve_model("Qwen/Qwen2.5-7B").arch.config["max_position_embeddings"] == 131072
    inst = resolve_model("Qwen/Qwen2.5-7B-Instruct").arch
    assert (inst.id, inst.config["max_position_embeddings"]) == ("Qwen/Qwen2.5-7B-Instruct", 32768)
    awq = resolve_model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert awq.arch.config["max_position_embeddings"] == 32768 and awq.checkpoint_quantization == "awq"
    assert resolve_model("/models/Qwen2.5-72B-Instruct").arch.config["max_position_embeddings"] == 32768


# --- widened catalog: popular deployments ------------------------------------------------------

def _tool_params(name: str) -> int:
    """Parameter count sched-reader's weight counter computes for a catalog model (whole model)."""
    from sched_reader.models.engine_spec import EffectiveConfig
    from sched_reader.models.weights import weight_breakdown

    cfg = EffectiveConfig(vllm_version="0.19.0", max_model_len=8192, gpu_memory_utilization=0.9,
                          dtype="bfloat16", max_num_seqs=1024, max_num_batched_tokens=8192,
                          enable_chunked_prefill=True, enable_prefix_caching=True)
    return weight_breakdown(resolve_model(name).arch, cfg).params_total


@pytest.mark.parametrize(
    "name, official",
    [   # HF safetensors.total (public copies cited in models.yaml), counts: main
        ("Qwen/Qwen2.5-0.5B-Instruct", 494_032_768),
        ("Qwen/Qwen2.5-1.5B-Instruct", 1_543_714_304),
        ("Qwen/Qwen2.5-14B-Instruct", 14_770_033_664),
        ("Qwen/Qwen3-4B", 4_022_468_096),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 1_777_088_000),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", 7_615_616_512),   # Qwen2.5-7B tensor shapes
        ("Qwen/QwQ-32B", 32_763_876_352),                              # Qwen2.5-32B tensor shapes
        ("mistralai/Mistral-Nemo-Instruct-2407", 12_247_782_400),
        ("google/gemma-3-1b-it", 999_885_952),
        ("microsoft/Phi-4-mini-instruct", 3_836_021_760),
    ],
)
def test_added_models_tool_count_matches_official_total(name, official):
    computed = _tool_params(name)
    assert abs(computed - official) / official < 0.01, (name, computed, official)
    assert computed == official        # these layouts are exact
    assert resolve_model(name).arch.official_params == official   # alias variants carry the base total


@pytest.mark.parametrize("name", ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B"])
def test_small_qwen3_checkpoints_store_the_tied_head_twice(name):
    # HF safetensors.total counts lm_head.weight although tie_word_embeddings is true
    a = resolve_model(name).arch
    assert a.official_params_counts == "main + tied_lm_head_copy"
    assert _tool_params(name) + a.vocab_size * a.hidden_size == a.official_params


def test_gemma3_4b_text_plus_vision_is_official_total():
    arch = get_model("google/gemma-3-4b-it")
    c = arch.config
    text = _dense_params(c) + c["num_hidden_layers"] * (2 * c["hidden_size"] + 2 * c["head_dim"])
    # SigLIP-So400m tower (~417M, Gemma 3 report) + projector
    assert 0.40e9 < arch.official_params - text < 0.43e9
    assert _tool_params("google/gemma-3-4b-it") == arch.official_params


def test_llama4_scout_count_within_one_percent():
    # 48 MoE layers x (16 routed + 1 shared expert of 3 x 5120 x 8192) + attention + 2 x 202048 x 5120
    # embeddings = 107.77B; the official 108.64B also holds the vision tower the catalog does not carry
    official = get_model("meta-llama/Llama-4-Scout-17B-16E-Instruct").official_params
    assert abs(_tool_params("meta-llama/Llama-4-Scout-17B-16E-Instruct") - official) / official < 0.01


@pytest.mark.parametrize(
    "name, layers, kv_heads, head_dim",
    [
        ("Qwen/Qwen2.5-0.5B-Instruct", 24, 2, 64),
        ("Qwen/Qwen2.5-14B-Instruct", 48, 8, 128),
        ("Qwen/Qwen3-0.6B", 28, 8, 128),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 28, 2, 128),
        ("Qwen/QwQ-32B", 64, 8, 128),
        ("mistralai/Mistral-Nemo-Instruct-2407", 40, 8, 128),
        ("google/gemma-3-1b-it", 26, 1, 256),
        ("microsoft/Phi-4-mini-instruct", 32, 8, 128),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 48, 8, 128),
    ],
)
def test_added_models_kv_bytes_per_token(name, layers, kv_heads, head_dim):
    a = resolve_model(name).arch
    # hand formula: K and V x layers x kv_heads x head_dim x 2 bytes (bf16), full attention every layer
    assert a.num_layers * 2 * a.num_kv_heads * a.head_dim * 2 == 2 * layers * kv_heads * head_dim * 2


@pytest.mark.parametrize(
    "name, model_id, quant, method",
    [
        ("Qwen/Qwen2.5-72B-Instruct-AWQ", "Qwen/Qwen2.5-72B-Instruct", "awq", "awq"),
        ("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", "Qwen/Qwen2.5-72B-Instruct", "gptq", "gptq"),
        ("Qwen/Qwen2.5-14B-Instruct-AWQ", "Qwen/Qwen2.5-14B-Instruct", "awq", "awq"),
        ("Qwen/Qwen2.5-32B-Instruct-GPTQ-Int8", "Qwen/Qwen2.5-32B-Instruct", "gptq_int8", "gptq"),
        ("Qwen/QwQ-32B-AWQ", "Qwen/QwQ-32B", "awq", "awq"),
        ("Qwen/Qwen3-0.6B-FP8", "Qwen/Qwen3-0.6B", "fp8", "fp8"),
        ("Qwen/Qwen3-235B-A22B-Thinking-2507-FP8", "Qwen/Qwen3-235B-A22B-Thinking-2507", "fp8", "fp8"),
        ("neuralmagic/Qwen2.5-7B-Instruct-FP8-dynamic", "Qwen/Qwen2.5-7B-Instruct", "fp8", "compressed-tensors"),
        ("nvidia/Llama-3.3-70B-Instruct-FP8", "meta-llama/Llama-3.3-70B-Instruct", "fp8", "modelopt"),
        ("RedHatAI/Mistral-Nemo-Instruct-2407-FP8", "mistralai/Mistral-Nemo-Instruct-2407", "fp8", "compressed-tensors"),
        ("nvidia/Llama-4-Scout-17B-16E-Instruct-FP8", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "fp8", "modelopt"),
        ("RedHatAI/gemma-3-4b-it-quantized.w4a16", "google/gemma-3-4b-it", "w4a16", "compressed-tensors"),
    ],
)
def test_quantized_derivatives_of_added_models(name, model_id, quant, method):
    r = resolve_model(name)
    assert r.arch.id == model_id
    assert (r.checkpoint_quantization, r.quantization_method) == (quant, method)
    assert r.guessed is False


def test_variant_context_and_rope_follow_the_alias():
    qwq = resolve_model("Qwen/QwQ-32B").arch
    assert (qwq.config["max_position_embeddings"], qwq.config["sliding_window"]) == (131072, 32768)
    d7 = resolve_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B").arch
    assert d7.config["rope_theta"] == 10000 and d7.vocab_size == 152064
    assert resolve_model("Qwen/Qwen2.5-14B-Instruct").arch.config["max_position_embeddings"] == 32768
    assert resolve_model("Qwen/Qwen3-30B-A3B-Base").arch.config["max_position_embeddings"] == 32768
    t = resolve_model("Qwen/Qwen3-235B-A22B-Thinking-2507").arch
    assert (t.config["max_position_embeddings"], t.config["rope_theta"]) == (262144, 5000000.0)
    assert resolve_model("mistralai/Mistral-Nemo-Instruct-2407").arch.config["max_position_embeddings"] == 1024000
    # R1 distill 1.5B is untied (Qwen2.5-Math base), unlike Qwen2.5-1.5B
    assert resolve_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B").arch.config["tie_word_embeddings"] is False


def test_llama3_and_community_quantized_names_resolve():
    # Meta-Llama-3-8B: 8K context, no rope scaling (its config.json), unlike Llama-3.1-8B's 131072
    r = resolve_model("meta-llama/Meta-Llama-3-8B-Instruct")
    assert r.arch.config["max_position_embeddings"] == 8192
    # community AWQ copies drop Meta's "-hf" suffix and use other casings
    r = resolve_model("TheBloke/Llama-2-7B-Chat-AWQ")
    assert r.arch.id == "meta-llama/Llama-2-7b-hf" and r.checkpoint_quantization == "awq"
    r = resolve_model("casperhansen/llama-3-70b-instruct-awq")
    assert r.arch.id == "meta-llama/Meta-Llama-3-70B" and r.checkpoint_quantization == "awq"
