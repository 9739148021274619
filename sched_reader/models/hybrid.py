"""Hybrid models: layers that keep a fixed-size recurrent state instead of per-token K/V.

Which layer is what (HF config keys):

* Gated DeltaNet ("linear_attention") layers of Qwen3-Next / Qwen3.5 / Qwen3.6: ``layer_types`` entries
  ``linear_attention`` / ``full_attention``, else every ``full_attention_interval``-th layer is full
  attention (Qwen3NextConfig default 4).
* Nemotron-H / Nemotron-Nano-v2: ``hybrid_override_pattern``, one character per layer: ``M`` Mamba-2,
  ``*`` attention, ``-`` MLP only, ``E`` MoE only (the last two hold no cache).
* Jamba: attention where ``i % attn_layer_period == attn_layer_offset``, Mamba-1 elsewhere.
* Kimi-Linear: Kimi Delta Attention (``kda``) on the 1-based ``linear_attn_config.kda_layers``, MLA elsewhere.
* MiniMax-M1 / MiniMax-Text-01: ``attn_type_list`` per layer, 0 = lightning (linear) attention, 1 = softmax.
* LFM2 / LFM2.5: ``layer_types`` entries ``conv`` (gated short convolution, ``conv_L_cache`` taps) / ``full_attention``.

State per request per layer on one TP rank (vLLM ``get_mamba_state_shape_from_config``;
``MambaSpec.page_size_bytes`` = sum of the state tensors' bytes):

* Gated DeltaNet: conv state ``(2 Hk Dk + Hv Dv) / tp x (kernel - 1)`` + temporal state
  ``Hv / tp x Dk x Dv`` (vllm/model_executor/models/qwen3_next.py).
* Mamba-2: conv state ``(H P + 2 G N) / tp x (kernel - 1)`` + SSM state ``H / tp x P x N``
  (vllm/model_executor/layers/mamba/mamba_utils.py, groups replicated when G does not divide tp).
* Mamba-1: conv ``I / tp x (kernel - 1)`` + SSM ``I / tp x N``.
* KDA: three short-conv states (q, k, v) ``H D / tp x (kernel - 1)`` each + recurrent state ``H / tp x D x D``
  in float32 whatever the model dtype (vLLM ``MambaStateShapeCalculator.kda_state_shape`` /
  ``MambaStateDtypeCalculator.kda_state_dtype``: conv states in the cache dtype, recurrent torch.float32).
* Lightning attention (MiniMax): one state ``H / tp x D x D`` in the cache dtype, no conv state
  (``linear_attention_state_shape`` / ``linear_attention_state_dtype``).
* Short convolution (LFM2): one conv state ``conv_dim / tp x (L_cache - 1)`` in the model dtype
  (``short_conv_state_shape``).

Dtypes: the conv state takes the model dtype; the SSM / temporal state takes ``mamba_ssm_dtype`` from
the config when present (Qwen3.5 ships float32), else the model dtype; Nemotron-H: ``resolved_ssm_dtype``. Both checked against real logs:
Qwen3-Next-80B-A3B TP2 (v0.10.2: "Setting attention block size to 544 tokens", "Padding mamba page
size by 1.49%") and Qwen3.5-0.8B (544, 2.64%) / Qwen3.6-27B (784) in public LMCache/GPUStack docs.
Units: bytes.
"""

from __future__ import annotations

from typing import Any

from sched_reader.models import nas
from sched_reader.models.architecture import ModelArch

RECURRENT = ("gdn", "mamba2", "mamba1", "kda", "lightning", "shortconv")   # mixers that keep a fixed-size state per request
_DTYPE_BYTES = {"float32": 4, "float": 4, "fp32": 4, "bfloat16": 2, "float16": 2, "half": 2, "bf16": 2, "fp16": 2}


def layer_mixers(arch: ModelArch) -> list[str] | None:
    """Per layer ``attention`` / ``gdn`` / ``mamba2`` / ``mamba1`` / ``none``; None for a plain transformer."""
    c = arch.config
    n = arch.num_layers
    lac = c.get("linear_attn_config")
    if isinstance(lac, dict) and isinstance(lac.get("kda_layers"), list):   # Kimi-Linear: 1-based layer numbers
        kda = {int(x) for x in lac["kda_layers"]}
        return ["kda" if i + 1 in kda else "attention" for i in range(n)]
    atl = c.get("attn_type_list")
    if isinstance(atl, list) and len(atl) == n and 0 in atl:   # MiniMax-M1 / Text-01: 0 = lightning attention
        return ["lightning" if int(t) == 0 else "attention" for t in atl]
    blocks = nas.blocks(c)
    if blocks is not None and len(blocks) == n:   # Nemotron-NAS: attention-free blocks hold no cache
        return ["attention" if nas.has_attention(b) else "none" for b in blocks]
    lt = c.get("layer_types")
    if isinstance(lt, list) and len(lt) == n and any("linear" in str(t) or "mamba" in str(t) or str(t) == "conv"
                                                     for t in lt):
        return ["gdn" if "linear" in str(t) else "mamba2" if "mamba" in str(t) else "shortconv" if str(t) == "conv"
                else "attention" for t in lt]
    if c.get("linear_num_value_heads") and (c.get("full_attention_interval") or arch.model_type.startswith(
            ("qwen3_next", "qwen3_5"))):
        k = int(c.get("full_attention_interval") or 4)
        return ["attention" if (i + 1) % k == 0 else "gdn" for i in range(n)]
    pat = c.get("hybrid_override_pattern")
    if isinstance(pat, str) and len(pat) == n:
        return ["mamba2" if ch == "M" else "attention" if ch == "*" else "none" for ch in pat]
    if c.get("attn_layer_period") and (c.get("mamba_d_state") or c.get("mamba_expand")):
        p, o = int(c["attn_layer_period"]), int(c.get("attn_layer_offset") or 0)
        return ["attention" if i % p == o else "mamba1" for i in range(n)]
    return None


