"""AMD Instinct kernel paths (models/cost/rocm_paths.py, models/data/rocm_kernel_paths.yaml).

Independent inputs, written out here by hand:
  AMD, "AITER: AI Tensor Engine For ROCm" (rocm-blogs, 2025-03-21), footnotes 2 and 3, MI300X, testing of
  2025-03-11: "On average ... AITER block-scale GEMM offers a 2x performance boost"; "AITER block-scale fused
  MoE offers a 3x performance boost".
  vLLM source, read in the release wheels (pip download vllm==X --no-deps):
    0.7.3: no VLLM_ROCM_USE_AITER in vllm/envs.py.
    0.8.2: VLLM_ROCM_USE_AITER (default False), no rocm_aiter_fused_moe.py.
    0.8.3: rocm_aiter_fused_experts -> fmoe_fp8_blockscale_g1u1 for block FP8 (VLLM_ROCM_USE_AITER_MOE default True).
    0.8.5: apply_w8a8_block_fp8_linear on ROCm -> w8a8_block_fp8_matmul (Triton) whatever the environment.
    0.9.0: rocm_aiter_gemm_w8a8_blockscale when VLLM_ROCM_USE_AITER=1 (VLLM_ROCM_USE_AITER_LINEAR default True).
"""

from __future__ import annotations

import pytest
from helpers import effective_config

from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.fast_step import compile_step_time
from sched_reader.models.cost.rocm_paths import aiter_enabled, path_slowdown
from sched_reader.models.gpu_catalog import resolve_gpu

MI300X = resolve_gpu("MI300X").gpu
MI325X = resolve_gpu("MI325X").gpu
H100 = resolve_gpu("H100").gpu


def cfg(version: str, **env: str):
    return effective_config(vllm_version=version, rocm_env=dict(env))


def factor(gpu, c, term, fmt):
    hit = path_slowdown(gpu, c, term, fmt)
    return hit[0] if hit else 1.0


# ------------------------------------------------------------------------------------------ path selection
@pytest.mark.parametrize("version, env, want", [
    ("0.7.3", {}, 3.0),                                  # no AITER at all
    ("0.7.3", {"VLLM_ROCM_USE_AITER": "1"}, 3.0),        # the variable does not exist yet
    ("0.8.2", {"VLLM_ROCM_USE_AITER": "1"}, 3.0),        # AITER switch, but no AITER MoE yet
    ("0.8.3", {"VLLM_ROCM_USE_AITER": "1"}, 1.0),        # fmoe_fp8_blockscale_g1u1
    ("0.8.5", {}, 3.0),                                  # upstream default: off
    ("0.8.5", {"VLLM_ROCM_USE_AITER": "0"}, 3.0),        # PR 17530's runs
    ("0.10.0", {"VLLM_ROCM_USE_AITER": "true"}, 1.0),
    ("0.10.0", {"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MOE": "0"}, 3.0),
])
def test_block_fp8_fused_moe_path(version, env, want):
    assert factor(MI300X, cfg(version, **env), "moe", "fp8_block") == want


@pytest.mark.parametrize("version, env, want", [
    ("0.8.5", {"VLLM_ROCM_USE_AITER": "1"}, 2.0),        # 0.8.5 has no AITER block-scale GEMM
    ("0.9.0", {"VLLM_ROCM_USE_AITER": "1"}, 1.0),
    ("0.9.0", {}, 2.0),
    ("0.9.1", {"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_LINEAR": "0"}, 2.0),
])
def test_block_fp8_gemm_path(version, env, want):
    assert factor(MI300X, cfg(version, **env), "gemm", "fp8_block") == want


def test_other_formats_gpus_and_terms_have_no_path_factor():
    c = cfg("0.8.5")
    assert path_slowdown(MI300X, c, "moe", "bf16") is None       # no published ratio for the bf16 Triton MoE
    assert path_slowdown(MI300X, c, "gemm", "fp8") is None       # per-tensor FP8: hipBLASLt either way
    assert path_slowdown(MI300X, c, "moe", "") is None
    assert path_slowdown(H100, c, "moe", "fp8_block") is None    # NVIDIA: no entry, nothing changes
    assert factor(MI325X, c, "moe", "fp8_block") == 3.0           # CDNA3 family (same chip)


def test_provenance_names_the_measurement_and_the_reason():
    f, src = path_slowdown(MI300X, cfg("0.8.5"), "moe", "fp8_block")
    assert f == 3.0 and "VLLM_ROCM_USE_AITER off" in src and "3x performance boost" in src and "rocm-blogs" in src
    _, src = path_slowdown(MI300X, cfg("0.7.3"), "gemm", "fp8_block")
    assert "no AITER kernel before vLLM 0.9.0" in src


