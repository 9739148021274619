"""Entry points: simulate a workload under one policy, or under several for one engine spec."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable

from sched_reader.compat.chat_template_work import template_release
from sched_reader.analyzers.simulator.cost import StepCost, StepTimer
from sched_reader.analyzers.simulator.data_parallel import replicas_of, run_replicas
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.metrics import add_client_latency, summarize
from sched_reader.analyzers.simulator.policies import POLICIES, SchedParams, params_for
from sched_reader.analyzers.simulator.reference import run_reference
from sched_reader.analyzers.simulator.static import run_static
from sched_reader.analyzers.simulator.workloads import Requests, drop_overlong
from sched_reader.errors import InputError, SchedReaderError
from sched_reader.limits import MAX_SIM_TOKENS
from sched_reader.models.calibration_profile import active_profile, api_seconds, frontend_kwargs
from sched_reader.models.capacity import estimate_capacity
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.steady_state import frontend_ttft_s
from sched_reader.models.calibration_profile import calibrated
from sched_reader.models.cost.frontend import api_server_for, endpoint_for
from sched_reader.models.workload import endpoint_kind


def simulate(requests: Requests, params: SchedParams, cost: StepCost, *,
             slo_ttft_ms: float | None = None, slo_tpot_ms: float | None = None,
             progress: Callable[[int, int], None] | None = None, reference: bool = False,
             frontend: Any | None = None, slo_e2el_ms: float | None = None,
             percentiles: tuple[float, ...] = (), per_request: bool = False) -> dict[str, Any]:
    """Simulate ``requests`` on one engine with scheduler ``params`` and step ``cost``.

    Returns the metric dict of :func:`~.metrics.summarize` (bench-serve metrics in ms and tokens/s,
    goodput, KV use, preemptions, time series) plus ``policy``, ``notes`` and engine counters.
    ``params.policy == "static"`` runs the static-batching engine; every other policy runs the
    event-driven engine (or the per-iteration reference loop with ``reference=True``).
    ``frontend``: an API-server model (``sched_reader.models.cost.frontend.ApiServerModel``): open-loop
    requests enter the engine through its serial intake, and the times the client sees first and last
    tokens include its delivery backlog. ``None`` simulates the engine alone.
    Closed loop (``requests.max_concurrency``) with a ``frontend``: a finished request's successor reaches the
    engine the client's round trip later (:func:`with_resend_delay`), and its TTFT is measured from then.
    Data parallel: when ``cost`` models one of ``cost.dp`` > 1 replicas (IterationCostModel of a
    ``--data-parallel-size`` config), the requests are split over that many engines, each with ``params``
    (its own KV blocks and limits), behind the one API server, and the runs merged (:mod:`.data_parallel`).

    A request whose prompt is ``max_model_len`` tokens or longer is rejected by vLLM's API server;
    ``vllm bench serve`` counts it as failed and carries on: so does this (``failed`` and a note).
    ``per_request``: also return ``ttft_ms_each``, every simulated request's TTFT (ms, engine and API
    server, without :func:`with_frontend_latency`'s constant), in the order of ``requests``.
    """
    requests, failed = drop_overlong(requests, params.max_model_len)
    check_size(requests, params)  # before the run: limits.MAX_SIM_TOKENS
    sent_s = requests.arrival_s
    dp = replicas_of(cost)   # data parallel: replicas of ``params`` split the requests (data_parallel.py)

    def engine(reqs: Requests, one: Callable[[Requests], Any]) -> Any:
        return one(reqs) if dp == 1 else run_replicas(reqs, dp, one, params.num_blocks, params.block_size)

    def event_driven(reqs: Requests) -> Any:
        return run_engine(reqs, params, cost, progress=progress)

    if frontend is not None and requests.max_concurrency is not None and len(requests):
        requests = with_resend_delay(requests, frontend)
    probe = None
    if frontend is not None and requests.max_concurrency is None and len(requests):
        requests0 = requests
        requests = replace(requests0, arrival_s=frontend.intake(sent_s, requests0.prompt_len))
        if params.policy != "static" and not reference and _may_saturate(frontend, params, cost, requests0, dp):
            # one engine run with plain intake measures how busy streaming keeps the API server
            probe = engine(requests, event_driven)
            span = max(1e-9, (max(probe.rec.finish_ns) - min(probe.send_ns)) / 1e9)
            rho = frontend.output_token_s / frontend.servers * float(sum(probe.target)) / span
            if rho >= 1.0:  # saturated: the loop can no longer take requests in between chunks
                requests = replace(requests0, arrival_s=frontend.intake(
                    sent_s, requests0.prompt_len, requests0.output_len, streaming_share=rho))
                probe = None
    if params.policy == "static":
        run = engine(requests, lambda reqs: run_static(reqs, params, StepTimer(cost)))
        counters: dict[str, Any] = {}
    elif reference:
        run = engine(requests, lambda reqs: run_reference(reqs, params, cost))
        counters = {}
    else:
        # not saturated: the probe ran these very requests on this engine (deterministic), so it is the run
        run = probe if probe is not None else engine(requests, event_driven)
        counters = {"fast_steps": run.fast_steps, "slow_steps": run.slow_steps, "stretches": run.stretches}
    send_ns = run.send_ns
    notes = list(run.notes)
    if frontend is not None and len(requests):
        send_ns, backlog_s = _client_times(run, frontend, sent_s, requests)
        if backlog_s > 0.05:
            notes.append(f"API server: streaming backlog up to {backlog_s:.1f} s (one server process delivers at most "
                         f"{1.0 / frontend.output_token_s:,.0f} tokens/s; models/cost/frontend.py)")
    res = summarize(run.rec, send_ns, run.prompt, run.target, slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms,
                    slo_e2el_ms=slo_e2el_ms, percentiles=tuple(percentiles))
    res["failed"] = failed
    if per_request:
        res["ttft_ms_each"] = [(f - t) / 1e6 for f, t in zip(run.rec.first_ns, send_ns)]
    if failed:
        notes.insert(0, f"{failed:,} request(s) failed: prompt of max-model-len {params.max_model_len:,} tokens or "
                        "more, rejected by vLLM's API server (vllm bench serve counts them as failed); "
                        "the metrics cover the other requests")
    if params.spec_tokens:
        if params.engine == "v0" and not params.enable_chunked_prefill:
            notes.append(f"speculative decoding ({params.spec_tokens} draft tokens) is not simulated on the "
                         "V0 prefill-first scheduler: one token per decode step")
        else:
            notes.append(f"speculative decoding ({params.spec_method}, {params.spec_tokens} draft tokens, "
                         f"acceptance {params.spec_acceptance:.2f}): {1 + params.spec_accepted:.2f} tokens per "
                         "verify step on average (deterministic per-request accumulator); decode steps run "
                         "one by one (no aggregated decode stretches)")
    if params.max_num_partial_prefills > 1 and params.engine == "v1":
        notes.append(f"max_num_partial_prefills={params.max_num_partial_prefills}: vLLM V1's scheduler does not cap "
                     "concurrent partial prefills; only long_prefill_token_threshold "
                     f"({params.long_prefill_token_threshold}) applies")
    res.update({"policy": params.policy, "engine_counters": counters, "notes": notes,
                "params": {k: v for k, v in params.__dict__.items()}})
    return res


def with_resend_delay(requests: Requests, frontend: Any) -> Requests:
    """A closed loop's ``requests`` with the client's round trip through the API server ``frontend`` as the
    delay between a request's last token at the engine and its successor reaching the engine
    (``Requests.resend_delay_s``, seconds).

    `vllm bench serve` holds a ``--max-concurrency`` slot for the whole response: ``limited_request_func`` wraps
    the request function in ``async with semaphore`` and the request function returns after the stream's
    usage chunk and ``[DONE]`` (vllm/benchmarks/serve.py, read in the 0.10.1.1, 0.12.0 and 0.16.0 wheels; the
    successor's task already waits on the semaphore). Its successor then travels the client -> API server ->
    engine-core path. Those are the two legs of the fixed share a batch-1 client adds to TTFT
    (steady_state.frontend_ttft_s: a request's way in, and a token's way out to the client), so the round
    trip is that share for the endpoint, 34.4 ms for /v1/completions. The closed form already counts it once
    per request cycle (steady_state.py: cycle = TTFT_0 + (O - 1) TPOT, TTFT_0 including t_fe).

    vLLM's engine core drains its input queue only between steps and starts the next step as soon as the
    last one's outputs are queued (v1/engine/core.py ``run_busy_loop``: ``_process_input_queue`` then
    ``_process_engine_step``, read in the 0.16.0 wheel), so no successor joins the step that starts when its
    predecessor finishes: with any round trip > 0 it waits for the rest of a running step. With async scheduling
    (vLLM 0.14+ by default) it waits one step more: the step after the running one was decided when the running
    one started (``SimCore.admission_cutoff``).
    """
    return replace(requests, resend_delay_s=frontend_ttft_s(getattr(frontend, "endpoint", "completions")))


def check_size(requests: Requests, params: SchedParams) -> int:
    """Refuse a run over ``limits.MAX_SIM_TOKENS`` before it starts; returns the estimate.

    The estimate is the tokens to decode plus the prefill chunks (prompt tokens over the step token
    budget): every decode token is one request-step, every chunk one step.
    """
    budget = max(1, min(int(params.max_num_batched_tokens), 1 << 20))
    work = int(requests.output_len.sum()) + -(-int(requests.prompt_len.sum()) // budget)
    if work > MAX_SIM_TOKENS:
        raise InputError(
            f"the simulation would run {work:,} request-steps ({len(requests):,} requests, "
            f"{int(requests.output_len.sum()):,} output tokens), over the {MAX_SIM_TOKENS:,} bound",
            key="workload", hint="lower --num-prompts or the output length; the metrics of a bench run "
                                 "settle within a few thousand requests")
    return work


def _may_saturate(frontend: Any, params: SchedParams, cost: StepCost, requests: Requests, replicas: int = 1) -> bool:
    """Whether the engine's fastest token rate (a full decode batch at the mean context, on each of
    ``replicas`` data-parallel replicas) could keep the API server busy (rate x seconds per streamed token
    >= 1); when not, the probe run is skipped."""
    batch = max(1, min(int(params.max_num_seqs), len(requests)))
    ctx = float(requests.prompt_len.mean()) + float(requests.output_len.mean()) / 2.0
    try:
        step = float(cost.step_time(batch, int(batch * ctx), 0, 0.0, 0))
    except Exception:  # a toy cost without the full interface: always probe
        return True
    return step <= 0 or replicas * batch / step * frontend.output_token_s / frontend.servers >= 1.0


def _client_times(run: Any, frontend: Any, sent_s: Any, requests: Requests) -> tuple[list[int], float]:
    """Replace the run's first/finish times by what the client sees through ``frontend``; returns the
    send times (ns) to measure from and the peak delivery backlog (s)."""
    import numpy as np

    first = np.asarray(run.rec.first_ns, dtype=np.float64) / 1e9
    fin = np.asarray(run.rec.finish_ns, dtype=np.float64) / 1e9
    if requests.max_concurrency is None:
        client_sent = np.asarray(sent_s, dtype=np.float64)
    else:
        client_sent = np.asarray(run.send_ns, dtype=np.float64) / 1e9
    # intake work joins the server's FIFO when the client sends, ahead of tokens emitted later
    f2, e2, peak = frontend.deliver(first, fin, np.asarray(run.target), client_sent, np.asarray(run.prompt))
    run.rec.first_ns = [int(x) for x in np.rint(f2 * 1e9)]
    run.rec.finish_ns = [int(x) for x in np.rint(np.maximum(e2, f2) * 1e9)]
    if requests.max_concurrency is None:
        send = [int(x) for x in np.rint(np.asarray(sent_s, dtype=np.float64) * 1e9)]
    else:
        send = list(run.send_ns)
    return send, peak


def engine_inputs(spec: Any, apply_profile: bool = True) -> tuple[StepCost, int]:
    """(step cost model, number of KV blocks) for an EngineSpec, from the cost and capacity models
    (with the active calibration profile applied unless ``apply_profile`` is False)."""
    if spec.arch is None or spec.effective is None:
        raise SchedReaderError(f"engine {spec.name}: model or configuration unresolved; cannot simulate",
                               file=spec.file, line=spec.line)
    gpu = spec.hardware.gpu
    cfg = spec.effective
    cost = IterationCostModel(spec.arch, gpu, cfg, spec.checkpoint_quantization)
    if apply_profile:

        cost = calibrated(cost)
    if cfg.num_gpu_blocks_override:
        blocks = int(cfg.num_gpu_blocks_override)
    else:
        blocks = int(estimate_capacity(spec.arch, gpu, cfg, spec.checkpoint_quantization).kv_cache.num_blocks)
    if blocks <= 0:
        raise SchedReaderError(f"engine {spec.name}: no KV cache blocks fit on {gpu.name}; cannot simulate",
                               file=spec.file, line=spec.line)
    return cost, blocks


def simulate_spec(spec: Any, requests: Requests, policies: Iterable[str] = ("vllm",), *,
                  chunk_size: int = 512, slo_ttft_ms: float | None = None, slo_tpot_ms: float | None = None,
                  progress: Callable[[str, int, int], None] | None = None,
                  slo_e2el_ms: float | None = None, percentiles: tuple[float, ...] = (),
                  endpoint: str = "completions") -> dict[str, dict[str, Any]]:
    """Simulate one EngineSpec under each policy; returns {policy: metrics}. ``endpoint``: the API entry
    point the client calls ("completions" or "chat"), with the calibrated API terms of an active profile."""
    cost, blocks = engine_inputs(spec)
    endpoint = endpoint_for(endpoint, getattr(spec.arch, "model_type", None), template_release(spec))
    out: dict[str, dict[str, Any]] = {}
    for pol in policies:
        if pol not in POLICIES:
            raise InputError(f"unknown policy {pol!r}; choose from {', '.join(POLICIES)}", key="--policy")
        params = params_for(pol, spec.effective, blocks, chunk_size=chunk_size)
        cb = (lambda d, t, _p=pol: progress(_p, d, t)) if progress else None
        out[pol] = with_frontend_latency(simulate(requests, params, cost, slo_ttft_ms=slo_ttft_ms,
                                                  slo_tpot_ms=slo_tpot_ms, progress=cb, slo_e2el_ms=slo_e2el_ms,
                                                  percentiles=percentiles,
                                                  frontend=api_server_for(endpoint, spec.vllm_version, **frontend_kwargs())), endpoint)
    return out


def with_frontend_latency(res: dict[str, Any], endpoint: str = "completions") -> dict[str, Any]:
    """What a ``vllm bench serve`` client measures: the engine's times plus the API server's fixed
    per-request latency for ``endpoint`` (the steady-state formula adds the same constant). An offline
    run (``endpoint`` "offline") has no API server: the engine's own times are returned unchanged."""
    if endpoint_kind(endpoint) == "offline":
        return res
    add_client_latency(res, frontend_ttft_s(endpoint),
                       f"API-server time for /v1/{'chat/' if 'chat' in endpoint else ''}completions")
    if active_profile() is not None and api_seconds():
        add_client_latency(res, api_seconds(), "calibrated API-server intake (--profile)")
    return res
