"""`sched-reader compat` through typer's CliRunner (the real app): output formats and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sched_reader.cli.app import app

DEPLOY = Path(__file__).parents[1] / "data" / "deploy"
runner = CliRunner()


def run(*args):
    return runner.invoke(app, ["compat", *args])


def test_matrix_text():
    r = run("--vllm", "0.18.0")
    assert r.exit_code == 0, r.output
    assert "vLLM 0.18.0 compatibility matrix" in r.output
    sd_row = next(line for line in r.output.splitlines() if line.startswith("│ SD "))
    # 0.18.0 doc row: | [SD](...) | ✅ | ✅ | ❌ | ✅ |
    assert [c.strip() for c in sd_row.split("│")[2:6]] == ["✅", "✅", "❌", "✅"]
    assert "APPROXIMATE" not in r.output


def test_matrix_json_and_markdown():
    r = run("--vllm", "v0.18.0", "--format", "json")
    doc = json.loads(r.output)
    assert doc["schema_version"] == 1 and doc["vllm_version"] == "0.18.0"
    cells = {(c["a"], c["b"]): c["status"] for c in doc["feature_x_feature"]}
    assert cells[("spec_decode", "chunked_prefill")] == "yes"
    assert cells[("spec_decode", "prefix_caching")] == "yes"
    assert cells[("spec_decode", "lora")] == "no"
    md = run("--vllm", "0.18.0", "--format", "markdown").output
    assert "### Feature x Feature" in md and "| Feature | CP | APC |" in md


def test_matrix_approximate_and_missing():
    r = run("--vllm", "0.31.0")
    assert r.exit_code == 0 and "APPROXIMATE" in r.output and "00712b3" in r.output
    r = run("--vllm", "0.6.1")
    assert r.exit_code == 0 and "0.6.3" in r.output


def test_latest_is_resolved_with_a_warning():
    r = run("--vllm", "latest")
    assert r.exit_code == 0 and "warning:" in r.output and "0.33.0" in r.output


def test_unknown_version_is_a_usage_error():
    r = run("--vllm", "banana")
    assert r.exit_code == 2
    assert "cannot read vLLM version" in r.output
    assert "Traceback" not in r.output


def test_no_arguments_is_a_usage_error():
    assert run().exit_code == 2


def test_bad_format():
    assert run("--vllm", "0.18.0", "--format", "xml").exit_code == 2


def test_diff_changelog():
    r = run("--diff", "0.19.1", "0.20.0")
    assert r.exit_code == 0
    assert "--gpu-memory-utilization: 0.9 -> 0.92" in r.output  # README spot check
    doc = json.loads(run("--diff", "0.17.1", "0.18.0", "-f", "json").output)
    assert "--swap-space" in doc["flags_removed"]
    assert {"flag": "--kv-cache-dtype", "added": ["float16"], "removed": []} in doc["choices_changed"]


def test_diff_summary_renames_and_gpu():
    r = run("--diff", "0.12.0", "0.13.0")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].startswith("vLLM 0.12.0 -> 0.13.0: ")
    assert " 1 renamed" in r.output.splitlines()[0]
    assert "Flags renamed (1):\n  --cuda-graph-sizes -> --cudagraph-capture-sizes (0.13.0)" in r.output
    doc = json.loads(run("--diff", "0.12.0", "0.13.0", "-f", "json").output)
    assert doc["flags_renamed"] == [{"old": "--cuda-graph-sizes", "new": "--cudagraph-capture-sizes",
                                     "release": "0.13.0"}]
    assert "--cuda-graph-sizes" not in doc["flags_removed"]
    a100 = run("--diff", "0.7.3", "0.8.0", "--gpu", "A100 SXM4 80GB")
    assert "A100 SXM4 80GB" in a100.output and "--max-num-batched-tokens: 8192 -> 2048 (0.8.0)" in a100.output
    assert run("--diff", "0.7.3", "0.8.0", "--gpu", "banana").exit_code == 2


def test_diff_collapses_matrix_rows():
    r = run("--diff", "0.8.5", "0.11.0")
    assert "feature Prompt Adapter (prompt_adapter) removed from the matrix (23 cells)" in r.output
    assert r.output.count("Prompt Adapter") == 1
    doc = json.loads(run("--diff", "0.8.5", "0.11.0", "-f", "json").output)
    assert {"key": "prompt_adapter", "label": "Prompt Adapter", "cells": 23} in doc["matrix_features_removed"]
    assert doc["summary"]["matrix_changes"] == 10


def test_diff_reports_matrix_cells():
    # 0.6.3: SD x CP ✗ ; 0.18.0: ✅
    doc = json.loads(run("--diff", "0.6.3", "0.18.0", "-f", "json").output)
    assert {"row": "spec_decode", "column": "chunked_prefill", "old": "no", "new": "yes"} in doc["matrix_changed"]


def test_flag_history():
    r = run("--flag", "--swap-space")
    assert r.exit_code == 0
    assert "0.6.0 .. 0.17.1" in r.output and "0.18.0 .. 0.33.0" in r.output and "absent" in r.output
    doc = json.loads(run("--flag", "max_num_seqs", "-f", "json").output)
    assert doc["flag"] == "--max-num-seqs"
    assert doc["spans"][0]["first"] == "0.6.0" and doc["spans"][0]["default"] == 256  # args/0.6.0.json


def test_flag_serve_default_and_unknown_flag():
    r = run("--flag", "--gpu-memory-utilization")
    assert r.exit_code == 0
    assert "0.20.0 .. " in r.output and "default 0.92 (was 0.9); `vllm serve` default 0.92 (was 0.9)" in r.output
    bad = run("--flag", "--max-num-seq")
    assert bad.exit_code == 2 and "did you mean --max-num-seqs" in bad.output
    assert "Traceback" not in bad.output
    assert run("--flag", "--no-such-flag-at-all", "-f", "json").exit_code == 2


def test_list():
    r = run("--list", "-f", "json")
    rows = {x["version"]: x for x in json.loads(r.output)["releases"]}
    assert len(rows) == 58
    assert rows["0.18.0"]["commit"] == "061980c36a7b78e5d8ea96893b79fd0b9c11a20e"
    assert rows["0.6.0"]["matrix"] == "none" and rows["0.33.0"]["matrix"] == "approximate"
    assert rows["0.6.0"]["engine"] == "V0" and rows["0.18.0"]["engine"] == "V1"


def test_check_config_json_and_exit_1():
    p = DEPLOY / "k8s" / "kubeai__llama-3.1-70b-instruct-fp8-h100.yaml"
    r = run("--vllm", "0.18.0", str(p), "-f", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    (engine,) = doc["engines"]
    assert set(engine) >= {"name", "file", "line", "vllm_version", "findings"}
    assert engine["vllm_version"] == "0.18.0"
    keys = {(f["rule"], f["line"], f["key"]) for f in engine["findings"]}
    assert ("SR101", 19, "--disable-log-requests") in keys
    assert set(engine["findings"][0]) == {"rule", "severity", "message", "file", "line", "key", "fix"}


def test_check_clean_config_exit_0():
    r = run("--vllm", "0.16.0", str(DEPLOY / "vllm-config" / "recipes__Llama3.3_Hopper.yaml"))
    assert r.exit_code == 0, r.output


def test_command_line_after_double_dash():
    r = run("--vllm", "0.18.0", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-num-seqs", "abc")
    assert r.exit_code == 1, r.output
    assert "SR103" in r.output
    ok = run("--vllm", "0.18.0", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--port", "8000",
             "--served-model-name", "llama")
    assert ok.exit_code == 0, ok.output


def test_unreadable_file_is_exit_2(tmp_path):
    r = run("--vllm", "0.18.0", str(tmp_path / "missing.yaml"))
    assert r.exit_code == 2 and "Traceback" not in r.output


@pytest.mark.parametrize("args", [["--list", "--flag", "x"], ["--list", "deploy.yaml"]])
def test_conflicting_modes(args):
    assert run(*args).exit_code == 2


def test_help():
    r = run("--help")
    assert r.exit_code == 0 and "SR105" in r.output and "--diff" in r.output


def test_default_changes_between_image_tag_and_target():
    # image tag v0.7.1 (V0: prefix caching off by default) checked against 0.8.5 (V1: on by default)
    p = DEPLOY / "k8s" / "aibrix__quickstart_model_deployment.yaml"
    doc = json.loads(run("--vllm", "0.8.5", str(p), "-f", "json").output)
    sr107 = {f["message"].split()[0]: f for f in doc["engines"][0]["findings"] if f["rule"] == "SR107"}
    assert "--enable-prefix-caching" in sr107
    assert "from False in vLLM 0.7.1" in sr107["--enable-prefix-caching"]["message"]
    assert "to True in 0.8.5" in sr107["--enable-prefix-caching"]["message"]
    assert sr107["--enable-prefix-caching"]["line"] == 39  # the image: line
    same = json.loads(run(str(p), "-f", "json").output)  # no --vllm: the image tag's release, nothing changed
    assert not [f for f in same["engines"][0]["findings"] if f["rule"] == "SR107"]
