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
