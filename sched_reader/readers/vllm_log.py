"""Read a real vLLM start-up log (releases 0.6 to 0.33) into the facts it states.

The log may come straight from ``vllm serve``, from ``docker logs [-t]``, ``docker compose logs``
(``service  | `` prefixes), ``kubectl logs [--prefix] [--timestamps]``, with ANSI colour, from several
ranks of a TP/PP engine (``(Worker_TP1 pid=..)``, ``(RayWorkerWrapper pid=.., ip=..)``) or gzip-compressed.
Every pattern is searched anywhere in a line, so prefixes need no stripping, except ANSI colour.

What is read (each value with the 1-based line it came from):

* release: the banner (``version 0.19.0``), ``vLLM API server version X``, ``Initializing ... engine (vX)``;
* the flags: ``non-default args: {...}`` (0.8+), ``args: Namespace(...)`` (0.6-0.8), and the engine-config
  dump (``Initializing a V1 LLM engine (v..) with config: model=.., tensor_parallel_size=.., ...``);
* memory per GPU, in GiB as logged: weights (``Model loading took``/``Loading model weights took``),
  activation peak, non-torch memory, CUDA graph memory, total non-KV memory, available KV-cache memory;
* KV cache: ``GPU KV cache size: N tokens``, ``# GPU blocks: N``, ``Maximum concurrency for L tokens
  per request: Xx``; the start-up failures ``max seq len (L) is larger than ... KV cache (N)``;
* the scheduler: ``Chunked prefill is enabled with max_num_batched_tokens=N``, ``Using max model len N``;
* warnings (``WARNING`` lines) and errors (``ERROR`` lines, ``...Error:`` exceptions).

Bad input (``LogError``, exit 2): no vLLM start-up line at all, or several engines with different models
or releases interleaved in one file.
"""

import ast
import gzip
import re
from pathlib import Path
from typing import Any

from pydantic import Field

from sched_reader.data_model import DataModel, new_dict, new_list
from sched_reader.errors import InputError
from sched_reader.versions import parse_version

MAX_LOG_BYTES = 64 * 1024 * 1024  # a start-up log is KBs to a few MB; refuse anything far larger

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_NUM = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?)"
_PROC = re.compile(r"\((?P<tag>[A-Za-z_][A-Za-z0-9_ ]*?)\s+(?:rank=(?P<rank>\d+)\s+)?pid=(?P<pid>\d+)(?:,\s*ip=[^)]*)?\)")


class Value(DataModel):
    """One number as logged, the line it is on, and the process that printed it."""

    value: float
    line: int
    proc: str | None = None   # e.g. "Worker_TP1", "EngineCore_DP0", None for an untagged line


