"""A deployment's calibration profile: a few named, bounded terms applied on top of the step-cost model.

The terms multiply or add to whatever ``models.cost`` computes, so a profile survives changes to the cost
model's own efficiency tables (it corrects the residual of that deployment, not the physics):

* ``decode_time_scale`` (x): multiplies the time of a decode step's work, its KV read included (weights
  read, GEMMs, MoE experts, the layer floor, attention over the context) -- kernels, clocks, an HBM path
  other than the model assumes: the KV read is a stream from the same HBM as the weights, and the model's
  time runs long for both. (Holding the KV read at the model's time fitted the LambdaLabs ShareGPT runs,
  short contexts, a little closer, but left a scale fitted on a 1K-prompt run 10-20% slow on the same
  deployment's 5K-32K-prompt runs: simon-mo/vLLM-Benchmark's 0.8.x sweeps, benchmarks/calibration_accuracy.py.)
* ``prefill_time_scale`` (x): multiplies the extra time a step spends on prompt tokens (GEMMs, experts),
  except their attention, which grows with the pairs of tokens attended and stays at the model's time (a
  scale fitted on a 1K prompt's TTFT then does not stretch a 32K prompt's quadratic attention);
* ``step_overhead_ms`` (ms): time added to every engine step whatever its batch (scheduler, sampler,
  Python, kernel launches of an eager or partly captured forward: tens of ms for a 61-layer MoE run eager,
  dstack's DeepSeek-R1 on 8x MI300X under vLLM 0.7.3 pays ~38 ms a step at every concurrency 4-128);
* ``seq_overhead_us`` (us): host time per running sequence per step (input preparation, sampling,
  detokenization and streaming grow with the batch; large in vLLM 0.5-0.6's V0 engine);
* ``api_ms`` (ms): per-request API-server intake added to TTFT and end-to-end latency;
* ``api_token_us`` (us): the API server's time per streamed token (``models.cost.frontend``'s c_out, 72 us by
  default): older releases' single-process servers saturate sooner.
* ``api_intake_ms`` (ms): the API server's intake per request on its serial event loop (``models.cost.frontend``'s
  c_req: HTTP parse, validation, template, tokenization, hand-off); a burst of N requests reaches the engine
  over N x this, so the TTFT of a burst grows with N (vLLM 0.6.0's server: ~6.5 ms, the LambdaLabs results in
  tests/data/bench, p99 TTFT / N over 80-1,280 prompts). Only a fitted value replaces the endpoint's default.

``calibrated(cost)`` wraps a step-cost model with the active profile (set by ``use_profile`` /
``--profile FILE``); with no profile it returns the model unchanged.
"""

import contextvars
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from sched_reader.data_model import DataModel, new_dict, new_list
from sched_reader.errors import InputError
from sched_reader.models.cost.iteration import DecodeLinearModel

PROFILE_SCHEMA = "sched-reader/profile-v1"


# name -> (default, lower bound, upper bound, unit, what it stands for)
TERMS: dict[str, tuple[float, float, float, str, str]] = {
    "decode_time_scale": (1.0, 0.5, 3.0, "x", "multiplier of a decode step's work (weights, GEMMs, MoE experts, "
                          "the KV read of attention)"),
    "prefill_time_scale": (1.0, 0.5, 3.0, "x", "prefill (compute bound) step time multiplier"),
    "step_overhead_ms": (0.0, 0.0, 100.0, "ms", "time added to every engine step whatever its batch (host "
                         "scheduling and sampling, kernel launches of an eager forward, collectives' latency)"),
    "seq_overhead_us": (0.0, 0.0, 2000.0, "us", "host time per running sequence per step (prepare, sample, "
                        "detokenize, stream)"),
    "api_ms": (0.0, 0.0, 500.0, "ms", "per-request API-server intake added to TTFT and E2E latency"),
    "api_token_us": (72.0, 20.0, 500.0, "us", "API-server time per streamed output token (detokenize, SSE "
                     "chunk): caps output throughput at 1/x and stretches TPOT past it (models/cost/frontend.py)"),
    "api_intake_ms": (1.0, 0.2, 20.0, "ms", "API-server intake per request on its serial event loop: a burst of "
                      "N reaches the engine over N x this (models/cost/frontend.py)"),
}


