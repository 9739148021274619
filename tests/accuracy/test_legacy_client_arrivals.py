"""Send times of vLLM's legacy benchmarks/benchmark_serving.py (sched_reader.analyzers.simulator.bench_client) against
a published run, and the evaluator's choice of rows (benchmarks/throughput_accuracy.row_client_arrivals).

Independent source: simon-mo/vLLM-Benchmark's saved benchmark_serving JSONs keep each request's TTFT and inter-token
gaps (github.com/simon-mo/vLLM-Benchmark, commit e189876's parent, saved-results/v0.8.2/h200-brewster/qwq-32b/
vllm-1000-2000.json and .../llama-8b/vllm-1000-2000.json: 50 prompts of 1,000 tokens at 10 req/s, --seed default).
Every request decodes in the same engine steps as request 0, so its gap sequence is a stretch of request 0's
(matched to under 0.25 ms a gap); its first token is then at a known time after request 0's send, and its send
time is that minus its TTFT. Those reconstructed send times (ms) are written below. The client sleeps a little
longer than each draw (asyncio), so a measured send is never earlier than the drawn one and falls behind by under
3 ms a gap."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_script

from sched_reader.analyzers.simulator.bench_client import legacy_bench_serving_arrivals
from sched_reader.analyzers.simulator.workloads import from_bench_flags

BENCH = load_script("benchmarks/throughput_accuracy.py")

# reconstructed sends (ms) of requests 0-7 and of request 49
QWQ_SENDS_MS = [0.0, 120.4, 127.5, 238.0, 350.0, 374.5, 388.5, 427.2]   # Qwen2 tokenizer, vocab_size 151,643
QWQ_LAST_MS = 3908.1
LLAMA_SENDS_MS = [0.0, 102.8, 119.4, 409.2, 484.2, 538.2, 569.8, 719.0]  # Llama-3 tokenizer, vocab_size 128,000
LLAMA_LAST_MS = 4520.0


def _behind(measured: list[float], drawn: np.ndarray) -> np.ndarray:
    return np.asarray(measured) - drawn[:len(measured)] * 1e3


@pytest.mark.parametrize("vocab, sends, last", [(151_643, QWQ_SENDS_MS, QWQ_LAST_MS),
                                                (128_000, LLAMA_SENDS_MS, LLAMA_LAST_MS)])
def test_sends_follow_the_published_runs(vocab, sends, last):
    t = legacy_bench_serving_arrivals(50, 10.0, vocab_size=vocab)
    assert t.shape == (50,) and t[0] == 0.0
    lag = _behind(sends, t)
    k = np.arange(len(sends))
    assert np.all(lag >= -0.5) and np.all(lag <= 3.0 * k + 0.5)
    assert 0.0 < last - t[-1] * 1e3 < 49 * 3.0
    # the other tokenizer's vocabulary puts the offsets' rejection draws elsewhere: a different sequence
    other = legacy_bench_serving_arrivals(50, 10.0, vocab_size={151_643: 128_000, 128_000: 151_643}[vocab])
    assert np.max(np.abs(_behind(sends, other))) > 50.0


def test_simulator_own_draw_does_not_follow_the_run():
    """What the evaluator used before: its own Poisson draw rescaled to end at num_prompts / rate (5.0 s)."""
    own = from_bench_flags(dataset_name="random", random_input_len=1000, random_output_len=2000, num_prompts=50,
                           request_rate=10.0).arrival_s
    assert abs(own[-1] - 5.0) < 1e-9                 # vs the run's 3.91 s
    assert np.max(np.abs(_behind(QWQ_SENDS_MS, own))) > 50.0


def test_config_vocab_stands_in_for_the_tokenizers():
    """The padded config vocab (152,064 QwQ; 128,256 Llama-3.1; 129,280 DeepSeek-R1) gives the tokenizer's draw
    for 50 prompts at seed 0 (same 2^18 / 2^17 mask, no rejected word between the two sizes)."""
    for tok, cfg in ((151_643, 152_064), (128_000, 128_256), (128_000, 129_280)):
        a = legacy_bench_serving_arrivals(50, 10.0, vocab_size=tok)
        b = legacy_bench_serving_arrivals(50, 10.0, vocab_size=cfg)
        assert np.array_equal(a, b)


def test_seed_prefix_and_rate():
    base = legacy_bench_serving_arrivals(50, 10.0, vocab_size=128_000)
    assert not np.array_equal(base, legacy_bench_serving_arrivals(50, 10.0, vocab_size=128_000, seed=1))
    assert not np.array_equal(base, legacy_bench_serving_arrivals(50, 10.0, vocab_size=128_000,
                                                                  random_prefix_len=100))
    # the gaps scale with 1 / rate (same draws)
    np.testing.assert_allclose(legacy_bench_serving_arrivals(50, 5.0, vocab_size=128_000), 2.0 * base)
    assert np.array_equal(legacy_bench_serving_arrivals(4, float("inf"), vocab_size=128_000), np.zeros(4))
    with pytest.raises(ValueError):
        legacy_bench_serving_arrivals(4, 1.0, vocab_size=128_000, dataset="sharegpt")


def _row(tool: str, **wl) -> dict:
    base = {"dataset": "random", "input_len": 1000, "output_len": 2000, "num_prompts": 50, "request_rate": 10}
    return {"workload": {"benchmark_tool": tool, **{**base, **wl}}}


def test_which_rows_get_the_clients_sends():
    f = BENCH.row_client_arrivals
    t = f(_row("benchmarks/benchmark_serving.py --backend vllm --dataset-name random"), 151_643)
    np.testing.assert_allclose(t * 1e3, legacy_bench_serving_arrivals(50, 10.0, vocab_size=151_643) * 1e3)
    assert not np.array_equal(f(_row("benchmarks/benchmark_serving.py --seed 3"), 151_643), t)
    assert f(_row("vllm bench serve --dataset-name random"), 151_643) is None
    assert f(_row("python3 -m sglang.bench_serving --backend vllm"), 151_643) is None
    assert f(_row("benchmarks/benchmark_serving.py", request_rate="inf"), 151_643) is None
    assert f(_row("benchmarks/benchmark_serving.py", max_concurrency=8), 151_643) is None
    assert f(_row("benchmarks/benchmark_serving.py", dataset="sharegpt"), 151_643) is None
    assert f(_row("benchmarks/benchmark_serving.py", random_range_ratio=0.5), 151_643) is None
