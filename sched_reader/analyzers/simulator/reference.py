"""The plain per-iteration reference loop: one scheduling step after another, no shortcuts.

It drives :class:`~.core.SimCore` one iteration at a time, with a :class:`~.allocator.PagedAllocator`
(real block ids) whose invariants can be checked after every step. The event-driven engine must give
identical results; the tests compare the two.
"""

from __future__ import annotations

from typing import Callable

from sched_reader.analyzers.simulator.allocator import PagedAllocator
from sched_reader.analyzers.simulator.core import SimCore
from sched_reader.analyzers.simulator.cost import StepCost, make_timer
from sched_reader.analyzers.simulator.metrics import Recorder
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.workloads import Requests


def run_reference(req: Requests, p: SchedParams, cost: StepCost,
                  on_step: Callable[[SimCore], None] | None = None) -> SimCore:
    """Simulate ``req`` under ``p`` step by step; ``on_step(core)`` is called after every iteration.

    With async scheduling (``p.async_scheduling``, V1) the step that starts when a step ends sees only the
    requests that arrived by the start of the step that ended (:meth:`~.core.SimCore.admission_cutoff`); when
    that batch comes out empty, it is decided again at once with every arrival so far."""
    alloc = PagedAllocator(p.num_blocks)
    core = SimCore(req, p, make_timer(cost, p), alloc, Recorder(len(req), p.num_blocks, p.block_size))
    now = 0
    prev = -1           # start of the step that ended at ``now`` (async scheduling only), -1 when none
    while core.finished < core.n:
        core.admit_arrivals(core.admission_cutoff(now, prev))
        end = core.explicit_step(now)
        if end is None:
            if core.last_preempted:
                continue
            if prev >= 0:           # the batch decided at ``prev`` was empty: decide again now
                prev = -1
                continue
            t = core.next_send_time()
            if t is None or core.running:
                raise RuntimeError("reference loop stalled")  # unreachable when prepare() validated
            now = max(now, t)
            continue
        if core.async_lag:
            prev = now
        now = end
        if on_step is not None:
            on_step(core)
    return core
