"""Attention geometry that differs by layer type (Gemma 4: its full-attention layers use wider heads and fewer
KV heads than its sliding-window layers).

Gemma 4 (``model_type: gemma4_text``; HF config keys): sliding layers have ``num_key_value_heads`` KV heads of
``head_dim``; ``full_attention`` layers have ``num_global_key_value_heads`` KV heads of ``global_head_dim``, and
with ``attention_k_eq_v`` their V is the K projection's output (no ``v_proj`` weight) -- the cache still holds
K and V as two tensors (K gets RoPE, V does not; NVIDIA aiconfigurator's Gemma 4 model,
``sdk/models/gemma4.py``, counts both). Every other model: one geometry for all layers. Units: heads, elements.
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


def kv_geometry(arch: ModelArch, i: int) -> tuple[int, int]:
    """(KV heads, head dim) of layer ``i``'s K/V cache."""
    if is_global_layer(arch, i):
        c = arch.config
        return int(c.get("num_global_key_value_heads") or arch.num_kv_heads), int(c["global_head_dim"])
    return arch.num_kv_heads, arch.head_dim


def q_head_dim(arch: ModelArch, i: int) -> int:
    """Query head width of layer ``i``."""
    return int(arch.config["global_head_dim"]) if is_global_layer(arch, i) else arch.head_dim


def has_v_proj(arch: ModelArch, i: int) -> bool:
    """False where V reuses the K projection (Gemma 4 full layers with ``attention_k_eq_v``)."""
    return not (is_global_layer(arch, i) and arch.config.get("attention_k_eq_v"))
