"""Prompt-token attention on AMD Instinct GPUs (rocm_paths.prefill_attention_path, rocm_kernel_paths.yaml
prefill_attention).

Independent inputs, written out here by hand:
  vLLM source, read in the release wheels (pip download vllm==X --no-deps):
    vllm/envs.py (0.8.5, 0.9.1, 0.11.0): VLLM_USE_TRITON_FLASH_ATTN default "True"; VLLM_ROCM_USE_AITER_MHA
      default "True" (0.10.0, 0.11.0).
    vllm/attention/backends/rocm_flash_attn.py (0.8.5): use_triton_flash_attn = envs.VLLM_USE_TRITON_FLASH_ATTN;
      otherwise flash_attn_varlen_func (CK); a prompt with a block table runs paged_attn.forward_prefix.
    vllm/platforms/rocm.py: 0.9.1 V1 returns TritonAttentionBackend only; 0.10.0 returns
      AiterFlashAttentionBackend when VLLM_ROCM_USE_AITER and VLLM_ROCM_USE_AITER_MHA.
  HipKittens (github.com/HazyResearch/HipKittens at f09e9685, analysis/attn/fwd), MI355X, causal GQA forward
    (B 16, 64 query heads, 8 KV heads, d 128) at sequence 16,384: AITER 1246.1 TFLOPS (mi355x_gqa_causal_fwd.json
    tflops_ref), CK 888.64, Triton 793.8 (plot.py); MI355X dense bf16 peak 2516.6 TFLOPS (catalog).
  H100 SXM causal prefill attention at a 16,384-token prompt: 0.602 of peak (the reference of
    fallback_efficiency.yaml); efficiency.py attention_compute 0.50.
"""

from __future__ import annotations

import pytest
from helpers import effective_config

from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.fast_step import compile_step_time
from sched_reader.models.cost.rocm_paths import prefill_attention_kernel, prefill_attention_path
from sched_reader.models.gpu_catalog import resolve_gpu

MI300X = resolve_gpu("MI300X").gpu
MI355X = resolve_gpu("MI355X").gpu
H100 = resolve_gpu("H100").gpu

# Llama-3.1-8B: 32 layers, 32 query heads of 128, 8 KV heads
LLAMA8 = ModelArch(id="meta-llama/Llama-3.1-8B", model_type="llama", config=dict(
    hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
    num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False, torch_dtype="bfloat16"))


def cfg(version: str, engine: str = "v1", chunked: bool = True, **env: str):
    return effective_config(vllm_version=version, engine=engine, enable_chunked_prefill=chunked, rocm_env=dict(env))


@pytest.mark.parametrize("version, engine, chunked, env, want", [
    ("0.8.5", "v0", False, {}, "triton_fa"),                                     # VLLM_USE_TRITON_FLASH_ATTN default
    ("0.8.5", "v0", False, {"VLLM_USE_TRITON_FLASH_ATTN": "0"}, "ck_fa"),        # PR 17530's runs
    ("0.8.5", "v0", False, {"VLLM_USE_TRITON_FLASH_ATTN": "false"}, "ck_fa"),
    ("0.8.5", "v0", True, {"VLLM_USE_TRITON_FLASH_ATTN": "0"}, "triton_fa"),     # forward_prefix (Triton)
    ("0.8.3", "v1", True, {}, "triton_fa"),                                      # chunked_prefill_paged_decode
    ("0.9.1", "v1", True, {"VLLM_ROCM_USE_AITER": "1"}, "triton_fa"),            # no AITER FA backend in 0.9.1
    ("0.10.0", "v1", True, {"VLLM_ROCM_USE_AITER": "1"}, "aiter_fa"),
    ("0.11.0", "v1", True, {"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MHA": "0"}, "triton_fa"),
    ("0.11.0", "v1", True, {}, "triton_fa"),                                     # upstream default: AITER off
])
def test_kernel_selection_follows_the_release_source(version, engine, chunked, env, want):
    assert prefill_attention_kernel(cfg(version, engine, chunked, **env))[0] == want


def test_fractions_are_the_measured_tflops_over_peak_scaled_to_the_h100_default():
    # fraction = 0.50 x (TFLOPS / 2516.6) / 0.602, by hand
    want = {"aiter_fa": 0.50 * 1246.1 / 2516.6 / 0.602,      # 0.411
            "ck_fa": 0.50 * 888.64 / 2516.6 / 0.602,         # 0.293
            "triton_fa": 0.50 * 793.8 / 2516.6 / 0.602}      # 0.262
    cases = {"aiter_fa": cfg("0.10.0", VLLM_ROCM_USE_AITER="1"),
             "ck_fa": cfg("0.8.5", "v0", False, VLLM_USE_TRITON_FLASH_ATTN="0"),
             "triton_fa": cfg("0.11.0")}
    for key, c in cases.items():
        frac, src = prefill_attention_path(MI300X, c)
        assert frac == pytest.approx(want[key], abs=6e-4)
        assert key in src and "HipKittens" in src
    assert prefill_attention_path(MI355X, cfg("0.11.0"))[0] == pytest.approx(want["triton_fa"], abs=6e-4)


