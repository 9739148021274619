"""What-if: re-run the diagnosis with flag overrides, and measure what each recommendation would do.

* ``parse_sets(["max-num-batched-tokens=2048", "kv-cache-dtype=fp8"])`` -> flag overrides, applied after
  every flag of the deploy file (``--set`` wins), then the spec is rebuilt with the release's defaults,
  so dependent defaults (e.g. the token budget that follows max-model-len) follow the change.
* ``attach_effects``: each recommendation ``diagnose`` makes is applied the same way and the predicted
  metrics before -> after are attached as ``effect``; a recommendation whose effect does not move its
  target metric the right way (by at least ``MIN_GAIN``) is dropped, and the findings' fix text follows.

Metrics (units in the names): output_throughput (tok/s), mean/p99 TTFT, mean/p99 TPOT, p99 ITL (ms),
kv_tokens (tokens per replica), max_concurrency (max-model-len requests the KV cache holds, x),
concurrency_limit (sequences that run at once after the KV, max-num-seqs and workload limits), starts.
"""

from __future__ import annotations

from typing import Any, Iterable

from sched_reader.errors import InputError
from sched_reader.analyzers.diagnosis import diagnose
from sched_reader.analyzers.pipeline import build_spec
from sched_reader.models.spec_builder import note_shared_gpus, read_engines
from sched_reader.readers.raw import Origin, Setting

MIN_GAIN = 0.01  # a target metric must move >= 1% the right way for a recommendation to be printed

METRICS = ("output_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "p99_itl_ms",
           "kv_tokens", "max_concurrency", "concurrency_limit", "starts")
HIGHER_IS_BETTER = {"output_throughput": True, "mean_ttft_ms": False, "p99_ttft_ms": False, "mean_tpot_ms": False,
                    "p99_tpot_ms": False, "p99_itl_ms": False, "kv_tokens": True, "max_concurrency": True,
                    "concurrency_limit": True, "starts": True}
UNITS = {"output_throughput": "tok/s", "mean_ttft_ms": "ms", "p99_ttft_ms": "ms", "mean_tpot_ms": "ms",
         "p99_tpot_ms": "ms", "p99_itl_ms": "ms", "kv_tokens": "tokens", "max_concurrency": "x",
         "concurrency_limit": "sequences", "starts": "bool"}


def parse_sets(sets: Iterable[str] | None) -> list[tuple[str, str | None]]:
    """``KEY=VALUE`` words -> (flag, value). ``KEY=true`` / ``KEY=false`` set or negate a boolean flag."""
    out: list[tuple[str, str | None]] = []
    for word in sets or []:
        if "=" not in word:
            raise InputError(f"--set {word!r}: expected KEY=VALUE, e.g. --set max-num-batched-tokens=2048")
        key, value = word.split("=", 1)
        key = key.strip().lstrip("-").replace("_", "-")
        if not key:
            raise InputError(f"--set {word!r}: empty key")
        low = value.strip().lower()
        if low in ("true", "on", "yes"):
            out.append((f"--{key}", None))
        elif low in ("false", "off", "no"):
            out.append((f"--no-{key}", None))
        else:
            out.append((f"--{key}", value.strip()))
    return out


def _with_settings(raw: Any, flags: list[tuple[str, str | None]], label: str) -> Any:
    origin = Origin(source="cli-option", key=label)
    extra = [Setting(flag=f, value=v, origin=origin) for f, v in flags]
    return raw.model_copy(update={"settings": list(raw.settings) + extra})


def build(paths: list[str], command_line: list[str] | None, sets: list[tuple[str, str | None]] | None = None,
          usage_context: str | None = None, **kw: Any) -> tuple[list[Any], list[Any]]:
    """(raw engines, specs) as ``build_specs`` makes them, with ``sets`` applied to every engine;
    ``usage_context`` ("LLM_CLASS" for an offline run) replaces each engine's own."""
    raws = read_engines(paths, command_line, usage_context)
    specs = [build_spec(_with_settings(r, sets, "--set") if sets else r, **kw) for r in raws]
    if sets:
        for s in specs:
            _check_sets(s)
    note_shared_gpus(specs)
    return raws, specs


def respec(raw: Any, flags: list[tuple[str, str | None]], **kw: Any) -> Any:
    """One engine rebuilt with ``flags`` applied after its own."""
    return build_spec(_with_settings(raw, flags, "what-if"), **kw)


def _check_sets(spec: Any) -> None:
    for f in spec.findings:
        if f.rule == "SR101" and f.key == "--set":
            raise InputError(f"--set: {f.message}", hint=f.fix or "see `vllm serve --help`")


def metrics(d: Any) -> dict[str, Any]:
    """The predicted metrics of one ``Diagnosis`` (see module docstring for units)."""
    out: dict[str, Any] = {k: None for k in METRICS}
    starts = d.capacity is not None and d.capacity.start_error() is None
    out["starts"] = bool(starts)
    if d.capacity is not None and starts:
        kv = d.capacity.kv_cache
        out["kv_tokens"] = int(kv.tokens) if kv.tokens is not None else None
        out["max_concurrency"] = kv.max_concurrency
    perf = d.performance or {}
    for k in ("output_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms", "p99_itl_ms"):
        v = perf.get(k)
        out[k] = round(float(v), 3) if isinstance(v, (int, float)) else None
    if d.verdict is not None and starts:
        out["concurrency_limit"] = d.verdict.concurrency_limit
    return out


