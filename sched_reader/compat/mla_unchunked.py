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

After the forced window, V0 still defaults chunked prefill off for MLA models (``mla_v0_default_unchunked``):
the same unchunked scheduling, but only when the user did not pass ``--enable-chunked-prefill``.
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


# V0 default (not forced): once MLA gained a chunked-prefill path on CUDA (PR #12639), V0 still left chunked
# prefill off for MLA models unless the user asked for it. vLLM 0.8.0 .. 0.10.1.1 vllm/engine/arg_utils.py
# ``EngineArgs._set_default_args_v0``: "Chunked prefill not supported for Multimodal or MLA in V0." ->
# ``if model_config.is_multimodal_model or model_config.use_mla: self.enable_chunked_prefill = False``
# (read in the 0.8.0, 0.8.4, 0.9.2 and 0.10.1.1 wheels), ahead of the long-context (> 32K) rule that turns
# it on for other models; SchedulerConfig then sets max_num_batched_tokens = max(max_model_len, 2048).
# The 0.7.4 nightlies (after PR #12639, before 0.8.0) are taken to follow the same default: the PR itself says
# "Need to do more benchmarking to see if this makes sense to be on by default in V0"
# (github.com/vllm-project/vllm/pull/12639), and dstack's 0.7.4.dev181 DeepSeek-R1 run without the flag
# (github.com/dstackai/benchmarks, Deepseek-R1/raw_data/online_results.csv, 8x H200) shows the whole-step
# prefill signature: p99 ITL within 3% of the mean at concurrency 16 and 32 (no decode step ever carries a
# prefill chunk) and a TTFT standard deviation of 11 ms at concurrency 4.
V0_DEFAULT_WINDOW: tuple[tuple[int, int, int], tuple[int, int, int], str] = (
    (0, 7, 4), (0, 11, 0),
    "vLLM V0 leaves chunked prefill off for MLA models unless --enable-chunked-prefill is given "
    "(vllm/engine/arg_utils.py _set_default_args_v0, 0.8.0 .. 0.10.1.1: 'Chunked prefill not supported for "
    "Multimodal or MLA in V0'; 0.7.4 nightlies after PR #12639 assumed alike)")


def mla_v0_default_unchunked(version: str | None, engine: str | None) -> str | None:
    """The source line when vLLM ``version`` (as written) running the V0 ``engine`` ("v0"/"v1") leaves
    chunked prefill off by default for MLA models (the user did not pass the flag); None otherwise. Releases
    inside the forced window (:func:`mla_forces_unchunked`) are the caller's to check first."""
    if str(engine or "").lower() != "v0":
        return None
    first, end, source = V0_DEFAULT_WINDOW
    return source if first <= parse_version(version) < end else None
