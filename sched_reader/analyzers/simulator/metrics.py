"""What a simulated run measured, and the ``vllm bench serve`` metric set computed from it.

:class:`Recorder` collects, in integer nanoseconds: each request's send, first-token and finish times,
every inter-token gap (stored as (value, count) pairs so a run of identical steps costs one entry),
per-step KV use (blocks held, tokens stored) integrated over time, preemptions, and a coarse time
series (batch size, KV blocks, step duration) for plots.

:func:`summarize` turns it into the metric set (ms and tokens/s): request/output/total-token
throughput, mean/median/p90/p99 of TTFT, TPOT, ITL and E2EL, goodput under TTFT and TPOT SLOs, peak
and mean KV use, fragmentation and preemptions. Percentiles use numpy's default (linear) rule applied to
the expanded gap list, so grouped and one-by-one recordings give the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

PCTS = (50, 90, 99)


class Recorder:
    """Raw measurements of one run (times in ns, KV in blocks and tokens)."""

    __slots__ = ("first_ns", "finish_ns", "preemptions", "npreempt", "num_blocks", "block_size", "itl_v", "itl_w",
                 "itl_chunks", "steps", "busy_ns", "kv_blocks_ns", "kv_tokens_ns", "peak_blocks", "ts_t", "ts_batch",
                 "ts_blocks", "ts_step")

    def __init__(self, n: int, num_blocks: int, block_size: int) -> None:
        self.first_ns = [-1] * n
        self.finish_ns = [-1] * n
        self.preemptions = [0] * n
        self.npreempt = 0
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.itl_v: list[int] = []
        self.itl_w: list[int] = []
        self.itl_chunks: list[tuple[np.ndarray, int]] = []
        self.steps = 0
        self.busy_ns = 0
        self.kv_blocks_ns = 0      # integral of blocks held over busy time
        self.kv_tokens_ns = 0      # integral of tokens stored over busy time
        self.peak_blocks = 0
        self.ts_t: list[int] = []
        self.ts_batch: list[int] = []
        self.ts_blocks: list[int] = []
        self.ts_step: list[int] = []

    def itl_one(self, gap_ns: int) -> None:
        self.itl_v.append(gap_ns)
        self.itl_w.append(1)

    def itl_many(self, gap_ns: int, count: int) -> None:
        self.itl_v.append(gap_ns)
        self.itl_w.append(count)

    def step(self, dur: int, blocks: int, tokens: int, batch: int, end: int) -> None:
        """One iteration of ``dur`` ns with ``blocks`` held and ``tokens`` stored during it."""
        self.steps += 1
        self.busy_ns += dur
        self.kv_blocks_ns += blocks * dur
        self.kv_tokens_ns += tokens * dur
        if blocks > self.peak_blocks:
            self.peak_blocks = blocks
        self.ts_t.append(end)
        self.ts_batch.append(batch)
        self.ts_blocks.append(blocks)
        self.ts_step.append(dur)

    def decode_steps(self, durs: list[int], blocks: list[int], tokens: list[int], batch: int,
                     ends: list[int]) -> None:
        """Several iterations of ``batch`` decoding sequences each (lists, one entry per iteration):
        the same as calling :meth:`step` and ``itl_many(dur, batch)`` for each."""
        self.steps += len(durs)
        self.busy_ns += sum(durs)
        self.kv_blocks_ns += sum(map(int.__mul__, blocks, durs))
        self.kv_tokens_ns += sum(map(int.__mul__, tokens, durs))
        pk = max(blocks)
        if pk > self.peak_blocks:
            self.peak_blocks = pk
        self.ts_t.extend(ends)
        self.ts_batch.extend([batch] * len(durs))
        self.ts_blocks.extend(blocks)
        self.ts_step.extend(durs)
        self.itl_v.extend(durs)
        self.itl_w.extend([batch] * len(durs))

    def run(self, durs: np.ndarray, blocks: np.ndarray, tokens: np.ndarray, batch: int, end: int,
            itl: bool = True) -> None:
        """k iterations at once (arrays of length k, int64); every one of ``batch`` sequences emits a
        token per iteration, so each duration is also ``batch`` inter-token gaps."""
        k = int(durs.shape[0])
        self.steps += k
        self.busy_ns += int(durs.sum())
        self.kv_blocks_ns += int(np.dot(blocks, durs))
        self.kv_tokens_ns += int(np.dot(tokens, durs))
        pk = int(blocks.max())
        if pk > self.peak_blocks:
            self.peak_blocks = pk
        if itl:
            self.itl_chunks.append((durs, batch))
        self.ts_t.append(end)
        self.ts_batch.append(batch)
        self.ts_blocks.append(int(blocks[-1]))
        self.ts_step.append(int(durs[-1]))

    def itl_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """All inter-token gaps as (values, counts), int64."""
        vs = [_i64(self.itl_v)] + [c[0] for c in self.itl_chunks]
        ws = [_i64(self.itl_w)] + [np.full(c[0].shape[0], c[1], dtype=np.int64)
                                                         for c in self.itl_chunks]
        return np.concatenate(vs), np.concatenate(ws)


def _i64(seq: Any) -> np.ndarray:
    """``np.asarray(seq, dtype=np.int64)``; a list through ``np.fromiter`` (the same array, about a third
    faster on the run's long lists of Python ints)."""
    if type(seq) is list:
        return np.fromiter(seq, dtype=np.int64, count=len(seq))
    return np.asarray(seq, dtype=np.int64)


def weighted_percentiles(values: np.ndarray, counts: np.ndarray | None, pcts=PCTS) -> list[float]:
    """np.percentile (linear) of the list where values[i] appears counts[i] times, without expanding it.

    ``counts`` None: every value once; the same floats as ``np.percentile(values, pcts)`` (its virtual index
    ``(n - 1) * q / 100``, neighbours and lerp, in the same operations) for values without NaN, used instead
    of it on the simulator's and diagnose's paths because np.percentile imports ``numpy.ma`` (through
    ``np.unique``) on its first call: ~2% of a ``diagnose`` process. The order among equal values does not
    matter (the rank ranges of a group of ties are the same whatever their order), so a plain, unstable sort
    is used."""
    if counts is None:
        v = np.sort(np.asarray(values)).astype(np.float64)
        cum = None
        total = int(v.size)
    else:
        keep = counts > 0
        v, w = values[keep], counts[keep]
        order = np.argsort(v)
        v, w = v[order].astype(np.float64), w[order]
        cum = np.cumsum(w)
        total = int(cum[-1]) if cum.size else 0
    if v.size == 0:
        return [0.0 for _ in pcts]
    out = []
    for q in pcts:
        pos = q / 100.0 * (total - 1)
        lo = int(np.floor(pos))
        hi = min(lo + 1, total - 1)
        if cum is None:    # rank r is index r
            a, b = v[lo], v[hi]
        else:
            a = v[np.searchsorted(cum, lo, side="right")]
            b = v[np.searchsorted(cum, hi, side="right")]
        t = pos - lo
        diff = b - a
        out.append(float(b - diff * (1.0 - t)) if t >= 0.5 else float(a + diff * t))  # numpy's lerp
    return out


def _stats(values_ns: np.ndarray, counts: np.ndarray | None = None) -> dict[str, float]:
    if counts is None:
        n = int(values_ns.size)
        mean = float(int(values_ns.astype(np.int64).sum()) / n) / 1e6 if n else 0.0
    else:
        n = int(counts.sum())
        mean = float(int(np.dot(values_ns.astype(np.int64), counts)) / n) / 1e6 if n else 0.0
    med, p90, p99 = (x / 1e6 for x in weighted_percentiles(values_ns, counts))
    return {"mean": mean, "median": med, "p90": p90, "p99": p99}


def summarize(rec: Recorder, send_ns: list[int], prompt: list[int], target: list[int], *,
              slo_ttft_ms: float | None = None, slo_tpot_ms: float | None = None,
              slo_e2el_ms: float | None = None, percentiles: tuple[float, ...] = (),
              max_points: int = 2000) -> dict[str, Any]:
    """The bench-serve metric set plus KV and scheduler statistics (ms, tokens/s, fractions).

    ``percentiles`` (``vllm bench serve --metric-percentiles``) adds ``p{P}_{metric}_ms`` for TTFT, TPOT,
    ITL and E2EL, named as vLLM names them (``p99.9_itl_ms``; an integer P without a decimal point).
    A request is good (``--goodput ttft:MS tpot:MS e2el:MS``) when every given target is met; its TPOT is 0
    when it has one output token, as in vLLM's ``calculate_metrics``."""
    send = _i64(send_ns)
    first = _i64(rec.first_ns)
    fin = _i64(rec.finish_ns)
    p = _i64(prompt)
    o = _i64(target)
    assert (fin >= 0).all(), "every request must finish"
    dur_ns = int(fin.max() - min(int(send.min()), 0)) if fin.size else 0
    dur_s = dur_ns / 1e9 if dur_ns else 1e-9
    ttft = first - send
    e2el = fin - send
    multi = o > 1
    tpot_ms = ((e2el[multi] - ttft[multi]) / (o[multi] - 1)) / 1e6
    itl_v, itl_w = rec.itl_arrays()
    res: dict[str, Any] = {
        "completed": int(fin.size),
        "duration_s": dur_s,
        "total_input_tokens": int(p.sum()),
        "total_output_tokens": int(o.sum()),
        "request_throughput": fin.size / dur_s,
        "output_throughput": int(o.sum()) / dur_s,
        "total_token_throughput": int(p.sum() + o.sum()) / dur_s,
    }
    for name, st in (("ttft", _stats(ttft)), ("e2el", _stats(e2el)), ("itl", _stats(itl_v, itl_w))):
        for k, v in st.items():
            res[f"{k}_{name}_ms"] = v
    if tpot_ms.size:
        res["mean_tpot_ms"] = float(tpot_ms.mean())
        res["median_tpot_ms"], res["p90_tpot_ms"], res["p99_tpot_ms"] = (
            float(x) for x in weighted_percentiles(tpot_ms, None))
    else:
        res.update({"mean_tpot_ms": 0.0, "median_tpot_ms": 0.0, "p90_tpot_ms": 0.0, "p99_tpot_ms": 0.0})
    if percentiles:
        tp_all = np.zeros(0) if not tpot_ms.size else tpot_ms
        for q in percentiles:
            word = str(int(q)) if float(q) == int(q) else str(q)
            res[f"p{word}_ttft_ms"] = weighted_percentiles(ttft, None, (q,))[0] / 1e6 if ttft.size else 0.0
            res[f"p{word}_e2el_ms"] = weighted_percentiles(e2el, None, (q,))[0] / 1e6 if e2el.size else 0.0
            res[f"p{word}_tpot_ms"] = weighted_percentiles(tp_all, None, (q,))[0] if tp_all.size else 0.0
            res[f"p{word}_itl_ms"] = (weighted_percentiles(itl_v, itl_w, (q,))[0] / 1e6) if len(itl_v) else 0.0
        res["metric_percentiles"] = [float(q) for q in percentiles]
    good = np.ones(fin.size, dtype=bool)
    if slo_ttft_ms is not None:
        good &= ttft / 1e6 <= slo_ttft_ms
    if slo_tpot_ms is not None:
        tp = np.zeros(fin.size)
        tp[multi] = tpot_ms
        good &= tp <= slo_tpot_ms
    if slo_e2el_ms is not None:
        good &= e2el / 1e6 <= slo_e2el_ms
    res["goodput_slo"] = {"ttft_ms": slo_ttft_ms, "tpot_ms": slo_tpot_ms, "e2el_ms": slo_e2el_ms}
    res["request_goodput"] = int(good.sum()) / dur_s
    res["good_requests"] = int(good.sum())
    busy = rec.busy_ns or 1
    slots = rec.kv_blocks_ns * rec.block_size
    res.update({
        "num_steps": rec.steps,
        "busy_fraction": rec.busy_ns / dur_ns if dur_ns else 0.0,
        "kv_blocks_total": rec.num_blocks,
        "kv_peak_blocks": rec.peak_blocks,
        "kv_peak_use": rec.peak_blocks / rec.num_blocks,
        "kv_mean_use": rec.kv_blocks_ns / busy / rec.num_blocks,
        "kv_fragmentation": max(0.0, 1.0 - rec.kv_tokens_ns / slots) if slots else 0.0,
        "preemptions": int(sum(rec.preemptions)),
        "preempted_requests": len(rec.preemptions) - rec.preemptions.count(0),
    })
    res["histograms"] = {"ttft_ms": _log_histogram(ttft / 1e6), "itl_ms": _log_histogram(itl_v / 1e6, itl_w)}
    idx = np.linspace(0, len(rec.ts_t) - 1, num=min(max_points, len(rec.ts_t))).astype(int) if rec.ts_t else []
    res["timeseries"] = {
        "t_s": [rec.ts_t[i] / 1e9 for i in idx],
        "batch_size": [rec.ts_batch[i] for i in idx],
        "kv_blocks": [rec.ts_blocks[i] for i in idx],
        "step_ms": [rec.ts_step[i] / 1e6 for i in idx],
    }
    return res


def _log_histogram(values_ms: np.ndarray, counts: np.ndarray | None = None, bins: int = 40) -> dict[str, Any]:
    """Counts of ``values_ms`` (ms, weighted by ``counts``) in ``bins`` log-spaced bins: edges (ms) and counts
    (requests for TTFT, token gaps for ITL), for plots; exact, unlike a sample."""
    v = np.asarray(values_ms, dtype=np.float64)
    w = np.ones_like(v) if counts is None else np.asarray(counts, dtype=np.float64)
    keep = (v > 0) & (w > 0)
    v, w = v[keep], w[keep]
    if v.size == 0:
        return {"edges_ms": [], "counts": []}
    lo, hi = float(v.min()), float(v.max())
    if hi <= lo:
        hi = lo * 1.01 + 1e-9
    edges = np.geomspace(lo, hi, bins + 1)
    c, _ = np.histogram(v, bins=edges, weights=w)
    return {"edges_ms": [float(x) for x in edges], "counts": [int(x) for x in c]}


def add_client_latency(res: dict[str, Any], seconds: float, why: str) -> dict[str, Any]:
    """Add a fixed per-request latency that the engine never sees (API server, HTTP) to what a
    ``vllm bench serve`` client measures: every TTFT and end-to-end latency grows by ``seconds``; token
    spacing (TPOT/ITL) is unchanged. Throughputs are left as simulated (the shift is per request and
    overlaps across requests). Returns ``res`` updated in place."""
    ms = seconds * 1e3
    for key in list(res):
        stat, _, rest = key.partition("_")
        if rest in ("ttft_ms", "e2el_ms") and (stat in ("mean", "median") or stat.startswith("p")) \
                and isinstance(res[key], (int, float)):
            res[key] += ms
    res.setdefault("notes", []).append(f"TTFT and E2EL include {ms:.0f} ms of {why}")
    return res
