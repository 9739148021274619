"""Derive compact kernel-efficiency tables from NVIDIA aiconfigurator's measured vLLM kernel data.

Source: the PyPI package ``aiconfigurator-core`` (NVIDIA, Apache-2.0), ``systems/data/<gpu>/``
``{moe,gemm,attention}/vllm/<release>/*.parquet``: latency (ms) of vLLM's kernels measured by NVIDIA's
collector (github.com/ai-dynamo/aiconfigurator, collector/vllm/collect_{moe,gemm,attn}.py: CUDA-graph
replays, randomised paged KV block tables). It is read here once, offline; nothing of it is a runtime
dependency. Output: ``sched_reader/models/cost/data/kernel_efficiency.json`` holding, per GPU, the
oldest measured vLLM release's

* ``moe``: per weight format (from the oldest release whose rows time the kernel vLLM runs for it, see
  ``NOT_VLLM_KERNEL``), the fastest one-token call over all measured shapes (s: the latency floor
  of vLLM's fused-MoE kernel chain, used where a GPU or format has no table) and, per measured MoE shape,
  efficiency by tokens per step, where
  efficiency(T) = roofline time at vendor peak / measured latency, the roofline being the one
  ``IterationCostModel`` uses for its ``moe_experts`` term (FLOPs 2 x T x top_k x 3 x hidden x inter over
  the dense peak of the compute dtype; bytes = experts read (min(E, T x k) for the balanced-routing rows
  used) x 3 x hidden x inter x bytes per weight over peak HBM bandwidth); expert-parallel rows whose
  latency does not fall with EP (the collector timed all experts) are left out (``ep_unsplit_rows``); the
  latency of an EP = 1 call with >= one routed token per expert is the slower of balanced routing and
  aiconfigurator's power-law routing (``raise_to_skewed``: uneven experts round up to whole tiles);
* ``gemm``: per dtype (bf16, fp8 per-tensor, fp8 block, nvfp4; the kernel vLLM picks by default), the
  median efficiency over measured shapes of each weight class round(log2(n x k)) at M = 1, 2, 4 ...
  32,768 tokens, against max(2 M n k / peak, (n k x bytes per weight + 2 M (n + k)) / peak B/s) (the
  cost model's linear term). A dtype whose one-token calls on <= 2^20 weights take over 20 us was timed
  with its host dispatch (collect_gemm.py: ``use_cuda_graph=gemm_type != "fp8_block"``) and is left out;
* ``attention.decode``: per KV dtype, launch (s) and per-sequence (s) cost per layer from calls whose
  KV read is < 5% of their latency at peak bandwidth, and the fraction of peak HBM bandwidth from
  reads >= 1 GiB (beyond any L2 cache), with the fit's median relative error;
* ``attention.prefill``: per KV dtype, the median causal-attention efficiency by prompt length L
  (FLOPs 2 x heads x 2 x head_dim x L (L + 1) / 2 per sequence over the 16-bit peak) over head layouts
  and over batches whose step holds 2,048-32,768 prompt tokens.

Peaks are this package's GPU catalog (sched_reader/models/data/gpus.yaml).

Usage (needs pandas + pyarrow, e.g. in a scratch venv; the wheel unpacked anywhere):
  pip download --no-deps aiconfigurator-core -d /tmp/aic && unzip /tmp/aic/*.whl -d /tmp/aic/x
  PYTHONPATH=. python tools/derive_kernel_efficiency.py /tmp/aic/x/aiconfigurator_core/systems/data
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# aiconfigurator system folder -> our GPU catalog name
GPUS = {"h100_sxm": "H100 SXM5 80GB", "h200_sxm": "H200 SXM 141GB", "a100_sxm": "A100 SXM4 80GB", "b200_sxm": "B200",
        "l40s": "L40S"}
# aiconfigurator moe_dtype -> (our weight format key, bytes per weight, compute dtype key in gpus.yaml)
DTYPES = {"bfloat16": ("bf16", 2.0, "bf16"), "fp8": ("fp8", 1.0, "fp8"), "fp8_block": ("fp8_block", 1.0, "fp8"),
          "int4_wo": ("int4", 0.5, "bf16"), "w4a16_mxfp4": ("mxfp4", 0.5, "bf16"), "nvfp4": ("nvfp4", 0.5, "fp4")}
# kernels vLLM picks by default in the releases the project covers (older Triton path preferred when
# the table holds several)
PREFER = ("vllm_fused_moe", "triton", "marlin", "vllm_mxfp4_moe", "flashinfer")
TOKEN_GRID = (1, 4, 16, 64, 256, 1024, 4096, 16384)
# (moe_dtype, kernel_source) rows that timed a kernel vLLM does not run for that format: the vLLM 0.19.0
# collection's "vllm_marlin_int4_moe" rows (H200, B200) come from collector/vllm/collect_moe.py calling
# vllm fused_experts() with int4_w4a16_moe_quant_config, i.e. the Triton W4A16 kernel (at best 0.21 of HBM
# bandwidth on H200), while vLLM serves W4A16 experts (compressed-tensors pack-quantized, GPTQ, AWQ) with
# the Marlin MoE kernel (Kimi-K2.5: "Using Marlin backend for WNA16 MoE (group_size=32, num_bits=4)",
# github.com/vllm-project/vllm/issues/40357), which the 0.24.0 collection times through vLLM's own method
# ("vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts"). For such a format the oldest release whose
# rows time a kernel vLLM runs is used.
NOT_VLLM_KERNEL = {("int4_wo", "vllm_marlin_int4_moe")}
MOE_FLOOR_KEY = "min_one_token_latency_s"


EP_SPLIT_MAX_RATIO = 0.9   # see ep_unsplit_rows
EP_SPLIT_MIN_TOKENS = 256


def ep_unsplit_rows(sub):
    """Index of the expert-parallel rows (moe_ep_size > 1) whose call did not split the experts.

    With EP = e a rank holds E / e of the E experts and, at >= EP_SPLIT_MIN_TOKENS balanced tokens (every
    local expert touched), streams 1/e of the weights and runs 1/e of the routed pairs: the latency falls
    to about 1/e of the EP = 1 call's, plus the kernel chain's fixed floor (<= 0.55 at e = 2). A group of
    rows (same kernel, shape, TP, EP) whose median latency there stays above EP_SPLIT_MAX_RATIO x the
    EP = 1 latency was timed over all E experts (aiconfigurator 0.12.0: the MXFP4 rows of H200 and B200,
    vLLM 0.19.0, ratio 1.00 at every EP size: the FusedMoE module the collector builds ignores ep_size),
    so its efficiency against E / e experts' bytes would be understated e-fold; such rows are dropped."""
    keys = ["kernel_source", "hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size"]
    big = sub[sub["num_tokens"] >= EP_SPLIT_MIN_TOKENS]
    med = big.groupby(keys + ["moe_ep_size"])["latency"].median()
    bad = []
    for idx, lat in med.items():
        *shape, ep = idx
        if ep <= 1:
            continue
        ref = med.get(tuple(shape) + (1,))
        if ref is not None and float(lat) > EP_SPLIT_MAX_RATIO * float(ref):
            mask = (sub["moe_ep_size"] == ep)
            for k, v in zip(keys, shape):
                mask &= sub[k] == v
            bad.extend(sub.index[mask])
    return bad


