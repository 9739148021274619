"""The simulator's fast step time (models/cost/fast_step.py) is IterationCostModel.step_time, bit for bit.

It is a speed-up only: on every model shape the catalog has (dense, MoE with a measured efficiency
curve, sliding-window layers, TP/PP/EP, eager mode, a calibration profile on top) it must return the
very same float as ``step_time`` for mixed, prefill-only and decode-only steps; when the model's
arithmetic changes without it, the build-time probes must refuse it (None) rather than drift.
"""

from __future__ import annotations

import random

import pytest

from sched_reader.analyzers.pipeline import build_specs
from sched_reader.analyzers.simulator.api import engine_inputs
from sched_reader.models.calibration_profile import CalibratedCost
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.fast_step import compile_step_time

CASES = [
    ["meta-llama/Llama-3.1-8B-Instruct"],
    ["meta-llama/Llama-3.1-8B-Instruct", "--enforce-eager"],
    ["meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4", "--pipeline-parallel-size", "2"],
    ["Qwen/Qwen3-30B-A3B"],                                                    # MoE
    ["mistralai/Mixtral-8x7B-Instruct-v0.1", "--tensor-parallel-size", "2", "--enable-expert-parallel"],
    ["google/gemma-2-9b-it"],                                                  # sliding-window layers
    ["openai/gpt-oss-20b"],                                                    # MoE + sliding window
    ["meta-llama/Llama-3.1-8B-Instruct", "--quantization", "fp8"],             # measured FP8 GEMM table
    ["meta-llama/Llama-3.1-8B-Instruct", "--kv-cache-dtype", "fp8"],           # measured FP8-KV attention
    ["Qwen/Qwen3-30B-A3B-FP8"],                      # block FP8: per-tensor FP8 GEMM table standing in
]


def _cost(argv):
    spec = build_specs([], ["vllm", "serve", *argv])[0]
    return engine_inputs(spec, apply_profile=False)[0]


def _points(seed: int, n: int):
    rng = random.Random(seed)
    for _ in range(n):
        nd = rng.randint(0, 700)
        tp = rng.choice([0, 0, rng.randint(1, 600), rng.randint(1, 20_000)])
        S = nd * rng.randint(1, 40_000)
        P = float(tp * rng.randint(0, 16_000)) / 2 if tp else 0.0
        nps = rng.randint(1, 4) if tp else 0
        yield nd, S, tp, P, nps


@pytest.mark.parametrize("argv", CASES, ids=lambda a: " ".join(a))
def test_fast_step_time_equals_step_time_bitwise(argv):
    cost = _cost(argv)
    fast = compile_step_time(cost)
    assert fast is not None, "the exact fast form should exist for every catalog model"
    for pt in _points(7, 3000):
        assert fast(*pt) == cost.step_time(*pt), pt


def test_calibrated_cost_has_the_same_fast_form():
    cost = CalibratedCost(_cost(CASES[0]), decode_scale=1.13, prefill_scale=0.91, overhead_s=0.0021,
                          seq_overhead_s=3e-6)
    fast = compile_step_time(cost)
    assert fast is not None
    for pt in _points(11, 2000):
        assert fast(*pt) == cost.step_time(*pt), pt


def test_a_changed_model_is_refused_not_mirrored(monkeypatch):
    """If IterationCostModel's arithmetic changes and fast_step.py does not follow, no fast form."""
    cost = _cost(CASES[0])
    orig = IterationCostModel._evaluate

    def shifted(self, *a, **k):
        gpu, cpu, interval, terms = orig(self, *a, **k)
        return gpu * (1 + 1e-15), cpu, interval, terms      # one ulp-scale change

    monkeypatch.setattr(IterationCostModel, "_evaluate", shifted)
    assert compile_step_time(cost) is None


def test_other_costs_have_no_fast_form():
    from sched_reader.analyzers.simulator.cost import LinearStepCost

    assert compile_step_time(LinearStepCost()) is None


@pytest.mark.parametrize("gpu", ["A100 SXM4 80GB", "L40S", "MI300X"])
def test_fast_form_on_other_gpus(gpu):
    """A100/L40S: measured tables of another generation; MI300X: none (the named constants)."""
    spec = build_specs([], ["vllm", "serve", "Qwen/Qwen3-8B"], gpu=gpu)[0]
    cost = engine_inputs(spec, apply_profile=False)[0]
    fast = compile_step_time(cost)
    assert fast is not None
    for pt in _points(5, 1500):
        assert fast(*pt) == cost.step_time(*pt), pt
