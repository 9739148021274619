"""Text formatter for ``sched-reader diagnose``: memory bar, KV capacity, speed, verdict, findings."""

from __future__ import annotations

from typing import Any


from sched_reader.report.layout import table_lines
from sched_reader.report.text_config import render_engine_header, render_findings
from sched_reader.report.units import fmt_duration_ms, fmt_int, fmt_rate
from sched_reader.analyzers.whatif import effect_line

BAR_WIDTH = 60
_SEGMENTS = (
    ("weights_gib", "W", "weights"),
    ("activation_peak_gib", "A", "activations"),
    ("non_torch_gib", "N", "non-torch"),
    ("cuda_graph_gib", "G", "CUDA graphs"),
    ("kv_cache_gib", "K", "KV cache"),
)


def memory_bar(mem: dict[str, Any]) -> tuple[str, list[str]]:
    """A fixed-width bar of one GPU's memory and its legend lines (GiB per GPU)."""
    total = float(mem.get("total_gib") or 0.0)
    if total <= 0:
        return "", []
    cells: list[str] = []
    legend: list[str] = []
    used = 0.0
    for key, ch, label in _SEGMENTS:
        v = float(mem.get(key) or 0.0)
        if v <= 0:
            continue
        used += v
        n = int(round(v / total * BAR_WIDTH))
        cells.append(ch * n)
        legend.append(f"{ch} {label:12} {v:8.2f} GiB")
    unused = max(0.0, total - used)
    cells.append("." * max(0, BAR_WIDTH - sum(len(c) for c in cells)))
    legend.append(f". {'unused':12} {unused:8.2f} GiB  (total {total:.2f} GiB, requested {float(mem.get('requested_gib') or 0):.2f} GiB)")
    return "[" + "".join(cells)[:BAR_WIDTH] + "]", legend


def _fmt(v: Any, unit: str, digits: int = 1) -> str:
    if v is None or isinstance(v, (int, float)):
        return fmt_rate(v, unit, digits)
    return f"{v} {unit}"


ITL_P99_NA = "n/a (steady-state formula; run with a queueing workload for tails)"


def speculative_line(sp: Any, max_num_seqs: int | None = None) -> str | None:
    """One line for the performance block's ``speculative`` entry (None when there is none).

    Method and draft tokens, the assumed per-token acceptance, tokens committed per verify step, the
    speedup at the operating batch, and the batch from which speculation stops paying (or why none).
    """
    if not isinstance(sp, dict) or not sp:
        return None
    parts = [f"{sp.get('method') or 'unknown method'}, {fmt_int(sp.get('num_speculative_tokens'))} draft tokens"]
    acc = sp.get("acceptance_rate")
    if isinstance(acc, (int, float)):
        how = "given" if sp.get("acceptance_source") == "given" else "assumed"
        parts.append(f"acceptance {acc:.2f} per token ({how})")
    tps = sp.get("tokens_per_step")
    if isinstance(tps, (int, float)):
        parts.append(f"{tps:.2f} tokens per step")
    step = sp.get("step_at_operating_batch")
    if isinstance(step, dict) and isinstance(step.get("speedup"), (int, float)):
        parts.append(f"speedup {step['speedup']:.2f}x at batch {fmt_int(step.get('num_seqs'))}")
    b = sp.get("breakeven_batch")
    if isinstance(b, int) and b <= 1:
        parts.append("break-even batch 1 (no speedup at any batch)")
    elif isinstance(b, int):
        parts.append(f"break-even batch {fmt_int(b)} (no speedup from there on)")
    elif "breakeven_batch" in sp:
        upto = f" up to max-num-seqs {fmt_int(max_num_seqs)}" if max_num_seqs else ""
        parts.append(f"no break-even batch: speculation pays at every batch{upto}")
    return ", ".join(parts)


_BINDS = {  # (verdict line, summary table cell)
    "does_not_start": ("vLLM will not start", "does not start"),
    "kv_cache_blocks": ("KV cache binds", "KV cache"),
    "max_num_seqs": ("--max-num-seqs binds", "max-num-seqs"),
    "token_budget": ("chunked prefill's token budget binds", "token budget"),
    "prefill_stall": ("prefill stalls decodes (chunked prefill off)", "prefill stalls"),
    "workload_concurrency": ("no default binds", "none"),
}


def binds_label(v: Any, short: bool = False) -> str:
    """What binds, with its figure (sequences, in-flight requests); ``short`` for the summary table."""
    if v is None:
        return "not computed"
    label = _BINDS.get(v.bottleneck, (v.bottleneck, v.bottleneck))[1 if short else 0]
    lim = v.limits or {}
    if v.bottleneck == "kv_cache_blocks":
        return f"{label} ({fmt_int(lim.get('kv_cache_blocks'))} seqs)"
    if v.bottleneck == "max_num_seqs":
        return f"{label} (KV holds {fmt_int(lim.get('kv_cache_blocks'))})"
    if v.bottleneck == "workload_concurrency":
        return (f"{label} ({fmt_int(lim.get('workload_concurrency'))} in flight"
                + (" per DP engine)" if lim.get("data_parallel_size") else ")"))
    return label


