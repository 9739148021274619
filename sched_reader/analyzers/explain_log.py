"""A real vLLM start-up log beside sched-reader's prediction for the same engine, term by term.

``explain(facts, spec=None)``: when no deploy config is given the engine spec is rebuilt from the log
itself (model, release, the non-default args, the engine-config dump, GPU from its printed name or its
total memory); each memory term vLLM logged (GiB per GPU) is laid beside the prediction, and the term
that moves the KV-cache budget most is named with its likely cause.

Bad input raises ``InputError`` (exit 2): a log that ends before vLLM's memory profiling (truncated),
a log of a different model than the config, several engines interleaved (``readers.vllm_log``).
"""

from typing import Any
import json
import re

from pydantic import Field

from sched_reader.data_model import DataModel, new_list
from sched_reader.errors import InputError, SchedReaderError
from sched_reader.readers.vllm_log import LogFacts
from sched_reader.models.capacity import estimate_capacity
from sched_reader.models.gpu_catalog import list_gpus, resolve_gpu
from sched_reader.analyzers.pipeline import build_specs, startup_refusal
from sched_reader.models.spec_builder import has_both_engines

# Flags from ``non-default args`` that change memory or scheduling (passed to the rebuilt spec).
_SPEC_KEYS = (
    "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_model_len",
    "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "kv_cache_dtype", "quantization",
    "dtype", "enforce_eager", "enable_chunked_prefill", "enable_prefix_caching", "block_size",
    "num_gpu_blocks_override", "cpu_offload_gb", "enable_expert_parallel", "kv_cache_memory_bytes",
    "max_seq_len_to_capture", "speculative_config", "async_scheduling", "max_num_partial_prefills",
    "long_prefill_token_threshold", "trust_remote_code",
)
# Engine-config dump key -> flag (values the engine actually ran with).
_DUMP_KEYS = {
    "max_seq_len": "max_model_len",
    "tensor_parallel_size": "tensor_parallel_size",
    "pipeline_parallel_size": "pipeline_parallel_size",
    "data_parallel_size": "data_parallel_size",
    "kv_cache_dtype": "kv_cache_dtype",
    "enforce_eager": "enforce_eager",
    "dtype": "dtype",
}

# Per term: (what it is, the likely causes of a difference).
CAUSES: dict[str, tuple[str, str]] = {
    "total": ("total device memory torch reports",
              "a different GPU than assumed (pass --gpu), or MIG / another process holding memory"),
    "requested": ("total x gpu_memory_utilization", "a different gpu-memory-utilization or GPU"),
    "weights": ("model weights per GPU",
                "checkpoint dtype/quantization differs (a quantized or fp32 checkpoint), a different model revision, "
                "extra modules loaded (vision tower, MTP/draft heads), or how TP/PP split the layers"),
    "activation_peak": ("PyTorch peak memory of the profiling forward pass",
                        "the profiling batch (max-num-batched-tokens, max-num-seqs for the sampler), a multimodal "
                        "encoder profile run, MoE workspace or attention backend scratch buffers"),
    "non_torch": ("memory outside PyTorch's allocator (NCCL/custom all-reduce buffers, cuBLAS workspace)",
                  "tensor parallelism (NCCL and custom all-reduce buffers grow with TP), other processes on the "
                  "GPU, or the CUDA driver/runtime version"),
    "cuda_graph": ("CUDA graph pool memory",
                   "the number of capture sizes (max-num-seqs, cudagraph_capture_sizes) or --enforce-eager"),
    "kv_cache": ("memory left for the KV cache per GPU", "the sum of the terms above"),
}


class TermRow(DataModel):
    """One memory term: logged vs predicted, GiB per GPU, and the log line it is on."""

    name: str
    logged: float | None
    predicted: float | None
    unit: str = "GiB"
    line: int | None = None
    note: str | None = None

    @property
    def diff(self) -> float | None:
        if self.logged is None or self.predicted is None:
            return None
        return self.logged - self.predicted

    def rel(self) -> float | None:
        if self.logged is None or self.predicted is None or not self.logged:
            return None
        return (self.predicted - self.logged) / abs(self.logged)


