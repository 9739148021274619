"""Workloads for the simulator: request lengths, request classes, arrival processes, traces, YAML.

A workload resolves to :class:`Requests`: parallel numpy arrays (prompt tokens, output tokens,
arrival time in seconds, prefix id and prefix length in tokens) plus an optional ``max_concurrency``
(at most that many requests outstanding, like ``vllm bench serve --max-concurrency``).

Everything is seeded: the same spec and seed give the same requests.

Built-in "sharegpt" profile: the dataset's own pairs. ``vllm bench serve --dataset-name sharegpt`` shuffles
ShareGPT_V3_unfiltered_cleaned_split.json with its seed and takes the first ``--num-prompts`` conversations whose
first turn (the prompt) and reference reply (its length is the request's ``max_tokens``) pass
``is_valid_sequence`` (prompt and reply at least 4 tokens, prompt at most 1024, together at most 2048;
vllm/benchmarks/datasets.py): a sample without replacement of the valid pairs. The simulator draws the same way
from the token lengths of every valid pair in the dataset's first 17,400 two-turn conversations (15,460 pairs,
Qwen2/Qwen3 BPE; sched_reader/models/data/sharegpt_lengths.json, built by tools/build_sharegpt_lengths.py).
Their means, 219.6 prompt / 202.9 reply tokens, are those of GPUStack's Qwen3-14B 1,000-prompt run of the file
(217.4 / 201.6, a thinking model that never stops before ``max_tokens`` on these replies), and the 1,000-prompt
totals of the corpus (215-219k input, 194-202k output tokens) across Llama-3, Qwen3, DeepSeek and gpt-oss
tokenizers. Prompt and reply lengths are anti-correlated (log-log correlation -0.45), which is why pairs are drawn
and not the two lengths apart. The replies' tail is short: 99% are under 800 tokens (the lognormal profile this
replaced, median 160 and sigma 1.0, put its 99th percentile at ~1,340), and the longest request decoding alone
at small batch sets the end of a burst run. 26.8% of the replies are under 30 tokens and 7.9% under 10; such a
request decodes entirely inside a burst's prefill flood, where every step carries a prefill chunk, so its TPOT is
the long mixed step, and ``vllm bench serve`` averages TPOT over requests. A model honouring EOS stops some replies
early (LambdaLabs' Llama-3.1 runs, tests/data/bench: 23.7% of outputs under 30 tokens); the reference lengths are
the upper bound the client sets.
"""

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import ConfigDict, Field, ValidationError, model_validator

from sched_reader.data_model import DataModel, new_list
from sched_reader.errors import InputError, combine
from sched_reader.limits import (
    MAX_NESTING,
    MAX_PROMPTS,
    MAX_SEED,
    MAX_TOKENS,
    MIN_REQUEST_RATE,
    bounded_int,
    finite_float,
    json_depth,
    loads_json,
    read_regular_file,
    read_text_file,
)
from sched_reader.readers.yaml_tree import load_documents


# --------------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------------


