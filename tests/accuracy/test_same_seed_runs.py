"""Sources that print the mean of repeated same-seed runs on one server (benchmarks/throughput_accuracy.py
``same_seed_runs``): every run after the first finds its prompts in vLLM's prefix cache.

Independent figure: cssnoeasy's A100 TP1-vs-TP2 report (docs/reports/a100-tp1-vs-tp2-formal-baseline.md at
e4226b0) prints the short_short_low TP1 runs' TTFT p50 as 275.24 / 68.74 / 75.91 ms (section 10) and the
workload's TTFT p50 as 139.96 ms (section 8): the mean of the three runs' medians, not a pooled median."""

from __future__ import annotations

from conftest import load_script

BENCH = load_script("benchmarks/throughput_accuracy.py")


def test_published_figure_is_the_mean_of_the_runs_statistics():
    runs = [{"median_ttft_ms": 275.24, "policy": "vllm"}, {"median_ttft_ms": 68.74, "policy": "vllm"},
            {"median_ttft_ms": 75.91, "policy": "vllm"}]
    avg = BENCH.average_runs(runs, [1, 1, 1])
    assert abs(avg["median_ttft_ms"] - 139.96) < 0.01
    assert avg["policy"] == "vllm"
    # one cold run and two identical warm runs: weights 1 and 2 give the same mean
    two = BENCH.average_runs([runs[0], {"median_ttft_ms": 72.325}], [1, 2])
    assert abs(two["median_ttft_ms"] - 139.96) < 0.01


def test_rows_state_their_runs():
    assert BENCH.row_same_seed_runs({"workload": {"same_seed_runs": 3}}) == 3
    assert BENCH.row_same_seed_runs({"workload": {}}) == 1
    rows = [r for r in BENCH.load_rows() if r["source"] == "cssnoeasy-a100-blog"]
    assert rows and all(BENCH.row_same_seed_runs(r) == 3 for r in rows)

