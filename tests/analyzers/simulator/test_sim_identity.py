"""The event-driven engine equals the plain per-iteration reference loop, bit for bit."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from sched_reader.analyzers.simulator.cost import LinearStepCost
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.metrics import summarize
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.reference import run_reference
from sched_reader.analyzers.simulator.workloads import Requests
from sched_reader.errors import InputError
from sched_reader.models.cost.iteration import DecodeLinearModel

COST = LinearStepCost(base_s=0.003, per_seq_s=1e-6, per_token_s=1.3e-5, per_ctx_s=7e-9, per_pair_s=1e-10)


class ClosedFormCost:
    """A step cost with the decode closed form (``decode_linear``) the roofline model has, so decode steps
    take the timer's closed-form path (the engine's Python and numpy stretches) as in ``simulate`` and
    ``diagnose``. Decode: 2 ms + 30 ns per context token + 50 ns per token of the last ``window`` tokens of
    each sequence (sliding-window layers: capped at n x window), then host time 0.8 ms added, or overlapped
    (``max``) with async scheduling; prefill adds 20 us per token and 0.1 ns per attention pair."""

    def __init__(self, window: int, async_overlap: bool) -> None:
        self.window, self.async_overlap = window, async_overlap

    def _decode_gpu(self, n: int, ctx: float) -> float:
        return 0.002 + 3e-8 * ctx + (5e-8 * min(ctx, n * self.window) if self.window else 0.0)

    def step_time(self, nd, ctx, pf, pairs, nps=0):
        gpu = self._decode_gpu(nd, ctx) + 2e-5 * pf + 1e-10 * pairs
        return max(gpu, 0.0008) if self.async_overlap else gpu + 0.0008

    def decode_linear(self, n):
        return DecodeLinearModel(n, 0.002, 3e-8, 5e-8 if self.window else 0.0,
                                 float(n * self.window) if self.window else 0.0, 0.0008, self.async_overlap)


def _case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    p = rng.integers(1, 300, n)
    o = rng.integers(1, 80, n)
    a = np.cumsum(rng.exponential(rng.choice([0.001, 0.02, 0.2]), n)) * rng.integers(0, 2)
    pid = np.where(rng.random(n) < 0.4, rng.integers(0, 3, n), -1)
    maxc = int(rng.integers(1, 10)) if rng.random() < 0.3 else None
    req = Requests.build(p, o, a, pid, rng.integers(1, 200, n), maxc)
    bs = int(rng.choice([1, 4, 16]))
    need = int(max(-(-(x + y) // bs) for x, y in zip(p, o)))
    eng = str(rng.choice(["v1", "v1", "v0"]))
    chunked = bool(rng.random() < (0.7 if eng == "v1" else 0.3))
    mnbt = int(rng.choice([8, 64, 512, 4096]))
    if not chunked:
        mnbt = max(mnbt, int(max(p + o)))
    par = SchedParams(block_size=bs, num_blocks=int(need + rng.integers(0, 3 * need)),
                      max_num_seqs=int(rng.integers(1, 12)), max_num_batched_tokens=mnbt,
                      enable_chunked_prefill=chunked, long_prefill_token_threshold=int(rng.choice([0, 0, 32])),
                      enable_prefix_caching=bool(rng.random() < 0.5), engine=eng,
                      watermark_blocks=int(rng.integers(0, 2)) if eng == "v0" else 0)
    # admission keeps the V0 watermark free, so the largest request must fit the cache less the watermark
    # (else prepare() rejects the case: test_prepare_rejects_requests_that_can_never_be_admitted)
    par = replace(par, num_blocks=par.num_blocks + par.watermark_blocks)
    if maxc is not None and rng.random() < 0.6:
        # a closed loop whose successors reach the engine later than the finish (the client's round trip)
        req = replace(req, resend_delay_s=float(rng.choice([1e-4, 0.004, 0.03])))
    return req, par


def _summary(run):
    s = summarize(run.rec, run.send_ns, run.prompt, run.target)
    s.pop("timeseries")
    return s


@settings(max_examples=120, deadline=None)
@given(st.integers(min_value=0, max_value=10**9))
@example(seed=71280)       # V0 + watermark: stalled before _case kept the watermark free
@example(seed=1095681)
def test_engine_identical_to_reference(seed):
    req, par = _case(seed)
    steps = []

    def audit(core):
        core.alloc.check()                        # no block shared or lost, none above the budget
        steps.append(core.alloc.used)

    ref = run_reference(req, par, COST, on_step=audit)
    eng = run_engine(req, par, COST)
    assert _summary(ref) == _summary(eng)         # every metric, exactly
    assert ref.rec.first_ns == eng.rec.first_ns
    assert ref.rec.finish_ns == eng.rec.finish_ns
    assert ref.rec.preemptions == eng.rec.preemptions
    assert max(steps) <= par.num_blocks
    # every request finished exactly once, with its output length
    assert eng.out == eng.target and ref.out == ref.target
    assert all(f > 0 for f in eng.rec.finish_ns)
    assert eng.finished == len(req)


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=0, max_value=10**9), st.sampled_from([0, 40]), st.booleans())
def test_engine_identical_to_reference_closed_form_decode(seed, window, async_overlap):
    """The same with decode steps timed by the closed form: the engine's short stretches (Python, step by
    step or recorded as one) and long ones (numpy) give the reference loop's times exactly."""
    req, par = _case(seed)
    cost = ClosedFormCost(window, async_overlap)
    ref = run_reference(req, par, cost)
    eng = run_engine(req, par, cost)
    assert _summary(ref) == _summary(eng)
    assert ref.rec.first_ns == eng.rec.first_ns
    assert ref.rec.finish_ns == eng.rec.finish_ns
    assert eng.out == eng.target


