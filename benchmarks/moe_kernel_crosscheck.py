"""The fused-MoE tables against public measurements of the same vLLM kernel at prefill-sized steps.

``models/cost/data/kernel_efficiency.json`` holds aiconfigurator's timings of vLLM's fused-MoE call
(tools/derive_kernel_efficiency.py). What that call holds, read in aiconfigurator's collector
(github.com/ai-dynamo/aiconfigurator collector/vllm/collect_moe.py): up to the vLLM 0.19 collections it calls
``fused_experts(hidden_states, w1, w2, topk_weights, topk_ids)`` with the top-k precomputed from
``balanced_logits`` (every expert gets T x top_k / E tokens) inside a CUDA graph; the 0.24.0 collector calls the
``FusedMoE`` module with router logits (top-k included). In vLLM's ``fused_experts_impl`` (0.14.1,
vllm/model_executor/layers/fused_moe/fused_moe.py), per chunk of at most VLLM_FUSED_MOE_CHUNK_SIZE (16,384)
tokens, that call runs: the input quantization (``moe_kernel_quantize_input``: per-token-group FP8 for block
FP8, nothing for BF16), ``moe_align_block_size`` (sort and pad the routed rows per expert), the gate-up grouped
GEMM on gathered rows (T x k x 2i written), the activation (``silu_and_mul`` on T x k rows), the intermediate's
quantization, the down grouped GEMM with the routing weights (T x k x h written) and ``ops.moe_sum``
(T x k x h read, T x h written). So the tables already hold every kernel of the layer but the router GEMM and
(before 0.24) the top-k, which the cost model charges on their own (``moe_router``, ``moe_routing_overhead_s``,
grouped top-k kernels).

Public measurements of the same call: vLLM's ``benchmarks/kernels/benchmark_moe.py`` (``fused_moe`` with random
gating logits, top-k included, CUDA-graph replays of 10 calls) as printed in vLLM pull requests (``PUBLIC``).
For each point this prints the measured time against the cost model's ``moe_experts`` term at the same shape,
GPU and tokens, in the two bookkeepings:

  table    roofline on weights only (the derivation's) / efficiency: the table's own latency at that shape
  model    roofline on weights + routed activation bytes (IterationCostModel's) / the same efficiency

Run:  python benchmarks/moe_kernel_crosscheck.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_reader.models.cost.kernels import efficiency_at, moe_efficiency_curve  # noqa: E402
from sched_reader.models.gpu_catalog import resolve_gpu  # noqa: E402

ACT_BYTES = 2   # BF16 activations (the cost model's ``ab`` for these formats)

# (label, GPU, weight format, hidden, intermediate per GPU, experts per GPU, top_k, config class,
#  {tokens per step: measured us}, source)
PUBLIC = (
    ("Gemma4 MoE bf16 (E=128 N=704 K=2816 k=8)", "H200 SXM 141GB", "bf16", 2816, 704, 128, 8, "default (new)",
     {1024: 536.5, 2048: 742.9, 4096: 1249.5}, "github.com/vllm-project/vllm/pull/44818 (2026-06, H200)"),
    ("Gemma4 MoE bf16 (E=128 N=704 K=2816 k=8)", "H200 SXM 141GB", "bf16", 2816, 704, 128, 8, "tuned",
     {1024: 528.4, 2048: 728.2, 4096: 1189.6}, "github.com/vllm-project/vllm/pull/44818 (2026-06, H200)"),
    ("Qwen3-30B-A3B fp8_w8a8 (E=128 N=768 K=2048 k=8)", "H100 SXM5 80GB", "fp8", 2048, 768, 128, 8,
     "default (old)", {1024: 536.33, 2048: 911.64, 4096: 1647.57},
     "github.com/vllm-project/vllm/pull/24700 (2025-09 main, H100; per-tensor FP8, the table is block FP8)"),
    ("GLM-4.5-Air / Kimi-VL bf16 (E=64 N=1408 K=2048 k=6)", "A100 SXM4 80GB", "bf16", 2048, 1408, 64, 6,
     "default (new)", {256: 769.5, 1024: 1022.5, 4096: 2919.0},
     "github.com/vllm-project/vllm/pull/40542 (2026-04, A100 SXM4)"),
    ("GLM-4.5-Air / Kimi-VL bf16 (E=64 N=1408 K=2048 k=6)", "A100 SXM4 80GB", "bf16", 2048, 1408, 64, 6, "tuned",
     {256: 717.0, 1024: 929.9, 4096: 2636.6}, "github.com/vllm-project/vllm/pull/40542 (2026-04, A100 SXM4)"),
)


def model_times(gpu_name: str, fmt: str, hidden: int, inter: int, experts: int, top_k: int, tokens: int):
    """(table s, model s, efficiency, provenance) of the cost model's moe_experts term for one layer at
    ``tokens`` per step, uniform routing (iteration.py: distinct experts E x (1 - (1 - k/E)^T))."""
    gpu = resolve_gpu(gpu_name).gpu
    curve = moe_efficiency_curve(gpu.name, fmt, hidden, inter, experts, top_k)
    if curve is None:
        return None
    wb = 1.0 if fmt.startswith("fp8") else 2.0
    peak = float(gpu.tflops["fp8" if fmt.startswith("fp8") else "bf16"]) * 1e12
    bw = gpu.hbm_bandwidth_tb_s * 1e12
    eparams = 3.0 * hidden * inter
    routed = tokens * top_k
    distinct = experts * (1.0 - (1.0 - top_k / experts) ** tokens)
    flops = 2.0 * routed * eparams
    wbytes = distinct * eparams * wb
    abytes = ACT_BYTES * routed * (2 * hidden + 3 * inter)   # gate_up (k=h, n=2i) + down (k=i, n=h)
    eff = efficiency_at(curve, tokens)
    return (max(flops / peak, wbytes / bw) / eff, max(flops / peak, (wbytes + abytes) / bw) / eff, eff, curve[2])


def rows() -> list[dict]:
    out = []
    for label, gpu, fmt, h, i, e, k, cls, meas, src in PUBLIC:
        for t, us in sorted(meas.items()):
            m = model_times(gpu, fmt, h, i, e, k, t)
            if m is None:
                continue
            out.append({"shape": label, "gpu": gpu, "config": cls, "tokens": t, "measured_us": us,
                        "table_us": m[0] * 1e6, "model_us": m[1] * 1e6, "efficiency": m[2], "table": m[3],
                        "source": src})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rs = rows()
    if args.json:
        print(json.dumps(rs, indent=1))
        return 0
    for r in rs:
        print(f"{r['shape'][:46]:46s} {r['gpu'][:14]:14s} {r['config']:13s} T={r['tokens']:5d}  measured "
              f"{r['measured_us']:7.1f} us  table {r['table_us']:7.1f} ({r['measured_us'] / r['table_us']:4.2f}x)  "
              f"model {r['model_us']:7.1f} ({r['measured_us'] / r['model_us']:4.2f}x)  eff {r['efficiency']:.2f}")
    big = [r for r in rs if r["tokens"] >= 1024]
    for key in sorted({(r["shape"], r["gpu"], r["config"]) for r in big}):
        sel = [r for r in big if (r["shape"], r["gpu"], r["config"]) == key]
        print(f"at >= 1,024 tokens, {key[0][:30]} {key[1][:14]} {key[2]}: measured / table "
              f"{min(r['measured_us'] / r['table_us'] for r in sel):.2f}-{max(r['measured_us'] / r['table_us'] for r in sel):.2f}x, "
              f"measured / model {min(r['measured_us'] / r['model_us'] for r in sel):.2f}-"
              f"{max(r['measured_us'] / r['model_us'] for r in sel):.2f}x   (table: {sel[0]['table'][:70]})")
    print("sources: " + "; ".join(sorted({r['source'] for r in rs})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
