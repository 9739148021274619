"""Model architecture: a Hugging Face ``config.json`` plus the quantities sched-reader derives from it.

``ModelArch.config`` holds the HF config keys verbatim (for multimodal models, the text config is
flattened in and ``vision_config`` kept), so ``--model-config PATH`` and the shipped catalog are read
the same way. Derived quantities are properties; units are in the names.
"""

from __future__ import annotations

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