class Explanation(DataModel):
    """``explain-log``'s result for one log."""

    file: str
    release: str | None
    engine_core: str | None
    model: str | None
    tensor_parallel_size: int
    pipeline_parallel_size: int
    data_parallel_size: int
    gpu: str | None
    gpu_source: str
    spec_source: str                          # "log" or the config file
    rebuilt_args: list[str] = Field(default_factory=new_list)
    memory: list[TermRow] = Field(default_factory=new_list)
    kv: list[TermRow] = Field(default_factory=new_list)
    differs: str | None = None                # the term that explains the KV difference most
    differs_by_gib: float | None = None
    cause: str | None = None
    verdict: str = ""
    start_failure: str | None = None
    start_failure_line: int | None = None
    predicted_start_error: str | None = None
    config_mismatches: list[str] = Field(default_factory=new_list)
    notes: list[str] = Field(default_factory=new_list)
    warnings: list[str] = Field(default_factory=new_list)

    def to_json(self) -> dict[str, Any]:
        out = self.model_dump()
        for key in ("memory", "kv"):
            for row, obj in zip(out[key], getattr(self, key)):
                d = obj.diff
                row["difference"] = None if d is None else round(d, 4)
                r = obj.rel()
                row["relative_error"] = None if r is None else round(r, 4)
        return out


def _model_key(name: str | None) -> str:
    n = (name or "").strip().rstrip("/").lower()
    return n.rsplit("/", 1)[-1] if "/" in n else n


def _gpu_for(facts: LogFacts, gpu: str | None) -> tuple[str | None, str, list[str]]:
    """(GPU spelling for the spec builder, where it came from, notes)."""
    if gpu:
        return gpu, "--gpu", []
    if facts.gpu_name:
        try:
            return resolve_gpu(facts.gpu_name).gpu.id, f"printed in the log ({facts.gpu_name})", []
        except SchedReaderError:
            pass
    if facts.gpu_total_gib:
        best = sorted(list_gpus(), key=lambda g: (round(abs(g.cuda_total_gib - facts.gpu_total_gib), 2),
                                                  g.cuda_total_inferred))
        if best and abs(best[0].cuda_total_gib - facts.gpu_total_gib) <= 0.3:
            g = best[0]
            same = [x.id for x in best[1:] if abs(x.cuda_total_gib - g.cuda_total_gib) < 0.05]
            notes = []
            if same:
                notes.append(f"GPU taken as {g.id} from the logged total memory {facts.gpu_total_gib} GiB "
                             f"({', '.join(same)} report the same total; pass --gpu to choose)")
            return g.id, f"logged total memory {facts.gpu_total_gib} GiB", notes
        return None, "not in the log", [f"no catalog GPU has {facts.gpu_total_gib} GiB total; pass --gpu"]
    return None, "not in the log", ["the log names no GPU and no total memory; the default GPU is assumed "
                                    "(pass --gpu)"]


def _flag_words(key: str, value: Any) -> list[str]:
    flag = "--" + key.replace("_", "-")
    if isinstance(value, bool):
        return [flag] if value else ["--no-" + key.replace("_", "-")]
    if isinstance(value, (dict, list)):
        return [flag, json.dumps(value)]
    return [flag, str(value)]


def _engine_env(facts: LogFacts) -> list[str]:
    """``["VLLM_USE_V1=1"]`` when the log shows the V1 engine in a release that also has V0 (0.6.4-0.10.x), so
    the rebuilt spec runs the engine the log ran whatever the release's default on this platform (V1 was
    opt-in before 0.8.0 and off by default on AMD and Intel GPUs until 0.9.2); else no words."""
    if facts.engine_core != "v1" or not facts.release or not has_both_engines(facts.release):
        return []
    return ["VLLM_USE_V1=1"]


