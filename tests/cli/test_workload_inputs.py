"""Workloads that mean what they say: traces replay exactly, --workload FILE, over-long requests fail
one by one, and the `vllm bench serve` flags with vLLM's semantics (vllm/benchmarks/serve.py, datasets.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sched_reader.analyzers.simulator.workloads import (
    bench_length_bounds, from_bench_flags, load_workload_file,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "workloads"
ROOT = Path(__file__).resolve().parents[2]
TRACE = DATA / "rag_600_poisson4.jsonl"

# vLLM 0.6.3 is a V0 release: chunked prefill turns itself on only above max-model-len 32768, so here it is
# off, and max-num-batched-tokens = max(max_model_len, 2048) = 32768 (vllm/engine/arg_utils.py, 0.6.x).
V0_FILE = """sched_reader: 1
name: rag-v0
vllm_version: "0.6.3"
hardware: {gpu: h100-sxm5-80gb, count: 1}
serve: >-
  vllm serve meta-llama/Llama-3.1-8B-Instruct
  --max-model-len 32768
workload: {trace: rag_600_poisson4.jsonl}
"""


def _make_trace() -> str:
    """The generator of TRACE (documented in tests/data/workloads/README.md)."""
    rng = np.random.default_rng(7)
    n = 600
    gaps = rng.exponential(1 / 4, n)
    gaps[0] = 0
    t = np.cumsum(gaps)
    lines = []
    for i in range(n):
        long = rng.random() < 0.10
        p = int(rng.integers(22000, 26000)) if long else int(rng.integers(300, 1500))
        o = int(rng.integers(100, 400))
        lines.append(json.dumps({"arrival_s": round(float(t[i]), 4), "prompt_len": p, "output_len": o}))
    return "\n".join(lines) + "\n"


def test_trace_file_is_its_generator():
    assert TRACE.read_text() == _make_trace()


@pytest.fixture
def v0_dir(tmp_path):
    (tmp_path / "rag_600_poisson4.jsonl").write_text(TRACE.read_text())
    (tmp_path / "rag.yaml").write_text(V0_FILE)
    return tmp_path


def test_trace_section_is_replayed_and_diagnosed_as_a_chunked_prefill_problem(run_cli, v0_dir):
    code, out, err = run_cli("diagnose", "--format", "json", str(v0_dir / "rag.yaml"))
    assert code in (0, 1), err
    [eng] = json.loads(out)["engines"]
    wl = eng["workload"]
    # the trace as written: 600 requests over ~150 s (4 req/s), not "1,000 prompts, all at once"
    assert wl["num_prompts"] == 600
    assert 3.6 < wl["request_rate"] < 4.4
    assert wl["length_stats"]["prompt_max"] >= 22000
    assert eng["config"]["enable_chunked_prefill"] is False
    assert eng["config"]["max_num_batched_tokens"] == 32768
    v = eng["bottleneck"]
    assert v["bottleneck"] == "prefill_stall", v["summary"]
    rec = v["recommendations"][0]
    assert rec["flag"] == "--enable-chunked-prefill"
    # the predicted effect comes from re-diagnosing the same 600 requests with chunked prefill on (the
    # release's own chunked token budget): the ITL tail drops by far more than 5x
    eff = rec["effect"]
    assert eff["target"] == "p99_itl_ms" and eff["improves"]
    assert eff["after"]["p99_itl_ms"] < eff["before"]["p99_itl_ms"] / 5
    assert eff["before"]["p99_itl_ms"] == pytest.approx(eng["performance"]["p99_itl_ms"], rel=1e-3)
    # every request ran (none longer than max-model-len)
    assert eng["performance"]["completed"] == 600 and eng["performance"]["failed"] == 0


def test_same_trace_on_v1_is_not_a_stall(run_cli, v0_dir):
    """V1 (0.19.0) always chunks prefill: the same trace is not a prefill-stall problem there."""
    (v0_dir / "rag.yaml").write_text(V0_FILE.replace('"0.6.3"', '"0.19.0"'))
    code, out, err = run_cli("diagnose", "--format", "json", str(v0_dir / "rag.yaml"))
    assert code in (0, 1), err
    [eng] = json.loads(out)["engines"]
    assert eng["bottleneck"]["bottleneck"] != "prefill_stall"


def test_workload_flag_takes_a_jsonl_trace_in_diagnose_and_simulate(run_cli, tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps({"arrival_s": i * 0.5, "prompt_len": 200 + i, "output_len": 20})
                             + "\n" for i in range(30)))
    cmd = ["--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "4096"]
    code, out, err = run_cli("simulate", "--workload", str(trace), "--format", "json", *cmd)
    assert code == 0, err
    r = json.loads(out)["engines"][0]["results"]["vllm"]
    assert r["completed"] == 30 and r["total_input_tokens"] == sum(200 + i for i in range(30))
    # arrivals kept: 30 requests every 0.5 s cannot finish before the last one is sent at 14.5 s
    assert r["duration_s"] > 14.5
    code, out, err = run_cli("diagnose", "--workload", str(trace), "--format", "json", *cmd)
    assert code in (0, 1), err
    wl = json.loads(out)["engines"][0]["workload"]
    assert wl["num_prompts"] == 30 and wl["request_rate"] == pytest.approx(2.0)


def test_workload_flag_with_a_bench_flag_is_a_clear_error(run_cli, tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"prompt_len": 10, "output_len": 5}\n')
    code, _, err = run_cli("diagnose", "--workload", str(trace), "--num-prompts", "5", "--",
                           "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct")
    assert code == 2 and "--num-prompts" in err and "Traceback" not in err


def test_tune_reads_workload_the_way_diagnose_does(run_cli, tmp_path):
    """``tune --workload`` goes through diagnose's resolution: the trace is replayed as written (30 requests,
    its own lengths) and a bench flag beside it is refused, not silently dropped."""
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps({"arrival_s": i * 0.5, "prompt_len": 200 + i, "output_len": 20})
                             + "\n" for i in range(30)))
    cmd = ["--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "4096"]
    code, out, err = run_cli("tune", "--workload", str(trace), "--axis", "max-num-seqs=64",
                             "--axis", "max-num-batched-tokens=2048", "--axis", "gpu-memory-utilization=0.9",
                             "--axis", "kv-cache-dtype=auto", "--axis", "tensor-parallel-size=1",
                             "--executor", "serial", "--format", "json", "--gpu", "H100", *cmd)
    assert code == 0, err
    tune = json.loads(out)["tune"]
    assert "30 requests" in tune["workload"] and "trace" in tune["workload"]
    code, _, err = run_cli("tune", "--workload", str(trace), "--num-prompts", "5", "--gpu", "H100", *cmd)
    assert code == 2 and "--num-prompts" in err and "Traceback" not in err


def test_overlong_requests_fail_one_by_one_as_vllm_bench_counts_them(run_cli, tmp_path):
    trace = tmp_path / "t.jsonl"
    rows = [{"prompt_len": 500, "output_len": 10}] * 9 + [{"prompt_len": 9000, "output_len": 10}]
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run_cli("simulate", "--workload", str(trace), "--format", "json", "--",
                             "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192")
    assert code == 0, err
    r = json.loads(out)["engines"][0]["results"]["vllm"]
    assert r["completed"] == 9 and r["failed"] == 1
    assert any("1 request(s) failed" in n for n in r["notes"])
    code, out, err = run_cli("simulate", "--workload", str(trace), "--",
                             "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192")
    assert code == 0 and "failed" in out


def test_random_range_ratio_bounds_are_vllms():
    # vLLM RandomDataset: floor(L(1-r)) .. ceil(L(1+r)), both ends included; output low at least 1
    assert bench_length_bounds(1024, 0.5) == (512, 1536)
    assert bench_length_bounds(3, 0.9) == (1, 6)     # floor(0.3) = 0 -> 1; ceil(5.7) = 6
    req = from_bench_flags(random_input_len=1000, random_output_len=100, random_range_ratio=0.25,
                           num_prompts=4000, seed=3)
    assert req.prompt_len.min() >= 750 and req.prompt_len.max() <= 1250
    assert req.prompt_len.min() < 760 and req.prompt_len.max() > 1240   # uniform reaches both ends
    assert abs(req.prompt_len.mean() - 1000) < 10


def test_burstiness_and_rate_follow_vllm_get_request():
    # vLLM rescales the cumulative gamma delays so the last request is sent at num_prompts / rate
    req = from_bench_flags(num_prompts=200, request_rate=8.0, burstiness=0.3, seed=1)
    assert req.arrival_s[-1] == pytest.approx(200 / 8.0)
    gaps = np.diff(req.arrival_s)
    poisson = np.diff(from_bench_flags(num_prompts=200, request_rate=8.0, seed=1).arrival_s)
    # burstiness < 1: gaps more variable than Poisson's (coefficient of variation 1/sqrt(0.3) vs 1)
    assert gaps.std() / gaps.mean() > 1.3 > poisson.std() / poisson.mean()


def test_input_len_maps_to_random_input_len_and_percentiles_and_goodput(run_cli):
    code, out, err = run_cli("diagnose", "--format", "json", "--input-len", "300", "--output-len", "40",
                             "--num-prompts", "50", "--request-rate", "10", "--metric-percentiles", "50,99.9",
                             "--goodput", "ttft:100000", "--goodput", "e2el:1000000", "--",
                             "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct")
    assert code in (0, 1), err
    eng = json.loads(out)["engines"][0]
    assert eng["workload"]["random_input_len"] == 300 and eng["workload"]["random_output_len"] == 40
    perf = eng["performance"]
    assert "p99.9_itl_ms" in perf and "p50_ttft_ms" in perf and perf["p99.9_itl_ms"] >= perf["p50_itl_ms"]
    assert perf["good_requests"] == 50          # generous targets: every request is good
    assert perf["goodput_slo"]["e2el_ms"] == 1000000


@pytest.mark.parametrize("arg, words", [("ttf:5", "did you mean 'ttft'"), ("ttft=5", "KEY:VALUE"),
                                        ("tpot:fast", "not a number")])
def test_bad_goodput_is_one_line(run_cli, arg, words):
    code, _, err = run_cli("simulate", "--goodput", arg, "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct")
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_load_workload_file_sniffs_jsonl_without_extension(tmp_path):
    p = tmp_path / "trace.txt"
    p.write_text('{"prompt_len": 10, "output_len": 3, "arrival_s": 0.5}\n{"prompt_len": 12, "output_len": 3, "arrival_s": 1.0}\n')
    req = load_workload_file(p)
    assert len(req) == 2 and req.arrival_s.tolist() == [0.5, 1.0]


def test_lint_agrees_with_diagnose_on_an_open_loop_trace(run_cli, v0_dir):
    """lint skips the simulation, but the in-flight count of a 4 req/s trace still comes from Little's law
    (steady-state latency), not from its 600 requests: no false 'KV cache binds' warning (SR202)."""
    code, out, err = run_cli("lint", "--format", "json", str(v0_dir / "rag.yaml"))
    assert code in (0, 1), err
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert "SR202" not in rules and "SR205" in rules


def _perf(run_cli, *flags):
    code, out, err = run_cli("diagnose", "--format", "json", "--no-effects", *flags, "--", "vllm", "serve",
                             "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "4096")
    assert code in (0, 1), err
    e = json.loads(out)["engines"][0]
    return e["workload"], e["performance"]


def test_backend_and_endpoint_flags_price_the_chat_entry_point(run_cli):
    """`--backend openai-chat` (or `--endpoint /v1/chat/completions`) is vllm bench serve's chat client: every
    request goes through a chat template in the one API-server process before the engine sees it. For a
    500-prompt burst that intake is serial: on vLLM 0.11.0, which re-parses the template per request
    (~11 ms, GPUStack's 0.11.0 chat bursts imply 11-13 ms), the mean TTFT grows by seconds; a release that
    caches the parse adds a fraction of a millisecond per request. A completions run keeps the default; the
    endpoint path wins over the backend name."""
    base = ["--num-prompts", "500", "--random-input-len", "512", "--random-output-len", "64", "--gpu", "H100"]
    wl_c, perf_c = _perf(run_cli, *base, "--vllm", "0.11.0")
    wl_chat, perf_chat = _perf(run_cli, *base, "--vllm", "0.11.0", "--backend", "openai-chat")
    wl_path, perf_path = _perf(run_cli, *base, "--vllm", "0.11.0", "--endpoint", "/v1/chat/completions")
    wl_win, _ = _perf(run_cli, *base, "--backend", "openai-chat", "--endpoint", "/v1/completions")
    assert wl_c["endpoint"] == "completions" and wl_chat["endpoint"] == "chat" == wl_path["endpoint"]
    assert wl_win["endpoint"] == "completions"
    assert perf_chat["mean_ttft_ms"] == perf_path["mean_ttft_ms"]
    assert perf_chat["mean_ttft_ms"] - perf_c["mean_ttft_ms"] > 500 * 8.0   # >= 8 ms per request, in series
    assert perf_chat["output_throughput"] <= perf_c["output_throughput"]
    _, perf_c11 = _perf(run_cli, *base, "--vllm", "0.11.1")
    _, perf_chat11 = _perf(run_cli, *base, "--vllm", "0.11.1", "--backend", "openai-chat")
    assert 0.0 < perf_chat11["mean_ttft_ms"] - perf_c11["mean_ttft_ms"] < 500 * 2.0


def test_a_non_generation_endpoint_is_one_line_exit_2(run_cli):
    code, out, err = run_cli("diagnose", "--endpoint", "/v1/embeddings", "--", "vllm", "serve",
                             "meta-llama/Llama-3.1-8B-Instruct")
    assert code == 2 and out == "" and "text-generation" in err and len(err.strip().splitlines()) == 1


def test_workload_section_may_name_the_endpoint(run_cli, tmp_path):
    """sched-reader's own file: ``workload: {endpoint: ...}`` beside the classes (the section is replayed as
    written; the entry point only changes what the API server costs)."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text((ROOT / "examples" / "llama3-8b-h100.yaml").read_text().replace(
        "  seed: 0\n", "  seed: 0\n  endpoint: /v1/chat/completions\n"))
    code, out, err = run_cli("diagnose", "--format", "json", "--no-effects", str(cfg))
    assert code in (0, 1), err
    wl = json.loads(out)["engines"][0]["workload"]
    assert wl["endpoint"] == "chat" and wl["num_prompts"] == 500


