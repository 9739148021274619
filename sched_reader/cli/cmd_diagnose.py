"""``sched-reader diagnose``: KV budget, capacity, speed and the scheduler bottleneck for each engine."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from sched_reader.cli.common import (FormatOption, GpuOption, ModelConfigOption, ModelOption, OutputFormat,
                                     PlotOption, ProfileOption, VllmOption, bench_overrides, run_guarded,
                                     with_bench_options)
from sched_reader.cli.common import FailOnOption
from sched_reader.cli.fail_on import FailOn


@with_bench_options
def diagnose(
    files: Optional[List[str]] = typer.Argument(
        None, metavar="FILE",
        help="Deploy files (vLLM YAML, shell, Kubernetes, Helm values, compose); or `-- vllm serve ...`."),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    model: Optional[str] = ModelOption,
    fmt: OutputFormat = FormatOption,
    explain: bool = typer.Option(False, "--explain", help="Show each figure's formula and inputs."),
    bench: dict = ...,  # the `vllm bench serve` options (common.BENCH_OPTIONS)
    plot: Optional[Path] = PlotOption,
    fail_on: FailOn = FailOnOption,
    sets: Optional[List[str]] = typer.Option(
        None, "--set", metavar="FLAG=VALUE",
        help="What-if: override a vLLM flag (repeatable), e.g. --set max-num-batched-tokens=2048; "
             "prints the predicted metrics without -> with the overrides."),
    effects: bool = typer.Option(True, "--effects/--no-effects",
                                 help="Evaluate each recommendation's predicted effect (one re-run each); "
                                      "a recommendation that does not improve its target metric is not printed."),
    profile: Optional[str] = ProfileOption,
) -> None:
    """Predict vLLM's KV-cache budget, capacity, prefill/decode speed and which scheduling default binds.

    Exit codes: 0 no finding at or above --fail-on (default error), 1 otherwise, 2 unreadable input.
    """

    def body() -> int:
        from sched_reader.cli.runners.profile import activate_profile
        from sched_reader.cli.runners import diagnose as runner

        activate_profile(profile)

        overrides = bench_overrides(**bench)
        return runner.run(files, gpu=gpu, vllm=vllm, model_config=model_config, model=model, fmt=fmt.value,
                          explain=explain, overrides=overrides, plot=plot, sets=sets, effects=effects, fail_on=fail_on,
                          echo=lambda text: typer.echo(text, nl=False))

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``diagnose`` to the app."""
    app.command("diagnose")(diagnose)
