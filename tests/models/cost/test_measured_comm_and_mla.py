"""NVIDIA's measured TP all-reduce latency (shown, not used in the step) and the MLA decode module's latency floor (aiconfigurator-core tables,
derived by tools/derive_kernel_efficiency.py into models/cost/data/kernel_efficiency.json).

Every expected value below is read by hand from NVIDIA's parquet files (aiconfigurator-core 0.12.0,
systems/data/<gpu>/{comm,mla}/vllm/<release>/), quoted in the comments, or computed by hand from them."""

from __future__ import annotations

import pytest
from helpers import effective_config

from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.collectives import allreduce_source, allreduce_time
from sched_reader.models.cost.efficiency import DEFAULT_EFFICIENCY
from sched_reader.models.cost.iteration import LAYER_SMALL_KERNELS, MLA_MODULE_SMALL_KERNELS
from sched_reader.models.cost.kernels import allreduce_latency, allreduce_table, mla_module_floor
from sched_reader.models.gpu_catalog import resolve_gpu

H200 = resolve_gpu("H200 SXM 141GB").gpu
H100 = resolve_gpu("H100 SXM5 80GB").gpu


def test_h200_tp8_allreduce_table_is_the_median_of_the_measured_releases():
    # h200_sxm comm/vllm/<rel>/custom_allreduce_perf.parquet, backend vllm_graph, num_gpus 8 (latency in ms):
    #   32768 elements (64 KiB): 0.14.0 0.006603, 0.18.0 0.006576, 0.19.0 0.006473, 0.24.0 0.006561
    #   16384 elements (32 KiB): 0.14.0 0.005768, 0.18.0 0.005734, 0.19.0 0.005676, 0.24.0 0.005665
    # medians (mean of the middle two): 6.5688 us and 5.7054 us (the data file keeps 1 ns)
    at64k = (6.561279892921448 + 6.576319932937622) / 2 * 1e-6
    at32k = (5.676479935646057 + 5.734400153160095) / 2 * 1e-6
    table = allreduce_table(H200.name, "nvlink", 8)
    assert table[1][table[0].index(65536.0)] == pytest.approx(at64k, abs=1e-9)
    #   256 elements (512 B), the fastest call: 0.14.0 0.004676, 0.18.0 0.004665, 0.19.0 0.004652, 0.24.0 0.004801
    assert table[3] == pytest.approx((4.6646 + 4.6755) / 2 * 1e-6, abs=2e-9)
    # between measured sizes: latency + bytes / bandwidth of that segment (linear in bytes); beyond the largest
    # message (512 Mi elements = 1 GiB) the last segment's bandwidth holds
    assert allreduce_latency(table, 49152.0) == pytest.approx((at32k + at64k) / 2, abs=1e-9)
    assert allreduce_latency(table, 3.0e9) > allreduce_latency(table, 2.0e9) > allreduce_latency(table, 2.0 ** 30)


def test_the_step_keeps_the_ring_formula_and_shows_the_measurement_beside_it():
    """collectives.ALLREDUCE_IN_STEP: the isolated measurement (4.7 us at 8 H200) is shown, the ring formula used:
    10 us + 2 x 7/8 x 65,536 B / (0.7 x 450 GB/s) for a 64 KiB all-reduce."""
    ring = 10e-6 + 2 * 7 / 8 * 65536 / (0.7 * H200.link_unidir_gb_s * 1e9)
    assert allreduce_time(65536.0, 8, H200, DEFAULT_EFFICIENCY) == pytest.approx(ring, rel=1e-9)
    src = allreduce_source(8, H200, DEFAULT_EFFICIENCY)
    assert src.startswith("constants: allreduce_latency_s 10 us") and "isolated call measured from 4.7 us" in src
    # PCIe GPUs have no table (host topology decides), nor do unmeasured TP sizes
    assert allreduce_table(resolve_gpu("H100 PCIe").gpu.name, "pcie", 2) is None
    assert allreduce_table(H200.name, "nvlink", 16) is None
    assert "isolated" not in allreduce_source(16, H200, DEFAULT_EFFICIENCY)


