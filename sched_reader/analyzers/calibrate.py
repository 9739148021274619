"""Fit a deployment's calibration profile to real ``vllm bench serve`` results.

Each result is replayed through the simulator (its own per-request lengths when the JSON saved them,
else fixed mean lengths; its rate and concurrency), and the named terms of
``models.calibration_profile`` are fitted so the replay matches the measured output throughput, TPOT and
mean TTFT. A term is fitted only from results that can identify it; the others stay at the prior (the
uncalibrated model):

* ``decode_time_scale`` and ``step_overhead_ms`` together, as a posterior (analyzers/calibrate_posterior.py):
  work-proportional time and time every step pays whatever its batch are one number at one batch size and
  differ across batch sizes, so one result's offset is split by a prior measured over deployments with
  several concurrency levels, of the deployment's engine generation (V0 / V1: centred on their mean terms;
  the per-step time in units of the deployment's own step, :func:`unit_step_ms`), and results at two or
  more concurrency levels pin both. The observations: each result's TPOT (the median when given: see ``_tpot_key``), or its output
  throughput when its TPOT is stall-dominated (:func:`stalled`) or missing; a rate-limited result's
  throughput is its offered load, never an observation. Always identified; fitted first, so the terms below
  are read with the per-step time in place;
* ``prefill_time_scale`` from TTFT, when a result is not a burst (closed loop or rate-limited: its TTFT is
  the prompt's time plus a short queue) or bursts of two or more sizes are given: one burst's TTFT is its
  API intake queue plus its prefill time, one number for two unknowns; results with no TTFT at all (an
  offline ``vllm bench throughput`` run) make it a third term of the decode posterior instead: a run's
  throughput is the time of every step, prompts included, so its offset is shared by each run's prefill
  share of that time (vLLM PR 17530's offline runs: +22% at 1K in / 2K out, +97% at 10K / 500, one prefill
  scale x2.8 and a decode scale x1.17 reproduce all three);
* ``seq_overhead_us`` and ``api_token_us`` only from two or more results at different concurrency: chosen
  among a few physically plausible values;
* ``api_intake_ms`` (the API server's per-request intake) from bursts of two or more sizes (TTFT growing
  with N): chosen among a few values by the same loss before the other terms;
* ``api_ms`` only as the TTFT the identified prefill scale cannot absorb within its bound.

The prefill scale is then shrunk toward the prior in log space (:func:`shrink_weight`): the posterior mean
under a prior read off the corpus's uncalibrated errors (a core spread plus a tail of deployments the model
gets badly wrong) and a per-result spread of the model's workload-dependent error; the decode scale and the
per-step time are re-fitted at the chosen terms. Each term reports its value and what supported it.

Every term stays within its bounds; one that hits a bound is flagged (``at_bound``), since the data then
disagree with the model by more than a plausible efficiency factor -- say so rather than fit it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from sched_reader.compat.chat_template_work import template_release
from sched_reader.errors import InputError
from sched_reader.models.calibration_profile import TERMS, FittedTerm, Profile, default_terms
from sched_reader.readers.bench_result import BenchResult
from sched_reader.models.cost.frontend import api_server_for, endpoint_for
from sched_reader.models.workload import endpoint_kind
from sched_reader.models.calibration_profile import api_seconds, calibrated, frontend_kwargs
from sched_reader.analyzers.simulator.metrics import add_client_latency
from sched_reader.analyzers.simulator.api import engine_inputs, with_frontend_latency
from sched_reader.analyzers.simulator import params_for, simulate
from sched_reader.analyzers.simulator.workloads import Requests, from_bench_flags
from sched_reader.analyzers.calibrate_posterior import (PRIOR, PRIOR_BY_ENGINE, DecodePrior, Observation,
                                                        PrefillPrior, posterior_mean, posterior_mean3)

ITERATIONS = 6
CONVERGED = 0.005
SKEWED_TPOT = 1.5   # mean / median TPOT above which a result's mean is stall-dominated
DECODE_PASSES = 3      # linearise, take the posterior mean, re-linearise there (see calibrate_posterior)
D_STEP = 1.05          # relative step of the decode scale for its slope
C_STEP_MS = 0.5        # step of the per-step time for its slope (ms)
SEQ_OVERHEAD_CANDIDATES_US = (0.0, 50.0, 100.0, 200.0, 400.0)
API_TOKEN_CANDIDATES_US = (72.0, 100.0, 130.0, 170.0)
# per-request API intake (ms; None: the endpoint's default, models/cost/frontend.API_INTAKE_S): from today's
# ~1 ms /v1/completions to vLLM 0.6.0's ~6.5 ms (p99 TTFT / N of the LambdaLabs bursts in tests/data/bench)
INTAKE_CANDIDATES_MS = (None, 2.0, 4.0, 7.0)
# Shrinkage of the fitted prefill scale toward the uncalibrated model (see shrink_weight), natural-log units
# (the decode scale and the per-step time are a joint posterior: analyzers/calibrate_posterior.py).
# The prior on a deployment's true log-scale is a two-part mixture read off the uncalibrated model's errors
# over the throughput corpus (models/cost/data/error_bands.json at 7bb09e2, "all"):
# PRIOR_SD, the core: the median |error| as a normal spread, ln(1 + e) / 0.6745 (TTFT 38.2% -> 0.480);
# BROKEN_SD / BROKEN_SHARE, the tail: the 5-95% range of the TPOT log-error is -1.24..+1.51, where a core of
# 0.35 would put 0.04% of rows beyond 1.24: a quarter of deployments with a spread of 1.5
# (P(|x| > 1.24) = 0.41 x 0.25 = 10%) -- a model that is off by 3x for one deployment, not by 25%.
PRIOR_SD = {"prefill_time_scale": 0.480}
BROKEN_SD = 1.5
BROKEN_SHARE = 0.25
# RESULT_SD: how far one result's own best scale sits from the deployment's common one (the model's error
# that changes with the workload). TTFT mixes queueing and intake into the prompt time: 0.40 (twice the
# 0.20 spread of median TPOT across the workloads of the three LambdaLabs deployments in tests/data/bench).
RESULT_SD = {"prefill_time_scale": 0.40}
PREFILL_PRIOR = PrefillPrior(PRIOR_SD["prefill_time_scale"], BROKEN_SD, BROKEN_SHARE)


def silent_requests(b: BenchResult) -> bool:
    """Whether the result's requests with output length 0 RAN: the run counted every request completed, so
    each got a 200 stream whose tokens detokenized to no text (the model ended at once). vLLM 0.6's
    benchmark_serving.py then records TTFT 0 and output 0 but counts the request completed and averages
    its 0 into the mean TTFT. The LambdaLabs 0.6.0 results (tests/data/bench) are such runs: 470 of 1,280
    requests, all with "completed": 1280; their prompts (mean ~380 tokens) were still prefilled, which is
    more prompt work than the requests that streamed text (~130 tokens each)."""
    return bool(b.output_lens) and 0 in b.output_lens and b.completed >= len(b.output_lens)


def requests_for(b: BenchResult, seed: int = 0) -> Any:
    """The requests of one benchmark run, for the simulator: a request that streamed no text ran as its
    prompt plus one token when the run counted it completed (:func:`silent_requests`), else it failed
    (refused by the server) and never ran."""

    if b.input_lens and b.output_lens and len(b.input_lens) == len(b.output_lens):
        p = np.asarray(b.input_lens, dtype=np.int64)
        o = np.asarray(b.output_lens, dtype=np.int64)
        if silent_requests(b):
            p, o = np.maximum(p, 1), np.maximum(o, 1)
        else:
            keep = o > 0
            p, o = np.maximum(p[keep], 1), o[keep]
        arrival = None
        if not math.isinf(b.request_rate):
            rng = np.random.default_rng(seed)
            arrival = np.cumsum(rng.exponential(1.0 / b.request_rate, size=p.shape[0]))
        return Requests.build(p, o, arrival, max_concurrency=b.max_concurrency)
    return from_bench_flags(dataset_name="random", random_input_len=max(1, round(b.mean_input_len)),
                            random_output_len=max(1, round(b.mean_output_len)), num_prompts=max(1, b.completed),
                            request_rate=b.request_rate, max_concurrency=b.max_concurrency, seed=seed)


def predict(spec: Any, b: BenchResult, profile: Profile | None, requests: Any | None = None,
            endpoint: str = "completions") -> dict[str, float]:
    """Simulated ``vllm bench serve`` metrics of run ``b`` on ``spec`` with ``profile`` applied; ``endpoint``:
    the API entry point the client called ("completions" or "chat", ``models.cost.frontend``)."""

    cost, blocks = engine_inputs(spec, apply_profile=False)
    cost = calibrated(cost, profile) if profile is not None else cost
    req = requests if requests is not None else requests_for(b)


    # no API server for an offline run (``vllm bench throughput``: endpoint "offline")
    fe = api_server_for(endpoint, getattr(spec, "vllm_version", None),
                        **(frontend_kwargs(profile) if profile is not None else {}))
    silent = silent_requests(b) and len(req) == len(b.output_lens)
    res = with_frontend_latency(simulate(req, params_for("vllm", spec.effective, blocks), cost, frontend=fe,
                                         per_request=silent), endpoint)
    if silent:  # mean TTFT over the requests that streamed text, as measured_ttft() reads the result
        each = np.asarray(res.pop("ttft_ms_each"))
        timed = np.asarray(b.output_lens) > 0
        if timed.any():
            res["mean_ttft_ms"] += float(each[timed].mean() - each.mean())
    if profile is not None and api_seconds(profile) and fe is not None:
        add_client_latency(res, api_seconds(profile), "calibrated API-server intake")
    return {k: float(res[k]) for k in ("output_throughput", "mean_tpot_ms", "mean_ttft_ms", "median_tpot_ms")
            if res.get(k) is not None}


def _errors(obs: BenchResult, pred: dict[str, float]) -> dict[str, float | None]:
    """Relative errors (predicted / measured - 1) of the metrics the fit uses."""
    out: dict[str, float | None] = {}
    for k in ("output_throughput", "mean_tpot_ms", "mean_ttft_ms", "median_tpot_ms"):
        o, p = (measured_ttft(obs) if k == "mean_ttft_ms" else getattr(obs, k)), pred.get(k)
        out[k] = None if (o is None or p is None or o <= 0) else round(p / o - 1.0, 4)
    return out


def _geo(xs: list[float]) -> float:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 1.0


def _clamp(name: str, v: float) -> tuple[float, bool]:
    lo, hi = TERMS[name][1], TERMS[name][2]
    return min(hi, max(lo, v)), v < lo or v > hi


def _profile(ds: float, ps: float, oh_ms: float, hs_us: float = 0.0, tok_us: float = 72.0,
             intake_ms: float | None = None) -> Profile:
    terms = default_terms()
    if intake_ms is not None:
        terms["api_intake_ms"].value = intake_ms
        terms["api_intake_ms"].fitted = True
    terms["seq_overhead_us"].value = hs_us
    terms["api_token_us"].value = tok_us
    terms["decode_time_scale"].value = ds
    terms["prefill_time_scale"].value = ps
    terms["step_overhead_ms"].value = oh_ms
    return Profile(terms=terms)


def _fit_scales(spec: Any, benches: list[BenchResult], reqs: list[Any], oh_ms: float,
                hs_us: float = 0.0, tok_us: float = 72.0,
                start: tuple[float, float] = (1.0, 1.0),
                intake_ms: float | None = None, endpoint: str = "completions",
                fit_prefill: bool = True) -> tuple[float, float, dict]:
    """Fixed-point iteration of the two time scales at given host terms, from ``start``; stops when both
    move by less than ``CONVERGED`` (relative). ``fit_prefill`` False holds the prefill scale at its start."""
    ds, ps = start
    hit = {"decode_time_scale": False, "prefill_time_scale": False}
    preds: list[dict[str, float]] = []
    for _ in range(ITERATIONS):
        prof = _profile(ds, ps, oh_ms, hs_us, tok_us, intake_ms)
        preds = [predict(spec, b, prof, r, endpoint) for b, r in zip(benches, reqs)]
        ds0, ps0 = ds, ps
        dec = []
        pre = []
        for b, p in zip(benches, preds):
            k = _tpot_key(b, p)
            if k and not (stalled(b) and b.output_throughput and p.get("output_throughput")):
                dec.append(getattr(b, k) / p[k])
            if b.output_throughput and p.get("output_throughput") and math.isinf(b.request_rate):
                dec.append(p["output_throughput"] / b.output_throughput)
            if b.mean_ttft_ms and p.get("mean_ttft_ms"):
                pre.append(measured_ttft(b) / p["mean_ttft_ms"])
        ds, hit["decode_time_scale"] = _clamp("decode_time_scale", ds * _geo(dec))
        if fit_prefill:
            ps, hit["prefill_time_scale"] = _clamp("prefill_time_scale", ps * _geo(pre) ** 0.7)
        if abs(ds / ds0 - 1) < CONVERGED and abs(ps / ps0 - 1) < CONVERGED:
            break
    prof = _profile(ds, ps, oh_ms, hs_us, tok_us, intake_ms)
    preds = [predict(spec, b, prof, r, endpoint) for b, r in zip(benches, reqs)]
    return ds, ps, {"preds": preds, "at_bound": hit}


def _with(prof: Profile, **values: float) -> Profile:
    """A copy of ``prof`` with the named terms' values replaced."""
    terms = {k: t.model_copy() for k, t in prof.terms.items()}
    for k, v in values.items():
        terms[k].value = v
    return Profile(terms=terms)


