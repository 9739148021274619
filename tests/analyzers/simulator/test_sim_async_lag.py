"""vLLM V1 async scheduling: the one-step admission lag of new requests.

vLLM facts the tests pin (read in the vLLM 0.14.0 wheel, vllm/v1/engine/core.py ``run_busy_loop`` /
``step_with_batch_queue``, vllm/v1/executor/*: ``max_concurrent_batches`` 2 with async scheduling): the engine
core drains its input queue between loop iterations, schedules step N+1 while step N runs and then blocks on
step N's output. A request that arrives while step N runs is first scheduled in step N+2 (one step later than
without async scheduling); an idle engine schedules it at once; when the batch decided for step N+1 is empty
(every running request finishes in step N) the next one is decided as step N ends, with every arrival so far.
"""

from dataclasses import replace

import numpy as np
from hypothesis import given, settings, strategies as st

from sched_reader.analyzers.simulator import LinearStepCost, SchedParams, params_for, simulate
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.reference import run_reference
from sched_reader.analyzers.simulator.workloads import Requests
from tests.analyzers.simulator.test_sim_identity import COST as RANDOM_COST, ClosedFormCost, _case, _summary

# 10 ms per step + 0.1 ms per token (decode or prompt), nothing else: a decode step of one sequence is 10.1 ms,
# a 100-token prefill alone 20 ms, a 100-token prefill with one decode 20.1 ms
COST = LinearStepCost(base_s=0.010, per_seq_s=0.0, per_token_s=1.0e-4, per_ctx_s=0.0)
SYNC = SchedParams(block_size=16, num_blocks=1_000, max_num_seqs=8, max_num_batched_tokens=4096)
ASYNC = replace(SYNC, async_scheduling=True)


def _ttft_ms(req: Requests, params: SchedParams) -> list[float]:
    return simulate(req, params, COST, per_request=True)["ttft_ms_each"]


def _both(req: Requests, params: SchedParams):
    eng, ref = run_engine(req, params, COST), run_reference(req, params, COST)
    assert eng.rec.first_ns == ref.rec.first_ns and eng.rec.finish_ns == ref.rec.finish_ns
    return eng


def test_arrival_during_a_step_waits_one_more_step():
    # A (prompt 100, 10 tokens) at 0 on an idle engine: step 1 is its prefill, 0 -> 20 ms. B (prompt 100,
    # 5 tokens) arrives at 5 ms, while step 1 runs.
    req = Requests.build([100, 100], [10, 5], [0.0, 0.005])
    # sync: B is prefilled in step 2 with A's decode, 20 -> 40.1 ms: TTFT 35.1 ms
    assert np.allclose(_ttft_ms(req, SYNC), [20.0, 35.1])
    # async: step 2 was decided at 0 ms (while step 1 ran), before B arrived: A's decode alone, 20 -> 30.1 ms;
    # B is prefilled in step 3, 30.1 -> 50.2 ms: TTFT 45.2 ms, one 10.1 ms step more. A's own TTFT is not
    # delayed: it reached an idle engine.
    assert np.allclose(_ttft_ms(req, ASYNC), [20.0, 45.2])
    eng = _both(req, ASYNC)
    assert eng.rec.first_ns == [20_000_000, 50_200_000]


def test_idle_engine_arrival_is_not_delayed():
    # B arrives at 1 s, long after A (prompt 100, 10 tokens: 20 + 9 x 10.1 = 110.9 ms) finished: an idle engine
    # schedules it at once in both modes, TTFT 20 ms each
    req = Requests.build([100, 100], [10, 10], [0.0, 1.0])
    for params in (SYNC, ASYNC):
        assert np.allclose(_ttft_ms(req, params), [20.0, 20.0])
        assert _both(req, params).rec.finish_ns == [110_900_000, 1_110_900_000]


def test_empty_decided_batch_does_not_delay():
    # A (prompt 100, 2 tokens): prefill 0 -> 20 ms, its last decode 20 -> 30.1 ms. B arrives at 25 ms, during A's
    # last step. Async: the batch decided at 20 ms for the step after it holds nothing (A's last token is a
    # placeholder and vLLM schedules no extra step for it), so the next batch is decided at 30.1 ms with B in
    # it: prefill 30.1 -> 50.1 ms, TTFT 25.1 ms, as without async scheduling.
    req = Requests.build([100, 100], [2, 3], [0.0, 0.025])
    for params in (SYNC, ASYNC):
        assert np.allclose(_ttft_ms(req, params), [20.0, 25.1])
        _both(req, params)