@dataclass
class Requests:
    """Resolved requests, sorted by arrival. Lengths in tokens, times in seconds."""

    prompt_len: np.ndarray          # int64
    output_len: np.ndarray          # int64, >= 1
    arrival_s: np.ndarray           # float64, non-decreasing
    prefix_id: np.ndarray           # int64, -1 when the request shares no prefix
    prefix_len: np.ndarray          # int64, tokens of the shared prefix (<= prompt_len)
    max_concurrency: int | None = None
    class_name: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # prefix ids whose blocks sit in the prefix cache, unreferenced, when the run starts (a server that already
    # computed those prefixes for an earlier run), least recently used first; see SimCore.warm_cache
    warm_prefixes: tuple[int, ...] = ()
    # closed loop (max_concurrency): seconds from a request's last token at the engine to its successor
    # reaching the engine (the client's round trip through the API server, api.with_resend_delay); 0: the
    # successor joins the very next step (the engine alone, no client)
    resend_delay_s: float = 0.0

    def __len__(self) -> int:
        return int(self.prompt_len.shape[0])

    def take(self, idx: np.ndarray, max_concurrency: int | None) -> "Requests":
        """The requests at ``idx`` (indices, kept in order), with ``max_concurrency`` as their closed-loop cap;
        class names follow, notes are kept, and of the warm prefixes those of the requests taken (order kept)."""
        names = [self.class_name[i] for i in idx.tolist()] if self.class_name else []
        own = set(self.prefix_id[idx].tolist())
        return Requests(self.prompt_len[idx], self.output_len[idx], self.arrival_s[idx], self.prefix_id[idx],
                        self.prefix_len[idx], max_concurrency, names, list(self.notes),
                        tuple(p for p in self.warm_prefixes if p in own), self.resend_delay_s)

    @staticmethod
    def build(prompt_len, output_len, arrival_s=None, prefix_id=None, prefix_len=None,
              max_concurrency: int | None = None) -> "Requests":
        """Validate and sort by arrival (stable). Missing arrivals mean all at t=0."""
        p = np.asarray(prompt_len, dtype=np.int64).reshape(-1)
        o = np.asarray(output_len, dtype=np.int64).reshape(-1)
        n = p.shape[0]
        a = np.zeros(n) if arrival_s is None else np.asarray(arrival_s, dtype=np.float64).reshape(-1)
        pid = np.full(n, -1, dtype=np.int64) if prefix_id is None else np.asarray(prefix_id, dtype=np.int64)
        plen = np.zeros(n, dtype=np.int64) if prefix_len is None else np.asarray(prefix_len, dtype=np.int64)
        if not (o.shape[0] == a.shape[0] == pid.shape[0] == plen.shape[0] == n):
            raise InputError("workload arrays have different lengths")
        if n == 0:
            raise InputError("workload has no requests")
        if (p < 1).any() or (o < 1).any():
            raise InputError("every request needs prompt_len >= 1 and output_len >= 1")
        if not np.isfinite(a).all() or (a < 0).any():
            raise InputError("arrival times must be finite and >= 0 seconds")
        plen = np.minimum(np.where(pid >= 0, plen, 0), p)
        if max_concurrency is not None and max_concurrency < 1:
            raise InputError("max_concurrency must be >= 1")
        order = np.argsort(a, kind="stable")
        return Requests(p[order], o[order], a[order], pid[order], plen[order], max_concurrency)


# --------------------------------------------------------------------------------------------------
# Length distributions
# --------------------------------------------------------------------------------------------------


