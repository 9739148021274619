"""Accuracy of the closed-loop model against NVIDIA's measured vLLM runs (aiconfigurator "silicon" data).

Rows: tests/data/silicon/aiconfigurator_vllm_agg.csv (tools/derive_silicon_refs.py: the vLLM rows of
aggregated serving in aiconfigurator-core 0.12.0's ``silicon_sample.csv``, Apache-2.0, NVIDIA). Each row is
one serving run: a vLLM release, a model, a GPU system, a tensor-parallel size (expert parallelism when
``moe_ep_size`` > 1), fixed input / output lengths and a client concurrency, with the measured mean TTFT
and mean TPOT (ms). The runs are closed loops at that concurrency, so each is predicted the way
``diagnose`` predicts ``--max-concurrency C`` with fixed random lengths: the spec from ``vllm serve
MODEL --tensor-parallel-size N`` through sched-reader's own pipeline (the release's defaults for the
GPU, the model catalog) and the steady-state closed form. No constant is fitted to these rows.

One publisher (NVIDIA's collection), so it is a single source in any leave-one-source-out sense; it is
kept out of benchmarks/throughput_accuracy.py's corpus, whose medians it would swamp (982 rows), and
reported here by model, GPU and concurrency instead. NVFP4 runs of MiniMax-M2.5 and Kimi-K2.5 name no
repository: NVIDIA's ModelOpt name (``nvidia/<model>-NVFP4``) stands in (the weight format is what the cost
model reads). Nightly builds and data-parallel-attention layouts are skipped and counted.

Run:  python benchmarks/silicon_accuracy.py [--json] [--rows]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from sched_reader.errors import SchedReaderError  # noqa: E402
import throughput_accuracy as TA  # noqa: E402  (its simulator hook: requests, scheduler params, API server, cost)

DATA = ROOT / "tests" / "data" / "silicon" / "aiconfigurator_vllm_agg.csv"
# aiconfigurator system folder -> a GPU name this package's catalog resolves
SYSTEMS = {"h100_sxm": "H100 SXM5 80GB", "h200_sxm": "H200 SXM 141GB", "b200_sxm": "B200 180GB",
           "b300_sxm": "B300 288GB"}
CONCURRENCY_BUCKETS = ((1, 4), (5, 16), (17, 64), (65, 256), (257, 4096))
# requests per run = WAVES x concurrency: the table does not state the client's prompt count; a few groups
# of the closed loop are enough for its steady pattern (the first group starts together, as in the client)
WAVES = 4


def load_rows(path: Path = DATA) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def row_argv(row: dict) -> list[str] | None:
    """The `vllm serve` command line of a row, or None when the checkpoint is not named by the table."""
    model = served = row["model_path"]
    precision = row.get("precision") or ""
    if precision == "fp4" and "gpt-oss" not in model:
        # an NVFP4 re-quantization (gemm/moe_quant_mode nvfp4) whose repository the table does not name:
        # NVIDIA's ModelOpt checkpoint name is assumed; any NVFP4 checkpoint of the model has this weight format
        if row.get("moe_quant_mode") != "nvfp4" and row.get("gemm_quant_mode") != "nvfp4":
            return None
        served = f"nvidia/{model.split('/')[-1]}-NVFP4"
    argv = ["vllm", "serve", served]
    tp = int(row.get("tp_size") or 1)
    if tp > 1:
        argv += ["--tensor-parallel-size", str(tp)]
    if int(row.get("moe_ep_size") or 1) > 1:
        argv += ["--enable-expert-parallel"]
    if precision == "fp8" and model == "Qwen/Qwen3-32B":
        argv += ["--quantization", "fp8"]  # the BF16 repository quantized online (no FP8 repo named)
    return argv


def evaluate_row(row: dict, closed_form: bool = False) -> dict[str, Any]:
    from sched_reader.analyzers.pipeline import build_specs
    from sched_reader.models.cost.error_bands import model_kind
    from sched_reader.models.cost.performance import estimate_performance
    from sched_reader.models.workload import Workload

    out: dict[str, Any] = {"id": row["id"], "model": row["model_path"], "system": row["system"],
                           "vllm": row["backend_version"], "concurrency": int(row["batch_size"]),
                           "tp": int(row.get("tp_size") or 1), "isl": int(row["isl"]), "osl": int(row["osl"])}
    argv = row_argv(row)
    if argv is None:
        out["status"] = "skipped: checkpoint not named"
        return out
    if not row["backend_version"][:1].isdigit():
        out["status"] = "skipped: nightly build"
        return out
    try:
        [spec] = build_specs([], argv, gpu=SYSTEMS[row["system"]], vllm=row["backend_version"])
    except (SchedReaderError, KeyError) as exc:
        out["status"] = f"skipped: {exc}"
        return out
    moe_world = int(row.get("moe_tp_size") or 1) * max(1, int(row.get("moe_ep_size") or 1))
    if model_kind(spec.arch) == "moe" and moe_world not in (1, out["tp"]):
        # the MoE layers over more GPUs than attention: data-parallel attention, not the layout replayed here
        out["status"] = "skipped: attention data parallel (MoE TP x EP != TP)"
        return out
    c = int(row["batch_size"])
    wl = Workload(dataset_name="random", random_input_len=int(row["isl"]), random_output_len=int(row["osl"]),
                  num_prompts=WAVES * c, request_rate="inf", max_concurrency=c)
    try:
        if closed_form:
            perf = estimate_performance(spec.arch, spec.hardware.gpu, spec.effective, wl,
                                        spec.checkpoint_quantization)
        else:  # the closed loop replayed step by step, as diagnose does for runs of this size
            perf = TA.simulate_hook(spec.arch, spec.hardware.gpu, spec.effective, wl, spec.checkpoint_quantization,
                                    None, "completions")
    except SchedReaderError as exc:
        out["status"] = f"skipped: {exc}"
        return out
    out["status"] = "ok"
    for metric, pub_key, pred_key in (("tpot", "silicon_tpot_ms", "mean_tpot_ms"),
                                      ("ttft", "silicon_ttft_ms", "mean_ttft_ms")):
        pub, pred = float(row[pub_key]), perf.get(pred_key)
        out[metric] = {"published": pub, "predicted": pred,
                       "error_pct": 100.0 * (pred - pub) / pub if pred is not None and pub > 0 else None}
    return out


def _med(rows: list[dict], metric: str, signed: bool = False) -> float | None:
    errs = [r[metric]["error_pct"] for r in rows if r.get(metric, {}).get("error_pct") is not None]
    if not errs:
        return None
    return round(statistics.median(errs if signed else [abs(e) for e in errs]), 1)


def bucket(c: int) -> str:
    for lo, hi in CONCURRENCY_BUCKETS:
        if lo <= c <= hi:
            return f"{lo}-{hi}"
    return "other"


def summarize(rows: list[dict]) -> dict[str, Any]:
    ok = [r for r in rows if r["status"] == "ok"]
    groups: dict[str, dict[str, list[dict]]] = {"model": {}, "system": {}, "concurrency": {}}
    for r in ok:
        groups["model"].setdefault(r["model"], []).append(r)
        groups["system"].setdefault(r["system"], []).append(r)
        groups["concurrency"].setdefault(bucket(r["concurrency"]), []).append(r)
    table = {name: {k: {"rows": len(g), "tpot": _med(g, "tpot"), "tpot_signed": _med(g, "tpot", True),
                        "ttft": _med(g, "ttft"), "ttft_signed": _med(g, "ttft", True)}
                    for k, g in sorted(by.items())} for name, by in groups.items()}
    skipped: dict[str, int] = {}
    for r in rows:
        if r["status"] != "ok":
            skipped[r["status"]] = skipped.get(r["status"], 0) + 1
    return {"rows": len(rows), "ok": len(ok), "skipped": skipped,
            "all": {"tpot": _med(ok, "tpot"), "tpot_signed": _med(ok, "tpot", True),
                    "ttft": _med(ok, "ttft"), "ttft_signed": _med(ok, "ttft", True)},
            "by": table}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the rows and the summary as JSON")
    ap.add_argument("--rows", action="store_true", help="print every row's errors")
    ap.add_argument("--closed-form", action="store_true",
                    help="the steady-state formula instead of replaying each closed loop (fast, staggered arrivals)")
    args = ap.parse_args(argv)
    rows = [evaluate_row(r, args.closed_form) for r in load_rows()]
    summary = summarize(rows)
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=1, sort_keys=True))
        return 0
    if args.rows:
        for r in rows:
            if r["status"] == "ok":
                print(f"{r['id'][:70]:70s} c={r['concurrency']:4d} tp={r['tp']}  TPOT {r['tpot']['predicted']:8.2f} "
                      f"vs {r['tpot']['published']:8.2f} ms ({r['tpot']['error_pct']:+6.1f}%)  TTFT "
                      f"{r['ttft']['predicted']:9.1f} vs {r['ttft']['published']:9.1f} ms ({r['ttft']['error_pct']:+6.1f}%)")
    s = summary
    print(f"aiconfigurator silicon (vLLM, aggregated): {s['ok']} of {s['rows']} rows evaluated; skipped {s['skipped']}")
    print(f"median |error| all: TPOT {s['all']['tpot']}% (signed {s['all']['tpot_signed']:+}%), "
          f"TTFT {s['all']['ttft']}% (signed {s['all']['ttft_signed']:+}%)")
    for name, by in s["by"].items():
        print(f"by {name}: rows, median |error| % TPOT (signed) / TTFT (signed)")
        for k, c in by.items():
            print(f"  {k:34s} {c['rows']:4d}  {c['tpot']:6.1f} ({c['tpot_signed']:+6.1f})  {c['ttft']:6.1f} "
                  f"({c['ttft_signed']:+6.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
