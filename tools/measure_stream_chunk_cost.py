"""CPU time per streamed token of vLLM's OpenAI SSE generators: /v1/chat/completions against /v1/completions.

Not part of the package (needs an installed vLLM wheel; see tools/measure_engine_host_cost.py for installing
one release beside another, ``PYTHONPATH=DIR``). It feeds each release's own streaming generator
(``OpenAIServingChat.chat_completion_stream_generator``, ``OpenAIServingCompletion.completion_stream_generator``)
the RequestOutputs AsyncLLM hands it in a stream (output kind DELTA: one new token and its text per engine
step) for a request as ``vllm bench serve`` sends it (temperature 0, ``stream_options.include_usage``; chat:
no tools, no reasoning parser, not gpt-oss's harmony path), and times the generator's work per SSE chunk (the
pydantic chunk objects, ``model_dump_json``, the ``data: ...`` string). The cost of building the fed
RequestOutputs is timed alone and subtracted. What both endpoints share is not timed: the output processor
(detokenization, the per-request collector), the task switch and the HTTP write.

Results on this project's build machine (2-core AMD EPYC at 2.6 GHz, shared; median of 7 rounds of 4,000
tokens, us per chunk; two runs where two figures are given):

  release   chat         completions   chat - completions
  0.9.2     12.6         9.8           2.9
  0.10.2    13.0, 14.5   9.4, 10.9     3.6
  0.11.0    13.7, 15.4   9.6, 9.0      4.1, 6.4

A chat stream costs the API server 3-6 us more per token than a completions stream: 2-5 ms of event-loop time
per engine step at 800 streaming requests, on the API-server process, beside the ~72 us per token of the whole path
(models/cost/frontend.py API_OUTPUT_TOKEN_S). The chat endpoint therefore does not explain why the GPUStack
chat bursts' steps run slower than vLLM PR 20308's completions bursts: it moves neither the engine's step nor,
by more than ~5%, the API server's delivery rate.

Run:  PYTHONPATH=DIR python3 tools/measure_stream_chunk_cost.py
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time

import vllm
from vllm.entrypoints.openai.protocol import ChatCompletionRequest, CompletionRequest, RequestResponseMetadata
from vllm.entrypoints.openai.serving_chat import OpenAIServingChat
from vllm.entrypoints.openai.serving_completion import OpenAIServingCompletion
from vllm.outputs import CompletionOutput, RequestOutput

TOKENS = 4000
ROUNDS = 7
PROMPT_IDS = list(range(200))

# the attributes the two generators read from their serving object (set by __init__ from the server's flags:
# no tools, no reasoning parser, no request logging, as `vllm serve MODEL` starts)
CHAT_ATTRS = dict(use_harmony=False, reasoning_parser=None, tool_parser=None, tool_call_id_type="random",
                  enable_auto_tools=False, response_role="assistant", enable_log_outputs=False, request_logger=None,
                  enable_force_include_usage=False, enable_prompt_tokens_details=False,
                  expand_tools_even_if_tool_choice_none=False, log_error_stack=False)
COMPLETION_ATTRS = dict(enable_force_include_usage=False, enable_prompt_tokens_details=False, request_logger=None,
                        enable_log_outputs=False, log_error_stack=False)


def _serving(cls, attrs: dict):
    obj = object.__new__(cls)
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


def _outputs(n: int, indexed: bool):
    """AsyncLLM's stream for one request: a RequestOutput per engine step with one new token (DELTA)."""
    async def gen():
        for k in range(n):
            last = k == n - 1
            co = CompletionOutput(index=0, text=" word", token_ids=[1000 + k], cumulative_logprob=None,
                                  logprobs=None, finish_reason="length" if last else None)
            ro = RequestOutput(request_id="r", prompt=None, prompt_token_ids=PROMPT_IDS if k == 0 else None,
                               prompt_logprobs=None, outputs=[co], finished=last, num_cached_tokens=0)
            yield (0, ro) if indexed else ro
    return gen()


async def _drain(gen) -> list[str]:
    return [chunk async for chunk in gen]


async def chat(n: int) -> list[str]:
    req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], temperature=0.0,
                                max_completion_tokens=n, stream=True, stream_options={"include_usage": True})
    gen = _serving(OpenAIServingChat, CHAT_ATTRS).chat_completion_stream_generator(
        req, _outputs(n, False), "r", "m", [], None, RequestResponseMetadata(request_id="r"), False)
    return await _drain(gen)


async def completions(n: int) -> list[str]:
    req = CompletionRequest(model="m", prompt="hi", temperature=0.0, max_tokens=n, stream=True,
                            stream_options={"include_usage": True})
    prompts = [{"prompt": "hi", "prompt_token_ids": PROMPT_IDS}]
    gen = _serving(OpenAIServingCompletion, COMPLETION_ATTRS).completion_stream_generator(
        req, prompts, _outputs(n, True), "r", 0, "m", 1, None, RequestResponseMetadata(request_id="r"), False)
    return await _drain(gen)


async def feed(n: int) -> list[str]:
    return [x async for x in _outputs(n, False)]


def cpu_s_per_token(fn, n: int) -> float:
    gc.collect()
    t = time.process_time()
    asyncio.run(fn(n))
    return (time.process_time() - t) / n


def main(argv: list[str]) -> int:
    for fn in (chat, completions):   # each must stream one chunk per token (no error chunk)
        chunks = asyncio.run(fn(20))
        if len(chunks) < 20 or any('"error"' in c for c in chunks):
            print(f"{fn.__name__}: unexpected stream from this release: {chunks[:3]}")
            return 1
    res: dict[str, list[float]] = {"feed": [], "chat": [], "completions": []}
    for _ in range(ROUNDS):   # alternated round by round, so that load on a shared machine cancels
        for name, fn in (("feed", feed), ("chat", chat), ("completions", completions)):
            res[name].append(cpu_s_per_token(fn, TOKENS))
    base = statistics.median(res["feed"])
    c, p = (1e6 * (statistics.median(res[k]) - base) for k in ("chat", "completions"))
    print(f"vLLM {vllm.__version__}: us per streamed token (generator only, median of {ROUNDS} rounds): "
          f"chat {c:.1f}, completions {p:.1f}, chat - completions {c - p:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
