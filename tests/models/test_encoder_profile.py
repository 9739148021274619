"""The V1 multimodal encoder profile (memory_profile.encoder_profile_bytes), by hand and against a real log."""

from __future__ import annotations

from pathlib import Path

import pytest

from sched_reader.analyzers.explain_log import explain
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.memory_profile import encoder_profile_bytes, mm_item_geometry
from sched_reader.readers.vllm_log import parse_log, read_log_text

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
GIB = 2**30


def _eff(argv: str, vllm: str = "0.23.0", gpu: str = "A100 80GB"):
    [spec] = build_specs([], argv.split(), gpu=gpu, vllm=vllm)
    return spec.arch, spec.effective


def test_qwen25_vl_video_item_by_hand():
    # Qwen2.5-VL-7B vision tower (config.json vision_config): hidden 1280, intermediate 3420, SwiGLU MLP,
    # patch 14, temporal patch 2, 2 x 2 merge. max_model_len 128000 -> 7 frame pairs of 16384 tokens = 114688
    # tokens (the vLLM 0.23.0 log prints "a budget of 114688 tokens, and profiled with 1 video items").
    arch, eff = _eff("vllm serve Qwen/Qwen2.5-VL-7B-Instruct")
    fwd, cache, info = encoder_profile_bytes(arch, eff, 2)
    assert info["modality"] == "video" and info["items"] == 1 and info["tokens_per_item"] == 114688
    patches = 114688 * 4
    per_patch = 2 * 1280 + max(4 * 1280, 3 * 3420)            # residual + normed + gate_up + act
    pixels = patches * (3 * 2 * 14 * 14) * (4 + 2)             # fp32 pixel_values + bf16 copy
    assert fwd == patches * per_patch * 2 + pixels
    assert cache == 114688 * 3584 * 2                          # encoder outputs at the text hidden size


def test_short_context_profiles_one_image():
    arch, eff = _eff("vllm serve Qwen/Qwen2.5-VL-7B-Instruct --max-model-len 16384")
    geo = mm_item_geometry(arch, eff.max_model_len)
    assert (geo["modality"], geo["tokens"], geo["patches"]) == ("image", 16384, 65536)


@pytest.mark.parametrize("flag", ["--skip-mm-profiling", "--limit-mm-per-prompt {\"image\":0,\"video\":0}"])
def test_profiling_off(flag):
    arch, eff = _eff("vllm serve Qwen/Qwen2.5-VL-7B-Instruct " + flag)
    assert encoder_profile_bytes(arch, eff, 2)[:2] == (0, 0)


def test_video_off_leaves_the_image():
    arch, eff = _eff('vllm serve Qwen/Qwen2.5-VL-7B-Instruct --limit-mm-per-prompt {"video":0}')
    assert encoder_profile_bytes(arch, eff, 2)[2]["tokens_per_item"] == 16384


def test_gemma3_images_fill_the_budget():
    # Gemma 3: 256 tokens per 896 px image (4096 SigLIP patches); budget max(8192, 256) on H100 -> 32 images
    arch, eff = _eff("vllm serve google/gemma-3-12b-it", vllm="0.19.0", gpu="H100")
    _, cache, info = encoder_profile_bytes(arch, eff, 2)
    assert info["items"] == eff.max_num_batched_tokens // 256
    assert info["patches"] == info["items"] * 4096
    assert cache == info["items"] * 256 * 3840 * 2


@pytest.mark.parametrize("vllm, rows", [("0.11.0", 8192), ("0.11.2", 8192), ("0.12.0", 256), ("0.10.2", 256)])
def test_vllm_0_11_caches_every_dummy_item_at_the_whole_budget(vllm, rows):
    # vLLM 0.11.0-0.11.2 profile_run: "if encoder_output_shape[0] < encoder_budget:" each output is copied into
    # new_zeros((encoder_budget, hidden)); 0.12.0 compares with the item's own placeholder count instead.
    # Gemma 3 on H100: budget 8192, 32 images of 256 tokens, text hidden 3840, bf16.
    arch, eff = _eff("vllm serve google/gemma-3-12b-it", vllm=vllm, gpu="H100")
    _, cache, info = encoder_profile_bytes(arch, eff, 2)
    assert (info["encoder_budget"], info["items"], info["cached_rows_per_item"]) == (8192, 32, rows)
    assert cache == 32 * rows * 3840 * 2          # 0.11.x: 2,013,265,920 B = 1.875 GiB; else 62,914,560 B