def rebuild_argv(facts: LogFacts) -> list[str]:
    """The ``vllm serve`` command line the log states (its non-default args, then the engine dump)."""
    if not facts.model:
        raise InputError("the log does not name the model (no engine-config or non-default args line)",
                         file=facts.file, hint="pass the deploy config as well: explain-log LOG CONFIG")
    argv = ["vllm", "serve", facts.model]
    set_keys: set[str] = set()
    for key in _SPEC_KEYS:
        if key in facts.non_default_args and facts.non_default_args[key] is not None:
            v = facts.non_default_args[key]
            if key == "max_model_len" and isinstance(v, str):
                continue  # "128k"-style text: the dump below has the number
            argv += _flag_words(key, v)
            set_keys.add(key)
    for dump_key, key in _DUMP_KEYS.items():
        v = facts.engine_config.get(dump_key)
        if v is None or key in set_keys or v in ("None", ""):
            continue
        if key == "dtype":
            v = v.replace("torch.", "")
        if key == "kv_cache_dtype" and v == "auto":
            continue
        if key in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size") and v == "1":
            continue
        if key == "enforce_eager":
            if v == "True":
                argv.append("--enforce-eager")
            continue
        argv += ["--" + key.replace("_", "-"), v]
        set_keys.add(key)
    if "max_model_len" not in set_keys and facts.max_model_len is not None:
        argv += ["--max-model-len", str(int(facts.max_model_len.value))]
    if "gpu_memory_utilization" not in set_keys and facts.gpu_memory_utilization is not None:
        argv += ["--gpu-memory-utilization", f"{facts.gpu_memory_utilization:g}"]
    # The token budget the scheduler line states is the one the engine ran with (V1 always chunks; the
    # usage context -- `vllm serve` or the offline LLM class -- and the GPU pick the default).
    if "max_num_batched_tokens" not in set_keys and facts.max_num_batched_tokens is not None \
            and ("enable_chunked_prefill" in set_keys or facts.engine_core == "v1"):
        argv += ["--max-num-batched-tokens", str(int(facts.max_num_batched_tokens.value))]
    return argv


def _check_truncated(facts: LogFacts) -> None:
    if (facts.memory.get("kv_cache") or facts.memory.get("kv_cache_in_use") or facts.kv_cache_tokens or facts.gpu_blocks or facts.start_failure
            or facts.failure_kv_tokens):
        return
    last = ("memory profiling" if facts.memory.get("activation_peak") or facts.memory.get("non_torch") else
            "model loading" if facts.memory.get("weights") else
            "engine config" if facts.engine_config else ("arguments" if facts.non_default_args else "banner"))
    raise InputError(
        f"the log ends before vLLM sized the KV cache: no 'Available KV cache memory', 'GPU KV cache size' or "
        f"'# GPU blocks' line in its "
        f"{facts.lines} lines (last stage seen: {last})",
        file=facts.file, line=facts.lines,
        hint="the log is truncated or the engine is still loading; pass the log up to 'GPU KV cache size' / "
             "'# GPU blocks'")