def decode_observations(spec: Any, benches: list[BenchResult], reqs: list[Any], prof: Profile, endpoint: str,
                        prior: DecodePrior = PRIOR, free_p: bool = False) -> list[Observation]:
    """The runs' TPOT and output throughput as observations linear in (decode scale, per-step time) around
    ``prof``'s values: three simulations per run (at the point, with the scale x``D_STEP``, with
    ``C_STEP_MS`` more per step). Which metric a run gives: its TPOT (the median where published: see
    ``_tpot_key``) unless stall-dominated (:func:`stalled`), its output throughput unless rate-limited (the
    offered load, whatever the GPU's speed). ``free_p``: also the slope in the prefill scale (a fourth
    simulation, the scale x``D_STEP``), in each observation's ``extra`` (``p0``, ``slope_p``)."""
    d0, c0 = prof.value("decode_time_scale"), prof.value("step_overhead_ms")
    at = [predict(spec, b, prof, r, endpoint) for b, r in zip(benches, reqs)]
    up_d = [predict(spec, b, _with(prof, decode_time_scale=d0 * D_STEP), r, endpoint) for b, r in zip(benches, reqs)]
    up_c = [predict(spec, b, _with(prof, step_overhead_ms=c0 + C_STEP_MS), r, endpoint)
            for b, r in zip(benches, reqs)]
    p0 = prof.value("prefill_time_scale")
    up_p = ([predict(spec, b, _with(prof, prefill_time_scale=p0 * D_STEP), r, endpoint) for b, r in zip(benches, reqs)]
            if free_p else [{} for _ in benches])
    obs: list[Observation] = []
    for b, p, pd, pc, pp in zip(benches, at, up_d, up_c, up_p):
        k = _tpot_key(b, p)
        if k and not stalled(b) and pd.get(k) and pc.get(k):   # the run's time per decode step
            obs.append(Observation(f"{b.label()} {k}", "time", float(getattr(b, k)), p[k], d0, c0,
                                   (pd[k] - p[k]) / (d0 * (D_STEP - 1)), (pc[k] - p[k]) / C_STEP_MS,
                                   prior.tpot_log_sd,
                                   {"p0": p0, "slope_p": (pp[k] - p[k]) / (p0 * (D_STEP - 1))} if pp.get(k) else {}))
            continue
        t = "output_throughput"    # else the aggregate of every step's time
        if b.output_throughput and math.isinf(b.request_rate) and p.get(t) and pd.get(t) and pc.get(t):
            obs.append(Observation(f"{b.label()} {t}", "rate", float(b.output_throughput), p[t], d0, c0,
                                   (1 / pd[t] - 1 / p[t]) / (d0 * (D_STEP - 1)), (1 / pc[t] - 1 / p[t]) / C_STEP_MS,
                                   prior.throughput_log_sd,
                                   {"p0": p0, "slope_p": (1 / pp[t] - 1 / p[t]) / (p0 * (D_STEP - 1))}
                                   if pp.get(t) else {}))
    return obs


