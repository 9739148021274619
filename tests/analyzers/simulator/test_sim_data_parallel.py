"""Data parallelism in the simulator: independent replicas behind one load-balancing API server.

vLLM source facts pinned here (vLLM 0.14.1 unless named):
* v1/engine/core_client.py DPLBAsyncMPClient.get_core_engine_for_request: the engine with the lowest
  ``waiting * 4 + running`` (scan from ``eng_start_index``, 0 for one API server; ties keep the first), then
  ``current_counts[eng_index][0] += self.client_count`` (1 for one API server) until the coordinator's next
  publication (v1/engine/coordinator.py, every 100 ms at most);
* v1/engine/core.py: "Non-MoE DP ranks are completely independent, so treat like DP=1".
"""

from dataclasses import dataclass, replace

import numpy as np

from sched_reader.analyzers.simulator import LinearStepCost, from_bench_flags, params_for, simulate
from sched_reader.analyzers.simulator.data_parallel import assign, concurrency_shares, replicas_of, warm_homes
from sched_reader.analyzers.simulator.workloads import Requests

CFG = dict(block_size=16, max_num_seqs=64, max_num_batched_tokens=2048, max_model_len=8192)
BLOCKS = 4000


@dataclass(frozen=True)
class DPToy(LinearStepCost):
    """The toy cost of ONE replica of a two-replica deployment (``dp`` as IterationCostModel has it)."""

    dp: int = 2


def _vllm_0141_pick(counts: list[list[int]], start: int = 0, client_count: int = 1) -> int:
    """vLLM 0.14.1's choice, written out from core_client.py (not from this package)."""
    best, idx = None, 0
    for i in range(len(counts)):
        j = (start + i) % len(counts)
        waiting, running = counts[j]
        score = waiting * 4 + running
        if best is None or score < best:
            best, idx = score, j
    counts[idx][0] += client_count
    return idx


def test_burst_assignment_is_vllms_balancer():
    # 7 requests sent together to 3 idle engines (no coordinator publication in between)
    counts = [[0, 0], [0, 0], [0, 0]]
    picks = [_vllm_0141_pick(counts) for _ in range(7)]
    assert picks == [0, 1, 2, 0, 1, 2, 0]
    req = from_bench_flags(random_input_len=100, random_output_len=10, num_prompts=7)
    got = [0] * 7
    for k, idx in enumerate(assign(req, 3)):
        for i in idx.tolist():
            got[i] = k
    assert got == picks


def test_closed_loop_shares():
    # the first C requests of a closed loop are sent together: round robin gives ceil / floor shares
    assert concurrency_shares(100, 2) == [50, 50]
    assert concurrency_shares(5, 2) == [3, 2]
    assert concurrency_shares(None, 3) == [None, None, None]
    assert replicas_of(LinearStepCost()) == 1 and replicas_of(DPToy()) == 2


def _run(cost, n, conc=None, rate=float("inf")):
    req = from_bench_flags(random_input_len=1000, random_output_len=50, num_prompts=n, max_concurrency=conc,
                           request_rate=rate)
    return simulate(req, params_for("vllm", CFG, BLOCKS), cost)


def test_two_replicas_serve_a_burst_as_two_engines_of_half_of_it():
    # identical requests sent at once: each replica gets half and runs exactly as one engine with that half
    # (independent engine cores); the whole run has the same latencies and twice the throughput
    base = dict(base_s=0.01, per_token_s=2e-5, per_ctx_s=1e-8)
    one = _run(LinearStepCost(**base), 150)
    two = _run(DPToy(**base), 300)
    for key in ("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms", "p99_itl_ms", "duration_s"):
        assert np.isclose(two[key], one[key], rtol=1e-12), key
    assert np.isclose(two["output_throughput"], 2 * one["output_throughput"], rtol=1e-12)
    assert two["completed"] == 300 and two["kv_blocks_total"] == 2 * BLOCKS
    assert any("data parallel 2" in n for n in two["notes"])


