"""The validated, version-aware engine spec: what every model and analyzer consumes.

Flow: ``readers`` -> ``RawEngine`` -> ``models.spec_builder.build_spec`` -> ``EngineSpec``.
``EngineSpec.args`` holds only what the deploy file set (canonical dest names, typed values, origins);
``EngineSpec.effective`` holds the values vLLM will actually run with, each with the reason
(explicit, or the release's default and why).
"""

from typing import Any

from pydantic import ConfigDict, Field

from sched_reader.data_model import DataModel, new_dict, new_list
from sched_reader.findings import Finding
from sched_reader.models.architecture import ModelArch
from sched_reader.models.gpu import GPU
from sched_reader.readers.raw import Origin, Unresolved


class FlagValue(DataModel):
    """One explicitly set vLLM argument after normalization against the target release."""

    dest: str             # snake_case vLLM dest, e.g. "max_num_seqs"
    flag: str             # canonical flag, e.g. "--max-num-seqs"
    value: Any            # typed (int/float/bool/str/dict/list)
    origin: Origin
    overridden: list[Origin] = Field(default_factory=new_list)  # earlier settings of the same flag that lost


class Hardware(DataModel):
    """The GPUs one engine runs on. ``count`` is GPUs per engine replica (TP x PP x DP by default)."""

    gpu: GPU
    count: int
    gpu_origin: Origin | None = None
    count_origin: Origin | None = None
    gpu_inferred: bool = False     # True when nothing named the GPU (default H100 SXM5 80GB)
    count_inferred: bool = False
    # The accelerator as the file names it when it is not a catalog GPU (a TPU slice, an Intel Gaudi, a
    # GPU the catalog lacks). ``modelled`` is False then: ``gpu`` is only a placeholder and no memory,
    # KV-cache or speed figure is computed for it.
    accelerator: str | None = None
    modelled: bool = True


class Effective(DataModel):
    """A value vLLM will use, and why (``"explicit"``, or the default rule that produced it)."""

    value: Any
    reason: str
    origin: Origin | None = None


class EffectiveConfig(DataModel):
    """The serving parameters the capacity, cost and simulation models need, with defaults applied.

    Every field is the value vLLM ends up with for ``vllm_version`` on ``gpu``. ``reasons`` maps each
    field name to "explicit (file:line)" or the default rule used.
    """

    model_config = ConfigDict(frozen=True)

    vllm_version: str
    engine: str = "v1"                      # "v0" | "v1"
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    enable_expert_parallel: bool = False
    max_model_len: int                      # tokens
    gpu_memory_utilization: float           # fraction of total device memory, per instance
    kv_cache_memory_bytes: int | None = None  # --kv-cache-memory-bytes overrides profiling
    dtype: str                              # resolved torch dtype: bfloat16 | float16 | float32
    quantization: str | None = None         # runtime or checkpoint method: fp8, awq, gptq_marlin, mxfp4, ...
    kv_cache_dtype: str = "auto"            # auto | fp8 | fp8_e4m3 | fp8_e5m2 | ...
    sparse_mla_backend: str | None = None   # DSA models: the sparse-MLA attention backend vLLM picks, when known
    block_size: int = 16                    # tokens per KV block
    max_num_seqs: int
    max_num_batched_tokens: int             # per-iteration token budget
    enable_chunked_prefill: bool
    enable_prefix_caching: bool
    enforce_eager: bool = False
    async_scheduling: bool = False
    long_prefill_token_threshold: int = 0
    max_num_partial_prefills: int = 1
    num_scheduler_steps: int = 1            # V0 multi-step scheduling (--num-scheduler-steps, 0.6-0.10)
    cpu_offload_gb: float = 0.0
    swap_space_gb: float = 4.0
    num_gpu_blocks_override: int | None = None
    speculative: dict[str, Any] | None = None  # normalized {"method", "num_speculative_tokens", "model"}
    usage_context: str = "OPENAI_API_SERVER"
    # VLLM_USE_FLASHINFER_SAMPLER as the deploy file sets it (None: not set); picks the sampler's
    # top-k/top-p path, whose temporaries bound the profile run's activation peak
    flashinfer_sampler: bool | None = None
    # the VLLM_ROCM_* environment variables the deploy file sets (VLLM_ROCM_USE_AITER, _MOE, _LINEAR...) and
    # VLLM_USE_TRITON_FLASH_ATTN, as
    # written: they pick the kernels vLLM runs on AMD Instinct GPUs (models/cost/rocm_paths.py); {} when none
    rocm_env: dict[str, str] = Field(default_factory=new_dict)
    # ISO date of the ROCm/vllm fork code an AMD dated image runs (rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715 ->
    # "2025-07-01"; compat/rocm_builds.py): upstream changes it has beyond the release it names; "" otherwise
    rocm_build: str = ""
    # vLLM's custom all-reduce: False when --disable-custom-all-reduce is set or the log says it is disabled
    # (no GPU P2P, a process group across nodes); None: decided by the GPU's interconnect
    custom_all_reduce: bool | None = None
    # multimodal profiling: --skip-mm-profiling, and the modalities --limit-mm-per-prompt sets to 0
    skip_mm_profiling: bool = False
    mm_disabled: list[str] = Field(default_factory=new_list)
    reasons: dict[str, str] = Field(default_factory=new_dict)


class EngineSpec(DataModel):
    """One engine, fully resolved: file location, release, hardware, model, explicit args, effective config."""

    name: str
    file: str
    line: int | None = None
    role: str | None = None
    vllm_version: str                     # a known release, e.g. "0.19.0"
    vllm_version_requested: str | None = None  # as written (image tag, --vllm), before resolution
    vllm_version_origin: Origin | None = None
    model_name: str                       # as written, e.g. "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic"
    model_origin: Origin | None = None
    arch: ModelArch | None = None         # None when the model could not be resolved (a finding says why)
    checkpoint_quantization: str | None = None  # weight scheme implied by the model name/config (fp8, awq, w4a16, ...)
    checkpoint_quantization_method: str | None = None  # the vLLM --quantization method it loads with
    hardware: Hardware
    args: dict[str, FlagValue] = Field(default_factory=new_dict)
    effective: EffectiveConfig | None = None
    findings: list[Finding] = Field(default_factory=new_list)
    unresolved: list[Unresolved] = Field(default_factory=new_list)
    notes: list[str] = Field(default_factory=new_list)
    workload: dict[str, Any] | None = None
    shared_gpu_group: str | None = None
    # vLLM UsageContext the defaults come from: OPENAI_API_SERVER (`vllm serve`) or LLM_CLASS (offline)
    usage_context: str = "OPENAI_API_SERVER"

    def explicit(self, dest: str, default: Any = None) -> Any:
        """The value the file set for ``dest`` (snake_case), or ``default``."""
        fv = self.args.get(dest)
        return default if fv is None else fv.value