def test_aiter_switch_parsing():
    assert not aiter_enabled({})
    assert not aiter_enabled({"VLLM_ROCM_USE_AITER": "False"})
    assert not aiter_enabled({"VLLM_ROCM_USE_AITER": "yes"})      # vLLM: .lower() in ("true", "1") only
    assert aiter_enabled({"VLLM_ROCM_USE_AITER": "TRUE"})
    assert aiter_enabled({"VLLM_ROCM_USE_AITER": "1"}, "VLLM_ROCM_USE_AITER_MOE")
    assert not aiter_enabled({"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MOE": "0"}, "VLLM_ROCM_USE_AITER_MOE")


# ------------------------------------------------------------------------------------------ cost model
def _model(argv, gpu="MI300X", vllm=None):
    spec = build_specs([], argv, gpu=gpu, vllm=vllm)[0]
    return spec, IterationCostModel(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)


DSV3 = ["vllm", "serve", "deepseek-ai/DeepSeek-V3", "--tensor-parallel-size", "8", "--trust-remote-code"]


def test_the_environment_reaches_the_engine_config():
    spec, _ = _model(["VLLM_ROCM_USE_AITER=1", "VLLM_USE_V1=1", *DSV3], gpu="MI300X")
    assert spec.effective.rocm_env == {"VLLM_ROCM_USE_AITER": "1"}


def test_triton_moe_and_block_gemm_are_the_published_ratios_slower_than_aiter():
    # DeepSeek-V3 (block FP8, 128 x 128) on 8x MI300X in the default release: AITER on -> CK/ASM kernels, off -> Triton
    _, off = _model(DSV3, gpu="MI300X")
    _, on = _model(["VLLM_ROCM_USE_AITER=1", *DSV3], gpu="MI300X")
    for nd, ctx in ((4, 4 * 3000), (64, 64 * 3000)):
        a = on.breakdown(nd, ctx, 0, 0.0).terms
        b = off.breakdown(nd, ctx, 0, 0.0).terms
        assert b["moe_experts"].time_s == pytest.approx(3.0 * a["moe_experts"].time_s, rel=1e-12)
        assert b["qkv_o_proj"].time_s == pytest.approx(2.0 * a["qkv_o_proj"].time_s, rel=1e-12)
        assert b["elementwise"].time_s == a["elementwise"].time_s               # not a kernel path
        assert "triton_block_fp8_fused_moe x3" in b["moe_experts"].source
        assert "kernel path" not in a["moe_experts"].source


def test_nvidia_ignores_rocm_environment_and_fast_form_agrees_on_amd():
    _, h = _model(DSV3, gpu="H200")
    _, h_env = _model(["VLLM_ROCM_USE_AITER=1", *DSV3], gpu="H200")
    for pt in ((1, 100, 0, 0.0, 0), (64, 64 * 3000, 2048, 2048 * 1500.0, 1)):
        assert h.step_time(*pt) == h_env.step_time(*pt)
    _, amd = _model(DSV3, gpu="MI300X")
    fast = compile_step_time(amd)
    assert fast is not None           # bit-identical on its probe points, else None
    assert fast(32, 32 * 4000, 512, 512 * 300.0, 1) == amd.step_time(32, 32 * 4000, 512, 512 * 300.0, 1)


# ------------------------------------------------------------------------------------------ Triton MLA decode
def test_triton_mla_occupancy_is_the_grid_over_the_cus():
    # vLLM's Triton MLA decode grid: batch x ceil(heads / 16) x 4 KV splits; MI300X has 304 CUs (catalog)
    from sched_reader.models.cost.rocm_paths import mla_decode_occupancy
    per_seq, src = mla_decode_occupancy(MI300X, cfg("0.7.3"), 16)      # DeepSeek-R1 at TP 8: 128 / 8 heads
    assert per_seq == pytest.approx(4 / 304)
    assert "4 workgroups per sequence" in src and "17x" in src
    assert mla_decode_occupancy(MI300X, cfg("0.7.3"), 128)[0] == pytest.approx(32 / 304)   # TP 1: 8 groups
    assert mla_decode_occupancy(MI300X, cfg("0.8.5", VLLM_ROCM_USE_AITER="1"), 16) is None  # AITER MLA
    assert mla_decode_occupancy(MI300X, cfg("0.8.5"), 16) is not None                       # upstream default
    assert mla_decode_occupancy(H100, cfg("0.7.3"), 16) is None