def test_engine_takes_long_stretches():
    """The point of the engine: long decode runs are not stepped one by one."""
    req = Requests.build([100] * 8, [3000] * 8)
    par = SchedParams(block_size=16, num_blocks=10_000, max_num_seqs=8, max_num_batched_tokens=8192)
    eng = run_engine(req, par, COST)
    assert eng.rec.steps == 3000                   # 1 prefill step (emits token 1) + 2999 decode steps
    assert eng.fast_steps + eng.slow_steps < 10
    ref = run_reference(req, par, COST)
    assert _summary(ref) == _summary(eng)


def test_prepare_rejects_requests_that_can_never_be_admitted():
    """A request no scheduling step can admit is an input error, not a stalled loop (seed 71280's case)."""
    # prompt 102 + output 10 = 112 tokens = 7 blocks of 16; V0 admits only while 1 watermark block stays
    # free (vLLM V0 BlockSpaceManager.can_allocate: NEVER when 7 total - 7 required < 1 watermark)
    req = Requests.build([102, 105], [10, 2])
    par = SchedParams(block_size=16, num_blocks=7, max_num_seqs=10, max_num_batched_tokens=112,
                      enable_chunked_prefill=False, engine="v0", watermark_blocks=1)
    for run in (run_reference, run_engine):
        with pytest.raises(InputError, match="request 0 needs 7 KV blocks; the cache has 7 less 1 kept free"):
            run(req, par, COST)
    # one more block: request 0 (7 blocks) is admitted alone, then request 1 (7 blocks) after it finishes
    ok = replace(par, num_blocks=8)
    ref, eng = run_reference(req, ok, COST), run_engine(req, ok, COST)
    assert ref.out == eng.out == [10, 2]
    assert _summary(ref) == _summary(eng)
    assert ref.rec.first_ns[0] < ref.rec.finish_ns[0] <= ref.rec.first_ns[1]
    # without chunked prefill a prompt above the token budget is never scheduled either (V1 needs
    # max_num_batched_tokens >= max_model_len when chunked prefill is off)
    v1 = SchedParams(block_size=16, num_blocks=100, max_num_seqs=4, max_num_batched_tokens=64,
                     enable_chunked_prefill=False)
    for run in (run_reference, run_engine):
        with pytest.raises(InputError, match="prefill of up to 104 tokens .* max_num_batched_tokens 64"):
            run(Requests.build([100], [5]), v1, COST)
    assert run_engine(Requests.build([100], [5]), replace(v1, enable_chunked_prefill=True), COST).out == [5]
