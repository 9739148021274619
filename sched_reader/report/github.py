"""Lint result -> GitHub Actions workflow commands (annotations), plus a step-summary table.

    ::group::deploy/llama.yaml
    ::error file=deploy/llama.yaml,line=19,title=SR101 unknown-flag::unknown flag ... (fix: remove it)
    ::endgroup::
    sched-reader: Found 1 error, ...

Levels: error -> ``error``, warning -> ``warning``, info -> ``notice``. Within a file annotations come
by severity (errors first), then line, because GitHub shows at most 10 errors and 10 warnings per step
(50 per job); :func:`step_summary` renders every finding as a markdown table for ``$GITHUB_STEP_SUMMARY``
so nothing is lost past that limit.

Escaping follows actions/toolkit ``command.ts``: the message (``escapeData``) maps ``%`` ``\\r``
``\\n`` to ``%25`` ``%0D`` ``%0A``; property values (``escapeProperty``) also map ``:`` and ``,`` to
``%3A`` and ``%2C``.
"""

from __future__ import annotations

from itertools import groupby

from sched_reader.findings import SEVERITY_RANK, Finding
from sched_reader.report.findings_text import LintReport, location, rule_name, summary_line

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    """One ``::level file=..,line=..,title=..::message`` command."""
    props = []
    if f.file and not (f.file.startswith("<") and f.file.endswith(">")):
        props.append(f"file={escape_property(f.file)}")
        if f.line:
            props.append(f"line={int(f.line)}")
    name = rule_name(f.rule)
    props.append(f"title={escape_property(f'{f.rule} {name}' if name else f.rule)}")
    text = f.message.strip() or f.rule
    if f.fix:
        text += f" (fix: {f.fix})"
    return f"::{LEVELS[f.severity]} {','.join(props)}::{escape_data(text)}"


def _annotation_order(f: Finding) -> tuple:
    return (f.file or "", -SEVERITY_RANK[f.severity], f.line or 0, f.rule, f.key or "", f.message)


def render_github(report: LintReport) -> str:
    """Annotations grouped per file, skipped-file notes, then a one-line summary."""
    out: list[str] = []
    findings = sorted(report.findings(), key=_annotation_order)
    for file, group in groupby(findings, key=lambda f: f.file or ""):
        out.append(f"::group::{escape_data(file or '<input>')}")
        out.extend(annotation(f) for f in group)
        out.append("::endgroup::")
    for fr in report.files:
        if fr.skipped is not None:
            out.append(f"sched-reader: skipped {fr.file}: {fr.skipped}")
    for note in report.notes:
        out.append(f"sched-reader: note: {note}")
    for _path, message in report.failures:  # an input that could not be read: the job must show why
        out.append(f"::error title=sched-reader could not read an input::{escape_data(message)}")
    out.append(f"sched-reader: {summary_line(report)}")
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def step_summary(report: LintReport) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: the summary line and a table of every finding."""
    lines = ["### sched-reader lint", "", summary_line(report), ""]
    findings = report.findings()
    if findings:
        lines += ["| severity | rule | location | message | fix |", "|---|---|---|---|---|"]
        for f in sorted(findings, key=_annotation_order):
            name = rule_name(f.rule)
            rule = f"{f.rule} {name}" if name else f.rule
            fails = " (fails)" if report.fails(f) else ""
            lines.append(
                f"| {f.severity}{fails} | {_cell(rule)} | `{_cell(location(f))}` | {_cell(f.message)} | {_cell(f.fix or '')} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"
