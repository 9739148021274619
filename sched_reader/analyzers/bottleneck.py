"""Which of vLLM's three scheduling defaults binds first, and what to change.

The three defaults (the lesson's framing):

* **PagedAttention's KV-block budget** — how many tokens of KV cache exist (``kv_tokens``);
  concurrency is capped at ``kv_tokens / tokens_per_sequence`` (rounded to whole blocks).
* **Continuous batching's batch cap** — ``--max-num-seqs``: running sequences per iteration.
* **Chunked prefill's token budget** — ``--max-num-batched-tokens``: tokens per iteration; a prompt
  longer than the budget needs several iterations (TTFT), and each iteration that carries a prefill
  chunk is slower for every decoding sequence (ITL).

``analyze`` takes plain numbers (so it is testable by hand) and returns a ``Verdict`` whose every
figure has its unit and formula. Step times come from a callable ``step_time(num_decode,
decode_context_sum, prefill_tokens, prefill_attn_pairs) -> seconds`` (the roofline cost model).
"""

import math
from typing import Any, Callable, Literal

from pydantic import Field

from sched_reader.data_model import DataModel, new_list

Bottleneck = Literal[
    "does_not_start",
    "kv_cache_blocks",
    "max_num_seqs",
    "token_budget",
    "prefill_stall",
    "workload_concurrency",
]

# A whole-prompt prefill step this many times the decode-only step is an inter-token-latency problem: every
# running decode waits that step (vLLM V0 without chunked prefill runs prefill-only steps).
STALL_RATIO = 4.0

StepTime = Callable[[int, int, int, float], float]


class Recommendation(DataModel):
    """One flag change: ``flag`` from ``current`` to ``suggested``, and why (with the figure)."""

    flag: str
    current: str
    suggested: str
    why: str
    effect: dict[str, Any] | None = None   # predicted metrics before -> after (analyzers.whatif), when evaluated