def explain(facts: LogFacts, spec: Any | None = None, *, gpu: str | None = None,
            vllm: str | None = None, model_config: str | None = None) -> Explanation:
    """Lay the log's memory terms beside the prediction for the same engine (see module docstring)."""
    _check_truncated(facts)
    gpu_arg, gpu_source, notes = _gpu_for(facts, gpu)
    mismatches: list[str] = []
    argv: list[str] = []
    if spec is None:
        argv = rebuild_argv(facts)
        release = vllm or facts.release
        if release is None and facts.release_from_format:
            release = facts.release_from_format
            notes.append(f"the log prints no vLLM version; its line formats place it near {release} "
                         "(pass --vllm to set it)")
        if release and "dev" in release or release and "rc" in release:
            notes.append(f"release {release} is a development build; its base release's defaults are used")
        spec = None
        first_err: SchedReaderError | None = None
        for name in _model_candidates(facts.model or ""):
            try:
                [spec] = build_specs([], _engine_env(facts) + argv[:2] + [name] + argv[3:], gpu=gpu_arg,
                                     vllm=_base_release(release) if release else None, model_config=model_config)
            except SchedReaderError as err:
                if "model" not in (err.key or "") and "model" not in err.message:
                    raise
                first_err = first_err or err
                continue
            if name != facts.model:
                notes.append(f"the log serves a local path; its model taken as {name!r}")
                argv = argv[:2] + [name] + argv[3:]
            break
        if spec is None:
            assert first_err is not None
            return _log_only(facts, argv, gpu_arg, gpu_source, notes + [
                f"no prediction: {first_err.message}" + (f" ({first_err.hint})" if first_err.hint else "")])
        spec_source = "log"
    else:
        spec_source = spec.file
        if facts.model and _model_key(facts.model) != _model_key(spec.model_name) and \
                _model_key(facts.served_model_name) != _model_key(spec.model_name):
            raise InputError(
                f"the log is of model {facts.model!r} (line {facts.model_line}) but the config serves "
                f"{spec.model_name!r}", file=facts.file, line=facts.model_line,
                hint="give the log and the config of the same engine")
        mismatches = _compare_config(facts, spec)
    if spec.arch is None or spec.effective is None:
        reason = spec.unresolved[0].reason if spec.unresolved else "model not resolved"
        raise InputError(f"cannot predict this engine: {reason}", file=facts.file, line=facts.model_line,
                         key="model", hint="pass --model-config PATH to the model's config.json")
    eff = spec.effective
    if facts.flashinfer_sampler is not None and eff.engine == "v1" and eff.flashinfer_sampler is None:
        # An install fact no config states: the engine's own sampler choice sizes the profile's sampler peak.
        eff = eff.model_copy(update={"flashinfer_sampler": facts.flashinfer_sampler})
        notes.append(f"sampler as the log states (line {facts.flashinfer_sampler_line}): "
                     + ("FlashInfer top-k/top-p" if facts.flashinfer_sampler else "not FlashInfer (PyTorch/Triton)"))
    if facts.custom_all_reduce is False and eff.tensor_parallel_size > 1 and eff.custom_all_reduce is None:
        eff = eff.model_copy(update={"custom_all_reduce": False})
        notes.append(f"custom all-reduce off as the log states (line {facts.custom_all_reduce_line})")
    cap = estimate_capacity(spec.arch, spec.hardware.gpu, eff, spec.checkpoint_quantization)
    j = cap.to_json()
    mem, kvj = j["memory"], j["kv_cache"]
    rows = _memory_rows(facts, mem, cap)
    kv_rows = _kv_rows(facts, kvj) + _encoder_rows(facts, cap)
    ex = Explanation(
        file=facts.file, release=facts.release or eff.vllm_version, engine_core=facts.engine_core or eff.engine,
        model=facts.model or spec.model_name,
        tensor_parallel_size=eff.tensor_parallel_size, pipeline_parallel_size=eff.pipeline_parallel_size,
        data_parallel_size=eff.data_parallel_size, gpu=spec.hardware.gpu.id, gpu_source=gpu_source,
        spec_source=spec_source, rebuilt_args=argv, memory=rows, kv=kv_rows,
        start_failure=facts.start_failure, start_failure_line=facts.start_failure_line,
        predicted_start_error=cap.start_error() or startup_refusal(spec), config_mismatches=mismatches, notes=notes,
        warnings=[f"line {no}: {text}" for no, text in facts.warnings[:20]])
    _attribute(ex, eff)
    return ex


def _model_candidates(name: str) -> list[str]:
    """The logged model name, then the Hugging Face id a local path or HF-cache snapshot path names."""
    out = [name]
    m = re.search(r"models--([^/]+)--([^/]+)", name)
    if m:
        out.append(f"{m.group(1)}/{m.group(2)}")
    parts = [p for p in name.rstrip("/").split("/") if p and p not in (".", "..", "~")]
    if len(parts) >= 2 and name.startswith(("/", "~", ".")):
        out.append("/".join(parts[-2:]))
    return list(dict.fromkeys(out))


