"""`sched-reader simulate`: replay a workload through vLLM's scheduler (and the lesson's toy policies)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from sched_reader.cli.common import (
    ProfileOption,
    Dataset,
    FormatOption,
    GpuOption,
    ModelConfigOption,
    OutputFormat,
    VllmOption,
    run_guarded,
    split_inputs,
)
from sched_reader.limits import MAX_PROMPTS, MAX_SEED, MAX_TOKENS, MIN_REQUEST_RATE, finite_float


_UNLIMITED = 1 << 40  # simulator.policies.UNLIMITED (not imported: keeps `--help` free of the simulator)


def _params(r: dict[str, Any]) -> dict[str, Any]:
    return r.get("params") or {}


def _token_budget(r: dict[str, Any]) -> str:
    """Tokens one step may schedule; "(chunked)": a longer prompt is prefilled in chunks of that size."""
    from sched_reader.report.units import fmt_int

    p = _params(r)
    budget = p.get("max_num_batched_tokens")
    if budget is None:
        return "n/a"
    text = "unlimited" if budget >= _UNLIMITED else fmt_int(budget)
    return f"{text} (chunked)" if p.get("enable_chunked_prefill") else text


def _row_formatters() -> tuple[list[tuple[str, Callable[[dict[str, Any]], str]]], list[tuple[str, Callable]]]:
    """(parameter rows, metric rows) of the text table: label and cell formatter of one policy's result."""
    from sched_reader.report.units import fmt_duration_ms, fmt_int, fmt_rate

    def dur(key: str, digits: int = 1) -> Callable[[dict[str, Any]], str]:
        return lambda r: fmt_duration_ms(r.get(key), ms_digits=digits)

    def rate(key: str, unit: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: fmt_rate(r.get(key), unit)

    def pct(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: "n/a" if r.get(key) is None else f"{r[key]:.1%}"

    def count(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: fmt_int(r.get(key))

    params = [
        ("max-num-seqs", lambda r: fmt_int(_params(r).get("max_num_seqs"))),
        ("token budget", _token_budget),
        ("KV blocks", lambda r: fmt_int(_params(r).get("num_blocks"))),
    ]
    metrics = [
        ("request throughput", rate("request_throughput", "req/s")),
        ("output throughput", rate("output_throughput", "tok/s")),
        ("total throughput", rate("total_token_throughput", "tok/s")),
        ("mean TTFT", dur("mean_ttft_ms")),
        ("p99 TTFT", dur("p99_ttft_ms")),
        ("mean TPOT", dur("mean_tpot_ms", 2)),
        ("mean ITL", dur("mean_itl_ms", 2)),
        ("p99 ITL", dur("p99_itl_ms", 2)),
        ("p99 E2EL", dur("p99_e2el_ms")),
        ("goodput", rate("request_goodput", "req/s")),
        ("peak KV use", pct("kv_peak_use")),
        ("mean KV use", pct("kv_mean_use")),
        ("KV fragmentation", pct("kv_fragmentation")),
        ("preemptions", count("preemptions")),
        ("steps", count("num_steps")),
    ]
    return params, metrics


def _rate(text: str) -> float:
    """``--request-rate`` in requests/s: at least ``limits.MIN_REQUEST_RATE``, or inf (all at once)."""
    return finite_float(text, key="--request-rate", lo=MIN_REQUEST_RATE, unit="req/s", allow_inf=True,
                        hint="a rate in requests/s, or inf to send every request at once")


def _policies(policy: str, compare: str | None) -> list[str]:
    """The policies to run, in the order given; an unknown name is an input error with a suggestion."""
    import difflib

    from sched_reader.analyzers.simulator.policies import POLICIES
    from sched_reader.errors import InputError

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
    from rich.console import Console
    from rich.progress import Progress

    prog = Progress(console=Console(stderr=True), transient=True)
    tasks: dict[str, Any] = {}

    def cb(label: str, done: int, total: int) -> None:
        if label not in tasks:
            tasks[label] = prog.add_task(f"simulating {label}", total=total)
        prog.update(tasks[label], completed=done)

    return prog, cb


def table_rows(results: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """(header, parameter rows, metric rows) of one engine's table: one column per policy."""
    params, metrics = _row_formatters()
    header = ["metric", *(pol.upper() for pol in results)]
    sizes = {_params(r).get("block_size") for r in results.values()} - {None}
    rows_p = []
    for label, cell in params:
        if label == "KV blocks" and len(sizes) == 1:
            label = f"KV blocks of {sizes.pop()} tokens"
        rows_p.append([label, *(cell(r) for r in results.values())])
    rows_m = [[label, *(cell(r) for r in results.values())] for label, cell in metrics]
    return header, rows_p, rows_m


def plain_table(header: list[str], *sections: list[list[str]]) -> list[str]:
    """Aligned text lines: first column left, the others right; a dashed rule between sections."""
    rows = [header] + [row for sec in sections for row in sec]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]

    def line(row: list[str]) -> str:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [line(header)]
    for sec in sections:
        out.append(rule)
        out.extend(line(row) for row in sec)
    return out


def _text(engines: list[dict[str, Any]]) -> None:
    from sched_reader.report.console import PlainConsole, make_console

    con = make_console()
    for i, e in enumerate(engines):
        if i:
            con.print()
        con.print(f"engine    {e['name']} ({e['file']})", markup=False)
        con.print(f"workload  {e['workload']}", markup=False)
        header, rows_p, rows_m = table_rows(e["results"])
        if isinstance(con, PlainConsole):
            for line in plain_table(header, rows_p, rows_m):
                con.print(line)
        else:
            from rich.table import Table

            table = Table()
            table.add_column(header[0])
            for name in header[1:]:
                table.add_column(name, justify="right")
            for row in rows_p:
                table.add_row(*row)
            table.add_section()
            for row in rows_m:
                table.add_row(*row)
            con.print(table)
        con.print("token budget: tokens one step may schedule; (chunked): longer prompts are prefilled in "
                  "chunks of that size", markup=False)
        for pol, r in e["results"].items():
            for note in r.get("notes", []):
                con.print(f"note ({pol}): {note}", markup=False)


def simulate(
    config: Optional[List[str]] = typer.Argument(
        None, help="Deploy file(s) (compose, k8s, helm values, vLLM config); or a command line after --."
    ),
    policy: str = typer.Option("vllm", "--policy", help="naive | static | continuous | chunked | vllm."),
    compare: Optional[str] = typer.Option(
        None, "--compare", help="Comma list of policies to run side by side, e.g. naive,continuous,vllm."
    ),
    workload: Optional[Path] = typer.Option(None, "--workload", help="Workload YAML (classes, arrivals, trace)."),
    dataset_name: Optional[Dataset] = typer.Option(
        None, "--dataset-name", case_sensitive=False, help="Workload shape, as `vllm bench serve` (default random)."
    ),
    random_input_len: Optional[int] = typer.Option(None, "--random-input-len", min=1, max=MAX_TOKENS, help="Prompt tokens (random dataset; default 1024)."),
    random_output_len: Optional[int] = typer.Option(None, "--random-output-len", min=1, max=MAX_TOKENS, help="Output tokens (random dataset; default 128)."),
    num_prompts: Optional[int] = typer.Option(None, "--num-prompts", min=1, max=MAX_PROMPTS, help="Requests in the run (default 1000)."),
    request_rate: Optional[str] = typer.Option(None, "--request-rate", help="Requests/s (Poisson arrivals), or inf for all at once (default inf)."),
    max_concurrency: Optional[int] = typer.Option(None, "--max-concurrency", min=1, max=MAX_PROMPTS, help="Cap on requests in flight."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Random seed of the generated workload."),
    chunk_size: int = typer.Option(512, "--chunk-size", min=1, help="Prefill chunk of the 'chunked' policy (tokens)."),
    slo_ttft_ms: Optional[float] = typer.Option(None, "--slo-ttft-ms", help="Goodput TTFT target (ms)."),
    slo_tpot_ms: Optional[float] = typer.Option(None, "--slo-tpot-ms", help="Goodput TPOT/ITL target (ms)."),
    fmt: OutputFormat = FormatOption,
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    profile: Optional[str] = ProfileOption,
) -> None:
    """Predict throughput, TTFT, ITL, KV use and preemptions of a deploy config under a workload.

    Each policy replays the same requests on the same KV budget and step-cost model; the table's first
    rows show the scheduler limits that make the policies differ.

    Exit codes: 0 simulated, 2 unreadable or invalid input (unknown policy, GPU, model or file).

    \b
    Examples:
      sched-reader simulate deploy.yaml
      sched-reader simulate --compare naive,static,continuous,chunked,vllm --num-prompts 200 deploy.yaml
      sched-reader simulate --request-rate 8 --format json -- vllm serve meta-llama/Llama-3.1-8B-Instruct
    """

    def body() -> int:
        from sched_reader.errors import InputError
        from sched_reader.cli.common import activate_profile

        activate_profile(profile)

        pols = _policies(policy, compare)
        rate = _rate(request_rate) if request_rate is not None else None
        paths, cmdline = _inputs(config)
        from sched_reader.analyzers.simulator import simulate_spec
        from sched_reader.analyzers.pipeline import build_specs

        specs = build_specs(paths, cmdline or None, gpu=gpu, vllm=vllm, model_config=model_config)
        if not specs:
            raise InputError("no vLLM engine found in the input")
        overrides = {"dataset_name": dataset_name.value if dataset_name else None,
                     "random_input_len": random_input_len, "random_output_len": random_output_len,
                     "num_prompts": num_prompts, "request_rate": rate, "max_concurrency": max_concurrency}
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
        if fmt == OutputFormat.json:
            typer.echo(json.dumps({"schema_version": 1, "engines": engines}, indent=1))
        else:
            for e in engines:
                for r in e["results"].values():
                    r.pop("timeseries", None)
            _text(engines)
        return 0

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``simulate`` to the app."""
    app.command("simulate")(simulate)


def _inputs(config: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Deploy files and the command line after ``--`` (split by the CLI's shared helper)."""
    from sched_reader.errors import InputError

    paths, cmdline = split_inputs(config)
    if not paths and not cmdline:
        raise InputError("give a deploy file or a command line after --")
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
        return req, f"workload {path} ({len(req):,} requests)"
    bench, req = resolve_workload(spec, overrides)
    if req is None:
        req = from_bench_flags(dataset_name=bench.dataset_name, random_input_len=bench.random_input_len,
                               random_output_len=bench.random_output_len, num_prompts=bench.num_prompts,
                               request_rate=bench.request_rate, max_concurrency=bench.max_concurrency, seed=seed)
        return req, describe_workload(bench)
    return req, f"{describe_workload(bench)} (from the file's workload section: means of {len(req):,} requests)"
