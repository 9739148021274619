"""``sched-reader config``: show the engines found in deploy files, each flag with its value and origin."""

from __future__ import annotations

from typing import List, Optional

import typer

from sched_reader.cli.common import (
    FormatOption,
    GpuOption,
    ModelConfigOption,
    ModelOption,
    OutputFormat,
    VllmOption,
    run_guarded,
)
from sched_reader.cli.common import FailOnOption
from sched_reader.cli.fail_on import FailOn


def config(
    files: Optional[List[str]] = typer.Argument(
        None, metavar="FILE", help="Deploy files (vLLM YAML, shell, Kubernetes, Helm values, compose); or `-- vllm serve ...`."
    ),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    model: Optional[str] = ModelOption,
    fmt: OutputFormat = FormatOption,
    fail_on: FailOn = FailOnOption,
) -> None:
    """Show the engines found, each flag with its value and origin, and what could not be resolved.

    Exit codes: 0 clean, 1 when an engine has findings at or above --fail-on, 2 for unreadable input.
    """

    def body() -> int:
        from sched_reader.cli.runners import config as runner

        return runner.run(files, gpu=gpu, vllm=vllm, model_config=model_config, model=model, fmt=fmt.value, fail_on=fail_on,
                          echo=lambda text: typer.echo(text, nl=False))

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``config`` to the app."""
    app.command("config")(config)
