"""Named efficiency factors and fixed per-step costs of the roofline cost model.

Every factor is the same for every model on a GPU; they are the only free constants of the cost model.
Dense GEMMs, fused MoE and attention use NVIDIA's measured vLLM kernel tables instead where the GPU and
format were measured (models/cost/kernels.py); the GEMM and attention factors here are their fallback.
Each one says where its value comes from. "Assumed" means a round engineering value inside the range
the cited evidence gives; ``benchmarks/throughput_accuracy.py`` measures how well the whole model,
with these values, reproduces published vLLM benchmarks (the values were NOT fitted row by row).

Units: fractions are dimensionless (0-1]; times are seconds; bandwidths in bytes/second.

Per GPU architecture family (AMD CDNA3, NVIDIA Ada, ...), ``efficiency_for`` replaces the fallback
fractions (GEMM by compute dtype, attention, memory streaming, paged-KV reads) with the family's
measured values from ``models/data/fallback_efficiency.yaml``; each value there carries its public
measurement and URL, and ``sources_for`` reports which applied. Families without an entry (Hopper,
...) keep the defaults below unchanged; Blackwell and Ampere have entries only for two measured GeForce
cards (RTX 5090, RTX 3090), so their other GPUs keep them too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sched_reader.models import data_files
from sched_reader.models.gpu import GPU


@dataclass(frozen=True)
class Efficiency:
    """Fractions of vendor peak that vLLM's kernels reach, and fixed costs per scheduler step.

    Attributes (see ``SOURCES`` for the origin of each default):
      gemm_compute: fraction of dense tensor-core peak reached by large GEMMs (projections, MLP, experts).
      attention_compute: fraction of dense 16-bit peak reached by FlashAttention-style prefill kernels.
      memory_bandwidth: fraction of peak HBM bandwidth reached when streaming weights and activations.
      kv_read_bandwidth: fraction of peak HBM bandwidth reached by decode attention reading the paged
        KV cache (scattered 16-token blocks per sequence and KV head).
      link_bandwidth: fraction of the per-direction NVLink/PCIe bandwidth an all-reduce reaches (bus bw).
      allreduce_latency_s: fixed latency of one small all-reduce (seconds).
      p2p_latency_s: fixed latency of one pipeline-parallel activation send (seconds).
      layer_overhead_graph_s: per decoder layer per step, time of the small latency-bound kernels
        (norms, rotary, activation, residual, quantize) when CUDA graphs are used.
      layer_overhead_eager_s: the same with ``enforce_eager`` (each op pays a host launch).
      moe_routing_overhead_s: per MoE layer per step, the router's top-k selection kernel, which the
        measured fused-MoE tables leave out (CUDA graphs).
      step_cpu_s: host time per engine step (scheduler, input preparation, sampler bookkeeping,
        output processing) independent of batch size.
      step_cpu_per_seq_s: host time per scheduled sequence per step (V1 engine).
      step_cpu_per_seq_v0_s: the same for the V0 engine (Python sequence groups, block manager,
        sampler output and detokenization on the engine's own thread).
    """

    gemm_compute: float = 0.60
    attention_compute: float = 0.50
    memory_bandwidth: float = 0.80
    kv_read_bandwidth: float = 0.50
    link_bandwidth: float = 0.70
    allreduce_latency_s: float = 10e-6
    p2p_latency_s: float = 20e-6
    layer_overhead_graph_s: float = 12e-6
    moe_routing_overhead_s: float = 2e-6
    layer_overhead_eager_s: float = 60e-6
    step_cpu_s: float = 0.5e-3
    step_cpu_per_seq_s: float = 45e-6
    step_cpu_per_seq_v0_s: float = 70e-6
    notes: tuple[str, ...] = field(default_factory=tuple)
    # per compute dtype ("bf16", "fp8", ...) fractions of that dtype's dense peak; others use gemm_compute
    gemm_compute_by_dtype: tuple[tuple[str, float], ...] = ()
    family: str = ""              # the fallback_efficiency.yaml family that set some factors ("" = defaults)
    family_set: tuple[str, ...] = ()   # the factors that family set

    def with_overrides(self, **kw: float) -> "Efficiency":
        """A copy with some factors replaced (for what-if analysis and tests)."""
        return replace(self, **kw)

    def gemm_fraction(self, dtype: str) -> float:
        """Fraction of the dense ``dtype`` peak large GEMMs reach (``gemm_compute`` unless given per dtype)."""
        for key, value in self.gemm_compute_by_dtype:
            if key == dtype:
                return value
        return self.gemm_compute

    def gemm_label(self, dtypes) -> str:
        """``gemm_compute`` as --explain shows it: ``0.60``, or ``bf16 0.42, fp8 0.52`` per dtype used."""
        if not self.gemm_compute_by_dtype:
            return f"{self.gemm_compute:.2f}"
        return ", ".join(f"{d} {self.gemm_fraction(d):.2f}" for d in sorted(set(dtypes)))

    def tag(self, *terms: str) -> str:
        """`` (<family> family values, ...)`` when the family set any of ``terms``, else ``""``."""
        if self.family and any(t in self.family_set for t in terms):
            return f" ({self.family} family values, fallback_efficiency.yaml)"
        return ""


SOURCES: dict[str, str] = {
    "gemm_compute": (
        "Fallback: used only where no measured kernel table applies (models/cost/kernels.py; the term's "
        "source in --explain / JSON says which). "
        "0.60 of the vendor dense peak. NVIDIA's dense BF16 peak for H100 SXM is 989.5 TFLOPS (catalog "
        "gpus.yaml, nvidia.com/en-us/data-center/h100); isolated large cuBLAS GEMMs reach 600-800 TFLOPS "
        "(0.6-0.8), but vLLM's mixed prefill+decode steps run ragged token counts under sustained power "
        "throttling: the prefill-heavy GPUStack Qwen3-14B/H100 runs (vLLM 0.11, same source as "
        "tests/data/throughput.yaml) imply 0.33-0.40 end to end. 0.60 is the low end of the isolated-GEMM "
        "range; lowered from an assumed 0.70 after benchmarks/throughput_accuracy.py showed every "
        "burst row too fast (one global value, not fitted per row)."
    ),
    "attention_compute": (
        "Fallback: used only where no measured kernel table applies (models/cost/kernels.py; the term's "
        "source in --explain / JSON says which). "
        "0.50: FlashAttention-2 paper (Dao 2023, arXiv:2307.08691) reports 50-73% of A100 peak for the "
        "forward pass; FlashAttention-3 (Shah et al. 2024, arXiv:2407.08608) reports up to 75% on H100. "
        "Causal masking, variable-length chunks and paged KV put vLLM at the low end."
    ),
    "memory_bandwidth": (
        "Elementwise, embedding, sampler and KV-write traffic always; GEMM weight streaming only where no "
        "measured kernel table applies (models/cost/kernels.py; the term's source in --explain / JSON says "
        "which). "
        "Assumed 0.80 of the vendor HBM peak (e.g. 3.35 TB/s on H100 SXM, catalog gpus.yaml): streaming "
        "kernels on HBM3 reach roughly 80-90% of the printed figure; decode GEMV/attention sit at the "
        "low end. Checked against the batch-1 Qwen3-8B TPOT row in tests/data/throughput.yaml."
    ),
    "kv_read_bandwidth": (
        "Fallback: used only where no measured kernel table applies (models/cost/kernels.py; the term's "
        "source in --explain / JSON says which). "
        "0.50 of the vendor HBM peak: Nsight Compute measurements of a production 70B BF16 deployment on "
        "H100 SXM5 report paged KV-cache reads at 1.4 TB/s (42%) and attention K/V access at 1.9 TB/s "
        "(57%) against 2.6-2.8 TB/s (78-84%) for weight loads (https://mikamirai.com/blog/gpu-memory-bandwidth/); "
        "the GPUStack Qwen3-14B/32B H100 runs with a nearly full KV pool imply ~0.49 overall. Weight "
        "streaming keeps memory_bandwidth (0.80), so batch-1 decode is unchanged. Kept where the measured "
        "decode-attention table applies too (it supplies the launch and per-sequence time only): NVIDIA's "
        "aiconfigurator tables reach 0.84-0.95 of peak on >= 1 GiB reads, but every batch there holds "
        "sequences of one length (collector/vllm/collect_attn.py: seq_lens=[input_len + 1] * batch_size), "
        "so every split of the kernel's work ends together; serving batches mix lengths and the longest "
        "sequences set the kernel's time. On the 23-row corpus the table's fraction instead of 0.50 moved "
        "mean TPOT from 26% to 28% median error and its leave-one-source-out range from 25-29% to 26-37%."
    ),
    "link_bandwidth": (
        "Assumed 0.70: NCCL all-reduce bus bandwidth on NVLink4 (450 GB/s per direction per GPU, "
        "catalog gpus.yaml) is typically 300-360 GB/s on 8 GPUs in nccl-tests."
    ),
    "allreduce_latency_s": (
        "Assumed 10 us per all-reduce of a few MB or less: vLLM's custom one-shot/two-shot all-reduce "
        "over NVLink completes small messages in single-digit to low-tens of microseconds. NVIDIA measured the "
        "call alone at 4.4-4.9 us up to 4 KiB on H100/H200 (6.6-7.5 us on B200; models/cost/kernels.py "
        "allreduce_table), but inside a step the ranks reach each call at different times: batch-1 TP rows are "
        "too fast even at 10 us, and the measured figures made three benchmarks worse (collectives.py "
        "ALLREDUCE_IN_STEP), so 10 us stays and --explain shows the measurement beside it."
    ),
    "p2p_latency_s": "Assumed 20 us per pipeline stage hand-off (NCCL send/recv of one activation tensor).",
    "layer_overhead_graph_s": (
        "Assumed 12 us per layer: about 6 small kernels (2 RMSNorm, rotary, activation, residual, "
        "KV-cache write) at ~2 us each, the launch/latency floor of a kernel replayed from a CUDA graph. "
        "Measured: vLLM's static_scaled_fp8_quant on 1-64 tokens takes 1.8-2.6 us per call in a CUDA graph on "
        "B200 (aiconfigurator-core b200_sxm/quantize/vllm/0.24.0/scale_matrix_perf). iteration.py also "
        "charges layer_overhead_graph_s / 6 for each extra small kernel it counts (all-heads QK-norm under TP). "
        "MLA models on a GPU with a measured MLA decode module (H100/H200/B200/L40S) add, per MLA layer, the "
        "module's measured latency beyond its GEMMs and attention launch (iteration._mla_chain_floor; shown as "
        "the mla_module_floor term)."
    ),
    "moe_routing_overhead_s": (
        "2 us per MoE layer: one more small kernel at the same ~2 us graph-replay floor as "
        "layer_overhead_graph_s. NVIDIA's aiconfigurator collector times vLLM's fused_experts() with "
        "top-k weights and ids computed before the timed region (collector/vllm/collect_moe.py, "
        "github.com/ai-dynamo/aiconfigurator: torch.topk + softmax outside run_single_iteration), so the "
        "measured MoE tables (models/cost/kernels.py) already hold the latency of the kernels fused_experts "
        "launches (block alignment/sort, activation quantization, the two grouped GEMMs, activation, "
        "top-k sum) but not vLLM's routing kernel (topk_softmax or grouped top-k) that runs before it; the "
        "router GEMM is its own term (moe_router). Checked, not fitted: on the 42-row corpus of "
        "benchmarks/throughput_accuracy.py it moves TPOT leave-one-source-out from 25.9-29.5% to "
        "24.9-28.5% and leaves dense rows unchanged. DeepSeek-style grouped top-k routing (DeepSeek-V2/V3, Kimi) "
        "runs more kernels per release (9 decomposed up to 0.10.1, 3 in 0.10.2-0.11.0, 1 from 0.11.1 on NVIDIA; "
        "iteration.GROUPED_TOPK_KERNELS): each further one adds layer_overhead_graph_s / 6."
    ),
    "layer_overhead_eager_s": (
        "Assumed 60 us per layer: about 12 PyTorch ops per layer at ~5 us host dispatch + launch each "
        "when enforce_eager disables CUDA graphs."
    ),
    "step_cpu_s": (
        "Assumed 0.5 ms per engine step: vLLM V1 scheduler + input preparation + output processing on the "
        "host; overlapped with GPU work when async scheduling is on."
    ),
    "step_cpu_per_seq_s": (
        "45 us per scheduled sequence per step (V1 engine core). Source: a profile of vLLM 0.27.1's engine "
        "loop over a 128-request workload (openfabric-systems/simllm PR #204 and its controlled-host rerun "
        "#205, github.com/openfabric-systems/simllm/pull/204): Scheduler.schedule costs 12.7 us per running "
        "request and 18.8% of the loop; the executor (a stub there, the GPU here) takes 21.5% and frontend "
        "output processing (the API-server process in serving) 11.4%, so the engine core's host phases "
        "(scheduling, KV block allocation, update_from_output, the rest) are 67.1% of the loop: "
        "12.7 us x 67.1 / 18.8 = 45 us per running request per step. The study flags run-to-run drift "
        "(its certification failed on drift, while the phase shares reproduced within 0.5 points), and "
        "reports the scheduler's cost growing faster than linearly with running requests; a linear 45 us "
        "is the value at its cap. Replaces 20 us (an engineering value raised from 4 us after comparing "
        "with the corpus). Check, not a source: vLLM's own V1 Scheduler.schedule + update_from_output + "
        "output msgpack encoding, timed on CPU in the 0.9.2, 0.10.2 and 0.11.0 wheels at 64-1,024 running "
        "requests (tools/measure_engine_host_cost.py), cost 8-19 us per request per step with no release "
        "resolvable above the shared machine's noise (schedule alone 6-14 us, as the profile's 12.7 us); the "
        "model runner's per-request bookkeeping is not in that figure. At 12 us instead of 45 us the Llama-3.1-8B "
        "bursts of vLLM PR 20308 (0.9.2) move -36/-38 -> -21/-24% in throughput and the simon-mo H200 Llama rows "
        "+27..+31 -> +14..+22% in TPOT, while GPUStack's 0.10.2-0.11.0 bursts move the other way (source median "
        "7.1 / 26.9 / 26.1 -> 12.7 / 34.0 / 31.2%) and all rows 22.9 / 19.4 / 43.7 -> 23.7 / 20.4 / 44.1%: at "
        "~800 running requests 45 us carries ~25 ms per step that those bursts' GPU steps take beyond the "
        "kernel tables (their 7-request Qwen3-32B burst runs decode and mixed steps ~1.5x the model, where "
        "no host term reaches 1 ms), so the value is kept until that GPU-side gap has a cause."
    ),
    "step_cpu_per_seq_v0_s": (
        "70 us per scheduled sequence per step on the V0 engine. vLLM's v0.6.0 performance blog "
        "(blog.vllm.ai/2024/09/05/perf-update.html) profiled Llama-3-8B on one H100 (v0.5.3, ShareGPT at "
        "32 QPS): 29% of the time in scheduling and output processing against 38% on the GPU, i.e. host "
        "time ~0.76 x GPU time; at the ~100 running requests of that load the GPU step is ~9 ms (this "
        "cost model), so ~7 ms of host time per step, ~70 us per sequence. v0.6.0 moved the API server "
        "to its own process (its 33% share is not in this constant)."
    ),
}


DEFAULT_EFFICIENCY = Efficiency()

FAMILY_FILE = "fallback_efficiency"     # models/data/fallback_efficiency.yaml
FAMILY_TERMS = ("gemm_compute", "attention_compute", "memory_bandwidth", "kv_read_bandwidth")


def _families() -> dict:
    try:
        doc = data_files.load(FAMILY_FILE)
    except FileNotFoundError:
        return {}
    return (doc or {}).get("families") or {}


def _family(gpu: GPU) -> dict:
    """The fallback_efficiency.yaml entry of ``gpu``'s architecture family ({} when it has none)."""
    return _families().get(str(gpu.arch or "").lower()) or {}


def family_terms(gpu: GPU) -> dict[str, dict]:
    """The fallback_efficiency.yaml entries that apply to ``gpu``: term -> entry (for ``gemm_compute`` a
    dict dtype -> entry). The family is the catalog's ``arch``; a ``skus`` entry for the GPU's catalog id
    overrides the family's per term (per dtype for GEMMs); a ``keep_defaults`` entry whose
    ``name_contains`` is in the GPU's catalog name drops its terms (the defaults apply) unless the GPU's own
    ``skus`` entry measured them. Empty when the family has no entry."""
    fam = _family(gpu)
    kept = {t for k in fam.get("keep_defaults") or [] if _matches(k, gpu) for t in k.get("terms") or []}
    terms: dict[str, dict] = {}
    for family_level, source in ((True, fam.get("terms") or {}), (False, _sku_terms(gpu))):
        for term, entry in source.items():
            if term not in FAMILY_TERMS or not isinstance(entry, dict) or (family_level and term in kept):
                continue
            if term == "gemm_compute":
                terms.setdefault(term, {}).update(entry)
            else:
                terms[term] = entry
    return terms


def _matches(keep: dict, gpu: GPU) -> bool:
    """Whether a ``keep_defaults`` entry's ``name_contains`` is in ``gpu``'s catalog name."""
    name = str(keep.get("name_contains") or "").lower()
    return bool(name) and name in gpu.name.lower()


def _sku_terms(gpu: GPU) -> dict[str, dict]:
    """The fallback_efficiency.yaml ``skus`` entry of ``gpu``'s catalog id ({} when none)."""
    return (_family(gpu).get("skus") or {}).get(gpu.id) or {}


def kept_defaults(gpu: GPU) -> list[dict]:
    """The family's ``keep_defaults`` entries that match ``gpu`` (terms, reason, source), less the terms the
    GPU's own ``skus`` entry measured (a measurement of the card itself replaces the family's non-transfer rule)."""
    own = _sku_terms(gpu)
    out = []
    for k in _family(gpu).get("keep_defaults") or []:
        if _matches(k, gpu):
            terms = [t for t in k.get("terms") or [] if t not in own]
            if terms:
                out.append(dict(k, terms=terms))
    return out


def efficiency_for(gpu: GPU) -> Efficiency:
    """The efficiency factors for ``gpu``: the defaults above, with the fallback fractions of its
    architecture family replaced by the family's measured values (models/data/fallback_efficiency.yaml)
    where the family has an entry. GPUs without one get ``DEFAULT_EFFICIENCY`` itself."""
    terms = family_terms(gpu)
    if not terms:
        return DEFAULT_EFFICIENCY
    kw: dict = {"family": str(gpu.arch).lower(), "family_set": tuple(sorted(terms))}
    gemm = terms.pop("gemm_compute", {})
    if gemm:
        kw["gemm_compute_by_dtype"] = tuple(sorted((d, float(e["value"])) for d, e in gemm.items()))
        if "bf16" in gemm:
            kw["gemm_compute"] = float(gemm["bf16"]["value"])
    for term, entry in terms.items():
        kw[term] = float(entry["value"])
    return replace(DEFAULT_EFFICIENCY, **kw)


def sources_for(gpu: GPU) -> dict[str, str]:
    """``SOURCES`` with each term the GPU's family replaces described by the family's measurement and URL."""
    out = dict(SOURCES)
    terms = family_terms(gpu)
    fam = str(gpu.arch).lower()

    def text(e: dict) -> str:
        return f"{e['value']}: {e['measured']}; {e['derivation']} ({e['source']})"

    for term, entry in terms.items():
        if term == "gemm_compute":
            body = "; ".join(f"{d} {text(e)}" for d, e in sorted(entry.items()))
        else:
            body = text(entry)
        out[term] = f"{fam} family (models/data/fallback_efficiency.yaml), fallback only: {body}"
    for keep in kept_defaults(gpu):
        for term in keep.get("terms") or []:
            out[term] = (f"{SOURCES[term]} Kept for this {fam} GPU (fallback_efficiency.yaml keep_defaults): "
                         f"{keep.get('reason', '')} ({keep.get('source', '')})")
    return out