def test_mla_module_floor_is_the_measured_one_sequence_call():
    # h200_sxm mla/vllm/0.24.0/mla_generation_module_perf.parquet, num_heads 16, batch_size 1, step 2 (ms):
    #   gemm_type fp8_block, kv bfloat16: FLASH_ATTN_MLA 0.0893; kv fp8: FLASHMLA 0.1119
    s, src = mla_module_floor(H200.name, "fp8_block", 2.0, 16)
    assert s == pytest.approx(89.3e-6) and "FLASH_ATTN_MLA" in src
    s, src = mla_module_floor(H200.name, "fp8_block", 1.0, 16)
    assert s == pytest.approx(111.9e-6) and "FLASHMLA" in src
    # h100_sxm, bf16 GEMMs, bf16 KV, 16 heads: 0.0963 ms
    assert mla_module_floor(H100.name, "bf16", 2.0, 16)[0] == pytest.approx(96.3e-6)
    assert mla_module_floor(H200.name, "fp8_block", 2.0, 3) is None          # head count not measured
    assert mla_module_floor("Instinct MI300X 192GB", "fp8_block", 2.0, 16) is None


DSV3 = ModelArch(id="deepseek-ai/DeepSeek-V3", model_type="deepseek_v3", config=dict(
    # huggingface.co/deepseek-ai/DeepSeek-V3 config.json
    hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048, num_hidden_layers=61,
    num_attention_heads=128, num_key_value_heads=128, vocab_size=129280, q_lora_rank=1536,
    kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=256,
    n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=3, n_group=8, topk_group=4,
    topk_method="noaux_tc", scoring_func="sigmoid",
    torch_dtype="bfloat16"))


def test_deepseek_mla_layer_at_one_sequence_costs_the_measured_module():
    """At one sequence of a short context, each of DeepSeek-V3's 61 MLA layers costs what NVIDIA measured for
    vLLM's whole MLA module on H200 (bf16 weights and KV here, 16 heads at TP8: FLASH_ATTN_MLA 0.0877 ms per
    mla_generation_module_perf.parquet): the model's projections + decode attention + the rotary/KV-write share
    of the small-kernel floor + the new mla_module_floor term add up to it."""
    m = IterationCostModel(DSV3, H200, effective_config(tensor_parallel_size=8))
    b = m.breakdown(1, 2, 0, 0.0)
    per_layer = (b.terms["qkv_o_proj"].time_s + b.terms["attention_decode"].time_s
                 + b.terms["mla_module_floor"].time_s) / 61
    small = MLA_MODULE_SMALL_KERNELS * DEFAULT_EFFICIENCY.layer_overhead_graph_s / LAYER_SMALL_KERNELS
    assert per_layer + small == pytest.approx(87.7e-6, rel=0.01)   # 2-token KV read ~0.3 ns: within 1%
    assert b.terms["mla_module_floor"].source.startswith("measured: H200 SXM 141GB MLA decode module 87.7 us")
    # the floor is per layer per step, whatever the batch: the same at 64 sequences
    b64 = m.breakdown(64, 64 * 2000, 0, 0.0)
    assert b64.terms["mla_module_floor"].time_s == pytest.approx(b.terms["mla_module_floor"].time_s)
    # without the measured tables (or on an unmeasured GPU) there is no such term
    const = IterationCostModel(DSV3, H200, effective_config(tensor_parallel_size=8), use_kernel_tables=False)
    assert "mla_module_floor" not in const.breakdown(1, 2, 0, 0.0).terms
    # the simulator's compiled step agrees with the model (it adds the same per-step floor, m._floor_extra_s)
    from sched_reader.models.cost.fast_step import compile_step_time
    assert compile_step_time(m) is not None


