"""Fact-check the lesson's numbers with sched-reader's own models (``sched-reader lesson``).

The claims (the lesson's words, the number it states, what to compute) live in
``data/lesson_claims.yaml``; every figure here comes from a model of the tool:

* KV bytes per token         ``models.kv_cache.kv_bytes_per_token``
* memory profile, KV budget   ``models.capacity.estimate_capacity``
* contiguous vs paged waste   ``models.block_accounting.block_accounting``
* per-step roofline time      ``models.cost.IterationCostModel``
* steady-state throughput     ``models.cost.performance.estimate_performance``
* scheduling policies         ``analyzers.simulator`` (naive / continuous / chunked / vllm)
* defaults per release        ``compat.defaults`` (release facts, scheduler defaults)

Verdicts (``VERDICTS``):
  holds               the computed figure matches the lesson's within the claim's tolerance, in every
                      condition computed
  wrong               it matches in no condition computed
  misleading          it matches in some conditions and not others, or the number is right and the
                      meaning given for it is not
  depends-on-release  it matches the defaults of some vLLM releases and not others
  not-computable      the setup cannot be evaluated on the chosen GPU (the reason is given)
``ratio`` is computed / lesson (the lesson's midpoint for a range, its bound for "< X").
Units: bytes, seconds, tokens/s, tokens, fractions; display strings are derived from those.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from sched_reader.errors import InputError, SchedReaderError
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.analyzers.simulator.api import simulate_spec
from sched_reader.analyzers.simulator.policies import LESSON_CHUNK_TOKENS
from sched_reader.analyzers.simulator.workloads import from_bench_flags, generate, WorkloadSpec
from sched_reader.compat.defaults import release_facts, scheduler_defaults
from sched_reader.compat.releases import known_releases, newest, resolve_version
from sched_reader.models.block_accounting import block_accounting
from sched_reader.models.capacity import estimate_capacity
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.performance import estimate_performance
from sched_reader.models.cost.precision import peak_flops
from sched_reader.models.gpu_catalog import resolve_gpu
from sched_reader.models.kv_cache import kv_bytes_per_element, kv_bytes_per_token
from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.spec_builder import derived_max_model_len
from sched_reader.models.weights import model_dtype_bytes
from sched_reader.models.workload import Workload

CLAIMS_PATH = Path(__file__).with_name("data") / "lesson_claims.yaml"
SCHEMA_VERSION = 1
VERDICTS = ("holds", "wrong", "misleading", "depends-on-release", "not-computable")
DEFAULT_GPU = "H100"
GIB = 1 << 30


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------


@dataclass
class Variant:
    """The same figure under another condition (or in another vLLM release)."""

    label: str
    value: float | None
    unit: str
    holds: bool | None
    kind: str = "condition"          # condition | release

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "value": self.value, "unit": self.unit,
                "text": fmt_value(self.value, self.unit), "holds": self.holds, "kind": self.kind}


@dataclass
class Outcome:
    """What one check computes. ``verdict``/``why`` are set only by checks with their own rule."""

    value: float | None
    unit: str
    formula: str
    inputs: dict[str, Any]
    text: str | None = None
    variants: list[Variant] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    verdict: str | None = None
    why: str | None = None
    ratio: float | None = None
    ratios: dict[str, float] | None = None


@dataclass
class ClaimResult:
    id: str
    label: str
    section: str
    quote_zh: str
    gloss_en: str
    lesson: dict[str, Any]
    outcome: Outcome
    verdict: str
    why: str
    tolerance: float

    @property
    def computed_text(self) -> str:
        o = self.outcome
        return o.text if o.text is not None else fmt_value(o.value, o.unit)

    @property
    def verdict_text(self) -> str:
        o = self.outcome
        if o.ratios:
            return f"{self.verdict} ({', '.join(fmt_ratio(r) for r in o.ratios.values())})"
        if o.ratio is not None:
            return f"{self.verdict} ({fmt_ratio(o.ratio)})"
        return self.verdict

    def to_json(self) -> dict[str, Any]:
        o = self.outcome
        out = {
            "id": self.id, "label": self.label, "section": self.section,
            "quote_zh": self.quote_zh, "gloss_en": self.gloss_en,
            "lesson": dict(self.lesson),
            "computed": {"value": o.value, "unit": o.unit, "text": self.computed_text},
            "ratio": o.ratio,
            "verdict": self.verdict,
            "why": self.why,
            "tolerance": self.tolerance,
            "formula": o.formula,
            "inputs": dict(o.inputs),
            "variants": [v.to_json() for v in o.variants],
            "notes": list(o.notes),
        }
        if o.ratios:
            out["ratios"] = dict(o.ratios)
        return out


@dataclass
class LessonReport:
    title: str
    title_en: str
    model: str
    gpu: str
    vllm_version: str
    setups: dict[str, dict[str, Any]]
    claims: list[ClaimResult]

    def summary(self) -> dict[str, int]:
        return {v: sum(1 for c in self.claims if c.verdict == v) for v in VERDICTS}

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "lesson": {"title": self.title, "title_en": self.title_en},
            "context": {"model": self.model, "gpu": self.gpu, "vllm_version": self.vllm_version,
                        "setups": {k: dict(v) for k, v in self.setups.items()}},
            "summary": self.summary(),
            "claims": [c.to_json() for c in self.claims],
        }


# --------------------------------------------------------------------------------------------------
# Formatting and comparison
# --------------------------------------------------------------------------------------------------


def fmt_value(v: float | None, unit: str) -> str:
    """A display string for a value in SI units (B, s, tok/s, tokens, fraction, x, gmu)."""
    if v is None:
        return "n/a"
    if unit == "B":
        return f"{v / 1e9:.2f} GB ({v / GIB:.2f} GiB)"
    if unit == "s":
        return f"{v * 1e3:,.0f} ms" if v < 1 else f"{v:.2f} s"
    if unit == "tok/s":
        return f"{v:,.0f} tok/s"
    if unit == "tokens":
        return f"{int(round(v)):,} tokens"
    if unit == "fraction":
        return f"{v * 100:.1f}%" if abs(v) >= 0.1 else f"{v * 100:.2f}%"
    if unit == "x":
        return f"{v:.2f}x"
    if unit == "gmu":
        return f"{v:g}"
    return f"{v:g} {unit}"


def fmt_ratio(r: float) -> str:
    return f"x{r:.2f}" if r < 10 else f"x{r:.1f}"


def holds(states: dict[str, Any], x: float | None, tol: float) -> bool | None:
    """Whether a computed value matches the lesson's statement within the relative tolerance."""
    if x is None:
        return None
    if "value" in states:
        v = float(states["value"])
        return abs(x - v) <= tol * abs(v) + 1e-12
    if "low" in states:
        return float(states["low"]) * (1 - tol) - 1e-12 <= x <= float(states["high"]) * (1 + tol) + 1e-12
    if "max" in states:
        return x <= float(states["max"]) * (1 + tol) + 1e-12
    if "min" in states:
        return x >= float(states["min"]) * (1 - tol) - 1e-12
    return None


