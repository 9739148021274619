"""A benchmark workload in the terms of ``vllm bench serve`` flags.

Fields mirror the CLI (``--dataset-name``, ``--random-input-len``, ``--random-output-len``,
``--num-prompts``, ``--request-rate``, ``--max-concurrency``) with the same defaults
(vllm/benchmarks/serve.py and datasets.py: random input 1024, random output 128, 1000 prompts,
request rate inf). The simulator (engineer E) extends workloads in its own module.

ShareGPT lengths: ``vllm bench serve`` samples ShareGPT_V3_unfiltered_cleaned_split conversations
(first human turn = prompt, first reply = output length). The mean lengths used here come from the
published runs in tests/data/throughput.yaml (total input tokens / total generated tokens over 1000
prompts): 219171/200752 (DeepSeek-R1 tokenizer), 215312/196205 and 215312/194171 (gpt-oss),
217393/201648 (Qwen3): means 216.8 input and 198.2 output tokens per request -> 217 and 198.
"""

import math
from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from sched_reader.data_model import DataModel

SHAREGPT_MEAN_INPUT_TOKENS = 217
SHAREGPT_MEAN_OUTPUT_TOKENS = 198
SHAREGPT_SOURCE = ("mean of total_input_tokens / total_output_tokens over 1000-prompt ShareGPT runs in "
                   "tests/data/throughput.yaml (GPUStack performance lab, vLLM 0.10.2/0.11.0)")


_NOT_GENERATION = ("embed", "pooling", "rerank", "score", "audio", "transcription", "classify")


# Names of the offline entry point: ``vllm bench throughput`` (benchmarks/benchmark_throughput.py) and the
# ``LLM`` class hand prompts to the engine in-process, with no API server in front of it.
OFFLINE_NAMES = ("offline", "llm", "throughput", "bench-throughput", "vllm-bench-throughput")


def endpoint_kind(value: object) -> str:
    """``"chat"``, ``"completions"`` or ``"offline"`` for a ``vllm bench serve --backend`` name (``vllm``,
    ``openai``, ``openai-chat`` ...), an ``--endpoint`` path (``/v1/completions``, ``/v1/chat/completions``)
    or an offline run (``offline``: ``vllm bench throughput`` / the ``LLM`` class, no API server).
    None means the default, ``--backend vllm`` on /v1/completions. Raises ValueError for an entry point
    that does not generate text (embeddings, pooling, audio ...): its requests are not what the cost model
    prices."""
    text = "completions" if value is None else str(value).strip().lower()
    if any(word in text for word in _NOT_GENERATION):
        raise ValueError(f"{value!r} is not a text-generation entry point; sched-reader prices /v1/completions, "
                         "/v1/chat/completions and offline runs (--backend offline)")
    if text in OFFLINE_NAMES or text.startswith("offline"):
        return "offline"
    return "chat" if "chat" in text else "completions"


def usage_context_for(endpoint: object) -> str | None:
    """"LLM_CLASS" when ``endpoint`` (a ``--backend`` / ``--endpoint`` value, or a workload section's) is an
    offline run: vLLM's LLM class picks its own scheduler defaults (compat/defaults.py). None otherwise, and
    for None or an entry point that does not generate text (reported where the workload is resolved)."""
    if endpoint is None:
        return None
    try:
        return "LLM_CLASS" if endpoint_kind(endpoint) == "offline" else None
    except ValueError:
        return None


def offline_usage_context(overrides: dict) -> str | None:
    """``usage_context_for`` the bench flags' entry point (``overrides["endpoint"]``)."""
    return usage_context_for(overrides.get("endpoint"))


class Workload(DataModel):
    """One ``vllm bench serve`` run. Lengths in tokens; ``request_rate`` in requests/second."""

    model_config = ConfigDict(frozen=True)

    dataset_name: Literal["random", "sharegpt"] = "random"
    random_input_len: int = Field(1024, ge=1)
    random_output_len: int = Field(128, ge=1)
    random_range_ratio: float = Field(0.0, ge=0.0, lt=1.0)
    # vllm bench serve --random-prefix-len: tokens of one random prefix every random prompt starts with (the
    # same for all requests, so vLLM's prefix cache holds it after the first); a prompt is prefix + input tokens
    random_prefix_len: int = Field(0, ge=0)
    sharegpt_output_len: int | None = Field(None, ge=1)
    num_prompts: int = Field(1000, ge=1)
    request_rate: float = math.inf
    max_concurrency: int | None = Field(None, ge=1)
    burstiness: float = Field(1.0, gt=0)        # vllm bench serve --burstiness: gamma shape, 1 = Poisson
    # The API entry point the client calls: "completions" (/v1/completions, `--backend vllm`, the default) or
    # "chat" (/v1/chat/completions, `--backend openai-chat`): a chat request costs the API server a chat
    # template (models/cost/frontend.py) and a larger fixed TTFT share (models/cost/steady_state.py);
    # "offline" (`vllm bench throughput`, the LLM class): prompts go to the engine in-process, no API server.
    endpoint: Literal["completions", "chat", "offline"] = "completions"
    # Set when the requests come from a trace or a workload file (replayed request by request): where they
    # come from, and their length percentiles (tokens); the random_* lengths are then the trace's means.
    source: str | None = None
    length_stats: dict | None = None

    @field_validator("endpoint", mode="before")
    @classmethod
    def _endpoint(cls, v):
        return endpoint_kind(v)

    @field_validator("request_rate", mode="before")
    @classmethod
    def _rate(cls, v):
        if v is None or (isinstance(v, str) and v.strip().lower() in ("inf", "infinity")):
            return math.inf
        v = float(v)
        if v <= 0:
            raise ValueError("request_rate must be > 0 (or inf)")
        return v

    def mean_input_len(self) -> float:
        """Mean prompt tokens per request."""
        if self.dataset_name == "sharegpt":
            return float(SHAREGPT_MEAN_INPUT_TOKENS)
        return float(self.random_input_len + self.random_prefix_len)

    def mean_output_len(self) -> float:
        """Mean generated tokens per request (assumes no early EOS for random data)."""
        if self.dataset_name == "sharegpt":
            return float(self.sharegpt_output_len or SHAREGPT_MEAN_OUTPUT_TOKENS)
        return float(self.random_output_len)

    @property
    def is_burst(self) -> bool:
        """All requests arrive at t=0 with no concurrency cap (vllm bench serve defaults)."""
        return math.isinf(self.request_rate) and self.max_concurrency is None

    def describe(self) -> dict:
        d = self.model_dump()
        d["request_rate"] = "inf" if math.isinf(self.request_rate) else self.request_rate
        d["mean_input_len"] = self.mean_input_len()
        d["mean_output_len"] = self.mean_output_len()
        if self.source is None:
            d.pop("source", None)
            d.pop("length_stats", None)
        if self.dataset_name == "sharegpt":
            d["length_source"] = SHAREGPT_SOURCE
        return d
