"""The body of ``sched-reader compat`` (imported lazily by ``sched_reader.cli.cmd_compat``)."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from sched_reader.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, SchedReaderError

Finding = Any  # sched_reader.findings.Finding, imported lazily (pydantic is slow to import)

FORMATS = ("text", "json", "markdown")


def _err(message: str) -> int:
    sys.stderr.write(f"sched-reader: error: {message}\n")
    return EXIT_ERROR


def run(
    configs: list[str],
    *,
    vllm: str | None,
    fmt: str,
    diff: tuple[str, str] | None,
    flag: str | None,
    list_releases: bool,
    gpu: str | None = None,
    out: Callable[[str], None] | None = None,
) -> int:
    """Run the command; returns the exit code. Never raises for bad input."""
    out = out or (lambda text: sys.stdout.write(text if text.endswith("\n") else text + "\n"))
    fmt = (fmt or "text").lower()
    if fmt not in FORMATS:
        return _err(f"--format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    try:
        from sched_reader.cli.common import split_inputs

        files, command_line = split_inputs(configs)
    except ImportError:  # pragma: no cover - the shared CLI helpers are always there
        files, command_line = list(configs), None
    modes = sum(bool(x) for x in (diff, flag, list_releases))
    if modes > 1:
        return _err("use one of --diff, --flag, --list at a time")
    if modes and (files or command_line):
        return _err("--diff, --flag and --list take no config files")
    try:
        if list_releases:
            out(render_list(fmt))
            return EXIT_OK
        if diff:
            out(render_release_diff(diff[0], diff[1], fmt, gpu=gpu))
            return EXIT_OK
        if flag:
            out(render_flag(flag, fmt, gpu=gpu))
            return EXIT_OK
        if not files and not command_line:
            if not vllm:
                return _err("give --vllm X (feature matrix), config files to check, --diff, --flag or --list "
                            "(see `sched-reader compat --help`)")
            out(render_matrix(vllm, fmt))
            return EXIT_OK
        engines = check_configs(files, command_line, vllm=vllm, gpu=gpu)
    except SchedReaderError as err:
        return _err(str(err))
    except (OSError, ValueError) as err:
        return _err(f"{type(err).__name__}: {err}")
    except Exception as err:  # noqa: BLE001 - last line of defence: never a traceback
        return _err(f"internal error: {type(err).__name__}: {err} (please report this with the input)")
    out(render_engines(engines, fmt))
    failed = any(f.severity == "error" for e in engines for f in e["findings"])
    return EXIT_FINDINGS if failed else EXIT_OK


# ------------------------------------------------------------------------------------------------
# Versions
# ------------------------------------------------------------------------------------------------

def resolve(text: str) -> tuple[str, str | None]:
    """(release, warning) for a version as written; raises UnknownVersionError."""
    from sched_reader.compat.releases import resolve_version

    res = resolve_version(text)
    return res.release, res.warning


# ------------------------------------------------------------------------------------------------
# --list
# ------------------------------------------------------------------------------------------------

def list_rows() -> list[dict[str, Any]]:
    from sched_reader.compat import matrix
    from sched_reader.compat.defaults import release_facts
    from sched_reader.compat.releases import known_releases, release_info

    rows = []
    for v in known_releases():
        info = release_info(v)
        facts = release_facts(v)
        m = matrix.entry(v) or {}
        rows.append({
            "version": v,
            "engine": facts.engine,
            "commit": info.get("commit"),
            "wheel_build_date": info.get("wheel_build_date"),
            "num_flags": info.get("num_flags"),
            "matrix": "approximate" if m.get("approximate") else ("yes" if m.get("matrix") else "none"),
        })
    return rows


def render_list(fmt: str) -> str:
    rows = list_rows()
    if fmt == "json":
        return json.dumps({"schema_version": 1, "releases": rows}, indent=2)
    head = ["release", "engine", "flags", "built", "matrix", "source commit"]
    body = [[r["version"], r["engine"], str(r["num_flags"]), r["wheel_build_date"] or "", r["matrix"],
             (r["commit"] or "")[:12]] for r in rows]
    if fmt == "markdown":
        return _md_table(head, body)
    return _text_table(head, body) + "\nmatrix: approximate = upstream main snapshot 00712b3 (no doc for that release)"


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
    from sched_reader.compat import argtable
    from sched_reader.compat.history import (SERVE_FIELDS, default_changes, flag_dest, flag_spans,
                                             render_flag_history, serve_context, suggest_flags)
    from sched_reader.compat.releases import newest, oldest
    from sched_reader.errors import InputError

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
    from sched_reader.compat.history import diff_releases, render_diff, serve_context

    (ra, wa), (rb, wb) = resolve(a), resolve(b)
    d = diff_releases(ra, rb, serve_context(gpu))
    warnings = [w for w in (wa, wb) if w]
    if fmt == "json":
        doc = {"schema_version": 2, **d.to_json(), "warnings": warnings}
        return json.dumps(doc, indent=2, default=str)
    return render_diff(d, fmt, warnings)


# ------------------------------------------------------------------------------------------------
# Matrix
# ------------------------------------------------------------------------------------------------

def render_matrix(version_text: str, fmt: str) -> str:
    from sched_reader.compat import matrix as mx

    release, warning = resolve(version_text)
    m = mx.for_release(release)
    if m is None:
        note = mx.no_matrix_note(release) or "no compatibility matrix"
        if fmt == "json":
            return json.dumps({"schema_version": 1, "vllm_version": release, "requested": version_text,
                               "warning": warning, "matrix": None, "note": note}, indent=2)
        return f"vLLM {release}: {note}"
    if fmt == "json":
        return json.dumps(matrix_json(m, version_text, warning), indent=2, ensure_ascii=False)
    keys = m.feature_keys
    labels = [f["label"] for f in m.features]
    ff_rows = []
    for i, r in enumerate(keys):
        row = [labels[i]]
        for j, c in enumerate(keys):
            cell = m.pair(r, c) if j <= i else None
            row.append(_sym(cell) if j <= i else "")
        ff_rows.append(row)
    hw_rows = [[labels[i]] + [_sym(m.on_hardware(r, h)) for h in m.hardware_keys]
               for i, r in enumerate(keys) if r in m.data["fh"]]
    head = [f"vLLM {release} compatibility matrix"]
    if warning:
        head.append(f"warning: {warning}")
    if m.approximate:
        head.append(f"APPROXIMATE matrix: {m.note}")
    head.append(f"source: {m.source_url}")
    legend = "✅ compatible  ❌ not compatible  🟠 partial  ❔ unknown  (* see footnotes below)"
    notes = _cell_notes(m)
    if fmt == "markdown":
        parts = ["\n".join(f"> {h}" for h in head), "### Feature x Feature",
                 _md_table(["Feature", *labels], ff_rows), "### Feature x Hardware",
                 _md_table(["Feature", *[h["label"] for h in m.hardware]], hw_rows), legend, *notes]
        return "\n\n".join(parts)
    return _text_matrix(head, labels, ff_rows, [h["label"] for h in m.hardware], hw_rows, legend, notes)


def _sym(cell: dict[str, Any] | None) -> str:
    from sched_reader.compat.matrix import SYMBOL

    if not cell:
        return ""
    s = SYMBOL[cell["s"]]
    if cell.get("notes"):
        s += "*"
    return s


def _cell_notes(m: Any) -> list[str]:
    notes: list[str] = []
    seen: set[str] = set()
    for r, cols in list(m.data["ff"].items()) + list(m.data["fh"].items()):
        for c, cell in cols.items():
            for n in cell.get("notes", []):
                if n not in seen:
                    seen.add(n)
                    notes.append(f"* {n}")
    links = []
    for r, cols in m.data["ff"].items():
        for c, cell in cols.items():
            if cell.get("link"):
                links.append(f"{m.label(r)} x {m.label(c)}: {cell['link']}")
    for r, cols in m.data["fh"].items():
        for c, cell in cols.items():
            if cell.get("link"):
                links.append(f"{m.label(r)} on {m.label(c)}: {cell['link']}")
    return notes + (["tracking issues:"] + [f"  {x}" for x in links] if links else [])


def matrix_json(m: Any, requested: str, warning: str | None) -> dict[str, Any]:
    ff = []
    keys = m.feature_keys
    for i, r in enumerate(keys):
        for c in keys[: i + 1]:
            cell = m.pair(r, c)
            if cell:
                ff.append({"a": r, "b": c, "status": cell["s"], "link": cell.get("link"),
                           "notes": cell.get("notes", [])})
    fh = []
    for r in keys:
        for h in m.hardware_keys:
            cell = m.on_hardware(r, h)
            if cell:
                fh.append({"feature": r, "hardware": h, "status": cell["s"], "link": cell.get("link"),
                           "notes": cell.get("notes", [])})
    return {
        "schema_version": 1,
        "vllm_version": m.version,
        "requested": requested,
        "warning": warning,
        "approximate": m.approximate,
        "note": m.note,
        "source_url": m.source_url,
        "features": m.features,
        "hardware": m.hardware,
        "feature_x_feature": ff,
        "feature_x_hardware": fh,
    }


def _text_matrix(head: list[str], labels: list[str], ff_rows: list[list[str]], hw_labels: list[str],
                 hw_rows: list[list[str]], legend: str, notes: list[str]) -> str:
    """The matrix as aligned text tables (a light grid renderer: rich's costs ~0.1 s per call)."""
    parts = [*head, "", "Feature x Feature", _grid(["Feature", *labels], ff_rows), "",
             "Feature x Hardware", _grid(["Feature", *hw_labels], hw_rows), "", legend, *notes]
    return "\n".join(parts)


def _width(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 0 if unicodedata.combining(ch) else 1
               for ch in text)


def _grid(head: list[str], rows: list[list[str]]) -> str:
    """Box-drawn table; first column left-aligned, others centred; emoji counted two cells wide."""
    widths = [max(_width(str(r[i])) if i < len(r) else 0 for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        out = []
        for i, w in enumerate(widths):
            c = str(cells[i]) if i < len(cells) else ""
            pad = w - _width(c)
            out.append(c + " " * pad if i == 0 else " " * (pad // 2) + c + " " * (pad - pad // 2))
        return "│ " + " │ ".join(out) + " │"

    rule = lambda a, b, c: a + b.join("─" * (w + 2) for w in widths) + c  # noqa: E731
    return "\n".join([rule("┌", "┬", "┐"), line(head), rule("├", "┼", "┤"), *[line(r) for r in rows],
                      rule("└", "┴", "┘")])


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(esc(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt_row = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt_row(head), fmt_row(["-" * w for w in widths]), *[fmt_row(r) for r in rows]])


# ------------------------------------------------------------------------------------------------
# Config checks
# ------------------------------------------------------------------------------------------------

def read_raws(files: list[str], command_line: list[str] | None) -> list[Any]:
    """Raw engines from files and/or a command line (the spec builder's reader entry point)."""
    from sched_reader.models.spec_builder import read_engines

    return read_engines(files, command_line)


def check_engine(raw: Any, *, vllm: str | None, gpu: str | None) -> dict[str, Any]:
    """All compat findings for one raw engine (flag level + full spec when it can be built)."""
    from sched_reader.compat import checks
    from sched_reader.compat.releases import newest
    from sched_reader.findings import Finding
    from sched_reader.readers.raw import Origin

    findings: list[Finding] = []
    engine_origin = Origin(file=raw.file, line=raw.line, source="inferred")
    hint = raw.vllm_version
    written_for = None
    if hint is not None:
        try:
            written_for, hint_warning = resolve(str(hint.value))
        except SchedReaderError:
            written_for, hint_warning = None, f"cannot read the vLLM version {hint.value!r}"
        if hint_warning and not vllm:
            findings.append(Finding(rule="SR110", severity="warning", message=hint_warning,
                                    file=hint.origin.file, line=hint.origin.line, key=hint.origin.key,
                                    fix="pin an exact released version (vllm/vllm-openai:vX.Y.Z)"))
    if vllm:
        target, warning = resolve(vllm)
        if warning:
            findings.append(Finding(rule="SR110", severity="warning", message=warning, file=raw.file,
                                    line=raw.line, fix="pass an exact release to --vllm"))
    elif written_for is not None:
        target = written_for
    else:
        target = newest()
        findings.append(Finding(rule="SR110", severity="info",
                                message=f"no vLLM version stated; checked against the newest known release {target}",
                                file=raw.file, line=raw.line,
                                fix="pin the image tag (vllm/vllm-openai:vX.Y.Z) or pass --vllm X.Y.Z"))
    raw_findings = checks.check_raw(raw, target)
    findings.extend(raw_findings)
    explicit, origins = checks.explicit_values(raw, target)
    spec, spec_findings = _spec(raw, target, gpu, raw_findings)
    if written_for is not None and vllm and written_for != target:
        where = hint.origin if hint is not None else engine_origin
        kw: dict[str, Any] = {}
        if spec is not None and spec.effective is not None:
            kw = {"gpu_name": spec.hardware.gpu.name, "gpu_total_gib": spec.hardware.gpu.cuda_total_gib,
                  "max_model_len": spec.effective.max_model_len, "gpu_assumed": spec.hardware.gpu_inferred}
        findings.extend(checks.check_default_changes(written_for, target, explicit, where, **kw))
    if spec is None:  # no full spec: start-up rules and matrix on the explicit values
        from sched_reader.compat.defaults import release_facts

        values = checks.values_from_explicit(target, explicit, engine=release_facts(target).engine.lower())
        findings.extend(checks.check_values(values, target, origins=origins, fallback=engine_origin))
    else:
        taken = {(f.rule, f.file, f.line) for f in raw_findings}
        findings.extend(f for f in spec_findings if (f.rule, f.file, f.line) not in taken)
    return {
        "name": raw.name,
        "file": raw.file,
        "line": raw.line,
        "vllm_version": target,
        "findings": checks.sort_findings(findings),
    }


def _spec(raw: Any, target: str, gpu: str | None, raw_findings: list[Finding]) -> tuple[Any, list[Finding]]:
    """The full engine spec and its findings (the lead's builder runs check_spec), or (None, [])."""
    try:
        from sched_reader.models.spec_builder import build_spec
    except ImportError:
        return None, []
    try:
        spec = build_spec(raw, gpu=gpu, vllm=target, strict_model=False)
    except SchedReaderError:
        if any(f.severity == "error" for f in raw_findings):
            return None, []  # the flag-level findings already say what is wrong with this engine
        raise
    return spec, list(spec.findings)


def check_configs(files: list[str], command_line: list[str] | None, *, vllm: str | None,
                  gpu: str | None = None) -> list[dict[str, Any]]:
    if vllm:
        resolve(vllm)  # an unreadable --vllm is a usage error (exit 2) before any file is read
    return [check_engine(r, vllm=vllm, gpu=gpu) for r in read_raws(files, command_line)]


def render_engines(engines: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        doc = {"schema_version": 1, "engines": [
            {**{k: e[k] for k in ("name", "file", "line", "vllm_version")},
             "findings": [f.model_dump() for f in e["findings"]]} for e in engines]}
        return json.dumps(doc, indent=2, ensure_ascii=False)
    if fmt == "markdown":
        rows = [[f"{f.file or ''}:{f.line or ''}", e["name"], f.rule, f.severity, f.message, f.fix or ""]
                for e in engines for f in e["findings"]]
        return _md_table(["where", "engine", "rule", "severity", "message", "fix"], rows)
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