class LogFacts(DataModel):
    """What one start-up log states (one engine). Memory values are GiB per GPU as vLLM prints them."""

    file: str
    lines: int
    release: str | None = None
    release_line: int | None = None
    engine_core: str | None = None              # "v0" | "v1"
    model: str | None = None
    model_line: int | None = None
    served_model_name: str | None = None
    non_default_args: dict[str, Any] = Field(default_factory=new_dict)
    non_default_args_line: int | None = None
    engine_config: dict[str, str] = Field(default_factory=new_dict)   # the config dump, values as printed
    engine_config_line: int | None = None
    gpu_name: str | None = None                 # a GPU name printed in the log (nvidia-smi, torch)
    gpu_total_gib: float | None = None          # torch's total device memory as logged
    gpu_memory_utilization: float | None = None
    memory: dict[str, list[Value]] = Field(default_factory=new_dict)  # term -> every logged value (all ranks)
    kv_cache_tokens: Value | None = None
    gpu_blocks: Value | None = None
    cpu_blocks: Value | None = None
    max_concurrency: Value | None = None
    max_concurrency_len: int | None = None
    max_num_batched_tokens: Value | None = None
    max_model_len: Value | None = None
    start_failure: str | None = None            # vLLM's own error line when start-up failed
    start_failure_line: int | None = None
    failure_kv_tokens: Value | None = None      # the KV capacity a "max seq len is larger" error states
    warnings: list[tuple[int, str]] = Field(default_factory=new_list)
    ranks: list[str] = Field(default_factory=new_list)  # process tags seen printing memory lines
    restarts: int = 0                           # engine start-ups before the one read (crash loops)
    release_from_format: str | None = None      # the release range the log's line formats place it in
    flashinfer_sampler: bool | None = None      # V1 top-k/top-p sampler: FlashInfer (True) or not (False)
    flashinfer_sampler_line: int | None = None
    custom_all_reduce: bool | None = None       # False: "Custom allreduce is disabled because ..." was logged
    custom_all_reduce_line: int | None = None
    encoder_budget: Value | None = None         # "Encoder cache will be initialized with a budget of B tokens,
    encoder_items: Value | None = None          #  and profiled with N <modality> items" (V1 0.10+)
    encoder_modality: str | None = None

    def term(self, name: str, how: str = "first") -> float | None:
        """A memory term in GiB: the first rank's value (``how="first"``) or the minimum over ranks."""
        vals = self.memory.get(name) or []
        if not vals:
            return None
        if how == "min":
            return min(v.value for v in vals)
        if how == "max":
            return max(v.value for v in vals)
        return vals[0].value

    def term_line(self, name: str) -> int | None:
        vals = self.memory.get(name) or []
        return vals[0].line if vals else None

    @property
    def tensor_parallel_size(self) -> int:
        return self._int_setting("tensor_parallel_size", 1)

    @property
    def pipeline_parallel_size(self) -> int:
        return self._int_setting("pipeline_parallel_size", 1)

    @property
    def data_parallel_size(self) -> int:
        return self._int_setting("data_parallel_size", 1)

    def _int_setting(self, key: str, default: int) -> int:
        for src in (self.non_default_args, self.engine_config):
            v = src.get(key)
            if v is not None:
                try:
                    return int(v)
                except (TypeError, ValueError):
                    pass
        return default

    def has_memory_lines(self) -> bool:
        return bool(self.memory) or self.kv_cache_tokens is not None or self.gpu_blocks is not None


# -------------------------------------------------------------------------------------------- patterns

# The V1 top-k/top-p sampler the engine chose (vllm/v1/sample/ops/topk_topp_sampler.py, 0.7-0.33): the
# FlashInfer kernel or the PyTorch/Triton path. It sizes the profiling run's sampler temporaries.
_SAMPLER_FLASHINFER = re.compile(r"Using FlashInfer for top-p & top-k sampling")
_SAMPLER_NATIVE = re.compile(
    r"Falling back to the PyTorch-native implementation of top-p"
    r"|FlashInfer top-p & top-k sampling sampler is disabled"
    r"|FlashInfer top-p/top-k sampling (?:disabled via|unavailable)")

_RELEASE_PATTERNS = [
    re.compile(r"vLLM API server version v?([0-9][0-9A-Za-z.+\-]*)"),
    re.compile(r"Initializing an? (?:V[01] )?LLM engine \(v([0-9][0-9A-Za-z.+\-]*)\) with config"),
    re.compile(r"[▀▄█ ]{6,}\s+version\s+v?([0-9][0-9A-Za-z.+\-]*)"),
    re.compile(r"vLLM Version\s*:\s*v?([0-9][0-9A-Za-z.+\-]*)"),
]
# engine-config fields that differ between two engines of one model (a restart repeats them unchanged)
_SHAPE_KEYS = ("tensor_parallel_size", "pipeline_parallel_size", "max_seq_len", "dtype", "quantization",
               "kv_cache_dtype", "enforce_eager")
_ENGINE_LINE = re.compile(r"Initializing an? (?:(?P<v1>V1 )|V0 )?LLM engine(?: \(v(?P<ver>[^)]*)\))? with config: (?P<cfg>.*)$")
_NON_DEFAULT = re.compile(r"non-default args: (\{.*\})\s*$")
_NAMESPACE = re.compile(r"\bargs: Namespace\((.*)\)\s*$")