# aiconfigurator's own default for real traffic: token-to-expert routing drawn from a power law with alpha
# 1.01 (github.com/ai-dynamo/aiconfigurator aic-core/src/aiconfigurator_core/sdk/config.py
# ``workload_distribution = "power_law"``; models/deepseek.py, gemma4.py, hybrid_moe.py ``_power_law_alpha =
# 1.01``); its collector times every MoE shape under it as well as under balanced routing
SKEWED_ROUTING = "power_law_1.01"
ROUTING_NOTE = "balanced routing; power-law routing (alpha 1.01) where slower"
MOE_KEY = ["kernel_source", "moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
           "moe_tp_size", "moe_ep_size"]


def with_routing_skew(d):
    """The balanced-routing rows of one release's MoE table with a column ``skewed``: the same call's latency
    under :data:`SKEWED_ROUTING` (NaN where not measured); :func:`raise_to_skewed` uses it."""
    bal = d[(d["distribution"] == "balanced") | (~d["distribution"].isin(["balanced"]).any())]
    skew = d[d["distribution"] == SKEWED_ROUTING]
    skewed = skew.groupby(MOE_KEY, as_index=False)["latency"].min().rename(columns={"latency": "skewed"})
    return bal.merge(skewed, on=MOE_KEY, how="left")


