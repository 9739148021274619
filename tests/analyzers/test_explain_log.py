"""explain-log on real vLLM start-up logs (tests/data/logs/, source URL per file in SOURCES).

Expected figures are the numbers printed in each log, copied by hand into the table below (and, for
the llm-d-planner logs, cross-checked against the independent transcription in tests/data/kv_logs.yaml).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from sched_reader.analyzers.explain_log import explain
from sched_reader.readers.vllm_log import parse_log, read_log_text

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
KV_ROWS = yaml.safe_load((Path(__file__).resolve().parents[1] / "data" / "kv_logs.yaml").read_text())

# file -> what the log itself prints (model, TP, PP, release, GiB per GPU, KV tokens, blocks, concurrency)
EXPECTED: dict[str, dict] = {
    "llmd-codellama-codellama-7b-h--h100-80gb--tp1pp1dp1--8192.log.gz": dict(
        model="codellama/CodeLlama-7b-hf", tp=1, pp=1, release="0.19.0", weights=12.56, kv_cache=61.66,
        kv_tokens=126256, blocks=7891, conc=15.41),
    "llmd-deepseek-ai-deepseek-v2---h100-80gb--tp1pp1dp1--8192.log.gz": dict(
        model="deepseek-ai/DeepSeek-V2-Lite-Chat", tp=1, pp=1, release="0.19.0", weights=29.43, kv_cache=43.61,
        kv_tokens=1505552, blocks=94097, conc=183.78, activation=1.93, non_torch=0.26),
    "llmd-fp8dyn-llama-3-3-70b--h100-80gb--tp4pp1dp1--8192.log.gz": dict(
        model="RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", tp=4, pp=1, release="0.19.0", weights=16.96,
        kv_cache=54.09, kv_tokens=708992, blocks=44312, conc=86.55, non_torch=2.21),
    "llmd-google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192.log.gz": dict(
        model="google/gemma-2-9b-it", tp=1, pp=1, release="0.19.0", weights=17.22, kv_cache=54.12,
        kv_tokens=168880, blocks=21110, conc=20.6),
    "llmd-google-gemma-3-12b-it--h100-80gb--tp1pp1dp1--8192.log.gz": dict(
        model="google/gemma-3-12b-it", tp=1, pp=1, release="0.19.0", weights=23.31, kv_cache=47.72,
        kv_tokens=130304, blocks=48867, conc=15.88),
    "llmd-meta-llama---h100-80gb--tp1pp1dp1--8192-dtbf16-kvfp8.log.gz": dict(
        model="meta-llama/Llama-3.1-8B-Instruct", tp=1, pp=1, release="0.19.0", weights=14.99, kv_cache=58.11,
        kv_tokens=952032, blocks=59502, conc=116.21),
    "llmd-meta-llama-llama-3--h100-80gb--tp1pp1dp1--8192-dtf32.log.gz": dict(
        model="meta-llama/Llama-3.1-8B-Instruct", tp=1, pp=1, release="0.19.0", weights=29.98, kv_cache=42.8,
        kv_tokens=175296, blocks=10956, conc=21.4),
    "llmd-meta-llama-llama-3-1-8b---h100-80gb--tp1pp2dp1--8192.log.gz": dict(
        model="meta-llama/Llama-3.1-8B-Instruct", tp=1, pp=2, release="0.19.0", weights=7.51, kv_cache=66.54,
        kv_tokens=1075312, blocks=67207, conc=131.26),
    "llmd-meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192.log.gz": dict(
        model="meta-llama/Llama-3.1-8B-Instruct", tp=2, pp=1, release="0.19.0", weights=7.51, kv_cache=63.76,
        kv_tokens=1044688, blocks=65293, conc=127.53, non_torch=2.07),
    "llmd-meta-llama-llama-4-scout--h100-80gb--tp4pp1dp1--8192.log.gz": dict(
        model="meta-llama/Llama-4-Scout-17B-16E-Instruct", tp=4, pp=1, release="0.19.0", weights=53.12,
        kv_cache=16.75, kv_tokens=365968, blocks=91495, conc=44.68),
    "llmd-microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log.gz": dict(
        model="microsoft/phi-4", tp=1, pp=1, release="0.19.0", weights=27.39, kv_cache=46.08, kv_tokens=241568,
        blocks=15098, conc=29.49),
    "llmd-mistralai-mixtral-8x7b-i--h100-80gb--tp2pp1dp1--8192.log.gz": dict(
        model="mistralai/Mixtral-8x7B-Instruct-v0.1", tp=2, pp=1, release="0.19.0", weights=43.51,
        kv_cache=28.44, kv_tokens=465936, blocks=29121, conc=56.88),
    "llmd-moonshotai-kimi-vl-a3b-i--h100-80gb--tp1pp1dp1--8192.log.gz": dict(
        model="moonshotai/Kimi-VL-A3B-Instruct", tp=1, pp=1, release="0.19.0", weights=30.74, kv_cache=41.32,
        kv_tokens=1426368, blocks=89148, conc=174.12),
    "llmd-openai-gpt-oss-20b--h100-80gb--tp2pp1dp1--8192.log.gz": dict(
        model="openai/gpt-oss-20b", tp=2, pp=1, release="0.19.0", weights=7.01, kv_cache=59.32,
        kv_tokens=2591776, blocks=323972, conc=316.07),
    "llmd-qwen-qwen1-5-moe-a2-7b--h100-80gb--tp1pp1dp1--8192.log.gz": dict(
        model="Qwen/Qwen1.5-MoE-A2.7B", tp=1, pp=1, release="0.19.0", weights=26.67, kv_cache=45.83,
        kv_tokens=250304, blocks=15644, conc=30.55),
    "llmd-qwen-qwen2-5-7b-instruc--h100-80gb--tp1pp1dp1--32768.log.gz": dict(
        model="Qwen/Qwen2.5-7B-Instruct", tp=1, pp=1, release="0.19.0", weights=14.25, kv_cache=58.53,
        kv_tokens=1096000, blocks=68500, conc=33.45),
    "llmd-qwen-qwen3-30b-a3b--h100-80gb--tp1pp1dp1--8192.log.gz": dict(
        model="Qwen/Qwen3-30B-A3B", tp=1, pp=1, release="0.19.0", weights=56.88, kv_cache=15.41,
        kv_tokens=168288, blocks=10518, conc=20.54),
    "llmd-w4a16-redhatai-lla--h100-80gb--tp1pp1dp1--8192-dtf16.log.gz": dict(
        model="RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", tp=1, pp=1, release="0.19.0", weights=5.38,
        kv_cache=67.71, kv_tokens=554704, blocks=34669, conc=67.71),
    # failed start-ups: the root cause vLLM printed
    "llmd-codellama-codellama-34b---h100-80gb--tp2pp1dp1--8192.FAILED.log.gz": dict(
        model="codellama/CodeLlama-34b-hf", tp=2, pp=1, release="0.19.0",
        failure="Free memory on device cuda:1 (60.87/79.19 GiB) on startup is less than desired"),
    "llmd-meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp2--8192.FAILED.log.gz": dict(
        model="meta-llama/Llama-3.1-8B-Instruct", tp=1, pp=1, release="0.19.0", weights=14.99,
        failure="DP adjusted local rank 1 is out of bounds"),
    "llmd-microsoft-phi-2--h100-80gb--tp1pp1dp1--8192.FAILED.log.gz": dict(
        model="microsoft/phi-2", release="0.19.0",
        failure="User-specified max_model_len (8192) is greater than the derived max_model_len"),
    "llmd-qwen-qwen3-14b--h100-80gb--tp5pp1dp1--8192.FAILED.log.gz": dict(
        model="Qwen/Qwen3-14B", tp=5, pp=1, release="0.19.0", failure="151936 is not divisible by 5",
        custom_ar=False),
    # excerpts pasted in issues / pull requests
    "issue-vllm-pr10511-llama3-8b-h100-table.log": dict(
        weights=14.96, kv_cache=53.29, activation=1.26, non_torch=1.79, total=79.22, gmu=0.90),
    "issue-vllm-11550-v0-24gb-truncated.log": dict(weights=7.9692, total=23.55, gmu=0.90),
    "issue-vllm-pr14447-3090-moe-wna16-tp.log": dict(
        weights=21.21, kv_cache=1.57, activation=0.37, non_torch=0.20, total=23.58, gmu=0.99),
    "issue-vllm-pr12126-llama32-11b-vision-h100.log": dict(
        weights=19.86, kv_cache=14.65, activation=36.63, non_torch=0.16, blocks=6001, total=79.22),
    "issue-vllm-pr17122-llama31-8b-l40s.log": dict(weights=14.9889, kv_tokens=158656, conc=4.84),
    "issue-vllm-10517-rtx3090-llama31-8b-29k-fails.log": dict(
        weights=14.9888, kv_cache=2.89, blocks=1478, conc=0.82, total=23.58, failure_tokens=23648,
        failure="max seq len (29000) is larger than the maximum number of tokens"),
    "issue-vllm-10517-rtx3090-llama31-8b-20k.log": dict(weights=14.9888, kv_cache=3.81, blocks=1952, conc=1.56),
    "issue-vllm-21348-qwen3-235b-fp8-4xh100.log": dict(kv_cache=8.11, kv_tokens=178880),
    "issue-vllm-pr12569-llama31-70b-w8a8-v1-070.log": dict(weights=67.7229, blocks=1381, conc=10.79),
    "issue-1cat-237-v100-journalctl.log": dict(kv_cache=5.35, kv_tokens=215401, conc=26.29),
    "issue-club3090-295-qwen36-27b-int4-2x3090.log": dict(
        model="~/.cache/huggingface/qwen3.6-27b-autoround-int4", tp=2, kv_tokens=620944, conc=2.37),
    "issue-sergiiob-4-intel-arc-kv-too-small.log": dict(
        kv_cache=4.25, failure="To serve at least one request with the model's max seq len (100000)"),
    "issue-vllm-49011-rtx5090-nvfp4-kv.log": dict(kv_tokens=1823372, conc=1.74),
    # dennislee22/vLLM-benchmarking (vLLM 0.10.1.1, A100): the repository stores the logs hard-wrapped at ~140
    # columns, so a wrapped line (the non-default args of most, "num_gpu_blocks is\n: N") reads only in part
    "dennislee-vllm-120B-4gpuA10080GB-0.8GRAM-diff-nodes.log": dict(
        model="gpt-oss-120b", tp=4, release="0.10.1.1", weights=17.2217, kv_cache=45.32, kv_tokens=2640144,
        blocks=330018, conc=284.25, sampler=True, custom_ar=False),
    "dennislee-vllm-7B-1gpuA10080GB-0.25GRAM.log": dict(
        model="Qwen2-7B-Instruct", release="0.10.1.1", weights=14.2488, kv_cache=5.01, kv_tokens=93872, conc=5.73,
        sampler=True),
    "dennislee-vllm-7B-1gpuA10080GB-0.5GRAM.log": dict(
        model="Qwen2-7B-Instruct", release="0.10.1.1", weights=14.2488, kv_cache=24.83, kv_tokens=464848,
        conc=28.37, sampler=True),
    "dennislee-vllm-7B-2gpuA10040GB-0.5GRAM-diff-nodes.log": dict(
        model="Qwen2-7B-Instruct", release="0.10.1.1", weights=7.1217, kv_cache=11.03, kv_tokens=412944,
        conc=25.2, sampler=False, custom_ar=False),
    "dennislee-vllm-7B-2gpuA10080GB-0.25GRAM-same-node.log": dict(
        model="Qwen2-7B-Instruct", tp=2, release="0.10.1.1", weights=7.1217, kv_cache=12.02, kv_tokens=450192,
        blocks=28137, conc=27.48, sampler=True, custom_ar=False),
    "dennislee-vllm-7B-2gpuA10080GB-0.5GRAM-same-node.log": dict(
        model="Qwen2-7B-Instruct", release="0.10.1.1", weights=7.1217, kv_cache=31.83, kv_tokens=1192160,
        conc=72.76, sampler=True, custom_ar=False),
    # 6204-Adv-Topics-in-Systems/VLM_vLLM: offline LLM class, LLaVA-NeXT (vision tower + encoder profile)
    "repo-vlmvllm-llava-next-mistral-7b-h100-v0102.log": dict(
        model="llava-hf/llava-v1.6-mistral-7b-hf", tp=1, pp=1, release="0.10.2", weights=14.0786, kv_cache=55.15,
        kv_tokens=451744, conc=110.29, activation=1.97, non_torch=0.07, total=79.19, gmu=0.9, sampler=False),
    "repo-qwen25vl-7b-a100-v0230-video-profile.log": dict(
        model="/models/Qwen2.5-VL-7B-Instruct", tp=1, pp=1, release="0.23.0", weights=15.67, kv_cache=-14.28,
        sampler=True, failure="No available memory for the cache blocks"),
    "issue-trl-pr3310-qwen25-7b-dp-v083.log": dict(
        model="/mnt/tenant-home_speed/Model/Qwen/Qwen2.5-7B-Instruct", tp=1, pp=1, release="0.8.3"),
    "issue-vllm-pr24162-qwen25-05b-tp2-v0102.log": dict(
        model="/data/datasets/models-hf/Qwen2.5-0.5B/", tp=2, pp=1, release="0.10.2.dev378+g4d7fe40fc.d20250829"),
    "issue-lmcache-pr2522-llama32-1b-nondefault.log": dict(model="meta-llama/Llama-3.2-1B-Instruct", gmu=0.35),
    "issue-vllm-pr13027-opt125m-v0-0644.log": dict(tp=1, pp=1, release="0.6.4.post2.dev395+g02222a02.d20241217"),
}


def _facts(name: str):
    return parse_log(read_log_text(LOGS / name), name)


def test_corpus_size_and_sources():
    files = sorted(p.name for p in LOGS.iterdir() if p.name != "SOURCES")
    assert len(files) >= 30
    sources = dict(line.split("\t") for line in (LOGS / "SOURCES").read_text().splitlines()
                   if line and not line.startswith("#"))
    assert set(files) == set(sources) == set(EXPECTED)
    assert all(url.startswith("https://github.com/") for url in sources.values())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_log_terms(name):
    exp = EXPECTED[name]
    f = _facts(name)
    if "model" in exp:
        assert f.model == exp["model"]
    if "tp" in exp:
        assert f.tensor_parallel_size == exp["tp"]
    if "pp" in exp:
        assert f.pipeline_parallel_size == exp["pp"]
    if "release" in exp:
        assert f.release == exp["release"]
    for key, term, how in (("weights", "weights", "first"), ("kv_cache", "kv_cache", "min"),
                           ("activation", "activation_peak", "max"), ("non_torch", "non_torch", "max")):
        if key in exp:
            assert f.term(term, how) == pytest.approx(exp[key]), key
    if "kv_tokens" in exp:
        assert f.kv_cache_tokens.value == exp["kv_tokens"]
    if "blocks" in exp:
        assert f.gpu_blocks.value == exp["blocks"]
    if "conc" in exp:
        assert f.max_concurrency.value == pytest.approx(exp["conc"])
    if "total" in exp:
        assert f.gpu_total_gib == pytest.approx(exp["total"])
    if "gmu" in exp:
        assert f.gpu_memory_utilization == pytest.approx(exp["gmu"])
    if "failure" in exp:
        assert exp["failure"] in f.start_failure
    else:
        assert f.start_failure is None
    if "failure_tokens" in exp:
        assert f.failure_kv_tokens.value == exp["failure_tokens"]
    # the sampler the engine chose and whether custom all-reduce was turned off, as the log says
    assert f.flashinfer_sampler == exp.get("sampler")
    assert f.custom_all_reduce == exp.get("custom_ar")


_NOT_LOGS = {"llmd-benchmark-h100-mistral-small-3.2-24b": "quotes a results table, not log lines",
             "llmd-planner-versionsweep-qwen3-14b-h100-v0.15.0": "quotes a results JSON, not log lines"}


@pytest.mark.parametrize("row", [r for r in KV_ROWS if r["id"] not in _NOT_LOGS], ids=lambda r: r["id"][:50])
def test_calibration_log_quotes_read_as_logged(row):
    """The log lines quoted in the shared calibration rows read back as the row's logged numbers."""
    f = parse_log("\n".join(str(q) for q in row["quotes"]), row["id"])
    logged = row["logged"]
    if logged["weights_gib"] is not None:
        assert f.term("weights") == pytest.approx(logged["weights_gib"])
    if logged["kv_cache_gib"] is not None:
        assert f.term("kv_cache", "min") == pytest.approx(logged["kv_cache_gib"])
    if logged["kv_cache_tokens"] is not None and row["engine_core"] == "v1":
        assert f.kv_cache_tokens.value == logged["kv_cache_tokens"]
    if logged["gpu_blocks"] is not None:
        assert f.gpu_blocks.value == logged["gpu_blocks"]
    if logged["max_concurrency"] is not None:
        assert f.max_concurrency.value == pytest.approx(logged["max_concurrency"])
    if row["vllm_version"] and f.release:
        assert f.release == row["vllm_version"]
    if f.model:
        assert f.model.rsplit("/", 1)[-1] == row["model"].rsplit("/", 1)[-1]
    assert f.tensor_parallel_size == row["tensor_parallel_size"]


