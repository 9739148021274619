"""vLLM's start-up memory profile per GPU: requested memory, activation peak, non-torch memory,
CUDA-graph memory, and the bytes left for the KV cache.

Formulas (facts copied from vLLM's source into this module; URLs per term):

* V1 (0.9.2+): ``available = requested - (weights + torch_peak_increase + non_torch_increase)``
  minus the CUDA-graph estimate from 0.20.0 (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` default 1);
  ``requested = total x gpu_memory_utilization`` (vllm/v1/worker/gpu_worker.py
  determine_available_memory, vllm/utils memory_profiling).
* V0 (0.6.x): ``available = total x gmu - peak_torch_memory - non_torch`` where peak_torch_memory is
  absolute (weights + activation) (vllm/worker/worker.py determine_num_available_blocks).
* ``--kv-cache-memory-bytes`` (0.10.2+) replaces the profiled figure.

The torch peak increase is the largest of two moments of ``profile_run``
(vllm/v1/worker/gpu_model_runner.py):

1. the dummy forward pass over ``max_num_batched_tokens`` tokens: the largest per-layer set of live
   tensors (residual + layer input + MLP gate/up output + activation output, or the attention block);
2. the dummy sampler run over ``R = min(max_num_seqs, tokens)`` requests: the forward's hidden states
   stay alive while the sampler holds ``R x vocab`` logits in the model dtype, their float32 copy
   ``F = 4 R V`` bytes, and the sampling temporaries, which depend on the release:
   - 0.17.0+: in-place Triton top-k/top-p (``apply_top_k_top_p_triton``, a ``num_sms x V`` fp32
     buffer) then softmax probs + exponential noise: 2 F;
   - 0.8.0..0.11.x: FlashInfer (``VLLM_USE_FLASHINFER_SAMPLER`` None meant on in V1; opt-in from
     0.12.0): top-k-masked logits + softmax probs: 2 F;
   - PyTorch sort path (0.12.0..0.16.x, V0, V1 before 0.8.0):
     ``logits.sort`` values F + int64 indices 2 F + sort workspace (int64 iota 2 F, radix-sort
     alternate buffers 3 F): 8 F.
   The fused-MoE modular kernel keeps its workspace (``WorkspaceManager`` / ``SharedResizableBuffer``)
   allocated after the forward, so it adds to the sampler moment.

Non-torch memory (cuBLAS/kernels loaded during profiling; NCCL and custom all-reduce buffers when
TP > 1) and the CUDA-graph estimate cannot be derived from shapes; their values are typical figures
read from real start-up logs and are flagged ``guessed``.
Units: bytes unless a name ends in ``_gib``; GiB = 2**30 bytes.
"""

import math

from pydantic import Field

from sched_reader.data_model import DataModel, new_list
from sched_reader.models.architecture import ModelArch
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.gpu import GPU
from sched_reader.models.weights import (
    GIB, Term, WeightBreakdown, is_moe_layer, get_pp_indices, kv_heads_per_rank, model_dtype_bytes, moe_shards,
)
from sched_reader.versions import parse_version

MIB = 2**20

