"""The `config` and `diagnose` commands end to end: envelope, exit codes, bad input, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DEPLOY = Path(__file__).parents[1] / "data" / "deploy"
EXAMPLES = Path(__file__).parents[2] / "examples"
KUBEAI_70B = str(DEPLOY / "k8s" / "kubeai__llama-3.1-70b-instruct-fp8-h100.yaml")


def test_config_json_envelope_names_file_line_and_origins(run_cli):
    code, out, err = run_cli("config", "--format", "json", KUBEAI_70B, "--vllm", "0.19.0")
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    [eng] = doc["engines"]
    assert eng["file"] == KUBEAI_70B
    # read by hand from the fixture: args block starts at line 13 (--max-model-len=65536), TP 2 at line 17
    assert eng["args"]["max_model_len"]["value"] == 65536
    assert eng["args"]["max_model_len"]["origin"]["line"] == 13
    assert eng["args"]["tensor_parallel_size"]["value"] == 2
    assert eng["hardware"]["count"] == 2 and eng["hardware"]["gpu"] == "nvidia-h100-sxm5-80gb"
    assert eng["config"]["max_model_len"] == 65536
    assert eng["vllm_version"] == "0.19.0"


def test_config_exit_1_when_an_engine_has_findings(run_cli):
    # --disable-log-requests is gone from vLLM's argument table after 0.16.0
    code, out, _ = run_cli("config", KUBEAI_70B, "--vllm", "0.19.0")
    assert code == 1
    assert "SR101" in out and "--disable-log-requests" in out
    code, _, _ = run_cli("config", KUBEAI_70B, "--vllm", "0.16.0", "--fail-on", "error")
    assert code == 0


def test_command_line_after_double_dash(run_cli):
    code, out, err = run_cli("config", "--format", "json", "--vllm", "0.19.0", "--",
                             "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--kv-cache-dtype", "fp8")
    assert code == 0, err
    [eng] = json.loads(out)["engines"]
    assert eng["args"]["kv_cache_dtype"]["value"] == "fp8"
    assert eng["args"]["kv_cache_dtype"]["origin"]["source"] == "command-line"


def test_same_input_same_bytes(run_cli):
    first = run_cli("diagnose", "--format", "json", str(EXAMPLES / "llama3-8b-h100.yaml"))
    second = run_cli("diagnose", "--format", "json", str(EXAMPLES / "llama3-8b-h100.yaml"))
    assert first == second


def _write(tmp_path: Path, name: str, data: bytes | str) -> str:
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return str(p)


@pytest.mark.parametrize(
    "case,needle",
    [
        ("missing", "not found"),
        ("directory", "directory"),
        ("empty", "empty"),
        ("binary", "binary"),
        ("malformed", ":2"),
        ("not_mapping", "mapping"),
        ("alias_bomb", "alias"),
    ],
)
def test_bad_files_exit_2_with_one_line(run_cli, tmp_path, case, needle):
    paths = {
        "missing": str(tmp_path / "nope.yaml"),
        "directory": str(tmp_path),
        "empty": _write(tmp_path, "empty.yaml", ""),
        "binary": _write(tmp_path, "bin.yaml", b"\x00\x01\x02\xff" * 64),
        "malformed": _write(tmp_path, "bad.yaml", "model: x\n  max-num-seqs: [1, 2\n"),
        "not_mapping": _write(tmp_path, "list.yaml", "- 1\n- 2\n"),
        "alias_bomb": _write(
            tmp_path,
            "bomb.yaml",
            "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
        ),
    }
    code, out, err = run_cli("config", paths[case])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sched-reader: error:")
    assert needle in lines[0].lower()
    assert "Traceback" not in err


def test_huge_file_is_refused_without_reading_it(run_cli, tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    code, _, err = run_cli("config", str(big))
    assert code == 2 and "limit" in err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--max-num-seqs", "-4"], "--max-num-seqs"),
        (["--gpu-memory-utilization", "NaN"], "--gpu-memory-utilization"),
        (["--tensor-parallel-size", "two"], "--tensor-parallel-size"),
        (["--kv-cache-dtype", "fp7"], "must be one of"),
        (["--gpu-memory-utilization", "1.7"], "(0, 1]"),      # vLLM: "GPU memory utilization must be less than 1.0"
        (["--max-num-seqs", "0"], ">= 1"),
        (["--max-num-batched-tokens", "0"], ">= 1"),
    ],
)
def test_bad_values_exit_2_naming_the_flag(run_cli, argv, needle):
    code, _, err = run_cli("config", "--vllm", "0.19.0", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", *argv)
    assert code == 2
    assert needle in err and "<command line>" in err


def test_unknown_gpu_and_model_exit_2_with_suggestions(run_cli):
    code, _, err = run_cli("diagnose", "--gpu", "H1000", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct")
    assert code == 2 and "H100" in err
    # a name with no family word and no size cannot be matched: exit 2 with the nearest names
    code, _, err = run_cli("diagnose", "--", "vllm", "serve", "meta-llama/Lama-Instrukt")
    assert code == 2 and "Llama-3" in err
    # a misspelt fine-tune name with family, version and size is answered, the assumption named
    code, out, err = run_cli("diagnose", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instrukt")
    assert code == 0 and "assumed architecture of meta-llama/Llama-3.1-8B" in out


def test_unresolved_variable_model_is_reported_not_refused(run_cli):
    # issue 10: a valid file whose model is a run-time variable is still read; its figures are skipped (SR115)
    code, out, err = run_cli("diagnose", str(DEPLOY / "cmdline" / "InferenceMAX-fork__gptoss_fp4_h100_docker.sh"))
    assert code != 2 and "SR115" in out and "--model NAME" in out


def test_diagnose_json_contract(run_cli):
    code, out, err = run_cli("diagnose", "--format", "json", "--vllm", "0.19.0", "--gpu", "H100", "--",
                             "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192",
                             "--gpu-memory-utilization", "0.95", "--no-enable-prefix-caching")
    assert code == 0, err
    [eng] = json.loads(out)["engines"]
    for key in ("total_gib", "requested_gib", "weights_gib", "activation_peak_gib", "non_torch_gib",
                "cuda_graph_gib", "kv_cache_gib"):
        assert isinstance(eng["memory"][key], (int, float)), key
    for key in ("block_size", "num_blocks", "tokens", "bytes_per_token", "max_concurrency", "fits"):
        assert key in eng["kv_cache"], key
    # Real vLLM 0.19.0 log (llm-d-planner sweep, Llama-3.1-8B-Instruct, H100 80GB, gmu 0.95, 8192):
    # "GPU KV cache size: 476,016 tokens", "Model loading took 14.99 GiB".
    assert abs(eng["kv_cache"]["tokens"] - 476016) / 476016 < 0.02
    assert abs(eng["memory"]["weights_gib"] - 14.99) / 14.99 < 0.01
    assert eng["kv_cache"]["bytes_per_token"] == 131072  # 32 layers x 2 x 8 heads x 128 x 2 B
    for key in ("request_throughput", "output_throughput", "mean_ttft_ms", "mean_tpot_ms", "mean_itl_ms"):
        assert key in eng["performance"], key
    assert eng["bottleneck"]["bottleneck"] in ("kv_cache_blocks", "max_num_seqs", "token_budget",
                                               "workload_concurrency")


def test_diagnose_predicts_vllms_start_up_failure(run_cli):
    # Llama-3.3-70B in BF16 (~131 GiB of weights) cannot load on one 80 GB H100.
    code, out, err = run_cli("diagnose", "--format", "json", "--gpu", "H100", "--vllm", "0.19.0", "--",
                             "vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct", "--max-model-len", "8192")
    assert code == 1
    [eng] = json.loads(out)["engines"]
    assert eng["kv_cache"]["fits"] is False
    assert any(f["rule"] == "SR201" for f in eng["findings"])


def test_help_lists_commands(run_cli):
    code, out, _ = run_cli("--help")
    assert code == 0
    for cmd in ("config", "diagnose", "compat", "simulate"):
        assert cmd in out


def test_out_of_range_value_in_a_config_file_names_its_line(run_cli, tmp_path):
    cfg = tmp_path / "serve.yaml"
    cfg.write_text("model: meta-llama/Llama-3.1-8B-Instruct\ngpu-memory-utilization: 1.7\n")
    code, out, err = run_cli("diagnose", str(cfg))
    # a valid file with a value vLLM refuses: an error finding at its line (exit 1), not unreadable input (2)
    assert code == 1
    assert f"{cfg}:2" in out and "SR103" in out and "gpu-memory-utilization" in out
