"""Engine spec -> the JSON element every command shares (``{"schema_version": 1, "engines": [...]}``)."""

from __future__ import annotations

from typing import Any
import json

from sched_reader.findings import SEVERITY_RANK, Finding
from sched_reader.models.engine_spec import EngineSpec
from sched_reader.origin import Origin

SCHEMA_VERSION = 1


def origin_json(o: Origin | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {"file": o.file, "line": o.line, "source": o.source, "key": o.key}


_NO_NAME = object()


def finding_json(f: Finding, *, name: Any = _NO_NAME, **extra: Any) -> dict[str, Any]:
    """A finding as JSON: rule, (name,) severity, message, file, line, key, fix, then ``extra`` fields."""
    out: dict[str, Any] = {"rule": f.rule}
    if name is not _NO_NAME:
        out["name"] = name
    out.update(severity=f.severity, message=f.message, file=f.file, line=f.line, key=f.key, fix=f.fix)
    out.update(extra)
    return out


def spec_json(spec: EngineSpec) -> dict[str, Any]:
    """The engine element: identity, release, hardware, explicit args with origins, effective config."""
    hw = spec.hardware
    eff = spec.effective
    return {
        "name": spec.name,
        "file": spec.file,
        "line": spec.line,
        "role": spec.role,
        "model": {
            "name": spec.model_name or None,
            "architecture": spec.arch.id if spec.arch else None,
            "checkpoint_quantization": spec.checkpoint_quantization,
            "origin": origin_json(spec.model_origin),
        },
        "vllm_version": spec.vllm_version,
        "vllm_version_requested": spec.vllm_version_requested,
        "vllm_version_origin": origin_json(spec.vllm_version_origin),
        "hardware": {
            "gpu": hw.gpu.id,
            "gpu_name": hw.gpu.name,
            "count": hw.count,
            "gpu_inferred": hw.gpu_inferred,
            "count_inferred": hw.count_inferred,
            "gpu_origin": origin_json(hw.gpu_origin),
            "count_origin": origin_json(hw.count_origin),
            "accelerator": hw.accelerator,
            "modelled": hw.modelled,
        },
        "args": {
            dest: {
                "flag": fv.flag,
                "value": fv.value,
                "origin": origin_json(fv.origin),
                "overridden": [origin_json(o) for o in fv.overridden],
            }
            for dest, fv in sorted(spec.args.items())
        },
        "config": eff.model_dump(exclude={"reasons"}) if eff else None,
        "config_reasons": dict(sorted(eff.reasons.items())) if eff else None,
        "findings": [finding_json(f) for f in spec.findings],
        "unresolved": [
            {"text": u.text, "reason": u.reason, "origin": origin_json(u.origin)} for u in spec.unresolved
        ],
        "notes": list(spec.notes),
    }


def envelope(engines: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The shared top-level object."""
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    out.update(extra)
    out["engines"] = engines
    return out


def worst_severity(specs: list[EngineSpec]) -> int:
    """Highest severity rank among all findings (-1 when none)."""
    ranks = [SEVERITY_RANK[f.severity] for s in specs for f in s.findings]
    return max(ranks, default=-1)


def dumps(obj: Any) -> str:
    """Deterministic JSON text (sorted keys only where the data is a plain mapping we built)."""
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n"
