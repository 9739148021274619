"""Quantization facts: weight storage formats, KV-cache element sizes, and the tensor-core pipe used.

Data lives in ``models/data/quantization.yaml`` (read on first use). Units: ``bytes_per_weight`` is bytes
per stored weight element including scale / zero-point overhead; KV sizes are bytes per cached element.

- ``weight_format_for(method, checkpoint_quant_config, dtype)`` -> the WeightFormat the weights use.
- ``kv_bytes_per_element(kv_cache_dtype, model_dtype)`` -> bytes per KV element.
- ``compute_dtype(fmt, gpu)`` -> which ``GPU.tflops`` key the GEMMs run at (``bf16``, ``fp16``, ``fp8``,
  ``int8``, ``fp4``, ``fp32``): FP8 tensor cores exist on Hopper/Ada/Blackwell/CDNA3 but not Ampere/Volta,
  weight-only formats (w4a16, w8a16) compute in 16-bit.
"""

from functools import lru_cache
from typing import Any

from pydantic import ConfigDict

from sched_reader.data_model import DataModel
from sched_reader.errors import InputError
from sched_reader.models.gpu import GPU
from sched_reader.models.data_files import load


class WeightFormat(DataModel):
    """How one weight element is stored and multiplied. ``bytes_per_weight`` includes scale overhead."""

    model_config = ConfigDict(frozen=True)

    id: str
    weight_bits: int
    act_bits: int
    effective_bits_per_weight: float
    bytes_per_weight: float
    compute: str                        # "w16" | "fp8" | "int8" | "fp4" | "fp32"
    fallback_compute: str | None = None  # pipe used when the GPU lacks `compute`
    native_compute: str | None = None    # pipe used on `native_compute_arch` GPUs (e.g. MXFP4 on Blackwell)
    native_compute_arch: list[str] = []
    applies_to: str = "all_linear"       # "all_linear" | "moe_experts"
    high_precision: list[str] = []       # layers kept in 16-bit
    group_size: int | None = None
    derivation: str | None = None
    source: str = ""
    note: str | None = None              # why this format was chosen when it was an assumption

    @property
    def weight_only(self) -> bool:
        """True when activations stay 16-bit (w4a16, w8a16): the GEMM runs on the 16-bit pipe."""
        return self.act_bits >= 16 and self.weight_bits < 16


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    raw = load("quantization")
    formats = {row["id"]: WeightFormat(**row) for row in raw["weight_formats"]}
    for method, fid in raw["methods"].items():
        if fid not in formats:
            raise ValueError(f"quantization.yaml: method {method!r} maps to unknown format {fid!r}")
    return {"formats": formats, "methods": dict(raw["methods"]), "kv": dict(raw["kv_cache_dtypes"])}


def list_weight_formats() -> list[WeightFormat]:
    """All weight formats in the catalog."""
    return list(_data()["formats"].values())


def get_weight_format(format_id: str) -> WeightFormat:
    """The weight format with id ``format_id``; InputError if unknown."""
    fmt = _data()["formats"].get(format_id)
    if fmt is None:
        raise InputError(f"unknown weight format {format_id!r}", key="quantization",
                         hint="known: " + ", ".join(_data()["formats"]))
    return fmt


def known_methods() -> list[str]:
    """vLLM quantization methods and scheme labels this catalog maps to a weight format."""
    return sorted(_data()["methods"])


_DTYPE_FORMAT = {
    "bfloat16": "bf16", "bf16": "bf16",
    "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "float32": "fp32", "fp32": "fp32", "float": "fp32",
    "auto": "bf16",
}


def _dtype_format_id(dtype: str | None) -> str:
    fid = _DTYPE_FORMAT.get(str(dtype or "auto").lower())
    if fid is None:
        raise InputError(f"unknown dtype {dtype!r}", key="--dtype", hint="bfloat16, float16, float32 or auto")
    return fid


# compressed-tensors scheme label -> format (llm-compressor presets: FP8_DYNAMIC is per-channel, W4A16 symmetric g128)
_CT_SCHEME_FORMAT = {
    "fp8": "fp8_e4m3_per_channel",
    "nvfp4": "nvfp4",
    "w4a16": "w4a16_g128_symmetric",
    "w8a16": "int8_weight_only",
    "w8a8": "int8_w8a8",
}