def raise_to_skewed(sub):
    """``sub`` (rows of :func:`with_routing_skew`) with each EP = 1 row's latency raised to its ``skewed``
    latency where that is slower.

    Why: with skewed routing each expert's row count is uneven, and the grouped GEMMs round every expert's
    rows up to a whole tile (``moe_align_block_size`` pads to BLOCK_SIZE_M, 64 rows at prefill-sized steps in
    vLLM's tuned H200 configs), so beyond about one tile per expert the call runs more tiles than balanced
    routing's exact multiples (H200 block FP8, DeepSeek-V3 shape at TP 8: 1.07 at 1,024 tokens, 1.21 at
    2,048, 1.14 at 4,096, 1.06 at 8,192). Only steps with at least one routed token per expert on average
    (tokens x top_k >= experts) are raised: below that, skew changes which experts are read, not the tiles
    run, and the cost model counts the experts a step reads itself (uniform routing); where the skewed call
    is faster (fewer distinct experts read) the balanced latency is kept for the same reason. Expert-parallel
    rows keep the balanced latency: the busiest rank's excess load is the cost model's own term
    (iteration.ep_popularity_excess). Applied after :func:`ep_unsplit_rows`, which compares balanced calls."""
    sub = sub.copy()
    full = sub["num_tokens"] * sub["topk"] >= sub["num_experts"]   # >= one routed token per expert on average
    up = (sub["moe_ep_size"] <= 1) & full & sub["skewed"].notna() & (sub["skewed"] > sub["latency"])
    sub.loc[up, "latency"] = sub.loc[up, "skewed"]
    return sub


def _release_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def _oldest(folder: Path, table: str) -> Path | None:
    """The oldest measured vLLM release folder holding ``table`` (closest to the releases users run)."""
    rels = sorted((p for p in folder.glob("*") if (p / table).exists()), key=lambda p: _release_key(p.name))
    return rels[0] if rels else None

# ---------------------------------------------------------------- dense GEMMs
# aiconfigurator gemm_dtype -> (our key, bytes per weight, compute dtype key in gpus.yaml, kernels vLLM
# picks by default, most preferred first)
GEMM_DTYPES = {
    "bfloat16": ("bf16", 2.0, "bf16", ("torch.nn.functional.linear", "vllm_default")),
    "fp8": ("fp8", 1.0, "fp8", ("CutlassFP8ScaledMMLinearKernel", "vllm_default")),
    "fp8_block": ("fp8_block", 1.0, "fp8", ("CutlassFp8BlockScaledMMKernel", "TritonFp8BlockScaledMMKernel",
                                             "DeepGemmFp8BlockScaledMMKernel")),
    "nvfp4": ("nvfp4", 0.5625, "fp4", ("FlashInferCutlassNvFp4LinearKernel", "FlashInferCuteDslNvFp4LinearKernel")),
}
GEMM_TOKENS = tuple(2 ** i for i in range(16))          # 1 .. 32768 tokens per step
GEMM_LOG2_WEIGHTS = tuple(range(16, 33))                # 64 Ki .. 4 Gi weights (n x k) per GEMM
ACT_BYTES = 2.0                                         # the cost model's activation bytes (16-bit)
HOST_BOUND_S = 20e-6   # a GPU GEMM of <= 1 Mi weights at one token takes 2-10 us (bf16 tables: 2.5 us)


