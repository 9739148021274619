"""ShareGPT rows: the simulator's draw is scaled to the token totals the run printed
(benchmarks/throughput_accuracy.row_length_totals / scale_to_totals)."""

from __future__ import annotations

import numpy as np
from conftest import load_script

from sched_reader.analyzers.simulator.workloads import from_bench_flags

ta = load_script("benchmarks/throughput_accuracy.py")


def _row(rid: str) -> dict:
    return next(r for r in ta.load_rows() if r["id"] == rid)


def test_totals_are_read_from_sharegpt_rows_only():
    # GPUStack's Qwen3-14B run printed "Total input tokens: 217393" and "Total generated tokens: 201648"
    assert ta.row_length_totals(_row("gpustack-vllm-qwen3-14b-h100-sharegpt")) == (217393, 201648)
    # a random-dataset row has its lengths from the flags, nothing to scale
    assert ta.row_length_totals(_row("gpustack-vllm-qwen3-32b-h100-random-4k-in")) is None


def test_scaled_draw_sums_to_the_printed_totals():
    # wang-junjian's 100-prompt run (seed 42) printed 21,566 input and 25,066 output tokens: 250.7 tokens a reply,
    # above the dataset's mean of ~203, so an unscaled draw of 100 pairs under-states the decode work
    req = from_bench_flags(dataset_name="sharegpt", num_prompts=100)
    scaled = ta.scale_to_totals(req, (21566, 25066))
    assert abs(int(np.sum(scaled.prompt_len)) - 21566) <= 50      # rounding each of 100 lengths: < 0.5 each
    assert abs(int(np.sum(scaled.output_len)) - 25066) <= 50
    assert int(scaled.output_len.min()) >= 1 and int(scaled.prompt_len.min()) >= 1
    # one factor per column: the order of lengths is kept (the longest reply stays the longest)
    assert int(np.argmax(scaled.output_len)) == int(np.argmax(req.output_len))
