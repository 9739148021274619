"""Roofline cost model of vLLM scheduler iterations and steady-state serving performance.

Public entry points:
  IterationCostModel (iteration.py)     per-iteration time / breakdown / closed forms (simulator input)
  SpeculativeModel (speculative.py)     draft + verify cost, tokens per step, break-even batch
  SteadyStateModel (steady_state.py)    closed-form TTFT / TPOT / throughput at a concurrency or rate
  estimate_performance (performance.py) `vllm bench serve`-shaped estimates for a workload
"""

from sched_reader.models.cost.iteration import DecodeLinearModel, IterationCost, IterationCostModel, TermCost
from sched_reader.models.cost.performance import estimate_performance
from sched_reader.models.cost.speculative import SpeculativeModel, expected_tokens_per_step
from sched_reader.models.cost.steady_state import SteadyState, SteadyStateModel

__all__ = ["DecodeLinearModel", "IterationCost", "IterationCostModel", "SpeculativeModel", "SteadyState",
           "SteadyStateModel", "TermCost", "estimate_performance", "expected_tokens_per_step"]
