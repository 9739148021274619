"""Model architecture: a Hugging Face ``config.json`` plus the quantities sched-reader derives from it.

``ModelArch.config`` holds the HF config keys verbatim (for multimodal models, the text config is
flattened in and ``vision_config`` kept), so ``--model-config PATH`` and the shipped catalog are read
the same way. Derived quantities are properties; units are in the names.
"""

from typing import Any

from pydantic import ConfigDict

from sched_reader.data_model import DataModel

# HF model_type values whose MLP is a plain two-matrix MLP (up, activation, down; no gate): GPT-2/NeoX/J, OPT,
# BLOOM, Falcon (dense_h_to_4h -> GELU -> dense_4h_to_h), Phi-1/2, StarCoder2, MPT. Everything else is gated
# (SwiGLU / GeGLU: gate, up, down).
NON_GATED_MODEL_TYPES = frozenset({
    "gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "RefinedWeb", "RefinedWebModel", "phi", "starcoder2",
    "gpt_bigcode", "mpt",
})


class ModelArch(DataModel):
    """One model architecture. ``id`` is the canonical HF repo id."""

    model_config = ConfigDict(frozen=True)

    id: str
    aliases: list[str] = []
    model_type: str
    architectures: list[str] = []
    config: dict[str, Any]                    # verbatim HF config.json keys (text config)
    vision_config: dict[str, Any] | None = None
    official_params: int | None = None        # HF safetensors.total, when known
    source: str = ""                          # where the config was read
    # optional catalog detail (added by the model catalog)
    official_params_counts: str | None = None  # what official_params includes, e.g. "main + vision_tower + mm_projector"
    official_active_params: int | None = None  # vendor-stated activated params per token (MoE), vendor rounding
    multimodal: dict[str, Any] | None = None   # top-level multimodal keys (e.g. mm_tokens_per_image), verbatim

    # --- convenience accessors (no arithmetic beyond reading keys) ---
    def get(self, key: str, default: Any = None) -> Any:
        v = self.config.get(key, default)
        return default if v is None else v

    @property
    def hidden_size(self) -> int:
        return int(self.config["hidden_size"])

    @property
    def num_layers(self) -> int:
        return int(self.config["num_hidden_layers"])

    @property
    def num_attention_heads(self) -> int:
        return int(self.config["num_attention_heads"])

    @property
    def num_kv_heads(self) -> int:
        return int(self.get("num_key_value_heads", self.num_attention_heads))

    @property
    def head_dim(self) -> int:
        hd = self.config.get("head_dim")
        return int(hd) if hd else self.hidden_size // self.num_attention_heads

    @property
    def vocab_size(self) -> int:
        return int(self.config["vocab_size"])

    @property
    def torch_dtype(self) -> str:
        return str(self.get("torch_dtype", self.get("dtype", "bfloat16")))

    @property
    def gated_mlp(self) -> bool:
        """Whether the MLP has a gate projection (3 matrices) rather than up/down only (2)."""
        return self.model_type not in NON_GATED_MODEL_TYPES

    @property
    def is_mla(self) -> bool:
        return bool(self.config.get("kv_lora_rank"))

    @property
    def quantization_config(self) -> dict[str, Any] | None:
        return self.config.get("quantization_config")

    @property
    def is_sparse_mla(self) -> bool:
        """DeepSeek Sparse Attention (DeepSeek-V3.2): MLA plus a lightning indexer (``index_topk`` in config.json;
        vLLM's ``is_v32 = hasattr(hf_config, "index_topk")``)."""
        return self.is_mla and self.config.get("index_topk") is not None

    def has_indexer(self, layer: int) -> bool:
        """Whether decoder layer ``layer`` builds its own DSA indexer (weights and key cache) in vLLM. IndexCache
        checkpoints (GLM-5.2: ``index_topk_freq`` 4, ``index_skip_topk_offset`` 3) reuse the top-k of an earlier
        layer on the others: vLLM deepseek_v2.py skips layer i when ``max(i - offset + 1, 0) % freq != 0``
        (offset default 2), or where ``index_topk_pattern[i] == "S"`` (0.31.0 source)."""
        if not self.is_sparse_mla:
            return False
        c = self.config
        pattern = c.get("index_topk_pattern")
        if pattern:
            return not (0 <= layer < len(pattern) and pattern[layer] == "S")
        freq = int(c.get("index_topk_freq") or 1)
        offset = int(c.get("index_skip_topk_offset", 2) if c.get("index_skip_topk_offset") is not None else 2)
        return max(layer - offset + 1, 0) % freq == 0

    @property
    def indexer_bytes_per_token(self) -> int:
        """Bytes one token's indexer key takes per layer (0 without DSA): vLLM ``DeepseekV32IndexerCache`` is a
        uint8 ``MLAAttentionSpec`` of ``index_head_dim + index_head_dim // 128 x 4`` bytes (fp8 key + one fp32
        scale per 128-element block; vllm/model_executor/models/deepseek_v2.py, 0.11.0 and 0.31.0)."""
        if not self.is_sparse_mla:
            return 0
        d = int(self.config.get("index_head_dim") or 128)
        return d + d // 128 * 4


# vLLM releases are tuples (sched_reader.versions.parse_version)
def sparse_mla_cache_dtype(kv_cache_dtype: str, version: tuple[int, int, int],
                           backend: str | None = None) -> tuple[str, str]:
    """(the cache dtype vLLM runs a DeepSeek-V3.2 (DSA) model with, why) for the requested ``--kv-cache-dtype``.

    vllm/model_executor/models/config.py ``DeepseekV32ForCausalLM.verify_and_update_config``: 0.11.0 maps "auto"
    and fp8* to the custom ``fp8_ds_mla`` layout (656 bytes per token per layer); 0.11.1 .. 0.13.0 map only fp8*
    to it ("auto" stays the model dtype; 0.14.0 read likewise); "bfloat16" becomes "auto" in every release read
    (0.11.0 .. 0.31.0). In 0.18.0 and 0.19.0 (read) the attention layer does the fp8 -> fp8_ds_mla step, for the
    FLASHMLA_SPARSE backend only: FLASHINFER_MLA_SPARSE (Blackwell, 0.18.0+) keeps a plain fp8 latent (576 bytes):
    pass ``backend`` (compat/defaults.py ``sparse_mla_backend``) to have it kept.
    """
    kv = str(kv_cache_dtype or "auto").strip().lower()
    if kv == "bfloat16":
        return "auto", "vLLM DeepseekV32 config hook: bfloat16 -> auto (the model dtype)"
    if backend == "FLASHINFER_MLA_SPARSE" and kv.startswith("fp8") and kv != "fp8_ds_mla":
        return kv, (f"vLLM {'.'.join(map(str, version))} FLASHINFER_MLA_SPARSE keeps a standard fp8 latent "
                    "(576 bytes per token per layer)")
    if kv.startswith("fp8") or (kv == "auto" and version == (0, 11, 0)):
        src = "default 'auto'" if kv == "auto" else f"--kv-cache-dtype {kv}"
        return "fp8_ds_mla", (f"vLLM {'.'.join(map(str, version))} DeepseekV32 config hook: {src} -> fp8_ds_mla "
                              "(656 bytes per token per layer)")
    return kv, ""
