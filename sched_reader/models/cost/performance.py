"""``estimate_performance``: steady-state serving estimates keyed like ``vllm bench serve`` results.

Result keys follow the JSON that ``vllm bench serve --save-result`` writes (duration, completed,
total_input_tokens, total_output_tokens, request_throughput, output_throughput,
total_token_throughput, {mean,median,std,p99}_{ttft,tpot,itl,e2el}_ms), plus:
  roofline   per phase (decode at the operating batch, one prefill chunk): FLOPs, bytes,
             intensity, ridge point, bound, step time, and the per-term breakdown
  explain    list of one-line derivations
  steady_state / speculative / concurrency detail
A closed form gives means only: medians are set equal to the means, std and p99 are None (they need
the distribution of lengths and queueing, which the simulator provides).
"""

from __future__ import annotations

import math
from typing import Any

from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost.efficiency import sources_for
from sched_reader.models.cost.iteration import IterationCostModel
from sched_reader.models.cost.speculative import SpeculativeModel
from sched_reader.models.cost.steady_state import SteadyState, SteadyStateModel
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.gpu import GPU
from sched_reader.models.workload import Workload
from sched_reader.models.capacity import estimate_capacity
from sched_reader.models.cost.frontend import api_server_for


def _kv_tokens_from_capacity(arch: ModelArch, gpu: GPU, cfg: EffectiveConfig,
                             checkpoint_quantization: str | None) -> tuple[int | None, str]:
    """KV-cache token capacity from the capacity model (models.capacity)."""
    try:
        rep = estimate_capacity(arch, gpu, cfg, checkpoint_quantization)
        return int(rep.kv_cache.tokens), "KV capacity from models.capacity.estimate_capacity"
    except Exception as exc:  # noqa: BLE001 - an estimate without the KV bound is still useful
        return None, f"capacity model failed ({exc}); KV capacity not bounding concurrency"


def _ms(x: float | None) -> float | None:
    return None if x is None else x * 1e3


def _phase(b) -> dict[str, Any]:
    return {"flops": b.flops, "bytes": b.bytes, "intensity_flop_per_byte": b.intensity,
            "ridge_flop_per_byte": b.ridge, "bound": b.bound, "step_time_ms": b.step_time_s * 1e3,
            "gpu_time_ms": b.gpu_time_s * 1e3, "cpu_time_ms": b.cpu_time_s * 1e3,
            "terms": [t.as_dict() for t in b.terms.values()]}


