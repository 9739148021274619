"""vLLM releases that switch chunked prefill and prefix caching off for MLA models.

MLA models (DeepSeek-V2/V3/R1, Kimi-K2: ``kv_lora_rank`` in the model config) had no chunked-prefill
attention path in early 2025. vLLM's ``VllmConfig.__post_init__`` then forced, over any flag given:

    enable_chunked_prefill = False, enable_prefix_caching = False,
    max_num_batched_tokens = max(max_model_len, 2048)        (tokens)

and logged "MLA is enabled; forcing chunked prefill and prefix caching to be disabled." With chunked
prefill off the V0 scheduler runs waiting prompts in prefill-only steps that pause every decode.

Each window is ``(platform vendor, first release, first release without it, source)``; releases compare
on the first three numbers of the version as written, so a 0.7.4 nightly (``0.7.4.dev181``) is outside
the CUDA window while AMD's ``0.7.3.dev138`` staging build is inside both.
"""

from __future__ import annotations

from sched_reader.versions import parse_version

WINDOWS: tuple[tuple[str, tuple[int, int, int], tuple[int, int, int], str], ...] = (
    ("nvidia", (0, 7, 1), (0, 7, 4),
     "added by vLLM PR #12642 (merged 2025-02-01, github.com/vllm-project/vllm/pull/12642; log line in "
     "PR #12638); lifted on CUDA by PR #12639 'MLA with chunked prefill' (commit 288cc6c, 2025-02-21), "
     "after v0.7.3's source commit 34aad51 (2025-02-20)"),
    ("amd", (0, 7, 1), (0, 8, 0),
     "ROCm keeps it after CUDA: a v0.7.4.dev4 ROCm start-up logs 'MLA is enabled on a non-cuda platform; "
     "forcing chunked prefill and prefix caching to be disabled' (github.com/ROCm/vllm/issues/457); "
     "assumed lifted in 0.8.0, whose check names only non-GPU platforms (CPU, XPU, TPU)"),
)
UNCHUNKED_MNBT_FLOOR = 2048  # tokens: vLLM's DEFAULT_MAX_NUM_BATCHED_TOKENS


def mla_forces_unchunked(version: str | None, vendor: str | None) -> str | None:
    """The source line when vLLM ``version`` (as written) on a ``vendor`` GPU forces chunked prefill off
    for MLA models; None otherwise."""
    v = parse_version(version)
    vendor = (vendor or "nvidia").lower()
    for ven, first, end, source in WINDOWS:
        if ven in vendor and first <= v < end:
            return source
    return None
