"""Measured dense GEMMs on AMD Instinct GPUs (rocm_paths.gemm_curve, rocm_kernel_paths.yaml gemm_measured).

Independent figures, written out here by hand from AITER's tuning tables:
  github.com/ROCm/aiter 84493f0e5b aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv, gfx942 cu_num 304
  (MI300X), block-scale FP8: N 4608, K 7168 at M 1024: 100.64 us; N 7168, K 2048 at M 256: 20.26 us.
  github.com/ROCm/aiter 4fa508ef29 aiter/configs/bf16_tuned_gemm.csv, gfx950 cu_num 256 (MI355X), bf16:
  N 50016, K 6144 at M 1024: 642.18 us; N 128, K 6144 at M 64: 6.42 us.
  github.com/ROCm/aiter 9a41912018 aiter/configs/a4w4_blockscale_tuned_gemm.csv, gfx950 cu_num 256 (MI355X), MXFP4
  weights and activations: N 106496, K 16384 at M 1: 145.28 us.
Peaks (catalog): MI300X FP8 2614.9 TFLOPS, 5.3 TB/s; MI355X bf16 2516.6, MXFP4 10066.4 TFLOPS, 8.0 TB/s.
"""

from __future__ import annotations

import pytest
from helpers import effective_config

from sched_reader.models.cost.kernels import efficiency_at
from sched_reader.models.cost.rocm_paths import gemm_curve
from sched_reader.models.gpu_catalog import resolve_gpu

MI300X = resolve_gpu("MI300X").gpu
MI355X = resolve_gpu("MI355X").gpu
H100 = resolve_gpu("H100").gpu
WB_BLOCK = 1.0 + 4.0 / (128 * 128)   # FP8 + an fp32 scale per 128 x 128 block


def cfg(version: str, **env: str):
    return effective_config(vllm_version=version, rocm_env=dict(env))


def test_mi300x_block_fp8_reproduces_aiter_latency_with_aiter_on():
    c = gemm_curve(MI300X, cfg("0.9.1", VLLM_ROCM_USE_AITER="1"), "fp8_block", 4608, 7168, 2614.9e12, WB_BLOCK, 2.0)
    # roofline: FLOPs 2 x 1024 x 4608 x 7168 = 6.764e10 -> 25.87 us at 2614.9 TFLOPS (bytes: 57.1 MB -> 10.8 us)
    roof_us = 2 * 1024 * 4608 * 7168 / 2614.9e12 * 1e6
    assert roof_us / efficiency_at(c, 1024) == pytest.approx(100.64, rel=1e-3)
    assert "AITER" in c[2] and "cu_num 304" in c[2]


def test_mi300x_block_fp8_on_triton_is_the_measurement_over_the_published_2x():
    on = gemm_curve(MI300X, cfg("0.9.1", VLLM_ROCM_USE_AITER="1"), "fp8_block", 7168, 2048, 2614.9e12, WB_BLOCK, 2.0)
    off = gemm_curve(MI300X, cfg("0.9.1"), "fp8_block", 7168, 2048, 2614.9e12, WB_BLOCK, 2.0)
    old = gemm_curve(MI300X, cfg("0.8.5", VLLM_ROCM_USE_AITER="1"), "fp8_block", 7168, 2048, 2614.9e12, WB_BLOCK, 2.0)
    # 256 tokens: 20.26 us measured; AMD's AITER blog: the block-scale GEMM is 2x the Triton kernel it replaces
    roof_us = max(2 * 256 * 7168 * 2048 / 2614.9e12, (7168 * 2048 * WB_BLOCK + 2 * 256 * (7168 + 2048)) / 5.3e12) * 1e6
    assert roof_us / efficiency_at(on, 256) == pytest.approx(20.26, rel=1e-3)
    assert roof_us / efficiency_at(off, 256) == pytest.approx(2 * 20.26, rel=1e-3)
    assert efficiency_at(old, 256) == efficiency_at(off, 256)   # 0.8.5 has no AITER block GEMM at all
    # mid-M is far below the large-M fraction: 256 tokens reach < 0.25 of the roofline, 16,384 tokens > 0.3
    assert efficiency_at(on, 256) < 0.25 < 0.30 < efficiency_at(on, 16384)


def test_mi355x_bf16_reproduces_aiter_latency_on_unique_sizes():
    big = gemm_curve(MI355X, cfg("0.10.2"), "bf16", 50016, 6144, 2516.6e12, 2.0, 2.0)
    fl_us = 2 * 1024 * 50016 * 6144 / 2516.6e12 * 1e6                       # 250.1 us compute roofline
    by_us = (50016 * 6144 * 2 + 2 * 1024 * (50016 + 6144)) / 8.0e12 * 1e6   # 91.2 us
    assert max(fl_us, by_us) / efficiency_at(big, 1024) == pytest.approx(642.18, rel=1e-3)
    small = gemm_curve(MI355X, cfg("0.10.2"), "bf16", 128, 6144, 2516.6e12, 2.0, 2.0)
    by_us = (128 * 6144 * 2 + 2 * 64 * (128 + 6144)) / 8.0e12 * 1e6          # 0.297 us: a 6.4 us call is latency
    assert by_us / efficiency_at(small, 64) == pytest.approx(6.42, rel=1e-3)


