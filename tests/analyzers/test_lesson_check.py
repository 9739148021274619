"""`sched-reader lesson`: each claim's figure and verdict pinned to a hand calculation, plus the CLI."""

from __future__ import annotations

import json
import re

import pytest
import typer
from typer.testing import CliRunner

from sched_reader.analyzers.lesson_check import (
    CHECKS, VERDICTS, Outcome, Variant, check_lesson, decide, group_releases, holds, load_claims,
)
from sched_reader.cli import cmd_lesson

GIB = 2**30
H100_TOTAL_GIB = 79.19          # what vLLM reports for an H100 SXM5 80GB
H100_BF16 = 989.5e12            # dense BF16 FLOP/s (datasheet sparse figure halved)
H100_FP8 = 1979e12
H100_BW = 3.35e12               # HBM3 B/s
LLAMA70_LINEAR_PARAMS = 70.55e9 - 2 * 1.05e9   # all params minus embedding and lm_head
FP8_WEIGHTS_MIN = 67 * GIB      # FP8 70B: ~68 GiB of weights (bf16 embeddings + lm_head included)
DECODE_BYTES = LLAMA70_LINEAR_PARAMS * 1 + 1.05e9 * 2   # FP8 linears + BF16 lm_head read per decode step


@pytest.fixture(scope="module")
def report():
    return check_lesson(gpu="H100", vllm="0.19.0")


@pytest.fixture(scope="module")
def by_id(report):
    return {c.id: c for c in report.claims}


def _variant(c, prefix):
    return next(v for v in c.outcome.variants if v.label.startswith(prefix))


# ------------------------------------------------------------------------------ the claims file


def test_claims_file_holds_only_the_lessons_numbers():
    data = load_claims()
    ids = [c["id"] for c in data["claims"]]
    assert len(ids) == len(set(ids)) >= 12
    for c in data["claims"]:
        assert re.search(r"[\u4e00-\u9fff]", c["quote_zh"]), c["id"]     # the lesson's own (Chinese) words
        assert c["gloss_en"] and c["section"] and c["states"]["text"] and c["states"]["unit"]
        assert c["compute"]["kind"] in CHECKS
        assert not {"computed", "verdict", "ratio"} & set(c), "answers belong to the checker, not the claims file"


# ------------------------------------------------------------------------------ each claim vs a hand calculation


def test_kv_per_sequence(by_id):
    c = by_id["kv-per-sequence"]
    hand = 80 * 2 * 8 * 128 * 2 * 8192          # layers x K,V x kv heads x head_dim x BF16 bytes x tokens
    assert hand == 2_684_354_560                # 2.68 GB = 2.5 GiB, not 1.25 GB
    assert c.outcome.value == hand
    assert c.verdict == "wrong"
    assert c.outcome.ratio == pytest.approx(hand / 1.25e9)
    assert "2.68 GB (2.50 GiB)" in c.computed_text
    assert any("21.47 GB" in n for n in c.outcome.notes)      # num_heads=64 read literally


def test_contiguous_waste_82(by_id):
    c = by_id["contiguous-waste-82"]
    assert c.outcome.value == pytest.approx(1 - 1500 / 8192, abs=0.01)   # 81.7%
    assert c.verdict == "holds"


def test_classic_waste_band_depends_on_reservation(by_id):
    c = by_id["classic-waste-60-80"]
    assert _variant(c, "reserve 4,096").value == pytest.approx(1 - 1474 / 4096, abs=0.01)       # ~64%: in band
    assert _variant(c, "reserve 131,072").value == pytest.approx(1 - 1474 / 131072, abs=0.002)  # ~98.9%
    assert c.verdict == "misleading"


def test_paged_waste_under_4pct(by_id):
    c = by_id["paged-waste-under-4"]
    # half a 16-token block per ~1,500-token sequence: 7.5 / 1474 = 0.51%
    assert c.outcome.value == pytest.approx(7.5 / 1474, rel=0.1)
    assert c.outcome.value <= 15 / 1474
    sim = c.outcome.variants[0]
    assert 0 < sim.value < 0.04 and sim.holds
    assert c.verdict == "holds"


def test_block_size(by_id):
    c = by_id["block-size-16"]
    assert c.outcome.value == 16 and c.verdict == "holds"


def test_gmu_default_depends_on_release(by_id):
    c = by_id["gmu-default"]
    assert c.outcome.value == 0.9
    assert c.verdict == "depends-on-release"
    later = _variant(c, "vLLM 0.20.0")
    assert later.value == 0.92 and later.holds is False
    newer = check_lesson(gpu="H100", vllm="0.20.0", only=["gmu-default"]).claims[0]
    assert newer.outcome.value == 0.92 and newer.verdict == "depends-on-release"


