"""Lint result -> SARIF 2.1.0 for GitHub code scanning (the minimum in ci-conventions.md section 3).

* ``tool.driver.rules``: every rule of the registry (sorted by id, so ``ruleIndex`` is stable), with
  ``shortDescription``/``fullDescription``/``help`` texts and ``defaultConfiguration.level``.
  No ``security-severity``: these are configuration findings, not security alerts.
* ``results``: one per finding, with ``ruleId``, ``ruleIndex``, ``level`` (note|warning|error),
  ``message.text`` and one location: ``artifactLocation.uri`` relative to the working directory (the
  repository root in CI), ``region.startLine`` >= 1. ``partialFingerprints`` are left to
  ``github/codeql-action/upload-sarif``, which computes them from the file.
* No timestamps, no absolute paths of the machine (unless a file lies outside the working directory),
  keys in a fixed order: the same run gives the same bytes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sched_reader.findings import Finding
from sched_reader.report.findings_text import LintReport

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"

LEVELS = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}
_MAX_TEXT = 1024  # GitHub's limit on description and help texts


def _clip(text: str, limit: int = _MAX_TEXT) -> str:
    text = text.strip() or "-"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def artifact_uri(file: str, base: str | Path | None = None) -> str | None:
    """A repository-relative URI (``deploy/llama.yaml``) for ``file``; a ``file://`` URI when the file
    lies outside ``base`` (default: the working directory); None for a pseudo-file like ``<command line>``."""
    if not file or (file.startswith("<") and file.endswith(">")):
        return None
    base_path = Path(base if base is not None else os.getcwd()).resolve()
    p = Path(file)
    absolute = p if p.is_absolute() else (base_path / p)
    absolute = Path(os.path.normpath(absolute))
    try:
        rel = absolute.relative_to(base_path)
    except ValueError:
        return absolute.as_uri()
    return quote(os.fsencode(rel.as_posix()), safe="/")  # the name's bytes: a non-UTF-8 name is %XX


def rule_descriptors() -> list[dict[str, Any]]:
    """``tool.driver.rules`` from the registry."""
    from sched_reader.analyzers.rule_catalog import all_rules

    out = []
    for r in all_rules():
        help_md = f"**{r.name}**: {r.full}\n\n*Fix:* {r.fix}"
        out.append({
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": _clip(r.short)},
            "fullDescription": {"text": _clip(r.full)},
            "defaultConfiguration": {"level": LEVELS[r.default_severity]},
            "help": {"text": _clip(r.fix), "markdown": _clip(help_md)},
            "properties": {
                "tags": list(r.tags),
                "precision": "high" if r.id.startswith("SR1") or r.id.startswith("SR0") else "medium",
                "problem.severity": PROBLEM_SEVERITY[r.default_severity],
            },
        })
    return out


def _result(f: Finding, index: dict[str, int], base: str | Path | None) -> dict[str, Any]:
    text = f.message.strip() or f.rule
    if f.fix:
        text += f" (fix: {f.fix})"
    res: dict[str, Any] = {"ruleId": f.rule}
    if f.rule in index:
        res["ruleIndex"] = index[f.rule]
    res["level"] = LEVELS[f.severity]
    res["message"] = {"text": text}
    uri = artifact_uri(f.file or "", base)
    if uri is not None:
        loc: dict[str, Any] = {"physicalLocation": {
            "artifactLocation": {"uri": uri},
            "region": {"startLine": max(1, int(f.line or 1))},
        }}
    else:
        loc = {"logicalLocations": [{"name": f.file or "<input>", "kind": "module"}]}
    res["locations"] = [loc]
    if f.key:
        res["properties"] = {"key": f.key}
    return res


def sarif_log(report: LintReport, version: str, *, base: str | Path | None = None,
              category: str = "sched-reader/") -> dict[str, Any]:
    """The SARIF log object (a dict, keys in a fixed order)."""
    rules = rule_descriptors()
    index = {r["id"]: i for i, r in enumerate(rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {
                "name": "sched-reader",
                "semanticVersion": version,
                "rules": rules,
            }},
            "automationDetails": {"id": category},
            "results": [_result(f, index, base) for f in report.findings()],
            "columnKind": "unicodeCodePoints",
        }],
    }


def render_sarif(report: LintReport, version: str, *, base: str | Path | None = None) -> str:
    text = json.dumps(sarif_log(report, version, base=base), indent=2, ensure_ascii=False) + "\n"
    # a non-UTF-8 file name inside a message: its undecodable bytes as \xNN, never an encoding error
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