def test_no_table_no_curve():
    assert gemm_curve(H100, cfg("0.10.2"), "bf16", 4096, 4096, 989.5e12, 2.0, 2.0) is None
    assert gemm_curve(MI300X, cfg("0.10.2"), "bf16", 4096, 4096, 1307.4e12, 2.0, 2.0) is None   # not measured
    assert gemm_curve(MI355X, cfg("0.10.2"), "fp8", 4096, 4096, 5033.2e12, 1.0, 2.0) is None


@pytest.mark.parametrize("gpu, argv, env", [
    ("MI355X", ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct", "-tp", "8"], {}),
    ("MI300X", ["vllm", "serve", "Qwen/Qwen3-30B-A3B-FP8"], {"VLLM_ROCM_USE_AITER": "0"}),
    ("MI300X", ["vllm", "serve", "amd/Llama-3.1-70B-Instruct-FP8-KV", "-tp", "8"], {}),   # per-tensor FP8
])
def test_measured_amd_gemms_reach_the_step_and_its_compiled_form(gpu, argv, env):
    from sched_reader.analyzers.pipeline import build_specs
    from sched_reader.models.cost import IterationCostModel
    from sched_reader.models.cost.fast_step import compile_step_time
    argv = [f"{k}={v}" for k, v in env.items()] + argv
    [spec] = build_specs([], argv, gpu=gpu, vllm="0.10.1")
    m = IterationCostModel(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
    b = m.breakdown(256, 256 * 2000, 0, 0.0, 0)
    assert "measured by AITER's tuner" in b.terms["qkv_o_proj"].source
    fast = compile_step_time(m)
    for args in ((256, 256 * 2000, 0, 0.0, 0), (8, 8 * 900, 2048, 2048 * 1024.0, 2), (0, 0, 8192, 8192 * 4096.0, 1)):
        assert fast(*args) == m.step_time(*args)


def test_mi355x_block_fp8_reproduces_aiter_latency():
    # gfx950 cu_num 256 rows of the same ds_v3 file: N 36864, K 7168 at M 1: 51.57 us (264 MB of FP8 weights: a
    # weight stream at 5.1 TB/s, 0.64 of the 8.0 TB/s peak)
    c = gemm_curve(MI355X, cfg("0.10.2"), "fp8_block", 36864, 7168, 5033.2e12, WB_BLOCK, 2.0)
    by_us = (36864 * 7168 * WB_BLOCK + 2 * 1 * (36864 + 7168)) / 8.0e12 * 1e6
    assert by_us / efficiency_at(c, 1) == pytest.approx(51.57, rel=1e-3)


def test_mi355x_mxfp4_reproduces_aiter_latency():
    wb = 0.5 + 1 / 32   # E2M1 + one E8M0 scale per 32
    c = gemm_curve(MI355X, cfg("0.10.2", VLLM_ROCM_USE_AITER="1"), "mxfp4", 106496, 16384, 10066.4e12, wb, 2.0)
    by_us = (106496 * 16384 * wb + 2 * 1 * (106496 + 16384)) / 8.0e12 * 1e6   # 927 MB: 6.4 TB/s, 0.80 of peak
    assert by_us / efficiency_at(c, 1) == pytest.approx(145.28, rel=1e-3)


# MI300X per-tensor FP8 (gemm_measured cdna3 fp8): github.com/ROCm/aiter 035725098d (pull request 1092, "[MI300X] tune
# Gemm performance for llama 70b/405b") aiter/configs/a8w8_tuned_gemm.csv, cu_num 304 rows, column us, written out by
# hand: N 57344, K 8192 (Llama-3.1-70B gate_up at TP 1, the only shape of its size) at M 256: 299.92 us, at M 16,384:
# 14981.5 us; N 8192, K 8192 at M 256: 63.44 us and N 16384, K 4096 (same weight count, averaged) at M 256: 56.75 us;
# N 8192, K 8192 at M 1: 28.9 us, N 16384, K 4096 at M 1: 28.2 us.
FP8_PEAK = 2614.9e12   # MI300X dense FP8 (catalog)


def test_mi300x_per_tensor_fp8_reproduces_aiter_latency():
    big = gemm_curve(MI300X, cfg("0.10.1"), "fp8", 57344, 8192, FP8_PEAK, 1.0, 2.0, 0.745)
    # 16,384 tokens: 1.539e13 FLOPs in 14981.5 us = 1027 TFLOPS, 0.393 of the FP8 peak (the old constant: 0.412)
    fl_us = 2 * 16384 * 57344 * 8192 / FP8_PEAK * 1e6
    assert fl_us / efficiency_at(big, 16384) == pytest.approx(14981.5, rel=1e-3)
    assert efficiency_at(big, 16384) == pytest.approx(0.393, abs=0.002)
    # 256 tokens: FLOPs 2.405e11 -> 92.0 us (bytes 470 MB + 33.6 MB -> 95.0 us): the roofline 95.0 us in 299.92 us
    roof_us = max(2 * 256 * 57344 * 8192 / FP8_PEAK, (57344 * 8192 + 2 * 256 * (57344 + 8192)) / 5.3e12) * 1e6
    assert roof_us / efficiency_at(big, 256) == pytest.approx(299.92, rel=1e-3)
    assert efficiency_at(big, 256) == pytest.approx(0.317, abs=0.002)
    assert "cu_num 304" in big[2] and "1092" in big[2]


def test_mi300x_per_tensor_fp8_same_size_shapes_are_averaged():
    # 8192 x 8192 and 16384 x 4096 hold 67.1M weights each; at 256 tokens both compute 3.436e10 FLOPs (13.14 us) and
    # move 67.1 MB + 2 x 256 x (N + K) bytes: 75.5 MB (14.25 us) and 77.6 MB (14.65 us)
    c = gemm_curve(MI300X, cfg("0.10.1"), "fp8", 8192, 8192, FP8_PEAK, 1.0, 2.0, 0.745)
    e1 = (8192 * 8192 + 2 * 256 * 16384) / 5.3e12 / 63.44e-6
    e2 = (16384 * 4096 + 2 * 256 * 20480) / 5.3e12 / 56.75e-6
    assert efficiency_at(c, 256) == pytest.approx((e1 + e2) / 2, rel=1e-3)
    assert efficiency_at(c, 256) == pytest.approx(0.241, abs=0.002)   # where the constants priced 0.45 of the roofline


def test_mi300x_per_tensor_fp8_one_token_runs_vllms_skinny_kernel():
    # vLLM 0.9.2-0.14.1 rocm_per_tensor_w8a8_scaled_mm: qinput.shape[0] == 1 -> wvSplitKQ (VLLM_ROCM_USE_SKINNY_GEMM
    # default True), else torch._scaled_mm; 0.16.0 kernels/scaled_mm/rocm.py: A.shape[0] <= 4; 0.8.4 has no wvSplitKQ
    weights_us = 8192 * 8192 / 5.3e12 * 1e6            # 12.66 us of FP8 weights at 5.3 TB/s
    by_us = (8192 * 8192 + 2 * 1 * (8192 + 8192)) / 5.3e12 * 1e6
    on = gemm_curve(MI300X, cfg("0.10.1"), "fp8", 8192, 8192, FP8_PEAK, 1.0, 2.0, 0.745)
    assert efficiency_at(on, 1) == pytest.approx(0.745)           # the weight stream at memory_bandwidth
    assert weights_us / 0.745 < 17.1 < 28.2                         # 17.0 us, not the CK kernel's 28.2-28.9 us
    assert by_us / efficiency_at(on, 2) > 28.0                      # 2 tokens: torch._scaled_mm, the measured kernel
    by2 = (16384 * 4096 + 2 * 1 * (16384 + 4096)) / 5.3e12
    ck_eff = (by_us * 1e-6 / 28.9e-6 + by2 / 28.2e-6) / 2           # the two 67.1M-weight shapes at 1 token, averaged
    off = gemm_curve(MI300X, cfg("0.10.1", VLLM_ROCM_USE_SKINNY_GEMM="0"), "fp8", 8192, 8192, FP8_PEAK, 1.0, 2.0, 0.745)
    assert efficiency_at(off, 1) == pytest.approx(ck_eff, rel=1e-3)
    old = gemm_curve(MI300X, cfg("0.8.4"), "fp8", 8192, 8192, FP8_PEAK, 1.0, 2.0, 0.745)
    assert efficiency_at(old, 1) == pytest.approx(ck_eff, rel=1e-3)
    new = gemm_curve(MI300X, cfg("0.16.0"), "fp8", 8192, 8192, FP8_PEAK, 1.0, 2.0, 0.745)
    assert efficiency_at(new, 4) == pytest.approx(0.745) and efficiency_at(on, 4) < 0.5   # CK: 0.45


def test_per_tensor_fp8_table_is_cdna3_only():
    assert gemm_curve(H100, cfg("0.10.1"), "fp8", 8192, 8192, 1978.9e12, 1.0, 2.0, 0.8) is None
    assert gemm_curve(MI355X, cfg("0.10.1"), "fp8", 8192, 8192, 5033.2e12, 1.0, 2.0, 0.8) is None
