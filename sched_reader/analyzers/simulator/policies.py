"""Scheduling policies: the lesson's four (naive, static, continuous, chunked) and ``vllm`` (the release's own).

Every policy except ``static`` is vLLM's iteration-level scheduler with different knobs, expressed as
:class:`SchedParams`; ``static`` (pad and wait) has its own engine (:mod:`.static`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sched_reader.models.cost.speculative import DEFAULT_ACCEPTANCE
from sched_reader.versions import parse_version

POLICIES = ("naive", "static", "continuous", "chunked", "vllm")
LESSON_CHUNK_TOKENS = 512      # the lesson's prefill chunk size
STATIC_WINDOW_S = 0.010        # the lesson's batching window (10 ms)
UNLIMITED = 1 << 40


@dataclass(frozen=True)
class SchedParams:
    """Knobs of one simulated scheduler. Token counts in tokens, blocks in KV blocks.

    ``engine`` "v1": vLLM V1 (running requests first, then waiting; mixed prefill/decode steps).
    ``engine`` "v0" without chunking: a step is prefill-only when a waiting request can be admitted,
    decode-only otherwise; V0 keeps ``watermark_blocks`` free when admitting.
    ``spec_tokens``/``spec_accepted``: speculative decoding, draft tokens per step and the expected
    number accepted (each decode step of a request commits ``1 + accepted`` tokens on average);
    ``spec_method`` (ngram, eagle, eagle3, mtp, medusa, draft_model), ``spec_acceptance`` the per-token
    acceptance rate, ``spec_lookahead`` the KV slots vLLM reserves beyond the scheduled tokens of a
    RUNNING request (``num_lookahead_tokens``: k for EAGLE-style drafters, else 0).
    ``num_scheduler_steps``: V0 multi-step scheduling (vLLM 0.6-0.10 ``--num-scheduler-steps``, without
    chunked prefill): each scheduled batch runs that many forward passes before the scheduler runs again
    (see :meth:`~.core.SimCore.run_multi_step`). ``multi_step_stream_outputs``: whether the engine streams each
    pass's tokens as they are processed (``--multi-step-stream-outputs``, default True from vLLM 0.6.3) or a
    round's tokens together after its last pass (0.6.0-0.6.2).
    ``max_num_partial_prefills``: recorded only; vLLM V1's scheduler does not cap concurrent partial
    prefills (its only effect is the default ``long_prefill_token_threshold``, applied by :func:`params_for`).
    ``async_scheduling``: vLLM V1's asynchronous scheduling (``--async-scheduling``, on by default from 0.14 where
    supported). The step cost already overlaps the host work with the GPU's (``IterationCostModel.async_overlap``);
    here it means the one-step admission lag: the engine core schedules step N+1 while step N runs and reads new
    requests only between loop iterations, so the step that starts when step N ends was decided when step N
    started, from the requests that had arrived by then (see :mod:`.core`, ``SimCore.admission_cutoff``).
    """

    block_size: int
    num_blocks: int
    max_num_seqs: int
    max_num_batched_tokens: int
    enable_chunked_prefill: bool = True
    long_prefill_token_threshold: int = 0
    enable_prefix_caching: bool = False
    engine: str = "v1"
    watermark_blocks: int = 0
    max_model_len: int = UNLIMITED
    spec_tokens: int = 0
    spec_accepted: float = 0.0
    spec_method: str = ""
    spec_acceptance: float = 0.0
    spec_lookahead: int = 0
    max_num_partial_prefills: int = 1
    num_scheduler_steps: int = 1
    multi_step_stream_outputs: bool = True
    async_scheduling: bool = False
    policy: str = "vllm"
    static_window_s: float = STATIC_WINDOW_S


# vLLM release whose EngineArgs.multi_step_stream_outputs defaults to True (engine/arg_utils.py: absent in 0.6.0
# and 0.6.1, False in 0.6.2, True in 0.6.3 and 0.6.4; read in those wheels): a multi-step round's passes each
# create RequestOutputs (LLMEngine._process_model_outputs), instead of the round's last pass only
MULTI_STEP_STREAM_OUTPUTS_FROM = (0, 6, 3)


def multi_step_streams_each_pass(release: str | None) -> bool:
    """Whether vLLM ``release`` streams a multi-step round's tokens pass by pass (True from 0.6.3 and for an
    unknown release) rather than together after the round's last pass."""
    return not release or parse_version(str(release)) >= MULTI_STEP_STREAM_OUTPUTS_FROM