def is_hybrid(arch: ModelArch) -> bool:
    """True when some layer keeps a recurrent state."""
    kinds = layer_mixers(arch)
    return bool(kinds) and any(k in RECURRENT for k in kinds)


def _dt(name: Any, default: int) -> int:
    return _DTYPE_BYTES.get(str(name).replace("torch.", ""), default) if name else default


def state_shapes(arch: ModelArch, kind: str, tp: int) -> list[tuple[int, int]]:
    """[(elements, which)] of one layer's state tensors on one rank; which = 0 conv, 1 ssm, 2 float32 state."""
    c = arch.config
    tp = max(1, tp)
    if kind == "gdn":
        hk, dk = int(c["linear_num_key_heads"]), int(c["linear_key_head_dim"])
        hv, dv = int(c["linear_num_value_heads"]), int(c["linear_value_head_dim"])
        kern = int(c.get("linear_conv_kernel_dim") or 4)
        conv_dim = 2 * hk * dk + hv * dv
        return [(conv_dim // tp * (kern - 1), 0), (hv // tp * dk * dv, 1)]
    if kind == "lightning":                 # in the cache dtype (``which`` 0), like a conv state
        return [(arch.num_attention_heads // tp * arch.head_dim * arch.head_dim, 0)]
    if kind == "kda":
        lac = c["linear_attn_config"]
        heads, d = int(lac["num_heads"]), int(lac["head_dim"])
        kern = int(lac.get("short_conv_kernel_size") or 4)
        return [(3 * (heads * d // tp) * (kern - 1), 0), (heads // tp * d * d, 2)]
    if kind == "mamba2":
        h = int(c.get("mamba_num_heads") or c.get("mamba_n_heads"))
        p = int(c.get("mamba_head_dim") or c.get("mamba_d_head"))
        g = int(c.get("n_groups") or c.get("mamba_n_groups") or 1)
        n = int(c.get("ssm_state_size") or c.get("mamba_d_state"))
        kern = int(c.get("conv_kernel") or c.get("mamba_d_conv") or 4)
        g_rank = g // tp if g % tp == 0 else g      # groups replicated when tp does not divide them
        conv_dim = h * p // tp + 2 * g_rank * n
        return [(conv_dim * (kern - 1), 0), (h // tp * p * n, 1)]
    if kind == "mamba1":
        inter = int(c.get("mamba_expand", 2)) * arch.hidden_size
        n = int(c.get("mamba_d_state") or 16)
        kern = int(c.get("mamba_d_conv") or 4)
        return [(inter // tp * (kern - 1), 0), (inter // tp * n, 1)]
    if kind == "shortconv":   # LFM2: one conv state (conv_dim / tp, L_cache - 1), vLLM short_conv_state_shape
        dim = int(c.get("conv_dim") or arch.hidden_size)
        return [(dim // tp * (int(c.get("conv_L_cache") or 3) - 1), 0)]
    return []


# vLLM's NemotronHForCausalLMConfig hook (vllm/model_executor/models/config.py) replaces --mamba-ssm-cache-dtype
# "auto" by the config's ``mamba_ssm_cache_dtype``, else a default: float16 since vLLM 0.13.0
# (https://github.com/vllm-project/vllm/pull/29978, merged 2025-12, the release that added the "float16" choice),
# float32 since https://github.com/vllm-project/vllm/pull/39032 (opened and reviewed 2026-04-05, after 0.19.0's
# 2026-04-02 branch point; its merge date was not read: first in 0.20.0, cut 2026-04-27, is an assumption).
# Before 0.13.0 "auto" meant the model dtype for every model.
_NEMOTRON_H_HOOK = (0, 13, 0)
_NEMOTRON_H_FP32_DEFAULT = (0, 20, 0)


def resolved_ssm_dtype(arch: ModelArch, flag: str | None, vllm_version: tuple[int, int, int]) -> str | None:
    """The SSM state dtype vLLM uses for ``--mamba-ssm-cache-dtype flag`` (None: model dtype / config rule)."""
    if flag not in (None, "auto"):
        return flag
    if arch.model_type == "nemotron_h" or "NemotronHForCausalLM" in arch.architectures:
        if vllm_version >= _NEMOTRON_H_HOOK:
            return str(arch.config.get("mamba_ssm_cache_dtype") or (
                "float32" if vllm_version >= _NEMOTRON_H_FP32_DEFAULT else "float16"))
    return flag


def state_bytes(arch: ModelArch, kind: str, tp: int, model_dtype_bytes: int, ssm_dtype: str | None = None) -> int:
    """Bytes of one layer's recurrent state for one request on one TP rank (unpadded page)."""
    c = arch.config
    ssm = _dt(ssm_dtype if ssm_dtype not in (None, "auto") else c.get("mamba_ssm_dtype"), model_dtype_bytes)
    conv = _dt(c.get("mamba_conv_dtype"), model_dtype_bytes)
    return sum(e * (conv if which == 0 else ssm if which == 1 else 4) for e, which in state_shapes(arch, kind, tp))


def mixer_params(arch: ModelArch, kind: str, tp: int) -> tuple[int, int]:
    """(total, per rank) parameters of one recurrent mixer (HF module layout)."""
    c = arch.config
    h = arch.hidden_size
    tp = max(1, tp)
    if kind == "gdn":
        hk, dk = int(c["linear_num_key_heads"]), int(c["linear_key_head_dim"])
        hv, dv = int(c["linear_num_value_heads"]), int(c["linear_value_head_dim"])
        kern = int(c.get("linear_conv_kernel_dim") or 4)
        kd, vd = hk * dk, hv * dv
        in_qkvz = h * (2 * kd + 2 * vd)           # q, k, v, z
        in_ba = h * 2 * hv                        # beta, alpha
        conv = (2 * kd + vd) * kern               # depthwise conv1d, no bias
        small = 2 * hv + dv                       # dt_bias, A_log, gated RMSNorm weight (head dim)
        out = vd * h
        total = in_qkvz + in_ba + conv + small + out
        rank = (in_qkvz + in_ba + conv + out) // tp + 2 * hv // tp + dv
        return total, rank
    if kind == "lightning":   # vLLM minimax_text_01.py: qkv_proj, output_gate, out_proj, norm over H x D
        p = arch.num_attention_heads * arch.head_dim
        total = 5 * h * p + p
        return total, total // tp
    if kind == "kda":       # vLLM kda.py / the checkpoint's KimiDeltaAttention
        lac = c["linear_attn_config"]
        heads, d = int(lac["num_heads"]), int(lac["head_dim"])
        kern = int(lac.get("short_conv_kernel_size") or 4)
        p = heads * d
        split = 3 * h * p + 3 * p * kern + heads + d * p + p + h * heads + d * p + p * h
        # q/k/v, short convs (no bias), A_log, f_b, dt_bias, b_proj, g_b, o_proj: split over ranks;
        # f_a / g_a (hidden -> head_dim) and the o_norm weight: one copy per rank
        whole = 2 * h * d + d
        if lac.get("use_full_rank_gate"):   # Kimi-K3: f and g are full-rank hidden -> heads x head_dim projections
            split += 2 * h * p - 2 * d * p
            whole = d
        return split + whole, split // tp + whole
    if kind == "mamba2":
        nh = int(c.get("mamba_num_heads") or c.get("mamba_n_heads"))
        p = int(c.get("mamba_head_dim") or c.get("mamba_d_head"))
        g = int(c.get("n_groups") or c.get("mamba_n_groups") or 1)
        n = int(c.get("ssm_state_size") or c.get("mamba_d_state"))
        kern = int(c.get("conv_kernel") or c.get("mamba_d_conv") or 4)
        inter = nh * p
        conv_dim = inter + 2 * g * n
        in_proj = h * (2 * inter + 2 * g * n + nh)
        conv = conv_dim * kern + (conv_dim if c.get("use_conv_bias", True) else 0)
        small = 3 * nh + inter                    # dt_bias, A_log, D, gated norm
        out = inter * h
        total = in_proj + conv + small + out
        return total, total // tp
    if kind == "shortconv":   # LFM2 Lfm2ShortConv: in_proj (h -> 3 x dim: B, C, x), depthwise conv, out_proj
        dim = int(c.get("conv_dim") or h)
        kern = int(c.get("conv_L_cache") or 3)
        bias = bool(c.get("conv_bias"))
        total = h * 3 * dim + dim * kern + dim * h + ((3 * dim + dim + h) if bias else 0)
        return total, (h * 3 * dim + dim * kern + dim * h) // tp + ((3 * dim + dim) // tp + h if bias else 0)
    if kind == "mamba1":
        inter = int(c.get("mamba_expand", 2)) * h
        n = int(c.get("mamba_d_state") or 16)
        kern = int(c.get("mamba_d_conv") or 4)
        r = int(c.get("mamba_dt_rank") or -(-h // 16))
        total = h * 2 * inter + inter * kern + inter + inter * (r + 2 * n) + r * inter + inter + inter * n + inter + inter * h
        return total, total // tp
    return 0, 0