class FittedTerm(DataModel):
    """One term: fitted value, its bounds, and what data supported it."""

    value: float
    lower: float
    upper: float
    unit: str
    meaning: str
    fitted: bool = False                      # False: held at its default (the data could not separate it)
    at_bound: bool = False                    # the fit wanted to go past a bound: physically implausible data
    supported_by: list[str] = Field(default_factory=new_list)


class Profile(DataModel):
    """A ``profile.yaml``: the deployment it was fitted on, the terms, and the fit's residuals."""

    schema_: str = Field(PROFILE_SCHEMA, alias="schema")
    deployment: dict[str, Any] = Field(default_factory=new_dict)
    terms: dict[str, FittedTerm] = Field(default_factory=new_dict)
    fit: dict[str, Any] = Field(default_factory=new_dict)

    model_config = {"populate_by_name": True}

    def value(self, name: str) -> float:
        t = self.terms.get(name)
        return float(t.value) if t is not None else TERMS[name][0]

    def dump_yaml(self) -> str:
        import yaml

        return yaml.safe_dump(self.model_dump(by_alias=True), sort_keys=False, width=110)


def default_terms() -> dict[str, FittedTerm]:
    return {k: FittedTerm(value=d, lower=lo, upper=hi, unit=u, meaning=m) for k, (d, lo, hi, u, m) in TERMS.items()}


def load_profile(path: str | Path) -> Profile:
    """Read and validate a profile file (``InputError``, exit 2, on anything else)."""
    import yaml

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except FileNotFoundError:
        raise InputError("no such profile file", file=str(path)) from None
    except (OSError, UnicodeError, yaml.YAMLError) as err:
        raise InputError(f"cannot read profile: {str(err).splitlines()[0]}", file=str(path)) from None
    if not isinstance(data, dict) or data.get("schema") != PROFILE_SCHEMA:
        raise InputError(f"not a sched-reader profile (expected `schema: {PROFILE_SCHEMA}`)", file=str(path),
                         hint="write one with `sched-reader calibrate ... -o profile.yaml`")
    try:
        prof = Profile.model_validate(data)
    except ValidationError as err:
        e = err.errors()[0]
        raise InputError(f"invalid profile: {'.'.join(str(x) for x in e['loc'])}: {e['msg']}", file=str(path)) from None
    for name, t in prof.terms.items():
        if name not in TERMS:
            raise InputError(f"unknown profile term {name!r} (known: {', '.join(TERMS)})", file=str(path))
        lo, hi = TERMS[name][1], TERMS[name][2]
        if not lo <= t.value <= hi:
            raise InputError(f"profile term {name} = {t.value} is outside [{lo}, {hi}]", file=str(path))
    return prof


ACTIVE: contextvars.ContextVar[Profile | None] = contextvars.ContextVar("calibration_profile", default=None)


def use_profile(profile: Profile | None) -> None:
    """Make ``profile`` the one ``calibrated`` applies (None: none)."""
    ACTIVE.set(profile)


def active_profile() -> Profile | None:
    return ACTIVE.get()


