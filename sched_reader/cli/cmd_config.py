"""``sched-reader config``: show the engines found in deploy files, each flag with its value and origin."""

from __future__ import annotations

from typing import List, Optional

import typer

from sched_reader.cli.common import (
    FormatOption,
    GpuOption,
    ModelConfigOption,
    OutputFormat,
    VllmOption,
    run_guarded,
    split_inputs,
)
from sched_reader.cli.fail_on import FailOn, FailOnOption, exit_for


def config(
    files: Optional[List[str]] = typer.Argument(
        None, help="Deploy files (vLLM YAML, shell, Kubernetes, Helm values, compose); or `-- vllm serve ...`."
    ),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: OutputFormat = FormatOption,
    fail_on: FailOn = FailOnOption,
) -> None:
    """Show the engines found, each flag with its value and origin, and what could not be resolved.

    Exit codes: 0 clean, 1 when an engine has findings at or above --fail-on, 2 for unreadable input.
    """

    def body() -> int:
        from sched_reader.analyzers.pipeline import build_specs
        from sched_reader.report.spec_json import dumps, envelope, spec_json

        paths, command_line = split_inputs(files)
        specs = build_specs(paths, command_line, gpu=gpu, vllm=vllm, model_config=model_config, strict_model=False)
        if fmt == OutputFormat.json:
            typer.echo(dumps(envelope([spec_json(s) for s in specs])), nl=False)
        else:
            from sched_reader.report.console import make_console
            from sched_reader.report.text_config import render_config

            render_config(make_console(), specs)
        return exit_for(specs, fail_on)

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``config`` to the app."""
    app.command("config")(config)
