"""A closed loop of fixed-length requests on V0 without chunked prefill runs in synchronized waves.

Published signature (dstack's DeepSeek-R1 study, vLLM 0.7.4.dev181 V0 on 8x H200, SGLang bench_serving,
3,200 in / 800 out, ignore_eos, raw_data/online_results.csv at dstackai/benchmarks 7f37e66):
  concurrency 4:  mean TTFT 975.65 ms, std 10.93 ms (1.1% of the mean)
  concurrency 16: mean ITL 49.77 ms, p99 ITL 50.85 ms (2.2% above the mean)
  concurrency 32: mean ITL 51.82 ms, p99 ITL 53.47 ms (3.2% above the mean)
i.e. every request of a wave waits for the whole wave's prefill (one prefill-only step), and no decode step
ever carries another request's prefill. A chunked scheduler (2,048-token budget) staggers the prompts
instead: the loop desynchronizes and each new prompt's chunks ride on running decodes.
"""

from sched_reader.analyzers.simulator import LinearStepCost, SchedParams, from_bench_flags, simulate

COST = LinearStepCost(base_s=0.02, per_token_s=2.0e-5, per_ctx_s=0.0)  # toy: 20 ms + 20 us per token


def run(chunked: bool, conc: int):
    reqs = from_bench_flags(random_input_len=3200, random_output_len=800, num_prompts=10 * conc,
                            max_concurrency=conc)
    params = SchedParams(block_size=16, num_blocks=100_000, max_num_seqs=256,
                         max_num_batched_tokens=2048 if chunked else 163_840,
                         enable_chunked_prefill=chunked, engine="v0")
    return simulate(reqs, params, COST, percentiles=(99,))


def test_unchunked_v0_closed_loop_gives_every_request_the_wave_prefill():
    r = run(chunked=False, conc=4)
    # one prefill-only step of 4 x 3,200 tokens: 0.02 + 12,800 x 2e-5 = 0.276 s for every request
    assert abs(r["mean_ttft_ms"] - 276.0) < 0.05 * 276.0
    assert r["p99_ttft_ms"] - r["median_ttft_ms"] < 0.05 * r["mean_ttft_ms"]


def test_unchunked_v0_decodes_never_carry_a_prefill():
    r = run(chunked=False, conc=16)
    assert r["p99_itl_ms"] <= 1.05 * r["mean_itl_ms"]


def test_chunked_budget_staggers_the_wave_instead():
    r = run(chunked=True, conc=16)
    # each prompt alone: two chunks (2,048 + 1,152 tokens) alongside the running decodes, far below the
    # whole wave's prefill of 16 x 3,200 tokens (0.02 + 51,200 x 2e-5 = 1.044 s)
    assert r["mean_ttft_ms"] < 0.5 * 1044.0
    assert r["p99_itl_ms"] > 1.5 * r["mean_itl_ms"]