class LengthDist(DataModel):
    """A token-length distribution; draws are rounded and clipped to [min, max].

    ``fixed``: value. ``normal``: mean, std. ``lognormal``: median and sigma of the log (or mean and std,
    converted). ``uniform``: low, high (inclusive). ``exponential``: mean.
    """

    model_config = ConfigDict(extra="forbid")

    dist: Literal["fixed", "normal", "lognormal", "uniform", "exponential"] = "fixed"
    value: int | None = Field(default=None, le=MAX_TOKENS)
    mean: float | None = Field(default=None, le=MAX_TOKENS)
    std: float | None = Field(default=None, le=MAX_TOKENS)
    median: float | None = Field(default=None, le=MAX_TOKENS)
    sigma: float | None = Field(default=None, le=10.0)  # log-space: e**10 spans 4 orders of magnitude
    low: int | None = Field(default=None, le=MAX_TOKENS)
    high: int | None = Field(default=None, le=MAX_TOKENS)
    min: int = Field(default=1, le=MAX_TOKENS)
    max: int | None = Field(default=None, le=MAX_TOKENS)

    @model_validator(mode="after")
    def _check(self) -> "LengthDist":
        need = {
            "fixed": ("value",), "normal": ("mean", "std"), "uniform": ("low", "high"),
            "exponential": ("mean",),
        }.get(self.dist, ())
        missing = [k for k in need if getattr(self, k) is None]
        if self.dist == "lognormal" and not ((self.median and self.sigma is not None)
                                             or (self.mean and self.std is not None)):
            missing = ["median+sigma or mean+std"]
        if missing:
            raise ValueError(f"{self.dist} distribution needs {', '.join(missing)}")
        if self.min < 1 or (self.max is not None and self.max < self.min):
            raise ValueError("need 1 <= min <= max")
        for k in ("value", "mean", "median", "low", "high"):
            v = getattr(self, k)
            if v is not None and v <= 0:
                raise ValueError(f"{k} must be > 0")
        for k in ("std", "sigma"):
            v = getattr(self, k)
            if v is not None and v < 0:
                raise ValueError(f"{k} must be >= 0")
        if self.dist == "uniform" and self.high < self.low:
            raise ValueError("uniform needs low <= high")
        return self

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n draws (int64 tokens)."""
        if self.dist == "fixed":
            x = np.full(n, float(self.value))
        elif self.dist == "normal":
            x = rng.normal(self.mean, self.std, n)
        elif self.dist == "lognormal":
            if self.median:
                mu, s = math.log(self.median), float(self.sigma)
            else:  # from mean/std of the lengths themselves
                s2 = math.log(1.0 + (self.std / self.mean) ** 2)
                mu, s = math.log(self.mean) - s2 / 2.0, math.sqrt(s2)
            x = rng.lognormal(mu, s, n)
        elif self.dist == "uniform":
            x = rng.integers(self.low, self.high + 1, n).astype(np.float64)
        else:
            x = rng.exponential(self.mean, n)
        hi = self.max if self.max is not None else MAX_TOKENS
        return np.clip(np.rint(x), self.min, hi).astype(np.int64)


def _as_dist(v: Any) -> LengthDist:
    if isinstance(v, (int, float)):
        return LengthDist(dist="fixed", value=int(v) if math.isfinite(v) else v)
    return LengthDist.model_validate(v)


class PrefixSpec(DataModel):
    """A shared prompt prefix (system prompt, RAG header): requests of the class share ``len`` tokens."""

    model_config = ConfigDict(extra="forbid")
    id: int = Field(ge=0, le=2**62)
    len: int = Field(ge=1, le=MAX_TOKENS)


class RequestClass(DataModel):
    """One class of requests in a mix (e.g. chat 256/256 with weight 0.9)."""

    model_config = ConfigDict(extra="forbid")

    name: str = "default"
    weight: float = Field(default=1.0, gt=0, le=1e9)
    input: LengthDist
    output: LengthDist
    prefix: PrefixSpec | None = None

    @model_validator(mode="before")
    @classmethod
    def _scalars(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            for k in ("input", "output"):
                if isinstance(data.get(k), (int, float)):
                    v = data[k]
                    data[k] = {"dist": "fixed", "value": int(v) if math.isfinite(v) else v}
        return data


class Arrival(DataModel):
    """Arrival process. ``poisson``/``gamma`` at ``rate`` req/s (gamma shape = ``burstiness``, 1 = Poisson,
    as in ``vllm bench serve --burstiness``); ``all_at_once`` (rate inf); ``closed_loop``: all sent at
    once and gated by ``max_concurrency``, so a new request starts when one finishes."""

    model_config = ConfigDict(extra="forbid")

    process: Literal["poisson", "gamma", "all_at_once", "closed_loop"] = "poisson"
    rate: float | None = Field(default=None, ge=MIN_REQUEST_RATE)  # req/s; inf: all at once
    burstiness: float = Field(default=1.0, gt=0, le=1e6)
    # vllm bench serve (get_request in vllm/benchmarks/serve.py): every request, the first included, waits
    # a gamma-distributed delay, and the cumulative delays are rescaled so the last one is exactly
    # num_prompts / rate. Off for YAML workloads (first request at t=0, no rescaling) unless asked.
    bench_normalize: bool = False

    @model_validator(mode="after")
    def _check(self) -> "Arrival":
        if self.process in ("poisson", "gamma") and (self.rate is None or math.isinf(self.rate)):
            object.__setattr__(self, "process", "all_at_once")
        return self

    def times(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Arrival times in seconds; the first request arrives at t=0 like ``vllm bench serve``."""
        if self.process in ("all_at_once", "closed_loop"):
            return np.zeros(n)
        shape = 1.0 if self.process == "poisson" else self.burstiness
        gaps = rng.gamma(shape, 1.0 / (self.rate * shape), n)
        if self.bench_normalize:
            t = np.cumsum(gaps)
            return t * ((n / self.rate) / t[-1]) if t[-1] > 0 else t
        gaps[0] = 0.0
        return np.cumsum(gaps)


