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

Releases compare on the first three numbers of the version as written (``0.11.0rc2`` is 0.11.0). An AMD dated
image (``0.9.1+rocm.20250715``, compat/rocm_builds.py) is fork code newer than the release it names: it has a
fix when its code date is on or after the fix's merge date (``FIXED_MERGED``).
"""

from __future__ import annotations

from sched_reader.compat.rocm_builds import code_date
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


# work kind -> (merge date of the upstream fix, where it was read)
FIXED_MERGED: dict[str, tuple[str, str]] = {
    "detect": ("2025-06-27", "vLLM commit aa0dc77ef '[Perf] Improved perf for resolve_chat_template_content_format "
                             "(#20065)', committed 2025-06-27 (git history of github.com/ROCm/vllm, which carries it)"),
}


def chat_template_work(version: str | None) -> str | None:
    """The per-request template work of vLLM ``version`` as written: "detect", "kwargs", or None (render only;
    also for an unknown version, and for an AMD fork build whose code has the fix). WINDOWS and FIXED_MERGED say
    where each fact was read."""
    if not version:
        return None
    v = parse_version(version)
    for first, end, kind, _source in WINDOWS:
        if first <= v < end:
            return None if _fork_has_fix(version, kind) else kind
    return None


def template_release(spec) -> str | None:
    """The version string whose template work applies to an engine spec: the version as requested when it names an
    AMD fork build (``0.9.1+rocm.20250715``: its code date decides), else the resolved release."""
    requested = getattr(spec, "vllm_version_requested", None)
    return requested if code_date(requested) else getattr(spec, "vllm_version", None)


def _fork_has_fix(version: str, kind: str) -> bool:
    """Whether ``version`` is an AMD fork build (``+rocm.<date>``) whose code already carries the fix of ``kind``."""
    build = code_date(version)
    return bool(build) and kind in FIXED_MERGED and build >= FIXED_MERGED[kind][0]


def cached_from(kind: str) -> str:
    """The first vLLM release that caches the template work ``kind`` ("detect" or "kwargs"), e.g. "0.11.1"."""
    end = next(end for _first, end, k, _source in WINDOWS if k == kind)
    return ".".join(str(x) for x in end)