def test_nvidia_gpus_have_no_path():
    assert prefill_attention_path(H100, cfg("0.11.0")) is None


def test_prefill_attention_term_runs_at_the_path_fraction():
    # one 8192-token prompt: causal pairs 8192^2 / 2; FLOPs = 32 layers x 2 x 32 heads x (128 + 128) x pairs
    pairs = 8192 * 8192 / 2.0
    flops = 32 * 2 * 32 * 256 * pairs
    for c, frac in ((cfg("0.11.0"), 0.262), (cfg("0.8.5", "v0", False, VLLM_USE_TRITON_FLASH_ATTN="0"), 0.293)):
        m = IterationCostModel(LLAMA8, MI300X, c)
        t = m.breakdown(0, 0, 8192, pairs, 1).terms["attention_prefill"]
        assert t.flops == pytest.approx(flops)
        assert t.time_s == pytest.approx(flops / (1307.4e12 * frac), rel=2e-3)
        # the compiled step (simulator) charges the same time
        step = compile_step_time(m)
        assert step(0, 0, 8192, pairs, 1) == pytest.approx(m.step_time(0, 0, 8192, pairs, 1), rel=1e-9)


def test_h100_prefill_is_unchanged_by_the_amd_paths():
    m = IterationCostModel(LLAMA8, H100, cfg("0.11.0", VLLM_ROCM_USE_AITER="1"))
    assert "triton_fa" not in m.breakdown(0, 0, 4096, 4096 * 2048.0, 1).terms["attention_prefill"].source


# --------------------------------------------------------------- unified attention without causal tile skip (0.9.x)
# kernel_unified_attention_2d: num_blocks = cdiv_fn(seq_len, BLOCK_SIZE) in the 0.9.0-0.9.2 wheels, causal-bounded
# from 0.10.0 (vLLM PR 20308): a fresh 8192-token prompt computes 8192^2 pairs, not 8192^2 / 2.
@pytest.mark.parametrize("version, engine, env, factor", [
    ("0.9.1", "v1", {}, 2.0),
    ("0.9.2", "v1", {}, 2.0),
    ("0.9.2", "v1", {"VLLM_V1_USE_PREFILL_DECODE_ATTENTION": "1"}, 1.0),   # context_attention_fwd: causal
    ("0.10.0", "v1", {}, 1.0),
    ("0.9.1", "v0", {}, 1.0),                                              # V0: prefix_prefill / FA, causal
])
def test_unified_attention_full_tiles(version, engine, env, factor):
    pairs = 8192 * 8192 / 2.0
    m = IterationCostModel(LLAMA8, MI300X, cfg(version, engine, True, **env))
    t = m.breakdown(0, 0, 8192, pairs, 1).terms["attention_prefill"]
    assert t.flops == pytest.approx(factor * 32 * 2 * 32 * 256 * pairs)
    assert compile_step_time(m)(0, 0, 8192, pairs, 1) == pytest.approx(m.step_time(0, 0, 8192, pairs, 1), rel=1e-9)


def test_full_tiles_with_two_chunks_and_a_prefix():
    # two sequences, each a 2048-token chunk after 4096 cached tokens: causal pairs 2 x 2048 x (4096 + 1024);
    # without the tile skip each chunk sees all 6144 keys: 2 x 2048 x 6144 = causal + 2 x 2048^2 / 2
    causal = 2 * 2048 * (4096 + 1024)
    m = IterationCostModel(LLAMA8, MI300X, cfg("0.9.1"))
    t = m.breakdown(0, 0, 4096, causal, 2).terms["attention_prefill"]
    assert t.flops == pytest.approx(32 * 2 * 32 * 256 * (2 * 2048 * 6144))
    assert prefill_attention_path(H100, cfg("0.9.1")) is None
    h = IterationCostModel(LLAMA8, H100, cfg("0.9.1")).breakdown(0, 0, 4096, causal, 2).terms["attention_prefill"]
    assert h.flops == pytest.approx(32 * 2 * 32 * 256 * causal)     # NVIDIA: untouched