def test_video_profile_log_kv_within_1_5_gib():
    """vLLM 0.23.0, A100-SXM4-80GB, gmu 0.22, max_model_len 128000: 'Available KV cache memory: -14.28 GiB'.
    Without the video encoder profile the prediction was -1.0 GiB."""
    name = "repo-qwen25vl-7b-a100-v0230-video-profile.log"
    ex = explain(parse_log(read_log_text(LOGS / name), name))
    kv = next(r for r in ex.memory if r.name == "kv_cache")
    assert kv.logged == pytest.approx(-14.28)
    assert abs(kv.predicted - kv.logged) <= 1.5


def test_llava_next_items_match_the_log():
    # vLLM 0.10.2 log (tests/data/logs/repo-vlmvllm-...): "Encoder cache will be initialized with a budget of
    # 16384 tokens, and profiled with 5 image items of the maximum feature size." Largest item: the 336 px base
    # tile + a 2 x 2 grid: 576 + 48 x 48 + 48 = 2,928 tokens; 16384 // 2928 = 5.
    arch, eff = _eff("vllm serve llava-hf/llava-v1.6-mistral-7b-hf --max-model-len 4096 --max-num-batched-tokens 16384",
                     vllm="0.10.2", gpu="H100")
    _, cache, info = encoder_profile_bytes(arch, eff, 2)
    assert (info["tokens_per_item"], info["items"], info["encoder_budget"]) == (2928, 5, 16384)
    assert info["patches"] == 5 * 5 * 577                      # 5 items x (base + 4 grid tiles) x 577 CLIP patches
    assert cache == 5 * 2928 * 4096 * 2


@pytest.mark.parametrize("name, budget, items, modality", [
    ("repo-vlmvllm-llava-next-mistral-7b-h100-v0102.log", 16384, 5, "image"),
    ("repo-qwen25vl-7b-a100-v0230-video-profile.log", 114688, 1, "video"),
])
def test_explain_log_lays_the_logged_encoder_profile_beside_the_prediction(name, budget, items, modality):
    facts = parse_log(read_log_text(LOGS / name), name)
    assert (facts.encoder_budget.value, facts.encoder_items.value, facts.encoder_modality) == (budget, items, modality)
    rows = {r.name: r for r in explain(facts).kv}
    assert rows["encoder_budget"].predicted == budget and rows["encoder_items"].predicted == items


def test_malformed_vision_config_leaves_the_encoder_out(tmp_path):
    # non-numeric widths, a zero patch: no encoder profile and no vision weights, never an exception
    cfg = tmp_path / "config.json"
    cfg.write_text('{"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl", '
                   '"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, '
                   '"num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768, '
                   '"vision_config": {"model_type": "qwen2_5_vl", "depth": 32, "hidden_size": "x", "patch_size": 0}}')
    [spec] = build_specs([], "vllm serve acme/vl".split(), gpu="L4", vllm="0.19.0", model_config=str(cfg))
    assert mm_item_geometry(spec.arch, 32768) is None
    assert encoder_profile_bytes(spec.arch, spec.effective, 2)[:2] == (0, 0)


def test_flashinfer_sampler_default_from_0_21_where_the_gpu_supports_it():
    from sched_reader.models.gpu_catalog import resolve_gpu
    from sched_reader.models.memory_profile import sampler_path

    _, eff = _eff("vllm serve meta-llama/Llama-3.1-8B-Instruct", vllm="0.23.0", gpu="A100 80GB")
    assert sampler_path(eff, resolve_gpu("A100 80GB").gpu)[0].startswith("flashinfer")
    # compute capability 7.5 falls back ("unsupported compute capability 7.5; falling back")
    assert sampler_path(eff, resolve_gpu("T4").gpu)[0].startswith("triton")
    # an explicit VLLM_USE_FLASHINFER_SAMPLER=0 (or the log's fallback line) wins
    assert sampler_path(eff.model_copy(update={"flashinfer_sampler": False}), resolve_gpu("A100 80GB").gpu)[0] \
        .startswith("triton")
    _, old = _eff("vllm serve meta-llama/Llama-3.1-8B-Instruct", vllm="0.19.0", gpu="H100")
    assert sampler_path(old, resolve_gpu("H100").gpu)[0].startswith("triton")
