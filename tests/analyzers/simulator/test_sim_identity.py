"""The event-driven engine equals the plain per-iteration reference loop, bit for bit."""

import numpy as np
from hypothesis import given, settings, strategies as st

from sched_reader.analyzers.simulator.cost import LinearStepCost
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.metrics import summarize
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.reference import run_reference
from sched_reader.analyzers.simulator.workloads import Requests

COST = LinearStepCost(base_s=0.003, per_seq_s=1e-6, per_token_s=1.3e-5, per_ctx_s=7e-9, per_pair_s=1e-10)


def _case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    p = rng.integers(1, 300, n)
    o = rng.integers(1, 80, n)
    a = np.cumsum(rng.exponential(rng.choice([0.001, 0.02, 0.2]), n)) * rng.integers(0, 2)
    pid = np.where(rng.random(n) < 0.4, rng.integers(0, 3, n), -1)
    maxc = int(rng.integers(1, 10)) if rng.random() < 0.3 else None
    req = Requests.build(p, o, a, pid, rng.integers(1, 200, n), maxc)
    bs = int(rng.choice([1, 4, 16]))
    need = int(max(-(-(x + y) // bs) for x, y in zip(p, o)))
    eng = str(rng.choice(["v1", "v1", "v0"]))
    chunked = bool(rng.random() < (0.7 if eng == "v1" else 0.3))
    mnbt = int(rng.choice([8, 64, 512, 4096]))
    if not chunked:
        mnbt = max(mnbt, int(max(p + o)))
    par = SchedParams(block_size=bs, num_blocks=int(need + rng.integers(0, 3 * need)),
                      max_num_seqs=int(rng.integers(1, 12)), max_num_batched_tokens=mnbt,
                      enable_chunked_prefill=chunked, long_prefill_token_threshold=int(rng.choice([0, 0, 32])),
                      enable_prefix_caching=bool(rng.random() < 0.5), engine=eng,
                      watermark_blocks=int(rng.integers(0, 2)) if eng == "v0" else 0)
    return req, par


def _summary(run):
    s = summarize(run.rec, run.send_ns, run.prompt, run.target)
    s.pop("timeseries")
    return s


@settings(max_examples=120, deadline=None)
@given(st.integers(min_value=0, max_value=10**9))
def test_engine_identical_to_reference(seed):
    req, par = _case(seed)
    steps = []

    def audit(core):
        core.alloc.check()                        # no block shared or lost, none above the budget
        steps.append(core.alloc.used)

    ref = run_reference(req, par, COST, on_step=audit)
    eng = run_engine(req, par, COST)
    assert _summary(ref) == _summary(eng)         # every metric, exactly
    assert ref.rec.first_ns == eng.rec.first_ns
    assert ref.rec.finish_ns == eng.rec.finish_ns
    assert ref.rec.preemptions == eng.rec.preemptions
    assert max(steps) <= par.num_blocks
    # every request finished exactly once, with its output length
    assert eng.out == eng.target and ref.out == ref.target
    assert all(f > 0 for f in eng.rec.finish_ns)
    assert eng.finished == len(req)


def test_engine_takes_long_stretches():
    """The point of the engine: long decode runs are not stepped one by one."""
    req = Requests.build([100] * 8, [3000] * 8)
    par = SchedParams(block_size=16, num_blocks=10_000, max_num_seqs=8, max_num_batched_tokens=8192)
    eng = run_engine(req, par, COST)
    assert eng.rec.steps == 3000                   # 1 prefill step (emits token 1) + 2999 decode steps
    assert eng.fast_steps + eng.slow_steps < 10
    ref = run_reference(req, par, COST)
    assert _summary(ref) == _summary(eng)
