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
from typing import Protocol, runtime_checkable

import numpy as np

NS_PER_S = 1_000_000_000


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

    def step_time(self, num_decode: int, decode_context_sum: int, prefill_tokens: int,
                  prefill_attn_pairs: float, num_prefill_seqs: int = 0) -> float:
        tokens = num_decode + prefill_tokens
        seqs = num_decode + num_prefill_seqs
        return (self.base_s + self.per_seq_s * seqs + self.per_token_s * tokens
                + self.per_ctx_s * decode_context_sum + self.per_pair_s * prefill_attn_pairs)

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

    Pure-decode steps go through the cost's ``decode_step_time_vec`` when it exists and agrees bitwise
    with ``step_time`` on probe points (otherwise the scalar form is used everywhere), so that a run of
    k decode steps evaluated at once equals k steps evaluated one by one.
    """

    def __init__(self, cost: StepCost) -> None:
        self.cost = cost
        vec = getattr(cost, "decode_step_time_vec", None)
        self._vec = vec if callable(vec) and self._agrees(cost, vec) else None

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

    def step(self, num_decode: int, ctx_sum: int, prefill_tokens: int, pairs2: int, num_prefill: int) -> int:
        """One step; ``pairs2`` is twice the attention-pair count (kept integral)."""
        return to_ns(self.cost.step_time(num_decode, ctx_sum, prefill_tokens, pairs2 / 2.0, num_prefill))

    def decode_run(self, n: int, ctx_first: int, k: int) -> np.ndarray:
        """Durations (int64 ns) of k pure-decode steps of n sequences, context sum ctx_first + n*j."""
        ctx = ctx_first + n * np.arange(k, dtype=np.int64)
        if self._vec is not None:
            secs = np.asarray(self._vec(np.full(k, n, dtype=np.int64), ctx), dtype=np.float64)
        else:
            secs = np.array([self.cost.step_time(n, int(c), 0, 0.0, 0) for c in ctx], dtype=np.float64)
        ns = np.rint(secs * NS_PER_S).astype(np.int64)
        np.maximum(ns, 1, out=ns)
        return ns