def target_of(bottleneck: str, rec: Any) -> str:
    """The metric a recommendation is meant to improve."""
    if bottleneck == "does_not_start":
        return "starts"
    if rec.flag == "--max-num-batched-tokens":
        try:
            raising = float(rec.suggested) > float(rec.current)
        except ValueError:
            raising = True
        return "mean_ttft_ms" if raising else "p99_itl_ms"
    if rec.flag == "--max-num-seqs":
        return "output_throughput"
    if rec.flag == "--enable-chunked-prefill" or bottleneck == "prefill_stall":
        return "p99_itl_ms"
    if bottleneck == "kv_cache_blocks":
        return "concurrency_limit"
    return "output_throughput"


def rec_flags(rec: Any) -> list[tuple[str, str | None]] | None:
    """The flag change a recommendation stands for (None when it is not a flag change)."""
    if rec.flag == "model":
        return [("--quantization", "fp8")] if "fp8" in rec.suggested.lower() else None
    if not rec.flag.startswith("--"):
        return None
    value = rec.suggested.split()[0]
    if value.lower() in ("on", "true"):          # a boolean flag switched on (--enable-chunked-prefill)
        return [(rec.flag, None)]
    if value.lower() in ("off", "false"):
        return [("--no-" + rec.flag[2:], None)]
    return [(rec.flag, value)]


def improves(metric: str, before: Any, after: Any) -> bool:
    """Whether ``after`` is better than ``before`` on ``metric`` by at least ``MIN_GAIN``."""
    if metric == "starts":
        return bool(after) and not bool(before)
    if before is None or after is None:
        return False
    if HIGHER_IS_BETTER[metric]:
        return after >= before * (1 + MIN_GAIN) if before > 0 else after > before
    return after <= before * (1 - MIN_GAIN)


def effect(before: dict[str, Any], after: dict[str, Any], target: str) -> dict[str, Any]:
    """The ``effect`` object: target metric, before/after of every metric, and whether the target improved."""
    return {
        "target": target,
        "improves": improves(target, before.get(target), after.get(target)),
        "before": before,
        "after": after,
        "units": UNITS,
    }


def attach_effects(raws: list[Any], specs: list[Any], results: list[Any], overrides: dict[str, Any],
                   **kw: Any) -> None:
    """Evaluate every recommendation of every diagnosis; keep those that improve their target metric."""
    for raw, spec, d in zip(raws, specs, results):
        v = d.verdict
        if v is None or not v.recommendations:
            continue
        before = metrics(d)
        kept = []
        for rec in v.recommendations:
            flags = rec_flags(rec)
            if flags is None:
                continue
            try:
                alt = respec(raw, flags, **kw)
                after = metrics(diagnose(alt, overrides))
            except Exception:  # noqa: BLE001 - a change the tool cannot evaluate is not printed as an effect
                continue
            eff = effect(before, after, target_of(v.bottleneck, rec))
            if eff["improves"]:
                kept.append(rec.model_copy(update={"effect": eff}))
        dropped = len(v.recommendations) - len(kept)
        d.verdict = v.model_copy(update={"recommendations": kept})
        d.recommendations_dropped = dropped
        _refresh_fixes(d)


def _refresh_fixes(d: Any) -> None:
    """The capacity findings quote the first recommendation: make them quote the first one kept."""
    recs = d.verdict.recommendations
    out = []
    for f in d.findings:
        if f.rule in ("SR202", "SR203", "SR204"):
            r = recs[0] if recs else None
            f = f.model_copy(update={"fix": f"{r.flag} {r.suggested}: {r.why}" if r else None})
        elif f.rule == "SR201":
            fix = "; ".join(f"{r.flag} {r.suggested}" for r in recs[:3]) or None
            f = f.model_copy(update={"fix": fix})
        out.append(f)
    d.findings = out
    d.spec.findings = out


def compare(raws: list[Any], base_specs: list[Any], specs: list[Any], results: list[Any],
            overrides: dict[str, Any], sets: list[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """For ``--set``: each engine's metrics without the overrides -> with them."""
    out = []
    for base, d in zip(base_specs, results):
        try:
            before = metrics(diagnose(base, overrides))
        except Exception:  # noqa: BLE001 - the unmodified config may not diagnose (e.g. it does not start)
            before = {k: None for k in METRICS}
        after = metrics(d)
        out.append({"set": [f"{f}={v}" if v is not None else f for f, v in sets], "before": before,
                    "after": after, "units": UNITS})
    return out


def effect_line(eff: dict[str, Any]) -> str:
    """``output 1,494 -> 5,210 tok/s, TTFT mean 42.3 -> 12.1 s, ...`` (the metrics that changed)."""
    b, a = eff["before"], eff["after"]
    parts = []
    if b.get("starts") is False and a.get("starts"):
        parts.append("starts (did not)")
    for key, label, scale, unit, fmt in (
        ("output_throughput", "output", 1, "tok/s", "{:,.0f}"),
        ("mean_ttft_ms", "TTFT mean", 1, "ms", "{:,.1f}"),
        ("p99_tpot_ms", "TPOT p99", 1, "ms", "{:,.2f}"),
        ("p99_itl_ms", "ITL p99", 1, "ms", "{:,.2f}"),
        ("kv_tokens", "KV", 1, "tokens", "{:,.0f}"),
        ("concurrency_limit", "concurrency", 1, "seqs", "{:,.0f}"),
    ):
        x, y = b.get(key), a.get(key)
        if y is None or (x is not None and abs((y - x) / x if x else y) < 0.005):
            continue
        if unit == "ms" and max(abs(x or 0), abs(y)) >= 10_000:
            scale, unit, fmt = 1e-3, "s", "{:,.1f}"
        xs = "-" if x is None else fmt.format(x * scale)
        mark = " (target)" if key == eff.get("target") else ""
        parts.append(f"{label} {xs} -> {fmt.format(y * scale)} {unit}{mark}")
    return ", ".join(parts) if parts else "no predicted change"
