"""`sched-reader simulate`: replay a workload through vLLM's scheduler (and the lesson's toy policies)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from sched_reader.cli.common import (
    BurstinessOption,
    Dataset,
    DatasetNameOption,
    FormatOption,
    GoodputOption,
    GpuOption,
    InputLenOption,
    MaxConcurrencyOption,
    MetricPercentilesOption,
    ModelConfigOption,
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
    split_inputs,
)


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
        ("failed requests", count("failed")),
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
    """(header, parameter rows, metric rows) of one engine's table: one column per policy.

    ``failed requests`` shows only when a request failed; ``--metric-percentiles`` adds a row per
    percentile and metric (``p99.9 ITL``)."""
    from sched_reader.report.units import fmt_duration_ms

    params, metrics = _row_formatters()
    if not any(r.get("failed") for r in results.values()):
        metrics = [m for m in metrics if m[0] != "failed requests"]
    pcts = next((r.get("metric_percentiles") for r in results.values() if r.get("metric_percentiles")), None)
    for q in pcts or ():
        word = str(int(q)) if float(q) == int(q) else str(q)
        for name in ("ttft", "tpot", "itl", "e2el"):
            key = f"p{word}_{name}_ms"
            metrics.append((f"p{word} {name.upper()}",
                            lambda r, _k=key: fmt_duration_ms(r.get(_k), ms_digits=2)))
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
    """One table per engine (a column per policy), split into column groups that fit the width, each
    repeating the metric labels; then the notes, wrapped with a hanging indent."""
    from sched_reader.report.console import make_console
    from sched_reader.report.layout import cell_width, column_groups, table_lines

    con = make_console()
    width = getattr(con, "width", 100)
    for i, e in enumerate(engines):
        if i:
            con.print()
        con.print(f"engine    {e['name']} ({e['file']})", markup=False)
        con.print(f"workload  {e['workload']}", markup=False)
        header, rows_p, rows_m = table_rows(e["results"])
        rows = rows_p + rows_m
        label_w = max(cell_width(r[0]) for r in [header, *rows])
        col_w = [max(cell_width(r[j]) for r in [header, *rows]) for j in range(1, len(header))]
        for g, group in enumerate(column_groups(label_w, col_w, width)):
            if g:
                con.print()
            cols = [0] + [j + 1 for j in group]
            sub = [[r[c] for c in cols] for r in rows]
            lines = table_lines([header[c] for c in cols], sub, width, sections=[len(rows_p)]) or \
                [f"{r[0]}: " + ", ".join(f"{header[c]} {r[k + 1]}" for k, c in enumerate(cols[1:])) for r in sub]
            for line in lines:
                con.print(line, markup=False)
        con.print("token budget: tokens one step may schedule; (chunked): longer prompts are prefilled in "
                  "chunks of that size", markup=False)
        per_policy = {pol: r.get("notes", []) for pol, r in e["results"].items()}
        shared = [n for n in next(iter(per_policy.values()), []) if all(n in ns for ns in per_policy.values())]
        for note in shared:
            con.print(f"note: {note}", markup=False)
        for pol, notes in per_policy.items():
            for note in notes:
                if note not in shared:
                    con.print(f"note ({pol}): {note}", markup=False)


def simulate(
    files: Optional[List[str]] = typer.Argument(
        None, metavar="FILE",
        help="Deploy files (compose, k8s, helm values, vLLM config); or a command line after --."),
    policy: str = typer.Option("vllm", "--policy", metavar="NAME", help="naive | static | continuous | chunked | vllm."),
    compare: Optional[str] = typer.Option(
        None, "--compare", metavar="LIST", help="Comma list of policies to run side by side, e.g. naive,continuous,vllm."
    ),
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
    seed: int = SeedOption,
    metric_percentiles: Optional[str] = MetricPercentilesOption,
    goodput: Optional[List[str]] = GoodputOption,
    chunk_size: int = typer.Option(512, "--chunk-size", min=1, metavar="N", help="Prefill chunk of the 'chunked' policy (tokens)."),
    slo_ttft_ms: Optional[float] = typer.Option(None, "--slo-ttft-ms", metavar="MS", help="Goodput TTFT target (ms); same as --goodput ttft:MS."),
    slo_tpot_ms: Optional[float] = typer.Option(None, "--slo-tpot-ms", metavar="MS", help="Goodput TPOT target (ms); same as --goodput tpot:MS."),
    plot: Optional[Path] = PlotOption,
    timeseries: Optional[Path] = typer.Option(
        None, "--timeseries", metavar="FILE", help="Write batch size, KV blocks and step time over time to FILE (CSV)."),
    fmt: OutputFormat = FormatOption,
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    profile: Optional[str] = ProfileOption,
) -> None:
    """Predict throughput, TTFT, ITL, KV use and preemptions of a deploy config under a workload.

    Each policy replays the same requests on the same KV budget and step-cost model; the table's first
    rows show the scheduler limits that make the policies differ. A trace (--workload FILE.jsonl, or a
    `workload: {trace: ...}` section) is replayed exactly: its arrival times, lengths and prefixes.

    Exit codes: 0 simulated, 2 unreadable or invalid input (unknown policy, GPU, model or file).

    \b
    Examples:
      sched-reader simulate examples/llama3-8b-h100.yaml
      sched-reader simulate --compare naive,static,continuous,chunked,vllm --num-prompts 200 examples/llama3-8b-h100.yaml
      sched-reader simulate --request-rate 8 --format json -- vllm serve meta-llama/Llama-3.1-8B-Instruct
    """

    def body() -> int:
        from sched_reader.cli.runners.profile import activate_profile
        from sched_reader.errors import InputError

        activate_profile(profile)
        pols = _policies(policy, compare)
        overrides = bench_overrides(
            workload=workload, dataset_name=dataset_name, input_len=input_len, output_len=output_len,
            random_input_len=random_input_len, random_output_len=random_output_len,
            random_range_ratio=random_range_ratio, num_prompts=num_prompts, request_rate=request_rate,
            burstiness=burstiness, max_concurrency=max_concurrency, seed=seed,
            metric_percentiles=metric_percentiles, goodput=goodput)
        slo = dict(overrides.get("goodput") or {})
        if slo_ttft_ms is not None:
            slo["ttft"] = slo_ttft_ms
        if slo_tpot_ms is not None:
            slo["tpot"] = slo_tpot_ms
        if plot is not None:
            from sched_reader.report.plots import check_plot_target

            check_plot_target(plot)
        paths, cmdline = _inputs(files)
        from sched_reader.analyzers.simulator import simulate_spec
        from sched_reader.analyzers.pipeline import build_specs

        specs = build_specs(paths, cmdline or None, gpu=gpu, vllm=vllm, model_config=model_config)
        if not specs:
            raise InputError("no vLLM engine found in the input")
        per_engine = [_workload(spec, overrides) for spec in specs]
        prog, cb = _progress_factory()
        engines = []
        try:
            if prog is not None:
                prog.start()
            for spec, (requests, desc) in zip(specs, per_engine):
                res = simulate_spec(spec, requests, pols, chunk_size=chunk_size, slo_ttft_ms=slo.get("ttft"),
                                    slo_tpot_ms=slo.get("tpot"), slo_e2el_ms=slo.get("e2el"),
                                    percentiles=tuple(overrides.get("metric_percentiles") or ()),
                                    progress=(lambda p, d, t, _n=spec.name: cb(f"{_n}:{p}", d, t)) if cb else None)
                engines.append({"name": spec.name, "file": spec.file, "workload": desc, "results": res})
        finally:
            if prog is not None:
                prog.stop()
        if timeseries is not None:
            _write_timeseries(timeseries, engines)
        if plot is not None:
            from sched_reader.report.plots import plot_simulation

            plot_simulation(engines, plot)
        if fmt == OutputFormat.json:
            typer.echo(json.dumps({"schema_version": 1, "engines": engines}, indent=1))
        else:
            for e in engines:
                for r in e["results"].values():
                    r.pop("timeseries", None)
                    r.pop("histograms", None)
            _text(engines)
        return 0

    raise typer.Exit(run_guarded(body))


def _write_timeseries(path: Path, engines: list[dict[str, Any]]) -> None:
    """CSV: one row per sampled step of each engine and policy (seconds, sequences, blocks, ms)."""
    import csv

    from sched_reader.errors import InputError

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


def register(app: typer.Typer) -> None:
    """Add ``simulate`` to the app."""
    app.command("simulate")(simulate)


def _inputs(config: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Deploy files and the command line after ``--`` (split by the CLI's shared helper)."""
    from sched_reader.errors import InputError

    paths, cmdline = split_inputs(config)
    if not paths and not cmdline:
        raise InputError("give a deploy file or a command line after --")
    for p in paths:
        if not Path(p).exists():
            raise InputError("no such file", file=p)
    return paths, cmdline


def _workload(spec, overrides: dict[str, Any]):
    """(requests, description) for one engine: --workload FILE, else the bench flags, else the file's
    workload section (a trace or classes, replayed request by request), else vllm bench serve's defaults."""
    from sched_reader.analyzers.diagnosis import resolve_workload
    from sched_reader.analyzers.simulator.workloads import from_bench_flags
    from sched_reader.report.text_diagnose import describe_workload

    bench, req = resolve_workload(spec, overrides)
    if req is None:
        req = from_bench_flags(dataset_name=bench.dataset_name, random_input_len=bench.random_input_len,
                               random_output_len=bench.random_output_len, num_prompts=bench.num_prompts,
                               request_rate=bench.request_rate, max_concurrency=bench.max_concurrency,
                               seed=int(overrides.get("seed") or 0), burstiness=bench.burstiness,
                               random_range_ratio=bench.random_range_ratio)
    return req, describe_workload(bench)
