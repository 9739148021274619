"""``sched-reader explain-log LOG [CONFIG]``: a real vLLM start-up log beside the prediction, term by term."""

from __future__ import annotations

from typing import List, Optional

import typer

from sched_reader.cli.common import FormatOption, GpuOption, ModelConfigOption, OutputFormat, VllmOption, run_guarded


def explain_log(
    log: str = typer.Argument(..., metavar="LOG", help="A vLLM start-up log (plain or .gz; docker/kubectl logs, any rank prefix)."),
    config: Optional[List[str]] = typer.Argument(
        None, metavar="FILE", help="The deploy config of the same engine (default: rebuild the engine from the log itself)."),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Read a vLLM start-up log; lay each memory term beside sched-reader's prediction; name the term that differs.

    Exit codes: 0 explained, 2 unreadable, truncated or mismatched input (a log of another model than the
    config, several engines interleaved).
    """

    def body() -> int:
        from sched_reader.cli.runners import explain_log as runner

        return runner.run(log, config, gpu=gpu, vllm=vllm, model_config=model_config, fmt=fmt.value,
                          echo=lambda text: typer.echo(text, nl=False))

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``explain-log`` to the app."""
    app.command("explain-log")(explain_log)
