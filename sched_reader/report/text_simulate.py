"""Text of ``sched-reader simulate``: one table per engine (a column per policy) that fits the width.

Durations in ms or s, rates in req/s and tok/s, KV use as a fraction of the engine's blocks.
"""

from __future__ import annotations

from typing import Any, Callable

from sched_reader.analyzers.simulator.policies import UNLIMITED as _UNLIMITED
from sched_reader.report.console import make_console
from sched_reader.report.layout import cell_width, column_groups, table_lines
from sched_reader.report.units import fmt_duration_ms, fmt_int, fmt_rate


def _params(r: dict[str, Any]) -> dict[str, Any]:
    return r.get("params") or {}


def _token_budget(r: dict[str, Any]) -> str:
    """Tokens one step may schedule; "(chunked)": a longer prompt is prefilled in chunks of that size."""
    p = _params(r)
    budget = p.get("max_num_batched_tokens")
    if budget is None:
        return "n/a"
    text = "unlimited" if budget >= _UNLIMITED else fmt_int(budget)
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


def table_rows(results: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """(header, parameter rows, metric rows) of one engine's table: one column per policy.

    ``failed requests`` shows only when a request failed; ``--metric-percentiles`` adds a row per
    percentile and metric (``p99.9 ITL``)."""
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


def render_simulation(engines: list[dict[str, Any]]) -> None:
    """One table per engine (a column per policy), split into column groups that fit the width, each
    repeating the metric labels; then the notes, wrapped with a hanging indent."""
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
