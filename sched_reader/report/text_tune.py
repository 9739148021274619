"""Text layout of ``sched-reader tune``: the answer first (best command line per target), then the frontier."""

from __future__ import annotations

from typing import Any, Callable


def _lat(p: Any, pct: str) -> str:
    m = p.metrics

    def f(k: str) -> str:
        v = m.get(f"{pct}_{k}_ms")
        return "-" if v is None else (f"{v / 1000:.2f} s" if v >= 10_000 else f"{v:.1f} ms")

    return f"TTFT {pct} {f('ttft')}, TPOT {pct} {f('tpot')}, ITL {pct} {f('itl')}"


def render_tune(echo: Callable[[str], Any], spec: Any, res: Any, top: int) -> None:
    pts = res.points
    started = [p for p in pts if p.starts]
    tgt = ", ".join(f"{k} {res.percentile} <= {v:g} ms" for k, v in res.targets.items()) or "none (max throughput)"
    echo(f"tune {spec.model_name} on {spec.hardware.gpu.name}: {len(pts)} configurations "
         f"({len(pts) - len(started)} do not start), workload {res.workload}, targets: {tgt}")
    for name, idx in res.best.items():
        label = "all targets" if name == "all" else name
        if idx is None:
            echo(f"  best for {label}: no configuration meets it")
            continue
        p = pts[idx]
        echo(f"  best for {label}: {p.throughput_per_gpu:,.0f} tok/s per GPU ({p.output_throughput:,.0f} tok/s on "
             f"{p.gpus} GPU{'s' if p.gpus > 1 else ''}), {_lat(p, res.percentile)}")
        echo(f"    {p.command}")
    echo(f"  Pareto frontier (throughput per GPU vs {res.percentile} latency), {len(res.frontier)} points:")
    for i in res.frontier[:top]:
        p = pts[i]
        f = p.flags
        meets = "" if not p.meets else ("  meets all" if all(p.meets.values()) else
                                        "  misses " + ",".join(k for k, v in p.meets.items() if not v))
        echo(f"    {p.throughput_per_gpu:>8,.0f} tok/s/GPU  {_lat(p, res.percentile)}  | TP {f.get('tensor_parallel_size')}, "
             f"seqs {f.get('max_num_seqs')}, batched-tokens {f.get('max_num_batched_tokens')}, "
             f"gmu {f.get('gpu_memory_utilization')}, kv {f.get('kv_cache_dtype')}"
             + (f", spec {f['speculative']}" if "speculative" in f else "") + meets)
    if len(res.frontier) > top:
        echo(f"    ... {len(res.frontier) - top} more (--top N, or --format json for every point)")
