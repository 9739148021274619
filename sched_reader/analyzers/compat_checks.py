"""Version-aware checks of a vLLM engine config: stable rule ids SR101-SR110 (see docs/rules.md).

* :func:`check_raw` -- flag-level checks on the settings as written (SR101 unknown flag, SR102 bad
  choice, SR103 wrong type / impossible value, SR104 deprecated, SR108 abbreviation, SR109 unknown
  speculative method), against one release's flag table.
* :func:`check_spec` -- engine-level checks on a built ``EngineSpec`` (SR104, SR105 feature matrix,
  SR106 vLLM start-up rules, SR109), using its explicit args and effective config.
* :func:`check_values` -- SR105 + SR106 on a plain dict of engine values (used when no full spec
  can be built).
* :func:`check_default_changes` -- SR107, defaults that differ between the release a config was
  written for and the target release.
"""

from __future__ import annotations

import difflib
import json
from typing import Any, Iterable, Mapping

from sched_reader.analyzers.rule_catalog import severity_of
from sched_reader.compat import argtable as at
from sched_reader.compat import matrix, rules
from sched_reader.compat.argtable import ArgTable, coerce, effective_default, is_deprecated
from sched_reader.compat.defaults import scheduler_defaults
from sched_reader.compat.releases import version_key
from sched_reader.findings import Finding, sort_unique as sort_findings
from sched_reader.limits import MAX_NESTING, MAX_SUGGESTIONS, json_depth
from sched_reader.origin import Origin
from sched_reader.readers.raw import RawEngine, Setting

# Flags every ``vllm serve`` front end accepts (OpenAI server args). They are in each release's flag
# table; this list is only a safety net so that a gap in the extracted table never turns one of
# them into an "unknown flag".
FRONTEND_FLAGS = frozenset({
    "--host", "--port", "--served-model-name", "--api-key", "--chat-template", "--uvicorn-log-level",
    "--allow-credentials", "--allowed-origins", "--allowed-methods", "--allowed-headers", "--lora-modules",
    "--response-role", "--ssl-keyfile", "--ssl-certfile", "--ssl-ca-certs", "--ssl-cert-reqs", "--root-path",
    "--middleware", "--max-log-len", "--enable-auto-tool-choice", "--tool-call-parser", "--disable-log-stats",
    "--return-tokens-as-token-ids", "--chat-template-content-format", "--disable-fastapi-docs",
    "--enable-prompt-tokens-details", "--enable-server-load-tracking", "--trust-remote-code",
})

_MODEL_DESTS = frozenset({"model", "model_tag"})

# SR107 looks at these settings only: the ones that change what the scheduler and KV cache do.
SCHEDULING_DESTS = (
    "max_num_seqs", "max_num_batched_tokens", "gpu_memory_utilization", "enable_chunked_prefill",
    "enable_prefix_caching", "block_size", "async_scheduling", "kv_cache_dtype", "swap_space",
    "max_model_len", "enforce_eager", "max_seq_len_to_capture", "num_scheduler_steps",
    "long_prefill_token_threshold", "max_num_partial_prefills", "scheduling_policy", "preemption_mode",
    "max_cudagraph_capture_size", "cuda_graph_sizes", "prefix_caching_hash_algo", "scheduler_delay_factor",
)

# --------------------------------------------------------------------------------------------------
# Engine values (the variables start-up rules and feature conditions read)
# --------------------------------------------------------------------------------------------------