def estimate_performance(arch: ModelArch, gpu: GPU, cfg: EffectiveConfig, workload: Workload,
                         checkpoint_quantization: str | None = None, kv_tokens: int | None = None,
                         acceptance_rate: float | None = None, draft_arch: ModelArch | None = None,
                         endpoint: str | None = None) -> dict:
    """Predict ``vllm bench serve`` metrics for ``workload`` on one engine (all its DP replicas).

    ``kv_tokens``: KV-cache capacity per replica in tokens (from the capacity model; computed here when
    None and the capacity model is importable). ``acceptance_rate``: speculative-decoding per-token
    acceptance (default per method, see speculative.DEFAULT_ACCEPTANCE). ``endpoint``: the API entry point
    the client calls, ``"chat"`` (/v1/chat/completions) or ``"completions"`` (default); it sets the fixed
    frontend share of TTFT (steady_state.FRONTEND_TTFT_S).
    """
    explain: list[str] = []
    if kv_tokens is None:
        kv_tokens, why = _kv_tokens_from_capacity(arch, gpu, cfg, checkpoint_quantization)
        explain.append(why)
    cost = IterationCostModel(arch, gpu, cfg, checkpoint_quantization)
    spec = None
    if cfg.speculative:
        spec = SpeculativeModel(cost, cfg.speculative, acceptance_rate, draft_arch)
    model = SteadyStateModel(cost, kv_tokens, spec, endpoint)
    I, O = workload.mean_input_len(), workload.mean_output_len()
    n = workload.num_prompts

    if workload.max_concurrency is not None:
        st: SteadyState = model.closed_loop(min(workload.max_concurrency, n), I, O, n)
    elif math.isinf(workload.request_rate):
        st = model.burst(n, I, O)
    else:
        st = model.open_loop(workload.request_rate, I, O, n)

    op = st.point
    per_replica_decode = max(1, int(round(op.decoding / cost.dp)))
    ctx = I + O / 2.0
    dec = cost.breakdown(per_replica_decode, int(per_replica_decode * ctx), 0, 0.0)
    pre = cost.breakdown(0, 0, int(op.chunk_tokens), op.chunk_tokens * op.chunk_tokens / 2.0, 1)

    explain += [
        f"weights: {cost.precision.fmt or cost.precision.act_key} ({cost.weight_bytes_per_gpu() / 1e9:.2f} GB "
        f"per GPU read per decode step when every expert is touched); KV {cost.precision.kv_bytes:g} B/element",
        f"workload: {workload.dataset_name}, mean input {I:g} / output {O:g} tokens, {n} prompts, "
        f"rate {workload.request_rate:g}/s, max_concurrency {workload.max_concurrency}",
        f"running requests: {op.concurrency:.1f} (limit {st.max_running} per replica from {st.limited_by}; "
        f"KV capacity {kv_tokens if kv_tokens else 'unknown'} tokens)",
        f"decode step at {per_replica_decode} sequences x {ctx:.0f} context: {dec.step_time_s * 1e3:.2f} ms, "
        f"{dec.bound}-bound (intensity {dec.intensity or 0:.1f} FLOP/B, ridge {dec.ridge or 0:.0f} FLOP/B)",
        f"prefill chunk {op.chunk_tokens:.0f} tokens: {pre.step_time_s * 1e3:.2f} ms, {pre.bound}-bound; "
        f"{op.prefill_steps} chunk step(s) per prompt",
        f"decode turns compute-bound at {st.compute_bound_concurrency} concurrent sequences"
        if st.compute_bound_concurrency else "decode stays memory-bound up to 8192 concurrent sequences",
        f"TPOT = mean step {op.itl_s * 1e3:.2f} ms / {op.tokens_per_step:.2f} tokens per step; "
        f"{op.prefill_fraction:.0%} of steps carry a prefill chunk",
        f"TTFT = {op.prefill_steps} x {op.mixed_step_s * 1e3:.2f} ms + {model.frontend_s * 1e3:.0f} ms "
        f"frontend ({endpoint or 'completions'} entry point) (+ queueing: mean TTFT {st.mean_ttft_s * 1e3:.1f} ms)",
    ]
    if cost.dp > 1:
        explain.append(
            f"data parallel {cost.dp}: {cost.dp} engine replicas (TP {cost.tp} x PP {cost.pp} GPUs each), each with its "
            f"own KV cache ({kv_tokens if kv_tokens else 'unknown'} tokens) and scheduler limits, behind one API "
            f"server that splits the requests evenly ({n / cost.dp:g} prompts"
            + (f", {min(workload.max_concurrency, n) / cost.dp:g} clients" if workload.max_concurrency else "")
            + " per replica); throughput summed over the replicas"
            + ("; MoE: the ranks run in lockstep and every GPU's expert shard (1/(TP x DP) of each expert) runs "
               "all replicas' tokens" if cost.moe_layers else ""))
    if cost.async_overlap:
        explain.append("async scheduling: host time overlaps GPU time (step = max(GPU, host))")
    if cfg.enforce_eager:
        explain.append("enforce_eager: no CUDA graphs, per-layer host launch time bounds small batches")
    explain += list(cost.precision.notes) + list(st.notes)
    # which measured kernel table (or named constant) each GEMM / attention term used
    explain += [x for x in dec.notes if x not in cost.precision.notes]

    out: dict[str, Any] = {
        "duration": st.duration_s,
        "completed": n,
        "total_input_tokens": int(round(I * n)),
        "total_output_tokens": int(round(O * n)),
        "request_throughput": st.request_throughput,
        "output_throughput": st.output_throughput,
        "total_token_throughput": st.total_token_throughput,
    }
    for metric, mean in (("ttft", st.mean_ttft_s), ("tpot", st.mean_tpot_s), ("itl", st.mean_itl_s),
                         ("e2el", st.mean_e2el_s)):
        out[f"mean_{metric}_ms"] = _ms(mean)
        out[f"median_{metric}_ms"] = _ms(mean)
        out[f"std_{metric}_ms"] = None
        out[f"p99_{metric}_ms"] = None
    _api_server_cap(out, I, O, endpoint, explain, getattr(cfg, "vllm_version", None))
    out["roofline"] = {"decode": _phase(dec) | {"batch": per_replica_decode, "mean_context": ctx},
                       "prefill": _phase(pre) | {"chunk_tokens": int(op.chunk_tokens)}}
    out["steady_state"] = {
        "mode": st.mode, "running_requests": op.concurrency, "decoding_requests": op.decoding,
        "max_running_per_replica": st.max_running, "limited_by": st.limited_by,
        "compute_bound_concurrency": st.compute_bound_concurrency, "regime": st.regime,
        "decode_step_ms": op.decode_step_s * 1e3, "mixed_step_ms": op.mixed_step_s * 1e3,
        "prefill_time_ms": op.prefill_steps * op.mixed_step_s * 1e3, "kv_tokens": kv_tokens,
        "data_parallel_size": cost.dp,
    }
    if spec is not None:
        sp = spec.describe()
        sp["breakeven_batch"] = spec.breakeven_batch(ctx, int(cfg.max_num_seqs))
        sp["step_at_operating_batch"] = vars(spec.step(per_replica_decode, ctx)) | {
            "speedup": spec.step(per_replica_decode, ctx).speedup}
        out["speculative"] = sp
    out["efficiency_sources"] = sources_for(gpu)
    out["explain"] = explain
    return out


