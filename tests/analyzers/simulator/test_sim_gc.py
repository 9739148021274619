"""run_engine turns the cycle collector off for the run and gives the caller back its own setting."""

import gc

import pytest

from sched_reader.analyzers.simulator.cost import LinearStepCost
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.workloads import Requests

PARAMS = SchedParams(num_blocks=1000, block_size=16, max_num_seqs=8, max_num_batched_tokens=512, max_model_len=2048)


def _req(n: int = 20) -> Requests:
    return Requests.build([100 + i % 50 for i in range(n)], [20 + i % 30 for i in range(n)], [0.01 * i for i in range(n)])


class _Seen(LinearStepCost):
    """The toy cost, noting whether the collector was on while a step was timed."""

    def step_time(self, *a, **k):
        _SEEN.append(gc.isenabled())
        return LinearStepCost.step_time(self, *a, **k)


class _Boom(LinearStepCost):
    def step_time(self, *a, **k):
        raise RuntimeError("boom")


_SEEN: list[bool] = []


@pytest.mark.parametrize("enabled", [True, False])
def test_collector_off_during_run_and_restored(enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        _SEEN.clear()
        eng = run_engine(_req(), PARAMS, _Seen())
        assert eng.finished == 20
        assert _SEEN and not any(_SEEN)          # off while the steps ran
        assert gc.isenabled() is enabled         # the caller's setting, afterwards
    finally:
        (gc.enable if was else gc.disable)()


def test_collector_restored_after_an_exception():
    was = gc.isenabled()
    try:
        gc.enable()
        with pytest.raises(RuntimeError, match="boom"):
            run_engine(_req(), PARAMS, _Boom())
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_callers_frozen_objects_stay_frozen():
    frozen_before = gc.get_freeze_count()
    keep = [[i] for i in range(100)]            # tracked objects of the caller's, frozen below
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen >= len(keep)
        run_engine(_req(), PARAMS, LinearStepCost())
        assert gc.get_freeze_count() == frozen   # the run did not unfreeze them
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0 and frozen_before == 0


def test_engine_lists_leave_the_young_generation():
    """The engine's long-lived lists are promoted once built, so the caller's next young collection does
    not walk them (their identity, checked against the youngest generation's objects)."""
    eng = run_engine(_req(2000), PARAMS, LinearStepCost())
    young = {id(o) for o in gc.get_objects(generation=0)}
    assert id(eng.computed) not in young and id(eng.rec.finish_ns) not in young
