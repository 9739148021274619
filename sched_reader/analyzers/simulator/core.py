"""Simulator state and vLLM's scheduling step, one iteration at a time (explicit form).

:class:`SimCore` holds every request's progress in plain lists indexed by request id, the RUNNING list
(in scheduling order) and the WAITING deque, a KV allocator and a :class:`~.metrics.Recorder`.
:meth:`SimCore.explicit_step` is one engine iteration, following ``vllm/v1/core/sched/scheduler.py``:

* RUNNING requests first, in order: each asks for all its uncomputed tokens (1 when decoding), capped by
  ``long_prefill_token_threshold`` and the remaining token budget; when its KV blocks cannot be
  allocated, the last RUNNING request is preempted (freed, recomputed later) until it fits or the
  request itself is the one preempted.
* then, only if nothing was preempted, WAITING requests in order while budget, ``max_num_seqs`` and
  blocks allow (a prefix-cache hit skips the cached blocks; without chunked prefill a prompt that does
  not fit the remaining budget stops admission);
* a request whose computed tokens reach its length emits a token at the end of the step.

V0 without chunked prefill: a step is prefill-only when any waiting request can be admitted (budget,
``max_num_seqs``, blocks above the watermark), otherwise decode-only with the same preemption rule.
With ``num_scheduler_steps`` N > 1 (V0 multi-step) a decode batch runs N passes before the scheduler
runs again, a prefill batch one, and a step's or round's output is streamed when the next one's first pass ends
(:meth:`SimCore.run_multi_step`).

V1 with async scheduling (``SchedParams.async_scheduling``): the loops admit new requests up to
:meth:`SimCore.admission_cutoff`, the start of the step that just ended, so a request arriving while a step runs
is scheduled one step later than without it (vLLM 0.14.0 v1/engine/core.py ``step_with_batch_queue``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque

import numpy as np

from sched_reader.analyzers.simulator.allocator import CountingAllocator, cdiv
from sched_reader.analyzers.simulator.cost import StepTimer
from sched_reader.analyzers.simulator.metrics import Recorder
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.workloads import Requests
from sched_reader.errors import InputError

SPEC_SHIFT = 20


def prepare(req: Requests, p: SchedParams) -> tuple[list[int], list[int], list[str]]:
    """Prompt and output lengths the engine will see; outputs are clipped to ``max_model_len``.

    Raises InputError when a request could never be scheduled, so the simulation would stall:

    * its prompt does not fit ``max_model_len``;
    * its KV blocks (prompt + output) exceed the cache less ``watermark_blocks``: admission keeps the
      watermark free (vLLM V0 ``BlockSpaceManager.can_allocate`` returns NEVER and the request is
      ignored when ``num_total_gpu_blocks - num_required_blocks < watermark_blocks``);
    * without chunked prefill, its largest single prefill exceeds ``max_num_batched_tokens``: a request
      preempted after generating ``output - 1`` tokens is recomputed as ``prompt + output - 1`` tokens
      in one step (vLLM V0 ignores a prompt above ``min(max_model_len, max_num_batched_tokens)``; V1
      requires ``max_num_batched_tokens >= max_model_len`` when chunked prefill is off).
    """
    notes: list[str] = []
    # vectorised over requests; the first request that fails any check, checked in the order above, raises
    prompt = np.asarray(req.prompt_len, dtype=np.int64)
    target = np.asarray(req.output_len, dtype=np.int64)
    mml = int(p.max_model_len)
    too_long = prompt >= mml
    over = prompt + target > mml
    if over.any():
        target = np.where(over, mml - prompt, target)
    usable = p.num_blocks - p.watermark_blocks
    need = -(-(prompt + target) // p.block_size)
    no_room = need > usable
    thr = p.long_prefill_token_threshold if p.engine != "v0" else 0
    step = prompt + target - 1
    if not p.enable_chunked_prefill:
        too_big = (step if thr <= 0 else np.minimum(step, thr)) > p.max_num_batched_tokens
    else:
        too_big = np.zeros_like(too_long)
    bad = too_long | no_room | too_big
    if bad.any():
        i = int(np.argmax(bad))
        a = int(prompt[i])
        if too_long[i]:
            raise InputError(f"request {i}: prompt of {a} tokens does not fit max_model_len {p.max_model_len}")
        if no_room[i]:
            wm = f" less {p.watermark_blocks} kept free by the V0 watermark" if p.watermark_blocks else ""
            raise InputError(f"request {i} needs {int(need[i])} KV blocks; the cache has {p.num_blocks}{wm}")
        raise InputError(
            f"request {i}: a prefill of up to {int(step[i])} tokens (prompt + output - 1 after a preemption) does "
            f"not fit max_num_batched_tokens {p.max_num_batched_tokens} without chunked prefill")
    clipped = int(over.sum())
    if clipped:
        notes.append(f"{clipped} request(s) had output_len clipped to fit max_model_len {p.max_model_len}")
    return prompt.tolist(), target.tolist(), notes


def step_shape(sched: list[tuple[int, int]], computed: list[int], out: list[int], prompt: list[int],
               nd: int = 0, ctx: int = 0, pending: list[int] | None = None) -> tuple[int, int, int, int, int]:
    """What one iteration computes, for its step time: ``(nd, ctx, pf, pairs2, npf)``.

    A scheduled ``(request, tokens)`` pair is a decode when it is one token, the request has emitted and
    that token is the next after everything computed (``nd`` += 1, context ``ctx`` += tokens so far + 1);
    otherwise it is a prefill chunk (``npf`` += 1, ``pf`` += tokens, ``pairs2`` += k (2c + k): twice the
    query-key pairs its causal attention computes). ``nd``/``ctx`` start from decoders the caller already
    counted; ``pending``: tokens computed but not yet emitted (V0 multi-step rounds) count as emitted."""
    pf = pairs2 = npf = 0
    for r, k in sched:
        c = computed[r]
        emitted = out[r] if pending is None else out[r] + pending[r]
        if k == 1 and emitted > 0 and c + 1 == prompt[r] + emitted:
            nd += 1
            ctx += c + 1
        else:
            npf += 1
            pf += k
            pairs2 += k * (2 * c + k)
    return nd, ctx, pf, pairs2, npf


def remove_running(running: list[int], r: int) -> None:
    """``running.remove(r)`` for a request id r that RUNNING holds once. RUNNING is in admission order,
    which is id order unless a preempted request was re-admitted ahead of younger ones: r is looked up by
    bisection (about 7 comparisons for 100 requests instead of ~50 on average for the scan) and, when
    the entry found is not r (the order was broken), by the scan. Either way the same entry goes."""
    i = bisect_left(running, r)
    if i < len(running) and running[i] == r:
        del running[i]
    else:
        running.remove(r)


class SimCore:
    """State plus the explicit (per-request) scheduling step. Times are integer nanoseconds."""

    # fixed attributes: the event loop reads and writes them on every step (slot access is the fastest)
    __slots__ = ("p", "timer", "alloc", "rec", "prompt", "target", "notes", "n", "arr_ns", "pid", "pblocks",
                 "computed", "out", "held", "pref", "last_emit", "send_ns", "running", "waiting", "kv_tokens",
                 "nxt", "maxc", "inflight", "reopen_ns", "reopen_q", "resend_ns", "finished", "last_preempted",
                 "spec_k", "lookahead", "spec_en", "acc", "ms_lag", "ms_hold", "async_lag")

    def __init__(self, req: Requests, p: SchedParams, timer: StepTimer, alloc: CountingAllocator,
                 rec: Recorder) -> None:
        self.p = p
        self.timer = timer
        self.alloc = alloc
        self.rec = rec
        self.prompt, self.target, self.notes = prepare(req, p)
        n = len(self.prompt)
        self.n = n
        # seconds -> ns, rounded half to even (as int(round(a * 1e9)) on each float)
        self.arr_ns = np.rint(np.asarray(req.arrival_s, dtype=np.float64) * 1e9).astype(np.int64).tolist()
        caching = p.enable_prefix_caching and p.engine == "v1"
        self.pid = req.prefix_id.tolist() if caching else [-1] * n
        self.pblocks = (np.asarray(req.prefix_len, dtype=np.int64) // p.block_size).tolist() if caching else [0] * n
        if caching and req.warm_prefixes:
            self.warm_cache(req.warm_prefixes)
        self.computed = [0] * n
        self.out = [0] * n
        self.held = [0] * n          # private KV blocks
        self.pref = [-1] * n         # prefix entry referenced, or -1
        self.last_emit = [0] * n
        self.send_ns = [0] * n
        self.running: list[int] = []
        self.waiting: deque[int] = deque()
        self.kv_tokens = 0           # tokens with KV, summed over RUNNING requests
        self.nxt = 0                 # next request not yet sent
        self.maxc = req.max_concurrency
        self.inflight = 0
        self.reopen_ns = 0
        # closed loop: a finished request's successor reaches the engine ``resend_ns`` after its last token
        # (Requests.resend_delay_s); the times its slot opens at the engine, in order
        self.resend_ns = int(round(float(req.resend_delay_s) * 1e9)) if req.max_concurrency is not None else 0
        self.reopen_q: deque[int] = deque()
        self.finished = 0
        self.last_preempted = False
        # speculative decoding (V1 scheduling path only): a decoding request asks for 1 + k tokens; a
        # verify step with j draft tokens commits E(j) = 1 + a + ... + a^j tokens on average, realized
        # deterministically by a per-request fractional accumulator in units of 2**-SPEC_SHIFT tokens
        v1_path = not (p.engine == "v0" and not p.enable_chunked_prefill)
        self.spec_k = int(p.spec_tokens) if (p.spec_tokens and v1_path) else 0
        self.lookahead = int(p.spec_lookahead) if self.spec_k else 0
        a = float(p.spec_acceptance)
        self.spec_en = [round(sum(a ** i for i in range(0, j + 1)) * (1 << SPEC_SHIFT)) for j in range(self.spec_k + 1)]
        self.acc = [0] * n if self.spec_k else []
        # V0 multi-step: tokens computed in a round but streamed at the end of the next one, and the
        # requests whose every token is computed but not yet streamed (they keep their slot and blocks)
        self.ms_lag: dict[int, int] = {}
        self.ms_hold: set[int] = set()
        # V1 async scheduling: the one-step admission lag (admission_cutoff)
        self.async_lag = bool(p.async_scheduling) and p.engine == "v1"

    def warm_cache(self, pids: tuple[int, ...]) -> None:
        """Start with the prefixes ``pids`` (least recently used first) cached and unreferenced, as vLLM's
        prefix cache holds the blocks of prompts an earlier run on the same server computed (freed blocks keep
        their hashes until evicted). When they do not all fit the cache, the most recently used ones survive
        (vLLM evicts the least recently freed first)."""
        size: dict[int, int] = {}
        for pid, b in zip(self.pid, self.pblocks):
            if pid >= 0 and b > 0:
                size.setdefault(pid, b)
        keep: list[tuple[int, int]] = []
        room = self.alloc.available
        for pid in dict.fromkeys(reversed(pids)):
            b = size.get(pid, 0)
            if b <= 0:
                continue
            if b > room:
                break
            room -= b
            keep.append((pid, b))
        for pid, b in reversed(keep):
            self.alloc.warm(pid, b)

    # ------------------------------------------------------------------ arrivals
    def admit_arrivals(self, now: int) -> None:
        """Send every request that has arrived by ``now`` and passes the concurrency gate to WAITING. In a
        closed loop with a resend delay a finished request's slot opens only at its ``reopen_q`` time (its
        successor reaching the engine), and the successor is sent then."""
        arr, maxc, q = self.arr_ns, self.maxc, self.reopen_q
        while self.nxt < self.n and arr[self.nxt] <= now:
            i = self.nxt
            if maxc is None or self.inflight < maxc:
                self.send_ns[i] = max(arr[i], self.reopen_ns)
                self.inflight += 1
            elif q and q[0] <= now:     # the slot a finished request passed on (its successor's resend)
                self.send_ns[i] = max(arr[i], q.popleft())
            else:
                break
            self.waiting.append(i)
            self.nxt += 1

    def admission_cutoff(self, now: int, prev: int) -> int:
        """The latest arrival time (ns) the scheduling decision for the step starting at ``now`` can see.

        ``prev``: the start of the step that ended at ``now`` (ns), or -1 when none did (the engine was idle,
        or the batch decided for ``now`` came out empty). Without async scheduling, or with ``prev`` -1, it is
        ``now``. With async scheduling and a step that just ended it is ``prev``:

        vLLM V1 with ``--async-scheduling`` runs ``EngineCore.step_with_batch_queue`` with a batch queue of 2
        (``max_concurrent_batches`` is 2: v1/executor/uniproc_executor.py, multiproc_executor.py). Each
        iteration of ``run_busy_loop`` first drains the input queue (``_process_input_queue``), then schedules
        and submits the next batch without blocking, and only then blocks on the oldest batch in flight and
        applies its output (``update_from_output``). So step N+1 is scheduled while step N runs (N's tokens count
        as placeholders: ``AsyncScheduler._update_after_schedule``), from the requests that had reached the
        engine by the time step N started; a request arriving while step N runs is read after step N ends, when
        step N+1 is already decided, and its prefill goes into step N+2 (one step later than synchronous
        scheduling, which would schedule it into step N+1). When the engine is idle, the request is scheduled at
        once. When the batch decided for step N+1 is empty (every running request finishes in step N: the
        scheduler skips a request whose last token is a placeholder, ``Scheduler.schedule``'s "Avoid scheduling
        an extra step" test), the empty batch's future completes at once and the loop schedules step N+2 at the
        end of step N with every arrival so far: the callers then ask again with ``prev`` -1. Read in the vLLM
        0.14.0 wheel: vllm/v1/engine/core.py (``run_busy_loop``, ``_process_input_queue``,
        ``step_with_batch_queue``), vllm/v1/core/sched/async_scheduler.py, vllm/v1/core/sched/scheduler.py;
        ``step_with_batch_queue`` is the same in the 0.10.2 wheel (``--async-scheduling``, multiproc executor).
        The cutoff is taken as the start of step N: in vLLM it is a little later, after the host has applied
        step N-1's output (``update_from_output``) and drained the input queue, while step N runs on the GPU.

        Not modelled: a request finishing in step N still holds its ``max_num_seqs`` seat and KV blocks while
        step N+1 is decided (it leaves RUNNING in ``update_from_output`` after N ends), so a WAITING request
        blocked by seats or blocks at step N+1 gets in at N+2; the simulator frees them at the end of step N.
        """
        return prev if self.async_lag and prev >= 0 else now

    def next_send_time(self) -> int | None:
        """Earliest time a not-yet-sent request can enter WAITING, or None (none left or gated)."""
        if self.nxt >= self.n:
            return None
        if self.maxc is not None and self.inflight >= self.maxc:
            q = self.reopen_q
            return max(self.arr_ns[self.nxt], q[0]) if q else None
        return self.arr_ns[self.nxt]

    # ------------------------------------------------------------------ helpers
    def _release(self, r: int) -> None:
        self.alloc.give(self.held[r], r)
        self.held[r] = 0
        if self.pref[r] >= 0:
            self.alloc.unref(self.pref[r])
            self.pref[r] = -1
        self.kv_tokens -= self.computed[r]

    def preempt(self, r: int) -> None:
        """Preempt by recompute: free the request's blocks, forget its KV, put it first in WAITING."""
        self._release(r)
        self.computed[r] = 0
        self.rec.preemptions[r] += 1
        self.rec.npreempt += 1
        self.waiting.appendleft(r)

    def _grow(self, r: int, slots: int) -> bool:
        """Ensure r holds blocks for ``slots`` tokens; False when the cache cannot supply them."""
        pb = self.pblocks[r] if self.pref[r] >= 0 else 0
        need = cdiv(slots, self.p.block_size) - pb - self.held[r]
        if need <= 0:
            return True
        if need > self.alloc.available:
            return False
        self.alloc.take(need, r)
        self.held[r] += need
        return True

    def _prefix_hit(self, r: int) -> int:
        """Blocks of r's shared prefix found in the cache (0 without a usable entry)."""
        pid = self.pid[r]
        if pid < 0:
            return 0
        e = self.alloc.hit(pid)
        pb = self.pblocks[r]
        if e is None or e.blocks != pb or pb * self.p.block_size >= self.prompt[r] + self.out[r]:
            return 0
        return pb

    # ------------------------------------------------------------------ one iteration
    def plan_v1(self, sched: list[tuple[int, int]]) -> None:
        """Fill ``sched`` with (request, tokens) for one V1 iteration, doing allocation and preemption."""
        budget, preempted = self.schedule_running(sched, 0, self.p.max_num_batched_tokens)
        if not preempted:
            self.plan_waiting(sched, budget)

    def schedule_running(self, sched: list[tuple[int, int]], start: int, budget: int) -> tuple[int, bool]:
        """vLLM V1's pass over RUNNING requests from index ``start``: each gets its next tokens (capped by
        the long-prefill threshold and the budget); when blocks run out the last running request is
        preempted. Returns (budget left, whether anything was preempted)."""
        p = self.p
        thr = p.long_prefill_token_threshold
        running = self.running
        spec = self.spec_k
        preempted = False
        i = start
        while i < len(running) and budget > 0:
            r = running[i]
            num_new = self.prompt[r] + self.out[r] - self.computed[r]
            if spec and num_new == 1 and self.out[r] > 0:
                num_new += spec                      # the draft tokens proposed after the last step
            if 0 < thr < num_new:
                num_new = thr
            if num_new > budget:
                num_new = budget
            if spec and num_new > p.max_model_len - 1 - self.computed[r]:
                num_new = p.max_model_len - 1 - self.computed[r]
            ok = self._grow(r, self.computed[r] + num_new + self.lookahead)
            while not ok:
                victim = running.pop()
                self.preempt(victim)
                preempted = True
                if victim == r:
                    break
                ok = self._grow(r, self.computed[r] + num_new + self.lookahead)
            if not ok:
                break
            sched.append((r, num_new))
            self.kv_tokens += num_new
            budget -= num_new
            i += 1
        return budget, preempted

    def plan_waiting(self, sched: list[tuple[int, int]], budget: int) -> None:
        """Admit WAITING requests in order while budget, max_num_seqs and blocks allow."""
        p = self.p
        thr = p.long_prefill_token_threshold
        bs = p.block_size
        while self.waiting and budget > 0 and len(self.running) < p.max_num_seqs:
            r = self.waiting[0]
            hit = self._prefix_hit(r)
            computed = hit * bs
            num_new = self.prompt[r] + self.out[r] - computed
            if 0 < thr < num_new:
                num_new = thr
            if not p.enable_chunked_prefill and num_new > budget:
                break
            if num_new > budget:
                num_new = budget
            need = cdiv(computed + num_new, bs) - hit
            e = self.alloc.hit(self.pid[r]) if hit else None
            touch = e.blocks if (e is not None and e.refs == 0) else 0
            if need > self.alloc.available - touch - p.watermark_blocks:
                break
            self.waiting.popleft()
            if hit:
                self.alloc.ref(self.pid[r])
                self.pref[r] = self.pid[r]
            self.alloc.take(need, r)
            self.held[r] = need
            self.computed[r] = computed
            self.kv_tokens += computed + num_new
            self.running.append(r)
            sched.append((r, num_new))
            budget -= num_new

    def plan_v0(self, sched: list[tuple[int, int]]) -> None:
        """V0 without chunked prefill: prefill-only step if anything is admitted, else decode-only."""
        p = self.p
        budget = p.max_num_batched_tokens
        bs = p.block_size
        while self.waiting and len(self.running) < p.max_num_seqs:
            r = self.waiting[0]
            num_new = self.prompt[r] + self.out[r]
            need = cdiv(num_new, bs)
            if num_new > budget or need > self.alloc.available - p.watermark_blocks:
                break
            self.waiting.popleft()
            self.alloc.take(need, r)
            self.held[r] = need
            self.kv_tokens += num_new
            self.running.append(r)
            sched.append((r, num_new))
            budget -= num_new
        if sched:
            return
        running = self.running
        hold = self.ms_hold
        i = 0
        while i < len(running):
            r = running[i]
            if hold and r in hold:      # multi-step: all tokens computed, the last ones not yet streamed
                i += 1
                continue
            ok = self._grow(r, self.computed[r] + 1)
            while not ok:
                victim = running.pop()
                self.preempt(victim)
                if victim == r:
                    break
                ok = self._grow(r, self.computed[r] + 1)
            if not ok:
                break
            sched.append((r, 1))
            self.kv_tokens += 1
            i += 1

    def explicit_step(self, now: int) -> int | None:
        """Run one iteration starting at ``now``; returns its end time, or None when nothing ran."""
        sched: list[tuple[int, int]] = []
        before = self.rec.npreempt
        if self.p.engine == "v0" and not self.p.enable_chunked_prefill:
            self.plan_v0(sched)
        else:
            self.plan_v1(sched)
        self.last_preempted = self.rec.npreempt != before
        if not sched:
            if self.ms_lag:              # the engine idles: the last round's output is processed now
                self._flush_lag(now)
                return now
            return None
        if self.spec_k:
            return self.run_sched_spec(now, sched)
        if self.p.num_scheduler_steps > 1:
            return self.run_multi_step(now, sched)
        return self.run_sched(now, sched)

    def run_multi_step(self, now: int, sched: list[tuple[int, int]]) -> int:
        """V0 multi-step scheduling (vLLM 0.6-0.10 ``--num-scheduler-steps N``, ``MultiStepModelRunner``):
        a decode batch runs N forward passes in a row before the scheduler runs again (no admission
        meanwhile); a prefill batch runs one pass (the scheduler gives prefills no lookahead slots, so the
        engine does not cache them for more steps). A sequence that reaches its length mid-round stops being
        computed; one whose next KV block cannot be allocated sits the rest of the round out. The host part
        of a step (scheduling, input preparation, output processing: the cost model's ``cpu``) is paid once
        per round, by its first pass; the later passes cost their device time only
        (``StepTimer.decode_device``). Output lags one pass (vLLM 0.6's asynchronous output processing: the
        output callback runs inside the next pass, right after it launches its forward; worker/model_runner.py
        ``model_input.async_callback()``, read in the 0.6.0 and 0.6.6 wheels): a pass's tokens are streamed
        when the next pass ends. Releases before 0.6.3 (``SchedParams.multi_step_stream_outputs`` False) make
        RequestOutputs for a round's last pass only (LLMEngine._process_model_outputs returns early for the
        others), so a round's tokens all stream when the next step's or round's first pass ends. A finished
        request keeps its slot and blocks until its last token streams. Returns the end time of the step or
        round."""
        prompt, target, computed, out = self.prompt, self.target, self.computed, self.out
        members = [r for r, _ in sched]
        pending = dict.fromkeys(members, 0)
        lagged = self.ms_lag           # tokens computed last round, streamed when this round ends
        for r in members:
            pending[r] = lagged.get(r, 0)
        t = now
        each_pass = self.p.multi_step_stream_outputs
        produced: list[int] = []       # requests whose token the previous pass of this round computed
        # a prefill batch gets no lookahead slots (vLLM 0.6 Scheduler._get_num_lookahead_slots returns 0 for
        # prefills), so LLMEngine does not cache it for further steps: it runs one pass
        passes = 1 if any(k > 1 or out[r] + pending[r] == 0 for r, k in sched) else self.p.num_scheduler_steps
        for s in range(passes):
            if s:
                sched = []
                for r in members:
                    if out[r] + pending[r] >= target[r] or not self._grow(r, computed[r] + 1):
                        continue
                    sched.append((r, 1))
                    self.kv_tokens += 1
                if not sched:
                    break
            nd, ctx, pf, pairs2, npf = step_shape(sched, computed, out, prompt, pending=pending)
            # the round's host work (schedule, prepare, output processing) is paid by its first pass
            dur = self.timer.decode_device(nd, ctx) if s and not npf else self.timer.step(nd, ctx, pf, pairs2, npf)
            t += dur
            self.rec.step(dur, self.alloc.used, self.kv_tokens, len(sched), t)
            done_now = []
            for r, k in sched:
                computed[r] += k
                if computed[r] == prompt[r] + out[r] + pending[r]:
                    pending[r] += 1
                    done_now.append(r)
            if not s:   # the previous step's or round's output, processed during this first pass
                for r in members:
                    pending[r] -= lagged.get(r, 0)
                self._flush_lag(t)
            elif each_pass:   # the previous pass's tokens, processed during this one
                for r in produced:
                    pending[r] -= 1
                    if self.emit(r, t):
                        self.finish(r, t)
            produced = done_now
        lag = self.ms_lag
        for r in members:
            k = pending[r]
            if k:
                lag[r] = k
                if out[r] + k >= target[r]:
                    self.ms_hold.add(r)
        return t

    def _flush_lag(self, t: int) -> None:
        """Stream the previous round's deferred tokens at ``t`` (vLLM 0.6's asynchronous output processing
        hands a multi-step round's outputs to the API server while the next round runs)."""
        lag, self.ms_lag = self.ms_lag, {}
        for r, k in lag.items():
            fin = False
            for _ in range(k):
                fin = self.emit(r, t)
            if fin:
                self.ms_hold.discard(r)
                self.finish(r, t)

    def run_sched(self, now: int, sched: list[tuple[int, int]], nd: int = 0, ctx: int = 0) -> int:
        """Time the planned iteration, record it, advance every scheduled request; returns the end time.
        ``nd``/``ctx``: decode sequences and their context already counted by the caller."""
        nd, ctx, pf, pairs2, npf = step_shape(sched, self.computed, self.out, self.prompt, nd, ctx)
        dur = self.timer.step(nd, ctx, pf, pairs2, npf)
        end = now + dur
        self.rec.step(dur, self.alloc.used, self.kv_tokens + self.extra_tokens(), len(sched) + self.extra_batch(),
                      end)
        self.after_timing(dur, end)
        done: list[int] = []
        for r, k in sched:
            self.computed[r] += k
            c = self.computed[r]
            pid = self.pid[r]
            edge = self.pblocks[r] * self.p.block_size
            if pid >= 0 and self.pref[r] < 0 and 0 < edge <= c and c - k < edge \
                    and self.alloc.hit(pid) is None:
                self.alloc.register(pid, self.pblocks[r], r)
                self.held[r] -= self.pblocks[r]
                self.pref[r] = pid
            if c == self.prompt[r] + self.out[r]:
                if self.emit(r, end):
                    done.append(r)
        for r in done:
            self.finish(r, end)
        return end

    def run_sched_spec(self, now: int, sched: list[tuple[int, int]]) -> int:
        """:meth:`run_sched` with speculative decoding: a decoding request scheduled for q tokens
        verifies q - 1 drafts and commits ``floor(acc + E(q - 1))`` of them (at least 1, capped by its
        output length); the rejected slots are given back to ``computed`` (their blocks stay held)."""
        nd = ctx = extra = xp2 = pf = pairs2 = npf = 0
        prompt, out, computed = self.prompt, self.out, self.computed
        for r, k in sched:
            c = computed[r]
            if out[r] > 0 and c + 1 == prompt[r] + out[r]:
                nd += 1
                ctx += c + 1
                x = k - 1
                extra += x
                xp2 += x * (2 * (c + 1) + x)
            else:
                npf += 1
                pf += k
                pairs2 += k * (2 * c + k)
        dur = self.timer.spec_step(nd, ctx, extra, xp2, pf, pairs2, npf, self.spec_k + 1)
        end = now + dur
        self.rec.step(dur, self.alloc.used, self.kv_tokens + self.extra_tokens(), len(sched) + self.extra_batch(),
                      end)
        done: list[int] = []
        mask = (1 << SPEC_SHIFT) - 1
        for r, k in sched:
            c = computed[r]
            if out[r] > 0 and c + 1 == prompt[r] + out[r]:
                tot = self.acc[r] + self.spec_en[k - 1]
                self.acc[r] = tot & mask
                e = min(tot >> SPEC_SHIFT, self.target[r] - out[r])
                computed[r] = c + e
                self.kv_tokens -= k - e
                self.rec.itl_one(end - self.last_emit[r])   # the e tokens arrive together (one chunk)
                self.last_emit[r] = end
                out[r] += e
                if out[r] == self.target[r]:
                    done.append(r)
                continue
            computed[r] = c + k
            self._maybe_register(r, c + k, k)
            if c + k == prompt[r] + out[r]:
                if self.emit(r, end):
                    done.append(r)
        for r in done:
            self.finish(r, end)
        return end

    def _maybe_register(self, r: int, c: int, k: int) -> None:
        pid = self.pid[r]
        edge = self.pblocks[r] * self.p.block_size
        if pid >= 0 and self.pref[r] < 0 and 0 < edge <= c and c - k < edge and self.alloc.hit(pid) is None:
            self.alloc.register(pid, self.pblocks[r], r)
            self.held[r] -= self.pblocks[r]
            self.pref[r] = pid

    # hooks for the event-driven engine (aggregated decoders); the explicit form has none
    def extra_tokens(self) -> int:
        return 0

    def extra_batch(self) -> int:
        return 0

    def after_timing(self, dur: int, end: int) -> None:
        return None

    def emit(self, r: int, t: int) -> bool:
        """Record one output token of r at time t; True when r has produced all its tokens."""
        if self.out[r] == 0:
            self.rec.first_ns[r] = t
        else:
            self.rec.itl_one(t - self.last_emit[r])
        self.last_emit[r] = t
        self.out[r] += 1
        return self.out[r] == self.target[r]

    def finish(self, r: int, t: int) -> None:
        """r is done at t: release its blocks, take it off RUNNING, open its concurrency slot (at t, or
        ``resend_ns`` later when the successor needs the client's round trip)."""
        self.rec.finish_ns[r] = t
        self._release(r)
        remove_running(self.running, r)
        self.finished += 1
        self.open_slot(t)

    def open_slot(self, t: int) -> None:
        """A request finished at ``t``: its concurrency slot opens at ``t``, or, in a closed loop with a resend
        delay, passes to its successor ``resend_ns`` later (``reopen_q``). With async scheduling the successor
        always goes through ``reopen_q`` (at ``t`` when there is no resend delay): it reaches the engine at a
        known time, which the admission cutoff (:meth:`admission_cutoff`, earlier than ``t`` while a step runs)
        is compared with; the gate ``inflight < maxc`` alone would let it join a batch decided before it was sent."""
        if self.resend_ns or (self.async_lag and self.maxc is not None):
            self.reopen_q.append(t + self.resend_ns)
            return
        if self.maxc is not None and self.inflight == self.maxc:
            self.reopen_ns = t
        self.inflight -= 1
