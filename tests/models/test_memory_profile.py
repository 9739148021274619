"""vLLM's memory profile: requested memory, activation peak per release, CUDA graphs, overrides."""

from __future__ import annotations

from functools import partial

import pytest

from helpers import effective_config

from sched_reader.models.capacity import estimate_capacity
from sched_reader.models.gpu_catalog import resolve_gpu
from sched_reader.models.memory_profile import memory_profile, sampler_path
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import weight_breakdown

GIB = 2**30


cfg = partial(effective_config, gpu_memory_utilization=0.95, enable_prefix_caching=False)


H100 = resolve_gpu("H100").gpu


def profile(name, c, gpu=H100):
    a = resolve_model(name).arch
    return memory_profile(a, gpu, c, weight_breakdown(a, c, gpu=gpu))


def test_requested_is_total_times_utilization():
    # v0.19.0 log: "Requested memory: 0.950000 (util), 75.23 GiB" with total_memory=79.19GiB
    p = profile("meta-llama/Llama-3.1-8B-Instruct", cfg())
    assert round(p.requested_bytes / GIB, 2) == 75.23


def test_llama_8b_sampler_peak_hand_calculation():
    # v0.19.0 sampler moment, R = 1024 requests, V = 128,256, F = 4 R V = 525,336,576 bytes:
    #   hidden states alive (8192 + 2 x 1024) x 4096 x 2      =    83,886,080
    #   bf16 logits R x V x 2                                 =   262,668,288
    #   fp32 logits F + softmax probs F + exponential noise F = 1,576,009,728
    #   Triton top-k/top-p buffer 132 SMs x V x 4             =    67,719,168
    #   cuBLAS workspace (sm90)                               =    33,554,432
    expected = 83_886_080 + 262_668_288 + 1_576_009_728 + 67_719_168 + 33_554_432
    p = profile("meta-llama/Llama-3.1-8B-Instruct", cfg())
    assert p.activation_peak_bytes == expected
    # the real log: "torch peak memory increase: 1.89GiB"
    assert abs(p.activation_peak_bytes / GIB - 1.89) < 0.05


def test_sampler_path_per_release():
    assert "sort" in sampler_path(cfg(vllm_version="0.15.0"))[0]
    # V1 before 0.12 uses FlashInfer only when it is installed: the default assumes not (pip installs;
    # llm-d-benchmark 0.11.0 H100 logs show the sort path's 9.5 x 4RV activation); the env var decides.
    assert "sort" in sampler_path(cfg(vllm_version="0.11.0"))[0]
    assert "flashinfer" in sampler_path(cfg(vllm_version="0.11.0", flashinfer_sampler=True))[0]
    assert "triton" in sampler_path(cfg(vllm_version="0.17.0"))[0]


def test_qwen3_14b_activation_drops_in_0_17():
    # llm-d-planner version sweep: 5.64 GiB (v0.15.0) -> 2.23 GiB (v0.17.0)
    old = profile("Qwen/Qwen3-14B", cfg(vllm_version="0.15.0", dtype="auto"))
    new = profile("Qwen/Qwen3-14B", cfg(vllm_version="0.17.0", dtype="auto"))
    assert abs(old.activation_peak_bytes / GIB - 5.64) / 5.64 < 0.03
    assert abs(new.activation_peak_bytes / GIB - 2.23) / 2.23 < 0.03


def test_moe_workspace_stays_allocated_through_the_sampler():
    # Qwen3-30B-A3B: persistent fused-MoE workspace 8192 x 8 x 2048 x 2 (ws13) + 8192 x 8 x 2048 x 2 (ws2)
    # = 536,870,912 bytes on top of the dense sampler moment; v0.19.0 log: 2.68 GiB.
    p = profile("Qwen/Qwen3-30B-A3B", cfg())
    assert abs(p.activation_peak_bytes / GIB - 2.68) < 0.05


def test_cuda_graph_subtracted_only_from_0_20_0():
    a19 = profile("meta-llama/Llama-3.1-8B-Instruct", cfg())
    a20 = profile("meta-llama/Llama-3.1-8B-Instruct", cfg(vllm_version="0.20.0"))
    assert not a19.cuda_graph_subtracted and a20.cuda_graph_subtracted
    assert a19.kv_cache_bytes - a20.kv_cache_bytes == a20.cuda_graph_bytes
    eager = profile("meta-llama/Llama-3.1-8B-Instruct", cfg(vllm_version="0.20.0", enforce_eager=True))
    assert eager.cuda_graph_bytes == 0 and not eager.cuda_graph_subtracted


def test_kv_cache_memory_bytes_override():
    p = profile("meta-llama/Llama-3.1-8B-Instruct", cfg(kv_cache_memory_bytes=10 * GIB))
    assert p.kv_cache_bytes == 10 * GIB and p.kv_override


def test_cpu_offload_reduces_weights_on_gpu():
    base = profile("meta-llama/Llama-3.1-8B-Instruct", cfg())
    off = profile("meta-llama/Llama-3.1-8B-Instruct", cfg(cpu_offload_gb=4))
    assert base.weights_bytes - off.weights_bytes == 4 * GIB
    assert off.kv_cache_bytes - base.kv_cache_bytes == 4 * GIB


