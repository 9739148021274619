"""Standard config keys for architectures whose config.json spells them differently.

The rest of sched-reader reads the Llama-style keys (``hidden_size``, ``num_key_value_heads``,
``intermediate_size``, ``num_local_experts``, ``num_experts_per_tok``, ``tie_word_embeddings``). Two
families served by vLLM keep them elsewhere; this module fills the standard keys the way transformers'
config classes (and vLLM's model code) derive them, and says which keys it filled:

- DBRX (``model_type: dbrx``): ``d_model`` / ``n_heads`` / ``n_layers`` / ``max_seq_len`` at the top,
  ``attn_config.kv_n_heads`` / ``rope_theta`` and ``ffn_config.ffn_hidden_size`` / ``moe_num_experts`` /
  ``moe_top_k`` nested (transformers ``DbrxConfig``; vLLM ``dbrx.py`` reads the same nested keys).
  Every DBRX layer is a MoE layer.
- Falcon (``model_type: falcon``; older checkpoints ``RefinedWeb`` / ``RefinedWebModel``): KV heads are
  ``num_kv_heads`` (``n_head_kv``) under ``new_decoder_architecture`` (Falcon-40B/180B), 1 under
  ``multi_query`` (Falcon-7B), else one per query head; the MLP is ``ffn_hidden_size`` wide, default
  4 x hidden (transformers ``FalconConfig``; vLLM ``falcon.py`` ``FalconAttention`` / ``FalconMLP``).
  Falcon, Cohere, Jais and OPT tie the LM head to the embedding unless the config says otherwise
  (``FalconConfig`` / ``CohereConfig`` ``tie_word_embeddings=True``; Jais keeps the ``PretrainedConfig`` default).
- Hunyuan (``model_type: hunyuan_v1_moe``): per-layer lists ``moe_topk`` / ``moe_intermediate_size`` /
  ``num_shared_expert`` and ``attention_head_dim``.
- Nemotron-H with ``layers_block_type`` (mamba / attention / mlp / moe per layer) instead of a
  ``hybrid_override_pattern``: the pattern string (M / * / - / E) is filled from it.
- Kimi-Linear (``model_type: kimi_linear``): ``num_experts`` / ``num_experts_per_token`` / ``num_shared_experts``
  (DeepSeek spellings filled, so ``first_k_dense_replace`` keeps layer 0 dense).
- Ling / Ring 2.0 (``model_type: bailing_moe``, BailingMoeV2): ``num_experts`` / ``num_shared_experts`` (DeepSeek
  spellings filled, so ``first_k_dense_replace`` keeps the first layers dense).
- Hy3 (``model_type: hy_v3``): ``num_experts`` / ``num_shared_experts`` / ``expert_hidden_dim`` (DeepSeek spellings).
- MiMo-V2-Flash (``model_type: mimo_v2_flash``): ``layer_types`` from ``hybrid_layer_pattern`` (1 = sliding window).
- LFM2 (``model_type: lfm2``): ``tie_embedding``; with ``block_auto_adjust_ff_dim`` the SwiGLU is
  ``ceil(int(2 x block_ff_dim / 3) x multiplier / multiple_of) x multiple_of`` wide (``intermediate_size_mlp``).
- OPT (``model_type: opt``): the MLP width is ``ffn_dim`` (transformers ``OPTConfig``; vLLM ``opt.py``).
- Nemotron-NAS (``model_type: nemotron-nas``): ``num_key_value_heads`` and ``intermediate_size`` are null at the
  top; the per-layer ``block_configs`` give them (models/nas.py).

Keys already present are never overwritten. Nothing here reads a file or the network.
"""

from __future__ import annotations

from typing import Any

from sched_reader.models import nas

FALCON_TYPES = ("falcon", "RefinedWeb", "RefinedWebModel")
# transformers config-class defaults that change the weight count when a config.json omits them
_TIED_BY_DEFAULT = ("falcon", "RefinedWeb", "RefinedWebModel", "cohere", "jais", "opt")   # JAISConfig keeps the
# PretrainedConfig default (tie_word_embeddings=True); Jais shares the embedding with the LM head


def _set(cfg: dict[str, Any], filled: list[str], key: str, value: Any, why: str) -> None:
    if value is not None and cfg.get(key) is None:
        cfg[key] = value
        filled.append(f"{key}={value!r} ({why})")


def _per_layer_first(value: Any) -> Any:
    """A per-layer list's common value (None when the layers differ), or the value itself."""
    if isinstance(value, list):
        return value[0] if value and all(v == value[0] for v in value) else None
    return value


