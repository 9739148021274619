"""One engine spec -> its full diagnosis: memory/KV capacity, performance, bottleneck verdict, findings.

This is the pipeline ``sched-reader diagnose`` prints; it is usable from Python without the CLI::

    from sched_reader.models.spec_builder import build_specs
    from sched_reader.analyzers.diagnosis import diagnose
    [d] = [diagnose(s) for s in build_specs(["deploy.yaml"])]
    d.to_json()["kv_cache"]["tokens"]
"""

from __future__ import annotations

from typing import Any

from sched_reader.errors import InputError
from sched_reader.findings import Finding
from sched_reader.models.engine_spec import EngineSpec


class Diagnosis:
    """Everything ``diagnose`` reports for one engine (each part keeps its own explain terms)."""

    def __init__(self, spec: EngineSpec, capacity: Any, performance: dict[str, Any] | None,
                 verdict: Any | None, workload: Any | None, findings: list[Finding]) -> None:
        self.spec = spec
        self.capacity = capacity
        self.performance = performance
        self.verdict = verdict
        self.workload = workload
        self.findings = findings

    def to_json(self, explain: bool = True) -> dict[str, Any]:
        from sched_reader.report.spec_json import finding_json, spec_json

        out = spec_json(self.spec)
        cap = self.capacity.to_json() if self.capacity is not None else {}
        out["memory"] = cap.get("memory")
        out["kv_cache"] = cap.get("kv_cache")
        if explain and "explain" in cap:
            out["memory_explain"] = cap["explain"]
        out["workload"] = self.workload.describe() if self.workload is not None else None
        perf = dict(self.performance) if self.performance else None
        if perf is not None and not explain:
            perf.pop("explain", None)
        out["performance"] = perf
        out["bottleneck"] = self.verdict.model_dump() if self.verdict is not None else None
        out["findings"] = [finding_json(f) for f in self.findings]
        return out


def resolve_workload(spec: EngineSpec, overrides: dict[str, Any]) -> Any:
    """The workload to evaluate: CLI flags override the file's ``workload:`` section, else defaults.

    Defaults (stated in the output): ``vllm bench serve --dataset-name random`` with 1,024 input and
    128 output tokens, 1,000 prompts, all at once (``--request-rate inf``).
    """
    from sched_reader.models.workload import Workload

    data: dict[str, Any] = {}
    if spec.workload:
        data.update({k.replace("-", "_"): v for k, v in spec.workload.items()})
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Workload(**data)
    except Exception as err:  # pydantic ValidationError -> one line
        raise InputError(f"invalid workload: {_first_error(err)}", file=spec.file, key="workload") from None


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