def test_gmu_meaning(by_id):
    c = by_id["gmu-meaning"]
    kv = c.outcome.value
    assert 0 < kv <= 0.9 * H100_TOTAL_GIB * GIB - FP8_WEIGHTS_MIN       # <= 71.27 - 67 GiB
    assert c.outcome.inputs["lesson_reading_kv_gib"] * GIB > 2 * kv
    assert c.verdict == "misleading"


def test_chunk_512_by_release_and_entry_point(by_id):
    c = by_id["chunk-512"]
    assert c.outcome.value == 8192                       # V1 `vllm serve` on H100
    assert c.verdict == "depends-on-release"
    assert _variant(c, "vLLM 0.6.0").value == 512 and _variant(c, "vLLM 0.6.0").holds
    assert any("16384" in n for n in c.outcome.notes)    # offline LLM class
    a100 = check_lesson(gpu="A100-80GB", vllm="0.19.0", only=["chunk-512"]).claims[0]
    assert a100.outcome.value == 2048


def test_prefill_32k(by_id):
    c = by_id["prefill-32k-800ms"]
    T = 32768
    assert 2 * 70.55e9 * T / H100_BF16 >= 4.6             # 2 x params x tokens at 989.5 TFLOPS: 4.67 s
    attn = 80 * 2 * 64 * (128 + 128) * T * T / 2          # causal score + value FLOPs: 1.41e15
    assert c.outcome.inputs["attention_flops"] == pytest.approx(attn, rel=1e-6)
    hand = (2 * LLAMA70_LINEAR_PARAMS * T + attn) / H100_BF16   # linears (embedding is a gather) + attention
    assert c.outcome.value == pytest.approx(hand, rel=0.01)      # 5.96 s >= 4.6 s
    assert c.outcome.value >= 4.6
    fp8 = _variant(c, "lower bound, FP8")
    assert fp8.value >= 2 * LLAMA70_LINEAR_PARAMS * T / H100_FP8      # still > 2.3 s
    assert c.verdict == "wrong" and c.outcome.ratio > 5
    assert any("BF16 does not even load" in n for n in c.outcome.notes)
    assert any("cannot be admitted" in n for n in c.outcome.notes)


def test_throughput_all_on_128(by_id):
    c = by_id["throughput-all-on-128"]
    per_seq = 1024 * 327_680                              # one 1k-token sequence: 0.3125 GiB
    max_seqs = (0.92 * H100_TOTAL_GIB * GIB - FP8_WEIGHTS_MIN) // per_seq    # <= 18 even at gmu 0.92
    step = DECODE_BYTES / H100_BW                         # >= 21 ms per decode step
    assert max_seqs <= 18
    assert c.outcome.value <= max_seqs / step
    assert c.outcome.inputs["running_requests"] < 128
    for v in c.outcome.variants:
        if "TWO GPUs" not in v.label:              # one GPU: memory-bound far below the claim
            assert v.value < 2200 * 0.9 and v.holds is False
    two = _variant(c, "TWO GPUs")                  # TP 2 frees ~34 GiB of KV per GPU: all 128 run
    assert two.value > 2400 and "per GPU" in two.label
    assert c.verdict == "wrong"


def test_vllm_default_1800(by_id):
    c = by_id["vllm-default-1800"]
    assert c.outcome.value < 1800 / 2
    assert c.outcome.inputs["enable_chunked_prefill"] is False
    assert any("0.6.0-0.7.3" in n and "premise" in n for n in c.outcome.notes)   # V0 only
    assert c.verdict == "wrong"


def test_naive_600(by_id):
    c = by_id["naive-600"]
    bound = H100_BW / DECODE_BYTES                         # every weight read once per token: 47.5 tok/s
    assert c.outcome.value == pytest.approx(bound, rel=0.005)
    assert all(v.value <= bound for v in c.outcome.variants)
    assert c.verdict == "wrong" and c.outcome.ratio < 0.1


def test_speedup_and_chunking_throughput(by_id):
    sp = by_id["speedup-vs-naive"]
    assert 1 < sp.outcome.value <= 4448 / 512 + 1          # bounded by the requests the KV cache holds
    assert sp.verdict in ("wrong", "misleading")
    eq = by_id["all-on-vs-default-25pct"]
    assert eq.outcome.value == pytest.approx(1.0, abs=0.05)
    assert eq.verdict == "wrong"


def test_p99_itl_and_ttft_tail(by_id):
    c = by_id["p99-itl-50-to-15"]
    inp = c.outcome.inputs
    stall = 2 * LLAMA70_LINEAR_PARAMS * 8192 / (2 * H100_FP8)   # one 8192-token prefill step, TP=2, FP8 peak
    assert inp["p99_itl_ms_without"] >= stall * 1e3              # >= 144 ms, far above 50 ms
    assert inp["p99_itl_ms_with"] < inp["p99_itl_ms_without"]
    assert c.verdict == "misleading"
    t = by_id["chunked-ttft-tail"]
    assert t.outcome.inputs["p99_ttft_ms_with"] > t.outcome.inputs["p99_ttft_ms_without"]
    assert t.verdict == "wrong"


