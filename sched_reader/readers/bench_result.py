"""Read a ``vllm bench serve`` result: the ``--save-result`` JSON, or the text summary it prints.

JSON keys used (vLLM's benchmark_serving / ``vllm bench serve``, 0.4 to 0.33): ``num_prompts``,
``request_rate``, ``max_concurrency``, ``duration`` (s), ``completed``, ``total_input_tokens``,
``total_output_tokens``, ``output_throughput`` (tok/s), ``mean/median/p99_ttft_ms``, ``..._tpot_ms``,
``..._itl_ms``, ``model_id``, ``backend`` (``endpoint_type`` in older files: the client's --backend, e.g.
``openai-chat``); and, when saved, the per-request ``input_lens`` / ``output_lens``.
The text summary is the block between ``Serving Benchmark Result`` and the closing ``=====`` line.

Anything else (another tool's JSON, a result without throughput or TPOT) is an ``InputError`` (exit 2).
"""

import json
import math
import re
from pathlib import Path
from typing import Any


from sched_reader.data_model import DataModel
from sched_reader.errors import InputError


class BenchResult(DataModel):
    """One benchmark run, in vLLM's units (ms, tok/s, s)."""

    file: str
    model_id: str | None = None
    num_prompts: int | None = None
    completed: int
    request_rate: float = math.inf
    max_concurrency: int | None = None
    duration_s: float | None = None
    total_input_tokens: int
    total_output_tokens: int
    output_throughput: float
    mean_ttft_ms: float | None = None
    median_ttft_ms: float | None = None
    p99_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    median_tpot_ms: float | None = None
    p99_tpot_ms: float | None = None
    mean_itl_ms: float | None = None
    input_lens: list[int] | None = None
    output_lens: list[int] | None = None
    backend: str | None = None  # the client's --backend (``vllm``, ``openai``, ``openai-chat`` ...), when saved

    @property
    def mean_input_len(self) -> float:
        return self.total_input_tokens / max(1, self.completed)

    @property
    def mean_output_len(self) -> float:
        return self.total_output_tokens / max(1, self.completed)

    def label(self) -> str:
        rate = "inf" if math.isinf(self.request_rate) else f"{self.request_rate:g}/s"
        conc = f", concurrency {self.max_concurrency}" if self.max_concurrency else ""
        return (f"{Path(self.file).name}: {self.completed} requests, ~{self.mean_input_len:.0f} in / "
                f"~{self.mean_output_len:.0f} out tokens, rate {rate}{conc}")


_TEXT_KEYS = {
    "Successful requests": "completed",
    "Benchmark duration (s)": "duration_s",
    "Total input tokens": "total_input_tokens",
    "Total generated tokens": "total_output_tokens",
    "Output token throughput (tok/s)": "output_throughput",
    "Mean TTFT (ms)": "mean_ttft_ms",
    "Median TTFT (ms)": "median_ttft_ms",
    "P99 TTFT (ms)": "p99_ttft_ms",
    "Mean TPOT (ms)": "mean_tpot_ms",
    "Median TPOT (ms)": "median_tpot_ms",
    "P99 TPOT (ms)": "p99_tpot_ms",
    "Mean ITL (ms)": "mean_itl_ms",
    "Maximum request concurrency": "max_concurrency",
    "Traffic request rate": "request_rate",
}


def _rate(v: Any) -> float:
    if v is None or (isinstance(v, str) and v.strip().lower() in ("inf", "infinity")):
        return math.inf
    return float(v)


def read_bench(path: str | Path) -> BenchResult:
    """One result file (JSON or text summary); ``InputError`` when it is not a vllm bench serve result."""
    p = Path(path)
    try:
        text = p.read_text(errors="replace")
    except FileNotFoundError:
        raise InputError("no such file", file=str(path)) from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=str(path)) from None
    if len(text) > 256 * 1024 * 1024:
        raise InputError("file too large for a benchmark result", file=str(path))
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return _from_json(text, str(path))
    if "Serving Benchmark Result" in text or "Output token throughput" in text:
        return _from_text(text, str(path))
    raise InputError("not a `vllm bench serve` result (neither its --save-result JSON nor its summary)",
                     file=str(path), hint="run `vllm bench serve ... --save-result` and pass the JSON")


def _from_json(text: str, file: str) -> BenchResult:
    try:
        d = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"invalid JSON: {err.msg}", file=file, line=err.lineno) from None
    if not isinstance(d, dict):
        raise InputError("not a `vllm bench serve` result: the JSON is not an object", file=file)
    need = ("completed", "total_input_tokens", "total_output_tokens", "output_throughput")
    missing = [k for k in need if k not in d]
    if missing:
        raise InputError(f"not a `vllm bench serve` result: no {', '.join(missing)}", file=file,
                         hint="a result from another benchmark tool? pass vLLM's --save-result JSON")
    try:
        return BenchResult(
            file=file, model_id=d.get("model_id"), num_prompts=d.get("num_prompts"), completed=int(d["completed"]),
            request_rate=_rate(d.get("request_rate")), max_concurrency=d.get("max_concurrency"),
            duration_s=d.get("duration"), total_input_tokens=int(d["total_input_tokens"]),
            total_output_tokens=int(d["total_output_tokens"]), output_throughput=float(d["output_throughput"]),
            **{k: d.get(k) for k in ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                                     "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms")},
            input_lens=d.get("input_lens"), output_lens=d.get("output_lens"), backend=_backend(d))
    except (TypeError, ValueError) as err:
        raise InputError(f"invalid benchmark result: {str(err).splitlines()[0]}", file=file) from None


def _backend(d: dict[str, Any]) -> str | None:
    """The client's --backend: ``backend``, else ``endpoint_type`` (vLLM writes both from args.backend; older
    releases only ``endpoint_type``); None when neither is a string."""
    for key in ("backend", "endpoint_type"):
        if isinstance(d.get(key), str) and d[key].strip():
            return d[key].strip()
    return None


def _from_text(text: str, file: str) -> BenchResult:
    vals: dict[str, Any] = {}
    for line in text.splitlines():
        m = re.match(r"\s*#?\s*([A-Za-z0-9 ()/]+?):\s+([0-9.]+|inf)\s*$", line)
        if m and m.group(1).strip() in _TEXT_KEYS:
            key = _TEXT_KEYS[m.group(1).strip()]
            vals.setdefault(key, m.group(2))
    need = ("completed", "total_input_tokens", "total_output_tokens", "output_throughput")
    missing = [k for k in need if k not in vals]
    if missing:
        raise InputError(f"incomplete benchmark summary: no {', '.join(missing)} line", file=file)
    return BenchResult(
        file=file, completed=int(float(vals["completed"])), total_input_tokens=int(float(vals["total_input_tokens"])),
        total_output_tokens=int(float(vals["total_output_tokens"])),
        output_throughput=float(vals["output_throughput"]), request_rate=_rate(vals.get("request_rate")),
        max_concurrency=int(float(vals["max_concurrency"])) if "max_concurrency" in vals else None,
        duration_s=float(vals["duration_s"]) if "duration_s" in vals else None,
        **{k: float(vals[k]) for k in ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                                       "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms") if k in vals})
