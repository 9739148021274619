"""`vllm bench throughput` command lines: the offline LLM class as an engine, its bench flags as the workload.

Facts checked here, read in vLLM 0.11.0's wheel (pip download vllm==0.11.0 --no-deps):
  * vllm/benchmarks/throughput.py ``validate_args``: without --dataset-path the dataset is random and
    --input-len is required; --dataset-name defaults to sharegpt only when a path is given.
  * vllm/engine/arg_utils.py ``_set_default_args``: on GPUs with >= 70 GiB (not A100) the LLM class
    (UsageContext.LLM_CLASS) defaults to max_num_batched_tokens 16384 and max_num_seqs 1024, while
    `vllm serve` (OPENAI_API_SERVER) takes 8192 and 1024; below 70 GiB (or A100) 8192 / 256 against 2048 / 256.
"""

from __future__ import annotations

import json

from sched_reader.readers import read_command_line

BENCH = ["vllm", "bench", "throughput", "--model", "Qwen/Qwen3-8B", "--input-len", "5000", "--output-len",
         "1000", "--num-prompts", "200", "--max-model-len", "32768", "--kv-cache-dtype", "fp8", "--seed", "1"]


def test_bench_flags_become_the_workload_and_engine_flags_stay():
    [e] = read_command_line(BENCH)
    assert e.model.value == "Qwen/Qwen3-8B"
    assert [(s.flag, s.value) for s in e.settings] == [("--max-model-len", "32768"), ("--kv-cache-dtype", "fp8")]
    assert e.workload == {"endpoint": "offline", "random_input_len": 5000, "random_output_len": 1000,
                          "sharegpt_output_len": 1000, "num_prompts": 200, "dataset_name": "random"}
    assert e.usage_context == "LLM_CLASS"


def test_script_form_and_sharegpt_path():
    [e] = read_command_line(["python3", "benchmarks/benchmark_throughput.py", "--model", "M", "--dataset-path",
                             "/data/ShareGPT_V3_unfiltered_cleaned_split.json", "--output-len", "128", "--n", "2"])
    assert e.workload["dataset_name"] == "sharegpt" and e.workload["sharegpt_output_len"] == 128
    assert any("--n 2 is not modelled" in n for n in e.notes)
    [e] = read_command_line(["python", "-m", "vllm.entrypoints.cli.main", "bench", "throughput", "--model", "M",
                             "--input-len", "128"])
    assert e.workload["random_input_len"] == 128 and e.usage_context == "LLM_CLASS"


def _diagnose(run_cli, *argv: str) -> dict:
    code, out, err = run_cli("diagnose", "-f", "json", "--no-effects", "--gpu", "H100", "--vllm", "0.11.0", *argv)
    assert code in (0, 1), err
    return json.loads(out)["engines"][0]


def test_offline_run_takes_the_llm_class_defaults(run_cli):
    offline = _diagnose(run_cli, "--", *BENCH)
    served = _diagnose(run_cli, "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "32768",
                       "--kv-cache-dtype", "fp8")
    assert (offline["config"]["max_num_batched_tokens"], offline["config"]["max_num_seqs"]) == (16384, 1024)
    assert (served["config"]["max_num_batched_tokens"], served["config"]["max_num_seqs"]) == (8192, 1024)
    assert offline["workload"]["endpoint"] == "offline"
    assert offline["workload"]["num_prompts"] == 200 and offline["workload"]["random_input_len"] == 5000
    # no finding calls the bench's own flags unknown vLLM flags
    assert not [f for f in offline["findings"] if f["rule"] == "SR101"]


def test_backend_offline_on_a_serve_line_takes_the_llm_class_defaults_too(run_cli):
    d = _diagnose(run_cli, "--backend", "offline", "--", "vllm", "serve", "Qwen/Qwen3-8B")
    assert d["config"]["max_num_batched_tokens"] == 16384
    small = _diagnose(run_cli, "--backend", "offline", "--gpu", "L4", "--", "vllm", "serve", "Qwen/Qwen3-0.6B")
    assert (small["config"]["max_num_batched_tokens"], small["config"]["max_num_seqs"]) == (8192, 256)
