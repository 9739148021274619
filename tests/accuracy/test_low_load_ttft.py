"""benchmarks/low_load_ttft.py: the engine part / fixed share reading of a low-load TTFT, pinned to hand
calculations on published `vllm bench serve` figures."""

from __future__ import annotations

import pytest
from conftest import load_script

LL = load_script("benchmarks/low_load_ttft.py")


def test_one_client_short_prompt_leaves_a_share_below_the_models():
    # infervisor-plow, vLLM 0.11.2 (ROCm), Qwen3-4B, one client, 1,024-token prompts: published mean TTFT 20.6 ms.
    # A prediction of 45.3 ms holding a 34.4 ms share has an engine part of 45.3 - 34.4 = 10.9 ms, so the
    # published run spent 20.6 - 10.9 = 9.7 ms outside the engine: under a third of the share charged.
    s = LL.split_ttft(20.6, 45.3, 34.4)
    assert s["engine_ms"] == pytest.approx(10.9)
    assert s["implied_share_ms"] == pytest.approx(9.7)
    assert s["implied_share_ms"] < s["model_share_ms"] / 3


def test_a_published_ttft_below_the_engine_part_reads_as_a_negative_share():
    # pegainfer RTX 5090 at 1 QPS: published 56 ms; a 90.9 ms prediction with the 34.4 ms share leaves an engine
    # part of 56.5 ms, already above the whole published TTFT: the engine part is wrong, not the share.
    assert LL.split_ttft(56.0, 90.9, 34.4)["implied_share_ms"] == pytest.approx(-0.5)


def test_summary_keeps_only_low_load_sized_ttfts():
    rows = [{"source": "a", "release": "1", "published_ms": 40.0, "implied_share_ms": 10.0},
            {"source": "a", "release": "1", "published_ms": 60.0, "implied_share_ms": 30.0},
            {"source": "a", "release": "1", "published_ms": LL.LOW_LOAD_TTFT_MS + 1, "implied_share_ms": 900.0}]
    s = LL.summary(rows, "source")["a"]
    assert (s["rows"], s["median_implied_share_ms"], s["max"]) == (2, 20.0, 30.0)