def test_grouped_topk_routing_kernels_follow_the_release():
    """DeepSeek-V3's noaux_tc grouped top-k on CUDA: decomposed by torch.compile up to 0.10.1 (9 kernels, read
    in the 0.7.3 / 0.8.4 / 0.10.1 wheels' fused_moe.py grouped_topk), fused_grouped_topk from 0.10.2 (PR #23274:
    sigmoid + bias, ops.grouped_topk, casts = 3), all in one CUDA kernel from 0.11.1 (PR #28124). Each kernel
    beyond the one moe_routing_overhead_s charges costs 12 us / 6 = 2 us per MoE layer (58 of DeepSeek-V3's 61)."""
    from sched_reader.models.cost.iteration import grouped_topk_kernels

    per_kernel = DEFAULT_EFFICIENCY.layer_overhead_graph_s / LAYER_SMALL_KERNELS
    assert per_kernel == pytest.approx(2e-6)
    for version, kernels in (("0.7.3", 9), ("0.8.4", 9), ("0.10.1", 9), ("0.10.2", 3), ("0.11.0", 3),
                             ("0.11.1", 1), ("0.19.0", 1)):
        assert grouped_topk_kernels(DSV3, H200, version)[0] == kernels, version
        m = IterationCostModel(DSV3, H200, effective_config(tensor_parallel_size=8, vllm_version=version))
        # the named constant stays as named (a speculative draft model and qk_norm_time read it); the kernels
        # beyond it are their own per-step term: 58 MoE layers x (kernels - 1) x 2 us
        assert m.eff.moe_routing_overhead_s == pytest.approx(2e-6)
        terms = m.breakdown(1, 2, 0, 0.0).terms
        if kernels > 1:
            assert terms["moe_routing_kernels"].time_s == pytest.approx(58 * (kernels - 1) * 2e-6)
        else:
            assert "moe_routing_kernels" not in terms
    # no correction bias (DeepSeek-V2's softmax group_limited_greedy): the decomposition in every release
    v2 = ModelArch(id="v2", model_type="deepseek_v2", config=dict(DSV3.config, topk_method="group_limited_greedy"))
    assert grouped_topk_kernels(v2, H200, "0.19.0")[0] == 9
    # other routers (softmax top-k kernel) and AMD GPUs: unchanged
    qwen = ModelArch(id="q", model_type="qwen3_moe", config={})
    assert grouped_topk_kernels(qwen, H200, "0.8.4") == (0, "")
    assert grouped_topk_kernels(DSV3, resolve_gpu("MI300X").gpu, "0.8.4") == (0, "")


def test_mla_matrix_absorption_reads_the_absorbed_weights_in_0_7():
    """vLLM 0.7.1-0.7.x absorb W_UK into q_b_proj and W_UV into o_proj (mla/utils.py, re-quantized to FP8 for
    FP8 checkpoints, the rope part of q_b kept in bf16). DeepSeek-V3 at TP8 (16 heads), FP8 weights, by hand:
      absorbed: W_Q_UK 16 x 512 x 1536 + W_UV_O 16 x 512 x 7168 = 71.3 M weights (FP8) + W_QR 1536 x 16 x 64 x 2 B
      replaced: q_b 1536 x 16 x 192 + kv_b 512 x 16 x 256 + o_proj 16 x 128 x 7168 = 21.5 M weights (FP8)
    With 1 byte per weight: 71,303,168 + 3,145,728 - 21,495,808 = 52,953,088 B per layer."""
    cfg07 = effective_config(tensor_parallel_size=8, vllm_version="0.7.3")
    m = IterationCostModel(DSV3, H200, cfg07, checkpoint_quantization="fp8")
    wb = m.precision.weight_bytes["attn"]
    extra, src = m._mla_absorbed_bytes()
    expected = (16 * 512 * (1536 + 7168)) * wb + 1536 * 16 * 64 * 2 - (1536 * 16 * 192 + 512 * 16 * 256
                                                                        + 16 * 128 * 7168) * wb
    assert extra == pytest.approx(expected)
    assert 52.9e6 < extra < 53.2e6   # ~1 B per weight (block scales add 1/16,384)
    t = m.breakdown(4, 4 * 3600, 0, 0.0).terms["mla_absorbed_weights"].time_s
    assert t == pytest.approx(61 * extra / m.bw)
    assert "matrix absorption" in src
    # 0.8.0 keeps W_UK_T / W_UV for two bmm (mla/common.py): nothing extra
    m8 = IterationCostModel(DSV3, H200, effective_config(tensor_parallel_size=8, vllm_version="0.8.0"),
                            checkpoint_quantization="fp8")
    assert "mla_absorbed_weights" not in m8.breakdown(4, 4 * 3600, 0, 0.0).terms


