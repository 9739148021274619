"""Steady-state estimates and estimate_performance: limits, regimes, result keys, published anchors."""

from __future__ import annotations

from functools import partial

from helpers import effective_config

import pytest

from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.performance import estimate_performance
from sched_reader.models.cost.steady_state import SteadyStateModel
from sched_reader.models.gpu import GPU
from sched_reader.models.workload import Workload

H100 = GPU(id="h100-test", vendor="NVIDIA", name="H100 SXM5 80GB", arch="Hopper", memory_bytes=85520809984,
           cuda_total_bytes=84_929_216_512, hbm_bandwidth_tb_s=3.35,
           tflops={"bf16": 989.5, "fp16": 989.5, "fp8": 1979.0}, interconnect="nvlink",
           link_unidir_gb_s=450.0, source_url="test")
LLAMA8 = ModelArch(id="meta-llama/Llama-3.1-8B", model_type="llama", config=dict(
    hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
    num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False, max_position_embeddings=131072))

# result keys written by `vllm bench serve --save-result` (vllm/benchmarks/serve.py)
BENCH_KEYS = {
    "duration", "completed", "total_input_tokens", "total_output_tokens", "request_throughput",
    "output_throughput", "total_token_throughput",
    *(f"{s}_{m}_ms" for s in ("mean", "median", "std", "p99") for m in ("ttft", "tpot", "itl", "e2el")),
}


cfg = partial(effective_config, vllm_version="0.11.0")


def test_result_has_vllm_bench_serve_keys_and_roofline():
    out = estimate_performance(LLAMA8, H100, cfg(), Workload(max_concurrency=4, num_prompts=100),
                               kv_tokens=400_000)
    assert BENCH_KEYS <= set(out)
    for phase in ("decode", "prefill"):
        r = out["roofline"][phase]
        assert {"flops", "bytes", "intensity_flop_per_byte", "ridge_flop_per_byte", "bound"} <= set(r)
    assert out["roofline"]["decode"]["bound"] == "memory"        # batch 4: GEMV-like
    assert out["roofline"]["prefill"]["bound"] == "compute"      # 1024-token chunk
    assert out["explain"] and all(isinstance(x, str) for x in out["explain"])
    assert out["p99_ttft_ms"] is None      # percentiles need the simulator


def test_batch1_tpot_is_at_least_the_weight_streaming_time():
    out = estimate_performance(LLAMA8, H100, cfg(), Workload(max_concurrency=1, num_prompts=10,
                                                             random_input_len=128, random_output_len=256),
                               kv_tokens=400_000)
    # 15.0 GB of BF16 weights at 3.35 TB/s = 4.48 ms per token at best
    assert out["mean_tpot_ms"] >= 15.0e9 / 3.35e12 * 1e3
    # one client: output throughput = output tokens / request lifetime
    life_s = (out["mean_ttft_ms"] + 255 * out["mean_tpot_ms"]) / 1e3
    assert out["output_throughput"] == pytest.approx(256 / life_s, rel=1e-6)


def test_decode_turns_compute_bound_near_the_ridge_batch():
    # the named constants (no measured kernel table), so that the ridge is the hand calculation below
    m = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg(), use_kernel_tables=False))
    b = m.compute_bound_concurrency(500)
    # GEMM intensity ~ batch FLOP/byte (2 FLOPs per 2-byte weight per token); ridge on H100 with the
    # default efficiencies = 989.5e12 x 0.60 / (3.35e12 x 0.80) = 221.5 -> about 222 sequences
    assert 218 <= b <= 250
    # FP8 doubles the peak and halves the weight bytes, but activations stay 2 bytes: for a k x n GEMM,
    # compute-bound when 2Bkn / (1979e12 x 0.6) >= (kn + 2B(k + n)) / (3.35e12 x 0.8), i.e.
    # B >= 221.5 x (1 + 2B(1/k + 1/n)); MLP (k=4096, n=28672): B ~ 253; QKV (n=6144): B ~ 270
    b8 = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg(quantization="fp8"), use_kernel_tables=False)
                          ).compute_bound_concurrency(500)
    assert 250 <= b8 <= 280
    assert b8 > b