def fit_decode(spec: Any, benches: list[BenchResult], reqs: list[Any], prof: Profile, endpoint: str,
               prior: DecodePrior = PRIOR, start: tuple[float, float] = (1.0, 0.0), free_p: bool = False
               ) -> tuple[float, float, dict[str, Any]]:
    """Posterior mean of (decode_time_scale, step_overhead_ms) with ``prof``'s other terms held
    (analyzers/calibrate_posterior.py): linearised at ``start`` (default: the uncalibrated model), then again
    at each pass's estimate (``DECODE_PASSES``). Returns (d, c ms, details: observations, mode, at-bound flags).
    ``free_p``: the prefill scale is a third term of the posterior (results whose TTFT cannot identify it), its
    estimate in the details' ``p``."""
    lo, hi = TERMS["decode_time_scale"][1], TERMS["decode_time_scale"][2]
    c_hi = TERMS["step_overhead_ms"][2]
    p_bounds = (TERMS["prefill_time_scale"][1], TERMS["prefill_time_scale"][2])
    d, c = start
    p = prof.value("prefill_time_scale")
    post: dict[str, Any] = {"d": d, "c": c, "d_mean": d, "c_mean": c, "d_mode": d, "c_mode": c,
                            "d_at_bound": False, "c_at_bound": False}
    if free_p:
        post.update({"p": p, "p_mode": p, "p_at_bound": False})
    obs: list[Observation] = []
    for _ in range(DECODE_PASSES):
        at = _with(prof, decode_time_scale=d, step_overhead_ms=c, prefill_time_scale=p)
        obs = decode_observations(spec, benches, reqs, at, endpoint, prior, free_p)
        if not obs:
            break
        if free_p:
            post = posterior_mean3(obs, prior, PREFILL_PRIOR, (lo, hi), c_hi, p_bounds)
        else:
            post = posterior_mean(obs, prior, (lo, hi), c_hi)
        done = abs(post["d"] / d - 1) < CONVERGED and abs(post["c"] - c) < 0.05 and (
            not free_p or abs(post["p"] / p - 1) < CONVERGED)
        d, c = float(post["d"]), float(post["c"])
        p = float(post.get("p", p))
        if done:
            break
    return d, c, {**post, "observations": obs}


