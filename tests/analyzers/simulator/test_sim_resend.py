"""Closed loop: a finished request's successor reaches the engine the client's round trip later.

vLLM facts the tests pin (api.with_resend_delay): `vllm bench serve` releases a --max-concurrency slot only
after the whole response ([DONE]) and the engine core drains new requests only between steps, starting the
next step as soon as the previous one's outputs are queued; so a successor that needs any round trip never
joins the step that starts at its predecessor's finish, and waits for the rest of a running step.
"""

from dataclasses import replace

import numpy as np

from sched_reader.analyzers.simulator import LinearStepCost, SchedParams, simulate
from sched_reader.analyzers.simulator.api import with_resend_delay
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.reference import run_reference
from sched_reader.analyzers.simulator.workloads import Requests
from sched_reader.models.cost.frontend import api_server_for

# 10 ms per step + 0.1 ms per token (decode or prompt), nothing else
COST = LinearStepCost(base_s=0.010, per_seq_s=0.0, per_token_s=1.0e-4, per_ctx_s=0.0)
PARAMS = SchedParams(block_size=16, num_blocks=1_000, max_num_seqs=8, max_num_batched_tokens=4096)


def _loop(resend_s: float) -> Requests:
    # A (2 tokens) and B (10 tokens) start together; C takes A's slot
    return replace(Requests.build([100, 100, 100], [2, 10, 1], max_concurrency=2), resend_delay_s=resend_s)


def _ttft_ms(req: Requests) -> list[float]:
    return simulate(req, PARAMS, COST, per_request=True)["ttft_ms_each"]


def test_successor_joins_the_next_step_only_without_a_round_trip():
    # step 1: A + B prefill, 10 + 200 x 0.1 = 30 ms; step 2: 2 decodes, 10.2 ms -> A done at 40.2 ms.
    # No round trip: C is sent at 40.2 ms and prefilled in step 3 with B's decode: 10 + 101 x 0.1 = 20.1 ms
    assert abs(_ttft_ms(_loop(0.0))[2] - 20.1) < 1e-6


def test_successor_waits_for_the_rest_of_the_running_step():
    # 4 ms round trip: C reaches the engine at 44.2 ms, during step 3 (B's decode alone, 10.1 ms: 40.2 ->
    # 50.3 ms); it is prefilled in step 4 (50.3 -> 70.4 ms): TTFT 70.4 - 44.2 = 26.2 ms, 6.1 ms of it the rest
    # of step 3
    assert abs(_ttft_ms(_loop(0.004))[2] - 26.2) < 1e-6
    # 34.4 ms: C arrives at 74.6 ms, inside B's decode step 70.5 -> 80.6 ms, prefilled 80.6 -> 100.7 ms
    assert abs(_ttft_ms(_loop(0.0344))[2] - 26.1) < 1e-6


def test_an_idle_engine_waits_for_the_successor():
    # batch 1: each request's cycle is prefill (10 + 100 x 0.1 = 20 ms) + 9 decodes (10.1 ms each) + the
    # 30 ms round trip; 3 requests: 3 x 110.9 + 2 x 30 (none after the last) = 392.7 ms (332.7 ms with none)
    req = replace(Requests.build([100] * 3, [10] * 3, max_concurrency=1), resend_delay_s=0.030)
    r = simulate(req, PARAMS, COST)
    assert abs(r["duration_s"] - 0.3927) < 1e-9
    assert abs(r["mean_ttft_ms"] - 20.0) < 1e-6


def test_round_trip_is_the_frontend_ttft_share():
    """The delay is the fixed non-engine TTFT share of the endpoint (steady_state.FRONTEND_TTFT_S, 34.4 ms for
    /v1/completions), which the steady-state closed form already counts once per request cycle."""
    req = Requests.build([100] * 4, [10] * 4, max_concurrency=2)
    assert abs(with_resend_delay(req, api_server_for("completions", "0.11.0")).resend_delay_s - 0.0344) < 1e-12
    # batch 1 through the API server: 3 x 110.9 ms of engine work + 2 x 34.4 ms between requests = 401.5 ms
    # (the frontend's own delivery adds 72 us per streamed token to the last request's tail)
    r = simulate(Requests.build([100] * 3, [10] * 3, max_concurrency=1), PARAMS, COST,
                 frontend=api_server_for("completions", "0.11.0"))
    assert 0.4015 <= r["duration_s"] < 0.4025


def test_engine_equals_reference_with_round_trips():
    rng = np.random.default_rng(7)
    n = 60
    req = Requests.build(rng.integers(50, 600, n), rng.integers(1, 40, n), max_concurrency=6)
    params = SchedParams(block_size=16, num_blocks=2_000, max_num_seqs=8, max_num_batched_tokens=512)
    for resend in (0.0005, 0.012, 0.05):
        r = replace(req, resend_delay_s=resend)
        eng, ref = run_engine(r, params, COST), run_reference(r, params, COST)
        assert eng.rec.first_ns == ref.rec.first_ns
        assert eng.rec.finish_ns == ref.rec.finish_ns
        assert eng.send_ns == ref.send_ns
