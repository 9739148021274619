"""SR120: the release windows that re-parse the chat template per request, and the cost the finding quotes.

Independent figures: vLLM PR #18566's 0.9.0 1,000-prompt chat burst reached no client for 6.52 s (6.3 ms of
intake per request beyond tokenization); GPUStack's 0.11.0 chat bursts imply 12.9 ms (Qwen3-14B) and 11.0 ms
(DeepSeek-R1) per request (benchmarks/burst_decomposition.py)."""

from __future__ import annotations

import json
import re

import pytest


def _sr120(run_cli, vllm: str, model: str) -> list[dict]:
    code, out, err = run_cli("lint", "--format", "json", "--vllm", vllm, "--gpu", "H100", "--", "vllm", "serve", model)
    assert code in (0, 1), err
    return [f for f in json.loads(out)["findings"] if f["rule"] == "SR120"]


@pytest.mark.parametrize("vllm, fires", [("0.6.4", False), ("0.6.5", True), ("0.9.1", True), ("0.9.2", False),
                                         ("0.10.2", False), ("0.11.0", True), ("0.11.1", False), ("0.19.0", False)])
def test_fires_only_in_the_releases_that_reparse(run_cli, vllm, fires):
    assert bool(_sr120(run_cli, vllm, "Qwen/Qwen3-8B")) is fires


def test_quoted_cost_matches_the_measured_bursts(run_cli):
    [f011] = _sr120(run_cli, "0.11.0", "Qwen/Qwen3-8B")
    ms = float(re.search(r"about ([\d.]+) ms", f011["message"]).group(1))
    assert 11.0 * 0.85 < ms < 12.9 * 1.15
    [f090] = _sr120(run_cli, "0.9.1", "meta-llama/Llama-3.1-8B-Instruct")
    assert float(re.search(r"about ([\d.]+) ms", f090["message"]).group(1)) == pytest.approx(6.3, abs=0.1)
    assert "0.11.1" in f011["fix"] and "0.9.2" in f090["fix"]
    assert not _sr120(run_cli, "0.11.0", "openai/gpt-oss-20b")   # harmony, no Jinja template


@pytest.mark.parametrize("tag, fires", [
    # branch 0610_rc2, last commit 2025-06-05: before PR #20065 (committed 2025-06-27)
    ("rocm6.4.1_vllm_0.9.1_20250610", True),
    # branch 0715_rc1, last commit 2025-07-01: upstream main after PR #20065, although the tag names 0.9.1
    ("rocm6.4.1_vllm_0.9.1_20250715", False),
])
def test_amd_fork_builds_follow_their_code_date(run_cli, tmp_path, tag, fires):
    compose = tmp_path / "compose.yaml"
    compose.write_text(f"services:\n  vllm:\n    image: rocm/vllm:{tag}\n"
                       "    command: [\"vllm\", \"serve\", \"Qwen/Qwen3-8B\"]\n")
    code, out, err = run_cli("lint", "--format", "json", "--gpu", "MI300X", str(compose))
    assert code in (0, 1), err
    assert any(f["rule"] == "SR120" for f in json.loads(out)["findings"]) is fires
