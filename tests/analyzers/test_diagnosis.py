"""Diagnosis helpers pinned to hand calculations."""

from __future__ import annotations

import math

import numpy as np

from sched_reader.analyzers.diagnosis import in_flight, needs_queueing
from sched_reader.models.block_accounting import account_lengths
from sched_reader.models.workload import Workload


def test_in_flight_uses_littles_law_for_an_open_loop():
    # 8 req/s x 1.75 s mean end-to-end latency = 14 requests in flight.
    w = Workload(num_prompts=500, request_rate=8)
    assert in_flight(w, {"request_throughput": 8.0, "mean_e2el_ms": 1750.0}) == 14


def test_in_flight_is_the_cap_or_the_burst():
    assert in_flight(Workload(num_prompts=500, max_concurrency=32), None) == 32
    assert in_flight(Workload(num_prompts=500), None) == 500  # request rate inf: everything at once


def test_steady_state_only_for_fixed_lengths_in_a_closed_loop_too_large_to_replay():
    assert not needs_queueing(Workload(max_concurrency=16, num_prompts=100_000), None)  # 12.8 M steps
    assert needs_queueing(Workload(), None)                                  # burst
    assert needs_queueing(Workload(max_concurrency=16, request_rate=4), None)  # open loop
    assert needs_queueing(Workload(dataset_name="sharegpt", max_concurrency=16), None)


def test_fixed_length_closed_loop_is_replayed():
    # vllm bench serve sends the first max_concurrency requests together, and with fixed lengths the
    # loop keeps running in groups that finish (and are replaced) together: simulated up to 2 M
    # request-steps (num_prompts x output tokens), here 1,000 x 128 and 15,625 x 128 = 2 M
    assert needs_queueing(Workload(num_prompts=128, max_concurrency=64), None)
    assert needs_queueing(Workload(num_prompts=1000, max_concurrency=16), None)
    assert needs_queueing(Workload(num_prompts=15_625, max_concurrency=16), None)
    assert not needs_queueing(Workload(num_prompts=15_626, max_concurrency=16), None)


def test_paged_waste_is_below_one_block_per_request():
    # Two requests of 17 and 32 tokens, blocks of 16: paged reserves 32 + 32 = 64 slots for 49 used
    # (waste 15/64); contiguous to max-model-len 64 reserves 128 (waste 79/128).
    r = account_lengths(np.array([17, 32]), max_model_len=64, block_size=16, kv_bytes_per_token=2,
                        kv_budget_bytes=2 * 640)
    assert r.paged.reserved_tokens == 64 and math.isclose(r.paged.waste_fraction, 15 / 64)
    assert r.contiguous.reserved_tokens == 128 and math.isclose(r.contiguous.waste_fraction, 79 / 128)
    assert r.contiguous.max_concurrency == 10  # 640 token budget / 64
    assert r.paged.max_concurrency == 20       # 640 / 32 mean reserved slots