def _hunyuan_keys(cfg: dict[str, Any], filled: list[str]) -> None:
    """Hunyuan (transformers ``HunYuanMoEV1Config``; vLLM ``hunyuan_v1.py``): per-layer lists ``moe_topk`` /
    ``moe_intermediate_size`` / ``num_shared_expert`` (one value for every layer in the released checkpoints),
    ``attention_head_dim`` for the head width."""
    _set(cfg, filled, "head_dim", cfg.get("attention_head_dim"), "attention_head_dim")
    for std, key in (("num_experts_per_tok", "moe_topk"), ("n_shared_experts", "num_shared_expert")):
        _set(cfg, filled, std, _per_layer_first(cfg.get(key)), key)
    mi = cfg.get("moe_intermediate_size")
    if isinstance(mi, list):
        cfg["moe_intermediate_size"] = _per_layer_first(mi)
        filled.append(f"moe_intermediate_size={cfg['moe_intermediate_size']!r} (per-layer list, one value)")


def _nas_keys(cfg: dict[str, Any], filled: list[str]) -> None:
    """Nemotron-NAS (``block_configs``, models/nas.py): the uniform keys other code reads, from the blocks.
    ``num_key_value_heads``: the attention blocks' KV heads (every published checkpoint uses one group size);
    ``intermediate_size``: the widest block's MLP (what a peak-activation estimate needs)."""
    blocks = nas.blocks(cfg)
    heads, hidden = cfg.get("num_attention_heads"), cfg.get("hidden_size")
    if not blocks or not isinstance(heads, int) or not isinstance(hidden, int):
        return
    kv = sorted({nas.kv_heads(b, heads) for b in blocks if nas.has_attention(b)})
    if kv:
        _set(cfg, filled, "num_key_value_heads", kv[-1], "block_configs n_heads_in_group"
             + ("" if len(kv) == 1 else f" (largest of {kv})"))
    _set(cfg, filled, "intermediate_size", max(nas.ffn_width(b, hidden) for b in blocks), "widest block_configs ffn")