def test_triton_mla_decode_time_scales_with_the_idle_cus():
    # at 4 sequences 16 of 304 CUs stream the latent cache: 19x the AITER (roofline) time; from 76 sequences
    # (76 x 4 = 304 workgroups) the whole GPU is busy and both paths agree
    _, tri = _model(["vllm", "serve", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "8"], gpu="MI300X")
    _, ait = _model(["VLLM_ROCM_USE_AITER=1", "vllm", "serve", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size",
                     "8"], gpu="MI300X")
    t4 = tri.breakdown(4, 4 * 3600, 0, 0.0).terms["attention_decode"].time_s
    a4 = ait.breakdown(4, 4 * 3600, 0, 0.0).terms["attention_decode"].time_s
    assert t4 == pytest.approx(a4 * 304 / 16, rel=1e-12)
    t76 = tri.breakdown(76, 76 * 3600, 0, 0.0).terms["attention_decode"].time_s
    assert t76 == pytest.approx(ait.breakdown(76, 76 * 3600, 0, 0.0).terms["attention_decode"].time_s, rel=1e-12)
    fast = compile_step_time(tri)
    assert fast is not None and fast(4, 4 * 3600, 0, 0.0, 0) == tri.step_time(4, 4 * 3600, 0, 0.0, 0)
    lin = tri.decode_linear(4)       # closed form: the same slope
    assert lin.time(4 * 3600) == pytest.approx(tri.step_time(4, 4 * 3600, 0, 0.0, 0), rel=1e-9)


# ------------------------------------------------------------------------------------------ xGMI mesh
def test_xgmi_mesh_uses_only_the_links_to_the_peers():
    # MI300X: 7 links x 64 GB/s per direction (catalog 448 GB/s); TP 4 reaches 3 peers -> 192 GB/s, TP 2 -> 64
    from sched_reader.models.cost.collectives import link_bandwidth_bytes_s
    from sched_reader.models.cost.efficiency import efficiency_for
    e = efficiency_for(MI300X)
    assert link_bandwidth_bytes_s(MI300X, e, 8) == pytest.approx(448e9 * e.link_bandwidth)
    assert link_bandwidth_bytes_s(MI300X, e, 4) == pytest.approx(192e9 * e.link_bandwidth)
    assert link_bandwidth_bytes_s(MI300X, e, 2) == pytest.approx(64e9 * e.link_bandwidth)
    h = efficiency_for(H100)   # NVSwitch: the full per-GPU NVLink bandwidth at any TP size
    assert link_bandwidth_bytes_s(H100, h, 2) == link_bandwidth_bytes_s(H100, h, 8)


# ------------------------------------------------------------------------------------------ measured fused MoE
# AITER's tuning tables (github.com/ROCm/aiter aiter/configs/model_configs/qwen3_235b_bf16_tuned_fmoe.csv, commit
# ca781d8197, rows with cu_num 304 = MI300X): Qwen3-235B-A22B at TP4 (hidden 4096, 384 intermediate per GPU,
# 128 experts, top-8): 34.0571 us at 1 token, 2220.8408 us at 8,192 tokens, 7767.4427 us at 32,768 (the table's own
# tflops column: 318.5).
QWEN235 = ["vllm", "serve", "Qwen/Qwen3-235B-A22B", "--tensor-parallel-size", "4"]


def test_measured_moe_reproduces_aiter_latency_on_the_measured_shape():
    _, m = _model(["VLLM_ROCM_USE_AITER=1", *QWEN235], gpu="MI300X", vllm="0.10.1")
    layers = 94   # Qwen3-235B-A22B: 94 MoE layers
    one = m.breakdown(1, 1000, 0, 0.0).terms["moe_experts"]
    assert one.time_s == pytest.approx(layers * 34.0571e-6, rel=1e-9)
    big = m.breakdown(0, 0, 8192, 8192 * 4096.0, 1).terms["moe_experts"]
    assert big.time_s == pytest.approx(layers * 2220.8408e-6, rel=1e-9)
    assert "qwen3_235b_bf16_tuned_fmoe.csv" in big.source and "AITER fused MoE" in big.source


def test_measured_moe_efficiency_by_hand():
    # 32,768 tokens x 8 routes x 2 x 3 x 4096 x 384 = 2.4739e12 FLOPs in 7767.4427 us = 318.5 TFLOPS (the table's
    # column), 0.2436 of MI300X's 1307.4 TFLOPS bf16; memory is far from binding at that size
    from sched_reader.models.cost.rocm_paths import _measured_moe_efficiency

    [eff] = _measured_moe_efficiency([4096, 384, 128, 8], [32768], [7767.4427], 1307.4e12, 5.3e12, 2.0, 2.0)
    assert 2 * 32768 * 8 * 3 * 4096 * 384 / 7767.4427e-6 / 1e12 == pytest.approx(318.5, abs=0.05)
    assert eff == pytest.approx(318.5e12 / 1307.4e12, rel=2e-4)


