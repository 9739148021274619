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
           c_req(i) = intake_base_s(endpoint) (+ API_INTAKE_PER_PROMPT_TOKEN_S x prompt_i on the event loop
           only for vLLM 0.6.4 and older; from 0.6.5 that tokenization is a FIFO on the tokenizer thread
           between b_i and the hand-off), h = API_HANDOFF_S
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

Order of the event loop's work (read in the vLLM 0.9.2, 0.10.1 and 0.11.0 wheels: entrypoints/openai/
api_server.py, serving_engine.py, serving_chat.py, v1/engine/async_llm.py, v1/engine/output_processor.py,
utils AsyncMicrobatchTokenizer), which the two passes and the fluid queue above stand for:
  intake   each request's handler is a task of its own (api_server.py `with_cancellation`); its first
           pass (validation, chat template render) ends at the tokenizer `await` (one thread; from 0.10.1
           AsyncMicrobatchTokenizer batches up to 32 queued prompts per call); the resumed handler builds
           the EngineCoreRequest and sends it to the engine core (the hand-off). The ready queue is FIFO,
           so in a burst every first pass runs before any hand-off: no token exists while they run.
  output   AsyncLLM.output_handler (a task) takes each engine step's outputs and runs OutputProcessor.
           process_outputs over them (incremental detokenization, a RequestOutput put into each request's
           RequestOutputCollector, which wakes that request's streaming task) in slices of
           VLLM_V1_OUTPUT_PROC_CHUNK_SIZE (128) requests with `await asyncio.sleep(0)` between slices;
           each woken streaming task formats and writes one SSE chunk (c_out covers both). A step of at
           most 128 requests is one slice with no yield, and outputs already queued are processed back to
           back, so a lagging server merges a request's pending tokens into one chunk (the collector
           aggregates deltas) instead of queueing a chunk per token.
  TPOT     intake work is queued before a request decodes, so it can hold back a request's first tokens
           only: `vllm bench serve` measures TPOT = (last token time - first token time) / (tokens - 1),
           which FALLS when the first token is delayed more than the last. Only streaming work above the
           loop's capacity (a backlog that grows while a request decodes) raises TPOT; the corpus bursts
           stay below it at c_out (benchmarks/delivery_check.py, tests: intake_work_ahead_of_a_request).

