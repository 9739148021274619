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
