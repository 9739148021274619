"""The event-driven engine: same decisions as the reference loop, without per-token Python work.

Decoding requests that were scheduled in every iteration since their last prefill ("steady decoders")
are not tracked one by one. They share a global decode counter ``S``: a steady decoder has
``computed = S + off`` and ``out = S + out_off``. What an iteration needs from them is aggregate:
their count ``n``, the sum of their context ``n*(S+1) + sum(off)``, and how many cross a KV block
boundary this step (a histogram of ``off mod block_size``); their finishing steps sit in a heap.

* A step with only steady decoders plus a few other requests (prefill chunks, new admissions) touches
  the others only (:meth:`Engine.fast_step`).
* When nothing can change for k iterations (no arrival that could be admitted, no finish, blocks
  enough for the growth), the k iterations are taken at once (:meth:`Engine.stretch`): their durations
  come from the cost's vector form, KV growth from the histogram, ITL as k values of weight n.
* Anything else (preemption, a budget smaller than the decoders, V0 prefill steps, decoders out of
  order) materializes every request and runs the explicit step of :class:`~.core.SimCore`.

Results are identical to :func:`~.reference.run_reference` (asserted by the tests).
"""

from __future__ import annotations

import heapq
from typing import Callable

import numpy as np

from sched_reader.analyzers.simulator.allocator import CountingAllocator, cdiv
from sched_reader.analyzers.simulator.core import SimCore
from sched_reader.analyzers.simulator.cost import NS_PER_S, StepCost, StepTimer, make_timer
from sched_reader.analyzers.simulator.metrics import Recorder
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.workloads import Requests
from sched_reader.errors import InputError
from sched_reader.limits import MAX_SIM_STEPS

SMALL_STRETCH = 24   # stretches this short are stepped in Python
STRETCH_CAP = 4096   # iterations taken at once, at most (bounds memory and int64 products)