_MEM_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("weights", re.compile(r"Model loading took " + _NUM + r" ?Gi?B")),
    ("weights", re.compile(r"Loading model weights took " + _NUM + r" ?Gi?B")),
    ("weights", re.compile(r"model weights take " + _NUM + r" ?GiB")),
    ("weights", re.compile(r"weights memory: " + _NUM + r" ?GiB")),
    ("weights", re.compile(r"\bmodel weights take\s+" + _NUM + r" ?GiB\s*$")),
    ("activation_peak", re.compile(r"PyTorch activation peak memory\s+" + _NUM + r" ?GiB\s*$")),
    ("non_torch", re.compile(r"\bnon_torch_memory\s+" + _NUM + r" ?GiB\s*$")),
    ("kv_cache", re.compile(r"\bavailable_kv_cache_memory\s+" + _NUM + r" ?GiB\s*$")),
    ("kv_cache", re.compile(r"larger than the available KV cache memory \(" + _NUM + r" ?GiB\)")),
    # 0.11+: "Free memory on device (..) on startup. Desired GPU memory utilization is (0.95, 75.23 GiB). Actual
    # usage is 27.39 GiB for weight, 1.52 GiB for peak activation, 0.25 GiB for non-torch memory, and 1.07 GiB for
    # CUDAGraph memory. ... Current kv cache memory in use is 46.08 GiB."
    ("weights", re.compile(r"Actual usage is " + _NUM + r" ?GiB for weight")),
    ("activation_peak", re.compile(r"\b" + _NUM + r" ?GiB for peak activation")),
    ("non_torch", re.compile(r"\b" + _NUM + r" ?GiB for non-torch memory")),
    ("cuda_graph", re.compile(r"\b" + _NUM + r" ?GiB for CUDAGraph memory")),
    ("kv_cache_in_use", re.compile(r"Current kv cache memory in use is " + _NUM + r" ?GiB")),
    ("activation_peak", re.compile(r"PyTorch activation peak memory takes " + _NUM + r" ?GiB")),
    ("activation_peak", re.compile(r"torch peak memory increase: " + _NUM + r" ?GiB")),
    ("peak_torch", re.compile(r"peak_torch_memory=" + _NUM + r" ?GiB")),
    ("non_torch", re.compile(r"non_torch_memory takes " + _NUM + r" ?GiB")),
    ("non_torch", re.compile(r"non-torch forward increase memory: " + _NUM + r" ?GiB")),
    ("non_torch", re.compile(r"Memory profiling results:.*\bnon_torch_memory=" + _NUM + r" ?GiB")),
    ("total_non_kv", re.compile(r"Total non KV cache memory: " + _NUM + r" ?GiB")),
    ("kv_cache", re.compile(r"Available KV cache memory: " + _NUM + r" ?GiB")),
    ("kv_cache", re.compile(r"the rest of the memory reserved for KV Cache is " + _NUM + r" ?GiB")),
    ("kv_cache", re.compile(r"Memory profiling results:.*\bkv_cache_size=" + _NUM + r" ?GiB")),
    ("cuda_graph", re.compile(r"Graph capturing finished in [0-9.]+ secs?, took " + _NUM + r" ?GiB")),
    ("cuda_graph_estimate", re.compile(r"Estimated CUDA graph memory: " + _NUM + r" ?GiB")),
    ("cuda_graph", re.compile(r"CUDA graph pool memory: " + _NUM + r" ?GiB \(actual\)")),
]
_TOTAL_PATTERNS = [
    re.compile(r"total_gpu_memory \(" + _NUM + r" ?GiB\) x gpu_memory_utilization \(" + _NUM + r"\)"),
    re.compile(r"total_gpu_memory=" + _NUM + r" ?GiB.*gpu_memory_utilization=" + _NUM),
    re.compile(r"total_memory=" + _NUM + r" ?GiB()"),
    re.compile(r"\btotal_gpu_memory\s+" + _NUM + r" ?GiB()\s*$"),
    re.compile(r"Free memory on device \(" + _NUM + r"/" + _NUM + r" ?GiB\)"),
]
_REQUESTED_UTIL = re.compile(r"Requested memory: " + _NUM + r" \(util\)|\bgpu_memory_utilization\s+" + _NUM + r"\s*$"
                             r"|Desired GPU memory utilization is \(" + _NUM)