def test_closed_loop_clients_split_over_replicas():
    # 64 clients over 2 replicas: each keeps 32 in flight, as one engine with 32 clients and half the requests
    base = dict(base_s=0.01, per_token_s=2e-5, per_ctx_s=1e-8)
    one = _run(LinearStepCost(**base), 200, conc=32)
    two = _run(DPToy(**base), 400, conc=64)
    for key in ("mean_ttft_ms", "mean_tpot_ms", "duration_s"):
        assert np.isclose(two[key], one[key], rtol=1e-12), key
    assert np.isclose(two["request_throughput"], 2 * one["request_throughput"], rtol=1e-12)


def test_one_replica_is_unchanged():
    # dp = 1 never goes through the split: the same dict as a plain cost
    base = dict(base_s=0.01, per_token_s=2e-5, per_ctx_s=1e-8)
    a = _run(LinearStepCost(**base), 120, rate=20.0)
    b = _run(DPToy(dp=1, **base), 120, rate=20.0)
    assert {k: v for k, v in a.items() if k != "params"} == {k: v for k, v in b.items() if k != "params"}


# --- warm prefix cache under DP ------------------------------------------------------------------------
# vLLM facts: every engine core owns its KV cache and prefix cache (v1/engine/core.py EngineCore builds its own
# Scheduler / KVCacheManager), and DPLBAsyncMPClient.get_core_engine_for_request reads only queue counts, never
# the prompt; dense ranks of 0.14.1 publish no counts at all (_maybe_publish_request_counts is a method of
# DPEngineCoreProc, the MoE-only class). So a prompt an earlier run cached is on this run's engine 1 time in dp.

WARM_CFG = dict(CFG, enable_prefix_caching=True)


def _warm_burst(n: int, prompt: int, warm: int, warm_ids) -> Requests:
    """``n`` requests of ``prompt`` tokens sent at once, each with its own prefix of ``warm`` tokens; those in
    ``warm_ids`` start cached (the run before them on the same server computed them)."""
    req = Requests.build([prompt] * n, [20] * n, prefix_id=list(range(n)), prefix_len=[warm] * n)
    return replace(req, warm_prefixes=tuple(warm_ids))


def test_warm_prefixes_split_over_replicas_one_in_dp():
    # hand count, dp = 2: replica 0 serves requests 0, 2, 4, 6 and finds its 1st and 3rd (0, 4); replica 1
    # serves 1, 3, 5, 7 and finds 1, 5: half of each replica's requests
    req = _warm_burst(8, 2048, 1024, range(8))
    homes = warm_homes(req, 2)
    found = sorted(i for k, idx in enumerate(assign(req, 2)) for i in idx.tolist() if homes[i] == k)
    assert found == [0, 1, 4, 5]
    # dp = 3 over 9 requests: each replica finds its first request's prefix only (1 in 3)
    homes3 = warm_homes(_warm_burst(9, 2048, 1024, range(9)), 3)
    assert sorted(i for k, idx in enumerate(assign(_warm_burst(9, 2048, 1024, range(9)), 3))
                  for i in idx.tolist() if homes3[i] == k) == [0, 1, 2]


def test_two_replicas_find_half_of_an_earlier_runs_prompts():
    # 2 replicas x 40 requests of 2048 tokens whose first 1024 an earlier run cached = one engine with 40
    # requests of which every other one (its 1st, 3rd, ...) finds its 1024 cached tokens, written out by hand
    base = dict(base_s=0.01, per_token_s=2e-5, per_ctx_s=1e-8)
    two = simulate(_warm_burst(80, 2048, 1024, range(80)), params_for("vllm", WARM_CFG, BLOCKS), DPToy(**base))
    one = simulate(_warm_burst(40, 2048, 1024, range(0, 40, 2)), params_for("vllm", WARM_CFG, BLOCKS),
                   LinearStepCost(**base))
    for key in ("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms", "duration_s"):
        assert np.isclose(two[key], one[key], rtol=1e-12), key
    # between an engine that finds every prompt and one that finds none
    every = simulate(_warm_burst(40, 2048, 1024, range(40)), params_for("vllm", WARM_CFG, BLOCKS),
                     LinearStepCost(**base))
    none = simulate(_warm_burst(40, 2048, 1024, ()), params_for("vllm", WARM_CFG, BLOCKS), LinearStepCost(**base))
    assert every["mean_ttft_ms"] < two["mean_ttft_ms"] < none["mean_ttft_ms"]
    assert any("prefix cache per engine; 40 of the 80" in n for n in two["notes"])
