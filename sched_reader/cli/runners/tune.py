"""``sched-reader tune``: one engine, its workload, the sweep grid, the sweep (with a progress bar on a
terminal), then the frontier printed as text or JSON."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from sched_reader.analyzers.diagnosis import bench_requests, resolve_workload
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.workload import offline_usage_context
from sched_reader.analyzers.tune import default_grid, parse_axes, parse_goodput, run_sweep
from sched_reader.cli.common import split_inputs
from sched_reader.cli.runners.diagnose import parse_rate
from sched_reader.errors import InputError
from sched_reader.models.calibration_profile import active_profile
from sched_reader.report.plots import check_plot_target, plot_tune
from sched_reader.report.spec_json import dumps
from sched_reader.report.text_diagnose import describe_workload
from sched_reader.report.text_tune import render_tune

_GOODPUT_WORD = re.compile(r"^(ttft|tpot|itl|e2el):[0-9.eE+-]+$", re.IGNORECASE)


def run(files: list[str] | None, *, goodput: list[str] | None, percentile: str, workload: Path | None,
        overrides: dict[str, Any], executor: str, workers: int | None, max_gpus: int | None, top: int,
        axis: list[str] | None, gpu: str | None, vllm: str | None, model_config: str | None, fmt: str,
        echo: Callable[..., None], plot: Path | None = None) -> int:
    """Sweep and print (and draw ``plot``, an image file); 0 when done (also when no point meets the targets:
    the output says so)."""
    if plot is not None:
        check_plot_target(plot)
    words = list(files or [])
    extra = [w for w in words if _GOODPUT_WORD.match(w)]
    words = [w for w in words if not _GOODPUT_WORD.match(w)]
    targets = parse_goodput(list(goodput or []) + extra)
    if percentile not in ("mean", "median", "p90", "p99"):
        raise InputError(f"--percentile {percentile!r}: mean, median, p90 or p99")
    paths, command_line = split_inputs(words)
    specs = build_specs(paths, command_line, gpu=gpu, vllm=vllm, model_config=model_config,
                        usage_context=offline_usage_context(overrides))
    if len(specs) != 1:
        raise InputError(f"{len(specs)} engines in the input; tune sweeps one", file=specs[0].file,
                         hint="give a file (or command line) with one engine")
    spec = specs[0]
    if spec.arch is None or spec.effective is None:
        raise InputError(f"cannot tune {spec.name!r}: model not resolved", file=spec.file,
                         hint="pass --model-config PATH")
    overrides = {**overrides, "request_rate": parse_rate(overrides.get("request_rate"))}
    requests, label, endpoint = _requests(workload, spec, overrides)
    grid = default_grid(spec, max_gpus=max_gpus)
    grid.update(parse_axes(axis))
    progress, close = _progress()
    try:
        res = run_sweep(spec, requests, grid, targets, percentile=percentile, executor=executor,
                        workers=workers, progress=progress, profile=active_profile(), workload_label=label,
                        endpoint=endpoint)
    finally:
        close()
    if plot is not None:
        plot_tune(res.model_dump(), plot)
    if fmt == "json":
        echo(dumps({"schema_version": 1, "tune": res.model_dump()}), nl=False)
    else:
        render_tune(echo, spec, res, top)
    return 0


def _requests(path: Path | None, spec: Any, overrides: dict[str, Any]) -> tuple[Any, str, str]:
    """The sweep's requests, their one-line description and the API entry point the client calls: the same
    resolution as ``diagnose`` (a ``--workload`` file or trace wins and refuses bench flags beside it; then bench flags; then the file's
    ``workload:`` section; then ``vllm bench serve`` defaults)."""
    if path is not None:
        if not path.is_file():
            raise InputError("no such file", file=str(path), key="--workload")
        overrides = {**overrides, "workload_file": path}
    bench, req = resolve_workload(spec, overrides)
    if req is None:
        req = bench_requests(bench)
    return req, describe_workload(bench), bench.endpoint


def _progress() -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A progress bar on stderr when it is a terminal (never in JSON to a pipe or in tests)."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None, lambda: None
    prog = Progress("tune", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True,
                    console=Console(stderr=True))
    task = prog.add_task("sweep", total=None)
    prog.start()

    def update(done: int, total: int) -> None:
        prog.update(task, completed=done, total=total)

    return update, prog.stop