def _defaults(table: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rec in table.records():
        value = rec.default
        if value is None and rec.has_config_default:
            value = rec.config_default
        if isinstance(value, dict):  # {"expr": ...}: not statically known
            continue
        out.setdefault(rec.dest, value)
    return out


def _spec_dict(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value) if json_depth(value) <= MAX_NESTING else None
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _add_speculative(values: dict[str, Any], explicit: Mapping[str, Any], effective_spec: Any = None) -> None:
    cfg = dict(_spec_dict(explicit.get("speculative_config")) or {})
    if isinstance(effective_spec, dict):
        for k, v in effective_spec.items():
            cfg.setdefault(k, v)
    legacy_model = explicit.get("speculative_model")
    if legacy_model and "model" not in cfg:
        cfg["model"] = legacy_model
    if explicit.get("num_speculative_tokens") is not None and "num_speculative_tokens" not in cfg:
        cfg["num_speculative_tokens"] = explicit.get("num_speculative_tokens")
    for key in ("ngram_prompt_lookup_min", "ngram_prompt_lookup_max"):
        if explicit.get(key) is not None:
            cfg.setdefault(key.replace("ngram_", ""), explicit[key])
    values["spec_enabled"] = bool(cfg.get("method") or cfg.get("model"))
    method = cfg.get("method")
    if method is None and str(cfg.get("model") or "") in ("[ngram]", "ngram"):
        method = "ngram"
    values["spec_method"] = method
    values["spec_num_tokens"] = cfg.get("num_speculative_tokens")
    for k, v in cfg.items():
        values[f"spec.{k}"] = v


def values_from_explicit(
    version: str,
    explicit: Mapping[str, Any],
    *,
    gpu: Any = None,
    engine: str | None = None,
) -> dict[str, Any]:
    """Engine values from the release's argparse defaults + explicit settings (no effective config)."""
    values = _defaults(ArgTable.for_release(version))
    values.update({k: v for k, v in explicit.items()})
    values["engine"] = engine
    values["platform"] = matrix.platform_of(gpu)
    values["gpu_compute_capability"] = matrix.compute_capability(gpu)
    _add_speculative(values, explicit)
    return values


def engine_values(spec: Any) -> dict[str, Any]:
    """Engine values of a built spec: defaults < explicit args < effective config (+ derived)."""
    explicit = {dest: fv.value for dest, fv in spec.args.items()}
    gpu = spec.hardware.gpu if spec.hardware is not None and not spec.hardware.gpu_inferred else None
    eff = spec.effective
    values = values_from_explicit(spec.vllm_version, explicit, gpu=gpu, engine=eff.engine if eff else None)
    if eff is not None:
        reasons = eff.reasons or {}
        for name, value in eff.model_dump(exclude={"reasons", "speculative", "vllm_version"}).items():
            reason = str(reasons.get(name, ""))
            if name not in explicit and ("assumed" in reason or reason.startswith("unknown")):
                values[name] = None  # a guess, not a fact about this config: rules must not fire on it
                continue
            values[name] = value
        _add_speculative(values, explicit, eff.speculative)
    return values


# --------------------------------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------------------------------

_VAR_DESTS = {
    "spec_enabled": ("speculative_config", "speculative_model"),
    "spec_method": ("speculative_config", "speculative_model"),
    "spec_num_tokens": ("speculative_config", "num_speculative_tokens"),
    "engine": (),
    "platform": (),
    "gpu_compute_capability": (),
}


def _dests_for(var: str) -> tuple[str, ...]:
    if var in _VAR_DESTS:
        return _VAR_DESTS[var]
    if var.startswith("spec."):
        return ("speculative_config",)
    return (var,)


def _locate(variables: Iterable[str], origins: Mapping[str, Origin], fallback: Origin) -> Origin:
    """The origin of the first explicitly set setting the condition read (else the engine)."""
    found = []
    for var in variables:
        for dest in _dests_for(var):
            if dest in origins:
                found.append(origins[dest])
    if not found:
        return fallback
    return sorted(found, key=lambda o: (o.file or "", o.line or 0))[-1]


# --------------------------------------------------------------------------------------------------
# SR105 / SR106 on values
# --------------------------------------------------------------------------------------------------

def _feature_origin(key: str, conds: Mapping[str, Any], origins: Mapping[str, Origin]) -> Origin | None:
    when = conds.get(key, {}).get("when")
    if when is None:
        return None
    for var in sorted(rules.variables_of(when)):
        for dest in _dests_for(var):
            if dest in origins:
                return origins[dest]
    return None


def _cell_detail(cell: Mapping[str, Any]) -> str:
    parts = []
    if cell.get("notes"):
        parts.append(" ".join(cell["notes"]))
    if cell.get("link"):
        parts.append(f"tracking: {cell['link']}")
    return ("; " + "; ".join(parts)) if parts else ""


def check_values(
    values: Mapping[str, Any],
    version: str,
    *,
    origins: Mapping[str, Origin] | None = None,
    fallback: Origin | None = None,
    hardware: str | None = None,
) -> list[Finding]:
    """SR105 (feature matrix + documented incompatibilities) and SR106 (start-up rules).

    ``origins`` maps dest -> Origin of explicit settings; ``fallback`` locates findings about
    defaults; ``hardware`` is the matrix hardware column of the engine's GPU (None: not checked).
    """
    origins = origins or {}
    fallback = fallback or Origin()
    out: list[Finding] = []

    def finding(rule: str, severity: str, message: str, where: Origin, fix: str | None) -> Finding:
        return Finding(rule=rule, severity=severity, message=message, file=where.file or fallback.file,
                       line=where.line if where.file else fallback.line, key=where.key, fix=fix)

    # SR106: vLLM start-up rules
    for hit in rules.check(values, version):
        where = _locate(hit.variables, origins, fallback)
        rule_id = f"SR106.{hit.rule_id}"
        out.append(finding(
            rule_id, severity_of(rule_id),
            f"vLLM {version} refuses to start ({hit.exception or 'error'} in {hit.where}): {hit.message}",
            where, hit.fix,
        ))

    # SR105: feature matrix
    conds = rules.feature_conditions()
    on = [k for k, c in conds.items() if c.get("when") is not None and rules.evaluate(c["when"], values) is True]
    m = matrix.for_release(version)
    if m is not None:
        approx = f" (approximate: {m.note})" if m.approximate else ""
        keys = [k for k in m.feature_keys if k in on]
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                cell = m.pair(a, b)
                if cell is None or cell["s"] not in ("no", "partial"):
                    continue
                oa, ob = _feature_origin(a, conds, origins), _feature_origin(b, conds, origins)
                cands = [o for o in (oa, ob) if o is not None]
                where = sorted(cands, key=lambda o: (o.file or "", o.line or 0))[-1] if cands else fallback
                word = "not compatible" if cell["s"] == "no" else "only partially compatible"
                out.append(finding(
                    "SR105", "warning" if cell["s"] == "no" else "info",
                    f"vLLM {version}'s compatibility matrix marks {m.label(a)} x {m.label(b)} as {word}"
                    f" ({conds[a].get('describe') or a}; {conds[b].get('describe') or b}){_cell_detail(cell)}{approx}",
                    where,
                    f"turn off {m.label(a)} or {m.label(b)}, or check the matrix: {m.source_url}",
                ))
        if hardware:
            for k in keys:
                cell = m.on_hardware(k, hardware)
                if cell is None or cell["s"] not in ("no", "partial"):
                    continue
                where = _feature_origin(k, conds, origins) or fallback
                word = "not supported" if cell["s"] == "no" else "only partially supported"
                out.append(finding(
                    "SR105", "warning" if cell["s"] == "no" else "info",
                    f"vLLM {version}'s compatibility matrix marks {m.label(k)} as {word} on {m.label(hardware)} GPUs"
                    f" ({conds[k].get('describe') or k}){_cell_detail(cell)}{approx}",
                    where,
                    f"turn off {m.label(k)} on this hardware",
                ))
    for doc in rules.documented(version):
        if all(f in on for f in doc["features"]):
            cands = [o for o in (_feature_origin(f, conds, origins) for f in doc["features"]) if o is not None]
            where = sorted(cands, key=lambda o: (o.file or "", o.line or 0))[-1] if cands else fallback
            out.append(finding(
                "SR105", "warning",
                f"vLLM {version} docs: {doc['text']}",
                where,
                "drop --speculative-config or use --pipeline-parallel-size 1",
            ))
    return out


# --------------------------------------------------------------------------------------------------
# SR109: speculative method
# --------------------------------------------------------------------------------------------------

def _method_history(method: str) -> tuple[str | None, str | None]:
    """(first, last) release whose SpeculativeConfig.method accepts ``method``."""
    first = last = None
    for entry in rules.load()["spec_methods"]["per_version"]:
        if entry["methods"] and method in entry["methods"]:
            for r in entry["versions"]:
                a, _, b = r.partition("..")
                first = first or a
                last = b or a
    return first, last


def _short_list(items: list[str], n: int = 12) -> str:
    shown = ", ".join(items[:n])
    return shown + (f", ... ({len(items) - n} more)" if len(items) > n else "")


def check_spec_method(method: Any, version: str, where: Origin) -> Finding | None:
    """SR109 when ``method`` is not a ``SpeculativeConfig.method`` value of ``version``."""
    if method is None:
        return None
    known = rules.spec_methods(version)
    if not known or method in known:
        return None
    first, last = _method_history(str(method))
    if first and version_key(version) < version_key(first):
        hist, fix = f"; added in {first}", f"upgrade to vLLM >= {first}"
    elif last and version_key(version) > version_key(last):
        hist, fix = f"; last accepted in {last}", "pick a method this release knows"
    else:
        hist, fix = "", None
    close = difflib.get_close_matches(str(method), known, n=1, cutoff=0.6)
    if fix is None:
        fix = f"did you mean {close[0]!r}?" if close else f"use one of: {_short_list(known)}"
    return Finding(
        rule="SR109", severity="error",
        message=f"unknown speculative method {method!r} in vLLM {version}{hist}; known: {_short_list(known)}",
        file=where.file, line=where.line, key=where.key, fix=fix,
    )


# --------------------------------------------------------------------------------------------------
# check_spec
# --------------------------------------------------------------------------------------------------

def check_spec(spec: Any) -> list[Finding]:
    """Version checks of a built ``EngineSpec``: SR104, SR105, SR106, SR109 (sorted)."""
    version = spec.vllm_version
    table = ArgTable.for_release(version)
    origins = {dest: fv.origin for dest, fv in spec.args.items()}
    fallback = Origin(file=spec.file, line=spec.line, source="inferred")
    out: list[Finding] = []
    for dest, fv in sorted(spec.args.items()):
        rec = table.record_for_dest(dest)
        if rec is not None and is_deprecated(rec):
            out.append(_deprecated_finding(rec, fv.flag, version, fv.origin))
    values = engine_values(spec)
    hw = None
    if spec.hardware is not None and not spec.hardware.gpu_inferred:
        hw = matrix.hardware_column(spec.hardware.gpu)
    out.extend(check_values(values, version, origins=origins, fallback=fallback, hardware=hw))
    spec_origin = origins.get("speculative_config") or origins.get("speculative_model") or fallback
    f = check_spec_method(values.get("spec_method"), version, spec_origin)
    if f is not None:
        out.append(f)
    return sort_findings(out)


def _deprecated_finding(rec: Any, written: str, version: str, origin: Origin) -> Finding:
    text = str(rec.deprecated)
    shown = "" if text == "deprecated=True" else f": {text.strip()}"
    gone = None
    try:
        gone = at.removed_in(rec.flag)
    except Exception:  # noqa: BLE001 - history is a refinement only
        gone = None
    fix = f"stop using {rec.flag}" + (f" (removed in {gone})" if gone else "")
    return Finding(rule="SR104", severity="warning",
                   message=f"{written} is deprecated in vLLM {version}{shown}",
                   file=origin.file, line=origin.line, key=origin.key or written, fix=fix)


# --------------------------------------------------------------------------------------------------
# check_raw
# --------------------------------------------------------------------------------------------------

def _unknown(table: Any, s: Setting, version: str, suggest: bool = True) -> Finding:
    """SR101; ``suggest`` False skips the did-you-mean search (~1-2 ms a flag, see ``MAX_SUGGESTIONS``)."""
    name = s.flag.split("=", 1)[0]
    canonical = "--" + name.lstrip("-").split(".", 1)[0].replace("_", "-")
    first, last = at.first_seen(canonical), at.last_seen(canonical)
    suggestions = [x for x in table.did_you_mean(name) if x.startswith("--") or not name.startswith("--")
                   ] if suggest else []
    hist, fix = "", (f"did you mean {suggestions[0]}?" if suggestions else "remove it")
    if last is not None and version_key(last) < version_key(version):
        renamed = at.renamed_to(canonical)
        gone = at.removed_in(canonical)
        hist = f"; removed in {gone}" if gone else f"; last in {last}"
        fix = f"use {renamed}" if renamed else (f"remove it (did you mean {suggestions[0]}?)" if suggestions else "remove it")
    elif first is not None and version_key(first) > version_key(version):
        hist = f"; added in {first}"
        fix = f"upgrade to vLLM >= {first}, or remove it"
    return Finding(rule="SR101", severity="error", message=f"unknown flag {name} in vLLM {version}{hist}",
                   file=s.origin.file, line=s.origin.line, key=s.origin.key or name, fix=fix)


def _value_finding(rec: Any, s: Setting, version: str, err: ValueError) -> Finding:
    text = str(err)
    choice = "must be one of" in text
    fix = None
    if choice:
        static = [str(c) for c in (rec.choices or rec.valid_values or ()) if not isinstance(c, dict)]
        close = difflib.get_close_matches(str(s.value), static, n=1, cutoff=0.5)
        fix = f"did you mean {close[0]!r}?" if close else f"use one of: {', '.join(static)}"
    return Finding(rule="SR102" if choice else "SR103", severity="error",
                   message=f"{text} (vLLM {version})", file=s.origin.file, line=s.origin.line,
                   key=s.origin.key or s.flag, fix=fix or f"give {rec.flag} a valid value")


def explicit_values(raw: RawEngine, version: str) -> tuple[dict[str, Any], dict[str, Origin]]:
    """Typed explicit values (by dest) and their origins, skipping settings that do not parse."""
    table = ArgTable.for_release(version)
    values: dict[str, Any] = {}
    origins: dict[str, Origin] = {}
    for s in raw.settings:
        match = table.lookup(s.flag)
        if match is None or match.record is None or match.record.dest in _MODEL_DESTS:
            continue
        rec = match.record
        try:
            if rec.is_bool and s.value is None:
                value: Any = not match.negated
            else:
                value = coerce(rec, s.value)
                if rec.is_bool and match.negated and isinstance(value, bool):
                    value = not value
        except ValueError:
            continue
        if match.subkey:
            base = values.get(rec.dest) if isinstance(values.get(rec.dest), dict) else {}
            value = {**base, match.subkey: value}
        values[rec.dest] = value
        origins[rec.dest] = s.origin
    return values, origins


def check_raw(raw: RawEngine, version: str) -> list[Finding]:
    """Flag-level checks of the settings as written, against ``version``'s flag table (sorted).

    SR101 unknown flag (with did-you-mean and add/remove history), SR102 value outside the choices,
    SR103 wrong type / impossible value, SR104 deprecated flag, SR108 abbreviated flag (error when
    ambiguous), SR109 unknown speculative method.
    """
    table = ArgTable.for_release(version)
    out: list[Finding] = []
    unknown = 0
    for s in raw.settings:
        name = s.flag.split("=", 1)[0]
        match = table.lookup(s.flag)
        if match is None:
            if name.replace("_", "-") in FRONTEND_FLAGS:
                continue
            out.append(_unknown(table, s, version, suggest=unknown < MAX_SUGGESTIONS))
            unknown += 1
            continue
        if match.record is None:
            out.append(Finding(
                rule="SR108", severity="error",
                message=f"{name} is an ambiguous abbreviation in vLLM {version}: it matches "
                        + ", ".join(match.ambiguous[:6]),
                file=s.origin.file, line=s.origin.line, key=s.origin.key or name,
                fix=f"write the full flag name, e.g. {match.ambiguous[0]}",
            ))
            continue
        rec = match.record
        if match.via == "prefix":
            out.append(Finding(
                rule="SR108", severity="warning",
                message=f"{name} is an abbreviation of {match.canonical}; argparse accepts it in vLLM {version} "
                        "only while no other flag starts the same way",
                file=s.origin.file, line=s.origin.line, key=s.origin.key or name,
                fix=f"write {match.canonical}",
            ))
        if rec.dest in _MODEL_DESTS or rec.positional:
            continue
        if is_deprecated(rec):
            out.append(_deprecated_finding(rec, name, version, s.origin))
        if match.subkey:
            continue  # --json-flag.key value: the nested value is vLLM's to check
        if rec.is_bool and s.value is None:
            continue
        if s.value is None and not rec.is_bool and rec.nargs not in ("?", "*"):
            out.append(Finding(rule="SR103", severity="error",
                               message=f"{name} needs a value in vLLM {version}",
                               file=s.origin.file, line=s.origin.line, key=s.origin.key or name,
                               fix=f"give {rec.flag} a value"))
            continue
        try:
            value = coerce(rec, s.value)
        except ValueError as err:
            out.append(_value_finding(rec, s, version, err))
            continue
        if rec.dest == "speculative_config":
            cfg = _spec_dict(value)
            if cfg is not None:
                f = check_spec_method(cfg.get("method"), version, s.origin)
                if f is not None:
                    out.append(f)
    return sort_findings(out)


# --------------------------------------------------------------------------------------------------
# SR107: defaults that changed between releases
# --------------------------------------------------------------------------------------------------

def default_changes(old: str, new: str, dests: Iterable[str] = SCHEDULING_DESTS) -> list[tuple[str, str, Any, Any]]:
    """``[(dest, flag, old_default, new_default)]`` for flags present in both releases."""
    a, b = ArgTable.for_release(old), ArgTable.for_release(new)
    out = []
    for dest in dests:
        ra, rb = a.record_for_dest(dest), b.record_for_dest(dest)
        if ra is None or rb is None:
            continue
        da, db = effective_default(ra), effective_default(rb)
        if isinstance(da, dict) or isinstance(db, dict) or da == db:
            continue
        out.append((dest, rb.flag, da, db))
    return out


def _fmt_default(value: Any) -> str:
    return "decided at start-up" if value is None else repr(value)


def check_default_changes(
    written_for: str,
    target: str,
    explicit: Iterable[str],
    where: Origin,
    *,
    gpu_name: str | None = None,
    gpu_total_gib: float | None = None,
    max_model_len: int | None = None,
    gpu_assumed: bool = False,
) -> list[Finding]:
    """SR107 for each scheduling default that differs between ``written_for`` and ``target`` and that
    the config does not set explicitly.

    With a GPU (name, total GiB) and max_model_len, compares the values vLLM actually resolves
    (``compat.defaults.scheduler_defaults``: engine generation, usage context and GPU tier included);
    otherwise the flag tables' defaults.
    """
    if written_for == target:
        return []
    explicit = set(explicit)
    changes: dict[str, tuple[str, Any, Any, str]] = {}
    for dest, flag, old, new in default_changes(written_for, target):
        changes[dest] = (flag, old, new, "")
    if gpu_name and gpu_total_gib and max_model_len:
        a = scheduler_defaults(written_for, gpu_name, gpu_total_gib, max_model_len=max_model_len, explicit={})
        b = scheduler_defaults(target, gpu_name, gpu_total_gib, max_model_len=max_model_len, explicit={})
        table = ArgTable.for_release(target)
        for dest in sorted(set(a) & set(b)):
            (old, _), (new, why) = a[dest], b[dest]
            if old is None or new is None or old == new:
                continue
            rec = table.record_for_dest(dest)
            flag = rec.flag if rec is not None else "--" + dest.replace("_", "-")
            shown = f"{gpu_name} (assumed: the config names no GPU)" if gpu_assumed else gpu_name
            changes[dest] = (flag, old, new, f" on {shown} ({why})")
    out = []
    for dest in sorted(changes):
        if dest in explicit:
            continue
        flag, old, new, ctx = changes[dest]
        out.append(Finding(
            rule="SR107", severity="info",
            message=f"{flag} is not set: its default changes from {_fmt_default(old)} in vLLM {written_for} "
                    f"(the release this config names) to {_fmt_default(new)} in {target}{ctx}",
            file=where.file, line=where.line, key=where.key,
            fix=f"set {flag} explicitly to keep the {written_for} behaviour",
        ))
    return out
