"""Data parallelism (``--data-parallel-size`` > 1): requests split across independent engine replicas.

vLLM runs each DP rank as its own engine core (own scheduler, own KV cache, own ``max_num_seqs`` and token
budget) behind ONE API server process (``--api-server-count`` defaults to 1: vLLM 0.14.1
entrypoints/openai/cli_args.py), whose client picks an engine for every request
(v1/engine/core_client.py):

* 0.8.x-0.9.1 ``DPAsyncMPClient.get_core_engine_for_request``: ``min(core_engines, key=num_reqs_in_flight)``,
  the engine with the fewest requests in flight (counted by the client itself; ties to the lowest rank);
* 0.9.2-0.10.x ``DPLBAsyncMPClient``: the lowest ``[waiting, running]`` pair published by the DP coordinator,
  0.11.0 on: the lowest ``waiting x 4 + running``; the coordinator publishes the engines' counts at most every
  100 ms (v1/engine/coordinator.py ``min_stats_update_interval_ms``), and between two publications the client
  adds ``client_count`` (1 for one API server) to the chosen engine's waiting count, scanning from engine
  ``eng_start_index`` (0 for one API server).

Both reduce to the three cases this module simulates:

* requests sent together (a burst, or the first ``--max-concurrency`` requests of a closed loop) go round
  robin from rank 0: each pick raises the picked engine's count by one, so the next pick is the next engine;
* in a closed loop, the request sent when one finishes goes to the engine that freed the slot (it alone has
  one request fewer), so every replica keeps its share of the client's concurrency: replica k runs a closed
  loop of ``C // dp (+1 for k < C % dp)`` requests, the requests of indices k, k + dp, k + 2 dp, ...
  (with 0.9.2+ this holds up to the coordinator's 100 ms publication lag);
* open-loop arrivals (a request rate) are assigned round robin in arrival order: the least-loaded choice on
  identical replicas fed one arrival stream; what it does not capture is a replica that falls behind
  (a run of long requests) getting fewer of the next arrivals.

Each replica is simulated by the single-engine simulator with the replica's own KV blocks and scheduler
limits; the runs are merged request by request (metrics over all requests, throughput over the whole run,
i.e. summed over the replicas). For MoE models vLLM runs the DP ranks in lockstep (``DPEngineCoreProc``:
an idle rank runs dummy batches, every rank pads its token count to the largest across ranks when CUDA
graphs are on, v1/worker/dp_utils.py ``coordinate_batch_across_dp``; the experts run on every rank's tokens).
That is priced in the step cost (models/cost/iteration.py: the MoE layer's tokens x dp and the DP dispatch /
combine), which assumes the other ranks carry the same batch; the replicas are otherwise simulated apart, so a
lighter rank does not wait for a heavier one here. Dense DP ranks are independent in vLLM (0.14.1
v1/engine/core.py: "Non-MoE DP ranks are completely independent, so treat like DP=1").

Dense DP in 0.14.1 publishes no load: only ``DPEngineCoreProc`` (MoE) calls ``_maybe_publish_request_counts``,
so the coordinator's counts stay zero and its 5 s idle publication resets the client's counts to zero; the
client's own increments then alternate the engines, which is the round robin :func:`assign` uses for a burst;
in a closed loop the refill then goes to the next engine in turn rather than to the one that freed the slot
(simulated as the refill on its own replica: the same shares while the replicas finish at the same pace).

Warm prefix cache (:func:`warm_homes`): each engine core has its own KV cache and prefix cache, so the blocks
an earlier run left cached for a request sit on the engine that served it then. vLLM's balancer never looks at
the prompt (it picks by the order requests reach ``add_request`` and by queue counts only), and nothing keeps
that order the same from one burst to the next (concurrent HTTP connections, bodies read as they arrive, the
MoE ranks' 100 ms count publications), so this run's engine for a request is taken as unrelated to the earlier
run's: a prefix the earlier run computed for that one request is on this run's engine with probability 1 / dp.
Each replica is given the warm prefixes of 1 in dp of its requests (its 1st, (dp+1)th, ...); a prefix several
requests share stays warm on every replica that serves one of them. Measurement: scicom-llm-benchmaxxing's
vLLM 0.14.1 TP4 x DP2 bursts that re-send the previous run's prompts (tests/data/throughput_public.yaml,
warm_prefix_len) take as long to prefill as half the warm prompts missing: the share missed, read from p99 TTFT
between this simulator's all-found and none-found runs, has median 0.47 over the 12 Qwen3-32B rows whose
prefill step (p99 ITL) the cost model matches within 8% (11 of them 0.29-0.66, one 0.94); the same servers'
cold first runs (1024 tokens) show no such gap.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from sched_reader.analyzers.simulator.metrics import Recorder
from sched_reader.analyzers.simulator.workloads import Requests


def replicas_of(cost: Any) -> int:
    """Data-parallel replicas the step cost models one of (``IterationCostModel.dp``; 1 for a toy cost)."""
    try:
        return max(1, int(getattr(cost, "dp", 1) or 1))
    except (TypeError, ValueError):
        return 1


def concurrency_shares(max_concurrency: int | None, dp: int) -> list[int | None]:
    """Each replica's share of a closed loop's ``max_concurrency`` (None: open loop, no cap)."""
    if max_concurrency is None:
        return [None] * dp
    c = int(max_concurrency)
    return [c // dp + (1 if k < c % dp else 0) for k in range(dp)]


def assign(requests: Requests, dp: int) -> list[np.ndarray]:
    """Indices (into ``requests``, in sending order) of the requests each replica serves: round robin from
    rank 0 (see the module docstring for why this is vLLM's choice in every case simulated here)."""
    idx = np.arange(len(requests), dtype=np.int64)
    return [idx[k::dp] for k in range(dp)]


class ReplicaRuns:
    """The replicas' runs merged into the fields ``metrics.summarize`` and ``api.simulate`` read from one
    engine run (times in ns, per request in the order of the requests given to :func:`run_replicas`).

    KV figures: ``num_blocks`` is the blocks of all replicas together, ``peak_blocks`` the sum of each
    replica's peak (an upper bound of the simultaneous peak), busy time the mean over the replicas (so
    ``kv_mean_use`` is the blocks held over all replicas' busy time / all blocks); ``steps`` counts every
    replica's iterations; the time series interleaves the replicas' steps by end time."""

    def __init__(self, n: int, num_blocks: int, block_size: int, dp: int) -> None:
        self.rec = Recorder(n, num_blocks * dp, block_size)
        self.send_ns = [0] * n
        self.prompt = [0] * n
        self.target = [0] * n
        self.notes: list[str] = []
        self.fast_steps = self.slow_steps = self.stretches = 0
        self.replica_requests: list[int] = []
        self._busy = 0
        self._dp = dp

    def add(self, idx: np.ndarray, run: Any) -> None:
        """Fold one replica's run (its requests at ``idx`` of the whole list) into the merge."""
        rec, out = run.rec, self.rec
        for j, i in enumerate(idx.tolist()):
            out.first_ns[i] = rec.first_ns[j]
            out.finish_ns[i] = rec.finish_ns[j]
            out.preemptions[i] = rec.preemptions[j]
            self.send_ns[i] = run.send_ns[j]
            self.prompt[i] = run.prompt[j]
            self.target[i] = run.target[j]
        out.npreempt += rec.npreempt
        out.itl_v.extend(rec.itl_v)
        out.itl_w.extend(rec.itl_w)
        out.itl_chunks.extend(rec.itl_chunks)
        out.steps += rec.steps
        self._busy += rec.busy_ns
        out.busy_ns = self._busy // self._dp
        out.kv_blocks_ns += rec.kv_blocks_ns
        out.kv_tokens_ns += rec.kv_tokens_ns
        out.peak_blocks += rec.peak_blocks
        for note in run.notes:
            if note not in self.notes:
                self.notes.append(note)
        for name in ("fast_steps", "slow_steps", "stretches"):
            setattr(self, name, getattr(self, name) + int(getattr(run, name, 0) or 0))
        self.replica_requests.append(int(idx.shape[0]))
        # time series: the replicas' points merged by end time (stable: replica order among equal times)
        t = out.ts_t + rec.ts_t
        order = sorted(range(len(t)), key=t.__getitem__)
        for name in ("ts_t", "ts_batch", "ts_blocks", "ts_step"):
            both = getattr(out, name) + getattr(rec, name)
            setattr(out, name, [both[i] for i in order])


def warm_homes(requests: Requests, dp: int) -> dict[int, int]:
    """The replica holding each warm prefix that exactly one request uses (module docstring): request ``i``'s
    (the ``j = i // dp``-th request of replica ``i % dp``) on replica ``(i + j) % dp``, so replica ``k`` finds
    the warm prefixes of its requests ``j = 0, dp, 2 dp, ...``: 1 in dp of them, the expected share when the
    earlier run's engine is unrelated to this run's. Prefixes several requests share are not in the map."""
    warm = set(requests.warm_prefixes)
    users: dict[int, list[int]] = {}
    for i, p in enumerate(requests.prefix_id.tolist()):
        if p in warm:
            users.setdefault(p, []).append(i)
    return {p: (u[0] + u[0] // dp) % dp for p, u in users.items() if len(u) == 1}


def replica_requests(requests: Requests, idx: np.ndarray, k: int, max_concurrency: int | None,
                     homes: dict[int, int]) -> Requests:
    """Replica ``k``'s requests (``requests.take``) with only the warm prefixes cached on replica ``k``
    (``homes`` from :func:`warm_homes`; a prefix not in it is warm wherever it is used)."""
    sub = requests.take(idx, max_concurrency)
    if not sub.warm_prefixes:
        return sub
    return replace(sub, warm_prefixes=tuple(p for p in sub.warm_prefixes if homes.get(p, k) == k))


def run_replicas(requests: Requests, dp: int, run_one: Callable[[Requests], Any], num_blocks: int,
                 block_size: int) -> ReplicaRuns:
    """Split ``requests`` over ``dp`` replicas (:func:`assign`, :func:`concurrency_shares`), run each with
    ``run_one(sub_requests)`` (a single-engine run with one replica's KV blocks and limits) and merge."""
    merged = ReplicaRuns(len(requests), num_blocks, block_size, dp)
    shares = concurrency_shares(requests.max_concurrency, dp)
    homes = warm_homes(requests, dp) if requests.warm_prefixes else {}
    split = assign(requests, dp)
    pid = requests.prefix_id
    assigned_to = {int(pid[i]): k for k, idx in enumerate(split) for i in idx.tolist() if int(pid[i]) in homes}
    for k, idx in enumerate(split):
        if idx.shape[0] == 0:
            merged.replica_requests.append(0)
            continue
        merged.add(idx, run_one(replica_requests(requests, idx, k, shares[k], homes)))
    counts = ", ".join(str(c) for c in merged.replica_requests)
    cap = "" if requests.max_concurrency is None else \
        f"; closed loop of {requests.max_concurrency} split {'/'.join(str(s) for s in shares)}"
    if homes:
        lost = sum(1 for p, k in homes.items() if k != assigned_to.get(p, k))
        merged.notes.insert(0, f"data parallel {dp}: prefix cache per engine; {lost} of the {len(homes)} prompts an "
                               f"earlier run left cached are on another replica than this run's (vLLM's balancer "
                               f"does not route by prompt; 1 in {dp} found, the expected share)")
    merged.notes.insert(0, f"data parallel {dp}: {dp} engine replicas, each with its own {num_blocks:,} KV blocks and "
                           f"scheduler limits, behind one API server; requests per replica {counts} (vLLM's "
                           f"load balancer: round robin for requests sent together, a freed slot refilled on its "
                           f"own replica{cap})")
    return merged
