"""Iteration-level scheduler simulator: vLLM's scheduler (and the lesson's toy policies) over a workload.

Public API::

    simulate(requests, params, cost, *, slo_ttft_ms=None, slo_tpot_ms=None, progress=None,
             reference=False) -> dict
    simulate_spec(spec, requests, policies=("vllm",), *, chunk_size=512, ...) -> {policy: dict}
    params_for(policy, cfg, num_blocks, *, chunk_size=512) -> SchedParams

Modules: ``workloads`` (requests), ``policies`` (knobs), ``allocator`` (KV blocks), ``core`` (the
explicit scheduling step), ``reference`` (per-iteration loop), ``engine`` (event-driven), ``static``
(pad-and-wait batching), ``metrics`` (bench-serve metric set), ``cost`` (step-time protocol, clock),
``data_parallel`` (``--data-parallel-size`` > 1: requests split over engine replicas as vLLM's load balancer
does, each replica run by the engine above, the runs merged; ``simulate`` takes the replica count from the
step cost's ``dp``).
"""

from sched_reader.analyzers.simulator.api import engine_inputs, simulate, simulate_spec
from sched_reader.analyzers.simulator.cost import LinearStepCost, StepCost
from sched_reader.analyzers.simulator.policies import POLICIES, SchedParams, params_for
from sched_reader.analyzers.simulator.workloads import (
    Requests, WorkloadSpec, from_bench_flags, load_trace, load_workload_yaml,
)

__all__ = [
    "POLICIES", "LinearStepCost", "Requests", "SchedParams", "StepCost", "WorkloadSpec", "engine_inputs",
    "from_bench_flags", "load_trace", "load_workload_yaml", "params_for", "simulate", "simulate_spec",
]
