"""What ``sched-reader compat --list`` and ``compat --vllm X`` print: the known releases and a release's
feature compatibility matrix, as text, JSON or markdown (plus the table helpers the other compat views use).

Kept free of pydantic at import time (``compat --vllm X`` answers fast): findings are read by attribute.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from sched_reader.report.layout import output_width, wrap_text
from sched_reader.compat import matrix
from sched_reader.compat.defaults import release_facts
from sched_reader.compat.matrix import SYMBOL
from sched_reader.compat.releases import known_releases, release_info, resolve_version

FORMATS = ("text", "json", "markdown")


def resolve(text: str) -> tuple[str, str | None]:
    """(release, warning) for a version as written; raises UnknownVersionError."""
    res = resolve_version(text)
    return res.release, res.warning


# ------------------------------------------------------------------------------------------------
# --list
# ------------------------------------------------------------------------------------------------

def list_rows() -> list[dict[str, Any]]:
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
        return md_table(head, body)
    return text_table(head, body) + "\nmatrix: approximate = upstream main snapshot 00712b3 (no doc for that release)"


# ------------------------------------------------------------------------------------------------
# Matrix
# ------------------------------------------------------------------------------------------------

def render_matrix(version_text: str, fmt: str) -> str:
    release, warning = resolve(version_text)
    m = matrix.for_release(release)
    if m is None:
        note = matrix.no_matrix_note(release) or "no compatibility matrix"
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
                 md_table(["Feature", *labels], ff_rows), "### Feature x Hardware",
                 md_table(["Feature", *[h["label"] for h in m.hardware]], hw_rows), legend, *notes]
        return "\n\n".join(parts)
    return _text_matrix(head, labels, ff_rows, [h["label"] for h in m.hardware], hw_rows, legend, notes)


def _sym(cell: dict[str, Any] | None) -> str:
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
    """The matrix as aligned text tables (a light grid renderer: rich's costs ~0.1 s per call), or, when
    the grid is wider than the output (``report.layout.output_width``), as one wrapped line per feature
    listing its partners grouped by status."""
    width = output_width()
    ff_grid = _grid(["Feature", *labels], ff_rows)
    hw_grid = _grid(["Feature", *hw_labels], hw_rows)
    if max(_width(x) for x in (ff_grid + "\n" + hw_grid).split("\n")) <= width:
        parts = [*head, "", "Feature x Feature", ff_grid, "", "Feature x Hardware", hw_grid, "", legend, *notes]
        return "\n".join(parts)
    n = len(labels)
    full = [[(ff_rows[i][j + 1] if j <= i else ff_rows[j][i + 1]) for j in range(n)] for i in range(n)]
    ff = _grouped([r[0] for r in ff_rows], labels, full, skip_self=True)
    hw = _grouped([r[0] for r in hw_rows], hw_labels, [r[1:] for r in hw_rows])
    parts = [*head, "", "Feature x Feature (each feature with the others)", *ff, "",
             "Feature x Hardware", *hw, "", legend, *notes]
    return wrap_text("\n".join(parts), width)


_STATUS_ORDER = ("❌", "🟠", "❔", "✅")


def _grouped(row_labels: list[str], col_labels: list[str], cells: list[list[str]],
             skip_self: bool = False) -> list[str]:
    """One line per row: ``LABEL  ❌ a, b; 🟠* c; ✅ d, e`` (columns grouped by symbol, worst first)."""
    pad = max(_width(x) for x in row_labels) + 2
    out = []
    for i, (label, row) in enumerate(zip(row_labels, cells)):
        groups: dict[str, list[str]] = {}
        for j, sym in enumerate(row):
            if not sym or (skip_self and j == i):
                continue
            base = sym.rstrip("*")
            name = col_labels[j] + ("*" if sym.endswith("*") else "")
            groups.setdefault(base, []).append(name)
        order = sorted(groups, key=lambda b: _STATUS_ORDER.index(b) if b in _STATUS_ORDER else 9)
        text = "; ".join(f"{b} {', '.join(groups[b])}" for b in order) or "(no entries)"
        out.append(label + " " * (pad - _width(label)) + text)
    return out


def _width(text: str) -> int:
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


def md_table(head: list[str], rows: list[list[str]]) -> str:
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(esc(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt_row = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt_row(head), fmt_row(["-" * w for w in widths]), *[fmt_row(r) for r in rows]])
