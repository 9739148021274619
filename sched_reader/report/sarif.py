"""Lint result -> SARIF 2.1.0 for GitHub code scanning (the minimum in ci-conventions.md section 3).

* ``tool.driver.rules``: every rule of the registry (sorted by id, so ``ruleIndex`` is stable), with
  ``shortDescription``/``fullDescription``/``help`` texts and ``defaultConfiguration.level``.
  No ``security-severity``: these are configuration findings, not security alerts.
* ``results``: one per finding that has a file in the repository, with ``ruleId``, ``ruleIndex``,
  ``level`` (note|warning|error), ``message.text``, one *physical* location (``artifactLocation.uri``
  relative to the repository root -- the nearest directory above the working directory holding
  ``.git``, else the working directory -- and ``region.startLine`` >= 1), and
  ``partialFingerprints["schedReader/v1"]``: the content fingerprint of ``analyzers/baseline.py``
  (stable across line shifts; GitHub's own ``primaryLocationLineHash`` is added by upload-sarif).
* Findings that code scanning cannot place -- on a command line after ``--``, on stdin, or in a file
  outside the repository -- are not results (GitHub rejects or mis-files results without a physical
  location, and a ``file:///`` URI outside the checkout): they become
  ``invocations[0].toolExecutionNotifications`` with ``associatedRule``, so they stay visible in the
  log. Inputs that could not be read are error notifications and ``executionSuccessful`` is false.
* Each rule has ``helpUri``: its section of the published ``docs/rules.md`` (``rule_docs.help_uri``).
* No timestamps, no absolute paths of the machine, keys in a fixed order: the same run gives the same
  bytes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sched_reader.analyzers.baseline import base_dir, FINGERPRINT_KEY, fingerprints, repo_path
from sched_reader.analyzers.rule_docs import docs_url, help_uri, rules
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
    """A repository-relative URI (``deploy/llama.yaml``) for ``file``; None for a pseudo-file like
    ``<command line>`` or a file outside ``base`` (default: the repository root of the working directory)."""
    rel = repo_path(file, base_dir() if base is None else Path(base))
    return None if rel is None else quote(os.fsencode(rel), safe="/")  # a non-UTF-8 name: its bytes as %XX


def rule_descriptors() -> list[dict[str, Any]]:
    """``tool.driver.rules`` from the registry."""
    out = []
    for r in rules():
        help_md = f"**{r.name}**: {r.full}\n\n*Fix:* {r.fix}"
        out.append({
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": _clip(r.short)},
            "fullDescription": {"text": _clip(r.full)},
            "helpUri": help_uri(r.id),
            "defaultConfiguration": {"level": LEVELS[r.default_severity]},
            "help": {"text": _clip(r.fix), "markdown": _clip(help_md)},
            "properties": {
                "tags": list(r.tags),
                "precision": "high" if r.id.startswith("SR1") or r.id.startswith("SR0") else "medium",
                "problem.severity": PROBLEM_SEVERITY[r.default_severity],
            },
        })
    return out


def _text(f: Finding) -> str:
    text = f.message.strip() or f.rule
    if f.fix:
        text += f" (fix: {f.fix})"
    return text


def _result(f: Finding, index: dict[str, int], uri: str, fingerprint: str) -> dict[str, Any]:
    res: dict[str, Any] = {"ruleId": f.rule}
    if f.rule in index:
        res["ruleIndex"] = index[f.rule]
    res["level"] = LEVELS[f.severity]
    res["message"] = {"text": _text(f)}
    res["locations"] = [{"physicalLocation": {
        "artifactLocation": {"uri": uri},
        "region": {"startLine": max(1, int(f.line or 1))},
    }}]
    res["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint}
    if f.key:
        res["properties"] = {"key": f.key}
    return res


def _notification(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    where = f.file or "<input>"
    if f.line:
        where += f":{f.line}"
    rule: dict[str, Any] = {"id": f.rule}
    if f.rule in index:
        rule["index"] = index[f.rule]
    return {"level": LEVELS[f.severity], "message": {"text": f"{where}: {_text(f)}"}, "associatedRule": rule}


def sarif_log(report: LintReport, version: str, *, base: str | Path | None = None,
              category: str = "sched-reader/") -> dict[str, Any]:
    """The SARIF log object (a dict, keys in a fixed order)."""
    root = base_dir() if base is None else Path(base)
    rules = rule_descriptors()
    index = {r["id"]: i for i, r in enumerate(rules)}
    findings = report.findings()
    fps = fingerprints(findings, root)
    results: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for f in findings:
        uri = artifact_uri(f.file or "", root)
        if uri is None:
            notes.append(_notification(f, index))
        else:
            results.append(_result(f, index, uri, fps[f]))
    for path, message in report.failures:
        notes.append({"level": "error", "message": {"text": message}})
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "sched-reader",
            "semanticVersion": version,
            "informationUri": docs_url(),
            "rules": rules,
        }},
        "automationDetails": {"id": category},
        "invocations": [{"executionSuccessful": not report.failures,
                         **({"toolExecutionNotifications": notes} if notes else {})}],
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(report: LintReport, version: str, *, base: str | Path | None = None) -> str:
    text = json.dumps(sarif_log(report, version, base=base), indent=2, ensure_ascii=False) + "\n"
    # a non-UTF-8 file name inside a message: its undecodable bytes as \xNN, never an encoding error
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