def gemm_cell(df, gpu, peak_bw):
    """{key: {...}} efficiency of dense GEMMs by log2(n x k) class (rows) and tokens per step (columns)."""
    import numpy as np

    cell = {}
    for dtype, (key, wb, ckey, prefer) in GEMM_DTYPES.items():
        sub = df[(df["gemm_dtype"] == dtype) & df["m"].isin(GEMM_TOKENS) & (df["n"] >= 64) & (df["k"] >= 64)]
        if sub.empty or not gpu.tflops.get(ckey):
            continue
        kernels = [k for k in prefer if k in set(sub["kernel_source"])]
        if not kernels:
            continue
        # a kernel whose smallest calls (one token, <= 2^20 weights) take longer than HOST_BOUND_S was
        # timed with its host dispatch (activation quantization and launch from Python, no CUDA graph):
        # vLLM replays decode steps from CUDA graphs, so such a table would misstate decode; left out
        tiny = sub[(sub["kernel_source"] == kernels[0]) & (sub["m"] == 1) & (sub["n"] * sub["k"] <= 2 ** 20)]
        if len(tiny) and float(tiny["latency"].median()) * 1e-3 > HOST_BOUND_S:
            print(f"{gpu.name}: {dtype} {kernels[0]} left out: smallest calls take "
                  f"{float(tiny['latency'].median()) * 1e3:.0f} us (host-bound timing)")
            continue
        peak = float(gpu.tflops[ckey]) * 1e12
        m, n, k = (sub[c].astype(float) for c in ("m", "n", "k"))
        # the roofline exactly as IterationCostModel computes a linear term, at vendor peak
        roof = np.maximum(2.0 * m * n * k / peak, (n * k * wb + ACT_BYTES * m * (n + k)) / peak_bw)
        sub = sub.assign(eff=roof / (sub["latency"].astype(float) * 1e-3), lnk=np.round(np.log2(n * k)))
        rows = []
        for lnk in GEMM_LOG2_WEIGHTS:
            row = []
            for t in GEMM_TOKENS:
                val = None
                for kern in kernels:   # the preferred kernel where it was measured, else the next
                    s = sub[(sub["kernel_source"] == kern) & (sub["lnk"] == lnk) & (sub["m"] == t)]
                    if len(s):
                        val = float(s["eff"].median())
                        break
                row.append(val)
            rows.append(row)
        # a weight class measured at fewer than half the token counts is left out (the cost model holds
        # the nearest measured class); within a class, an unmeasured token count takes its neighbour's value
        keep = [(lnk, r) for lnk, r in zip(GEMM_LOG2_WEIGHTS, rows) if sum(e is not None for e in r) * 2 >= len(r)]
        for _, row in keep:
            for i in list(range(1, len(row))) + list(range(len(row) - 2, -1, -1)):
                if row[i] is None:
                    row[i] = row[i - 1] if i and row[i - 1] is not None else row[i + 1]
        if not keep:
            continue
        cell[key] = {"kernel": kernels[0], "tokens": list(GEMM_TOKENS), "log2_weights": [lnk for lnk, _ in keep],
                     "efficiency [log2_weights][tokens]": [[round(min(1.0, e), 3) for e in r] for _, r in keep]}
    return cell


# ---------------------------------------------------------------- attention
ATTN_KERNELS = ("vllm_flash_attn_fa3", "vllm_flash_attn", "vllm_flash_attn_fa2", "vllm_flashinfer_trtllmdecode",
                "vllm_flashinfer_trtllmprefill", "vllm_flashinfer_fidecode", "vllm_flashinfer_fiprefill",
                "vllm_flashinfer")
KV_BYTES = {"bfloat16": 2.0, "fp8": 1.0}
PREFILL_LENGTHS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def _pick(df, kv):
    sub = df[(df["kv_cache_dtype"] == kv) & (df["head_dim"] <= 256) & (df["num_heads"] >= df["num_key_value_heads"])]
    if "window_size" in sub:
        sub = sub[sub["window_size"] == 0]
    for kern in ATTN_KERNELS:
        s = sub[sub["kernel_source"] == kern]
        if len(s) > 200:
            return kern, s
    return None, None


