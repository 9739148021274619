"""Steady-state serving estimates without simulation (one data-parallel replica).

Notation (tokens, seconds): I mean prompt length, O mean output length, B running requests,
c prefill chunk = min(I, max_num_batched_tokens - B_d), n_pf = ceil(I / c) prefill steps per request,
B_d = B (O - 1) / (O - 1 + n_pf) requests decoding, ctx = I + O / 2 mean cached tokens while decoding.

  t_dec   = step(B_d decode, context B_d x ctx)                       plain decode step
  t_mix   = step(B_d decode + one chunk of c tokens, pairs I^2 / (2 n_pf))
  p       = B_d / (O - 1) x I      prompt tokens that must enter per step to replace finishing requests
  f       = min(1, p / c)          fraction of steps that carry a prefill chunk; when p > c every step
                                   carries p prompt tokens (capped by the budget left to the decodes)
  ITL     = f t_mix + (1 - f) t_dec                     (mean step; each decode sequence emits 1 token)
  TPOT    = ITL / E[tokens per step]                    (E = 1 without speculative decoding)
  TTFT_0  = n_pf x t_mix + t_fe   (no queueing; t_fe = FRONTEND_TTFT_S[endpoint])
  cycle   = TTFT_0 + (O - 1) x TPOT                      (one request's life)
  req/s   = B / cycle (Little's law);  output tok/s = req/s x O
Pipeline parallel: micro-batches of B / pp, token period = max(latency, pp x stage interval).
Concurrency bounds: max_num_seqs and KV capacity kv_tokens / (I + O / 2) (mean occupancy).
Queueing (finite rate close to saturation, bursts) is approximated in closed form here and simulated
exactly by ``sched_reader.analyzers.simulator``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from sched_reader.models.cost.frontend import API_INTAKE_S, intake_base_s
from sched_reader.models.cost.iteration import IterationCostModel
from sched_reader.models.cost.speculative import SpeculativeModel
from sched_reader.models.workload import endpoint_kind

# Per-request time outside the engine loop that lands in the TTFT a ``vllm bench serve`` client measures
# at low load (HTTP request/response, request validation, chat template, tokenization, first streamed
# chunk), per OpenAI entry point of vLLM's API server (seconds).
#   completions  34.4 ms: GPUStack performance lab, Qwen3-8B on one H100, `vllm bench serve --backend
#                openai-chat` (docs/performance-lab/qwen3-8b/h100-latency.md, gpustack@47277d7): vLLM 0.11.0
#                mean/median TTFT 59.0/60.4 ms at concurrency 1 and 64.0/60.3 ms at concurrency 4, while
#                the GPU prefill of the ~233-token prompts is ~12 ms (this cost model; SGLang 0.5.3 on the
#                same GPU and client: 27 ms): 59 - 12 ~ 45 ms outside the GPU, independent of prompt length
#                (p99 TTFT 73 ms). Less what only a 0.11.0 chat request pays over a completions one
#                (models/cost/frontend.py: 1.5 + 4.8 x 2.1 - 1.0 = 10.6 ms of intake): 34.4 ms for the part
#                common to both entry points (HTTP, tokenization, the engine-core hand-off and wake-up, the
#                first step's output path, one SSE chunk). Check: Qwen3-0.6B on an H100 at 16 req/s, vLLM
#                0.19, /v1/completions, 512-token prompts (kvcached PR #331, tests/data/throughput_public.yaml):
#                mean TTFT 38.9 ms for ~3 ms of GPU prefill, ~36 ms.
#                Spread (not a fit; the constant stays): the per-request TTFT/ITL JSONs of simon-mo/vLLM-Benchmark
#                (vLLM 0.8.2, /v1/completions, H200 hosts; each request's gaps aligned with request 0's give its
#                send time and the step that carried its prompt) bound intake + first-chunk delivery at 5-11 ms on
#                that host; MI350X and RTX 5090 batch-1 rows of 0.11-0.22 leave <= ~10 ms: the share depends on
#                the host CPU and HTTP stack, so low-load TTFT carries its error band.
#   chat         the completions share plus the entry point's extra intake (frontend.intake_base_s): 45 ms
#                on 0.11.0, 39.7 ms on 0.6.5-0.9.1, 34.9 ms where the template is not re-parsed.
# Offline runs (`vllm bench throughput`, the LLM class) have no API server and no HTTP stream: no share.
FRONTEND_TTFT_S: dict[str, float] = {"completions": 34.4e-3, "offline": 0.0}
FRONTEND_OVERHEAD_S = FRONTEND_TTFT_S["completions"]  # default entry point (vllm bench serve --backend vllm)


def frontend_ttft_s(endpoint: str | None) -> float:
    """Fixed TTFT share (s) of the API server entry point: ``completions`` (/v1/completions, the default),
    ``offline`` (none: no API server) or a chat entry point as ``frontend.endpoint_for`` names it (the
    completions share plus what its intake costs beyond a completions request's)."""
    kind = endpoint_kind(endpoint)
    if kind != "chat":
        return FRONTEND_TTFT_S[kind]
    return FRONTEND_TTFT_S["completions"] + intake_base_s(endpoint) - API_INTAKE_S["completions"]


GEMM_TERMS = ("qkv_o_proj", "mlp", "moe_router", "moe_shared", "moe_experts", "lm_head")


@dataclass
class OperatingPoint:
    """Steady-state quantities at ``concurrency`` running requests (seconds, tokens, per second)."""

    concurrency: float
    decoding: float
    chunk_tokens: float
    prefill_steps: int
    decode_step_s: float
    mixed_step_s: float
    prefill_fraction: float
    itl_s: float
    tpot_s: float
    ttft_s: float
    cycle_s: float
    request_throughput: float
    output_throughput: float
    input_throughput: float
    tokens_per_step: float = 1.0


@dataclass
class SteadyState:
    """Result of one steady-state estimate (per engine instance, all DP replicas summed)."""

    mode: str                      # closed_loop | open_loop | burst | saturated
    point: OperatingPoint
    mean_ttft_s: float
    mean_tpot_s: float
    mean_itl_s: float
    mean_e2el_s: float
    request_throughput: float
    output_throughput: float
    total_token_throughput: float
    duration_s: float | None
    limited_by: str
    max_running: int
    compute_bound_concurrency: int | None
    regime: str
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return d


class SteadyStateModel:
    """Closed-form serving estimates on top of an :class:`IterationCostModel` (see module docstring)."""

    def __init__(self, cost: IterationCostModel, kv_tokens: int | None = None,
                 spec: SpeculativeModel | None = None, endpoint: str | None = None) -> None:
        self.cost = cost
        self.frontend_s = frontend_ttft_s(endpoint)
        self.cfg = cost.cfg
        self.kv_tokens = kv_tokens
        self.spec = spec
        self.pp = cost.pp
        self.dp = cost.dp

    # ------------------------------------------------------------------ step periods
    def _period(self, nd: float, S: float, Tp: float, P: float, nps: float) -> float:
        """Seconds between successive tokens of one sequence for a step of this composition."""
        if self.pp == 1:
            return self.cost.step_time(nd, S, Tp, P, nps)
        k = self.pp
        b = self.cost.breakdown(nd / k, S / k, Tp / k, P / k, nps / k)
        return max(b.step_time_s, k * b.pipeline_interval_s)

    def decode_period(self, batch: float, mean_context: float) -> float:
        """Plain decode step period at ``batch`` sequences of ``mean_context`` cached tokens."""
        return self._period(batch, batch * mean_context, 0.0, 0.0, 0.0)

    # ------------------------------------------------------------------ limits
    def max_running(self, I: float, O: float) -> tuple[int, str]:
        """(largest number of running requests, what limits it) for one replica."""
        limit, why = int(self.cfg.max_num_seqs), "max_num_seqs"
        if self.kv_tokens:
            blk = max(1, int(self.cfg.block_size))
            per_req = math.ceil((I + O / 2.0) / blk) * blk
            kv_lim = max(1, int(self.kv_tokens // per_req))
            if kv_lim < limit:
                limit, why = kv_lim, "kv_cache"
        return limit, why

    def compute_bound_concurrency(self, mean_context: float, upper: int = 8192) -> int | None:
        """Smallest decode batch whose GEMMs are compute-bound (FLOP time >= HBM time); None if > upper."""

        def compute_bound(b: int) -> bool:
            br = self.cost.breakdown(b, int(b * mean_context), 0, 0.0)
            c = sum(br.terms[n].compute_s for n in GEMM_TERMS if n in br.terms)
            m = sum(br.terms[n].memory_s for n in GEMM_TERMS if n in br.terms)
            return c >= m

        if not compute_bound(upper):
            return None
        lo, hi = 1, upper
        while lo < hi:
            mid = (lo + hi) // 2
            if compute_bound(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    # ------------------------------------------------------------------ operating point
    def operating_point(self, B: float, I: float, O: float) -> OperatingPoint:
        """Steady-state step times and rates with ``B`` running requests per replica."""
        budget = float(self.cfg.max_num_batched_tokens)
        B = max(B, 1e-9)
        # first guess of decoding requests, then the chunk size the budget leaves them
        Bd = B * (O - 1) / max(O - 1 + 1, 1) if O > 1 else 0.0
        c = max(1.0, min(I, budget - Bd)) if self.cfg.enable_chunked_prefill else I
        n_pf = max(1, math.ceil(I / c))
        c = I / n_pf if self.cfg.enable_chunked_prefill else c  # the prompt split evenly: each token once
        Bd = B * (O - 1) / (O - 1 + n_pf) if O > 1 else 0.0
        ctx = I + O / 2.0
        S = Bd * ctx
        pairs_chunk = I * I / (2.0 * n_pf)
        t_dec = self._period(Bd, S, 0.0, 0.0, 0.0) if Bd > 0 else 0.0
        t_mix = self._period(Bd, S, c, pairs_chunk, 1.0)
        E = 1.0
        if self.spec is not None and Bd > 0:
            st = self.spec.step(max(1, int(round(Bd))), ctx)
            E = st.tokens_per_step
            extra = t_mix - t_dec
            t_dec = st.step_s
            t_mix = t_dec + extra
        p = (Bd / ((O - 1) / E) * I) if O > 1 else budget
        # a decoding request shares its steps with the prompts of the OTHER B - 1 requests only (at
        # concurrency 1 the next prompt arrives after this request has finished)
        p = p * max(B - 1.0, 0.0) / B if O > 1 else p
        if p > c and Bd > 0:
            # more prompt tokens arrive per step than one chunk: every step carries p tokens
            # (several prompts), capped by what the token budget leaves next to the decodes
            pt = min(p, max(1.0, budget - Bd))
            t_mix = self._period(Bd, S, pt, pt * I / 2.0, pt / I)
            if self.spec is not None:
                t_mix = t_dec + (t_mix - self._period(Bd, S, 0.0, 0.0, 0.0))
            f = 1.0
        else:
            f = min(1.0, p / c) if c else 1.0
        itl = f * t_mix + (1.0 - f) * t_dec if Bd > 0 else t_mix
        tpot = itl / E
        ttft = n_pf * t_mix + self.frontend_s
        cycle = ttft + max(O - 1, 0) * tpot
        rps = B / cycle * self.dp
        return OperatingPoint(B * self.dp, Bd * self.dp, c, n_pf, t_dec, t_mix, f, itl, tpot, ttft, cycle,
                              rps, rps * O, rps * I, E)

    # ------------------------------------------------------------------ workload modes
    def _result(self, mode: str, op: OperatingPoint, ttft: float, I: float, O: float, n: int | None,
                limit: int, why: str, notes: list[str], duration: float | None = None) -> SteadyState:
        ctx = I + O / 2.0
        b_star = self.compute_bound_concurrency(ctx)
        per_replica = op.decoding / self.dp
        regime = "compute" if (b_star is not None and per_replica >= b_star) else "memory"
        e2el = ttft + max(O - 1, 0) * op.tpot_s
        if duration is None and n:
            duration = n / op.request_throughput
        return SteadyState(mode, op, ttft, op.tpot_s, op.itl_s, e2el, op.request_throughput,
                           op.output_throughput, op.output_throughput + op.input_throughput, duration, why, limit,
                           b_star, regime, notes)

    def closed_loop(self, users: int, I: float, O: float, num_prompts: int | None = None) -> SteadyState:
        """``users`` clients each with one request outstanding (``--max-concurrency``)."""
        per = users / self.dp
        limit, why = self.max_running(I, O)
        B = min(per, limit)
        op = self.operating_point(B, I, O)
        ttft = op.ttft_s
        notes: list[str] = []
        if per > limit:
            # the extra clients wait in vLLM's queue for a slot: (users - B) / B request lifetimes
            wait = (per - B) / B * op.cycle_s
            ttft += wait
            notes.append(f"{users} clients but at most {limit} running per replica ({why}): "
                         f"queue wait {wait * 1e3:.1f} ms added to TTFT")
        else:
            why = "max_concurrency"
        return self._result("closed_loop", op, ttft, I, O, num_prompts, limit, why, notes)

    def open_loop(self, rate: float, I: float, O: float, num_prompts: int | None = None) -> SteadyState:
        """Poisson arrivals at ``rate`` requests/s (all replicas): solve B = rate x cycle(B)."""
        limit, why = self.max_running(I, O)
        per_rate = rate / self.dp
        op_max = self.operating_point(limit, I, O)
        if per_rate * op_max.cycle_s >= limit:
            st = self.burst(num_prompts or 1000, I, O, arrival_rate=rate)
            st.notes.insert(0, f"request rate {rate:g}/s exceeds the sustainable "
                               f"{op_max.request_throughput:.2f}/s: the queue grows (saturated)")
            return st
        lo, hi = 0.0, float(limit)
        for _ in range(60):  # B - rate x cycle(B) is increasing in B on [0, limit]
            mid = (lo + hi) / 2
            if mid < per_rate * self.operating_point(max(mid, 1e-6), I, O).cycle_s:
                lo = mid
            else:
                hi = mid
        B = max(hi, 1e-6)
        op = self.operating_point(B, I, O)
        notes = [f"mean running requests {B * self.dp:.1f} (Little's law); no queueing delay modelled"]
        duration = (num_prompts / rate + op.cycle_s) if num_prompts else None
        st = self._result("open_loop", op, op.ttft_s, I, O, num_prompts, limit, "request_rate", notes, duration)
        if num_prompts:
            st.request_throughput = num_prompts / duration
            st.output_throughput = st.request_throughput * O
            st.total_token_throughput = st.request_throughput * (I + O)
        return st

    def burst(self, n: int, I: float, O: float, arrival_rate: float | None = None) -> SteadyState:
        """``n`` requests arriving at once (request rate inf): waves of ``max_running`` requests.

        First wave: all prompts enter together, prefilled at the token budget per step, so the mean
        first-wave TTFT is half the wave's prefill time. Later requests wait for a slot: request i >= B
        starts after (i - B + 1) completions at the steady rate R, mean wait (n - B)(n - B + 1) / (2 R n).
        """
        limit, why = self.max_running(I, O)
        per_n = n / self.dp
        B = min(per_n, limit)
        op = self.operating_point(B, I, O)
        budget = float(self.cfg.max_num_batched_tokens)
        wave_tokens = B * I
        wave_steps = max(1.0, wave_tokens / budget)
        t_budget = self._period(0.0, 0.0, min(budget, wave_tokens), min(budget, wave_tokens) * I / 2.0,
                                max(1.0, min(B, budget / max(I, 1.0))))
        first_wave_ttft = 0.5 * wave_steps * t_budget + op.ttft_s
        R = op.request_throughput / self.dp
        if per_n > B:
            wait = (per_n - B) * (per_n - B + 1) / (2.0 * R * per_n)
            later = per_n - B
            ttft = (B * first_wave_ttft + later * op.ttft_s) / per_n + wait
        else:
            ttft = first_wave_ttft
        duration = wave_steps * t_budget + per_n / R if per_n > B else wave_steps * t_budget + op.cycle_s
        if arrival_rate is not None and arrival_rate * duration < n:
            duration = max(duration, n / arrival_rate)
        notes = [f"burst of {n} requests: at most {limit} running per replica ({why}); "
                 "queueing approximated in closed form (the simulator computes it exactly)"]
        st = self._result("burst" if arrival_rate is None else "saturated", op, ttft, I, O, n, limit, why, notes,
                          duration)
        st.request_throughput = n / duration
        st.output_throughput = st.request_throughput * O
        st.total_token_throughput = st.request_throughput * (I + O)
        return st
