"""Calibrate on one published workload of a deployment, predict its other published workloads.

Deployment (tests/data/bench/lambda-h100-llama31-8b-fp8-sharegpt.yaml): LambdaLabs' vllm-benchmark,
neuralmagic/Meta-Llama-3.1-8B-FP8 on one H100 SXM, ShareGPT at 10/80/320/640/1280 prompts sent at once.
For each run as the calibration point: fit the profile on it alone, then predict every other run; prints
the relative error of output throughput and mean TPOT per pair, and the medians, next to the
uncalibrated model's. Run: python benchmarks/calibration_accuracy.py
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

DATA = ROOT / "tests" / "data" / "bench" / "lambda-h100-llama31-8b-fp8-sharegpt.yaml"


def load(path: Path = DATA):
    d = yaml.safe_load(path.read_text())
    dep = d["deployment"]
    [spec] = build_specs([], dep["command"].split(), gpu=dep["gpu"], vllm=dep["vllm_version"])
    ins, outs = d["input_lens_1280"], d["output_lens_1280"]
    benches = []
    for r in d["runs"]:
        n = r["num_prompts"]
        benches.append(BenchResult(
            file=f"prompt_{n}", model_id="neuralmagic/Meta-Llama-3.1-8B-FP8", num_prompts=n, completed=r["completed"],
            duration_s=r["duration"], total_input_tokens=r["total_input_tokens"],
            total_output_tokens=r["total_output_tokens"], output_throughput=r["output_throughput"],
            mean_ttft_ms=r["mean_ttft_ms"], mean_tpot_ms=r["mean_tpot_ms"], median_tpot_ms=r["median_tpot_ms"],
            input_lens=ins[:n], output_lens=outs[:n]))
    return spec, benches


def main() -> int:
    t0 = time.perf_counter()
    spec, benches = load()
    print(f"deployment: {spec.model_name} on {spec.hardware.gpu.name}, vLLM {spec.vllm_version}")
    reqs = [requests_for(b) for b in benches]
    base = [predict(spec, b, None, r) for b, r in zip(benches, reqs)]
    thr0 = [abs(p["output_throughput"] / b.output_throughput - 1) for b, p in zip(benches, base)]
    tpot0 = [abs(p["mean_tpot_ms"] / b.mean_tpot_ms - 1) for b, p in zip(benches, base)]
    print(f"uncalibrated: median |error| output throughput {statistics.median(thr0):.1%}, "
          f"mean TPOT {statistics.median(tpot0):.1%}")
    thr, tpot = [], []
    for i, cal in enumerate(benches):
        prof = fit(spec, [cal])
        t = prof.terms
        print(f"calibrated on {cal.file}: decode x{t['decode_time_scale'].value:.3f}, "
              f"prefill x{t['prefill_time_scale'].value:.3f}")
        for j, b in enumerate(benches):
            if i == j:
                continue
            p = predict(spec, b, prof, reqs[j])
            e1 = p["output_throughput"] / b.output_throughput - 1
            e2 = p["mean_tpot_ms"] / b.mean_tpot_ms - 1
            thr.append(abs(e1))
            tpot.append(abs(e2))
            print(f"   {b.file:12} output {p['output_throughput']:8.0f} vs {b.output_throughput:8.0f} tok/s ({e1:+.1%})"
                  f"   TPOT {p['mean_tpot_ms']:7.2f} vs {b.mean_tpot_ms:7.2f} ms ({e2:+.1%})")
    print(f"calibrated on one run, predicting the others ({len(thr)} pairs): median |error| output throughput "
          f"{statistics.median(thr):.1%}, mean TPOT {statistics.median(tpot):.1%}")
    if "--pair" in sys.argv:
        # two runs at different concurrency also fit the per-step and per-sequence host terms
        cal = [benches[1], benches[3]]
        prof = fit(spec, cal)
        t = prof.terms
        print(f"calibrated on {cal[0].file} + {cal[1].file}: " + ", ".join(
            f"{k} {v.value:g}{v.unit}" for k, v in t.items()))
        thr2, tpot2 = [], []
        for j, b in enumerate(benches):
            if b in cal:
                continue
            p = predict(spec, b, prof, reqs[j])
            e1 = p["output_throughput"] / b.output_throughput - 1
            e2 = p["mean_tpot_ms"] / b.mean_tpot_ms - 1
            thr2.append(abs(e1))
            tpot2.append(abs(e2))
            print(f"   {b.file:12} output {e1:+.1%}   TPOT {e2:+.1%}")
        print(f"calibrated on two runs, predicting the other three: median |error| output throughput "
              f"{statistics.median(thr2):.1%}, mean TPOT {statistics.median(tpot2):.1%}")
    print(f"time {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