def first_change(v: Any) -> str:
    """The first recommended change and its predicted effect (or why), in one phrase."""
    if v is None or not v.recommendations:
        return "none needed"
    r = v.recommendations[0]
    eff = getattr(r, "effect", None)
    if isinstance(eff, dict) and eff.get("before") is not None:
        effect = f"predicted {short_effect(eff)}"
    else:
        effect = eff or r.why
    return f"{r.flag} {r.current} -> {r.suggested}: {effect}"


def short_effect(eff: dict[str, Any]) -> str:
    """The effect in a few words: the target metric, then output throughput and mean TTFT when they move
    (the full list is on the recommendation's own ``predicted effect`` line)."""
    target = eff.get("target")
    keep = [k for k in (target, "output_throughput", "mean_ttft_ms") if k]
    trim = {**eff, "before": {k: eff["before"].get(k) for k in keep},
            "after": {k: eff["after"].get(k) for k in keep}}
    return effect_line(trim)


def verdict_line(d: Any) -> str | None:
    """``diagnose``'s answer first: what binds, then the first change and its predicted effect."""
    v = d.verdict
    if v is None:
        return None
    if v.bottleneck == "does_not_start":
        head = f"vLLM will not start: {v.summary}"
        return head + (f"; first change {first_change(v)}" if v.recommendations else "")
    if not v.recommendations:
        if getattr(d, "recommendations_dropped", 0):
            return f"{binds_label(v)}; no flag change predicted to improve it"
        return f"{binds_label(v)}; no flag change needed for this workload"
    return f"{binds_label(v)}; first change {first_change(v)}"


def render_diagnoses(console: Any, results: list[Any], explain: bool = False) -> None:
    for i, d in enumerate(results):
        if i:
            console.print()
        render_one(console, d, explain)
    if len(results) > 1:
        console.print()
        for line in summary_lines(results, getattr(console, "width", 100)):
            console.print(line, markup=False)


def summary_lines(results: list[Any], width: int) -> list[str]:
    """The multi-engine summary: one row per engine (what binds, output tok/s, TTFT, ITL p99, change)."""
    rows = []
    for d in results:
        p = d.performance or {}
        rows.append([
            d.spec.name, binds_label(d.verdict, short=True),
            fmt_rate(p.get("output_throughput"), "tok/s", 0) if p else "n/a",
            fmt_duration_ms(p.get("mean_ttft_ms")) if p else "n/a",
            fmt_duration_ms(p.get("p99_itl_ms"), ms_digits=1) if p.get("p99_itl_ms") is not None else "n/a",
            first_change(d.verdict) if d.verdict is not None else "n/a",
        ])
    head = ["engine", "binds", "output", "TTFT mean", "ITL p99", "first change"]
    table = table_lines(head, rows, width, align_right_from=2, min_flex=24)
    if table is None:  # too narrow for six columns: one wrapped entry per engine
        table = [f"{r[0]}: {r[1]}; output {r[2]}, TTFT mean {r[3]}, ITL p99 {r[4]}; first change {r[5]}"
                 for r in rows]
    return [f"summary of {len(results)} engines", *table]


def roofline_line(r: dict[str, Any]) -> str:
    """One phase's roofline in words whose numbers agree with the bound.

    The bound is the kind of term that takes most of the step's GPU time; the figures quoted are that
    kind's largest term (its intensity is below its own ridge when it is memory-bound, above when
    compute-bound) and the share of the time it accounts for. The whole step's average intensity is
    quoted apart, since it can sit on the other side of a ridge (decode: the weight GEMMs run above it
    at a large batch while attention reads the KV cache far below it)."""
    bound = r.get("bound") or "?"
    terms = [t for t in (r.get("terms") or []) if isinstance(t, dict)]
    total = sum(float(t.get("time_s") or 0.0) for t in terms)
    same = [t for t in terms if t.get("bound") == bound]
    if not terms or total <= 0 or not same:
        return (f"{bound}-bound: intensity {_fmt(r.get('intensity_flop_per_byte'), 'FLOP/B')}"
                f" (ridge {_fmt(r.get('ridge_flop_per_byte'), 'FLOP/B')})")
    share = sum(float(t.get("time_s") or 0.0) for t in same) / total
    top = max(same, key=lambda t: float(t.get("time_s") or 0.0))
    ti, tr = top.get("intensity_flop_per_byte"), top.get("ridge_flop_per_byte")
    detail = f"{top.get('name')} at {_fmt(ti, 'FLOP/B')}"
    if isinstance(ti, (int, float)) and isinstance(tr, (int, float)):
        side = "below" if ti < tr else "above"
        detail += f", {side} its ridge {_fmt(tr, 'FLOP/B')}"
    avg = r.get("intensity_flop_per_byte")
    return (f"{bound}-bound: {share:.0%} of the step time in {bound}-bound terms, the largest {detail}"
            + (f"; whole step {_fmt(avg, 'FLOP/B')}" if isinstance(avg, (int, float)) else ""))


