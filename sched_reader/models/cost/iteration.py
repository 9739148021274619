"""Roofline cost of one vLLM scheduler iteration (one forward pass over a mixed batch).

A batch is described in aggregate form (exact for attention cost linear in context length):
  num_decode          sequences generating one token each
  decode_context_sum  sum over those sequences of tokens already in their KV cache (incl. the new one)
  prefill_tokens      prompt tokens computed this step (sum of chunk sizes)
  prefill_attn_pairs  sum over prefill chunks of chunk x (prefix + chunk / 2): causal (query, key) pairs
  num_prefill_seqs    sequences with a prefill chunk this step (vLLM V1 computes logits for each)

Per term:  time = max(FLOPs / (peak_FLOPS[dtype] x gemm_or_attention_eff),
                      bytes / (peak_HBM_bandwidth x memory_eff))
Terms (per decoder layer group, summed over layers on one GPU):
  qkv_o_proj   2 x tokens x params FLOPs; weights + activations in/out bytes
  mlp          dense MLP (SwiGLU/GeGLU: gate, up, down; plain: fc1, fc2)
  moe_router / moe_shared / moe_experts
               routed experts: FLOPs 2 x routed tokens x expert params; weight bytes of the distinct
               experts touched: E_local x (1 - (1 - k/E)^tokens) (uniform routing); under expert
               parallelism the busiest of the ep ranks sets the layer's time (routing noise: ep_load_excess;
               hot experts: ep_popularity_excess)
  attention_decode   FLOPs 2 x heads x (qk_dim + v_dim) x context tokens; bytes = KV read
  attention_prefill  FLOPs 2 x heads x (qk_dim + v_dim) x causal pairs; bytes = KV of the new tokens
                     (sliding-window layers: context capped at window per sequence)
  elementwise  norms, residual, activation, rotary, KV write: bytes per token (memory-bound)
  embedding, lm_head (only for sequences that emit a token), sampler (logits reads)
  tp_allreduce 2 per layer + 1 for the vocab-parallel embedding, ring 2(n-1)/n x bytes
  qk_norm_allreduce  models whose QK-norm spans all heads (qk_norm_type per_layer: MiniMax-M2) under TP:
               1-2 all-reduces of the [tokens] fp32 sums of squares per layer (see QK_NORM_TP_FUSED_FROM)
  ep_alltoall  dispatch + combine per MoE layer when data parallel DP > 1 (across the EP group with expert
               parallel, across the DP group without: all-gather + reduce-scatter); with DP = 1 the experts'
               partial sums are combined by the layer's TP all-reduce
  pp_send      (pp - 1) activation sends
  layer_overhead  latency floor of small kernels per layer (CUDA graphs) or host launch (eager)
  cpu          scheduler + input preparation + output processing; overlapped when async scheduling
Units: seconds, FLOPs, bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost.collectives import allgather_time, allreduce_source, allreduce_time, p2p_time
from sched_reader.models.cost.efficiency import Efficiency, efficiency_for
from sched_reader.models.cost.gpt_oss_paths import path_note as gpt_oss_path_note
from sched_reader.models.cost.kernels import (decode_attention_fit, efficiency_at, gemm_efficiency_curve,
                                              gemm_format, interp_scalar, mla_module_floor, moe_efficiency_curve,
                                              moe_format, moe_latency_floor, prefill_attention_curve)
from sched_reader.models.cost.moe_default_tiles import old_default_stream_cap, old_default_tiles_note
from sched_reader.models.cost.precision import Precision, peak_flops, resolve_precision
from sched_reader.models.cost.rocm_paths import gemm_curve as rocm_gemm_curve
from sched_reader.models.cost.rocm_paths import moe_curve as rocm_moe_curve
from sched_reader.models.cost.rocm_paths import (mla_decode_occupancy, path_slowdown, prefill_attention_full_tiles,
                                                 prefill_attention_path)
from sched_reader.models.cost.shapes import Linear, ModelShapes, model_shapes
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.gpu import GPU
from sched_reader.versions import parse_version

# Largest token count vLLM V1 replays from a captured CUDA graph by default (CompilationConfig
# cudagraph capture sizes end at 512; from 0.11 max_cudagraph_capture_size = min(2 x max_num_seqs, 512)).
# Larger batches run piecewise without graphs: the host launch time bounds the layer stack from below.
CUDAGRAPH_MAX_TOKENS = 512

# Elementwise traffic per token per layer, in units of hidden-size activations: 2 RMSNorms (read +
# write = 4), 2 residual adds (read 2 + write 1 each = 6) -> 10 x hidden; gated activation reads gate
# and up and writes the product: 3 x intermediate.
ELEMENTWISE_HIDDEN_PASSES = 10
ELEMENTWISE_INTER_PASSES = 3
# Small latency-bound kernels that Efficiency.layer_overhead_graph_s stands for (2 RMSNorm, rotary,
# activation, residual, KV-cache write): its per-kernel floor is layer_overhead_graph_s / this count.
LAYER_SMALL_KERNELS = 6
# QK-norm over all heads (config ``qk_norm_type: per_layer``, MiniMax-M2/M2.1/M2.5): vLLM's
# ``MiniMaxText01RMSNormTP`` (vllm/model_executor/models/minimax_m2.py) sums squares over the rank's
# share of the heads, all-reduces the per-token fp32 sums across the TP group and then scales, so every
# layer adds TP all-reduces on top of the two of a dense layer. Up to 0.13 q and k each ran their own
# (sum kernel, all-reduce, scale kernel: 2 all-reduces and 2 more small kernels than a rank-local norm);
# vLLM PR #31493 "Optimize QKNorm for MiniMax-M2/M2.1" (github.com/vllm-project/vllm/pull/31493, opened
# 2025-12-29, after 0.13.0's 2025-12-16 source commit) fuses them into one all-reduce of [tokens, 2]
# (sglang PR #14416 shows the same 6 -> 3 kernel reduction). First release with it (vLLM release, tuple):
QK_NORM_TP_FUSED_FROM = (0, 14, 0)
QK_NORM_SUM_BYTES = 4  # fp32 sum of squares per token per norm
# The DeepSeek-V3 MLA attention module NVIDIA timed (kernels.mla_module_floor): hidden 7168, q_lora_rank 1536,
# kv_lora_rank 512, qk_nope 128 + qk_rope 64 per head, v_head_dim 128 (huggingface.co/deepseek-ai/DeepSeek-V3
# config.json). Its projections at one token are subtracted from the measured module (see _mla_chain_floor).
MLA_MODULE_DIMS = {"hidden": 7168, "q_lora": 1536, "kv_lora": 512, "nope": 128, "rope": 64, "v": 128}
# Of the LAYER_SMALL_KERNELS that layer_overhead_graph_s stands for, those inside the MLA module (rotary and the
# KV-cache write): not charged twice
MLA_MODULE_SMALL_KERNELS = 2
# DeepSeek-style grouped top-k routing (vLLM's DeepseekV2MoE: FusedMoE(use_grouped_topk=True), model types below):
# kernels per MoE layer per step, read in the release wheels' vllm/model_executor/layers/fused_moe/fused_moe.py.
# grouped_topk() (torch.compile'd) decomposes into sigmoid/softmax + bias add, topk(2) per group, group sum,
# topk over groups, zeros + scatter of the group mask, the masked fill over experts, topk(k), gather of the
# unbiased weights, renormalisation and the two output casts: 9 kernels once inductor fuses the pointwise ones
# (17 torch ops eager). From 0.10.2 (vLLM PR #23274) configs with an e_score_correction_bias ("noaux_tc") take
# fused_grouped_topk on CUDA: one pointwise kernel for sigmoid + bias, ops.grouped_topk, one for the casts (3);
# from 0.11.1 (PR #28124) sigmoid, bias and casts are inside the one CUDA kernel (1). Softmax scoring without a
# bias (DeepSeek-V2) keeps the decomposition. moe_routing_overhead_s already charges one kernel; each further
# one costs layer_overhead_graph_s / LAYER_SMALL_KERNELS (~2 us, the CUDA-graph replay floor). vLLM PR #53580
# (github.com/vllm-project/vllm/pull/53580) counted the decomposition at 7.1x the fused path's launches.
GROUPED_TOPK_MODEL_TYPES = ("deepseek_v2", "deepseek_v3", "kimi_k2")
GROUPED_TOPK_KERNELS = ((None, 9), ((0, 10, 2), 3), ((0, 11, 1), 1))   # (first release, kernels), noaux_tc on CUDA
GROUPED_TOPK_NATIVE_KERNELS = 9


def grouped_topk_kernels(arch: ModelArch, gpu: GPU, vllm_version: str | None) -> tuple[int, str]:
    """(kernels, reason) of vLLM's grouped top-k routing per MoE layer per step; (0, "") for other routers."""
    if str(arch.model_type or "") not in GROUPED_TOPK_MODEL_TYPES:
        return 0, ""
    cfg = arch.config or {}
    if str(cfg.get("topk_method") or "") != "noaux_tc" or str(gpu.vendor or "").upper() != "NVIDIA":
        if str(gpu.vendor or "").upper() != "NVIDIA":
            return 0, ""   # ROCm: the fused path is CUDA-only, AITER's per environment (rocm_paths' domain)
        return GROUPED_TOPK_NATIVE_KERNELS, "grouped_topk decomposed (softmax scoring, no correction bias)"
    v = parse_version(vllm_version)
    n, since = GROUPED_TOPK_KERNELS[0][1], None
    for first, k in GROUPED_TOPK_KERNELS[1:]:
        if v >= first:
            n, since = k, first
    how = ("grouped_topk decomposed by torch.compile" if since is None else
           f"fused_grouped_topk ({'sigmoid, bias and casts in the CUDA kernel' if n == 1 else 'sigmoid + bias, CUDA kernel, casts'})")
    return n, how


