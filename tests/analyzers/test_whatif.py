"""What-if: --set overrides and each recommendation's predicted effect (recommendations[].effect).

Each case is a deployment whose binding default is known by hand (see the comment on each); the test
asserts the recommendation's effect moves its target metric the way the recommendation says.
"""

from __future__ import annotations

import json

import pytest

from sched_reader.analyzers import whatif

LLAMA8 = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
# (case, extra diagnose args, command-line tail, expected bottleneck, {flag: target metric})
CASES = [
    # max-num-seqs 16 on an H100 with 1k/128 prompts: the cap binds; raising it raises throughput.
    ("seqs-cap", ["--num-prompts", "300"], LLAMA8 + ["--max-num-seqs", "16", "--max-model-len", "8192"],
     "max_num_seqs", {"--max-num-seqs": "output_throughput"}),
    # L4 (22 GiB), 8B bf16 weights (15 GiB), 5k-token sequences: KV holds ~6; fixes raise concurrency.
    ("kv-bound", ["--gpu", "L4", "--random-input-len", "4000", "--random-output-len", "1000", "--num-prompts", "60"],
     LLAMA8 + ["--max-model-len", "8192"], "kv_cache_blocks", {"--kv-cache-dtype": "concurrency_limit"}),
    # 8k-token prompts with a 1k token budget: 8 prefill iterations each; a bigger budget cuts TTFT.
    ("token-budget", ["--random-input-len", "8000", "--random-output-len", "16", "--num-prompts", "64",
                      "--max-concurrency", "8"],
     LLAMA8 + ["--max-model-len", "16384", "--max-num-batched-tokens", "1024"], "token_budget",
     {"--max-num-batched-tokens": "mean_ttft_ms"}),
    # 131k max-model-len on an L4: one sequence's KV does not fit, vLLM refuses to start.
    ("does-not-start", ["--gpu", "L4", "--num-prompts", "50"], LLAMA8, "does_not_start",
     {"--max-model-len": "starts"}),
]


def _diagnose(run_cli, args, tail):
    code, out, err = run_cli("diagnose", "-f", "json", *args, "--", *tail)
    assert code in (0, 1), err
    return json.loads(out)["engines"][0]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_recommendation_moves_its_target_the_predicted_way(run_cli, case):
    _, args, tail, bottleneck, expect = case
    j = _diagnose(run_cli, args, tail)
    assert j["bottleneck"]["bottleneck"] == bottleneck
    recs = j["recommendations"]
    assert recs, "a binding default comes with at least one recommendation that helps"
    flags = {r["flag"] for r in recs}
    for flag, target in expect.items():
        assert flag in flags
    for r in recs:
        eff = r["effect"]
        assert eff["improves"] is True
        t = eff["target"]
        if r["flag"] in expect:
            assert t == expect[r["flag"]]
        b, a = eff["before"][t], eff["after"][t]
        if t == "starts":
            assert b is False and a is True
        elif whatif.HIGHER_IS_BETTER[t]:
            assert a >= b * 1.01
        else:
            assert a <= b * 0.99


def test_raising_the_seqs_cap_to_the_suggested_value_gives_the_effect_diagnose_printed(run_cli):
    """The effect is the same diagnosis run with the flag set: --set reproduces it."""
    _, args, tail, _, _ = CASES[0]
    j = _diagnose(run_cli, args, tail)
    rec = next(r for r in j["recommendations"] if r["flag"] == "--max-num-seqs")
    j2 = _diagnose(run_cli, args + ["--set", f"max-num-seqs={rec['suggested']}"], tail)
    assert j2["what_if"]["after"]["output_throughput"] == pytest.approx(rec["effect"]["after"]["output_throughput"])
    assert j2["what_if"]["before"]["output_throughput"] == pytest.approx(rec["effect"]["before"]["output_throughput"])


def test_set_fp8_kv_doubles_kv_tokens(run_cli):
    """fp8 KV: 1 byte instead of 2 per element, so the same memory holds twice the tokens (within a block)."""
    j = _diagnose(run_cli, ["--num-prompts", "100", "--set", "kv-cache-dtype=fp8"], LLAMA8 + ["--max-model-len", "8192"])
    w = j["what_if"]
    assert w["set"] == ["--kv-cache-dtype=fp8"]
    assert w["after"]["kv_tokens"] == pytest.approx(2 * w["before"]["kv_tokens"], rel=0.002)
    assert j["config"]["kv_cache_dtype"] == "fp8"
    assert j["args"]["kv_cache_dtype"]["origin"]["source"] == "cli-option"


def test_set_text_output(run_cli):
    code, out, _ = run_cli("diagnose", "--num-prompts", "100", "--set", "max-num-batched-tokens=2048", "--",
                           *LLAMA8, "--max-model-len", "8192")
    assert code in (0, 1)
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("what-if"))
    assert "--max-num-batched-tokens=2048" in line


def test_recommendation_that_does_not_help_is_not_printed():
    """A recommendation whose effect leaves its target flat is dropped (and the finding's fix follows)."""
    from sched_reader.analyzers.bottleneck import Recommendation

    before = {"output_throughput": 1000.0, "concurrency_limit": 10}
    flat = whatif.effect(before, {"output_throughput": 1004.0, "concurrency_limit": 10}, "output_throughput")
    assert flat["improves"] is False  # +0.4% < 1%
    worse = whatif.effect({"mean_ttft_ms": 100.0}, {"mean_ttft_ms": 120.0}, "mean_ttft_ms")
    assert worse["improves"] is False
    assert whatif.target_of("token_budget", Recommendation(flag="--max-num-batched-tokens", current="1024",
                                                           suggested="8192", why="")) == "mean_ttft_ms"
    assert whatif.target_of("x", Recommendation(flag="--max-num-batched-tokens", current="8192",
                                                suggested="4096", why="")) == "p99_itl_ms"


@pytest.mark.parametrize("bad", ["max-num-seqs", "=3", "no-such-flag=1"])
def test_bad_set_exits_2(run_cli, bad):
    code, out, err = run_cli("diagnose", "--set", bad, "--", *LLAMA8)
    assert code == 2 and out == ""
    assert "--set" in err


def test_parse_sets_booleans():
    assert whatif.parse_sets(["enable-chunked-prefill=false", "enforce_eager=true", "max-num-seqs=8"]) == [
        ("--no-enable-chunked-prefill", None), ("--enforce-eager", None), ("--max-num-seqs", "8")]


def test_no_effects_keeps_the_verdicts_recommendations_unevaluated(run_cli):
    _, args, tail, _, _ = CASES[1]
    code, out, err = run_cli("diagnose", "-f", "json", "--no-effects", *args, "--", *tail)
    assert code in (0, 1), err
    recs = json.loads(out)["engines"][0]["recommendations"]
    assert recs and all(r["effect"] is None for r in recs)
    assert {"--kv-cache-dtype", "--tensor-parallel-size"} <= {r["flag"] for r in recs}