def weight_format_for(
    quantization_method: str | None,
    checkpoint_quant_config: dict[str, Any] | None,
    dtype: str,
    *,
    scheme: str | None = None,
) -> WeightFormat:
    """The format the linear-layer weights are stored in.

    Precedence: the checkpoint's ``quantization_config`` (refines group size, block scales, bits),
    then ``quantization_method`` (a vLLM ``--quantization`` value or a scheme label such as ``w4a16``),
    then ``scheme`` (``ModelResolution.checkpoint_quantization``), else the 16-bit ``dtype``.
    ``compressed-tensors`` with neither a config nor a scheme is assumed FP8 per-channel (``note`` says so).
    Unknown methods raise InputError (exit 2).
    """
    data = _data()
    formats: dict[str, WeightFormat] = data["formats"]
    methods: dict[str, str] = data["methods"]

    if isinstance(checkpoint_quant_config, dict) and checkpoint_quant_config:
        fmt = _format_from_config(checkpoint_quant_config, formats)
        if fmt is not None:
            return fmt

    for label in (quantization_method, scheme):
        if not label:
            continue
        key = str(label).strip().lower()
        if key in ("none", "null", ""):
            continue
        if key == "compressed-tensors" and scheme and scheme.lower() in _CT_SCHEME_FORMAT:
            return formats[_CT_SCHEME_FORMAT[scheme.lower()]]
        fid = methods.get(key)
        if fid is None:
            raise InputError(f"unknown quantization method {label!r}", key="--quantization",
                             hint="known: " + ", ".join(sorted(methods)))
        fmt = formats[fid]
        if key == "compressed-tensors":
            fmt = fmt.model_copy(update={"note": "compressed-tensors without a quantization_config: assumed FP8 per-channel"})
        return fmt
    return formats[_dtype_format_id(dtype)]


def _format_from_config(qc: dict[str, Any], formats: dict[str, WeightFormat]) -> WeightFormat | None:
    method = str(qc.get("quant_method") or qc.get("quant_algo") or "").lower()
    if method in ("fp8", "deepseek_v4_fp8"):
        if qc.get("weight_block_size"):
            return formats["fp8_e4m3_block128"]
        return formats["fp8_e4m3_per_tensor"]
    if method == "fbgemm_fp8":
        return formats["fp8_e4m3_per_channel"]
    if method in ("gptq", "auto-round", "awq"):
        bits = int(qc.get("bits", qc.get("w_bit", 4)) or 4)
        group = int(qc.get("group_size", qc.get("q_group_size", 128)) or 128)
        if bits == 8:
            return formats["gptq_int8_g128"]
        if method == "awq":
            return formats["awq_int4_g128"]
        return formats.get({128: "gptq_int4_g128", 64: "gptq_int4_g64", 32: "gptq_int4_g32", -1: "gptq_int4_channel"}
                           .get(group, "gptq_int4_g128"))
    if method == "mxfp4":
        return formats["mxfp4"]
    if method in ("modelopt", "nvfp4", "modelopt_fp4"):
        algo = str(qc.get("quant_algo", "")).upper()
        if algo == "MIXED_PRECISION":  # per-layer algorithms: the format of the bulk (MLP) weights names it
            layers = qc.get("quantized_layers") if isinstance(qc.get("quantized_layers"), dict) else {}
            algos = [str(v.get("quant_algo", "")).upper() for k, v in layers.items()
                     if isinstance(v, dict) and ".mlp." in str(k)]
            algo = max(set(algos), key=algos.count) if algos else algo
        return formats["nvfp4"] if ("FP4" in algo or method != "modelopt") else formats["fp8_e4m3_per_tensor"]
    if method == "bitsandbytes":
        return formats["nf4_double_quant"] if qc.get("load_in_4bit", True) else formats["int8_weight_only"]
    if method in ("compressed-tensors", "compressed_tensors"):
        return _compressed_tensors_format(qc, formats)
    return None


def _compressed_tensors_format(qc: dict[str, Any], formats: dict[str, WeightFormat]) -> WeightFormat:
    groups = qc.get("config_groups") or {}
    for group in groups.values() if isinstance(groups, dict) else []:
        w = (group or {}).get("weights") or {}
        acts = (group or {}).get("input_activations")
        bits = int(w.get("num_bits", 8) or 8)
        wtype = str(w.get("type", "int")).lower()
        strategy = str(w.get("strategy", "")).lower()
        if wtype == "float" and bits == 4:
            if "mxfp4" in str(qc.get("format") or "") or w.get("group_size") == 32:   # Kimi-K3 mxfp4-pack-quantized
                return formats["mxfp4"]
            return formats["nvfp4"]
        if wtype == "float" and bits == 8:
            if strategy == "block":
                return formats["fp8_e4m3_block128"]
            return formats["fp8_e4m3_per_channel"] if strategy == "channel" else formats["fp8_e4m3_per_tensor"]
        if bits == 4:
            return formats["w4a16_g128_symmetric"] if w.get("symmetric", True) else formats["awq_int4_g128"]
        if bits == 8:
            return formats["int8_w8a8"] if acts else formats["int8_weight_only"]
    return formats["fp8_e4m3_per_channel"].model_copy(
        update={"note": "compressed-tensors config without weight groups: assumed FP8 per-channel"})


