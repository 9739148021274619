"""Speculative-decoding drafters: the weights and KV layers a drafter adds to each GPU.

vLLM V1 loads the drafter on the same GPUs (last pipeline stage) before profiling, so its weights are
part of "Model loading took", and registers its attention layers in the same KV-cache config, so every
cached token also pays for the drafter's layers (vllm/v1/spec_decode/eagle.py, draft_model.py; MTP
proposers reuse the target's layer type):

* ``ngram`` / ``suffix``: nothing on the GPU.
* ``mtp`` (DeepSeek-V3/R1, Qwen3-Next, Qwen3.5, GLM-4.5, MiMo ...): ``num_nextn_predict_layers`` (or
  ``mtp_num_hidden_layers``) more decoder layers of the target's own type, plus the 2h x h ``eh_proj``
  fusion and its norms (the embedding and head are shared with the target in vLLM: guessed).
* ``eagle`` / ``eagle3``: one decoder layer of the target's shape, plus the fc fusion (2h x h; EAGLE-3
  fuses 3 hidden states: 3h x h).
* ``draft_model`` (a small model named in ``model``): that model's weights and all its attention layers.

Units: bytes (weights per GPU), KV bytes per token per layer on one TP rank.
"""

from __future__ import annotations

from typing import Any

from sched_reader.models.architecture import ModelArch
from sched_reader.errors import SchedReaderError
from sched_reader.models.model_catalog import resolve_model

_MTP = ("mtp", "deepseek_mtp", "qwen3_next_mtp", "qwen3_5_mtp", "glm4_moe_mtp", "mimo_mtp", "ernie_mtp",
        "longcat_flash_mtp", "pangu_ultra_moe_mtp")
_EAGLE = ("eagle", "eagle3")


def method_of(spec: dict[str, Any] | None) -> str | None:
    if not spec:
        return None
    m = str(spec.get("method") or "").lower()
    if m:
        return m
    return None


def mtp_layers(arch: ModelArch) -> int:
    c = arch.config
    return int(c.get("num_nextn_predict_layers") or c.get("mtp_num_hidden_layers") or 1)


def draft_arch(spec: dict[str, Any] | None) -> ModelArch | None:
    """The catalog architecture of a ``draft_model`` drafter, when its name resolves."""
    if method_of(spec) not in ("draft_model",) and not (spec and spec.get("model") and method_of(spec) is None):
        return None
    name = str((spec or {}).get("model") or "")
    if not name:
        return None

    try:
        return resolve_model(name).arch
    except SchedReaderError:
        return None


def extra_layer_count(arch: ModelArch, spec: dict[str, Any] | None) -> int:
    """Decoder layers of the target's own type the drafter adds (MTP, EAGLE); 0 otherwise."""
    m = method_of(spec)
    if m in _MTP:
        return mtp_layers(arch)
    if m in _EAGLE:
        return 1
    return 0


def fusion_params(arch: ModelArch, spec: dict[str, Any] | None) -> int:
    """The drafter's fusion projection (and its norms), elements: MTP eh_proj 2h x h + 2 norms; EAGLE fc."""
    h = arch.hidden_size
    m = method_of(spec)
    if m in _MTP:
        return mtp_layers(arch) * (2 * h * h + 3 * h)
    if m == "eagle3":
        return 3 * h * h
    if m == "eagle":
        return 2 * h * h
    return 0