# Logs whose rebuilt prediction is off by more than 2%: file -> the term explain-log blames (asserted).
_OFF: dict[str, str] = {}   # none since the Llama-4 vision tower is split over TP (was Scout TP4: "weights")
_PREDICTABLE = [n for n, e in EXPECTED.items() if n.startswith("llmd-") and "kv_tokens" in e
                and "CodeLlama" not in e["model"]]


@pytest.mark.parametrize("name", _PREDICTABLE)
def test_rebuilt_from_log_alone_predicts_kv_tokens(name):
    ex = explain(_facts(name))
    assert ex.spec_source == "log"
    row = next(r for r in ex.kv if r.name == "kv_tokens")
    assert row.logged == EXPECTED[name]["kv_tokens"]
    if name in _OFF:
        assert abs(row.rel()) > 0.02
        assert ex.differs == _OFF[name]
        assert "prediction is off" in ex.verdict
    else:
        assert abs(row.rel()) <= 0.02, (row.logged, row.predicted)
        assert "matches" in ex.verdict


def test_unknown_model_lists_the_log_figures_without_a_prediction():
    f = _facts("llmd-qwen-qwen1-5-moe-a2-7b--h100-80gb--tp1pp1dp1--8192.log.gz")
    f.model = "acme/zz-unknown-model"                          # a name no catalog entry or family matches
    f.engine_config = dict(f.engine_config, model=f.model)
    f.non_default_args = dict(f.non_default_args, model=f.model, model_tag=f.model)
    ex = explain(f)
    assert ex.verdict.startswith("no prediction")
    assert {r.name: r.logged for r in ex.memory}["kv_cache"] == 45.83
    assert all(r.predicted is None for r in ex.memory)