def _log_only(facts: LogFacts, argv: list[str], gpu: str | None, gpu_source: str,
              notes: list[str]) -> Explanation:
    """The log's own figures when sched-reader cannot predict the engine (unknown model)."""
    empty = {k: None for k in ("total_gib", "weights_gib", "activation_peak_gib", "non_torch_gib",
                               "cuda_graph_gib", "kv_cache_gib")}

    class _NoCap:
        class memory:  # noqa: N801 - a stand-in with the one attribute _memory_rows reads
            cuda_graph_subtracted = True

    rows = _memory_rows(facts, empty, _NoCap)
    kv = _kv_rows(facts, {"tokens": None, "num_blocks": None, "max_concurrency": None})
    return Explanation(
        file=facts.file, release=facts.release, engine_core=facts.engine_core, model=facts.model,
        tensor_parallel_size=facts.tensor_parallel_size, pipeline_parallel_size=facts.pipeline_parallel_size,
        data_parallel_size=facts.data_parallel_size, gpu=gpu, gpu_source=gpu_source, spec_source="log",
        rebuilt_args=argv, memory=rows, kv=kv, start_failure=facts.start_failure,
        start_failure_line=facts.start_failure_line, notes=notes,
        verdict="no prediction to compare (see notes); the log's own figures are listed",
        warnings=[f"line {no}: {text}" for no, text in facts.warnings[:20]])


