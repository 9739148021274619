"""Derive compact MoE kernel-efficiency tables from NVIDIA aiconfigurator's measured kernel data.

Source: the PyPI package ``aiconfigurator-core`` (NVIDIA, Apache-2.0), ``systems/data/<gpu>/moe/vllm/
<release>/moe_perf.parquet``: latency (ms) of vLLM's fused-MoE kernels measured by NVIDIA per GPU,
weight format, token count and MoE shape. It is read here once, offline; nothing of it is a runtime
dependency. Output: ``sched_reader/models/cost/data/kernel_efficiency.json`` (a few KB) holding, per
GPU and weight format, the median over the measured shapes of

    efficiency(T) = roofline time at vendor peak / measured latency

where the roofline is the one ``IterationCostModel`` uses for its ``moe_experts`` term (FLOPs
2 x T x top_k x 3 x hidden x inter over the dense peak of the compute dtype; bytes = expected
experts read (min(E, T x k) for the balanced-routing rows used) x 3 x hidden x inter x bytes per
weight over peak HBM bandwidth). Peaks are this package's GPU catalog (sched_reader/models/data/gpus.yaml).

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


def _release_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def main(data_dir: str) -> int:
    import pandas as pd

    from sched_reader.models.gpu_catalog import resolve_gpu

    out: dict[str, dict] = {}
    base = Path(data_dir)
    for folder, gpu_name in GPUS.items():
        releases = sorted((p.name for p in (base / folder / "moe" / "vllm").glob("*")), key=_release_key)
        if not releases:
            continue
        rel = releases[0]  # the oldest measured release: closest to the releases users run today
        df = pd.read_parquet(base / folder / "moe" / "vllm" / rel / "moe_perf.parquet")
        df = df[(df["distribution"] == "balanced") | (~df["distribution"].isin(["balanced"]).any())]
        gpu = resolve_gpu(gpu_name).gpu
        bw = gpu.hbm_bandwidth_tb_s * 1e12
        cell: dict[str, dict] = {}
        for dtype, (fmt, wb, ckey) in DTYPES.items():
            sub = df[df["moe_dtype"] == dtype]
            if sub.empty or not gpu.tflops.get(ckey):
                continue
            kernels = sorted(sub["kernel_source"].unique(), key=lambda k: min(
                [i for i, p in enumerate(PREFER) if p in k] or [len(PREFER)]))
            sub = sub[sub["kernel_source"] == kernels[0]]
            peak = float(gpu.tflops[ckey]) * 1e12
            effs: dict[tuple, dict[int, list[float]]] = {}
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
                cell[fmt] = {"kernel": kernels[0], "tokens": list(TOKEN_GRID),
                             "shapes [hidden, inter per GPU, experts per GPU, top_k, efficiency by tokens]": curves}
        if cell:
            out[gpu.name] = {"aiconfigurator_system": folder, "vllm_release": rel, "moe": cell}
    doc = {
        "about": "Median measured efficiency of vLLM fused-MoE kernels relative to the roofline at vendor "
                 "peak, by GPU, weight format and tokens per step (tools/derive_kernel_efficiency.py).",
        "source": "NVIDIA aiconfigurator-core (PyPI), systems/data/<gpu>/moe/vllm/<release>/moe_perf.parquet",
        "license": "Apache-2.0; data (c) NVIDIA CORPORATION & AFFILIATES, see LICENSE-aiconfigurator-data.txt",
        "gpus": out,
    }
    path = ROOT / "sched_reader" / "models" / "cost" / "data" / "kernel_efficiency.json"
    path.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    for g, c in out.items():
        for fmt, t in c["moe"].items():
            n = len(next(v for key, v in t.items() if key.startswith("shapes")))
            print(f"{g:18} {fmt:9} {t['kernel'][:50]:50} {n} shapes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/aic/x/aiconfigurator_core/systems/data"))