# ---- typical non-shape terms, from real vLLM start-up logs (guessed for other setups) ----
# non_torch_increase at TP=1 (cuBLAS handles, lazily loaded kernels), per era.
NON_TORCH_TP1_V0 = int(0.35 * GIB)      # vLLM issue #10517 (0.6.4 era, RTX 3090): 0.35 GiB
NON_TORCH_TP1_V1_OLD = int(0.13 * GIB)  # llm-d v0.11.0 / v0.15.0 logs: 0.13-0.14 GiB
# V1 0.9.2-0.10.x, one GPU: "0.02 GiB for non-torch memory" (0.10.2, 24 GiB card, Qwen3-8B-FP8; public file with
# 'Current kv cache memory in use is 9232221491 bytes'), 0.07 (0.10.2, H100, LLaVA-NeXT,
# tests/data/logs/repo-vlmvllm-...), ~0.02 implied by dennislee22 0.10.1.1 1x A100 (requested - weights - KV -
# FlashInfer-sampler activation): the median, 0.02 GiB.
NON_TORCH_TP1_V1_010 = int(0.02 * GIB)
# V0 0.6.5+ (memory_profiling: the increase over the pre-load snapshot), one GPU: "non_torch_memory takes"
# 0.05 GiB (0.7.2, A10G 22.06 GiB, Qwen2.5-Math-1.5B), 0.02 (0.8.x, RTX 4070 Laptop 7.65 GiB), 0.04 (0.8.x,
# 12 GiB card, Qwen3-4B), 0.16 (vLLM PR 12126, 0.6.6-0.7, H100, Llama-3.2-11B-Vision): the median of the four.
NON_TORCH_TP1_V0_PROFILING = int(0.05 * GIB)
NON_TORCH_TP1_V1_NEW = int(0.25 * GIB)  # llm-d-planner v0.19.0 logs: 0.24-0.27 GiB
NON_TORCH_PP_ONLY = int(0.07 * GIB)     # llm-d-planner v0.19.0 PP=2 log: 0.07 GiB (snapshot after NCCL init)
TP_COMM_NVLS = int(1.83 * GIB)          # NCCL (NVLS on NVSwitch Hopper+) + custom all-reduce: llm-d-planner v0.19.0 TP2/TP4 H100 logs 2.07-2.21 GiB total
# The same Hopper NVLink TP2 setup logs non-torch 0.55 GiB in vLLM 0.11.0 (llm-d-benchmark, RedHatAI
# Llama-3.3-70B-FP8-dynamic TP2 H100): 0.55 - 0.13 base. Releases between 0.11 and 0.19 are unmeasured;
# the larger figure is used from 0.19.0 where it was seen.
TP_COMM_NVLINK_HOPPER_OLD = int(0.42 * GIB)
# NVLink without NVLS (A100/V100 SXM, Hopper before 0.19) with custom all-reduce on: no non-Hopper NVLink log
# with a non-torch figure is at hand, so the nearest measured setup is used: NCCL P2P over NVLink + custom
# all-reduce on H100 in vLLM 0.11.0 (TP_COMM_NVLINK_HOPPER_OLD above); NVLS does not exist before Hopper.
# (An earlier 0.9 GiB here was read off the dennislee22 two-node A100 log under a wrong sampler assumption:
# that log says "FlashInfer is not available" and "Custom allreduce is disabled because this process group
# spans across nodes", and its non-torch is 0.14 GiB in all.)
TP_COMM_PLAIN = TP_COMM_NVLINK_HOPPER_OLD
# GPUs without NVLink/P2P (GeForce, most PCIe cards): custom all-reduce is off and NCCL uses host-memory (SHM)
# transport: vLLM issue 13061 (V0 0.7.x, 2x RTX 4090 TP2) logs non_torch_memory 0.25 GiB
# = this + the V0 TP1 base of the memory_profiling era (NON_TORCH_TP1_V0_PROFILING, 0.05 GiB).
TP_COMM_NO_P2P = int(0.20 * GIB)
# The same without custom all-reduce in V1 (0.9.2+): dennislee22/vLLM-benchmarking vLLM 0.10.1.1 Qwen2-7B TP2 logs,
# A100 80GB on one node ("Custom allreduce is disabled because your platform lacks GPU P2P capability") and
# A100 40GB on two nodes ("... spans across nodes"): requested - weights - KV - activation = 0.14 GiB non-torch in
# both, i.e. 0.12 GiB over the 0.10.x TP1 base (NON_TORCH_TP1_V1_010); the V0 figure above is of the same size.
TP_COMM_NO_CUSTOM_AR_V1 = int(0.12 * GIB)
# CUDA context + libraries at worker init, before any torch allocation: "worker init memory snapshot: ...
# cuda_memory=0.51GiB, torch_memory=0.0GiB, non_torch_memory=0.51GiB" (llm-d-planner v0.19.0 H100 logs).
# Counted as non-torch where vLLM measures non-torch as (total - free) - torch (V1 0.7.0..0.9.1).
CUDA_CONTEXT = int(0.51 * GIB)
CUBLAS_WORKSPACE_SM90 = 32 * MIB        # torch cuBLAS workspace through the caching allocator (":4096:8" on sm90+)
CUBLAS_WORKSPACE_OTHER = 8 * MIB + 128 * 1024  # ":4096:2:16:8"


class MemoryProfile(DataModel):
    """One GPU's memory budget as vLLM computes it at start-up (bytes)."""

    engine: str
    total_bytes: int
    requested_bytes: int
    weights_bytes: int
    activation_peak_bytes: int
    non_torch_bytes: int
    cuda_graph_bytes: int
    cuda_graph_subtracted: bool
    kv_cache_bytes: int                     # available for KV (may be <= 0: start-up fails)
    kv_override: bool = False               # --kv-cache-memory-bytes used
    forward_peak_bytes: int = 0
    sampler_peak_bytes: int = 0
    explain: list[Term] = Field(default_factory=new_list)

    @property
    def total_non_kv_bytes(self) -> int:
        return self.weights_bytes + self.activation_peak_bytes + self.non_torch_bytes


# ----------------------------------------------------------------------------------- activation

# V1 before 0.12 uses FlashInfer's top-k/top-p only when the flashinfer package is installed (the
# VLLM_USE_FLASHINFER_SAMPLER=None default means "on if available"); pip installs of 0.10-0.11 lacked it
# ("FlashInfer is not available. Falling back to the PyTorch-native implementation", Qwen3-Next 0.10.2 log)
# and the llm-d-benchmark 0.11.0 H100 logs show the PyTorch sort path's activation peak exactly
# (Llama-3.1-8B 4.76 GiB, gpt-oss-20b 7.38, Qwen3-0.6B 5.56 = 9.5 x 4 R V bytes + hidden states).
FLASHINFER_SAMPLER_BEFORE_0_12 = False


