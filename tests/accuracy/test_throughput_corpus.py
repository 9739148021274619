"""The public benchmark corpus (tests/data/throughput_public.yaml) is well-formed and keeps out the
sources that judge the model (issue 12)."""

from __future__ import annotations

from pathlib import Path

import yaml
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
ROWS = yaml.safe_load((ROOT / "tests" / "data" / "throughput_public.yaml").read_text())
KEEP_OUT = ("gpustack", "vllm-project/recipes", "rocm.docs.amd.com", "dennislee22")


def test_every_row_names_its_source_release_gpu_and_a_metric():
    ids = set()
    for r in ROWS:
        assert r["id"] not in ids
        ids.add(r["id"])
        assert r["source"] and str(r["source_url"]).startswith("https://")
        assert r["engine_version"] and r["model"] and r["gpu"]
        res = r["results"]
        assert any(res.get(k) for k in ("output_throughput_tok_s", "mean_tpot_ms", "median_tpot_ms", "mean_ttft_ms"))


def test_no_row_from_a_kept_out_source():
    for r in ROWS:
        assert not any(k in str(r["source_url"]).lower() for k in KEEP_OUT), r["id"]


def test_derived_output_throughput_matches_request_rate_times_output_len():
    # rows that print only request throughput carry output = req/s x fixed output length (inferred)
    for r in ROWS:
        res, w = r["results"], r["workload"]
        if res.get("request_throughput_rps") and w.get("output_len") and res.get("output_throughput_tok_s"):
            assert abs(res["output_throughput_tok_s"] - res["request_throughput_rps"] * w["output_len"]) < 1.0


def _bench():
    return load_script("benchmarks/throughput_accuracy.py")


def test_every_public_row_resolves_its_model_and_gpu_through_the_pipeline():
    # a row the catalogs cannot resolve would be silently "skipped" by the accuracy benchmark
    bench = _bench()
    for r in ROWS:
        spec = bench.build_spec(r)
        assert spec.hardware.gpu is not None and spec.arch is not None, r["id"]
        assert spec.effective.tensor_parallel_size == r.get("tensor_parallel_size", 1), r["id"]


def test_expert_parallel_rows_reach_the_spec_as_published():
    # InferenceX serve_minimax_tep8_sbatch.sh: --tensor-parallel-size 8 --enable-expert-parallel
    bench = _bench()
    row = next(r for r in ROWS if r["id"] == "inferencex-minimax-m25-fp8-8xh200-tep8-random1024-128-c4")
    assert "--enable-expert-parallel" in bench.row_argv(row)
    assert bench.build_spec(row).effective.enable_expert_parallel is True
    plain = next(r for r in ROWS if r["id"] == "vllm-pr34924-minimax-m25-fp8-4xh100-chat-random1024-512-c8")
    assert bench.build_spec(plain).effective.enable_expert_parallel is False


def test_rows_quoting_only_medians_keep_them_as_medians():
    # the InferenceX result files store median_ttft/median_tpot only; no mean may be invented
    for r in ROWS:
        if "token_position_decode_slo" in r["source_url"]:
            assert "mean_tpot_ms" not in r["results"] and "mean_ttft_ms" not in r["results"], r["id"]
            assert r["results"]["median_tpot_ms"] > 0 and r["results"]["median_ttft_ms"] > 0


def test_fixed_length_rows_generate_num_prompts_times_output_len():
    # a random-dataset row run with --ignore-eos and fixed lengths generated exactly N x L tokens, so its
    # published duration x output throughput must give N x L back (catches a transcription or a length error)
    checked = 0
    for r in ROWS:
        res, w = r["results"], r["workload"]
        if not (res.get("duration_s") and res.get("output_throughput_tok_s") and w.get("ignore_eos")
                and w.get("dataset") == "random" and w.get("output_len") and not w.get("random_range_ratio")):
            continue
        expected = w["num_prompts"] * w["output_len"]
        assert abs(res["duration_s"] * res["output_throughput_tok_s"] - expected) < 0.005 * expected, r["id"]
        checked += 1
    assert checked >= 10  # dstack's DeepSeek-R1 sweep (500 x 800 each) and vLLM PR 43232 (128 x 1000)