def decode_attention_cell(df, gpu, peak_bw):
    """Per KV dtype: latency per layer = launch + per_seq x batch + KV bytes / (peak B/s x fraction),
    least squares in relative error over every measured (batch, KV length, head layout)."""
    import numpy as np

    out = {}
    for kv, kvb in KV_BYTES.items():
        kern, s = _pick(df, kv)
        if s is None:
            continue
        b = s["batch_size"].astype(float).to_numpy()
        L = s["step"].astype(float).to_numpy() + 1.0
        nbytes = b * L * 2.0 * s["num_key_value_heads"].to_numpy() * s["head_dim"].to_numpy() * kvb
        lat = s["latency"].astype(float).to_numpy() * 1e-3
        # launch and per-sequence cost from reads that are small against them (< 5% of the latency
        # at peak bandwidth); the bandwidth fraction from reads far beyond any L2 cache (>= 1 GiB)
        small = nbytes / peak_bw < 0.05 * lat
        big = nbytes >= 2 ** 30
        if small.sum() < 10 or big.sum() < 10:
            continue
        A = np.stack([np.ones(int(small.sum())), b[small]], axis=1)
        (launch, per_seq), *_ = np.linalg.lstsq(A / lat[small, None], np.ones(int(small.sum())), rcond=None)
        frac = float(np.median((nbytes[big] / peak_bw) / (lat[big] - launch - per_seq * b[big])))
        pred = launch + per_seq * b + nbytes / (peak_bw * frac)
        rel = np.abs(pred / lat - 1.0)
        out[kv] = {"kernel": kern, "launch_s": float(f"{launch:.3g}"), "per_seq_s": float(f"{per_seq:.3g}"),
                   "kv_bandwidth_fraction": round(frac, 3),
                   "fit_median_abs_rel_err": round(float(np.median(rel)), 3),
                   "fit_median_abs_rel_err_1GiB_reads": round(float(np.median(rel[big])), 3),
                   "rows": int(len(lat))}
    return out


