"""Block allocator and preemption, against hand calculations."""

from sched_reader.analyzers.simulator.allocator import PagedAllocator, cdiv
from sched_reader.analyzers.simulator.cost import LinearStepCost
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.reference import run_reference
from sched_reader.analyzers.simulator.workloads import Requests

COST = LinearStepCost(base_s=0.01, per_token_s=0.0, per_ctx_s=0.0)


def test_paged_allocator_tables_and_release():
    a = PagedAllocator(5)
    a.take(2, rid=0)
    a.take(3, rid=1)
    assert a.free == 0 and a.used == 5
    assert set(a.tables[0]).isdisjoint(a.tables[1])
    a.give(2, rid=0)
    assert a.free == 2 and 0 not in a.tables
    a.check()


def test_prefix_entry_is_shared_then_evictable():
    a = PagedAllocator(6)
    a.take(3, rid=0)
    a.register(7, 2, rid=0)            # first 2 blocks of request 0 become prefix 7
    a.ref(7)
    assert a.entries[7].refs == 2 and len(a.tables[0]) == 1
    a.unref(7)
    a.unref(7)
    assert a.evictable_blocks == 2 and a.available == 3 + 2
    a.take(5, rid=1)                   # needs the evictable blocks: prefix 7 is evicted
    assert 7 not in a.entries and a.free == 0
    a.check()


def _two_requests(num_blocks):
    # prompt 16, output 17: at most 16 + 17 - 1 = 32 slots = 2 blocks each (block size 16)
    req = Requests.build([16, 16], [17, 17])
    par = SchedParams(block_size=16, num_blocks=num_blocks, max_num_seqs=4, max_num_batched_tokens=4096)
    return req, par


def test_no_preemption_when_demand_fits():
    req, par = _two_requests(4)        # demand 2 + 2 = 4 blocks
    for run in (run_reference(req, par, COST), run_engine(req, par, COST)):
        assert sum(run.rec.preemptions) == 0
        assert run.rec.peak_blocks == 4


def test_preemption_when_demand_exceeds_blocks():
    req, par = _two_requests(3)        # demand 4 > 3 blocks: the later request must be preempted
    ref = run_reference(req, par, COST, on_step=lambda c: c.alloc.check())
    eng = run_engine(req, par, COST)
    assert ref.rec.preemptions == eng.rec.preemptions
    assert ref.rec.preemptions[1] >= 1 and ref.rec.preemptions[0] == 0
    assert ref.rec.peak_blocks <= 3
    # hand timeline (every step 10 ms): step 1 prefills both (first tokens at 10 ms); steps 2..16 decode
    # both (tokens 2..16, 160 ms); at step 17 request 0 needs a 2nd block -> request 1 (last running)
    # is preempted; request 0 finishes its 17th token at 170 ms.
    assert ref.rec.finish_ns[0] == 170_000_000
    assert ref.rec.first_ns == [10_000_000, 10_000_000]


def test_naive_single_request_hand_timeline():
    cost = LinearStepCost(base_s=0.002, per_token_s=0.001, per_ctx_s=0.0)
    req = Requests.build([10], [4])
    par = SchedParams(block_size=4, num_blocks=100, max_num_seqs=1, max_num_batched_tokens=1 << 40,
                      enable_chunked_prefill=False)
    eng = run_engine(req, par, cost)
    # prefill: 2 ms + 10 tokens x 1 ms = 12 ms; then 3 decode steps of 2 + 1 = 3 ms
    assert eng.rec.first_ns[0] == 12_000_000
    assert eng.rec.finish_ns[0] == 12_000_000 + 3 * 3_000_000
    assert eng.held[0] == 0 and eng.alloc.free == 100
    assert cdiv(10 + 4 - 1, 4) == 4       # blocks it held at its peak
    assert eng.rec.peak_blocks == 4


def test_v0_prefill_only_steps_vs_v1_mixed_steps():
    """Hand timeline, 10 ms per step: A (t=0, 4 in / 5 out) and B (t=15 ms, 4 in / 2 out)."""
    req = Requests.build([4, 4], [5, 2], [0.0, 0.015])
    base = dict(block_size=4, num_blocks=100, max_num_seqs=4, max_num_batched_tokens=4096)
    v0 = run_engine(req, SchedParams(engine="v0", enable_chunked_prefill=False, **base), COST)
    v1 = run_engine(req, SchedParams(engine="v1", **base), COST)
    # V0: steps end 10 (A prefill), 20 (A decode), 30 (B prefill only: A stalls), 40, 50, 60 -> A done at 60
    assert v0.rec.finish_ns == [60_000_000, 40_000_000]
    assert v0.rec.first_ns[1] == 30_000_000
    # V1: step 3 mixes B's prefill with A's decode -> A done at 50
    assert v1.rec.finish_ns == [50_000_000, 40_000_000]
    assert v1.rec.first_ns[1] == 30_000_000
    for p, run in (("v0", v0), ("v1", v1)):
        ref = run_reference(req, SchedParams(engine=p, enable_chunked_prefill=(p == "v1"), **base), COST)
        assert ref.rec.finish_ns == run.rec.finish_ns