_KV_TOKENS = re.compile(r"GPU KV cache size: " + _NUM + r" tokens")
_GPU_BLOCKS = re.compile(r"# (?:GPU|cuda|CUDA|npu|xpu|XPU) blocks: " + _NUM + r"(?:, # CPU blocks: " + _NUM + ")?")
_GPU_BLOCKS_V0_644 = re.compile(r"(?<!# )\bGPU blocks: " + _NUM + r", # CPU blocks: " + _NUM)
_NUM_GPU_BLOCKS_DEBUG = re.compile(r"num_gpu_blocks is:\s*" + _NUM)
_CONCURRENCY = re.compile(r"Maximum concurrency for " + _NUM + r" tokens per request: " + _NUM + r"x")
_ENCODER_PROFILE = re.compile(r"Encoder cache will be initialized with a budget of " + _NUM +
                              r" tokens, and profiled with " + _NUM + r" ([a-z]+) items")
_CHUNKED = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=" + _NUM)
_MAX_LEN = re.compile(r"Using max model len " + _NUM)
_FAIL_SEQ_LEN_V1 = re.compile(r"max seq len \(" + _NUM + r"\), \(" + _NUM + r" ?GiB KV cach")
_FAIL_SEQ_LEN = re.compile(
    r"max seq len \(" + _NUM + r"\) is larger than the maximum number of tokens that can be stored in KV cache \("
    + _NUM + r"\)")
_FAIL_PATTERNS = [
    re.compile(r"(To serve at least one request with the models?'s max seq len.*)$"),
    re.compile(r"(The model's max seq len \(.*)$"),
    re.compile(r"(No available memory for the cache blocks.*)$"),
    re.compile(r"Value error, (.*)$"),
    re.compile(r"\b((?:[A-Za-z_]+\.)*[A-Za-z_]*(?:Error|Exception): .+)$"),
]
# exception lines that only say that something else failed first
_GENERIC_FAILURE = ("Engine core initialization failed", "Broken pipe", "validation error for",
                    "Worker failed", "Worker proc", "died unexpectedly", "EngineDeadError")
_GPU_NAME = re.compile(
    r"\b(NVIDIA (?:GeForce |RTX |Tesla )?[A-Z][A-Za-z0-9]*(?:[ -](?:[0-9]+GB|SXM[0-9]?|PCIe|HBM3e?|NVL|Ada|Max-Q|Ti|SUPER))*"
    r"|Tesla [A-Z][0-9]+(?:-[A-Z0-9]+)*|AMD Instinct MI[0-9]+[A-Z]*)")