def test_random_prefix_len_prepends_one_shared_prefix_as_vllm():
    # vLLM RandomDataset (--random-prefix-len): one prefix drawn once and prepended to every prompt; the range
    # ratio applies to the random part only, so 200 prefix + [75, 125] random tokens
    req = from_bench_flags(random_input_len=100, random_output_len=20, random_prefix_len=200,
                           random_range_ratio=0.25, num_prompts=2000, seed=5)
    assert req.prompt_len.min() >= 275 and req.prompt_len.max() <= 325
    assert req.prompt_len.min() < 280 and req.prompt_len.max() > 320
    assert set(req.prefix_len.tolist()) == {200} and len(set(req.prefix_id.tolist())) == 1
    fixed = from_bench_flags(random_input_len=100, random_prefix_len=200, num_prompts=3)
    assert fixed.prompt_len.tolist() == [300, 300, 300]
    assert from_bench_flags(num_prompts=3).prefix_id.tolist() == [-1, -1, -1]   # no prefix: none shared


def test_sharegpt_output_len_fixes_every_output_as_vllm():
    req = from_bench_flags(dataset_name="sharegpt", sharegpt_output_len=64, num_prompts=300, seed=2)
    assert set(req.output_len.tolist()) == {64}
    assert len(set(req.prompt_len.tolist())) > 50      # prompts keep the dataset's spread