def test_kv_capacity_bounds_concurrency():
    m = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg()), kv_tokens=10_000)
    # per request: ceil((1000 + 1000/2) / 16) x 16 = 1504 tokens -> floor(10000 / 1504) = 6
    assert m.max_running(1000, 1000) == (6, "kv_cache")
    m2 = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg(max_num_seqs=4)), kv_tokens=10_000)
    assert m2.max_running(1000, 1000) == (4, "max_num_seqs")
    st = m.closed_loop(12, 1000, 1000)
    assert st.point.concurrency == 6 and st.limited_by == "kv_cache"
    assert any("queue wait" in n for n in st.notes)


def test_throughput_grows_with_concurrency_and_tpot_degrades():
    m = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg()), kv_tokens=400_000)
    prev_thr, prev_tpot = 0.0, 0.0
    for users in (1, 8, 64, 256):
        st = m.closed_loop(users, 512, 256)
        assert st.output_throughput > prev_thr
        assert st.mean_tpot_s > prev_tpot
        prev_thr, prev_tpot = st.output_throughput, st.mean_tpot_s


def test_data_parallel_replicas_add_throughput():
    one = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg()), kv_tokens=400_000).closed_loop(32, 512, 256)
    two = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg(data_parallel_size=2)),
                           kv_tokens=400_000).closed_loop(64, 512, 256)
    # two independent replicas, each with 32 clients: twice the throughput, the same latency
    assert two.output_throughput == pytest.approx(2 * one.output_throughput, rel=1e-9)
    assert two.mean_tpot_s == pytest.approx(one.mean_tpot_s, rel=1e-9)


def test_low_request_rate_behaves_like_batch_one():
    m = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg()), kv_tokens=400_000)
    st = m.open_loop(0.05, 512, 128, num_prompts=100)
    single = m.closed_loop(1, 512, 128)
    assert st.mode == "open_loop"
    assert st.mean_tpot_s == pytest.approx(single.mean_tpot_s, rel=0.05)
    # Little's law: running requests = rate x request lifetime
    assert st.point.concurrency == pytest.approx(0.05 * st.point.cycle_s, rel=1e-3)


def test_saturating_request_rate_is_flagged():
    m = SteadyStateModel(IterationCostModel(LLAMA8, H100, cfg(max_num_seqs=8)), kv_tokens=400_000)
    st = m.open_loop(1000.0, 1024, 512, num_prompts=200)
    assert st.mode == "saturated" and "saturated" in st.notes[0]


def test_tensor_parallel_speeds_up_small_batch_decode():
    w = Workload(max_concurrency=1, num_prompts=10)
    t1 = estimate_performance(LLAMA8, H100, cfg(), w, kv_tokens=400_000)["mean_tpot_ms"]
    t2 = estimate_performance(LLAMA8, H100, cfg(tensor_parallel_size=2), w, kv_tokens=400_000)["mean_tpot_ms"]
    # half the weights per GPU, plus 65 all-reduces of ~10 us: faster, but not twice as fast
    assert t2 < t1 and t2 > t1 / 2


def test_speculative_block_reports_breakeven():
    out = estimate_performance(LLAMA8, H100, cfg(speculative={"method": "eagle", "num_speculative_tokens": 3}),
                               Workload(max_concurrency=1, num_prompts=10), kv_tokens=400_000)
    sp = out["speculative"]
    assert sp["tokens_per_step"] == pytest.approx(1 + 0.6 + 0.36 + 0.216)
    assert sp["step_at_operating_batch"]["speedup"] > 1.0
    plain = estimate_performance(LLAMA8, H100, cfg(), Workload(max_concurrency=1, num_prompts=10),
                                 kv_tokens=400_000)
    assert out["mean_tpot_ms"] < plain["mean_tpot_ms"]


