"""Capacity: the KV-cache budget, blocks, tokens and concurrency vLLM will report at start-up.

``estimate_capacity`` chains weights -> memory profile (per PP stage) -> KV blocks and returns a
``CapacityReport`` whose ``to_json()`` has exactly the keys ``memory``, ``kv_cache``, ``explain``.
Memory figures are GiB per GPU as vLLM logs them (for PP > 1: the stage that bounds the KV cache).
"""

from typing import Any

from pydantic import Field

from sched_reader.data_model import DataModel, new_list
from sched_reader.models.architecture import ModelArch
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.gpu import GPU
from sched_reader.models.kv_cache import KVCacheResult, kv_capacity
from sched_reader.models.memory_profile import MemoryProfile, memory_profile
from sched_reader.models.weights import GIB, Term, WeightBreakdown, weight_breakdown
from sched_reader.models import drafter


class CapacityReport(DataModel):
    """Everything ``diagnose`` prints about memory and the KV cache for one engine."""

    memory: MemoryProfile
    kv_cache: KVCacheResult
    weights: WeightBreakdown
    stage_kv_bytes: list[int] = Field(default_factory=new_list)
    explain: list[Term] = Field(default_factory=new_list)

    def weights_do_not_load(self) -> bool:
        """True when the weights alone exceed the device: vLLM fails while loading, before profiling."""
        return self.memory.weights_bytes > self.memory.total_bytes

    def start_error(self) -> str | None:
        """vLLM's start-up failure for this configuration (its own message), or None when it starts."""
        m, k = self.memory, self.kv_cache
        if self.weights_do_not_load():
            return (f"Model weights ({round(m.weights_bytes / GIB, 2)} GiB per GPU) do not fit in GPU memory "
                    f"({round(m.total_bytes / GIB, 2)} GiB): loading fails with CUDA out of memory. Use more "
                    "tensor/pipeline parallel ranks, a quantized checkpoint or --cpu-offload-gb.")
        return k.error

    def to_json(self) -> dict[str, Any]:
        m, k = self.memory, self.kv_cache

        def g(b: int) -> float:
            return round(b / GIB, 2)

        error = self.start_error()
        return {
            "memory": {
                "total_gib": g(m.total_bytes),
                "requested_gib": g(m.requested_bytes),
                "weights_gib": g(m.weights_bytes),
                "activation_peak_gib": g(m.activation_peak_bytes),
                "non_torch_gib": g(m.non_torch_bytes),
                "cuda_graph_gib": g(m.cuda_graph_bytes),
                "kv_cache_gib": g(m.kv_cache_bytes),
            },
            "kv_cache": {
                "block_size": k.block_size,
                "num_blocks": k.num_blocks,
                "tokens": k.tokens,
                "bytes_per_token": k.bytes_per_token,
                "max_concurrency": k.max_concurrency,
                "fits": k.fits and error is None,
                "error": error,
            },
            "explain": [t.model_dump() for t in self.explain],
        }


_MEMO: dict[tuple[str, str, str, str | None], CapacityReport] = {}
_MEMO_MAX = 512


def estimate_capacity(arch: ModelArch, gpu: GPU, cfg: EffectiveConfig,
                      checkpoint_quantization: str | None = None) -> CapacityReport:
    """Predict vLLM's start-up memory profile and KV-cache capacity for one engine replica.

    A pure function of its inputs, memoized on their content (``lint`` over many files meets the same
    model, GPU and settings again and again); callers treat the report as read-only.
    """
    key = (arch.model_dump_json(), gpu.model_dump_json(), cfg.model_dump_json(exclude={"reasons"}),
           checkpoint_quantization)
    hit = _MEMO.get(key)
    if hit is None:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        hit = _MEMO[key] = _estimate_capacity(arch, gpu, cfg, checkpoint_quantization)
    return hit


def _estimate_capacity(arch: ModelArch, gpu: GPU, cfg: EffectiveConfig,
                       checkpoint_quantization: str | None = None) -> CapacityReport:
    wb = weight_breakdown(arch, cfg, checkpoint_quantization, gpu=gpu)
    wb = _with_drafter(arch, gpu, cfg, wb)
    pp = max(1, cfg.pipeline_parallel_size)
    profiles = [memory_profile(arch, gpu, cfg, wb, stage=s) for s in range(pp)]
    avail = [p.kv_cache_bytes for p in profiles]
    kv = kv_capacity(arch, cfg, avail)
    bound = min(range(pp), key=lambda s: avail[s])
    mem = profiles[bound]
    explain = list(wb.explain) + list(mem.explain) + list(kv.explain)
    if mem.weights_bytes > mem.requested_bytes:
        explain.append(Term(name="weights_fit", formula="weights <= total x gpu_memory_utilization",
                            inputs={"weights": mem.weights_bytes, "requested": mem.requested_bytes},
                            value=0, unit="bool"))
    return CapacityReport(memory=mem, kv_cache=kv, weights=wb, stage_kv_bytes=avail, explain=explain)


def _with_drafter(arch: ModelArch, gpu: GPU, cfg: EffectiveConfig, wb: WeightBreakdown) -> WeightBreakdown:
    """Add a speculative drafter's weights to the last pipeline stage (models/drafter.py)."""

    spec = cfg.speculative
    extra_layers = drafter.extra_layer_count(arch, spec)
    d_arch = drafter.draft_arch(spec)
    if not extra_layers and d_arch is None:
        return wb
    tp = max(1, cfg.tensor_parallel_size)
    if d_arch is not None:
        sub = cfg.model_copy(update={"speculative": None})
        extra = weight_breakdown(d_arch, sub, None, gpu=gpu).bytes_per_gpu
        formula = f"weights of the draft model {d_arch.id} per GPU"
    else:
        body = wb.bytes_per_gpu - wb.component_bytes("embedding") - wb.component_bytes("lm_head") \
            - wb.component_bytes("vision")
        per_layer = body / max(1, arch.num_layers / max(1, cfg.pipeline_parallel_size))
        dt = 2 if "32" not in str(cfg.dtype) else 4
        extra = int(extra_layers * per_layer + drafter.fusion_params(arch, spec) * dt / tp)
        formula = f"{extra_layers} decoder layer(s) of the target + fusion projection ({drafter.method_of(spec)})"
    stages = list(wb.stage_bytes) or [wb.bytes_per_gpu]
    stages[-1] += extra
    best = max(range(len(stages)), key=lambda i: stages[i])
    term = Term(name="drafter_weights", formula=formula, inputs={"method": drafter.method_of(spec)},
                value=extra / GIB, unit="GiB", guessed=True)
    return wb.model_copy(update={"stage_bytes": stages, "bytes_per_gpu": stages[best], "pp_stage": best,
                                 "explain": list(wb.explain) + [term]})
