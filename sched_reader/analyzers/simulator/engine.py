"""The event-driven engine: same decisions as the reference loop, without per-token Python work.

Decoding requests that were scheduled in every iteration since their last prefill ("steady decoders")
are not tracked one by one. They share a global decode counter ``S``: a steady decoder has
``computed = S + off`` and ``out = S + out_off``. What an iteration needs from them is aggregate:
their count ``n``, the sum of their context ``n*(S+1) + sum(off)``, and how many cross a KV block
boundary this step (a histogram of ``off mod block_size``); their finishing steps sit in a heap, each entry
one integer ``(finish_step << shift) | request`` (ordered as the pair would be, compared as one int).

* A step with only steady decoders plus a few other requests (prefill chunks, new admissions) touches
  the others only (:meth:`Engine.fast_step`).
* When nothing can change for k iterations (no arrival that could be admitted, no finish, blocks
  enough for the growth), the k iterations are taken at once (:meth:`Engine.stretch`): their durations
  come from the cost's vector form, KV growth from the histogram, ITL as k values of weight n.
* Anything else (preemption, a budget smaller than the decoders, V0 prefill steps, decoders out of
  order) materializes every request and runs the explicit step of :class:`~.core.SimCore`.

Without a concurrency cap, speculative decoding or multi-step rounds, :meth:`Engine.loop_v1` runs the loop
with the common cases of the above written out in one function (the same decisions and arithmetic: an
arrival or a finish comes every few iterations, so calls and attribute lookups were most of the cost).

With async scheduling every loop admits arrivals up to :meth:`~.core.SimCore.admission_cutoff` (the start of the
step that just ended) and a stretch stops one iteration after an arrival instead of at it (:meth:`Engine.stretch`).

Results are identical to :func:`~.reference.run_reference` (asserted by the tests).
"""

from __future__ import annotations

import gc
from heapq import heappop, heappush
from bisect import bisect_right
from typing import Callable

import numpy as np

from sched_reader.analyzers.simulator.allocator import CountingAllocator, cdiv
from sched_reader.analyzers.simulator.core import SimCore, remove_running
from sched_reader.analyzers.simulator.cost import NS_PER_S, StepCost, StepTimer, make_timer, round_float, to_ns
from sched_reader.analyzers.simulator.metrics import Recorder
from sched_reader.analyzers.simulator.policies import SchedParams
from sched_reader.analyzers.simulator.workloads import Requests
from sched_reader.errors import InputError
from sched_reader.limits import MAX_SIM_STEPS

SMALL_STRETCH = 24   # stretches this short are stepped in Python and recorded step by step
PY_STRETCH = 64      # longer ones that end within this many iterations are computed in Python, recorded as one
STRETCH_CAP = 4096   # iterations taken at once, at most (bounds memory and int64 products)


