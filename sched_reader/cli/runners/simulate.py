"""``sched-reader simulate``: build the engines, resolve each one's workload, run the policies (a progress bar
on a terminal), then write the time series, the plot and the text or JSON."""

from __future__ import annotations

import csv
import difflib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.progress import Progress

from sched_reader.analyzers.diagnosis import bench_requests, resolve_workload
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.workload import offline_usage_context
from sched_reader.analyzers.simulator import simulate_spec
from sched_reader.analyzers.simulator.policies import POLICIES
from sched_reader.cli.common import split_inputs
from sched_reader.errors import InputError
from sched_reader.report.plots import check_plot_target, plot_simulation
from sched_reader.report.text_diagnose import describe_workload
from sched_reader.report.text_simulate import render_simulation


def run(files: list[str] | None, *, policy: str, compare: str | None, overrides: dict[str, Any],
        slo_ttft_ms: float | None, slo_tpot_ms: float | None, chunk_size: int, plot: Path | None,
        timeseries: Path | None, fmt: str, gpu: str | None, vllm: str | None, model_config: str | None,
        echo: Callable[[str], None]) -> int:
    """Simulate every engine under each policy and print; 0 when done."""
    pols = _policies(policy, compare)
    slo = dict(overrides.get("goodput") or {})
    if slo_ttft_ms is not None:
        slo["ttft"] = slo_ttft_ms
    if slo_tpot_ms is not None:
        slo["tpot"] = slo_tpot_ms
    if plot is not None:
        check_plot_target(plot)
    paths, cmdline = _inputs(files)
    specs = build_specs(paths, cmdline or None, gpu=gpu, vllm=vllm, model_config=model_config,
                        usage_context=offline_usage_context(overrides))
    if not specs:
        raise InputError("no vLLM engine found in the input")
    per_engine = [_workload(spec, overrides) for spec in specs]
    prog, cb = _progress_factory()
    engines = []
    try:
        if prog is not None:
            prog.start()
        for spec, (requests, desc, endpoint) in zip(specs, per_engine):
            res = simulate_spec(spec, requests, pols, chunk_size=chunk_size, slo_ttft_ms=slo.get("ttft"),
                                slo_tpot_ms=slo.get("tpot"), slo_e2el_ms=slo.get("e2el"),
                                percentiles=tuple(overrides.get("metric_percentiles") or ()), endpoint=endpoint,
                                progress=(lambda p, d, t, _n=spec.name: cb(f"{_n}:{p}", d, t)) if cb else None)
            engines.append({"name": spec.name, "file": spec.file, "workload": desc, "results": res})
    finally:
        if prog is not None:
            prog.stop()
    if timeseries is not None:
        _write_timeseries(timeseries, engines)
    if plot is not None:
        plot_simulation(engines, plot)
    if fmt == "json":
        echo(json.dumps({"schema_version": 1, "engines": engines}, indent=1))
    else:
        for e in engines:
            for r in e["results"].values():
                r.pop("timeseries", None)
                r.pop("histograms", None)
        render_simulation(engines)
    return 0


def _policies(policy: str, compare: str | None) -> list[str]:
    """The policies to run, in the order given; an unknown name is an input error with a suggestion."""
    names = [p.strip() for p in compare.split(",") if p.strip()] if compare else [policy.strip()]
    if not names:
        raise InputError("no policy named", key="--compare")
    for p in names:
        if p not in POLICIES:
            close = difflib.get_close_matches(p.lower(), POLICIES, n=1, cutoff=0.6)
            raise InputError(f"unknown policy {p!r}; choose from {', '.join(POLICIES)}",
                             key="--compare" if compare else "--policy",
                             hint=f"did you mean {close[0]!r}?" if close else None)
    return list(dict.fromkeys(names))


def _progress_factory():
    """A rich progress bar on stderr when it is a TTY; otherwise None."""
    if not sys.stderr.isatty() or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return None, None  # no cursor escapes where colour and terminal control are unwanted

    prog = Progress(console=Console(stderr=True), transient=True)
    tasks: dict[str, Any] = {}

    def cb(label: str, done: int, total: int) -> None:
        if label not in tasks:
            tasks[label] = prog.add_task(f"simulating {label}", total=total)
        prog.update(tasks[label], completed=done)

    return prog, cb


def _write_timeseries(path: Path, engines: list[dict[str, Any]]) -> None:
    """CSV: one row per sampled step of each engine and policy (seconds, sequences, blocks, ms)."""
    try:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["engine", "policy", "t_s", "batch_size", "kv_blocks", "kv_blocks_total", "step_ms"])
            for e in engines:
                for pol, r in e["results"].items():
                    ts = r.get("timeseries") or {}
                    total = r.get("kv_blocks_total")
                    for t, b, k, st in zip(ts.get("t_s", []), ts.get("batch_size", []), ts.get("kv_blocks", []),
                                           ts.get("step_ms", [])):
                        w.writerow([e["name"], pol, f"{t:.6f}", b, k, total, f"{st:.4f}"])
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror or err}", file=str(path), key="--timeseries") from None


def _inputs(config: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Deploy files and the command line after ``--`` (split by the CLI's shared helper)."""
    paths, cmdline = split_inputs(config)
    if not paths and not cmdline:
        raise InputError("give a deploy file or a command line after --")
    for p in paths:
        if not Path(p).exists():
            raise InputError("no such file", file=p)
    return paths, cmdline


def _workload(spec, overrides: dict[str, Any]):
    """(requests, description, API entry point) for one engine: --workload FILE, else the bench flags, else
    the file's workload section (a trace or classes, replayed request by request), else vllm bench serve's
    defaults."""
    bench, req = resolve_workload(spec, overrides)
    if req is None:
        req = bench_requests(bench, int(overrides.get("seed") or 0))
    return req, describe_workload(bench), bench.endpoint
