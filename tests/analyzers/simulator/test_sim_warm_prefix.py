"""A prefix cache that is warm when the run starts (Requests.warm_prefixes), against hand calculations.

vLLM keeps the blocks of finished requests in its prefix cache (freed, with their hashes) until they are evicted,
least recently freed first: a benchmark run on a server that already served the same prompt prefixes finds them
cached (the Scicom llm-benchmaxxing runs: one server, context sizes in ascending order, seed-0 prompts that
extend the previous run's)."""

from dataclasses import replace

import numpy as np

from sched_reader.analyzers.simulator.allocator import PagedAllocator
from sched_reader.analyzers.simulator.core import SimCore
from sched_reader.analyzers.simulator.cost import LinearStepCost, make_timer
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.metrics import Recorder
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.reference import run_reference
from sched_reader.analyzers.simulator.workloads import Requests

# every prompt token costs 1 ms, nothing else: a step's time is its token count in ms
COST = LinearStepCost(base_s=0.0, per_token_s=1e-3, per_ctx_s=0.0)


def _warm(req: Requests, prefix_tokens: int) -> Requests:
    n = len(req)
    return replace(req, prefix_id=np.arange(n, dtype=np.int64),
                   prefix_len=np.full(n, prefix_tokens, dtype=np.int64), warm_prefixes=tuple(range(n)))


def test_warm_entry_is_cached_unreferenced_and_evictable():
    a = PagedAllocator(10)
    a.warm(3, 4)
    assert a.entries[3].refs == 0 and a.evictable_blocks == 4
    assert a.available == 10 and a.used == 0          # cached, but nobody holds it
    a.check()
    a.take(8, rid=0)                                  # needs 2 of its blocks: the whole entry is evicted
    assert 3 not in a.entries and a.free == 2
    a.check()


def test_warm_prefix_skips_its_tokens_in_the_first_prefill():
    # one request, prompt 2048, 1 output token, block 16, chunk budget 8192: cold, the one step computes
    # 2048 tokens (2.048 s to the first token); with the first 1008 tokens (63 blocks) cached it computes
    # 2048 - 1008 = 1040 tokens (1.040 s)
    par = SchedParams(block_size=16, num_blocks=1000, max_num_seqs=4, max_num_batched_tokens=8192,
                      enable_prefix_caching=True)
    cold = Requests.build([2048], [1])
    warm = _warm(cold, 1008)
    for run in (run_reference, run_engine):
        assert run(cold, par, COST).rec.first_ns == [2_048_000_000]
        assert run(warm, par, COST).rec.first_ns == [1_040_000_000]


def test_prefix_caching_off_ignores_the_warm_cache():
    par = SchedParams(block_size=16, num_blocks=1000, max_num_seqs=4, max_num_batched_tokens=8192,
                      enable_prefix_caching=False)
    warm = _warm(Requests.build([2048], [1]), 1008)
    assert run_engine(warm, par, COST).rec.first_ns == [2_048_000_000]


def test_only_the_most_recent_prefixes_survive_a_small_cache():
    # three 4-block prefixes, least recently used first (0, 1, 2), in a 10-block cache: 12 blocks do not fit,
    # so the oldest (0) is gone and 1 and 2 (8 blocks) are cached
    par = SchedParams(block_size=16, num_blocks=10, max_num_seqs=4, max_num_batched_tokens=8192,
                      enable_prefix_caching=True)
    req = _warm(Requests.build([80, 80, 80], [1, 1, 1]), 64)
    alloc = PagedAllocator(par.num_blocks)
    SimCore(req, par, make_timer(COST, par), alloc, Recorder(len(req), par.num_blocks, par.block_size))
    assert sorted(alloc.entries) == [1, 2] and alloc.evictable_blocks == 8
    assert list(alloc.evictable) == [1, 2]            # eviction order: 1 before 2
    alloc.check()
