"""One engine spec -> its full diagnosis: memory/KV capacity, performance, bottleneck verdict, findings.

This is the pipeline ``sched-reader diagnose`` prints; it is usable from Python without the CLI::

    from sched_reader.analyzers.pipeline import build_specs
    from sched_reader.analyzers.diagnosis import diagnose
    [d] = [diagnose(s) for s in build_specs(["deploy.yaml"])]
    d.capacity.kv_cache                     # its JSON form: report.spec_json.diagnosis_json(d)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from sched_reader.compat.chat_template_work import template_release
from sched_reader.analyzers.pipeline import startup_refusal
from sched_reader.analyzers.bottleneck import MemoryBudget, analyze
from sched_reader.analyzers.simulator import from_bench_flags, params_for, simulate
from sched_reader.analyzers.simulator.api import with_frontend_latency
from sched_reader.analyzers.simulator.metrics import weighted_percentiles   # np.percentile's floats, no numpy.ma
from sched_reader.analyzers.simulator.workloads import WorkloadSpec, generate, is_jsonl, load_workload_file
from sched_reader.models.block_accounting import account_lengths
from sched_reader.models.calibration_profile import active_profile, calibrated, frontend_kwargs
from sched_reader.models.capacity import estimate_capacity
from sched_reader.errors import InputError
from sched_reader.findings import Finding
from sched_reader.models.cost.error_bands import attach_ranges, model_kind
from sched_reader.models.cost.frontend import api_server_for, endpoint_for
from sched_reader.models.cost.iteration import IterationCostModel
from sched_reader.models.cost.performance import estimate_performance
from sched_reader.models.engine_spec import EngineSpec
from sched_reader.models.spec_builder import mla_unchunked_source
from sched_reader.models.workload import Workload, endpoint_kind


class Diagnosis:
    """Everything ``diagnose`` reports for one engine (each part keeps its own explain terms)."""

    def __init__(self, spec: EngineSpec, capacity: Any, performance: dict[str, Any] | None,
                 verdict: Any | None, workload: Any | None, findings: list[Finding],
                 kv_waste: Any | None = None) -> None:
        self.kv_waste = kv_waste
        self.workload_from_file_mix = False  # True when the file's workload section (classes/trace) was used
        self.recommendations_dropped = 0     # recommendations the what-if found not to improve their target
        self.what_if: dict[str, Any] | None = None  # --set: metrics without -> with the overrides
        self.spec = spec
        self.capacity = capacity
        self.performance = performance
        self.verdict = verdict
        self.workload = workload
        self.findings = findings


_RICH_WORKLOAD_KEYS = ("classes", "arrival", "dataset", "trace")
_BENCH_KEYS = ("dataset_name", "random_input_len", "random_output_len", "random_range_ratio", "random_prefix_len",
               "num_prompts", "request_rate", "max_concurrency", "sharegpt_output_len", "burstiness")
# Overrides that are not bench-style workload fields: a workload file and the generator's seed.
_FILE_KEYS = ("workload_file", "seed")


def summarize_requests(requests: Any, source: str) -> Any:
    """A bench-style ``Workload`` that describes resolved requests as they are: their count, their
    arrival rate (requests minus one over the arrival span; inf when all arrive at once), their mean
    lengths, and prompt/output length percentiles (tokens). The requests themselves are what runs."""
    import math

    n = len(requests)
    a = requests.arrival_s
    span = float(a[-1] - a[0]) if n > 1 else 0.0
    rate = (n - 1) / span if span > 0 else math.inf
    p, o = requests.prompt_len, requests.output_len
    p50, p90, p99 = weighted_percentiles(p, None, (50, 90, 99))
    stats = {
        "prompt_p50": int(p50), "prompt_p90": int(p90),
        "prompt_p99": int(p99), "prompt_max": int(p.max()),
        "output_p50": int(weighted_percentiles(o, None, (50,))[0]), "output_max": int(o.max()),
        "arrival_span_s": round(span, 3),
    }
    return Workload(dataset_name="random",
                    random_input_len=max(1, round(float(p.mean()))),
                    random_output_len=max(1, round(float(o.mean()))),
                    num_prompts=n, request_rate=rate, max_concurrency=requests.max_concurrency,
                    source=source, length_stats=stats)


def bench_requests(workload: Workload, seed: int = 0) -> Any:
    """The simulator's requests for a bench-style ``Workload`` (``vllm bench serve`` semantics: lengths,
    count, rate with gamma gaps of shape ``burstiness``, ``random_range_ratio``; ``seed`` picks the draw)."""
    return from_bench_flags(dataset_name=workload.dataset_name, random_input_len=workload.random_input_len,
                            random_output_len=workload.random_output_len, num_prompts=workload.num_prompts,
                            request_rate=workload.request_rate, max_concurrency=workload.max_concurrency,
                            burstiness=workload.burstiness, random_range_ratio=workload.random_range_ratio,
                            random_prefix_len=workload.random_prefix_len,
                            sharegpt_output_len=workload.sharegpt_output_len, seed=seed)


def resolve_workload(spec: EngineSpec, overrides: dict[str, Any]) -> tuple[Any, Any | None]:
    """The workload to evaluate, as (bench-style ``Workload``, simulator ``Requests`` or None).

    ``overrides["workload_file"]`` (``--workload FILE``: a JSONL trace or a workload YAML) wins; then
    ``vllm bench serve``-style flags on the command line; then the file's ``workload:`` section. A trace or
    a section with ``classes`` / ``arrival`` / ``dataset`` / ``trace`` resolves to requests that are replayed
    exactly (arrival times, lengths, prefixes, count); the bench-style summary only describes them. With
    none, the defaults of ``vllm bench serve --dataset-name random``: 1,024 in / 128 out tokens, 1,000
    prompts, all at once. ``overrides["endpoint"]`` (``--backend`` / ``--endpoint``: the API entry point the
    client calls) applies to every source, a replayed trace included.
    """
    overrides = dict(overrides)
    endpoint = overrides.pop("endpoint", None)
    if endpoint is None:
        endpoint = (spec.workload or {}).get("endpoint")
    bench, requests = _resolve_requests(spec, overrides)
    if endpoint is not None:
        try:
            bench = bench.model_copy(update={"endpoint": endpoint_kind(endpoint)})
        except ValueError as err:
            raise InputError(str(err), key="--endpoint / --backend") from None
    return bench, requests


def _resolve_requests(spec: EngineSpec, overrides: dict[str, Any]) -> tuple[Any, Any | None]:
    """``resolve_workload`` without the entry point."""
    overrides = dict(overrides)
    wfile = overrides.pop("workload_file", None)
    seed = overrides.pop("seed", None)
    overrides.pop("metric_percentiles", None)
    overrides.pop("goodput", None)
    if wfile is not None:
        clash = [k for k, v in overrides.items() if v is not None and k != "max_concurrency"]
        if clash:
            raise InputError(f"--workload replays the file as written; --{clash[0].replace('_', '-')} does not "
                             "apply to it", key="--workload",
                             hint="drop the bench flag, or drop --workload to generate a workload")
        requests = load_workload_file(wfile, seed=seed, max_concurrency=overrides.get("max_concurrency"))
        kind = "trace" if is_jsonl(Path(wfile)) else "workload file"
        return summarize_requests(requests, f"{kind} {wfile}"), requests
    flags_given = any(v is not None for v in overrides.values())
    section = {k.replace("-", "_"): v for k, v in (spec.workload or {}).items() if k != "endpoint"}
    if not flags_given and any(k in section for k in _RICH_WORKLOAD_KEYS):
        from pydantic import ValidationError


        if seed:
            section["seed"] = seed
        try:
            wspec = WorkloadSpec.model_validate(section)
        except ValidationError as err:
            raise InputError(f"invalid workload: {_first_error(err)}", file=spec.file, key="workload") from None
        requests = generate(wspec, base_dir=Path(spec.file).parent)
        src = f"trace {wspec.trace}" if wspec.trace else "the file's workload section"
        bench = summarize_requests(requests, src)
        if wspec.arrival.process in ("poisson", "gamma") and wspec.arrival.rate and not wspec.trace:
            bench = bench.model_copy(update={"request_rate": float(wspec.arrival.rate),
                                             "burstiness": float(wspec.arrival.burstiness)})
        return bench, requests
    data = {k: v for k, v in section.items() if k in _BENCH_KEYS}
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Workload(**data), None
    except Exception as err:  # pydantic ValidationError -> one line
        raise InputError(f"invalid workload: {_first_error(err)}", file=spec.file, key="workload") from None


def _fit_workload(spec: EngineSpec, workload: Any, requests: Any | None) -> Any:
    """Clip a fixed-length workload whose prompt does not fit ``--max-model-len`` (a note, never an error).

    vLLM rejects a prompt of ``max_model_len`` tokens or more; a KV-budget diagnosis must not depend on
    the default 1,024-token prompt, so prompt and output are scaled down to fit (output first kept >= 1
    token) and the change is noted on the engine.
    """
    if requests is not None or spec.effective is None or workload.dataset_name != "random":
        return workload
    mml = int(spec.effective.max_model_len or 0)
    if mml < 2 or workload.random_input_len + workload.random_output_len <= mml:
        return workload
    out = max(1, min(workload.random_output_len, mml // 8))
    inp = max(1, min(workload.random_input_len, mml - out))
    spec.notes.append(
        f"workload clipped to fit max_model_len {mml}: {workload.random_input_len} in / "
        f"{workload.random_output_len} out tokens -> {inp} in / {out} out (pass --random-input-len / "
        f"--random-output-len to choose)")
    return workload.model_copy(update={"random_input_len": inp, "random_output_len": out})


def needs_queueing(bench: Any, requests: Any | None) -> bool:
    """Whether the performance block needs the simulator (queueing, bursts, mixes, length spread).

    The steady-state formula assumes a closed loop whose requests arrive staggered. `vllm bench serve`
    sends the first ``max_concurrency`` requests together, and with fixed lengths the requests whose
    prompts were prefilled in the same step finish in the same step, so their successors arrive
    together again: the loop keeps running in groups, each new group's prompts queueing like a small
    burst. The simulator replays that; the formula stands in for it only for runs larger than
    ``CLOSED_LOOP_SIM_MAX_STEPS`` request-steps (num_prompts x output tokens), to keep diagnose fast.
    """
    if requests is not None:
        return True
    if bench.dataset_name != "random" or bench.random_range_ratio > 0 or bench.burstiness != 1.0:
        return True
    if bench.random_prefix_len > 0:   # a shared, cached prefix: the formula would prefill it every time
        return True
    if bench.max_concurrency is not None and bench.num_prompts * bench.random_output_len <= CLOSED_LOOP_SIM_MAX_STEPS:
        return True
    return bench.max_concurrency is None or not math.isinf(bench.request_rate)


# request-steps (num_prompts x output tokens) up to which a fixed-length closed loop is simulated: 16x
# diagnose's default burst (1,000 x 128). Replay times measured on one core (Llama-3.1-8B, H100):
# 3,200 x 1,024 at concurrency 64 0.15 s, 7,800 x 256 at 256 0.33 s, but 1,950 x 1,024 at 1,024 (KV
# bound, requests queue) 4.1 s, as long as a burst of the same size; larger runs use the formula
CLOSED_LOOP_SIM_MAX_STEPS = 2_000_000


def _first_error(err: Exception) -> str:
    errors = getattr(err, "errors", None)
    if callable(errors):
        try:
            e = errors()[0]
            loc = ".".join(str(x) for x in e.get("loc", ()))
            return f"{loc}: {e.get('msg')}"
        except Exception:  # noqa: BLE001
            pass
    return str(err).splitlines()[0]


def diagnose(spec: EngineSpec, workload_overrides: dict[str, Any] | None = None, *,
             performance: bool = True) -> Diagnosis:
    """Capacity, performance and the bottleneck verdict for one engine.

    ``performance=False`` skips the speed prediction (no simulation): capacity findings only, as the
    CI gate (`lint`) needs.
    """
    findings = list(spec.findings)
    skipped = False
    if not spec.hardware.modelled:
        o = spec.hardware.gpu_origin
        findings.append(Finding(
            rule="SR116", severity="info",
            message=f"accelerator {spec.hardware.accelerator!r} is not in the GPU catalog: GPU memory, KV and speed "
                    "figures are not computed",
            file=o.file if o and o.file else spec.file, line=o.line if o else spec.line, key=o.key if o else None,
            fix="pass --gpu NAME to analyze it as a catalog GPU"))
        skipped = True
    if spec.arch is None or spec.effective is None:
        # The engine is still reported (flags, release, hardware); only the figures need the model.
        reason = spec.unresolved[-1].reason if spec.unresolved else "model not resolved"
        o = spec.model_origin
        findings.append(Finding(
            rule="SR115", severity="info",
            message=f"model {spec.model_name or '(none)'!r} not resolved ({reason}): KV-cache, capacity and speed "
                    "figures are not computed",
            file=o.file if o and o.file else spec.file, line=o.line if o else spec.line, key="model",
            fix="pass --model NAME (a Hugging Face id) or --model-config PATH to a config.json"))
        skipped = True
    if skipped:
        findings.sort(key=lambda f: f.sort_key())
        return Diagnosis(spec, None, None, None, None, findings)
    overrides = dict(workload_overrides or {})
    sim_opts = {"seed": overrides.get("seed") or 0,
                "percentiles": tuple(overrides.pop("metric_percentiles", None) or ()),
                "goodput": dict(overrides.pop("goodput", None) or {})}
    workload, requests = resolve_workload(spec, overrides)
    workload = _fit_workload(spec, workload, requests)
    if spec.hardware.count == 0:
        o = spec.hardware.count_origin
        findings.append(Finding(
            rule="SR116", severity="info",
            message="no GPU requested: this is a CPU deployment; GPU memory, KV and speed figures are not computed",
            file=o.file if o else spec.file, line=o.line if o else spec.line, key=o.key if o else None,
            fix="request GPUs (nvidia.com/gpu) or pass --gpu to analyze it as a GPU deployment"))
        findings.sort(key=lambda f: f.sort_key())
        return Diagnosis(spec, None, None, None, workload, findings)
    cap = estimate_capacity(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
    kv = cap.kv_cache
    perf = None
    step_time = None
    if cap.start_error() is None:
        model = IterationCostModel(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
        try:
            perf = _performance(spec, workload, requests, kv, model, sim_opts) if performance else None
        except InputError as err:
            if any(v is not None for v in (workload_overrides or {}).values()) or spec.workload:
                raise  # the user's own workload does not fit: their command line / file is wrong
            perf = None  # sched-reader's default workload does not fit this engine: skip speed, say why
            findings.append(Finding(
                rule="SR115", severity="info", key="workload",
                message=f"speed figures not computed: the default benchmark workload does not fit this engine ({err.message})",
                file=spec.file, line=spec.line,
                fix="pass --random-input-len / --random-output-len that fit --max-model-len"))
        step_time = lambda nd, ctx, tp, pairs: model.step_time(nd, ctx, tp, pairs, 1 if tp else 0)  # noqa: E731
    verdict_perf = perf
    if verdict_perf is None and step_time is not None and workload.max_concurrency is None \
            and workload.request_rate != float("inf"):
        # No simulation asked (lint): the in-flight count of an open loop still comes from Little's law,
        # with the steady-state formula's throughput and latency (~20 ms), not from the request count.
        verdict_perf = estimate_performance(spec.arch, spec.hardware.gpu, spec.effective, workload,
                                            spec.checkpoint_quantization, kv_tokens=kv.tokens,
                                            endpoint=_api_endpoint(spec, workload))
    verdict = _verdict(spec, cap, workload, step_time, verdict_perf, requests)
    refused = startup_refusal(spec)
    if refused is not None and verdict.bottleneck != "does_not_start":
        # a vLLM start-up check fails before any KV block exists: no scheduling default can bind
        verdict = verdict.model_copy(update={"bottleneck": "does_not_start", "summary": refused,
                                             "recommendations": []})
    findings.extend(_verdict_findings(spec, cap, verdict))
    findings.sort(key=lambda f: f.sort_key())
    waste = _kv_waste(spec, cap, workload, requests)
    d = Diagnosis(spec, cap, perf, verdict, workload, findings, waste)
    d.workload_from_file_mix = requests is not None
    return d


def _kv_waste(spec: EngineSpec, cap: Any, workload: Any, requests: Any | None) -> Any | None:
    """PagedAttention vs a contiguous allocator for this workload's lengths (the lesson's exercise 4)."""
    import numpy as np


    kv = cap.kv_cache
    if cap.start_error() is not None or not kv.tokens or not kv.bytes_per_token:
        return None
    if requests is not None:
        lens = requests.prompt_len + requests.output_len
    else:
        lens = np.full(workload.num_prompts, int(workload.mean_input_len() + workload.mean_output_len()))
    return account_lengths(lens, max_model_len=spec.effective.max_model_len, block_size=int(kv.block_size),
                           kv_bytes_per_token=int(kv.bytes_per_token),
                           kv_budget_bytes=int(kv.tokens) * int(kv.bytes_per_token))


def _api_endpoint(spec: EngineSpec, workload: Any) -> str:
    """The API entry point the workload's client calls, as the API-server model keys it."""
    return endpoint_for(getattr(workload, "endpoint", None), getattr(spec.arch, "model_type", None),
                        template_release(spec))


