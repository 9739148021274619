"""V0 multi-step scheduling (``--num-scheduler-steps``), timed by hand on a toy cost.

Toy cost: a step with prompt tokens takes 10 ms; a decode step 5 ms, of which 1 ms is host time (schedule,
prepare inputs, process outputs) and 4 ms device time. A decode batch runs N passes and pays the host part
once (vLLM 0.6's MultiStepModelRunner advances the inputs on the GPU); a prefill batch runs one pass (the
scheduler gives prefills no lookahead slots); every step's or round's tokens are streamed when the next one's
first pass ends (asynchronous output processing: vLLM 0.6.0's output callback runs inside that pass), or at once
when the engine has nothing else to run.
"""

import numpy as np
import pytest

from sched_reader.analyzers.simulator import params_for, simulate
from sched_reader.analyzers.simulator.workloads import Requests
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.cost.iteration import DecodeLinearModel


class ToyCost:
    def step_time(self, num_decode, decode_context_sum, prefill_tokens, prefill_attn_pairs, num_prefill_seqs=0):
        return 0.010 if prefill_tokens else 0.005

    def decode_linear(self, n):
        return DecodeLinearModel(n, 0.004, 0.0, 0.0, 0.0, 0.001, False)


CFG = dict(block_size=16, max_num_seqs=8, max_num_batched_tokens=2048, max_model_len=2048, engine="v0",
           enable_chunked_prefill=False)


def _one(steps, reference=False):
    req = Requests.build(np.array([100]), np.array([25]))
    p = params_for("vllm", dict(CFG, num_scheduler_steps=steps), 1000)
    return simulate(req, p, ToyCost(), reference=reference)


def test_single_step_v0_by_hand():
    r = _one(1)
    # prefill 10 ms emits token 1; 24 decode steps of 5 ms
    assert r["mean_ttft_ms"] == pytest.approx(10.0)
    assert r["mean_tpot_ms"] == pytest.approx(5.0)


@pytest.mark.parametrize("reference", [False, True])
def test_ten_step_rounds_by_hand(reference):
    r = _one(10, reference)
    # prefill step 10 ms (token 1); round 1: first pass 5 ms (host paid once), t = 15 ms: token 1 streamed
    # (the callback inside that pass), then 9 device-only passes x 4 ms, t = 51 ms; round 2 (tokens 12-21):
    # first pass ends at 56 ms: tokens 2-11 streamed, round ends at 92 ms; round 3 (tokens 22-25: 5 + 3 x 4
    # = 17 ms): first pass ends at 97 ms: tokens 12-21 streamed, round ends at 109 ms; the engine idles,
    # tokens 22-25 streamed at 109 ms
    assert r["mean_ttft_ms"] == pytest.approx(15.0)
    assert r["mean_tpot_ms"] == pytest.approx((109.0 - 15.0) / 24)


def test_prefill_step_stalls_running_requests():
    # request 0 (200 tokens) alone: prefill 10 ms + 19 rounds x 41 ms + a 9-token round (5 + 8 x 4 = 37 ms)
    # = 826 ms. Request 1 (5 tokens) arrives at 20 ms; after request 0's first round (t = 51 ms) its prefill
    # step runs alone (10 ms) while request 0 waits; then both decode together: 836 ms
    req = Requests.build(np.array([100, 100]), np.array([200, 5]), np.array([0.0, 0.020]))
    p = params_for("vllm", dict(CFG, num_scheduler_steps=10), 1000)
    alone = simulate(Requests.build(np.array([100]), np.array([200])), p, ToyCost())
    both = simulate(req, p, ToyCost())
    assert alone["duration_s"] == pytest.approx(0.826)
    assert both["duration_s"] == pytest.approx(0.836)


def test_multi_step_only_for_v0_without_chunking():
    assert params_for("vllm", dict(CFG, num_scheduler_steps=10), 1000).num_scheduler_steps == 10
    chunked = dict(CFG, num_scheduler_steps=10, enable_chunked_prefill=True)
    assert params_for("vllm", chunked, 1000).num_scheduler_steps == 1
    v1 = dict(CFG, num_scheduler_steps=10, engine="v1")
    assert params_for("vllm", v1, 1000).num_scheduler_steps == 1


def test_spec_reads_num_scheduler_steps_from_the_command():
    [s] = build_specs([], "vllm serve mistralai/Mistral-7B-Instruct-v0.3 --max-model-len 2048 "
                          "--num-scheduler-steps 10".split(), gpu="H100 SXM", vllm="0.6.0")
    assert s.effective.num_scheduler_steps == 10
    [s] = build_specs([], "vllm serve mistralai/Mistral-7B-Instruct-v0.3 --max-model-len 2048".split(),
                      gpu="H100 SXM", vllm="0.6.0")
    assert s.effective.num_scheduler_steps == 1


@pytest.mark.parametrize("release, median_itl, p99_itl", [("0.6.0", 0.0, 41.0), ("0.6.2", 0.0, 41.0),
                                                          ("0.6.3", 4.0, 5.0), ("0.6.6", 4.0, 5.0)])
def test_tokens_stream_per_round_before_0_6_3_and_per_pass_after(release, median_itl, p99_itl):
    # vLLM engine/arg_utils.py: multi_step_stream_outputs absent in 0.6.0, default False in 0.6.2, True from 0.6.3.
    # The toy run of test_ten_step_rounds_by_hand: first token at 15 ms, last at 109 ms either way (mean TPOT
    # (109 - 15) / 24). Per round (0.6.0-0.6.2): tokens 2-11 together at 56 ms, 12-21 at 97, 22-25 at 109: of
    # the 24 gaps, 41 + 9 x 0, 41 + 9 x 0, 12 + 3 x 0 ms -> median 0, p99 41 ms. Per pass (0.6.3+): each token
    # when the next pass ends: gaps of 4 ms (device-only passes), 5 ms across a round's first pass -> median
    # 4, p99 5 ms.
    req = Requests.build(np.array([100]), np.array([25]))
    p = params_for("vllm", dict(CFG, num_scheduler_steps=10, vllm_version=release), 1000)
    r = simulate(req, p, ToyCost())
    assert r["mean_ttft_ms"] == pytest.approx(15.0)
    assert r["mean_tpot_ms"] == pytest.approx((109.0 - 15.0) / 24)
    assert r["median_itl_ms"] == pytest.approx(median_itl)
    assert r["p99_itl_ms"] == pytest.approx(p99_itl, abs=0.6)