def _base_release(release: str) -> str:
    """``0.18.2rc1.dev73+gdb7a17ecc`` -> ``0.18.2``; ``0.6.3.post1`` -> ``0.6.3``."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", release)
    if not m:
        return release
    return f"{m.group(1)}.{m.group(2)}.{m.group(3) or 0}"


def _compare_config(facts: LogFacts, spec: Any) -> list[str]:
    """Settings where the config and the log disagree (the prediction follows the config)."""
    eff = spec.effective
    if eff is None:
        return []
    out = []
    pairs = [("tensor_parallel_size", facts.tensor_parallel_size, eff.tensor_parallel_size),
             ("pipeline_parallel_size", facts.pipeline_parallel_size, eff.pipeline_parallel_size)]
    if facts.max_model_len is not None or facts.engine_config.get("max_seq_len"):
        logged = int(facts.max_model_len.value) if facts.max_model_len else int(facts.engine_config["max_seq_len"])
        pairs.append(("max_model_len", logged, eff.max_model_len))
    if facts.gpu_memory_utilization is not None:
        pairs.append(("gpu_memory_utilization", facts.gpu_memory_utilization, eff.gpu_memory_utilization))
    for key, logged, cfg in pairs:
        if logged is not None and cfg is not None and float(logged) != float(cfg):
            out.append(f"{key}: log {logged}, config {cfg}")
    return out


def _memory_rows(facts: LogFacts, mem: dict[str, Any], cap: Any) -> list[TermRow]:
    rows: list[TermRow] = []

    def add(name: str, logged: float | None, predicted: float | None, line: int | None, note: str | None = None):
        rows.append(TermRow(name=name, logged=logged, predicted=predicted, line=line, note=note))

    add("total", facts.gpu_total_gib, mem["total_gib"], None)
    weights = facts.term("weights")
    add("weights", weights, mem["weights_gib"], facts.term_line("weights"))
    act = facts.term("activation_peak", "max")
    act_line = facts.term_line("activation_peak")
    note = None
    if act is None and facts.term("peak_torch") is not None and weights is not None:
        act = round(facts.term("peak_torch") - weights, 2)
        act_line = facts.term_line("peak_torch")
        note = "peak_torch_memory - weights"
    add("activation_peak", act, mem["activation_peak_gib"], act_line, note)
    add("non_torch", facts.term("non_torch", "max"), mem["non_torch_gib"], facts.term_line("non_torch"))
    cg = facts.term("cuda_graph")
    cg_note = "captured after the KV cache is sized" if not cap.memory.cuda_graph_subtracted else \
        "subtracted before the KV cache is sized"
    if cg is None and facts.term("cuda_graph_estimate") is not None:
        cg, cg_note = facts.term("cuda_graph_estimate"), "vLLM's own estimate; " + cg_note
    add("cuda_graph", cg, mem["cuda_graph_gib"],
        facts.term_line("cuda_graph") or facts.term_line("cuda_graph_estimate"), cg_note)
    kv_name = "kv_cache" if facts.memory.get("kv_cache") else "kv_cache_in_use"
    add("kv_cache", facts.term(kv_name, "min"), mem["kv_cache_gib"], facts.term_line(kv_name),
        "smallest over the ranks that logged it" if len(facts.memory.get(kv_name, [])) > 1 else None)
    return rows


def _kv_rows(facts: LogFacts, kvj: dict[str, Any]) -> list[TermRow]:
    rows = []
    tokens = facts.kv_cache_tokens or facts.failure_kv_tokens
    if tokens is not None:
        rows.append(TermRow(name="kv_tokens", logged=tokens.value, predicted=kvj["tokens"], unit="tokens",
                            line=tokens.line))
    if facts.gpu_blocks is not None:
        rows.append(TermRow(name="gpu_blocks", logged=facts.gpu_blocks.value, predicted=kvj["num_blocks"],
                            unit="blocks", line=facts.gpu_blocks.line))
    if facts.max_concurrency is not None:
        rows.append(TermRow(name="max_concurrency", logged=facts.max_concurrency.value,
                            predicted=kvj["max_concurrency"], unit="x", line=facts.max_concurrency.line,
                            note=f"requests of {facts.max_concurrency_len:,} tokens"))
    return rows


def _encoder_rows(facts: LogFacts, cap: Any) -> list[TermRow]:
    """The multimodal encoder profile vLLM logged (budget, items) beside the predicted one."""
    if facts.encoder_budget is None:
        return []
    term = next((t for t in cap.explain if t.name == "encoder_profile"), None)
    pred = term.inputs if term is not None else {}
    note = f"of {facts.encoder_modality}"
    if pred.get("modality") and pred.get("modality") != facts.encoder_modality:
        note += f"; predicted {pred['modality']}"
    return [TermRow(name="encoder_budget", logged=facts.encoder_budget.value, predicted=pred.get("encoder_budget"),
                    unit="tokens", line=facts.encoder_budget.line, note=note),
            TermRow(name="encoder_items", logged=facts.encoder_items.value, predicted=pred.get("items"),
                    unit="items", line=facts.encoder_items.line, note=note)]


def _attribute(ex: Explanation, eff: Any) -> None:
    """Name the term that moves the KV budget most, and the verdict line."""
    by = {r.name: r for r in ex.memory}
    kv = by["kv_cache"]
    contributions: list[tuple[float, str]] = []
    for name in ("weights", "activation_peak", "non_torch"):
        d = by[name].diff
        if d is not None:
            contributions.append((d, name))
    if by["total"].diff is not None:
        contributions.append((-by["total"].diff * float(eff.gpu_memory_utilization), "total"))
    row = next((r for r in ex.kv if r.name in ("kv_tokens", "gpu_blocks")), None)
    rel = kv.rel() if kv.logged is not None else (row.rel() if row is not None else None)
    if ex.start_failure and kv.logged is None and row is None:
        ex.verdict = ("the engine did not start: " + ex.start_failure +
                      (f"; sched-reader predicts: {ex.predicted_start_error}" if ex.predicted_start_error
                       else "; sched-reader predicts this configuration starts (the failure is not a memory one "
                            "it models)"))
        return
    if rel is None:
        ex.verdict = "the log has no KV-cache figure to compare"
        return
    what = "KV cache memory" if kv.logged is not None else row.name.replace("_", " ")
    pct = f"{rel * 100:+.1f}%"
    if abs(rel) <= 0.02:
        ex.verdict = f"prediction matches the log: {what} {pct} (within 2%)"
    else:
        ex.verdict = f"prediction is off: {what} {pct} vs the log"
    if contributions:
        d, name = max(contributions, key=lambda c: abs(c[0]))
        if abs(d) >= 0.05:
            ex.differs, ex.differs_by_gib = name, round(d, 2)
            what_term, cause = CAUSES[name]
            direction = "more" if d > 0 else "less"
            ex.cause = (f"{name} ({what_term}) is {abs(d):.2f} GiB {direction} in the log than predicted; "
                        f"likely cause: {cause}")
