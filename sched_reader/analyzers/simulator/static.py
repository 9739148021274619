"""Static batching (the lesson's STATIC mode): pad and wait.

The GPU takes a batch when it is free: it waits up to ``static_window_s`` after the first waiting
request for up to ``max_num_seqs`` requests (fewer if their padded KV reservation would not fit),
pads every prompt to the longest one, prefills them together, then decodes the whole batch for the
longest output; each member streams its own tokens but the batch, and every member's completion, is
held until the slowest one ends. KV is reserved up front for the padded length (contiguous, classic
batching), so unused padding shows up as fragmentation.
"""

from __future__ import annotations

import numpy as np

from sched_reader.analyzers.simulator.allocator import cdiv
from sched_reader.analyzers.simulator.core import prepare
from sched_reader.analyzers.simulator.cost import StepTimer, to_ns
from sched_reader.analyzers.simulator.metrics import Recorder
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.workloads import Requests


class StaticRun:
    """Result holder with the same fields :func:`~.metrics.summarize` reads from an engine."""

    def __init__(self, rec: Recorder, send_ns: list[int], prompt: list[int], target: list[int],
                 notes: list[str]) -> None:
        self.rec, self.send_ns, self.prompt, self.target, self.notes = rec, send_ns, prompt, target, notes


def run_static(req: Requests, p: SchedParams, timer: StepTimer) -> StaticRun:
    """Simulate static batching of ``req`` (times in ns)."""
    prompt, target, notes = prepare(req, p)
    n = len(prompt)
    arr = [int(round(a * 1e9)) for a in req.arrival_s.tolist()]
    rec = Recorder(n, p.num_blocks, p.block_size)
    cap = p.max_num_seqs if req.max_concurrency is None else min(p.max_num_seqs, req.max_concurrency)
    window = to_ns(p.static_window_s)
    bs, nb = p.block_size, p.num_blocks
    t_free = 0
    i = 0
    while i < n:
        last = min(i + cap, n) - 1
        launch = max(t_free, min(arr[i] + window, arr[last]))
        j, P, O = i, 0, 0
        while j < n and j - i < cap and arr[j] <= launch:
            P2, O2 = max(P, prompt[j]), max(O, target[j])
            if (j - i + 1) * cdiv(P2 + O2, bs) > nb:
                break
            P, O = P2, O2
            j += 1
        m = j - i
        blocks = m * cdiv(P + O, bs)
        dur = timer.step(0, 0, m * P, m * P * P, m)
        t = launch + dur
        real_p = np.asarray(prompt[i:j], dtype=np.int64)
        real_o = np.asarray(target[i:j], dtype=np.int64)
        rec.step(dur, blocks, int(real_p.sum()), m, t)
        for r in range(i, j):
            rec.first_ns[r] = t
        if O > 1:
            durs = timer.decode_run(m, m * (P + 1), O - 1)
            steps = np.arange(1, O, dtype=np.int64)
            tokens = (real_p[None, :] + np.minimum(steps[:, None], real_o[None, :] - 1) + 1).sum(axis=1)
            t_end = t + int(durs.sum())
            rec.run(durs, np.full(O - 1, blocks, dtype=np.int64), tokens, m, t_end, itl=False)
            # member r emits tokens 2..O_r at the ends of decode steps 1..O_r-1
            lens = np.sort(real_o - 1)
            prev = 0
            for q, L in enumerate(lens.tolist()):
                if L > prev:
                    rec.itl_chunks.append((durs[prev:L], m - q))
                    prev = L
            t = t_end
        for r in range(i, j):
            rec.finish_ns[r] = t
        t_free = t
        i = j
    return StaticRun(rec, arr, prompt, target, notes)