def prefill_attention_cell(df, gpu, peak_bw):
    """Per KV dtype: efficiency of causal prefill attention (FLOPs 2 x heads x (qk + v) x L(L+1)/2 per
    sequence over the 16-bit peak) by prompt length L; median over head layouts and over batches
    whose step holds 2,048-32,768 prompt tokens (or batch 1 for longer prompts)."""
    import numpy as np

    peak = float(gpu.tflops.get("bf16") or gpu.tflops.get("fp16")) * 1e12
    out = {}
    for kv, kvb in KV_BYTES.items():
        kern, s = _pick(df, kv)
        if s is None:
            continue
        b = s["batch_size"].astype(float)
        L = s["isl"].astype(float)
        hd = s["head_dim"].astype(float)
        flops = 2.0 * s["num_heads"] * 2.0 * hd * b * L * (L + 1) / 2.0
        nbytes = b * L * 2.0 * s["num_key_value_heads"] * hd * kvb
        eff = np.maximum(flops / peak, nbytes / peak_bw) / (s["latency"].astype(float) * 1e-3)
        s = s.assign(eff=eff, tok=b * L)
        curve = []
        for Lq in PREFILL_LENGTHS:
            r = s[(s["isl"] == Lq) & (((s["tok"] >= 2048) & (s["tok"] <= 32768)) | ((Lq > 32768 // 2) & (s["batch_size"] == 1)))]
            if r.empty:
                r = s[(s["isl"] == Lq) & (s["batch_size"] == 1)]
            curve.append(round(float(r["eff"].median()), 3) if len(r) else None)
        for i in range(1, len(curve)):
            if curve[i] is None:
                curve[i] = curve[i - 1]
        if curve[0] is None:
            continue
        out[kv] = {"kernel": kern, "prompt_tokens": list(PREFILL_LENGTHS), "efficiency": curve}
    return out


# vLLM's tensor-parallel all-reduce (tensor_model_parallel_all_reduce: the custom one-/two-shot kernel on
# NVLink, NCCL beyond its buffer or without full NVLink), timed by collector/vllm/collect_comm.py as
# "custom_allreduce_perf" in CUDA-graph replays ("vllm_graph") of bf16 tensors of message_size ELEMENTS
COMM_BACKEND = "vllm_graph"
COMM_ELEM_BYTES = 2.0


def allreduce_cell(base: Path, folder: str) -> dict | None:
    """Per TP size, [message bytes, seconds] of one all-reduce in a CUDA graph: the median over the measured
    vLLM releases of each (TP, size) point (the kernel changed little between them; the median drops a
    release's outliers, e.g. H200 TP8 0.14.0 at 2^17-2^19 elements, 2-3x its neighbours)."""
    import pandas as pd

    rels = sorted((p for p in (base / folder / "comm" / "vllm").glob("*")
                   if (p / "custom_allreduce_perf.parquet").exists()), key=lambda p: _release_key(p.name))
    by: dict[tuple[int, int], list[float]] = {}
    used = []
    for p in rels:
        d = pd.read_parquet(p / "custom_allreduce_perf.parquet")
        d = d[d["backend"] == COMM_BACKEND]
        if d.empty:
            continue
        used.append(p.name)
        for r in d.itertuples():
            by.setdefault((int(r.num_gpus), int(r.message_size)), []).append(float(r.latency) * 1e-3)
    if not by:
        return None
    tp: dict[str, list] = {}
    for (n, size), lat in sorted(by.items()):
        lat = sorted(lat)
        m = len(lat)
        med = lat[m // 2] if m % 2 else 0.5 * (lat[m // 2 - 1] + lat[m // 2])
        tp.setdefault(str(n), []).append([size * COMM_ELEM_BYTES, round(med, 9)])
    return {"kernel": "vLLM tensor_model_parallel_all_reduce (custom all-reduce; NCCL beyond its buffer), "
                      "CUDA graph, bf16", "vllm_releases": used, "tp [bytes, seconds]": tp}


# vLLM's whole MLA attention module at decode (DeepseekV2MLAAttention.forward: fused q_a/kv_a projection,
# q_a/kv_a RMSNorms, q_b projection, W_UK bmm, rotary + KV-cache write, the MLA decode kernel, W_UV bmm,
# o_proj), timed by collector/vllm/collect_mla_module.py in CUDA-graph replays, with num_heads the heads on
# one GPU (DeepSeek-V3 shapes otherwise; its TP all-reduce not included). Per GEMM type and KV dtype, the
# backend vLLM ran for it (bf16 KV: FLASH_ATTN_MLA, fp8 KV: FLASHMLA on Hopper at 0.24.0)
MLA_MODULE_TABLE = "mla_generation_module_perf.parquet"


def mla_module_cell(base: Path, folder: str) -> dict | None:
    """{gemm type: {kv dtype: {kernel, vllm_release, heads: {h: [[batch, seconds], ...]}}}} at the smallest
    measured context (2 tokens: the module's latency floor, the KV read negligible)."""
    import pandas as pd

    m = _oldest(base / folder / "mla" / "vllm", MLA_MODULE_TABLE)
    if m is None:
        return None
    d = pd.read_parquet(m / MLA_MODULE_TABLE)
    d = d[(d["isl"] == 1) & (d["step"] == d["step"].min())]
    out: dict[str, dict] = {}
    for (gemm, kv), sub in d.groupby(["gemm_type", "kv_cache_dtype"]):
        kernels = sorted(sub["kernel_source"].unique())
        sub = sub[sub["kernel_source"] == kernels[0]]
        heads = {}
        for h, hs in sub.groupby("num_heads"):
            heads[str(int(h))] = [[int(r.batch_size), round(float(r.latency) * 1e-3, 9)]
                                  for r in hs.sort_values("batch_size").itertuples()]
        out.setdefault(str(gemm), {})[str(kv)] = {"kernel": kernels[0], "vllm_release": m.name,
                                                  "context_tokens": int(d["step"].min()), "heads": heads}
    return out or None


def main(data_dir: str) -> int:
    import pandas as pd

    from sched_reader.models.gpu_catalog import resolve_gpu

    out: dict[str, dict] = {}
    base = Path(data_dir)
    for folder, gpu_name in GPUS.items():
        moe_dir = _oldest(base / folder / "moe" / "vllm", "moe_perf.parquet")
        if moe_dir is None:
            continue
        rel = moe_dir.name
        rels = sorted((p for p in (base / folder / "moe" / "vllm").glob("*") if (p / "moe_perf.parquet").exists()),
                      key=lambda p: _release_key(p.name))
        frames: dict[str, object] = {}

        def release_df(p):
            if p.name not in frames:
                d = pd.read_parquet(p / "moe_perf.parquet")
                frames[p.name] = with_routing_skew(d)
            return frames[p.name]

        gpu = resolve_gpu(gpu_name).gpu
        bw = gpu.hbm_bandwidth_tb_s * 1e12
        cell: dict[str, dict] = {}
        for dtype, (fmt, wb, ckey) in DTYPES.items():
            if not gpu.tflops.get(ckey):
                continue
            # the oldest release holding rows of this format that time a kernel vLLM runs
            sub, dtype_rel = None, None
            for p in rels:
                d = release_df(p)
                s_ = d[d["moe_dtype"] == dtype]
                s_ = s_[~s_["kernel_source"].map(lambda k: (dtype, k) in NOT_VLLM_KERNEL)]
                if not s_.empty:
                    sub, dtype_rel = s_, p.name
                    break
                if (d["moe_dtype"] == dtype).any():
                    print(f"{gpu.name}: {dtype} rows of vLLM {p.name} left out (not the kernel vLLM runs)")
            if sub is None:
                continue
            kernels = sorted(sub["kernel_source"].unique(), key=lambda k: min(
                [i for i, p in enumerate(PREFER) if p in k] or [len(PREFER)]))
            sub = sub[sub["kernel_source"] == kernels[0]]
            unsplit = ep_unsplit_rows(sub)
            if unsplit:
                eps = sorted({int(e) for e in sub.loc[unsplit, "moe_ep_size"]})
                print(f"{gpu.name}: {dtype} {kernels[0]}: {len(unsplit)} EP rows (EP {eps}) left out: latency not "
                      f"below {EP_SPLIT_MAX_RATIO} x the EP = 1 call's (experts not split)")
                sub = sub.drop(index=unsplit)
            sub = raise_to_skewed(sub)
            peak = float(gpu.tflops[ckey]) * 1e12
            effs: dict[tuple, dict[int, list[float]]] = {}
            one_token = [float(x) * 1e-3 for x in sub[sub["num_tokens"] == 1]["latency"] if float(x) > 0]
            for r in sub.itertuples():
                E = r.num_experts / max(1, r.moe_ep_size)
                k = r.topk
                inter = r.inter_size / max(1, r.moe_tp_size)
                T = int(r.num_tokens)
                routed = T * k * E / r.num_experts
                flops = 2.0 * routed * 3 * r.hidden_size * inter
                # the rows used are "balanced": every expert gets its share of the T x k routed tokens, so
                # min(E, T x k) experts are read (the cost model's uniform-random formula is used when
                # the efficiency is applied)
                distinct = min(E, routed)
                nbytes = distinct * 3 * r.hidden_size * inter * wb
                roof = max(flops / peak, nbytes / bw)
                lat = float(r.latency) * 1e-3
                if lat > 0:
                    shape = (int(r.hidden_size), int(round(inter)), int(round(E)), int(k))
                    effs.setdefault(shape, {}).setdefault(T, []).append(roof / lat)
            curves = []
            for shape, by_t in sorted(effs.items()):
                if not all(t in by_t for t in TOKEN_GRID):
                    continue
                med = [sorted(by_t[t])[len(by_t[t]) // 2] for t in TOKEN_GRID]
                curves.append([*shape, [round(min(1.0, e), 2) for e in med]])
            if curves:
                cell[fmt] = {"kernel": kernels[0], "vllm_release": dtype_rel, "tokens": list(TOKEN_GRID),
                             "routing": ROUTING_NOTE,
                             "shapes [hidden, inter per GPU, experts per GPU, top_k, efficiency by tokens]": curves}
                if one_token:
                    # the fastest one-token call over every measured shape: the latency floor of the
                    # kernel chain (align/sort, quantize, two grouped GEMMs, activation, top-k sum)
                    cell[fmt][MOE_FLOOR_KEY] = round(min(one_token), 7)
        if cell:
            out[gpu.name] = {"aiconfigurator_system": folder, "vllm_release": rel, "moe": cell}
    for folder, gpu_name in GPUS.items():
        gpu = resolve_gpu(gpu_name).gpu
        peak_bw = gpu.hbm_bandwidth_tb_s * 1e12
        entry = out.setdefault(gpu.name, {"aiconfigurator_system": folder})
        g = _oldest(base / folder / "gemm" / "vllm", "gemm_perf.parquet")
        if g is not None:
            cell = gemm_cell(pd.read_parquet(g / "gemm_perf.parquet"), gpu, peak_bw)
            if cell:
                entry["gemm"] = {"vllm_release": g.name, **cell}
        a = _oldest(base / folder / "attention" / "vllm", "generation_attention_perf.parquet")
        if a is not None:
            dec = decode_attention_cell(pd.read_parquet(a / "generation_attention_perf.parquet"), gpu, peak_bw)
            pre = prefill_attention_cell(pd.read_parquet(a / "context_attention_perf.parquet"), gpu, peak_bw)
            if dec or pre:
                entry["attention"] = {"vllm_release": a.name, "decode": dec, "prefill": pre}
    for folder, gpu_name in GPUS.items():
        cell = allreduce_cell(base, folder)
        if cell:
            out.setdefault(resolve_gpu(gpu_name).gpu.name, {"aiconfigurator_system": folder})["allreduce"] = cell
        mla = mla_module_cell(base, folder)
        if mla:
            out.setdefault(resolve_gpu(gpu_name).gpu.name, {"aiconfigurator_system": folder})["mla_decode_module"] = mla
    doc = {
        "about": "Measured efficiency of vLLM kernels relative to the roofline at vendor peak, by GPU: fused "
                 "MoE (by weight format, shape, tokens per step), dense GEMMs (by dtype, log2 weights, tokens "
                 "per step), decode attention (launch + per-sequence + KV-read fit), prefill attention (by "
                 "prompt length), the TP all-reduce latency by message size and the MLA decode module's latency floor (tools/derive_kernel_efficiency.py).",
        "source": "NVIDIA aiconfigurator-core (PyPI), systems/data/<gpu>/{moe,gemm,attention,comm,mla}/vllm/<release>/"
                  "*.parquet; collector: github.com/ai-dynamo/aiconfigurator collector/vllm/",
        "license": "Apache-2.0; data (c) NVIDIA CORPORATION & AFFILIATES, see LICENSE-aiconfigurator-data.txt",
        "gpus": out,
    }
    path = ROOT / "sched_reader" / "models" / "cost" / "data" / "kernel_efficiency.json"
    path.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    for g, c in out.items():
        for key, t in (c.get("gemm") or {}).items():
            if isinstance(t, dict):
                print(f"{g:18} gemm {key:9} {t['kernel']}")
        for key, t in ((c.get("attention") or {}).get("decode") or {}).items():
            print(f"{g:18} decode attention kv {key:8} {t}")
        for key, t in ((c.get("attention") or {}).get("prefill") or {}).items():
            print(f"{g:18} prefill attention kv {key:8} {t['kernel']} {t['efficiency']}")
        for fmt, t in (c.get("moe") or {}).items():
            n = len(next(v for key, v in t.items() if key.startswith("shapes")))
            print(f"{g:18} {fmt:9} {t['kernel'][:50]:50} {n} shapes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/aic/x/aiconfigurator_core/systems/data"))