def test_v0_formula_matches_issue_10517():
    # kv = total x gmu - peak_torch - non_torch = 23.58 x 0.9 - 17.06 - 0.35 = 3.812 GiB (log: 3.81)
    gpu = resolve_gpu("RTX 3090").gpu
    c = cfg(vllm_version="0.6.4", engine="v0", max_model_len=20000, max_num_batched_tokens=20000,
            max_num_seqs=256, enable_chunked_prefill=False, gpu_memory_utilization=0.9)
    p = profile("meta-llama/Llama-3.1-8B-Instruct", c, gpu)
    assert abs((p.weights_bytes + p.activation_peak_bytes) / GIB - 17.06) < 0.05
    assert abs(p.kv_cache_bytes / GIB - 3.81) < 0.05


def test_weights_that_do_not_fit_are_reported():
    # 70.55e9 bf16 params = 131 GiB > 79.19 GiB on one H100: the load itself fails
    a = resolve_model("meta-llama/Llama-3.3-70B-Instruct").arch
    rep = estimate_capacity(a, H100, cfg()).to_json()
    assert rep["kv_cache"]["fits"] is False
    assert rep["kv_cache"]["error"].startswith("Model weights (131.45 GiB per GPU) do not fit")
    # TP2 at gmu 0.85: 65.7 GiB of weights + ~2 GiB activation + ~2 GiB NCCL exceed 0.85 x 79.19 = 67.3 GiB
    rep2 = estimate_capacity(a, H100, cfg(tensor_parallel_size=2, gpu_memory_utilization=0.85)).to_json()
    assert rep2["kv_cache"]["fits"] is False
    assert rep2["kv_cache"]["error"].startswith("No available memory for the cache blocks.")
    # at gmu 0.95 (75.2 GiB requested) the same engine starts with a small cache
    rep3 = estimate_capacity(a, H100, cfg(tensor_parallel_size=2)).to_json()
    assert rep3["kv_cache"]["fits"] is True and 0 < rep3["memory"]["kv_cache_gib"] < 8


def test_capacity_json_has_exactly_the_documented_keys():
    a = resolve_model("meta-llama/Llama-3.1-8B-Instruct").arch
    j = estimate_capacity(a, H100, cfg()).to_json()
    assert set(j) == {"memory", "kv_cache", "explain"}
    assert set(j["memory"]) == {"total_gib", "requested_gib", "weights_gib", "activation_peak_gib",
                                "non_torch_gib", "cuda_graph_gib", "kv_cache_gib"}
    assert set(j["kv_cache"]) == {"block_size", "num_blocks", "tokens", "bytes_per_token",
                                  "max_concurrency", "fits", "error"}
    assert all({"name", "formula", "inputs", "value", "unit", "guessed"} <= set(t) for t in j["explain"])
    # deterministic
    assert j == estimate_capacity(a, H100, cfg()).to_json()


def test_non_shape_terms_are_flagged_guessed():
    p = profile("meta-llama/Llama-3.1-8B-Instruct", cfg())
    by_name = {t.name: t for t in p.explain}
    assert by_name["non_torch"].guessed and by_name["cuda_graph"].guessed
    assert not by_name["requested"].guessed and not by_name["sampler_peak"].guessed


def test_tp_adds_communication_buffers_only_when_tp_gt_1():
    one = profile("Qwen/Qwen3-14B", cfg())
    two = profile("Qwen/Qwen3-14B", cfg(tensor_parallel_size=2))
    assert two.non_torch_bytes - one.non_torch_bytes > GIB   # NCCL/NVLS + custom all-reduce on H100


@pytest.mark.parametrize("vllm, expected", [
    # V1 0.7.0-0.9.0 take the absolute torch peak: the runner's init buffers count. H100 defaults: 8,192 batched
    # tokens, 1,024 sequences; Llama-3.1-70B hidden 8192, bf16; block table 1,024 x ceil(2048 / 16) int32.
    ("0.7.0", 8192 * 8192 * 2 + 12 * 8192 + 1024 * 128 * 4),
    ("0.9.0", 8192 * 8192 * 2 + 12 * 8192 + 1024 * 128 * 4),
    ("0.9.1", 0),     # memory_profiling from 0.9.1: an increase over a snapshot taken after the buffers
])
def test_v1_absolute_peak_era_counts_the_runner_buffers(vllm, expected):
    from sched_reader.analyzers.pipeline import build_specs
    from sched_reader.models.memory_profile import runner_buffer_bytes
    argv = "VLLM_USE_V1=1 vllm serve meta-llama/Llama-3.1-70B-Instruct --max-model-len 2048".split()
    [spec] = build_specs([], argv, gpu="H100", vllm=vllm)
    eff = spec.effective
    assert (eff.engine, eff.max_num_batched_tokens, eff.max_num_seqs) == ("v1", 8192, 1024)
    assert runner_buffer_bytes(spec.arch, eff, 2) == expected
