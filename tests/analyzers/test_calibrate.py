"""calibrate: vllm bench serve results read, the profile fitted within bounds, --profile applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sched_reader.analyzers.calibrate import fit, requests_for
from sched_reader.errors import InputError
from sched_reader.models.calibration_profile import CalibratedCost, load_profile
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.readers.bench_result import read_bench

BENCH = Path(__file__).resolve().parents[1] / "data" / "bench"
JSON80 = BENCH / "lambda-h100-llama31-8b-fp8-prompt80.json"
# the LambdaLabs deployment (tests/data/bench/lambda-h100-llama31-8b-fp8-sharegpt.yaml: header says why 10 scheduler steps)
DEPLOY = ["vllm", "serve", "neuralmagic/Meta-Llama-3.1-8B-FP8", "--max-model-len", "2048", "--max-num-seqs", "256",
          "--gpu-memory-utilization", "0.95", "--num-scheduler-steps", "10"]


@pytest.fixture(scope="module")
def spec():
    [s] = build_specs([], DEPLOY, gpu="H100 SXM", vllm="0.6.0")
    return s


def test_read_save_result_json():
    b = read_bench(JSON80)
    assert (b.completed, b.total_input_tokens, b.total_output_tokens) == (80, 19504, 8600)
    assert b.output_throughput == pytest.approx(2158.5448675215875)
    assert b.mean_tpot_ms == pytest.approx(16.29782732399702)
    assert b.model_id == "neuralmagic/Meta-Llama-3.1-8B-FP8" and b.request_rate == float("inf")
    assert sum(b.input_lens) == 19504 and sum(b.output_lens) == 8600


def test_read_text_summary():
    b = read_bench(BENCH / "yiliu30-vllm-fork-summary.txt")
    assert (b.completed, b.total_input_tokens, b.total_output_tokens) == (32, 65536, 65536)
    assert b.output_throughput == 434.40 and b.mean_tpot_ms == 70.14 and b.mean_ttft_ms == 7279.56
    assert b.max_concurrency == 32 and b.duration_s == 150.87


def test_requests_that_streamed_no_text_still_ran_in_the_replay():
    """The LambdaLabs 0.6.0 run counts all 80 requests completed and its total_input_tokens (19,504) is the
    sum over all 80 prompts, the 24 with output 0 included: vLLM 0.6's benchmark counts only successful
    requests there, so those 24 got a 200 stream that detokenized to no text; they ran (prefill + one token)."""
    b = read_bench(JSON80)
    zeros = sum(1 for o in b.output_lens if o == 0)
    assert zeros == 24 and b.completed == len(b.output_lens) == 80
    req = requests_for(b)
    assert len(req) == 80 and int(req.prompt_len.sum()) == b.total_input_tokens == 19504
    assert int(req.output_len.sum()) == 8600 + zeros      # one (text-less) token each


def test_failed_requests_are_left_out_of_the_replay():
    """A run that counts fewer completed requests than it lists: the zero-output ones failed (refused) and
    never reached the engine."""
    b = read_bench(JSON80).model_copy(update={"completed": 56})
    req = requests_for(b)
    assert len(req) == 56 and int(req.output_len.sum()) == 8600


@pytest.mark.parametrize("content,msg", [
    ('{"foo": 1}', "not a `vllm bench serve` result"),
    ("[1, 2]", "not an object"),
    ("{not json", "invalid JSON"),
    ("hello", "not a `vllm bench serve` result"),
])
def test_other_files_exit_2(tmp_path, content, msg):
    p = tmp_path / "r.json"
    p.write_text(content)
    with pytest.raises(InputError, match=msg):
        read_bench(p)


def test_fit_reduces_the_error_and_stays_in_bounds(spec):
    b = read_bench(JSON80)
    prof = fit(spec, [b])
    for name, t in prof.terms.items():
        assert t.lower <= t.value <= t.upper, name
        assert t.supported_by
    assert prof.terms["decode_time_scale"].fitted
    assert not prof.terms["step_overhead_ms"].fitted and prof.terms["step_overhead_ms"].value == 0.0
    r = prof.fit["results"][0]
    # this run's mean TPOT (16.3 ms) is 2.2x its median (7.27 ms): stall-dominated, so the decode term is
    # fitted to its output throughput alone, and one result moves it 0.75 of the way in log space: what is
    # left of the throughput error is about a quarter of the uncalibrated one
    u, c = r["uncalibrated_error"]["output_throughput"], r["calibrated_error"]["output_throughput"]
    assert abs(c) < 0.4 * abs(u) and c * u >= 0
    assert any("one result" in n for n in prof.fit["notes"])
    # this run's mean TPOT (16.3 ms) is 2.2x its median (7.27 ms): said, since the fit uses the median
    assert any("mean TPOT above 1.5x the median" in n for n in prof.fit["notes"])


def test_one_burst_identifies_the_decode_scale_only(spec):
    """One burst (80 prompts sent at once): its mean TTFT is the API intake queue plus prefill time, one
    number for two unknowns, so the prefill scale, the intake and the TTFT left-over stay at their priors
    (the uncalibrated model), each saying why; only the decode scale is fitted."""
    prof = fit(spec, [read_bench(JSON80)])
    t = prof.terms
    assert t["decode_time_scale"].fitted
    assert (t["prefill_time_scale"].value, t["prefill_time_scale"].fitted) == (1.0, False)
    assert "cannot separate the API intake queue from prefill time" in t["prefill_time_scale"].supported_by[0]
    assert not t["api_intake_ms"].fitted and "one burst size" in t["api_intake_ms"].supported_by[0]
    assert (t["api_ms"].value, t["api_ms"].fitted) == (0.0, False)


def test_shrink_weight_hand_calculation():
    """Posterior mean of a log-scale under the two-part prior (core tau = ln(1.264) / 0.6745 = 0.347, the
    corpus's 26.4% median TPOT error; a share 0.25 at spread 1.5) with one result of spread 0.20 (s^2 = 0.04).
    x = ln 1.5 = 0.4055: core variance 0.1604 (sd 0.4005), density exp(-0.1644 / 0.3208) / 0.4005 = 1.4956;
    tail variance 2.29 (sd 1.5133), exp(-0.1644 / 4.58) / 1.5133 = 0.6375; core weight 0.75 x 1.4956 /
    (1.1217 + 0.1594) = 0.8756; w = 0.8756 x 0.7506 + 0.1244 x 0.9825 = 0.7795.
    x = ln 3 = 1.0986: densities 0.0580 and 0.5078, core weight 0.2553, w = 0.2553 x 0.7506 + 0.7447 x 0.9825
    = 0.9233: a 3x offset is read as a model that is off for this deployment and kept almost whole."""
    import math

    from sched_reader.analyzers.calibrate import shrink_weight

    assert shrink_weight("decode_time_scale", 1, math.log(1.5)) == pytest.approx(0.7795, abs=0.001)
    assert shrink_weight("decode_time_scale", 1, math.log(3.0)) == pytest.approx(0.9233, abs=0.001)
    assert shrink_weight("decode_time_scale", 0, math.log(1.5)) == 0.0
    # four results: s^2 = 0.01, the core alone would give 0.1204 / 0.1304 = 0.923; the mixture is above it
    assert 0.923 < shrink_weight("decode_time_scale", 4, math.log(1.5)) < 0.99


def test_one_run_fit_shrinks_a_known_scale_toward_the_model():
    """A deployment whose GPU is exactly 1.5x slower than the model (a result generated by the model itself
    with decode_time_scale 1.5): the raw fit recovers ~1.5, and one result moves the profile 0.7795 of the
    way in log space (test_shrink_weight_hand_calculation): 1.5 ** 0.7795 = 1.372, not the whole way."""
    from sched_reader.analyzers.calibrate import _profile, predict
    from sched_reader.readers.bench_result import BenchResult

    [s] = build_specs([], ["vllm", "serve", "Qwen/Qwen3-0.6B", "--max-model-len", "4096"], gpu="H100 SXM",
                      vllm="0.19.0")
    shape = BenchResult(file="synthetic", completed=64, max_concurrency=8, total_input_tokens=64 * 512,
                        total_output_tokens=64 * 128, output_throughput=1.0)
    truth = predict(s, shape, _profile(1.5, 1.0, 0.0))
    b = shape.model_copy(update={"output_throughput": truth["output_throughput"],
                                 "mean_tpot_ms": truth["mean_tpot_ms"], "median_tpot_ms": truth["median_tpot_ms"],
                                 "mean_ttft_ms": truth["mean_ttft_ms"]})
    prof = fit(s, [b])
    assert prof.terms["decode_time_scale"].value == pytest.approx(1.372, rel=0.02)
    assert "alone give x1.5" in " ".join(prof.terms["decode_time_scale"].supported_by)


def test_bench_of_another_model_is_refused(spec, tmp_path):
    d = json.loads(JSON80.read_text())
    d["model_id"] = "Qwen/Qwen2.5-7B-Instruct"
    p = tmp_path / "other.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InputError, match="the benchmark ran model 'Qwen/Qwen2.5-7B-Instruct'"):
        fit(spec, [read_bench(p)])


def test_profile_scales_decode_time():
    """decode_time_scale 2 doubles a decode-only step; the prefill share follows prefill_time_scale."""
    class Toy:
        def step_time(self, nd, ctx, tp, pairs, nps=0):
            return 0.010 * (nd > 0) + 0.001 * tp

    c = CalibratedCost(Toy(), decode_scale=2.0, prefill_scale=3.0, overhead_s=0.001, seq_overhead_s=0.0001)
    assert c.step_time(4, 100, 0, 0.0) == pytest.approx(0.001 + 0.0004 + 2 * 0.010)
    # a mixed step: 10 ms of decode work (x2) + 5 ms of prompt work (x3) + host time for 4 + 1 sequences
    assert c.step_time(4, 100, 5, 0.0, 1) == pytest.approx(0.001 + 0.0005 + 2 * 0.010 + 3 * 0.005)


def test_cli_calibrate_writes_a_profile_that_diagnose_and_simulate_take(run_cli, tmp_path):
    out = tmp_path / "profile.yaml"
    code, text, err = run_cli("calibrate", "--bench", str(JSON80), "-o", str(out), "--gpu", "H100 SXM",
                              "--vllm", "0.6.0", "--", *DEPLOY)
    assert code == 0, err
    assert "decode_time_scale" in text and out.exists()
    prof = load_profile(out)
    ds = prof.value("decode_time_scale")
    # the profile applied: a one-at-a-time decode (concurrency 1) slows by the decode scale
    args = ["--format", "json", "--gpu", "H100 SXM", "--vllm", "0.6.0", "--num-prompts", "4", "--max-concurrency", "1",
            "--random-input-len", "64", "--random-output-len", "256"]
    code, a, err = run_cli("simulate", *args, "--", *DEPLOY)
    assert code == 0, err
    code, b, err = run_cli("simulate", *args, "--profile", str(out), "--", *DEPLOY)
    assert code == 0, err
    ta = json.loads(a)["engines"][0]["results"]["vllm"]["mean_tpot_ms"]
    tb = json.loads(b)["engines"][0]["results"]["vllm"]["mean_tpot_ms"]
    assert tb / ta == pytest.approx(ds, rel=0.05)
    code, d, err = run_cli("diagnose", *args, "--profile", str(out), "--", *DEPLOY)
    assert code in (0, 1), err
    assert json.loads(d)["engines"][0]["performance"]["mean_tpot_ms"] == pytest.approx(tb, rel=0.01)


@pytest.mark.parametrize("content,msg", [("a: 1\n", "not a sched-reader profile"),
                                         ("schema: sched-reader/profile-v1\nterms:\n  decode_time_scale:\n"
                                          "    value: 9\n    lower: 0.5\n    upper: 3\n    unit: x\n    meaning: m\n",
                                          "outside")])
def test_bad_profile_exits_2(run_cli, tmp_path, content, msg):
    p = tmp_path / "p.yaml"
    p.write_text(content)
    code, out, err = run_cli("diagnose", "--profile", str(p), "--", *DEPLOY)
    assert code == 2 and msg in err


def test_calibrate_from_the_log_alone_checks_the_model(run_cli, tmp_path):
    log = Path(__file__).resolve().parents[1] / "data" / "logs" / "llmd-microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log.gz"
    code, out, err = run_cli("calibrate", "--bench", str(JSON80), "--log", str(log))
    assert code == 2 and "the benchmark ran model 'neuralmagic/Meta-Llama-3.1-8B-FP8'" in err


# ------------------------------------------------------------------ bad input through the CLI: exit 2, one line

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
PHI4 = LOGS / "llmd-microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log.gz"


def _one_line_exit_2(code, out, err):
    assert code == 2 and out == "", (code, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_bench_of_another_tool_exits_2(run_cli, tmp_path):
    # a genai-perf profile export: metrics as {"avg": ...} objects, no vllm bench serve summary fields
    p = tmp_path / "profile_export_genai_perf.json"
    p.write_text(json.dumps({"request_throughput": {"unit": "requests/sec", "avg": 3.2},
                             "time_to_first_token": {"unit": "ms", "avg": 120.5}}))
    code, out, err = run_cli("calibrate", "--bench", str(p), "--gpu", "H100 SXM", "--vllm", "0.6.0", "--", *DEPLOY)
    _one_line_exit_2(code, out, err)
    assert "not a `vllm bench serve` result" in err and "profile_export_genai_perf.json" in err


def test_cli_bench_of_another_model_exits_2(run_cli, tmp_path):
    d = json.loads(JSON80.read_text())
    d["model_id"] = "Qwen/Qwen2.5-7B-Instruct"
    p = tmp_path / "other.json"
    p.write_text(json.dumps(d))
    code, out, err = run_cli("calibrate", "--bench", str(p), "--gpu", "H100 SXM", "--vllm", "0.6.0", "--", *DEPLOY)
    _one_line_exit_2(code, out, err)
    assert "'Qwen/Qwen2.5-7B-Instruct'" in err and "'neuralmagic/Meta-Llama-3.1-8B-FP8'" in err


def test_cli_truncated_log_exits_2(run_cli, tmp_path):
    from sched_reader.readers.vllm_log import read_log_text

    text = read_log_text(PHI4)
    p = tmp_path / "cut.log"
    p.write_text(text[: text.index("Model loading took")])
    code, out, err = run_cli("calibrate", "--bench", str(JSON80), "--log", str(p))
    _one_line_exit_2(code, out, err)
    assert "ends before vLLM sized the KV cache" in err


def test_cli_interleaved_log_exits_2(run_cli, tmp_path):
    from sched_reader.readers.vllm_log import read_log_text

    a = read_log_text(PHI4).splitlines()
    b = read_log_text(LOGS / "llmd-google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192.log.gz").splitlines()
    p = tmp_path / "two.log"
    p.write_text("\n".join(x for pair in zip(a, b) for x in pair))
    code, out, err = run_cli("calibrate", "--bench", str(JSON80), "--log", str(p))
    _one_line_exit_2(code, out, err)
    assert "several engines in one log" in err


def test_cli_log_of_another_model_than_the_config_exits_2(run_cli):
    code, out, err = run_cli("calibrate", "--bench", str(JSON80), "--log", str(PHI4), "--gpu", "H100 SXM",
                             "--vllm", "0.6.0", "--", *DEPLOY)
    _one_line_exit_2(code, out, err)
    assert "'microsoft/phi-4'" in err and "'neuralmagic/Meta-Llama-3.1-8B-FP8'" in err


def test_fitted_intake_spaces_a_burst_into_the_engine(spec):
    """A fitted api_intake_ms replaces the endpoint's default intake (an unfitted one does not), and a burst
    of N requests then enters the engine N x (intake - hand-off) later (models/cost/frontend.py's two
    passes): 80 requests at 4 ms instead of 2 ms start ~80 x 2 ms = 160 ms later, so the mean TTFT grows by
    about that much (the engine's own work is the same)."""
    from sched_reader.analyzers.calibrate import _profile, predict
    from sched_reader.models.calibration_profile import frontend_kwargs

    assert "intake_s" not in frontend_kwargs(_profile(1.0, 1.0, 0.0))
    assert frontend_kwargs(_profile(1.0, 1.0, 0.0, intake_ms=4.0))["intake_s"] == pytest.approx(0.004)
    b = read_bench(JSON80)
    req = requests_for(b)
    slow = predict(spec, b, _profile(1.0, 1.0, 0.0, intake_ms=4.0), req)["mean_ttft_ms"]
    fast = predict(spec, b, _profile(1.0, 1.0, 0.0, intake_ms=2.0), req)["mean_ttft_ms"]
    assert 110 < slow - fast < 220


def _synthetic(scale: float):
    """(spec, result) of a Qwen3-0.6B deployment on one H100 whose GPU is ``scale`` x slower than the model
    (a closed loop of 64 requests, 512 in / 128 out, 8 at a time, generated by the model itself)."""
    from sched_reader.analyzers.calibrate import _profile, predict
    from sched_reader.readers.bench_result import BenchResult

    [s] = build_specs([], ["vllm", "serve", "Qwen/Qwen3-0.6B", "--max-model-len", "4096"], gpu="H100 SXM",
                      vllm="0.19.0")
    shape = BenchResult(file="synthetic", completed=64, max_concurrency=8, total_input_tokens=64 * 512,
                        total_output_tokens=64 * 128, output_throughput=1.0)
    t = predict(s, shape, _profile(scale, 1.0, 0.0))
    return s, shape.model_copy(update={"output_throughput": t["output_throughput"], "mean_tpot_ms": t["mean_tpot_ms"],
                                       "median_tpot_ms": t["median_tpot_ms"], "mean_ttft_ms": t["mean_ttft_ms"]})


def test_stall_dominated_tpot_is_not_read_as_per_token_time():
    """A result whose mean TPOT is 2x its median (short requests caught in scheduling stalls) gives the decode
    scale by its output throughput alone: halving its median TPOT (the stall story) leaves the fit at the
    1.5 ** 0.7795 = 1.372 its throughput says, where reading that median would pull it toward 0.75."""
    s, b = _synthetic(1.5)
    b = b.model_copy(update={"median_tpot_ms": b.median_tpot_ms / 2, "mean_tpot_ms": b.median_tpot_ms})
    prof = fit(s, [b])
    assert prof.terms["decode_time_scale"].value == pytest.approx(1.372, rel=0.02)
    assert "output throughput alone for 1 stall-dominated" in prof.terms["decode_time_scale"].supported_by[0]


def test_a_scale_beyond_its_bound_is_clamped_and_flagged():
    """A result 4x slower than the model: the raw fit stops at the decode scale's 3x bound (flagged), and a
    3x offset is read as a model that is off for this deployment: 3 ** 0.9233 = 2.758 (hand calculation in
    test_shrink_weight_hand_calculation), not pulled back to the 25% the core prior expects."""
    s, b = _synthetic(4.0)
    t = fit(s, [b]).terms["decode_time_scale"]
    assert t.at_bound and t.fitted
    assert t.value == pytest.approx(2.758, rel=0.01)


def test_tenstorrent_a100_short_prompt_calibrates_the_long_prompt():
    """tenstorrent/tt-inference-server issue 340 (vLLM 0.9.2, Qwen3-30B-A3B, one A100 80GB, concurrency 1,
    random 128 out): mean TPOT 9.6 ms at 128 prompt tokens, 10.6 ms at 8,192. Calibrated on the 128-token
    run, the 8,192-token run's TPOT lands within 10% of 10.6 ms, closer than the uncalibrated model."""
    from sched_reader.analyzers.calibrate import predict
    from sched_reader.readers.bench_result import BenchResult

    [s] = build_specs([], ["vllm", "serve", "Qwen/Qwen3-30B-A3B"], gpu="A100 SXM4 80GB", vllm="0.9.2")

    def run(n: int, li: int, tpot: float) -> BenchResult:
        return BenchResult(file=f"tt-{li}", completed=n, max_concurrency=1, total_input_tokens=n * li,
                           total_output_tokens=n * 128, output_throughput=0.0, mean_tpot_ms=tpot)

    short, long_ = run(8, 128, 9.6), run(2, 8192, 10.6)
    prof = fit(s, [short])
    after = predict(s, long_, prof)["mean_tpot_ms"]
    before = predict(s, long_, None)["mean_tpot_ms"]
    assert abs(after / 10.6 - 1) < 0.10
    assert abs(after / 10.6 - 1) < abs(before / 10.6 - 1)


def _with_backend(tmp_path, name: str, **keys) -> Path:
    d = json.loads(JSON80.read_text())
    d.pop("backend", None)
    d.update(keys)
    out = tmp_path / name
    out.write_text(json.dumps(d))
    return out


def test_the_results_backend_picks_the_api_entry_point(tmp_path, spec):
    from sched_reader.analyzers.calibrate import bench_endpoint

    # vLLM writes the client's --backend as "backend" and, for older readers, "endpoint_type"
    chat = read_bench(_with_backend(tmp_path, "chat.json", backend="openai-chat", endpoint_type="openai-chat"))
    old = read_bench(_with_backend(tmp_path, "old.json", endpoint_type="openai-chat"))
    plain = read_bench(JSON80)                     # Lambda's 0.6.0 run: backend "vllm" -> /v1/completions
    assert (chat.backend, old.backend, plain.backend) == ("openai-chat", "openai-chat", "vllm")
    assert bench_endpoint([chat, old], spec) == "chat"
    assert bench_endpoint([plain], spec) == "completions"
    with pytest.raises(InputError, match="different API entry points"):
        bench_endpoint([chat, plain], spec)


def test_a_chat_burst_is_replayed_with_the_chat_intake(tmp_path, spec):
    from sched_reader.analyzers.calibrate import predict
    from sched_reader.models.cost.frontend import API_INTAKE_S

    b = read_bench(JSON80)
    r = requests_for(b)
    ttft_chat = predict(spec, b, None, r, "chat")["mean_ttft_ms"]
    ttft_plain = predict(spec, b, None, r, "completions")["mean_ttft_ms"]
    # by hand: the 80 requests of the burst each pass the API server's intake before the engine sees them, so the
    # chat template's extra intake cost delays every first token by about 80 x (6.3 - 1.0) ms = 424 ms
    expected = 80 * (API_INTAKE_S["chat"] - API_INTAKE_S["completions"]) * 1000
    assert expected == pytest.approx(424.0)
    assert ttft_chat - ttft_plain == pytest.approx(expected, rel=0.25)


def test_cli_refuses_results_of_two_entry_points(tmp_path, run_cli):
    chat = _with_backend(tmp_path, "chat.json", backend="openai-chat")
    code, out, err = run_cli("calibrate", "--bench", str(chat), "--bench", str(JSON80), "--vllm", "0.6.0",
                             "--gpu", "H100 SXM", "--", *DEPLOY)
    assert code == 2
    assert "different API entry points" in err and "chat: chat.json" in err and "\n" == err[-1:] and err.count("\n") == 1