def test_shared_experts_overlap_the_routed_experts_from_0_11_1():
    """vLLM 0.11.1's FusedMoE runs a model's shared experts on aux_stream() beside the router gate and the routed
    experts when the step holds <= 256 tokens (VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD; fused_moe/layer.py,
    absent in 0.11.0): the shorter branch, here the shared expert, is hidden."""
    def model(version, gpu=H200):
        return IterationCostModel(DSV3, gpu, effective_config(tensor_parallel_size=8, vllm_version=version))

    # 0.11.0 vs 0.11.1 also differ in the grouped top-k kernel count (3 -> 1): compare on the MoE terms
    for T, hidden in ((4, True), (256, True), (257, False)):
        old = model("0.11.0").breakdown(T, T * 1000, 0, 0.0).terms
        new = model("0.11.1").breakdown(T, T * 1000, 0, 0.0).terms
        shared = old["moe_shared"].time_s
        assert shared < old["moe_router"].time_s + old["moe_experts"].time_s
        assert new["moe_experts"].time_s == pytest.approx(old["moe_experts"].time_s)
        assert new["moe_shared"].time_s == pytest.approx(0.0 if hidden else shared, abs=1e-12), T
        if hidden:
            assert "second CUDA stream" in new["moe_shared"].source
    # the simulator's compiled step agrees bit for bit on both sides of the threshold
    from sched_reader.models.cost.fast_step import compile_step_time
    m = model("0.11.1")
    f = compile_step_time(m)
    assert f is not None
    for nd, Tp in ((4, 0), (200, 56), (200, 57), (64, 2048)):
        assert f(nd, nd * 900, Tp, Tp * Tp / 2.0, 1 if Tp else 0) == m.step_time(nd, nd * 900, Tp, Tp * Tp / 2.0,
                                                                                1 if Tp else 0)
    # CUDA only: no aux stream on ROCm
    assert not model("0.11.1", resolve_gpu("MI300X").gpu)._shared_overlap


def test_per_step_floors_stay_out_of_the_named_constants():
    """The MLA module floor, the 0.7.x absorbed-weight reads and the extra routing kernels are DeepSeek-V3's own
    per-step terms. A one-layer MTP draft built on the target's efficiency constants must not inherit them
    (it charges its own single MLA layer), and the named per-layer constants keep their documented values
    (12 us per layer of small kernels, 2 us for the router: efficiency.py)."""
    from sched_reader.models.cost.speculative import SpeculativeModel

    m = IterationCostModel(DSV3, H200, effective_config(tensor_parallel_size=8, vllm_version="0.7.3"))
    terms = m.breakdown(1, 2, 0, 0.0).terms
    assert {"mla_module_floor", "mla_absorbed_weights", "moe_routing_kernels"} <= set(terms)
    assert m.eff.layer_overhead_graph_s == pytest.approx(12e-6)
    assert m.eff.moe_routing_overhead_s == pytest.approx(2e-6)
    spec = SpeculativeModel(m, {"method": "mtp", "num_speculative_tokens": 1})
    d = spec._draft.breakdown(1, 2, 0, 0.0).terms
    # one MLA layer of the draft: its module floor is 1/61 of the target's, not 61/61 more on top
    assert d["mla_module_floor"].time_s == pytest.approx(terms["mla_module_floor"].time_s / 61)
    assert d["layer_overhead"].time_s < 20e-6
