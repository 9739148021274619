"""API-server queue (models/cost/frontend.py) and error bands (models/cost/error_bands.py).

Expected values are worked by hand from the constants in the module docstrings, not recomputed with
the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sched_reader.models.cost.error_bands import attach_ranges, band_range, load_bands, regime
from sched_reader.models.cost.frontend import ApiServerModel, endpoint_for


def test_burst_intake_is_serial():
    # 3 requests sent together, 1 ms + 100 prompt tokens x 1 us = 1.1 ms each, of which 0.3 ms is the
    # engine hand-off after the handler's last suspension. The event loop runs the three first passes
    # (0.8 ms each) before any hand-off: they end at 2.4 ms; the hand-offs follow at 2.7, 3.0, 3.3 ms
    # (tokenization on the event loop, as vLLM 0.6.4 did it)
    m = ApiServerModel("completions", tokenizer_thread=False)
    a = m.intake(np.zeros(3), np.full(3, 100))
    assert a == pytest.approx([2.7e-3, 3.0e-3, 3.3e-3])


def test_intake_idle_server_only_adds_own_cost():
    # sends 1 s apart never queue behind each other: each arrives 1.1 ms after it was sent (on the event loop
    # or with the 0.1 ms of tokenization on the tokenizer thread alike)
    m = ApiServerModel("completions", tokenizer_thread=False)
    assert ApiServerModel("completions").intake(np.array([0.0, 1.0, 2.0]), np.full(3, 100)) == pytest.approx(
        [1.1e-3, 1.0011, 2.0011])
    a = m.intake(np.array([0.0, 1.0, 2.0]), np.full(3, 100))
    assert a == pytest.approx([1.1e-3, 1.0011, 2.0011])


def test_intake_two_passes_only_for_requests_sent_meanwhile():
    # request 0 at 0 s; request 1 at 0.5 ms, while request 0's first pass (0.7 ms) runs; request 2 at
    # 10 ms, long after. First passes end at 0.7 and 1.4 ms; request 0's hand-off waits for request
    # 1's first pass (queued at 0.5 ms, ahead of it): 1.4 + 0.3 = 1.7 ms, request 1 then 2.0 ms;
    # request 2 meets an idle loop: 10 + 1.0 = 11.0 ms
    m = ApiServerModel("completions")
    a = m.intake(np.array([0.0, 0.5e-3, 10e-3]), np.zeros(3))
    assert a == pytest.approx([1.7e-3, 2.0e-3, 11.0e-3])


def test_chat_intake_costs_more_than_completions():
    # vLLM PR #18566 (vLLM 0.9.0, Llama-3.1-8B, 1,000 ShareGPT chat prompts at once): nothing reached a
    # client for 6.52 s, i.e. 6.52 ms of intake per request, ~0.23 ms of it tokenizing 230 prompt tokens
    p = np.full(1, 0)
    chat_090 = endpoint_for("/v1/chat/completions", "llama", "0.9.0")
    assert ApiServerModel(chat_090).intake(np.zeros(1), p)[0] == pytest.approx(6.52e-3 - 0.23e-3, abs=0.05e-3)
    # gpt-oss renders chats in Rust (harmony): no Jinja parse; GPUStack's 0.10.2 gpt-oss burst implies 1.6 ms
    harmony = endpoint_for("chat", "gpt_oss", "0.9.0")
    assert harmony == "chat-harmony"
    assert ApiServerModel(harmony).intake(np.zeros(1), p)[0] == pytest.approx(1.6e-3, abs=0.15e-3)
    assert ApiServerModel("completions").intake(np.zeros(1), p)[0] == pytest.approx(1e-3)


def test_chat_intake_follows_the_release_template_work():
    """0.9.2-0.10.2 and 0.11.1+ cache the template parse (render only, like harmony); exactly 0.11.0 re-parses
    it AND generates code for its variables per request. GPUStack's 0.11.0 chat bursts imply 12.9 ms
    (Qwen3-14B) and 11.0 ms (DeepSeek-R1) per request (benchmarks/burst_decomposition.py)."""
    p = np.full(1, 0)

    def intake(release):
        return ApiServerModel(endpoint_for("chat", "qwen3", release)).intake(np.zeros(1), p)[0]

    assert intake("0.10.2") == intake("0.11.1") == intake("0.9.2") == intake("0.6.4") \
        == pytest.approx(ApiServerModel("chat-harmony").intake(np.zeros(1), p)[0])
    assert intake("0.6.5") == intake("0.9.1") > intake("0.10.2")
    assert 11.0e-3 * 0.85 < intake("0.11.0") < 12.9e-3 * 1.15
    assert intake("0.11.0rc1") == intake("0.11.0")
    assert endpoint_for("completions", "qwen3", "0.11.0") == "completions"
    assert endpoint_for("offline", "qwen3", "0.11.0") == "offline"


def test_saturated_intake_carries_streaming_work():
    # at saturation each hand-off also carries the request's 100 output tokens x 72 us = 7.2 ms of
    # streaming: 2 requests sent together finish their first passes (0.7 ms each) at 1.4 ms, then enter
    # at 1.4 + 0.3 + 7.2 = 8.9 ms and 8.9 + 7.5 = 16.4 ms
    m = ApiServerModel("completions")
    a = m.intake(np.zeros(2), np.zeros(2), np.full(2, 100), streaming_share=1.0)
    assert a == pytest.approx([8.9e-3, 16.4e-3])


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
    # work and their own 1,000 x 72 us (the fluid queue serves tokens of one instant together): 1.172 s.
    # With the 100 prompt tokens tokenized on the tokenizer thread (vLLM 0.6.5+) the event loop holds only
    # 1,000 x 1 ms: 1.072 s
    n = 1000
    first = np.full(n, 0.1)
    fin = np.full(n, 0.2)
    for m, loop_s in ((ApiServerModel("completions", tokenizer_thread=False), 1.1), (ApiServerModel("completions"), 1.0)):
        f2, _, _ = m.deliver(first, fin, np.full(n, 2), np.zeros(n), np.full(n, 100))
        assert f2.min() == pytest.approx(loop_s + 1000 * 72e-6, rel=0.01)


def test_intake_work_ahead_of_a_request_lowers_its_client_tpot():
    # The issue-12 hypothesis "intake work queued on the event loop stretches TPOT", worked by hand. One
    # request: 1.0 s of intake work sits in the FIFO from t = 0 (intake_s=1.0, as a burst of ~86 chat
    # requests on vLLM 0.11.0 at 11.6 ms each would), the engine emits its first token at 0.5 s and its
    # 100th at 2.5 s (engine TPOT = 2.0 s / 99 = 20.2 ms). The first token waits behind the intake: it
    # reaches the client at 1.0 s + 72 us (its own streaming) + 72 us (the per-token latency deliver()
    # adds); by 2.5 s the queue has long drained (1.0 s + 100 x 72 us = 1.0072 s of work), so the last
    # token is late by only 72 us. Client TPOT = (2.500072 - 1.000144) / 99 = 15.15 ms: LOWER than the
    # engine's. Intake happens before a request decodes, so it can delay early tokens only; vllm bench
    # serve's TPOT = (last - first) / (n - 1) then falls. Only a backlog growing during decode raises it.
    m = ApiServerModel("completions", intake_s=1.0)
    f2, e2, _ = m.deliver(np.array([0.5]), np.array([2.5]), np.array([100]), np.array([0.0]), np.array([0]))
    assert f2[0] == pytest.approx(1.0 + 2 * 72e-6, abs=2e-3)
    assert e2[0] == pytest.approx(2.5 + 72e-6, abs=1e-3)
    client_tpot = (e2[0] - f2[0]) / 99
    assert client_tpot == pytest.approx(1.5 / 99, rel=0.01)
    assert client_tpot < 2.0 / 99


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
    # 100 prompts under --max-concurrency 100 all start at once: the cap never binds, the run is a burst
    assert regime(100, math.inf, 100) == "burst"
    assert regime(64, math.inf, 100) == "closed"


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
    # engine alone 30,000 tok/s for 100-token prompts and 200-token outputs. vLLM 0.6.4 tokenizes on the event
    # loop: one API server streams at most 1 / (72 us + (1 ms + 100 x 1 us) / 200) = 1 / 77.5 us = 12,903 tok/s,
    # so streams run 2.325x slower. From 0.6.5 the event loop holds 1 / (72 us + 1 ms / 200) = 1 / 77 us, and the
    # tokenizer thread (100 us per prompt) caps at 200 / 100 us = 2,000,000 tok/s, far above
    from sched_reader.models.cost.performance import _api_server_cap

    for release, per_token in (("0.6.4", 77.5e-6), ("0.11.0", 77.0e-6)):
        out = {"output_throughput": 30000.0, "request_throughput": 150.0, "mean_tpot_ms": 10.0,
               "median_tpot_ms": 10.0, "mean_ttft_ms": 50.0}
        _api_server_cap(out, 100.0, 200.0, "completions", [], release)
        assert out["output_throughput"] == pytest.approx(1 / per_token)
        k = 30000.0 * per_token
        assert out["mean_tpot_ms"] == pytest.approx(10.0 * k)
        assert out["request_throughput"] == pytest.approx(150.0 / k)
    # 20,000-token prompts and 10-token outputs: the tokenizer thread binds at 10 / 20 ms = 500 tok/s
    out = {"output_throughput": 2000.0, "request_throughput": 200.0, "mean_tpot_ms": 10.0}
    _api_server_cap(out, 20000.0, 10.0, "completions", [], "0.11.0")
    assert out["output_throughput"] == pytest.approx(500.0)


def test_range_always_contains_the_estimate():
    # every corpus row over-predicted (r = ln(pred/pub) in [0.2, 0.5]): the raw band [10/e^0.5, 10/e^0.2] =
    # [6.07, 8.19] would exclude the estimate 10; widened to include 1.0x it is [10/e^0.5, 10] = [6.07, 10.0]
    bands = {"bands": {"burst": {"tpot": {"r_lo": 0.2, "r_hi": 0.5, "n": 6}}}}
    lo, hi = band_range(10.0, "tpot", "burst", bands)
    assert lo == pytest.approx(6.0653, abs=1e-4)
    assert hi == pytest.approx(10.0)
    # all rows under-predicted, r in [-1.0, -0.1]: [10, 10 e^1.0] = [10, 27.18]
    bands = {"bands": {"burst": {"tpot": {"r_lo": -1.0, "r_hi": -0.1, "n": 6}}}}
    lo, hi = band_range(10.0, "tpot", "burst", bands)
    assert lo == pytest.approx(10.0) and hi == pytest.approx(27.1828, abs=1e-4)


def test_bias_is_a_note_not_a_shifted_range():
    from sched_reader.models.cost.error_bands import bias_note
    # median r = -0.693: published was 2.00x the prediction in the median on 6 rows -> a note naming it
    note = bias_note("ttft", {"r_median": -0.6931, "n": 6}, "burst")
    assert note is not None and "2.00x" in note and "6 published burst" in note and "high end" in note
    assert bias_note("ttft", {"r_median": -0.10, "n": 6}, "burst") is None      # 10% off: no bias claimed
    assert bias_note("ttft", {"r_median": -0.69, "n": 2}, "burst") is None      # 2 rows: anecdote


def test_shipped_ranges_contain_the_estimate_and_say_what_they_are_built_from():
    if not load_bands():
        pytest.skip("no error_bands.json shipped")
    for conc, rate in ((None, math.inf), (8, math.inf)):
        est = {"output_throughput": 1329.0, "mean_tpot_ms": 38.34, "mean_ttft_ms": 390.7, "explain": []}
        perf = attach_ranges(dict(est, explain=[]), conc, rate)
        for key in ("output_throughput", "mean_tpot_ms", "mean_ttft_ms"):
            lo, hi = perf[f"{key}_range"]
            assert lo <= est[key] <= hi
            m = perf["error_bands"]["metrics"][key]
            assert m["n_rows"] >= 2 and m["quantiles"] == perf["error_bands"]["quantiles"]
            assert m["factor"][0] <= 1.0 <= m["factor"][1]
        assert {t["name"] for t in perf["explain"]} >= {"output_throughput_range", "mean_tpot_ms_range"}


def test_dense_and_moe_cells_are_used_only_with_enough_rows():
    # hand-made table: ln(2) = 0.6931 -> a 2x factor; the MoE cell of the closed regime has 9 rows, the dense 3
    bands = {"bands": {
        "closed": {"tpot": {"r_lo": -0.6931, "r_hi": 0.0, "n": 12, "r_median": -0.2}},
        "closed/moe": {"tpot": {"r_lo": -1.3863, "r_hi": 0.0, "n": 9, "r_median": -0.5}},
        "closed/dense": {"tpot": {"r_lo": -0.1, "r_hi": 0.0, "n": 3, "r_median": 0.0}}}}
    # MoE: its own cell (9 rows >= 8): up to 4x the estimate
    assert band_range(10.0, "tpot", "closed", bands, "moe") == pytest.approx([10.0, 40.0], rel=1e-3)
    # dense: 3 rows are too few and no dense cell over both regimes exists, so the regime's cell (2x) answers,
    # as it does without a model kind
    assert band_range(10.0, "tpot", "closed", bands, "dense") == pytest.approx([10.0, 20.0], rel=1e-3)
    assert band_range(10.0, "tpot", "closed", bands) == pytest.approx([10.0, 20.0], rel=1e-3)
    # with 10 dense rows over both regimes (ln 1.5 = 0.4055), dense models are compared with dense ones first
    bands["bands"]["dense"] = {"tpot": {"r_lo": -0.4055, "r_hi": 0.0, "n": 10, "r_median": 0.0}}
    assert band_range(10.0, "tpot", "closed", bands, "dense") == pytest.approx([10.0, 15.0], rel=1e-3)


def test_model_kind_reads_the_routed_expert_keys():
    from sched_reader.models.cost.error_bands import model_kind

    assert model_kind({"num_local_experts": 8}) == "moe"          # Mixtral
    assert model_kind({"n_routed_experts": 256}) == "moe"         # DeepSeek-V3
    assert model_kind({"hidden_size": 4096}) == "dense"
    assert model_kind(None) is None


def test_prompts_are_tokenized_off_the_event_loop_from_0_6_5():
    """100 requests of 8,000 prompt tokens sent at once. vLLM 0.6.4 tokenizes on the event loop: each first pass
    costs 1.0 ms + 8,000 x 1 us - 0.3 ms = 8.7 ms, all 100 run before the first hand-off, so the engine sees
    nothing until 100 x 8.7 ms + 0.3 ms = 870.3 ms. From 0.6.5 the tokenizer thread takes the 8 ms per prompt:
    the first passes (0.7 ms each) end at 70 ms and the first prompt was tokenized long before (0.7 + 8 ms), so
    the first hand-off is at 70.3 ms; the thread still sets the pace of the last: 0.7 + 100 x 8 ms + 0.3 ms."""
    from sched_reader.models.cost.frontend import api_server_for

    s, p = np.zeros(100), np.full(100, 8000)
    old = api_server_for("completions", "0.6.4").intake(s, p)
    new = api_server_for("completions", "0.6.5").intake(s, p)
    assert old[0] == pytest.approx(0.8703, abs=1e-6) and old[-1] == pytest.approx(0.8703 + 99 * 0.3e-3, abs=1e-6)
    assert new[0] == pytest.approx(0.0703, abs=1e-6)
    assert new[-1] == pytest.approx(0.7e-3 + 100 * 8e-3 + 0.3e-3, abs=1e-6)
    assert api_server_for("completions", None).tokenizer_thread  # an unknown release: the current behaviour
