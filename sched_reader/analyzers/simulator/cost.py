"""Step-time models seen by the simulator, and the integer clock they feed.

The simulator only needs one number per engine iteration: how long the forward pass takes. Any object
with ``step_time(...)`` (seconds) satisfies :class:`StepCost`; engineer D's
``sched_reader.models.cost.IterationCostModel`` is one, :class:`LinearStepCost` (an analytic toy used by
the tests) is another.

The simulated clock is an integer number of nanoseconds, so sums of step times are exact and the
event-driven engine reproduces the per-iteration reference loop bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from sched_reader.models.cost.fast_step import compile_step_time
from sched_reader.models.cost.speculative import SpeculativeModel

NS_PER_S = 1_000_000_000
round_float = float.__round__   # round(x) for a float x (half to even, an int), without the builtin's dispatch


@runtime_checkable
class StepCost(Protocol):
    """Duration of one engine iteration, in seconds.

    ``num_decode``: sequences decoding one token; ``decode_context_sum``: sum over them of the tokens
    attended (cached tokens + the new one); ``prefill_tokens``: prompt tokens computed this step (all
    chunks); ``prefill_attn_pairs``: sum over chunks of chunk * (prefix + chunk / 2);
    ``num_prefill_seqs``: sequences with a prefill chunk.
    """

    def step_time(self, num_decode: int, decode_context_sum: int, prefill_tokens: int,
                  prefill_attn_pairs: float, num_prefill_seqs: int = 0) -> float: ...


@dataclass(frozen=True)
class LinearStepCost:
    """Analytic toy cost: ``base + per_seq*(seqs) + per_token*(tokens) + per_ctx*context + per_pair*pairs``.

    All coefficients in seconds (per sequence, per token, per attended context token, per attention pair).
    Its vector form evaluates the same expression in the same order, so it is bitwise equal to the scalar one.
    """

    base_s: float = 0.010
    per_seq_s: float = 0.0
    per_token_s: float = 2.0e-5
    per_ctx_s: float = 1.0e-8
    per_pair_s: float = 0.0
    draft_per_seq_s: float = 0.0   # speculative decoding: draft cost per sequence per step

    def step_time(self, num_decode: int, decode_context_sum: int, prefill_tokens: int,
                  prefill_attn_pairs: float, num_prefill_seqs: int = 0) -> float:
        tokens = num_decode + prefill_tokens
        seqs = num_decode + num_prefill_seqs
        return (self.base_s + self.per_seq_s * seqs + self.per_token_s * tokens
                + self.per_ctx_s * decode_context_sum + self.per_pair_s * prefill_attn_pairs)

    def verify_step_time(self, num_seqs: int, context_sum: int, tokens_per_seq: int) -> float:
        """A speculative verify step: ``tokens_per_seq`` query tokens per sequence."""
        return (self.base_s + self.per_seq_s * num_seqs + self.per_token_s * (num_seqs * tokens_per_seq)
                + self.per_ctx_s * context_sum)

    def draft_time(self, num_seqs: int, context_sum: int) -> float:
        return self.draft_per_seq_s * num_seqs

    def decode_step_time_vec(self, num_decode: np.ndarray, context_sum: np.ndarray) -> np.ndarray:
        n = np.asarray(num_decode, dtype=np.float64)
        c = np.asarray(context_sum, dtype=np.float64)
        return self.base_s + self.per_seq_s * n + self.per_token_s * n + self.per_ctx_s * c + self.per_pair_s * 0.0


def to_ns(seconds: float) -> int:
    """Seconds -> integer nanoseconds (round half to even), at least 1 ns so the clock always advances."""
    ns = int(round(seconds * NS_PER_S))
    return ns if ns > 0 else 1


class StepTimer:
    """Wraps a :class:`StepCost` and returns integer-nanosecond step durations.

    Pure-decode steps (``n`` sequences, context sum ``S``) use, in order of preference:

    * the cost's closed form ``decode_linear(n)`` (``gpu = intercept + slope_full*S + slope_window*min(S, cap)``,
      then ``max(gpu, cpu)`` with async scheduling, else ``gpu + cpu``), cached per batch size and accepted
      for a batch size only when it matches ``step_time`` on probe contexts (relative 1e-10);
    * the cost's ``decode_step_time_vec`` when it agrees bitwise with ``step_time`` on probe points;
    * the scalar ``step_time``.

    Whichever form is chosen for a batch size is used for every step of that size, one by one
    (:meth:`decode`) or many at once (:meth:`decode_run`), and both give the same integers; the engine and
    the reference loop share this timer, so they agree bit for bit. Mixed (prefill) steps always use
    ``step_time``.
    """

    LINEAR_RTOL = 1e-10

    def __init__(self, cost: StepCost, draft: Callable[[int, int], float] | None = None) -> None:
        self.cost = cost
        self._draft = draft
        verify = getattr(cost, "verify_step_time", None)
        self._verify = verify if callable(verify) else None
        # the same function, faster where the cost model has an exact compiled form (models/cost/fast_step.py)
        fast = compile_step_time(cost)
        self._scalar = fast or cost.step_time
        # the compiled form returns Python floats, which float.__round__ rounds as round() does (half to
        # even) without the builtin's dispatch; a foreign step_time may return another number type
        self.round_s = round_float if fast is not None else round
        vec = getattr(cost, "decode_step_time_vec", None)
        self._vec = vec if callable(vec) and self._agrees(cost, vec) else None
        lin = getattr(cost, "decode_linear", None)
        self._lin = lin if callable(lin) else None
        self._forms: dict[int, tuple | None] = {}

    @staticmethod
    def _agrees(cost: StepCost, vec) -> bool:
        n = np.array([1, 7, 64, 256], dtype=np.int64)
        c = np.array([17, 9000, 123457, 4_000_001], dtype=np.int64)
        try:
            got = np.asarray(vec(n, c), dtype=np.float64)
            want = [float(cost.step_time(int(a), int(b), 0, 0.0, 0)) for a, b in zip(n, c)]
        except Exception:  # noqa: BLE001 - a cost without a working vector form falls back to scalar
            return False
        return got.shape == (4,) and all(float(g) == w for g, w in zip(got, want))

    # ------------------------------------------------------------------ closed form per batch size
    def form(self, n: int) -> tuple | None:
        """(intercept, slope_full, slope_window, cap, cpu, async) of n-sequence decode steps, or None."""
        try:
            return self._forms[n]
        except KeyError:
            pass
        f = self._make_form(n)
        self._forms[n] = f
        return f

    def _make_form(self, n: int) -> tuple | None:
        if self._lin is None or n <= 0:
            return None
        try:
            lin = self._lin(n)
            f = (float(lin.gpu_intercept_s), float(lin.slope_full_s_per_token),
                 float(lin.slope_window_s_per_token), float(lin.window_cap_tokens), float(lin.cpu_s),
                 bool(lin.async_overlap))
        except Exception:  # noqa: BLE001 - no usable closed form: scalar steps
            return None
        probes = [n, n * 100 + 3, n * 2000 + 7, n * 30000 + 11]
        if f[2] and 0 < f[3] < float("inf"):
            c = int(f[3])
            probes += [max(n, c - n), c + n, 2 * c + 1]
        for S in probes:
            want = float(self._scalar(n, S, 0, 0.0, 0))
            got = _form_time(f, S)
            if not abs(got - want) <= self.LINEAR_RTOL * abs(want):
                return None
        return f

    # ------------------------------------------------------------------ steps
    def step(self, num_decode: int, ctx_sum: int, prefill_tokens: int, pairs2: int, num_prefill: int) -> int:
        """One step; ``pairs2`` is twice the attention-pair count (kept integral)."""
        if not prefill_tokens and not num_prefill and num_decode > 0:
            return self.decode(num_decode, ctx_sum)
        return to_ns(self._scalar(num_decode, ctx_sum, prefill_tokens, pairs2 / 2.0, num_prefill))

    def spec_step(self, nd: int, ctx_sum: int, extra: int, extra_pairs2: int, prefill_tokens: int, pairs2: int,
                  num_prefill: int, q: int) -> int:
        """A step with speculative decoding: ``nd`` decoding sequences verify ``extra`` draft tokens in
        all (``q`` = k + 1 query tokens each when none was cut by the budget).

        Pure verify steps (no prefill, every sequence with q tokens) cost the cost model's
        ``verify_step_time``; otherwise the draft positions are charged as prefill tokens (``extra_pairs2``:
        twice their attention pairs). Plus the draft cost of the ``nd`` sequences (the drafter runs for
        each sequence that decodes)."""
        if nd and not prefill_tokens and not num_prefill and extra == nd * (q - 1) and self._verify is not None:
            t = float(self._verify(nd, ctx_sum, q))
        elif not extra and not prefill_tokens and not num_prefill and nd:
            t = float(self._scalar(nd, ctx_sum, 0, 0.0, 0))
        else:
            t = float(self._scalar(nd, ctx_sum, prefill_tokens + extra, (pairs2 + extra_pairs2) / 2.0, num_prefill))
        if nd and self._draft is not None:
            t += float(self._draft(nd, ctx_sum))
        return to_ns(t)

    def decode(self, n: int, ctx_sum: int) -> int:
        """One pure-decode step of n sequences with context sum ``ctx_sum`` (ns)."""
        f = self._forms.get(n, False)
        if f is False:
            f = self.form(n)
        if f is None:   # the vector form, when used, agrees with the scalar one bitwise
            return to_ns(self._scalar(n, ctx_sum, 0, 0.0, 0))
        gi, sf, sw, cap, cpu, asy = f
        g = gi + sf * ctx_sum
        if sw:
            g = g + sw * (ctx_sum if ctx_sum < cap else cap)
        t = (g if g >= cpu else cpu) if asy else g + cpu
        ns = round_float(t * NS_PER_S)    # a float: the form's terms are floats
        return ns if ns > 0 else 1

    def decode_device(self, n: int, ctx_sum: int) -> int:
        """A pure-decode pass of n sequences without the step's host (cpu) time (ns): the later passes of
        a V0 multi-step round, whose scheduling, input preparation and output processing run once per
        round. Falls back to :meth:`decode` when the cost has no closed form to split."""
        f = self.form(n)
        if f is None:
            return self.decode(n, ctx_sum)
        gi, sf, sw, cap, cpu, asy = f
        g = gi + sf * ctx_sum
        if sw:
            g = g + sw * (ctx_sum if ctx_sum < cap else cap)
        ns = round(g * NS_PER_S)
        return ns if ns > 0 else 1

    def decode_run(self, n: int, ctx_first: int, k: int) -> np.ndarray:
        """Durations (int64 ns) of k pure-decode steps of n sequences, context sum ctx_first + n*j."""
        ctx = ctx_first + n * np.arange(k, dtype=np.int64)
        f = self.form(n)
        if f is not None:
            gi, sf, sw, cap, cpu, asy = f
            c = ctx.astype(np.float64)
            g = gi + sf * c
            if sw:
                g = g + sw * np.minimum(c, cap)
            secs = np.maximum(g, cpu) if asy else g + cpu
        elif self._vec is not None:
            secs = np.asarray(self._vec(np.full(k, n, dtype=np.int64), ctx), dtype=np.float64)
        else:
            secs = np.array([self._scalar(n, int(c), 0, 0.0, 0) for c in ctx], dtype=np.float64)
        ns = np.rint(secs * NS_PER_S).astype(np.int64)
        np.maximum(ns, 1, out=ns)
        return ns


def make_timer(cost: StepCost, p) -> StepTimer:
    """The StepTimer for cost and scheduler params ``p``: with speculative decoding (``p.spec_tokens``),
    the draft cost comes from the cost's own ``draft_time`` when it has one, else from
    :class:`sched_reader.models.cost.speculative.SpeculativeModel` for an IterationCostModel."""
    draft = None
    if getattr(p, "spec_tokens", 0):
        own = getattr(cost, "draft_time", None)
        if callable(own):
            draft = own
        elif hasattr(cost, "arch") and hasattr(cost, "cfg"):
            sm = SpeculativeModel(cost, {"method": p.spec_method, "num_speculative_tokens": p.spec_tokens},
                                  acceptance=p.spec_acceptance)
            draft = sm.draft_time
    return StepTimer(cost, draft=draft)


def _form_time(f: tuple, S: int) -> float:
    gi, sf, sw, cap, cpu, asy = f
    g = gi + sf * S
    if sw:
        g = g + sw * (S if S < cap else cap)
    return (g if g >= cpu else cpu) if asy else g + cpu