# FlashInfer top-k/top-p is on by default again from 0.21.0 (vLLM PR 40376 "[Perf] Enable FlashInfer top-k/top-p
# sampler by default", 2026-04; flashinfer-python is a default CUDA dependency since 0.11.1, PR 26443) where the
# GPU supports it: compute capability 8.0-12.1 and more than 16 SMs (flashinfer_sampler_supported; a 7.5 GPU logs
# "FlashInfer top-p/top-k sampling unavailable: unsupported compute capability 7.5; falling back"). The vLLM
# 0.23.0 docker log in tests/data/logs/repo-qwen25vl-7b-a100-v0230-video-profile.log prints "Using FlashInfer
# for top-p & top-k sampling." with no flag set.
FLASHINFER_SAMPLER_DEFAULT_FROM = (0, 21, 0)
V1_SAMPLER_PROFILED_FROM = (0, 8, 0)   # first release whose V1 profile_run runs the dummy sampler
# V1 gpu_worker.determine_available_memory wraps profile_run in memory_profiling (torch peak increase over the
# pre-profile snapshot + non-torch increase since worker init) from 0.9.1 (vllm 0.9.1 wheel); 0.7.0-0.9.0 take
# the ABSOLUTE torch peak ("allocated_bytes.all.peak") plus (total - free) - torch allocated after empty_cache.
V1_MEMORY_PROFILING_FROM = (0, 9, 1)


def sampler_path(cfg: EffectiveConfig, gpu: GPU | None = None) -> tuple[str, float]:
    """(name, extra fp32 R x V copies held by the sampling temporaries) for this release.

    ``cfg.flashinfer_sampler`` is the engine's own choice when known (the log's "Using FlashInfer for
    top-p & top-k sampling." / "FlashInfer is not available ..." line, or VLLM_USE_FLASHINFER_SAMPLER):
    True selects FlashInfer's ``top_k_top_p_sampling_from_logits`` (top-k-masked logits + softmax probs:
    2 F, no Triton buffer) in any V1 release (vllm/v1/sample/ops/topk_topp_sampler.py ``forward_cuda``).
    """
    ver = parse_version(cfg.vllm_version)
    if cfg.engine == "v0":
        return "v0 pytorch sort", 8.0
    fi = getattr(cfg, "flashinfer_sampler", None)
    if fi:
        return "flashinfer top-k/top-p from logits (VLLM_USE_FLASHINFER_SAMPLER)", 2.0
    if fi is None and ver >= FLASHINFER_SAMPLER_DEFAULT_FROM and gpu is not None and gpu.vendor == "NVIDIA":
        cc = float(gpu.compute_capability or "0")
        if 8.0 <= cc <= 12.1 and (gpu.sm_count or 0) > 16:
            return "flashinfer top-k/top-p from logits (default from 0.21.0)", 2.0
    if ver >= (0, 17, 0):
        return "triton top-k/top-p (in place) + softmax + noise", 2.0
    if fi is None and FLASHINFER_SAMPLER_BEFORE_0_12 and (0, 8, 0) <= ver < (0, 12, 0):
        return "flashinfer top-k/top-p from logits (VLLM_USE_FLASHINFER_SAMPLER)", 2.0
    return "pytorch sort top-k/top-p (FlashInfer sampler not used)", 8.0