def test_amd_rows_reach_the_amd_catalog_entry():
    # the corpus was blind on AMD Instinct until dstack's study and the ROCm blog row: they must predict
    # with the MI300X entry (HBM3 5.3 TB/s), not a name-guessed stand-in
    bench = _bench()
    amd = [r for r in ROWS if "MI300X" in r["gpu"]]
    assert len(amd) >= 7
    for r in amd:
        gpu = bench.build_spec(r).hardware.gpu
        assert gpu.name == "Instinct MI300X 192GB" and abs(gpu.hbm_bandwidth_tb_s - 5.3) < 1e-9, r["id"]


def test_env_words_select_the_engine_the_run_used():
    # vLLM PR 14431 ran V1 on main after 0.7.3 (V0 default there, V1 opt-in with VLLM_USE_V1=1): the row's
    # env must reach the spec as V1, whose 0.7.3 token budget for the API server is 8192 (V0: 2048)
    bench = _bench()
    row = next(r for r in ROWS if r["id"] == "vllm-pr14431-main-v1-llama31-8b-1xh100-sharegpt1000-inf")
    assert bench.row_argv(row)[:3] == ["VLLM_USE_V1=1", "vllm", "serve"]
    eff = bench.build_spec(row).effective
    assert eff.engine == "v1" and eff.max_num_batched_tokens == 8192
    plain = dict(row, env=None)
    assert bench.build_spec(plain).effective.engine == "v0"


def test_rows_that_turn_prefix_caching_off_reach_the_spec_with_it_off():
    # V1 turns prefix caching on by default; simon-mo/vLLM-Benchmark serves with --no-enable-prefix-caching
    bench = _bench()
    rows = [r for r in ROWS if (r.get("config_flags") or {}).get("enable_prefix_caching") is False]
    assert len(rows) >= 15
    for r in rows:
        assert "--no-enable-prefix-caching" in bench.row_argv(r), r["id"]
        assert bench.build_spec(r).effective.enable_prefix_caching is False, r["id"]


def test_offline_rows_name_the_offline_script_and_no_arrival_process():
    # benchmark_throughput.py / `vllm bench throughput` hand every prompt to LLM.generate at once: no request
    # rate, no concurrency cap, no TTFT/TPOT; PR 13305's 1000 x (1000 in, 100 out) run: 7.67 req/s x 100 = 767 tok/s
    offline = [r for r in ROWS if r["workload"].get("mode") == "offline throughput"]
    assert offline
    for r in offline:
        w, res = r["workload"], r["results"]
        assert "benchmark_throughput" in w["benchmark_tool"] or "bench throughput" in w["benchmark_tool"], r["id"]
        assert w.get("request_rate") is None and w.get("max_concurrency") is None, r["id"]
        assert not any(k in res for k in ("mean_ttft_ms", "mean_tpot_ms", "median_tpot_ms")), r["id"]
        assert res["output_throughput_tok_s"] > 0 and res["total_throughput_tok_s"] > res["output_throughput_tok_s"]


def test_t4_rows_serve_fp16_on_the_v0_engine_as_published():
    # the T4 (compute capability 7.5) has no BF16 and V1 needs 8.0+: the post serves --dtype float16 with
    # VLLM_USE_V1=0, and both must reach the spec (else the model default bfloat16 / V1 would be predicted)
    bench = _bench()
    rows = [r for r in ROWS if "T4" in r["gpu"]]
    assert len(rows) >= 3
    for r in rows:
        eff = bench.build_spec(r).effective
        assert eff.dtype == "float16" and eff.engine == "v0", r["id"]
