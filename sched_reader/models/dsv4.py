"""DeepSeek-V4 (``model_type: deepseek_v4``): compressed attention (CSA + HCA) -- its KV cache and attention weights.

Facts (HF config.json keys; DeepSeek-V4-Flash / -Pro model cards; vLLM ``vllm/models/deepseek_v4``):

* Every layer attends over a raw sliding window of ``sliding_window`` (128) tokens. One KV vector per token of
  ``head_dim`` (512) elements serves as both K and V (a single latent KV head: NVIDIA NeMo Automodel's
  ``deepseek_v4.layers``: "K = V = kv (one latent vector serves both key and value)").
* ``compress_ratios[i]`` (or ``layer_types`` + ``compress_rates``) gives layer ``i``'s ratio r: 0 = the window only;
  r > 0 adds one compressed KV row per r tokens (CSA r = 4, HCA r = 128). CSA layers also keep an indexer key per
  compressed row of ``index_head_dim`` FP4 elements (0.5 byte each; NVIDIA aiconfigurator-core 0.12.0
  ``deepseek_v4_indexer_cache_entry_bytes``). Only the first ``num_hidden_layers`` ratios are decoder layers (the
  last belongs to the MTP layer).
* vLLM's V4 sparse-MLA backends cache ``head_size`` 512 per row in bf16 (``auto``) or an fp8 layout
  (``fp8`` / ``fp8_ds_mla``), 256-token kernel blocks (vLLM ``deepseek_v4/sparse_mla.py``
  ``DeepseekV4FlashMLABackend``). The fp8 row is taken as 512 bytes (its rope-part and scale overhead, a few
  percent, not read). The compressor's per-request decode state (a few rows of fp32) is not counted.

Here a compressed row is spread over the r tokens it stands for: a CSA layer holds ``(row + indexer key) / 4`` bytes
per token, an HCA layer ``row / 128``, beside the layer's sliding-window cache. Units: bytes, elements, tokens.
"""

from __future__ import annotations

from sched_reader.models.architecture import ModelArch

_TYPE_RATIO_KEYS = {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}


def is_dsv4(arch: ModelArch) -> bool:
    return arch.model_type == "deepseek_v4"


def compress_ratios(arch: ModelArch) -> list[int]:
    """Compression ratio of each decoder layer (0: sliding window only)."""
    c = arch.config
    n = arch.num_layers
    cr = c.get("compress_ratios")
    if isinstance(cr, list) and len(cr) >= n:
        return [int(x or 0) for x in cr[:n]]
    lt = c.get("layer_types")
    rates = c.get("compress_rates") if isinstance(c.get("compress_rates"), dict) else {}
    if isinstance(lt, list) and len(lt) == n:
        return [int(rates.get(str(t), _TYPE_RATIO_KEYS.get(str(t), 0)) or 0) for t in lt]
    return [0] * n


def row_bytes(arch: ModelArch, bytes_per_element: float) -> int:
    """Bytes of one cached KV row (one token of the window, or one compressed row)."""
    return round(int(arch.config.get("head_dim") or 512) * bytes_per_element)


def indexer_row_bytes(arch: ModelArch) -> float:
    """Bytes of one CSA indexer key (FP4: half a byte per element)."""
    return int(arch.config.get("index_head_dim") or 128) * 0.5


def layer_caches(arch: ModelArch, bytes_per_element: float) -> list[tuple[int, str, int | None, int]]:
    """(layer, kind, window, bytes per token) of every cache: a "sliding" window cache on every layer, and a
    "full" compressed cache (bytes amortised over the ratio) on each compressed layer."""
    row = row_bytes(arch, bytes_per_element)
    window = int(arch.config.get("sliding_window") or 128)
    out: list[tuple[int, str, int | None, int]] = []
    for i, r in enumerate(compress_ratios(arch)):
        out.append((i, "sliding", window, row))
        if r > 0:
            extra = indexer_row_bytes(arch) if r == 4 else 0.0
            out.append((i, "full", None, max(1, round((row + extra) / r))))
    return out


def attention_params(arch: ModelArch, i: int, tp: int) -> tuple[int, int, int]:
    """(total, per TP rank, norm params) of layer ``i``'s attention block, HF module layout:
    wq_a (hidden -> q_lora), q_norm, wq_b (q_lora -> heads x head_dim), wkv (hidden -> head_dim), kv_norm,
    wo_a (grouped: heads x head_dim -> o_groups x o_lora), wo_b (o_groups x o_lora -> hidden), attn_sink (per head);
    compressed layers add a compressor (wkv + wgate: hidden -> coff x head_dim, coff 2 at ratio 4, else 1; ape
    ratio x coff x head_dim; a norm), CSA layers an indexer (wq_b: q_lora -> index heads x index_head_dim,
    weights_proj: hidden -> index heads, and its own compressor at index_head_dim)."""
    c = arch.config
    h = arch.hidden_size
    heads, hd = arch.num_attention_heads, int(c.get("head_dim") or 512)
    qr, orank = int(c.get("q_lora_rank") or h), int(c.get("o_lora_rank") or 1024)
    groups = int(c.get("o_groups") or 1)
    replicated = h * qr + h * hd                   # wq_a, wkv
    sharded = qr * heads * hd + heads * hd * orank + groups * orank * h + heads   # wq_b, wo_a, wo_b, attn_sink
    norms = qr + hd
    r = compress_ratios(arch)[i]
    if r > 0:
        coff = 2 if r == 4 else 1
        replicated += 2 * h * coff * hd + r * coff * hd
        norms += hd
        if r == 4:
            ih, ihd = int(c.get("index_n_heads") or 64), int(c.get("index_head_dim") or 128)
            replicated += qr * ih * ihd + h * ih + 2 * h * coff * ihd + r * coff * ihd
            norms += ihd
    return replicated + sharded, replicated + sharded // max(1, tp), norms