def render_one(console: Any, d: Any, explain: bool) -> None:
    spec = d.spec
    render_engine_header(console, spec, verdict_line(d))
    eff = spec.effective
    dp = max(1, int(eff.data_parallel_size))
    console.print(
        f"  serving      TP {eff.tensor_parallel_size} x PP {eff.pipeline_parallel_size}"
        + (f" x DP {dp}" if dp > 1 else "") + ", max-model-len "
        f"{eff.max_model_len:,}, dtype {eff.dtype}, quantization {eff.quantization or 'none'}, "
        f"kv-cache-dtype {eff.kv_cache_dtype}",
        markup=False,
    )
    console.print(
        f"  scheduler    max-num-seqs {eff.max_num_seqs:,}, max-num-batched-tokens {eff.max_num_batched_tokens:,}, "
        f"chunked prefill {'on' if eff.enable_chunked_prefill else 'off'}, prefix caching "
        f"{'on' if eff.enable_prefix_caching else 'off'}, gpu-memory-utilization {eff.gpu_memory_utilization:.2f}",
        markup=False,
    )
    for note in spec.notes:
        console.print(f"  note: {note}", markup=False)
    if d.capacity is None:
        spec.findings = d.findings
        render_findings(console, spec)
        return
    cap = d.capacity.to_json()
    mem, kv = cap["memory"], cap["kv_cache"]
    bar, legend = memory_bar(mem)
    console.print("  memory per GPU (as vLLM logs it)", markup=False)
    if bar:
        console.print(f"    {bar}", markup=False)
    for line in legend:
        console.print(f"    {line}", markup=False)
    if kv.get("fits"):
        console.print(
            f"  KV cache     {kv['tokens']:,} tokens in {kv['num_blocks']:,} blocks of {kv['block_size']} "
            f"({kv['bytes_per_token']:,} bytes/token); max concurrency at {eff.max_model_len:,} tokens: "
            f"{kv['max_concurrency']:.2f}x"
            # vLLM: every DP engine core logs its own "GPU KV cache size" and "Maximum concurrency"
            + (f", per DP engine as each logs it ({dp} engines: {dp * kv['tokens']:,} tokens in all)"
               if dp > 1 else ""),
            markup=False,
        )
    else:
        console.print(f"  KV cache     vLLM will not start: {kv.get('error')}", markup=False)
    waste = getattr(d, "kv_waste", None)
    if waste is not None:
        console.print(
            f"  KV waste     paged blocks {waste.paged.waste_fraction:.1%} ({waste.paged.max_concurrency:,.0f} requests fit"
            + (" per DP engine" if dp > 1 else "") + ") "
            f"vs contiguous to max-model-len {waste.contiguous.waste_fraction:.1%} "
            f"({waste.contiguous.max_concurrency:,.0f} fit), mean {waste.mean_len:,.0f} tokens per request",
            markup=False,
        )
    perf = d.performance
    if perf:
        w = d.workload
        desc = describe_workload(w)
        console.print(f"  workload     {desc}", markup=False)
        p99_itl = perf.get("p99_itl_ms")
        console.print(
            "  predicted    "
            f"output {fmt_rate(perf.get('output_throughput'), 'tok/s', 0)}{_likely(perf, 'output_throughput')}, "
            f"TTFT mean {fmt_duration_ms(perf.get('mean_ttft_ms'))}{_likely(perf, 'mean_ttft_ms')}, "
            f"TPOT mean {fmt_duration_ms(perf.get('mean_tpot_ms'), ms_digits=2)}{_likely(perf, 'mean_tpot_ms')}, "
            f"ITL p99 {fmt_duration_ms(p99_itl, ms_digits=2) if p99_itl is not None else ITL_P99_NA}",
            markup=False,
        )
        spec_line = speculative_line(perf.get("speculative"), eff.max_num_seqs)
        if spec_line:
            console.print(f"  speculative  {spec_line}", markup=False)
        roof = perf.get("roofline") or {}
        for phase in ("prefill", "decode"):
            r = roof.get(phase)
            if isinstance(r, dict) and r.get("bound"):
                console.print(f"  {phase:12} {roofline_line(r)}", markup=False)
    v = d.verdict
    if v is not None:
        console.print(f"  bottleneck   {v.bottleneck}: {v.summary}", markup=False)
        for r in v.recommendations:
            console.print(f"    change {r.flag} {r.current} -> {r.suggested}: {r.why}", markup=False)
            if getattr(r, "effect", None):
                console.print(f"      predicted effect: {effect_line(r.effect)}", markup=False)
    if getattr(d, "what_if", None):
        w = d.what_if
        console.print(f"  what-if      {' '.join(w['set'])}: {effect_line(w)}", markup=False)
        if explain:
            for f in v.figures:
                console.print(f"    {f.name}: {f.value:,} {f.unit} = {f.formula}", markup=False)
    if explain:
        console.print("  explain", markup=False)
        for term in cap.get("explain", []):
            console.print(f"    {_term_line(term)}", markup=False)
        for term in (perf or {}).get("explain", []) or []:
            console.print(f"    {_term_line(term)}", markup=False)
    spec.findings = d.findings
    render_findings(console, spec)