def test_measured_moe_moves_by_tokens_per_expert_and_stays_near_its_shapes():
    from sched_reader.models.cost.rocm_paths import moe_curve

    c = cfg("0.10.1", VLLM_ROCM_USE_AITER="1")
    # 64 experts top-8 (tokens per expert T/8) at 4,096 tokens = the measured 128-expert table at 8,192 tokens
    a = moe_curve(MI300X, c, "bf16", 4096, 384, 128, 8, 1307.4e12, 2.0, 2.0)
    b = moe_curve(MI300X, c, "bf16", 4096, 384, 64, 8, 1307.4e12, 2.0, 2.0)
    assert b[3][a[3].index(13.0)] == 12.0 and b[4] == a[4]
    # hidden or intermediate size more than 2x from every measured shape: no measurement applies (constants)
    assert moe_curve(MI300X, c, "bf16", 8192, 1792, 8, 2, 1307.4e12, 2.0, 2.0) is None   # Mixtral-8x22B TP8
    assert moe_curve(MI300X, c, "fp8", 4096, 384, 128, 8, 2614.9e12, 1.0, 2.0) is None   # per-tensor FP8: not measured
    assert moe_curve(H100, c, "bf16", 4096, 384, 128, 8, 989.5e12, 2.0, 2.0) is None


def test_measured_block_fp8_moe_is_three_times_slower_on_triton():
    from sched_reader.models.cost.rocm_paths import moe_curve

    on = moe_curve(MI300X, cfg("0.10.1", VLLM_ROCM_USE_AITER="1"), "fp8_block", 7168, 2048, 256, 8, 2614.9e12,
                   1.0 + 4 / 16384, 2.0)
    off = moe_curve(MI300X, cfg("0.10.1"), "fp8_block", 7168, 2048, 256, 8, 2614.9e12, 1.0 + 4 / 16384, 2.0)
    assert [x / 3.0 for x in on[4]] == pytest.approx(off[4], rel=1e-12)
    assert "a8w8_blockscale_tuned_fmoe_ds_v3.csv" in off[2] and "triton_block_fp8_fused_moe x3" in off[2]


# AITER's tables for cu_num 256 (MI355X / MI350X): Qwen3-235B-A22B-FP8 at TP4 (hidden 4096, 384 intermediate per GPU,
# 128 experts, top-8), block-scale FP8: 27.435 us at 1 token, 379.7565 us at 2,048 (aiter/configs/model_configs/
# a8w8_blockscale_tuned_fmoe_qwen3_235b.csv, commit 1638f9e7a9); Qwen3-Next-80B-A3B-FP8 at TP1 (2048, 512, 512
# experts, top-10): 2808.0146 us at 32,768 tokens (qwen3next_80b_fp8_tuned_fmoe.csv, commit 602817ff57, Silu rows).
def test_mi355x_block_fp8_moe_reproduces_aiter_latency():
    _, m = _model(["VLLM_ROCM_USE_AITER=1", "vllm", "serve", "Qwen/Qwen3-235B-A22B-FP8", "--tensor-parallel-size", "4"],
                  gpu="MI355X", vllm="0.10.1")
    one = m.breakdown(1, 1000, 0, 0.0).terms["moe_experts"]
    assert one.time_s == pytest.approx(94 * 27.435e-6, rel=1e-9)
    two_k = m.breakdown(0, 0, 2048, 2048 * 1024.0, 1).terms["moe_experts"]
    assert two_k.time_s == pytest.approx(94 * 379.7565e-6, rel=1e-9)
    assert "cu_num 256" in two_k.source and "a8w8_blockscale_tuned_fmoe_qwen3_235b.csv" in two_k.source


def test_mi355x_measured_efficiency_by_hand():
    # 32,768 tokens x 10 routes x 2 x 3 x 2048 x 512 = 2.0616e12 FLOPs in 2808.0146 us = 734.2 TFLOPS, 0.1459 of
    # MI355X's 5033.2 TFLOPS FP8; the bytes bind as iteration.py counts them: all 512 experts' weights
    # 512 x 3 x 2048 x 512 x 1 B = 1.6106e9 plus bf16 activations in and out per route 2 x 327,680 x (2 x 2048 +
    # 3 x 512) = 3.6910e9, 5.3016e9 B at 8.0 TB/s = 662.7 us, 0.2360 of the measured 2808.0 us
    from sched_reader.models.cost.rocm_paths import _measured_moe_efficiency

    [eff] = _measured_moe_efficiency([2048, 512, 512, 10], [32768], [2808.0146], 5033.2e12, 8.0e12, 1.0, 2.0)
    assert 2 * 32768 * 10 * 3 * 2048 * 512 / 2808.0146e-6 / 1e12 == pytest.approx(734.2, abs=0.1)
    assert eff == pytest.approx(0.2360, abs=1e-4)