# MLA matrix absorption (vLLM 0.7.1-0.7.x, vllm/attention/backends/mla/utils.py, VLLM_MLA_PERFORM_MATRIX_ABSORPTION
# default 1; gone in 0.8.0's mla/common.py, which keeps W_UK_T / W_UV for two bmm): at load, W_UK is folded into
# q_b_proj (W_Q_UK: q_lora x heads x kv_lora) and W_UV into o_proj (W_UV_O: heads x kv_lora x hidden), both
# re-quantized to the checkpoint's FP8 block format (else kept in the activation dtype), and the rope part of
# q_b_proj kept apart in the activation dtype (W_QR: q_lora x heads x rope). Decode reads these instead of
# q_b_proj, kv_b_proj and o_proj: 4x the bytes for o_proj alone (DeepSeek-V3 at TP8: +52.9 MB per layer per GPU)
MLA_ABSORBED = ((0, 7, 1), (0, 8, 0))   # [first release with MLA, first release without absorption)
# Shared experts on their own CUDA stream (vLLM 0.11.1+, vllm/model_executor/layers/fused_moe/layer.py: models whose
# FusedMoE holds its shared experts (SharedFusedMoE: DeepSeek-V2/V3, Kimi, GLM-4.5, Qwen2/3-Next MoE, Llama 4...)
# run them on aux_stream() in parallel with the router gate and the routed experts when the step holds at most
# VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD (256) tokens; CUDA only (aux_stream() is None elsewhere), not with
# data-parallel chunking; absent in 0.11.0). The shorter of the two branches is hidden: min(shared, router +
# routed experts) comes off the moe_shared term (an upper bound on the gain when both branches stream weights).
SHARED_EXPERTS_STREAM_FROM = (0, 11, 1)
SHARED_EXPERTS_STREAM_MAX_TOKENS = 256
# Sampler: softmax / top-k / top-p passes over fp32 logits per emitted token.
SAMPLER_LOGIT_PASSES = 3
LOGIT_BYTES = 4  # logits are materialized in fp32


@dataclass
class TermCost:
    """One cost term of an iteration. ``bound`` is compute | memory | communication | latency."""

    name: str
    flops: float = 0.0
    bytes: float = 0.0
    compute_s: float = 0.0
    memory_s: float = 0.0
    time_s: float = 0.0
    peak_flops: float = 0.0       # achievable FLOP/s used for this term
    bandwidth: float = 0.0        # achievable B/s used for this term
    bound: str = "memory"
    source: str = ""              # where the efficiency of this term comes from (measured table or constant)

    @property
    def intensity(self) -> float | None:
        """FLOPs per byte moved from HBM."""
        return self.flops / self.bytes if self.bytes else None

    @property
    def ridge(self) -> float | None:
        """Arithmetic intensity (FLOP/byte) at which this term turns compute-bound."""
        return self.peak_flops / self.bandwidth if self.bandwidth and self.peak_flops else None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "flops": self.flops, "bytes": self.bytes, "time_s": self.time_s,
                "compute_s": self.compute_s, "memory_s": self.memory_s, "bound": self.bound,
                "intensity_flop_per_byte": self.intensity, "ridge_flop_per_byte": self.ridge,
                "source": self.source}


@dataclass
class IterationCost:
    """Breakdown of one iteration: terms, GPU time, host time, step time, pipeline interval."""

    terms: dict[str, TermCost]
    gpu_time_s: float
    cpu_time_s: float
    step_time_s: float
    pipeline_interval_s: float
    tokens: int
    async_overlap: bool
    notes: list[str] = field(default_factory=list)

    @property
    def flops(self) -> float:
        return sum(t.flops for t in self.terms.values())

    @property
    def bytes(self) -> float:
        return sum(t.bytes for t in self.terms.values())

    @property
    def intensity(self) -> float | None:
        return self.flops / self.bytes if self.bytes else None

    @property
    def bound(self) -> str:
        """The bound (compute / memory / communication / latency) that accounts for the most time."""
        acc: dict[str, float] = {}
        for t in self.terms.values():
            acc[t.bound] = acc.get(t.bound, 0.0) + t.time_s
        return max(acc, key=acc.get) if acc else "memory"

    @property
    def ridge(self) -> float | None:
        """Ridge point of the largest GEMM term (FLOP/byte)."""
        gemms = [t for t in self.terms.values() if t.peak_flops and t.bandwidth]
        if not gemms:
            return None
        return max(gemms, key=lambda t: t.time_s).ridge

    def as_dict(self) -> dict[str, Any]:
        return {"step_time_s": self.step_time_s, "gpu_time_s": self.gpu_time_s, "cpu_time_s": self.cpu_time_s,
                "pipeline_interval_s": self.pipeline_interval_s, "tokens": self.tokens,
                "flops": self.flops, "bytes": self.bytes, "intensity_flop_per_byte": self.intensity,
                "ridge_flop_per_byte": self.ridge, "bound": self.bound, "async_overlap": self.async_overlap,
                "terms": [t.as_dict() for t in self.terms.values()], "notes": list(self.notes)}


@dataclass(frozen=True)
class DecodeLinearModel:
    """Closed form of a decode-only step at a fixed batch size ``num_decode``.

    gpu(S) = gpu_intercept_s + slope_full_s_per_token x S + slope_window_s_per_token x min(S, window_cap)
    step(S) = max(gpu(S), cpu_s) with async scheduling, else gpu(S) + cpu_s
    where S is the decode context sum and window_cap = num_decode x window (sliding-window layers).
    Exact for the roofline model (attention decode is linear in context because the KV read and the
    score FLOPs both scale with S, so their max is linear too).
    """

    num_decode: int
    gpu_intercept_s: float
    slope_full_s_per_token: float
    slope_window_s_per_token: float
    window_cap_tokens: float
    cpu_s: float
    async_overlap: bool

    def time(self, context_sum: float) -> float:
        gpu = (self.gpu_intercept_s + self.slope_full_s_per_token * context_sum
               + self.slope_window_s_per_token * min(context_sum, self.window_cap_tokens))
        return max(gpu, self.cpu_s) if self.async_overlap else gpu + self.cpu_s


