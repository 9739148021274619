"""``sched-reader lesson`` as text: the claim table, a verdict summary and, with --explain, each claim's
derivation."""

from __future__ import annotations

from typing import Any
from sched_reader.report.layout import table_lines



def _fmt_input(v: Any) -> str:
    if isinstance(v, float):
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:,.4g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def claim_table(report: Any, width: int | None = None) -> list[str]:
    """The claim | lesson says | sched-reader computes | verdict table as plain lines (no trailing
    spaces) that fit ``width`` (the verdict column wraps in its cell when the table is too wide; one
    entry per claim when even that does not fit)."""
    head = ["claim", "lesson says", "sched-reader computes", "verdict"]
    rows = [[c.label, str(c.lesson.get("text", "")), c.computed_text, c.verdict_text] for c in report.claims]
    lines = table_lines(head, rows, width, align_right_from=4, flex=3, min_flex=12)
    if lines is None:
        lines = [f"{r[0]}: lesson says {r[1]}; sched-reader computes {r[2]}; {r[3]}" for r in rows]
    return lines


def render_lesson(console: Any, report: Any, explain: bool = False) -> None:
    """The claim table, a verdict summary, and with ``explain`` each claim's derivation."""
    console.print(f"sched-reader lesson: {report.title_en}", markup=False)
    console.print(f"  lesson   {report.title}", markup=False)
    console.print(f"  checked  {report.model} on {report.gpu}, defaults of vLLM {report.vllm_version}", markup=False)
    console.print()
    for ln in claim_table(report, getattr(console, "width", None)):
        console.print(ln, markup=False)
    counts = [f"{n} {v}" for v, n in report.summary().items() if n]
    console.print(f"{len(report.claims)} claims: {', '.join(counts)} (ratio = computed / lesson)", markup=False)
    if not explain:
        console.print("run with --explain for each claim's formula, inputs, conditions and notes", markup=False)
        return
    for c in report.claims:
        o = c.outcome
        console.print()
        console.print(f"[{c.id}] {c.label}: {c.verdict_text}", markup=False)
        console.print(f"  lesson     {c.quote_zh}  ({c.section})", markup=False)
        console.print(f"             \"{c.gloss_en}\"", markup=False)
        console.print(f"  says       {c.lesson.get('text', '')}", markup=False)
        console.print(f"  computes   {c.computed_text}", markup=False)
        console.print(f"  verdict    {c.verdict}: {c.why} (tolerance {c.tolerance:g})", markup=False)
        if o.formula:
            console.print(f"  formula    {o.formula}", markup=False)
        if o.inputs:
            console.print("  inputs     " + ", ".join(f"{k}={_fmt_input(v)}" for k, v in o.inputs.items()), markup=False)
        for v in o.variants:
            mark = {True: "holds", False: "does not hold", None: "n/a"}[v.holds]
            tag = "release" if v.kind == "release" else "condition"
            console.print(f"  {tag:10} {v.label}: {v.to_json()['text']} ({mark})", markup=False)
        for n in o.notes:
            console.print(f"  note       {n}", markup=False)
