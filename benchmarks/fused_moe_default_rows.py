#!/usr/bin/env python3
"""Which corpus rows run vLLM's Triton fused-MoE kernel on the DEFAULT tile config (no tuned file shipped).

For every MoE row of tests/data/throughput*.yaml: the config file name vLLM looks up (E = local experts,
N = per-partition intermediate size, dtype selector, block_shape, device-name token), whether the row's release
ships it (sched_reader/models/data/fused_moe_tuned_configs.json), which default heuristic that release has,
and the MoE kernel path the checkpoint takes (triton | marlin/mxfp4/other: the tables do not apply).
A listing for whoever prices the default config; it changes no prediction.

    benchmarks/fused_moe_default_rows.py [--all]     # default: only rows on the Triton path
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import throughput_accuracy as ta  # noqa: E402

from sched_reader.models import fused_moe_configs as fm  # noqa: E402
from sched_reader.models.cost.shapes import model_shapes  # noqa: E402


def moe_path(spec) -> tuple[str, str | None, list[int] | None]:
    """(path, dtype selector, block_shape) for the routed experts of the row's checkpoint, default environment.

    bf16/fp16 -> Triton (dtype None); quant_method fp8 -> Triton fp8_w8a8 (block_shape from weight_block_size;
    Hopper block FP8 may use DeepGEMM for M >= 128 when deep_gemm is installed); mxfp4 (gpt-oss) -> not Triton
    tables; gptq/awq -> Marlin MoE; compressed-tensors and others -> 'other' (not traced).
    """
    q = spec.arch.quantization_config or {}
    method = str(q.get("quant_method") or spec.checkpoint_quantization_method or spec.effective.quantization or "")
    method = method.lower()
    if method in ("", "none", "bf16", "fp16"):
        return "triton", None, None
    if method == "fp8":
        bs = q.get("weight_block_size")
        return "triton", "fp8_w8a8", list(bs) if bs else None
    if method == "mxfp4":
        return "mxfp4", None, None
    if method in ("gptq", "awq", "gptq_marlin", "awq_marlin"):
        return "marlin", None, None
    return f"other:{method}", None, None


def row_facts(row: dict) -> dict | None:
    spec = ta.build_spec(row)
    if not ta.is_moe(spec.arch):
        return None
    e = spec.effective
    tp, dp = e.tensor_parallel_size or 1, e.data_parallel_size or 1
    shapes = model_shapes(spec.arch, tp=tp, dp=dp, expert_parallel=bool(e.enable_expert_parallel))
    moe = next((g.moe for g in shapes.groups if g.moe is not None), None)
    if moe is None:
        return None
    n = moe.expert_linears[-1].k        # w2 input = per-partition intermediate size (vLLM N)
    release = str(spec.vllm_version)
    path, dtype, block = moe_path(spec)
    dev = fm.vllm_device_name(spec.hardware.gpu.name, release)
    name = fm.config_file_name(moe.local_experts, n, dev or "?", dtype, block, release=release) if dev else None
    shipped = fm.ships(release, name) if name else None
    return {"id": row["id"], "source": ta.source_of(row), "release": release, "gpu": spec.hardware.gpu.name,
            "model": row["model"], "path": path, "file": name, "shipped": shipped,
            "default": fm.default_config_kind(release), "top_k": moe.top_k}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="also list rows whose MoE path does not read the tables")
    args = ap.parse_args(argv)
    facts = [f for f in (row_facts(r) for r in ta.load_rows()) if f]
    count = Counter()
    for f in facts:
        on_default = f["path"] == "triton" and f["shipped"] is False
        count[(f["path"], "n/a" if f["path"] != "triton" else
               ("default" if on_default else ("tuned" if f["shipped"] else "?")))] += 1
        if f["path"] == "triton" or args.all:
            table = "n/a" if f["path"] != "triton" else (
                "TUNED" if f["shipped"] else ("DEFAULT/" + f["default"] if f["shipped"] is False else "?"))
            print(f"{f['id']:<70} {f['release']:>7} {f['gpu']:<16} {f['path']:<8} {table:<28} {f['file']}")
    print("\nMoE rows by path / table:", dict(count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