class CalibratedCost:
    """A step-cost model with a profile's terms applied (same interface as the model it wraps).

    step = step_overhead + seq_overhead x sequences + decode_scale x t(decode part)
           + prefill_scale x (t(prompt part) - t(prompt attention)) + t(prompt attention),
    where t(decode part) is the wrapped model's time for the step without its prompt tokens (its KV read
    included), t(prompt part) = t(whole step) - t(decode part), and t(prompt attention) the part of the
    whole step that grows with the prompts' attended pairs (the same step with no pairs subtracted).
    """

    def __init__(self, base: Any, decode_scale: float = 1.0, prefill_scale: float = 1.0,
                 overhead_s: float = 0.0, seq_overhead_s: float = 0.0) -> None:
        self.base = base
        self.ds = float(decode_scale)
        self.ps = float(prefill_scale)
        self.oh = float(overhead_s)
        self.hs = float(seq_overhead_s)

    def __getattr__(self, name: str) -> Any:  # arch, cfg, breakdown, ... of the wrapped model
        return getattr(self.base, name)

    def step_time(self, num_decode: int, decode_context_sum: int, prefill_tokens: int,
                  prefill_attn_pairs: float, num_prefill_seqs: int = 0) -> float:
        if num_decode + prefill_tokens <= 0:
            return 0.0
        whole = self.base.step_time(num_decode, decode_context_sum, prefill_tokens, prefill_attn_pairs,
                                    num_prefill_seqs)
        if prefill_tokens <= 0:
            return (self.oh + self.hs * num_decode) + self.ds * whole
        dec = self.base.step_time(num_decode, decode_context_sum, 0, 0.0, 0) if num_decode > 0 else 0.0
        host = self.oh + self.hs * (num_decode + max(1, num_prefill_seqs))
        extra = max(0.0, whole - dec)
        # the prompts' attention (grows with the pairs of tokens attended) stays at the model's time
        att = (max(0.0, whole - self.base.step_time(num_decode, decode_context_sum, prefill_tokens, 0.0,
                                                     num_prefill_seqs)) if prefill_attn_pairs > 0 else 0.0)
        att = min(att, extra)
        return host + self.ds * dec + self.ps * (extra - att) + att

    def decode_step_time_vec(self, num_decode: Any, context_sum: Any) -> Any:
        import numpy as np

        v = self.base.decode_step_time_vec(num_decode, context_sum)
        n = np.asarray(num_decode, dtype=float)
        return np.where(n > 0, (self.oh + self.hs * n) + self.ds * v, 0.0)

    def verify_step_time(self, num_seqs: int, context_sum: int, tokens_per_seq: int) -> float:
        if num_seqs <= 0:
            return 0.0
        whole = self.base.verify_step_time(num_seqs, context_sum, tokens_per_seq)
        return (self.oh + self.hs * num_seqs) + self.ds * whole

    def decode_linear(self, num_decode: int) -> Any:

        lin = self.base.decode_linear(num_decode)
        ds, oh = self.ds, self.oh + self.hs * num_decode
        # the KV slopes scale with the rest of the decode work (see step_time); exact for a serial host, and
        # for an overlapped one where the GPU binds (the simulator probes the form against step_time and
        # falls back where not)
        if lin.async_overlap:  # max(ds*(g + kv) + oh, ds*c + oh)
            return DecodeLinearModel(lin.num_decode, ds * lin.gpu_intercept_s + oh, ds * lin.slope_full_s_per_token,
                                     ds * lin.slope_window_s_per_token, lin.window_cap_tokens, ds * lin.cpu_s + oh, True)
        # serial host: the profile's host terms belong to the step's host part (same step time; a V0
        # multi-step round pays the host part once, see analyzers.simulator.core.SimCore.run_multi_step)
        return DecodeLinearModel(lin.num_decode, ds * lin.gpu_intercept_s, ds * lin.slope_full_s_per_token,
                                 ds * lin.slope_window_s_per_token, lin.window_cap_tokens, ds * lin.cpu_s + oh, False)


def calibrated(cost: Any, profile: Profile | None = None) -> Any:
    """``cost`` with ``profile`` (default: the active one) applied; unchanged when there is none."""
    prof = profile if profile is not None else ACTIVE.get()
    if prof is None:
        return cost
    return CalibratedCost(cost, prof.value("decode_time_scale"), prof.value("prefill_time_scale"),
                          prof.value("step_overhead_ms") / 1e3, prof.value("seq_overhead_us") / 1e6)


def api_seconds(profile: Profile | None = None) -> float:
    prof = profile if profile is not None else ACTIVE.get()
    return prof.value("api_ms") / 1e3 if prof is not None else 0.0


def frontend_kwargs(profile: Profile | None = None) -> dict[str, float]:
    """Keyword arguments for ``ApiServerModel`` under ``profile`` (default: the active one)."""
    prof = profile if profile is not None else ACTIVE.get()
    if prof is None:
        return {}
    kw: dict[str, float] = {}
    if "api_token_us" in prof.terms:
        kw["output_token_s"] = prof.value("api_token_us") / 1e6
    t = prof.terms.get("api_intake_ms")
    if t is not None and t.fitted:
        kw["intake_s"] = float(t.value) / 1e3
    return kw
