"""What a reader extracts from a deploy file, before any vLLM-release knowledge is applied.

Readers do not know vLLM's flag tables: they record each flag exactly as written (``--max_num_seqs``,
``--max-num-batched-token``, ``--no-enable-prefix-caching``) with its origin, in precedence order
(later settings override earlier ones). ``sched_reader.models.spec_builder`` normalizes them against
the target release.
"""

from typing import Any

from pydantic import Field

from sched_reader.data_model import DataModel, new_dict, new_list
from sched_reader.origin import Origin, SourceKind

__all__ = ["Hint", "Origin", "RawEngine", "Setting", "SourceKind", "Unresolved"]


class Setting(DataModel):
    """One flag as written. ``flag`` starts with ``--`` (or ``-`` for a short option such as ``-tp``,
    recorded as written); ``value`` is None for a bare flag, a string on a command line, and keeps its
    YAML type (bool, int, float, dict, list) in a vLLM ``--config`` file."""

    flag: str
    value: Any = None
    origin: Origin


class Unresolved(DataModel):
    """Something the reader could not resolve (e.g. ``$MODEL`` never assigned)."""

    text: str
    reason: str
    origin: Origin


class Hint(DataModel):
    """A value found outside the vLLM flags: GPU type/count, vLLM version, role."""

    value: Any
    origin: Origin


class RawEngine(DataModel):
    """One vLLM engine found in a file (a compose service, a Helm modelSpec, a P/D role, ...)."""

    name: str
    file: str
    line: int | None = None
    model: Setting | None = None          # positional MODEL / --model / model: key
    settings: list[Setting] = Field(default_factory=new_list)
    gpu_type: Hint | None = None          # e.g. "NVIDIA-H100-80GB-HBM3" from nodeSelector
    gpu_count: Hint | None = None         # nvidia.com/gpu limit, compose device count
    vllm_version: Hint | None = None      # from an image tag, or sched-reader's own file
    role: str | None = None               # "prefill" / "decode" for P/D manifests
    shared_gpu_group: str | None = None   # engines with the same group share physical GPUs
    workload: dict[str, Any] | None = None  # sched-reader's own `workload:` section, verbatim
    # vLLM's UsageContext for the defaults it picks: None = `vllm serve` (OPENAI_API_SERVER); "LLM_CLASS" for an
    # offline run (`vllm bench throughput`, the LLM class), whose token budget and sequence defaults differ
    usage_context: str | None = None
    unresolved: list[Unresolved] = Field(default_factory=new_list)
    notes: list[str] = Field(default_factory=new_list)
    # Environment variables set for this engine (shell ``export``, ``VAR=x cmd`` prefixes, compose
    # ``environment``, Kubernetes ``env``), values verbatim as strings. ``VLLM_USE_V1``,
    # ``VLLM_CPU_KVCACHE_SPACE`` and ``CUDA_VISIBLE_DEVICES`` change what vLLM does.
    env: dict[str, Hint] = Field(default_factory=new_dict)
    replicas: Hint | None = None          # independent copies of this engine (Deployment replicas, ...)
    # Accelerator family when the file says so (``google.com/tpu`` -> "tpu", ``habana.ai/gaudi`` ->
    # "gaudi", ``amd.com/gpu`` -> "amd", ``accelerator.type: intel-gaudi``); None = not stated (NVIDIA GPUs
    # need no family: their product name is in ``gpu_type``).
    accelerator: Hint | None = None
    # How the engine was recognised as vLLM when the image is not a vLLM image: "vllm serve command",
    # "vLLM flags", "FROM vllm/vllm-openai build context", ... (shown in notes too).
    detected_by: str | None = None
