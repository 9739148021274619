"""Roofline cost model of vLLM scheduler iterations and steady-state serving performance.

Public entry points:
  IterationCostModel (iteration.py)   per-iteration time / breakdown, used by the simulator
  estimate_performance (performance.py)  `vllm bench serve`-shaped estimates for a workload
"""

from sched_reader.models.cost.iteration import DecodeLinearModel, IterationCost, IterationCostModel, TermCost

__all__ = ["DecodeLinearModel", "IterationCost", "IterationCostModel", "TermCost"]