_LEVEL_NOT_ERROR = re.compile(r"\b(?:DEBUG|INFO|WARNING)\b(?! *:)")
_WARNING = re.compile(r"\bWARNING\b|\bWARN\b")


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def read_log_text(path: str | Path) -> str:
    """The text of a log file (plain or gzip), decoded leniently; ``InputError`` when unreadable."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", file=str(path)) from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=str(path)) from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise InputError(f"corrupt gzip file: {err}", file=str(path)) from None
    if len(raw) > MAX_LOG_BYTES:
        raise InputError(f"log is {len(raw) // 2**20} MiB; a start-up log is far smaller",
                         file=str(path), hint="pass the start-up part of the log (its first few thousand lines)")
    if b"\x00" in raw[:4096]:
        raise InputError("binary file, not a vLLM log", file=str(path))
    return raw.decode("utf-8", errors="replace")


def _proc(line: str) -> str | None:
    m = _PROC.search(line)
    if not m:
        return None
    tag = m.group("tag").strip()
    if m.group("rank") is not None:
        tag = f"{tag} rank={m.group('rank')}"
    return tag


def parse_engine_config(text: str, raw: bool = False) -> dict[str, str]:
    """The ``key=value, key=value`` engine-config dump -> {key: value as printed (quotes removed unless raw)}."""
    out: dict[str, str] = {}
    i, n = 0, len(text)
    key_re = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)=")
    while i < n:
        m = key_re.match(text, i)
        if not m:
            j = text.find(", ", i)
            if j < 0:
                break
            i = j + 2
            continue
        key = m.group(1)
        i = m.end()
        depth = 0
        quote: str | None = None
        start = i
        while i < n:
            c = text[i]
            if quote:
                if c == "\\":
                    i += 2
                    continue
                if c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "," and depth <= 0:
                break
            i += 1
        value = text[start:i].strip()
        if not raw and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.setdefault(key, value)
        i += 1
    return out


def _literal_dict(text: str) -> dict[str, Any]:
    """``{'a': 1, ...}`` as Python prints it; values that are not literals are kept as their text."""
    try:
        v = ast.literal_eval(text)
        return v if isinstance(v, dict) else {}
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, MemoryError, RecursionError, ValueError):
        return {}
    out: dict[str, Any] = {}
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            try:
                key = ast.literal_eval(k) if k is not None else None
            except ValueError:
                continue
            try:
                out[str(key)] = ast.literal_eval(v)
            except ValueError:
                out[str(key)] = ast.get_source_segment(text, v)
    return out


def _namespace(text: str) -> dict[str, Any]:
    """``Namespace(a=1, b='x', ...)`` (vLLM 0.6-0.8 prints its args so) -> the literal keyword values
    (values that are not Python literals, such as ``<function serve at 0x..>``, are skipped)."""
    out: dict[str, Any] = {}
    for key, value in parse_engine_config(text, raw=True).items():
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
    return out


# vLLM's argparse defaults (0.6-0.8 Namespace lines print every arg; only these matter to the spec, and
# only when they differ from the release default, so the default values themselves are dropped).
_NAMESPACE_KEEP = (
    "model", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_model_len",
    "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "kv_cache_dtype", "quantization",
    "dtype", "enforce_eager", "enable_chunked_prefill", "enable_prefix_caching", "block_size",
    "num_gpu_blocks_override", "cpu_offload_gb", "swap_space", "speculative_model", "num_speculative_tokens",
    "speculative_config", "enable_expert_parallel", "max_seq_len_to_capture", "kv_cache_memory_bytes",
)


def parse_log(text: str, file: str = "<log>") -> LogFacts:
    """Parse the text of one vLLM start-up log. Raises ``InputError`` for a file that is not one."""
    text = _ANSI.sub("", text.replace("\r\n", "\n"))
    lines = text.split("\n")
    facts = LogFacts(file=file, lines=len(lines))
    engines: list[tuple[int, str | None, str | None, bool]] = []  # (line, model, release, v1)
    releases: list[tuple[int, str]] = []
    generic_failure: tuple[int, str] | None = None
    started = False  # errors after the server is up are request errors, not start-up failures
    for no, line in enumerate(lines, 1):
        if len(line) > 200_000:
            line = line[:200_000]
        proc = _proc(line)
        m = _ENGINE_LINE.search(line)
        if m:
            cfg = parse_engine_config(m.group("cfg"))
            engines.append((no, cfg.get("model"), m.group("ver"), bool(m.group("v1"))))
            if facts.engine_config and facts.engine_config.get("model") == cfg.get("model"):
                for key in _SHAPE_KEYS:
                    a, b = facts.engine_config.get(key), cfg.get(key)
                    if a is not None and b is not None and a != b:
                        raise InputError(
                            f"several engines in one log: model {cfg.get('model')!r} with {key}={a} "
                            f"(line {facts.engine_config_line}) and {key}={b} (line {no})", file=file, line=no,
                            hint="give the log of one engine (e.g. `kubectl logs POD -c CONTAINER`, or grep one pid)")
            if not facts.engine_config:
                facts.engine_config = cfg
                facts.engine_config_line = no
            facts.engine_core = "v1" if m.group("v1") else facts.engine_core or "v0"
        for pat in _RELEASE_PATTERNS:
            rm = pat.search(line)
            if rm:
                releases.append((no, rm.group(1).rstrip(".,")))
                break
        m = _NON_DEFAULT.search(line)
        if m:
            d = _literal_dict(m.group(1))
            if d:
                facts.non_default_args = d
                facts.non_default_args_line = no
        elif facts.non_default_args_line is None:
            m = _NAMESPACE.search(line)
            if m:
                d = {k: v for k, v in _namespace(m.group(1)).items() if k in _NAMESPACE_KEEP and v is not None}
                if d:
                    facts.non_default_args = d
                    facts.non_default_args_line = no
        if "GiB" in line or "GB" in line:
            for term, pat in _MEM_PATTERNS:
                mm = pat.search(line)
                if mm:
                    facts.memory.setdefault(term, []).append(Value(value=_num(mm.group(1)), line=no, proc=proc))
                    if proc and proc not in facts.ranks:
                        facts.ranks.append(proc)
            for pat in _TOTAL_PATTERNS:
                tm = pat.search(line)
                if tm:
                    if pat.pattern.startswith("Free memory"):
                        facts.gpu_total_gib = facts.gpu_total_gib or _num(tm.group(2))
                    else:
                        facts.gpu_total_gib = facts.gpu_total_gib or _num(tm.group(1))
                        if tm.group(2):
                            facts.gpu_memory_utilization = _num(tm.group(2))
                    break
        m = _REQUESTED_UTIL.search(line)
        if m:
            facts.gpu_memory_utilization = _num(m.group(1) or m.group(2) or m.group(3))
        m = _KV_TOKENS.search(line)
        if m and facts.kv_cache_tokens is None:
            facts.kv_cache_tokens = Value(value=_num(m.group(1)), line=no, proc=proc)
        m = _GPU_BLOCKS.search(line) or _GPU_BLOCKS_V0_644.search(line)
        if m:
            facts.gpu_blocks = Value(value=_num(m.group(1)), line=no, proc=proc)
            if m.group(2):
                facts.cpu_blocks = Value(value=_num(m.group(2)), line=no, proc=proc)
        elif facts.gpu_blocks is None:
            m = _NUM_GPU_BLOCKS_DEBUG.search(line)
            if m:
                facts.gpu_blocks = Value(value=_num(m.group(1)), line=no, proc=proc)
        m = _CONCURRENCY.search(line)
        if m and facts.max_concurrency is None:
            facts.max_concurrency_len = int(_num(m.group(1)))
            facts.max_concurrency = Value(value=_num(m.group(2)), line=no, proc=proc)
        if facts.flashinfer_sampler is None and "top-k" in line:
            if _SAMPLER_FLASHINFER.search(line):
                facts.flashinfer_sampler, facts.flashinfer_sampler_line = True, no
            elif _SAMPLER_NATIVE.search(line):
                facts.flashinfer_sampler, facts.flashinfer_sampler_line = False, no
        if facts.encoder_budget is None and "Encoder cache will be initialized" in line:
            em = _ENCODER_PROFILE.search(line)
            if em:
                facts.encoder_budget = Value(value=_num(em.group(1)), line=no, proc=proc)
                facts.encoder_items = Value(value=_num(em.group(2)), line=no, proc=proc)
                facts.encoder_modality = em.group(3)
        if facts.custom_all_reduce is None and "ustom allreduce is disabled" in line:
            facts.custom_all_reduce, facts.custom_all_reduce_line = False, no
        m = _CHUNKED.search(line)
        if m:
            facts.max_num_batched_tokens = Value(value=_num(m.group(1)), line=no, proc=proc)
        m = _MAX_LEN.search(line)
        if m:
            facts.max_model_len = Value(value=_num(m.group(1)), line=no, proc=proc)
        m = _FAIL_SEQ_LEN.search(line)
        if m and facts.failure_kv_tokens is None:
            facts.failure_kv_tokens = Value(value=_num(m.group(2)), line=no, proc=proc)
        if not started and ("Application startup complete" in line or "Starting vLLM API server" in line
                            or "Starting vLLM server on" in line or "init engine (profile, create kv cache" in line):
            started = True
        if not started and facts.start_failure is None and not _LEVEL_NOT_ERROR.search(line) and ("rror" in line or "xception" in line or "max seq len" in line
                                            or "No available memory" in line):
            for pat in _FAIL_PATTERNS:
                fm = pat.search(line)
                if fm:
                    msg = fm.group(1).strip()[:400]
                    if any(g in msg for g in _GENERIC_FAILURE):
                        generic_failure = generic_failure or (no, msg)
                    else:
                        facts.start_failure = msg
                        facts.start_failure_line = no
                    break
        if facts.gpu_name is None and "NVIDIA" in line or "Tesla" in line or "Instinct" in line:
            gm = _GPU_NAME.search(line)
            if gm and not gm.group(1).startswith(("NVIDIA-SMI", "NVIDIA Corporation")) and \
                    any(ch.isdigit() for ch in gm.group(1)):
                facts.gpu_name = facts.gpu_name or gm.group(1).strip()
        if _WARNING.search(line) and len(facts.warnings) < 200:
            facts.warnings.append((no, line.strip()[:300]))

    if facts.start_failure is None and generic_failure is not None:
        facts.start_failure_line, facts.start_failure = generic_failure
    _check_engines(facts, engines, releases)
    if facts.non_default_args.get("model") or facts.non_default_args.get("model_tag"):
        facts.model = str(facts.non_default_args.get("model") or facts.non_default_args.get("model_tag"))
        facts.model_line = facts.non_default_args_line
    if facts.engine_config.get("model"):
        facts.model = facts.engine_config["model"]
        facts.model_line = facts.engine_config_line
    facts.served_model_name = facts.engine_config.get("served_model_name") or None
    if facts.gpu_memory_utilization is None and isinstance(facts.non_default_args.get("gpu_memory_utilization"),
                                                           (int, float)):
        facts.gpu_memory_utilization = float(facts.non_default_args["gpu_memory_utilization"])
    if facts.release is None:
        facts.release_from_format = _release_from_format(text)
    if facts.engine_core is None and facts.release:
        facts.engine_core = "v1" if parse_version(facts.release) >= (0, 11, 0) else None
    if facts.engine_core is None and (facts.kv_cache_tokens is not None or "Available KV cache memory" in text):
        facts.engine_core = "v1"
    if not (facts.engine_config or facts.non_default_args or facts.has_memory_lines() or facts.release
            or facts.failure_kv_tokens):
        raise InputError("not a vLLM start-up log: no vLLM version, engine config, memory or KV-cache line in it",
                         file=file, hint="pass the log of `vllm serve` from its first line (docker/kubectl logs)")
    return facts


def _check_engines(facts: LogFacts, engines: list[tuple[int, str | None, str | None, bool]],
                   releases: list[tuple[int, str]]) -> None:
    """One engine per log: the same model and release in every engine-config line (DP ranks and restarts
    repeat it); different ones mean several engines' logs interleaved, which cannot be read as one."""
    models = {e[1] for e in engines if e[1]}
    if len(models) > 1:
        first = [e for e in engines if e[1]]
        a, b = first[0], next(e for e in first if e[1] != first[0][1])
        raise InputError(
            f"several engines in one log: model {a[1]!r} (line {a[0]}) and model {b[1]!r} (line {b[0]})",
            file=facts.file, line=b[0],
            hint="give the log of one engine (e.g. `kubectl logs POD -c CONTAINER`, or grep one pid)")
    vers = {e[2] for e in engines if e[2]}
    rel_set = {r[1] for r in releases}
    if len(vers) > 1 or len(rel_set) > 1:
        seen: dict[str, int] = {}
        for no, v in [(e[0], e[2]) for e in engines if e[2]] + releases:
            seen.setdefault(v, no)
        (va, la), (vb, lb) = sorted(seen.items(), key=lambda kv: kv[1])[:2]
        raise InputError(f"several vLLM releases in one log: {va} (line {la}) and {vb} (line {lb})",
                         file=facts.file, line=lb, hint="give the log of one engine start-up")
    if releases:
        facts.release_line, facts.release = releases[0]
    elif vers:
        facts.release = next(iter(vers))
        facts.release_line = engines[0][0]
    # a crash loop restarts the same engine: count the start-ups before the one read
    starts = [e for e in engines]
    dp = 1
    if facts.non_default_args.get("data_parallel_size"):
        try:
            dp = int(facts.non_default_args["data_parallel_size"])
        except (TypeError, ValueError):
            dp = 1
    facts.restarts = max(0, len(starts) // max(1, dp) - 1)


# Line formats that changed between releases (vLLM's worker.py / gpu_worker.py history), newest first.
_FORMAT_ERAS = [
    ("GPU KV cache size:", "0.8.0", "V1 engine (0.8 or later)"),
    ("Memory profiling results: total_gpu_memory=", "0.6.4", "0.6.4 (one-line 'Memory profiling results')"),
    ("the rest of the memory reserved for KV Cache is", "0.7.0", "0.6.5-0.10 V0 worker"),
    ("available_kv_cache_memory", "0.6.5", "0.6.5 development builds (profiling table)"),
    ("# CUDA blocks:", "0.7.0", "0.6.5-0.10 V0 executor"),
]


def _release_from_format(text: str) -> str | None:
    """A release whose log format matches, when the log prints no version (stated as a guess)."""
    for marker, release, _era in _FORMAT_ERAS:
        if marker in text:
            return release
    return None