@lru_cache(maxsize=64)
def expected_max_std_normal(n: int) -> float:
    """E[max of n independent standard normal draws] (dimensionless): 0.564 for 2, 1.029 for 4, 1.424 for 8,
    1.766 for 16 (Tippett 1925's table), by numerical integration of x n phi(x) Phi(x)^(n-1) over [-9, 9]
    (trapezoid rule, step 0.02: the integrand is smooth and vanishes at both ends, so the sum agrees with
    the table to 5 decimals; ~1 ms)."""
    if n <= 1:
        return 0.0
    h = 0.02
    total = 0.0
    for i in range(901):
        x = -9.0 + i * h
        total += x * n * math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi) * (0.5 * (1 + math.erf(x / math.sqrt(2)))) ** (n - 1)
    return total * h


def ep_load_excess(num_experts: int, top_k: int, local_experts: int, ep_size: int) -> float:
    """Load excess of the busiest expert-parallel rank, in tokens per sqrt(token) (0 without EP).

    With EP each rank runs only the token-expert pairs routed to its ``local_experts`` of ``num_experts``,
    and the layer's closing all-reduce (or combine) waits for the busiest rank. Under uniform routing a
    token puts a hypergeometric number of its ``top_k`` picks on a given rank: mean k p, variance
    k p (1 - p) (E - k) / (E - 1) with p = local / E; over T tokens the pairs on a rank have mean T k p and
    standard deviation sqrt(T) x that root, and the busiest of ``ep_size`` ranks holds about
    mean + expected_max_std_normal(ep_size) x sd of them (normal approximation). That equals the mean
    load of T + excess x sqrt(T) tokens, excess = z(ep) x sqrt((1 - p) (E - k) / ((E - 1) k p)).
    Real routers are less even than uniform (hot experts): that part is ep_popularity_excess."""
    if ep_size <= 1 or local_experts <= 0 or num_experts <= top_k:
        return 0.0
    p = local_experts / num_experts
    var_per_token = top_k * p * (1 - p) * (num_experts - top_k) / (num_experts - 1)
    return expected_max_std_normal(int(ep_size)) * math.sqrt(var_per_token) / (top_k * p)


# Spread of routed tokens over a MoE layer's experts from the router's own preferences (hot experts), as a
# coefficient of variation of tokens per expert within one layer and step (dimensionless). Source: NVIDIA
# TensorRT-LLM tech blog 4 "Scaling Expert Parallelism in TensorRT-LLM (Part 1)", Table 1
# (github.com/NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md):
# DeepSeek-R1 on 32 GB200 GPUs (EP 32, 8 experts per rank, no EPLB), machine-translation dataset, averaged over
# layers and iterations: tokens per expert slot mean 128, std 164.1 -> 1.28; tokens per rank mean 1024, std 491.6
# (0.48, = 1.28 / sqrt(8) for independent experts: 0.45), busiest rank (max - mean) / mean 1.564.
EXPERT_LOAD_CV = 1.28


def ep_popularity_excess(local_experts: int, ep_size: int) -> float:
    """Extra share of routed tokens on the busiest expert-parallel rank from expert popularity (dimensionless,
    (max - mean) / mean; 0 without EP). A rank's load sums ``local_experts`` experts' loads, each with
    coefficient of variation EXPERT_LOAD_CV, so the rank's CV is EXPERT_LOAD_CV / sqrt(local_experts); rank
    loads are taken as lognormal (right-skewed, as the measured loads are) with that CV, and the busiest of
    ``ep_size`` ranks at exp(-s^2 / 2 + s z(ep)) of the mean, s^2 = ln(1 + CV^2), z = expected_max_std_normal.
    Against the measurement EXPERT_LOAD_CV comes from: EP 32 with 8 experts per rank gives 1.22 where the
    blog measured 1.564 (a lower bound); EP 8 with 32 per rank (DeepSeek-R1 on one 8-GPU node) gives 0.34,
    EP 4 with 64 per rank 0.16. Independent of the batch size, unlike the routing noise of ep_load_excess.
    vLLM's --enable-eplb (redundant experts, rebalanced placement) is not modelled: with it the blog measured
    0.11."""
    if ep_size <= 1 or local_experts <= 0:
        return 0.0
    cv = EXPERT_LOAD_CV / math.sqrt(local_experts)
    s = math.sqrt(math.log1p(cv * cv))
    return math.exp(-0.5 * s * s + s * expected_max_std_normal(int(ep_size))) - 1.0


def _qk_norm_tp(arch: ModelArch, tp: int, vllm_version: str | None) -> tuple[int, int, int]:
    """(all-reduces per layer, fp32 sums per token in each, extra small kernels per layer) of an all-heads
    QK-norm under tensor parallelism; (0, 0, 0) when the model has none or TP is 1. See QK_NORM_TP_FUSED_FROM."""
    if tp <= 1 or str(arch.get("qk_norm_type") or "") != "per_layer" or not arch.get("use_qk_norm", True):
        return (0, 0, 0)
    if parse_version(vllm_version) >= QK_NORM_TP_FUSED_FROM:
        return (1, 2, 0)
    return (2, 1, 2)


def _roof(flops, nbytes, rate, bw, mx):
    return mx(flops / rate, nbytes / bw)