def test_closed_loop_successor_waits_one_more_step():
    # (test_sim_resend's loop) A (2 tokens) and B (10 tokens) start together, batch cap 2; C takes A's slot.
    # Step 1: A + B prefill, 10 + 200 x 0.1 = 30 ms; step 2: 2 decodes 30 -> 40.2 ms, A done.
    def loop(resend_s: float) -> Requests:
        return replace(Requests.build([100, 100, 100], [2, 10, 1], max_concurrency=2), resend_delay_s=resend_s)
    # 4 ms round trip: C reaches the engine at 44.2 ms, while step 3 (B's decode, 40.2 -> 50.3 ms) runs.
    # Sync: prefilled in step 4, 50.3 -> 70.4 ms: TTFT 26.2 ms (test_sim_resend). Async: step 4 was decided
    # at 40.2 ms: B's decode alone, 50.3 -> 60.4 ms; C's prefill with B's decode in step 5, 60.4 -> 80.5 ms:
    # TTFT 36.3 ms.
    assert abs(_ttft_ms(loop(0.004), SYNC)[2] - 26.2) < 1e-6
    assert abs(_ttft_ms(loop(0.004), ASYNC)[2] - 36.3) < 1e-6
    # no round trip: C is sent at A's finish, 40.2 ms, when step 3 had been decided (at 30 ms, as step 2
    # started): step 3 is B's decode, 40.2 -> 50.3 ms, C is prefilled in step 4, 50.3 -> 70.4 ms: TTFT 30.2 ms
    # (sync: 20.1 ms, step 3 itself)
    assert abs(_ttft_ms(loop(0.0), SYNC)[2] - 20.1) < 1e-6
    assert abs(_ttft_ms(loop(0.0), ASYNC)[2] - 30.2) < 1e-6
    for resend in (0.0, 0.004):
        _both(loop(resend), ASYNC)


def test_closed_loop_batch_one_is_not_delayed():
    # batch 1 with a 30 ms round trip: each successor reaches an idle engine (test_sim_resend: 392.7 ms in
    # all, TTFT 20 ms); async scheduling changes nothing there
    req = replace(Requests.build([100] * 3, [10] * 3, max_concurrency=1), resend_delay_s=0.030)
    for params in (SYNC, ASYNC):
        r = simulate(req, params, COST)
        assert abs(r["duration_s"] - 0.3927) < 1e-9
        assert abs(r["mean_ttft_ms"] - 20.0) < 1e-6


def test_params_for_takes_async_scheduling_for_the_v1_vllm_policy_only():
    cfg = dict(block_size=16, max_num_seqs=64, max_num_batched_tokens=2048, async_scheduling=True)
    assert params_for("vllm", cfg, 1000).async_scheduling
    assert not params_for("vllm", {**cfg, "async_scheduling": False}, 1000).async_scheduling
    assert not params_for("vllm", {**cfg, "engine": "v0"}, 1000).async_scheduling
    for pol in ("naive", "continuous", "chunked", "static"):
        assert not params_for(pol, cfg, 1000).async_scheduling


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=10**9), st.booleans())
def test_engine_identical_to_reference_with_async_scheduling(seed, closed_form):
    req, par = _case(seed)
    par = replace(par, async_scheduling=True)
    cost = ClosedFormCost(0, True) if closed_form else RANDOM_COST
    ref = run_reference(req, par, cost, on_step=lambda core: core.alloc.check())
    eng = run_engine(req, par, cost)
    assert _summary(ref) == _summary(eng)
    assert ref.rec.first_ns == eng.rec.first_ns
    assert ref.rec.finish_ns == eng.rec.finish_ns
    assert ref.send_ns == eng.send_ns
    assert eng.out == eng.target


def test_engine_identical_to_reference_long_stretches_async():
    """Poisson arrivals into long decode runs (the engine's numpy and Python stretches stop at an arrival), a
    closed loop with and without a round trip: the engine equals the reference loop with the lag."""
    rng = np.random.default_rng(3)
    n = 120
    p, o = rng.integers(1, 1500, n), rng.integers(1, 500, n)
    a = np.cumsum(rng.exponential(0.03, n))
    cost = ClosedFormCost(0, True)
    par = SchedParams(block_size=16, num_blocks=20_000, max_num_seqs=64, max_num_batched_tokens=2048,
                      async_scheduling=True)
    for req in (Requests.build(p, o, a), replace(Requests.build(p, o, max_concurrency=16), resend_delay_s=0.0344),
                Requests.build(p, o, max_concurrency=16)):
        ref, eng = run_reference(req, par, cost), run_engine(req, par, cost)
        assert _summary(ref) == _summary(eng)
        assert ref.rec.first_ns == eng.rec.first_ns and ref.rec.finish_ns == eng.rec.finish_ns


def test_stretch_takes_the_lagged_step():
    """The decode step an arrival must wait for is taken inside the stretch (Engine.stretch with ``prev``), not
    by an extra fast step per arrival: about as many single steps as without async scheduling (the fused loop
    and the generic one; without the stretch's extra iteration, 208 and 216 here instead of 109 and 116)."""
    rng = np.random.default_rng(3)
    n = 120
    p, o, a = rng.integers(1, 1500, n), rng.integers(1, 500, n), np.cumsum(rng.exponential(0.03, n))
    par = SchedParams(block_size=16, num_blocks=20_000, max_num_seqs=64, max_num_batched_tokens=2048)
    cost = ClosedFormCost(0, True)
    for req in (Requests.build(p, o, a), replace(Requests.build(p, o, a, max_concurrency=16), resend_delay_s=0.0344)):
        sync = run_engine(req, par, cost)
        lag = run_engine(req, replace(par, async_scheduling=True), cost)
        assert lag.fast_steps + lag.slow_steps <= 1.1 * (sync.fast_steps + sync.slow_steps)
