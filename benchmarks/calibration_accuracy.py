"""Calibrate on published workloads of a deployment, predict its other published workloads.

Deployments: every ``tests/data/bench/*-sharegpt.yaml`` (one deployment each: its serve command, GPU,
release, and several ``vllm bench serve`` runs with their summary numbers verbatim; see each file's header
and SOURCES). For each deployment:

* one-to-others: fit the profile on one run alone, predict every other run (all ordered pairs);
* leave-one-out (``--loo``): fit on all runs but one, predict the one left out.

Prints the relative error of output throughput, mean TPOT and median TPOT per pair, the medians of
|error| per deployment and over all pairs, next to the uncalibrated model's.
Run: python benchmarks/calibration_accuracy.py [--loo] [--quiet]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_reader.analyzers.calibrate import fit, predict, requests_for  # noqa: E402
from sched_reader.analyzers.pipeline import build_specs  # noqa: E402
from sched_reader.readers.bench_result import BenchResult  # noqa: E402

DATA_DIR = ROOT / "tests" / "data" / "bench"
DATA = DATA_DIR / "lambda-h100-llama31-8b-fp8-sharegpt.yaml"
METRICS = ("output_throughput", "mean_tpot_ms", "median_tpot_ms")


def load(path: Path = DATA):
    """(spec, [BenchResult]) of one deployment file; each run replays the first N requests of the
    file's per-request lists (``input_lens_<N>`` / ``output_lens_<N>``: every run of these sources sends
    the first N prompts of the same ShareGPT sample)."""
    d = yaml.safe_load(path.read_text())
    dep = d["deployment"]
    [spec] = build_specs([], dep["command"].split(), gpu=dep["gpu"], vllm=dep["vllm_version"])
    ins = next(v for k, v in d.items() if k.startswith("input_lens_"))
    outs = next(v for k, v in d.items() if k.startswith("output_lens_"))
    model = dep.get("model_id") or dep["command"].split()[2]
    benches = []
    for r in d["runs"]:
        n = r["num_prompts"]
        benches.append(BenchResult(
            file=f"prompt_{n}", model_id=model, num_prompts=n, completed=r["completed"],
            duration_s=r["duration"], total_input_tokens=r["total_input_tokens"],
            total_output_tokens=r["total_output_tokens"], output_throughput=r["output_throughput"],
            mean_ttft_ms=r["mean_ttft_ms"], mean_tpot_ms=r["mean_tpot_ms"], median_tpot_ms=r["median_tpot_ms"],
            input_lens=ins[:n], output_lens=outs[:n]))
    return spec, benches


def _errs(p: dict, b: BenchResult) -> dict[str, float]:
    return {k: p[k] / getattr(b, k) - 1 for k in METRICS if p.get(k) and getattr(b, k)}


def _med(rows: list[dict[str, float]], k: str) -> str:
    xs = [abs(r[k]) for r in rows if k in r]
    return f"{statistics.median(xs):5.1%}" if xs else "  n/a"


def _summary(label: str, rows: list[dict[str, float]]) -> str:
    return (f"{label}: median |error| output throughput {_med(rows, 'output_throughput')}, mean TPOT "
            f"{_med(rows, 'mean_tpot_ms')}, median TPOT {_med(rows, 'median_tpot_ms')} ({len(rows)} predictions)")


def evaluate(path: Path, loo: bool, quiet: bool) -> dict[str, list]:
    spec, benches = load(path)
    print(f"\n== {path.name}: {spec.model_name} on {spec.hardware.gpu.name}, vLLM {spec.vllm_version}, "
          f"{len(benches)} workloads")
    reqs = [requests_for(b) for b in benches]
    base = [_errs(predict(spec, b, None, r), b) for b, r in zip(benches, reqs)]
    print("  " + _summary("uncalibrated", base))
    one: list[dict[str, float]] = []
    for i, cal in enumerate(benches):
        prof = fit(spec, [cal])
        t = prof.terms
        if not quiet:
            print(f"  calibrated on {cal.file}: decode x{t['decode_time_scale'].value:.3f}, "
                  f"prefill x{t['prefill_time_scale'].value:.3f}")
        for j, b in enumerate(benches):
            if i == j:
                continue
            e = _errs(predict(spec, b, prof, reqs[j]), b)
            one.append(e)
            if not quiet:
                print(f"     {b.file:12} " + "  ".join(f"{k} {v:+.1%}" for k, v in e.items()))
    print("  " + _summary("calibrated on one, predicting each other", one))
    out = {"base": base, "one": one, "loo": []}
    if loo and len(benches) >= 3:
        for j, b in enumerate(benches):
            cal = [x for i, x in enumerate(benches) if i != j]
            prof = fit(spec, cal)
            e = _errs(predict(spec, b, prof, reqs[j]), b)
            out["loo"].append(e)
            if not quiet:
                t = prof.terms
                print(f"  leave out {b.file:12} " + ", ".join(
                    f"{k} {v.value:g}{v.unit}" for k, v in t.items() if v.fitted) + "  -> " +
                      "  ".join(f"{k} {v:+.1%}" for k, v in e.items()))
        print("  " + _summary("leave one workload out", out["loo"]))
    return out


def main() -> int:
    t0 = time.perf_counter()
    loo, quiet = "--loo" in sys.argv, "--quiet" in sys.argv
    files = sorted(DATA_DIR.glob("*-sharegpt.yaml"))
    res = [evaluate(f, loo, quiet) for f in files]
    print("\n== all deployments")
    for key, label in (("base", "uncalibrated"), ("one", "calibrated on one, predicting each other"),
                       ("loo", "leave one workload out")):
        rows = [e for r in res for e in r[key]]
        if rows:
            print("  " + _summary(label, rows))
    print(f"time {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
