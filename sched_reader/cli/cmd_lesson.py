"""``sched-reader lesson``: fact-check the lesson's numbers with sched-reader's own models."""

from __future__ import annotations

from typing import Any, List, Optional

import typer

from sched_reader.cli.common import FormatOption, OutputFormat, run_guarded


def lesson(
    gpu: Optional[str] = typer.Option(
        None, "--gpu", metavar="NAME", help="GPU the claims are evaluated on (default H100 SXM5 80GB, the lesson's GPU)."
    ),
    vllm: Optional[str] = typer.Option(
        None, "--vllm", metavar="VERSION", help="vLLM release whose defaults are used, e.g. 0.19.0 (default: the newest known)."
    ),
    fmt: OutputFormat = FormatOption,
    explain: bool = typer.Option(False, "--explain", help="After the table, each claim's quote, formula, inputs, "
                                                          "conditions and notes."),
    claim: Optional[List[str]] = typer.Option(None, "--claim", metavar="ID", help="Only this claim id (repeatable)."),
) -> None:
    """Check the lesson's numbers (KV size, waste, defaults, prefill time, throughput, ITL) against
    sched-reader's capacity, cost, block-accounting, simulator and release-facts models.

    Verdicts: holds | wrong | misleading | depends-on-release | not-computable; the ratio is
    computed / lesson. Exit codes: 0 report printed, 2 invalid input (unknown GPU, release or claim).
    """

    def body() -> int:
        from sched_reader.analyzers.lesson_check import check_lesson

        report = check_lesson(gpu=gpu, vllm=vllm, only=list(claim) if claim else None)
        if fmt == OutputFormat.json:
            from sched_reader.report.spec_json import dumps

            typer.echo(dumps(report.to_json()), nl=False)
        else:
            from sched_reader.report.console import make_console

            render_lesson(make_console(), report, explain=explain)
        return 0

    raise typer.Exit(run_guarded(body))


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
    spaces) that fit ``width`` (the verdict column wraps in its cell when the table is too wide)."""
    from sched_reader.report.layout import table_lines

    head = ["claim", "lesson says", "sched-reader computes", "verdict"]
    rows = [[c.label, str(c.lesson.get("text", "")), c.computed_text, c.verdict_text] for c in report.claims]
    lines = table_lines(head, rows, width, align_right_from=4, flex=3, min_flex=12)
    if lines is None:  # narrower than four columns: one entry per claim
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


def register(app: typer.Typer) -> None:
    """Add ``lesson`` to the app."""
    app.command("lesson")(lesson)