Constants (seconds):
  API_OUTPUT_TOKEN_S = 72e-6 per streamed token. Source: vLLM PR #12287 (njhill, Jan 2025, "Online
    serving performance improvements", "Before" run): Llama-3.2-1B-Instruct on one A100, V1 engine,
    ShareGPT, --max-concurrency 400, 6000 prompts (1,350,511 input / 1,211,959 output tokens) reached
    63.62 req/s = 15.72 ms of API-server time per request; a 1B model's GPU step at 400 sequences
    (~8 ms for ~400 tokens, this cost model) leaves the GPU under half busy, so the host path binds:
    (15.72 ms - 1.0 ms intake - 225 prompt tokens x 1 us) / 202 output tokens = 72 us per token.
    The same figure serves both endpoints: the releases' own SSE generators, timed per streamed token on CPU
    (tools/measure_stream_chunk_cost.py, 0.9.2 / 0.10.2 / 0.11.0 wheels, requests as `vllm bench serve` sends
    them), cost 12.6-15.4 us per chat chunk against 9.0-10.9 us per completions chunk: 3-6 us more per token
    for chat, under 10% of the per-token path, so not modelled separately.
  API_INTAKE_S = 1.0 ms per /v1/completions request (assumed: FastAPI/pydantic request parsing and the
    ZMQ hand-off to the engine core take a few hundred microseconds each in CPython); 1.5 ms per
    /v1/chat/completions request whose template the release does not re-parse (assumed: the completions
    figure + 0.5 ms for message parsing and the render, 0.02-0.08 ms of CPU for a one-turn chat with a
    compiled template on this project's build machine, tools/measure_chat_template_cost.py); gpt-oss
    chats, rendered by the Rust `openai_harmony` encoder (vLLM serving_chat's harmony path), take the same
    1.5 ms. Check: GPUStack's vLLM 0.10.2 gpt-oss-120b 1,000-prompt chat burst implies 1.6 ms per request
    (benchmarks/burst_decomposition.py).
  CHAT_TEMPLATE_PARSE_S = 4.8 ms: the uncached per-request template work of the releases that re-parse
    the template (compat/chat_template_work.py), in units of the "detect" work (one parse + two tree walks,
    0.6.5-0.9.1) on Llama-3.1's template. Source: vLLM PR #18566 (mgoin, May 2025,
    github.com/vllm-project/vllm/pull/18566): `vllm serve meta-llama/Llama-3.1-8B-Instruct` (vLLM 0.9.0),
    `vllm bench serve --endpoint-type openai-chat` with 1,000 ShareGPT prompts at once (229,711 prompt
    tokens) measured TTFT mean 9,626 ms, median 9,460 ms, p99 12,667 ms: the median equals the mean, so
    first tokens are spread evenly over [F, F + P] with F = mean - (p99 - mean) / 0.98 = 6.52 s. Nothing
    reaches a client before F: the burst's intake (two-pass model above), 6.52 ms per request, of which
    230 prompt tokens x 1 us are tokenization: 6.3 ms per chat request, 6.3 - 1.5 = 4.8 ms of it the
    template parse (inside the 6-8 s per 1,000 requests PR #20065 measured for it). Not a corpus row (the
    GPU is not stated), so the corpus still measures it.
  CHAT_TEMPLATE_WORK = {"detect": 1.0, "kwargs": 2.1}: each release's per-request template work in that
    unit. "kwargs" (exactly 0.11.0: a fresh sandboxed Environment, parse, find_undeclared_variables) was
    measured against "detect" with tools/measure_chat_template_cost.py (CPU time, jinja2 3.1.6, the
    Qwen3, DeepSeek-R1 and Llama-3.1 templates of llama.cpp's models/templates, alternated round by
    round): kwargs 20.94 / 16.93 / 17.82 ms against Llama-3.1's detect 8.70 ms, mean 2.13; per template
    kwargs / detect 2.35 / 2.73 / 2.12. Check (not a source): GPUStack's vLLM 0.11.0 1,000-prompt chat
    bursts imply 12.9 ms (Qwen3-14B) and 11.0 ms (DeepSeek-R1) per request (benchmarks/
    burst_decomposition.py) against 1.5 + 4.8 x 2.1 = 11.6 ms.
  API_HANDOFF_S = 0.3 ms: the part of the intake after the handler's last suspension
    (AsyncLLM.add_request: Processor.process_inputs builds the EngineCoreRequest, msgpack encoding,
    ZMQ send). Assumed: a few hundred microseconds of CPython, as for request parsing.
  Tokenization runs on a thread of its own from vLLM 0.6.5 (serving_engine.py: `_tokenizer_executor =
    ThreadPoolExecutor(max_workers=1)`, prompts tokenized through it, 0.10+ via AsyncMicrobatchTokenizer; 0.6.4
    calls the tokenizer inline on the event loop; read in the 0.6.4, 0.6.5, 0.9.1-0.11.1 wheels). Hugging Face
    fast tokenizers encode in Rust with the GIL released (`encode_batch` runs under `allow_threads`), so the
    prompt-length part of the intake is a second FIFO server between a request's first pass and its hand-off,
    and not event-loop work: it bounds the rate at which long prompts enter (1 / (1 us x prompt tokens)) but
    no longer competes with streaming (`ApiServerModel.tokenizer_thread`, `has_tokenizer_thread`).
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

from sched_reader.compat.chat_template_work import chat_template_work
from sched_reader.models.workload import endpoint_kind
from sched_reader.versions import parse_version

API_OUTPUT_TOKEN_S = 72e-6
API_INTAKE_S: dict[str, float] = {"completions": 1.0e-3, "chat": 1.5e-3, "chat-harmony": 1.5e-3}
CHAT_TEMPLATE_PARSE_S = 4.8e-3
CHAT_TEMPLATE_WORK: dict[str, float] = {"detect": 1.0, "kwargs": 2.1}
API_HANDOFF_S = 0.3e-3
API_INTAKE_PER_PROMPT_TOKEN_S = 1.0e-6
TOKENIZER_THREAD_FROM = (0, 6, 5)
_BINS = 4096


def endpoint_for(endpoint: str | None, model_type: str | None, release: str | None = None) -> str:
    """The ``ApiServerModel`` entry point for a client's ``endpoint`` ("completions", "chat", a path or a
    ``--backend`` name), a model and the vLLM ``release``: a chat request is "chat-harmony" for gpt-oss
    (the Rust ``openai_harmony`` encoder, not a Jinja template), "chat-template-detect" /
    "chat-template-kwargs" where the release re-parses the Jinja template per request
    (compat/chat_template_work.py), else "chat". Other entry points are returned unchanged."""
    e = endpoint or "completions"
    if endpoint_kind(e) != "chat":
        return e
    if str(model_type or "") == "gpt_oss":
        return "chat-harmony"
    work = chat_template_work(release)
    return f"chat-template-{work}" if work else "chat"


def endpoint_key(endpoint: str | None) -> str:
    """The API_INTAKE_S key of an entry point: "completions", "chat" or "chat-harmony"."""
    kind = endpoint_kind(endpoint)
    return "chat-harmony" if kind == "chat" and "harmony" in str(endpoint).lower() else kind


def intake_base_s(endpoint: str | None) -> float:
    """Per-request intake (s) of an entry point before tokenization: API_INTAKE_S plus, for a
    "chat-template-<work>" entry point, the release's per-request template work."""
    base = API_INTAKE_S[endpoint_key(endpoint)]
    text = str(endpoint or "")
    if text.startswith("chat-template-"):
        base += CHAT_TEMPLATE_PARSE_S * CHAT_TEMPLATE_WORK[text[len("chat-template-"):]]
    return base


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
    tokenizer_thread: bool = True

    def loop_cost_s(self, prompt_len: np.ndarray) -> np.ndarray:
        """Event-loop seconds per request: the intake, plus the prompt's tokenization where the release runs it on
        the event loop itself (``tokenizer_thread`` False: vLLM 0.6.4 and older)."""
        base = self.intake_s if self.intake_s is not None else intake_base_s(self.endpoint)
        per_token = 0.0 if self.tokenizer_thread else self.intake_per_prompt_token_s
        return (base + per_token * np.asarray(prompt_len, dtype=np.float64)) / self.servers

    def tokenize_s(self, prompt_len: np.ndarray) -> np.ndarray:
        """Seconds of the prompt's tokenization on the API server's tokenizer thread (0 when the release tokenizes
        on the event loop, where loop_cost_s carries it)."""
        per_token = self.intake_per_prompt_token_s if self.tokenizer_thread else 0.0
        return per_token * np.asarray(prompt_len, dtype=np.float64) / self.servers

    def request_cost_s(self, prompt_len: np.ndarray) -> np.ndarray:
        """Intake seconds per request, event loop and tokenizer thread together (one request alone)."""
        return self.loop_cost_s(prompt_len) + self.tokenize_s(prompt_len)

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
        c = self.loop_cost_s(prompt_len)
        h = np.minimum(c, self.handoff_s / self.servers)
        b = _fifo(s, c - h)                      # first passes, in send order
        tok = self.tokenize_s(prompt_len)
        done = _fifo(b, tok) if tok.any() else b  # the tokenizer thread, one prompt at a time (FIFO)
        if output_len is not None and streaming_share > 0:
            # a request's tokens stream after its hand-off: that pass carries its streaming share
            h = h + min(1.0, streaming_share) * self.output_token_s / self.servers * np.asarray(output_len, np.float64)
        k = np.searchsorted(s, b, side="right") - 1   # the last request sent by b_i
        ready = np.maximum(done, b[np.maximum(k, 0)])  # its first pass runs before i's hand-off (non-decreasing)
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
            cw = np.cumsum(self.loop_cost_s(prompt_len)[oa])
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


def api_server_for(endpoint: str | None, release: str | None = None, **kwargs) -> ApiServerModel | None:
    """The API server in front of the engine for ``endpoint``, or None for an offline run (``vllm bench
    throughput`` / the ``LLM`` class: every prompt reaches the engine in-process at once and nothing is
    streamed, so neither intake nor delivery applies). ``release``: the vLLM version (whether prompts are
    tokenized on a thread of their own); ``kwargs``: ApiServerModel's calibrated terms."""
    if endpoint_kind(endpoint) == "offline":
        return None
    return ApiServerModel(endpoint or "completions", tokenizer_thread=has_tokenizer_thread(release), **kwargs)


def has_tokenizer_thread(release: str | None) -> bool:
    """Whether vLLM ``release`` tokenizes prompts on the API server's tokenizer thread (True from 0.6.5, and
    for an unknown release) rather than on its event loop."""
    return not release or parse_version(release) >= TOKENIZER_THREAD_FROM
