"""Any model, any GPU: names the catalog lacks, local configs, GPU specs, and max-model-len clipping.

Independent sources per test: published config.json keys (Gemma 3 text_config omitting vocab_size ->
Gemma3TextConfig default 262,208), nvidia-smi's CSV format, hand arithmetic written in the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sched_reader.errors import InputError, UnknownGPUError, UnknownModelError
from sched_reader.models.gpu_catalog import resolve_gpu
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.name_match import name_key

DATA = Path(__file__).resolve().parents[1] / "data"
GIB = 2**30


# --- names as people write them -------------------------------------------------------------------

@pytest.mark.parametrize("name, family, version, size, active, modality", [
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen", "3", 30.0, 3.0, None),
    ("Qwen/Qwen2.5-Coder-14B-Instruct-AWQ", "qwen", "2.5", 14.0, None, None),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "qwen", None, 32.0, None, None),   # distill target's family
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "llama", "3.2", 11.0, None, "vl"),
    ("openai/gpt-oss-20b", "gpt-oss", None, 20.0, None, None),                         # "-20" is a size, not a version
    ("Qwen/Qwen2-0.5B-Instruct", "qwen", "2", 0.5, None, None),
    ("mistralai/Mixtral-8x7B-v0.1", "mixtral", None, 56.0, None, None),                # experts x size
])
def test_name_key(name, family, version, size, active, modality):
    k = name_key(name)
    assert (k.family, k.size_b, k.active_b, k.modality) == (family, size, active, modality)
    if family != "mixtral":
        assert k.version == version


@pytest.mark.parametrize("name, arch_id", [
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),   # catalog alias (262k positions)
    ("moonshotai/Kimi-Dev-72B", "Qwen/Qwen2.5-72B"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "Qwen/Qwen2.5-14B"),
    ("acme/qwen2.5-7b-sft-v2", "Qwen/Qwen2.5-7B"),                                  # family + version + size
    ("acme/Llama-3.1-8B-Instruct-abliterated", "meta-llama/Llama-3.1-8B"),
])
def test_derivative_names_resolve(name, arch_id):
    assert resolve_model(name).arch.id == arch_id


@pytest.mark.parametrize("name", ["mistralai/Devstral-Small-2507", "mistralai/Devstral-Small-2505",
                                  "mistralai/Magistral-Small-2509", "unsloth/Magistral-Small-2506-GGUF"])
def test_mistral_small_tier_names_resolve_to_the_24b_text_shape(name):
    # No size in the name: Mistral's "Small" tier from YYMM 2501 on is the 24B Mistral-Small-3 decoder
    # (model cards: Devstral / Magistral "finetuned from Mistral-Small-3.1", 24B parameters).
    k = name_key(name)
    assert (k.family, k.size_b) == ("mistral", 24.0)
    r = resolve_model(name)
    assert r.arch.id == "mistralai/Mistral-Small-24B-Instruct-2501" and r.guessed
    assert "assumed architecture of mistralai/Mistral-Small-24B-Instruct-2501" in r.note
    assert not r.arch.vision_config                       # text-only: no Pixtral tower weights counted
    c = r.arch.config
    # KV bytes per token by hand: 40 layers x 2 (K, V) x 8 KV heads x 128 head_dim x 2 bytes = 163,840
    # (the figure vLLM logs for Mistral-Small-3.2: 28.20 GiB / 184,832 tokens, llm-d-benchmark)
    assert c["num_hidden_layers"] * 2 * c["num_key_value_heads"] * c["head_dim"] * 2 == 163840


def test_mistral_tier_version_keeps_a_vision_fine_tune_on_its_base():
    # "Mistral-Small-3.2" names the vision-language release: its fine-tunes keep the Pixtral tower
    assert name_key("acme/Mistral-Small-3.2-24B-Instruct-2506-sft").version == "3.2"
    assert resolve_model("acme/Mistral-Small-3.2-24B-Instruct-2506-sft").arch.id == \
        "mistralai/Mistral-Small-3.2-24B-Instruct-2506"
    assert name_key("mistralai/Mistral-Small-Instruct-2409").size_b == 22.0   # the older 22B Small
    assert name_key("acme/small-model-2599").size_b is None                   # month 99 is no date code


def test_pixtral_is_the_mistral_nemo_decoder():
    # Pixtral-12B: a Pixtral ViT in front of the Mistral-NeMo-12B decoder (40 layers, 8 KV heads of 128)
    r = resolve_model("mistralai/Pixtral-12B-2409")
    assert r.arch.id == "mistralai/Mistral-Nemo-Instruct-2407" and r.guessed


def test_a_hybrid_family_is_not_mapped_onto_a_dense_model_by_size():
    # the catalog knows Nemotron-H only as Mamba-2 hybrids; a dense model of the same size (Llama-3.3-70B,
    # Qwen2.5-72B) would put KV on every layer where Nemotron-H-47B has a few attention layers: refused with a hint
    # (Nemotron-Nano-12B-v2, the earlier example here, is now in the catalog)
    with pytest.raises(UnknownModelError) as exc:
        resolve_model("nvidia/Nemotron-H-47B-Base-8K")
    assert "--model-config" in exc.value.hint


def test_family_match_is_named_as_an_assumption():
    r = resolve_model("acme/qwen2.5-7b-sft-v2")
    assert r.guessed and "assumed architecture of Qwen/Qwen2.5-7B" in r.note and "--model-config" in r.note


def test_quantized_family_match_keeps_the_weight_format():
    r = resolve_model("someorg/Llama-3.1-8B-Instruct-finetune-AWQ")
    assert r.arch.id == "meta-llama/Llama-3.1-8B" and r.checkpoint_quantization == "awq"


def test_a_size_the_family_lacks_is_not_taken_from_another_family():
    with pytest.raises(UnknownModelError):
        resolve_model("Qwen/Qwen3-15B")      # catalog has Qwen3 models, none of 15B (phi-4 is 14.7B: not used)


# --- configs found offline ------------------------------------------------------------------------

def test_gemma3_text_config_without_vocab_size_reads(tmp_path):
    d = tmp_path / "gemma-3-4b-it"
    d.mkdir()
    (d / "config.json").write_text((DATA / "hf_configs" / "gemma-3-4b-it.config.json").read_text())
    r = resolve_model(str(d))
    c = r.arch.config
    assert c["vocab_size"] == 262208             # Gemma3TextConfig default (the text_config omits it)
    assert c["num_attention_heads"] == 8 and c["num_key_value_heads"] == 4 and c["head_dim"] == 256
    assert c["hidden_size"] == 2560 and c["num_hidden_layers"] == 34 and c["sliding_window"] == 1024
    assert r.arch.vision_config["num_hidden_layers"] == 27
    assert "vocab_size=262208" in r.note


def test_hf_cache_snapshot_is_used(tmp_path, monkeypatch):
    repo = tmp_path / "hub" / "models--acme--tiny-qwen"
    snap = repo / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    cfg = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 896, "num_hidden_layers": 24,
           "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
           "torch_dtype": "bfloat16", "tie_word_embeddings": True, "max_position_embeddings": 32768}
    (snap / "config.json").write_text(json.dumps(cfg))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    r = resolve_model("acme/tiny-qwen")
    assert r.arch.config["hidden_size"] == 896 and "Hugging Face cache" in r.note


# --- any GPU ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, gpu_id", [
    ("NVIDIA GB10", "nvidia-gb10-128gb"),
    ("DGX Spark GB10", "nvidia-gb10-128gb"),        # the product name before the chip, as the issue writes it
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "nvidia-rtx-pro-6000-blackwell-96gb"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "nvidia-rtx-pro-6000-blackwell-96gb"),
    ("NVIDIA RTX A5000", "nvidia-rtx-a5000-24gb"),
    ("NVIDIA GeForce RTX 4080", "nvidia-rtx-4080-16gb"),
    ("AMD Radeon RX 9070 XT", "amd-rx-9070-xt-16gb"),
    ("AMD Instinct MI355X", "amd-mi355x-288gb"),
    ("AMD Instinct MI250X/MI250", "amd-mi250x-64gb"),
    ("NVIDIA H800", "nvidia-h800-sxm-80gb"),
    ("NVIDIA A800-SXM4-80GB", "nvidia-a800-sxm4-80gb"),
    ("NVIDIA L20", "nvidia-l20-48gb"),
    ("NVIDIA H100 NVL", "nvidia-h100-nvl-94gb"),
    ("NVIDIA H100 PCIe", "nvidia-h100-pcie-80gb"),
    ("Jetson AGX Orin", "nvidia-jetson-agx-orin-64gb"),
    ("jetson-thor", "nvidia-jetson-thor-128gb"),
])
def test_more_gpus_resolve(name, gpu_id):
    assert resolve_gpu(name).gpu.id == gpu_id


def test_pytorch_totals_from_public_logs():
    # "GPU 0 has a total capacity of 94.97 GiB" (RTX PRO 6000 Blackwell OOM message); RTX 4090 from vLLM issue
    # 13061's own log: total_gpu_memory x 0.98 = 23.08 GiB -> 23.55 GiB
    assert round(resolve_gpu("RTX PRO 6000").gpu.cuda_total_gib, 2) == 94.97
    assert round(resolve_gpu("RTX 4090").gpu.cuda_total_gib, 2) == 23.55
    assert round(23.08 / 0.98, 2) == 23.55


def test_unknown_gpu_with_memory_in_its_name_is_answered_with_assumptions():
    r = resolve_gpu("NVIDIA RTX 7000 Future 64GB")
    assert r.guessed and r.gpu.memory_bytes == 64 * GIB
    assert r.gpu.cuda_total_bytes < r.gpu.memory_bytes and r.gpu.cuda_total_inferred
    assert "assumed" in r.note and "--gpu-spec" in r.note


def test_unknown_gpu_without_memory_gives_a_one_line_hint():
    with pytest.raises(UnknownGPUError) as exc:
        resolve_gpu("Mystery Accelerator X")
    assert "--gpu-spec FILE" in exc.value.hint and "\n" not in str(exc.value)


def test_nvidia_smi_csv(tmp_path):
    f = tmp_path / "gpus.csv"
    f.write_text("name, memory.total [MiB]\nNVIDIA Fancy GPU, 49152 MiB\nNVIDIA Fancy GPU, 49152 MiB\n")
    r = resolve_gpu(str(f))
    assert r.gpu.name == "NVIDIA Fancy GPU" and r.gpu.memory_bytes == 49152 * 2**20 and r.guessed


def test_nvidia_smi_csv_of_a_catalog_gpu_is_the_catalog_entry(tmp_path):
    f = tmp_path / "smi.csv"
    f.write_text("name, memory.total [MiB]\nNVIDIA H100 80GB HBM3, 81559 MiB\n")
    r = resolve_gpu(str(f))
    assert r.gpu.id == "nvidia-h100-sxm5-80gb" and not r.guessed


def test_gpu_spec_yaml(tmp_path):
    f = tmp_path / "gpu.yaml"
    f.write_text("name: Lab GPU\nmemory_gib: 48\ncuda_total_gib: 47.5\nhbm_bandwidth_tb_s: 1.2\n"
                 "tflops: {bf16: 300, fp16: 300}\ninterconnect: pcie\n")
    r = resolve_gpu(str(f))
    g = r.gpu
    assert g.memory_bytes == 48 * GIB and round(g.cuda_total_gib, 2) == 47.5 and g.hbm_bandwidth_tb_s == 1.2
    assert g.tflops["bf16"] == 300 and g.interconnect == "pcie"


@pytest.mark.parametrize("text, needle", [
    ("name: X\n", "memory_gib"),
    ("name: X\nmemory_gib: -4\n", "memory_gib"),
    ("name: X\nmemory_gib: 48\ntflops: 12\n", "tflops"),
    ("- a\n- b\n", "mapping"),
])
def test_bad_gpu_spec_is_one_line(tmp_path, text, needle):
    f = tmp_path / "gpu.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as exc:
        resolve_gpu(str(f))
    assert needle in str(exc.value) and "\n" not in str(exc.value)


# --- max-model-len below the default prompt -----------------------------------------------------

def test_max_model_len_below_default_prompt_is_clipped_not_an_error(run_cli):
    code, out, err = run_cli("diagnose", "--gpu", "H100", "--vllm", "0.19.0", "--", "vllm", "serve",
                             "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "512")
    assert code == 0, err
    # 512 tokens: output 512 // 8 = 64, prompt 512 - 64 = 448
    assert "workload clipped to fit max_model_len 512" in out and "448 in / 64 out" in out


def test_memory_in_a_name_is_not_read_from_a_model_number():
    r = resolve_gpu("NVIDIA L40G 48GB")          # "40G" is part of the model number, 48GB is the memory
    assert round(r.gpu.memory_gib) == 48


def test_nominal_memory_takes_the_same_class_gpus_exact_totals():
    r = resolve_gpu("Tesla V100-SXM3-32GB")     # 32 GB marketing = 32510 MiB on the V100 32GB boards
    assert r.gpu.memory_bytes == 32510 * 2**20 and round(r.gpu.cuda_total_gib, 2) == 31.75


def test_hf_cache_snapshot_path_as_model_name():
    r = resolve_model("/root/.cache/huggingface/hub/models--meta-llama--Meta-Llama-3.1-8B-Instruct/snapshots/0e9e39f2")
    assert r.arch.id == "meta-llama/Llama-3.1-8B" and r.guessed


def test_fine_tune_lines_keep_their_base_shapes():
    # Vicuna v1.5 / CodeLlama / DeepSeek-Coder v1 7B checkpoints are LlamaForCausalLM with Llama-2-7B's
    # 32 x 4096 multi-head layout; Zephyr-7B is a Mistral-7B fine-tune
    for name in ("lmsys/vicuna-7b-v1.5", "meta-llama/CodeLlama-7b-hf", "deepseek-ai/deepseek-coder-6.7b-instruct"):
        assert resolve_model(name).arch.id == "meta-llama/Llama-2-7b-hf", name
    assert resolve_model("HuggingFaceH4/zephyr-7b-beta").arch.id.startswith("mistralai/Mistral-7B")


def test_glm45_air_is_the_published_106b():
    from sched_reader.models.engine_spec import EffectiveConfig
    from sched_reader.models.weights import weight_breakdown

    r = resolve_model("zai-org/GLM-4.5-Air-FP8")
    assert r.arch.id == "zai-org/GLM-4.5-Air" and r.checkpoint_quantization == "fp8"
    e = EffectiveConfig(vllm_version="0.19.0", max_model_len=8192, gpu_memory_utilization=0.9, dtype="bfloat16",
                        max_num_seqs=256, max_num_batched_tokens=8192, enable_chunked_prefill=True,
                        enable_prefix_caching=True)
    total = weight_breakdown(r.arch, e).params_total
    assert 106.0e9 < total < 107.5e9          # model card: 106B total parameters (12B active)