def _term_line(term: Any) -> str:
    if isinstance(term, dict):
        name = term.get("name", "")
        value = term.get("value")
        unit = term.get("unit", "")
        formula = term.get("formula", "")
        guessed = " (guessed)" if term.get("guessed") else ""
        inputs = term.get("inputs")
        ins = ""
        if isinstance(inputs, dict) and inputs:
            ins = " with " + ", ".join(f"{k}={_num(v)}" for k, v in inputs.items())
        return f"{name} = {_num(value)} {unit}{guessed}: {formula}{ins}"
    return str(term)


def _num(v: Any) -> str:
    """A number as a person reads it: integers with separators, floats to 4 significant digits."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return f"{int(v):,}"


def describe_workload(w: Any) -> str:
    """One line: where the requests come from, their lengths, count and arrival.

    A trace or workload file is described as it is replayed (request count, measured arrival rate, mean
    and 99th-percentile prompt), never as the bench-style means it is summarized by."""
    import math

    rate = "all at once" if math.isinf(w.request_rate) else f"{w.request_rate:.3g} req/s"
    conc = f", max concurrency {w.max_concurrency}" if w.max_concurrency else ""
    if getattr(w, "endpoint", "completions") == "chat":
        conc += ", via /v1/chat/completions"
    elif getattr(w, "endpoint", "completions") == "offline":
        conc += ", offline (vllm bench throughput: no API server)"
    if getattr(w, "source", None):
        st = w.length_stats or {}
        over = f" over {st['arrival_span_s']:,.0f} s" if st.get("arrival_span_s") else ""
        arrival = "all at once" if math.isinf(w.request_rate) else f"{rate}{over}"
        return (f"{w.source}, replayed request by request: {w.num_prompts:,} requests, {arrival}{conc}; "
                f"prompts mean {w.random_input_len:,} / p99 {st.get('prompt_p99', 0):,} / max "
                f"{st.get('prompt_max', 0):,} tokens, outputs mean {w.random_output_len:,} tokens")
    if w.dataset_name == "sharegpt":
        lengths = f"sharegpt (mean {w.mean_input_len():.0f} in / {w.mean_output_len():.0f} out tokens)"
    elif w.random_range_ratio:
        lengths = (f"random {w.random_input_len} in / {w.random_output_len} out tokens "
                   f"(range ratio {w.random_range_ratio:g})")
    else:
        lengths = f"random {w.random_input_len} in / {w.random_output_len} out tokens"
    if w.dataset_name == "random" and getattr(w, "random_prefix_len", 0):
        lengths += f" after a {w.random_prefix_len:,}-token prefix all prompts share"
    burst = f" (burstiness {w.burstiness:g})" if getattr(w, "burstiness", 1.0) != 1.0 and not math.isinf(w.request_rate) else ""
    return f"{lengths}, {w.num_prompts} prompts, {rate}{burst}{conc}"


def _likely(perf: dict, key: str) -> str:
    """", likely LOW-HIGH" from ``perf[key + '_range']`` (the model's measured error on published
    benchmarks, models/cost/error_bands.py), in the metric's unit; empty when there is no range."""
    rng = perf.get(f"{key}_range")
    if not rng or len(rng) != 2:
        return ""
    lo, hi = rng
    if key == "output_throughput":
        return f" (likely {lo:,.0f}-{hi:,.0f})"
    digits = 2 if key == "mean_tpot_ms" else None
    if digits is None:
        return f" (likely {fmt_duration_ms(lo)}-{fmt_duration_ms(hi)})"
    return f" (likely {fmt_duration_ms(lo, ms_digits=2)}-{fmt_duration_ms(hi, ms_digits=2)})"