def diagnose(spec: EngineSpec, workload_overrides: dict[str, Any] | None = None) -> Diagnosis:
    """Capacity, performance and the bottleneck verdict for one engine."""
    from sched_reader.models.capacity import estimate_capacity

    findings = list(spec.findings)
    if spec.arch is None or spec.effective is None:
        reason = spec.unresolved[0].reason if spec.unresolved else "model not resolved"
        raise InputError(
            f"cannot diagnose engine {spec.name!r}: {reason}",
            file=spec.file,
            line=spec.model_origin.line if spec.model_origin else spec.line,
            key="model",
            hint="pass --model-config PATH to a config.json",
        )
    workload = resolve_workload(spec, workload_overrides or {})
    cap = estimate_capacity(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
    kv = cap.kv_cache
    perf = None
    step_time = None
    if kv.fits:
        from sched_reader.models.cost.iteration import IterationCostModel
        from sched_reader.models.cost.performance import estimate_performance

        perf = estimate_performance(spec.arch, spec.hardware.gpu, spec.effective, workload,
                                    spec.checkpoint_quantization, kv_tokens=kv.tokens)
        model = IterationCostModel(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)

        def step_time(nd: int, ctx: int, tp: int, pairs: float) -> float:
            return model.step_time(nd, ctx, tp, pairs, 1 if tp else 0)
    verdict = _verdict(spec, cap, workload, step_time)
    findings.extend(_verdict_findings(spec, cap, verdict))
    findings.sort(key=lambda f: f.sort_key())
    return Diagnosis(spec, cap, perf, verdict, workload, findings)


def _verdict(spec: EngineSpec, cap: Any, workload: Any, step_time: Any) -> Any:
    from sched_reader.analyzers.bottleneck import analyze

    eff = spec.effective
    kv = cap.kv_cache
    mean_in, mean_out = workload.mean_input_len(), workload.mean_output_len()
    conc = workload.max_concurrency
    if conc is None and workload.request_rate not in (None, float("inf")):
        conc = None  # open loop at a finite rate: in-flight count depends on speed; treat as unbounded
    fp8_ok = _fp8_kv_supported(spec)
    return analyze(
        kv_tokens=int(kv.tokens or 0),
        block_size=int(kv.block_size),
        max_model_len=eff.max_model_len,
        max_num_seqs=eff.max_num_seqs,
        max_num_batched_tokens=eff.max_num_batched_tokens,
        chunked_prefill=eff.enable_chunked_prefill,
        mean_input_len=mean_in,
        mean_output_len=mean_out,
        workload_concurrency=conc if conc is not None else min(workload.num_prompts, 10**6),
        fits=bool(kv.fits),
        start_error=kv.error,
        kv_cache_dtype=eff.kv_cache_dtype,
        fp8_kv_supported=fp8_ok,
        gpu_memory_utilization=eff.gpu_memory_utilization,
        step_time=step_time,
    )


def _fp8_kv_supported(spec: EngineSpec) -> bool:
    cc = spec.hardware.gpu.compute_capability
    try:
        return cc is not None and float(cc) >= 8.9
    except ValueError:
        return False


def _verdict_findings(spec: EngineSpec, cap: Any, verdict: Any) -> list[Finding]:
    """Capacity findings (SR2xx) with the figures that justify them."""
    out: list[Finding] = []
    kv = cap.kv_cache
    eff = spec.effective
    mml = spec.args.get("max_model_len")
    line = mml.origin.line if mml else spec.line
    if not kv.fits:
        fix = "; ".join(f"{r.flag} {r.suggested}" for r in verdict.recommendations[:3]) or None
        out.append(Finding(rule="SR201", severity="error", message=kv.error or "vLLM will not start",
                           file=spec.file, line=line, key="--max-model-len" if mml else None, fix=fix))
        return out
    if verdict.bottleneck == "kv_cache_blocks":
        r = verdict.recommendations[0] if verdict.recommendations else None
        out.append(Finding(
            rule="SR202", severity="warning", message=verdict.summary, file=spec.file, line=spec.line,
            fix=f"{r.flag} {r.suggested}: {r.why}" if r else None))
    elif verdict.bottleneck == "max_num_seqs":
        r = verdict.recommendations[0]
        fv = spec.args.get("max_num_seqs")
        out.append(Finding(
            rule="SR203", severity="info", message=verdict.summary, file=spec.file,
            line=fv.origin.line if fv else spec.line, key="--max-num-seqs",
            fix=f"{r.flag} {r.suggested}: {r.why}"))
    elif verdict.bottleneck == "token_budget":
        r = verdict.recommendations[0]
        fv = spec.args.get("max_num_batched_tokens")
        out.append(Finding(
            rule="SR204", severity="info", message=verdict.summary, file=spec.file,
            line=fv.origin.line if fv else spec.line, key="--max-num-batched-tokens",
            fix=f"{r.flag} {r.suggested}: {r.why}"))
    if eff is not None and not eff.enable_chunked_prefill and eff.max_num_batched_tokens >= 8192:
        out.append(Finding(
            rule="SR205", severity="info",
            message=(f"chunked prefill is off: a prompt of up to {eff.max_num_batched_tokens:,} tokens runs in one "
                     "step and stalls every running decode for that step"),
            file=spec.file, line=spec.line, fix="enable chunked prefill (--enable-chunked-prefill)"))
    return out
