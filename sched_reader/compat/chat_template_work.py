"""Which per-request chat-template work vLLM's OpenAI server does, per release.

A /v1/chat/completions request of a model with a Jinja chat template always renders the template (compiled
once per template and cached by Hugging Face transformers, ``_compile_jinja_template``). Some releases also
re-parse the whole template on every request, uncached; that parse, not the render, is what makes a chat
request cost several milliseconds of the API server's single event loop (models/cost/frontend.py). Read in
the release wheels (``pip download vllm==X --no-deps``, vllm/entrypoints/chat_utils.py):

  "detect"  0.6.5-0.9.1: ``resolve_chat_template_content_format`` runs ``_detect_content_format`` without a
            cache: ``Environment.parse`` of the template, then two ``find_all(For)`` walks of the tree.
            vLLM PR #20065 (github.com/vllm-project/vllm/pull/20065) wrapped it in ``lru_cache(maxsize=32)``;
            0.9.2 is the first release with the cache.
  "kwargs"  exactly 0.11.0: ``apply_hf_chat_template`` calls ``resolve_chat_template_kwargs``, which builds a
            sandboxed Environment, parses the template and runs ``jinja2.meta.find_undeclared_variables`` (a
            code-generation pass over the tree) on every request; 0.11.1 caches the variable set
            (``_cached_resolve_chat_template_kwargs = lru_cache(_resolve_chat_template_kwargs)``).
  None      0.6.4 and older (no content-format detection), 0.9.2-0.10.2 and 0.11.1 onwards: render only.

Releases compare on the first three numbers of the version as written (``0.11.0rc2`` is 0.11.0).
"""

from __future__ import annotations

from sched_reader.versions import parse_version

# (first release, first release without it, work kind, source)
WINDOWS: tuple[tuple[tuple[int, int, int], tuple[int, int, int], str, str], ...] = (
    ((0, 6, 5), (0, 9, 2), "detect",
     "vllm/entrypoints/chat_utils.py _detect_content_format, uncached in the 0.6.5, 0.9.1 wheels; "
     "lru_cache from vLLM PR #20065 (first in 0.9.2)"),
    ((0, 11, 0), (0, 11, 1), "kwargs",
     "vllm/entrypoints/chat_utils.py resolve_chat_template_kwargs: parse + find_undeclared_variables per request "
     "in the 0.11.0 wheel; cached (_cached_resolve_chat_template_kwargs) from 0.11.1"),
)


def chat_template_work(version: str | None) -> str | None:
    """The per-request template work of vLLM ``version`` as written: "detect", "kwargs", or None (render only;
    also for an unknown version). WINDOWS says where each fact was read."""
    if not version:
        return None
    v = parse_version(version)
    for first, end, kind, _source in WINDOWS:
        if first <= v < end:
            return kind
    return None


def cached_from(kind: str) -> str:
    """The first vLLM release that caches the template work ``kind`` ("detect" or "kwargs"), e.g. "0.11.1"."""
    end = next(end for _first, end, k, _source in WINDOWS if k == kind)
    return ".".join(str(x) for x in end)