class IterationCostModel:
    """Roofline time of one scheduler iteration for (model, GPU, serving config).

    ``checkpoint_quantization``: the weight format implied by the checkpoint (``"fp8"``, ``"awq"``,
    ``"mxfp4"``...), as returned by the model catalog; ``efficiency`` overrides the named factors;
    ``use_kernel_tables=False`` ignores the measured kernel tables (kernels.py) and uses the named
    constants for every term.
    One instance models ONE data-parallel rank (its TP x PP GPUs). Stable interface for the simulator:
    ``step_time``, ``breakdown``, ``decode_step_time_vec``, ``decode_linear``.
    """

    def __init__(self, arch: ModelArch, gpu: GPU, cfg: EffectiveConfig,
                 checkpoint_quantization: str | None = None, efficiency: Efficiency | None = None,
                 use_kernel_tables: bool = True) -> None:
        self.arch = arch
        self.gpu = gpu
        self.cfg = cfg
        self.eff = efficiency or efficiency_for(gpu)
        self.tp = max(1, int(cfg.tensor_parallel_size))
        self.pp = max(1, int(cfg.pipeline_parallel_size))
        self.dp = max(1, int(cfg.data_parallel_size))
        self.shapes: ModelShapes = model_shapes(arch, self.tp, self.dp, bool(cfg.enable_expert_parallel))
        self.precision: Precision = resolve_precision(arch, gpu, cfg, checkpoint_quantization)
        self.bw = gpu.hbm_bandwidth_tb_s * 1e12 * self.eff.memory_bandwidth
        self.kv_bw = gpu.hbm_bandwidth_tb_s * 1e12 * self.eff.kv_read_bandwidth
        # attention kernels compute in the activation dtype (16-bit) whatever the weight format
        self.attn_rate = peak_flops(gpu, self.precision.act_key) * self.eff.attention_compute
        self._attn_peak = peak_flops(gpu, self.precision.act_key)
        # measured decode attention launch + per-sequence cost, and prefill attention efficiency by prompt
        # length (models/cost/kernels.py); the named constants when not measured. The KV read bandwidth
        # stays kv_read_bandwidth: the table's fraction (0.9+ of peak on Hopper) was measured on batches
        # of equal-length sequences, where every split of the kernel's work ends together; serving batches
        # mix lengths and the longest sequences set the kernel's time (see efficiency.SOURCES)
        self._dec_fit = decode_attention_fit(gpu.name, self.precision.kv_bytes) if use_kernel_tables else None
        self._pre_curve = prefill_attention_curve(gpu.name, self.precision.kv_bytes) if use_kernel_tables else None
        self._use_tables = use_kernel_tables
        self.async_overlap = bool(cfg.async_scheduling)
        self._cpu_per_seq = (self.eff.step_cpu_per_seq_v0_s if str(getattr(cfg, "engine", "v1")) == "v0"
                             else self.eff.step_cpu_per_seq_s)
        self.eager = bool(cfg.enforce_eager)
        # batches above the largest captured CUDA graph run without graphs (host launches per op)
        self._graph_max_tokens = min(2 * int(cfg.max_num_seqs), CUDAGRAPH_MAX_TOKENS)
        self._qk_norm_tp = _qk_norm_tp(arch, self.tp, getattr(cfg, "vllm_version", None))
        self._prep()

    def qk_norm_time(self, T: int) -> float:
        """Seconds per step of an all-heads QK-norm under TP for ``T`` tokens: its all-reduces of the fp32 sums
        of squares and its extra small kernels, every layer (0 when the model has none; see _qk_norm_tp)."""
        n_ar, sums, kernels = self._qk_norm_tp
        if not n_ar:
            return 0.0
        return self._L * (n_ar * allreduce_time(T * sums * QK_NORM_SUM_BYTES, self.tp, self.gpu, self.eff)
                          + kernels * self.eff.layer_overhead_graph_s / LAYER_SMALL_KERNELS)

    # ------------------------------------------------------------------ precomputation
    def _rate(self, component: str) -> float:
        dtype = self.precision.compute[component]
        return peak_flops(self.gpu, dtype) * self.eff.gemm_fraction(dtype)

    def _lin(self, lins: tuple[Linear, ...], count: int) -> tuple[float, float, float, float]:
        """(FLOPs per token, weight bytes, activation bytes per token, FLOP rate) for ``count`` layers."""
        if not lins:
            return (0.0, 0.0, 0.0, 1.0)
        comp = lins[0].component
        wb = self.precision.weight_bytes[comp]
        ab = self.precision.act_bytes
        params = sum(lin.params for lin in lins)
        return (2.0 * params * count, params * wb * count, ab * sum(lin.k + lin.n for lin in lins) * count,
                self._rate(comp))

    def _parts(self, lins: tuple[Linear, ...], count: int):
        """Per-GEMM (FLOPs per token, weight bytes, activation bytes per token, peak FLOP/s, measured
        efficiency curve) for ``count`` layers, or None when any of them was not measured (the
        component then keeps the named constants)."""
        if not lins or not self._use_tables:
            return None
        comp = lins[0].component
        key = gemm_format(self.precision.fmt, self.precision.weight_bytes[comp], self.precision.compute[comp])
        wb = self.precision.weight_bytes[comp]
        ab = self.precision.act_bytes
        peak = peak_flops(self.gpu, self.precision.compute[comp])
        out = []
        for lin in lins:
            curve = gemm_efficiency_curve(self.gpu.name, key, lin.n, lin.k)
            if curve is None:   # AMD: AITER's measured GEMM tables, per kernel path (rocm_paths.gemm_curve)
                curve = rocm_gemm_curve(self.gpu, self.cfg, key, lin.n, lin.k, peak, wb, ab, self.eff.memory_bandwidth)
            if curve is None:
                return None
            out.append((2.0 * lin.params * count, lin.params * wb * count, ab * (lin.k + lin.n) * count, peak, curve))
        return tuple(out)

    def _prep(self) -> None:
        p = self.precision
        s = self.shapes
        ab = p.act_bytes
        self._linear_terms: list[tuple[str, tuple[float, float, float, float], Any]] = []
        self._experts: list[tuple[int, float, float, float, float, float, int, float]] = []
        self._ep_note = ""
        self._attn: list[tuple[int, float, float, float, float, int | None]] = []
        self._elem_bytes_per_token = 0.0
        for g in s.groups:
            self._linear_terms.append(("qkv_o_proj", self._lin(g.attn_linears, g.count),
                                       self._parts(g.attn_linears, g.count)))
            by_comp: dict[str, list[Linear]] = {}
            for lin in g.mlp_linears:
                by_comp.setdefault(lin.component, []).append(lin)
            for comp, lins in by_comp.items():
                name = {"mlp": "mlp", "router": "moe_router", "shared": "moe_shared"}[comp]
                self._linear_terms.append((name, self._lin(tuple(lins), g.count), self._parts(tuple(lins), g.count)))
            if g.moe:
                m = g.moe
                # DP > 1: every GPU's expert shard runs the tokens of all DP ranks (all-gathered; lockstep,
                # vLLM FusedMoE dispatch/combine), taken as equal to this rank's (balanced replicas)
                # EP: the busiest rank's share of the routed tokens from expert popularity (ep_popularity_excess)
                pop = ep_popularity_excess(m.local_experts, m.ep_size)
                route_mult = float(self.dp) * (1.0 + pop)
                if pop and not self._ep_note:
                    self._ep_note = (f"expert parallel {m.ep_size}: the busiest rank carries {pop:+.0%} of the mean "
                                     f"routed tokens from expert popularity ({m.local_experts} experts per rank, "
                                     f"per-expert CV {EXPERT_LOAD_CV}: TensorRT-LLM blog 4, DeepSeek-R1 without "
                                     "EPLB; a lower bound)")
                self._experts.append((g.count, float(m.num_experts), float(m.top_k), float(m.local_experts),
                                      float(m.expert_params), route_mult, sum(lin.k + lin.n for lin in m.expert_linears),
                                      ep_load_excess(m.num_experts, m.top_k, m.local_experts, m.ep_size)))
            a = g.attention
            kvb = p.kv_bytes
            self._attn.append((g.count,
                               2.0 * a.heads * (a.decode_qk_dim + a.decode_v_dim),   # FLOPs per decode ctx token
                               a.kv_elems_per_token * kvb,                          # bytes per decode ctx token
                               2.0 * a.heads * (a.qk_dim + a.v_dim),                # FLOPs per prefill pair
                               a.kv_elems_per_token * kvb,                          # bytes per prefill token
                               a.window))
            self._elem_bytes_per_token += g.count * (
                ab * (ELEMENTWISE_HIDDEN_PASSES * s.hidden + ELEMENTWISE_INTER_PASSES * g.act_width)
                + ab * a.heads * (a.qk_dim + a.v_dim)          # attention q in / o out
                + a.kv_elems_per_token * kvb)                  # KV-cache write
        self._expert_rate = self._rate("experts")
        self._expert_wb = p.weight_bytes["experts"]
        # measured fused-MoE efficiency by tokens per step (models/cost/kernels.py), when the GPU and
        # expert format were measured; else the named constants apply
        self._moe_curve = None
        self._moe_floor: tuple[float, str] | None = None   # (s per MoE layer, provenance) without a curve
        self._tiles_key: tuple[str, int, int] | None = None   # (format, local experts, N) for old_default_tiles_note
        # (bytes/s, local experts): vLLM's old default tiles cap the expert stream at <= local experts tokens per step
        self._moe_cap: tuple[float, int] | None = None
        moe_groups = [g.moe for g in s.groups if g.moe]
        if moe_groups and self._use_tables:
            m0 = moe_groups[0]
            lin = m0.expert_linears
            inter_local = min(min(x.k, x.n) for x in lin) if lin else 0
            fkey = moe_format(p.fmt, p.weight_bytes["experts"])
            self._moe_curve = moe_efficiency_curve(self.gpu.name, fkey, s.hidden, inter_local, m0.local_experts,
                                                   m0.top_k)
            self._tiles_key = (fkey, m0.local_experts, inter_local)
            cap = old_default_stream_cap(getattr(self.cfg, "vllm_version", None), self.gpu, fkey, m0.local_experts,
                                         inter_local)
            if cap:
                self._moe_cap = (cap, m0.local_experts)
            if self._moe_curve is None:   # AMD: AITER's measured fused MoE on MI300X, per kernel path (rocm_paths.py)
                self._moe_curve = rocm_moe_curve(self.gpu, self.cfg, fkey, s.hidden, inter_local, m0.num_experts,
                                                 m0.top_k, peak_flops(self.gpu, p.compute["experts"]),
                                                 p.weight_bytes["experts"], p.act_bytes)
            if self._moe_curve is None:
                self._moe_floor = moe_latency_floor(fkey)
        self._expert_peak = peak_flops(self.gpu, p.compute["experts"])
        self._peak_bw = self.gpu.hbm_bandwidth_tb_s * 1e12
        lm = s.lm_head
        self._lm = (2.0 * lm.params, lm.params * p.weight_bytes["lm_head"], lm.n * LOGIT_BYTES + ab * lm.k,
                    self._rate("lm_head"))
        lm_parts = self._parts((lm,), 1)
        self._lm_curve = lm_parts[0][4] if lm_parts else None
        self._lm_peak = peak_flops(self.gpu, p.compute["lm_head"])
        e = self.eff
        self._const_gemm = (f"constants: gemm_compute {e.gemm_label(p.compute.values())} of peak FLOP/s, "
                            f"memory_bandwidth {e.memory_bandwidth:.2f} of peak HBM B/s (no measured table for "
                            f"this GPU/format){e.tag('gemm_compute', 'memory_bandwidth')}")
        # AMD Instinct: the kernel vLLM runs for block-FP8 linear layers and fused MoE (Triton or AITER) per
        # release and VLLM_ROCM_* environment, as a factor on the constants' roofline (models/cost/rocm_paths.py;
        # 1.0 and no source on every other GPU)
        comp_of = {"qkv_o_proj": "attn", "mlp": "mlp", "moe_router": "router", "moe_shared": "shared"}
        self._lin_slow: list[float] = []
        self._lin_slow_src: list[str] = []
        for name, _, parts in self._linear_terms:
            comp = comp_of.get(name, "")
            hit = None
            if parts is None and comp in p.compute:
                hit = path_slowdown(self.gpu, self.cfg, "gemm",
                                    gemm_format(p.fmt, p.weight_bytes[comp], p.compute[comp]))
            self._lin_slow.append(hit[0] if hit else 1.0)
            self._lin_slow_src.append("; kernel path: " + hit[1] if hit else "")
        self._moe_slow, self._moe_slow_src = 1.0, ""
        # MLA decode on vLLM's Triton kernel (AMD without AITER MLA): its workgroups per sequence / CUs; the KV-read
        # time is divided by min(1, batch x this) (rocm_paths.mla_decode_occupancy); 0.0 = not on this path
        self._attn_occ: list[float] = []
        self._attn_occ_src = ""
        for g in s.groups:
            hit = (mla_decode_occupancy(self.gpu, self.cfg, g.attention.heads)
                   if g.attention.kind == "mla" else None)
            self._attn_occ.append(hit[0] if hit else 0.0)
            if hit:
                self._attn_occ_src = "; kernel path: " + hit[1]
        # AMD Instinct: prompt-token attention at the measured fraction of the kernel vLLM runs (Triton, CK or
        # AITER flash attention, per engine, release and environment: rocm_paths.prefill_attention_path), in place
        # of the fallback attention_compute (every other GPU keeps attn_rate or its measured curve). MLA layers: the
        # kernel ROCm runs for them, whose value head is zero-padded to the query/key head dim (mla/common.py
        # _pad_v: 2 h (qk + qk) FLOPs per pair, not 2 h (qk + v)), charged as a lower rate (FLOP/s)
        pre_hit = prefill_attention_path(self.gpu, self.cfg) if self._pre_curve is None else None
        mla_hit = prefill_attention_path(self.gpu, self.cfg, mla=True) if self._pre_curve is None else None
        self._pre_rates: list[float] = []
        srcs: list[str] = []
        for g in s.groups:
            a = g.attention
            if a.kind == "mla" and mla_hit:
                pad = (a.qk_dim + a.v_dim) / (2.0 * a.qk_dim) if a.qk_dim > a.v_dim else 1.0
                self._pre_rates.append(self._attn_peak * mla_hit[0] * pad)
                srcs.append(f"MLA {mla_hit[1]}; value head padded {a.v_dim} -> {a.qk_dim}: rate x {pad:.3f}")
            elif a.kind != "mla" and pre_hit:
                self._pre_rates.append(self._attn_peak * pre_hit[0])
                srcs.append(pre_hit[1])
            else:
                self._pre_rates.append(self.attn_rate)
        self._pre_path_src = ("; kernel path: prefill attention " + " | ".join(dict.fromkeys(srcs)) if srcs else "")
        # vLLM 0.9.x's V1 Triton unified attention on AMD computes a chunk against all its sequence's keys (no causal
        # tile skip): a chunk of c tokens costs c x (p + c) pairs, i.e. the causal pairs + c^2 / 2 per sequence
        full = prefill_attention_full_tiles(self.gpu, self.cfg) if pre_hit else None
        self._pre_full: list[bool] = [bool(full) and g.attention.kind != "mla" and not g.attention.window
                                      for g in s.groups]
        if full and any(self._pre_full):
            self._pre_path_src += "; " + full
        if moe_groups and self._moe_curve is None:
            hit = path_slowdown(self.gpu, self.cfg, "moe", moe_format(p.fmt, p.weight_bytes["experts"]))
            if hit:
                self._moe_slow, self._moe_slow_src = hit[0], "; kernel path: " + hit[1]
        self._src_dec = (f"measured launch + per-sequence time: {self._dec_fit[3]}; " if self._dec_fit is not None
                         else "") + f"constant: kv_read_bandwidth {e.kv_read_bandwidth:.2f} of peak HBM B/s{e.tag('kv_read_bandwidth')}"
        self._src_pre = ("measured: " + self._pre_curve[2] if self._pre_curve is not None else
                         f"constant: attention_compute {e.attention_compute:.2f} of peak FLOP/s{e.tag('attention_compute')}")
        if self._pre_path_src:
            self._src_pre = self._pre_path_src[len("; kernel path: "):] + " (in place of the constant attention_compute)"
        self._vocab = s.vocab
        self._hidden = s.hidden
        self._L = s.num_layers
        self._moe_layers = sum(g.count for g in s.groups if g.moe)
        # ranks a MoE layer dispatches tokens across: the EP group when expert parallelism spans data-parallel
        # ranks; without EP the DP group (vLLM 0.14.1 default all2all_backend "allgather_reducescatter":
        # all_gatherv then reduce_scatterv over get_dp_group(), distributed/device_communicators/all2all.py
        # AgRsAll2AllManager); with DP = 1 the layer's TP all-reduce combines the experts (FusedMoE: dp_size > 1)
        self._ep_dispatch = ((self.shapes.ep if self.shapes.ep > 1 else self.dp)
                             if self._moe_layers and self.dp > 1 else 1)
        # MLA layers: the measured latency floor of vLLM's MLA module beyond what its GEMMs, decode-attention launch
        # and small kernels already charge, added to every step's per-layer floor (layer_overhead_graph_s, which
        # fast_step.py reads from self.eff as well); 0 without a measured module table
        # per-step constants beyond the named per-layer ones (layer_overhead_graph_s, moe_routing_overhead_s, which
        # stay as named: qk_norm_time and a speculative draft model read them); each is its own breakdown term:
        # (term, seconds per step, source). fast_step.py adds the same sum (_floor_extra_s).
        self._floor_parts: list[tuple[str, float, str]] = []
        # grouped top-k routing: kernels beyond the one moe_routing_overhead_s charges (see GROUPED_TOPK_KERNELS)
        n_route, how = grouped_topk_kernels(self.arch, self.gpu, getattr(self.cfg, "vllm_version", None))
        self._route_note = ""
        if self._moe_layers and n_route > 1:
            per_kernel = self.eff.layer_overhead_graph_s / LAYER_SMALL_KERNELS
            self._floor_parts.append(("moe_routing_kernels", self._moe_layers * (n_route - 1) * per_kernel,
                                      f"{how}: {n_route - 1} kernels per MoE layer beyond moe_routing_overhead_s"))
            self._route_note = (f"MoE routing: {how}, {n_route} kernels per MoE layer at {per_kernel * 1e6:.1f} us "
                                f"each (moe_routing_overhead_s {self.eff.moe_routing_overhead_s * 1e6:.1f} us + "
                                f"{(n_route - 1) * per_kernel * 1e6:.1f} us)")
        self._shared_overlap = (any(name == "moe_shared" and f for name, (f, *_), _ in self._linear_terms)
                                and str(self.gpu.vendor or "").upper() == "NVIDIA" and self.dp == 1
                                and parse_version(getattr(self.cfg, "vllm_version", None)) >= SHARED_EXPERTS_STREAM_FROM)
        mla_layers = sum(g.count for g in s.groups if g.attention.kind == "mla")
        extra, src = self._mla_chain_floor()
        if extra > 0.0:
            self._floor_parts.append(("mla_module_floor", extra * mla_layers, "measured: " + src))
        absorbed, src = self._mla_absorbed_bytes()
        if absorbed > 0.0:
            self._floor_parts.append(("mla_absorbed_weights", absorbed * mla_layers / self.bw, src))
        self._floor_extra_s = sum(t for _, t, _ in self._floor_parts)

    def _mla_absorbed_bytes(self) -> tuple[float, str]:
        """(bytes per MLA layer per decode step, provenance) that vLLM's MLA matrix absorption reads beyond
        q_b_proj + kv_b_proj + o_proj (MLA_ABSORBED releases only; 0 elsewhere). Charged at memory_bandwidth on
        every step (prefill-only steps read the unabsorbed weights instead: their cost is over-stated by it)."""
        groups = [g for g in self.shapes.groups if g.attention.kind == "mla"]
        v = parse_version(getattr(self.cfg, "vllm_version", None))
        if not groups or not (MLA_ABSORBED[0] <= v < MLA_ABSORBED[1]):
            return 0.0, ""
        c = self.arch.config or {}
        a = groups[0].attention
        heads = a.heads
        q_lora = int(c.get("q_lora_rank") or 0) or self._hidden
        kv_lora = int(c.get("kv_lora_rank") or 0)
        rope = int(c.get("qk_rope_head_dim") or 64)
        nope = int(c.get("qk_nope_head_dim") or 128)
        vd = int(c.get("v_head_dim") or nope)
        wb = self.precision.weight_bytes["attn"]
        ab = self.precision.act_bytes
        absorbed_wb = wb if wb < ab else ab   # re-quantized to FP8 when the checkpoint is FP8, else activation dtype
        new = heads * kv_lora * (q_lora + self._hidden) * absorbed_wb + q_lora * heads * rope * ab
        old = (q_lora * heads * (nope + rope) + kv_lora * heads * (nope + vd) + heads * vd * self._hidden) * wb
        extra = new - old
        if extra <= 0.0:
            return 0.0, ""
        return extra, (f"vLLM {'.'.join(map(str, MLA_ABSORBED[0]))}-0.7.x MLA matrix absorption (W_Q_UK, W_UV_O, "
                       f"W_QR; mla/utils.py): {extra / 1e6:.1f} MB per layer beyond q_b/kv_b/o_proj, at "
                       f"memory_bandwidth {self.eff.memory_bandwidth:.2f} of peak")

    def _mla_chain_floor(self) -> tuple[float, str]:
        """(seconds per MLA layer per step, provenance): vLLM's measured MLA decode module at one sequence
        (kernels.mla_module_floor, DeepSeek-V3 shapes at this GPU's head count) minus what this model already
        charges for the same module at one token in those shapes: its five projection GEMMs (q_a, q_b, kv_a, kv_b,
        o_proj, measured curves or constants), the decode-attention launch and per-sequence time, and the rotary and
        KV-write kernels of layer_overhead_graph_s. The rest is the latency of the module's other kernels (RMSNorms,
        W_UK/W_UV bmm, the MLA decode kernel's scheduling and split-KV combine, copies) that no term holds; it does
        not shrink with the model's size and is charged per MLA layer whatever the batch. (0, "") when the GPU,
        GEMM type, KV dtype or head count was not measured, or the measured module is no slower than the charges."""
        groups = [g for g in self.shapes.groups if g.attention.kind == "mla"]
        if not groups or not self._use_tables:
            return 0.0, ""
        p = self.precision
        key = gemm_format(p.fmt, p.weight_bytes["attn"], p.compute["attn"])
        key = "fp8_block" if key == "fp8" else key   # per-tensor FP8 runs the same FP8 tensor cores
        heads = groups[0].attention.heads
        hit = mla_module_floor(self.gpu.name, key, p.kv_bytes, heads)
        if hit is None:
            return 0.0, ""
        d = MLA_MODULE_DIMS
        lins = (Linear("q_a_proj", "attn", d["hidden"], d["q_lora"]),
                Linear("q_b_proj", "attn", d["q_lora"], heads * (d["nope"] + d["rope"])),
                Linear("kv_a_proj", "attn", d["hidden"], d["kv_lora"] + d["rope"]),
                Linear("kv_b_proj", "attn", d["kv_lora"], heads * (d["nope"] + d["v"])),
                Linear("o_proj", "attn", heads * d["v"], d["hidden"]))
        parts = self._parts(lins, 1)
        if parts is not None:
            gemm = sum(_roof(pf, pw + pa, peak, self._peak_bw, max) / efficiency_at(curve, 1)
                       for pf, pw, pa, peak, curve in parts)
        else:
            f, wb, abt, rate = self._lin(lins, 1)
            gemm = _roof(f, wb + abt, rate, self.bw, max)
        attn = (self._dec_fit[0] + self._dec_fit[1]) if self._dec_fit is not None else 0.0
        small = MLA_MODULE_SMALL_KERNELS * self.eff.layer_overhead_graph_s / LAYER_SMALL_KERNELS
        extra = hit[0] - gemm - attn - small
        if extra <= 0.0:
            return 0.0, ""
        return extra, (f"{hit[1]}, minus this model's charges for the same module at one token ({gemm * 1e6:.1f} us "
                       f"GEMMs, {attn * 1e6:.1f} us decode-attention launch, {small * 1e6:.1f} us rotary + KV write): "
                       f"{extra * 1e6:.1f} us per MLA layer")

    # ------------------------------------------------------------------ evaluation core
    def _evaluate(self, nd, S, Tp, P, nps, mx: Callable, mn: Callable, detail: bool, q: int = 1):
        """GPU and CPU seconds; with ``detail`` also the per-term breakdown. Works on floats or arrays.

        ``q``: query tokens per decode sequence (1 for plain decode; k + 1 when verifying k draft
        tokens: the context KV is read once, score FLOPs and logits scale with q).
        """
        eff = self.eff
        bw = self.bw
        ab = self.precision.act_bytes
        T = nd * q + Tp if q != 1 else nd + Tp
        emit = nd * q + nps if q != 1 else nd + nps
        terms: dict[str, TermCost] | None = {} if detail else None

        def add(name, flops, nbytes, rate, t, bound=None, bwu=None, source=""):
            if terms is None:
                return
            bwx = bwu or bw
            tc = terms.setdefault(name, TermCost(name))
            if source:
                tc.source = source
            tc.flops += float(flops)
            tc.bytes += float(nbytes)
            if rate:
                tc.compute_s += float(flops / rate)
                tc.peak_flops = rate
            if nbytes:
                tc.memory_s += float(nbytes / bwx)
                tc.bandwidth = bwx
            tc.time_s += float(t)
            tc.bound = bound or ("compute" if tc.compute_s > tc.memory_s else "memory")

        layers = 0.0
        peak_bw = self._peak_bw
        t_sh = t_rt = t_ex = 0.0   # shared experts, router gate, routed experts (SHARED_EXPERTS_STREAM_FROM)
        for (name, (f, wbytes, abytes, rate), parts), slow, slow_src in zip(self._linear_terms, self._lin_slow,
                                                                            self._lin_slow_src):
            if not f:
                continue
            fl = f * T
            by = wbytes + abytes * T
            if parts is None:
                t = _roof(fl, by, rate, bw, mx)
                if slow != 1.0:   # AMD: the kernel path vLLM takes (rocm_paths.py)
                    t = t * slow
                add(name, fl, by, rate, t, source=self._const_gemm + slow_src)
            else:   # measured: each GEMM's roofline at vendor peak over its efficiency at T tokens
                t = 0.0
                for pf, pw, pa, peak, curve in parts:
                    t = t + _roof(pf * T, pw + pa * T, peak, peak_bw, mx) / efficiency_at(curve, T)
                add(name, fl, by, parts[0][3], t, bwu=peak_bw, source="measured: " + parts[0][4][2])
            layers = layers + t
            if name == "moe_shared":
                t_sh = t_sh + t
            elif name == "moe_router":
                t_rt = t_rt + t
        for count, E, k, local, eparams, route_mult, io, excess in self._experts:
            Tr = T * route_mult
            if excess:   # the busiest EP rank: as many routed pairs as Tr + excess x sqrt(Tr) tokens give on average
                Tr = Tr + excess * Tr ** 0.5
            routed = Tr * k * local / E                       # token-expert pairs on this GPU
            distinct = local * (1.0 - (1.0 - k / E) ** Tr)    # expected experts touched
            fl = count * 2.0 * routed * eparams
            by = count * (distinct * eparams * self._expert_wb + ab * routed * io)
            if self._moe_curve is not None:   # bytes here hold the routed activations, the table's do not (kernels.py)
                t = _roof(fl, by, self._expert_peak, self._peak_bw, mx) / efficiency_at(self._moe_curve, Tr)
                rate, bwu, src = self._expert_peak, peak_bw, "measured: " + self._moe_curve[2]
            elif self._moe_floor is not None:   # constants, held above the measured fused-MoE latency floor
                t = mx(_roof(fl, by, self._expert_rate, bw, mx), count * self._moe_floor[0])
                if self._moe_slow != 1.0:   # AMD: the kernel path vLLM takes (rocm_paths.py)
                    t = t * self._moe_slow
                rate, bwu, src = self._expert_rate, None, (self._const_gemm + "; " + self._moe_floor[1]
                                                           + self._moe_slow_src)
            else:
                t = _roof(fl, by, self._expert_rate, bw, mx)
                if self._moe_slow != 1.0:
                    t = t * self._moe_slow
                rate, bwu, src = self._expert_rate, None, self._const_gemm + self._moe_slow_src
            if self._moe_cap is not None:   # vLLM's old default tiles at M <= E: at most cap bytes/s (M > E: no cap)
                t = mx(t, by / self._moe_cap[0] * (T <= self._moe_cap[1]))
                src += (f"; vLLM's old default tiles at <= {self._moe_cap[1]} tokens per step: at least the expert "
                        f"bytes at {self._moe_cap[0] / 1e12:.2f} TB/s (OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S x SMs, "
                        "models/cost/moe_default_tiles.py)")
            add("moe_experts", fl, by, rate, t, bwu=bwu, source=src)
            layers = layers + t
            t_ex = t_ex + t
        if self._shared_overlap:   # shared experts on their own stream, hidden behind router + routed experts
            ov = mn(t_sh, t_rt + t_ex) * (T <= SHARED_EXPERTS_STREAM_MAX_TOKENS)
            layers = layers - ov
            if terms is not None and "moe_shared" in terms:
                add("moe_shared", 0.0, 0.0, 0.0, -ov, source=terms["moe_shared"].source + (
                    f"; overlapped with router + routed experts on a second CUDA stream (vLLM "
                    f"{'.'.join(map(str, SHARED_EXPERTS_STREAM_FROM))}+, <= {SHARED_EXPERTS_STREAM_MAX_TOKENS} "
                    "tokens per step): the shorter branch is hidden"))
        dfit, pcurve = self._dec_fit, self._pre_curve
        for (count, fdec, bdec, fpre, bpre, window), occ, pre_rate, full in zip(self._attn, self._attn_occ,
                                                                               self._pre_rates, self._pre_full):
            if window:
                Se = mn(S, nd * window)
                Pe = mn(P, Tp * window)
            else:
                Se, Pe = S, P
            if full:   # no causal tile skip: + chunk^2 / 2 per prefilling sequence (equal chunks)
                Pe = Pe + Tp * Tp / (2.0 * mx(nps, 1.0))
            td = count * Se * mx(fdec * q / self.attn_rate, bdec / self.kv_bw)
            if occ:   # AMD Triton MLA decode: only batch x workgroups-per-sequence CUs stream the KV cache
                td = td / mn(1.0, mx(nd, 1.0) * occ)
            if dfit is not None:   # measured: kernel launch (when any sequence decodes) + per-sequence cost
                td = td + count * (dfit[0] * (nd > 0) + dfit[1] * nd)
            if pcurve is not None and Tp:   # measured: efficiency at the equivalent prompt length 2 P / Tp
                x = math.log2(2.0 * Pe / Tp) if Pe > Tp / 2.0 else 0.0
                tpre = count * mx(fpre * Pe / self._attn_peak, bpre * Tp / peak_bw) / interp_scalar(x, pcurve[0], pcurve[1])
            else:
                tpre = count * mx(fpre * Pe / pre_rate, bpre * Tp / bw)
            layers = layers + td + tpre
            add("attention_decode", count * fdec * q * Se, count * bdec * Se, self.attn_rate, td, bwu=self.kv_bw,
                source=self._src_dec + self._attn_occ_src)
            add("attention_prefill", count * fpre * Pe, count * bpre * Tp, pre_rate, tpre, source=self._src_pre)
        te = T * self._elem_bytes_per_token / bw
        layers = layers + te
        add("elementwise", 0.0, T * self._elem_bytes_per_token, 0.0, te, "memory")

        # small-kernel latency floor; in eager mode (or for batches beyond the captured CUDA-graph
        # sizes) the host launch time bounds the layer stack from below
        base = self._L * eff.layer_overhead_graph_s + self._moe_layers * eff.moe_routing_overhead_s
        floor = base + self._floor_extra_s
        layers = layers + floor
        add("layer_overhead", 0.0, 0.0, 0.0, base, "latency")
        if detail:   # --explain: the per-step constants beyond the per-layer ones, each its own term
            for name, t, src in self._floor_parts:
                add(name, 0.0, 0.0, 0.0, t, "memory" if name == "mla_absorbed_weights" else "latency", source=src)
        graph_miss = 1.0 if self.eager else (T > self._graph_max_tokens)
        host = self._L * eff.layer_overhead_eager_s
        extra = mx(host - layers, 0.0) * graph_miss
        layers = layers + extra
        add("layer_overhead", 0.0, 0.0, 0.0, extra, "latency")

        # embedding gather, lm_head for emitting sequences, sampler
        t_emb = 2.0 * ab * self._hidden * T / bw
        add("embedding", 0.0, 2.0 * ab * self._hidden * T, 0.0, t_emb, "memory")
        f_lm, w_lm, io_lm, r_lm = self._lm
        fl = f_lm * emit
        by = w_lm + io_lm * emit
        if self._lm_curve is not None:
            t_lm = _roof(fl, by, self._lm_peak, peak_bw, mx) / efficiency_at(self._lm_curve, emit) * (emit > 0)
            add("lm_head", fl, by, self._lm_peak, t_lm, bwu=peak_bw, source="measured: " + self._lm_curve[2])
        else:
            t_lm = _roof(fl, by, r_lm, bw, mx) * (emit > 0)
            add("lm_head", fl, by, r_lm, t_lm, source=self._const_gemm)
        smp_bytes = SAMPLER_LOGIT_PASSES * emit * self._vocab * LOGIT_BYTES
        t_smp = smp_bytes / bw
        add("sampler", 0.0, smp_bytes, 0.0, t_smp, "memory")

        # collectives
        t_comm = 0.0
        if self.tp > 1:
            t_ar = (2 * self._L + 1) * allreduce_time(T * self._hidden * ab, self.tp, self.gpu, eff)
            t_lg = allgather_time(emit * self._vocab / self.tp * LOGIT_BYTES, self.tp, self.gpu, eff)
            t_comm = t_ar + t_lg
            add("tp_allreduce", 0.0, 0.0, 0.0, t_comm, "communication",
                source=allreduce_source(self.tp, self.gpu, eff))
            if self._qk_norm_tp[0]:
                t_qk = self.qk_norm_time(T)
                t_comm = t_comm + t_qk
                add("qk_norm_allreduce", 0.0, 0.0, 0.0, t_qk, "communication")
        if self._ep_dispatch > 1:
            t_ep = self._moe_layers * 2 * allgather_time(T * self._hidden * ab, self._ep_dispatch, self.gpu, eff)
            t_comm = t_comm + t_ep
            add("ep_alltoall", 0.0, 0.0, 0.0, t_ep, "communication")
        t_pp = 0.0
        if self.pp > 1:
            t_pp = (self.pp - 1) * p2p_time(2 * T * self._hidden * ab, self.gpu, eff)
            add("pp_send", 0.0, 0.0, 0.0, t_pp, "communication")

        # One GPU of a pipeline stage holds 1/pp of the layers; the per-layer terms above were
        # computed for all layers on a TP rank, so the latency through the pipeline is the same sum.
        gpu = layers + t_emb + t_lm + t_smp + t_comm + t_pp
        interval = (layers + t_comm) / self.pp + t_lm + t_smp + (t_emb if self.pp == 1 else 0.0)
        cpu = eff.step_cpu_s + self._cpu_per_seq * (nd + nps)
        if terms is not None:
            add("cpu", 0.0, 0.0, 0.0, (max(0.0, float(cpu - gpu)) if self.async_overlap else float(cpu)),
                "latency")
        return gpu, cpu, interval, terms

    def _combine(self, gpu, cpu, mx):
        return mx(gpu, cpu) if self.async_overlap else gpu + cpu

    # ------------------------------------------------------------------ public interface
    def step_time(self, num_decode: int, decode_context_sum: int, prefill_tokens: int,
                  prefill_attn_pairs: float, num_prefill_seqs: int = 0) -> float:
        """Seconds for one iteration (latency through all pipeline stages; see ``breakdown``)."""
        if num_decode + prefill_tokens <= 0:
            return 0.0
        gpu, cpu, _, _ = self._evaluate(num_decode, decode_context_sum, prefill_tokens, prefill_attn_pairs,
                                        num_prefill_seqs, max, min, False)
        return self._combine(gpu, cpu, max)

    def breakdown(self, num_decode: int, decode_context_sum: int, prefill_tokens: int,
                  prefill_attn_pairs: float, num_prefill_seqs: int = 0) -> IterationCost:
        """Per-term FLOPs, bytes, time, bound, intensity and ridge point of one iteration."""
        gpu, cpu, interval, terms = self._evaluate(num_decode, decode_context_sum, prefill_tokens,
                                                   prefill_attn_pairs, num_prefill_seqs, max, min, True)
        step = self._combine(gpu, cpu, max) if num_decode + prefill_tokens > 0 else 0.0
        notes = list(self.precision.notes)
        if self._moe_curve is not None:
            notes.append(f"experts: measured fused-MoE efficiency by tokens per step, {self._moe_curve[2]}")
        elif self._moe_floor is not None:
            notes.append(f"experts: no measured fused-MoE table for this GPU and format; the named constants, held "
                         f"above the {self._moe_floor[1]}")
        if str(self.arch.model_type or "") == "gpt_oss" and self.precision.fmt == "mxfp4":
            line = gpt_oss_path_note(self.gpu, getattr(self.cfg, "vllm_version", None),
                                     self._moe_curve[2] if self._moe_curve is not None else "")
            if line:
                notes.append(line)
        gemm_src = sorted({p[0][4][2] for _, _, p in self._linear_terms if p}
                          | ({self._lm_curve[2]} if self._lm_curve is not None else set()))
        if gemm_src:
            notes.append("dense GEMMs: measured efficiency by tokens per step and weight size, " + "; ".join(gemm_src))
        unmeasured = sorted({name for name, (f, *_), p in self._linear_terms if f and not p})
        if unmeasured:
            notes.append(f"{', '.join(unmeasured)}: {self._const_gemm}")
        paths = sorted({src[len("; kernel path: "):] for src in self._lin_slow_src + [self._moe_slow_src,
                                                                                   self._attn_occ_src,
                                                                                   self._pre_path_src] if src})
        if paths:
            notes.append("AMD kernel path (models/data/rocm_kernel_paths.yaml): " + " | ".join(paths))
        if self._route_note:
            notes.append(self._route_note)
        if self._tiles_key is not None:   # vLLM <= 0.16 without a tuned tile table: its old default tiles, named
            fkey, experts, n = self._tiles_key
            line = old_default_tiles_note(getattr(self.cfg, "vllm_version", None), self.gpu.name, fkey, experts, n)
            if line:
                notes.append(line)
        if self._ep_note:
            notes.append(self._ep_note)
        if self._dec_fit is not None:
            notes.append(f"decode attention: measured launch + per-sequence time, {self._dec_fit[3]}; KV reads at "
                         f"kv_read_bandwidth {self.eff.kv_read_bandwidth:.2f} of peak")
        if self._pre_curve is not None:
            notes.append(f"prefill attention: measured efficiency by prompt length, {self._pre_curve[2]}")
        if self.eff.family and (self._dec_fit is None or self._pre_curve is None):
            notes.append(f"attention: {self._src_dec if self._dec_fit is None else ''}"
                         f"{'; ' if self._dec_fit is None and self._pre_curve is None else ''}"
                         f"{self._src_pre if self._pre_curve is None else ''}")
        return IterationCost(terms=terms or {}, gpu_time_s=float(gpu), cpu_time_s=float(cpu), step_time_s=float(step),
                             pipeline_interval_s=float(self._combine(interval, cpu, max)),
                             tokens=int(num_decode + prefill_tokens), async_overlap=self.async_overlap, notes=notes)

    def decode_step_time_vec(self, num_decode: np.ndarray, context_sum: np.ndarray) -> np.ndarray:
        """Vectorized ``step_time(num_decode, context_sum, 0, 0, 0)`` over numpy arrays (seconds)."""
        nd = np.asarray(num_decode, dtype=float)
        S = np.asarray(context_sum, dtype=float)
        gpu, cpu, _, _ = self._evaluate(nd, S, 0.0, 0.0, 0.0, np.maximum, np.minimum, False)
        out = self._combine(gpu, cpu, np.maximum)
        return np.where(nd > 0, out, 0.0)

    def verify_step_time(self, num_seqs: int, context_sum: int, tokens_per_seq: int) -> float:
        """Seconds for a speculative-decoding verify step: ``tokens_per_seq`` (= k + 1) query tokens per
        sequence against its cached context (KV read once per sequence), logits for every position."""
        if num_seqs <= 0:
            return 0.0
        gpu, cpu, _, _ = self._evaluate(num_seqs, context_sum, 0, 0.0, 0, max, min, False, q=tokens_per_seq)
        return self._combine(gpu, cpu, max)

    def pipeline_interval(self, num_decode: int, decode_context_sum: int, prefill_tokens: int = 0,
                          prefill_attn_pairs: float = 0.0, num_prefill_seqs: int = 0) -> float:
        """Seconds between successive micro-batches leaving the last pipeline stage (= step_time at pp=1)."""
        return self.breakdown(num_decode, decode_context_sum, prefill_tokens, prefill_attn_pairs,
                              num_prefill_seqs).pipeline_interval_s

    def decode_linear(self, num_decode: int) -> DecodeLinearModel:
        """Closed-form decode step time vs context sum at batch ``num_decode`` (see DecodeLinearModel)."""
        eff_bw = self.kv_bw
        slope_full = slope_win = 0.0
        window_cap = float("inf")
        for (count, fdec, bdec, _, _, window), occ in zip(self._attn, self._attn_occ):
            slope = count * max(fdec / self.attn_rate, bdec / eff_bw)
            if occ:
                slope = slope / min(1.0, max(num_decode, 1.0) * occ)
            if window:
                slope_win += slope
                window_cap = min(window_cap, num_decode * window)
            else:
                slope_full += slope
        gpu0, cpu, _, _ = self._evaluate(num_decode, 0.0, 0.0, 0.0, 0.0, max, min, False)
        return DecodeLinearModel(num_decode, float(gpu0), slope_full, slope_win,
                                 window_cap if slope_win else 0.0, float(cpu), self.async_overlap)

    @property
    def moe_layers(self) -> int:
        """Decoder layers with routed experts (0 for a dense model)."""
        return self._moe_layers

    def weight_bytes_per_gpu(self) -> float:
        """Bytes of weights one TP rank reads for a batch touching every expert (all pipeline stages)."""
        params = self.shapes.params_per_gpu()
        return sum(params[c] * self.precision.weight_bytes[c] for c in params if c != "embed")