class Engine(SimCore):
    """SimCore plus aggregated steady decoders, fast steps and stretches."""

    def __init__(self, req: Requests, p: SchedParams, timer: StepTimer, rec: Recorder) -> None:
        super().__init__(req, p, timer, CountingAllocator(p.num_blocks), rec)
        n = self.n
        self.isdec = [False] * n
        self.off = [0] * n
        self.out_off = [0] * n
        self.S = 0
        self.n_dec = 0
        self.sum_off = 0
        self.hist = [0] * p.block_size
        self.heap: list[tuple[int, int]] = []
        self.t_last = 0
        self.in_fast = False
        self.fast_steps = self.slow_steps = self.stretches = 0

    # ------------------------------------------------------------------ steady set
    def lazify(self, r: int) -> None:
        """Move r (decode-ready, emitted at ``t_last``) into the steady set."""
        off = self.computed[r] - self.S
        self.off[r] = off
        self.out_off[r] = self.out[r] - self.S
        self.isdec[r] = True
        self.n_dec += 1
        self.sum_off += off
        self.hist[off % self.p.block_size] += 1
        heapq.heappush(self.heap, (self.S + self.target[r] - self.out[r], r))
        self.kv_tokens -= self.computed[r]

    def materialize_all(self) -> None:
        """Write every steady decoder's explicit state back and empty the steady set."""
        bs, S = self.p.block_size, self.S
        for r in self.running:
            if self.isdec[r]:
                c = S + self.off[r]
                self.computed[r] = c
                self.out[r] = S + self.out_off[r]
                self.held[r] = cdiv(c, bs) - (self.pblocks[r] if self.pref[r] >= 0 else 0)
                self.last_emit[r] = self.t_last
                self.kv_tokens += c
                self.isdec[r] = False
        self.n_dec = 0
        self.sum_off = 0
        self.hist = [0] * bs
        self.heap = []

    def _decode_ready(self, r: int, end: int) -> bool:
        return (self.out[r] > 0 and self.computed[r] + 1 == self.prompt[r] + self.out[r]
                and self.last_emit[r] == end)

    # hooks called by SimCore.run_sched
    def extra_tokens(self) -> int:
        return self.n_dec * (self.S + 1) + self.sum_off if self.in_fast else 0

    def extra_batch(self) -> int:
        return self.n_dec if self.in_fast else 0

    def after_timing(self, dur: int, end: int) -> None:
        if not self.in_fast:
            return
        self.S += 1
        S = self.S
        if self.n_dec:
            self.rec.itl_many(dur, self.n_dec)
        heap = self.heap
        while heap and heap[0][0] == S:
            _, r = heapq.heappop(heap)
            self._finish_dec(r, end)

    def _finish_dec(self, r: int, t: int) -> None:
        c = self.S + self.off[r]
        self.computed[r] = c
        self.out[r] = self.S + self.out_off[r]
        self.held[r] = cdiv(c, self.p.block_size) - (self.pblocks[r] if self.pref[r] >= 0 else 0)
        self.isdec[r] = False
        self.n_dec -= 1
        self.sum_off -= self.off[r]
        self.hist[self.off[r] % self.p.block_size] -= 1
        self.kv_tokens += c          # finish() subtracts it again
        self.last_emit[r] = t
        self.finish(r, t)

    # ------------------------------------------------------------------ steps
    def fast_step(self, now: int) -> int | None | bool:
        """One iteration with the steady decoders in aggregate. False when the conditions do not hold."""
        p = self.p
        if (p.engine == "v0" and not p.enable_chunked_prefill) or self.spec_k:
            return False
        nd = self.n_dec
        running = self.running
        if nd:
            if p.max_num_batched_tokens < nd:
                return False
            isdec = self.isdec
            for r in running[nd:]:
                if isdec[r]:
                    return False
            dem = self.hist[(-self.S) % p.block_size]
            if dem > self.alloc.available:
                return False
            if dem:
                self.alloc.take(dem)
        budget = p.max_num_batched_tokens - nd
        sched: list[tuple[int, int]] = []
        before = self.rec.npreempt
        # the non-steady RUNNING requests, in order (the same pass as SimCore.plan_v1)
        budget, preempted = self.schedule_running(sched, nd, budget)
        if not preempted:
            self.plan_waiting(sched, budget)
        self.last_preempted = self.rec.npreempt != before
        if not sched and not nd:
            return None
        self.in_fast = True
        end = self.run_sched(now, sched, nd, nd * (self.S + 1) + self.sum_off)
        self.in_fast = False
        self.t_last = end
        for r, _ in sched:
            if not self.isdec[r] and self.finish_ns_of(r) < 0 and self._decode_ready(r, end):
                self.lazify(r)
        self.fast_steps += 1
        return end

    def finish_ns_of(self, r: int) -> int:
        return self.rec.finish_ns[r]

    def slow_step(self, now: int) -> int | None:
        """Materialize everything, run the explicit step, then rebuild the steady set."""
        self.materialize_all()
        end = self.explicit_step(now)
        if end is None:
            return None
        self.t_last = end
        if self.spec_k or self.p.num_scheduler_steps > 1:   # speculative decoders advance unevenly,
            # multi-step rounds emit together: no steady set, explicit steps
            self.slow_steps += 1
            return end
        for r in self.running:
            if self._decode_ready(r, end):
                self.lazify(r)
        self.slow_steps += 1
        return end

    # ------------------------------------------------------------------ stretches
    def _head_blocked(self) -> bool:
        """True when the first WAITING request cannot be admitted now, and so not before a finish."""
        p = self.p
        if not self.waiting or len(self.running) >= p.max_num_seqs:
            return True
        r = self.waiting[0]
        bs = p.block_size
        if p.engine == "v0" and not p.enable_chunked_prefill:
            num_new = self.prompt[r] + self.out[r]
            return num_new > p.max_num_batched_tokens or \
                cdiv(num_new, bs) > self.alloc.available - p.watermark_blocks
        budget = p.max_num_batched_tokens - self.n_dec
        if budget <= 0:
            return True
        hit = self._prefix_hit(r)
        num_new = self.prompt[r] + self.out[r] - hit * bs
        if 0 < p.long_prefill_token_threshold < num_new:
            num_new = p.long_prefill_token_threshold
        if not p.enable_chunked_prefill and num_new > budget:
            return True
        num_new = min(num_new, budget)
        need = cdiv(hit * bs + num_new, bs) - hit
        e = self.alloc.hit(self.pid[r]) if hit else None
        if e is not None and e.refs == 0:
            return False   # decode growth may evict that entry, and a miss can need fewer blocks
        return need > self.alloc.available - p.watermark_blocks

    def stretch(self, now: int) -> int | None:
        """Take as many identical pure-decode iterations as certainly happen, up to and including the
        next one where a steady decoder finishes; returns the new time."""
        p = self.p
        n = self.n_dec
        if n == 0 or len(self.running) != n or p.max_num_batched_tokens < n or p.num_scheduler_steps > 1:
            return None
        t_arr = None
        if self.waiting:
            if not self._head_blocked():
                return None
        elif len(self.running) < p.max_num_seqs and (
                p.max_num_batched_tokens > n or (p.engine == "v0" and not p.enable_chunked_prefill)):
            t_arr = self.next_send_time()
        # iterations S..S+k-1; the last one is where the earliest steady decoder emits its last token
        k = min(self.heap[0][0] - self.S, STRETCH_CAP)
        bs = p.block_size
        S = self.S
        avail = self.alloc.available
        if (avail // n) * bs < k:   # blocks may run out: exact count of the iterations that fit
            q, rem = divmod(avail, n)
            m, cum = 0, 0
            while True:
                cum += self.hist[(-(S + m)) % bs]
                if cum > rem:
                    break
                m += 1
            k = min(k, q * bs + m)
            if k <= 0:
                return None
        if k <= SMALL_STRETCH:
            end = self._stretch_small(now, n, k, t_arr)
            if end is None:
                return None
        else:
            durs = self.timer.decode_run(n, n * (S + 1) + self.sum_off, k)
            if t_arr is not None:
                starts = np.cumsum(durs) - durs + now
                k = int(np.searchsorted(starts, t_arr, side="left"))
                if k <= 0:
                    return None
                durs = durs[:k]
            hist = np.asarray(self.hist, dtype=np.int64)
            dem = hist[(-(S + np.arange(k, dtype=np.int64))) % bs]
            cum = np.cumsum(dem)
            blocks = self.alloc.used + cum
            tokens = n * (S + 1 + np.arange(k, dtype=np.int64)) + self.sum_off
            end = now + int(durs.sum())
            self.rec.run(durs, blocks, tokens, n, end)
            total = int(cum[-1])
            if total:
                self.alloc.take(total)
            self.S += k
        self.t_last = end
        self.stretches += 1
        heap = self.heap
        S = self.S
        if heap and heap[0][0] == S:
            # the reference admits arrivals at the start of every iteration; before the finish step
            # that only matters now, because a finish changes the concurrency gate
            self.admit_arrivals(end - self.rec.ts_step[-1])
            while heap and heap[0][0] == S:
                _, r = heapq.heappop(heap)
                self._finish_dec(r, end)
        return end

    def _stretch_small(self, now: int, n: int, k: int, t_arr: int | None) -> int | None:
        """A short stretch step by step in Python (cheaper than numpy for a few iterations)."""
        bs = self.p.block_size
        hist, alloc = self.hist, self.alloc
        S, sum_off = self.S, self.sum_off
        used0 = used = alloc.used
        form = self.timer.form(n)
        decode = self.timer.decode
        durs: list[int] = []
        blocks: list[int] = []
        ctxs: list[int] = []
        ends: list[int] = []
        t = now
        j = 0
        while j < k and (t_arr is None or t < t_arr):
            used += hist[(-(S + j)) % bs]
            ctx = n * (S + j + 1) + sum_off
            if form is None:
                d = decode(n, ctx)
            else:   # StepTimer.decode, inlined
                gi, sf, sw, cap, cpu, asy = form
                g = gi + sf * ctx
                if sw:
                    g = g + sw * (ctx if ctx < cap else cap)
                d = round(((g if g >= cpu else cpu) if asy else g + cpu) * NS_PER_S)
                if d < 1:
                    d = 1
            t += d
            durs.append(d)
            blocks.append(used)
            ctxs.append(ctx)
            ends.append(t)
            j += 1
        if j == 0:
            return None
        if used > used0:
            alloc.take(used - used0)     # one claim evicts exactly what the per-step claims would
        self.rec.decode_steps(durs, blocks, ctxs, n, ends)
        self.S = S + j
        return t


def _too_many_steps(eng: "Engine", loops: int) -> InputError:
    done = eng.finished
    est = f"~{loops * eng.n // max(1, done):,}" if done else "an unknown number of"
    return InputError(
        f"the simulation passed {MAX_SIM_STEPS:,} scheduler steps with {done:,} of {eng.n:,} requests finished "
        f"({est} steps in all, {eng.rec.npreempt:,} preemptions so far)",
        key="workload", hint="the KV cache is too small for these lengths (requests are evicted and recomputed); "
                             "lower --num-prompts, the lengths or --max-concurrency")


def run_engine(req: Requests, p: SchedParams, cost: StepCost,
               progress: Callable[[int, int], None] | None = None) -> Engine:
    """Simulate ``req`` under ``p`` event by event; ``progress(done, total)`` is called now and then."""
    eng = Engine(req, p, make_timer(cost, p), Recorder(len(req), p.num_blocks, p.block_size))
    now = 0
    loops = 0
    while eng.finished < eng.n:
        eng.admit_arrivals(now)
        t = eng.stretch(now)
        if t is not None:
            now = t
            continue
        end = eng.fast_step(now)
        if end is False:
            end = eng.slow_step(now)
        if end is None:
            if eng.last_preempted:
                continue
            t = eng.next_send_time()
            if t is None or eng.running:
                raise RuntimeError("engine stalled")  # unreachable when prepare() validated
            now = max(now, t)
            continue
        now = end
        loops += 1
        if progress is not None and loops % 4096 == 0:
            progress(eng.finished, eng.n)
        if loops > MAX_SIM_STEPS:
            raise _too_many_steps(eng, loops)
    eng.materialize_all()
    return eng
