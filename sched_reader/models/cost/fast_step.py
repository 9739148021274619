"""A faster scalar ``step_time`` for the simulator: the same roofline arithmetic, with per-token-count memo.

The simulator times about one mixed (prefill + decode) iteration per request, so
``IterationCostModel.step_time`` (``iteration.py``) is on its hot path. :func:`compile_step_time` returns a
function ``f(num_decode, decode_context_sum, prefill_tokens, prefill_attn_pairs, num_prefill_seqs)``
-> seconds that performs exactly the operations of ``IterationCostModel._evaluate`` on Python scalars, in
the same order, so its floats are the same bit for bit; what it saves:

* the terms that depend only on the step's token count T (dense projections, MLP, routed experts with
  their measured efficiency curves; elementwise, embedding, collectives) are computed once per distinct
  T and memoised (the partial sum ``layers`` after the first ones is a function of T alone), those that
  depend only on the number of emitting sequences (lm_head, sampler, logits all-gather, host time) once
  per number;
* no per-term breakdown bookkeeping, no closure per call, constants looked up once;
* the prefill attention efficiency (an interpolation in the measured curve) memoised by its argument;
* on the per-call path, ``max(a, b)`` / ``min(a, b)`` of two numbers written as the conditional the builtin
  evaluates (``b if b > a else a`` / ``b if b < a else a``: the same object, ties and signed zeros
  included), without the builtin's call and argument parsing (~750 instructions each).

It is an optimisation, never a second model: the returned function is checked against the model's own
``step_time`` on probe points when it is built (mixed and pure steps, both sides of the CUDA-graph
limit and of sliding windows) and ``None`` is returned when any probe differs in any bit, or when the
cost is not an ``IterationCostModel`` (optionally wrapped by ``calibration_profile.CalibratedCost``).
Callers then use ``step_time`` itself. Keep it in step with ``_evaluate`` (the test
``tests/models/test_fast_step.py`` fails when they part).

Units: seconds; token counts in tokens; attention pairs in (query, key) pairs.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from sched_reader.models.calibration_profile import CalibratedCost
from sched_reader.models.cost import iteration as _it
from sched_reader.models.cost.collectives import allgather_time, allreduce_time, p2p_time
from sched_reader.models.cost.kernels import efficiency_at, interp_scalar

StepFn = Callable[[int, int, int, float, int], float]


def compile_step_time(cost: Any) -> StepFn | None:
    """The fast exact form of ``cost.step_time``, or None when there is none (see module docstring)."""
    try:
        fn = _build(cost)
    except Exception:  # noqa: BLE001 - an unexpected model shape: the caller keeps step_time
        return None
    if fn is None or not _agrees(cost, fn):
        return None
    return fn


def _build(cost: Any) -> StepFn | None:
    if type(cost) is CalibratedCost:
        base = _build(cost.base)
        return None if base is None else _calibrated(cost, base)
    if type(cost) is not _it.IterationCostModel:
        return None
    return _iteration(cost)


def _calibrated(c: Any, base: StepFn) -> StepFn:
    """CalibratedCost.step_time over a fast base (same expression)."""
    ds, ps, oh, hs = c.ds, c.ps, c.oh, c.hs

    def f(nd: int, S: int, Tp: int, P: float, nps: int = 0) -> float:
        if nd + Tp <= 0:
            return 0.0
        whole = base(nd, S, Tp, P, nps)
        if Tp <= 0:
            return (oh + hs * nd) + ds * whole
        dec = base(nd, S, 0, 0.0, 0) if nd > 0 else 0.0
        host = oh + hs * (nd + (nps if nps > 1 else 1))         # max(1, nps): the builtin's rule
        extra = whole - dec
        extra = extra if extra > 0.0 else 0.0                   # max(0.0, extra)
        att = 0.0
        if P > 0:
            att = whole - base(nd, S, Tp, 0.0, nps)
            att = att if att > 0.0 else 0.0                     # max(0.0, ...)
            att = att if att < extra else extra                 # min(att, extra)
        return host + ds * dec + ps * (extra - att) + att

    return f


def _iteration(m: Any) -> StepFn:
    """IterationCostModel._evaluate(..., max, min, detail=False, q=1) + _combine, specialised to m."""
    eff = m.eff
    bw = m.bw
    ab = m.precision.act_bytes
    # kind: 1 shared experts, 2 router gate, 0 other (the shared-experts stream overlap, _it.SHARED_EXPERTS_STREAM_FROM)
    linear = [(f, wbytes, abytes, rate, parts, slow, 1 if name == "moe_shared" else 2 if name == "moe_router" else 0)
              for (name, (f, wbytes, abytes, rate), parts), slow in zip(m._linear_terms, m._lin_slow) if f]
    shared_overlap, shared_max = m._shared_overlap, _it.SHARED_EXPERTS_STREAM_MAX_TOKENS
    moe_slow = m._moe_slow
    peak_bw_all = m._peak_bw
    experts = list(m._experts)
    moe_curve = m._moe_curve
    moe_cap = m._moe_cap   # (bytes/s, local experts): vLLM's old default tiles at M <= E (moe_default_tiles.py)
    moe_floor = m._moe_floor[0] if m._moe_floor is not None else None
    expert_peak, peak_bw, expert_rate, expert_wb = m._expert_peak, m._peak_bw, m._expert_rate, m._expert_wb
    attn_rate, kv_bw = m.attn_rate, m.kv_bw
    # per group: (count, decode seconds per context token, fpre, bpre, window)
    # per group also the prompt-token attention rate (FLOP/s): attn_rate, or the AMD kernel path's (m._pre_rates)
    # and whether its prompt attention has no causal tile skip (m._pre_full: + Tp^2 / (2 max(nps, 1)) pairs)
    attn = [(count, max(fdec / attn_rate, bdec / kv_bw), fpre, bpre, window, occ, pre_rate, full)
            for (count, fdec, bdec, fpre, bpre, window), occ, pre_rate, full
            in zip(m._attn, m._attn_occ, m._pre_rates, m._pre_full)]
    dfit, pcurve, attn_peak = m._dec_fit, m._pre_curve, m._attn_peak
    pxs, pys = (pcurve[0], pcurve[1]) if pcurve is not None else (None, None)
    lm_curve, lm_peak = m._lm_curve, m._lm_peak
    log2 = math.log2
    elem = m._elem_bytes_per_token
    floor = m._L * eff.layer_overhead_graph_s + m._moe_layers * eff.moe_routing_overhead_s + m._floor_extra_s
    eager = m.eager
    graph_max = m._graph_max_tokens
    host = m._L * eff.layer_overhead_eager_s
    emb_c = 2.0 * ab * m._hidden
    f_lm, w_lm, io_lm, r_lm = m._lm
    vocab = m._vocab
    passes, logit_bytes = _it.SAMPLER_LOGIT_PASSES, _it.LOGIT_BYTES
    tp, pp, gpu_spec, hidden = m.tp, m.pp, m.gpu, m._hidden
    ep = m._ep_dispatch
    qk_ar, qk_time = m._qk_norm_tp[0], m.qk_norm_time
    moe_layers = m._moe_layers
    step_cpu, cpu_per_seq = eff.step_cpu_s, m._cpu_per_seq
    async_overlap = m.async_overlap
    # per token count T: the layer sum after the terms that depend on T alone, and the later terms that
    # depend on T alone; per emitting count (nd + nps): lm_head, sampler, logits all-gather and host time.
    # Each value is computed by the same expression as in ``_evaluate``, so reusing it changes no bit.
    memo_t: dict[int, tuple[float, float, bool, float, float, float, float, float]] = {}
    memo_e: dict[int, tuple[float, float, float, float]] = {}
    # prefill attention efficiency by q = 2 x pairs / prefill tokens (mean attended keys per query x 2)
    memo_q: dict[float, float] = {}
    e_at_0 = interp_scalar(0.0, pxs, pys) if pcurve is not None else None

    def t_terms(T: int) -> tuple[float, float, bool, float, float, float, float, float]:
        layers = 0.0
        t_sh = t_rt = t_ex = 0.0
        for f, wbytes, abytes, rate, parts, slow, kind in linear:
            if parts is None:
                fl = f * T
                by = wbytes + abytes * T
                t = max(fl / rate, by / bw)
                if slow != 1.0:
                    t = t * slow
            else:
                t = 0.0
                for pf, pw, pa, peak, curve in parts:
                    t = t + max(pf * T / peak, (pw + pa * T) / peak_bw_all) / efficiency_at(curve, T)
            layers = layers + t
            if kind == 1:
                t_sh = t_sh + t
            elif kind == 2:
                t_rt = t_rt + t
        for count, E, k, local, eparams, route_mult, io, excess in experts:
            Tr = T * route_mult
            if excess:
                Tr = Tr + excess * Tr ** 0.5
            routed = Tr * k * local / E
            distinct = local * (1.0 - (1.0 - k / E) ** Tr)
            fl = count * 2.0 * routed * eparams
            by = count * (distinct * eparams * expert_wb + ab * routed * io)
            if moe_curve is not None:
                t = max(fl / expert_peak, by / peak_bw) / efficiency_at(moe_curve, Tr)
            elif moe_floor is not None:
                t = max(max(fl / expert_rate, by / bw), count * moe_floor)
                if moe_slow != 1.0:
                    t = t * moe_slow
            else:
                t = max(fl / expert_rate, by / bw)
                if moe_slow != 1.0:
                    t = t * moe_slow
            if moe_cap is not None and T <= moe_cap[1]:
                t = max(t, by / moe_cap[0])
            layers = layers + t
            t_ex = t_ex + t
        if shared_overlap:
            layers = layers - min(t_sh, t_rt + t_ex) * (T <= shared_max)
        te = T * elem / bw
        t_emb = emb_c * T / bw
        t_ar = (2 * m._L + 1) * allreduce_time(T * hidden * ab, tp, gpu_spec, eff) if tp > 1 else 0.0
        t_qk = qk_time(T) if tp > 1 and qk_ar else 0.0
        t_ep = moe_layers * 2 * allgather_time(T * hidden * ab, ep, gpu_spec, eff) if ep > 1 else 0.0
        t_pp = (pp - 1) * p2p_time(2 * T * hidden * ab, gpu_spec, eff) if pp > 1 else 0.0
        v = memo_t[T] = (layers, te, eager or T > graph_max, t_emb, t_ar, t_qk, t_ep, t_pp)
        return v

    def e_terms(emit: int) -> tuple[float, float, float, float]:
        if lm_curve is not None:
            t_lm = (max(f_lm * emit / lm_peak, (w_lm + io_lm * emit) / peak_bw_all)
                    / efficiency_at(lm_curve, emit) if emit > 0 else 0.0)
        else:
            t_lm = max(f_lm * emit / r_lm, (w_lm + io_lm * emit) / bw) if emit > 0 else 0.0
        t_smp = passes * emit * vocab * logit_bytes / bw
        t_lg = allgather_time(emit * vocab / tp * logit_bytes, tp, gpu_spec, eff) if tp > 1 else 0.0
        cpu = step_cpu + cpu_per_seq * emit
        v = memo_e[emit] = (t_lm, t_smp, t_lg, cpu)
        return v

    if (len(attn) == 1 and not attn[0][4] and not attn[0][5] and not attn[0][7] and tp <= 1 and ep <= 1
            and pp <= 1):
        return _one_group(attn[0], dfit, pcurve, memo_t, t_terms, memo_e, e_terms, memo_q, e_at_0, pxs, pys,
                          attn_peak, peak_bw_all, bw, te_floor=floor, host=host, async_overlap=async_overlap)

    def f(nd: int, S: int, Tp: int, P: float, nps: int = 0) -> float:
        T = nd + Tp
        if T <= 0:
            return 0.0
        emit = nd + nps
        try:
            layers, te, miss, t_emb, t_ar, t_qk, t_ep, t_pp = memo_t[T]
        except KeyError:
            layers, te, miss, t_emb, t_ar, t_qk, t_ep, t_pp = t_terms(T)
        for count, dec_s, fpre, bpre, window, occ, pre_rate, full in attn:
            if window:   # min(a, b) as the builtin decides it: b if b < a else a
                Se = nd * window
                Se = Se if Se < S else S
                Pe = Tp * window
                Pe = Pe if Pe < P else P
            else:
                Se, Pe = S, P
            if full:
                Pe = Pe + Tp * Tp / (2.0 * (nps if nps > 1.0 else 1.0))   # max(nps, 1.0)
            td = count * Se * dec_s
            if occ:
                td = td / min(1.0, max(nd, 1.0) * occ)
            if dfit is not None:
                td = td + count * (dfit[0] * (nd > 0) + dfit[1] * nd)
            if pcurve is not None and Tp:
                if Pe > Tp / 2.0:    # the efficiency at x = log2(q), memoised by q
                    q = 2.0 * Pe / Tp
                    try:
                        e = memo_q[q]
                    except KeyError:
                        e = memo_q[q] = interp_scalar(log2(q), pxs, pys)
                else:
                    e = e_at_0
                a, b = fpre * Pe / attn_peak, bpre * Tp / peak_bw_all
                tpre = count * (b if b > a else a) / e   # max(a, b)
            else:
                a, b = fpre * Pe / pre_rate, bpre * Tp / bw
                tpre = count * (b if b > a else a)
            layers = layers + td + tpre
        layers = layers + te
        layers = layers + floor
        if miss:
            a = host - layers
            layers = layers + (0.0 if 0.0 > a else a)           # max(a, 0.0)
        try:
            t_lm, t_smp, t_lg, cpu = memo_e[emit]
        except KeyError:
            t_lm, t_smp, t_lg, cpu = e_terms(emit)
        t_comm = 0.0
        if tp > 1:
            t_comm = t_ar + t_lg
            if qk_ar:
                t_comm = t_comm + t_qk
        if ep > 1:
            t_comm = t_comm + t_ep
        gpu = layers + t_emb + t_lm + t_smp + t_comm + t_pp
        if async_overlap:     # max(gpu, cpu), without the builtin call: the same value
            return cpu if cpu > gpu else gpu
        return gpu + cpu

    return f


def _one_group(group: tuple, dfit: Any, pcurve: Any, memo_t: dict, t_terms: Callable, memo_e: dict,
               e_terms: Callable, memo_q: dict, e_at_0: Any, pxs: Any, pys: Any, attn_peak: float,
               peak_bw_all: float, bw: float, te_floor: float, host: float, async_overlap: bool) -> StepFn:
    """``f`` of :func:`_iteration` for the common shape: one attention group without a sliding window,
    occupancy limit or full (non-causal) prompt attention, on one GPU (no TP, EP or PP). The same
    operations in the same order, less the branches that cannot be taken and the additions of the
    collectives' 0.0 (``x + 0.0`` is ``x`` for the positive sums here), so the same floats."""
    count, dec_s, fpre, bpre, _, _, pre_rate, _ = group
    measured_pre = pcurve is not None
    d0, d1 = (dfit[0], dfit[1]) if dfit is not None else (0.0, 0.0)
    has_fit = dfit is not None
    log2 = math.log2
    floor = te_floor
    memo4: dict[int, tuple] = {}        # memo_t's first four terms, by token count
    memo_fit: dict[int, float] = {}     # the measured decode-kernel term, by decoding sequences

    def f1(nd: int, S: int, Tp: int, P: float, nps: int = 0) -> float:
        T = nd + Tp
        if T <= 0:
            return 0.0
        try:
            layers, te, miss, t_emb = memo4[T]
        except KeyError:
            layers, te, miss, t_emb = memo4[T] = t_terms(T)[:4]
        td = count * S * dec_s
        if has_fit:
            try:
                td = td + memo_fit[nd]
            except KeyError:
                fit = memo_fit[nd] = count * (d0 * (nd > 0) + d1 * nd)
                td = td + fit
        if measured_pre and Tp:
            if P > Tp / 2.0:    # the efficiency at x = log2(q), memoised by q
                q = 2.0 * P / Tp
                try:
                    e = memo_q[q]
                except KeyError:
                    e = memo_q[q] = interp_scalar(log2(q), pxs, pys)
            else:
                e = e_at_0
            a, b = fpre * P / attn_peak, bpre * Tp / peak_bw_all
            tpre = count * (b if b > a else a) / e   # max(a, b)
        else:
            a, b = fpre * P / pre_rate, bpre * Tp / bw
            tpre = count * (b if b > a else a)
        layers = layers + td + tpre
        layers = layers + te
        layers = layers + floor
        if miss:
            a = host - layers
            layers = layers + (0.0 if 0.0 > a else a)           # max(a, 0.0)
        emit = nd + nps
        try:
            t_lm, t_smp, _, cpu = memo_e[emit]
        except KeyError:
            t_lm, t_smp, _, cpu = e_terms(emit)
        gpu = layers + t_emb + t_lm + t_smp
        if async_overlap:     # max(gpu, cpu), without the builtin call: the same value
            return cpu if cpu > gpu else gpu
        return gpu + cpu

    return f1