def reference(states: dict[str, Any]) -> float | None:
    """The lesson's number a ratio is taken against."""
    if "value" in states:
        return float(states["value"])
    if "low" in states:
        return (float(states["low"]) + float(states["high"])) / 2
    if "max" in states:
        return float(states["max"])
    if "min" in states:
        return float(states["min"])
    return None


def group_releases(values: list[tuple[str, Any]]) -> list[tuple[str, str, Any]]:
    """Consecutive releases with equal values -> (first, last, value)."""
    out: list[tuple[str, str, Any]] = []
    for rel, v in values:
        if out and out[-1][2] == v:
            out[-1] = (out[-1][0], rel, v)
        else:
            out.append((rel, rel, v))
    return out


def _span(first: str, last: str) -> str:
    return first if first == last else f"{first}-{last}"


# --------------------------------------------------------------------------------------------------
# Context: specs, capacity, performance and simulations, computed once each
# --------------------------------------------------------------------------------------------------


class LessonContext:
    """The chosen GPU and release, and cached model evaluations for the claims' setups."""

    def __init__(self, data: dict[str, Any], gpu: str | None, vllm: str | None) -> None:
        self.data = data
        self.gpu_arg = gpu or DEFAULT_GPU
        self.gpu = resolve_gpu(self.gpu_arg).gpu
        self.release = resolve_version(vllm).release if vllm else newest()
        self._specs: dict[tuple, Any] = {}
        self._caps: dict[tuple, Any] = {}
        self._sims: dict[tuple, dict[str, Any]] = {}

    # ---- inputs
    def setup(self, name: str) -> dict[str, Any]:
        try:
            return self.data["setups"][name]
        except KeyError:
            raise InputError(f"lesson claims: unknown setup {name!r}") from None

    def workload(self, name: str) -> dict[str, Any]:
        try:
            return self.data["workloads"][name]
        except KeyError:
            raise InputError(f"lesson claims: unknown workload {name!r}") from None

    # ---- models
    def spec(self, setup: str, flags: tuple[str, ...] | list[str] = ()) -> Any:
        key = (setup, tuple(flags))
        if key not in self._specs:
            cmd = [str(x) for x in self.setup(setup)["command"]] + [str(x) for x in flags]
            spec = build_specs([], cmd, gpu=self.gpu_arg, vllm=self.release)[0]
            if spec.arch is None or spec.effective is None:
                raise SchedReaderError(f"setup {setup}: model could not be resolved")
            self._specs[key] = spec
        return self._specs[key]

    def capacity(self, setup: str, flags: tuple[str, ...] | list[str] = ()) -> Any:
        key = (setup, tuple(flags))
        if key not in self._caps:
            s = self.spec(setup, flags)
            self._caps[key] = estimate_capacity(s.arch, s.hardware.gpu, s.effective, s.checkpoint_quantization)
        return self._caps[key]

    def cost(self, setup: str, flags: tuple[str, ...] | list[str] = ()) -> Any:
        s = self.spec(setup, flags)
        return IterationCostModel(s.arch, s.hardware.gpu, s.effective, s.checkpoint_quantization)

    def requests(self, workload: str) -> Any:
        w = self.workload(workload)
        if "sim" in w:
            return generate(WorkloadSpec.model_validate(w["sim"]))
        if "bench" in w:
            return from_bench_flags(**w["bench"])
        raise InputError(f"lesson claims: workload {workload!r} cannot be simulated")

    def sim(self, setup: str, workload: str, policy: str, flags: tuple[str, ...] | list[str] = ()) -> dict[str, Any]:
        key = (setup, tuple(flags), workload, policy)
        if key not in self._sims:
            out = simulate_spec(self.spec(setup, flags), self.requests(workload), policies=(policy,))
            self._sims[key] = out[policy]
        return self._sims[key]

    def kv_tokens(self, setup: str, flags: tuple[str, ...] | list[str] = ()) -> int:
        cap = self.capacity(setup, flags)
        return max(0, int(cap.kv_cache.tokens)) if cap.memory.kv_cache_bytes > 0 else 0


# --------------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------------