def test_every_claim_has_a_verdict_formula_and_inputs(report):
    assert len(report.claims) == 16
    for c in report.claims:
        assert c.verdict in VERDICTS and c.verdict != "not-computable"
        assert c.outcome.formula and c.outcome.inputs and c.why


def test_too_small_gpu_is_reported_not_crashed():
    r = check_lesson(gpu="L4", vllm="0.19.0", only=["gmu-meaning", "throughput-all-on-128", "kv-per-sequence"])
    v = {c.id: c for c in r.claims}
    assert v["gmu-meaning"].verdict == "not-computable"
    assert v["throughput-all-on-128"].outcome.value == 0.0
    assert v["kv-per-sequence"].outcome.value == 2_684_354_560


# ------------------------------------------------------------------------------ verdict rules


def test_decide_rules():
    st = {"value": 100.0}
    assert decide(st, 0.1, Outcome(105.0, "x", "f", {}))[0] == "holds"
    assert decide(st, 0.1, Outcome(300.0, "x", "f", {}))[0] == "wrong"
    mixed = Outcome(105.0, "x", "f", {}, variants=[Variant("other", 300.0, "x", False)])
    assert decide(st, 0.1, mixed)[0] == "misleading"
    rel = Outcome(100.0, "x", "f", {}, variants=[Variant("vLLM 0.6.0", 100.0, "x", True, "release"),
                                                  Variant("vLLM 0.8.0", 8.0, "x", False, "release")])
    assert decide(st, 0.0, rel)[0] == "depends-on-release"
    assert holds({"low": 3, "high": 4}, 4.3, 0.1) and not holds({"low": 3, "high": 4}, 4.5, 0.1)
    assert holds({"max": 0.04}, 0.039, 0.0) and not holds({"max": 0.04}, 0.041, 0.0)
    assert group_releases([("a", 1), ("b", 1), ("c", 2)]) == [("a", "b", 1), ("c", "c", 2)]


# ------------------------------------------------------------------------------ CLI


@pytest.fixture(scope="module")
def cli():
    app = typer.Typer(add_completion=False)

    @app.callback()
    def _root() -> None:
        """test app"""

    cmd_lesson.register(app)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["lesson", *args])


def test_cli_text_table(cli):
    r = cli("--vllm", "0.19.0")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("claim"))
    assert re.match(r"claim\s+lesson says\s+sched-reader computes\s+verdict$", lines[head])
    rows = lines[head + 2: head + 2 + 16]
    assert rows[0].startswith("KV of one 8k sequence, BF16") and "2.68 GB" in rows[0] and "wrong (x2.15)" in rows[0]
    assert any("depends-on-release" in ln for ln in rows)
    assert re.match(r"16 claims: \d+ holds, \d+ wrong, \d+ misleading, \d+ depends-on-release", lines[head + 18])
    assert not any(ln != ln.rstrip() for ln in lines)
    assert "vLLM 0.19.0" in r.output and "H100 SXM5 80GB" in r.output


def test_cli_explain(cli):
    r = cli("--vllm", "0.19.0", "--explain", "--claim", "kv-per-sequence", "--claim", "chunk-512")
    assert r.exit_code == 0, r.output
    assert "[kv-per-sequence]" in r.output and "[chunk-512]" in r.output
    assert "formula    layers x 2 (K and V)" in r.output
    assert "对 8192 token 的 Llama 3.3 70B" in r.output
    assert "release    vLLM 0.6.0-0.6.4: 512 tokens (holds)" in r.output


def test_cli_json_is_deterministic(cli):
    a = cli("--vllm", "0.19.0", "--format", "json")
    b = cli("--vllm", "0.19.0", "-f", "json")
    assert a.exit_code == 0 and a.output == b.output
    d = json.loads(a.output)
    assert d["schema_version"] == 1 and len(d["claims"]) == 16
    first = d["claims"][0]
    assert {"id", "quote_zh", "gloss_en", "lesson", "computed", "ratio", "verdict", "why", "formula", "inputs",
            "variants", "notes"} <= set(first)
    assert first["computed"]["value"] == 2_684_354_560 and first["lesson"]["value"] == 1.25e9
    assert sum(d["summary"].values()) == 16


def test_cli_bad_input(cli):
    assert cli("--claim", "no-such-claim").exit_code == 2
    assert cli("--gpu", "no-such-gpu").exit_code == 2
