"""The text and JSON forms of a lint run, and the helpers the other lint formatters share.

The run is ``analyzers.lint.LintReport`` (frozen dataclasses); every formatter (text and JSON here,
``sarif``, ``github``, ``junit``) is a pure function of it, so the same run always renders the same bytes: findings are
sorted and de-duplicated, and nothing depends on the clock or the machine.

Text form (one finding per line, ``file:line:`` first so editors and terminals can jump to it)::

    deploy/llama.yaml:19: error SR101 unknown-flag: unknown flag --disable-log-requests in vLLM 0.19.0 ...
        fix: remove it
    ...
    Found 1 error, 1 warning, 2 info in 1 file (1 engine); 1 at or above --fail-on error.
"""

from __future__ import annotations

import json
from typing import Any

from sched_reader.analyzers.lint import EngineResult, FileResult, LintReport
from sched_reader.findings import Finding, finding_order, sort_unique
from sched_reader.report.spec_json import finding_json
from sched_reader.analyzers.rule_catalog import get_rule

__all__ = ["EngineResult", "FileResult", "LintReport", "location", "render_json", "render_text", "rule_name",
           "sort_unique", "summary_line"]

LINT_SCHEMA_VERSION = 1


def rule_name(rule_id: str) -> str:
    r = get_rule(rule_id)
    return r.name if r is not None else ""


def location(f: Finding) -> str:
    file = f.file or "<input>"
    return f"{file}:{f.line}" if f.line else file


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 or word == "info" else "s")


def summary_line(report: LintReport) -> str:
    """``Found 1 error, 2 warnings, 0 info in 3 files (4 engines); ...``"""
    c = report.counts()
    nfiles = len(report.analyzed_files())
    where = f"in {_plural(nfiles, 'file')} ({_plural(report.engine_count(), 'engine')})"
    if not any(c.values()):
        head = f"No findings {where}"
    else:
        head = f"Found {_plural(c['error'], 'error')}, {_plural(c['warning'], 'warning')}, {c['info']} info {where}"
    tail = []
    n_sup = len(report.suppressed())
    if n_sup:
        tail.append(f"{n_sup} suppressed by ignore directives")
    skipped = len(report.files) - nfiles
    if skipped:
        tail.append(f"{_plural(skipped, 'file')} skipped")
    if report.failures:
        tail.append(f"{_plural(len(report.failures), 'input')} could not be read (exit 2)")
    if report.fail_on == "never":
        tail.append("--fail-on never")
    else:
        tail.append(f"{len(report.failing())} at or above --fail-on {report.fail_on}")
    return head + "; " + "; ".join(tail) + "."


def render_text(report: LintReport) -> str:
    """Plain text: one line per finding (with its fix below), notes, then a summary line."""
    out: list[str] = []
    for f in report.findings():
        name = rule_name(f.rule)
        label = f"{f.rule} {name}" if name and not f.rule.endswith("." + name) else f.rule
        out.append(f"{location(f)}: {f.severity} {label}: {f.message}")
        if f.fix:
            out.append(f"    fix: {f.fix}")
    if out:
        out.append("")
    for fr in report.files:
        if fr.skipped is not None:
            out.append(f"note: skipped {fr.file}: {fr.skipped}")
    for note in report.notes:
        out.append(f"note: {note}")
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


# -- JSON ------------------------------------------------------------------------------------------


def _finding_json(f: Finding, engine: str | None, report: LintReport) -> dict[str, Any]:
    return finding_json(f, name=rule_name(f.rule) or None, engine=engine, fails=report.fails(f))


def render_json(report: LintReport, version: str) -> str:
    """A versioned JSON document (``schema_version`` 1) with the same finding fields as SARIF."""
    flat: list[tuple[tuple, dict[str, Any]]] = []
    files = []
    for fr in report.files:
        engines = []
        for e in fr.engines:
            engines.append({
                "name": e.name,
                "line": e.line,
                "model": e.model or None,
                "vllm_version": e.vllm_version,
                "capacity_checked": e.capacity_checked,
                "capacity_scope": e.capacity_scope or None,
                "findings": [_finding_json(f, e.name, report) for f in e.findings],
                "suppressed": [_finding_json(f, e.name, report) for f in e.suppressed],
            })
            flat.extend((finding_order(f) + (e.name,), _finding_json(f, e.name, report)) for f in e.findings)
        flat.extend((finding_order(f) + ("",), _finding_json(f, None, report)) for f in fr.findings)
        files.append({
            "file": fr.file,
            "skipped": fr.skipped,
            "findings": [_finding_json(f, None, report) for f in fr.findings],
            "suppressed": [_finding_json(f, None, report) for f in fr.suppressed],
            "engines": engines,
        })
    c = report.counts()
    doc = {
        "schema_version": LINT_SCHEMA_VERSION,
        "tool": {"name": "sched-reader", "version": version},
        "fail_on": report.fail_on,
        "vllm": report.vllm,
        "exit_code": report.exit_code(),
        "summary": {
            "files": len(report.analyzed_files()),
            "skipped_files": len(report.files) - len(report.analyzed_files()),
            "engines": report.engine_count(),
            "errors": c["error"],
            "warnings": c["warning"],
            "info": c["info"],
            "failing": len(report.failing()),
            "suppressed": len(report.suppressed()),
        },
        "findings": [d for _, d in sorted(flat, key=lambda kv: kv[0])],
        "files": files,
        "notes": list(report.notes),
        "errors": [{"file": path, "message": message} for path, message in report.failures],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
