"""API-server queue (models/cost/frontend.py) and error bands (models/cost/error_bands.py).

Expected values are worked by hand from the constants in the module docstrings, not recomputed with
the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sched_reader.models.cost.error_bands import attach_ranges, band_range, load_bands, regime
from sched_reader.models.cost.frontend import ApiServerModel


def test_burst_intake_is_serial():
    # 3 requests sent together, 1 ms + 100 prompt tokens x 1 us = 1.1 ms each: they reach the engine
    # at 1.1, 2.2 and 3.3 ms
    m = ApiServerModel("completions")
    a = m.intake(np.zeros(3), np.full(3, 100))
    assert a == pytest.approx([1.1e-3, 2.2e-3, 3.3e-3])


def test_intake_idle_server_only_adds_own_cost():
    # sends 1 s apart never queue behind each other: each arrives 1.1 ms after it was sent
    m = ApiServerModel("completions")
    a = m.intake(np.array([0.0, 1.0, 2.0]), np.full(3, 100))
    assert a == pytest.approx([1.1e-3, 1.0011, 2.0011])


def test_chat_intake_costs_more_than_completions():
    p = np.full(1, 0)
    assert ApiServerModel("chat").intake(np.zeros(1), p)[0] == pytest.approx(2e-3)
    assert ApiServerModel("completions").intake(np.zeros(1), p)[0] == pytest.approx(1e-3)


def test_saturated_intake_carries_streaming_work():
    # at saturation each request also waits for its 100 output tokens x 72 us = 7.2 ms of streaming:
    # 2 requests sent together enter at 1 + 7.2 = 8.2 ms and 16.4 ms
    m = ApiServerModel("completions")
    a = m.intake(np.zeros(2), np.zeros(2), np.full(2, 100), streaming_share=1.0)
    assert a == pytest.approx([8.2e-3, 16.4e-3])


def test_delivery_caps_client_throughput():
    # the engine emits 1,000 requests x 101 tokens within 1 s (101,000 tok/s); one server delivers
    # 1 / 72 us = 13,889 tok/s, so the last token reaches the client after ~101,000 x 72 us = 7.27 s
    m = ApiServerModel("completions")
    first = np.linspace(0.0, 0.5, 1000)
    fin = first + 0.5
    f2, e2, peak = m.deliver(first, fin, np.full(1000, 101))
    assert e2.max() == pytest.approx(101_000 * 72e-6, rel=0.02)
    assert peak > 5.0
    assert (f2 >= first).all() and (e2 >= fin).all()


def test_burst_intake_delays_first_tokens_of_early_requests():
    # 1,000 requests sent at t=0 put 1,000 x (1 ms + 100 x 1 us) = 1.1 s of intake in the server's
    # FIFO; the 1,000 first tokens the engine emits together at 0.1 s reach the client only after that
    # work and their own 1,000 x 72 us (the fluid queue serves tokens of one instant together): 1.172 s
    m = ApiServerModel("completions")
    n = 1000
    first = np.full(n, 0.1)
    fin = np.full(n, 0.2)
    f2, _, _ = m.deliver(first, fin, np.full(n, 2), np.zeros(n), np.full(n, 100))
    assert f2.min() == pytest.approx(1.1 + 1000 * 72e-6, rel=0.01)


def test_delivery_below_capacity_is_almost_free():
    # 10 requests x 11 tokens over 10 s: 11 tok/s, far below capacity: every token is late by ~72 us only
    m = ApiServerModel("completions")
    first = np.arange(10.0)
    fin = first + 1.0
    f2, e2, peak = m.deliver(first, fin, np.full(10, 11))
    assert peak < 1e-3
    assert e2 - fin == pytest.approx(np.full(10, 72e-6), abs=1e-3)


def test_regime_classes():
    assert regime(None, math.inf) == "burst"
    assert regime(64, math.inf) == "closed"
    assert regime(None, 4.0) == "closed"


def test_band_range_inverts_log_error():
    # r = ln(pred / published) in [-0.5, 0.25]: published = pred / e^r lies in [pred / e^0.25, pred / e^-0.5]
    bands = {"bands": {"closed": {"tpot": {"r_lo": -0.5, "r_hi": 0.25, "n": 10}}}}
    lo, hi = band_range(10.0, "tpot", "closed", bands)
    assert lo == pytest.approx(10.0 / math.exp(0.25))
    assert hi == pytest.approx(10.0 * math.exp(0.5))
    assert band_range(None, "tpot", "closed", bands) is None


def test_shipped_bands_give_ordered_ranges_in_the_json():
    if not load_bands():
        pytest.skip("no error_bands.json shipped")
    perf = attach_ranges({"output_throughput": 1000.0, "mean_tpot_ms": 20.0, "mean_ttft_ms": 100.0}, None, math.inf)
    for key in ("output_throughput", "mean_tpot_ms", "mean_ttft_ms"):
        lo, hi = perf[f"{key}_range"]
        assert 0 < lo < hi
    assert perf["error_bands"]["regime"] == "burst"


def test_closed_form_throughput_is_capped_by_one_api_server():
    # engine alone 30,000 tok/s for 100-token prompts and 200-token outputs; one API server streams at most
    # 1 / (72 us + (1 ms + 100 x 1 us) / 200) = 1 / 77.5 us = 12,903 tok/s, so streams run 2.325x slower
    from sched_reader.models.cost.performance import _api_server_cap

    out = {"output_throughput": 30000.0, "request_throughput": 150.0, "mean_tpot_ms": 10.0,
           "median_tpot_ms": 10.0, "mean_ttft_ms": 50.0}
    _api_server_cap(out, 100.0, 200.0, "completions", [])
    assert out["output_throughput"] == pytest.approx(1 / 77.5e-6)
    k = 30000.0 * 77.5e-6
    assert out["mean_tpot_ms"] == pytest.approx(10.0 * k)
    assert out["request_throughput"] == pytest.approx(150.0 / k)
