"""The simulator through the API-server model (analyzers/simulator/api.py + models/cost/frontend.py)."""

from __future__ import annotations

import numpy as np

from sched_reader.analyzers.simulator import LinearStepCost, params_for, simulate
from sched_reader.analyzers.simulator.workloads import Requests
from sched_reader.models.cost.frontend import ApiServerModel


class _Cfg:
    max_num_seqs = 256
    max_num_batched_tokens = 8192
    block_size = 16
    max_model_len = 4096
    enable_chunked_prefill = True


def _burst(n: int = 200):
    return Requests.build(np.full(n, 100), np.full(n, 20))


def test_burst_ttft_includes_the_serial_intake():
    # 200 requests sent at once: the API server takes them in one by one, 1 ms + 100 x 1 us = 1.1 ms
    # each, so the last enters the engine 220 ms after the first was sent: its TTFT is at least that
    params = params_for("vllm", _Cfg(), 100_000)
    cost = LinearStepCost(base_s=0.002, per_token_s=1e-6)
    plain = simulate(_burst(), params, cost)
    api = simulate(_burst(), params, cost, frontend=ApiServerModel("completions"))
    assert api["p99_ttft_ms"] >= 200 * 1.1 * 0.99
    assert api["mean_ttft_ms"] > plain["mean_ttft_ms"]
    assert api["completed"] == plain["completed"] == 200


def test_streaming_cap_bounds_client_throughput():
    # a very fast engine: 200 x 20 tokens; one server delivers at most 1 / 72 us = 13,889 tok/s
    params = params_for("vllm", _Cfg(), 100_000)
    cost = LinearStepCost(base_s=0.0001, per_token_s=1e-8)
    api = simulate(_burst(), params, cost, frontend=ApiServerModel("completions"))
    assert api["output_throughput"] <= 1.0 / 72e-6 * 1.01
