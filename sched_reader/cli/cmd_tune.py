"""``sched-reader tune``: sweep the scheduling and memory flags with the simulator against latency targets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, List, Optional

import typer

from sched_reader.cli.common import (
    Dataset,
    FormatOption,
    GpuOption,
    ModelConfigOption,
    OutputFormat,
    ProfileOption,
    VllmOption,
    run_guarded,
)

_GOODPUT_WORD = re.compile(r"^(ttft|tpot|itl|e2el):[0-9.eE+-]+$", re.IGNORECASE)


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
    fmt: OutputFormat = FormatOption,
) -> None:
    """Sweep max-num-batched-tokens x max-num-seqs x gpu-memory-utilization x kv-cache-dtype x TP (x speculative)
    with the simulator; print the Pareto frontier and the best configuration per target as a command line.

    Exit codes: 0 done (also when no point meets the targets: the output says so), 2 bad input.
    """

    def body() -> int:
        from sched_reader.analyzers.tune import default_grid, parse_axes, parse_goodput, run_sweep
        from sched_reader.cli.common import activate_profile, split_inputs
        from sched_reader.errors import InputError
        from sched_reader.models.calibration_profile import active_profile

        activate_profile(profile)
        words = list(files or [])
        extra = [w for w in words if _GOODPUT_WORD.match(w)]
        words = [w for w in words if not _GOODPUT_WORD.match(w)]
        targets = parse_goodput(list(goodput or []) + extra)
        if percentile not in ("mean", "median", "p90", "p99"):
            raise InputError(f"--percentile {percentile!r}: mean, median, p90 or p99")
        paths, command_line = split_inputs(words)
        from sched_reader.models.spec_builder import build_specs

        specs = build_specs(paths, command_line, gpu=gpu, vllm=vllm, model_config=model_config)
        if len(specs) != 1:
            raise InputError(f"{len(specs)} engines in the input; tune sweeps one", file=specs[0].file,
                             hint="give a file (or command line) with one engine")
        spec = specs[0]
        if spec.arch is None or spec.effective is None:
            raise InputError(f"cannot tune {spec.name!r}: model not resolved", file=spec.file,
                             hint="pass --model-config PATH")
        rate = None
        if request_rate is not None:
            try:
                rate = float(request_rate)
            except ValueError:
                raise InputError(f"--request-rate must be a number or inf, got {request_rate!r}") from None
        overrides = {"dataset_name": dataset_name.value if dataset_name else None,
                     "random_input_len": random_input_len, "random_output_len": random_output_len,
                     "num_prompts": num_prompts, "request_rate": rate, "max_concurrency": max_concurrency}
        requests, label = _requests(workload, spec, overrides)
        grid = default_grid(spec, max_gpus=max_gpus)
        grid.update(parse_axes(axis))
        progress, close = _progress(fmt)
        try:
            res = run_sweep(spec, requests, grid, targets, percentile=percentile, executor=executor,
                            workers=workers, progress=progress, profile=active_profile(), workload_label=label)
        finally:
            close()
        if fmt == OutputFormat.json:
            from sched_reader.report.spec_json import dumps

            typer.echo(dumps({"schema_version": 1, "tune": res.model_dump()}), nl=False)
        else:
            from sched_reader.report.text_tune import render_tune

            render_tune(typer.echo, spec, res, top)
        return 0

    raise typer.Exit(run_guarded(body))


def _requests(path: Path | None, spec: Any, overrides: dict[str, Any]) -> tuple[Any, str]:
    from sched_reader.analyzers.diagnosis import resolve_workload
    from sched_reader.analyzers.simulator.workloads import from_bench_flags, load_workload_yaml
    from sched_reader.errors import InputError
    from sched_reader.report.text_diagnose import describe_workload

    if path is not None:
        if not path.is_file():
            raise InputError("no such file", file=str(path), key="--workload")
        req = load_workload_yaml(path, None)
        if overrides.get("max_concurrency") is not None:
            req.max_concurrency = overrides["max_concurrency"]
        return req, f"workload {path} ({len(req):,} requests)"
    bench, req = resolve_workload(spec, overrides)
    if req is None:
        req = from_bench_flags(dataset_name=bench.dataset_name, random_input_len=bench.random_input_len,
                               random_output_len=bench.random_output_len, num_prompts=bench.num_prompts,
                               request_rate=bench.request_rate, max_concurrency=bench.max_concurrency)
    return req, describe_workload(bench)


def _progress(fmt: OutputFormat):
    """A progress bar on stderr when it is a terminal (never in JSON to a pipe or in tests)."""
    import sys

    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None, lambda: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    prog = Progress("tune", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True,
                    console=__import__("rich.console", fromlist=["Console"]).Console(stderr=True))
    task = prog.add_task("sweep", total=None)
    prog.start()

    def update(done: int, total: int) -> None:
        prog.update(task, completed=done, total=total)

    return update, prog.stop


def register(app: typer.Typer) -> None:
    """Add ``tune`` to the app."""
    app.command("tune")(tune)