def stalled(b: BenchResult) -> bool:
    """Whether the run's TPOT is dominated by scheduling stalls: mean TPOT above ``SKEWED_TPOT`` x the median
    (short requests caught in prefill rounds or preemptions). Such a run's TPOT, median included, measures the
    scheduler's timing under that load rather than time per decoded token, so its decode scale is read from
    its output throughput alone (the aggregate of every step's time)."""
    return bool(b.mean_tpot_ms and b.median_tpot_ms and b.mean_tpot_ms > SKEWED_TPOT * b.median_tpot_ms)


def _is_burst(b: BenchResult) -> bool:
    """All requests sent at once with no concurrency cap (``--request-rate inf``, no ``--max-concurrency``)."""
    return math.isinf(b.request_rate) and not b.max_concurrency


def shrink_weight(name: str, n: int, x: float) -> float:
    """Weight ``w`` of the data against the prior (the uncalibrated model, scale 1) for a time scale whose
    ``n`` results alone give the log-scale ``x``: the fitted log-scale is ``w x``, the posterior mean under
    the two-part prior above with ``n`` observations of spread ``RESULT_SD`` (``s^2 = sigma^2 / n``). Each part
    ``k`` shrinks by ``tau_k^2 / (tau_k^2 + s^2)`` and weighs by its share times the normal density of ``x``
    with variance ``tau_k^2 + s^2``: an offset within the core spread is mostly read as the workload's noise
    (one result: ~0.75 of the way), a large consistent one as a model that is off for this deployment
    (kept almost whole). 0 with no result (the prior). The calibrated prediction of another workload then
    errs, in expectation over deployments, by no more than the uncalibrated one when the spreads are right."""
    if n <= 0:
        return 0.0
    s2 = RESULT_SD[name] ** 2 / n
    num = den = 0.0
    for share, tau in ((1.0 - BROKEN_SHARE, PRIOR_SD[name]), (BROKEN_SHARE, BROKEN_SD)):
        var = tau * tau + s2
        p = share * math.exp(-x * x / (2.0 * var)) / math.sqrt(var)
        num += p * tau * tau / var
        den += p
    return num / den


