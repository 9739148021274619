"""``sched-reader lesson``: fact-check the lesson's numbers with sched-reader's own models."""

from __future__ import annotations

from typing import List, Optional

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
        from sched_reader.cli.runners import lesson as runner

        return runner.run(gpu=gpu, vllm=vllm, only=list(claim) if claim else None, fmt=fmt.value, explain=explain,
                          echo=lambda text: typer.echo(text, nl=False))

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``lesson`` to the app."""
    app.command("lesson")(lesson)