def _moe_workspace_bytes(arch: ModelArch, cfg: EffectiveConfig, tokens: int, dt: int) -> int:
    """Persistent fused-MoE workspace: max(M*topk*max(N/2, K), M*K) + M*topk*max(N, K) elements."""
    c = arch.config
    if cfg.engine == "v0" or parse_version(cfg.vllm_version) < (0, 10, 0):
        return 0
    if not any(is_moe_layer(c, i) for i in range(arch.num_layers)):
        return 0
    qm = str((arch.quantization_config or {}).get("quant_method") or cfg.quantization or "")
    if qm == "mxfp4":  # gpt-oss OAI Triton experts: no shared workspace (v0.19.0 log: no extra peak)
        return 0
    # data parallel: the experts' width is split over TP x DP (weights.moe_shards) and the layer runs the
    # tokens of every DP rank, all-gathered before the experts (the profile run's dummy batch on every rank:
    # dp x tokens rows; vLLM 0.14.1 fused_moe/modular_kernel.py _allocate_buffers sizes the workspace by the
    # dispatched M, chunked at VLLM_FUSED_MOE_CHUNK_SIZE)
    dp = max(1, int(cfg.data_parallel_size))
    mi = int(c.get("moe_intermediate_size") or c.get("intermediate_size"))
    n = 2 * mi // moe_shards(cfg)
    k = arch.hidden_size
    topk = int(c.get("num_experts_per_tok") or c.get("experts_per_token") or c.get("moe_k") or 2)
    m = min(tokens * dp, 32768)  # VLLM_FUSED_MOE_CHUNK_SIZE
    ws13 = max(m * topk * max(n // 2, k), m * k)
    ws2 = m * topk * max(n, k)
    return (ws13 + ws2) * dt


def _forward_peak_bytes(arch: ModelArch, cfg: EffectiveConfig, tokens: int, dt: int) -> tuple[int, dict]:
    """Largest set of live tensors inside one decoder layer during the dummy forward."""
    c = arch.config
    tp = max(1, cfg.tensor_parallel_size)
    h = arch.hidden_size
    # V0 runs eagerly and keeps the layer input, the residual and the normed copy; V1's compiled
    # graph frees the layer input after the fused add-norm.
    c_h = 3 if cfg.engine == "v0" else 2
    if arch.is_mla:
        heads = arch.num_attention_heads // tp
        qk = int(c["qk_nope_head_dim"]) + int(c["qk_rope_head_dim"])
        attn = heads * qk + int(c["kv_lora_rank"]) + int(c["qk_rope_head_dim"]) \
            + heads * (int(c["qk_nope_head_dim"]) + int(c["v_head_dim"])) + heads * int(c["v_head_dim"])
    else:
        hd = arch.head_dim
        q = arch.num_attention_heads // tp * hd
        kv = kv_heads_per_rank(arch.num_kv_heads, tp) * hd
        attn = (q + 2 * kv) + q + h
    dense_i = int(c.get("intermediate_size") or 0) // tp
    mlp = (3 if arch.gated_mlp else 2) * dense_i   # gate_up output + activation; up output + activation (Falcon)
    per_token = c_h * h + max(attn, mlp)
    return tokens * per_token * dt, {"tokens": tokens, "hidden": h, "attn_elems": attn,
                                     "mlp_elems": mlp, "c_hidden": c_h, "dtype_bytes": dt}


# ---- the multimodal encoder profile (V1 ``GPUModelRunner.profile_run``) ----
# Before the dummy language-model forward, V1 runs the vision encoder once on a dummy batch: the modality
# with the most tokens per item, N = encoder_budget // T items of the largest feature size T, where
# encoder_budget = max(max_num_batched_tokens, T) (``compute_encoder_budget``); the log prints "Encoder cache
# will be initialized with a budget of B tokens, and profiled with N image items of the maximum feature size"
# (0.10.2). The outputs stay in ``encoder_cache["tmp"]`` until the profile run ends, so they are alive during
# the text forward and the sampler.
# Largest image per item, per processor (preprocessor_config.json defaults; vLLM's dummy image uses them):
QWEN_VL_MAX_TOKENS = 16384   # Qwen2/2.5-VL max_pixels 12845056 = 16384 x (14 x 2)^2; Qwen3-VL longest_edge
                             # 16777216 = 16384 x (16 x 2)^2 (tokens after the 2 x 2 patch merge)
QWEN_VL_TEMPORAL_PATCH = 2   # Qwen-VL patch embedding: 3 x 2 (temporal) x p x p pixels per patch
# Video is the modality with the most tokens per item once max_model_len >= 2 x 16384: the dummy video has as
# many frame pairs at the largest image size as fit in max_model_len (Qwen2VLProcessingInfo
# get_num_frames_with_most_features / _get_max_video_frames), frames capped by _MAX_FRAMES_PER_VIDEO (32 -> 16
# frame pairs). vLLM 0.23.0 log, Qwen2.5-VL-7B, max_model_len 128000: "Encoder cache will be initialized with a
# budget of 114688 tokens, and profiled with 1 video items" = 7 x 16384.
QWEN_VL_MAX_FRAME_PAIRS = 16
# Qwen3-VL's video processor caps a whole video at longest_edge 25165824 pixels = 24576 x (16 x 2)^2
# (vllm/model_executor/models/qwen3_vl.py: "Official recommended max pixels is 24576 * 32 * 32").
QWEN3_VL_MAX_VIDEO_TOKENS = 24576
# vLLM 0.11.0-0.11.2 widen every dummy encoder output to the whole encoder budget before caching it
# ("if encoder_output_shape[0] < encoder_budget: expanded = output.new_zeros((encoder_budget, hidden))",
# vllm/v1/worker/gpu_model_runner.py profile_run, vLLM PR 25810 "[MM] Optimize memory profiling for scattered
# multimodal embeddings"); 0.12.0 widens only to the item's own placeholder count (max_tokens_by_modality).
# So in 0.11.x the N items held through the text profile take N x budget rows, not N x T.
ENCODER_CACHE_TO_BUDGET = ((0, 11, 0), (0, 12, 0))
_QWEN_VL = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe", "qwen3_omni_moe")
_GATED_VIT = ("qwen2_5_vl", "pixtral")   # SwiGLU MLP (gate_up then act: 3 x intermediate live); others GELU (2 x)


def mm_item_geometry(arch: ModelArch, max_model_len: int = 0) -> dict | None:
    """Largest multimodal item: tokens T (after merging), ViT patches P, pixels per patch, ViT widths.

    None when the vision tower's geometry is not known here (the encoder profile is then left out).
    """
    vc = arch.vision_config or {}
    if not vc:
        return None
    try:
        return _mm_item_geometry(arch, vc, max_model_len)
    except (TypeError, ValueError, ZeroDivisionError):   # a malformed vision_config: no encoder profile
        return None


def _mm_item_geometry(arch: ModelArch, vc: dict, max_model_len: int) -> dict | None:
    mt = str(vc.get("model_type") or "")
    mm = arch.multimodal or {}
    p = int(vc.get("patch_size") or vc.get("spatial_patch_size") or 14)
    if p <= 0:
        return None
    hv = int(vc.get("embed_dim") if mt == "qwen2_vl" and vc.get("embed_dim") else vc.get("hidden_size") or 0)
    iv = int(vc.get("intermediate_size") or (hv * float(vc.get("mlp_ratio") or 4)))
    depth = int(vc.get("depth") or vc.get("num_hidden_layers") or 0)
    if not hv or not depth:
        return None
    if mt in _QWEN_VL or (vc.get("spatial_merge_size") and vc.get("depth")):
        merge = int(vc.get("spatial_merge_size") or 2)
        t, modality = QWEN_VL_MAX_TOKENS, "image"
        pairs = min(max(1, int(max_model_len) // QWEN_VL_MAX_TOKENS), QWEN_VL_MAX_FRAME_PAIRS)
        video = QWEN_VL_MAX_TOKENS * pairs
        if mt.startswith(("qwen3", "qwen3_5")):
            video = min(video, QWEN3_VL_MAX_VIDEO_TOKENS)
        if video > t:
            t, modality = video, "video"
        geo = dict(tokens=t, patches=t * merge * merge, pixels=3 * QWEN_VL_TEMPORAL_PATCH * p * p,
                   modality=modality)
    elif mm.get("mm_tokens_per_image") and vc.get("image_size"):           # Gemma 3 (SigLIP, pan-and-scan off)
        side = int(vc["image_size"]) // p
        geo = dict(tokens=int(mm["mm_tokens_per_image"]), patches=side * side, pixels=3 * p * p)
    elif mt == "pixtral" and vc.get("image_size"):                            # Mistral 3 / Pixtral
        merge = int(mm.get("spatial_merge_size") or arch.config.get("spatial_merge_size") or 1)
        side = int(vc["image_size"]) // p
        rows = side // merge
        geo = dict(tokens=rows * rows + rows, patches=side * side, pixels=3 * p * p)   # + one [IMG_BREAK] a row
    elif mt == "clip_vision_model" and vc.get("image_size"):                  # LLaVA: 336 px CLIP tiles
        size = int(vc["image_size"])
        side = size // p
        tokens, tiles = side * side, 1
        # LLaVA-NeXT any-res: the base tile plus the grid tiles of the largest pinpoint; features = base
        # + the unpadded grid (gh*side x gw*side) + one newline per grid row (vLLM LlavaNextProcessingInfo
        # get_num_image_tokens; 576 + 48 x 48 + 48 = 2,928 for a 2 x 2 grid of 336 px tiles)
        for hw in mm.get("image_grid_pinpoints") or []:
            gh, gw = int(hw[0]) // size, int(hw[1]) // size
            t = side * side + (gh * side) * (gw * side) + gh * side
            if t > tokens:
                tokens, tiles = t, 1 + gh * gw
        geo = dict(tokens=tokens, patches=tiles * (side * side + 1), pixels=3 * p * p)
    else:
        return None
    if geo["tokens"] <= 0 or geo["patches"] <= 0:
        return None
    geo.update(hidden=hv, intermediate=iv, depth=depth, gated=mt in _GATED_VIT, model_type=mt)
    return geo


def encoder_profile_bytes(arch: ModelArch, cfg: EffectiveConfig, dt: int) -> tuple[int, int, dict]:
    """(encoder forward peak, encoder outputs kept during the text profile) in bytes, V1 only."""
    if cfg.engine != "v1" or getattr(cfg, "skip_mm_profiling", False):
        return 0, 0, {}
    off = set(getattr(cfg, "mm_disabled", None) or [])
    if "image" in off and "video" in off:
        return 0, 0, {}
    geo = mm_item_geometry(arch, 0 if "video" in off else int(cfg.max_model_len))
    if geo is None:
        return 0, 0, {}
    t = geo["tokens"]
    budget = max(int(cfg.max_num_batched_tokens), t)
    n = max(1, budget // t)
    patches = n * geo["patches"]
    hv, iv = geo["hidden"], geo["intermediate"]
    mlp = (3 if geo["gated"] else 2) * iv
    per_patch = 2 * hv + max(4 * hv, mlp)            # residual + normed input + the larger of qkv/out, MLP
    pixel_bytes = patches * geo["pixels"] * (4 + dt)  # fp32 pixel_values from the processor + the cast copy
    enc_fwd = patches * per_patch * dt + pixel_bytes
    lo, hi = ENCODER_CACHE_TO_BUDGET
    rows = budget if lo <= parse_version(cfg.vllm_version) < hi and t < budget else t
    cache = n * rows * arch.hidden_size * dt
    info = dict(modality=geo.get("modality", "image"), items=n, tokens_per_item=t, encoder_budget=budget,
                cached_rows_per_item=rows,
                patches=patches, vit_hidden=hv, vit_mlp_elems=mlp, model_type=geo["model_type"])
    return enc_fwd, cache, info


def runner_buffer_bytes(arch: ModelArch, cfg: EffectiveConfig, dt: int) -> int:
    """Persistent GPU buffers the V1 model runner allocates at init, before the weights (bytes).

    Counted only where the profile takes the absolute torch peak (V1 0.7.0-0.9.0): ``GPUModelRunner.__init__``
    allocates ``inputs_embeds = torch.zeros((max_num_tokens, hidden_size), dtype)`` (every model in 0.7.0-0.9.1),
    ``input_ids`` int32 and ``positions`` int64 of ``max_num_tokens``, ``mrope_positions`` (3, T + 1) int64 for
    M-RoPE models, and the block table ``(max_num_reqs, cdiv(max_model_len, block_size))`` int32
    (vllm/v1/worker/gpu_model_runner.py, block_table.py of 0.7.0 / 0.8.5 / 0.9.0). From 0.9.1 memory_profiling
    measures the increase over a snapshot taken after them, so they drop out of the KV budget formula.
    """
    if cfg.engine != "v1" or parse_version(cfg.vllm_version) >= V1_MEMORY_PROFILING_FROM:
        return 0
    t = int(cfg.max_num_batched_tokens)
    mrope = bool((arch.config.get("rope_scaling") or {}).get("mrope_section")) if isinstance(
        arch.config.get("rope_scaling"), dict) else False
    blocks = -(-int(cfg.max_model_len) // max(1, int(cfg.block_size or 16)))
    return t * arch.hidden_size * dt + 12 * t + (24 * (t + 1) if mrope else 0) + int(cfg.max_num_seqs) * blocks * 4


def activation_peak(arch: ModelArch, gpu: GPU, cfg: EffectiveConfig,
                    last_stage: bool = True) -> tuple[int, int, int, list[Term]]:
    """(peak, forward_peak, sampler_peak) bytes of the profiling run, with explain terms."""
    dt = model_dtype_bytes(arch, cfg)
    tokens = int(cfg.max_num_batched_tokens)
    if cfg.engine == "v0" and not cfg.enable_chunked_prefill:
        tokens = max(tokens, cfg.max_model_len, 2048)
    fwd, fwd_in = _forward_peak_bytes(arch, cfg, tokens, dt)
    moe_ws = _moe_workspace_bytes(arch, cfg, tokens, dt)
    cc = float(gpu.compute_capability or "9.0")
    cublas = CUBLAS_WORKSPACE_SM90 if cc >= 9.0 else CUBLAS_WORKSPACE_OTHER
    terms = [
        Term(name="forward_peak", formula="tokens x (c_hidden x hidden + max(attn_elems, 3 x intermediate/tp)) x dtype_bytes",
             inputs=fwd_in, value=fwd, unit="bytes"),
    ]
    sampler = 0
    if last_stage and cfg.engine == "v1" and parse_version(cfg.vllm_version) < V1_SAMPLER_PROFILED_FROM:
        # V1 before 0.8.0 runs no sampler in profile_run: it computes the logits of every dummy token
        # ("logits = self.model.compute_logits(hidden_states, None)"; vLLM issue 13507 "[V1][Bug]: Consider
        # sampler in memory profiling", 2025-02-19) and frees them with the hidden states.
        v = arch.vocab_size
        sampler = tokens * arch.hidden_size * dt + tokens * v * dt + moe_ws
        terms.append(Term(
            name="sampler_peak", formula="V1 < 0.8: hidden states + logits of all T tokens (T x V x dtype), no sampler",
            inputs={"T": tokens, "V": v, "moe_workspace": moe_ws}, value=sampler, unit="bytes"))
    elif last_stage:
        r = min(int(cfg.max_num_seqs), tokens)
        v = arch.vocab_size
        f32 = 4 * r * v
        path, extra = sampler_path(cfg, gpu)
        logits_model = r * v * dt if dt != 4 else 0      # compute_logits output (fp32 models: same tensor)
        hidden_alive = (tokens + 2 * r) * arch.hidden_size * dt  # forward output + last-token rows + rand_like
        triton_buf = 0
        if "triton" in path:
            triton_buf = min(gpu.sm_count or 132, r) * v * 4
        sampler = hidden_alive + logits_model + f32 + int(extra * f32) + triton_buf + moe_ws
        terms.append(Term(
            name="sampler_peak",
            formula="hidden_alive + R x V x dtype + F + extra x F + triton_buffer + moe_workspace (F = 4 R V)",
            inputs={"R": r, "V": v, "path": path, "extra_F": extra, "hidden_alive": hidden_alive,
                    "moe_workspace": moe_ws, "triton_buffer": triton_buf},
            value=sampler, unit="bytes"))
    enc_fwd, enc_cache, enc_in = encoder_profile_bytes(arch, cfg, dt) if cfg.pipeline_parallel_size <= 1 else (0, 0, {})
    if enc_in:
        terms.append(Term(
            name="encoder_profile",
            formula="ViT on N items: patches x (2 x vit_hidden + max(4 x vit_hidden, vit_mlp)) x dtype + pixels; "
                    "outputs N x T x hidden x dtype kept through the text profile",
            inputs=enc_in, value=enc_fwd, unit="bytes"))
    sampler_moment = sampler + enc_cache if sampler else 0
    peak = max(fwd + moe_ws + enc_cache, sampler_moment, enc_fwd) + cublas
    buffers = runner_buffer_bytes(arch, cfg, dt)
    if buffers:
        peak += buffers
        terms.append(Term(
            name="runner_buffers",
            formula="V1 0.7.0-0.9.0 absolute torch peak: inputs_embeds T x hidden x dtype + input_ids/positions "
                    "(12 B/token, +24 B/token M-RoPE) + block table max_num_seqs x ceil(max_model_len / block) x 4 B",
            inputs={"T": tokens, "hidden": arch.hidden_size, "block_size": cfg.block_size}, value=buffers,
            unit="bytes"))
    terms.append(Term(name="cublas_workspace", formula="torch cuBLAS workspace allocated on first GEMM",
                      inputs={"compute_capability": cc}, value=cublas, unit="bytes", guessed=True))
    terms.append(Term(name="activation_peak",
                      formula="max(forward_peak + moe_workspace + encoder_cache, sampler_peak + encoder_cache, "
                              "encoder_forward) + cublas_workspace",
                      inputs={"encoder_cache": enc_cache, "encoder_forward": enc_fwd}, value=peak / GIB, unit="GiB"))
    return peak, fwd + moe_ws, sampler, terms


# ----------------------------------------------------------------------------------- the rest

def non_torch_bytes(cfg: EffectiveConfig, gpu: GPU | None = None) -> tuple[int, Term]:
    """Non-torch increase during profiling (guessed from real logs; see module constants)."""
    ver = parse_version(cfg.vllm_version)
    tp, pp = cfg.tensor_parallel_size, cfg.pipeline_parallel_size
    # Eras (vLLM source, see /vllm facts kv_cache_memory.eras): V0 up to 0.6.4 counts everything the device
    # holds beyond torch (CUDA context included); V0 0.6.5+ and V1 0.9.2+ count the increase over a baseline
    # snapshot (memory_profiling); V1 0.7.0..0.9.0 counts (total - free) - torch allocated: context included.
    if cfg.engine == "v0":
        base = NON_TORCH_TP1_V0 if ver < (0, 6, 5) else NON_TORCH_TP1_V0_PROFILING
    elif ver >= (0, 19, 0):
        base = NON_TORCH_TP1_V1_NEW
    elif ver < V1_MEMORY_PROFILING_FROM:
        base = NON_TORCH_TP1_V1_OLD + CUDA_CONTEXT
    elif ver < (0, 11, 0):
        base = NON_TORCH_TP1_V1_010
    else:
        base = NON_TORCH_TP1_V1_OLD
    if tp == 1 and pp > 1:
        base = NON_TORCH_PP_ONLY
    link = gpu.interconnect if gpu is not None else "nvlink"
    nvls = link == "nvlink" and float((gpu.compute_capability if gpu else None) or "0") >= 9.0
    if tp <= 1:
        comm, path = 0, "none"
    elif nvls and ver >= (0, 19, 0):
        comm, path = TP_COMM_NVLS, "nccl nvls + custom all-reduce"
    elif nvls:
        comm, path = TP_COMM_NVLINK_HOPPER_OLD, "nccl + custom all-reduce (hopper nvlink, before 0.19)"
    elif link in ("none", "pcie") or getattr(cfg, "custom_all_reduce", None) is False:
        if cfg.engine == "v1" and ver >= V1_MEMORY_PROFILING_FROM:
            comm = TP_COMM_NO_CUSTOM_AR_V1
        else:
            comm = TP_COMM_NO_P2P
        path = "nccl shm/pcie/net, no custom all-reduce"
    else:
        comm, path = TP_COMM_PLAIN, "nccl p2p/net + custom all-reduce"
    total = base + comm
    return total, Term(name="non_torch", formula="base (cuBLAS/kernels; CUDA context where the era counts it) "
                       "+ NCCL/custom all-reduce when tp > 1 (by interconnect)",
                       inputs={"base": base, "tp_comm": comm, "comm_path": path, "tp": tp, "pp": pp},
                       value=total / GIB, unit="GiB", guessed=True)


def cuda_graph_bytes(arch: ModelArch, cfg: EffectiveConfig, layers_on_stage: int) -> tuple[int, bool, Term]:
    """CUDA-graph memory estimate and whether this release subtracts it from the KV budget."""
    ver = parse_version(cfg.vllm_version)
    subtract = cfg.engine == "v1" and ver >= (0, 20, 0) and not cfg.enforce_eager
    if cfg.enforce_eager:
        est = 0
    else:
        moe = any(is_moe_layer(arch.config, i) for i in range(arch.num_layers))
        est = int((0.35 + 0.0125 * layers_on_stage + (0.3 if moe else 0.0)) * GIB)
    return est, subtract, Term(
        name="cuda_graph", formula="0.35 GiB + 0.0125 GiB x layers (+0.3 GiB MoE); subtracted from 0.20.0",
        inputs={"layers": layers_on_stage, "subtracted": subtract, "enforce_eager": cfg.enforce_eager},
        value=est / GIB, unit="GiB", guessed=True)


def memory_profile(arch: ModelArch, gpu: GPU, cfg: EffectiveConfig, weights: WeightBreakdown,
                   stage: int | None = None) -> MemoryProfile:
    """The memory profile of one GPU (pipeline ``stage``; default: the largest-weights stage)."""
    pp = max(1, cfg.pipeline_parallel_size)
    st = weights.pp_stage if stage is None else stage
    last = st == pp - 1
    total = int(gpu.cuda_total_bytes)
    gmu = float(cfg.gpu_memory_utilization)
    requested = math.ceil(total * gmu) if parse_version(cfg.vllm_version) >= (0, 14, 0) else int(total * gmu)
    w = weights.stage_bytes[st] if weights.stage_bytes else weights.bytes_per_gpu
    offload = int(cfg.cpu_offload_gb * GIB)
    w_gpu = max(0, w - offload)
    act, fwd, smp, terms = activation_peak(arch, gpu, cfg, last_stage=last)
    nt, nt_term = non_torch_bytes(cfg, gpu)
    start, end = get_pp_indices(arch.num_layers, st, pp)
    cg, sub, cg_term = cuda_graph_bytes(arch, cfg, end - start)
    explain = [
        Term(name="total", formula="torch.cuda.mem_get_info() total", inputs={"gpu": gpu.id},
             value=total / GIB, unit="GiB", guessed=bool(gpu.cuda_total_inferred)),
        Term(name="requested", formula="total x gpu_memory_utilization", inputs={"gmu": gmu},
             value=requested / GIB, unit="GiB"),
        Term(name="weights", formula="weight_breakdown stage bytes - cpu_offload", inputs={"stage": st,
             "cpu_offload_gb": cfg.cpu_offload_gb}, value=w_gpu / GIB, unit="GiB"),
    ] + terms + [nt_term, cg_term]
    override = cfg.kv_cache_memory_bytes is not None
    if override:
        kv = int(cfg.kv_cache_memory_bytes)
        formula = "--kv-cache-memory-bytes"
    else:
        kv = requested - w_gpu - act - nt - (cg if sub else 0)
        formula = ("total x gmu - peak_torch(weights + activation) - non_torch" if cfg.engine == "v0"
                   else "requested - weights - activation_peak - non_torch" + (" - cuda_graph" if sub else ""))
    explain.append(Term(name="kv_cache_memory", formula=formula, inputs={}, value=kv / GIB, unit="GiB"))
    return MemoryProfile(engine=cfg.engine, total_bytes=total, requested_bytes=requested, weights_bytes=w_gpu,
                         activation_peak_bytes=act, non_torch_bytes=nt, cuda_graph_bytes=cg,
                         cuda_graph_subtracted=sub, kv_cache_bytes=kv, kv_override=override,
                         forward_peak_bytes=fwd, sampler_peak_bytes=smp, explain=explain)