def _shrink_note(name: str, raw: float, w: float, n: int) -> str:
    return (f"the {n} result(s) alone give x{raw:.3f}; shrunk toward the uncalibrated model (x1) with weight "
            f"{w:.2f} (prior: spread {PRIOR_SD[name]:g}, a share {BROKEN_SHARE:g} at {BROKEN_SD:g}; one result's "
            f"spread {RESULT_SD[name]:g}; log scale)")


def _tpot_key(b: BenchResult, p: dict[str, float]) -> str | None:
    """The TPOT statistic the decode term is fitted to: the median when the result has it, else the mean.

    The median is a request's typical time per token; the mean of a saturated run is dominated by short
    requests whose few tokens straddle a scheduling stall (V0 prefill rounds, preemptions), which is the
    scheduler's doing, not a per-token cost, and does not transfer to another concurrency."""
    for k in ("median_tpot_ms", "mean_tpot_ms"):
        if getattr(b, k, None) and p.get(k):
            return k
    return None


def measured_ttft(b: BenchResult) -> float | None:
    """Mean TTFT over the requests that streamed text. vLLM's benchmark averages TTFT over the requests that
    succeeded (``completed``), and one that succeeded without streaming text (ended at once:
    :func:`silent_requests`) brings a TTFT of 0; a failed (refused) request is in neither the mean nor
    ``completed``. So the mean over the text-streaming ones is mean x completed / (requests with output)."""
    if b.mean_ttft_ms is None:
        return None
    if b.output_lens and 0 in b.output_lens:
        ran = sum(1 for o in b.output_lens if o > 0)
        succeeded = min(b.completed, len(b.output_lens)) if b.completed else len(b.output_lens)
        return b.mean_ttft_ms * max(succeeded, ran) / max(1, ran)
    return b.mean_ttft_ms


def _loss(benches: list[BenchResult], preds: list[dict[str, float]]) -> float:
    s = 0.0
    for b, p in zip(benches, preds):
        for k, w in (("output_throughput", 1.0), (_tpot_key(b, p), 1.0), ("mean_ttft_ms", 0.25)):
            if k is None:
                continue
            o, q = (measured_ttft(b) if k == "mean_ttft_ms" else getattr(b, k)), p.get(k)
            if o and q and o > 0 and q > 0:
                s += w * math.log(q / o) ** 2
    return s


def unit_step_ms(spec: Any) -> float:
    """The uncalibrated model's time (ms) of a decode step of one sequence at empty context: the deployment's
    own unit for the per-step time's prior (``DecodePrior.for_step``): weights read once, the layer stack's
    kernel floor and the host's fixed time, all of which the time the model misses per step grows with."""
    cost, _ = engine_inputs(spec, apply_profile=False)
    try:
        return float(cost.decode_linear(1).time(0.0)) * 1e3
    except AttributeError:
        return float(cost.step_time(1, 0, 0, 0.0)) * 1e3


def check_model(spec: Any, b: BenchResult) -> None:
    """A result of another model than the deployment's is refused (it would fit the wrong thing)."""
    if not b.model_id or not spec.model_name:
        return
    a = spec.model_name.rstrip("/").rsplit("/", 1)[-1].lower()
    m = b.model_id.rstrip("/").rsplit("/", 1)[-1].lower()
    if a != m:
        raise InputError(f"the benchmark ran model {b.model_id!r} but the deployment serves {spec.model_name!r}",
                         file=b.file, hint="calibrate with results of the same deployment")


