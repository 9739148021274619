"""What ``sched-reader compat CONFIG`` prints: each engine's release-check findings as text, JSON or
markdown."""

from __future__ import annotations

import json
from typing import Any

from sched_reader.report.compat_views import md_table


def render_engines(engines: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        doc = {"schema_version": 1, "engines": [
            {**{k: e[k] for k in ("name", "file", "line", "vllm_version")},
             "findings": [f.model_dump() for f in e["findings"]]} for e in engines]}
        return json.dumps(doc, indent=2, ensure_ascii=False)
    if fmt == "markdown":
        rows = [[f"{f.file or ''}:{f.line or ''}", e["name"], f.rule, f.severity, f.message, f.fix or ""]
                for e in engines for f in e["findings"]]
        return md_table(["where", "engine", "rule", "severity", "message", "fix"], rows)
    lines = []
    counts = {"error": 0, "warning": 0, "info": 0}
    for e in engines:
        loc = f"{e['file']}:{e['line']}" if e.get("line") else e["file"]
        lines.append(f"{loc}: engine {e['name']!r} checked against vLLM {e['vllm_version']}")
        if not e["findings"]:
            lines.append("  no findings")
        for f in e["findings"]:
            counts[f.severity] += 1
            where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "")
            key = f" [{f.key}]" if f.key else ""
            lines.append(f"  {where}: {f.severity} {f.rule}{key} {f.message}")
            if f.fix:
                lines.append(f"      fix: {f.fix}")
    lines.append(f"{len(engines)} engine(s): {counts['error']} error(s), {counts['warning']} warning(s), "
                 f"{counts['info']} info")
    return "\n".join(lines)
