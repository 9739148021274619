"""Published vLLM measurements the closed-form model must reproduce (tests/data/throughput.yaml).

Closed-loop rows are pinned through the steady-state formula; the 200-request burst row through the
simulator (as the benchmark evaluates it). The 1000-request ShareGPT bursts are reported, not asserted, by
benchmarks/throughput_accuracy.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
ROWS = {r["id"]: r for r in yaml.safe_load((ROOT / "tests" / "data" / "throughput.yaml").read_text())}


def _bench():
    return load_script("benchmarks/throughput_accuracy.py")


BENCH = _bench()


def test_every_vllm_row_is_evaluated():
    res = [BENCH.evaluate_row(r, use_simulator=False) for r in ROWS.values()]
    assert len(res) == 11
    assert all(r["status"] == "ok" for r in res), [r["status"] for r in res if r["status"] != "ok"]


def test_qwen3_8b_h100_batch1_tpot_and_throughput():
    # GPUStack performance lab, vLLM 0.11.0, H100 SXM, ShareGPT, --max-concurrency 1:
    # mean TPOT 7.28 ms, output throughput 132.86 tok/s
    r = BENCH.evaluate_row(ROWS["gpustack-vllm-qwen3-8b-h100-sharegpt-conc1"], use_simulator=False)
    assert r["kind"] == "steady"
    assert r["tpot"]["published"] == 7.28
    assert abs(r["tpot"]["error_pct"]) < 20
    assert abs(r["output_throughput"]["error_pct"]) < 25


def test_qwen2_7b_a100_decode_tpot_at_full_batch():
    # dennislee22/vLLM-benchmarking Test 5: 200 x (1024 in, 1024 out) on one A100 80GB, KV pool
    # 464,848 tokens (startup log): mean TPOT 40.34 ms with ~200 sequences decoding; a burst, so the
    # simulator replays the queue
    r = BENCH.evaluate_row(ROWS["dennislee22-qwen2-7b-1xa100-80gb-gmu0.5-n200-1024in-1024out"], use_simulator=True)
    assert r["tpot"]["published"] == pytest.approx(40.34)
    assert abs(r["tpot"]["error_pct"]) < 25


def test_band_quantiles_sit_at_hazen_positions():
    ta = BENCH
    # 20 sorted values 0, 1, ..., 19: value i stands at (i + 0.5) / 20, so the 5% quantile (0.05) lies
    # half-way between the 1st and 2nd values (0.025 and 0.075) and the 95% one half-way between the
    # 19th and 20th (0.925 and 0.975); interpolating at i / (n - 1) would have given 0.95 and 18.05
    lo, hi = ta._quantiles([float(v) for v in reversed(range(20))])
    assert lo == pytest.approx(0.5) and hi == pytest.approx(18.5)
    # 10 values: the 5% position (0.05) IS the first value's (0.5 / 10), the 95% one the last's
    assert ta._quantiles([3.0, 1.0, 2.0, 9.0, 4.0, 5.0, 6.0, 7.0, 8.0, 0.0]) == (0.0, 9.0)
    assert ta._quantiles([1.0]) is None


def test_a_median_only_source_is_compared_with_the_predicted_median(monkeypatch):
    """cssnoeasy's A100 PCIe page prints TTFT p50 only: the row must be scored against the simulated median,
    not the simulated mean (a closed loop's first wave gives the mean a long tail: 837 vs 272 ms there)."""
    public = yaml.safe_load((ROOT / "tests" / "data" / "throughput_public.yaml").read_text())
    row = next(r for r in public if r["id"].startswith("cssnoeasy-v0190-qwen25-7b-1xa100pcie-tp1-random2048-512"))
    assert "mean_ttft_ms" not in row["results"] and row["results"]["median_ttft_ms"] == pytest.approx(228.9)
    fake = {"output_throughput": 1000.0, "mean_ttft_ms": 800.0, "median_ttft_ms": 250.0,
            "mean_tpot_ms": 20.0, "median_tpot_ms": 19.0}
    monkeypatch.setattr(BENCH, "simulate_hook", lambda *a, **k: dict(fake))
    r = BENCH.evaluate_row(row, use_simulator=True)
    assert r["ttft"]["published_key"] == "median_ttft_ms"
    assert r["ttft"]["predicted"] == 250.0
    assert r["ttft"]["error_pct"] == pytest.approx(100 * (250.0 - 228.9) / 228.9)
