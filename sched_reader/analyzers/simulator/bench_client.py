"""Send times of vLLM's legacy ``benchmarks/benchmark_serving.py`` client at a finite request rate (seconds).

The script is deterministic: ``main()`` seeds numpy's legacy global generator (``np.random.seed(args.seed)``,
``--seed`` default 0, a Mersenne Twister ``RandomState``), samples the dataset, and then ``get_request`` sends
request 0 at once and, after each request, sleeps a gap drawn from the same generator:

    interval = np.random.gamma(shape=burstiness, scale=1 / (request_rate * burstiness))

(``burstiness`` 1: exponential gaps, Poisson arrivals). No rescaling: the last request goes out at the sum of
the draws, not at ``num_prompts / request_rate`` as ``vllm bench serve`` arranges from vLLM 0.9
(:class:`~.workloads.Arrival` ``bench_normalize``). The gaps are therefore fixed by the draws the dataset
took before them. ``--dataset-name random`` (``sample_random_requests`` of the 0.6-0.7 script, then
``RandomDataset.sample`` of benchmarks/benchmark_dataset.py) draws, in order: ``prefix_len`` prefix token ids
when ``--random-prefix-len`` > 0, the prompt and output lengths (each ``np.random.randint`` over a range of one
value when the lengths are fixed: range ratio 1.0 in the old ``[L * r, L]`` form, 0 in the later
``[L (1 - r), L (1 + r)]`` form; numpy draws nothing for a one-value range) and one offset per request,
``np.random.randint(0, tokenizer.vocab_size, size=num_prompts)``. The offsets are drawn by masked rejection
(values above ``vocab_size - 1`` under the next power-of-two mask are drawn again), so how many words they use,
and every gap after them, depends on the vocabulary size. Read in vLLM's benchmarks/benchmark_serving.py and
benchmarks/benchmark_dataset.py of March-April 2025 (the client of the vLLM 0.8.2 / 0.8.4 runs of
simon-mo/vLLM-Benchmark) and in the 0.7.0 script's ``sample_random_requests``.

Check (an independent measurement): the saved benchmark_serving JSONs of simon-mo/vLLM-Benchmark (v0.8.2
QwQ-32B on 2x H200 and Llama-3.1-8B-FP8 on 1x H200, v0.8.4 DeepSeek-R1 on 8x H200, 50 prompts of 1,000 tokens
at 10 req/s) keep every request's TTFT and inter-token gaps; aligning each request's gaps with request 0's
(the steps they share) gives every send time, and they follow these draws (seed 0; vocabulary 151,643 for
Qwen2's tokenizer, 128,000 for Llama-3's and DeepSeek-V3's) to within 1 ms per gap (the asyncio sleep's
overshoot, 0.7-1.0 ms a gap on average, not modelled; tests/accuracy/test_legacy_client_arrivals.py). A Poisson
draw from another generator, rescaled as ``vllm bench serve`` does, spreads the QwQ run's 50 sends over 5.0 s
instead of the 3.87 s drawn (3.91 s measured).

``vocab_size``: the tokenizer's base vocabulary (``tokenizer.vocab_size``, without added tokens); the config's
padded ``vocab_size`` is the stand-in when the tokenizer is not at hand. Both round to the same mask and only
a rejected word falling between them changes the draw (for seed 0 and 50 prompts: none for Qwen2, Llama-3
or DeepSeek-V3).
"""

from __future__ import annotations

import math

import numpy as np


def legacy_bench_serving_arrivals(num_prompts: int, request_rate: float, *, vocab_size: int,
                                  seed: int = 0, burstiness: float = 1.0, random_prefix_len: int = 0,
                                  dataset: str = "random") -> np.ndarray:
    """Send times (s, request 0 at 0.0) of ``num_prompts`` requests from ``benchmarks/benchmark_serving.py``
    at ``request_rate`` req/s with ``--seed seed``: the dataset's numpy draws (``random``: prefix ids, the
    one-value length ranges, one offset per request over ``vocab_size``), then one gamma gap per request.
    ``dataset`` other than ``random`` is not supported (ValueError); an infinite rate sends all at 0."""
    n = int(num_prompts)
    if n <= 0:
        return np.zeros(0)
    if request_rate is None or math.isinf(float(request_rate)):
        return np.zeros(n)
    if dataset != "random":
        raise ValueError(f"legacy client arrivals are modelled for the random dataset only, not {dataset!r}")
    if vocab_size < 1 or request_rate <= 0 or burstiness <= 0:
        raise ValueError("vocab_size, request_rate and burstiness must be positive")
    rs = np.random.RandomState(seed)          # the same stream as np.random.seed(seed) on the global one
    if random_prefix_len > 0:
        rs.randint(0, vocab_size, size=int(random_prefix_len))
    rs.randint(0, vocab_size, size=n)         # offsets (the fixed-length ranges draw nothing)
    theta = 1.0 / (float(request_rate) * burstiness)
    gaps = np.array([rs.gamma(shape=burstiness, scale=theta) for _ in range(n - 1)])
    return np.concatenate([[0.0], np.cumsum(gaps)])
