"""Benchmark-procedure warm cache in the evaluator (benchmarks/throughput_accuracy.py), against vLLM source facts and
hand calculations.

vllm/benchmarks/serve.py sends input_requests[0] once before the timed run unless --ready-check-timeout-sec is 0;
its default is 600 in the 0.10.1.1 and 0.12.0 wheels and 0 in the 0.14.1 and 0.16.0 wheels (vLLM PR 30975). The
Scicom 0.14.1 logs print "Skipping endpoint ready check." (ready_check_timeout_sec=0). vLLM V1 looks up at most
num_tokens - 1 prompt tokens in the prefix cache (KVCacheManager.get_computed_blocks), so a whole cached 2048-token
prompt hits 127 16-token blocks (2032 tokens) and 16 tokens are computed."""

from __future__ import annotations

from conftest import load_script

from sched_reader.analyzers.simulator.cost import LinearStepCost
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.models.workload import Workload

BENCH = load_script("benchmarks/throughput_accuracy.py")


def _row(tool: str, version: str, **wl) -> dict:
    return {"engine_version": version, "workload": {"benchmark_tool": tool, **wl}}


def test_which_clients_send_request_0_before_the_timed_run():
    send = BENCH.client_sends_first_prompt
    assert send(_row("vllm bench serve", "0.12.0"))            # ready check default 600 s
    assert send(_row("vllm bench serve --backend vllm", "0.9.2"))
    assert not send(_row("vllm bench serve", "0.14.1"))        # default 0: "Skipping endpoint ready check."
    assert not send(_row("vllm bench serve", "0.16.0"))
    assert send(_row("vllm bench serve --ready-check-timeout-sec 60", "0.16.0"))
    assert not send(_row("vllm bench serve --ready-check-timeout-sec 0", "0.12.0"))
    assert not send(_row("vllm bench serve --num-warmups 0", "0.14.1"))
    assert send(_row("vllm bench serve --num-warmups 2", "0.19.0"))
    assert send(_row("benchmarks/benchmark_serving.py --backend vllm", "0.8.4"))
    assert not send(_row("benchmarks/benchmark_throughput.py --input-len 1000", "0.8.5"))  # offline, no server
    assert send(_row("SGLang bench_serving.py (dstack fork) --backend vllm", "0.7.3"))
    assert send(_row("python3 -m sglang.bench_serving --backend vllm", "0.6.0"))
    # InferenceX's fork has no test request, only --num-warmups copies of request 0
    assert not send(_row("InferenceX experimental benchmark_serving_random.py", "0.16.0"))
    assert send(_row("InferenceX experimental benchmark_serving_random.py --num-warmups 8", "0.16.0"))


def test_row_warm_prompts_takes_the_rows_count_or_the_test_request():
    assert BENCH.row_warm_prompts(_row("vllm bench serve", "0.12.0", warm_prompts=400)) == 400
    assert BENCH.row_warm_prompts(_row("vllm bench serve", "0.12.0")) == 1
    assert BENCH.row_warm_prompts(_row("vllm bench serve --num-warmups 0", "0.14.1")) == 0


def _burst(n: int, prompt: int) -> Workload:
    return Workload(dataset_name="random", random_input_len=prompt, random_output_len=1, num_prompts=n,
                    request_rate="inf")


def test_warm_prompts_layout():
    # 4 requests of 2048 tokens, the first 2 whole in the cache, every one with a 1008-token prefix from a shorter
    # earlier run: prefix lengths 2047, 2047, 1008, 1008; least recently used first: 2, 3 (older run), 1, then 0
    req = BENCH.row_requests(_burst(4, 2048), 0.0, 1008, 2)
    assert req.prefix_len.tolist() == [2047, 2047, 1008, 1008]
    assert req.prefix_id.tolist() == [0, 1, 2, 3]
    assert req.warm_prefixes == (2, 3, 1, 0)
    cold = BENCH.row_requests(_burst(4, 2048))
    assert cold.warm_prefixes == () and cold.prefix_id.tolist() == [-1] * 4


def test_a_whole_cached_prompt_computes_its_last_block_only():
    # one 2048-token prompt, 1 output token, block 16, every token 1 ms: cold the step computes 2048 tokens
    # (2.048 s to the first token); whole in the cache, V1 hits (2048 - 1) // 16 = 127 blocks = 2032 tokens and
    # computes the other 16 (16 ms)
    par = SchedParams(block_size=16, num_blocks=1000, max_num_seqs=4, max_num_batched_tokens=8192,
                      enable_prefix_caching=True)
    cost = LinearStepCost(base_s=0.0, per_token_s=1e-3, per_ctx_s=0.0)
    cold = BENCH.row_requests(_burst(1, 2048))
    warm = BENCH.row_requests(_burst(1, 2048), 0.0, 0, 1)
    assert run_engine(cold, par, cost).rec.first_ns == [2_048_000_000]
    assert run_engine(warm, par, cost).rec.first_ns == [16_000_000]


def test_a_sweep_run_whose_first_prompts_are_warm():
    # the Vultr c=8 case in miniature: 4 prompts of 2048 tokens at once, 1 output token each, chunk budget 8192,
    # every token 1 ms; the previous run on the server sent the first 2. Cold the one step computes 4 x 2048 =
    # 8192 tokens (8.192 s); warm it computes 16 + 16 + 2048 + 2048 = 4128 (4.128 s) for all four first tokens
    par = SchedParams(block_size=16, num_blocks=1000, max_num_seqs=4, max_num_batched_tokens=8192,
                      enable_prefix_caching=True)
    cost = LinearStepCost(base_s=0.0, per_token_s=1e-3, per_ctx_s=0.0)
    assert run_engine(BENCH.row_requests(_burst(4, 2048)), par, cost).rec.first_ns == [8_192_000_000] * 4
    warm = BENCH.row_requests(_burst(4, 2048), 0.0, 0, 2)
    assert run_engine(warm, par, cost).rec.first_ns == [4_128_000_000] * 4