def normalize_config(model_type: str, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(config with the standard keys filled, the filled keys as ``key=value (from)``); input not modified."""
    cfg = dict(config)
    filled: list[str] = []
    if model_type == "dbrx":
        attn = cfg.get("attn_config") if isinstance(cfg.get("attn_config"), dict) else {}
        ffn = cfg.get("ffn_config") if isinstance(cfg.get("ffn_config"), dict) else {}
        for std, key in (("hidden_size", "d_model"), ("num_hidden_layers", "n_layers"),
                         ("num_attention_heads", "n_heads"), ("max_position_embeddings", "max_seq_len")):
            _set(cfg, filled, std, cfg.get(key), key)
        _set(cfg, filled, "num_key_value_heads", attn.get("kv_n_heads"), "attn_config.kv_n_heads")
        _set(cfg, filled, "rope_theta", attn.get("rope_theta"), "attn_config.rope_theta")
        _set(cfg, filled, "intermediate_size", ffn.get("ffn_hidden_size"), "ffn_config.ffn_hidden_size")
        _set(cfg, filled, "moe_intermediate_size", ffn.get("ffn_hidden_size"), "ffn_config.ffn_hidden_size")
        _set(cfg, filled, "num_local_experts", ffn.get("moe_num_experts"), "ffn_config.moe_num_experts")
        _set(cfg, filled, "num_experts_per_tok", ffn.get("moe_top_k"), "ffn_config.moe_top_k")
    elif model_type in FALCON_TYPES:
        _set(cfg, filled, "num_hidden_layers", cfg.get("n_layer"), "n_layer")
        _set(cfg, filled, "num_attention_heads", cfg.get("n_head"), "n_head")
        heads = cfg.get("num_attention_heads")
        if cfg.get("new_decoder_architecture"):
            kv, why = cfg.get("num_kv_heads") or cfg.get("n_head_kv"), "num_kv_heads (new_decoder_architecture)"
        elif cfg.get("multi_query", True):   # FalconConfig default multi_query=True
            kv, why = 1, "multi_query"
        else:
            kv, why = heads, "one KV head per query head"
        _set(cfg, filled, "num_key_value_heads", kv, why)
        hidden = cfg.get("hidden_size")
        inter = cfg.get("ffn_hidden_size") or (4 * int(hidden) if isinstance(hidden, int) else None)
        _set(cfg, filled, "intermediate_size", inter, "ffn_hidden_size" if cfg.get("ffn_hidden_size") else "4 x hidden")
    elif model_type == "kimi_linear":   # KimiLinearConfig spells the MoE keys its own way
        for std, key in (("n_routed_experts", "num_experts"), ("num_experts_per_tok", "num_experts_per_token"),
                         ("n_shared_experts", "num_shared_experts")):
            _set(cfg, filled, std, cfg.get(key), key)
    elif model_type == "nemotron_h" and isinstance(cfg.get("layers_block_type"), list):
        # newer Nemotron-H configs (Nemotron 3 Ultra) list block types instead of a hybrid_override_pattern
        code = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}
        kinds = [code.get(str(t)) for t in cfg["layers_block_type"]]
        if all(kinds):
            _set(cfg, filled, "hybrid_override_pattern", "".join(kinds), "layers_block_type")
            _set(cfg, filled, "num_hidden_layers", len(kinds), "len(layers_block_type)")
    elif model_type == "minimax_m3":     # dense layers (first_k_dense_replace) are dense_intermediate_size wide
        _set(cfg, filled, "intermediate_size_mlp", cfg.get("dense_intermediate_size"), "dense_intermediate_size")
    elif model_type == "step3p7":        # Step-3.7-Flash: num_experts routed after first_k_dense_replace dense layers
        _set(cfg, filled, "n_routed_experts", cfg.get("num_experts"), "num_experts")
    elif model_type == "hy_v3":   # Hy3 (HYV3 config): num_experts / num_shared_experts / expert_hidden_dim
        for std, key in (("n_routed_experts", "num_experts"), ("n_shared_experts", "num_shared_experts"),
                         ("moe_intermediate_size", "expert_hidden_dim")):
            _set(cfg, filled, std, cfg.get(key), key)
    elif model_type == "bailing_moe" and cfg.get("first_k_dense_replace") is not None:
        # BailingMoeV2Config (Ling / Ring 2.0): DeepSeek-style layout under its own names; the first
        # first_k_dense_replace layers are dense (vLLM bailing_moe.py BailingMoeV2 decoder layers)
        for std, key in (("n_routed_experts", "num_experts"), ("n_shared_experts", "num_shared_experts")):
            _set(cfg, filled, std, cfg.get(key), key)
    elif model_type == "mimo_v2_flash" and isinstance(cfg.get("hybrid_layer_pattern"), list):
        # MiMoV2FlashConfig: hybrid_layer_pattern 1 = sliding-window layer, 0 = full attention
        _set(cfg, filled, "layer_types", ["sliding_attention" if int(x) == 1 else "full_attention"
                                          for x in cfg["hybrid_layer_pattern"]], "hybrid_layer_pattern")
    elif model_type == "gemma4_text":   # Gemma4TextConfig: top_k_experts
        _set(cfg, filled, "num_experts_per_tok", cfg.get("top_k_experts"), "top_k_experts")
    elif model_type == "nemotron-nas":
        _nas_keys(cfg, filled)
    elif model_type in ("hunyuan_v1_moe", "hunyuan_v1_dense", "hunyuan"):
        _hunyuan_keys(cfg, filled)
    elif model_type == "lfm2":   # Lfm2Config: tie_embedding; the SwiGLU width block_ff_dim shrunk by auto-adjust
        _set(cfg, filled, "tie_word_embeddings", cfg.get("tie_embedding"), "tie_embedding")
        ff = cfg.get("block_ff_dim") or cfg.get("intermediate_size")
        if isinstance(ff, int) and cfg.get("block_auto_adjust_ff_dim"):
            # vLLM lfm2.py Lfm2MLP: int(2 x ff / 3), x block_ffn_dim_multiplier, rounded up to block_multiple_of
            ff = int(2 * ff / 3)
            if cfg.get("block_ffn_dim_multiplier") is not None:
                ff = int(float(cfg["block_ffn_dim_multiplier"]) * ff)
            m = int(cfg.get("block_multiple_of") or 256)
            ff = m * -(-ff // m)
            _set(cfg, filled, "intermediate_size_mlp", ff, "block_ff_dim auto-adjusted")
    elif model_type == "opt":   # OPTConfig: ffn_dim is the MLP width (fc1 / fc2, ReLU)
        _set(cfg, filled, "intermediate_size", cfg.get("ffn_dim"), "ffn_dim")
    if model_type in _TIED_BY_DEFAULT and "tie_word_embeddings" not in cfg:
        _set(cfg, filled, "tie_word_embeddings", True, f"{model_type} default")
    return cfg, filled