def _performance(spec: EngineSpec, workload: Any, requests: Any | None, kv: Any, model: Any,
                 sim_opts: dict[str, Any] | None = None) -> dict[str, Any]:
    """``vllm bench serve`` metrics: simulated when the workload queues, else the steady-state formula.

    Both carry the roofline block of the steady-state model; ``method`` says which produced the metrics.
    """
    sim_opts = sim_opts or {}
    seed = int(sim_opts.get("seed") or 0)
    eff = spec.effective
    endpoint = _api_endpoint(spec, workload)
    steady = estimate_performance(spec.arch, spec.hardware.gpu, spec.effective, workload,
                                  spec.checkpoint_quantization, kv_tokens=kv.tokens, endpoint=endpoint)

    if not needs_queueing(workload, requests) and active_profile() is None and not sim_opts.get("percentiles") \
            and not sim_opts.get("goodput"):
        steady["method"] = "steady-state formula (fixed lengths, closed loop at max_concurrency)"
        return attach_ranges(steady, workload.max_concurrency, workload.request_rate,
                             model_kind(spec.arch), workload.num_prompts)
    if requests is None:
        requests = bench_requests(workload, seed)
    blocks = int(eff.num_gpu_blocks_override or kv.num_blocks)
    goodput = sim_opts.get("goodput") or {}
    sim = with_frontend_latency(simulate(
        requests, params_for("vllm", eff, blocks), calibrated(model), slo_ttft_ms=goodput.get("ttft"),
        slo_tpot_ms=goodput.get("tpot"), slo_e2el_ms=goodput.get("e2el"),
        percentiles=tuple(sim_opts.get("percentiles") or ()),
        frontend=api_server_for(endpoint, spec.vllm_version, **frontend_kwargs())), endpoint)
    perf = {k: v for k, v in sim.items() if k not in ("timeseries", "histograms", "params", "engine_counters")}
    perf["roofline"] = steady.get("roofline")
    perf["explain"] = steady.get("explain")
    if steady.get("speculative"):
        perf["speculative"] = steady["speculative"]  # drafter, acceptance, break-even batch (closed form)
    perf["steady_state_estimate"] = {
        k: steady.get(k) for k in ("output_throughput", "mean_ttft_ms", "mean_tpot_ms") if k in steady
    }
    engine = "V0" if str(getattr(eff, "engine", "v1")).lower() == "v0" else "V1"
    perf["method"] = f"simulation (vLLM {engine} policy, event-driven, request by request) with the roofline step cost"
    if not math.isinf(workload.request_rate) and requests is not None:
        perf["request_rate"] = workload.request_rate
    return attach_ranges(perf, workload.max_concurrency, workload.request_rate, model_kind(spec.arch),
                         workload.num_prompts)