def test_a_cached_prefix_shortens_the_burst_prefill(run_cli):
    """1,000 shared prefix tokens + 100 random ones against 1,100 random ones, 200 prompts at once on
    Llama-3.1-8B / H100: with V1's prefix cache (on by default) all but the first step's requests find the
    prefix cached, so the burst prefills ~100 new tokens per request instead of 1,100 and its mean TTFT
    must fall well below the no-prefix run's (the prefill work is about 11x smaller)."""
    def mean_ttft(*flags):
        code, out, err = run_cli("diagnose", "--format", "json", "--num-prompts", "200", "--gpu", "H100",
                                 "--vllm", "0.11.0", *flags, "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct")
        assert code in (0, 1), err
        eng = json.loads(out)["engines"][0]
        return eng["performance"]["mean_ttft_ms"], eng["workload"]
    shared, wl = mean_ttft("--random-prefix-len", "1000", "--random-input-len", "100")
    plain, _ = mean_ttft("--random-input-len", "1100")
    assert wl["random_prefix_len"] == 1000 and wl["mean_input_len"] == 1100
    assert shared < 0.5 * plain


def test_ignore_eos_is_accepted_and_changes_nothing(run_cli):
    args = ("diagnose", "--num-prompts", "50", "--gpu", "H100", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct")
    code, out, err = run_cli(*args)
    code2, out2, err2 = run_cli(args[0], "--ignore-eos", *args[1:])
    assert (code, out) == (code2, out2), err2
