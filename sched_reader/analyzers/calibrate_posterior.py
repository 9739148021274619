"""The decode-side terms of a calibration profile as a posterior over (decode time scale, per-step time).

A run's TPOT and output throughput are sums of two kinds of time the cost model can be wrong about:

* time that grows with the step's work (weights and KV read from HBM, GEMMs): ``decode_time_scale`` ``d``
  multiplies it;
* time every engine step pays whatever its batch (host scheduling, sampling, Python, kernel launches of an
  eager or partly captured forward, collectives' fixed latency): ``step_overhead_ms`` ``c`` adds to it.

At one batch size the two are one number (a run 2x slower than the model is d = 2 or c = one step's time);
across batch sizes they differ: c is the same ms at concurrency 4 and 128, d scales with the step. The
published runs of the corpus's deployments say which transfers (benchmarks/calibration_accuracy.py
``--terms``: the per-deployment fit of both terms over all its runs; dstack's DeepSeek-R1 on 8x MI300X
is c = 30 ms at d = 0.58, which no scale alone reproduces across concurrency 4-128). So the fit is a
posterior: a prior measured over 77 deployments with several concurrency levels, per engine generation
(centred on their mean terms: nearly all have d < 1 and c > 0; c in units of the deployment's own step,
see ``PRIOR_BY_ENGINE``), and each run's TPOT / throughput as observations with the spread one workload's
error has around its deployment's common terms. One run then splits its offset by where it is more plausible;
several runs at different batch sizes pin both.

Each observation is linear in (d, c) around the point it was simulated at (``Observation``: the simulator's
value there and its slopes, from two more simulations); the posterior is evaluated on a grid over the
terms' bounds; the estimate is c's posterior mean and the mean of ln d at that c (a point on the ridge of
values that reproduce one run, where the joint mean of a curved ridge is not). The caller re-linearises
there and evaluates again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

# Prior and noise, measured on the corpus's deployments with several published workloads
# (benchmarks/calibration_accuracy.py --terms, at the commit that introduced them): each deployment's own
# (ln d, c) fitted over all its runs (a flat prior), and the residual of each of its runs around that fit.
# DECODE_LOG_SD: root mean square of ln d over the deployments; STEP_MS_SD: root mean square of c (ms); the
# per-run spreads: the median over deployments of the root mean square residual of ln TPOT and of
# ln(throughput) (the median, so the one deployment whose runs the model cannot shape, InferenceX's
# MiniMax-M2.5 with residuals of 0.7, does not set the spread for every other one). The benchmark scores
# each deployment with these re-measured WITHOUT it (leave one deployment out).


@dataclass(frozen=True)
class DecodePrior:
    """Spreads of the prior (around d = 1, c = 0) and of one run's observations (natural-log units; ms)."""

    decode_log_sd: float
    step_ms_sd: float
    tpot_log_sd: float
    throughput_log_sd: float
    source: str = ""
    decode_log_mean: float = 0.0     # the prior's centre: mean ln d over the deployments (0: the model)
    step_ms_mean: float = 0.0        # mean c (ms) over the deployments (0: the model)
    # the per-step time in units of the deployment's own one-sequence step (``unit_step_ms``): when set,
    # ``for_step`` turns them into the ms fields above for one deployment
    step_rel_mean: float | None = None
    step_rel_sd: float | None = None

    def for_step(self, unit_ms: float) -> "DecodePrior":
        """This prior for a deployment whose model step of one sequence at empty context is ``unit_ms``."""
        if self.step_rel_sd is None or unit_ms <= 0:
            return self
        return replace(self, step_ms_mean=(self.step_rel_mean or 0.0) * unit_ms,
                       step_ms_sd=self.step_rel_sd * unit_ms)


