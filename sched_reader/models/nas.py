"""Heterogeneous decoder blocks: NVIDIA Llama-Nemotron "NAS" checkpoints (``DeciLMForCausalLM``,
``model_type: nemotron-nas``; Llama-3.3-Nemotron-Super-49B, Llama-3.1-Nemotron-Ultra-253B, -Nano-8B).

Their ``config.json`` carries one ``block_configs`` entry per layer instead of uniform sizes:

* ``attention.no_op: true`` -- the layer has no attention (no q/k/v/o, no ``input_layernorm``, and no KV
  cache); else ``num_attention_heads // attention.n_heads_in_group`` KV heads;
* ``ffn.no_op: true`` -- no MLP (nor ``post_attention_layernorm``); else a SwiGLU of width
  ``find_multiple(int(2 x ffn_mult x hidden / 3), 256)``.

Source: vLLM ``vllm/model_executor/models/nemotron_nas.py`` (``DeciLMDecoderLayer``,
``_ffn_mult_to_intermediate_size``), the same rule as the checkpoints' own ``modeling_decilm.py``.
``replace_with_linear`` blocks (one hidden x hidden linear instead of attention / MLP) are not modelled;
no published Nemotron-NAS checkpoint read here uses them. Units: elements.
"""

from __future__ import annotations

from typing import Any

from sched_reader.models.architecture import ModelArch


def blocks(config: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The per-layer ``block_configs`` of a config, or None for a uniform model."""
    b = config.get("block_configs")
    return b if isinstance(b, list) and b and all(isinstance(x, dict) for x in b) else None


def _part(block: dict[str, Any], name: str) -> dict[str, Any]:
    p = block.get(name)
    return p if isinstance(p, dict) else {}


def has_attention(block: dict[str, Any]) -> bool:
    return not _part(block, "attention").get("no_op")


def kv_heads(block: dict[str, Any], num_attention_heads: int) -> int:
    """KV heads of an attention block (``num_attention_heads // n_heads_in_group``); 0 without attention."""
    if not has_attention(block):
        return 0
    group = int(_part(block, "attention").get("n_heads_in_group") or 1)
    return max(1, num_attention_heads // group)


def ffn_width(block: dict[str, Any], hidden: int) -> int:
    """SwiGLU width of the block's MLP; 0 when the MLP is a no-op."""
    ffn = _part(block, "ffn")
    if ffn.get("no_op"):
        return 0
    n = int(2 * float(ffn.get("ffn_mult") or 0) * hidden / 3)
    return n if n % 256 == 0 else n + 256 - n % 256


def layer_ffn_width(arch: ModelArch, i: int) -> int | None:
    """MLP width of layer ``i`` of a NAS model; None for a uniform model."""
    b = blocks(arch.config)
    if b is None or not 0 <= i < len(b):
        return None
    return ffn_width(b[i], arch.hidden_size)


def layer_norms(arch: ModelArch, i: int) -> int | None:
    """Norm weights of layer ``i`` of a NAS model (input norm with attention, post-attention norm with an MLP)."""
    b = blocks(arch.config)
    if b is None or not 0 <= i < len(b):
        return None
    return arch.hidden_size * (int(has_attention(b[i])) + int(ffn_width(b[i], arch.hidden_size) > 0))
