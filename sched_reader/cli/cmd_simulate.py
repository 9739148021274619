"""`sched-reader simulate`: replay a workload through vLLM's scheduler (and the lesson's toy policies)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Optional

import typer

_ROWS = [  # (label, key, format)
    ("requests/s", "request_throughput", "{:.2f}"),
    ("output tok/s", "output_throughput", "{:.1f}"),
    ("total tok/s", "total_token_throughput", "{:.1f}"),
    ("mean TTFT ms", "mean_ttft_ms", "{:.1f}"),
    ("p99 TTFT ms", "p99_ttft_ms", "{:.1f}"),
    ("mean TPOT ms", "mean_tpot_ms", "{:.2f}"),
    ("mean ITL ms", "mean_itl_ms", "{:.2f}"),
    ("p99 ITL ms", "p99_itl_ms", "{:.2f}"),
    ("p99 E2EL ms", "p99_e2el_ms", "{:.1f}"),
    ("goodput req/s", "request_goodput", "{:.2f}"),
    ("peak KV use", "kv_peak_use", "{:.1%}"),
    ("mean KV use", "kv_mean_use", "{:.1%}"),
    ("KV fragmentation", "kv_fragmentation", "{:.1%}"),
    ("preemptions", "preemptions", "{:d}"),
    ("steps", "num_steps", "{:d}"),
]


def _rate(text: str) -> float:
    from sched_reader.errors import InputError

    try:
        v = float(text)
    except ValueError:
        raise InputError(f"not a number: {text!r}", key="--request-rate") from None
    if math.isnan(v) or v <= 0:
        raise InputError("must be > 0 or inf", key="--request-rate")
    return v


def _policies(policy: str, compare: str | None) -> list[str]:
    from sched_reader.analyzers.simulator.policies import POLICIES
    from sched_reader.errors import InputError

    names = [p.strip() for p in compare.split(",") if p.strip()] if compare else [policy]
    for p in names:
        if p not in POLICIES:
            raise InputError(f"unknown policy {p!r}; choose from {', '.join(POLICIES)}",
                             key="--compare" if compare else "--policy")
    return list(dict.fromkeys(names))


def _progress_factory():
    """A rich progress bar on stderr when it is a TTY; otherwise None."""
    if not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import Progress

    prog = Progress(console=Console(stderr=True), transient=True)
    tasks: dict[str, Any] = {}

    def cb(label: str, done: int, total: int) -> None:
        if label not in tasks:
            tasks[label] = prog.add_task(f"simulating {label}", total=total)
        prog.update(tasks[label], completed=done)

    return prog, cb


def _text(engines: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    for e in engines:
        table = Table(title=f"{e['name']} ({e['file']}) - {e['workload']}")
        table.add_column("metric")
        for pol in e["results"]:
            table.add_column(pol.upper(), justify="right")
        for label, key, fmt in _ROWS:
            table.add_row(label, *[fmt.format(r[key]) for r in e["results"].values()])
        con.print(table)
        for pol, r in e["results"].items():
            for note in r.get("notes", []):
                con.print(f"note ({pol}): {note}")


def register(app: typer.Typer) -> None:
    """Add ``simulate`` to the app."""

    @app.command("simulate")
    def simulate_cmd(
        config: Optional[list[str]] = typer.Argument(None, help="Deploy file(s) (compose, k8s, helm values, "
                                                     "vLLM config); or a command line after --."),
        policy: str = typer.Option("vllm", "--policy", help="naive | static | continuous | chunked | vllm"),
        compare: Optional[str] = typer.Option(None, "--compare", help="Comma list of policies, side by side."),
        workload: Optional[Path] = typer.Option(None, "--workload", help="Workload YAML (classes, arrivals, trace)."),
        dataset_name: Optional[str] = typer.Option(None, "--dataset-name", help="random | sharegpt (default random)"),
        random_input_len: Optional[int] = typer.Option(None, "--random-input-len", min=1, help="default 1024"),
        random_output_len: Optional[int] = typer.Option(None, "--random-output-len", min=1, help="default 128"),
        num_prompts: Optional[int] = typer.Option(None, "--num-prompts", min=1, max=10_000_000, help="default 1000"),
        request_rate: Optional[str] = typer.Option(None, "--request-rate", help="Requests/s (Poisson) or inf (default)."),
        max_concurrency: Optional[int] = typer.Option(None, "--max-concurrency", min=1),
        seed: int = typer.Option(0, "--seed"),
        chunk_size: int = typer.Option(512, "--chunk-size", min=1, help="Prefill chunk of the 'chunked' policy."),
        slo_ttft_ms: Optional[float] = typer.Option(None, "--slo-ttft-ms", help="Goodput TTFT target (ms)."),
        slo_tpot_ms: Optional[float] = typer.Option(None, "--slo-tpot-ms", help="Goodput TPOT/ITL target (ms)."),
        fmt: str = typer.Option("text", "--format", help="text | json"),
        gpu: Optional[str] = typer.Option(None, "--gpu"),
        vllm: Optional[str] = typer.Option(None, "--vllm"),
        model_config: Optional[str] = typer.Option(None, "--model-config"),
    ) -> None:
        """Predict throughput, TTFT, ITL, KV use and preemptions of a deploy config under a workload."""
        from sched_reader.errors import InputError, SchedReaderError

        try:
            if fmt not in ("text", "json"):
                raise InputError("must be text or json", key="--format")
            pols = _policies(policy, compare)
            paths, cmdline = _inputs(config)
            from sched_reader.analyzers.simulator import simulate_spec
            from sched_reader.models.spec_builder import build_specs

            specs = build_specs(paths, cmdline or None, gpu=gpu, vllm=vllm, model_config=model_config)
            if not specs:
                raise InputError("no vLLM engine found in the input")
            overrides = {"dataset_name": dataset_name, "random_input_len": random_input_len,
                         "random_output_len": random_output_len, "num_prompts": num_prompts,
                         "request_rate": _rate(request_rate) if request_rate is not None else None,
                         "max_concurrency": max_concurrency}
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
        except SchedReaderError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(e.exit_code)
        except (ValueError, OSError) as e:  # last-resort guard: one line, never a traceback
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2)
        if fmt == "json":
            typer.echo(json.dumps({"schema_version": 1, "engines": engines}, indent=1))
        else:
            for e in engines:
                for r in e["results"].values():
                    r.pop("timeseries", None)
            _text(engines)


def _inputs(config: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Deploy files and the command line after ``--`` (split by the CLI's shared helper)."""
    from sched_reader.cli.common import split_inputs
    from sched_reader.errors import InputError

    paths, cmdline = split_inputs(config)
    if not paths and not cmdline:
        raise InputError("give a deploy file or a command line after --")
    for p in paths:
        if not Path(p).exists():
            raise InputError("no such file", file=p)
    return paths, cmdline


def _workload(path, spec, overrides: dict[str, Any], seed: int):
    """(requests, description) for one engine: --workload FILE, else the bench flags over the file's section."""
    from sched_reader.analyzers.diagnosis import resolve_workload
    from sched_reader.analyzers.simulator.workloads import from_bench_flags, load_workload_yaml
    from sched_reader.report.text_diagnose import describe_workload

    if path is not None:
        req = load_workload_yaml(path, {"seed": seed} if seed else None)
        if overrides.get("max_concurrency") is not None:
            req.max_concurrency = overrides["max_concurrency"]
        return req, f"workload {path} ({len(req)} requests)"
    bench, req = resolve_workload(spec, overrides)
    if req is None:
        req = from_bench_flags(dataset_name=bench.dataset_name, random_input_len=bench.random_input_len,
                               random_output_len=bench.random_output_len, num_prompts=bench.num_prompts,
                               request_rate=bench.request_rate, max_concurrency=bench.max_concurrency, seed=seed)
        return req, describe_workload(bench)
    return req, f"{describe_workload(bench)} (from the file's workload section: means of {len(req)} requests)"
