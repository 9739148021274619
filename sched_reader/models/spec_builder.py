"""Raw engines -> validated, version-aware ``EngineSpec`` objects.

This is the one place where a deploy file meets vLLM's release knowledge:

1. the target release is resolved (``--vllm`` option > image tag > sched-reader file > newest known);
2. every flag as written is normalized against that release's argument table (underscores, argparse
   prefixes, ``--no-`` negations, aliases) and its value coerced to the flag's type; later settings
   override earlier ones, and the losers are kept as ``overridden`` origins;
3. hardware (``--gpu`` > manifest label > default H100 SXM5 80GB) and the model architecture are resolved;
4. the effective configuration vLLM will run with is computed (explicit values, else the release's
   defaults for that GPU), each value with the reason it has.

Unknown flags become findings; values that vLLM would reject while parsing (non-numeric, bad choice,
NaN, negative) raise ``InputError`` naming file, line and flag.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable
import json

from sched_reader.errors import InputError, SchedReaderError, combine
from sched_reader.findings import Finding
from sched_reader.limits import MAX_GPUS, MAX_NESTING, bounded_int, json_depth
from sched_reader.models.architecture import sparse_mla_cache_dtype
from sched_reader.models.engine_spec import EffectiveConfig, EngineSpec, FlagValue, Hardware
from sched_reader.readers.raw import Origin, RawEngine, Unresolved
from sched_reader.compat.argtable import ArgTable
from sched_reader.compat.defaults import default_block_size, release_facts, scheduler_defaults, sparse_mla_backend
from sched_reader.compat.mla_unchunked import UNCHUNKED_MNBT_FLOOR, mla_forces_unchunked, mla_v0_default_unchunked
from sched_reader.compat import rocm_builds
from sched_reader.compat.platform_engine import v0_by_platform
from sched_reader.compat.releases import newest, resolve_version, version_key
from sched_reader.models.gpu_catalog import default_gpu, resolve_gpu
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.workload import usage_context_for
from sched_reader.readers import read_command_line, read_path
from sched_reader.compat.matrix import entry
from sched_reader.compat.releases import known_releases
from sched_reader.readers.images import accelerator_family, version_from_option
from sched_reader.versions import parse_version

# Flags that describe the engine's identity rather than its tuning; kept out of "args" duplication.
_MODEL_DESTS = {"model", "model_tag"}

# The GPU assumed when a manifest requests AMD GPUs (amd.com/gpu) without naming one: the most deployed
# Instinct part for vLLM serving.
DEFAULT_AMD_GPU = "MI300X"

# Value ranges vLLM enforces when it builds its configs (CacheConfig / SchedulerConfig / ParallelConfig
# checks, e.g. "GPU memory utilization must be less than 1.0"): a value outside stops vLLM at start-up.
# dest -> (minimum, minimum allowed?, maximum or None)
_RANGES: dict[str, tuple[float, bool, float | None]] = {
    "gpu_memory_utilization": (0.0, False, 1.0),
    "max_num_seqs": (1, True, None),
    "max_num_batched_tokens": (1, True, None),
    "max_model_len": (1, True, None),
    "tensor_parallel_size": (1, True, None),
    "pipeline_parallel_size": (1, True, None),
    "data_parallel_size": (1, True, None),
    "block_size": (1, True, None),
    "num_gpu_blocks_override": (1, True, None),
    "kv_cache_memory_bytes": (1, True, None),
    "max_num_partial_prefills": (1, True, None),
    "long_prefill_token_threshold": (0, True, None),
    "swap_space": (0, True, None),
    "cpu_offload_gb": (0, True, None),
}

# Environment variables outside the VLLM_ROCM_* prefix that pick a kernel on AMD GPUs, kept in EffectiveConfig.rocm_env:
# VLLM_USE_TRITON_FLASH_ATTN selects V0's prefill attention (Triton FlashAttention, default, or CK flash-attn; see
# models/cost/rocm_paths.prefill_attention_kernel); VLLM_V1_USE_PREFILL_DECODE_ATTENTION V1's Triton kernel pair;
# VLLM_ATTENTION_BACKEND an explicit backend (honoured on ROCm from 0.12.0)
ROCM_ATTENTION_ENV = ("VLLM_USE_TRITON_FLASH_ATTN", "VLLM_V1_USE_PREFILL_DECODE_ATTENTION", "VLLM_ATTENTION_BACKEND")


def _check_range(dest: str, value: Any) -> str | None:
    """Why ``value`` is outside what vLLM accepts for ``dest``, or None."""
    bounds = _RANGES.get(dest)
    if bounds is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    lo, lo_ok, hi = bounds
    if value < lo or (value == lo and not lo_ok) or (hi is not None and value > hi):
        span = f"{'[' if lo_ok else '('}{lo:g}, {hi:g}]" if hi is not None else f">= {lo:g}"
        return f"must be {'in ' + span if hi is not None else span}, got {value:g}; vLLM refuses to start"
    return None


def _field(record: Any, name: str, default: Any = None) -> Any:
    """Read a field of an argument record, whether it is a dict or an object."""
    if isinstance(record, dict):
        return record.get(name, default)
    return getattr(record, name, default)


# ----------------------------------------------------------------------------------------------
# Version
# ----------------------------------------------------------------------------------------------


def default_release() -> str:
    """The release a file that names none is checked against.

    Policy: the newest release whose data is exact -- its flag table comes from the release wheel and its
    feature matrix from the docs at the release commit. Newer releases whose feature matrix is an upstream
    snapshot (``approximate`` in ``compat/data/matrix/index.json``) are not assumed, because errors reported
    against approximate data would be guesses. ``--vllm X.Y.Z`` or a pinned image tag overrides it.
    """

    exact = [r for r in known_releases() if (entry(r) or {}).get("matrix") and not (entry(r) or {}).get("approximate")]
    return exact[-1] if exact else known_releases()[-1]


def _resolve_release(raw: RawEngine, vllm: str | None) -> tuple[str, str | None, Origin | None, list[Finding]]:
    """Pick the release for one engine; returns (release, requested, origin, findings).

    Policy for tags that are not releases (SR110 note, never an input error): a moving tag
    (``latest-nightly``, ``instinct_main``, ``nightly``) -> the newest known release; a dated or custom tag
    (``2025-05-27-v1``, a private image) -> :func:`default_release`. A file that names no release is checked
    against :func:`default_release`. Only a bad ``--vllm`` option is an input error.
    """
    findings: list[Finding] = []
    image_option = False
    if vllm:
        # an image reference or AMD dated tag given to --vllm reads as the same image in a file would
        requested = version_from_option(vllm)
        image_option = requested != vllm
        origin = Origin(source="cli-option", key="--vllm")
    elif raw.vllm_version is not None:
        requested, origin = str(raw.vllm_version.value), raw.vllm_version.origin
        if isinstance(raw.vllm_version.value, float):
            raise InputError(
                f"vLLM version {raw.vllm_version.value!r} was read as a YAML number (0.10 becomes 0.1)",
                file=origin.file, line=origin.line, key=origin.key or "vllm_version",
                hint="quote it, e.g. vllm_version: \"0.10.1\"",
            )
    else:
        release = default_release()
        findings.append(
            Finding(
                rule="SR110",
                severity="info",
                message=(f"no vLLM release stated; checking against {release}, the newest release whose flag and "
                         "feature data are exact (sched-reader's default)"),
                file=raw.file,
                line=raw.line,
                fix="pin the image tag (vllm/vllm-openai:vX.Y.Z) or pass --vllm X.Y.Z",
            )
        )
        return release, None, None, findings
    try:
        res = resolve_version(requested)
    except SchedReaderError:
        if origin.source == "cli-option" and not image_option:
            raise
        moving = any(w in requested.lower() for w in ("nightly", "latest", "main", "master"))
        dated = rocm_builds.dated_release(requested) if moving else None
        release = dated or (newest() if moving else default_release())
        why = (f"a build of main dated {rocm_builds.DATED_TAG.search(requested).group(0).strip('_-')}: checking "
               f"against {release}, the newest release built by then" if dated else
               f"a moving build at least as new as the newest known release; checking against {release}" if moving
               else f"a dated or custom build; checking against {release}, sched-reader's default release")
        findings.append(
            Finding(
                rule="SR110",
                severity="info",
                message=f"{origin.key or requested!r} does not name a vLLM release ({why})",
                file=origin.file,
                line=origin.line,
                key=origin.key,
                fix="pass --vllm X.Y.Z with the release the image is built from",
            )
        )
        return release, requested, origin, findings
    if res.warning:
        findings.append(
            Finding(
                rule="SR110",
                severity="warning" if not res.exact else "info",
                message=res.warning,
                file=origin.file,
                line=origin.line,
                key=origin.key,
                fix="pin an exact released version",
            )
        )
    return res.release, requested, origin, findings


# ----------------------------------------------------------------------------------------------
# Flags
# ----------------------------------------------------------------------------------------------


def _config_file_value_rule(release: str) -> str:
    """How a ``--config`` YAML boolean ``false`` is turned into argv in ``release``.

    Source: vLLM FlexibleArgumentParser config loading (facts.yaml ``config_file``):
    0.6.0-0.6.3 stringify every value; 0.6.4-0.27.1 drop ``false``; 0.28.0+ emit ``--no-<key>`` when
    that option exists.
    """
    k = version_key(release)
    if k < version_key("0.6.4"):
        return "stringify"
    if k < version_key("0.28.0"):
        return "drop-false"
    return "no-flag"


def _normalize_settings(
    raw: RawEngine, release: str, strict: bool = False
) -> tuple[dict[str, FlagValue], list[Finding]]:
    """Normalize each setting against the release's flag table.

    Returns (args by dest, findings). A value vLLM would reject is an SR103 error finding and the setting is
    dropped (vLLM's default is analyzed); with ``strict`` (a command line typed after ``--``) it raises
    InputError instead, since the command line itself is wrong.
    """
    table = ArgTable.for_release(release)
    args: dict[str, FlagValue] = {}
    findings: list[Finding] = []
    false_rule = _config_file_value_rule(release)
    errors: list[InputError] = []  # every bad value of the engine, reported together

    for s in raw.settings:
        match = table.lookup(s.flag)
        if match is None or match.record is None:
            continue  # unknown or ambiguous: reported by compat.checks.check_raw (SR101 / SR108)
        rec = match.record
        dest = _field(rec, "dest")
        flag = _field(rec, "flag")
        if dest in _MODEL_DESTS:
            continue
        value = s.value
        is_bool = _is_bool_flag(rec)
        if s.origin.source == "config-file" and value is False and is_bool and not match.negated:
            if false_rule == "drop-false" and _field(rec, "action") != "store_boolean":
                findings.append(
                    Finding(
                        rule="SR111",
                        severity="warning",
                        message=(
                            f"`{s.origin.key or flag.lstrip('-')}: false` in a --config file is dropped by vLLM "
                            f"{release} (only true booleans become flags), so {flag} keeps its default"
                        ),
                        file=s.origin.file,
                        line=s.origin.line,
                        key=s.origin.key or flag,
                        fix=(
                            f"write `no-{flag.lstrip('-')}: true`"
                            if _field(rec, "negative_flag")
                            else f"remove the key; {flag} cannot be switched off in {release}"
                        ),
                    )
                )
                continue
        try:
            typed = _coerce(table, rec, value, match.negated)
        except ValueError as err:
            if strict:  # every bad value of the command line, reported together
                errors.append(InputError(str(err), file=s.origin.file, line=s.origin.line, key=s.flag,
                                         hint=_prefix_hint(s.flag, flag, match.via)))
                continue
            # A value vLLM's parser rejects stops vLLM at start-up: an error finding on this engine (check_raw
            # reports the same one as SR102/SR103), never an input error that would hide the other engines.
            findings.append(Finding(rule="SR103", severity="error", message=f"{err} (vLLM {release}); the "
                                    "analysis uses vLLM's default for it", file=s.origin.file, line=s.origin.line,
                                    key=s.origin.key or s.flag, fix=f"give {flag} a valid value"))
            continue
        problem = _check_range(dest, typed)
        if problem and strict:
            errors.append(InputError(problem, file=s.origin.file, line=s.origin.line, key=s.flag))
            continue
        if problem:
            findings.append(Finding(rule="SR103", severity="error", message=f"{flag} {problem}",
                                    file=s.origin.file, line=s.origin.line, key=s.origin.key or s.flag,
                                    fix=f"give {flag} a value vLLM accepts"))
            continue
        previous = args.get(dest)
        overridden = []
        if previous is not None:
            overridden = [*previous.overridden, previous.origin]
        args[dest] = FlagValue(dest=dest, flag=flag, value=typed, origin=s.origin, overridden=overridden)
    if errors:
        raise combine(errors)
    return args, findings


def _prefix_hint(written: str, flag: str, via: str) -> str | None:
    """Why a value went to ``flag`` when the command line wrote a shorter ``written``: vLLM's argparse takes
    any unambiguous prefix of an option (``--gpu`` is ``--gpu-memory-utilization``), so an option meant for
    sched-reader but typed after ``--`` lands on a vLLM flag."""
    if via != "prefix" or written == flag:
        return None
    return (f"vLLM reads {written} as {flag} (it accepts any unambiguous prefix of a flag); "
            f"options for sched-reader itself go before `--`")


def _is_bool_flag(rec: Any) -> bool:
    action = str(_field(rec, "action") or "")
    return _field(rec, "type") == "bool" or "store_true" in action or "BooleanOptional" in action


def _coerce(table: Any, rec: Any, value: Any, negated: bool) -> Any:
    """Typed value for one setting; a bare boolean flag means True (False when negated)."""
    if _is_bool_flag(rec):
        if value is None:
            return not negated
        if isinstance(value, bool):
            return (not value) if negated else value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            b = value.lower() in ("true", "1", "yes")
            return (not b) if negated else b
    if value is None and _field(rec, "nargs") not in ("?", "*"):
        raise ValueError(f"{_field(rec, 'flag')} expects a value")
    typed = table.coerce(rec, value)
    if isinstance(typed, float) and (math.isnan(typed) or math.isinf(typed)):
        raise ValueError(f"{_field(rec, 'flag')} must be a finite number, got {value!r}")
    return typed


# ----------------------------------------------------------------------------------------------
# Hardware and model
# ----------------------------------------------------------------------------------------------


def _resolve_gpu_count(raw: RawEngine, gpu: str | None, world_size: int,
                       notes: list[str]) -> tuple[int, Origin | None, bool]:
    """(GPUs per replica, where the file says so, inferred?): the manifest's count, else TP x PP x DP.

    A count that is not a whole number (an unresolved ``${GPUS:-}``, a template) is reported in the notes
    and TP x PP x DP is used instead: it never stops the analysis."""
    hint = raw.gpu_count
    if hint is None:
        return world_size, None, True
    if str(hint.value).strip().lower() == "all":
        notes.append(f"GPU count 'all' ({hint.origin.where()}): assuming TP x PP x DP = {world_size}")
        return world_size, None, True
    try:
        count = int(hint.value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: `requestGPU: -.inf` (found by fuzz.py)
        notes.append(f"GPU count {hint.value!r} ({hint.origin.where()}) is not a whole number (unresolved); "
                     f"assuming TP x PP x DP = {world_size}")
        return world_size, None, True
    if count < 0:
        notes.append(f"GPU count {count} ({hint.origin.where()}) is negative; assuming TP x PP x DP = {world_size}")
        return world_size, None, True
    # bounded above: a count of 2**63 GPUs is a typo, never a deployment (limits.MAX_GPUS)
    count = bounded_int(count, key=hint.origin.key or "GPU count", lo=0, hi=MAX_GPUS, unit="GPUs",
                        file=hint.origin.file, line=hint.origin.line,
                        hint="give the number of GPUs one replica uses")
    if count == 0 and gpu:
        notes.append(f"the file requests no GPU; --gpu given, so analyzed on TP x PP x DP = {world_size} GPU(s)")
        return world_size, None, True
    if count == 0:
        notes.append("no GPU requested: a CPU deployment; GPU memory and speed figures do not apply")
    return count, hint.origin, False


# Accelerator families sched-reader has no memory/speed model for, named as the file names them.
_UNMODELLED_FAMILIES = {
    "tpu": "Google TPU",
    "gaudi": "Intel Gaudi",
    "intel-gpu": "Intel GPU",
    "neuron": "AWS Neuron",
}


def _family(raw: RawEngine) -> str | None:
    """The accelerator family the file states, else the one its device resource or label implies."""
    if raw.accelerator is not None:
        return str(raw.accelerator.value).lower()

    for hint in (raw.gpu_count, raw.gpu_type):
        if hint is not None:
            fam = accelerator_family(hint.origin.key or "", hint.value)
            if fam is not None:
                return fam
    return None


def _resolve_hardware(raw: RawEngine, gpu: str | None, world_size: int, notes: list[str]) -> Hardware:
    """The accelerator one engine runs on: ``--gpu`` > the file's GPU product > its accelerator family.

    A product or family the GPU catalog lacks (a TPU slice, an Intel Gaudi, a new GPU) is carried as read,
    with ``modelled=False``: no figure is computed for it, and it is never silently replaced by an H100."""
    count, count_origin, count_inferred = _resolve_gpu_count(raw, gpu, world_size, notes)
    family = _family(raw)
    gpu_origin: Origin | None = None
    inferred = False
    accelerator: str | None = None
    res = None
    if gpu:
        res = resolve_gpu(gpu)
        gpu_origin = Origin(source="cli-option", key="--gpu")
    elif family in _UNMODELLED_FAMILIES:
        product = raw.gpu_type.value if raw.gpu_type is not None else None
        accelerator = _UNMODELLED_FAMILIES[family] + (f" {product}" if product else "")
        gpu_origin = (raw.gpu_type or raw.accelerator).origin
    elif raw.gpu_type is not None:
        value = raw.gpu_type.value
        names = list(dict.fromkeys(str(v) for v in value)) if isinstance(value, list) else [str(value)]
        for name in names:
            try:
                res = resolve_gpu(name)
                break
            except SchedReaderError:
                continue
        gpu_origin = raw.gpu_type.origin
        if res is None:
            accelerator = " or ".join(names)
        elif len(names) > 1:
            notes.append(f"the file allows several GPUs ({', '.join(names)}); analyzed on {res.gpu.name} "
                         "(pass --gpu to pick another)")
    elif family == "amd":
        res = resolve_gpu(DEFAULT_AMD_GPU)
        inferred = True
        notes.append(f"amd.com/gpu requested but no GPU model named: assuming {res.gpu.name} (pass --gpu to change)")
    else:
        inferred = True
    if accelerator is not None:
        notes.append(f"accelerator {accelerator!r} ({gpu_origin.where() if gpu_origin else 'from the file'}) is not "
                     "in sched-reader's GPU catalog: memory, KV-cache and speed figures are skipped, and scheduler "
                     "defaults that depend on the device are a generic GPU's (pass --gpu NAME to analyze it as a "
                     "catalog GPU)")
        return Hardware(gpu=default_gpu(), count=count, gpu_origin=gpu_origin, count_origin=count_origin,
                        gpu_inferred=False, count_inferred=count_inferred, accelerator=accelerator, modelled=False)
    if res is None:
        the_gpu = default_gpu()
        if count:  # a CPU deployment has no GPU to assume
            notes.append(f"GPU not stated; assuming {the_gpu.name} (pass --gpu to change)")
    else:
        the_gpu = res.gpu
        if res.guessed and res.note:
            notes.append(res.note)
    return Hardware(
        gpu=the_gpu,
        count=count,
        gpu_origin=gpu_origin,
        count_origin=count_origin,
        gpu_inferred=inferred,
        count_inferred=count_inferred,
    )


def _is_model_path(name: str) -> bool:
    """A local path or storage URI rather than a Hugging Face id (``/mnt/models``, ``./ckpt``,
    ``pvc://...``, ``s3://...``, ``gs://...``, ``C:\\models``)."""
    n = name.strip()
    return (n.startswith(("/", "./", "../", "~")) or "://" in n or (len(n) > 2 and n[1] == ":")
            or n.count("/") > 1)


def _model_name(raw: RawEngine) -> tuple[str | None, Origin | None]:
    if raw.model is None or raw.model.value in (None, ""):
        return None, None
    return str(raw.model.value), raw.model.origin


# ----------------------------------------------------------------------------------------------
# Effective configuration
# ----------------------------------------------------------------------------------------------


def derived_max_model_len(config: dict[str, Any]) -> int | None:
    """The context length vLLM derives from a HF config when --max-model-len is not set (tokens).

    vLLM (``_get_and_verify_max_len``) takes the smallest of the known length keys, then, for RoPE
    scaling types other than su/longrope/llama3/mrope, multiplies by the scaling factor (from
    ``original_max_position_embeddings`` for YaRN).
    """
    keys = (
        "max_position_embeddings",
        "n_positions",
        "max_seq_len",
        "seq_length",
        "max_sequence_length",
        "max_seq_length",
        "seq_len",
    )
    lengths = [int(config[k]) for k in keys if isinstance(config.get(k), (int, float)) and config.get(k)]
    if not lengths:
        return None
    derived = min(lengths)
    rs = config.get("rope_scaling") or {}
    if isinstance(rs, dict):
        rtype = rs.get("rope_type", rs.get("type"))
        if rtype not in (None, "su", "longrope", "llama3", "mrope", "default") and rs.get("factor"):
            if rtype == "yarn" and rs.get("original_max_position_embeddings"):
                derived = int(rs["original_max_position_embeddings"])
            derived = int(derived * float(rs["factor"]))
    return derived


def _resolve_dtype(explicit: str | None, arch_dtype: str, quantization: str | None) -> tuple[str, str]:
    """Resolve ``--dtype`` like vLLM: auto follows the checkpoint, float32 checkpoints run in bf16."""
    aliases = {"half": "float16", "float": "float32", "bf16": "bfloat16", "fp16": "float16"}
    if explicit and explicit != "auto":
        return aliases.get(explicit, explicit), "explicit"
    d = aliases.get(arch_dtype, arch_dtype)
    if d == "float32":
        return "bfloat16", "auto: checkpoint is float32; vLLM serves float32 checkpoints in bfloat16"
    return d, f"auto: checkpoint torch_dtype {arch_dtype}"


def has_both_engines(release: str) -> bool:
    """Whether ``release`` ships both V0 and V1, so that ``VLLM_USE_V1`` picks one (0.6.4..0.10.x).

    V1 is opt-in from 0.6.4 and the default from 0.8.0; V0 is gone in 0.11.0 (facts.yaml engine_timeline).
    """
    return (0, 6, 4) <= parse_version(release) < (0, 11, 0)


def _engine_from_env(raw: Any, release: str) -> str | None:
    """``VLLM_USE_V1`` where the release has both engines: "v1"/"v0", else None."""
    hint = raw.env.get("VLLM_USE_V1") if getattr(raw, "env", None) else None
    if hint is None or hint.value is None:
        return None
    if not has_both_engines(release):
        return None
    return "v0" if str(hint.value).strip().lower() in ("0", "false", "no", "off", "") else "v1"


def build_effective(spec: EngineSpec, engine: str | None = None) -> EffectiveConfig:
    """The configuration vLLM will run with: explicit values, else the release's defaults.

    ``engine`` ("v0"/"v1") overrides the release's default engine (``VLLM_USE_V1``)."""
    facts = release_facts(spec.vllm_version)
    reasons: dict[str, str] = {}

    def explicit(dest: str, default: Any = None) -> Any:
        fv = spec.args.get(dest)
        if fv is not None:
            reasons[dest] = f"explicit ({fv.origin.where()})"
            return fv.value
        return default

    tp = int(explicit("tensor_parallel_size", 1) or 1)
    pp = int(explicit("pipeline_parallel_size", 1) or 1)
    dp = int(explicit("data_parallel_size", 1) or 1)
    if spec.arch is not None:
        mml_default = derived_max_model_len(spec.arch.config)
    else:
        mml_default = None
    max_model_len = explicit("max_model_len")
    if max_model_len is None:
        max_model_len = mml_default or 4096
        reasons["max_model_len"] = (
            "derived from the model config (max_position_embeddings / rope scaling)"
            if mml_default
            else "unknown model: assumed 4096 tokens"
        )
    quantization = explicit("quantization") or spec.checkpoint_quantization_method
    if "quantization" not in reasons and quantization:
        reasons["quantization"] = "checkpoint quantization implied by the model"
    arch_dtype = spec.arch.torch_dtype if spec.arch is not None else "bfloat16"
    dtype, dtype_reason = _resolve_dtype(explicit("dtype"), arch_dtype, quantization)
    reasons["dtype"] = reasons.get("dtype", dtype_reason)
    explicit_values = {k: v.value for k, v in spec.args.items()}
    platform_reason = None if engine else v0_by_platform(spec.vllm_version, spec.hardware.gpu.vendor,
                                                         spec.vllm_version_requested)
    if platform_reason:  # the release defaults to V1 on NVIDIA only (compat/platform_engine.py)
        engine = "v0"
    defaults = scheduler_defaults(
        spec.vllm_version,
        spec.hardware.gpu.name,
        spec.hardware.gpu.cuda_total_gib,
        max_model_len=int(max_model_len),
        explicit=explicit_values,
        engine=engine.upper() if engine else None,
        usage_context=spec.usage_context,
    )

    def pick(dest: str, fallback: Any) -> Any:
        if dest in spec.args:
            return explicit(dest)
        if dest in defaults:
            value, reason = defaults[dest]
            reasons[dest] = reason
            return value
        reasons[dest] = f"vLLM default {fallback!r}"
        return fallback

    build = rocm_builds.code_date(spec.vllm_version_requested) if spec.hardware.gpu.vendor == "AMD" else ""
    if platform_reason:
        reasons["engine"] = platform_reason
    elif not engine and v0_by_platform(spec.vllm_version, spec.hardware.gpu.vendor):
        reasons["engine"] = "V1 by default: " + rocm_builds.why(build, "v1_default")
    elif engine:
        reasons["engine"] = f"VLLM_USE_V1 selects {engine.upper()}"
    engine = engine or str(facts.get("engine", "v1") if isinstance(facts, dict) else getattr(facts, "engine", "v1")).lower()
    spec_cfg = explicit("speculative_config")
    speculative = _normalize_speculative(spec, spec_cfg)
    chunked = bool(pick("enable_chunked_prefill", engine == "v1"))
    prefix = bool(pick("enable_prefix_caching", engine == "v1"))
    mnbt = int(pick("max_num_batched_tokens", 2048))
    forced = mla_unchunked_source(spec)
    v0_off = None if forced else mla_v0_default_off_source(spec, engine)
    if v0_off and "enable_chunked_prefill" not in spec.args:
        chunked = False
        reasons["enable_chunked_prefill"] = f"off: {v0_off}"
        if "max_num_batched_tokens" not in spec.args:
            mnbt = max(int(max_model_len), UNCHUNKED_MNBT_FLOOR)
            reasons["max_num_batched_tokens"] = (f"max(max_model_len, {UNCHUNKED_MNBT_FLOOR}) = {mnbt}: V0 "
                                                 "leaves chunked prefill off for this MLA model")
    if forced:  # vLLM overrides the flags too (VllmConfig.__post_init__), so this comes last
        chunked, prefix = False, False
        mnbt = max(int(max_model_len), UNCHUNKED_MNBT_FLOOR)
        why = f"vLLM {spec.vllm_version} forces it for MLA models ({forced})"
        reasons["enable_chunked_prefill"] = f"off: {why}"
        reasons["enable_prefix_caching"] = f"off: {why}"
        reasons["max_num_batched_tokens"] = (f"max(max_model_len, {UNCHUNKED_MNBT_FLOOR}) = {mnbt}: chunked "
                                             "prefill forced off for this MLA model")
    kv_requested = str(explicit("kv_cache_dtype", "auto") or "auto")
    sparse_backend = _sparse_backend(spec, kv_requested, tp)
    return EffectiveConfig(
        vllm_version=spec.vllm_version,
        engine=engine,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        data_parallel_size=dp,
        enable_expert_parallel=bool(explicit("enable_expert_parallel", False)),
        max_model_len=int(max_model_len),
        gpu_memory_utilization=float(pick("gpu_memory_utilization", 0.9)),
        kv_cache_memory_bytes=explicit("kv_cache_memory_bytes"),
        dtype=dtype,
        quantization=quantization,
        kv_cache_dtype=_kv_cache_dtype(spec, kv_requested, reasons, sparse_backend),
        sparse_mla_backend=sparse_backend,
        block_size=_block_size(spec, tp, reasons),
        max_num_seqs=int(pick("max_num_seqs", 256)),
        max_num_batched_tokens=mnbt,
        enable_chunked_prefill=chunked,
        enable_prefix_caching=prefix,
        enforce_eager=bool(explicit("enforce_eager", False)),
        async_scheduling=bool(pick("async_scheduling", False)),
        long_prefill_token_threshold=int(pick("long_prefill_token_threshold", 0) or 0),
        max_num_partial_prefills=int(pick("max_num_partial_prefills", 1) or 1),
        num_scheduler_steps=int(explicit("num_scheduler_steps", 1) or 1) if engine == "v0" else 1,
        cpu_offload_gb=float(explicit("cpu_offload_gb", 0.0) or 0.0),
        swap_space_gb=float(pick("swap_space", 4.0) or 0.0),
        num_gpu_blocks_override=explicit("num_gpu_blocks_override"),
        speculative=speculative,
        custom_all_reduce=False if explicit("disable_custom_all_reduce", False) else None,
        skip_mm_profiling=bool(explicit("skip_mm_profiling", False)),
        mm_disabled=_mm_disabled(explicit("limit_mm_per_prompt")),
        usage_context=spec.usage_context,
        rocm_build=build,
        reasons=reasons,
    )


def _sparse_backend(spec: EngineSpec, requested: str, tp: int) -> str | None:
    """DSA models: the sparse-MLA backend vLLM picks on this GPU and release (None otherwise)."""
    if spec.arch is None or not spec.arch.is_sparse_mla:
        return None
    return sparse_mla_backend(spec.vllm_version, spec.hardware.gpu.compute_capability, requested,
                              spec.arch.num_attention_heads // max(1, tp))


def _kv_cache_dtype(spec: EngineSpec, requested: str, reasons: dict[str, str], backend: str | None) -> str:
    """The --kv-cache-dtype vLLM runs with: as given, except for DeepSeek-V3.2 / GLM-5 (DSA), whose config hook
    or attention layer rewrites it per release and backend (models/architecture.py ``sparse_mla_cache_dtype``)."""
    if spec.arch is None or not spec.arch.is_sparse_mla:
        return requested
    value, why = sparse_mla_cache_dtype(requested, parse_version(spec.vllm_version), backend)
    if value != requested or (why and backend):
        reasons["kv_cache_dtype"] = why
    return value


def usage_context_of(raw: RawEngine) -> str:
    """vLLM's UsageContext for ``raw``: LLM_CLASS for an offline run (a `vllm bench throughput` command, or a
    ``workload:`` section whose endpoint is offline), else OPENAI_API_SERVER (`vllm serve`). The two pick
    different scheduler defaults (compat/defaults.py: e.g. 16,384 vs 8,192 batched tokens on an H100)."""
    if raw.usage_context:
        return str(raw.usage_context)
    section = raw.workload or {}
    return usage_context_for(section.get("endpoint") or section.get("backend")) or "OPENAI_API_SERVER"


def mla_unchunked_source(spec: EngineSpec) -> str | None:
    """The source line when the spec's vLLM build forces chunked prefill and prefix caching off for its MLA
    model (compat/mla_unchunked.py), else None."""
    if spec.arch is None or not spec.arch.config.get("kv_lora_rank"):
        return None
    return mla_forces_unchunked(spec.vllm_version_requested or spec.vllm_version, spec.hardware.gpu.vendor)


def mla_v0_default_off_source(spec: EngineSpec, engine: str) -> str | None:
    """The source line when the spec's vLLM build, on the V0 ``engine``, leaves chunked prefill off by default
    for its MLA model (compat/mla_unchunked.py ``mla_v0_default_unchunked``), else None."""
    if spec.arch is None or not spec.arch.config.get("kv_lora_rank"):
        return None
    return mla_v0_default_unchunked(spec.vllm_version_requested or spec.vllm_version, engine)


def _block_size(spec: EngineSpec, tp: int, reasons: dict[str, str]) -> int:
    """Tokens per KV block: the attention backend vLLM picks for this release, GPU and model decides
    (MLA backends force 64 or 128 in some releases, even over an explicit --block-size)."""
    fv = spec.args.get("block_size")
    explicit = int(fv.value) if fv is not None and fv.value is not None else None
    config = spec.arch.config if spec.arch is not None else {}
    heads = spec.arch.num_attention_heads // max(1, tp) if spec.arch is not None else None
    kv_dtype = spec.args["kv_cache_dtype"].value if "kv_cache_dtype" in spec.args else "auto"
    value, reason = default_block_size(
        spec.vllm_version, spec.hardware.gpu.compute_capability,
        is_mla=bool(config.get("kv_lora_rank")), explicit=explicit,
        is_sparse="index_topk" in config, qk_nope_head_dim=config.get("qk_nope_head_dim"),
        kv_cache_dtype=kv_dtype, num_heads=heads,
    )
    if explicit is not None and value == explicit:
        reasons["block_size"] = f"explicit ({fv.origin.where()})"
    else:
        reasons["block_size"] = reason
    return int(value)


def _normalize_speculative(spec: EngineSpec, value: Any) -> dict[str, Any] | None:
    """``--speculative-config`` (new) or the legacy ``--speculative-model`` flags -> one dict."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        out.update(value)
    elif isinstance(value, str) and value.strip():
        try:
            parsed = json.loads(value) if json_depth(value) <= MAX_NESTING else None
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            out.update(parsed)
    legacy_model = spec.explicit("speculative_model")
    if legacy_model and "model" not in out:
        out["model"] = legacy_model
    k = spec.explicit("num_speculative_tokens")
    if k and "num_speculative_tokens" not in out:
        out["num_speculative_tokens"] = k
    if not out:
        return None
    if "method" not in out:
        model = str(out.get("model") or "")
        if model in ("[ngram]", "ngram"):
            out["method"] = "ngram"
        elif "eagle3" in model.lower():
            out["method"] = "eagle3"
        elif "eagle" in model.lower():
            out["method"] = "eagle"
        elif "medusa" in model.lower():
            out["method"] = "medusa"
        elif model:
            out["method"] = "draft_model"
    return out


# ----------------------------------------------------------------------------------------------
# Entry points
# ----------------------------------------------------------------------------------------------


def build_spec(
    raw: RawEngine,
    *,
    gpu: str | None = None,
    vllm: str | None = None,
    model_config: str | None = None,
    strict_model: bool = True,
    model: str | None = None,
) -> EngineSpec:
    """One ``RawEngine`` -> ``EngineSpec`` (with effective config when the model resolves).

    An unknown or unresolvable model in a deploy file is recorded as unresolved (the engine is still
    reported, without capacity figures); ``strict_model`` raises instead, but only for a command line typed
    after ``--`` (where the model is the user's own typing). ``model`` overrides the model the file names
    (``--model NAME``: for a path such as ``/mnt/models`` or ``pvc://...``, or an unresolved variable).
    """
    release, requested, v_origin, findings = _resolve_release(raw, vllm)
    from_argv = raw.file == "<command line>"
    args, flag_findings = _normalize_settings(raw, release, strict=from_argv)
    findings.extend(flag_findings)  # SR103 values vLLM refuses (the pipeline drops repeats of check_raw's)
    notes = list(raw.notes)
    unresolved = list(raw.unresolved)
    findings.extend(_unresolved_findings(raw))
    name, m_origin = _model_name(raw)
    if model:
        if name and name != model:
            notes.append(f"model {name!r} from the file is replaced by --model {model}")
        name, m_origin = model, Origin(source="cli-option", key="--model")
    strict_model = strict_model and from_argv
    tp = int(args["tensor_parallel_size"].value) if "tensor_parallel_size" in args else 1
    pp = int(args["pipeline_parallel_size"].value) if "pipeline_parallel_size" in args else 1
    dp = int(args["data_parallel_size"].value) if "data_parallel_size" in args else 1
    hardware = _resolve_hardware(raw, gpu, tp * pp * dp, notes)
    arch = None
    ckpt_quant = None
    ckpt_method = None
    if name is None and model_config is None:
        unresolved.append(
            Unresolved(
                text="model",
                reason="no model given (no positional MODEL, --model or model: key)",
                origin=Origin(file=raw.file, line=raw.line, source="inferred"),
            )
        )
    elif name is not None and ("$" in name or "{{" in name) and model_config is None:
        unresolved.append(Unresolved(text=name, reason="the model is an unresolved variable or template "
                                     "(pass --model NAME to name it)", origin=m_origin or Origin(file=raw.file)))
    else:
        try:
            res = resolve_model(name or "", model_config)
            arch, ckpt_quant = res.arch, res.checkpoint_quantization
            ckpt_method = getattr(res, "quantization_method", None) or ckpt_quant
            if res.guessed and res.note:
                notes.append(res.note)
        except SchedReaderError as err:
            if name is not None and model_config is None and _is_model_path(name) and not from_argv:
                # a path / storage URI the catalog cannot map: say what to pass, never a fuzzy "did you mean"
                err = InputError("the model is a path or storage URI; sched-reader cannot read the weights' config "
                                 "there", hint="pass --model NAME with the Hugging Face id, or --model-config PATH "
                                 "to its config.json")
            if strict_model:
                if m_origin is not None and err.file is None:
                    err.file, err.line = m_origin.file, m_origin.line
                    err.key = err.key or m_origin.key
                raise
            unresolved.append(
                Unresolved(
                    text=name or "",
                    reason=err.message + (f" ({err.hint})" if err.hint else ""),
                    origin=m_origin or Origin(file=raw.file, line=raw.line),
                )
            )
    spec = EngineSpec(
        name=raw.name,
        file=raw.file,
        line=raw.line,
        role=raw.role,
        vllm_version=release,
        vllm_version_requested=requested,
        vllm_version_origin=v_origin,
        model_name=name or "",
        model_origin=m_origin,
        arch=arch,
        checkpoint_quantization=ckpt_quant,
        checkpoint_quantization_method=ckpt_method,
        hardware=hardware,
        args=args,
        findings=findings,
        unresolved=unresolved,
        notes=notes,
        workload=raw.workload,
        shared_gpu_group=raw.shared_gpu_group,
        usage_context=usage_context_of(raw),
    )
    _check_stages(spec, pp)
    spec.effective = build_effective(spec, engine=_engine_from_env(raw, release))
    fi = raw.env.get("VLLM_USE_FLASHINFER_SAMPLER") if getattr(raw, "env", None) else None
    if fi is not None and spec.effective is not None and fi.value is not None:
        on = str(fi.value).strip().lower() not in ("0", "false", "no", "off", "")
        spec.effective = spec.effective.model_copy(update={"flashinfer_sampler": on})
    rocm_env = {k: str(h.value) for k, h in (getattr(raw, "env", None) or {}).items()
                if (k.startswith("VLLM_ROCM_") or k in ROCM_ATTENTION_ENV) and h.value is not None}
    if rocm_env and spec.effective is not None:
        spec.effective = spec.effective.model_copy(update={"rocm_env": rocm_env})
    _check_world_size(spec)
    spec.findings.sort(key=lambda f: f.sort_key())
    return spec


def _mm_disabled(limits: Any) -> list[str]:
    """Modalities ``--limit-mm-per-prompt`` turns off (count 0): JSON/dict or the old ``image=0,video=0`` form."""
    if isinstance(limits, str):
        try:
            limits = json.loads(limits)
        except ValueError:
            limits = dict(kv.split("=", 1) for kv in limits.split(",") if "=" in kv)
    if not isinstance(limits, dict):
        return []
    out = []
    for k, v in limits.items():
        count = v.get("count") if isinstance(v, dict) else v
        try:
            if int(count) == 0:
                out.append(str(k).strip())
        except (TypeError, ValueError):
            continue
    return out


def soften_for_assumed_release(findings: list[Finding], release: str, raw: RawEngine | None = None) -> list[Finding]:
    """When the file names no release, a flag or value that is valid in another known release (a flag added
    later or removed since, ``quantization: bitsandbytes``, the older ``image=50`` form of a JSON flag) is a
    warning about the assumed release, not a certain error."""
    out = []
    for f in findings:
        if f.rule == "SR101" and any(w in f.message for w in ("; added in", "; removed in", "; last in")):
            f = f.model_copy(update={
                "severity": "warning",
                "message": f.message + f" (the file names no vLLM release; {release} is assumed)"})
        elif f.rule in ("SR102", "SR103") and raw is not None:
            other = _valid_elsewhere(raw, f, release)
            if other is not None:
                f = f.model_copy(update={
                    "severity": "warning",
                    "message": f.message + f"; valid in vLLM {other} (the file names no release; {release} is assumed)"})
        out.append(f)
    return out


def _valid_elsewhere(raw: RawEngine, f: Finding, release: str) -> str | None:
    """A known release whose parser accepts the setting ``f`` is about, or None."""

    setting = next((s for s in raw.settings if s.origin.line == f.line and (s.origin.key or s.flag) == f.key), None)
    if setting is None:
        return None
    releases = known_releases()
    sample = sorted(set(releases[::3] + [releases[-1]]), key=releases.index, reverse=True)
    for other in sample:
        if other == release:
            continue
        try:
            table = ArgTable.for_release(other)
            match = table.lookup(setting.flag)
            if match is None or match.record is None:
                continue
            if setting.value is not None:
                table.coerce(match.record, setting.value)
            return other
        except (ValueError, SchedReaderError):
            continue
    return None


def _unresolved_findings(raw: RawEngine) -> list[Finding]:
    """A flag whose value is an unresolved variable silently keeps vLLM's default: say so."""
    out = []
    for u in raw.unresolved:
        key = u.origin.key
        if key and key.startswith("-"):
            out.append(
                Finding(
                    rule="SR114",
                    severity="warning",
                    message=f"{key} is set from an undefined variable ({u.reason}); the analysis uses vLLM's default for it",
                    file=u.origin.file,
                    line=u.origin.line,
                    key=key,
                    fix="define the variable in the file, or pass the value on the command line after `--`",
                )
            )
    return out


def _check_stages(spec: EngineSpec, pp: int) -> None:
    """Every pipeline stage needs at least one layer (vLLM's ``get_pp_indices`` splits the layers)."""
    layers = spec.arch.num_layers if spec.arch is not None else 0
    if layers and pp > layers:
        fv = spec.args.get("pipeline_parallel_size")
        o = fv.origin if fv is not None else None
        raise InputError(
            f"--pipeline-parallel-size {pp:,} is more than the {layers} layers of {spec.model_name or 'the model'}",
            file=o.file if o else spec.file, line=o.line if o else spec.line,
            key=(o.key if o else None) or "--pipeline-parallel-size",
            hint=f"use at most {layers} stages; each stage holds at least one layer")


def _check_world_size(spec: EngineSpec) -> None:
    eff = spec.effective
    if eff is None or spec.hardware.count_inferred:
        return
    world = eff.tensor_parallel_size * eff.pipeline_parallel_size
    if 0 < spec.hardware.count < world and spec.hardware.count_origin is not None:
        o = spec.hardware.count_origin
        spec.findings.append(
            Finding(
                rule="SR112",
                severity="error",
                message=(
                    f"TP x PP = {world} GPUs per replica but only {spec.hardware.count} GPU(s) are requested; "
                    "vLLM will fail to start its workers"
                ),
                file=o.file,
                line=o.line,
                key=o.key,
                fix=f"request {world} GPUs or lower --tensor-parallel-size / --pipeline-parallel-size",
            )
        )


def read_engines(paths: Iterable[str | Path], command_line: list[str] | None = None,
                 usage_context: str | None = None) -> list[RawEngine]:
    """All raw engines from the given files and/or a command line after ``--``; ``usage_context``
    ("LLM_CLASS" for an offline run) replaces each engine's own."""
    engines: list[RawEngine] = []
    paths = list(paths)
    failed: list[SchedReaderError] = []
    for p in paths:
        try:
            engines.extend(read_path(p))
        except SchedReaderError as err:
            if len(paths) + bool(command_line) == 1:
                raise
            failed.append(err)  # one unreadable file never hides the others
    if failed and not engines and not command_line:
        raise failed[0]
    for err in failed:
        import sys

        sys.stderr.write(f"sched-reader: warning: skipped: {err}\n")
    if command_line:
        engines.extend(read_command_line(list(command_line)))
    if not engines:
        raise InputError("nothing to read", hint="give a deploy file, or a command line after `--`")
    if usage_context:
        engines = [e.model_copy(update={"usage_context": usage_context}) for e in engines]
    return engines



def note_shared_gpus(specs: list[EngineSpec]) -> None:
    """Engines that share physical GPUs: their gpu-memory-utilization fractions add up."""
    groups: dict[str, list[EngineSpec]] = {}
    for s in specs:
        if s.shared_gpu_group:
            groups.setdefault(s.shared_gpu_group, []).append(s)
    for group, members in groups.items():
        if len(members) < 2:
            continue
        total = sum(m.effective.gpu_memory_utilization for m in members if m.effective)
        names = ", ".join(m.name for m in members)
        for m in members:
            sev = "error" if total > 1.0 else "info"
            m.findings.append(
                Finding(
                    rule="SR113",
                    severity=sev,
                    message=(
                        f"engines {names} share GPU(s) {group}; their gpu-memory-utilization fractions add up to "
                        f"{total:.2f} of device memory"
                        + (" (> 1.0: the later engine cannot start)" if total > 1.0 else "")
                    ),
                    file=m.file,
                    line=m.line,
                    fix="keep the sum of --gpu-memory-utilization of co-located engines below 1.0",
                )
            )
