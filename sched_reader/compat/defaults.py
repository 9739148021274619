"""Effective defaults vLLM applies in a release (engine, scheduler, cache).

Data: ``data/releases/facts.json`` (per-release facts and the scheduler-default
era tables, from facts.yaml ``scheduler_defaults``/``engine_timeline``/...), plus
the per-release flag table for argparse defaults. Units: token counts for
``max_num_batched_tokens``/``long_prefill_token_threshold``; sequences for
``max_num_seqs``; tokens per block for ``block_size``; GiB for ``swap_space``
and ``gpu_total_gib``; a fraction (0..1) for ``gpu_memory_utilization``.

Every value comes with a one-line reason that names the rule and the release,
e.g. "vLLM 0.19.0 default for `vllm serve` on GPUs with >= 70 GiB (not A100): 8192".
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any

from sched_reader.compat.argtable import ArgTable
from sched_reader.compat.releases import DATA_DIR, resolve_version, version_key
from sched_reader.errors import InputError

USAGE_CONTEXTS = ("OPENAI_API_SERVER", "LLM_CLASS")
_CONTEXT_LABEL = {"OPENAI_API_SERVER": "`vllm serve`", "LLM_CLASS": "the offline LLM class"}

SCHEDULER_FIELDS = (
    "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill", "enable_prefix_caching",
    "async_scheduling", "gpu_memory_utilization", "block_size", "long_prefill_token_threshold",
    "max_num_partial_prefills", "swap_space",
)

Default = tuple[Any, str]


@functools.lru_cache(maxsize=1)
def _facts() -> dict[str, Any]:
    with open(DATA_DIR / "facts.json", encoding="utf-8") as fh:
        return json.load(fh)


def _release(version: str) -> str:
    facts = _facts()["releases"]
    return version if version in facts else resolve_version(version).release


@dataclass(frozen=True)
class ReleaseFacts:
    """Facts about one release that do not depend on the GPU or the model."""

    release: str
    engine: str                      # "V0" or "V1": the engine `vllm serve` uses by default
    v0_available: bool
    v1_available: bool
    v0_fallback: bool                # V1 default but unsupported features fall back to V0
    engine_note: str
    block_size_default: int          # tokens per KV block on CUDA when --block-size is unset
    block_size_cli_default: int | None
    block_size_note: str
    gpu_memory_utilization_default: float
    async_scheduling_flag: bool      # --async-scheduling exists
    async_scheduling_default: Any    # False, or "auto" (None at CLI; VllmConfig decides)
    async_scheduling_note: str
    chunked_prefill_default: bool    # default engine, generative model, context <= 32K
    chunked_prefill_note: str
    prefix_caching_default: bool
    prefix_caching_note: str
    spec_methods: tuple[str, ...] | None   # SpeculativeConfig.method values (None: no Literal)
    spec_method_free_form: bool
    spec_flags: tuple[str, ...]
    spec_config_style: tuple[str, ...]
    config_file_rules: tuple[str, ...]
    scheduler_era: str
    num_cli_flags: int
    source_url: str


@functools.lru_cache(maxsize=None)
def release_facts(version: str) -> ReleaseFacts:
    """Facts for a release (any text ``resolve_version`` accepts)."""
    rel = _release(version)
    f = _facts()["releases"][rel]
    eng, bs, asy, spec = f["engine"], f["block_size"], f["async_scheduling"], f["speculative_decoding"]
    return ReleaseFacts(
        release=rel, engine=eng["default"], v0_available=eng["v0_available"],
        v1_available=eng["v1_available"], v0_fallback=eng["v0_fallback"], engine_note=eng["note"],
        block_size_default=bs["default"], block_size_cli_default=bs["cli_default"],
        block_size_note=bs["note"],
        gpu_memory_utilization_default=f["gpu_memory_utilization_default"],
        async_scheduling_flag=asy["flag_present"], async_scheduling_default=asy["default"],
        async_scheduling_note=asy["note"],
        chunked_prefill_default=f["chunked_prefill"]["default"],
        chunked_prefill_note=f["chunked_prefill"]["note"],
        prefix_caching_default=f["prefix_caching"]["default"],
        prefix_caching_note=f["prefix_caching"]["note"],
        spec_methods=tuple(spec["method_values"]) if spec["method_values"] else None,
        spec_method_free_form=spec["method_free_form"], spec_flags=tuple(spec["spec_flags"]),
        spec_config_style=tuple(spec["config_style"]),
        config_file_rules=tuple(f["config_file_rules"]), scheduler_era=f["scheduler_era"],
        num_cli_flags=f["num_cli_flags"], source_url=f["source_url"],
    )


def _era(era_id: str) -> dict[str, Any]:
    return next(e for e in _facts()["scheduler_eras"] if e["id"] == era_id)


def _tier_matches(when: dict[str, Any], name: str, gib: float) -> bool:
    if "min_gib" in when and gib < when["min_gib"]:
        return False
    if any(n in name for n in when.get("exclude_names", ())):
        return False
    if when.get("require_names") and not any(n in name for n in when["require_names"]):
        return False
    return True


def _check_inputs(gpu_name: str, gpu_total_gib: float, usage_context: str,
                  max_model_len: int) -> None:
    if not isinstance(gpu_total_gib, (int, float)) or isinstance(gpu_total_gib, bool) \
            or not math.isfinite(gpu_total_gib) or gpu_total_gib <= 0:
        raise InputError(f"GPU memory must be a positive number of GiB, got {gpu_total_gib!r}",
                         key="gpu_total_gib", hint="e.g. 79.19 for an H100 80GB")
    if not isinstance(gpu_name, str):
        raise InputError(f"GPU name must be text, got {gpu_name!r}", key="gpu_name")
    if not isinstance(max_model_len, int) or isinstance(max_model_len, bool) or max_model_len <= 0:
        raise InputError(f"max_model_len must be a positive integer, got {max_model_len!r}",
                         key="max_model_len", hint="the model's context length in tokens")
    if not isinstance(usage_context, str) or not usage_context:
        raise InputError(f"unknown usage context {usage_context!r}", key="usage_context",
                         hint="use OPENAI_API_SERVER (vllm serve) or LLM_CLASS (offline LLM)")


def _as_int(explicit: dict[str, Any], key: str, default: int) -> int:
    """An explicit integer setting (``default`` when unset), else InputError."""
    value = explicit.get(key)
    if value is None:
        return default
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        return int(value)
    except (TypeError, ValueError):
        raise InputError(f"{key} must be an integer, got {value!r}", key=key) from None


def _engine_for(facts: ReleaseFacts, engine: str | None) -> str:
    if engine is None:
        return facts.engine
    eng = str(engine).upper()
    if eng not in ("V0", "V1"):
        raise InputError(f"unknown vLLM engine {engine!r}", key="engine", hint="use V0 or V1")
    if eng == "V0" and not facts.v0_available:
        raise InputError(f"vLLM {facts.release} has no V0 engine", key="engine",
                         hint="V0 was removed in 0.11.0; use V1")
    if eng == "V1" and not facts.v1_available:
        raise InputError(f"vLLM {facts.release} has no V1 engine", key="engine",
                         hint="V1 is opt-in from 0.6.4 (VLLM_USE_V1=1) and default from 0.8.0")
    return eng


def _argparse_default(table: ArgTable, dest: str) -> tuple[bool, Any]:
    rec = table.record_for_dest(dest)
    return (False, None) if rec is None else (True, rec.default)


def _v1_batch_defaults(rel: str, era: dict[str, Any], name: str, gib: float, ctx: str,
                       explicit: dict[str, Any]) -> tuple[dict[str, Default], bool]:
    """Table defaults for max_num_seqs / max_num_batched_tokens (before clamps)."""
    tier = next(t for t in era["v1"] if _tier_matches(t["when"], name, gib))
    where = f"GPUs with {tier['label']}" if "min_gib" in tier["when"] else tier["label"]
    if ctx in tier["max_num_batched_tokens"]:
        who = _CONTEXT_LABEL[ctx]
        mnbt = tier["max_num_batched_tokens"][ctx]
        mns = tier["max_num_seqs"][ctx]
        r_mnbt = f"vLLM {rel} default for {who} on {where}: {mnbt}"
        r_mns = f"vLLM {rel} default for {who} on {where}: {mns}"
    elif era.get("fallback"):
        mnbt = era["fallback"]["max_num_batched_tokens"]
        mns = era["fallback"]["max_num_seqs"]
        r_mnbt = f"vLLM {rel} fallback for usage context {ctx}: {mnbt}"
        r_mns = f"vLLM {rel} fallback for usage context {ctx}: {mns}"
    else:
        raise InputError(f"vLLM {rel} has no scheduler defaults for usage context {ctx!r}",
                         key="usage_context", hint="use OPENAI_API_SERVER or LLM_CLASS")
    doubled = explicit.get("performance_mode") == "throughput" \
        and version_key(rel) >= version_key("0.17.0")
    if doubled:
        mnbt, mns = mnbt * 2, mns * 2
        r_mnbt += f", doubled by --performance-mode throughput: {mnbt}"
        r_mns += f", doubled by --performance-mode throughput: {mns}"
    return {"max_num_batched_tokens": (mnbt, r_mnbt), "max_num_seqs": (mns, r_mns)}, doubled


def _v1_defaults(rel: str, era: dict[str, Any], name: str, gib: float, ctx: str,
                 max_model_len: int, explicit: dict[str, Any]) -> dict[str, Default]:
    out: dict[str, Default] = {}
    modern = version_key(rel) >= version_key("0.11.1")
    if modern:
        out["enable_chunked_prefill"] = (True, f"vLLM {rel}: chunked prefill on by default for "
                                               "generative models (SchedulerConfig)")
        out["enable_prefix_caching"] = (True, f"vLLM {rel}: prefix caching on by default for "
                                              "generative models (CacheConfig)")
    else:
        out["enable_chunked_prefill"] = (True, f"vLLM {rel} V1 engine: chunked prefill always on")
        out["enable_prefix_caching"] = (True, f"vLLM {rel} V1 engine: prefix caching on by default")
    table, _doubled = _v1_batch_defaults(rel, era, name, gib, ctx, explicit)
    out.update(table)
    if not era.get("clamps"):
        return out

    chunked = explicit.get("enable_chunked_prefill", True)
    mns = _as_int(explicit, "max_num_seqs", out["max_num_seqs"][0])
    if "max_num_batched_tokens" not in explicit:
        value, reason = out["max_num_batched_tokens"]
        if chunked is False and max_model_len > value:
            value = max_model_len
            reason += f"; chunked prefill off, so raised to max_model_len: {value}"
        if mns * max_model_len < value:
            value = mns * max_model_len
            reason += f"; capped at max_num_seqs x max_model_len = {value}"
        out["max_num_batched_tokens"] = (value, reason)
    mnbt = _as_int(explicit, "max_num_batched_tokens", out["max_num_batched_tokens"][0])
    if "max_num_seqs" not in explicit:
        value, reason = out["max_num_seqs"]
        if mnbt < value:
            value = mnbt
            reason += f"; capped at max_num_batched_tokens: {value}"
        out["max_num_seqs"] = (value, reason)
    return out


def _v0_defaults(rel: str, era: dict[str, Any], max_model_len: int,
                 explicit: dict[str, Any]) -> dict[str, Default]:
    v0 = era["v0"]
    if v0.get("assumed"):
        rel = f"{rel} (V0 fallback; 0.7.x V0 rules assumed)"
    out: dict[str, Default] = {
        "max_num_seqs": (v0["max_num_seqs"], f"vLLM {rel} V0 engine default: {v0['max_num_seqs']}"),
        "enable_prefix_caching": (False, f"vLLM {rel} V0 engine: prefix caching off by default"),
    }
    if "enable_chunked_prefill" in explicit:
        chunked = bool(explicit["enable_chunked_prefill"])
    else:
        limit = v0["auto_chunked_above_len"]
        blockers = [k for k in ("speculative_model", "speculative_config", "enable_lora",
                                "enable_prompt_adapter") if explicit.get(k)]
        if rel == "0.6.0" and explicit.get("enable_prefix_caching"):
            blockers.append("enable_prefix_caching")
        chunked = max_model_len > limit and not blockers
        if chunked:
            reason = (f"vLLM {rel} V0 engine turns chunked prefill on for max_model_len > {limit} "
                      "(CUDA, no sliding window): on")
        elif max_model_len > limit:
            reason = (f"vLLM {rel} V0 engine: chunked prefill stays off because of "
                      f"{', '.join(blockers)}")
        else:
            reason = f"vLLM {rel} V0 engine: chunked prefill off for max_model_len <= {limit}"
        out["enable_chunked_prefill"] = (chunked, reason)
    floor = v0["mnbt_unchunked_floor"]
    multi_step = v0.get("multi_step_keeps_floor") and _as_int(explicit, "num_scheduler_steps", 1) > 1
    if chunked and not multi_step:
        out["max_num_batched_tokens"] = (
            v0["mnbt_chunked"], f"vLLM {rel} V0 engine default with chunked prefill: "
                                f"{v0['mnbt_chunked']}")
    else:
        value = max(max_model_len, floor)
        why = "multi-step scheduling" if chunked else "chunked prefill off"
        out["max_num_batched_tokens"] = (
            value, f"vLLM {rel} V0 engine with {why}: max(max_model_len, {floor}) = {value}")
    return out


def _common_defaults(rel: str, facts: ReleaseFacts, engine: str,
                     explicit: dict[str, Any]) -> dict[str, Default]:
    table = ArgTable.for_release(rel)
    out: dict[str, Default] = {
        "gpu_memory_utilization": (
            facts.gpu_memory_utilization_default,
            f"vLLM {rel} default --gpu-memory-utilization: {facts.gpu_memory_utilization_default}"),
    }
    if facts.block_size_cli_default is not None:
        out["block_size"] = (facts.block_size_cli_default,
                             f"vLLM {rel} default --block-size: {facts.block_size_cli_default}")
    else:
        out["block_size"] = (facts.block_size_default,
                             f"vLLM {rel}: --block-size unset, CUDA default "
                             f"{facts.block_size_default} tokens (MLA/hybrid models may differ)")

    if not facts.async_scheduling_flag:
        out["async_scheduling"] = (False, f"vLLM {rel} has no async scheduling "
                                          "(--async-scheduling added in 0.10.0)")
    elif facts.async_scheduling_default == "auto" and engine == "V1":
        blockers = []
        if _as_int(explicit, "pipeline_parallel_size", 1) > 1:
            blockers.append("pipeline parallel > 1")
        backend = explicit.get("distributed_executor_backend")
        if backend not in (None, "mp", "uni", "external_launcher"):
            blockers.append(f"executor backend {backend}")
        if blockers:
            out["async_scheduling"] = (False, f"vLLM {rel}: async scheduling is automatic but "
                                              f"disabled by {', '.join(blockers)}")
        else:
            out["async_scheduling"] = (True, f"vLLM {rel}: async scheduling on automatically "
                                             "(off with pipeline parallel, Ray executor or an "
                                             "unsupported speculative method)")
    else:
        out["async_scheduling"] = (False, f"vLLM {rel} default --async-scheduling: off")

    for dest, label in (("long_prefill_token_threshold", "tokens"),
                        ("max_num_partial_prefills", "prefills"), ("swap_space", "GiB")):
        present, default = _argparse_default(table, dest)
        flag = "--" + dest.replace("_", "-")
        if present:
            out[dest] = (default, f"vLLM {rel} default {flag}: {default} {label}")
        else:
            out[dest] = (None, f"vLLM {rel} has no {flag} flag")
    return out


def scheduler_defaults(
    version: str,
    gpu_name: str,
    gpu_total_gib: float,
    *,
    usage_context: str = "OPENAI_API_SERVER",
    max_model_len: int,
    explicit: dict[str, object] | None = None,
    engine: str | None = None,
) -> dict[str, Default]:
    """Defaults vLLM picks for the scheduler/cache settings the user left unset.

    ``gpu_total_gib`` is the device's total memory as vLLM sees it (e.g. 79.19 for
    an H100 80GB); ``gpu_name`` is matched case-insensitively ('a100', 'h100',
    'gb10'). ``explicit`` maps vLLM dest names (``max_num_seqs``) to values the
    user set; those keys are left out of the result, but the clamps (0.11.1+:
    max_num_batched_tokens <= max_num_seqs x max_model_len, max_num_seqs <=
    max_num_batched_tokens) use them. ``engine`` forces V0/V1 where the release
    has both (default: the release's default engine).

    Returns ``{field: (value, reason)}`` for the fields in SCHEDULER_FIELDS.
    """
    # None means "not set" to vLLM too: those fields still get their defaults.
    explicit = {k: v for k, v in (explicit or {}).items() if v is not None}
    _check_inputs(gpu_name, gpu_total_gib, usage_context, max_model_len)
    facts = release_facts(version)
    rel = facts.release
    eng = _engine_for(facts, engine)
    era = _era(facts.scheduler_era)
    name = gpu_name.lower()

    if eng == "V1" and era.get("v1"):
        out = _v1_defaults(rel, era, name, float(gpu_total_gib), usage_context, max_model_len,
                           explicit)
    else:
        if usage_context not in USAGE_CONTEXTS:
            raise InputError(f"vLLM {rel} has no scheduler defaults for usage context "
                             f"{usage_context!r}", key="usage_context",
                             hint="use OPENAI_API_SERVER or LLM_CLASS")
        label = rel if eng == "V0" else f"{rel} (V1 opt-in has no V1-specific defaults yet)"
        out = _v0_defaults(label, era, max_model_len, explicit)
    out.update(_common_defaults(rel, facts, eng, explicit))
    return {k: out[k] for k in SCHEDULER_FIELDS if k in out and k not in explicit}


# --- KV block size chosen through the attention backend (MLA models) -------------------

_GPU_LABEL = {"hopper": "Hopper", "blackwell": "Blackwell", "other": "this GPU"}


@functools.lru_cache(maxsize=1)
def _attention_backends() -> dict[str, Any]:
    with open(DATA_DIR.parent / "attention_backends.json", encoding="utf-8") as fh:
        return json.load(fh)


def _gpu_family(cc: str) -> str:
    try:
        major = int(str(cc).strip().split(".")[0])
    except ValueError as exc:
        raise InputError(f"compute capability {cc!r} is not of the form '9.0'",
                         key="compute_capability", hint="e.g. '8.0', '9.0', '10.0'") from exc
    return {9: "hopper", 10: "blackwell"}.get(major, "other")


def _cc_norm(cc: str) -> str:
    parts = str(cc).strip().split(".")
    return f"{int(parts[0])}.{int(parts[1]) if len(parts) > 1 and parts[1] else 0}"


def _when_holds(when: dict[str, Any], cc: str, qk_nope_head_dim: int | None,
                kv_cache_dtype: str | None, num_heads: int | None) -> bool:
    if "cc_exact" in when and _cc_norm(cc) != when["cc_exact"]:
        return False
    if "qk_nope_head_dim_in" in when:
        # DeepSeek-V2/V3/R1, Kimi-K2 all have 128; unknown counts as 128 (the common case).
        if (qk_nope_head_dim if qk_nope_head_dim is not None else 128) not in when["qk_nope_head_dim_in"]:
            return False
    if when.get("kv_cache_dtype_fp8") and not str(kv_cache_dtype or "auto").startswith("fp8"):
        return False
    if "num_heads_le" in when and (num_heads is None or num_heads > when["num_heads_le"]):
        return False
    return True


def _apply_explicit(rule: dict[str, Any], explicit: int) -> int:
    if rule["rule"] == "keep":
        return explicit
    if explicit in rule.get("keep_if_in", ()):
        return explicit
    m = rule.get("keep_if_multiple_of")
    if m and explicit % m == 0:
        return explicit
    return rule["value"] if explicit != rule["value"] else explicit


def _mla_choice(era: dict[str, Any], family: str, cc: str, is_sparse: bool,
                qk_nope_head_dim: int | None, kv_cache_dtype: str | None,
                num_heads: int | None) -> dict[str, Any]:
    table = era["sparse"] if is_sparse and "sparse" in era else era["gpus"]
    for cand in table[family]:
        if _when_holds(cand.get("when", {}), cc, qk_nope_head_dim, kv_cache_dtype, num_heads):
            return cand
    return table[family][-1]


def sparse_mla_backend(version: str, compute_capability: str | None, kv_cache_dtype: str | None = None,
                       num_heads: int | None = None) -> str | None:
    """The sparse-MLA attention backend (DeepSeek-V3.2, GLM-5.x) vLLM ``version`` picks on this GPU
    (``data/attention_backends.json``), or None when the GPU or the release's table is unknown."""
    if compute_capability is None:
        return None
    key = version_key(_release(version))
    era = next((e for e in _attention_backends()["eras"]
                if version_key(e["first"]) <= key <= version_key(e["last"])), None)
    if era is None or "sparse" not in era:
        return None
    pick = _mla_choice(era, _gpu_family(compute_capability), compute_capability, True, None, kv_cache_dtype,
                       num_heads)
    return str(pick.get("backend") or "") or None


def default_block_size(version: str, compute_capability: str | None, *, is_mla: bool,
                       explicit: int | None, is_sparse: bool = False,
                       qk_nope_head_dim: int | None = None, kv_cache_dtype: str | None = None,
                       num_heads: int | None = None) -> tuple[int, str]:
    """KV cache block size (tokens per block) vLLM uses on CUDA, with a one-line reason.

    ``version``: any text ``resolve_version`` accepts. ``compute_capability``: '8.0'
    (A100), '9.0' (H100/H200), '10.0' (B200), ... or None when the GPU is unknown.
    ``is_mla``: the model config has ``kv_lora_rank`` (DeepSeek-V2/V3/R1, Kimi-K2, ...).
    ``explicit``: the user's --block-size or None. ``is_sparse``: sparse MLA (hf_config has
    ``index_topk``, e.g. DeepSeek-V3.2). ``qk_nope_head_dim``, ``kv_cache_dtype`` and
    ``num_heads`` (attention heads per rank) refine the Blackwell/FP8/sparse choices.
    Facts and source URLs: ``data/attention_backends.json``. Hybrid attention+Mamba models
    are not covered (vLLM raises their block size to fit the Mamba state).
    """
    rel = _release(version)
    data = _attention_backends()
    if not is_mla:
        if explicit is not None:
            return explicit, f"--block-size {explicit} given (vLLM {rel} keeps it for non-MLA models)"
        return 16, (f"vLLM {rel} default for non-MLA attention on CUDA: 16 "
                    f"({data['non_mla']['source']})")
    key = version_key(rel)
    era = next((e for e in data["eras"]
                if version_key(e["first"]) <= key <= version_key(e["last"])), None)
    if era is None:
        value = explicit if explicit is not None else 16
        return value, (f"vLLM {rel}: MLA backend source not read for this release; "
                       f"{value} assumed")
    where = f"{era['source']} (vLLM {era['source_release']} source, era {era['first']}..{era['last']})"
    if compute_capability is None:
        picks = {fam: _mla_choice(era, fam, fam_cc, is_sparse, qk_nope_head_dim,
                                  kv_cache_dtype, num_heads)
                 for fam, fam_cc in (("hopper", "9.0"), ("blackwell", "10.0"), ("other", "8.0"))}
        values = {(_apply_explicit(p["explicit"], explicit) if explicit is not None
                   else p["block_size"]) for p in picks.values()}
        if len(values) == 1:
            value = values.pop()
            return value, f"vLLM {rel} MLA: {value} on every CUDA GPU family; {where}"
        value = explicit if explicit is not None else 16
        per_gpu = ", ".join(f"{f}: {p['backend']} {p['block_size']}" for f, p in picks.items())
        return value, (f"vLLM {rel} MLA: block size depends on the GPU ({per_gpu}); "
                       f"GPU unknown, {value} assumed")
    family = _gpu_family(compute_capability)
    pick = _mla_choice(era, family, compute_capability, is_sparse, qk_nope_head_dim,
                       kv_cache_dtype, num_heads)
    kind = "sparse MLA" if is_sparse and "sparse" in era else "MLA"
    gpu = f"{_GPU_LABEL[family]} (cc {_cc_norm(compute_capability)})"
    if explicit is not None:
        value = _apply_explicit(pick["explicit"], explicit)
        if value == explicit:
            return value, f"vLLM {rel} {kind} on {gpu}: --block-size {explicit} kept ({pick['backend']}); {where}"
        return value, (f"vLLM {rel} {kind} on {gpu}: --block-size {explicit} overridden to {value} "
                       f"for {pick['backend']}; {where}")
    return pick["block_size"], (f"vLLM {rel} {kind} on {gpu}: {pick['backend']} backend -> block "
                                f"size {pick['block_size']}; {where}")