# ------------------------------------------------------------------------------------------ MLA prompt attention
# vLLM 0.7.3 vllm/attention/backends/mla/utils.py: flash_attn_varlen_func of the flash-attn package (CK on ROCm), v
# zero-padded to the q/k head dim (192 for DeepSeek: 128 nope + 64 rope; v 128); 0.8.5 mla/common.py: Triton FA when
# is_hip and VLLM_USE_TRITON_FLASH_ATTN and no softmax LSE is needed, else the same CK call.
@pytest.mark.parametrize("version, engine, chunked, env, want", [
    ("0.7.3", "v0", False, {}, "ck_fa"),
    ("0.8.5", "v0", False, {}, "triton_fa"),
    ("0.8.5", "v0", False, {"VLLM_USE_TRITON_FLASH_ATTN": "0"}, "ck_fa"),
    ("0.8.5", "v0", True, {}, "ck_fa"),
    ("0.11.0", "v1", True, {"VLLM_ROCM_USE_AITER": "1"}, "ck_fa"),
])
def test_mla_prompt_kernel(version, engine, chunked, env, want):
    assert prefill_attention_kernel(cfg(version, engine, chunked, **env), mla=True)[0] == want


def test_mla_prompt_attention_pays_the_padded_value_head():
    from sched_reader.analyzers.pipeline import build_specs
    spec = build_specs([], ["vllm", "serve", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "8"],
                       gpu="MI300X", vllm="0.7.3")[0]
    m = IterationCostModel(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
    # 16 heads per GPU, q/k 192, v 128 -> 192: each pair costs 2 x 16 x (192 + 192) FLOPs on the CK kernel at 0.293
    pairs = 3200 * 3200 / 2.0
    t = m.breakdown(0, 0, 3200, pairs, 1).terms["attention_prefill"]
    layers = spec.arch.config["num_hidden_layers"]
    assert t.flops == pytest.approx(layers * 2 * 16 * (192 + 128) * pairs)
    assert t.time_s == pytest.approx(layers * 2 * 16 * (192 + 192) * pairs / (1307.4e12 * 0.293), rel=3e-3)
    assert "MLA ck_fa" in t.source and "192" in t.source


# ------------------------------------------------------------------------------------------ explicit backend
@pytest.mark.parametrize("version, backend, want", [
    ("0.12.0", "TRITON_ATTN", "triton_fa"),
    ("0.12.0", "ROCM_ATTN", "triton_fa"),
    ("0.12.0", "ROCM_AITER_UNIFIED_ATTN", "aiter_fa"),
    ("0.11.0", "TRITON_ATTN", "aiter_fa"),       # 0.11.0 honours only ROCM_ATTN; AITER + MHA is checked first
])
def test_explicit_backend(version, backend, want):
    c = cfg(version, VLLM_ROCM_USE_AITER="1", VLLM_ATTENTION_BACKEND=backend)
    assert prefill_attention_kernel(c)[0] == want


def test_backend_ratio_stays_inside_the_published_whole_throughput_ratio():
    """vLLM blog 2025-12-16 ("Beyond Porting", AMD and Embedded LLM; github.com/vllm-project/vllm-project.github.io
    _posts/2025-12-16-rocm-attention-backend.md): Qwen3-235B-A22B-FP8, TP8 + EP8, ISL 10K / OSL 1K, 64 concurrent, on
    MI300X TRITON_ATTN's output throughput is 1.30x slower than ROCM_AITER_FA's (decode and prefill kernels both
    differ). The prompt-attention path alone must slow the model down, and by no more than that."""
    from sched_reader.analyzers.pipeline import build_specs
    from sched_reader.models.cost.performance import estimate_performance
    from sched_reader.models.workload import Workload

    tps = {}
    for backend in ("ROCM_AITER_FA", "TRITON_ATTN"):
        argv = ["VLLM_ROCM_USE_AITER=1", f"VLLM_ATTENTION_BACKEND={backend}", "vllm", "serve",
                "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "--tensor-parallel-size", "8", "--max-num-batched-tokens",
                "16384", "--no-enable-prefix-caching", "--enable-expert-parallel", "--async-scheduling"]
        spec = build_specs([], argv, gpu="MI300X", vllm="0.13.0")[0]
        wl = Workload(dataset_name="random", random_input_len=10000, random_output_len=1000, num_prompts=256,
                      request_rate="inf", max_concurrency=64)
        tps[backend] = estimate_performance(spec.arch, spec.hardware.gpu, spec.effective, wl,
                                            spec.checkpoint_quantization)["output_throughput"]
    assert 1.0 < tps["ROCM_AITER_FA"] / tps["TRITON_ATTN"] <= 1.30