class Engine(SimCore):
    """SimCore plus aggregated steady decoders, fast steps and stretches."""

    __slots__ = ("isdec", "off", "out_off", "S", "n_dec", "sum_off", "hist", "heap", "t_last", "fast_steps",
                 "slow_steps", "stretches", "bs", "mnbt", "v0_whole", "multi_step", "max_seqs", "no_fast", "mixed",
                 "round_s", "thr", "chunked", "wm", "sh", "mask")

    def __init__(self, req: Requests, p: SchedParams, timer: StepTimer, rec: Recorder) -> None:
        super().__init__(req, p, timer, CountingAllocator(p.num_blocks), rec)
        assert not self.alloc.track_ids     # claims and releases below update ``free`` directly
        n = self.n
        self.isdec = [False] * n
        self.off = [0] * n
        self.out_off = [0] * n
        self.S = 0
        self.n_dec = 0
        self.sum_off = 0
        self.hist = [0] * p.block_size
        self.heap: list[int] = []   # (finish step << sh) | request: the pair's order, one int compare
        self.sh = max(1, n.bit_length())
        self.mask = (1 << self.sh) - 1
        self.t_last = 0
        self.fast_steps = self.slow_steps = self.stretches = 0
        # scheduler knobs read on every step
        self.bs = p.block_size
        self.mnbt = p.max_num_batched_tokens
        self.v0_whole = p.engine == "v0" and not p.enable_chunked_prefill
        self.multi_step = p.num_scheduler_steps > 1
        self.max_seqs = p.max_num_seqs
        # read from slots: a dataclass field with a default is also a class attribute, and 3.11 does not
        # specialise an instance attribute load that shadows one (p.long_prefill_token_threshold ...)
        self.thr = p.long_prefill_token_threshold
        self.chunked = p.enable_chunked_prefill
        self.wm = p.watermark_blocks
        self.no_fast = self.v0_whole or bool(self.spec_k) or self.multi_step
        self.mixed = timer._scalar      # the cost's step_time (or its exact compiled form), seconds
        self.round_s = timer.round_s    # round() for what it returns

    # ------------------------------------------------------------------ steady set
    def lazify(self, r: int) -> None:
        """Move r (decode-ready, emitted at ``t_last``) into the steady set."""
        S = self.S
        off = self.computed[r] - S
        self.off[r] = off
        o = self.out[r]
        self.out_off[r] = o - S
        self.isdec[r] = True
        self.n_dec += 1
        self.sum_off += off
        self.hist[off % self.bs] += 1
        heappush(self.heap, ((S + self.target[r] - o) << self.sh) | r)
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

    def _finish_dec(self, r: int, t: int) -> None:
        """Steady decoder r emitted its last token at t: write its state back and finish it
        (:meth:`~.core.SimCore.finish`, inlined for the counting allocator)."""
        S = self.S
        off = self.off[r]
        c = S + off
        self.computed[r] = c
        self.out[r] = S + self.out_off[r]
        self.isdec[r] = False
        self.n_dec -= 1
        self.sum_off -= off
        self.hist[off % self.bs] -= 1
        self.last_emit[r] = t
        self.rec.finish_ns[r] = t
        # release: the private blocks (a prefix entry's blocks are the entry's), then the prefix reference;
        # the tokens were never counted in kv_tokens while steady
        pr = self.pref[r]
        alloc = self.alloc
        if pr >= 0:
            alloc.free += -(-c // self.bs) - self.pblocks[r]     # CountingAllocator.give
            alloc.unref(pr)
            self.pref[r] = -1
        else:
            alloc.free += -(-c // self.bs)
        self.held[r] = 0
        remove_running(self.running, r)
        self.finished += 1
        self.open_slot(t)

    # ------------------------------------------------------------------ steps
    def fast_step(self, now: int) -> int | None | bool:
        """One iteration with the steady decoders in aggregate. False when the conditions do not hold."""
        if self.no_fast:
            return False
        nd = self.n_dec
        running = self.running
        alloc = self.alloc
        if nd:
            if self.mnbt < nd:
                return False
            if len(running) > nd:
                isdec = self.isdec
                for i in range(nd, len(running)):
                    if isdec[running[i]]:
                        return False
            dem = self.hist[(-self.S) % self.bs]
            if dem:
                if dem > alloc.free + alloc.evictable_blocks:
                    return False
                if dem <= alloc.free:               # CountingAllocator.take without eviction
                    alloc.free -= dem
                else:
                    alloc.take(dem)
        budget = self.mnbt - nd
        sched: list[tuple[int, int]] = []
        # the non-steady RUNNING requests, in order (the same pass as SimCore.plan_v1); only they can be
        # preempted (plan_waiting preempts nothing)
        preempted = False
        if len(running) > nd:
            budget, preempted = self.schedule_running(sched, nd, budget)
        if not preempted and self.waiting:
            self.plan_waiting(sched, budget)
        self.last_preempted = preempted
        if not sched and not nd:
            return None
        end = self._run_fast(now, sched, nd, nd * (self.S + 1) + self.sum_off)
        self.t_last = end
        self.fast_steps += 1
        return end

    def _run_fast(self, now: int, sched: list[tuple[int, int]], nd0: int, ctx0: int) -> int:
        """:meth:`~.core.SimCore.run_sched` with ``nd0`` steady decoders (context sum ``ctx0``) besides
        ``sched``: time and record the step, advance every request, finish the steady decoders whose last
        token this is, then move the scheduled requests that emitted and go on decoding into the steady
        set. Returns the end time (ns)."""
        computed, out, prompt = self.computed, self.out, self.prompt
        nd, ctx = nd0, ctx0              # core.step_shape, inlined
        pf = pairs2 = npf = 0
        for r, k in sched:
            c = computed[r]
            o = out[r]
            if k == 1 and o > 0 and c + 1 == prompt[r] + o:
                nd += 1
                ctx += c + 1
            else:
                npf += 1
                pf += k
                pairs2 += k * (2 * c + k)
        if not pf and not npf and nd > 0:          # StepTimer.step
            dur = self.timer.decode(nd, ctx)
        else:
            # cost.to_ns; the callables are read into locals first: a method load from a slot is not
            # specialised by the interpreter (3.11), a plain attribute load is
            mixed, round_s = self.mixed, self.round_s
            dur = round_s(mixed(nd, ctx, pf, pairs2 / 2.0, npf) * NS_PER_S)
            if dur < 1:
                dur = 1
        end = now + dur
        alloc = self.alloc
        rec = self.rec
        # Recorder.step
        blocks = alloc.num_blocks - alloc.free - alloc.evictable_blocks
        rec.steps += 1
        rec.busy_ns += dur
        rec.kv_blocks_ns += blocks * dur
        rec.kv_tokens_ns += (self.kv_tokens + ctx0) * dur
        if blocks > rec.peak_blocks:
            rec.peak_blocks = blocks
        rec.ts_t.append(end)
        rec.ts_batch.append(len(sched) + nd0)
        rec.ts_blocks.append(blocks)
        rec.ts_step.append(dur)
        S = self.S + 1
        self.S = S
        if nd0:
            rec.itl_v.append(dur)
            rec.itl_w.append(nd0)
        heap = self.heap
        if heap:
            sh = self.sh
            while heap and heap[0] >> sh == S:
                self._finish_dec(heappop(heap) & self.mask, end)
        if not sched:
            return end
        done: list[int] = []
        emitted: list[int] = []
        target, last_emit, pid_of = self.target, self.last_emit, self.pid
        for r, k in sched:
            c = computed[r] + k
            computed[r] = c
            if pid_of[r] >= 0:
                self._maybe_register(r, c, k)
            o = out[r]
            if c == prompt[r] + o:      # SimCore.emit
                if o == 0:
                    rec.first_ns[r] = end
                else:
                    rec.itl_v.append(end - last_emit[r])
                    rec.itl_w.append(1)
                last_emit[r] = end
                o += 1
                out[r] = o
                if o == target[r]:
                    done.append(r)
                else:
                    emitted.append(r)
        for r in done:
            self.finish(r, end)
        if emitted:   # decode-ready (emitted at ``end``, computed + 1 == prompt + out): lazify, inlined
            off_of, out_off, isdec, hist, heap, bs = self.off, self.out_off, self.isdec, self.hist, self.heap, self.bs
            sh = self.sh
            sum_off = kv = 0
            for r in emitted:
                c = computed[r]
                off = c - S
                off_of[r] = off
                o = out[r]
                out_off[r] = o - S
                isdec[r] = True
                sum_off += off
                kv += c
                hist[off % bs] += 1
                heappush(heap, ((S + target[r] - o) << sh) | r)
            self.n_dec += len(emitted)
            self.sum_off += sum_off
            self.kv_tokens -= kv
        return end

    def admit_arrivals(self, now: int) -> None:
        """:meth:`~.core.SimCore.admit_arrivals`; without a concurrency cap the arrivals due by ``now`` are
        found by bisection (arrival times are sorted) and sent at their arrival time."""
        if self.maxc is not None:
            SimCore.admit_arrivals(self, now)
            return
        i = self.nxt
        arr = self.arr_ns
        if i >= self.n or arr[i] > now:
            return
        j = i + 1
        if j < self.n and arr[j] <= now:          # more than one: bisect for the rest
            j = bisect_right(arr, now, j + 1)
            self.send_ns[i:j] = arr[i:j]          # max(arrival, reopen_ns): reopen_ns stays 0 uncapped
            self.waiting.extend(range(i, j))
        else:                                     # the common case: one arrival
            self.send_ns[i] = arr[i]
            self.waiting.append(i)
        self.inflight += j - i
        self.nxt = j

    def plan_waiting(self, sched: list[tuple[int, int]], budget: int) -> None:
        """:meth:`~.core.SimCore.plan_waiting` with its lookups hoisted out of the loop (same decisions;
        the reference loop keeps the plain form and the tests compare the two)."""
        waiting = self.waiting
        if not waiting or budget <= 0:
            return
        thr, bs, chunked, wm, max_seqs = self.thr, self.bs, self.chunked, self.wm, self.max_seqs
        running, alloc = self.running, self.alloc
        prompt, out, pid_of, held, computed_of = self.prompt, self.out, self.pid, self.held, self.computed
        kv = 0
        while waiting and budget > 0 and len(running) < max_seqs:
            r = waiting[0]
            pid = pid_of[r]
            hit = self._prefix_hit(r) if pid >= 0 else 0
            computed = hit * bs
            num_new = prompt[r] + out[r] - computed
            if 0 < thr < num_new:
                num_new = thr
            if num_new > budget:
                if not chunked:
                    break
                num_new = budget
            need = -(-(computed + num_new) // bs) - hit
            touch = 0
            if hit:
                e = alloc.hit(pid)
                if e is not None and e.refs == 0:
                    touch = e.blocks
            if need > alloc.free + alloc.evictable_blocks - touch - wm:
                break
            waiting.popleft()
            if hit:
                alloc.ref(pid)
                self.pref[r] = pid
            if need <= alloc.free:
                alloc.free -= need
            else:
                alloc.take(need, r)
            held[r] = need
            computed_of[r] = computed
            kv += computed + num_new
            running.append(r)
            sched.append((r, num_new))
            budget -= num_new
        self.kv_tokens += kv

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
        if len(self.running) >= self.max_seqs:
            return True
        r = self.waiting[0]
        bs = self.bs
        alloc = self.alloc
        available = alloc.free + alloc.evictable_blocks
        if self.v0_whole:
            num_new = self.prompt[r] + self.out[r]
            return num_new > self.mnbt or cdiv(num_new, bs) > available - self.wm
        budget = self.mnbt - self.n_dec
        if budget <= 0:
            return True
        hit = self._prefix_hit(r) if self.pid[r] >= 0 else 0
        num_new = self.prompt[r] + self.out[r] - hit * bs
        thr = self.thr
        if 0 < thr < num_new:
            num_new = thr
        if num_new > budget:
            if not self.chunked:
                return True
            num_new = budget
        need = -(-(hit * bs + num_new) // bs) - hit
        if hit:
            e = alloc.hit(self.pid[r])
            if e is not None and e.refs == 0:
                return False   # decode growth may evict that entry, and a miss can need fewer blocks
        return need > available - self.wm

    def stretch(self, now: int, prev: int = -1) -> int | None:
        """Decode stretches from ``now`` one after the other while nothing waits and nothing arrives by the
        end of the last: what the event loop would do next (its admission check would find nothing to
        admit, then ask for another stretch), without going round it. Most stretches end at a finish while
        nothing waits: the batch just shrinks. Returns the new time, None when none ran.

        One stretch takes as many identical pure-decode iterations as certainly happen, up to and including
        the next one where a steady decoder finishes: none when a request other than the steady decoders
        runs, when the first WAITING request could be admitted, or when no KV block is left for the growth.
        A short one (k <= SMALL_STRETCH: most of them, a finish or an arrival is usually a few iterations
        away) is stepped here, :meth:`_stretch_py` with ``merged`` False inlined (the same arithmetic, in the
        same order; the lookups hoisted out of the loop); its finishes call :meth:`_finish_dec`.

        With async scheduling (``async_lag``) an arrival stops the stretch one iteration later: before the first
        iteration whose predecessor started at or after it (:meth:`~.core.SimCore.admission_cutoff`; the
        iteration that starts at or after the arrival was decided before it). ``prev``: the start of the
        iteration that ended at ``now``, -1 when none did (the caller admitted everything up to ``now``)."""
        if self.multi_step:
            return None
        lag = self.async_lag
        tp = prev           # start of the iteration before the next one (async scheduling)
        arr, N, maxc, mnbt = self.arr_ns, self.n, self.maxc, self.mnbt
        running, waiting, heap, alloc, bs, sh = self.running, self.waiting, self.heap, self.alloc, self.bs, self.sh
        hist, rec, timer, max_seqs, v0_whole = self.hist, self.rec, self.timer, self.max_seqs, self.v0_whole
        forms = timer._forms
        ts_t, ts_batch, ts_blocks, ts_step, itl_v, itl_w = (rec.ts_t, rec.ts_batch, rec.ts_blocks, rec.ts_step,
                                                             rec.itl_v, rec.itl_w)
        end = None
        t = now
        while True:
            n = self.n_dec
            if n == 0 or len(running) != n or mnbt < n:
                return end
            t_arr = _NEVER
            if waiting:
                if not self._head_blocked():
                    return end
            elif n < max_seqs and (mnbt > n or v0_whole):
                i = self.nxt                  # SimCore.next_send_time
                if i < N and (maxc is None or self.inflight < maxc):
                    t_arr = arr[i]
                elif i < N and self.reopen_q:
                    t_arr = max(arr[i], self.reopen_q[0])
            # iterations S..S+k-1; the last one is where the earliest steady decoder emits its last token
            S = self.S
            k = (heap[0] >> sh) - S
            if k > STRETCH_CAP:
                k = STRETCH_CAP
            free = alloc.free
            avail = free + alloc.evictable_blocks
            if (avail // n) * bs < k:   # blocks may run out: exact count of the iterations that fit
                q, rem = divmod(avail, n)
                m, cum = 0, 0
                while True:
                    cum += hist[(-(S + m)) % bs]
                    if cum > rem:
                        break
                    m += 1
                k = min(k, q * bs + m)
                if k <= 0:
                    return end
            # async scheduling: one iteration more once an arrival is due, unless its predecessor started after it
            ext = lag and tp < t_arr
            if k > SMALL_STRETCH:
                ta = None if t_arr == _NEVER else t_arr
                e = self._stretch_py(t, n, k, ta, True, ext)
                t2 = self._stretch_numpy(t, n, k, ta, ext) if e is False else e
                if t2 is None:
                    return end
                t = t2
                S = self.S
            else:
                # _stretch_py(t, n, k, t_arr, merged=False, ext), inlined
                if t >= t_arr and not ext:
                    return end
                form = forms.get(n, False)
                if form is False:
                    form = timer.form(n)
                ctx = n * (S + 1) + self.sum_off
                used0 = used = alloc.num_blocks - free - alloc.evictable_blocks
                t0 = t
                kvb = kvt = 0
                h = -S
                if form is not None:
                    gi, sf, sw, cap, cpu, asy = form
                    for j in range(k):
                        if t >= t_arr:
                            if not ext:
                                break
                            ext = False          # async: this iteration was decided before the arrival
                            t_arr = t + 1
                        used += hist[(h - j) % bs]
                        g = gi + sf * ctx        # StepTimer.decode, inlined: the same expression
                        if sw:
                            g = g + sw * (ctx if ctx < cap else cap)
                        d = round_float(((g if g >= cpu else cpu) if asy else g + cpu) * NS_PER_S)
                        if d < 1:
                            d = 1
                        t += d
                        ts_t.append(t)
                        ts_batch.append(n)
                        ts_blocks.append(used)
                        ts_step.append(d)
                        itl_v.append(d)
                        itl_w.append(n)
                        kvb += used * d
                        kvt += ctx * d
                        ctx += n
                    else:                        # all k taken (a break: j taken, the arrival came first)
                        j = k
                else:
                    scalar = timer._scalar
                    j = 0
                    while j < k:                 # StepTimer.decode without a closed form: the same call
                        if t >= t_arr:
                            if not ext:
                                break
                            ext = False          # async: this iteration was decided before the arrival
                            t_arr = t + 1
                        used += hist[(h - j) % bs]
                        d = to_ns(scalar(n, ctx, 0, 0.0, 0))
                        t += d
                        ts_t.append(t)
                        ts_batch.append(n)
                        ts_blocks.append(used)
                        ts_step.append(d)
                        itl_v.append(d)
                        itl_w.append(n)
                        kvb += used * d
                        kvt += ctx * d
                        ctx += n
                        j += 1
                if not j:
                    return end
                if used > used0:
                    grow_by = used - used0       # one claim evicts exactly what the per-step claims would
                    if grow_by <= free:
                        alloc.free = free - grow_by
                    else:
                        alloc.take(grow_by)
                rec.steps += j
                rec.busy_ns += t - t0
                rec.kv_blocks_ns += kvb
                rec.kv_tokens_ns += kvt
                if used > rec.peak_blocks:       # blocks only grow during a stretch: the last is the peak
                    rec.peak_blocks = used
                S += j
                self.S = S
            self.t_last = t
            self.stretches += 1
            tp = t - ts_step[-1]
            if heap and heap[0] >> sh == S:
                # the reference admits arrivals at the start of every iteration; before the finish step
                # that only matters now, under a concurrency cap, because a finish changes the gate (uncapped,
                # each is sent at its arrival time whenever it is admitted, and a finish does not read WAITING)
                if maxc is not None:
                    self.admit_arrivals(t - ts_step[-1])
                while heap and heap[0] >> sh == S:
                    self._finish_dec(heappop(heap) & self.mask, t)
            end = t
            if waiting or (self.nxt < N and arr[self.nxt] <= t):
                return end

    def _stretch_py(self, now: int, n: int, k: int, t_arr: int | None, merged: bool,
                    ext: bool = False) -> int | None | bool:
        """Up to k pure-decode iterations of the n steady decoders in Python, none starting at or after
        ``t_arr`` (``ext``, async scheduling: but the first one that does, decided before the arrival); returns
        the end time, None when none ran.

        ``merged`` False (k <= SMALL_STRETCH): each iteration is appended to the recorder, as
        :meth:`~.metrics.Recorder.decode_steps` would. ``merged`` True: the stretch is recorded as one entry,
        as :meth:`_stretch_numpy` records it (the same integers: the decode closed form in Python and in numpy
        is the same arithmetic); only when it is over within PY_STRETCH iterations (its k, or the next
        arrival) and the cost has a closed form, else False, with nothing changed: the caller takes the
        numpy path."""
        timer = self.timer
        form = timer._forms.get(n, False)
        if form is False:
            form = timer.form(n)
        S = self.S
        ctx0 = n * (S + 1) + self.sum_off
        if t_arr is None:
            t_arr = _NEVER
        kk = k
        if merged:
            if form is None:
                return False
            if k > PY_STRETCH:
                if t_arr - now > PY_STRETCH * timer.decode(n, ctx0):
                    return False         # durations grow with context: the arrival is PY_STRETCH+ steps away
                kk = PY_STRETCH
        hist, alloc, rec = self.hist, self.alloc, self.rec
        bs = self.bs
        used0 = used = alloc.num_blocks - alloc.free - alloc.evictable_blocks
        # blocks claimed by iteration j: the sequences at offset (-S - j) mod bs cross a block boundary
        h = (-S) % bs
        if kk <= h + 1:                  # offsets h, h-1, ..., h-kk+1: no wrap-around
            grow = hist[h - kk + 1:h + 1]
            grow.reverse()
        else:
            grow = hist[h::-1] + hist[:h:-1]
            if kk != bs:
                grow = (grow * -(-kk // bs))[:kk] if kk > bs else grow[:kk]
        if merged:
            ends: list[int] = []
            blocks: list[int] = []
            durs: list[int] = []
        else:
            ends, blocks, durs = rec.ts_t, rec.ts_blocks, rec.ts_step
        j0 = len(durs)
        t = now
        ctx = ctx0
        kvb = kvt = 0
        if form is not None:
            gi, sf, sw, cap, cpu, asy = form
        else:
            scalar = timer._scalar
        for dem in grow:
            if t >= t_arr:
                if not ext:
                    break
                ext = False              # async: this iteration was decided before the arrival
                t_arr = t + 1
            used += dem
            if form is None:             # StepTimer.decode without a closed form: the same call
                d = to_ns(scalar(n, ctx, 0, 0.0, 0))
            else:                        # StepTimer.decode, inlined: the same expression
                g = gi + sf * ctx
                if sw:
                    g = g + sw * (ctx if ctx < cap else cap)
                d = round_float(((g if g >= cpu else cpu) if asy else g + cpu) * NS_PER_S)
                if d < 1:
                    d = 1
            t += d
            ends.append(t)               # (list.append looked up per step: cheaper than a bound-method
            blocks.append(used)          # attribute load per stretch, which 3.11 does not specialise)
            durs.append(d)
            kvb += used * d
            kvt += ctx * d
            ctx += n
        j = len(durs) - j0
        if not j:
            return None
        if merged and j < k and t < t_arr:
            return False                 # not over within PY_STRETCH: nothing was changed
        if used > used0:
            grow_by = used - used0       # one claim evicts exactly what the per-step claims would
            if grow_by <= alloc.free:
                alloc.free -= grow_by
            else:
                alloc.take(grow_by)
        rec.steps += j
        rec.busy_ns += t - now
        rec.kv_blocks_ns += kvb
        rec.kv_tokens_ns += kvt
        if used > rec.peak_blocks:       # blocks only grow during a stretch: the last is the peak
            rec.peak_blocks = used
        self.S = S + j
        if merged:                       # Recorder.run
            rec.itl_chunks.append((np.array(durs, dtype=np.int64), n))
            rec.ts_t.append(t)
            rec.ts_batch.append(n)
            rec.ts_blocks.append(used)
            rec.ts_step.append(d)
        elif j == 1:                     # Recorder.decode_steps
            rec.ts_batch.append(n)
            rec.itl_v.append(d)
            rec.itl_w.append(n)
        else:
            nn = [n] * j
            rec.ts_batch.extend(nn)
            rec.itl_v.extend(durs[-j:])
            rec.itl_w.extend(nn)
        return t

    def _stretch_numpy(self, now: int, n: int, k: int, t_arr: int | None, ext: bool = False) -> int | None:
        """k decode iterations (fewer when the next arrival comes first: none starting at or after it, but with
        ``ext``, async scheduling, the first one that does) in numpy, recorded as one entry."""
        S = self.S
        bs = self.bs
        alloc = self.alloc
        durs = self.timer.decode_run(n, n * (S + 1) + self.sum_off, k)
        if t_arr is not None:
            starts = np.cumsum(durs) - durs + now
            k0 = int(np.searchsorted(starts, t_arr, side="left"))
            k = k0 + 1 if ext and k0 < k else k0
            if k <= 0:
                return None
            durs = durs[:k]
        hist = np.asarray(self.hist, dtype=np.int64)
        dem = hist[(-(S + np.arange(k, dtype=np.int64))) % bs]
        cum = np.cumsum(dem)
        blocks = alloc.used + cum
        tokens = n * (S + 1 + np.arange(k, dtype=np.int64)) + self.sum_off
        end = now + int(durs.sum())
        self.rec.run(durs, blocks, tokens, n, end)
        total = int(cum[-1])
        if total:
            alloc.take(total)
        self.S += k
        return end

    # ------------------------------------------------------------------ the fused event loop
    def loop_v1(self, progress: Callable[[int, int], None] | None) -> None:
        """The event loop of :func:`_run` for V1 scheduling without a concurrency cap, speculative decoding
        or multi-step rounds (``no_fast`` False, ``maxc`` None), with :meth:`admit_arrivals`, :meth:`stretch`
        (its short stretches), :meth:`fast_step` (when RUNNING holds the steady decoders only),
        :meth:`plan_waiting` and :meth:`_run_fast` written out in one function: the same decisions in the same
        order and the same arithmetic, with the lookups hoisted once per run instead of once per call (most of
        the time the engine spent went to the calls and lookups: an arrival or a finish comes every few
        iterations). A finish calls :meth:`_finish_dec` (one call per request; writing it out twice here
        saved ~2% of the instructions). Everything else goes to those methods."""
        n = self.n
        arr, send_ns, running, waiting, alloc, rec = self.arr_ns, self.send_ns, self.running, self.waiting, \
            self.alloc, self.rec
        heap, hist = self.heap, self.hist
        ts_t, ts_batch, ts_blocks, ts_step, itl_v, itl_w = (rec.ts_t, rec.ts_batch, rec.ts_blocks, rec.ts_step,
                                                             rec.itl_v, rec.itl_w)
        first_ns = rec.first_ns
        timer = self.timer
        forms = timer._forms
        mixed, round_s, rf, NS = self.mixed, self.round_s, round_float, NS_PER_S
        prompt, out, computed, target, last_emit = self.prompt, self.out, self.computed, self.target, self.last_emit
        pid_of, held, pref = self.pid, self.held, self.pref
        off_of, out_off, isdec = self.off, self.out_off, self.isdec
        bs, sh, mask, mnbt, max_seqs, thr, chunked, wm = (self.bs, self.sh, self.mask, self.mnbt, self.max_seqs,
                                                          self.thr, self.chunked, self.wm)
        # the recorder's sums (steps, busy time, KV integrals, peak) and the engine's counters, kept here and
        # added at the end (_flush): the methods called for the uncommon cases add to the recorder's own
        steps = busy = kvb = kvt = peak = stretches = fast_steps = 0
        never = _NEVER
        # uncapped, every request is sent at its arrival time (max(arrival, reopen_ns), reopen_ns 0) and the
        # count in flight gates nothing: both are written once (send_ns now, inflight's change by _flush)
        send_ns[:] = arr
        inflight = 0
        finish = self._finish_dec      # a steady decoder's last token (its inflight change included)
        now = 0
        loops = 0
        lag = self.async_lag
        prev = -1      # async scheduling: start of the step that ended at ``now`` (SimCore.admission_cutoff), or -1
        while self.finished < n:
            # ---- Engine.admit_arrivals (uncapped: each request is sent at its arrival time), the arrivals by
            # SimCore.admission_cutoff
            cut = prev if prev >= 0 else now
            i = self.nxt
            if i < n and arr[i] <= cut:
                j = i + 1
                if j < n and arr[j] <= cut:
                    j = bisect_right(arr, cut, j + 1)
                    waiting.extend(range(i, j))
                else:
                    waiting.append(i)
                inflight += j - i
                self.nxt = j
            # ---- Engine.stretch, when the first WAITING request (if any) cannot be admitted
            if waiting:
                r = waiting[0]
                if pid_of[r] >= 0 or len(running) >= max_seqs:
                    blocked = self._head_blocked()
                else:                             # Engine._head_blocked without a prefix: the same tests
                    budget = mnbt - self.n_dec
                    if budget <= 0:
                        blocked = True
                    else:
                        num_new = prompt[r] + out[r]
                        if 0 < thr < num_new:
                            num_new = thr
                        if num_new > budget:
                            blocked = not chunked
                            num_new = budget
                        else:
                            blocked = False
                        if not blocked:
                            blocked = -(-num_new // bs) > alloc.free + alloc.evictable_blocks - wm
            else:
                blocked = True
            if blocked:
                end = None
                t = now
                tp = prev                 # start of the iteration before the next one (async scheduling)
                while True:
                    nd = self.n_dec
                    if nd == 0 or len(running) != nd or mnbt < nd:
                        break
                    t_arr = never
                    if waiting:
                        if not self._head_blocked():
                            break
                    elif nd < max_seqs and mnbt > nd:
                        i = self.nxt              # SimCore.next_send_time (uncapped)
                        if i < n:
                            t_arr = arr[i]
                    S = self.S
                    k = (heap[0] >> sh) - S
                    if k > STRETCH_CAP:
                        k = STRETCH_CAP
                    free = alloc.free
                    avail = free + alloc.evictable_blocks
                    if (avail // nd) * bs < k:   # blocks may run out: exact count of the iterations that fit
                        q, rem = divmod(avail, nd)
                        m, cum = 0, 0
                        while True:
                            cum += hist[(-(S + m)) % bs]
                            if cum > rem:
                                break
                            m += 1
                        k = min(k, q * bs + m)
                        if k <= 0:
                            break
                    ext = lag and tp < t_arr    # Engine.stretch: async scheduling
                    if k > SMALL_STRETCH:
                        ta = None if t_arr == never else t_arr
                        e = self._stretch_py(t, nd, k, ta, True, ext)
                        t2 = self._stretch_numpy(t, nd, k, ta, ext) if e is False else e
                        if t2 is None:
                            break
                        t = t2
                        S = self.S
                    else:
                        # Engine._stretch_py(t, nd, k, t_arr, merged=False, ext)
                        if t >= t_arr and not ext:
                            break
                        try:
                            form = forms[nd]
                        except KeyError:
                            form = timer.form(nd)
                        ctx = nd * (S + 1) + self.sum_off
                        used0 = used = alloc.num_blocks - free - alloc.evictable_blocks
                        t0 = t
                        h = -S
                        if form is not None:
                            gi, sf, sw, cap, cpu, asy = form
                            if asy and not sw and cpu * NS >= 1.0:
                                # the same, less the tests that cannot change: no window, and d >= 1 (d is
                                # round(max(g, cpu) * NS) >= round(cpu * NS) >= 1)
                                for j in range(k):
                                    if t >= t_arr:
                                        if not ext:
                                            break
                                        ext = False
                                        t_arr = t + 1
                                    used += hist[(h - j) % bs]
                                    g = gi + sf * ctx
                                    d = rf((g if g >= cpu else cpu) * NS)
                                    t += d
                                    ts_t.append(t)
                                    ts_batch.append(nd)
                                    ts_blocks.append(used)
                                    ts_step.append(d)
                                    itl_v.append(d)
                                    itl_w.append(nd)
                                    kvb += used * d
                                    kvt += ctx * d
                                    ctx += nd
                                else:
                                    j = k
                            else:
                                for j in range(k):
                                    if t >= t_arr:
                                        if not ext:
                                            break
                                        ext = False
                                        t_arr = t + 1
                                    used += hist[(h - j) % bs]
                                    g = gi + sf * ctx        # StepTimer.decode: the same expression
                                    if sw:
                                        g = g + sw * (ctx if ctx < cap else cap)
                                    d = rf(((g if g >= cpu else cpu) if asy else g + cpu) * NS)
                                    if d < 1:
                                        d = 1
                                    t += d
                                    ts_t.append(t)
                                    ts_batch.append(nd)
                                    ts_blocks.append(used)
                                    ts_step.append(d)
                                    itl_v.append(d)
                                    itl_w.append(nd)
                                    kvb += used * d
                                    kvt += ctx * d
                                    ctx += nd
                                else:                        # all k taken (a break: j taken, the arrival came first)
                                    j = k
                        else:
                            scalar = timer._scalar
                            j = 0
                            while j < k:                 # StepTimer.decode without a closed form: the same call
                                if t >= t_arr:
                                    if not ext:
                                        break
                                    ext = False
                                    t_arr = t + 1
                                used += hist[(h - j) % bs]
                                d = int(round(scalar(nd, ctx, 0, 0.0, 0) * NS))     # to_ns, inlined
                                if d <= 0:
                                    d = 1
                                t += d
                                ts_t.append(t)
                                ts_batch.append(nd)
                                ts_blocks.append(used)
                                ts_step.append(d)
                                itl_v.append(d)
                                itl_w.append(nd)
                                kvb += used * d
                                kvt += ctx * d
                                ctx += nd
                                j += 1
                        if not j:
                            break
                        if used > used0:
                            grow_by = used - used0       # one claim evicts exactly what the per-step claims would
                            if grow_by <= free:
                                alloc.free = free - grow_by
                            else:
                                alloc.take(grow_by)
                        steps += j
                        busy += t - t0
                        if used > peak:                  # blocks only grow during a stretch: the last is the peak
                            peak = used
                        S += j
                        self.S = S
                    self.t_last = t
                    stretches += 1
                    tp = t - ts_step[-1]
                    # uncapped: no arrival needs admitting before the finish step (Engine.stretch)
                    while heap and heap[0] >> sh == S:
                        finish(heappop(heap) & mask, t)
                    end = t
                    if waiting or (self.nxt < n and arr[self.nxt] <= t):
                        break
                if end is not None:
                    if lag:
                        prev = end - ts_step[-1]
                    now = end
                    continue
            # ---- Engine.fast_step
            nd = self.n_dec
            if len(running) == nd and nd <= mnbt and (
                    not nd or hist[(-self.S) % bs] <= alloc.free + alloc.evictable_blocks):
                S = self.S
                if nd:
                    dem = hist[(-S) % bs]
                    if dem:
                        if dem <= alloc.free:
                            alloc.free -= dem
                        else:
                            alloc.take(dem)
                self.last_preempted = False
                ctx0 = nd * (S + 1) + self.sum_off
                # Engine.plan_waiting, with core.step_shape of each admitted request; the first admitted request
                # is (r1, k1), a list ``sched`` of them all is built only when there are more
                nsched = 0
                r1 = k1 = 0
                sched: list[tuple[int, int]] = []
                ndx, ctx = nd, ctx0
                pf = pairs2 = npf = 0
                if waiting:
                    budget = mnbt - nd
                    kv = 0
                    while waiting and budget > 0 and len(running) < max_seqs:
                        r = waiting[0]
                        pid = pid_of[r]
                        hit = self._prefix_hit(r) if pid >= 0 else 0
                        cmp = hit * bs
                        o = out[r]
                        num_new = prompt[r] + o - cmp
                        if 0 < thr < num_new:
                            num_new = thr
                        if num_new > budget:
                            if not chunked:
                                break
                            num_new = budget
                        need = -(-(cmp + num_new) // bs) - hit
                        touch = 0
                        if hit:
                            e = alloc.hit(pid)
                            if e is not None and e.refs == 0:
                                touch = e.blocks
                        if need > alloc.free + alloc.evictable_blocks - touch - wm:
                            break
                        waiting.popleft()
                        if hit:
                            alloc.ref(pid)
                            pref[r] = pid
                        if need <= alloc.free:
                            alloc.free -= need
                        else:
                            alloc.take(need, r)
                        held[r] = need
                        computed[r] = cmp
                        kv += cmp + num_new
                        running.append(r)
                        if nsched:
                            if nsched == 1:
                                sched.append((r1, k1))
                            sched.append((r, num_new))
                        else:
                            r1, k1 = r, num_new
                        nsched += 1
                        budget -= num_new
                        if num_new == 1 and o > 0 and cmp + 1 == prompt[r] + o:
                            ndx += 1
                            ctx += cmp + 1
                        else:
                            npf += 1
                            pf += num_new
                            pairs2 += num_new * (2 * cmp + num_new)
                    self.kv_tokens += kv
                if not nsched and not nd:
                    end = None
                else:
                    # Engine._run_fast
                    if not pf and not npf and ndx > 0:
                        dur = timer.decode(ndx, ctx)
                    else:
                        dur = round_s(mixed(ndx, ctx, pf, pairs2 / 2.0, npf) * NS)
                        if dur < 1:
                            dur = 1
                    end = now + dur
                    blocks = alloc.num_blocks - alloc.free - alloc.evictable_blocks
                    steps += 1
                    busy += dur
                    kvb += blocks * dur
                    kvt += (self.kv_tokens + ctx0) * dur
                    if blocks > peak:
                        peak = blocks
                    ts_t.append(end)
                    ts_batch.append(nsched + nd)
                    ts_blocks.append(blocks)
                    ts_step.append(dur)
                    S += 1
                    self.S = S
                    if nd:
                        itl_v.append(dur)
                        itl_w.append(nd)
                    while heap and heap[0] >> sh == S:
                        finish(heappop(heap) & mask, end)
                    if nsched == 1:                # the loops below for one request, written out
                        c = computed[r1] + k1
                        computed[r1] = c
                        if pid_of[r1] >= 0:
                            self._maybe_register(r1, c, k1)
                        o = out[r1]
                        if c == prompt[r1] + o:      # SimCore.emit
                            if o == 0:
                                first_ns[r1] = end
                            else:
                                itl_v.append(end - last_emit[r1])
                                itl_w.append(1)
                            last_emit[r1] = end
                            o += 1
                            out[r1] = o
                            if o == target[r1]:
                                self.finish(r1, end)
                            else:                    # Engine.lazify
                                off = c - S
                                off_of[r1] = off
                                out_off[r1] = o - S
                                isdec[r1] = True
                                hist[off % bs] += 1
                                heappush(heap, ((S + target[r1] - o) << sh) | r1)
                                self.n_dec += 1
                                self.sum_off += off
                                self.kv_tokens -= c
                    elif nsched:
                        done: list[int] = []
                        emitted: list[int] = []
                        for r, k in sched:
                            c = computed[r] + k
                            computed[r] = c
                            if pid_of[r] >= 0:
                                self._maybe_register(r, c, k)
                            o = out[r]
                            if c == prompt[r] + o:      # SimCore.emit
                                if o == 0:
                                    first_ns[r] = end
                                else:
                                    itl_v.append(end - last_emit[r])
                                    itl_w.append(1)
                                last_emit[r] = end
                                o += 1
                                out[r] = o
                                if o == target[r]:
                                    done.append(r)
                                else:
                                    emitted.append(r)
                        for r in done:
                            self.finish(r, end)
                        if emitted:   # Engine.lazify
                            sum_off = kv = 0
                            for r in emitted:
                                c = computed[r]
                                off = c - S
                                off_of[r] = off
                                o = out[r]
                                out_off[r] = o - S
                                isdec[r] = True
                                sum_off += off
                                kv += c
                                hist[off % bs] += 1
                                heappush(heap, ((S + target[r] - o) << sh) | r)
                            self.n_dec += len(emitted)
                            self.sum_off += sum_off
                            self.kv_tokens -= kv
                    self.t_last = end
                    fast_steps += 1
            else:
                end = self.fast_step(now)
                if end is False:
                    end = self.slow_step(now)
                    heap, hist = self.heap, self.hist      # materialize_all made new ones
            # ---- _run
            if end is None:
                if self.last_preempted:
                    continue
                if prev >= 0:      # the batch decided at ``prev`` was empty: decide again now
                    prev = -1
                    continue
                t = self.next_send_time()
                if t is None or running:
                    self._flush(steps, busy, kvb, kvt, peak, stretches, fast_steps, inflight)
                    raise RuntimeError("engine stalled")  # unreachable when prepare() validated
                if t > now:
                    now = t
                continue
            if lag:
                prev = now
            now = end
            loops += 1
            if progress is not None and loops % 4096 == 0:
                progress(self.finished, n)
            if loops > MAX_SIM_STEPS:
                self._flush(steps, busy, kvb, kvt, peak, stretches, fast_steps, inflight)
                raise _too_many_steps(self, loops)
        self._flush(steps, busy, kvb, kvt, peak, stretches, fast_steps, inflight)

    def _flush(self, steps: int, busy: int, kvb: int, kvt: int, peak: int, stretches: int, fast_steps: int,
               inflight: int) -> None:
        """Add :meth:`loop_v1`'s sums to the recorder's and its counters to the engine's."""
        self.inflight += inflight
        rec = self.rec
        rec.steps += steps
        rec.busy_ns += busy
        rec.kv_blocks_ns += kvb
        rec.kv_tokens_ns += kvt
        if peak > rec.peak_blocks:
            rec.peak_blocks = peak
        self.stretches += stretches
        self.fast_steps += fast_steps


_NEVER = 1 << 62     # ns: a time no arrival reaches


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
    """Simulate ``req`` under ``p`` event by event; ``progress(done, total)`` is called now and then.

    The cycle collector is off during the run (the caller's setting is restored afterwards, also on an
    exception): the loop makes no reference cycles, but allocates hundreds of thousands of short-lived
    tuples and lists, each batch of which would trigger a collection pass that finds nothing. Memory is
    still freed by reference counting. The engine's per-request and per-step lists (millions of slots at
    100,000 requests) are moved to the oldest generation once built (``gc.freeze()`` then
    ``gc.unfreeze()``: no traversal), where a collector left on would have promoted them after its first
    passes; otherwise they would sit in the youngest generation and the caller's first collection after
    the run would walk them all (~60 ms at 100,000 requests, as long as the passes saved). Skipped when
    the caller has frozen objects of its own (unfreezing would release them). The only effect on the
    caller's objects: any of its own still in a young generation are promoted with them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(req, p, cost, progress)
    finally:
        if was_enabled:
            gc.enable()


def _run(req: Requests, p: SchedParams, cost: StepCost, progress: Callable[[int, int], None] | None) -> Engine:
    eng = Engine(req, p, make_timer(cost, p), Recorder(len(req), p.num_blocks, p.block_size))
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
    if not eng.no_fast and eng.maxc is None:
        eng.loop_v1(progress)
        eng.materialize_all()
        return eng
    now = 0
    loops = 0
    n = eng.n
    arr = eng.arr_ns
    lag = eng.async_lag
    prev = -1      # async scheduling: start of the step that ended at ``now`` (SimCore.admission_cutoff), or -1
    while eng.finished < n:
        cut = eng.admission_cutoff(now, prev)
        if eng.nxt < n and arr[eng.nxt] <= cut:
            eng.admit_arrivals(cut)
        # a stretch needs the first WAITING request blocked (Engine.stretch): when it is not, step at once
        if not eng.waiting or eng._head_blocked():
            t = eng.stretch(now, prev)
            if t is not None:
                if lag:
                    prev = t - eng.rec.ts_step[-1]
                now = t
                continue
        end = eng.fast_step(now)
        if end is False:
            end = eng.slow_step(now)
        if end is None:
            if eng.last_preempted:
                continue
            if prev >= 0:      # the batch decided at ``prev`` was empty: decide again now
                prev = -1
                continue
            t = eng.next_send_time()
            if t is None or eng.running:
                raise RuntimeError("engine stalled")  # unreachable when prepare() validated
            if t > now:        # max(now, t) without the builtin call (an idle engine: once per arrival)
                now = t
            continue
        if lag:
            prev = now
        now = end
        loops += 1
        if progress is not None and loops % 4096 == 0:
            progress(eng.finished, eng.n)
        if loops > MAX_SIM_STEPS:
            raise _too_many_steps(eng, loops)
    eng.materialize_all()
    return eng