# The class the "sharegpt" dataset's requests are named by. Their lengths are drawn by :func:`_sharegpt_lengths`
# from the dataset's pairs; this class's fixed lengths are the pairs' means (tokens), never sampled.
SHAREGPT_PROFILE = RequestClass(name="sharegpt", input=220, output=203)
SHAREGPT_LENGTHS_FILE = Path(__file__).resolve().parents[2] / "models" / "data" / "sharegpt_lengths.json"


@lru_cache(maxsize=1)
def sharegpt_pairs() -> tuple[np.ndarray, np.ndarray]:
    """(prompt, output) token lengths of the valid ShareGPT pairs (module docstring; int64 arrays)."""
    doc = json.loads(SHAREGPT_LENGTHS_FILE.read_text(encoding="utf-8"))
    return np.asarray(doc["prompt"], dtype=np.int64), np.asarray(doc["output"], dtype=np.int64)


def _sharegpt_lengths(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n (prompt, output) pairs drawn as ``vllm bench serve`` draws them: distinct pairs while there are enough
    (a sample without replacement); beyond that every pair once and the rest again at random (the client's
    ``maybe_oversample_requests`` repeats random samples)."""
    p, o = sharegpt_pairs()
    if n <= p.size:
        idx = rng.choice(p.size, size=n, replace=False)
    else:
        idx = np.concatenate([rng.permutation(p.size), rng.choice(p.size, size=n - p.size, replace=True)])
    return p[idx].copy(), o[idx].copy()


class WorkloadSpec(DataModel):
    """A workload: request classes (or a JSONL trace), an arrival process, a seed. The YAML form:

    .. code-block:: yaml

        num_prompts: 1000
        seed: 0
        arrival: {process: poisson, rate: 8}
        max_concurrency: 64           # optional
        classes:
          - {name: chat, weight: 0.9, input: 256, output: 256}
          - name: rag
            weight: 0.1
            input: {dist: lognormal, median: 16000, sigma: 0.2, max: 30000}
            output: 128
            prefix: {id: 1, len: 2048}
        # or: trace: requests.jsonl   (lines {"prompt_len", "output_len", "arrival_s"?, "prefix_id"?, "prefix_len"?})
    """

    model_config = ConfigDict(extra="forbid")

    num_prompts: int = Field(default=1000, ge=1, le=MAX_PROMPTS)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    arrival: Arrival = Field(default_factory=lambda: Arrival(process="all_at_once"))
    max_concurrency: int | None = Field(default=None, ge=1, le=MAX_PROMPTS)
    classes: list[RequestClass] = Field(default_factory=new_list)
    dataset: Literal["sharegpt"] | None = None
    trace: str | None = None

    @model_validator(mode="after")
    def _check(self) -> "WorkloadSpec":
        if sum(x is not None and x != [] for x in (self.classes or None, self.dataset, self.trace)) != 1:
            raise ValueError("give exactly one of: classes, dataset: sharegpt, trace")
        if self.arrival.process == "closed_loop" and self.max_concurrency is None:
            raise ValueError("closed_loop arrival needs max_concurrency")
        return self


def _pydantic_msg(err: ValidationError) -> str:
    e = err.errors()[0]
    loc = ".".join(str(x) for x in e.get("loc", ()))
    return f"{loc}: {e.get('msg')}" if loc else str(e.get("msg"))


def generate(spec: WorkloadSpec, base_dir: Path | None = None) -> Requests:
    """Resolve a :class:`WorkloadSpec` into :class:`Requests` (seeded)."""
    rng = np.random.default_rng(spec.seed)
    if spec.trace is not None:
        path = Path(spec.trace)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        return load_trace(path, arrival=spec.arrival, seed=spec.seed, max_concurrency=spec.max_concurrency)
    classes = [SHAREGPT_PROFILE] if spec.dataset == "sharegpt" else spec.classes
    n = spec.num_prompts
    w = np.array([c.weight for c in classes], dtype=np.float64)
    which = rng.choice(len(classes), size=n, p=w / w.sum()) if len(classes) > 1 else np.zeros(n, dtype=np.int64)
    p = np.zeros(n, dtype=np.int64)
    o = np.zeros(n, dtype=np.int64)
    pid = np.full(n, -1, dtype=np.int64)
    plen = np.zeros(n, dtype=np.int64)
    for k, c in enumerate(classes):
        idx = np.nonzero(which == k)[0]
        if spec.dataset == "sharegpt":
            p[idx], o[idx] = _sharegpt_lengths(rng, idx.size)
        else:
            p[idx] = c.input.sample(rng, idx.size)
            o[idx] = c.output.sample(rng, idx.size)
        if c.prefix is not None:
            pid[idx] = c.prefix.id
            plen[idx] = c.prefix.len
    arr = spec.arrival.times(rng, n)
    req = Requests.build(p, o, arr, pid, plen, spec.max_concurrency)
    names = [classes[int(i)].name for i in which]
    req.class_name = [names[i] for i in np.argsort(arr, kind="stable")]
    return req


def load_trace(path: Path, *, arrival: Arrival | None = None, seed: int = 0,
               max_concurrency: int | None = None) -> Requests:
    """Read a JSONL trace. Lines: ``prompt_len``, ``output_len``, optional ``arrival_s``, ``prefix_id``,
    ``prefix_len``. Without ``arrival_s`` on every line, arrivals come from ``arrival`` (default: all at 0).

    Only a regular file under ``limits.MAX_FILE_BYTES`` is read; each field is checked against its bound
    (lengths in [1, ``MAX_TOKENS``] tokens, finite arrival seconds, at most ``MAX_PROMPTS`` lines), and
    every bad line is reported, in line order, in one error.
    """
    name = str(path)
    text = read_text_file(path, display=name, key="trace", what="trace")
    lines = text.splitlines()
    rows: list[dict] = []
    problems: list[tuple[int, str]] = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if len(rows) >= MAX_PROMPTS:
            raise InputError(f"trace has more than {MAX_PROMPTS:,} requests", file=name, line=i,
                             hint="cut the trace; the simulator replays at most that many")
        try:
            row = loads_json(line, file=name, line=i)
            if not isinstance(row, dict):
                raise ValueError("not an object")
            rows.append({
                "p": bounded_int(row["prompt_len"], key="prompt_len", lo=1, hi=MAX_TOKENS, unit="tokens"),
                "o": bounded_int(row["output_len"], key="output_len", lo=1, hi=MAX_TOKENS, unit="tokens"),
                "a": None if row.get("arrival_s") is None else finite_float(
                    row["arrival_s"], key="arrival_s", lo=0.0, hi=_MAX_ARRIVAL_S, unit="s"),
                "pid": -1 if row.get("prefix_id") is None else bounded_int(
                    row["prefix_id"], key="prefix_id", lo=0, hi=_MAX_PREFIX_ID),
                "plen": bounded_int(row.get("prefix_len", 0) or 0, key="prefix_len", lo=0, hi=MAX_TOKENS,
                                    unit="tokens"),
            })
        except InputError as e:
            problems.append((i, f"{e.key}: {e.message}" if e.key and not e.message.startswith(e.key)
                             else e.message))
        except (ValueError, KeyError, TypeError) as e:
            problems.append((i, f"bad trace line ({e.__class__.__name__}: {e})"))
        if len(problems) >= _MAX_REPORTED:
            break
    if problems:
        raise _all_errors(problems, name)
    if not rows:
        raise InputError("trace has no requests", file=name)
    if all(r["a"] is not None for r in rows):
        arr = np.array([r["a"] for r in rows])
    else:
        arr = (arrival or Arrival(process="all_at_once")).times(np.random.default_rng(seed), len(rows))
    try:
        return Requests.build([r["p"] for r in rows], [r["o"] for r in rows], arr,
                              [r["pid"] for r in rows], [r["plen"] for r in rows], max_concurrency)
    except InputError as e:
        e.file = name
        raise


_SNIFF_CHARS = 1 << 20       # characters read to tell a JSONL trace from a YAML workload
_MAX_REPORTED = 20            # problems listed in one error (the count of the rest is not computed)
_MAX_ARRIVAL_S = 10.0 * 365 * 86400  # ten years of arrivals, in seconds
_MAX_PREFIX_ID = 2**62        # fits numpy int64 with room


def _all_errors(problems: list[tuple[int, str]], file: str) -> InputError:
    """One ``InputError`` listing every problem of a file (line order), located at the first one."""
    return combine([InputError(msg, file=file, line=line) for line, msg in problems])


def load_workload_yaml(path: Path, overrides: dict[str, Any] | None = None) -> Requests:
    """Read a workload YAML (see :class:`WorkloadSpec`); ``overrides`` (num_prompts, seed, ...) win.

    Read like a deploy file (regular file, size and nesting bounds, safe YAML, alias bombs refused); a
    field that fails validation is reported with its line, every such field in one error.
    """
    name = str(path)
    text = read_text_file(path, display=name, key="--workload", what="workload file")
    docs = load_documents(text, name) if text.strip() else []
    data = docs[0].root if docs else None
    if not isinstance(data, dict):
        raise InputError("workload must be a mapping", file=name, key="--workload",
                         hint="e.g. 'num_prompts: 100' and 'classes: [{input: 512, output: 128}]'")
    lines = data
    data = dict(data)
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        spec = WorkloadSpec.model_validate(data)
    except ValidationError as e:
        raise _validation_error(e, lines, name) from None
    return generate(spec, base_dir=Path(path).parent)


def _validation_error(err: ValidationError, root: Any, file: str) -> InputError:
    """Every pydantic error of a workload file, each at the line of its key, in line order."""
    problems: list[tuple[int, str]] = []
    for e in err.errors():
        loc = [x for x in e.get("loc", ())]
        line = getattr(root, "line", None) or 1
        node = root
        for part in loc:
            if isinstance(node, dict) and part in node:
                line = node.kline(part) if hasattr(node, "kline") else line
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                line = node.iline(part) if hasattr(node, "iline") else line
                node = node[part]
            else:
                break
        where = ".".join(str(x) for x in loc)
        msg = str(e.get("msg"))
        problems.append((line or 1, f"{where}: {msg}" if where else msg))
    return _all_errors(list(dict.fromkeys(problems)), file)


def bench_length_bounds(length: int, range_ratio: float) -> tuple[int, int]:
    """``[low, high]`` of ``vllm bench serve --random-range-ratio`` (vllm/benchmarks/datasets.py
    ``RandomDataset.get_sampling_params``): floor(L (1 - r)) .. ceil(L (1 + r)), at least 1, drawn uniformly
    (integers, both ends included). The tokenizer's special tokens, which vLLM subtracts from the input
    length first, are not modelled (0-2 tokens)."""
    if not 0.0 <= range_ratio < 1.0:
        raise InputError("must be in [0, 1)", key="--random-range-ratio")
    return max(1, math.floor(length * (1 - range_ratio))), max(1, math.ceil(length * (1 + range_ratio)))


# prefix id of ``vllm bench serve --random-prefix-len``'s one shared prefix
BENCH_PREFIX_ID = 0


def from_bench_flags(*, dataset_name: str = "random", random_input_len: int = 1024,
                     random_output_len: int = 128, num_prompts: int = 1000,
                     request_rate: float = math.inf, max_concurrency: int | None = None,
                     seed: int = 0, burstiness: float = 1.0, random_range_ratio: float = 0.0,
                     random_prefix_len: int = 0, sharegpt_output_len: int | None = None) -> Requests:
    """The ``vllm bench serve`` flags with vLLM's semantics: ``random`` lengths fixed, or uniform in
    :func:`bench_length_bounds` with ``random_range_ratio`` > 0, each prompt after ``random_prefix_len``
    tokens of one prefix all requests share (vllm/benchmarks/datasets.py RandomDataset: the prefix is drawn
    once and prepended to every prompt; the range applies to the random part); ``sharegpt`` the built-in
    profile, every output ``sharegpt_output_len`` tokens when given (``--sharegpt-output-len`` overrides the
    dataset's output lengths); ``request_rate`` inf sends everything at t=0, else gamma gaps of shape
    ``burstiness`` (1 = Poisson) rescaled so the last request is sent at ``num_prompts / request_rate``
    seconds, as vLLM does."""
    try:
        if dataset_name == "sharegpt":
            cls: dict[str, Any] = {"dataset": "sharegpt"}
        elif dataset_name == "random":
            pre = int(random_prefix_len or 0)
            if random_range_ratio:
                lo_i, hi_i = bench_length_bounds(random_input_len, random_range_ratio)
                lo_o, hi_o = bench_length_bounds(random_output_len, random_range_ratio)
                dist_in = LengthDist(dist="uniform", low=lo_i + pre, high=hi_i + pre)
                dist_out = LengthDist(dist="uniform", low=lo_o, high=hi_o)
            else:
                dist_in, dist_out = LengthDist(value=random_input_len + pre), LengthDist(value=random_output_len)
            prefix = PrefixSpec(id=BENCH_PREFIX_ID, len=pre) if pre > 0 else None
            cls = {"classes": [RequestClass(name="random", input=dist_in, output=dist_out, prefix=prefix)]}
        else:
            raise InputError(f"unknown dataset {dataset_name!r} (random or sharegpt)", key="--dataset-name")
        if burstiness <= 0:
            raise InputError("must be > 0", key="--burstiness")
        arrival = (Arrival(process="all_at_once") if request_rate is None or math.isinf(request_rate)
                   else Arrival(process="poisson" if burstiness == 1.0 else "gamma",
                                rate=request_rate, burstiness=burstiness, bench_normalize=True))
        spec = WorkloadSpec(num_prompts=num_prompts, seed=seed, arrival=arrival,
                            max_concurrency=max_concurrency, **cls)
    except ValidationError as e:
        raise InputError(_pydantic_msg(e)) from None
    req = generate(spec)
    if dataset_name == "sharegpt" and sharegpt_output_len:
        req.output_len = np.full(len(req), int(sharegpt_output_len), dtype=np.int64)
    return req


def is_jsonl(path: Path) -> bool:
    """A JSONL trace (``.jsonl``/``.ndjson``, or a first non-blank line that is a JSON object)."""
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    if path.suffix.lower() in (".yaml", ".yml"):
        return False
    try:
        with open(path, encoding="utf-8") as fh:
            # bounded: a one-line file of many GiB is never read whole here (load_trace then refuses it)
            head = fh.read(_SNIFF_CHARS)
    except (OSError, UnicodeDecodeError):
        return False
    first = next((ln.strip() for ln in head.splitlines() if ln.strip()), "")
    if not first:
        return False
    if not first.startswith("{"):
        return False
    try:  # depth first: json.loads recurses per level (a RecursionError past ~1,000)
        return json_depth(first) <= MAX_NESTING and isinstance(json.loads(first), dict)
    except ValueError:
        return False


def load_workload_file(path: Path, *, seed: int | None = None, max_concurrency: int | None = None) -> Requests:
    """``--workload FILE``: a JSONL trace (replayed as written: its arrival times, lengths and prefixes)
    or a workload YAML (:class:`WorkloadSpec`). ``seed`` and ``max_concurrency`` override the file's."""
    path = Path(path)
    if not path.is_file():  # the one message of every command: not found, a directory, a FIFO or device
        read_regular_file(path, key="--workload", what="workload file")
        raise InputError("not a file", file=str(path), key="--workload")
    if is_jsonl(path):
        req = load_trace(path, seed=seed or 0, max_concurrency=max_concurrency)
    else:
        over: dict[str, Any] = {}
        if seed:
            over["seed"] = seed
        if max_concurrency is not None:
            over["max_concurrency"] = max_concurrency
        req = load_workload_yaml(path, over or None)
    return req


def drop_overlong(req: Requests, max_model_len: int) -> tuple[Requests, int]:
    """Requests vLLM's API server rejects (prompt of ``max_model_len`` tokens or more: "This model's
    maximum context length is ..."), removed; ``vllm bench serve`` counts them as failed and carries on.
    Returns (the requests that run, how many failed)."""
    ok = req.prompt_len < max_model_len
    failed = int((~ok).sum())
    if not failed:
        return req, 0
    if not ok.any():
        raise InputError(f"every request's prompt is at least max-model-len {max_model_len:,} tokens: "
                         "vLLM would reject all of them", key="--max-model-len")
    kept = req.take(np.flatnonzero(ok), req.max_concurrency)
    return kept, failed
