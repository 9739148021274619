"""Data parallel (--data-parallel-size > 1): what each GPU holds and what one replica's step costs.

vLLM source facts: routed experts are split over every DP x TP GPU, attention and dense weights per TP group
(0.8.0 fused_moe/layer.py ``self.tp_size = self.tp_size * self.dp_size``; 0.14.1 fused_moe/config.py
``FusedMoEParallelConfig.flatten_tp_across_dp_and_pcp``: ``flatten_tp_size = dp_size * pcp_size * tp_size``);
without EP the MoE layer all-gathers every DP rank's tokens and reduce-scatters the result over the DP group
(0.14.1 ParallelConfig.all2all_backend default "allgather_reducescatter", AgRsAll2AllManager); dense DP ranks
are independent engines (0.14.1 v1/engine/core.py).
"""

from __future__ import annotations

from helpers import effective_config

from sched_reader.models.capacity import estimate_capacity
from sched_reader.models.cost.iteration import IterationCostModel
from sched_reader.models.gpu_catalog import resolve_gpu
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import weight_breakdown


def _cfg(tp, dp, **kw):
    return effective_config(tensor_parallel_size=tp, data_parallel_size=dp, vllm_version="0.14.1", **kw)


def test_glm47_fp8_tp4_dp2_expert_bytes_hand_calculation():
    arch = resolve_model("zai-org/GLM-4.7-FP8").arch
    # GLM-4.7 config.json: 92 layers, first_k_dense_replace 3 -> 89 MoE layers; 160 routed experts of
    # gate + up + down = 3 x hidden 5120 x moe_intermediate 1536 weights; FP8: 1 byte each.
    # Spread over TP 4 x DP 2 = 8 GPUs: 89 x 160 x 3 x 5120 x 1536 / 8 = 41,995,468,800 bytes (39.1 GiB)
    per_gpu = 89 * 160 * 3 * 5120 * 1536 // 8
    assert per_gpu == 41_995_468_800
    dp2 = weight_breakdown(arch, _cfg(4, 2), "fp8")
    assert dp2.components["moe_routed_experts"].bytes_per_gpu == per_gpu
    # attention stays split over the TP group of 4 only: the same bytes as TP 4 without DP
    tp4 = weight_breakdown(arch, _cfg(4, 1), "fp8")
    assert dp2.components["attention"].bytes_per_gpu == tp4.components["attention"].bytes_per_gpu
    assert tp4.components["moe_routed_experts"].bytes_per_gpu == 2 * per_gpu


def test_glm47_fp8_tp4_dp2_fits_an_h100_where_tp4_alone_does_not():
    # 78.2 GiB of experts per GPU at TP 4 leave no KV room in 0.9 x 79.2 GiB; at TP 4 x DP 2 they are 39.1 GiB
    res = resolve_model("zai-org/GLM-4.7-FP8")
    gpu = resolve_gpu("H100 SXM5 80GB").gpu
    assert estimate_capacity(res.arch, gpu, _cfg(4, 1, max_model_len=16384), "fp8").kv_cache.tokens == 0
    assert estimate_capacity(res.arch, gpu, _cfg(4, 2, max_model_len=16384), "fp8").kv_cache.tokens > 100_000


def test_gpt_oss_mxfp4_experts_tp4_dp2_as_tp8():
    arch = resolve_model("openai/gpt-oss-120b").arch
    gpu = resolve_gpu("H100 SXM5 80GB").gpu
    a = weight_breakdown(arch, _cfg(4, 2), "mxfp4", gpu).components["moe_routed_experts"].bytes_per_gpu
    b = weight_breakdown(arch, _cfg(8, 1), "mxfp4", gpu).components["moe_routed_experts"].bytes_per_gpu
    assert a == b


def test_moe_step_of_one_replica_runs_every_replicas_tokens():
    arch = resolve_model("zai-org/GLM-4.7-FP8").arch
    gpu = resolve_gpu("H100 SXM5 80GB").gpu
    m = IterationCostModel(arch, gpu, _cfg(4, 2), "fp8")
    moe = [g.moe for g in m.shapes.groups if g.moe][0]
    # each expert's width split 8 ways: 1536 / 8 = 192 columns of gate / up on one GPU
    assert min(min(lin.k, lin.n) for lin in moe.expert_linears) == 1536 // 8
    assert all(e[5] == 2.0 for e in m._experts)          # tokens routed x dp (all-gathered)
    assert m._ep_dispatch == 2                             # all-gather / reduce-scatter over the DP group
    assert "ep_alltoall" in m.breakdown(64, 64 * 2000, 0, 0.0).terms


def test_dense_replica_costs_as_the_same_engine_without_dp():
    arch = resolve_model("Qwen/Qwen3-32B").arch
    gpu = resolve_gpu("H100 SXM5 80GB").gpu
    a = IterationCostModel(arch, gpu, _cfg(4, 2))
    b = IterationCostModel(arch, gpu, _cfg(4, 1))
    for args in ((64, 64 * 3000, 0, 0.0, 0), (10, 10 * 500, 2048, 2048 * 1024.0, 1)):
        assert a.step_time(*args) == b.step_time(*args)


def test_diagnose_states_the_dp_split(run_cli):
    code, out, _ = run_cli("diagnose", "--vllm", "0.14.1", "--gpu", "H100", "--num-prompts", "100",
                           "--max-concurrency", "100", "--input-len", "1024", "--output-len", "128", "--explain",
                           "--", "vllm", "serve", "Qwen/Qwen3-32B", "--tensor-parallel-size", "4",
                           "--data-parallel-size", "2")
    text = " ".join(out.split())
    assert "TP 4 x PP 1 x DP 2" in text
    assert "per DP engine as each logs it (2 engines:" in text
    assert "50 requests in flight per DP engine" in text
    assert "data parallel 2: 2 engine replicas" in text and "50 clients per replica" in text


def test_moe_workspace_sized_by_every_dp_ranks_tokens():
    from sched_reader.models.memory_profile import _moe_workspace_bytes

    arch = resolve_model("zai-org/GLM-4.7-FP8").arch
    # profile run of 8,192 tokens on each of 2 DP ranks: the experts see M = 16,384 gathered rows; top-8,
    # hidden K = 5120, N = 2 x 1536 / 8 = 384 (< K): workspace13 = M x 8 x max(N/2, K) = M x 8 x 5120,
    # workspace2 = M x 8 x max(N, K) = M x 8 x 5120; bf16: 2 x 16,384 x 8 x 5120 x 2 bytes
    assert _moe_workspace_bytes(arch, _cfg(4, 2), 8192, 2) == 2 * 16384 * 8 * 5120 * 2
    assert _moe_workspace_bytes(arch, _cfg(8, 1), 8192, 2) == 2 * 8192 * 8 * 5120 * 2
