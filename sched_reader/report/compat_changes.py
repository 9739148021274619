"""What ``sched-reader compat --flag`` and ``--diff`` print: one flag across releases, the changelog
between two releases (text, JSON or markdown; the data comes from ``compat.history``)."""

from __future__ import annotations

import json

from sched_reader.compat import argtable
from sched_reader.compat.history import (SERVE_FIELDS, FlagSpan, ReleaseDiff, ServeContext, default_changes,
                                         diff_releases, flag_dest, flag_spans, serve_context, suggest_flags)
from sched_reader.compat.releases import newest, oldest
from sched_reader.errors import InputError
from sched_reader.report.compat_views import resolve


# ------------------------------------------------------------------------------------------------
# --flag
# ------------------------------------------------------------------------------------------------

def _flag_name(name: str) -> str:
    """``max_num_seqs`` / ``--max_num_seqs`` -> ``--max-num-seqs`` (single-dash aliases kept)."""
    flag = name.strip()
    if "=" in flag and flag.startswith("-"):
        flag = flag.split("=", 1)[0]
    if not flag.startswith("-"):
        flag = "--" + flag
    return "--" + flag.lstrip("-").replace("_", "-") if flag.startswith("--") else flag


def render_flag(name: str, fmt: str, gpu: str | None = None) -> str:
    """One flag across every release; raises InputError (exit 2, with "did you mean") when no
    release has it. Scheduler flags also show the effective `vllm serve` default on ``gpu``."""
    flag = _flag_name(name)
    dest = flag_dest(flag)
    if dest is None:
        close = suggest_flags(flag)
        hint = ("did you mean " + ", ".join(close) + "?") if close else \
            "see `vllm serve --help` of your release; sched-reader compat --list shows the known releases"
        raise InputError(f"{flag} is not a `vllm serve` flag in any known release ({oldest()} .. {newest()})",
                         key="--flag", hint=hint)
    serve = serve_context(gpu) if dest in SERVE_FIELDS else None
    spans = flag_spans(flag, serve)
    renamed = argtable.renamed_to(flag)
    if fmt == "json":
        return json.dumps({"schema_version": 1, "flag": flag, "dest": dest, "renamed_to": renamed,
                           "serve_context": serve.to_json() if serve else None,
                           "spans": [s.to_json() for s in spans],
                           "default_changes": default_changes(spans)}, indent=2, default=str)
    text = render_flag_history(flag, spans, renamed, serve)
    if fmt == "markdown":
        return "```\n" + text + "\n```"
    return text


# ------------------------------------------------------------------------------------------------
# --diff
# ------------------------------------------------------------------------------------------------

def render_release_diff(a: str, b: str, fmt: str, gpu: str | None = None) -> str:
    """Changelog between two releases; the effective serve defaults are resolved on ``gpu``
    (default H100 SXM5 80GB)."""
    (ra, wa), (rb, wb) = resolve(a), resolve(b)
    d = diff_releases(ra, rb, serve_context(gpu))
    warnings = [w for w in (wa, wb) if w]
    if fmt == "json":
        doc = {"schema_version": 2, **d.to_json(), "warnings": warnings}
        return json.dumps(doc, indent=2, default=str)
    return render_diff(d, fmt, warnings)


# ------------------------------------------------------------------------------------------------
# Release diff and flag history (data from compat.history)
# ------------------------------------------------------------------------------------------------

def render_diff(d: ReleaseDiff, fmt: str = "text", warnings: list[str] | None = None) -> str:
    """Changelog as text or markdown: the summary line first, then one section per kind of change."""
    md = fmt == "markdown"
    quote = "> " if md else ""
    lines = [f"## {d.summary_line()}" if md else d.summary_line()]
    if d.serve is not None:
        lines.append(f"{quote}Serve defaults: effective `vllm serve` values for {d.serve.describe()}")
        if d.serve.note:
            lines.append(f"{quote}note: {d.serve.note}")
    lines += [f"{quote}warning: {w}" for w in (warnings or [])]
    if d.is_empty():
        lines.append("no flag, default or matrix changes")
    for title, qualifier, rows in d.sections():
        if md:
            lines += ["", f"### {title}" + (f" - {qualifier}" if qualifier else ""), ""]
            for text, note in rows:
                lines.append(f"- `{text}`" if text.startswith("--") and " " not in text else f"- {text}")
                if note:
                    lines.append(f"  - {note}")
        else:
            lines.append(f"{title}" + (f" [{qualifier}]" if qualifier else "") + ":")
            for text, note in rows:
                lines.append(f"  {text}")
                if note:
                    lines.append(f"      {note}")
    if d.matrix_note:
        lines += ["", f"Note: {d.matrix_note}"] if md else [f"Note: {d.matrix_note}"]
    return "\n".join(lines)


def _range(s: FlagSpan) -> str:
    return s.first if s.first == s.last else f"{s.first} .. {s.last}"


def render_flag_history(flag: str, spans: list[FlagSpan], renamed: str | None = None,
                        serve: ServeContext | None = None) -> str:
    """Readable history, one line per span; a changed default says what it was."""
    if not any(s.present for s in spans):
        return f"{flag}: not a `vllm serve` flag in any known release ({spans[0].first} .. {spans[-1].last})"
    scheduler = serve is not None and any(s.serve_default is not None for s in spans)
    head = f"{flag} across vLLM releases:"
    if scheduler:
        head = f"{flag} across vLLM releases (`vllm serve` default: effective value for {serve.describe()}):"
    lines = [head]
    prev: FlagSpan | None = None
    for s in spans:
        if not s.present:
            lines.append(f"  {_range(s):<18} absent")
            continue
        was = f" (was {prev.default!r})" if prev is not None and prev.default != s.default else ""
        parts = [f"type {s.type}", f"default {s.default!r}{was}"]
        if scheduler:
            sw = (f" (was {prev.serve_default})"
                  if prev is not None and prev.serve_default != s.serve_default else "")
            parts.append(f"`vllm serve` default {s.serve_default}{sw}")
        if s.choices:
            parts.append("choices " + ", ".join(str(c) for c in s.choices))
        if s.aliases:
            parts.append("aliases " + ", ".join(s.aliases))
        if s.deprecated:
            parts.append("DEPRECATED")
        lines.append(f"  {_range(s):<18} " + "; ".join(parts))
        prev = s
    if renamed:
        lines.append(f"  later carried by {renamed}")
    return "\n".join(lines)
