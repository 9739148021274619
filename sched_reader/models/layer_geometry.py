"""Attention geometry that differs by layer type (Gemma 4: its full-attention layers use wider heads and fewer
KV heads than its sliding-window layers).

Gemma 4 (``model_type: gemma4_text``; HF config keys): sliding layers have ``num_key_value_heads`` KV heads of
``head_dim``; ``full_attention`` layers have ``num_global_key_value_heads`` KV heads of ``global_head_dim``, and
with ``attention_k_eq_v`` their V is the K projection's output (no ``v_proj`` weight) -- the cache still holds
K and V as two tensors (K gets RoPE, V does not; NVIDIA aiconfigurator's Gemma 4 model,
``sdk/models/gemma4.py``, counts both).

MiMo-V2 (``model_type: mimo_v2_flash``; MiMoV2FlashConfig keys): ``hybrid_layer_pattern`` marks sliding-window
layers (1) and full-attention layers (0); sliding layers use ``swa_num_key_value_heads`` KV heads of
``swa_head_dim`` (Q/K width) with V ``swa_v_head_dim`` wide, full layers ``num_key_value_heads`` of ``head_dim``
with V ``v_head_dim`` wide (MiMo-V2-Flash: K 192, V 128). The weights hold V at its own width; the cache is
taken as one head size per layer, V padded to the K width (vLLM's attention KV spec carries one ``head_size``;
an engine port of MiMo-V2-Flash documents the same 192-wide V cache with the last 64 columns zero) -- an
assumption, not read from vLLM's MiMo code. Every other model: one geometry for all layers. Units: heads,
elements.
"""

from __future__ import annotations

from sched_reader.models.architecture import ModelArch


def is_global_layer(arch: ModelArch, i: int) -> bool:
    """Whether layer ``i`` is a Gemma-4-style full-attention layer with its own (global) head geometry."""
    c = arch.config
    if not c.get("global_head_dim"):
        return False
    lt = c.get("layer_types")
    return isinstance(lt, list) and 0 <= i < len(lt) and "full" in str(lt[i])


def is_mimo_swa_layer(arch: ModelArch, i: int) -> bool:
    """Whether layer ``i`` is a MiMo-V2 sliding-window layer with its own (``swa_*``) head geometry."""
    c = arch.config
    if not c.get("swa_num_key_value_heads"):
        return False
    lt = c.get("layer_types")
    return isinstance(lt, list) and 0 <= i < len(lt) and "sliding" in str(lt[i])


def kv_geometry(arch: ModelArch, i: int) -> tuple[int, int]:
    """(KV heads, head dim) of layer ``i``'s K/V cache."""
    c = arch.config
    if is_global_layer(arch, i):
        return int(c.get("num_global_key_value_heads") or arch.num_kv_heads), int(c["global_head_dim"])
    if is_mimo_swa_layer(arch, i):
        return int(c["swa_num_key_value_heads"]), int(c.get("swa_head_dim") or arch.head_dim)
    return arch.num_kv_heads, arch.head_dim


def v_head_dim(arch: ModelArch, i: int) -> int:
    """Width of layer ``i``'s V projection per KV head (and of the attention output per query head): the K width
    except in MiMo-V2, whose V is narrower (``v_head_dim`` / ``swa_v_head_dim``)."""
    c = arch.config
    hd = kv_geometry(arch, i)[1]
    if not arch.model_type.startswith("mimo_v2"):
        return hd
    key = "swa_v_head_dim" if is_mimo_swa_layer(arch, i) else "v_head_dim"
    return int(c.get(key) or hd)


def is_kv_shared_layer(arch: ModelArch, i: int) -> bool:
    """Whether layer ``i`` reads another layer's K/V instead of caching its own: the last ``num_kv_shared_layers``
    layers of Gemma 3n / Gemma 4 E2B / E4B (each reuses the cache of the last earlier layer of its attention type;
    vLLM allocates no KV cache for them -- ``kv_sharing_target_layer_name``)."""
    n = int(arch.config.get("num_kv_shared_layers") or 0)
    return n > 0 and arch.num_layers - n <= i < arch.num_layers


def ple_width(arch: ModelArch) -> int:
    """Per-layer-embedding width (Gemma 3n / Gemma 4 ``hidden_size_per_layer_input``; 0 when the model has none)."""
    return int(arch.config.get("hidden_size_per_layer_input") or 0)


def q_heads(arch: ModelArch, i: int) -> int:
    """Query heads of layer ``i``: ``num_attention_heads_per_layer[i]`` where the config lists one per layer
    (Laguna: 48 on full-attention layers, 64 / 72 on sliding ones, one KV geometry for all), else
    ``num_attention_heads``."""
    per = arch.config.get("num_attention_heads_per_layer")
    if isinstance(per, list) and 0 <= i < len(per) and per[i]:
        return int(per[i])
    return arch.num_attention_heads


def output_gate_width(arch: ModelArch, i: int) -> int:
    """Columns of layer ``i``'s attention output gate projection (hidden -> gate), 0 when none. Laguna
    (``gating``): ``"per-head"`` one softplus gate per query head, ``true`` / ``"per-element"`` one per
    (head, head_dim) channel (transformers / vLLM ``laguna.py`` LagunaAttention ``g_proj``)."""
    if arch.model_type != "laguna":
        return 0
    g = arch.config.get("gating")
    if g in (None, False):
        return 0
    heads = q_heads(arch, i)
    return heads if str(g).lower().replace("_", "-") == "per-head" else heads * q_head_dim(arch, i)


def q_head_dim(arch: ModelArch, i: int) -> int:
    """Query head width of layer ``i``."""
    return int(arch.config["global_head_dim"]) if is_global_layer(arch, i) else arch.head_dim


def has_v_proj(arch: ModelArch, i: int) -> bool:
    """False where V reuses the K projection (Gemma 4 full layers with ``attention_k_eq_v``)."""
    return not (is_global_layer(arch, i) and arch.config.get("attention_k_eq_v"))