def bench_endpoint(benches: list[BenchResult], spec: Any) -> str:
    """The API entry point the results' client called (``completions``, ``chat`` or ``chat-harmony``), read from
    the ``backend`` each --save-result JSON records; ``completions`` (vLLM's default ``--backend vllm``) when none
    says. Results of different entry points are an ``InputError``: their API-server costs differ."""
    kinds: dict[str, list[str]] = {}
    for b in benches:
        if b.backend:
            try:
                kinds.setdefault(endpoint_kind(b.backend), []).append(Path(b.file).name)
            except ValueError as err:
                raise InputError(str(err), file=b.file, key="backend") from None
    if len(kinds) > 1:
        raise InputError("the results called different API entry points ("
                         + "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(kinds.items())) + ")",
                         hint="calibrate the chat and the completions results separately")
    kind = next(iter(kinds), "completions")
    return endpoint_for(kind, getattr(getattr(spec, "arch", None), "model_type", None), template_release(spec))


def fit(spec: Any, benches: list[BenchResult], log_note: str | None = None, endpoint: str = "completions",
        prior: DecodePrior | None = None) -> Profile:
    """The profile of one deployment from its benchmark results (see module docstring); ``prior``: the
    decode-side prior and per-run spreads (analyzers/calibrate_posterior.py; the benchmark passes spreads
    measured without the deployment it scores)."""
    if not benches:
        raise InputError("calibrate needs at least one --bench result")
    for b in benches:
        check_model(spec, b)
        if not b.mean_tpot_ms and not b.output_throughput:
            raise InputError("the result has neither TPOT nor output throughput to fit", file=b.file)
    reqs = [requests_for(b) for b in benches]
    base = [predict(spec, b, None, r, endpoint) for b, r in zip(benches, reqs)]
    unit = unit_step_ms(spec)
    if prior is None:   # the shipped prior of the deployment's engine generation
        prior = PRIOR_BY_ENGINE.get(str(getattr(spec.effective, "engine", None) or "v1").lower(), PRIOR)
    prior = prior.for_step(unit)
    concs = {min(len(r), b.max_concurrency or len(r)) for b, r in zip(benches, reqs)}
    best = None
    hs_candidates = SEQ_OVERHEAD_CANDIDATES_US if len(concs) >= 2 else (0.0,)
    tok_candidates = API_TOKEN_CANDIDATES_US if len(concs) >= 2 else (API_TOKEN_CANDIDATES_US[0],)
    # what the results can identify (module docstring): the prefill scale from the TTFT of a result that is not
    # a burst, or of bursts of two or more sizes (one burst's TTFT is its intake queue plus its prefill: one
    # number, two unknowns); the API intake from bursts of two or more sizes (TTFT growing with N)
    bursts = {b.completed for b in benches if _is_burst(b) and b.mean_ttft_ms}
    fit_prefill = any(b.mean_ttft_ms for b in benches if not _is_burst(b)) or len(bursts) >= 2
    # the API intake of a burst first (it sets when the engine receives the requests: TTFT, and how long V0's
    # prefill-first scheduler keeps decodes waiting), chosen by the loss; then, at that intake, a coordinate
    # search: the streaming cost (host terms at 0), then the host terms at that cost
    # first the decode scale and the per-step time at the uncalibrated model's other terms (the per-step time
    # is in every step, prefill steps included: TTFT and the host terms below are read with it in place)
    # results with no TTFT at all (offline ``vllm bench throughput`` runs): the prefill scale is a third term of
    # the decode posterior, each run's throughput carrying its prefill share of the time (one burst's TTFT
    # holds it at 1: the fitted split of its throughput did not transfer to the LambdaLabs bursts' other sizes)
    free_p = not fit_prefill and not any(b.mean_ttft_ms for b in benches)
    d0, c0, first = fit_decode(spec, benches, reqs, _profile(1.0, 1.0, 0.0), endpoint, prior, free_p=free_p)
    p0 = float(first.get("p", 1.0))
    intake: float | None = None
    if len(bursts) >= 2:
        warm = (d0, p0)
        for c in INTAKE_CANDIDATES_MS:   # each fit starts from the previous one's scales
            ds, ps, info = _fit_scales(spec, benches, reqs, c0, 0.0, tok_candidates[0], warm, c, endpoint,
                                       fit_prefill)
            warm = (ds, ps)
            loss = _loss(benches, info["preds"])
            if best is None or loss < best[0] - 1e-9:
                best = (loss, ds, ps, c0, 0.0, tok_candidates[0], info)
                intake = c
    trials = [(t, c0, 0.0) for t in tok_candidates if best is None or t != best[5]]
    for stage in (0, 1):
        for tok, oh, hs in trials:
            start = (best[1], best[2]) if best is not None else (d0, p0)
            ds, ps, info = _fit_scales(spec, benches, reqs, oh, hs, tok, start, intake, endpoint,
                                       fit_prefill)
            loss = _loss(benches, info["preds"])
            if best is None or loss < best[0] - 1e-9:
                best = (loss, ds, ps, oh, hs, tok, info)
        assert best is not None
        trials = [(best[5], c0, hs) for hs in hs_candidates if hs != 0.0]
    loss, ds_raw, ps_raw, _, hs, tok, info = best
    n = len(benches)
    n_ttft = sum(1 for b in benches if b.mean_ttft_ms) if fit_prefill else 0
    w_p = shrink_weight("prefill_time_scale", n_ttft, math.log(ps_raw))
    ps = ps_raw ** w_p
    # the decode scale and the per-step time: a posterior at the prefill scale and host terms chosen above
    if free_p:
        ps = p0
    ds, oh, post = fit_decode(spec, benches, reqs, _profile(1.0, ps, 0.0, hs, tok, intake), endpoint, prior,
                              start=(d0, c0), free_p=free_p)
    if free_p:
        ps = float(post["p"])
    oh = round(oh, 2)
    info["preds"] = [predict(spec, b, _profile(ds, ps, oh, hs, tok, intake), r, endpoint)
                     for b, r in zip(benches, reqs)]
    loss = _loss(benches, info["preds"])
    # TTFT the prefill term cannot absorb within its bound is per-request intake (tokenization, API queue)
    api = 0.0
    # (the left-over at the bound itself, before shrinkage: what no plausible prefill factor explains)
    if fit_prefill and info["at_bound"]["prefill_time_scale"] and ps_raw >= TERMS["prefill_time_scale"][2]:
        at_bound = [predict(spec, b, _profile(ds, ps_raw, oh, hs, tok, intake), r, endpoint)
                    for b, r in zip(benches, reqs)]
        gaps = [measured_ttft(b) - p["mean_ttft_ms"] for b, p in zip(benches, at_bound)
                if b.mean_ttft_ms and p.get("mean_ttft_ms") is not None]
        if gaps and min(gaps) > 0:
            api = round(min(TERMS["api_ms"][2], sum(gaps) / len(gaps)), 1)
            prof = _profile(ds, ps, oh, hs, tok, intake)
            prof.terms["api_ms"].value = api
            info["preds"] = [predict(spec, b, prof, r, endpoint) for b, r in zip(benches, reqs)]
    terms: dict[str, FittedTerm] = default_terms()
    labels = [b.label() for b in benches]
    obs = post["observations"]
    n_tpot = sum(1 for o in obs if o.kind == "time")
    n_thr = len(obs) - n_tpot
    split = (f"posterior over {n_tpot} TPOT and {n_thr} output-throughput observation(s): the mean per-step "
             f"time and the mean scale at it (mode x{post['d_mode']:.3f} at {post['c_mode']:.2f} ms); prior {prior.source}: ln(scale) "
             f"{prior.decode_log_mean:g} sd {prior.decode_log_sd:g}, per-step time {prior.step_ms_mean:.2f} sd "
             f"{prior.step_ms_sd:.2f} ms (the model's one-sequence step here: {unit:.2f} ms), one run's spread "
             f"{prior.tpot_log_sd:g} (TPOT) / {prior.throughput_log_sd:g} (throughput) in log")
    one_level = len(concs) < 2
    terms["decode_time_scale"] = terms["decode_time_scale"].model_copy(update={
        "value": round(ds, 4), "fitted": bool(obs), "at_bound": bool(post["d_at_bound"]),
        "supported_by": [f"TPOT (median where given) and output throughput (closed loop or burst) of {n} result(s)"
                         + (f" (output throughput alone for {sum(map(stalled, benches))} stall-dominated result(s))"
                            if any(map(stalled, benches)) else ""), split] + labels})
    has_ttft = any(b.mean_ttft_ms for b in benches)
    terms["prefill_time_scale"] = terms["prefill_time_scale"].model_copy(update={
        "value": round(ps, 4) if (fit_prefill or free_p) else 1.0, "fitted": fit_prefill or bool(free_p and obs),
        "at_bound": (info["at_bound"]["prefill_time_scale"] and fit_prefill) or bool(post.get("p_at_bound")),
        "supported_by": ([f"mean TTFT of {n_ttft} result(s)", _shrink_note("prefill_time_scale", ps_raw, w_p, n_ttft)]
                         if fit_prefill else
                         [("no TTFT separates it (" + ("one burst's TTFT is its intake queue plus its prefill"
                                                       if has_ttft else "the results have no TTFT") + "): a third "
                           f"term of the decode posterior, from each run's prefill share of its time (mode "
                           f"x{post.get('p_mode', 1.0):.3f}); prior: ln(scale) spread {PRIOR_SD['prefill_time_scale']:g}"
                           f", a share {BROKEN_SHARE:g} at {BROKEN_SD:g}"), split]
                         if free_p and obs else
                         ["one burst's TTFT cannot separate the API intake queue from prefill time (a closed-loop "
                          "or rate-limited result, or bursts of two sizes, can): held at 1"] if has_ttft else
                         ["no TTFT in the results: held at 1"])})
    terms["step_overhead_ms"] = terms["step_overhead_ms"].model_copy(update={
        "value": oh, "fitted": bool(obs), "at_bound": bool(post["c_at_bound"]),
        "supported_by": [("one concurrency level: the prior splits the run's offset between this and the decode "
                          "scale (a few ms on a short step is mostly per-step time, a share of a long step "
                          "mostly scale); results at two or more concurrency levels separate them"
                          if one_level else
                          f"{len(concs)} concurrency levels: the same time per step at every batch size"), split]})
    terms["seq_overhead_us"] = terms["seq_overhead_us"].model_copy(update={
        "value": hs, "fitted": len(hs_candidates) > 1,
        "supported_by": ([f"{len(concs)} concurrency levels: chosen among {list(SEQ_OVERHEAD_CANDIDATES_US)} us"]
                         if len(hs_candidates) > 1 else
                         ["one concurrency level cannot separate per-sequence host time from the decode scale: "
                          "held at 0"])})
    terms["api_token_us"] = terms["api_token_us"].model_copy(update={
        "value": tok, "fitted": len(tok_candidates) > 1,
        "supported_by": ([f"{len(concs)} concurrency levels (the streaming cost caps throughput at 1/x): chosen "
                          f"among {list(API_TOKEN_CANDIDATES_US)} us"] if len(tok_candidates) > 1 else
                         ["one concurrency level cannot tell a throughput cap from the decode scale: held at "
                          "the model's 72 us"])})
    terms["api_intake_ms"] = terms["api_intake_ms"].model_copy(update={
        "value": intake if intake is not None else TERMS["api_intake_ms"][0], "fitted": intake is not None,
        "supported_by": ([f"TTFT, TPOT and throughput of bursts of {len(bursts)} sizes: chosen among "
                          f"{[x for x in INTAKE_CANDIDATES_MS if x is not None]} ms and the endpoint default"]
                         if intake is not None else
                         ["one burst size cannot tell the intake from prefill time (TTFT growing with N can): the "
                          "endpoint's default intake"] if bursts else ["no burst result: the endpoint's default intake"])})
    terms["api_ms"] = terms["api_ms"].model_copy(update={
        "value": api, "fitted": api > 0, "at_bound": api >= TERMS["api_ms"][2],
        "supported_by": ([f"mean TTFT left over with the prefill scale at its bound, {n} result(s)"] if api > 0 else
                         ["the prefill term absorbs the TTFT offset: held at 0"] if fit_prefill else
                         ["the prefill scale is not identified, so no TTFT left-over is attributed: held at 0"])})
    eff = spec.effective
    deployment = {"model": spec.model_name, "gpu": spec.hardware.gpu.id, "vllm": spec.vllm_version,
                  "tensor_parallel_size": eff.tensor_parallel_size,
                  "pipeline_parallel_size": eff.pipeline_parallel_size, "max_num_seqs": eff.max_num_seqs,
                  "max_num_batched_tokens": eff.max_num_batched_tokens, "kv_cache_dtype": eff.kv_cache_dtype,
                  "quantization": eff.quantization}
    results = []
    for b, p0, p1 in zip(benches, base, info["preds"]):
        results.append({"bench": b.label(), "measured": {"output_throughput": b.output_throughput,
                                                         "mean_tpot_ms": b.mean_tpot_ms,
                                                         "mean_ttft_ms": measured_ttft(b)},
                        "uncalibrated_error": _errors(b, p0), "calibrated_error": _errors(b, p1)})
    notes = []
    if n == 1:
        notes.append("one result: its offset is split between the decode scale and the per-step time by the "
                     "prior (a short step's offset goes mostly to per-step time); results at two or more "
                     "concurrency levels separate them and also fit the per-sequence and per-streamed-token host "
                     "terms")
    if any(t.at_bound for t in terms.values()):
        notes.append("a term hit its bound: the model and the measurements disagree beyond a plausible "
                     "efficiency factor (check the config, GPU and release match the benchmark)")
    skewed = [b.label() for b in benches if stalled(b)]
    if skewed:
        notes.append(f"mean TPOT above {SKEWED_TPOT:g}x the median in {', '.join(skewed)}: short requests caught in "
                     "scheduling stalls (prefill steps, preemptions) dominate the mean; the decode term is fitted "
                     "to such a result's output throughput, and predicted mean TPOT under such load is the least "
                     "reliable metric (it follows the replay's stalls)")
    if any(b.output_lens and 0 in b.output_lens and not silent_requests(b) for b in benches):
        notes.append("requests that produced no token (refused by the server) are left out of the replay")
    if any(silent_requests(b) for b in benches):
        notes.append("requests that streamed no text but were counted completed ran as their prompt plus one "
                     "token; the mean TTFT is compared over the requests that streamed text (vLLM's benchmark "
                     "averages a TTFT of 0 for the others)")
    if log_note:
        notes.append(log_note)
    return Profile(deployment=deployment, terms=terms,
                   fit={"results": results, "loss": round(loss, 5), "notes": notes})
