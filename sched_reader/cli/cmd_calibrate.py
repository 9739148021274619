"""``sched-reader calibrate``: fit a deployment's profile to its real `vllm bench serve` results."""

from __future__ import annotations

from typing import List, Optional

import typer

from sched_reader.cli.common import FormatOption, GpuOption, ModelConfigOption, OutputFormat, VllmOption, run_guarded


def calibrate(
    files: Optional[List[str]] = typer.Argument(
        None, help="The deployment: a deploy file, or `-- vllm serve ...` (default: rebuilt from --log)."),
    bench: List[str] = typer.Option(..., "--bench", metavar="RESULT",
                                    help="A `vllm bench serve --save-result` JSON or its printed summary "
                                         "(repeatable; several concurrency levels or lengths fit more terms)."),
    log: Optional[str] = typer.Option(None, "--log", metavar="VLLM_LOG",
                                      help="The deployment's vLLM start-up log (checked against the config, or "
                                           "the config rebuilt from it)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="PROFILE.yaml",
                                         help="Write the profile here (default: print it)."),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Fit the named efficiency and host terms of the cost model to real benchmark results; write a profile.

    Use the profile with `diagnose/simulate/tune --profile FILE`. Exit codes: 0 written, 2 bad input (a result
    of another model or tool, a log of another model than the config).
    """

    def body() -> int:
        from sched_reader.cli.runners import calibrate as runner

        return runner.run(files, bench=bench, log=log, output=output, gpu=gpu, vllm=vllm, model_config=model_config,
                          fmt=fmt.value, echo=typer.echo)

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to the app."""
    app.command("calibrate")(calibrate)
