"""The Tesla T4's GEMM fraction (models/data/fallback_efficiency.yaml, family turing, sku nvidia-t4-16gb).

Independent inputs, written out here by hand:
  NVIDIA developer forum "About GPU peak performance" (forums.developer.nvidia.com/t/264462): cuBLAS FP16 GEMM
    4096 x 4096 x 4096 averaged over 100 iterations on a Tesla T4 reaches ~24 TFLOPS; NVIDIA's answer there:
    power capping at the board's ~70 W, expected for approximately continuous matrix multiplies.
  The T4 datasheet's FP16 tensor peak: 65 TFLOPS (catalog gpus.yaml).
  The H100-anchored default of efficiency.py: gemm_compute 0.60.
The H100 SXM fraction at the same shape (M = 4096 tokens, 4096 x 4096 weights) is recomputed from NVIDIA's
measured kernel table (kernel_efficiency.json), not copied from the YAML.
"""

from __future__ import annotations

from functools import partial

import pytest
from helpers import effective_config

from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.efficiency import DEFAULT_EFFICIENCY, efficiency_for
from sched_reader.models.cost.kernels import efficiency_at, gemm_efficiency_curve
from sched_reader.models.gpu_catalog import get_gpu, resolve_gpu

T4_FP16_MEASURED_TFLOPS = 24.0     # forum measurement, sustained 4096^3 cuBLAS FP16 GEMM
T4_FP16_PEAK_TFLOPS = 65.0         # datasheet

cfg = partial(effective_config, vllm_version="0.8.4", dtype="float16", max_num_seqs=256)

# Qwen3-4B's config.json (huggingface.co/Qwen/Qwen3-4B): the shapes of the corpus's T4 rows
QWEN3_4B = ModelArch(id="Qwen/Qwen3-4B", model_type="qwen3", config=dict(
    hidden_size=2560, intermediate_size=9728, num_hidden_layers=36, num_attention_heads=32,
    num_key_value_heads=8, head_dim=128, vocab_size=151936, tie_word_embeddings=True, torch_dtype="bfloat16"))


def test_t4_fp16_fraction_is_the_forum_measurement_scaled_to_the_h100_default():
    h100 = efficiency_at(gemm_efficiency_curve("H100 SXM5 80GB", "bf16", 4096, 4096), 4096)
    assert h100 == pytest.approx(0.789, abs=1e-3)
    t4 = efficiency_for(resolve_gpu("T4").gpu)
    assert t4.family == "turing"
    expected = 0.60 * (T4_FP16_MEASURED_TFLOPS / T4_FP16_PEAK_TFLOPS) / h100    # 0.281
    assert t4.gemm_fraction("fp16") == pytest.approx(expected, rel=3e-3)
    # only the GEMM term was measured: the memory and attention fractions stay the H100-anchored defaults
    assert (t4.memory_bandwidth, t4.kv_read_bandwidth, t4.attention_compute) == (0.80, 0.50, 0.50)


def test_geforce_turing_is_not_power_capped_like_the_t4():
    # 250 W board: no measurement transfers, the defaults object itself
    assert efficiency_for(resolve_gpu("RTX 2080 Ti").gpu) is DEFAULT_EFFICIENCY


def test_t4_prompt_step_runs_its_gemms_at_the_sustained_rate():
    m = IterationCostModel(QWEN3_4B, get_gpu("nvidia-t4-16gb"), cfg())
    b = m.breakdown(0, 0, 4096, 4096 * 4096 / 2.0, 1)
    mlp = b.terms["mlp"]
    # 4096 tokens x 36 layers x 3 x 2560 x 9728 params x 2 FLOPs, compute-bound at 65 TFLOPS x 0.281
    flops = 4096 * 36 * 3 * 2560 * 9728 * 2
    assert mlp.flops == pytest.approx(flops)
    assert mlp.bound == "compute"
    assert mlp.time_s == pytest.approx(flops / (65e12 * 0.281), rel=1e-6)
    # i.e. no faster than the forum's sustained 24 TFLOPS scaled by the default's serving allowance (0.60 / 0.789)
    assert flops / mlp.time_s <= T4_FP16_MEASURED_TFLOPS * 1e12 * 0.60 / 0.789 * 1.001
    assert "turing family" in mlp.source
