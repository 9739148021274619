"""Workload model: vllm bench serve defaults and the documented ShareGPT means."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from sched_reader.models.workload import (
    SHAREGPT_MEAN_INPUT_TOKENS, SHAREGPT_MEAN_OUTPUT_TOKENS, Workload,
)

DATA = Path(__file__).parents[1] / "data" / "throughput.yaml"


def test_defaults_mirror_vllm_bench_serve():
    w = Workload()
    # vllm bench serve: --dataset-name random, --random-input-len 1024, --random-output-len 128,
    # --num-prompts 1000, --request-rate inf
    assert (w.dataset_name, w.random_input_len, w.random_output_len, w.num_prompts) == ("random", 1024, 128, 1000)
    assert math.isinf(w.request_rate) and w.max_concurrency is None and w.is_burst
    assert (w.mean_input_len(), w.mean_output_len()) == (1024.0, 128.0)


def test_sharegpt_means_come_from_the_published_1000_prompt_runs():
    rows = yaml.safe_load(DATA.read_text())
    runs = [r["workload"] for r in rows
            if "sharegpt" in str(r["workload"]["dataset"]).lower() and r["workload"]["num_prompts"] == 1000
            and r["workload"]["total_input_tokens"]]
    assert len(runs) == 4
    mean_in = sum(w["total_input_tokens"] for w in runs) / 4000      # 216.8
    mean_out = sum(w["total_output_tokens"] for w in runs) / 4000    # 198.2
    assert SHAREGPT_MEAN_INPUT_TOKENS == round(mean_in)
    assert SHAREGPT_MEAN_OUTPUT_TOKENS == round(mean_out)
    w = Workload(dataset_name="sharegpt")
    assert w.mean_input_len() == 217 and w.mean_output_len() == 198
    assert Workload(dataset_name="sharegpt", sharegpt_output_len=64).mean_output_len() == 64


@pytest.mark.parametrize("raw", ["inf", "Inf", None, float("inf")])
def test_request_rate_inf_spellings(raw):
    assert math.isinf(Workload(request_rate=raw).request_rate)


def test_invalid_values_rejected():
    with pytest.raises(ValidationError):
        Workload(request_rate=0)
    with pytest.raises(ValidationError):
        Workload(max_concurrency=0)
    with pytest.raises(ValidationError):
        Workload(dataset_name="sonnet")


def test_closed_loop_is_not_burst():
    assert not Workload(max_concurrency=8).is_burst
    assert not Workload(request_rate=4).is_burst
    assert Workload(request_rate=4).describe()["request_rate"] == 4
