"""Offline runs (`vllm bench throughput`, the LLM class): no API server in front of the engine.

`vllm bench throughput` hands every prompt to the engine in-process (benchmarks/benchmark_throughput.py:
``llm.generate(prompts, sampling_params)`` between two ``time.perf_counter()`` calls), so there is no HTTP
intake, no SSE stream and no per-token API-server cost. ``--backend offline`` predicts that run.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sched_reader.cli.app import app
from sched_reader.models.cost.frontend import ApiServerModel, api_server_for
from sched_reader.models.workload import Workload, endpoint_kind

runner = CliRunner()

ARGV = ["diagnose", "--gpu", "H100", "--vllm", "0.11.0", "--input-len", "128", "--output-len", "128",
        "--num-prompts", "2000", "-f", "json", "--no-effects"]


def _perf(extra: list[str]) -> dict:
    res = runner.invoke(app, ARGV + extra + ["--", "vllm", "serve", "meta-llama/Llama-3.2-1B"])
    assert res.exit_code in (0, 1), res.output
    doc = json.loads(res.stdout)
    engine = doc["engines"][0]
    return engine["workload"] | {"perf": engine["performance"]}


@pytest.mark.parametrize("name", ["offline", "OFFLINE", "llm", "throughput", "vllm-bench-throughput"])
def test_offline_names(name):
    assert endpoint_kind(name) == "offline"
    assert Workload(endpoint=name).endpoint == "offline"


def test_served_entry_points_unchanged():
    assert endpoint_kind("openai-chat") == "chat"
    assert endpoint_kind("/v1/completions") == "completions"
    assert endpoint_kind(None) == "completions"


def test_offline_has_no_api_server():
    assert api_server_for("offline") is None
    chat = api_server_for("openai-chat")
    assert isinstance(chat, ApiServerModel)
    assert chat.intake([0.0], [0])[0] > api_server_for("completions").intake([0.0], [0])[0]  # a served intake


def test_offline_burst_is_not_capped_by_the_api_server():
    # Hand calculation of the cap one API-server process puts on a served burst (models/cost/frontend.py):
    # 72 us per streamed token plus the request's intake (1.0 ms + 128 prompt tokens x 1 us) spread over
    # its 128 output tokens -> 1 / (72e-6 + 1.128e-3 / 128) = 12,380 output tokens/s.
    cap = 1.0 / (72e-6 + 1.128e-3 / 128)
    served = _perf([])
    offline = _perf(["--backend", "offline"])
    assert served["endpoint"] == "completions" and offline["endpoint"] == "offline"
    assert served["perf"]["output_throughput"] <= cap * 1.01
    # a 1B model on an H100 decodes far faster than one API server can stream: offline it is not held back
    assert offline["perf"]["output_throughput"] > cap
    # and nothing waits for 2,000 intakes (>= 2 s of API-server time) before the engine sees the last prompt
    assert offline["perf"]["mean_ttft_ms"] < served["perf"]["mean_ttft_ms"]


def test_text_report_names_the_offline_run():
    res = runner.invoke(app, [a for a in ARGV if a not in ("-f", "json")] + ["--backend", "offline", "--",
                                                                             "vllm", "serve", "meta-llama/Llama-3.2-1B"])
    assert res.exit_code in (0, 1), res.output
    assert "offline (vllm bench throughput: no API server)" in " ".join(res.output.split())
