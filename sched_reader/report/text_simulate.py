"""``sched-reader simulate`` as text: per engine, one column per policy -- the scheduler limits that make
the policies differ, then throughput, latency, KV use and preemptions."""

from __future__ import annotations

from typing import Any, Callable

from rich.table import Table

from sched_reader.analyzers.simulator.policies import UNLIMITED
from sched_reader.report.console import PlainConsole, make_console
from sched_reader.report.units import fmt_duration_ms, fmt_int, fmt_rate


def _params(r: dict[str, Any]) -> dict[str, Any]:
    return r.get("params") or {}


def _token_budget(r: dict[str, Any]) -> str:
    """Tokens one step may schedule; "(chunked)": a longer prompt is prefilled in chunks of that size."""
    p = _params(r)
    budget = p.get("max_num_batched_tokens")
    if budget is None:
        return "n/a"
    text = "unlimited" if budget >= UNLIMITED else fmt_int(budget)
    return f"{text} (chunked)" if p.get("enable_chunked_prefill") else text


def _row_formatters() -> tuple[list[tuple[str, Callable[[dict[str, Any]], str]]], list[tuple[str, Callable]]]:
    """(parameter rows, metric rows) of the text table: label and cell formatter of one policy's result."""
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


def render_simulation(engines: list[dict[str, Any]]) -> None:
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