def check_kv_per_sequence(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    s = ctx.spec(c["setup"])
    arch, cfg = s.arch, s.effective
    n = int(c["seq_len"])
    bpt = kv_bytes_per_token(arch, cfg)
    total = bpt * n
    eb = kv_bytes_per_element(cfg.kv_cache_dtype, model_dtype_bytes(arch, cfg))
    fp8 = ctx.spec(c["setup"], ["--kv-cache-dtype", "fp8"])
    readings = [
        (f"the lesson's formula taken literally with num_heads = {arch.num_attention_heads} query heads "
         f"(GQA caches only {arch.num_kv_heads} KV heads)", total * arch.num_attention_heads / arch.num_kv_heads),
        ("K or V alone (one of the two tensors)", total / 2),
        ("FP8 KV cache (--kv-cache-dtype fp8)", kv_bytes_per_token(fp8.arch, fp8.effective) * n),
    ]
    tol = float(claim.get("tolerance", 0.25))
    notes = [f"{label}: {fmt_value(v, 'B')}" + (" <- matches the lesson's figure" if holds(claim["states"], v, tol) else "")
             for label, v in readings]
    return Outcome(
        value=float(total), unit="B",
        formula="layers x 2 (K and V) x kv_heads x head_dim x bytes_per_element x tokens",
        inputs={"layers": arch.num_layers, "kv_heads": arch.num_kv_heads, "head_dim": arch.head_dim,
                "bytes_per_element": eb, "kv_cache_dtype": cfg.kv_cache_dtype, "dtype": cfg.dtype,
                "tokens": n, "bytes_per_token": bpt},
        notes=notes)


def _trace_accounting(ctx: LessonContext, c: dict[str, Any], max_model_len: int | None = None) -> Any:
    t = dict(ctx.workload(c["workload"])["trace"])
    s = ctx.spec(c["setup"])
    if max_model_len is not None:
        t["max_model_len"] = max_model_len
    return block_accounting(n_requests=int(t["n_requests"]), output_mean=float(t["output_mean"]),
                            output_sd=float(t["output_sd"]), max_model_len=int(t["max_model_len"]),
                            block_size=int(t["block_size"]), kv_bytes_per_token=kv_bytes_per_token(s.arch, s.effective),
                            seed=int(t.get("seed", 0)))


def check_contiguous_waste(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    r = _trace_accounting(ctx, c)
    tol = float(claim.get("tolerance", 0.25))
    variants: list[Variant] = []
    for res in c.get("reservations", []) or []:
        n = derived_max_model_len(ctx.spec(c["setup"]).arch.config) if res == "model" else int(res)
        label = f"reserve {n:,} (the model's max_model_len)" if res == "model" else f"reserve {n:,}"
        w = _trace_accounting(ctx, c, n).contiguous.waste_fraction
        variants.append(Variant(label, w, "fraction", holds(claim["states"], w, tol)))
    notes = [
        f"same trace, PagedAttention ({r.block_size}-token blocks): {fmt_value(r.paged.waste_fraction, 'fraction')} "
        f"waste; in the same KV budget it fits {r.paged.max_concurrency:,.0f} requests vs "
        f"{r.contiguous.max_concurrency:,.0f} contiguous ({r.paged.max_concurrency / max(r.contiguous.max_concurrency, 1):.1f}x)",
        "contiguous waste is not a property of the allocator: it is 1 - mean length / reserved length",
    ]
    return Outcome(
        value=r.contiguous.waste_fraction, unit="fraction",
        formula="1 - sum(len) / (n x reserved slots per request); len = clip(rint(normal(mean, sd)), 1, reserve)",
        inputs={"n": r.n_requests, "reserved_per_request": r.max_model_len, "mean_len": round(r.mean_len, 1),
                "sum_len": r.contiguous.used_tokens, "reserved_tokens": r.contiguous.reserved_tokens},
        variants=variants, notes=notes)


def check_paged_waste(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    r = _trace_accounting(ctx, c)
    tol = float(claim.get("tolerance", 0.0))
    variants: list[Variant] = []
    if c.get("sim_setup") and c.get("sim_workload"):
        res = ctx.sim(c["sim_setup"], c["sim_workload"], "vllm")
        frag = float(res["kv_fragmentation"])
        about = ctx.workload(c["sim_workload"]).get("about", c["sim_workload"])
        variants.append(Variant(f"simulated in-flight waste, vLLM policy, {about}", frag, "fraction",
                                holds(claim["states"], frag, tol)))
    bs = r.block_size
    bound = float(claim["states"].get("max", 0.04))
    notes = [
        f"waste per sequence is at most block_size - 1 = {bs - 1} tokens (the last, partly filled block); "
        f"on average about {(bs - 1) / 2:g} tokens",
        f"so paged waste ~ {(bs - 1) / 2:g} / mean sequence length: under {bound:.0%} while sequences average more "
        f"than {(bs - 1) / 2 / bound:.0f} tokens, above it for shorter ones",
    ]
    return Outcome(
        value=r.paged.waste_fraction, unit="fraction",
        formula="1 - sum(len) / sum(ceil(len / block_size) x block_size)",
        inputs={"n": r.n_requests, "block_size": bs, "mean_len": round(r.mean_len, 1),
                "sum_len": r.paged.used_tokens, "reserved_tokens": r.paged.reserved_tokens},
        variants=variants, notes=notes)


def _release_values(ctx: LessonContext, field_name: str, usage_context: str = "OPENAI_API_SERVER",
                    max_model_len: int | None = None) -> list[tuple[str, Any, str]]:
    """(release, default value, reason) of one setting for every known release on the chosen GPU."""
    out = []
    for rel in known_releases():
        if field_name == "block_size":
            f = release_facts(rel)
            out.append((rel, f.block_size_default, f.block_size_note))
            continue
        explicit: dict[str, Any] = {}
        if field_name == "max_num_batched_tokens":
            explicit = {"enable_chunked_prefill": True}
        d = scheduler_defaults(rel, ctx.gpu.name, ctx.gpu.cuda_total_gib, usage_context=usage_context,
                               max_model_len=int(max_model_len or 4096), explicit=explicit)
        value, reason = d[field_name]
        out.append((rel, value, reason))
    return out


def check_release_default(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    fname = c["field"]
    arch = resolve_model(ctx.data["model"]).arch
    mml = derived_max_model_len(arch.config) or 4096
    tol = float(claim.get("tolerance", 0.0))
    vals = _release_values(ctx, fname, max_model_len=mml)
    unit = {"block_size": "tokens", "gpu_memory_utilization": "gmu", "max_num_batched_tokens": "tokens"}[fname]
    current = next((v, why) for rel, v, why in vals if rel == ctx.release)
    variants = [Variant(f"vLLM {_span(a, b)}", float(v), unit, holds(claim["states"], float(v), tol), kind="release")
                for a, b, v in group_releases([(rel, v) for rel, v, _ in vals])]
    notes = [f"vLLM {ctx.release}: {current[1]}"]
    inputs: dict[str, Any] = {"release": ctx.release, "gpu": ctx.gpu.name, "releases_checked": len(vals)}
    if fname == "max_num_batched_tokens":
        llm = _release_values(ctx, fname, "LLM_CLASS", max_model_len=mml)
        groups = "; ".join(f"{_span(a, b)}: {v}" for a, b, v in group_releases([(r, v) for r, v, _ in llm]))
        notes.append(f"offline LLM class on {ctx.gpu.name}: {groups}")
        notes.append("V1 has no fixed chunk size: each step's prefill gets what is left of --max-num-batched-tokens "
                     "after the running requests' decode tokens (capped by --long-prefill-token-threshold when set); "
                     "the budget is the knob")
        p = int(c.get("prompt_len", 0) or 0)
        if p:
            stated = float(claim["states"]["value"])
            notes.append(f"a {p:,}-token prompt is computed in at least ceil({p:,} / {current[0]:,}) = "
                         f"{math.ceil(p / current[0])} steps in vLLM {ctx.release}, not {math.ceil(p / stated)}")
        inputs.update({"usage_context": "OPENAI_API_SERVER (vllm serve)", "max_model_len": mml,
                       "enable_chunked_prefill": True})
    return Outcome(value=float(current[0]), unit=unit,
                   formula=f"vLLM's default for {fname} in each release (release facts / scheduler defaults)",
                   inputs=inputs, variants=variants, notes=notes)


def check_gmu_meaning(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    cap = ctx.capacity(c["setup"])
    cfg = ctx.spec(c["setup"]).effective
    m = cap.memory
    gmu = float(cfg.gpu_memory_utilization)
    if m.kv_cache_bytes <= 0:
        raise SchedReaderError(f"setup {c['setup']}: weights ({m.weights_bytes / GIB:.1f} GiB) leave no KV cache on "
                               f"{ctx.gpu.name} ({m.total_bytes / GIB:.2f} GiB): vLLM does not start")
    others = m.requested_bytes - m.kv_cache_bytes          # what vLLM subtracts before the KV cache
    vllm_kv = max(0, m.kv_cache_bytes)
    lesson_kv = max(0.0, gmu * (m.total_bytes - others))
    tol = float(claim.get("tolerance", 0.25))
    ratio = vllm_kv / lesson_kv if lesson_kv else None
    agree = lesson_kv > 0 and abs(vllm_kv - lesson_kv) <= tol * lesson_kv
    default_ok = holds(claim["states"], gmu, 0.0)
    if agree:
        verdict, why = "holds", "both readings give the same KV budget here"
    else:
        verdict = "misleading" if default_ok else "wrong"
        parts = "weights, activations, " + ("CUDA graphs, " if m.cuda_graph_subtracted else "") + "KV"
        why = (f"gmu caps everything ({parts}) at {gmu:g} x {m.total_bytes / GIB:.2f} GiB; "
               f"the lesson's 'share after weights' reading gives {lesson_kv / GIB:.2f} GiB of KV, vLLM gives "
               f"{vllm_kv / GIB:.2f} GiB")
    return Outcome(
        value=float(vllm_kv), unit="B",
        text=f"KV {vllm_kv / GIB:.2f} GiB (lesson: {lesson_kv / GIB:.2f})",
        formula="vLLM: KV = total x gmu - (weights + activation peak + non-torch [+ CUDA graphs from 0.20.0]); "
                "lesson: KV = gmu x (total - those)",
        inputs={"total_gib": round(m.total_bytes / GIB, 2), "gpu_memory_utilization": gmu,
                "requested_gib": round(m.requested_bytes / GIB, 2), "weights_gib": round(m.weights_bytes / GIB, 2),
                "activation_peak_gib": round(m.activation_peak_bytes / GIB, 2),
                "non_torch_gib": round(m.non_torch_bytes / GIB, 2), "cuda_graph_gib": round(m.cuda_graph_bytes / GIB, 2),
                "cuda_graph_subtracted": m.cuda_graph_subtracted,
                "kv_cache_gib": round(vllm_kv / GIB, 2), "lesson_reading_kv_gib": round(lesson_kv / GIB, 2),
                "release": cfg.vllm_version},
        notes=[f"setup: {ctx.setup(c['setup'])['about']}",
               f"vLLM's KV cache is {vllm_kv / m.total_bytes:.1%} of device memory here, the lesson's reading would "
               f"make it {lesson_kv / m.total_bytes:.1%}",
               f"raising gmu by 0.01 adds {m.total_bytes * 0.01 / GIB:.2f} GiB of KV "
               f"({int(m.total_bytes * 0.01 // max(cap.kv_cache.bytes_per_token, 1)):,} tokens): the whole "
               "increment goes to the KV cache, which is why it is the KV knob"],
        verdict=verdict, why=why, ratio=ratio)


def check_prefill_time(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    T = int(c["prompt_len"])
    pairs = T * T / 2.0
    bf16 = ctx.cost(c["bf16_setup"])
    b = bf16.breakdown(0, 0, T, pairs, 1)
    flops = b.flops
    attn = b.terms["attention_prefill"].flops if "attention_prefill" in b.terms else 0.0
    gpu = ctx.gpu
    p16 = peak_flops(gpu, "bf16")
    p8 = peak_flops(gpu, "fp8")
    lb16 = flops / p16
    lb8 = (flops - attn) / p8 + attn / p16
    fp8_spec = ctx.spec(c["fp8_setup"])
    fp8 = ctx.cost(c["fp8_setup"])
    cfg = fp8_spec.effective
    budget = int(cfg.max_num_batched_tokens) if cfg.enable_chunked_prefill else T
    est, done = 0.0, 0
    while done < T:
        ch = min(budget, T - done)
        est += fp8.step_time(0, 0, ch, ch * (done + ch / 2.0), 1)
        done += ch
    tol = float(claim.get("tolerance", 0.25))
    st = claim["states"]
    variants = [
        Variant(f"lower bound, FP8 GEMMs at {p8 / 1e12:,.0f} TFLOPS + attention at {p16 / 1e12:,.0f}", lb8, "s",
                holds(st, lb8, tol)),
        Variant(f"sched-reader cost model, FP8, {math.ceil(T / budget)} step(s) of <= {budget:,} tokens", est, "s",
                holds(st, est, tol)),
    ]
    notes = [f"{float(st['value']) * 1e3:.0f} ms would need {flops / (float(st['value']) * p16):.1f} "
             f"{gpu.name} at 100% of BF16 peak"]
    cap16 = ctx.capacity(c["bf16_setup"])
    if cap16.memory.weights_bytes > cap16.memory.total_bytes:
        notes.append(f"BF16 does not even load on one {gpu.name}: weights {cap16.memory.weights_bytes / GIB:.1f} GiB > "
                     f"{cap16.memory.total_bytes / GIB:.2f} GiB of device memory")
    kv8 = ctx.kv_tokens(c["fp8_setup"])
    if kv8 < T:
        notes.append(f"FP8 loads, but its KV cache holds {kv8:,} tokens < {T:,}: vLLM refuses --max-model-len {T} "
                     "on one GPU, so a 32k prompt cannot be admitted at all")
    return Outcome(
        value=lb16, unit="s",
        formula="FLOPs / peak; FLOPs = 2 x linear params x tokens (+ lm_head once) + attention "
                "2 x layers x heads x (qk_dim + v_dim) x tokens^2 / 2",
        inputs={"prompt_tokens": T, "flops": flops, "attention_flops": attn, "linear_flops": flops - attn,
                "bf16_peak_tflops": p16 / 1e12, "fp8_peak_tflops": p8 / 1e12,
                "cost_model_bound": b.bound},
        text=f">= {fmt_value(lb16, 's')} (BF16 peak)", variants=variants, notes=notes)


def _bench(ctx: LessonContext, workload: str) -> Any:
    return Workload(**ctx.workload(workload)["bench"])


def _throughput(ctx: LessonContext, setup: str, flags: list[str], workload: str) -> tuple[float, dict[str, Any]]:
    s = ctx.spec(setup, flags)
    kv = ctx.kv_tokens(setup, flags)
    if kv <= 0:
        return 0.0, {"kv_tokens": 0, "running_requests": 0, "limited_by": "weights leave no KV cache"}
    p = estimate_performance(s.arch, s.hardware.gpu, s.effective, _bench(ctx, workload), s.checkpoint_quantization, kv)
    return float(p["output_throughput"]), p["steady_state"]


def check_serving_throughput(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    setup, wl = c["setup"], c["workload"]
    flags = [str(x) for x in c.get("flags", []) or []]
    tol = float(claim.get("tolerance", 0.25))
    value, st = _throughput(ctx, setup, flags, wl)
    w = _bench(ctx, wl)
    I, O = w.mean_input_len(), w.mean_output_len()
    conc = int(w.max_concurrency or w.num_prompts)
    s = ctx.spec(setup, flags)
    cap = ctx.capacity(setup, flags)
    kv = ctx.kv_tokens(setup, flags)
    bpt = cap.kv_cache.bytes_per_token
    cost = ctx.cost(setup, flags)
    ctx_mean = I + O / 2.0
    unl = conc / cost.step_time(conc, int(conc * ctx_mean), 0, 0.0)
    variants = []
    for v in c.get("variants", []) or []:
        vf = flags + [str(x) for x in v["flags"]]
        x, vst = _throughput(ctx, setup, vf, wl)
        ve = ctx.spec(setup, vf).effective
        gpus = ve.tensor_parallel_size * ve.pipeline_parallel_size * ve.data_parallel_size
        per_gpu = f", {x / gpus:,.0f} tok/s per GPU" if gpus > 1 else ""
        variants.append(Variant(f"{v['label']} ({int(vst.get('running_requests') or 0)} running{per_gpu})", x,
                                "tok/s", holds(claim["states"], x, tol)))
    notes = [f"setup: {ctx.setup(setup)['about']}" + (f"; flags {' '.join(flags)}" if flags else "")]
    notes += _default_len_note(ctx, setup)
    if kv <= 0:
        notes.append(f"weights {cap.memory.weights_bytes / GIB:.1f} GiB leave no KV cache on {ctx.gpu.name} "
                     f"({cap.memory.total_bytes / GIB:.2f} GiB): vLLM does not start, 0 tok/s")
        return Outcome(value=0.0, unit="tok/s", formula="no KV cache: nothing can run",
                       inputs={"kv_tokens": 0, "weights_gib": round(cap.memory.weights_bytes / GIB, 2)},
                       variants=variants, notes=notes)
    notes += [
        f"{conc} requests x {I + O:,.0f} tokens need {conc * (I + O):,.0f} tokens = {conc * (I + O) * bpt / GIB:.1f} GiB "
        f"of KV; the cache holds {kv:,} tokens ({max(0, cap.memory.kv_cache_bytes) / GIB:.2f} GiB): "
        f"{int(st.get('running_requests') or 0)} run at once, the rest wait (limited by {st.get('limited_by')})",
        f"{conc} sequences fit only if each holds <= {kv // conc:,} tokens",
        f"if the KV cache were unlimited, the roofline would allow {unl:,.0f} tok/s at batch {conc} "
        f"(decode step {1e3 * conc / unl:.1f} ms): the limit is memory, not compute",
    ]
    if c.get("premise") == "chunked_prefill_off_by_default":
        notes.extend(_premise_chunked_off(ctx, s))
    return Outcome(
        value=value, unit="tok/s",
        formula="closed-loop steady state: running = min(concurrency, KV tokens / tokens per request); "
                "output tok/s = running x tokens per decode step / step time (roofline)",
        inputs={"concurrency": conc, "input_len": I, "output_len": O, "kv_tokens": kv,
                "kv_bytes_per_token": bpt, "running_requests": st.get("running_requests"),
                "decode_step_ms": st.get("decode_step_ms"), "gpu_memory_utilization": s.effective.gpu_memory_utilization,
                "kv_cache_dtype": s.effective.kv_cache_dtype, "max_model_len": s.effective.max_model_len,
                "enable_chunked_prefill": s.effective.enable_chunked_prefill, "release": s.effective.vllm_version},
        variants=variants, notes=notes)


def _default_len_note(ctx: LessonContext, setup: str) -> list[str]:
    """Why the setup sets --max-model-len: what happens with the model's own context length."""
    s = ctx.spec(setup)
    full = derived_max_model_len(s.arch.config)
    if not full or full <= s.effective.max_model_len:
        return []
    cap = ctx.capacity(setup, ["--max-model-len", str(full)])
    if cap.kv_cache.fits and cap.memory.kv_cache_bytes > 0:
        return []
    kv = max(0, cap.memory.kv_cache_bytes)
    return [f"with the model's own max_model_len {full:,}, vLLM would not start: one {full:,}-token request needs "
            f"{full * cap.kv_cache.bytes_per_token / GIB:.1f} GiB of KV, {kv / GIB:.2f} GiB is left after "
            f"{cap.memory.weights_bytes / GIB:.1f} GiB of weights; hence --max-model-len {s.effective.max_model_len}"]


def _premise_chunked_off(ctx: LessonContext, spec: Any) -> list[str]:
    """Releases whose default for this setup has chunked prefill off (the lesson's 'default' premise)."""
    out = []
    lens = [int(spec.effective.max_model_len)]
    full = derived_max_model_len(spec.arch.config)
    if full and full not in lens:
        lens.append(int(full))
    for mml in lens:
        vals = _release_values(ctx, "enable_chunked_prefill", max_model_len=mml)
        off = [(a, b) for a, b, v in group_releases([(r, v) for r, v, _ in vals]) if not v]
        if off:
            where = ", ".join(_span(a, b) for a, b in off)
            out.append(f"premise 'vLLM default = no chunked prefill' (max_model_len {mml:,}): true in {where} only; "
                       "every other release turns chunked prefill on by default, so there 'all three on' IS the default")
        else:
            out.append(f"premise 'vLLM default = no chunked prefill' (max_model_len {mml:,}): false in every known "
                       f"release ({vals[0][2]})")
    return out


def check_naive_decode(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    setup, wl = c["setup"], c["workload"]
    tol = float(claim.get("tolerance", 0.25))
    cost = ctx.cost(setup)
    wbytes = cost.weight_bytes_per_gpu()
    bw = ctx.gpu.hbm_bandwidth_tb_s * 1e12
    bound = bw / wbytes
    w = _bench(ctx, wl)
    ctx_mean = w.mean_input_len() + w.mean_output_len() / 2.0
    roof = 1.0 / cost.step_time(1, int(ctx_mean), 0, 0.0)
    sim = float(ctx.sim(setup, wl, "naive")["output_throughput"])
    st = claim["states"]
    variants = [
        Variant(f"roofline cost model, batch 1, context {ctx_mean:,.0f}", roof, "tok/s", holds(st, roof, tol)),
        Variant("simulator, naive policy (one request at a time, prefill included)", sim, "tok/s", holds(st, sim, tol)),
    ]
    need = float(st.get("value", 0)) * wbytes
    notes = [f"{float(st.get('value', 0)):,.0f} tok/s at batch 1 would need {need / 1e12:.1f} TB/s of HBM bandwidth, "
             f"{need / bw:.1f}x the {ctx.gpu.name}'s {ctx.gpu.hbm_bandwidth_tb_s:g} TB/s"]
    return Outcome(
        value=bound, unit="tok/s",
        formula="batch-1 decode reads every weight once per token: tok/s <= HBM bandwidth / weight bytes",
        inputs={"weight_bytes_per_step": wbytes, "hbm_bandwidth_b_s": bw, "setup": setup},
        text=f"<= {fmt_value(bound, 'tok/s')}", variants=variants, notes=notes)


def _ratio_of(ctx: LessonContext, c: dict[str, Any], extra: list[str]) -> tuple[float, dict[str, Any], dict[str, Any]]:
    num, den = c["numerator"], c["denominator"]
    a = ctx.sim(c["setup"], c["workload"], num["policy"], extra + [str(x) for x in num.get("flags", []) or []])
    b = ctx.sim(c["setup"], c["workload"], den["policy"], extra + [str(x) for x in den.get("flags", []) or []])
    return float(a["output_throughput"]) / float(b["output_throughput"]), a, b


def _side(d: dict[str, Any]) -> str:
    f = " ".join(str(x) for x in d.get("flags", []) or [])
    return f"{d['policy']}" + (f" with {f}" if f else "")


def check_sim_ratio(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    tol = float(claim.get("tolerance", 0.25))
    r, a, b = _ratio_of(ctx, c, [])
    variants = []
    for v in c.get("variants", []) or []:
        x, _, _ = _ratio_of(ctx, c, [str(f) for f in v["flags"]])
        variants.append(Variant(v["label"], x, "x", holds(claim["states"], x, tol)))
    w = _bench(ctx, c["workload"])
    per_req = w.mean_input_len() + w.mean_output_len()
    kv = ctx.kv_tokens(c["setup"])
    notes = [
        f"setup: {ctx.setup(c['setup'])['about']}; workload: {ctx.workload(c['workload'])['about']}",
        f"{_side(c['numerator'])}: {fmt_value(a['output_throughput'], 'tok/s')}, peak KV use {a['kv_peak_use']:.0%}, "
        f"{a['preemptions']} preemptions; {_side(c['denominator'])}: {fmt_value(b['output_throughput'], 'tok/s')}",
        f"decode is memory-bound, so throughput grows ~linearly with the batch that fits: the KV cache holds "
        f"{kv:,} tokens = {kv // max(int(per_req), 1)} requests of {per_req:,.0f} tokens",
    ]
    if c["numerator"]["policy"] == c["denominator"]["policy"]:
        notes.append("chunked prefill reorders prefill work; it does not add compute or memory, so by itself it "
                     "leaves throughput where it was (the lesson's exercise 5 says the same)")
    return Outcome(value=r, unit="x", formula="simulated output tok/s (numerator) / output tok/s (denominator)",
                   inputs={"numerator": _side(c["numerator"]), "denominator": _side(c["denominator"]),
                           "numerator_tok_s": a["output_throughput"], "denominator_tok_s": b["output_throughput"],
                           "kv_tokens": kv, "release": ctx.release},
                   variants=variants, notes=notes)


def _itl_runs(ctx: LessonContext, c: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p: ctx.sim(c["setup"], c["workload"], p) for p in ("continuous", "chunked", "vllm")}


def _sim_inputs(ctx: LessonContext, c: dict[str, Any]) -> dict[str, Any]:
    cfg = ctx.spec(c["setup"]).effective
    return {"setup": c["setup"], "workload": c["workload"], "lesson_chunk_tokens": LESSON_CHUNK_TOKENS,
            "release_max_num_batched_tokens": cfg.max_num_batched_tokens,
            "tensor_parallel_size": cfg.tensor_parallel_size, "release": cfg.vllm_version}


def check_sim_itl(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    runs = _itl_runs(ctx, c)
    st = claim["states"]
    tol = float(claim.get("tolerance", 0.25))
    wo = runs["continuous"]["p99_itl_ms"] / 1e3
    wi = runs["chunked"]["p99_itl_ms"] / 1e3
    vd = runs["vllm"]["p99_itl_ms"] / 1e3
    ok_wo = abs(wo - float(st["without"])) <= tol * float(st["without"])
    ok_wi = abs(wi - float(st["with"])) <= tol * float(st["with"])
    if ok_wo and ok_wi:
        verdict, why = "holds", "both P99 ITLs match"
    elif wi < wo:
        verdict = "misleading"
        why = (f"chunking does cut P99 ITL ({wo / wi:.1f}x here), but the figures are set by the longest prefill "
               f"step, i.e. by prompt length, model, GPU and chunk size, not fixed numbers")
    else:
        verdict, why = "wrong", "P99 ITL does not go down with chunked prefill in this simulation"
    cost = ctx.cost(c["setup"])
    cfg = ctx.spec(c["setup"]).effective
    longest = int(max(ctx.requests(c["workload"]).prompt_len))
    t_long = cost.step_time(0, 0, longest, longest * longest / 2.0, 1)
    chunk = _sim_inputs(ctx, c)["lesson_chunk_tokens"]
    t_chunk = cost.step_time(0, 0, chunk, chunk * chunk / 2.0, 1)
    t_dec = cost.step_time(1, 512, 0, 0.0)
    notes = [
        f"setup: {ctx.setup(c['setup'])['about']}; workload: {ctx.workload(c['workload'])['about']}",
        f"one step carrying a whole {longest:,}-token prompt: {t_long * 1e3:,.0f} ms; one {chunk}-token chunk: "
        f"{t_chunk * 1e3:,.0f} ms; the decode-only floor at batch 1: {t_dec * 1e3:.1f} ms",
        f"vLLM {cfg.vllm_version}'s own budget ({cfg.max_num_batched_tokens:,} tokens/step) leaves a {longest:,}-token "
        f"prompt in {math.ceil(longest / cfg.max_num_batched_tokens)} step(s): P99 ITL {vd * 1e3:,.0f} ms; lower "
        "--max-num-batched-tokens to get the lesson's effect, at some TTFT cost",
        f"median ITL: {runs['continuous']['median_itl_ms']:.1f} ms without, {runs['chunked']['median_itl_ms']:.1f} ms with",
    ]
    return Outcome(
        value=wi, unit="s", text=f"{fmt_value(wo, 's')} -> {fmt_value(wi, 's')}",
        formula="simulated P99 inter-token latency: continuous batching (no chunking) vs chunked prefill "
                "(512-token chunks, the lesson's policy)",
        inputs=_sim_inputs(ctx, c) | {"p99_itl_ms_without": wo * 1e3, "p99_itl_ms_with": wi * 1e3,
                                      "p99_itl_ms_vllm_default": vd * 1e3},
        variants=[Variant(f"vLLM default token budget ({cfg.max_num_batched_tokens:,})", vd, "s",
                          abs(vd - float(st["with"])) <= tol * float(st["with"]))],
        notes=notes, verdict=verdict, why=why,
        ratios={"without": wo / float(st["without"]), "with": wi / float(st["with"])})


def check_sim_ttft_tail(ctx: LessonContext, claim: dict[str, Any], c: dict[str, Any]) -> Outcome:
    runs = _itl_runs(ctx, c)
    wo = runs["continuous"]["p99_ttft_ms"] / 1e3
    wi = runs["chunked"]["p99_ttft_ms"] / 1e3
    vd = runs["vllm"]["p99_ttft_ms"] / 1e3
    lower = wi < wo
    verdict = "holds" if lower else "wrong"
    why = (f"P99 TTFT goes {'down' if lower else 'UP'} with chunking ({wi / wo:.2f}x); chunked prefill protects the "
           "other requests' ITL, and the long prompt's own TTFT pays for it" if not lower else
           f"P99 TTFT goes down with chunking ({wi / wo:.2f}x)")
    return Outcome(
        value=wi, unit="s", text=f"P99 TTFT {fmt_value(wo, 's')} -> {fmt_value(wi, 's')}",
        formula="simulated P99 time to first token: continuous batching vs chunked prefill (512-token chunks)",
        inputs=_sim_inputs(ctx, c) | {"p99_ttft_ms_without": wo * 1e3, "p99_ttft_ms_with": wi * 1e3,
                                      "p99_ttft_ms_vllm_default": vd * 1e3,
                                      "mean_ttft_ms_without": runs["continuous"]["mean_ttft_ms"],
                                      "mean_ttft_ms_with": runs["chunked"]["mean_ttft_ms"]},
        variants=[Variant("vLLM default token budget", vd, "s", vd < wo)],
        notes=[f"setup: {ctx.setup(c['setup'])['about']}; workload: {ctx.workload(c['workload'])['about']}",
               "a chunked prompt needs ceil(prompt / chunk) steps, each shared with decodes, so its own TTFT grows; "
               "the metric chunking protects is ITL (the decode tokens that would stall behind a whole prefill)"],
        verdict=verdict, why=why, ratio=wi / wo)


CHECKS: dict[str, Callable[[LessonContext, dict[str, Any], dict[str, Any]], Outcome]] = {
    "kv_per_sequence": check_kv_per_sequence,
    "contiguous_waste": check_contiguous_waste,
    "paged_waste": check_paged_waste,
    "release_default": check_release_default,
    "gmu_meaning": check_gmu_meaning,
    "prefill_time": check_prefill_time,
    "serving_throughput": check_serving_throughput,
    "naive_decode": check_naive_decode,
    "sim_ratio": check_sim_ratio,
    "sim_itl": check_sim_itl,
    "sim_ttft_tail": check_sim_ttft_tail,
}


# --------------------------------------------------------------------------------------------------
# Verdicts and the report
# --------------------------------------------------------------------------------------------------


def decide(states: dict[str, Any], tol: float, out: Outcome) -> tuple[str, str]:
    """Verdict from the primary figure and its variants (see the module docstring)."""
    if out.verdict:
        return out.verdict, out.why or ""
    primary = holds(states, out.value, tol)
    rel = [v for v in out.variants if v.kind == "release" and v.holds is not None]
    if rel:
        ok = [v.label for v in rel if v.holds]
        if ok and len(ok) < len(rel):
            return "depends-on-release", f"the lesson's value is the default in {', '.join(ok)} only"
        if not ok:
            return "wrong", "no known release has the lesson's value as its default"
        return "holds", "the default in every known release"
    cond = [v for v in out.variants if v.holds is not None]
    checks = ([primary] if primary is not None else []) + [v.holds for v in cond]
    if checks and all(checks):
        return "holds", "within tolerance" + (" in every condition computed" if cond else "")
    if any(checks):
        good = (["the primary setup"] if primary else []) + [v.label for v in cond if v.holds]
        bad = (["the primary setup"] if primary is False else []) + [v.label for v in cond if not v.holds]
        return "misleading", f"holds for {'; '.join(good)}; not for {'; '.join(bad)}"
    suffix = " in every condition computed" if cond else ""
    if out.value is not None and reference(states):
        r = out.value / reference(states)
        if r <= 0:
            return "wrong", f"computes {fmt_value(out.value, out.unit)}" + suffix
        return "wrong", (f"{r:.2f}x the lesson's figure" if r >= 1 else f"{1 / r:.1f}x below the lesson's figure") + suffix
    return "wrong", "does not match" + suffix


def load_claims(path: Path | None = None) -> dict[str, Any]:
    p = Path(path) if path else CLAIMS_PATH
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"cannot read lesson claims: {e.strerror or e}", file=str(p)) from None
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise InputError("lesson claims: expected a mapping with a 'claims' list", file=str(p))
    for c in data["claims"]:
        st = c.get("states") or {}
        for k in ("value", "low", "high", "max", "min", "without", "with"):
            if k in st:
                try:     # YAML 1.1 reads 1.25e9 (no dot, no sign) as text
                    st[k] = float(st[k])
                except (TypeError, ValueError):
                    raise InputError(f"lesson claim {c.get('id')}: states.{k} is not a number", file=str(p)) from None
    return data


def _check_one(ctx: LessonContext, claim: dict[str, Any]) -> ClaimResult:
    comp = dict(claim["compute"])
    kind = comp.get("kind")
    fn = CHECKS.get(kind)
    if fn is None:
        raise InputError(f"lesson claim {claim.get('id')}: unknown compute kind {kind!r}")
    states = claim["states"]
    tol = float(claim.get("tolerance", 0.25))
    try:
        out = fn(ctx, claim, comp)
        verdict, why = decide(states, tol, out)
        if out.ratio is None and out.ratios is None and out.value is not None and reference(states) and \
                out.unit == states.get("unit"):
            out.ratio = out.value / reference(states)
    except SchedReaderError as err:
        out = Outcome(value=None, unit=str(states.get("unit", "")), formula="", inputs={"error": str(err)})
        verdict, why = "not-computable", str(err)
    lesson = {k: v for k, v in states.items()}
    return ClaimResult(id=str(claim["id"]), label=str(claim.get("label", claim["id"])),
                       section=str(claim.get("section", "")), quote_zh=str(claim.get("quote_zh", "")),
                       gloss_en=str(claim.get("gloss_en", "")), lesson=lesson, outcome=out,
                       verdict=verdict, why=why, tolerance=tol)


def check_lesson(gpu: str | None = None, vllm: str | None = None, claims_path: Path | None = None,
                 only: list[str] | None = None) -> LessonReport:
    """Check every claim (or the ids in ``only``) for ``gpu`` (default H100) and release ``vllm``
    (default: the newest known). Deterministic: every workload is seeded."""
    return _check_cached(gpu or DEFAULT_GPU, vllm, str(claims_path) if claims_path else None,
                         tuple(only) if only else None)


@functools.lru_cache(maxsize=8)
def _check_cached(gpu: str, vllm: str | None, claims_path: str | None, only: tuple[str, ...] | None) -> LessonReport:
    data = load_claims(Path(claims_path) if claims_path else None)
    ctx = LessonContext(data, gpu, vllm)
    claims = data["claims"]
    if only:
        unknown = [i for i in only if i not in {c["id"] for c in claims}]
        if unknown:
            raise InputError(f"unknown claim id(s): {', '.join(unknown)}",
                             hint="known: " + ", ".join(c["id"] for c in claims))
        claims = [c for c in claims if c["id"] in only]
    results = [_check_one(ctx, c) for c in claims]
    setups = {k: {"about": v.get("about", ""), "command": " ".join(str(x) for x in v["command"])}
              for k, v in data.get("setups", {}).items()}
    return LessonReport(title=str(data.get("lesson_title", "")), title_en=str(data.get("lesson_title_en", "")),
                        model=str(data.get("model", "")), gpu=ctx.gpu.name, vllm_version=ctx.release,
                        setups=setups, claims=results)