def _get(cfg: Any, name: str, default: Any) -> Any:
    v = cfg.get(name, default) if isinstance(cfg, dict) else getattr(cfg, name, default)
    return default if v is None else v


def expected_accepted(num_spec: int, acceptance_rate: float) -> float:
    """Expected accepted draft tokens per step when each draft token is accepted with probability a,
    independently, and acceptance stops at the first rejection: a + a^2 + ... + a^k."""
    return sum(acceptance_rate ** i for i in range(1, num_spec + 1))


def params_for(policy: str, cfg: Any, num_blocks: int, *, chunk_size: int = LESSON_CHUNK_TOKENS,
               spec_acceptance: float | None = None) -> SchedParams:
    """SchedParams of ``policy`` for an EffectiveConfig-like ``cfg`` (object or dict) and a KV budget.

    ``spec_acceptance``: per-token draft acceptance rate; default: the method's
    ``sched_reader.models.cost.speculative.DEFAULT_ACCEPTANCE``.
    ``async_scheduling`` is taken from ``cfg`` for the ``vllm`` policy on the V1 engine only (V0 has no batch
    queue; the lesson's policies are synchronous schedulers).
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
    bs = int(_get(cfg, "block_size", 16))
    seqs = int(_get(cfg, "max_num_seqs", 256))
    mnbt = int(_get(cfg, "max_num_batched_tokens", 8192))
    mml = int(_get(cfg, "max_model_len", UNLIMITED))
    base = SchedParams(block_size=bs, num_blocks=int(num_blocks), max_num_seqs=seqs,
                       max_num_batched_tokens=mnbt, max_model_len=mml, policy=policy)
    whole = max(mnbt, mml if mml < UNLIMITED else mnbt)
    if policy == "naive":
        return replace(base, max_num_seqs=1, max_num_batched_tokens=UNLIMITED, enable_chunked_prefill=False)
    if policy in ("continuous", "static"):
        return replace(base, max_num_batched_tokens=whole if policy == "continuous" else UNLIMITED,
                       enable_chunked_prefill=False)
    if policy == "chunked":
        return replace(base, max_num_batched_tokens=int(chunk_size), enable_chunked_prefill=True)
    engine = str(_get(cfg, "engine", "v1"))
    chunked = bool(_get(cfg, "enable_chunked_prefill", True))
    spec = _get(cfg, "speculative", None) or {}
    k = int(spec.get("num_speculative_tokens", 0) or 0) if isinstance(spec, dict) else 0
    method = str(spec.get("method") or "draft_model").lower() if k else ""
    acc = 0.0
    if k:
        acc = float(spec_acceptance) if spec_acceptance is not None else \
            DEFAULT_ACCEPTANCE.get(method, DEFAULT_ACCEPTANCE["draft_model"])[0]
    # vllm/config/scheduler.py: with concurrent partial prefills the long-prefill threshold defaults
    # to 4% of max_model_len; the V1 scheduler itself only applies the threshold
    thr = int(_get(cfg, "long_prefill_token_threshold", 0))
    mnpp = int(_get(cfg, "max_num_partial_prefills", 1))
    if mnpp > 1 and thr == 0 and mml < UNLIMITED:
        thr = int(mml * 0.04)
    return replace(
        base, engine=engine, enable_chunked_prefill=chunked,
        max_num_batched_tokens=mnbt if chunked else max(mnbt, whole),
        long_prefill_token_threshold=thr,
        enable_prefix_caching=bool(_get(cfg, "enable_prefix_caching", False)),
        watermark_blocks=int(0.01 * num_blocks) if engine == "v0" else 0,
        spec_tokens=k, spec_accepted=expected_accepted(k, acc) if k else 0.0,
        spec_method=method, spec_acceptance=acc,
        spec_lookahead=k if method in ("eagle", "eagle3", "mtp") else 0,
        max_num_partial_prefills=mnpp,
        num_scheduler_steps=max(1, int(_get(cfg, "num_scheduler_steps", 1) or 1))
        if engine == "v0" and not chunked else 1,
        multi_step_stream_outputs=multi_step_streams_each_pass(_get(cfg, "vllm_version", None)),
        async_scheduling=engine == "v1" and bool(_get(cfg, "async_scheduling", False)),
    )
