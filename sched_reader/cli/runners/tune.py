"""``sched-reader tune``: what the command does once its options are parsed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from sched_reader.cli.cmd_tune import _GOODPUT_WORD
from sched_reader.cli.common import OutputFormat, split_inputs
from sched_reader.cli.runners.profile import activate_profile
from sched_reader.analyzers.diagnosis import resolve_workload
from sched_reader.analyzers.simulator.workloads import from_bench_flags, load_workload_yaml
from sched_reader.analyzers.tune import default_grid, parse_axes, parse_goodput, run_sweep
from sched_reader.errors import InputError
from sched_reader.models.calibration_profile import active_profile
from sched_reader.models.spec_builder import build_specs
from sched_reader.report.spec_json import dumps
from sched_reader.report.text_diagnose import describe_workload
from sched_reader.report.text_tune import render_tune


def run(*, files, goodput, percentile, workload, dataset_name, random_input_len, random_output_len, num_prompts, request_rate, max_concurrency, executor, workers, max_gpus, top, axis, gpu, vllm, model_config, profile, fmt) -> int:
    activate_profile(profile)
    words = list(files or [])
    extra = [w for w in words if _GOODPUT_WORD.match(w)]
    words = [w for w in words if not _GOODPUT_WORD.match(w)]
    targets = parse_goodput(list(goodput or []) + extra)
    if percentile not in ("mean", "median", "p90", "p99"):
        raise InputError(f"--percentile {percentile!r}: mean, median, p90 or p99")
    paths, command_line = split_inputs(words)
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
        typer.echo(dumps({"schema_version": 1, "tune": res.model_dump()}), nl=False)
    else:
        render_tune(typer.echo, spec, res, top)
    return 0


def _requests(path: Path | None, spec: Any, overrides: dict[str, Any]) -> tuple[Any, str]:
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