def scheme_from_quant_config(qc: dict[str, Any] | None) -> tuple[str | None, str | None]:
    """(scheme label, vLLM method) for a checkpoint ``quantization_config``; (None, None) if absent.

    Labels: fp8, nvfp4, mxfp4, w4a16, w8a16, w8a8, gptq, gptq_int8, awq, bnb_4bit, mxfp8.
    """
    if not isinstance(qc, dict) or not qc:
        return None, None
    method = str(qc.get("quant_method") or qc.get("quant_algo") or "").lower()
    if not method:
        return None, None
    fmt = _format_from_config(qc, _data()["formats"])
    label = {
        "fp8_e4m3_per_tensor": "fp8", "fp8_e4m3_per_channel": "fp8", "fp8_e4m3_block128": "fp8",
        "nvfp4": "nvfp4", "mxfp4": "mxfp4", "mxfp8": "mxfp8", "w4a16_g128_symmetric": "w4a16",
        "int8_w8a8": "w8a8", "int8_weight_only": "w8a16", "gptq_int8_g128": "gptq_int8",
        "awq_int4_g128": "awq", "nf4_double_quant": "bnb_4bit",
    }.get(fmt.id if fmt else "", None)
    if fmt is not None and fmt.id.startswith("gptq_int4"):
        label = "gptq"
    if method == "nvfp4":
        method = "modelopt_fp4"
    return label or method, method


def kv_bytes_per_element(kv_cache_dtype: str | None, model_dtype: str) -> float:
    """Bytes per cached K or V element for vLLM ``--kv-cache-dtype`` (``auto`` = the model dtype).

    Per-tensor/per-head scales are not counted (scalars per layer or per token-head). ``fp8_ds_mla``
    returns 656/576: DeepSeek's FP8 MLA layout stores 656 bytes per token per layer for 576 latent
    elements. Unknown values raise InputError (exit 2).
    """
    table: dict[str, Any] = _data()["kv"]
    key = str(kv_cache_dtype or "auto").strip().lower()
    if key not in table:
        raise InputError(f"unknown or unmodelled --kv-cache-dtype {kv_cache_dtype!r}", key="--kv-cache-dtype",
                         hint="known: " + ", ".join(table))
    value = table[key]
    if value == "model":
        fid = _dtype_format_id(model_dtype)
        return {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}[fid]
    return float(value)


def _as_format(fmt: WeightFormat | str) -> WeightFormat:
    """A WeightFormat from itself, a format id, a vLLM method or a scheme label (InputError if unknown)."""
    if isinstance(fmt, WeightFormat):
        return fmt
    key = str(fmt).strip().lower()
    data = _data()
    if key in data["formats"]:
        return data["formats"][key]
    if key in data["methods"]:
        return data["formats"][data["methods"][key]]
    if key in _DTYPE_FORMAT:
        return data["formats"][_DTYPE_FORMAT[key]]
    raise InputError(f"unknown weight format {fmt!r}", key="quantization",
                     hint="a format id, a vLLM quantization method or a scheme label")


def compute_dtype(fmt: WeightFormat | str, gpu: GPU, act_dtype: str = "bfloat16") -> str:
    """The ``GPU.tflops`` key the format's GEMMs run at on ``gpu``.

    ``fmt`` is a WeightFormat, a format id (``gptq_int4_g128``), a vLLM method (``awq_marlin``) or a
    scheme label (``fp8``, ``w4a16``, ``int8``, ``nvfp4``, ``mxfp4``).

    16-bit pipes resolve to ``bf16``, or ``fp16`` when the activations are fp16 or the GPU has no BF16
    tensor cores (Volta). FP8 / INT8 / FP4 formats use their own pipe only where the GPU has it
    (``gpu.tflops[...]`` not None); otherwise their ``fallback_compute`` (weight-only, 16-bit).
    """
    fmt = _as_format(fmt)
    sixteen = "fp16" if (_dtype_format_id(act_dtype) == "fp16" or not gpu.tflops.get("bf16")) else "bf16"
    pipe = fmt.compute
    if fmt.native_compute and gpu.arch in fmt.native_compute_arch:
        pipe = fmt.native_compute
    if pipe in ("fp8", "int8", "fp4") and not gpu.tflops.get(pipe):
        pipe = fmt.fallback_compute or "w16"
    if pipe == "w16":
        return sixteen
    return pipe
