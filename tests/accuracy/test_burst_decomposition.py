"""benchmarks/burst_decomposition.py: the TTFT floor / spread reading of a burst, pinned to hand calculations
on published `vllm bench serve` outputs."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]


def _load():
    return load_script("benchmarks/burst_decomposition.py")


BD = _load()


def test_pr18566_llama_chat_burst_floor_and_spread():
    # vLLM PR #18566 (Llama-3.1-8B-Instruct, 1,000 ShareGPT prompts, openai-chat): TTFT mean 9,626.13 ms,
    # p99 12,666.73 ms. By hand: P = (12.66673 - 9.62613) / 0.49 = 6.2053 s,
    # F = 9.62613 - 6.2053 / 2 = 6.5235 s, the 6.52 s floor models/cost/frontend.py derives its chat intake from.
    f, p = BD.uniform_split(9.62613, 12.66673)
    assert p == pytest.approx(6.2053, abs=1e-3)
    assert f == pytest.approx(6.5235, abs=1e-3)
    # median 9,459.70 ms: |9.4597 - 9.62613| / 6.2053 = 0.027, a near-uniform spread
    assert BD.skew(9.62613, 9.45970, p) == pytest.approx(0.0268, abs=1e-3)


def test_gpustack_qwen3_14b_burst_implies_12_9_ms_per_request():
    # GPUStack Qwen3-14B / H100, vLLM 0.11.0, 1,000 ShareGPT chat prompts: TTFT mean 22,141.21, median
    # 21,872.31, p99 31,156.86 ms. By hand: P = 9.01565 / 0.49 = 18.399 s, F = 22.14121 - 9.1997 = 12.941 s,
    # 12.94 ms of intake per request, twice the 6.3 ms of vLLM 0.9's chat path.
    pub = {"mean_ttft_ms": 22141.21, "median_ttft_ms": 21872.31, "p99_ttft_ms": 31156.86,
           "median_itl_ms": 59.99, "p99_itl_ms": 627.72}
    pred = {"mean_ttft_ms": 11000.0, "median_ttft_ms": 11000.0, "p99_ttft_ms": 15655.0,
            "median_itl_ms": 47.0, "p99_itl_ms": 377.0}
    d = BD.decompose(pub, pred, 1000)
    assert d["published"]["floor_s"] == pytest.approx(12.941, abs=2e-3)
    assert d["published"]["spread_s"] == pytest.approx(18.399, abs=2e-3)
    assert d["published"]["intake_ms_per_request"] == pytest.approx(12.941, abs=2e-3)
    assert d["uniform"]
    # predicted: P = 4.655 / 0.49 = 9.5 s, F = 11.0 - 4.75 = 6.25 s; the mean miss 11.141 s splits into
    # 6.691 s of floor and (18.399 - 9.5) / 2 = 4.450 s of half spread
    assert d["predicted"]["spread_s"] == pytest.approx(9.5, abs=1e-3)
    assert d["ttft_miss_s"]["floor"] == pytest.approx(6.691, abs=2e-3)
    assert d["ttft_miss_s"]["half_spread"] == pytest.approx(4.450, abs=2e-3)
    assert d["ttft_miss_s"]["floor"] + d["ttft_miss_s"]["half_spread"] == pytest.approx((22141.21 - 11000.0) / 1e3)
    assert d["ratio"]["p99_itl_ms"] == pytest.approx(627.72 / 377.0)


def test_queue_bound_burst_is_not_read_as_intake():
    # GPUStack Qwen3-32B / H100, 500 random 4,000-token prompts: TTFT mean 482,284 ms, median 483,375 ms,
    # p99 956,141 ms. F = 482.284 - (956.141 - 482.284) / 0.98 = -1.24 s < 0: requests start one after
    # another as KV blocks free up, so the floor is no intake time.
    pub = {"mean_ttft_ms": 482284.21, "median_ttft_ms": 483375.28, "p99_ttft_ms": 956141.26}
    d = BD.decompose(pub, pub, 500)
    assert d["published"]["floor_s"] == pytest.approx(-1.24, abs=0.01)
    assert not d["uniform"]


def test_missing_p99_gives_no_decomposition():
    assert BD.decompose({"mean_ttft_ms": 2905.0}, {"mean_ttft_ms": 3000.0, "p99_ttft_ms": 4000.0}, 500) == {}


def test_decode_phase_by_littles_law_gpustack_deepseek():
    # GPUStack DeepSeek-R1-0528 / 8xH200, vLLM 0.11.0, 1,000 ShareGPT chat prompts: mean ITL 119.29 ms,
    # 200,752 output tokens, duration 76.59 s, mean TTFT 17,743.08 ms. By hand: the gaps of all requests
    # add up to 0.11929 x (200,752 - 1,000) = 23,828.4 s, so D = 23.828 s per request, L = 23,828.4 / 76.59
    # = 311.1 requests between first and last token, mean E2E = 17.743 + 23.828 = 41.571 s.
    pub = {"mean_itl_ms": 119.29, "total_output_tokens": 200752, "duration_s": 76.59, "mean_ttft_ms": 17743.08}
    d = BD.decode_phase(pub, 1000)
    assert d["decode_s_per_request"] == pytest.approx(23.828, abs=2e-3)
    assert d["decode_occupancy"] == pytest.approx(311.12, abs=0.02)
    assert d["mean_e2e_s"] == pytest.approx(41.571, abs=2e-3)


def test_decode_phase_of_the_kv_bound_qwen3_32b_burst_needs_about_7_requests():
    # GPUStack Qwen3-32B / H100, 500 random 4,000-in / 200-out prompts: mean ITL 66.29 ms, 99,790 output
    # tokens over 976.29 s (output throughput 102.21 tok/s x 976.29 s = 99,786, the printed total within
    # rounding). By hand: 0.06629 x 99,290 = 6,581.9 s of decode phase, D = 13.164 s, L = 6.742: about 7
    # requests decoding at a time, while the capacity model's 18,304-token KV cache holds 4 of 4,200 tokens.
    d = BD.decode_phase({"mean_itl_ms": 66.29, "total_output_tokens": 99790, "duration_s": 976.29}, 500)
    assert d["decode_s_per_request"] == pytest.approx(13.164, abs=2e-3)
    assert d["decode_occupancy"] == pytest.approx(6.742, abs=2e-3)
    assert d["mean_e2e_s"] is None  # no mean TTFT given
    thr = BD.decode_phase({"mean_itl_ms": 66.29, "output_throughput_tok_s": 102.21, "duration_s": 976.29}, 500)
    assert thr["decode_occupancy"] == pytest.approx(6.742, abs=2e-3)
    assert BD.decode_phase({"mean_itl_ms": 66.29}, 500)["decode_occupancy"] is None
