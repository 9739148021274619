"""The lesson's qualitative results on a mixed workload (toy linear cost, saturating load)."""

import pytest

from sched_reader.analyzers.simulator import LinearStepCost, params_for, simulate
from sched_reader.analyzers.simulator.workloads import WorkloadSpec, generate

# a prefill-heavy toy: 12 ms per step + 60 us per token + 3 ns per attended context token
COST = LinearStepCost(base_s=0.012, per_token_s=6e-5, per_ctx_s=3e-9, per_pair_s=1e-11)
CFG = dict(block_size=16, max_num_seqs=128, max_num_batched_tokens=8192, max_model_len=32768)


@pytest.fixture(scope="module")
def mixed():
    # 90% chat 256/256 + 10% RAG 16k/128, Poisson at 6 req/s
    spec = WorkloadSpec.model_validate({
        "num_prompts": 400, "seed": 1, "arrival": {"process": "poisson", "rate": 6},
        "classes": [{"name": "chat", "weight": 0.9, "input": 256, "output": 256},
                    {"name": "rag", "weight": 0.1, "input": 16384, "output": 128}]})
    return generate(spec)


@pytest.fixture(scope="module")
def results(mixed):
    burst = generate(WorkloadSpec.model_validate({
        "num_prompts": 300, "seed": 3, "arrival": {"process": "all_at_once"},
        "classes": [{"name": "chat", "weight": 0.9, "input": 256, "output": 256},
                    {"name": "rag", "weight": 0.1, "input": 8192, "output": 128}]}))
    out = {}
    for pol in ("naive", "static", "continuous", "chunked"):
        out[pol] = simulate(burst, params_for(pol, CFG, 40_000), COST)
    return out


def test_continuous_beats_static_beats_naive(results):
    t = {k: v["total_token_throughput"] for k, v in results.items()}
    assert t["continuous"] > 1.2 * t["static"]
    assert t["static"] > 5 * t["naive"]


def test_chunking_cuts_p99_itl_keeps_throughput(mixed):
    cont = simulate(mixed, params_for("continuous", CFG, 40_000), COST)
    chunk = simulate(mixed, params_for("chunked", CFG, 40_000, chunk_size=512), COST)
    assert chunk["p99_itl_ms"] < 0.5 * cont["p99_itl_ms"]
    assert abs(chunk["total_token_throughput"] / cont["total_token_throughput"] - 1) < 0.05


def test_chunk_size_trades_ttft_against_itl(mixed):
    small = simulate(mixed, params_for("chunked", CFG, 40_000, chunk_size=256), COST)
    large = simulate(mixed, params_for("chunked", CFG, 40_000, chunk_size=2048), COST)
    assert small["mean_ttft_ms"] > large["mean_ttft_ms"]
    assert small["p99_itl_ms"] < large["p99_itl_ms"]


def test_static_pads_kv(results):
    # static reserves padded KV for the longest prompt + output: far more waste than paged allocation
    assert results["static"]["kv_fragmentation"] > 0.3
    assert results["continuous"]["kv_fragmentation"] < 0.04


def test_static_hand_timeline():
    from sched_reader.analyzers.simulator.workloads import Requests

    cost = LinearStepCost(base_s=0.002, per_token_s=0.001, per_ctx_s=0.0)
    req = Requests.build([4, 8], [2, 5])          # both at t=0
    p = params_for("static", dict(block_size=4, max_num_seqs=8, max_model_len=1000), 100)
    r = simulate(req, p, cost)
    # window: the 2nd request is there at t=0 -> launch at 0; prefill pads to 8: 2 ms + 16 tokens = 18 ms;
    # 4 decode steps of 2 + 2 tokens = 4 ms; both complete at 18 + 16 = 34 ms
    assert r["mean_ttft_ms"] == pytest.approx(18.0)
    assert r["mean_e2el_ms"] == pytest.approx(34.0)
    assert r["num_steps"] == 5


def test_naive_one_at_a_time():
    from sched_reader.analyzers.simulator.workloads import Requests

    cost = LinearStepCost(base_s=0.002, per_token_s=0.001, per_ctx_s=0.0)
    req = Requests.build([4, 4], [3, 3])
    r = simulate(req, params_for("naive", dict(block_size=4, max_model_len=100), 100), cost)
    # request 1: prefill 6 ms, 2 decodes of 3 ms -> done at 12 ms; request 2 starts then: TTFT 18 ms
    assert r["p99_ttft_ms"] == pytest.approx(6 + (18 - 6) * 0.99)
    assert r["duration_s"] == pytest.approx(0.024)