def test_chat_entry_point_adds_its_fixed_frontend_ttft():
    """TTFT = prefill + the entry point's fixed share. GPUStack measured 59.0 ms mean TTFT for Qwen3-8B chat
    requests at one client on vLLM 0.11.0 with ~12 ms of GPU prefill: ~45 ms outside the GPU for a 0.11.0
    chat request. A 0.10.2 chat request (no per-request template parse) pays less, a completions request
    less still; the request lifetime grows with the share."""
    from sched_reader.models.cost.frontend import endpoint_for
    from sched_reader.models.cost.steady_state import frontend_ttft_s

    chat_011 = endpoint_for("/v1/chat/completions", "qwen3", "0.11.0")
    assert frontend_ttft_s(chat_011) == pytest.approx(59.0e-3 - 12e-3, abs=2.5e-3)
    assert frontend_ttft_s(None) == frontend_ttft_s("completions") < frontend_ttft_s(
        endpoint_for("chat", "qwen3", "0.10.2")) < frontend_ttft_s(chat_011)
    assert frontend_ttft_s("offline") == 0.0
    w = Workload(max_concurrency=1, num_prompts=10, random_input_len=256, random_output_len=128)
    comp = estimate_performance(LLAMA8, H100, cfg(), w, kv_tokens=400_000)
    chat = estimate_performance(LLAMA8, H100, cfg(), w, kv_tokens=400_000, endpoint=chat_011)
    extra_ms = 1e3 * (frontend_ttft_s(chat_011) - frontend_ttft_s("completions"))
    assert 5.0 < extra_ms < 15.0   # a few ms of Jinja work per request, not a second prefill
    assert chat["mean_ttft_ms"] - comp["mean_ttft_ms"] == pytest.approx(extra_ms, abs=1e-6)
    assert chat["mean_tpot_ms"] == pytest.approx(comp["mean_tpot_ms"])
    life = (chat["mean_ttft_ms"] + 127 * chat["mean_tpot_ms"]) / 1e3
    assert chat["output_throughput"] == pytest.approx(128 / life, rel=1e-6)


class _LinearCost:
    """A step of 1 ms + 1 us per scheduled token (decodes + prompt tokens), one GPU, no pipeline."""

    class cfg:  # noqa: N801 - attribute bag standing in for EffectiveConfig
        max_num_batched_tokens = 8192
        enable_chunked_prefill = True
        max_num_seqs = 256
        block_size = 16

    pp = 1
    dp = 1

    def step_time(self, nd, S, Tp, P, nps=0):
        return 1e-3 + 1e-6 * (nd + Tp)


def test_closed_loop_prompt_split_into_even_chunks_is_computed_once():
    # concurrency 1, 8,192-token prompt, 128 output tokens, budget 8,192: the ~1 decoding request
    # leaves 8,191 tokens per step, so the prompt takes 2 steps of 4,096 tokens each (not 2 x 8,191).
    # Decoding share Bd = 127 / (127 + 2); TTFT = 2 x (1 ms + (4,096 + Bd) us) + the completions frontend share
    from sched_reader.models.cost.steady_state import SteadyStateModel, frontend_ttft_s

    m = SteadyStateModel(_LinearCost())
    op = m.operating_point(1.0, 8192.0, 128.0)
    bd = 127.0 / 129.0
    assert op.prefill_steps == 2
    assert op.ttft_s == pytest.approx(2 * (1e-3 + 1e-6 * (4096 + bd)) + frontend_ttft_s("completions"), rel=1e-6)


def test_closed_loop_of_one_decodes_without_other_prompts():
    # at concurrency 1 the next prompt arrives after this request ends: every decode step is a plain
    # 1 ms + Bd us step (no share of a prompt chunk)
    from sched_reader.models.cost.steady_state import SteadyStateModel

    op = SteadyStateModel(_LinearCost()).operating_point(1.0, 8192.0, 128.0)
    assert op.tpot_s == pytest.approx(1e-3 + 1e-6 * 127.0 / 129.0, rel=1e-6)