# Measured (benchmarks/calibration_accuracy.py --terms) on 77 deployments with three or more concurrency
# levels fitted over all their runs: the 7 of the public corpus (the three LambdaLabs vLLM 0.6.0 ones,
# dstack's DeepSeek-R1 on 8x MI300X and 8x H200 under 0.7.3 -- the V0 engine -- and InferenceX's and Vultr's
# MiniMax-M2.5) and 70 groups of NVIDIA's measured vLLM 0.11-0.19 closed loops (tests/data/silicon: Qwen3-32B,
# Llama-3.1-8B-FP8, gpt-oss-120b, MiniMax-M2.5, Qwen3-235B-FP8, Kimi-K2.5 on H100-B300). Nearly all have d < 1
# (the model's work time runs long) and c > 0, so the prior is centred on their mean, not on the uncalibrated
# model; and the per-step time the model misses is an engine-generation matter: the V0 engine's host work
# (scheduling, input preparation, sampling, detokenizing in one process, between GPU steps) costs 2.63 sd
# 0.73 of the deployment's own one-sequence step (LambdaLabs: 9.7 ms on an 8B, 38 ms on a 70B TP2; dstack
# 22-30 ms on DeepSeek-R1), V1's overlapped engine core 0.35 sd 0.38 of it. The per-step time in units of
# the deployment's own step because what the model misses per step grows with it: an absolute 20 ms would
# be ten steps of a 0.6B. (d scales the whole decode work, its KV read included:
# models/calibration_profile.py.)
PRIOR_BY_ENGINE: dict[str, DecodePrior] = {
    "v0": DecodePrior(decode_log_sd=0.175, step_ms_sd=13.50, tpot_log_sd=0.054, throughput_log_sd=0.050,
                      source="measured on the 5 V0-engine deployments (benchmarks/calibration_accuracy.py --terms)",
                      decode_log_mean=-0.331, step_ms_mean=26.31, step_rel_mean=2.628, step_rel_sd=0.733),
    "v1": DecodePrior(decode_log_sd=0.222, step_ms_sd=1.87, tpot_log_sd=0.054, throughput_log_sd=0.050,
                      source="measured on 72 V1-engine deployments (benchmarks/calibration_accuracy.py --terms)",
                      decode_log_mean=-0.178, step_ms_mean=2.13, step_rel_mean=0.348, step_rel_sd=0.378),
}
# all 77 pooled: for an engine the table does not name
PRIOR = DecodePrior(decode_log_sd=0.221, step_ms_sd=6.99, tpot_log_sd=0.054, throughput_log_sd=0.050,
                    source="measured on 77 deployments (benchmarks/calibration_accuracy.py --terms)",
                    decode_log_mean=-0.188, step_ms_mean=3.70, step_rel_mean=0.496, step_rel_sd=0.694)
# a prior that lets the data alone decide (for measuring the per-deployment terms themselves)
FLAT = DecodePrior(decode_log_sd=10.0, step_ms_sd=1e4, tpot_log_sd=0.05, throughput_log_sd=0.05, source="flat")

GRID_D = 161     # points over ln d in [ln lower, ln upper]
GRID_C = 301     # points over c in [0, upper], denser near 0 (c = upper x^2, x uniform): 0.001 ms apart at 0,
                 # 0.07 ms at 1 ms, 0.4 ms at 40 ms of a 100 ms bound


@dataclass
class Observation:
    """One measured metric of one run, linear in (d, c) around the simulated point (d0, c0).

    ``kind`` "time": a time (TPOT, ms) that grows with d and c; "rate": output throughput (tok/s), modelled
    as its inverse (time per token) so both are linear in the step time."""

    label: str
    kind: str
    measured: float
    at: float            # the simulator's value at (d0, c0)
    d0: float
    c0: float
    slope_d: float       # d(time) / d(d), in the metric's time unit (ms, or s per token for a rate)
    slope_c: float       # d(time) / d(c ms)
    sd: float
    extra: dict = field(default_factory=dict)

    def time_at(self) -> float:
        return self.at if self.kind == "time" else 1.0 / self.at

    def measured_time(self) -> float:
        return self.measured if self.kind == "time" else 1.0 / self.measured

    def predict_time(self, d: np.ndarray, c: np.ndarray) -> np.ndarray:
        return self.time_at() + (d - self.d0) * self.slope_d + (c - self.c0) * self.slope_c