class MemoryBudget(DataModel):
    """One GPU's memory as vLLM's profiler splits it (bytes), for start-up advice."""

    total_bytes: int
    requested_bytes: int          # total x gpu_memory_utilization
    weights_bytes: int
    other_bytes: int              # activation peak + non-torch (+ CUDA graphs where subtracted)
    bytes_per_token: int          # KV bytes per token per GPU
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    weights_16bit: bool = True    # an FP8 checkpoint would halve the weights
    kv_split_limit: int = 1       # how many times more TP still splits each token's KV (GQA: kv_heads / tp; MLA: 1)

    def kv_tokens_at(self, gmu: float | None = None, tp_factor: int = 1, weights_scale: float = 1.0) -> int:
        """KV tokens per replica at another gpu_memory_utilization, at ``tp_factor`` x the tensor parallelism
        (weights split ``tp_factor`` ways; each token's KV too, up to ``kv_split_limit``), and/or with the
        weights scaled (0.5 for an FP8 checkpoint)."""
        requested = self.requested_bytes if gmu is None else self.total_bytes * gmu
        free = requested - self.weights_bytes * weights_scale / tp_factor - self.other_bytes
        per_token = self.bytes_per_token / min(tp_factor, max(1, self.kv_split_limit))
        return max(0, int(free // per_token)) if per_token else 0


class Figure(DataModel):
    """A number the verdict relies on, with its unit and how it was computed."""

    name: str
    value: float
    unit: str
    formula: str


class Verdict(DataModel):
    """The bottleneck among the three defaults, with the figures and the recommended changes."""

    bottleneck: Bottleneck
    summary: str
    concurrency_limit: int                      # sequences that can run at once, after all three limits
    limits: dict[str, int]                      # kv_cache_blocks / max_num_seqs / workload_concurrency
    figures: list[Figure] = Field(default_factory=new_list)
    recommendations: list[Recommendation] = Field(default_factory=new_list)


def blocks_for(tokens: int, block_size: int) -> int:
    """Whole KV blocks a sequence of ``tokens`` occupies."""
    return -(-tokens // block_size)


def analyze(
    *,
    kv_tokens: int,
    block_size: int,
    max_model_len: int,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    chunked_prefill: bool,
    mean_input_len: float,
    mean_output_len: float,
    workload_concurrency: int | None,
    fits: bool,
    start_error: str | None = None,
    kv_cache_dtype: str = "auto",
    fp8_kv_supported: bool = True,
    gpu_memory_utilization: float = 0.9,
    tensor_parallel_size: int = 1,
    memory: MemoryBudget | None = None,
    shares_gpu: bool = False,
    step_time: StepTime | None = None,
    itl_slo_ms: float | None = None,
    long_prompt_len: int | None = None,
    long_prompt_share: float | None = None,
    itl_p99_ms: float | None = None,
    replicas: int = 1,
) -> Verdict:
    """Decide which default binds for this workload and suggest flag values.

    ``workload_concurrency`` is the number of requests the workload keeps in flight (``None`` =
    unbounded, e.g. ``--request-rate inf``). Lengths are tokens; times seconds unless named ``_ms``.
    ``replicas``: data-parallel engines; KV tokens, ``max_num_seqs`` and ``workload_concurrency`` are then
    per engine (each has its own cache and scheduler) and the texts say so.
    """
    figures: list[Figure] = []
    recs: list[Recommendation] = []
    if not fits:
        return Verdict(
            bottleneck="does_not_start",
            summary=start_error or "vLLM will not start with this configuration",
            concurrency_limit=0,
            limits={},
            recommendations=start_fixes(max_model_len, block_size, kv_cache_dtype, fp8_kv_supported,
                                        gpu_memory_utilization, memory) if memory is not None else [],
        )

    # Average tokens a running sequence holds: its prompt plus half its output on average, rounded up to
    # whole blocks at the end of its life (the peak it must be able to reach).
    seq_peak_tokens = max(1, int(math.ceil(mean_input_len + mean_output_len)))
    seq_blocks = blocks_for(seq_peak_tokens, block_size)
    total_blocks = kv_tokens // block_size
    kv_limit = max(0, total_blocks // seq_blocks)
    figures.append(Figure(
        name="sequences the KV cache holds at their peak length",
        value=kv_limit,
        unit="sequences",
        formula=f"floor({total_blocks} blocks / ceil(({mean_input_len:.0f} + {mean_output_len:.0f}) / {block_size}))",
    ))
    limits = {"kv_cache_blocks": kv_limit, "max_num_seqs": max_num_seqs}
    wl = workload_concurrency if workload_concurrency is not None else 10**9
    if workload_concurrency is not None:
        limits["workload_concurrency"] = workload_concurrency
    if replicas > 1:
        limits["data_parallel_size"] = replicas
    limit = min(kv_limit, max_num_seqs, wl)

    # Token budget: iterations a prompt needs, and the ITL cost of a step carrying a full chunk.
    prefill_iters = math.ceil(mean_input_len / max_num_batched_tokens) if chunked_prefill else 1
    figures.append(Figure(
        name="iterations to prefill a mean prompt",
        value=prefill_iters,
        unit="iterations",
        formula=(f"ceil({mean_input_len:.0f} / max_num_batched_tokens {max_num_batched_tokens})"
                 if chunked_prefill else "1 (chunked prefill off: whole prompt in one step)"),
    ))
    itl_spike = None
    if step_time is not None and limit > 0:
        ctx = int(limit * (mean_input_len + mean_output_len / 2))
        decode_only = step_time(limit, ctx, 0, 0.0)
        chunk = min(max_num_batched_tokens - min(limit, max_num_batched_tokens), int(mean_input_len)) \
            if chunked_prefill else int(mean_input_len)
        chunk = max(chunk, 0)
        mixed = step_time(limit, ctx, chunk, chunk * chunk / 2.0)
        itl_spike = mixed / decode_only if decode_only > 0 else None
        figures.append(Figure(name="decode-only step time", value=round(decode_only * 1e3, 3), unit="ms",
                              formula=f"roofline step: {limit} decodes, {ctx} context tokens"))
        figures.append(Figure(name="step time with a prefill chunk", value=round(mixed * 1e3, 3), unit="ms",
                              formula=f"roofline step: {limit} decodes + a {chunk}-token prefill chunk"))

    # Chunked prefill off: the longest prompts (99th percentile) are prefilled in one step each.
    stall = None
    if not chunked_prefill and step_time is not None and limit > 1 and long_prompt_len:
        lp = int(long_prompt_len)
        ctx = int(limit * (mean_input_len + mean_output_len / 2))
        decode_only = step_time(limit, ctx, 0, 0.0)
        whole = step_time(0, 0, lp, lp * lp / 2.0)
        if decode_only > 0:
            stall = (lp, whole, decode_only)
            figures.append(Figure(name="step prefilling a long prompt whole", value=round(whole * 1e3, 3), unit="ms",
                                  formula=f"roofline step: a {lp}-token prompt (99th percentile) in one step"))

    if kv_limit <= min(max_num_seqs, wl) and kv_limit < max_num_seqs:
        bottleneck: Bottleneck = "kv_cache_blocks"
        need_tokens = min(max_num_seqs, wl) * seq_blocks * block_size
        summary = (
            f"PagedAttention's KV budget binds first: {kv_tokens:,} tokens hold {kv_limit} sequences of "
            f"~{seq_peak_tokens:,} tokens, below --max-num-seqs {max_num_seqs}; extra requests wait or are preempted"
        )
        recs.extend(_kv_fixes(kv_tokens, need_tokens, kv_cache_dtype, fp8_kv_supported, gpu_memory_utilization,
                              tensor_parallel_size, gmu_can_rise=not shares_gpu))
    elif max_num_seqs < min(kv_limit, wl):
        bottleneck = "max_num_seqs"
        target = min(kv_limit, wl)
        summary = (
            f"continuous batching's cap binds first: --max-num-seqs {max_num_seqs} while the KV cache holds "
            f"{kv_limit} sequences of ~{seq_peak_tokens:,} tokens"
        )
        recs.append(Recommendation(
            flag="--max-num-seqs", current=str(max_num_seqs), suggested=str(_round_down_pow2ish(target)),
            why=(f"the KV cache holds {kv_limit} sequences at their peak length"
                 + (f" and the workload keeps {wl} in flight" if wl < kv_limit else "")
                 + "; decode steps can batch that many"),
        ))
    elif stall is not None and stall[1] >= STALL_RATIO * stall[2] and wl > 1:
        bottleneck = "prefill_stall"
        lp, whole, dec = stall
        seen = f"; simulated ITL p99 {itl_p99_ms:,.0f} ms" if itl_p99_ms is not None else ""
        share = f" ({long_prompt_share:.0%} of requests are long)" if long_prompt_share else ""
        summary = (
            f"chunked prefill is off: a {lp:,}-token prompt{share} is prefilled in one step of {whole * 1e3:,.0f} ms "
            f"while every running decode waits (decode step {dec * 1e3:,.1f} ms{seen}): inter-token latency "
            "spikes, not KV capacity, limit this workload"
        )
        recs.append(Recommendation(
            flag="--enable-chunked-prefill", current="off", suggested="on",
            why=("long prompts are then prefilled in token-budget chunks mixed with the running decodes, so no "
                 "step stalls them for a whole prompt"),
        ))
    elif chunked_prefill and prefill_iters > 1 and mean_input_len > 2 * max_num_batched_tokens:
        bottleneck = "token_budget"
        summary = (
            f"chunked prefill's token budget binds: a {mean_input_len:.0f}-token prompt needs {prefill_iters} "
            f"iterations of --max-num-batched-tokens {max_num_batched_tokens}"
        )
        recs.append(Recommendation(
            flag="--max-num-batched-tokens", current=str(max_num_batched_tokens),
            suggested=str(min(_next_pow2(int(mean_input_len)), 16384)),
            why="fewer prefill iterations per prompt cut TTFT; ITL of running decodes rises with the chunk size",
        ))
    else:
        bottleneck = "workload_concurrency"
        summary = (
            f"none of the three defaults binds: the workload keeps {workload_concurrency} requests in flight"
            f"{' per DP engine' if replicas > 1 else ''}, "
            f"below --max-num-seqs {max_num_seqs} and the KV capacity of {kv_limit} sequences"
        )
    if itl_spike is not None and itl_slo_ms is not None and figures:
        mixed_ms = figures[-1].value
        if mixed_ms > itl_slo_ms and chunked_prefill:
            recs.append(Recommendation(
                flag="--max-num-batched-tokens", current=str(max_num_batched_tokens),
                suggested=str(max(512, max_num_batched_tokens // 2)),
                why=f"a step carrying a prefill chunk takes {mixed_ms:.1f} ms > ITL target {itl_slo_ms:.1f} ms",
            ))
    return Verdict(
        bottleneck=bottleneck,
        summary=summary,
        concurrency_limit=int(min(limit, 10**9)),
        limits=limits,
        figures=figures,
        recommendations=recs,
    )


def _kv_fixes(kv_tokens: int, need_tokens: int, kv_cache_dtype: str, fp8_ok: bool, gmu: float,
              tp: int, gmu_can_rise: bool = True) -> list[Recommendation]:
    recs: list[Recommendation] = []
    if kv_cache_dtype == "auto" and fp8_ok:
        recs.append(Recommendation(
            flag="--kv-cache-dtype", current="auto", suggested="fp8",
            why=f"1 byte per element instead of 2 doubles the KV tokens to ~{2 * kv_tokens:,} (need {need_tokens:,})",
        ))
    if gmu < 0.95 and gmu_can_rise:
        recs.append(Recommendation(
            flag="--gpu-memory-utilization", current=f"{gmu:.2f}", suggested="0.95",
            why="more of each GPU's memory goes to KV blocks (keep headroom if other processes share the GPU)",
        ))
    recs.append(Recommendation(
        flag="--tensor-parallel-size", current=str(tp), suggested=str(2 * tp),
        why="weights split across twice the GPUs free memory for KV blocks on each",
    ))
    return recs


def start_fixes(max_model_len: int, block_size: int, kv_cache_dtype: str, fp8_ok: bool, gmu: float,
                mem: MemoryBudget) -> list[Recommendation]:
    """Only the changes that make vLLM start, each checked against the memory figures.

    Weights that do not load need more GPUs per replica (or smaller weights); a KV cache shorter than one
    max-model-len sequence needs a shorter max-model-len, or more KV memory (fp8 KV, a higher
    gpu-memory-utilization, more tensor parallelism) only when that closes the gap.
    """
    recs: list[Recommendation] = []
    tp, pp = mem.tensor_parallel_size, mem.pipeline_parallel_size
    need = max_model_len
    if mem.kv_tokens_at() <= 0:
        for factor in (2, 4, 8, 16):
            if mem.kv_tokens_at(tp_factor=factor) >= need:
                recs.append(Recommendation(
                    flag="--tensor-parallel-size", current=str(tp), suggested=str(tp * factor),
                    why=(f"weights take {mem.weights_bytes / 2**30:.1f} GiB per GPU against "
                         f"{mem.requested_bytes / 2**30:.1f} GiB requested; at TP {tp * factor} they take "
                         f"{mem.weights_bytes / factor / 2**30:.1f} GiB and leave room for a {need:,}-token sequence"
                         + (" (or raise --pipeline-parallel-size)" if pp == 1 else "")),
                ))
                break
        if mem.weights_16bit and fp8_ok and mem.kv_tokens_at(weights_scale=0.5) >= need:
            recs.append(Recommendation(
                flag="model", current="16-bit checkpoint", suggested="an FP8 checkpoint (or --quantization fp8)",
                why="1-byte weights halve the per-GPU weight memory, which then fits",
            ))
        return recs
    kv_tokens = mem.kv_tokens_at()
    fit = (kv_tokens // block_size) * block_size
    if fit > 0:
        recs.append(Recommendation(
            flag="--max-model-len", current=str(max_model_len), suggested=str(fit),
            why=f"the KV cache holds {kv_tokens:,} tokens; one max-model-len sequence must fit",
        ))
    if kv_cache_dtype == "auto" and fp8_ok and 2 * kv_tokens >= need:
        recs.append(Recommendation(
            flag="--kv-cache-dtype", current="auto", suggested="fp8",
            why=f"1-byte KV doubles the cache to ~{2 * kv_tokens:,} tokens, enough for {need:,}",
        ))
    if gmu < 0.95 and mem.kv_tokens_at(0.95) >= need:
        recs.append(Recommendation(
            flag="--gpu-memory-utilization", current=f"{gmu:.2f}", suggested="0.95",
            why=f"gives ~{mem.kv_tokens_at(0.95):,} KV tokens, enough for {need:,} (if nothing else shares the GPU)",
        ))
    if mem.kv_tokens_at(tp_factor=2) >= need:
        recs.append(Recommendation(
            flag="--tensor-parallel-size", current=str(tp), suggested=str(2 * tp),
            why=f"half the weights (and KV heads) per GPU leave room for ~{mem.kv_tokens_at(tp_factor=2):,} KV tokens",
        ))
    return recs


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _round_down_pow2ish(n: int) -> int:
    """A round flag value at or below ``n``: multiples of 16 above 64, else ``n``."""
    if n <= 64:
        return max(1, n)
    return n - n % 16
