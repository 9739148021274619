"""SR118 against vLLM's own failures: a real start-up log and the divisibility vLLM's layers assert."""

from __future__ import annotations

import gzip
from pathlib import Path

from sched_reader.analyzers.checks.sr118_heads_not_divisible_by_tp import valid_tp_sizes

LOGS = Path(__file__).parents[1] / "data" / "logs"


def test_the_message_vllm_printed_for_qwen3_14b_at_tp5(run_cli):
    log = gzip.open(LOGS / "llmd-qwen-qwen3-14b--h100-80gb--tp5pp1dp1--8192.FAILED.log.gz", "rt").read()
    assert "AssertionError: 151936 is not divisible by 5" in log  # what vLLM 0.19.0 stopped with
    code, out, _ = run_cli("diagnose", "--vllm", "0.19.0", "--gpu", "H100", "--", "vllm", "serve", "Qwen/Qwen3-14B",
                           "--tensor-parallel-size", "5")
    assert code == 1
    assert "SR118" in out and "151936 is not divisible by 5" in " ".join(out.split())


def test_valid_sizes_by_hand():
    # Qwen2-7B: 28 query heads, 4 KV heads, 152,064-token vocabulary (a multiple of 64)
    assert valid_tp_sizes(28, 4, 152064) == [1, 2, 4]          # 7 divides 28 but 7 % 4 KV heads != 0
    # Llama-3.1-70B: 64 heads, 8 KV heads, 128,256 tokens: every power of two up to 16; 3, 5, 6, 7 split no head count
    assert valid_tp_sizes(64, 8, 128256, upto=16) == [1, 2, 4, 8, 16]
    # latent attention (DeepSeek-V3: 128 heads, one latent KV cache, 129,280 tokens = 2,020 x 64)
    assert valid_tp_sizes(128, None, 129280, upto=8) == [1, 2, 4, 8]


def test_a_failed_start_up_check_is_the_verdict(run_cli):
    """Before this, the verdict said "no flag change needed" next to the ERROR: a start-up refusal binds first."""
    import json

    code, out, _ = run_cli("diagnose", "-f", "json", "--no-effects", "--vllm", "0.19.0", "--gpu", "H100", "--",
                           "vllm", "serve", "Qwen/Qwen2-7B-Instruct", "--tensor-parallel-size", "8")
    v = json.loads(out)["engines"][0]["bottleneck"]
    assert code == 1 and v["bottleneck"] == "does_not_start"
    assert "Total number of attention heads (28)" in v["summary"] and "SR118" in v["summary"]
    code, out, _ = run_cli("diagnose", "-f", "json", "--no-effects", "--vllm", "0.19.0", "--gpu", "H100", "--",
                           "vllm", "serve", "Qwen/Qwen2-7B-Instruct", "--tensor-parallel-size", "4")
    assert json.loads(out)["engines"][0]["bottleneck"]["bottleneck"] != "does_not_start"
