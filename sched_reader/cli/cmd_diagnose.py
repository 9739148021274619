"""``sched-reader diagnose``: KV budget, capacity, speed and the scheduler bottleneck for each engine."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from sched_reader.cli.common import (
    BackendOption,
    BurstinessOption,
    Dataset,
    DatasetNameOption,
    EndpointOption,
    FormatOption,
    GoodputOption,
    GpuOption,
    InputLenOption,
    MaxConcurrencyOption,
    MetricPercentilesOption,
    ModelConfigOption,
    ModelOption,
    NumPromptsOption,
    OutputFormat,
    OutputLenOption,
    PlotOption,
    ProfileOption,
    RandomInputLenOption,
    RandomOutputLenOption,
    RangeRatioOption,
    RequestRateOption,
    SeedOption,
    VllmOption,
    WorkloadFileOption,
    bench_overrides,
    run_guarded,
)
from sched_reader.cli.fail_on import FailOn, FailOnOption


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
    workload: Optional[Path] = WorkloadFileOption,
    dataset_name: Optional[Dataset] = DatasetNameOption,
    input_len: Optional[int] = InputLenOption,
    output_len: Optional[int] = OutputLenOption,
    random_input_len: Optional[int] = RandomInputLenOption,
    random_output_len: Optional[int] = RandomOutputLenOption,
    random_range_ratio: Optional[float] = RangeRatioOption,
    num_prompts: Optional[int] = NumPromptsOption,
    request_rate: Optional[str] = RequestRateOption,
    burstiness: Optional[float] = BurstinessOption,
    max_concurrency: Optional[int] = MaxConcurrencyOption,
    backend: Optional[str] = BackendOption,
    endpoint: Optional[str] = EndpointOption,
    seed: int = SeedOption,
    metric_percentiles: Optional[str] = MetricPercentilesOption,
    goodput: Optional[List[str]] = GoodputOption,
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

        overrides = bench_overrides(
            workload=workload, dataset_name=dataset_name, input_len=input_len, output_len=output_len,
            random_input_len=random_input_len, random_output_len=random_output_len,
            random_range_ratio=random_range_ratio, num_prompts=num_prompts, request_rate=request_rate,
            burstiness=burstiness, max_concurrency=max_concurrency, backend=backend, endpoint=endpoint, seed=seed,
            metric_percentiles=metric_percentiles, goodput=goodput)
        return runner.run(files, gpu=gpu, vllm=vllm, model_config=model_config, model=model, fmt=fmt.value,
                          explain=explain, overrides=overrides, plot=plot, sets=sets, effects=effects, fail_on=fail_on,
                          echo=lambda text: typer.echo(text, nl=False))

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``diagnose`` to the app."""
    app.command("diagnose")(diagnose)