def in_flight(workload: Any, perf: dict[str, Any] | None) -> int:
    """Requests the workload keeps in flight: the concurrency cap, the whole burst, or Little's law.

    For an open loop at a finite rate, in-flight = request throughput (req/s) x mean end-to-end latency (s),
    from the performance block (simulated when available).
    """
    if workload.max_concurrency is not None:
        return min(workload.max_concurrency, workload.num_prompts)
    if math.isinf(workload.request_rate) or not perf:
        return workload.num_prompts
    rps = perf.get("request_throughput") or 0.0
    e2e_s = (perf.get("mean_e2el_ms") or 0.0) / 1000.0
    return max(1, min(workload.num_prompts, math.ceil(rps * e2e_s)))


def _verdict(spec: EngineSpec, cap: Any, workload: Any, step_time: Any, perf: dict[str, Any] | None,
             requests: Any | None = None) -> Any:

    stats = workload.length_stats or {}
    long_prompt = int(stats.get("prompt_p99") or workload.mean_input_len())
    long_share = None
    if requests is not None and len(requests):
        long_share = float((requests.prompt_len >= max(2048, long_prompt // 2)).mean())
    eff = spec.effective
    kv = cap.kv_cache
    mean_in, mean_out = workload.mean_input_len(), workload.mean_output_len()
    fp8_ok = _fp8_kv_supported(spec)
    replicas = max(1, int(eff.data_parallel_size))
    return analyze(
        kv_tokens=int(kv.tokens or 0),
        block_size=int(kv.block_size),
        max_model_len=eff.max_model_len,
        max_num_seqs=eff.max_num_seqs,
        max_num_batched_tokens=eff.max_num_batched_tokens,
        chunked_prefill=eff.enable_chunked_prefill,
        mean_input_len=mean_in,
        mean_output_len=mean_out,
        # data parallel: each DP engine has its own KV cache and --max-num-seqs and serves its share of the
        # requests (analyzers/simulator/data_parallel.py: round robin, the larger share counted)
        workload_concurrency=-(-in_flight(workload, perf) // replicas),
        fits=cap.start_error() is None,
        start_error=cap.start_error(),
        memory=_memory_budget(cap, eff, spec.arch),
        shares_gpu=spec.shared_gpu_group is not None,
        kv_cache_dtype=eff.kv_cache_dtype,
        fp8_kv_supported=fp8_ok,
        gpu_memory_utilization=eff.gpu_memory_utilization,
        tensor_parallel_size=eff.tensor_parallel_size,
        step_time=step_time,
        long_prompt_len=long_prompt,
        long_prompt_share=long_share,
        itl_p99_ms=(perf or {}).get("p99_itl_ms"),
        replicas=replicas,
    )


def _memory_budget(cap: Any, eff: Any, arch: Any = None) -> Any:
    """The per-GPU memory figures the start-up advice needs (bytes)."""
    m = cap.memory
    return MemoryBudget(
        total_bytes=int(m.total_bytes),
        requested_bytes=int(m.requested_bytes),
        weights_bytes=int(m.weights_bytes),
        other_bytes=int(m.requested_bytes - m.weights_bytes - m.kv_cache_bytes),
        bytes_per_token=int(cap.kv_cache.bytes_per_token),
        tensor_parallel_size=eff.tensor_parallel_size,
        pipeline_parallel_size=eff.pipeline_parallel_size,
        weights_16bit=eff.quantization is None and eff.dtype in ("bfloat16", "float16"),
        kv_split_limit=_kv_split_limit(arch, eff.tensor_parallel_size),
    )


def _kv_split_limit(arch: Any, tp: int) -> int:
    """How many times more tensor parallelism still divides each token's KV (GQA heads; MLA never)."""
    if arch is None or arch.is_mla:
        return 1
    return max(1, arch.num_kv_heads // max(1, tp))


def _fp8_kv_supported(spec: EngineSpec) -> bool:
    cc = spec.hardware.gpu.compute_capability
    try:
        return cc is not None and float(cc) >= 8.9
    except ValueError:
        return False


# a binding scheduler flag -> (its finding's rule, the flag's dest, the flag as typed), at the flag's line
_BINDING_FLAG_RULES = {"max_num_seqs": ("SR203", "max_num_seqs", "--max-num-seqs"),
                       "token_budget": ("SR204", "max_num_batched_tokens", "--max-num-batched-tokens")}


def _verdict_findings(spec: EngineSpec, cap: Any, verdict: Any) -> list[Finding]:
    """Capacity findings (SR2xx) with the figures that justify them."""
    out: list[Finding] = []
    eff = spec.effective
    mml = spec.args.get("max_model_len")
    line = mml.origin.line if mml else spec.line
    if cap.start_error() is not None:
        fix = "; ".join(f"{r.flag} {r.suggested}" for r in verdict.recommendations[:3]) or None
        out.append(Finding(rule="SR201", severity="error", message=cap.start_error(),
                           file=spec.file, line=line, key="--max-model-len" if mml else None, fix=fix))
        return out
    if verdict.bottleneck == "kv_cache_blocks":
        r = verdict.recommendations[0] if verdict.recommendations else None
        out.append(Finding(
            rule="SR202", severity="warning", message=verdict.summary, file=spec.file, line=spec.line,
            fix=f"{r.flag} {r.suggested}: {r.why}" if r else None))
    elif verdict.bottleneck in _BINDING_FLAG_RULES:
        rule, dest, key = _BINDING_FLAG_RULES[verdict.bottleneck]
        r = verdict.recommendations[0]
        fv = spec.args.get(dest)
        out.append(Finding(
            rule=rule, severity="info", message=verdict.summary, file=spec.file,
            line=fv.origin.line if fv else spec.line, key=key, fix=f"{r.flag} {r.suggested}: {r.why}"))
    if eff is not None and not eff.enable_chunked_prefill and eff.max_num_batched_tokens >= 8192:
        forced = mla_unchunked_source(spec) is not None
        out.append(Finding(
            rule="SR205", severity="info",
            message=(f"chunked prefill is off: a prompt of up to {eff.max_num_batched_tokens:,} tokens runs in one "
                     "step and stalls every running decode for that step"
                     + (f" (vLLM {eff.vllm_version} turns it off for MLA models whatever the flags say)"
                        if forced else "")),
            file=spec.file, line=spec.line,
            fix=("upgrade vLLM: MLA models run chunked prefill from 0.7.4 nightlies / 0.8.0 on CUDA" if forced
                 else "enable chunked prefill (--enable-chunked-prefill)")))
    return out
