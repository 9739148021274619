"""``diagnose --format json``: one object per engine (the spec's JSON plus memory, KV cache, workload,
performance, bottleneck and findings)."""

from __future__ import annotations

from typing import Any

from sched_reader.analyzers.diagnosis import Diagnosis
from sched_reader.report.spec_json import finding_json, spec_json


def diagnosis_json(d: Diagnosis, explain: bool = True) -> dict[str, Any]:
    """One engine's ``diagnose --format json`` object: the spec, memory, KV cache, workload, performance,
    bottleneck and findings (``explain``: with each figure's formula terms)."""
    out = spec_json(d.spec)
    cap = d.capacity.to_json() if d.capacity is not None else {}
    out["memory"] = cap.get("memory")
    out["kv_cache"] = cap.get("kv_cache")
    if explain and "explain" in cap:
        out["memory_explain"] = cap["explain"]
    out["workload"] = d.workload.describe() if d.workload is not None else None
    perf = dict(d.performance) if d.performance else None
    if perf is not None and not explain:
        perf.pop("explain", None)
    out["performance"] = perf
    out["bottleneck"] = d.verdict.model_dump() if d.verdict is not None else None
    out["kv_waste"] = d.kv_waste.model_dump() if d.kv_waste is not None else None
    out["findings"] = [finding_json(f) for f in d.findings]
    out["recommendations"] = out["bottleneck"]["recommendations"] if out["bottleneck"] else []
    if d.what_if is not None:
        out["what_if"] = d.what_if
    return out
