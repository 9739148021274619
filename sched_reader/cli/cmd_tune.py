"""``sched-reader tune``: sweep the scheduling and memory flags with the simulator against latency targets."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from sched_reader.cli.common import (BackendOption, Dataset, EndpointOption, FormatOption, GpuOption,
                                     ModelConfigOption, OutputFormat, PlotOption, ProfileOption, VllmOption,
                                     bench_overrides, run_guarded)


def tune(
    files: Optional[List[str]] = typer.Argument(
        None, help="Deploy file, or `-- vllm serve ...`; `--goodput` takes vLLM's syntax: ttft:500 tpot:50."),
    goodput: Optional[List[str]] = typer.Option(
        None, "--goodput", metavar="METRIC:MS",
        help="Latency targets as `vllm bench serve --goodput`: ttft:500 tpot:50 (itl, e2el too; ms)."),
    percentile: str = typer.Option("p99", "--percentile", help="Which percentile must meet the targets: "
                                                               "mean, median, p90 or p99."),
    workload: Optional[Path] = typer.Option(None, "--workload", help="Workload YAML (classes, arrivals, trace)."),
    dataset_name: Optional[Dataset] = typer.Option(None, "--dataset-name", help="Workload shape (default random)."),
    random_input_len: Optional[int] = typer.Option(None, "--random-input-len", min=1, help="Prompt tokens (default 1024)."),
    random_output_len: Optional[int] = typer.Option(None, "--random-output-len", min=1, help="Output tokens (default 128)."),
    num_prompts: Optional[int] = typer.Option(None, "--num-prompts", min=1, max=1_000_000,
                                              help="Requests per point (default 1000)."),
    request_rate: Optional[str] = typer.Option(None, "--request-rate", help="Requests/s, or inf (default inf)."),
    max_concurrency: Optional[int] = typer.Option(None, "--max-concurrency", min=1, help="Cap on requests in flight."),
    backend: Optional[str] = BackendOption,
    endpoint: Optional[str] = EndpointOption,
    executor: str = typer.Option("local", "--executor", help="local (this machine's cores), serial, or ray "
                                                             "(pip install 'sched-reader[ray]')."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Local processes (default: all cores)."),
    max_gpus: Optional[int] = typer.Option(None, "--max-gpus", min=1, help="Largest TP x PP to consider (default 8)."),
    top: int = typer.Option(10, "--top", min=1, help="Frontier points to print."),
    axis: Optional[List[str]] = typer.Option(
        None, "--axis", metavar="FLAG=V1,V2",
        help="Replace one axis of the sweep, e.g. --axis max-num-seqs=128,256 (repeatable)."),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    profile: Optional[str] = ProfileOption,
    plot: Optional[Path] = PlotOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Sweep max-num-batched-tokens x max-num-seqs x gpu-memory-utilization x kv-cache-dtype x TP (x speculative)
    with the simulator; print the Pareto frontier and the best configuration per target as a command line.

    Exit codes: 0 done (also when no point meets the targets: the output says so), 2 bad input.
    """

    def body() -> int:
        from sched_reader.cli.runners import tune as runner
        from sched_reader.cli.runners.profile import activate_profile

        activate_profile(profile)
        overrides = bench_overrides(dataset_name=dataset_name, random_input_len=random_input_len,
                                    random_output_len=random_output_len, num_prompts=num_prompts,
                                    request_rate=request_rate, max_concurrency=max_concurrency, backend=backend,
                                    endpoint=endpoint)
        return runner.run(files, goodput=goodput, percentile=percentile, workload=workload, overrides=overrides,
                          executor=executor, workers=workers, max_gpus=max_gpus, top=top, axis=axis, gpu=gpu,
                          vllm=vllm, model_config=model_config, fmt=fmt.value, echo=typer.echo,
                          plot=plot)

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``tune`` to the app."""
    app.command("tune")(tune)