def _probes(cost: Any) -> list[tuple[int, int, int, float, int]]:
    """Mixed, prefill-only and decode-only steps around the model's thresholds."""
    g = int(getattr(cost, "_graph_max_tokens", 512) or 512)
    pts = [(0, 0, 1, 0.5, 1), (1, 17, 0, 0.0, 0), (0, 0, 8192, 8192 * 4096.0, 1), (255, 255 * 700, 1, 300.5, 1),
           (3, 900, g - 3, (g - 3) * 12.5, 1), (3, 900, g - 2, (g - 2) * 12.5, 1), (g, g * 3000, 0, 0.0, 0),
           (g + 1, (g + 1) * 3000, 0, 0.0, 0), (200, 200 * 80_000, 2048, 2048 * 50_000.0, 2),
           (7, 7 * 5000, 300, 300 * 151.0, 3), (1, 1, 30_000, 30_000 * 15_000.0, 1)]
    for window in {w for *_, w in getattr(getattr(cost, "base", cost), "_attn", []) if w}:
        pts += [(4, 4 * window - 1, 2 * window, 2.0 * window * window, 1), (4, 4 * window + 9, 100, 100 * 60.0, 1),
                (9, 9 * window * 3, 3 * window, 3.0 * window * window * 2, 2)]
    return pts


def _agrees(cost: Any, fn: StepFn) -> bool:
    for nd, S, Tp, P, nps in _probes(cost):
        want = cost.step_time(nd, S, Tp, P, nps)
        if fn(nd, S, Tp, P, nps) != want or fn(nd, S, Tp, P, nps) != want:   # second call: memo hit
            return False
    return True
