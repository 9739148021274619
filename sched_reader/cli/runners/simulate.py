"""``sched-reader simulate``: check the options, build the engines, make each one's workload, replay it
under each policy, print the table (or JSON)."""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.progress import Progress

from sched_reader.analyzers.diagnosis import resolve_workload
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.analyzers.simulator import simulate_spec
from sched_reader.analyzers.simulator.policies import POLICIES
from sched_reader.analyzers.simulator.workloads import from_bench_flags, load_workload_yaml
from sched_reader.cli.common import split_inputs
from sched_reader.errors import InputError
from sched_reader.limits import MIN_REQUEST_RATE, finite_float
from sched_reader.report.text_diagnose import describe_workload
from sched_reader.report.text_simulate import render_simulation


def run(config: list[str] | None, *, policy: str, compare: str | None, workload: Path | None,
        overrides: dict[str, Any], seed: int, chunk_size: int, slo_ttft_ms: float | None,
        slo_tpot_ms: float | None, fmt: str, gpu: str | None, vllm: str | None, model_config: str | None,
        echo: Callable[[str], None]) -> int:
    """``overrides``: the bench flags (``request_rate`` still as text). Returns the exit code."""
    pols = _policies(policy, compare)
    request_rate = overrides.get("request_rate")
    rate = _rate(request_rate) if request_rate is not None else None
    if workload is not None and not workload.is_file():
        raise InputError("no such file" if not workload.exists() else "not a file", file=str(workload),
                         key="--workload")
    paths, cmdline = _inputs(config)
    specs = build_specs(paths, cmdline or None, gpu=gpu, vllm=vllm, model_config=model_config)
    if not specs:
        raise InputError("no vLLM engine found in the input")
    overrides = {**overrides, "request_rate": rate}
    per_engine = [_workload(workload, spec, overrides, seed) for spec in specs]
    prog, cb = _progress_factory()
    engines = []
    try:
        if prog is not None:
            prog.start()
        for spec, (requests, desc) in zip(specs, per_engine):
            res = simulate_spec(spec, requests, pols, chunk_size=chunk_size, slo_ttft_ms=slo_ttft_ms,
                                slo_tpot_ms=slo_tpot_ms,
                                progress=(lambda p, d, t, _n=spec.name: cb(f"{_n}:{p}", d, t)) if cb else None)
            engines.append({"name": spec.name, "file": spec.file, "workload": desc, "results": res})
    finally:
        if prog is not None:
            prog.stop()
    if fmt == "json":
        echo(json.dumps({"schema_version": 1, "engines": engines}, indent=1))
    else:
        for e in engines:
            for r in e["results"].values():
                r.pop("timeseries", None)
        render_simulation(engines)
    return 0


def _rate(text: str) -> float:
    """``--request-rate`` in requests/s: at least ``limits.MIN_REQUEST_RATE``, or inf (all at once)."""
    return finite_float(text, key="--request-rate", lo=MIN_REQUEST_RATE, unit="req/s", allow_inf=True,
                        hint="a rate in requests/s, or inf to send every request at once")


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
    if not sys.stderr.isatty():
        return None, None
    prog = Progress(console=Console(stderr=True), transient=True)
    tasks: dict[str, Any] = {}

    def cb(label: str, done: int, total: int) -> None:
        if label not in tasks:
            tasks[label] = prog.add_task(f"simulating {label}", total=total)
        prog.update(tasks[label], completed=done)

    return prog, cb


def _inputs(config: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Deploy files and the command line after ``--`` (split by the CLI's shared helper)."""
    paths, cmdline = split_inputs(config)
    if not paths and not cmdline:
        raise InputError("give a deploy file or a command line after --")
    for p in paths:
        if not Path(p).exists():
            raise InputError("no such file", file=p)
    return paths, cmdline


def _workload(path, spec, overrides: dict[str, Any], seed: int):
    """(requests, description) for one engine: --workload FILE, else the bench flags over the file's section."""
    if path is not None:
        req = load_workload_yaml(path, {"seed": seed} if seed else None)
        if overrides.get("max_concurrency") is not None:
            req.max_concurrency = overrides["max_concurrency"]
        return req, f"workload {path} ({len(req):,} requests)"
    bench, req = resolve_workload(spec, overrides)
    if req is None:
        req = from_bench_flags(dataset_name=bench.dataset_name, random_input_len=bench.random_input_len,
                               random_output_len=bench.random_output_len, num_prompts=bench.num_prompts,
                               request_rate=bench.request_rate, max_concurrency=bench.max_concurrency, seed=seed)
        return req, describe_workload(bench)
    return req, f"{describe_workload(bench)} (from the file's workload section: means of {len(req):,} requests)"
