"""The API server between a ``vllm bench serve`` client and the engine: a single CPU server.

vLLM's OpenAI-compatible server runs in one Python process (``--api-server-count 1``, the default) on
one asyncio event loop. Every request costs it an intake (HTTP parse, validation, chat template,
tokenization, hand-off to the engine core) and every streamed token an output step (incremental
detokenization, one OpenAI SSE chunk serialized and written). The benchmark client parses each chunk in
its own single event loop too. Whichever of the two is slower sets how fast tokens can reach the client,
whatever the GPU does. Modelled as one FIFO server with unit service rate:

  intake   two passes through the event loop's FIFO ready queue (s_i: client send time):
           b_i = max(s_i, b_{i-1}) + c_req(i) - h          (HTTP parse, validation, chat template,
                                                          tokenization: up to the last suspension)
           a_i = max(a_{i-1}, b_i, b_{k(b_i)}) + h        (engine hand-off; k(t): the last request sent
                                                          by t, whose first pass is queued ahead of it)
           c_req(i) = API_INTAKE_S[endpoint] + API_INTAKE_PER_PROMPT_TOKEN_S x prompt_i, h = API_HANDOFF_S
           A request's handler suspends (awaits the tokenizer, the ZMQ send) and goes back to the end of
           the ready queue, behind every handler that became ready meanwhile. In a burst all N first
           passes therefore run before the first hand-off: the engine receives nothing for N x (c_req - h)
           seconds, then all requests within N x h. When sends are spread out the queue is empty and
           a_i = s_i + c_req(i), as for one FIFO pass.
  delivery work W(t) = c_out x tokens the engine has emitted by t + c_req of every request sent by t
           backlog B(t) = (W(t) - t) - min(0, min_{u <= t} (W(u) - u))   (reflected fluid queue)
           a token the engine emits at t reaches the client at t + B(t)
  feedback the event loop alternates between intake and streaming: when the engine's token rate R
           would saturate the server (rho = R x c_out >= 1; simulate() runs the engine once with plain
           intake to measure R), each intake also waits for its own streaming work, so requests enter
           at the rate 1 / (c_req + O x c_out) at which the server can carry them end to end. Below
           saturation intake only pays c_req.
A burst of N prompts therefore enters the engine over N x c_req seconds, and when the engine emits
tokens faster than 1 / c_out per second the backlog grows, stretching TTFT, TPOT and the duration the
client measures (output throughput <= 1 / c_out). Below that rate B stays ~0 and nothing changes.

Constants (seconds):
  API_OUTPUT_TOKEN_S = 72e-6 per streamed token. Source: vLLM PR #12287 (njhill, Jan 2025, "Online
    serving performance improvements", "Before" run): Llama-3.2-1B-Instruct on one A100, V1 engine,
    ShareGPT, --max-concurrency 400, 6000 prompts (1,350,511 input / 1,211,959 output tokens) reached
    63.62 req/s = 15.72 ms of API-server time per request; a 1B model's GPU step at 400 sequences
    (~8 ms for ~400 tokens, this cost model) leaves the GPU under half busy, so the host path binds:
    (15.72 ms - 1.0 ms intake - 225 prompt tokens x 1 us) / 202 output tokens = 72 us per token.
  API_INTAKE_S = 1.0 ms per /v1/completions request (assumed: FastAPI/pydantic request parsing and the
    ZMQ hand-off to the engine core take a few hundred microseconds each in CPython), 6.3 ms per
    /v1/chat/completions request rendered with a Jinja chat template. Source of the chat figure: vLLM
    PR #18566 (mgoin, May 2025, github.com/vllm-project/vllm/pull/18566): `vllm serve
    meta-llama/Llama-3.1-8B-Instruct`, `vllm bench serve --endpoint-type openai-chat` with 1,000
    ShareGPT prompts at once (229,711 prompt tokens) measured TTFT mean 9,626 ms, median 9,460 ms,
    p99 12,667 ms: the median equals the mean, so first tokens are spread evenly over [F, F + P]
    with F = mean - (p99 - mean) / 0.98 = 6.52 s. Nothing reaches a client before F: the burst's
    intake (two-pass model above), 6.52 ms per request, of which 230 prompt tokens x 1 us are
    tokenization: 6.3 ms per chat request. Not a corpus row (the GPU is not stated), so the corpus
    still measures it. gpt-oss models render chats with the Rust `openai_harmony` encoder instead
    of Jinja (vLLM serving_chat's harmony path): API_INTAKE_S["chat-harmony"] = the completions
    figure + 0.5 ms (assumed).
    What the chat figure holds (read in the release wheels, pip download vllm==X --no-deps): a chat
    request of a Jinja-template model re-parses the whole chat template (jinja2 Environment.parse of the
    2-5 kB template) in vLLM 0.6.5-0.9.1 (entrypoints/chat_utils.py `_detect_content_format`, uncached
    until vLLM PR #20065, github.com/vllm-project/vllm/pull/20065, which measured it at 6-8 s per 1,000
    requests on Llama) and again in exactly 0.11.0 (`resolve_chat_template_kwargs` parses the template
    for its variables on every request; `_cached_resolve_chat_template_kwargs` from 0.11.1); 0.6.4 and
    older, 0.9.2-0.10.2 and 0.11.1+ do not parse it per request. The 6.3 ms comes from 0.9.0, so it
    holds one parse (6.3 - 1.0 ms completions intake = 5.3 ms, inside PR #20065's 6-8 ms); 0.11.0 pays
    the same parse, so the figure applies unchanged. Measured on this project's build machine (CPU time,
    jinja2 3.1.6, the templates of llama.cpp's models/templates): the Qwen3, DeepSeek-R1 and Llama-3.1
    templates parse in about 30 / 22 / 25 ms there, within 20% of the Llama-3.1 one, so one figure serves
    every Jinja template. Kept for every release although 0.9.2-0.10.2 and 0.11.1+ skip the parse: no
    measurement separates their remaining chat path (0.10+ tokenizes through AsyncMicrobatchTokenizer, a
    single executor thread) from 1 ms. Check (not a source of the constant): GPUStack's vLLM 0.11.0
    1,000-prompt chat bursts imply 12.9 ms (Qwen3-14B) and 11.0 ms (DeepSeek-R1) per request and its
    0.10.2 gpt-oss burst (harmony path, no Jinja) 1.6 ms (benchmarks/burst_decomposition.py): the
    harmony figure matches, the Jinja path there costs about twice this constant, unexplained.
  API_HANDOFF_S = 0.3 ms: the part of the intake after the handler's last suspension
    (AsyncLLM.add_request: Processor.process_inputs builds the EngineCoreRequest, msgpack encoding,
    ZMQ send). Assumed: a few hundred microseconds of CPython, as for request parsing.
  API_INTAKE_PER_PROMPT_TOKEN_S = 1 us per prompt token: Hugging Face `tokenizers` (Rust) encodes
    long texts at ~1 us/token on one core ("less than 20 seconds to tokenize a GB of text",
    huggingface/tokenizers README, ~4 bytes/token). Short chat prompts cost more per token, which the
    per-request term carries: a Python serving front end measured 1.32-2.82 ms for 131-token chat
    prompts, template included (https://github.com/tenstorrent/tt-inference-server/issues/2173), in
    line with the 2 ms chat intake.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sched_reader.models.workload import endpoint_kind

API_OUTPUT_TOKEN_S = 72e-6
API_INTAKE_S: dict[str, float] = {"completions": 1.0e-3, "chat": 6.3e-3, "chat-harmony": 1.5e-3}
API_HANDOFF_S = 0.3e-3
API_INTAKE_PER_PROMPT_TOKEN_S = 1.0e-6
_BINS = 4096


def endpoint_for(endpoint: str | None, model_type: str | None) -> str:
    """The ``ApiServerModel`` entry point for a client's ``endpoint`` ("completions" or "chat") and a model:
    gpt-oss chats are rendered by the Rust ``openai_harmony`` encoder, not a Jinja template (vLLM
    serving_chat's harmony path), so they take "chat-harmony"."""
    e = endpoint or "completions"
    return "chat-harmony" if "chat" in e and str(model_type or "") == "gpt_oss" else e


def endpoint_key(endpoint: str | None) -> str:
    """The API_INTAKE_S key of an entry point: "completions", "chat" or "chat-harmony"."""
    kind = endpoint_kind(endpoint)
    return "chat-harmony" if kind == "chat" and "harmony" in str(endpoint).lower() else kind


def _fifo(ready: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Completion times of one FIFO server: job i ready at ``ready[i]`` (non-decreasing), ``work[i]`` s."""
    C = np.cumsum(work)
    # t_i = max_{j <= i} (r_j + sum_{k=j..i} w_k) = C_i + max_{j <= i} (r_j - C_{j-1})
    prev = np.concatenate(([0.0], C[:-1]))
    return C + np.maximum.accumulate(ready - prev)


@dataclass(frozen=True)
class ApiServerModel:
    """One API-server process in front of one engine (see module docstring; seconds)."""

    endpoint: str = "completions"
    output_token_s: float = API_OUTPUT_TOKEN_S
    intake_s: float | None = None
    intake_per_prompt_token_s: float = API_INTAKE_PER_PROMPT_TOKEN_S
    servers: int = 1
    handoff_s: float = API_HANDOFF_S

    def request_cost_s(self, prompt_len: np.ndarray) -> np.ndarray:
        """Intake seconds per request."""
        base = self.intake_s if self.intake_s is not None else API_INTAKE_S[endpoint_key(self.endpoint)]
        return (base + self.intake_per_prompt_token_s * np.asarray(prompt_len, dtype=np.float64)) / self.servers

    def intake(self, send_s: np.ndarray, prompt_len: np.ndarray, output_len: np.ndarray | None = None,
               streaming_share: float = 0.0) -> np.ndarray:
        """Times (s) at which requests sent at ``send_s`` (non-decreasing) reach the engine.

        ``streaming_share`` (0-1): the API server's utilization by streaming (engine token rate x
        c_out, capped at 1). The event loop serves intake and streaming in turn, so each request's intake
        also waits for ``streaming_share`` of its own streaming work: at saturation (share 1) requests
        enter at the rate 1 / (c_req + O x c_out) at which the server can carry them end to end.
        """
        s = np.asarray(send_s, dtype=np.float64)
        if s.size == 0:
            return s
        c = self.request_cost_s(prompt_len)
        h = np.minimum(c, self.handoff_s / self.servers)
        b = _fifo(s, c - h)                      # first passes, in send order
        if output_len is not None and streaming_share > 0:
            # a request's tokens stream after its hand-off: that pass carries its streaming share
            h = h + min(1.0, streaming_share) * self.output_token_s / self.servers * np.asarray(output_len, np.float64)
        k = np.searchsorted(s, b, side="right") - 1   # the last request sent by b_i
        ready = np.maximum(b, b[np.maximum(k, 0)])    # its first pass runs before i's hand-off
        return _fifo(ready, h)

    def backlog(self, first_s: np.ndarray, finish_s: np.ndarray, output_len: np.ndarray,
                intake_s: np.ndarray | None = None, prompt_len: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """(grid times, backlog seconds at those times) of the delivery queue.

        Tokens: one at ``first_s``, the other ``output_len - 1`` spread evenly until ``finish_s``.
        """
        f = np.asarray(first_s, dtype=np.float64)
        e = np.maximum(np.asarray(finish_s, dtype=np.float64), f)
        o = np.asarray(output_len, dtype=np.float64)
        t_end = float(e.max()) if e.size else 0.0
        grid = np.linspace(0.0, max(t_end, 1e-9), _BINS + 1)
        span = e - f
        rest = np.maximum(o - 1.0, 0.0)
        rate = np.where(span > 0, rest / np.where(span > 0, span, 1.0), 0.0)
        # tokens emitted by t: sum_i [t >= f_i] + r_i (min(t, e_i) - f_i)^+ (+ the remainder at e_i if span == 0)
        order_f = np.argsort(f)
        fs, rf = f[order_f], rate[order_f]
        cr_f, crf_f = np.cumsum(rf), np.cumsum(rf * fs)
        order_e = np.argsort(e)
        es, re_ = e[order_e], rate[order_e]
        cr_e, cre_e = np.cumsum(re_), np.cumsum(re_ * es)
        k_f = np.searchsorted(fs, grid, side="right")
        k_e = np.searchsorted(es, grid, side="right")

        def pick(cum, k):
            return np.where(k > 0, cum[np.maximum(k - 1, 0)], 0.0)

        emitted = k_f + (grid * pick(cr_f, k_f) - pick(crf_f, k_f)) - (grid * pick(cr_e, k_e) - pick(cre_e, k_e))
        zero_span = span <= 0
        if zero_span.any():  # tokens emitted all at once: a step of ``rest`` at the finish time
            ez = e[zero_span]
            oz = np.argsort(ez)
            emitted = emitted + pick(np.cumsum(rest[zero_span][oz]), np.searchsorted(ez[oz], grid, side="right"))
        work = self.output_token_s / self.servers * emitted
        if intake_s is not None and prompt_len is not None:
            a = np.asarray(intake_s, dtype=np.float64)
            oa = np.argsort(a)
            cw = np.cumsum(self.request_cost_s(prompt_len)[oa])
            k_a = np.searchsorted(a[oa], grid, side="right")
            work = work + pick(cw, k_a)
        x = work - grid
        back = x - np.minimum(0.0, np.minimum.accumulate(x))
        return grid, np.maximum(back, 0.0)

    def deliver(self, first_s: np.ndarray, finish_s: np.ndarray, output_len: np.ndarray,
                intake_s: np.ndarray | None = None, prompt_len: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, float]:
        """(first-token and last-token times the client sees, peak backlog seconds)."""
        grid, back = self.backlog(first_s, finish_s, output_len, intake_s, prompt_len)
        f = np.asarray(first_s, dtype=np.float64)
        e = np.asarray(finish_s, dtype=np.float64)
        return (f + np.interp(f, grid, back) + self.output_token_s,
                e + np.interp(e, grid, back) + self.output_token_s, float(back.max(initial=0.0)))


def api_server_for(endpoint: str | None, **kwargs) -> ApiServerModel | None:
    """The API server in front of the engine for ``endpoint``, or None for an offline run (``vllm bench
    throughput`` / the ``LLM`` class: every prompt reaches the engine in-process at once and nothing is
    streamed, so neither intake nor delivery applies). ``kwargs``: ApiServerModel's calibrated terms."""
    if endpoint_kind(endpoint) == "offline":
        return None
    return ApiServerModel(endpoint or "completions", **kwargs)