def test_local_model_path_maps_to_its_hub_id():
    f = _facts("llmd-meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192.log.gz")
    f.model = "/models/meta-llama/Llama-3.1-8B-Instruct"
    f.engine_config = dict(f.engine_config, model=f.model)
    ex = explain(f)
    assert ex.verdict.startswith("prediction matches")
    assert abs(next(r for r in ex.kv if r.name == "kv_tokens").rel()) <= 0.02


def test_v0_log_with_config_matches_and_release_comes_from_the_format(run_cli):
    """Issue 10517 (RTX 3090, 0.6.4 one-line profiling format, no version printed)."""
    code, out, err = run_cli("explain-log", str(LOGS / "issue-vllm-10517-rtx3090-llama31-8b-20k.log"),
                             "--gpu", "RTX 3090", "--format", "json", "--", "vllm", "serve",
                             "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "20000")
    assert code == 0, err
    j = json.loads(out)["explain_log"]
    mem = {r["name"]: r for r in j["memory"]}
    assert mem["activation_peak"]["logged"] == pytest.approx(17.06 - 14.9888, abs=0.01)  # peak_torch - weights
    kv = {r["name"]: r for r in j["kv"]}
    assert kv["gpu_blocks"]["logged"] == 1952
    assert abs(kv["gpu_blocks"]["relative_error"]) <= 0.02


def test_text_output_names_the_differing_term(run_cli):
    code, out, _ = run_cli("explain-log", str(LOGS / "llmd-meta-llama-llama-4-scout--h100-80gb--tp4pp1dp1--8192.log.gz"))
    assert code == 0
    flat = " ".join(out.split())
    # Llama-4-Scout TP 4: weights equal the log's 53.12 GiB once the 0.87B-parameter vision tower is split over the
    # 4 ranks (+3.6% before); the largest remaining term is named.
    assert "prediction matches the log: KV cache memory +1.2% (within 2%)" in flat
    assert "differs: activation_peak" in out
    assert "53.12 GiB" in out


# ------------------------------------------------------------------ log decorations: docker, kubectl, ANSI

def _variants(text: str) -> dict[str, str]:
    lines = text.splitlines()
    return {
        "kubectl --prefix --timestamps": "\n".join(
            f"[pod/vllm-7d9f/vllm] 2026-04-22T01:42:{i % 60:02d}.123456789Z {ln}" for i, ln in enumerate(lines)),
        "docker compose": "\n".join(f"vllm-1  | {ln}" for ln in lines),
        "ansi colour": "\n".join(ln.replace("INFO", "\x1b[32mINFO\x1b[0m").replace("WARNING", "\x1b[33mWARNING\x1b[0m")
                                 for ln in lines),
        "crlf": "\r\n".join(lines),
    }


@pytest.mark.parametrize("variant", ["kubectl --prefix --timestamps", "docker compose", "ansi colour", "crlf"])
def test_decorated_logs_read_the_same(variant):
    name = "llmd-meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192.log.gz"
    text = read_log_text(LOGS / name)
    plain = parse_log(text, name)
    f = parse_log(_variants(text)[variant], name)
    assert f.model == plain.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert f.release == "0.19.0" and f.tensor_parallel_size == 2
    assert f.term("kv_cache", "min") == 63.76 and f.kv_cache_tokens.value == 1044688
    assert f.ranks == plain.ranks == ["Worker_TP0", "Worker_TP1"]


def test_plain_and_gzip_read_the_same(tmp_path):
    name = "llmd-google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192.log.gz"
    p = tmp_path / "plain.log"
    p.write_bytes(gzip.decompress((LOGS / name).read_bytes()))
    assert parse_log(read_log_text(p), "x").model_dump() == parse_log(read_log_text(LOGS / name), "x").model_dump()


# ------------------------------------------------------------------ bad input: exit 2, one line, no guess

@pytest.mark.parametrize("name", ["issue-vllm-11550-v0-24gb-truncated.log", "issue-trl-pr3310-qwen25-7b-dp-v083.log",
                                  "issue-vllm-pr24162-qwen25-05b-tp2-v0102.log"])
def test_truncated_real_logs_exit_2(run_cli, name):
    code, out, err = run_cli("explain-log", str(LOGS / name), "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct")
    assert code == 2 and out == ""
    assert "ends before vLLM sized the KV cache" in err or "does not name the model" in err
    assert len(err.strip().splitlines()) == 1


def test_truncated_mid_start_up_exits_2(run_cli, tmp_path):
    text = read_log_text(LOGS / "llmd-microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log.gz")
    cut = text[: text.index("Model loading took")]
    p = tmp_path / "cut.log"
    p.write_text(cut)
    code, out, err = run_cli("explain-log", str(p))
    assert code == 2 and "ends before vLLM sized the KV cache" in err and "last stage seen: engine config" in err


def test_log_of_another_model_than_the_config_exits_2(run_cli):
    code, out, err = run_cli("explain-log", str(LOGS / "llmd-microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log.gz"),
                             "--", "vllm", "serve", "Qwen/Qwen3-8B")
    assert code == 2 and out == ""
    assert "'microsoft/phi-4'" in err and "'Qwen/Qwen3-8B'" in err


def test_interleaved_engines_exit_2(run_cli, tmp_path):
    a = read_log_text(LOGS / "llmd-microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log.gz").splitlines()
    b = read_log_text(LOGS / "llmd-google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192.log.gz").splitlines()
    mixed = [x for pair in zip(a, b) for x in pair]
    p = tmp_path / "two.log"
    p.write_text("\n".join(mixed))
    code, out, err = run_cli("explain-log", str(p))
    assert code == 2 and out == ""
    assert "several engines in one log" in err and "microsoft/phi-4" in err and "google/gemma-2-9b-it" in err


def test_two_engines_of_one_model_with_different_shapes_exit_2(run_cli, tmp_path):
    """Two replicas of the same model, TP 1 and TP 2, in one file: not one engine."""
    a = read_log_text(LOGS / "llmd-meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192.log.gz")
    b = read_log_text(LOGS / "llmd-meta-llama---h100-80gb--tp1pp1dp1--8192-dtbf16-kvfp8.log.gz")
    p = tmp_path / "two.log"
    p.write_text(a + "\n" + b)
    code, out, err = run_cli("explain-log", str(p))
    assert code == 2 and out == ""
    assert "several engines in one log" in err and "tensor_parallel_size=2" in err


def test_a_restart_of_the_same_engine_reads_as_one(tmp_path):
    a = read_log_text(LOGS / "llmd-microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log.gz")
    f = parse_log(a + "\n" + a, "restart.log")
    assert f.model == "microsoft/phi-4" and f.restarts == 1
    assert f.term("kv_cache", "min") == 46.08


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02binary", b"hello world\nnot a log\n"])
def test_not_a_log_exits_2(run_cli, tmp_path, content):
    p = tmp_path / "x.log"
    p.write_bytes(content)
    code, out, err = run_cli("explain-log", str(p))
    assert code == 2 and out == "" and err.startswith("sched-reader: error: ")


def test_missing_file_exits_2(run_cli, tmp_path):
    code, _, err = run_cli("explain-log", str(tmp_path / "nope.log"))
    assert code == 2 and "no such file" in err


def test_failed_start_up_is_explained_not_fitted():
    ex = explain(_facts("llmd-qwen-qwen3-14b--h100-80gb--tp5pp1dp1--8192.FAILED.log.gz"))
    assert ex.start_failure == "AssertionError: 151936 is not divisible by 5"
    assert ex.verdict.startswith("the engine did not start")
    assert ex.differs is None
    # the rebuilt engine fails sched-reader's own start-up check with the number vLLM printed (SR118)
    assert "sched-reader predicts: 151936 is not divisible by 5" in ex.verdict and "SR118" in ex.verdict


def test_the_one_line_memory_summary_of_recent_releases():
    """0.11+ prints the whole budget in one line (INFO from 0.20 on); line 696 of the phi-4 log, verbatim."""
    line = read_log_text(LOGS / "llmd-microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log.gz").split("\n")[695]
    assert "Actual usage is" in line
    f = parse_log(line, "x")
    assert (f.term("weights"), f.term("activation_peak"), f.term("non_torch"), f.term("cuda_graph"),
            f.term("kv_cache_in_use")) == (27.39, 1.52, 0.25, 1.07, 46.08)
    f.model, f.release = "microsoft/phi-4", "0.19.0"
    ex = explain(f)
    assert {r.name: r.logged for r in ex.memory}["kv_cache"] == 46.08
    assert "matches" in ex.verdict
    assert f.gpu_memory_utilization == 0.95 and f.gpu_total_gib == 79.19


def test_namespace_args_of_old_releases():
    line = ("INFO 10-02 12:00:00 api_server.py:526] args: Namespace(host=None, port=8000, model='meta-llama/"
            "Llama-3.1-8B-Instruct', tensor_parallel_size=2, max_model_len=4096, gpu_memory_utilization=0.85, "
            "max_num_seqs=64, middleware=[], ssl_cert_reqs=0, response_role='assistant', dtype='auto', "
            "chat_template=None, tool_parser_plugin='', disable_log_requests=False, uvicorn_log_level='info', "
            "rope_scaling=None, collect_detailed_traces=None, func=<function serve at 0x7f>)")
    f = parse_log(line + "\nINFO 10-02 12:00:01 vLLM API server version 0.6.2\n", "x")
    assert f.model == "meta-llama/Llama-3.1-8B-Instruct" and f.tensor_parallel_size == 2
    assert f.non_default_args["max_num_seqs"] == 64 and f.release == "0.6.2"
