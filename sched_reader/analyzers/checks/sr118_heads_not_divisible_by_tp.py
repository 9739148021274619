"""The model's attention heads or vocabulary do not split evenly over --tensor-parallel-size: vLLM does not start

vLLM gives every GPU the same number of query heads and vocabulary rows, and KV heads split evenly or are
replicated a whole number of times. It stops otherwise: `ModelConfig.verify_with_parallel_config` raises
"Total number of attention heads (H) must be divisible by tensor parallel size (TP)."; the embedding
pads the vocabulary to a multiple of 64 and `divide`s it by TP ("151936 is not divisible by 5": Qwen3-14B
at TP 5, a real vLLM 0.19.0 log); `QKVParallelLinear` divides KV heads by TP (or TP by KV heads).
Latent-attention models (DeepSeek-V3, `kv_lora_rank`) split query heads only. Source: vLLM 0.11.0
vllm/config/model.py, vllm/model_executor/layers/vocab_parallel_embedding.py and linear.py
(https://github.com/vllm-project/vllm/tree/v0.11.0).
"""

from __future__ import annotations

from sched_reader.findings import Finding
from sched_reader.models.engine_spec import EngineSpec

ID = "SR118"
NAME = "heads-not-divisible-by-tp"
SEVERITY = "error"
FIX = "choose a --tensor-parallel-size that divides the model's attention heads, KV heads and padded vocabulary"
VOCAB_PADDING = 64  # vLLM DEFAULT_VOCAB_PADDING_SIZE
TAGS = ("parallelism", "startup")


def valid_tp_sizes(heads: int, kv_heads: int | None, vocab: int | None, upto: int = 8) -> list[int]:
    """Tensor-parallel sizes up to ``upto`` that vLLM accepts for ``heads`` query / ``kv_heads`` KV heads
    (``kv_heads`` None: latent attention, query heads only) and a ``vocab``-token embedding (None: unknown)."""
    return [tp for tp in range(1, upto + 1) if not _problem(heads, kv_heads, vocab, tp)]


def _problem(heads: int, kv_heads: int | None, vocab: int | None, tp: int) -> str | None:
    if heads % tp:
        return f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})."
    padded = -(-vocab // VOCAB_PADDING) * VOCAB_PADDING if vocab else 0
    if padded % tp:
        return f"{padded} is not divisible by {tp} (the vocabulary of {vocab} tokens padded to a multiple of 64)"
    if kv_heads:
        num, den = (tp, kv_heads) if tp >= kv_heads else (kv_heads, tp)
        if num % den:
            return f"{num} is not divisible by {den} (KV heads {kv_heads}, tensor parallel size {tp})"
    return None


def check(spec: EngineSpec) -> list[Finding]:
    arch, eff = spec.arch, spec.effective
    if arch is None or eff is None or eff.tensor_parallel_size <= 1:
        return []
    try:
        heads = arch.num_attention_heads
        kv_heads = None if arch.config.get("kv_lora_rank") else arch.num_kv_heads
        vocab = int(arch.config.get("vocab_size") or 0) or None
    except (KeyError, TypeError, ValueError):
        return []  # a config without head counts (not an attention model): nothing vLLM checks here
    tp = int(eff.tensor_parallel_size)
    problem = _problem(heads, kv_heads, vocab, tp)
    if problem is None:
        return []
    fv = spec.args.get("tensor_parallel_size")
    file, line, key = (fv.origin.file, fv.origin.line, fv.origin.key) if fv is not None else (spec.file, spec.line,
                                                                                            "--tensor-parallel-size")
    good = [t for t in valid_tp_sizes(heads, kv_heads, vocab, upto=max(8, tp)) if t > 1]
    fix = FIX + (f": {', '.join(str(t) for t in good)} work for {spec.model_name}" if good else "")
    return [Finding(rule=ID, severity=SEVERITY, file=file, line=line, key=key, fix=fix,
                    message=f"vLLM will not start: {problem} ({spec.model_name}: {heads} attention heads"
                            + (f", {kv_heads} KV heads)" if kv_heads else ", latent KV)"))]
