"""Real Hugging Face config.json files (tests/data/hf_configs/, verbatim, source per file in the README there)
read through the path the CLI uses (``--model-config FILE``), checked against facts sourced apart from the code:

* the parameter count against the model card's published total (tolerance: 1%, the catalog tests' tolerance,
  or the rounding of the published figure when the card rounds to whole billions: "27B" is +-0.5B);
* KV bytes per token by hand: full-attention layers x KV heads (per TP rank) x head dim x 2 (K and V) x 2 bytes
  (bf16); hybrid layers (Mamba-2, Gated DeltaNet) and MLP-only / MoE-only blocks hold no per-token KV;
* the recurrent state per sequence of the hybrids by hand (vLLM ``get_mamba_state_shape_from_config``);
* ``sched-reader diagnose --model-config FILE`` answers (exit 0, no traceback) for every file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from sched_reader.models import hybrid
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import weight_breakdown

HF = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
BF16 = 2


@dataclass(frozen=True)
class Case:
    file: str
    name: str                 # the name a user serves it under
    tp: int                   # tensor parallel size for the CLI run (H200, 141 GB)
    published: int            # published total parameters
    rel_tol: float            # 1%, or the rounding of the published figure
    kv_per_token_rank: int    # hand: attention layers x KV heads per rank x head dim x 2 x 2 bytes
    model_type: str
    quantization: str | None = None


CASES = [
    # model card: "Number of Parameters: 235B in total and 22B activated"; fp8 block-128 checkpoint
    Case("Qwen3-235B-A22B-FP8", "Qwen/Qwen3-235B-A22B-FP8", 8, 235_000_000_000, 0.01,
         94 * (4 // 4) * 128 * 2 * BF16, "qwen3_moe", "fp8"),      # 4 KV heads over TP 8: one per rank
    # model card: "30.5B in total and 3.3B activated"
    Case("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B-Instruct-2507", 1, 30_500_000_000, 0.01,
         48 * 4 * 128 * 2 * BF16, "qwen3_moe"),
    # model.safetensors.index.json of the same checkpoint: total_size 61,064,245,248 bytes of bf16 = 30,532,122,624
    Case("Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-30B-A3B-Instruct", 1, 61_064_245_248 // 2, 0.0,
         48 * 4 * 128 * 2 * BF16, "qwen3_moe"),
    # the text model has the Qwen3-30B-A3B shapes (checked exactly below); card: 31B-class with the ViT
    Case("Qwen3-VL-30B-A3B-Instruct", "Qwen/Qwen3-VL-30B-A3B-Instruct", 1, 30_500_000_000 + 420_000_000, 0.02,
         48 * 4 * 128 * 2 * BF16, "qwen3_vl_moe_text"),
    # model card: "27B"; 16 of 64 layers full attention (4 KV heads of 256), 48 Gated DeltaNet
    Case("Qwen3.5-27B", "Qwen/Qwen3.5-27B", 1, 27_000_000_000, 0.5 / 27 + 0.001,
         16 * 4 * 256 * 2 * BF16, "qwen3_5_text"),
    # model card: "35B in total and 3B activated"; 10 of 40 layers full attention (2 KV heads of 256)
    Case("Qwen3.5-35B-A3B", "Qwen/Qwen3.5-35B-A3B", 1, 35_000_000_000, 0.5 / 35 + 0.001,
         10 * 2 * 256 * 2 * BF16, "qwen3_5_moe_text"),
    # Qwen3.6-27B (NVIDIA ModelOpt mixed FP8 / NVFP4 checkpoint): the Qwen3.5-27B shapes, "27B"
    Case("Qwen3.6-27B-NVFP4", "nvidia/Qwen3.6-27B-NVFP4", 1, 27_000_000_000, 0.5 / 27 + 0.001,
         16 * 4 * 256 * 2 * BF16, "qwen3_5_text", "nvfp4"),
    # Qwen/Qwen3.6-35B-A3B card: "35B in total and 3B activated"; qwen3_5_moe shapes, 10 of 40 layers full attention
    Case("Qwen3.6-35B-A3B", "Qwen/Qwen3.6-35B-A3B", 1, 35_000_000_000, 0.5 / 35 + 0.001,
         10 * 2 * 256 * 2 * BF16, "qwen3_5_moe_text"),
    # MiniMax-M2 family card: ~230B total, ~10B active (M2.5: same MiniMaxM2ForCausalLM shapes); fp8 checkpoint
    Case("MiniMax-M2.5", "MiniMaxAI/MiniMax-M2.5", 8, 230_000_000_000, 0.01,
         62 * (8 // 8) * 128 * 2 * BF16, "minimax_m2", "fp8"),
    # Nemotron-H-56B: 10 attention layers (8 KV heads of 128) in a 118-layer M / - / * pattern
    Case("Nemotron-H-56B-Base-8K", "nvidia/Nemotron-H-56B-Base-8K", 8, 56_000_000_000, 0.01,
         10 * (8 // 8) * 128 * 2 * BF16, "nemotron_h"),
    # model card: 31.6B total (~3.2B active, 3.6B with embeddings); 6 attention layers (2 KV heads of 128)
    Case("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 1, 31_600_000_000, 0.01,
         6 * 2 * 128 * 2 * BF16, "nemotron_h"),
    # HF safetensors totals (catalog params_url): Qwen2.5-14B 14,770,033,664, Qwen2.5-32B 32,763,876,352; the shapes
    # Qwen2.5-Coder-14B / DeepSeek-R1-Distill-Qwen-14B and DeepSeek-R1-Distill-Qwen-32B / QwQ-32B are published with.
    # sliding_window 131072 with use_sliding_window false: every layer is full attention
    Case("Qwen2.5-14B", "Qwen/Qwen2.5-14B", 1, 14_770_033_664, 0.0, 48 * 8 * 128 * 2 * BF16, "qwen2"),
    Case("Qwen2.5-32B", "Qwen/Qwen2.5-32B", 1, 32_763_876_352, 0.0, 64 * 8 * 128 * 2 * BF16, "qwen2"),
    # Qwen2.5-Coder-14B model card: "Number of Parameters: 14.7B"; unsloth's re-upload of the checkpoint (their own
    # config.json, with pad_token_id / unsloth_fixed keys); the card truncates to 0.1B: [14.7B, 14.8B); 48 layers,
    # 8 KV heads of 5120 / 40 = 128
    Case("Qwen2.5-Coder-14B", "unsloth/Qwen2.5-Coder-14B", 1, 14_750_000_000, 0.05 / 14.75,
         48 * 8 * 128 * 2 * BF16, "qwen2"),
    # DeepSeek-R1-Distill-Qwen-32B: Hugging Face shows "32.8B params"; 64 layers, 8 KV heads of 128 over TP 2
    Case("DeepSeek-R1-Distill-Qwen-32B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", 2, 32_800_000_000,
         0.05 / 32.8 + 0.001, 64 * (8 // 2) * 128 * 2 * BF16, "qwen2"),
    # Llama-3.2-11B-Vision-Instruct: HF safetensors 10,670,220,835 (catalog params_url); a transformers 4.47 save
    # whose text_config / vision_config hold only non-default keys (the rest: Mllama*Config class defaults).
    # KV: vLLM pages all 40 decoder layers (32 self-attention + 8 cross-attention), 8 KV heads of 4096 / 32 = 128
    Case("Llama-3.2-11B-Vision-Instruct", "meta-llama/Llama-3.2-11B-Vision-Instruct", 1, 10_670_220_835, 0.0001,
         40 * 8 * 128 * 2 * BF16, "mllama_text_model"),
    # Qwen2.5-72B-Instruct: HF safetensors 72,706,203,648 (catalog params_url); Kimi-Dev-72B is published with these
    # shapes (a Qwen2.5-72B fine-tune); TP 4: 8 KV heads -> 2 per rank
    Case("Qwen2.5-72B-Instruct", "moonshotai/Kimi-Dev-72B", 4, 72_706_203_648, 0.0,
         80 * (8 // 4) * 128 * 2 * BF16, "qwen2"),
    # Hugging Face: 8.17B params; 40 layers, 8 KV heads of 4096 / 32 = 128
    Case("granite-3.3-8b-instruct", "ibm-granite/granite-3.3-8b-instruct", 1, 8_170_000_000, 0.01,
         40 * 8 * 128 * 2 * BF16, "granite"),
    # HF safetensors total 4,300,079,472 (main + vision tower + projector; catalog params_url); 34 layers, 4 KV x 256
    # (vLLM sizes the sliding-window layers' pages like the full ones: bytes per token counts all 34)
    Case("gemma-3-4b-it", "google/gemma-3-4b-it", 1, 4_300_079_472, 0.01,
         34 * 4 * 256 * 2 * BF16, "gemma3_text"),
]
IDS = [c.file for c in CASES]


def _path(c: Case) -> str:
    return str(HF / f"{c.file}.config.json")


def _cfg() -> EffectiveConfig:
    return EffectiveConfig(vllm_version="0.19.0", max_model_len=8192, gpu_memory_utilization=0.9, dtype="bfloat16",
                           max_num_seqs=256, max_num_batched_tokens=8192, enable_chunked_prefill=True,
                           enable_prefix_caching=True)


def test_every_file_in_the_folder_is_covered():
    assert {p.name.removesuffix(".config.json") for p in HF.glob("*.config.json")} == set(IDS)


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_reads_from_the_real_file(c):
    r = resolve_model(c.name, _path(c))
    assert not r.guessed and r.arch.model_type == c.model_type
    assert r.checkpoint_quantization == c.quantization


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_parameter_count_matches_the_published_total(c):
    total = weight_breakdown(resolve_model(c.name, _path(c)).arch, _cfg()).params_total
    assert abs(total - c.published) <= c.rel_tol * c.published, (c.file, total, c.published)


def test_qwen3_vl_text_model_is_exactly_the_qwen3_30b_a3b_checkpoint():
    # the published Qwen3-30B-A3B element count (bf16 index total_size / 2); the ViT is an estimate on top
    wb = weight_breakdown(resolve_model("Qwen/Qwen3-VL-30B-A3B-Instruct", _path(CASES[3])).arch, _cfg())
    assert wb.params_total - wb.components["vision"].params_total == 30_532_122_624


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_diagnose_answers_with_kv_bytes_per_token_by_hand(run_cli, c):
    code, out, err = run_cli("diagnose", "--model-config", _path(c), "--gpu", "H200", "--format", "json", "--",
                             "vllm", "serve", c.name, "--tensor-parallel-size", str(c.tp), "--max-model-len", "8192")
    assert code == 0, err
    assert "Traceback" not in err + out
    kv = json.loads(out)["engines"][0]["kv_cache"]
    assert kv["bytes_per_token"] == c.kv_per_token_rank
    assert kv["fits"] and kv["tokens"] > 0


def _state_bytes_per_sequence(name: str, file: str, vllm: tuple[int, int, int] = (0, 28, 0), tp: int = 1) -> int:
    arch = resolve_model(name, str(HF / f"{file}.config.json")).arch
    ssm = hybrid.resolved_ssm_dtype(arch, "auto", vllm)
    return sum(hybrid.state_bytes(arch, k, tp, BF16, ssm) for k in hybrid.layer_mixers(arch) if k != "attention")


def test_gated_deltanet_state_by_hand():
    # Qwen3.5-27B: linear 16 key heads x 128, 48 value heads x 128, conv kernel 4; mamba_ssm_dtype float32
    conv = (2 * 16 * 128 + 48 * 128) * (4 - 1) * BF16           # conv state, model dtype
    temporal = 48 * 128 * 128 * 4                               # recurrent state, float32
    assert _state_bytes_per_sequence("Qwen/Qwen3.5-27B", "Qwen3.5-27B") == 48 * (conv + temporal)
    # Qwen3.5-35B-A3B: 16 key heads, 32 value heads (x 128), 30 linear layers
    conv = (2 * 16 * 128 + 32 * 128) * 3 * BF16
    temporal = 32 * 128 * 128 * 4
    assert _state_bytes_per_sequence("Qwen/Qwen3.5-35B-A3B", "Qwen3.5-35B-A3B") == 30 * (conv + temporal)


def test_mamba2_state_by_hand_per_vllm_release():
    # Nemotron-H-56B: 54 Mamba-2 layers of 256 heads x 64, 8 groups, state 256, kernel 4; its config names no SSM
    # dtype, so vLLM's NemotronH hook picks the default: float16 (0.13-0.19, PR 29978), float32 (0.20+, PR 39032);
    # before 0.13 "auto" is the model dtype (bf16)
    conv = (256 * 64 + 2 * 8 * 256) * 3 * BF16
    ssm_elems = 256 * 64 * 256
    n56 = ("nvidia/Nemotron-H-56B-Base-8K", "Nemotron-H-56B-Base-8K")
    assert _state_bytes_per_sequence(*n56, vllm=(0, 12, 0)) == 54 * (conv + ssm_elems * 2)
    assert _state_bytes_per_sequence(*n56, vllm=(0, 19, 0)) == 54 * (conv + ssm_elems * 2)
    assert _state_bytes_per_sequence(*n56, vllm=(0, 20, 0)) == 54 * (conv + ssm_elems * 4)
    # Nemotron-3-Nano: 23 Mamba-2 layers of 64 heads x 64, 8 groups, state 128; its config says
    # mamba_ssm_cache_dtype float32, which the hook copies in from 0.13 on
    conv = (64 * 64 + 2 * 8 * 128) * 3 * BF16
    nano = ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert _state_bytes_per_sequence(*nano, vllm=(0, 19, 0)) == 23 * (conv + 64 * 64 * 128 * 4)
    assert _state_bytes_per_sequence(*nano, vllm=(0, 12, 0)) == 23 * (conv + 64 * 64 * 128 * BF16)


@pytest.mark.parametrize("vllm, block", [("0.19.0", 2080), ("0.20.0", 4128)])
def test_nemotron_h_hybrid_block_size_by_hand(run_cli, vllm, block):
    # TP 8: attention page per token and layer = 8/8 KV heads x 128 x 2 x 2 = 512 B; Mamba-2 page per layer =
    # conv (256*64/8 + 2*1*256) x 3 x 2 B = 15,360 + SSM 256/8 x 64 x 256 = 524,288 elements x 2 B (fp16, 0.19)
    # or x 4 B (fp32, 0.20+) -> ceil(1,063,936 / 512) = 2,078 -> 2,080 tokens; ceil(2,112,512 / 512) = 4,126 -> 4,128
    code, out, err = run_cli("diagnose", "--model-config", str(HF / "Nemotron-H-56B-Base-8K.config.json"), "--gpu",
                             "H200", "--vllm", vllm, "--format", "json", "--", "vllm", "serve",
                             "nvidia/Nemotron-H-56B-Base-8K", "--tensor-parallel-size", "8", "--max-model-len", "8192")
    assert code == 0, err
    assert json.loads(out)["engines"][0]["kv_cache"]["block_size"] == block


def test_nonfinite_number_in_a_real_config_is_read():
    # transformers writes "time_step_limit": [0.0, Infinity] (Nemotron-H); the file must not be refused
    r = resolve_model("nvidia/Nemotron-H-56B-Base-8K", str(HF / "Nemotron-H-56B-Base-8K.config.json"))
    assert r.arch.config["time_step_limit"][1] == float("inf")


def test_nemotron_moe_blocks_are_counted():
    # 23 'E' blocks x 128 squared-ReLU experts (up + down) of 1856 on a 2688-wide model: 29.37B of the 31.6B
    arch = resolve_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
                         str(HF / "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.config.json")).arch
    wb = weight_breakdown(arch, _cfg())
    assert wb.components["moe_routed_experts"].params_total == 23 * 128 * 2 * 2688 * 1856
    assert wb.components["moe_shared"].params_total == 23 * 2 * 2688 * 3712


def test_modelopt_mixed_precision_is_read_per_component():
    # Qwen3.6-27B-NVFP4 quantized_layers: q/k/v/o and linear_attn projections FP8, gate/up/down W4A16_NVFP4
    arch = resolve_model("nvidia/Qwen3.6-27B-NVFP4", str(HF / "Qwen3.6-27B-NVFP4.config.json")).arch
    wb = weight_breakdown(arch, _cfg())
    mlp = wb.components["mlp_dense"]
    attn = wb.components["attention"]
    assert mlp.params_total == 64 * 3 * 5120 * 17408                  # every layer: gated MLP of 17,408
    assert mlp.bytes_per_weight == pytest.approx(0.5 + 1 / 16)         # E2M1 + one FP8 scale per 16
    assert attn.bytes_per_weight == pytest.approx(1.0)                 # FP8


def test_mllama_vision_tower_by_hand_from_class_defaults():
    # the file's vision_config gives only image_size 560; MllamaVisionConfig defaults: hidden 1280, MLP 5120,
    # 32 local + 8 global layers, patch 14, 4 tiles, 8 aspect ratios, output 7680 (5 x 1280 + 1280)
    arch = resolve_model("meta-llama/Llama-3.2-11B-Vision-Instruct",
                         str(HF / "Llama-3.2-11B-Vision-Instruct.config.json")).arch
    hv, iv, pos = 1280, 5120, (560 // 14) ** 2 + 1                              # 1,601 positions (CLS + 40 x 40)
    layer = 4 * hv * hv + (hv * iv + iv) + (iv * hv + hv) + 2 * 2 * hv         # q/k/v/o, fc1, fc2, 2 LayerNorms
    encoder = 40 * layer + 8 * 2                                               # 2 gates per global layer
    embed = 3 * 14 * 14 * hv + hv + (pos * hv + 1) + 9 * 4 * pos * hv + 2 * (9 * 4 * hv + 1) + 2 * 2 * hv
    projector = 7680 * 4096 + 4096
    wb = weight_breakdown(arch, _cfg())
    assert wb.components["vision"].params_total == encoder + embed + projector == 895_028_755
    # the text model then misses only the 8 extra embedding rows and the cross-attention q/k norms and gates
    # (34,832 elements) of the published 10,670,220,835
    assert 0 < 10_670_220_835 - wb.params_total == 8 * 4096 + 8 * (2 * 128 + 2)
