"""Pictures (``--plot FILE.png|svg``) through the optional ``plot`` extra (matplotlib).

* ``diagnose``: per engine, one GPU's memory as a stacked bar (GiB, as vLLM's profiler splits it) and
  the roofline (attainable FLOP/s against arithmetic intensity) with the prefill and decode operating
  points of the performance model.
* ``simulate``: per policy (one row each with ``--compare``), running sequences and KV-cache use over
  time, and the TTFT and ITL histograms (log-spaced bins).
* ``tune``: :func:`plot_frontier` draws measured or predicted points and their Pareto frontier.

Everything is drawn from the JSON the commands print (no model is re-run here); matplotlib is imported
only when a plot is asked for, with the Agg backend (no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from sched_reader.errors import InputError

FORMATS = (".png", ".svg")
INSTALL_HINT = "pip install 'sched-reader[plot]'"
_MEM_SEGMENTS = (
    ("weights_gib", "weights", "#4C72B0"),
    ("activation_peak_gib", "activations", "#DD8452"),
    ("non_torch_gib", "non-torch", "#937860"),
    ("cuda_graph_gib", "CUDA graphs", "#8172B3"),
    ("kv_cache_gib", "KV cache", "#55A868"),
)


def check_plot_target(path: Path) -> None:
    """Fail early (before any work) on an unknown image format or a missing matplotlib."""
    import importlib.util

    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"unknown image format {path.suffix or '(none)'!r}; use .png or .svg", key="--plot")
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError("--plot needs matplotlib, which is not installed", key="--plot",
                         hint=f"install the plot extra: {INSTALL_HINT}")


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("plots need matplotlib, which is not installed", key="--plot",
                         hint=f"install the plot extra: {INSTALL_HINT}") from None
    return plt


def _save(fig: Any, path: Path) -> None:
    path = Path(path)
    try:
        fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": "sched-reader"}
                    if path.suffix.lower() == ".png" else None)
    except OSError as err:
        raise InputError(f"cannot write the plot: {err.strerror or err}", file=str(path), key="--plot") from None
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


# ------------------------------------------------------------------------------------------------
# diagnose
# ------------------------------------------------------------------------------------------------


def roof_parameters(phase: dict[str, Any]) -> tuple[float, float] | None:
    """(achievable FLOP/s, achievable bytes/s) of a roofline phase, from its terms: the bandwidth of the
    term that moves the most bytes (bytes / memory time) and the ridge of the largest GEMM x bandwidth."""
    terms = [t for t in phase.get("terms") or [] if isinstance(t, dict)]
    mem = [t for t in terms if (t.get("memory_s") or 0) > 0 and (t.get("bytes") or 0) > 0]
    ridge = phase.get("ridge_flop_per_byte")
    if not mem or not ridge:
        return None
    big = max(mem, key=lambda t: t["bytes"])
    bw = big["bytes"] / big["memory_s"]
    return ridge * bw, bw


def operating_point(phase: dict[str, Any]) -> tuple[float, float] | None:
    """(intensity FLOP/B, achieved FLOP/s) of one step of the phase: its FLOPs over its GPU time."""
    flops, nbytes, gpu_ms = phase.get("flops"), phase.get("bytes"), phase.get("gpu_time_ms")
    if not flops or not nbytes or not gpu_ms:
        return None
    return flops / nbytes, flops / (gpu_ms / 1e3)


def plot_diagnoses(engines: Sequence[dict[str, Any]], path: Path) -> None:
    """One row per engine: its memory bar and its roofline with the prefill and decode points."""
    plt = _pyplot()
    rows = [e for e in engines if e.get("memory")] or list(engines)[:1]
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 3.6 * len(rows)), squeeze=False,
                             gridspec_kw={"width_ratios": [1.1, 1]})
    for (ax_mem, ax_roof), e in zip(axes, rows):
        _memory_bar(ax_mem, e)
        _roofline(ax_roof, e)
    fig.tight_layout()
    _save(fig, path)


def _memory_bar(ax: Any, e: dict[str, Any]) -> None:
    mem = e.get("memory") or {}
    total = float(mem.get("total_gib") or 0.0)
    left = 0.0
    for key, label, color in _MEM_SEGMENTS:
        v = float(mem.get(key) or 0.0)
        if v <= 0:
            continue
        ax.barh([0], [v], left=left, color=color, label=f"{label} {v:.1f} GiB")
        if v / max(total, 1e-9) > 0.08:
            ax.text(left + v / 2, 0, f"{v:.1f}", ha="center", va="center", color="white", fontsize=9)
        left += v
    if total > left:
        ax.barh([0], [total - left], left=left, color="#DDDDDD", label=f"unused {total - left:.1f} GiB")
    req = mem.get("requested_gib")
    if req:
        ax.axvline(float(req), color="black", linestyle="--", linewidth=1)
        ax.text(float(req), 0.45, " requested", fontsize=8, va="bottom")
    ax.set_xlim(0, max(total, left) * 1.02 or 1)
    ax.set_yticks([])
    ax.set_xlabel("GiB per GPU")
    kv = e.get("kv_cache") or {}
    tok = f", KV {kv['tokens']:,} tokens" if kv.get("tokens") else ""
    ax.set_title(f"{e.get('name', 'engine')}: memory per GPU{tok}", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, fontsize=8, frameon=False)


def _roofline(ax: Any, e: dict[str, Any]) -> None:
    import numpy as np

    roof = ((e.get("performance") or {}).get("roofline")) or {}
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("FLOP/s")
    ax.set_title("roofline: prefill and decode steps", fontsize=10)
    drawn = False
    xs_all = []
    for phase, marker, color in (("prefill", "s", "#C44E52"), ("decode", "o", "#4C72B0")):
        ph = roof.get(phase)
        if not isinstance(ph, dict):
            continue
        params = roof_parameters(ph)
        pt = operating_point(ph)
        if params and not drawn:
            peak, bw = params
            x = np.geomspace(0.5, 1e4, 200)
            ax.plot(x, np.minimum(peak, bw * x), color="black", linewidth=1.5,
                    label=f"roof: {peak / 1e12:,.0f} TFLOP/s, {bw / 1e12:.2f} TB/s")
            ax.axvline(peak / bw, color="grey", linestyle=":", linewidth=1)
            drawn = True
        if pt:
            xs_all.append(pt[0])
            ax.plot([pt[0]], [pt[1]], marker=marker, color=color, markersize=9, linestyle="none",
                    label=f"{phase} ({ph.get('bound')}-bound) {pt[0]:,.0f} FLOP/B")
    if not drawn and not xs_all:
        ax.text(0.5, 0.5, "no performance figures", ha="center", va="center", transform=ax.transAxes)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="both", alpha=0.2)


# ------------------------------------------------------------------------------------------------
# simulate
# ------------------------------------------------------------------------------------------------


def plot_simulation(engines: Sequence[dict[str, Any]], path: Path, max_rows: int = 10) -> None:
    """One row per (engine, policy): batch size and KV use over time, TTFT histogram, ITL histogram."""
    plt = _pyplot()
    rows = [(e, pol, r) for e in engines for pol, r in (e.get("results") or {}).items()][:max_rows]
    if not rows:
        raise InputError("nothing to plot: no simulation result", key="--plot")
    fig, axes = plt.subplots(len(rows), 3, figsize=(14, 3.0 * len(rows)), squeeze=False,
                             gridspec_kw={"width_ratios": [1.6, 1, 1]})
    for (ax_t, ax_ttft, ax_itl), (e, pol, r) in zip(axes, rows):
        who = f"{e.get('name', '')}: {pol}" if len(engines) > 1 else pol
        _over_time(ax_t, r, who)
        _histogram(ax_ttft, (r.get("histograms") or {}).get("ttft_ms"), "TTFT (ms)", "requests",
                   r.get("p99_ttft_ms"))
        _histogram(ax_itl, (r.get("histograms") or {}).get("itl_ms"), "inter-token latency (ms)", "token gaps",
                   r.get("p99_itl_ms"))
    fig.tight_layout()
    _save(fig, path)


def _over_time(ax: Any, r: dict[str, Any], who: str) -> None:
    ts = r.get("timeseries") or {}
    t = ts.get("t_s") or []
    ax.step(t, ts.get("batch_size") or [], where="post", color="#4C72B0", linewidth=1)
    ax.set_ylabel("running sequences", color="#4C72B0")
    ax.set_xlabel("time (s)")
    total = r.get("kv_blocks_total") or (r.get("params") or {}).get("num_blocks")
    ax2 = ax.twinx()
    if total:
        ax2.plot(t, [100.0 * k / total for k in ts.get("kv_blocks") or []], color="#55A868", linewidth=1)
        ax2.set_ylim(0, 105)
    ax2.set_ylabel("KV blocks in use (%)", color="#55A868")
    ax.set_title(f"{who}: {r.get('output_throughput', 0):,.0f} output tok/s, "
                 f"{r.get('preemptions', 0):,} preemptions", fontsize=10)


def _histogram(ax: Any, h: dict[str, Any] | None, xlabel: str, ylabel: str, p99: float | None) -> None:
    edges, counts = (h or {}).get("edges_ms") or [], (h or {}).get("counts") or []
    if edges and counts:
        widths = [b - a for a, b in zip(edges, edges[1:])]
        ax.bar(edges[:-1], counts, width=widths, align="edge", color="#8172B3", edgecolor="white", linewidth=0.3)
        ax.set_xscale("log")
    else:
        ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
    if p99:
        ax.axvline(p99, color="#C44E52", linestyle="--", linewidth=1, label=f"p99 {p99:,.1f} ms")
        ax.legend(fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


# ------------------------------------------------------------------------------------------------
# tune
# ------------------------------------------------------------------------------------------------


def pareto_front(points: Sequence[dict[str, Any]], x: str, y: str, *, maximize_x: bool = True,
                 minimize_y: bool = True) -> list[int]:
    """Indexes of the points no other point beats on both ``x`` and ``y`` (ties kept), sorted by x."""
    def better(a: dict[str, Any], b: dict[str, Any]) -> bool:
        ax_, bx = (a[x], b[x]) if maximize_x else (-a[x], -b[x])
        ay, by = (-a[y], -b[y]) if minimize_y else (a[y], b[y])
        return ax_ >= bx and ay >= by and (ax_ > bx or ay > by)

    ok = [i for i, p in enumerate(points) if p.get(x) is not None and p.get(y) is not None]
    front = [i for i in ok if not any(better(points[j], points[i]) for j in ok if j != i)]
    return sorted(front, key=lambda i: points[i][x])


def plot_frontier(points: Sequence[dict[str, Any]], path: Path, *, x: str = "output_throughput",
                  y: str = "p99_itl_ms", label: str = "label", x_label: str = "output throughput (tok/s)",
                  y_label: str = "ITL p99 (ms)", maximize_x: bool = True, minimize_y: bool = True,
                  title: str | None = None) -> list[int]:
    """Scatter ``points`` (dicts with ``x``, ``y`` and a ``label``), draw and label their Pareto frontier;
    returns the frontier's indexes. For ``tune``: each point is one configuration's predicted metrics."""
    plt = _pyplot()
    if not points:
        raise InputError("nothing to plot: no configuration", key="--plot")
    front = pareto_front(points, x, y, maximize_x=maximize_x, minimize_y=minimize_y)
    fig, ax = plt.subplots(figsize=(8, 5))
    ok = [p for p in points if p.get(x) is not None and p.get(y) is not None]
    ax.scatter([p[x] for p in ok], [p[y] for p in ok], color="#BBBBBB", s=25, label="configurations")
    fx, fy = [points[i][x] for i in front], [points[i][y] for i in front]
    ax.plot(fx, fy, color="#C44E52", marker="o", linewidth=1.5, label="Pareto frontier")
    for i in front:
        if points[i].get(label):
            ax.annotate(str(points[i][label]), (points[i][x], points[i][y]), fontsize=7,
                        xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.set_title(title or f"{len(front)} of {len(points)} configurations on the frontier", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    return front


_FLAG_SHORT = {"max_num_seqs": "seqs", "max_num_batched_tokens": "mbt", "gpu_memory_utilization": "gmu",
               "kv_cache_dtype": "kv", "tensor_parallel_size": "tp"}


def plot_tune(tune: dict[str, Any], path: Path) -> list[int]:
    """``tune --plot``: every configuration of a sweep (the ``tune`` JSON object) as output throughput per GPU
    (tok/s) against its first targeted latency at the sweep's percentile (ms; p99 TPOT without targets), the
    Pareto frontier drawn and labelled with the flags that differ. Returns the frontier's indexes."""
    metric = next(iter(tune.get("targets") or {}), "tpot")
    key = f"{tune.get('percentile', 'p99')}_{metric}_ms"
    points = []
    for p in tune.get("points", []):
        if not p.get("starts") or p.get("throughput_per_gpu") is None:
            continue
        flags = p.get("flags", {})
        label = " ".join(f"{_FLAG_SHORT.get(k, k)}={v}" for k, v in flags.items())
        points.append({"label": label, "x": p["throughput_per_gpu"], "y": (p.get("metrics") or {}).get(key)})
    target = (tune.get("targets") or {}).get(metric)
    title = f"{len(points)} configurations that start; {tune.get('workload', '')}"[:110]
    if target is not None:
        title += f"; target {metric} {target:g} ms"
    return plot_frontier(points, path, x="x", y="y", x_label="output throughput per GPU (tok/s)",
                         y_label=f"{key.removesuffix('_ms').replace('_', ' ')} (ms)", title=title)