def _api_server_cap(out: dict, I: float, O: float, endpoint: str | None, explain: list[str],
                    release: str | None = None) -> None:
    """Cap the closed-form throughput at what one API-server process can stream (models/cost/frontend.py):
    1 / (c_out + c_loop / O) output tokens/s on its event loop, and O / t_tok on its tokenizer thread (t_tok
    the prompt's tokenization, from vLLM 0.6.5 on a thread of its own). When the engine alone would exceed
    it, every stream slows by the same factor (TPOT, ITL and end-to-end latency stretch; request throughput
    falls). An offline run (``vllm bench throughput``) has no API server and no cap."""
    api = api_server_for(endpoint, release)
    if api is None:   # offline
        return
    per_token = api.output_token_s + float(api.loop_cost_s([I])[0]) / max(O, 1.0)
    tok = float(api.tokenize_s([I])[0])
    cap = min(1.0 / per_token, max(O, 1.0) / tok) if tok > 0 else 1.0 / per_token
    thr = out.get("output_throughput") or 0.0
    if thr <= cap:
        return
    k = thr / cap
    out["output_throughput"] = cap
    for key in ("request_throughput", "total_token_throughput"):
        if out.get(key):
            out[key] = out[key] / k
    if out.get("duration"):
        out["duration"] = out["duration"] * k
    for metric in ("tpot", "itl"):
        for stat in ("mean", "median"):
            if out.get(f"{stat}_{metric}_ms") is not None:
                out[f"{stat}_{metric}_ms"] *= k
    if out.get("mean_ttft_ms") is not None and out.get("mean_tpot_ms") is not None:
        e2el = out["mean_ttft_ms"] + max(O - 1.0, 0.0) * out["mean_tpot_ms"]
        out["mean_e2el_ms"] = out["median_e2el_ms"] = e2el
    explain.append(f"API server: one process streams at most {cap:,.0f} output tokens/s ({api.output_token_s * 1e6:.0f} us "
                   f"per token + intake); the engine alone would reach {thr:,.0f} tokens/s, so streams run {k:.2f}x slower")
