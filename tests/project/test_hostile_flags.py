"""Flag values, model configs and deploy fields over a bound (issue 16): one line naming the flag and the bound.

Each case failed before its fix (internal error, a Python exception name, a hang or memory exhaustion)."""

from __future__ import annotations

import time

import pytest

from hostile import M, SERVE, bounded, one_line_error


BIG = "9" * 5000


DEEP_JSON = "[" * 20000 + "]" * 20000


COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.0
    command: --model meta-llama/Llama-3.1-8B-Instruct
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: {count}
              capabilities: [gpu]
"""


def test_version_of_5000_digits(run_cli):
    code, _, err = run_cli("config", "--vllm", "0." + BIG, *SERVE)
    line = one_line_error(code, err, "cannot read vLLM version", "5,002 characters")
    assert len(line) < 400


def test_gpu_limit_of_5000_digits_in_kubernetes(run_cli, tmp_path):
    p = tmp_path / "d.yaml"
    p.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.10.0\n"
        f"          args: [--model, {M}]\n"
        f"          resources: {{limits: {{nvidia.com/gpu: {BIG}}}}}\n")
    code, out, err = run_cli("config", str(p))
    assert code in (0, 1, 2) and "internal error" not in err and "ValueError" not in err, err


def test_integer_flag_of_25_digits_is_refused_with_a_short_message(run_cli):
    code, _, err = run_cli("config", *SERVE, "--max-num-seqs", "9" * 25)
    one_line_error(code, err, "--max-num-seqs", "19 digits")


@pytest.mark.parametrize("flag", ["--eplb-config", "--speculative-config"])
def test_deep_json_flag(run_cli, flag):
    one_line_error(*run_cli("config", *SERVE, flag, DEEP_JSON)[::2], flag, "nested more than")


def test_deep_model_config(run_cli, tmp_path):
    p = tmp_path / "config.json"
    p.write_text(DEEP_JSON)
    one_line_error(*run_cli("diagnose", "--model-config", str(p), "--", "vllm", "serve", "x/y")[::2],
                   "--model-config", "nested more than")


def test_pipeline_parallel_size_of_20_digits(run_cli):
    with bounded(20):
        code, _, err = run_cli("diagnose", *SERVE, "--pipeline-parallel-size", "99999999999999999999")
    one_line_error(code, err, "<command line>", "--pipeline-parallel-size")


def test_pipeline_parallel_size_over_the_layer_count(run_cli):
    # Llama-3.1-8B has 32 layers (config.json num_hidden_layers): 40 stages cannot each hold one
    code, _, err = run_cli("diagnose", *SERVE, "--pipeline-parallel-size", "40")
    one_line_error(code, err, "--pipeline-parallel-size", "32 layers")


def test_pipeline_parallel_size_50000_is_refused_fast(run_cli):
    t = time.perf_counter()
    with bounded(10):
        code, _, err = run_cli("diagnose", *SERVE, "--pipeline-parallel-size", "50000")
    one_line_error(code, err, "--pipeline-parallel-size")
    assert time.perf_counter() - t < 10


def test_compose_gpu_count_of_int64_max(run_cli, tmp_path):
    p = tmp_path / "docker-compose.yml"
    p.write_text(COMPOSE.format(count=2**63 - 1))
    with bounded(10):
        code, out, err = run_cli("config", str(p))
    # a broken compose service is reported as unresolved (readers: never hides the other services)
    assert code in (0, 1) and "internal error" not in out + err, out + err
    assert f"{p}:10: count:" in " ".join(out.split()) and "4,096" in out, out


def test_config_flag_with_300_character_name(run_cli):
    code, out, err = run_cli("config", *SERVE, "--config", "a" * 300)
    assert code in (0, 1) and "internal error" not in err and "OSError" not in err, err
    assert "config file not found" in out


def test_compose_capabilities_not_a_list(run_cli, tmp_path):
    # found by benchmarks/fuzz.py (seed 2): `capabilities: .nan` was "cannot read this file: TypeError"
    p = tmp_path / "docker-compose.yml"
    p.write_text(COMPOSE.format(count=1).replace("capabilities: [gpu]", "capabilities: .nan"))
    code, out, err = run_cli("config", str(p))
    assert code in (0, 1) and "internal error" not in out + err and "TypeError" not in out + err, out + err
    assert f"{p}:11: capabilities must be a list" in " ".join(out.split()), out


def test_a_100k_character_model_name_is_refused_fast(run_cli):
    # found by benchmarks/fuzz.py (seed 1): the nearest-name search took 44 s of CPU on a 100k name
    with bounded(10):
        code, _, err = run_cli("diagnose", "--", "vllm", "serve", "a" * 100_000)
    line = one_line_error(code, err, "100,000 characters", "512-character limit")
    assert len(line) < 400


def test_helm_gpu_request_of_minus_infinity(run_cli, tmp_path):
    # found by benchmarks/fuzz.py (seed 11): `requestGPU: -.inf` was "internal error: OverflowError"
    from pathlib import Path

    src = Path(__file__).parents[1] / "data" / "deploy" / "helm-values" / "production-stack__values-02-basic-config.yaml"
    text = src.read_text()
    assert "requestGPU: 1" in text
    p = tmp_path / "values.yaml"
    p.write_text(text.replace("requestGPU: 1", "requestGPU: -.inf", 1))
    code, out, err = run_cli("config", str(p))
    # a GPU count that is not a whole number is a note (TP x PP x DP is used), as for an unresolved ${GPUS}
    assert code == 0 and "GPU count -inf" in out and "not a whole number" in out, out + err
    assert "internal error" not in out + err and "OverflowError" not in out + err


def test_sched_reader_option_typed_after_double_dash(run_cli):
    # vLLM's argparse takes any unambiguous prefix: `--gpu H100` after `--` is --gpu-memory-utilization H100,
    # which vLLM rejects; the error says so and where sched-reader's own --gpu belongs
    code, _, err = run_cli("diagnose", *SERVE, "--gpu", "H100")
    one_line_error(code, err, "--gpu-memory-utilization", "'H100'")
    assert "vLLM reads --gpu as --gpu-memory-utilization" in err and "before `--`" in err
    # the full flag written out gets no such hint
    code, _, err = run_cli("diagnose", *SERVE, "--gpu-memory-utilization", "H100")
    assert code == 2 and "prefix" not in err