def log_posterior(obs: list[Observation], prior: DecodePrior, d_bounds: tuple[float, float],
                  c_upper: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ln d grid, c grid, log posterior on the grid, unnormalised): Gaussian prior on ln d and on c around
    the prior's means (c >= 0: truncated at 0), each observation's log ratio predicted / measured normal with
    its ``sd``."""
    u = np.linspace(math.log(d_bounds[0]), math.log(d_bounds[1]), GRID_D)
    c = c_upper * np.linspace(0.0, 1.0, GRID_C) ** 2
    U, C = np.meshgrid(u, c, indexing="ij")
    lp = (-0.5 * ((U - prior.decode_log_mean) / prior.decode_log_sd) ** 2
          - 0.5 * ((C - prior.step_ms_mean) / prior.step_ms_sd) ** 2)
    D = np.exp(U)
    for o in obs:
        t = o.predict_time(D, C)
        m = o.measured_time()
        bad = t <= 0
        r = np.log(np.where(bad, 1.0, t) / m)
        lp = lp - 0.5 * (r / o.sd) ** 2
        lp = np.where(bad, -np.inf, lp)
    return u, c, lp


def posterior_mean(obs: list[Observation], prior: DecodePrior, d_bounds: tuple[float, float],
                   c_upper: float) -> dict[str, float | bool]:
    """Posterior mean of (d, c) -- d as exp(mean ln d) -- the mode, and whether the mode sits at a bound."""
    u, c, lp = log_posterior(obs, prior, d_bounds, c_upper)
    if not np.isfinite(lp).any():
        return {"d": 1.0, "c": 0.0, "d_mean": 1.0, "c_mean": 0.0, "d_mode": 1.0, "c_mode": 0.0,
                "d_at_bound": False, "c_at_bound": False}
    width = np.gradient(c)                # the c grid is not uniform: weigh each point by its cell
    w = np.exp(lp - lp.max()) * width[None, :]
    w /= w.sum()
    mu = float((w.sum(axis=1) * u).sum())
    mc = float((w.sum(axis=0) * c).sum())
    # the estimate: c's posterior mean, and ln d's mean GIVEN that c (the column at c): with one run the
    # posterior is a ridge of (d, c) pairs that all reproduce it, and this point stays on it where the joint
    # mean (mu, mc) of a curved ridge does not
    k = int(np.clip(np.searchsorted(c, mc), 1, GRID_C - 1))
    f = (mc - c[k - 1]) / (c[k] - c[k - 1])
    col = np.exp(lp[:, k - 1] - lp.max()) * (1 - f) + np.exp(lp[:, k] - lp.max()) * f
    uc = float((col * u).sum() / col.sum()) if col.sum() > 0 else mu
    i, j = np.unravel_index(int(np.argmax(lp)), lp.shape)
    return {"d": math.exp(uc), "c": mc, "d_mean": math.exp(mu), "c_mean": mc,
            "d_mode": math.exp(float(u[i])), "c_mode": float(c[j]),
            "d_at_bound": i in (0, GRID_D - 1), "c_at_bound": j == GRID_C - 1}


# The prefill scale p as a third term, for results whose TTFT cannot identify it (offline runs, one burst):
# their output throughput is the time of every step, prefill included, so its offset is shared between the
# decode terms and p by each run's prefill share of the time and the priors. p's prior: the two-part
# mixture of analyzers/calibrate.py (PRIOR_SD, BROKEN_SD, BROKEN_SHARE: read off the corpus's TTFT errors).
GRID_P = 41      # points over ln p in [ln lower, ln upper]; the 3-D grid is coarser in d and c (every other
GRID_D3 = 81     # point of the 2-D one): 81 x 151 x 41 = 0.5 M points per evaluation
GRID_C3 = 151


@dataclass(frozen=True)
class PrefillPrior:
    """Two-part prior on ln p (natural-log units): a core normal and a share of badly-off deployments."""

    core_sd: float
    broken_sd: float
    broken_share: float

    def log_density(self, v: np.ndarray) -> np.ndarray:
        core = (1.0 - self.broken_share) * np.exp(-0.5 * (v / self.core_sd) ** 2) / self.core_sd
        tail = self.broken_share * np.exp(-0.5 * (v / self.broken_sd) ** 2) / self.broken_sd
        return np.log(core + tail)


def posterior_mean3(obs: list[Observation], prior: DecodePrior, pre: PrefillPrior,
                    d_bounds: tuple[float, float], c_upper: float,
                    p_bounds: tuple[float, float]) -> dict[str, float | bool]:
    """As :func:`posterior_mean` with the prefill scale p as a third term: each observation is linear in p
    around its ``extra["p0"]`` with slope ``extra["slope_p"]`` (time per unit of p). The estimate: c's
    posterior mean, and the means of ln d and ln p at that c."""
    u = np.linspace(math.log(d_bounds[0]), math.log(d_bounds[1]), GRID_D3)
    c = c_upper * np.linspace(0.0, 1.0, GRID_C3) ** 2
    v = np.linspace(math.log(p_bounds[0]), math.log(p_bounds[1]), GRID_P)
    U, C, V = np.meshgrid(u, c, v, indexing="ij")
    lp = (-0.5 * ((U - prior.decode_log_mean) / prior.decode_log_sd) ** 2
          - 0.5 * ((C - prior.step_ms_mean) / prior.step_ms_sd) ** 2 + pre.log_density(V))
    D, P = np.exp(U), np.exp(V)
    for o in obs:
        t = o.predict_time(D, C) + (P - o.extra.get("p0", 1.0)) * o.extra.get("slope_p", 0.0)
        bad = t <= 0
        r = np.log(np.where(bad, 1.0, t) / o.measured_time())
        lp = np.where(bad, -np.inf, lp - 0.5 * (r / o.sd) ** 2)
    if not np.isfinite(lp).any():
        return {"d": 1.0, "c": 0.0, "p": 1.0, "d_mode": 1.0, "c_mode": 0.0, "p_mode": 1.0,
                "d_at_bound": False, "c_at_bound": False, "p_at_bound": False}
    width = np.gradient(c)
    w = np.exp(lp - lp.max()) * width[None, :, None]
    w /= w.sum()
    mc = float((w.sum(axis=(0, 2)) * c).sum())
    k = int(np.clip(np.searchsorted(c, mc), 1, GRID_C3 - 1))
    f = (mc - c[k - 1]) / (c[k] - c[k - 1])
    sl = np.exp(lp[:, k - 1, :] - lp.max()) * (1 - f) + np.exp(lp[:, k, :] - lp.max()) * f
    tot = sl.sum()
    uc = float((sl.sum(axis=1) * u).sum() / tot) if tot > 0 else float((w.sum(axis=(1, 2)) * u).sum())
    vc = float((sl.sum(axis=0) * v).sum() / tot) if tot > 0 else float((w.sum(axis=(0, 1)) * v).sum())
    i, j, m = np.unravel_index(int(np.argmax(lp)), lp.shape)
    return {"d": math.exp(uc), "c": mc, "p": math.exp(vc), "d_mode": math.exp(float(u[i])),
            "c_mode": float(c[j]), "p_mode": math.exp(float(v[m])),
            "d_at_bound": i in (0, GRID_D3 - 1), "c_at_bound": j == GRID_C3 - 1, "p_at_bound": m in (0, GRID_P - 1)}
